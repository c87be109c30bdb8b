"""Atomic set publishing and the S3 error contract, under real faults.

Faults are real: a loopback proxy (scripts/fault_proxy.py) in front of moto answers 500, refuses or
resets the connection; a tiny tmpfs fills up; publishing subprocesses are killed with SIGKILL;
two processes publish to one place at once. After each: the old set or the new one, complete.
"""
import contextlib
import errno
import functools
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import boto3
import pytest

from conftest import (ROOT, as_user as _as_user, free_port, interrupted_at_the_stall, stopped_at_a_put,
                      stopped_at_the_stall, wait_for_abandoned_transfers)
from fault_proxy import FaultProxy
from fasttext_lib import storage
from fasttext_lib.errors import FastTextError

# (the faults here are retried on purpose: the retries are under test, not botocore's wait before each)
pytestmark = pytest.mark.usefixtures("no_backoff_between_botocore_retries")

MANIFEST = "config.json"
NAMES = ("model.params", "vocab.json", "metrics.json")


def make_files(tmp_path, tag, size=2000):
    """Three files whose contents all carry ``tag``; model.params is ``size`` bytes."""
    d = tmp_path / f"src-{tag}"
    d.mkdir(exist_ok=True)
    paths = {}
    for name in NAMES:
        p = d / name
        p.write_bytes((tag.encode() * size)[:size] if name == "model.params" else f'{{"tag": "{tag}"}}'.encode())
        paths[name] = str(p)
    return paths


def load_tag(src, tmp_path):
    """Read and verify the whole set at ``src``; the tag every file carries (they must agree: no mix)."""
    out = tmp_path / f"fetched-{os.urandom(4).hex()}"
    out.mkdir()
    manifest, got = storage.read_set(src, MANIFEST, NAMES, str(out))
    tags = {json.load(open(got["vocab.json"]))["tag"], json.load(open(got["metrics.json"]))["tag"],
            open(got["model.params"], "rb").read(len(manifest["tag"])).decode(), manifest["tag"]}
    assert len(tags) == 1, f"mixed set: {tags}"
    return tags.pop()


def one_line(exc):
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text, text
    return text


def s3_names(uri):
    bucket, prefix = storage.split_s3(uri)
    objs = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix=prefix + "/").get("Contents", [])
    return sorted(o["Key"][len(prefix) + 1:] for o in objs)


# ---------------------------------------------------------------- local


def test_local_publish_replaces_the_whole_set_and_removes_the_old_files(tmp_path):
    dest = str(tmp_path / "bundle")
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    old_objects = {v["object"] for v in storage.read_manifest(dest, MANIFEST)["files"].values()}
    storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    assert load_tag(dest, tmp_path) == "new"
    new = storage.read_manifest(dest, MANIFEST)
    assert new["written_by"] == "fasttext_lib"
    assert sorted(os.listdir(dest)) == sorted([MANIFEST, ".fasttext.lock"] + [v["object"] for v in new["files"].values()])
    assert not old_objects & set(os.listdir(dest))


def test_publishing_temporaries_links_them_instead_of_copying(tmp_path):
    """move=True (bundles and checkpoints publish their staged files so): on the same filesystem
    the published objects are the staged files themselves, verified on reading like copies, and
    removing the staged files afterwards (the staging directory going away) leaves the set whole."""
    dest = str(tmp_path / "bundle")
    for tag in ("old", "new"):
        staged = make_files(tmp_path, tag)
        storage.publish(dest, staged, MANIFEST, {"tag": tag}, move=True)
        manifest = storage.read_manifest(dest, MANIFEST)
        for name, path in staged.items():
            assert os.path.samefile(path, os.path.join(dest, manifest["files"][name]["object"]))
            os.remove(path)
        assert load_tag(dest, tmp_path) == tag
    assert sorted(os.listdir(dest)) == sorted([MANIFEST, ".fasttext.lock"] + [v["object"] for v in manifest["files"].values()])
    copied = make_files(tmp_path, "copied")
    storage.publish(dest, copied, MANIFEST, {"tag": "copied"})  # move=False: copies, the caller's files stay its own
    manifest = storage.read_manifest(dest, MANIFEST)
    assert not os.path.samefile(copied["model.params"], os.path.join(dest, manifest["files"]["model.params"]["object"]))


def _no_memory_for_a_buffer(*args, **kwargs):
    raise MemoryError()


def test_a_set_read_or_written_without_memory_for_its_buffers_is_one_line_naming_it(tmp_path, monkeypatch):
    """Under a very tight ``ulimit -v`` the 1 MB buffer that copies (and hashes) a set's files could not be had: a
    bare MemoryError, which named neither the bundle or checkpoint nor what to do, before any memory check of the
    caller's. Now one line naming the set; a publish leaves the set that was there, and nothing of its own."""
    dest = str(tmp_path / "bundle")
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    before = sorted(os.listdir(dest))
    monkeypatch.setattr(storage.sets.shutil, "copyfileobj", _no_memory_for_a_buffer)
    with pytest.raises(FastTextError) as caught:
        load_tag(dest, tmp_path)
    assert str(caught.value) == (f"out of memory to read {dest} (an allocation failed); use a machine with more "
                                 f"memory, or raise this process's limit (ulimit -v) if it has one")
    monkeypatch.setattr(storage.sets, "hash_file", _no_memory_for_a_buffer)
    monkeypatch.setattr(storage.sets, "_copy_hashing", _no_memory_for_a_buffer)
    for move in (False, True):
        with pytest.raises(FastTextError, match=f"^out of memory to write {re.escape(dest)} \\(an allocation failed\\); "):
            storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"}, move=move)
        assert sorted(os.listdir(dest)) == before
    monkeypatch.undo()
    assert load_tag(dest, tmp_path) == "old"


def test_linked_temporaries_are_synced_before_linking_and_a_failed_sync_publishes_nothing(tmp_path, monkeypatch):
    """move=True hashes a staged file while another thread fsyncs it: every file must still be synced
    (finished) before it is linked and the manifest names it, and a failing fsync fails the publish."""
    import errno

    synced, real_fsync, real_link = set(), os.fsync, os.link

    def fsync(fd):
        real_fsync(fd)
        synced.add(os.fstat(fd).st_ino)

    def link(src, dst):
        assert os.stat(src).st_ino in synced, f"{src} linked before its fsync finished"
        real_link(src, dst)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "link", link)
    dest = str(tmp_path / "bundle")
    staged = make_files(tmp_path, "synced")
    storage.publish(dest, staged, MANIFEST, {"tag": "synced"}, move=True)
    assert {os.stat(p).st_ino for p in staged.values()} <= synced and load_tag(dest, tmp_path) == "synced"

    def failing(fd):
        raise OSError(errno.EIO, os.strerror(errno.EIO))
    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(FastTextError, match="Input/output error"):
        storage.publish(dest, make_files(tmp_path, "lost"), MANIFEST, {"tag": "lost"}, move=True)
    assert load_tag(dest, tmp_path) == "synced"


@pytest.mark.parametrize("code", ["EPERM", "EOPNOTSUPP", "EXDEV"])
def test_a_filesystem_without_hard_links_gets_copies(tmp_path, monkeypatch, code):
    """Some FUSE / SMB mounts refuse link(): publishing temporaries falls back to copying them."""
    import errno

    def no_links(src, dst):
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)))
    monkeypatch.setattr(os, "link", no_links)
    dest = str(tmp_path / "bundle")
    staged = make_files(tmp_path, "copied")
    storage.publish(dest, staged, MANIFEST, {"tag": "copied"}, move=True)
    manifest = storage.read_manifest(dest, MANIFEST)
    for name, path in staged.items():
        assert not os.path.samefile(path, os.path.join(dest, manifest["files"][name]["object"]))
        os.remove(path)
    assert load_tag(dest, tmp_path) == "copied"


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EDQUOT])
def test_a_publish_copying_for_want_of_hard_links_without_room_for_the_copy_says_why_and_keeps_the_old_set(
        tmp_path, tmpfs, monkeypatch, error):
    """Publishing the caller's temporaries (move=True: a bundle staged on the destination's file system) links them
    into place, which takes no room; where the file system has no hard links (vfat, some FUSE and SMB mounts) each is
    copied instead, and needs room for a full second copy beside the staged one. Without it the line said only
    "No space left on device" of a write the user thought needed none. It says why a copy was made, of what, and the
    room it needs; the old set is kept whole, and no part of the copy is left. (A real tmpfs fills up for ENOSPC; a
    quota's EDQUOT is raised by the copy's write.)"""
    disk = tmpfs("256k")
    dest = str(disk / "bundle")
    storage.publish(dest, make_files(tmp_path, "old", size=10_000), MANIFEST, {"tag": "old"})
    before = sorted(os.listdir(dest))
    staged = make_files(disk, "new", size=150_000)  # (beside the bundle: 150 KB more do not fit)
    _no_hard_links(monkeypatch)
    if error == errno.EDQUOT:
        def over_quota(*args, **kwargs):
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))
        monkeypatch.setattr(storage.sets, "_copy_hashing", over_quota)
    with pytest.raises(FastTextError) as err:
        storage.publish(dest, staged, MANIFEST, {"tag": "new"}, move=True)
    monkeypatch.undo()
    failed = staged["model.params" if error == errno.ENOSPC else "metrics.json"]  # (the first that does not fit)
    assert one_line(err.value) == (
        f"cannot write {dest}: {failed} is copied there, as the file system cannot hard-link it (a file system "
        f"without hard links, or a link refused), and the copy failed: {os.strerror(error)}; free "
        f"{os.path.getsize(failed)} bytes there (the copy's size), or write it to another location")
    assert load_tag(dest, tmp_path) == "old" and sorted(os.listdir(dest)) == before


def test_link_errors_other_than_no_hard_links_still_fail(tmp_path, monkeypatch):
    import errno

    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "link", full)
    dest = str(tmp_path / "bundle")
    with pytest.raises(FastTextError) as info:
        storage.publish(dest, make_files(tmp_path, "x"), MANIFEST, {"tag": "x"}, move=True)
    assert "space" in one_line(info.value).lower()
    assert not os.path.exists(os.path.join(dest, MANIFEST))


def test_truncated_and_swapped_files_are_named(tmp_path):
    dest = str(tmp_path / "bundle")
    storage.publish(dest, make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})
    manifest = storage.read_manifest(dest, MANIFEST)
    params = os.path.join(dest, manifest["files"]["model.params"]["object"])
    with open(params, "r+b") as f:
        f.truncate(1234)
    with pytest.raises(FastTextError, match=r"model\.params is truncated: 1234 of 2000 bytes"):
        storage.sets.fetch(dest, manifest, ["model.params"], str(tmp_path))
    with open(params, "wb") as f:
        f.write(b"b" * 2000)  # same size, other content (another run's parameters)
    with pytest.raises(FastTextError, match=r"model\.params does not match its checksum"):
        storage.sets.fetch(dest, manifest, ["model.params"], str(tmp_path))


@pytest.mark.parametrize("content, why", [
    ({"notes.txt": "mine"}, "did not write"),
    ({MANIFEST: '{"format_version": 1}'}, "not written by this library"),
    ({MANIFEST: "not json"}, "not valid JSON"),
])
def test_refuses_to_replace_what_it_did_not_write(tmp_path, content, why):
    dest = tmp_path / "user"
    dest.mkdir()
    for name, text in content.items():
        (dest / name).write_text(text)
    for call in (lambda: storage.publish(str(dest), make_files(tmp_path, "x"), MANIFEST, {"tag": "x"}),
                 lambda: storage.check_writable(str(dest), MANIFEST),
                 lambda: storage.remove(str(dest), MANIFEST)):
        with pytest.raises(FastTextError, match=why) as err:
            call()
        assert str(dest) in one_line(err.value)
    assert sorted(os.listdir(dest)) == sorted(content)  # untouched, no lock file either


def test_refuses_current_directory_and_the_training_files_directory(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    (data / "train.csv").write_text('"1","x"\n')
    with pytest.raises(FastTextError, match=r"train\.csv"):
        storage.publish(str(data), make_files(tmp_path, "x"), MANIFEST, {"tag": "x"})
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    with pytest.raises(FastTextError, match="current directory"):
        storage.publish(".", make_files(tmp_path, "x"), MANIFEST, {"tag": "x"})
    assert os.listdir(data) == ["train.csv"] and os.listdir(empty) == []


def test_publishes_in_place_into_an_existing_empty_directory(tmp_path):
    mount_point = tmp_path / "model"  # like SM_MODEL_DIR: must be filled, never renamed
    mount_point.mkdir()
    inode = os.stat(mount_point).st_ino
    storage.publish(str(mount_point), make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})
    assert os.stat(mount_point).st_ino == inode and load_tag(str(mount_point), tmp_path) == "a"


@pytest.mark.parametrize("failure", ["disk full", "interrupted", "lock refused"])
def test_a_failed_local_publish_leaves_none_of_the_folders_it_made(tmp_path, monkeypatch, failure):
    """A publish into ``new/deeper/model`` made all three folders (os.makedirs) and, failing, removed only the last:
    ``new/deeper`` stayed behind, empty (an atomic single-file write removes every folder it made). A lock that could
    not be taken left even the last. Folders that existed, and files another writer put in one, stay."""
    def fail(*args, **kwargs):
        if failure == "interrupted":
            raise KeyboardInterrupt()
        raise OSError(errno.ENOSPC, "No space left on device")

    files = make_files(tmp_path, "x")
    (tmp_path / "kept").mkdir()
    monkeypatch.setattr(storage.sets, "_move_hashing", fail)
    monkeypatch.setattr(storage.sets, "_copy_hashing", fail)
    if failure == "lock refused":
        import fcntl

        monkeypatch.setattr(fcntl, "flock", fail)
    for dest in (tmp_path / "new" / "deeper" / "model", tmp_path / "kept" / "model"):
        with pytest.raises((FastTextError, KeyboardInterrupt)) as raised:
            storage.publish(str(dest), files, MANIFEST, {"tag": "x"})
        if raised.type is FastTextError:
            one_line(raised.value)
    assert sorted(os.listdir(tmp_path)) == ["kept", "src-x"] and os.listdir(tmp_path / "kept") == []


def test_a_publish_that_loses_the_race_for_a_new_folder_leaves_the_winners_lock_file(tmp_path, monkeypatch):
    """Two runs publish to one new folder (two trainings, no --overwrite): the one that made the folder and lost the
    race (the other committed first) removed the folder's lock file on its way out, while the winner's bundle was
    there. A third publisher would then lock a new file while another held the old one."""
    files = make_files(tmp_path, "x")
    dest = tmp_path / "model"
    storage.publish(str(dest), files, MANIFEST, {"tag": "winner"})
    real_check = storage.sets._check_local_destination
    checks = []

    def not_yet_there_at_first(*args):  # the loser looked before the winner committed
        checks.append(args)
        return None if len(checks) == 1 else real_check(*args)

    monkeypatch.setattr(storage.sets, "_check_local_destination", not_yet_there_at_first)
    monkeypatch.setattr(storage.sets, "_missing_directories", lambda path: [str(dest)])  # ... and made the folder
    with pytest.raises(FastTextError, match="already"):
        storage.publish(str(dest), files, MANIFEST, {"tag": "loser"}, overwrite=False)
    assert storage.sets.LOCK_NAME in os.listdir(dest) and storage.read_manifest(str(dest), MANIFEST)["tag"] == "winner"


def test_check_writable_local(tmp_path):
    storage.check_writable(str(tmp_path / "new" / "deeper"))
    assert not (tmp_path / "new").exists()  # a check leaves nothing behind
    (tmp_path / "afile").write_text("x")
    with pytest.raises(FastTextError, match="afile is not a directory"):
        storage.check_writable(str(tmp_path / "afile" / "out"))
    with pytest.raises(FastTextError, match="exists and is not a directory"):
        storage.check_writable(str(tmp_path / "afile"))
    with pytest.raises(FastTextError, match="afile is not a directory"):
        storage.publish(str(tmp_path / "afile" / "out"), make_files(tmp_path, "x"), MANIFEST, {"tag": "x"})


def test_check_output_file(tmp_path, tmpfs):
    """The one check behind export-vectors' --output and train's --autotune-trials: each refusal is one
    line naming the option, and the check leaves nothing behind."""
    flagged = ("--out", "--out ")
    (tmp_path / "afile").write_text("the user's")
    for flag, prefix in (("", ""), flagged):
        with pytest.raises(FastTextError) as err:
            storage.check_output_file(str(tmp_path), "t.csv", flag)
        assert str(err.value) == f"{prefix}{tmp_path} is a directory; give a file name such as {tmp_path / 't.csv'}"
        for uri in ("s3://bucket", "s3://bucket/", "s3://bucket/dir/"):
            with pytest.raises(FastTextError) as err:
                storage.check_output_file(uri, "t.csv", flag)
            assert str(err.value) == f"{flag + ': ' if flag else ''}S3 URI names no object: {uri}"
    with pytest.raises(FastTextError, match="^cannot write /dev/null: it exists and is not a regular file$"):
        storage.check_output_file("/dev/null", "t.csv")
    with pytest.raises(FastTextError, match="afile exists and is not a directory$"):
        storage.check_output_file(str(tmp_path / "afile" / "t.csv"), "t.csv")
    storage.check_output_file(str(tmp_path / "afile"), "t.csv")  # replacing a file is fine ...
    with pytest.raises(FastTextError, match=f"^{tmp_path / 'afile'} already exists; pass --overwrite to replace it$"):
        storage.check_output_file(str(tmp_path / "afile"), "t.csv", overwrite=False)  # ... unless asked not to
    storage.check_output_file(str(tmp_path / "new" / "t.csv"), "t.csv", overwrite=False)
    assert sorted(os.listdir(tmp_path)) == ["afile"] and (tmp_path / "afile").read_text() == "the user's"
    disk = tmpfs("64k")
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    with pytest.raises(FastTextError, match="Read-only file system"):
        storage.check_output_file(str(disk / "t.csv"), "t.csv")


def test_an_unwritable_destination_says_why_not_only_the_kernels_word(tmp_path, tmpfs):
    """"cannot write to /proc: /proc: No such file or directory" (of a folder that exists): the message now says
    what is wrong with the folder: the kernel's file system, mounted read-only (a tmpfs, or a read-only bind mount
    of a writable folder, whose mount point has a space: /proc/self/mountinfo writes it \\040), or no permission."""
    for dest, says in (("/proc/x.vec", "/proc is on the kernel's proc file system, where no file can be created"),
                       ("/proc/sys/kernel/run/model", "/proc/sys/kernel is on the kernel's proc file system"),
                       ("/sys/out.csv", "/sys is on the kernel's sysfs file system, where no file can be created")):
        with pytest.raises(FastTextError) as err:
            storage.check_output_file(dest, "x.vec")
        assert one_line(err.value).startswith(f"cannot write to {dest}: {says}")
        assert one_line(err.value).endswith("; choose a folder on a disk")
    disk = tmpfs("64k")
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    with pytest.raises(FastTextError) as err:
        storage.check_writable(str(disk / "model"))
    assert one_line(err.value) == (f"cannot write to {disk / 'model'}: {disk} is on a file system mounted read-only "
                                   f"(Read-only file system); choose another location")
    source, bound = tmp_path / "writable", tmp_path / "read only view"
    source.mkdir()
    bound.mkdir()
    subprocess.run(["mount", "--bind", str(source), str(bound)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(bound)], check=True)
        assert storage.files._file_system_of(str(bound))[1] is True and storage.files._file_system_of(str(source))[1] is False
        with pytest.raises(FastTextError, match=re.escape(f"{bound} is on a file system mounted read-only")):
            storage.check_output_file(str(bound / "x.vec"), "x.vec")
        storage.check_output_file(str(source / "x.vec"), "x.vec")
    finally:
        subprocess.run(["umount", str(bound)], check=False)
    assert os.listdir(source) == []
    # writes not checked first (the library's writers: data.write_csv, a bundle saved from a notebook) say the same
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_csv

    for write, target in ((lambda path: write_csv(LabeledTexts(["1"], ["a"]), path), "/proc/train.csv"),
                          (lambda path: storage.publish(path, {}, MANIFEST, {"tag": "x"}), "/proc/bundle"),
                          (lambda path: write_csv(LabeledTexts(["1"], ["a"]), path), str(disk / "sub" / "t.csv"))):
        with pytest.raises(FastTextError) as err:
            write(target)
        says = ("/proc is on the kernel's proc file system" if target.startswith("/proc") else
                f"{disk} is on a file system mounted read-only (Read-only file system)")
        assert one_line(err.value).startswith(f"cannot write {target}: {says}")
    # errno values that need another user or file system to happen (as root, chmod stops no write)
    here = str(source)
    assert storage.files._why_no_file(here, PermissionError(errno.EACCES, "Permission denied")) == \
        f"{here} does not let this user create files in it (Permission denied)"
    assert storage.files._why_no_file(here, FileNotFoundError(errno.ENOENT, "No such file or directory")) == \
        f"{here} does not accept new files (No such file or directory, of a folder that exists)"
    assert storage.files._why_no_file(here, OSError(errno.EROFS, "Read-only file system")).startswith(
        f"{here} is on a file system mounted read-only")
    assert storage.files._why_no_file(here, OSError(errno.ENOSPC, "No space left on device")) == \
        f"{here}: No space left on device"


def test_disk_full_keeps_the_old_set_and_leaves_no_partial_files(tmp_path, tmpfs):
    disk = tmpfs("64k")
    dest = str(disk / "bundle")
    storage.publish(dest, make_files(tmp_path, "old", size=10_000), MANIFEST, {"tag": "old"})
    before = sorted(os.listdir(dest))
    with pytest.raises(FastTextError, match="No space left on device") as err:
        storage.publish(dest, make_files(tmp_path, "new", size=200_000), MANIFEST, {"tag": "new"})
    assert dest in one_line(err.value)
    assert load_tag(dest, tmp_path) == "old" and sorted(os.listdir(dest)) == before


EXT4_LARGEST_FILE = 2**44 - 4096  # ext4 with 4 KiB blocks: 16 TiB less a block


def _ext4_refuses_past_its_largest_file(directory):
    """Whether a write at ext4's largest file fails with EFBIG in ``directory`` (a sparse write: it takes no room)."""
    probe = os.path.join(directory, "probe")
    try:
        with open(probe, "wb") as f:
            f.seek(EXT4_LARGEST_FILE)
            f.write(b"x" * 8192)
    except OSError as exc:
        return exc.errno == errno.EFBIG
    finally:
        os.remove(probe)
    return False


@contextlib.contextmanager
def file_size_limit(limit):
    """This process under ``ulimit -f`` (the soft limit) of ``limit`` bytes, for the block."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def test_a_file_larger_than_the_file_system_holds_is_not_blamed_on_ulimit(tmp_path):
    """A file past the file system's largest (FAT32's 4 GiB) under a file-size limit far above it: the error said
    'larger than this process's file-size limit, ulimit -f; raise it', which does not help. The file system's own
    EFBIG where it is ext4 (16 TiB, reached by a sparse write), else that error raised where the write fails."""
    target = tmp_path / "table.csv"
    target.write_bytes(b"old")
    real = _ext4_refuses_past_its_largest_file(str(tmp_path))
    with file_size_limit(2**45), pytest.raises(FastTextError) as err:
        with storage.atomic_local_file(str(target)) as f:
            f.write(b"x" * 1024)
            if real:
                f.seek(EXT4_LARGEST_FILE)
                f.write(b"x" * 8192)
            else:
                f.flush()
                raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))
    assert "larger than the file system holds in one file" in one_line(err.value) and "ulimit" not in str(err.value)
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["table.csv"]


def test_a_file_stopped_by_the_file_size_limit_names_the_limit(tmp_path):
    with file_size_limit(100_000), pytest.raises(FastTextError) as err:
        with storage.atomic_local_file(str(tmp_path / "big")) as f:
            f.write(b"x" * 300_000)
    assert "larger than this process's file-size limit, ulimit -f, of 100000 bytes; raise it" in one_line(err.value)
    assert os.listdir(tmp_path) == []


def test_a_temporary_file_too_large_without_a_file_size_limit_blames_the_file_system(tmp_path, monkeypatch):
    """A staged file (a bundle's parameters) past TMPDIR's file system's largest file, with no ``ulimit -f`` set:
    the error blamed ulimit -f all the same."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(storage.atomic.tempfile, "tempdir", None)
    with file_size_limit(__import__("resource").RLIM_INFINITY), pytest.raises(FastTextError) as err:
        with storage.staging_dir():
            raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))
    assert "ulimit" not in str(err.value) and one_line(err.value).endswith(
        "FAT32 takes 4 GiB at most; set TMPDIR to another file system)")


@pytest.mark.parametrize("cause", ["ulimit -f", "file system"])
def test_a_bundle_file_too_large_for_its_destination_says_why(tmp_path, monkeypatch, cause):
    """Publishing copies the staged files (TMPDIR, another file system) into the destination: a file too large for it
    (a FAT32 stick, or past ``ulimit -f``) said only 'File too large'. The old set stays."""
    import resource

    dest = str(tmp_path / "bundle")
    storage.publish(dest, make_files(tmp_path, "old", size=10_000), MANIFEST, {"tag": "old"})
    new = make_files(tmp_path, "new", size=300_000)
    limit = 100_000 if cause == "ulimit -f" else resource.RLIM_INFINITY
    if cause == "file system":  # as NFS reports it, at the write-back
        monkeypatch.setattr(storage.sets.os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.EFBIG, "File too large")))
    with file_size_limit(limit), pytest.raises(FastTextError) as err:
        storage.publish(dest, new, MANIFEST, {"tag": "new"})
    monkeypatch.undo()
    said = one_line(err.value)
    assert said.startswith(f"cannot write {dest}: File too large (larger than ")
    assert ("ulimit -f, of 100000 bytes" in said) if cause == "ulimit -f" else ("the file system holds" in said and "ulimit" not in said)
    assert load_tag(dest, tmp_path) == "old"


def test_read_only_destination_fails_fast(tmp_path, tmpfs):
    disk = tmpfs("64k")
    storage.publish(str(disk / "bundle"), make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    for dest in (disk / "bundle", disk / "new"):
        with pytest.raises(FastTextError, match="Read-only file system") as err:
            storage.check_writable(str(dest))
        assert str(dest) in one_line(err.value)
    with pytest.raises(FastTextError, match="Read-only file system"):
        storage.publish(str(disk / "bundle"), make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    assert load_tag(str(disk / "bundle"), tmp_path) == "old"


PUBLISHER = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from fasttext_lib import storage
    dest, src, tag, kill_at = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    files = {{n: os.path.join(src, n) for n in ("model.params", "vocab.json", "metrics.json")}}
    step = [0]
    def maybe_die(where):
        step[0] += 1
        if where == kill_at or str(step[0]) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    real_copy, real_replace, real_upload = storage.sets._copy_hashing, os.replace, None
    def copy(a, b):
        maybe_die("copy")
        return real_copy(a, b)
    def replace(a, b):
        maybe_die("before-commit")
        real_replace(a, b)
        maybe_die("after-commit")
    storage.sets._copy_hashing, os.replace = copy, replace
    if storage.is_s3(dest):
        import boto3.s3.transfer
        real_upload = boto3.s3.transfer.S3Transfer.upload_file
        def upload(self, *a, **k):
            real_upload(self, *a, **k)
            maybe_die("uploaded")
        boto3.s3.transfer.S3Transfer.upload_file = upload
    for i in range(int(os.environ.get("REPEAT", "1"))):
        storage.publish(dest, files, "config.json", {{"tag": tag}})
""").format(root=ROOT)


def run_publisher(tmp_path, dest, tag, kill_at="never", repeat=1, wait=True):
    script = tmp_path / "publisher.py"
    script.write_text(PUBLISHER)
    src = os.path.dirname(make_files(tmp_path, tag)["model.params"])
    env = dict(os.environ, REPEAT=str(repeat))
    proc = subprocess.Popen([sys.executable, str(script), str(dest), src, tag, kill_at], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if wait:
        out, err = proc.communicate(timeout=300)
        return proc.returncode, err
    return proc


@pytest.mark.parametrize("kill_at", ["1", "2", "3", "before-commit", "after-commit"])
def test_sigkill_while_publishing_locally_then_next_publish_cleans_up(tmp_path, kill_at):
    dest = tmp_path / "bundle"
    storage.publish(str(dest), make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    code, _ = run_publisher(tmp_path, dest, "new", kill_at)
    assert code == -signal.SIGKILL
    assert load_tag(str(dest), tmp_path) == ("new" if kill_at == "after-commit" else "old")
    if kill_at not in ("1", "after-commit"):  # "1": killed before its first file was written
        assert len(os.listdir(dest)) > 5  # leftovers of the killed run (its data files / staged manifest)
    storage.publish(str(dest), make_files(tmp_path, "next"), MANIFEST, {"tag": "next"})
    assert load_tag(str(dest), tmp_path) == "next"
    assert len(os.listdir(dest)) == 5  # manifest, lock, three data files: every leftover gone


def test_concurrent_local_publishers_always_leave_one_complete_set(tmp_path):
    dest = tmp_path / "bundle"
    for t in ("aa", "bb"):
        (tmp_path / t).mkdir()
    procs = [run_publisher(tmp_path / t, dest, t, repeat=12, wait=False) for t in ("aa", "bb")]
    seen = set()
    while any(p.poll() is None for p in procs):
        if (dest / MANIFEST).exists():
            seen.add(load_tag(str(dest), tmp_path))  # a reader in the middle of it all
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert load_tag(str(dest), tmp_path) in ("aa", "bb") and seen <= {"aa", "bb"}
    assert len(os.listdir(dest)) == 5


@pytest.mark.parametrize("where", ["local", "s3"])
def test_a_file_gone_from_a_set_no_one_replaces_is_said_after_one_reread(tmp_path, where, request):
    """A file a set's manifest names is gone, and the manifest read again is the same one: no publisher replaced the
    set (a publish writes its manifest before it deletes the replaced files), so the file is gone for good. It was
    read 8 times over 3.55 s before that was said (a user's typo'd resume, a bundle someone half deleted)."""
    from fasttext_lib.storage import sets

    dest = f"{request.getfixturevalue('s3_bucket')}/set" if where == "s3" else str(tmp_path / "set")
    storage.publish(dest, make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})
    stored = storage.read_manifest(dest, MANIFEST)["files"]["vocab.json"]["object"]
    if where == "s3":
        bucket, key = dest[len("s3://"):].split("/", 1)
        import boto3
        boto3.client("s3").delete_object(Bucket=bucket, Key=f"{key}/{stored}")
    else:
        os.remove(os.path.join(dest, stored))
    reads, pauses = [], []
    real_read = sets.read_manifest
    monkeypatch = request.getfixturevalue("monkeypatch")
    monkeypatch.setattr(sets, "read_manifest", lambda *a: reads.append(a) or real_read(*a))
    monkeypatch.setattr(sets.time, "sleep", pauses.append)
    with pytest.raises(storage.SetChanged) as gone:
        storage.read_set(dest, MANIFEST, NAMES, str(tmp_path))
    assert gone.value.missing == ("vocab.json", stored) and len(reads) == 2 and pauses == [0.05], (reads, pauses)


def test_a_set_replaced_while_it_is_read_is_read_again_whole(tmp_path, monkeypatch):
    """The reread still finds a set a publisher replaced meanwhile: the manifest read again is another one."""
    from fasttext_lib.storage import sets

    dest = str(tmp_path / "set")
    storage.publish(dest, make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})
    real_fetch, fetches = sets.fetch, []

    def fetch_after_a_replacement(*args):
        if not fetches:  # (the first fetch: a publisher replaces the set between its manifest's read and this)
            storage.publish(dest, make_files(tmp_path / "b", "b"), MANIFEST, {"tag": "b"}, overwrite=True)
        fetches.append(args)
        return real_fetch(*args)

    (tmp_path / "b").mkdir()
    monkeypatch.setattr(sets, "fetch", fetch_after_a_replacement)
    monkeypatch.setattr(sets.time, "sleep", lambda seconds: None)
    manifest, _ = storage.read_set(dest, MANIFEST, NAMES, str(tmp_path))
    assert manifest["tag"] == "b" and len(fetches) == 2


def test_remove_deletes_the_set_but_not_the_users_files(tmp_path):
    dest = tmp_path / "ckpt"
    storage.publish(str(dest), make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})
    storage.remove(str(dest), MANIFEST)
    assert not dest.exists()
    storage.publish(str(dest), make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})
    (dest / "README").write_text("mine")
    storage.remove(str(dest), MANIFEST)
    assert os.listdir(dest) == ["README"]


# ---------------------------------------------------------------- S3, through the fault proxy


@pytest.mark.parametrize("uri", ["S3://bucket/models/run", "s3:/bucket/models/run", "s3a://bucket/models/run",
                                 "https://bucket.s3.amazonaws.com/models/run"])
def test_a_uri_of_another_scheme_is_refused_not_taken_for_a_local_path(tmp_path, monkeypatch, uri):
    """``S3://`` (or Hadoop's ``s3a://``, or ``s3:/`` with one slash) was a relative local path: a bundle, or a training
    job's checkpoints, went to ./S3:/bucket/... on the local disk, silently (a container's disk, gone with the job)."""
    monkeypatch.chdir(tmp_path)
    files = make_files(tmp_path, "x")
    calls = [lambda: storage.publish(uri, files, MANIFEST, {"tag": "x"}), lambda: storage.check_writable(uri),
             lambda: storage.check_writable(uri, MANIFEST), lambda: storage.check_output_file(uri + "/a.vec", "a.vec"),
             lambda: storage.read_bytes(uri + "/a.vec"), lambda: storage.read_manifest(uri, MANIFEST)]
    for call in calls:
        with pytest.raises(FastTextError, match="only local paths and s3://bucket/key URIs") as err:
            call()
        assert uri in one_line(err.value)
    with pytest.raises(FastTextError, match="only local paths"):
        with storage.atomic_write(uri + "/a.vec") as f:
            f.write(b"x")
    assert sorted(os.listdir(tmp_path)) == ["src-x"]


@pytest.fixture
def proxy(s3_proxy):
    """The S3 server behind a FaultProxy (conftest.s3_proxy)."""
    return s3_proxy


@pytest.mark.parametrize("pattern", [r"/model-", r"/vocab-", r"/metrics-", r"/config\.json$"])
@pytest.mark.parametrize("action", ["500", "reset"])
def test_failed_put_keeps_the_old_s3_set(tmp_path, s3_bucket, proxy, pattern, action):
    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    before = s3_names(dest)
    proxy.fail("PUT", pattern, action)
    with pytest.raises(FastTextError) as err:
        storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    assert dest in one_line(err.value)
    proxy.clear()
    assert load_tag(dest, tmp_path) == "old"
    assert s3_names(dest) == before  # what the failed publish uploaded was taken back


def test_a_failed_upload_of_the_second_split_says_the_first_was_already_replaced(s3_bucket, proxy):
    """sample/synthetic/prepare put their files in place one S3 request at a time (now server-side copies of
    staged uploads): when test.csv's failed, train.csv was already the new one, and the error read as if nothing
    had changed (an old test split beside a new train split, silently). S3 cannot take the first copy back; the
    error says so, and reading the mixed pair is refused until it is written again."""
    from conftest import cli_in_process, run_cli

    out = f"{s3_bucket}/splits"  # (the first pair and the advised rewrite in this process; the failing write a process)
    assert cli_in_process("synthetic", "--output", out, "--train-docs", "5", "--test-docs", "5", "--seed", "1").returncode == 0
    old_test = storage.read_bytes(f"{out}/test.csv")
    proxy.fail("PUT", r"/test\.csv$", "500", nth=None)
    r = run_cli("synthetic", "--output", out, "--train-docs", "5", "--test-docs", "5", "--seed", "2", "--overwrite")
    proxy.clear()
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"{out}/test.csv failed" in r.stderr and f"{out}/train.csv had already been written" in r.stderr
    bucket, key = storage.split_s3(f"{out}/test.csv")
    assert boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read() == old_test
    with pytest.raises(FastTextError, match="were written together, but that one is now of another write of them"):
        storage.read_bytes(f"{out}/test.csv")
    r = cli_in_process("synthetic", "--output", out, "--train-docs", "5", "--test-docs", "5", "--seed", "2", "--overwrite")
    assert r.returncode == 0 and storage.read_bytes(f"{out}/test.csv") != old_test  # the advice works


@pytest.mark.parametrize("action", ["500", "503", "reset"])
def test_a_failed_read_of_the_old_manifest_is_reported_as_such_not_as_a_foreign_destination(tmp_path, s3_bucket, proxy,
                                                                                           action):
    """A throttled (503 SlowDown), failing or reset GET of the set's own config.json, before a publish (or the check
    before training) replaced it, was worded as a refusal of the destination: "refusing to write to ...: S3 request
    ... failed: SlowDown (HTTP 503) ...; name a new or empty directory, or one this library wrote", of a bundle this
    library wrote. The S3 error is said as it is; the old set stays."""
    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    before = s3_names(dest)
    proxy.fail("GET", r"/config\.json$", action)
    for call in (lambda: storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"}),
                 lambda: storage.check_writable(dest, MANIFEST)):
        with pytest.raises(FastTextError) as err:
            call()
        text = one_line(err.value)
        assert f"{dest}/{MANIFEST}" in text and "refusing" not in text and "name a new" not in text, text
    proxy.clear()
    assert load_tag(dest, tmp_path) == "old" and s3_names(dest) == before


@pytest.mark.parametrize("check", ["a folder", "a bundle's destination", "an output file"])
def test_a_writability_probe_whose_put_answer_is_lost_is_not_left_behind(s3_bucket, proxy, check):
    """The check before a write puts an empty probe object and deletes it. S3 stored the probe but its answer was
    lost (500s to the client): the error was raised with the probe left in the user's folder for good (beside an
    export-vectors output, nothing ever removed it). The probe is deleted on the way out."""
    calls = {"a folder": lambda: storage.check_writable(f"{s3_bucket}/out"),
             "a bundle's destination": lambda: storage.check_writable(f"{s3_bucket}/out", MANIFEST),
             "an output file": lambda: storage.check_output_file(f"{s3_bucket}/out/vectors.vec", "vectors.vec")}
    proxy.fail("PUT", r"/out/", "lost")
    with pytest.raises(FastTextError, match="HTTP 500"):
        calls[check]()
    proxy.clear()
    bucket = s3_bucket[len("s3://"):]
    assert boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix="out").get("KeyCount") == 0


def plain_deletes(proxy, of_keys_put_before=False):
    """The DELETEs in ``proxy.log`` that ask neither a version (versionId) nor a condition (If-Match): where a bucket
    keeps versions, S3 answers each with a new delete marker, the key absent or not. ``of_keys_put_before``: those
    of keys the run had put before (a write's own staging objects) left out."""
    put, found = set(), []
    for (method, path, query), headers in zip(proxy.log, proxy.headers):
        if method in ("PUT", "POST"):
            put.add(path)
        elif (method == "DELETE" and "versionId" not in query and "if-match" not in {k.lower() for k in headers}
              and not (of_keys_put_before and path in put)):
            found.append(path)
    return found


@pytest.mark.parametrize("versioning", ["Enabled", "Suspended"])
@pytest.mark.parametrize("check", ["a folder", "a bundle's destination", "an output file", "a pair of files"])
def test_the_checks_before_a_write_leave_nothing_in_a_bucket_that_keeps_versions(s3_bucket, proxy, versioning, check):
    """Where versioning is on (or suspended), a DELETE without a version id does not delete: it adds a delete marker,
    of a key that does not exist too, and an object put and deleted stays as a noncurrent version. The checks before a
    write probed with both (a DELETE of a key no object has, an empty object put and deleted), so that each run left
    delete markers and empty versions in the user's bucket. Nothing is left now, and no such DELETE is sent (moto
    adds no marker for an absent key, as S3 does: the requests are read at the proxy)."""
    bucket = s3_bucket[len("s3://"):]
    admin = boto3.client("s3")
    admin.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": versioning})
    if check == "a pair of files":
        with storage.atomic_writes([f"{s3_bucket}/out/train.csv", f"{s3_bucket}/out/test.csv"]) as (train, test):
            train.write(b"1,train\n")
            test.write(b"2,test\n")
    else:
        {"a folder": lambda: storage.check_writable(f"{s3_bucket}/out"),
         "a bundle's destination": lambda: storage.check_writable(f"{s3_bucket}/out", MANIFEST),
         "an output file": lambda: storage.check_output_file(f"{s3_bucket}/out/vectors.vec", "vectors.vec")}[check]()
        versions = admin.list_object_versions(Bucket=bucket, Prefix="out")
        assert (versions.get("Versions", []), versions.get("DeleteMarkers", [])) == ([], [])
    assert plain_deletes(proxy, of_keys_put_before=check == "a pair of files") == []


def test_the_checks_before_a_write_send_no_delete_that_could_leave_a_marker_where_s3_will_not_say(s3_policy_server,
                                                                                                  monkeypatch):
    """A role without s3:GetBucketVersioning cannot be told whether the bucket keeps versions: the checks ask nothing
    that would leave a delete marker or a version there if it does, and still tell a role that may not delete."""
    policy = s3_policy_server
    with FaultProxy(policy.endpoint) as proxy:
        _as_user(monkeypatch, policy, "lister")
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        dest = f"s3://{policy.bucket}/{os.urandom(6).hex()}"
        storage.check_writable(f"{dest}/out")
        storage.check_writable(f"{dest}/model", MANIFEST)
        assert plain_deletes(proxy) == []
        assert any(m == "GET" and q == "versioning" for m, _, q in proxy.log)  # asked, and refused
        assert [p for (m, p, _), h in zip(proxy.log, proxy.headers) if m == "PUT" and "If-Match" not in h] == []
        assert _admin_keys(policy, dest[len(f"s3://{policy.bucket}/"):]) == []


def versions_under(s3_uri, marks=("",)):
    """``(versions, delete markers)`` under the S3 prefix ``s3_uri``, each as its key after the prefix, of the keys
    holding one of ``marks`` (all keys by default): what a bucket that keeps versions holds, current or not."""
    bucket, prefix = storage.split_s3(s3_uri)
    listed = boto3.client("s3").list_object_versions(Bucket=bucket, Prefix=prefix + "/")
    return tuple(sorted(v["Key"][len(prefix) + 1:] for v in listed.get(kind, []) if any(m in v["Key"] for m in marks))
                 for kind in ("Versions", "DeleteMarkers"))


@pytest.mark.parametrize("versioning", ["Enabled", "Suspended"])
@pytest.mark.parametrize("outcome", ["written", "failed", "stopped"])
def test_a_pairs_staging_objects_leave_no_version_in_a_bucket_that_keeps_versions(s3_bucket, proxy, versioning,
                                                                                  outcome):
    """A pair is uploaded to staging keys (full copies of a train split: hundreds of MB) and those are deleted once
    copied into place. Where the bucket keeps versions, that plain DELETE only added a delete marker: every write
    left its splits behind as noncurrent versions, billed for good and seen by no listing. The staging objects are
    now deleted by the version their upload created (no marker, nothing kept), also after a failed upload (the one
    that failed created nothing: no DELETE that would leave a marker) and after a stop, where S3 applies the held
    upload later and the abandoned transfer deletes what it created. (moto keeps no marker in a suspended bucket,
    as S3 does: there the DELETEs are read at the proxy.)"""
    bucket, prefix = s3_bucket[len("s3://"):], f"{s3_bucket}/data"
    boto3.client("s3").put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": versioning})
    train, test = _write_pair(prefix, "old")
    proxy.clear()
    if outcome == "failed":
        proxy.fail("PUT", r"staging-[0-9a-f]{16}-pair\.test$", "500")
        with pytest.raises(FastTextError):
            _write_pair(prefix, "new")
    elif outcome == "stopped":
        proxy.fail("PUT", r"staging-[0-9a-f]{16}-pair\.test$", "stall")
        stopped_at_the_stall(proxy, lambda: _write_pair(prefix, "new"))
    else:
        _write_pair(prefix, "new")
    assert versions_under(prefix, marks=(".fasttext-staging-",)) == ([], [])
    assert [p for p in plain_deletes(proxy) if ".fasttext-staging-" in p] == []
    tag = "new" if outcome == "written" else "old"
    assert [storage.read_bytes(u) for u in (train, test)] == [f"__label__1 {tag} train\n".encode(),
                                                              f"__label__1 {tag} test\n".encode()]


@pytest.mark.parametrize("versioning", ["Enabled", "Suspended"])
@pytest.mark.parametrize("outcome", ["failed", "stopped"])
def test_a_failed_publish_leaves_no_version_of_its_files_in_a_bucket_that_keeps_versions(tmp_path, s3_bucket, proxy,
                                                                                         versioning, outcome):
    """A publish that fails (or is stopped) takes back the data files it uploaded, a bundle's or a checkpoint's
    (hundreds of MB): where the bucket keeps versions a plain DELETE left each as a noncurrent version, billed for
    good. They are deleted by the version their upload created; the file whose upload failed created nothing (no
    DELETE, which would leave a marker), and one S3 applies after a stop is deleted by its abandoned transfer."""
    bucket, dest = s3_bucket[len("s3://"):], f"{s3_bucket}/models/run"
    boto3.client("s3").put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": versioning})
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    before = versions_under(dest)
    proxy.clear()
    if outcome == "failed":
        proxy.fail("PUT", r"/vocab-", "500")
        with pytest.raises(FastTextError):
            storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    else:
        proxy.fail("PUT", r"/vocab-", "stall")
        stopped_at_the_stall(proxy, lambda: storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"}))
    assert versions_under(dest) == before
    assert plain_deletes(proxy) == []
    assert load_tag(dest, tmp_path) == "old"


def test_a_create_only_pair_that_fails_takes_back_its_file_leaving_no_version(s3_bucket, proxy):
    """A pair written without overwrite (sample, prepare) creates each file at its place and takes back the ones it
    created when a later one fails: where the bucket keeps versions that DELETE only hid the file behind a delete
    marker, and a whole train split stayed as a noncurrent version. It is deleted by the version its create made."""
    bucket, prefix = s3_bucket[len("s3://"):], f"{s3_bucket}/data"
    boto3.client("s3").put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    proxy.fail("PUT", r"/test\.csv$", "500")
    with pytest.raises(FastTextError):
        with storage.atomic_writes([f"{prefix}/train.csv", f"{prefix}/test.csv"], overwrite=False) as (train, test):
            train.write(b'"1","new"\n')
            test.write(b'"1","new"\n')
    assert versions_under(prefix) == ([], [])

@pytest.mark.parametrize("versioning", [None, "Enabled"])
@pytest.mark.parametrize("write", ["a pair", "a publish"])
def test_a_temporary_object_s3_creates_after_a_stop_is_deleted_though_its_answer_is_lost(tmp_path, s3_bucket, proxy,
                                                                                        versioning, write):
    """A staging object (or a publish's data file) whose upload S3 held when Ctrl-C came, then applied, answering an
    error (its answer lost: a 500, a reset). The abandoned transfer deleted what S3 created late only where it had
    S3's answer: here it had none (botocore's retry was refused, the transfer being abandoned), so a full copy of the
    split stayed in the user's folder (in a versioned bucket as a version too) though the process lived on. Its
    transfer now deletes whatever its sent request may have created (looked up by a HEAD: the key is this run's)."""
    bucket = s3_bucket[len("s3://"):]
    if versioning:
        boto3.client("s3").put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": versioning})
    if write == "a pair":
        prefix = f"{s3_bucket}/data"
        train, test = _write_pair(prefix, "old")
        proxy.fail("PUT", r"staging-[0-9a-f]{16}-pair\.test$", "stall-lost")
        stopped_at_the_stall(proxy, lambda: _write_pair(prefix, "new"))
        assert _bucket_keys(prefix) == ["pair.test", "pair.train"]
        assert versions_under(prefix, marks=(".fasttext-staging-",)) == ([], [])
        assert [storage.read_bytes(u) for u in (train, test)] == [b"__label__1 old train\n", b"__label__1 old test\n"]
    else:
        dest = f"{s3_bucket}/models/run"
        storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
        before, names = versions_under(dest), s3_names(dest)
        proxy.fail("PUT", r"/vocab-", "stall-lost")
        stopped_at_the_stall(proxy, lambda: storage.publish(dest, make_files(tmp_path, "new"), MANIFEST,
                                                            {"tag": "new"}))
        assert s3_names(dest) == names and versions_under(dest) == before
        assert load_tag(dest, tmp_path) == "old"


@pytest.mark.parametrize("store", ["may not delete", "keeps versions"])
def test_a_store_that_cannot_check_a_conditional_put_passes_the_check(s3_bucket, proxy, store):
    """The check's probe PUT (If-Match: it stores nothing) answered 501 NotImplemented: a store that cannot check the
    condition, which says nothing of whether a write is allowed. It failed the check ("...answered NotImplemented
    (HTTP 501); try again", which no retry changes), so that no run could write to such a store where it had (the
    write itself will tell, as the docstring of _check_puttable says)."""
    bucket = s3_bucket[len("s3://"):]
    if store == "keeps versions":
        boto3.client("s3").put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    else:
        proxy.fail("DELETE", r".", "403")
    proxy.fail("PUT", r".", "501-if-match")
    storage.check_writable(f"{s3_bucket}/out")
    storage.check_output_file(f"{s3_bucket}/out/vectors.vec", "vectors.vec")
    proxy.clear()
    assert boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix="out").get("KeyCount") == 0


@pytest.mark.parametrize("answer", ["400-versioning", "405-versioning"])
def test_a_store_without_the_versioning_api_still_checks_and_writes(s3_bucket, proxy, answer):
    """An S3-compatible store without GetBucketVersioning answers it 400 or 405, not 501: the checks before a write
    and a pair's staging deletes ask it (a versioned bucket's plain DELETE leaves a marker), and every write to such a
    store failed on that answer, where it had worked. It is now taken as "will not say", as a refusal is."""
    proxy.fail("GET", r".", answer)
    storage.check_writable(f"{s3_bucket}/out")
    storage.check_output_file(f"{s3_bucket}/out/vectors.vec", "vectors.vec")
    _write_pair(f"{s3_bucket}/data", "old")
    _write_pair(f"{s3_bucket}/data", "new")
    assert any(m == "GET" and q == "versioning" for m, _, q in proxy.log)  # asked, and answered 4xx
    proxy.clear()
    assert _bucket_keys(f"{s3_bucket}/data") == ["pair.test", "pair.train"]
    assert storage.read_bytes(f"{s3_bucket}/data/pair.train") == b"__label__1 new train\n"


def test_a_role_that_may_not_delete_versions_gets_the_plain_delete_and_one_note_naming_what_stays(s3_policy_server,
                                                                                                 monkeypatch, capsys):
    """A role without s3:DeleteObjectVersion: the staging objects are deleted as before (a delete marker each, the
    data kept as a noncurrent version), and one line on stderr names them, so that the user can delete those
    versions or set a lifecycle rule; nothing else fails."""
    policy = s3_policy_server
    admin, bucket = policy.client("admin"), f"versioned-{os.urandom(6).hex()}"
    admin.create_bucket(Bucket=bucket)
    admin.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    _as_user(monkeypatch, policy, "lister")
    prefix = f"s3://{bucket}/data"
    capsys.readouterr()
    train, test = _write_pair(prefix, "new")
    assert [storage.read_bytes(u) for u in (train, test)] == [b"__label__1 new train\n", b"__label__1 new test\n"]
    listed = admin.list_object_versions(Bucket=bucket, Prefix="data/")
    kept = sorted(v["Key"] for v in listed.get("Versions", []) if ".fasttext-staging-" in v["Key"])
    assert [k.rsplit("-", 1)[-1] for k in kept] == ["pair.test", "pair.train"]
    assert sorted(m["Key"] for m in listed.get("DeleteMarkers", [])) == kept
    notes = [line for line in capsys.readouterr().err.splitlines() if ".fasttext-staging-" in line]
    assert len(notes) == 1 and all(f"s3://{bucket}/{key}" in notes[0] for key in kept), notes
    assert "s3:DeleteObjectVersion" in notes[0] and "noncurrent version" in notes[0], notes


def test_a_create_only_pair_taken_back_by_a_role_that_may_not_delete_versions_says_what_stays(s3_policy_server,
                                                                                              monkeypatch, capsys):
    """The same for a file a failed create-only pair write takes back: the conditional DELETE as before (a delete
    marker, the file kept as a noncurrent version) and one line naming it."""
    policy = s3_policy_server
    admin, bucket = policy.client("admin"), f"versioned-{os.urandom(6).hex()}"
    admin.create_bucket(Bucket=bucket)
    admin.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    with FaultProxy(policy.endpoint) as proxy:
        _as_user(monkeypatch, policy, "lister")
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        proxy.fail("PUT", r"/test\.csv$", "500")
        capsys.readouterr()
        with pytest.raises(FastTextError):
            with storage.atomic_writes([f"s3://{bucket}/data/train.csv", f"s3://{bucket}/data/test.csv"],
                                       overwrite=False) as (train, test):
                train.write(b'"1","new"\n')
                test.write(b'"1","new"\n')
    listed = admin.list_object_versions(Bucket=bucket, Prefix="data/")
    assert [v["Key"] for v in listed.get("Versions", [])] == ["data/train.csv"]
    assert [m["Key"] for m in listed.get("DeleteMarkers", [])] == ["data/train.csv"]
    notes = [line for line in capsys.readouterr().err.splitlines() if "s3:DeleteObjectVersion" in line]
    assert len(notes) == 1 and f"s3://{bucket}/data/train.csv" in notes[0], notes


@pytest.mark.parametrize("action", ["500", "reset"])
def test_a_failed_probe_put_fails_the_check_of_a_role_that_may_not_delete(s3_bucket, proxy, action):
    """For a role without s3:DeleteObject the check puts a probe that stores nothing (a conditional PUT): a 500 or a
    dropped connection, retried by botocore and failing still, passed the check, as if S3 had allowed the write. The
    check says it could not complete, naming the bucket."""
    bucket = s3_bucket[len("s3://"):]
    proxy.fail("DELETE", r".", "403")
    proxy.fail("PUT", r"/out/\.fasttext-probe-", action)
    for call in (lambda: storage.check_writable(f"{s3_bucket}/out"),
                 lambda: storage.check_output_file(f"{s3_bucket}/out/vectors.vec", "vectors.vec")):
        with pytest.raises(FastTextError, match=rf"^could not check that s3://{bucket} can be written") as err:
            call()
        one_line(err.value)
    proxy.clear()
    assert boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix="out").get("KeyCount") == 0


def test_lost_answer_to_the_manifest_put_is_a_success(tmp_path, s3_bucket, proxy):
    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    proxy.fail("PUT", r"/config\.json$", "lost")  # S3 stored it, the client only saw 500s
    storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    proxy.clear()
    assert load_tag(dest, tmp_path) == "new" and len(s3_names(dest)) == 4


def publish_stopped_at_the_stall(proxy, dest, files):
    """``storage.publish`` of ``files`` to ``dest`` under the CLI's stop_on_signals, Ctrl-C'd as soon as the proxy
    holds one of its requests (``proxy.fail(..., "stall")``); returns the Interrupted it raised."""
    return interrupted_at_the_stall(proxy, lambda: storage.publish(dest, files, MANIFEST, {"tag": "new"}))


def force_multipart(monkeypatch):
    """Uploads of 5 MB and more go in 5 MB parts (S3's minimum part), so a 6 MB test file is a multipart upload."""
    real = boto3.s3.transfer.S3Transfer.upload_file

    def upload(self, *a, **k):
        self._manager._config.multipart_threshold = 5 * 1024 * 1024
        self._manager._config.multipart_chunksize = 5 * 1024 * 1024
        return real(self, *a, **k)
    monkeypatch.setattr(boto3.s3.transfer.S3Transfer, "upload_file", upload)


def multipart_uploads(s3_bucket):
    bucket = s3_bucket[len("s3://"):]
    return boto3.client("s3").list_multipart_uploads(Bucket=bucket).get("Uploads", [])


def test_reset_in_the_middle_of_a_multipart_upload(tmp_path, s3_bucket, proxy, monkeypatch):
    dest = f"{s3_bucket}/models/big"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    files = make_files(tmp_path, "new", size=6 * 1024 * 1024)
    force_multipart(monkeypatch)
    proxy.fail("PUT", r"/model-.*", "reset", nth=None)
    with pytest.raises(FastTextError) as err:
        storage.publish(dest, files, MANIFEST, {"tag": "new"})
    one_line(err.value)
    assert any(m == "POST" and q == "uploads" for m, _, q in proxy.log)  # it was a multipart upload
    assert any("partNumber" in q for m, _, q in proxy.log if m == "PUT")
    proxy.clear()
    assert load_tag(dest, tmp_path) == "old"
    bucket = s3_bucket[len("s3://"):]
    assert not boto3.client("s3").list_multipart_uploads(Bucket=bucket).get("Uploads")  # aborted, not left


def test_keys_with_hash_and_question_mark_round_trip(tmp_path, s3_bucket):
    for name in ("exp#1", "exp?v=2"):
        storage.publish(f"{s3_bucket}/models/{name}", make_files(tmp_path, name.replace("?", "q")), MANIFEST,
                        {"tag": name.replace("?", "q")})
    bucket = s3_bucket[len("s3://"):]
    keys = [o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket=bucket)["Contents"]]
    assert sum(k.startswith("models/exp#1/") for k in keys) == 4 and sum(k.startswith("models/exp?v=2/") for k in keys) == 4
    assert load_tag(f"{s3_bucket}/models/exp#1", tmp_path) == "exp#1"
    assert load_tag(f"{s3_bucket}/models/exp?v=2", tmp_path) == "expqv=2"
    with storage.atomic_write(f"{s3_bucket}/a#b?c", "wb") as f:
        f.write(b"x")
    assert storage.read_bytes(f"{s3_bucket}/a#b?c") == b"x" and storage.exists(f"{s3_bucket}/a#b?c")
    assert not storage.exists(f"{s3_bucket}/a")


def test_refuses_an_s3_prefix_holding_other_objects(tmp_path, s3_bucket):
    bucket = s3_bucket[len("s3://"):]
    boto3.client("s3").put_object(Bucket=bucket, Key="data/train.csv", Body=b"x")
    for call in (lambda: storage.publish(f"{s3_bucket}/data", make_files(tmp_path, "x"), MANIFEST, {"tag": "x"}),
                 lambda: storage.check_writable(f"{s3_bucket}/data", MANIFEST)):
        with pytest.raises(FastTextError, match=r"refusing to write to .*/data: .*train\.csv"):
            call()
    assert s3_names(f"{s3_bucket}/data") == ["train.csv"]


def test_an_s3_object_where_a_folder_is_written_is_refused_as_a_local_file_is(tmp_path, s3_bucket):
    """``--output s3://b/data/train.csv`` (the training data itself) or ``--checkpoint-dir s3://b/ck`` where ``ck``
    is an object: the set went under ``train.csv/`` beside the object, silently (a file and a folder of one name,
    which no disk can hold: ``aws s3 sync`` of it fails), where a local file in the folder's place is refused."""
    bucket = s3_bucket[len("s3://"):]
    client = boto3.client("s3")
    client.put_object(Bucket=bucket, Key="data/train.csv", Body=b"mine")
    dest = f"{s3_bucket}/data/train.csv"
    for call in (lambda: storage.publish(dest, make_files(tmp_path, "x"), MANIFEST, {"tag": "x"}),
                 lambda: storage.check_writable(dest, MANIFEST), lambda: storage.check_writable(dest + "/"),
                 lambda: storage.check_output_file(f"{dest}/vectors.vec", "vectors.vec")):
        with pytest.raises(FastTextError) as err:
            call()
        assert one_line(err.value).startswith(f"{dest} is an object, not a folder: ")
    assert [o["Key"] for o in client.list_objects_v2(Bucket=bucket)["Contents"]] == ["data/train.csv"]
    assert client.get_object(Bucket=bucket, Key="data/train.csv")["Body"].read() == b"mine"
    storage.publish(f"{s3_bucket}/data/models", make_files(tmp_path, "y"), MANIFEST, {"tag": "y"})  # beside it: fine
    assert load_tag(f"{s3_bucket}/data/models", tmp_path) == "y"


def test_a_folder_made_in_the_s3_console_is_written_to_as_an_empty_one(tmp_path, s3_bucket):
    """The console's "Create folder" stores a zero-byte ``models/run/`` object: a bundle, a checkpoint or a second
    publish there was refused as "it holds objects this library did not write ()", naming nothing."""
    bucket = s3_bucket[len("s3://"):]
    client = boto3.client("s3")
    client.put_object(Bucket=bucket, Key="models/run/", Body=b"")
    dest = f"{s3_bucket}/models/run"
    storage.check_writable(dest, MANIFEST)
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    assert load_tag(dest, tmp_path) == "new"
    assert s3_names(dest)[0] == "" and len(s3_names(dest)) == 5  # the folder's own object stays
    storage.remove(dest, MANIFEST)
    assert s3_names(dest) == [""]


def test_get_refused_after_head_ok_is_one_line(tmp_path, s3_bucket, proxy):
    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})
    manifest = storage.read_manifest(dest, MANIFEST)
    proxy.fail("GET", r"/model-", "403")
    params = storage.join(dest, manifest["files"]["model.params"]["object"])
    assert storage.exists(params)  # HEAD is fine
    for call in (lambda: storage.sets.fetch(dest, manifest, ["model.params"], str(tmp_path)),
                 lambda: storage.read_bytes(params)):
        with pytest.raises(FastTextError, match="access denied") as err:
            call()
        one_line(err.value)


def test_get_and_head_refused_where_the_caller_may_list_is_access_denied_not_missing(tmp_path, s3_bucket, proxy):
    """A GET refused with 403 whose HEAD is refused too was taken for a missing object (S3's answer to a caller without
    s3:ListBucket). A caller that may list hears 404 for a missing object, so there both 403s are a real permissions
    problem (an object another account owns, a Deny on its key): a bundle said it "is missing (deleted, or not copied
    with the bundle); copy the whole bundle again or retrain". The listing tells: the object is there, so refused."""
    from fasttext_lib.bundle_read import load_bundle_files

    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})
    manifest = storage.read_manifest(dest, MANIFEST)
    for method in ("GET", "HEAD"):
        proxy.fail(method, r"/model-", "403")
    with pytest.raises(FastTextError) as err:
        storage.sets.fetch(dest, manifest, ["model.params"], str(tmp_path))
    assert one_line(err.value).startswith("access denied"), err.value
    (tmp_path / "bundle").mkdir()
    with pytest.raises(FastTextError) as err:
        load_bundle_files(dest, str(tmp_path / "bundle"))
    message = one_line(err.value)
    assert "access denied" in message and "missing" not in message, message


@pytest.mark.usefixtures("no_pause_between_rereads")  # (a file stays missing: no reread can find it)
def test_a_bundle_file_refused_to_a_caller_that_may_not_list_is_said_missing_or_refused(tmp_path, unlisted):
    """Without s3:ListBucket a refused GET and HEAD cannot tell a missing file from a refused one: a checkpoint says
    both, a bundle said only "is missing (deleted, or not copied with the bundle); copy the whole bundle again",
    also where the file is there and refused (a Deny on its key), sending the user to copy it again for nothing."""
    from fasttext_lib.bundle_read import load_bundle_files

    _, proxy, dest = unlisted
    storage.publish(dest, make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})
    proxy.clear()  # (the refusal of the file first: the first rule a request matches is applied)
    for method in ("GET", "HEAD"):
        proxy.fail(method, r"/model-", "403")
        proxy.fail(method, r".", "403-if-missing")
    (tmp_path / "bundle").mkdir()
    with pytest.raises(FastTextError) as err:
        load_bundle_files(dest, str(tmp_path / "bundle"))
    message = one_line(err.value)
    assert "model.params" in message and "is missing or S3 refused" in message, message


def test_http_500_on_reads_is_one_line(tmp_path, s3_bucket, proxy):
    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})
    proxy.fail("HEAD", r".", "500")
    proxy.fail("GET", r".", "500")
    for call in (lambda: storage.exists(storage.join(dest, MANIFEST)), lambda: storage.read_manifest(dest, MANIFEST)):
        with pytest.raises(FastTextError, match="HTTP 500|failed") as err:
            call()
        one_line(err.value)


def test_expired_credentials_are_named_also_where_s3_answers_a_bare_400(tmp_path, s3_bucket, proxy):
    """Expired session credentials (an SSO session, an assumed role's token) are S3's 400 ExpiredToken, but a HEAD's
    answer has no body: every read, whose first request is a HEAD, said "failed: 400 (HTTP 400) Bad Request"."""
    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})
    for method in ("HEAD", "GET", "PUT"):
        proxy.fail(method, r".", "expired")
    for call in (lambda: storage.exists(storage.join(dest, MANIFEST)), lambda: storage.read_bytes(storage.join(dest, MANIFEST)),
                 lambda: storage.read_manifest(dest, MANIFEST), lambda: storage.check_writable(f"{s3_bucket}/other")):
        with pytest.raises(FastTextError, match=r"AWS credentials were refused for s3://.*\(ExpiredToken: they have "
                                                r"expired or are invalid\): renew them") as err:
            call()
        one_line(err.value)


def test_an_unknown_access_key_is_named_also_where_s3_answers_a_bare_403(tmp_path, s3_bucket, proxy):
    """A HEAD's refusal has no body: an access key S3 does not know was "access denied (403)", as for a missing
    permission."""
    uri = f"{s3_bucket}/data/x.txt"
    with storage.atomic_write(uri) as f:
        f.write(b"x")
    for method in ("HEAD", "GET"):
        proxy.fail(method, r".", "unknown-key")
    for call in (lambda: storage.exists(uri), lambda: storage.read_bytes(uri)):
        with pytest.raises(FastTextError, match=r"^access denied to s3://.*/x\.txt \(InvalidAccessKeyId\)") as err:
            call()
        one_line(err.value)


def test_endpoint_down_and_no_credentials_are_one_line(tmp_path, s3_bucket, monkeypatch):
    uri = f"{s3_bucket}/models/run"
    calls = [lambda: storage.exists(storage.join(uri, MANIFEST)), lambda: storage.read_bytes(storage.join(uri, "x")),
             lambda: storage.read_manifest(uri, MANIFEST), lambda: storage.check_writable(uri),
             lambda: storage.publish(uri, make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})]
    with monkeypatch.context() as m:
        m.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")  # nothing listens there
        m.setenv("AWS_MAX_ATTEMPTS", "1")
        for call in calls:
            with pytest.raises(FastTextError, match="cannot reach the S3 endpoint") as err:
                call()
            one_line(err.value)
    with monkeypatch.context() as m:
        for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
            m.delenv(var, raising=False)
        m.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
        m.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
        m.setenv("AWS_EC2_METADATA_DISABLED", "true")
        for call in calls:
            with pytest.raises(FastTextError, match="no AWS credentials") as err:
                call()
            one_line(err.value)


@pytest.mark.parametrize("var, value", [("AWS_MAX_ATTEMPTS", "abc"), ("AWS_MAX_ATTEMPTS", "-1"),
                                        ("AWS_RETRY_MODE", "bogus"), ("AWS_DEFAULTS_MODE", "bogus"),
                                        ("AWS_STS_REGIONAL_ENDPOINTS", "x")])
def test_an_aws_setting_botocore_cannot_use_is_one_line_naming_the_configuration(s3_bucket, monkeypatch, var, value):
    """An AWS_* value botocore refuses as it makes the client: AWS_MAX_ATTEMPTS=abc was a ValueError traceback, and
    the others were 'failed (connection lost or timed out)', though nothing was sent."""
    monkeypatch.setenv(var, value)
    with pytest.raises(FastTextError) as err:
        storage.exists(f"{s3_bucket}/models/run/x")
    one_line(err.value)
    assert "invalid AWS configuration" in str(err.value) and "timed out" not in str(err.value), str(err.value)
    assert f"{var}={value}" in str(err.value)


@pytest.fixture
def dropped_connections():
    """An endpoint whose connections are never accepted, as behind a firewall that drops packets: a listener with
    its backlog full drops new connection requests (SYN), and the client's connect waits out its timeout."""
    import socket

    listener = socket.create_server(("127.0.0.1", 0), backlog=0)
    queued = []
    for _ in range(3):
        pending = socket.socket()
        pending.setblocking(False)
        pending.connect_ex(listener.getsockname())
        queued.append(pending)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    for pending in queued:
        pending.close()
    listener.close()


def test_an_endpoint_that_drops_connections_is_an_error_in_seconds_not_minutes(s3_bucket, dropped_connections,
                                                                             monkeypatch):
    """botocore waits 60 s for a connection, 3 to 5 times: every command sat for minutes before its error line."""
    assert storage.s3_client().meta.config.connect_timeout <= 10  # (botocore's 60 s before)
    monkeypatch.setenv("AWS_DEFAULTS_MODE", "standard")  # a mode the user chose keeps its own (3.1 s), not raised to 10
    assert storage.s3_client().meta.config.connect_timeout == pytest.approx(3.1)
    monkeypatch.delenv("AWS_DEFAULTS_MODE")
    monkeypatch.setattr(storage.s3, "CONNECT_TIMEOUT", 0.2)  # the same path, without ten seconds of waiting
    monkeypatch.setenv("AWS_ENDPOINT_URL", dropped_connections)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
    started = time.monotonic()
    with pytest.raises(FastTextError, match=r"cannot reach the S3 endpoint for s3://.*/x\.csv: Connect timeout") as err:
        storage.exists(f"{s3_bucket}/x.csv")
    assert time.monotonic() - started < 8
    one_line(err.value)


@pytest.mark.parametrize("profile", [None, "chosen"])
def test_a_defaults_mode_in_the_aws_config_file_keeps_its_own_connect_timeout(s3_bucket, tmp_path, monkeypatch, profile):
    """``defaults_mode = standard`` in ~/.aws/config (the profile's), rather than AWS_DEFAULTS_MODE: the library's 10 s
    connect timeout overrode the mode's 3.1 s; botocore reads the mode from either place, and so does the library."""
    config = tmp_path / "config"
    config.write_text(f"[{'profile ' + profile if profile else 'default'}]\ndefaults_mode = standard\n"
                      f"[profile plain]\nregion = us-east-1\n")
    monkeypatch.delenv("AWS_DEFAULTS_MODE", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    if profile:
        monkeypatch.setenv("AWS_PROFILE", profile)
    assert storage.s3_client().meta.config.connect_timeout == pytest.approx(3.1)
    assert storage.exists(f"{s3_bucket}/x.csv") is False  # (the client works)
    monkeypatch.setenv("AWS_PROFILE", "plain")  # a profile without it: the library's timeout
    assert storage.s3_client().meta.config.connect_timeout == storage.s3.CONNECT_TIMEOUT
    monkeypatch.setenv("AWS_PROFILE", "missing")  # a profile that is not there: said as before, in one line
    with pytest.raises(FastTextError) as err:
        storage.exists(f"{s3_bucket}/x.csv")
    assert "missing" in one_line(err.value)


def test_an_aws_profile_that_is_not_there_is_named_not_blamed_on_the_connection(s3_bucket, tmp_path, monkeypatch):
    """``AWS_PROFILE=missing`` (misspelled, or a profile of another machine) said "S3 request ... failed (connection
    lost or timed out): The config profile (missing) could not be found", though no request was made."""
    (tmp_path / "config").write_text("[profile other]\nregion = us-east-1\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_PROFILE", "missing")
    with pytest.raises(FastTextError) as err:
        storage.exists(f"{s3_bucket}/x.csv")
    assert one_line(err.value) == (f"the AWS profile 'missing' (AWS_PROFILE) is in neither ~/.aws/config nor "
                                   f"~/.aws/credentials (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE), needed for "
                                   f"{s3_bucket}/x.csv")


@pytest.mark.parametrize("uri", ["s3://my bucket/models/run", "s3://bucket|name/models/run"])
def test_a_bucket_name_botocore_refuses_to_send_is_named_as_such(tmp_path, s3_bucket, uri):
    """botocore refuses a bucket name with a space or a '|' before sending anything (ParamValidationError): that was
    "S3 request for ... failed (connection lost or timed out): Parameter validation failed:", the first line of its
    message, which neither said what was wrong nor was true."""
    files = make_files(tmp_path, "x")
    for call in (lambda: storage.read_bytes(uri + "/a.csv"), lambda: storage.exists(uri + "/a.csv"),
                 lambda: storage.check_writable(uri, MANIFEST), lambda: storage.publish(uri, files, MANIFEST, {"tag": "x"})):
        with pytest.raises(FastTextError) as err:
            call()
        text = one_line(err.value)
        assert "connection lost" not in text and "Invalid bucket name" in text and uri in text, text


def test_one_s3_client_serves_every_call_of_an_aws_environment(s3_bucket, monkeypatch):
    """A new boto3 Session per S3 call parsed botocore's JSON models each time (~0.16 s CPU a call). One client
    per process and AWS_* environment: the same one for the same variables, a new one when any changes (another
    endpoint, credentials, region), and a forked child never shares its parent's connections."""
    first = storage.s3_client()
    assert storage.s3_client() is first
    with storage.atomic_write(f"{s3_bucket}/one-client/a") as f:  # (what the calls do is unchanged)
        f.write(b"x")
    assert storage.read_bytes(f"{s3_bucket}/one-client/a") == b"x" and storage.s3_client() is first
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
    other = storage.s3_client()
    assert other is not first and storage.s3_client() is other
    monkeypatch.delenv("AWS_MAX_ATTEMPTS")
    assert storage.s3_client() is first
    # more environments than are kept (8: first, "2" and 3..10 are 10), the least recently used ones go; first, used
    # after each, stays (a client evicted by age, not by use, would be first's at the 9th)
    for attempts in range(3, 11):
        monkeypatch.setenv("AWS_MAX_ATTEMPTS", str(attempts))
        storage.s3_client()
        monkeypatch.delenv("AWS_MAX_ATTEMPTS")
        assert storage.s3_client() is first
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own client
        os.write(write, b"1" if storage.s3_client() is not first else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"


def test_a_bucket_name_typed_with_capitals_is_answered_with_its_lowercase_name(s3_bucket):
    """-p bucket My-Bucket: 'S3 bucket does not exist' alone left the user to guess (names are lowercase)."""
    typed = s3_bucket.replace("s3://", "s3://My-", 1)
    for call in (lambda: storage.check_writable(f"{typed}/models"), lambda: storage.read_bytes(f"{typed}/data/a.txt")):
        with pytest.raises(FastTextError) as err:
            call()
        assert str(err.value).endswith(f"; bucket names are lowercase: did you mean {typed[5:].split('/')[0].lower()}?")
    with pytest.raises(FastTextError) as err:
        storage.check_writable("s3://no-such-bucket-x/models")
    assert "did you mean" not in str(err.value)



@pytest.mark.parametrize("typed, hint", [("Fasttext_Demo", "; bucket names are lowercase letters, digits, dots and "
                                                           "hyphens: did you mean fasttext-demo?"),
                                         ("My_Bucket_", ""), ("B", "")])
def test_a_bucket_name_with_capitals_is_never_answered_with_a_name_s3_refuses(typed, hint, s3_bucket):
    """-p bucket Fasttext_Demo was answered "did you mean fasttext_demo?": no bucket can have that name (S3 takes no
    underscore). The hint names a name S3 takes, or there is none."""
    with pytest.raises(FastTextError) as err:
        storage.check_writable(f"s3://{typed}/models")
    assert str(err.value) == f"S3 bucket does not exist: {typed} (for s3://{typed}/models){hint}"

def test_check_writable_s3(s3_bucket, proxy):
    storage.check_writable(f"{s3_bucket}/models/new")
    assert s3_names(f"{s3_bucket}/models/new") == []  # the probe is gone
    with pytest.raises(FastTextError, match="bucket does not exist: no-such-bucket-x"):
        storage.check_writable("s3://no-such-bucket-x/models")
    proxy.fail("PUT", r".", "403")
    with pytest.raises(FastTextError, match="access denied"):
        storage.check_writable(f"{s3_bucket}/models/new")


def test_a_put_answered_409_is_sent_again_after_the_conflict_pause(tmp_path, s3_bucket, proxy, monkeypatch):
    """S3's 409 ConditionalRequestConflict (another create of the key in flight) asks to try again: a single file's
    create-only PUT and a set's manifest PUT are sent again :data:`s3.CONFLICT_PAUSE` (1 s) later
    (s3.sent_again_on_conflict). Other tests shorten it, their attempts under test; here the real pause is what is
    asked for, recorded, not waited."""
    import types

    from fasttext_lib.storage import s3

    paused = []
    monkeypatch.setattr(s3, "time", types.SimpleNamespace(**{**vars(time), "sleep": paused.append}))
    proxy.fail("PUT", r"/runs/one\.csv$", "409", nth=1)
    with storage.atomic_write(f"{s3_bucket}/runs/one.csv", "wb", overwrite=False) as f:
        f.write(b"ours\n")
    assert paused == [1] and storage.read_bytes(f"{s3_bucket}/runs/one.csv") == b"ours\n"
    proxy.fail("PUT", r"/models/run/config\.json$", "409", nth=1)
    storage.publish(f"{s3_bucket}/models/run", make_files(tmp_path, "new"), MANIFEST, {"tag": "new"}, overwrite=False)
    assert paused == [1, 1] and load_tag(f"{s3_bucket}/models/run", tmp_path) == "new"


def test_killed_s3_publish_leaves_orphans_removed_after_the_grace_period(tmp_path, s3_bucket, monkeypatch):
    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    code, _ = run_publisher(tmp_path, dest, "new", kill_at="2")  # killed right after its 2nd of 3 uploads
    assert code == -signal.SIGKILL
    assert load_tag(dest, tmp_path) == "old" and len(s3_names(dest)) == 6  # old set + 2 orphans
    storage.publish(dest, make_files(tmp_path, "next"), MANIFEST, {"tag": "next"})
    assert len(s3_names(dest)) == 6  # young orphans may be a running publisher's: kept
    monkeypatch.setattr(storage.sets, "ORPHAN_GRACE_SECONDS", -1)
    bucket, prefix = storage.split_s3(dest)
    client = boto3.client("s3")
    upload = client.create_multipart_upload(Bucket=bucket, Key=f"{prefix}/model-0123456789abcdef.params")
    storage.publish(dest, make_files(tmp_path, "last"), MANIFEST, {"tag": "last"})
    assert load_tag(dest, tmp_path) == "last" and len(s3_names(dest)) == 4
    assert upload["UploadId"] not in [u["UploadId"] for u in client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]


def test_concurrent_s3_publishers_leave_one_complete_set(tmp_path, s3_bucket):
    dest = f"{s3_bucket}/models/run"
    for t in ("aa", "bb"):
        (tmp_path / t).mkdir()
    procs = [run_publisher(tmp_path / t, dest, t, repeat=4, wait=False) for t in ("aa", "bb")]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert load_tag(dest, tmp_path) in ("aa", "bb")


def another_publishes_meanwhile(monkeypatch, dest, tmp_path, then=lambda: None):
    """Another publisher commits a set ("other") to ``dest`` while the next publish there hashes its first file (after
    its look at ``dest``, before its commit), then ``then()``; returns the real hash_file (to put back)."""
    real_hash, raced = storage.sets.hash_file, []

    def hash_and_race(path):
        if not raced:
            raced.append(1)
            storage.publish(dest, make_files(tmp_path, "other"), MANIFEST, {"tag": "other"})
            then()
        return real_hash(path)
    monkeypatch.setattr(storage.sets, "hash_file", hash_and_race)
    return real_hash


@pytest.mark.parametrize("versioning", [None, "Enabled"])
@pytest.mark.parametrize("old", [False, True])
def test_a_set_another_publisher_commits_meanwhile_is_replaced_with_its_files_not_left_behind(tmp_path, s3_bucket,
                                                                                              monkeypatch, old,
                                                                                              versioning):
    """Two runs writing one --output at once (two notebook tabs; or two runs of one command resuming one S3
    --checkpoint-dir, which save each epoch's set in lockstep): the other commits while this one uploads. The last
    one wins, as before; but its manifest PUT replaced a set it had not read, so that set's files stayed behind,
    unreferenced, until a publish there more than an hour later collected them: in a checkpoint's epoch folder,
    which no run visits again, the model's size (adam's moments twice more) stayed billed for good. Where the bucket
    keeps versions, neither that set's files nor its manifest stay as noncurrent versions either."""
    dest = f"{s3_bucket}/models/run"
    if versioning:
        boto3.client("s3").put_bucket_versioning(Bucket=s3_bucket[len("s3://"):],
                                                 VersioningConfiguration={"Status": versioning})
    if old:
        storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    another_publishes_meanwhile(monkeypatch, dest, tmp_path)
    storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    assert load_tag(dest, tmp_path) == "new"
    assert s3_names(dest) == sorted(_objects(dest) + [MANIFEST])
    if versioning:
        assert versions_under(dest) == (sorted(_objects(dest) + [MANIFEST]), [])


@pytest.mark.parametrize("versioning", [None, "Enabled"])
def test_a_set_committed_meanwhile_goes_through_the_put_replacing_it_lost_its_answer(tmp_path, s3_bucket, proxy,
                                                                                      monkeypatch, versioning):
    """As above, and the PUT that replaces the set committed meanwhile (If-Match on it, read again) reaches S3 but
    its answer is lost: botocore's retry is refused (412), the set read again is our own, and the publish is a
    success. The set it replaced is the one read again, not the one first seen: that one's files stayed behind (and,
    where the bucket keeps versions, its manifest's version)."""
    dest = f"{s3_bucket}/models/run"
    if versioning:
        boto3.client("s3").put_bucket_versioning(Bucket=s3_bucket[len("s3://"):],
                                                 VersioningConfiguration={"Status": versioning})
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    # our 1st manifest PUT is refused (If-Match on "old"); the 2nd, on "other", is stored and its answer lost
    another_publishes_meanwhile(monkeypatch, dest, tmp_path,
                                then=lambda: proxy.fail("PUT", r"/models/run/config\.json$", "lost", nth=2))
    storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    proxy.clear()
    assert load_tag(dest, tmp_path) == "new"
    assert s3_names(dest) == sorted(_objects(dest) + [MANIFEST])
    if versioning:
        assert versions_under(dest)[0] == sorted(_objects(dest) + [MANIFEST])


@pytest.mark.parametrize("answer", ["400-if-match", "501-if-match"])
def test_a_set_is_replaced_on_a_store_that_cannot_check_if_match(tmp_path, s3_bucket, proxy, answer):
    """The manifest's PUT replacing a set is conditional on it (If-Match: the test above); an S3-compatible store that
    answers that condition 400 or 501 (it takes If-None-Match only, or no condition) gets the plain PUT it got
    before, not a failed save."""
    dest = f"{s3_bucket}/models/run"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    proxy.fail("PUT", r"/config\.json$", answer)
    storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    assert any(m == "PUT" and "If-Match" in h for (m, _, _), h in zip(proxy.log, proxy.headers))
    proxy.clear()
    assert load_tag(dest, tmp_path) == "new" and s3_names(dest) == sorted(_objects(dest) + [MANIFEST])


def test_staging_of_a_killed_run_goes_with_the_next_run_and_a_live_ones_stays(tmp_path, monkeypatch):
    """SIGKILL leaves a run's staging directory (a bundle's params) in the temp dir; the next staging
    directory anyone makes removes it, while a running process's staging directory is left alone."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    holder = ("import sys, time; from fasttext_lib import storage; stage = storage.staging_dir(); "
              "path = stage.__enter__(); open(path + '/model.params', 'wb').write(b'x' * 4096); "
              "print(path, flush=True); time.sleep(120)")
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": ROOT}
    killed = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True, env=env)
    alive = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True, env=env)
    try:
        killed_dir, alive_dir = killed.stdout.readline().strip(), alive.stdout.readline().strip()
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        assert os.path.isfile(os.path.join(killed_dir, "model.params"))  # SIGKILL cleans nothing up
        with storage.staging_dir() as mine:
            assert os.path.isdir(mine) and os.path.dirname(mine) == str(tmp_path)
            assert not os.path.exists(killed_dir)
            assert os.path.isfile(os.path.join(alive_dir, "model.params"))
        assert not os.path.exists(mine)
    finally:
        for proc in (killed, alive):
            proc.kill()
            proc.wait(timeout=30)


@pytest.mark.parametrize("named", [False, True], ids=["O_TMPFILE", "named temporary"])
def test_a_write_that_cannot_be_made_durable_leaves_the_old_file(tmp_path, monkeypatch, named):
    """On NFS (EFS: SageMaker Studio's home) a quota or I/O error can surface only when the data is written
    back (fsync or close): it must come before the rename, while the old file is still in place."""
    import errno

    target = tmp_path / "vectors.vec"
    target.write_bytes(b"the user's file")
    if named:
        monkeypatch.delattr(os, "O_TMPFILE", raising=False)

    def no_room(fd):
        raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))

    monkeypatch.setattr(os, "fsync", no_room)
    with pytest.raises(FastTextError, match=rf"^cannot write {target}: {os.strerror(errno.EDQUOT)}$"):
        with storage.atomic_local_file(str(target)) as f:
            f.write(b"x" * (1 << 20))
    assert target.read_bytes() == b"the user's file" and os.listdir(tmp_path) == ["vectors.vec"]


# ---------------------------------------------------------------- atomic local writes under SIGKILL

WRITER = textwrap.dedent("""
    import os, signal, sys, time
    sys.path.insert(0, {root!r})
    from fasttext_lib import storage
    target, how = sys.argv[1], sys.argv[2]
    if how == "named":  # a filesystem without O_TMPFILE: the temporary has a name while it is written
        del os.O_TMPFILE
    if how == "die-before-rename":  # the instant between naming the complete file and renaming it
        os.replace = lambda a, b: os.kill(os.getpid(), signal.SIGKILL)
    with storage.atomic_local_file(target) as f:
        f.write(b"x" * (1 << 20))
        f.flush()
        if how != "die-before-rename":
            print("writing", flush=True)
            time.sleep(600)  # until killed
""").format(root=ROOT)


def start_writer(tmp_path, target, how):
    """A real process inside atomic_local_file(target); returns once it is writing (or has died)."""
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    proc = subprocess.Popen([sys.executable, str(script), str(target), how], stdout=subprocess.PIPE, text=True)
    if how != "die-before-rename":
        assert proc.stdout.readline() == "writing\n"
    return proc


def kill9(proc):
    proc.kill()
    assert proc.wait(timeout=60) == -signal.SIGKILL
    proc.stdout.close()


def temporaries(directory, target):
    """Hidden temporaries of writes to ``target`` (any naming; the decoys below are made after this is called)."""
    name = os.path.basename(str(target))
    return sorted(n for n in os.listdir(directory) if n.startswith(f".{name}.") and n.endswith(".tmp"))


def test_sigkill_mid_write_leaves_nothing_where_the_filesystem_has_o_tmpfile(tmp_path):
    target = tmp_path / "out" / "vectors.vec"
    target.parent.mkdir()
    writer = start_writer(tmp_path, target, "anonymous")
    assert os.listdir(target.parent) == []  # 1 MiB written, and no name for it anywhere
    kill9(writer)
    assert os.listdir(target.parent) == []


def test_next_write_removes_a_killed_writers_temporary_but_never_a_live_ones(tmp_path):
    directory = tmp_path / "out"
    directory.mkdir()
    target = directory / "vectors.vec"
    target.write_bytes(b"old")
    # What is not ours to remove: another target's temporary, and names that only look like ours.
    others = [".other.vec.fasttext-1-0123456789abcdef.tmp", ".vectors.vec.abcd1234.tmp",
              ".vectors.vec.fasttext-1-0123456789abcdefX.tmp", "vectors.vec.fasttext-1-0123456789abcdef.tmp"]
    live = start_writer(tmp_path, target, "named")  # no O_TMPFILE: its temporary has a name while written
    try:
        live_temp = temporaries(directory, target)
        assert len(live_temp) == 1
        kill9(start_writer(tmp_path, target, "named"))  # ... and stays when the writer is killed
        killed = [n for n in temporaries(directory, target) if n not in live_temp]
        assert len(killed) == 1
        dead = start_writer(tmp_path, target, "die-before-rename")  # O_TMPFILE: complete, named, not renamed
        assert dead.wait(timeout=60) == -signal.SIGKILL
        dead.stdout.close()
        died = [n for n in temporaries(directory, target) if n not in live_temp]
        assert len(died) == 1 and died != killed  # that writer removed the killed one's first
        for name in others:
            (directory / name).write_bytes(b"keep")
        assert target.read_bytes() == b"old"
        with storage.atomic_local_file(str(target)) as f:
            f.write(b"new")
        assert target.read_bytes() == b"new"
        assert sorted(os.listdir(directory)) == sorted(["vectors.vec"] + live_temp + others)  # the dead writer's went
        assert os.path.getsize(directory / live_temp[0]) == 1 << 20  # untouched: it is still being written
    finally:
        kill9(live)
    with storage.atomic_local_file(str(target)) as f:
        f.write(b"newer")
    assert sorted(os.listdir(directory)) == sorted(["vectors.vec"] + others) and target.read_bytes() == b"newer"


OLD_WRITER = textwrap.dedent("""
    import os, sys, tempfile, time
    target = sys.argv[1]  # what atomic_local_file did before its temporaries were locked (commit 046f09b)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp",
                               dir=os.path.dirname(target))
    os.write(fd, b"x" * 4096)
    print(os.path.basename(tmp), flush=True)
    time.sleep(600)  # until killed
""")


def test_next_write_removes_an_old_versions_unlocked_temporary_once_it_is_a_day_old(tmp_path, monkeypatch):
    directory = tmp_path / "out"
    directory.mkdir()
    target = directory / "vectors.vec"
    target.write_bytes(b"old")
    script = tmp_path / "old_writer.py"
    script.write_text(OLD_WRITER)
    old = subprocess.Popen([sys.executable, str(script), str(target)], stdout=subprocess.PIPE, text=True)
    old_temp = old.stdout.readline().strip()
    assert storage.is_old_temporary_of(old_temp, str(target))
    kill9(old)
    # Not ours: other names that look alike, a link and a directory by the exact name, a file with a second
    # link, and (as root, which can give it away) one owned by another user.
    others = [".vectors.vec.abcd123.tmp", ".vectors.vec.ABCD1234.tmp", "vectors.vec.abcd1234.tmp",
              ".vectors.vec.abcd1234.tmp.bak", ".other.vec.abcd1234.tmp", ".vectors.vec.abcd12345.tmp",
              ".vectors.vec.ab-d1234.tmp", ".vectors.vec.abcd1234.TMP"]
    for name in others:
        (directory / name).write_bytes(b"keep")
    (directory / ".vectors.vec.link0000.tmp").symlink_to(directory / others[0])
    (directory / ".vectors.vec.dir00000.tmp").mkdir()
    os.link(directory / others[1], directory / ".vectors.vec.hard0000.tmp")
    others += [".vectors.vec.link0000.tmp", ".vectors.vec.dir00000.tmp", ".vectors.vec.hard0000.tmp"]
    if os.geteuid() == 0:
        (directory / ".vectors.vec.theirs00.tmp").write_bytes(b"keep")
        os.chown(directory / ".vectors.vec.theirs00.tmp", 54321, -1)
        others.append(".vectors.vec.theirs00.tmp")

    # Within the day its writer may still be writing (a try-lock cannot tell: it never locked): it stays.
    with storage.atomic_local_file(str(target)) as f:
        f.write(b"new")
    assert sorted(os.listdir(directory)) == sorted(["vectors.vec", old_temp] + others)
    # A day and a minute later (its mtime and ctime are not back-datable, so the clock moves instead): gone.
    later = time.time() + storage.OLD_TEMPORARY_GRACE_SECONDS + 60
    monkeypatch.setattr(storage.atomic, "time", type(sys)("fake_time"))  # the clock atomic.py reads, alone
    storage.atomic.time.time = lambda: later
    with storage.atomic_local_file(str(target)) as f:
        f.write(b"newer")
    assert target.read_bytes() == b"newer"
    assert sorted(os.listdir(directory)) == sorted(["vectors.vec"] + others)
    assert all((directory / n).read_bytes() == b"keep" for n in others if (directory / n).is_file())


# ---------------------------------------------------------------- S3 writes without s3:ListBucket

def _admin_keys(policy, prefix):
    listed = policy.client("admin").list_objects_v2(Bucket=policy.bucket, Prefix=prefix).get("Contents", [])
    return sorted(o["Key"] for o in listed)


def test_no_overwrite_write_is_a_conditional_put_also_in_parts(s3_bucket, monkeypatch):
    # boto3's managed upload cannot pass If-None-Match: large files go up in parts, the condition on completion.
    monkeypatch.setattr(storage.s3, "CONDITIONAL_PART_BYTES", 5 << 20)  # S3's smallest part
    uri = f"{s3_bucket}/big.bin"
    data = os.urandom(11 << 20)  # three parts
    with storage.atomic_write(uri, "wb", overwrite=False) as f:
        f.write(data)
    assert storage.read_bytes(uri) == data
    # In three parts (a multipart object's ETag ends in its number of parts): the smaller part size above reached
    # the upload, or the parts were never tried.
    etag = boto3.client("s3").head_object(Bucket=storage.split_s3(uri)[0], Key="big.bin")["ETag"]
    assert etag.strip('"').endswith("-3"), etag
    with pytest.raises(FastTextError, match=rf"^{uri} already exists; pass --overwrite to replace it$"):
        with storage.atomic_write(uri, "wb", overwrite=False) as f:
            f.write(b"x" * (11 << 20))
    assert storage.read_bytes(uri) == data
    bucket = storage.split_s3(uri)[0]
    assert boto3.client("s3").list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []  # the refused one aborted


@pytest.mark.parametrize("versioning", [None, "Enabled"])
@pytest.mark.parametrize("parts", [False, True])
def test_a_create_only_write_whose_answer_is_lost_is_a_success_it_can_take_back(s3_bucket, proxy, monkeypatch,
                                                                                 versioning, parts):
    """S3 stored the create-only PUT (or the completion of its parts) but its answer was lost (a 500): botocore's
    retry of it was refused by S3 (412: the first one stored it), and the write said "<uri> already exists; pass
    --overwrite to replace it" about the file it had just created, recording nothing in ``written``: a trial table
    claimed without --overwrite then stayed with no bundle, and refused every rerun. It is this write's own object:
    a success, recorded so that a take-back deletes it (by its version where the bucket keeps them)."""
    bucket = s3_bucket[len("s3://"):]
    if versioning:
        boto3.client("s3").put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": versioning})
    data = os.urandom(11 << 20) if parts else b"this run's table\n"
    if parts:
        monkeypatch.setattr(storage.s3, "CONDITIONAL_PART_BYTES", 5 << 20)  # S3's smallest part
        proxy.fail("POST", r"/out/table\.csv$", "lost", nth=2)  # the completion (the 1st POST starts the upload)
    else:
        proxy.fail("PUT", r"/out/table\.csv$", "lost", nth=1)
    uri, written = f"{s3_bucket}/out/table.csv", []
    with storage.atomic_write(uri, "wb", overwrite=False, written=written) as f:
        f.write(data)
    proxy.clear()
    assert storage.read_bytes(uri) == data and [(b, k) for b, k, _ in written] == [(bucket, "out/table.csv")]
    storage.remove_file(uri, written)  # a caller's take-back (save_bundle_with_trials')
    versions = boto3.client("s3").list_object_versions(Bucket=bucket, Prefix="out/")
    assert (versions.get("Versions", []), versions.get("DeleteMarkers", [])) == ([], [])
    # someone else's object at the key is still refused, its retry or not
    boto3.client("s3").put_object(Bucket=bucket, Key="out/table.csv", Body=b"theirs")
    proxy.fail("PUT", r"/out/table\.csv$", "500", nth=1)
    with pytest.raises(FastTextError, match=rf"^{uri} already exists; pass --overwrite to replace it$"):
        with storage.atomic_write(uri, "wb", overwrite=False) as f:
            f.write(b"this run's table\n")
    assert storage.read_bytes(uri) == b"theirs"


def test_put_only_user_writes_plain_objects_and_is_told_what_bundles_need(s3_policy_server, monkeypatch, tmp_path):
    policy = s3_policy_server
    _as_user(monkeypatch, policy, "putter")
    uri = f"s3://{policy.bucket}/plain/data.csv"
    storage.refuse_existing(uri)  # 403: cannot tell, so nothing refused here
    storage.check_writable(f"s3://{policy.bucket}/plain")  # HeadBucket refused: no probe it could not delete
    with storage.atomic_write(uri, "wb", overwrite=False) as f:
        f.write(b"first")
    with pytest.raises(FastTextError, match="already exists"):
        with storage.atomic_write(uri, "wb", overwrite=False) as f:
            f.write(b"second")
    # A client that cannot write conditionally (botocore before 1.35) says what it could not check.
    monkeypatch.setattr(storage.s3, "_conditional_writes", lambda client: False)
    with pytest.raises(FastTextError, match=rf"^cannot tell whether {uri} exists: S3 refused to say .*pass --overwrite"):
        with storage.atomic_write(uri, "wb", overwrite=False) as f:
            f.write(b"third")
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_csv

    # the Python API's writer names its argument (it said --overwrite, a flag its caller has none of)
    with pytest.raises(FastTextError, match=rf"^cannot tell whether {uri} exists: .*; pass overwrite=True if "):
        write_csv(LabeledTexts(["1"], ["third"]), uri, overwrite=False)
    with storage.atomic_write(uri, "wb") as f:  # overwrite: a plain upload
        f.write(b"fourth")
    assert _admin_keys(policy, "plain/") == ["plain/data.csv"]
    assert policy.client("admin").get_object(Bucket=policy.bucket, Key="plain/data.csv")["Body"].read() == b"fourth"
    # A set (bundle, checkpoint) needs s3:DeleteObject to take back an interrupted upload: said up front, and
    # asked by deleting a key that does not exist, so nothing is written (not even a probe).
    dest = f"s3://{policy.bucket}/model"
    expected = (rf"^cannot publish to {dest}: S3 refused to delete there \(s3:DeleteObject\), which is needed to "
                rf"take back an interrupted upload and the files of a replaced set; grant s3:DeleteObject on {policy.bucket}$")
    with pytest.raises(FastTextError, match=expected):
        storage.check_writable(dest, MANIFEST)
    assert _admin_keys(policy, "model") == []


def _unlisted_keys(policy, dest):
    return [k.rsplit("/", 1)[1] for k in _admin_keys(policy, storage.split_s3(dest)[1] + "/")]


def _objects(dest):
    return sorted(v["object"] for v in storage.read_manifest(dest, MANIFEST)["files"].values())


def test_publish_without_list_bucket_keeps_the_guarantees(unlisted, tmp_path):
    policy, proxy, dest = unlisted
    bucket, prefix = storage.split_s3(dest)
    with pytest.raises(Exception, match="AccessDenied"):  # the principal really cannot list...
        boto3.session.Session().client("s3").list_objects_v2(Bucket=bucket, Prefix=prefix)
    with pytest.raises(FastTextError, match="^access denied"):  # ...and a missing key is refused, not missing
        storage.read_manifest(dest, MANIFEST)
    storage.check_writable(dest, MANIFEST)
    assert _unlisted_keys(policy, dest) == []  # the probe is gone
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    assert load_tag(dest, tmp_path) == "old"
    old = _objects(dest)
    assert _unlisted_keys(policy, dest) == sorted(old + [MANIFEST])
    # overwrite=False: the existing set is refused in one line; nothing of the second run stays
    hint = "save with overwrite=True to replace it"
    with pytest.raises(FastTextError, match=rf"^{dest}/{MANIFEST} already exists; {hint}$") as err:
        storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"}, overwrite=False, hint=hint)
    one_line(err.value)
    assert load_tag(dest, tmp_path) == "old" and _unlisted_keys(policy, dest) == sorted(old + [MANIFEST])
    # overwrite (the default): replaced; the old files, known from the old manifest, are deleted
    storage.check_writable(dest, MANIFEST)
    storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    assert load_tag(dest, tmp_path) == "new"
    new = _objects(dest)
    assert _unlisted_keys(policy, dest) == sorted(new + [MANIFEST]) and not set(old) & set(new)
    storage.remove(dest, MANIFEST)  # the manifest first, then the files it names: no listing needed either
    assert _unlisted_keys(policy, dest) == []


@pytest.mark.parametrize("pattern", [r"/model-", r"/vocab-", r"/config\.json$"])
def test_interrupted_publish_without_list_bucket_leaves_no_manifest_and_takes_its_files_back(unlisted, tmp_path, pattern):
    policy, proxy, dest = unlisted
    proxy.fail("PUT", pattern, "500")
    with pytest.raises(FastTextError) as err:
        storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    assert dest in one_line(err.value)
    assert _unlisted_keys(policy, dest) == []  # no manifest, and what it uploaded was deleted again
    proxy.clear()
    for method in ("GET", "HEAD"):
        proxy.fail(method, r".", "403-if-missing")
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    before = _unlisted_keys(policy, dest)
    proxy.fail("PUT", pattern, "500")
    with pytest.raises(FastTextError):
        storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    proxy.rules = proxy.rules[:2]
    assert load_tag(dest, tmp_path) == "old" and _unlisted_keys(policy, dest) == before


def test_killed_publish_without_list_bucket_leaves_no_manifest(unlisted, tmp_path):
    policy, proxy, dest = unlisted
    code, _ = run_publisher(tmp_path, dest, "new", kill_at="2")  # killed right after its 2nd of 3 uploads
    assert code == -signal.SIGKILL
    assert MANIFEST not in _unlisted_keys(policy, dest) and len(_unlisted_keys(policy, dest)) == 2
    with pytest.raises(FastTextError, match="^access denied"):  # no set: readers find nothing to load
        storage.read_manifest(dest, MANIFEST)
    # The next publish works; the two orphans cannot be found without a listing, so they stay (only then).
    storage.publish(dest, make_files(tmp_path, "next"), MANIFEST, {"tag": "next"})
    assert load_tag(dest, tmp_path) == "next" and len(_unlisted_keys(policy, dest)) == 4 + 2


@pytest.mark.parametrize("old", [False, True])
def test_a_concurrent_publish_without_list_bucket_is_never_replaced_unseen(unlisted, tmp_path, monkeypatch, old):
    """Another publisher commits while this one uploads: its set stays whole and live, this one fails in
    one line and takes its files back (with a listing the last one wins and replaces the other's set, files and
    all: test_a_set_another_publisher_commits_meanwhile_is_replaced_with_its_files_not_left_behind; without one,
    the loser's files could never be found again)."""
    policy, proxy, dest = unlisted
    if old:
        storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    real_hash = another_publishes_meanwhile(monkeypatch, dest, tmp_path)
    why = "was replaced by another save meanwhile" if old else "was written by another save meanwhile"
    with pytest.raises(FastTextError, match=rf"^{dest} {why}; nothing of this one was kept; try again$") as err:
        storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    one_line(err.value)
    assert load_tag(dest, tmp_path) == "other"
    assert _unlisted_keys(policy, dest) == sorted(_objects(dest) + [MANIFEST])
    monkeypatch.setattr(storage.sets, "hash_file", real_hash)
    with pytest.raises(FastTextError, match=rf"^{dest}/{MANIFEST} already exists; x$"):
        storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"}, overwrite=False, hint="x")


def test_check_writable_without_list_bucket_still_fails_fast(unlisted, tmp_path):
    """A missing bucket is said up front. A role that may not put there is told by the write itself: without
    s3:ListBucket and s3:GetBucketVersioning the check cannot ask S3 without storing a probe, which a bucket that
    keeps versions would keep (a noncurrent version and a delete marker each run), and nothing is left either way."""
    policy, proxy, dest = unlisted
    with pytest.raises(FastTextError, match="^S3 bucket does not exist: no-such-bucket-nolist"):
        storage.check_writable("s3://no-such-bucket-nolist/model", MANIFEST)
    proxy.fail("PUT", r".", "403")  # no s3:PutObject
    storage.check_writable(dest, MANIFEST)
    with pytest.raises(FastTextError, match=rf"^access denied to {dest} "):
        storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    assert _unlisted_keys(policy, dest) == []


def test_a_role_without_get_object_publishes_a_new_set_and_never_replaces_one(unlisted, tmp_path):
    """README: a bundle --output on S3 needs s3:PutObject and s3:DeleteObject; s3:GetObject only to replace a bundle
    already there (README said all three were needed, and that a refused save deletes what it uploaded). A
    write-only role (no GetObject, no ListBucket: every read is 403) passes the check and publishes a new set;
    over an existing one its save fails in one line naming s3:GetObject and the old set stays whole. Its data
    files stay, unreferenced: the role cannot read the live manifest, so it cannot tell a lost answer to its own
    commit (a retried PUT refused by its own condition) from another set's manifest."""
    policy, proxy, dest = unlisted
    proxy.clear()
    for method in ("GET", "HEAD"):  # what S3 answers every read of a caller without s3:GetObject
        proxy.fail(method, r".", "403")
    storage.check_writable(dest, MANIFEST)
    storage.publish(dest, make_files(tmp_path, "new"), MANIFEST, {"tag": "new"})
    first = _unlisted_keys(policy, dest)
    assert len(first) == 4 and "config.json" in first
    with pytest.raises(FastTextError, match=r"grant s3:GetObject or choose another destination$") as info:
        storage.publish(dest, make_files(tmp_path, "next"), MANIFEST, {"tag": "next"})
    one_line(info.value)
    assert set(first) < set(_unlisted_keys(policy, dest))
    proxy.clear()  # read as a role that may: the first set, whole
    for method in ("GET", "HEAD"):
        proxy.fail(method, r".", "403-if-missing")
    assert load_tag(dest, tmp_path) == "new"


def test_sample_to_s3_with_only_put_permission(s3_policy_server):
    from conftest import cli_in_process_with, run_cli

    policy = s3_policy_server
    out = f"s3://{policy.bucket}/sample"
    r = run_cli("sample", "--output", out, env=policy.env("putter"))
    assert r.returncode == 0, r.stderr
    assert _admin_keys(policy, "sample/") == ["sample/test.csv", "sample/train.csv"]
    # (the refusal and the replacement in this process, as the putter: the write's process is above)
    r = cli_in_process_with(policy.env("putter"), "sample", "--output", out)
    assert (r.returncode, r.stderr.strip().splitlines()) == (
        2, [f"error: {out}/train.csv already exists; pass --overwrite to replace it"]), r.stderr
    assert cli_in_process_with(policy.env("putter"), "sample", "--output", out, "--overwrite").returncode == 0


@pytest.mark.parametrize("where", ["s3 without ListBucket", "local"])
def test_save_bundle_overwrite_false_never_replaces_a_bundle(unlisted, tmp_path, where):
    """bundle.save_bundle(overwrite=False): the bundle already there is refused in one line and stays
    loadable, nothing of the refused save is left; with keep_beside=True (the command line's) the model is kept
    beside it, at the first free <dest>.N, which the line names; the default replaces it and its old files go."""
    import numpy as np

    from conftest import make_splits
    from fasttext_lib.bundle import save_bundle, stored_names
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.predict import Predictor
    from fasttext_lib.train import train

    policy, proxy, dest = unlisted
    dest = str(tmp_path / "bundle") if where == "local" else dest
    names = (lambda: sorted(os.listdir(dest))) if where == "local" else (lambda: _unlisted_keys(policy, dest))
    train_data, val = make_splits(300, 20, seed=5)
    trained = train(train_data, None, TrainConfig(epochs=1, batch_size=64, progress=False))
    save_bundle(trained, dest)
    first = names()
    expected = Predictor(trained.model, trained.featurizer, trained.labels, {}).predict_proba(val.texts)
    np.testing.assert_allclose(Predictor.load(dest).predict_proba(val.texts), expected, atol=1e-6)
    with pytest.raises(FastTextError, match=rf"^{dest}/config\.json already exists; save with overwrite=True to "
                                            rf"replace it, or choose another destination$") as err:
        save_bundle(trained, dest, overwrite=False)  # (unasked, nothing is kept beside it: the script holds trained)
    one_line(err.value)
    assert names() == first
    assert not storage.is_taken(f"{dest}.1")
    for n in (1, 2):  # (the first kept model takes <dest>.1: the second one goes to <dest>.2, replacing nothing)
        with pytest.raises(FastTextError, match=rf"^{re.escape(dest)} already holds a model bundle, which is kept; "
                                                rf"this model is saved as {re.escape(dest)}\.{n} instead$") as err:
            save_bundle(trained, dest, overwrite=False, keep_beside=True)
        one_line(err.value)
        assert err.value.kept == f"{dest}.{n}"
        assert names() == first
        np.testing.assert_allclose(Predictor.load(dest).predict_proba(val.texts), expected, atol=1e-6)
        np.testing.assert_allclose(Predictor.load(f"{dest}.{n}").predict_proba(val.texts), expected, atol=1e-6)
    save_bundle(trained, dest)
    config = storage.read_manifest(dest, MANIFEST)
    assert [n for n in names() if n != storage.LOCK_NAME] == sorted(stored_names(config))
    assert set(names()) & set(first) == {MANIFEST} | ({storage.LOCK_NAME} if where == "local" else set())


def test_save_bundle_overwrite_false_that_cannot_keep_its_model_beside_the_bundle_says_both_in_one_line(tmp_path,
                                                                                                         monkeypatch):
    """Where the model cannot be kept beside the bundle there (every name taken; the save there failing), the one line
    says that too, and nothing is written: neither in place of the bundle nor of anything beside it."""
    from conftest import make_splits
    from fasttext_lib import bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train

    trained = train(make_splits(300, 20, seed=5)[0], None, TrainConfig(epochs=1, batch_size=64, progress=False))
    dest = str(tmp_path / "bundle")
    bundle.save_bundle(trained, dest)
    for n in (1, 2):
        os.makedirs(f"{dest}.{n}")  # (empty folders: a set could go there, but a name taken is passed by)
    monkeypatch.setattr(bundle, "MAX_SIBLINGS", 2)
    refused = f"{dest}/config.json already exists; save with overwrite=True to replace it, or choose another destination"
    with pytest.raises(FastTextError) as err:
        bundle.save_bundle(trained, dest, overwrite=False, keep_beside=True)
    assert str(err.value) == (f"{refused}; and every name beside it this model could be kept as ({dest}.1 to "
                              f"{dest}.2) is taken")
    real_publish = bundle.publish_bundle

    def full_beside(where, *args, **kwargs):
        if where != dest:
            raise FastTextError(f"cannot write {where}: No space left on device")
        return real_publish(where, *args, **kwargs)
    monkeypatch.setattr(bundle, "MAX_SIBLINGS", 3)
    monkeypatch.setattr(bundle, "publish_bundle", full_beside)
    with pytest.raises(FastTextError) as err:
        bundle.save_bundle(trained, dest, overwrite=False, keep_beside=True)
    assert str(err.value) == (f"{refused}; keeping this model as {dest}.3 failed too: cannot write {dest}.3: No space "
                              f"left on device")
    assert sorted(os.listdir(tmp_path)) == ["bundle", "bundle.1", "bundle.2"]
    assert os.listdir(f"{dest}.1") == os.listdir(f"{dest}.2") == []


def test_lost_answer_to_a_conditional_manifest_put_is_a_success(unlisted, tmp_path, monkeypatch):
    """Without a listing the manifest PUT is conditional: botocore's retry of a PUT whose answer was lost is
    refused by S3 (412: the first one stored it). That refusal must not take back the files of a live set."""
    policy, proxy, dest = unlisted
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")  # botocore retries the 500 once
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})  # then If-Match
    for tag in ("new", "newer"):
        proxy.fail("PUT", r"/config\.json$", "lost", nth=1)
        storage.publish(dest, make_files(tmp_path, tag), MANIFEST, {"tag": tag})
        assert load_tag(dest, tmp_path) == tag and _unlisted_keys(policy, dest) == sorted(_objects(dest) + [MANIFEST])
    fresh = dest + "-fresh"  # If-None-Match: no manifest seen
    proxy.fail("PUT", r"-fresh/config\.json$", "lost", nth=1)
    storage.publish(fresh, make_files(tmp_path, "fresh"), MANIFEST, {"tag": "fresh"})
    assert load_tag(fresh, tmp_path) == "fresh" and len(_unlisted_keys(policy, fresh)) == 4


# ---------------------------------------------------------------- sets of plain files on S3 (a train/test pair)

def _write_pair(prefix, tag):
    uris = [f"{prefix}/pair.train", f"{prefix}/pair.test"]
    with storage.atomic_writes(uris) as (train, test):
        train.write(f"__label__1 {tag} train\n".encode())
        test.write(f"__label__1 {tag} test\n".encode())
    return uris


def _bucket_keys(s3_uri):
    bucket, prefix = storage.split_s3(s3_uri)
    listed = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return sorted(o["Key"][len(prefix) + 1:] for o in listed)


@pytest.mark.parametrize("pattern, action", [(r"staging-[0-9a-f]{16}-pair\.test$", "500"),
                                             (r"staging-[0-9a-f]{16}-pair\.test$", "reset"),
                                             (r"staging-[0-9a-f]{16}-pair\.train$", "500")])
def test_a_failed_upload_of_either_split_leaves_the_old_pair_whole(s3_bucket, proxy, pattern, action):
    """The pair's files went to their keys one upload at a time: a failed second upload left the new train split
    beside the old test split (and a later training run used them). Both are now uploaded to staging keys first
    and put in place only once both are there: the old pair stays whole, and nothing staged is left behind."""
    prefix = f"{s3_bucket}/data"
    train, test = _write_pair(prefix, "old")
    proxy.fail("PUT", pattern, action)
    with pytest.raises(FastTextError) as err:
        _write_pair(prefix, "new")
    assert "no longer belong together" not in one_line(err.value)
    proxy.clear()
    assert storage.read_bytes(train) == b"__label__1 old train\n" and storage.read_bytes(test) == b"__label__1 old test\n"
    assert _bucket_keys(prefix) == ["pair.test", "pair.train"]  # the staging objects went, found without a listing


def test_a_pair_left_mixed_by_a_failure_between_its_copies_is_never_read_together(s3_bucket, proxy):
    """Only the server-side copies that put the staged files in place can fail between the two: the error says the
    files no longer belong together, and reading either of them (its partner is of another write) is refused in one
    line until the pair is written again."""
    prefix = f"{s3_bucket}/data"
    train, test = _write_pair(prefix, "old")
    proxy.fail("PUT", r"/pair\.test$", "500")  # the copy onto pair.test (the staged upload has another key)
    with pytest.raises(FastTextError, match=rf"{train} had already been written, so the files written together no "
                                            rf"longer belong together \(reading them together is refused\)"):
        _write_pair(prefix, "new")
    proxy.clear()
    bucket = storage.split_s3(prefix)[0]
    raw = {k: boto3.client("s3").get_object(Bucket=bucket, Key=storage.split_s3(u)[1])["Body"].read()
           for k, u in (("train", train), ("test", test))}
    assert raw == {"train": b"__label__1 new train\n", "test": b"__label__1 old test\n"}  # mixed
    assert _bucket_keys(prefix) == ["pair.test", "pair.train"]
    for uri in (train, test):
        with pytest.raises(FastTextError, match=r"were written together, but that one is now of another write of them") as err:
            storage.read_bytes(uri)
        one_line(err.value)
    _write_pair(prefix, "again")  # the advice works
    assert storage.read_bytes(train) == b"__label__1 again train\n" and storage.read_bytes(test) == b"__label__1 again test\n"


def test_a_split_replaced_after_its_partner_was_read_is_refused_within_one_run(s3_bucket):
    """A training run reads its train split, then its validation split: a complete new write of the pair in between
    gave it one split of each write. Within storage.reading_together (the train command) that is refused; each
    object is read pinned to the ETag its metadata was checked on."""
    prefix = f"{s3_bucket}/data"
    train, test = _write_pair(prefix, "first")
    with storage.reading_together():
        assert storage.read_bytes(train) == b"__label__1 first train\n"
        _write_pair(prefix, "second")
        with pytest.raises(FastTextError, match=r"which this run read from another write of them \(they were "
                                                r"written again while it ran\): run it again$"):
            storage.read_bytes(test)
    with storage.reading_together():  # read afresh: one write, accepted
        assert storage.read_bytes(train) == b"__label__1 second train\n"
        assert storage.read_bytes(test) == b"__label__1 second test\n"


def test_the_users_own_file_in_place_of_a_split_is_read_with_a_warning(s3_bucket, capsys):
    """A data scientist's own upload over one split (no set metadata, put there after the pair was written) made
    its partner unreadable, even alone, and the advice (write both again) would have replaced their file. It is
    their doing, not a half-written pair: both are read as they are, with one warning line."""
    prefix = f"{s3_bucket}/data"
    train, test = _write_pair(prefix, "ours")
    bucket, key = storage.split_s3(test)
    boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=b"__label__1 someone else's\n")
    capsys.readouterr()
    with storage.reading_together():
        assert storage.read_bytes(train) == b"__label__1 ours train\n"
        assert storage.read_bytes(test) == b"__label__1 someone else's\n"
    assert storage.read_bytes(train) == b"__label__1 ours train\n"  # warned once, not once a read
    err = capsys.readouterr().err
    assert err == (f"warning: {test} was replaced by another file after {train} was written with it: reading them "
                   f"as they are\n"), err


def test_a_copy_of_a_split_made_elsewhere_is_a_file_of_its_own(s3_bucket, capsys):
    """aws s3 cp (and boto3's copy) keep the metadata, which names the keys the set was written to: the copy was
    refused once the original pair was written again ("run the command that wrote them again" could not help)."""
    prefix = f"{s3_bucket}/data"
    train, _ = _write_pair(prefix, "first")
    bucket, key = storage.split_s3(train)
    boto3.client("s3").copy_object(Bucket=bucket, Key="mine/train", CopySource={"Bucket": bucket, "Key": key})
    _write_pair(prefix, "second")
    capsys.readouterr()
    with storage.reading_together():
        assert storage.read_bytes(f"s3://{bucket}/mine/train") == b"__label__1 first train\n"
        assert storage.read_bytes(f"{prefix}/pair.test") == b"__label__1 second test\n"
    assert capsys.readouterr().err == ""


def _a_pair_without_set_metadata(s3_bucket):
    """A train/test pair put on S3 by other means (no set metadata): (prefix, train, test, bucket, client)."""
    prefix = f"{s3_bucket}/data"
    train, test = f"{prefix}/pair.train", f"{prefix}/pair.test"
    bucket = storage.split_s3(prefix)[0]
    client = boto3.client("s3")
    for uri in (train, test):
        client.put_object(Bucket=bucket, Key=storage.split_s3(uri)[1], Body=b"__label__1 plain\n")
    return prefix, train, test, bucket, client


def test_a_pair_from_before_set_metadata_left_half_replaced_is_refused_and_the_way_round_works(s3_bucket, proxy):
    """Over a pair without set metadata (written before it, or by other means), a write failing between its copies
    leaves the new train split beside an old test split that carries no set: not the user's doing (it is older than
    the new split), so it is refused, as a partner of another write is; dropping the metadata reads them as they
    are."""
    prefix, train, test, bucket, client = _a_pair_without_set_metadata(s3_bucket)
    time.sleep(1.1)  # Last-Modified counts whole seconds
    proxy.fail("PUT", r"/pair\.test$", "500")
    with pytest.raises(FastTextError, match="no longer belong together"):
        _write_pair(prefix, "new")
    proxy.clear()
    with pytest.raises(FastTextError, match=r"but that one is still the file this write replaced, which it never "
                                            r"reached: write them again together .* --metadata-directive REPLACE$") as err:
        storage.read_bytes(train)
    one_line(err.value)
    key = storage.split_s3(train)[1]
    # a set written without the ETags its keys held before (by an earlier version): Last-Modified decides
    metadata = client.head_object(Bucket=bucket, Key=key)["Metadata"]
    del metadata[storage.files.SET_BEFORE_META]
    client.copy_object(Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": key}, Metadata=metadata,
                       MetadataDirective="REPLACE")
    with pytest.raises(FastTextError, match=r"but that one is older than this one: the write of both never reached "
                                            r"it: write them again together .* --metadata-directive REPLACE$") as err:
        storage.read_bytes(train)
    one_line(err.value)
    client.copy_object(Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": key}, MetadataDirective="REPLACE")
    assert storage.read_bytes(train) == b"__label__1 new train\n"


@contextlib.contextmanager
def _heads_in_one_second():
    """Every HeadObject answer of the library's S3 client says the same Last-Modified, as S3's (whole seconds) does
    for objects written within one second: the test does not depend on where the clock's second turns."""
    import datetime

    client = storage.s3_client()
    second = datetime.datetime(2024, 5, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)

    def same_second(parsed, **_):
        if "LastModified" in parsed:
            parsed["LastModified"] = second

    client.meta.events.register("after-call.s3.HeadObject", same_second)
    try:
        yield
    finally:
        client.meta.events.unregister("after-call.s3.HeadObject", same_second)


def test_an_old_partner_of_the_same_second_is_refused_and_the_users_own_is_read(s3_bucket, proxy, capsys):
    """A write failing between its copies left the new train split beside the old test split, put there (without set
    metadata) in the same second: Last-Modified counts whole seconds, so the old split was taken as the user's file
    put there after the write, and the mixed pair was read, with a warning saying so. The write now records what each
    key held before it (its ETag): a partner still holding that was never reached, whatever the clock says. The
    user's own file, put there after the write in the same second, is still read with the warning."""
    prefix, train, test, bucket, client = _a_pair_without_set_metadata(s3_bucket)
    proxy.fail("PUT", r"/pair\.test$", "500")
    with pytest.raises(FastTextError, match="no longer belong together"):
        _write_pair(prefix, "new")
    proxy.clear()
    with _heads_in_one_second():
        with pytest.raises(FastTextError, match=r"but that one is still the file this write replaced, which it never "
                                                r"reached: write them again together") as err:
            storage.read_bytes(train)
        one_line(err.value)
        _write_pair(prefix, "whole")
        client.put_object(Bucket=bucket, Key=storage.split_s3(test)[1], Body=b"__label__1 mine\n")
        capsys.readouterr()
        assert storage.read_bytes(train) == b"__label__1 whole train\n"
    assert capsys.readouterr().err == (f"warning: {test} was replaced by another file after {train} was written with "
                                       f"it: reading them as they are\n")


def test_train_reads_a_prepared_train_split_beside_the_users_own_validation_file(s3_bucket):
    """The CLI end to end: sample's pair, then the user's own test.csv uploaded over one; train used to stop with
    'write them again together' (which would have replaced the user's file)."""
    from conftest import cli_in_process, run_cli

    out = f"{s3_bucket}/splits"
    assert cli_in_process("sample", "--output", out).returncode == 0  # (sample's pair: this process; train's: its own)
    bucket, key = storage.split_s3(f"{out}/test.csv")
    client = boto3.client("s3")
    mine = b"".join(client.get_object(Bucket=bucket, Key=key)["Body"].read().splitlines(True)[:200])
    client.put_object(Bucket=bucket, Key=key, Body=mine)
    r = run_cli("train", "--train", f"{out}/train.csv", "--validation", f"{out}/test.csv", "--output",
                f"{out}/model", "--epochs", "1", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert f"warning: {out}/test.csv was replaced by another file after {out}/train.csv was written" in r.stderr
    assert client.get_object(Bucket=bucket, Key=key)["Body"].read() == mine  # theirs, untouched


def test_an_object_replaced_mid_read_is_an_error_not_a_stitched_file(s3_bucket, monkeypatch):
    """open_read's GETs are pinned to the ETag of its HEAD: a replacement between them is S3's 412, one line."""
    uri = f"{s3_bucket}/data/one.txt"
    with storage.atomic_write(uri) as f:
        f.write(b"old")
    real = storage.files._smart_open_errors

    @contextlib.contextmanager
    def replaced_first(where):  # the object changes after the HEAD, before smart_open's first GET
        bucket, key = storage.split_s3(where)
        boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=b"new")
        with real(where):
            yield
    monkeypatch.setattr(storage.files, "_smart_open_errors", replaced_first)
    with pytest.raises(FastTextError, match=rf"^{uri} was replaced while it was read; read it again$"):
        storage.read_bytes(uri)


@pytest.mark.parametrize("action", ["cut", "close"])  # the body ended by a reset, or short of its length by a close
@pytest.mark.usefixtures("no_pause_between_smart_open_rereads")
def test_an_object_replaced_between_a_cut_read_and_its_resumption_is_an_error_not_a_stitched_file(s3_bucket, proxy,
                                                                                                 action):
    """smart_open asks for the rest of a body cut midway (Range) with the same If-Match as the first GET: an object
    replaced in between is refused, never the first half of one version and the rest of the other."""
    uri = f"{s3_bucket}/data/big.txt"
    bucket, key = storage.split_s3(uri)
    old, new = b"old line\n" * 300_000, b"new line\n" * 300_000
    boto3.client("s3", endpoint_url=proxy.upstream_url).put_object(Bucket=bucket, Key=key, Body=old)
    proxy.fail("GET", r"/data/big\.txt$", action, nth=1)
    assert storage.read_bytes(uri) == old  # resumed: every byte, once
    proxy.clear()
    proxy.fail("GET", r"/data/big\.txt$", action, nth=1)
    replace = lambda: boto3.client("s3", endpoint_url=proxy.upstream_url).put_object(Bucket=bucket, Key=key, Body=new)
    proxy.fail("GET", r"/data/big\.txt$", replace, nth=1)  # (the first rule took the first GET: this is the second)
    with pytest.raises(FastTextError, match=rf"^{uri} was replaced while it was read; read it again$"):
        storage.read_bytes(uri)


def test_writers_racing_without_overwrite_leave_exactly_one_file_never_replaced(tmp_path):
    """overwrite=False checked for the file, then renamed over it: writers that all passed the check all renamed,
    each replacing the one before (two autotune runs writing one trial table). The name is now taken by a link,
    which never replaces: one writer wins, every other is refused, and the file is the winner's."""
    import threading

    target = tmp_path / "trials.csv"
    for round_ in range(20):
        if target.exists():
            target.unlink()
        barrier, won, refused = threading.Barrier(8), [], []

        def write(n):
            try:
                with storage.atomic_write(str(target), "wb", overwrite=False) as f:
                    f.write(f"writer {n}\n".encode())
                    barrier.wait()  # all written and checked-for at once: the race
                won.append(n)
            except FastTextError as exc:
                assert "already exists" in str(exc)
                refused.append(n)
        threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(won) == 1 and len(refused) == 7, (round_, won)
        assert target.read_text() == f"writer {won[0]}\n"
        assert sorted(os.listdir(tmp_path)) == ["trials.csv"]  # no temporaries left


def test_two_local_writes_of_a_pair_at_once_leave_one_writes_pair(tmp_path, monkeypatch):
    """Two sample / prepare runs writing one folder's train.csv and test.csv at once: each put its files in place by
    two renames, and theirs interleaved (A's train, then all of B, then A's test): both succeeded and left B's
    training split beside A's test split, silently (locally no set metadata tells a reader). The second now waits
    for the first's renames: the pair is wholly one run's."""
    import fcntl
    import stat
    import threading

    uris = [str(tmp_path / "train.csv"), str(tmp_path / "test.csv")]
    real_replace, real_flock = os.replace, fcntl.flock
    b_went_on, a_between = threading.Event(), threading.Event()  # (B ran whole, or found A's lock held; A between)

    def replace(src, dst, *args, **kwargs):
        real_replace(src, dst, *args, **kwargs)
        if threading.current_thread().name == "A" and str(dst).endswith("train.csv"):
            a_between.set()
            # B runs whole here unless it must wait for A. (Not a fixed 1.5 s: a loaded machine's B, without the
            # lock, could take longer to run whole, and the pair came out B's by A's rename of test.csv first.)
            b_went_on.wait(60)
    monkeypatch.setattr(os, "replace", replace)

    def flock(fd, how):
        try:
            return real_flock(fd, how)
        except OSError as exc:
            if threading.current_thread().name == "B" and exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN) and \
                    stat.S_ISDIR(os.fstat(fd).st_mode):
                b_went_on.set()  # (B waits for A's lock on the folder; not for A's temporaries, which it may not clean)
            raise
    monkeypatch.setattr(fcntl, "flock", flock)

    def write(tag):
        with storage.atomic_writes(uris) as (train, test):
            train.write(f"{tag} train\n".encode())
            test.write(f"{tag} test\n".encode())
        if tag == "B":
            b_went_on.set()
    a = threading.Thread(target=write, args=("A",), name="A")
    a.start()
    # A between its renames: after a fixed 0.3 s, a loaded machine's A had not yet begun, and B wrote first, whole
    assert a_between.wait(60)
    b = threading.Thread(target=write, args=("B",), name="B")
    b.start()
    a.join()
    b.join()
    pair = [open(u).read() for u in uris]
    assert pair == ["B train\n", "B test\n"], pair
    assert sorted(os.listdir(tmp_path)) == ["test.csv", "train.csv"]  # no temporaries, no lock file


@pytest.mark.parametrize("user", ["aborter", "writer"])
def test_a_multipart_upload_interrupted_without_list_bucket_is_aborted_by_its_id(unlisted, tmp_path, monkeypatch,
                                                                                 capsys, user):
    """Ctrl-C / SIGTERM during a data file's multipart upload abandons boto3's transfer: the upload was left
    incomplete (its parts stored and billed), and without s3:ListBucket no later run can list it to clean up. It is
    now aborted by the id S3 gave it; a role that may not abort (no s3:AbortMultipartUpload) is told which upload
    is left, by key and id."""
    policy, proxy, dest = unlisted
    _as_user(monkeypatch, policy, user)
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
    files = make_files(tmp_path, "new", size=6 * 1024 * 1024)
    force_multipart(monkeypatch)
    proxy.fail("PUT", r"/model-", "stall", nth=2)  # the second part: S3 holds it, the client waits

    publish_stopped_at_the_stall(proxy, dest, files)
    proxy.release()
    assert any(m == "POST" and q == "uploads" for m, _, q in proxy.log)  # it was a multipart upload
    uploads = policy.client("admin").list_multipart_uploads(Bucket=policy.bucket).get("Uploads", [])
    left = [(u["Key"], u["UploadId"]) for u in uploads if u["Key"].startswith(storage.split_s3(dest)[1])]
    assert _unlisted_keys(policy, dest) == []
    err = capsys.readouterr().err
    if user == "aborter":
        assert left == [] and "warning" not in err
    else:
        assert len(left) == 1
        key, upload = left[0]
        assert (f"warning: the interrupted upload to s3://{policy.bucket}/{key} could not be aborted (" in err
                and f"abort multipart upload {upload} there by hand" in err)
        with contextlib.suppress(Exception):  # (cleanup; the abandoned transfer may be ending it meanwhile)
            policy.client("admin").abort_multipart_upload(Bucket=policy.bucket, Key=key, UploadId=upload)


# What a pair's writer says when other runs' writes keep interleaving with its own (copies or uploads in place).
WRITTEN_AGAIN_AND_AGAIN = (r"were written by other runs at the same time, again and again, and their files are now of "
                           r"two writes \(reading them together is refused\): run the command again, one at a time$")


def test_two_writes_of_a_pair_at_once_end_as_one_writes_pair(s3_bucket, monkeypatch):
    """Two prepare runs to one prefix: their copies can interleave (A's train, then all of B, then A's test), and
    both ended with success, the pair mixed (A's test beside B's train) until a reader refused it. (Then the run
    whose copy came last said so, and the pair stayed mixed.) That run now sees the mix after its copies and copies
    its set again: the pair ends whole, its own, and both runs succeed."""
    prefix = f"{s3_bucket}/data"
    real, interleaved = storage.pairs._copy, []

    def copy(*args):
        real(*args)
        if not interleaved:  # A's first copy done: B runs whole
            interleaved.append(1)
            _write_pair(prefix, "B")
    monkeypatch.setattr(storage.pairs, "_copy", copy)
    train, test = _write_pair(prefix, "A")
    assert storage.read_bytes(train) == b"__label__1 A train\n" and storage.read_bytes(test) == b"__label__1 A test\n"
    assert _bucket_keys(prefix) == ["pair.test", "pair.train"]  # no staging objects left


def test_writes_of_a_pair_that_keep_interleaving_say_the_pair_is_mixed(s3_bucket, monkeypatch):
    """Runs that interleave at every attempt (another write lands between each of A's copies) give up after
    storage.pairs.PAIR_COPY_ATTEMPTS, in one line, and readers refuse the mixed pair; the advice works."""
    prefix = f"{s3_bucket}/data"
    real, copies = storage.pairs._copy, []

    def copy(*args):
        real(*args)
        copies.append(1)
        if len(copies) % 2:  # after each of A's train copies: B runs whole (with the real copy)
            monkeypatch.setattr(storage.pairs, "_copy", real)
            _write_pair(prefix, "B")
            monkeypatch.setattr(storage.pairs, "_copy", copy)
    monkeypatch.setattr(storage.pairs, "_copy", copy)
    with pytest.raises(FastTextError, match=WRITTEN_AGAIN_AND_AGAIN) as err:
        _write_pair(prefix, "A")
    one_line(err.value)
    assert len(copies) == 2 * storage.pairs.PAIR_COPY_ATTEMPTS
    with pytest.raises(FastTextError, match="now of another write of them"):
        storage.read_bytes(f"{prefix}/pair.train")
    monkeypatch.setattr(storage.pairs, "_copy", real)
    _write_pair(prefix, "again")  # the advice works
    assert storage.read_bytes(f"{prefix}/pair.test") == b"__label__1 again test\n"


def test_a_pair_replaced_whole_by_another_write_at_once_is_no_error(s3_bucket, monkeypatch):
    """The other run's copies all after ours: the pair is wholly of one write (theirs), nothing to report."""
    prefix = f"{s3_bucket}/data"
    real, done = storage.pairs._copy, []

    def copy(*args):
        real(*args)
        done.append(1)
        if len(done) == 2:  # both of A's copies done: B runs whole before A checks
            _write_pair(prefix, "B")
    monkeypatch.setattr(storage.pairs, "_copy", copy)
    _write_pair(prefix, "A")
    assert storage.read_bytes(f"{prefix}/pair.test") == b"__label__1 B test\n"


def _upload_each_in_place(proxy, monkeypatch, after_a_upload):
    """Act as a role that may not delete (the pair is uploaded to its keys directly, one after another), and call
    ``after_a_upload(n)`` after A's n-th upload (1-based), not after those it starts meanwhile."""
    proxy.fail("DELETE", r".", "403")
    real, uploads, inside = storage.pairs.upload_file, [], []

    def upload_file(*args, **kwargs):
        real(*args, **kwargs)
        if not inside:
            uploads.append(args[3])
            inside.append(1)
            try:
                after_a_upload(len(uploads))
            finally:
                inside.clear()
    monkeypatch.setattr(storage.pairs, "upload_file", upload_file)
    return uploads


def test_writes_of_a_pair_uploaded_in_place_that_keep_interleaving_say_the_pair_is_mixed(s3_bucket, proxy,
                                                                                       monkeypatch):
    """Uploaded in place (no s3:DeleteObject), two runs whose uploads interleaved (A's train, all of B, A's test) both
    succeeded, the pair mixed. The run now checks after its uploads and uploads its pair again, as the copies do;
    runs that interleave at every attempt give up after PAIR_COPY_ATTEMPTS, in one line, and readers refuse the pair."""
    prefix = f"{s3_bucket}/data"
    uploads = _upload_each_in_place(proxy, monkeypatch, lambda n: n % 2 and _write_pair(prefix, "B"))
    with pytest.raises(FastTextError, match=WRITTEN_AGAIN_AND_AGAIN) as err:
        _write_pair(prefix, "A")
    one_line(err.value)
    assert len(uploads) == 2 * storage.pairs.PAIR_COPY_ATTEMPTS
    with pytest.raises(FastTextError, match="now of another write of them"):
        storage.read_bytes(f"{prefix}/pair.train")


@pytest.mark.parametrize("b_runs", ["between A's uploads", "after A's uploads"])
def test_a_pair_uploaded_in_place_while_another_run_writes_it_ends_as_one_writes_pair(s3_bucket, proxy, monkeypatch,
                                                                                     b_runs):
    """B writing the pair whole between A's two uploads (in place: no s3:DeleteObject) left A's test beside B's train,
    and both passed; A now finds the mix and uploads its pair again. B's write after both of A's uploads (before A's
    check) is no error: the pair is wholly B's."""
    prefix = f"{s3_bucket}/data"
    at = 1 if b_runs == "between A's uploads" else 2
    uploads = _upload_each_in_place(proxy, monkeypatch, lambda n: n == at and _write_pair(prefix, "B"))
    _write_pair(prefix, "A")
    winner = "A" if at == 1 else "B"
    assert (storage.read_bytes(f"{prefix}/pair.train"), storage.read_bytes(f"{prefix}/pair.test")) == (
        f"__label__1 {winner} train\n".encode(), f"__label__1 {winner} test\n".encode())
    assert len(uploads) == (4 if at == 1 else 2) and _bucket_keys(prefix) == ["pair.test", "pair.train"]


def _create_pair(prefix, tag, if_taken=None):
    """A create-only write of the pair (sample or prepare without --overwrite): nothing there is replaced."""
    uris = [f"{prefix}/pair.train", f"{prefix}/pair.test"]
    with storage.atomic_writes(uris, overwrite=False, if_taken=if_taken) as (train, test):
        train.write(f"__label__1 {tag} train\n".encode())
        test.write(f"__label__1 {tag} test\n".encode())
    return uris


def _heads_between_writes(proxy, keys):
    """Of ``keys`` (object paths as the proxy logs them), those HEADed more than once with no write (PUT, POST,
    DELETE) of this run in between: each such HEAD but the first asked S3 what it had just answered."""
    again, seen = [], set()
    for method, path, _ in proxy.log:
        if method in ("PUT", "POST", "DELETE"):
            seen = set()
        elif method == "HEAD" and path in keys:
            again += [path] if path in seen else []
            seen.add(path)
    return again


@pytest.mark.parametrize("there", ["nothing", "the pair, of these bytes", "the train split, of these bytes",
                                   "the train split, of these bytes, for a role that may not delete"])
def test_a_create_only_pair_heads_each_file_once_between_its_writes(s3_bucket, proxy, there):
    """A create-only write that may keep files of its own bytes (prepare without --overwrite: atomic_writes'
    if_taken, which asks storage.would_replace and storage.holds as prepare's does) HEADed each target up to 3 times
    (4 with prepare's if_taken) in a row before writing anything: whether it is there, whether it holds these bytes,
    whether the pair is of one write, the ETag it holds before the write. Nothing of this run's changes them in
    between: each is asked once, until the run writes (the check just before the copies, after the uploads, and the
    check after the copies ask again; uploaded in place, the check before each upload after the first)."""
    prefix = f"{s3_bucket}/data"
    uris = [f"{prefix}/pair.train", f"{prefix}/pair.test"]
    if there != "nothing":
        _write_pair(prefix, "A")
    if there.startswith("the train split"):
        boto3.client("s3").delete_object(Bucket=storage.split_s3(prefix)[0], Key="data/pair.test")
    written = {}

    def if_taken(uri):  # (download._refuse_what_differs)
        if storage.would_replace(uri) and not storage.holds(uri, written[uri]):
            raise storage.already_exists(uri)
    proxy.clear()
    if there.endswith("may not delete"):  # (no staging objects: each file uploaded in place, checked before each)
        proxy.fail("DELETE", r".", "403")
    with storage.atomic_writes(uris, overwrite=False, if_taken=if_taken) as files:
        for uri, f, split in zip(uris, files, ("train", "test")):
            written[uri] = storage.Written(f, s3=True)
            written[uri].write(f"__label__1 A {split}\n".encode())
    keys = {"/" + uri[len("s3://"):] for uri in uris}
    assert [m for m, p, _ in proxy.log if m == "HEAD" and p in keys]  # (asked: the count below is of real requests)
    assert _heads_between_writes(proxy, keys) == []
    assert [storage.read_bytes(uri) for uri in uris] == [b"__label__1 A train\n", b"__label__1 A test\n"]


def _another_run_fails_between_its_copies(prefix, proxy, monkeypatch, tag):
    """Once A (a create-only write) has created pair.train, B (a replacing write of ``tag``) copies its pair.train
    over it and fails at its copy onto pair.test; then A creates pair.test."""
    real, created = storage.pairs._upload_new, []

    def upload_new(*args, **kwargs):
        if len(created) == 1:  # A has created pair.train: B runs, and fails between its copies
            proxy.fail("PUT", r"/pair\.test$", "500")  # (the copy onto pair.test; B's staged upload has another key)
            with pytest.raises(FastTextError, match="no longer belong together"):
                _write_pair(prefix, tag)
            proxy.clear()
        created.append(args[3])
        return real(*args, **kwargs)
    monkeypatch.setattr(storage.pairs, "_upload_new", upload_new)
    return created


# What a create-only write says when it leaves its files beside another write's.
LEFT_MIXED = (r"{train} was written over by another run after this one created it, so {train}, {test} are now a mixed "
              r"set, of two writes \(reading them together is refused\); this run replaced nothing: run the command "
              r"again with --overwrite to write them whole$")


def test_a_create_only_pair_left_beside_a_failed_runs_file_says_the_pair_is_mixed(s3_bucket, proxy, monkeypatch):
    """Without --overwrite each file of the pair is created only where none is (sample to S3). Another run that
    replaced the train split this one had just created and then failed before the test split left a mixed pair, its
    train split beside this one's test split, and this run exited 0 (only a reader found the mix). It now checks the
    pair it leaves, as a replacing write does, and fails in one line that says the pair is mixed and what to do."""
    prefix = f"{s3_bucket}/data"
    train, test = f"{prefix}/pair.train", f"{prefix}/pair.test"
    created = _another_run_fails_between_its_copies(prefix, proxy, monkeypatch, "B")
    with pytest.raises(FastTextError, match=LEFT_MIXED.format(train=re.escape(train), test=re.escape(test))) as err:
        _create_pair(prefix, "A")
    one_line(err.value)
    assert len(created) == 2
    assert _bucket_keys(prefix) == ["pair.test", "pair.train"]
    with pytest.raises(FastTextError, match="now of another write of them"):
        storage.read_bytes(train)
    _write_pair(prefix, "again")  # the advice (--overwrite) works
    assert storage.read_bytes(train) == b"__label__1 again train\n" and storage.read_bytes(test) == b"__label__1 again test\n"


@pytest.mark.parametrize("bytes_there", ["the same", "others"])
def test_a_create_only_pair_that_may_keep_files_of_its_bytes_ends_whole_or_says_it_is_mixed(s3_bucket, proxy,
                                                                                            monkeypatch, bytes_there):
    """The same for a write that keeps files holding its own bytes (prepare without --overwrite: atomic_writes'
    if_taken): where the other run's file holds this run's bytes (two prepare runs of one dataset), this run writes
    its pair whole again, as when it finds a mixed pair before writing, and passes; where it holds others, the file
    is kept and the line says the pair is mixed."""
    prefix = f"{s3_bucket}/data"
    train, test = f"{prefix}/pair.train", f"{prefix}/pair.test"
    ours = {train: b"__label__1 A train\n", test: b"__label__1 A test\n"}
    bucket = storage.split_s3(prefix)[0]

    def raw(uri):  # (as prepare's if_taken compares: by what the object holds, whatever set it is of)
        return boto3.client("s3").get_object(Bucket=bucket, Key=storage.split_s3(uri)[1])["Body"].read()

    def if_taken(uri):
        if raw(uri) != ours[uri]:
            raise storage.already_exists(uri, "it differs")
    _another_run_fails_between_its_copies(prefix, proxy, monkeypatch, "A" if bytes_there == "the same" else "B")
    if bytes_there == "the same":
        _create_pair(prefix, "A", if_taken)
        with storage.reading_together():  # one write's pair
            assert {uri: storage.read_bytes(uri) for uri in ours} == ours
        return
    with pytest.raises(FastTextError, match=LEFT_MIXED.format(train=re.escape(train), test=re.escape(test))) as err:
        _create_pair(prefix, "A", if_taken)
    one_line(err.value)
    assert {uri: raw(uri) for uri in ours} == {train: b"__label__1 B train\n", test: b"__label__1 A test\n"}  # B's kept


@pytest.mark.parametrize("stopped", ["during the uploads", "between the copies", "during the copies again"])
def test_a_pair_write_stopped_by_ctrl_c_says_when_the_pair_may_be_mixed(s3_bucket, monkeypatch, stopped):
    """A Ctrl-C once the pair's copies had begun (the first one done, or a write copying its pair again because
    another run's copies interleaved with its own) said only "interrupted (SIGINT); stopped and cleaned up", as if
    the old pair were whole, where a failure there says the files no longer belong together. The line says so now,
    and only then: stopped during the uploads to the staging keys, the old pair is untouched."""
    from conftest import cli_in_process
    from fasttext_lib.stops import Interrupted

    prefix = f"{s3_bucket}/data"
    train, test = f"{prefix}/train.csv", f"{prefix}/test.csv"
    assert cli_in_process("sample", "--output", prefix).returncode == 0
    real_upload, real_copy, copies = storage.pairs.upload_file, storage.pairs._copy, []

    def upload_file(*args, **kwargs):
        if stopped == "during the uploads" and args[3].endswith("test.csv"):
            raise Interrupted(signal.SIGINT)
        return real_upload(*args, **kwargs)

    def copy(*args):
        copies.append(args[4])
        if (stopped, len(copies)) in (("between the copies", 2), ("during the copies again", 3)):
            raise Interrupted(signal.SIGINT)
        real_copy(*args)
        if stopped == "during the copies again" and len(copies) == 1:  # another run's pair, whole, between A's copies
            monkeypatch.setattr(storage.pairs, "_copy", real_copy)
            with storage.atomic_writes([train, test]) as (b_train, b_test):
                b_train.write(b'"1","B"\n')
                b_test.write(b'"1","B"\n')
            monkeypatch.setattr(storage.pairs, "_copy", copy)
    monkeypatch.setattr(storage.pairs, "upload_file", upload_file)
    monkeypatch.setattr(storage.pairs, "_copy", copy)
    r = cli_in_process("sample", "--output", prefix, "--overwrite")
    said = "error: interrupted (SIGINT); stopped and cleaned up"
    if stopped != "during the uploads":
        said += (f", but {train}, {test} may now be a mixed set, of two writes (reading them together is refused): "
                 f"run the command again")
    assert (r.returncode, r.stderr.splitlines()) == (130, [said]), r.stderr
    assert _bucket_keys(prefix) == ["test.csv", "train.csv"]  # no staging object left
    assert len(copies) == {"during the uploads": 0, "between the copies": 2, "during the copies again": 3}[stopped]


# What a stop's line says of the files a create-only write had created and could not take back (delete).
NOT_REMOVED = ("error: interrupted (SIGINT); stopped; {files} this run created could not be removed ({why}): delete "
               "{them}, or run the command again with --overwrite")


@pytest.mark.parametrize("refused, put", [
    ("every DELETE", "before"), ("every DELETE", "landed"), ("train.csv's DELETE", "before"), ("no DELETE", "landed")])
def test_a_create_only_pair_stopped_partway_says_what_it_could_not_take_back(s3_bucket, proxy, monkeypatch, refused,
                                                                             put):
    """sample to S3 without --overwrite creates train.csv, then test.csv. A Ctrl-C before test.csv's PUT (or once it
    had landed, its answer not yet read) takes back what the run created; where S3 refused that (a role without
    s3:DeleteObject, or one key's DELETE), the files stayed, and the line still said "stopped and cleaned up" (after a
    warning line, where one DELETE failed); a PUT that landed as it was stopped was not taken back at all. The one
    line now names the files left, and says what to do; where all were taken back it is as before."""
    from conftest import cli_in_process
    from fasttext_lib.stops import Interrupted

    prefix = f"{s3_bucket}/data"
    train, test = f"{prefix}/train.csv", f"{prefix}/test.csv"
    if refused == "every DELETE":  # a role that may only put objects (no s3:ListBucket either: sample's check of
        proxy.fail("HEAD", rf"^/{prefix.split('/')[2]}/?$", "403")  # --output would put and delete a probe)
    if refused != "no DELETE":
        proxy.fail("DELETE", r"." if refused == "every DELETE" else r"/train\.csv$", "403")
    real = storage.pairs._upload_new

    def upload_new(*args, **kwargs):
        if args[3].endswith("test.csv"):
            if put == "landed":
                real(*args, **kwargs)
            raise Interrupted(signal.SIGINT)
        return real(*args, **kwargs)
    monkeypatch.setattr(storage.pairs, "_upload_new", upload_new)
    r = cli_in_process("sample", "--output", prefix)
    left = {("every DELETE", "before"): [train], ("every DELETE", "landed"): [train, test],
            ("train.csv's DELETE", "before"): [train], ("no DELETE", "landed"): []}[refused, put]
    said = (NOT_REMOVED.format(files=", ".join(left), why="access denied", them="them" if len(left) > 1 else "it")
            if left else "error: interrupted (SIGINT); stopped and cleaned up")
    assert (r.returncode, r.stderr.splitlines()) == (130, [said]), r.stderr
    proxy.clear()
    assert _bucket_keys(prefix) == sorted(uri.rsplit("/", 1)[1] for uri in left)
    if left:
        assert cli_in_process("sample", "--output", prefix, "--overwrite").returncode == 0  # the advice works


@pytest.mark.parametrize("caller", ["command line", "Python API"])
def test_a_create_only_pair_stopped_partway_says_how_to_replace_in_its_callers_terms(s3_bucket, proxy, monkeypatch,
                                                                                       caller):
    """A create-only pair write to S3 (prepare's, or sample's without --overwrite) stopped before its second create,
    its first not taken back (a DELETE refused): the line told every user to "run the command again with --overwrite
    (overwrite=True)", an argument the command line's user cannot pass and a command prepare()'s (notebook 01's)
    has none of. Each is told their own way (atomic_writes' overwrite_as)."""
    from fasttext_lib.stops import Interrupted, stop_message

    prefix = f"{s3_bucket}/data"
    train, test = f"{prefix}/train.txt", f"{prefix}/test.txt"
    proxy.fail("DELETE", r"/train\.txt$", "403")
    real = storage.pairs._upload_new

    def upload_new(*args, **kwargs):
        if args[3].endswith("test.txt"):
            raise Interrupted(signal.SIGINT)
        return real(*args, **kwargs)
    monkeypatch.setattr(storage.pairs, "_upload_new", upload_new)
    form = storage.OVERWRITE_FLAG if caller == "command line" else "overwrite=True"
    with pytest.raises(KeyboardInterrupt) as stop:
        with storage.atomic_writes([train, test], overwrite=False, overwrite_as=form) as (f_train, f_test):
            f_train.write(b"__label__1 train\n")
            f_test.write(b"__label__1 test\n")
    rerun = ("run the command again with --overwrite" if caller == "command line"
             else "call it again with overwrite=True")  # (the Python API's one phrasing: run_again)
    assert stop_message(stop.value) == (f"interrupted (SIGINT); stopped; {train} this run created could not be "
                                        f"removed (access denied): delete it, or {rerun}")


@pytest.mark.parametrize("failure", ["a copy fails", "other runs keep interleaving"])
def test_a_python_api_pair_left_mixed_on_s3_says_to_call_it_again(s3_bucket, proxy, monkeypatch, failure):
    """write_fasttext_splits (notebook 01, the Python API) to S3, its test split's copy failing after its train split
    was put in place, or other runs' copies interleaving with its own again and again: the line said "run the command
    again", to a caller that has no command. It says to call it again."""
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_fasttext_splits

    prefix = f"{s3_bucket}/data"
    if failure == "a copy fails":
        proxy.fail("PUT", r"/data/pair\.test$", "500")  # (the copy onto it; its staged upload has another key)
        said = r"no longer belong together \(reading them together is refused\): call it again$"
    else:
        monkeypatch.setattr(storage.pairs, "_of_one_write", lambda client, targets: False)
        said = r"their files are now of two writes \(reading them together is refused\): call it again, one at a time$"
    data = LabeledTexts(["1"], ["new"])
    with pytest.raises(FastTextError, match=said):
        write_fasttext_splits({"train": data, "test": data}, prefix, "pair")


def test_a_create_only_pair_stopped_while_s3_holds_a_create_does_not_say_it_cleaned_up(s3_bucket, proxy):
    """sample to S3 without --overwrite, Ctrl-C'd while S3 held test.csv's create (received whole, answered late: a
    slow S3). The stop took back train.csv and found no test.csv yet, and said "stopped and cleaned up"; then S3
    applied the create it had, and test.csv stood there alone, which the next run without --overwrite refuses as
    "already exists". Where the stopped create is not seen to have landed, the line now says it may yet."""
    from fasttext_lib.stops import stop_message

    prefix = f"{s3_bucket}/data"
    train, test = f"{prefix}/train.csv", f"{prefix}/test.csv"
    proxy.fail("PUT", r"/test\.csv$", "stall")

    def write():
        with storage.atomic_writes([train, test], overwrite=False) as (f_train, f_test):
            f_train.write(b'"1","new"\n')
            f_test.write(b'"1","new"\n')
    stopped = interrupted_at_the_stall(proxy, write)
    proxy.release()  # S3 applies the create it held
    for _ in range(200):
        if _bucket_keys(prefix):
            break
        time.sleep(0.05)
    assert _bucket_keys(prefix) == ["test.csv"]
    line = stop_message(stopped)
    assert "cleaned up" not in line or test in line, line
    assert line == (f"interrupted (SIGINT); stopped and cleaned up, but {test} may still be created by its upload, "
                    f"under way when this run stopped: delete it if it is there, or run the command again with "
                    f"--overwrite"), line


def _stopped_in_the_conflict_pause(monkeypatch):
    """A stop (Ctrl-C) raised by the pause before a create-only PUT S3 answered 409 is sent again: s3.CONFLICT_PAUSE,
    set to a length no other sleep has, the one definition both such retries (s3's, sets') read."""
    from fasttext_lib.storage import s3

    pause, sleep = 0.0123, time.sleep
    monkeypatch.setattr(s3, "CONFLICT_PAUSE", pause)

    def stopping(seconds):
        if seconds == pause:
            raise KeyboardInterrupt
        sleep(seconds)
    monkeypatch.setattr(time, "sleep", stopping)


def test_a_bundle_save_stopped_between_a_409_and_its_next_put_says_s3_refused_it_and_takes_its_files_back(
        tmp_path, s3_bucket, proxy, monkeypatch):
    """A save without overwrite whose config.json PUT S3 answered 409 (another save creating it at that moment), stopped
    in the pause before the PUT is sent again. The line said "a bundle may still be created ... by this save (S3 had
    not answered the PUT of its config.json)", and its files were kept for that PUT: S3 had answered it, refusing
    it, and none was in flight. The files are taken back, and the line says what S3 answered."""
    from fasttext_lib.bundle import publish_bundle
    from fasttext_lib.stops import stop_message

    _stopped_in_the_conflict_pause(monkeypatch)
    dest = f"{s3_bucket}/models/raced"
    proxy.fail("PUT", r"/models/raced/config\.json$", "409", nth=None)
    with pytest.raises(KeyboardInterrupt) as stopped:
        publish_bundle(dest, {"tag": "new"}, make_files(tmp_path, "new"), overwrite=False)
    proxy.clear()
    assert _bucket_keys(dest) == []
    assert stop_message(stopped.value) == (
        f"interrupted (SIGINT); stopped and cleaned up, but another write was creating {dest}/config.json at the same "
        f"moment (S3 refused this run's PUT of it with 409, and it was waiting to send it again): it may be there now")


def test_a_create_only_write_stopped_between_a_409_and_its_next_put_says_s3_refused_it(s3_bucket, proxy, monkeypatch):
    """atomic_write without overwrite (a trial table, export-vectors) stopped in the pause after S3 answered its PUT
    409: its line said the object "may still be created by its upload, under way when this run stopped", which S3
    had refused."""
    from fasttext_lib.stops import stop_message

    _stopped_in_the_conflict_pause(monkeypatch)
    table = f"{s3_bucket}/runs/trials.csv"
    proxy.fail("PUT", r"/runs/trials\.csv$", "409", nth=None)
    with pytest.raises(KeyboardInterrupt) as stopped:
        with storage.atomic_write(table, "wb", overwrite=False) as f:
            f.write(b"ours\n")
    proxy.clear()
    assert not storage.exists(table)
    assert stop_message(stopped.value) == (
        f"interrupted (SIGINT); stopped and cleaned up, but another write was creating {table} at the same moment (S3 "
        f"refused this run's PUT of it with 409, and it was waiting to send it again): it may be there now")


def test_a_pair_write_stopped_while_s3_holds_a_staging_upload_names_the_staging_object_it_may_leave(s3_bucket, proxy):
    """A replacing pair write to S3, Ctrl-C'd while S3 held the upload of a staging object (received whole, answered
    late: a slow S3). The stop deleted the staging keys (one not there yet), said "stopped and cleaned up", and exited
    without waiting for the upload's answer (a stalled S3 held the process a minute); then S3 applied the upload it
    had, and the staging object stayed in the user's folder for good, unnamed (no later run lists it). No run can
    take back a request S3 applies after it has gone: the line now names the staging object the upload may still
    create. A process that lives on (a notebook's kernel, as here) deletes it once S3 answers that upload. The old
    pair is whole either way."""
    from fasttext_lib.stops import stop_message

    prefix = f"{s3_bucket}/data"
    train, test = _write_pair(prefix, "old")
    proxy.fail("PUT", r"\.fasttext-staging-[0-9a-f]{16}-pair\.test$", "stall")
    stopped = interrupted_at_the_stall(proxy, lambda: _write_pair(prefix, "new"))
    staged = [p for m, p, _ in proxy.log if m == "PUT" and re.search(r"staging-[0-9a-f]{16}-pair\.test$", p)]
    proxy.release()  # S3 applies the upload it held
    wait_for_abandoned_transfers()
    assert stop_message(stopped) == (  # (the last one put: the old pair's went first)
        f"interrupted (SIGINT); stopped and cleaned up, but the staging object s3:/{staged[-1]} may still be "
        f"created by its upload, under way when this run stopped: delete it if it is there")
    assert _bucket_keys(prefix) == ["pair.test", "pair.train"]  # deleted by its transfer, once S3 created it
    assert [storage.read_bytes(u) for u in (train, test)] == [b"__label__1 old train\n", b"__label__1 old test\n"]


def test_a_stop_that_left_two_things_names_both():
    """Two writes' cleanups told the same stop what it left (a staging object S3 may still create; an old file kept
    aside that could not be put back): the second note replaced the first, and the line named only the file kept
    aside, not the object in the user's bucket. Both are true at once, and the line now names both."""
    from fasttext_lib.stops import note_what_a_stop_left, stop_message

    staging = ("the staging object s3://bucket/data/.fasttext-staging-0123456789abcdef-pair.test may still be created "
               "by its upload, under way when this run stopped: delete it if it is there")
    kept = "out/pair.train could not be put back as it was (read-only): the file it replaced is kept at out/x; move it"
    stopped = KeyboardInterrupt()
    note_what_a_stop_left(stopped, staging)
    note_what_a_stop_left(stopped, kept)
    note_what_a_stop_left(stopped, kept)  # (told twice: said once)
    assert stop_message(stopped) == f"interrupted (SIGINT); stopped and cleaned up, but {staging}; {kept}"


def test_a_local_create_only_pair_stopped_partway_says_what_it_could_not_take_back(tmp_path, monkeypatch):
    """The same locally: sample without --overwrite stopped as it put test.csv in place removes the train.csv it had
    put there. Where that removal failed (the folder made read-only meanwhile: here, emulated), the error was
    swallowed and the line said "stopped and cleaned up" beside the file left; it now names it."""
    from conftest import cli_in_process
    from fasttext_lib.stops import Interrupted

    out = tmp_path / "out"
    train, test = str(out / "train.csv"), str(out / "test.csv")
    real_link, real_remove = storage.atomic._link_new, os.remove

    def link_new(fd, temp, path):
        if path == test:
            raise Interrupted(signal.SIGINT)
        return real_link(fd, temp, path)

    def remove(path, *args, **kwargs):
        if os.fspath(path) == train:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_remove(path, *args, **kwargs)
    monkeypatch.setattr(storage.atomic, "_link_new", link_new)
    monkeypatch.setattr(os, "remove", remove)
    r = cli_in_process("sample", "--output", str(out))
    monkeypatch.setattr(os, "remove", real_remove)
    said = NOT_REMOVED.format(files=train, why="Permission denied", them="it")
    assert (r.returncode, r.stderr.splitlines()) == (130, [said]), r.stderr
    assert sorted(os.listdir(out)) == ["train.csv"]


def _second_rename_failing(monkeypatch, failure):
    """``os.replace`` failing (``"busy"``: EBUSY) or stopped (``"interrupted"``) as it puts a pair's test split in
    place; the real ``os.replace`` returned."""
    real_replace = os.replace

    def second_fails(src, dst, *args, **kwargs):
        if str(dst).endswith("pair.test"):
            if failure == "busy":
                raise OSError(errno.EBUSY, "Device or resource busy", dst)
            raise KeyboardInterrupt  # (what a SIGTERM raises in the main thread: stops.Interrupted)
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", second_fails)
    return real_replace


@pytest.mark.parametrize("failure", ["busy", "interrupted"])
def test_a_local_pair_whose_second_rename_fails_keeps_the_old_pair(tmp_path, monkeypatch, failure):
    """The pair's files are put in place by renames, one after the other: a second rename that failed (a test file
    bind-mounted into a container: EBUSY) or a SIGTERM between them left the new train split beside the old test
    split, the old train split gone. The first is put back now, and nothing else is left in the folder."""
    uris = _write_pair(str(tmp_path), "old")
    real_replace = _second_rename_failing(monkeypatch, failure)
    with pytest.raises(FastTextError if failure == "busy" else KeyboardInterrupt):
        _write_pair(str(tmp_path), "new")
    monkeypatch.setattr(os, "replace", real_replace)
    assert [open(u).read() for u in uris] == ["__label__1 old train\n", "__label__1 old test\n"]
    assert sorted(os.listdir(tmp_path)) == ["pair.test", "pair.train"]


def _no_hard_links(monkeypatch):
    """A file system without hard links (vfat, some FUSE and SMB mounts): link() refused, and no O_TMPFILE either."""
    def no_links(*args, **kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")
    monkeypatch.setattr(os, "link", no_links)
    monkeypatch.delattr(os, "O_TMPFILE", raising=False)


@pytest.mark.parametrize("failure", ["busy", "interrupted"])
def test_a_pair_replaced_on_a_file_system_without_hard_links_keeps_the_old_pair_when_a_rename_fails(tmp_path,
                                                                                                  monkeypatch, failure):
    """The old files are kept (hard links) while the new pair is put in place, to be put back if a later rename fails.
    Where the file system has no hard links nothing was kept, and the failure "took back" the new train split by
    deleting it: the user's old train split, replaced by it, was lost. The old file is kept as a copy there now."""
    uris = _write_pair(str(tmp_path), "old")
    _no_hard_links(monkeypatch)
    _second_rename_failing(monkeypatch, failure)
    with pytest.raises(FastTextError if failure == "busy" else KeyboardInterrupt) as err:
        _write_pair(str(tmp_path), "new")
    monkeypatch.undo()
    if failure == "busy":
        assert one_line(err.value) == f"cannot write {uris[1]}: Device or resource busy"
    assert [open(u).read() for u in uris] == ["__label__1 old train\n", "__label__1 old test\n"]
    assert sorted(os.listdir(tmp_path)) == ["pair.test", "pair.train"]


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EDQUOT, errno.EIO])
def test_an_old_file_that_cannot_be_copied_aside_fails_the_write_before_anything_is_replaced(tmp_path, monkeypatch,
                                                                                             error):
    """Where the file system has no hard links the old files are copied aside while the new pair is put in place; a
    copy that cannot be made (the disk full) fails the write in one line before anything is replaced: going on
    without it, a later failure would lose the file. The line said the copy failed, not why one was needed (to put
    the old file back should the write fail) nor what to do: on a full disk, free the room the copy takes, or move or
    delete the old file first (nothing to keep then), or write elsewhere."""
    import shutil

    uris = _write_pair(str(tmp_path), "old")
    _no_hard_links(monkeypatch)

    def failing(*args, **kwargs):
        raise OSError(error, os.strerror(error))
    monkeypatch.setattr(shutil, "copyfileobj", failing)
    with pytest.raises(FastTextError) as err:
        _write_pair(str(tmp_path), "new")
    monkeypatch.undo()
    size = os.path.getsize(uris[0])
    room = f"free {size} bytes there (the copy's size), or " if error != errno.EIO else ""
    assert one_line(err.value) == (
        f"cannot write {uris[0]}: the file there is kept until the new one is in place, to be put back should the "
        f"write fail, and as it cannot be hard-linked here (a file system without hard links, or a link refused) it "
        f"is copied aside, which failed: {os.strerror(error)}; {room}move or delete {uris[0]} first (then nothing "
        f"needs keeping), or write the output elsewhere")
    assert [open(u).read() for u in uris] == ["__label__1 old train\n", "__label__1 old test\n"]
    assert sorted(os.listdir(tmp_path)) == ["pair.test", "pair.train"]


def _put_back_failing(monkeypatch, train, test, failure):
    """``os.replace`` failing (EBUSY) as it puts a pair's ``test`` split in place, and raising ``failure(dst)`` as it
    then puts the old ``train`` split back (the first rename to ``train`` puts the new file in place; the second the
    old one back)."""
    real_replace, to_train = os.replace, []

    def second_fails_and_so_does_the_put_back(src, dst, *args, **kwargs):
        if str(dst) == test:
            raise OSError(errno.EBUSY, "Device or resource busy", dst)
        if str(dst) == train:
            to_train.append(src)
            if len(to_train) == 2:
                raise failure(dst)
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", second_fails_and_so_does_the_put_back)


def test_an_old_file_that_cannot_be_put_back_is_kept_and_its_place_said(tmp_path, monkeypatch):
    """A failed rename puts back the files the earlier ones replaced; where that failed too, the error was swallowed and
    the kept old file deleted: the user's file was lost without a word. It is kept now, under a name no write sweeps
    away, and the one line says where."""
    train, test = _write_pair(str(tmp_path), "old")
    _put_back_failing(monkeypatch, train, test, lambda dst: OSError(errno.EIO, "Input/output error", dst))
    with pytest.raises(FastTextError) as err:
        _write_pair(str(tmp_path), "new")
    monkeypatch.undo()
    line = one_line(err.value)
    said = re.fullmatch(rf"cannot write {re.escape(test)}: Device or resource busy; {re.escape(train)} could not be put "
                        rf"back as it was \(Input/output error\): the file it replaced is kept at (\S+); move it back "
                        rf"by hand", line)
    assert said, line
    kept = said.group(1)
    assert open(kept).read() == "__label__1 old train\n" and os.path.dirname(kept) == str(tmp_path)
    _write_pair(str(tmp_path), "next")  # another write of the pair sweeps its temporaries: not this file
    assert open(kept).read() == "__label__1 old train\n"


def test_an_old_file_that_cannot_be_put_back_after_stdout_closed_is_said_on_stderr(tmp_path):
    """``sample --output DIR --overwrite | head -0``: the summary line found stdout's reader gone, so the pair's old
    files were put back, and the command ended as ``cat`` does there, exit 141 without a line. Where the old train
    split could not be put back (here an I/O error) it was set aside as ``train.csv.old-<hex>``, the new train split
    stayed beside the old test split, and nothing said so: the line that names where the file is kept was dropped
    with the closed pipe's. stderr is still there: the line is written to it now (the status stays 141)."""
    out = tmp_path / "out"
    out.mkdir()
    for name in ("train.csv", "test.csv"):
        (out / name).write_text(f"the user's own {name}\n")
    train = str(out / "train.csv")
    script = textwrap.dedent(f"""
        import errno, os, sys
        real_replace, seen = os.replace, []

        def replace(src, dst, *args, **kwargs):  # the second rename to train.csv (the put-back) fails
            if str(dst) == {train!r}:
                seen.append(dst)
                if len(seen) == 2:
                    raise OSError(errno.EIO, "Input/output error", dst)
            return real_replace(src, dst, *args, **kwargs)

        os.replace = replace
        from fasttext_lib.cli import run
        sys.argv = ["fasttext-lib", "sample", "--output", {str(out)!r}, "--overwrite"]
        sys.exit(run())
        """)
    reader, sink = os.pipe()
    os.close(reader)  # the reader is gone, as `head` is once it has its lines
    try:
        r = subprocess.run([sys.executable, "-c", script], stdout=sink, stderr=subprocess.PIPE, timeout=300,
                           env=dict(os.environ, PYTHONPATH=ROOT), text=True)
    finally:
        os.close(sink)
    said = re.fullmatch(rf"error: standard output's reader is gone \(a closed pipe\); {re.escape(train)} could not be "
                        rf"put back as it was \(Input/output error\): the file it replaced is kept at (\S+); move it "
                        rf"back by hand\n", r.stderr)
    assert r.returncode == 141 and said, (r.returncode, r.stderr)
    assert open(said.group(1)).read() == "the user's own train.csv\n"
    assert (out / "test.csv").read_text() == "the user's own test.csv\n"


def test_a_second_ctrl_c_while_the_old_file_is_put_back_keeps_it(tmp_path, monkeypatch):
    """A failed rename (or a first Ctrl-C) puts back the files the earlier renames replaced. A second Ctrl-C in that
    put-back (a user pressing it again: the CLI lets a second one through) ended it, and the kept old file, not yet
    put back, was deleted with the kept files: the new train split stayed beside the old test split and the old
    train split was lost. What a second stop leaves not put back is kept now, under a name no write sweeps away, and
    the stop's line says where. (A signal no longer cuts the put-back short: stops.later_stops_held holds it, see
    test_ctrl_c_pressed_again_and_again_while_the_old_file_is_put_back_loses_nothing; this is a KeyboardInterrupt
    raised there otherwise.)"""
    from fasttext_lib.stops import stop_message

    train, test = _write_pair(str(tmp_path), "old")
    _put_back_failing(monkeypatch, train, test, lambda dst: KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt) as stop:
        _write_pair(str(tmp_path), "new")
    monkeypatch.undo()
    line = stop_message(stop.value)
    said = re.fullmatch(rf"interrupted \(SIGINT\); stopped and cleaned up, but {re.escape(train)} could not be put "
                        rf"back as it was \(stopped before it was\): the file it replaced is kept at (\S+); move it "
                        rf"back by hand", line)
    assert said, line
    assert open(said.group(1)).read() == "__label__1 old train\n"


@pytest.mark.parametrize("put_back", ["put back", "refused"])
@pytest.mark.parametrize("first", ["busy", "Ctrl-C"])
@pytest.mark.parametrize("where", ["CLI", "notebook"])
def test_ctrl_c_pressed_again_and_again_while_the_old_file_is_put_back_loses_nothing(tmp_path, monkeypatch, where,
                                                                                      first, put_back):
    """A failed rename (EBUSY) or a Ctrl-C puts back the old files the earlier renames replaced. Ctrl-C pressed again,
    and again (the CLI lets every one after the first through, as Python's own KeyboardInterrupt), landed in that
    put-back and then in the step that sets the old file aside (``<name>.old-<hex>``) where it could not be put back:
    the third stop ended that step too, and the kept old file was deleted with the kept files; the new train split
    stayed beside the old test split, and the old train split was lost. Now no stop after the first interrupts the
    put-back: the old file is put back, or kept where the line says, however many arrive."""
    from fasttext_lib.stops import stop_message, stop_on_signals

    train, test = _write_pair(str(tmp_path), "old")
    real_replace, real_rename, cleaning_up = os.replace, os.rename, []

    def pressed_at_every_step(real, src, dst, *args, **kwargs):
        if cleaning_up:
            os.kill(os.getpid(), signal.SIGINT)  # (its handler runs at the next bytecode: here, or in the step)
            if put_back == "refused" and str(dst) == train:
                raise OSError(errno.EIO, "Input/output error", dst)
        elif str(dst) == test:  # the second rename: the train split is the new one now
            cleaning_up.append(dst)
            if first == "busy":
                raise OSError(errno.EBUSY, "Device or resource busy", dst)
            os.kill(os.getpid(), signal.SIGINT)
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", functools.partial(pressed_at_every_step, real_replace))
    monkeypatch.setattr(os, "rename", functools.partial(pressed_at_every_step, real_rename))
    with pytest.raises(KeyboardInterrupt) as stop:
        with stop_on_signals() if where == "CLI" else contextlib.nullcontext():
            _write_pair(str(tmp_path), "new")
    cleaning_up.clear()
    monkeypatch.undo()
    line = stop_message(stop.value)
    assert open(test).read() == "__label__1 old test\n"
    if put_back == "put back":
        assert line == "interrupted (SIGINT); stopped and cleaned up"
        assert open(train).read() == "__label__1 old train\n"
        assert sorted(os.listdir(tmp_path)) == ["pair.test", "pair.train"]
        return
    said = re.fullmatch(rf"interrupted \(SIGINT\); stopped and cleaned up, but {re.escape(train)} could not be put "
                        rf"back as it was \(Input/output error\): the file it replaced is kept at (\S+\.old-[0-9a-f]+); "
                        rf"move it back by hand", line)
    assert said, line
    assert open(said.group(1)).read() == "__label__1 old train\n"
    assert sorted(os.listdir(tmp_path)) == sorted(["pair.test", "pair.train", os.path.basename(said.group(1))])


@pytest.mark.parametrize("where", ["CLI", "notebook"])
def test_a_first_ctrl_c_as_a_failed_renames_put_back_begins_loses_nothing(tmp_path, monkeypatch, where):
    """A local pair whose second rename fails (EBUSY) puts back the old train split the first rename replaced; its
    stops are held only from its first call (hold_every_stop). A first Ctrl-C whose handler ran on the cleanup's first
    line, before that call, raised out of the ``except`` clause: no put-back ran, and the ``finally`` deleted the kept
    old train split: the new train split stayed beside the old test split, the old one lost, and the line said
    "stopped and cleaned up". Python 3.8 (SageMaker's images) runs a signal's handler between almost any two
    bytecodes; here it is run on that line by a trace function (as 3.8's eval loop would), the signal a real one."""
    import sys

    from fasttext_lib.stops import stop_message, stop_on_signals

    train, test = _write_pair(str(tmp_path), "old")
    real_replace, failed = os.replace, []

    def busy_at_the_second(src, dst, *args, **kwargs):
        if str(dst) == test and not failed:
            failed.append(dst)
            raise OSError(errno.EBUSY, "Device or resource busy", dst)
        return real_replace(src, dst, *args, **kwargs)

    def at_the_cleanups_first_line(frame, event, arg):
        if frame.f_code.co_name != "_kept_as_they_were":
            return None
        def local(frame, event, arg):
            if event == "exception" and failed:
                pressed.append(True)
            elif event == "line" and pressed == [True]:
                pressed.append("sent")
                os.kill(os.getpid(), signal.SIGINT)  # (its handler runs here: the line's first bytecode)
            return local
        return local

    pressed = []
    monkeypatch.setattr(os, "replace", busy_at_the_second)
    sys.settrace(at_the_cleanups_first_line)
    try:
        with pytest.raises(KeyboardInterrupt) as stop:
            with stop_on_signals() if where == "CLI" else contextlib.nullcontext():
                _write_pair(str(tmp_path), "new")
    finally:
        sys.settrace(None)
        monkeypatch.undo()
    assert pressed == [True, "sent"]
    assert open(test).read() == "__label__1 old test\n"
    assert open(train).read() == "__label__1 old train\n"
    assert sorted(os.listdir(tmp_path)) == ["pair.test", "pair.train"]
    assert stop_message(stop.value) == "interrupted (SIGINT); stopped and cleaned up"


def _a_new_train_split_that_cannot_be_taken_back(tmp_path, monkeypatch):
    """``(train, test)`` paths of a pair in ``tmp_path`` whose test split is there (old) and train split is not: the
    pair's second rename (test's) fails with EBUSY, and removing the new train split it put in place is denied."""
    train, test = f"{tmp_path}/pair.train", f"{tmp_path}/pair.test"
    with storage.atomic_write(test) as f:
        f.write(b"__label__1 old test\n")
    real_replace, real_remove = os.replace, os.remove

    def second_fails(src, dst, *args, **kwargs):
        if str(dst) == test:
            raise OSError(errno.EBUSY, "Device or resource busy", dst)
        return real_replace(src, dst, *args, **kwargs)

    def remove(path, *args, **kwargs):
        if os.fspath(path) == train:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_remove(path, *args, **kwargs)
    monkeypatch.setattr(os, "replace", second_fails)
    monkeypatch.setattr(os, "remove", remove)
    return train, test


def test_a_new_file_that_cannot_be_taken_back_after_a_failed_rename_is_said(tmp_path, monkeypatch):
    """A pair whose train split is new (none was there) and whose second rename fails removes the new train split;
    where that removal failed, the error was silent (only a stop's line named it), and the line read as if nothing
    had changed. It names the file left now."""
    train, test = _a_new_train_split_that_cannot_be_taken_back(tmp_path, monkeypatch)
    with pytest.raises(FastTextError) as err:
        _write_pair(str(tmp_path), "new")
    monkeypatch.undo()
    assert one_line(err.value) == (f"cannot write {test}: Device or resource busy; {train} this run created could not "
                                   f"be removed (Permission denied): delete it, or run the command again")
    assert sorted(os.listdir(tmp_path)) == ["pair.test", "pair.train"]
    assert open(test).read() == "__label__1 old test\n"


def test_write_csv_refuses_an_existing_file_in_the_python_apis_terms(tmp_path):
    """writers.write_csv(overwrite=False), a file there: it said "pass --overwrite to replace it", the command line's
    flag, to its caller, who passes overwrite=True."""
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_csv

    out = tmp_path / "mine.csv"
    out.write_text("the user's file\n")
    with pytest.raises(FastTextError) as err:
        write_csv(LabeledTexts(["1"], ["new"]), str(out), overwrite=False)
    assert str(err.value) == f"{out} already exists; pass overwrite=True to replace it"
    assert out.read_text() == "the user's file\n"


def test_a_new_file_an_api_write_cannot_take_back_is_said_in_the_callers_terms(tmp_path, monkeypatch):
    """As above, through the Python API (notebook 01's write_fasttext_splits): the line told its user to "run the
    command again with --overwrite (overwrite=True)", a command and a flag a notebook has none of (and a replacing
    write needs no overwrite to replace the file it left). It says to call it again."""
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_fasttext_splits

    train, test = _a_new_train_split_that_cannot_be_taken_back(tmp_path, monkeypatch)
    data = LabeledTexts(["1"], ["new"])
    with pytest.raises(FastTextError) as err:
        write_fasttext_splits({"train": data, "test": data}, str(tmp_path), "pair")
    monkeypatch.undo()
    assert one_line(err.value) == (f"cannot write {test}: Device or resource busy; {train} this run created could not "
                                   f"be removed (Permission denied): delete it, or call it again")
    assert open(test).read() == "__label__1 old test\n"


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("overwrite", [True, False], ids=["replacing", "creating"])
def test_a_stop_just_as_a_file_of_a_pair_is_put_in_place_takes_it_back(tmp_path, monkeypatch, overwrite, sig):
    """A Ctrl-C or a SIGTERM (a scheduler's stop: the CLI raises it as a stop, stops.stop_on_signals) whose handler
    ran just after the rename (or link) that put the train split in place, before it was recorded as put there, was
    not taken back: the new train split stayed beside the old test split (or alone), and, for a SIGTERM, which
    stops.stops_held does not hold, the old train split kept aside was deleted with the kept files: lost. What a stop
    takes back is now what is found at each target to be this write's file, not what was recorded in time."""
    from fasttext_lib.stops import stop_on_signals

    uris = [f"{tmp_path}/pair.train", f"{tmp_path}/pair.test"]
    if overwrite:
        _write_pair(str(tmp_path), "old")
    name = "replace" if overwrite else "link"
    real, stopped = getattr(os, name), []

    def then_stopped(src, dst, *args, **kwargs):
        real(src, dst, *args, **kwargs)
        if os.path.basename(os.fspath(dst)) == "pair.train" and not stopped:
            stopped.append(dst)
            os.kill(os.getpid(), getattr(signal, sig))  # its handler runs at the next bytecode: before anything else

    monkeypatch.setattr(os, name, then_stopped)
    with pytest.raises(KeyboardInterrupt):  # (SIGINT: Python's own handler; SIGTERM: the CLI's)
        with stop_on_signals() if sig == "SIGTERM" else contextlib.nullcontext(), \
                storage.atomic_writes(uris, overwrite=overwrite) as (train, test):
            train.write(b"__label__1 new train\n")
            test.write(b"__label__1 new test\n")
    monkeypatch.undo()
    assert stopped
    if overwrite:
        assert [open(u).read() for u in uris] == ["__label__1 old train\n", "__label__1 old test\n"]
        assert sorted(os.listdir(tmp_path)) == ["pair.test", "pair.train"]
    else:
        assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_pair_write_stopped_once_its_files_are_written_says_so(s3_bucket, monkeypatch, overwrite):
    """A Ctrl-C during the check that follows a pair's writes on S3 (that no other run wrote over them meanwhile) said
    "stopped and cleaned up", although the pair was written whole and nothing was cleaned up: a user would think the
    old files (or none) were there. The line says what is true."""
    from conftest import cli_in_process
    from fasttext_lib.stops import Interrupted

    prefix = f"{s3_bucket}/data"
    train, test = f"{prefix}/train.csv", f"{prefix}/test.csv"

    def stopped(*args, **kwargs):
        raise Interrupted(signal.SIGINT)
    monkeypatch.setattr(storage.pairs, "_write_ids", stopped)
    r = cli_in_process("sample", "--output", prefix, *(["--overwrite"] if overwrite else []))
    said = f"error: interrupted (SIGINT); stopped after {train}, {test} were written whole"
    assert (r.returncode, r.stderr.splitlines()) == (130, [said]), r.stderr
    assert _bucket_keys(prefix) == ["test.csv", "train.csv"]
    monkeypatch.undo()
    with storage.reading_together():
        assert storage.read_bytes(train) and storage.read_bytes(test)


@pytest.mark.parametrize("in_place", [False, True], ids=["copies", "uploads-in-place"])
def test_a_pair_write_stopped_while_checking_again_after_a_mix_says_the_set_may_be_mixed(s3_bucket, proxy,
                                                                                          monkeypatch, in_place):
    """A Ctrl-C during the check after a pair's writes on S3 said "stopped after <files> were written whole" even on a
    retry: an earlier check had found another run's copies (or uploads) interleaved with this run's, the set written
    again, and the check that would have found it whole cut short, the set perhaps still mixed (readers refuse it).
    Only a set no check has found mixed is said written whole; after a mix the line says it may be mixed."""
    from conftest import cli_in_process
    from fasttext_lib.stops import Interrupted

    prefix = f"{s3_bucket}/data"
    train, test = f"{prefix}/train.csv", f"{prefix}/test.csv"
    if in_place:
        proxy.fail("DELETE", r".", "403")  # no s3:DeleteObject: no staging objects, each member uploaded in place
    checks = []

    def mixed_then_stopped(client, targets):
        checks.append(targets)
        if len(checks) == 1:
            return ["another-run", "this-run"]  # (another run's copy landed between this run's)
        raise Interrupted(signal.SIGINT)
    monkeypatch.setattr(storage.pairs, "_write_ids", mixed_then_stopped)
    r = cli_in_process("sample", "--output", prefix, "--overwrite")
    said = (f"error: interrupted (SIGINT); stopped and cleaned up, but {train}, {test} may now be a mixed set, of two "
            f"writes (reading them together is refused): run the command again")
    assert (len(checks), r.returncode, r.stderr.splitlines()) == (2, 130, [said]), r.stderr


@pytest.mark.parametrize("stopped_at", [2, 3], ids=["looking-again", "checking-the-set-written-again"])
def test_a_create_only_pair_write_stopped_after_finding_a_mix_says_the_set_may_be_mixed(s3_bucket, monkeypatch,
                                                                                         stopped_at):
    """A create-only write (prepare: ``if_taken``) whose check found another run's file among its members looks again
    and writes the set whole over it. A Ctrl-C while it looked again said "stopped and cleaned up", and one during the
    check after it wrote again "written whole": the set found mixed may still be. The line says so."""
    from fasttext_lib.stops import Interrupted, stop_message

    train, test = f"{s3_bucket}/data/train.txt", f"{s3_bucket}/data/test.txt"
    checks = []

    def mixed_then_stopped(client, targets):
        checks.append(targets)
        if len(checks) < stopped_at:
            return ["another-run", "this-run"]  # (another run wrote over one of this run's members)
        raise Interrupted(signal.SIGINT)
    monkeypatch.setattr(storage.pairs, "_write_ids", mixed_then_stopped)
    with pytest.raises(KeyboardInterrupt) as stop:
        with storage.atomic_writes([train, test], overwrite=False, if_taken=lambda uri: None) as (a, b):
            a.write(b"__label__1 train\n")
            b.write(b"__label__1 test\n")
    assert len(checks) == stopped_at
    assert stop_message(stop.value) == (
        f"interrupted (SIGINT); stopped and cleaned up, but {train}, {test} may now be a mixed set, of two writes "
        f"(reading them together is refused): run the command again")


def test_a_role_that_may_not_delete_passes_the_output_check_and_leaves_no_probe(s3_bucket, proxy):
    """sample --output checks up front that it can write there, with a probe object put and deleted. A role with
    s3:ListBucket but no s3:DeleteObject (which sample does not need) failed that check with "access denied" and left
    the probe behind. The check now puts nothing it cannot delete, and still refuses a role that may not put."""
    from conftest import cli_in_process

    prefix = f"{s3_bucket}/data"
    proxy.fail("DELETE", r".", "403")
    r = cli_in_process("sample", "--output", prefix)
    assert r.returncode == 0, r.stderr
    assert _bucket_keys(prefix) == ["test.csv", "train.csv"]
    proxy.fail("PUT", r".", "403")
    with pytest.raises(FastTextError, match="access denied"):
        storage.check_writable(f"{s3_bucket}/other")
    proxy.clear()
    assert _bucket_keys(f"{s3_bucket}/other") == []


def test_a_role_that_may_put_but_not_read_or_delete_passes_the_output_check(s3_bucket, proxy):
    """s3:ListBucket and s3:PutObject alone (a common upload-only policy: predict --output, sample --output to a
    bucket others read) write a file with a plain or create-only PUT. The check's probe, a PUT conditional on an ETag
    (If-Match), needs s3:GetObject too on S3, which refused it (403), and the check said "access denied": the run
    was refused a write it could do. Such a 403 with reads refused too is no answer: the write itself tells. A role
    that may read but not put is still refused."""
    prefix = f"{s3_bucket}/out"
    proxy.fail("PUT", r".", "403-if-match")  # (S3: If-Match needs s3:GetObject)
    proxy.fail("HEAD", r"^/[^/]+/.", "403")  # objects, not the bucket: s3:ListBucket is granted
    proxy.fail("GET", r"^/[^/]+/.", "403")
    proxy.fail("DELETE", r".", "403")
    storage.check_writable(prefix)
    with storage.atomic_write(f"{prefix}/preds.txt") as f:
        f.write(b"__label__1\n")
    assert _bucket_keys(prefix) == ["preds.txt"]
    proxy.clear()
    proxy.fail("PUT", r".", "403")
    proxy.fail("DELETE", r".", "403")
    with pytest.raises(FastTextError, match="access denied"):
        storage.check_writable(f"{s3_bucket}/other")
    proxy.clear()
    assert _bucket_keys(f"{s3_bucket}/other") == []


def test_a_local_pair_written_again_while_a_run_reads_it_is_refused(tmp_path):
    """train reads --train, then --validation: a sample / prepare run that wrote the pair again in between had the
    run train on the old training split and validate on the new test split, silently (on S3 the set metadata
    refused it). Locally the second file of a folder is now refused when one read before was replaced since; files
    not replaced, or one file read twice, are read."""
    train, test = _write_pair(str(tmp_path), "old")
    with storage.reading_together():
        assert storage.read_bytes(train) == b"__label__1 old train\n"
        assert storage.read_bytes(test) == b"__label__1 old test\n"
        assert storage.read_bytes(train) == b"__label__1 old train\n"
    with storage.reading_together():
        storage.read_bytes(train)
        _write_pair(str(tmp_path), "new")
        with pytest.raises(FastTextError, match=rf"^{re.escape(train)} was written again while this run read it, "
                                                rf"before {re.escape(test)} beside it was opened .*: this run would "
                                                rf"read them from two writes; run it again$") as err:
            storage.read_bytes(test)
        one_line(err.value)
    with storage.reading_together():  # the advice works
        assert storage.read_bytes(train) == b"__label__1 new train\n"
        assert storage.read_bytes(test) == b"__label__1 new test\n"
    storage.read_bytes(test)  # outside a block: nothing is checked


def test_pipes_and_files_removed_are_no_pair_written_again(tmp_path):
    """``train --train <(zcat train.gz) --validation <(zcat valid.gz)``: both are /dev/fd/N, whose real paths
    (/proc/PID/fd/pipe:[N]) are of one folder and cannot be stat'ed, so the second was refused as "written again
    while this run read it". Only regular files are weighed, and a file removed since it was read (not replaced:
    a pair's writer never removes one) is no reason to refuse its neighbour."""
    opened = []
    for text in (b"__label__1 piped train\n", b"__label__1 piped test\n"):
        read_end, write_end = os.pipe()
        os.write(write_end, text)
        os.close(write_end)
        opened.append(read_end)
    try:
        with storage.reading_together():
            assert [storage.read_bytes(f"/dev/fd/{fd}") for fd in opened] == [b"__label__1 piped train\n",
                                                                               b"__label__1 piped test\n"]
    finally:
        for fd in opened:
            os.close(fd)
    train, test = _write_pair(str(tmp_path), "old")
    with storage.reading_together():
        storage.read_bytes(train)
        os.remove(train)
        assert storage.read_bytes(test) == b"__label__1 old test\n"


def test_the_old_pair_kept_for_a_failed_rename_is_not_swept_by_another_writer(tmp_path, monkeypatch):
    """The old train split is kept (a hard link named as a temporary) while the new pair is put in place, to be put
    back if the second rename fails. Another writer of that file starting meanwhile (a second prepare run) swept it
    as a dead writer's leftover: nobody held a lock on it. The failed rename then left the new train split beside
    the old test split, the old train split lost. The kept file is now locked while it is kept."""
    uris = _write_pair(str(tmp_path), "old")
    real_replace = os.replace

    def another_writer_starts_then_the_second_fails(src, dst, *args, **kwargs):
        if str(dst).endswith("pair.test"):
            storage.remove_stale_temporaries(uris[0])  # what another write of pair.train does first
            raise OSError(errno.EBUSY, "Device or resource busy", dst)
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", another_writer_starts_then_the_second_fails)
    with pytest.raises(FastTextError):
        _write_pair(str(tmp_path), "new")
    monkeypatch.setattr(os, "replace", real_replace)
    assert [open(u).read() for u in uris] == ["__label__1 old train\n", "__label__1 old test\n"]
    assert sorted(os.listdir(tmp_path)) == ["pair.test", "pair.train"]


def test_a_pair_in_a_folder_named_two_ways_is_written_without_waiting_on_itself(tmp_path):
    """A pair written through a symbolic link to its folder (~/data -> /mnt/disk/data), one member itself a link
    (train.csv -> train_v1.csv): the member's target is named by its real path (files.write_target), the other by
    the path as given, and the folder's lock was taken once by each name, two locks of one directory by one
    process: the second waited on the first forever (sample --overwrite hung). Each folder is locked once."""
    real, link = tmp_path / "real", tmp_path / "link"
    real.mkdir()
    link.symlink_to(real)
    (real / "pair.train.v1").write_text("old\n")
    (real / "pair.train").symlink_to("pair.train.v1")
    (real / "pair.test").write_text("old\n")
    writer = ("import sys; from fasttext_lib import storage\n"
              "with storage.atomic_writes([sys.argv[1] + '/pair.train', sys.argv[1] + '/pair.test']) as (a, b):\n"
              "    a.write(b'new train'); b.write(b'new test')\n")
    proc = subprocess.Popen([sys.executable, "-c", writer, str(link)], env={**os.environ, "PYTHONPATH": ROOT})
    try:
        assert proc.wait(timeout=120) == 0  # (a bound on a hang, which waited forever: a process's start on a loaded
        #                                      machine may take more than the 30 s it was)
    finally:
        proc.kill()
        proc.wait()
    assert (real / "pair.train.v1").read_text() == "new train" and (real / "pair.test").read_text() == "new test"
    assert (real / "pair.train").is_symlink()


def test_a_pair_whose_old_file_another_program_holds_locked_is_written_without_waiting_for_it(tmp_path):
    """The old train split kept for a failed rename is locked while kept (shared, against another writer's sweep).
    That lock waited for any exclusive flock on the old file, with the folder's lock held: a user's
    ``flock data/train.csv -c 'train --train data/train.csv ...'`` (the data file as a job's lock) held the
    writer (sample --overwrite) until that job ended, and the job's train, opening --validation under the
    folder's shared lock, waited on the writer: neither ended. The old file is kept unlocked when it is locked."""
    import fcntl

    uris = _write_pair(str(tmp_path), "old")
    writer = ("import sys; from fasttext_lib import storage\n"
              "with storage.atomic_writes(sys.argv[1:]) as (a, b):\n"
              "    a.write(b'new train'); b.write(b'new test')\n")
    with open(uris[0], "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = subprocess.Popen([sys.executable, "-c", writer, *uris], env={**os.environ, "PYTHONPATH": ROOT})
        try:
            assert proc.wait(timeout=120) == 0  # (a bound on a hang, which waited forever, as above)
        finally:
            proc.kill()
            proc.wait()
    assert [open(u).read() for u in uris] == ["new train", "new test"]
    assert sorted(os.listdir(tmp_path)) == ["pair.test", "pair.train"]


@pytest.mark.parametrize("run", ["train reading the pair", "sample writing it"])
def test_a_data_folder_another_program_holds_locked_is_waited_for_a_while_not_forever(tmp_path, monkeypatch, capsys,
                                                                                      run):
    """``flock data -c 'python -m fasttext_lib train --train data/train.csv ...'`` (flock(1) on the data folder, to
    run one job at a time on it): train opened its files under the folder's shared lock, and sample put its files in
    place under its exclusive lock, each waiting for the flock tool's lock, held until they ended: they never did.
    A folder's lock is waited for LOCK_WAIT_SECONDS at most (a pair's renames take far less), then the run goes
    on without it, with one warning line naming the folder."""
    import fcntl
    import threading

    train, test = _write_pair(str(tmp_path), "old")
    monkeypatch.setattr(storage.files, "LOCK_WAIT_SECONDS", 0.5, raising=False)
    done = []

    def read():
        with storage.reading_together():
            done.append(storage.read_bytes(train) + storage.read_bytes(test))

    def write():
        _write_pair(str(tmp_path), "new")
        done.append([open(u, "rb").read() for u in (train, test)])
    worker = threading.Thread(target=read if run.startswith("train") else write, daemon=True)
    held = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # what flock(1) holds on the folder while its command runs
        worker.start()
        worker.join(60)  # (a bound on a wait forever, far beyond LOCK_WAIT_SECONDS' 0.5 s even on a loaded machine)
        waited_forever = worker.is_alive()
    finally:
        os.close(held)  # (lets a worker that waited forever end)
        worker.join(30)
    assert not waited_forever
    if run.startswith("train"):
        assert done == [b"__label__1 old train\n__label__1 old test\n"]
    else:
        assert done == [[b"__label__1 new train\n", b"__label__1 new test\n"]]
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and err.endswith(
        f"warning: {tmp_path} stayed locked by another program (flock) for 0.5 s; going on without waiting for it\n")


@pytest.mark.parametrize("held", ["CreateMultipartUpload", "the first part"])
def test_a_signal_before_a_multipart_upload_has_its_id_leaves_no_upload_and_no_object(tmp_path, s3_bucket, proxy,
                                                                                      monkeypatch, held):
    """Ctrl-C / SIGTERM while S3 had not yet answered CreateMultipartUpload: the upload had no id to abort yet, so the
    abandoned transfer, which goes on in its thread, got the id afterwards and went on to upload every part and
    complete the object, a data file no manifest names, after the publish had failed and taken its files back.
    Interrupted between the id and the first part, the upload is aborted by its id. Either way: the old set, no
    multipart upload, no object of the interrupted publish, one line."""
    dest = f"{s3_bucket}/models/held"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    before = s3_names(dest)
    files = make_files(tmp_path, "new", size=6 * 1024 * 1024)
    force_multipart(monkeypatch)
    if held == "CreateMultipartUpload":
        proxy.fail("POST", r"/model-", "stall")
    else:
        proxy.fail("PUT", r"/model-", "stall", nth=1)

    one_line(publish_stopped_at_the_stall(proxy, dest, files))
    proxy.release()  # S3 answers the held request now; the abandoned transfer goes on meanwhile
    wait_for_abandoned_transfers()
    assert any(m == "POST" and q == "uploads" for m, _, q in proxy.log)  # it was a multipart upload
    assert multipart_uploads(s3_bucket) == []
    assert s3_names(dest) == before and load_tag(dest, tmp_path) == "old"


def test_a_signal_while_the_transfer_thread_starts_leaves_no_upload_and_no_object(tmp_path, s3_bucket, proxy,
                                                                                  monkeypatch):
    """The signal can come while the caller is still starting the transfer's thread (Thread.start waits for it to
    run; on a busy machine the thread may have sent CreateMultipartUpload before its starter runs again): it was
    raised out of that start, before the wait whose handler marks the upload abandoned, and the transfer went on
    to upload every part and complete the object, a data file no manifest names."""
    import threading

    from fasttext_lib.stops import Interrupted, stop_on_signals

    dest = f"{s3_bucket}/models/starting"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    before = s3_names(dest)
    files = make_files(tmp_path, "new", size=6 * 1024 * 1024)
    force_multipart(monkeypatch)
    proxy.fail("POST", r"/model-", "stall")
    real_start = threading.Thread.start

    def start(thread):  # the caller is scheduled again only once S3 holds the thread's request (or it ended)
        real_start(thread)
        if thread.name == "fasttext-s3-transfer":
            while thread in threading.enumerate() and not proxy.stalled.wait(0.05):
                pass
            if proxy.stalled.is_set():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(30)  # (the handler's Interrupted ends this sleep)
    with pytest.MonkeyPatch.context() as patch, pytest.raises(Interrupted) as raised:
        patch.setattr(threading.Thread, "start", start)
        with stop_on_signals():
            storage.publish(dest, files, MANIFEST, {"tag": "new"})
    one_line(raised.value)
    proxy.release()
    wait_for_abandoned_transfers()
    assert multipart_uploads(s3_bucket) == []
    assert s3_names(dest) == before and load_tag(dest, tmp_path) == "old"


def test_an_interrupted_upload_s3_refuses_to_abort_is_not_completed(tmp_path, s3_bucket, proxy, monkeypatch, capsys):
    """A role without s3:AbortMultipartUpload: the abort of an upload a signal interrupted between its parts is
    refused (a warning names the upload to abort by hand), and the abandoned transfer, going on in its thread,
    uploaded the rest and completed the object after the publish had failed and taken its files back. An abandoned
    upload is never completed: the old set, the upload left as the warning says."""
    dest = f"{s3_bucket}/models/unabortable"
    storage.publish(dest, make_files(tmp_path, "old"), MANIFEST, {"tag": "old"})
    before = s3_names(dest)
    files = make_files(tmp_path, "new", size=6 * 1024 * 1024)
    force_multipart(monkeypatch)
    proxy.fail("PUT", r"/model-", "stall", nth=1)
    proxy.fail("DELETE", r"/model-", "403")

    publish_stopped_at_the_stall(proxy, dest, files)
    proxy.release()
    wait_for_abandoned_transfers()
    left = multipart_uploads(s3_bucket)
    assert [u["Key"].rsplit("/", 1)[-1][:len("model-")] for u in left] == ["model-"]
    assert f"abort multipart upload {left[0]['UploadId']} there by hand" in capsys.readouterr().err
    assert not any(m == "POST" and q.startswith("uploadId=") for m, _, q in proxy.log)  # never completed
    assert s3_names(dest) == before and load_tag(dest, tmp_path) == "old"


@pytest.mark.parametrize("user", ["lister", "uploads_lister"])
def test_orphan_uploads_a_role_may_not_list_or_abort_do_not_fail_a_publish_or_a_removal(s3_policy_server, tmp_path,
                                                                                         monkeypatch, user):
    """The clean-up of a killed run's multipart upload under a set's prefix, with a role that may list objects but not
    multipart uploads (no s3:ListBucketMultipartUploads) or may list them but not abort one (no
    s3:AbortMultipartUpload): the publish and the removal succeed, and say so. A removal (a checkpoint's older
    epoch, after each save) that could list the upload but not abort it was 'access denied' though the set was gone:
    the training stopped at that epoch's end, its checkpoint saved. The upload stays (nothing may remove it)."""
    policy, admin = s3_policy_server, s3_policy_server.client("admin")
    dest = f"s3://{policy.bucket}/orphans-{user}"
    bucket, prefix = storage.split_s3(dest)
    orphan = admin.create_multipart_upload(Bucket=bucket, Key=f"{prefix}/model-0123456789abcdef.params")["UploadId"]
    monkeypatch.setattr(storage.sets, "ORPHAN_GRACE_SECONDS", -1)  # (the upload is that old)
    _as_user(monkeypatch, policy, user)
    storage.publish(dest, make_files(tmp_path, "a"), MANIFEST, {"tag": "a"})
    assert load_tag(dest, tmp_path) == "a"
    storage.remove(dest, MANIFEST)
    assert _admin_keys(policy, prefix + "/") == []
    left = [u["UploadId"] for u in admin.list_multipart_uploads(Bucket=bucket, Prefix=prefix + "/").get("Uploads", [])]
    assert left == [orphan]
    admin.abort_multipart_upload(Bucket=bucket, Key=f"{prefix}/model-0123456789abcdef.params", UploadId=orphan)


def test_files_written_together_that_are_one_file_through_a_symbolic_link_are_refused(tmp_path):
    """test.csv a link to train.csv (or both links to one file): with the link's target written (write_target),
    the pair's second rename replaced the first, so that train.csv held the test split, the training split was lost,
    exit 0, and a backup of the old file stayed behind (.train.csv.fasttext-*.tmp)."""
    (tmp_path / "train.csv").write_text("old train\n")
    os.symlink("train.csv", tmp_path / "test.csv")
    uris = [str(tmp_path / "train.csv"), str(tmp_path / "test.csv")]
    with pytest.raises(FastTextError) as caught:
        with storage.atomic_writes(uris) as (train, test):
            train.write(b"new train\n")
            test.write(b"new test\n")
    assert one_line(caught.value) == (f"cannot write {uris[0]} and {uris[1]} together: they are one file "
                                      f"({uris[0]}) through a symbolic link; give each its own file")
    assert (tmp_path / "train.csv").read_text() == "old train\n"
    assert sorted(os.listdir(tmp_path)) == ["test.csv", "train.csv"]


def test_a_signal_the_kernel_hands_to_another_thread_still_ends_the_wait_for_a_transfer(monkeypatch):
    """The kernel gives a process's SIGINT or SIGTERM to any thread that does not block it. One that went to another
    thread (botocore's, s3transfer's) woke no untimed ``join``: the run waited for the transfer's thread, a stalled
    request's read timeout (a minute), and the abandoned upload's CreateMultipartUpload was sent again and never
    aborted (a flaky test showed it under load). The wait now lets the handler run while the transfer goes on."""
    import threading

    from fasttext_lib.stops import Interrupted, stop_on_signals
    from fasttext_lib.storage.s3 import _in_thread

    transfer_done, finished, waiting, abandoned = threading.Event(), threading.Event(), threading.Event(), []
    real_join = threading.Thread.join

    def join(thread, timeout=None):
        if thread.name == "fasttext-s3-transfer":
            waiting.set()
        return real_join(thread, timeout)
    monkeypatch.setattr(threading.Thread, "join", join)

    def transfer():  # a request S3 does not answer for a long time (until the test ends, 2 minutes at most)
        transfer_done.wait(120)
        finished.set()

    def signal_another_thread():
        # (once the main thread waits for the transfer, then 0.3 s more for it to be inside that wait: after a fixed
        # time, a loaded machine's main thread had not yet begun the transfer, or not yet waited for it, and the
        # Interrupted came before the wait, untimed or not: the test passed on the bug)
        waiting.wait(60)
        time.sleep(0.3)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # (to this thread, not the main one)

    try:
        with pytest.raises(Interrupted):
            with stop_on_signals():
                threading.Thread(target=signal_another_thread, daemon=True).start()
                _in_thread(transfer, on_abandon=lambda: abandoned.append(finished.is_set()))
        assert abandoned == [False]  # abandoned while the transfer was still waiting, not after it ended
    finally:
        transfer_done.set()


@pytest.mark.parametrize("when", ["putting the old file back", "between the renames"])
def test_a_sigterm_at_its_default_disposition_waits_for_the_pair_to_be_whole(tmp_path, when):
    """A Python program of the user's own (no CLI, so no handler of ours: SIGTERM at its default disposition) writing
    a pair over an older one. A SIGTERM between the two renames, or while a failed second rename (EBUSY) put the old
    train split back, killed it on the spot: the new train split stayed beside the old test split, the old train split
    left only as a hard link under a temporary's name. The library now holds it through those few local renames (the
    main thread only, and only where the disposition is the default, which it leaves as it was) and then lets it
    kill the program as it would have: exit -15, with the pair whole, old or new."""
    old = _write_pair(str(tmp_path), "old")
    script = textwrap.dedent(f"""
        import errno, os, signal
        from fasttext_lib import storage

        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        real_replace, to_train, when = os.replace, [], {when!r}

        def replace(src, dst, *args, **kwargs):
            if dst.endswith("pair.test") and when == "putting the old file back":
                raise OSError(errno.EBUSY, "Device or resource busy", dst)
            if dst.endswith("pair.test") or (dst.endswith("pair.train") and to_train):
                os.kill(os.getpid(), signal.SIGTERM)  # (a SIGTERM at its default disposition ends the process here)
            to_train.append(dst)
            return real_replace(src, dst, *args, **kwargs)

        os.replace = replace
        with storage.atomic_writes({old!r}) as (train, test):
            train.write(b"__label__1 new train\\n")
            test.write(b"__label__1 new test\\n")
        print("not stopped")
        """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == -signal.SIGTERM and r.stdout == "" and r.stderr == "", (r.returncode, r.stdout, r.stderr)
    tag = "old" if when == "putting the old file back" else "new"
    assert [open(u).read() for u in old] == [f"__label__1 {tag} train\n", f"__label__1 {tag} test\n"]
    assert sorted(os.listdir(tmp_path)) == ["pair.test", "pair.train"]


@pytest.mark.parametrize("where", ["the caller's on_written", "keeping the old file"])
def test_a_sigterm_at_its_default_disposition_is_held_only_while_the_pair_is_mixed(tmp_path, where):
    """The SIGTERM held at its default disposition (above) was held through the whole block around the renames: the
    caller's on_written too (code of the user's, which may wait: on input, on a full pipe), and the keeping of the old
    files (a copy where the file system has no hard links: minutes for a large split). ``kill`` did not end a program
    waiting there until it went on. Only the renames and their put-back are held now: anywhere else the signal ends
    the program where it lands, as it did, with the pair whole (the old one here: nothing renamed yet; the new one
    after the renames)."""
    old = _write_pair(str(tmp_path), "old")
    script = textwrap.dedent(f"""
        import os, signal, sys
        from fasttext_lib import storage
        from fasttext_lib.storage import atomic

        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        where = {where!r}

        def stop_here():
            os.kill(os.getpid(), signal.SIGTERM)  # (at its default disposition: ends the process here)
            print("went on after the SIGTERM", flush=True)

        if where == "keeping the old file":
            real_keep = atomic._keep

            def keep(*args, **kwargs):
                stop_here()
                return real_keep(*args, **kwargs)

            atomic._keep = keep
        with storage.atomic_writes({old!r}, on_written=stop_here if where == "the caller's on_written" else None) \\
                as (train, test):
            train.write(b"__label__1 new train\\n")
            test.write(b"__label__1 new test\\n")
        print("not stopped")
        """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == -signal.SIGTERM and r.stdout == "" and r.stderr == "", (r.returncode, r.stdout, r.stderr)
    tag = "new" if where == "the caller's on_written" else "old"
    assert [open(u).read() for u in old] == [f"__label__1 {tag} train\n", f"__label__1 {tag} test\n"]


@pytest.mark.parametrize("overwrite", [True, False], ids=["replacing", "create-only"])
def test_a_single_s3_write_stopped_while_s3_holds_its_put_says_the_object_may_still_appear(s3_bucket, proxy,
                                                                                          overwrite):
    """storage.atomic_write to S3 (predict's output, export-vectors', write_csv's), Ctrl-C'd while S3 held its PUT
    (received whole, answered late: a slow S3). The line said "stopped and cleaned up"; then S3 applied the PUT and
    the object stood there, this run's, after all (a create-only one refuses the next run without --overwrite). The
    line now says it may still appear, and what to do, in the caller's terms."""
    from fasttext_lib.stops import stop_message

    uri = f"{s3_bucket}/out/predictions.jsonl"
    if overwrite:
        with storage.atomic_write(uri, "wb") as f:
            f.write(b"the user's old predictions\n")
    proxy.fail("PUT", r"/out/predictions\.jsonl$", "stall")

    def write():
        with storage.atomic_write(uri, "wb", overwrite=overwrite) as f:
            f.write(b"this run's predictions\n")
    stopped = stopped_at_the_stall(proxy, write)
    # S3 applies the PUT it held: the proxy's thread forwards it once released, which a create-only upload the stop
    # abandoned (no transfer thread left to wait for) does not wait for (read at once, it was seen missing once)
    deadline = time.monotonic() + 30
    while not (storage.exists(uri) and storage.read_bytes(uri) == b"this run's predictions\n"):
        assert time.monotonic() < deadline, "S3 never applied the held PUT"
        time.sleep(0.05)
    line = stop_message(stopped)
    if overwrite:
        assert line == (f"interrupted (SIGINT); stopped and cleaned up, but {uri} may still be replaced by its "
                        f"upload, under way when this run stopped (S3 had not answered it)"), line
    else:
        assert line == (f"interrupted (SIGINT); stopped and cleaned up, but {uri} may still be created by its "
                        f"upload, under way when this run stopped: delete it if it is there, or run the command "
                        f"again with --overwrite"), line


def _stopped_by_another_thread(proxy, signum, write, stall_for=15):
    """``write()`` under the CLI's stop_on_signals, ``signum`` handled by another thread than the main one (the kernel
    hands a process's signal to any of its threads) once the proxy holds one of its requests, which S3 answers
    ``stall_for`` s later if the write has not raised by then (a slow S3; else the test releases it). Returns the
    Interrupted and the seconds from the signal to its raise."""
    import threading

    from fasttext_lib.stops import Interrupted, stop_on_signals

    sent, raised_yet = [], threading.Event()

    def stop():
        assert proxy.stalled.wait(60)
        time.sleep(0.3)  # (into the wait for S3's answer)
        sent.append(time.monotonic())
        signal.pthread_kill(threading.get_ident(), signum)
        if not raised_yet.wait(stall_for):
            proxy.release()
    threading.Thread(target=stop, daemon=True).start()
    try:
        with pytest.raises(Interrupted) as raised, stop_on_signals():
            write()
    finally:
        raised_yet.set()
    return raised.value, time.monotonic() - sent[0]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_create_only_s3_write_stops_at_once_while_s3_holds_its_put(s3_bucket, proxy, signum):
    """A create-only atomic_write to S3 (predict's output without --overwrite) sent its PUT in the caller's thread,
    which waited there for S3's answer: a Ctrl-C or SIGTERM handled by another thread (or come as that read began)
    stopped the run only once S3 answered, or at the client's read timeout (a minute). The PUT is now sent in a
    transfer thread the caller waits for 0.1 s at a time: the stop is raised at once, saying that S3 had the PUT
    unanswered; a write to the same key meanwhile is refused ("try again"); S3 applies the PUT it held."""
    from fasttext_lib.stops import stop_message

    uri = f"{s3_bucket}/out/predictions.jsonl"
    proxy.fail("PUT", r"/out/predictions\.jsonl$", "stall")

    def write(data=b"this run's predictions\n"):
        with storage.atomic_write(uri, "wb", overwrite=False) as f:
            f.write(data)
    stopped, took = _stopped_by_another_thread(proxy, signum, write)
    assert took < 10, f"the stop waited {took:.1f} s for S3's answer"
    name = signal.Signals(signum).name
    assert stop_message(stopped) == (
        f"{'interrupted' if signum == signal.SIGINT else 'terminated'} ({name}); stopped and cleaned up, but {uri} may "
        f"still be created by its upload, under way when this run stopped: delete it if it is there, or run the "
        f"command again with --overwrite")
    with pytest.raises(FastTextError, match=rf"^{re.escape(uri)}: an interrupted upload to it is still being stopped; "
                                            r"try again$"):
        write(b"a second write's\n")  # (the PUT held: nothing else is sent to its key)
    proxy.release()
    wait_for_abandoned_transfers()
    assert storage.read_bytes(uri) == b"this run's predictions\n"  # S3 applied the PUT it held, as the line said


def test_a_create_only_s3_multipart_write_stopped_at_a_held_part_stops_at_once_and_leaves_nothing(s3_bucket, proxy,
                                                                                                  monkeypatch):
    """A create-only write in parts (If-None-Match on its completion), stopped while S3 held one of its parts: the
    stop waited for S3's answer in the caller's thread (a minute at worst), then aborted the upload. It is now raised
    at once; the upload is aborted by its id, its further parts are never sent, and nothing is left: no object, no
    upload in progress (its parts stored and billed)."""
    from fasttext_lib.stops import stop_message

    monkeypatch.setattr(storage.s3, "CONDITIONAL_PART_BYTES", 1024)
    uri = f"{s3_bucket}/out/vectors.vec"
    proxy.fail("PUT", r"/out/vectors\.vec$", "stall", nth=2)  # the second part

    def write():
        with storage.atomic_write(uri, "wb", overwrite=False) as f:
            f.write(os.urandom(4096))
    stopped, took = _stopped_by_another_thread(proxy, signal.SIGINT, write)
    assert took < 10, f"the stop waited {took:.1f} s for S3's answer"
    assert stop_message(stopped) == "interrupted (SIGINT); stopped and cleaned up"
    proxy.release()
    wait_for_abandoned_transfers()
    bucket = s3_bucket[len("s3://"):]
    assert not storage.exists(uri)
    assert boto3.client("s3").list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    parts = {re.search(r"partNumber=(\d+)", query).group(1) for method, path, query in proxy.log
             if method == "PUT" and path.endswith("/out/vectors.vec")}
    assert parts == {"1", "2"}  # (of 4: none sent after the stop; moto answers the held one 500, which is retried)


@pytest.mark.parametrize("overwrite", [True, False], ids=["replacing", "create-only"])
@pytest.mark.parametrize("stopped", ["before its PUT was sent", "once S3 answered its PUT", "as its summary is said"])
def test_a_single_s3_write_stopped_says_whether_s3_had_and_applied_its_put(s3_bucket, proxy, overwrite, stopped):
    """storage.atomic_write to S3 (predict's output, export-vectors', write_csv's), Ctrl-C'd while it uploads. Any stop
    in the upload's call said the object "may still" appear, also one before the PUT went out (the transfer abandoned
    sends nothing more: nothing was written, nor ever will be); one once S3 had answered the PUT, the new object in
    place (the summary line, on_written, being said), said "may still" or "stopped and cleaned up". The line now says
    nothing was written where the PUT never went out, and that the object was written where S3 had answered it."""
    from fasttext_lib.stops import Interrupted, stop_message, stop_on_signals

    uri = f"{s3_bucket}/out/predictions.jsonl"
    if overwrite:
        with storage.atomic_write(uri, "wb") as f:
            f.write(b"the user's old predictions\n")
    sent_before = len(proxy.log)

    def write(on_written=None):
        with storage.atomic_write(uri, "wb", overwrite=overwrite, on_written=on_written) as f:
            f.write(b"this run's predictions\n")
    if stopped == "as its summary is said":
        with pytest.raises(Interrupted) as raised, stop_on_signals():
            write(on_written=lambda: os.kill(os.getpid(), signal.SIGINT))
        stop = raised.value
    else:
        stop = stopped_at_a_put("before-parameter-build" if stopped.startswith("before") else "after-call", write)
    puts = [path for method, path, _ in proxy.log[sent_before:] if method == "PUT"]
    if stopped == "before its PUT was sent":
        assert stop_message(stop) == "interrupted (SIGINT); stopped and cleaned up"
        assert puts == []  # (and never will be: the transfer ended)
        assert (storage.read_bytes(uri) if storage.exists(uri) else None) == (
            b"the user's old predictions\n" if overwrite else None)
    else:
        assert stop_message(stop) == f"interrupted (SIGINT); stopped after {uri} was written"
        assert storage.read_bytes(uri) == b"this run's predictions\n"


def test_an_s3_json_output_over_an_archived_object_is_no_set_of_ours(s3_bucket):
    """The check that an S3 ``.json`` output is no bundle's manifest reads the object there: one in an archive storage
    class (S3's InvalidObjectState, 403) stopped the write ("S3 request ... failed"), which S3 takes and which went
    ahead before the check. Such an object is no manifest a set loads by."""
    bucket = s3_bucket[len("s3://"):]
    boto3.client("s3").put_object(Bucket=bucket, Key="x/report.json", Body=b"{}", StorageClass="GLACIER")
    storage.check_output_file(f"{s3_bucket}/x/report.json", "report.json", "--output")  # no refusal
