"""The Python API as a data scientist calls it on a DataFrame read with pandas: ``LabeledTexts(df["label"],
df["text"])``. pandas reads a class column of numbers as integers (the Zhang sets' 1 / 2, 0 / 1 files) and a
missing value as NaN; each is read as the CLI reads the same file, or refused in one line saying how to fix it."""
import io

import numpy as np
import pandas as pd
import pytest

from fasttext_lib.config import TrainConfig
from fasttext_lib.data import LabeledTexts
from fasttext_lib.errors import FastTextError
from fasttext_lib.predict import Predictor
from fasttext_lib.sample import load_sample

CONFIG = TrainConfig(epochs=2, progress=False, ctx="cpu")


@pytest.fixture(scope="module")
def frames():
    """The built-in sample's real sentences as pandas reads a 1 / 2 Zhang CSV of them: an int64 class column."""
    def frame(split, n):
        data = load_sample(split).head(n)
        text = pd.DataFrame({"label": [1 if label == "negative" else 2 for label in data.labels],
                             "text": data.texts}).to_csv(index=False)
        return pd.read_csv(io.StringIO(text))
    train_frame, test_frame = frame("train", 600), frame("test", 200)
    assert train_frame["label"].dtype == np.int64
    return train_frame, test_frame


def _as_text(frame):
    return LabeledTexts(frame["label"].astype(str), frame["text"])


@pytest.fixture(scope="module")
def trained_on_ints(frames):
    from fasttext_lib.train import train

    train_frame, test_frame = frames
    return train(LabeledTexts(train_frame["label"], train_frame["text"]),
                 LabeledTexts(test_frame["label"], test_frame["text"]), CONFIG)


def test_an_integer_class_column_trains_as_the_csv_file_of_it_does(frames, trained_on_ints):
    """It was AttributeError: 'int' object has no attribute 'isdigit' (a traceback from sorting the labels)."""
    from fasttext_lib.train import train

    train_frame, test_frame = frames
    as_text = train(_as_text(train_frame), _as_text(test_frame), CONFIG)
    assert trained_on_ints.labels == as_text.labels == ["1", "2"]
    assert [h["val_accuracy"] for h in trained_on_ints.history] == [h["val_accuracy"] for h in as_text.history]


def test_a_class_column_of_whole_floats_trains_as_its_whole_numbers(frames, trained_on_ints):
    """pandas reads a class column that held a missing value as floats (1.0, 2.0): once the row is dropped, the classes
    are 1 and 2, as JSON Lines reads "stars": 5.0 as the class 5."""
    from fasttext_lib.train import train

    train_frame, test_frame = frames
    as_floats = train(LabeledTexts(train_frame["label"].astype(float), train_frame["text"]),
                      LabeledTexts(test_frame["label"].astype(float), test_frame["text"]), CONFIG)
    assert as_floats.labels == ["1", "2"]
    assert [h["val_accuracy"] for h in as_floats.history] == [h["val_accuracy"] for h in trained_on_ints.history]


def test_evaluate_reads_an_integer_class_column(frames, trained_on_ints):
    """It was AttributeError: 'int' object has no attribute 'strip'."""
    _, test_frame = frames
    predictor = Predictor(trained_on_ints.model, trained_on_ints.featurizer, trained_on_ints.labels, {})
    with_ints = predictor.evaluate(LabeledTexts(test_frame["label"], test_frame["text"]), confusion=True)
    assert with_ints == predictor.evaluate(_as_text(test_frame), confusion=True)
    assert with_ints["n"] == len(test_frame) and with_ints["confusion_matrix"]["class_ids"] == ["1", "2"]
    numpy_ints = LabeledTexts(test_frame["label"].to_numpy(), list(test_frame["text"]))
    assert predictor.evaluate(numpy_ints) == predictor.evaluate(_as_text(test_frame))



def test_evaluate_examples_reads_an_integer_class_column_as_evaluate_does(frames, trained_on_ints):
    """``zip(df['label'], df['text'])`` of pandas' int class column, the pairs evaluate_examples' refusal of a DataFrame
    says to pass (and its itertuples rows), was a TypeError traceback from reading the classes ("expected string or
    bytes-like object, got 'int'"); they are read as evaluate reads LabeledTexts of the same columns."""
    _, test_frame = frames
    predictor = Predictor(trained_on_ints.model, trained_on_ints.featurizer, trained_on_ints.labels, {})
    expected = predictor.evaluate(LabeledTexts(test_frame["label"], test_frame["text"]), confusion=True)
    assert predictor.evaluate_examples(zip(test_frame["label"], test_frame["text"]), confusion=True) == expected
    assert predictor.evaluate_examples(test_frame.itertuples(index=False), confusion=True) == expected
    as_floats = zip(test_frame["label"].astype(float), test_frame["text"])  # (a class column that held a NaN)
    assert predictor.evaluate_examples(as_floats, confusion=True) == expected
    missing = test_frame["label"].where(test_frame.index != 4)
    with pytest.raises(FastTextError, match=r"^examples\[4\]\[0\] is nan \(float\): a document without a class; "
                                            r"drop such rows first \(df.dropna\(subset=\['label'\]\)\)$"):
        predictor.evaluate_examples(zip(missing, test_frame["text"]))
    with pytest.raises(FastTextError, match=r"^examples\[0\]\[0\] is \[1\] \(list\), not a str"):
        predictor.evaluate_examples([([1], "good")])

@pytest.mark.parametrize("change, message", [
    # pandas reads a class column with a missing value as floats: 1.0, 2.0, nan
    (lambda f: f.assign(label=f["label"].where(f.index != 3)),
     r"^train_data.labels\[3\] is nan \(float\): a document without a class; drop such rows first "
     r"\(df.dropna\(subset=\['label'\]\)\)$"),
    (lambda f: f.assign(label=f["label"] + 0.5),
     r"^train_data.labels\[0\] is 2.5 \(float\), not a str: write the classes as the data does, "
     r"e.g. df\['label'\].astype\(str\)$"),
    (lambda f: f.assign(text=f["text"].where(f.index != 5)),
     r"^train_data.texts\[5\] is nan \(float\), not a str: a missing value\? fill it first \(df\['text'\].fillna\(''\)\)$"),
    (lambda f: f.assign(text=f["text"].where(f.index != 5, None)),
     r"^train_data.texts\[5\] is None \(NoneType\), not a str: a missing value\?"),
])
def test_missing_or_float_values_are_refused_in_one_line_naming_the_row(frames, change, message):
    """A NaN class was the class 'nan' for the CLI's reader of the same frame written out, and a traceback here; a
    missing text a TypeError from inside the featurizer."""
    from fasttext_lib.train import train

    train_frame, test_frame = frames
    changed = change(train_frame)
    with pytest.raises(FastTextError, match=message):
        train(LabeledTexts(changed["label"], changed["text"]), _as_text(test_frame), CONFIG)
    validation = message.replace("train_data", "val_data")
    with pytest.raises(FastTextError, match=validation):
        train(_as_text(train_frame), LabeledTexts(changed["label"], changed["text"]), CONFIG)


def test_evaluate_refuses_a_missing_class_in_one_line(frames, trained_on_ints):
    _, test_frame = frames
    predictor = Predictor(trained_on_ints.model, trained_on_ints.featurizer, trained_on_ints.labels, {})
    changed = test_frame.assign(label=test_frame["label"].where(test_frame.index != 7))
    with pytest.raises(FastTextError, match=r"^data.labels\[7\] is nan \(float\): a document without a class"):
        predictor.evaluate(LabeledTexts(changed["label"], changed["text"]))


def test_autotune_refuses_a_missing_class_before_any_trial(frames):
    from fasttext_lib.autotune import autotune

    train_frame, test_frame = frames
    changed = train_frame.assign(label=train_frame["label"].where(train_frame.index != 2))
    with pytest.raises(FastTextError, match=r"^train_data.labels\[2\] is nan \(float\)"):
        autotune(LabeledTexts(changed["label"], changed["text"]), _as_text(test_frame), duration=5, verbose=False)


def test_classes_that_differ_only_in_case_are_one_warning_in_an_autotune_search(frames, capsys):
    """autotune trains each trial and the refit with train(), which said the warning each time: four identical
    warning lines among the trial lines of a short search. A search says it once."""
    from fasttext_lib.autotune import autotune

    train_frame, test_frame = frames
    labels = train_frame["label"].map({1: "negative", 2: "positive"}).where(train_frame.index % 7 != 0,
                                                                             train_frame["label"].map({1: "Negative", 2: "Positive"}))
    val_labels = test_frame["label"].map({1: "negative", 2: "positive"})
    autotune(LabeledTexts(labels, train_frame["text"]), LabeledTexts(val_labels, test_frame["text"]), duration=60,
             max_trials=2, base=CONFIG, verbose=False)
    err = capsys.readouterr().err
    assert err.count("warning: training data has classes 'Negative' (") == 1, err
    autotune(LabeledTexts(labels, train_frame["text"]), LabeledTexts(val_labels, test_frame["text"]), duration=60,
             max_trials=1, base=CONFIG, verbose=False)
    assert capsys.readouterr().err.count("warning: training data has classes") == 1  # each search says it


def test_classes_that_differ_only_in_case_are_a_warning(frames, capsys):
    """A hand-labelled column with 'Positive' in some rows and 'positive' in others trained four classes of a
    two-class problem (each with part of its documents), with no word said. A warning, not a refusal: classes that
    differ in case alone can be meant (#NYC and #nyc tags), and they still train; ß and ss are no case pair."""
    from fasttext_lib.train import train

    train_frame, _ = frames
    labels = train_frame["label"].map({1: "negative", 2: "positive"}).where(train_frame.index % 7 != 0,
                                                                             train_frame["label"].map({1: "Negative", 2: "Positive"}))
    model = train(LabeledTexts(labels, train_frame["text"]), None, CONFIG)
    assert sorted(model.labels) == ["Negative", "Positive", "negative", "positive"]
    first = {label: f"train_data.labels[{list(labels).index(label)}]" for label in set(labels)}  # (where each is)
    assert capsys.readouterr().err.splitlines()[0] == (
        f"warning: training data has classes 'Negative' ({first['Negative']}) and 'negative' ({first['negative']}); "
        f"'Positive' ({first['Positive']}) and 'positive' ({first['positive']}), each one label written in two cases, "
        f"which train as separate classes; if they are one class, write the labels one way (pandas: df['label'] = "
        f"df['label'].str.lower())")
    train(LabeledTexts(["Straße", "Strasse"] * 20, list(train_frame["text"][:40])), None, CONFIG)
    assert "warning" not in capsys.readouterr().err

def test_a_dataframe_passed_as_the_data_itself_is_one_line_saying_how_to_wrap_it(frames):
    """train(df, test_df), autotune(df, ...), predictor.evaluate(df): an AttributeError traceback from deep in the
    library ("'DataFrame' object has no attribute 'labels'"). Now one FastTextError naming the argument and the
    call that wraps a DataFrame."""
    from fasttext_lib.autotune import autotune
    from fasttext_lib.train import train

    train_frame, test_frame = frames
    wrapped = LabeledTexts(train_frame["label"], train_frame["text"])
    for call, what in [(lambda: train(train_frame, None, CONFIG), "train_data"),
                       (lambda: train(wrapped, test_frame, CONFIG), "val_data"),
                       (lambda: train(wrapped, test_frame["text"], CONFIG), "val_data"),
                       (lambda: autotune(train_frame, test_frame, duration=5), "train_data")]:
        with pytest.raises(FastTextError, match=rf"^{what} must be LabeledTexts.*LabeledTexts\(df\[\"label\"\], "
                                                rf"df\[\"text\"\]\)"):
            call()


def test_classes_with_stray_whitespace_train_as_the_csv_file_of_the_frame_does(frames, trained_on_ints, tmp_path):
    """A hand-typed class column ('positive ', ' negative': a space typed after the word, or kept from a spreadsheet
    cell) trained its padded spellings as classes of their own beside the others (six classes of a two-class
    problem, without a word said), where the CSV file of the same frame is read with each class stripped, as the
    JSON Lines reader strips one too. A class that is only whitespace, or empty, is a document without one."""
    from fasttext_lib.data import read_labeled
    from fasttext_lib.train import train

    train_frame, test_frame = frames
    padded = train_frame["label"].astype(str).where(train_frame.index % 3 != 0, train_frame["label"].astype(str) + " ")
    padded = padded.where(train_frame.index % 3 != 1, "\t" + train_frame["label"].astype(str))
    frame = pd.DataFrame({"label": padded, "text": train_frame["text"]})
    frame.to_csv(tmp_path / "padded.csv", index=False)
    assert read_labeled(str(tmp_path / "padded.csv")).labels == list(train_frame["label"].astype(str))
    model = train(LabeledTexts(frame["label"], frame["text"]), LabeledTexts(test_frame["label"].astype(str) + " ",
                                                                           test_frame["text"]), CONFIG)
    assert model.labels == ["1", "2"]
    assert [h["val_accuracy"] for h in model.history] == [h["val_accuracy"] for h in trained_on_ints.history]
    for blank in ("", "  "):
        changed = frame.assign(label=frame["label"].where(frame.index != 4, blank))
        with pytest.raises(FastTextError, match=rf"^train_data.labels\[4\] is {blank!r} \(str\): a document without "
                                                r"a class; drop such rows first"):
            train(LabeledTexts(changed["label"], changed["text"]), None, CONFIG)


@pytest.mark.parametrize("cut", [
    lambda f: LabeledTexts(f["label"], f["text"].iloc[:-5]),  # texts shorter
    lambda f: LabeledTexts(f["label"].iloc[:-5], f["text"]),  # labels shorter
    lambda f: LabeledTexts(list(f["label"].astype(str))[:-1], list(f["text"])),  # lists, one label short
])
def test_labels_and_texts_of_different_lengths_are_refused_in_one_line(frames, trained_on_ints, cut):
    """Training on labels longer than the texts was an IndexError traceback from inside the featurizer; on texts longer
    it trained without a word, documents beyond the labels left out or scored at random; evaluate paired them up to
    the shorter one (n=1 of a label and two texts)."""
    from fasttext_lib.train import train

    train_frame, test_frame = frames
    message = r"^{}: (595|600|599) labels but (595|600) texts: each document is one label and one text, in order"
    with pytest.raises(FastTextError, match=message.format("train_data")):
        train(cut(train_frame), _as_text(test_frame), CONFIG)
    with pytest.raises(FastTextError, match=message.format("val_data")):
        train(_as_text(train_frame), cut(train_frame), CONFIG)
    predictor = Predictor(trained_on_ints.model, trained_on_ints.featurizer, trained_on_ints.labels, {})
    with pytest.raises(FastTextError, match=message.format("data")):
        predictor.evaluate(cut(train_frame))


def test_series_whose_rows_are_in_different_orders_are_refused(frames, trained_on_ints):
    """Two Series of the same rows in different orders (one of them sorted or shuffled: df.sort_values) were paired by
    position, each text with another row's class, and scored without a word; pandas pairs them by index."""
    _, test_frame = frames
    predictor = Predictor(trained_on_ints.model, trained_on_ints.featurizer, trained_on_ints.labels, {})
    shuffled = test_frame.sample(frac=1.0, random_state=0)
    with pytest.raises(FastTextError, match=r"^data: its labels and texts are Series of the same rows in different "
                                            r"orders \(their indexes differ\)"):
        predictor.evaluate(LabeledTexts(test_frame["label"], shuffled["text"]))
    # the same rows in one order are one frame's columns, whatever its index; another index is read by position
    assert predictor.evaluate(LabeledTexts(shuffled["label"], shuffled["text"]))["n"] == len(test_frame)
    renumbered = LabeledTexts(test_frame["label"], test_frame["text"].reset_index(drop=True).rename(lambda i: i + 1000))
    assert predictor.evaluate(renumbered) == predictor.evaluate(_as_text(test_frame))


def test_series_in_one_order_but_numbered_apart_are_told_how_to_pair_them_by_position(frames, trained_on_ints):
    """A frame shuffled, and its labels encoded into a new Series (``pd.Series(codes)``: numbered 0, 1, ... in the
    shuffled order): the two are in one order, which pandas' indexes cannot tell from the same rows in two orders, so
    they are refused; the refusal said only to align them by index (``texts.reindex(labels.index)``), which paired each
    text with another row's class here. It says how to pair them by position as well, and that reads them right."""
    _, test_frame = frames
    predictor = Predictor(trained_on_ints.model, trained_on_ints.featurizer, trained_on_ints.labels, {})
    shuffled = test_frame.sample(frac=1.0, random_state=0)
    labels = pd.Series(list(shuffled["label"]))  # (numbered anew, in the shuffled order)
    with pytest.raises(FastTextError) as caught:
        predictor.evaluate(LabeledTexts(labels, shuffled["text"]))
    said = str(caught.value)
    assert "reindex" in said and "in the same order already, pass them as lists: LabeledTexts(list(labels), " \
                                 "list(texts))" in said, said
    by_position = predictor.evaluate(LabeledTexts(list(labels), list(shuffled["text"])))
    assert by_position == predictor.evaluate(LabeledTexts(shuffled["label"], shuffled["text"]))


def test_labels_or_texts_given_as_a_generator_are_refused_in_one_line():
    """Texts given as a generator (``(t.strip() for t in texts)``), which has no length, were a TypeError traceback from
    the pairs' check ("object of type 'generator' has no len()"); read once, it could not be read again anyway."""
    from fasttext_lib.train import train

    with pytest.raises(FastTextError, match=r"^train_data\.texts must be a list, a Series or an array, got a "
                                            r"generator: pass list\(texts\)$"):
        train(LabeledTexts(["a", "b"], (t for t in ["x y", "z"])), None, CONFIG)
    with pytest.raises(FastTextError, match=r"^train_data\.labels must be .* got a map: pass list\(labels\)$"):
        train(LabeledTexts(map(str, [1, 2]), ["x y", "z"]), None, CONFIG)
