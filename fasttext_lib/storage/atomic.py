"""Writes that appear whole or not at all: a local file through an anonymous or named temporary renamed over its
target, an S3 object in one PUT (or a multipart upload completed last); the private staging directory that files
about to be published are written to first; a full TMPDIR as one error line. Killed writers' leftovers are removed
by the next write to the same place.
"""
import contextlib
import errno
import functools
import os
import re
import secrets
import shutil
import stat
import sys
import tempfile
import time

from ..errors import FastTextError, could_not_remove
from ..stops import (DefaultStopsHeld, later_stops_held, note_what_a_stop_came_after, note_what_a_stop_cleaned_up,
                     note_what_a_stop_could_not_remove, note_what_a_stop_left, note_written_undone)
from .s3 import (OVERWRITE_FLAG, AlreadyExists, _Transfer, _upload_new, already_exists, is_s3, replace_with,
                 rerun_to_replace, run_again_with, s3_client, s3_errors, split_s3, upload_file)
from .files import _NO_LOCKS as _NO_FILE_LOCKS, check_replaceable, directories_locked, why_not_written, write_target


# Atomic local writes. The data goes to an anonymous file (Linux's O_TMPFILE), which gets a name only
# once complete: linked as a hidden temporary and at once renamed over the target. A kill -9 mid-write
# therefore leaves nothing (the kernel frees the file with the process). Where the filesystem has no
# O_TMPFILE (some network and FUSE mounts, other systems) the temporary has its name from the start.
# Temporaries are named ``.<target>.fasttext-<pid>-<16 hex>.tmp`` and their writer holds an flock on
# them from the moment they have a name until the rename; the kernel drops it when the writer dies. A
# later write to the same target deletes the temporaries nobody holds that lock on: killed writers'
# leftovers, never a live writer's. (The pid in the name is for people: a pid cannot tell a dead writer
# from a live one in another container or on another host sharing the directory; the lock can.)
_TEMP_TAIL = re.compile(r"fasttext-[0-9]+-[0-9a-f]{16}\.tmp")
_NO_TMPFILE = {errno.EOPNOTSUPP, errno.ENOTSUP, errno.EISDIR, errno.EINVAL}  # kernels/filesystems without it
_NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL, errno.ENOSYS}


def _temporary_name(path):
    return f".{os.path.basename(path)}.fasttext-{os.getpid()}-{secrets.token_hex(8)}.tmp"


def is_temporary_of(name, path):
    """Whether ``name`` (a file name) is an atomic write's temporary for ``path``."""
    head = f".{os.path.basename(path)}."
    return name.startswith(head) and bool(_TEMP_TAIL.fullmatch(name[len(head):]))


# Older versions of this library (before the locked temporaries above) wrote through
# tempfile.mkstemp(prefix=".<target>.", suffix=".tmp"): ``.<target>.XXXXXXXX.tmp``, eight characters of
# mkstemp's alphabet, never locked. A try-lock proves nothing about them (it succeeds on a live old
# writer's file too), so only age can: every old writer streamed its output (vectors, data, the trial
# table, model.tar.gz) from the moment it created the temporary until the rename, so a live one's file
# keeps changing. One whose last change -- the later of mtime and ctime; ctime cannot be set back by
# touch/utime -- is more than a day old is a killed writer's: a day is far beyond any pause between two
# writes of those loops, and covers clock skew between a network filesystem's server and us. Its cost: a
# killed old writer's leftover stays up to a day. Only exact matches beside the target, regular files
# with one link, owned by us, are removed.
_OLD_TEMP_TAIL = re.compile(r"[a-z0-9_]{8}\.tmp")
OLD_TEMPORARY_GRACE_SECONDS = 24 * 3600


def is_old_temporary_of(name, path):
    """Whether ``name`` is an older library version's (unlocked, mkstemp-named) temporary for ``path``."""
    head = f".{os.path.basename(path)}."
    return name.startswith(head) and bool(_OLD_TEMP_TAIL.fullmatch(name[len(head):]))


def _unchanged_for_a_day(held):
    """Whether an unlocked temporary (``held``: its stat) is one no live writer can still be writing."""
    last_change = max(held.st_mtime, held.st_ctime)
    return (held.st_nlink == 1 and held.st_uid == os.geteuid()
            and time.time() - last_change > OLD_TEMPORARY_GRACE_SECONDS)


def remove_dead_temporary(temp, locked=True):
    """Delete the temporary file ``temp`` if its writer is gone. ``locked``: its writers flock it, so
    it is a dead one's when nobody holds that lock; else (files never locked) when unchanged for a day."""
    import fcntl

    try:  # read-write: where flock is emulated with POSIX locks (NFS) an exclusive lock needs it
        fd = os.open(temp, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # gone meanwhile, a symbolic link, or not ours to open: leave it
        return
    try:
        held = os.fstat(fd)
        if locked:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # refused while its writer lives
        if ((locked or _unchanged_for_a_day(held)) and stat.S_ISREG(held.st_mode)
                and os.path.samestat(held, os.stat(temp, follow_symlinks=False))):
            os.unlink(temp)  # still the file we opened (and hold locked): a dead writer's
    except OSError:  # a live writer's, renamed meanwhile, or a filesystem without locks: leave it
        pass
    finally:
        os.close(fd)


def remove_stale_temporaries(path):
    """Delete the temporaries of earlier writes to ``path`` whose writer is gone: ours that nobody holds
    the lock on, and older versions' unlocked ones unchanged for a day."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if is_temporary_of(name, path) or is_old_temporary_of(name, path):
            remove_dead_temporary(os.path.join(directory, name), locked=is_temporary_of(name, path))


def _lock(fd):
    """Hold an exclusive flock on ``fd``; False where the filesystem has no locks (nothing is then
    removed as stale there either: remove_stale_temporaries cannot lock such files)."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError as exc:
        return _lacking(exc, _NO_LOCKS)
    return True


def _lacking(exc, errnos):
    """False when ``exc`` is the file system lacking a feature (its errno in ``errnos``: the caller goes on without
    it, e.g. locks or hard links); any other error is raised again."""
    if exc.errno not in errnos:
        raise exc
    return False


def _open_temporary(path):
    """``(fd, temporary path)``, locked; the path is None for an anonymous (O_TMPFILE) file."""
    directory = os.path.dirname(path)
    if hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd"):
        try:
            fd = os.open(directory, os.O_TMPFILE | os.O_WRONLY, 0o666)  # the mode open() gives, after the umask
        except OSError as exc:
            if exc.errno not in _NO_TMPFILE:
                raise
        else:
            try:
                _lock(fd)  # before it has a name: once linked it is never mistaken for a leftover
            except BaseException:
                os.close(fd)
                raise
            return fd, None
    return _open_named_temporary(path)


def _open_named_temporary(path):
    """``(fd, temporary path)`` of a new file named as a temporary beside ``path``, locked (where the file system has
    locks): a cleanup never takes it for a dead writer's."""
    directory = os.path.dirname(path)
    while True:
        temp = os.path.join(directory, _temporary_name(path))
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            # Named before it is locked: a concurrent cleanup may take it for a leftover in that instant and
            # delete it. Then the name is gone (or another file's) once we hold the lock: start again.
            if not _lock(fd):
                return fd, temp
            if os.path.samestat(os.fstat(fd), os.stat(temp, follow_symlinks=False)):
                return fd, temp
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.remove(temp)
            raise
        os.close(fd)


def _name_anonymous(fd, path):
    """Give the complete anonymous file ``fd`` its temporary name beside ``path`` (still locked)."""
    directory = os.path.dirname(path)
    name = _temporary_name(path)
    dir_fd = os.open(directory, getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY)  # needs no read permission
    try:  # with a dir_fd, os.link is linkat(..., AT_SYMLINK_FOLLOW): the file /proc/self/fd/N stands for
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)
    finally:
        os.close(dir_fd)
    return os.path.join(directory, name)


def _link_new(fd, temp, path):
    """Give the complete file ``fd`` (named ``temp``, or anonymous: None) the name ``path`` only if nothing has it:
    True once linked, False where the filesystem cannot link; an existing ``path`` is "already exists"."""
    try:
        if temp is not None:
            os.link(temp, path, follow_symlinks=False)
        else:
            directory, name = os.path.split(path)
            dir_fd = os.open(directory, getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY)
            try:
                os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)
            finally:
                os.close(dir_fd)
    except FileExistsError:
        raise already_exists(path) from None
    except OSError as exc:
        return _lacking(exc, _NO_HARD_LINKS)
    return True


def _missing_directories(directory):
    """The directories ``os.makedirs(directory)`` would create, deepest first."""
    missing = []
    while directory and not os.path.lexists(directory) and directory != os.path.dirname(directory):
        missing.append(directory)
        directory = os.path.dirname(directory)
    return missing


def _remove_if_empty(directories):
    """Remove ``directories`` (deepest first) as long as they are empty: never a file another writer put there."""
    for directory in directories:
        try:
            os.rmdir(directory)
        except FileNotFoundError:
            continue
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:  # (never made: a name too long for it; its parents were)
                continue
            return


@contextlib.contextmanager
def atomic_local_file(path, mode="wb", overwrite=True, if_taken=None, on_placing=None, overwrite_as=OVERWRITE_FLAG):
    """Write ``path`` via a temporary that is renamed into place only on success (see above: a kill -9
    leaves nothing where the filesystem has O_TMPFILE, elsewhere a temporary the next write removes).
    ``overwrite=False``: an existing ``path`` is an error instead; the name is taken with a hard link, which
    never replaces a file (a check just before the rename only where the filesystem has no hard links).
    A symbolic link at ``path`` stays: the file it points to is replaced (:func:`write_target`); without
    ``overwrite`` the link is an existing ``path``. ``if_taken()``: without ``overwrite``, called (instead of the
    "already exists" error) where ``path`` is taken: it raises where what is there may not stay; else that stays as
    it is and this write's file is dropped (it holds the same bytes: :func:`.pairs.atomic_writes`).
    ``on_placing(path, new)``: called just before the rename or link that puts this write's file at ``path``, ``new``
    its ``os.stat_result``: a set's writer takes back what it finds at ``path`` to be that file (:func:`_holds`), so
    it misses no file it put in place whenever a stop lands, SIGTERM too (:func:`_kept_as_they_were`).
    ``overwrite_as``: how the "already exists" error tells the caller's user to replace (:func:`atomic_write`'s)."""
    check_replaceable(path)
    path = write_target(path) if overwrite else os.path.abspath(path)
    directory = os.path.dirname(path)
    created = _missing_directories(directory)
    try:
        os.makedirs(directory, exist_ok=True)
        remove_stale_temporaries(path)
        fd, temp = _open_temporary(path)
    except OSError as exc:
        _remove_if_empty(created)
        raise FastTextError(f"cannot write {path}: {why_not_written(directory, exc)}") from None
    linking = None  # (this write's file, once its link may have put it at path, without overwrite)
    try:
        with os.fdopen(fd, mode) as f, size_noted_on_efbig(f):
            yield f
            f.flush()
            # Before the rename: on NFS (EFS, SageMaker Studio's home) a quota or I/O error surfaces only
            # when the data is written back, at fsync or close; after the rename it would be the target's.
            os.fsync(f.fileno())
            if not overwrite:
                # A check, then a rename, let two writers that both found nothing both rename: the second replaced
                # the first's file (two autotune runs writing one trial table). A link never replaces: S3's
                # If-None-Match, locally. Where the filesystem has no hard links: the check just before the rename.
                try:
                    if on_placing is not None:
                        on_placing(path, os.fstat(f.fileno()))
                    linking = os.fstat(f.fileno())  # (a stop inside the link call may land after it took the name)
                    done = _link_new(f.fileno(), temp, path)
                    if not done and os.path.lexists(path):
                        raise already_exists(path, replace_with(overwrite_as))
                except AlreadyExists:
                    if if_taken is None:  # (what to do said as the caller's user does it)
                        raise already_exists(path, replace_with(overwrite_as)) from None
                    if_taken()  # raises where what is there may not stay: else it stays, and this write is done
                    done = True
                if done:  # linked, or the file there left as it is
                    if temp is not None:
                        os.remove(temp)
                        temp = None
                    return
            if temp is None:
                temp = _name_anonymous(f.fileno(), path)
            if on_placing is not None:
                on_placing(path, os.fstat(f.fileno()))
            os.replace(temp, path)  # while still locked: a cleanup never sees it unlocked
    except BaseException as exc:
        if temp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(temp)
        if linking is not None and _holds(path, linking):
            # linked, then stopped before this returned (its temporary's removal, the folder handle's close): the
            # caller never learnt it was written (save_bundle_with_trials' claim, which nothing then took back)
            with contextlib.suppress(OSError):
                os.remove(path)
        _remove_if_empty(created)  # a failed write (prepare's bad archive) left the folders made for it, empty
        if isinstance(exc, OSError) and exc.errno is not None:
            raise FastTextError(f"cannot write {path}: {exc.strerror}{why_too_large(exc)}") from None
        raise


@contextlib.contextmanager
def one_of_several_files(path, on_written, mode="wb"):
    """:func:`atomic_local_file` for one of the files a command writes one after the other (a training job's
    history.csv, metrics.json and history.png after its bundle): ``on_written(path)`` is called once it is in place, so
    that a later stop's line names it as written; a stop during its write says the write was cleaned up
    (stops.note_what_a_stop_cleaned_up), unless it came just after the rename that put the file in place (known by
    the file found there: atomic_local_file's ``on_placing``), which then is written too."""
    placing = []
    try:
        with atomic_local_file(path, mode, on_placing=lambda target, new: placing.append((target, new))) as f:
            yield f
    except KeyboardInterrupt as stop:
        if any(_holds(target, new) for target, new in placing):
            on_written(path)
        else:
            note_what_a_stop_cleaned_up(stop, path)
        raise
    on_written(path)


@contextlib.contextmanager
def size_noted_on_efbig(f):
    """An EFBIG raised in the block gets the size ``f`` had reached (``file_size``): a file-size limit stops a file
    exactly at it, while a file system's largest file is another size (see why_too_large). Measured here: the
    file closes (and its flush fails again, the first error as its context) before the error is reported."""
    try:
        yield
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            with contextlib.suppress(OSError, ValueError):
                exc.file_size = os.fstat(f.fileno()).st_size
        raise


def why_too_large(exc, elsewhere="write it to another file system"):
    """What a write that failed with EFBIG ran into: this process's file-size limit (``ulimit -f``), when the file
    reached it (or its size is unknown), else the file system's largest file (FAT32's 4 GiB): with a limit set, that
    was blamed on the limit too, and "raise it" did not help. ``elsewhere``: what to do about the second."""
    import resource

    if exc.errno != errno.EFBIG:
        return ""
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    size = next((e.file_size for e in (exc, exc.__context__) if hasattr(e, "file_size")), None)
    if limit != resource.RLIM_INFINITY and (size is None or size >= limit):
        return f" (larger than this process's file-size limit, ulimit -f, of {limit} bytes; raise it)"
    return f" (larger than the file system holds in one file: FAT32 takes 4 GiB at most; {elsewhere})"


# Files about to be published (a bundle's 800 MB of params, a checkpoint) are written to a private
# staging directory first. SIGTERM / SIGINT remove it on the way out; SIGKILL cannot, so every new
# staging directory first removes those whose process is gone (the pid is in the name).
STAGING_PREFIX = "fasttext_lib-staging-"


# What a write into a full TMPDIR raises (a quota's EDQUOT; EFBIG past a file-size limit).
NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


@contextlib.contextmanager
def staging_dir():
    """A private temporary directory, removed afterwards, and the leftovers of killed runs with it.

    A write into it that finds no room (a full TMPDIR) is one error line naming TMPDIR: the writes
    inside are to staged files only (the destination's own errors are FastTextErrors already)."""
    root = temporary_root()
    remove_dead_staging(root)
    try:
        path = tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-")
    except OSError as exc:
        raise FastTextError(f"cannot create a temporary directory in {temporary_root_named()}: "
                            f"{exc.strerror or exc}; set TMPDIR to a writable directory") from None
    try:
        with room_in_tmpdir():
            yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def room_in_tmpdir():
    """A write in the block that finds no room (a full TMPDIR) is one error line naming TMPDIR. For blocks
    whose writes go to temporary files only (a full destination is its own FastTextError already)."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in NO_ROOM:
            raise
        if exc.errno == errno.EFBIG:  # not the disk: "free space there" would not help
            raise FastTextError(f"cannot write a temporary file in {temporary_root_named()}: {exc.strerror}"
                                f"{why_too_large(exc, 'set TMPDIR to another file system')}") from None
        raise FastTextError(f"no room for temporary files in {temporary_root_named()} ({exc.strerror}); free space "
                            f"there or set TMPDIR to a directory with more room") from None


def temporary_root():
    """The directory temporary files go to: Python's choice, the first of $TMPDIR, /tmp, /var/tmp, /usr/tmp and the
    current directory it can write to. None of them writable (a container with read-only file systems, TMPDIR naming
    a folder that is not there) is one error line: it was a FileNotFoundError traceback ("No usable temporary
    directory found"), at the first temporary file, or in the message of the error about it."""
    try:
        return tempfile.gettempdir()
    except FileNotFoundError:
        given = os.environ.get("TMPDIR")
        tmpdir = f"TMPDIR is {given!r}" if given else "TMPDIR is unset"
        raise FastTextError(f"no directory for temporary files can be written ({tmpdir}; /tmp, /var/tmp, /usr/tmp and "
                            f"the current directory were tried); set TMPDIR to a writable directory with space") from None


def temporary_root_named():
    """The directory temporary files go to, as an error line names it; where Python passed over a TMPDIR that is not
    a writable directory (a typo, a folder not made yet), that one too: an error that said only "no room for
    temporary files in /tmp ...; set TMPDIR to a directory with more room" left the user wondering why theirs was
    not used."""
    root, given = temporary_root(), os.environ.get("TMPDIR")
    if given and os.path.abspath(given) != root:
        return f"{root} (TMPDIR {given} is not a writable directory, so Python uses {root} instead)"
    return root


def temporary_file():
    """An unlinked temporary file in TMPDIR (``w+b``); one error line if none can be made there."""
    temporary_root()
    try:
        return tempfile.TemporaryFile()
    except OSError as exc:
        raise FastTextError(f"cannot create a temporary file in {temporary_root_named()}: {exc.strerror or exc}; "
                            f"set TMPDIR to a writable directory") from None


def remove_dead_staging(root=None):
    """Delete the staging directories under ``root`` (the temp dir) whose process no longer exists."""
    try:
        root = root or tempfile.gettempdir()
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        pid = name[len(STAGING_PREFIX):].split("-", 1)[0] if name.startswith(STAGING_PREFIX) else ""
        if pid.isdigit() and int(pid) != os.getpid() and not _process_exists(int(pid)):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def _process_exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


@contextlib.contextmanager
def atomic_write(uri, mode="wb", overwrite=True, on_written=None, written=None, overwrite_as=OVERWRITE_FLAG,
                 on_unanswered=None):
    """Atomically write a local file or an S3 object (S3 PUTs are atomic: stage locally, then upload).

    ``overwrite=False``: never replace an existing ``uri`` (``FastTextError`` "already exists" instead).
    On S3 the upload is conditional (``If-None-Match: *``), so S3 itself refuses an existing key: this
    needs no s3:ListBucket (without it a HEAD cannot tell a missing object from a forbidden one) and no
    writer that raced us is replaced. Locally the name is taken with a hard link, which never replaces a file
    (:func:`atomic_local_file`).

    ``on_written()``: called once the file is in place, where its failure loses nothing (a command's summary line):
    after every step that can still be refused (a local rename or link: a destination another run created meanwhile
    without ``overwrite``, EBUSY; an S3 upload: an existing key under a conditional PUT, a denied PUT, a lost endpoint),
    so that a summary is never followed by an error line; locally the file it replaced is kept until it returns, and
    put back if it fails (stdout refusing the line, ``> /dev/full``: the user's old file stays).

    ``written``: a list an S3 write appends ``(bucket, key, S3's answer)`` to once the object is in place, so that a
    caller that takes it back deletes the version this write created (versions.delete_written; remove_file's
    ``written``), where a plain DELETE left it as a noncurrent version in a bucket that keeps versions.

    ``overwrite_as``: how a refusal tells the caller's user to replace (an existing ``uri`` without ``overwrite``, a
    new file a failed write could not remove): the command line's flag, or the caller's terms (``overwrite=True``:
    the Python API's, storage.OVERWRITE_ARGUMENT).

    A stop (Ctrl-C, SIGTERM) once the S3 upload has begun is told by what S3 was sent and answered
    (:func:`_tell_a_stopped_upload`): an object S3 answered for is written, which the stop's line says (or, with
    ``written``, it is appended there for the caller to take back); an upload whose request was never sent wrote
    nothing ("stopped and cleaned up"); one whose request S3 had and had not answered may still be applied after the
    line, which says it may still appear (:func:`_say_unanswered`), or ``on_unanswered(stop, sent)`` notes what the
    caller knows better (what the object is for), called for both of these: ``sent``, whether S3 had its request."""
    uri = str(uri)
    if not is_s3(uri):
        if on_written is None:
            with atomic_local_file(uri, mode, overwrite=overwrite, overwrite_as=overwrite_as) as f:
                yield f
        else:  # (the file it replaces kept until on_written has returned)
            with _local_writes([uri], mode, overwrite, on_written, overwrite_as=overwrite_as) as (f,):
                yield f
        return
    bucket, key = split_s3(uri)
    if not key or key.endswith("/"):
        raise FastTextError(f"S3 URI names no object: {uri}")
    transfer = _Transfer((bucket, key))  # what S3 was sent and answered, for a stop's line
    uploading, uploaded = False, []  # (uploaded: the upload's answer, once it has returned)
    try:
        with staging_dir() as tmpdir:
            staged = os.path.join(tmpdir, "object")
            with open(staged, mode) as f:
                yield f
            uploading = True
            with s3_errors(uri):
                uploaded.append(upload_file(s3_client(), staged, bucket, key, transfer=transfer) if overwrite else
                                _upload_new(s3_client(), staged, bucket, key, uri, overwrite_as=overwrite_as,
                                            transfer=transfer))
            if written is not None:  # (at once: a stop as the staging folder goes must still find it to take back)
                written.append((bucket, key, uploaded[0]))
        _call(on_written)
    except KeyboardInterrupt as stop:  # (a stop before the upload began left nothing: "stopped and cleaned up")
        if uploading:
            _tell_a_stopped_upload(stop, uri, transfer, uploaded, written, on_unanswered or functools.partial(
                _say_unanswered, uri, overwrite, overwrite_as))
        raise


def _tell_a_stopped_upload(stop, uri, transfer, uploaded, written, on_unanswered):
    """What a stop (Ctrl-C, SIGTERM) that came once atomic_write's upload to ``uri`` had begun left, told on ``stop``
    from what S3 was sent and answered (``transfer``; ``uploaded``: the upload's answer, once it returned). Where S3
    answered that it created the object, the object is there: the line says it was written (it said "stopped and
    cleaned up"), unless the caller takes it back (``written``, to which it is appended if the stop came first).
    Else ``on_unanswered(stop, sent)``: ``sent`` where S3 had the request (it may still apply it), not where the stop
    came before it went out (the transfer abandoned, it never will: nothing was written)."""
    if not uploaded and transfer.answer is None:
        on_unanswered(stop, transfer.creating)
    elif written is None:
        note_what_a_stop_came_after(stop, f"{uri} was written")
    elif not any(tuple(entry[:2]) == transfer.where for entry in written):
        written.append((*transfer.where, uploaded[0] if uploaded else transfer.answer))


def _say_unanswered(uri, overwrite, overwrite_as, stop, sent):
    """Note on ``stop`` that the upload to ``uri`` it cut short may still land where S3 had its request (``sent``:
    atomic_write's unanswered PUT), as a set's stopped create says it (pairs._take_back_after_a_stop): a replacing
    write's object may still be replaced; a create-only one's may still be created, which its rerun then refuses (what
    to do as ``overwrite_as`` says). Not sent, the upload wrote nothing, and never will: nothing to say."""
    if not sent:
        return
    if overwrite:
        note_what_a_stop_left(stop, f"{uri} may still be replaced by its upload, under way when this run stopped (S3 "
                                    f"had not answered it)")
    else:
        note_what_a_stop_left(stop, f"{uri} may still be created by its upload, under way when this run stopped: "
                                    f"delete it if it is there, or {run_again_with(overwrite_as)}")


# What link() answers where the filesystem cannot hard-link (rather than "the name exists").
_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV, errno.ENOSYS}


def _call(on_written):
    if on_written is not None:
        on_written()


@contextlib.contextmanager
def _local_writes(uris, mode, overwrite, on_written=None, if_taken=None, overwrite_as=OVERWRITE_FLAG):
    """Local files written together: each to its temporary, then put in place by renames, one after the other. A
    rename that fails (a file bind-mounted into a container: EBUSY) or a signal between two of them puts back what
    the earlier renames replaced (:func:`_kept_as_they_were`): the old files stay together. ``on_written()``: called
    once all are in place; where it fails (the summary line stdout refuses), they are put back too. Where they are not
    all in place at the end, the folders their writes created go too (when empty). ``if_taken(uri)``: without
    ``overwrite``, asked of a uri found taken as its file is put in place, under the folder's lock: it raises where
    what is there may not stay; else that stays as it is (:func:`atomic_local_file`). ``overwrite_as``: as
    :func:`atomic_write` takes it."""
    created = sorted({d for u in uris for d in _missing_directories(os.path.dirname(os.path.abspath(u)))},
                     key=len, reverse=True)  # deepest first
    try:
        with _written_and_placed(uris, mode, overwrite, on_written, if_taken, overwrite_as) as files:
            yield files
    except BaseException:
        _remove_if_empty(created)  # (a write's own failure removed them; a failed rename or on_written left them)
        raise


@contextlib.contextmanager
def _written_and_placed(uris, mode, overwrite, on_written, if_taken=None, overwrite_as=OVERWRITE_FLAG):
    """:func:`_local_writes`' files: written, then put in place (the older ones put back where that fails)."""
    # Each target this write's file is about to be put at, and that file (atomic_local_file's on_placing): recorded
    # before its rename, and taken back where found there. Recorded after it, in one step under stops.stops_held, a
    # SIGTERM (which that does not hold) just after the rename missed it: the new train split stayed beside the old
    # test split, and the old train split, kept aside, was deleted as no longer needed.
    placing = []
    with contextlib.ExitStack() as stack:  # closed last-in first-out: entered in reverse, put in place in order
        writers = [contextlib.ExitStack() for _ in uris]  # one each, so that each is put in place on its own
        files = [stack.enter_context(writer).enter_context(atomic_local_file(
                     uri, mode, overwrite=overwrite, if_taken=if_taken and functools.partial(if_taken, uri),
                     on_placing=lambda path, new: placing.append((path, new)), overwrite_as=overwrite_as))
                 for uri, writer in reversed(list(zip(uris, writers)))]
        yield files[::-1]
        # the files the renames replace: a symbolic link's target, not the link (atomic_local_file)
        targets = [write_target(u) if overwrite else os.path.abspath(u) for u in uris]
        # (without overwrite nothing is replaced: a file there stays, if_taken, or the write fails, "already exists")
        rerun = rerun_to_replace(overwrite, overwrite_as)  # (what a new file it could not take back is said with)
        with _renaming_alone(targets), _kept_as_they_were(targets if overwrite else (), placing,
                                                          rerun) as default_stops:
            default_stops.hold()  # (a kill at its default disposition waits while the set is mixed...)
            for writer in writers:
                writer.close()  # the rename
            default_stops.let_through()  # (...and only then: on_written is the caller's, and may wait)
            # Once every file is in place, the replaced ones still kept: stdout refusing the summary puts them back.
            # Called before the renames, a rename that failed after it (a destination another run created meanwhile,
            # without overwrite; EBUSY) printed the summary, then an error line.
            _call(on_written)


def _renaming_alone(paths):
    """An exclusive lock on the folders of ``paths`` while the block puts a set's files in place. Two runs writing
    one pair at once (two ``sample`` or ``prepare`` runs to one folder) interleaved their renames, A's train, B's
    train, B's test, A's test, and both succeeded, leaving B's training split beside A's test split, silently. Now
    the second waits, and the pair ends whole, the last run's; a reader (files.reading_together) waits too."""
    return directories_locked([os.path.dirname(p) for p in paths])


@contextlib.contextmanager
def _kept_as_they_were(replaced, placing, rerun):
    """The files at ``replaced`` (where there are any) kept while the block puts new ones in place, recording in
    ``placing`` each ``(path, stat of the file)`` it is about to put a file at; if the block fails, the replaced ones
    are put back where that file is found in place (:func:`_holds`; a new file where there was none is removed). Kept
    as hard links; where the file system has none (vfat, some FUSE and SMB mounts), or refuses one (another user's
    file, with fs.protected_hardlinks), as copies: without one, a failed rename "took back" a new file by deleting it,
    and the user's file it had replaced was lost. A file that cannot be kept fails the write before anything is
    replaced. What cannot be put back or removed is said in the failure's line (:func:`_say_left`), ``rerun`` as how
    to replace a new file left there.

    It yields a :class:`~fasttext_lib.stops.DefaultStopsHeld` for the block to hold through its renames; the put-back
    is held too, and a stop so held ends the process once the kept files are removed."""
    kept, put_back = {}, []
    locks = contextlib.ExitStack()
    default_stops = DefaultStopsHeld()
    with later_stops_held() as hold_every_stop:  # (a stop after the first one never cuts the put-back short)
        try:
            try:
                for path in replaced:
                    if os.path.isfile(path):
                        with contextlib.suppress(OSError):  # (unreadable: kept unlocked, as before)
                            _hold_locked(locks, path)  # before it is a temporary: another write's sweep never takes it
                        kept[path] = _keep(path, locks)
                yield default_stops
            except BaseException as exc:
                default_stops.hold()  # (the put-back and set-aside: the set is mixed until they are done)
                failure = exc
                try:
                    hold_every_stop()  # from here on no stop interrupts the put-back (nor the set-aside)...
                except KeyboardInterrupt as stop:  # ...but a first one that came just before: it is the failure now
                    failure = stop
                put_back.append(failure)
                _put_back(failure, kept, placing, rerun)
                raise failure
        except BaseException as escaped:
            # A first stop whose handler ran on the lines above before hold_every_stop (Python 3.8 runs one between
            # almost any two bytecodes) ended them before the put-back: the finally deleted the kept old files. Its
            # handler held every later stop (later_stops_held), so this put-back runs whole.
            if not put_back:
                default_stops.hold()
                _put_back(escaped, kept, placing, rerun)
            raise
        finally:
            for backup in kept.values():  # (each one still here is of a file no new one has replaced)
                with contextlib.suppress(OSError):
                    os.remove(backup)
            locks.close()
            default_stops.end()


def _put_back(failure, kept, placing, rerun):
    """After ``failure``, the files in ``kept`` (by their path) put back where this write's new file is found in place
    (``placing``), and the new ones where there was none removed; what could not be is said in the failure's line
    (:func:`_say_left`, with ``rerun``), an old file then set aside under a name no write sweeps away (taken out of
    ``kept``)."""
    not_removed, not_put_back = [], []
    to_take_back = [(path, new) for path, new in reversed(placing) if _holds(path, new)]
    try:
        for path, _ in to_take_back:
            try:
                if path in kept:
                    os.replace(kept[path], path)
                    del kept[path]
                else:
                    os.remove(path)
            except OSError as error:
                why = error.strerror or str(error)
                if path in kept:  # (not removed below: the user's file, under a name no write sweeps away)
                    not_put_back.append((path, why, _set_aside(kept.pop(path), path)))
                else:
                    not_removed.append((path, why))
    except BaseException:
        # Anything else amid the put-back (no stop does: they are held), the old files not put back yet would be
        # deleted with the kept ones, the new ones left in their place: they are set aside (not one it came just after
        # putting back: its new file is gone from there).
        not_put_back += [(path, "stopped before it was", _set_aside(kept.pop(path), path))
                         for path, new in to_take_back if path in kept and _holds(path, new)]
        _say_left(failure, not_removed, not_put_back, rerun)
        raise
    _say_left(failure, not_removed, not_put_back, rerun)
    if to_take_back and isinstance(failure, KeyboardInterrupt):  # (a stop just after the caller noted them written)
        note_written_undone()


def _holds(path, new):
    """Whether the file at ``path`` is the one ``new`` (an ``os.stat_result``) is of: put there by this write."""
    try:
        return os.path.samestat(os.stat(path, follow_symlinks=False), new)
    except OSError:  # (gone, or not ours to see: nothing of ours to take back there)
        return False


def _keep(path, locks):
    """The file at ``path`` kept beside it under a temporary's name (removed by the next write if we are killed): a
    hard link, else a copy, locked until ``locks`` closes. One error line where neither can be made."""
    backup = os.path.join(os.path.dirname(path), _temporary_name(path))
    try:
        os.link(path, backup)
        return backup
    except OSError:
        pass
    fd = None
    try:
        fd, backup = _open_named_temporary(path)
        with open(path, "rb") as old, open(fd, "wb", closefd=False) as copy:
            shutil.copyfileobj(old, copy, 1 << 20)
            copy.flush()
            with contextlib.suppress(OSError):  # put back, it has the old one's mode (vfat has no modes to set)
                os.fchmod(fd, stat.S_IMODE(os.fstat(old.fileno()).st_mode))
            os.fsync(fd)  # durable before a rename may put it back
    except BaseException as exc:  # (a Ctrl-C amid a long copy too: no half copy left)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.remove(backup)
        if not isinstance(exc, OSError):
            raise
        raise FastTextError(_not_copied_aside(path, exc)) from None
    finally:
        if fd is not None:
            locks.callback(os.close, fd)  # (its lock held until then)
    return backup


def _not_copied_aside(path, exc):
    """The line of a write whose old file at ``path`` could not be copied aside (``exc``): it said the copy failed, not
    why one was needed (no hard link to keep the file by) nor what to do; on a nearly full disk, free the copy's room,
    or take the old file out of the way (nothing to keep then), or write elsewhere."""
    room = ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        with contextlib.suppress(OSError):
            room = f"free {os.path.getsize(path)} bytes there (the copy's size), or "
    return (f"cannot write {path}: the file there is kept until the new one is in place, to be put back should the "
            f"write fail, and as it cannot be hard-linked here (a file system without hard links, or a link refused) "
            f"it is copied aside, which failed: {exc.strerror}{why_too_large(exc)}; {room}move or delete {path} first "
            f"(then nothing needs keeping), or write the output elsewhere")


def _set_aside(backup, path):
    """Where the kept file ``backup`` of ``path`` is left when it cannot be put back: renamed to ``<path>.old-<hex>``,
    a name no write sweeps away (where that rename fails too, where it is)."""
    aside = f"{path}.old-{secrets.token_hex(4)}"
    try:
        os.rename(backup, aside)
    except OSError:
        return backup
    return aside


def _say_left(exc, not_removed, not_put_back, rerun):
    """What a set's failed take-back left (new files it could not remove, each ``(path, why)``; old ones it could not
    put back, each ``(path, why, where it is kept)``) said in the failure's one line: a stop's (stops.stop_message),
    else the error's own message. Silent, the line read as if nothing had changed. ``rerun``: how the write's user
    replaces a new file left there (errors.could_not_remove)."""
    kept = "; ".join(f"{path} could not be put back as it was ({why}): the file it replaced is kept at {where}; move "
                     f"it back by hand" for path, why, where in not_put_back)
    # Noted of any failure, not only a stop's: a stop that replaces it on the way out (one held during its put-back and
    # handled after it) says it in its line too (stops.stop_message), and cli.main says a closed stdout's then.
    if not_removed:
        note_what_a_stop_could_not_remove(exc, not_removed, rerun)
    if kept:
        note_what_a_stop_left(exc, kept)
    if isinstance(exc, KeyboardInterrupt):
        return
    said = "; ".join(part for part in (not_removed and could_not_remove(not_removed, rerun), kept) if part)
    if not said:
        return
    if isinstance(exc, FastTextError):
        exc.args = (f"{exc}; {said}",)  # (its own class kept: callers tell errors apart by it)
    elif hasattr(exc, "add_note"):  # (a bug's traceback shows it; Python 3.11 on)
        exc.add_note(said)
    else:
        print(f"warning: {said}", file=sys.stderr)


def _hold_locked(stack, path):
    """Hold an flock on the file at ``path`` until ``stack`` closes. The file kept for a failed rename is named as a
    temporary (removed by the next write if we are killed); unlocked, another writer of it starting meanwhile (a
    second prepare run) took it for a dead writer's and deleted it, and the old file could not be put back. Where
    the file system has no locks it is kept unlocked, as before; so is a file another program holds an exclusive
    flock on (``flock data/train.csv -c '...'``): waiting for it, with the folder locked, could wait on a reader
    that waits on the folder (that program's own train run)."""
    import errno
    import fcntl

    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    stack.callback(os.close, fd)
    try:  # shared: remove_dead_temporary's exclusive try-lock is refused
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in _NO_FILE_LOCKS | {errno.EWOULDBLOCK, errno.EAGAIN}:
            raise
