"""native_build: a build killed with SIGKILL leaves a temporary that the next build removes, never a live one's."""
import fcntl
import os
import signal
import subprocess
import sys
import time

from conftest import ROOT
from fasttext_lib import native_build, storage

SOURCE = 'extern "C" int answer() { return 42; }\n'
FLAGS = ["-shared", "-fPIC", "-O0"]
# A compiler that, while $HANG exists, writes half an output and waits (its pid in $STARTED) until killed.
FAKE_CXX = """#!/bin/sh
if [ -e "$HANG" ]; then
  for a; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
  printf partial > "$out"
  echo $$ > "$STARTED.part" && mv "$STARTED.part" "$STARTED"
  exec sleep 600
fi
exec g++ "$@"
"""


def setup(tmp_path, monkeypatch):
    """(cache dir, source, env) with a fake compiler that can hang mid-build."""
    cache = tmp_path / "cache"
    source = tmp_path / "answer.cc"
    source.write_text(SOURCE)
    cxx = tmp_path / "cxx"
    cxx.write_text(FAKE_CXX)
    cxx.chmod(0o755)
    env = {"FASTTEXT_LIB_CACHE": str(cache), "CXX": str(cxx), "HANG": str(tmp_path / "hang"),
           "STARTED": str(tmp_path / "started")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return cache, source


def library(name, source):
    return native_build.library_path(name, [str(source)], FLAGS)


def held(lock_path):
    """Whether some process holds ``lock_path``'s flock."""
    with open(lock_path) as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        return False


def wait_for(path, proc):
    while not os.path.exists(path):
        assert proc.poll() is None, "the builder died before compiling"
        time.sleep(0.05)


def test_a_build_killed_mid_compile_leaves_a_temporary_the_next_build_removes(tmp_path, monkeypatch):
    cache, source = setup(tmp_path, monkeypatch)
    target = library("answer", source)
    (tmp_path / "hang").touch()
    builder = subprocess.Popen([sys.executable, "-c", "import sys; from fasttext_lib import native_build; "
                                f"native_build.build('answer', [sys.argv[1]], {FLAGS!r})", str(source)], cwd=ROOT)
    try:
        wait_for(tmp_path / "started", builder)
    finally:
        builder.kill()
        assert builder.wait(timeout=60) == -signal.SIGKILL
    compiler_pid = int((tmp_path / "started").read_text())
    try:
        left = [n for n in os.listdir(cache) if n.endswith(".tmp")]
        assert len(left) == 1 and left[0].startswith(os.path.basename(target) + ".")
        # The orphaned compiler may still write its output: it inherited the lock, so no build takes it yet.
        assert held(target + ".lock")
    finally:
        os.kill(compiler_pid, signal.SIGKILL)
    while held(target + ".lock"):  # the kernel drops the lock once the compiler is reaped (by init)
        time.sleep(0.05)
    (tmp_path / "hang").unlink()
    assert native_build.build("answer", [str(source)], FLAGS) == target
    assert sorted(os.listdir(cache)) == sorted([os.path.basename(target), os.path.basename(target) + ".lock"])


def test_a_build_removes_its_librarys_dead_temporaries_but_not_a_live_builds_or_look_alikes(tmp_path, monkeypatch):
    cache, source = setup(tmp_path, monkeypatch)
    cache.mkdir()
    target, other = library("answer", source), library("other", source)
    mine = os.path.basename(target)
    stale = [f"{mine}.abcd1234.tmp", f"{mine}.x_9y_8z7.tmp"]  # builds of this library that were killed
    look_alikes = [f"{mine}.abcd1234.tmp.bak", f"{mine}.abcd123.tmp", f"{mine}.ABCD1234.tmp", f"x{mine}.abcd1234.tmp",
                   "tmpabcd1234.so", "notes.tmp"]
    for name in stale + look_alikes:
        (cache / name).write_bytes(b"partial")
    # Another library's build in progress: it holds that library's lock while its temporary exists.
    live_temp = cache / f"{os.path.basename(other)}.live0000.tmp"
    live = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time\n"
                             "lock = open(sys.argv[1], 'w'); fcntl.flock(lock, fcntl.LOCK_EX)\n"
                             "open(sys.argv[2], 'wb').write(b'partial'); print('building', flush=True); time.sleep(600)",
                             other + ".lock", str(live_temp)], stdout=subprocess.PIPE, text=True)
    try:
        assert live.stdout.readline() == "building\n"
        # A temporary of the old naming (tmpXXXXXXXX.so.tmp names no library, so no lock): kept within a day.
        legacy = cache / "tmpk3j_x9q2.so.tmp"
        legacy.write_bytes(b"partial")
        assert native_build.build("answer", [str(source)], FLAGS) == target
        assert sorted(os.listdir(cache)) == sorted([mine, mine + ".lock", os.path.basename(other) + ".lock",
                                                    live_temp.name, legacy.name] + look_alikes)
        assert live_temp.read_bytes() == b"partial"
    finally:
        live.kill()
        live.wait(timeout=60)
        live.stdout.close()
    # A day later the legacy one is a dead build's; the other library's, its builder now dead, goes with its build.
    later = time.time() + storage.OLD_TEMPORARY_GRACE_SECONDS + 60
    monkeypatch.setattr(storage.atomic, "time", type(sys)("fake_time"))  # the clock atomic.py reads, alone
    storage.atomic.time.time = lambda: later
    assert native_build.build("other", [str(source)], FLAGS) == other
    assert sorted(os.listdir(cache)) == sorted([mine, mine + ".lock", os.path.basename(other),
                                                os.path.basename(other) + ".lock"] + look_alikes)
