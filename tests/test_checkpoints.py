"""Per-epoch checkpoints: an interrupted run resumes and ends exactly where an uninterrupted one does."""
import json
import os
import re
import signal
import subprocess
import sys
import time

import boto3
import numpy as np
import pytest

from conftest import ROOT, make_splits, params_of
from fasttext_lib import storage
from fasttext_lib.data import LabeledTexts
from fasttext_lib.errors import FastTextError
from fasttext_lib.synthetic import generate_reviews
from fasttext_lib.config import TrainConfig
from fasttext_lib.train import train


class Crash(Exception):
    pass


@pytest.fixture(scope="module")
def splits():
    return make_splits(2000, 200, seed=5)


def _crash_after(epoch):
    def hook(row):
        if row["epoch"] == epoch:
            raise Crash()
    return hook


def _without_timing(history):
    return [{k: v for k, v in row.items() if k not in ("seconds", "samples_per_s")} for row in history]


@pytest.mark.parametrize("optimizer, ctx, dropout", [("adam", "cpu", 0.2), ("sgd", "cpu", 0.0), ("adam", "cpu:0,1", 0.0)])
def test_resumed_run_ends_with_the_same_parameters(splits, tmp_path, optimizer, ctx, dropout):
    config = TrainConfig(epochs=3, batch_size=128, optimizer=optimizer, ctx=ctx, dropout=dropout, ngrams=2,
                         buckets=20000, progress=False, seed=9)
    whole = train(*splits, config)

    ckpt = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(2))
    assert sorted(os.listdir(ckpt)) == ["epoch-0002"]  # the epoch-1 checkpoint was replaced
    seen = []
    resumed = train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=seen.append)
    assert [row["epoch"] for row in seen] == [3]  # only the missing epoch ran
    for name, value in params_of(whole).items():
        np.testing.assert_array_equal(params_of(resumed)[name], value, err_msg=name)
    assert _without_timing(resumed.history) == _without_timing(whole.history)

    # a finished run resumed again trains nothing and returns the same model
    again = train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=seen.append)
    assert len(seen) == 1 and len(again.history) == 3
    np.testing.assert_array_equal(again.model.word_vectors(), whole.model.word_vectors())


def test_resume_with_settings_from_the_data(splits, tmp_path):
    """lr and batch size left to the data resolve to the same values again, so the run's own
    checkpoint is accepted and it ends as an uninterrupted run; other data resolves to other
    settings, and that checkpoint is refused."""
    config = TrainConfig(epochs=2, ngrams=2, buckets=20000, progress=False, seed=3)
    whole = train(*splits, config)
    ckpt = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
    resumed = train(*splits, config, checkpoint_dir=ckpt)
    assert resumed.config == whole.config and whole.config.lr is not None
    for name, value in params_of(whole).items():
        np.testing.assert_array_equal(params_of(resumed)[name], value, err_msg=name)
    saved = json.load(open(os.path.join(ckpt, "epoch-0002", "checkpoint.json")))["config"]
    assert (saved["lr"], saved["batch_size"]) == (whole.config.lr, whole.config.batch_size)
    half = LabeledTexts(splits[0].labels[:1000], splits[0].texts[:1000])  # other data: other rows, other settings
    with pytest.raises(FastTextError, match="different run"):
        train(half, None, config, checkpoint_dir=ckpt)


def test_checkpoint_of_another_run_is_refused(splits, tmp_path):
    ckpt = str(tmp_path / "ckpt")
    train(*splits, TrainConfig(epochs=1, batch_size=256, progress=False), checkpoint_dir=ckpt)
    with pytest.raises(FastTextError, match="different run"):
        train(*splits, TrainConfig(epochs=1, batch_size=256, emsize=20, progress=False), checkpoint_dir=ckpt)


def test_checkpoints_on_s3(splits, s3_bucket):
    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    ckpt = f"{s3_bucket}/jobs/run1/checkpoints"
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
    bucket = s3_bucket[len("s3://"):]
    keys = sorted(o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket=bucket)["Contents"])
    assert [k.rsplit("/", 1)[0] for k in keys] == ["jobs/run1/checkpoints/epoch-0001"] * 3
    assert [re.sub("-[0-9a-f]{16}", "", k.rsplit("/", 1)[1]) for k in keys] == ["checkpoint.json", "model.params", "optimizer.states"]
    resumed = train(*splits, config, checkpoint_dir=ckpt)
    whole = train(*splits, config)
    np.testing.assert_array_equal(resumed.model.word_vectors(), whole.model.word_vectors())
    keys = {o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket=bucket)["Contents"]}
    assert {k.split("/")[3] for k in keys} == {"epoch-0002"}


def test_checkpoints_on_s3_without_list_bucket(splits, unlisted):
    """A role that may put, get and delete objects but not list them (S3 then answers 403 for a missing
    key): the run saves its checkpoints, resumes from the newest, and removes the older ones."""
    policy, _, dest = unlisted
    ckpt = dest.rsplit("/", 1)[0] + "/checkpoints"
    config = TrainConfig(epochs=3, batch_size=256, progress=False, seed=4)
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(2))
    prefix = storage.split_s3(ckpt)[1] + "/"
    admin = policy.client("admin")

    def epochs_kept():
        listed = admin.list_objects_v2(Bucket=policy.bucket, Prefix=prefix).get("Contents", [])
        return sorted({o["Key"][len(prefix):].split("/")[0] for o in listed})

    assert epochs_kept() == ["epoch-0002"]  # epoch 1's checkpoint was found without a listing and removed
    resumed = train(*splits, config, checkpoint_dir=ckpt)
    assert [row["epoch"] for row in resumed.history] == [1, 2, 3]
    np.testing.assert_array_equal(resumed.model.word_vectors(), train(*splits, config).model.word_vectors())
    assert epochs_kept() == ["epoch-0003"]


def test_killed_cli_run_resumes_from_its_checkpoint(sample_dir, tmp_path):
    """SIGKILL a real training process mid-run, rerun the same command: same bundle as an unbroken run."""
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    ckpt = tmp_path / "ckpt"

    def command(output):
        return [sys.executable, "-m", "fasttext_lib", "train", "--train", str(sample_dir / "train.csv"),
                "--validation", str(sample_dir / "test.csv"), "--output", str(output), "--epochs", "5",
                "--batch-size", "128", "--ngrams", "2", "--buckets", "50000", "--no-progress", "--ctx", "cpu",
                "--checkpoint-dir", str(ckpt)]

    proc = subprocess.Popen(command(tmp_path / "bundle"), env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.time() + 240
    while not (ckpt / "epoch-0002" / "checkpoint.json").exists():
        assert proc.poll() is None and time.time() < deadline, "no checkpoint for epoch 2"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL and not (tmp_path / "bundle").exists()

    resumed = subprocess.run(command(tmp_path / "bundle"), env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    epochs_run = [json.loads(line)["epoch"] for line in resumed.stdout.splitlines() if line.startswith("{")]
    assert epochs_run[0] >= 3 and epochs_run[-1] == 5

    from fasttext_lib.predict import Predictor
    from fasttext_lib.data import read_labeled

    ckpt_free = [c if c != str(ckpt) else str(tmp_path / "ckpt2") for c in command(tmp_path / "whole")]
    whole = subprocess.run(ckpt_free, env=env, capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr
    a, b = Predictor.load(str(tmp_path / "bundle")), Predictor.load(str(tmp_path / "whole"))
    np.testing.assert_array_equal(a.model.word_vectors(), b.model.word_vectors())
    assert a.metrics["history"][-1]["val_loss"] == b.metrics["history"][-1]["val_loss"]
    test = read_labeled(str(sample_dir / "test.csv"))
    assert a.predict(test.texts[:20]) == b.predict(test.texts[:20])
