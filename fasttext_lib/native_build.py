"""Compile a C++ source into a shared library once per machine, cached, for ctypes or MXNet to load.

Shared by the MXNet operators (bag_ops.py) and the featurizer (native_features.py). The library
lands in ``FASTTEXT_LIB_CACHE`` (default ``~/.cache/fasttext_lib``) under a name keyed by a hash
of the sources, the compiler, the flags and any extra key (e.g. the MXNet version), so a changed
source or flag builds a new library and an unchanged one is reused.

Concurrent builders (several workers starting at once) wait on a file lock; the library is compiled
to a temporary name and renamed into place, so no process ever loads a half-written file. A build
killed with SIGKILL leaves its temporary behind; the next build of that library removes it (see
:func:`_remove_dead_temporaries`).

``FASTTEXT_LIB_NATIVE=0`` turns every native library off (the pure-Python / generic MXNet routes,
which give the same results, are used instead).
"""
import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile

MASTER_SWITCH = "FASTTEXT_LIB_NATIVE"  # "0": never build or use native code of this library


def switch_is_off(name):
    return os.environ.get(name, "1").strip().lower() in ("0", "false", "no", "off")


def cache_dir():
    return os.environ.get("FASTTEXT_LIB_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "fasttext_lib")


def compiler():
    found = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not found:
        raise RuntimeError("no C++ compiler (g++) on PATH")
    return found


def library_path(name, sources, flags, key=""):
    cxx = compiler()
    digest = hashlib.sha256()
    for part in [key, cxx, " ".join(flags)]:
        digest.update(part.encode() + b"\0")
    for path in sources:
        with open(path, "rb") as f:
            digest.update(f.read())
    return os.path.join(cache_dir(), f"lib{name}-{digest.hexdigest()[:16]}.so")


# Temporaries are ``<library>.XXXXXXXX.tmp`` (mkstemp's eight characters), written only by a process
# holding ``<library>.lock``, for the whole compile: the compiler inherits the lock, so a builder
# killed mid-compile keeps it locked until its orphaned compiler exits too. Whoever holds the lock
# therefore knows every temporary of that library is a dead build's. Versions before this naming wrote
# ``tmpXXXXXXXX.so.tmp``, which names no library and so no lock: those go once unchanged for a day
# (storage.remove_dead_temporary; a compile writes its output within minutes).
_LEGACY_TEMP = re.compile(r"tmp[a-z0-9_]{8}\.so\.tmp")


def _remove_dead_temporaries(target):
    """Delete the temporaries killed builds of ``target`` left (call holding ``target``'s lock)."""
    from . import storage

    directory, library = os.path.split(target)
    ours = re.compile(re.escape(library) + r"\.[a-z0-9_]{8}\.tmp")
    for name in os.listdir(directory):
        if ours.fullmatch(name):
            try:
                os.remove(os.path.join(directory, name))
            except OSError:
                pass
        elif _LEGACY_TEMP.fullmatch(name):
            storage.remove_dead_temporary(os.path.join(directory, name), locked=False)


@contextlib.contextmanager
def _cache_written():
    """A cache that cannot be written (a read-only or missing HOME, a full disk) as a RuntimeError that says how to
    choose another (it said only "[Errno 30] Read-only file system: '/home/u/.cache'", and the run went on slower)."""
    try:
        yield
    except OSError as exc:
        raise RuntimeError(f"cannot write the build cache {cache_dir()} ({exc.strerror or exc}); set "
                           f"FASTTEXT_LIB_CACHE to a writable directory") from None


def build(name, sources, flags, headers=(), key=""):
    """Path of ``lib<name>-<hash>.so`` built as ``$CXX flags sources -o lib``, compiling it if needed.

    ``headers`` are hashed into the name but not passed to the compiler. Raises ``RuntimeError``
    with the compiler's message when the library cannot be built.
    """
    missing = [p for p in list(sources) + list(headers) if not os.path.isfile(p)]
    if missing:
        raise RuntimeError(f"missing source files: {', '.join(missing)}")
    cxx = compiler()
    target = library_path(name, list(sources) + list(headers), flags, key)
    if os.path.isfile(target):
        return target
    with _cache_written():
        os.makedirs(os.path.dirname(target), exist_ok=True)
        lock = open(target + ".lock", "w")
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _remove_dead_temporaries(target)
        if not os.path.isfile(target):  # another process may have built it while we waited
            with _cache_written():
                fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=os.path.basename(target) + ".",
                                           suffix=".tmp")
            os.close(fd)
            try:
                cmd = [cxx, *flags, *sources, "-o", tmp]
                done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      pass_fds=(lock.fileno(),))  # the lock lives as long as the compiler
                if done.returncode != 0:
                    raise RuntimeError(f"compiling {os.path.basename(sources[0])} failed: {done.stdout.strip()[-2000:]}")
                os.replace(tmp, target)
            finally:
                if os.path.exists(tmp):
                    os.remove(tmp)
    return target
