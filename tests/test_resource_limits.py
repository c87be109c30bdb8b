"""Process limits other than the address space (``ulimit -v``: test_hostile_cli.py; ``ulimit -f`` and a full TMPDIR:
test_storage.py), end to end: the real CLI in subprocesses started under ``ulimit -t`` (CPU time), ``ulimit -s``
(stack), ``ulimit -n`` (open files), a thread limit, or with stderr unwritable.

Every failure ends as test_hostile_cli.py's do: its exit status, exactly one ``error:`` line, no traceback, and every
existing file (a bundle replaced with ``--overwrite``) as it was, no staging leftovers.
"""
import csv
import functools
import json
import math
import os
import re
import resource
import signal
import subprocess
import sys
import time

import pytest

from cli_helpers import (REVIEWS, TINY, tiny, assert_error, bundle, copy_bundle, data, listing,  # noqa: F401
                         predictions, tmpdir_env)
from conftest import ROOT, cli_in_process, machine_with_memory, run_cli


def cli(args, limit=None, env=None, timeout=120, **kwargs):
    """``python -m fasttext_lib ARGS`` in a child process; ``limit``: ``(resource, soft, hard)`` set in it first."""
    def preexec():
        if limit is not None:
            resource.setrlimit(limit[0], limit[1:])

    kwargs.setdefault("capture_output", True)
    return subprocess.run([sys.executable, "-m", "fasttext_lib", *map(str, args)], text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1", **(env or {})},
                          preexec_fn=preexec, **kwargs)


def test_a_cpu_time_limit_stops_training_in_one_line_and_keeps_the_old_bundle(tmp_path, data, bundle, tmpdir_env):
    """``ulimit -St 1`` (a batch system's CPU-time limit): SIGXCPU's default action killed the run where it stood,
    exit 152 and no line, its staging files left where a publish or a checkpoint was under way. Now it stops as a
    SIGTERM does: cleaned up, one line that names the limit, the shell's status for SIGXCPU (152)."""
    tmpdir, env = tmpdir_env
    out = copy_bundle(bundle, tmp_path / "model")
    old, before = predictions(out), listing(out)
    ckpt = tmp_path / "ckpt"
    r = cli(["train", "--train", data["train"], "--output", out, *tiny("--epochs", "100000"), "--overwrite",
             "--checkpoint-dir", ckpt], limit=(resource.RLIMIT_CPU, 1, resource.RLIM_INFINITY), env=env)
    assert_error(r, "CPU time limit reached (SIGXCPU, ulimit -t)", status=128 + signal.SIGXCPU)
    assert listing(out) == before and predictions(out) == old and os.listdir(tmpdir) == []
    for epoch in os.listdir(ckpt) if ckpt.exists() else []:  # only whole checkpoints
        assert not [n for n in os.listdir(ckpt / epoch) if "staging" in n], os.listdir(ckpt / epoch)


def stderr_that_fails(how):
    """A descriptor for the child's stderr whose writes fail: a full device (ENOSPC) or a pipe whose reader is gone
    (EPIPE, as ``2> >(head -c0)`` or a log collector that died)."""
    if how == "full":
        return os.open("/dev/full", os.O_WRONLY)
    reader, writer = os.pipe()
    os.close(reader)
    return writer


@pytest.mark.parametrize("how", ["full", "closed pipe"])
def test_an_unwritable_stderr_does_not_stop_predict_answering(data, bundle, how):
    """``predict --input test.csv 2>/dev/full``: the note on how a labeled CSV is read failed to print, and that
    OSError ended the command before its first answer (exit 1: a traceback that could not be shown either). Notes
    and progress are for a reader who may be gone; the answers on stdout are the command's work."""
    sink = stderr_that_fails(how)
    try:
        r = cli(["predict", "--model", bundle, "--input", data["test"]], capture_output=False,
                stdout=subprocess.PIPE, stderr=sink)
    finally:
        os.close(sink)
    assert r.returncode == 0
    assert len(r.stdout.splitlines()) == 60 and all(json.loads(line)["label"] for line in r.stdout.splitlines())


@pytest.mark.parametrize("how", ["full", "closed pipe"])
def test_an_unwritable_stderr_does_not_stop_training(tmp_path, data, how):
    """``train ... 2>/dev/full`` (progress bars and notes on stderr): the first progress line failed, and the run
    ended there, exit 1, no bundle. Now the bundle is written, exit 0."""
    sink = stderr_that_fails(how)
    out = tmp_path / "out"
    try:
        r = cli(["train", "--train", data["train"], "--validation", data["test"], "--output", out, "--epochs", "2",
                 "--emsize", "4", "--ctx", "cpu"], capture_output=False, stdout=subprocess.PIPE, stderr=sink)
    finally:
        os.close(sink)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 2
    assert len(predictions(out)) == 2


def test_an_error_with_stderr_unwritable_still_exits_2(tmp_path, bundle):
    """The error line cannot be shown, but the status still says it (and nothing is written)."""
    sink = stderr_that_fails("full")
    try:
        r = cli(["predict", "--model", tmp_path / "missing", "--input", "-"], capture_output=False, input=REVIEWS,
                stdout=subprocess.PIPE, stderr=sink)
    finally:
        os.close(sink)
    assert (r.returncode, r.stdout) == (2, "")


@pytest.mark.parametrize("command, variable", [("predict", "MXNET_CPU_WORKER_NTHREADS"), ("train", "OMP_NUM_THREADS")])
def test_more_threads_than_the_machine_allows_is_one_error_line(tmp_path, data, bundle, tmpdir_env, command, variable):
    """More threads than this kernel's pid_max and threads-max: MXNet's engine aborted when its thread pool could not
    start one ('terminate called without an active exception', exit 134), OpenMP's team ended training in a
    segfault; no line. Now one, before anything is read, naming the variable and the limit. (The count is read off
    this machine's limits, so that no machine lets the run go on to start them.)"""
    tmpdir, env = tmpdir_env
    limits = [int(open(f"/proc/sys/kernel/{name}").read()) for name in ("pid_max", "threads-max")]
    asked = max(limits) + 1
    args = (["predict", "--model", bundle, "--input", data["test"]] if command == "predict" else
            ["train", "--train", data["train"], "--output", tmp_path / "out", *TINY])
    r = cli(args, env=dict(env, **{variable: str(asked)}))
    assert_error(r, "this process would start about ")
    said = int(re.search(r"would start about ([\d,]+) more threads", r.stderr).group(1).replace(",", ""))
    assert asked - 10 <= said <= asked + 10, r.stderr
    assert f"({variable}={asked})" in r.stderr and ("kernel.pid_max" in r.stderr or "kernel.threads-max" in r.stderr)
    assert r.stdout == "" and not (tmp_path / "out").exists() and os.listdir(tmpdir) == []


def fake_limits(tmp_path, monkeypatch, cgroup_line, limit, used, running=200):
    """/proc/self/cgroup naming a cgroup (v1's pids hierarchy or v2's unified one) whose pids.max is ``limit`` with
    ``used`` tasks, under a kernel allowing 32,768 (pid_max, threads-max) with ``running`` threads on the machine."""
    from fasttext_lib import process_limits

    root = tmp_path / "sys"
    (root / "v1/docker/abc").mkdir(parents=True)
    (root / "v2/kubepods/pod1").mkdir(parents=True)
    for where in (root / "v1/docker/abc", root / "v2/kubepods/pod1"):
        (where / "pids.max").write_text(f"{limit}\n")
        (where / "pids.current").write_text(f"{used}\n")
    (root / "v1/docker/pids.max").write_text("max\n")  # an ancestor without a limit
    (root / "v1/docker/pids.current").write_text("5000\n")
    (tmp_path / "cgroup").write_text(cgroup_line + "\n")
    (tmp_path / "loadavg").write_text(f"0.10 0.20 0.30 1/{running} 4242\n")
    (tmp_path / "max").write_text("32768\n")
    monkeypatch.setattr(process_limits, "_CGROUP", str(tmp_path / "cgroup"))
    monkeypatch.setattr(process_limits, "_CGROUP_ROOTS", {"v1": str(root / "v1"), "v2": str(root / "v2")})
    monkeypatch.setattr(process_limits, "_LOADAVG", str(tmp_path / "loadavg"))
    monkeypatch.setattr(process_limits, "_THREADS_MAX", str(tmp_path / "max"))
    monkeypatch.setattr(process_limits, "_PID_MAX", str(tmp_path / "max"))
    monkeypatch.setattr(process_limits, "_own_threads", lambda: 1)  # (this test process's threads vary with what
    # ran before it: MXNet's engine, OpenBLAS, a moto server)
    return process_limits


@pytest.mark.parametrize("cgroup_line", ["0::/kubepods/pod1", "12:pids:/docker/abc"], ids=["v2", "v1"])
def test_a_containers_task_limit_counts_for_threads(tmp_path, monkeypatch, cgroup_line):
    """A container's pids.max (docker --pids-limit, a pod's limit) counts every thread: OMP_NUM_THREADS=100 under a
    limit of 60 aborted training in libgomp ('Thread creation failed', exit 134)."""
    limits = fake_limits(tmp_path, monkeypatch, cgroup_line, limit=60, used=3)
    monkeypatch.setenv("OMP_NUM_THREADS", "100")
    with pytest.raises(limits.FastTextError, match=r"may start 57 more \(the container's task limit: .*pids.max is 60, "
                                                   r"3 in use\)"):
        limits.check_threads("train")
    limits.check_threads("predict")  # (scored with numpy: no OpenMP team)
    monkeypatch.setenv("OMP_NUM_THREADS", "40")
    limits.check_threads("train")
    monkeypatch.setenv("MXNET_CPU_WORKER_NTHREADS", "60")
    with pytest.raises(limits.FastTextError, match=r"\(MXNET_CPU_WORKER_NTHREADS=60\)"):
        limits.check_threads("predict")


def test_a_clusters_worker_counts_the_threads_of_its_join(tmp_path, monkeypatch):
    """A cluster's worker (DMLC_ROLE=worker) starts ps-lite's and ZeroMQ's threads as it joins (mx.kv.create), after
    MXNet has started: where the task limit left room for MXNet's threads but not for those, the join aborted
    (ZeroMQ's 'Resource temporarily unavailable', exit 134), untold, and the other workers waited
    FASTTEXT_CLUSTER_TIMEOUT. They are counted now, and the line comes before the join (the worker then tells the
    others from a child process of one thread each, cluster.tell_the_others). Only a dist_* kvstore joins: start-up
    (the kvstore not yet known) and a worker's host trained alone (--kvstore local, device) count no join; they were
    refused for one under a limit they run under."""
    from fasttext_lib import mxnet_env

    monkeypatch.setattr(mxnet_env, "_REFUSED", [])  # (a refusal has this process's MXNet count as one not started)
    limits = fake_limits(tmp_path, monkeypatch, "0::/kubepods/pod1", limit=9, used=3)  # (room for 6 more)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.setenv(name, "1")
    for name in limits.MXNET_THREADS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DMLC_ROLE", "worker")
    for name in limits.DIST_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    mxnet_env.check_room_to_join("dist_sync")  # (DMLC_ROLE alone, no cluster's environment: it joins none)
    for name, value in zip(limits.DIST_ENVIRONMENT, ("127.0.0.1", "9091", "1", "2")):
        monkeypatch.setenv(name, value)
    limits.check_threads("train")  # (start_mxnet's: the main thread, the prefetcher, MXNet's 5: 6 more)
    for kvstore in ("local", "device", "auto", None):
        mxnet_env.check_room_to_join(kvstore)
    assert not mxnet_env.cannot_start()
    with pytest.raises(limits.FastTextError, match=r"would start about 10 more threads to train \(OMP_NUM_THREADS=1, "
                                                   r"4 to join its cluster\), and it may start 6 more"):
        mxnet_env.check_room_to_join("dist_sync")
    assert mxnet_env.cannot_start()  # (so the worker tells the others from a child, which needs less)


def test_ulimit_u_counts_for_threads(tmp_path, monkeypatch):
    """``ulimit -u`` (RLIMIT_NPROC) counts every process and thread of the user: under a low one MXNet's or
    OpenMP's threads could not start and the process aborted (exit 134, no line), as under a container's task limit.
    Root's tasks are not counted against it (the kernel does not enforce it for root): nothing to refuse there. (This
    user's tasks and the limit are faked, as the cgroup's are: the tests run as root.)"""
    limits = fake_limits(tmp_path, monkeypatch, "0::/kubepods/pod1", limit="max", used=3)
    proc = tmp_path / "proc"
    for pid, uid, threads in ((1, 0, 50), (100, 1000, 40), (101, 1000, 12), (102, 1001, 30)):
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "status").write_text(f"Name:\tx\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nThreads:\t{threads}\n")
    (proc / "self").mkdir()
    monkeypatch.setattr(limits, "_PROC", str(proc), raising=False)  # (raising: the check before it read /proc)
    real_getrlimit = resource.getrlimit
    monkeypatch.setattr(resource, "getrlimit",
                        lambda which: (60, 60) if which == resource.RLIMIT_NPROC else real_getrlimit(which))
    monkeypatch.setattr(os, "getuid", lambda: 1000)
    for name in limits.MXNET_THREADS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "100")
    with pytest.raises(limits.FastTextError, match=r"may start 8 more \(ulimit -u is 60, this user's processes and "
                                                   r"threads: 52 running\)"):
        limits.check_threads("train")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    limits.check_threads("train")  # (6 more)
    monkeypatch.setenv("OMP_NUM_THREADS", "100")
    monkeypatch.setattr(os, "getuid", lambda: 0)
    limits.check_threads("train")


def test_no_limit_that_can_be_read_checks_nothing(tmp_path, monkeypatch):
    limits = fake_limits(tmp_path, monkeypatch, "0::/kubepods/pod1", limit="max", used=3)
    monkeypatch.setenv("OMP_NUM_THREADS", "1000")
    limits.check_threads("train")  # (32,768 less the 200 running: room)
    monkeypatch.setattr(limits, "_CGROUP", str(tmp_path / "none"))
    monkeypatch.setattr(limits, "_LOADAVG", str(tmp_path / "none"))
    assert limits.thread_room() is None
    monkeypatch.setenv("OMP_NUM_THREADS", "100000")
    limits.check_threads("train")


def test_a_stack_limit_larger_than_memory_leaves_threads_startable(tmp_path, data, bundle):
    """``ulimit -s`` of 1 TiB: glibc gives every new thread a stack of the limit's size, which no machine can map,
    so numpy's OpenBLAS could start no thread and ``import numpy`` failed ('PyCapsule_Import could not import module
    "datetime"', an ImportError traceback, exit 1) in every command; MXNet's engine would have aborted next. Threads
    now get glibc's usual 8 MiB whatever the limit (the main thread keeps it)."""
    huge = 1 << 40
    r = cli(["predict", "--model", bundle, "--input", data["test"]], limit=(resource.RLIMIT_STACK, huge, huge),
            env={"OMP_NUM_THREADS": "2"})
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert len(r.stdout.splitlines()) == 60
    r = cli(["train", "--train", data["train"], "--output", tmp_path / "out", *TINY],
            limit=(resource.RLIMIT_STACK, huge, huge), env={"OMP_NUM_THREADS": "2"})
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


def test_no_file_descriptor_left_for_an_s3_connection_is_named_as_such(monkeypatch):
    """Under ``ulimit -n`` a connection to S3 fails for want of a descriptor, and botocore says 'Could not connect to
    the endpoint URL': the error line was 'cannot reach the S3 endpoint for s3://...', a network problem to chase.
    (Reproduced by ``ulimit -n 5; python -m fasttext_lib train ... --checkpoint-dir s3://...``.)"""
    import botocore.exceptions as bex
    import urllib3.exceptions

    from fasttext_lib import storage
    from fasttext_lib.errors import FastTextError

    def refused():
        try:
            raise OSError(24, "Too many open files")
        except OSError:
            error = urllib3.exceptions.NewConnectionError(None, "Failed to establish a new connection: [Errno 24] "
                                                                "Too many open files")
        raise bex.EndpointConnectionError(endpoint_url="http://127.0.0.1:9/b/k", error=error)

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with pytest.raises(FastTextError) as caught:
        with storage.s3_errors("s3://b/k"):
            refused()
    assert str(caught.value) == (f"cannot open a connection to S3 for s3://b/k: too many open files (this process may "
                                 f"have {soft:,} at most, ulimit -n): raise that limit with ulimit -n")
    with pytest.raises(FastTextError, match="cannot reach the S3 endpoint for s3://b/k"):  # a network failure stays one
        with storage.s3_errors("s3://b/k"):
            raise bex.EndpointConnectionError(endpoint_url="http://127.0.0.1:9/b/k", error=ConnectionRefusedError(111))


def test_a_full_non_blocking_stderr_pipe_delays_the_error_line_rather_than_dropping_it(tmp_path):
    """A non-blocking stderr pipe (a parent's event loop set O_NONBLOCK) whose reader is a moment behind refuses a
    write with EAGAIN: that first failure sent stderr to /dev/null for good, and the error line that came after was
    never seen. Now the write waits for the reader (the pipe is not gone, only full)."""
    import fcntl
    import threading

    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETFL, fcntl.fcntl(write_end, fcntl.F_GETFL) | os.O_NONBLOCK)
    filler = 0
    try:
        while True:  # the pipe full before the command writes anything
            filler += os.write(write_end, b"x" * 4096)
    except BlockingIOError:
        pass
    received = []

    def reader():
        time.sleep(1.0)  # behind, but there
        with os.fdopen(read_end, "rb") as f:
            received.append(f.read())
    thread = threading.Thread(target=reader)
    thread.start()
    try:
        r = cli(["predict", "--model", tmp_path / "missing", "--input", "-"], capture_output=False, input=REVIEWS,
                stdout=subprocess.PIPE, stderr=write_end)
    finally:
        os.close(write_end)
    thread.join(30)
    said = received[0][filler:].decode()
    assert (r.returncode, r.stdout) == (2, "")
    assert said.startswith("error: ") and str(tmp_path / "missing") in said and len(said.splitlines()) == 1, said


def _full_non_blocking_pipe():
    """(read end, write end) of a pipe whose write end is non-blocking and full."""
    import fcntl

    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETFL, fcntl.fcntl(write_end, fcntl.F_GETFL) | os.O_NONBLOCK)
    try:
        while True:
            os.write(write_end, b"x" * 4096)
    except BlockingIOError:
        pass
    return read_end, write_end


def _waits_for_room(monkeypatch):
    """The list of the waits for a full pipe to take a write (select.select calls, each its timeout) from now on:
    counted, not timed (how long a wait took says what a loaded machine let it take)."""
    import select

    waits, real = [], select.select

    def select_counted(rlist, wlist, xlist, timeout=None):
        waits.append(timeout)
        return real(rlist, wlist, xlist, timeout)
    monkeypatch.setattr(select, "select", select_counted)
    return waits


def test_a_stderr_reader_that_took_nothing_for_the_whole_wait_is_not_waited_for_at_every_write(monkeypatch):
    """A reader that is there but takes nothing (a suspended parent) was waited for STDERR_WAIT_SECONDS at every
    write: each progress-bar redraw of a training, so a one-epoch run of the built-in sample took 8 minutes, and a
    Ctrl-C's error line (print's text and its newline: two writes) a minute more. Once a wait ran out, the next writes
    take what fits and go on; a reader that takes again is waited for again."""
    from fasttext_lib import cli

    monkeypatch.setattr(cli, "STDERR_WAIT_SECONDS", 0.5)
    waits = _waits_for_room(monkeypatch)
    read_end, write_end = _full_non_blocking_pipe()
    with os.fdopen(write_end, "w") as raw:
        stream = cli._NotesStream(raw)
        for write in range(6):
            stream.write("epoch 1/1: 10%\r")
            stream.write("")  # (tqdm writes empty strings: they say nothing of the reader)
            if write == 0:
                first = len(waits)
        assert first >= 1 and len(waits) == first  # the first write's wait, not six
        os.read(read_end, 1 << 20)  # the reader takes again: its text goes through
        stream.write("error: the line\n")
    assert os.read(read_end, 1 << 20).endswith(b"error: the line\n")
    os.close(read_end)


def test_a_ctrl_c_during_a_wait_for_a_full_stderr_pipe_is_not_followed_by_more_waits(monkeypatch):
    """Ctrl-C while a write waited for a reader that takes nothing: the error line (two writes) waited a minute, and
    a 2nd Ctrl-C in that wait printed a traceback, each of its lines waiting 30 s (15 minutes)."""
    from fasttext_lib import cli

    monkeypatch.setattr(cli, "STDERR_WAIT_SECONDS", 2)
    waits = _waits_for_room(monkeypatch)
    read_end, write_end = _full_non_blocking_pipe()

    def ctrl_c(signum, frame):
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGALRM, ctrl_c)
    try:
        with os.fdopen(write_end, "w") as raw:
            stream = cli._NotesStream(raw)
            signal.setitimer(signal.ITIMER_REAL, 0.2)
            with pytest.raises(KeyboardInterrupt):
                stream.write("epoch 1/1: 10%\r")
            waited = len(waits)
            print("error: interrupted (SIGINT); stopped and cleaned up", file=stream)
            assert waited >= 1 and len(waits) == waited  # (the interrupted wait, and none after it)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        os.close(read_end)


def test_openblas_threads_are_counted_up_to_its_build_limit(monkeypatch):
    """numpy's OpenBLAS starts at most 64 threads: counted as one per CPU, a 192-CPU machine under a tight task limit
    was refused where the run fits."""
    from fasttext_lib import process_limits

    monkeypatch.setattr(process_limits, "usable_cpus", lambda: 192)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MXNET_CPU_WORKER_NTHREADS", "MXNET_CPU_PRIORITY_NTHREADS"):
        monkeypatch.delenv(name, raising=False)
    assert process_limits.threads_needed("predict")[0] == 1 + 63 + 1 + 4  # main, BLAS, MXNet's worker and priority


def test_after_a_cpu_time_limit_stopped_the_run_the_next_sigxcpu_is_ignored():
    """The kernel sends SIGXCPU again every CPU second past the soft ``ulimit -t``: once the stopped run's handlers were
    restored, the next one killed the process during its exit (MXNet's engine finishing), with a core dump."""
    from fasttext_lib.stops import Interrupted, stop_on_signals

    before = signal.getsignal(signal.SIGXCPU)
    try:
        with pytest.raises(Interrupted, match="CPU time limit reached"):
            with stop_on_signals():
                os.kill(os.getpid(), signal.SIGXCPU)
                time.sleep(1)
        assert signal.getsignal(signal.SIGXCPU) == signal.SIG_IGN
        with stop_on_signals():  # (a run with no SIGXCPU puts back what was there)
            pass
        assert signal.getsignal(signal.SIGXCPU) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGXCPU, before)
    with stop_on_signals():
        pass
    assert signal.getsignal(signal.SIGXCPU) == before


# A child that reads the memory available from a /proc/meminfo of ours (a small container, as its OOM killer sees it),
# then runs the CLI: the check must refuse, where the real process would have been killed without a line.
SMALL_MACHINE = """
import sys
from fasttext_lib import devices
devices._MEMINFO = sys.argv[1]
from fasttext_lib.cli import run
sys.argv = ["fasttext_lib"] + sys.argv[2:]
sys.exit(run())
"""


def _on_a_small_machine(tmp_path, args, available_kb=16384, monkeypatch=None):
    """The CLI's ``args`` with /proc/meminfo saying ``available_kb`` KB are available (SMALL_MACHINE). With
    ``monkeypatch``, in this process (machine_with_memory, cli_in_process): the same check and the same line, without
    an MXNet import; without, in a process of its own (one case of each check, for the process's exit and stderr)."""
    if monkeypatch is not None:
        machine_with_memory(monkeypatch, tmp_path, available_kb)
        return cli_in_process(*args)
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(f"MemTotal: 1000000 kB\nMemAvailable: {available_kb} kB\nSwapFree: 0 kB\n")
    return subprocess.run([sys.executable, "-c", SMALL_MACHINE, meminfo, *map(str, args)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"})


def _read_args(command, bundle, data):
    return (["predict", "--model", bundle, "--input", data] if command == "predict"
            else ["evaluate", "--model", bundle, "--data", data])


def _scored_on_a_small_machine(tmp_path, command, bundle, available_kb, reviews, monkeypatch=None):
    """``predict`` or ``evaluate`` (``command``) of ``bundle`` on ``reviews`` (fastText-format text) with
    /proc/meminfo saying ``available_kb`` KB are available (:func:`_on_a_small_machine`): the data file and the
    finished run."""
    data = tmp_path / "reviews.txt"
    data.write_text(reviews)
    return data, _on_a_small_machine(tmp_path, _read_args(command, bundle, data), available_kb, monkeypatch)


def in_process_but_predict(command, monkeypatch):
    """``monkeypatch`` (:func:`_on_a_small_machine` in this process) but for ``predict``, whose case runs the CLI's
    process: the check and its line are the library's, the same for both commands."""
    return None if command == "predict" else monkeypatch


def huge_review(chars=20_000_000):
    """One review of ``chars`` characters (and a few): a line that a machine short of memory cannot featurize."""
    return ("good food but slow service! " * (chars // 28 + 1))[:chars]


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_review_too_long_for_the_memory_left_is_one_error_line_naming_it(tmp_path, bundle, command, monkeypatch):
    """One review of 20 MB on a machine with 16 MB available: predict and evaluate featurized it regardless (~14
    bytes a byte of text with bigrams before featurize.cc folded long documents), and the OOM killer ended the run
    with no line. Now the featurizer weighs the memory a chunk of documents needs against what the process has left
    and refuses, naming the review (predict: its line) and what to do; no answer is printed for its chunk."""
    data, r = _scored_on_a_small_machine(tmp_path, command, bundle, 16384,
                                         f"__label__1 fine\n__label__2 {huge_review()}\n__label__1 fine again\n",
                                         in_process_but_predict(command, monkeypatch))
    assert_error(r, f"{data}:2: a document of 20.0 million characters, with 2 other documents, needs about")
    assert "MB of memory to featurize, and this process has 16 MB left" in r.stderr
    assert "split it into shorter documents, or give the process more memory" in r.stderr
    assert r.stdout == ""


def test_a_json_lines_review_too_long_for_the_memory_left_is_one_error_line_naming_its_record(tmp_path, bundle,
                                                                                              monkeypatch):
    """predict of JSON Lines input whose review needs more memory than is left: the refusal was an AttributeError
    traceback ('generator' object has no attribute 'one_per_line': JSON Lines input was not wrapped in Lines), where
    a plain text file's is one line naming the review."""
    data = tmp_path / "reviews.jsonl"
    data.write_text("\n".join(json.dumps({"text": text}) for text in ["fine", huge_review(), "fine again"]) + "\n")
    r = _on_a_small_machine(tmp_path, ["predict", "--model", bundle, "--input", data], monkeypatch=monkeypatch)
    assert_error(r, f"{data}:2: a document of 20.0 million characters, with 2 other documents, needs about")
    assert r.stdout == ""


LIMITED_ADDRESS_SPACE = """
import resource, sys
from fasttext_lib.predict import Predictor
predictor = Predictor.load(sys.argv[1])
review = "good food but slow service! " * 1_071_429  # 30 million characters
predictor.predict(["warm up"])
with open("/proc/self/status") as f:
    mapped = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (mapped + (80 << 20), resource.RLIM_INFINITY))  # 80 MB more to map
try:
    predictor.predict(["fine", review])
except Exception as exc:
    print(type(exc).__name__, exc)
"""


def test_the_check_counts_a_ulimit_v_for_a_long_review_in_the_python_api(bundle):
    """Under ``ulimit -v`` with 80 MB left, Predictor.predict of a 30 MB review failed in an allocation (a bare
    MemoryError, which names nothing; or a ``bad_alloc`` inside the native featurizer). The check counts the address
    space left as memory: the refusal names ``texts[1]``, before anything is allocated for it."""
    r = subprocess.run([sys.executable, "-c", LIMITED_ADDRESS_SPACE, str(bundle)], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("NoRoomToFeaturize texts[1]: a document of 30.0 million characters, with 1 other "
                               "document, needs about "), r.stdout


@pytest.mark.parametrize("csv_limit", [131072, 16 << 20])
@pytest.mark.parametrize("where", ["first", "first, spaces around it", "between others"])
def test_a_long_line_is_read_with_its_bytes_and_text_once_and_handed_out_as_its_text_alone(tmp_path, where, csv_limit):
    """predict read a line of 20 MB into ~3 copies at once (its bytes joined from the pieces read, joined again with
    the block's end, the text split into a copy of itself) and kept 3 while it was featurized (the bytes, in
    line_blocks and in checked_lines, beside the text and its copy), before the memory check (Featurizer.check_room)
    weighed it: ~5 bytes a byte in all. Now the bytes are gathered once, decoded once, and let go: at most about
    its bytes and its text at once (2 bytes a byte of ASCII), its text alone (1) while it is answered. The format tests
    of a first line copied it (strip()) and, in a process whose csv field limit was raised to 16 Mi characters (an
    endpoint's, a notebook's, earlier tests'), parsed up to 16 Mi characters of it as a one-column header, 4 bytes
    each: 4.4 to 5.4 bytes a byte. Now they look at its start, and a line that long is no header."""
    import tracemalloc

    from fasttext_lib.predict_input import documents

    review = huge_review()
    path = tmp_path / "reviews.txt"
    path.write_text(f"{review}\r\nfine\n" if where == "first" else f"  {review} \r\nfine\n" if where.startswith("first")
                    else f"fine\n{review}\nfine again\n")
    held, seen = [], []
    limit = csv.field_size_limit(csv_limit)  # csv's default, as predict's process has it when its first line is judged,
    tracemalloc.start()  # or raised (formats.allow_long_csv_fields) by an earlier read in the process
    try:
        with documents(str(path), "auto", [1, 2], note=print) as texts:
            for text in texts:
                seen.append(len(text))
                if len(text) >= len(review):
                    held.append(tracemalloc.get_traced_memory()[0])
                del text
            peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        csv.field_size_limit(limit)
    assert seen == ([len(review), 4] if where == "first" else [len(review) + 3, 4] if where.startswith("first")
                    else [4, len(review), 10])
    assert peak < 2.5 * len(review), peak / len(review)
    assert held[0] < 1.3 * len(review), held[0] / len(review)


def test_a_long_labeled_line_is_featurized_without_a_copy_for_its_label_word(bundle):
    """``__label__2 <20 MB>``: text.without_labels copied the whole line to leave its label word out, before it was
    lowercased a piece at a time. Now each piece leaves its own out: the same bags, one copy of the text fewer."""
    import tracemalloc

    import numpy as np

    from fasttext_lib.predict import Predictor

    featurizer = Predictor.load(bundle).featurizer
    review = huge_review()
    labeled = ["__label__1 fine", "__label__2 " + review + " __label__3"]
    featurizer.transform(["warm up"])
    tracemalloc.start()
    try:
        bags = featurizer.transform(labeled)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.6 * len(review), peak / len(review)
    plain = featurizer.transform(["fine", review])
    for part in ("rows", "weights", "offsets"):
        assert np.array_equal(getattr(bags, part), getattr(plain, part))


@pytest.mark.parametrize("command", ["predict", "evaluate"])
@pytest.mark.parametrize("table", ["csv", "jsonl"])
def test_a_review_too_long_for_memory_in_a_table_is_named_by_its_line(tmp_path, bundle, command, table, monkeypatch):
    """In a CSV or JSON Lines file the refused review was named by its place among the documents ("document 2",
    predict's "record 2"), which a header, a quoted line break and blank lines put off its line: now by its line
    (the line its record starts at), as predict names a line of plain text."""
    data = tmp_path / f"reviews.{table}"
    review = huge_review(15_000_000)  # (a CSV field holds at most 16 Mi characters)
    if table == "csv":  # its record starts at line 5
        data.write_text(f'label,text\n1,"fine, and\nover two lines"\n\n2,"{review}"\n1,fine again\n')
    else:  # at line 4
        data.write_text(json.dumps({"label": "1", "text": "fine"}) + "\n\n\n"
                        + json.dumps({"label": "2", "text": review}) + "\n")
    r = _on_a_small_machine(tmp_path, _read_args(command, bundle, data), monkeypatch=monkeypatch)  # (in this process)
    line = 5 if table == "csv" else 4
    assert_error(r, f"{data}:{line}: a document of 15.0 million characters, with ")
    assert r.stdout == ""


@pytest.fixture(scope="module")
def wide_compact_bundle(data, tmp_path_factory):
    """A compact bigram bundle of emsize 300 (the width of fastText's published vectors): scoring on the CPU gathers
    a review's rows from its stored ones (compact.StoredRows), 1.2 KB a row."""
    out = tmp_path_factory.mktemp("wide") / "model"
    r = run_cli("train", "--train", data["train"], "--output", out, *tiny("--emsize", "300"), "--ngrams", "2",
                "--buckets", "100000", "--compact", "float32")
    assert r.returncode == 0, r.stderr
    return out


@functools.lru_cache(maxsize=None)  # (the same 10 MB for every case: generating it takes seconds)
def varied_review(chars=10_000_000):
    """One review of ``chars`` characters of varied words: its bigrams fill most of a table of 100k buckets."""
    from fasttext_lib.synthetic import generate_reviews

    # (~1,400 characters a review: chars // 1000 of them give enough, where chars // 100 generated 7x the text kept)
    text = " ".join(generate_reviews(chars // 1000, seed=4).texts).replace("\n", " ")
    assert len(text) >= chars, len(text)
    return text[:chars]


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_review_whose_scoring_needs_more_memory_than_is_left_is_one_error_line(tmp_path, wide_compact_bundle,
                                                                                    command, monkeypatch):
    """The memory check weighed featurizing alone. A compact bundle's prediction then gathers the review's distinct
    rows (~100k of them for this 10 MB review, 1.2 KB each at emsize 300: ~120 MB; a 60 MB review's 1.36M at emsize
    100: 545 MB), more than featurizing it takes (~80 MB): with 120 MB left, the check let it through and the OOM
    killer ended the run with no line. Now the check counts what scoring holds too, and refuses, saying so."""
    data, r = _scored_on_a_small_machine(tmp_path, command, wide_compact_bundle, 122880,  # 120 MB
                                         f"__label__1 fine\n__label__2 {varied_review()}\n",
                                         in_process_but_predict(command, monkeypatch))
    assert_error(r, f"{data}:2: a document of 10.0 million characters, with 1 other document, needs about")
    assert "MB of memory to score, and this process has 120 MB left" in r.stderr
    assert r.stdout == ""


# A bigram bundle whose table, (100,000 buckets + its words) x emsize 50 = ~21 MB, is more than SMALL_MACHINE's 16 MB.
WIDE = ["--ngrams", "2", "--buckets", "100000", "--emsize", "50"]


@pytest.fixture(scope="module")
def wide_bundles(data, tmp_path_factory):
    """``{"none": a full bundle, "float32", "int4": compact ones}`` of the same ~21 MB bigram model (its compact
    bundles store ~36k of its ~108k rows: 7 MB of float32)."""
    out = {}
    for compact in ("none", "float32", "int4"):
        out[compact] = tmp_path_factory.mktemp("wide") / "model"
        r = run_cli("train", "--train", data["train"], "--output", out[compact], *tiny(*WIDE), "--compact", compact)
        assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("command", ["predict", "evaluate", "export-vectors"])
def test_a_bundle_whose_table_is_more_than_the_memory_available_is_refused_in_one_line(tmp_path, data, wide_bundles,
                                                                                        command, monkeypatch):
    """A full bundle whose embedding table is more than the machine has available (an 800 MB bigram table on a small
    endpoint instance or notebook): loading it read the whole table into memory unchecked, and on a real machine
    the OOM killer ended the run with no line. Now one line that says what the table needs, what is available and
    what to do (more memory, or a compact bundle), before anything is read; nothing is written."""
    model, vec = wide_bundles["none"], tmp_path / "words.vec"
    args = {"predict": ["predict", "--model", model, "--input", data["test"]],
            "evaluate": ["evaluate", "--model", model, "--data", data["test"]],
            "export-vectors": ["export-vectors", "--model", model, "--output", vec]}[command]
    r = _on_a_small_machine(tmp_path, args, monkeypatch=in_process_but_predict(command, monkeypatch))
    assert_error(r, f"out of memory to load {model}: its embedding table, ")
    rows = re.search(r"its embedding table, ([\d,]+) rows x emsize 50, needs (\d+) MB of memory, and this machine "
                     r"has 16 MB of memory available; use a machine with more memory", r.stderr)
    assert rows and int(rows.group(2)) == -(-int(rows.group(1).replace(",", "")) * 200 >> 20), r.stderr
    assert "a compact bundle (train --compact float32)" in r.stderr
    assert r.stdout == "" and not vec.exists()


def test_a_compact_bundle_is_scored_on_a_machine_too_small_for_its_table(tmp_path, data, wide_bundles, monkeypatch):
    """The check is where a table is allocated: a compact bundle scored on the CPU reads its stored rows and never
    builds the table, so the same small machine scores it (as it did before the check)."""
    r = _on_a_small_machine(tmp_path, ["predict", "--model", wide_bundles["float32"], "--input", data["test"]],
                            monkeypatch=monkeypatch)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 60


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_compact_bundle_whose_stored_rows_are_more_than_the_memory_available_is_refused_in_one_line(
        tmp_path, data, wide_bundles, command, monkeypatch):
    """A compact bundle's stored rows (7 MB of float32 here; hundreds of MB for a large corpus) were read without a
    look at the memory available: on a machine with less, the OOM killer ended the run with no line (or numpy's
    MemoryError: the CLI's line named neither the bundle nor its rows). Now one line that says what the rows need,
    what is available and what to do, before they are read."""
    model = wide_bundles["float32"]
    args = (["predict", "--model", model, "--input", data["test"]] if command == "predict"
            else ["evaluate", "--model", model, "--data", data["test"]])
    r = _on_a_small_machine(tmp_path, args, available_kb=2048, monkeypatch=in_process_but_predict(command, monkeypatch))
    assert_error(r, f"out of memory to load {model}: its stored embedding rows, ")
    said = re.search(r"its stored embedding rows, ([\d,]+) rows x emsize 50 \(float32\), need (\d+) MB of memory, "
                     r"and this machine has 2 MB of memory available; use a machine with more memory", r.stderr)
    assert said and 7 <= int(said.group(2)) <= 9, r.stderr
    assert "train --compact float16" in r.stderr and r.stdout == ""


LOADS_UNDER_A_LIMIT = """
import json, resource, sys
from fasttext_lib.predict import Predictor
from fasttext_lib.vectors import word_vectors
Predictor.load(sys.argv[1]).predict(["warm up"])  # MXNet, numpy and the native library mapped
with open("/proc/self/status") as f:
    mapped = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (mapped + (int(sys.argv[3]) << 20), resource.RLIM_INFINITY))
try:
    predictor = Predictor.load(sys.argv[2])
    print("loaded", len(word_vectors(predictor)), flush=True)
    predictor.model
    print("built", flush=True)
except Exception as exc:
    print(type(exc).__name__, exc)
"""


def _load_under_a_limit(tiny, bundle, room_mb):
    r = subprocess.run([sys.executable, "-c", LOADS_UNDER_A_LIMIT, str(tiny), str(bundle), str(room_mb)],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_a_table_beyond_a_ulimit_v_is_one_error_line_that_says_so(bundle, wide_bundles):
    """Under ``ulimit -v`` with 8 MB left, loading a full bundle's 21 MB table failed in MXNet's 'Failed to allocate
    CPU Memory', which Predictor.load reported as 'model parameters ... do not match config.json'. Building a
    compact bundle's table (Predictor.model) was MXNet's traceback."""
    full = _load_under_a_limit(bundle, wide_bundles["none"], 8)
    assert full.startswith(f"FastTextError out of memory to load {wide_bundles['none']}: its embedding table, "), full
    assert "and this process may map " in full and "MB more (ulimit -v); use a machine with more memory" in full
    squeezed = _load_under_a_limit(bundle, wide_bundles["float32"], 20)  # its stored rows fit, its table does not
    assert squeezed.startswith("loaded "), squeezed
    assert f"FastTextError out of memory to load {wide_bundles['float32']}: its embedding table, " in squeezed
    assert "Predictor.model builds the whole table, which predict, evaluate and word_vectors do not need" in squeezed


def test_stored_rows_beyond_a_ulimit_v_are_one_error_line_not_a_memory_error(bundle, wide_bundles):
    """Under ``ulimit -v`` with 4 MB left, Predictor.load of an int4 bundle (its 9 MB of rows read as float32) raised
    numpy's bare MemoryError ('Unable to allocate 6.90 MiB for an array with shape (36164, 50)'), which named
    neither the bundle nor what to do. Now the same one line as a table that does not fit."""
    out = _load_under_a_limit(bundle, wide_bundles["int4"], 4)
    assert out.startswith(f"FastTextError out of memory to load {wide_bundles['int4']}: its stored embedding rows, "), out
    assert "x emsize 50 (int4, read as float32), need " in out and "MB more (ulimit -v); use a machine with more" in out


def test_a_bundle_loaded_with_no_memory_left_at_all_is_one_clear_error(bundle):
    """Under ``ulimit -v`` with nothing left, Predictor.load raised a bare MemoryError (copying the bundle's files 1 MB
    at a time, or building its vocabulary: what the table's check leaves over), which named neither the bundle nor
    what to do. Now one FastTextError, in one line, that names the bundle. (Which allocation fails first depends on
    the allocator's state: the files' copy says "to read" the bundle, what comes after it "to load" it; where memory
    already mapped held both, the table's own check of the address space left says it, as for a table too big.)"""
    out = _load_under_a_limit(bundle, bundle, 0)
    assert out.count("\n") == 1, out
    if out.startswith(f"FastTextError out of memory to load {bundle}: its embedding table, "):
        assert "this process may map 0 MB more (ulimit -v); use a machine with more memory" in out, out
        return
    assert out.startswith((f"FastTextError out of memory to load {bundle} (",
                           f"FastTextError out of memory to read {bundle} (")), out
    assert out.rstrip("\n").endswith("use a machine with more memory, or raise this process's limit (ulimit -v) if "
                                     "it has one"), out


def test_a_bundle_whose_files_cannot_be_copied_for_want_of_memory_is_one_error_line(tmp_path, bundle, monkeypatch):
    """predict copies the bundle's files 1 MB at a time before any memory check: a buffer it cannot have (a very tight
    ``ulimit -v``) was the CLI's 'out of memory (MemoryError)' naming no bundle, and the Python API's bare
    MemoryError. Now both say which bundle could not be read."""
    import shutil

    from conftest import cli_in_process
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.predict import Predictor

    def no_buffer(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(shutil, "copyfileobj", no_buffer)
    with pytest.raises(FastTextError) as caught:
        Predictor.load(bundle)
    assert str(caught.value).startswith(f"out of memory to read {bundle} (an allocation failed); use a machine with "
                                        f"more memory"), str(caught.value)
    reviews = tmp_path / "reviews.txt"
    reviews.write_text(REVIEWS)
    r = cli_in_process("predict", "--model", bundle, "--input", reviews)
    assert_error(r, f"error: out of memory to read {bundle} (an allocation failed); ")
    assert r.stdout == ""


@pytest.mark.parametrize("entry", ["Predictor.load", "Predictor.from_files", "pack_model"])
def test_a_bundle_whose_vocabulary_cannot_be_built_for_want_of_memory_is_one_error_line(tmp_path, bundle, monkeypatch,
                                                                                        entry):
    """Predictor.load turned a MemoryError while the bundle's contents were read (its vocabulary built: what the
    table's check leaves over) into one line naming the bundle, but Predictor.from_files called on its own (as
    pack_model does, checking the bundle before it packs it) let the bare MemoryError out, naming nothing. Now
    each entry gives the same line."""
    import gluonnlp

    from fasttext_lib import storage
    from fasttext_lib.bundle_read import load_bundle_files
    from fasttext_lib.devices import parse_ctx
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.packaging import pack_model
    from fasttext_lib.predict import Predictor

    def no_memory(cls, text):
        raise MemoryError()

    monkeypatch.setattr(gluonnlp.Vocab, "from_json", classmethod(no_memory))
    with pytest.raises(FastTextError) as caught:
        if entry == "Predictor.load":
            Predictor.load(bundle)
        elif entry == "pack_model":
            pack_model(bundle, tmp_path / "model.tar.gz")
        else:
            with storage.staging_dir() as tmp:
                config, paths = load_bundle_files(str(bundle), tmp)
                Predictor.from_files(str(bundle), config, paths, parse_ctx("cpu")[0])
    assert str(caught.value) == (f"out of memory to load {bundle} (an allocation failed); use a machine with more "
                                 f"memory, or raise this process's limit (ulimit -v) if it has one")
    assert not (tmp_path / "model.tar.gz").exists()


def test_word_vectors_of_a_full_bundle_copy_the_vocabulary_rows_only(bundle, wide_bundles):
    """word_vectors (export-vectors, notebook 04) copied the whole table to keep its vocabulary's rows: a second
    table, a numpy MemoryError traceback where the first fit with room to spare. Now only those rows are copied."""
    out = _load_under_a_limit(bundle, wide_bundles["none"], 30)  # the 21 MB table, not two of them
    assert out.startswith("loaded "), out


CUDA_OUT_OF_MEMORY = ("Traceback (most recent call last):\n  File \"../src/storage/./pooled_storage_manager.h\", "
                      "line 161\nMXNetError: cudaMalloc retry failed: out of memory")


def gpu_too_small_for_tables(monkeypatch, when, rows_that_fit=0):
    """No GPU here: copies of arrays to one fail as MXNet's do on a GPU too small for them, raised by the copy ("at
    the copy") or, as MXNet's engine runs the copy later, at the next wait for the array ("at the next wait").
    Arrays of fewer than ``rows_that_fit`` rows are copied (to the CPU). Returns the shapes whose copy failed."""
    import mxnet as mx

    class FailedCopy(mx.nd.NDArray):
        __slots__ = ()

        def wait_to_read(self):
            raise mx.base.MXNetError(CUDA_OUT_OF_MEMORY)

    copyto, failed_shapes = mx.nd.NDArray.copyto, []

    def to_a_full_gpu(self, other):
        if not isinstance(other, mx.Context) or other.device_type != "gpu":
            return copyto(self, other)
        if self.shape[0] < rows_that_fit:
            return copyto(self, mx.cpu())
        failed_shapes.append(self.shape)
        if when == "at the copy":
            raise mx.base.MXNetError(CUDA_OUT_OF_MEMORY)
        failed = copyto(self, mx.cpu())
        failed.__class__ = FailedCopy
        return failed

    monkeypatch.setattr(mx.nd.NDArray, "copyto", to_a_full_gpu)
    return failed_shapes


@pytest.mark.parametrize("when", ["at the copy", "at the next wait"])
@pytest.mark.parametrize("compact", ["float32", "none"])
def test_a_table_the_gpu_cannot_hold_is_one_error_line(wide_bundles, monkeypatch, compact, when):
    """The memory check counts the machine's memory, where the table is built or read; the GPU's is allocated when
    MXNet's engine runs the copy, and a failure is raised at the next wait for the array. A compact bundle's table
    was never waited for at load: its 'cudaMalloc retry failed: out of memory' came at the first prediction, a
    traceback. Now both kinds of bundle fail to load in the one out-of-memory line. (No GPU here: the copy of the
    table to one fails as MXNet's does, raised by the copy or at the next wait; the small output layer fits.)"""
    import mxnet as mx

    from fasttext_lib import storage
    from fasttext_lib.bundle_read import load_bundle_files
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.predict import Predictor

    gpu_too_small_for_tables(monkeypatch, when, rows_that_fit=100_000)  # (the output layer fits)
    with storage.staging_dir() as tmp:
        config, paths = load_bundle_files(str(wide_bundles[compact]), tmp)
        with pytest.raises(FastTextError) as caught:
            Predictor.from_files(str(wide_bundles[compact]), config, paths, mx.gpu(0))
    message = str(caught.value)
    assert message.startswith(f"out of memory to load {wide_bundles[compact]}: its embedding table, "), message
    assert "needs 21 MB of memory (cudaMalloc retry failed: out of memory); " in message and "\n" not in message


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("when", ["at the copy", "at the next wait"])
def test_a_table_the_gpu_cannot_hold_for_training_is_one_error_line(monkeypatch, when, optimizer):
    """Training onto a GPU builds the table on the CPU (its memory checked there) and copies it to the GPU, whose
    memory MXNet allocates when its engine runs the copy, raising a failure at the next wait for the array. The copy
    was not waited for: 'cudaMalloc retry failed: out of memory' came at the first step, a traceback after the run's
    setup. Now the copy is waited for, and a table the GPU cannot hold is one line, before anything else goes there.
    (No GPU here: the copy to one fails as MXNet's does, raised by the copy or at the next wait.)"""
    import mxnet as mx

    from fasttext_lib.errors import FastTextError
    from fasttext_lib.model import FastTextClassifier

    copied = gpu_too_small_for_tables(monkeypatch, when)
    model = FastTextClassifier(300_000, 50, 3)
    with pytest.raises(FastTextError) as caught:
        model.initialize_like_fasttext(mx.gpu(0), state_tables=2 if optimizer == "adam" else 0)
    message = str(caught.value)
    assert copied == [(300_000, 50)], copied  # (the table: nothing was put on the GPU after it)
    assert message.startswith("out of memory for the embedding table on gpu(0): 300,000 rows x emsize 50 = 0.1 GiB "
                              "of float32"), message
    assert "(cudaMalloc retry failed: out of memory); lower emsize or buckets" in message and "\n" not in message
    assert ("2 more of that size for adam's moments" in message) == (optimizer == "adam"), message


def test_a_bundle_for_a_gpu_on_a_machine_too_small_for_its_table_is_one_error_line(wide_bundles, tmp_path,
                                                                                    monkeypatch):
    """``Predictor.load(bundle, ctx="gpu")`` builds (compact) or reads (full) the whole table in the machine's memory
    before it is copied to the GPU; that allocation was unchecked (a compact bundle's was a bare nd.empty). Now one
    line, before any GPU is touched (so it is tested here without one): a compact bundle is told to load on the
    CPU, where it needs no table."""
    import mxnet as mx

    from fasttext_lib import storage
    from fasttext_lib.bundle_read import load_bundle_files
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.predict import Predictor

    from fasttext_lib.compact import COMPACT_EITHER, COMPACT_FLAG

    machine_with_memory(monkeypatch, tmp_path, 16384)
    # (each reader told how it chooses the CPU: the Python API's ctx='cpu', the command line's --ctx cpu, and an
    # endpoint, which serves on a GPU wherever the instance has one, a CPU instance type)
    for compact, says, compact_as in (("float32", "load it on the CPU (ctx='cpu')", None),
                                      ("float32", "load it on the CPU (--ctx cpu)", COMPACT_FLAG),
                                      ("float32", "serve it on a CPU instance type", COMPACT_EITHER),
                                      ("none", "copied to the GPU: use a machine", None)):
        with storage.staging_dir() as tmp:
            config, paths = load_bundle_files(str(wide_bundles[compact]), tmp)
            with pytest.raises(FastTextError) as caught:
                Predictor.from_files(str(wide_bundles[compact]), config, paths, mx.gpu(0), compact_as)
        assert str(caught.value).startswith(f"out of memory to load {wide_bundles[compact]}: its embedding table, ")
        assert "this machine has 16 MB of memory available" in str(caught.value) and says in str(caught.value)


class HeldShape(tuple):
    """A shape held on a fake GPU (:func:`gpu_of_bytes`), equal to the plain tuple; ``gpu``: the GPU's number;
    ``itemsize``: its values' bytes each (8: an int64 index)."""
    gpu, itemsize = 0, 4


def held_on(held, gpu, rows=None):
    """The shapes of ``held`` (:func:`gpu_of_bytes`'s) on GPU number ``gpu`` (of ``rows`` rows, if given)."""
    return [shape for shape in held if shape.gpu == gpu and rows in (None, shape[0])]


def gpu_of_bytes(monkeypatch, room, when):
    """No GPU here: fake ones of ``room`` bytes each. Copies of arrays to one, and zeros made on it (adam's moments
    are), are made on the CPU while their bytes fit in what is left there; past that they fail as MXNet's allocations
    do on a full GPU, raised by the call ("at the copy") or at the next wait for the array ("at the next wait").
    Returns the shapes held on the GPUs (:class:`HeldShape`), in order: clearing it empties the GPUs."""
    import mxnet as mx
    import numpy as np

    class FailedAllocation(mx.nd.NDArray):
        __slots__ = ()

        def wait_to_read(self):
            raise mx.base.MXNetError(CUDA_OUT_OF_MEMORY)

    copyto, zeros, held = mx.nd.NDArray.copyto, mx.nd.zeros, []

    def on_the_gpu(ctx, shape, make, itemsize=4):
        if sum(s.itemsize * math.prod(s) for s in held_on(held, ctx.device_id)) + itemsize * math.prod(shape) <= room:
            held.append(HeldShape(shape))
            held[-1].gpu, held[-1].itemsize = ctx.device_id, itemsize
            return make()
        if when == "at the copy":
            raise mx.base.MXNetError(CUDA_OUT_OF_MEMORY)
        failed = make()
        failed.__class__ = FailedAllocation
        return failed

    def copy_to_the_gpu(self, other):
        if not isinstance(other, mx.Context) or other.device_type != "gpu":
            return copyto(self, other)
        return on_the_gpu(other, self.shape, lambda: copyto(self, mx.cpu()))

    def zeros_on_the_gpu(shape, ctx=None, dtype=None, **kwargs):
        if ctx is None or ctx.device_type != "gpu":
            return zeros(shape, ctx=ctx, dtype=dtype, **kwargs)
        return on_the_gpu(ctx, shape, lambda: zeros(shape, ctx=mx.cpu(), dtype=dtype, **kwargs),
                          np.dtype(dtype or "float32").itemsize)

    monkeypatch.setattr(mx.nd.NDArray, "copyto", copy_to_the_gpu)
    monkeypatch.setattr(mx.nd, "zeros", zeros_on_the_gpu)
    return held


@pytest.mark.parametrize("when", ["at the copy", "at the next wait"])
def test_adams_moments_the_gpu_cannot_hold_beside_the_table_are_one_error_line(monkeypatch, when):
    """Adam keeps two moment tables, each the embedding table's size, on the device that trains; MXNet allocates
    them at the first step. The copy of the table to a GPU was checked, its moments were not: on a GPU that holds the
    table but not its moments, 'cudaMalloc retry failed: out of memory' came at the first step, a traceback after the
    run's setup. Now they are made room for where the table is copied, and a GPU without it is one line naming them.
    SGD keeps no moments, and trains on the same GPU. (No GPU here: a fake one of 2.5 tables' bytes.)"""
    import mxnet as mx

    from fasttext_lib.errors import FastTextError
    from fasttext_lib.model import FastTextClassifier

    table = 300_000 * 50 * 4
    held = gpu_of_bytes(monkeypatch, int(2.5 * table), when)
    FastTextClassifier(300_000, 50, 3).initialize_like_fasttext(mx.gpu(0))  # sgd: the table and the output layer
    assert held[0] == (300_000, 50) and all(shape[0] != 300_000 for shape in held[1:]), held

    held.clear()
    with pytest.raises(FastTextError) as caught:
        FastTextClassifier(300_000, 50, 3).initialize_like_fasttext(mx.gpu(0), state_tables=2)
    message = str(caught.value)
    assert message.startswith("out of memory for adam's moments on gpu(0): 2 tables of 300,000 rows x emsize 50 = "
                              "0.1 GiB of float32 beside the embedding table's 0.1 GiB"), message
    assert ("(cudaMalloc retry failed: out of memory); lower emsize or buckets, or use optimizer='sgd', or train on a "
            "device with more memory") in message and "\n" not in message
    assert held == [(300_000, 50), (300_000, 50)], held  # (the table and one moment; nothing went there after)


@pytest.mark.parametrize("kvstore", ["auto", "local"])
def test_a_run_tries_the_gpus_room_for_adams_moments_where_its_updater_keeps_them_there(monkeypatch, kvstore):
    """Training's model (train.initial_model) tries a GPU's room for adam's moments where MXNet's own updater keeps
    them beside the table: one device and no kvstore. A ``local`` kvstore keeps them beside its own copy of the
    table, in the host's pinned memory, and a GPU is not refused for moments it would not hold (its room for
    kv.init's row_sparse cast of the table, one table made and freed at setup, is tried)."""
    import mxnet as mx

    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.train import initial_model

    held = gpu_of_bytes(monkeypatch, int(2.5 * 300_000 * 50 * 4), "at the next wait")
    config = TrainConfig(optimizer="adam", emsize=50, kvstore=kvstore)
    featurizer = type("Featurizer", (), {"num_rows": 300_000})()
    if kvstore == "local":
        initial_model(featurizer, 3, config, [mx.gpu(0)])
        # the table, the cast (its values and each row's int64 index)
        assert [shape for shape in held if shape[0] == 300_000] == [(300_000, 50)] * 2 + [(300_000,)], held
        return
    with pytest.raises(FastTextError) as caught:
        initial_model(featurizer, 3, config, [mx.gpu(0)])
    assert str(caught.value).startswith("out of memory for adam's moments on gpu(0): 2 tables of "), caught.value


@pytest.mark.parametrize("kvstore", ["auto", "device", "local", "dist_sync"])
def test_several_gpus_try_the_room_for_adams_moments_where_their_kvstore_keeps_them(monkeypatch, tmp_path, kvstore):
    """With several GPUs a kvstore applies adam (kv.set_optimizer), making the moments at the first step beside the
    value it stores. A ``device`` kvstore (auto's for several devices) moves its own copy of the table to the GPU its
    merge buffer went to (MXNet 1.9.1 src/kvstore/kvstore_local.h:249-254; which GPU: comm.h:675-710), and the moments
    are made there with it. Untried, a GPU that held the table but not those was MXNet's traceback at the first step,
    after the whole setup; now their room is tried on each GPU the store may choose, and a GPU without it is one line
    naming them. A ``local`` kvstore keeps its copy and the moments in the host's pinned memory, a ``dist_*`` one on
    its servers: their GPUs hold the table alone and are not refused. (No GPUs here: two fake ones, of 2.5 tables'
    bytes each, room for the table but not the rest; then of 4.5 tables', room for all.)"""
    import mxnet as mx

    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.train import initial_model

    table = 300_000 * 50 * 4
    machine_with_memory(monkeypatch, tmp_path, 2_000_000)  # the host holds everything (a local kvstore's moments)
    config = TrainConfig(optimizer="adam", emsize=50, kvstore=kvstore)
    featurizer = type("Featurizer", (), {"num_rows": 300_000})()
    gpus = [mx.gpu(0), mx.gpu(1)]
    held = gpu_of_bytes(monkeypatch, int(2.5 * table), "at the next wait")
    if kvstore in ("local", "dist_sync"):
        initial_model(featurizer, 3, config, gpus)
        # the table alone, and on the first GPU the room for kv.init's row_sparse cast of it (made and freed at setup;
        # its values and each row's int64 index)
        assert held_on(held, 0, 300_000) == [(300_000, 50)] * 2 + [(300_000,)], held
        assert held_on(held, 1, 300_000) == [(300_000, 50)], held
        return
    with pytest.raises(FastTextError) as caught:
        initial_model(featurizer, 3, config, gpus)
    message = str(caught.value)
    assert message.startswith("out of memory for adam's moments on gpu(0): 2 tables of 300,000 rows x emsize 50 = "
                              "0.1 GiB of float32 and the kvstore's copy of the table (0.1 GiB) beside the embedding "
                              "table's 0.1 GiB (cudaMalloc retry failed: out of memory); "), message
    assert "or use optimizer='sgd', or kvstore='local'" in message and "\n" not in message, message

    monkeypatch.undo()
    machine_with_memory(monkeypatch, tmp_path, 2_000_000)
    held = gpu_of_bytes(monkeypatch, int(4.5 * table), "at the next wait")
    initial_model(featurizer, 3, config, gpus)
    # the table, then the room for the store's copy and the moments tried, on each GPU (row_sparse: each with its
    # rows' int64 index)
    tried = [(300_000, 50)] + [(300_000, 50), (300_000,)] * 3
    assert held_on(held, 0, 300_000) == held_on(held, 1, 300_000) == tried, held


@pytest.mark.parametrize("kvstore", ["auto", "device"])
def test_several_gpus_try_the_room_for_a_device_kvstores_copy_of_the_table_with_sgd(monkeypatch, tmp_path, kvstore):
    """SGD keeps no moments, but a ``device`` kvstore's copy of the table still moves to a GPU at the first step
    (kvstore_local.h:249-254): a GPU that holds the table but not a second one is one line before training, not
    MXNet's traceback at the first step. (No GPUs here: two fake ones of 1.5 tables' bytes each.)"""
    import mxnet as mx

    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.train import initial_model

    gpu_of_bytes(monkeypatch, int(1.5 * 300_000 * 50 * 4), "at the copy")
    featurizer = type("Featurizer", (), {"num_rows": 300_000})()
    with pytest.raises(FastTextError) as caught:
        initial_model(featurizer, 3, TrainConfig(optimizer="sgd", emsize=50, kvstore=kvstore), [mx.gpu(0), mx.gpu(1)])
    message = str(caught.value)
    assert message.startswith("out of memory for the kvstore's copy of the table on gpu(0): 300,000 rows x emsize 50 "
                              "= 0.1 GiB of float32 beside the embedding table's 0.1 GiB (cudaMalloc retry failed: "
                              "out of memory); lower emsize or buckets, or use kvstore='local'"), message
    assert "\n" not in message


def test_a_gpus_room_for_a_row_sparse_table_counts_each_rows_int64_index(monkeypatch, tmp_path):
    """A ``device`` kvstore's copy of the table (and adam's moments beside it, and kv.init's cast) is row_sparse with
    every row: its values and, beside them, each row's index, an int64 (MXNet 1.9.1 python/mxnet/ndarray/sparse.py,
    ``_STORAGE_AUX_TYPES``): 8 bytes a row more than the table. The room tried on a GPU was the values' alone, so a
    GPU with room for the table and the store's values but not their index passed, to fail at the first push. (No
    GPUs here: two fake ones of two tables and half the index's bytes.)"""
    import mxnet as mx

    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.train import initial_model

    rows, table = 300_000, 300_000 * 50 * 4
    machine_with_memory(monkeypatch, tmp_path, 2_000_000)
    held = gpu_of_bytes(monkeypatch, 2 * table + 4 * rows, "at the next wait")
    featurizer = type("Featurizer", (), {"num_rows": rows})()
    with pytest.raises(FastTextError) as caught:
        initial_model(featurizer, 3, TrainConfig(optimizer="sgd", emsize=50, kvstore="device"), [mx.gpu(0), mx.gpu(1)])
    assert str(caught.value).startswith("out of memory for the kvstore's copy of the table on gpu(0): "), caught.value
    monkeypatch.undo()
    machine_with_memory(monkeypatch, tmp_path, 2_000_000)
    held = gpu_of_bytes(monkeypatch, 2 * table + 8 * rows, "at the next wait")
    initial_model(featurizer, 3, TrainConfig(optimizer="sgd", emsize=50, kvstore="device"), [mx.gpu(0), mx.gpu(1)])
    assert held_on(held, 0, rows) == [(rows, 50), (rows, 50), (rows,)], held  # the table; the store's values, index


def test_a_list_of_cpus_and_gpus_places_the_kvstores_tables_where_its_merge_buffer_goes():
    """A ctx list of CPUs and GPUs (``[cpu(0), gpu(0)]``: a list of mx.Context, or ``['cpu', 'gpu:0']``) trains, with
    kvstore ``device`` (auto's for several devices). Its store's copy of the table, and adam's moments, live where the
    merged gradient is (kvstore_local.h:249-254), on the device the merge buffer went to: CommDevice::InitMergeBuffer
    keys the devices by their number alone (MXNet 1.9.1 src/kvstore/comm.h:680-683), so of cpu(0) and gpu(0) the one
    later in the list is the only candidate. Any GPU in the list was taken for theirs: ``[gpu(0), cpu(0)]`` keeps
    them in host memory, uncounted there, and was tried on the GPU instead. Where a CPU and a GPU are both
    candidates (``[cpu(0), gpu(1)]``: an unordered_map's order), they are counted on the host and tried on the GPU."""
    import mxnet as mx

    from fasttext_lib.table_memory import host_need, states_place

    place = states_place("device", [mx.cpu(0), mx.gpu(0)])  # gpu(0) replaces cpu(0): the GPU's
    assert (place.on_host, place.gpus, place.store_copy, place.host_store) == (False, (mx.gpu(0),), True, "setup")
    place = states_place("device", [mx.gpu(0), mx.cpu(0)])  # cpu(0) replaces gpu(0): the host's, as CPUs' are
    assert (place.on_host, place.gpus, place.store_copy, place.host_store) == (True, (), False, "run"), place
    assert place.conversion == mx.gpu(0)  # (kv.init's cast: on the first device)
    place = states_place("device", [mx.cpu(0), mx.gpu(1)])  # either: both
    assert (place.on_host, place.gpus, place.store_copy, place.host_store) == (True, (mx.gpu(1),), True, "run"), place
    table, sparse = 1000 * 10 * 4, 1000 * (10 * 4 + 8)
    need = host_need(1000, 10, 2, states_place("device", [mx.gpu(0), mx.cpu(0)]), [mx.gpu(0), mx.cpu(0)])
    assert need.total == table + sparse + 2 * sparse, need  # cpu(0)'s table, the store's copy, the moments
    assert dict((what, count) for count, what in need.beside) == {"adam's moments": 2,
                                                                  "the kvstore's copy of it": 1}, need


@pytest.mark.parametrize("ctxs, state_tables, kvstore, tables, rows_sparse", [
    (["cpu(1)"], 2, None, 3, 0),  # cpu(1)'s table and adam's moments (cpu(0)'s, built, is gone)
    (["cpu(1)"], 0, None, 2, 0),  # the copy made from cpu(0)'s: both at once
    (["cpu(1)", "cpu(2)"], 0, "local", 2, 2),  # the two tables, the store's copy and kv.init's cast
    (["cpu(0)", "cpu(1)"], 0, "local", 2, 2),
])
def test_the_host_counts_one_table_for_each_cpu_context_once_the_table_is_copied(ctxs, state_tables, kvstore, tables,
                                                                                 rows_sparse):
    """The table is built on cpu(0) and copied to each other CPU context (adopt_data); a run on ``[cpu(1)]`` lets
    cpu(0)'s go once copied, yet it was counted beside cpu(1)'s for the whole run: with adam four tables for three
    (a host with room for the run refused). Each CPU context holds one table after the copy; the copy itself holds
    cpu(0)'s and the copies at once."""
    import mxnet as mx

    from fasttext_lib.table_memory import host_need, states_place

    ctxs = [mx.cpu(int(c[4:-1])) for c in ctxs]
    table, sparse = 1000 * 10 * 4, 1000 * (10 * 4 + 8)
    need = host_need(1000, 10, state_tables, states_place(kvstore, ctxs), ctxs)
    assert need.total == tables * table + rows_sparse * sparse, need


def _initial_model_on_a_small_host(monkeypatch, tmp_path, host_kb, optimizer, kvstore, ctx, refused):
    """train.initial_model of a 300,000 x 50 table on ``ctx`` (``gpu``, ``gpu:0,1``, ``cpu``, ``cpu:0,1``) of a host
    with ``host_kb`` KB of memory and fake GPUs of 4.5 tables: its refusal (pytest's ExceptionInfo) where
    ``refused``, else None once it passed."""
    import mxnet as mx

    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.train import initial_model

    ctxs = {"gpu": [mx.gpu(0)], "gpu:0,1": [mx.gpu(0), mx.gpu(1)], "cpu": [mx.cpu()], "cpu:0,1": [mx.cpu(0), mx.cpu(1)]}
    machine_with_memory(monkeypatch, tmp_path, host_kb)
    gpu_of_bytes(monkeypatch, int(4.5 * 300_000 * 50 * 4), "at the copy")
    config = TrainConfig(optimizer=optimizer, emsize=50, kvstore=kvstore)
    featurizer = type("Featurizer", (), {"num_rows": 300_000})()
    if not refused:
        initial_model(featurizer, 3, config, ctxs[ctx])
        return None
    with pytest.raises(FastTextError) as caught:
        initial_model(featurizer, 3, config, ctxs[ctx])
    return caught


@pytest.mark.parametrize("ctx, kvstore, refused", [("gpu", "auto", False), ("gpu:0,1", "auto", False),
                                                   ("cpu", "dist_sync", False), ("gpu:0,1", "dist_sync", False),
                                                   ("cpu", "auto", True), ("cpu:0,1", "device", True),
                                                   ("gpu:0,1", "local", True)])
def test_adams_moments_count_against_the_hosts_memory_only_where_they_live_there(monkeypatch, tmp_path, ctx, kvstore,
                                                                                  refused):
    """The table is built in the host's memory, and adam's moments were counted there too, wherever they would live:
    a GPU run (its moments on the GPU: MXNet's updater makes them on the weight's context, optimizer.py:2097 and
    1602-1607) or a dist_* run (on the parameter servers) was refused for host memory it would never use. Now they
    count where they live: on the host for a CPU run and for a ``local`` kvstore (its stored value in pinned host
    memory, kvstore_local.h:232). (The host here has room for two tables and a half, not for three: a CPU worker's
    table and kv.init's row_sparse cast of it fit; fake GPUs of 4.5 tables.)"""
    caught = _initial_model_on_a_small_host(monkeypatch, tmp_path, 150_000, "adam", kvstore, ctx, refused)
    if not refused:  # (two of the 58,594 KB table fit; three do not)
        return
    assert str(caught.value).startswith("out of memory for the embedding table: 300,000 rows x emsize 50 = 0.1 GiB of "
                                        "float32, and 2 more of that size for adam's moments"), caught.value


def test_a_table_copied_to_other_devices_is_let_go_as_soon_as_it_is_copied():
    """A GPU run builds the table in the host's memory, copies it to its GPUs (table_memory.adopt_data) and keeps no
    host table after: the kvstore's copy of it (kv.init) is made in that memory afterwards. The adoption's wrapper
    class held the table in a reference cycle, freed only when Python's cyclic collector next ran: the host held two
    tables at kv.init. (Another CPU context stands for a GPU: the copy is made the same way.)"""
    import gc

    import mxnet as mx

    from fasttext_lib.model import FastTextClassifier
    from fasttext_lib.table_memory import adopt_data

    table = mx.nd.ones((1000, 10))
    before = sys.getrefcount(table)
    collecting = gc.isenabled()
    gc.disable()  # (a collection between the two counts would hide the cycle)
    try:
        adopt_data(FastTextClassifier(1000, 10, 3).embedding.weight, table, [mx.cpu(1)])
        assert sys.getrefcount(table) == before
    finally:
        if collecting:
            gc.enable()


@pytest.mark.parametrize("ctx, kvstore, refused", [("cpu", "local", True), ("cpu", "device", True),
                                                   ("cpu:0,1", "device", True), ("cpu:0,1", "local", True),
                                                   ("gpu:0,1", "device", False), ("gpu", "local", False),
                                                   ("cpu", "auto", False)])
def test_a_kvstores_copy_of_the_table_counts_against_the_hosts_memory(monkeypatch, tmp_path, ctx, kvstore, refused):
    """Every kvstore that is not dist_* copies the value kv.init gives it into pinned host memory
    (MXNet 1.9.1 src/kvstore/kvstore_local.h:232): a second table in the host's memory, for the whole run where the
    store keeps it there (``local``, and ``device`` on CPUs: the merged gradient stays on a CPU, 249-254), and a
    second CPU context holds a copy of the table too. Neither was counted: a run on a host with room for one table
    passed the check and was killed by the OOM killer (no line) or got MXNet's traceback at kv.init. Now it is one
    line naming them. A GPU run lets its host table go once copied to the GPUs, before kv.init: its store's copy
    takes the table's place (``device``: until the first push moves it to a GPU). (The host here has room for the
    table and half another; fake GPUs of 4.5 tables; SGD: no moments.)"""
    caught = _initial_model_on_a_small_host(monkeypatch, tmp_path, 90_000, "sgd", kvstore, ctx, refused)
    if not refused:  # (the 58,594 KB table fits; a second one does not)
        return
    message = str(caught.value)
    assert message.startswith("out of memory for the embedding table: 300,000 rows x emsize 50 = 0.1 GiB of float32, "
                              "and 1 more of that size for the kvstore's copy of it"), message
    assert ("1 for cpu(1)'s copy" in message) == (ctx == "cpu:0,1"), message
    assert "more than the 0.1 GiB of memory available here; lower emsize or buckets" in message, message
    assert message.endswith(", or kvstore='auto' (one device: no kvstore, no copy)") == (ctx == "cpu"), message
    assert "\n" not in message


class _PullsOf:
    """A kvstore that records how many rows each row_sparse_pull asks for (``pulled``), and does the rest itself."""

    def __init__(self, kv):
        self.kv, self.pulled = kv, []

    def __getattr__(self, name):
        return getattr(self.kv, name)

    def row_sparse_pull(self, key, out, row_ids):
        self.pulled.append(row_ids.shape[0])
        self.kv.row_sparse_pull(key, out=out, row_ids=row_ids)


@pytest.mark.parametrize("kvstore", ["local", "device"])
def test_sync_tables_brings_every_devices_table_up_to_date_a_block_of_rows_at_a_time(monkeypatch, kvstore):
    """optim.Updater.sync_tables (at setup and each epoch's end) made two temporaries the size of the table on the
    first device: a row_sparse pull of every row, then its dense cast; on a GPU with room for the table (and adam's
    moments) but not those, MXNet's traceback after the setup or the first epoch. Now it pulls and copies the table
    an eighth of its rows at a time (at most 64 MB), each block into every device's rows, which stay exactly the
    store's: a row the store does not hold (an all-zero row, which kv.init's row_sparse cast drops) comes back zero,
    as the dense cast made it. (Two CPU contexts stand for two devices.)"""
    import mxnet as mx
    import numpy as np

    from fasttext_lib.config import TrainConfig
    from fasttext_lib.model import FastTextClassifier
    from fasttext_lib.optim import Updater, make_optimizer

    ctxs = [mx.cpu(0), mx.cpu(1)]
    model = FastTextClassifier(1000, 8, 3)
    model.initialize_like_fasttext(ctxs, kvstore=kvstore)
    for ctx in ctxs:
        model.embedding.weight.data(ctx)[3] = 0  # a row the store will not hold
    stored = model.embedding.weight.data(ctxs[0]).asnumpy()
    kv = _PullsOf(mx.kv.create(kvstore))
    updater = Updater(model, ctxs, make_optimizer(TrainConfig(optimizer="sgd", lr=0.5), 10), kv)
    for table in updater.tables:
        table[:] = 7.0  # stale: sync_tables must bring back the store's every row
    dense_shapes = []
    tostype = mx.nd.sparse.RowSparseNDArray.tostype

    def recorded_tostype(self, stype):
        dense_shapes.append(self.shape)
        return tostype(self, stype)

    monkeypatch.setattr(mx.nd.sparse.RowSparseNDArray, "tostype", recorded_tostype)
    kv.pulled.clear()
    updater.sync_tables()
    assert sum(kv.pulled) == 1000 and max(kv.pulled) <= 125, kv.pulled
    assert all(shape[0] <= 125 for shape in dense_shapes), dense_shapes
    for table in updater.tables:
        assert np.array_equal(table.asnumpy(), stored)
    assert not stored[3].any() and stored[4].all()


@pytest.mark.parametrize("kvstore", ["local", "dist_sync"])
def test_the_first_gpus_room_for_kv_inits_row_sparse_cast_of_the_table_is_tried(monkeypatch, kvstore):
    """optim.Updater gives kv.init the table's row_sparse cast, made on the first device beside its table: about a
    second table there, at setup. With a kvstore that keeps nothing else on the GPUs (``local``, ``dist_*``), a first
    GPU with room for the table alone failed there with MXNet's traceback, after the model was built. Now its room
    is tried where the table is copied, one line naming the cast. (No GPUs here: two fake ones of 1.5 tables.)"""
    import mxnet as mx

    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.train import initial_model

    held = gpu_of_bytes(monkeypatch, int(1.5 * 300_000 * 50 * 4), "at the next wait")
    featurizer = type("Featurizer", (), {"num_rows": 300_000})()
    with pytest.raises(FastTextError) as caught:
        initial_model(featurizer, 3, TrainConfig(optimizer="sgd", emsize=50, kvstore=kvstore), [mx.gpu(0), mx.gpu(1)])
    message = str(caught.value)
    assert message == ("out of memory for kv.init's row_sparse cast of the table on gpu(0): 300,000 rows x emsize 50 "
                       "= 0.1 GiB of float32 beside the embedding table's 0.1 GiB (cudaMalloc retry failed: out of "
                       "memory); lower emsize or buckets, or train on a device with more memory first in ctx"), message
    assert held_on(held, 0, 300_000) == [(300_000, 50)], held  # the table: nothing else went to the GPUs after it


@pytest.mark.parametrize("kvstore, optimizer, refused", [("local", "sgd", True), ("dist_sync", "sgd", False),
                                                         ("local", "adam", True), ("auto", "sgd", False)])
def test_kv_inits_row_sparse_cast_of_the_table_counts_against_the_hosts_memory_on_a_cpu(monkeypatch, tmp_path,
                                                                                       kvstore, optimizer, refused):
    """On a CPU the row_sparse cast kv.init is given is made in the host's memory, beside the table and, with a
    ``local`` kvstore, the store's copy made from it: three tables at setup, uncounted (a run with room for two
    passed the check and was killed at kv.init); a dist_* worker holds the table and the cast (kept until its first
    push). Adam's moments come after the cast is freed: the larger of the two counts. (The host here has room for
    two tables and a half.)"""
    import mxnet as mx

    from fasttext_lib.config import TrainConfig
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.train import initial_model

    machine_with_memory(monkeypatch, tmp_path, 150_000)  # the table is 58,594 KB
    config = TrainConfig(optimizer=optimizer, emsize=50, kvstore=kvstore)
    featurizer = type("Featurizer", (), {"num_rows": 300_000})()
    if not refused:
        initial_model(featurizer, 3, config, [mx.cpu()])
        return
    with pytest.raises(FastTextError) as caught:
        initial_model(featurizer, 3, config, [mx.cpu()])
    message = str(caught.value)
    beside = ("2 more of that size for adam's moments, 1 for the kvstore's copy of it (0.2 GiB in all)"
              if optimizer == "adam" else
              "1 more of that size for the kvstore's copy of it, 1 for kv.init's row_sparse cast of it (0.2 GiB in all)")
    assert message.startswith(f"out of memory for the embedding table: 300,000 rows x emsize 50 = 0.1 GiB of "
                              f"float32, and {beside}, more than the 0.1 GiB of memory available here"), message
