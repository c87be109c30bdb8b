"""Local paths and ``s3://`` URIs behind one small API.

Reads stream through smart_open (so a 400 MB training file is never held twice), writes are
atomic: a local file is written under a temporary name and renamed; an S3 "directory" is uploaded
with its marker file last and removed again if anything fails.

The S3 endpoint comes from the standard boto3 configuration, so ``AWS_ENDPOINT_URL`` points every
client (boto3, smart_open, the sagemaker SDK) at a local server in tests and demos.
"""
import contextlib
import os
import shutil
import tempfile
from urllib.parse import urlparse

from .errors import FastTextError


def is_s3(uri):
    return str(uri).startswith("s3://")


def split_s3(uri):
    """``s3://bucket/a/b`` -> ``("bucket", "a/b")``; a URI without a bucket is a user error."""
    parsed = urlparse(str(uri))
    if parsed.scheme != "s3" or not parsed.netloc:
        raise FastTextError(f"not a valid S3 URI (expected s3://bucket/key): {uri}")
    return parsed.netloc, parsed.path.lstrip("/")


def join(base, *parts):
    base = str(base)
    if is_s3(base):
        return "/".join([base.rstrip("/")] + [p.strip("/") for p in parts])
    return os.path.join(base, *parts)


def s3_client():
    import boto3

    return boto3.session.Session().client("s3")


@contextlib.contextmanager
def s3_errors(uri):
    """Turn the botocore failures a user causes into one-line :class:`FastTextError`."""
    import botocore.exceptions as bex

    try:
        yield
    except (bex.NoCredentialsError, bex.PartialCredentialsError):
        raise FastTextError(f"no AWS credentials found for {uri} (set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile)") from None
    except bex.NoRegionError:
        raise FastTextError(f"no AWS region configured for {uri} (set AWS_DEFAULT_REGION)") from None
    except bex.EndpointConnectionError as exc:
        raise FastTextError(f"cannot reach the S3 endpoint for {uri}: {exc}") from None
    except bex.ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        bucket = split_s3(uri)[0]
        if code in ("NoSuchBucket",):
            raise FastTextError(f"S3 bucket does not exist: {bucket} (for {uri})") from None
        if code in ("NoSuchKey", "404", "NotFound"):
            # HEAD answers a bare 404 for a missing bucket too: ask about the bucket to say which.
            if not _bucket_exists(bucket):
                raise FastTextError(f"S3 bucket does not exist: {bucket} (for {uri})") from None
            raise FastTextError(f"no such S3 object: {uri}") from None
        if code in ("AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
            raise FastTextError(f"access denied to {uri} ({code}): check your AWS credentials") from None
        raise FastTextError(f"S3 error {code or exc} for {uri}") from None


def _bucket_exists(bucket):
    import botocore.exceptions as bex

    try:
        s3_client().head_bucket(Bucket=bucket)
        return True
    except bex.ClientError as exc:
        return exc.response.get("Error", {}).get("Code") not in ("404", "NoSuchBucket", "NotFound")


def _check_s3_object(uri):
    bucket, key = split_s3(uri)
    if not key or key.endswith("/"):
        raise FastTextError(f"S3 URI names no object: {uri}")
    with s3_errors(uri):
        s3_client().head_object(Bucket=bucket, Key=key)


def exists(uri):
    if is_s3(uri):
        bucket, key = split_s3(uri)
        import botocore.exceptions as bex

        try:
            s3_client().head_object(Bucket=bucket, Key=key)
            return True
        except bex.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            with s3_errors(uri):
                raise
    return os.path.exists(uri)


def open_read(uri, mode="rb"):
    """Open a local file or S3 object for streaming reads, with one-line errors for what is missing."""
    uri = str(uri)
    if is_s3(uri):
        _check_s3_object(uri)
        from smart_open import open as smart_open

        with s3_errors(uri):
            return smart_open(uri, mode)
    if os.path.isdir(uri):
        raise FastTextError(f"expected a file but got a directory: {uri}")
    if not os.path.exists(uri):
        raise FastTextError(f"no such file: {uri}")
    return open(uri, mode)


def read_bytes(uri):
    with open_read(uri, "rb") as f:
        return f.read()


@contextlib.contextmanager
def atomic_local_file(path, mode="wb"):
    """Write ``path`` via a temporary sibling that is renamed into place only on success."""
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, mode) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        raise


@contextlib.contextmanager
def atomic_write(uri, mode="wb"):
    """Atomically write a local file or an S3 object (S3 PUTs are atomic: stage locally, then upload)."""
    uri = str(uri)
    if not is_s3(uri):
        with atomic_local_file(uri, mode) as f:
            yield f
        return
    bucket, key = split_s3(uri)
    with tempfile.TemporaryDirectory() as tmpdir:
        staged = os.path.join(tmpdir, "object")
        with open(staged, mode) as f:
            yield f
        with s3_errors(uri):
            s3_client().upload_file(staged, bucket, key)


def upload_file(local_path, uri):
    bucket, key = split_s3(uri)
    with s3_errors(uri):
        s3_client().upload_file(str(local_path), bucket, key)


def publish_directory(local_dir, dest, marker):
    """Copy the files of ``local_dir`` to ``dest`` (a directory or an ``s3://`` prefix) atomically.

    Readers look for ``marker`` first, so it is written last: a reader never sees a partial copy.
    Locally the whole directory is renamed into place; on S3 the files are uploaded with the
    sagemaker SDK's ``S3Uploader``, then the marker, and everything uploaded is deleted on failure.
    """
    names = sorted(os.listdir(local_dir))
    if marker not in names:
        raise ValueError(f"{local_dir} has no {marker}")
    if not is_s3(dest):
        dest = os.path.abspath(dest)
        if os.path.isfile(dest):
            raise FastTextError(f"output exists and is a file, not a directory: {dest}")
        parent = os.path.dirname(dest)
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix="." + os.path.basename(dest) + ".", dir=parent)
        try:
            for name in names:
                shutil.copy2(os.path.join(local_dir, name), os.path.join(staging, name))
            old = None
            if os.path.exists(dest):
                old = staging + ".old"
                os.rename(dest, old)
            os.rename(staging, dest)
            if old:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return dest

    bucket, prefix = split_s3(dest)
    prefix = prefix.rstrip("/")
    client = s3_client()
    with s3_errors(dest):
        client.head_bucket(Bucket=bucket)
    from .sagemaker_utils import s3_uploader_upload

    uploaded = []
    try:
        for name in [n for n in names if n != marker] + [marker]:
            uri = f"s3://{bucket}/{prefix}/{name}" if prefix else f"s3://{bucket}/{name}"
            with s3_errors(uri):
                s3_uploader_upload(os.path.join(local_dir, name), uri.rsplit("/", 1)[0])
            uploaded.append(uri)
    except BaseException:
        for uri in uploaded:
            with contextlib.suppress(Exception):
                b, k = split_s3(uri)
                client.delete_object(Bucket=b, Key=k)
        raise
    return f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"


def remove_directory(uri, names):
    """Delete the named files of a local directory or ``s3://`` prefix (and the directory if empty)."""
    if is_s3(uri):
        bucket, prefix = split_s3(uri)
        client = s3_client()
        with s3_errors(uri):
            for name in names:
                client.delete_object(Bucket=bucket, Key=f"{prefix.rstrip('/')}/{name}")
        return
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(uri, name))
    with contextlib.suppress(OSError):
        os.rmdir(uri)


def fetch_directory(src, names, local_dir):
    """Copy the named files of a local directory or ``s3://`` prefix into ``local_dir``."""
    for name in names:
        with open_read(join(src, name), "rb") as fin, open(os.path.join(local_dir, name), "wb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
