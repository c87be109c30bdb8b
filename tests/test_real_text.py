"""Real-world text and file shapes (what people download and point the tool at), built from the
built-in sample's real English sentences: each is read right (every document, its label, its whole
text) or refused in one line naming the file and what to do."""
import csv

import pandas as pd
import pytest

from conftest import cli_in_process
from fasttext_lib.data import read_labeled
from fasttext_lib.errors import FastTextError
from fasttext_lib.sample import load_sample


@pytest.fixture(scope="module")
def real():
    data = load_sample("train").head(120)
    assert {"negative", "positive"} == set(data.labels)
    return data


def _frame(real, **columns):
    return pd.DataFrame({name: getattr(real, field) for name, field in columns.items()})


@pytest.mark.parametrize("columns, to_csv", [
    ({"text": "texts", "label": "labels"}, {"index": False}),                        # label last
    ({"review": "texts", "sentiment": "labels"}, {"index": False}),                  # Kaggle IMDB's header
    ({"text": "texts", "label": "labels"}, {"index": False, "quoting": csv.QUOTE_ALL}),  # "text","label"
    ({"text": "texts", "label": "labels"}, {}),                                      # df.to_csv(): ,text,label
    ({"label": "labels", "text": "texts"}, {}),                                      # ,label,text
    ({"title": "texts", "body": "texts", "label": "labels"}, {"index": False}),
])
def test_a_header_naming_the_class_column_anywhere_reads_every_row(tmp_path, real, columns, to_csv):
    path = tmp_path / "kaggle.csv"
    _frame(real, **columns).to_csv(path, **to_csv)
    data = read_labeled(str(path))
    n_text = list(columns.values()).count("texts")
    assert data.labels == real.labels
    assert data.texts == [" ".join([t] * n_text) for t in real.texts]


def test_a_label_last_row_with_a_stray_unquoted_comma_is_named(tmp_path, real):
    path = tmp_path / "hand.csv"
    path.write_text("text,label\ni like it,positive\ni like it, a lot,positive\n")
    with pytest.raises(FastTextError, match=r"hand.csv:3: .*3 column\(s\) where the header row has 2"):
        list(read_labeled(str(path)).labels)


@pytest.mark.parametrize("sep, what", [("\t", "tab"), (";", "semicolon")])
@pytest.mark.parametrize("header", [True, False])
def test_tab_and_semicolon_separated_files_are_named_as_such(tmp_path, real, sep, what, header):
    path = tmp_path / "data.tsv"
    _frame(real, label="labels", text="texts").to_csv(path, sep=sep, index=False, header=header)
    with pytest.raises(FastTextError, match=rf"data.tsv: line 1 looks {what}-separated; .*convert it"):
        read_labeled(str(path))


def test_class_last_without_a_header_is_refused_not_trained_as_a_class_per_review(tmp_path, real):
    path, out = tmp_path / "noheader.csv", tmp_path / "model"
    _frame(real, text="texts", label="labels").to_csv(path, index=False, header=False, quoting=csv.QUOTE_ALL)
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert got.returncode == 2, got.stderr
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: training data has 120 classes for 120 documents")
    assert "is the text in the class column?" in lines[0]
    assert not out.exists()
