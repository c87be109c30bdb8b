"""Autotune: the budget, the trial table, the choice of the best trial, its model, determinism, the CLI."""
import importlib
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from conftest import params_of, run_cli
from fasttext_lib.autotune import SEARCHED, TRIAL_COLUMNS, _rank, autotune, starting_config, work
from fasttext_lib.config import TrainConfig
from fasttext_lib.data import LabeledTexts, write_csv
from fasttext_lib.predict import Predictor

BASE = TrainConfig(ctx="cpu", buckets=50_000, progress=False)
# A cheap first setting (well under a second a trial), so that a few seconds hold several trials.
START = TrainConfig(ctx="cpu", buckets=50_000, optimizer="sgd", lr=2.0, batch_size=64, epochs=3, emsize=20, ngrams=2)


@pytest.fixture(scope="module")
def splits():
    """800 / 300 sentences of the built-in real English sample."""
    from fasttext_lib.sample import load_sample

    data = load_sample("train")
    return data.head(800), LabeledTexts(data.labels[800:1100], data.texts[800:1100])


@pytest.fixture(scope="module")
def searched(splits):
    importlib.import_module("mxnet")  # a one-off import of several seconds on a busy machine; not what is tested

    started = time.time()
    result = autotune(*splits, duration=8.0, base=BASE, start=START, verbose=False)
    return result, time.time() - started


def _expected_best(trials):
    # highest validation accuracy; ties: lower validation loss (2 decimals), less work, the earlier trial
    return (trials.assign(loss2=trials.val_loss.round(2))
            .sort_values(["val_accuracy", "loss2", "work", "trial"], ascending=[False, True, True, True]).iloc[0])


def test_budget_is_respected(searched):
    result, wall = searched
    assert len(result.trials) >= 2  # it searched, not just the start
    # a trial is started only if it is expected to finish in time: one trial's margin at most
    assert wall <= 8.0 + result.trials.seconds.max()
    assert result.trials.seconds.sum() <= wall


def test_trial_table_and_best_config(searched):
    result, _ = searched
    trials = result.trials
    assert list(trials.columns) == TRIAL_COLUMNS
    assert list(trials.trial) == list(range(1, len(trials) + 1))
    assert trials.phase.iloc[0] == "start" and trials.val_accuracy.between(0, 1).all()
    assert not trials.duplicated(subset=list(SEARCHED)).any()  # no setting is tried twice
    best = _expected_best(trials)
    assert {k: getattr(result.best_config, k) for k in SEARCHED} == {k: best[k] for k in SEARCHED}
    assert result.trained.autotune["best_trial"] == best.trial
    assert (result.trained.featurizer.ngrams, result.trained.model.emsize) == (best.ngrams, best.emsize)  # its model


def test_final_model_scores_as_its_trial(searched, splits):
    result, _ = searched
    predictor = Predictor(result.trained.model, result.trained.featurizer, result.trained.labels, result.best_config)
    accuracy = predictor.evaluate(splits[1])["accuracy"]
    assert accuracy == pytest.approx(_expected_best(result.trials).val_accuracy, abs=1e-9)
    assert result.trained.history[-1]["val_accuracy"] == pytest.approx(accuracy, abs=1e-9)


def test_deterministic_for_a_seed(splits):
    runs = [autotune(*splits, duration=600.0, base=BASE, start=START, max_trials=4, verbose=False) for _ in range(2)]
    a, b = (r.trials.drop(columns=["seconds"]) for r in runs)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 4
    pa, pb = (params_of(r.trained) for r in runs)
    assert all(np.array_equal(pa[k], pb[k]) for k in pa)
    other = autotune(*splits, duration=600.0, base=BASE, start=replace(START, seed=7), max_trials=1, verbose=False)
    assert other.trials.val_loss.iloc[0] != a.val_loss.iloc[0]  # the seed reaches the trials


def test_tie_rule():
    rows = [{"trial": 1, "val_accuracy": 0.8, "val_loss": 0.451, "work": 100.0},
            {"trial": 2, "val_accuracy": 0.8, "val_loss": 0.449, "work": 50.0},  # ties 1 (loss 0.45): cheaper wins
            {"trial": 3, "val_accuracy": 0.8, "val_loss": 0.449, "work": 50.0},  # ties 2 exactly: the earlier wins
            {"trial": 4, "val_accuracy": 0.8, "val_loss": 0.30, "work": 500.0},  # lower loss beats cheaper
            {"trial": 5, "val_accuracy": 0.79, "val_loss": 0.1, "work": 1.0}]  # accuracy first
    assert max(rows[:3], key=_rank)["trial"] == 2
    assert max(rows, key=_rank)["trial"] == 4


def test_best_of_a_search_with_ties():
    # perfectly separable: many settings score 1.0, and the rule above picks among them
    texts = [("great tasty lovely" if i % 2 else "awful cold rude") + f" w{i % 7}" for i in range(240)]
    labels = ["pos" if i % 2 else "neg" for i in range(240)]
    train, val = LabeledTexts(labels[:200], texts[:200]), LabeledTexts(labels[200:], texts[200:])
    result = autotune(train, val, duration=600.0, base=BASE, start=START, max_trials=5, verbose=False)
    assert (result.trials.val_accuracy == 1.0).sum() >= 2
    assert result.trained.autotune["best_trial"] == _expected_best(result.trials).trial
    assert work(result.best_config, len(train)) == _expected_best(result.trials).work


def test_starting_config_is_the_library_default_for_the_data(splits):
    """The search starts where `train` without flags would: the data-size rule at 10 epochs, bigrams."""
    from fasttext_lib.schedule import default_schedule

    for data in (splits[0], LabeledTexts(["1", "2"] * 1_500, ["a b c"] * 3_000),
                 LabeledTexts(["1", "2"] * 100_000, ["a b c d e f"] * 200_000)):
        start = starting_config(data, BASE)
        rule = default_schedule(len(data), 0, 2, ngrams=2, epochs=10)
        assert (start.optimizer, start.batch_size, start.lr) == (rule["optimizer"], rule["batch_size"], rule["lr"])
        assert (start.epochs, start.ngrams, start.emsize) == (10, 2, 100)
    assert starting_config(splits[0], BASE).buckets < BASE.buckets
    mid = starting_config(LabeledTexts(["1"] * 3_000, ["a b c"] * 3_000), TrainConfig())
    assert mid.buckets == 2 ** 15  # >= 2 x 9k tokens
    big = starting_config(LabeledTexts(["1"] * 200_000, ["a b c d e f"] * 200_000), TrainConfig())
    assert big.batch_size == 1024 and big.buckets == 2_000_000  # capped; buckets never above the base's
    assert (big.seed, big.min_count) == (42, 1)  # the fields not searched come from the base


def test_bad_arguments(splits):
    from fasttext_lib.errors import FastTextError

    with pytest.raises(FastTextError, match="positive"):
        autotune(*splits, duration=0)
    with pytest.raises(FastTextError, match="not seen in training"):
        autotune(splits[0], LabeledTexts(["9"], ["x"]), duration=5)
    with pytest.raises(FastTextError, match="non-empty validation"):
        autotune(splits[0], LabeledTexts(), duration=5)


@pytest.fixture(scope="module")
def data_files(splits, tmp_path_factory):
    d = tmp_path_factory.mktemp("autotune_data")
    write_csv(splits[0], str(d / "train.csv"))
    write_csv(splits[1], str(d / "val.csv"))
    return d


def test_cli_end_to_end(data_files, tmp_path):
    out, csv = tmp_path / "bundle", tmp_path / "trials.csv"
    r = run_cli("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                "--autotune-duration", "6", "--buckets", "50000", "--output", out, "--autotune-trials", csv, "--no-progress")
    assert r.returncode == 0, r.stderr
    trials = pd.read_csv(csv)
    assert list(trials.columns) == TRIAL_COLUMNS and len(trials) >= 1
    assert len([line for line in r.stdout.splitlines() if line.startswith('{"trial"')]) == len(trials)
    assert "best: trial" in r.stderr
    predictor = Predictor.load(out)
    metrics = predictor.metrics  # the bundle's metrics.json
    best = _expected_best(trials)
    assert metrics["autotune"]["best_trial"] == best.trial and len(metrics["autotune"]["trials"]) == len(trials)
    assert metrics["autotune"]["best"]["ngrams"] == best.ngrams
    assert predictor.config["train_config"]["lr"] == pytest.approx(best.lr)
    assert predictor.evaluate(LabeledTexts(*_read(data_files / "val.csv")))["accuracy"] == pytest.approx(best.val_accuracy)


def _read(path):
    from fasttext_lib.data import read_labeled

    data = read_labeled(str(path))
    return data.labels, data.texts


@pytest.mark.parametrize("flags, pattern", [
    (["--autotune-duration", "0"], "--autotune-duration must be a positive number"),
    (["--autotune-duration=-5"], "--autotune-duration must be a positive number"),
    (["--autotune-duration", "soon"], "--autotune-duration must be a positive number"),
    (["--validation", "{val}"], "--validation cannot be combined with --autotune-validation"),
])
def test_bad_autotune_flags(data_files, tmp_path, flags, pattern):
    flags = [f.format(val=data_files / "val.csv") for f in flags]
    r = run_cli("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                "--output", tmp_path / "o", *flags)
    _assert_one_error_line(r, pattern)
    assert not (tmp_path / "o").exists()


def test_autotune_flags_need_a_validation_file(data_files, tmp_path):
    r = run_cli("train", "--train", data_files / "train.csv", "--output", tmp_path / "o", "--autotune-trials", tmp_path / "t.csv")
    _assert_one_error_line(r, "--autotune-trials needs --autotune-validation")


def test_autotune_validation_with_unknown_labels(data_files, tmp_path):
    (tmp_path / "v.csv").write_text('"7","an unseen class"\n')
    r = run_cli("train", "--train", data_files / "train.csv", "--autotune-validation", tmp_path / "v.csv",
                "--output", tmp_path / "o", "--autotune-trials", tmp_path / "t.csv")
    _assert_one_error_line(r, "autotune validation data has label(s) '7' not seen in training")
    assert not (tmp_path / "o").exists() and not (tmp_path / "t.csv").exists()


def _assert_one_error_line(r, pattern):
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and pattern in lines[0], r.stderr
