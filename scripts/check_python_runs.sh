# `make`'s first step, before scripts/check_python.py: is there a PYTHON, and does it run within a bound?
#   sh scripts/check_python_runs.sh PYTHON EXPANDED SECONDS
# One `error:` line and exit 2 when it is not there, does not run, or does not answer in SECONDS.
#
# PYTHON is one program, spaces and all ("/opt/my python/bin/python3.11"), or else a command and its arguments
# ("pyenv exec python"), as written or else as make expands it (EXPANDED), as scripts/python_command.sh reads it; it
# is run through scripts/run_python.sh, as make's later runs of it are. Every message prints it with printf: dash's
# echo read a \n in it as a line break.
#
# A pyenv shim (python2, or a version that is not installed) is on PATH but printed its own paragraph, exit 127: its
# first line is kept. One that hangs (a wrapper waiting on a lock, a shim asking a question) hung make for good: the
# run is bounded by coreutils' timeout, else (stock macOS has none) by perl, each of which runs it in a process group
# of its own and ends that group: a wrapper's children too. Where neither is there (it was then run unbounded), this
# shell bounds it itself (bound_by_the_shell, below).
#
# Neither Ctrl-C (sent to the terminal's group: make and this shell) nor make's SIGTERM (sent to this shell alone)
# reaches that group: make waited out the bound. The check runs in the background and is waited for, so that this
# shell takes the stop at once and hands it on. (Its output goes to a file, not to a $(...): a shell waiting on one
# takes no stop until it ends.)

python=$1
expanded=$2
seconds=$3
scripts=${0%/*}
[ "$scripts" != "$0" ] || scripts=.
. "$scripts/python_command.sh"
needs="make needs Python 3.10 or 3.11; name one with PYTHON=python3.11 (or python3.10)"
say() {
  printf '%s\n' "$*" >&2
}

# (timeout took "soon" and said "invalid time interval", which was then reported as PYTHON not running)
case $seconds in
  '' | *[!0-9]*) whole= ;;
  *) whole=${seconds#"${seconds%%[!0]*}"} ;;  # (its digits without leading zeros: none for 0)
esac
if [ -z "$whole" ]; then
  say "error: PYTHON_CHECK_SECONDS=$seconds is not a whole number of seconds above 0: leave it out, or give one, such as PYTHON_CHECK_SECONDS=120"
  exit 2
fi
# One most for every bound: perl's alarm takes at most 4294967295 (it wraps: 4294967296 was no bound at all), and a
# number past the shell's integer range was "Illegal number" to its test (and called not a whole number). Its digits
# are counted first: the shell compares only numbers of as many as the most has.
most=4294967295
if [ "${#whole}" -gt "${#most}" ] || [ "$whole" -gt "$most" ]; then
  say "error: PYTHON_CHECK_SECONDS=$seconds is more seconds than the check can count (at most $most): leave it out, or give fewer, such as PYTHON_CHECK_SECONDS=120"
  exit 2
fi
seconds=$whole

# (a PYTHON left blank, PYTHON= in a script, was "there is no  on PATH")
case $python in
  *[!' ']*) ;;
  *) say "error: PYTHON is empty: $needs"
     exit 2 ;;
esac

python_command "$python" "$expanded"
if [ -z "$python_form" ] && [ "$python_read" != "$python" ]; then
  say "error: there is no program \"$python\" as written, nor \"$python_read\" as make expands it: $needs"
  exit 2
fi
python=$python_read  # (from here on the one that is run, and named so)
case $python_form in
  command) named="the command $python" ;;
  *) case $python in
       */*) named=$python ;;
       *) named="$python is on PATH but" ;;
     esac ;;
esac
if [ -z "$python_form" ]; then
  case $python in
    */*) say "error: there is no $python: $needs" ;;
    *' '*) say "error: there is no program named \"$python\", nor a program $python_first to run it as a command with arguments: $needs" ;;
    *) say "error: there is no $python on PATH: $needs" ;;
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
  say "error: make cannot write a temporary file in ${TMPDIR:-/tmp} or /tmp to check $python: set TMPDIR to a writable folder"
  exit 2
}

# Without timeout and perl this shell bounds the check: a watcher looks each second whether it still runs and, after
# SECONDS (or at once when asked to: the file $out.stop), ends it and what it started (how_to_end, below), as timeout
# does: TERM, then KILL to what is left 5 s later; it leaves $out.late where it ran out. It polls a file rather than
# taking a signal, which could come before it had its trap. (Its output is /dev/null: a watcher holding make's stderr
# held make's reader until it ended.)
bound_by_the_shell() {
  (
    waited=0
    while [ "$waited" -lt "$seconds" ] && [ ! -e "$out.stop" ] && kill -0 "$check" 2>/dev/null; do
      sleep 1
      waited=$((waited + 1))
    done
    kill -0 "$check" 2>/dev/null || exit 0
    [ -e "$out.stop" ] || : >"$out.late"
    case $ends in
      group) pids=-$check ;;  # (kill's -PID: the whole group)
      *) pids=$(process_tree "$check") ;;
    esac
    kill -TERM $pids
    waited=0
    while [ "$waited" -lt 5 ] && any_running $pids; do
      sleep 1
      waited=$((waited + 1))
    done
    for pid in $pids; do
      kill -0 "$pid" && kill -KILL "$pid"
    done
  ) </dev/null >/dev/null 2>&1 &
  watcher=$!
}

# How the shell's bound finds what the check started: dash makes no process group of its own for a background job
# without a terminal (make's shell, CI), and set -m there is "can't access tty". setsid (util-linux's, busybox's)
# makes one: the check, a background job of this shell, leads no group, so setsid makes its group in place (no fork)
# and $! is its id; it is ended whole, as timeout ends its group. Else what ps -A shows below the check; busybox's ps
# can take no -A (without its desktop options), and then only the check was ended, its children left running: the
# error line says so.
how_to_end() {
  run_in=
  if command -v setsid >/dev/null; then
    ends=group run_in=setsid
  elif ps -A -o pid= -o ppid= >/dev/null 2>&1; then
    ends=tree
  else
    ends=check
  fi
}

# PID and every process below it, as ps shows them now (PID alone where ps shows none: how_to_end's "check")
process_tree() {
  ps -A -o pid= -o ppid= 2>/dev/null | awk -v root="$1" '
    { parent[$1] = $2 }
    END {
      tree[root] = 1; print root
      do {
        more = 0
        for (pid in parent) if ((parent[pid] in tree) && !(pid in tree)) { tree[pid] = 1; print pid; more = 1 }
      } while (more)
    }'
}

any_running() {
  for pid; do
    kill -0 "$pid" 2>/dev/null && return 0
  done
  return 1
}

check= watcher= stopped= ends=
# (timeout and perl end the check's group when they are told to; the watcher, when it finds $out.stop)
hand_on_stop() {
  if [ -n "$watcher" ]; then
    : >"$out.stop"
  elif [ -n "$check" ]; then
    kill -TERM "$check" 2>/dev/null
  fi
}
stop() {
  stopped=$1
  hand_on_stop
}
trap 'stop INT' INT
trap 'stop TERM' TERM
trap 'stop HUP' HUP

run_python=$scripts/run_python.sh
if command -v timeout >/dev/null; then
  bound=timeout
  timeout -k 5 "$seconds" sh "$run_python" "$python" "$python" -c '' >"$out" 2>&1 &
  check=$!
elif command -v perl >/dev/null; then
  bound=perl
  perl -e "$perl_bound" "$seconds" sh "$run_python" "$python" "$python" -c '' >"$out" 2>&1 &
  check=$!
else
  bound=sh
  how_to_end
  $run_in sh "$run_python" "$python" "$python" -c '' >"$out" 2>&1 &
  check=$!
  bound_by_the_shell
fi
[ -z "$stopped" ] || hand_on_stop  # (a stop that came before $! was known)
# wait ends early when a stop comes (its trap then runs): wait again until the check has ended. (dash's wait
# prints "Terminated" for a check that the stop ended)
while wait "$check" 2>/dev/null; status=$?; kill -0 "$check" 2>/dev/null; do :; done
check= watcher=  # (a stop from now on has nothing to hand on to)

case $bound in
  sh) [ ! -e "$out.late" ] || ran_out=yes ;;
  *) [ "$status" -ne 124 ] && [ "$status" -ne 137 ] || ran_out=yes ;;
esac
# (its first line that is not blank, at most 200 characters of it: megabytes without a line break were all quoted)
first=$(sed -n '/[^[:space:]]/{p;q;}' "$out" | cut -c 1-201)
[ "${#first}" -le 200 ] || first="$(printf '%s' "$first" | cut -c 1-200)..."
rm -f "$out" "$out.late" "$out.stop"  # (the watcher needs none of them once the check has ended)
if [ -n "$stopped" ]; then
  trap - "$stopped"
  kill -s "$stopped" $$  # (ends as stopped, as make expects of its shell; no error line of ours)
fi
[ "$status" -eq 0 ] && exit 0
if [ -n "$ran_out" ]; then
  left=
  [ "$ends" != check ] || left="; what it started may still run: make found no timeout, perl, setsid or ps -A to end it"
  say "error: $named did not answer in $seconds s (\`$python -c ''\` still ran$left): $needs"
  exit 2
fi
say "error: $named does not run (exit $status${first:+: $first}): $needs"
exit 2
