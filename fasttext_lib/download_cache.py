"""The download cache folder: its lock, the archives verified there (size and md5), and the partial download
(``<archive>.part``) an interrupted download is resumed from.

Only a verified archive ever carries its final name; a ``.part`` that is not a regular file of ours (a link, a FIFO)
is never written through, and a folder in either place is refused.
"""
import contextlib
import hashlib
import os
import stat

from . import storage
from .errors import FastTextError

_CHUNK = 1 << 20  # bytes hashed at a time


class CacheReadError(OSError):
    """An OSError reading the download cache folder or a file in it (``filename``: which one). It was said as every
    OSError there, "cannot write the download cache", though nothing was being written: an archive another user
    cached, which this one may not read (a shared cache folder, the other's umask), a folder this user may write in
    but not read (its lock), a read failing after the file opened (EIO: a failing disk). download says what could not
    be read."""


@contextlib.contextmanager
def reading(path):
    """Reads of ``path``, a file of the download cache: their OSError is a :class:`CacheReadError` naming it."""
    try:
        yield
    except OSError as exc:
        raise CacheReadError(exc.errno, exc.strerror or str(exc), path) from None


def opened_to_read(path):
    """``path``, a file of the download cache, opened to read as a :class:`_CacheFile`: the open's errors and its
    reads' are :class:`CacheReadError`. (O_NOFOLLOW: a link put there since it was looked at is refused, not
    followed out of the cache.)"""
    with reading(path):
        return _CacheFile(path, os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb"))


class _CacheFile:
    """A file of the download cache open to read (opened_to_read): an OSError of a read is a CacheReadError naming it
    (raised after the open succeeded, it was "cannot write the download cache")."""

    def __init__(self, path, file):
        self._path, self._file = path, file

    def read(self, size=-1):
        with reading(self._path):
            return self._file.read(size)

    def seek(self, offset):
        return self._file.seek(offset)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._file.close()


def md5_of(path):
    digest = hashlib.md5()
    with reading(path), open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def why_not_verified(path, spec):
    """What makes the file ``path`` no verified archive of ``spec`` (None: nothing): its size, checked first (free, it
    catches a truncated file without hashing hundreds of MB), then its md5."""
    size = os.path.getsize(path)
    if size != spec.size:
        return f"{size} bytes, expected {spec.size}"
    md5 = md5_of(path)
    return None if md5 == spec.md5 else f"md5 {md5}, expected {spec.md5}"


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


# The bytes a partial download holds are asked for twice, differently: by fetch, where the download resumes (and what
# cannot be resumed from is removed first: bytes_to_resume_from), and by download_retry, to see what an attempt
# gained (only looked at, between attempts: bytes_held).
def bytes_to_resume_from(part, spec):
    """Where the download of ``spec`` resumes: the bytes of its partial download ``part`` (0: from the start), once
    what is none of ours is removed. Only a regular file is one of ours: a symbolic link (another user's, in a shared
    cache folder) was followed, the rest of the archive appended to its target outside the cache, and a FIFO hung the
    download (opening it waits for a reader). Such a thing is removed (a link's target stays as it was), and so is a
    .part longer than the archive (no start of it); a folder there is refused."""
    try:
        found = os.lstat(part)
    except FileNotFoundError:
        return 0
    if not stat.S_ISREG(found.st_mode):
        refuse_a_folder(part, "the partial download")
    elif found.st_size <= spec.size:
        return found.st_size
    remove_if_there(part)
    return 0


def bytes_held(part):
    """The bytes the partial download ``part`` holds (0: none, or no regular file), only looked at, before and after
    each attempt, for what it gained (download_retry): unlike :func:`bytes_to_resume_from`, nothing is removed (what
    is no .part of ours is fetch's to deal with, in its own steps)."""
    try:
        found = os.lstat(part)
    except OSError:
        return 0
    return found.st_size if stat.S_ISREG(found.st_mode) else 0


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


def refuse_a_file_as_the_cache(cache_dir):
    """Refuse a ``cache_dir`` that is a file or a loop of symbolic links, or lies under one: os.makedirs said only
    "File exists" or "Not a directory" (its OSError's text), naming neither the path nor that a folder goes there."""
    where = os.path.abspath(cache_dir)
    while not os.path.lexists(where):  # (the root exists: the loop ends)
        where = os.path.dirname(where)
    what = storage.LOOP if storage.is_a_loop(where) else "a file, not a folder" if os.path.isfile(where) else None
    if what is None:  # a folder (or a link to one), or what makedirs names itself (a link to nothing)
        return
    if where == os.path.abspath(cache_dir):
        raise FastTextError(f"the download cache {cache_dir} is {what}: choose another cache folder")
    raise FastTextError(f"cannot create the download cache {cache_dir}: {where} is {what}; choose another cache folder")


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
    with reading(cache_dir):  # (a folder this user may write in but not read: said so, not "cannot write")
        fd = os.open(cache_dir, os.O_RDONLY)
    try:
        storage.flock_saying_a_wait(fd, f"waiting for another download into {cache_dir} to finish" if progress else None)
        yield
    finally:
        os.close(fd)
