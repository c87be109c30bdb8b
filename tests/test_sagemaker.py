"""The SageMaker paths, offline: training container, endpoint handlers, SDK objects against moto.

* The training container is simulated as the MXNet training toolkit runs it: ``SM_*`` variables,
  channel folders, ``python fasttext_lib/entry_point.py --key value ...`` in a subprocess whose cwd
  is a staged source_dir (and whose PYTHONPATH is empty, so the staged copy must be importable).
* The endpoint is driven by the real inference toolkits (sagemaker-inference, sagemaker-mxnet-inference
  and MMS's model loader; tests/toolkit_endpoint.py): in-process for the request handling, and the
  packed and SDK-repacked ``model.tar.gz`` from its own ``code/`` in a subprocess.
* Estimator, tuner and model are built with the real sagemaker SDK against the moto server
  (``AWS_ENDPOINT_URL``); the API requests the SDK sends are recorded and checked, and the files it
  uploads are read back.
"""
import ast
import bz2
import codecs
import contextlib
import csv
import gzip
import inspect
import io
import json
import lzma
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import types
import zipfile

import pytest

from conftest import (ROOT, UNRESUMABLE_BEFORE_READING, as_an_older_writer_left_it, edit_checkpoint, exit_modules_probe,
                      gzipped_with_extra, gzipped_with_unfilled_extra, machine_with_memory, modules_at_exit,
                      ole2_header, server_port, staged_only_site, zstd_frame)
from toolkit_endpoint import Endpoint
from fasttext_lib import entry_point as ep
from fasttext_lib import sm_serve, sm_train
from fasttext_lib.bundle import save_bundle, stored_names
from fasttext_lib.data import LabeledTexts, read_labeled
from fasttext_lib.errors import FastTextError
from fasttext_lib.stops import FAILURE_REASON_CHARS
from fasttext_lib.packaging import REQUIREMENTS, fetch_job_model, pack_model, stage_source_dir
from fasttext_lib.predict import Predictor
from fasttext_lib.schedule import default_schedule
from fasttext_lib.writers import write_csv, write_fasttext

def bundle_names(where):
    """config.json and the data files it lists: what a published bundle consists of."""
    from fasttext_lib.storage import read_manifest

    return stored_names(read_manifest(str(where), "config.json"))


ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
REGISTRY = "763104351884.dkr.ecr.us-east-1.amazonaws.com"
FAST = {"epochs": 3, "batch_size": 256, "emsize": 32, "ngrams": 2, "buckets": 5000}
REVIEWS = ["The pasta was great and the staff were friendly!", "Not good. Cold food and a long wait.", ""]
NAMES = {"1": "negative", "2": "positive"}
# a Batch Transform CSV's header record's answer: the answer's field names
HEADER_ANSWER = {"label": "label", "probability": "probability", "class_id": "class_id"}


# --------------------------------------------------------------------------------------------
# helpers: a training container, the toolkit's argv, a serving request
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def source_dir(tmp_path_factory):
    return stage_source_dir(tmp_path_factory.mktemp("staged") / "code")


@pytest.fixture(scope="module")
def splits(sample_dir):
    return read_labeled(sample_dir / "train.csv"), read_labeled(sample_dir / "test.csv")


def make_container(root, channels, hosts=("algo-1",), current_host="algo-1", extra_env=None):
    """An /opt/ml-like tree under ``root``; ``channels``: name -> {relative file name: writer(path)}."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SM_", "DMLC_")) and k != "PYTHONPATH"}
    env.update(PYTHONPATH=staged_only_site(root / "site"), OMP_NUM_THREADS="1", SM_MODEL_DIR=str(root / "model"), SM_OUTPUT_DIR=str(root / "output"),
               SM_OUTPUT_DATA_DIR=str(root / "output" / "data"),
               SM_HOSTS=json.dumps(list(hosts)), SM_CURRENT_HOST=current_host, SM_NUM_GPUS="0")
    (root / "model").mkdir(parents=True)
    (root / "output" / "data").mkdir(parents=True)
    for name, files in channels.items():
        channel = root / "input" / "data" / name
        channel.mkdir(parents=True)
        for rel, write in files.items():
            (channel / rel).parent.mkdir(parents=True, exist_ok=True)
            write(str(channel / rel))
        env[f"SM_CHANNEL_{name.upper()}"] = str(channel)
    env.update(extra_env or {})
    return env


def run_entry_point(source_dir, env, args):
    return subprocess.run([sys.executable, "fasttext_lib/entry_point.py", *map(str, args)], cwd=str(source_dir), env=env,
                          capture_output=True, text=True, timeout=600)


def job_in_process(source_dir, env, args):
    """The training job's ``sm_train.main`` in this process, with ``env`` as its environment, answered
    like :func:`run_entry_point`: for cases whose answer is under test rather than the process (the
    library imported is this checkout's, not ``source_dir``'s)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = sm_train.main([str(a) for a in args], environ=env)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def toolkit_argv(hyperparameters):
    """What the training toolkit passes the script: JSON-decoded values, ``sagemaker_*`` dropped, sorted keys, a dict
    as ``key=value,...``."""
    decoded = {}
    for key, value in hyperparameters.items():
        if key.startswith("sagemaker_"):
            continue
        try:
            decoded[key] = json.loads(value)
        except (TypeError, ValueError):
            decoded[key] = value
    argv = []
    for key in sorted(decoded):
        value = decoded[key]
        if isinstance(value, dict):  # (as the toolkit writes a dict: sorted key=value pairs)
            value = ",".join(f"{k}={v}" for k, v in sorted(value.items()))
        argv += [f"--{key}", "" if value is None else str(value)]
    return argv


def args_for(**hyperparameters):
    return [item for key, value in hyperparameters.items() for item in (f"--{key}", value)]


def tar_names(data):
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {os.path.normpath(m.name).lstrip("/"): m for m in tar.getmembers() if m.isfile()}


# --------------------------------------------------------------------------------------------
# the training container
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fasttext_job(source_dir, splits, tmp_path_factory):
    """A job on fastText-format files: two in the train channel (one in a sub-folder), one test file."""
    train, test = splits
    half = len(train) // 2
    channels = {
        "train": {"part-1.train": lambda p: write_fasttext(train.head(half), p),
                  "more/part-2.train": lambda p: write_fasttext(LabeledTexts(train.labels[half:], train.texts[half:]), p),
                  ".manifest": _write(b"\x00\x01 hidden files are skipped")},
        "test": {"sample.test": lambda p: write_fasttext(test, p)},
    }
    root = tmp_path_factory.mktemp("job-fasttext")
    env = make_container(root, channels)
    r = run_entry_point(source_dir, env, args_for(**FAST, optimizer="adam", progress="False")
                        + ["--_tuning_objective_metric", "validation:accuracy"])
    assert r.returncode == 0, r.stdout + r.stderr
    return root, r


def test_training_job_imports_the_staged_library_and_reads_every_file(fasttext_job, source_dir, splits):
    _, r = fasttext_job
    assert f"from {os.path.join(source_dir, 'fasttext_lib')};" in r.stdout  # not the checkout, not site-packages
    assert f"train channel: {len(splits[0])} documents from 2 file(s)" in r.stdout
    assert f"test channel: {len(splits[1])} documents from 1 file(s)" in r.stdout
    assert "ignored arguments: --_tuning_objective_metric validation:accuracy" in r.stdout


def test_training_job_saves_a_bundle_to_the_model_dir(fasttext_job, splits):
    root, _ = fasttext_job
    model_dir = root / "model"
    assert sorted(os.listdir(model_dir)) == sorted(bundle_names(model_dir))
    assert all(oct(os.stat(model_dir / n).st_mode & 0o777) == oct(0o644) for n in bundle_names(model_dir))
    predictor = Predictor.load(model_dir)
    train_config = predictor.config["train_config"]
    assert {k: train_config[k] for k in FAST} == FAST and train_config["progress"] is False
    assert train_config["ctx"] == "cpu"  # SM_NUM_GPUS=0
    metrics = predictor.evaluate(splits[1])
    assert metrics["accuracy"] >= 0.7  # chance is 0.5
    assert metrics["accuracy"] == pytest.approx(predictor.metrics["final"]["val_accuracy"])


def test_training_job_writes_metrics_and_plot(fasttext_job):
    import pandas as pd

    root, _ = fasttext_job
    out = root / "output" / "data"
    assert sorted(os.listdir(out)) == ["history.csv", "history.png", "metrics.json"]
    history = pd.read_csv(out / "history.csv")
    assert list(history.epoch) == [1, 2, 3] and history.test_accuracy.notna().all()  # (the test channel's scores)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["final"]["val_accuracy"] == pytest.approx(history.test_accuracy.iloc[-1])
    assert metrics["train_config"]["emsize"] == 32 and metrics["hosts"] == ["algo-1"] and metrics["train_kwargs"] == {}
    assert (out / "history.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("channel", ["validation", "test", None])
def test_the_jobs_history_is_notebook_02s_table_and_plot_naming_its_channel(channel, source_dir, splits, tmp_path,
                                                                           monkeypatch):
    """The job drew history.png with a copy of notebook 02's plot that labeled the held-out line "test accuracy"
    and "test" whatever the channel (a validation channel's too), without 02's whole-epoch ticks, and wrote
    history.csv by hand: "nan" where 02's table (history_frame) leaves the cell empty. Both are 02's now, the plot's
    held-out line named as the channel, or not drawn where the job had none. The table's held-out columns were
    val_loss and val_accuracy whatever the channel (a test channel's scores as a validation split's): they are named
    as the channel now (test_accuracy, validation_accuracy), and there are none where the job had none."""
    import matplotlib

    matplotlib.use("Agg")
    from fasttext_lib import figures

    drawn = []
    real_plot = figures.plot_history
    monkeypatch.setattr(figures, "plot_history", lambda fig, history, held_out, title: drawn.append(
        (fig, history, held_out)) or real_plot(fig, history, held_out, title))
    train, test = splits
    channels = {"train": {"a.csv": lambda p: write_csv(train.head(600), p)}}
    if channel:
        channels[channel] = {"b.csv": lambda p: write_csv(test.head(200), p)}
    job = job_in_process(source_dir, make_container(tmp_path, channels), args_for(**{**FAST, "epochs": 1},
                                                                                  progress="False"))
    assert job.returncode == 0, job.stderr
    [(fig, history, held_out)] = drawn
    assert held_out == channel and list(history.index) == [1]
    labels = [[line.get_label() for line in ax.lines] for ax in fig.axes]
    assert labels == ([[channel], ["train", channel]] if channel else [[], ["train"]])
    table = (tmp_path / "output" / "data" / "history.csv").read_text()
    assert table == history.to_csv()  # 02's table: the model's history_frame
    held_out = f"{channel}_loss,{channel}_accuracy," if channel else ""
    assert table.splitlines()[0] == f"epoch,train_loss,{held_out}seconds,samples_per_s"
    assert "nan" not in table.lower() and ",," not in table


def test_training_log_matches_the_metric_definitions(fasttext_job):
    import pandas as pd

    root, r = fasttext_job
    history = pd.read_csv(root / "output" / "data" / "history.csv")
    # (SageMaker's metric names and the log line's val_ keys stay as the tuner's objective names them; history.csv names
    # the channel the job scored: its test channel here)
    columns = {"train:loss": "train_loss", "validation:loss": "test_loss", "validation:accuracy": "test_accuracy"}
    for definition in sm_train.METRIC_DEFINITIONS:  # what SageMaker (and the tuner) read from the log
        values = [float(v) for v in re.findall(definition["Regex"], r.stdout)]
        assert values == pytest.approx(list(history[columns[definition["Name"]]]), abs=1e-6), definition


def test_training_job_on_csv_files_without_test_channel(source_dir, splits, tmp_path):
    train, _ = splits
    channels = {"train": {"a.csv": lambda p: write_csv(train.head(1000), p),
                          "b.csv": lambda p: write_csv(LabeledTexts(train.labels[1000:2000], train.texts[1000:2000]), p)}}
    env = make_container(tmp_path, channels)
    r = job_in_process(source_dir, env, args_for(epochs=2, batch_size=256, optimizer="sgd", lr="", ngrams=1))
    assert r.returncode == 0, r.stderr
    assert "train channel: 2000 documents from 2 file(s)" in r.stdout
    assert len(re.findall(sm_train.METRIC_PATTERNS["train:loss"], r.stdout)) == 2
    assert re.findall(sm_train.VAL_ACCURACY_REGEX, r.stdout) == []  # nan: no value for the tuner to read
    assert "val_accuracy=nan;" in r.stdout
    config = Predictor.load(tmp_path / "model").config["train_config"]
    # lr "" means "from the data": the bundle records the value the schedule chose for 2000 documents
    assert config["optimizer"] == "sgd" and config["epochs"] == 2 and config["batch_size"] == 256
    assert config["lr"] == default_schedule(2000, 0, 2, 1, 2, batch_size=256)["lr"]
    assert f"sgd lr={config['lr']:g} batch=256" in r.stdout


def test_a_job_that_succeeds_removes_an_earlier_jobs_failure_reason(source_dir, splits, tmp_path):
    """A local rerun in the same /opt/ml tree: the failed job's ``failure`` file was left beside the new
    job's bundle, so the tree said the job had failed."""
    train, _ = splits
    env = make_container(tmp_path, {"train": {"a.csv": lambda p: write_csv(train.head(300), p)}})
    failed = job_in_process(source_dir, env, args_for(epochs=1, learning_rate=0.5))
    assert failed.returncode == 2 and (tmp_path / "output" / "failure").exists()
    ok = job_in_process(source_dir, env, args_for(epochs=1, ngrams=1, progress="False"))
    assert ok.returncode == 0, ok.stderr
    assert not (tmp_path / "output" / "failure").exists()
    assert Predictor.load(tmp_path / "model").config["train_config"]["epochs"] == 1


def test_training_job_imports_mxnet_without_scipy(source_dir, splits, tmp_path):
    # The job's process imports MXNet with SciPy kept out (lean_import.py: ~53 MB less peak memory).
    train, _ = splits
    env = make_container(tmp_path, {"train": {"a.csv": lambda p: write_csv(train.head(500), p)}},
                         extra_env={"PYTHONPATH": exit_modules_probe(tmp_path / "probe", staged_only=True)})
    r = run_entry_point(source_dir, env, args_for(epochs=1, batch_size=256, ngrams=1))
    assert r.returncode == 0, r.stdout + r.stderr
    modules = modules_at_exit(r.stderr)
    assert "mxnet" in modules and "fasttext_lib" in modules and "scipy" not in modules


@pytest.mark.parametrize("hyperparameter, expected", [
    (None, {"1": "bad", "2": "good"}),  # the classes.txt in the channel
    ("1=negative,2=positive", NAMES),  # the hyperparameter wins
    ("none", {}),
])
def test_training_job_takes_label_names_from_the_channel_or_the_hyperparameter(source_dir, tmp_path, hyperparameter,
                                                                               expected):
    channels = {"train": {"a.train": GOOD, "classes.txt": _write(b"bad\ngood\n")}}
    env = make_container(tmp_path, channels)
    extra = {} if hyperparameter is None else {"label_names": hyperparameter}
    r = job_in_process(source_dir, env, args_for(epochs=1, batch_size=16, **extra))
    assert r.returncode == 0, r.stderr
    assert "train channel: 40 documents from 1 file(s)" in r.stdout  # classes.txt is not data
    predictor = Predictor.load(tmp_path / "model")
    assert predictor.label_names == expected
    assert json.loads((tmp_path / "output" / "data" / "metrics.json").read_text())["label_names"] == expected


@pytest.mark.parametrize("channel, names_file, content", [
    ("test", "classes.txt", b"bad\ngood\n"),  # the Zhang et al. layout
    ("validation", "a.classes.txt", b"1=bad\n2=good\n"),  # what prepare writes beside a.test
])
def test_training_job_takes_label_names_from_the_test_channel_when_the_train_channel_has_none(
        source_dir, tmp_path, channel, names_file, content):
    """A names file in the test (or validation) channel was skipped as not data and never read: the bundle said the
    classes' ids, where train --validation and notebook 01 take the names beside the test data."""
    channels = {"train": {"a.train": GOOD}, channel: {"a.test": GOOD, names_file: _write(content)}}
    r = job_in_process(source_dir, make_container(tmp_path, channels), args_for(epochs=1, batch_size=16))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "label names: 1=bad, 2=good" in r.stdout
    assert Predictor.load(tmp_path / "model").label_names == {"1": "bad", "2": "good"}


def test_training_job_refuses_a_test_channel_names_file_numbered_unlike_the_training_data(source_dir, tmp_path):
    """The test channel's names name the training data's classes, and are checked against them as the train
    channel's are: a Zhang classes.txt (line 1 names class 1) beside classes 0 and 1 would call class 1 'bad'."""
    zero_one = _write(b"__label__0 bad food\n__label__1 good food\n" * 20)
    channels = {"train": {"a.train": zero_one}, "test": {"a.test": zero_one, "classes.txt": _write(b"bad\ngood\n")}}
    r = job_in_process(source_dir, make_container(tmp_path, channels), args_for(epochs=1, batch_size=16))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert re.match(r"error: .*/test/classes\.txt names class\(es\) '2' .* numbering is not the data's", last), last
    assert (tmp_path / "output" / "failure").read_text() == last
    assert os.listdir(tmp_path / "model") == []


def test_a_test_channel_names_file_is_checked_against_both_channels_classes_as_the_cli_checks_it(source_dir, tmp_path):
    """A names file beside the test channel only named the training data's classes after a check against the train
    channel's classes alone, where train --validation checks it against both files' (read_and_train.read_splits): a
    classes.txt (line 1 names class 1) beside test data of classes 0, 1 and 2, the train channel holding 1 and 2, was
    taken ('label names: 1=bad, 2=ok', each name one class off), and the job then failed on the test channel's
    class 0 'not seen in training (known: 1 (bad), 2 (ok))'. It is refused as the CLI refuses it: the same line."""
    from conftest import cli_in_process

    train = _write(b"__label__1 bad food\n__label__2 good food\n" * 20)
    test = _write(b"__label__0 awful\n__label__1 bad food\n__label__2 good food\n" * 5)
    names = _write(b"bad\nok\ngood\n")
    r = job_in_process(source_dir, make_container(tmp_path / "job", {"train": {"a.train": train},
                                                                      "test": {"a.test": test, "classes.txt": names}}),
                       args_for(epochs=1, batch_size=16))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "label names:" not in r.stdout, r.stdout
    last = r.stderr.strip().splitlines()[-1]
    (tmp_path / "cli" / "test").mkdir(parents=True)
    train(str(tmp_path / "cli" / "a.train"))
    test(str(tmp_path / "cli" / "test" / "a.test"))
    names(str(tmp_path / "cli" / "test" / "classes.txt"))
    cli = cli_in_process("train", "--train", tmp_path / "cli" / "a.train", "--validation",
                         tmp_path / "cli" / "test" / "a.test", "--output", tmp_path / "cli" / "out", "--epochs", "1")
    assert cli.returncode == 2, cli.stderr
    said_by_cli = cli.stderr.strip().splitlines()[-1].replace(str(tmp_path / "cli"), str(tmp_path / "job/input/data"))
    assert last == said_by_cli.replace("--label-names", "label_names"), (last, said_by_cli)
    assert re.search(r"classes\.txt names class\(es\) '3' .* but not its class\(es\) '0': its numbering is not the "
                     r"data's .*: label_names 0=bad,1=ok,2=good$", last), last
    assert (tmp_path / "job" / "output" / "failure").read_text() == last


@pytest.mark.parametrize("test_name", ["test", "validation"])
def test_a_class_the_train_channel_lacks_is_said_of_the_test_channel_by_its_name(source_dir, tmp_path, test_name):
    """A test channel's class the training data lacks was said of "validation data" (train()'s default name for its
    validation data), which the CLI says as its --validation file: the job names its channel, as given."""
    channels = {"train": {"a.train": GOOD}, test_name: {"a.test": _write(b"__label__3 so-so food\n" + b"__label__1 bad\n")}}
    r = job_in_process(source_dir, make_container(tmp_path, channels), args_for(epochs=1, batch_size=16))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: the {test_name} channel has label(s) '3' (line 1 of {tmp_path}/input/data/"
                           f"{test_name}/a.test) not seen in training"), last


@pytest.mark.parametrize("test_name", ["test", "validation"])
def test_training_job_refuses_names_files_in_both_channels_that_disagree_before_reading_data(source_dir, tmp_path,
                                                                                            monkeypatch, test_name):
    """Names files in the train and test channels naming a class differently: the test channel's went unread and
    unsaid. Which is right is the user's to say: one line before any channel's data is read, naming label_names as
    the other way out; with label_names given, the job trains. A channel given as validation is named so (it was
    called the test channel)."""
    def read_channel(*args, **kwargs):
        raise AssertionError("a channel was read before the names files were refused")

    real_read_channel = sm_train.read_channel
    monkeypatch.setattr(sm_train, "read_channel", read_channel)
    channels = {"train": {"a.train": GOOD, "classes.txt": _write(b"bad\ngood\n")},
                test_name: {"a.test": GOOD, "classes.txt": _write(b"negative\npositive\n")}}
    r = job_in_process(source_dir, make_container(tmp_path / "job", channels), args_for(epochs=1, batch_size=16))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last == (f"error: the train channel's classes.txt and the {test_name} channel's classes.txt name the classes "
                    "differently (class '1': 'bad' and 'negative'): make them the same, or remove the one that is "
                    "wrong (or give the label_names hyperparameter)"), last
    assert (tmp_path / "job" / "output" / "failure").read_text() == last
    assert os.listdir(tmp_path / "job" / "model") == []

    monkeypatch.setattr(sm_train, "read_channel", real_read_channel)
    r = job_in_process(source_dir, make_container(tmp_path / "named", channels),
                       args_for(epochs=1, batch_size=16, label_names="1=negative,2=positive"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert Predictor.load(tmp_path / "named" / "model").label_names == NAMES


def _write(content):
    def write(path):
        with open(path, "wb") as f:
            f.write(content)
    return write


def test_training_job_starts_from_a_pretrained_channel(source_dir, splits, tmp_path):
    """fit({"train": ..., "pretrained": "s3://.../x.vec"}): the channel's one .vec file starts the word rows."""
    train, _ = splits
    vec = b"2 32\n" + b"".join(w + b" " + b" ".join(b"%d" % (i + k) for k in range(32)) + b"\n"
                                for i, w in enumerate((b"<unk>", b"zzznotaword")))
    channels = {"train": {"a.csv": lambda p: write_csv(train.head(500), p)}, "pretrained": {"wiki.vec": _write(vec)}}
    env = make_container(tmp_path, channels)
    r = job_in_process(source_dir, env, args_for(epochs=1, batch_size=256, emsize=32))
    assert r.returncode == 0, r.stdout + r.stderr
    model = Predictor.load(tmp_path / "model")
    # the line the CLI and autotune say (pretrained.start_line), not one of the job's own ("... 2 words from F; ...")
    vectors = model.config["train_config"]["pretrained_vectors"]
    assert (f"pretrained vectors: 1 of the {model.config['pretrained_vectors']['vocab_size']} vocabulary words start "
            f"from {vectors} (2 words, dim 32)") in r.stdout.splitlines(), r.stdout
    assert model.config["pretrained_vectors"]["rows_initialized"] == 1  # <unk>; the other word is not in the vocabulary
    assert model.config["train_config"]["pretrained_vectors"].endswith("pretrained/wiki.vec")
    assert model.model.embedding_table()[0].tolist() == list(range(32))  # <unk> never occurs in training


@pytest.mark.parametrize("progress", ["true", "false"])
def test_a_job_says_the_pretrained_vectors_line_once(source_dir, splits, tmp_path, progress):
    """With progress=true the job's log said "pretrained vectors: ..." twice: train said it as training started (as
    the CLI's train does) and the job again after training. Once, whichever progress is."""
    train, _ = splits
    vec = b"1 8\n<unk> " + b" ".join(b"1" for _ in range(8)) + b"\n"
    channels = {"train": {"a.csv": lambda p: write_csv(train.head(200), p)}, "pretrained": {"wiki.vec": _write(vec)}}
    r = job_in_process(source_dir, make_container(tmp_path, channels), args_for(epochs=1, emsize=8, progress=progress))
    assert r.returncode == 0, r.stdout + r.stderr
    log = (r.stdout + r.stderr).splitlines()
    assert len([line for line in log if line.startswith("pretrained vectors: ")]) == 1, log


def test_a_pretrained_file_of_another_dimension_names_the_jobs_emsize_hyperparameter(source_dir, tmp_path):
    """A pretrained .vec of another dimension than emsize failed the job with "train with --emsize 32": the command
    line's flag, which a job has none of. It names the hyperparameter."""
    vec = b"1 32\n<unk> " + b" ".join(b"1" for _ in range(32)) + b"\n"
    channels = {"train": {"a.txt": GOOD}, "pretrained": {"wiki.vec": _write(vec)}}
    env = make_container(tmp_path, channels)
    r = job_in_process(source_dir, env, args_for(epochs=1, emsize=16))
    assert r.returncode != 0 and r.stderr.rstrip().endswith(
        "but the model's emsize is 16: they must be equal (train with the hyperparameter emsize=32)"), r.stderr


GOOD = _write(b"__label__1 bad food\n__label__2 good food\n" * 20)


@pytest.mark.parametrize("vectors", ["s3://bucket/vectors/wiki.en.vec", "/opt/ml/input/other.vec"])
def test_a_pretrained_channel_beside_a_pretrained_vectors_uri_is_refused_not_left_unread(source_dir, tmp_path, vectors):
    """Both given: the hyperparameter's file was read and the channel (downloaded, gigabytes for wiki.en.vec) left
    unread without a word; which of the two the user meant is theirs to say."""
    vec = _write(b"2 16\nbad " + b"0.1 " * 15 + b"0.1\ngood " + b"0.2 " * 15 + b"0.2\n")
    env = make_container(tmp_path, {"train": {"a.train": GOOD}, "pretrained": {"wiki.vec": vec}})
    r = job_in_process(source_dir, env, args_for(epochs=1, emsize=16, pretrained_vectors=vectors))
    last = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 2 and last == (
        f"error: both the pretrained channel ({tmp_path}/input/data/pretrained) and the pretrained_vectors "
        f"hyperparameter ({vectors}) name the pretrained vectors: give one (pretrained_vectors may name a file of the "
        f"channel)"), r.stdout + r.stderr
    assert "train channel:" not in r.stdout
    # a path into the channel is a file of it
    inside = str(tmp_path / "input" / "data" / "pretrained" / "wiki.vec")
    assert job_in_process(source_dir, env, args_for(epochs=1, emsize=16, pretrained_vectors=inside)).returncode == 0


def test_a_job_given_pretrained_vectors_dash_is_told_what_a_job_reads(source_dir, tmp_path):
    """pretrained_vectors=- with no pretrained channel was refused with the command line's advice, "give
    pretrained_vectors /dev/stdin": a training job has no standard input to read the vectors from. The job's line
    says what a job reads (the pretrained channel, or an s3:// URI), before the data is read."""
    env = make_container(tmp_path, {"train": {"a.train": GOOD}})
    r = job_in_process(source_dir, env, args_for(epochs=1, emsize=16, pretrained_vectors="-"))
    last = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 2 and last == (
        "error: pretrained_vectors -: a training job has no standard input to read the vectors from; give them as "
        "the pretrained channel (fit({'train': ..., 'pretrained': 's3://bucket/wiki.en.vec'})) or as an s3:// URI "
        "(pretrained_vectors=s3://bucket/wiki.en.vec)"), r.stdout + r.stderr
    assert "/dev/stdin" not in r.stderr and "train channel:" not in r.stdout



@pytest.mark.parametrize("kind", ["standard input", "a pipe", "a device", "a directory"])
def test_a_job_given_vectors_that_are_no_file_is_one_error_before_the_data(source_dir, tmp_path, kind):
    """pretrained_vectors=/dev/stdin (or a FIFO, a device, a directory) with no pretrained channel: a job has no one
    to write a pipe or standard input. It was taken as given: the start check skips what can be read once only, the
    data was read, then the read of the vectors waited for a writer that never comes (a FIFO, a pipe kept open) or met
    "an empty file" (/dev/null). Now one line before the data, naming what the name is and what a job reads."""
    if kind == "standard input":
        value, said = "/dev/stdin", "a training job has no standard input to read the vectors from"
    elif kind == "a pipe":
        value, said = str(tmp_path / "fifo"), "a pipe, not a file: a training job reads the vectors from a file"
        os.mkfifo(value)
    elif kind == "a device":
        value, said = "/dev/null", "a device, not a file: a training job reads the vectors from a file"
    else:
        value, said = str(tmp_path / "vectors"), "a directory, not a file: a training job reads the vectors from a file"
        os.mkdir(value)
    env = make_container(tmp_path / "job", {"train": {"a.train": GOOD}})
    r = job_in_process(source_dir, env, args_for(epochs=1, emsize=16, pretrained_vectors=value))
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1] == (
        f"error: pretrained_vectors {value}: {said}; give them as the pretrained channel (fit({{'train': ..., "
        f"'pretrained': 's3://bucket/wiki.en.vec'}})) or as an s3:// URI (pretrained_vectors=s3://bucket/wiki.en.vec)"), \
        r.stdout + r.stderr
    assert "train channel:" not in r.stdout

@pytest.mark.parametrize("case, pattern", [
    ("no train channel", r"no train channel \(this job's channels: test\): give the training data as fit\("),
    ("empty train channel", r"train channel .* holds no files"),
    ("binary data", r"not UTF-8 text|not a text file"),
    ("unknown test label", r"label\(s\) '3' \(line 1 of .*/test/t\.test\) not seen in training"),  # (its file)
    ("bad integer", r"bad hyperparameter: argument --epochs: expected an integer, got 'three'"),
    ("bad boolean", r"bad hyperparameter: argument --progress: expected true or false"),
    ("unknown optimizer", r"optimizer must be one of sgd, adam"),
    ("zero batch size", r"batch_size must be a positive integer"),
    ("misspelt hyperparameter", r"unknown hyperparameter\(s\): learning_rate \(did you mean lr\?\), emsise \(did you mean emsize\?\); known: "),
    # every epoch was trained, then the bundle refused the folder it found in the model dir
    ("checkpoints inside the model dir", r"checkpoint_dir .*/model/ckpt is the SM_MODEL_DIR directory or inside it"),
    ("two hosts without parameter server", r"2 hosts but no parameter server"),
    ("bad pretrained vectors", r"wiki\.vec:2: expected a word and 100 values, got 2"),
    ("label names file with a duplicate", r"classes.txt: classes '1' and '2' have the same name 'x'"),
    ("label names for an unknown class", r"label_names gives a name to class\(es\) '3' that the training data does not have"),
    ("label names files that disagree", r"train channel holds label names files that disagree: a.classes.txt, classes.txt"),
    # read before the data (it came after reading all of it): its error is the one shown
    ("bad label names beside broken data", r"classes.txt: classes '1' and '2' have the same name 'x'"),
    # a traceback once every epoch was trained, with the bundle already saved in the model dir
    # argparse's own -h / --help: the job printed its usage and exited 0, a "Completed" job with an empty model dir
    ("hyperparameter named help", r"unknown hyperparameter\(s\): help; known: "),
    ("hyperparameter named h", r"unknown hyperparameter\(s\): h; known: "),
    # the toolkit passes a one-letter name as -e: it was ignored, and the job trained with the default epochs
    ("one-letter hyperparameter", r"unknown hyperparameter\(s\): e; known: "),
    ("output data dir under a file", r"cannot create .*/afile/data: .*/afile is not a directory"),
    # a name that is a number: only logged as "ignored arguments", where every other unknown name stops the job
    ("one-digit hyperparameter", r"unknown hyperparameter\(s\): 5; known: "),
    ("numeric hyperparameter", r"unknown hyperparameter\(s\): 1e3, 55; known: "),
    # a name "" was only logged as ignored; "-" came as "--", argparse's end of options, and the names after it were
    # refused as unknown ("epochs (did you mean epochs?)") or, after a known one, not read at all
    ("empty hyperparameter name", r"^error: bad hyperparameter name\(s\): '' \(a name must not be empty, blank or only "
                                  r"dashes\)$"),
    ("dash hyperparameter name", r"^error: bad hyperparameter name\(s\): '-' \(a name must not be empty, blank or only "
                                 r"dashes\)$"),
    ("hyperparameters named - and ---", r"^error: bad hyperparameter name\(s\): '-', '---' \(a name must not be "
                                        r"empty, blank or only dashes\)$"),
    ("unknown ctx", r"^error: unknown ctx 'tpu': use auto, cpu, cpu:N, gpu, gpu:N or gpu:0,1$"),
    ("too many epochs", r"^error: epochs must be at most 100000 .*, got 100000000000000000000$"),
    # MXNet's C++ CHECK on DMLC_NUM_WORKER, with its traceback, once the data had been read
    ("dist kvstore on one host", r"kvstore='dist_sync' trains in an MXNet parameter-server cluster, and this "
                                 r"process is in none \(DMLC_PS_ROOT_URI, .* not set\): on one host leave "
                                 r"kvstore='auto';"),
    # a job process of its own: with MXNet's operators still queued at exit it could abort (-6) after the error line
    ("diverging lr", r"training diverged"),
])
def test_training_job_errors_are_one_line(source_dir, tmp_path, case, pattern):
    channels, args, hosts, extra = {"train": {"a.train": GOOD}}, args_for(epochs=1), ("algo-1",), None
    if case == "no train channel":
        channels = {"test": {"a.test": GOOD}}
    elif case == "empty train channel":
        channels = {"train": {}}
    elif case == "binary data":
        channels = {"train": {"a.train": _write(b"\xff\xfe\x00\x01binary")}}
    elif case == "unknown test label":
        channels["test"] = {"t.test": _write(b"__label__3 odd\n")}
    elif case == "bad integer":
        args = args_for(epochs="three")
    elif case == "bad boolean":
        args = args_for(progress="maybe")
    elif case == "unknown optimizer":
        args = args_for(optimizer="rmsprop")
    elif case == "zero batch size":
        args = args_for(batch_size=0)
    elif case == "misspelt hyperparameter":  # it trained a whole job with the default lr and epochs
        args = args_for(epochs=1) + ["--learning_rate", "0.5", "--emsise", "50", "--_tuning_objective_metric", "x"]
    elif case == "checkpoints inside the model dir":
        args = args_for(epochs=1, checkpoint_dir=tmp_path / "model" / "ckpt")
    elif case == "bad pretrained vectors":
        channels["pretrained"] = {"wiki.vec": _write(b"1 100\nword 1 2\n")}
    elif case == "label names file with a duplicate":
        channels["train"]["classes.txt"] = _write(b"x\nx\n")
    elif case == "label names for an unknown class":
        args = args_for(epochs=1, label_names="1=bad,3=odd")
    elif case == "bad label names beside broken data":
        channels["train"] = {"a.train": _write(b"__label__1 bad food\n__label__2 good food\n" * 20 + b"no label\n"),
                             "classes.txt": _write(b"x\nx\n")}
    elif case == "label names files that disagree":
        channels["train"].update({"classes.txt": _write(b"bad\ngood\n"), "a.classes.txt": _write(b"1=neg\n2=pos\n")})
    elif case.startswith("hyperparameter named"):
        args = args_for(epochs=1) + ["--help" if case.endswith("help") else "-h", "1"]
    elif case == "one-letter hyperparameter":
        args = args_for(epochs=1) + ["-e", "5"]
    elif case == "one-digit hyperparameter":  # the toolkit's -5 1 for {"5": 1}
        args = args_for(epochs=1) + ["-5", "1"]
    elif case == "numeric hyperparameter":
        args = ["--1e3", "-1", "--55", "-2"] + args_for(epochs=1)  # the toolkit's for {"1e3": -1, "55": -2, ...}
    elif case == "empty hyperparameter name":  # the toolkit's for {"": 1, "epochs": 1}: the name "" as the word ""
        args = ["", "1"] + args_for(epochs=1)
    elif case == "dash hyperparameter name":  # the toolkit's for {"-": 1, "epochs": 1, "lrr": 2}: -, one letter, as --
        args = ["--", "1"] + args_for(epochs=1, lrr=2)
    elif case == "hyperparameters named - and ---":  # {"-": 1, "---": 2, "epochs": 1}: "---" as ----- (--NAME)
        args = ["--", "1", "-----", "2"] + args_for(epochs=1)
    elif case == "unknown ctx":
        args = args_for(epochs=1, ctx="tpu")
    elif case == "too many epochs":
        args = args_for(epochs=10**20)
    elif case == "output data dir under a file":
        (tmp_path / "afile").write_text("")
        extra = {"SM_OUTPUT_DATA_DIR": str(tmp_path / "afile" / "data")}
    elif case == "dist kvstore on one host":
        args = args_for(epochs=1, kvstore="dist_sync")
    elif case == "diverging lr":
        args = args_for(epochs=2, lr=1e30)
    else:
        hosts = ("algo-1", "algo-2")
    env = make_container(tmp_path, channels, hosts=hosts, extra_env=extra)
    # one job process (the staged library, the whole of its stderr); the other cases in-process
    r = (run_entry_point if case in ("no train channel", "diverging lr") else job_in_process)(source_dir, env, args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and re.search(pattern, last), last
    assert os.listdir(tmp_path / "model") == []
    # what the console shows as FailureReason: the toolkit keeps this file rather than writing its own
    assert (tmp_path / "output" / "failure").read_text() == last


def _job_on_two_hosts(source_dir, tmp_path, train_channels, algo_2_hook=""):
    """The training job on hosts algo-1 and algo-2 (each under ``tmp_path / host``, its train channel's files
    ``train_channels[host]``), with the scheduler and server SageMaker's toolkit starts -> each host's (stderr, exit
    status). ``algo_2_hook``: code algo-2's job runs once fasttext_lib.train is imported (a thread that waits for it
    patches it before it trains)."""
    hosts = ("algo-1", "algo-2")
    cluster = dict(DMLC_PS_ROOT_URI="127.0.0.1", DMLC_PS_ROOT_PORT=str(server_port()), DMLC_NUM_SERVER="1",
                   DMLC_NUM_WORKER="2", DMLC_INTERFACE="lo", DMLC_NODE_HOST="127.0.0.1")
    envs = [make_container(tmp_path / host, {"train": train_channels[host]}, hosts=hosts, current_host=host,
                           extra_env=dict(cluster, DMLC_ROLE="worker")) for host in hosts]
    if algo_2_hook:
        with open(os.path.join(envs[1]["PYTHONPATH"], "sitecustomize.py"), "a") as site:
            site.write("\nimport sys as _s, threading as _th, time as _t\n"
                       "def _hook():\n"
                       "    while 'fasttext_lib.train' not in _s.modules or getattr(_s.modules['fasttext_lib.train']"
                       ".__spec__, '_initializing', False):  # (until its import is done)\n"
                       "        _t.sleep(0.001)\n"
                       "    t = _s.modules['fasttext_lib.train']\n"
                       + "".join(f"    {line}\n" for line in algo_2_hook.splitlines()) +
                       "_th.Thread(target=_hook, daemon=True).start()\n")
    # (the scheduler and the server, which SageMaker's toolkit starts: MXNet imported with their DMLC_ROLE)
    roles = [subprocess.Popen([sys.executable, "-c", "import fasttext_lib, mxnet"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=ROOT, DMLC_ROLE=role, **cluster))
             for role in ("scheduler", "server")]
    jobs = [subprocess.Popen([sys.executable, "fasttext_lib/entry_point.py", *map(str, args_for(epochs=2))],
                             cwd=str(source_dir), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for env in envs]
    try:
        # (a bound on a hang, FASTTEXT_CLUSTER_TIMEOUT's 30 minutes: two jobs, a scheduler and a server importing MXNet
        # on a loaded machine could take more than the 90 s it was)
        return [(job.communicate(timeout=300)[1], job.returncode) for job in jobs]
    finally:
        for process in roles + jobs:
            if process.poll() is None:
                process.kill()
                process.wait()


def test_a_job_on_two_hosts_one_of_whose_channels_is_empty_fails_on_both_in_one_line_naming_it(source_dir, sample_dir,
                                                                                               tmp_path):
    """Every host reads its channels before joining the cluster: a host whose train channel held no files (its
    own copy of the data gone) failed in its line, and the other host waited for it in MXNet's kvstore for
    FASTTEXT_CLUSTER_TIMEOUT (30 minutes), billed, then failed blaming a worker or server that did not join. Both
    now fail at once, the other host's FailureReason naming the host and its reason; no model is saved."""
    copy = lambda path: open(path, "w").write((sample_dir / "train.csv").read_text())  # noqa: E731
    ended = _job_on_two_hosts(source_dir, tmp_path, {"algo-1": {"a.csv": copy}, "algo-2": {}})
    hosts = ("algo-1", "algo-2")
    channel = tmp_path / "algo-2" / "input" / "data" / "train"
    reason = f"train channel {channel} holds no files (check the S3 prefix given to fit())"
    lines = [[line for line in err.splitlines() if line.startswith("error: ")] for err, _ in ended]
    assert [status for _, status in ended] == [2, 2] and lines[1] == [f"error: {reason}"], ended
    assert re.fullmatch(r"error: worker [01] \(host algo-2\) failed before training: " + re.escape(reason),
                        lines[0][0]) and len(lines[0]) == 1, ended
    for host, said in zip(hosts, lines):
        assert (tmp_path / host / "output" / "failure").read_text() == said[0]
        assert os.listdir(tmp_path / host / "model") == []


@pytest.mark.parametrize("case", ["bug", "stop"])
def test_a_job_on_two_hosts_one_of_which_hits_a_bug_or_is_stopped_before_joining_ends_both(source_dir, sample_dir,
                                                                                          tmp_path, case):
    """A host whose job hit a bug (its traceback) or was stopped (StopTrainingJob's SIGTERM on its host, a spot
    instance reclaimed) before it joined the cluster ended, and the other host waited for it in MXNet's kvstore for
    FASTTEXT_CLUSTER_TIMEOUT (30 minutes), billed. It now tells the other, which fails at once naming it."""
    injected = {"bug": "raise RuntimeError('an injected bug')", "stop": "os.kill(os.getpid(), signal.SIGTERM)"}[case]
    hook = ("import os, signal\n"
            "real = t._checked_inputs\n"
            "def checked_inputs(*args, **kwargs):\n"
            f"    {injected}\n"
            "    return real(*args, **kwargs)\n"
            "t._checked_inputs = checked_inputs\n")
    copy = lambda path: open(path, "w").write((sample_dir / "train.csv").read_text())  # noqa: E731
    ended = _job_on_two_hosts(source_dir, tmp_path, {"algo-1": {"a.csv": copy}, "algo-2": {"a.csv": copy}}, hook)
    lines = [[line for line in err.splitlines() if line.startswith("error: ")] for err, _ in ended]
    told = "failed before training: RuntimeError: an injected bug" if case == "bug" else "was stopped before training"
    assert ended[0][1] == 2 and len(lines[0]) == 1, ended
    assert re.fullmatch(r"error: worker [01] \(host algo-2\) " + re.escape(told), lines[0][0]), ended
    assert (tmp_path / "algo-1" / "output" / "failure").read_text() == lines[0][0]
    if case == "bug":
        assert ended[1][1] == 1 and "Traceback" in ended[1][0] and "RuntimeError: an injected bug" in ended[1][0], ended
    else:
        assert ended[1][1] == 143 and lines[1] == ["error: terminated (SIGTERM); stopped and cleaned up"], ended
    for host in ("algo-1", "algo-2"):
        assert os.listdir(tmp_path / host / "model") == []



@pytest.mark.parametrize("variable, value, says", [
    ("OMP_NUM_THREADS", "abc", "environment variable OMP_NUM_THREADS='abc' is not a whole number"),  # aborted (134)
    ("MXNET_EXEC_BULK_EXEC_TRAIN", "yes", "MXNET_EXEC_BULK_EXEC_TRAIN='yes' is not true, false, 1 or 0"),  # traceback
    ("MXNET_ENGINE_TYPE", "garbage", "MXNet cannot start (Cannot find Engine garbage)"),
    ("ulimit -v", 200 << 20, "(ulimit -v): raise that limit"),  # libmxnet cannot be mapped: an OSError traceback
])
def test_a_job_in_an_environment_mxnet_cannot_run_in_ends_in_one_error_line_and_its_failure_reason(
        source_dir, tmp_path, variable, value, says):
    """The CLI checks MXNet's environment before importing it (mxnet_env.start_mxnet); the job did not: a bad
    OMP_NUM_THREADS (the estimator's environment=, or an instance's) aborted inside MXNet's import, exit 134, with
    no line of ours and the toolkit's empty FailureReason. Now the same one line, exit 2, as the job's reason."""
    import resource

    env = make_container(tmp_path, {"train": {"a.train": GOOD}})
    limit = None
    if variable == "ulimit -v":
        limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (value, value))  # noqa: E731
    else:
        env[variable] = value
    r = subprocess.run([sys.executable, "fasttext_lib/entry_point.py", *map(str, args_for(epochs=1))], cwd=str(source_dir),
                       env=env, capture_output=True, text=True, timeout=300, preexec_fn=limit)
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 2 and len(errors) == 1 and says in errors[0], r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
    assert (tmp_path / "output" / "failure").read_text() == errors[0]
    assert os.listdir(tmp_path / "model") == []


# A job process's sitecustomize (beside the one hiding the editable install): the signal SIGNAL_NUMBER is sent to the
# process as it starts importing SIGNAL_AT_IMPORT, at a point of its start-up fixed by the import, not by a sleep.
SIGNAL_AT_IMPORT = """
import importlib.abc, os, signal, sys

class SignalAtImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["SIGNAL_AT_IMPORT"]:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), int(os.environ["SIGNAL_NUMBER"]))  # (its handler runs at the next bytecode)
        return None

sys.meta_path.insert(0, SignalAtImport())
"""


@pytest.mark.parametrize("script, sig, at", [
    ("fasttext_lib/entry_point.py", signal.SIGTERM, "numpy"),  # the package's import (its __init__ imports numpy)
    ("fasttext_lib/entry_point.py", signal.SIGINT, "numpy"),
    ("fasttext_lib/entry_point.py", signal.SIGTERM, "mxnet"),  # main's start of MXNet, before stop_on_signals
    ("fasttext_lib/entry_point.py", signal.SIGINT, "mxnet"),
    ("entry_point.py", signal.SIGTERM, "numpy"),  # the copy at the top of the code directory
    ("entry_point.py", signal.SIGTERM, "mxnet"),
])
def test_a_signal_while_the_job_starts_is_one_error_line_and_its_failure_reason(source_dir, tmp_path, script, sig, at):
    """StopTrainingJob or a spot interruption in the job's first ~1 s (the package's import, sm_serve's, MXNet's
    start), before main's stop_on_signals is armed: SIGTERM killed the job with status -15, no line of ours and no
    failure file (the toolkit's empty ExecuteUserScriptError was the FailureReason); SIGINT printed a
    KeyboardInterrupt traceback. Now the CLI's line at once, the same line as the FailureReason, the signal's status."""
    env = make_container(tmp_path, {"train": {"a.train": GOOD}})
    with open(os.path.join(env["PYTHONPATH"], "sitecustomize.py"), "a") as f:
        f.write(SIGNAL_AT_IMPORT)
    env.update(SIGNAL_AT_IMPORT=at, SIGNAL_NUMBER=str(int(sig)))
    r = subprocess.run([sys.executable, script, *map(str, args_for(epochs=1))], cwd=str(source_dir), env=env,
                       capture_output=True, text=True, timeout=300)
    says = {signal.SIGTERM: "terminated (SIGTERM)", signal.SIGINT: "interrupted (SIGINT)"}[sig]
    assert (r.returncode, r.stderr) == (128 + int(sig), f"error: {says}\n"), r.stdout + r.stderr
    assert (tmp_path / "output" / "failure").read_text() == f"error: {says}"
    assert os.listdir(tmp_path / "model") == [] and sorted(os.listdir(tmp_path / "output")) == ["data", "failure"]


def test_a_signal_while_a_rerun_starts_replaces_the_earlier_jobs_failure_reason(source_dir, tmp_path):
    """A job run again in the same output folder (a local rerun), stopped during the package's import: the failure
    file the earlier job left stayed (main removes it only later, and the stop's line is written only where there is
    none), so the stop was shown as the earlier job's reason. It is this job's stop now."""
    env = make_container(tmp_path, {"train": {"a.train": GOOD}})
    with open(os.path.join(env["PYTHONPATH"], "sitecustomize.py"), "a") as f:
        f.write(SIGNAL_AT_IMPORT)
    (tmp_path / "output" / "failure").write_text("error: the earlier job's reason")
    env.update(SIGNAL_AT_IMPORT="numpy", SIGNAL_NUMBER=str(int(signal.SIGTERM)))
    r = subprocess.run([sys.executable, "fasttext_lib/entry_point.py", *map(str, args_for(epochs=1))],
                       cwd=str(source_dir), env=env, capture_output=True, text=True, timeout=300)
    assert (r.returncode, r.stderr) == (143, "error: terminated (SIGTERM)\n"), r.stdout + r.stderr
    assert (tmp_path / "output" / "failure").read_text() == "error: terminated (SIGTERM)"


def test_the_endpoints_import_of_the_entry_point_changes_no_signal_handler(source_dir, tmp_path):
    """The inference toolkit imports entry_point (code/entry_point.py, or fasttext_lib/entry_point.py as a module) in
    its own server process: the job's start-up handlers are not armed there."""
    probe = ("import signal, sys\n"
             "stops = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGXCPU)]\n"
             "before = [signal.getsignal(s) for s in stops]\n"
             "import importlib; importlib.import_module(sys.argv[1])\n"
             "print(before == [signal.getsignal(s) for s in stops])\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(source_dir), staged_only_site(tmp_path / "site")])
    for module in ("entry_point", "fasttext_lib.entry_point"):
        r = subprocess.run([sys.executable, "-c", probe, module], cwd=str(tmp_path), env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0 and r.stdout.split() == ["True"], (module, r.stdout + r.stderr)


class MXNetError(Exception):  # what MXNet raises, by name (errors.is_out_of_memory does not import mxnet)
    pass


@pytest.mark.parametrize("failure", [MemoryError("native featurization ran out of memory"),
                                     MXNetError("Traceback (most recent call last):\n  File ...\n"
                                                "MXNetError: Failed to allocate CPU Memory")])
def test_a_job_out_of_memory_ends_in_one_error_line_and_its_failure_reason(source_dir, tmp_path, monkeypatch, failure):
    """A job whose machine is too small for its data or settings ended in a MemoryError traceback, its FailureReason
    "MemoryError: ..." (the CLI said it in one line, what to do included): the job says the same line now."""
    import fasttext_lib.train

    def out_of_memory(*args, **kwargs):
        raise failure

    monkeypatch.setattr(fasttext_lib.train, "train", out_of_memory)
    r = job_in_process(source_dir, make_container(tmp_path, {"train": {"a.train": GOOD}}), args_for(epochs=1))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("error: out of memory (") and "use a machine with more memory" in last, last
    assert "MXNetError:" not in last and "Traceback" not in last
    assert (tmp_path / "output" / "failure").read_text() == last
    assert os.listdir(tmp_path / "model") == []


@pytest.mark.parametrize("case", ["empty test channel", "empty train channel beside pretrained vectors"])
def test_an_empty_channel_fails_the_job_before_any_data_is_read(source_dir, tmp_path, case):
    """An empty test channel (a wrong S3 prefix given to fit()) was found only after the whole training channel had
    been read, and an empty train channel only after the pretrained vectors (gigabytes for wiki.en.vec) had been:
    both channels are listed first now."""
    vec = _write(b"2 16\nbad " + b"0.1 " * 15 + b"0.1\ngood " + b"0.2 " * 15 + b"0.2\n")
    if case == "empty test channel":
        channels, pattern = {"train": {"a.train": GOOD}, "test": {}}, r"test channel .* holds no files"
    else:
        channels, pattern = {"train": {}, "pretrained": {"wiki.vec": vec}}, r"train channel .* holds no files"
    r = job_in_process(source_dir, make_container(tmp_path, channels), args_for(epochs=1, emsize=16))
    assert r.returncode == 2 and re.search(pattern, r.stderr.strip().splitlines()[-1]), r.stderr
    assert "train channel:" not in r.stdout and "pretrained vectors:" not in r.stdout, r.stdout
    assert os.listdir(tmp_path / "model") == []


@pytest.mark.parametrize("channel", ["train", "test"])
@pytest.mark.parametrize("beside", [{}, {"_SUCCESS": b""}], ids=["alone", "with a marker"])
def test_a_channel_of_only_its_class_names_file_says_so(source_dir, tmp_path, channel, beside):
    """A channel holding only classes.txt (the data left out of the S3 prefix) was said to hold "no files", where
    it holds one the job reads: the line says it holds only the class names file and no data file."""
    channels = {"train": {"a.train": GOOD}, "test": {"a.test": GOOD}}
    channels[channel] = {"classes.txt": _write(b"bad\ngood\n"), **{k: _write(v) for k, v in beside.items()}}
    r = job_in_process(source_dir, make_container(tmp_path, channels), args_for(epochs=1))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    skipped = (" (_SUCCESS skipped: Hadoop's, Spark's and Hive's markers, metadata and temporary files, never read as "
               "data)") if beside else ""
    assert last == (f"error: {channel} channel {tmp_path / 'input' / 'data' / channel} holds only the class names file "
                    f"classes.txt and no data file{skipped}: check the S3 prefix given to fit()"), last
    assert "channel:" not in r.stdout and os.listdir(tmp_path / "model") == []


def test_a_job_lists_each_channel_once(source_dir, tmp_path, monkeypatch):
    """The job walked each channel's directory three times at its start (the check that it holds data, its names
    files, its read): now once per channel, the listing passed along."""
    walked = []
    real_walk = os.walk

    def walk(top, *args, **kwargs):
        walked.append(os.path.relpath(str(top), tmp_path))
        return real_walk(top, *args, **kwargs)

    monkeypatch.setattr(os, "walk", walk)
    channels = {"train": {"a.train": GOOD, "classes.txt": _write(b"negative\npositive\n"), "_SUCCESS": _write(b"")},
                "test": {"a.test": GOOD, "part-00001": _write(b"")}}
    r = job_in_process(source_dir, make_container(tmp_path, channels), args_for(epochs=1, batch_size=16))
    assert r.returncode == 0, r.stdout + r.stderr
    channel_walks = [top for top in walked if top.startswith(os.path.join("input", "data"))]
    assert sorted(channel_walks) == [os.path.join("input", "data", "test"), os.path.join("input", "data", "train")]
    # the listing's findings still said and used: the markers and empty files skipped, the names kept
    assert "train channel: skipped 1 name(s) of Hadoop's" in r.stdout and "test channel: skipped 1 empty file(s): " \
        "part-00001" in r.stdout, r.stdout
    assert Predictor.load(tmp_path / "model").label_names == NAMES


@pytest.mark.parametrize("told_by", ["SM_INPUT_DATA_CONFIG", "SM_TRAINING_ENV", "its FIFO only"])
def test_a_channel_in_pipe_mode_is_refused_saying_to_use_file_mode(source_dir, tmp_path, told_by):
    """input_mode='Pipe' gives the job no channel directory, only FIFOs (train_0, one per epoch): the job said "train
    channel directory does not exist", leaving the user to look for a wrong S3 prefix. It names Pipe mode and what
    to use instead, from the toolkit's environment, or from the FIFO beside the missing directory."""
    env = make_container(tmp_path, {"train": {}})
    channel = tmp_path / "input" / "data" / "train"
    channel.rmdir()
    os.mkfifo(f"{channel}_0")
    config = {"train": {"RecordWrapperType": "None", "S3DistributionType": "FullyReplicated",
                        "TrainingInputMode": "Pipe"}}
    if told_by == "SM_INPUT_DATA_CONFIG":
        env[told_by] = json.dumps(config)
    elif told_by == "SM_TRAINING_ENV":
        env[told_by] = json.dumps({"input_data_config": config, "channel_input_dirs": {"train": str(channel)}})
    r = job_in_process(source_dir, env, args_for(epochs=1))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert re.match(r"error: the train channel is in Pipe input mode.*, which this job does not read", last), last
    assert "use File mode (the default) or FastFile" in last and "does not exist" not in last, last
    assert (tmp_path / "output" / "failure").read_text() == last


def _pickled_like_an_older_version(epoch):
    """``epoch``'s checkpoint as versions before optimizer.npz wrote it: the optimizer state a pickle."""
    import hashlib

    meta = json.loads((epoch / "checkpoint.json").read_text())
    entry = meta["files"].pop("optimizer.npz")
    os.remove(epoch / entry["object"])
    pickled = b"\x80\x04N."  # (never loaded)
    (epoch / "optimizer-0123456789abcdef.states").write_bytes(pickled)
    meta["files"]["optimizer.states"] = {"object": "optimizer-0123456789abcdef.states", "bytes": len(pickled),
                                         "sha256": hashlib.sha256(pickled).hexdigest()}
    (epoch / "checkpoint.json").write_text(json.dumps(meta))


def _synced_checkpoints(tmp_path, monkeypatch):
    """A folder the job takes for its /opt/ml/checkpoints (what SageMaker syncs with checkpoint_s3_uri)."""
    synced = tmp_path / "checkpoints"
    synced.mkdir()
    monkeypatch.setattr(sm_train.plan_training, "__defaults__", (str(synced),))
    return synced


def _first_job(source_dir, tmp_path, synced, **hyperparameters):
    """A job of 2 epochs on GOOD that leaves its checkpoints in ``synced``, for the next job to resume or refuse."""
    first = job_in_process(source_dir, make_container(tmp_path / "first", {"train": {"a.train": GOOD}}),
                           args_for(epochs=2, **hyperparameters))
    assert first.returncode == 0 and (synced / "epoch-0002").is_dir(), first.stderr


@pytest.mark.parametrize("case", ["pickled by an older version", "other hyperparameters"])
def test_a_checkpoint_the_job_cannot_resume_says_what_to_do_in_the_jobs_terms(source_dir, tmp_path, monkeypatch, case):
    """/opt/ml/checkpoints is what SageMaker copied from the job's checkpoint_s3_uri (a managed spot job's restart, or
    a new job given the same prefix): the refusal said "remove it or use another --checkpoint-dir", a directory in a
    container that is gone and a flag the job has none of. It now names the S3 prefix and the hyperparameters."""
    synced = _synced_checkpoints(tmp_path, monkeypatch)
    _first_job(source_dir, tmp_path, synced, batch_size=16)
    args = args_for(epochs=2, batch_size=16)
    if case == "pickled by an older version":
        _pickled_like_an_older_version(synced / "epoch-0002")
    else:
        args = args_for(epochs=3, batch_size=16)
    root = tmp_path / "second"
    r = job_in_process(source_dir, make_container(root, {"train": {"a.train": GOOD}}), args)
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: checkpoint {synced / 'epoch-0002'} was written by "), last
    assert "--checkpoint-dir" not in last and "--epochs" not in last and "remove it" not in last, last
    assert "checkpoint_s3_uri" in last, last
    if case == "other hyperparameters":
        assert "the hyperparameter epochs=2" in last, last
    # refused before the channel was read (minutes at Yelp size): other hyperparameters were refused only after it,
    # though known at the start
    assert "train channel:" not in r.stdout, r.stdout
    assert (root / "output" / "failure").read_text() == last
    assert os.listdir(root / "model") == []


def test_a_checkpoint_of_other_epochs_and_settings_names_every_setting_as_a_hyperparameter(source_dir, tmp_path,
                                                                                              monkeypatch):
    """A resume with other epochs and another setting (seed) is told every setting it was written with: the job said
    the epochs as its hyperparameter and the others as the CLI's flags ("rerun with the hyperparameter epochs=2
    --seed 42 to resume it"), which the job has none of."""
    synced = _synced_checkpoints(tmp_path, monkeypatch)
    _first_job(source_dir, tmp_path, synced, batch_size=16)
    root = tmp_path / "second"
    r = job_in_process(source_dir, make_container(root, {"train": {"a.train": GOOD}}),
                       args_for(epochs=3, batch_size=16, seed=7))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert "rerun with the hyperparameters epochs=2, seed=42 to resume it" in last and " --" not in last, last


@pytest.mark.parametrize("channel", ["test", "validation"])
def test_a_checkpoint_validated_on_other_data_names_the_channel_as_the_job_was_given_it(source_dir, tmp_path,
                                                                                       monkeypatch, channel):
    """A checkpoint validated on other data than the job's: the CLI's "rerun with the --validation it was written
    with" was said as "the test channel", a job given its channel as validation too (515e691 names that channel so
    in the job's log and its other errors)."""
    synced = _synced_checkpoints(tmp_path, monkeypatch)
    first = job_in_process(source_dir, make_container(tmp_path / "first", {"train": {"a.train": GOOD},
                                                                           channel: {"a.test": GOOD}}),
                           args_for(epochs=2, batch_size=16))
    assert first.returncode == 0 and (synced / "epoch-0002").is_dir(), first.stderr
    other = _write(b"__label__1 cold soup\n__label__2 kind staff\n" * 5)
    root = tmp_path / "second"
    r = job_in_process(source_dir, make_container(root, {"train": {"a.train": GOOD}, channel: {"a.test": other}}),
                       args_for(epochs=2, batch_size=16))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert "was validated on other validation data than this run's" in last, last
    assert f"rerun with the {channel} channel it was written with" in last and "--validation" not in last, last
    assert (root / "output" / "failure").read_text() == last


def test_a_checkpoint_of_other_settings_is_refused_before_the_data_only_for_settings_known_without_it(
        source_dir, tmp_path, monkeypatch):
    """A setting the job is given (emsize, an explicit lr) is compared with the checkpoint's before the train channel
    is read; one left to the data (lr, batch_size) is known only once it is read, and compared then: a job that
    leaves them to the data resumes as before."""
    synced = _synced_checkpoints(tmp_path, monkeypatch)
    _first_job(source_dir, tmp_path, synced)  # lr and batch_size from the data
    for changed, says in [({"emsize": 20}, "emsize 100 -> 20"), ({"lr": 0.123}, " -> 0.123")]:
        root = tmp_path / f"second-{next(iter(changed))}"
        r = job_in_process(source_dir, make_container(root, {"train": {"a.train": GOOD}}), args_for(epochs=2, **changed))
        assert r.returncode == 2, r.stdout + r.stderr
        last = r.stderr.strip().splitlines()[-1]
        assert last.startswith(f"error: checkpoint {synced / 'epoch-0002'} was written by a different run (") \
            and says in last and "checkpoint_s3_uri" in last, last
        assert "train channel:" not in r.stdout, r.stdout
    again = job_in_process(source_dir, make_container(tmp_path / "again", {"train": {"a.train": GOOD}}),
                           args_for(epochs=2))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "epoch 2 of 2 done" in again.stderr, again.stderr


@pytest.mark.parametrize("case", list(UNRESUMABLE_BEFORE_READING))
def test_a_checkpoint_the_job_cannot_resume_for_what_is_known_without_the_data_is_refused_before_the_channels(
        source_dir, tmp_path, monkeypatch, case):
    """A test channel added or dropped, another number of hosts, a text rule the data cannot make exact, an older
    version's fingerprint, an edited epoch or history: each was refused once the train channel had been read
    (minutes at Yelp size), though none depends on the data. Refused now before it, in the same line."""
    edit, validates, settings, says = UNRESUMABLE_BEFORE_READING[case]
    synced = _synced_checkpoints(tmp_path, monkeypatch)
    _first_job(source_dir, tmp_path, synced, batch_size=16)
    edit_checkpoint(synced / "epoch-0002", edit)

    def read_channel(*args, **kwargs):
        raise AssertionError("a channel was read before the checkpoint was refused")

    monkeypatch.setattr(sm_train, "read_channel", read_channel)
    root = tmp_path / "second"
    channels = {"train": {"a.train": GOOD}, **({"test": {"a.test": GOOD}} if validates else {})}
    r = job_in_process(source_dir, make_container(root, channels), args_for(epochs=2, batch_size=16, **settings))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and str(synced / "epoch-0002") in last and says in last, last
    assert (root / "output" / "failure").read_text() == last
    assert os.listdir(root / "model") == []


@pytest.mark.usefixtures("no_pause_between_rereads")  # (a file stays missing: no reread can find it)
@pytest.mark.parametrize("cut", ["params missing", "params cut short", "no complete epoch before it",
                                 "not the synced dir"])
def test_a_spot_restart_sets_aside_the_newest_checkpoint_a_cut_short_sync_left_incomplete(source_dir, tmp_path,
                                                                                          monkeypatch, cut):
    """SageMaker uploads /opt/ml/checkpoints to the checkpoint_s3_uri in its own order, so a spot interruption can leave
    the S3 copy, and so /opt/ml/checkpoints of the restarted job, with the newest epoch's checkpoint.json and not its
    parameters (or part of them). The restart was refused ("names model.params, which is missing"): a managed spot
    job's automatic restart failed. In SageMaker's synced directory such an epoch is now set aside, left in place (a
    rename there is the sync deleting its S3 copy and uploading it again), with a warning line, and the newest complete
    one before it resumed, or training starts over; the job ends as the uninterrupted one did. A checkpoint_dir of
    the user's own is refused as before."""
    import shutil

    import numpy as np

    synced = _synced_checkpoints(tmp_path, monkeypatch)
    ckpt = synced if cut != "not the synced dir" else tmp_path / "own"
    args = args_for(epochs=3, batch_size=16) + (["--checkpoint_dir", str(ckpt)] if ckpt != synced else [])
    stash, real_format = tmp_path / "stash", sm_train.format_epoch

    def keep_each_epoch(row):  # each epoch's checkpoint as saved (the next save removes it)
        shutil.copytree(ckpt / f"epoch-{row['epoch']:04d}", stash / f"epoch-{row['epoch']:04d}")
        return real_format(row)

    monkeypatch.setattr(sm_train, "format_epoch", keep_each_epoch)
    first = job_in_process(source_dir, make_container(tmp_path / "first", {"train": {"a.train": GOOD}}), args)
    assert first.returncode == 0, first.stderr
    whole = Predictor.load(str(tmp_path / "first" / "model")).model.embedding_table()
    # /opt/ml/checkpoints as the restarted job finds it: epoch 2's checkpoint.json came without (all of) its params
    shutil.rmtree(ckpt)
    ckpt.mkdir()
    if cut != "no complete epoch before it":
        shutil.copytree(stash / "epoch-0001", ckpt / "epoch-0001")
    incomplete = ckpt / "epoch-0002"
    shutil.copytree(stash / "epoch-0002", incomplete)
    params = next(incomplete.glob("model-*.params"))
    if cut == "params cut short":
        params.write_bytes(params.read_bytes()[:params.stat().st_size // 2])
    else:
        params.unlink()
    left, kept = sorted(os.listdir(incomplete)), []

    def see_what_is_kept(row):
        kept.append(sorted(os.listdir(incomplete)) if incomplete.is_dir() else None)
        return real_format(row)

    monkeypatch.setattr(sm_train, "format_epoch", see_what_is_kept)
    root = tmp_path / "second"
    r = job_in_process(source_dir, make_container(root, {"train": {"a.train": GOOD}}), args)
    if cut == "not the synced dir":
        assert r.returncode == 2, r.stdout + r.stderr
        last = r.stderr.strip().splitlines()[-1]
        assert last.startswith(f"error: cannot resume from checkpoint {incomplete}: its checkpoint.json names "
                               f"model.params ({params.name}), which is missing"), last
        assert sorted(os.listdir(incomplete)) == left
        return
    assert r.returncode == 0, r.stdout + r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: checkpoint {incomplete} is incomplete"), warnings
    assert ("truncated" if cut == "params cut short" else "which is missing") in warnings[0], warnings[0]
    assert "set aside" in warnings[0] and "SageMaker" in warnings[0], warnings[0]
    if cut == "no complete epoch before it":
        assert "training starts over" in warnings[0] and "resuming from" not in r.stderr, warnings[0]
        assert kept[0] == left  # kept until this job saved its own epoch 2
    else:
        assert "resumes from epoch 1" in warnings[0], warnings[0]
        assert "resuming from the checkpoint in " + str(ckpt) + ": epoch 1 of 3 done" in r.stderr, r.stderr
    assert [line.split(";")[0] for line in r.stdout.splitlines() if line.startswith("epoch=")] == \
        [f"epoch={n}" for n in ((1, 2, 3) if cut == "no complete epoch before it" else (2, 3))]
    np.testing.assert_array_equal(Predictor.load(str(root / "model")).model.embedding_table(), whole)
    assert sorted(os.listdir(ckpt)) == ["epoch-0003"]


def test_gpus_the_job_is_told_of_and_mxnet_does_not_see_are_refused_before_any_data_is_read(source_dir, tmp_path):
    """SM_NUM_GPUS=2 where MXNet sees no GPU (a CPU build in a custom image on a GPU instance): the job read the whole
    training channel, then stopped with "ctx 'gpu:0,1' asks for a GPU", a ctx the user never gave."""
    env = make_container(tmp_path, {"train": {"a.train": GOOD}}, extra_env={"SM_NUM_GPUS": "2"})
    r = job_in_process(source_dir, env, args_for(epochs=1))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("error: SM_NUM_GPUS is 2 but this job's MXNet sees 0 GPU(s) (ctx gpu:0,1)"), last
    assert "ctx=cpu" in last and "train channel:" not in r.stdout, r.stdout + last
    assert (tmp_path / "output" / "failure").read_text() == last


def test_a_file_mode_channel_that_is_missing_is_still_said_so(source_dir, tmp_path):
    env = make_container(tmp_path, {"train": {}})
    (tmp_path / "input" / "data" / "train").rmdir()
    env["SM_INPUT_DATA_CONFIG"] = json.dumps({"train": {"TrainingInputMode": "File"}})
    r = job_in_process(source_dir, env, args_for(epochs=1))
    assert r.returncode == 2 and "train channel directory does not exist" in r.stderr, r.stderr


@pytest.mark.parametrize("channels, listed, says", [
    # the validation data under another name: the job trained without it, logged no val_accuracy (a tuner's trials
    # all failed for want of their objective metric), and said nothing
    (("train", "eval"), None, r"the eval channel is not read by this job.*fit\(\{'train': \.\.\., 'test': \.\.\.\}\)"),
    (("train", "Dev"), '["Dev", "train"]', r"the Dev channel is not read by this job"),
    (("train", "test", "valid", "extra"), None, r"the extra and valid channels are not read by this job"),
    # both: the validation channel was left unread
    (("train", "test", "validation"), None, r"the test and validation channels are both given: give the job's "
                                              r"validation data as one of them"),
])
def test_a_channel_the_job_does_not_read_is_refused_before_any_data_is_read(source_dir, tmp_path, channels, listed,
                                                                           says):
    env = make_container(tmp_path, {name: {"a.txt": GOOD} for name in channels})
    if listed is not None:
        env["SM_CHANNELS"] = listed
    r = job_in_process(source_dir, env, args_for(epochs=1))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and re.search(says, last), last
    assert "train channel:" not in r.stdout
    assert (tmp_path / "output" / "failure").read_text() == last
    # Case is SageMaker's own: a channel named Train is read as the train channel (SM_CHANNEL_TRAIN)
    ok = make_container(tmp_path / "ok", {"Train": {"a.txt": GOOD}, "TEST": {"b.txt": GOOD}})
    assert job_in_process(source_dir, dict(ok, SM_CHANNELS='["TEST", "Train"]'), args_for(epochs=1)).returncode == 0


def test_the_channels_sagemaker_adds_itself_pass(source_dir, tmp_path):
    """SageMaker adds a "code" channel (enable_network_isolation=True: the toolkit reads the source from it) and a
    "model" channel (model_uri=): refused as channels the job does not read, such jobs stopped at their start."""
    env = make_container(tmp_path, {"train": {"a.txt": GOOD}, "code": {"entry_point.py": _write(b"")},
                                    "model": {"model.tar.gz": _write(b"x")}})
    r = job_in_process(source_dir, env, args_for(epochs=1))
    assert r.returncode == 0, r.stderr
    assert "train channel: 40 documents" in r.stdout


@pytest.mark.parametrize("channels, says", [
    # the training data under a name close to train's: the job said "SM_CHANNEL_TRAIN not set ...: this runs inside a
    # SageMaker training container", as if it ran outside one, and never named the channel it was given
    (("training", "validation"), r"^error: the training channel is not read by this job, which reads train, test \(or "
                                 r"validation\) and pretrained: did you mean train for training\? "),
    (("train_data", "testing"), r"^error: the testing and train_data channels are not read by this job.*did you mean "
                                r"test for testing, train for train_data\? "),
    # a job whose one channel is read, but it is not the training data's
    (("validation",), r"^error: no train channel \(this job's channels: validation\): give the training data as "
                      r"fit\(\{'train': s3_uri, 'test': s3_uri\}\)$"),
])
def test_a_job_without_a_train_channel_names_the_channels_it_was_given(source_dir, tmp_path, channels, says):
    env = make_container(tmp_path, {name: {"a.txt": GOOD} for name in channels})
    r = job_in_process(source_dir, env, args_for(epochs=1))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert re.search(says, last) and "SM_CHANNEL_TRAIN" not in last and "inside a SageMaker" not in last, last
    assert (tmp_path / "output" / "failure").read_text() == last
    assert os.listdir(tmp_path / "model") == []


def test_a_channel_written_by_spark_is_read_without_its_empty_files(source_dir, tmp_path):
    """A folder that Spark, Glue or EMR wrote holds a zero-byte _SUCCESS marker, and a zero-byte part file for every
    empty partition: the job stopped at the first ("_SUCCESS: file is empty"). Empty files hold no documents: they
    are skipped, and said so (_SUCCESS as a marker: the next test); a channel of empty files only is still refused
    before any data is read."""
    channels = {"train": {"part-00000": GOOD, "part-00001": _write(b""), "_SUCCESS": _write(b"")},
                "test": {"part-00000": GOOD, "_SUCCESS": _write(b"")}}
    r = job_in_process(source_dir, make_container(tmp_path / "spark", channels), args_for(epochs=1, batch_size=16))
    assert r.returncode == 0, r.stderr
    assert "train channel: 40 documents from 1 file(s)" in r.stdout and "test channel: 40 documents" in r.stdout
    assert "train channel: skipped 1 empty file(s): part-00001" in r.stdout, r.stdout
    assert "train channel: skipped 1 name(s) of Hadoop's, Spark's and Hive's markers, metadata and temporary files " \
           "(not data): _SUCCESS" in r.stdout, r.stdout
    empty = {"train": {"_SUCCESS": _write(b""), "part-00000": _write(b""), "part-00001": _write(b"")}}
    r = job_in_process(source_dir, make_container(tmp_path / "empty", empty), args_for(epochs=1))
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].startswith("error: train channel ")
    assert "holds only empty files (part-00000, part-00001)" in r.stderr and "train channel:" not in r.stdout


def test_a_channel_written_by_spark_or_hadoop_is_read_without_its_markers_and_temporary_files(source_dir, tmp_path):
    """Hadoop's and Spark's markers and metadata, which Spark, Hive and Athena never read as data: the S3A committers'
    _SUCCESS (a JSON summary, not empty), Databricks' _committed_<id> / _started_<id>, and
    the _temporary/ folder a failed or still running Spark job leaves, holding partial copies of its part files. The
    job read them as training data: it stopped at _SUCCESS ("is JSON but not JSON Lines"), or trained on the partial
    copies as well."""
    success = json.dumps({"name": "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1", "committer": "magic",
                          "filenames": ["/data/part-00000"]}, indent=2).encode()
    channels = {"train": {"part-00000": GOOD, "_SUCCESS": _write(success),
                          "_committed_123": _write(b'{"added":["part-00000"],"removed":[]}\n'),
                          "_started_123": _write(b""),
                          "_temporary/0/_temporary/attempt_1/part-00000": _write(b"__label__3 half written\n" * 40)}}
    r = job_in_process(source_dir, make_container(tmp_path / "spark", channels), args_for(epochs=1, batch_size=16))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "train channel: 40 documents from 1 file(s)" in r.stdout, r.stdout
    assert ("train channel: skipped 4 name(s) of Hadoop's, Spark's and Hive's markers, metadata and temporary files "
            "(not data): _SUCCESS, _committed_123, _started_123, _temporary/") in r.stdout, r.stdout
    assert Predictor.load(tmp_path / "spark" / "model").labels == ["1", "2"]  # nothing of the partial copies
    only = {"train": {"_SUCCESS": _write(b""), "_temporary/0/part-00000": GOOD}}
    r = job_in_process(source_dir, make_container(tmp_path / "only", only), args_for(epochs=1))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert re.match(r"error: train channel .*/train holds no data files: _SUCCESS, _temporary/ skipped \(Hadoop's, "
                    r"Spark's and Hive's markers, metadata and temporary files, never read as data\): check the S3 "
                    r"prefix given to fit\(\)$", last), last
    assert (tmp_path / "only" / "output" / "failure").read_text() == last


def test_a_model_dir_holding_the_users_files_is_refused_before_the_data_and_its_files_kept(source_dir, tmp_path):
    """SageMaker starts a job with an empty SM_MODEL_DIR, and packs all of it into model.tar.gz; a local run's may
    hold the user's files. They never reach the archive: the job refuses such a folder at its start (before the data
    is read) in one line naming them, and leaves them as they were (pack_model packs only the bundle's own files)."""
    env = make_container(tmp_path, {"train": {"a.train": GOOD}})
    (tmp_path / "model" / "notes.txt").write_text("mine")
    (tmp_path / "model" / "sub").mkdir()
    r = job_in_process(source_dir, env, args_for(epochs=1, batch_size=16))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert re.match(rf"^error: refusing to write to {tmp_path / 'model'}: it holds files this library did not write "
                    rf"\(notes\.txt, sub\)", last), last
    assert "train channel:" not in r.stdout and (tmp_path / "output" / "failure").read_text() == last
    assert sorted(os.listdir(tmp_path / "model")) == ["notes.txt", "sub"]
    assert (tmp_path / "model" / "notes.txt").read_text() == "mine"


def test_a_data_file_whose_name_starts_with_an_underscore_is_read(source_dir, tmp_path):
    """Every name starting with _ was skipped as a Hadoop or Spark marker, in a log line: a user's own _x.csv was left
    out of the training data (or the job refused a channel of such files alone). Only the names those tools write
    are skipped: _SUCCESS, Databricks' _committed_<id> / _started_<id>, the _temporary/ folder, the S3A magic
    committer's __magic/, Structured Streaming's _spark_metadata/, Delta's _delta_log/, Parquet's _metadata /
    _common_metadata, Hive's _tmp.* / _task_tmp.* (Hadoop's .crc files start with a dot: hidden)."""
    markers = {"_SUCCESS": _write(b""), "_committed_1": _write(b'{"added":[]}\n'), "_started_1": _write(b""),
               "_temporary/0/part-00000": GOOD, "__magic/job-1/part-00000": GOOD, "_spark_metadata/0": GOOD,
               "_delta_log/00000000000000000000.json": _write(b'{"commitInfo":{}}\n'), "_metadata": GOOD,
               "_common_metadata": GOOD, "_tmp.part-00001": GOOD, "_task_tmp.part-00002": GOOD,
               ".part-00000.crc": _write(b"crc\x00")}
    channels = {"train": {"part-00000": GOOD, "_x.csv": _write(b'"3","a third class"\n' * 40), **markers}}
    r = job_in_process(source_dir, make_container(tmp_path / "mine", channels), args_for(epochs=1, batch_size=16))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "train channel: 80 documents from 2 file(s)" in r.stdout, r.stdout
    assert ("train channel: skipped 11 name(s) of Hadoop's, Spark's and Hive's markers, metadata and temporary "
            "files (not data): _SUCCESS, __magic/, _committed_1, _common_metadata, _delta_log/, _metadata, "
            "_spark_metadata/, _started_1, _task_tmp.part-00002, _temporary/, ...") in r.stdout, r.stdout
    assert "_x.csv" not in r.stdout.split("train channel: skipped")[1].splitlines()[0]
    assert Predictor.load(tmp_path / "mine" / "model").labels == ["1", "2", "3"]  # _x.csv's class is learnt
    alone = {"train": {"_x.csv": _write(b'"1","bad food"\n"2","good food"\n' * 20), "_SUCCESS": _write(b"")}}
    r = job_in_process(source_dir, make_container(tmp_path / "alone", alone), args_for(epochs=1))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "train channel: 40 documents from 1 file(s)" in r.stdout, r.stdout


def test_a_bugs_failure_reason_is_its_one_line_reason_not_mxnets_stack(source_dir, tmp_path, monkeypatch):
    """A bug's FailureReason was its exception's message as it was: MXNet's starts with its C++ stack ("MXNetError:
    Traceback (most recent call last):" and a line per frame), over several lines, its reason last or cut off at
    1024 characters. The traceback stays in the log; the FailureReason is the reason's line."""
    import mxnet as mx

    from fasttext_lib import train as train_module

    def a_bug(*args, **kwargs):
        mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((2, 3))).asnumpy()

    monkeypatch.setattr(train_module, "train", a_bug)
    env = make_container(tmp_path, {"train": {"a.train": GOOD}})
    with pytest.raises(mx.base.MXNetError):
        job_in_process(source_dir, env, args_for(epochs=1))
    reason = (tmp_path / "output" / "failure").read_text()
    assert "\n" not in reason and "Traceback" not in reason, reason
    assert reason.startswith("MXNetError: Check failed: ") and "dot shape error: [2,3] X [2,3]" in reason, reason
    assert os.listdir(tmp_path / "model") == []


def test_failure_reason_is_written_only_inside_a_container(tmp_path):
    assert sm_train.write_failure("error: x", {"SM_OUTPUT_DIR": str(tmp_path / "absent")}) is None
    assert not (tmp_path / "absent").exists()
    short = "error: x"
    assert open(sm_train.write_failure(short, {"SM_OUTPUT_DIR": str(tmp_path)})).read() == short


def test_a_failure_reason_too_long_for_sagemaker_keeps_its_start_and_its_way_out(tmp_path):
    """DescribeTrainingJob shows 1,024 characters of the failure file: a longer line (a file's many JSON keys named)
    was cut mid-word with no sign of it, and its end, where the way out is said, was lost. Now the middle goes, at
    word boundaries, marked."""
    words = " ".join(f"key{i}" for i in range(1000))
    long = f"error: train.jsonl:1: this object's keys ({words}) name no text; pass --text-column NAME"
    path = sm_train.write_failure(long, {"SM_OUTPUT_DIR": str(tmp_path)})
    reason = open(path, encoding="utf-8").read()
    assert len(reason) <= FAILURE_REASON_CHARS
    assert reason.startswith("error: train.jsonl:1: this object's keys (key0 key1 ")
    assert reason.endswith("name no text; pass --text-column NAME")
    head, tail = reason.split(" … ")
    assert long.startswith(head) and long.endswith(tail)
    assert head.split()[-1] in long.split() and tail.split()[0] in long.split()  # (whole words on both sides)


def _env(**overrides):
    env = {"SM_MODEL_DIR": "/m", "SM_OUTPUT_DATA_DIR": "/o", "SM_CHANNEL_TRAIN": "/t"}
    env.update(overrides)
    return sm_train.ContainerEnv(env)


def test_hyperparameters_parse_like_sagemaker_sends_them():
    args, ignored = sm_train.parse_hyperparameters(
        ["--batch_size", "128", "--min-count", "2", "--lr", "", "--progress", "True", "--dropout", "0.1",
         "--checkpoint-dir", "none", "--emsize", "50.0", "--_tuning_objective_metric", "validation:accuracy"])
    assert (args.batch_size, args.min_count, args.lr, args.progress, args.dropout) == (128, 2, None, True, 0.1)
    assert args.emsize == 50
    assert ignored == ["--_tuning_objective_metric", "validation:accuracy"]
    assert sm_train.parse_hyperparameters(["--lr", "0.5", "--progress", "false"])[0].lr == 0.5
    # missing, "" or "none": from the data (TrainConfig resolves them once the data is known)
    for words in ([], ["--batch-size", "none", "--lr", "None"], ["--batch_size", "", "--lr", "null"]):
        parsed = sm_train.parse_hyperparameters(words)[0]
        assert (parsed.batch_size, parsed.lr, parsed.optimizer) == (None, None, "sgd"), words
    # a boolean given no value keeps its default too (it was refused: "expected true or false, got ''")
    for word in ("", "none", "None", "null"):
        assert sm_train.parse_hyperparameters(["--progress", word])[0].progress is False, word
    with pytest.raises(FastTextError, match="--progress: expected true or false, got 'maybe'"):
        sm_train.parse_hyperparameters(["--progress", "maybe"])


# two different values of each hyperparameter the job reads in both spellings (batch-size and batch_size)
_TWO_VALUES = {"batch_size": ("64", "128"), "min_count": ("1", "2"), "lr_schedule": ("linear", "constant"),
               "pretrained_vectors": ("a.vec", "b.vec"), "label_column": ("label", "stars"),
               "text_column": ("text", "review"), "checkpoint_dir": ("/tmp/a", "/tmp/b"),
               "label_names": ("1=bad,2=good", "1=negative,2=positive")}


def test_a_hyperparameter_given_in_both_spellings_with_different_values_is_refused(source_dir, tmp_path):
    """``batch-size=64`` and ``batch_size=128`` (both read, the same setting) trained with whichever the toolkit passed
    last, without a word, where the CLI refuses an option given twice with different values: the job refuses it in one
    line naming both, for every hyperparameter of two spellings (make_estimator before any instance starts, too);
    the same value in both passes."""
    from fasttext_lib.sagemaker_utils import check_hyperparameters

    spelt_twice = {a.dest: a.option_strings for a in sm_train.build_parser()._actions if len(a.option_strings) > 1}
    assert set(spelt_twice) == set(_TWO_VALUES)
    for dest, (dashed, underscored) in spelt_twice.items():
        first, second = _TWO_VALUES[dest]
        with pytest.raises(FastTextError, match=f"^bad hyperparameter: {underscored} given twice, as {dashed} "
                                                f"{first} and as {underscored} {second}: give it once$"):
            sm_train.parse_hyperparameters([dashed, first, underscored, second])
        assert getattr(sm_train.parse_hyperparameters([dashed, first, underscored, first])[0], dest) is not None
    with pytest.raises(FastTextError, match="^bad hyperparameter: --batch_size given twice, as --batch-size 64 and as "
                                            "--batch_size 128: give it once$"):
        check_hyperparameters({"batch-size": 64, "batch_size": 128})
    check_hyperparameters({"batch-size": 64, "batch_size": "64"})
    r = job_in_process(source_dir, make_container(tmp_path, {"train": {"a.train": GOOD}}),
                       toolkit_argv({"epochs": 1, "batch-size": 64, "batch_size": 128}))
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1] == (
        "error: bad hyperparameter: --batch_size given twice, as --batch-size 64 and as --batch_size 128: give it "
        "once"), r.stdout + r.stderr
    # one error line, and the job's failure reason, as every refusal of a hyperparameter
    assert [line for line in r.stderr.splitlines() if "error" in line.lower()] == r.stderr.strip().splitlines()[-1:]
    assert (tmp_path / "output" / "failure").read_text() == r.stderr.strip().splitlines()[-1]


# (dashed value, underscored value, whether they differ once the hyperparameter reads them): the same meaning in two
# forms (none and None, 64 and "6.4e1", a list and NAME,NAME, a name and the name spaced) passes
_SPELT_TWICE = [
    ("label_names", "none", None, False), ("label_names", "", "NULL", False), ("label_names", " None ", "none", False),
    ("label_names", "1=a,2=b", {"1": "a", "2": "b"}, False), ("label_names", "none", "ag_news", True),
    ("label_names", "1=a,2=b", "1=a,2=c", True),
    # the same pairs in another order or spacing (the toolkit writes a dict's sorted: 10=c,2=b), or a dataset's pairs
    ("label_names", "1=a,2=b", "2=b, 1=a", False), ("label_names", "2=b,10=c", {"2": "b", "10": "c"}, False),
    ("label_names", '{"1": "a", "2": "b"}', "1=a,2=b", False),
    ("label_names", "ag_news", "1=World,2=Sports,3=Business,4=Sci/Tech", False),
    ("label_names", "1=a,2=b", "2=a,1=b", True), ("label_names", "ag_news", "dbpedia", True),
    ("batch_size", 64, "6.4e1", False), ("batch_size", "64", 64.0, False), ("batch_size", "none", None, False),
    ("batch_size", 64, 128, True), ("batch_size", None, 64, True),
    ("min_count", 2, "2.0", False), ("min_count", 2, 3, True),
    ("lr_schedule", "linear", "linear", False), ("lr_schedule", "linear", "constant", True),
    ("pretrained_vectors", "None", "", False), ("pretrained_vectors", "a.vec", "b.vec", True),
    ("pretrained_vectors", "none", "a.vec", True),
    ("checkpoint_dir", "none", None, False), ("checkpoint_dir", "/tmp/a", "/tmp/b", True),
    ("label_column", "none", None, False), ("label_column", "rating", " rating ", False),
    ("label_column", "rating", "stars", True), ("label_column", "Rating", "rating", False),
    ("text_column", ["title", "text"], "title, text", False), ("text_column", "NULL", None, False),
    ("text_column", ["Title", "Text"], "title,text", False), ("text_column", "Text", "text,title", True),
    ("text_column", "title", "text", True), ("text_column", "title,text", "text,title", True),
]


@pytest.mark.parametrize("dest, dashed_value, underscored_value, differ", _SPELT_TWICE)
def test_two_spellings_of_a_hyperparameter_are_refused_only_when_their_values_mean_different_things(
        dest, dashed_value, underscored_value, differ):
    """``label-names=none`` with ``label_names=None`` (the same "no names" in two spellings and two forms) was refused
    as two values, and so were the same pairs of label_names in another order and one column named in two cases (found
    without case): each hyperparameter's two spellings are compared as the job reads them, in the job (the toolkit's
    argv: None sent as "") and in check_hyperparameters (the SDK's JSON) alike."""
    from fasttext_lib.sagemaker_utils import check_hyperparameters

    given = {dest.replace("_", "-"): dashed_value, dest: underscored_value}
    checks = [lambda: check_hyperparameters(given),
              lambda: sm_train.parse_hyperparameters(toolkit_argv({k: json.dumps(v) for k, v in given.items()}))]
    for check in checks:
        if differ:
            with pytest.raises(FastTextError, match=f"^bad hyperparameter: --{dest} given twice, as "):
                check()
        else:
            check()


def test_every_hyperparameter_given_no_value_keeps_its_default():
    """README: ``none`` or ``""`` is no value, the default. It held for lr, batch_size and booleans only:
    ``--ngrams ""`` (a blank field in the console, or boto3) stopped the job ("expected an integer, got ''"),
    and ``--optimizer none`` was refused as an optimizer."""
    import argparse
    from dataclasses import fields

    from fasttext_lib.config import TrainConfig

    defaults, _ = sm_train.parse_hyperparameters([])
    for f in [*fields(TrainConfig), argparse.Namespace(name="format")]:
        for word in ("", "none", "None", "null"):
            args, _ = sm_train.parse_hyperparameters([f"--{f.name}", word])
            assert getattr(args, f.name) == getattr(defaults, f.name), (f.name, word)
    with pytest.raises(FastTextError, match="--ngrams: expected an integer, got 'two'"):
        sm_train.parse_hyperparameters(["--ngrams", "two"])


def test_a_hyperparameter_value_starting_with_a_dash_is_its_value(source_dir, tmp_path):
    """The toolkit passes ``--label_names -1=negative,1=positive`` (classes -1 and 1, as many sentiment sets write
    them): argparse took the value for an option, and the job (and make_estimator's check before it) failed with
    "argument --label-names/--label_names: expected one argument", naming nothing wrong. A number in exponent form
    (``lr=-1e-3``) was refused so too, not as the negative lr it is."""
    from fasttext_lib.sagemaker_utils import check_hyperparameters

    names = "-1=negative,1=positive"
    assert sm_train.parse_hyperparameters(["--label_names", names, "--epochs", "1"])[0].label_names == names
    with pytest.raises(FastTextError, match="lr must be"):
        check_hyperparameters({"lr": -1e-3})
    check_hyperparameters({"label_names": {"-1": "negative", "1": "positive"}})  # sent inline, as above
    channels = {"train": {"a.train": _write(b"__label__-1 bad food\n__label__1 good food\n" * 20)}}
    r = job_in_process(source_dir, make_container(tmp_path, channels), toolkit_argv(
        {"epochs": "1", "label_names": json.dumps(names)}))
    assert r.returncode == 0, r.stdout + r.stderr
    assert Predictor.load(tmp_path / "model").label_names == {"-1": "negative", "1": "positive"}


def test_plan_single_host(tmp_path):
    args, _ = sm_train.parse_hyperparameters([])
    config, extra = sm_train.plan_training(args, _env(SM_NUM_GPUS="0"), default_checkpoint_dir=str(tmp_path / "absent"))
    assert config["ctx"] == "cpu" and "kvstore" not in config and extra == {}
    config, _ = sm_train.plan_training(args, _env(SM_NUM_GPUS="4"), default_checkpoint_dir=None)
    assert config["ctx"] == "gpu:0,1,2,3"
    config, _ = sm_train.plan_training(args, _env(), default_checkpoint_dir=None)
    assert config["ctx"] == "auto"  # not in a container: the library decides
    config, _ = sm_train.plan_training(sm_train.parse_hyperparameters(["--ctx", "cpu"])[0], _env(SM_NUM_GPUS="2"), None)
    assert config["ctx"] == "cpu"
    from fasttext_lib.config import TrainConfig

    TrainConfig(**config)  # every key is a TrainConfig field


def test_plan_checkpoints(tmp_path):
    args, _ = sm_train.parse_hyperparameters([])
    _, extra = sm_train.plan_training(args, _env(), default_checkpoint_dir=str(tmp_path))  # /opt/ml/checkpoints exists
    assert extra == {"checkpoint_dir": str(tmp_path)}
    args, _ = sm_train.parse_hyperparameters(["--checkpoint-dir", "none"])
    assert sm_train.plan_training(args, _env(), default_checkpoint_dir=str(tmp_path))[1] == {}
    args, _ = sm_train.parse_hyperparameters(["--checkpoint_dir", "s3://b/ckpt"])
    assert sm_train.plan_training(args, _env(), default_checkpoint_dir=None)[1] == {"checkpoint_dir": "s3://b/ckpt"}


def test_plan_several_hosts(tmp_path):
    args, _ = sm_train.parse_hyperparameters([])
    hosts = json.dumps(["algo-2", "algo-1"])
    ps = json.dumps({"sagemaker_parameter_server_enabled": True})
    env = _env(SM_HOSTS=hosts, SM_CURRENT_HOST="algo-2", SM_FRAMEWORK_PARAMS=ps)
    config, extra = sm_train.plan_training(args, env, default_checkpoint_dir=str(tmp_path))
    assert config["kvstore"] == "dist_sync"
    assert extra == {"checkpoint_dir": str(tmp_path)}  # one directory: only worker 0 writes, every host resumes from it
    assert not env.is_first_host and _env(SM_HOSTS=hosts, SM_CURRENT_HOST="algo-1", DMLC_ROLE="worker").is_first_host
    env = _env(SM_HOSTS=hosts, SM_CURRENT_HOST="algo-1", DMLC_ROLE="worker")  # the toolkit's worker role counts too
    assert sm_train.plan_training(args, env, None)[0]["kvstore"] == "dist_sync"
    with pytest.raises(FastTextError, match="use dist_sync"):
        sm_train.plan_training(sm_train.parse_hyperparameters(["--kvstore", "device"])[0], env, None)
    with pytest.raises(FastTextError, match="not in SM_HOSTS"):
        _env(SM_HOSTS=hosts, SM_CURRENT_HOST="algo-9")


def test_a_sharded_train_channel_on_several_hosts_is_refused_before_any_data_is_read():
    """ShardedByS3Key gives each host other files: each read its shard as the whole data and took its share of it,
    with its own vocabulary (the workers now refuse to train so, cluster.agree, but only once every host has read
    its shard). On one host it is the whole data, and passes."""
    hosts = json.dumps(["algo-1", "algo-2"])
    sharded = json.dumps({"train": {"TrainingInputMode": "File", "S3DistributionType": "ShardedByS3Key"},
                          "test": {"TrainingInputMode": "File", "S3DistributionType": "FullyReplicated"}})
    with pytest.raises(FastTextError, match="^the train channel is ShardedByS3Key: every host must read the whole "
                                            "training data"):
        _env(SM_HOSTS=hosts, SM_CURRENT_HOST="algo-2", SM_INPUT_DATA_CONFIG=sharded)
    assert _env(SM_INPUT_DATA_CONFIG=sharded).hosts == ["algo-1"]
    assert _env(SM_HOSTS=hosts, SM_INPUT_DATA_CONFIG=sharded.replace("ShardedByS3Key", "FullyReplicated")).distributed


# --------------------------------------------------------------------------------------------
# the endpoint handlers
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bundle(splits, tmp_path_factory):
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train

    train_split, test_split = splits
    named = LabeledTexts(list(train_split.labels), list(train_split.texts), dict(NAMES))  # as read beside prepared data
    trained = train(named, test_split, TrainConfig(**{**FAST, "epochs": 2}, progress=False, ctx="cpu"))
    return save_bundle(trained, str(tmp_path_factory.mktemp("bundle") / "model"))


@pytest.fixture(scope="module")
def served(bundle):
    return ep.model_fn(bundle), Predictor.load(bundle)


def test_hosting_functions_fit_the_mxnet_inference_toolkit(bundle, served):
    import mxnet as mx

    # Without transform_fn the toolkit's HandlerService calls model_fn(model_dir) and accepts only a
    # Gluon Block (or Module); transform_fn next to input/predict/output_fn is refused.
    assert not hasattr(ep, "transform_fn")
    assert all(callable(getattr(ep, n)) for n in ("model_fn", "input_fn", "predict_fn", "output_fn"))
    model, predictor = served
    assert isinstance(model, mx.gluon.Block)
    assert model.labels == predictor.labels and len(model.featurizer.vocab) == len(predictor.featurizer.vocab)
    assert model.labels == ["1", "2"] and model.names == ["negative", "positive"]
    # The toolkit passes its context as an extra argument only to functions that take one more parameter.
    assert [len(inspect.signature(f).parameters) for f in (ep.input_fn, ep.predict_fn, ep.output_fn)] == [2, 2, 2]
    with_context = ep.model_fn(bundle, types.SimpleNamespace(system_properties={"gpu_id": 0, "model_dir": bundle}))
    assert isinstance(with_context, mx.gluon.Block)


@pytest.fixture(scope="module")
def endpoint(bundle):
    """The bundle behind the real toolkits, the user module named as SAGEMAKER_PROGRAM would name it."""
    saved = {k: os.environ.get(k) for k in ("SAGEMAKER_PROGRAM", "PYTHONPATH", "MMS_DECODE_INPUT_REQUEST")}
    os.environ["SAGEMAKER_PROGRAM"] = "fasttext_lib.entry_point"
    try:
        yield Endpoint(bundle)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.mark.parametrize("body, content_type", [
    (json.dumps(REVIEWS).encode(), "application/json"),
    (json.dumps({"instances": REVIEWS}).encode(), "application/json; charset=utf-8"),
    ("\n".join(REVIEWS).encode() + b"\n", "text/plain"),
    (b'"The pasta was great, and the staff were friendly!"\nNot good. Cold food and a long wait.\n\n', "text/csv"),
])
def test_round_trip_equals_the_library_predictor(endpoint, served, body, content_type):
    status, response_type, response = endpoint.invoke(body, content_type, "*/*")
    assert (status, response_type) == (200, "application/json"), response
    texts = REVIEWS if content_type != "text/csv" else [REVIEWS[0].replace(" and", ", and"), REVIEWS[1], ""]
    assert json.loads(response) == served[1].predict(texts)
    rows = json.loads(response)
    assert [set(row) for row in rows] == [{"label", "probability", "class_id"}] * 3
    assert all(NAMES[row["class_id"]] == row["label"] for row in rows)  # the name, and the raw class id beside it


def test_the_sdks_csv_serializer_of_reviews_with_quotes_is_answered_one_review_per_line(endpoint, served):
    """The sagemaker SDK's CSVSerializer writes a list of reviews one per line, unquoted. A review that opens with
    a quoted phrase, or holds one quotation mark (real lines of the NYT editorials and Amazon sets), is no CSV
    record: the whole request was a 400 "not valid CSV". Each such line is answered whole now, the others as
    before (a review's unquoted commas split it into columns, joined again with commas)."""
    from sagemaker.serializers import CSVSerializer

    reviews = ['"All those sleek, fresh-from-the-sauna studs, hair full, pectorals perfect, not a gray head in sight.',
               "Great phone, but the battery, sadly, dies fast.",
               '"  this problem vanished after the first month, so i assume it was a temporary dust issue.',
               '"Best buy ever" is what I said, until it broke.',
               'He said "buy it" and I did, twice!']
    body = CSVSerializer().serialize(reviews)
    assert body == "\n".join(reviews)  # as the SDK sends it
    status, _, response = endpoint.invoke(body.encode(), "text/csv", "application/json")
    assert status == 200, response
    assert json.loads(response) == served[1].predict(reviews)


def test_a_csv_body_with_a_review_over_two_lines_and_a_bad_record_is_refused_not_read_a_line_at_a_time():
    """A body that is not valid CSV is read a line at a time (the SDK's CSVSerializer writes reviews one per line):
    but one whose records went on over line breaks inside quotes before its error (pandas quotes a review with a
    line break) is CSV with an error: read a line at a time, that review was answered as two, every answer after it
    one off, without a word. It is the 400 it was before."""
    import pandas as pd

    reviews = ["Great phone.\nThe battery, sadly, dies fast.", "cold soup", "kind staff"]
    body = pd.DataFrame({"review": reviews}).to_csv(header=False, index=False)
    assert len(sm_serve.input_fn(body, "text/csv")) == 3  # valid CSV: one review a record
    with pytest.raises(sm_serve.RequestError, match="request body is not valid CSV") as refused:
        sm_serve.input_fn(body + '"Best buy ever" until it broke\n', "text/csv")
    assert refused.value.status_code == 400
    sdk = "\n".join(reviews[1:] + ['"Best buy ever" until it broke'])  # no record over two lines: a line at a time
    assert list(sm_serve.input_fn(sdk, "text/csv")) == reviews[1:] + ['"Best buy ever" until it broke']


def _each_review_answered_by_endpoint_and_batch_transform(endpoint, served, monkeypatch, reviews):
    """``reviews`` sent as the SDK's CSVSerializer sends them get one answer each, in order, from an endpoint and in
    a Batch Transform mini-batch (SAGEMAKER_BATCH)."""
    from sagemaker.serializers import CSVSerializer

    body = CSVSerializer().serialize(reviews).encode()
    for batch in (False, True):
        if batch:
            monkeypatch.setenv("SAGEMAKER_BATCH", "true")
        status, _, response = endpoint.invoke(body, "text/csv", "application/json")
        assert status == 200 and json.loads(response) == served[1].predict(reviews), response


@pytest.mark.parametrize("reviews", [
    ['"Loved it', "Cold soup.", 'The waiter said: on the house"', "Great phone, but the battery dies fast."],
    ["Great phone, but slow.", '"Best buy ever', "no complaints", 'Would buy again"', "ok"],
])
def test_the_sdks_csv_serializer_of_a_quote_pair_over_lines_is_answered_one_review_per_line(endpoint, served, reviews):
    """The SDK's CSVSerializer writes reviews one a line, unquoted. One opening a quotation mark at its start and a
    later one closing one at its end make a body that is valid CSV as a whole: it was read as one record over the
    lines between, fewer answers than reviews and every answer after them off. Records of different widths (a
    review's unquoted comma) show no CSV writer wrote it (pandas quotes every comma in a field): a line at a time."""
    from sagemaker.serializers import CSVSerializer

    body = CSVSerializer().serialize(reviews)
    status, _, response = endpoint.invoke(body.encode(), "text/csv", "application/json")
    assert status == 200, response
    assert json.loads(response) == served[1].predict(reviews)


def test_the_sdks_csv_serializer_of_a_quote_pair_over_lines_then_an_unclosed_quote_is_answered_one_review_per_line(
        endpoint, served, monkeypatch):
    """Real lines (NYT editorials, Amazon snippets) sent by the SDK's CSVSerializer: one opening a quotation mark, a
    later one closing it, records of different widths between and after (a review's unquoted commas), then one that
    opens a quotation mark it never closes. Without that last line the body was read a line at a time; with it, it
    was a 400 "not valid CSV" (in Batch Transform the job failed). Records of different widths show no CSV writer
    wrote it, before an error too: a line at a time, one answer a review."""
    reviews = ['"All those sleek, fresh-from-the-sauna studs, hair full, pectorals perfect, not a gray head in sight, '
               'not a paunch to be seen.',
               "Soviet acceptance of Court jurisdiction in these categories of cases shows a welcome willingness to "
               "back words with deeds.",
               'Phooey!"',
               "December comes in with some mixed extended weather forecasts.",
               "The bureau estimates that there will be 100,000 in the late 1990's, and a century from now more than a "
               "million.",
               '"  this is the second apex dvd player i\'ve had - and the last.']
    _each_review_answered_by_endpoint_and_batch_transform(endpoint, served, monkeypatch, reviews)


def test_a_program_written_csv_with_a_review_over_lines_stays_one_record(served):
    """pandas writes every record as wide as the others, a comma or a line break in a field quoted: a review over
    several lines is one record, whatever the width of the table."""
    import pandas as pd

    texts = ["Great phone.\nThe battery, sadly, dies fast.", "cold soup", 'he said "fine"\nand left', "nice", "bad"]
    for frame in (pd.DataFrame({"label": [2, 1, 1, 2, 1], "text": texts}), pd.DataFrame({"text": texts})):
        body = frame.to_csv(header=False, index=False)
        assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == served[1].predict(texts)


@pytest.mark.parametrize("reviews", [
    ['"Loved it', "Cold soup.", 'The waiter said: on the house"', "ok"],  # no comma anywhere: all records one field
    ['"Loved it', "Cold soup, bad", 'on the house", he said', "ok, fine"],  # commas, but every record two fields
    ['"Loved it', "Cold soup.", 'on the house"', 'He said "wow" twice'],  # and a quotation mark inside a review
    ["Great food", '"Best buy ever', "no complaints", 'Would buy again"', '"Quiet', 'and clean"', "ok"],  # two pairs
    ['"Loved it', "Cold soup.", 'on the house"', '"Never again'],  # then a quotation mark never closed: CSV's error
])
def test_the_sdks_csv_serializer_of_a_quote_pair_over_lines_in_records_as_wide_is_answered_one_review_per_line(
        endpoint, served, monkeypatch, reviews):
    """The SDK's CSVSerializer writes a list of reviews one a line, unquoted, and never ends the body with a line
    break. A review opening a quotation mark at its start and a later one closing one at its end, every record as
    wide (no review with a comma, or all with as many), was read as CSV, one record over the lines between: fewer
    answers than reviews, every answer after them off, without a word. One answer a review, each the review's own."""
    from sagemaker.serializers import CSVSerializer

    body = CSVSerializer().serialize(reviews)
    assert body == "\n".join(reviews)
    try:
        assert len(list(csv.reader(io.StringIO(body), strict=True))) < len(reviews)  # CSV's reading
    except csv.Error:
        pass  # (it was a 400 "not valid CSV")
    texts = sm_serve.input_fn(body, "text/csv")
    answers = sm_serve.predict_fn(texts, served[0])
    assert len(answers) == len(reviews)
    assert answers == [served[1].predict([review])[0] for review in reviews]
    _each_review_answered_by_endpoint_and_batch_transform(endpoint, served, monkeypatch, reviews)


@pytest.mark.parametrize("columns", [1, 2])
def test_a_pandas_body_of_reviews_over_lines_is_read_as_csv_whatever_its_quotes(served, columns):
    """pandas quotes a review with a line break, and ends every record (the last too) with one: such a body, also
    one whose quoted review opens and closes with a quotation mark of its own, is one review a record."""
    import pandas as pd

    texts = ["Loved it\nCold soup.\nThe waiter said: on the house", "ok", '"Best buy ever\nWould buy again"',
             "Great phone.\nThe battery, sadly, dies fast.", "fine"]
    frame = pd.DataFrame({"text": texts}) if columns == 1 else pd.DataFrame({"text": texts, "note": ["x"] * 5})
    for body in (frame.to_csv(header=False, index=False), _csv_serialized(frame)):
        assert body.endswith("\n")
        texts_read = sm_serve.input_fn(body, "text/csv")
        answers = sm_serve.predict_fn(texts_read, served[0])
        expected = texts if columns == 1 else [f"{t},x" for t in texts]
        assert len(answers) == len(texts)
        assert answers == [served[1].predict([t])[0] for t in expected]


def _csv_serialized(frame):
    from sagemaker.serializers import CSVSerializer

    return CSVSerializer().serialize(frame)


def test_a_csv_writers_body_over_lines_without_its_last_line_break_is_refused_not_misread():
    """A body quoted as a CSV writer quotes (a review's comma or quotation mark inside quotes) with a record over line
    breaks, but without the line break every CSV writer ends its last record with (pandas' output stripped; the SDK's
    CSVSerializer of a list of rows): CSV's reading and a line at a time cannot be told apart, and either would answer
    the other's reviews. A 400 that says so, not a guess."""
    import pandas as pd

    texts = ["Loved it\nCold soup.", 'he said "fine", then left', "ok"]
    for body in (pd.DataFrame({"text": texts}).to_csv(header=False, index=False).rstrip("\n"),
                 _csv_serialized([[t] for t in texts])):
        with pytest.raises(sm_serve.RequestError, match="over line breaks") as refused:
            sm_serve.input_fn(body, "text/csv")
        assert refused.value.status_code == 400 and "\n" not in str(refused.value)
        assert len(sm_serve.input_fn(body + "\n", "text/csv")) == len(texts)  # as the writer ends it: CSV


@pytest.mark.parametrize("columns", [["text"], ["label", "text"]])
def test_a_csv_writers_body_with_a_header_row_over_lines_without_its_last_line_break_is_read_as_csv(
        served, monkeypatch, columns):
    """A header row shows a CSV writer wrote the body (pandas' to_csv() writes one, the SDK's CSVSerializer never
    does), and the body is read as if it declared it (header=present). pandas' output with a review over lines and a
    review's comma quoted, stripped of its last line break (and such a file's first mini-batch in Batch Transform,
    which ends with none), was a 400 "cannot be told", where header=present read it, and it was read before, as CSV:
    one answer a record (in Batch Transform the header's too)."""
    import pandas as pd

    texts = ["Loved it\nCold soup.", "Great phone, but slow.", 'he said "fine", then left', "ok"]
    frame = pd.DataFrame({"label": ["positive"] * len(texts), "text": texts})[columns]
    body = frame.to_csv(index=False).rstrip("\n")
    expected = served[1].predict(texts)
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv; header=present"), served[0]) == expected
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == expected
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    answers = sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0])
    assert isinstance(answers[0], sm_serve.FieldNames) and answers[1:] == expected


def test_the_endpoint_answers_with_the_names_the_bundle_stores(endpoint, served):
    texts = ["great, friendly, tasty", "cold food, rude staff, awful"]
    status, _, response = endpoint.invoke(json.dumps(texts).encode(), "application/json", "application/json")
    assert status == 200
    rows = json.loads(response)
    assert rows == served[1].predict(texts)
    assert served[1].names == ["negative", "positive"]
    assert {row["label"] for row in rows} <= {"negative", "positive"} and {row["class_id"] for row in rows} <= {"1", "2"}


def test_a_single_json_string_is_one_review(endpoint, served):
    status, _, response = endpoint.invoke(b'"so good"', "application/json", "application/json")
    assert status == 200 and json.loads(response) == served[1].predict(["so good"])


def test_a_configuration_asks_for_ranked_classes(endpoint, served):
    """BlazingText's request shape: {"instances": [...], "configuration": {"k": K, "threshold": P}}."""
    predictor = served[1]
    body = {"instances": REVIEWS, "configuration": {"k": 2}}
    status, _, response = endpoint.invoke(json.dumps(body).encode(), "application/json", "application/json")
    assert status == 200
    ranked = json.loads(response)
    assert ranked == predictor.predict_top(REVIEWS, k=2)
    assert [len(r) for r in ranked] == [2, 2, 2] and [r[0] for r in ranked] == predictor.predict(REVIEWS)
    assert all(r[0]["probability"] >= r[1]["probability"] and {r[0]["label"], r[1]["label"]} == {"negative", "positive"}
               for r in ranked)
    cut = max(r[0]["probability"] for r in ranked[:2]) + 1e-6  # above the first two reviews' best class
    body = {"instances": REVIEWS[:2], "configuration": {"threshold": cut}}
    status, _, response = endpoint.invoke(json.dumps(body).encode(), "application/json", "application/json")
    assert status == 200 and json.loads(response) == [[], []]


@pytest.mark.parametrize("accept", [
    None, "*/*", "application/json", "APPLICATION/JSON; charset=utf-8", "application/*", "application/json, text/plain",
    "text/html, */*;q=0.8", "text/csv;q=0.1, application/*", "text/html;q=1, application/json;q=0.001",
    "application/json;q=1, */*;q=0",  # the most specific range decides
])
def test_accept_headers_that_admit_json_get_json(endpoint, accept):
    status, response_type, response = endpoint.invoke(b'["tasty"]', "application/json", accept)
    assert (status, response_type) == (200, "application/json"), response  # never the literal application/*
    assert len(json.loads(response)) == 1


@pytest.mark.parametrize("accept", [
    "text/plain, text/html", "application/json;q=0", "*/*;q=0", "application/*;q=0, text/csv;q=0, text/*",
    "application/xml", "application/json;q=zero", "text/csv;q=0, application/json;q=0",
    # a weight outside 0..1 is unreadable, so admits nothing: q=-1 on JSON was answered in JSON Lines, a type the
    # client never named (0 > -1), and q=2 on JSON Lines the same
    "application/json;q=-1", "application/jsonlines;q=2", "application/json;q=inf", "text/csv;q=2",
])
def test_accept_headers_that_admit_no_answer_type_get_406_naming_the_ones_there_are(endpoint, accept):
    status, _, response = endpoint.invoke(b'["tasty"]', "application/json", accept)
    assert status == 406 and "\n" not in response, response
    assert response == f"cannot answer in {accept!r}; accept application/json, application/jsonlines or text/csv"


def test_a_default_accept_the_endpoint_cannot_answer_is_named_in_the_406(bundle, monkeypatch):
    """The toolkit puts SAGEMAKER_DEFAULT_INVOCATIONS_ACCEPT in place of a missing or */* Accept: every such request
    was a 406 "cannot answer in '...'", a type the client never asked for, and nothing named the model's variable
    that did. (text/csv, which SageMaker Autopilot's containers set, is answered now: the next test.)"""
    monkeypatch.setenv("SAGEMAKER_PROGRAM", "fasttext_lib.entry_point")
    monkeypatch.setenv("MMS_DECODE_INPUT_REQUEST", "false")
    monkeypatch.setenv("SAGEMAKER_DEFAULT_INVOCATIONS_ACCEPT", "application/x-recordio-protobuf")  # built-ins' type
    endpoint = Endpoint(bundle)
    for accept in (None, "*/*"):
        status, _, response = endpoint.invoke(b'["tasty"]', "application/json", accept)
        assert status == 406 and "SAGEMAKER_DEFAULT_INVOCATIONS_ACCEPT" in response and "\n" not in response, response
    assert endpoint.invoke(b'["tasty"]', "application/json", "application/json")[0] == 200

# --------------------------------------------------------------------------------------------
# text/csv answers: one CSV record a line, label,probability,class_id (Batch Transform's accept="text/csv")
# --------------------------------------------------------------------------------------------
def csv_rows(answers):
    """Predictor answers -> the text/csv answer's records: label, probability (its digits as JSON writes them),
    class_id."""
    return [[a["label"], repr(a["probability"]), a["class_id"]] for a in answers]


def read_csv_lines(response):
    """A text/csv answer's records, checked to be one a line with no line end after the last (AssembleWith=Line
    adds it)."""
    assert not response.endswith("\n")
    rows = list(csv.reader(io.StringIO(response)))
    assert len(rows) == len(response.split("\n")), response  # no record over lines, no blank line
    return rows


@pytest.mark.parametrize("body, content_type", [
    ("\n".join(REVIEWS).encode() + b"\n", "text/csv"),
    ("\n".join(REVIEWS).encode() + b"\n", "text/plain"),
    (json.dumps(REVIEWS).encode(), "application/json"),
    ("\n".join(json.dumps({"source": r}) for r in REVIEWS).encode(), "application/jsonlines"),
])
@pytest.mark.parametrize("accept", ["text/csv", "text/csv; charset=utf-8", "TEXT/CSV", "text/*",
                                    "text/csv, application/json;q=0.9", "application/*;q=0.1, text/csv"])
def test_accept_text_csv_answers_one_csv_record_a_line_per_review(endpoint, served, body, content_type, accept):
    """Accept text/csv (a Batch Transform job's accept="text/csv") was a 406 for every request, which failed the
    job. It is answered with one record a line, label,probability,class_id, line for line with the reviews."""
    status, response_type, response = endpoint.invoke(body, content_type, accept)
    assert (status, response_type) == (200, "text/csv"), response
    assert read_csv_lines(response) == csv_rows(served[1].predict(REVIEWS))


def test_a_csv_answer_quotes_label_names_that_hold_commas_or_quotation_marks(endpoint, served, monkeypatch):
    names = ['bad, "really" bad', "good\u00e9 "]
    monkeypatch.setattr(served[0].predictor, "names", names)  # the endpoint's loaded model (model_fn's cache)
    texts = ["The pasta was great and the staff were friendly!", "Not good. Cold food and a long wait."]
    body = json.dumps({"instances": texts, "configuration": {"k": 2}}).encode()  # both classes: both names
    status, _, response = endpoint.invoke(body, "application/json", "text/csv")
    assert status == 200, response
    rows = read_csv_lines(response)
    expected = [[dict(c, label=names[int(c["class_id"]) - 1]) for c in r] for r in served[1].predict_top(texts, k=2)]
    assert rows == [sum(csv_rows(r), []) for r in expected]
    assert all({r[0], r[3]} == set(names) for r in rows)  # both names, whole
    assert '"bad, ""really"" bad"' in response  # quoted as CSV quotes


def test_a_ranked_csv_answer_gives_every_review_as_many_fields(endpoint, served):
    """With k classes a review (a JSON configuration or JSON Lines' per-line k), each record lists them most probable
    first, label,probability,class_id each; a review with fewer above the threshold has its record filled with empty
    fields, so that every record is as wide (k of the request's widest, the model's classes at most)."""
    predictor = served[1]
    body = json.dumps({"instances": REVIEWS, "configuration": {"k": 5}}).encode()  # more than the 2 classes
    status, _, response = endpoint.invoke(body, "application/json", "text/csv")
    assert status == 200
    assert read_csv_lines(response) == [sum(csv_rows(r), []) for r in predictor.predict_top(REVIEWS, k=2)]
    cut = max(r["probability"] for r in predictor.predict(REVIEWS)) + 1e-6  # above every review's best class
    assert cut <= 1
    body = json.dumps({"instances": REVIEWS[:2], "configuration": {"k": 2, "threshold": cut}}).encode()
    status, _, response = endpoint.invoke(body, "application/json", "text/csv")
    assert status == 200 and read_csv_lines(response) == [[""] * 6] * 2
    lines = [{"source": REVIEWS[0]}, {"source": REVIEWS[1], "k": 2}, {"source": REVIEWS[2], "threshold": cut}]
    status, _, response = endpoint.invoke("\n".join(map(json.dumps, lines)).encode(), "application/jsonlines",
                                          "text/csv")
    assert status == 200, response
    one, two = predictor.predict_top(REVIEWS[:1])[0], predictor.predict_top(REVIEWS[1:2], k=2)[0]
    assert read_csv_lines(response) == [sum(csv_rows(one), []) + [""] * 3, sum(csv_rows(two), []), [""] * 6]


def test_a_default_accept_of_text_csv_answers_csv(bundle, served, monkeypatch):
    """SAGEMAKER_DEFAULT_INVOCATIONS_ACCEPT=text/csv (SageMaker Autopilot's containers set it) stands for a missing or
    */* Accept: every such request was a 406. It is answered in CSV; an Accept the client sends still decides."""
    monkeypatch.setenv("SAGEMAKER_PROGRAM", "fasttext_lib.entry_point")
    monkeypatch.setenv("MMS_DECODE_INPUT_REQUEST", "false")
    monkeypatch.setenv("SAGEMAKER_DEFAULT_INVOCATIONS_ACCEPT", "text/csv")
    endpoint = Endpoint(bundle)
    for accept in (None, "*/*"):
        status, response_type, response = endpoint.invoke(b'["tasty"]', "application/json", accept)
        assert (status, response_type) == (200, "text/csv"), response
        assert read_csv_lines(response) == csv_rows(served[1].predict(["tasty"]))
    assert endpoint.invoke(b'["tasty"]', "application/json", "application/json")[1] == "application/json"


def split_lines(data, parts):
    """Batch Transform's SplitType=Line mini-batches (MultiRecord): ``data``'s lines cut at the line numbers
    ``parts``."""
    lines = data.splitlines(keepends=True)
    return [b"".join(lines[start:end]) for start, end in zip((0,) + parts, parts + (len(lines),))]


@pytest.mark.parametrize("columns", [["text"], ["label", "text"]])
def test_batch_transform_of_csv_with_accept_text_csv_answers_one_line_per_input_line(endpoint, served, splits,
                                                                                     monkeypatch, columns):
    """A Batch Transform job of a CSV file, split_type="Line", accept="text/csv", assemble_with="Line": each
    mini-batch of several lines (its header in the first) gets exactly one answer line per input line, in order, so
    the output file has a line for each input line and join_source="Input" joins each answer to its record. (With
    accept="text/csv" every mini-batch was a 406: the job failed.)"""
    import pandas as pd

    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    test = splits[1]
    texts = [t for t in test.texts if "\n" not in t][:60]
    frame = pd.DataFrame({"label": test.labels[:60], "text": texts})[columns]
    data = frame.to_csv(index=False).encode()
    assert b'"' in data  # reviews with commas, quoted
    output = []
    for mini_batch in split_lines(data, (25, 26, 50)):  # a mini-batch of one line among them
        status, response_type, response = endpoint.invoke(mini_batch, "text/csv", "text/csv")
        assert (status, response_type) == (200, "text/csv"), response
        status, _, in_json = endpoint.invoke(mini_batch, "text/csv", "application/json")  # the same answers
        assert status == 200 and read_csv_lines(response) == [
            list(HEADER_ANSWER) if a == HEADER_ANSWER else csv_rows([a])[0] for a in json.loads(in_json)]
        assert len(read_csv_lines(response)) == len(mini_batch.splitlines())
        output.append(response + "\n")  # AssembleWith=Line: a line end after each mini-batch's answer
    out_lines = "".join(output).splitlines()
    assert len(out_lines) == len(data.splitlines())  # one output line per input line
    rows = list(csv.reader(out_lines))
    assert rows[0] == ["label", "probability", "class_id"]  # beside the input's header
    assert rows[1] == csv_rows(served[1].predict(texts[:1]))[0]  # the first review's answer beside it
    if columns == ["text"]:
        assert rows[1:] == csv_rows(served[1].predict(texts))


def test_batch_transform_of_csv_without_accept_still_answers_a_json_array_per_mini_batch(endpoint, served,
                                                                                        monkeypatch):
    """The default is left as it was (docs/SERVING.md): a missing Accept reaches output_fn as the toolkit's default,
    application/json, which cannot be told from one the client sent, and an endpoint's clients (the SDK's Predictor
    sends */*) read JSON. A mini-batch without accept so gets one JSON array: a line per mini-batch with
    assemble_with="Line"; accept="text/csv" gives a line per record (above)."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    body = b"great food\ncold soup\nkind staff\n"
    for accept in (None, "*/*"):
        status, response_type, response = endpoint.invoke(body, "text/csv", accept)
        assert (status, response_type) == (200, "application/json"), response
        assert json.loads(response) == served[1].predict(["great food", "cold soup", "kind staff"])


def test_csv_batch_transform_as_serving_md_makes_it(sm, bundle, served, tmp_path):
    """docs/SERVING.md's CSV Batch Transform example: the CreateTransformJob request the SDK sends (accept="text/csv",
    join_source="Input"), and a mini-batch of the input file served from the model it names through the real
    toolkits in a fresh process: one CSV line per input line."""
    from fasttext_lib.sagemaker_utils import make_model

    model_data = pack_model(bundle, f"s3://{sm.bucket}/ft/packed/model.tar.gz")
    model = make_model(model_data, sm.bucket, "ft", role=ROLE, session=sm.session)
    transformer = model.transformer(instance_count=1, instance_type="ml.m5.xlarge", strategy="MultiRecord",
                                    max_payload=6, assemble_with="Line", accept="text/csv",
                                    output_path=f"s3://{sm.bucket}/ft/transform")
    data = b'text\ngreat food\n"cold, slow and rude"\n'
    s3_put(f"s3://{sm.bucket}/ft/reviews/reviews.csv", data)
    transformer.transform(f"s3://{sm.bucket}/ft/reviews/reviews.csv", content_type="text/csv", split_type="Line",
                          join_source="Input", wait=False, logs=False)
    job = sm.request("CreateTransformJob")
    assert job["TransformInput"]["ContentType"] == "text/csv" and job["TransformInput"]["SplitType"] == "Line"
    assert job["TransformOutput"]["Accept"] == "text/csv" and job["TransformOutput"]["AssembleWith"] == "Line"
    assert job["DataProcessing"]["JoinSource"] == "Input"
    container = sm.request("CreateModel")["PrimaryContainer"]
    env = {"SAGEMAKER_BATCH": "true", "SAGEMAKER_MAX_PAYLOAD_IN_MB": str(job["MaxPayloadInMB"])}
    result = serve_archive(s3_get(container["ModelDataUrl"]), tmp_path, [
        {"body": data, "content_type": job["TransformInput"]["ContentType"],
         "accept": job["TransformOutput"]["Accept"]}], program="entry_point.py", env=env)
    answer = result["answers"][0]
    assert (answer["status"], answer["content_type"]) == (200, "text/csv"), answer["body"]
    assert read_csv_lines(answer["body"]) == [["label", "probability", "class_id"]] + csv_rows(
        served[1].predict(["great food", "cold, slow and rude"]))
    transformer.delete_model()


# --------------------------------------------------------------------------------------------
# JSON Lines (SageMaker Batch Transform, BlazingText's shapes) and the response cap
# --------------------------------------------------------------------------------------------
def blazingtext_lines(rows, ranked):
    """Predictor answers -> BlazingText's Batch Transform lines, with class_id beside label."""
    out = []
    for row in rows:
        classes = row if ranked else [row]
        out.append({"label": [c["label"] for c in classes], "prob": [c["probability"] for c in classes],
                    "class_id": [c["class_id"] for c in classes]})
    return out


def read_lines(response):
    """An answer's JSON Lines; none empty, no line end after the last (AssembleWith=Line adds it)."""
    assert not response.endswith("\n")
    return [json.loads(line) for line in response.split("\n")]


@pytest.mark.parametrize("batch", [False, True])
def test_jsonl_sent_as_text_csv_is_answered_as_application_jsonlines_answers_it(endpoint, served, monkeypatch, batch):
    """A .jsonl file given to Batch Transform (or an endpoint) with content_type="text/csv": read as JSON Lines, as
    predict reads the file (predict_input._json_lines' test, lines.json_lines_start), with application/jsonlines'
    answers, one a line, blank lines too. Read as CSV, each review was its object's JSON text, keys and braces as
    words. A CSV whose text merely starts with a brace ({curly} text) is read as CSV still, as predict reads it. So
    whatever the header parameter says (JSON Lines have no header row), as predict --format csv and training read a
    JSON Lines file: a pipeline's content type for its CSV files, given a .jsonl, answers each line."""
    if batch:
        monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    lines = [json.dumps({"text": "The pasta was great and the staff were friendly!"}), "",
             json.dumps({"text": "Not good. Cold food and a long wait.", "id": 3})]
    body = ("\n".join(lines) + "\n").encode()
    as_jsonlines = endpoint.invoke(body, "application/jsonlines", "application/jsonlines")
    assert as_jsonlines[0] == 200
    for content_type in ("text/csv", "text/csv; header=present", "text/csv; header=absent"):
        assert endpoint.invoke(body, content_type, "application/jsonlines") == as_jsonlines, content_type
    expected = served[1].predict([json.loads(line)["text"] if line else "" for line in lines])
    assert read_lines(as_jsonlines[2]) == blazingtext_lines(expected, ranked=False)  # one answer a line
    not_json = b"{curly} braces, great food\n{not json\n"
    status, _, response = endpoint.invoke(not_json, "text/csv", "application/json")
    assert status == 200 and json.loads(response) == served[1].predict(["{curly} braces, great food", "{not json"])


# what the toolkit gives input_fn when the Accept header is missing or */*: its default, application/json
@pytest.mark.parametrize("accept", ["application/jsonlines", None, "*/*", "application/json"])
def test_jsonlines_in_jsonlines_out_one_line_per_record_in_order(endpoint, served, accept):
    predictor = served[1]
    texts = ["The pasta was great and the staff were friendly!", "Not good. Cold food and a long wait.",
             "caf\u00e9 \u2713 tasty", "", "so so"]
    records = [{"source": texts[0]}, {"source": texts[1], "id": 17}, {"source": texts[2]}, {"source": texts[3]},
               texts[4]]  # an extra key is carried, not refused; a bare string (InputFilter "$.source") is a review
    body = "\r\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode("utf-8")  # no final line end
    status, response_type, response = endpoint.invoke(body, "application/jsonlines", accept)
    assert (status, response_type) == (200, "application/jsonlines"), response
    assert read_lines(response) == blazingtext_lines(predictor.predict(texts), ranked=False)
    assert [line["label"][0] for line in read_lines(response)] == [row["label"] for row in predictor.predict(texts)]


def test_a_jsonlines_id_of_more_digits_than_python_converts_is_left_alone(endpoint, served):
    """An integer of over 4300 digits is valid JSON, but Python refuses to convert it: the line failed with a 500."""
    body = b'{"source": "great food", "id": ' + b"9" * 5000 + b'}\n{"source": "awful"}\n'
    status, _, response = endpoint.invoke(body, "application/jsonlines", "application/jsonlines")
    assert status == 200, response
    assert read_lines(response) == blazingtext_lines(served[1].predict(["great food", "awful"]), ranked=False)


def test_jsonlines_of_a_published_dataset_are_answered_for_their_text_keys(endpoint, served):
    """The Yelp dataset's review.json lines sent as they are (Batch Transform over the file): each was a 400 for want
    of "source"; now answered for its text keys (several joined in their order), the stars and ids not words."""
    predictor = served[1]
    records = [{"review_id": "r1", "stars": 5.0, "text": "The pasta was great!", "date": "2018-07-07"},
               {"reviewText": "Cold food and a long wait.", "overall": 1.0, "summary": "Not good"},
               {"source": "so so", "text": "ignored: source wins"},
               {"review_id": "r2", "stars": 3.0, "text": None},  # pandas' missing text: empty, as predict reads it
               {"reviewText": None, "overall": 4.0, "summary": "Fine"}]  # (the whole request was a 400)
    body = "\n".join(json.dumps(r) for r in records).encode("utf-8")
    status, _, response = endpoint.invoke(body, "application/jsonlines", "application/jsonlines")
    assert status == 200, response
    texts = ["The pasta was great!", "Cold food and a long wait. Not good", "so so", "", "Fine"]
    assert read_lines(response) == blazingtext_lines(predictor.predict(texts), ranked=False)


def test_a_jsonlines_null_source_is_an_empty_review_as_predict_reads_it(endpoint, served):
    """pandas writes a missing review as null (``df[["source"]].to_json(orient="records", lines=True)``): predict
    answers that line as an empty review, and the endpoint did so for a null "text", but a null "source", the
    documented key, was a 400 that failed the whole request (in Batch Transform: the mini-batch)."""
    body = b'{"source": "great food"}\n{"source": null, "id": 2}\n{"source": "awful"}\n'
    status, _, response = endpoint.invoke(body, "application/jsonlines", "application/jsonlines")
    assert status == 200, response
    from fasttext_lib.jsonl import jsonl_texts

    texts = ["great food", "", "awful"]
    assert list(jsonl_texts(body.decode().splitlines(), "reviews.jsonl")) == texts  # what predict reads in the file
    assert read_lines(response) == blazingtext_lines(served[1].predict(texts), ranked=False)


@pytest.mark.parametrize("body, content_type", [
    (b'["great food", null, "awful"]', "application/json"),
    (b'{"instances": ["great food", null, "awful"], "configuration": {"k": 1}}', "application/json"),
    # Python's json writes a float column's missing value (NaN) so: the sagemaker SDK's JSONSerializer given
    # df["text"].values, or json.dumps(df.to_dict("records")); Python's json reads it back as a float nan
    (b'["great food", NaN, "awful"]', "application/json"),
    (b'{"source": "great food"}\n{"source": NaN}\n{"source": "awful"}\n', "application/jsonlines"),
    (b'{"source": "great food"}\n{"text": NaN, "stars": 3}\n{"source": "awful"}\n', "application/jsonlines"),
    # a line that is a bare null (what an InputFilter of $.source leaves of {"source": null}), as a bare string is a
    # review: it was a 400 for want of "source"
    (b'{"source": "great food"}\nnull\n{"source": "awful"}\n', "application/jsonlines"),
    (b'"great food"\nNaN\n"awful"\n', "application/jsonlines"),
])
def test_a_missing_review_in_json_is_an_empty_review_as_in_json_lines(endpoint, served, body, content_type):
    """pandas writes a missing review as null in JSON as in JSON Lines (``df.to_json(orient="records")``), Python's
    json module as NaN: a JSON Lines line {"source": null} was answered as an empty review, while the same null in a
    JSON list was a 400 that failed the whole request (a Batch Transform job with split_type=None: the job)."""
    status, _, response = endpoint.invoke(body, content_type, content_type)
    assert status == 200, response
    expected = served[1].predict(["great food", "", "awful"])
    if content_type == "application/jsonlines":
        assert read_lines(response) == blazingtext_lines(expected, ranked=False)
        from fasttext_lib.jsonl import jsonl_texts

        lines = body.decode().splitlines()
        if lines[1].startswith("{"):  # (predict's files hold objects: a bare null or string line is refused there)
            assert list(jsonl_texts(lines[1:2], "r.jsonl")) == [""]  # what predict reads in a file (NaN was "nan")
    else:
        answers = json.loads(response)
        assert answers in (expected, [[row] for row in expected])  # (k=1 ranked: a list of one class per review)


@pytest.mark.parametrize("body", [b"null", b"null\n", b"NaN\n", b'""\n', b'{"source": null}\n'])
def test_a_jsonlines_body_of_one_missing_review_is_answered_as_one_empty_review(endpoint, served, body):
    """A JSON Lines body that was only a null line was a 400 ('must be {"source": ...}'), where {"source": null} or
    "" alone is one record (an empty review) and answered: a missing review is an empty one everywhere."""
    status, _, response = endpoint.invoke(body, "application/jsonlines", "application/jsonlines")
    assert status == 200, response
    assert read_lines(response) == blazingtext_lines(served[1].predict([""]), ranked=False)


def test_jsonlines_per_line_k_and_threshold(endpoint, served):
    """BlazingText's {"source": ..., "k": 2}; each line its own k."""
    predictor = served[1]
    body = b'{"source": "great food", "k": 2}\n{"source": "awful"}\n{"source": "fine", "k": -1, "threshold": 1.0}\n'
    status, _, response = endpoint.invoke(body, "application/jsonlines", "application/jsonlines")
    assert status == 200, response
    lines = read_lines(response)
    assert lines[0] == blazingtext_lines(predictor.predict_top(["great food"], k=2), ranked=True)[0]
    assert len(lines[0]["label"]) == 2 and lines[0]["prob"][0] >= lines[0]["prob"][1]
    assert lines[1] == blazingtext_lines(predictor.predict(["awful"]), ranked=False)[0]
    assert lines[2] == {"label": [], "prob": [], "class_id": []}  # no class reaches probability 1.0: an empty line's worth


def test_jsonlines_k_and_threshold_as_pandas_writes_them_are_read(endpoint, served):
    """pandas writes a column of k with a row that has none as floats and null (``df.to_json(orient="records",
    lines=True)``: ``"k": 2.0``, ``"k": null``): every such line was a 400 that failed its Batch Transform
    mini-batch. A null k or threshold is the default (as a null source is an empty review); a k of a whole number
    written as a float is that number. The same in a JSON request's configuration."""
    import pandas as pd

    predictor = served[1]
    frame = pd.DataFrame({"source": ["great food", "awful", "fine"], "k": [2, None, -1],
                          "threshold": [None, 0.0, 1.0]})
    body = frame.to_json(orient="records", lines=True).encode()
    assert b'"k":2.0' in body and b'"k":null' in body and b'"threshold":null' in body  # what pandas writes
    status, _, response = endpoint.invoke(body, "application/jsonlines", "application/jsonlines")
    assert status == 200, response
    assert read_lines(response) == [blazingtext_lines(predictor.predict_top(["great food"], k=2), ranked=True)[0],
                                    blazingtext_lines(predictor.predict_top(["awful"]), ranked=True)[0],
                                    {"label": [], "prob": [], "class_id": []}]
    body = json.dumps({"instances": ["great food"], "configuration": {"k": 2.0, "threshold": None}}).encode()
    status, _, response = endpoint.invoke(body, "application/json", "application/json")
    assert status == 200 and json.loads(response) == predictor.predict_top(["great food"], k=2), response
    for k in (2.5, "2", True):  # still refused: no whole number
        status, _, response = endpoint.invoke(json.dumps({"source": "a", "k": k}).encode(), "application/jsonlines")
        assert status == 400 and "k must be a whole number" in response, response


def test_jsonlines_lines_each_with_its_own_threshold_are_scored_once(served, monkeypatch):
    """Each distinct (k, threshold) of a JSON Lines request was scored apart, its lines found by a scan of the whole
    batch: 20,000 lines each with its own threshold (1 MB) took 23 times as long as the same lines with one, a
    request of a few MB most of SageMaker's 60 s. The reviews are scored once per batch, each line cut to its
    setting."""
    model, predictor = served
    texts = [f"good food {i}" if i % 3 else f"awful wait {i}" for i in range(3000)]
    settings = [(1 + i % 3 if i % 5 else -1, (i % 1000) / 1000) for i in range(3000)]
    body = "\n".join(json.dumps({"source": t, "k": k, "threshold": p}) for t, (k, p) in zip(texts, settings)).encode()
    scored = []
    proba = Predictor.predict_proba
    monkeypatch.setattr(Predictor, "predict_proba", lambda self, chunk: scored.append(len(chunk)) or proba(self, chunk))
    answers = sm_serve.predict_fn(sm_serve.input_fn(body, "application/jsonlines"), model)
    assert scored == [2048, 952]  # one scoring per batch of sm_serve.RESPONSE_CHECK_REVIEWS
    monkeypatch.undo()
    alone = [predictor.predict_top([t], k, p)[0] for t, (k, p) in zip(texts, settings)]  # (a review scored alone
    assert [[c["class_id"] for c in a] for a in answers] == [[c["class_id"] for c in a] for a in alone]  # differs in
    assert [c["probability"] for a in answers for c in a] == pytest.approx(                              # the last
        [c["probability"] for a in alone for c in a], abs=1e-6)                                          # digits)


@pytest.mark.parametrize("body, content_type, accept", [
    ("\n".join(REVIEWS).encode() + b"\n", "text/plain", "application/jsonlines"),  # a plain review file, lines out
    (json.dumps({"instances": REVIEWS}).encode(), "application/json", "application/jsonlines, application/json;q=0.5"),
    (json.dumps(REVIEWS).encode(), "application/json", "application/json;q=0, */*"),  # JSON refused, anything else not
])
def test_other_requests_answer_jsonlines_when_accept_prefers_it(endpoint, served, body, content_type, accept):
    status, response_type, response = endpoint.invoke(body, content_type, accept)
    assert (status, response_type) == (200, "application/jsonlines"), response
    assert read_lines(response) == blazingtext_lines(served[1].predict(REVIEWS), ranked=False)


def test_jsonlines_configuration_request_answered_in_lines(endpoint, served):
    body = json.dumps({"instances": REVIEWS, "configuration": {"k": 2}}).encode()
    status, _, response = endpoint.invoke(body, "application/json", "application/jsonlines")
    assert status == 200 and read_lines(response) == blazingtext_lines(served[1].predict_top(REVIEWS, k=2), ranked=True)


@pytest.mark.parametrize("body, message", [
    (b'{"source": "a"}\n{"source": "b"}\n{"id": "c"}\n', 'line 3 must be {"source": "review text"}'),
    (b'{"source": "a"}\n{"stars": 5, "text": 7}\n', 'line 2 must be {"source": "review text"}'),
    (b'{"source": "a"}\n{"source": 5}\n', 'line 2 must be {"source": "review text"}'),
    (b'{"source": "a"}\n["b"]\n', 'line 2 must be {"source": "review text"}'),
    # a JSON request sent as JSON Lines (the SDK's JSONLinesSerializer given its string, or the wrong content type):
    # the 400 said only what a line must be, not to send the body as application/json
    (b'{"instances": ["a", "b"], "configuration": {"k": 2}}', "(a JSON request? send it as application/json)"),
    (b'["a", "b"]', 'line 1 must be {"source": "review text"} (with optional "k"; or a text key such as "text" or '
     '"review"), got \'["a", "b"]\' (a JSON request? send it as application/json)'),
    (b'{"source": "a"}\n{"source": "b"\n', "line 2 is not valid JSON: Expecting ',' delimiter at column 15"),
    (b'{"source": "a", "k": 0}\n', "line 1: k must be a whole number >= 1"),
    (b'{"source": "a"}\n{"source": "b", "threshold": 2}\n', "line 2: threshold must be a probability"),
    (b"", "request holds no review text: the body is empty"),
    (b'{"source": "a"}\n{"source": "b", "k": 2, "source": "c"}\n', 'line 2 repeats the key "source" in one JSON object'),
    (b'{"source": "caf\xe9"}\n', "request body is not valid utf-8 text"),  # bytes reach input_fn undecoded: a 400
])
def test_bad_json_lines_get_a_one_line_400_naming_the_line(endpoint, body, message):
    status, _, response = endpoint.invoke(body, "application/jsonlines", "application/jsonlines")
    assert status == 400 and message in response.splitlines()[0], response


@pytest.mark.parametrize("ending", ["\n\n", "\r\n\r\n", "\n\n\n", "\n  \n", "\r\n\t\r\n"])
def test_json_lines_that_end_with_blank_lines_are_answered_one_line_per_record(endpoint, served, ending):
    """A file an editor or jq wrote often ends with a blank line after the last record's line end: the request (in
    Batch Transform: the file's last mini-batch, failing the job) was a 400, "line 3 is empty". Blank lines after
    the last record end the body; they are no records and get no answer. (A blank line between records is one, an
    empty review: test_a_tricky_file_gets_the_same_answers_in_the_same_places_from_predict_and_the_endpoint.)"""
    texts = ["The pasta was great and the staff were friendly!", "Not good. Cold food and a long wait."]
    newline = "\r\n" if "\r" in ending else "\n"
    body = newline.join(json.dumps({"source": t}) for t in texts) + ending
    status, response_type, response = endpoint.invoke(body.encode(), "application/jsonlines", "application/jsonlines")
    assert (status, response_type) == (200, "application/jsonlines"), response
    assert read_lines(response) == blazingtext_lines(served[1].predict(texts), ranked=False)
    # a body of blank lines alone holds no record
    status, _, response = endpoint.invoke(ending.encode(), "application/jsonlines", "application/jsonlines")
    assert (status, response) == (400, f"request holds no review text: the body is {ending.count(chr(10))} blank "
                                        f"lines"), response


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_batch_transform_answers_every_line_of_a_json_lines_mini_batch_blank_ones_at_its_end_too(served, monkeypatch,
                                                                                                newline):
    """A blank line between records is a record, answered as an empty review in its place. Batch Transform
    (SplitType=Line) cuts a file into mini-batches wherever MaxPayloadInMB falls, so such a line may end a mini-batch,
    or be one alone (strategy="SingleRecord"): at a mini-batch's end it was taken for the file's last lines and left
    unanswered (one answer short: the job failed, or every answer after it a line off), and alone it was a 400,
    "request holds no JSON lines", which failed the job. Every line sent gets its answer, wherever the cut falls."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    lines = [json.dumps({"source": "great food"}), "", "  ", json.dumps({"source": "cold soup"}), "",
             json.dumps({"source": "would go again"})]
    expected = served[1].predict(["great food", "", "", "cold soup", "", "would go again"])
    for cuts in [(1,), (2,), (3,), (5,), (2, 3), tuple(range(1, len(lines)))]:  # the last: SingleRecord
        answers = []
        for start, end in zip((0,) + cuts, cuts + (len(lines),)):
            mini_batch = "".join(line + newline for line in lines[start:end]).encode()
            part = sm_serve.predict_fn(sm_serve.input_fn(mini_batch, "application/jsonlines"), served[0])
            assert len(part) == end - start, (cuts, mini_batch, part)
            answers += [answer[0] for answer in part]
        assert answers == expected, cuts


@pytest.mark.parametrize("body, content_type, accept", [
    (b'["great food", "cut \\ud83d here \\ud83d\\ude00"]', "application/json", "application/json"),
    (b'{"instances": ["great food", "cut \\ud83d here \\ud83d\\ude00"], "configuration": {"k": 1}}',
     "application/json", "application/json"),
    (b'{"source": "great food"}\n{"source": "cut \\ud83d here \\ud83d\\ude00", "k": 1}\n', "application/jsonlines",
     "application/jsonlines"),
    (b'{"stars": 5.0, "text": "great food"}\n{"stars": 1.0, "text": "cut \\ud83d here \\ud83d\\ude00"}\n',
     "application/jsonlines", "application/jsonlines"),
])
def test_a_lone_surrogate_escape_in_a_json_request_is_the_replacement_character_as_in_a_file(endpoint, served, tmp_path,
                                                                                          body, content_type, accept):
    """"\\ud83d" without its other half (a tweet cut inside an emoji) is valid JSON but no character. Training and
    predict read it in a JSON Lines file as U+FFFD; the endpoint answered the whole request (in Batch Transform: its
    mini-batch, failing the job) with a 400. It is U+FFFD now, for every JSON shape; a pair is its one emoji."""
    from fasttext_lib.jsonl import jsonl_texts

    status, _, response = endpoint.invoke(body, content_type, accept)
    assert status == 200, response
    texts = ["great food", "cut \ufffd here \U0001f600"]
    (tmp_path / "reviews.jsonl").write_bytes(body)
    if b'"text"' in body:  # what predict reads in the same lines as a file
        assert list(jsonl_texts(open(tmp_path / "reviews.jsonl", encoding="utf-8").read().splitlines(),
                                "reviews.jsonl")) == texts
    if accept == "application/jsonlines":  # (each line ranked, as a JSON Lines request's always are)
        assert read_lines(response) == blazingtext_lines(served[1].predict_top(texts, k=1), ranked=True)
    elif b"instances" in body:
        assert json.loads(response) == served[1].predict_top(texts, k=1)
    else:
        assert json.loads(response) == served[1].predict(texts)


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8",
                                          "application/jsonlines", "application/jsonlines; charset=utf-8"])
def test_every_json_content_type_reads_a_lone_surrogate_as_the_replacement_character(served, content_type):
    """The escape in bytes, in a str (a server that decoded the body), and the character itself in a str (what a
    decoder that keeps bad bytes as surrogates hands on): each is U+FFFD in every JSON type. The character in a
    str was measured for the size limit as it stood: a UnicodeEncodeError, a 500."""
    lines = content_type.startswith("application/jsonlines")
    for body in ('{"source": "cut \\ud83d here"}\n' if lines else '["cut \\ud83d here"]',
                 '{"source": "cut \ud83d here"}\n' if lines else '["cut \ud83d here"]'):
        for sent in (body, body.encode("utf-8", "surrogatepass")) if "\\" in body else (body,):
            reviews = sm_serve.input_fn(sent, content_type)
            assert list(reviews) == ["cut \ufffd here"], (sent, content_type)
            assert sm_serve.predict_fn(reviews, served[0])  # scored, not a 500 in featurization
    # text that is no JSON: a lone surrogate is no text, a 400 (as bytes that are not UTF-8 are)
    for content_type in ("text/plain", "text/csv"):
        with pytest.raises(sm_serve.RequestError) as caught:
            sm_serve.input_fn("cut \ud83d here", content_type)
        assert (caught.value.status_code, caught.value.message) == (400, "review 0 is not valid Unicode text (character "
                                                                         "'\\ud83d' at position 4: a lone surrogate)")


def test_the_toolkit_decodes_json_and_csv_itself_until_model_fn_takes_them_off_its_list(endpoint):
    """The toolkit decodes only these itself (its own list, read in a fresh process: application/jsonlines
    reaches input_fn as the raw bytes); once model_fn has run (the endpoint fixture), none of ours is on it."""
    own = subprocess.run([sys.executable, "-c", "from sagemaker_inference import content_types as c; "
                          "print(','.join(c.UTF8_TYPES))"], capture_output=True, text=True, timeout=120)
    assert own.returncode == 0 and set(own.stdout.strip().split(",")) == {"application/json", "text/csv"}, own
    from sagemaker_inference import content_types

    assert not {sm_serve.JSON_TYPE, sm_serve.CSV_TYPE, sm_serve.JSONLINES_TYPE} & set(content_types.UTF8_TYPES)


def test_a_bad_request_is_answered_in_one_line_and_a_server_errors_traceback_goes_to_the_log(endpoint, monkeypatch,
                                                                                            capsys):
    """The toolkit put the Python traceback after every error's message: a client that sent bad JSON got our line
    and 20 lines of this library's internals. A 4xx is now its one line. A 500 (our defect) was answered with the
    traceback too (file paths and code of the server, to whoever sent the request, and nowhere else): its body is
    now one line that points to the log, and the traceback goes to the worker's stderr (the endpoint's log). Both
    say they are text: the toolkit's error path set no Content-Type, and a client's HTTP library guessed."""
    for body, content_type in ((b'["unclosed', "application/json"), (b"", "text/plain"), (b"x", "text/html")):
        status, response_type, response = endpoint.invoke(body, content_type, "application/json")
        assert 400 <= status < 500 and "\n" not in response and "Traceback" not in response, response
        assert response_type == "text/plain; charset=utf-8", (body, response_type)

    def broken(self, texts):
        raise RuntimeError("a defect of ours")

    monkeypatch.setattr(Predictor, "predict", broken)
    capsys.readouterr()
    status, response_type, response = endpoint.invoke(b'["fine"]', "application/json", "application/json")
    assert status == 500 and response == "a defect of ours (a server error; its traceback is in the endpoint's log)"
    assert response_type == "text/plain; charset=utf-8"
    logged = capsys.readouterr().err
    assert "Traceback" in logged and "RuntimeError: a defect of ours" in logged

    def broken_twice(self, texts):  # an MXNetError's message holds its C++ stack trace, over many lines
        raise RuntimeError("[12:00:00] src/storage.cc:42: out of memory\nStack trace:\n  [bt] (0) libmxnet.so")

    monkeypatch.setattr(Predictor, "predict", broken_twice)
    status, _, response = endpoint.invoke(b'["fine"]', "application/json", "application/json")
    assert status == 500 and "\n" not in response and "libmxnet" not in response, response
    # the HTTP status line's reason phrase (the toolkit's GenericInferenceToolkitError: the whole message, its lines
    # joined) held the C++ stack too, sent to the client in the status line
    assert "libmxnet" not in endpoint.phrase and "Stack trace" not in endpoint.phrase, endpoint.phrase
    assert "libmxnet" in capsys.readouterr().err

    monkeypatch.setattr(Predictor, "predict", lambda self, texts: [][0] if texts else [])
    status, _, response = endpoint.invoke(b'["fine"]', "application/json", "application/json")
    assert status == 500 and response.startswith("list index out of range (a server error"), response
    assert endpoint.invoke(b'["fine"]', "application/json", "application/json")[0] == 500  # (still patched)
    monkeypatch.undo()
    assert endpoint.invoke(b'["fine"]', "application/json", "application/json")[0] == 200  # serving on


# a JSON Lines request is answered in JSON Lines only: an Accept that refuses it by name (q=0) was answered in it
# (text/csv, one answer a line too, is answered: test_accept_text_csv_answers_one_csv_record_a_line_per_review)
@pytest.mark.parametrize("accept", ["application/jsonlines;q=0, application/json", "text/plain",
                                    "*/*, application/jsonlines;q=0, text/csv;q=0", "application/json;q=0"])
def test_jsonlines_accept_that_admits_neither_gets_406(endpoint, accept):
    status, _, response = endpoint.invoke(b'{"source": "a"}\n', "application/jsonlines", accept)
    assert status == 406, response
    assert response == f"cannot answer in {accept!r}; accept application/jsonlines or text/csv"


def test_batch_transform_file_through_the_packed_model(bundle, served, tmp_path):
    """A Batch Transform mini-batch (SplitType=Line, MultiRecord) through the packed model.tar.gz's own
    code/ and the real toolkits, in a fresh process; and one record per request (SingleRecord)."""
    texts = ["great pasta, friendly staff", "cold food and a long wait", "ok", "the best brunch in town"] * 5
    file = "".join(json.dumps({"source": t}) + "\n" for t in texts).encode()
    dest = pack_model(bundle, str(tmp_path / "model.tar.gz"))
    requests = [{"body": file, "content_type": "application/jsonlines", "accept": "application/jsonlines"}]
    requests += [{"body": json.dumps({"source": t}).encode() + b"\n", "content_type": "application/jsonlines",
                  "accept": "application/jsonlines"} for t in texts[:3]]
    result = serve_archive(open(dest, "rb").read(), tmp_path, requests)
    expected = blazingtext_lines(served[1].predict(texts), ranked=False)
    answers = result["answers"]
    assert [(a["status"], a["content_type"]) for a in answers] == [(200, "application/jsonlines")] * 4
    assert read_lines(answers[0]["body"]) == expected
    assert [read_lines(a["body"]) for a in answers[1:]] == [[line] for line in expected[:3]]
    assert len(answers[0]["body"].splitlines()) == len(texts)


def test_a_response_over_the_cap_is_a_413_that_says_what_fits(endpoint, served, monkeypatch):
    predictor = served[1]
    texts = [f"review {i}" for i in range(50)]
    body = json.dumps({"instances": texts, "configuration": {"k": -1}}).encode()
    full = json.dumps(predictor.predict_top(texts, k=-1))
    monkeypatch.setattr(sm_serve, "MAX_RESPONSE_BYTES", len(full))
    status, _, response = endpoint.invoke(body, "application/json", "application/json")
    assert status == 200 and response == full  # exactly at the cap: answered
    monkeypatch.setattr(sm_serve, "MAX_RESPONSE_BYTES", len(full) - 1)
    status, _, response = endpoint.invoke(body, "application/json", "application/json")
    first = response.splitlines()[0]
    assert status == 413, response
    assert first.startswith(f"the answer to 50 reviews would exceed the response limit of {len(full) - 1} bytes "
                            f"(FASTTEXT_MAX_RESPONSE_BYTES)") and "send at most about 49 reviews per request" in first
    # the same answer in JSON Lines is smaller: it fits
    lines = "".join(json.dumps({"source": t, "k": -1}) + "\n" for t in texts).encode()
    status, _, response = endpoint.invoke(lines, "application/jsonlines", "application/jsonlines")
    assert status == 200 and len(response) < len(full) and len(read_lines(response)) == 50


def test_a_runaway_answer_stops_before_the_rest_is_scored(served, monkeypatch):
    """Many tiny lines with k=-1: scoring stops at the batch that crosses the cap, not after all of them."""
    model = served[0]
    scored = []
    predict_top = model.predictor.predict_top
    monkeypatch.setattr(model.predictor, "predict_top", lambda texts, *a, **k: scored.append(len(texts)) or
                        predict_top(texts, *a, **k))
    monkeypatch.setattr(sm_serve, "RESPONSE_CHECK_REVIEWS", 100)
    monkeypatch.setattr(sm_serve, "MAX_RESPONSE_BYTES", 20000)
    reviews = sm_serve.input_fn(json.dumps({"instances": ["a"] * 10000, "configuration": {"k": -1}}).encode(),
                                "application/json; charset=utf-8")
    with pytest.raises(sm_serve.RequestError) as caught:
        sm_serve.predict_fn(reviews, model)
    assert caught.value.status_code == 413
    # ~60 bytes a review in CSV, the smallest form (negative,0.61...,1,positive,0.38...,2): the cap at ~330
    assert sum(scored) <= 500 and len(scored) <= 5, scored


def test_a_review_too_long_for_the_workers_memory_is_a_413_naming_it(served, monkeypatch, tmp_path):
    """A request whose review needs more memory to featurize than the worker has left (a Batch Transform record of
    tens of MB on a small instance): the OOM killer ended the worker mid-request, a failure with no message. Now a
    413 that names the review and what to do, and the worker goes on serving."""
    machine_with_memory(monkeypatch, tmp_path, 16384)
    review = "good food but slow service! " * 400_000  # 11.2 million characters
    with pytest.raises(sm_serve.RequestError) as caught:
        sm_serve.predict_fn(["fine", review], served[0])
    assert caught.value.status_code == 413
    assert str(caught.value).startswith("413 Request Entity Too Large: review 2: a document of 11.2 million characters")
    assert "split it into shorter documents" in str(caught.value)
    assert len(sm_serve.predict_fn(["fine", "slow"], served[0])) == 2


@pytest.fixture(scope="module")
def wide_compact(splits, tmp_path_factory):
    """A compact bigram bundle of emsize 300 served: scoring gathers each review's rows from its stored ones."""
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train

    trained = train(*splits, TrainConfig(**{**FAST, "epochs": 1, "emsize": 300, "buckets": 100_000}, progress=False,
                                         ctx="cpu"))
    return ep.model_fn(save_bundle(trained, str(tmp_path_factory.mktemp("wide") / "model"), compact="float32"))


def test_a_review_whose_scoring_needs_more_memory_than_the_worker_has_is_a_413(wide_compact, monkeypatch, tmp_path):
    """Featurizing this 10 MB review takes ~80 MB; scoring it with a compact bundle of emsize 300 gathers its ~100k
    distinct rows, ~120 MB more. With 120 MB left the memory check (featurizing only) let it through, and the OOM
    killer ended the worker mid-request. Now a 413 that says scoring needs the memory; the worker goes on serving."""
    from fasttext_lib.synthetic import generate_reviews

    review = " ".join(generate_reviews(8_000, seed=4).texts).replace("\n", " ")[:10_000_000]  # (~11 million)
    assert len(review) == 10_000_000
    machine_with_memory(monkeypatch, tmp_path, 122880)
    with pytest.raises(sm_serve.RequestError) as caught:
        sm_serve.predict_fn(["fine", review], wide_compact)
    assert caught.value.status_code == 413
    assert str(caught.value).startswith("413 Request Entity Too Large: review 2: a document of 10.0 million characters")
    assert "MB of memory to score, and this process has 120 MB left" in str(caught.value), str(caught.value)
    assert len(sm_serve.predict_fn(["fine", "slow"], wide_compact)) == 2


def test_max_response_bytes_comes_from_the_model_environment(bundle, served, tmp_path):
    dest = pack_model(bundle, str(tmp_path / "model.tar.gz"))
    one = json.dumps(served[1].predict(["good food"]))
    result = serve_archive(open(dest, "rb").read(), tmp_path, [
        {"body": b"good food\n", "content_type": "text/plain", "accept": "application/json"},
        {"body": b"good food\ngood food\n", "content_type": "text/plain", "accept": "application/json"},
    ], env={"FASTTEXT_MAX_RESPONSE_BYTES": str(len(one))})
    ok, too_big = result["answers"]
    assert ok["status"] == 200 and ok["body"] == one
    assert too_big["status"] == 413 and f"response limit of {len(one)} bytes" in too_big["body"], too_big


def test_batch_transform_sets_the_defaults_from_its_own_environment():
    """SageMaker sets SAGEMAKER_BATCH and SAGEMAKER_MAX_PAYLOAD_IN_MB (MaxPayloadInMB) in a Batch Transform
    container: a mini-batch it sends fits the request cap, and the answer cap is the memory guard's."""
    batch = {"SAGEMAKER_BATCH": "true", "SAGEMAKER_MAX_PAYLOAD_IN_MB": "20"}
    assert sm_serve.max_request_bytes(batch) == 20 * 1024 * 1024
    assert sm_serve.max_response_bytes(batch) == sm_serve.BATCH_RESPONSE_BYTES == 100 * 1000 * 1000
    ours = {**batch, "FASTTEXT_MAX_REQUEST_BYTES": "1000", "FASTTEXT_MAX_RESPONSE_BYTES": "2000"}
    assert (sm_serve.max_request_bytes(ours), sm_serve.max_response_bytes(ours)) == (1000, 2000)  # ours win
    for unusable in ("-1", "", "six"):  # the platform's variable: never stops the endpoint
        assert sm_serve.max_request_bytes({"SAGEMAKER_MAX_PAYLOAD_IN_MB": unusable}) == 6 * 1024 * 1024
    # MaxPayloadInMB=0, "no limit" (whole files streamed): the 6 MiB endpoint cap refused every file above it
    assert sm_serve.max_request_bytes({**batch, "SAGEMAKER_MAX_PAYLOAD_IN_MB": "0"}) == 100 * 1024 * 1024
    assert sm_serve.max_response_bytes({"SAGEMAKER_BATCH": "false"}) == 6 * 1000 * 1000


def test_a_batch_transform_container_takes_a_mini_batch_over_6_mib(bundle, tmp_path):
    dest = pack_model(bundle, str(tmp_path / "model.tar.gz"))
    line = json.dumps({"source": "good food " * 50}).encode() + b"\n"
    body = line * (6 * 1024 * 1024 // len(line) + 1)  # just over 6 MiB
    result = serve_archive(open(dest, "rb").read(), tmp_path, [
        {"body": body, "content_type": "application/jsonlines", "accept": "application/jsonlines"},
    ], env={"SAGEMAKER_BATCH": "true", "SAGEMAKER_MAX_PAYLOAD_IN_MB": "7"})
    answer = result["answers"][0]
    assert answer["status"] == 200, answer["body"][:300]
    assert len(answer["body"].splitlines()) == len(body.splitlines())


@pytest.mark.parametrize("body, content_type, status, message", [
    (b"[1, 2]", "application/x-npy", 415, "content type 'application/x-npy' is not supported"),
    (b"x", None, 415, "no Content-Type"),
    (b'{"instances": ', "application/json", 400, "not valid JSON"),
    (b'{"reviews": ["a"]}', "application/json", 400, '{"instances": [review, ...]}'),
    # the Hugging Face and TF Serving request shape: the 400 described only the instances shape
    (b'{"inputs": ["great food", "awful"]}', "application/json", 400,
     '{"inputs": [...]} is the Hugging Face and TF Serving request shape: send {"instances": [...]}'),
    (b'{"inputs": "great food", "parameters": {}}', "application/json", 400, 'send {"instances": [...]}'),
    # JSON Lines sent as application/json (Batch Transform, content_type="application/json", split_type="Line"): each
    # mini-batch was a 400 that said only "Extra data: line 2 column 1"
    (b'{"source": "a"}\n{"source": "b"}\n', "application/json", 400,
     "Extra data: line 2 column 1 (char 16) (one JSON value a line is JSON Lines: send it as application/jsonlines"),
    (b'"a"\r\n  "b"\r\n', "application/json", 400, "send it as application/jsonlines"),
    (b'{"source": "a"}', "application/json", 400, "(a line of JSON Lines? send it as application/jsonlines)"),
    (b'{"instances": "a"}', "application/json", 400, '"instances" must be a list'),
    # a key named twice (two bodies merged) was read for its last value alone, without a word
    (b'{"instances": ["a"], "instances": ["b", "c"]}', "application/json", 400,
     'request body repeats the key "instances" in one JSON object, of which only one value can be read: send it once'),
    (b'{"instances": ["a"], "configuration": {"k": 1, "k": 2}}', "application/json", 400, 'repeats the key "k"'),
    (b'{"instances": ["a"], "configuration": {"k": 0}}', "application/json", 400, "k must be a whole number >= 1"),
    (b'{"instances": ["a"], "configuration": {"threshold": 1.5}}', "application/json", 400, "threshold must be a probability"),
    (b'{"instances": ["a"], "configuration": {"top": 2}}', "application/json", 400, '"k" and/or "threshold"'),
    (b'{"configuration": {"k": 2}}', "application/json", 400, '{"instances": [review, ...]}'),
    (b'["a", 3]', "application/json", 400, "every review must be a JSON string (or null); item 1 is number"),
    (b'["a", true]', "application/json", 400, "item 1 is boolean"),  # was Python's "bool"
    (b'["a", {"text": "b"}]', "application/json", 400, "item 1 is object"),
    (b'[["a", "b"]]', "application/json", 400, "item 0 is array"),
    # what the SDK's JSONSerializer sends for df.to_dict("records") and for df[["text"]].values: the 400 said only
    # "item 0 is object" / "is array", not how to send the reviews
    (b'[{"text": "a", "label": "1"}]', "application/json", 400, 'item 0 is object (a record, as df.to_dict("records") '
     'writes one: send each review as a string, e.g. df["text"].tolist(), or send such records one a line as '
     'application/jsonlines)'),
    (b'{"instances": [{"source": "a"}]}', "application/json", 400, "send such records one a line as application/jsonlines"),
    (b'[["a"], ["b"]]', "application/json", 400, "item 0 is array (a row, as a DataFrame's .values or a 2-D array "
     'holds one: send each review as a string, e.g. df["text"].tolist())'),
    # a lone null is a missing review, empty as in a list ([null]) and in JSON Lines: no review text (it said "expected
    # a string, ..., got JSON null", also in Batch Transform, where [null] is answered)
    (b"null", "application/json", 400, "request holds no review text"),
    (b"NaN", "application/json", 400, "request holds no review text"),
    (b"7", "application/json", 400, 'expected a string, a list of strings or {"instances": [...]}, got JSON number'),
    (b"[]", "application/json", 400, "no review text"),
    (b"\n  \n", "text/plain", 400, "no review text"),
    (b"", "text/csv", 400, "no review text"),
    (b"caf\xe9", "text/plain", 400, "not valid utf-8"),
    (gzip.compress(b'["good food"]', mtime=0), "application/json", 400, "not valid utf-8 text (it is gzip-compressed: send it "
                                                               "uncompressed; a Batch Transform job's compression_type"),
    (b"caf\xe9", "text/csv; charset=utf-8", 400, "not valid utf-8"),
    (b'["caf\xe9"]', "application/json; charset=utf-8", 400, "not valid utf-8"),
    (b'"unterminated', "text/csv; header=present", 400, "not valid CSV"),  # a header: CSV written by a program
    # lines that end in a lone \r (an old Mac file) were one review, answered once; predict refuses such input too
    (b"great food\rawful service\rwould go again\r", "text/plain", 400,
     "request body is one line with carriage returns inside it, which would be answered as one review; its lines "
     "seem to end in a lone carriage return"),
    (b'{"source": "a"}\r{"source": "b"}\r', "application/jsonlines", 400,
     "line 1 is not valid JSON: Extra data at column 17; its lines seem to end in a lone carriage return"),
    (b"[" * 100000, "application/json", 400, "not valid JSON: nested too deeply"),
    # a number of more digits than Python converts to an int (4300) was a 500 in JSON Lines, Python's own error in JSON
    (b'{"source": "a", "k": ' + b"1" * 5000 + b"}\n", "application/jsonlines", 400,
     "line 1: k must be a whole number >= 1, or -1 for every class; got inf"),
    (b'{"instances": ["a"], "configuration": {"k": ' + b"1" * 5000 + b"}}", "application/json", 400,
     "configuration: k must be a whole number >= 1, or -1 for every class; got inf"),
    (b"x" * (sm_serve.MAX_REQUEST_BYTES + 1), "text/plain", 413, f"the limit is {sm_serve.MAX_REQUEST_BYTES}"),
    # UTF-16 without a byte order mark is valid UTF-8 with a NUL after every ASCII letter: each line was answered
    # as a review of that garbage (text/csv: decoded by the toolkit itself, the str reaches input_fn)
    ("great food\nawful service\n".encode("utf-16-le"), "text/plain", 400, "request body holds NUL characters"),
    ("great food\nawful service\n".encode("utf-16-le"), "text/csv", 400, "request body holds NUL characters"),
    (json.dumps({"source": "great food"}).encode("utf-16-le"), "application/jsonlines", 400,
     "UTF-16 text sent as utf-8? send UTF-8, or charset=utf-16 in the Content-Type"),
    ("great food\n".encode("utf-16"), "text/plain", 400,
     "not valid utf-8 text (it starts with a UTF-16 byte order mark: send charset=utf-16)"),
    # UTF-32-LE's mark (FF FE 00 00) starts as UTF-16-LE's: it was told to send charset=utf-16, and so sent was refused
    # for its NULs
    ("great food\n".encode("utf-32"), "text/plain", 400,
     "not valid utf-8 text (it starts with a UTF-32 byte order mark: send charset=utf-32)"),
    # UTF-32 without a mark was told to send charset=utf-16: sent so, it was told to send charset=utf-16 again
    ("great food\n".encode("utf-32-le"), "text/plain; charset=utf-16", 400,
     "UTF-32 text sent as utf-16? send UTF-8, or charset=utf-32 in the Content-Type"),
    # cut within its last character (a length not a multiple of 4), it was told to send charset=utf-16 still
    ("great food\n".encode("utf-32-le")[:-2], "text/plain; charset=utf-16", 400,
     "UTF-32 text sent as utf-16? send UTF-8, or charset=utf-32 in the Content-Type"),
    ("great food\n".encode("utf-32-be")[:-1], "text/plain", 400,
     "UTF-32 text sent as utf-8? send UTF-8, or charset=utf-32 in the Content-Type"),
    # ' hi' in UTF-32-BE passes an .lzma header's first fields: it was "not valid utf-8 text (it is lzma-compressed"
    (" hi".encode("utf-32-be"), "text/plain", 400, "UTF-32 text sent as utf-8? send UTF-8, or charset=utf-32 in the"),
    # (.lzma data followed by NULs, which liblzma reads as empty streams: told by its first stream, as ever)
    (lzma.compress(b"great food\n", format=lzma.FORMAT_ALONE) + bytes(1 << 20), "text/plain", 400,
     "request body is not valid utf-8 text (it is lzma-compressed: send it uncompressed"),
])
def test_bad_requests_get_4xx(endpoint, body, content_type, status, message):
    code, _, response = endpoint.invoke(body, content_type, "application/json")
    assert code == status and message in response.splitlines()[0], response


def _zipped(name, data):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, data)
    return out.getvalue()


REVIEW_LINES = "great food\nthe café was awful\n" * 3
UNCOMPRESSED = "send it uncompressed; a Batch Transform job's compression_type='Gzip' has SageMaker decompress gzip input"


def _gzipped_as_named(name, data):
    """``data`` gzipped as the gzip command does, its header naming the file (FNAME)."""
    out = io.BytesIO()
    with gzip.GzipFile(name, "wb", fileobj=out, mtime=1) as gzipped:
        gzipped.write(data)
    return out.getvalue()


@pytest.mark.parametrize("body, says", [
    (gzip.compress(REVIEW_LINES.encode(), mtime=1), f"it is gzip-compressed: {UNCOMPRESSED}"),
    (_gzipped_as_named("reviews.txt", REVIEW_LINES.encode()), f"it is gzip-compressed: {UNCOMPRESSED}"),
    (gzip.compress(REVIEW_LINES.encode() * 50, mtime=1)[:24], f"it is gzip-compressed: {UNCOMPRESSED}"),
    # (shorter than any whole gzip stream: 12 bytes, of its 10-byte header and 2 of its deflate data)
    (gzip.compress(REVIEW_LINES.encode() * 50, mtime=1)[:12], f"it is gzip-compressed: {UNCOMPRESSED}"),
    (bz2.compress(REVIEW_LINES.encode()), f"it is bzip2-compressed: {UNCOMPRESSED}"),
    (lzma.compress(REVIEW_LINES.encode()), f"it is xz-compressed: {UNCOMPRESSED}"),
    (zstd_frame(REVIEW_LINES.encode()), f"it is zstd-compressed: {UNCOMPRESSED}"),
    (zstd_frame(REVIEW_LINES.encode())[:20], f"it is zstd-compressed: {UNCOMPRESSED}"),
    (_zipped("reviews.csv", REVIEW_LINES), "it is a zip archive: send the reviews it holds as text, JSON or CSV"),
    (_zipped("reviews.csv", REVIEW_LINES)[:36], "it is a zip archive: send the reviews it holds as text, JSON or CSV"),
    (gzipped_with_extra(REVIEW_LINES.encode()), f"it is gzip-compressed: {UNCOMPRESSED}"),
    (gzipped_with_extra(REVIEW_LINES.encode() * 50)[:28], f"it is gzip-compressed: {UNCOMPRESSED}"),
    # (its extra field's subfields do not fill it: Python's gzip module reads it, and zlib tells it, past the field)
    (gzipped_with_unfilled_extra(REVIEW_LINES.encode()), f"it is gzip-compressed: {UNCOMPRESSED}"),
    (_gzipped_as_named("reviews.txt", REVIEW_LINES.encode() * 50)[:30], f"it is gzip-compressed: {UNCOMPRESSED}"),
    (lzma.compress(REVIEW_LINES.encode())[:12], f"it is xz-compressed: {UNCOMPRESSED}"),
    (ole2_header() + REVIEW_LINES.encode(), "it is an Excel workbook (.xls): send the reviews it holds as text, JSON or CSV"),
    # too short to tell by structure, and no UTF-16 text (latin-1 reads zstd's 5 bytes as "(µ/ý$", UTF-32 gzip's 4 as
    # unassigned U+88B1F; UTF-16 a header naming its file with a private-use character): refused still
    (zstd_frame(REVIEW_LINES.encode())[:5], f"it is zstd-compressed: {UNCOMPRESSED}"),
    (gzip.compress(REVIEW_LINES.encode(), mtime=1)[:4], f"it is gzip-compressed: {UNCOMPRESSED}"),
    (bytes.fromhex("1f8b080800f1536502ff726576696577"), f"it is gzip-compressed: {UNCOMPRESSED}"),
    # legacy .lzma (xz --format=lzma): no magic, told by its header's fields and its data (binary_data._lzma_start)
    (lzma.compress(REVIEW_LINES.encode(), format=lzma.FORMAT_ALONE), f"it is lzma-compressed: {UNCOMPRESSED}"),
    (lzma.compress(REVIEW_LINES.encode() * 50, format=lzma.FORMAT_ALONE)[:40], f"it is lzma-compressed: {UNCOMPRESSED}"),
], ids=["gzip", "gzip naming its file", "gzip cut short", "gzip cut shorter than any gzip", "bzip2", "xz", "zstd",
        "zstd cut short", "zip", "zip cut short", "gzip with an extra field (bgzip's)",
        "gzip with an extra field cut short past its header", "gzip whose extra field its subfields do not fill",
        "gzip naming its file cut short past its header", "xz cut short past its header", "xls",
        "zstd cut to its frame's first byte", "gzip cut to 4 bytes", "gzip cut within the file name its header holds",
        "lzma", "lzma cut short"])
@pytest.mark.parametrize("content_type", ["text/csv", "text/plain", "application/jsonlines; charset=latin-1",
                                          "text/csv; charset=windows-1252", "text/plain; charset=utf-16-le",
                                          "text/csv; charset=utf-16", "application/jsonlines; charset=utf-32"])
def test_a_compressed_body_is_a_400_that_says_so_whatever_its_charset(endpoint, body, says, content_type):
    """Only gzip was named, and only where its bytes failed the charset. A bzip2 or zstd body was told it "reads as
    Windows-1252: send charset=windows-1252", which named a byte that charset lacks in turn; under latin-1, which
    decodes every byte, each (gzip too) was asked whether it was UTF-16 text, as was a zip archive. (Gzip is told by
    its header and first blocks, not its 2 magic bytes alone: the next test; a body cut short is gzip still.)"""
    charset = content_type.partition("charset=")[2] or "utf-8"
    code, _, response = endpoint.invoke(body, content_type, "application/json")
    assert (code, response) == (400, f"request body is not valid {charset} text ({says})")


@pytest.mark.parametrize("body", [b"BZh9 beers on tap, great food\n", b"PAR1 course was cold\nPAR1\n"])
def test_a_review_that_begins_as_compressed_data_does_is_answered(endpoint, served, body):
    code, _, response = endpoint.invoke(body, "text/plain", "application/json")
    assert code == 200 and json.loads(response) == served[1].predict(body.decode().splitlines()), response


@pytest.mark.parametrize("reviews, charset", [
    ("\u8b1f good food\ncold soup\n", "utf-16-le"),  # U+8B1F: the bytes 1F 8B, gzip's magic
    ("\u8b1f", "utf-16-le"),
    ("\u8b1f\u0108 great food and nice staff\n", "utf-16-le"),  # 1F 8B 08 01: gzip's method and a valid flag too
    ("\u1f8b great food\ncold soup\n", "utf-16-be"),  # Greek's U+1F8B
    ("\u1f8b\u0800 great food and nice staff\n", "utf-16-be"),  # 1F 8B 08 00
    # as short as gzip's header, or shorter than any gzip stream (18 bytes): a gzip header and nothing after it to tell
    ("\u8b1f\u0108", "utf-16-le"),
    ("\u8b1f\u0108 ok", "utf-16-le"),
    ("\u8b1f\u0108 ok", "utf-16"),  # (no byte order mark: read as little-endian)
    ("\u1f8b\u0800 ok", "utf-16-be"),
    ("\u8b1f\u0108 nice!\n", "utf-16-le"),  # 16 bytes
    # 1F 8B 08 04: the FEXTRA flag, whose length (XLEN) the text gives: thousands of bytes, past the body's end
    ("\u1f8b\u0804 great food and nice staff\n", "utf-16-be"),
    ("\u1f8b\u0804 ok, fine food", "utf-16-be"),
    ("\u8b1f\u0408 great food and nice staff\n", "utf-16-le"),
    ("\u1f8b\u0804\u98df\u7269\u5f88\u597d\u5403\uff0c\u670d\u52a1\u4e5f\u5f88\u597d\u3002\n", "utf-16-be"),
    # (with a control character, so that reading as text cannot tell: its extra field's subfields do not fill it)
    ("\u1f8b\u0804 great food\x1bnice staff\n", "utf-16-be"),
    ("\u8b1f\u0408 great food\x1bnice staff, a good place\n", "utf-16-le"),
    # FNAME, FCOMMENT: a NUL-terminated name that CJK text, no NUL byte in it, never ends
    ("\u1f8b\u0808\u98df\u7269\u5f88\u597d\u5403\uff0c\u670d\u52a1\u4e5f\u5f88\u597d\u3002\n", "utf-16-be"),
    ("\u1f8b\u0810\u98df\u7269\u5f88\u597d\u5403\uff0c\u670d\u52a1\u4e5f\u5f88\u597d\u3002\n", "utf-16-be"),
])
def test_a_utf16_review_that_begins_with_gzips_magic_bytes_is_answered(endpoint, served, reviews, charset):
    """A body whose first 2 bytes are gzip's magic was refused as gzip-compressed whatever it was: a charset=utf-16-le
    review whose first character is U+8B1F, a utf-16-be one starting with U+1F8B. Gzip is its header's method and
    flags and the deflate data after them; these are answered as the text they are. One of 10 bytes or so, a gzip
    header's whole length, had nothing after its header to tell it by, and was still refused; so was one whose flags
    (FEXTRA, FNAME, FCOMMENT) have the text make the header longer than the body (binary_data._gzip_header_end)."""
    body = reviews.encode("utf-16-le" if charset == "utf-16" else charset)
    code, _, response = endpoint.invoke(body, f"text/plain; charset={charset}", "application/json")
    assert code == 200 and json.loads(response) == served[1].predict(reviews.splitlines()), response


@pytest.mark.parametrize("reviews, charset", [
    ("\ub528\ufd2f good food\ncold soup\n", "utf-16-le"),  # 28 B5 2F FD: zstd's magic
    ("\ub528\ufd2f ok", "utf-16-le"),
    ("\u28b5\u2ffd good food\ncold soup\n", "utf-16-be"),
    ("\u28b5\u2ffd " + "good food, nice staff. " * 200 + "\n", "utf-16-be"),  # past its first "block" (9 KB)
    ("\u4b50\u0403 good food\ncold soup\n", "utf-16-le"),  # 50 4B 03 04: zip's ("PK\\3\\4")
    ("\u4b50\u0403 ok", "utf-16-le"),
    ("\u504b\u0304 good food\ncold soup\n", "utf-16-be"),
    ("\u4b50\u0403 ok", "utf-16"),  # (no byte order mark: read as little-endian)
    ("\ufd37\u7a58\u5a00 good food\ncold soup\n", "utf-16-be"),  # FD 37 7A 58 5A 00: xz's
    ("\u37fd\u587aZ good food\ncold soup\n", "utf-16-le"),
    ("\ud0cf\u11e0 good food\ncold soup\n", "utf-16-be"),  # D0 CF 11 E0: an .xls workbook's (OLE2)
    ("\ucfd0\ue011 good food and nice staff, a fine place to eat\ncold soup\n", "utf-16-le"),
    # "]" is 5D 00, an .lzma header's properties byte and its dictionary size's first byte (5D 00 00 80 00: 8 MiB, with
    # U+8000 and U+4E00 after it); the uncompressed size's bytes 10 and 11 are one character, no NUL: no .lzma header
    ("] good food\ncold soup\n", "utf-16-le"),
    ("]\u8000\u4e00 good food\ncold soup\n", "utf-16-le"),
    ("]\u8000\u4e00", "utf-16-le"),
])
def test_a_utf16_review_that_begins_with_zstds_zips_xzs_or_xlss_magic_bytes_is_answered(endpoint, served, reviews,
                                                                                         charset):
    """As gzip's (above): a UTF-16 review whose first two characters are zstd's magic bytes (28 B5 2F FD: U+B528
    U+FD2F little-endian, U+28B5 U+2FFD big-endian), a zip archive's (PK 03 04: U+4B50 U+0403, U+504B U+0304), xz's or
    an .xls workbook's was refused as zstd- or xz-compressed, a zip archive or a workbook. Each is told by its
    structure after the magic (zstd: the frame's header and its blocks' sizes; zip: its first member's local header
    and name; xz: its stream flags' CRC32; xls: its header's byte order and sector shifts); where the body is too
    short to tell, by whether it reads as text in its charset. Real ones are refused still (above)."""
    body = reviews.encode("utf-16-le" if charset == "utf-16" else charset)
    code, _, response = endpoint.invoke(body, f"text/plain; charset={charset}", "application/json")
    assert code == 200 and json.loads(response) == served[1].predict(reviews.splitlines()), response


@pytest.mark.parametrize("content_type, body, where", [
    ("text/csv", "great food\nthe café was awful\nnaïve staff\n", "line 2 holds byte 0xe9 at column 8"),
    ("text/plain", "great food\nthe café was awful\nnaïve staff\n", "line 2 holds byte 0xe9 at column 8"),
    ("application/jsonlines",
     '{"source": "great food"}\n{"source": "the café was awful"}\n{"source": "naïve staff"}\n',
     "line 2 holds byte 0xe9 at column 20"),
    ("application/json", '[\n"great food",\n"the café was awful",\n"naïve staff"\n]',
     "line 3 holds byte 0xe9 at column 9"),
], ids=["csv", "plain", "jsonlines", "json"])
def test_a_windows_1252_body_gets_a_400_naming_its_line_and_the_charset_that_reads_it(endpoint, served, content_type,
                                                                                       body, where):
    """A body saved by Excel as 'CSV' or by another Windows program (Windows-1252: é one byte) was a 400 "request body
    is not valid utf-8 text" and no more: not where, in a Batch Transform mini-batch of thousands of lines, nor what
    to send instead, where predict names the line and the encoding of the same file. The 400 names the line, the byte
    and its column, and the charset that reads the body; sent with that charset, the body is answered as its text."""
    reviews = ["great food", "the café was awful", "naïve staff"]
    code, _, response = endpoint.invoke(body.encode("cp1252"), content_type, "application/json")
    assert code == 400 and response == (f"request body is not valid utf-8 text: {where}; it reads as Windows-1252, as "
                                        f"Excel's 'CSV' and Windows programs write it: send charset=windows-1252 in "
                                        f"the Content-Type, or send UTF-8"), response
    code, _, response = endpoint.invoke(body.encode("cp1252"), f"{content_type}; charset=windows-1252",
                                        "application/jsonlines" if "lines" in content_type else "application/json")
    assert code == 200, response
    if "lines" in content_type:
        assert read_lines(response) == blazingtext_lines(served[1].predict(reviews), ranked=False)
    else:
        assert json.loads(response) == served[1].predict(reviews)
    # bytes no charset of Windows' reads (0x81 is none in Windows-1252): the place alone
    code, _, response = endpoint.invoke(b"fine\nbad \x81 bytes\n", "text/plain", "application/json")
    assert code == 400 and response == "request body is not valid utf-8 text: line 2 holds byte 0x81 at column 5"


def test_text_plain_is_one_review_per_line_whatever_the_review_holds():
    # str.splitlines split a review at a form feed, \x85 or U+2028: more answers than reviews, out of step
    body = "great food\u2028really\r\nawful\x0cplace\x85again\nok".encode("utf-8")
    assert sm_serve.input_fn(body, "text/plain") == ["great food\u2028really", "awful\x0cplace\x85again", "ok"]


def test_text_plain_line_ends_are_those_of_predict():
    """\\n and \\r\\n end a review; a body of one line with a lone \\r inside is refused (above), as by predict,
    which answers a line holding a stray \\r among other lines as one review: so does text/plain."""
    assert sm_serve.input_fn(b"great food\r\nawful\r\n", "text/plain") == ["great food", "awful"]
    assert sm_serve.input_fn(b"great\rfood\nawful\n", "text/plain") == ["great\rfood", "awful"]
    assert sm_serve.input_fn(b"great food\r", "text/plain") == ["great food"]


@pytest.mark.parametrize("body", [
    b"great food\rcold soup\nawful\n",                  # a review pasted with an old Mac line end inside it
    b"great, food\rcold\nawful\r\nnice\r\n",            # CRLF line ends, the lone \r in a line with a comma
    b"2,great food\rcold soup\n1,awful\n",              # predict reads a first line it cannot read as CSV as text
    b'"great food\rcold soup"\r\nawful\r\n',            # quoted: the \r is the field's, as before
    # a header row training knows over lines that are no table (no class): predict reads every line as a review (the
    # endpoint refused the \r as a CSV's, where the same body with a space for it is answered)
    b"label,text\ngreat food\rcold soup\nawful\n",
    b"text,label\ncold soup\r\ngreat food\rcold soup\nawful\n",
    b"Sentiment, Review Body\ngreat staff\r\nawful\rcold soup\nnice\n",
])
def test_a_lone_carriage_return_inside_a_csv_line_is_part_of_its_review_as_predict_reads_it(
        tmp_path, monkeypatch, bundle, served, body):
    """SageMaker's SplitType=Line ends a record at a newline only ("split records on a newline character
    boundary"), and joins answer i to line i; the csv module ended a record at a lone \\r too, so a text/csv line
    holding one (an old Mac file's line end, pasted text) got two answers, and every answer after it was a line off.
    The line is one record now, its \\r read as whitespace in the review, as predict reads the same file (a line it
    cannot read as CSV is text, whole); \\r\\n still ends a line."""
    from conftest import cli_in_process

    path = tmp_path / "reviews.csv"
    path.write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    by_predict = [json.loads(line) for line in got.stdout.splitlines()]
    assert len(by_predict) == body.count(b"\n")
    for batch in ("false", "true"):  # a real-time endpoint, then a Batch Transform mini-batch
        monkeypatch.setenv("SAGEMAKER_BATCH", batch)
        assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == by_predict, batch


LABELED_ROWS = b"1,awful\n2,nice\n1,bad\n2,good\n"  # (unquoted labeled rows: 4 of them make a labeled CSV)


@pytest.mark.parametrize("body, content_type, line", [
    (b"label,text\n2,great food\rcold soup\n1,awful\n", "text/csv", 2),
    (b"label,text\n2,great food\rcold soup\n1,awful\n", "text/csv; header=present", 2),
    (b'"2","great food"\n"1",cold\rsoup\n"2","nice"\n', "text/csv", 2),  # labeled rows (the model's classes)
    # the lone \r in the first line: it was read as text, each class a word of its review, by predict and endpoint
    (b"2,great food\rcold soup\n" + LABELED_ROWS, "text/csv", 1),
    (b'"2",great food\rcold soup\n"1",awful\n', "text/csv", 1),
    # a typed header: predict answered it as a review, and every row whole, for a \r in line 3 (the endpoint refused)
    (b"Sentiment, Review Body\n2,great food\n1,awful\rcold soup\n2,nice\n1,bad\n2,good\n", "text/csv", 3),
    (b"Sentiment, Review Body\n2,great food\rcold soup\n" + LABELED_ROWS, "text/csv", 2),
    # a header whose columns training is told (v1,v2,,,, SMS spam's): both answered it, and every row whole
    (b"v1,v2,,,\n2,great food\rcold soup,,,\n1,awful,,,\n2,nice,,,\n1,bad,,,\n2,good,,,\n", "text/csv", 2),
    (b"v1,v2,,,\n2,great food,,,\n1,awful\rcold soup,,,\n2,nice,,,\n1,bad,,,\n2,good,,,\n", "text/csv", 3),
    # the header row itself holds the \r (an old Mac line end above it): predict refuses it at line 1; the endpoint
    # answered every line whole, the header too (with header=present a 400 already)
    (b"\rlabel,text\n2,great food\n1,awful\n", "text/csv", 1),
    (b"\rlabel,text\n2,great food\n1,awful\n", "text/csv; header=present", 1),
    (b"\n\rlabel,text\n2,great food\n1,awful\n", "text/csv", 2),
])
def test_a_lone_carriage_return_in_an_unquoted_field_of_a_csv_is_refused_as_predict_refuses_it(
        tmp_path, monkeypatch, bundle, served, body, content_type, line):
    """A CSV read as one (a header row, labeled rows) whose unquoted field holds a lone \\r: the csv module ended the
    record there, the rest of the line a record of its own (a 400 that named a record of one column, or, with
    header=present, one answer more than the lines). predict refuses the file, saying why; so does the endpoint.
    In the first line, or under a header known by its rows (typed, or v1,v2,,,), the \\r stopped the reading that
    tells a table from reviews, and the file was answered as text: it is refused as a \\r in a later line is."""
    from conftest import cli_in_process

    if content_type == "text/csv":
        path = tmp_path / "reviews.csv"
        path.write_bytes(body)
        got = cli_in_process("predict", "--model", bundle, "--input", path)
        assert got.returncode == 2 and "seem to end in a lone carriage return" in got.stderr \
            and f"reviews.csv:{line}: malformed CSV record" in got.stderr, got.stderr
    for batch in ("false", "true"):
        monkeypatch.setenv("SAGEMAKER_BATCH", batch)
        with pytest.raises(sm_serve.RequestError) as caught:
            sm_serve.predict_fn(sm_serve.input_fn(body, content_type), served[0])
        assert caught.value.status_code == 400 and f"line {line}" in caught.value.message \
            and "its lines seem to end in a lone carriage return (\\r, an old Mac file)" in caught.value.message, \
            caught.value.message


@pytest.mark.parametrize("body", [b"\rreview\ngreat food\nawful\n", b"\rtext\r\ngreat food\rcold soup\r\nawful\r\n",
                                  b"review\r \n2,great food\nawful\n"])
def test_a_declared_header_of_one_column_holding_a_lone_carriage_return_is_whitespace_of_it_as_predict_reads_it(
        tmp_path, monkeypatch, bundle, served, body):
    """A declared header (header=present) of one column whose line holds a lone \\r (an old Mac line end above it,
    pasted text): the record is the whole line, the \\r whitespace in it, as under such a header for the lines after
    it, and as predict reads the file (each line a review, the header line too). The endpoint refused it (a 400; the
    csv module had read it as a blank record, then the header): it answers each line after the header as predict
    answers it, and in Batch Transform the header with the field names."""
    from conftest import cli_in_process

    path = tmp_path / "reviews.csv"
    path.write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    by_predict = [json.loads(line) for line in got.stdout.splitlines()]
    assert len(by_predict) == 3
    monkeypatch.setenv("SAGEMAKER_BATCH", "false")
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv; header=present"), served[0]) == by_predict[1:]
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv; header=present"), served[0]) == \
        [HEADER_ANSWER] + by_predict[1:]


@pytest.mark.parametrize("header", ["review", "text"])
def test_a_lone_carriage_return_in_a_one_column_csv_is_whitespace_of_its_review_as_predict_reads_it(
        tmp_path, monkeypatch, bundle, served, header):
    """A CSV of one column: its record is the whole line, so a lone \\r inside it is whitespace of the review, as predict
    reads the file (its header, undeclared, a review too). With header=present the endpoint refused it (a 400), where
    it answers each line after the header as predict answers that line."""
    from conftest import cli_in_process

    body = f"{header}\r\ngreat food\rcold soup\r\nawful\r\n".encode()
    path = tmp_path / "reviews.csv"
    path.write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    by_predict = [json.loads(line) for line in got.stdout.splitlines()]
    assert len(by_predict) == 3
    monkeypatch.setenv("SAGEMAKER_BATCH", "false")
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == by_predict
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv; header=present"), served[0]) == by_predict[1:]
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")  # (the header answered with the answer's field names)
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv; header=present"), served[0]) == \
        [HEADER_ANSWER] + by_predict[1:]


_LONE_CR_LINES = [
    "great food\rcold soup", "great, food\rcold", "2,great food\rcold soup", "x\r\ry",  # unquoted: read whole
    '"great food\rcold soup",nice',  # the \r inside quotes: the field's, the line a record
    '"Best buy" until\rit broke', '"2",great\rfood', '"never closed\rat all',  # quoted, the \r outside: whole
    "ends in a lone one\r\r", "plain review", '"Best buy ever" until it broke', "", "  ", "1,awful"]


def _as_read_before(line):
    """A line of a text/csv body read a line at a time, as it was read before the reading took one parse for a lone
    \\r where it can: parsed as it is; when it is no record, whole, with ``fields`` its record with the \\r a space."""
    def record(text):
        try:
            parsed = list(csv.reader([text], strict=True))
        except csv.Error:
            return None
        return parsed[0] if len(parsed) == 1 else None

    if not line.strip():
        return [], None
    parsed = record(line)
    if parsed is not None:
        return parsed, None
    return [line], (record(line.replace("\r", " ")) if "\r" in line.rstrip("\r") else None)


def test_a_csv_body_of_lines_with_lone_carriage_returns_is_read_as_before_each_line_parsed_once(served):
    """A text/csv body whose every line holds a lone \\r is read a line at a time; each such line was parsed twice (as
    it is, to fail, then with the \\r a space), the body read about 4 times as slowly as one without. It is parsed
    once where it can be (no quotation mark: the \\r is in an unquoted field): the same records, the same answers."""
    from fasttext_lib.serve_requests import csv_request

    lines = _LONE_CR_LINES * 40
    reviews = csv_request("\n".join(lines) + "\n", "")
    assert [(list(r), getattr(r, "fields", None)) for r in reviews.records] == [_as_read_before(l) for l in lines]
    answers = sm_serve.predict_fn(reviews, served[0])
    assert answers == sm_serve.predict_fn(sm_serve.Reviews(reviews), served[0])  # each line whole, as its review
    assert len(answers) == len(lines)


@pytest.mark.parametrize("body", [b"2,great food\r1,awful\r2,nice\r1,bad\r2,good\r",
                                  b'"2","great food"\r"1","awful"\r"2","nice"\r'])
def test_an_old_mac_labeled_csv_is_refused_by_predict_as_one_line(tmp_path, bundle, body):
    """A labeled CSV whose lines all end in a lone \\r is one line: predict says so, as it did before its first line
    was looked at for a table past its \\r."""
    from conftest import cli_in_process

    path = tmp_path / "reviews.csv"
    path.write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 2 and ":1: the input is one line with carriage returns inside it" in got.stderr, \
        got.stderr


def test_a_csv_body_of_one_line_with_lone_carriage_returns_is_refused_as_text_plain_is(monkeypatch):
    """An old Mac file's lines, sent as text/csv: one line for SageMaker (and predict, which refuses it), read as three
    records by the csv module, three answers for one line. Refused as text/plain refuses it."""
    for batch in ("false", "true"):
        monkeypatch.setenv("SAGEMAKER_BATCH", batch)
        with pytest.raises(sm_serve.RequestError) as caught:
            sm_serve.input_fn(b"great food\rawful service\rwould go again\r", "text/csv")
        assert caught.value.status_code == 400 and caught.value.message.startswith(
            "request body is one line with carriage returns inside it, which would be answered as one review; its "
            "lines seem to end in a lone carriage return"), caught.value.message


def test_a_csv_request_with_a_review_over_128_kib_is_read():
    # Python's csv module refuses longer fields by default: the request got 400 "not valid CSV"
    review = "tasty " * 30000
    assert sm_serve.input_fn(f'"{review}"\r\nshort\r\n'.encode(), "text/csv") == [review, "short"]


@pytest.mark.parametrize("content_type", ["application/json", "text/csv"])
def test_non_utf8_bodies_of_the_toolkits_utf8_types_get_400_from_input_fn(endpoint, served, content_type):
    """The toolkit decodes exactly these two types as UTF-8 itself, before input_fn: a cp1252 body was a 500
    (the codec's error, a server error that Batch Transform retries). model_fn takes them off its list, so
    input_fn decodes them as every other type: a 400 that says what is wrong, and UTF-8 answered as before."""
    body = b'["caf\xe9"]' if content_type == "application/json" else b"caf\xe9 au lait\n"
    code, _, response = endpoint.invoke(body, content_type, "application/json")
    assert code == 400 and "request body is not valid utf-8 text" in response.splitlines()[0], response
    good = '["café"]' if content_type == "application/json" else "café\n"
    code, _, response = endpoint.invoke(good.encode("utf-8"), content_type, "application/json")
    assert code == 200 and json.loads(response) == served[1].predict(["café"]), response


def test_latin1_charset_is_honoured(endpoint, served):
    status, _, response = endpoint.invoke("café".encode("latin-1"), "text/plain; charset=latin-1", "application/json")
    assert status == 200 and json.loads(response) == served[1].predict(["café"])


@pytest.mark.parametrize("content_type", ["text/plain; charset=utf-8; charset=latin-1",
                                          'text/csv; charset="latin-1"; CHARSET=utf-8'])
def test_a_content_type_naming_two_charsets_is_refused(endpoint, content_type):
    """The last charset was taken without a word (a header built by appending to a default one): a 400 that names
    both, rather than a body read with either guess."""
    code, _, response = endpoint.invoke("café\n".encode("latin-1"), content_type, "application/json")
    first, second = re.findall(r'charset="?([\w-]+)', content_type, re.IGNORECASE)
    assert code == 400 and response.splitlines() == [
        f"conflicting charsets in the Content-Type: {first!r} and {second!r}; name one"], response


def test_the_two_conflicting_charsets_are_named_however_often_one_is_repeated(endpoint):
    """``utf-8; UTF-8; latin-1`` named utf-8 twice in its 400 ('utf-8' and 'UTF-8'), not the two that conflict."""
    code, _, response = endpoint.invoke("café\n".encode("latin-1"), "text/plain; charset=utf-8; charset=UTF-8; "
                                        "charset=latin-1", "application/json")
    assert code == 400 and response.splitlines() == [
        "conflicting charsets in the Content-Type: 'utf-8' and 'latin-1'; name one"], response


def test_a_content_type_naming_one_charset_twice_is_read_with_it(endpoint, served):
    code, _, response = endpoint.invoke("café\n".encode("latin-1"), "text/plain; charset=latin-1; charset=ISO-8859-1",
                                        "application/json")
    assert code == 200 and json.loads(response) == served[1].predict(["café"]), response


@pytest.mark.parametrize("content_type", ["text/plain; charset=", 'text/plain; charset=""', "text/plain; charset=\"\" "])
def test_an_empty_charset_quoted_or_not_is_none_named(endpoint, served, content_type):
    """``charset=`` was read as no charset (UTF-8), its quoted form ``charset=""`` a 415 "unknown charset ''"."""
    code, _, response = endpoint.invoke("café\n".encode("utf-8"), content_type, "application/json")
    assert code == 200 and json.loads(response) == served[1].predict(["café"]), response


@pytest.mark.parametrize("content_type, first, second", [
    ("text/csv; header=present; header=absent", "present", "absent"),
    ('text/csv; Header="absent"; charset=utf-8; HEADER=present', "absent", "present"),
])
def test_a_csv_content_type_naming_two_header_values_is_refused(endpoint, content_type, first, second):
    """The last header= was taken without a word (a Content-Type built by appending to a default one): with
    "present" last the first review was taken for a header, with "absent" last a header answered as a review. A 400
    that names both, as for two charsets; the same value twice, in any capitals, is read with it."""
    body = b"label,text\n2,great food\n1,awful\n"
    code, _, response = endpoint.invoke(body, content_type, "application/json")
    assert code == 400 and response.splitlines() == [
        f"conflicting header parameters in the Content-Type: {first!r} and {second!r}; name one"], response
    same = sm_serve.input_fn(body, "text/csv; header=present; Header=PRESENT")
    assert list(same) == list(sm_serve.input_fn(body, "text/csv; header=present")) == ["great food", "awful"]


@pytest.mark.parametrize("charset", ["unicode_escape", "raw_unicode_escape", "punycode", "idna", "undefined",
                                     "charmap", "rot13", "base64", "hex", "uu", "zlib"])
def test_python_codecs_that_are_no_text_charsets_get_415(endpoint, charset):
    """Python's own codecs (escapes, punycode, idna; bytes-to-bytes and str-to-str transforms) are no charset a
    client's text is in: unicode_escape read b"caf\\\\xe9" as "café" and answered it, punycode and undefined were a
    400 "not valid ... text", rot13 and base64 a 415 "unknown charset"."""
    code, _, response = endpoint.invoke(b"good food\n", f"text/plain; charset={charset}", "application/json")
    assert code == 415 and response.splitlines() == [
        f"charset {charset!r} is no text charset (Python's {codecs.lookup(charset).name} codec); send the body's "
        f"charset, e.g. utf-8"], response


@pytest.mark.parametrize("charset", ["utf-16", "utf-32", "UTF-16", "utf-8-sig", "cp1252", "iso-8859-15", "us-ascii"])
def test_text_charsets_are_read(endpoint, served, charset):
    text = "café au lait\nawful\n" if charset not in ("us-ascii",) else "cafe au lait\nawful\n"
    code, _, response = endpoint.invoke(text.encode(charset), f"text/plain; charset={charset}", "application/json")
    assert code == 200 and json.loads(response) == served[1].predict(text.splitlines()), response


def test_the_toolkit_loads_the_bundle_once(bundle, monkeypatch):
    """The MXNet HandlerService calls model_fn twice at start-up (to choose its transformer, then through it)."""
    load = Predictor.load.__func__
    loads, model_fns = [], []
    monkeypatch.setattr(Predictor, "load", classmethod(lambda cls, *a, **k: loads.append(a) or load(cls, *a, **k)))
    monkeypatch.setattr(sm_serve, "_LOADED", {})
    monkeypatch.setattr(ep, "model_fn", lambda *a: model_fns.append(a) or sm_serve.model_fn(*a))
    monkeypatch.setenv("SAGEMAKER_PROGRAM", "fasttext_lib.entry_point")
    monkeypatch.setenv("PYTHONPATH", "")
    monkeypatch.setenv("MMS_DECODE_INPUT_REQUEST", "false")
    endpoint = Endpoint(bundle)
    assert len(model_fns) == 2 and len(loads) == 1
    assert endpoint.invoke(b'"ok"', "application/json", None)[0] == 200 and len(loads) == 1


def test_model_fn_caches_by_model_dir_and_reloads_a_replaced_bundle(bundle, tmp_path, monkeypatch):
    import shutil

    load = Predictor.load.__func__
    loads = []
    monkeypatch.setattr(Predictor, "load", classmethod(lambda cls, *a, **k: loads.append(a) or load(cls, *a, **k)))
    monkeypatch.setattr(sm_serve, "_LOADED", {})
    copy = shutil.copytree(bundle, str(tmp_path / "model"))
    first = sm_serve.model_fn(copy)
    assert sm_serve.model_fn(copy + "/") is first and len(loads) == 1
    config = os.path.join(copy, "config.json")
    data = open(config).read()
    os.remove(config)  # a new bundle in the same place: a new file
    with open(config, "w") as f:
        f.write(data)
    assert sm_serve.model_fn(copy) is not first and len(loads) == 2



def test_model_fn_of_a_bundle_too_large_for_the_instance_is_one_error_line(splits, tmp_path, monkeypatch):
    """An endpoint instance with less memory available than a full bundle's table (an 800 MB bigram table on a
    small instance): model_fn read the whole table regardless, and the OOM killer ended the worker with no word
    in the log. Now model_fn fails in one line that says what the table needs and what to do; a compact bundle of
    the same model is served on that instance, from its stored rows (no table is built): float16 rows, which take
    less than the table (this small model's training changed nearly all of its rows)."""
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train

    trained = train(*splits, TrainConfig(**{**FAST, "epochs": 1}, progress=False, ctx="cpu"))
    full = save_bundle(trained, str(tmp_path / "full"), compact="none")
    small = save_bundle(trained, str(tmp_path / "compact"), compact="float16")
    machine_with_memory(monkeypatch, tmp_path, 3072)  # less than the 4 MB table
    monkeypatch.setenv("SAGEMAKER_MODEL_SERVER_WORKERS", "1")  # (one worker: the float16 rows fit once, not twice)
    monkeypatch.setattr(sm_serve, "_LOADED", {})
    with pytest.raises(FastTextError) as caught:
        sm_serve.model_fn(full)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"out of memory to load {full}: its embedding table, ")
    assert "this machine has 3 MB of memory available" in message and "a larger instance type" in message
    # (the endpoint's log is read by whoever made the bundle: with the command line or the Python API)
    assert "a compact bundle (train --compact float32, or save_bundle(..., compact='float32') in Python)" in message
    served = sm_serve.model_fn(small)
    assert len(sm_serve.predict_fn(["great food", "cold food"], served)) == 2
    with pytest.raises(FastTextError) as caught:  # the Python API's caller is told its own argument, not the flag
        Predictor.load(full)
    assert "a compact bundle (save_bundle(..., compact='float32'))" in str(caught.value), caught.value
    assert "--compact" not in str(caught.value)


def test_model_fn_counts_the_model_servers_workers_that_load_the_bundle_at_once(splits, tmp_path, monkeypatch):
    """MMS starts one worker per vCPU (SAGEMAKER_MODEL_SERVER_WORKERS unset), all loading the bundle at once, each
    seeing the same memory available: a full bundle that fit once passed the check in every worker, and the OOM killer
    ended them. The check counts the workers that load it, and says how many fit; a worker MMS restarts beside others
    that hold it already counts them no more (a dead one's mark is no worker)."""
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train

    trained = train(*splits, TrainConfig(**{**FAST, "epochs": 1}, progress=False, ctx="cpu"))
    full = save_bundle(trained, str(tmp_path / "full"), compact="none")
    config = json.load(open(os.path.join(full, "config.json")))
    table_kb = config["num_rows"] * config["emsize"] * 4 // 1024
    machine_with_memory(monkeypatch, tmp_path, table_kb * 3 // 2)  # room for one table and a half
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # (the workers' marks)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)  # 4 vCPUs
    for name in ("SAGEMAKER_MODEL_SERVER_WORKERS", "MMS_DEFAULT_WORKERS_PER_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sm_serve, "_LOADED", {})
    with pytest.raises(FastTextError) as caught:
        sm_serve.model_fn(full)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"out of memory to load {full}: its embedding table, ")
    assert ("for the 4 workers that load it at once (one per vCPU: SAGEMAKER_MODEL_SERVER_WORKERS is unset)" in message
            and "(fewer workers: SAGEMAKER_MODEL_SERVER_WORKERS=1 in the model's environment)" in message), message
    assert "a larger instance type" in message and "a compact bundle (train --compact float32" in message
    monkeypatch.setenv("MMS_DEFAULT_WORKERS_PER_MODEL", "3")  # MMS's own variable wins over the toolkit's
    monkeypatch.setenv("SAGEMAKER_MODEL_SERVER_WORKERS", "1")
    with pytest.raises(FastTextError, match=r"the 3 workers .*\(MMS_DEFAULT_WORKERS_PER_MODEL=3\).*"
                                            r"MMS_DEFAULT_WORKERS_PER_MODEL=1 in"):
        sm_serve.model_fn(full)
    monkeypatch.delenv("MMS_DEFAULT_WORKERS_PER_MODEL")
    assert len(sm_serve.predict_fn(["great food"], sm_serve.model_fn(full))) == 1  # one worker: it fits
    monkeypatch.setenv("SAGEMAKER_MODEL_SERVER_WORKERS", "2")
    sibling = _marking_worker(tmp_path, os.path.abspath(full))  # a worker that holds the bundle already
    try:
        monkeypatch.setattr(sm_serve, "_LOADED", {})
        assert len(sm_serve.predict_fn(["great food"], sm_serve.model_fn(full))) == 1  # restarted beside it
    finally:
        sibling.kill()
        sibling.wait()
    monkeypatch.setattr(sm_serve, "_LOADED", {})
    with pytest.raises(FastTextError, match="the 2 workers that load it at once"):  # its mark is no worker now
        sm_serve.model_fn(full)


def _marking_worker(tempdir, model_dir):
    """A process that leaves its mark that it holds the bundle in ``model_dir`` (sm_serve._mark_loaded, under the
    temporary folder ``tempdir``), as a model server's worker does once loaded, and waits (until its stdin closes)."""
    script = ("import sys, tempfile; tempfile.tempdir = sys.argv[1]; from fasttext_lib import sm_serve; "
              "sm_serve._mark_loaded(sys.argv[2]); print('marked', flush=True); sys.stdin.read()")
    worker = subprocess.Popen([sys.executable, "-c", script, str(tempdir), model_dir], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert worker.stdout.readline() == "marked\n"
    return worker


def test_a_dead_workers_mark_under_a_pid_given_to_another_process_is_no_loaded_worker(tmp_path, monkeypatch):
    """A worker killed (the OOM killer; MMS restarts it) leaves its mark that it holds the bundle, which a dead pid made
    harmless: but once the kernel gives that pid to another process, the mark read as a live worker that held the
    bundle, and model_fn's memory check counted one worker too few among those loading it. A mark names its process
    by its start time too (/proc/PID/stat): a mark left under a pid that another process holds now is not counted."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    live, killed = _marking_worker(tmp_path, "/models/a"), _marking_worker(tmp_path, "/models/a")
    unrelated = subprocess.Popen(["sleep", "60"])  # no worker: the process that got the killed worker's pid
    try:
        killed.kill()
        killed.wait()
        marks = sm_serve._loaded_marks("/models/a")
        os.replace(os.path.join(marks, str(killed.pid)), os.path.join(marks, str(unrelated.pid)))
        assert sm_serve._loaded_workers("/models/a") == [live.pid]
        monkeypatch.setenv("SAGEMAKER_MODEL_SERVER_WORKERS", "3")
        assert sm_serve._workers_loading("/models/a")[:2] == (2, 1)  # this one and the killed one's successor
    finally:
        for process in (live, unrelated):
            process.kill()
            process.wait()
    assert sm_serve._loaded_workers("/models/a") == []


def test_a_zombie_workers_mark_is_no_loaded_worker(tmp_path, monkeypatch):
    """A worker that has exited but that its parent has not reaped yet (a zombie: /proc/PID/stat's state Z) keeps its
    pid and its start time, so its mark that it held the bundle read as a live worker's, and model_fn's memory check
    counted one worker too few among those loading it: it holds no memory. Here a real one: a child that leaves its
    mark, exits without taking it back (os._exit: no atexit) and is waited for without being reaped (WNOWAIT)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    script = ("import os, sys, tempfile; tempfile.tempdir = sys.argv[1]; from fasttext_lib import sm_serve; "
              "sm_serve._mark_loaded(sys.argv[2]); os._exit(0)")
    zombie = subprocess.Popen([sys.executable, "-c", script, str(tmp_path), "/models/a"])
    try:
        os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)  # (exited; left unreaped)
        with open(f"/proc/{zombie.pid}/stat", "rb") as stat:
            assert stat.read().rsplit(b")", 1)[1].split()[0] == b"Z"
        assert os.listdir(sm_serve._loaded_marks("/models/a")) == [str(zombie.pid)]  # (its mark, left)
        assert sm_serve._loaded_workers("/models/a") == []
        monkeypatch.setenv("SAGEMAKER_MODEL_SERVER_WORKERS", "3")
        assert sm_serve._workers_loading("/models/a")[:2] == (3, 0)
    finally:
        zombie.wait()


def test_a_workers_mark_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """A mark was written in place (open, then write): a worker reading it in that instant found it empty (or part of
    its start time), not its writer's, and counted one worker that held the bundle too few. It is written to a
    temporary beside it and renamed into place whole: under its name there is nothing, then all of it."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mark = os.path.join(sm_serve._loaded_marks("/models/a"), str(os.getpid()))
    started = sm_serve._process_start(os.getpid())
    replace, renamed = os.replace, []

    def seen_at_the_rename(source, target):
        renamed.append((os.path.exists(target), open(source).read(), target))
        return replace(source, target)

    monkeypatch.setattr(os, "replace", seen_at_the_rename)
    sm_serve._mark_loaded("/models/a")
    assert renamed == [(False, started, mark)]  # (nothing under its name until it was whole)
    assert open(mark).read() == started and os.listdir(os.path.dirname(mark)) == [str(os.getpid())]


def test_a_mark_s_temporary_left_by_a_killed_writer_is_no_worker_and_is_removed(tmp_path, monkeypatch):
    """A worker killed while it wrote its mark leaves the temporary, part written: it is no loaded worker, and the next
    worker that counts them removes it (a live writer's, which it holds locked, stays), so the folder can go with the
    last mark."""
    import fcntl

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    marks = sm_serve._loaded_marks("/models/a")
    writer = subprocess.Popen(["sleep", "60"])  # (a live writer of a mark: its temporary, locked)
    dead = subprocess.Popen(["true"])
    dead.wait()  # (a writer gone: the kernel dropped its lock)
    os.makedirs(marks)
    left, writing = (os.path.join(marks, f".{p}.fasttext-{p}-0123456789abcdef.tmp") for p in (dead.pid, writer.pid))
    for temp in (left, writing):
        with open(temp, "w") as file:
            file.write(sm_serve._process_start(os.getpid())[:2])  # (part of a start time)
    held = os.open(writing, os.O_RDWR)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert sm_serve._loaded_workers("/models/a") == []
        assert os.listdir(marks) == [os.path.basename(writing)]
    finally:
        os.close(held)
        writer.kill()
        writer.wait()


@pytest.mark.parametrize("state, live", [("S", True), ("R", True), ("Z", False), ("X", False), ("x", False)])
def test_a_process_dead_by_its_proc_state_has_no_start_time(tmp_path, monkeypatch, state, live):
    """/proc/PID/stat's state: Z (a zombie, above), X (dead, as it goes) and x (dead on kernels 2.6.33-3.13) are no
    live worker; a command name with spaces and parentheses is read past (field 2)."""
    (tmp_path / "4321").mkdir()
    fields = [state, *[str(n) for n in range(4, 22)], "987654", "0"]  # fields 3-23: the start time is field 22
    (tmp_path / "4321" / "stat").write_text(f"4321 (python (a b) c) {' '.join(fields)}\n")
    monkeypatch.setattr(sm_serve, "_PROC", str(tmp_path))
    assert sm_serve._process_start(4321) == ("987654" if live else None)


def test_without_proc_a_mark_names_a_worker_by_its_pid_alone(tmp_path, monkeypatch):
    """Where there is no /proc (macOS) a mark holds no start time: a live process under its pid is counted, a dead
    one's is not, as before."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sm_serve, "_PROC", str(tmp_path / "no-proc"))
    sm_serve._mark_loaded("/models/a")  # (this process's mark: never counted by itself)
    marks = sm_serve._loaded_marks("/models/a")
    other = subprocess.Popen(["sleep", "60"])
    try:
        shutil.copy(os.path.join(marks, str(os.getpid())), os.path.join(marks, str(other.pid)))
        assert sm_serve._loaded_workers("/models/a") == [other.pid]
    finally:
        other.kill()
        other.wait()
    assert sm_serve._loaded_workers("/models/a") == []


def test_no_usable_temporary_folder_leaves_no_mark_and_fails_no_load(monkeypatch):
    """Where no temporary folder can be written (a read-only file system: tempfile.gettempdir raises
    FileNotFoundError), a worker leaves no mark that it holds the bundle and counts every worker, as _mark_loaded's
    docstring says; the mark's folder was looked up outside its try, so model_fn failed after the bundle loaded."""
    import errno

    def no_temporary_folder():
        raise FileNotFoundError(errno.ENOENT, "No usable temporary directory found in ['/tmp']")

    monkeypatch.setattr(tempfile, "gettempdir", no_temporary_folder)
    monkeypatch.setenv("SAGEMAKER_MODEL_SERVER_WORKERS", "3")
    sm_serve._mark_loaded("/models/a")  # (raised FileNotFoundError)
    assert sm_serve._workers_loading("/models/a")[:2] == (3, 0)


def test_model_server_workers_are_counted_as_mms_starts_them(monkeypatch):
    """MMS's default (ConfigManager.getDefaultWorkers): one worker per GPU, else one per CPU; a variable of the model's
    environment sets another number, MMS's own over the toolkit's, and 0 (or no number) is read as unset."""
    from fasttext_lib.serve_limits import model_server_workers

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert model_server_workers({}, 0) == (3, "one per vCPU: SAGEMAKER_MODEL_SERVER_WORKERS is unset",
                                           "SAGEMAKER_MODEL_SERVER_WORKERS")
    assert model_server_workers({}, 2)[:2] == (2, "one per GPU: SAGEMAKER_MODEL_SERVER_WORKERS is unset")
    assert model_server_workers({"SAGEMAKER_MODEL_SERVER_WORKERS": "0"}, 0)[0] == 3
    assert model_server_workers({"SAGEMAKER_MODEL_SERVER_WORKERS": "many"}, 2)[0] == 2
    assert model_server_workers({"SAGEMAKER_MODEL_SERVER_WORKERS": " 5 "}, 2) == (
        5, "SAGEMAKER_MODEL_SERVER_WORKERS=5", "SAGEMAKER_MODEL_SERVER_WORKERS")
    assert model_server_workers({"SAGEMAKER_MODEL_SERVER_WORKERS": "5", "MMS_DEFAULT_WORKERS_PER_MODEL": "1"}, 0) == (
        1, "MMS_DEFAULT_WORKERS_PER_MODEL=1", "MMS_DEFAULT_WORKERS_PER_MODEL")


def test_model_fn_of_a_compact_bundle_whose_stored_rows_are_too_large_for_the_instance_is_one_error_line(
        splits, tmp_path, monkeypatch):
    """A compact bundle's stored rows were read regardless of the memory the instance has: the worker died with
    no word in the log (the OOM killer) or in numpy's bare MemoryError. Now model_fn fails in one line that names
    the bundle, what its rows need and what to do."""
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train

    trained = train(*splits, TrainConfig(**{**FAST, "epochs": 1}, progress=False, ctx="cpu"))
    small = save_bundle(trained, str(tmp_path / "compact"), compact="int8")
    machine_with_memory(monkeypatch, tmp_path, 16)
    monkeypatch.setattr(sm_serve, "_LOADED", {})
    with pytest.raises(FastTextError) as caught:
        sm_serve.model_fn(small)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"out of memory to load {small}: its stored embedding rows, ")
    assert "(int8, read as float32)" in message and "this machine has 0 MB of memory available" in message
    assert "a larger instance type" in message
    assert message.endswith("or a bundle of float16 rows (train --compact float16, or save_bundle(..., "
                            "compact='float16') in Python), which holds them in 2 bytes a value"), message


def _model_dir_holding(root, layout, bundle):
    """A model directory as a mistaken model.tar.gz leaves it: ``nested`` (``tar czf model.tar.gz model/``: the
    bundle in a folder), ``two`` (two bundles in folders), ``archive`` (a model.tar.gz packed inside the archive)."""
    import shutil

    root.mkdir()
    shutil.copytree(os.path.join(ROOT, "fasttext_lib"), root / "code" / "fasttext_lib")  # what pack_model adds
    if layout == "nested":
        shutil.copytree(bundle, root / "model")
    elif layout == "two":
        shutil.copytree(bundle, root / "run1" / "model")
        shutil.copytree(bundle, root / "run2" / "model")
    else:
        with tarfile.open(root / "model.tar.gz", "w:gz") as tar:
            tar.add(bundle, arcname=".")
    return root


@pytest.mark.parametrize("layout, says", [
    ("nested", "it holds a bundle in model/, not at its top: pack the bundle's files at the top of model.tar.gz "
               "(packaging.pack_model does), or load "),
    ("two", "it holds 2 bundles, in run1/model/ and run2/model/, none at its top: a model directory is one bundle, "
            "its files at the top"),
    ("archive", "it holds model.tar.gz, not extracted (an archive packed inside the model archive?): extract it "
                "there, or pack the bundle's own files"),
])
def test_model_fn_of_a_mispacked_model_dir_says_where_the_bundle_is(bundle, tmp_path, layout, says):
    """The endpoint's start-up log said only "has no config.json" when the archive held the bundle in a folder, two
    bundles, or the bundle's own model.tar.gz: nothing that said what to change."""
    model_dir = _model_dir_holding(tmp_path / "opt_ml_model", layout, bundle)
    with pytest.raises(FastTextError) as caught:
        sm_serve.model_fn(str(model_dir))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"not a model bundle: {model_dir} has no config.json; {says}")
    if layout == "nested":
        assert message.endswith(f"load {model_dir / 'model'}")
        assert Predictor.load(model_dir / "model").labels == ["1", "2"]  # what the message says to load

# --------------------------------------------------------------------------------------------
# packaging
# --------------------------------------------------------------------------------------------
def _source_files(package):
    """Every file under ``package`` (paths relative to it), but caches and the sample data."""
    found = set()
    for folder, dirs, files in os.walk(package):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "sample_data")]
        relative = os.path.relpath(folder, package)
        found |= {os.path.normpath(os.path.join(relative, f)) for f in files if not f.endswith(".pyc")}
    return found


def test_staged_source_dir(source_dir):
    top = sorted(os.listdir(source_dir))
    assert top == ["entry_point.py", "fasttext_lib", "inference.py", "requirements.txt"]  # no setup.py: run as a script
    entry = open(os.path.join(source_dir, "fasttext_lib", "entry_point.py")).read()
    assert open(os.path.join(source_dir, "inference.py")).read() == entry == open(os.path.join(source_dir, "entry_point.py")).read()
    files = sorted(os.listdir(os.path.join(source_dir, "fasttext_lib")))
    assert "entry_point.py" in files and "__init__.py" in files and "bag_ops.cc" in files
    # The whole package, its subpackages (storage/ and any later one) included; no caches, no sample data.
    assert _source_files(os.path.join(source_dir, "fasttext_lib")) == _source_files(os.path.join(ROOT, "fasttext_lib"))
    assert "storage/sets.py" in _source_files(os.path.join(source_dir, "fasttext_lib"))
    with open(os.path.join(source_dir, "requirements.txt")) as f:
        assert f.read().split() == list(REQUIREMENTS)
    assert any(r.startswith("gluonnlp==0.10") for r in REQUIREMENTS)
    assert "tqdm" not in REQUIREMENTS  # the inference image has none and serving never imports it


def test_pack_model_layout(bundle, tmp_path):
    dest = pack_model(bundle, str(tmp_path / "out" / "model.tar.gz"))
    members = tar_names(open(dest, "rb").read())
    top = {n for n in members if "/" not in n}
    assert top == set(bundle_names(bundle))
    code = {n for n in members if n.startswith("code/")}
    assert {"code/entry_point.py", "code/inference.py", "code/fasttext_lib/__init__.py",
            "code/fasttext_lib/entry_point.py", "code/fasttext_lib/bundle.py"} <= code
    assert "code/requirements.txt" not in code  # nothing for the toolkit to pip-install at start-up
    assert all(m.mode == 0o644 and m.uid == 0 for m in members.values())
    assert os.listdir(tmp_path / "out") == ["model.tar.gz"]  # no temporary left behind


@pytest.mark.parametrize("name", ["config.json", "params", ".fasttext.lock"])
def test_pack_model_never_writes_over_a_file_of_the_bundle_it_packs(tmp_path, bundle, name):
    """pack_model(b, b + "/config.json") wrote the archive over the bundle's manifest: the model was gone. (No file
    of a bundle is named as an archive, so the name is what refuses them now.)"""
    import shutil

    own = shutil.copytree(bundle, tmp_path / "model")
    if name == "params":
        name = next(n for n in os.listdir(own) if n.startswith("model-"))
    before = {n: (own / n).read_bytes() for n in os.listdir(own)}
    with pytest.raises(FastTextError, match="pack_model writes a gzipped tar archive .*; give a name ending in "
                                            r"\.tar\.gz or \.tgz$"):
        pack_model(str(own), str(tmp_path / "model" / "." / name))
    assert {n: (own / n).read_bytes() for n in os.listdir(own)} == before


@pytest.mark.usefixtures("no_pause_between_rereads")  # (a file stays missing: no reread can find it)
def test_pack_model_errors_leave_nothing(tmp_path, bundle):
    with pytest.raises(FastTextError, match="model bundle not found"):
        pack_model(tmp_path / "nope", str(tmp_path / "model.tar.gz"))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(open(os.path.join(bundle, "config.json")).read())
    with pytest.raises(FastTextError, match="incomplete model bundle"):
        pack_model(broken, str(tmp_path / "model.tar.gz"))
    assert not (tmp_path / "model.tar.gz").exists()
    not_a_model = tmp_path / "other.tar.gz"
    with tarfile.open(not_a_model, "w:gz") as tar:
        tar.add(broken / "config.json", arcname="config.json")
    with pytest.raises(FastTextError, match="holds no model bundle"):
        fetch_job_model(str(not_a_model), str(tmp_path / "fetched"))
    assert not (tmp_path / "fetched").exists()


@pytest.mark.parametrize("dest, said", [
    ("", "dest is empty: give the file to write model.tar.gz to (a local path or s3:// URI ending in .tar.gz)"),
    ("  ", "dest is empty: give the file to write model.tar.gz to (a local path or s3:// URI ending in .tar.gz)"),
    # (a gzipped tar was written under the name: no zip tool opened it)
    ("x.zip", "dest 'x.zip': pack_model writes a gzipped tar archive (SageMaker's model.tar.gz); give a name ending "
              "in .tar.gz or .tgz"),
    ("models/job1", "dest 'models/job1': pack_model writes a gzipped tar archive (SageMaker's model.tar.gz); give a "
                    "name ending in .tar.gz or .tgz"),
])
def test_pack_model_refuses_a_dest_that_is_no_archive_name_before_reading_the_bundle(tmp_path, monkeypatch, dest,
                                                                                     said):
    """pack_model(b, "") said "cannot write : it is a directory"; pack_model(b, "x.zip") wrote a gzipped tar named
    x.zip. Both are refused first (no bundle is even looked for), and nothing is written."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FastTextError) as caught:
        pack_model("no_bundle", dest)
    assert str(caught.value) == said
    assert os.listdir(tmp_path) == []


def test_pack_model_takes_a_tgz_name(tmp_path, bundle):
    dest = pack_model(bundle, str(tmp_path / "Job1.TGZ"))
    with tarfile.open(dest, "r:gz") as tar:
        assert "config.json" in tar.getnames()


def test_pack_model_refuses_a_bundle_with_nan_parameters_before_writing(bundle, tmp_path):
    # The endpoint's model_fn refuses such a bundle at start-up: packaging (and uploading) it first is
    # wasted, and replacing a good model.tar.gz with it loses the user's working one.
    import shutil

    import numpy as np
    from mxnet import nd

    def damage(path):
        params = nd.load(path)
        params["output.weight"][0, 0] = np.nan
        nd.save(path, params)

    where = str(tmp_path / "nan")
    shutil.copytree(bundle, where)
    as_an_older_writer_left_it(where, "model.params", damage)
    out = tmp_path / "out"
    out.mkdir()
    dest = out / "model.tar.gz"
    dest.write_bytes(b"the user's working archive")
    with pytest.raises(FastTextError) as caught:
        pack_model(where, str(dest))
    assert str(caught.value) == (f"corrupt model bundle {where}: parameter 'output.weight' holds inf or NaN values, "
                                 f"so it cannot predict; retrain it")
    assert os.listdir(out) == ["model.tar.gz"] and dest.read_bytes() == b"the user's working archive"
    with pytest.raises(FastTextError, match="holds inf or NaN values"):
        ep.model_fn(where)  # what packaging spares the user: an endpoint that never starts


def serve_archive(data, tmp_path, requests, program=None, env=None):
    """Extract a model.tar.gz as the container does to /opt/ml/model and serve ``requests`` from its
    code/ only, through the real toolkits in a fresh process (tests/toolkit_endpoint.py)."""
    import base64

    model_dir = tmp_path / "opt_ml_model"
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(model_dir)
    full_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SAGEMAKER_PROGRAM")}
    site = staged_only_site(tmp_path / "site")  # the checkout out of sight: code/ alone
    full_env.update(PYTHONPATH=os.pathsep.join([str(model_dir / "code"), site]), OMP_NUM_THREADS="1", **(env or {}))
    if program:
        full_env["SAGEMAKER_PROGRAM"] = program
    payload = json.dumps([{**r, "body": base64.b64encode(r["body"]).decode()} for r in requests])
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "toolkit_endpoint.py"), str(model_dir)],
                       input=payload, env=full_env, cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["fasttext_lib"] == str(model_dir / "code" / "fasttext_lib")  # not the checkout, not site-packages
    assert result["loads"] == 1, r.stderr  # loaded at start-up, once (the handler calls model_fn twice)
    return result


def serve_from_archive(data, tmp_path, program=None):
    """The predictions for REVIEWS from a model.tar.gz's own code/."""
    result = serve_archive(data, tmp_path, [{"body": json.dumps(REVIEWS).encode(), "content_type": "application/json",
                                             "accept": "application/json"}], program)
    answer = result["answers"][0]
    assert (answer["status"], answer["content_type"]) == (200, "application/json"), answer["body"]
    return json.loads(answer["body"])


# What the MXNet 1.9 inference image has besides the standard library; sagemaker_inference is the
# toolkit itself (sm_serve raises its error class when it is there).
SERVING_IMPORTS = {"numpy", "mxnet", "gluonnlp", "fasttext_lib", "sagemaker_inference"}


def test_packed_model_serves_without_sagemaker_program(bundle, served, tmp_path):
    """A plain Model, boto3 or the console set no SAGEMAKER_PROGRAM: the toolkit imports code/inference.py."""
    dest = pack_model(bundle, str(tmp_path / "model.tar.gz"))
    result = serve_archive(open(dest, "rb").read(), tmp_path, [
        {"body": json.dumps(REVIEWS).encode(), "content_type": "application/json", "accept": "text/html, */*;q=0.8"},
        {"body": b"so good\n", "content_type": "text/plain", "accept": "application/*"},
    ])
    assert [(a["status"], a["content_type"]) for a in result["answers"]] == [(200, "application/json")] * 2
    assert json.loads(result["answers"][0]["body"]) == served[1].predict(REVIEWS)
    # nothing to pip-install at start-up: everything serving imports is in the inference image
    outside = {m for m in result["imported"] if m not in sys.stdlib_module_names} - SERVING_IMPORTS
    assert outside == set(), outside
    assert {"numpy", "mxnet", "gluonnlp"} <= set(result["imported"])  # the recorder sees the package's imports


def test_packed_model_serves_with_sagemaker_program(bundle, served, tmp_path):
    dest = pack_model(bundle, str(tmp_path / "model.tar.gz"))
    assert serve_from_archive(open(dest, "rb").read(), tmp_path, "entry_point.py") == served[1].predict(REVIEWS)


def test_max_request_bytes_comes_from_the_model_environment(bundle, tmp_path):
    dest = pack_model(bundle, str(tmp_path / "model.tar.gz"))
    limit = 2000
    fits = b"good food " * (limit // 10)
    assert len(fits) == limit
    result = serve_archive(open(dest, "rb").read(), tmp_path, [
        {"body": fits, "content_type": "text/plain", "accept": "application/json"},
        {"body": fits + b"!", "content_type": "text/plain", "accept": "application/json"},
    ], env={"FASTTEXT_MAX_REQUEST_BYTES": str(limit)})
    ok, too_big = result["answers"]
    assert ok["status"] == 200 and len(json.loads(ok["body"])) == 1
    # what sets the limit is named, as the response limit's 413 does (it gave the number alone); the body is one
    # review, so "send fewer reviews" alone named nothing its sender could do
    assert too_big["status"] == 413 and f"request body has {limit + 1} bytes; the limit is {limit} " \
        "(FASTTEXT_MAX_REQUEST_BYTES; in Batch Transform, max_payload): send fewer reviews per request, or cut a " \
        "review that long" in too_big["body"]


@pytest.mark.parametrize("limit, variable, default", [(sm_serve.max_request_bytes, "FASTTEXT_MAX_REQUEST_BYTES", 6 * 1024 * 1024),
                                                      (sm_serve.max_response_bytes, "FASTTEXT_MAX_RESPONSE_BYTES", 6 * 1000 * 1000)],
                         ids=["request", "response"])
@pytest.mark.parametrize("raw", ["6MB", "", "-1", "0", "1.5"])
def test_a_bad_max_request_or_response_bytes_is_named_at_start_up(raw, limit, variable, default):
    assert limit({}) == default
    assert limit({variable: " 2000 "}) == limit({variable: "2000"}) == 2000
    with pytest.raises(ValueError, match=rf"^{variable} must be a positive whole number of bytes, got {raw!r}$"):
        limit({variable: raw})


# --------------------------------------------------------------------------------------------
# SDK objects against the moto server
# --------------------------------------------------------------------------------------------
@pytest.fixture
def sm(s3_bucket):
    """A telemetry-free sagemaker Session on moto, recording every SageMaker API request it sends."""
    from fasttext_lib.sagemaker_utils import sagemaker_session

    bucket = s3_bucket[len("s3://"):]
    session = sagemaker_session(default_bucket=bucket)
    requests = []
    session.sagemaker_client.meta.events.register(
        "provide-client-params.sagemaker.*", lambda params, model, **_: requests.append((model.name, dict(params))))

    def request(name):
        found = [params for op, params in requests if op == name]
        assert len(found) == 1, [op for op, _ in requests]
        return found[0]

    return types.SimpleNamespace(session=session, bucket=bucket, requests=requests, request=request)


def s3_get(uri):
    import boto3

    bucket, key = uri[len("s3://"):].split("/", 1)
    return boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()


def s3_put(uri, data):
    import boto3

    bucket, key = uri[len("s3://"):].split("/", 1)
    boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=data)


def test_session_opts_out_of_telemetry(sm):
    from sagemaker.utils import resolve_value_from_config

    assert sm.session.default_bucket() == sm.bucket
    assert resolve_value_from_config(None, "SageMaker.PythonSDK.Modules.TelemetryOptOut", sagemaker_session=sm.session) is True


def test_training_job_end_to_end_through_the_sdk(sm, splits, tmp_path):
    """Estimator -> CreateTrainingJob request -> the uploaded source run as the container would -> model back."""
    from fasttext_lib.sagemaker_utils import make_estimator

    data = f"s3://{sm.bucket}/ft/data"
    write_fasttext(splits[0], f"{data}/sample.train")
    write_fasttext(splits[1], f"{data}/sample.test")
    estimator = make_estimator(sm.bucket, "ft", hyperparameters={**FAST, "optimizer": "adam", "lr": None,
                                                                 "label_names": NAMES},
                               role=ROLE, session=sm.session)
    assert estimator.training_image_uri() == f"{REGISTRY}/mxnet-training:1.9.0-cpu-py38"
    estimator.fit({"train": f"{data}/sample.train", "test": f"{data}/sample.test"}, wait=False, job_name="ft-job-1")

    job = sm.request("CreateTrainingJob")
    hps = job["HyperParameters"]
    assert {k: json.loads(hps[k]) for k in ("epochs", "batch_size", "emsize", "ngrams", "buckets", "optimizer", "progress")} \
        == {**FAST, "optimizer": "adam", "progress": False}
    assert "lr" not in hps  # None: the entry point's default
    assert json.loads(hps["label_names"]) == "1=negative,2=positive"  # a mapping goes inline
    assert json.loads(hps["sagemaker_program"]) == "fasttext_lib/entry_point.py"
    assert "sagemaker_parameter_server_enabled" not in hps
    spec = job["AlgorithmSpecification"]
    assert spec["TrainingImage"] == f"{REGISTRY}/mxnet-training:1.9.0-cpu-py38"
    assert spec["MetricDefinitions"] == sm_train.METRIC_DEFINITIONS
    assert {c["ChannelName"]: c["DataSource"]["S3DataSource"]["S3Uri"] for c in job["InputDataConfig"]} \
        == {"train": f"{data}/sample.train", "test": f"{data}/sample.test"}
    assert job["OutputDataConfig"]["S3OutputPath"] == f"s3://{sm.bucket}/ft/jobs"
    assert job["RoleArn"] == ROLE and job["ResourceConfig"]["InstanceType"] == "ml.m5.xlarge"

    # The container: /opt/ml/code is the uploaded source, the channels are the S3 objects.
    source = json.loads(hps["sagemaker_submit_directory"])
    assert source.startswith(f"s3://{sm.bucket}/ft/code/ft-job-1/")
    code = tmp_path / "opt_ml" / "code"
    with tarfile.open(fileobj=io.BytesIO(s3_get(source)), mode="r:gz") as tar:
        names = set(tar.getnames())
        tar.extractall(code)
    assert {"entry_point.py", "requirements.txt", "fasttext_lib/entry_point.py", "fasttext_lib/train.py"} <= names
    assert not any(n.startswith(("tests", "notebooks", ".venv")) for n in names)
    channels = {c["ChannelName"]: {"part": _write(s3_get(c["DataSource"]["S3DataSource"]["S3Uri"]))}
                for c in job["InputDataConfig"]}
    env = make_container(tmp_path / "opt_ml", channels)
    r = run_entry_point(code, env, toolkit_argv(hps))
    assert r.returncode == 0, r.stderr
    assert len(re.findall(sm_train.VAL_ACCURACY_REGEX, r.stdout)) == FAST["epochs"]

    # SageMaker tars SM_MODEL_DIR to the job's model.tar.gz; fetch it back as a bundle.
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in os.listdir(env["SM_MODEL_DIR"]):
            tar.add(os.path.join(env["SM_MODEL_DIR"], name), arcname=name)
    assert estimator.model_data == f"s3://{sm.bucket}/ft/jobs/ft-job-1/output/model.tar.gz"
    s3_put(estimator.model_data, buf.getvalue())
    fetched = fetch_job_model(estimator.model_data, f"s3://{sm.bucket}/ft/models/ft-job-1")
    expected = Predictor.load(env["SM_MODEL_DIR"]).predict(REVIEWS)
    assert Predictor.load(fetched).predict(REVIEWS) == expected
    assert Predictor.load(fetched).names == ["negative", "positive"]

    # The estimator's own model (estimator.deploy()) repacks the uploaded source as code/: it serves too.
    container = estimator.create_model().prepare_container_def(instance_type="ml.m5.xlarge")
    assert container["Environment"]["SAGEMAKER_PROGRAM"] == "entry_point.py"
    assert serve_from_archive(s3_get(container["ModelDataUrl"]), tmp_path, "entry_point.py") == expected


def test_estimator_options(sm, source_dir, monkeypatch):
    from fasttext_lib.sagemaker_utils import make_estimator

    common = {"role": ROLE, "session": sm.session, "source_dir": source_dir}
    gpu = make_estimator(sm.bucket, "ft", instance_type="ml.p3.2xlarge", **common)
    assert gpu.training_image_uri() == f"{REGISTRY}/mxnet-training:1.9.0-gpu-py38"
    multi = make_estimator(sm.bucket, "ft", instance_count=2, **common)
    assert json.loads(multi.hyperparameters()["sagemaker_parameter_server_enabled"]) is True
    spot = make_estimator(sm.bucket, "ft", use_spot_instances=True, **common)
    assert spot.checkpoint_s3_uri == f"s3://{sm.bucket}/ft/checkpoints/fasttext" and spot.max_wait == spot.max_run
    monkeypatch.delenv("SAGEMAKER_ROLE", raising=False)
    with pytest.raises(FastTextError, match="no SageMaker execution role"):
        make_estimator(sm.bucket, "ft", session=sm.session)  # moto's caller is a user, not a role
    monkeypatch.setenv("SAGEMAKER_ROLE", ROLE)
    assert make_estimator(sm.bucket, "ft", session=sm.session, source_dir=source_dir).role == ROLE


def test_a_temporary_source_dir_is_removed_with_its_estimator_or_model(sm, monkeypatch):
    """Without source_dir, make_estimator / make_model stage the code in the temp folder; it stayed there
    (~600 KB a call, every notebook run). It lives as long as the object that uploads it, then goes."""
    import gc

    from fasttext_lib.sagemaker_utils import make_estimator, make_model

    estimator = make_estimator(sm.bucket, "ft", role=ROLE, session=sm.session)
    model = make_model(f"s3://{sm.bucket}/ft/packed/model.tar.gz", sm.bucket, "ft", role=ROLE, session=sm.session)
    staged = [estimator.source_dir, model.source_dir]
    assert all(os.path.isfile(os.path.join(d, "fasttext_lib", "entry_point.py")) for d in staged)
    assert os.path.isfile(os.path.join(staged[0], "requirements.txt"))  # training: what the container lacks
    assert not os.path.exists(os.path.join(staged[1], "requirements.txt"))  # serving installs nothing
    del estimator, model
    gc.collect()
    assert [d for d in staged if os.path.exists(d)] == []
    made = []
    monkeypatch.setattr(tempfile, "mkdtemp", lambda mkdtemp=tempfile.mkdtemp, **kw: made.append(mkdtemp(**kw)) or made[-1])
    with pytest.raises(TypeError):  # an SDK object that cannot be made leaves no staged copy either
        make_model(f"s3://{sm.bucket}/ft/packed/model.tar.gz", sm.bucket, "ft", role=ROLE, session=sm.session,
                   no_such_argument=1)
    assert len(made) == 1 and not os.path.exists(made[0])


def test_tuner_request(sm, source_dir, fasttext_job):
    from fasttext_lib.sagemaker_utils import make_estimator, make_tuner

    estimator = make_estimator(sm.bucket, "ft", hyperparameters={"epochs": 5, "optimizer": "adam"}, role=ROLE,
                               session=sm.session, source_dir=source_dir)
    tuner = make_tuner(estimator, max_jobs=4, max_parallel_jobs=2)
    tuner.fit({"train": f"s3://{sm.bucket}/ft/data/sample.train", "test": f"s3://{sm.bucket}/ft/data/sample.test"},
              wait=False, job_name="ft-tune-1")
    request = sm.request("CreateHyperParameterTuningJob")
    config = request["HyperParameterTuningJobConfig"]
    assert config["HyperParameterTuningJobObjective"] == {"Type": "Maximize", "MetricName": "validation:accuracy"}
    assert config["ResourceLimits"] == {"MaxNumberOfTrainingJobs": 4, "MaxParallelTrainingJobs": 2}
    ranges = config["ParameterRanges"]
    assert [r["Name"] for r in ranges["ContinuousParameterRanges"]] == ["lr"]
    assert ranges["ContinuousParameterRanges"][0]["ScalingType"] == "Logarithmic"
    assert [r["Name"] for r in ranges["IntegerParameterRanges"]] == ["emsize"]
    assert [r["Name"] for r in ranges["CategoricalParameterRanges"]] == ["ngrams"]
    definition = request["TrainingJobDefinition"]
    assert definition["AlgorithmSpecification"]["MetricDefinitions"] == \
        [{"Name": "validation:accuracy", "Regex": sm_train.VAL_ACCURACY_REGEX}]
    assert json.loads(definition["StaticHyperParameters"]["epochs"]) == 5
    # the regex the tuner sends reads the objective from a real job's log, one value per epoch
    import pandas as pd

    root, job = fasttext_job
    regex = definition["AlgorithmSpecification"]["MetricDefinitions"][0]["Regex"]
    history = pd.read_csv(root / "output" / "data" / "history.csv")
    assert [float(v) for v in re.findall(regex, job.stdout)] == pytest.approx(list(history.test_accuracy), abs=1e-6)


def test_model_repack_and_deploy(sm, bundle, served, tmp_path, monkeypatch):
    import sagemaker.session

    from fasttext_lib.sagemaker_utils import make_model

    # deploy() waits for the endpoint with DescribeEndpoint every 30 s (sleeping first): moto's is in
    # service at the second look, so poll without the sleep (the same requests, 30 s less idle time)
    wait_until = sagemaker.session._wait_until
    monkeypatch.setattr(sagemaker.session, "_wait_until", lambda fn, poll=5: wait_until(fn, 0.01))

    model_data = pack_model(bundle, f"s3://{sm.bucket}/ft/packed/model.tar.gz")
    assert set(n for n in tar_names(s3_get(model_data)) if "/" not in n) == set(bundle_names(bundle))
    model = make_model(model_data, sm.bucket, "ft", role=ROLE, session=sm.session)
    assert model.serving_image_uri("us-east-1", "ml.g4dn.xlarge") == f"{REGISTRY}/mxnet-inference:1.9.0-gpu-py38"
    container = model.prepare_container_def(instance_type="ml.m5.xlarge")  # repacks through S3 (moto)
    assert container["Image"] == f"{REGISTRY}/mxnet-inference:1.9.0-cpu-py38"
    assert container["Environment"]["SAGEMAKER_PROGRAM"] == "entry_point.py"
    assert container["Environment"]["SAGEMAKER_SUBMIT_DIRECTORY"] == "/opt/ml/model/code"
    repacked = container["ModelDataUrl"]
    assert repacked.startswith(f"s3://{sm.bucket}/ft/serving/") and repacked.endswith("/model.tar.gz")
    data = s3_get(repacked)
    members = tar_names(data)
    assert set(n for n in members if "/" not in n) == set(bundle_names(bundle))
    assert {"code/entry_point.py", "code/inference.py", "code/fasttext_lib/entry_point.py"} <= set(members)
    assert "code/requirements.txt" not in members  # the endpoint installs nothing at start-up
    assert serve_from_archive(data, tmp_path, "entry_point.py") == served[1].predict(REVIEWS)

    endpoint = model.deploy(initial_instance_count=1, instance_type="ml.m5.xlarge", endpoint_name="ft-endpoint")
    endpoint.delete_model()  # notebook 04's clean-up, in its order
    endpoint.delete_endpoint()
    ops = [op for op, _ in sm.requests]
    assert ops.index("CreateModel") < ops.index("CreateEndpoint") < ops.index("DeleteModel") < ops.index("DeleteEndpoint")
    assert sm.request("CreateModel")["PrimaryContainer"]["Environment"]["SAGEMAKER_PROGRAM"] == "entry_point.py"


@pytest.mark.parametrize("content_type", ["text/csv; header=present", "text/csv"])
@pytest.mark.parametrize("shape", ["df.to_csv()", "shuffled", "id,label,text", "shuffled ,review"])
def test_batch_transform_mini_batches_of_a_csv_with_pandas_index_are_answered_without_it(endpoint, served, splits,
                                                                                        monkeypatch, shape,
                                                                                        content_type):
    """df.to_csv(path) without index=False, sent with header=present and SplitType=Line: the mini-batches after the
    first hold no header, so their records (8123,2,the review) were answered whole, row number and class as words.
    Sent as plain text/csv (the docs' transform() call), the first mini-batch's header is recognized without
    header=present, and the later ones were still answered whole: they are read as with it."""
    import pandas as pd

    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    test = splits[1]
    frame = pd.DataFrame({"label": test.labels[:95], "text": test.texts[:95]})
    if shape.startswith("shuffled"):
        frame = frame.sample(frac=1, random_state=5)
    if shape == "id,label,text":
        frame.index.name = "id"
    if shape == "shuffled ,review":
        frame = frame[["text"]].rename(columns={"text": "review"})
    lines = frame.to_csv().encode().splitlines(keepends=True)
    assert len(lines) == 96 and all(line.endswith(b"\n") for line in lines)
    # SplitType=Line, MultiRecord: mini-batches of whole lines, the header in the first only; the last one small
    answers = []
    for part in ((0, 41), (41, 92), (92, 96)) if shape != "shuffled ,review" else ((0, 41), (41, 70), (70, 96)):
        status, _, response = endpoint.invoke(b"".join(lines[slice(*part)]), content_type, "application/json")
        assert status == 200, response
        answers += json.loads(response)
    assert answers == [HEADER_ANSWER] + served[1].predict(list(frame.iloc[:, -1]))  # one answer a line, the header's too


@pytest.mark.parametrize("body, texts", [
    (b"2,Stars\n1,cold soup\n2,great food\n1,rude staff\n", ["Stars", "cold soup", "great food", "rude staff"]),
    (b'"1","Rating"\n"1","cold soup"\n"2","great food"\n', ["Rating", "cold soup", "great food"]),
    (b"label,text\n1,cold soup\n2,great food\n", [None, "cold soup", "great food"]),  # the first mini-batch: its header
])
def test_batch_transform_answers_a_later_mini_batchs_first_review_that_reads_like_a_header(monkeypatch, served, body,
                                                                                          texts):
    """A later mini-batch of a label,text file sent with header=present whose first review is one word that names a
    class column (2,Stars) was skipped as a header since the one column beside a named class is taken for the
    text whatever its name: one answer short, every answer after it one off. Its class recurs below it: data."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    reviews = sm_serve.input_fn(body, "text/csv; header=present")
    assert sm_serve.predict_fn(reviews, served[0]) == \
        [HEADER_ANSWER if t is None else a for t, a in zip(texts, served[1].predict([t or "" for t in texts]))]


@pytest.mark.parametrize("body, content_type, texts", [
    (b'""\n', "text/csv", [""]),  # pandas' empty review in a one-column CSV, alone (strategy="SingleRecord")
    (b"\n", "text/csv", [""]),
    (b'""\n""\n', "text/csv", ["", ""]),  # a last mini-batch of empty reviews
    (b"\n", "text/plain", [""]),
    (b"\r\n  \n", "text/plain", ["", "  "]),
    (b'[""]', "application/json", [""]),
    (b'[null]', "application/json", [""]),
    (b"null", "application/json", [""]),  # a missing review alone, as in a list: it was a 400 that failed the job
    (b"NaN\n", "application/json", [""]),
])
def test_batch_transform_answers_a_mini_batch_of_empty_reviews(monkeypatch, served, body, content_type, texts):
    """A mini-batch whose every record is an empty review was a 400 ("request holds no review text"), which fails the
    whole transform job, while the same records among others are answered: a file with one empty review (pandas writes
    it as "" in a one-column CSV) failed its job with strategy="SingleRecord" and not with MultiRecord. In Batch
    Transform each record gets its answer, and a body with no record at all none
    (test_batch_transform_answers_an_empty_object_with_no_answer); an endpoint still refuses such a request."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    reviews = sm_serve.input_fn(body, content_type)
    assert sm_serve.predict_fn(reviews, served[0]) == served[1].predict(texts)
    monkeypatch.delenv("SAGEMAKER_BATCH")
    with pytest.raises(sm_serve.RequestError, match="no review text"):  # an endpoint's client is told
        sm_serve.input_fn(body, content_type)


@pytest.mark.parametrize("content_type", ["text/plain", "text/csv", "text/csv; header=present", "application/jsonlines",
                                          "application/json", "text/plain; charset=utf-16"])
def test_an_endpoint_s_body_of_a_byte_order_mark_alone_is_not_said_to_be_empty(content_type):
    """A body of a BOM alone (a Windows tool's file of no text) is no review text, but the client sent bytes: the 400
    said "the body is empty", which sends one looking for a request that lost its body."""
    body = b"\xff\xfe" if "utf-16" in content_type else b"\xef\xbb\xbf"  # (UTF-16's codec drops its BOM itself)
    with pytest.raises(sm_serve.RequestError) as raised:
        sm_serve.input_fn(body, content_type)
    assert raised.value.message == "request holds no review text: the body is a byte order mark alone"


@pytest.mark.parametrize("body, said", [
    (b"\r\r", "one blank line holding 2 carriage returns that end no line"),
    (b"\r", "one blank line holding a carriage return that ends no line"),
    (b"\n\r\r\n \n", "3 blank lines holding a carriage return that ends no line"),  # (a CRLF's \r ends its line)
])
@pytest.mark.parametrize("content_type", ["text/plain", "text/csv", "text/csv; header=present", "application/jsonlines"])
def test_an_endpoint_says_a_blank_body_s_lone_carriage_returns_end_no_line(content_type, body, said):
    """A body of carriage returns (an old Mac file's line ends, and nothing else) was "one blank line", \\r\\r too: the
    lines are counted at \\n, as the reader ends them and as SageMaker's SplitType=Line splits a file ("on a newline
    character boundary"); the 400 now says what else the body holds, so that the count reads as what was sent."""
    with pytest.raises(sm_serve.RequestError) as raised:
        sm_serve.input_fn(body, content_type)
    assert raised.value.message == (f"request holds no review text: the body is {said} (a line ends at \\n, as "
                                    f"SageMaker's SplitType=Line splits a body)")


@pytest.mark.parametrize("body, said", [(b"sep=,", "(sep=,)"), (b"\xef\xbb\xbfsep=,\r\n", "(sep=,)"),
                                        (b"sep=\t\n\n", "(sep=<TAB>) and one blank line")])
@pytest.mark.parametrize("content_type", ["text/csv", "text/csv; header=present", "application/jsonlines"])
def test_a_body_of_excel_s_separator_line_alone_is_said_to_be_so(content_type, body, said):
    """Excel's separator line is a blank line to a CSV or JSON Lines body (as predict reads a file's first line): a
    body of nothing else was told only "request holds no review text", though it held a line of text."""
    with pytest.raises(sm_serve.RequestError) as raised:
        sm_serve.input_fn(body, content_type)
    assert raised.value.message == f"request holds no review text: the body holds only Excel's separator line {said}"


@pytest.mark.parametrize("body, count", [(b",,\n", 3), (b",", 2), (b"\n , \n", 2)])
def test_a_declared_header_of_empty_names_alone_is_said_so(body, count):
    """A header=present body whose one row is commas alone was told "only a header row (,,)" (or "()"-like for a
    lone comma), which shows nothing a person can read as a header."""
    with pytest.raises(sm_serve.RequestError) as raised:
        sm_serve.input_fn(body, "text/csv; header=present")
    assert raised.value.message == (f"request holds no review text: only a header row (of {count} empty column names: "
                                    f"a line of commas alone)")


@pytest.mark.parametrize("body, content_type, texts", [
    (b"great food\n\xef\xbb\xbf", "text/plain", ["great food", ""]),
    (b"great food\r\n\xef\xbb\xbf\xef\xbb\xbf", "text/csv", ["great food", ""]),
    (b"label,text\n2,great food\n\xef\xbb\xbf", "text/csv; header=present", ["great food", ""]),
    (b'{"source": "great food"}\n\xef\xbb\xbf', "application/jsonlines", ["great food", ""]),
])
def test_batch_transform_answers_a_last_line_of_a_byte_order_mark_alone(monkeypatch, served, body, content_type, texts):
    """A mini-batch's last line that is a BOM alone without its line end (Windows files joined with cat, the last one
    empty but for its BOM) is a line SageMaker sends as a record, and it got no answer: the BOM taken off, the line
    was gone, and the mini-batch's answers one short of its lines. It is answered as a blank line is, in its place."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    answers = sm_serve.predict_fn(sm_serve.input_fn(body, content_type), served[0])
    lead = [HEADER_ANSWER] if "header=present" in content_type else []
    expected = served[1].predict_top(texts, 1, 0.0) if "jsonlines" in content_type else served[1].predict(texts)
    assert answers == lead + expected


_UNREAD_TSV = "Titel\tBewertung\n2\tgreat food, really\n\"cold soup\"\t1\n1\tnever again\n2\tfine place\n"


def test_a_declared_tab_separated_header_of_unknown_names_is_one_400(tmp_path, monkeypatch, bundle, served):
    """text/csv; header=present over a header row predict reads no columns from (Titel<TAB>Bewertung: predict answers
    every line of the file as a review, the header too) went the comma route: each row split at its commas (a row
    quoted first, "cold soup"<TAB>1, a 400 that named no tab), or answered whole, its class a word of its review. It is
    refused in one line saying what to send; without header=present, every line is answered as predict answers the
    file; in Batch Transform (a later mini-batch's first line is a row, whatever it holds) as before, line for line."""
    from conftest import cli_in_process

    body = _UNREAD_TSV.encode()
    with pytest.raises(sm_serve.RequestError) as raised:
        sm_serve.input_fn(body, "text/csv; header=present")
    assert raised.value.message == (
        "text/csv; header=present: the header row on line 1 (Titel<TAB>Bewertung) is tab-separated but names no "
        "columns training reads (label, text, ...): name them so (label<TAB>text), or send the body without "
        "header=present to have every line answered as a review, as predict answers the file")
    path = tmp_path / "unread.tsv"
    path.write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    answers = sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0])
    assert answers == [json.loads(line) for line in got.stdout.splitlines()]
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    body = body.replace(b'"cold soup"', b"cold soup")
    assert len(sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv; header=present"), served[0])) == 5


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_batch_transform_answers_every_line_under_a_declared_tab_separated_header_of_unknown_names(
        tmp_path, monkeypatch, bundle, served, cut):
    """In Batch Transform, header=present over a tab-separated header of names training does not read (Titel<TAB>
    Bewertung), a row quoted first ("cold soup"<TAB>1) was a 400: read at commas it is no CSV, and the 400 failed the
    whole job. A later mini-batch's first line is a row, so no mini-batch can be refused as the endpoint refuses the
    body: every line of every mini-batch is answered as a review, as predict answers the file, wherever SplitType=Line
    cuts it."""
    from conftest import cli_in_process

    path = tmp_path / "unread.tsv"
    path.write_bytes(_UNREAD_TSV.encode())
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    lines = _UNREAD_TSV.splitlines(keepends=True)
    answers = []
    for batch in ("".join(lines[:cut]), "".join(lines[cut:])):
        answers += sm_serve.predict_fn(sm_serve.input_fn(batch.encode(), "text/csv; header=present"), served[0])
    assert answers == [json.loads(line) for line in got.stdout.splitlines()]


def test_predict_and_the_endpoint_judge_a_class_last_table_by_the_same_rows_among_header_repeats(tmp_path, bundle,
                                                                                                  served):
    """A header of the user's own names (feedback,verdict) repeated between rows (files of one row each joined with
    cat), then rows whose last field is no class: predict judges the class-last table by its first 51 records, the
    repeats among them (as training's look-ahead does), and the endpoint judged it by 50 rows after leaving them out,
    further down, where the rows end in no class: a table to predict, every line a review (the header and its repeats
    too) to the endpoint. Both now judge it by the same rows, and answer the same rows for the same texts."""
    from conftest import cli_in_process

    lines = ["feedback,verdict"]
    for i in range(25):
        lines += ["feedback,verdict", f"the food number {i} was fine,{1 + i % 2}"]
    lines += [f"nice place {i},5" for i in range(30)]
    body = ("\n".join(lines) + "\n").encode()
    path = tmp_path / "joined.csv"
    path.write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0 and "read as labeled CSV" in got.stderr, got.stderr
    texts = [f"the food number {i} was fine" for i in range(25)] + [f"nice place {i}" for i in range(30)]
    assert [json.loads(line) for line in got.stdout.splitlines()] == served[1].predict(texts)
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == served[1].predict(texts)


def test_a_glue_quote_in_a_labeled_tsv_is_refused_by_predict_as_by_training_and_answered_by_the_endpoint(
        tmp_path, bundle, served):
    """A headerless labeled TSV with a quotation mark that is no CSV quoting (GLUE's: 2<TAB>"loved" it) past its
    first rows: training and predict refuse it in the same line, which names the line and gives the conversion
    (quoting=3); the endpoint answers each row's text as that conversion reads it (docs/SERVING.md says why)."""
    from conftest import cli_in_process
    from fasttext_lib.data import read_labeled
    from fasttext_lib.errors import FastTextError

    body = b"1\tbad one\n2\tgreat food\n" * 30 + b'2\t"loved" it\n'
    path = tmp_path / "glue.tsv"
    path.write_bytes(body)
    with pytest.raises(FastTextError) as trained:
        read_labeled(str(path))
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 2 and got.stdout == "", got.stderr
    said = f"{path}:61: malformed CSV record starting at this line"  # (stderr shows the tab in it as \\t)
    assert str(trained.value).startswith(said) and got.stderr.startswith(f"error: {said}")
    assert "quoting=3" in str(trained.value) and "quoting=3" in got.stderr
    assert len(got.stderr.strip().splitlines()) == 1
    texts = ["bad one", "great food"] * 30 + ['"loved" it']
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == served[1].predict(texts)


def test_predict_and_the_endpoint_judge_a_recognized_header_by_the_same_rows_among_its_repeats(tmp_path, bundle,
                                                                                                served):
    """A header training recognizes (label,text) repeated between rows (files of one row each joined with cat), the
    rows' texts holding an unquoted comma (three fields under two names): predict judges the table by its first 51
    records, the repeats among them, and reads it as training does, under its header (one answer a row); the endpoint
    left the repeats out first and judged it by rows further down, where none was as wide as the header: every line a
    review, the header and its repeats too (51 answers for 25 rows). Both now judge it by the same rows."""
    from conftest import cli_in_process

    lines = ["label,text"]
    for i in range(25):
        lines += ["label,text", f"{1 + i % 2},good food {i}, nice staff"]
    body = ("\n".join(lines) + "\n").encode()
    path = tmp_path / "joined.csv"
    path.write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0 and "read as labeled CSV" in got.stderr, got.stderr
    answers = [json.loads(line) for line in got.stdout.splitlines()]
    assert len(answers) == 25
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == answers


@pytest.mark.parametrize("content_type", ["text/plain", "text/csv", "text/csv; header=present", "text/csv; header=absent",
                                          "application/jsonlines", "application/json"])
@pytest.mark.parametrize("body, said", [(b"\n", "one blank line"), (b"\n\n", "2 blank lines"),
                                        (b"  \r\n", "one blank line"), (b"\xef\xbb\xbf\n \t\n\r\n", "3 blank lines"),
                                        (b"", "empty")])
def test_a_body_of_blank_lines_alone_is_one_clear_400_at_an_endpoint_and_answered_line_for_line_in_batch_transform(
        endpoint, served, monkeypatch, tmp_path, bundle, content_type, body, said):
    """A request of nothing but blank lines: an endpoint's client sent no review (an empty variable), and is told so
    in one line saying what the body held, the same for every content type; application/json said "not valid JSON:
    Expecting value: line 2 column 1 (char 1)", JSON Lines "no JSON lines", the others only "no review text". In
    Batch Transform SplitType=Line may cut a mini-batch between blank lines of a file: each line is a record, answered
    as an empty review (a 400 would fail the whole job), as predict answers the same file, line for line; an empty
    body (an empty object of the input) gets no answer, and so does a JSON body of whitespace, which holds no JSON
    value (test_batch_transform_answers_an_empty_object_with_no_answer)."""
    from conftest import cli_in_process

    status, answer_type, response = endpoint.invoke(body, content_type, "application/json")
    assert (status, answer_type, response) == (400, sm_serve.ERROR_TYPE, f"request holds no review text: the body is "
                                                                         f"{said}"), response
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    lines = 0 if content_type == "application/json" else body.count(b"\n")
    status, _, response = endpoint.invoke(body, content_type, "application/jsonlines")
    assert status == 200 and [json.loads(line) for line in response.splitlines()] == blazingtext_lines(
        served[1].predict([""] * lines), ranked=False), response
    path = tmp_path / "blank.txt"
    path.write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0 and [json.loads(line) for line in got.stdout.splitlines()] == \
        served[1].predict([""] * body.count(b"\n")), got.stderr


@pytest.mark.parametrize("content_type", ["application/json", "application/jsonlines", "text/plain", "text/csv",
                                          "text/csv; header=present"])
def test_batch_transform_answers_an_empty_object_with_no_answer(endpoint, monkeypatch, content_type):
    """A 0-byte object in a transform job's input (Spark's _SUCCESS, an empty part file) is sent as an empty body, and
    it was a 400 ("request holds no JSON lines", "not valid JSON", "no review text"), which fails the whole job: zero
    records in are zero answers out, a 200 with an empty body in every answer type. A JSON body of whitespace holds no
    value either, and [] no review. accept="application/json" answered them [], which assemble_with="Line" made an
    output line of its own (an input of no line, one line out), where JSON Lines and CSV answered nothing. An
    endpoint's client that sent nothing is still told, a 400."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    bodies = [b"", b"\xef\xbb\xbf"] + ([b"\n", b" \r\n", b"[]", b'{"instances": []}']
                                      if content_type == "application/json" else [])
    for body in bodies:
        for accept in ("application/json", "application/jsonlines", "text/csv", None):
            status, _, response = endpoint.invoke(body, content_type, accept)
            assert (status, response) == (200, ""), (body, accept, response)
    monkeypatch.delenv("SAGEMAKER_BATCH")
    for body in bodies:
        status, _, response = endpoint.invoke(body, content_type, "application/json")
        assert status == 400, (body, response)


@pytest.mark.parametrize("body, texts", [
    (b"3,000 calories and worth it\n5,5 stars at most\n", ["3,000 calories and worth it", "5,5 stars at most"]),
    (b"1,great\n2,cold\n", ["1,great", "2,cold"]),  # two unquoted class-first rows: too thin a sign, as before
    (b"2,great food\n1,cold\n2,nice\n1,bad\n", ["great food", "cold", "nice", "bad"]),  # labeled rows, as before
    (b"17,great food\n9,cold\n", ["17,great food", "9,cold"]),  # no class after them, too few to tell: reviews
    (b"17,2,great food\n9,1,cold\n", ["great food", "cold"]),  # a row number, then a class: pandas' index
])
def test_batch_transform_takes_a_later_mini_batchs_first_column_for_pandas_index_only_when_it_is_one(
        monkeypatch, served, body, texts):
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv; header=present"), served[0]) == \
        served[1].predict(texts)


@pytest.mark.parametrize("body", [b"17,2,great food\n18,1,cold soup\n19,2,nice staff\n20,1,rude waiter\n",
                                  b"great food,2\ncold soup,1\nnice staff,2\nrude waiter,1\n"])
def test_batch_transform_answers_the_lines_of_a_header_absent_csv_as_predict_does(monkeypatch, served, bundle, tmp_path,
                                                                                   body):
    """A headerless mini-batch of plain text/csv is read as a later one of a file with a header (its row numbers, or
    its class last, left out: docs/SERVING.md); header=absent, the way out the docs give for a file without a header
    row, has its lines answered as predict answers the file: whole, but for rows with one of the model's classes
    last in every one (formats.class_last_table), answered for their texts by both."""
    from conftest import cli_in_process

    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    lines = body.decode().splitlines()
    (tmp_path / "reviews.csv").write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", tmp_path / "reviews.csv")
    by_predict = [json.loads(line) for line in got.stdout.splitlines()]
    assert by_predict == served[1].predict(lines if lines[0][0].isdigit() else [line.rsplit(",", 1)[0] for line in lines])
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv; header=absent"), served[0]) == by_predict
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == \
        served[1].predict([line.split(",", 2)[2] if line[0].isdigit() else line.rsplit(",", 1)[0] for line in lines])


@pytest.mark.parametrize("body", [b"1, 2, 3 stars\n", b"1,2,3 stars and the food was great\n",
                                  b"7,1,2 liftoff! a great show\n3,2,1 and it was over, cold fries\n"])
def test_batch_transform_answers_a_few_plain_csv_reviews_that_begin_with_numbers_whole(monkeypatch, served, body):
    """A review of plain text/csv whose first two fields are a number and one of the model's classes (1, 2, 3 stars),
    alone in its mini-batch (strategy="SingleRecord") or among a few that do not count up, read as a later mini-batch
    of a pandas ,label,text file: its first number was left out, the next read as its class, and it lost them where
    the endpoint and predict answer it whole. Unless told header=present, one or a few such records are too thin a sign
    of pandas' index, as they are of a class last."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == \
        served[1].predict(body.decode().splitlines())


@pytest.mark.parametrize("content_type", ["text/csv; header=present", "text/csv"])
@pytest.mark.parametrize("columns", [["text", "label"], ["title", "text", "label"]])
@pytest.mark.parametrize("index", [False, True])
def test_batch_transform_mini_batches_of_a_text_label_csv_are_answered_for_their_text(endpoint, served, splits,
                                                                                     monkeypatch, columns, index,
                                                                                     content_type):
    """A file whose class comes after its text (text,label: Hugging Face's to_csv of IMDB or yelp_polarity), sent with
    header=present and SplitType=Line: its mini-batches after the first hold no header, and their records were answered
    whole, each review's class as a word of it. A mini-batch whose every record (4 or more) is as wide as the others
    and ends in one of the model's classes is now read as text,label: its text columns, the class not scored. So also
    as plain text/csv, whose first mini-batch's header is recognized without header=present."""
    import pandas as pd

    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    test = splits[1]
    frame = pd.DataFrame({"title": [t.split()[0] for t in test.texts[:95]], "text": test.texts[:95],
                          "label": test.labels[:95]})[columns]
    lines = frame.to_csv(index=index).encode().splitlines(keepends=True)
    answers = []
    for part in ((0, 41), (41, 92), (92, 96)):  # MultiRecord: the header in the first only; the last one small
        status, _, response = endpoint.invoke(b"".join(lines[slice(*part)]), content_type, "application/json")
        assert status == 200, response
        answers += json.loads(response)
    texts = [" ".join(row[:-1]) for row in frame.itertuples(index=False)]
    assert answers == [HEADER_ANSWER] + served[1].predict(texts)  # as the first mini-batch reads its rows


@pytest.mark.parametrize("body", [
    b"great food,2\ncold soup,1\nnice,2\n",  # three: too thin a sign (one record: SingleRecord), as for class first
    b"great food,2\ncold soup,1\nnice staff,2\nI'd say 4,5\n",  # a decimal comma (4,5 stars)
    b"great food,2\ncold, soup,1\nnice,2\nrude,1\n",  # not all as wide: a review's unquoted comma
    b"great food,2\ncold soup,1\nnice,2\nrude,fine\n",  # one ends in no class
    b"2,great food,1\n1,cold soup,2\n2,nice,1\n1,rude,2\n",  # a class first too: class first, as before
])
def test_batch_transform_reads_a_later_mini_batch_as_text_label_only_when_every_record_is_one(monkeypatch, served,
                                                                                              body):
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    records = list(csv.reader(io.StringIO(body.decode())))
    first_class = all(r[0] in ("1", "2") for r in records)
    texts = [" ".join(r[1:]) if first_class else ",".join(r) for r in records]  # as before: each line whole
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv; header=present"), served[0]) == \
        served[1].predict(texts)


@pytest.mark.parametrize("body, texts", [
    (b"label,text\n2,great food\n1,cold soup\n", ["great food", "cold soup"]),
    (b"\n\n,label,text\n0,2,great food\n1,1,cold soup\n", ["", "", "great food", "cold soup"]),  # blank lines first
    (b"review\r\ngreat food\r\ncold soup\r\n", ["great food", "cold soup"]),
    (b"label,text\n", []),  # SingleRecord: the header record is a mini-batch of its own
])
def test_batch_transform_answers_a_csv_files_header_record_with_the_answers_field_names(endpoint, served, monkeypatch,
                                                                                       body, texts):
    """join_source="Input" joins answer i to record i of the mini-batch (and, without it, the output holds one
    answer a line): the first mini-batch of a text/csv; header=present file holds the header, which was skipped
    unanswered, so that mini-batch had one answer fewer than its records (its blank lines before the header too):
    the job failed or every joined answer was one record off. The header record is answered with the answer's field
    names now, in either form; an endpoint's request (not Batch Transform) still gets answers for its rows only."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    answers = served[1].predict(texts) if texts else []
    lead = [a for t, a in zip(texts, answers) if t == ""]
    rows = answers[len(lead):]
    status, _, response = endpoint.invoke(body, "text/csv; header=present", "application/json")
    assert status == 200, response
    assert json.loads(response) == lead + [HEADER_ANSWER] + rows
    status, _, response = endpoint.invoke(body, "text/csv; header=present", "application/jsonlines")
    assert status == 200, response
    assert read_lines(response) == blazingtext_lines(lead, False) + [
        {"label": ["label"], "prob": ["prob"], "class_id": ["class_id"]}] + blazingtext_lines(rows, False)
    assert len(read_lines(response)) == len(body.splitlines())  # one answer a line of the file
    monkeypatch.delenv("SAGEMAKER_BATCH")
    if texts:
        status, _, response = endpoint.invoke(body, "text/csv; header=present", "application/json")
        assert status == 200 and json.loads(response) == rows, response


def test_batch_transform_request_as_the_readme_makes_it(sm, bundle, served, tmp_path):
    """README's Batch Transform example: the CreateTransformJob request the SDK sends, and the model it
    names serving a line of the input file through the toolkit."""
    from fasttext_lib.sagemaker_utils import make_model

    model_data = pack_model(bundle, f"s3://{sm.bucket}/ft/packed/model.tar.gz")
    model = make_model(model_data, sm.bucket, "ft", role=ROLE, session=sm.session)
    transformer = model.transformer(instance_count=1, instance_type="ml.m5.xlarge", strategy="MultiRecord",
                                    max_payload=6, assemble_with="Line", accept="application/jsonlines",
                                    output_path=f"s3://{sm.bucket}/ft/transform")
    s3_put(f"s3://{sm.bucket}/ft/reviews/reviews.jsonl", b'{"source": "great food"}\n{"source": "cold and slow"}\n')
    transformer.transform(f"s3://{sm.bucket}/ft/reviews/reviews.jsonl", content_type="application/jsonlines",
                          split_type="Line", wait=False, logs=False)
    job = sm.request("CreateTransformJob")
    assert job["BatchStrategy"] == "MultiRecord" and job["MaxPayloadInMB"] == 6
    assert job["TransformInput"]["ContentType"] == "application/jsonlines"
    assert job["TransformInput"]["SplitType"] == "Line"
    assert job["TransformOutput"] == {"S3OutputPath": f"s3://{sm.bucket}/ft/transform",
                                      "Accept": "application/jsonlines", "AssembleWith": "Line"}
    created = sm.request("CreateModel")
    assert job["ModelName"] == created["ModelName"]
    container = created["PrimaryContainer"]
    assert container["Environment"]["SAGEMAKER_PROGRAM"] == "entry_point.py"
    # that model, as the job's container runs it: a mini-batch of the file's lines in, one line out per line
    env = {"SAGEMAKER_BATCH": "true", "SAGEMAKER_MAX_PAYLOAD_IN_MB": str(job["MaxPayloadInMB"])}
    result = serve_archive(s3_get(container["ModelDataUrl"]), tmp_path, [
        {"body": s3_get(f"s3://{sm.bucket}/ft/reviews/reviews.jsonl"), "content_type": job["TransformInput"]["ContentType"],
         "accept": job["TransformOutput"]["Accept"]}], program="entry_point.py", env=env)
    answer = result["answers"][0]
    assert (answer["status"], answer["content_type"]) == (200, "application/jsonlines"), answer["body"]
    assert read_lines(answer["body"]) == blazingtext_lines(served[1].predict(["great food", "cold and slow"]), False)
    transformer.delete_model()
    assert sm.request("DeleteModel")["ModelName"] == created["ModelName"]


def test_a_failed_deploy_leaves_nothing_behind(sm, bundle, monkeypatch):
    """Notebook 04's clean-up: an endpoint that never comes into service (deploy raises, no predictor
    to delete it with) still has its endpoint, endpoint config and model deleted."""
    from botocore.exceptions import ClientError

    from fasttext_lib.sagemaker_utils import delete_deployment, make_model

    model = make_model(pack_model(bundle, f"s3://{sm.bucket}/ft/packed/model.tar.gz"), sm.bucket, "ft", role=ROLE,
                       session=sm.session)

    def never_in_service(*args, **kwargs):
        raise RuntimeError("Error hosting endpoint: Failed. Reason: the primary container did not pass the ping health check")

    monkeypatch.setattr(sm.session, "wait_for_endpoint", never_in_service)
    with pytest.raises(RuntimeError, match="ping health check"):
        model.deploy(initial_instance_count=1, instance_type="ml.m5.xlarge", endpoint_name="ft-failed")
    client = sm.session.sagemaker_client
    assert client.describe_endpoint(EndpointName="ft-failed")  # what a plain try/finally around predict() left
    assert delete_deployment(model) == [("endpoint", "ft-failed"), ("endpoint config", "ft-failed"),
                                        ("model", model.name)]
    for describe, name in ((client.describe_endpoint, {"EndpointName": "ft-failed"}),
                           (client.describe_endpoint_config, {"EndpointConfigName": "ft-failed"}),
                           (client.describe_model, {"ModelName": model.name})):
        with pytest.raises(ClientError):
            describe(**name)
    assert delete_deployment(model) == []  # again: nothing left, no error
    assert delete_deployment(make_model(f"s3://{sm.bucket}/ft/packed/model.tar.gz", sm.bucket, "ft", role=ROLE,
                                        session=sm.session)) == []  # never deployed


def test_a_job_model_repacks_with_code(sm, bundle, served, tmp_path):
    """A training job's model.tar.gz holds only the bundle; the SDK's repack adds code/."""
    from fasttext_lib.sagemaker_utils import make_model

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in bundle_names(bundle):
            tar.add(os.path.join(bundle, name), arcname=name)
    job_model = f"s3://{sm.bucket}/ft/jobs/ft-job-2/output/model.tar.gz"
    s3_put(job_model, buf.getvalue())
    container = make_model(job_model, sm.bucket, "ft", role=ROLE, session=sm.session).prepare_container_def(
        instance_type="ml.m5.xlarge")
    assert serve_from_archive(s3_get(container["ModelDataUrl"]), tmp_path) == served[1].predict(REVIEWS)  # inference.py


def test_make_model_sets_the_model_servers_request_cap_above_the_endpoints_own(sm):
    """The inference toolkit gives MMS (the model server before the hosting functions) a request cap only when
    MaxPayloadInMB is not 0, so a Batch Transform of whole files (max_payload=0, read as 100 MiB by serve_limits) had
    MMS's default 6,553,500 bytes: a larger file was MMS's 413 with an empty body, which failed the job before the
    hosting functions saw it. (MMS 1.1 takes MMS_MAX_REQUEST_SIZE over its config file: a 7 MB body is answered.)"""
    from fasttext_lib.sagemaker_utils import make_model
    from fasttext_lib.serve_limits import UNLIMITED_PAYLOAD_BYTES

    def env(**kwargs):
        return make_model(f"s3://{sm.bucket}/ft/packed/model.tar.gz", sm.bucket, "ft", role=ROLE, session=sm.session,
                          **kwargs).env

    assert env() == {"MMS_MAX_REQUEST_SIZE": str(2 * UNLIMITED_PAYLOAD_BYTES)}
    assert env(env={"FASTTEXT_MAX_REQUEST_BYTES": str(300 << 20), "OMP_NUM_THREADS": "2"}) == {
        "FASTTEXT_MAX_REQUEST_BYTES": str(300 << 20), "OMP_NUM_THREADS": "2", "MMS_MAX_REQUEST_SIZE": str(600 << 20)}
    assert env(env={"MMS_MAX_REQUEST_SIZE": "1000"}) == {"MMS_MAX_REQUEST_SIZE": "1000"}  # the user's, as given
    assert env(env={"FASTTEXT_MAX_REQUEST_BYTES": str(2 << 30)})["MMS_MAX_REQUEST_SIZE"] == str(2 ** 31 - 1)
    with pytest.raises(ValueError, match="^FASTTEXT_MAX_REQUEST_BYTES must be a positive whole number of bytes"):
        env(env={"FASTTEXT_MAX_REQUEST_BYTES": "6MB"})  # (the endpoint would stop at start-up)


# --------------------------------------------------------------------------------------------
# notebook cells (the committed notebooks; off by default)
# --------------------------------------------------------------------------------------------
def test_notebook_cells_are_guarded_and_thin():
    import nbformat

    sources = {}
    for name in ("02_train_gpu.ipynb", "04_inference.ipynb"):
        nb = nbformat.read(os.path.join(ROOT, "notebooks", name), as_version=4)
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        for source in code:
            tree = ast.parse(source)
            assert not any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) for n in ast.walk(tree)), name
        params = [c.source for c in nb.cells if "parameters" in c.metadata.get("tags", [])][0]
        sources[name] = (params, "\n".join(code))
    params, code = sources["02_train_gpu.ipynb"]
    assert "use_training_job = False" in params and "tune = False" in params and "role = None" in params
    assert "make_estimator(" in code and "make_tuner(" in code and "fetch_job_model(" in code
    params, code = sources["04_inference.ipynb"]
    assert "deploy = False" in params and "pack_model(" in code and "make_model(" in code
    assert "delete_deployment(model)" in code and "finally:" in code


# --------------------------------------------------------------------------------------------
# the model dir of a training job
# --------------------------------------------------------------------------------------------
def _tiny_trained(seed):
    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train

    return train(make_splits(300, 0, seed=seed)[0], None, TrainConfig(epochs=1, emsize=8, progress=False, ctx="cpu", seed=seed))


def test_save_model_never_leaves_a_new_model_under_an_old_config(tmp_path, monkeypatch):
    """SM_MODEL_DIR is filled in place; a save that fails before its config.json is in place leaves
    the previous model whole (never a new model's files under the old config), and a full save
    replaces it."""
    import numpy as np

    from fasttext_lib.scoring import predict_bags

    def served(trained):
        return predict_bags(trained.model, trained.featurizer, trained.featurizer.transform(texts), trained.ctx[0])

    texts = ["good food", "cold and slow"]
    model_dir = tmp_path / "model"
    old, new = _tiny_trained(1), _tiny_trained(2)
    sm_train.save_model(old, str(model_dir))
    old_listing = sorted(os.listdir(model_dir))
    replace = os.replace

    def fail_at_the_commit(src, dst):
        if os.path.basename(dst) == "config.json":
            raise OSError(28, "No space left on device")
        return replace(src, dst)

    monkeypatch.setattr(os, "replace", fail_at_the_commit)
    with pytest.raises(Exception):
        sm_train.save_model(new, str(model_dir))
    monkeypatch.setattr(os, "replace", replace)
    assert sorted(os.listdir(model_dir)) == old_listing
    np.testing.assert_allclose(Predictor.load(str(model_dir)).predict_proba(texts), served(old), rtol=1e-6)
    sm_train.save_model(new, str(model_dir))
    np.testing.assert_allclose(Predictor.load(str(model_dir)).predict_proba(texts), served(new), rtol=1e-6)
    assert not np.allclose(served(old), served(new))


@pytest.mark.parametrize("body, content_type", [
    ('\ufeff{"source": "great food"}\n{"source": "awful"}\n'.encode(), "application/jsonlines"),
    ("\ufeffgreat food\nawful\n".encode(), "text/plain"),
    ("\ufeffgreat food\nawful\n".encode(), "text/csv; charset=utf-8"),
    ('\ufeff["great food", "awful"]'.encode(), "application/json; charset=utf-8"),
])
def test_a_leading_bom_is_no_part_of_the_first_review(body, content_type):
    """A file saved with a UTF-8 BOM, sent whole or as Batch Transform's first mini-batch: the first JSON line
    was a 400 ("Unexpected UTF-8 BOM"), stopping the job; in text/plain the first word became an unknown one."""
    assert list(sm_serve.input_fn(body, content_type)) == ["great food", "awful"]


@pytest.mark.parametrize("lines, content_type", [
    (['{"source": "great food"}', '{"source": "cold soup, awful"}', '{"source": "would go again"}'],
     "application/jsonlines"),
    (['"2","great food"', '"1","cold soup, awful"', '"2","would go again"', '"1","never again"'], "text/csv"),
], ids=["jsonlines", "labeled-csv"])
def test_a_bom_starting_a_later_line_is_dropped_as_predict_drops_it(served, bundle, tmp_path, monkeypatch, lines,
                                                                    content_type):
    """Windows files joined with cat: a BOM starts a line inside the body (in Batch Transform, anywhere in a
    mini-batch). predict drops it, as the file's own; the endpoint dropped only the body's first, so that JSON line was
    a 400 ("Unexpected UTF-8 BOM") that stopped the job, and a CSV row's quoted class was read as a word of its review
    (the normalizer drops it from a review's words). The same answers now as for the body without it, and as predict
    gives for the file."""
    from conftest import cli_in_process

    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    plain = ("\n".join(lines) + "\n").encode()
    joined = ("\ufeff" + "\n\ufeff".join(lines) + "\n").encode()
    (tmp_path / "joined").write_bytes(joined)
    got = cli_in_process("predict", "--model", bundle, "--input", tmp_path / "joined")
    assert got.returncode == 0, got.stderr
    answers = sm_serve.predict_fn(sm_serve.input_fn(joined, content_type), served[0])
    assert answers == sm_serve.predict_fn(sm_serve.input_fn(plain, content_type), served[0])
    first_classes = [answer[0] if isinstance(answer, list) else answer for answer in answers]  # (JSON Lines: ranked)
    assert first_classes == [json.loads(line) for line in got.stdout.splitlines()]


def test_training_job_refuses_a_channel_names_file_numbered_unlike_its_data(source_dir, tmp_path):
    """A channel with classes 0 and 1 and a Zhang classes.txt (line 1 names class 1): the job stored
    1=bad and the endpoint then called class 1 'bad', silently. The remedy names the job's hyperparameter, as the
    test channel's refusal does (read_and_train.read_splits): it said the command line's --label-names."""
    channels = {"train": {"a.train": _write(b"__label__0 bad food\n__label__1 good food\n" * 20),
                          "classes.txt": _write(b"bad\ngood\n")}}
    env = make_container(tmp_path, channels)
    r = job_in_process(source_dir, env, args_for(epochs=1, batch_size=16))
    said = (tmp_path / "output" / "failure").read_text()
    assert r.returncode == 2 and "numbering is not the data's" in said
    assert said.endswith("name the classes one by one: label_names 0=bad,1=good") and "--label-names" not in said, said
    assert not (tmp_path / "model" / "config.json").exists()


@pytest.mark.parametrize("body, texts", [
    # pandas' df[["review"]].to_csv(index=False): a header naming one column
    (b"review\nThe pasta was great, and the staff were friendly!\nNot good. Cold food and a long wait.\n",
     ["The pasta was great, and the staff were friendly!", "Not good. Cold food and a long wait."]),
    # a labeled file with its header: the class column is not scored, wherever the header puts it
    (b'label,text\n2,"The pasta was great, and the staff were friendly!"\n1,Not good. Cold food and a long wait.\n',
     ["The pasta was great, and the staff were friendly!", "Not good. Cold food and a long wait."]),
    (b'text,sentiment\n"The pasta was great, and the staff were friendly!",positive\nNot good. Cold food.,negative\n',
     ["The pasta was great, and the staff were friendly!", "Not good. Cold food."]),
    (b'\n"Class Index","Title","Description"\r\n"2","Great pasta","friendly staff"\r\n"1","Cold","a long wait"\r\n',
     ["Great pasta friendly staff", "Cold a long wait"]),
])
def test_a_csv_request_with_header_present_answers_its_records_only(endpoint, served, body, texts):
    """text/csv; header=present (RFC 4180): the header was answered as a review, every answer after it one off,
    and a labeled file's classes were scored as words of its reviews."""
    status, _, response = endpoint.invoke(body, "text/csv; header=present", "application/json")
    assert status == 200, response
    assert json.loads(response) == served[1].predict(texts)


@pytest.mark.parametrize("body, texts", [
    # df.to_csv() without index=False: pandas' index column first, here after a filter (0, 2, 5); the header names
    # the class column first only without it (sentiment,tweet): the records were answered whole, numbers and all
    (b",sentiment,tweet\n0,positive,The pasta was great\n2,negative,Cold food and a long wait\n5,positive,Nice\n",
     ["The pasta was great", "Cold food and a long wait", "Nice"]),
    (b"Unnamed: 0,sentiment,tweet\r\n3,positive,The pasta was great\r\n4,negative,Cold food\r\n",
     ["The pasta was great", "Cold food"]),
    (b"\n,label,text\n0,2,The pasta was great\n1,1,\"Cold food, a long wait\"\n", ["The pasta was great", "Cold food, a long wait"]),
    # Series.to_csv() writes the same empty name over the series' index: here the classes, which repeat
    (b",text\n2,The pasta was great\n2,Friendly staff\n1,Cold food\n", ["The pasta was great", "Friendly staff", "Cold food"]),
    # shuffled before it was saved (df.sample(frac=1).to_csv()): the row numbers in no order, all different (20 or
    # more rows); the first column was answered as the class, the row numbers as its reviews' first words
    (b",sentiment,tweet\n" + b"".join(b"%d,positive,review %d\n" % ((37 * i) % 41, i) for i in range(25)),
     ["review %d" % i for i in range(25)]),
    (b",text\n" + b"".join(b"%d,review %d\n" % ((37 * i) % 41, i) for i in range(25)), ["review %d" % i for i in range(25)]),
])
def test_a_csv_request_with_pandas_index_column_first_is_answered_without_it(endpoint, served, body, texts):
    status, _, response = endpoint.invoke(body, "text/csv; header=present", "application/json")
    assert status == 200, response
    assert json.loads(response) == served[1].predict(texts)


@pytest.mark.parametrize("shape", ["index", "index=False", "crlf, text first", "blank line first"])
def test_a_tsv_sent_as_text_csv_is_read_tab_separated_as_predict_reads_it(endpoint, served, monkeypatch, shape):
    """df.to_csv(sep="\\t") bytes sent as text/csv: predict reads such a file as TSV (its first line a header row), the
    endpoint read each line whole, the class and pandas' row number scored as words of the review, and a review's
    comma split it. It is read tab-separated now: each record's text columns, the class not scored. Declared
    (header=present) or not, an endpoint answers the rows only (one answer a row, as predict answers the file); Batch
    Transform answers the header record too, with the answer's field names (one answer a line)."""
    import pandas as pd

    texts = ["great food, really", "cold soup", 'he said "fine"', "nice\tstaff"]
    frame = pd.DataFrame({"label": [2, 1, 2, 2], "text": texts})
    if shape.startswith("crlf"):
        frame = frame[["text", "label"]]
    body = frame.to_csv(sep="\t", index=shape == "index", lineterminator="\r\n" if shape.startswith("crlf") else "\n")
    body = ("\n" if shape == "blank line first" else "") + body
    answers = served[1].predict(texts)
    status, _, response = endpoint.invoke(body.encode(), "text/csv; header=present", "application/json")
    assert status == 200 and json.loads(response) == answers, response
    status, _, response = endpoint.invoke(body.encode(), "text/csv", "application/json")
    assert status == 200 and json.loads(response) == answers, response
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    lead = served[1].predict([""]) if shape == "blank line first" else []
    for content_type in ("text/csv", "text/csv; header=present"):
        status, _, response = endpoint.invoke(body.encode(), content_type, "application/json")
        assert status == 200 and json.loads(response) == lead + [HEADER_ANSWER] + answers, response
        status, _, response = endpoint.invoke(body.encode(), content_type, "application/jsonlines")
        assert status == 200 and len(read_lines(response)) == len(body.encode().splitlines()), response


@pytest.mark.parametrize("shape", ["df.to_csv()", "index=False", "df[['review']]", "text,label"])
def test_a_csv_header_row_sent_without_header_present_is_read_as_predict_reads_it(endpoint, served, monkeypatch, shape):
    """pandas' to_csv() writes a header row (the SDK's CSVSerializer never does). Sent as plain text/csv, it was
    answered as a review, and under label,text every row's class (and pandas' row number) scored as words of its
    review, where predict recognizes the header and reads each row's text columns. The header is recognized as
    predict recognizes it now, each record read as the header names its columns. An endpoint answers the rows only,
    one answer a row, as predict answers the file (the header was answered with the answer's field names, one answer
    more than the rows sent); Batch Transform answers the header record with the field names, one answer a line, so
    that JoinSource=Input joins each answer to its line and a mini-batch after it, which holds no header, stays in
    step."""
    import pandas as pd

    texts = ["great food, friendly staff", "cold soup", "would go again", "rude waiter"]
    frame = pd.DataFrame({"label": [2, 1, 2, 1], "text": texts})
    if shape == "df[['review']]":
        frame = frame[["text"]].rename(columns={"text": "review"})
    if shape == "text,label":
        frame = frame[["text", "label"]]
    body = frame.to_csv(index=shape == "df.to_csv()").encode()
    status, _, response = endpoint.invoke(body, "text/csv", "application/json")
    assert status == 200 and json.loads(response) == served[1].predict(texts), response
    status, _, response = endpoint.invoke(body, "text/csv", "application/jsonlines")
    assert status == 200 and read_lines(response) == blazingtext_lines(served[1].predict(texts), False), response
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    status, _, response = endpoint.invoke(body, "text/csv", "application/json")
    assert status == 200 and json.loads(response) == [HEADER_ANSWER] + served[1].predict(texts), response
    status, _, response = endpoint.invoke(body, "text/csv", "application/jsonlines")
    assert status == 200 and len(read_lines(response)) == len(body.splitlines()), response


@pytest.mark.parametrize("body", [
    b"label,text\n2,great food\n1,cold soup\n2,would go again\n",
    b"text\ngreat food\ncold soup\n",
    b"review\r\ngreat food\r\ncold soup\r\n",
    b",label,text\n0,2,great food\n1,1,\"cold soup, really\"\n",
    b"label\ttext\n2\tgreat food\n1\tcold soup\n",
    b"\xef\xbb\xbfsentence\tlabel\r\ngreat food, really\t1\r\ncold soup\t0\r\n",  # a TSV (GLUE's), as Excel saves it
    b"great food\tloved it\ncold soup\n",  # a review holding a tab: no header row, not split
    b"great food\ncold soup\n",  # no header: every line a review
])
def test_a_text_csv_body_gets_one_answer_a_data_row_as_predict_answers_the_file(endpoint, served, bundle, tmp_path,
                                                                                 body):
    """Plain text/csv whose first row is a header (label,text; text; review; a TSV's): the endpoint answered the header
    too, with the answer's field names, one answer more than the rows. It is recognized as predict recognizes it in a
    file and not answered: the endpoint's answers are predict's on the same bytes, one a data row."""
    from conftest import cli_in_process

    (tmp_path / "body.csv").write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", tmp_path / "body.csv")
    assert got.returncode == 0, got.stderr
    status, _, response = endpoint.invoke(body, "text/csv", "application/json")
    assert status == 200 and json.loads(response) == [json.loads(line) for line in got.stdout.splitlines()], response


_ONE_NAME_TEXTS = ["great food", "cold soup", "would go again", "never again", "nice staff", "rude waiter"]


def _rows_of_classes(count, names, quoted=False):
    """``count`` labeled rows, class first (``1``/``2``, or the model's names for them), unquoted, or with ``quoted``
    every field quoted (as Zhang et al. write them: ``"2","great food"``)."""
    rows = [(NAMES[str(1 + i % 2)] if names else str(1 + i % 2), f"{_ONE_NAME_TEXTS[i % len(_ONE_NAME_TEXTS)]} {i}")
            for i in range(count)]
    return [",".join(f'"{field}"' if quoted else field for field in row) for row in rows]


@pytest.mark.parametrize("header", ["text", "review", "Text"])
@pytest.mark.parametrize("names", [False, True], ids=["ids", "names"])
@pytest.mark.parametrize("quoted", [False, True], ids=["unquoted", "quoted"])
@pytest.mark.parametrize("count", [1, 3, 4, 60])
def test_a_header_of_one_name_over_labeled_rows_is_read_as_predict_reads_it(served, bundle, tmp_path, monkeypatch,
                                                                            header, names, quoted, count):
    """A header naming one column above rows of two whose first is one of the model's classes (``text`` over
    ``1,bad``): a labeled file whose header names its text column only (typed above the rows, or a headerless file
    given one); pandas writes no such file (it quotes a text's commas). predict skipped the header and answered each
    row whole, the endpoint's text/csv answered the header as a review too (one answer more than the rows), and with
    header=present read the rows as labeled: three readings of the same bytes. Now the header is a header to both,
    and each row is read as the same rows are without it: labeled rows (enough of them to tell) for their text, the
    class not scored; fewer than 4 unquoted rows whole, as reviews that start with a class's name; quoted classes
    (``"2","great food"``), a sign on their own, labeled from one row on (under 4 such rows, predict read them whole
    and the endpoint's header=present labeled). Batch Transform answers the header with the field names."""
    from conftest import cli_in_process

    rows = _rows_of_classes(count, names, quoted)
    headerless, body = tmp_path / "rows.csv", tmp_path / "body.csv"
    headerless.write_text("".join(row + "\n" for row in rows))
    body.write_text(header + "\n" + headerless.read_text())
    alone = cli_in_process("predict", "--model", bundle, "--input", headerless)
    got = cli_in_process("predict", "--model", bundle, "--input", body)
    assert got.returncode == alone.returncode == 0, got.stderr + alone.stderr
    answers = [json.loads(line) for line in got.stdout.splitlines()]
    assert answers == [json.loads(line) for line in alone.stdout.splitlines()] and len(answers) == count
    for content_type in ("text/csv", "text/csv; header=present"):
        assert sm_serve.predict_fn(sm_serve.input_fn(body.read_bytes(), content_type), served[0]) == answers, \
            content_type
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    batch = sm_serve.predict_fn(sm_serve.input_fn(body.read_bytes(), "text/csv"), served[0])
    assert isinstance(batch[0], sm_serve.FieldNames) and batch[1:] == answers


@pytest.mark.parametrize("body", [b"review\ngreat, really great\nbad, very bad\n",
                                  b"Review\ngreat phone, but slow\ncold soup\n"])
def test_a_header_of_one_name_over_reviews_with_unquoted_commas_is_a_header_to_predict_and_the_endpoint(
        served, bundle, tmp_path, monkeypatch, body):
    """Reviews written by hand under a header ``review``, their commas unquoted: predict skips the header and answers
    each line after it whole, commas kept (as the endpoint's header=present does); the endpoint's text/csv answered
    the header as a review too, one answer more for the same bytes. It is a header to both (and gets the field names
    in Batch Transform)."""
    from conftest import cli_in_process

    (tmp_path / "reviews.csv").write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", tmp_path / "reviews.csv")
    assert got.returncode == 0, got.stderr
    answers = [json.loads(line) for line in got.stdout.splitlines()]
    assert answers == served[1].predict(body.decode().splitlines()[1:])
    for content_type in ("text/csv", "text/csv; header=present"):
        assert sm_serve.predict_fn(sm_serve.input_fn(body, content_type), served[0]) == answers, content_type
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    batch = sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0])
    assert isinstance(batch[0], sm_serve.FieldNames) and batch[1:] == answers


@pytest.mark.parametrize("body", [
    b'text\n"2","great\nfood"\n',  # a labeled row under a one-name header, its quoted text over two lines
    b'text\n"2","great\nfood"\n"1","cold soup"\n',
    b'text\n2,"great\nfood"\n',
    b'review\n"great\nfood"\nbad, very bad\n',  # reviews under it, one over lines, one with an unquoted comma
])
def test_a_header_predict_recognizes_over_records_of_other_widths_one_over_lines_is_read_as_predict_reads_it(
        served, bundle, tmp_path, monkeypatch, body):
    """A header of one name over records of two fields (or of different widths), one of them quoted over two lines:
    the endpoint's text/csv took the records' different widths for the SDK's reviews one a line and answered every
    line, the header and both halves of the quoted field, where predict reads the header as one and answers each
    record once. A header predict recognizes is a CSV writer's, whatever the widths under it: read as CSV. In Batch
    Transform the header is answered with the field names and each record once (the log says a record went on over
    lines)."""
    from conftest import cli_in_process

    (tmp_path / "body.csv").write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", tmp_path / "body.csv")
    assert got.returncode == 0, got.stderr
    answers = [json.loads(line) for line in got.stdout.splitlines()]
    for content_type in ("text/csv", "text/csv; header=present"):
        assert sm_serve.predict_fn(sm_serve.input_fn(body, content_type), served[0]) == answers, content_type
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    for content_type in ("text/csv", "text/csv; header=present"):
        batch = sm_serve.predict_fn(sm_serve.input_fn(body, content_type), served[0])
        assert isinstance(batch[0], sm_serve.FieldNames) and batch[1:] == answers, content_type


def test_a_header_over_records_of_other_widths_then_an_unclosed_quote_is_read_a_line_at_a_time_as_predict_reads_it(
        served, bundle, tmp_path):
    """The same body with a quotation mark never closed after the record over lines is no CSV: predict reads the file
    a line at a time (its note says so), and the endpoint's text/csv answers it so too, not with a 400."""
    from conftest import cli_in_process

    body = b'text\n"2","great\nfood"\n"1","bad\n'
    (tmp_path / "body.csv").write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", tmp_path / "body.csv")
    assert got.returncode == 0 and "read a line at a time" in got.stderr, got.stderr
    answers = [json.loads(line) for line in got.stdout.splitlines()]
    assert len(answers) == 4 and sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == answers


_ZHANG_ROWS = b'"2","great food"\n"1","cold soup"\n"2","would go again"\n"1","never again"\n'


@pytest.mark.parametrize("body, records", [
    (b"label,text\n2,great food\n\n1,cold soup\n2,would go again\n", 4),
    (b"label,text\n2,great food\n1,cold soup\n2,would go again\n\n\n", 5),  # blank lines at the end
    (b"\n\nlabel,text\n2,great food\n\n1,cold soup\n2,would go again\n", 4),  # those above the header: none
    (b"label,text\n2,great food\n,\n1,cold soup\n2,would go again\n", 4),  # a row of empty fields (Excel's, pandas')
    (b"text\ngreat food\n\ncold soup\n\nwould go again\n", 5),
    (b"title,body\ngreat,food\n\ncold,soup\nwould,go again\n", 4),
    (b",label,text\n0,2,great food\n\n1,1,cold soup\n2,2,would go again\n", 4),  # pandas' index
    (b"label\ttext\n2\tgreat food\n\n1\tcold soup\n2\twould go again\n", 4),
    (b"label,text\r\n2,great food\r\n\r\n1,cold soup\r\n2,would go again\r\n", 4),  # Excel's line ends
    (b"\n" + _ZHANG_ROWS.replace(b"\n", b"\n\n", 1) + b"\n", 7),  # no header: every line before the first row too
    (b"great food\n\ncold soup\n\n", 4),  # one review a line: answered alike already
])
def test_a_blank_record_gets_its_answer_from_predict_as_from_the_endpoint(served, bundle, tmp_path, body, records):
    """A blank line (or a row of empty fields) inside a table is a record the endpoint's text/csv answers, as an empty
    review, in its place (Batch Transform needs one answer a record). predict left it out of a table (not of plain
    text), so the same file had one answer less per such line, and answers joined back to the rows by position were
    off after it. predict answers it too: the same answers, in the same places, for the same bytes."""
    from conftest import cli_in_process

    (tmp_path / "body.csv").write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", tmp_path / "body.csv")
    assert got.returncode == 0, got.stderr
    answers = [json.loads(line) for line in got.stdout.splitlines()]
    served_answers = sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0])
    assert len(answers) == records and answers == served_answers


_LABELED_ROWS = b"2,great food\n1,cold soup\n2,would go again\n1,never again\n"


@pytest.mark.parametrize("body, content_type, records", [
    # blank records inside a table (today's cases: test_a_blank_record_gets_its_answer_from_predict_as_from_the_endpoint)
    (b"label,text\n2,great food\n\n1,cold soup\n2,would go again\n", "text/csv", 4),
    (b"label,text\n2,great food\n1,cold soup\n2,would go again\n\n\n", "text/csv", 5),
    (b"\n\nlabel,text\n2,great food\n\n1,cold soup\n2,would go again\n", "text/csv", 4),
    (b"label,text\n2,great food\n,\n1,cold soup\n2,would go again\n", "text/csv", 4),
    (b"text\ngreat food\n\ncold soup\n\nwould go again\n", "text/csv", 5),
    (b"\n" + _ZHANG_ROWS.replace(b"\n", b"\n\n", 1) + b"\n", "text/csv", 7),
    # a line of spaces inside a table: a blank record, as an empty line is
    (b"label,text\n2,great food\n   \n1,cold soup\n2,would go again\n", "text/csv", 4),
    (b"label,text\n2,great food\n1,cold soup\n2,would go again\n  \n", "text/csv", 4),
    (b"   \nlabel,text\n2,great food\n1,cold soup\n2,would go again\n", "text/csv", 3),
    (_ZHANG_ROWS.replace(b"\n", b"\n   \n", 1), "text/csv", 5),
    (b",label,text\n0,2,great food\n \n1,1,cold soup\n2,2,would go again\n", "text/csv", 4),
    (b"label\ttext\n2\tgreat food\n   \n1\tcold soup\n2\twould go again\n", "text/csv", 4),
    (b"title,body\ngreat,food\n   \ncold,soup\nwould,go again\n", "text/csv", 4),
    (b"text\ngreat food\n   \ncold soup\nwould go again\n", "text/csv", 4),
    # JSON Lines: a blank line between objects (or before the first) is a record, answered as an empty review; those
    # after the last are none
    (b'{"text": "great food"}\n\n{"text": "cold soup"}\n', "application/jsonlines", 3),
    (b'{"text": "great food"}\n   \n{"text": "cold soup"}\n\n\n', "application/jsonlines", 3),
    (b'\n{"source": "great food"}\n{"source": "cold soup"}\n', "application/jsonlines", 3),
    # a null line (a missing review, as pandas writes None; NaN as Python's json does): an empty review to both
    (b'{"text": "great food"}\nnull\n{"text": "cold soup"}\nNaN\n', "application/jsonlines", 4),
    # Excel's separator line first: a blank line to both (a 400 at the endpoint, "not valid JSON")
    (b'sep=,\n{"text": "great food"}\n{"text": "cold soup"}\n', "application/jsonlines", 3),
    # files joined with their headers (cat a.csv b.csv): the repeated header is no record
    (b"label,text\n2,great food\n1,cold soup\nlabel,text\n2,would go again\n1,never again\n", "text/csv", 4),
    (b"label,text\n2,great food\nlabel,text\n1,cold soup\n", "text/csv", 2),
    (b"label,text\n2,great food\n\nLabel,Text\n1,cold soup\n2,would go again\n", "text/csv", 4),
    (b"title,body\ngreat,food\ntitle,body\ncold,soup\n", "text/csv", 2),
    (b"label\ttext\n2\tgreat food\nlabel\ttext\n1\tcold soup\n", "text/csv", 2),
    # a header typed with a space after its comma, one name training does not know: a header, over labeled rows
    (b"Sentiment, Review Body\n" + _LABELED_ROWS, "text/csv", 4),
    (b"Sentiment, Review Body\n" + _LABELED_ROWS.replace(b"\n", b"\n\n", 1), "text/csv", 5),
    # ... repeated where files were joined (in other capitals and spaces, after a blank line, CRLF, a BOM): no record
    (b"Sentiment, Review Body\n" + _LABELED_ROWS + b"Sentiment, Review Body\n" + _LABELED_ROWS, "text/csv", 8),
    (b"Sentiment, Review Body\n" + _LABELED_ROWS + b"\nsentiment,  review body\n" + _LABELED_ROWS, "text/csv", 9),
    ((b"\xef\xbb\xbfSentiment, Review Body\n" + _LABELED_ROWS + b"\xef\xbb\xbfSentiment, Review Body\n"
      + _LABELED_ROWS).replace(b"\n", b"\r\n"), "text/csv", 8),
    # ... not a review of two phrases over reviews (a CSVSerializer's): every line a review, as it was
    (b"Overall, highly recommended.\nGreat phone, overall\nCold soup, sadly\nWould go again, yes\n", "text/csv", 4),
    (b"great food\n\ncold soup\n   \n", "text/csv", 4),
])
def test_a_tricky_file_gets_the_same_answers_in_the_same_places_from_predict_and_the_endpoint(
        served, bundle, tmp_path, body, content_type, records):
    """One answer per record, in its place, from both routes, for the same bytes: a user compares or joins predict's
    answers with the endpoint's (or Batch Transform's) by position. Each case here disagreed: a line of spaces in a
    table was a 400 at the endpoint (a whole Batch Transform job failed) and an empty review to predict; a blank JSON
    line was a 400 at the endpoint and skipped by predict; a header repeated where joined files meet was skipped by
    predict and answered by the endpoint (its header too, every line whole); "Sentiment, Review Body" was a header
    to training, a review to predict and the endpoint."""
    from conftest import cli_in_process

    suffix = ".jsonl" if "jsonlines" in content_type else ".csv"
    (tmp_path / ("body" + suffix)).write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", tmp_path / ("body" + suffix))
    assert got.returncode == 0, got.stderr
    answers = [json.loads(line) for line in got.stdout.splitlines()]
    served_answers = [a[0] if isinstance(a, list) else a
                      for a in sm_serve.predict_fn(sm_serve.input_fn(body, content_type), served[0])]
    assert len(answers) == len(served_answers) == records
    for mine, theirs in zip(answers, served_answers):
        assert (mine["label"], mine["class_id"]) == (theirs["label"], theirs["class_id"])
        assert mine["probability"] == pytest.approx(theirs["probability"], abs=1e-6)


@pytest.mark.parametrize("content_type", ["text/csv", "text/csv; header=present"])
def test_a_header_repeated_where_files_were_joined_gets_the_headers_answer_in_batch_transform(served, monkeypatch,
                                                                                             content_type):
    """Batch Transform answers a CSV's header record with the answer's field names, so that every record has its answer
    (the endpoint answers the rows only). A header repeated where joined files meet (cat a.csv b.csv) is no review
    either: it gets the same answer, in its place, and the records around it theirs."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    body = b"label,text\n2,great food\n\nLabel,Text\n1,cold soup\n2,would go again\nlabel,text\n1,never again\n"
    answers = sm_serve.predict_fn(sm_serve.input_fn(body, content_type), served[0])
    expected = served[1].predict(["great food", "", "cold soup", "would go again", "never again"])
    names = [i for i, answer in enumerate(answers) if isinstance(answer, sm_serve.FieldNames)]
    assert names == [0, 3, 6] and [a for a in answers if not isinstance(a, sm_serve.FieldNames)] == expected


def test_a_header_repeated_inside_a_later_mini_batch_of_class_last_rows_leaves_the_rows_read_for_their_text(
        served, monkeypatch):
    """A later Batch Transform mini-batch of a header=present file written text,label (the class last) is read for its
    text columns, as under the first mini-batch's header. A repeat of the header inside it (files joined with cat, cut
    after the first header) holds no header above it to be a repeat of and is answered as a record (docs/SERVING.md),
    but it also made every row of the mini-batch answered whole, its class a word of its review: its "label" is none
    of the model's classes. The repeat no longer decides how the rows around it are read."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    rows = [("good food", "2"), ("awful", "1"), ("nice", "2"), ("cold soup", "1"), ("great staff", "2"), ("rude", "1")]
    lines = [f"{text},{label}" for text, label in rows]
    for repeat in ("text,label", "Text,Label"):
        body = ("\n".join(lines[:3] + [repeat] + lines[3:]) + "\n").encode()
        answers = sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv; header=present"), served[0])
        texts = [text for text, _ in rows]
        assert answers == served[1].predict(texts[:3] + [repeat.split(",")[0]] + texts[3:]), repeat


def test_a_csv_appended_to_with_its_header_every_time_gets_one_answer_a_record_in_batch_transform(served,
                                                                                                  monkeypatch):
    """A file appended to with pandas' ``to_csv(mode="a")`` repeats its header before every row appended (twice in a
    row where an append held no row, last where the last did): each repeat gets the header's answer in its place, the
    rows theirs, one answer a record. (Its answers were put in place one insert at a time, and the repeats found by a
    set made again for each record: quadratic, 22 s for 20,000 rows where predict takes under one.)"""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    texts = ["great food", "cold soup", "would go again", "never again"] * 50
    lines = ["label,text"]
    for i, text in enumerate(texts):
        lines += [f"{2 - i % 2},{text}", "label,text"] + (["label,text"] if i % 7 == 0 else [])
    answers = sm_serve.predict_fn(sm_serve.input_fn(("\n".join(lines) + "\n").encode(), "text/csv"), served[0])
    assert len(answers) == len(lines)
    assert [i for i, a in enumerate(answers) if isinstance(a, sm_serve.FieldNames)] == \
        [i for i, line in enumerate(lines) if line == "label,text"]
    assert [a for a in answers if not isinstance(a, sm_serve.FieldNames)] == served[1].predict(texts)


def test_a_typed_header_over_labeled_rows_gets_the_headers_answer_in_batch_transform(served, monkeypatch):
    """"Sentiment, Review Body" (a space after the comma, a name training does not know) over labeled rows is a header,
    as training reads it: in Batch Transform it gets the header record's answer, the rows their texts' answers."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    body = b"\nSentiment, Review Body\n" + _LABELED_ROWS
    answers = sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0])
    assert isinstance(answers[1], sm_serve.FieldNames)
    assert answers[:1] + answers[2:] == served[1].predict(["", "great food", "cold soup", "would go again", "never again"])


def test_a_typed_header_repeated_where_files_were_joined_gets_the_headers_answer_in_batch_transform(served,
                                                                                                  monkeypatch):
    """"Sentiment, Review Body" over labeled rows is a header, and where joined files repeat it, the repeat is no
    review either (predict skips it, as it skips any header's repeat): it was answered as the review " Review Body".
    In Batch Transform each gets the header record's answer, in its place."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    body = b"Sentiment, Review Body\n" + _LABELED_ROWS + b"\nSentiment, Review Body\n" + _LABELED_ROWS
    answers = sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0])
    names = [i for i, answer in enumerate(answers) if isinstance(answer, sm_serve.FieldNames)]
    texts = ["great food", "cold soup", "would go again", "never again"]
    assert names == [0, 6] and [a for a in answers if not isinstance(a, sm_serve.FieldNames)] == \
        served[1].predict(texts + [""] + texts)


@pytest.mark.parametrize("header, row", [
    ("label, text", "{label}, {text}"),
    ("sentiment, review", "{label},{text}"),
    ("Review , Sentiment", "{text},{label}"),
    ("Review Body, Sentiment", "{text},{label}"),  # a name training does not know, the class last
])
def test_a_header_typed_with_spaces_after_its_commas_is_read_by_predict_and_the_endpoint_as_by_training(
        served, bundle, tmp_path, header, row):
    """label, text (a space after the comma, as a header typed by hand has it): training found its class and text
    columns, but predict and the endpoint's text/csv took the line for prose, as a review "Overall, highly
    recommended." is (a CSV writer puts no space there): the header was answered as a review, and every row whole, its
    class a word of its text. A line whose every name is a column's name training knows is a header, spaces or not."""
    from conftest import cli_in_process

    pairs = [("2", "great food"), ("1", "cold soup"), ("2", "would go again"), ("1", "never again")]
    path = tmp_path / "typed.csv"
    path.write_text(header + "\n" + "".join(row.format(label=label, text=text) + "\n" for label, text in pairs))
    assert [t.strip() for t in read_labeled(str(path)).texts] == [text for _, text in pairs]  # (training: as before)
    expected = served[1].predict([text for _, text in pairs])
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0 and [json.loads(line) for line in got.stdout.splitlines()] == expected, got.stderr
    assert sm_serve.predict_fn(sm_serve.input_fn(path.read_bytes(), "text/csv"), served[0]) == expected


def test_a_typed_header_of_text_columns_over_a_writers_rows_is_read_as_without_its_spaces(served, bundle, tmp_path):
    """"Title, Review Body" (typed, a space after the comma; "Review Body" a name training does not know) is a header
    to training (which refuses it: it names no class column), and "Title,Review Body" is one to predict and the
    endpoint; typed, they answered it as a review, and each row whole. Over rows as a CSV writer writes them (as wide
    as it, no space after a comma) it is read as it is without its spaces."""
    from conftest import cli_in_process

    rows = b"great,food\ncold,soup\nwould,go again\nnever,again\n"
    typed, written = tmp_path / "typed.csv", tmp_path / "written.csv"
    typed.write_bytes(b"Title, Review Body\n" + rows)
    written.write_bytes(b"Title,Review Body\n" + rows)
    with pytest.raises(FastTextError, match=r"typed\.csv:1: the CSV header row \(Title, Review Body\) names no class"):
        read_labeled(str(typed))  # (training: as before)
    answers = {}
    for path in (typed, written):
        got = cli_in_process("predict", "--model", bundle, "--input", path)
        assert got.returncode == 0, got.stderr
        answers[path] = [json.loads(line) for line in got.stdout.splitlines()]
        assert sm_serve.predict_fn(sm_serve.input_fn(path.read_bytes(), "text/csv"), served[0]) == answers[path]
    assert answers[typed] == answers[written] and len(answers[typed]) == 4


@pytest.mark.parametrize("body", [
    # a first review whose first phrase is a class column's name, over rows with the class last (not first)
    b"Overall, highly recommended.\ngreat food,2\ncold soup,1\nwould go again,2\nnever again,1\n",
    # a first review of short phrases, one a text column's name, over reviews with a space after their comma
    b"Summary, great phone\nCold soup, sadly\nWould go again, yes\nNice staff, really\nGood, fine\n",
    # ... over rows whose last field is no class of the model's
    b"Great phone, overall\ngreat food,yes\ncold soup,no\nwould go again,yes\nnever again,no\n",
])
def test_a_first_review_of_short_phrases_stays_a_review_to_predict_and_the_endpoint(served, bundle, tmp_path, body):
    """A typed header is read as one only where the rows below leave no doubt: these first lines are reviews, and
    every line is answered whole by both routes."""
    from conftest import cli_in_process

    expected = served[1].predict(body.decode().splitlines())
    (tmp_path / "reviews.csv").write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", tmp_path / "reviews.csv")
    assert got.returncode == 0 and [json.loads(line) for line in got.stdout.splitlines()] == expected, got.stderr
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == expected


CLASS_LAST_PAIRS = [("great food", "2"), ("cold soup", "1"), ("would go again", "2"), ("never again", "1"),
                    ("the staff, friendly", "2")]


@pytest.mark.parametrize("header, row, blank", [
    ("", '{text},{label}', False),  # df[["text", "label"]].to_csv(header=False, index=False)
    ("", '"{text}","{name}"', False),  # quoted, the classes by their names (the bundle's mapping)
    ("", '{text},{label}', True),  # a blank line among them: answered as an empty review in its place
    ("feedback,verdict\n", '{text},{name}', False),  # a header of names training does not know
    ("subject,feedback,verdict\n", 'Food,{text},{label}', False),  # ... of three columns
    ("", '{text}\t{label}', False),  # tab-separated (read as a TSV is, with or without a header row)
    ("", '{text}\t{name}', True),
    ("", '{label}\t{text}', False),  # ... the class first, as training reads a labeled TSV
])
def test_rows_with_the_class_last_are_answered_for_their_texts_by_predict_and_the_endpoint(
        served, bundle, tmp_path, monkeypatch, header, row, blank):
    """A table whose class is its LAST column, one of the model's classes (or their names) in every row: predict and
    the endpoint's text/csv answered each record whole, the class a word of its review (the answer then partly the
    label), and a header of names training does not know as a review too. Both answer each record's text without
    its class (formats.class_last_table), the header not at all; Batch Transform answers the header with its field
    names, in its place."""
    from conftest import cli_in_process

    lines = [row.format(text=text if "," not in text or row.startswith('"') else f'"{text}"', label=label,
                        name=NAMES[label]) for text, label in CLASS_LAST_PAIRS]
    texts = [("Food " if header.startswith("subject") else "") + text for text, _ in CLASS_LAST_PAIRS]
    if blank:
        lines.insert(2, "")
        texts.insert(2, "")
    body = (header + "".join(line + "\n" for line in lines)).encode()
    path = tmp_path / "reviews.csv"
    path.write_bytes(body)
    expected = served[1].predict(texts)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0 and [json.loads(line) for line in got.stdout.splitlines()] == expected, got.stderr
    assert f"read as labeled {'TSV' if chr(9) in row else 'CSV'}" in got.stderr, got.stderr
    assert ("verdict" in got.stderr) == bool(header), got.stderr
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == expected
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    answers = sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0])
    assert answers == ([sm_serve.FieldNames()] if header else []) + expected


@pytest.mark.parametrize("body", [
    b"great food,2\ncold soup,1\nwould go again,2\nnever again,hmm\n",  # a record whose last field is no class
    b"great food,2\ncold soup,1\nwould go again,2\n",  # three records: too thin a sign, as for a class first
    b"feedback,verdict\ngreat food,2\ncold soup,1\nwould go again,2\n",
    b"loved it,positive\ncold soup, sadly\nwould go again\nnice staff,negative\nthey were late\n",
    # reviews holding a tab: a class first or last in some of them, not all (or too few), stay reviews
    b"great food\t2\ncold soup\t1\nwould go again\t2\nnever again\thmm\n",
    b"2\tgreat food\n1\tcold soup\n2\twould go again\n",
    b"2\tgreat food\n1\tcold soup\n2\twould go again\tyes\n1\tnever again\n",
])
def test_reviews_that_end_with_a_comma_and_a_class_name_stay_reviews(served, bundle, tmp_path, body):
    """Only a class last in every one of the first records (4 of them at least) makes a table of them: reviews that
    merely end with a comma and a word that is a class's name are answered whole, by predict and the endpoint alike."""
    from conftest import cli_in_process

    expected = served[1].predict(body.decode().splitlines())
    (tmp_path / "reviews.csv").write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", tmp_path / "reviews.csv")
    assert got.returncode == 0 and [json.loads(line) for line in got.stdout.splitlines()] == expected, got.stderr
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == expected


def test_a_record_of_another_width_below_rows_with_the_class_last_is_one_error_from_both_routes(
        served, bundle, tmp_path, monkeypatch):
    """Read as rows of a text and then its class, a later record narrower than them (a field left out) is refused by
    predict before any answer, and by the endpoint with a 400, as under a header text,label."""
    from conftest import cli_in_process

    body = b"".join(f"{text.replace(',', '')},{label}\n".encode() for text, label in CLASS_LAST_PAIRS * 12) + b"hmm\n"
    (tmp_path / "reviews.csv").write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", tmp_path / "reviews.csv")
    assert got.returncode != 0 and got.stdout == "", got.stderr
    assert "reviews.csv:61: malformed CSV row: 1 column(s) where the first row has 2" in got.stderr
    with pytest.raises(sm_serve.RequestError, match=r"CSV record 61: malformed CSV row: 1 column\(s\) where the first row"):
        sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0])
    # Batch Transform, whose mini-batch may follow a header, judged it by all of its records: the 61st made every
    # line answered whole, its class a word of its review
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    with pytest.raises(sm_serve.RequestError, match=r"CSV record 61: malformed CSV row: 1 column\(s\) where the first row"):
        sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0])


_CLASS_LAST_ROWS = "".join(f"{text.replace(',', '')},{label}\n" for text, label in CLASS_LAST_PAIRS)
_CLASS_LAST_TEXTS = [text.replace(",", "") for text, _ in CLASS_LAST_PAIRS]
_SEP_LINE = object()  # Excel's sep=, line: no record, but an empty review's line to Batch Transform


@pytest.mark.parametrize("body, texts", [
    # files joined with their header (cat a.csv b.csv), the repeat among the first records: predict answered every
    # line whole (the header too), the endpoint each row's text
    ("feedback,verdict\n" + _CLASS_LAST_ROWS + "feedback,verdict\n" + _CLASS_LAST_ROWS,
     [None] + _CLASS_LAST_TEXTS + [None] + _CLASS_LAST_TEXTS),
    # a row after the first 51 that ends in no class, as wide as them: its text, as under a header text,label (Batch
    # Transform answered every line whole, judging its mini-batch by all of its rows)
    (_CLASS_LAST_ROWS * 11 + "plain review, nice\n", _CLASS_LAST_TEXTS * 11 + ["plain review"]),
    # Excel's sep=, where such files were joined: no record (to Batch Transform an empty review's line, or above a
    # header's repeat the header's), as between class-first rows; it made them reviews, one a line, to every route
    (_CLASS_LAST_ROWS + "sep=,\n" + _CLASS_LAST_ROWS, _CLASS_LAST_TEXTS + [_SEP_LINE] + _CLASS_LAST_TEXTS),
    ("feedback,verdict\n" + _CLASS_LAST_ROWS + "sep=,\nfeedback,verdict\n" + _CLASS_LAST_ROWS,
     [None] + _CLASS_LAST_TEXTS + [None, None] + _CLASS_LAST_TEXTS),
    # Excel's sep=, as the first line: above a header no record, above the rows alone a blank record (an empty review),
    # as above rows with the class first
    ("sep=,\nfeedback,verdict\n" + _CLASS_LAST_ROWS, [_SEP_LINE, None] + _CLASS_LAST_TEXTS),
    ("sep=,\n" + _CLASS_LAST_ROWS, [""] + _CLASS_LAST_TEXTS),  # (above rows alone, a blank record: an empty review)
    # a first line too long for a header row, above rows whose class is last (it ends in a class): read as their first
    ("x" * 200_000 + "," + CLASS_LAST_PAIRS[0][1] + "\n" + _CLASS_LAST_ROWS, ["x" * 200_000] + _CLASS_LAST_TEXTS),
    # tab-separated without a header, the class last or first (training reads the latter as labeled TSV): each line
    # was answered whole, its class a word of its review
    (_CLASS_LAST_ROWS.replace(",", "\t"), _CLASS_LAST_TEXTS),
    ("".join(f"{label}\t{text}\n" for text, label in zip(_CLASS_LAST_TEXTS, "21211")), _CLASS_LAST_TEXTS),
], ids=["header-repeated-in-the-look-ahead", "row-52-ends-in-no-class", "sep-between-rows", "sep-above-a-header",
        "sep-first-above-a-header", "sep-first-above-rows", "a-long-first-row", "tsv-class-last", "tsv-class-first"])
def test_predict_the_endpoint_and_batch_transform_read_rows_with_the_class_last_alike(
        tmp_path, bundle, served, monkeypatch, body, texts):
    """Rows of a text and then its class are one decision to every route, on the first HEADER_LOOKAHEAD + 1 records
    (a repeat of the header among them, and Excel's sep=, left out): each row answered for its text, a header with
    Batch Transform's field names in its place (``None``), not at all by predict and the realtime endpoint."""
    answers, error = _predicted(tmp_path, bundle, body)
    assert error is None, error
    assert answers == served[1].predict([text for text in texts if isinstance(text, str)])
    assert _served_answers(body, served) == answers
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    by_line = iter(answers)
    assert _served_answers(body, served) == [
        sm_serve.FieldNames() if text is None else served[1].predict([""])[0] if text is _SEP_LINE else next(by_line)
        for text in texts]


@pytest.mark.parametrize("body", [
    b"Sentiment, Review Body\npositive,good food\n",  # typed headers over fewer rows than decide: a review
    b"Sentiment, Review Body\n2,good food\nnegative,awful\n",
    b"Review Body, Sentiment\ngood food,positive\n",
    b"Title, Review Body\nGreat,good food\n",
    b"Sentiment, Review Body\npositive,good food\nnegative,awful\npositive,nice\nnegative,bad\n",  # enough: a header
    b"label,text\npositive,good\n", b"label, text\n2,good\n", b"Label,Text\npositive,good\n",  # one row is enough
    b"Sentiment\tReview Body\npositive\tgood food\n", b"Sentiment \t Review Body\npositive\tgood food\n",  # TSV
    b"sentiment\treview\npositive\tgood food\nnegative\tawful\n",
])
def test_typed_and_tsv_headers_over_few_rows_are_read_as_predict_reads_them(served, bundle, tmp_path, body):
    """A header typed with spaces (formats.typed_header) is read as one only over rows that leave no doubt, a header
    training recognizes over one row already, a TSV's with a tab: the endpoint reads each of these bodies as predict
    reads the same bytes in a file, answer for answer."""
    from conftest import cli_in_process

    path = tmp_path / ("reviews.tsv" if b"\t" in body else "reviews.csv")
    path.write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    expected = [json.loads(line) for line in got.stdout.splitlines()]
    assert sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0]) == expected


@pytest.mark.parametrize("body", [
    b"review\ngreat food\nreview\n",  # a first line that occurs again: a review
    b"label,text\ngreat food\ncold soup\nnice\n",  # rows not as wide as it
])
def test_a_text_csv_first_line_that_only_looks_like_a_header_is_a_review(served, body):
    reviews = sm_serve.input_fn(body, "text/csv")
    assert sm_serve.predict_fn(reviews, served[0]) == served[1].predict(body.decode().splitlines())


@pytest.mark.parametrize("first", ["Overall, highly recommended.", "Class, style and comfort.", "Great phone, overall",
                                   "Rating, five stars!"])
def test_a_csv_serializers_first_review_of_short_phrases_is_no_header(endpoint, served, monkeypatch, first):
    """The SDK's CSVSerializer sends reviews one a line, unquoted. A first review of two short phrases, one a class
    column's name, over reviews of one comma each (real lines of the Amazon snippets) was taken for an undeclared
    header row: answered with the field names, each review after it cut at its comma, the words before it scored as
    nothing (a class), and with a review without a comma among them the request was a 400. A space after a comma is
    prose's, not a CSV writer's: every line is a review, as before the undeclared header was read."""
    reviews = [first, "after @ 3 months, it stoppped playing higher number scenes on dvds.",
               "yes there is a corner lens barrel distortion (i don't like it too but no harm done since i always use "
               "the camea lcd screen to see exactly what i'm going to get) in the viewfinder when you don't zoom (when "
               "you zoom the lens distortion goes away), canon knows this and engineered it that way to minimize the "
               "parallax phenomenon; that is what lmost exactly ot the picture.",
               "4) it did play my jpeg photos but wow, trying to figure it out was really something!",
               "their customer service sucks."]
    _each_review_answered_by_endpoint_and_batch_transform(endpoint, served, monkeypatch, reviews)


def test_a_tsv_whose_quotation_marks_are_no_csv_quoting_is_split_at_its_tabs(served):
    """GLUE's TSVs quote nothing: a sentence that opens with a quotation mark is no CSV quoting. Read tab-separated
    with CSV's quoting, such a body was a 400; its lines are split at their tabs, the marks kept, as
    pd.read_csv(sep="\\t", quoting=3) reads them."""
    body = b'sentence\tlabel\nit \'s a "charming" movie\t1\n"yes" , it is\t0\ndull "\t0\n'
    reviews = sm_serve.input_fn(body, "text/csv; header=present")
    assert list(reviews) == ['it \'s a "charming" movie', '"yes" , it is', 'dull "']
    with pytest.raises(sm_serve.RequestError, match=r"not valid CSV \(read tab-separated: its first line is a tab-sep"):
        sm_serve.input_fn(b'label\ttext\n2\t"great\nfood"\n1\t"cold" soup\n', "text/csv")  # real quoting, then an error


@pytest.mark.parametrize("body", [
    b"great food\tloved it\ncold soup\nnice staff\n",  # a review holding a tab
    b"Summary\tworks great\ncold soup\nnice staff\n",  # a first review of a column's name, a tab, short words
    b"label\ttext\n",  # the header alone: no rows to read tab-separated
])
def test_a_text_csv_review_holding_a_tab_is_not_split(served, body):
    reviews = sm_serve.input_fn(body, "text/csv")
    assert sm_serve.predict_fn(reviews, served[0]) == served[1].predict(body.decode().splitlines())


@pytest.mark.parametrize("body, message", [
    # a blank line is a record, as without a header (record 3 of "awful\n\nx" is x): the header is record 3 here
    (b"\n\nlabel,text\n2,great food\nawful\n", "CSV record 5 has 1 column(s), but the header (label,text) names 2"),
    (b"\r\n,text,label\r\n0,great,2\r\n1,cold,x,1\r\n", "CSV record 4 has 4 column(s), but the header (,text,label) names 3"),
    (b"\n,label,text\n" + b"".join(b"%d,2,great food\n" % i for i in range(60)) + b"x3,1,cold\n",
     "CSV record 63: the first column was read as pandas' index column (unnamed in the header, the rows before "
     "numbered 0, 1, 2, ... or so), but this row's is 'x3', not a row number"),
])
def test_csv_header_present_400s_number_the_records_as_a_user_counts_them(body, message):
    """Blank lines before the header were not counted: record numbers were off by them."""
    with pytest.raises(sm_serve.RequestError) as caught:
        sm_serve.input_fn(body, "text/csv; header=present")
    assert caught.value.status_code == 400 and caught.value.message.startswith(message), caught.value.message

_INDEXED_ROWS = b"".join(b"%d,2,great food\n" % i for i in range(60))


@pytest.mark.parametrize("body, content_type, message", [
    # files joined with their headers (cat a.csv b.csv): a repeat of the header is no record, but a line of the body
    (b"label,text\n2,great food\nlabel,text\n1,cold soup\nawful\n", "text/csv",
     "CSV record 5 has 1 column(s), but the header (label,text) names 2"),
    (b"label,text\n2,great food\nlabel,text\n1,cold soup\nawful\n", "text/csv; header=present",
     "CSV record 5 has 1 column(s), but the header (label,text) names 2"),
    (b"\nlabel,text\n2,great food\n\nLabel,Text\n1,cold soup\nlabel,text\n2,would go\nawful\n", "text/csv",
     "CSV record 9 has 1 column(s), but the header (label,text) names 2"),
    (b",label,text\n" + _INDEXED_ROWS + b",label,text\nx3,1,cold\n", "text/csv",
     "CSV record 63: the first column was read as pandas' index column"),
    (b"title,body,id\ngreat,food,1\ntitle,body,id\ncold,soup,2\nbad,x\n", "text/csv",
     "CSV record 5: malformed CSV row: 2 column(s) where the header row has 3"),
    # labeled rows under a header training does not know (their classes the model's): the header a record too
    (b"a,b\n" + _LABELED_ROWS + b"a,b\n" + _LABELED_ROWS + b"awful\n", "text/csv; header=present",
     "CSV record 11 has one column, but record 2 is a labeled row"),
    (b"\na,b\n" + _LABELED_ROWS + b"awful\n", "text/csv; header=present",
     "CSV record 7 has one column, but record 3 is a labeled row"),
    (b"Sentiment, Review Body\n" + _LABELED_ROWS + b"awful\n", "text/csv",
     "CSV record 6 has one column, but record 2 is a labeled row"),
    (b"\nSentiment, Review Body\n\n" + _LABELED_ROWS + b"awful\n", "text/csv",
     "CSV record 8 has one column, but record 4 is a labeled row"),
    (b"\n" + _LABELED_ROWS + b"awful\n", "text/csv", "CSV record 6 has one column, but record 2 is a labeled row"),
])
def test_csv_400s_number_the_records_as_the_body_does_past_headers_and_their_repeats(served, body, content_type,
                                                                                     message):
    """A record's number in a 400 is its number in the body, as predict numbers the lines of the file: a header
    repeated where joined files meet, and a header read as one only by its rows (the model's classes), were left
    out of the count, every number after them one too low per header."""
    with pytest.raises(sm_serve.RequestError) as caught:
        sm_serve.predict_fn(sm_serve.input_fn(body, content_type), served[0])
    assert caught.value.status_code == 400 and caught.value.message.startswith(message), caught.value.message



@pytest.mark.parametrize("body, names", [
    (b"label,text\n", "label,text"), (b"text,label", "text,label"), (b"\nlabel,text\n\n", "label,text"),
    (b'"Class Index","Title","Description"\r\n', "Class Index,Title,Description"),
])
def test_a_csv_body_of_a_header_row_alone_is_no_review(tmp_path, monkeypatch, bundle, served, body, names):
    """A CSV of a header row and no rows (``df.head(0).to_csv()``, a file whose rows were never written): predict
    refuses it ("no data rows"), and an endpoint answered the header as a review (only with header=present was it a
    400). Now an endpoint refuses it with or without the parameter, saying what it holds; Batch Transform answers it
    with the field names (blank lines before it as empty reviews), as it answers a header=present file's header alone:
    strategy="SingleRecord" sends a file's header as a mini-batch of its own, and SageMaker joins answer i to record i."""
    from conftest import cli_in_process

    path = tmp_path / "header.csv"
    path.write_bytes(body)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 2 and f"no data rows (only a header row: {names})" in got.stderr, got.stderr
    for content_type in ("text/csv", "text/csv; header=present"):
        with pytest.raises(sm_serve.RequestError) as caught:
            sm_serve.input_fn(body, content_type)
        assert (caught.value.status_code, caught.value.message) == (
            400, f"request holds no review text: only a header row ({names})"), content_type
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    blank_before = served[1].predict([""]) if body.startswith(b"\n") else []
    blank_after = served[1].predict([""]) if body.endswith(b"\n\n") else []
    for content_type in ("text/csv", "text/csv; header=present"):
        answers = sm_serve.predict_fn(sm_serve.input_fn(body, content_type), served[0])
        assert answers == blank_before + [HEADER_ANSWER] + blank_after, content_type


_SEMICOLON_ROWS = "positive;great food\nnegative;cold soup\npositive;would go again\nnegative;never again\n"


@pytest.mark.parametrize("body, line", [
    ("label;text\n" + _SEMICOLON_ROWS, 1),  # to_csv(sep=";"): its header row
    ('"sentiment";"review"\r\n' + _SEMICOLON_ROWS.replace("\n", "\r\n"), 1),  # R's write.csv2, CRLF
    (_SEMICOLON_ROWS, 1),  # the same rows without a header: each starts with a class and a semicolon
    ("\n" + _SEMICOLON_ROWS.replace(";", ";\"", 1).replace("food", "food, really\"", 1), 2),  # after a blank line
    ("".join(f'"{c}";"{t}"\n' for c, t in (line.split(";") for line in _SEMICOLON_ROWS.splitlines())), 1),
    ('"positive";"great\nfood"\n' + _SEMICOLON_ROWS, 1),  # a quoted field over lines: no valid CSV read with commas
], ids=["header", "quoted-header-crlf", "headerless", "after-a-blank-line", "headerless-quoted", "quoted-over-lines"])
def test_a_semicolon_separated_csv_body_is_refused_as_predict_refuses_the_file(tmp_path, monkeypatch, bundle, served,
                                                                               body, line):
    """A semicolon-separated table (European Excel's CSV, ``to_csv(sep=";")``): predict refuses the file in one line,
    and docs/SERVING.md promises text/csv is read "as predict reads the file"; the endpoint answered its header as a
    review and each row whole, its class a word of its text. It is a 400 for the same reason, header=present or
    not, in Batch Transform too, with text/plain as the way to answer each line as it is. Headerless rows whose fields
    are quoted (``"positive";"great food"``, R's write.csv2 without its header) are no valid CSV read with commas:
    with header=present, or a field quoted over lines, that was the 400 ("not valid CSV"), where predict, which asks
    before it reads the file as CSV, names the table."""
    from conftest import cli_in_process

    path = tmp_path / "reviews.csv"
    path.write_bytes(body.encode())
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    head, way_out = f"error: {path}: line {line} ", ", or give --format text to answer each line as it is\n"
    assert got.returncode == 2 and got.stderr.startswith(head) and got.stderr.endswith(way_out), got.stderr
    reason = got.stderr[len(head):-len(way_out)]
    assert "semicolon-separated table" in reason
    for batch in (False, True):
        monkeypatch.setenv("SAGEMAKER_BATCH", "true") if batch else monkeypatch.delenv("SAGEMAKER_BATCH", raising=False)
        for content_type in ("text/csv", "text/csv; header=present"):
            with pytest.raises(sm_serve.RequestError) as caught:
                sm_serve.predict_fn(sm_serve.input_fn(body.encode(), content_type), served[0])
            assert (caught.value.status_code, caught.value.message) == (
                400, f"text/csv: line {line} {reason}, or send it as text/plain to answer each line as it is"), \
                (content_type, batch)


def test_header_absent_reads_a_semicolon_first_line_as_a_review_and_names_no_header_when_it_refuses(served):
    """``header=absent`` says the body's first line is no header: ``label;text`` was refused all the same as "the
    header row of a semicolon-separated table". It is a review now, each line answered as it is, as ``header=absent``
    answers ``label,text`` over rows; a body whose lines are a semicolon-separated table without its header, its first
    line among them (formats.semicolon_table's rows), is still refused, by that reason, which calls no line a
    header."""
    body = "label;text\n" + _SEMICOLON_ROWS
    answers = sm_serve.predict_fn(sm_serve.input_fn(body.encode(), "text/csv; header=absent"), served[0])
    assert answers == served[1].predict(body.splitlines())
    with pytest.raises(sm_serve.RequestError) as caught:
        sm_serve.predict_fn(sm_serve.input_fn(_SEMICOLON_ROWS.encode(), "text/csv; header=absent"), served[0])
    assert caught.value.status_code == 400 and caught.value.message.startswith(
        "text/csv: line 1 and the lines after it start with one of the model's classes and a semicolon "
        "(positive;...): a semicolon-separated table;"), caught.value.message
    assert "header row" not in caught.value.message


@pytest.mark.parametrize("body", [
    "Review;Loved it\ngreat food\nawful\n",  # a first review that reads as a header, plain reviews after it
    "positive;would buy again\ngreat\nawful\nok\nfine\n",  # one review that opens with a class and a semicolon
    "positive; the food was great\nnegative; cold soup\npositive; would go again\nnegative; never again\n",  # typed
], ids=["a-review-as-a-header", "one-class-first", "a-space-after-each"])
def test_reviews_that_hold_semicolons_are_answered_by_the_endpoint_as_by_predict(tmp_path, bundle, served, body):
    """What predict answers as reviews, though a line holds a semicolon, the endpoint answers alike, one a line."""
    from conftest import cli_in_process

    path = tmp_path / "reviews.csv"
    path.write_text(body)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    answers = [json.loads(answer) for answer in got.stdout.splitlines()]
    assert answers == served[1].predict(body.splitlines())
    assert sm_serve.predict_fn(sm_serve.input_fn(body.encode(), "text/csv"), served[0]) == answers


@pytest.mark.parametrize("body", [
    # a TSV's header, a row, blank lines that fill predict's look-ahead, then rows wider than the header (the class
    # first: every field after it text): the endpoint looked at the first lines that were not blank, predict at the
    # lines after the first, blank ones among them
    "label\ttext\n2\tgreat food\n" + "\n" * 49 + "1\tcold\tsoup\n" * 30,
    "text\tlabel\ngreat food\t2\n \n \n",  # lines of spaces after a TSV's rows: blank records, as both read them
    "label,text\n2,great food\n \n \n",  # and after a CSV's
    # labeled rows far apart: predict judges the first 51 records that are not blank, the endpoint judged the first 51
    # records, blank ones among them
    ("2,great food\n" + "\n" * 30 + "1,cold soup\n" + "\n" * 30) * 3,
], ids=["tsv-blank-lines", "tsv-lines-of-spaces", "csv-lines-of-spaces", "csv-rows-among-blank-lines"])
def test_predict_and_the_endpoint_tell_a_table_by_the_same_lines(tmp_path, bundle, served, body):
    """Whether an input is a TSV, a CSV or a semicolon-separated table, predict and the endpoint decide by one rule
    (formats.tsv_with_header, labeled_csv_records, semicolon_table) over the same lines: the first that is not blank
    and the HEADER_LOOKAHEAD lines after it (a CSV's labeled rows: the first HEADER_LOOKAHEAD + 1 records that are not
    blank), a line of spaces a blank one. The endpoint took the first lines that were not blank for a TSV's, and
    predict counted a line of spaces as a record of one field: the same bytes were a table to one and reviews, one a
    line, to the other (different answers, and a different count)."""
    answers, error = _predicted(tmp_path, bundle, body)
    assert error is None, error
    assert sm_serve.predict_fn(sm_serve.input_fn(body.encode(), "text/csv"), served[0]) == answers


def _predicted(tmp_path, bundle, body):
    """``(answers, None)``: CLI predict's answers for ``body`` written to a file; ``(None, its error line)`` when it
    refuses the file."""
    from conftest import cli_in_process

    path = tmp_path / "body.csv"
    path.write_text(body)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    if got.returncode:
        return None, got.stderr.strip().splitlines()[-1]
    return [json.loads(line) for line in got.stdout.splitlines()], None


def _served_answers(body, served, content_type="text/csv"):
    """The endpoint's answers for ``body`` (input_fn, then predict_fn)."""
    return sm_serve.predict_fn(sm_serve.input_fn(body.encode(), content_type), served[0])


_TEN_LABELED_ROWS = "".join(f"{1 + i % 2},review {i} of the food\n" for i in range(10))
_PROSE_ROWS = "".join(f"{1 + i % 2},food {i},the waiter said the kitchen closed early on day {i}\n" for i in range(40))


@pytest.mark.parametrize("body", [
    # a header typed with a space after its comma over labeled rows (formats.typed_header: 4 rows at least), two of
    # them before blank lines that filled the endpoint's look-ahead
    "Sentiment, Review Body\n2,great food\n1,cold soup\n" + "\n" * 48 + _TEN_LABELED_ROWS,
    # a column beside the named text column whose values read as prose (columns.header_text_columns), one word in the
    # rows before the blank lines
    "label,text,staff_reply\n" + "2,food,ok\n1,soup,ok\n2,wine,ok\n" + "\n" * 48 + _PROSE_ROWS,
    # and beside a header of text columns and no class (columns.table_text_columns)
    "review_id,text,staff_reply\n" + "r1,food,ok\nr2,soup,ok\nr3,wine,ok\n" + "\n" * 48 + _PROSE_ROWS,
], ids=["typed-header", "prose-column-beside-a-class", "prose-column-of-a-table-of-texts"])
def test_predict_and_the_endpoint_judge_a_table_by_the_same_rows_among_blank_lines(tmp_path, bundle, served, body):
    """The rows that decide what a table's first row is and which of its columns are text are the first
    HEADER_LOOKAHEAD records predict reads, blank ones left out (header_row.table_lookahead); the endpoint took the
    first HEADER_LOOKAHEAD records, blank ones among them, and judged a body with many blank lines by fewer rows: a
    typed header answered as a review, a column of prose left out, where predict reads the same file otherwise."""
    answers, error = _predicted(tmp_path, bundle, body)
    assert error is None, error
    assert _served_answers(body, served) == answers


_JOINED_ROWS = "2,great food\n1,cold soup\n2,would go again\n1,never again\n"


@pytest.mark.parametrize("body, texts", [
    # Excel's separator line where files that start with one were joined (cat a.csv b.csv): no record, as predict skips
    # it; the endpoint answered it (an empty review; the review "sep=" under text,label or title,body)
    ("label,text\n2,great food\nsep=,\n1,cold soup\n2,would go again\n", ["great food", "cold soup", "would go again"]),
    ("label,text\n" + _JOINED_ROWS + "sep=,\nlabel,text\n" + _JOINED_ROWS,
     ["great food", "cold soup", "would go again", "never again"] * 2),
    (_JOINED_ROWS + "sep=,\n" + _JOINED_ROWS, ["great food", "cold soup", "would go again", "never again"] * 2),
    ("text,label\ngreat food,2\nsep=,\ncold soup,1\nwould go again,2\n", ["great food", "cold soup", "would go again"]),
    ("title,body\ngreat,food\nsep=,\ncold,soup\nwould,go again\n", ["great food", "cold soup", "would go again"]),
    ("label\ttext\n2\tgreat food\nsep=\t\n1\tcold soup\n2\twould go again\n", ["great food", "cold soup",
                                                                            "would go again"]),
    # ... and as the first line, a blank line to both (the endpoint answered it as a review, the header under it too)
    ("sep=,\nlabel,text\n2,great food\n1,cold soup\n2,would go again\n", ["great food", "cold soup", "would go again"]),
    ("sep=,\r\n" + _JOINED_ROWS.replace("\n", "\r\n"), ["", "great food", "cold soup", "would go again", "never again"]),
    ("sep=,\ngreat food\ncold soup\n", ["", "great food", "cold soup"]),
    # a first line that is a quoted field of spaces starts no table, as "" does: predict answers every line whole (the
    # endpoint took it for a blank line and read the table under it)
    ('"  "\nlabel,text\n2,great food\n1,cold soup\n2,would go again\n',
     ['"  "', "label,text", "2,great food", "1,cold soup", "2,would go again"]),
    ('"  "\n' + _JOINED_ROWS, ['"  "'] + _JOINED_ROWS.splitlines()),
    # pandas' index column first in a TSV of one column (df[["text"]].to_csv(sep="\t"), pd.Series(texts).to_csv(...)):
    # left out, as in a CSV (,text): both answered each line whole, its row number and a tab in its review
    ("\ttext\n0\tgreat food\n1\tcold soup\n2\twould go again\n", ["great food", "cold soup", "would go again"]),
    ('\t0\n0\tgreat food, sadly\n1\t"cold ""soup"""\n2\twould go again\n',
     ["great food, sadly", 'cold "soup"', "would go again"]),
], ids=["sep-under-a-header", "sep-above-a-repeated-header", "sep-between-labeled-rows", "sep-class-last",
        "sep-text-columns", "sep-tsv", "sep-first", "sep-first-crlf-rows", "sep-first-reviews", "quoted-spaces-header",
        "quoted-spaces-rows", "tsv-index-one-column", "tsv-index-series"])
def test_predict_and_the_endpoint_read_excel_and_pandas_lines_alike(tmp_path, bundle, served, body, texts):
    """Excel's ``sep=,`` line, a first line of a quoted field of spaces and pandas' index column in a TSV: the same
    bytes are the same records to predict and the endpoint, each read as a user means it (the texts answered)."""
    answers, error = _predicted(tmp_path, bundle, body)
    assert error is None, error
    assert answers == served[1].predict(texts)
    assert _served_answers(body, served) == answers


@pytest.mark.parametrize("body, answers", [
    ("sep=,\nlabel,text\n" + _JOINED_ROWS + "sep=,\nlabel,text\n" + _JOINED_ROWS,
     [""] + ["names"] + _JOINED_ROWS.splitlines() + ["names", "names"] + _JOINED_ROWS.splitlines()),
    (_JOINED_ROWS + "sep=,\n" + _JOINED_ROWS, _JOINED_ROWS.splitlines() + [""] + _JOINED_ROWS.splitlines()),
], ids=["headers", "labeled-rows"])
def test_batch_transform_answers_every_line_of_excel_files_joined(served, monkeypatch, body, answers):
    """In Batch Transform every line of a mini-batch has its answer (SplitType=Line joins them by position): Excel's
    ``sep=,`` above a joined file's header gets the header's (FieldNames), as the header's repeat does; between labeled
    rows, an empty review's; the first line, a blank line, an empty review's, as blank lines above a header get."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    texts = [line.split(",", 1)[1] if "," in line else line for line in answers]
    expected = [sm_serve.FieldNames() if text == "names" else served[1].predict([text])[0] for text in texts]
    for content_type in ("text/csv", "text/csv; header=present"):
        assert _served_answers(body, served, content_type) == expected, content_type


@pytest.mark.parametrize("content_type", ["text/csv", "application/jsonlines"])
def test_batch_transform_answers_a_record_of_excel_s_sep_line_alone_without_its_line_end(served, monkeypatch,
                                                                                       content_type):
    """With SingleRecord (and in a mini-batch of that line alone) each line is a request of its own, sent without its
    line end: a joined Excel file's ``sep=,`` line, read as a blank first line, was then no line at all, and its request
    a 400 ("request holds no review text") that failed the whole job, where with its line end it is answered as an
    empty review, as every other blank line in Batch Transform. (text/plain reads no separator line: every line is a
    review, the next tests.)"""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    with_its_end = _served_answers("sep=,\n", served, content_type)
    assert len(with_its_end) == 1 and str(served[1].predict([""])[0]) in str(with_its_end)  # (an empty review's)
    assert _served_answers("sep=,", served, content_type) == with_its_end


_SEMICOLON_ROWS_BY_CLASS = "".join(f"{1 + i % 2};review {i} of the food\n" for i in range(8))


@pytest.mark.parametrize("body, says", [
    ("sep=;\nlabel;text\n2;great food\n1;cold soup\n", "Excel's separator line sep=;"),
    ("sep=;\r\nsentiment;review\r\npositive;great food\r\n", "Excel's separator line sep=;"),
    ("sep=|\nlabel|text\n2|great food\n1|cold soup\n", "Excel's separator line sep=|"),
    # column names training does not know (a German Excel's export; names of several words): a table all the same
    ("sep=;\nTitel;Bewertung;Sterne\n" + "".join(f"t{i};super Produkt, gerne wieder;{1 + i % 5}\n" for i in range(6)),
     "Excel's separator line sep=;"),
    ("sep=;\nCustomer Review Text;Overall Rating\n" + "".join(f"review {i} of the food;{1 + i % 5}\n" for i in range(6)),
     "Excel's separator line sep=;"),
    # headerless rows with a class first (columns.class_rows): the line is Excel's, as above a header (predict answered
    # them as reviews, one a line, where the endpoint refused them by their classes)
    ("sep=;\n" + _SEMICOLON_ROWS_BY_CLASS, "Excel's separator line sep=;"),
], ids=["semicolons", "semicolons-crlf", "pipes", "names-not-known", "names-of-words", "headerless-semicolon-rows"])
@pytest.mark.parametrize("batch", [False, True], ids=["endpoint", "batch-transform"])
def test_excel_s_line_naming_another_separator_above_its_table_is_refused_as_by_predict(tmp_path, bundle, served,
                                                                                     monkeypatch, body, says, batch):
    """Excel's ``sep=;`` first line above a table that separator separates: predict refuses the file with the
    conversion that reads it, and the endpoint and Batch Transform refuse the body alike (the endpoint answered the
    line, and every row, as reviews; Batch Transform read the line as a blank one, and a table of pipes under it row by
    row)."""
    answers, error = _predicted(tmp_path, bundle, body)
    assert answers is None
    if batch:
        monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    for content_type in ("text/csv", "text/csv; header=present", "text/csv; header=absent"):
        with pytest.raises(sm_serve.RequestError) as caught:
            _served_answers(body, served, content_type)
        said = caught.value.message
        assert caught.value.status_code == 400 and says in said, (content_type, said)
        if "Excel's" in says:
            assert said[said.index("Excel's"):] == error[error.index("Excel's"):]


@pytest.mark.parametrize("rows", ["label;text\n2;great food\n1;cold soup\n", _SEMICOLON_ROWS_BY_CLASS],
                         ids=["header", "headerless"])
@pytest.mark.parametrize("batch", [False, True], ids=["endpoint", "batch-transform"])
def test_a_semicolon_table_under_blank_lines_and_a_sep_line_is_refused_as_by_predict(tmp_path, bundle, served,
                                                                                    monkeypatch, rows, batch):
    """After blank lines no line is Excel's (only a body's or a file's first is): a ``sep=|`` there is a review, and
    the table under it is judged without it, as under a first line that reads ``sep=|``. The endpoint and predict
    judged the body by that line and answered the table, a row a review, where training refuses it: refused, by both
    alike. (A ``sep=;`` there names the table's separator: refused as that line, the next test.)"""
    body = "\n\nsep=|\n" + rows
    answers, error = _predicted(tmp_path, bundle, body)
    assert answers is None and "semicolon-separated" in error, error
    if batch:
        monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    with pytest.raises(sm_serve.RequestError) as caught:
        _served_answers(body, served, "text/csv")
    said, what = caught.value.message, re.compile(r": (line \d+ .*semicolon-separated.*?): convert it")
    assert caught.value.status_code == 400 and what.search(said)[1] == what.search(error)[1], (said, error)


_COMMA_TABLE = "label,text\n2,great food\n1,cold soup\n2,would go again\n"
_JSON_LINES = '{"label": "2", "text": "great food"}\n{"label": "1", "text": "cold soup"}\n'
_REMOVE_AFTER_BLANK_LINES = ("{where}: line 3 reads {line} (Excel's separator line) after blank lines, above a comma- "
                             "or tab-separated table: Excel reads that line only as a file's first{other}; remove that "
                             "line")
_REMOVE_ABOVE_JSON_LINES = ("{where}: line {n} reads {line} (Excel's separator line, which names a table's separator) "
                            "above JSON Lines, where it is no JSON object; remove that line")
_CONVERT_AFTER_BLANK_LINES = ("{where}:3: Excel's separator line sep=;: the file is ';'-separated; only comma- and "
                              "tab-separated files, JSON Lines and fastText format are read: convert it (e.g. pandas: "
                              "pd.read_csv(path, sep=';', skiprows=3, header=None, dtype=str, keep_default_na=False)"
                              ".to_csv(new_path, index=False, header=False))")
_CONVERT_UNDER_ANOTHER_SEPARATOR = (
    "{where}: line {n} reads {line} (Excel's separator line) above a semicolon-separated table, and it names another "
    "separator than the table's; only comma- and tab-separated files, JSON Lines and fastText format are read: convert "
    "it (e.g. pandas: pd.read_csv(path, sep=';', skiprows={n}, header=None, dtype=str, keep_default_na=False)"
    ".to_csv(new_path, index=False, header=False))")
_SEMICOLON_TABLE = "label;text\n2;great food\n1;cold soup\n"


_SEP_LINES_REFUSED = [
    # sep=, after blank lines above a comma table: training "cannot detect the format of line 3", predict read the
    # table, the endpoint answered every line as a review (the header too, each row whole)
    ("\n\nsep=,\n" + _COMMA_TABLE, _REMOVE_AFTER_BLANK_LINES.replace("{line}", "sep=,").replace("{other}", "")),
    ("\n\nsep=,\n" + _TEN_LABELED_ROWS, _REMOVE_AFTER_BLANK_LINES.replace("{line}", "sep=,").replace("{other}", "")),
    ("\n\nsep=\t\n" + _COMMA_TABLE, _REMOVE_AFTER_BLANK_LINES.replace("{line}", "sep=\\t").replace("{other}", "")),
    ("\n\nsep=;\n" + _COMMA_TABLE, _REMOVE_AFTER_BLANK_LINES.replace("{line}", "sep=;").replace(
        "{other}", ", and it names another separator than the table's")),
    # sep=; above JSON Lines: training "no ';'-separated table follows it", predict "not a JSON object", the
    # endpoint a semicolon table's conversion (after blank lines "line 3 is not valid JSON")
    ("sep=;\n" + _JSON_LINES, _REMOVE_ABOVE_JSON_LINES.replace("{line}", "sep=;").replace("{n}", "1")),
    ("sep=|\n" + _JSON_LINES, _REMOVE_ABOVE_JSON_LINES.replace("{line}", "sep=|").replace("{n}", "1")),
    ("\n\nsep=;\n" + _JSON_LINES, _REMOVE_ABOVE_JSON_LINES.replace("{line}", "sep=;").replace("{n}", "3")),
    ("\n\nsep=,\n" + _JSON_LINES, _REMOVE_ABOVE_JSON_LINES.replace("{line}", "sep=,").replace("{n}", "3")),
    # sep=; after blank lines above a semicolon table: training gave the conversion that skips the lines up to it,
    # predict and the endpoint one that read the line as a row of the table (and header=absent answered every line)
    ("\n\nsep=;\nlabel;text\n2;great food\n1;cold soup\n", _CONVERT_AFTER_BLANK_LINES),
    ("\n\nsep=;\n" + _SEMICOLON_ROWS_BY_CLASS, _CONVERT_AFTER_BLANK_LINES),
    # sep=| (or sep=, after blank lines) above a semicolon table: training said "no '|'-separated table follows it"
    # (sep=,: "it is no labeled example"), predict and the endpoint refused the table as without that line
    ("\n\nsep=|\n" + _SEMICOLON_TABLE, _CONVERT_UNDER_ANOTHER_SEPARATOR.replace("{line}", "sep=|").replace("{n}", "3")),
    ("sep=|\n" + _SEMICOLON_TABLE, _CONVERT_UNDER_ANOTHER_SEPARATOR.replace("{line}", "sep=|").replace("{n}", "1")),
    ("\n\nsep=|\n" + _SEMICOLON_ROWS_BY_CLASS,
     _CONVERT_UNDER_ANOTHER_SEPARATOR.replace("{line}", "sep=|").replace("{n}", "3")),
    ("\n\nsep=,\n" + _SEMICOLON_TABLE, _CONVERT_UNDER_ANOTHER_SEPARATOR.replace("{line}", "sep=,").replace("{n}", "3")),
    # sep=, after blank lines above rows too few to tell a table by (columns.class_rows): training refused it, predict
    # read it as a blank line, the endpoint answered it as an empty review
    ("\n\nsep=,\n2,great food\n1,cold soup\n",
     "{where}: line 3 reads sep=, (Excel's separator line) after blank lines, where only a file's first line is "
     "Excel's: it is no record; remove that line"),
]
_JOINED_FILES_LINE_IDS = ["comma-after-blank-lines", "comma-over-rows-after-blank-lines", "tab-after-blank-lines",
                          "comma-over-few-rows-after-blank-lines"]
_SEP_LINES_REFUSED_IDS = ["comma-after-blank-lines", "comma-over-rows-after-blank-lines", "tab-after-blank-lines",
                          "semicolon-after-blank-lines", "semicolon-over-json-lines", "pipe-over-json-lines",
                          "semicolon-over-json-lines-after-blank-lines", "comma-over-json-lines-after-blank-lines",
                          "semicolon-over-its-table-after-blank-lines", "semicolon-over-its-rows-after-blank-lines",
                          "pipe-over-a-semicolon-table-after-blank-lines", "pipe-over-a-semicolon-table",
                          "pipe-over-semicolon-rows-after-blank-lines",
                          "comma-over-a-semicolon-table-after-blank-lines",
                          "comma-over-few-rows-after-blank-lines"]


# (in Batch Transform, a first line above JSON Lines is read as a blank one, and sep=, or a tab's after blank lines
# above a comma or tab table is answered: the next tests)
@pytest.mark.parametrize("body, said, batch", [
    pytest.param(body, said, batch, id=f"{'batch-transform' if batch else 'endpoint'}-{name}")
    for (body, said), name in zip(_SEP_LINES_REFUSED, _SEP_LINES_REFUSED_IDS) for batch in (False, True)
    if not (batch and (body.startswith("sep=") or name in _JOINED_FILES_LINE_IDS))])
def test_train_predict_and_the_endpoint_refuse_a_sep_line_alike(tmp_path, bundle, served, monkeypatch, body, said,
                                                                batch):
    """A line that reads as Excel's separator line where no reader reads it as one (after blank lines: only a file's
    first line is Excel's; above JSON Lines: no table's) is refused by training, predict and the endpoint in the same
    words (lines.excel_sep_line, lines.past_a_sep_review): they read the same bytes three ways, one a table, one
    reviews, one no format, or refused them with three meanings; with ``--format csv`` too, as each reads it."""
    from conftest import cli_in_process

    path = tmp_path / "body.csv"
    path.write_text(body)
    for fmt in ("auto", "csv"):
        with pytest.raises(FastTextError) as trained:
            read_labeled(str(path), fmt)
        assert str(trained.value) == said.format(where=path), fmt
        got = cli_in_process("predict", "--model", bundle, "--input", path, "--format", fmt)
        assert (got.returncode, got.stdout, got.stderr) == (2, "", f"error: {said.format(where=path)}\n"), fmt
    if batch:
        monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    for content_type in ("text/csv", "text/csv; header=present", "text/csv; header=absent", "application/jsonlines"):
        with pytest.raises(sm_serve.RequestError) as caught:
            _served_answers(body, served, content_type)
        assert (caught.value.status_code, caught.value.message) == (400, said.format(where="request")), content_type


@pytest.mark.parametrize("line", ["sep=;", "sep=|", "sep=,"])
def test_batch_transform_reads_a_sep_line_starting_a_mini_batch_of_json_lines_as_a_blank_one(served, monkeypatch,
                                                                                            line):
    """A Batch Transform mini-batch (SplitType=Line) may start anywhere in a file: a first line that reads ``sep=;``
    above JSON Lines is read as a blank one there, never refused (an endpoint refuses it: the test before), whether
    the body is sent as application/jsonlines or as text/csv, which reads JSON Lines as application/jsonlines does."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    expected = _served_answers("\n" + _JSON_LINES, served, "application/jsonlines")
    for content_type in ("application/jsonlines", "text/csv", "text/csv; header=present", "text/csv; header=absent"):
        assert _served_answers(f"{line}\n{_JSON_LINES}", served, content_type) == expected, content_type


@pytest.mark.parametrize("content_type", ["text/csv", "text/csv; header=present", "text/csv; header=absent"])
@pytest.mark.parametrize("end", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_batch_transform_answers_a_mini_batch_starting_at_blank_lines_above_a_joined_file_s_sep_line(
        served, monkeypatch, content_type, end):
    """Excel files joined with cat (sep=, above each header, docs/INPUT.md) after a blank line: a Batch Transform
    mini-batch (SplitType=Line) may start at that blank line, where the second file's ``sep=,`` follows blank lines.
    It was a 400 that failed the job (no line after blank lines is Excel's: lines.past_a_sep_review, as an endpoint
    refuses such a body), where a mini-batch starting a line earlier or later is answered; it is answered, one answer
    a line, as before (a sep=; there above its own table or JSON Lines is refused still: the test before), the line
    as a blank one, as where a mini-batch starts at it: answered as a review, it made the header under it one."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    second = "sep=,\nlabel,text\n2,would go again\n1,rude waiter\n".replace("\n", end)
    few_rows = second.replace(f"label,text{end}", "")  # (too few rows to tell a table by: answered as well)
    for body in (end + second, end * 2 + second.replace(",", "\t"), end + few_rows):
        answers = _served_answers(body, served, content_type)
        assert len(answers) == body.count("\n"), body
        # (its line read as a blank one, as where a mini-batch starts at it: the header under it was answered as a
        # review, where the whole file's batch and a mini-batch starting a line later read it as the header)
        blanked = body.replace("sep=,", "").replace("sep=\t", "")
        assert answers == _served_answers(blanked, served, content_type), body
    monkeypatch.delenv("SAGEMAKER_BATCH")
    with pytest.raises(sm_serve.RequestError) as caught:  # (an endpoint's body is a whole one: refused, as predict)
        _served_answers(end + second, served, content_type)
    assert caught.value.status_code == 400 and caught.value.message.endswith("; remove that line")


@pytest.mark.parametrize("content_type, rest", [
    ("text/csv", "great food\ncold soup; would not go again\nnever again\n"),
    ("text/csv; header=absent", "great food\ncold soup\n"),
    ("text/plain", "great food\ncold soup; would not go again\n"),
    ("text/plain", "label;text\n2;great food\n1;cold soup\n"),  # (text/plain: every line a review, as it says)
])
# (sep=\r: CRLF, no separator; sep= , sep=a, sep=1: no separator of Excel's, lines.excel_separator: refused as one over
# "great food", two names a space separates, or an "a" in each row)
@pytest.mark.parametrize("line", ["sep=;", "sep=|", "sep=x", "sep=;\r", "sep=\r", "sep= ", "sep=a", "sep=1"])
@pytest.mark.parametrize("batch", [False, True], ids=["endpoint", "batch-transform"])
def test_a_review_that_reads_like_excel_s_separator_line_is_answered_as_the_review_it_is(served, monkeypatch,
                                                                                        content_type, rest, line,
                                                                                        batch):
    """A review that reads ``sep=;`` (or ``sep=x``) first in a body of reviews, one a line (a CSV writer leaves it
    unquoted), or cut to the start of a Batch Transform mini-batch (SplitType=Line: the handler cannot know whether a
    mini-batch starts the file), or sent alone (SingleRecord): the endpoint refused the body (400, "Excel's separator
    line"), and Batch Transform answered the line as an empty review. It is Excel's only above a table of its separator
    (the test before); else it is answered as the review it is, in its place, one answer a line."""
    if batch:
        monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    for body in (f"{line}\n{rest}", line):
        reviews = [text.rstrip("\r") for text in body.splitlines()]
        assert list(sm_serve.input_fn(body.encode(), content_type)) == reviews, body
        assert _served_answers(body, served, content_type) == served[1].predict(reviews), body


@pytest.mark.parametrize("rest", ["label,text\n2,great food\n1,cold soup\n", "text\ngreat food\ncold soup\n"],
                         ids=["comma-table", "one-column"])
@pytest.mark.parametrize("content_type", ["text/csv", "text/csv; header=present"])
@pytest.mark.parametrize("batch", [False, True], ids=["endpoint", "batch-transform"])
def test_excel_s_line_naming_another_separator_above_a_header_row_is_read_as_sep_comma(served, monkeypatch, rest,
                                                                                     content_type, batch):
    """``sep=;`` above a header row of no semicolon table (a comma table, or one column: a tool that writes the line
    its locale's Excel reads) is Excel's line, a blank one as ``sep=,`` is: read as the first row, a review, the
    header under it was answered as a review too, and each row whole (``2,great food``, its class a word of it);
    with ``header=present``, ``sep=;`` was taken for the header and ``label,text`` answered."""
    if batch:
        monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    body = f"sep=;\n{rest}"
    assert list(sm_serve.input_fn(body.encode(), content_type)) == ["great food", "cold soup"]
    assert _served_answers(body, served, content_type) == _served_answers(f"sep=,\n{rest}", served, content_type)


@pytest.mark.parametrize("line", ["sep=;", "sep=,"])
@pytest.mark.parametrize("batch", [False, True], ids=["endpoint", "batch-transform"])
def test_header_absent_under_excel_s_line_answers_the_line_under_it_as_a_record(served, monkeypatch, line, batch):
    """``header=absent`` is the client's word that the body holds no header row (docs/SERVING.md): under Excel's
    first line (``sep=,``, or ``sep=;`` above a comma table: a blank line, as predict reads it) the line under it is
    the first record, answered as a review, as in the body without that line; Excel writes its line above
    headerless exports too, so it says nothing of a header. Predict, told nothing, reads a header row there, as it
    reads the body without the line; the endpoint without header=absent does too (the test before)."""
    if batch:
        monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    rest = "label,text\n2,great food\n1,cold soup\n"
    answers = _served_answers(f"{line}\n{rest}", served, "text/csv; header=absent")
    assert answers == _served_answers(f"\n{rest}", served, "text/csv; header=absent")
    assert len(answers) == 4 and answers[1] == served[1].predict(["label,text"])[0]


@pytest.mark.parametrize("rows", ["label,text\n" + _TEN_LABELED_ROWS, _TEN_LABELED_ROWS, "\n" + _TEN_LABELED_ROWS,
                                  "text\ngreat food\ncold soup\n"],
                         ids=["header", "labeled-rows", "blank-then-labeled-rows", "one-column"])
@pytest.mark.parametrize("end", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("batch", [False, True], ids=["endpoint", "batch-transform"])
def test_a_sep_line_naming_the_wrong_separator_above_a_comma_table_reads_the_table(tmp_path, bundle, served, monkeypatch,
                                                                                 rows, end, batch):
    """A hand-made ``sep=;`` above a comma-separated table (Excel writes the separator it uses): the endpoint answered
    the line as a review and the header and rows under it as reviews, one a line, each row whole, its class a word,
    and predict refused the file. The table is read, the line as Excel's (lines.excel_sep_line, one rule of both), as
    under ``sep=,``: nothing lost (the line names no review), and in Batch Transform one answer a line still (the
    line's an empty review's, as ``sep=,``'s), where a 400 would have failed the job."""
    if batch:
        monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    body, excel = (f"{line}\n{rows}".replace("\n", end) for line in ("sep=;", "sep=,"))
    answers, error = _predicted(tmp_path, bundle, body)
    assert error is None and answers == _predicted(tmp_path, bundle, excel)[0]
    for content_type in ("text/csv", "text/csv; header=present"):
        assert _served_answers(body, served, content_type) == _served_answers(excel, served, content_type)
    assert len(_served_answers(body, served)) == (len(body.splitlines()) if batch else len(answers))


@pytest.mark.parametrize("batch", [False, True], ids=["endpoint", "batch-transform"])
def test_text_plain_answers_a_first_line_that_reads_sep_comma_as_the_review_it_is(served, monkeypatch, batch):
    """text/plain is one review a line, a table's lines answered whole: Excel's ``sep=,`` read as a blank line there
    kept no table's reading, and lost a review that reads ``sep=,`` (answered as an empty one). In CSV an unquoted
    ``sep=,`` is two fields, Excel's line (a review that reads so is written quoted, and read as the review)."""
    if batch:
        monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    assert list(sm_serve.input_fn(b"sep=,\ngreat food\n", "text/plain")) == ["sep=,", "great food"]
    assert list(sm_serve.input_fn(b"sep=,", "text/plain")) == ["sep=,"]
    assert list(sm_serve.input_fn(b'"sep=,"\ngreat food\n', "text/csv")) == ["sep=,", "great food"]
    assert list(sm_serve.input_fn(b"sep=,\ngreat food\n", "text/csv")) == ["", "great food"]


@pytest.mark.parametrize("body", [
    "".join(f'"{1 + i % 2}","{5000 + i}","review {i} of the food"\n' + "\n" * 3 for i in range(60)),  # no header
    "label,title,text\n" + "".join(f"{1 + i % 2},{5000 + i},review {i} of the food\n" + "\n" * 3 for i in range(60)),
], ids=["labeled-rows", "under-a-header"])
def test_predict_and_the_endpoint_refuse_a_column_of_ids_among_blank_lines_alike(tmp_path, bundle, served, body):
    """A column of ids among the text columns (columns.check_text_columns: 20 values at least over the look-ahead) is
    refused by predict over its first rows that are not blank; over the first records, blank ones among them, the
    endpoint saw too few ids to tell, and answered each record with its id as a word."""
    answers, error = _predicted(tmp_path, bundle, body)
    assert answers is None
    with pytest.raises(sm_serve.RequestError) as caught:
        _served_answers(body, served)
    reason = caught.value.message.split("request: ", 1)[1]
    assert caught.value.status_code == 400 and "column 2 holds only whole numbers" in reason and reason in error


def test_batch_transform_gives_back_a_first_record_whose_class_recurs_after_blank_lines(monkeypatch, tmp_path, bundle,
                                                                                       served):
    """A later Batch Transform mini-batch of a ``header=present`` file whose first record only reads like a header
    (``2,Stars``: its class recurs below it, columns.header_columns) is a record, answered as predict answers it in
    the same file: the rows that tell are those after it that are not blank (the first HEADER_LOOKAHEAD records were
    all blank, and it was taken for the header, answered with the answer's field names)."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    body = "2,Stars\n" + "\n" * 50 + _TEN_LABELED_ROWS
    answers, error = _predicted(tmp_path, bundle, body)
    assert error is None, error
    assert _served_answers(body, served, "text/csv; header=present") == answers


@pytest.mark.parametrize("body", [
    'label,text\n2,great food\n""\n1,cold soup\n""\n',  # under a header
    '"2","great food"\n""\n"1","cold soup"\n',  # among labeled rows
    'label\ttext\n2\tgreat food\n""\n1\tcold soup\n',  # in a TSV
    "Sentiment, Review Body\n" + "".join(f'{1 + i % 2},review {i}\n""\n' for i in range(6)),  # under a typed header
    'text\n""\n' + "".join(f'"{1 + i % 2}","review {i}"\n""\n' for i in range(6)),  # labeled rows under text
    '""\nlabel,text\n2,great food\n1,cold soup\n',  # the first line: no table to predict, every line a review
], ids=["under-a-header", "among-labeled-rows", "in-a-tsv", "under-a-typed-header", "under-one-text-column",
        "first-line"])
def test_a_line_of_an_empty_quoted_field_is_read_by_predict_and_the_endpoint_alike(tmp_path, bundle, served, body):
    """A line ``""`` (pandas' empty string, quoted) among a table's records is a blank record to predict (no text, one
    field: formats.predicted_record), answered as an empty review in its place; the endpoint read it as a record of
    one field: a 400 under a header of two columns or among labeled rows, and a row of the look-ahead. Above the
    table's first row it is the input's first line to predict (a line of spaces is blank there, ``""`` is not), which
    starts no table: every line a review, as the endpoint answers it."""
    answers, error = _predicted(tmp_path, bundle, body)
    assert error is None, error
    assert _served_answers(body, served) == answers


@pytest.mark.parametrize("body", [
    "positive\treview\n" + "negative\tcold soup\npositive\tgreat food\n" * 5,  # the model's classes
    "good\treview\n" + "bad\tcold soup\ngood\tgreat food\n" * 5,  # classes that are not the model's
    "positive\treview\n" + "negative\tcold soup\n\n\npositive\tgreat food\n" * 5,  # blank records among them
    "title\tbody\n" + "title\tcold soup\nnice\tgreat food\n" * 5,  # its first value recurs (columns.text_header)
], ids=["models-classes", "other-classes", "blank-records", "first-value-recurs"])
def test_a_tsv_whose_first_row_its_rows_say_is_a_record_is_read_by_predict_and_the_endpoint_alike(tmp_path, bundle,
                                                                                                 served, body):
    """A TSV (its first line a TSV's header row, as formats.tsv_with_header says) whose first row's class or a text
    column's name recurs below it in its column is read by predict with that row as its first record, every record a
    labeled row (header_row.class_and_text_columns, columns.header_columns), whatever the model's classes; the
    endpoint took every TSV's first line for its header: unanswered, one answer fewer."""
    answers, error = _predicted(tmp_path, bundle, body)
    assert error is None, error
    assert len(answers) == len([line for line in body.splitlines()])
    assert _served_answers(body, served) == answers


@pytest.mark.parametrize("body", [b"label,text\n2,good food\n1,\"awful\n", b"2,good food\n1,\"awful\nservice, sadly\n"])
def test_batch_transform_says_when_split_type_line_cut_a_review_quoted_over_lines(monkeypatch, body):
    """SplitType=Line cuts a file at every line break, inside quotes too: a review pandas quoted over two lines ends
    one mini-batch open, and its 400 said only "unexpected end of data", which failed the job without saying why."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    with pytest.raises(sm_serve.RequestError) as caught:
        sm_serve.input_fn(body, "text/csv; header=present")
    assert caught.value.status_code == 400 and caught.value.message == (
        "request body is not valid CSV: unexpected end of data (a quoted field open at the end of the mini-batch: with "
        "split_type=\"Line\" SageMaker cuts a review quoted over several lines between mini-batches; write each review "
        "on one line, or send JSON Lines)")


def test_batch_transform_logs_a_mini_batch_answered_with_fewer_answers_than_lines(monkeypatch, served, capsys):
    """A review quoted over lines is one record, one answer: right for a whole file (split_type=None), but with
    split_type="Line" SageMaker joins answer i to line i, and the mini-batch's answers were fewer than its lines
    without a word. The container cannot tell the split type, so it answers the records and says so in the log."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    body = b"label,text\n2,good food\n1,\"awful\nservice\"\n2,nice\n"
    capsys.readouterr()
    answers = sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), served[0])
    assert answers == [HEADER_ANSWER] + served[1].predict(["good food", "awful\nservice", "nice"])
    assert capsys.readouterr().err.splitlines() == [
        "text/csv: 4 answers to a mini-batch of 5 lines (a review quoted over several lines is one record): with "
        "split_type=\"Line\" SageMaker joins answers to lines; write each review on one line, or send JSON Lines"]
    sm_serve.predict_fn(sm_serve.input_fn(b"label,text\n2,good food\n1,awful\n", "text/csv"), served[0])
    assert capsys.readouterr().err == ""  # a line a record: nothing to say


def test_csv_header_parameter_values():
    body = b"review\ngreat food\n"
    assert list(sm_serve.input_fn(body, "text/csv; header=absent")) == ["review", "great food"]  # as without one
    assert list(sm_serve.input_fn(body, 'text/csv; Header="Present"')) == ["great food"]
    with pytest.raises(sm_serve.RequestError) as caught:
        sm_serve.input_fn(body, "text/csv; header=yes")
    assert caught.value.status_code == 400 and 'header must be "present" or "absent"' in caught.value.message
    with pytest.raises(sm_serve.RequestError) as caught:
        sm_serve.input_fn(b"review\n", "text/csv; header=present")  # the header alone
    assert caught.value.status_code == 400 and "no review text" in caught.value.message
    with pytest.raises(sm_serve.RequestError) as caught:
        sm_serve.input_fn(b"label,text\n2,great food\nawful\n", "text/csv; header=present")
    assert caught.value.status_code == 400 and "CSV record 3 has 1 column(s), but the header (label,text) names 2" \
        in caught.value.message



@pytest.mark.parametrize("body", [
    b"label,text\npositive,great food, friendly staff\nnegative,cold\n",  # an unquoted comma in a review
    b'"Class Index","Title","Description"\n"2","Great","food"\n"1","Cold"\n',  # Zhang: the class and 1+ texts
])
def test_a_csv_request_with_header_present_answers_every_text_column_as_training_reads_it(tmp_path, body):
    """With the class first (label,text), only the column under the header's text name was answered: a review
    with an unquoted comma was cut at it (training and predict read every column after the class)."""
    (tmp_path / "request.csv").write_bytes(body)
    assert list(sm_serve.input_fn(body, "text/csv; header=present")) == \
        read_labeled(str(tmp_path / "request.csv"), "csv", find_names=False).texts


def test_a_csv_request_with_header_present_and_a_record_wider_than_a_text_label_header_is_a_400():
    """With the class elsewhere (text,label), a record with an unquoted comma was answered for the wrong column
    (or half its review); training refuses such a row, the endpoint answers 400."""
    for body in (b"text,label\ngreat food, friendly staff,positive\n", b",text,label\n0,great,positive,extra\n"):
        with pytest.raises(sm_serve.RequestError) as caught:
            sm_serve.input_fn(body, "text/csv; header=present")
        assert caught.value.status_code == 400 and "record 2 has" in caught.value.message \
            and "quote the field" in caught.value.message

def test_batch_transform_skips_only_a_header_row_with_header_present(monkeypatch):
    """Every mini-batch carries the job's content type, but only the first holds the file's header: a later one's
    first record is a review."""
    monkeypatch.setenv("SAGEMAKER_BATCH", "true")
    assert list(sm_serve.input_fn(b"label,text\n2,great food\n", "text/csv; header=present")) == ["great food"]
    assert list(sm_serve.input_fn(b"great food\nawful\n", "text/csv; header=present")) == ["great food", "awful"]
    # pandas' df[["review"]].to_csv(index=False): a header of one text column was answered as a review
    assert list(sm_serve.input_fn(b"Review\r\ngreat food\r\n", "text/csv; header=present")) == ["great food"]
    assert list(sm_serve.input_fn(b"great food\nreview\n", "text/csv; header=present")) == ["great food", "review"]
    monkeypatch.setenv("SAGEMAKER_BATCH", "false")
    assert list(sm_serve.input_fn(b"great food\nawful\n", "text/csv; header=present")) == ["awful"]


def test_a_job_reads_the_columns_its_label_column_and_text_column_hyperparameters_name(source_dir, splits, tmp_path):
    """A table exported with more columns than a class and a text, whose class column has a name training does not
    know (the airline tweets' ``airline_sentiment``): the job's ``label_column`` and ``text_column`` choose them, in
    both channels (the train channel's file alone was "cannot detect the format")."""
    import pandas as pd

    train, test = splits

    def table(data):
        return lambda p: pd.DataFrame({"tweet_id": range(10**17, 10**17 + len(data)), "airline_sentiment": data.labels,
                                       "airline": ["United"] * len(data), "text": data.texts}).to_csv(p, index=False)

    env = make_container(tmp_path, {"train": {"a.csv": table(train.head(400))}, "test": {"b.csv": table(test.head(100))}})
    bare = job_in_process(source_dir, env, args_for(epochs=1, progress="False"))
    assert bare.returncode != 0 and "error:" in bare.stderr and "--" not in bare.stderr, bare.stderr
    assert "say which to read: the job's hyperparameters label_column=NAME and text_column=NAME" in bare.stderr
    ok = job_in_process(source_dir, env, args_for(epochs=1, progress="False", label_column="airline_sentiment",
                                                  text_column="text"))
    assert ok.returncode == 0, ok.stderr
    assert "left out: 'tweet_id', 'airline'" in ok.stdout + ok.stderr
    assert "val_accuracy=nan;" not in ok.stdout  # the test channel was read with the same columns
    assert Predictor.load(tmp_path / "model").config["num_classes"] == len(set(train.head(400).labels))


@pytest.mark.parametrize("hyperparameters, said", [
    ({"label_column": "rating"}, "label_column='rating': no column of that name"),
    ({"text_column": "text,TEXT"}, "text_column='text': column 'text' is named more than once"),
    ({"label_column": "label", "text_column": "label"}, "cannot be both the class (label_column) and text (text_column)"),
    ({"label_column": "label", "format": "fasttext"}, "not of fastText format (format='fasttext')"),
])
def test_a_jobs_column_refusals_name_its_hyperparameters_not_the_clis_flags(hyperparameters, said, source_dir, tmp_path):
    """A job's label_column or text_column that names no column (or one twice, or the class column) was refused as
    "--label-column rating: no column of that name": a flag of the command line; a job has hyperparameters."""
    rows = "".join(f"{label},review number {i} was {label}\n" for i, label in enumerate(["1", "2"] * 20))
    env = make_container(tmp_path, {"train": {"a.csv": lambda p: open(p, "w").write("label,text\n" + rows)}})
    job = job_in_process(source_dir, env, args_for(epochs=1, progress="False", **hyperparameters))
    assert job.returncode != 0 and said in job.stderr and "--" not in job.stderr.splitlines()[-1], job.stderr


@pytest.mark.parametrize("value, columns", [
    ("['title', 'text']", ("title", "text")),  # hyperparameters={"text_column": ["title", "text"]}, via the toolkit
    ('["title", "text"]', ("title", "text")),
    ("title,text", ("title", "text")),
    ("text", ("text",)),
    ("none", None),
])
def test_the_text_column_hyperparameter_takes_a_list_as_the_sdk_sends_one(value, columns):
    """The SDK sends a list hyperparameter as JSON; the training toolkit passes it on as Python writes the list,
    ``['title', 'text']``, which was read as the column names ``['title'`` and ``'text']``: the job stopped."""
    from fasttext_lib.columns import Columns, csv_columns

    args, _ = sm_train.parse_hyperparameters(["--label_column", "airline_sentiment", "--text_column", value])
    chosen = csv_columns("auto", args.label_column, [args.text_column] if args.text_column else None)
    assert chosen == Columns("airline_sentiment", columns or ())


@pytest.mark.parametrize("header", ["", "; header=present"])
def test_an_unnamed_series_with_pandas_index_is_answered_for_its_texts(served, header):
    """pd.Series(texts).to_csv() (shuffled): ,0 over the row numbers and the texts. Its header was answered as a
    review and every row number as a word of its text (one answer more than the texts); each text now, in order."""
    import pandas as pd

    texts = [f"review {i}: the food was {'great' if i % 3 else 'cold'}" for i in range(30)]
    series = pd.Series(texts).sample(frac=1, random_state=1)
    body = series.to_csv()
    assert body.startswith(",0\n")
    answers = sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv" + header), served[0])
    assert len(answers) == len(texts) and answers == served[1].predict(list(series))


def _tar_gz_of(path, members):
    """A model.tar.gz at ``path`` holding ``members`` (``{name: bytes}``)."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_fetch_job_model_of_a_cut_off_or_foreign_archive_is_one_line_and_leaves_nothing(bundle, tmp_path):
    # A download cut short ended in gzip's EOFError (a traceback), and a file that is no tar archive in
    # tarfile's message over five lines, one per compression it tried.
    whole = _tar_gz_of(tmp_path / "model.tar.gz", {n: open(os.path.join(bundle, n), "rb").read()
                                                   for n in bundle_names(bundle)}).read_bytes()
    cases = {"cut.tar.gz": whole[:len(whole) // 2], "start.tar.gz": whole[:100], "text.tar.gz": b"not an archive"}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(FastTextError) as raised:
            fetch_job_model(str(tmp_path / name), str(tmp_path / "fetched"))
        assert "\n" not in str(raised.value) and "is not a readable model.tar.gz" in str(raised.value), name
        assert not (tmp_path / "fetched").exists()


def test_fetch_job_model_that_cannot_publish_leaves_no_new_folder(bundle, tmp_path, monkeypatch):
    """A job's model fetched into a new nested folder (``models/run1/model``) whose publish failed (a full disk)
    left ``models/run1`` behind, empty."""
    import errno

    from fasttext_lib import storage

    archive = _tar_gz_of(tmp_path / "model.tar.gz", {n: open(os.path.join(bundle, n), "rb").read()
                                                     for n in bundle_names(bundle)})

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(storage.sets, "_move_hashing", full)
    monkeypatch.setattr(storage.sets, "_copy_hashing", full)
    with pytest.raises(FastTextError, match="No space left on device"):
        fetch_job_model(str(archive), str(tmp_path / "models" / "run1" / "model"))
    assert not (tmp_path / "models").exists()


def test_fetch_job_model_of_a_config_json_naming_no_file_is_one_line(bundle, tmp_path):
    config = json.loads(open(os.path.join(bundle, "config.json")).read())
    config["files"]["model.params"]["object"] = None
    archive = _tar_gz_of(tmp_path / "model.tar.gz", {"config.json": json.dumps(config).encode()})
    with pytest.raises(FastTextError, match="holds no model bundle"):
        fetch_job_model(str(archive), str(tmp_path / "fetched"))
    assert not (tmp_path / "fetched").exists()


@pytest.mark.usefixtures("no_pause_between_rereads")  # (a file stays missing: no reread can find it)
def test_fetch_job_model_names_what_the_archive_lacks_not_a_staging_folder(bundle, tmp_path):
    # The reason named the temporary folder the archive was extracted to, deleted by the time it was read.
    members = {n: open(os.path.join(bundle, n), "rb").read() for n in bundle_names(bundle)}
    params = next(n for n in members if n.startswith("model-"))
    del members[params]
    archive = _tar_gz_of(tmp_path / "model.tar.gz", members)
    with pytest.raises(FastTextError, match="holds no model bundle") as raised:
        fetch_job_model(str(archive), str(tmp_path / "fetched"))
    assert "fasttext_lib-staging" not in str(raised.value)
    assert "model.params" in str(raised.value)


@pytest.mark.parametrize("hyperparameters, message", [
    ({"lr": float("nan")}, "lr must be a positive finite number"),
    ({"epochs": -3}, "epochs must be a positive integer"),
    ({"lrr": 0.1}, r"unknown hyperparameter\(s\): lrr \(did you mean lr\?\)"),
    ({"learning_rate": 0.1}, r"learning_rate \(did you mean lr\?\)"),
    ({"optimizer": "adamw"}, "optimizer must be one of"),
    ({"emsize": {1, 2}}, "emsize: .* is not a JSON value"),
    ([("lr", 0.1)], "hyperparameters must be a dict"),
    # each stopped the job once its instance was up, in the same words
    ({"ctx": "tpu"}, r"^unknown ctx 'tpu': use auto, cpu, cpu:N, gpu, gpu:N or gpu:0,1$"),
    ({"ctx": "gpu:x"}, r"^bad ctx 'gpu:x': device ids must be non-negative integers"),
    ({"epochs": 10**20}, r"^epochs must be at most 100000 .*, got 100000000000000000000$"),
    # a name that is a number was only logged as ignored, by the job and by this check: the job trained without it
    ({"5": 1}, r"^unknown hyperparameter\(s\): 5; known: "),
    ({"55": 1, "lr": 0.1}, r"^unknown hyperparameter\(s\): 55; known: "),
    # "" was passed: the job only logged it as ignored; "-" was refused as "unknown hyperparameter(s): epochs (did you
    # mean epochs?)", the toolkit's "--" for it ending the job's options
    ({"": 1, "epochs": 2}, r"^bad hyperparameter name\(s\): '' \(a name must not be empty, blank or only dashes\)$"),
    ({"-": 1, "epochs": 2}, r"^bad hyperparameter name\(s\): '-' \(a name must not be empty, blank or only dashes\)$"),
    ({"--": 1, " ": 2}, r"^bad hyperparameter name\(s\): ' ', '--' \(a name must not be empty, blank or only dashes\)$"),
    # the SDK sends a list as JSON, the toolkit passes it on as Python writes it: the class column "['a', 'b']"
    ({"label_column": ["a", "b"]}, r"^hyperparameter label_column must be one value \(a string, number or boolean\), "
                                   r"got \['a', 'b'\]: the job would read it as the text \"\['a', 'b'\]\"$"),
    ({"epochs": [3]}, r"^hyperparameter epochs must be one value"),
    ({"ngrams": {"a": 1}}, r"^hyperparameter ngrams must be one value"),
    ({"text_column": ["title", 5]}, r"^hyperparameter text_column must be one value .* or a list of column names"),
    ({"text_column": []}, r"^hyperparameter text_column must be one value .* or a list of column names"),
])
def test_make_estimator_refuses_hyperparameters_the_job_would_refuse_before_any_instance_starts(
        sm, source_dir, hyperparameters, message):
    # The entry point refuses them in one line, but only once the instance is up and the image pulled
    # (minutes, billed); a set (not JSON) or a list of pairs failed in the SDK as a TypeError.
    from fasttext_lib.sagemaker_utils import make_estimator

    with pytest.raises(FastTextError, match=message):
        make_estimator(sm.bucket, "ft", hyperparameters=hyperparameters, role=ROLE, session=sm.session,
                       source_dir=source_dir)


def test_make_estimator_keeps_the_hyperparameters_a_job_takes(sm, source_dir):
    from fasttext_lib.sagemaker_utils import make_estimator

    hps = {"lr": None, "epochs": 2, "text_column": ["title", "text"], "label_names": {"1": "neg", "2": "pos"},
           "checkpoint_dir": "none", "_tuning_objective_metric": "validation:accuracy", "format": "csv"}
    estimator = make_estimator(sm.bucket, "ft", hyperparameters=hps, role=ROLE, session=sm.session, source_dir=source_dir)
    assert json.loads(estimator.hyperparameters()["epochs"]) == 2


@pytest.mark.parametrize("bucket, arguments, message", [
    ("s3://{bucket}", {}, "bucket must be a bucket name"),
    ("{bucket}/ft", {}, "bucket must be a bucket name"),
    ("{bucket}", {"instance_type": 5}, "instance_type must be a SageMaker instance type"),
    ("{bucket}", {"instance_type": ""}, "instance_type must be a SageMaker instance type"),
    ("{bucket}", {"instance_count": "2"}, "instance_count must be a positive integer"),
    ("{bucket}", {"instance_count": 0}, "instance_count must be a positive integer"),
    ("{bucket}", {"instance_count": -2}, "instance_count must be a positive integer"),
    # each stopped the job at its start, the instances up and billed: a kvstore MXNet has not, a dist_* kvstore on
    # one instance (make_estimator starts no parameter server there), another on several
    ("{bucket}", {"hyperparameters": {"kvstore": "bogus"}}, "kvstore must be one of"),
    ("{bucket}", {"hyperparameters": {"kvstore": "dist_sync"}},
     r"^kvstore 'dist_sync' trains on several instances .*instance_count=1"),
    ("{bucket}", {"hyperparameters": {"kvstore": "device"}, "instance_count": 2},
     r"^kvstore 'device' cannot train on 2 instances; use dist_sync"),
])
def test_make_estimator_refuses_a_mistaken_bucket_or_instance_in_one_line(sm, source_dir, bucket, arguments, message):
    # s3://bucket made output_path s3://s3://bucket/...; an int instance type was the SDK's ValueError, a
    # string count a TypeError, and count 0 an estimator that CreateTrainingJob refuses.
    from fasttext_lib.sagemaker_utils import make_estimator

    with pytest.raises(FastTextError, match=message):
        make_estimator(bucket.format(bucket=sm.bucket), "ft", role=ROLE, session=sm.session, source_dir=source_dir,
                       **arguments)


@pytest.mark.parametrize("arguments, message", [
    # the job stopped at its start, billed: "SM_NUM_GPUS is 1 but this job's MXNet sees 0 GPU(s)"
    ({"instance_type": "ml.p3.2xlarge", "image_uri": f"{REGISTRY}/mxnet-training:1.9.0-cpu-py38"},
     r"^image_uri .*1\.9\.0-cpu-py38 is a CPU image, and ml\.p3\.2xlarge a GPU instance: .*leave image_uri out"),
    # MXNet's CUDA build on an instance without a GPU: the job could not start MXNet
    ({"instance_type": "ml.m5.xlarge", "image_uri": f"{REGISTRY}/mxnet-training:1.9.0-gpu-py38"},
     r"^image_uri .*1\.9\.0-gpu-py38 is a GPU image, and ml\.m5\.xlarge a CPU instance"),
])
def test_make_estimator_refuses_an_image_for_other_processors_than_the_instances(sm, source_dir, arguments, message):
    from fasttext_lib.sagemaker_utils import make_estimator

    with pytest.raises(FastTextError, match=message):
        make_estimator(sm.bucket, "ft", role=ROLE, session=sm.session, source_dir=source_dir, **arguments)
    # an image whose name says neither is the user's to know
    make_estimator(sm.bucket, "ft", role=ROLE, session=sm.session, source_dir=source_dir,
                   instance_type=arguments["instance_type"], image_uri=f"{REGISTRY}/my-fasttext:latest")


@pytest.mark.parametrize("instance_type", ["ml.trn1.2xlarge", "ml.inf1.xlarge"])
def test_make_estimator_refuses_an_instance_mxnet_has_no_image_for_in_one_line(sm, source_dir, instance_type):
    # the SDK's ValueError traceback at fit() ("Unsupported framework: mxnet")
    from fasttext_lib.sagemaker_utils import make_estimator

    with pytest.raises(FastTextError, match=rf"^instance_type {instance_type} .*no MXNet 1\.9\.0 training image"):
        make_estimator(sm.bucket, "ft", role=ROLE, session=sm.session, source_dir=source_dir, instance_type=instance_type)


def test_make_estimator_on_local_instances_without_a_local_session_is_one_line(sm, source_dir):
    # the SDK's RuntimeError traceback ("only supported with aninstance of LocalSession")
    from fasttext_lib.sagemaker_utils import make_estimator

    for instance_type in ("local", "local_gpu"):
        with pytest.raises(FastTextError, match=rf"^instance_type {instance_type} runs the job in Docker on this machine, "
                                                r"which needs session=sagemaker\.local\.LocalSession\(\)"):
            make_estimator(sm.bucket, "ft", role=ROLE, session=sm.session, source_dir=source_dir,
                           instance_type=instance_type)


@pytest.mark.parametrize("environment, message", [
    # the job's start ended in these lines, the instance up and billed
    ({"OMP_NUM_THREADS": "abc"}, r"^environment variable OMP_NUM_THREADS='abc' is not a whole number"),
    ({"FASTTEXT_CLUSTER_TIMEOUT": "0"}, r"^FASTTEXT_CLUSTER_TIMEOUT must be a number of seconds above 0, got '0'"),
    # CreateTrainingJob's parameter check in a botocore traceback, at fit()
    ({"FASTTEXT_CLUSTER_TIMEOUT": 3600}, r"^environment\['FASTTEXT_CLUSTER_TIMEOUT'\] must be a string \(the job's "
                                         r"environment holds text\), got 3600: give '3600'"),
    (["OMP_NUM_THREADS=1"], r"^environment must be a dict of variable names to values"),
])
def test_make_estimator_refuses_an_environment_the_job_cannot_start_with(sm, source_dir, environment, message):
    from fasttext_lib.sagemaker_utils import make_estimator

    with pytest.raises(FastTextError, match=message):
        make_estimator(sm.bucket, "ft", role=ROLE, session=sm.session, source_dir=source_dir, environment=environment)


def test_make_estimator_passes_an_environment_the_job_takes(sm, source_dir):
    from fasttext_lib.sagemaker_utils import make_estimator

    estimator = make_estimator(sm.bucket, "ft", role=ROLE, session=sm.session, source_dir=source_dir,
                               environment={"FASTTEXT_CLUSTER_TIMEOUT": "3600", "OMP_NUM_THREADS": "2"})
    estimator.fit({"train": f"s3://{sm.bucket}/ft/data/x.train"}, wait=False, job_name="ft-environment")
    assert sm.request("CreateTrainingJob")["Environment"] == {"FASTTEXT_CLUSTER_TIMEOUT": "3600", "OMP_NUM_THREADS": "2"}


def test_make_estimator_takes_numpy_and_dist_kvstore_instance_counts(sm, source_dir):
    """A NumPy count (a notebook's computed one) passed the check, and the SDK sent it to CreateTrainingJob, whose
    parameter check (an int, not numpy.int64) refused it in a botocore traceback."""
    import numpy as np

    from fasttext_lib.sagemaker_utils import make_estimator

    estimator = make_estimator(sm.bucket, "ft", instance_count=np.int64(2), role=ROLE, session=sm.session,
                               source_dir=source_dir, hyperparameters={"kvstore": "dist_async"})
    estimator.fit({"train": f"s3://{sm.bucket}/ft/data/x.train"}, wait=False, job_name="ft-numpy-count")
    assert sm.request("CreateTrainingJob")["ResourceConfig"]["InstanceCount"] == 2


def test_make_estimator_and_make_model_refuse_a_missing_bucket_before_any_job(sm, source_dir, monkeypatch):
    """A missing output, code, checkpoint or model bucket was found only by the job (minutes later, billed) or the
    endpoint's start: refused at once, in one line naming it. Where the check is refused (no s3:ListBucket, 403),
    nothing is said: the job's own access decides."""
    from botocore.exceptions import ClientError

    from fasttext_lib.sagemaker_utils import make_estimator, make_model

    common = dict(role=ROLE, session=sm.session, source_dir=source_dir)
    for make in (lambda: make_estimator("no-such-bucket-3c", "ft", **common),
                 lambda: make_estimator(sm.bucket, "ft", checkpoint_s3_uri="s3://no-such-bucket-3c/ck", **common),
                 lambda: make_model(f"s3://{sm.bucket}/p/model.tar.gz", "no-such-bucket-3c", "ft", **common),
                 lambda: make_model("s3://no-such-bucket-3c/p/model.tar.gz", sm.bucket, "ft", **common)):
        with pytest.raises(FastTextError) as refused:
            make()
        assert str(refused.value).startswith("S3 bucket does not exist: no-such-bucket-3c (for s3://no-such-bucket-3c/")
        assert "\n" not in str(refused.value)
    assert not [op for op, _ in sm.requests if op.startswith("Create")]

    def forbidden(**kwargs):
        raise ClientError({"Error": {"Code": "403", "Message": "Forbidden"}}, "HeadBucket")

    monkeypatch.setattr(sm.session.s3_client, "head_bucket", forbidden)
    assert make_estimator("no-such-bucket-3c", "ft", **common).output_path == "s3://no-such-bucket-3c/ft/jobs"
    assert make_model("s3://no-such-bucket-3c/p/model.tar.gz", "no-such-bucket-3c", "ft", **common).name is None


def test_make_model_refuses_a_bucket_uri_for_a_bucket_name(sm, source_dir):
    from fasttext_lib.sagemaker_utils import make_model

    with pytest.raises(FastTextError, match="bucket must be a bucket name"):
        make_model(f"s3://{sm.bucket}/p/model.tar.gz", f"s3://{sm.bucket}", "ft", role=ROLE, session=sm.session,
                   source_dir=source_dir)


@pytest.mark.parametrize("arguments, message", [
    ({"max_jobs": 0}, r"max_jobs must be a positive integer, got 0"),
    ({"max_jobs": "4"}, r"max_jobs must be a positive integer, got '4'"),
    ({"max_parallel_jobs": -1}, r"max_parallel_jobs must be a positive integer"),
    ({"hyperparameter_ranges": {"lr": (0.1, 1)}}, r"hyperparameter_ranges\['lr'\] must be a sagemaker\.tuner parameter "
                                                  r"range, e\.g\. ContinuousParameter\(0\.1, 1\).*; got \(0\.1, 1\)"),
    ({"hyperparameter_ranges": {"learning_rate": None}}, r"hyperparameter_ranges: unknown hyperparameter\(s\): "
                                                         r"learning_rate \(did you mean lr\?\)"),
    ({"hyperparameter_ranges": []}, r"hyperparameter_ranges must be a dict of hyperparameter names to ranges"),
    ({"hyperparameter_ranges": {"5": None}}, r"hyperparameter_ranges: unknown hyperparameter\(s\): 5; known: "),
    ({"hyperparameter_ranges": {"": None}}, r"^hyperparameter_ranges: bad hyperparameter name\(s\): '' \(a name must "
                                            r"not be empty, blank or only dashes\)$"),
    ({"hyperparameter_ranges": {"-": None}}, r"^hyperparameter_ranges: bad hyperparameter name\(s\): '-' \(a name must "
                                             r"not be empty, blank or only dashes\)$"),
])
def test_make_tuner_refuses_mistaken_arguments_in_one_line(sm, source_dir, arguments, message):
    # they were accepted (a tuner CreateHyperParameterTuningJob refuses, billed nothing but lost the notebook's run)
    # or failed in the SDK with a TypeError / AttributeError
    from fasttext_lib.sagemaker_utils import make_estimator, make_tuner

    estimator = make_estimator(sm.bucket, "ft", role=ROLE, session=sm.session, source_dir=source_dir)
    if list(arguments.get("hyperparameter_ranges") or []) in (["learning_rate"], ["5"], [""], ["-"]):
        from sagemaker.tuner import ContinuousParameter

        arguments = {"hyperparameter_ranges": {name: ContinuousParameter(0.1, 1)
                                               for name in arguments["hyperparameter_ranges"]}}
    with pytest.raises(FastTextError, match=message):
        make_tuner(estimator, **arguments)


@pytest.mark.parametrize("ranges, message", [
    ({"lr": ("Continuous", -1, 0.5)}, "hyperparameter_ranges['lr']: ContinuousParameter(-1, 0.5) gives trials lr=-1, "
                                      "which the training job refuses: lr must be a positive finite number, got -1.0"),
    ({"epochs": ("Integer", 0, 10)}, "hyperparameter_ranges['epochs']: IntegerParameter(0, 10) gives trials epochs=0, "
                                     "which the training job refuses: epochs must be a positive integer, got 0"),
    ({"epochs": ("Integer", 10, 10**6)},
     "hyperparameter_ranges['epochs']: IntegerParameter(10, 1000000) gives trials epochs=1000000, which the training "
     "job refuses: epochs must be at most 100000"),
    ({"optimizer": ("Categorical", ["sgd", "adagrad"])},
     "hyperparameter_ranges['optimizer']: CategoricalParameter(['sgd', 'adagrad']) gives trials optimizer='adagrad', "
     "which the training job refuses: optimizer must be one of sgd, adam, got 'adagrad'"),
    ({"dropout": ("Continuous", 0, 1)}, "gives trials dropout=1, which the training job refuses: dropout must be in "
                                        "[0, 1), got 1.0"),
    # a continuous range over an integer hyperparameter: its ends are whole, almost every trial's value is not
    ({"emsize": ("Continuous", 20, 200)}, "hyperparameter_ranges['emsize']: ContinuousParameter(20, 200) gives trials "
                                          "emsize=131.2"),
    ({"lr": ("Continuous", 1, 0.1)}, "hyperparameter_ranges['lr']: ContinuousParameter(1, 0.1) must go from a number "
                                     "to a number no smaller"),
    # each range alone is taken (ngrams 1 makes no n-gram table); together, emsize 4000 x 2M buckets is too big a table
    ({"emsize": ("Integer", 100, 4000), "ngrams": ("Categorical", [1, 2])},
     "hyperparameter_ranges: a trial with emsize=4000, ngrams='2' would be refused by the training job: emsize and "
     "buckets: 2,000,002 rows x emsize 4000"),
])
def test_make_tuner_refuses_ranges_whose_trials_the_job_refuses(sm, source_dir, ranges, message):
    """Such a tuner was made, and its tuning job's trials failed at their start one after the other, each billed."""
    from sagemaker import tuner

    from fasttext_lib.sagemaker_utils import make_estimator, make_tuner

    def parameter(kind, *arguments):
        return getattr(tuner, f"{kind}Parameter")(*arguments)

    estimator = make_estimator(sm.bucket, "ft", role=ROLE, session=sm.session, source_dir=source_dir)
    with pytest.raises(FastTextError) as caught:
        make_tuner(estimator, hyperparameter_ranges={name: parameter(*r) for name, r in ranges.items()})
    assert message in str(caught.value) and "\n" not in str(caught.value)
    # ranges within the job's bounds are taken, as are the defaults (emsize 200 with ngrams 3: a 400M-value table)
    fine = {"lr": tuner.ContinuousParameter(0.05, 1.0), "epochs": tuner.IntegerParameter(1, 30),
            "optimizer": tuner.CategoricalParameter(["sgd", "adam"]), "dropout": tuner.ContinuousParameter(0, 0.5),
            "ngrams": tuner.CategoricalParameter([1, 2, 3])}
    assert make_tuner(estimator, hyperparameter_ranges=fine).hyperparameter_ranges() is not None
    assert make_tuner(estimator).hyperparameter_ranges() is not None


def test_make_tuner_of_something_else_than_an_estimator_is_one_line():
    from fasttext_lib.sagemaker_utils import make_tuner

    with pytest.raises(FastTextError, match=r"make_tuner needs the estimator make_estimator returns, got 'x'"):
        make_tuner("x")


def test_a_csv_answer_stays_one_line_a_review_when_a_class_holds_a_line_break():
    """A class read from a CSV record whose quoted class field spans lines ("a\\nb") trains and is answered; the CSV
    writer quoted it over two lines, so Batch Transform's one output line per input line (join_source="Input") was
    lost from that review on. A line break in a field is written as the data's CSV writes one: the two characters
    \\n (\\r for a carriage return)."""
    answers = sm_serve.Answers([{"label": "a\nb", "probability": 0.75, "class_id": "a\nb"},
                                {"label": "c\rd", "probability": 0.25, "class_id": "c\r\nd"}])
    body, media = sm_serve.output_fn(answers, "text/csv")
    assert media == "text/csv"
    assert read_csv_lines(body) == [["a\\nb", "0.75", "a\\nb"], ["c\\rd", "0.25", "c\\r\\nd"]]
    assert json.loads(sm_serve.output_fn(answers, "application/json")[0])[0]["class_id"] == "a\nb"  # JSON: as is


@pytest.mark.parametrize("instance_type, hint", [
    ("m5.xlarge", " (did you mean 'ml.m5.xlarge'?)"), ("ML.M5.XLARGE", " (did you mean 'ml.m5.xlarge'?)"),
    ("ml.m5.xlarge ", " (did you mean 'ml.m5.xlarge'?)"), ("xlarge", ""), ("ml.m5", ""),
])
def test_an_instance_type_the_sdk_refuses_is_named_before_any_session(instance_type, hint):
    """The SDK's "Invalid SageMaker instance type" ValueError came when the job or endpoint was made (02: after the
    local training). Refused first, with the type meant where one is plain; real types pass (the next test)."""
    from fasttext_lib.sagemaker_utils import check_deployment

    with pytest.raises(FastTextError, match=rf"^instance_type must be a SageMaker instance type such as 'ml.m5.xlarge', "
                                            rf"got {re.escape(repr(instance_type))}{re.escape(hint)}$"):
        check_deployment("my-bucket", "p", role="arn:aws:iam::123456789012:role/R", instance_type=instance_type)


def test_real_instance_types_pass_the_instance_type_check(monkeypatch):
    """(Once, not per refused type above: each makes a session, ~0.4 s.)"""
    from fasttext_lib.sagemaker_utils import check_deployment

    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")  # (the session needs one; it calls no service)
    for real in ("ml.p4de.24xlarge", "ml.g4dn.xlarge", "ml.trn1n.32xlarge", "local"):
        assert check_deployment("my-bucket", "p", role="arn:aws:iam::123456789012:role/R", instance_type=real).endswith("/R")


def test_a_session_without_an_aws_region_is_one_line(monkeypatch, tmp_path):
    """Off SageMaker, with credentials but no region (S3 needs none: notebooks 01 and 02 read, train and save), 02's
    bundle cell ended in the SDK's "Must setup local AWS configuration with a region supported by SageMaker"
    ValueError traceback, after the bundle was saved; so did 02's and 04's check cells with a job or a deploy."""
    from fasttext_lib.sagemaker_utils import sagemaker_session

    for name in ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    with pytest.raises(FastTextError, match=r"^the sagemaker SDK needs an AWS region \(S3 alone does not\): set "
                                            r"AWS_DEFAULT_REGION, or region in ~/.aws/config$"):
        sagemaker_session()
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    assert sagemaker_session().boto_region_name == "eu-west-1"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_while_the_job_runs_exits_with_the_signals_status(source_dir, tmp_path, sig):
    """StopTrainingJob or a spot interruption once the job runs (main's stop_on_signals armed: here as the training
    module is imported, a point of the run fixed by the import, not by a sleep): the stop's line was re-raised as a
    user error, exit status 2, where the same signal while the job starts, and the CLI's stop, exit 128 + the
    signal's number (143, 130). The same line and failure reason, now with the signal's status too."""
    env = make_container(tmp_path, {"train": {"a.train": GOOD}})
    with open(os.path.join(env["PYTHONPATH"], "sitecustomize.py"), "a") as f:
        f.write(SIGNAL_AT_IMPORT)
    env.update(SIGNAL_AT_IMPORT="fasttext_lib.train", SIGNAL_NUMBER=str(int(sig)))
    r = subprocess.run([sys.executable, "fasttext_lib/entry_point.py", *map(str, args_for(epochs=1))],
                       cwd=str(source_dir), env=env, capture_output=True, text=True, timeout=300)
    says = {signal.SIGTERM: "terminated (SIGTERM)", signal.SIGINT: "interrupted (SIGINT)"}[sig]
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert (r.returncode, errors) == (128 + int(sig), [f"error: {says}; stopped and cleaned up"]), \
        r.stdout + r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    assert (tmp_path / "output" / "failure").read_text() == errors[0]
    assert os.listdir(tmp_path / "model") == []


@pytest.mark.parametrize("where", ["checkpoint_s3_uri", "checkpoint_dir hyperparameter"])
def test_a_spot_interruption_stop_says_the_checkpoint_the_restarted_job_resumes_from(source_dir, tmp_path, monkeypatch,
                                                                                     where):
    """SIGTERM of a spot interruption after epoch 1's checkpoint: the job's line and FailureReason said 'terminated
    (SIGTERM); stopped and cleaned up', as if the checkpoints were gone. Now they say which checkpoint is kept, where
    SageMaker copies it (the job's checkpoint_s3_uri, for /opt/ml/checkpoints) and that a job started with it resumes
    from it; the next job does."""
    if where == "checkpoint_s3_uri":
        ckpt, args = _synced_checkpoints(tmp_path, monkeypatch), args_for(epochs=2, batch_size=16)
        resumes = ("which SageMaker copies to the job's checkpoint_s3_uri: a job started with that checkpoint_s3_uri "
                   "(a managed spot training restart is) resumes from it")
    else:
        ckpt = tmp_path / "ck"
        args = args_for(epochs=2, batch_size=16, checkpoint_dir=ckpt)
        resumes = "a job started with the same checkpoint_dir hyperparameter resumes from it"
    real_format = sm_train.format_epoch

    def spot_interruption_after_epoch_1(row):
        if row["epoch"] == 1:
            signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)  # what SIGTERM arriving here runs
        return real_format(row)

    monkeypatch.setattr(sm_train, "format_epoch", spot_interruption_after_epoch_1)
    root = tmp_path / "first"
    r = job_in_process(source_dir, make_container(root, {"train": {"a.train": GOOD}}), args)
    line = (f"error: terminated (SIGTERM); stopped and cleaned up, keeping the checkpoint of epoch 1 in "
            f"{ckpt / 'epoch-0001'}, {resumes}")
    if where != "checkpoint_s3_uri":
        line = line.replace(", a job", ": a job")
    assert (r.returncode, r.stderr.strip().splitlines()[-1]) == (143, line), r.stdout + r.stderr
    assert (root / "output" / "failure").read_text() == line
    monkeypatch.setattr(sm_train, "format_epoch", real_format)
    again = job_in_process(source_dir, make_container(tmp_path / "again", {"train": {"a.train": GOOD}}), args)
    assert again.returncode == 0 and "epoch 1 of 2 done" in again.stdout + again.stderr, again.stdout + again.stderr


@pytest.mark.parametrize("bad", ["no classes", "not text"])
def test_a_test_channel_the_job_cannot_read_is_refused_before_the_train_channel_is_read(source_dir, tmp_path,
                                                                                       monkeypatch, bad):
    """The test channel was read after the whole train channel (minutes at Yelp size, and it cannot be changed by
    what that holds): a test file the job cannot read (lines without a class; bytes that are no text) failed the job
    only then. It is read first now, and refused before the train channel is opened."""
    writes = {"no classes": _write(b"just a review without its class\n" * 5),
              "not text": _write(bytes(range(256)) * 40)}

    def read_channel(path, fmt="auto", name="train", *args, **kwargs):
        if name == "train":
            raise AssertionError("the train channel was read before the test channel was refused")
        return real_read_channel(path, fmt, name, *args, **kwargs)

    real_read_channel = sm_train.read_channel
    monkeypatch.setattr(sm_train, "read_channel", read_channel)
    root = tmp_path / "job"
    channels = {"train": {"a.train": GOOD}, "test": {"a.test": writes[bad]}}
    r = job_in_process(source_dir, make_container(root, channels), args_for(epochs=1))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "a.test" in last and "AssertionError" not in last, last
    assert (root / "output" / "failure").read_text() == last
    assert os.listdir(root / "model") == []


def test_a_bad_label_names_file_in_the_train_channel_is_refused_before_the_test_channel_is_read(source_dir, tmp_path,
                                                                                              monkeypatch):
    """The train channel's label names files are read before its data, so that a bad one fails the job at once; with
    the test channel read first (above), a bad one was found only after the whole test channel (a large one: minutes).
    They are read before either channel's data now."""
    from fasttext_lib import data

    def read_labeled(*args, **kwargs):
        raise AssertionError("the test channel's data was read before the train channel's names file was refused")

    monkeypatch.setattr(data, "read_labeled", read_labeled)
    root = tmp_path / "job"
    channels = {"train": {"a.train": GOOD, "classes.txt": _write(b"x\nx\n")}, "test": {"a.test": GOOD}}
    r = job_in_process(source_dir, make_container(root, channels), args_for(epochs=1))
    assert r.returncode == 2, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert re.search(r"classes.txt: classes '1' and '2' have the same name 'x'", last), last
    assert (root / "output" / "failure").read_text() == last


def test_a_stop_as_training_returns_names_the_checkpoint_of_the_last_epoch(source_dir, tmp_path, monkeypatch):
    """The job confirmed the last epoch's checkpoint as the one kept only once train() had returned: a SIGTERM in
    between said 'stopped and cleaned up' and nothing of the checkpoint the next job resumes from."""
    import fasttext_lib.train as train_module

    ckpt = tmp_path / "ck"
    args = args_for(epochs=2, batch_size=16, checkpoint_dir=ckpt)
    real_train = train_module.train

    def train_then_sigterm(*a, **kw):
        trained = real_train(*a, **kw)
        signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)  # what SIGTERM arriving here runs
        return trained

    monkeypatch.setattr(train_module, "train", train_then_sigterm)
    r = job_in_process(source_dir, make_container(tmp_path / "first", {"train": {"a.train": GOOD}}), args)
    assert (r.returncode, r.stderr.strip().splitlines()[-1]) == (143, (
        f"error: terminated (SIGTERM); stopped and cleaned up, keeping the checkpoint of epoch 2 in "
        f"{ckpt / 'epoch-0002'}: a job started with the same checkpoint_dir hyperparameter resumes from it")), r.stderr


@pytest.mark.parametrize("case", ["ids first under a header of text columns", "JSON Lines with a class key and no text key",
                                  "JSON Lines with a number key among the text keys"])
def test_a_jobs_columns_to_name_are_asked_as_its_hyperparameters_not_the_clis_flags(case, source_dir, tmp_path):
    """A header whose first column holds ids, JSON Lines objects with no text key training knows, or with a number key
    among the text keys asked a job's user for --label-column / --text-column: flags a job has none of."""
    from pathlib import Path

    from test_own_data import COLUMNS_TO_NAME

    name, write, asked, _ = COLUMNS_TO_NAME[case]
    env = make_container(tmp_path, {"train": {name: lambda p: write(Path(p))}})
    job = job_in_process(source_dir, env, args_for(epochs=1, progress="False"))
    said = job.stderr.strip().splitlines()[-1]
    assert job.returncode != 0 and "--" not in said, job.stderr
    assert asked + "the job's hyperparameters label_column=NAME and text_column=NAME" in said, said


@pytest.mark.parametrize("case, said", [
    ("a CSV whose capitalised classes have a space after the comma", "is read with the hyperparameter format='csv'"),
    ("a TSV with the text first", "or give the hyperparameter format='tsv' to read each line's first field as its class"),
])
def test_a_jobs_file_that_a_format_would_read_names_its_format_hyperparameter(case, said, source_dir, tmp_path):
    """A headerless file whose format detection cannot tell was told to a job's user "is read with --format csv" /
    "give --format tsv": the job's hyperparameter is format."""
    from test_own_data import _HEADERLESS_BY_WORDS, ROWS

    name, line, _, _ = _HEADERLESS_BY_WORDS[case]
    env = make_container(tmp_path, {"train": {name: lambda p: open(p, "w").write(
        "".join(line(label, text) for label, text in ROWS))}})
    job = job_in_process(source_dir, env, args_for(epochs=1, progress="False"))
    last = job.stderr.strip().splitlines()[-1]
    assert job.returncode != 0 and "--" not in last and said in last, job.stderr
    fmt = said.split("format='")[1][:3]
    assert job_in_process(source_dir, env, args_for(epochs=1, progress="False", format=fmt)).returncode == 0


def test_a_jobs_log_says_which_hyperparameter_reads_a_left_out_column_as_text(source_dir, tmp_path):
    """The job's log named the columns a CSV's reading left out with "(--text-column NAME reads a column as text)", a
    flag a job has none of: it names the job's hyperparameter."""
    rows = "".join(f"{label},review number {i} was {label},2024-01-{1 + i % 28:02d}\n"
                   for i, label in enumerate(["good", "bad"] * 20))
    env = make_container(tmp_path, {"train": {"a.csv": lambda p: open(p, "w").write("label,text,date\n" + rows)}})
    job = job_in_process(source_dir, env, args_for(epochs=1, progress="False"))
    assert job.returncode == 0, job.stderr
    assert "left out: 'date' (the hyperparameter text_column=NAME reads a column as text)" in job.stdout, job.stdout
    assert "--text-column" not in job.stdout + job.stderr


def _sigterm():
    signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)  # (what SIGTERM arriving there runs)


def _stop_as_metrics_are_written(monkeypatch, stop):
    monkeypatch.setattr(sm_train, "write_metrics", lambda *a, **kw: stop())


@pytest.mark.parametrize("stopping", ["_stop_once_published", _stop_as_metrics_are_written],
                         ids=["as its save ends", "as its metrics are written"])
def test_a_stop_once_the_bundle_is_written_says_so_and_not_how_a_job_resumes(source_dir, tmp_path, monkeypatch,
                                                                             stopping):
    """A SIGTERM once the job had written its bundle (during its metrics; or after the bundle's commit but before
    save_model returned: save_bundle removing its staging folder, the lock file's removal, the chmods) said 'stopped
    and cleaned up, keeping the checkpoint of epoch 2 in ...: a job started with the same checkpoint_dir
    hyperparameter resumes from it', as if its model were lost. The job notes the bundle as written the moment its
    config.json is in place: the line (and the FailureReason) says where."""
    if stopping == "_stop_once_published":
        from test_checkpoints import _stop_once_published as stopping

    ckpt = tmp_path / "ck"
    args = args_for(epochs=2, batch_size=16, checkpoint_dir=ckpt)
    stopping(monkeypatch, _sigterm)
    root = tmp_path / "first"
    r = job_in_process(source_dir, make_container(root, {"train": {"a.train": GOOD}}), args)
    last = r.stderr.strip().splitlines()[-1]
    assert (r.returncode, last) == (
        143, f"error: terminated (SIGTERM); stopped after the bundle was written to {root / 'model'}"), r.stderr
    assert (root / "output" / "failure").read_text() == last


def _stop_in_the_metrics_json(monkeypatch, stop):
    real = json.dump

    def dump(obj, fp, **kwargs):  # (the job's metrics.json: written, then stopped before its rename)
        real(obj, fp, **kwargs)
        if isinstance(obj, dict) and "label_names" in obj:
            stop()
    monkeypatch.setattr(sm_train.json, "dump", dump)


def _stop_in_the_history_png(monkeypatch, stop):
    from matplotlib.figure import Figure

    real = Figure.savefig

    def savefig(self, *args, **kwargs):
        real(self, *args, **kwargs)
        stop()
    monkeypatch.setattr(Figure, "savefig", savefig)


@pytest.mark.parametrize("stopping, written, cleaned", [
    (_stop_in_the_metrics_json, "the bundle was written to {model} and history.csv to {data}", "metrics.json"),
    (_stop_in_the_history_png, "the bundle was written to {model}, history.csv to {data} and metrics.json to {data}",
     "history.png")], ids=["metrics.json", "history.png"])
def test_a_stop_amid_the_jobs_metrics_names_the_files_written_and_the_one_cleaned_up(source_dir, tmp_path,
                                                                                     monkeypatch, stopping, written,
                                                                                     cleaned):
    """The job writes its bundle, then history.csv, metrics.json and history.png, each on its own. A SIGTERM amid
    metrics.json said only "stopped after the bundle was written to ...": history.csv, written and kept, went unsaid,
    and so did metrics.json, whose write was cleaned up. The line names both now."""
    stopping(monkeypatch, _sigterm)
    root = tmp_path / "job"
    r = job_in_process(source_dir, make_container(root, {"train": {"a.train": GOOD}}), args_for(epochs=1))
    monkeypatch.undo()
    data = root / "output" / "data"
    last = r.stderr.strip().splitlines()[-1]
    assert (r.returncode, last) == (
        143, f"error: terminated (SIGTERM); stopped after {written.format(model=root / 'model', data=data)} (kept); "
             f"{data / cleaned}, being written when the stop came, was cleaned up"), r.stderr
    assert (root / "output" / "failure").read_text() == last
    kept = [name for name in ("history.csv", "metrics.json") if name != cleaned]
    assert sorted(os.listdir(data)) == kept  # (no temporary left beside them)


def test_a_worker_that_ends_in_order_takes_back_its_mark_of_a_loaded_bundle(tmp_path):
    """The mark a worker leaves that it holds a bundle (sm_serve._mark_loaded: counted by a worker the model server
    restarts beside it) is taken back when the process ends in order, and its folder with the last one: every test
    process and stopped worker left an empty file under the temporary folder for good."""
    script = ("import sys, tempfile; tempfile.tempdir = sys.argv[1]; from fasttext_lib import sm_serve; "
              "sm_serve._mark_loaded('/models/a'); sm_serve._mark_loaded('/models/a'); "
              "print(sm_serve._loaded_marks('/models/a'))")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True)
    marks = done.stdout.strip()
    assert marks.startswith(str(tmp_path)) and not os.path.exists(marks), os.listdir(os.path.dirname(marks))


def test_the_sagemaker_helpers_take_an_older_buckets_name_as_the_notebooks_do(tmp_path):
    """An older us-east-1 bucket's name (capitals, underscores: S3 still answers for them) passed notebook 02's and
    04's Workspace, then their check cells (check_training_job, check_deployment: _s3_base) refused it as no bucket
    name. Both now take it; a URI, a path, a space or quotes are still refused by both."""
    from fasttext_lib.sagemaker_utils import _s3_base
    from fasttext_lib.workspace import Workspace

    assert _s3_base("My_Old.Bucket", "ft") == "s3://My_Old.Bucket/ft"
    assert Workspace("My_Old.Bucket", "ft", str(tmp_path)).models.startswith("s3://My_Old.Bucket/ft/")
    for name in ("s3://my-bucket", "my-bucket/ft", "fasttext-demo ", '""'):
        with pytest.raises(FastTextError, match="bucket must be a"):
            _s3_base(name, "ft")
        with pytest.raises(FastTextError, match="bucket must be an S3 bucket name"):
            Workspace(name, "ft", str(tmp_path))
