# `make`'s every run of PYTHON after its check:
#   sh scripts/run_python.sh PYTHON EXPANDED ARGS...
# runs PYTHON (as written; EXPANDED is make's expansion of it) with ARGS, read as the check read it
# (scripts/python_command.sh): one program, or a command and its arguments, as written or as make expands it.
case $0 in
  */*) . "${0%/*}/python_command.sh" ;;
  *) . ./python_command.sh ;;
esac
run_python "$@"
