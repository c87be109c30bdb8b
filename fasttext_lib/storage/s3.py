"""S3 locations, the one client per process, and S3's failures as one-line errors; uploads.

``s3://bucket/key`` URIs are split without URL semantics (``#`` and ``?`` belong to the key), and every failure a
user can cause (no credentials or expired ones, endpoint down or resetting, HTTP 4xx/5xx) is a one-line
:class:`FastTextError` (:class:`Unreachable` for an endpoint out of reach, waited for :data:`CONNECT_TIMEOUT` s per
attempt). The endpoint comes from the standard boto3 configuration (``AWS_ENDPOINT_URL`` in tests and demos).
Uploads: one file to one key, multipart for big files (aborted by its id when interrupted), conditional
(``If-None-Match``) where an existing object must not be replaced.
"""
import contextlib
import os
import re
import secrets
import sys
import threading
import time

from ..errors import FastTextError


# What a reader of a published set (sets.py) can meet; here, in the lowest layer, because get_s3_object raises it.
class SetChanged(FastTextError):
    """A data file named by the manifest we read is gone: a publisher replaced the set meanwhile.

    ``missing``: ``(logical name, stored name)`` of that file when it was missing, not replaced mid-read:
    still missing after :func:`.sets.read_set`'s retries, it was deleted or never copied, for good. ``refused``: S3
    answered 403, which is all a caller without s3:ListBucket hears of a missing object."""

    def __init__(self, message, missing=None, refused=False):
        super().__init__(message)
        self.missing, self.refused = missing, refused


class Unreachable(FastTextError):
    """The S3 endpoint could not be reached, or stopped answering: every attempt waited out a timeout.
    :meth:`about` says the same of another location without asking S3 (and waiting) again."""

    def __init__(self, uri, head, tail):
        super().__init__(f"{head}{uri}{tail}")
        self._parts = (head, tail)

    def about(self, uri):
        return Unreachable(uri, *self._parts)


class Damaged(FastTextError):
    """A manifest that is not JSON, not ours or malformed, or a file that does not match its size or checksum."""


# A location of another scheme (Hadoop's s3a://, https://), or an S3 URI mistyped (S3://, s3:/ with one slash): taken
# for a relative local path it was written to ./S3:/bucket/... on the local disk, silently.
_OTHER_SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[sS]3:/)")


# S3's bucket names: 3-63 lowercase letters, digits, dots and hyphens. Enough to tell a name from a URI or a path.
_BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


def is_bucket_name(name):
    """Whether ``name`` is an S3 bucket's name (``my-bucket``), not ``s3://my-bucket``, a path or a number."""
    return isinstance(name, str) and bool(_BUCKET_NAME.fullmatch(name))


# An older bucket's name: buckets made in us-east-1 before March 2018 may have up to 255 characters, capitals and
# underscores (still in use: refusing them would lock their owners out; S3 answers for them).
_LEGACY_BUCKET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{1,253}[A-Za-z0-9]")
# What a bucket name is, as a refusal says it (today's rules: is_bucket_name).
BUCKET_NAME_RULES = "3 to 63 lowercase letters, digits, dots and hyphens, beginning and ending with a letter or digit"


def could_name_a_bucket(name):
    """Whether S3 can have a bucket named ``name``: today's rules (:func:`is_bucket_name`) or an older bucket's. Not a
    name with a space, quotes (``-p bucket '""'``) or another character no bucket has, which botocore refused in a
    message quoting two regular expressions."""
    return isinstance(name, str) and bool(_BUCKET_NAME.fullmatch(name) or _LEGACY_BUCKET_NAME.fullmatch(name))


def prefix_uri(bucket, prefix):
    """``s3://bucket/prefix``; a prefix of slashes alone, or none, is the bucket itself (``s3://bucket``, never a
    key that begins with a slash: ``s3://bucket//data``)."""
    prefix = str(prefix or "").strip("/")
    return f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"


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


# botocore waits 60 s for a connection, and tries 3 to 5 times (AWS_MAX_ATTEMPTS, AWS_RETRY_MODE): an endpoint whose
# packets are dropped (a firewall, a VPC endpoint out of reach) held every command for minutes before its error line.
# A connection to S3 takes milliseconds; the read timeout stays botocore's (a large CopyObject answers late).
CONNECT_TIMEOUT = 10


def _new_client(session, config):
    """An S3 client of ``session``. botocore reads the AWS_* settings (and ~/.aws/config's) as it makes it: a value it
    cannot use (AWS_MAX_ATTEMPTS=abc, AWS_RETRY_MODE or AWS_DEFAULTS_MODE misspelled) was a ValueError traceback, or
    'failed (connection lost or timed out)' though nothing was sent."""
    import botocore.exceptions as bex

    try:
        return session.client("s3", config=config)
    except (ValueError, bex.BotoCoreError) as exc:
        if isinstance(exc, (bex.NoRegionError, bex.NoCredentialsError)):  # (s3_errors says those)
            raise
        reason = _first_line(exc)
        named = [f"{k}={v}" for k, v in sorted(os.environ.items())  # the value botocore quotes: its variable
                 if k.startswith("AWS_") and not k.endswith(("_KEY", "_TOKEN", "_KEY_ID")) and v.strip()
                 and re.search(r"(?<![\w-])" + re.escape(v) + r"(?![\w-])", reason)]
        where = ", ".join(named) or "an AWS_* environment variable or ~/.aws/config"
        raise FastTextError(f"invalid AWS configuration ({where}): {reason}") from None


def _defaults_mode_chosen(session):
    """Has the user chosen a defaults mode, where botocore reads one: AWS_DEFAULTS_MODE, or ``defaults_mode`` in the
    profile's section of the AWS config file (~/.aws/config, AWS_CONFIG_FILE)? (The session's
    ``get_config_variable("defaults_mode")`` cannot tell: unset, it is botocore's default, "legacy".) Only the
    environment was asked: a ``defaults_mode = standard`` in the file had its 3.1 s raised to our 10 s."""
    import botocore.exceptions as bex

    if os.environ.get("AWS_DEFAULTS_MODE"):
        return True
    try:
        return bool(session.get_scoped_config().get("defaults_mode"))
    except bex.BotoCoreError:  # a profile that is not there (ProfileNotFound): the client's creation says so
        return False


def s3_client():
    """The process's S3 client for the current AWS_* environment (endpoint, credentials, region, retries): a
    changed variable (a test's, or a notebook's os.environ edit) gets a client of its own, as does a forked child."""
    key = (os.getpid(), tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_"))))
    with _CLIENTS_LOCK:
        client = _CLIENTS.pop(key, None)
        if client is None:
            import boto3
            import botocore.config
            import botocore.session

            core = botocore.session.get_session()
            # (a defaults mode the user chose sets its own connect timeout: standard's 3.1 s is not raised to ours)
            config = None if _defaults_mode_chosen(core) else botocore.config.Config(connect_timeout=CONNECT_TIMEOUT)
            client = _new_client(boto3.session.Session(botocore_session=core), config)
            for event, hook in _transfer_hooks(client).items():
                client.meta.events.register(event, hook)
            client.meta.events.register("before-send.s3", _count_writes)
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


def _endpoint_only(exc):
    """botocore's line without the key in its URL (``endpoint URL: "http://host:port"``): :meth:`Unreachable.about`
    names another location."""
    return re.sub(r'(\w+://[^/"\s]+)/[^"\s]*', r"\1", _first_line(exc))


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
    except bex.ProfileNotFound as exc:  # AWS_PROFILE misspelled, or a machine without that profile: no request was made
        raise FastTextError(f"the AWS profile {exc.kwargs.get('profile')!r} (AWS_PROFILE) is in neither ~/.aws/config nor "
                            f"~/.aws/credentials (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE), needed for {uri}") from None
    except (bex.EndpointConnectionError, bex.ConnectTimeoutError) as exc:
        if _out_of_descriptors(exc):
            raise FastTextError(f"cannot open a connection to S3 for {uri}: {_too_many_open_files()}") from None
        raise Unreachable(uri, "cannot reach the S3 endpoint for ", f": {_endpoint_only(exc)}") from None
    except (bex.ReadTimeoutError, bex.ConnectionClosedError) as exc:
        raise Unreachable(uri, "S3 request for ",
                          f" failed (connection lost or timed out): {_endpoint_only(exc)}") from None
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


def _out_of_descriptors(exc):
    """Whether a connection failed for want of a file descriptor (EMFILE: ``ulimit -n`` reached; ENFILE: the system's
    table full). botocore says 'Could not connect to the endpoint URL' for it, which sent users after their network."""
    import errno

    seen, todo = set(), [exc]
    while todo:
        cause = todo.pop()
        if cause is None or id(cause) in seen:
            continue
        seen.add(id(cause))
        if getattr(cause, "errno", None) in (errno.EMFILE, errno.ENFILE) or "[Errno 24]" in str(cause):
            return True
        todo += [getattr(cause, "kwargs", {}).get("error"), cause.__cause__, cause.__context__]
    return False


def _too_many_open_files():
    import resource

    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return (f"too many open files (this process may have {limit:,} at most, ulimit -n): raise that limit "
            f"with ulimit -n")


# Temporary credentials that are past their time or malformed (an SSO session or an assumed role's token expired).
_EXPIRED_CREDENTIALS = ("ExpiredToken", "InvalidToken", "TokenRefreshRequired", "RequestExpired")
_CREDENTIALS_REFUSED = _EXPIRED_CREDENTIALS + ("InvalidAccessKeyId", "SignatureDoesNotMatch", "RequestTimeTooSkewed")


def _client_error(exc, uri):
    exc = _reason_of_bare_answer(exc, uri)
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
        return FastTextError(f"no such S3 object: {uri}{_folder_hint(uri)}")
    if code in _EXPIRED_CREDENTIALS:
        return FastTextError(f"the AWS credentials were refused for {uri} ({code}: they have expired or are invalid): "
                             f"renew them (aws sso login, or a new AWS_SESSION_TOKEN with its keys)")
    if code in ("AccessDenied", "403", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled"):
        return FastTextError(f"access denied to {uri} ({code}): check your AWS credentials and permissions")
    return FastTextError(f"S3 request for {uri} failed: {code or 'error'} (HTTP {status}) {error.get('Message') or ''}".rstrip())


def _reason_of_bare_answer(exc, uri):
    """The error behind a HEAD's bare 400 or 403: S3 answers HEAD requests without a body, so expired session
    credentials (ExpiredToken, the most common cause) were "400 (HTTP 400) Bad Request", and an unknown access key
    (InvalidAccessKeyId) was any refusal. A one-byte GET of the same object (a listing of one key, for a bucket) is
    answered with the reason: one about the credentials, or, for a 400, another 400's; else ``exc`` itself (a
    refusal stays one: without s3:ListBucket a missing key is refused too)."""
    status = exc.response.get("Error", {}).get("Code")
    if status not in ("400", "403") or getattr(exc, "operation_name", "") not in ("HeadObject", "HeadBucket"):
        return exc
    bucket, key = split_s3(uri)
    try:
        if key and exc.operation_name == "HeadObject":
            s3_client().get_object(Bucket=bucket, Key=key, Range="bytes=0-0")["Body"].close()
        else:
            s3_client().list_objects_v2(Bucket=bucket, MaxKeys=1)
    except Exception as reason:
        code = getattr(reason, "response", {}).get("Error", {}).get("Code", "")
        # (the HEAD may have been of another key than uri's: only a reason of the same kind, or the credentials')
        if code in _CREDENTIALS_REFUSED or (status == "400" == str(_status(reason)) and not code.isdigit()):
            return reason
    return exc


def _no_bucket(bucket, uri):
    # Bucket names have been lowercase since 2018 (only some older us-east-1 buckets have capitals): a name typed
    # with them (-p bucket My-Bucket) is most likely the lowercase one; one with underscores too (Fasttext_Demo), the
    # name with hyphens for them (S3 takes no underscore: "did you mean fasttext_demo?" named no bucket there can be).
    hint = ""
    if bucket != bucket.lower():
        lower = bucket.lower()
        if is_bucket_name(lower):
            hint = f"; bucket names are lowercase: did you mean {lower}?"
        elif is_bucket_name(lower.replace("_", "-")):
            hint = (f"; bucket names are lowercase letters, digits, dots and hyphens: did you mean "
                    f"{lower.replace('_', '-')}?")
    return FastTextError(f"S3 bucket does not exist: {bucket} (for {uri}){hint}")


def _folder_hint(uri):
    """``uri`` named a "folder" (objects under ``uri/``, as a SageMaker channel or a Spark job writes them): say so
    and name a file in it, where "no such S3 object" alone left the user to think the data was gone. Nothing where
    the prefix holds nothing, or cannot be listed (no s3:ListBucket)."""
    bucket, key = split_s3(uri)
    if not key or key.endswith("/"):
        return ""
    try:
        listed = s3_client().list_objects_v2(Bucket=bucket, Prefix=key + "/", MaxKeys=2).get("Contents", [])
    except Exception:  # (refused, throttled: the error stays what it was)
        return ""
    if not listed:
        return ""
    return (f" (it is a folder: s3://{bucket}/{key}/ holds {'objects such as' if len(listed) > 1 else 'the object'} "
            f"s3://{bucket}/{listed[0]['Key']}; name the file to read)")


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


def is_forbidden(exc):
    import botocore.exceptions as bex

    return isinstance(exc, bex.ClientError) and exc.response.get("Error", {}).get("Code") in ("403", "AccessDenied", "Forbidden")


# A set's write asks of each target, one check after another, whether it is there, whether it holds this run's bytes,
# whether the set is of one write, and the ETag it holds before the write (pairs.py): each a HEAD of its own, 3 to 4
# of one object in a row with nothing written in between. Within heads_remembered() an object is HEADed once until
# this process sends a write (PUT, POST, DELETE: any object, any thread, counted by _count_writes); later checks get
# that answer. A check after a write (the one before the copies, after the uploads; the one after them) asks again.
_REMEMBERED = threading.local()
_WRITES_SENT = [0]


def _count_writes(request=None, **kwargs):
    """botocore's before-send hook (s3_client registers it): one more write sent, which ends what HEADs told."""
    if getattr(request, "method", None) in ("PUT", "POST", "DELETE"):
        _WRITES_SENT[0] += 1  # (two threads at once may count one: it changed all the same, which is what is asked)


@contextlib.contextmanager
def heads_remembered():
    """Within the block, :func:`head_object` asks S3 once per object until a write is sent (a block within one shares
    its answers)."""
    outer = getattr(_REMEMBERED, "heads", None)
    _REMEMBERED.heads = {} if outer is None else outer
    try:
        yield
    finally:
        _REMEMBERED.heads = outer


def head_object(client, bucket, key):
    """``client.head_object`` of ``key``, answered from what S3 said to it before within :func:`heads_remembered`
    where no write has been sent since. Only S3's answers are remembered (an error answer too: 404, 403); a request
    that got none is sent again."""
    import botocore.exceptions as bex

    heads = getattr(_REMEMBERED, "heads", None)
    if heads is None:
        return client.head_object(Bucket=bucket, Key=key)
    remembered = heads.get((bucket, key))
    if remembered is None or remembered[0] != _WRITES_SENT[0]:
        writes = _WRITES_SENT[0]  # (before the HEAD: a write sent while it is under way ends its answer too)
        try:
            remembered = (writes, client.head_object(Bucket=bucket, Key=key), None)
        except bex.ClientError as exc:
            remembered = (writes, None, exc)
        heads[bucket, key] = remembered
    _, answer, refused = remembered
    if refused is not None:
        raise refused
    return answer


class AlreadyExists(FastTextError):
    """A write that must not replace what is at its location found something there."""


CONFLICT_ATTEMPTS = 3  # create-only PUTs answered 409 (another create of the key in flight) are sent this often
CONFLICT_PAUSE = 1  # seconds apart (read as this module's attribute, so that a test may shorten it)


def sent_again_on_conflict(send, uri, transfer=None):
    """``send()``, a create-only PUT (``If-None-Match``) of ``uri``, sent again while S3 answers it 409
    ConditionalRequestConflict: another create of the key was in flight, which may still fail (once it is done, ours
    lands, or is refused 412). :data:`CONFLICT_ATTEMPTS` times in all, :data:`CONFLICT_PAUSE` apart; the last 409 is
    raised as S3's error, like any other. The one such loop: _upload_new's objects', a set's manifest's (sets).

    A stop during a pause came while no request of this write was in flight: S3 had answered the last one, refusing
    it, so nothing of this run's is written by it, now or later (:func:`stopped_with_nothing_in_flight`; ``transfer``,
    the write's, no longer ``creating``). It was told as a PUT S3 had not answered ("may still be created"), and a
    set's files were kept for it. Its line says another write was creating ``uri`` meanwhile. Unless an attempt was
    one botocore had sent again (its first try's answer lost: that one may still land): then it is told as before."""
    import botocore.exceptions as bex

    retried = False
    for attempt in range(CONFLICT_ATTEMPTS):
        try:
            return send()
        except bex.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in ("ConditionalRequestConflict", "409") or \
                    attempt == CONFLICT_ATTEMPTS - 1:
                raise
            retried = retried or bool((exc.response.get("ResponseMetadata") or {}).get("RetryAttempts"))
        try:
            time.sleep(CONFLICT_PAUSE)
        except KeyboardInterrupt as stop:
            if not retried:
                _note_a_stop_between_conflicts(stop, uri, transfer)
            raise


def _note_a_stop_between_conflicts(stop, uri, transfer):
    """:func:`sent_again_on_conflict`'s stop in a pause, every attempt refused by S3 at once: nothing in flight."""
    from ..stops import note_what_a_stop_left

    setattr(stop, _NOTHING_IN_FLIGHT, True)
    if transfer is not None:
        transfer.creating = False  # (its creating request was answered: refused)
    note_what_a_stop_left(stop, f"another write was creating {uri} at the same moment (S3 refused this run's PUT of "
                                f"it with 409, and it was waiting to send it again): it may be there now")


_NOTHING_IN_FLIGHT = "fasttext_lib_nothing_in_flight"


def stopped_with_nothing_in_flight(stop):
    """Whether ``stop`` came between a create-only PUT S3 refused 409 and the next (:func:`sent_again_on_conflict`):
    S3 had answered every request of that write, so it writes nothing after the stop."""
    return bool(getattr(stop, _NOTHING_IN_FLIGHT, False))


class BeingWritten(AlreadyExists):
    """A create-only write S3 answered 409 ConditionalRequestConflict: another create of that key was in flight at that
    moment, and it may not be replaced once done. An AlreadyExists, so a caller that keeps its work beside a taken
    destination (the command line's train: bundle.save_bundle's keep_beside) does so; its line says "try again"."""


def already_exists(uri, hint="pass --overwrite to replace it"):
    """The one-line error for a write that must not replace ``uri``."""
    return AlreadyExists(f"{uri} already exists; {hint}")


# How a write that must not replace what is there tells its user to replace it (_upload_new, pairs.atomic_writes,
# atomic.atomic_write): by the command line's flag, unless its caller says it in its own user's terms (the Python API's
# argument, which notebook 01 passes its parameter overwrite as: download.prepare, writers, vec_files, class_folders).
OVERWRITE_FLAG = "--overwrite"
OVERWRITE_ARGUMENT = "overwrite=True"


def replace_with(overwrite_as):
    """How a refusal of a file that is there says to replace it, as ``overwrite_as`` (:data:`OVERWRITE_FLAG`, or a
    caller's terms)."""
    return f"pass {overwrite_as} to replace it"


def run_again(overwrite_as):
    """How a write's user does it again as it was (a set left mixed, written whole by its rerun): the command line's
    (``overwrite_as`` :data:`OVERWRITE_FLAG`) runs its command again; a caller of the Python API (a notebook's cell)
    calls it again, and has no command to run."""
    return "run the command again" if overwrite_as == OVERWRITE_FLAG else "call it again"


def run_again_with(overwrite_as):
    """What to do to write a set whole again, ``overwrite_as`` (:data:`OVERWRITE_FLAG`, or a caller's terms) naming
    how: each user told only their own way (the command line's line named the Python API's argument too), in
    :func:`run_again`'s words (the Python API's "call it again", never also "run it again")."""
    return f"{run_again(overwrite_as)} with {overwrite_as}"


def rerun_to_replace(overwrite, overwrite_as):
    """What a write's rerun needs to replace what this one left: a replacing write (``overwrite``) only runs again;
    one that must not replace, again with ``overwrite_as`` (:func:`run_again_with`)."""
    return run_again(overwrite_as) if overwrite else run_again_with(overwrite_as)


COPY_OBJECT_MAX = 5 << 30  # CopyObject copies up to 5 GB; larger objects are copied in parts (boto3's managed copy)


def _copy(client, bucket, source, dest_bucket, key, size):
    """Server-side copy (metadata included): one CopyObject up to 5 GB, else boto3's managed copy in parts."""
    if size <= COPY_OBJECT_MAX:
        client.copy_object(Bucket=dest_bucket, Key=key, CopySource={"Bucket": bucket, "Key": source},
                           MetadataDirective="COPY")
    else:
        _in_thread(lambda: client.copy({"Bucket": bucket, "Key": source}, dest_bucket, key))


SIGNAL_CHECK_SECONDS = 0.1  # how often a wait for a transfer's thread lets a signal's handler run


def _in_thread(call, on_abandon=None):
    """``call()`` in a daemon thread that the caller waits for, so that a signal ends the wait at once: waiting
    inside boto3's transfer manager, Ctrl-C or SIGTERM held the process until the stalled request's read timeout
    (a minute) when the endpoint had stopped answering. The worker is abandoned then (the CLI exits without
    waiting for threads: cli._exit_now), and ``on_abandon()`` called."""
    outcome = []

    def run():
        try:
            call()
        except BaseException as exc:  # raised again in the caller's thread
            outcome.append(exc)

    worker = threading.Thread(target=run, name="fasttext-s3-transfer", daemon=True)
    try:
        # (start() too: it waits for the thread to run, and on a busy machine the thread may have sent its first
        # request before the caller runs again: a signal raised out of start() abandoned a transfer unsaid)
        worker.start()
        while worker.is_alive():
            # A timed wait: the kernel hands a process's SIGINT or SIGTERM to any of its threads, and one that went
            # to another thread (botocore's, s3transfer's) woke no untimed join; its handler ran only when the worker
            # ended, after a stalled request's read timeout (a minute).
            worker.join(SIGNAL_CHECK_SECONDS)
    except BaseException:
        if on_abandon is not None:
            on_abandon()
        raise
    if outcome:
        raise outcome[0]


# Uploads by upload_file and create-only writes (_created_in_a_thread) still going on, by (bucket, key). A multipart
# upload whose caller a signal took away (it abandons the worker) was left incomplete, its parts stored and billed,
# and without s3:ListBucket (ListMultipartUploads) no later run could find it: it is aborted by its id, which
# CreateMultipartUpload's answer gives (an event hook on each client). Abandoned before that answer, or where S3
# refuses the abort, the transfer, going on in its thread, uploaded every part and completed the object after its
# publish had failed: an abandoned transfer stays here until its thread ends, and its requests are refused (its upload
# aborted as its id arrives).
_TRANSFERS = {}
_TRANSFERS_LOCK = threading.Lock()


class AbandonedUpload(FastTextError):
    """A request of an upload that a signal abandoned, refused before it is sent: raised in the abandoned transfer's
    thread, to end it; or to the caller of another write to the same key while that transfer is ending."""

    def __init__(self, bucket, key):
        super().__init__(f"s3://{bucket}/{key}: an interrupted upload to it is still being stopped; try again")


class _Transfer:
    """One upload_file call's transfer to ``where`` (bucket, key), or one create-only write's (:func:`_upload_new`,
    in a transfer thread too: :func:`_created_in_a_thread`): its multipart upload's id (None: none yet, or completed),
    whether the caller abandoned it, ``creating``, set once the request that creates the object (its PUT, its
    multipart upload's completion) is sent, ``answer``, that request's answer once it created the object (its
    ``VersionId``: versions.delete_written), and ``over``, set when its thread has ended. A caller a stop (a signal)
    cut short tells from them whether S3 had its request, and whether S3 said it was applied."""

    def __init__(self, where):
        self.where, self.upload, self.abandoned, self.over = where, None, False, threading.Event()
        self.creating, self.answer = False, None


_CONTEXT_KEY = "fasttext_lib_transfer"  # (botocore's request context, shared by a call's events)


def _transfer_hooks(client):
    """The event hooks that stop an abandoned transfer's requests (see _TRANSFERS), for ``client``."""

    def before(params=None, context=None, **kwargs):
        where = (params.get("Bucket"), params.get("Key")) if isinstance(params, dict) else None
        with _TRANSFERS_LOCK:
            transfer = _TRANSFERS.get(where)
            if transfer is not None and transfer.abandoned:
                raise AbandonedUpload(*where)
        if transfer is not None and isinstance(context, dict):
            context[_CONTEXT_KEY] = transfer

    def created(parsed=None, context=None, **kwargs):
        transfer = context.get(_CONTEXT_KEY) if isinstance(context, dict) else None
        upload = parsed.get("UploadId") if isinstance(parsed, dict) else None
        if transfer is None or not upload:
            return
        with _TRANSFERS_LOCK:
            abandoned = transfer.abandoned
            transfer.upload = None if abandoned else upload
        if abandoned:
            _abort_upload(client, *transfer.where, upload)
            raise AbandonedUpload(*transfer.where)

    def sending(request=None, **kwargs):
        context = getattr(request, "context", None)
        transfer = context.get(_CONTEXT_KEY) if isinstance(context, dict) else None
        if transfer is None:
            return
        with _TRANSFERS_LOCK:  # (abandoned first: not sent; else creating is known before the caller goes on)
            if transfer.abandoned:
                raise AbandonedUpload(*transfer.where)
            if request.method in ("PUT", "POST"):
                transfer.creating = True

    def completed(http_response=None, parsed=None, context=None, **kwargs):
        transfer = context.get(_CONTEXT_KEY) if isinstance(context, dict) else None
        if transfer is not None and getattr(http_response, "status_code", 500) < 300:
            with _TRANSFERS_LOCK:
                transfer.upload = None  # (a signal now has nothing to abort: the object is there)
                transfer.answer = {"VersionId": parsed.get("VersionId") if isinstance(parsed, dict) else None}

    return {"before-parameter-build.s3.CreateMultipartUpload": before, "before-parameter-build.s3.UploadPart": before,
            "before-parameter-build.s3.CompleteMultipartUpload": before, "before-parameter-build.s3.PutObject": before,
            "after-call.s3.CreateMultipartUpload": created, "after-call.s3.CompleteMultipartUpload": completed,
            "after-call.s3.PutObject": completed,
            "before-send.s3.PutObject": sending, "before-send.s3.CompleteMultipartUpload": sending}


def _transfer_in_place(transfer, call):
    """``call()``, the transfer, with ``transfer`` registered meanwhile (in its worker's thread, which no signal
    interrupts: registered, it is removed). A transfer to the same key still going on (an abandoned one, ending as
    its request in flight is answered) is waited for first: the hooks know a transfer by its key."""
    while True:
        with _TRANSFERS_LOCK:
            other = _TRANSFERS.setdefault(transfer.where, transfer)
            abandoned = transfer.abandoned
        if abandoned or other is transfer:
            break
        other.over.wait(SIGNAL_CHECK_SECONDS)  # (timed: this one may be abandoned meanwhile)
    try:
        if not abandoned:  # (abandoned before it began: nothing is sent)
            call()
    finally:
        with _TRANSFERS_LOCK:
            transfer.over.set()
            if _TRANSFERS.get(transfer.where) is transfer:
                del _TRANSFERS[transfer.where]


def _abandon(client, transfer):
    """The caller stopped waiting for ``transfer`` (a signal): refuse its further requests, and abort its multipart
    upload by its id if S3 sent one; say what is left if S3 refuses (s3:AbortMultipartUpload)."""
    with _TRANSFERS_LOCK:
        if transfer.over.is_set():  # it ended meanwhile: nothing goes on
            return
        transfer.abandoned = True
        upload, transfer.upload = transfer.upload, None
    if upload is not None:
        _abort_upload(client, *transfer.where, upload)


def may_still_create(bucket, key):
    """Whether an upload_file transfer to ``key`` that a signal abandoned (:func:`_abandon`) may still create it: S3 has
    its creating request (a PUT, a multipart upload's completion) and has not answered (a slow S3). Asked after the
    abandon, it is never wrong that way: a request not sent by then is refused (``sending``)."""
    with _TRANSFERS_LOCK:
        transfer = _TRANSFERS.get((bucket, key))
        return transfer is not None and transfer.creating


def _abort_upload(client, bucket, key, upload):
    try:
        client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload)
    except Exception as exc:
        print(f"warning: the interrupted upload to s3://{bucket}/{key} could not be aborted ({_first_line(exc)}): "
              f"abort multipart upload {upload} there by hand, or have a lifecycle rule abort incomplete uploads",
              file=sys.stderr)


# The part size of our managed uploads, named rather than left to boto3's default (the same 8 MiB): a multipart
# object's ETag is the MD5 of its parts' MD5s, so whether it holds given bytes can be told from a HEAD by whoever
# knows the part size (files.Written).
UPLOAD_PART_BYTES = 8 << 20


def upload_file(client, path, bucket, key, metadata=None, on_late=None, transfer=None):
    """``client.upload_file`` (``metadata``: the object's user metadata) in a daemon thread (:func:`_in_thread`),
    in parts of :data:`UPLOAD_PART_BYTES` from that size on; a transfer the caller abandons (a signal) sends no
    further request, and its multipart upload is aborted by its id. Returns the answer of the request that created
    the object (its ``VersionId``; None where the client's hooks did not see it). ``transfer``: a :class:`_Transfer`
    of ``(bucket, key)`` to use, which a caller a stop cut short asks what S3 was sent and answered.

    ``on_late(answer)``: for an object the caller would delete were it there (a temporary one, under a key of its
    own), called in the transfer's thread where S3 may have created it after the caller abandoned the transfer (its
    request held by a slow S3, answered later): a process that lives on (a notebook's kernel) deletes it then.
    ``answer`` is None where that request's answer was lost (a 500, a reset: the object may be there all the same;
    botocore's retry is refused, the transfer being abandoned)."""
    from boto3.s3.transfer import TransferConfig

    extra = {"ExtraArgs": {"Metadata": metadata}} if metadata else {}
    extra["Config"] = TransferConfig(multipart_threshold=UPLOAD_PART_BYTES, multipart_chunksize=UPLOAD_PART_BYTES)
    transfer = transfer or _Transfer((bucket, key))

    def run():
        try:
            _transfer_in_place(transfer, lambda: client.upload_file(path, bucket, key, **extra))
        finally:  # (once its transfer is over, whether it was abandoned is settled: _abandon asks over first)
            if on_late is not None and transfer.abandoned and (transfer.answer is not None or transfer.creating):
                on_late(transfer.answer)

    _in_thread(run, on_abandon=lambda: _abandon(client, transfer))
    return transfer.answer


CONDITIONAL_PART_BYTES = 64 << 20  # conditional uploads: one PUT up to this size, else parts of it


def _upload_new(client, path, bucket, key, uri, metadata=None, overwrite_as=OVERWRITE_FLAG, transfer=None):
    """Upload ``path`` to a key that must not exist: S3 answers 412 if it does (checked atomically by S3). Returns
    the answer of the request that created it (its ``VersionId``), as :func:`upload_file` does. A refusal says how to
    replace it as ``overwrite_as`` (:data:`OVERWRITE_FLAG`, or the caller's terms: ``overwrite=True``). ``transfer``:
    as :func:`upload_file` takes it; the conditional requests are noted on it as they are sent and answered."""
    import botocore.exceptions as bex

    if _conditional_writes(client):
        write_id, transfer = secrets.token_hex(8), transfer or _Transfer((bucket, key))

        def create():
            return _created_in_a_thread(client, transfer, lambda: _create_object(
                client, path, bucket, key, {**(metadata or {}), WRITE_ID_META: write_id}))
        try:
            return sent_again_on_conflict(create, uri, transfer)
        except bex.ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code in ("PreconditionFailed", "412"):
                own = _created_by_an_earlier_attempt(client, bucket, key, write_id, exc)
                if own is not None:
                    return own
                raise already_exists(uri, replace_with(overwrite_as)) from None
            if code in ("ConditionalRequestConflict", "409"):  # (still, at the last attempt)
                raise BeingWritten(f"{uri} was being written by someone else at the same time; try again") from None
            if code not in ("NotImplemented", "501"):
                raise
            # an S3-compatible store without conditional writes: check first, as below
    try:
        client.head_object(Bucket=bucket, Key=key)
    except Exception as exc:
        if is_forbidden(exc):
            raise FastTextError(
                f"cannot tell whether {uri} exists: S3 refused to say (403: without s3:ListBucket a missing object is "
                f"refused too) and this S3 client or endpoint cannot write conditionally; pass {overwrite_as} if "
                f"replacing it is fine, or grant s3:ListBucket") from None
        if not _is_missing(exc):
            raise
        return upload_file(client, path, bucket, key, metadata, transfer=transfer)
    raise already_exists(uri, replace_with(overwrite_as))


def _created_in_a_thread(client, transfer, create):
    """``create()``, a create-only write's requests (:func:`_create_object`), made as ``transfer`` in a transfer
    thread, as upload_file's are (:func:`_in_thread`); returns its answer. Made in the caller's thread, a stop (Ctrl-C,
    SIGTERM) handled by another thread, or come as the caller entered its read of S3's answer, was raised only once
    S3 answered, or at the client's read timeout (a minute). A stop abandons it (:func:`_abandon`): a request not
    sent by then never is (its multipart upload aborted), so ``transfer.creating`` tells whether S3 had it. An
    abandoned transfer to the same key still going on (its request held by a slow S3) refuses this write at once, its
    line saying to try again, as that transfer's hooks refused it when it was made in the caller's thread."""
    with _TRANSFERS_LOCK:
        other = _TRANSFERS.get(transfer.where)
        if other is not None and other.abandoned:
            raise AbandonedUpload(*transfer.where)
    answer = []
    transfer.over.clear()  # (sent again after a 409: run again; cleared before it can be abandoned)
    _in_thread(lambda: _transfer_in_place(transfer, lambda: answer.append(create())),
               on_abandon=lambda: _abandon(client, transfer))
    return answer[0]


# A create-only write's own id, in its object's user metadata: botocore retries a PUT whose answer was lost (a 500
# after S3 stored it), and S3 refuses that retry (412) because of the object the first attempt created. Told apart
# by this id, it is that write's success, not "already exists" about this run's own file (which then stayed, never
# taken back: a trial table claimed for a bundle that was not saved refused every rerun).
WRITE_ID_META = "fasttext-write"


def _created_by_an_earlier_attempt(client, bucket, key, write_id, refused):
    """A HEAD's answer (its ``VersionId``: the version a take-back deletes) where the object at ``key`` that made
    S3 refuse ``refused`` (a 412) is this write's, created by an attempt botocore retried; else None."""
    if not (refused.response.get("ResponseMetadata") or {}).get("RetryAttempts"):
        return None  # (refused at the first attempt: someone else's object)
    try:
        head = client.head_object(Bucket=bucket, Key=key)
    except Exception:  # noqa: BLE001 - cannot tell (no s3:GetObject): refused as before, nothing of ours assumed
        return None
    if (head.get("Metadata") or {}).get(WRITE_ID_META) != write_id:
        return None
    return {"VersionId": head.get("VersionId")} if head.get("VersionId") else {}


def _conditional_writes(client):
    """Whether this botocore knows PutObject's ``IfNoneMatch`` (S3 conditional writes, botocore 1.35 on)."""
    return "IfNoneMatch" in _operation_members(client)


def _create_object(client, path, bucket, key, metadata=None):
    """Upload ``path`` with ``If-None-Match: *`` (boto3's managed upload cannot pass it): one PUT, or a
    multipart upload whose completion carries the condition (aborted on any failure). Returns S3's answer."""
    if os.path.getsize(path) <= CONDITIONAL_PART_BYTES:
        with open(path, "rb") as f:
            return client.put_object(Bucket=bucket, Key=key, Body=f, IfNoneMatch="*",
                                     **({"Metadata": metadata} if metadata else {}))
    upload = client.create_multipart_upload(Bucket=bucket, Key=key, **({"Metadata": metadata} if metadata else {}))["UploadId"]
    try:
        parts = []
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(CONDITIONAL_PART_BYTES), b""):
                number = len(parts) + 1
                etag = client.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=number, Body=chunk)["ETag"]
                parts.append({"PartNumber": number, "ETag": etag})
        return client.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload,
                                                MultipartUpload={"Parts": parts}, IfNoneMatch="*")
    except BaseException:
        with contextlib.suppress(Exception):
            client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload)
        raise


def _operation_members(client, operation="PutObject"):
    """The parameters this botocore's ``operation`` takes (PutObject's ``IfNoneMatch`` / ``IfMatch``: conditional
    writes; DeleteObject's ``IfMatch``: conditional deletes); none where its model cannot say."""
    try:
        return set(client.meta.service_model.operation_model(operation).input_shape.members)
    except Exception:  # noqa: BLE001 - a botocore without it, or a model that cannot say: plain requests
        return set()


def _keeps_versions(client, bucket):
    """Whether ``bucket`` keeps versions (versioning enabled or suspended): there a DELETE without a version id deletes
    nothing but adds a delete marker, of a key that does not exist too, and an object put and deleted stays as a
    noncurrent version, so a probe by either leaves something behind. None where S3 will not say (no
    s3:GetBucketVersioning, or an S3-compatible store without that API that answers 400 or 405): it may. False where it
    never has (or a store that says it has no versioning: 501)."""
    try:
        status = client.get_bucket_versioning(Bucket=bucket).get("Status")
    except Exception as exc:
        if is_forbidden(exc):
            return None
        if _status(exc) == 501:
            return False
        code = (getattr(exc, "response", None) or {}).get("Error", {}).get("Code")
        if _status(exc) in (400, 405) and code not in _CREDENTIALS_REFUSED + ("AuthorizationHeaderMalformed",):
            return None  # (every write to such a store failed on this answer; expired credentials still say so)
        raise
    return status in ("Enabled", "Suspended")


def _may_delete(client, bucket, key, keeps_versions):
    """Whether S3 lets us delete ``key``, which does not exist, asked without writing anything; None where that
    cannot be told. ``keeps_versions``: :func:`_keeps_versions` of ``bucket``. Where it is False a plain DELETE asks
    (of a key no object has, it changes nothing). Else that DELETE would leave a delete marker: it is made conditional
    on an object being there (If-Match: *), which S3 authorizes first (403: not allowed) and then refuses (404; 412),
    deleting nothing. A store that ignored the condition and left a marker anyway has it removed (by its version id);
    one that cannot take the condition (400, 501), or a botocore without it, cannot tell."""
    if keeps_versions is False:
        try:
            client.delete_object(Bucket=bucket, Key=key)
        except Exception as exc:
            if is_forbidden(exc):
                return False
            raise
        return True
    if "IfMatch" not in _operation_members(client, "DeleteObject"):
        return None
    try:
        answer = client.delete_object(Bucket=bucket, Key=key, IfMatch="*")
    except Exception as exc:
        if is_forbidden(exc):
            return False
        if _is_missing(exc) or _status(exc) == 412:  # (a missing bucket is 404 too: NoSuchBucket, raised)
            return True
        if _status(exc) in (400, 501):
            return None
        raise
    if answer.get("DeleteMarker") and answer.get("VersionId"):
        try:
            client.delete_object(Bucket=bucket, Key=key, VersionId=answer["VersionId"])
        except Exception as exc:  # noqa: BLE001 - said, not fatal: the check itself was answered
            print(f"warning: could not remove the delete marker that a check of s3://{bucket} left at {key} "
                  f"({_first_line(exc)}): delete that version by hand", file=sys.stderr)
    return True
