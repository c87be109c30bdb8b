"""A published set's files leave no noncurrent version when the set is replaced or removed, in a bucket that keeps
versions (storage/sets.py, storage/versions.py).

Where versioning is on, a DELETE without a version id deletes nothing: it adds a delete marker and the data stays as
a noncurrent version, billed for good and seen by no listing. A republished bundle's old files, a checkpoint's older
epochs (~800 MB each for a bigram model) and the orphans a killed publish left were all deleted so. Each is now
deleted by the version its upload created (the manifest records it), and only where that version is still the current
one; the rest as before.
"""
import json
import os

import boto3
import pytest

from fault_proxy import FaultProxy
from conftest import as_user
from fasttext_lib import storage
from fasttext_lib.errors import FastTextError
from test_storage import MANIFEST, load_tag, make_files, one_line, plain_deletes, versions_under


@pytest.fixture
def logged(s3_server, monkeypatch):
    """A FaultProxy in front of the session's S3 server, logging every request."""
    with FaultProxy(s3_server) as p:
        monkeypatch.setenv("AWS_ENDPOINT_URL", p.endpoint)
        yield p


def _set_objects(dest):
    """The manifest and the data objects it names, as versions_under shows them (the keys after ``dest/``)."""
    return sorted([MANIFEST] + [v["object"] for v in storage.read_manifest(dest, MANIFEST)["files"].values()])


def _versioned(s3_bucket, status="Enabled"):
    bucket = s3_bucket[len("s3://"):]
    boto3.client("s3").put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": status})
    return bucket


@pytest.mark.parametrize("then", ["republished", "removed", "republished, uploaded in parts"])
def test_a_replaced_or_removed_set_leaves_no_version_of_its_files(tmp_path, s3_bucket, then):
    """A bundle republished to its prefix (or a checkpoint epoch removed): every object of the old set is gone for
    good, the replaced manifest's version too; only the removed manifest's delete marker stays (a plain DELETE hides
    the set from readers at once: its version deleted alone would bring back whatever manifest was there before it).
    A checkpoint's model.params is uploaded in parts: the version CompleteMultipartUpload created is recorded too.
    (Not tested where versioning was suspended since: moto's plain DELETE there deletes every version, which S3's
    does not.)"""
    _versioned(s3_bucket)
    dest = f"{s3_bucket}/models/run"
    size = storage.UPLOAD_PART_BYTES + 1 if then.endswith("in parts") else 2000  # (a multipart upload's version too)
    storage.publish(dest, make_files(tmp_path, "old", size), MANIFEST, {"tag": "old"})
    if then.startswith("republished"):
        storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
        assert load_tag(dest, tmp_path) == "new"
        assert versions_under(dest) == (_set_objects(dest), [])
    else:
        storage.remove(dest, MANIFEST)
        assert versions_under(dest) == ([], [MANIFEST])


def test_in_a_bucket_that_keeps_no_versions_a_republish_asks_nothing_more(tmp_path, s3_bucket, logged):
    """No version is recorded where the bucket keeps none (the PUT answers none): the replaced files get the plain
    DELETE they always had, and no request is added (no HEAD of them, no GetBucketVersioning)."""
    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    assert all("version" not in entry for entry in storage.read_manifest(dest, MANIFEST)["files"].values())
    logged.clear()
    storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    storage.remove(dest, MANIFEST)
    assert [q for _, _, q in logged.log if "version" in q.lower()] == []
    assert [p for m, p, _ in logged.log if m == "HEAD" and p.endswith((".params", ".json")) and MANIFEST not in p] == []
    assert len(plain_deletes(logged)) == 7  # 3 replaced files; the manifest and 3 files removed
    assert versions_under(dest) == ([], [])


def test_a_file_whose_current_version_is_not_the_one_recorded_is_only_hidden(tmp_path, s3_bucket):
    """A file of the set rewritten in place since (a copy onto itself: a storage class changed by hand, a set synced
    from another bucket) holds a version this library did not create: that one is never deleted by version. The file
    gets the plain DELETE, as before, and both its versions stay; the set's other files go for good."""
    bucket = _versioned(s3_bucket)
    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    old = _set_objects(dest)
    rewritten = next(name for name in old if name.startswith("vocab-"))
    key = f"models/run/{rewritten}"
    copied = boto3.client("s3").copy_object(Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": key},
                                            StorageClass="STANDARD_IA")["VersionId"]
    storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    assert versions_under(dest) == (sorted(_set_objects(dest) + [rewritten, rewritten]), [rewritten])
    listed = boto3.client("s3").list_object_versions(Bucket=bucket, Prefix=key)["Versions"]
    assert copied in [v["VersionId"] for v in listed]


@pytest.mark.parametrize("version", [5, None, True, ["3HL4kqtJlcpXroDTDmJ"], {"id": "3HL4kqtJlcpXroDTDmJ"}, ""])
def test_a_manifest_whose_recorded_version_is_no_version_id_is_refused_in_one_line_and_nothing_deleted(
        tmp_path, s3_bucket, version):
    """A manifest edited by hand (or by a tool) so that a file's recorded ``"version"`` is no S3 version id (a number,
    a list, null, an empty string): it was silently taken for "no version recorded", and the replaced or removed set's
    files got the plain DELETE, each staying as a noncurrent version, billed, with nothing said. Such a manifest is
    malformed as a broken ``"files"`` entry is: reading, replacing and removing the set are each refused in one line
    naming the field, and nothing is deleted. (A string S3 does not know as the file's current version is never
    trusted either: test_a_file_whose_current_version_is_not_the_one_recorded_is_only_hidden.)"""
    bucket = _versioned(s3_bucket)
    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    client, key = boto3.client("s3"), f"models/run/{MANIFEST}"
    manifest = json.loads(client.get_object(Bucket=bucket, Key=key)["Body"].read())
    manifest["files"]["model.params"]["version"] = version
    client.put_object(Bucket=bucket, Key=key, Body=json.dumps(manifest).encode())
    before = versions_under(dest)
    said = (f'{dest}/{MANIFEST} is malformed: the "version" of its file model.params is {version!r}, not an S3 '
            f'version id (a non-empty string)')
    for attempt in (lambda: load_tag(dest, tmp_path),
                    lambda: storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"}),
                    lambda: storage.remove(dest, MANIFEST)):
        with pytest.raises(FastTextError) as exc:
            attempt()
        assert said in one_line(exc.value)
    assert versions_under(dest) == before


def test_orphans_of_a_killed_publish_are_collected_leaving_no_version(tmp_path, s3_bucket, monkeypatch):
    """A killed publish's uploaded files are orphans no manifest names (nor their versions): the next publish past
    the grace period deletes each by its current version (its name is unique to that publish: no one else wrote it)."""
    bucket = _versioned(s3_bucket)
    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    orphan = "model-0123456789abcdef.params"
    boto3.client("s3").put_object(Bucket=bucket, Key=f"models/run/{orphan}", Body=b"what a killed publish uploaded")
    monkeypatch.setattr(storage.sets, "ORPHAN_GRACE_SECONDS", -1)
    storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    assert versions_under(dest) == (_set_objects(dest), [])


def test_a_role_that_may_not_delete_versions_gets_the_plain_delete_and_one_line_naming_what_stays(
        s3_policy_server, tmp_path, monkeypatch, capsys):
    """Without s3:DeleteObjectVersion the old set's files are deleted as before (a delete marker each, the data kept
    as a noncurrent version), the replaced manifest stays as one, and one warning line names them all so that the
    user can delete those versions or set a lifecycle rule; the publish itself succeeds."""
    policy = s3_policy_server
    admin, bucket = policy.client("admin"), f"versioned-{os.urandom(6).hex()}"
    admin.create_bucket(Bucket=bucket)
    admin.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    with FaultProxy(policy.endpoint) as proxy:
        as_user(monkeypatch, policy, "lister")
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        dest = f"s3://{bucket}/models/run"
        storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
        old = [name for name in _set_objects(dest) if name != MANIFEST]
        capsys.readouterr()
        storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
        assert load_tag(dest, tmp_path) == "new"
        assert any("versionId" in q for m, _, q in proxy.log if m == "DELETE")  # asked, and refused
    listed = admin.list_object_versions(Bucket=bucket, Prefix="models/run/")
    assert sorted(m["Key"] for m in listed.get("DeleteMarkers", [])) == [f"models/run/{name}" for name in old]
    notes = [line for line in capsys.readouterr().err.splitlines() if "s3:DeleteObjectVersion" in line]
    assert len(notes) == 1, notes
    assert all(f"{dest}/{name}" in notes[0] for name in old + [MANIFEST]), notes
    assert notes[0].startswith("warning: ") and "noncurrent version" in notes[0], notes


def test_a_role_that_may_not_delete_versions_is_told_so_once_per_bucket_not_at_every_replacement(
        s3_policy_server, tmp_path, monkeypatch, capsys):
    """A checkpointed run replaces its checkpoint at every epoch's end: without s3:DeleteObjectVersion the same
    warning came at each (9 lines in a run of 10 epochs). It is said once per bucket in a process, and says that
    what is deleted there later stays as a noncurrent version too; another bucket is told about again."""
    policy = s3_policy_server
    admin = policy.client("admin")
    buckets = [f"versioned-{os.urandom(6).hex()}" for _ in range(2)]
    for bucket in buckets:
        admin.create_bucket(Bucket=bucket)
        admin.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    as_user(monkeypatch, policy, "lister")
    capsys.readouterr()
    for bucket in buckets:
        for tag in ("epoch1", "epoch2", "epoch3", "epoch4"):
            storage.publish(f"s3://{bucket}/ckpt", make_files(tmp_path, tag), MANIFEST, {"tag": tag})
        assert load_tag(f"s3://{bucket}/ckpt", tmp_path) == "epoch4"
    notes = [line for line in capsys.readouterr().err.splitlines() if "s3:DeleteObjectVersion" in line]
    assert len(notes) == 2, notes
    for bucket, note in zip(buckets, notes):
        assert f"s3://{bucket}/ckpt/" in note and note.endswith("stays so too)"), note
        assert f"in s3://{bucket} stays" in note, note
    listed = admin.list_object_versions(Bucket=buckets[0], Prefix="ckpt/")
    assert len(listed.get("DeleteMarkers", [])) >= 3 * 2  # (each replaced set's files: deleted, as before)
