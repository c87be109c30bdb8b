"""What the bundle writers are given: save_bundle and save_bundle_with_trials save the model train(...) or
autotune(...).trained returns. Passed what a user has at hand instead (the AutotuneResult itself, a loaded
Predictor, a Gluon block, a path), they failed deep inside with an AttributeError or a TypeError; each is now one
FastTextError saying what to pass, and nothing is written."""
import os

import pytest

from conftest import make_splits
from fasttext_lib.autotune import autotune, save_bundle_with_trials
from fasttext_lib.bundle import save_bundle
from fasttext_lib.config import TrainConfig
from fasttext_lib.errors import FastTextError
from fasttext_lib.predict import Predictor
from fasttext_lib.train import train

SETTINGS = dict(epochs=1, batch_size=64, buckets=20000, lr=0.5, progress=False)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    splits = make_splits(200, 40, seed=3)
    trained = train(*splits, TrainConfig(**SETTINGS))
    searched = autotune(*splits, duration=60.0, max_trials=1, base=TrainConfig(progress=False))
    where = save_bundle(trained, str(tmp_path_factory.mktemp("saved") / "bundle"))
    return trained, searched, Predictor.load(where)


def _refused(call, tmp_path, *said):
    with pytest.raises(FastTextError) as err:
        call(str(tmp_path / "out"))
    message = str(err.value)
    assert "\n" not in message and all(part in message for part in said), message
    assert os.listdir(tmp_path) == []
    return message


def test_an_autotune_result_names_its_trained_model(models, tmp_path):
    searched = models[1]
    _refused(lambda out: save_bundle(searched, out), tmp_path, "save_bundle", "AutotuneResult", ".trained")
    _refused(lambda out: save_bundle_with_trials(searched, out, out + ".csv"), tmp_path, "save_bundle_with_trials",
             "AutotuneResult", ".trained")


def test_a_loaded_bundle_is_refused_saying_it_is_saved_already(models, tmp_path):
    loaded = models[2]
    _refused(lambda out: save_bundle(loaded, out), tmp_path, "save_bundle", "Predictor", "copy")
    _refused(lambda out: save_bundle_with_trials(loaded, out, out + ".csv"), tmp_path, "Predictor")


@pytest.mark.parametrize("given", ["path", "none", "block"])
def test_other_objects_are_one_error_naming_their_type(models, tmp_path, given):
    value = {"path": "bundle_dir", "none": None, "block": models[0].model}[given]
    message = _refused(lambda out: save_bundle(value, out), tmp_path, "save_bundle", "TrainedModel")
    assert ("got None" if value is None else f"got a {type(value).__name__}:") in message


def test_a_model_trained_without_autotune_has_no_trial_table_to_save(models, tmp_path):
    _refused(lambda out: save_bundle_with_trials(models[0], out, out + ".csv"), tmp_path, "save_bundle_with_trials",
             "autotune", "save_bundle(")


def test_the_models_they_take_are_still_saved(models, tmp_path):
    trained, searched, _ = models
    assert Predictor.load(save_bundle(trained, str(tmp_path / "plain"))).labels == trained.labels
    where = save_bundle_with_trials(searched.trained, str(tmp_path / "tuned"), str(tmp_path / "trials.csv"))
    assert Predictor.load(where).labels == searched.trained.labels and (tmp_path / "trials.csv").exists()


@pytest.mark.parametrize("compact, hint", [("INT8", " (did you mean 'int8'?)"), ("float64", " (did you mean 'float16'?)"),
                                           (True, ""), (8, ""), (["int4"], "")])
def test_a_compact_setting_that_is_none_of_the_choices_is_one_error_before_anything_is_written(models, tmp_path,
                                                                                               compact, hint):
    """It was a ValueError from deep in the writer, naming "dtype" and only four of the six choices; with the trial
    table, after the table had been written."""
    trained, searched, _ = models
    said = (f"compact must be one of auto, none, float32, float16, int8, int4 (or None), got {compact!r}{hint}",)
    message = _refused(lambda out: save_bundle(trained, out, compact=compact), tmp_path, *said)
    assert message == said[0]
    _refused(lambda out: save_bundle_with_trials(searched.trained, out, out + ".csv", compact=compact), tmp_path, *said)
    table = tmp_path / "trials.csv"
    table.write_text("the user's earlier table")
    with pytest.raises(FastTextError, match="compact must be one of"):
        save_bundle_with_trials(searched.trained, str(tmp_path / "out"), str(table), compact=compact, overwrite=False)
    assert os.listdir(tmp_path) == ["trials.csv"] and table.read_text() == "the user's earlier table"
