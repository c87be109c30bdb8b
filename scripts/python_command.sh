# How make reads PYTHON, in one place: sourced by scripts/check_python_runs.sh (the check) and scripts/run_python.sh
# (every later run: check_python.py, -m venv).
#
# PYTHON is one program where a program has that whole name, spaces and all ("/opt/my python/bin/python3.11": split
# at its spaces, it was not found). Else, where it has spaces and its first word is a program, it is that program
# and its arguments ("pyenv exec python": read whole, it was refused as not there). It is split at spaces alone:
# a quote, $, ` or * in it is part of a word, never read by a shell.

# python_command PYTHON: sets python_form to "program", "command" or "" (neither), and python_first to its first word.
python_command() {
  python_form= python_first=
  if is_program "$1"; then
    python_form=program
  fi
  case $1 in
    *' '*) python_first=$(first_word "$1")
           [ -n "$python_form" ] || ! is_program "$python_first" || python_form=command ;;
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
    exec "$@"
  fi
  exec "$python" "$@"
}
