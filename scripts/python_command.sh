# How make reads PYTHON, in one place: sourced by scripts/check_python_runs.sh (the check) and scripts/run_python.sh
# (every later run: check_python.py, -m venv).
#
# PYTHON is one program where a program has that whole name, spaces and all ("/opt/my python/bin/python3.11": split
# at its spaces, it was not found). Else, where it has spaces and its first word is a program, it is that program
# and its arguments ("pyenv exec python": read whole, it was refused as not there). It is split at spaces alone:
# a quote, $, ` or * in it is part of a word, never read by a shell. A leading ~/ is HOME's, as a shell reads it:
# zsh, a Makefile or the environment hand `PYTHON=~/.pyenv/shims/python` over as typed, which worked while the
# recipes ran PYTHON unquoted, and then was "there is no ~/.pyenv/shims/python".

# python_command PYTHON: sets python_form to "program", "command" or "" (neither), and python_first to its first word.
python_command() {
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

# run_python PYTHON ARGS...: runs PYTHON with ARGS in place of this shell.
run_python() {
  python=$1
  shift
  python_command "$python"
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
