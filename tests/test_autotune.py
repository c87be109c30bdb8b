"""Autotune: the budget, the trial table, the choice of the best trial, its model, determinism, the CLI."""
import functools
import importlib
import os
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from conftest import cli_in_process, params_of, run_cli
from fasttext_lib.autotune import (ALPHA, SEARCHED, TABLE_COLUMNS, TRIAL_COLUMNS, _rank, adoption_threshold, autotune, compare, sign_test,
                                   starting_config)
from fasttext_lib.config import TrainConfig
from fasttext_lib.data import LabeledTexts
from fasttext_lib.errors import FastTextError
from fasttext_lib.predict import Predictor
from fasttext_lib.writers import write_csv

BASE = TrainConfig(ctx="cpu", buckets=50_000, progress=False)
# A cheap first setting (well under a second a trial), so that a few seconds hold several trials.
START = TrainConfig(ctx="cpu", buckets=50_000, optimizer="sgd", lr=2.0, batch_size=64, epochs=3, emsize=20, ngrams=2)


@pytest.fixture(scope="module")
def splits():
    """800 / 300 sentences of the built-in real English sample."""
    from fasttext_lib.sample import load_sample

    data = load_sample("train")
    return data.head(800), LabeledTexts(data.labels[800:1100], data.texts[800:1100])


# The budget's clock in :func:`searched`: seconds a training step takes per document of its batch, whatever the
# machine's load (a start trial of 800 documents x 3 epochs: about a second).
SECONDS_PER_DOCUMENT_STEP = 4e-4


class _WorkClock:
    """A ``time.time`` that moves only as training steps are taken (SECONDS_PER_DOCUMENT_STEP per document): the
    search's budget, its trials' seconds and their estimates are then the same on any machine, and a test of the
    budget cannot fail because the machine was busy during the refit (a real clock's assertion did, under load)."""

    def __init__(self):
        self.now = 1_700_000_000.0

    def time(self):
        return self.now

    def steps(self, to_batch_arrays):
        def counted(part, *args, **kwargs):
            self.now += SECONDS_PER_DOCUMENT_STEP * part.size
            return to_batch_arrays(part, *args, **kwargs)
        return counted


@pytest.fixture(scope="module")
def searched(splits):
    importlib.import_module("mxnet")  # a one-off import of several seconds on a busy machine; not what is tested
    import fasttext_lib.train

    clock = _WorkClock()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(time, "time", clock.time)
        patch.setattr(fasttext_lib.train, "to_batch_arrays", clock.steps(fasttext_lib.train.to_batch_arrays))
        started = time.time()
        result = autotune(*splits, duration=10.0, base=BASE, start=START, verbose=False)
        return result, time.time() - started


def _expected_chosen(trials, n_val):
    """Replays the choice from the table: the start, then every trial whose sign test against the
    chosen one so far is below ALPHA / (trial - 1); checks each row's paired counts against the accuracies."""
    chosen = trials.iloc[0]
    assert chosen.adopted and (chosen.gained, chosen.lost) == (0, 0)
    for _, row in trials.iloc[1:].iterrows():
        if pd.isna(row.val_accuracy):  # a setting that diverged (timing decides which trials run): never adopted
            assert not row.adopted
            continue
        assert row.gained - row.lost == round((row.val_accuracy - chosen.val_accuracy) * n_val)  # paired, same documents
        assert row.p_value == pytest.approx(sign_test(row.gained, row.lost))
        assert row.adopted == (row.p_value < ALPHA / (row.trial - 1))
        if row.adopted:
            chosen = row
    return chosen


def test_budget_is_respected(searched):
    result, wall = searched  # (seconds of the work clock: _WorkClock)
    assert len(result.trials) >= 2  # it searched, not just the start
    assert result.trained.autotune["ended"] == "budget"  # the budget, not the candidates running out, ended it
    # a trial is started only if it and the refit are expected to finish in time: at most one trial's
    # overrun, and the refit (the chosen setting on 1.375x the documents) if that left it no room
    assert wall <= 10.0 + 2.5 * result.trials.seconds.max()
    assert result.trials.seconds.sum() <= wall


def test_trial_table_and_best_config(searched, splits):
    result, _ = searched
    trials = result.trials
    assert list(trials.columns) == TABLE_COLUMNS
    assert list(trials.trial) == list(range(1, len(trials) + 1))
    assert trials.phase.iloc[0] == "start" and trials.val_accuracy.between(0, 1).all()
    assert not trials.duplicated(subset=list(SEARCHED)).any()  # no setting is tried twice
    best = _expected_chosen(trials, len(splits[1]))
    assert {k: getattr(result.best_config, k) for k in SEARCHED} == {k: best[k] for k in SEARCHED}
    assert result.trained.autotune["best_trial"] == best.trial
    assert (result.trained.featurizer.ngrams, result.trained.model.emsize) == (best.ngrams, best.emsize)  # its model


def test_refit_on_train_and_validation(searched, splits):
    """By default the chosen setting is trained again on both splits, within the budget."""
    result, _ = searched
    train, val = splits
    assert result.trained.autotune["refit"] is True and result.trained.autotune["trained_on"] == len(train) + len(val)
    from fasttext_lib.train import featurize

    train_only = featurize(train, None, result.best_config)[0]
    both = featurize(LabeledTexts(train.labels + val.labels, train.texts + val.texts), None, result.best_config)[0]
    assert train_only.vocab_size < both.vocab_size == result.trained.featurizer.vocab_size  # validation words are in it
    assert {k: getattr(result.trained.config, k) for k in SEARCHED} == {k: getattr(result.best_config, k) for k in SEARCHED}


def test_the_refitted_models_bundle_says_it_was_refitted_not_trained_without_validation_data(tuned, tmp_path):
    """The default refit trains the final model on the training and validation data together: its bundle said
    "no held-out accuracy at training (trained without validation data)", as if it had had none, and its score's
    split was "validation", a split no score was taken on."""
    from fasttext_lib.bundle import save_bundle

    score = Predictor.load(save_bundle(tuned, str(tmp_path / "b"))).held_out_score
    assert score == tuned.held_out_score == (None, None, None, True)
    assert score.describe() == ("no held-out accuracy at training (the final model was refitted on training + "
                                "validation data, so it has no held-out score)")


def test_final_model_scores_as_its_trial_without_refit(splits):
    result = autotune(*splits, duration=600.0, base=BASE, start=START, max_trials=3, verbose=False, refit=False)
    assert result.trained.autotune["refit"] is False and result.trained.autotune["trained_on"] == len(splits[0])
    predictor = Predictor(result.trained.model, result.trained.featurizer, result.trained.labels, result.best_config)
    accuracy = predictor.evaluate(splits[1])["accuracy"]
    assert accuracy == pytest.approx(_expected_chosen(result.trials, len(splits[1])).val_accuracy, abs=1e-9)  # its trial's
    assert result.trained.history[-1]["val_accuracy"] == pytest.approx(accuracy, abs=1e-9)


def test_the_results_evaluate_checks_its_data_as_a_loaded_bundles_does(splits):
    """AutotuneResult.evaluate (notebook 02 scores its test split with it) scored the texts as given, without the
    checks Predictor.evaluate makes: no documents gave NaN accuracy with numpy's warnings, a DataFrame or a path an
    AttributeError, int classes (a DataFrame's column as read) an AttributeError, and a missing text (NaN) a TypeError.
    It now checks and scores as the bundle saved from the model does, and its answer is that bundle's."""
    ids = {"negative": "1", "positive": "2"}  # (classes written as numbers, as the Zhang sets' are)
    train, val = (LabeledTexts([ids[label] for label in split.labels], split.texts) for split in splits)
    result = autotune(train, val, duration=600.0, base=BASE, start=START, max_trials=1, verbose=False, refit=False)
    assert result.evaluate(val) == Predictor(result.trained.model, result.trained.featurizer, result.trained.labels,
                                             result.best_config).evaluate(val)
    assert result.evaluate(val)["accuracy"] == pytest.approx(result.trials.val_accuracy.iloc[0], abs=1e-9)
    as_ints = LabeledTexts([int(label) for label in val.labels], val.texts)
    assert result.evaluate(as_ints) == result.evaluate(val)
    for data, refused in ((LabeledTexts([], []), "^evaluation data: contains no labeled documents$"),
                          (pd.DataFrame({"label": val.labels, "text": val.texts}), "^data must be LabeledTexts"),
                          ("val.csv", "^data must be LabeledTexts"),
                          (LabeledTexts(val.labels[:2], [float("nan"), val.texts[1]]), r"^data.texts\[0\] is nan")):
        with pytest.raises(FastTextError, match=refused):
            result.evaluate(data)


def test_validation_labeled_by_the_class_names(splits):
    """Validation data labeled by the names of the training data's classes (what predictions show) is searched
    against as the classes it names, and the refit (train + validation) keeps one label per class: the validation
    labels were refused as unknown, and would have been two more classes in the refit's data."""
    names = {"negative": "bad", "positive": "good"}
    train, val = splits
    named_train = LabeledTexts(list(train.labels), list(train.texts), dict(names))
    named_val = LabeledTexts([names[label] for label in val.labels], list(val.texts))
    by_id, by_name = (autotune(named_train, v, duration=600.0, base=BASE, start=START, max_trials=1, verbose=False)
                      for v in (val, named_val))
    assert by_name.trained.labels == ["negative", "positive"] and by_name.trained.label_names == names
    assert by_name.trained.autotune["trained_on"] == len(train) + len(val)
    pd.testing.assert_frame_equal(by_id.trials.drop(columns=["seconds"]), by_name.trials.drop(columns=["seconds"]))
    pa, pb = params_of(by_id.trained), params_of(by_name.trained)
    assert all(np.array_equal(pa[k], pb[k]) for k in pa)
    assert by_name.evaluate(named_val) == by_id.evaluate(val)


def test_refit_as_text_is_refused_before_any_trial(splits):
    """refit="no" was true: the chosen setting was trained again on train + validation, against the ask."""
    with pytest.raises(FastTextError, match="^refit must be True or False, got 'no'$"):
        autotune(*splits, duration=600.0, base=BASE, start=START, max_trials=1, verbose=False, refit="no")


def test_deterministic_for_a_seed(splits):
    runs = [autotune(*splits, duration=600.0, base=BASE, start=START, max_trials=4, verbose=False) for _ in range(2)]
    a, b = (r.trials.drop(columns=["seconds"]) for r in runs)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 4
    pa, pb = (params_of(r.trained) for r in runs)
    assert all(np.array_equal(pa[k], pb[k]) for k in pa)
    other = autotune(*splits, duration=600.0, base=BASE, start=replace(START, seed=7), max_trials=1, verbose=False)
    assert other.trials.val_loss.iloc[0] != a.val_loss.iloc[0]  # the seed reaches the trials


def test_each_trial_scores_its_validation_split_once_per_epoch_and_its_row_is_that_scoring(splits, monkeypatch):
    """A trial's validation split was scored twice after its last epoch: by train (val_accuracy, val_loss), then again
    by the search for each document's answer (the paired test's). One scoring gives both now: the search reads the
    answers of train's (TrainedModel.val_right). The table is what it was: each row's accuracy, and its gained, lost,
    p-value and adoption against the chosen trial, as the trials' models score the split apart from the search."""
    from fasttext_lib import autotune as autotune_module
    from fasttext_lib.label_encoding import encode_labels
    from fasttext_lib.scoring import CpuScorer, probabilities

    scored = []  # the documents of each scoring of the search's models
    real_scoring, real_train = CpuScorer.probabilities, autotune_module.train
    monkeypatch.setattr(CpuScorer, "probabilities",
                        lambda self, bags: scored.append(len(bags)) or real_scoring(self, bags))
    apart = []  # each trial's answers (right or wrong) on the validation split, scored here

    def train(train_data, val_data, config, **kwargs):
        trained = real_train(train_data, val_data, config, **kwargs)
        if val_data is not None:  # a trial (the refit has none)
            n = len(scored)
            y = encode_labels(val_data.labels, trained.labels, "validation data")
            bags = trained.featurizer.transform(val_data.texts)
            apart.append(probabilities(trained.model, trained.featurizer, bags, trained.ctx[0]).argmax(axis=1) == y)
            del scored[n:]  # (this test's own)
        return trained

    monkeypatch.setattr(autotune_module, "train", train)
    trials = autotune(*splits, duration=600.0, base=BASE, start=START, max_trials=8, verbose=False).trials
    assert trials.val_accuracy.notna().all() and trials.adopted.sum() >= 2  # (a search that chose, not the start alone)
    assert scored == [len(splits[1])] * int(trials.epochs.sum())  # one scoring per epoch, none more
    chosen_right = None
    for row, right in zip(trials.itertuples(), apart):
        gained, lost, p_value = (0, 0, 1.0) if chosen_right is None else compare(right, chosen_right)
        adopted = chosen_right is None or p_value < adoption_threshold(row.trial)
        assert (row.val_accuracy, row.gained, row.lost, row.p_value, row.adopted) == \
            (right.mean(), gained, lost, p_value, adopted), row
        chosen_right = right if adopted else chosen_right


def test_tie_rule():
    """The order the search moves by (its centre): not the choice of the final model."""
    rows = [{"trial": 1, "val_accuracy": 0.8, "val_loss": 0.451, "work": 100.0},
            {"trial": 2, "val_accuracy": 0.8, "val_loss": 0.449, "work": 50.0},  # ties 1 (loss 0.45): cheaper wins
            {"trial": 3, "val_accuracy": 0.8, "val_loss": 0.449, "work": 50.0},  # ties 2 exactly: the earlier wins
            {"trial": 4, "val_accuracy": 0.8, "val_loss": 0.30, "work": 500.0},  # lower loss beats cheaper
            {"trial": 5, "val_accuracy": 0.79, "val_loss": 0.1, "work": 1.0}]  # accuracy first
    assert max(rows[:3], key=_rank)["trial"] == 2
    assert max(rows, key=_rank)["trial"] == 4


def test_sign_test():
    assert sign_test(0, 0) == 1.0  # no disagreement: no evidence
    assert sign_test(5, 0) == 1 / 32 and sign_test(0, 5) == 1.0
    assert sign_test(3, 1) == pytest.approx(5 / 16)  # P(X >= 3), X ~ Binomial(4, 1/2)
    assert sign_test(60, 40) == pytest.approx(0.0284, abs=1e-4)  # normal approximation: z = 2.0 -> 0.0228 (+ continuity)
    assert sign_test(400, 300) < 1e-4  # large counts stay exact and finite


def test_compare_near_tie_and_clear_gain():
    rng = np.random.RandomState(0)
    chosen = rng.rand(300) < 0.75
    near = chosen.copy()
    near[np.flatnonzero(~chosen)[:3]] = True  # 3 more right, nothing lost: +1 point, but 3 of 3 could be luck
    assert compare(near, chosen) == (3, 0, 1 / 8) and not compare(near, chosen)[2] < ALPHA
    noisy = chosen.copy()
    noisy[np.flatnonzero(~chosen)[:20]] = True  # +20 / -14: +2 points of accuracy, a near-tie on these documents
    noisy[np.flatnonzero(chosen)[:14]] = False
    gained, lost, p = compare(noisy, chosen)
    assert (gained, lost) == (20, 14) and p > ALPHA
    clear = chosen.copy()
    clear[np.flatnonzero(~chosen)[:25]] = True  # +25 / -5
    clear[np.flatnonzero(chosen)[:5]] = False
    gained, lost, p = compare(clear, chosen)
    assert (gained, lost) == (25, 5) and p < ALPHA


def test_the_adoption_threshold_shrinks_with_the_comparisons_made():
    """Bonferroni over the trials compared so far: trial 46 of a real search (p = 0.0318, +14 / -5) no longer
    replaces the start, while a clear gain early in the search (+25 / -5, p = 0.00016) still does."""
    assert [adoption_threshold(k) for k in (1, 2, 3, 6)] == [ALPHA, ALPHA, ALPHA / 2, ALPHA / 5]
    assert sign_test(14, 5) == pytest.approx(0.0318, abs=1e-4) and not sign_test(14, 5) < adoption_threshold(46)
    assert sign_test(14, 5) < ALPHA  # what the former rule (5% for every trial) adopted
    assert sign_test(25, 5) < adoption_threshold(6)


def test_a_near_tie_does_not_displace_the_start():
    # perfectly separable: many settings score 1.0 on validation; none can be significantly better than the start
    texts = [("great tasty lovely" if i % 2 else "awful cold rude") + f" w{i % 7}" for i in range(240)]
    labels = ["pos" if i % 2 else "neg" for i in range(240)]
    train, val = LabeledTexts(labels[:200], texts[:200]), LabeledTexts(labels[200:], texts[200:])
    result = autotune(train, val, duration=600.0, base=BASE, start=START, max_trials=5, verbose=False)
    assert (result.trials.val_accuracy == 1.0).sum() >= 2 and result.trials.val_accuracy.iloc[0] == 1.0
    assert result.trained.autotune["best_trial"] == 1 == _expected_chosen(result.trials, len(val)).trial
    assert not result.trials.adopted.iloc[1:].any()
    assert {k: getattr(result.best_config, k) for k in SEARCHED} == {k: getattr(START, k) for k in SEARCHED}


def test_a_clearly_better_trial_displaces_the_start(splits):
    # a start that has barely learned (one epoch at a tiny lr): the first trials at 4x its lr are far better
    weak = replace(START, lr=0.02, epochs=1)
    result = autotune(*splits, duration=600.0, base=BASE, start=weak, max_trials=6, verbose=False)
    trials = result.trials
    chosen = _expected_chosen(trials, len(splits[1]))
    assert chosen.trial > 1 and result.trained.autotune["best_trial"] == chosen.trial
    assert chosen.val_accuracy > trials.val_accuracy.iloc[0] and chosen.p_value < adoption_threshold(chosen.trial)
    assert result.best_config.lr > weak.lr


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
    with pytest.raises(FastTextError, match="positive"):
        autotune(*splits, duration=0)
    with pytest.raises(FastTextError, match="not seen in training"):
        autotune(splits[0], LabeledTexts(["9"], ["x"]), duration=5)
    with pytest.raises(FastTextError, match="non-empty validation"):
        autotune(splits[0], LabeledTexts(), duration=5)


@pytest.fixture(scope="module")
def data_files(splits, tmp_path_factory):
    """train.csv and val.csv for the command line: the first 400 and 150 documents of ``splits`` (each command's search
    trains the start and the refit at the library's settings for the data, whatever it checks: half the documents,
    half the training; the Python API's checks of the search itself keep ``splits`` whole)."""
    d = tmp_path_factory.mktemp("autotune_data")
    train_split, val_split = splits
    write_csv(LabeledTexts(train_split.labels[:400], train_split.texts[:400]), str(d / "train.csv"))
    write_csv(LabeledTexts(val_split.labels[:150], val_split.texts[:150]), str(d / "val.csv"))
    return d


def test_cli_end_to_end(data_files, tmp_path, capsys):
    out, csv = tmp_path / "bundle", tmp_path / "trials.csv"
    r = run_cli("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                "--autotune-duration", "3", "--buckets", "50000", "--output", out, "--autotune-trials", csv, "--no-progress")
    assert r.returncode == 0, r.stderr
    trials = pd.read_csv(csv)
    assert list(trials.columns) == TABLE_COLUMNS and len(trials) >= 1
    assert len([line for line in r.stdout.splitlines() if line.startswith('{"trial"')]) == len(trials)
    assert "chosen: trial" in r.stderr
    predictor = Predictor.load(out)
    metrics = predictor.metrics  # the bundle's metrics.json
    best = _expected_chosen(trials, len(_read(data_files / "val.csv")[0]))
    assert metrics["autotune"]["best_trial"] == best.trial and len(metrics["autotune"]["trials"]) == len(trials)
    assert metrics["autotune"]["best"]["ngrams"] == best.ngrams
    assert predictor.config["train_config"]["lr"] == pytest.approx(best.lr)
    n_val = len(_read(data_files / "val.csv")[0])
    assert metrics["autotune"]["refit"] is True and metrics["autotune"]["trained_on"] == len(_read(data_files / "train.csv")[0]) + n_val
    # The refit trained on the validation file: scored on it (or a copy of it), evaluate said 0.99 where the chosen
    # trial scored 0.67 on the same documents, with no word that they were no held-out data.
    copy = tmp_path / "copy_of_val.csv"
    copy.write_bytes((data_files / "val.csv").read_bytes())
    for data in (data_files / "val.csv", copy):  # (in this process: the command's lines are under test, not its process)
        r = cli_in_process("evaluate", "--model", out, "--data", data)
        assert r.returncode == 0, r.stderr
        assert r.stderr.splitlines() == [
            f"warning: {data} holds the documents of the --autotune-validation data this model was trained on "
            f"(autotune's refit trains the chosen setting on the training and validation data; --autotune-no-refit "
            f"keeps them out): its accuracy here is not a held-out score"]
    r = cli_in_process("evaluate", "--model", out, "--data", data_files / "train.csv")  # (the training data: the user's to know)
    assert r.returncode == 0 and r.stderr == ""
    # The Python API (notebooks, scripts) said nothing: Predictor.evaluate and evaluate_examples say it too.
    from fasttext_lib.data import iter_examples

    capsys.readouterr()
    val = LabeledTexts(*_read(data_files / "val.csv"))
    for scored, where in ((lambda: predictor.evaluate(val), "the evaluation data"),
                          (lambda: predictor.evaluate_examples(iter_examples(str(copy)), where=str(copy)), str(copy))):
        assert scored()["n"] == len(val)
        assert capsys.readouterr().err.splitlines() == [
            f"warning: {where} holds the documents of the --autotune-validation data this model was trained on "
            f"(autotune's refit trains the chosen setting on the training and validation data; --autotune-no-refit "
            f"keeps them out): its accuracy here is not a held-out score"]
    predictor.evaluate(LabeledTexts(*_read(data_files / "train.csv")))
    assert capsys.readouterr().err == ""


def test_autotune_says_which_of_its_final_models_settings_came_from_the_data(splits, capsys):
    """A plain train says ``settings from the data: sgd lr=... batch=... (N documents, E epochs)``; autotune never
    did, with progress on too: its trials and refit run with progress off, and each trial's lr and batch size are set
    (the start computes them from the data: starting_config), so train() resolved nothing to say. It says the line
    once, of its final model: from the data where the search kept the start's (the library's rule for the training
    split at the start's epochs), given where the caller gave the start, searched where the search moved them."""
    train_split, val_split = splits  # (400 and 150 of them: each call below trains the start and its refit)
    splits = (LabeledTexts(train_split.labels[:400], train_split.texts[:400]),
              LabeledTexts(val_split.labels[:150], val_split.texts[:150]))
    capsys.readouterr()
    base = replace(BASE, progress=True)
    result = autotune(*splits, duration=600, base=base, max_trials=1, verbose=False)  # the start is the final setting
    start = starting_config(splits[0], base)
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("settings ")]
    assert said == [f"settings from the data: sgd lr={start.lr:g} batch={start.batch_size} ({len(splits[0])} "
                    f"documents, 10 epochs)"], said
    assert (result.trained.config.lr, result.trained.config.batch_size) == (start.lr, start.batch_size)
    autotune(*splits, duration=600, base=BASE, max_trials=1, verbose=False)  # progress off: no line, as train's
    assert not [line for line in capsys.readouterr().err.splitlines() if line.startswith("settings ")]
    from fasttext_lib.autotune import _final_settings_line

    moved = replace(start, lr=start.lr * 4, epochs=20)
    assert _final_settings_line(moved, start, True, len(splits[0]), None) == (
        f"settings from the data: batch={start.batch_size} ({len(splits[0])} documents, 10 epochs); searched by "
        f"autotune: sgd lr={start.lr * 4:g}")
    assert _final_settings_line(replace(START, batch_size=16), START, False, len(splits[0]), None) == (
        "settings given: sgd lr=2; searched by autotune: batch=16")


@pytest.mark.parametrize("progress", [True, False])
def test_cli_autotune_says_the_settings_line_of_its_final_model(data_files, tmp_path, progress):
    """train --autotune-validation printed no 'settings ...' line, which a plain train prints: one now, naming the
    bundle's lr and batch size; none with --no-progress, as a plain train."""
    out = tmp_path / "bundle"
    r = cli_in_process("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                       "--autotune-duration", "1", "--buckets", "50000", "--output", out, "--ctx", "cpu",
                       *([] if progress else ["--no-progress"]))
    assert r.returncode == 0, r.stderr
    said = [line for line in r.stderr.splitlines() if line.startswith("settings ")]
    if not progress:
        assert said == [], r.stderr
        return
    used = Predictor.load(out).config["train_config"]
    assert len(said) == 1 and f"sgd lr={used['lr']:g}" in said[0] and f"batch={used['batch_size']}" in said[0], said


def test_cli_no_refit_keeps_the_trial_model(data_files, tmp_path, monkeypatch):
    out, csv = tmp_path / "bundle", tmp_path / "trials.csv"
    csv.write_text("an older run's trials\n")  # replaced, as --overwrite asks
    r = run_cli("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                "--autotune-duration", "3", "--buckets", "50000", "--output", out, "--autotune-trials", csv, "--no-progress",
                "--autotune-no-refit", "--overwrite")
    assert r.returncode == 0, r.stderr
    assert csv.read_text().startswith("trial,phase")
    predictor = Predictor.load(out)
    val = LabeledTexts(*_read(data_files / "val.csv"))
    best = _expected_chosen(pd.read_csv(csv), len(val))
    assert predictor.metrics["autotune"]["refit"] is False
    assert predictor.metrics["autotune"]["trained_on"] == len(_read(data_files / "train.csv")[0])
    assert predictor.evaluate(val)["accuracy"] == pytest.approx(best.val_accuracy)  # the chosen trial's own model
    r = cli_in_process("evaluate", "--model", out, "--data", data_files / "val.csv")
    assert r.returncode == 0 and r.stderr == ""  # held out: no warning
    # (and no record: no text is fingerprinted for it)
    monkeypatch.setattr("fasttext_lib.trained_on.fingerprint", lambda text: pytest.fail("fingerprinted"))
    assert predictor.evaluate_examples(zip(val.labels, val.texts))["n"] == len(val)
    assert predictor.evaluate(val)["n"] == len(val)


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
    run = run_cli if flags == ["--autotune-duration", "0"] else cli_in_process  # one CLI process; the others in-process
    r = run("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                "--output", tmp_path / "o", *flags)
    _assert_one_error_line(r, pattern)
    assert not (tmp_path / "o").exists()


def test_autotune_flags_need_a_validation_file(data_files, tmp_path):
    r = run_cli("train", "--train", data_files / "train.csv", "--output", tmp_path / "o", "--autotune-trials", tmp_path / "t.csv")
    _assert_one_error_line(r, "--autotune-trials needs --autotune-validation")
    r = cli_in_process("train", "--train", data_files / "train.csv", "--output", tmp_path / "o", "--autotune-no-refit")
    _assert_one_error_line(r, "--autotune-no-refit needs --autotune-validation")


@pytest.mark.parametrize("trials, pattern", [
    ("{tmp}/train.csv", "is the --train file"),
    ("{tmp}/./sub/../train.csv", "is the --train file"),
    ("{tmp}/hardlink.csv", "is the --train file"),
    ("{tmp}/symlink.csv", "is the --train file"),
    ("{tmp}/val.csv", "is the --autotune-validation file"),
    # where training reads its classes' names: --overwrite replaced the user's names file with the table
    ("{tmp}/train.classes.txt", "is where the names of the --train file's classes are read"),
    ("{tmp}/classes.txt", "is where the names of the --train file's classes are read"),
    ("{tmp}/o", "would replace the bundle --output"),
    ("{tmp}/o/config.json", "would replace the bundle --output"),
    # inside the bundle's directory: the bundle refused the folder holding it, after the whole search
    ("{tmp}/o/trials.csv", "would replace the bundle --output"),
    ("{tmp}/o/sub/trials.csv", "would replace the bundle --output"),
    ("{tmp}", "is a directory"),
    ("{tmp}/train.csv/t.csv", "exists and is not a directory"),  # under a regular file: never writable
    ("{tmp}/fifo", "it exists and is not a regular file"),
    ("s3://bucket/dir/", "--autotune-trials: S3 URI names no object: s3://bucket/dir/"),
])
def test_trials_output_is_checked_before_the_search(data_files, tmp_path, trials, pattern):
    # It was written after the search and the bundle: over the training data when they were the same
    # file, and an unwritable path failed only once everything else was done.
    import shutil

    for name in ("train.csv", "val.csv"):
        shutil.copy(data_files / name, tmp_path / name)
    os.link(tmp_path / "train.csv", tmp_path / "hardlink.csv")
    os.symlink(tmp_path / "train.csv", tmp_path / "symlink.csv")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "train.classes.txt").write_text("1=negative\n2=positive\n")
    before = {name: (tmp_path / name).read_bytes() for name in ("train.csv", "val.csv", "train.classes.txt")}
    run = run_cli if trials == "{tmp}/train.csv" else cli_in_process  # one CLI process; the others in-process
    r = run("train", "--train", tmp_path / "train.csv", "--autotune-validation", tmp_path / "val.csv",
                "--autotune-duration", "5", "--output", tmp_path / "o", "--autotune-trials", trials.format(tmp=tmp_path),
                "--no-progress", *(["--overwrite"] if "classes" in trials else []))
    _assert_one_error_line(r, pattern)
    assert not (tmp_path / "o").exists() and '{"trial"' not in r.stdout  # no trial ran
    assert {name: (tmp_path / name).read_bytes() for name in ("train.csv", "val.csv", "train.classes.txt")} == before


@pytest.mark.parametrize("where", ["local", "s3"])
def test_an_existing_trial_table_is_kept_without_overwrite(data_files, tmp_path, where, request):
    # It was replaced without a word, while a bundle at --output is refused unless --overwrite. Now it is refused
    # the same way, before any data is read (the --train here does not even exist).
    from fasttext_lib import storage

    if where == "s3":
        trials = storage.join(request.getfixturevalue("s3_bucket"), "runs", "trials.csv")
        with storage.atomic_write(trials) as f:
            f.write(b"my old trials\n")
    else:
        trials = tmp_path / "trials.csv"
        trials.write_text("my old trials\n")
    r = cli_in_process("train", "--train", tmp_path / "missing.csv", "--autotune-validation", data_files / "val.csv",
                       "--output", tmp_path / "o", "--autotune-trials", trials)
    _assert_one_error_line(r, f"{trials} already exists; pass --overwrite to replace it, or choose another "
                              f"--autotune-trials")
    assert storage.read_bytes(str(trials)) == b"my old trials\n" and not (tmp_path / "o").exists()
    r = cli_in_process("train", "--train", tmp_path / "missing.csv", "--autotune-validation", data_files / "val.csv",
                       "--output", tmp_path / "o", "--autotune-trials", trials, "--overwrite")
    _assert_one_error_line(r, "no such file")  # with --overwrite it goes on, to the data
    assert storage.read_bytes(str(trials)) == b"my old trials\n"


def test_trials_output_and_label_names(data_files, tmp_path, monkeypatch):
    (tmp_path / "names.txt").write_text("1=neg\n2=pos\n")
    common = ["train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
              "--autotune-duration", "0.01", "--buckets", "50000", "--no-progress"]  # (the start, one trial, is enough)
    r = run_cli(*common, "--output", tmp_path / "o", "--label-names", tmp_path / "names.txt",
                "--autotune-trials", tmp_path / "names.txt")
    _assert_one_error_line(r, "is the --label-names file")
    assert (tmp_path / "names.txt").read_text() == "1=neg\n2=pos\n"
    # a --label-names that is no file ('none', a dataset) is no input file, whatever the table is called
    monkeypatch.chdir(tmp_path)  # (in this process, in that directory: the table's name is under test, not the process)
    r = cli_in_process(*common, "--output", tmp_path / "o2", "--label-names", "none", "--autotune-trials", "none")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "none").read_text().startswith("trial,phase")


def test_autotune_validation_with_unknown_labels(data_files, tmp_path):
    (tmp_path / "v.csv").write_text('"7","an unseen class"\n')
    r = run_cli("train", "--train", data_files / "train.csv", "--autotune-validation", tmp_path / "v.csv",
                "--output", tmp_path / "o", "--autotune-trials", tmp_path / "t.csv")
    _assert_one_error_line(r, f"{tmp_path / 'v.csv'} has label(s) '7' (line 1) not seen in training")
    assert not (tmp_path / "o").exists() and not (tmp_path / "t.csv").exists()


def test_a_trial_table_the_disk_has_no_room_for_leaves_the_old_bundle(data_files, tmp_path, tmpfs):
    """The table was written after the bundle: a disk too full for it failed the run (exit 2) with the
    user's old bundle already replaced by the new one. Now neither the bundle nor the old table changes."""
    out, disk = tmp_path / "o", tmpfs("16k")
    r = cli_in_process("train", "--train", data_files / "train.csv", "--output", out, "--epochs", "1", "--buckets", "50000",
                       "--no-progress")
    assert r.returncode == 0, r.stderr
    before = {name: (out / name).read_bytes() for name in os.listdir(out)}
    (disk / "trials.csv").write_text("my old trials\n")
    with open(disk / "filler", "wb", buffering=0) as f:  # the rest of the disk
        with pytest.raises(OSError):
            while True:
                f.write(b"\0" * 1024)
    r = run_cli("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                "--autotune-duration", "0.01", "--buckets", "50000", "--output", out, "--autotune-trials", disk / "trials.csv",
                "--no-progress", "--overwrite")
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]  # after the search's table
    assert r.returncode == 2 and errors == [f"error: cannot write {disk / 'trials.csv'}: No space left on device"], r.stderr
    assert "Traceback" not in r.stderr
    assert {name: (out / name).read_bytes() for name in os.listdir(out)} == before
    assert sorted(os.listdir(disk)) == ["filler", "trials.csv"] and (disk / "trials.csv").read_text() == "my old trials\n"


@pytest.mark.parametrize("fails, old_table", [(r"/trials\.csv", b"my old trials\n"), (r"/trials\.csv", None),
                                              (r"/model-", b"my old trials\n"), (r"/model-", None)],
                         ids=["table-upload-fails", "table-upload-fails-no-old-table", "bundle-upload-fails",
                              "bundle-upload-fails-no-old-table"])
def test_with_overwrite_a_failed_s3_upload_keeps_the_old_bundle_and_trial_table(data_files, s3_server, s3_bucket, fails,
                                                                              old_table, monkeypatch):
    """With --overwrite the table on S3 was uploaded after the bundle was published: an upload that failed there
    ended the run in an error (exit 2) with the user's old bundle already replaced by the new one."""
    import boto3
    from fault_proxy import FaultProxy

    out, trials = f"{s3_bucket}/models/run", f"{s3_bucket}/runs/trials.csv"
    bucket = s3_bucket[len("s3://"):]
    # (the old bundle, written in this process: only the autotune run is under test)
    assert cli_in_process("train", "--train", data_files / "train.csv", "--output", out, "--epochs", "1",
                          "--buckets", "50000", "--no-progress").returncode == 0
    if old_table is not None:
        boto3.client("s3").put_object(Bucket=bucket, Key="runs/trials.csv", Body=old_table)

    def objects():
        listed = boto3.client("s3").list_objects_v2(Bucket=bucket).get("Contents", [])
        return {o["Key"]: boto3.client("s3").get_object(Bucket=bucket, Key=o["Key"])["Body"].read() for o in listed}

    before = objects()
    with FaultProxy(s3_server) as proxy:
        proxy.fail("PUT", fails, "500")
        args = ["train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                "--autotune-duration", "0.01", "--buckets", "50000", "--output", out, "--autotune-trials", trials,
                "--no-progress", "--overwrite"]  # (the uploads come after the search, whatever it found)
        env = {"AWS_ENDPOINT_URL": proxy.endpoint, "AWS_MAX_ATTEMPTS": "2"}
        if old_table is not None and fails == r"/trials\.csv":  # one CLI process; the other cases in this one
            r = run_cli(*args, env=env)
        else:
            with monkeypatch.context() as m:
                for key, value in env.items():
                    m.setenv(key, value)
                r = cli_in_process(*args)
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(errors) == 1, r.stderr
    assert "HTTP 500" in errors[0]
    assert objects() == before  # the old bundle and the old table (or none), nothing else


def _assert_one_error_line(r, pattern):
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and pattern in lines[0], r.stderr


def test_settings_whose_table_mxnet_cannot_hold_are_skipped(splits, monkeypatch):
    """A neighbour such as emsize 40 with a large --buckets makes a table MXNet cannot allocate: it is skipped
    and the search goes on (it ended the whole search with that error). The limit is lowered here so that
    START's table (50k buckets x emsize 20 plus the vocabulary) fits and emsize 40 does not."""
    from fasttext_lib import devices

    monkeypatch.setattr(devices, "MAX_TABLE_VALUES", 1_200_000)
    result = autotune(*splits, duration=600.0, base=BASE, start=START, max_trials=18, verbose=False)
    trials = result.trials
    with_buckets = trials[trials["ngrams"] > 1]
    assert len(trials) == 18 and (with_buckets["emsize"] * 50_002 <= 1_200_000).all()
    assert (trials["emsize"] < START.emsize).any()  # the emsize direction that fits was still tried


def test_a_trial_table_another_run_wrote_meanwhile_is_kept_and_this_model_beside_the_output(data_files, tmp_path,
                                                                                            monkeypatch):
    """Two autotune runs writing one --autotune-trials file without --overwrite both found no table at the start;
    the table was checked again only after this run's bundle was published, then put in place by a rename that
    could still replace the other's. The table is now claimed first, in a step that never replaces a file: the other
    run's table is kept. Refused then, this run's model was lost with its training (the run that wrote the table
    saves its bundle at --output next): it is kept beside --output, never at it (beside the other run's table, it
    would pass for that table's model), and the one error line says where, and where its trials are."""
    from fasttext_lib import autotune as autotune_module
    from conftest import cli_in_process

    csv, out = tmp_path / "trials.csv", tmp_path / "bundle"
    real = autotune_module.autotune

    def other_run_finishes_first(*args, **kwargs):
        result = real(*args, **kwargs)
        csv.write_text("the other run's trials\n")
        return result
    monkeypatch.setattr(autotune_module, "autotune", other_run_finishes_first)
    r = cli_in_process("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                       "--autotune-duration", "0.01", "--buckets", "50000", "--output", out, "--autotune-trials", csv,
                       "--no-progress")  # (the table is claimed after the search, whatever it found)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr  # (the search's report comes first on stderr)
    assert r.stderr.strip().splitlines()[-1] == (f"error: {csv} was written by another run while this one trained; "
                                                 f"this run's model is kept as {out}.1, its trials in its metrics.json "
                                                 f"(autotune)")
    assert csv.read_text() == "the other run's trials\n"
    assert not out.exists() or os.listdir(out) == []  # (the other run's bundle goes there)
    assert Predictor.load(f"{out}.1").metrics["autotune"]["trials"]


def test_a_trial_that_diverges_is_recorded_and_the_search_goes_on():
    """The search tries lr up to 64 (LIMITS): on data it fits easily (here the validation split is the training
    data, as when --autotune-validation names the --train file) lr 64 diverges, and that one trial's
    'training diverged' error ended the whole search (minutes of trials, no bundle). Now the trial is a row
    without accuracy, never chosen, and the search goes on."""
    from fasttext_lib.sample import load_sample

    data = load_sample("train").head(800)
    start = replace(START, lr=16.0, batch_size=16, epochs=10, emsize=100)
    result = autotune(data, data, duration=600.0, base=BASE, start=start, max_trials=6, verbose=False, refit=False)
    trials = result.trials
    failed = trials[trials["val_accuracy"].isna()]
    assert len(trials) == 6 and len(failed) >= 1 and (failed["lr"] == 64.0).all()
    assert not failed["adopted"].any() and result.trained.history[-1]["val_accuracy"] > 0.9
    assert result.best_trial["lr"] < 64.0


def test_a_refit_that_diverges_falls_back_to_the_chosen_trials_model(splits, monkeypatch, capsys):
    """The final refit (train + validation data) can diverge where the chosen setting did not on the training split:
    its 'training diverged' error ended the run after the whole search, with no model. The chosen trial's own model
    (training data only) is kept instead, with a warning, and the result says the refit was not done, and why."""
    import fasttext_lib.autotune as autotune_module
    from fasttext_lib.train import Diverged

    kept = autotune(*splits, duration=600.0, base=BASE, start=START, max_trials=3, verbose=False, refit=False)
    trained = autotune_module.train

    def refit_diverges(train_data, val_data, config, **kwargs):
        if val_data is None:  # the refit: no validation split (the trials always have one)
            raise Diverged("training diverged: loss is nan at epoch 2, step 7 (lr=2, optimizer sgd); try a smaller lr")
        return trained(train_data, val_data, config, **kwargs)

    monkeypatch.setattr(autotune_module, "train", refit_diverges)
    capsys.readouterr()
    result = autotune(*splits, duration=600.0, base=BASE, start=START, max_trials=3, verbose=False, refit=True)
    warning = capsys.readouterr().err.strip().splitlines()
    assert len(warning) == 1 and warning[0].startswith("warning: the final refit on the training and validation data "
                                                       "diverged (training diverged: loss is nan"), warning
    assert f"the final model is the chosen trial's (trial {kept.best_trial['trial']}, training data only)" in warning[0]
    summary = result.trained.autotune
    assert summary["refit"] is False and summary["trained_on"] == len(splits[0])
    assert summary["refit_diverged"].startswith("training diverged: loss is nan")
    assert summary["best_trial"] == kept.trained.autotune["best_trial"]
    for name, value in params_of(kept.trained).items():  # the chosen trial's model, as without a refit
        np.testing.assert_array_equal(params_of(result.trained)[name], value, err_msg=name)
    untimed = [{k: v for k, v in r.items() if k not in ("seconds", "samples_per_s")} for r in kept.trained.history]
    assert [{k: r[k] for k in untimed[0]} for r in result.trained.history] == untimed  # its validation history too


def test_autotune_validation_that_is_the_training_file_is_warned_about(data_files, tmp_path):
    # the search scored each setting on the documents it trained on (the most overfit setting looked best) and the
    # refit trained on every document twice, silently: exit 0
    os.link(data_files / "train.csv", tmp_path / "same.csv")  # another name for it
    r = cli_in_process("train", "--train", data_files / "train.csv", "--autotune-validation", tmp_path / "same.csv",
                       "--autotune-duration", "0.01", "--output", tmp_path / "o", "--no-progress")  # (said first)
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert any("--autotune-validation is the --train file" in line and "hold out" in line for line in warnings), r.stderr


def _trials_without_time(trials):
    """The trials' rows without their seconds, nor what ended the search (each test asserts that itself)."""
    return trials.drop(columns=["seconds", "ended"]).to_dict("records")


def test_an_interrupt_during_the_search_trains_the_best_setting_so_far(splits, monkeypatch, capsys):
    """A KeyboardInterrupt in the search (a notebook's interrupt button, Ctrl-C) ended the call with nothing, however
    many trials had run. As fastText's autotune does, the search now stops there and the chosen setting of the trials
    completed is trained; the result says the search was interrupted, and after how many trials."""
    import fasttext_lib.autotune as autotune_module

    kept = autotune(*splits, duration=600.0, base=BASE, start=START, max_trials=2, verbose=False)  # the same 2 trials
    real, trials_started = autotune_module.train, []

    def interrupted_in_trial_3(train_data, val_data, config, **kwargs):
        if val_data is not None:  # a trial (the final refit has no validation split)
            trials_started.append(config)
            if len(trials_started) == 3:
                raise KeyboardInterrupt
        return real(train_data, val_data, config, **kwargs)

    monkeypatch.setattr(autotune_module, "train", interrupted_in_trial_3)
    capsys.readouterr()
    try:
        result = autotune(*splits, duration=600.0, base=BASE, start=START, verbose=False)
    except KeyboardInterrupt:  # (raised on, it would stop pytest itself)
        pytest.fail("the interrupt ended the search without a model")
    notes = capsys.readouterr().err.strip().splitlines()
    assert len(notes) == 1 and notes[0].startswith("note: the autotune search was stopped (interrupted) after 2 trials"), notes
    assert result.interrupted and not kept.interrupted
    summary = result.trained.autotune
    assert summary["interrupted"] is True and kept.trained.autotune["interrupted"] is False
    assert summary["ended"] == "interrupted"
    assert len(summary["trials"]) == len(result.trials) == 2
    assert _trials_without_time(result.trials) == _trials_without_time(kept.trials)
    assert summary["best_trial"] == kept.trained.autotune["best_trial"] and summary["refit"] is True
    for name, value in params_of(kept.trained).items():  # the chosen setting, refit as without the interrupt
        np.testing.assert_array_equal(params_of(result.trained)[name], value, err_msg=name)


def test_an_interrupt_before_any_trial_completed_or_a_second_one_ends_the_search(splits, monkeypatch):
    """Nothing to keep yet (the start's trial interrupted), or the final training interrupted too: the interrupt
    goes on to the caller, as before."""
    import fasttext_lib.autotune as autotune_module

    real = autotune_module.train

    def interrupted(when):
        calls = []

        def train(train_data, val_data, config, **kwargs):
            calls.append("refit" if val_data is None else "trial")
            if calls.count("trial") == when or ("refit" in calls and when == "refit"):
                raise KeyboardInterrupt
            if calls.count("trial") == 3:
                raise KeyboardInterrupt  # the first interrupt: the search stops
            return real(train_data, val_data, config, **kwargs)
        return train

    for when in (1, "refit"):
        monkeypatch.setattr(autotune_module, "train", interrupted(when))
        with pytest.raises(KeyboardInterrupt):
            autotune(*splits, duration=600.0, base=BASE, start=START, verbose=False)


def test_a_stop_that_a_finalizer_swallowed_between_trials_still_stops_the_search(splits, capsys):
    """A notebook's Stop button pressed while a finalizer ran (MXNet frees NDArrays in ``__del__``): Python dropped
    the KeyboardInterrupt with an 'Exception ignored' traceback and the search went on to its last trial. It now stops
    the search as a press anywhere else does: the chosen setting so far is trained, the result says interrupted."""
    import signal

    class StopPressedHere:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)  # Python's own handler raises here, in the finalizer

    def on_trial(row):
        if row["trial"] == 1:
            StopPressedHere()

    try:
        result = autotune(*splits, duration=600.0, base=BASE, start=START, max_trials=3, verbose=False,
                          on_trial=on_trial)
    except KeyboardInterrupt:  # (raised on, it would stop pytest itself)
        pytest.fail("the press ended the search without a model")
    err = capsys.readouterr().err
    assert result.interrupted and len(result.trials) == 1 and result.trained.autotune["refit"] is True
    assert "Exception ignored" not in err and "stopped (interrupted) after 1 trial" in err


def test_within_the_clis_signal_handling_one_ctrl_c_stops_the_search_and_a_quick_second_one_the_run(splits, monkeypatch):
    """In the CLI a Ctrl-C is an Interrupted raised by stops.stop_on_signals' handler, which then lets a second Ctrl-C
    raise Python's own KeyboardInterrupt and ignores SIGTERM while the run cleans up. A first one stops the search:
    the signal is forgotten and the handlers set again, so a Ctrl-C or SIGTERM during the final training still stops
    the run. A second Ctrl-C before the search has stopped (both in one trial) stops the run."""
    import signal

    import fasttext_lib.autotune as autotune_module
    from fasttext_lib.stops import raise_if_interrupted, stop_on_signals

    real = autotune_module.train

    def ctrl_c_in_trial_2(times):
        calls = []

        def train(train_data, val_data, config, **kwargs):
            calls.append(val_data is None)
            if len(calls) == 2:
                try:
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(5)  # (the handler raises first)
                finally:
                    if times == 2:
                        os.kill(os.getpid(), signal.SIGINT)  # during the trial's cleanup
                        time.sleep(5)
            return real(train_data, val_data, config, **kwargs)
        return train

    monkeypatch.setattr(autotune_module, "train", ctrl_c_in_trial_2(1))
    with stop_on_signals():
        try:
            result = autotune(*splits, duration=600.0, base=BASE, start=START, verbose=False)
        except KeyboardInterrupt:  # (raised on, it would stop pytest itself)
            pytest.fail("the Ctrl-C ended the search without a model")
        assert result.interrupted and len(result.trials) == 1
        assert signal.getsignal(signal.SIGTERM) is signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        raise_if_interrupted()  # (forgotten: nothing raised)
    monkeypatch.setattr(autotune_module, "train", ctrl_c_in_trial_2(2))
    with pytest.raises(KeyboardInterrupt) as stopped:
        with stop_on_signals():
            autotune(*splits, duration=600.0, base=BASE, start=START, verbose=False)
    assert type(stopped.value) is KeyboardInterrupt  # Python's own: the second Ctrl-C


CTRL_C_WRAPPER = """\
import os, sys, time
sys.path.insert(0, {root!r})
import fasttext_lib.autotune as autotune_module
real, calls = autotune_module.train, []

def paused(train_data, val_data, config, **kwargs):
    calls.append("refit" if val_data is None else f"trial {{len(calls) + 1}}")
    if calls[-1] in os.environ["PAUSE_IN"].split(","):
        with open(os.environ["PAUSE_MARK"], "a") as f:
            f.write(calls[-1] + "\\n")
        time.sleep(120)
    return real(train_data, val_data, config, **kwargs)

autotune_module.train = paused
from fasttext_lib.cli import run
sys.exit(run())
"""


def _autotune_process(data_files, tmp_path, wrapper_pauses=None):
    """``train --autotune-validation`` in a process of its own, its stdout and stderr piped; ``wrapper_pauses``: the
    trainings ("trial 2", "refit") that stop for 2 minutes first, each adding its name as a line to tmp_path/paused."""
    import subprocess
    import sys

    from conftest import ROOT

    command = [sys.executable, "-m", "fasttext_lib"]
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    if wrapper_pauses is not None:
        wrapper = tmp_path / "wrapper.py"
        wrapper.write_text(CTRL_C_WRAPPER.format(root=ROOT))
        command = [sys.executable, str(wrapper)]
        env.update(PAUSE_IN=",".join(wrapper_pauses), PAUSE_MARK=str(tmp_path / "paused"))
    args = ["train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
            "--autotune-duration", "300", "--buckets", "50000", "--output", tmp_path / "bundle",
            "--autotune-trials", tmp_path / "trials.csv", "--no-progress", "--ctx", "cpu"]
    return subprocess.Popen(command + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def _wait_for_pauses(proc, mark, count):
    deadline = time.time() + 120
    while not (mark.exists() and len(mark.read_text().splitlines()) >= count):
        assert proc.poll() is None and time.time() < deadline, proc.communicate() if proc.poll() is not None else "timeout"
        time.sleep(0.05)


def test_ctrl_c_after_a_trial_completed_trains_and_saves_the_best_setting_so_far(data_files, tmp_path):
    """Ctrl-C minutes into a search exited 130 and kept nothing (no bundle, no trial table). As fastText's autotune
    does, the search now stops, the chosen setting of the completed trials is trained and saved, exit 0."""
    import json
    import re
    import signal

    proc = _autotune_process(data_files, tmp_path)
    first = proc.stdout.readline()  # the first trial is done; the search (300 s) goes on
    assert first.startswith('{"trial": 1'), proc.communicate()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "error:" not in err and "Traceback" not in err, err
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1, err
    stopped_after = int(re.search(r"stopped \(interrupted\) after (\d+) trials?", notes[0]).group(1))
    trials = pd.read_csv(tmp_path / "trials.csv")
    assert len(trials) == stopped_after >= 1 and list(trials.trial) == list(range(1, stopped_after + 1))
    chosen = trials[trials.adopted].iloc[-1]
    predictor = Predictor.load(str(tmp_path / "bundle"))
    summary = predictor.metrics["autotune"]
    assert summary["interrupted"] is True and summary["best_trial"] == chosen.trial
    assert len(summary["trials"]) == stopped_after and summary["refit"] is True
    for name in SEARCHED:
        saved = predictor.config["train_config"][name]
        assert saved == (chosen[name] if name == "optimizer" else pytest.approx(chosen[name])), name
    assert "bundle written to" in err and json.loads(first)["trial"] == 1


def test_ctrl_c_before_any_trial_completed_or_during_the_final_training_keeps_nothing(data_files, tmp_path):
    """With no completed trial there is nothing to train; a second Ctrl-C (here: during the final training) stops the
    run: both exit 130 with one error line, and write neither the bundle nor the trial table."""
    import signal

    for pauses, signals in ((["trial 1"], 1), (["trial 2", "refit"], 2)):
        where = tmp_path / str(signals)
        where.mkdir()
        proc = _autotune_process(data_files, where, wrapper_pauses=pauses)
        for count in range(1, signals + 1):
            _wait_for_pauses(proc, where / "paused", count)
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert proc.returncode == 130 and errors == ["error: interrupted (SIGINT); stopped and cleaned up"], err
        assert "Traceback" not in err and not (where / "bundle").exists() and not (where / "trials.csv").exists()
        notes = [line for line in err.splitlines() if line.startswith("note:")]
        assert len(notes) == signals - 1, err  # the search's stop was said; then the final training was interrupted


def test_sigterm_during_the_search_still_stops_the_run(data_files, tmp_path):
    """A scheduler's stop (SIGTERM) is a stop: exit 143, nothing written, even with trials completed."""
    import signal

    proc = _autotune_process(data_files, tmp_path, wrapper_pauses=["trial 2"])
    _wait_for_pauses(proc, tmp_path / "paused", 1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 143 and "error: terminated (SIGTERM)" in err and "note:" not in err, err
    assert not (tmp_path / "bundle").exists() and not (tmp_path / "trials.csv").exists()


@pytest.mark.parametrize("settings, said", [
    (dict(max_trials=0), "max_trials must be a positive integer, got 0"),  # (an AttributeError traceback)
    (dict(max_trials=-1), "max_trials must be a positive integer, got -1"),
    (dict(max_trials="3"), "max_trials must be a positive integer, got '3'"),  # (a TypeError traceback)
    (dict(max_trials=1.5), "max_trials must be a positive integer, got 1.5"),  # (two trials)
    (dict(start=TrainConfig(epochs=2, batch_size=16)), "autotune's start leaves lr to the data"),  # (a ValueError)
    (dict(start=TrainConfig(epochs=2, lr=0.5)), "autotune's start leaves batch_size to the data"),  # (a TypeError)
    (dict(start=TrainConfig(epochs=2, lr=1000.0, batch_size=16)),  # (a first trial that diverged)
     "autotune's start has lr 1000, outside the range the search tries (0.001 to 64)"),
    (dict(start=TrainConfig(epochs=2, lr=0.5, batch_size=16, emsize=5)), "start has emsize 5, outside the range"),
    (dict(start=TrainConfig(epochs=200, lr=0.5, batch_size=16)), "start has epochs 200, outside the range"),
    (dict(start={"lr": 0.5}), "autotune's start must be a TrainConfig"),
], ids=lambda value: str(value)[:40])
def test_search_settings_that_would_give_an_invalid_trial_are_one_error_before_any(splits, settings, said,
                                                                                  monkeypatch):
    import fasttext_lib.autotune as tuning

    monkeypatch.setattr(tuning, "train", lambda *a, **k: pytest.fail("a trial ran"))
    with pytest.raises(FastTextError) as info:
        autotune(*splits, duration=60, verbose=False, **settings)
    assert said in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("flag", ["--autotune-validation", "--autotune-trials", "--validation", "--checkpoint-dir"])
def test_an_empty_file_flag_is_refused_not_dropped(data_files, tmp_path, flag):
    """``--autotune-validation "$VAL"`` with VAL unset trained without any search and exited 0 (an empty value was
    taken as the flag not given); ``--autotune-trials ""`` wrote no table, ``--validation ""`` scored nothing and
    ``--checkpoint-dir ""`` kept no checkpoints, all without a word. Each is one usage error now, as
    ``--pretrained-vectors ""`` is."""
    extra = [] if flag == "--autotune-validation" else (["--autotune-validation", data_files / "val.csv", "--autotune-duration", "1"]
                                                        if flag == "--autotune-trials" else ["--epochs", "1"])
    r = cli_in_process("train", "--train", data_files / "train.csv", "--output", tmp_path / "o", *extra, flag, "")
    _assert_one_error_line(r, f"argument {flag}: expected a ")
    assert r.stderr.rstrip().endswith("got '' (see python -m fasttext_lib train --help)"), r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("kvstore", ["dist_sync", "dist_async"])
def test_a_cluster_kvstore_is_refused_before_the_search(splits, data_files, tmp_path, kvstore):
    """In a parameter-server cluster each trial joined the cluster again, which MXNet does once per process: the first
    trial trained, the second waited until the cluster timeout, and the run ended in 'the cluster did not move'
    with the search lost (and each host's clock would pick its own trials). One line now, before anything is read:
    whatever the environment (outside a cluster it said only that the DMLC_* variables were missing)."""
    r = cli_in_process("train", "--train", data_files / "train.csv", "--output", tmp_path / "o", "--kvstore", kvstore,
                       "--autotune-validation", data_files / "val.csv", "--autotune-duration", "1")
    _assert_one_error_line(r, f"--autotune-validation cannot search with --kvstore {kvstore}: each trial would join")
    assert not (tmp_path / "o").exists()
    with pytest.raises(FastTextError, match=f"^autotune cannot search with kvstore='{kvstore}': "):
        autotune(*splits, duration=1, base=replace(BASE, kvstore=kvstore), verbose=False)


def test_a_duration_too_large_for_a_float_is_refused(splits):
    """``duration=10**400`` (an int past what a float holds) passed the check (an int compares with inf) and ended
    the search after its first trial in an OverflowError traceback (the budget left is a float subtraction)."""
    with pytest.raises(FastTextError, match=r"^autotune duration must be a positive number of seconds, got 1000"):
        autotune(*splits, duration=10**400, base=BASE, start=START, verbose=False)


def test_searched_settings_given_as_flags_are_said_to_be_unused(data_files, tmp_path):
    """``--lr 0.5 --epochs 3 --ngrams 1`` with --autotune-validation were ignored without a word (the search sets
    them; only --help said so): the bundle had another lr, epochs and n-grams than the command line asked for. One
    warning line names those given (abbreviated flags too), and only those; a run without them has none."""
    common = ["train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
              "--autotune-duration", "0.01", "--buckets", "50000", "--no-progress", "--ctx", "cpu"]
    r = cli_in_process(*common, "--output", tmp_path / "a", "--lr", "0.5", "--epoch", "3", "--ngrams=1", "--min-count", "1")
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: --lr, --epochs and --ngrams are not used with --autotune-validation: the search sets "
                        "the optimizer, lr, batch size, epochs, emsize and n-grams, starting from the library's setting for the data; "
                        "leave them out, or train without --autotune-validation to use them"], r.stderr
    r = cli_in_process(*common, "--output", tmp_path / "b", "--seed", "3")
    assert r.returncode == 0 and "warning:" not in r.stderr, r.stderr


@pytest.mark.parametrize("which, said", [
    ("one class", "warning: the autotune validation data holds one class only ("),
    ("four documents", "warning: the autotune validation data holds 4 documents: no trial can be shown to be better "
                       "than the start on so few (the sign test needs 5 at least), so the search keeps the start"),
])
def test_a_validation_split_that_cannot_judge_the_trials_is_warned_about(splits, capsys, which, said):
    """A validation split of one class scored each setting by how often it predicts that class: the search adopted a
    model biased toward it (the sample: trial 5, 2 epochs, 'val accuracy 0.99'), and the refit added its documents,
    all of that class. One of 4 documents or fewer can never show a trial better than the start (the smallest sign
    test p is 0.5 ** n): the whole budget went to trials that could not be chosen. Neither said a word."""
    train_data, val = splits
    if which == "one class":
        keep = [i for i, label in enumerate(val.labels) if label == val.labels[0]]
    else:
        keep = list(range(4))
    val = LabeledTexts([val.labels[i] for i in keep], [val.texts[i] for i in keep])
    capsys.readouterr()
    autotune(train_data, val, duration=60, base=BASE, start=START, max_trials=1, verbose=False)
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].startswith(said), warnings


def test_the_bundle_says_what_ended_the_search(splits, monkeypatch, capsys):
    """Two runs with the same seed try the same settings in the same order, but the budget (wall-clock) decides
    where the search stops, so their results agree only if neither was cut short by it. Nothing said which it was:
    metrics.json's "autotune" now has "ended" ("budget": a candidate did not fit in the time left; "max_trials";
    "interrupted"; "complete": every candidate tried, reproducible whatever the budget), and so does a stderr line."""
    from fasttext_lib.autotune import _Search

    ended = {}
    for case, kwargs in {"max_trials": dict(duration=600, max_trials=1), "budget": dict(duration=1e-3)}.items():
        result = autotune(*splits, base=BASE, start=START, verbose=True, **kwargs)
        ended[case] = result.trained.autotune["ended"]
        assert f"search ended: {case}" in capsys.readouterr().err
    monkeypatch.setattr(_Search, "__iter__", lambda self: iter([("start", self.start)]))  # a search of one candidate
    ended["complete"] = autotune(*splits, duration=600, base=BASE, start=START, verbose=False).trained.autotune["ended"]
    assert ended == {"max_trials": "max_trials", "budget": "budget", "complete": "complete"}


@pytest.mark.parametrize("ending", ["gz", "bz2", "xz"])
def test_a_trial_table_named_compressed_is_compressed(data_files, tmp_path, ending):
    """``--autotune-trials trials.csv.gz`` wrote plain text under that name: pd.read_csv (which goes by the name),
    zcat, bzcat and xzcat all refused it. It is compressed as named now (as export-vectors' .vec.gz is)."""
    table = tmp_path / f"trials.csv.{ending}"
    r = cli_in_process("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                       "--autotune-duration", "0.01", "--buckets", "50000", "--no-progress", "--ctx", "cpu",
                       "--output", tmp_path / "o", "--autotune-trials", table)
    assert r.returncode == 0, r.stderr
    trials = pd.read_csv(table)
    assert list(trials.columns) == TABLE_COLUMNS and len(trials) >= 1


@pytest.mark.parametrize("name, written_as", [("t.zip", "a zip archive"), ("t.csv.zst", "zstd data"),
                                              ("t.tar", "a tar archive"), ("t.tar.gz", "a tar archive")])
def test_a_trial_table_named_as_a_format_it_is_not_written_in_is_refused_before_the_search(data_files, tmp_path, name, written_as):
    """A name of a format the table is not written in (.csv.zst, .tar.gz: CSV text, or gzip of it, under that name,
    which pd.read_csv, zstd -d and tar refused) is refused as a .zip one is, before the search."""
    r = cli_in_process("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                       "--autotune-duration", "0.01", "--output", tmp_path / "o", "--autotune-trials", tmp_path / name)
    _assert_one_error_line(r, f"{name}: the trial table is written as CSV text, or compressed by gzip, bzip2, xz or LZMA "
                              f"(.csv.gz, .csv.bz2, .csv.xz, .csv.lzma), not as {written_as}; give another name")
    assert not (tmp_path / "o").exists() and not (tmp_path / name).exists()


def test_save_bundle_with_trials_refuses_a_table_name_of_a_format_it_is_not_written_in(tuned, tmp_path):
    """The Python API wrote the table as CSV text under a .zip or .zst name (the command line refused them): no tool
    that goes by the name opened it. Refused now, before anything is written."""
    from fasttext_lib.autotune import save_bundle_with_trials

    for name in ("t.zip", "t.csv.zst"):
        with pytest.raises(FastTextError, match=f"^{tmp_path / name}: the trial table is written as CSV text"):
            save_bundle_with_trials(tuned, tmp_path / "b", str(tmp_path / name))
        assert not (tmp_path / "b").exists() and not (tmp_path / name).exists()


def test_the_trial_table_says_what_ended_the_search(splits, data_files, tmp_path):
    """metrics.json's "ended" (what cut the search: the budget, max_trials, an interrupt, or nothing) was not in the
    trial table, the file a reader of the trials opens with pandas: it is its last column now, said once, on the last
    row (a column, not a closing row: the table stays one row per trial, its numeric columns numeric). On every row,
    it repeated one word down the whole table the notebook shows."""
    table = tmp_path / "trials.csv"
    r = cli_in_process("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                       "--autotune-duration", "0.01", "--buckets", "50000", "--no-progress", "--ctx", "cpu",
                       "--output", tmp_path / "o", "--autotune-trials", table)
    assert r.returncode == 0, r.stderr
    trials = pd.read_csv(table)
    assert list(trials.columns) == [*TRIAL_COLUMNS, "ended"] and trials.val_accuracy.dtype == float
    ended = Predictor.load(tmp_path / "o").metrics["autotune"]["ended"]
    assert ended == "budget" and trials.ended.iloc[-1] == ended and trials.ended.iloc[:-1].isna().all(), trials
    assert trials.ended.count() == 1
    result = autotune(*splits, duration=600, base=BASE, start=START, max_trials=2, verbose=False)
    assert result.trials.ended.tolist() == ["", "max_trials"] and result.trained.autotune["ended"] == "max_trials"


@pytest.mark.parametrize("flag", ["--autotune-validation", "--validation", "--train"])
def test_standard_input_as_a_training_file_is_said_to_be_unsupported(data_files, tmp_path, flag):
    """``--autotune-validation -`` said "no such file: -", as if a file of that name were missing: only predict's
    --input reads standard input. The one line now says that reading it there is not supported, for each file
    training reads (and evaluate's --data), before anything is read."""
    given = {"--train": data_files / "train.csv", "--autotune-validation": data_files / "val.csv", flag: "-"}
    args = [a for item in given.items() for a in item]
    if flag == "--validation":
        args = [a for a in args if a not in ("--autotune-validation", data_files / "val.csv")] + ["--validation", "-"]
    r = cli_in_process("train", *args, "--output", tmp_path / "o", input="__label__1 a b\n")
    what = {"--train": "the training data", "--validation": "the validation data",
            "--autotune-validation": "the autotune validation data"}[flag]
    assert (r.returncode, r.stderr.splitlines()) == (2, [
        f"error: {flag} -: reading {what} from standard input is not supported; give a file"]), r.stderr
    assert not (tmp_path / "o").exists()


def test_standard_input_as_evaluate_data_is_said_to_be_unsupported(data_files, tmp_path):
    r = cli_in_process("evaluate", "--model", tmp_path / "no_bundle", "--data", "-", input="__label__1 a b\n")
    assert (r.returncode, r.stderr.splitlines()) == (2, [
        "error: --data -: reading the evaluation data from standard input is not supported; give a file"]), r.stderr


def test_with_a_lossy_compact_bundle_the_trial_scores_are_labeled_as_the_float32_models(data_files, tmp_path):
    """With --compact int4 (or float16, int8) the bundle's embedding rows are rounded, while every trial was scored
    as the float32 model the search trained: the table's val_accuracy read as the bundle's. Its columns say whose
    scores they are now (val_accuracy_float32, val_loss_float32), and a note line says so; an exact bundle's table
    (float32, none, auto) keeps its names and has no note."""
    common = ["train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
              "--autotune-duration", "0.01", "--buckets", "50000", "--no-progress", "--ctx", "cpu"]
    for compact, lossy in (("int4", True), ("float32", False)):
        table = tmp_path / f"trials_{compact}.csv"
        r = cli_in_process(*common, "--compact", compact, "--output", tmp_path / compact, "--autotune-trials", table)
        assert r.returncode == 0, r.stderr
        columns = list(pd.read_csv(table).columns)
        notes = [line for line in r.stderr.splitlines() if "float32 models" in line]
        if lossy:
            assert columns == [c + "_float32" if c in ("val_accuracy", "val_loss") else c for c in TABLE_COLUMNS]
            assert notes == [f"note: the autotune trials were scored as the float32 models the search trained "
                             f"({table}: val_accuracy_float32, val_loss_float32); the bundle stores its embedding rows "
                             f"as {compact} (lossy, docs/RESULTS.md section 4): evaluate scores it as saved"], r.stderr
        else:
            assert columns == TABLE_COLUMNS and notes == [], r.stderr


def test_with_a_lossy_compact_bundle_its_metrics_say_the_scores_are_the_float32_models(data_files, tmp_path):
    """metrics.json gave the same float32 scores under the plain val_accuracy name (the trials, autotune.best, the
    history), only the table labeling them. Now it says whose they are, ``"scored_as": "float32"`` beside them (at the
    top for the history, in the autotune record for the trials), its keys kept for its readers; the held-out score
    read from it says so too. An exact bundle's metrics are as they were."""
    common = ["train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
              "--autotune-duration", "0.01", "--buckets", "50000", "--no-progress", "--ctx", "cpu",
              "--autotune-no-refit"]  # (the refit trains on the validation data too: no held-out score)
    for compact, lossy in (("int8", True), ("float32", False)):
        r = cli_in_process(*common, "--compact", compact, "--output", tmp_path / compact)
        assert r.returncode == 0, r.stderr
        predictor = Predictor.load(tmp_path / compact)
        metrics, score = predictor.metrics, predictor.held_out_score
        record = metrics["autotune"]
        assert score.accuracy == metrics["final"]["val_accuracy"] is not None  # read as before
        assert set(record["best"]) >= {"val_accuracy", "val_loss"} and "val_accuracy" in record["trials"][0]
        accuracy = f"final validation (autotune's split of the training data) accuracy at training: " \
                   f"{round(score.accuracy, 4)}"
        if lossy:
            assert metrics["scored_as"] == record["scored_as"] == "float32"
            assert score.describe() == (f"{accuracy} (the float32 model's: this bundle's embedding rows are stored "
                                        f"lossy; evaluate scores it as saved)")
        else:
            assert "scored_as" not in metrics and "scored_as" not in record
            assert score.describe() == accuracy


def test_with_pretrained_vectors_the_unused_flags_warning_says_emsize_is_theirs(data_files, tmp_path):
    """With --pretrained-vectors the search does not set emsize (the vectors' dimension does), yet the warning about
    unused flags said it did, and told a user who gave --emsize that the search would choose it."""
    vec = tmp_path / "pre.vec"
    vec.write_text("2 8\nthe " + " ".join(["0.1"] * 8) + "\nand " + " ".join(["0.2"] * 8) + "\n")
    r = cli_in_process("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                       "--autotune-duration", "0.01", "--buckets", "50000", "--no-progress", "--ctx", "cpu",
                       "--output", tmp_path / "o", "--pretrained-vectors", vec, "--lr", "0.5", "--emsize", "8")
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: --lr and --emsize are not used with --autotune-validation: the search sets the "
                        "optimizer, lr, batch size, epochs and n-grams, starting from the library's setting for the "
                        "data, and emsize is the --pretrained-vectors dimension; leave them out, or train without "
                        "--autotune-validation to use them"], r.stderr
    assert Predictor.load(tmp_path / "o").config["train_config"]["emsize"] == 8


def _unremovable(monkeypatch, path):
    """``os.remove`` / ``os.unlink`` of ``path`` fail as on a directory the run can no longer write."""
    real_remove, real_unlink = os.remove, os.unlink

    def refuse(real):
        def remove(target, *args, **kwargs):
            if os.path.abspath(target) == os.path.abspath(path):
                raise PermissionError(13, "Permission denied", str(target))
            return real(target, *args, **kwargs)
        return remove
    monkeypatch.setattr(os, "remove", refuse(real_remove))
    monkeypatch.setattr(os, "unlink", refuse(real_unlink))


def test_a_bundle_that_fails_after_its_claimed_table_that_cannot_be_removed_says_both(data_files, tmp_path,
                                                                                      monkeypatch):
    """Without --overwrite the trial table is claimed before the bundle is saved, and removed again if the bundle
    fails. A removal that failed too was silent (the table of a bundle never saved stayed, and the next run without
    --overwrite was refused for it), and the removal's error could have replaced the bundle's. The one error line
    is the bundle's, the failed removal its second clause."""
    from fasttext_lib import bundle

    csv, out = tmp_path / "trials.csv", tmp_path / "bundle"

    def failing_save(*args, **kwargs):
        _unremovable(monkeypatch, csv)  # (from here on: the table was written)
        raise FastTextError(f"cannot write {out}: No space left on device")
    monkeypatch.setattr(bundle, "save_bundle", failing_save)
    r = cli_in_process("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                       "--autotune-duration", "0.01", "--buckets", "50000", "--output", out, "--autotune-trials", csv,
                       "--no-progress", "--ctx", "cpu")
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 2 and "Traceback" not in r.stderr and errors == [
        f"error: cannot write {out}: No space left on device; removing the trial table {csv} this run wrote failed too "
        f"(cannot remove {csv}: Permission denied): it holds the trials of a bundle that was not saved"], r.stderr
    assert errors == r.stderr.strip().splitlines()[-1:]


def test_an_interrupted_bundle_save_whose_claimed_table_cannot_be_removed_says_so_in_the_stops_line(tmp_path,
                                                                                                  monkeypatch, capsys):
    """The same with a Ctrl-C during the save: a warning line said the table could not be removed, then the stop's
    line said "stopped and cleaned up". The stop's one line says it now, and what to do (in the Python API's terms
    here), with no warning above it; it is still an interrupt."""
    from types import SimpleNamespace

    from fasttext_lib import bundle
    from fasttext_lib.autotune import save_bundle_with_trials
    from fasttext_lib.stops import stop_message

    csv = tmp_path / "trials.csv"

    def interrupted_save(*args, **kwargs):
        _unremovable(monkeypatch, csv)
        raise KeyboardInterrupt
    monkeypatch.setattr(bundle, "save_bundle", interrupted_save)
    trained = SimpleNamespace(autotune={"trials": [], "ended": "complete"})
    with pytest.raises(KeyboardInterrupt) as stopped:
        save_bundle_with_trials(trained, str(tmp_path / "bundle"), str(csv), overwrite=False)
    assert stop_message(stopped.value) == (
        f"interrupted (SIGINT); stopped; the trial table {csv} this run created could not be removed (Permission "
        f"denied): delete it, or call it again with overwrite=True")
    assert capsys.readouterr().err == ""
    assert csv.is_file()


def test_a_bug_in_a_bundle_save_whose_claimed_table_cannot_be_removed_still_warns(tmp_path, monkeypatch, capsys):
    """A bug (no FastTextError, no stop) during the save goes on as it was, with its traceback: the failed removal is
    a warning line, which nothing else would say."""
    from types import SimpleNamespace

    from fasttext_lib import bundle
    from fasttext_lib.autotune import save_bundle_with_trials

    csv = tmp_path / "trials.csv"

    def failing_save(*args, **kwargs):
        _unremovable(monkeypatch, csv)
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(bundle, "save_bundle", failing_save)
    trained = SimpleNamespace(autotune={"trials": [], "ended": "complete"})
    with pytest.raises(ZeroDivisionError):
        save_bundle_with_trials(trained, str(tmp_path / "bundle"), str(csv), overwrite=False)
    assert capsys.readouterr().err.splitlines() == [
        f"warning: removing the trial table {csv} this run wrote failed (cannot remove {csv}: Permission denied): it "
        f"holds the trials of a bundle that was not saved"]


def test_a_ctrl_c_during_the_clis_bundle_save_whose_claimed_table_cannot_be_removed_says_so_in_one_line(
        data_files, tmp_path, monkeypatch):
    """The command line's: a warning line, then "error: interrupted (SIGINT); stopped and cleaned up", with the
    table this run claimed left there (it refuses the next run without --overwrite). One error line now says it was
    not removed, and what to do."""
    from fasttext_lib import bundle

    csv, out = tmp_path / "trials.csv", tmp_path / "bundle"

    def interrupted_save(*args, **kwargs):
        _unremovable(monkeypatch, csv)
        raise KeyboardInterrupt
    monkeypatch.setattr(bundle, "save_bundle", interrupted_save)
    r = cli_in_process("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                       "--autotune-duration", "0.01", "--buckets", "50000", "--output", out, "--autotune-trials", csv,
                       "--no-progress", "--ctx", "cpu")
    said = [line for line in r.stderr.splitlines() if line.startswith(("error:", "warning:"))]
    assert r.returncode == 130 and said == [
        f"error: interrupted (SIGINT); stopped; the trial table {csv} this run created could not be removed "
        f"(Permission denied): delete it, or run the command again with --overwrite"], r.stderr
    assert said == r.stderr.strip().splitlines()[-1:]


@pytest.mark.parametrize("previous", [None, b"my old trials\n"], ids=["none-before", "one-before"])
def test_a_stop_whose_s3_trial_table_cannot_be_taken_back_says_so_in_the_stops_line(tuned, s3_bucket, monkeypatch,
                                                                                    capsys, previous):
    """With overwrite on S3 the table is written before the bundle, and a bundle that fails takes it back (removed, or
    the earlier one put back). A take-back that failed after a stop said nothing at all: the line said "stopped and
    cleaned up", with this run's trials in the table of a bundle never saved. The stop's line says it now."""
    from fasttext_lib import bundle, storage
    from fasttext_lib.autotune import save_bundle_with_trials
    from fasttext_lib.storage import versions
    from fasttext_lib.stops import stop_message

    trials = f"{s3_bucket}/runs/trials.csv"
    if previous is not None:
        with storage.atomic_write(trials, "wb") as f:
            f.write(previous)

    def refused(*args, **kwargs):
        raise FastTextError(f"cannot write {trials}: access denied")

    def interrupted_save(*args, **kwargs):  # (from here on S3 refuses every take-back: no s3:DeleteObject, no PUT)
        monkeypatch.setattr(versions, "delete_written", lambda client, written: [(*written[0][:2], "access denied")])
        monkeypatch.setattr(storage, "take_back_version", lambda *args: False)
        monkeypatch.setattr(storage, "atomic_write", refused)  # (the earlier bytes written back)
        raise KeyboardInterrupt
    monkeypatch.setattr(bundle, "save_bundle", interrupted_save)
    with pytest.raises(KeyboardInterrupt) as stopped:
        save_bundle_with_trials(tuned, f"{s3_bucket}/models/run", trials, overwrite=True)
    monkeypatch.undo()
    if previous is None:
        assert stop_message(stopped.value) == (
            f"interrupted (SIGINT); stopped; the trial table {trials} this run created could not be removed (access "
            f"denied): delete it, or call it again")
    else:
        assert stop_message(stopped.value) == (
            f"interrupted (SIGINT); stopped and cleaned up, but putting the earlier trial table back failed (cannot "
            f"write {trials}: access denied): {trials} holds this run's trials, of a bundle that was not saved")
    assert capsys.readouterr().err == ""
    assert storage.read_bytes(trials).startswith(b"trial,")


@pytest.mark.parametrize("where", ["local", "s3"])
@pytest.mark.parametrize("overwrite", [False, True], ids=["claimed", "replacing"])
def test_a_stop_once_the_bundle_is_in_place_keeps_its_trial_table(tmp_path, s3_bucket, monkeypatch, where, overwrite):
    """A stop (or an error) after the bundle's config.json was put in place but before save_bundle returned (its
    staging folder removed) took the trial table back as for a save that failed: the new bundle stayed without its
    trials (claimed), or beside the earlier table (replacing: put back on S3, never renamed into place locally).
    From the bundle's commit on, the table stays with it; the stop goes on, and on_commit has said where."""
    from types import SimpleNamespace

    from fasttext_lib import bundle, storage
    from fasttext_lib.autotune import _trial_table_csv, save_bundle_with_trials
    from fasttext_lib.stops import stop_message

    base = str(tmp_path) if where == "local" else f"{s3_bucket}/runs"
    trials, out = f"{base}/trials.csv", f"{base}/bundle"
    if overwrite:
        with storage.atomic_write(trials, "wb") as f:
            f.write(b"my old trials\n")

    def committed_then_stopped(*args, on_commit=None, **kwargs):
        on_commit(out)  # (the bundle is in place)
        raise KeyboardInterrupt
    monkeypatch.setattr(bundle, "save_bundle", committed_then_stopped)
    trained = SimpleNamespace(autotune={"trials": [], "ended": "complete"})
    told = []
    with pytest.raises(KeyboardInterrupt) as stopped:
        save_bundle_with_trials(trained, out, trials, overwrite=overwrite, on_commit=told.append)
    assert told == [out]
    assert storage.read_bytes(trials) == _trial_table_csv(trained)
    # (it said "stopped and cleaned up", with the bundle and its table both written)
    assert stop_message(stopped.value) == (
        f"interrupted (SIGINT); stopped after the bundle was written to {out} and the trial table to {trials}")


@pytest.mark.parametrize("where", ["as the save ends", "as the last line is said"])
def test_a_ctrl_c_once_the_cli_has_written_the_bundle_and_its_trial_table_names_both(data_files, tmp_path,
                                                                                     monkeypatch, where):
    """train --autotune-trials writes the trial table and the bundle, each on its own. A Ctrl-C once both were in
    place (as save_bundle removed its staging folder, or as the 'bundle written to' line was said) said "stopped after
    the bundle was written to ...": the table, written and kept, went unsaid. The line names it too."""
    from fasttext_lib import bundle
    import fasttext_lib.devices as devices_module

    csv, out = tmp_path / "trials.csv", tmp_path / "bundle"
    if where == "as the save ends":
        real = bundle.save_bundle

        def saved_then_stopped(*args, **kwargs):
            real(*args, **kwargs)
            raise KeyboardInterrupt
        monkeypatch.setattr(bundle, "save_bundle", saved_then_stopped)
    else:
        def describe(ctx):
            raise KeyboardInterrupt
        monkeypatch.setattr(devices_module, "describe_ctx", describe)
    r = cli_in_process("train", "--train", data_files / "train.csv", "--autotune-validation", data_files / "val.csv",
                       "--autotune-duration", "0.01", "--buckets", "50000", "--output", out, "--autotune-trials", csv,
                       "--no-progress", "--ctx", "cpu")
    monkeypatch.undo()
    assert (r.returncode, r.stderr.splitlines()[-1]) == (
        130, f"error: interrupted (SIGINT); stopped after the bundle was written to {out} and the trial table to "
             f"{csv}"), r.stderr
    assert csv.read_bytes().startswith(b"trial,") and (out / "config.json").is_file()


@pytest.mark.parametrize("versioning", ["Enabled", "Suspended"])
@pytest.mark.parametrize("overwrite", [False, True], ids=["claimed", "written-first"])
def test_a_trial_table_taken_back_from_a_bucket_that_keeps_versions_leaves_no_version(s3_bucket, s3_proxy, monkeypatch,
                                                                                      versioning, overwrite):
    """A bundle whose save fails takes back the trial table this run wrote to S3 (claimed without --overwrite, or
    written first with it where there was none). A plain DELETE did that: in a bucket that keeps versions it only hid
    the table behind a delete marker, and the table stayed as a noncurrent version, billed, that no listing shows. It
    is deleted by the version its write created: nothing of it stays. (moto keeps no marker in a suspended bucket, as
    S3 does: there the DELETEs are read at the proxy.)"""
    from types import SimpleNamespace

    import boto3
    from test_storage import plain_deletes

    from fasttext_lib import bundle
    from fasttext_lib.autotune import save_bundle_with_trials

    bucket, trials = s3_bucket[len("s3://"):], f"{s3_bucket}/runs/trials.csv"
    client = boto3.client("s3")
    client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": versioning})

    def failing_save(*args, **kwargs):
        assert client.get_object(Bucket=bucket, Key="runs/trials.csv")["Body"].read().startswith(b"trial,")
        raise FastTextError("cannot write the bundle: No space left on device")
    monkeypatch.setattr(bundle, "save_bundle", failing_save)
    trained = SimpleNamespace(autotune={"trials": [], "ended": "complete"})
    with pytest.raises(FastTextError, match="^cannot write the bundle: No space left on device$"):
        save_bundle_with_trials(trained, f"{s3_bucket}/models/run", trials, overwrite=overwrite)
    listed = client.list_object_versions(Bucket=bucket, Prefix="runs/")
    assert (listed.get("Versions", []), listed.get("DeleteMarkers", [])) == ([], [])
    assert plain_deletes(s3_proxy) == []


def test_a_trial_table_put_back_in_a_bucket_that_keeps_versions_is_the_old_version_itself(s3_bucket, monkeypatch):
    """With --overwrite over an earlier table, a bundle whose save fails puts the earlier table back. Written again,
    the bucket kept three versions of it (the old one, this run's, the old bytes once more); this run's version is
    deleted instead, and the old one is the table again, as it was."""
    from types import SimpleNamespace

    import boto3

    from fasttext_lib import bundle
    from fasttext_lib.autotune import save_bundle_with_trials

    bucket, trials = s3_bucket[len("s3://"):], f"{s3_bucket}/runs/trials.csv"
    client = boto3.client("s3")
    client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    old = client.put_object(Bucket=bucket, Key="runs/trials.csv", Body=b"my old trials\n")["VersionId"]

    def failing_save(*args, **kwargs):
        raise FastTextError("cannot write the bundle: No space left on device")
    monkeypatch.setattr(bundle, "save_bundle", failing_save)
    trained = SimpleNamespace(autotune={"trials": [], "ended": "complete"})
    with pytest.raises(FastTextError, match="^cannot write the bundle: No space left on device$"):
        save_bundle_with_trials(trained, f"{s3_bucket}/models/run", trials, overwrite=True)
    listed = client.list_object_versions(Bucket=bucket, Prefix="runs/")
    assert [(v["VersionId"], v["IsLatest"]) for v in listed.get("Versions", [])] == [(old, True)]
    assert listed.get("DeleteMarkers", []) == []
    assert client.get_object(Bucket=bucket, Key="runs/trials.csv")["Body"].read() == b"my old trials\n"


@pytest.mark.parametrize("where", ["notebook", "cli"])
def test_a_ctrl_c_as_a_trial_is_recorded_still_reports_it(splits, monkeypatch, capsys, where):
    """A Ctrl-C that landed after a trial was recorded (it counts, and is in the table) but before it was reported
    skipped its stderr line and its on_trial call (the CLI's JSON line on stdout): the table held a trial the run
    never showed. Recording and reporting a trial are one step now: the interrupt is held for those few lines, then
    stops the search as anywhere else. In a notebook Python's own handler raises it; in the CLI stop_on_signals'."""
    import contextlib
    import signal

    from fasttext_lib.autotune import _Search
    from fasttext_lib.stops import stop_on_signals

    real_record = _Search.record

    def record(self, config, row, *args):
        real_record(self, config, row, *args)
        if row["trial"] == 2:
            signal.raise_signal(signal.SIGINT)  # (its handler runs here, as the trial is recorded)
    monkeypatch.setattr(_Search, "record", record)
    reported = []
    with stop_on_signals() if where == "cli" else contextlib.nullcontext():
        try:
            result = autotune(*splits, duration=600.0, base=BASE, start=START, max_trials=4, verbose=True,
                              on_trial=lambda row: reported.append(row["trial"]))
        except KeyboardInterrupt:  # (raised on, it would stop pytest itself)
            pytest.fail("the Ctrl-C ended the search without a model")
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("trial ")]
    assert result.interrupted and list(result.trials.trial) == reported == [1, 2], reported
    assert [line.split()[1] for line in lines] == ["1", "2"], lines


def test_stops_held_holds_one_interrupt_to_the_blocks_end_and_lets_a_second_through():
    """stops.stops_held, which makes a trial's record and report one step: the first Ctrl-C within it is raised at
    its end (the block ran whole), a second at once (a hung block can still be stopped); the handler is put back."""
    import signal

    from fasttext_lib.stops import stops_held

    before, ran = signal.getsignal(signal.SIGINT), []
    for presses in (1, 2):
        with pytest.raises(KeyboardInterrupt):
            with stops_held():
                for _ in range(presses):
                    signal.raise_signal(signal.SIGINT)
                ran.append(presses)
        assert signal.getsignal(signal.SIGINT) is before
    assert ran == [1]


def test_stops_held_within_another_lets_a_second_interrupt_through_at_once():
    """A stops_held block within another: the inner one took the outer's holding handler for the one it would have
    reached, so a second Ctrl-C within it was held by the outer block (its first) until the outer's end, and a hung
    inner block could not be stopped. Nested, the outer block holds the first and lets the second through."""
    import signal

    from fasttext_lib.stops import stops_held

    before, ran = signal.getsignal(signal.SIGINT), []
    with pytest.raises(KeyboardInterrupt):
        with stops_held():
            with stops_held():
                signal.raise_signal(signal.SIGINT)
                ran.append("held")
                signal.raise_signal(signal.SIGINT)
                ran.append("the second held too")
    assert ran == ["held"] and signal.getsignal(signal.SIGINT) is before
    with pytest.raises(KeyboardInterrupt):  # one: the blocks run whole, and it is raised after them
        with stops_held():
            with stops_held():
                signal.raise_signal(signal.SIGINT)
            ran.append("the outer block's end")
    assert ran == ["held", "the outer block's end"] and signal.getsignal(signal.SIGINT) is before


def test_stops_held_lets_a_sigterm_through_at_once():
    """Only Ctrl-C is held (autotune carries on after it, so a trial's record and report must be whole): a SIGTERM
    ends the run, and held behind a block stuck writing to a full pipe it outwaited the scheduler's one SIGTERM until
    its SIGKILL."""
    import signal

    from fasttext_lib.stops import stops_held

    class Stopped(Exception):
        pass

    def stop(signum, frame):
        raise Stopped

    ran, old_term = [], signal.signal(signal.SIGTERM, stop)
    try:
        with pytest.raises(Stopped):
            with stops_held():
                signal.raise_signal(signal.SIGTERM)
                ran.append("the block went on")
        assert ran == [] and signal.getsignal(signal.SIGTERM) is stop
    finally:
        signal.signal(signal.SIGTERM, old_term)


def test_a_stop_while_stops_held_sets_its_handlers_puts_back_the_ones_it_set(monkeypatch):
    """A SIGTERM whose handler raised (the CLI's stop_on_signals) between stops_held's setting of the SIGINT handler
    and the SIGTERM one ended the block before its try: its holding handler stayed on SIGINT for good, and the
    process's next Ctrl-C was swallowed without a word."""
    import signal

    from fasttext_lib.stops import stops_held

    class Stopped(Exception):
        pass

    def stop(signum, frame):
        raise Stopped

    real_signal, before = signal.signal, signal.getsignal(signal.SIGINT)

    def then_a_sigterm(signum, handler):
        previous = real_signal(signum, handler)
        if signum == signal.SIGINT and handler is not before:  # stops_held's own, set as the first of its handlers
            signal.raise_signal(signal.SIGTERM)  # (its handler runs here)
        return previous

    old_term = real_signal(signal.SIGTERM, stop)
    try:
        monkeypatch.setattr(signal, "signal", then_a_sigterm)
        with pytest.raises(Stopped):
            with stops_held():
                pytest.fail("the block ran after its start was stopped")
        monkeypatch.undo()
        assert signal.getsignal(signal.SIGINT) is before
    finally:
        real_signal(signal.SIGINT, before)
        real_signal(signal.SIGTERM, old_term)


@pytest.fixture(scope="module")
def tuned(splits):
    """A model autotune chose in two cheap trials: what save_bundle_with_trials saves, for its real save."""
    return autotune(*splits, duration=30.0, base=BASE, start=START, max_trials=2, verbose=False).trained


@pytest.mark.parametrize("overwrite", [False, True], ids=["claimed", "replacing"])
def test_a_stop_as_the_bundles_config_is_renamed_into_place_keeps_its_trial_table(tuned, tmp_path, monkeypatch,
                                                                                  overwrite):
    """A signal handled just after the rename that commits the bundle (before the publish called on_commit) kept the
    new bundle (the publish saw its own config.json there) but never said it was committed: the claimed table was
    taken back (the new bundle without its trials) or, replacing, never put in place (the new bundle beside the
    earlier table); the command line told the user to run the command again, which --output then refused."""
    from fasttext_lib import storage
    from fasttext_lib.autotune import _trial_table_csv, save_bundle_with_trials
    from fasttext_lib.storage import sets

    out, trials = tmp_path / "bundle", tmp_path / "trials.csv"
    old = None
    if overwrite:
        save_bundle_with_trials(tuned, str(out), str(trials))
        trials.write_bytes(b"my old trials\n")
        old = storage.read_manifest(str(out), "config.json")
    real_replace = os.replace

    def renamed_then_stopped(src, dst, *args, **kwargs):
        real_replace(src, dst, *args, **kwargs)
        if os.path.basename(dst) == "config.json":
            raise KeyboardInterrupt  # (what a SIGINT's handler raises between the two bytecodes)
    monkeypatch.setattr(sets.os, "replace", renamed_then_stopped)
    told = []
    with pytest.raises(KeyboardInterrupt):
        save_bundle_with_trials(tuned, str(out), str(trials), overwrite=overwrite, on_commit=told.append)
    monkeypatch.undo()
    assert told == [str(out)]
    assert storage.read_manifest(str(out), "config.json") != old  # the new bundle (which loads)
    Predictor.load(out)
    assert trials.read_bytes() == _trial_table_csv(tuned)


@pytest.mark.parametrize("stopped", ["as its staging folder goes", "once S3 answered its PUT"])
@pytest.mark.parametrize("overwrite, old_table", [(False, None), (True, b"my old trials\n"), (True, None)],
                         ids=["claimed", "replacing", "replacing-no-old-table"])
def test_a_stop_as_the_trial_tables_s3_upload_ends_takes_it_back(tuned, s3_bucket, monkeypatch, overwrite, old_table,
                                                                 stopped):
    """On S3 the table goes first (claimed, or written first with overwrite); a stop once its PUT was applied but
    before the upload's staging folder was removed (before save_bundle_with_trials' take-back was armed) kept it:
    the earlier table lost beside the earlier bundle, or a claimed table with no bundle, which refused the rerun.
    So did one in the upload's call once S3 had answered the PUT (the line said the table "may hold this run's
    trials"). The table this run put there is taken back as for any save that fails before the bundle's commit."""
    import boto3

    from conftest import stopped_at_a_put
    from fasttext_lib import storage
    from fasttext_lib.autotune import save_bundle_with_trials
    from fasttext_lib.stops import stop_message
    from fasttext_lib.storage import atomic

    bucket, out, trials = s3_bucket[len("s3://"):], f"{s3_bucket}/runs/bundle", f"{s3_bucket}/runs/trials.csv"
    if overwrite:
        save_bundle_with_trials(tuned, out, trials)
        boto3.client("s3").delete_object(Bucket=bucket, Key="runs/trials.csv")
        if old_table is not None:
            boto3.client("s3").put_object(Bucket=bucket, Key="runs/trials.csv", Body=old_table)
    bundle_before = storage.read_manifest(out, "config.json") if overwrite else None
    save = functools.partial(save_bundle_with_trials, tuned, out, trials, overwrite=overwrite)
    if stopped == "once S3 answered its PUT":
        stop = stopped_at_a_put("after-call", save, key="runs/trials.csv")
        assert stop_message(stop) == "interrupted (SIGINT); stopped and cleaned up"
    else:
        upload = "upload_file" if overwrite else "_upload_new"
        real_upload, real_rmtree, steps = getattr(atomic, upload), atomic.shutil.rmtree, []

        def uploaded(*args, **kwargs):
            answer = real_upload(*args, **kwargs)
            steps.append("uploaded")
            return answer

        def removed_then_stopped(path, *args, **kwargs):
            real_rmtree(path, *args, **kwargs)
            if steps == ["uploaded"]:  # (the upload's staging folder)
                steps.append("stopped")
                raise KeyboardInterrupt  # (what a SIGINT's handler raises as it is removed)
        monkeypatch.setattr(atomic, upload, uploaded)
        monkeypatch.setattr(atomic.shutil, "rmtree", removed_then_stopped)
        with pytest.raises(KeyboardInterrupt):
            save()
        monkeypatch.undo()
        assert steps[:2] == ["uploaded", "stopped"]  # (then, replacing, the earlier table uploaded back)
    assert (storage.read_manifest(out, "config.json") if overwrite else storage.exists(out + "/config.json")) == (
        bundle_before if overwrite else False)
    assert (storage.read_bytes(trials) if storage.exists(trials) else None) == old_table


@pytest.mark.parametrize("overwrite", [False, True], ids=["claimed", "replacing"])
def test_a_stop_while_s3_has_not_answered_the_trial_tables_put_says_it_may_hold_this_runs_trials(tuned, s3_bucket,
                                                                                                 s3_proxy, overwrite):
    """A stop while the trial table's PUT awaited S3's answer said "stopped and cleaned up", while S3 may apply that
    PUT after the stop: this run's table where the earlier one was (or a claimed one, which refuses the next run
    without overwrite), and no bundle. Here S3 holds the PUT (received whole, answered late) and applies it after the
    stop, as a slow S3 does; the line now says the table may hold this run's trials."""
    from conftest import stopped_at_the_stall
    from fasttext_lib import storage
    from fasttext_lib.autotune import _trial_table_csv, save_bundle_with_trials
    from fasttext_lib.stops import stop_message

    out, trials = f"{s3_bucket}/runs/bundle", f"{s3_bucket}/runs/trials.csv"
    if overwrite:  # (claimed: only where none is there; S3 would refuse the PUT otherwise)
        with storage.atomic_write(trials, "wb") as f:
            f.write(b"my old trials\n")
    s3_proxy.fail("PUT", r"/runs/trials\.csv$", "stall")
    stopped = stopped_at_the_stall(s3_proxy, lambda: save_bundle_with_trials(tuned, out, trials, overwrite=overwrite))
    assert stop_message(stopped) == (
        f"interrupted (SIGINT); stopped and cleaned up, but the trial table {trials} may hold this run's trials, for a "
        f"bundle that was not saved (its upload was waiting for S3's answer when the stop came)")
    _until(lambda: storage.exists(trials) and storage.read_bytes(trials) == _trial_table_csv(tuned))  # S3 applied it
    assert not storage.exists(out + "/config.json")


def _until(done, seconds=30):
    """Wait until ``done()``: a PUT a stop abandoned is applied as the proxy's own thread forwards it, once released."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "S3 never applied the held PUT"
        time.sleep(0.05)


@pytest.mark.parametrize("overwrite", [False, True], ids=["claimed", "replacing"])
def test_a_stop_before_the_trial_tables_put_was_sent_says_it_cleaned_up(tuned, s3_bucket, monkeypatch, overwrite):
    """A stop as the trial table's upload began, before its PUT went out, said the table "may hold this run's
    trials": S3 never had that PUT (the upload abandoned sends nothing more), and the table stays as it was. The line
    says it stopped and cleaned up."""
    from fasttext_lib import storage
    from fasttext_lib.autotune import save_bundle_with_trials
    from fasttext_lib.stops import stop_message
    from fasttext_lib.storage import atomic

    out, trials = f"{s3_bucket}/runs/bundle", f"{s3_bucket}/runs/trials.csv"
    old = b"my old trials\n" if overwrite else None
    if overwrite:
        with storage.atomic_write(trials, "wb") as f:
            f.write(old)

    def stopped_at_once(*args, **kwargs):
        raise KeyboardInterrupt  # the stop comes as the upload begins: nothing is sent
    monkeypatch.setattr(atomic, "upload_file" if overwrite else "_upload_new", stopped_at_once)
    with pytest.raises(KeyboardInterrupt) as stopped:
        save_bundle_with_trials(tuned, out, trials, overwrite=overwrite)
    monkeypatch.undo()
    assert stop_message(stopped.value) == "interrupted (SIGINT); stopped and cleaned up"
    assert (storage.read_bytes(trials) if storage.exists(trials) else None) == old
    assert not storage.exists(out + "/config.json")


@pytest.mark.parametrize("sent", [True, False], ids=["unanswered", "not-sent"])
def test_a_stop_in_the_trial_tables_put_after_the_bundle_says_both(tuned, s3_bucket, s3_proxy, monkeypatch, sent):
    """With overwrite, where the earlier S3 table cannot be read (no s3:GetObject), the table is uploaded after the
    bundle is published. A stop while that PUT awaited S3's answer said only that the bundle was written (or, from
    the Python API, "stopped and cleaned up"): the table beside it may still be the earlier run's. The line says
    both; and, where the stop came before the PUT went out, that the table is not the bundle's (it said S3 "may
    still apply" a PUT S3 never had)."""
    from conftest import interrupted_at_the_stall, wait_for_abandoned_transfers
    from fasttext_lib import autotune, storage
    from fasttext_lib.autotune import _trial_table_csv, save_bundle_with_trials
    from fasttext_lib.stops import stop_message
    from fasttext_lib.storage import atomic

    out, trials = f"{s3_bucket}/runs/bundle", f"{s3_bucket}/runs/trials.csv"
    with storage.atomic_write(trials, "wb") as f:
        f.write(b"my old trials\n")
    monkeypatch.setattr(autotune, "_previous_table", lambda uri: (False, None))  # (as S3 refusing the GET)
    save = functools.partial(save_bundle_with_trials, tuned, out, trials, overwrite=True)
    if sent:
        s3_proxy.fail("PUT", r"/runs/trials\.csv$", "stall")
        stopped = interrupted_at_the_stall(s3_proxy, save)  # (the PUT still held)
    else:
        def stopped_at_once(*args, **kwargs):
            raise KeyboardInterrupt  # the stop comes as the upload begins: nothing is sent
        monkeypatch.setattr(atomic, "upload_file", stopped_at_once)
        with pytest.raises(KeyboardInterrupt) as raised:
            save()
        stopped = raised.value
        monkeypatch.undo()
    assert storage.exists(out + "/config.json") and storage.read_bytes(trials) == b"my old trials\n"
    table = ("may not hold this bundle's trials: its upload was waiting for S3's answer when the stop came (S3 may "
             "still apply it)" if sent else "does not hold this bundle's trials: the stop came before its upload was "
                                            "sent")
    assert stop_message(stopped) == (
        f"interrupted (SIGINT); stopped after the bundle was written to {out}, but the trial table {trials} {table}")
    if sent:  # S3 applies the PUT it held
        s3_proxy.release()
        wait_for_abandoned_transfers()
        _until(lambda: storage.read_bytes(trials) == _trial_table_csv(tuned))


def test_a_stop_just_after_the_local_trial_tables_claim_is_linked_takes_it_back(tuned, tmp_path, monkeypatch):
    """Without overwrite the table is claimed first, locally by a hard link that never replaces a file. A signal
    handled once the link had put it in place but before atomic_write returned (the link's folder handle closed, its
    temporary removed) kept it: save_bundle_with_trials had not yet marked it claimed, so nothing took it back, and the
    table of a bundle never saved refused the rerun ('already exists'). A stop before the write returned leaves none."""
    from fasttext_lib.autotune import save_bundle_with_trials
    from fasttext_lib.storage import atomic

    out, trials = tmp_path / "bundle", tmp_path / "trials.csv"
    real_link, steps = atomic._link_new, []

    def linked_then_stopped(*args, **kwargs):
        real_link(*args, **kwargs)
        steps.append("linked")
        raise KeyboardInterrupt  # (what a SIGINT's handler raises just after the link)
    monkeypatch.setattr(atomic, "_link_new", linked_then_stopped)
    with pytest.raises(KeyboardInterrupt):
        save_bundle_with_trials(tuned, str(out), str(trials), overwrite=False)
    monkeypatch.undo()
    assert steps == ["linked"] and not out.exists()
    assert not trials.exists()  # (this run's table, of no bundle, would refuse the rerun)
    assert [n for n in os.listdir(tmp_path) if n != "bundle"] == []  # no temporary left either
    save_bundle_with_trials(tuned, str(out), str(trials), overwrite=False)  # the rerun


def test_a_bundle_already_at_the_output_of_a_claimed_save_keeps_the_model_beside_it_with_its_trial_table(tuned,
                                                                                                         tmp_path):
    """Without overwrite (keep_beside, as the command line asks) the table is claimed first; a bundle at the output
    then refused the save, the table was taken back and the model lost. The bundle there stays, the model is saved at <output>.1 (the error names it),
    and the claimed table stays: it holds that model's trials."""
    from fasttext_lib import storage
    from fasttext_lib.autotune import _trial_table_csv, save_bundle_with_trials
    from fasttext_lib.bundle import BundleKept, save_bundle

    out, trials = str(tmp_path / "bundle"), str(tmp_path / "trials.csv")
    save_bundle(tuned, out)
    theirs = storage.read_bytes(out + "/config.json")
    with pytest.raises(BundleKept, match=rf"^{out} already holds a model bundle, which is kept; this model is saved as "
                                         rf"{out}\.1 instead$"):
        save_bundle_with_trials(tuned, out, trials, overwrite=False, keep_beside=True)
    assert storage.read_bytes(out + "/config.json") == theirs
    assert storage.read_manifest(out + ".1", "config.json")["train_config"] == tuned.config.to_dict()
    assert storage.read_bytes(trials) == _trial_table_csv(tuned)


def test_a_trial_table_at_the_output_of_a_claimed_save_keeps_the_model_beside_the_bundle_without_one(tuned,
                                                                                                     tmp_path):
    """Without overwrite (keep_beside, as the command line asks) a table already at trials_uri (another run's,
    written while this one trained) refused the save, and the model was lost. The table stays, and so does the bundle
    at the output (that run's); the model is saved at <output>.1 with its trials in its metrics.json, the error says
    so; no table of it is written anywhere."""
    from fasttext_lib import storage
    from fasttext_lib.autotune import save_bundle_with_trials
    from fasttext_lib.bundle import BundleKept, save_bundle

    out, trials = str(tmp_path / "bundle"), str(tmp_path / "trials.csv")
    save_bundle(tuned, out)
    (tmp_path / "trials.csv").write_bytes(b"theirs\n")
    theirs = storage.read_bytes(out + "/config.json")
    with pytest.raises(BundleKept, match=rf"^{trials} already holds a trial table, which is kept; this model is saved "
                                         rf"as {out}\.1 instead, its trials in its metrics\.json \(autotune\)$"):
        save_bundle_with_trials(tuned, out, trials, overwrite=False, keep_beside=True)
    assert storage.read_bytes(out + "/config.json") == theirs and storage.read_bytes(trials) == b"theirs\n"
    assert storage.read_manifest(out + ".1", "config.json")["train_config"] == tuned.config.to_dict()
    assert Predictor.load(out + ".1").metrics["autotune"]["trials"]
    assert sorted(os.listdir(tmp_path)) == ["bundle", "bundle.1", "trials.csv"]
    with pytest.raises(FastTextError, match=rf"^{trials} already exists; "):  # (unasked: refused, as before)
        save_bundle_with_trials(tuned, str(tmp_path / "other"), trials, overwrite=False)
    assert not (tmp_path / "other").exists()
