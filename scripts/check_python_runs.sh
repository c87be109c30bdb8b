# `make`'s first step, before scripts/check_python.py: is there a PYTHON, and does it run within a bound?
#   sh scripts/check_python_runs.sh PYTHON SECONDS
# One `error:` line and exit 2 when it is not there, does not run, or does not answer in SECONDS.
#
# PYTHON is one program, spaces and all ("/opt/my python/bin/python3.11"): split at its spaces, it was not found.
# A pyenv shim (python2, or a version that is not installed) is on PATH but printed its own paragraph, exit 127: its
# first line is kept. One that hangs (a wrapper waiting on a lock, a shim asking a question) hung make for good: the
# run is bounded by coreutils' timeout, else (stock macOS has none) by perl, each of which runs it in a process group
# of its own and ends that group: a wrapper's children too. Where neither is there, it is run unbounded.
#
# Neither Ctrl-C (sent to the terminal's group: make and this shell) nor make's SIGTERM (sent to this shell alone)
# reaches that group: make waited out the bound. The check runs in the background and is waited for, so that this
# shell takes the stop at once and hands it on. (Its output goes to a file, not to a $(...): a shell waiting on one
# takes no stop until it ends.)

python=$1
seconds=$2
needs="make needs Python 3.10 or 3.11; name one with PYTHON=python3.11 (or python3.10)"
case $python in
  */*) named=$python ;;
  *) named="$python is on PATH but" ;;
esac

if ! command -v "$python" >/dev/null; then
  case $python in
    */*) echo "error: there is no $python: $needs" >&2 ;;
    *) echo "error: there is no $python on PATH: $needs" >&2 ;;
  esac
  exit 2
fi

# As timeout does: the command in a group of its own, TERM to the group after SECONDS (exit 124), KILL 5 s later;
# a TERM, INT or HUP to perl is handed on to the group the same way.
perl_bound='
my ($seconds, @command) = @ARGV;
my $pid = fork;
defined $pid or die "fork: $!\n";
if ($pid == 0) {
    setpgrp(0, 0);
    exec { $command[0] } @command;
    print STDERR "$command[0]: $!\n";
    exit($!{ENOENT} ? 127 : 126);
}
setpgrp($pid, $pid);  # (here too: a stop before the child has made its group reaches it all the same)
my ($ran_out, $signal) = (0, "TERM");
my $stop = sub { kill $signal, -$pid; $signal = "KILL"; alarm 5; };
$SIG{ALRM} = sub { $ran_out = 1 if $signal eq "TERM"; $stop->(); };
$SIG{$_} = $stop for qw(TERM INT HUP);
alarm $seconds;
waitpid $pid, 0;
exit 124 if $ran_out;
exit($? & 127 ? 128 + ($? & 127) : $? >> 8);
'

# (a TMPDIR that names no folder, or one not writable, is passed over for /tmp, as Python's tempfile, pip and venv
# pass it over: make stopped here on mktemp's own line, before Python was run)
out=$(mktemp "${TMPDIR:-/tmp}/python-check.XXXXXX" 2>/dev/null || mktemp /tmp/python-check.XXXXXX 2>/dev/null) || {
  echo "error: make cannot write a temporary file in ${TMPDIR:-/tmp} or /tmp to check $python: set TMPDIR to a writable folder" >&2
  exit 2
}
check= stopped=
stop() {
  stopped=$1
  [ -z "$check" ] || kill -TERM "$check" 2>/dev/null
}
trap 'stop INT' INT
trap 'stop TERM' TERM
trap 'stop HUP' HUP

if command -v timeout >/dev/null; then
  bounded=yes
  timeout -k 5 "$seconds" "$python" -c '' >"$out" 2>&1 &
elif command -v perl >/dev/null; then
  bounded=yes
  perl -e "$perl_bound" "$seconds" "$python" -c '' >"$out" 2>&1 &
else
  bounded=
  "$python" -c '' >"$out" 2>&1 &
fi
check=$!
[ -z "$stopped" ] || kill -TERM "$check" 2>/dev/null  # (a stop that came before $! was known)
# wait ends early when a stop comes (its trap then runs): wait again until the check has ended. (dash's wait
# prints "Terminated" for a check that the stop ended)
while wait "$check" 2>/dev/null; status=$?; kill -0 "$check" 2>/dev/null; do :; done

# (its first line that is not blank, at most 200 characters of it: megabytes without a line break were all quoted)
first=$(sed -n '/[^[:space:]]/{p;q;}' "$out" | cut -c 1-201)
[ "${#first}" -le 200 ] || first="$(printf '%s' "$first" | cut -c 1-200)..."
rm -f "$out"
if [ -n "$stopped" ]; then
  trap - "$stopped"
  kill -s "$stopped" $$  # (ends as stopped, as make expects of its shell; no error line of ours)
fi
[ "$status" -eq 0 ] && exit 0
if [ -n "$bounded" ] && { [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; }; then
  echo "error: $named did not answer in $seconds s (\`$python -c ''\` still ran): $needs" >&2
  exit 2
fi
echo "error: $named does not run (exit $status${first:+: $first}): $needs" >&2
exit 2
