"""Plain files, local or ``s3://``: reading (S3 objects streamed by smart_open), existence, and the checks an output
file gets before any work (no directory, FIFO or device in its place; an existing one refused unless replaced on
purpose). Reading a train/test pair written together (pairs.py): :func:`reading_together` refuses two files of
different writes. Why a local file cannot be written, in words (a read-only or kernel file system, a full disk).
"""
import contextlib
import errno
import hashlib
import io
import os
import re
import stat
import sys
import threading

from ..errors import FastTextError
from .s3 import (CONDITIONAL_PART_BYTES, UPLOAD_PART_BYTES, _first_line, _is_missing, _status, already_exists, head_object,
                 is_forbidden, is_s3, s3_client, s3_errors, split_s3)


def expand_home(uri):
    """A local path that is ``~`` or starts with ``~/`` as the home folder's, as a shell and pandas' readers read it:
    ``~/data/train.csv`` given where no shell expanded it (quoted on the command line, a notebook's parameter, a Python
    argument) named a file in a folder called ``~``. ``~name`` stays a name in the current folder, whether or not a
    user ``name`` exists: quoted (``--output '~backup'``), it was written so that the shell would not read it as a
    user's home, and read so here it went to ``/var/backups`` where the system user ``backup`` exists. Nothing else of
    it changes (a relative path stays relative, and errors name it so); an S3 URI (``s3://...``, a ``~`` in its key
    included), ``-`` (standard input), None and a URI refused later (``S3://``: refused as the data, by its reader,
    after this) are returned as they are."""
    if isinstance(uri, (str, os.PathLike)) and (str(uri) == "~" or str(uri).startswith("~/")):
        return os.path.expanduser(str(uri))
    return uri


def same_location(a, b):
    """Whether two local paths or S3 URIs name the same file (symbolic and hard links followed)."""
    a, b = str(a), str(b)
    if is_s3(a) or is_s3(b):
        return is_s3(a) and is_s3(b) and split_s3(a) == split_s3(b)
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return False


def within(inner, outer):
    """Whether the local path or S3 URI ``inner`` is ``outer`` or lies under it (links followed)."""
    inner, outer = str(inner).rstrip("/"), str(outer).rstrip("/")
    if is_s3(inner) or is_s3(outer):
        if not (is_s3(inner) and is_s3(outer)):
            return False
        (b1, k1), (b2, k2) = split_s3(inner), split_s3(outer)
        return b1 == b2 and (not k2 or k1 == k2 or k1.startswith(k2 + "/"))
    if same_location(inner, outer):
        return True
    real_inner, real_outer = os.path.realpath(inner), os.path.realpath(outer)
    return real_inner.startswith(real_outer.rstrip(os.sep) + os.sep)


def exists(uri, forbidden_is_missing=False):
    """Whether a local path or S3 object exists. ``forbidden_is_missing``: for an optional file, a refused
    HEAD means absent: without s3:ListBucket, S3 answers 403 (not 404) for an object that does not exist."""
    if is_s3(uri):
        bucket, key = split_s3(uri)
        if not key:  # s3://bucket/ names no object (a HEAD of no key is botocore's "Invalid length for parameter Key")
            return False
        with s3_errors(uri):
            try:
                head_object(s3_client(), bucket, key)
                return True
            except Exception as exc:
                if _is_missing(exc) or (forbidden_is_missing and is_forbidden(exc)):
                    return False
                raise
    return os.path.exists(uri)


def modified_at(uri):
    """When ``uri`` (a local file or an S3 object) was last written, as an aware UTC datetime (the file's
    modification time, the object's Last-Modified); None where nothing is there or S3 will not say (403)."""
    import datetime

    if is_s3(uri):
        head = _head(uri)
        return head.get("LastModified") if head else None
    try:
        return datetime.datetime.fromtimestamp(os.stat(uri).st_mtime, datetime.timezone.utc)
    except OSError:
        return None


def local_kind(uri):
    """What the local path ``uri`` is, as an error line names it: "a file" (a regular one), "a directory", "a pipe",
    "a socket" or "a device" (a terminal, /dev/null); None for an S3 URI, or a path that cannot be looked at (missing,
    a name the system refuses: the read that follows says which)."""
    if is_s3(str(uri)):
        return None
    try:
        mode = os.stat(uri).st_mode
    except (OSError, ValueError):
        return None
    return ("a file" if stat.S_ISREG(mode) else "a directory" if stat.S_ISDIR(mode) else
            "a pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device")


def would_replace(uri):
    """Whether a write to ``uri`` would replace something: a file, a dangling link too, or an S3 object. On S3
    a refused HEAD cannot tell: without s3:ListBucket S3 answers 403 for a missing object too, so it counts as
    nothing there, and ``atomic_write(uri, overwrite=False)`` makes the check at the write itself (a
    conditional PUT)."""
    return exists(uri, forbidden_is_missing=True) if is_s3(uri) else os.path.lexists(uri)


def is_taken(uri):
    """Whether anything is at ``uri`` or under it: a file, a folder (a dangling link too), an S3 object or any object
    under ``uri/``: a name a new set must not be written to (bundle.save_bundle's free sibling). Where S3 refuses to
    say (no s3:ListBucket), nothing counts as there: the set's commit is conditional, and never replaces one."""
    if not is_s3(uri):
        return os.path.lexists(uri)
    if would_replace(uri):
        return True
    bucket, key = split_s3(uri)
    try:
        with s3_errors(uri):
            listed = s3_client().list_objects_v2(Bucket=bucket, Prefix=key.rstrip("/") + "/", MaxKeys=1)
    except FastTextError:
        return False  # (refused or failing: the publish that follows meets what is there, or says why it failed)
    return bool(listed.get("KeyCount") or listed.get("Contents"))


def refuse_existing(uri, hint="pass --overwrite to replace it"):
    """Fail fast if ``uri`` exists (a write that must not replace anything; :func:`would_replace`)."""
    if would_replace(uri):
        raise already_exists(uri, hint)


class Written(io.RawIOBase):
    """A binary file written through (to ``f``), its bytes counted and hashed as they pass: whether a file elsewhere
    holds them already is then told (:func:`holds`) without reading the new one back. ``s3``: also the ETags S3 gives
    these bytes (:meth:`etags`), so that an object can be told by a HEAD instead of a download."""

    # One PUT's or CopyObject's ETag is the MD5 of the bytes (unencrypted or SSE-S3); a multipart upload's is the MD5
    # of its parts' MD5s and their count, which depends on the part size: those of our uploads (s3.upload_file, and
    # s3._create_object's), the first also the AWS CLI's default.
    PART_SIZES = (UPLOAD_PART_BYTES, CONDITIONAL_PART_BYTES)

    def __init__(self, f, s3=False):
        super().__init__()
        self._f, self.size, self.sha256 = f, 0, hashlib.sha256()
        self._md5 = _md5() if s3 else None
        self._parts = [_PartMD5s(size) for size in self.PART_SIZES] if s3 else []
        self.seen = {}  # uri -> what identified the file there when it was found holding these bytes (_identity)

    def writable(self):
        return True

    def write(self, data):
        self._f.write(data)
        self.sha256.update(data)
        self.size += len(data)
        if self._md5 is not None:
            self._md5.update(data)
            for parts in self._parts:
                parts.update(data)
        return len(data)

    def etags(self):
        """The ETags S3 would give these bytes (without quotes): one PUT's, and multipart uploads' of PART_SIZES."""
        return ({self._md5.hexdigest()} if self._md5 is not None else set()) | {p.etag() for p in self._parts}


class _PartMD5s:
    """The MD5 of each ``size``-byte part of the bytes given to :meth:`update`, the last one shorter: what a multipart
    upload in parts of ``size`` makes its ETag of (:meth:`etag`)."""

    def __init__(self, size):
        self.size, self.done, self.current, self.filled = size, [], _md5(), 0

    def update(self, data):
        view = memoryview(data)
        while len(view):
            take = min(len(view), self.size - self.filled)
            self.current.update(view[:take])
            self.filled += take
            view = view[take:]
            if self.filled == self.size:
                self.done.append(self.current.digest())
                self.current, self.filled = _md5(), 0

    def etag(self):
        parts = self.done + ([self.current.digest()] if self.filled else [])
        return f"{_md5(b''.join(parts)).hexdigest()}-{len(parts)}"


# An ETag's checksum, not a security measure: Python 3.9+ is told so (usedforsecurity=False), which a FIPS build then
# allows; 3.8, the SageMaker MXNet 1.9 images' Python, has no such argument.
_NOT_FOR_SECURITY = {"usedforsecurity": False} if sys.version_info >= (3, 9) else {}


def _md5(data=b""):
    return hashlib.md5(data, **_NOT_FOR_SECURITY)


# What to do where an object that must not be replaced unless told to cannot be told the same as what a run writes
# (:func:`check_comparable`, :func:`holds`), unless the caller says it in its user's terms (download.prepare's)
CANNOT_TELL_HINT = "pass --overwrite to replace it, or grant that permission"


def holds(uri, written, hint=CANNOT_TELL_HINT):
    """Whether the file or S3 object at ``uri`` holds exactly the bytes of ``written`` (a :class:`Written`): a write
    that would put the same bytes there replaces nothing of the user's (``prepare`` run again). The size is compared
    first (a stat, a HEAD); a local file of that size is read and hashed; an S3 object is told by its ETag where that
    is an MD5 of its bytes (``Written(s3=True)``), and read only where it is not (SSE-KMS, parts of another size). A
    file found the same is remembered (``written.seen``): asked again, it is read again only if it changed meanwhile.
    No regular file there (a directory, a FIFO, a dangling link) holds nothing; a local file that may not be read
    counts as different; an S3 object that can be told neither by its ETag nor by reading it is an error, ending in
    ``hint`` (:func:`check_comparable` says so before any work)."""
    if is_s3(uri):
        return _object_holds(uri, written, hint)
    try:
        found = os.stat(uri)
        if not stat.S_ISREG(found.st_mode) or found.st_size != written.size:
            return False
        if written.seen.get(uri) == _identity(found):
            return True
        same = hash_file(uri)["sha256"] == written.sha256.hexdigest()
        if same and _identity(os.stat(uri)) == _identity(found):  # (not changed while it was read)
            written.seen[uri] = _identity(found)
        return same
    except (FileNotFoundError, PermissionError):  # a dangling link; (cannot be told the same, as on S3)
        return False
    except OSError as exc:
        raise cannot_read(uri, exc) from None


def _identity(found):
    """A local file's stat, as far as it changes when the file is replaced or written: a new file (an editor's save)
    has another inode; one written in place another size or modification time (nanoseconds, as the file system keeps
    them: ext4 to the kernel's clock tick, so a write of the same size within that tick of the comparison, or a
    modification time set back on purpose, goes unseen). Not the change time: the hard link that keeps a file while a
    pair is put in place (atomic._kept_as_they_were) changes it, and every file was read again."""
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns


def _head(uri):
    """HeadObject's answer for ``uri``, or None where there is nothing (or S3 will not say: 403)."""
    bucket, key = split_s3(uri)
    with s3_errors(uri):
        try:
            return head_object(s3_client(), bucket, key)
        except Exception as exc:
            if _is_missing(exc) or is_forbidden(exc):
                return None
            raise


def _etag_is_checksum(head):
    """Whether an object's ETag is made of MD5s of its bytes: unencrypted or SSE-S3 (SSE-KMS and SSE-C give other
    ETags, for one PUT and for a multipart upload alike)."""
    return head.get("ServerSideEncryption") in (None, "AES256") and not head.get("SSECustomerAlgorithm")


def _etag_is_md5(head):
    """Whether an object's ETag is the MD5 of its bytes: one PUT's or copy's (a multipart upload's has a dash and its
    part count), unencrypted or SSE-S3."""
    return re.fullmatch(r"[0-9a-f]{32}", bare_etag(head.get("ETag"))) is not None and _etag_is_checksum(head)


def _object_holds(uri, written, hint):
    head = _head(uri)
    if head is None or head.get("ContentLength") != written.size:
        return False
    etag = bare_etag(head.get("ETag"))
    if written.seen.get(uri) == etag or etag in written.etags():
        written.seen[uri] = etag
        return True
    if written.etags() and _etag_is_md5(head):
        return False  # (the MD5 of other bytes)
    from .s3 import get_s3_object

    digest = hashlib.sha256()
    with s3_errors(uri):
        try:
            answer = get_s3_object(*split_s3(uri), digest.update)
        except Exception as exc:
            if _is_missing(exc):
                return False
            if is_forbidden(exc):
                raise _cannot_tell(uri, exc, hint) from None
            raise
    if digest.hexdigest() != written.sha256.hexdigest():
        return False
    written.seen[uri] = bare_etag(answer.get("ETag"))
    return True


def _cannot_tell(uri, exc, hint):
    code = getattr(exc, "response", {}).get("Error", {}).get("Code", "403")
    return FastTextError(f"cannot tell whether {uri} holds what this run writes: S3 refuses to let it be read ({code}: "
                         f"s3:GetObject, or kms:Decrypt for an SSE-KMS object) and its ETag is no checksum of its "
                         f"bytes; {hint}")


def check_comparable(uri, hint=CANNOT_TELL_HINT):
    """Fail fast (before any work) where the S3 object at ``uri`` could be told the same as what a run writes neither
    by its ETag (no MD5 of its bytes, nor of parts of our sizes: :class:`Written`) nor by reading it (refused: no
    s3:GetObject, or no kms:Decrypt for SSE-KMS): :func:`holds` would fail only once the run's files are written. A
    local path, a missing object or one that can be told by its ETag passes without a read. The refusal ends in
    ``hint``: what to do, as the caller's user says it (the command line's flag by default)."""
    if not is_s3(uri):
        return
    head = _head(uri)
    if head is None or _etag_is_md5(head):
        return
    size, parts = head.get("ContentLength") or 0, re.fullmatch(r"[0-9a-f]{32}-(\d+)", bare_etag(head.get("ETag")))
    if (parts and _etag_is_checksum(head)
            and any(-(-size // part) == int(parts.group(1)) for part in Written.PART_SIZES)):
        return  # (a multipart upload of our part size, maybe: its ETag may tell)
    bucket, key = split_s3(uri)
    with s3_errors(uri):
        try:
            s3_client().get_object(Bucket=bucket, Key=key, Range="bytes=0-0")["Body"].close()
        except Exception as exc:
            if is_forbidden(exc):
                raise _cannot_tell(uri, exc, hint) from None


def hash_file(path):
    """``{"sha256": hex, "bytes": size}`` of the local file ``path``, read a MiB at a time."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return {"sha256": digest.hexdigest(), "bytes": size}


class _S3Stream(io.RawIOBase):
    """smart_open's streaming S3 reader, with its failures turned into one-line errors.

    smart_open wraps a refused GET in ``OSError`` (the botocore error as its cause) and gives up on a
    connection that keeps resetting with a plain ``OSError``: both become :class:`FastTextError`.
    """

    def __init__(self, stream, uri):
        self._stream, self._uri = stream, uri

    def readable(self):
        return True

    def readinto(self, buf):
        with _smart_open_errors(self._uri):
            data = self._stream.read(len(buf))
        buf[:len(data)] = data
        return len(data)

    def close(self):
        with contextlib.suppress(Exception):
            self._stream.close()
        super().close()


@contextlib.contextmanager
def _smart_open_errors(uri):
    with s3_errors(uri):
        try:
            yield
        except OSError as exc:
            cause = getattr(exc, "backend_error", None) or exc.__cause__
            if _status(cause) == 412:  # open_read pins its GETs to the ETag it checked (If-Match)
                raise FastTextError(f"{uri} was replaced while it was read; read it again") from None
            if cause is not None and cause is not exc:
                raise cause from None  # the botocore error: s3_errors names it
            raise FastTextError(f"S3 read of {uri} failed: {_read_failure(exc)}") from None


def _read_failure(exc):
    """What smart_open says when a read keeps breaking off, without its reader's repr:
    ``smart_open.s3._SeekableReader('bucket', 'key'): failed to read 131072 bytes after 5 attempts``."""
    text = _first_line(exc)
    match = re.search(r"failed to read \d+ bytes after (\d+) attempts", text)
    if match:
        return f"the connection broke off mid-read, and {match.group(1)} attempts to go on from there failed too"
    return text


def check_name_lengths(path, uri=None):
    """A local ``path`` (``uri``: as the user gave it, for the message) that could not be created for the length of a
    name in it, refused in one line before any work: a name still to be created longer than its file system takes
    (NAME_MAX: 255 bytes on most), or the whole path longer than PATH_MAX. ``train --output`` or ``--checkpoint-dir``
    of such a name trained every epoch, then failed in a traceback (ENAMETOOLONG), leaving the folders it had made.
    Names that exist already passed their file system's check."""
    path = os.path.abspath(path)
    existing = path
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):  # (not ours to say: the callers name a file in the way)
        return
    name_max, path_max = (_path_limit(existing, name, default) for name, default in
                          (("PC_NAME_MAX", 255), ("PC_PATH_MAX", 4096)))
    for name in os.path.relpath(path, existing).split(os.sep) if path != existing else ():
        if len(os.fsencode(name)) > name_max:
            raise FastTextError(f"cannot write {uri or path}: the name {name[:24]}... is {len(os.fsencode(name))} "
                                f"bytes long, and the file system there takes at most {name_max}; give a shorter one")
    if len(os.fsencode(path)) >= path_max:
        raise FastTextError(f"cannot write {uri or path}: the path is {len(os.fsencode(path))} bytes long, and this "
                            f"system takes paths of at most {path_max - 1}; give a shorter one")


def _path_limit(directory, name, default):
    """``os.pathconf(directory, name)``, or ``default`` where the system does not say."""
    try:
        return os.pathconf(directory, name) or default
    except (OSError, ValueError):
        return default


# ELOOP, as every error names it (the kernel's "Too many levels of symbolic links" reads as a limit reached, not as a
# link that points back at itself)
LOOP = "a loop of symbolic links"


def missing_file(uri, flag=""):
    """The error for a local input ``uri`` that is not there (``flag``: the option that named it): a loop of symbolic
    links is named so, as a model path's is (sets.read_manifest); "no such file" of a name that is there had the user
    look for a typo."""
    lead = f"{flag}: " if flag else ""
    if is_a_loop(uri):
        return FastTextError(f"{lead}cannot read {uri}: {LOOP}")
    return FastTextError(f"{lead}no such file: {uri}")


def check_local_input(uri, flag=""):
    """A local input file ``uri`` that is a folder, or not there (:func:`missing_file`), refused in one line before
    it is opened (``flag``: the option that named it, said first, as the CLI names --train's)."""
    lead = f"{flag}: " if flag else ""
    if os.path.isdir(uri):
        raise FastTextError(f"{lead}expected a file but got a directory: {uri}")
    if not os.path.exists(uri):
        raise missing_file(uri, flag)


def cannot_read(uri, exc):
    """The error for ``exc``, an OSError reading the local ``uri``: the kernel's reason, a loop named as
    :func:`missing_file` names it."""
    return FastTextError(f"cannot read {uri}: {LOOP if exc.errno == errno.ELOOP else exc.strerror or exc}")


def is_a_loop(path):
    """Does resolving ``path`` run into a loop of symbolic links (ELOOP)?"""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def open_read(uri, mode="rb"):
    """Open a local file or S3 object for streaming reads, with one-line errors for what is missing.

    S3 objects stream through smart_open (bucket and key handed over as they are, so ``#`` and ``?``
    stay in the key); a HEAD first names a missing bucket or object, or a refusal, in one line.
    """
    uri = str(uri)
    if mode not in ("rb", "r"):
        raise ValueError(f"open_read mode must be 'rb' or 'r', not {mode!r}")
    if is_s3(uri):
        import smart_open.s3

        bucket, key = split_s3(uri)
        if not key or key.endswith("/"):
            raise FastTextError(f"S3 URI names no object: {uri}")
        client = s3_client()
        with s3_errors(uri):
            head = client.head_object(Bucket=bucket, Key=key)
        check_set_member(client, bucket, key, head)
        pinned = {"S3.Client.get_object": {"IfMatch": head["ETag"]}} if head.get("ETag") else None
        with _smart_open_errors(uri):
            stream = smart_open.s3.open(bucket, key, "rb", client=client, client_kwargs=pinned)
        raw = io.BufferedReader(_S3Stream(stream, uri), 1 << 20)
        return raw if mode == "rb" else io.TextIOWrapper(raw, encoding="utf-8")
    check_local_input(uri)
    with _READ_SCOPES_LOCK:
        scopes = list(_READ_SCOPES)
    path = os.path.realpath(uri)
    # (in a reading_together block: opened once a pair's renames in progress in its folder are done)
    with directories_locked([os.path.dirname(path)], shared=True) if scopes else contextlib.nullcontext():
        try:
            f = open(uri, mode)
        except OSError as exc:
            raise cannot_read(uri, exc) from None
        try:
            _check_local_partners(uri, path, f, scopes)
        except BaseException:
            f.close()
            raise
    return f


def _check_local_partners(uri, path, f, scopes):
    """Inside :func:`reading_together`: refuse ``uri`` (opened as ``f``; ``path``, its real path) if a file this run
    read before from its folder has been replaced since. Locally a pair carries no set metadata, but it is written
    to one folder, its files put in place under that folder's lock (pairs.py): a run that read train.csv, then
    opened test.csv after another run (sample, synthetic, prepare) wrote the pair again, trained on the old
    training split and validated on the new test split, silently. Only regular files are weighed (``<(zcat
    train.gz)`` is /dev/fd/63, really /proc/PID/fd/pipe:[N], which cannot be stat'ed), and a file removed since it
    was read was not replaced (a writer's rename never leaves a pair's member missing)."""
    held = os.fstat(f.fileno())
    if not stat.S_ISREG(held.st_mode):
        return
    here = os.path.dirname(path)
    for scope in scopes:
        for other, (uri_read, identity) in scope.local.items():
            if other != path and os.path.dirname(other) == here and _identity_at(other) not in (identity, None):
                raise FastTextError(f"{uri_read} was written again while this run read it, before {uri} beside it was "
                                    f"opened (files of one folder, as a train/test pair written together): this run "
                                    f"would read them from two writes; run it again")
        scope.local[path] = (uri, (held.st_dev, held.st_ino))


def _identity_at(path):
    try:
        held = os.stat(path)
    except OSError:
        return None
    return held.st_dev, held.st_ino


_NO_LOCKS = {errno.EBADF, errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL, errno.ENOSYS}


@contextlib.contextmanager
def directories_locked(directories, shared=False):
    """Hold an flock on each of ``directories`` (in one order: two holders never wait on each other), exclusive
    or ``shared``. A pair's writer (pairs.py) holds its folder's exclusively while it puts the files in place, and
    a reader of files written together (:func:`reading_together`) shared while it opens one: it never opens one
    file between the renames of two. The lock is the directory's own (nothing is created beside the files) and the
    kernel drops it when its holder dies; where a file system has no locks on directories (some NFS mounts), or the
    directory cannot be opened, none is held; nor where another program holds it past LOCK_WAIT_SECONDS. Each
    directory is locked once and in the order of its identity, not its name: one folder named two ways (through a
    symbolic link, and by its real path: files.write_target) was locked twice, and a process's second flock of one
    directory waits on its first forever."""
    import fcntl

    with contextlib.ExitStack() as stack:
        opened = {}
        for directory in set(directories):
            try:
                fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                continue
            stack.callback(os.close, fd)
            held = os.fstat(fd)
            opened.setdefault((held.st_dev, held.st_ino), (fd, directory))
        for _, (fd, directory) in sorted(opened.items()):
            _flock_a_while(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX, directory)
        yield


def flock_saying_a_wait(fd, waiting):
    """Hold an exclusive flock on ``fd``, waited for as long as another process holds it (the kernel lets go of a
    killed one's), ``waiting`` (a line; None: nothing) said on stderr first where it must be waited for: a wait of
    minutes without a word looked like a hang. None is held where the file system has no locks (ENOLCK, EOPNOTSUPP).
    Released with ``fd``."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        if waiting:
            print(waiting, file=sys.stderr, flush=True)
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:  # (no locks there)
        pass


# How long a folder's lock is waited for. A pair's writer holds it while it puts its files in place (renames, and the
# fsync of each file just before), a reader while it opens one: seconds at most. Another program may hold it for
# hours: ``flock data -c 'python -m fasttext_lib train ...'`` (flock(1) on the data folder, one job at a time), whose
# train then waited forever on its own job's lock. Past this, the run goes on without the lock (as before there was
# one), with a warning.
LOCK_WAIT_SECONDS = 30
_WARNED_LOCKED = set()


def _flock_a_while(fd, how, directory):
    import fcntl
    import time

    deadline, pause = time.monotonic() + LOCK_WAIT_SECONDS, 0.005
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno in _NO_LOCKS:
                return
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
        if time.monotonic() >= deadline:
            if directory not in _WARNED_LOCKED:
                _WARNED_LOCKED.add(directory)
                print(f"warning: {directory} stayed locked by another program (flock) for {LOCK_WAIT_SECONDS:g} s; "
                      f"going on without waiting for it", file=sys.stderr)
            return
        time.sleep(pause)
        pause = min(2 * pause, 0.1)


# Reads that belong together (reading_together: a training run reading its train and validation files): the set
# members read in each, (bucket, key) -> set id as its metadata said when it was opened (None: it had none).
_READ_SCOPES = []
_READ_SCOPES_LOCK = threading.Lock()


class _ReadScope:
    """What one :func:`reading_together` block has read: ``s3`` {(bucket, key): (set id, members)}, ``local``
    {real path: (path as given, (st_dev, st_ino) when opened)}."""

    def __init__(self):
        self.s3, self.local = {}, {}


@contextlib.contextmanager
def reading_together():
    """Within the block, S3 objects written as one set (:func:`.pairs.atomic_writes`) must all be read from the same
    write: a train split read, then a test split that a new write replaced meanwhile, is refused. Locally, a file
    opened after another of its folder was replaced since this block read it is refused too."""
    scope = _ReadScope()
    with _READ_SCOPES_LOCK:
        _READ_SCOPES.append(scope)
    try:
        yield
    finally:
        with _READ_SCOPES_LOCK:
            _READ_SCOPES.remove(scope)


def _not_together(uri, other, why):
    return FastTextError(f"{uri} and s3://{other[0]}/{other[1]} were written together, but {why}: write them again "
                         f"together (run the command that wrote them again), or, to read them as they are, drop the "
                         f"set's metadata from this one: aws s3 cp {uri} {uri} --metadata-directive REPLACE")


_WARNED = set()  # (uri, partner) pairs already warned about in this process: one line, not one per read


def _member_view(bucket, key, metadata):
    """``(set id, members)`` of the object at ``bucket/key`` as a member *there*: a copy of a member made elsewhere
    by other means (``aws s3 cp`` keeps the metadata, naming the keys it was written to) is a file on its own."""
    set_id, members = _set_of(metadata)
    if members and (bucket, key) not in members:
        return None, frozenset()
    return set_id, members


def check_set_member(client, bucket, key, head):
    """Refuse to read ``bucket/key`` (``head``: its HeadObject answer) if it was written as a member of a set
    (:func:`.pairs.atomic_writes`: a train and a test split) that one of our writes left mixed: another member there is
    now of another write of that set (a write failed between its copies, or two ran at once), or still holds what it
    held when the write began (:data:`SET_BEFORE_META`), or is older than this one and not of its write (the write
    that put this one in place never reached it: Last-Modified, whole seconds, for sets recorded without ETags and
    partners put there in an earlier second); or, inside
    :func:`reading_together`, another member was read from another write before.

    A partner replaced *after* this write by a file of other origin (the user's own upload of a test split, or a
    copy of a member of another set) is the user's doing, not a half-written set: it is read, with a warning."""
    uri, me = f"s3://{bucket}/{key}", (bucket, key)
    set_id, members = _member_view(bucket, key, head.get("Metadata"))
    for other in sorted(members - {me}):
        try:
            theirs = client.head_object(Bucket=other[0], Key=other[1])
        except Exception:  # missing (403 without s3:ListBucket), or not ours to see: no partner to mismatch
            continue
        other_id, other_members = _member_view(*other, theirs.get("Metadata"))
        if other_id == set_id:
            continue
        if other_id is not None and me in other_members:  # ours, with this one at its key: another write of the set
            raise _not_together(uri, other, "that one is now of another write of them")
        before = _before_of(head.get("Metadata")).get(other)
        if before and bare_etag(theirs.get("ETag")) == before:
            raise _not_together(uri, other, "that one is still the file this write replaced, which it never reached")
        mine_at, theirs_at = head.get("LastModified"), theirs.get("LastModified")
        if mine_at is not None and theirs_at is not None and theirs_at < mine_at:
            raise _not_together(uri, other, "that one is older than this one: the write of both never reached it")
        if (uri, other) not in _WARNED:
            _WARNED.add((uri, other))
            print(f"warning: s3://{other[0]}/{other[1]} was replaced by another file after {uri} was written with it: "
                  f"reading them as they are", file=sys.stderr)
    with _READ_SCOPES_LOCK:
        for scope in _READ_SCOPES:
            for other, (other_id, other_members) in scope.s3.items():
                if (other != me and set_id is not None and other_id is not None and other_id != set_id
                        and (other in members or me in other_members)):
                    raise FastTextError(f"{uri} was written together with s3://{other[0]}/{other[1]}, which this "
                                        f"run read from another write of them (they were written again while it "
                                        f"ran): run it again")
            scope.s3[me] = (set_id, members)


def remove_file(uri, written=None):
    """Delete a file or S3 object this run wrote (a missing one is no error). One that cannot be deleted is a
    :class:`FastTextError` (``cannot remove URI: reason``): the caller says it along with what made it remove the file
    (it failed silently, and a trial table of a bundle never saved stayed, unsaid: autotune.save_bundle_with_trials).
    ``written``: what atomic_write's ``written`` recorded of the S3 write that created it: the object is deleted by
    the version that write created (versions.delete_written), where a plain DELETE only hid it behind a delete marker
    in a bucket that keeps versions, a noncurrent version billed for good."""
    if is_s3(uri):
        if written:
            from .versions import delete_written

            for _, _, reason in delete_written(s3_client(), written)[:1]:
                raise _cannot_remove(uri, reason)
            return
        bucket, key = split_s3(uri)
        with s3_errors(uri):
            s3_client().delete_object(Bucket=bucket, Key=key)
        return
    try:
        os.remove(uri)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise _cannot_remove(uri, exc.strerror or exc) from None


def _cannot_remove(uri, reason):
    """:func:`remove_file`'s error, its ``reason`` kept as such too: a caller that names the file in its own words (a
    stop's line, errors.could_not_remove) says why without "cannot remove URI" again."""
    error = FastTextError(f"cannot remove {uri}: {reason}")
    error.reason = str(reason)
    return error


def read_bytes(uri):
    with open_read(uri, "rb") as f:
        return f.read()


def write_target(path):
    """Where a write that replaces the local ``path`` lands: the file a symbolic link at ``path`` points to (through
    a chain of links; a dangling link's target too), as the shell's ``>`` and most tools write; else ``path``
    itself (absolute). An atomic write renames its temporary over this: renamed over the link, it replaced the
    user's link with a regular file and left the file it pointed to as it was."""
    path = os.path.abspath(path)
    if not os.path.islink(path):
        return path
    target = os.path.realpath(path)
    if os.path.islink(target):  # realpath stops at a loop
        raise FastTextError(f"cannot write {path}: {LOOP}")
    return target


def check_replaceable(path):
    """An existing ``path`` must be a regular file (or a link to one, or a dangling link: :func:`write_target`) for
    an atomic write to replace it: the rename would put a regular file in place of a device, FIFO or socket (as
    root: ``--output /dev/null --overwrite`` replaced the device node itself). A directory is refused here too,
    before anything is written: its rename failed only at the end, after a pair's first member had replaced the
    user's file (``sample --overwrite`` beside a ``test.csv/`` folder, as Spark writes them)."""
    target = write_target(path)
    if os.path.isdir(target):
        raise FastTextError(f"cannot write {path}: it is a directory")
    if os.path.lexists(target) and not os.path.isfile(target):
        raise FastTextError(f"cannot write {path}: it exists and is not a regular file")


# The metadata of S3 objects written together (pairs.atomic_writes; how, in the comment at the top of pairs.py).
SET_ID_META, SET_MEMBERS_META = "fasttext-set", "fasttext-members"
# The ETag each member's key held when the set's write began, in the members' order ("-": none, "?": not known):
# a partner still holding it was never reached by the write. S3's Last-Modified counts whole seconds, so an old
# partner put there in the write's second was taken for a file put there after it.
SET_BEFORE_META = "fasttext-before"
_SET_MEMBERS_MAX = 1800  # user metadata is limited to 2 KB: a set naming longer keys is recorded by its id alone


def _set_of(metadata):
    """``(set id, frozenset of (bucket, key))`` from an object's metadata; ``(None, frozenset())`` for none."""
    from urllib.parse import unquote

    metadata = metadata or {}
    names = metadata.get(SET_MEMBERS_META, "")
    members = frozenset(tuple(unquote(n).split("/", 1)) for n in names.split(",") if "/" in unquote(n))
    return metadata.get(SET_ID_META), members


def _before_of(metadata):
    """``{(bucket, key): ETag}`` of what each member's key held when the set's write began (:data:`SET_BEFORE_META`),
    where that was known; ``""`` for a key that held nothing."""
    from urllib.parse import unquote

    metadata = metadata or {}
    names = [tuple(unquote(n).split("/", 1)) for n in metadata.get(SET_MEMBERS_META, "").split(",")]
    etags = metadata.get(SET_BEFORE_META, "").split(",")
    if len(names) != len(etags):  # (none recorded, or not by us)
        return {}
    return {name: ("" if etag == "-" else etag) for name, etag in zip(names, etags) if len(name) == 2 and etag != "?"}


def bare_etag(etag):
    """An ETag without its quotes (metadata holds no quotes)."""
    return (etag or "").strip('"')


# The kernel's own file systems: views of processes, devices and settings, never a place for data. Creating a
# file in /proc fails with ENOENT ("No such file or directory", of a directory that exists), in /sys with EACCES
# even as root: what the user was told, "cannot write to /proc: No such file or directory".
KERNEL_FILE_SYSTEMS = {"proc", "sysfs", "cgroup", "cgroup2", "debugfs", "tracefs", "securityfs", "pstore", "bpf",
                       "configfs", "fusectl", "mqueue", "binfmt_misc", "efivarfs", "selinuxfs", "nsfs", "devpts"}


def _why_no_file(where, exc, mounted=None):
    """Why no file could be created in the existing directory ``where`` (``exc``: the OSError of the attempt),
    in words: the kernel's message alone (ENOENT for a folder that exists) said nothing useful. ``mounted``:
    :func:`_file_system_of` ``where``, if the caller has it already."""
    mounted = mounted or _file_system_of(where)
    fstype, read_only = mounted if mounted else (None, False)
    if fstype in KERNEL_FILE_SYSTEMS:
        return (f"{where} is on the kernel's {fstype} file system, where no file can be created ({exc.strerror or exc}); "
                f"choose a folder on a disk")
    if exc.errno == errno.EROFS or read_only:
        return f"{where} is on a file system mounted read-only ({exc.strerror or exc}); choose another location"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"{where} does not let this user create files in it ({exc.strerror or exc})"
    if exc.errno == errno.ENOENT:
        return f"{where} does not accept new files ({exc.strerror or exc}, of a folder that exists)"
    return f"{where}: {exc.strerror or exc}"


def why_not_written(directory, exc):
    """What to say of ``exc``, an OSError of a write into the local ``directory`` (which may not exist yet):
    :func:`_why_no_file` of its nearest existing folder when that is on the kernel's file systems or mounted
    read-only (ENOENT in /proc said "No such file or directory"); else the kernel's message."""
    where = os.path.abspath(str(directory))
    while not os.path.isdir(where) and os.path.dirname(where) != where:
        where = os.path.dirname(where)
    mounted = _file_system_of(where)
    if exc.errno is not None and mounted and (mounted[0] in KERNEL_FILE_SYSTEMS or mounted[1] or exc.errno == errno.EROFS):
        return _why_no_file(where, exc, mounted)
    return exc.strerror or str(exc)


def _file_system_of(path):
    """``(type, read-only)`` of the file system mounted where ``path`` is (Linux: /proc/self/mountinfo), else None."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    path, best = os.path.realpath(path), None
    for line in lines:
        fields = line.split()
        if "-" not in fields[6:]:
            continue
        dash = fields.index("-", 6)
        if len(fields) < dash + 2:
            continue
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])  # \040: a space
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best[0])):  # the last of equal mount points is on top
            best = (point, fields[dash + 1], "ro" in fields[5].split(","))
    return best[1:] if best else None
