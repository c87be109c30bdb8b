"""Hostile bundles: files whose checksums in config.json match (what a hand edit, an older or a foreign writer
publishes) but whose content is not what this library writes. Each is one ``error:`` line naming the bundle
and the file, never a traceback and never a model that predicts from parts that disagree."""
import json
import warnings

import numpy as np
import pytest

from conftest import as_an_older_writer_left_it, cli_in_process, make_splits
from fasttext_lib.bundle import save_bundle
from fasttext_lib.compact import ROWS_FILE
from fasttext_lib.config import TrainConfig
from fasttext_lib.predict import Predictor
from fasttext_lib.train import train


@pytest.fixture(scope="module")
def trained():
    return train(*make_splits(300, 50, seed=9), TrainConfig(epochs=1, batch_size=64, ngrams=2, buckets=20000, lr=0.5,
                                                           progress=False))


def _refused(where, *expected):
    """``predict`` on the bundle at ``where`` ends in one error line holding each of ``expected``."""
    r = cli_in_process("predict", "--model", where, input="great food\n")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and r.stdout == "" and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"error: corrupt model bundle {where}: ") and "Traceback" not in lines[0], lines[0]
    for part in expected:
        assert part in lines[0], lines[0]


def _json_edit(change):
    def damage(path):
        with open(path) as f:
            value = json.load(f)
        value = change(value)
        with open(path, "w") as f:
            json.dump(value, f)
    return damage


def _without_unk(vocab):
    tokens = [t for t in vocab["idx_to_token"] if t != "<unk>"]
    return dict(vocab, idx_to_token=tokens, token_to_idx={t: i for i, t in enumerate(tokens)}, unknown_token=None)


def _token_renamed(new):
    def change(vocab):
        old = vocab["idx_to_token"][5]
        vocab["idx_to_token"][5] = new
        vocab["token_to_idx"][new] = vocab["token_to_idx"].pop(old)
        return vocab
    return change


VOCABULARIES = {
    "a list": lambda vocab: [],
    "an empty object": lambda vocab: {},
    "an index that is text": lambda vocab: dict(vocab, token_to_idx={**vocab["token_to_idx"], "fair": "6"}),
    "idx_to_token not a list": lambda vocab: dict(vocab, idx_to_token=5),
    "no <unk>": _without_unk,
    # JSON's "\ud800": no UTF-8 text holds it, and export-vectors' write of it was a UnicodeEncodeError traceback
    "a token that is a lone surrogate": _token_renamed("\ud800"),
}


@pytest.mark.parametrize("change", list(VOCABULARIES))
def test_a_vocabulary_that_is_not_one_this_library_writes_is_one_error(trained, tmp_path, change):
    # a list or an object without the indexes was an AttributeError / TypeError traceback; one without <unk> first
    # read unseen words as whatever token was first
    where = save_bundle(trained, str(tmp_path / "b"), compact="none")
    as_an_older_writer_left_it(where, "vocab.json", _json_edit(VOCABULARIES[change]))
    said = {"a token that is a lone surrogate": "vocab.json: token 5 is not valid Unicode text (character '\\ud800' at "
                                                "position 0: a lone surrogate)"}
    _refused(where, said.get(change, "vocab.json"))


def test_metrics_that_are_not_an_object_are_one_error(trained, tmp_path):
    where = save_bundle(trained, str(tmp_path / "b"), compact="none")
    as_an_older_writer_left_it(where, "metrics.json", _json_edit(lambda metrics: [1, 2]))
    _refused(where, "metrics.json")


@pytest.mark.parametrize("content", [b"", b"garbage" * 50, "half"], ids=["empty", "garbage", "half"])
def test_parameters_mxnet_cannot_read_are_one_error_naming_why(trained, tmp_path, content):
    # MXNet's message starts "Traceback (most recent call last):" (its C++ stack): that line was the error shown
    where = save_bundle(trained, str(tmp_path / "b"), compact="none")

    def damage(path):
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[:len(data) // 2] if content == "half" else content)
    as_an_older_writer_left_it(where, "model.params", damage)
    _refused(where, "model.params", "Invalid NDArray file format")


def _npz_edit(change):
    def damage(path):
        with np.load(path) as stored:
            arrays = dict(stored)
        change(arrays)
        with open(path, "wb") as f:
            np.savez(f, **arrays)
    return damage


ROWS = {  # what a rows file may not hold, and what the error says about it
    "a seed that is an array": (lambda a: a.update(seed=np.array([1, 2])), "seed"),
    "another seed than config.json's": (lambda a: a.update(seed=np.int64(7)), "seed"),
    "row numbers that are fractions": (lambda a: a.update(rows=a["rows"] + 0.5), "rows"),
    "row numbers in two dimensions": (lambda a: a.update(rows=a["rows"].reshape(-1, 1)), "rows"),
    "values that are text": (lambda a: a.update(values=a["values"].astype("U3")), "values"),
    "values that are whole numbers": (lambda a: a.update(values=a["values"].astype(np.int32)), "values"),
    "values that are complex": (lambda a: a.update(values=a["values"].astype(np.complex64)), "values"),
    "values in another float type": (lambda a: a.update(values=a["values"].astype(np.float64)), "values"),
    "pickled objects": (lambda a: a.update(values=np.array([object()], dtype=object)), "pickle"),
}


@pytest.mark.parametrize("case", list(ROWS))
def test_a_rows_file_that_is_not_one_this_library_writes_is_one_error(trained, tmp_path, case):
    # a seed array, 2-d rows or text values were a TypeError / ValueError traceback; fractional rows, integer or
    # complex values and another seed were loaded (truncated, cast), and the model predicted from other rows
    where = save_bundle(trained, str(tmp_path / "b"), compact="float32")
    change, says = ROWS[case]
    as_an_older_writer_left_it(where, ROWS_FILE, _npz_edit(change))
    _refused(where, ROWS_FILE, says)


@pytest.mark.parametrize("case", ["codes that are floats", "scales that are text"])
def test_quantized_rows_of_other_types_are_one_error(trained, tmp_path, case):
    where = save_bundle(trained, str(tmp_path / "b"), compact="int4")
    change = ((lambda a: a.update(codes=a["codes"].astype(np.float32))) if case.startswith("codes") else
              (lambda a: a.update(scales=a["scales"].astype("U3"))))
    as_an_older_writer_left_it(where, ROWS_FILE, _npz_edit(change))
    _refused(where, ROWS_FILE, case.split()[0])


def test_a_rows_file_that_is_no_npz_archive_says_so_and_is_never_unpickled(trained, tmp_path, monkeypatch):
    # np.load reads a file that is no zip archive as a pickle (refused: allow_pickle=False), so a garbage rows file
    # was "Cannot load file containing pickled data"; the loader must never unpickle what the bundle holds
    import pickle

    where = save_bundle(trained, str(tmp_path / "b"), compact="float32")

    class Evil:
        def __reduce__(self):
            return (print, ("unpickled!",))
    as_an_older_writer_left_it(where, ROWS_FILE, lambda path: open(path, "wb").write(pickle.dumps(Evil())))
    monkeypatch.setattr(pickle, "load", lambda *a, **k: pytest.fail("a bundle was unpickled"))
    _refused(where, ROWS_FILE, "not an .npz archive")


def _inf_scale(arrays):
    arrays["scales"][0], arrays["codes"][0, 0] = np.inf, 0  # 0 * inf: NaN


def test_an_inf_scale_is_one_line_without_numpy_warnings(trained, tmp_path):
    # numpy's "RuntimeWarning: invalid value encountered in multiply" was printed above the error line
    where = save_bundle(trained, str(tmp_path / "b"), compact="int8")
    as_an_older_writer_left_it(where, ROWS_FILE, _npz_edit(_inf_scale))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (pytest collects warnings: a warning printed is a failure here)
        _refused(where, ROWS_FILE, "inf or NaN")


@pytest.mark.parametrize("change", [{"unicode_normalization": "NFKC"}, {"dropout": "x"}, {"dropout": 2}],
                         ids=lambda change: json.dumps(change))
def test_config_values_this_library_never_writes_are_one_error(trained, tmp_path, change):
    # another Unicode normalization was read as "none" (words with accents looked up as written: unmatched)
    where = save_bundle(trained, str(tmp_path / "b"), compact="none")
    with open(f"{where}/config.json") as f:
        config = json.load(f)
    with open(f"{where}/config.json", "w") as f:
        json.dump(dict(config, **change), f)
    _refused(where, "config.json", next(iter(change)))


@pytest.mark.parametrize("change, said", [
    ({"ngrams": 3}, "config.json's 'ngrams' is 3 but the model was trained with ngrams 2 (its 'train_config')"),
    ({"ngrams": 1, "buckets": 0, "num_rows": None}, "'ngrams' is 1 but the model was trained with ngrams 2"),
    ({"buckets": 30000, "num_rows": None}, "'buckets' is 30000 but the model was trained with buckets 20000"),
    ({"emsize": 7}, "'emsize' is 7 but the model was trained with emsize"),
    ({"train_config": {"ngrams": 3}}, "'ngrams' is 2 but the model was trained with ngrams 3"),
], ids=["ngrams", "unigrams", "buckets", "emsize", "train_config"])
@pytest.mark.parametrize("compact", ["none", "float32"])
def test_featurization_values_that_disagree_with_the_training_config_are_one_error(trained, tmp_path, change, said,
                                                                                   compact):
    """An edited 'ngrams' fits the parameter shapes: the bundle loaded and predicted with other features than the
    model learned (trigrams of a bigram model), silently. num_rows None: set to fit the other edits."""
    where = save_bundle(trained, str(tmp_path / "b"), compact=compact)
    with open(f"{where}/config.json") as f:
        config = json.load(f)
    for key, value in change.items():
        config[key] = dict(config[key], **value) if isinstance(value, dict) else value
    if "num_rows" in change:
        config["num_rows"] = config["vocab_size"] + config["buckets"]
    with open(f"{where}/config.json", "w") as f:
        json.dump(config, f)
    _refused(where, said)


@pytest.mark.parametrize("written, form", [("NFC-tokens", "NFC-tokens"), ("NFC", "NFC"), (None, "none")],
                         ids=["an older rule", "the oldest recorded", "removed"])
@pytest.mark.parametrize("compact", ["none", "float32"])
def test_a_unicode_normalization_other_than_the_vocabularys_is_one_error(trained, tmp_path, written, form, compact):
    """config.json's 'unicode_normalization' was checked to be a value this library reads, not that it was the rule
    the vocabulary was made with: an edited one loaded and predicted with other tokens than the model learned
    (don’t read as one word, not don ' t), silently. vocab.json (checksummed) records the rule now."""
    where = save_bundle(trained, str(tmp_path / "b"), compact=compact)
    with open(f"{where}/config.json") as f:
        config = json.load(f)
    if written is None:
        del config["unicode_normalization"]
    else:
        config["unicode_normalization"] = written
    with open(f"{where}/config.json", "w") as f:
        json.dump(config, f)
    _refused(where, f"config.json's 'unicode_normalization' is {form} but the vocabulary was made with "
                    f"NFC-tokens-quotes-br-fixpoint-marks (vocab.json's record): it would read text otherwise than in "
                    f'training; put back "NFC-tokens-quotes-br-fixpoint-marks", or retrain')


def test_a_vocabulary_without_the_record_is_read_as_config_json_says(trained, tmp_path):
    """Bundles written before vocab.json recorded the rule load as before, by config.json's value."""
    where = save_bundle(trained, str(tmp_path / "b"), compact="none")
    as_an_older_writer_left_it(where, "vocab.json", _json_edit(
        lambda vocab: {k: v for k, v in vocab.items() if k != "unicode_normalization"}))
    with open(f"{where}/config.json") as f:
        config = json.load(f)
    config["unicode_normalization"] = "NFC-tokens"
    with open(f"{where}/config.json", "w") as f:
        json.dump(config, f)
    assert Predictor.load(where).featurizer.unicode_form == "NFC-tokens"


@pytest.mark.parametrize("change", [lambda vocab: [], _token_renamed("\ud800")], ids=["a list", "a lone surrogate"])
def test_the_evaluate_and_export_vectors_commands_refuse_it_the_same_way(trained, tmp_path, change):
    where = save_bundle(trained, str(tmp_path / "b"), compact="none")
    as_an_older_writer_left_it(where, "vocab.json", _json_edit(change))
    (tmp_path / "test.txt").write_text("__label__1 bad\n__label__2 good\n")
    for args in (("evaluate", "--model", where, "--data", tmp_path / "test.txt"),
                 ("export-vectors", "--model", where, "--output", tmp_path / "out.vec")):
        r = cli_in_process(*args)
        assert r.returncode == 2 and r.stderr.startswith(f"error: corrupt model bundle {where}: vocab.json"), r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out.vec").exists()


def test_a_model_path_that_is_a_loop_of_symbolic_links_is_named_so(tmp_path, monkeypatch):
    """``predict --model loopa`` (loopa -> loopb -> loopa) said "model bundle not found: loopa does not exist", of a
    name that is there: the loop (ELOOP) is what keeps it from being read."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loopa").symlink_to("loopb")
    (tmp_path / "loopb").symlink_to("loopa")
    r = cli_in_process("predict", "--model", "loopa", input="good food\n")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "error: cannot read loopa: a loop of symbolic links"], r.stderr


def test_a_bundle_of_the_older_format_at_the_destination_is_refused_in_the_callers_terms(trained, tmp_path):
    """A format-1 bundle where a bundle goes was refused as "remove it or choose another --output" by the Python API
    too: by notebook 02's check cell (check_output) and its save (save_bundle), which have no --output. They say
    another destination; the command line still says --output."""
    from fasttext_lib.bundle import check_output
    from fasttext_lib.errors import FastTextError

    target = tmp_path / "models" / "run"
    target.mkdir(parents=True)
    (target / "config.json").write_text(json.dumps({"format_version": 1, "labels": ["1", "2"]}))
    (target / "model.params").write_text("old")
    for refused_by in (lambda: check_output(str(target)), lambda: save_bundle(trained, str(target))):
        with pytest.raises(FastTextError) as told:
            refused_by()
        said = str(told.value)
        assert "--" not in said and said.endswith("remove it or choose another destination"), said
    cli = cli_in_process("train", "--train", tmp_path / "missing.csv", "--output", target, "--no-progress")
    assert cli.returncode == 2 and cli.stderr.strip().endswith("remove it or choose another --output"), cli.stderr
