"""End to end through ``python -m fasttext_lib``, locally and against a real (moto) S3 endpoint."""
import argparse
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import boto3
import pytest

from conftest import BAD_TRAINING_FILES, ROOT, cli_in_process, run_cli
from fasttext_lib.cli import build_parser
from fasttext_lib.data import read_labeled
from fasttext_lib.errors import FastTextError

DIGEST_2_AND_4_CLASSES = "f3cb464e3fb4ab2400b2e82cd257ca51ec9ebf7f414ce059700b76ebf2b39c4f"  # the generator before 5+ classes were fixed
FAST = ["--epochs", "3", "--batch-size", "256", "--no-progress"]


def _last_json(stdout):
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def local_bundle(sample_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "bundle"
    r = run_cli("train", "--train", sample_dir / "train.csv", "--validation", sample_dir / "test.csv", "--output", out, *FAST)
    assert r.returncode == 0, r.stderr
    return out, r


def stored(bundle, name):
    """The path of a bundle's data file (config.json names its stored file)."""
    config = json.loads((bundle / "config.json").read_text())
    return bundle / config["files"][name]["object"]


def test_train_writes_bundle_with_metrics_and_reports_epochs(local_bundle):
    from fasttext_lib.bundle import stored_names

    out, r = local_bundle
    config = json.loads((out / "config.json").read_text())
    assert sorted(os.listdir(out)) == sorted(stored_names(config) + [".fasttext.lock"])
    # --compact auto (the default) keeps the full table: a unigram model's rows are its vocabulary, nearly all changed
    assert sorted(config["files"]) == ["metrics.json", "model.params", "vocab.json"] and "compact" not in config
    metrics = json.loads(stored(out, "metrics.json").read_text())
    assert [row["epoch"] for row in metrics["history"]] == [1, 2, 3]
    assert set(metrics["history"][0]) == {"epoch", "train_loss", "val_loss", "val_accuracy", "seconds", "samples_per_s"}
    assert len([line for line in r.stdout.splitlines() if line.startswith("{")]) == 3
    assert "trained on cpu(0)" in r.stderr


def test_evaluate_meets_accuracy_floor(local_bundle, sample_dir):
    out, _ = local_bundle
    r = run_cli("evaluate", "--model", out, "--data", sample_dir / "test.csv")
    assert r.returncode == 0, r.stderr
    metrics = _last_json(r.stdout)
    assert metrics["n"] == 400 and metrics["accuracy"] >= 0.75 and metrics["loss"] > 0


def test_predict_labels_as_in_the_data(local_bundle, tmp_path):
    out, _ = local_bundle
    r = run_cli("predict", "--model", out, input="first review here\nsecond one, not bad!\n")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == 2 and all(row["label"] in {"1", "2"} and 0.5 <= row["probability"] <= 1 for row in rows)
    f = tmp_path / "in.txt"
    f.write_text("one\ntwo\nthree\n")
    r = run_cli("predict", "--model", out, "--input", f)
    assert len(r.stdout.splitlines()) == 3


def test_predict_ranked_classes_with_k_and_threshold(local_bundle):
    out, _ = local_bundle
    texts = "great value, works perfectly\nbroke after a day, awful\nit is a phone\n"
    # (the answers under test, in this process: predict as a process is test_predict_labels_as_in_the_data's)
    plain = [json.loads(line) for line in cli_in_process("predict", "--model", out, input=texts).stdout.splitlines()]
    r = cli_in_process("predict", "--model", out, "--k", "2", input=texts)
    assert r.returncode == 0, r.stderr
    ranked = [json.loads(line) for line in r.stdout.splitlines()]
    assert [len(row) for row in ranked] == [2, 2, 2] and [row[0] for row in ranked] == plain
    assert all(row[0]["probability"] >= row[1]["probability"] and row[0]["label"] != row[1]["label"] for row in ranked)
    cut = sorted(row["probability"] for row in plain)[1]  # the middle review's best probability
    r = cli_in_process("predict", "--model", out, "--threshold", repr(cut), input=texts)
    kept = [json.loads(line) for line in r.stdout.splitlines()]
    assert kept == [[row] if row["probability"] >= cut else [] for row in plain]
    assert sum(map(len, kept)) == 2


def test_evaluate_prints_precision_recall_and_f1_per_class(local_bundle, sample_dir):
    out, _ = local_bundle
    r = run_cli("evaluate", "--model", out, "--data", sample_dir / "test.csv")
    metrics = _last_json(r.stdout)
    counts = metrics["confusion_matrix"]["counts"]
    table = r.stdout.splitlines()[len(counts) + 1:len(counts) * 2 + 2]
    assert table[0].split() == ["class", "precision", "recall", "f1", "support"]
    for c, (row, line) in enumerate(zip(metrics["per_class"], table[1:])):
        right, predicted, actual = counts[c][c], sum(r_[c] for r_ in counts), sum(counts[c])
        assert row["support"] == actual and row["precision"] == pytest.approx(right / predicted)
        assert row["recall"] == pytest.approx(right / actual)
        assert line.split() == [row["label"], f"{row['precision']:.4f}", f"{row['recall']:.4f}", f"{row['f1']:.4f}", str(actual)]


def _peak_memory_mb(*args):
    """``python -m fasttext_lib ARGS``'s exit status, stdout and peak resident memory (MB), in a process of its own."""
    code = ("import resource, sys\nfrom fasttext_lib import cli\nstatus = cli.run()\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\nsys.exit(status)")
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT), timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout, int(r.stderr.strip().splitlines()[-1]) / 1024


def test_evaluate_scores_a_large_file_in_the_memory_predict_needs_for_it(local_bundle, sample_dir, tmp_path):
    """evaluate read the whole file (its texts, then their bags) before it scored any of it: ~1.5 times the file's size
    on top of the model (576 MB for a 233 MB CSV, where predict stays at 174). It scores as it reads now, with the same
    numbers as Predictor.evaluate of the data read whole."""
    from fasttext_lib.predict import Predictor

    out, _ = local_bundle
    rows = (sample_dir / "test.csv").read_text().splitlines(keepends=True)
    big = tmp_path / "big.csv"
    with open(big, "w") as f:
        for i in range(400):  # ~70 MB: 160,000 reviews
            f.writelines(rows)
    evaluated, evaluate_peak = _peak_memory_mb("evaluate", "--model", out, "--data", big)
    _, predict_peak = _peak_memory_mb("predict", "--model", out, "--input", big, "--format", "text")
    assert evaluate_peak < predict_peak + 40, (evaluate_peak, predict_peak)
    metrics = _last_json(evaluated)
    assert metrics["n"] == 160000
    whole = Predictor.load(out).evaluate(read_labeled(str(sample_dir / "test.csv")), confusion=True)
    assert metrics["accuracy"] == pytest.approx(whole["accuracy"]) and metrics["loss"] == pytest.approx(whole["loss"])
    assert metrics["confusion_matrix"]["counts"] == [[400 * n for n in row] for row in whole["confusion_matrix"]["counts"]]


@pytest.mark.parametrize("args, pattern", [
    (["predict", "--model", "m", "--k", "0"], "argument --k: expected a whole number >= 1, or -1"),
    (["predict", "--model", "m", "--threshold", "1.5"], "argument --threshold: expected a probability"),
    (["predict"], "the following arguments are required: --model"),
    (["train", "--train", "t", "--output", "o", "--bogus"], "unrecognized arguments: --bogus"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    ([], "the following arguments are required: command"),
])
def test_usage_errors_are_one_line(args, pattern):
    r = cli_in_process(*args)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1 and pattern in r.stderr, r.stderr
    assert "--help" in r.stderr  # where to look


def test_a_single_valued_option_given_twice_with_different_values_is_refused():
    """``train --train a --train b`` trained on b without a word (argparse keeps the last): a command line edited by
    appending an option (or pasted twice) ran with one of its values, silently. Every single-valued option of every
    command is refused so, naming the option and both values; the same value twice is no conflict."""
    r = cli_in_process("train", "--train", "a.csv", "--output", "out", "--train", "b.csv")
    assert (r.returncode, r.stdout) == (2, "") and r.stderr == (
        "error: --train given twice, as a.csv and as b.csv: give it once (see python -m fasttext_lib train --help)\n")
    for command, action in _single_valued_options():
        first, second = _two_values(action)
        required = [part for option, value in _required(command).items() if option not in action.option_strings
                    for part in (option, value)]
        argv = [command, *required, action.option_strings[0], first, action.option_strings[0], second]
        err = io.StringIO()
        with pytest.raises(SystemExit) as info, contextlib.redirect_stderr(err):
            build_parser().parse_args(argv)
        assert info.value.code == 2 and err.getvalue().count("\n") == 1, argv
        assert f"error: {action.option_strings[0]} given twice, as {first} and as {second}: give it once" in \
            err.getvalue(), (argv, err.getvalue())
        args = build_parser().parse_args([*argv[:-2], action.option_strings[0], first])  # the same value twice: fine
        assert getattr(args, action.dest) == (action.type(first) if action.type else first)


@pytest.mark.parametrize("given, said", [
    (["--epoch", "2", "--epochs", "3"], "--epochs given twice, as --epoch 2 and as --epochs 3: give it once"),
    (["--epoch=2", "--epo", "3"], "--epochs given twice, as --epoch 2 and as --epo 3: give it once"),
    (["--epoch", "2", "--epoch", "3"], "--epoch given twice, as 2 and as 3: give it once"),
], ids=["abbreviated-then-whole", "two-abbreviations", "one-abbreviation-twice"])
def test_an_option_given_twice_is_named_as_it_was_typed(given, said):
    """argparse reads ``--epoch`` as ``--epochs`` (an abbreviation, kept: fastText's ``-epoch`` typed with two dashes
    is one users rely on); ``--epoch 2 --epochs 3`` was refused as "--epochs given twice", naming an option the user
    typed once. Each value is named with the option as typed; the same value twice is still no conflict."""
    r = cli_in_process("train", "--train", "t", "--output", "o", *given)
    assert (r.returncode, r.stdout) == (2, "") and r.stderr == (
        f"error: {said} (see python -m fasttext_lib train --help)\n")
    args = build_parser().parse_args(["train", "--train", "t", "--output", "o", "--epoch", "2", "--epochs=2"])
    assert args.epochs == 2


def test_a_nan_given_once_is_not_given_twice():
    """NaN is unequal to itself: ``--lr nan`` given once was refused as "--lr given twice, as nan and as nan" (and so
    was the same nan twice), where its refusal is the setting's own."""
    for argv in (["--lr", "nan"], ["--lr", "nan", "--lr", "NaN"]):
        r = cli_in_process("train", "--train", "t", "--output", "o", *argv)
        assert (r.returncode, r.stderr) == (2, "error: --lr must be a positive finite number, got nan\n"), r.stderr
    r = cli_in_process("train", "--train", "t", "--output", "o", "--lr", "nan", "--lr", "0.1")
    assert "error: --lr given twice, as nan and as 0.1: give it once" in r.stderr


@pytest.mark.parametrize("option, first, second", [
    ("--label-names", "none", "None"), ("--label-names", "", "NULL"), ("--label-names", "1=a,2=b", "2=b, 1=a"),
    ("--label-names", '{"1": "a", "2": "b"}', "1=a,2=b"), ("--label-names", "ag_news", "1=World,2=Sports,3=Business,4=Sci/Tech"),
    ("--label-names", "names.txt", "./names.txt"), ("--label-column", "Stars", " stars"),
], ids=["none-None", "empty-NULL", "pairs-reordered", "json-and-pairs", "dataset-and-its-pairs", "one-file-two-paths",
        "column-case"])
def test_two_values_of_an_option_that_mean_the_same_are_no_conflict(option, first, second, tmp_path, monkeypatch):
    """``--label-names none --label-names None`` (both "no names", as label_names.from_option reads them) was refused as
    given twice; so were the same pairs reordered, and one column named in two cases (columns are found without case):
    two values are compared as the option's value is read, a file by where it is (not read while parsing)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "names.txt").write_text("1=a\n2=b\n")
    args = build_parser().parse_args(["train", "--train", "t", "--output", "o", option, first, option, second])
    assert getattr(args, option[2:].replace("-", "_")) == second


@pytest.mark.parametrize("option, first, second", [
    ("--label-names", "1=a,2=b", "2=a,1=b"), ("--label-names", "none", "names.txt"), ("--label-names", "ag_news", "dbpedia"),
    ("--label-names", "names.txt", "other.txt"), ("--label-column", "stars", "rating"),
], ids=["pairs-swapped", "none-and-a-file", "two-datasets", "two-files", "two-columns"])
def test_two_values_of_an_option_that_mean_different_things_are_still_refused(option, first, second, tmp_path,
                                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "names.txt").write_text("1=a\n2=b\n")
    (tmp_path / "other.txt").write_text("1=a\n2=b\n")  # (the same names, another file: read later, not compared)
    r = cli_in_process("train", "--train", "t", "--output", "o", option, first, option, second)
    assert (r.returncode, r.stdout) == (2, "") and r.stderr == (
        f"error: {option} given twice, as {first} and as {second}: give it once (see python -m fasttext_lib train "
        f"--help)\n")


def test_options_meant_to_repeat_still_repeat():
    args = build_parser().parse_args(["train", "--train", "t", "--output", "o", "--text-column", "a",
                                      "--text-column", "b", "--overwrite", "--overwrite"])
    assert (args.text_column, args.overwrite) == (["a", "b"], True)
    args = build_parser().parse_args(["import-folders", "--input", "d", "--output", "o.csv", "--skip", "x", "--skip", "y"])
    assert args.skip == ["x", "y"]


def _single_valued_options():
    """``(command, action)`` of every option of every command that takes one value (argparse's store)."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    found = [(name, action) for name, sub in commands.items() for action in sub._actions
             if isinstance(action, argparse._StoreAction) and action.option_strings and action.nargs is None]
    assert len(found) > 40 and {name for name, _ in found} == set(commands)  # (every command has some)
    return found


def _two_values(action):
    """Two command-line values ``action`` takes, read as two different values."""
    if action.choices:
        return str(action.choices[0]), str(action.choices[1])
    for first, second in [("2", "3"), ("0.5", "0.25"), ("a.csv", "b.csv")]:
        try:
            read = [action.type(v) if action.type else v for v in (first, second)]
        except (argparse.ArgumentTypeError, ValueError, TypeError, FastTextError):
            continue
        if read[0] != read[1]:
            return first, second
    raise AssertionError(f"no two values found for {action.option_strings}")


def _required(command):
    return {"train": {"--train": "t", "--output": "o"}, "evaluate": {"--model": "m", "--data": "d"},
            "predict": {"--model": "m"}, "sample": {"--output": "o"}, "synthetic": {"--output": "o"},
            "prepare": {"--output": "o"}, "export-vectors": {"--model": "m", "--output": "o.vec"},
            "import-folders": {"--input": "d", "--output": "o.csv"}}[command]


def test_defaults_on_small_data_are_sgd_with_a_small_batch(sample_dir, tmp_path):
    """No flags but --epochs: the lr and batch size come from the data (4,000 documents -> batch 16),
    are announced on stderr and recorded in the bundle."""
    from fasttext_lib.schedule import default_schedule

    r = run_cli("train", "--train", sample_dir / "train.csv", "--validation", sample_dir / "test.csv",
                "--output", tmp_path / "m", "--epochs", "2")
    assert r.returncode == 0, r.stderr
    rule = default_schedule(4000, 0, 2, 1, 2)
    assert rule["batch_size"] == 16
    assert f"settings from the data: sgd lr={rule['lr']:g} batch=16" in r.stderr
    saved = json.loads((tmp_path / "m" / "config.json").read_text())["train_config"]
    assert (saved["optimizer"], saved["lr"], saved["batch_size"]) == ("sgd", rule["lr"], 16)
    assert _last_json(r.stdout)["val_accuracy"] > 0.7


def test_fasttext_format_labels_round_trip(tmp_path):
    train = tmp_path / "d.train"
    train.write_text("".join(f"__label__{'pos' if i % 2 else 'neg'} {'great tasty' if i % 2 else 'awful cold'} food {i}\n" for i in range(200)))
    r = run_cli("train", "--train", train, "--output", tmp_path / "m", "--epochs", "5", "--batch-size", "32", "--no-progress")
    assert r.returncode == 0, r.stderr
    r = run_cli("predict", "--model", tmp_path / "m", input="great tasty\nawful cold\n")
    assert [json.loads(line)["label"] for line in r.stdout.splitlines()] == ["pos", "neg"]


def test_s3_end_to_end(sample_dir, s3_bucket):
    s3 = boto3.client("s3")
    bucket = s3_bucket[len("s3://"):]
    for name in ("train.csv", "test.csv"):
        s3.upload_file(str(sample_dir / name), bucket, f"data/{name}")
    model = f"{s3_bucket}/models/run1"
    r = run_cli("train", "--train", f"{s3_bucket}/data/train.csv", "--validation", f"{s3_bucket}/data/test.csv", "--output", model, *FAST)
    assert r.returncode == 0, r.stderr
    from fasttext_lib.bundle import stored_names
    from fasttext_lib.storage import read_manifest

    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="models/run1/")["Contents"])
    assert keys == sorted(f"models/run1/{n}" for n in stored_names(read_manifest(model, "config.json")))
    r = run_cli("evaluate", "--model", model, "--data", f"{s3_bucket}/data/test.csv")
    assert r.returncode == 0, r.stderr
    assert _last_json(r.stdout)["accuracy"] >= 0.75
    # --model one level too high said only "has no config.json", where a local folder's error names its bundle
    # (these answers in this process: a wrong --model's error line as a process is test_model_that_is_not_a_bundle's)
    for above in (f"{s3_bucket}/models", f"{s3_bucket}/models/"):
        r = cli_in_process("predict", "--model", above, input="great food\n")
        assert (r.returncode, r.stdout) == (2, "") and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.endswith(f"has no config.json; it holds a bundle in run1/: load {model}\n"), r.stderr
    r = cli_in_process("predict", "--model", f"{s3_bucket}/data", input="great food\n")  # no bundle below: no hint
    assert r.returncode == 2 and r.stderr.rstrip().endswith("has no config.json"), r.stderr
    # --model naming one of the bundle's files said "s3://.../config.json has no config.json"
    for member in ("config.json", "config.json/"):
        r = cli_in_process("predict", "--model", f"{model}/{member}", input="great food\n")
        assert (r.returncode, r.stdout) == (2, "") and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.endswith(f"is an object, not a bundle's folder: load the folder that holds it, {model}\n"), r.stderr


@pytest.mark.parametrize("where", ["local", "s3"])
def test_train_keeps_an_earlier_model_unless_overwrite(local_bundle, sample_dir, tmp_path, s3_bucket, where):
    """`train --output` onto a model bundle replaced it silently: an earlier model, maybe hours of training, gone
    by a rerun or a reused name. It is now refused before any data is read (the error names --overwrite), the
    bundle kept byte for byte; --overwrite replaces it. (Notebook 02 and SageMaker jobs save through save_bundle,
    which replaces by default: a papermill rerun overwrites its own run's bundle, as before.)"""
    from fasttext_lib import storage
    from fasttext_lib.bundle_format import CONFIG

    out = tmp_path / "bundle" if where == "local" else f"{s3_bucket}/models/run1"
    if where == "local":
        shutil.copytree(local_bundle[0], out)
    else:
        storage.publish(out, *_bundle_files(local_bundle[0]))
    config = storage.read_bytes(storage.join(str(out), CONFIG))
    r = run_cli("train", "--train", tmp_path / "missing.csv", "--output", out, *FAST)  # the data is not even read
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: {out} already holds a model bundle; pass --overwrite to replace it, or choose another --output"], r.stderr
    assert storage.read_bytes(storage.join(str(out), CONFIG)) == config
    r = run_cli("train", "--train", sample_dir / "train.csv", "--output", out, *FAST, "--seed", "7", "--overwrite")
    assert r.returncode == 0, r.stderr
    assert json.loads(storage.read_bytes(storage.join(str(out), CONFIG)))["train_config"]["seed"] == 7


@pytest.mark.parametrize("where", ["local", "s3"])
def test_a_bundle_another_run_saves_at_output_while_this_one_trains_is_kept_and_so_is_this_runs_model(
        local_bundle, sample_dir, tmp_path, s3_bucket, monkeypatch, where):
    """Without --overwrite, --output is checked before the data is read; a bundle another run saved there while this
    one trained refused the save at the end ("already exists"), and this run's model went with its staging folder:
    the training time lost. The other run's bundle is still kept byte for byte, this run's model is saved at the
    first free name beside it (<output>.1 is taken here: a folder of the user's, left as it is), the one error line
    says where (exit 2: --output was not written), and the checkpoints stay."""
    from fasttext_lib import cli, storage
    from fasttext_lib.bundle_format import CONFIG
    from fasttext_lib.predict import Predictor

    out = str(tmp_path / "bundle") if where == "local" else f"{s3_bucket}/models/run1"
    checkpoints = str(tmp_path / "ckpt") if where == "local" else f"{s3_bucket}/ckpt"
    users = storage.join(f"{out}.1", "notes.txt")  # (<output>.1 taken: the user's own folder)
    with storage.atomic_write(users, "wb") as f:
        f.write(b"mine")
    real_read_and_train = cli._read_and_train

    def trained_while_another_run_saved(*args):
        trained = real_read_and_train(*args)
        storage.publish(out, *_bundle_files(local_bundle[0]))  # another run's save, as this one's last epoch ends
        return trained
    monkeypatch.setattr(cli, "_read_and_train", trained_while_another_run_saved)
    r = cli_in_process("train", "--train", sample_dir / "train.csv", "--output", out, *FAST, "--seed", "7",
                       "--checkpoint-dir", checkpoints)
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 2 and errors == r.stderr.strip().splitlines()[-1:] == [
        f"error: {out} was written by another run while this one trained; this run's model is kept as {out}.2"], \
        r.stderr
    theirs = json.loads((local_bundle[0] / CONFIG).read_text())
    assert storage.read_manifest(out, CONFIG)["train_config"] == theirs["train_config"]  # (seed 42, not 7)
    assert storage.read_manifest(f"{out}.2", CONFIG)["train_config"]["seed"] == 7
    assert Predictor.load(f"{out}.2").predict(["great food"]) and Predictor.load(out).predict(["great food"])
    assert storage.read_bytes(users) == b"mine"
    assert storage.exists(storage.join(checkpoints, "epoch-0003", "checkpoint.json"))


def test_a_bundle_another_run_is_putting_in_place_at_the_same_moment_keeps_this_runs_model_too(sample_dir, s3_bucket,
                                                                                              s3_proxy, monkeypatch):
    """S3 answers a conditional PUT of config.json with 409 ConditionalRequestConflict while another one of the same
    key is in flight: another run was committing its bundle at --output at that moment. Without --overwrite this
    run may not replace it, so the save was refused "try again" and the model went with its staging folder. It is
    kept beside, as for a bundle already committed, and --output is left to the other run."""
    from fasttext_lib import storage
    from fasttext_lib.bundle_format import CONFIG
    from fasttext_lib.storage import s3

    monkeypatch.setattr(s3, "CONFLICT_PAUSE", 0.01)  # (the one pause of both 409 retries: the manifest's too)
    out = f"{s3_bucket}/models/run1"
    s3_proxy.fail("PUT", r"/models/run1/config\.json$", "409", nth=None)  # (every attempt: its retries too)
    r = cli_in_process("train", "--train", sample_dir / "train.csv", "--output", out, *FAST, "--seed", "7")
    s3_proxy.clear()
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1:] == [
        f"error: {out} was written by another run while this one trained; this run's model is kept as {out}.1"], \
        r.stderr
    assert storage.read_manifest(f"{out}.1", CONFIG)["train_config"]["seed"] == 7
    assert not storage.exists(storage.join(out, CONFIG))


def test_a_trial_table_another_autotune_run_is_putting_in_place_at_the_same_moment_keeps_this_runs_model(
        sample_dir, tmp_path, s3_bucket, s3_proxy, monkeypatch):
    """Two runs of one autotune command claim their --autotune-trials table on S3 at the same moment: S3 answers the
    second create-only PUT 409 ConditionalRequestConflict. That was "try again" and the model lost with its training;
    it is kept beside --output, as when the other run's table is already there."""
    from fasttext_lib.predict import Predictor

    from fasttext_lib.storage import s3

    monkeypatch.setattr(s3, "CONFLICT_PAUSE", 0.01)  # (the PUT's 3 attempts, not their pauses, are under test)
    out, trials = tmp_path / "bundle", f"{s3_bucket}/runs/trials.csv"
    s3_proxy.fail("PUT", r"/runs/trials\.csv$", "409", nth=None)  # (every attempt: botocore's retry too)
    r = cli_in_process("train", "--train", sample_dir / "train.csv", "--autotune-validation", sample_dir / "test.csv",
                       "--autotune-duration", "0.5", "--buckets", "50000", "--output", out, "--autotune-trials",
                       trials, "--no-progress")  # (a search's first trial and the refit: a model to keep)
    s3_proxy.clear()
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1] == (
        f"error: {trials} was written by another run while this one trained; this run's model is kept as {out}.1, "
        f"its trials in its metrics.json (autotune)"), r.stderr
    assert Predictor.load(f"{out}.1").metrics["autotune"]["trials"]
    assert not out.exists()


def test_a_409_at_the_bundles_put_whose_other_save_did_not_land_saves_this_runs_model_at_output(sample_dir, s3_bucket,
                                                                                                s3_proxy):
    """S3's 409 ConditionalRequestConflict asks to try again: the conditional PUT in flight beside this one may still
    fail. Taken at once for a bundle another run had put there, this run's model went to --output.1 under a line
    saying --output was written by another run, and --output stayed empty. The PUT is tried again: S3 answers it as
    it finds the key then (put in place here, or 412 where the other one landed)."""
    from fasttext_lib import storage
    from fasttext_lib.bundle_format import CONFIG

    out = f"{s3_bucket}/models/run1"
    s3_proxy.fail("PUT", r"/models/run1/config\.json$", "409", nth=1)  # (the first attempt alone)
    r = cli_in_process("train", "--train", sample_dir / "train.csv", "--output", out, *FAST, "--seed", "7")
    s3_proxy.clear()
    assert r.returncode == 0, r.stderr
    assert storage.read_manifest(out, CONFIG)["train_config"]["seed"] == 7
    assert not storage.exists(storage.join(f"{out}.1", CONFIG))


def test_a_409_at_a_create_only_file_put_whose_other_write_did_not_land_writes_this_one(s3_bucket, s3_proxy,
                                                                                       monkeypatch):
    """A create-only PUT of one file (a trial table, export-vectors without --overwrite) answered 409: the other
    create in flight may fail, so the PUT is sent again rather than refused "try again"; still 409 at its last
    attempt, it is refused so (s3.BeingWritten)."""
    from fasttext_lib import storage
    from fasttext_lib.storage import s3

    monkeypatch.setattr(s3, "CONFLICT_PAUSE", 0.01)
    table = f"{s3_bucket}/runs/trials.csv"
    s3_proxy.fail("PUT", r"/runs/trials\.csv$", "409", nth=1)  # (the first attempt alone)
    with storage.atomic_write(table, "wb", overwrite=False) as f:
        f.write(b"ours\n")
    s3_proxy.clear()
    assert storage.read_bytes(table) == b"ours\n"
    s3_proxy.fail("PUT", r"/runs/other\.csv$", "409", nth=None)
    with pytest.raises(storage.BeingWritten, match=r"^s3://.*/runs/other\.csv was being written by someone else at "
                                                   r"the same time; try again$"):
        with storage.atomic_write(f"{s3_bucket}/runs/other.csv", "wb", overwrite=False) as f:
            f.write(b"ours\n")
    s3_proxy.clear()
    assert not storage.exists(f"{s3_bucket}/runs/other.csv")


def _bundle_files(bundle):
    """(files, manifest name, manifest) to publish a copy of a local bundle elsewhere."""
    config = json.loads((bundle / "config.json").read_text())
    files = {name: str(bundle / entry["object"]) for name, entry in config.pop("files").items()}
    config.pop("written_by", None)
    return files, "config.json", config


def test_s3_bundle_without_list_bucket(sample_dir, s3_policy_server):
    """A role that may put, get and delete objects but not list the bucket (S3 then answers 403 for a
    missing key: the proxy does that in front of moto) trains to S3, predicts from the bundle, trains over
    it (the old files go, found from the old config.json); one that may not delete is told before training."""
    from fault_proxy import FaultProxy

    policy = s3_policy_server
    prefix = f"nolist-{os.urandom(4).hex()}"

    def keys(where):
        listed = policy.client("admin").list_objects_v2(Bucket=policy.bucket, Prefix=f"{prefix}/{where}/")
        return sorted(o["Key"].rsplit("/", 1)[1] for o in listed.get("Contents", []))

    def train(where, env, *flags):
        return run_cli("train", "--train", sample_dir / "train.csv", "--output", f"s3://{policy.bucket}/{prefix}/{where}",
                       "--epochs", "1", "--batch-size", "256", "--no-progress", *flags, env=env)

    with FaultProxy(policy.endpoint) as proxy:
        for method in ("GET", "HEAD"):
            proxy.fail(method, r".", "403-if-missing")
        env = dict(policy.env("writer"), AWS_ENDPOINT_URL=proxy.endpoint)
        r = train("model", env)
        assert r.returncode == 0, r.stderr
        first = keys("model")
        assert len(first) == 4 and "config.json" in first
        r = run_cli("predict", "--model", f"s3://{policy.bucket}/{prefix}/model", input="great food\nawful\n", env=env)
        assert r.returncode == 0, r.stderr
        assert [json.loads(line)["label"] in {"1", "2"} for line in r.stdout.splitlines()] == [True, True]
        r = train("model", env)  # a bundle there is kept unless --overwrite, as with a listing
        assert r.returncode == 2 and "already holds a model bundle; pass --overwrite" in r.stderr, r.stderr
        assert keys("model") == first
        r = train("model", env, "--overwrite")  # then replaced, as with a listing
        assert r.returncode == 0, r.stderr
        second = keys("model")
        assert len(second) == 4 and set(first) & set(second) == {"config.json"}
    r = train("other", policy.env("putter"))
    _assert_one_line_error(r, "S3 refused to delete there (s3:DeleteObject)")
    assert r.returncode == 2 and '"epoch"' not in r.stdout and keys("other") == []


def _assert_one_line_error(r, pattern):
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("error: ") and pattern in lines[-1], r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("content, pattern", BAD_TRAINING_FILES + [
    (None, "no such file"),
    (b"__label__1 a\n__label__1 b\n", "single class"),
    (b"\x00\x01\x02\xff\xfe binary", "not"),
])
def test_bad_training_input(tmp_path, content, pattern):
    path = tmp_path / "train.txt"
    if content is not None:
        path.write_bytes(content)
    out = tmp_path / "out"
    run = run_cli if content is None else cli_in_process  # one CLI process; the data errors in-process
    r = run("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    _assert_one_line_error(r, pattern)
    assert not out.exists() and os.listdir(tmp_path) == (["train.txt"] if content is not None else [])


def test_unknown_validation_label(tmp_path):
    """train --validation with a class --train lacks named the file but not where in it (evaluate of the same file
    names the line), and said nothing of what to do: now the line of the class's first document, and the way out."""
    (tmp_path / "t.txt").write_text("__label__positive good great\n__label__negative bad awful\n" * 3)
    (tmp_path / "v.txt").write_text("__label__positive good\n\n__label__neutral meh\n__label__negative bad\n"
                                    "__label__neutral so so\n")
    r = run_cli("train", "--train", tmp_path / "t.txt", "--validation", tmp_path / "v.txt", "--output", tmp_path / "o", "--no-progress")
    _assert_one_line_error(r, f"error: {tmp_path / 'v.txt'} has label(s) 'neutral' (line 3) not seen in training "
                              f"(known: negative, positive); a model answers only the classes it was trained on: drop "
                              f"those documents, or train on data that has those classes too")
    assert r.stderr.count("error:") == 1 and not (tmp_path / "o").exists()


def test_unknown_validation_label_read_by_the_python_api_names_its_file_and_line(tmp_path):
    """train(data, read_labeled(path)): the error calls it "validation data"; the line says which file it is in."""
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train

    (tmp_path / "t.csv").write_text("label,text\npositive,good great\nnegative,bad awful\n" * 3)
    (tmp_path / "v.csv").write_text('label,text\npositive,"good\nfine"\nneutral,meh\n')
    with pytest.raises(FastTextError) as caught:
        train(read_labeled(str(tmp_path / "t.csv")), read_labeled(str(tmp_path / "v.csv")),
              TrainConfig(epochs=1, progress=False, ctx="cpu"))
    assert str(caught.value).startswith(f"validation data has label(s) 'neutral' (line 4 of {tmp_path / 'v.csv'}) "
                                        f"not seen in training (known: negative, positive); a model answers only")


def test_evaluate_labels_in_another_case_say_so(tmp_path):
    """A file labelled 'Positive' for a model of 'positive' was refused as a label never seen in training, with no
    word of the case (1.0 for 1 is named as written otherwise). Only when one class matches each label ignoring case."""
    (tmp_path / "t.txt").write_text("__label__positive good great\n__label__negative bad awful\n" * 3)
    r = cli_in_process("train", "--train", tmp_path / "t.txt", "--output", tmp_path / "m", "--epochs", "1",
                       "--no-progress")
    assert r.returncode == 0, r.stderr
    (tmp_path / "e.txt").write_text("__label__negative bad\n__label__Positive good\n__label__NEGATIVE awful\n")
    r = cli_in_process("evaluate", "--model", tmp_path / "m", "--data", tmp_path / "e.txt")
    _assert_one_line_error(r, f"error: {tmp_path / 'e.txt'} has label(s) 'NEGATIVE' (line 3), 'Positive' (line 2) not "
                              f"seen in training (known: negative, positive); the model's classes written in another "
                              f"case ('NEGATIVE' for negative, 'Positive' for positive): write them as the training "
                              f"data did")
    assert r.stderr.strip().endswith("data did"), r.stderr  # (fastText format has no column for a pandas line)
    assert r.stdout == ""


def test_evaluate_and_validation_labels_with_an_invisible_character_say_so(tmp_path):
    """A CSV (or a validation file) labelled 'positive' + a zero-width space in some rows, for a model of 'positive',
    was refused as a label never seen in training, though it prints as the class. Now the error names the character
    and how to remove it: a pandas line of the file's own column, or for fastText format the __label__ words."""
    (tmp_path / "t.txt").write_text("__label__positive good great\n__label__negative bad awful\n" * 3)
    r = cli_in_process("train", "--train", tmp_path / "t.txt", "--output", tmp_path / "m", "--epochs", "1",
                       "--no-progress")
    assert r.returncode == 0, r.stderr
    (tmp_path / "e.csv").write_text("sentiment,review\nnegative,bad\npositive\u200b,good\n", encoding="utf-8")
    r = cli_in_process("evaluate", "--model", tmp_path / "m", "--data", tmp_path / "e.csv")
    _assert_one_line_error(r, f"error: {tmp_path / 'e.csv'} has label(s) 'positive\\u200b' (line 3) not seen in "
                              f"training (known: negative, positive); the model's classes with an invisible character "
                              f"(U+200B) added ('positive\\u200b' for positive): write them without it (pandas: "
                              f"df['sentiment'] = df['sentiment'].str.replace('\\u200b', ''))")
    assert r.stdout == ""
    (tmp_path / "v.txt").write_text("__label__negative bad\n__label__positive\u2060 good\n", encoding="utf-8")
    r = cli_in_process("train", "--train", tmp_path / "t.txt", "--validation", tmp_path / "v.txt", "--output",
                       tmp_path / "o", "--epochs", "1", "--no-progress")
    _assert_one_line_error(r, "(U+2060) added ('positive\\u2060' for positive): write them without it (remove "
                              "'\\u2060' from the __label__ words)")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("flag, value", [("--epochs", "0"), ("--emsize", "-3"), ("--batch-size", "0")])
def test_non_positive_settings(tmp_path, flag, value):
    run = run_cli if flag == "--epochs" else cli_in_process  # one CLI process; the others in-process
    r = run("train", "--train", "x", "--output", tmp_path / "o", flag, value)
    assert r.returncode != 0 and "must be a positive integer" in r.stderr and "Traceback" not in r.stderr


def test_an_s3_folder_given_as_a_file_is_named_as_a_folder_with_a_file_in_it(s3_bucket, tmp_path):
    """--train s3://bucket/channel for the folder a SageMaker channel or a Spark job writes (channel/train.csv, or
    part-00000 files) said only "no such S3 object", as if the data were gone."""
    from fasttext_lib.storage import split_s3

    bucket, _ = split_s3(s3_bucket + "/x")
    for key in ("channel/train.csv", "spark/part-00000.csv", "spark/part-00001.csv"):
        boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=b'"1","bad"\n"2","good"\n')
    r = cli_in_process("train", "--train", f"{s3_bucket}/channel", "--output", tmp_path / "o")
    _assert_one_line_error(r, f"no such S3 object: {s3_bucket}/channel (it is a folder: {s3_bucket}/channel/ holds "
                              f"the object {s3_bucket}/channel/train.csv; name the file to read)")
    r = cli_in_process("train", "--train", f"{s3_bucket}/spark", "--output", tmp_path / "o")
    _assert_one_line_error(r, f"(it is a folder: {s3_bucket}/spark/ holds objects such as {s3_bucket}/spark/part-00000.csv")
    r = cli_in_process("train", "--train", f"{s3_bucket}/chan", "--output", tmp_path / "o")  # a prefix of a folder's name
    _assert_one_line_error(r, f"no such S3 object: {s3_bucket}/chan")
    assert "folder" not in r.stderr


@pytest.mark.parametrize("flag", ["--train", "--validation", "--autotune-validation"])
def test_an_s3_uri_of_a_bucket_alone_names_no_object_in_one_line(s3_bucket, tmp_path, sample_dir, flag):
    """``s3://bucket/`` (no key) given as an input file was botocore's "not a valid S3 URI: ...: Invalid length for
    parameter Key, value: 0, valid min length: 1" (the HEAD of the check before reading)."""
    bucket_only = s3_bucket + "/"
    inputs = {"--train": sample_dir / "train.csv", flag: bucket_only}
    r = cli_in_process("train", *[a for pair in inputs.items() for a in pair], "--output", tmp_path / "o")
    _assert_one_line_error(r, f"S3 URI names no object: {bucket_only}")
    assert "Invalid length" not in r.stderr


def test_s3_failures(s3_server, s3_bucket, tmp_path, sample_dir):
    # reading: in-process (the answer is under test); the two runs below are the CLI processes
    _assert_one_line_error(cli_in_process("train", "--train", "s3:///nobucket.csv", "--output", tmp_path / "o"), "not a valid S3 URI")
    _assert_one_line_error(cli_in_process("train", "--train", "s3://missing-bucket-xyz/train.csv", "--output", tmp_path / "o"), "bucket does not exist")
    _assert_one_line_error(cli_in_process("train", "--train", f"{s3_bucket}/nope.csv", "--output", tmp_path / "o"), "no such S3 object")
    no_creds = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
                "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_EC2_METADATA_DISABLED": "true"}
    env = {k: v for k, v in no_creds.items()}
    r = run_cli("train", "--train", f"{s3_bucket}/train.csv", "--output", tmp_path / "o", env=env)
    _assert_one_line_error(r, "credentials")
    # training to a missing bucket fails before anything is written
    r = run_cli("train", "--train", sample_dir / "train.csv", "--output", "s3://missing-bucket-xyz/m", "--epochs", "1", "--no-progress")
    _assert_one_line_error(r, "bucket does not exist")


@pytest.mark.usefixtures("no_pause_between_rereads")  # (a file stays missing: no reread can find it)
def test_model_that_is_not_a_bundle(tmp_path, local_bundle, sample_dir):
    _assert_one_line_error(run_cli("evaluate", "--model", tmp_path, "--data", sample_dir / "test.csv"), "not a model bundle")
    # the other cases in-process: the command's answer is under test here, the process is above
    _assert_one_line_error(cli_in_process("predict", "--model", tmp_path / "missing", input="x\n"), "not found")
    out, _ = local_bundle
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_bytes((out / "config.json").read_bytes())
    for name in ("metrics.json", "vocab.json"):
        (broken / stored(out, name).name).write_bytes(stored(out, name).read_bytes())
    r = cli_in_process("predict", "--model", broken, input="x\n")
    # a file deleted (or never copied) is missing for good: it is named, with a remedy that can work
    # (it said "the set was replaced or removed while reading; try again", which never helps)
    _assert_one_line_error(r, f"incomplete model bundle: {broken}: model.params ({stored(out, 'model.params').name}), "
                              "which its config.json lists, is missing (deleted, or not copied with the bundle)")
    assert "try again" not in r.stderr
    config = json.loads((out / "config.json").read_text())
    config["vocab_size"] += 1
    (broken / stored(out, "model.params").name).write_bytes(stored(out, "model.params").read_bytes())
    (broken / "config.json").write_text(json.dumps(config))
    _assert_one_line_error(cli_in_process("predict", "--model", broken, input="x\n"), "mismatch")
    config = json.loads((out / "config.json").read_text())
    config["emsize"] = config["train_config"]["emsize"] = 7  # (config.json alone: refused as not the trained emsize)
    (broken / "config.json").write_text(json.dumps(config))
    _assert_one_line_error(cli_in_process("predict", "--model", broken, input="x\n"), "do not match")
    config["format_version"] = 99
    (broken / "config.json").write_text(json.dumps(config))
    _assert_one_line_error(cli_in_process("predict", "--model", broken, input="x\n"), "format version")
    # another version's text normalization (same format): its words were looked up as ours and answered silently
    config = json.loads((out / "config.json").read_text())
    config["normalization"] = "lowercase-only"
    (broken / stored(out, "vocab.json").name).write_bytes(stored(out, "vocab.json").read_bytes())
    (broken / "config.json").write_text(json.dumps(config))
    for command in (["predict", "--model", broken], ["export-vectors", "--model", broken, "--output", tmp_path / "v.vec"]):
        _assert_one_line_error(cli_in_process(*command, input="x\n"), "the bundle's text normalization is "
                               "'lowercase-only' (written by library version '0.1.0'); this library applies")
    assert not (tmp_path / "v.vec").exists()


def test_sample_command_writes_the_real_english_sample(tmp_path):
    from fasttext_lib.sample import sample_path

    r = run_cli("sample", "--output", tmp_path)
    assert r.returncode == 0, r.stderr
    for split in ("train", "test"):
        assert (tmp_path / f"{split}.csv").read_bytes() == open(sample_path(split), "rb").read()
    written = read_labeled(str(tmp_path / "train.csv"))
    assert written.classes() == ["negative", "positive"] and len(written) == 2888
    assert "i like the automatic key lock function." in written.texts


@pytest.mark.parametrize("classes", [3, 14])  # 14 (dbpedia's count; from 5 on it was an IndexError traceback)
def test_synthetic_command_writes_a_corpus_of_the_asked_size(tmp_path, classes):
    r = cli_in_process("synthetic", "--output", tmp_path, "--train-docs", "300", "--test-docs", "10", "--classes", str(classes))
    assert r.returncode == 0, r.stderr
    train, test = read_labeled(str(tmp_path / "train.csv")), read_labeled(str(tmp_path / "test.csv"))
    assert (len(train), len(test)) == (300, 10)
    assert set(train.labels) == {str(c) for c in range(1, classes + 1)}


def test_synthetic_corpora_of_up_to_four_classes_are_unchanged():
    """The cue words' spread narrows only where it would pass the vocabulary (5+ classes): the corpora
    RESULTS.md measured (2 and 4 classes) stay the same, word for word."""
    import hashlib

    from fasttext_lib.synthetic import generate_reviews

    digest = hashlib.sha256()
    for classes in (2, 4):
        data = generate_reviews(200, num_classes=classes, seed=3)
        digest.update("\n".join(f"{l} {t}" for l, t in zip(data.labels, data.texts)).encode())
    assert digest.hexdigest() == DIGEST_2_AND_4_CLASSES


@pytest.mark.parametrize("flag, value, why", [
    ("--classes", "1", "--classes must be from 2 to 198, got 1"),
    ("--classes", "199", "--classes must be from 2 to 198, got 199"),  # the cue words would not fit the vocabulary
    ("--seed", "-1", "--seed must be an integer from 0 to 4294967295, got -1"),
    ("--seed", str(2**32), f"--seed must be an integer from 0 to 4294967295, got {2**32}"),
])
def test_synthetic_refuses_settings_the_generator_cannot_take(tmp_path, flag, value, why):
    """They were a ValueError traceback (exit 1) from the generator."""
    r = cli_in_process("synthetic", "--output", tmp_path / "out", "--train-docs", "20", "--test-docs", "5", flag, value)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [f"error: {why}"], r.stderr
    assert os.listdir(tmp_path) == []


def test_synthetic_help_states_the_range_it_accepts():
    """--help said only "number of classes", and --classes 199 was then refused: the help names the range."""
    from fasttext_lib.cli import build_parser
    from fasttext_lib.synthetic import MAX_CLASSES

    options = {a.dest: a.help for a in build_parser()._subparsers._group_actions[0].choices["synthetic"]._actions}
    assert f"2 to {MAX_CLASSES}," in options["classes"] and "0 to 2^32-1" in options["seed"]


@pytest.mark.parametrize("command", [("sample",), ("synthetic", "--train-docs", "20", "--test-docs", "5")])
def test_sample_and_synthetic_never_replace_existing_data_without_overwrite(tmp_path, command):
    """train.csv / test.csv are names a user's own data often has: an existing one is refused (both
    files kept, nothing written), and --overwrite replaces them."""
    (tmp_path / "test.csv").write_text('"1","my own review"\n')
    r = run_cli(*command, "--output", tmp_path)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'test.csv'} already exists; pass --overwrite to replace it, or choose another --output"]
    assert sorted(os.listdir(tmp_path)) == ["test.csv"]
    assert (tmp_path / "test.csv").read_text() == '"1","my own review"\n'
    r = run_cli(*command, "--output", tmp_path, "--overwrite")
    assert r.returncode == 0, r.stderr
    assert len(read_labeled(str(tmp_path / "test.csv"))) > 1


def test_sample_refuses_existing_s3_data(s3_bucket):
    bucket = s3_bucket[len("s3://"):]
    boto3.client("s3").put_object(Bucket=bucket, Key="mine/train.csv", Body=b'"1","mine"\n')
    r = run_cli("sample", "--output", f"{s3_bucket}/mine")
    assert r.returncode == 2 and "already exists; pass --overwrite" in r.stderr, r.stderr
    body = boto3.client("s3").get_object(Bucket=bucket, Key="mine/train.csv")["Body"].read()
    assert body == b'"1","mine"\n'
    assert "Contents" not in boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix="mine/test.csv")


def test_predict_beyond_one_chunk_keeps_every_line_in_order(local_bundle, tmp_path):
    """predict reads 4,096 lines at a time: 4,100 lines give 4,100 answers, each for its own line."""
    from fasttext_lib.predict import Predictor

    out, _ = local_bundle
    lines = [("great tasty food, friendly staff " if i % 3 else "cold food and a long wait ") + str(i) for i in range(4100)]
    lines[4096] = ""  # an empty line in the second chunk still gets its answer
    f = tmp_path / "many.txt"
    f.write_text("\n".join(lines) + "\n")
    r = run_cli("predict", "--model", out, "--input", f)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    expected = Predictor.load(str(out)).predict(lines)
    assert len(rows) == 4100
    assert [row["label"] for row in rows] == [e["label"] for e in expected]
    assert [row["probability"] for row in rows] == pytest.approx([e["probability"] for e in expected], rel=1e-5)


def test_predict_answers_once_per_line_whatever_the_review_holds(local_bundle, tmp_path):
    """One answer per line (\\n; CRLF too): str.splitlines also split at a form feed, \\x85 or U+2028 inside
    a review, which gave more answers than lines, out of step with the input."""
    from conftest import cli_in_process

    out, _ = local_bundle
    f = tmp_path / "odd.txt"
    f.write_bytes("great food\u2028really\r\nawful\x0cplace\x85again\nok\x1cfine\n\n".encode("utf-8"))
    r = cli_in_process("predict", "--model", out, "--input", f)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 4  # the last line is empty, and answered too


@pytest.mark.parametrize("command", [("sample",), ("synthetic", "--train-docs", "20", "--test-docs", "5")])
@pytest.mark.parametrize("overwrite", [(), ("--overwrite",)])
def test_sample_and_synthetic_refuse_an_output_that_is_a_file_before_generating(tmp_path, monkeypatch, command, overwrite):
    """`synthetic --output FILE` generated the corpus (minutes at Yelp size), then said "cannot write FILE/test.csv:
    File exists" (as if test.csv were there); now the file is named first and nothing is generated."""
    import fasttext_lib.sample
    import fasttext_lib.synthetic

    def generated(*args, **kwargs):
        raise AssertionError("generated before the output was checked")

    monkeypatch.setattr(fasttext_lib.synthetic, "generate_reviews", generated)
    monkeypatch.setattr(fasttext_lib.sample, "load_sample", generated)
    (tmp_path / "afile").write_text("x")
    r = cli_in_process(*command, "--output", tmp_path / "afile", *overwrite)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'afile'} exists and is not a directory"], r.stderr
    assert os.listdir(tmp_path) == ["afile"] and (tmp_path / "afile").read_text() == "x"


@pytest.mark.parametrize("command", [("sample",), ("synthetic", "--train-docs", "20", "--test-docs", "5")])
def test_sample_and_synthetic_refuse_an_empty_output(tmp_path, command):
    """`sample --output "$DATA_DIR"` with the variable unset wrote train.csv and test.csv into the current folder."""
    r = run_cli(*command, "--output", "", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "error: --output must name a directory or an s3:// prefix, got ''"], r.stderr
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("command", [("sample",), ("synthetic", "--train-docs", "20", "--test-docs", "5")])
def test_overwrite_onto_a_pair_whose_test_split_is_a_directory_keeps_the_old_train_split(tmp_path, command):
    """A folder named test.csv (Spark's df.write.csv("test.csv") makes one) beside the user's train.csv:
    `--overwrite` wrote both, replaced train.csv, then failed to rename over the folder. The user's train.csv
    was lost and the pair half written. Now the folder is named before anything is written."""
    (tmp_path / "train.csv").write_text('"1","my own training data"\n')
    (tmp_path / "test.csv").mkdir()
    (tmp_path / "test.csv" / "part-00000.csv").write_text('"1","my own test data"\n')
    r = cli_in_process(*command, "--output", tmp_path, "--overwrite")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: cannot write {tmp_path / 'test.csv'}: it is a directory"], r.stderr
    assert (tmp_path / "train.csv").read_text() == '"1","my own training data"\n'
    assert os.listdir(tmp_path / "test.csv") == ["part-00000.csv"] and sorted(os.listdir(tmp_path)) == ["test.csv", "train.csv"]


def test_the_parser_is_built_without_the_data_readers_and_keeps_their_choices():
    """``--help`` and every usage error build the parser alone: taking --format / --compact's choices from formats.py
    and compact.py imported them (storage, the column readers, the native features): ~40 ms, a third more, on each.
    The parser's choices are written out, and must stay those the readers accept."""
    from fasttext_lib import cli, compact, formats

    code = ("import sys\nfrom fasttext_lib import cli\ncli.build_parser()\n"
            "print(sorted(m for m in sys.modules if m.startswith('fasttext_lib.') and m.split('.')[1] in "
            "('data', 'formats', 'header_row', 'compact', 'storage', 'columns', 'native_features')))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0 and r.stdout.split() == ["[]"], r.stdout + r.stderr
    train = cli.build_parser()._subparsers._group_actions[0].choices["train"]
    options = {a.dest: a.choices for a in train._actions}
    assert tuple(options["format"]) == formats.FORMATS and tuple(options["compact"]) == compact.CHOICES


def test_validation_that_is_the_training_file_is_warned_of(tmp_path):
    """--validation the --train file (by another path too) scored each epoch on the documents it trained on: its
    val_accuracy, the training accuracy, said nothing of unseen data, and nothing said so (autotune warned of it)."""
    data = tmp_path / "train.txt"
    data.write_text("__label__a good fine nice\n__label__b bad awful poor\n" * 3)
    os.symlink(data, tmp_path / "link.txt")
    r = cli_in_process("train", "--train", data, "--validation", tmp_path / "link.txt", "--output", tmp_path / "o",
                       "--epochs", "1", "--no-progress")
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "--validation is the --train file" in warnings[0] and "hold out" in warnings[0]
    other = tmp_path / "val.txt"
    other.write_text("__label__a good\n")
    r = cli_in_process("train", "--train", data, "--validation", other, "--output", tmp_path / "o2", "--epochs", "1",
                       "--no-progress")
    assert r.returncode == 0 and "warning:" not in r.stderr, r.stderr


@pytest.mark.parametrize("ctx", ["cpu", "cpu:0,1"])  # (the updater, or a local kvstore)
def test_adam_training_prints_no_mxnet_log_line(sample_dir, tmp_path, ctx):
    """--optimizer adam printed MXNet's own C++ log line at its first update ("[hh:mm:ss]
    ../src/operator/././../common/utils.h:472: Optimizer with lazy_update = True detected. ... See https://..."),
    amid the progress bar, about a choice the library makes on purpose."""
    r = run_cli("train", "--train", sample_dir / "test.csv", "--output", tmp_path / "m", "--epochs", "1",
                "--emsize", "8", "--optimizer", "adam", "--ctx", ctx)
    assert r.returncode == 0, r.stderr
    assert "lazy_update" not in r.stderr and "utils.h" not in r.stderr, r.stderr


@pytest.mark.parametrize("ctx, said", [("cpu:1", "cpu(1) (the same CPU as cpu(0): cpu:N is no other device)"),
                                       ("cpu:0,1", "cpu(0), cpu(1) (2 contexts on the one CPU: cpu:N is no other "
                                                   "device)")])
def test_a_cpu_n_ctx_is_said_to_be_the_one_cpu(tmp_path, small_train_file, ctx, said):
    """--ctx cpu:1 (notebook 02's -p ctx cpu:1, whose device line says the same) trains on the one CPU under another
    context id (cpu:0,1 runs the multi-device path without GPUs, for tests): "trained on cpu(1)" read as a second
    device. The line says it is the same CPU; the contexts are MXNet's as before (metrics.json's ctx)."""
    from fasttext_lib.predict import Predictor

    out = tmp_path / "model"
    r = cli_in_process("train", "--train", small_train_file, "--output", out, "--epochs", "1", "--batch-size", "64",
                       "--emsize", "8", "--no-progress", "--ctx", ctx)
    assert (r.returncode, r.stderr.splitlines()[-1]) == (0, f"trained on {said}; bundle written to {out}"), r.stderr
    assert Predictor.load(out).metrics["ctx"] == [f"cpu({i})" for i in ctx[len("cpu:"):].split(",")]


def test_trains_ctx_help_says_cpu_n_is_the_one_cpu():
    """train's --help listed cpu:N beside gpu:N ("auto, cpu, cpu:N, gpu, gpu:N or ..."), as if it named another device;
    only the line after training said it is the same CPU (devices.describe_ctx). The help says so."""
    import re

    from fasttext_lib.cli import build_parser

    train = build_parser()._subparsers._group_actions[0].choices["train"]
    said = " ".join(train.format_help().split())
    ctx = re.search(r"--ctx CTX (.*?) --kvstore", said).group(1)
    assert ctx.startswith("auto, cpu, gpu, gpu:N or a list such as gpu:0,1"), ctx
    assert "cpu:N (cpu:1, cpu:0,1) is the same CPU under another id, no other device" in ctx, ctx


def test_progress_written_to_a_log_is_whole_lines(sample_dir, tmp_path):
    """stderr that is a file (``train ... 2> log``, a job's log collector) got every redraw of the bar as
    ``\\r``-joined fragments of one endless line. It now gets whole lines: each epoch's bar ends in its last state.
    (Read as bytes: run_cli's text mode would turn each ``\\r`` into a line break.)"""
    log = tmp_path / "log"
    with open(log, "wb") as err:
        r = subprocess.run([sys.executable, "-m", "fasttext_lib", "train", "--train", str(sample_dir / "test.csv"),
                            "--output", str(tmp_path / "m"), "--epochs", "2", "--emsize", "8"],
                           stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, "PYTHONPATH": ROOT}, timeout=600)
    written = log.read_bytes().decode()
    assert r.returncode == 0, written
    assert "\r" not in written
    lines = written.splitlines()
    for epoch in (1, 2):
        assert len([line for line in lines if line.startswith(f"epoch {epoch}/2: 100%|")]) == 1, written


def test_a_terminal_still_sees_the_bar_redrawn_in_place(monkeypatch):
    import io

    from fasttext_lib import progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    for _ in progress.bar(range(3), desc="epoch 1/1"):
        pass
    assert terminal.getvalue().count("\r") >= 2 and "\n" in terminal.getvalue()


def test_a_bar_a_stop_interrupted_while_it_was_made_is_collected_without_a_traceback(monkeypatch):
    """A SIGINT landing inside tqdm's __init__ (before it set ``disable``) left, after the run's one ``error:``
    line, tqdm.__del__'s "Exception ignored ... '_Bar' object has no attribute 'disable'" traceback on stderr."""
    import gc

    from tqdm import tqdm

    from fasttext_lib import progress

    class Stopped(BaseException):
        pass

    def stopped_at_once(self, *args, **kwargs):
        raise Stopped()

    unraisable = []
    monkeypatch.setattr("sys.unraisablehook", unraisable.append)
    monkeypatch.setattr(tqdm, "__init__", stopped_at_once)
    with pytest.raises(Stopped):
        progress.bar(range(3), desc="epoch 1/1")
    gc.collect()
    assert [str(u.exc_value) for u in unraisable] == []


class _Log(io.StringIO):
    def isatty(self):
        return False


def _loop_failing_at(step, **kwargs):
    from fasttext_lib import progress

    with pytest.raises(ValueError):
        for i in progress.bar(range(5), desc="vocabulary", **kwargs):
            if i == step:
                raise ValueError("bad row")


def test_a_failure_leaves_the_error_line_last_and_alone_on_stderr(tmp_path, monkeypatch):
    """Without --no-progress, a bad input file logged ``vocabulary: 0it [00:00, ?it/s]`` (the bar's first state) and
    the bar's last state above its one error line, and a terminal kept the bar drawn above it. In a log a short loop
    now writes nothing (an epoch's last state, log_final, is the record kept), a failing one no last state, and a
    terminal's bar is cleared by the failure."""
    log = _Log()
    monkeypatch.setattr("sys.stderr", log)
    from fasttext_lib import progress

    _loop_failing_at(3)
    _loop_failing_at(0, log_final=True)
    for _ in progress.bar(range(3), desc="vocabulary"):
        pass
    assert log.getvalue() == ""
    for _ in progress.bar(range(3), desc="epoch 1/1", log_final=True):
        pass
    assert log.getvalue().splitlines() == [line for line in log.getvalue().splitlines() if line.startswith("epoch 1/1: 100%|")]
    assert len(log.getvalue().splitlines()) == 1

    def abandoned():  # the loop's generator closed only when the frame that held it goes (after the error line)
        loop = iter(progress.bar(range(5), desc="epoch 1/1", log_final=True))
        next(loop)
        raise ValueError("bad row")

    log.seek(0), log.truncate()
    with pytest.raises(ValueError):
        abandoned()
    assert log.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    _loop_failing_at(3)
    assert "vocabulary" in terminal.getvalue() and terminal.getvalue().rsplit("\r", 1)[-1].strip() == ""  # cleared
    data = tmp_path / "one.csv"
    data.write_text("1,only one class here\n")
    for bad in (data, tmp_path / "missing.csv"):
        with open(tmp_path / "err", "wb") as err:
            r = subprocess.run([sys.executable, "-m", "fasttext_lib", "train", "--train", str(bad), "--output",
                                str(tmp_path / "m")], stdout=subprocess.DEVNULL, stderr=err,
                               env={**os.environ, "PYTHONPATH": ROOT}, timeout=600)
        written = (tmp_path / "err").read_bytes().decode()
        assert r.returncode == 2 and written.startswith("error: ") and written.count("\n") == 1, written


def _float_class_reviews(n=120):
    """Reviews of classes 1 to 5 as pandas writes a float class column (Amazon's ``overall``): ``4.0``."""
    words = {1: "awful", 2: "bad", 3: "ok", 4: "good", 5: "great"}
    return [(float(1 + i % 5), f"{words[1 + i % 5]} food number {i}") for i in range(n)]


def test_a_csv_class_column_of_whole_floats_reads_as_json_lines_and_dataframes_read_it(tmp_path):
    """``df.to_csv`` of a float class column writes ``1.0`` ... ``5.0``: training on the CSV made the classes "1.0" ...
    "5.0", where the same data as JSON Lines (or a DataFrame) trained 1 ... 5; classes.txt's lines (1, 2, ...) named
    none of them; predict did not see the headerless CSV as labeled. Now every such class reads as its whole number
    (only when all of a file's are), in training, evaluate and predict alike."""
    import pandas as pd

    rows = _float_class_reviews()
    frame = pd.DataFrame(rows, columns=["overall", "reviewText"])
    (tmp_path / "csv").mkdir()
    frame.to_csv(tmp_path / "csv" / "train.csv", index=False)
    (tmp_path / "csv" / "classes.txt").write_text("one star\ntwo stars\nthree stars\nfour stars\nfive stars\n")
    frame.to_json(tmp_path / "train.jsonl", orient="records", lines=True)
    frame.to_csv(tmp_path / "plain.csv", index=False, header=False)
    frame.to_csv(tmp_path / "train.tsv", index=False, sep="\t")
    labels = {}
    for data in (tmp_path / "csv" / "train.csv", tmp_path / "train.jsonl", tmp_path / "train.tsv"):
        out = tmp_path / f"model_{data.suffix[1:]}"
        r = cli_in_process("train", "--train", data, "--output", out, "--epochs", "1", "--no-progress")
        assert r.returncode == 0, r.stderr
        config = json.loads((out / "config.json").read_text())
        labels[data.suffix] = (config["labels"], config.get("label_names"))
    assert labels[".csv"] == (["1", "2", "3", "4", "5"],
                              {"1": "one star", "2": "two stars", "3": "three stars", "4": "four stars", "5": "five stars"})
    assert labels[".jsonl"][0] == labels[".tsv"][0] == labels[".csv"][0]
    for data in (tmp_path / "csv" / "train.csv", tmp_path / "train.jsonl", tmp_path / "plain.csv"):
        fmt = ["--format", "csv"] if data.name == "plain.csv" else []  # (4.0,text without a header: not detected)
        r = cli_in_process("evaluate", "--model", tmp_path / "model_csv", "--data", data, *fmt)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout.splitlines()[-1])["n"] == len(rows)
    r = cli_in_process("predict", "--model", tmp_path / "model_csv", "--input", tmp_path / "plain.csv")
    assert r.returncode == 0 and "read as labeled CSV" in r.stderr, r.stderr
    assert len(r.stdout.splitlines()) == len(rows)


def test_whole_float_classes_are_read_as_numbers_only_when_every_class_of_the_read_is_one(tmp_path):
    """A class literally named ``1.5`` or ``v1.0``, or a file that writes ``1`` beside ``1.0`` (two classes there),
    keeps its classes as written; fastText format's ``__label__5.0`` follows the same rule. Streaming training
    (read_counted) of several files reads their classes as one file's: over all of them, not file by file (a.csv's
    5.0 beside b.csv's 1.5 is no whole number: each class stays as written)."""
    from fasttext_lib.data import read_counted

    def classes_of(name, content):
        path = tmp_path / name
        path.write_text(content)
        return sorted(set(read_labeled(str(path), find_names=False).labels))

    assert classes_of("a.csv", "label,text\n1.0,great\n5.0,bad\n-2.00,meh\n") == ["-2", "1", "5"]
    assert classes_of("b.csv", "label,text\n1.0,great\n1.5,bad\n") == ["1.0", "1.5"]
    assert classes_of("c.csv", "label,text\n1.0,great\n1,bad\n") == ["1", "1.0"]
    assert classes_of("d.csv", "label,text\nv1.0,great\n2.0,bad\n") == ["2.0", "v1.0"]
    assert classes_of("e.txt", "__label__1.0 great\n__label__5.0 bad\n") == ["1", "5"]
    assert classes_of("g.txt", "__label__1.0 great\n__label__1 bad\n") == ["1", "1.0"]
    (tmp_path / "f.csv").write_text("label,text\n1,great\n2,bad\n")
    counted = read_counted([str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), str(tmp_path / "f.csv")])
    assert counted.labels == ["1.0", "5.0", "-2.00", "1.0", "1.5", "1", "2"]
    counted = read_counted([str(tmp_path / "a.csv"), str(tmp_path / "e.txt")])
    assert counted.labels == ["1", "5", "-2", "1", "5"]


def test_train_and_evaluate_read_fasttext_whole_float_labels_by_one_rule(tmp_path):
    """fastText format's ``__label__1.0`` / ``__label__2.0`` trained the classes "1.0" and "2.0", while evaluate read
    the same file as the classes 1 and 2 of a model trained on ``__label__1`` / ``__label__2`` (data.whole_number_classes
    in label_encoding.class_ids, for any file). Both now read a file's classes by data.whole_number_classes, as a CSV's class column
    is read: whole floats are whole numbers when every class of the file is one, and a file mixing ``1`` and ``1.0``
    keeps both as written, in train and evaluate alike."""
    reviews = [("1", f"awful cold soup {i}") if i % 2 else ("2", f"great tasty food {i}") for i in range(60)]
    floats, ints, mixed = tmp_path / "floats.txt", tmp_path / "ints.txt", tmp_path / "mixed.txt"
    floats.write_text("".join(f"__label__{label}.0 {text}\n" for label, text in reviews))
    ints.write_text("".join(f"__label__{label} {text}\n" for label, text in reviews))
    mixed.write_text("".join(f"__label__{label}{'.0' * (i % 3 == 0)} {text}\n" for i, (label, text) in enumerate(reviews)))
    for data in (floats, ints):
        r = cli_in_process("train", "--train", data, "--output", tmp_path / data.stem, "--epochs", "1", "--no-progress")
        assert r.returncode == 0, r.stderr
        assert json.loads((tmp_path / data.stem / "config.json").read_text())["labels"] == ["1", "2"]
    for model in ("floats", "ints"):
        for data in (floats, ints):
            r = cli_in_process("evaluate", "--model", tmp_path / model, "--data", data)
            assert r.returncode == 0, r.stderr
            assert _last_json(r.stdout)["n"] == len(reviews)
        r = cli_in_process("evaluate", "--model", tmp_path / model, "--data", mixed)  # 1.0 beside 1: not class 1
        assert r.returncode != 0 and r.stderr.count("error:") == 1 and "'1.0'" in r.stderr, r.stderr
    r = cli_in_process("train", "--train", mixed, "--output", tmp_path / "mixed", "--epochs", "1", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "mixed" / "config.json").read_text())["labels"] == ["1", "2", "1.0", "2.0"]
    r = cli_in_process("evaluate", "--model", tmp_path / "mixed", "--data", mixed)
    assert r.returncode == 0 and _last_json(r.stdout)["n"] == len(reviews), r.stderr
    # a bundle trained on __label__1.0 before the rule (classes "1.0", "2.0") is evaluated on such a file still
    from fasttext_lib.label_encoding import class_ids

    assert class_ids(["2", "1", "2"], ["1.0", "2.0"], "data") == ["2.0", "1.0", "2.0"]
    with pytest.raises(FastTextError, match="not seen in training"):
        class_ids(["1", "3"], ["1.0", "2.0"], "data")


def test_a_file_of_whole_floats_alone_is_evaluated_by_a_model_whose_other_classes_are_no_floats(tmp_path):
    """A model of half stars (classes 1.0, 1.5, 2.0: no rule reads them as numbers) evaluated on a file of whole stars
    alone, or trained with such a file as --validation: that file's classes read as 1 and 2 (data.whole_number_classes), which
    evaluate refused as 'not seen in training (known: 1.0, 1.5, 2.0)'; it evaluated before the one rule. A label that
    is no class is the class written as its whole float."""
    words = {"1.0": "awful cold soup", "1.5": "bad stale meh", "2.0": "great tasty food"}
    stars = list(words)
    for fmt, line in (("csv", "{label},{text}\n"), ("txt", "__label__{label} {text}\n")):
        train, whole = tmp_path / f"train.{fmt}", tmp_path / f"whole.{fmt}"
        header = "label,text\n" if fmt == "csv" else ""
        train.write_text(header + "".join(line.format(label=stars[i % 3], text=f"{words[stars[i % 3]]} {i}")
                                          for i in range(60)))
        whole.write_text(header + "".join(line.format(label=stars[2 * (i % 2)], text=f"{words[stars[2 * (i % 2)]]} {i}")
                                          for i in range(20)))
        model = tmp_path / f"model_{fmt}"
        r = cli_in_process("train", "--train", train, "--validation", whole, "--output", model, "--epochs", "1",
                           "--no-progress")
        assert r.returncode == 0, r.stderr
        assert json.loads((model / "config.json").read_text())["labels"] == ["1.0", "1.5", "2.0"]
        r = cli_in_process("evaluate", "--model", model, "--data", whole)
        assert r.returncode == 0, r.stderr
        counts = _last_json(r.stdout)["confusion_matrix"]["counts"]
        assert [sum(row) for row in counts] == [10, 0, 10]
    from fasttext_lib.label_encoding import class_ids

    assert class_ids(["2", "1"], ["1.0", "1.5", "2.0"], "data") == ["2.0", "1.0"]
    assert class_ids(["1", "2"], ["1", "1.0", "2"], "data") == ["1", "2"]  # a class as written wins
    with pytest.raises(FastTextError, match="not seen in training"):
        class_ids(["1", "3"], ["1.0", "1.5", "2.0"], "data")


def test_names_keyed_by_whole_floats_name_the_classes_the_one_rule_reads(tmp_path):
    """fastText format's ``__label__1.0`` / ``__label__2.0`` are the classes 1 and 2 now (data.whole_number_classes): a names
    file beside the data keyed ``1.0=negative`` was dropped without a word (it named none of the classes), and
    ``--label-names 1.0=negative,2.0=positive`` refused ('the training data does not have 1.0'), where both named the
    classes before. A key that is no class but the whole float of one names that class."""
    words = {"1.0": "awful cold soup", "2.0": "great tasty food"}
    for fmt, line in (("txt", "__label__{label} {text}\n"), ("csv", "{label},{text}\n")):
        data = tmp_path / f"d.{fmt}"
        data.write_text(("label,text\n" if fmt == "csv" else "") + "".join(
            line.format(label=label, text=f"{words[label]} {i}") for i in range(40) for label in [list(words)[i % 2]]))
        (tmp_path / "d.classes.txt").write_text("1.0=negative\n2.0=positive\n")
        for extra in ([], ["--label-names", "1.0=negative,2.0=positive"]):
            model = tmp_path / f"m_{fmt}_{len(extra)}"
            r = cli_in_process("train", "--train", data, "--output", model, "--epochs", "1", "--no-progress", *extra)
            assert r.returncode == 0, r.stderr
            config = json.loads((model / "config.json").read_text())
            assert (config["labels"], config["label_names"]) == (["1", "2"], {"1": "negative", "2": "positive"})
    from fasttext_lib.label_names import keyed_by_class

    assert keyed_by_class({"1.0": "a", "1.5": "b"}, ["1.0", "1.5"]) == {"1.0": "a", "1.5": "b"}  # classes as written
    assert keyed_by_class({"1.0": "a", "1": "b"}, ["1", "2"]) == {"1.0": "a", "1": "b"}  # 1 named already: as given


def test_names_keyed_in_another_unicode_normalization_name_the_class(tmp_path):
    """A class written with a combining accent (négatif as e + U+0301: a file a Mac wrote) named by a typed
    ``--label-names négatif=schlecht`` (U+00E9), or by a names file so keyed, was refused as a class 'négatif' that
    the training data does not have (its labels: ..., négatif, ...), or dropped without a word: two keys that print
    alike. Training refuses one class in two normalizations, so a key in another names exactly one class."""
    import unicodedata

    decomposed = unicodedata.normalize("NFD", "négatif")
    data = tmp_path / "d.csv"
    data.write_text("label,text\n" + "".join(f"{decomposed},café froid {i}\npositif,très bon {i}\n" for i in range(20)),
                    encoding="utf-8")
    (tmp_path / "d.classes.txt").write_text("négatif=schlecht\npositif=gut\n", encoding="utf-8")
    for extra in ([], ["--label-names", "négatif=schlecht,positif=gut"]):
        model = tmp_path / f"m_{len(extra)}"
        r = cli_in_process("train", "--train", data, "--output", model, "--epochs", "1", "--no-progress", *extra)
        assert r.returncode == 0, r.stderr
        config = json.loads((model / "config.json").read_text(encoding="utf-8"))
        assert config["label_names"] == {decomposed: "schlecht", "positif": "gut"}, extra
    from fasttext_lib.label_names import keyed_by_class

    composed = unicodedata.normalize("NFC", decomposed)  # (both spellings keyed: each names its own, as given)
    assert keyed_by_class({composed: "a", decomposed: "b"}, [decomposed]) == {composed: "a", decomposed: "b"}


def test_a_headerless_csv_of_whole_float_classes_is_detected_as_its_integer_classes_are(tmp_path):
    """pandas' ``df.to_csv(path, header=False, index=False)`` of a float class column writes ``1.0,great food``: train
    and evaluate refused it ("cannot detect the format of line 1") while ``1,great food`` was read, and predict took
    it for labeled CSV, saying that evaluate --data scores it. A whole float first is a class number, as an int is;
    ``2.5 stars, great`` and ``1.5,great`` (no whole number) are not."""
    from fasttext_lib.formats import detect_format

    (tmp_path / "a.csv").write_text("1.0,great food\n2.0,cold soup\n1.0,loved it\n")
    assert sorted(set(read_labeled(str(tmp_path / "a.csv"), find_names=False).labels)) == ["1", "2"]
    (tmp_path / "a.tsv").write_text("1.0\tgreat food\n2.0\tcold soup\n")
    assert sorted(set(read_labeled(str(tmp_path / "a.tsv"), find_names=False).labels)) == ["1", "2"]
    assert detect_format("5.00 , great\n", "x") == "csv"
    for review in ("2.5 stars, great\n", "1.5,great\n", "1.0.2,great\n"):
        with pytest.raises(FastTextError):
            detect_format(review, "x")


@pytest.mark.parametrize("content, column, value", [
    ("id,text\n101,great food here\n102,awful cold soup\n103,loved the place\n", "column 1 ('id')", "101"),
    ("review_id,text\nr1,great food\nr2,cold soup\nr3,fine\n", "column 1 ('review_id')", "r1"),
    ('"7","great food"\n"8","cold soup"\n"7","fine"\n', "column 1", "7"),  # another set's classes, quoted
])
def test_predict_does_not_call_a_first_column_of_no_class_of_the_model_its_classes(local_bundle, tmp_path, content,
                                                                                    column, value):
    """predict on ``id,text`` said "read as labeled CSV ... (evaluate --data scores the model against its classes)",
    and evaluate refuses that file: ids are no classes. The note now says that column is left out, its values none of
    the model's classes; a file whose classes are the model's is noted as before."""
    local_bundle = local_bundle[0]
    path = tmp_path / "reviews.csv"
    path.write_text(content)
    r = cli_in_process("predict", "--model", local_bundle, "--input", path)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 3, r.stderr
    assert r.stderr.splitlines() == [
        f"{path}: read as CSV, as training reads a labeled one: one answer per record, for its text columns; its "
        f"{column}, where a class goes, is left out (its values, such as {value!r}, are not this model's classes)"]
    labeled = tmp_path / "labeled.csv"
    labeled.write_text('"2","great food"\n"1","cold soup"\n"2","fine"\n')
    r = cli_in_process("predict", "--model", local_bundle, "--input", labeled)
    assert r.returncode == 0 and "read as labeled CSV" in r.stderr and "evaluate --data scores" in r.stderr, r.stderr


def test_a_labeled_csv_whose_first_review_is_longer_than_the_csv_field_limit_is_read_as_labeled(local_bundle, tmp_path):
    """A first review over the csv module's 128 KiB field limit made the first-line check a csv.Error, and predict
    answered each line as text, class and quotes included (one answer per line; a file with a short first review is
    read as labeled CSV). A subprocess: the limit is the process's, raised by any earlier read."""
    path = tmp_path / "reviews.csv"
    path.write_text('"2","' + "great food " * 20000 + '"\n"1","cold soup"\n"2","fine"\n')
    r = run_cli("predict", "--model", local_bundle[0], "--input", path)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 3, r.stderr
    assert "read as labeled CSV" in r.stderr, r.stderr


def test_evaluate_tables_keep_one_line_per_class_whatever_its_name_holds(tmp_path):
    """A class name is any CSV field: one holding a line break or a tab split evaluate's confusion matrix and per-class
    table across lines (a row of counts under no class, a class without its scores); each is shown escaped there,
    as the JSON line writes it."""
    import csv

    data = tmp_path / "d.csv"
    with open(data, "w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows([("neg\nbad" if i % 2 else "pos\tgood", f"{'awful cold' if i % 2 else 'great tasty'} "
                                  f"food {i}") for i in range(200)])
    r = cli_in_process("train", "--train", data, "--output", tmp_path / "m", "--epochs", "2", "--no-progress")
    assert r.returncode == 0, r.stderr
    r = cli_in_process("evaluate", "--model", tmp_path / "m", "--data", data)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 3 + 3 + 1  # each table: its header and one line per class; then the JSON line
    assert lines[1].startswith("neg\\nbad ") and lines[2].startswith("pos\\tgood ")
    assert lines[4].split()[0] == "neg\\nbad" and lines[5].split()[0] == "pos\\tgood"
    assert lines[0].split()[-2:] == ["neg\\nbad", "pos\\tgood"]
    assert _last_json(r.stdout)["confusion_matrix"]["labels"] == ["neg\nbad", "pos\tgood"]


def test_evaluate_tables_align_class_names_by_the_columns_a_terminal_gives_them():
    """A class name of double-width characters (好, 差, an emoji: two columns each) or with a combining accent (cafe +
    U+0301: four columns) was measured by len(): its row of the confusion matrix and of the per-class table was
    shifted against the header by a column for each such character."""
    from fasttext_lib.cli import _confusion_table, _per_class_table

    matrix = {"labels": ["好", "cafe\u0301", "😀"], "counts": [[3, 1, 0], [0, 4, 0], [2, 0, 10]]}
    assert _confusion_table(matrix).splitlines() == [
        "true \\ predicted  好  cafe\u0301  😀",
        "好" + " " * 14 + "   3     1   0",
        "cafe\u0301" + " " * 12 + "   0     4   0",
        "😀" + " " * 14 + "   2     0  10",
    ]
    scores = dict(precision=0.5, recall=0.25, f1=None, support=4)
    assert _per_class_table([dict(label="好", **scores), dict(label="ok", **scores)]).splitlines() == [
        "class  precision  recall  f1  support",
        "好   " + "     0.5000  0.2500   -        4",
        "ok   " + "     0.5000  0.2500   -        4",
    ]
    # ASCII names: as before (len is the width)
    assert _confusion_table({"labels": ["neg", "positive"], "counts": [[1, 22], [333, 4]]}).splitlines() == [
        "true \\ predicted  neg  positive",
        "neg" + " " * 13 + "    1        22",
        "positive" + " " * 8 + "  333         4",
    ]


def test_evaluate_names_the_data_file_and_the_line_of_a_label_the_model_does_not_know(local_bundle, tmp_path):
    """evaluate --data PATH with a class training never saw said "evaluation data has label(s) '7' ...": which file
    (the one --data names) and where in it was left to the user to find."""
    path = tmp_path / "joined.csv"
    path.write_text('label,text\n1,"great\nfood"\n7,odd one\n2,cold soup\n9,odder\n7,odd again\n')
    r = cli_in_process("evaluate", "--model", local_bundle[0], "--data", path)
    _assert_one_line_error(r, f"{path} has label(s) '7' (line 4), '9' (line 6) not seen in training (known: ")
    assert "evaluation data" not in r.stderr and r.stdout == ""


@pytest.mark.parametrize("flag", ["--validation", "--autotune-validation"])
@pytest.mark.parametrize("missing", ["absent.txt", "a_folder"])
def test_a_missing_validation_file_is_refused_before_the_training_file_is_read(tmp_path, flag, missing):
    """A --validation / --autotune-validation that is missing or a folder was found only once the whole --train file
    had been read (minutes at Yelp size), in a line that did not name the flag. Now before: a --train that cannot be
    read at all shows that the check comes first."""
    (tmp_path / "a_folder").mkdir()
    (tmp_path / "t.txt").write_bytes(b"\xff\xfe not UTF-8, unreadable as training data\n")
    r = cli_in_process("train", "--train", tmp_path / "t.txt", flag, tmp_path / missing, "--output", tmp_path / "o",
                       "--no-progress")
    what = "no such file" if missing == "absent.txt" else "expected a file but got a directory"
    _assert_one_line_error(r, f"{flag}: {what}: {tmp_path / missing}")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("flag", ["--validation", "--autotune-validation", None])
@pytest.mark.parametrize("missing", ["absent.txt", "a_folder"])
def test_a_missing_training_file_is_refused_before_the_validation_file_is_read(tmp_path, flag, missing):
    """With the validation data read first, a --train that is missing (a typo) or a folder was found only once the
    whole --validation / --autotune-validation file had been read, where it was refused at once before. It is
    refused before it now (a validation file that cannot be read shows the order), in the line that names the flag
    as the validation files' do, with or without validation data (one check for the three: cli._check_input_file)."""
    (tmp_path / "a_folder").mkdir()
    (tmp_path / "v.txt").write_bytes(b"__label__1 ok\nno label here\n")
    validation = [flag, tmp_path / "v.txt"] if flag else []
    r = cli_in_process("train", "--train", tmp_path / missing, *validation, "--output", tmp_path / "o", "--no-progress")
    what = "no such file" if missing == "absent.txt" else "expected a file but got a directory"
    _assert_one_line_error(r, f"error: --train: {what}: {tmp_path / missing}")
    assert "v.txt" not in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("flag", ["--validation", "--autotune-validation"])
@pytest.mark.parametrize("content, pattern", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "not"),
    (b"__label__1 ok\nno label here\n", ":2: line has no __label__"),
    (b"label,text\n", "no data rows (only a header row)"),
])
def test_a_validation_file_that_cannot_be_read_is_refused_before_the_training_file_is_read(tmp_path, content,
                                                                                          pattern, flag):
    """A --validation (or --autotune-validation) file that cannot be read (not text, lines without a class, only a
    header row) was refused only once the whole --train file had been read (minutes at Yelp size), though nothing in
    --train changes how it is read. Now it is read first: a --train that cannot be read at all shows that it comes
    first."""
    (tmp_path / "t.txt").write_bytes(b"\xff\xfe not UTF-8, unreadable as training data\n")
    (tmp_path / "v.txt").write_bytes(content)
    r = cli_in_process("train", "--train", tmp_path / "t.txt", flag, tmp_path / "v.txt", "--output",
                       tmp_path / "o", "--no-progress")
    _assert_one_line_error(r, pattern)
    assert str(tmp_path / "v.txt") in r.stderr and "t.txt" not in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("args, flag, what, give", [
    (("train", "--output", "-"), "--output", "the bundle", "a directory"),
    (("train", "--output", "o", "--checkpoint-dir", "-"), "--checkpoint-dir", "the checkpoints", "a directory"),
    (("train", "--output", "o", "--autotune-validation", "missing.csv", "--autotune-trials", "-"),
     "--autotune-trials", "the autotune trial table", "a file"),
    (("sample", "--output", "-"), "--output", "train.csv and test.csv", "a directory"),
    (("synthetic", "--output", "-", "--train-docs", "20", "--test-docs", "5"), "--output", "train.csv and test.csv",
     "a directory"),
    (("prepare", "--output", "-", "--base-url", "nowhere"), "--output", "the dataset", "a directory"),
    (("prepare", "--output", "o", "--cache-dir", "-", "--base-url", "nowhere"), "--cache-dir", "the downloaded archive",
     "a directory"),
    (("export-vectors", "--model", "no_bundle", "--output", "-"), "--output", "the word vectors", "a file"),
])
def test_an_output_given_as_standard_output_is_refused_before_any_work(tmp_path, monkeypatch, args, flag, what, give):
    """``-`` is standard input for predict's --input, and each input flag refuses it in one line ("reading ... from
    standard input is not supported"). An output flag given ``-`` trained (or generated) and wrote a bundle, the
    checkpoints or the data into a folder named ``-``; export-vectors and --autotune-trials refused it, in other
    words. Now each says so in the same words, before anything is read (here: a --train that does not exist)."""
    monkeypatch.chdir(tmp_path)
    if args[0] == "train":
        args = (*args, "--train", "missing.csv", "--epochs", "1", "--no-progress")
    r = cli_in_process(*args)
    assert (r.returncode, r.stdout, r.stderr.splitlines()) == (2, "", [
        f"error: {flag} -: writing {what} to standard output is not supported; give {give}"]), r.stderr
    assert os.listdir(tmp_path) == []


def _python_writers():
    """Each public Python function that writes, called with ``-`` for its output: (call, parameter, what, give)."""
    import numpy

    from fasttext_lib import (autotune, bundle, checkpoints, download, packaging, train, vec_files, vectors, workspace,
                              writers)
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.vec_files import WordVectors

    data = LabeledTexts(["1", "2"], ["good food", "bad food"])
    return [
        (lambda: bundle.save_bundle(None, "-"), "dest", "the bundle", "a directory"),
        (lambda: bundle.publish_bundle("-", {}, {}), "dest", "the bundle", "a directory"),
        (lambda: autotune.save_bundle_with_trials(None, "-", "trials.csv"), "output", "the bundle", "a directory"),
        (lambda: autotune.save_bundle_with_trials(None, "o", "-"), "trials_uri", "the autotune trial table", "a file"),
        (lambda: checkpoints.save_checkpoint("-", 1, None, None, [], [], None), "checkpoint_dir", "the checkpoints",
         "a directory"),
        (lambda: train.train(data, checkpoint_dir="-"), "checkpoint_dir", "the checkpoints", "a directory"),
        (lambda: writers.write_fasttext(data, "-"), "uri", "the fastText file", "a file"),
        (lambda: writers.write_csv(data, "-"), "uri", "the CSV file", "a file"),
        (lambda: writers.write_fasttext_splits({"train": data}, "-", "x"), "prefix", "the splits", "a directory"),
        (lambda: download.prepare("ag_news", "-", "cache", base_url="nowhere"), "out_dir_or_s3_prefix", "the dataset",
         "a directory"),
        (lambda: download.prepare("ag_news", "out", "-", base_url="nowhere"), "cache_dir", "the downloaded archive",
         "a directory"),
        (lambda: download.download("ag_news", "-", base_url="nowhere"), "cache_dir", "the downloaded archive",
         "a directory"),
        (lambda: packaging.pack_model("no_bundle", "-"), "dest", "model.tar.gz", "a file"),
        (lambda: packaging.fetch_job_model("model.tar.gz", "-"), "dest", "the bundle", "a directory"),
        (lambda: workspace.Workspace("bucket", "p", "-"), "output_dir", "the notebooks' outputs", "a directory"),
        (lambda: vec_files.write_vec(WordVectors(["good"], numpy.ones((1, 2), "float32")), "-"), "uri",
         "the word vectors", "a file"),
        (lambda: vectors.export_vectors("no_bundle", "-"), "uri", "the word vectors", "a file"),
    ]


@pytest.mark.parametrize("case", range(17))
def test_a_python_output_given_as_standard_output_is_refused_before_any_work(tmp_path, monkeypatch, case):
    """The command line refuses ``-`` for an output in one line; the Python functions wrote a file or folder named
    ``-`` (save_bundle(trained, "-"), prepare's cache_dir, write_csv, ...). Each now refuses it by the same rule,
    before anything is read or trained (here: nothing there to read, or no model at all)."""
    monkeypatch.chdir(tmp_path)
    writers = _python_writers()
    assert len(writers) == 17
    call, named, what, give = writers[case]
    with pytest.raises(FastTextError) as err:
        call()
    assert str(err.value) == f"{named} -: writing {what} to standard output is not supported; give {give}"
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_predict_and_evaluate_refuse_a_list_of_devices_naming_one_to_pass(local_bundle, sample_dir, command):
    """``--ctx gpu:0,1`` (or cpu:0,1) was taken, and the bundle scored on its first device alone, silently: the help
    says "cpu (default), gpu or gpu:N". A list is refused in one line, naming one device to pass."""
    data = ["--data" if command == "evaluate" else "--input", sample_dir / "test.csv"]
    r = cli_in_process(command, "--model", local_bundle[0], *data, "--ctx", "cpu:1,0")
    assert r.returncode == 2 and r.stdout == "" and r.stderr.splitlines() == [
        "error: --ctx cpu:1,0 names 2 devices, and a bundle is loaded on one: pass one (cpu, gpu or gpu:N), such as "
        "--ctx cpu:1"], r.stderr


def test_predictor_load_refuses_a_list_of_devices_and_auto_is_its_first(local_bundle, monkeypatch):
    """Predictor.load(ctx="gpu:0,1") loaded on gpu:0 alone, silently; it is refused naming the argument. ``auto``
    still picks one: the first GPU, else the CPU."""
    import mxnet as mx

    from fasttext_lib.devices import parse_one_ctx
    from fasttext_lib.predict import Predictor

    for ctx, shown in (("cpu:0,1", "'cpu:0,1'"), (["cpu", "cpu:1"], "['cpu', 'cpu:1']")):
        with pytest.raises(FastTextError) as refused:
            Predictor.load(str(local_bundle[0]), ctx=ctx)
        assert str(refused.value) == (f"ctx={shown} names 2 devices, and a bundle is loaded on one: pass one (cpu, gpu "
                                      f"or gpu:N), such as ctx='cpu'")
    assert Predictor.load(str(local_bundle[0]), ctx="auto").ctx == mx.cpu()  # (no GPU here)
    monkeypatch.setattr(mx.context, "num_gpus", lambda: 2)
    assert parse_one_ctx("auto") == mx.gpu(0) and parse_one_ctx(" AUTO ") == mx.gpu(0)


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_document_too_long_for_memory_whose_line_is_not_known_is_named_alike_by_both_commands(
        local_bundle, tmp_path, command, monkeypatch):
    """A document refused for the memory it needs is named by its line; where that is no longer known, by its place
    among the documents read, the place of its answer: predict said "record N" of it (a CSV's header row is a record
    too, so record N was not the Nth record), evaluate "document N" (one helper now, one word: cli._no_room_named)."""
    from fasttext_lib import data as data_module, predict_input
    from fasttext_lib.features import NoRoomToFeaturize
    from fasttext_lib.predict import Predictor

    def no_room(*args, **kwargs):
        raise NoRoomToFeaturize(1, 5_000_000, 3, 200 << 20, 16 << 20)

    for method in ("predict", "evaluate_examples"):
        monkeypatch.setattr(Predictor, method, no_room)
    monkeypatch.setattr(predict_input.Lines, "line_of", lambda self, index: None)
    monkeypatch.setattr(data_module.RecentLines, "line_of", lambda self, index: None)
    path = tmp_path / "reviews.txt"
    path.write_text("__label__1 fine\n__label__2 long\n__label__1 fine again\n")
    r = cli_in_process(command, "--model", local_bundle[0], "--data" if command == "evaluate" else "--input", path)
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert r.stderr.startswith(f"error: {path}: document 2: a document of 5.0 million characters, with 2 other "
                               f"documents, needs about 200 MB of memory to featurize"), r.stderr


def test_a_read_timeout_on_the_bundles_config_json_says_s3_may_still_apply_it(small_train_file, s3_bucket, s3_proxy,
                                                                              monkeypatch):
    """The client gave up waiting for S3's answer to the PUT of the bundle's config.json (a read timeout: received
    whole, answered late): the error said only that the save failed, and S3 then applied it, so a bundle was at
    --output after an error. The line says it may be, as a stop's does."""
    import re
    import urllib.parse

    import botocore.config
    import botocore.httpsession

    from fasttext_lib import storage
    from fasttext_lib.storage import s3 as s3_module

    real_new_client = s3_module._new_client
    # Only the held PUT is given up on after 1 s: with a 1 s read timeout on every request, any other answer a loaded
    # machine's S3 (this process's thread) gave later failed the save elsewhere, with another line.
    impatient = botocore.httpsession.URLLib3Session(timeout=(5, 1))

    def given_up_on_after_1_s(request, **kwargs):
        if request.method == "PUT" and re.search(r"/runs/out/config\.json$", urllib.parse.urlsplit(request.url).path):
            return impatient.send(request)  # (its ReadTimeoutError is botocore's own, raised where _send raises it)

    def new_client(session, config):
        client = real_new_client(session, botocore.config.Config(connect_timeout=5, retries={"max_attempts": 1}))
        client.meta.events.register_last("before-send.s3", given_up_on_after_1_s)  # (after the library's own hook)
        return client
    monkeypatch.setattr(s3_module, "_new_client", new_client)
    out = f"{s3_bucket}/runs/out"
    s3_proxy.fail("PUT", r"/runs/out/config\.json$", "stall")
    r = cli_in_process("train", "--train", small_train_file, "--output", out, *FAST)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len([x for x in lines if x.startswith("error:")]) == 1, r.stderr
    assert lines[-1].startswith("error: ") and lines[-1].endswith(
        f"; a bundle may still be created at {out} by this save (S3 had not answered the PUT of its config.json): "
        f"if one is there, pass --overwrite to replace it, or choose another --output"), r.stderr
    s3_proxy.release()  # S3 applies the PUT the client gave up on: what the line said may come
    deadline = time.monotonic() + 30
    while not storage.exists(f"{out}/config.json"):
        assert time.monotonic() < deadline, "the held PUT was never applied"
        time.sleep(0.1)


@pytest.mark.parametrize("overwrite", [False, True], ids=["new", "replacing"])
def test_a_stop_while_s3_holds_the_bundles_config_json_says_s3_may_still_apply_it(small_train_file, s3_server,
                                                                                   s3_bucket, overwrite):
    """``train`` stopped (Ctrl-C) while S3 held the PUT of the bundle's config.json (received whole, answered late: a
    slow S3; the proxy holds it) said "stopped and cleaned up": S3 then applied it, and the new bundle was at --output
    after a line that said nothing was written (without --overwrite, the rerun was refused). The line says so now."""
    from fault_proxy import FaultProxy
    from fasttext_lib import storage
    from fasttext_lib.predict import Predictor

    out = f"{s3_bucket}/runs/out"
    command = [sys.executable, "-m", "fasttext_lib", "train", "--train", str(small_train_file), "--output", out,
               "--epochs", "1", "--batch-size", "64", "--emsize", "8", "--no-progress", "--ctx", "cpu",
               *(["--overwrite", "--seed", "7"] if overwrite else [])]
    with FaultProxy(s3_server) as proxy:
        env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", AWS_ENDPOINT_URL=proxy.endpoint)
        if overwrite:  # an earlier bundle there, which the stopped run may still replace
            earlier = subprocess.run(command[:-3], env=env, capture_output=True, text=True, timeout=600)
            assert earlier.returncode == 0, earlier.stderr
        before = storage.read_bytes(f"{out}/config.json") if overwrite else None
        proxy.fail("PUT", r"/runs/out/config\.json$", "stall")
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proxy.stalled.wait(300), proc.communicate()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        unanswered = "S3 had not answered the PUT of its config.json"
        left = (f"{out} may still be replaced by this save ({unanswered})" if overwrite else
                f"a bundle may still be created at {out} by this save ({unanswered}): if one is there, pass --overwrite "
                f"to replace it, or choose another --output")
        assert proc.returncode == 130 and err == f"error: interrupted (SIGINT); stopped and cleaned up, but {left}\n"
        assert (storage.read_bytes(f"{out}/config.json") if overwrite else None) == before
        proxy.release()  # S3 applies the held PUT now, after the run gave up on it: what the line said may come
        deadline = time.monotonic() + 30
        while (storage.read_bytes(f"{out}/config.json") if storage.exists(f"{out}/config.json") else None) == before:
            assert time.monotonic() < deadline, "the held PUT was never applied"
            time.sleep(0.1)
    assert Predictor.load(out).labels  # (whole, this run's: its data files were kept for the PUT S3 held)
