"""The download cache folder: its lock, the archives verified there (size and md5), and the partial download
(``<archive>.part``) an interrupted download is resumed from.

Only a verified archive ever carries its final name; a ``.part`` that is not a regular file of ours (a link, a FIFO)
is never written through, and a folder in either place is refused.
"""
import contextlib
import fcntl
import hashlib
import os
import stat
import sys

from .errors import FastTextError

_CHUNK = 1 << 20  # bytes hashed at a time


class CacheReadError(OSError):
    """An OSError reading a file of the download cache (``filename``: which one). It was said as every OSError there,
    "cannot write the download cache", though nothing was being written: an archive another user cached, which this
    one may not read (a shared cache folder, the other's umask). download says what could not be read."""


@contextlib.contextmanager
def reading(path):
    """Reads of ``path``, a file of the download cache: their OSError is a :class:`CacheReadError` naming it."""
    try:
        yield
    except OSError as exc:
        raise CacheReadError(exc.errno, exc.strerror or str(exc), path) from None


def md5_of(path):
    digest = hashlib.md5()
    with reading(path), open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(path, spec):
    # Size first: it is free and catches truncated files without hashing hundreds of MB.
    return os.path.getsize(path) == spec.size and md5_of(path) == spec.md5


def remove_if_there(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def fail_verification(part, url, what):
    # A wrong archive must not be resumed from or reused, so it goes before the error is raised.
    remove_if_there(part)
    raise FastTextError(f"download of {url} failed verification ({what}); the partial file was deleted, run again "
                        f"to retry")


def partial_size(part):
    """The bytes of the partial download ``part`` to resume from (0: none). Only a regular file is one of ours: a
    symbolic link (another user's, in a shared cache folder) was followed, the rest of the archive appended to its
    target outside the cache, and a FIFO hung the download (opening it waits for a reader). Such a thing is removed
    (a link's target stays as it was) and the download starts over; a folder there is refused."""
    try:
        found = os.lstat(part)
    except FileNotFoundError:
        return 0
    if stat.S_ISREG(found.st_mode):
        return found.st_size
    refuse_a_folder(part, "the partial download")
    os.remove(part)
    return 0


def refuse_a_folder(path, what):
    """Refuse a folder at ``path``, where ``what`` goes (someone's folder: not ours to delete). os.remove said only
    "cannot write the download cache ...: Is a directory", naming neither the folder nor what to do."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(found.st_mode):
        raise FastTextError(f"the download cache holds a folder {path} where {what} goes: move it away, or choose "
                            f"another cache folder")


def is_a_file(path):
    """A regular file, not a link to one (os.path.isfile follows links)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def cache_lock(cache_dir, progress):
    """Hold an exclusive lock on ``cache_dir`` while an archive is looked up, fetched and verified there. Two
    downloads into one cache at once both wrote the one ``.part`` (the second resumed the first's, both appended):
    the second failed in a traceback once the first had put the archive in place, or the mixed .part failed its md5.
    The lock is an flock on the directory itself (no lock file to leave behind; released when the process ends, however
    it ends); a file system without locks goes unlocked, as before."""
    fd = os.open(cache_dir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if progress:
                print(f"waiting for another download into {cache_dir} to finish", file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # (ENOLCK, EOPNOTSUPP: no locks there)
            pass
        yield
    finally:
        os.close(fd)
