"""Local paths and ``s3://`` URIs behind one small API, and atomic publishing of file sets.

Published sets (model bundles, checkpoints)
-------------------------------------------
A *set* is a few data files plus a JSON manifest, at a local directory or an ``s3://`` prefix::

    dest/config.json                       the manifest: written LAST, in one atomic step
    dest/model-3f2a9c0d1b2e4f60.params     data files: <stem>-<publish id><ext>, never overwritten
    dest/vocab-3f2a9c0d1b2e4f60.json
    dest/.fasttext.lock                    (local only) serializes publishers; flock, so kill -9 frees it

The manifest is the caller's dict plus ``"written_by": "fasttext_lib"`` and ``"files": {logical
name: {"object": stored name, "sha256": hex, "bytes": n}}``. Every publish uploads its data
files under names no manifest references yet, then replaces the manifest in one step
(``os.replace`` locally, one PUT on S3), then deletes the objects the replaced manifest
referenced. A failure at any moment therefore leaves the old manifest pointing at the old, untouched
files, or the new one at the new files; readers go through the manifest and verify size and sha256.

Stale leftovers: locally, whoever holds the lock knows no other publisher is running, so it deletes
every staging file and unreferenced data file it finds. S3 has no lock: unreferenced data objects
(a killed or losing concurrent publisher's) and incomplete multipart uploads are deleted by the next
publish or remove once older than :data:`ORPHAN_GRACE_SECONDS` (1 hour, so a slow concurrent
upload is never removed under a publisher's feet). Objects of a replaced manifest go at once: their
names are unique to that publish, so no other manifest can reference them. Without s3:ListBucket
(see "S3 sets" below) the manifest is committed conditionally and only the orphan clean-up is skipped.

A destination is replaced only if it is empty, absent, or holds a manifest with our marker (or only
our own leftovers); anything else -- a directory of the user's files, the current directory -- is
refused up front with an error naming it. Files we did not write are never deleted.

API (stable; bundles and checkpoints use it):

* ``publish(dest, files, manifest_name, manifest, overwrite=True) -> str``: ``files`` maps logical name ->
  local path; ``overwrite=False`` refuses a set already there.
* ``read_manifest(src, manifest_name) -> dict``: one-line errors for missing, not JSON, not ours.
* ``fetch(src, manifest, names, local_dir) -> {name: local path}``: verifies size and sha256;
  raises :class:`SetChanged` if a file is gone because a publisher replaced the set meanwhile.
* ``read_set(src, manifest_name, names, local_dir) -> (manifest, {name: local path})``: both, retried
  when the set changed under the reader (what loaders should call).
* ``remove(dest, manifest_name)``: delete a published set (and our leftovers, never other files).
* ``check_writable(dest, manifest_name=None)``: fail fast before training (also refuses a foreign
  destination when ``manifest_name`` is given); ``check_output_file(uri, example)`` the same for one file.

Plain files: ``open_read`` (S3 objects streamed by smart_open), ``read_bytes``, ``exists``,
``refuse_existing``, ``atomic_write`` (``overwrite=False``: a conditional PUT on S3, which needs no
s3:ListBucket), ``atomic_writes`` (several files, none put in place until all are written), ``atomic_local_file`` (O_TMPFILE where it can; a killed writer's named temporary is
removed by the next write to the same file, and so is an older library version's once a day old).
S3 URIs are split without URL semantics (``#`` and ``?`` belong to the key), and every failure a user
can cause (no credentials, endpoint down or resetting, HTTP 4xx/5xx) is one-line :class:`FastTextError`.
The endpoint comes from the standard boto3 configuration (``AWS_ENDPOINT_URL`` in tests and demos).
"""
import contextlib
import datetime
import errno
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import stat
import sys
import tempfile
import threading
import time

from .errors import FastTextError

MARKER_KEY, MARKER = "written_by", "fasttext_lib"
LOCK_NAME = ".fasttext.lock"
PROBE_PREFIX = ".fasttext-probe-"
ORPHAN_GRACE_SECONDS = 3600
_OBJECT_RE = re.compile(r"^[^/]+-[0-9a-f]{16}(\.[^./-]+)?$")


class SetChanged(FastTextError):
    """A data file named by the manifest we read is gone: a publisher replaced the set meanwhile.

    ``missing``: ``(logical name, stored name)`` of that file when it was missing, not replaced mid-read:
    still missing after :func:`read_set`'s retries, it was deleted or never copied, for good."""

    def __init__(self, message, missing=None):
        super().__init__(message)
        self.missing = missing


class Damaged(FastTextError):
    """A manifest that is not JSON, not ours or malformed, or a file that does not match its size or checksum."""


def _is_ours(name):
    """Names only this module creates inside a destination."""
    return (name == LOCK_NAME or name.startswith(STAGING_PREFIX) or name.startswith(PROBE_PREFIX)
            or bool(_OBJECT_RE.match(name)))


def _object_name(logical, publish_id):
    stem, ext = os.path.splitext(logical)
    return f"{stem}-{publish_id}{ext}"


# ---------------------------------------------------------------- URIs and S3 errors

# A location of another scheme (Hadoop's s3a://, https://), or an S3 URI mistyped (S3://, s3:/ with one slash): taken
# for a relative local path it was written to ./S3:/bucket/... on the local disk, silently.
_OTHER_SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[sS]3:/)")


def is_s3(uri):
    """Whether ``uri`` is an ``s3://`` URI (False: a local path); a URI of any other form is refused."""
    uri = str(uri)
    if uri.startswith("s3://"):
        return True
    if _OTHER_SCHEME.match(uri):
        hint = "; S3 URIs are written s3://bucket/key" if uri[:2].lower() == "s3" else ""
        raise FastTextError(f"{uri}: only local paths and s3://bucket/key URIs are read and written{hint}")
    return False


def split_s3(uri):
    """``s3://bucket/a/b#1?x`` -> ``("bucket", "a/b#1?x")``: no URL parsing, keys may hold ``#`` and ``?``."""
    uri = str(uri)
    bucket, _, key = uri[len("s3://"):].partition("/") if is_s3(uri) else ("", "", "")
    if not bucket:
        raise FastTextError(f"not a valid S3 URI (expected s3://bucket/key): {uri}")
    return bucket, key


def join(base, *parts):
    base = str(base)
    if is_s3(base):
        return "/".join([base.rstrip("/")] + [p.strip("/") for p in parts])
    return os.path.join(base, *parts)


def _key(prefix, name):
    return f"{prefix}/{name}" if prefix else name


# One S3 client per process and AWS_* environment (s3_client). A new boto3 Session parses botocore's JSON models
# again (S3's service model, endpoints, rule sets): ~0.16 s of CPU for each S3 call the library made, 1-3 s for a
# bundle published or read on S3. Clients are thread-safe (sessions are not: each is made under the lock).
_CLIENTS = {}
_CLIENTS_LOCK = threading.Lock()


def s3_client():
    """The process's S3 client for the current AWS_* environment (endpoint, credentials, region, retries): a
    changed variable (a test's, or a notebook's os.environ edit) gets a client of its own, as does a forked child."""
    key = (os.getpid(), tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_"))))
    with _CLIENTS_LOCK:
        client = _CLIENTS.pop(key, None)
        if client is None:
            import boto3

            client = boto3.session.Session().client("s3")
            client.meta.events.register("after-call.s3.CreateMultipartUpload", _record_multipart)
            if len(_CLIENTS) >= 8:  # environments come and go in tests (a real process has one): the least recently
                del _CLIENTS[next(iter(_CLIENTS))]  # used one goes
        _CLIENTS[key] = client  # (last: the most recently used)
    return client


def _stream_errors():
    """What a response body's read raises when the connection drops or stalls mid-object."""
    import botocore.exceptions as bex

    names = ("ResponseStreamingError", "ReadTimeoutError", "IncompleteReadError")  # (older botocores lack some)
    return tuple(getattr(bex, n) for n in names if hasattr(bex, n)) + (ConnectionError,)


def get_s3_object(bucket, key, write, attempts=5):
    """GET ``key`` and pass its body to ``write`` chunk by chunk; returns the GetObject answer.

    botocore retries a request that fails before its answer starts, but not a body whose connection is
    reset or stalls midway: a single such fault failed predict / evaluate / a resume from S3 checkpoints
    (training's smart_open reads resume). The rest is asked for again (``Range``), from the same object
    (``IfMatch`` its ETag: a replaced object is S3's 412, never a file stitched from two versions)."""
    client, done, answer = s3_client(), 0, None
    for attempt in range(attempts):
        extra = {} if answer is None else {"Range": f"bytes={done}-", "IfMatch": answer["ETag"]}
        try:
            part = client.get_object(Bucket=bucket, Key=key, **extra)
        except Exception as exc:
            if answer is not None and _status(exc) == 412:  # replaced since the first part: a set being published
                raise SetChanged(f"s3://{bucket}/{key} was replaced while it was read; try again") from None
            raise
        answer = answer or part
        try:
            for chunk in iter(lambda: part["Body"].read(1 << 20), b""):
                write(chunk)
                done += len(chunk)
            return answer
        except _stream_errors():
            if attempt == attempts - 1:
                raise
            time.sleep(min(0.1 * 2 ** attempt, 2.0))


def _first_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextlib.contextmanager
def s3_errors(uri):
    """Turn every S3 failure a user can cause into one-line :class:`FastTextError` (no traceback)."""
    import boto3.exceptions
    import botocore.exceptions as bex
    import s3transfer.exceptions

    try:
        yield
    except FastTextError:
        raise
    except (bex.NoCredentialsError, bex.PartialCredentialsError, bex.CredentialRetrievalError):
        raise FastTextError(f"no AWS credentials found for {uri} (set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile)") from None
    except bex.NoRegionError:
        raise FastTextError(f"no AWS region configured for {uri} (set AWS_DEFAULT_REGION)") from None
    except (bex.EndpointConnectionError, bex.ConnectTimeoutError) as exc:
        raise FastTextError(f"cannot reach the S3 endpoint for {uri}: {_first_line(exc)}") from None
    except bex.ClientError as exc:
        raise _client_error(exc, uri) from None
    except bex.ParamValidationError as exc:  # nothing was sent: botocore refused the bucket name ("my bucket")
        reasons = "; ".join(line.strip() for line in str(exc).splitlines()[1:] if line.strip()) or _first_line(exc)
        raise FastTextError(f"not a valid S3 URI: {uri}: {reasons}") from None
    except boto3.exceptions.S3UploadFailedError as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, bex.ClientError):
            raise _client_error(cause, uri) from None
        raise FastTextError(f"S3 upload to {uri} failed: {_first_line(exc)}") from None
    except (bex.BotoCoreError, boto3.exceptions.Boto3Error, s3transfer.exceptions.RetriesExceededError,
            ConnectionError) as exc:
        raise FastTextError(f"S3 request for {uri} failed (connection lost or timed out): {_first_line(exc)}") from None


def _client_error(exc, uri):
    error = exc.response.get("Error", {})
    code = error.get("Code", "")
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    bucket = split_s3(uri)[0]
    if code == "NoSuchBucket":
        return _no_bucket(bucket, uri)
    if code in ("NoSuchKey", "404", "NotFound"):
        # HEAD answers a bare 404 for a missing bucket too: ask about the bucket to say which.
        if not _bucket_exists(bucket):
            return _no_bucket(bucket, uri)
        return FastTextError(f"no such S3 object: {uri}")
    if code in ("AccessDenied", "403", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled"):
        return FastTextError(f"access denied to {uri} ({code}): check your AWS credentials and permissions")
    return FastTextError(f"S3 request for {uri} failed: {code or 'error'} (HTTP {status}) {error.get('Message') or ''}".rstrip())


def _no_bucket(bucket, uri):
    # Bucket names have been lowercase since 2018 (only some older us-east-1 buckets have capitals): a name typed
    # with them (-p bucket My-Bucket) is most likely the lowercase one.
    hint = f"; bucket names are lowercase: did you mean {bucket.lower()}?" if bucket != bucket.lower() else ""
    return FastTextError(f"S3 bucket does not exist: {bucket} (for {uri}){hint}")


def _bucket_exists(bucket):
    try:
        s3_client().head_bucket(Bucket=bucket)
        return True
    except Exception as exc:  # any other answer (403, endpoint down): do not claim it is missing
        code = getattr(exc, "response", {}).get("Error", {}).get("Code")
        return code not in ("404", "NoSuchBucket", "NotFound")


def _bucket_listable(client, bucket):
    """HeadBucket: raises for a missing bucket (404) and other failures; False where it is refused (403).
    It needs s3:ListBucket, which a user who may only put objects lacks: that alone is no reason to stop."""
    try:
        client.head_bucket(Bucket=bucket)
    except Exception as exc:
        if is_forbidden(exc):
            return False
        raise
    return True


def _status(exc):
    """The HTTP status of a botocore ClientError (None for anything else)."""
    response = getattr(exc, "response", None)
    return response.get("ResponseMetadata", {}).get("HTTPStatusCode") if isinstance(response, dict) else None


def _is_missing(exc):
    import botocore.exceptions as bex

    return isinstance(exc, bex.ClientError) and exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound")


# ---------------------------------------------------------------- plain files

def is_forbidden(exc):
    import botocore.exceptions as bex

    return isinstance(exc, bex.ClientError) and exc.response.get("Error", {}).get("Code") in ("403", "AccessDenied", "Forbidden")


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
        with s3_errors(uri):
            try:
                s3_client().head_object(Bucket=bucket, Key=key)
                return True
            except Exception as exc:
                if _is_missing(exc) or (forbidden_is_missing and is_forbidden(exc)):
                    return False
                raise
    return os.path.exists(uri)


def already_exists(uri, hint="pass --overwrite to replace it"):
    """The one-line error for a write that must not replace ``uri``."""
    return FastTextError(f"{uri} already exists; {hint}")


def would_replace(uri):
    """Whether a write to ``uri`` would replace something: a file, a dangling link too, or an S3 object. On S3
    a refused HEAD cannot tell: without s3:ListBucket S3 answers 403 for a missing object too, so it counts as
    nothing there, and ``atomic_write(uri, overwrite=False)`` makes the check at the write itself (a
    conditional PUT)."""
    return exists(uri, forbidden_is_missing=True) if is_s3(uri) else os.path.lexists(uri)


def refuse_existing(uri, hint="pass --overwrite to replace it"):
    """Fail fast if ``uri`` exists (a write that must not replace anything; :func:`would_replace`)."""
    if would_replace(uri):
        raise already_exists(uri, hint)


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
    if os.path.isdir(uri):
        raise FastTextError(f"expected a file but got a directory: {uri}")
    if not os.path.exists(uri):
        raise FastTextError(f"no such file: {uri}")
    try:
        return open(uri, mode)
    except OSError as exc:
        raise FastTextError(f"cannot read {uri}: {exc.strerror or exc}") from None


# Reads that belong together (reading_together: a training run reading its train and validation files): the set
# members read in each, (bucket, key) -> set id as its metadata said when it was opened (None: it had none).
_READ_SCOPES = []
_READ_SCOPES_LOCK = threading.Lock()


@contextlib.contextmanager
def reading_together():
    """Within the block, S3 objects written as one set (:func:`atomic_writes`) must all be read from the same
    write: a train split read, then a test split that a new write replaced meanwhile, is refused."""
    scope = {}
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
    (:func:`atomic_writes`: a train and a test split) that one of our writes left mixed: another member there is
    now of another write of that set (a write failed between its copies, or two ran at once), or is older than
    this one and not of its write (the write that put this one in place never reached it); or, inside
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
        mine_at, theirs_at = head.get("LastModified"), theirs.get("LastModified")
        if mine_at is not None and theirs_at is not None and theirs_at < mine_at:
            raise _not_together(uri, other, "that one is older than this one: the write of both never reached it")
        if (uri, other) not in _WARNED:
            _WARNED.add((uri, other))
            print(f"warning: s3://{other[0]}/{other[1]} was replaced by another file after {uri} was written with it: "
                  f"reading them as they are", file=sys.stderr)
    with _READ_SCOPES_LOCK:
        for scope in _READ_SCOPES:
            for other, (other_id, other_members) in scope.items():
                if (other != me and set_id is not None and other_id is not None and other_id != set_id
                        and (other in members or me in other_members)):
                    raise FastTextError(f"{uri} was written together with s3://{other[0]}/{other[1]}, which this "
                                        f"run read from another write of them (they were written again while it "
                                        f"ran): run it again")
            scope[me] = (set_id, members)


def remove_file(uri):
    """Delete a file or S3 object this run wrote (a missing one is no error; nor is a failure: best effort)."""
    with contextlib.suppress(Exception):
        if is_s3(uri):
            bucket, key = split_s3(uri)
            s3_client().delete_object(Bucket=bucket, Key=key)
        else:
            os.remove(uri)


def read_bytes(uri):
    with open_read(uri, "rb") as f:
        return f.read()


def check_replaceable(path):
    """An existing ``path`` must be a regular file (or a link to one) for an atomic write to replace it: the
    rename would put a regular file in place of a device, FIFO or socket (as root: ``--output /dev/null
    --overwrite`` replaced the device node itself). A directory is refused here too, before anything is
    written: its rename failed only at the end, after a pair's first member had replaced the user's file
    (``sample --overwrite`` beside a ``test.csv/`` folder, as Spark writes them)."""
    if os.path.isdir(path):
        raise FastTextError(f"cannot write {path}: it is a directory")
    if os.path.lexists(path) and not os.path.isfile(path):
        raise FastTextError(f"cannot write {path}: it exists and is not a regular file")


def check_output_file(uri, example, flag="", overwrite=True, hint="pass --overwrite to replace it"):
    """Fail fast, before any work, if one output file could not be written: an S3 URI must name an object
    under a writable prefix; a local path must be no directory (``example``: the file name the message
    suggests inside it), device, FIFO or socket, in a writable directory. ``flag``: the option that
    named it, for the messages. ``overwrite=False``: an existing ``uri`` is refused too (``hint``: what
    to do instead, in the message)."""
    uri = str(uri)
    if uri.strip() in ("", "-"):
        # "" was "  is a directory" (the current one); "-", which --input reads as stdin, wrote a file named "-"
        raise FastTextError(f"{flag + ': ' if flag else ''}an output file name is needed, got {uri!r} (standard output "
                            f"is not written: the file is published whole, atomically); give one such as {example}")
    if is_s3(uri):
        bucket, key = split_s3(uri)
        if not key or key.endswith("/"):
            raise FastTextError(f"{flag + ': ' if flag else ''}S3 URI names no object: {uri}")
        if not overwrite:  # where S3 cannot say (no s3:ListBucket), the write itself refuses an existing object
            refuse_existing(uri, hint)
        check_writable(join(f"s3://{bucket}", *key.split("/")[:-1]))
        return
    path = os.path.abspath(uri)
    if os.path.isdir(path):
        raise FastTextError(f"{flag + ' ' if flag else ''}{uri} is a directory; give a file name such as "
                            f"{os.path.join(uri, example)}")
    check_replaceable(path)  # first: --overwrite would not help a FIFO or device
    if not overwrite:
        refuse_existing(uri, hint)
    check_writable(os.path.dirname(path), what=uri)


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
        if exc.errno not in _NO_LOCKS:
            raise
        return False
    return True


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
        if exc.errno not in _NO_HARD_LINKS:
            raise
        return False
    return True


@contextlib.contextmanager
def atomic_local_file(path, mode="wb", overwrite=True):
    """Write ``path`` via a temporary that is renamed into place only on success (see above: a kill -9
    leaves nothing where the filesystem has O_TMPFILE, elsewhere a temporary the next write removes).
    ``overwrite=False``: an existing ``path`` is an error instead; the name is taken with a hard link, which
    never replaces a file (a check just before the rename only where the filesystem has no hard links)."""
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    check_replaceable(path)
    try:
        os.makedirs(directory, exist_ok=True)
        remove_stale_temporaries(path)
        fd, temp = _open_temporary(path)
    except OSError as exc:
        raise FastTextError(f"cannot write {path}: {why_not_written(directory, exc)}") from None
    try:
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            # Before the rename: on NFS (EFS, SageMaker Studio's home) a quota or I/O error surfaces only
            # when the data is written back, at fsync or close; after the rename it would be the target's.
            os.fsync(f.fileno())
            if not overwrite:
                # A check, then a rename, let two writers that both found nothing both rename: the second replaced
                # the first's file (two autotune runs writing one trial table). A link never replaces: S3's
                # If-None-Match, locally. Where the filesystem has no hard links: the check just before the rename.
                if _link_new(f.fileno(), temp, path):
                    if temp is not None:
                        os.remove(temp)
                        temp = None
                    return
                if os.path.lexists(path):
                    raise already_exists(path)
            if temp is None:
                temp = _name_anonymous(f.fileno(), path)
            os.replace(temp, path)  # while still locked: a cleanup never sees it unlocked
    except BaseException as exc:
        if temp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(temp)
        if isinstance(exc, OSError) and exc.errno is not None:
            raise FastTextError(f"cannot write {path}: {exc.strerror}") from None
        raise


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
    remove_dead_staging()
    root = tempfile.gettempdir()
    try:
        path = tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-")
    except OSError as exc:
        raise FastTextError(f"cannot create a temporary directory in {root} (TMPDIR): {exc.strerror or exc}") from None
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
            raise FastTextError(f"cannot write a temporary file in {tempfile.gettempdir()}: {exc.strerror} (larger "
                                f"than this process's file-size limit, ulimit -f; raise it)") from None
        raise FastTextError(f"no room for temporary files in {tempfile.gettempdir()} ({exc.strerror}); free space "
                            f"there or set TMPDIR to a directory with more room") from None


def temporary_file():
    """An unlinked temporary file in TMPDIR (``w+b``); one error line if none can be made there."""
    try:
        return tempfile.TemporaryFile()
    except OSError as exc:
        raise FastTextError(f"cannot create a temporary file in {tempfile.gettempdir()} (TMPDIR): "
                            f"{exc.strerror or exc}") from None


def remove_dead_staging(root=None):
    """Delete the staging directories under ``root`` (the temp dir) whose process no longer exists."""
    root = root or tempfile.gettempdir()
    try:
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
def atomic_write(uri, mode="wb", overwrite=True):
    """Atomically write a local file or an S3 object (S3 PUTs are atomic: stage locally, then upload).

    ``overwrite=False``: never replace an existing ``uri`` (``FastTextError`` "already exists" instead).
    On S3 the upload is conditional (``If-None-Match: *``), so S3 itself refuses an existing key: this
    needs no s3:ListBucket (without it a HEAD cannot tell a missing object from a forbidden one) and no
    writer that raced us is replaced. Locally the name is taken with a hard link, which never replaces a file
    (:func:`atomic_local_file`)."""
    uri = str(uri)
    if not is_s3(uri):
        with atomic_local_file(uri, mode, overwrite=overwrite) as f:
            yield f
        return
    bucket, key = split_s3(uri)
    if not key or key.endswith("/"):
        raise FastTextError(f"S3 URI names no object: {uri}")
    with staging_dir() as tmpdir:
        staged = os.path.join(tmpdir, "object")
        with open(staged, mode) as f:
            yield f
        with s3_errors(uri):
            if overwrite:
                upload_file(s3_client(), staged, bucket, key)
            else:
                _upload_new(s3_client(), staged, bucket, key, uri)


@contextlib.contextmanager
def atomic_writes(uris, mode="wb", overwrite=True):
    """:func:`atomic_write` for files that belong together (a train and a test split): yields their file
    objects; all are written in full before any replaces what is at its ``uri``, and they are put in place
    in the order given. A failure while writing them leaves every old file as it was.

    On S3 the files are one *set* (see "Sets of plain files on S3" below): every object carries the set's id
    and its members' names in its metadata, which :func:`open_read` checks, so a reader never takes a file of
    one set beside its partner of another. They are uploaded to staging keys first and put in place by
    server-side copies only once all are uploaded: a failed or interrupted upload leaves the old set intact.
    Locally the files are put in place by renames, one after another."""
    uris = [str(u) for u in uris]
    if not any(is_s3(u) for u in uris):
        with _local_writes(uris, mode, overwrite) as files:
            yield files
        return
    set_id = secrets.token_hex(8)
    metadata = _set_metadata(set_id, [split_s3(u) for u in uris if is_s3(u)])
    with contextlib.ExitStack() as stack:
        tmpdir = stack.enter_context(staging_dir())
        local = {u: stack.enter_context(atomic_local_file(u, mode, overwrite=overwrite)) for u in uris if not is_s3(u)}
        staged = {u: os.path.join(tmpdir, f"member-{i}") for i, u in enumerate(uris) if is_s3(u)}
        opened = {u: stack.enter_context(open(path, mode)) for u, path in staged.items()}
        yield [local.get(u) or opened[u] for u in uris]
        for f in opened.values():
            f.close()
        # the local members are put in place when the stack closes (their renames), after the S3 ones
        _put_set_in_place(uris, staged, metadata, overwrite)


@contextlib.contextmanager
def _local_writes(uris, mode, overwrite):
    with contextlib.ExitStack() as stack:  # closed last-in first-out: entered in reverse, put in place in order
        writers = [contextlib.ExitStack() for _ in uris]  # one each, so that each is put in place on its own
        files = [stack.enter_context(writer).enter_context(atomic_local_file(uri, mode, overwrite=overwrite))
                 for uri, writer in reversed(list(zip(uris, writers)))]
        yield files[::-1]
        for done, writer in enumerate(writers):
            writer.close()  # a rename: it fails only where the folder itself went away


# Sets of plain files on S3 (atomic_writes: a prepared train/test pair and its names file, sample's train.csv and
# test.csv). S3 has no transaction over two objects, but a single PUT or COPY is atomic, its metadata included. So:
#
# 1. every member is uploaded (the long part: hundreds of MB) to a staging key beside its target,
#    ``.fasttext-staging-<set id>-<name>``, with the metadata ``fasttext-set: <set id>`` and ``fasttext-members``
#    (the targets' bucket/key, URL-quoted); the keys are remembered, not listed (no s3:ListBucket is needed);
# 2. only once all are uploaded, each target is replaced by a server-side COPY of its staging object, in order;
# 3. the staging objects are deleted by the keys remembered, also when anything failed.
#
# A failure in 1 (a connection lost mid-upload, Ctrl-C, SIGTERM) leaves the old set untouched. Only a failure in the
# instant between two COPYs can leave targets of two sets side by side: the error says so, and :func:`open_read`
# refuses to read a member of one set beside another member now of another write of that set, or older than it and
# of no write of it (see check_set_member; a file the user put there later is read, with a warning). Objects are
# read pinned to the ETag
# their metadata was checked on (``If-Match``): one replaced mid-read is an error, never a file stitched from two.
#
# Where staging objects could not be removed afterwards (no s3:DeleteObject: a role that may only put objects) or
# not copied (no s3:GetObject), the members are uploaded to their targets directly, one after another, with the
# same metadata: a failure between two of them leaves a mixed set that readers refuse, and the error says so.
# ``overwrite=False`` uploads each member conditionally (If-None-Match) to its target: nothing is replaced, and a
# failure takes back (deletes) the members this call created.
SET_ID_META, SET_MEMBERS_META = "fasttext-set", "fasttext-members"
_SET_MEMBERS_MAX = 1800  # user metadata is limited to 2 KB: a set naming longer keys is recorded by its id alone
COPY_OBJECT_MAX = 5 << 30  # CopyObject copies up to 5 GB; larger objects are copied in parts (boto3's managed copy)


def _set_metadata(set_id, members):
    from urllib.parse import quote

    names = ",".join(quote(f"{b}/{k}", safe="/") for b, k in members)
    return {SET_ID_META: set_id, **({SET_MEMBERS_META: names} if len(names) <= _SET_MEMBERS_MAX else {})}


def _set_of(metadata):
    """``(set id, frozenset of (bucket, key))`` from an object's metadata; ``(None, frozenset())`` for none."""
    from urllib.parse import unquote

    metadata = metadata or {}
    names = metadata.get(SET_MEMBERS_META, "")
    members = frozenset(tuple(unquote(n).split("/", 1)) for n in names.split(",") if "/" in unquote(n))
    return metadata.get(SET_ID_META), members


def staging_key(key, set_id):
    head, _, name = key.rpartition("/")
    return (head + "/" if head else "") + f".fasttext-staging-{set_id}-{name}"


def _put_set_in_place(uris, staged, metadata, overwrite):
    client = s3_client()
    targets = [u for u in uris if is_s3(u)]
    with s3_errors(targets[0]):
        deletable = _may_delete(client, *split_s3(targets[0]))
    if not overwrite or not deletable:
        return _upload_directly(client, targets, staged, metadata, overwrite, deletable)
    created = []  # staging keys, by the key: deleted without a listing
    try:
        for uri in targets:
            bucket, key = split_s3(uri)
            temp = staging_key(key, metadata[SET_ID_META])
            created.append((bucket, temp, uri))
            with s3_errors(uri):
                upload_file(client, staged[uri], bucket, temp, metadata)
        for done, (bucket, temp, uri) in enumerate(created):
            try:
                with s3_errors(uri):
                    _copy(client, bucket, temp, *split_s3(uri), os.path.getsize(staged[uri]))
            except FastTextError as exc:
                if done:
                    raise _mixed(exc, targets, done) from None
                if not str(exc).startswith("access denied"):
                    raise
                # no s3:GetObject on the staging object (a role that may put and delete): upload directly
                _delete_staged(client, created)
                created = []
                return _upload_directly(client, targets, staged, metadata, overwrite, deletable)
    finally:
        _delete_staged(client, created)
    _check_one_write(client, targets)


def _check_one_write(client, targets):
    """After the copies: the targets must all be of one write. Two writes to one place at once (two ``prepare``
    runs) can interleave their copies, A's train, B's train, B's test, A's test, and both succeeded, leaving a
    mixed set that only a reader found. The run whose copy came last sees the mix here and says so; a set wholly
    of the other write is that write's (ours was replaced whole: nothing is mixed)."""
    ids = {}
    for uri in targets:
        try:
            ids[uri] = _set_of(client.head_object(Bucket=split_s3(uri)[0], Key=split_s3(uri)[1]).get("Metadata"))[0]
        except Exception:  # gone, or not ours to see: readers check what they find
            return
    if len(set(ids.values())) > 1:
        raise FastTextError(f"{', '.join(targets)} were written by another run at the same time, and their files are "
                            f"now of two writes (reading them together is refused): run the command again, one at a "
                            f"time")


def _delete_staged(client, created):
    """Delete the staging objects of a set by their keys; what cannot be deleted is named on stderr."""
    left = []
    for bucket, temp, _ in created:
        try:
            client.delete_object(Bucket=bucket, Key=temp)
        except Exception as exc:
            left.append(f"s3://{bucket}/{temp} ({_first_line(exc)})")
    if left:
        print(f"warning: could not delete the staging object(s) {', '.join(left)}: delete them by hand", file=sys.stderr)


def _may_delete(client, bucket, key):
    """Whether S3 lets us delete objects beside ``key`` (deleting a key that does not exist changes nothing)."""
    probe = staging_key(key, "probe-" + secrets.token_hex(8))
    try:
        client.delete_object(Bucket=bucket, Key=probe)
    except Exception as exc:
        if is_forbidden(exc):
            return False
        raise
    return True


def _upload_directly(client, targets, staged, metadata, overwrite, deletable):
    created = []
    for done, uri in enumerate(targets):
        bucket, key = split_s3(uri)
        try:
            with s3_errors(uri):
                if overwrite:
                    upload_file(client, staged[uri], bucket, key, metadata)
                else:
                    _upload_new(client, staged[uri], bucket, key, uri, metadata)
        except BaseException as exc:
            if not overwrite and deletable:  # ours alone (created, never replaced): take them back
                _delete_staged(client, created)
                raise
            if done and isinstance(exc, FastTextError):
                raise _mixed(exc, targets, done) from None
            raise
        created.append((bucket, key, uri))


def _mixed(exc, uris, done):
    # Already replaced, the earlier files cannot be taken back: say so, or the user reads the failure as "nothing
    # changed"; readers refuse the mixed set (open_read) until it is written again.
    return FastTextError(f"{exc}; {', '.join(uris[:done])} had already been written, so the files written together "
                         f"no longer belong together (reading them together is refused): run the command again")


def _copy(client, bucket, source, dest_bucket, key, size):
    """Server-side copy (metadata included): one CopyObject up to 5 GB, else boto3's managed copy in parts."""
    if size <= COPY_OBJECT_MAX:
        client.copy_object(Bucket=dest_bucket, Key=key, CopySource={"Bucket": bucket, "Key": source},
                           MetadataDirective="COPY")
    else:
        _in_thread(lambda: client.copy({"Bucket": bucket, "Key": source}, dest_bucket, key))


def _in_thread(call, on_abandon=None):
    """``call()`` in a daemon thread that the caller waits for, so that a signal ends the wait at once: waiting
    inside boto3's transfer manager, Ctrl-C or SIGTERM held the process until the stalled request's read timeout
    (a minute) when the endpoint had stopped answering. The worker is abandoned then (the CLI exits without
    waiting for threads: cli._exit_now)."""
    outcome = []

    def run():
        try:
            call()
        except BaseException as exc:  # raised again in the caller's thread
            outcome.append(exc)

    worker = threading.Thread(target=run, name="fasttext-s3-transfer", daemon=True)
    worker.start()
    try:
        worker.join()
    except BaseException:
        if on_abandon is not None:
            on_abandon()
        raise
    if outcome:
        raise outcome[0]


# Multipart uploads boto3's transfer manager started, by (bucket, key): their ids come from CreateMultipartUpload's
# answers (an event hook on each client). The manager aborts an upload that fails, but one whose caller a signal
# took away (upload_file abandons the worker) was left incomplete, its parts stored and billed, and without
# s3:ListBucket (ListMultipartUploads) no later run could find it: it is aborted by its id instead.
_MULTIPART = {}
_MULTIPART_LOCK = threading.Lock()


def _record_multipart(parsed=None, **kwargs):
    if isinstance(parsed, dict) and parsed.get("UploadId") and parsed.get("Key"):
        with _MULTIPART_LOCK:
            _MULTIPART[(parsed.get("Bucket"), parsed["Key"])] = parsed["UploadId"]


def _abort_multipart(client, bucket, key):
    """Abort the multipart upload to ``bucket/key`` this process started, by its id; say what is left if S3
    refuses (s3:AbortMultipartUpload)."""
    with _MULTIPART_LOCK:
        upload = _MULTIPART.pop((bucket, key), None)
    if upload is None:
        return
    try:
        client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload)
    except Exception as exc:
        print(f"warning: the interrupted upload to s3://{bucket}/{key} could not be aborted ({_first_line(exc)}): "
              f"abort multipart upload {upload} there by hand, or have a lifecycle rule abort incomplete uploads",
              file=sys.stderr)


def upload_file(client, path, bucket, key, metadata=None):
    """``client.upload_file`` (``metadata``: the object's user metadata) in a daemon thread (:func:`_in_thread`);
    a multipart upload the caller abandons (a signal) is aborted by its id."""
    extra = {"ExtraArgs": {"Metadata": metadata}} if metadata else {}
    with _MULTIPART_LOCK:
        _MULTIPART.pop((bucket, key), None)
    try:
        _in_thread(lambda: client.upload_file(path, bucket, key, **extra),
                   on_abandon=lambda: _abort_multipart(client, bucket, key))
    finally:
        with _MULTIPART_LOCK:
            _MULTIPART.pop((bucket, key), None)


CONDITIONAL_PART_BYTES = 64 << 20  # conditional uploads: one PUT up to this size, else parts of it


def _upload_new(client, path, bucket, key, uri, metadata=None):
    """Upload ``path`` to a key that must not exist: S3 answers 412 if it does (checked atomically by S3)."""
    import botocore.exceptions as bex

    if _conditional_writes(client):
        try:
            return _create_object(client, path, bucket, key, metadata)
        except bex.ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code in ("PreconditionFailed", "412"):
                raise already_exists(uri) from None
            if code in ("ConditionalRequestConflict", "409"):
                raise FastTextError(f"{uri} was being written by someone else at the same time; try again") from None
            if code not in ("NotImplemented", "501"):
                raise
            # an S3-compatible store without conditional writes: check first, as below
    try:
        client.head_object(Bucket=bucket, Key=key)
    except Exception as exc:
        if is_forbidden(exc):
            raise FastTextError(
                f"cannot tell whether {uri} exists: S3 refused to say (403: without s3:ListBucket a missing object is "
                f"refused too) and this S3 client or endpoint cannot write conditionally; pass --overwrite if replacing "
                f"it is fine, or grant s3:ListBucket") from None
        if not _is_missing(exc):
            raise
        return upload_file(client, path, bucket, key, metadata)
    raise already_exists(uri)


def _conditional_writes(client):
    """Whether this botocore knows PutObject's ``IfNoneMatch`` (S3 conditional writes, botocore 1.35 on)."""
    return "IfNoneMatch" in _put_members(client)


def _create_object(client, path, bucket, key, metadata=None):
    """Upload ``path`` with ``If-None-Match: *`` (boto3's managed upload cannot pass it): one PUT, or a
    multipart upload whose completion carries the condition (aborted on any failure)."""
    if os.path.getsize(path) <= CONDITIONAL_PART_BYTES:
        with open(path, "rb") as f:
            client.put_object(Bucket=bucket, Key=key, Body=f, IfNoneMatch="*", **({"Metadata": metadata} if metadata else {}))
        return
    upload = client.create_multipart_upload(Bucket=bucket, Key=key, **({"Metadata": metadata} if metadata else {}))["UploadId"]
    try:
        parts = []
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(CONDITIONAL_PART_BYTES), b""):
                number = len(parts) + 1
                etag = client.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=number, Body=chunk)["ETag"]
                parts.append({"PartNumber": number, "ETag": etag})
        client.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload, MultipartUpload={"Parts": parts},
                                         IfNoneMatch="*")
    except BaseException:
        with contextlib.suppress(Exception):
            client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload)
        raise


# ---------------------------------------------------------------- manifests

def _parse_manifest(raw, where):
    try:
        manifest = json.loads(raw)
    except ValueError:
        raise Damaged(f"{where} is not valid JSON") from None
    if not isinstance(manifest, dict) or manifest.get(MARKER_KEY) != MARKER:
        raise Damaged(f'{where} was not written by this library (no "{MARKER_KEY}": "{MARKER}" marker)')
    files = manifest.get("files")
    ok = isinstance(files, dict) and all(
        isinstance(v, dict) and isinstance(v.get("object"), str) and _OBJECT_RE.match(v["object"])
        and isinstance(v.get("sha256"), str) and isinstance(v.get("bytes"), int) for v in files.values())
    if not ok:
        raise Damaged(f'{where} is malformed: its "files" entry is missing or broken')
    return manifest


def read_manifest(src, manifest_name):
    """The manifest of the set at ``src``; one-line errors when it is missing, not JSON or not ours."""
    src = str(src)
    if is_s3(src):
        return _read_s3_manifest(src, manifest_name)[0]
    where = join(src, manifest_name)
    if not os.path.exists(src):
        raise FastTextError(f"{src} does not exist")
    if not os.path.isdir(src):
        raise FastTextError(f"{src} is not a directory")
    try:
        with open(where, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise FastTextError(f"{src} has no {manifest_name}") from None
    except OSError as exc:
        raise FastTextError(f"cannot read {where}: {exc.strerror or exc}") from None
    return _parse_manifest(raw, where)


def _read_s3_manifest(src, manifest_name):
    """``(manifest, ETag)`` of the set at the S3 prefix ``src`` (the ETag makes a conditional replace)."""
    where = join(src, manifest_name)
    bucket, prefix = split_s3(src)
    with s3_errors(where):
        try:
            chunks = []
            answer = get_s3_object(bucket, _key(prefix.rstrip("/"), manifest_name), chunks.append)
            raw = b"".join(chunks)
        except Exception as exc:
            if _is_missing(exc) and _bucket_exists(bucket):
                raise FastTextError(f"{src} has no {manifest_name}") from None
            raise
    return _parse_manifest(raw, where), answer.get("ETag")


def _referenced(manifest):
    return {v["object"] for v in manifest["files"].values()} if manifest else set()


def _with_files(manifest, entries):
    out = {k: v for k, v in dict(manifest).items() if k not in ("files", MARKER_KEY)}
    out[MARKER_KEY] = MARKER
    out["files"] = entries
    return json.dumps(out, indent=2, sort_keys=True).encode("utf-8")


def _check_files(files, manifest_name):
    for name, path in files.items():
        if not name or "/" in name or name.startswith(".") or name == manifest_name:
            raise ValueError(f"bad logical file name {name!r}")
        if not os.path.isfile(path):
            raise ValueError(f"{path} (for {name}) is not a file")


def _hash_file(path):
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return {"sha256": digest.hexdigest(), "bytes": size}


def _verify(src, name, entry, path):
    size = os.path.getsize(path)
    if size < entry["bytes"]:
        raise Damaged(f"{src}: {name} is truncated: {size} of {entry['bytes']} bytes")
    if size != entry["bytes"] or _hash_file(path)["sha256"] != entry["sha256"]:
        raise Damaged(f"{src}: {name} does not match its checksum in the manifest (corrupt or from another set)")


# ---------------------------------------------------------------- local sets

def _refuse(dest, why):
    return FastTextError(f"refusing to write to {dest}: {why}; name a new or empty directory, or one this library wrote")


def _check_local_destination(dest, manifest_name):
    """Raise unless ``dest`` is absent, empty, ours, or holds only our leftovers. Writes nothing."""
    if os.path.realpath(dest) == os.path.realpath(os.getcwd()):
        raise _refuse(dest, "it is the current directory")
    if not os.path.lexists(dest):
        _check_creatable(dest)
        return None
    if not os.path.isdir(dest):
        raise FastTextError(f"{dest} exists and is not a directory")
    names = os.listdir(dest)
    if manifest_name in names:
        try:
            return read_manifest(dest, manifest_name)
        except FastTextError as exc:
            raise _refuse(dest, str(exc)) from None
    foreign = sorted(n for n in names if not _is_ours(n))
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise _refuse(dest, f"it holds files this library did not write ({shown})")
    return None


def _check_creatable(dest):
    ancestor = os.path.dirname(dest)
    while not os.path.lexists(ancestor):
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        raise FastTextError(f"cannot create {dest}: {ancestor} is not a directory")


@contextlib.contextmanager
def _locked(dest, create=True):
    """Hold an exclusive flock on ``dest/.fasttext.lock`` (the kernel drops it if we are killed)."""
    import fcntl

    path = os.path.join(dest, LOCK_NAME)
    while True:
        if create:
            os.makedirs(dest, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:  # a remove() may have unlinked the file we waited on: lock the current one instead
                current, held = os.stat(path), os.fstat(fd)
                same = (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino)
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        os.close(fd)


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _copy_hashing(src, dst):
    digest, size = hashlib.sha256(), 0
    with open(src, "rb") as fin, open(dst, "xb") as fout:
        for chunk in iter(lambda: fin.read(1 << 20), b""):
            digest.update(chunk)
            fout.write(chunk)
            size += len(chunk)
        fout.flush()
        os.fsync(fout.fileno())
    return {"sha256": digest.hexdigest(), "bytes": size}


def _move_hashing(src, dst):
    """Hard-link ``src`` (a staged temporary on ``dst``'s filesystem) as ``dst``: the same result as
    :func:`_copy_hashing` (a durable new file, never an existing one replaced) without writing the data
    a second time (an 800 MB bigram bundle: one read to hash it instead of a read and a write)."""
    from concurrent.futures import ThreadPoolExecutor  # (here: not an import for every reader of storage)

    with open(src, "rb") as f, ThreadPoolExecutor(1) as pool:
        # durable before the manifest names it, as the copy is; the disk writes it while we hash (the GIL is
        # released by both): a 105 MB rows file took 0.04 s + 0.07 s one after the other
        synced = pool.submit(os.fsync, f.fileno())
        entry = _hash_file(src)
        synced.result()
    try:
        os.link(src, dst)  # fails if dst exists, as open(dst, "xb") does
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        return _copy_hashing(src, dst)  # a filesystem without hard links (some FUSE / SMB mounts): copy
    return entry


# What link() answers where the filesystem cannot hard-link (rather than "the name exists").
_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV, errno.ENOSYS}


def _same_filesystem(path, directory):
    try:
        return os.stat(path).st_dev == os.stat(directory).st_dev
    except OSError:
        return False


def _delete_local(dest, names):
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(dest, name))


def _local_leftovers(dest, keep):
    """Staging files and data files no manifest references. Only stale while we hold the lock."""
    return [n for n in os.listdir(dest)
            if n not in keep and n != LOCK_NAME and (n.startswith(STAGING_PREFIX) or _OBJECT_RE.match(n))]


def _publish_local(dest, files, manifest_name, manifest, move=False, overwrite=True, hint=None):
    dest = os.path.abspath(dest)
    if _check_local_destination(dest, manifest_name) is not None and not overwrite:
        raise already_exists(os.path.join(dest, manifest_name), hint)
    existed = os.path.isdir(dest)
    try:
        with _locked(dest):
            old = _check_local_destination(dest, manifest_name)  # again: another publisher may have won
            if old is not None and not overwrite:
                raise already_exists(os.path.join(dest, manifest_name), hint)
            _delete_local(dest, _local_leftovers(dest, _referenced(old)))
            publish_id = secrets.token_hex(8)
            entries, written, committed = {}, [], False
            staged_manifest = os.path.join(dest, f"{STAGING_PREFIX}{publish_id}-{manifest_name}")
            try:
                for name, path in sorted(files.items()):
                    obj = _object_name(name, publish_id)
                    written.append(obj)
                    place = _move_hashing if move and _same_filesystem(path, dest) else _copy_hashing
                    entries[name] = dict(object=obj, **place(path, os.path.join(dest, obj)))
                with open(staged_manifest, "xb") as f:
                    f.write(_with_files(manifest, entries))
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(staged_manifest, os.path.join(dest, manifest_name))  # the commit point
                committed = True
                _fsync_dir(dest)
            except BaseException:
                # A signal's handler runs between two bytecodes: also after os.replace put our manifest in place
                # and before `committed = True`. Taking our files back then left a manifest naming deleted files
                # (a checkpoint no resume could read, a bundle that replaced the old one and could not load).
                committed = committed or _names_ours(dest, manifest_name, written)
                _delete_local(dest, [os.path.basename(staged_manifest)] + ([] if committed else written))
                if old is None and not committed and not existed:  # we made dest: leave no directory
                    _delete_local(dest, [LOCK_NAME])
                    with contextlib.suppress(OSError):
                        os.rmdir(dest)  # only if empty
                raise
            _delete_local(dest, _referenced(old) - set(written))
    except OSError as exc:
        raise FastTextError(f"cannot write {dest}: {why_not_written(dest, exc)}") from None
    return dest


def _names_ours(dest, manifest_name, written):
    """Whether the manifest at ``dest`` names the files ``written`` (by a publish whose commit it is)."""
    try:
        return bool(_referenced(read_manifest(dest, manifest_name)) & set(written))
    except Exception:
        return False


def _remove_local(dest, manifest_name):
    dest = os.path.abspath(dest)
    if not os.path.isdir(dest):
        return
    _check_local_destination(dest, manifest_name)
    try:
        with _locked(dest, create=False):
            old = _check_local_destination(dest, manifest_name)
            _delete_local(dest, [manifest_name] if old else [])  # first: readers now see no set
            _delete_local(dest, _local_leftovers(dest, set()))
            _delete_local(dest, [LOCK_NAME])
        with contextlib.suppress(OSError):
            os.rmdir(dest)  # only if nothing else (the user's files) is left
    except FileNotFoundError:
        return
    except OSError as exc:
        raise FastTextError(f"cannot remove {dest}: {exc.strerror or exc}") from None


# ---------------------------------------------------------------- S3 sets
#
# Without s3:ListBucket (a role that may put, get and delete objects under a prefix but not list it) S3
# answers 403 for a missing key, and nothing can be listed: neither whether the prefix holds other objects
# nor the orphans of an interrupted earlier run. What still holds there: data files under run-unique
# names, the manifest last; the manifest is committed with a conditional PUT (If-None-Match: * where no
# manifest was seen, If-Match: its ETag where one was read), so an existing or concurrent set is never
# replaced unseen; a failed run deletes what it uploaded (DeleteObject needs no listing); a replaced set's
# files are known from its manifest and deleted. Only the orphan and multipart clean-up is skipped.

def _s3_listing(client, bucket, prefix):
    """``{name: age in seconds}`` of the objects directly under ``prefix/`` (sub-prefixes end in ``/``)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    found = {}
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=_key(prefix, ""), Delimiter="/")
    for page in pages:
        for obj in page.get("Contents", []):
            found[obj["Key"][len(_key(prefix, "")):]] = (now - obj["LastModified"]).total_seconds()
        for sub in page.get("CommonPrefixes", []):
            found[sub["Prefix"][len(_key(prefix, "")):]] = 0.0
    return found


def _check_s3_destination(client, bucket, prefix, manifest_name, dest, attempts=3):
    """``(old manifest or None, its ETag, listed)``; raises unless ``dest`` is absent, empty, ours, or holds
    only our leftovers. ``listed`` is False where S3 refused the listing (no s3:ListBucket): then no
    manifest was read but one may exist (S3 answers 403 for a missing key then), and the publish commits
    conditionally instead of checking here."""
    try:
        old, etag = _read_s3_manifest(f"s3://{bucket}/{prefix}", manifest_name)
        return old, etag, True
    except Damaged as exc:  # not JSON, not ours: not a set to replace
        raise _refuse(dest, str(exc)) from None
    except FastTextError as exc:
        # 403 for a missing manifest is what S3 answers a caller without s3:ListBucket: the listing tells
        refused = str(exc) if str(exc).startswith("access denied") else None
        if not (str(exc).endswith(f"has no {manifest_name}") or refused):
            raise  # S3 failed to answer (throttled, 5xx, reset): said as it is, not as a refusal of the destination
    try:
        listing = _s3_listing(client, bucket, prefix)
    except Exception as exc:
        if is_forbidden(exc):
            return None, None, False
        raise
    if refused and manifest_name in listing:
        raise _refuse(dest, refused)
    if manifest_name in listing and attempts > 1:  # a concurrent publisher committed meanwhile: check that
        return _check_s3_destination(client, bucket, prefix, manifest_name, dest, attempts - 1)
    foreign = sorted(n for n in listing if not _is_ours(n))
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise _refuse(dest, f"it holds objects this library did not write ({shown})")
    return None, None, True


def _s3_collect(client, bucket, prefix, keep, replaced):
    """Delete ``replaced`` now and unreferenced data objects / multipart uploads older than the grace period
    (those only where S3 lets us list them: without s3:ListBucket nothing can find them)."""
    doomed = set(replaced) - set(keep)
    try:
        listing = _s3_listing(client, bucket, prefix)
    except Exception as exc:
        if not is_forbidden(exc):
            raise
        listing = {}
    for name, age in listing.items():
        if name not in keep and _is_ours(name) and name != LOCK_NAME and age > ORPHAN_GRACE_SECONDS:
            doomed.add(name)
    for name in sorted(doomed):
        client.delete_object(Bucket=bucket, Key=_key(prefix, name))
    now = datetime.datetime.now(datetime.timezone.utc)
    try:
        uploads = client.list_multipart_uploads(Bucket=bucket, Prefix=_key(prefix, "")).get("Uploads", [])
    except Exception as exc:
        if not is_forbidden(exc):
            raise
        uploads = []
    for upload in uploads:
        name = upload["Key"][len(_key(prefix, "")):]
        if "/" not in name and (now - upload["Initiated"]).total_seconds() > ORPHAN_GRACE_SECONDS:
            client.abort_multipart_upload(Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])


def _commit_condition(client, old, etag, listed, listable, overwrite):
    """The condition of the manifest PUT: ``If-None-Match: *`` where no set may be replaced or none was
    seen (no listing could tell), ``If-Match: ETag`` where the set read is replaced without a listing (a
    concurrent publisher's set would otherwise lose its files for good: nothing could find them)."""
    members = _put_members(client)
    if not overwrite or (old is None and not listed):
        return {"IfNoneMatch": "*"} if "IfNoneMatch" in members else None
    if old is not None and not listable and etag and "IfMatch" in members:
        return {"IfMatch": etag}
    return {}


def _put_members(client):
    """The parameters this botocore's PutObject takes (``IfNoneMatch`` / ``IfMatch``: conditional writes)."""
    try:
        return set(client.meta.service_model.operation_model("PutObject").input_shape.members)
    except Exception:
        return set()


def _put_manifest(client, bucket, key, body, condition, dest, where, overwrite, hint):
    """The commit point: one PUT of the manifest, with ``condition``; a refused one is a one-line error (the
    caller checks it against the live manifest: the retry of a PUT whose answer was lost is refused too)."""
    import botocore.exceptions as bex

    if condition is None:  # no conditional writes in this botocore: a HEAD first, as _upload_new does
        try:
            client.head_object(Bucket=bucket, Key=key)
        except Exception as exc:
            if not (_is_missing(exc) or (overwrite and is_forbidden(exc))):
                if is_forbidden(exc):
                    raise FastTextError(
                        f"cannot tell whether {where} exists: S3 refused to say (403: without s3:ListBucket a missing "
                        f"object is refused too) and this S3 client cannot write conditionally; grant "
                        f"s3:ListBucket") from None
                raise
        else:
            if not overwrite:
                raise already_exists(where, hint)
        condition = {}
    try:
        client.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json", **condition)
    except bex.ClientError as exc:
        code = exc.response.get("Error", {}).get("Code")
        if code in ("NotImplemented", "501") and condition:  # an S3-compatible store without conditional writes
            return _put_manifest(client, bucket, key, body, None, dest, where, overwrite, hint)
        if code in ("ConditionalRequestConflict", "409"):
            raise FastTextError(f"{dest} was being written by another save at the same time; try again") from None
        if code not in ("PreconditionFailed", "412"):
            raise
        if not overwrite:
            raise already_exists(where, hint) from None
        if "IfMatch" in condition:
            raise FastTextError(f"{dest} was replaced by another save meanwhile; {_RETRY}") from None
        try:  # If-None-Match on a manifest no listing could show: another save's, or one we may not read
            read_manifest(dest, os.path.basename(key))
        except FastTextError as unread:
            raise FastTextError(f"cannot replace {where}: it exists, but reading it failed ({unread}), so neither that "
                                f"this library wrote it nor which files it holds can be checked; grant s3:GetObject "
                                f"or choose another destination") from None
        raise FastTextError(f"{dest} was written by another save meanwhile; {_RETRY}") from None


_RETRY = "nothing of this one was kept; try again"


def _publish_s3(dest, files, manifest_name, manifest, overwrite=True, hint="pass --overwrite to replace it"):
    from concurrent.futures import ThreadPoolExecutor

    bucket, prefix = split_s3(dest)
    prefix = prefix.rstrip("/")
    dest = f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"
    where = join(dest, manifest_name)
    client = s3_client()
    publish_id = secrets.token_hex(8)
    uploaded, entries, committing = [], {}, False
    with s3_errors(dest):
        listable = _bucket_listable(client, bucket)
        old, etag, listed = _check_s3_destination(client, bucket, prefix, manifest_name, dest)
        if old is not None and not overwrite:
            raise already_exists(where, hint)
        condition = _commit_condition(client, old, etag, listed, listable, overwrite)
        try:
            for name, path in sorted(files.items()):
                obj = _object_name(name, publish_id)
                uploaded.append(obj)
                with ThreadPoolExecutor(1) as pool:  # hashed while it uploads (the manifest needs it only after)
                    hashed = pool.submit(_hash_file, path)
                    upload_file(client, path, bucket, _key(prefix, obj))
                    entries[name] = dict(object=obj, **hashed.result())
            committing = True
            _put_manifest(client, bucket, _key(prefix, manifest_name), _with_files(manifest, entries), condition,
                          dest, where, overwrite, hint)  # the commit point
        except BaseException as exc:
            # before the manifest PUT nothing of ours is live; after it (failed, refused: a retry of a PUT whose
            # answer was lost is refused by its own condition) the live manifest tells
            ours = join(dest, uploaded[-1]) if uploaded else None
            live = _live_objects(dest, manifest_name, ours) if committing else set()
            if committing and _may_still_land(exc):
                # the manifest PUT was sent and then abandoned (a signal, a read timeout): S3 may apply it after
                # we look, so our files stay (unreferenced ones are orphans the next publish collects); taken
                # back, a late PUT left a manifest naming deleted files, a set that could never be read again
                live = None
            if live is not None and not (live & set(uploaded)):  # surely not committed: take ours back
                with contextlib.suppress(Exception):
                    for obj in uploaded:
                        client.delete_object(Bucket=bucket, Key=_key(prefix, obj))
            if not (isinstance(exc, Exception) and live and set(uploaded) <= live):
                raise
            # the manifest PUT reached S3 though its answer was lost: the new set is live
    with contextlib.suppress(Exception):  # cleanup failing never turns a published set into an error
        _s3_collect(client, bucket, prefix, keep=set(uploaded), replaced=_referenced(old))
    return dest


def _may_still_land(exc):
    """Whether a request that ended with ``exc`` may have reached S3 whole and be applied later: the client
    stopped waiting for the answer (a signal: not an ``Exception``; a read timeout). A reset or an HTTP error
    answer means S3 is done with it."""
    import botocore.exceptions as bex

    return not isinstance(exc, Exception) or isinstance(exc, bex.ReadTimeoutError)


def _live_objects(src, manifest_name, readable=None):
    """Objects the live manifest references; ``set()`` when there is none, ``None`` when S3 cannot tell.
    ``readable``: the URI of an object we may read (one we just uploaded): if S3 serves it but refuses the
    manifest, the refusal is S3's answer for a missing key to a caller without s3:ListBucket."""
    try:
        return _referenced(read_manifest(src, manifest_name))
    except FastTextError as exc:
        if str(exc).endswith(f"has no {manifest_name}"):
            return set()
        if readable and str(exc).startswith("access denied"):
            with contextlib.suppress(Exception):
                bucket, key = split_s3(readable)
                s3_client().head_object(Bucket=bucket, Key=key)
                return set()
        return None
    except Exception:
        return None


def _remove_s3(dest, manifest_name):
    bucket, prefix = split_s3(dest)
    prefix = prefix.rstrip("/")
    client = s3_client()
    with s3_errors(dest):
        old = _check_s3_destination(client, bucket, prefix, manifest_name, dest)[0]
        if old is not None:
            client.delete_object(Bucket=bucket, Key=_key(prefix, manifest_name))  # first: readers see no set
        _s3_collect(client, bucket, prefix, keep=set(), replaced=_referenced(old))


# ---------------------------------------------------------------- the set API

def publish(dest, files, manifest_name, manifest, move=False, overwrite=True, hint="pass --overwrite to replace it"):
    """Publish ``files`` (logical name -> local path) and ``manifest`` at ``dest``, all or nothing.

    Returns ``dest`` (absolute for a local path). Adds ``files`` and the marker to the manifest.
    ``move=True``: the files are the caller's temporaries (a staging directory it removes afterwards);
    a local ``dest`` on their filesystem then gets them as hard links instead of copies (the data
    written once). Every other guarantee is the same: unique names, durable before the manifest,
    the manifest last. ``overwrite=False``: a set already at ``dest`` (or one a concurrent publisher
    commits first) is never replaced: "<dest>/<manifest> already exists; <hint>", nothing left behind.
    """
    files = {str(k): str(v) for k, v in files.items()}
    _check_files(files, manifest_name)
    if is_s3(dest):
        return _publish_s3(str(dest), files, manifest_name, manifest, overwrite=overwrite, hint=hint)
    return _publish_local(str(dest), files, manifest_name, manifest, move=move, overwrite=overwrite, hint=hint)


def fetch(src, manifest, names, local_dir):
    """Copy the named files of the set at ``src`` into ``local_dir``, verifying size and sha256.

    Locally every file is opened before any is copied: a publisher that replaces the set meanwhile
    deletes the old files, but an open file stays readable, so only the instant between reading
    the manifest and opening the files can see a change (:class:`SetChanged`; read_set retries).
    Returns ``{name: local path}``.
    """
    src = str(src)
    entries = []
    for name in names:
        entry = manifest["files"].get(name)
        if entry is None:
            raise FastTextError(f"{src}: its manifest lists no {name}")
        entries.append((name, entry, join(src, entry["object"]), os.path.join(local_dir, name)))
    if not is_s3(src):
        return _fetch_local(src, entries)
    out = {}
    for name, entry, uri, path in entries:
        bucket, key = split_s3(uri)
        try:
            with s3_errors(uri), open(path, "wb") as fout:
                get_s3_object(bucket, key, fout.write)
        except FastTextError as exc:
            if "no such S3 object" in str(exc):  # SetChanged: read_set reads the manifest again
                raise _set_changed(src, name, entry) from None
            raise
        except OSError as exc:
            if exc.errno in NO_ROOM:
                raise  # a full TMPDIR: the staging_dir the files go to names it (room_in_tmpdir)
            raise FastTextError(f"cannot write {path}: {exc.strerror or exc}") from None
        _verify(src, name, entry, path)
        out[name] = path
    return out


def _set_changed(src, name, entry):
    return SetChanged(f"{src}: {name} ({entry['object']}) is missing: the set was replaced or removed while reading; try again",
                      missing=(name, entry["object"]))


def _fetch_local(src, entries):
    sources = []
    try:
        for name, entry, uri, _ in entries:
            try:
                sources.append(open(uri, "rb"))
            except FileNotFoundError:
                raise _set_changed(src, name, entry) from None
            except OSError as exc:
                raise FastTextError(f"cannot read {uri}: {exc.strerror or exc}") from None
        out = {}
        for (name, entry, uri, path), fin in zip(entries, sources):
            try:
                with open(path, "wb") as fout:
                    shutil.copyfileobj(fin, fout, 1 << 20)
            except OSError as exc:
                if exc.errno in NO_ROOM:
                    raise  # a full TMPDIR: the staging_dir the files go to names it (room_in_tmpdir)
                raise FastTextError(f"cannot copy {uri} to {path}: {exc.strerror or exc}") from None
            _verify(src, name, entry, path)
            out[name] = path
        return out
    finally:
        for fin in sources:
            fin.close()


def read_set(src, manifest_name, names, local_dir, attempts=8):
    """:func:`read_manifest` + :func:`fetch`, read again if a publisher replaced the set meanwhile.

    ``names``: the logical names to fetch (``None``: every file the manifest lists).
    Returns ``(manifest, {name: local path})``.
    """
    import time

    for attempt in range(attempts):
        try:
            manifest = read_manifest(src, manifest_name)  # (replaced while read, it is read again)
            wanted = sorted(manifest["files"]) if names is None else names
            return manifest, fetch(src, manifest, wanted, local_dir)
        except SetChanged:
            if attempt == attempts - 1:
                raise
            time.sleep(min(0.05 * 2 ** attempt, 1.0))  # let a publisher in progress finish


def remove(dest, manifest_name):
    """Delete the set at ``dest`` (manifest first); files this library did not write stay."""
    if is_s3(dest):
        _remove_s3(str(dest), manifest_name)
    else:
        _remove_local(str(dest), manifest_name)


def _check_deletable(client, bucket, key, dest):
    """A set's publisher deletes what an interrupted run uploaded and a replaced set's files: s3:DeleteObject.
    Deleting a key that does not exist succeeds where it is allowed, so this asks without writing anything."""
    try:
        client.delete_object(Bucket=bucket, Key=key)
    except Exception as exc:
        if is_forbidden(exc):
            raise FastTextError(f"cannot publish to {dest}: S3 refused to delete there (s3:DeleteObject), which is "
                                f"needed to take back an interrupted upload and the files of a replaced set; grant "
                                f"s3:DeleteObject on {bucket}") from None
        raise


def check_writable(dest, manifest_name=None, what=None):
    """Fail fast (before training) if ``dest`` cannot be written; with ``manifest_name``, also if it
    is a destination :func:`publish` would refuse to replace. Leaves nothing behind. ``what``: the path the
    user gave, when ``dest`` is its folder (an output file's), named in the message instead."""
    dest = str(dest)
    if is_s3(dest):
        bucket, prefix = split_s3(dest)
        prefix = prefix.rstrip("/")
        client = s3_client()
        with s3_errors(dest):
            if not _bucket_listable(client, bucket) and not manifest_name:
                return  # a probe could be written but perhaps not deleted: the write itself will tell
            probe = _key(prefix, PROBE_PREFIX + secrets.token_hex(8))
            if manifest_name:
                _check_s3_destination(client, bucket, prefix, manifest_name, dest)
                _check_deletable(client, bucket, probe, dest)
            client.put_object(Bucket=bucket, Key=probe, Body=b"")
            client.delete_object(Bucket=bucket, Key=probe)
        return
    dest = os.path.abspath(dest)
    if manifest_name:
        _check_local_destination(dest, manifest_name)
    elif os.path.lexists(dest) and not os.path.isdir(dest):
        raise FastTextError(f"{dest} exists and is not a directory")
    else:
        _check_creatable(dest)
    where = dest if os.path.isdir(dest) else os.path.dirname(dest)
    while not os.path.isdir(where):
        where = os.path.dirname(where)
    try:
        fd, probe = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=where)
        os.close(fd)
        os.remove(probe)
    except OSError as exc:
        raise FastTextError(f"cannot write to {what or dest}: {_why_no_file(where, exc)}") from None


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
