# `make`'s every run of PYTHON after its check:
#   sh scripts/run_python.sh PYTHON ARGS...
# runs PYTHON with ARGS, PYTHON read as the check read it (scripts/python_command.sh): one program, or a command and
# its arguments.
case $0 in
  */*) . "${0%/*}/python_command.sh" ;;
  *) . ./python_command.sh ;;
esac
run_python "$@"
