"""The failure contract, end to end: the real CLI in subprocesses, used as a hostile user would.

Every case asserts the exit status (2, or 128 + the signal), exactly one ``error:`` line on stderr,
no traceback on either stream, and the state of every file and S3 key afterwards: an existing
bundle intact and loadable, no staging or temporary leftovers (each run gets its own TMPDIR).
Faults are real: a tmpfs that fills up or is read-only, a loopback proxy in front of the S3 server
(scripts/fault_proxy.py), signals sent to a training process, two trainings at once.
"""
import ctypes
import errno
import functools
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import types
import time

import boto3
import pytest

from cli_helpers import (REVIEWS, TINY, tiny, assert_error, bundle, copy_bundle, data, listing, make_data,  # noqa: F401
                         predictions, tmpdir_env, with_options)
from conftest import ROOT, cli_in_process, cli_in_process_with, free_port, remount_ro, run_cli
from fault_proxy import FaultProxy


def predictions_json(model):
    """What ``predict`` prints for REVIEWS, each line parsed."""
    from conftest import cli_in_process

    return [json.loads(line) for line in cli_in_process("predict", "--model", model, input=REVIEWS).stdout.splitlines()]


def in_process_with_tmpdir(tmpdir, *args, env=None, input=None):
    """:func:`conftest.cli_in_process_with` with ``tmpdir`` as TMPDIR, taken as a new process takes it: Python's cached
    choice of the temporary directory (tempfile.tempdir) is cleared for the call, so it is made again from TMPDIR; both
    are put back after it (the test's own checks keep theirs: a full TMPDIR under test would fail them). For the
    cases whose answer and leftovers are under test; each such family keeps one case run as a process."""
    import tempfile
    from unittest import mock

    with mock.patch.object(tempfile, "tempdir", None):
        return cli_in_process_with(dict(env or {}, TMPDIR=str(tmpdir)), *args, input=input)


def s3_keys(uri):
    bucket, prefix = uri[len("s3://"):].split("/", 1)
    objs = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix=prefix + "/").get("Contents", [])
    return sorted((o["Key"], o["ETag"]) for o in objs)


# ---------------------------------------------------------------- --output: refused or checked up front


@pytest.mark.parametrize("case", ["user files", "current directory", "the training file's directory", "old format"])
def test_output_that_is_not_ours_is_refused_before_reading_data(tmp_path, bundle, case):
    target = tmp_path / "target"
    target.mkdir()
    cwd = None
    if case == "user files":
        (target / "notes.txt").write_text("mine")
        output, train, why = target, tmp_path / "missing.csv", "did not write (notes.txt)"
    elif case == "current directory":
        (target / "x.txt").write_text("mine")
        output, train, why, cwd = ".", tmp_path / "missing.csv", "current directory", target
    elif case == "the training file's directory":
        train = make_data(target / "train.csv", 50, 3)
        output, why = target, "train.csv"
    else:  # a bundle written before format 2: refused with a way out, not replaced
        (target / "config.json").write_text(json.dumps({"format_version": 1, "labels": ["1", "2"]}))
        for name in ("model.params", "vocab.json", "metrics.json"):
            (target / name).write_text("old")
        output, train, why = target, tmp_path / "missing.csv", "older format 1"
    before = listing(target)
    args = ("train", "--train", train, "--output", output, *TINY)
    if case == "current directory":  # one case a process (in the directory it names); the others in this process
        r = run_cli(*args, cwd=cwd)
    else:
        r = cli_in_process(*args)
    assert_error(r, why)  # the output is checked first: a missing --train is not even looked at
    assert "refusing to write" in r.stderr
    assert listing(target) == before
    if case == "old format":  # (the bundle's refusal: in this process)
        assert_error(cli_in_process("predict", "--model", target, input="x\n"), "retrain it")


@pytest.mark.parametrize("case", ["read-only", "parent is a file", "missing bucket", "endpoint down", "an S3 object"])
def test_unwritable_output_is_found_before_training(tmp_path, tmpfs, data, s3_server, case):
    env = {}
    if case == "read-only":
        disk = tmpfs("1m")
        remount_ro(disk)
        output, why = disk / "model", "Read-only file system"
    elif case == "parent is a file":
        (tmp_path / "afile").write_text("x")
        output, why = tmp_path / "afile" / "model", "afile is not a directory"
    elif case == "missing bucket":
        output, why = "s3://no-such-bucket-hostile/models/run", "bucket does not exist: no-such-bucket-hostile"
    elif case == "an S3 object":  # the training data itself named as the output: a bundle went under train.csv/
        boto3.client("s3").create_bucket(Bucket="object-hostile")
        boto3.client("s3").upload_file(str(data["train"]), "object-hostile", "data/train.csv")
        output, why = "s3://object-hostile/data/train.csv", "s3://object-hostile/data/train.csv is an object, not a folder"
    else:
        output, why = "s3://any-bucket/models/run", "cannot reach the S3 endpoint"
        env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}", "AWS_MAX_ATTEMPTS": "1"}
    args = ("train", "--train", tmp_path / "missing.csv", "--output", output, *TINY)
    # (one case a process; the others' answers in this process: the checks are the library's, as the second run's)
    r = run_cli(*args, env=env) if case == "read-only" else cli_in_process_with(env, *args)
    assert_error(r, why)  # before the (missing) training data is read: found up front
    r = cli_in_process_with(env, "train", "--train", data["train"], "--output", output, *TINY)  # (the process: above)
    assert_error(r, why)
    assert not r.stdout.strip()  # no epoch ran
    if case == "parent is a file":
        assert (tmp_path / "afile").read_text() == "x"
    if case == "an S3 object":
        assert [o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket="object-hostile")["Contents"]] == ["data/train.csv"]


def test_checkpoint_dir_that_is_a_file(tmp_path, data):
    (tmp_path / "ckpt").write_text("mine")
    # (in this process: the family's process is test_checkpoint_dir_that_is_the_output_is_refused_before_training's)
    r = cli_in_process("train", "--train", data["train"], "--output", tmp_path / "out", "--checkpoint-dir",
                       tmp_path / "ckpt", *TINY)
    assert_error(r, "ckpt exists and is not a directory")
    assert (tmp_path / "ckpt").read_text() == "mine" and not (tmp_path / "out").exists() and not r.stdout.strip()


@pytest.mark.parametrize("checkpoints", ["{out}", "{out}/", "{tmp}/./link", "{out}/ckpt", "{tmp}/link/ckpt/"])
def test_checkpoint_dir_that_is_the_output_is_refused_before_training(tmp_path, data, checkpoints):
    """Checkpoints in the bundle's own directory, or a folder inside it: every epoch was trained, then the bundle
    refused the epoch-NNNN/ folders (or the folder) it found there (and so did every rerun, resumed from them)."""
    from conftest import cli_in_process

    out = tmp_path / "out"
    os.symlink(out, tmp_path / "link")
    run = run_cli if checkpoints == "{out}" else cli_in_process  # one CLI process; the others in-process
    r = run("train", "--train", data["train"], "--output", out, "--checkpoint-dir",
            checkpoints.format(out=out, tmp=tmp_path), *tiny("--epochs", "2"))
    assert_error(r, "is the --output directory or inside it, where the bundle goes; give the checkpoints a directory")
    assert not out.exists() and not r.stdout.strip()


def test_checkpoint_dir_that_is_another_model_bundle_is_refused_before_training(tmp_path, data, bundle):
    """``--checkpoint-dir OLD_MODEL`` (a bundle, mistaken for the checkpoints' folder) wrote epoch-NNNN/ folders
    into that bundle, beside its files."""
    from conftest import cli_in_process

    old = copy_bundle(bundle, tmp_path / "old")
    before = listing(old)
    r = cli_in_process("train", "--train", data["train"], "--output", tmp_path / "out", "--checkpoint-dir", old, *TINY)
    assert_error(r, f"--checkpoint-dir {old} holds a model bundle (config.json); give the checkpoints a directory "
                    f"of their own")
    assert listing(old) == before and not (tmp_path / "out").exists()
    project = tmp_path / "project"  # another tool's config.json (--checkpoint-dir . in a project folder) is no bundle
    project.mkdir()
    (project / "config.json").write_text("{}")
    r = cli_in_process("train", "--train", data["train"], "--output", tmp_path / "out", "--checkpoint-dir", project, *TINY)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("output, refused", [("ck/epoch-0003", True), ("ck/epoch-0001/model", True),
                                              ("ck/final", False), ("ck/epoch-final", False)])
def test_an_output_named_as_one_of_the_checkpoints_is_refused_before_training(tmp_path, data, output, refused):
    """`--output ck/epoch-0003 --checkpoint-dir ck` saved the bundle as if it were epoch 3's checkpoint folder; the
    next run reading those checkpoints stopped there ('holds files this library did not write (config.json)')."""
    from conftest import cli_in_process

    r = cli_in_process("train", "--train", data["train"], "--output", tmp_path / output, "--checkpoint-dir",
                       tmp_path / "ck", *TINY)
    if refused:
        assert_error(r, f"would be the checkpoint folder {output.split('/')[1]} of --checkpoint-dir {tmp_path / 'ck'}; "
                        f"give the bundle a place of its own")
        assert not (tmp_path / "ck").exists()
    else:
        assert r.returncode == 0, r.stderr


def test_checkpoint_dir_beside_the_output_with_its_name_as_prefix_is_fine(tmp_path, data):
    from conftest import cli_in_process

    r = cli_in_process("train", "--train", data["train"], "--output", tmp_path / "out", "--checkpoint-dir",
                       tmp_path / "out-ckpt", *TINY)
    assert r.returncode == 0, r.stderr
    assert os.listdir(tmp_path / "out-ckpt") == ["epoch-0001"]


@pytest.fixture(scope="module")
def checkpoint(data, tmp_path_factory):
    """A checkpoint folder (epoch-0001/) a finished training kept (not to be modified: tests copy it)."""
    where = tmp_path_factory.mktemp("checkpoint")
    r = cli_in_process("train", "--train", data["train"], "--output", where / "model", "--checkpoint-dir", where / "ck",
                       *TINY)  # (what the tests are given, made in this process)
    assert r.returncode == 0, r.stderr
    return where / "ck" / "epoch-0001"


def _stored_file(folder, suffix):
    return next(name for name in sorted(os.listdir(folder)) if name.endswith(suffix) and "-" in name)


def _writing_one_file(command, target, tmp_path, data, bundle):
    """The arguments of ``command``, one of three that write one file, writing it to ``target`` (import-folders reads
    two class folders of one review each, made here)."""
    for label, review in (("pos", "great food"), ("neg", "cold food")):
        (tmp_path / "folders" / label).mkdir(parents=True, exist_ok=True)
        (tmp_path / "folders" / label / f"{label}.txt").write_text(review)
    return {"export-vectors": ["export-vectors", "--model", bundle, "--output", target],
            "import-folders": ["import-folders", "--input", tmp_path / "folders", "--output", target],
            "--autotune-trials": ["train", "--train", data["train"], "--autotune-validation", data["test"],
                                  "--autotune-trials", target, "--output", tmp_path / "out", *TINY]}[command]


@pytest.mark.parametrize("command", ["export-vectors", "import-folders", "--autotune-trials"])
def test_a_file_output_never_replaces_a_file_of_another_bundle_or_checkpoint(tmp_path, data, bundle, checkpoint,
                                                                             command):
    """A one-file output given a file of a model bundle or checkpoint that is not the command's own, with --overwrite
    (``export-vectors --model new --output old_model/config.json --overwrite``, a trial table written over a
    checkpoint's checkpoint.json): the file was replaced, and that bundle or checkpoint no longer loaded."""
    from conftest import cli_in_process

    other, kept = copy_bundle(bundle, tmp_path / "other"), copy_bundle(checkpoint, tmp_path / "ck" / "epoch-0001")
    os.symlink(other / "config.json", tmp_path / "link.json")
    before = {folder: {name: (folder / name).read_bytes() for name in os.listdir(folder)} for folder in (other, kept)}
    for target, said in [(other / "config.json", f"is the manifest of the model bundle or checkpoint {other}:"),
                         (tmp_path / "link.json", f"is the manifest of the model bundle or checkpoint {other}:"),
                         (other / _stored_file(other, ".params"),
                          f"is a file of the model bundle or checkpoint {other} (its config.json lists it):"),
                         (kept / "checkpoint.json", f"is the manifest of the model bundle or checkpoint {kept}:"),
                         (kept / _stored_file(kept, ".params"),
                          f"is a file of the model bundle or checkpoint {kept} (its checkpoint.json lists it):")]:
        run = run_cli if target == other / "config.json" else cli_in_process  # one CLI process; the others in-process
        r = run(*_writing_one_file(command, target, tmp_path, data, bundle), "--overwrite")
        assert_error(r, f"{target} {said} replaced, that set would no longer load; write the file elsewhere")
        assert r.stderr.strip().splitlines()[-1].startswith("error:") and not r.stdout.strip()
    assert {folder: {name: (folder / name).read_bytes() for name in os.listdir(folder)} for folder in (other, kept)} \
        == before
    assert predictions(other) == predictions(bundle) and not (tmp_path / "out").exists()


def _published_to_s3(folder, manifest_name, dest):
    """The local set at ``folder`` published again at the S3 prefix ``dest``; its objects' names there."""
    from fasttext_lib.storage import publish, read_manifest

    manifest = read_manifest(str(folder), manifest_name)
    files = {name: str(folder / entry["object"]) for name, entry in manifest["files"].items()}
    publish(dest, files, manifest_name, {k: v for k, v in manifest.items() if k not in ("files", "written_by")})
    return sorted(entry["object"] for entry in read_manifest(dest, manifest_name)["files"].values())


@pytest.mark.parametrize("command", ["export-vectors", "import-folders", "--autotune-trials"])
def test_an_s3_file_output_never_replaces_an_object_of_another_bundle_or_checkpoint(tmp_path, s3_bucket, data, bundle,
                                                                                    checkpoint, command):
    """The S3 form of the local refusal above: ``--output s3://b/other_model/config.json --overwrite`` replaced that
    bundle's manifest (or a data object it lists, or a checkpoint's checkpoint.json), and the set no longer loaded."""
    from conftest import cli_in_process

    other, kept = f"{s3_bucket}/other", f"{s3_bucket}/ck/epoch-0001"
    other_params = next(n for n in _published_to_s3(bundle, "config.json", other) if n.endswith(".params"))
    kept_params = next(n for n in _published_to_s3(checkpoint, "checkpoint.json", kept) if n.endswith(".params"))
    before = s3_keys(other) + s3_keys(kept)
    for target, said in [(f"{other}/config.json", f"is the manifest of the model bundle or checkpoint {other}:"),
                         (f"{other}/{other_params}",
                          f"is a file of the model bundle or checkpoint {other} (its config.json lists it):"),
                         (f"{kept}/checkpoint.json", f"is the manifest of the model bundle or checkpoint {kept}:"),
                         (f"{kept}/{kept_params}",
                          f"is a file of the model bundle or checkpoint {kept} (its checkpoint.json lists it):")]:
        run = run_cli if target == f"{other}/config.json" else cli_in_process  # one CLI process; the others in-process
        r = run(*_writing_one_file(command, target, tmp_path, data, bundle), "--overwrite")
        assert_error(r, f"{target} {said} replaced, that set would no longer load; write the file elsewhere")
        assert not r.stdout.strip()
    assert s3_keys(other) + s3_keys(kept) == before and not (tmp_path / "out").exists()
    r = cli_in_process("export-vectors", "--model", bundle, "--output", f"{other}/vectors.vec")  # beside it: fine
    assert r.returncode == 0, r.stderr


def test_a_path_that_is_a_loop_of_symbolic_links_is_named_so(tmp_path, data, bundle, checkpoint, monkeypatch):
    """``--train loopa`` (loopa -> loopb -> loopa), ``evaluate --data``, ``predict --input``: "no such file: loopa", of
    a name that is there; ``--output`` or ``--checkpoint-dir loopa``: "loopa exists and is not a directory";
    ``--label-names loopa``: "no such file, not a known dataset"; ``import-folders --input loopa``: "no such
    directory"; a bundle's or checkpoint's file that is a loop: the kernel's "Too many levels of symbolic links", or
    of a checkpoint's model.params "missing (deleted since it was written)"; a checkpoint.json that is a loop: the
    checkpoint skipped, every epoch trained again, then refused at the save. Each is named as the loop it is, as
    ``--model loopa`` is (storage.missing_file's words), before anything is trained or written."""
    from conftest import cli_in_process

    monkeypatch.chdir(tmp_path)
    (tmp_path / "loopa").symlink_to("loopb")
    (tmp_path / "loopb").symlink_to("loopa")
    loop = "a loop of symbolic links"
    train = ("train", "--train", data["train"], "--output", "out", *TINY)
    cases = [(("train", "--train", "loopa", "--output", "out", *TINY), f"--train: cannot read loopa: {loop}"),
             ((*train, "--validation", "loopa"), f"--validation: cannot read loopa: {loop}"),
             (("train", "--train", data["train"], "--output", "out", "--autotune-validation", "loopa", "--no-progress"),
              f"--autotune-validation: cannot read loopa: {loop}"),
             ((*train, "--label-names", "loopa"), f"--label-names: cannot read loopa: {loop}"),
             ((*train, "--pretrained-vectors", "loopa"), f"--pretrained-vectors: cannot read loopa: {loop}"),
             ((*train, "--pretrained-vectors", "nothing.vec"), "--pretrained-vectors: no such file: nothing.vec"),
             (("evaluate", "--model", bundle, "--data", "loopa"), f"cannot read loopa: {loop}"),
             (("predict", "--model", bundle, "--input", "loopa"), f"cannot read loopa: {loop}"),
             (("predict", "--model", "loopa", "--input", data["test"]), f"cannot read loopa: {loop}"),
             (("import-folders", "--input", "loopa", "--output", "out.csv"), f"--input: cannot read loopa: {loop}"),
             (("train", "--train", data["train"], "--output", "loopa", *TINY),
              f"cannot write {tmp_path / 'loopa'}: {loop}"),
             ((*train, "--checkpoint-dir", "loopa"), f"cannot write {tmp_path / 'loopa'}: {loop}")]
    for name in ("config.json", _stored_file(bundle, ".params")):  # a file of a bundle, looping
        where = copy_bundle(bundle, tmp_path / f"bundle-{name}")
        os.remove(where / name)
        (where / name).symlink_to(name)
        cases.append((("predict", "--model", where, "--input", data["test"]), f"cannot read {where / name}: {loop}"))
    for name in ("checkpoint.json", _stored_file(checkpoint, ".params")):  # a file of a checkpoint resumed, looping
        where = copy_bundle(checkpoint, tmp_path / f"ck-{name}" / "epoch-0001")
        os.remove(where / name)
        (where / name).symlink_to(name)
        cases.append(((*with_options(train, "--epochs", "2"), "--checkpoint-dir", where.parent),
                      f"cannot resume from checkpoint {where}: cannot read {where / name}: {loop}; remove that "
                      f"directory (an earlier checkpoint, if any, is resumed instead) or use another --checkpoint-dir"))
    said = [(args, cli_in_process(*args)) for args, _ in cases]
    wrong = [(args, r.returncode, r.stderr, r.stdout) for (args, r), (_, line) in zip(said, cases)
             if (r.returncode, r.stderr, r.stdout) != (2, f"error: {line}\n", "")]
    assert not wrong, "\n".join(map(str, wrong))
    assert sorted(os.listdir(tmp_path)) == ["bundle-config.json", f"bundle-{_stored_file(bundle, '.params')}",
                                            "ck-checkpoint.json", f"ck-{_stored_file(checkpoint, '.params')}",
                                            "loopa", "loopb"]


def test_a_name_too_long_for_the_file_system_is_refused_before_training(tmp_path, data, bundle, monkeypatch):
    """``--output`` or ``--checkpoint-dir`` with a name over NAME_MAX (255 bytes): every epoch trained, then a
    traceback (ENAMETOOLONG, exit 1) at the save, its cleanup failing the same way and leaving the folders it made; a
    trial table of such a name failed after the whole search. Each is one line before any work now, nothing made."""
    from conftest import cli_in_process

    monkeypatch.chdir(tmp_path)
    long = "x" * 300
    said = "is 300 bytes long, and the file system there takes at most 255; give a shorter one"
    r = run_cli("train", "--train", data["train"], "--output", tmp_path / "out" / long / "m", *TINY)
    assert_error(r, f"cannot write {tmp_path / 'out' / long / 'm'}: the name {long[:24]}... {said}")
    assert not r.stdout.strip()
    for args in [("train", "--train", data["train"], "--output", "m", "--checkpoint-dir", long, *TINY),
                 ("train", "--train", data["train"], "--autotune-validation", data["test"], "--autotune-trials", long,
                  "--output", "m", "--no-progress"),
                 ("export-vectors", "--model", bundle, "--output", long),
                 ("sample", "--output", f"s/{long}")]:
        r = cli_in_process(*args)
        assert (r.returncode, r.stdout) == (2, ""), r.stderr
        assert r.stderr.startswith(f"error: cannot write ") and r.stderr.endswith(f"{said}\n"), r.stderr
    assert os.listdir(tmp_path) == []


def test_sample_output_under_a_file(tmp_path):
    (tmp_path / "afile").write_text("x")
    r = cli_in_process("sample", "--output", tmp_path / "afile" / "data")  # (an --output's process: train's, above)
    assert_error(r, "afile")
    assert os.listdir(tmp_path) == ["afile"] and (tmp_path / "afile").read_text() == "x"


# ---------------------------------------------------------------- settings refused up front; silent wrong results


@pytest.mark.parametrize("flag, value, why", [
    ("--lr", "inf", "error: --lr must be a positive finite number"),  # (each named by its flag: --lr, not lr)
    ("--wd", "inf", "error: --wd must be a non-negative finite number"),
    ("--dropout", "inf", "error: --dropout must be in [0, 1)"),
    ("--seed", "-1", "error: --seed must be an integer from 0 to 4294967295"),
    ("--seed", str(2**32), "error: --seed must be an integer from 0 to 4294967295"),
    ("--ctx", "cpu:x", "error: bad --ctx 'cpu:x': device ids must be non-negative integers"),
    ("--ctx", "gpu:abc", "device ids must be non-negative integers"),
    ("--ctx", "cpu:-1", "device ids must be non-negative integers"),
    # MXNet's C++ CHECK on DMLC_NUM_WORKER, with its traceback, once the data had been read
    ("--kvstore", "dist_sync", "--kvstore dist_sync trains in an MXNet parameter-server cluster, and this process is in none"),
])
def test_bad_settings_are_refused_up_front(tmp_path, flag, value, why):
    from conftest import cli_in_process

    # (the refusals are the command line's checks: asked in this process, but for --lr's, and --kvstore dist_sync's,
    # which MXNet's C++ CHECK once ended with its traceback: their processes are run)
    run = run_cli if flag in ("--lr", "--kvstore") else cli_in_process
    r = run("train", "--train", tmp_path / "missing.csv", "--output", tmp_path / "out", flag, value, "--no-progress")
    assert_error(r, why)
    assert os.listdir(tmp_path) == []


def test_bad_ctx_for_predict(bundle):
    r = cli_in_process("predict", "--model", bundle, "--ctx", "cpu:x", input="x\n")  # (the process: --lr's, above)
    assert_error(r, "error: bad --ctx 'cpu:x': device ids")


def test_divergence_stops_training_and_saves_nothing(tmp_path, data, tmpdir_env):
    tmpdir, env = tmpdir_env
    r = run_cli("train", "--train", data["train"], "--output", tmp_path / "out", "--checkpoint-dir", tmp_path / "ckpt",
                "--lr", "1e30", "--optimizer", "sgd", "--epochs", "2", "--batch-size", "64", "--emsize", "4",
                "--no-progress", env=env)
    assert_error(r, "training diverged")  # (named as the command line sets them: --lr, not lr)
    assert "at epoch 1" in r.stderr and "(--lr 1e+30, --optimizer sgd); try a smaller --lr\n" in r.stderr
    assert not (tmp_path / "out").exists() and listing(tmp_path / "ckpt") == {} and os.listdir(tmpdir) == []


def test_empty_vocabulary_is_refused(tmp_path, data):
    # (in this process: a data refusal's process is test_data_of_labels_alone_is_named_as_such_not_told_to_lower_...'s)
    r = cli_in_process("train", "--train", data["train"], "--output", tmp_path / "out", *TINY, "--min-count", "100000")
    assert_error(r, "empty vocabulary: no word occurs at least 100000 times in the training data (--min-count 100000), "
                    "so every document would get the same prediction; lower --min-count")  # (not min_count: no flag)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content", ["__label__1\n__label__2\n__label__1\n", '"1",""\n"2",""\n'])
def test_data_of_labels_alone_is_named_as_such_not_told_to_lower_min_count(tmp_path, content):
    """A file of labels alone (no text on any line) was 'no word occurs at least min_count=1 times ...; lower
    min_count', advice that cannot be followed."""
    from conftest import cli_in_process

    (tmp_path / "labels.txt").write_text(content)
    run = run_cli if content.startswith("__label__") else cli_in_process  # (the CSV's line: in this process)
    r = run("train", "--train", tmp_path / "labels.txt", "--output", tmp_path / "out", *TINY)
    assert_error(r, "every document's text is empty")
    assert "min-count" not in r.stderr and "min_count" not in r.stderr and not (tmp_path / "out").exists()


def test_epoch_lines_are_strict_json_without_validation(tmp_path, data):
    # (the lines train prints, in this process: a training run's process is the module's bundle's)
    r = cli_in_process("train", "--train", data["train"], "--output", tmp_path / "out", *TINY, "--seed",
                       str(2**32 - 1))  # largest seed
    assert r.returncode == 0, r.stderr

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")
    rows = [json.loads(line, parse_constant=refuse) for line in r.stdout.splitlines()]
    assert len(rows) == 1 and rows[0]["val_loss"] is None and rows[0]["val_accuracy"] is None
    assert isinstance(rows[0]["train_loss"], float)


# ---------------------------------------------------------------- bundles that are damaged or not bundles


def test_bundle_with_another_runs_params_or_truncated_params(tmp_path, data, bundle):
    import mxnet as mx

    broken = copy_bundle(bundle, tmp_path / "broken")
    config = json.loads((broken / "config.json").read_text())
    params = broken / config["files"]["model.params"]["object"]
    size = params.stat().st_size
    other = {name: value * 2 + 1 for name, value in mx.nd.load(str(params)).items()}  # another run: same shapes
    mx.nd.save(str(params), other)
    assert params.stat().st_size == size
    assert_error(run_cli("predict", "--model", broken, input="x\n"), "model.params does not match its checksum")
    params.write_bytes(params.read_bytes()[:1000])
    from conftest import cli_in_process  # (the second damage's line: in this process)

    assert_error(cli_in_process("evaluate", "--model", broken, "--data", data["test"]), "model.params is truncated")


@pytest.mark.parametrize("labels, why", [(None, "has no list of labels"), (["1"], "at least 2 distinct labels")])
def test_bundle_config_with_bad_labels(tmp_path, bundle, labels, why):
    broken = copy_bundle(bundle, tmp_path / "broken")
    config = json.loads((broken / "config.json").read_text())
    if labels is None:
        del config["labels"]
    else:
        config["labels"] = labels
    (broken / "config.json").write_text(json.dumps(config))
    # (in this process: a damaged bundle's process is test_bundle_with_another_runs_params_or_truncated_params's)
    assert_error(cli_in_process("predict", "--model", broken, input="x\n"), why)


def test_predict_stdin_that_is_not_utf8(bundle, tmpdir_env):
    tmpdir, env = tmpdir_env
    r = subprocess.run([sys.executable, "-m", "fasttext_lib", "predict", "--model", str(bundle)], input=b"ok\ncaf\xe9\n",
                       capture_output=True, env=dict(os.environ, PYTHONPATH=ROOT, **env), timeout=300)
    r.stdout, r.stderr = r.stdout.decode(), r.stderr.decode()
    assert_error(r, "stdin:2: not UTF-8 text (byte 0xe9 at column 4;")
    assert r.stdout == "" and os.listdir(tmpdir) == []  # stdin's copy in TMPDIR is unlinked


def test_predict_checks_a_whole_file_before_answering(tmp_path, bundle):
    """predict streams its input (it read all of it into memory, three copies), yet a bad byte on the last line
    of a file still gives no predictions at all: every line is checked first."""
    from conftest import cli_in_process

    f = tmp_path / "in.txt"
    f.write_bytes(b"great food\n" * 9000 + b"caf\xe9\n")
    r = cli_in_process("predict", "--model", bundle, "--input", f)
    assert_error(r, f"{f}:9001: not UTF-8 text (byte 0xe9 at column 4;")
    assert r.stdout == ""


def test_predict_reads_a_pipe_stdin_and_compressed_files_alike(tmp_path, bundle):
    """A pipe cannot be read twice: it is copied to TMPDIR as it is checked. gzip input is read directly."""
    import gzip
    import threading

    from conftest import cli_in_process

    text = "".join(f"review {i} great food\r\n" if i % 3 else f"review {i} awful\n" for i in range(5000)).encode()
    plain, packed, fifo = tmp_path / "in.txt", tmp_path / "in.txt.gz", tmp_path / "fifo"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text))
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as w:
            w.write(text)

    feeder = threading.Thread(target=feed)
    feeder.start()
    answers = {"file": cli_in_process("predict", "--model", bundle, "--input", plain),
               "pipe": cli_in_process("predict", "--model", bundle, "--input", fifo),
               "gzip": cli_in_process("predict", "--model", bundle, "--input", packed),
               "stdin": cli_in_process("predict", "--model", bundle, input=text.decode())}
    feeder.join()
    assert all(r.returncode == 0 for r in answers.values()), {k: r.stderr for k, r in answers.items()}
    assert len(answers["file"].stdout.splitlines()) == 5000
    assert {k: r.stdout for k, r in answers.items()} == {k: answers["file"].stdout for k in answers}


def test_predict_input_whose_lines_end_in_a_lone_carriage_return_is_refused_not_answered_once(tmp_path, bundle):
    """Reviews saved with lone \\r line ends (Excel's "CSV (Macintosh)", classic Mac OS) are one line: predict
    answered the three reviews with one answer, exit 0. Now: one error line that says how to convert them."""
    import gzip

    from conftest import cli_in_process

    text = "great food\rawful service\rwould go again\r"
    packed = tmp_path / "mac.txt.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    for r in (cli_in_process("predict", "--model", bundle, "--input", packed),
              cli_in_process("predict", "--model", bundle, input=text)):
        assert_error(r, ":1: the input is one line with carriage returns inside it")
        assert "lone carriage return" in r.stderr and r.stdout == ""
    r = cli_in_process("predict", "--model", bundle, input=text.replace("\r", "\n"))  # as the advice says
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 3


@pytest.mark.parametrize("command", ["predict", "train"])
def test_input_without_line_breaks_is_one_error_line(tmp_path, bundle, command):
    """/dev/zero (or any input with no line break) was read until memory ran out."""
    args = (["predict", "--model", bundle, "--input", "/dev/zero"] if command == "predict"
            else ["train", "--train", "/dev/zero", "--output", tmp_path / "m", *TINY])
    run = run_cli if command == "predict" else cli_in_process  # one process; train's line in this process
    assert_error(run(*args), "/dev/zero:1: not a text file (contains NUL bytes")
    assert not (tmp_path / "m").exists()


def test_a_line_past_the_bound_is_refused_and_one_at_it_is_read(tmp_path, bundle, monkeypatch):
    """Every reader takes a line whole; one longer than lines.MAX_LINE_BYTES (64 MiB; 1,000 bytes here) is
    refused at its line number, in training data and predict's input alike."""
    from conftest import cli_in_process
    from fasttext_lib import data as data_module, lines
    from fasttext_lib.errors import FastTextError

    monkeypatch.setattr(lines, "MAX_LINE_BYTES", 1000)
    at_bound, past = b"__label__1 " + b"a" * 988 + b"\n", b"__label__2 " + b"b" * 990
    ok, bad = tmp_path / "ok.txt", tmp_path / "bad.txt"
    ok.write_bytes(at_bound + b"__label__2 x\n")
    bad.write_bytes(at_bound + past)
    assert len(at_bound) == 1000 and [label for label, _ in data_module.iter_examples(str(ok))] == ["1", "2"]
    with pytest.raises(FastTextError, match=r"bad\.txt:2: line longer than 0 MiB"):
        list(data_module.iter_examples(str(bad)))
    r = cli_in_process("predict", "--model", bundle, "--input", bad)
    assert_error(r, f"{bad}:2: line longer than")
    assert r.stdout == ""


def test_full_tmpdir_while_copying_stdin_is_one_line(tmpfs, bundle):
    tmpdir = tmpfs("512k")  # room for the bundle's copy while it loads (~370 kB), not for stdin's (2.2 MB)
    r = subprocess.run([sys.executable, "-m", "fasttext_lib", "predict", "--model", str(bundle)],
                       input=b"great food\n" * 200000, capture_output=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT, TMPDIR=str(tmpdir)))
    r.stdout, r.stderr = r.stdout.decode(), r.stderr.decode()
    assert_error(r, f"no room for temporary files in {tmpdir} (No space left on device)")
    assert r.stdout == "" and os.listdir(tmpdir) == []


def test_full_tmpdir_while_keeping_the_training_token_ids_is_one_line(tmpfs, data, tmp_path):
    """README: a TMPDIR that cannot hold the training data's token ids (read_counted's temporary file) is one
    error line naming TMPDIR, before anything is written: the ids of 300 reviews (~30 kB) on a 16 kB tmpfs."""
    tmpdir = tmpfs("16k")
    out = tmp_path / "model"
    r = subprocess.run([sys.executable, "-m", "fasttext_lib", "train", "--train", str(data["train"]), "--output",
                        str(out), *TINY], capture_output=True, timeout=300, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT, TMPDIR=str(tmpdir)))
    assert_error(r, f"cannot keep the training data's token ids in a temporary file in {tmpdir} "
                    f"(No space left on device); set TMPDIR")
    assert not out.exists() and os.listdir(tmpdir) == []


def test_a_tmpdir_python_passed_over_is_named_in_the_error(tmp_path, bundle, monkeypatch):
    """TMPDIR naming a folder not made yet (a typo): Python quietly uses the next of its candidates (/tmp), and a full
    /tmp said 'no room for temporary files in /tmp ...; set TMPDIR to a directory with more room', as if the user's
    TMPDIR were in use (seen for real under ``unshare -m`` with a 64 kB /tmp). Here the next candidate is a folder of
    this test's and the spool of stdin stops at a file-size limit (1 MB of the 2.2 MB)."""
    import resource
    import tempfile

    from conftest import cli_in_process

    missing, fallback = tmp_path / "big" / "tmp", tmp_path / "fallback"
    fallback.mkdir()
    monkeypatch.setenv("TMPDIR", str(missing))
    monkeypatch.setattr(tempfile, "_candidate_tempdir_list", lambda: [str(missing), str(fallback)])
    monkeypatch.setattr(tempfile, "tempdir", None)  # Python's cached choice
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, hard))
    try:
        r = cli_in_process("predict", "--model", bundle, input=b"great food\n" * 200000)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert r.returncode == 2 and r.stderr.startswith(
        f"error: cannot write a temporary file in {fallback} (TMPDIR {missing} is not a writable directory, so Python "
        f"uses {fallback} instead): File too large"), r.stderr
    assert os.listdir(fallback) == []


def test_no_writable_directory_for_temporary_files_is_one_error_line(tmp_path, data, bundle, monkeypatch):
    """A container whose file systems are read-only and TMPDIR naming a folder that is not there: Python finds no
    directory for temporary files (its candidates: $TMPDIR, /tmp, /var/tmp, /usr/tmp, the current directory), and
    each temporary file raised FileNotFoundError 'No usable temporary directory found': a traceback in train (raised
    again by the message about it) and predict. Seen for real under ``unshare -m`` with read-only mounts over each
    candidate; here Python's list of candidates is this missing folder alone."""
    import tempfile

    from conftest import cli_in_process

    missing = str(tmp_path / "missing")
    monkeypatch.setenv("TMPDIR", missing)
    monkeypatch.setattr(tempfile, "_candidate_tempdir_list", lambda: [missing])
    monkeypatch.setattr(tempfile, "tempdir", None)  # Python's cached choice
    for args in (["train", "--train", data["train"], "--output", tmp_path / "out", *TINY], ["predict", "--model", bundle]):
        r = cli_in_process(*args, input=REVIEWS)
        assert (r.returncode, r.stderr) == (2, f"error: no directory for temporary files can be written (TMPDIR is "
                                               f"{missing!r}; /tmp, /var/tmp, /usr/tmp and the current directory were "
                                               f"tried); set TMPDIR to a writable directory with space\n"), r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["predict", "evaluate", "export-vectors"])
def test_full_tmpdir_while_loading_the_bundle_names_tmpdir(tmpfs, bundle, tmp_path, command):
    """A bundle is copied into TMPDIR while it loads; with no room there the error said
    'cannot copy <file> to <staging path>: No space left on device', without the remedy the rest gives."""
    tmpdir = tmpfs("64k")  # less than the bundle's copy (~370 kB)
    args = {"predict": [], "evaluate": ["--data", str(tmp_path / "d.txt")],
            "export-vectors": ["--output", str(tmp_path / "w.vec")]}[command]
    (tmp_path / "d.txt").write_text("__label__1 great food\n__label__2 cold soup\n")
    r = subprocess.run([sys.executable, "-m", "fasttext_lib", command, "--model", str(bundle), *args],
                       input=b"great food\n", capture_output=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT, TMPDIR=str(tmpdir)))
    r.stdout, r.stderr = r.stdout.decode(), r.stderr.decode()
    assert_error(r, f"no room for temporary files in {tmpdir} (No space left on device); free space there or set TMPDIR")
    assert r.stdout == "" and os.listdir(tmpdir) == [] and not (tmp_path / "w.vec").exists()


def predict_into(bundle, sink, lines, command="predict"):
    """``command`` (predict, or evaluate of ``lines`` labeled reviews) with its stdout the descriptor ``sink``."""
    args, text = ["--data", "/dev/stdin"] if command == "evaluate" else [], "great food\n"
    if command == "evaluate":
        text = "__label__1 great food\n__label__2 cold soup\n"
    try:
        r = subprocess.run([sys.executable, "-m", "fasttext_lib", command, "--model", str(bundle), *args],
                           input=(text * lines).encode(), stdout=sink, stderr=subprocess.PIPE,
                           env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)
    finally:
        os.close(sink)
    r.stdout, r.stderr = "", r.stderr.decode()
    return r


@pytest.mark.parametrize("lines", [2, 20000], ids=["written at exit", "written as predicted"])
def test_stdout_on_a_full_disk_is_one_error_line(bundle, lines):
    """``predict ... > /mnt/full/out``: the failed write to stdout (in the loop, or in the flush of what was
    buffered) was a traceback, and a second one at exit."""
    r = predict_into(bundle, os.open("/dev/full", os.O_WRONLY), lines)
    assert_error(r, "cannot write to standard output: No space left on device")
    assert "Exception ignored" not in r.stderr, r.stderr


@pytest.mark.parametrize("command", ["predict", "evaluate"])
@pytest.mark.parametrize("lines", [2, 20000], ids=["written at exit", "written as predicted"])
def test_a_closed_pipe_ends_predict_quietly_as_it_ends_unix_tools(bundle, lines, command):
    """``predict ... | head -1``: once head has its line, the rest has no reader. That ended in
    ``error: cannot write to standard output: Broken pipe`` (exit 2) on the terminal of every such pipeline;
    now it ends as ``cat`` or ``grep`` do there, without a word, in the status SIGPIPE gives (141)."""
    reader, sink = os.pipe()
    os.close(reader)  # the reader is gone, as `head -1` is once it has its line
    r = predict_into(bundle, sink, lines, command)
    assert (r.returncode, r.stderr) == (141, "")


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_stdout_closed_at_start_is_one_error_line_before_any_work(bundle, command):
    """``predict ... >&-``: Python's sys.stdout is None, print() wrote every answer nowhere, and the flush at the
    end was an AttributeError traceback (exit 1)."""
    text = "__label__1 great food\n" if command == "evaluate" else "great food\n"
    r = subprocess.run([sys.executable, "-m", "fasttext_lib", command, "--model", str(bundle),
                        *(["--data", "/dev/stdin"] if command == "evaluate" else [])], input=text.encode(),
                       stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=ROOT), timeout=300,
                       preexec_fn=lambda: os.close(1))
    r.stdout, r.stderr = "", r.stderr.decode()
    assert_error(r, f"standard output is closed (>&-): {command}'s answers would go nowhere")


def test_stdout_closed_at_start_leaves_other_commands_done_without_a_traceback(tmp_path):
    """``sample --output DIR >&-``: the files were written, then the flush of the closed stdout was a traceback."""
    r = subprocess.run([sys.executable, "-m", "fasttext_lib", "sample", "--output", str(tmp_path)],
                       stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=ROOT), timeout=300,
                       preexec_fn=lambda: os.close(1))
    assert (r.returncode, r.stderr.decode()) == (0, "")
    assert sorted(os.listdir(tmp_path)) == ["test.csv", "train.csv"]


@pytest.mark.parametrize("environment", [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}],
                         ids=["PYTHONIOENCODING=ascii", "LC_ALL=C PYTHONUTF8=0"])
def test_class_names_an_ascii_stdout_cannot_hold_are_shown_escaped(tmp_path, data, environment):
    """A bundle whose classes are named "très mal" / "très bien", evaluated and queried where stdout is ASCII:
    evaluate's tables were a UnicodeEncodeError traceback (exit 1) after the matrix was computed."""
    model = tmp_path / "model"
    r = cli_in_process("train", "--train", data["train"], "--output", model, "--label-names", "1=très mal,2=très bien",
                       *TINY)  # (the bundle they read, trained in this process: the ASCII processes are below)
    assert r.returncode == 0, r.stderr
    env = dict(os.environ, PYTHONPATH=ROOT, **environment)
    for args, stdin in ((["evaluate", "--data", str(data["test"])], None), (["predict"], "très bon ☺\n")):
        r = subprocess.run([sys.executable, "-m", "fasttext_lib", *args, "--model", str(model)], env=env,
                           input=stdin.encode() if stdin else None, capture_output=True, timeout=300)
        out, err = r.stdout.decode("ascii"), r.stderr.decode("ascii")  # nothing else came out
        assert r.returncode == 0 and "Traceback" not in err, err
        assert ("tr\\xe8s bien" in out) if args[0] == "evaluate" else ('"tr\\u00e8s bien"' in out), out
    assert json.loads(out)["label"] in ("très mal", "très bien")


# ---------------------------------------------------------------- S3: the real cause, in one line


@pytest.fixture
def s3_model(s3_bucket, bundle):
    from fasttext_lib.storage import publish, read_manifest

    config = read_manifest(str(bundle), "config.json")
    files = {name: str(bundle / entry["object"]) for name, entry in config["files"].items()}
    return publish(f"{s3_bucket}/models/run", files, "config.json",
                   {k: v for k, v in config.items() if k not in ("files", "written_by")})


def no_credentials(tmp_path):
    return {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
            "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_EC2_METADATA_DISABLED": "true"}


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_reading_a_model_from_s3_names_the_real_cause(tmp_path, s3_bucket, s3_model, data, command):
    from conftest import cli_in_process_with

    def run(model, env=None, process=False):
        if process:
            return run_cli("predict", "--model", model, input="x\n", env=env)
        # (the answers in this process: the causes are the library's, whatever the command; predict's first a process)
        if command == "predict":
            return cli_in_process_with(env, "predict", "--model", model, input="x\n")
        return cli_in_process_with(env, "evaluate", "--model", model, "--data", data["test"])

    assert_error(run(s3_model, env=no_credentials(tmp_path), process=command == "predict"), "no AWS credentials")
    down = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}", "AWS_MAX_ATTEMPTS": "1"}
    assert_error(run(s3_model, env=down), "cannot reach the S3 endpoint")
    assert_error(run("s3://no-such-bucket-hostile/models/run"), "S3 bucket does not exist: no-such-bucket-hostile")
    assert_error(run(f"{s3_bucket}/models/nothing-here"), "not a model bundle")


@pytest.fixture
def proxy(s3_server):
    with FaultProxy(s3_server) as p:
        yield p


def test_get_refused_after_head_is_one_line(s3_model, proxy):
    proxy.fail("GET", r"/model-", "403")
    # (in this process: an S3 read's process is test_reading_a_model_from_s3_names_the_real_cause[predict]'s)
    r = cli_in_process_with({"AWS_ENDPOINT_URL": proxy.endpoint, "AWS_MAX_ATTEMPTS": "2"}, "predict", "--model",
                            s3_model, input="x\n")
    assert_error(r, "access denied")



def test_expired_credentials_are_one_line_that_says_so_naming_the_data(tmp_path, s3_bucket, data, proxy):
    """S3 answers expired session credentials with 400 ExpiredToken, without a body to a HEAD (the first request
    of every read): the line was "failed: 400 (HTTP 400) Bad Request"."""
    bucket = s3_bucket[len("s3://"):]
    boto3.client("s3").upload_file(str(data["train"]), bucket, "data/train.csv")
    for method in ("HEAD", "GET", "PUT", "POST"):
        proxy.fail(method, r".", "expired")
    r = run_cli("train", "--train", f"{s3_bucket}/data/train.csv", "--output", tmp_path / "out", *TINY,
                env={"AWS_ENDPOINT_URL": proxy.endpoint, "AWS_MAX_ATTEMPTS": "1"})
    assert_error(r, f"the AWS credentials were refused for {s3_bucket}/data/train.csv (ExpiredToken: they have "
                    f"expired or are invalid): renew them")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name, action", [("/config.json", "cut"), ("/model-", "cut"), ("/vocab-", "cut"),
                                          ("/model-", "close")])  # close: the body short of its length, no reset
def test_a_bundle_file_whose_download_is_cut_midway_is_resumed(s3_model, proxy, monkeypatch, name, action):
    """The connection reset after half an object's body: botocore retries a request, not a body, so a single
    such fault failed predict / evaluate (and a resume from S3 checkpoints). The rest is asked for again."""
    from conftest import cli_in_process

    expected = predictions_json(s3_model)  # straight from the S3 server
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
    proxy.fail("GET", name, action, nth=1)
    r = cli_in_process("predict", "--model", s3_model, input=REVIEWS)
    assert r.returncode == 0, r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == expected
    gets = [path for method, path, _ in proxy.log if method == "GET" and name in path]
    assert len(gets) == 2  # the cut GET and the one for the rest


@pytest.mark.usefixtures("no_backoff_between_botocore_retries")  # (the retries stay; botocore's sleeps go)
def test_a_bundle_download_cut_every_time_is_one_error_line(s3_model, proxy):
    proxy.fail("GET", r"/model-", "cut")
    # (in this process: an S3 read's process is test_reading_a_model_from_s3_names_the_real_cause[predict]'s)
    r = cli_in_process_with({"AWS_ENDPOINT_URL": proxy.endpoint}, "predict", "--model", s3_model, input="x\n")
    assert_error(r, "failed (connection lost or timed out)")
    assert r.stdout == ""


def test_training_data_whose_download_is_cut_midway_is_resumed(tmp_path, s3_bucket, proxy, tmpdir_env, monkeypatch):
    import tempfile

    import smart_open.s3

    from conftest import cli_in_process

    tmpdir, env = tmpdir_env
    big = make_data(tmp_path / "big.csv", 5000, 3)
    boto3.client("s3").upload_file(str(big), s3_bucket[len("s3://"):].split("/")[0], "data/big.csv")
    # (the runs in this process, its temporary files in tmpdir: the reads and what they trained are under test; a run
    # reading S3 data as a process is test_expired_credentials_are_one_line_that_says_so_naming_the_data's)
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    proxy.fail("GET", r"/data/big\.csv", "cut", nth=1)
    with monkeypatch.context() as m:
        m.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        r = cli_in_process("train", "--train", f"{s3_bucket}/data/big.csv", "--output", tmp_path / "out", *TINY)
    assert r.returncode == 0, r.stderr
    assert len([path for method, path, _ in proxy.log if method == "GET" and "big.csv" in path]) >= 2  # cut, asked again
    # every row was read, once: the seeded run equals one on the local file
    assert cli_in_process("train", "--train", big, "--output", tmp_path / "local", *TINY).returncode == 0
    assert predictions_json(tmp_path / "out") == predictions_json(tmp_path / "local")
    proxy.clear()
    proxy.fail("GET", r"/data/big\.csv", "cut")
    # every read cut: smart_open gives up after its retries (31 s of backoff, skipped here), in one error line
    monkeypatch.setattr(smart_open.s3.time, "sleep", lambda seconds: None)
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
    r = cli_in_process("train", "--train", f"{s3_bucket}/data/big.csv", "--output", tmp_path / "out2", *TINY)
    assert_error(r, "big.csv failed: the connection broke off mid-read, and 5 attempts to go on from there failed too")
    assert "_SeekableReader" not in r.stderr  # smart_open's reader's repr was the line's middle
    assert not (tmp_path / "out2").exists() and os.listdir(tmpdir) == []


@pytest.mark.parametrize("pattern, action", [(r"/model-", "500"), (r"/config\.json$", "500"),
                                             (r"/model-", "503")])  # 503 SlowDown: S3 throttling, retried, then given up
@pytest.mark.usefixtures("no_backoff_between_botocore_retries")  # (in-process runs: the retries stay, their sleeps go)
def test_failed_s3_upload_keeps_the_old_bundle(tmp_path, data, s3_model, proxy, pattern, action, tmpdir_env):
    tmpdir, env = tmpdir_env
    old, before = predictions(s3_model), s3_keys(s3_model)
    proxy.fail("PUT", pattern, action)
    args = ("train", "--train", data["train"], "--output", s3_model, *TINY, "--seed", "11", "--overwrite")
    s3_env = {"AWS_ENDPOINT_URL": proxy.endpoint, "AWS_MAX_ATTEMPTS": "2"}
    if (pattern, action) == (r"/model-", "500"):  # one case a process; the others' answers in this process
        r = run_cli(*args, env=dict(env, **s3_env))
    else:
        r = in_process_with_tmpdir(tmpdir, *args, env=s3_env)
    assert_error(r, {"500": "HTTP 500", "503": "SlowDown (HTTP 503) Please reduce your request rate."}[action])
    assert any(m == "PUT" for m, _, _ in proxy.log)  # it got as far as uploading
    proxy.clear()
    assert s3_keys(s3_model) == before and predictions(s3_model) == old
    assert os.listdir(tmpdir) == []


def test_cli_never_imports_the_sagemaker_sdk(tmp_path, data, s3_bucket, s3_model):
    """The SDK installs a rich traceback handler that prints on stdout: no CLI path may import it. (The commands run
    one after the other in one fresh process, what it loaded said after each: one MXNet import, not three.)"""
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {ROOT!r})
        from fasttext_lib.cli import main
        for command in json.loads(sys.argv[1]):
            try:
                main(command)
            except SystemExit:
                pass
            loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("sagemaker", "sagemaker_core", "rich"))
            sys.stderr.write("LOADED " + ",".join(loaded) + "\\n")
    """))
    s3_data = f"{s3_bucket}/data/train.csv"
    boto3.client("s3").upload_file(str(data["train"]), s3_bucket[len("s3://"):], "data/train.csv")
    commands = [["train", "--train", s3_data, "--output", f"{s3_bucket}/models/new", *TINY],
                ["train", "--train", s3_data, "--output", "s3://no-such-bucket-hostile/m", *TINY],
                ["evaluate", "--model", s3_model, "--data", s3_data]]
    r = subprocess.run([sys.executable, str(script), json.dumps([list(map(str, c)) for c in commands])],
                       capture_output=True, text=True, timeout=300)
    said = [line for line in r.stderr.splitlines() if line.startswith("LOADED")]
    assert said == ["LOADED "] * len(commands), r.stderr[-2000:]


# ---------------------------------------------------------------- disk full


def test_disk_full_while_writing_a_bundle_keeps_the_old_one(tmp_path, tmpfs, data, bundle, tmpdir_env):
    tmpdir, env = tmpdir_env
    disk = tmpfs("1m")
    out = copy_bundle(bundle, disk / "model")  # (the old bundle: the module's, trained by the same command)
    old, before = predictions(out), listing(out)
    r = run_cli("train", "--train", data["train"], "--output", out, *tiny("--emsize", "100"), "--overwrite", env=env)
    assert_error(r, "No space left on device")
    assert str(out) in r.stderr
    assert listing(out) == before and predictions(out) == old and os.listdir(tmpdir) == []


def test_disk_full_while_writing_a_checkpoint_keeps_the_previous_one(tmp_path, tmpfs, data, tmpdir_env):
    from fasttext_lib import storage

    tmpdir, env = tmpdir_env
    disk = tmpfs("1m")  # one checkpoint (~0.6 MB: parameters + adam state) fits, two do not
    # (in this process: a full disk's process is test_disk_full_while_writing_a_bundle_keeps_the_old_one's)
    r = in_process_with_tmpdir(tmpdir, "train", "--train", data["train"], "--output", tmp_path / "out",
                               "--checkpoint-dir", disk / "ckpt", *tiny("--epochs", "3", "--emsize", "6"),
                               "--optimizer", "adam")
    assert_error(r, "No space left on device")
    assert [json.loads(line)["epoch"] for line in r.stdout.splitlines()] == [1]
    assert os.listdir(disk / "ckpt") == ["epoch-0001"]
    manifest, _ = storage.read_set(str(disk / "ckpt" / "epoch-0001"), "checkpoint.json", ["model.params", "optimizer.npz"],
                                   str(tmp_path))
    assert manifest["epoch"] == 1
    assert not (tmp_path / "out").exists() and os.listdir(tmpdir) == []


def test_disk_full_while_writing_the_sample_keeps_both_old_files(tmpfs):
    """``sample --overwrite`` onto a disk with room for train.csv (295 kB) but not test.csv as well: it
    replaced train.csv, then failed on test.csv, leaving the new train.csv beside the user's old test.csv."""
    disk = tmpfs("340k")
    (disk / "train.csv").write_text('"1","my own training data"\n')
    (disk / "test.csv").write_text('"1","my own test data"\n')
    before = {name: (disk / name).read_bytes() for name in ("train.csv", "test.csv")}
    r = cli_in_process("sample", "--output", disk, "--overwrite")  # (a full disk's process: the bundle's, above)
    assert_error(r, "No space left on device")
    assert sorted(os.listdir(disk)) == ["test.csv", "train.csv"]
    assert {name: (disk / name).read_bytes() for name in before} == before


@pytest.mark.parametrize("what", [["--compact", "none"], ["--compact", "float32"], ["--checkpoint-dir", "ckpt"]],
                         ids=["full table", "compact", "checkpoint"])
def test_full_tmpdir_while_staging_a_bundle_or_checkpoint_is_one_line(tmp_path, tmpfs, data, bundle, what):
    """Bundles and checkpoints are staged in TMPDIR before they are published: a TMPDIR too full for them was
    a traceback (MXNet's 'FileStream.Write incomplete' for the parameters, an OSError for the rest)."""
    tmpdir = tmpfs("256k")  # holds the token ids of the data, not the staged parameters (~1 MB)
    out = copy_bundle(bundle, tmp_path / "model")
    old, before = predictions(out), listing(out)
    what = [str(tmp_path / w) if w == "ckpt" else w for w in what]
    args = ("train", "--train", data["train"], "--output", out, *tiny("--emsize", "100"), "--overwrite", *what)
    if what == ["--compact", "none"]:  # the full table's a process; the others' answers in this process
        r = run_cli(*args, env={"TMPDIR": str(tmpdir)})
    else:
        r = in_process_with_tmpdir(tmpdir, *args)
    assert_error(r, f"no room for temporary files in {tmpdir} (No space left on device)")
    assert listing(out) == before and predictions(out) == old and os.listdir(tmpdir) == []
    assert not (tmp_path / "ckpt").exists() or os.listdir(tmp_path / "ckpt") == []



def file_size_limit(limit):
    """A preexec_fn giving the child a file-size limit (``ulimit -f``): a write past it fails with EFBIG
    (Python ignores SIGXFSZ), as a quota or a batch system's limit does."""
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.parametrize("what", [["--compact", "none"], ["--checkpoint-dir", "ckpt"]], ids=["bundle", "checkpoint"])
def test_a_file_size_limit_while_writing_the_parameters_is_one_line(tmp_path, data, bundle, tmpdir_env, what):
    """Under ``ulimit -f`` (1 MB here; the parameters take 3 MB) MXNet's 'Write incomplete' was taken for an
    I/O error (EIO, as the disk was not full): an OSError traceback, where the bundle's other files said
    'File too large' in one line."""
    tmpdir, env = tmpdir_env
    out = copy_bundle(bundle, tmp_path / "model")
    old, before = predictions(out), listing(out)
    what = [str(tmp_path / w) if w == "ckpt" else w for w in what]
    r = subprocess.run([sys.executable, "-m", "fasttext_lib", "train", "--train", str(data["train"]), "--output", str(out),
                        *tiny("--emsize", "100"), "--overwrite", *what], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT, **env), preexec_fn=file_size_limit(1 << 20))
    assert_error(r, "File too large")
    assert "ulimit -f" in r.stderr
    assert listing(out) == before and predictions(out) == old and os.listdir(tmpdir) == []
    assert not (tmp_path / "ckpt").exists() or os.listdir(tmp_path / "ckpt") == []


def memory_limit(limit):
    """A preexec_fn giving the child at most ``limit`` bytes of address space (``ulimit -v``): an allocation past
    it fails, as it does on a machine with less memory than the run asks for."""
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_an_embedding_table_larger_than_memory_is_one_error_line(tmp_path, data, tmpdir_env):
    """--emsize 200000 (a 6 GB table: within MXNet's tensor size, beyond this machine's memory) was MXNet's
    'Failed to allocate CPU Memory' traceback. Now one line that names the table and what to lower."""
    tmpdir, env = tmpdir_env
    r = subprocess.run([sys.executable, "-m", "fasttext_lib", "train", "--train", str(data["train"]), "--output",
                        str(tmp_path / "out"), *tiny("--emsize", "200000")], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT, **env), preexec_fn=memory_limit(4 << 30))
    assert_error(r, "out of memory")
    assert "emsize 200000" in r.stderr and "lower --emsize or --buckets" in r.stderr
    assert not (tmp_path / "out").exists() and os.listdir(tmpdir) == []


def test_a_ulimit_just_above_the_table_is_one_error_line(tmp_path, data, tmpdir_env):
    """Under a ``ulimit -v`` with room for a bigram table (~2M rows x 100) but not for the ~60 MB the run maps after
    it (thread stacks, per-row arrays), MXNet crashed at its first steps: a segfault, or 'terminate called' when a
    thread found no stack (exit 134, no line). The run's address space at the table is read from a first refusal
    (a 1.0 GB limit: "may map N MB more"); the second run's limit leaves the table 24 MB of headroom, inside that
    window."""
    import re

    tmpdir, env = tmpdir_env
    args = [sys.executable, "-m", "fasttext_lib", "train", "--train", str(data["train"]), "--output",
            str(tmp_path / "out"), *tiny("--emsize", "100"), "--ngrams", "2"]
    run = lambda limit: subprocess.run(args, capture_output=True, text=True, timeout=300,  # noqa: E731
                                       env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="2", **env),
                                       preexec_fn=memory_limit(limit))
    first = run(1000 << 20)
    assert_error(first, "out of memory for the embedding table")
    rows, left = re.search(r"([\d,]+) rows x emsize 100 need about [\d,]+ MB more address space, and this process "
                           r"may map ([\d,]+) MB more \(ulimit -v\)", first.stderr).groups()
    at_the_table = (1000 << 20) - (int(left.replace(",", "")) << 20)
    table = int(rows.replace(",", "")) * 100 * 4
    r = run(at_the_table + table + (24 << 20))
    assert_error(r, "out of memory for the embedding table")
    assert "ulimit -v" in r.stderr and "lower --emsize or --buckets" in r.stderr
    assert not (tmp_path / "out").exists() and os.listdir(tmpdir) == []


def fake_memory(tmp_path, monkeypatch, available, cgroup=None):
    """/proc/meminfo saying ``available`` bytes are available (no swap), and a cgroup v1 memory controller of
    ``(limit, usage, inactive page cache)`` (None: no container limit)."""
    from fasttext_lib import devices

    meminfo = tmp_path / "meminfo"
    meminfo.write_text(f"MemTotal: 99999999 kB\nMemAvailable: {available // 1024} kB\nSwapFree: 0 kB\n")
    monkeypatch.setattr(devices, "_MEMINFO", str(meminfo))
    files = []
    if cgroup:
        for name, text in zip(("limit", "usage", "stat"), (cgroup[0], cgroup[1], f"cache 1\ntotal_inactive_file {cgroup[2]}\n")):
            (tmp_path / name).write_text(f"{text}\n")
            files.append(str(tmp_path / name))
        files.append("total_inactive_file")
    monkeypatch.setattr(devices, "_CGROUP_MEMORY", (tuple(files),) if files else ())
    return devices.available_memory()


def test_an_embedding_table_larger_than_the_memory_available_is_refused_before_it_is_filled(tmp_path, data, monkeypatch):
    """A table the kernel hands out (overcommit) but cannot back: every row is written at once, and on a machine with
    less memory than that (a 4 GB notebook instance, bigrams at emsize 500) the OOM killer ended the run with no line.
    Here /proc/meminfo says 100 MB are available; the table takes ~2,000,000 x 16 x 4 = 128 MB."""
    import re

    from conftest import cli_in_process

    assert fake_memory(tmp_path, monkeypatch, 100 << 20) == 100 << 20
    r = cli_in_process("train", "--train", data["train"], "--output", tmp_path / "out", *tiny("--emsize", "16"),
                       "--ngrams", "2")
    assert r.returncode == 2 and re.fullmatch(r"error: out of memory for the embedding table: 2,00\d,\d{3} rows x emsize 16 "
                                              r"= 0.1 GiB of float32, more than the 0.1 GiB of memory available here; "
                                              r"lower --emsize or --buckets\n", r.stderr), r.stderr
    assert not (tmp_path / "out").exists()


def test_adams_moment_tables_count_in_the_memory_check(tmp_path, data, monkeypatch):
    """adam keeps two more tables of the table's size, allocated at its first step: with the table alone counted, a
    run with room for the table but not for three passed the check and was killed by the OOM killer at that step.
    Here 300 MB are available: the ~128 MB table fits, three of it do not."""
    import re

    from conftest import cli_in_process

    assert fake_memory(tmp_path, monkeypatch, 300 << 20) == 300 << 20
    args = ("train", "--train", data["train"], *tiny("--emsize", "16"), "--ngrams", "2")
    r = cli_in_process(*args, "--output", tmp_path / "adam", "--optimizer", "adam")
    assert r.returncode == 2 and re.fullmatch(r"error: out of memory for the embedding table: 2,00\d,\d{3} rows x emsize 16 "
                                              r"= 0.1 GiB of float32, and 2 more of that size for adam's moments \(0.4 GiB "
                                              r"in all\), more than the 0.3 GiB of memory available here; lower --emsize "
                                              r"or --buckets, or use --optimizer sgd\n", r.stderr), r.stderr
    assert not (tmp_path / "adam").exists()
    r = cli_in_process(*args, "--output", tmp_path / "sgd")  # sgd keeps no table of its own: it fits
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("flags, kwargs, as_flags, as_arguments", [  # (each line's end, a regular expression)
    # adam's moments beside a bigram table in 300 MB: what to lower, and the optimizer that keeps none
    (["--optimizer", "adam"], {"optimizer": "adam"}, "lower --emsize or --buckets, or use --optimizer sgd\n",
     "lower emsize or buckets, or use optimizer='sgd'"),
    # a local kvstore's copy of the table on one device: the kvstore that makes none
    (["--kvstore", "local"], {"kvstore": "local"},
     r"lower --emsize or --buckets, or --kvstore auto \(one device: no kvstore, no copy\)\n",
     r"lower emsize or buckets, or kvstore='auto' \(one device: no kvstore, no copy\)"),
    # a parameter-server kvstore outside a cluster (refused before the data is read)
    (["--kvstore", "dist_sync"], {"kvstore": "dist_sync"},
     "--kvstore dist_sync trains in an MXNet parameter-server cluster, .* on one host leave --kvstore auto; .*",
     "kvstore='dist_sync' trains in an MXNet parameter-server cluster, .* on one host leave kvstore='auto'; .*"),
], ids=["adam", "kvstore local", "kvstore dist_sync"])
def test_a_line_refusing_a_runs_memory_or_kvstore_names_the_settings_as_its_user_gives_them(
        tmp_path, data, monkeypatch, flags, kwargs, as_flags, as_arguments):
    """The embedding table's out-of-memory line told the command line to "lower emsize or buckets, or use sgd" (or
    "kvstore auto"), and a dist_* kvstore outside a cluster said "leave kvstore auto": TrainConfig's names and values,
    which it has no flags of. It is told its flags (--emsize, --optimizer sgd, --kvstore auto); a Python caller is
    still told the arguments (emsize, optimizer='sgd', kvstore='auto'). (/proc/meminfo says 300 MB are available: a
    ~128 MB table fits, three of it do not.)"""
    import re

    from conftest import cli_in_process
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.data import read_labeled
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.train import train

    for name in ("DMLC_PS_ROOT_URI", "DMLC_PS_ROOT_PORT", "DMLC_NUM_SERVER", "DMLC_NUM_WORKER"):
        monkeypatch.delenv(name, raising=False)
    fake_memory(tmp_path, monkeypatch, 300 << 20)
    r = cli_in_process("train", "--train", data["train"], "--output", tmp_path / "out", *tiny("--emsize", "16"),
                       "--ngrams", "2", *flags)
    assert r.returncode == 2 and re.fullmatch(f"error: .*; {as_flags}" if as_flags.startswith("lower") else
                                              f"error: {as_flags}\n", r.stderr), r.stderr
    with pytest.raises(FastTextError) as caught:
        train(read_labeled(str(data["train"])), None, TrainConfig(epochs=1, batch_size=64, ngrams=2, emsize=16,
                                                                  ctx="cpu", progress=False, **kwargs))
    assert re.fullmatch(f".*; {as_arguments}" if as_arguments.startswith("lower") else as_arguments,
                        str(caught.value)), caught.value
    assert not (tmp_path / "out").exists()


def test_a_containers_memory_limit_counts_what_is_in_use_but_not_the_page_cache(tmp_path, monkeypatch):
    """Under a 1 GB limit with 900 MB in use, 600 MB of it page cache the kernel can drop: 700 MB are available."""
    assert fake_memory(tmp_path, monkeypatch, 20 << 30, cgroup=(1 << 30, 900 << 20, 600 << 20)) == (1 << 30) - (300 << 20)
    assert fake_memory(tmp_path, monkeypatch, 20 << 30, cgroup=(2**63 - 4096, 900 << 20, 0)) == 20 << 30  # no limit
    assert fake_memory(tmp_path, monkeypatch, 200 << 20, cgroup=(1 << 30, 0, 0)) == 200 << 20  # the machine's is less


def test_memory_running_out_anywhere_is_one_error_line(tmp_path, monkeypatch):
    """Elsewhere (numpy's MemoryError, the native featurizer's, an MXNet allocation inside a step) the same:
    one line, exit 2, not a traceback."""
    from conftest import cli_in_process
    from fasttext_lib import cli

    def allocation_fails(args):
        raise MemoryError("native featurization ran out of memory")

    monkeypatch.setitem(cli.COMMANDS, "sample", allocation_fails)
    r = cli_in_process("sample", "--output", tmp_path)
    assert (r.returncode, r.stderr) == (2, "error: out of memory (native featurization ran out of memory); use a "
                                           "machine with more memory, or less data or smaller settings\n")



@pytest.mark.parametrize("error", ["can't start new thread", "AlignedMallocPitch failed", "std::bad_alloc",
                                   "cudaMalloc retry failed: out of memory"])  # (a GPU's: no GPU here, by its words)
def test_memory_running_out_in_other_words_is_one_error_line(tmp_path, monkeypatch, error):
    """Under ``ulimit -v``, memory also ran out as a thread that could not start (the batch prefetcher's) or as
    MXNet's other words for a failed allocation (mshadow's aligned malloc, C++'s bad_alloc): tracebacks."""
    from conftest import cli_in_process
    from fasttext_lib import cli

    class MXNetError(Exception):  # what MXNet raises, by name (as errors.is_out_of_memory knows it)
        pass

    def allocation_fails(args):
        raise RuntimeError(error) if "thread" in error else MXNetError(f"Check failed: ret == 0 (12 vs. 0) : {error}")

    monkeypatch.setitem(cli.COMMANDS, "sample", allocation_fails)
    r = cli_in_process("sample", "--output", tmp_path)
    said = "error: out of memory or threads (" if "thread" in error else "error: out of memory ("  # (a thread's
    # stack, or no thread left under a container's task limit: the line says so rather than memory alone)
    assert r.returncode == 2 and r.stderr.startswith(said) and error in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize("variable, value, says", [
    ("OMP_NUM_THREADS", "abc", "environment variable OMP_NUM_THREADS='abc' is not a whole number"),  # aborted (134)
    ("MXNET_CPU_WORKER_NTHREADS", "2.0", "MXNET_CPU_WORKER_NTHREADS='2.0' is not a whole number"),  # aborted
    ("MXNET_EXEC_BULK_EXEC_TRAIN", "yes", "MXNET_EXEC_BULK_EXEC_TRAIN='yes' is not true, false, 1 or 0"),  # traceback
    ("MXNET_ENGINE_TYPE", "garbage", "MXNet cannot start (Cannot find Engine garbage)"),  # blamed on the bundle
    ("MXNET_CPU_WORKER_NTHREADS", "0", "MXNet cannot start (Check failed: size > 0"),  # hung after the error line
])
def test_an_environment_mxnet_cannot_run_in_is_one_error_line(tmp_path, data, bundle, tmpdir_env, variable, value, says):
    """MXNet parses its variables itself: a value it cannot read aborted the process ('terminate called after
    throwing an instance of dmlc::ParamError', exit 134, no line of ours), was a traceback, or an error that
    blamed the bundle ('model parameters ... do not match config.json'); a thread count of 0 hung at exit."""
    tmpdir, env = tmpdir_env
    env = dict(env, **{variable: value})
    for args, stdin in ((["train", "--train", data["train"], "--output", tmp_path / "out", *TINY], None),
                        (["predict", "--model", bundle], REVIEWS)):
        try:
            # (a hang's bound: a process importing MXNet on a loaded machine can take more than a minute)
            r = run_cli(*args, env=env, input=stdin, timeout=300)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{args[0]} with {variable}={value} did not end")
        assert_error(r, says)
        assert "Exception ignored" not in r.stderr and "do not match" not in r.stderr, r.stderr
    assert not (tmp_path / "out").exists() and os.listdir(tmpdir) == []


def test_every_value_mxnet_reads_is_let_through():
    """The check refuses only what MXNet cannot parse: spaces around a number and a sign are fine, an empty value is
    MXNet's default, yes/no are case-blind true/false/1/0."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.mxnet_env import check_environment

    for name, value in [("OMP_NUM_THREADS", " 2"), ("OMP_NUM_THREADS", "+4 "), ("OMP_NUM_THREADS", ""),
                        ("MXNET_CPU_WORKER_NTHREADS", "-1"), ("MXNET_MKLDNN_ENABLED", "True"), ("MXNET_ENGINE_INFO", "0"),
                        ("MXNET_TUNING_WEIGHT_SCALE", "0.5"), ("MXNET_USE_NUM_CORES_OPERATOR_TUNING", "99999999999")]:
        check_environment({name: value})
    for name, value in [("OMP_NUM_THREADS", "0x10"), ("OMP_NUM_THREADS", "99999999999"), ("OMP_NUM_THREADS", "4,2"),
                        ("OMP_NUM_THREADS", "\u0664"), ("MXNET_MKLDNN_ENABLED", " 1"), ("MXNET_TUNING_WEIGHT_SCALE", "inf")]:
        with pytest.raises(FastTextError, match=f"environment variable {name}="):
            check_environment({name: value})


def test_a_number_mxnet_reads_with_strtod_is_refused_as_mxnet_refuses_it():
    """MXNet reads its real-number variable (MXNET_TUNING_WEIGHT_SCALE) with strtod, which allows spaces before the
    number but none after it ('Some trailing characters could not be parsed') and no value out of a double's normal
    range (1e400, and 1e-310 too: 'Out of range value'): the check let them through and MXNet aborted (exit 134)."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.mxnet_env import check_environment

    for value in ["\t2", " 1e5", "0", "-0.25", "2.2250738585072014e-308"]:
        check_environment({"MXNET_TUNING_WEIGHT_SCALE": value})
    for value in ["1e5 ", "2\t", "1e400", "-1e400", "1e-310", "1e-400"]:
        with pytest.raises(FastTextError, match="environment variable MXNET_TUNING_WEIGHT_SCALE="):
            check_environment({"MXNET_TUNING_WEIGHT_SCALE": value})


def test_a_memory_limit_too_low_for_mxnet_itself_is_one_error_line(tmp_path, data, tmpdir_env):
    """``ulimit -v`` of 300 MB: MXNet's libraries cannot even be mapped ('libopenblas.so.0: failed to map segment from
    shared object', an OSError traceback from the import), or its engine's threads cannot start (a traceback at exit)."""
    tmpdir, env = tmpdir_env
    r = subprocess.run([sys.executable, "-m", "fasttext_lib", "train", "--train", str(data["train"]), "--output",
                        str(tmp_path / "out"), *TINY], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT, **env), preexec_fn=memory_limit(300 << 20))
    assert_error(r, "(ulimit -v): raise that limit")
    assert "Exception ignored" not in r.stderr
    assert not (tmp_path / "out").exists() and os.listdir(tmpdir) == []

@pytest.mark.parametrize("limit_mb", [350, 500, 600])
def test_a_memory_limit_mxnet_would_crash_under_is_refused_in_one_line_before_it_loads(tmp_path, data, tmpdir_env,
                                                                                        limit_mb):
    """``ulimit -v`` of 350-750 MB: MXNet ran out of address space where no handler reaches, a segfault while
    libmxnet was mapped (350 MB, exit 139), a MemoryError traceback (400), a segfault in training (500, exit 255) or
    an abort when glibc could not load libgcc_s to unwind an exception (600-750, exit 134). Below what it needs it
    is refused before MXNet loads; above, with one malloc arena, a small model trains (760 MB aborted before; it runs
    from 740 here, and 800 leaves room for a machine that needs a little more)."""
    tmpdir, env = tmpdir_env
    run = functools.partial(subprocess.run, capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="2", **env))
    r = run([sys.executable, "-m", "fasttext_lib", "train", "--train", str(data["train"]), "--output",
             str(tmp_path / "out"), *TINY], preexec_fn=memory_limit(limit_mb << 20))
    assert_error(r, f"MXNet needs about 700 MB of address space to train (2 threads), and this process may use "
                    f"{limit_mb} MB at most (ulimit -v): raise that limit")
    assert not (tmp_path / "out").exists() and os.listdir(tmpdir) == []
    r = run([sys.executable, "-m", "fasttext_lib", "train", "--train", str(data["train"]), "--output",
             str(tmp_path / "out"), *TINY], preexec_fn=memory_limit(800 << 20))
    assert r.returncode == 0, r.stderr[-2000:]



@pytest.mark.parametrize("command, threads, limit_mb, need_mb", [
    ("predict", "2", 640, 680),  # aborted at 630-640 ("terminate called without an active exception", exit 134)
    ("evaluate", "2", 660, 680),  # hung at 660-680 (numpy's OpenBLAS retried its buffer for ever, deaf to SIGTERM)
    ("train", "1", 470, 540),  # aborted at 460-470
    ("evaluate", "1", 490, 530),  # a SystemError traceback importing gluonnlp at 490
])
def test_a_command_is_refused_in_one_line_below_the_address_space_it_crashed_under(tmp_path, data, bundle, command,
                                                                                   threads, limit_mb, need_mb):
    """Limits at which a command crashed or hung are refused in one line, before MXNet loads (margins: mxnet_env's
    measurements, in 10 MB steps)."""
    r = _run_under_limit(tmp_path, data, bundle, command, threads, limit_mb)
    assert_error(r, f"MXNet needs about {need_mb} MB of address space to {command} ({threads} "
                    f"thread{'s' if threads != '1' else ''}), and this process may use {limit_mb} MB at most")


@pytest.mark.parametrize("command, threads, limit_mb", [("predict", "2", 760), ("evaluate", "2", 760),
                                                        ("train", "1", 640)])
def test_a_command_runs_under_an_address_space_limit_with_room_above_its_floor(tmp_path, data, bundle, command,
                                                                               threads, limit_mb):
    """Above its floor (here 60-80 MB above: the margins differ a little from machine to machine) a command runs;
    before, predict and evaluate were refused below training's 700 MB, and one thread below two threads' floor."""
    r = _run_under_limit(tmp_path, data, bundle, command, threads, limit_mb)
    assert r.returncode == 0, r.stderr[-2000:]


def test_each_command_and_thread_count_has_its_own_address_space_floor(monkeypatch):
    """MIN_ADDRESS_SPACE was training's with two threads for every command: predict under 700 MB was refused,
    though it runs from 670; one thread needs ~160 MB less. (Only the check: the runs are measured above.)"""
    import resource

    from fasttext_lib import mxnet_env
    from fasttext_lib.errors import FastTextError

    monkeypatch.setattr(mxnet_env, "_map_blas_buffers", lambda: None)
    monkeypatch.setattr(mxnet_env, "_usable_cpus", lambda: 2)
    monkeypatch.setattr(ctypes, "CDLL", lambda *_a, **_k: types.SimpleNamespace(mallopt=lambda *_: 1))  # (this
    # process's malloc arenas stay as they are)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    for threads, limit_mb, runs, refused in [("2", 690, ["predict", "evaluate", "export-vectors"], ["train"]),
                                             ("1", 530, ["predict", "evaluate", "export-vectors"], ["train"]),
                                             ("1", 525, ["predict", "export-vectors"], ["evaluate", "train"])]:
        monkeypatch.setenv("OMP_NUM_THREADS", threads)
        monkeypatch.setattr(resource, "getrlimit", lambda _which, _l=limit_mb << 20: (_l, _l))
        for command in runs:
            mxnet_env.check_address_space(command)
        for command in refused:
            with pytest.raises(FastTextError, match=f"to {command} "):
                mxnet_env.check_address_space(command)


def test_a_dmlc_role_without_a_cluster_costs_no_join(tmp_path, data, bundle):
    """DMLC_ROLE=worker left in a shell's environment, no cluster's (DMLC_PS_ROOT_URI ... unset): training on one host
    joins nothing, and runs under a limit it runs under without it (610 MB, 70 above its floor); it was refused as
    "joining its cluster", 90 MB more."""
    r = _run_under_limit(tmp_path, data, bundle, "train", "1", 610, DMLC_ROLE="worker")
    assert r.returncode == 0, r.stderr[-2000:]


def test_a_clusters_worker_trained_alone_costs_no_join(tmp_path, data, bundle):
    """A cluster's worker (DMLC_ROLE=worker, the cluster's variables set) trained on its host alone, ``--kvstore
    local``: only a dist_* kvstore joins the cluster, and it runs under the limit it runs under outside one (610 MB);
    the start-up check charged it the join's 90 MB, and refused it for a join it never makes."""
    cluster = {"DMLC_ROLE": "worker", "DMLC_PS_ROOT_URI": "127.0.0.1", "DMLC_PS_ROOT_PORT": "9091",
               "DMLC_NUM_SERVER": "1", "DMLC_NUM_WORKER": "2"}
    r = _run_under_limit(tmp_path, data, bundle, "train", "1", 610, "--kvstore", "local", **cluster)
    assert r.returncode == 0, r.stderr[-2000:]


def _run_under_limit(tmp_path, data, bundle, command, threads, limit_mb, *more, **extra_env):
    """``command`` (``more``: its further arguments) with ``threads`` OpenMP threads under ``limit_mb`` of ``ulimit
    -v``."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS")}
    env.update(extra_env)
    argv = {"predict": ["predict", "--model", str(bundle), "--input", str(data["test"])],
            "evaluate": ["evaluate", "--model", str(bundle), "--data", str(data["test"])],
            "train": ["train", "--train", str(data["train"]), "--output", str(tmp_path / "out"), *TINY]}[command]
    return subprocess.run([sys.executable, "-m", "fasttext_lib", *argv, *more], capture_output=True, text=True,
                          timeout=300,
                          env=dict(env, PYTHONPATH=ROOT, OMP_NUM_THREADS=threads),
                          preexec_fn=memory_limit(limit_mb << 20))


BLAS_AFTER_THE_CHECK = """
import os, resource, sys
import numpy as np
from fasttext_lib import mxnet_env
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
mxnet_env.check_address_space("evaluate")
with open("/proc/self/status") as f:
    mapped = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (mapped + (8 << 20), 2 << 30))  # no room left for a 32 MB buffer
a = np.ones((512, 512), dtype=np.float32)
print(float((a @ a)[0, 0]), flush=True)
"""


def test_numpys_blas_has_its_buffers_before_the_address_space_runs_out():
    """numpy's OpenBLAS maps a 32 MB buffer for each of its threads at its first product, and where a ``ulimit -v``
    leaves no room for it, it retried for ever (a gdb backtrace: blas_memory_alloc -> alloc_mmap under
    FLOAT_matmul), deaf to SIGTERM and Ctrl-C: evaluate hung at 660-680 MB with two threads. Under a finite limit the
    check now makes one product while there is room, so a later product finds its buffers mapped."""
    # (a hang's bound: a process importing MXNet on a loaded machine can take more than a minute)
    r = subprocess.run([sys.executable, "-c", BLAS_AFTER_THE_CHECK], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2"))
    assert (r.returncode, r.stdout) == (0, "512.0\n"), r.stderr[-2000:]


def test_the_address_space_check_counts_the_cpus_this_process_may_run_on(monkeypatch):
    """OpenMP starts a thread per CPU the process may run on (its affinity: a container's cpuset, taskset), not per
    CPU of the host: counted by os.cpu_count(), a 2-CPU container on a 96-CPU host was refused below 1,452 MB of
    ulimit -v, where MXNet trains in 760."""
    import ctypes
    import resource

    from fasttext_lib import mxnet_env
    from fasttext_lib.errors import FastTextError

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (760 << 20, 760 << 20))
    monkeypatch.setattr(ctypes, "CDLL", lambda name: types.SimpleNamespace(mallopt=lambda *a: 1))  # (not this process)
    monkeypatch.setattr(os, "cpu_count", lambda: 96)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    mxnet_env.check_address_space()  # 2 CPUs: 700 MB
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    with pytest.raises(FastTextError, match=r"about 812 MB of address space to train \(16 threads\)"):
        mxnet_env.check_address_space()


# ---------------------------------------------------------------- signals, kills, concurrent runs


WRAPPER = textwrap.dedent("""
    # The real CLI, with a pause (or a SIGKILL) inside publishing, after its first data file is written.
    import os, signal, sys, time
    sys.path.insert(0, {root!r})
    from fasttext_lib import storage
    def paused(real):  # both ways a data file is placed: copied, or hard-linked from the staging dir
        def place(src, dst):
            out = real(src, dst)
            if os.environ.get("KILL_IN_PUBLISH"):
                os.kill(os.getpid(), signal.SIGKILL)
            open(os.environ["PUBLISH_MARK"], "w").close()
            time.sleep(120)
            return out
        return place
    storage.sets._copy_hashing = paused(storage.sets._copy_hashing)
    storage.sets._move_hashing = paused(storage.sets._move_hashing)
    from fasttext_lib.cli import run
    sys.exit(run())  # (the process entry point, as python -m fasttext_lib: its stderr and exit handling too)
""").format(root=ROOT)


def hangup_by_default():
    """A child's SIGHUP as a terminal session has it: a suite run under ``nohup`` (its SIGHUP ignored, which a child
    inherits, and the CLI keeps ignored by design) hung in the hangup tests."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def start(args, env, wrapper=None):
    command = [sys.executable, str(wrapper)] if wrapper else [sys.executable, "-m", "fasttext_lib"]
    return subprocess.Popen(command + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", **env),
                            preexec_fn=hangup_by_default)


def finish(proc):
    out, err = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_sigterm_mid_epoch_cleans_up(tmp_path, sample_dir, tmpdir_env):
    from fasttext_lib import storage

    tmpdir, env = tmpdir_env
    ckpt = tmp_path / "ckpt"
    proc = start(["train", "--train", sample_dir / "train.csv", "--output", tmp_path / "out", "--checkpoint-dir", ckpt,
                  "--epochs", "500", "--batch-size", "32", "--emsize", "8", "--no-progress"], env)
    first = proc.stdout.readline()  # epoch 1 done (and checkpointed): now inside epoch 2
    assert first.startswith("{"), proc.stderr.read()
    proc.send_signal(signal.SIGTERM)
    r = finish(proc)
    assert_error(r, "terminated (SIGTERM)", status=143)
    assert not (tmp_path / "out").exists() and os.listdir(tmpdir) == []
    epochs = os.listdir(ckpt)
    assert len(epochs) == 1  # the newest complete checkpoint, and nothing half-written beside it
    names = os.listdir(ckpt / epochs[0])
    assert not [n for n in names if n.startswith(".fasttext-staging")] and len(names) == 4  # manifest, 2 files, lock
    storage.read_set(str(ckpt / epochs[0]), "checkpoint.json", ["model.params", "optimizer.npz"], str(tmp_path))


EARLY_SIGNAL = """
import os, signal, sys, time
from fasttext_lib import cli

def main(**kwargs):  # the signal while the command starts: as if during MXNet's import, before stop_on_signals
    os.kill(os.getpid(), int(sys.argv.pop(1)))
    time.sleep(0.2)  # (a handler runs between bytecodes)
    return real_main(**kwargs)

real_main, cli.main = cli.main, main
raise SystemExit(cli.run())
"""


@pytest.mark.parametrize("sig, status, says", [(signal.SIGTERM, 143, "terminated (SIGTERM)"),
                                                (signal.SIGINT, 130, "interrupted (SIGINT)"),
                                                (signal.SIGHUP, 129, "hung up (SIGHUP)")])
def test_a_signal_while_the_command_starts_is_one_error_line(tmp_path, sample_dir, sig, status, says):
    """A stop in the command's first ~0.5 s (arguments, MXNet's import), before main's handlers are armed: SIGTERM
    killed it with no line (status -15), Ctrl-C printed Python's KeyboardInterrupt traceback. Nothing is written then:
    one line, the signal's status. A signal ignored at the start (nohup, a background job's SIGINT) stays ignored."""
    command = [sys.executable, "-c", EARLY_SIGNAL, str(int(sig)), "train", "--train", str(sample_dir / "test.csv"),
               "--output", str(tmp_path / "m"), "--epochs", "1", "--emsize", "4"]
    r = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=300,
                       preexec_fn=hangup_by_default)
    assert_error(r, says, status=status)
    assert r.stderr == f"error: {says}\n" and not (tmp_path / "m").exists()

    def ignored():
        signal.signal(sig, signal.SIG_IGN)

    r = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=300,
                       preexec_fn=ignored)
    assert r.returncode == 0 and (tmp_path / "m" / "config.json").exists(), r.stderr


LATE_SIGNAL = """
import atexit, os, signal, sys, time
from fasttext_lib import cli, vectors

sig, when = int(sys.argv.pop(1)), sys.argv.pop(1)

def stopped_as_it_returns(real):  # the signal once the summary line is out, as the command returns (MXNet frees the
    def returning(*args, **kwargs):  # model export-vectors read: a quarter of a second for a bigram table)
        out = real(*args, **kwargs)
        os.kill(os.getpid(), sig)
        time.sleep(0.5)  # (a handler runs between bytecodes)
        return out
    return returning

if when == "returning":
    vectors.export_vectors = stopped_as_it_returns(vectors.export_vectors)
    cli._write_splits = stopped_as_it_returns(cli._write_splits)
elif when == "restored":  # as main returns, once its own handlers are put back (stops.stop_on_signals ended), or
    import contextlib  # after its error line (as MXNet finishes what was queued)
    from fasttext_lib import errors, stops

    real_stop_on_signals, real_let_mxnet_finish = stops.stop_on_signals, errors.let_mxnet_finish

    @contextlib.contextmanager
    def stop_on_signals(*args, **kwargs):
        with real_stop_on_signals(*args, **kwargs):
            yield
        os.kill(os.getpid(), sig)
        time.sleep(0.5)

    def let_mxnet_finish(*args, **kwargs):
        os.kill(os.getpid(), sig)
        time.sleep(0.5)
        return real_let_mxnet_finish(*args, **kwargs)

    stops.stop_on_signals, errors.let_mxnet_finish = stop_on_signals, let_mxnet_finish
elif when == "exiting":  # as the process exits, once cli.run has returned: in an exit function registered as main
    real_main = cli.main  # runs (as MXNet's are, when it is imported), so run before the ones cli.run registered

    def main(*args, **kwargs):
        atexit.register(lambda: (os.kill(os.getpid(), sig), time.sleep(0.5)))
        return real_main(*args, **kwargs)

    cli.main = main
else:  # as Python frees the modules, after the exit functions (and after it put the signals' handlers back)
    class StopWhenFreed:
        def __del__(self, kill=os.kill, pid=os.getpid(), sleep=time.sleep):
            kill(pid, sig)
            sleep(0.5)

    stop_when_freed = StopWhenFreed()
raise SystemExit(cli.run())
"""


def _late_signal(sig, when, *args):
    return subprocess.run([sys.executable, "-c", LATE_SIGNAL, str(int(sig)), when, *map(str, args)], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=300, preexec_fn=hangup_by_default)


@pytest.mark.parametrize("sig, status, says", [(signal.SIGINT, 130, "interrupted (SIGINT)"),
                                                (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_a_stop_after_the_summary_line_says_the_files_were_written(tmp_path, bundle, sig, status, says):
    """Ctrl-C or SIGTERM once export-vectors or sample had put its files in place and said so, as the command returned:
    its line said "stopped and cleaned up", under the summary line, with the new files in place of the old ones."""
    vec, train, test = tmp_path / "v.vec", tmp_path / "s" / "train.csv", tmp_path / "s" / "test.csv"
    train.parent.mkdir()
    for path in (vec, train, test):
        path.write_text("the user's old file\n")
    r = _late_signal(sig, "returning", "export-vectors", "--model", bundle, "--output", vec, "--overwrite")
    assert_error(r, f"{says}; stopped after {vec} was written", status=status)
    assert json.loads(r.stdout) == {"output": str(vec), "words": int(vec.read_text().split()[0])}
    r = _late_signal(sig, "returning", "sample", "--output", tmp_path / "s", "--overwrite")
    assert_error(r, f"{says}; stopped after {train} and {test} were written", status=status)
    assert json.loads(r.stdout) == {"train": str(train), "test": str(test)}
    assert all(path.read_text() != "the user's old file\n" for path in (train, test))


@pytest.mark.parametrize("when", ["restored", "exiting", "finalizing"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stop_while_the_process_exits_after_its_work_keeps_the_commands_status(tmp_path, bundle, sig, when):
    """A signal once the command had finished, as the process exited (Python and MXNet freeing what it read): it died
    by the signal, status 130, 143 or 129 and no line (Ctrl-C: a KeyboardInterrupt traceback, or none), after the line
    that said its files were written. The exit now ends at once with the command's own status: 0, or 2 after its
    error line. ``restored``: the signal as main returned, once its own handlers were put back (the command's start's
    handler then said "interrupted (SIGINT)", status 130, under the lines that said the files were written), or just
    after its error line (a second error line). ``finalizing``: the signal once the exit functions had run, as Python freed the modules (MXNet's
    arrays: the quarter second after a train's "bundle written" line), where Python has put the signals' handlers
    back to the system's default: Ctrl-C there still killed the process, status -2 and no line."""
    r = _late_signal(sig, when, "export-vectors", "--model", bundle, "--output", tmp_path / "v.vec")
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert json.loads(r.stdout)["output"] == str(tmp_path / "v.vec") and (tmp_path / "v.vec").stat().st_size > 0
    r = _late_signal(sig, when, "sample", "--output", tmp_path / "v.vec")
    assert_error(r, "exists and is not a directory")
    assert r.stderr.count("\n") == 1 and not r.stdout


# Python's -m (runpy._run_module_as_main, which Python's C code calls for -m), or the `fasttext-lib` script pip writes,
# with a signal sent to the process as the package's __init__ imports numpy (~0.15 s, before cli.run arms its handler)
SIGNAL_AT_NUMPY = """
import importlib.abc, os, runpy, signal, sys

class SignalAtNumpy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), int(os.environ["SIGNAL_AT_NUMPY"]))  # (a handler runs at the next bytecode)
        return None

sys.meta_path.insert(0, SignalAtNumpy())
"""
AS_MINUS_M = SIGNAL_AT_NUMPY + """
sys.argv[0] = "-m"  # as while -m locates the module
runpy._run_module_as_main("fasttext_lib")
"""
AS_PIPS_SCRIPT = SIGNAL_AT_NUMPY + """
from fasttext_lib.cli import run
sys.exit(run())
"""


@pytest.mark.parametrize("how", ["-m", "script"])
@pytest.mark.parametrize("sig, status, says", [(signal.SIGTERM, 143, "terminated (SIGTERM)"),
                                                (signal.SIGINT, 130, "interrupted (SIGINT)"),
                                                (signal.SIGHUP, 129, "hung up (SIGHUP)")])
def test_a_signal_while_the_package_imports_is_one_error_line(tmp_path, how, sig, status, says):
    """A stop while `python -m fasttext_lib` (or the fasttext-lib script) imported the package (its __init__ imports
    numpy: ~0.15 s), before cli.run armed its handler: SIGTERM killed it with no line (status -15), Ctrl-C printed
    Python's KeyboardInterrupt traceback through the import. The package now arms the same handler first when it is
    imported to run the command. A signal ignored at the start stays ignored, and `import fasttext_lib` elsewhere (a
    notebook, a script of yours) changes no handler."""
    if how == "-m":
        command = [sys.executable, "-c", AS_MINUS_M]
    else:
        script = tmp_path / "bin" / "fasttext-lib"  # (pip's script, the signal's finder before its import)
        script.parent.mkdir()
        script.write_text(AS_PIPS_SCRIPT)
        command = [sys.executable, str(script)]
    env = dict(os.environ, PYTHONPATH=ROOT, SIGNAL_AT_NUMPY=str(int(sig)))
    r = subprocess.run(command + ["--help"], capture_output=True, text=True, env=env, timeout=300,
                       preexec_fn=hangup_by_default)
    assert_error(r, says, status=status)
    assert r.stderr == f"error: {says}\n" and r.stdout == ""

    def ignored():
        signal.signal(sig, signal.SIG_IGN)

    r = subprocess.run(command + ["--help"], capture_output=True, text=True, env=env, timeout=300, preexec_fn=ignored)
    assert r.returncode == 0 and "usage:" in r.stdout and r.stderr == "", r.stderr


def test_importing_the_package_elsewhere_changes_no_signal_handler():
    code = ("import signal\n"
            "before = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]\n"
            "import fasttext_lib, fasttext_lib.cli\n"
            "print(before == [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)])\n")
    for command in ([sys.executable, "-c", code], [sys.executable, "-c", "import runpy, sys; sys.argv[0] = '-m'; "
                                                   f"exec({code!r})"]):
        r = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)
        assert r.returncode == 0 and r.stdout.split() == ["True"], r.stderr


def _old_bundle_and_a_publish_marker(tmp_path, bundle):
    """A bundle to replace (its predictions and listing), and the wrapper that runs the CLI and creates the mark
    file once the publish has begun (PUBLISH_MARK): for the tests that signal a run mid-publish."""
    out = copy_bundle(bundle, tmp_path / "model")
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(WRAPPER)
    return out, predictions(out), listing(out), wrapper, tmp_path / "publishing"


@pytest.mark.parametrize("sig, status, says", [(signal.SIGTERM, 143, "terminated (SIGTERM)"),
                                                (signal.SIGINT, 130, "interrupted (SIGINT)"),
                                                # the terminal closed, the ssh session dropped: it killed the run
                                                # with no line, its staging directory left in TMPDIR for good
                                                (signal.SIGHUP, 129, "hung up (SIGHUP)")])
def test_signal_mid_publish_keeps_the_old_bundle(tmp_path, data, bundle, tmpdir_env, sig, status, says):
    tmpdir, env = tmpdir_env
    out, old, before, wrapper, mark = _old_bundle_and_a_publish_marker(tmp_path, bundle)
    proc = start(["train", "--train", data["train"], "--output", out, *TINY, "--seed", "5", "--overwrite"],
                 dict(env, PUBLISH_MARK=str(mark)),
                 wrapper)
    deadline = time.time() + 120
    while not mark.exists():
        assert proc.poll() is None and time.time() < deadline, proc.stderr.read() if proc.poll() is not None else "timeout"
        time.sleep(0.05)
    assert len(os.listdir(out)) > len(before)  # a new data file is there, mid-publish
    proc.send_signal(sig)
    r = finish(proc)
    assert_error(r, says, status=status)
    assert listing(out) == before and predictions(out) == old
    assert os.listdir(tmpdir) == []


def test_a_hangup_whose_terminal_is_gone_still_exits_129_after_cleaning_up(tmp_path, data, bundle, tmpdir_env):
    """After a hangup stderr may be gone too (a closed terminal: EIO; here a pipe nobody reads: EPIPE). Writing
    the error line then raised, and the run exited 1 instead of 129."""
    tmpdir, env = tmpdir_env
    out, old, before, wrapper, mark = _old_bundle_and_a_publish_marker(tmp_path, bundle)
    reader, writer = os.pipe()
    proc = subprocess.Popen([sys.executable, str(wrapper), "train", "--train", str(data["train"]), "--output", str(out),
                             *TINY, "--seed", "5", "--overwrite"], stdout=subprocess.DEVNULL, stderr=writer,
                            env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", PUBLISH_MARK=str(mark), **env),
                            preexec_fn=hangup_by_default)
    os.close(writer)
    try:
        deadline = time.time() + 120
        while not mark.exists():
            assert proc.poll() is None and time.time() < deadline
            time.sleep(0.05)
    finally:
        os.close(reader)  # the terminal is gone
    proc.send_signal(signal.SIGHUP)
    assert proc.wait(timeout=300) == 129
    assert listing(out) == before and predictions(out) == old and os.listdir(tmpdir) == []


@pytest.fixture
def silent_endpoint():
    """An S3 endpoint that accepts connections, reads the requests and never answers (a stalled network);
    yields (url, event set once a request's bytes arrived)."""
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    received, held = threading.Event(), []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # closed: the test is over
                return
            held.append(conn)
            if conn.recv(65536):
                received.set()

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}", received
    server.close()
    for conn in held:
        conn.close()


def test_ctrl_c_during_an_upload_to_an_endpoint_that_stopped_answering_exits_at_once(silent_endpoint, tmpdir_env):
    """The wait for the upload sat in boto3's transfer manager, which joins its worker: Ctrl-C was
    answered only when the stalled request hit its read timeout, a minute later (here: more than 30 s)."""
    tmpdir, env = tmpdir_env
    url, received = silent_endpoint
    proc = start(["sample", "--output", "s3://bucket/data", "--overwrite"],
                 dict(env, AWS_ENDPOINT_URL=url, AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x",
                      AWS_DEFAULT_REGION="us-east-1"))
    assert received.wait(120), proc.communicate()  # the PUT of the first file is under way
    time.sleep(3)  # past botocore's 1 s wait for "100 Continue": the body is sent, the answer awaited
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("still running 30 s after Ctrl-C: " + proc.communicate()[1])
    assert_error(subprocess.CompletedProcess(proc.args, proc.returncode, out, err), "interrupted (SIGINT)", status=130)
    assert os.listdir(tmpdir) == []  # the staged file is gone too


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGINT, signal.SIGTERM])
def test_a_stop_the_process_ignores_stays_ignored(sig):
    """``nohup python -m fasttext_lib train ...``: SIGHUP is ignored on purpose; a script's ``cmd &`` job has SIGINT
    ignored (a Ctrl-C meant for the script's foreground ended its training), a launcher may ignore SIGTERM: the run
    must not take them over, nor give an ignored SIGINT Python's handler back when another signal stops it."""
    from fasttext_lib.stops import Interrupted, stop_on_signals

    other = signal.SIGTERM if sig != signal.SIGTERM else signal.SIGHUP
    # (`other` at its default, as a process starts: the suite itself may run with SIGHUP ignored, under nohup)
    before, other_before = signal.signal(sig, signal.SIG_IGN), signal.signal(other, signal.SIG_DFL)
    try:
        with stop_on_signals():
            assert signal.getsignal(sig) == signal.SIG_IGN
            os.kill(os.getpid(), sig)  # (ignored: nothing raised)
        assert signal.getsignal(sig) == signal.SIG_IGN
        with pytest.raises(Interrupted), stop_on_signals():
            try:
                os.kill(os.getpid(), other)  # (a stop it does handle: the cleanup after it keeps `sig` ignored)
                time.sleep(5)
            finally:
                assert signal.getsignal(sig) == signal.SIG_IGN
        assert signal.getsignal(sig) == signal.SIG_IGN
    finally:
        signal.signal(sig, before)
        signal.signal(other, other_before)


def test_a_second_ctrl_c_during_cleanup_still_says_what_happened(tmp_path, monkeypatch):
    """After the first signal a second Ctrl-C raises Python's own KeyboardInterrupt, which has no text:
    the line was 'error: ; stopped and cleaned up'."""
    from conftest import cli_in_process
    from fasttext_lib import cli

    def interrupted_twice(args):
        raise KeyboardInterrupt()

    monkeypatch.setitem(cli.COMMANDS, "sample", interrupted_twice)
    r = cli_in_process("sample", "--output", tmp_path)
    assert (r.returncode, r.stderr) == (130, "error: interrupted (SIGINT); stopped and cleaned up\n")


def test_an_error_naming_a_path_with_a_line_break_stays_one_line(tmp_path):
    # (in this process: the line is the library's; an error line's process is every other family's)
    r = cli_in_process("train", "--train", tmp_path / "no\nsuch\rfile.csv", "--output", tmp_path / "out", *TINY)
    assert_error(r, f"no such file: {tmp_path}/no\\nsuch\\rfile.csv")
    assert r.stderr.count("\n") == 1 and "\r" not in r.stderr, r.stderr


def test_kill_9_mid_publish_leftovers_go_with_the_next_run(tmp_path, data, bundle):
    out = copy_bundle(bundle, tmp_path / "model")
    old, before = predictions(out), listing(out)
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(WRAPPER)
    proc = start(["train", "--train", data["train"], "--output", out, *TINY, "--seed", "5", "--overwrite"],
                 {"KILL_IN_PUBLISH": "1", "PUBLISH_MARK": str(tmp_path / "unused")}, wrapper)
    assert finish(proc).returncode == -signal.SIGKILL
    assert len(os.listdir(out)) > len(before) and predictions(out) == old  # a leftover, and still the old bundle
    # (the next run, whose cleanup is under test, in this process: the killed one is the process)
    r = cli_in_process("train", "--train", data["train"], "--output", out, *TINY, "--seed", "6", "--overwrite")
    assert r.returncode == 0, r.stderr
    config = json.loads((out / "config.json").read_text())
    assert sorted(os.listdir(out)) == sorted([".fasttext.lock", "config.json"] + [e["object"] for e in config["files"].values()])
    assert config["train_config"]["seed"] == 6 and predictions(out)


@pytest.mark.parametrize("overwrite", [True, False], ids=["--overwrite", "no --overwrite"])
def test_two_trainings_to_one_output(tmp_path, data, tmpdir_env, overwrite):
    """Both find no bundle there and train. With --overwrite the last to finish wins; without it the first
    bundle is kept and the other run fails in one line: refused before training where the first had saved by then,
    or at its save (it would replace a model), its model then kept beside, at model.1, which the line names."""
    tmpdir, env = tmpdir_env
    out = tmp_path / "model"
    flags = ["--overwrite"] if overwrite else []
    procs = [start(["train", "--train", data["train"], "--output", out, *TINY, "--seed", str(seed), *flags], env)
             for seed in (1, 2)]
    results = [finish(proc) for proc in procs]
    if overwrite:
        assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    else:
        assert sorted(r.returncode for r in results) == [0, 2], [r.stderr for r in results]
        refused = next(r for r in results if r.returncode)
        if "already holds a model bundle" in refused.stderr:  # (before training)
            assert_error(refused, "; pass --overwrite to replace it")
            assert not (tmp_path / "model.1").exists()
        else:  # at its save
            assert_error(refused, f"{out} was written by another run while this one trained; this run's model is kept "
                                  f"as {out}.1")
            kept = json.loads((tmp_path / "model.1" / "config.json").read_text())["train_config"]["seed"]
            winner = next(seed for seed, r in zip((1, 2), results) if r.returncode == 0)
            assert kept == 3 - winner and predictions(tmp_path / "model.1")
    config = json.loads((out / "config.json").read_text())
    assert config["train_config"]["seed"] in (1, 2)
    assert sorted(os.listdir(out)) == sorted([".fasttext.lock", "config.json"] + [e["object"] for e in config["files"].values()])
    assert predictions(out) and os.listdir(tmpdir) == []


# ---------------------------------------------------------------- the SageMaker training entry point


def sagemaker_env(root, train_file):
    (root / "model").mkdir(parents=True, exist_ok=True)
    (root / "train").mkdir(exist_ok=True)
    (root / "train" / "train.csv").write_bytes(train_file.read_bytes())
    return {"SM_MODEL_DIR": str(root / "model"), "SM_OUTPUT_DATA_DIR": str(root / "output"),
            "SM_CHANNEL_TRAIN": str(root / "train"), "SM_HOSTS": '["algo-1"]', "SM_CURRENT_HOST": "algo-1",
            "SM_NUM_GPUS": "0"}


def start_job(env, *args):
    return subprocess.Popen([sys.executable, os.path.join(ROOT, "fasttext_lib", "entry_point.py"), "--checkpoint-dir", "none",
                             "--emsize", "4", "--batch-size", "32", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, OMP_NUM_THREADS="1", **env))


def test_training_job_checks_its_model_dir_before_reading_the_data(tmp_path, data):
    env = sagemaker_env(tmp_path, data["train"])
    (tmp_path / "model").rmdir()
    (tmp_path / "model").write_text("a file")
    r = finish(start_job(env, "--epochs", "1"))
    assert_error(r, "model exists and is not a directory")
    assert "train channel" not in r.stdout  # found before the channel was read


def test_training_job_stops_cleanly_on_sigterm(tmp_path, sample_dir, tmpdir_env):
    tmpdir, env = tmpdir_env
    env.update(sagemaker_env(tmp_path, sample_dir / "train.csv"))
    proc = start_job(env, "--epochs", "500")
    for line in proc.stdout:
        if line.startswith("epoch=1;"):
            break
    proc.send_signal(signal.SIGTERM)  # what StopTrainingJob and a spot interruption send
    r = finish(proc)
    assert_error(r, "terminated (SIGTERM); stopped and cleaned up", status=143)  # (the CLI's line and status)
    assert os.listdir(tmp_path / "model") == [] and os.listdir(tmpdir) == []


def test_a_signal_whose_raise_a_del_swallowed_still_stops_the_run():
    """Python may run the SIGTERM handler inside a ``__del__`` (MXNet frees NDArrays there), where its
    exception is dropped: the signal must still stop the block (and the training loop's next step)."""
    import signal

    from fasttext_lib.stops import Interrupted, raise_if_interrupted, stop_on_signals

    class HandlerRunsHere:
        def __del__(self):
            signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)  # what a signal arriving here does

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Interrupted) as stopped:
        with stop_on_signals():
            HandlerRunsHere()  # its raise is dropped (silently: stop_on_signals takes it from sys.unraisablehook)
            with pytest.raises(Interrupted):
                raise_if_interrupted()  # what train() calls every step
            # (had the loop not checked, the end of the block raises it)
    assert stopped.value.exit_status == 143
    raise_if_interrupted()  # outside any block: nothing pending
    assert signal.getsignal(signal.SIGTERM) == before  # the handlers are put back


SIGNAL_IN_A_FINALIZER = textwrap.dedent("""\
    import os, signal, sys
    from fasttext_lib import cli
    from fasttext_lib.stops import raise_if_interrupted

    class SignalArrivesHere:
        def __del__(self):  # as MXNet's NDArray.__del__ does when a SIGTERM lands in it
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(10000):
                pass  # Python runs the handler in here, where its exception is dropped

    def busy(args):  # a training loop in small: it checks for a dropped signal every step
        SignalArrivesHere()
        for step in range(100):
            raise_if_interrupted()
        print("finished")
        return 0

    cli.COMMANDS["sample"] = busy
    sys.exit(cli.main(["sample", "--output", "unused"]))
""")


def test_a_signal_landing_in_a_finalizer_stops_the_run_with_one_error_line(tmp_path):
    """A SIGTERM handled inside a ``__del__`` (the flaky end of test_sigterm_mid_epoch_cleans_up) printed
    "Exception ignored in ... Traceback" above the error line: now the dropped raise is silent, and the
    loop's next check stops the run with the one error line."""
    script = tmp_path / "finalizer.py"
    script.write_text(SIGNAL_IN_A_FINALIZER)
    proc = start([], {}, script)
    r = finish(proc)
    assert_error(r, "terminated (SIGTERM)", status=143)
    assert "Exception ignored" not in r.stderr and "finished" not in r.stdout, r.stderr + r.stdout


HALF_MADE_BY_A_SIGNAL = textwrap.dedent("""\
    import os, signal, sys
    from fasttext_lib import cli
    import mxnet as mx

    kept = []

    class SignalInConstruction(mx.nd.NDArray):
        def __init__(self):  # the signal lands before the handle is set, as inside NDArray.__init__
            kept.append(self)  # (held, as a traceback's frame holds it, until after the error line)
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(10000):
                pass

    def busy(args):
        SignalInConstruction()
        print("finished")
        return 0

    cli.COMMANDS["sample"] = busy
    status = cli.main(["sample", "--output", "unused"])
    kept.clear()  # collected after the error line: its __del__ finds no handle
    sys.exit(status)
""")


def test_an_array_a_signal_left_half_made_is_collected_without_a_traceback(tmp_path):
    """A Ctrl-C landing inside MXNet's ``NDArray.__init__`` before its handle is set left an array whose ``__del__``
    raised AttributeError ('NDArray' object has no attribute 'handle') when it was collected, after the error line:
    "Exception ignored in ... Traceback" as the last lines of stderr."""
    script = tmp_path / "half_made.py"
    script.write_text(HALF_MADE_BY_A_SIGNAL)
    proc = start([], {}, script)
    r = finish(proc)
    assert_error(r, "terminated (SIGTERM)", status=143)
    assert "Exception ignored" not in r.stderr and "handle" not in r.stderr, r.stderr


def test_after_a_stop_only_an_array_without_its_own_handle_is_collected_silently(monkeypatch):
    """After a stop, the failing ``__del__`` of an array a signal left half made (no ``handle`` of its own) is dropped
    silently; any other finalizer's error that merely names 'handle' (a None where an object was, a message) is a
    genuine one and still reaches the hook, during the block and after it."""
    import mxnet as mx

    from fasttext_lib.stops import Interrupted, stop_on_signals

    class HalfMade(mx.nd.NDArray):
        def __init__(self):  # as a signal inside NDArray.__init__ leaves it: no handle set
            pass

    class HandleOfNothing:
        def __del__(self):
            self.client = None
            self.client.handle  # 'NoneType' object has no attribute 'handle': a bug of this finalizer's

    class SaysHandle:
        def __del__(self):
            raise AttributeError("'SaysHandle' object has no attribute 'handle'")

    shown = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: shown.append(str(unraisable.exc_value)))
    kept = []
    with pytest.raises(Interrupted):
        with stop_on_signals():
            with pytest.raises(Interrupted):
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(1000):
                    pass  # (the handler runs here)
            HalfMade(), HandleOfNothing(), SaysHandle()  # collected in the block, the stop received
            kept += [HalfMade(), HandleOfNothing(), SaysHandle()]
    kept.clear()  # collected after the block
    assert sorted(shown) == ["'NoneType' object has no attribute 'handle'"] * 2 + [
        "'SaysHandle' object has no attribute 'handle'"] * 2


def test_a_stop_landing_inside_the_batch_queues_wait_stops_the_run_not_a_runtime_error(monkeypatch):
    """A SIGXCPU (``ulimit -t``) landing inside ``Queue.get``'s wait for the next batch, in Python's own
    ``Condition._acquire_restore``, left the queue's lock unheld: its ``with`` block's exit raised "RuntimeError:
    release unlocked lock" over the stop, a traceback and exit 1 (1 run in ~30 on a loaded machine). The stop is
    raised instead. The window is CPython's; here it is made to happen every time."""
    import queue

    from fasttext_lib.batches import prefetch
    from fasttext_lib.stops import Interrupted, stop_on_signals

    real_get = queue.Queue.get

    def get_cut_by_a_signal(self, *args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(100000):
                pass  # the handler raises here, as inside the wait
        except Interrupted:
            raise RuntimeError("release unlocked lock")  # (as the with block's exit raises it, over the stop)
        return real_get(self, *args, **kwargs)

    class Maker:
        def make(self, part, with_transpose=True):
            return list(part)

    monkeypatch.setattr(queue.Queue, "get", get_cut_by_a_signal)
    with pytest.raises(Interrupted) as stopped:
        with stop_on_signals():
            list(prefetch(Maker(), list(range(10)), 2, 1))
    assert stopped.value.exit_status == 143


LOCK_LEFT_HELD_BY_A_STOP = textwrap.dedent("""\
    import queue, sys
    from fasttext_lib import batches

    batches.PREFETCH_JOIN_SECONDS = 0.5

    def get_cut_holding_the_lock(self, *args, **kwargs):
        self.mutex.acquire()  # as a stop landing just after the get's with block took the lock
        raise KeyboardInterrupt

    class Maker:
        def make(self, part, with_transpose=True):
            return list(part)

    queue.Queue.get = get_cut_holding_the_lock
    try:
        list(batches.prefetch(Maker(), list(range(100)), 2, 1))
    except KeyboardInterrupt:
        print("stopped")
""")


def test_a_stop_that_left_the_batch_queues_lock_held_does_not_hang_the_run(tmp_path):
    """A stop landing just as ``Queue.get``'s ``with`` block took the queue's lock left it held: the batch builder,
    waiting for it to put its batch, never ended, and joining it hung the run with no line (a ``ulimit -t`` test ran
    into its 120 s timeout). The join is bounded; the builder is a daemon thread."""
    script = tmp_path / "held.py"
    script.write_text(LOCK_LEFT_HELD_BY_A_STOP)
    # (a hang's bound: a process importing MXNet on a loaded machine can take more than a minute)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0 and r.stdout.split() == ["stopped"], r.stderr


SIGNAL_AT_AN_ANSWERS_WRITE = textwrap.dedent("""\
    import io, os, signal, sys
    from fasttext_lib import cli

    class SignalAtWrite(io.TextIOBase):  # stdout into a file; SIGTERM lands as write number AT returns
        def __init__(self, path, at):
            self.file, self.at, self.writes = open(path, "w", encoding="utf-8"), at, 0
        def write(self, text):
            self.file.write(text)
            self.file.flush()
            self.writes += 1
            if self.writes == self.at:
                os.kill(os.getpid(), signal.SIGTERM)  # Python runs the handler as this returns
            return len(text)
        def flush(self):
            self.file.flush()

    sys.stdout = SignalAtWrite(sys.argv[1], int(sys.argv[2]))
    sys.exit(cli.main(sys.argv[3:]))
""")


@pytest.mark.parametrize("at", [1, 2, 3])
def test_predict_stopped_by_a_signal_as_it_writes_an_answer_leaves_no_line_half_written(tmp_path, bundle, at):
    """A signal lands between any two writes to stdout (Python's buffered file checks for one after each write it
    flushes). ``print`` wrote an answer and its line break in two writes: SIGTERM (or Ctrl-C) between them left the
    output's last answer without its line break (3 runs in 11 of ``predict ... > out.jsonl`` stopped mid-file), and
    what a later ``>>`` appended ran on in that line. Each answer is one write now: the output ends at a line's end."""
    script, out, reviews = tmp_path / "signal_at_write.py", tmp_path / "out.jsonl", tmp_path / "reviews.txt"
    script.write_text(SIGNAL_AT_AN_ANSWERS_WRITE)
    reviews.write_text(REVIEWS * 3)
    r = finish(start([out, at, "predict", "--model", bundle, "--input", reviews], {}, script))
    assert_error(r, "terminated (SIGTERM)", status=143)
    written = out.read_text()
    assert written and written.endswith("\n"), repr(written)
    assert all(json.loads(line)["label"] for line in written.splitlines())


def test_a_bundle_replaced_while_its_manifest_download_was_cut_is_read_again(s3_model, proxy, monkeypatch, tmp_path, data):
    """config.json's body cut half way, and the bundle replaced by another run before the rest was asked for:
    the resumed read is refused by S3 (IfMatch: 412), which was an error line; now the new bundle is read
    whole, as any reader arriving after the replace would."""
    from conftest import cli_in_process

    replaced = []
    real_sleep, this_thread = time.sleep, threading.get_ident()

    def replace_then_sleep(seconds):  # the backoff before asking for the rest: another run publishes meanwhile
        if not replaced and threading.get_ident() == this_thread:  # (not another test's thread left sleeping)
            # (marked first: the waits below sleep too; unmarked, each of
            # them started another training while this one ran)
            replaced.append(None)
            r = run_cli("train", "--train", data["train"], "--output", s3_model, *TINY, "--seed", "7", "--overwrite")
            assert r.returncode == 0, r.stderr
            replaced[0] = predictions_json(s3_model)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", replace_then_sleep)
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
    proxy.fail("GET", "/config.json", "cut", nth=1)
    r = cli_in_process("predict", "--model", s3_model, input=REVIEWS)
    assert r.returncode == 0, r.stderr
    assert replaced[0] and [json.loads(line) for line in r.stdout.splitlines()] == replaced[0]


@pytest.mark.parametrize("change, says", [(b"caf\xe9\n", None), (b"more food\n", None), ("truncate", "changed while it was read")])
def test_predict_answers_for_the_file_it_checked_when_it_changes_between_the_two_reads(tmp_path, bundle, monkeypatch,
                                                                                      change, says):
    """A regular file is read twice (checked, then answered). Lines appended in between (a file still being
    written) were answered unchecked: a bad byte there stopped predict half way through its answers, exit 2
    with a partial stdout; a file cut short in between gave fewer answers than the lines checked, exit 0.
    Now the answers cover exactly the bytes checked, and a file that got shorter is one error line."""
    from conftest import cli_in_process

    from fasttext_lib import lines

    f = tmp_path / "in.txt"
    f.write_bytes(b"great food\n" * 5000)
    real, reads = lines.line_blocks, []

    def line_blocks(*args, **kwargs):
        reads.append(1)
        if len(reads) == 2:  # the second read begins: the file changes after it was checked
            if change == "truncate":
                os.truncate(f, 11 * 100)
            else:
                with open(f, "ab") as out:
                    out.write(change)
        return real(*args, **kwargs)

    monkeypatch.setattr(lines, "line_blocks", line_blocks)
    r = cli_in_process("predict", "--model", bundle, "--input", f)
    if says:
        assert r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1, r.stderr
    else:
        assert r.returncode == 0 and r.stderr == "", r.stderr
        assert len(r.stdout.splitlines()) == 5000


def test_predict_with_stdin_closed_is_one_error_line(bundle):
    """``predict <&-`` (no --input, stdin closed): Python's sys.stdin is None; it was an AttributeError traceback."""
    import subprocess
    import sys

    from conftest import ROOT

    r = subprocess.run([sys.executable, "-m", "fasttext_lib", "predict", "--model", str(bundle)], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, cwd=ROOT, timeout=600,
                       env=dict(os.environ, PYTHONPATH=ROOT), preexec_fn=lambda: os.close(0))
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert r.stderr == "error: standard input is closed: give the reviews with --input FILE or on stdin\n"


def run_with_stdout(args, stdout_path, append, stdin=None):
    """The CLI with its stdout ``> stdout_path`` (``>>`` when ``append``), as a shell opens it (``>`` empties it)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    sink = os.open(stdout_path, flags, 0o644)
    try:
        r = subprocess.run([sys.executable, "-m", "fasttext_lib", *map(str, args)], stdout=sink, stderr=subprocess.PIPE,
                           stdin=stdin if stdin is not None else subprocess.DEVNULL, text=True,
                           env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)
    finally:
        os.close(sink)
    r.stdout = ""
    return r


@pytest.mark.parametrize("append", [True, False], ids=[">>", ">"])
@pytest.mark.parametrize("same", ["the file", "a hard link", "a symlink", "stdin"])
def test_predict_into_its_own_input_is_refused_before_any_answer(tmp_path, bundle, same, append):
    """``predict --input reviews.txt >> reviews.txt`` (or a link to it, or ``< reviews.txt``) wrote the answers
    into the reviews file, after its reviews; with ``>`` the shell had emptied it, and predict answered nothing
    and exited 0 as if the file had held no reviews."""
    reviews = tmp_path / "reviews.txt"
    reviews.write_text(REVIEWS)
    given = {"the file": reviews, "a hard link": tmp_path / "hard.txt", "a symlink": tmp_path / "sym.txt",
             "stdin": None}[same]
    if same == "a hard link":
        os.link(reviews, given)
    elif same == "a symlink":
        given.symlink_to(reviews)
    args = ["predict", "--model", bundle] + ([] if given is None else ["--input", given])
    with open(reviews, "rb") as stdin:
        r = run_with_stdout(args, reviews, append, stdin=stdin if given is None else None)
    assert_error(r, "standard output" if given is None else f"--input {given} is the file standard output writes to")
    assert reviews.read_text() == (REVIEWS if append else "")  # (> emptied it before predict started)
    if not append:
        assert "emptied" in r.stderr, r.stderr


def test_evaluate_into_its_own_data_is_refused(tmp_path, bundle):
    """``evaluate --data test.txt >> test.txt`` appended the confusion matrix and metrics to the data file, which
    the next evaluate then refused as malformed."""
    data = tmp_path / "test.txt"
    data.write_text("__label__1 great food\n__label__2 cold soup\n")
    r = run_with_stdout(["evaluate", "--model", bundle, "--data", data], data, append=True)
    assert_error(r, f"--data {data} is the file standard output writes to")
    assert data.read_text() == "__label__1 great food\n__label__2 cold soup\n"


def test_predict_input_dev_stdout_into_a_pipe_is_refused_not_a_deadlock(bundle):
    """``predict --input /dev/stdout | ...`` opened stdout's own pipe for reading and waited on it for ever."""
    p = subprocess.Popen(f"{sys.executable} -m fasttext_lib predict --model {bundle} --input /dev/stdout | cat; "
                         f"exit ${{PIPESTATUS[0]}}", shell=True, executable="/bin/bash", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTHONPATH=ROOT), start_new_session=True)
    try:
        stdout, stderr = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail("predict --input /dev/stdout | cat waited for ever on its own pipe")
    r = subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr)
    assert r.stdout == ""
    assert_error(r, "--input /dev/stdout is standard output itself")


def test_predict_to_a_terminal_or_dev_null_from_the_same_device_still_reads(tmp_path, bundle):
    """Not refused: stdout on /dev/null with --input /dev/null (nothing to answer)."""
    r = subprocess.run([sys.executable, "-m", "fasttext_lib", "predict", "--model", str(bundle), "--input", "/dev/null"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert (r.returncode, r.stderr) == (0, "")


def test_predict_from_a_terminal_ends_at_the_first_ctrl_d_and_says_how(bundle):
    """``predict --model M`` typed at a terminal waited silently (no --input: the reviews are read from it), and
    the first Ctrl-D did not end the input: each read after the terminal's end-of-file asked it again, so the
    answers came only after a second (or third, for empty input) Ctrl-D."""
    import pty

    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "fasttext_lib", "predict", "--model", str(bundle)], stdin=slave,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    os.close(slave)
    try:
        os.write(master, b"great food\n\x04")  # one review, then Ctrl-D at the start of a line: the end of the input
        try:
            # (a hang's bound: a process importing MXNet on a loaded machine can take more than a minute)
            stdout, stderr = p.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            pytest.fail("predict did not end at the terminal's first Ctrl-D")
    finally:
        os.close(master)
    assert p.returncode == 0, stderr
    assert len(stdout.splitlines()) == 1 and json.loads(stdout)["label"]
    assert stderr == ("stdin: reading reviews from the terminal, one per line; the answers come once Ctrl-D ends "
                      "them (or give --input FILE)\n")


def test_stderr_closed_keeps_notes_and_errors_out_of_the_answers(tmp_path, bundle):
    """``predict ... 2>&-``: Python's sys.stderr is None, and print(file=None) prints to stdout, so the note on how
    a labeled CSV was read became a line among the answers (11 lines for 10 records: every answer one off), and an
    error line was printed where the answers go."""
    table = tmp_path / "labeled.csv"
    table.write_text("".join(f'"1","great food number {i}"\n' for i in range(10)))
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"great food\ncaf\xe9\n")

    def run(path):
        return subprocess.run([sys.executable, "-m", "fasttext_lib", "predict", "--model", str(bundle), "--input",
                               str(path)], stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=ROOT),
                              timeout=300, preexec_fn=lambda: os.close(2))

    r = run(table)
    assert r.returncode == 0
    assert [sorted(json.loads(line)) for line in r.stdout.splitlines()] == [["class_id", "label", "probability"]] * 10
    r = run(bad)
    assert (r.returncode, r.stdout) == (2, "")


@pytest.mark.parametrize("closed", [0, 1, 2])
def test_descriptors_the_process_started_without_are_not_given_to_its_files(tmp_path, closed):
    """``train ... >&-``: a closed descriptor 1 went to the next file opened (a data or bundle file), and whatever
    writes to stdout below Python (native code, the native operators' compiler run, a child process) wrote into it.
    The CLI's entry point puts /dev/null on every standard descriptor it was started without."""
    probe = ("import os, sys\n"
             "from fasttext_lib import cli\n"
             f"sys.argv = ['fasttext_lib', 'sample', '--output', {str(tmp_path / 'out')!r}]\n"
             "status = cli.run()\n"
             "with open(os.devnull, 'w') as check:\n"  # (a file opened now must not get a standard descriptor)
             "    fd = check.fileno()\n"
             f"target = os.readlink('/proc/self/fd/{closed}')\n"
             f"with open({str(tmp_path / 'report')!r}, 'w') as f:\n"
             "    f.write(f'{status} {fd} {target}')\n")
    r = subprocess.run([sys.executable, "-c", probe], env=dict(os.environ, PYTHONPATH=ROOT), timeout=120,
                       preexec_fn=lambda: os.close(closed), capture_output=closed != 1 and closed != 2)
    assert r.returncode == 0
    status, fd, target = (tmp_path / "report").read_text().split(" ", 2)
    assert status == "0" and int(fd) > 2 and target == os.devnull, (status, fd, target)
    assert (tmp_path / "out" / "train.csv").stat().st_size > 0


def test_a_synthetic_corpus_larger_than_the_memory_available_is_refused_before_it_is_generated(tmp_path, monkeypatch):
    """`synthetic --train-docs 100000000` (or notebook 01's `-p dataset synthetic -p train_docs 100000000`) built the
    corpus in memory until the OOM killer ended it, with no line. Here 100 MB are available: 20,000 documents
    (~130 MB while generating) are refused, 200 generate."""
    from conftest import cli_in_process

    fake_memory(tmp_path, monkeypatch, 100 << 20)
    r = cli_in_process("synthetic", "--output", tmp_path / "out", "--train-docs", "20000", "--test-docs", "10")
    assert r.returncode == 2 and r.stderr == ("error: generating 20,010 synthetic reviews takes about 0.1 GiB of memory, "
                                              "more than the 0.1 GiB available here; generate fewer documents\n"), r.stderr
    assert not (tmp_path / "out").exists()
    r = cli_in_process("synthetic", "--output", tmp_path / "out", "--train-docs", "200", "--test-docs", "10")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("args", [["--help"], ["train", "--help"], ["predict", "-h"]])
def test_help_onto_a_full_disk_is_one_error_line_and_a_closed_pipe_ends_it_quietly(args):
    """``--help > /dev/full`` wrote nothing and exited 0 (argparse drops a failed write of its help); now it fails as
    any command's answers on a full disk do, and ``--help | head -1`` ends quietly with SIGPIPE's status."""
    def run(sink):
        try:
            return subprocess.run([sys.executable, "-m", "fasttext_lib", *args], stdout=sink, stderr=subprocess.PIPE,
                                  env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)
        finally:
            os.close(sink)

    r = run(os.open("/dev/full", os.O_WRONLY))
    r.stdout, r.stderr = "", r.stderr.decode()
    assert_error(r, "cannot write to standard output: No space left on device")
    reader, sink = os.pipe()
    os.close(reader)
    r = run(sink)
    assert (r.returncode, r.stderr.decode()) == (141, "")
    written = subprocess.run([sys.executable, "-m", "fasttext_lib", *args], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)
    assert (written.returncode, written.stderr) == (0, "") and written.stdout.startswith("usage: ")


@pytest.mark.parametrize("command", ["export-vectors", "sample"])
def test_a_summary_line_stdout_cannot_take_leaves_the_output_as_it_was(tmp_path, bundle, command):
    """``export-vectors ... > /dev/full`` and ``sample ... > /dev/full`` published their files, then failed on the summary
    line (exit 2): a command that failed had replaced the user's file (with --overwrite). The summary is now written
    before the files are put in place, as train's answers are before its bundle: one error line, exit 2, and the old
    files (or none) where they were. A closed pipe ends it quietly (141), the same way."""
    out = tmp_path / "out"
    args = (["export-vectors", "--model", bundle, "--output", out / "v.vec"] if command == "export-vectors"
            else ["sample", "--output", out])
    names = ["v.vec"] if command == "export-vectors" else ["train.csv", "test.csv"]

    def run(sink, *extra):
        try:
            r = subprocess.run([sys.executable, "-m", "fasttext_lib", *map(str, args), *extra], stdout=sink,
                               stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)
        finally:
            os.close(sink)
        r.stdout, r.stderr = "", r.stderr.decode()
        return r

    out.mkdir()
    assert_error(run(os.open("/dev/full", os.O_WRONLY)), "cannot write to standard output: No space left on device")
    assert listing(out) == {}
    for name in names:
        (out / name).write_text("the user's own file\n")
    assert_error(run(os.open("/dev/full", os.O_WRONLY), "--overwrite"), "cannot write to standard output")
    reader, sink = os.pipe()
    os.close(reader)
    r = run(sink, "--overwrite")
    assert (r.returncode, r.stderr) == (141, "")
    assert sorted(listing(out)) == sorted(names)
    assert all((out / name).read_text() == "the user's own file\n" for name in names)
    from conftest import cli_in_process

    written = cli_in_process(*args, "--overwrite")  # (the files it writes: in this process)
    assert written.returncode == 0 and json.loads(written.stdout) and (out / names[0]).read_text() != "the user's own file\n"


@pytest.mark.parametrize("command", ["export-vectors", "sample"])
def test_a_rename_that_fails_is_one_error_line_without_the_summary(tmp_path, bundle, command, monkeypatch):
    """The summary line was written before the local renames, so that stdout refusing it kept the old files; but a
    rename can still fail: another run created the file meanwhile (without --overwrite: the link that takes the name
    refuses it), or the file is busy (EBUSY, with --overwrite). The user saw the summary, then an error line, exit 2.
    The summary is now written once the files are in place, those replaced kept until then: one error line, no
    summary, and the other run's file, or the user's old ones, as they were."""
    from conftest import cli_in_process
    from fasttext_lib.storage import atomic

    out = tmp_path / "out"
    args = (["export-vectors", "--model", bundle, "--output", out / "v.vec"] if command == "export-vectors"
            else ["sample", "--output", out])
    last = out / ("v.vec" if command == "export-vectors" else "test.csv")  # the last file put in place
    out.mkdir()
    link_new = atomic._link_new

    def another_run_first(fd, temp, path):
        if path == str(last):
            last.write_text("another run's file\n")
        return link_new(fd, temp, path)

    monkeypatch.setattr(atomic, "_link_new", another_run_first)
    r = cli_in_process(*args)
    assert_error(r, "already exists")
    assert r.stdout == ""
    assert listing(out) == {last.name: len("another run's file\n")}  # (sample's train.csv, put in place: taken back)

    names = ["v.vec"] if command == "export-vectors" else ["train.csv", "test.csv"]
    for name in names:
        (out / name).write_text("the user's own file\n")
    replace = os.replace

    def busy(src, dst, **kwargs):
        if dst == str(last) and atomic.is_temporary_of(os.path.basename(src), dst):
            raise OSError(errno.EBUSY, "Device or resource busy")
        return replace(src, dst, **kwargs)

    monkeypatch.setattr(atomic.os, "replace", busy)
    r = cli_in_process(*args, "--overwrite")
    assert_error(r, "Device or resource busy")
    assert r.stdout == ""
    assert all((out / name).read_text() == "the user's own file\n" for name in names)
    assert sorted(listing(out)) == sorted(names)
