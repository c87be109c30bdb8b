"""Deleting what this run wrote to S3 for good, also in a bucket that keeps versions.

Where versioning is enabled (or suspended), a DELETE without a version id deletes nothing: it adds a delete marker,
and the object stays as a noncurrent version, billed for good and seen by no listing. The objects the library writes
and deletes again (a pair's staging objects, full copies of a train split; the data files of a publish that failed)
stayed so after every write. Each is deleted by the version its write created (S3 answers it: ``VersionId``): no
marker, nothing kept. Only that version, never one the library did not create, and only under keys that no one else
writes (a run's unique id is in each). Where S3 refuses a delete by version (no s3:DeleteObjectVersion), the plain
DELETE is sent, as before, and one line on stderr names the objects whose noncurrent versions stay. In a bucket
that has never kept versions nothing changes: the DELETEs are the plain ones they were.

A published set's files (a bundle's, a checkpoint's: ~800 MB for a bigram model) are deleted again when the set is
replaced or removed, a checkpoint's at every epoch: by the version their upload created, which the set's manifest
records (``delete_set_object``), and only while it is still the current one; a replaced or removed manifest's
version once it is noncurrent (``delete_replaced``). Files no manifest records a version of (written before
versions were recorded) get the plain DELETE, as before.
"""
import sys

from .s3 import _first_line, _is_missing, _keeps_versions, is_forbidden, may_still_create

_NULL = "null"  # the version id of an object written while versioning was off or suspended


def delete_written(client, written, keeps_versions=None):
    """Delete the objects this run wrote, ``written``: ``(bucket, key, answer)`` each, ``answer`` the answer of the
    write that created it (its ``VersionId``, absent where the bucket keeps none), or None where that write got none
    (it failed, or a signal stopped it): then it may have created the object all the same, or not. ``keeps_versions``:
    ``{bucket: s3._keeps_versions(...)}`` where known (a dict the missing buckets are asked into, once each).
    Returns what could not be deleted, ``(bucket, key, reason)`` each; says on stderr what stays as a noncurrent
    version."""
    keeps_versions = {} if keeps_versions is None else keeps_versions
    left, kept = [], []
    for bucket, key, answer in written:
        try:
            version = _version_to_delete(client, bucket, key, answer, keeps_versions)
            if version is not None:
                _delete_version(client, bucket, key, version, kept)
        except Exception as exc:  # noqa: BLE001 - said by the caller, beside what it was deleting
            left.append((bucket, key, "access denied" if is_forbidden(exc) else _first_line(exc)))
    say_kept(kept)
    return left


_REFUSED_IN = set()  # the buckets where say_kept has said so in this process (said once per bucket)


def say_kept(kept, what="the temporary object(s)", written_by="this run", hidden_by="a delete marker"):
    """One line on stderr naming the objects (``s3://`` URIs) this run wrote and deleted without their version (S3
    refused a delete by version): each stays as a noncurrent version, billed, which no listing shows. ``what``,
    ``written_by``, ``hidden_by``: what they are, who wrote them and what hid them, as the line says it. Said once per
    bucket and process: a checkpointed run deletes the epoch before at every epoch's end, and said it 9 times in a run
    of 10 epochs, the same advice each time."""
    new = [uri for uri in kept if _bucket_of(uri) not in _REFUSED_IN]
    if new:
        buckets = sorted({_bucket_of(uri) for uri in new})
        _REFUSED_IN.update(buckets)
        print(f"warning: S3 refused to delete by version (s3:DeleteObjectVersion) {what} "
              f"{', '.join(new)} that {written_by} wrote, in a bucket that keeps versions: each was deleted by "
              f"{hidden_by} and stays there as a noncurrent version (billed): delete those versions, or have a "
              f"lifecycle rule expire noncurrent versions (said once: what this process deletes later in "
              f"{', '.join(f's3://{b}' for b in buckets)} stays so too)", file=sys.stderr)


def _bucket_of(uri):
    return uri[len("s3://"):].split("/", 1)[0]


def delete_set_object(client, bucket, key, recorded, kept, keeps_versions):
    """Delete ``key``, a data object of a published set (a bundle's, a checkpoint's) under a name unique to the
    publish that wrote it, which nothing else writes. ``recorded``: the version its upload created, as the set's
    manifest records it; ``""`` where it records none (a set published before versions were recorded, or where the
    bucket kept none): the plain DELETE, as before; None where no manifest names it (an orphan a killed publish
    left, its upload's answer lost): looked up, where the bucket keeps versions (``keeps_versions``: as
    :func:`delete_written` takes it). A version is deleted only while it is the current one, and where one was
    recorded only if it is that one: a file rewritten since (copied onto itself, synced from another bucket) holds
    a version this library did not create, which the plain DELETE only hides. A key that is gone gets no DELETE (it
    would add a marker). Where S3 refuses the delete by version: the plain DELETE, and the key noted in ``kept``."""
    if recorded == "" or (recorded is None and _keeps(client, bucket, keeps_versions) is False):
        _delete_version(client, bucket, key, "", kept)
        return
    try:
        current = client.head_object(Bucket=bucket, Key=key).get("VersionId") or ""
    except Exception as exc:  # noqa: BLE001 - refused (no s3:GetObject), failed: by what is known, as before
        if _is_missing(exc):
            return
        current = recorded or ""
    if recorded and current != recorded:
        current = ""
    _delete_version(client, bucket, key, current, kept)


def delete_replaced(client, bucket, key, read, replacing, kept):
    """Delete the version of ``key`` (a set's manifest) that ``read`` (the GetObject answer it was read by) got, now
    that the write or plain DELETE answered ``replacing`` replaced it: a noncurrent version then, whose deletion
    changes nothing a reader sees (a current one deleted by version would bring back the one before it: a manifest
    naming files long deleted). Nothing where either answer names no version, or both the same one (versioning
    suspended: the null version was replaced in place). ``kept``: as :func:`delete_set_object` notes refusals."""
    version, replaced_by = (read or {}).get("VersionId"), (replacing or {}).get("VersionId")
    if version and replaced_by and version != replaced_by and not delete_version(client, bucket, key, version):
        kept.append(f"s3://{bucket}/{key}")


def _keeps(client, bucket, keeps_versions):
    """``s3._keeps_versions`` of ``bucket``, asked once into ``keeps_versions`` (None where S3 will not say)."""
    if bucket not in keeps_versions:
        try:
            keeps_versions[bucket] = _keeps_versions(client, bucket)
        except Exception:  # noqa: BLE001 - not known: as where S3 will not say
            keeps_versions[bucket] = None
    return keeps_versions[bucket]


def _version_to_delete(client, bucket, key, answer, keeps_versions):
    """The version of ``key`` to delete: its write's, ``""`` for a plain DELETE (a bucket that never kept versions, or
    one S3 will not say of), None for no DELETE at all (nothing is there: a DELETE would only add a marker)."""
    versioned = _keeps(client, bucket, keeps_versions)
    if answer is None:  # the write got no answer: what is there, if anything, is ours (its key is this run's)
        if versioned is False:
            return ""
        if may_still_create(bucket, key):  # its abandoned transfer deletes what it creates (upload_file's on_late)
            return None
        try:
            answer = client.head_object(Bucket=bucket, Key=key)
        except Exception as exc:  # noqa: BLE001 - refused (no s3:GetObject): the plain DELETE, as before
            return None if _is_missing(exc) else ""
    return created_version(answer) or (_NULL if versioned else "")  # (suspended: the null version is what our write put there)


def _delete_version(client, bucket, key, version, kept):
    """Delete ``version`` of ``key`` (``""``: a plain DELETE); where S3 refuses a delete by version, the plain DELETE,
    and ``key`` noted in ``kept``."""
    if not version:
        client.delete_object(Bucket=bucket, Key=key)
    elif not delete_version(client, bucket, key, version):
        client.delete_object(Bucket=bucket, Key=key)
        kept.append(f"s3://{bucket}/{key}")


def delete_version(client, bucket, key, version):
    """Delete ``version`` of ``key`` for good (no delete marker); False where S3 refuses (no s3:DeleteObjectVersion).
    A version gone already is no error (deleted meanwhile: by the abandoned transfer that created it)."""
    try:
        client.delete_object(Bucket=bucket, Key=key, VersionId=version)
    except Exception as exc:
        if _is_missing(exc) or getattr(exc, "response", {}).get("Error", {}).get("Code") == "NoSuchVersion":
            return True
        if is_forbidden(exc):
            return False
        raise
    return True


def take_back_version(client, written):
    """Delete the version the write ``written`` (``(bucket, key, answer)``: atomic_write's) created over an earlier
    object, which is then the current one again, as it was (written back instead, it stayed as a noncurrent version
    beside two more). False where there is none to delete by (the bucket keeps no versions; versioning suspended,
    where the write replaced the null version) or S3 refuses (no s3:DeleteObjectVersion): the caller writes the
    earlier bytes back then."""
    bucket, key, answer = written
    version = created_version(answer)
    return version is not None and delete_version(client, bucket, key, version)


def created_version(answer):
    """The version a write created, from its answer (or a HEAD's): None where there is none to delete by (the
    bucket keeps no versions, or the write got no answer), or it is the null version (versioning suspended)."""
    version = (answer or {}).get("VersionId")
    return version if version and version != _NULL else None
