# How make reads PYTHON, in one place: sourced by scripts/check_python_runs.sh (the check) and scripts/run_python.sh
# (every later run: check_python.py, -m venv).
#
# PYTHON is one program where a program has that whole name, spaces and all ("/opt/my python/bin/python3.11": split
# at its spaces, it was not found). Else, where it has spaces and its first word is a program, it is that program
# and its arguments ("pyenv exec python": read whole, it was refused as not there). It is split at spaces alone:
# a quote, $, ` or * in it is part of a word, never read by a shell. A leading ~/ is HOME's, as a shell reads it:
# zsh, a Makefile or the environment hand `PYTHON=~/.pyenv/shims/python` over as typed, which worked while the
# recipes ran PYTHON unquoted, and then was "there is no ~/.pyenv/shims/python".
#
# make hands PYTHON over twice: as written, and as make expands it. As written it is read first (a folder named with a
# $ or a $(...) is found), else make's expansion: `make 'PYTHON=$(HOME)/py311/bin/python3'`, or one set so in a
# Makefile or CI's environment, was make's expansion while the recipes ran PYTHON unquoted, and then was "there is no
# $(HOME)/py311/bin/python3".

# python_command PYTHON EXPANDED: sets python_read to the one of the two that is read (PYTHON, else EXPANDED where
# it differs and PYTHON is neither a program nor a command), python_form to "program", "command" or "" (neither), and
# python_first to its first word.
python_command() {
  python_read=$1
  read_python "$1"
  if [ -z "$python_form" ] && [ "$2" != "$1" ]; then
    python_read=$2
    read_python "$2"
  fi
}

# read_python PYTHON: sets python_form and python_first for PYTHON alone.
read_python() {
  python_form= python_first=
  under_home "$1"
  if is_program "$at_home"; then
    python_form=program
  fi
  case $1 in
    *' '*) python_first=$(first_word "$1")
           under_home "$python_first"
           [ -n "$python_form" ] || ! is_program "$at_home" || python_form=command ;;
  esac
}

# under_home PATH: sets at_home to PATH with a leading ~/ read as HOME's, as a shell reads an unquoted one. (Not
# printed for a $(...): that drops the line breaks a path ends with.)
under_home() {
  case $1 in
    '~/'*) at_home=$HOME/${1#??} ;;
    *) at_home=$1 ;;
  esac
}

# (a file that runs, as the shell finds it: `command -v` also names a builtin, and PYTHON=echo ran echo -c '')
is_program() {
  found=$(command -v "$1" 2>/dev/null) || return 1
  case $found in */*) return 0 ;; esac
  return 1
}

first_word() {
  set -f
  IFS=' '
  set -- $1
  unset IFS
  set +f
  printf '%s\n' "$1"
}

# run_python PYTHON EXPANDED ARGS...: runs PYTHON (or EXPANDED, as python_command reads them) with ARGS in place of
# this shell.
run_python() {
  python_command "$1" "$2"
  python=$python_read
  shift 2
  if [ "$python_form" = command ]; then
    set -f
    IFS=' '
    set -- $python "$@"
    unset IFS
    set +f
    under_home "$1"
    shift
    exec "$at_home" "$@"
  fi
  under_home "$python"
  exec "$at_home" "$@"
}
