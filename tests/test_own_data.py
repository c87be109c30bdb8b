"""Notebook 01 with the user's own labelled files (``train_file``, ``test_file``, ``label_column``, ``text_column``):
``-p dataset my_reviews.csv`` was "unknown dataset" and the series had no way in for a data scientist's own CSV."""
import gzip
import json
import os

import pytest

from conftest import cli_in_process
from test_notebooks import code_cells, read, run_after_papermill

ROWS = [("positive", "Worked well, no side effects at all."), ("negative", "Made me dizzy, had to stop after a week."),
        ("positive", "My headaches are gone, great medicine."), ("negative", "Did nothing for the pain, a waste.")] * 5


def table(rows, sep=",", extra=False):
    head = sep.join(["id", "label", "text", "rating"] if extra else ["label", "text"])
    lines = [sep.join([str(i), label, f'"{text}"', str(1 + 9 * (label == "positive"))] if extra else [label, f'"{text}"'])
             for i, (label, text) in enumerate(rows)]
    return "\n".join([head] + lines) + "\n"


def run_01(s3_bucket, tmp_path, **parameters):
    """01's parameters, check and corpus cells, the cells that describe the data (the write cell saves their
    histogram) and its write cell, as papermill runs them; its namespace."""
    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path / "out"), **parameters}
    namespace = run_after_papermill("01_data_prep.ipynb", local)
    code = code_cells(read("01_data_prep.ipynb"))
    write_at = next(i for i, c in enumerate(code) if "write_fasttext_splits(splits" in c.source)
    for cell in code[2:write_at + 1]:
        exec(cell.source, namespace)  # noqa: S102 - the committed cells
    return namespace


@pytest.mark.parametrize("form", ["csv", "kaggle", "tsv", "csv.gz"])
def test_01_prepares_the_users_own_files_as_a_named_dataset_that_02_reads(form, tmp_path, s3_bucket):
    from fasttext_lib.data import read_labeled
    from fasttext_lib.workspace import Workspace

    columns = {}
    for split, rows in (("train", ROWS), ("test", ROWS[:8])):
        path = tmp_path / f"{split}.{form.replace('kaggle', 'csv')}"
        text = table(rows, sep="\t" if form == "tsv" else ",", extra=form == "kaggle")
        path.write_bytes(gzip.compress(text.encode()) if form.endswith(".gz") else text.encode())
    if form == "kaggle":  # two columns read as a class (label, rating): the user names them
        columns = {"label_column": "label", "text_column": "text"}
    ext = form.replace("kaggle", "csv")
    namespace = run_01(s3_bucket, tmp_path, dataset="my_reviews", train_file=str(tmp_path / f"train.{ext}"),
                       test_file=str(tmp_path / f"test.{ext}"), **columns)
    ws = Workspace(s3_bucket[len("s3://"):], "fasttext", str(tmp_path / "out"))
    assert namespace["written"] == {"train": ws.prepared("my_reviews", "train"), "test": ws.prepared("my_reviews", "test")}
    train = read_labeled(namespace["written"]["train"])  # what 02 reads: normalized fastText lines
    assert (len(train), train.classes()) == (len(ROWS), ["negative", "positive"])
    assert train.texts[0] == "worked well , no side effects at all ."
    assert len(read_labeled(namespace["written"]["test"])) == 8


def test_01_holds_out_a_seeded_fifth_of_the_train_file_without_a_test_file(tmp_path, s3_bucket):
    from fasttext_lib.data import read_labeled

    (tmp_path / "mine.csv").write_text(table(ROWS))
    first = run_01(s3_bucket, tmp_path, dataset="mine", train_file=str(tmp_path / "mine.csv"))["written"]
    splits = {name: read_labeled(uri) for name, uri in first.items()}
    assert (len(splits["train"]), len(splits["test"])) == (16, 4)
    again = run_01(s3_bucket, tmp_path, dataset="mine", train_file=str(tmp_path / "mine.csv"))["written"]
    assert [read_labeled(again["test"]).texts] == [splits["test"].texts]  # the same held-out documents every run


@pytest.mark.parametrize("parameters, said", [
    ({"dataset": "sample", "train_file": "mine.csv"}, "dataset names your own data's splits when train_file is given: "
                                                      "choose a name of your own (such as 'my_reviews'), got 'sample'"),
    ({"dataset": "ag_news", "train_file": "mine.csv"}, "dataset names your own data's splits"),
    ({"dataset": "a//b", "train_file": "mine.csv"}, "dataset must be folder names joined by /"),
    ({"test_file": "test.csv"}, "test_file is for your own data: give train_file too"),
    ({"dataset": "mine", "train_file": ""}, "train_file must be a file's path (local or s3://) or None, got ''"),
    ({"dataset": "mine", "train_file": "mine.csv", "label_column": 3}, "label_column must be a column's name or None"),
])
def test_01_refuses_own_data_parameters_that_cannot_work_in_its_check_cell(parameters, said, tmp_path, s3_bucket):
    from fasttext_lib.errors import FastTextError

    with pytest.raises(FastTextError, match="^" + said.replace("(", r"\(").replace(")", r"\)")):
        run_after_papermill("01_data_prep.ipynb", {"bucket": s3_bucket[len("s3://"):],
                                                   "output_dir": str(tmp_path / "out"), **parameters})


def test_02_on_an_own_dataset_not_prepared_says_to_run_01_with_the_file(tmp_path, s3_bucket):
    """02 with ``-p dataset my_reviews`` before 01 was told "unknown dataset 'my_reviews'; choose one of sample, ...",
    as if a name of one's own could not be prepared."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path))
    with pytest.raises(FastTextError, match=r"^no prepared train data for dataset 'my_reviews' at s3://.*/p/data/"
                                            r"my_reviews.train: run notebook 01 with dataset='my_reviews' \(and "
                                            r"train_file=, your file, for your own data\) and this bucket and prefix "
                                            r"first$"):
        ws.prepared("my_reviews", "train")


def test_a_table_whose_columns_must_be_named_is_told_the_notebooks_parameters_not_the_clis_flags(tmp_path, s3_bucket):
    """A Kaggle-style table (id,label,text,rating: two class columns) uploaded as data/NAME.train and read by 02, or
    given to 01 without its columns, was told "say which to read: --label-column NAME --text-column NAME", flags no
    notebook has. 01 is told its label_column and text_column; 02 and 04, which read what 01 prepared, to run 01 with
    the file and those columns. (The CLI keeps its flags: test_real_text.)"""
    from smart_open import open as s3_open

    from fasttext_lib.errors import FastTextError
    from test_notebooks import SERIES, cell_with

    kaggle = table(ROWS, extra=True)
    (tmp_path / "reviews.csv").write_text(kaggle)
    with pytest.raises(FastTextError) as told:
        run_01(s3_bucket, tmp_path, dataset="my_reviews", train_file=str(tmp_path / "reviews.csv"))
    said = str(told.value)
    assert "names 2 class columns (label, rating): one is the class; say which to read: label_column='NAME' and " \
           "text_column='NAME' (this notebook's parameters)" in said and "--" not in said, said

    local = {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path / "out"), "dataset": "my_reviews"}
    for split in ("train", "test"):  # uploaded as if 01 had prepared them
        with s3_open(f"{s3_bucket}/fasttext/data/my_reviews.{split}", "w") as f:
            f.write(kaggle)
    for name, marker, more in ((SERIES[1], "train_uri, test_uri = ws.prepared(", {}),
                               (SERIES[2], 'if timing_text == "yelp-shaped":', {"timing_text": "dataset"}),
                               (SERIES[3], "test_uri = ws.prepared(", {})):
        namespace = run_after_papermill(name, {**local, **more})
        with pytest.raises(FastTextError) as told:
            exec(cell_with(name, marker), namespace)  # noqa: S102 - the notebook's data cell
        said = str(told.value)
        assert said.endswith("one is the class; say which to read: run notebook 01 with dataset='my_reviews', "
                             "train_file=<your file>, label_column='NAME' and text_column='NAME' (02, 03 and 04 read "
                             "what 01 prepared)") and "--" not in said, said


@pytest.mark.parametrize("names_file, where", [("classes.txt", "local"), ("reviews.classes.txt", "local"),
                                               ("classes.txt", "s3")])
def test_01_carries_a_classes_txt_beside_the_train_file_to_the_prepared_splits(names_file, where, tmp_path, s3_bucket):
    """Own data numbered as Zhang et al.'s (1, 2) with their classes.txt beside it (line i: class i's name): 01 showed
    the names, but wrote the splits alone, so 02's bundle and 04's predictions said 1 and 2. 01 writes the names
    beside the splits as {dataset}.classes.txt, as it does a downloaded set's, where 02 finds them."""
    from smart_open import open as s3_open

    from fasttext_lib.data import read_labeled

    numbered = [("1" if label == "negative" else "2", text) for label, text in ROWS]
    folder = f"{s3_bucket}/mine" if where == "s3" else str(tmp_path)
    for name, text in (("reviews.csv", table(numbered)), (names_file, "negative\npositive\n")):
        with s3_open(f"{folder}/{name}", "w") as f:
            f.write(text)
    written = run_01(s3_bucket, tmp_path, dataset="my_reviews", train_file=f"{folder}/reviews.csv")["written"]
    assert written["label_names"] == f"{s3_bucket}/fasttext/data/my_reviews.classes.txt"
    for split in ("train", "test"):  # what 02 reads: the names with the data
        data = read_labeled(written[split])
        assert data.names == {"1": "negative", "2": "positive"} and data.classes() == ["1", "2"]


def test_01_without_a_names_file_writes_the_splits_alone(tmp_path, s3_bucket):
    from fasttext_lib import storage

    (tmp_path / "reviews.csv").write_text(table(ROWS))
    written = run_01(s3_bucket, tmp_path, dataset="my_reviews", train_file=str(tmp_path / "reviews.csv"))["written"]
    assert sorted(written) == ["test", "train"]
    assert not storage.exists(f"{s3_bucket}/fasttext/data/my_reviews.classes.txt")


def test_01_prepares_own_classes_written_with_spaces_shown_as_written(tmp_path, s3_bucket):
    """A class of the user's own holding a space (Kaggle's 'Extremely Negative', '1 star') is a class any reader of
    the series takes, but 01 was refused "cannot write the label ... to the fastText-format file: ... write CSV
    instead, or rename the class", which 01 has no way to do. 01 writes such a class under an id without the space
    and names it with a classes.txt, so 02's bundle and 04's predictions say it as the user's file does."""
    from fasttext_lib.data import read_labeled

    spaced = [("Very " + label if i % 3 else label, text) for i, (label, text) in enumerate(ROWS)]
    spaced.append(("Very_negative", "A class spelled as the id of another would be."))
    (tmp_path / "reviews.csv").write_text(table(spaced))
    (tmp_path / "test.csv").write_text(table(spaced))  # (a copy: the train file itself is refused as test_file)
    written = run_01(s3_bucket, tmp_path, dataset="my_reviews", train_file=str(tmp_path / "reviews.csv"),
                     test_file=str(tmp_path / "test.csv"))["written"]
    for split in ("train", "test"):
        data = read_labeled(written[split])
        assert data.display_labels() == [label for label, _ in spaced]  # every class as the user wrote it
        assert len(data.classes()) == 5 and all(" " not in label for label in data.classes())


def test_01_rerun_without_names_leaves_no_classes_txt_of_the_data_prepared_before(tmp_path, s3_bucket, capsys):
    """01 rerun for a dataset name with a train_file without a classes.txt left the {dataset}.classes.txt an earlier
    run wrote beside the new splits: 02 named the new data's classes by it, silently (1 and 2 of another file said
    'negative' and 'positive'). As 01's rerun replaces the splits it prepared before, it removes that file too."""
    from fasttext_lib import storage
    from fasttext_lib.data import read_labeled

    numbered = [("1" if label == "negative" else "2", text) for label, text in ROWS]
    first = tmp_path / "first"
    first.mkdir()
    (first / "reviews.csv").write_text(table(numbered))
    (first / "classes.txt").write_text("negative\npositive\n")
    assert "label_names" in run_01(s3_bucket, tmp_path, dataset="my_reviews",
                                   train_file=str(first / "reviews.csv"))["written"]
    (tmp_path / "other.csv").write_text(table(numbered))  # 1 and 2 of another file: no names
    written = run_01(s3_bucket, tmp_path, dataset="my_reviews", train_file=str(tmp_path / "other.csv"))["written"]
    assert read_labeled(written["train"]).names == {}
    assert not storage.exists(f"{s3_bucket}/fasttext/data/my_reviews.classes.txt")
    assert "my_reviews.classes.txt" in capsys.readouterr().err


def test_a_header_naming_no_class_column_is_told_the_notebooks_parameters_too(tmp_path):
    """A table of reviews whose header names no class column (id,review,helpful) was told "name it: --label-column
    NAME" in 01, 02, 03 and 04 as well, a flag no notebook has: it is a ColumnsToName like the other tables whose
    columns must be named, so each notebook says its own parameters. The command line keeps its flags."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.own_data import read_own_splits, read_prepared

    path = tmp_path / "reviews.csv"
    path.write_text("id,review,helpful\nr1,the food was great and the staff kind,1\nr2,cold soup and a long wait,0\n"
                    "r3,lovely place we will come back,1\n")
    found = (f"{path}:1: the CSV header row (id,review,helpful) names no class column training knows (category, "
             f"class, class_index, classes, label, labels, overall, polarity, ...); if one of them is the class, say "
             f"which to read: ")
    with pytest.raises(FastTextError) as told:
        read_own_splits(str(path))
    assert str(told.value) == (found + "label_column='NAME' and text_column='NAME' (this notebook's parameters); "
                                       "else label these texts with predict")
    with pytest.raises(FastTextError) as told:
        read_prepared(str(path), "my_reviews")
    assert str(told.value) == (found + "run notebook 01 with dataset='my_reviews', train_file=<your file>, "
                                       "label_column='NAME' and text_column='NAME' (02, 03 and 04 read what 01 "
                                       "prepared); else label these texts with predict")
    cli = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert cli.returncode == 2 and cli.stderr.strip().splitlines() == [
        "error: " + found + "--label-column NAME --text-column NAME (the SageMaker job's label_column and "
                            "text_column); else label these texts with predict"], cli.stderr


# A small skewed file: 12 positive, 3 negative, 2 neutral reviews and one mixed one.
SKEWED = ([("positive", f"Great medicine number {i}, it worked.") for i in range(12)]
          + [("negative", f"Useless pill number {i}, it did nothing.") for i in range(3)]
          + [("neutral", f"Pill number {i}, neither good nor bad.") for i in range(2)] + [("mixed", "Helped, but sick.")])


@pytest.mark.parametrize("seed", range(6))
def test_the_held_out_test_split_has_a_seeded_fifth_of_each_class(seed, tmp_path):
    """Without a test_file 01 held out a seeded 20% of the rows whatever their class: on a small or skewed file a
    class could be missing from the test split (accuracy said nothing of it) or from training. Each class with two
    documents or more now gives a fifth of them (at least one, and keeps at least one), the same every run of a
    seed; a class of one document stays in training."""
    from collections import Counter

    from fasttext_lib.own_data import read_own_splits

    path = tmp_path / "skewed.csv"
    path.write_text(table(SKEWED))
    splits = read_own_splits(str(path), seed=seed)
    assert Counter(splits["test"].labels) == {"positive": 2, "negative": 1, "neutral": 1}
    assert Counter(splits["train"].labels) == {"positive": 10, "negative": 2, "neutral": 1, "mixed": 1}
    assert sorted(splits["train"].texts + splits["test"].texts) == sorted(text for _, text in SKEWED)
    assert read_own_splits(str(path), seed=seed)["test"].texts == splits["test"].texts  # seeded: the same again


def test_01_says_what_it_held_out_as_the_test_split(tmp_path, s3_bucket, capsys):
    (tmp_path / "skewed.csv").write_text(table(SKEWED))
    run_01(s3_bucket, tmp_path, dataset="skewed", train_file=str(tmp_path / "skewed.csv"), seed=3)
    said = [line for line in capsys.readouterr().out.splitlines() if "held out" in line]
    assert said == [f"held out as the test split: 4 of the 18 documents of {tmp_path / 'skewed.csv'}, a seeded 20% of "
                    f"each class (seed 3; at least one of each class of 2 or more documents); in training only, "
                    f"classes of one document: mixed"], said


def test_a_file_whose_every_class_has_one_document_has_no_test_split_to_hold_out(tmp_path):
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.own_data import read_own_splits

    path = tmp_path / "three.csv"
    path.write_text(table(SKEWED[-4:-1:2] + SKEWED[-1:]))  # negative, neutral and mixed, one document each
    with pytest.raises(FastTextError, match=r"^.*three.csv has no class of 2 documents or more: none can be held out as "
                                            r"the test split \(give test_file\)$"):
        read_own_splits(str(path))


def _numbered_files(tmp_path, train_names=None, test_names=None):
    """reviews.csv (classes 1 and 2) in train/ and test/, each with ``*_names`` as its classes.txt when given."""
    numbered = [("1" if label == "negative" else "2", text) for label, text in ROWS]
    for folder, names in (("train", train_names), ("test", test_names)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "reviews.csv").write_text(table(numbered))
        if names is not None:
            (tmp_path / folder / "classes.txt").write_text(names)
    return {"train_file": str(tmp_path / "train" / "reviews.csv"), "test_file": str(tmp_path / "test" / "reviews.csv")}


@pytest.mark.parametrize("train_names", [None, "negative\npositive\n"])
def test_01_takes_the_class_names_beside_the_test_file_too(train_names, tmp_path, s3_bucket):
    """A classes.txt beside test_file only was ignored: 01 wrote the splits without the names, and 02's bundle and
    04's predictions said 1 and 2. It names the classes as one beside train_file does (the same one beside both
    files: the same names)."""
    from fasttext_lib.data import read_labeled

    files = _numbered_files(tmp_path, train_names, "negative\npositive\n")
    written = run_01(s3_bucket, tmp_path, dataset="my_reviews", **files)["written"]
    assert written["label_names"] == f"{s3_bucket}/fasttext/data/my_reviews.classes.txt"
    for split in ("train", "test"):
        assert read_labeled(written[split]).names == {"1": "negative", "2": "positive"}


def test_01_refuses_other_class_names_beside_the_test_file_than_beside_the_train_file(tmp_path, s3_bucket):
    from fasttext_lib.errors import FastTextError

    files = _numbered_files(tmp_path, "negative\npositive\n", "bad\ngood\n")
    with pytest.raises(FastTextError) as told:
        run_01(s3_bucket, tmp_path, dataset="my_reviews", **files)
    assert str(told.value) == (
        f"{tmp_path / 'train' / 'classes.txt'} (beside train_file) and {tmp_path / 'test' / 'classes.txt'} (beside "
        f"test_file) name the classes differently (class '1': 'negative' and 'bad'): make them the same, or remove "
        f"the one that is wrong")


def _reviews_then_classes(path, rows):
    """``rows`` written as a CSV with no header and the text first, the class last (a Zhang CSV's columns swapped)."""
    path.write_text("".join(f'"{text} ({i})",{label}\n' for i, (label, text) in enumerate(rows)))
    return str(path)


@pytest.mark.parametrize("with_test_file", [False, True])
def test_01_refuses_a_file_whose_columns_are_the_wrong_way_round_before_writing_anything(with_test_file, tmp_path,
                                                                                         s3_bucket):
    """A headerless CSV with the text first was prepared: every review read as a class of its own (2884 classes for
    the 2888 sentences of the sample), their "names" written to {dataset}.classes.txt, and 02 then stopped on that
    file (``classes.txt:5: name of 227 characters``), pointing at a file 01 wrote rather than at the user's CSV.
    01 refuses the data as training does (class_checks), naming the column read as the class, and writes nothing."""
    from fasttext_lib import storage
    from fasttext_lib.errors import FastTextError

    train = _reviews_then_classes(tmp_path / "train.csv", ROWS * 2)
    files = {"train_file": train}
    if with_test_file:
        files["test_file"] = _reviews_then_classes(tmp_path / "test.csv", ROWS)
    with pytest.raises(FastTextError, match=r"^training data has 40 classes for \d+ documents .*is the text in the "
                                            r"class column\? Without a header row naming it the class is the first "
                                            r"column"):
        run_01(s3_bucket, tmp_path, dataset="swapped", **files)
    for name in ("swapped.train", "swapped.test", "swapped.classes.txt"):
        assert not storage.exists(f"{s3_bucket}/fasttext/data/{name}"), name


def test_01_refuses_a_file_of_one_class(tmp_path, s3_bucket):
    """A file of one class was prepared (a fifth of it held out), and only 02's training refused it."""
    from fasttext_lib.errors import FastTextError

    (tmp_path / "one.csv").write_text(table([row for row in ROWS if row[0] == "positive"]))
    with pytest.raises(FastTextError, match=r"^training data has a single class \('positive'\)"):
        run_01(s3_bucket, tmp_path, dataset="one", train_file=str(tmp_path / "one.csv"))


def test_01_refuses_a_test_file_of_classes_the_train_file_lacks_naming_the_users_file(tmp_path, s3_bucket):
    """A test_file labelled otherwise (negative/positive) than train_file (1/2) was prepared, and 02 then stopped on
    the split 01 wrote (``s3://.../data/mix.test has label(s) 'negative' (line 1 of ...) not seen in training``), a
    file the user never made. 01 refuses it as 02's training would, naming the user's test_file, and writes
    nothing."""
    from fasttext_lib import storage
    from fasttext_lib.errors import FastTextError

    files = _numbered_files(tmp_path)
    (tmp_path / "test" / "reviews.csv").write_text(table(ROWS))  # labelled by names: no names file says what 1 is
    with pytest.raises(FastTextError) as told:
        run_01(s3_bucket, tmp_path, dataset="mix", **files)
    assert str(told.value).startswith(f"{files['test_file']} has label(s) 'negative' (line 3), 'positive' (line 2) "
                                      f"not seen in training (known: 1, 2)"), told.value
    for name in ("mix.train", "mix.test"):
        assert not storage.exists(f"{s3_bucket}/fasttext/data/{name}"), name



@pytest.mark.parametrize("how", ["same path", "a link to it"])
def test_01_refuses_the_train_file_as_its_own_test_file_in_its_check_cell(how, tmp_path, s3_bucket):
    """``-p train_file reviews.csv -p test_file reviews.csv`` was prepared as a test split of the training documents:
    02 then reported their accuracy as val_accuracy, and 04 as the model's held-out score, with no word (the
    command line warns of ``--validation`` that is the ``--train`` file; here 02 reads two objects and cannot tell).
    01's check cell refuses it before anything is read, saying how to hold out a test split instead."""
    from fasttext_lib.errors import FastTextError

    (tmp_path / "reviews.csv").write_text(table(ROWS))
    test_file = tmp_path / "reviews.csv"
    if how == "a link to it":
        os.symlink(tmp_path / "reviews.csv", tmp_path / "test.csv")
        test_file = tmp_path / "test.csv"
    with pytest.raises(FastTextError) as told:
        run_after_papermill("01_data_prep.ipynb", {"bucket": s3_bucket[len("s3://"):], "output_dir": str(tmp_path / "out"),
                                                   "dataset": "mine", "train_file": str(tmp_path / "reviews.csv"),
                                                   "test_file": str(test_file)})
    assert str(told.value) == (f"test_file {test_file} is the train_file: the test split would be the documents the "
                               f"model trains on, and 02's and 04's accuracy no held-out score; give held-out data, or "
                               f"test_file=None to hold out a seeded 20% of each class of train_file")


def test_01_takes_a_test_file_labelled_by_the_class_names_of_the_train_files_classes_txt(tmp_path, s3_bucket):
    """train_file labelled 1 and 2 with a classes.txt beside it (negative, positive), and a test_file labelled by
    those names: 01 refused it ("names 2 of the data's 4 classes ... pass --label-names", a flag no notebook has),
    though the CLI's --validation takes data so labelled (label_encoding.class_ids). 01 now writes the test split
    with the class ids, and 02 reads both splits back as one dataset and trains and scores on them."""
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.own_data import read_prepared
    from fasttext_lib.train import train

    files = _numbered_files(tmp_path, "negative\npositive\n")
    (tmp_path / "test" / "reviews.csv").write_text(table(ROWS[:8]))  # labelled by the names classes.txt gives
    written = run_01(s3_bucket, tmp_path, dataset="named_test", **files)["written"]
    train_data, test_data = (read_prepared(written[split], "named_test") for split in ("train", "test"))  # as 02 does
    assert test_data.labels == ["2" if label == "positive" else "1" for label, _ in ROWS[:8]]
    assert train_data.names == test_data.names == {"1": "negative", "2": "positive"}
    trained = train(train_data, test_data, TrainConfig(epochs=1, batch_size=8, emsize=4, progress=False))
    assert trained.history[0]["val_accuracy"] >= 0


def _cases_named_by_the_notebook(tmp_path):
    """``(01's parameters, what its one line names instead of a CLI flag)`` of mistakes that reach 01's reading."""
    numbered_from_0 = tmp_path / "zero"
    numbered_from_0.mkdir()
    (numbered_from_0 / "reviews.csv").write_text(table([("0" if l == "negative" else "1", t) for l, t in ROWS]))
    (numbered_from_0 / "classes.txt").write_text("negative\npositive\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "reviews.csv").write_text(table([("1" if l == "negative" else "2", t) for l, t in ROWS]))
    (other / "classes.txt").write_text("World\nSports\nBusiness\nSci/Tech\n")  # ag_news' beside two-class data
    (tmp_path / "plain.csv").write_text(table(ROWS))
    (tmp_path / "objects.jsonl").write_text("".join(f'{{"a": "{l}", "b": "{t}", "c": "x"}}\n' for l, t in ROWS))
    plain, objects = str(tmp_path / "plain.csv"), str(tmp_path / "objects.jsonl")
    return {
        "classes.txt numbered from 1 beside data numbered from 0": (
            dict(train_file=str(numbered_from_0 / "reviews.csv")), "id=name lines"),
        "another dataset's classes.txt": (
            dict(train_file=str(other / "reviews.csv")), f"rename it {other / 'reviews.classes.txt'}"),
        "no such label column": (dict(train_file=plain, label_column="rating"), "label_column='rating'"),
        "no such text column": (dict(train_file=plain, text_column="review"), "text_column='review'"),
        "one column as both": (dict(train_file=plain, label_column="label", text_column="label"), "label_column"),
        "no text key beside the class key": (dict(train_file=objects, label_column="a"), "text_column"),
    }


@pytest.mark.parametrize("case", ["classes.txt numbered from 1 beside data numbered from 0",
                                  "another dataset's classes.txt", "no such label column", "no such text column",
                                  "one column as both", "no text key beside the class key"])
def test_01_says_its_own_parameters_not_the_clis_flags(case, tmp_path):
    """What 01 refuses of the user's files said "--label-names ...", "--label-column rating", "name it with
    --text-column": flags of the command line, which a notebook has none of. Now its parameters, or what to do with
    the file."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.own_data import read_own_splits

    parameters, said = _cases_named_by_the_notebook(tmp_path)[case]
    with pytest.raises(FastTextError) as told:
        read_own_splits(**parameters)
    assert "--" not in str(told.value) and said in str(told.value), told.value


@pytest.mark.parametrize("asked, said", [("Drug", " (did you mean 'drug'?)"), ("drugs", " (did you mean 'drug'?)"),
                                         ("reviews", "")])
def test_02_on_a_dataset_prepared_under_another_spelling_asks_if_it_was_meant(asked, said, tmp_path, s3_bucket):
    """02 and 04 with ``-p dataset Drug`` after 01 prepared ``drug`` were told to run 01 with dataset='Drug', as if
    there were no such data: a name 01 refuses (``Sample``) gets "did you mean 'sample'?", one of the user's own got
    nothing. The datasets prepared there (one List request under data/) are offered now as 01's names are."""
    import boto3

    from fasttext_lib import storage
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path))
    for name in ("drug.train", "drug.test", "other.test", "notes.txt"):
        boto3.client("s3").put_object(Bucket=s3_bucket[len("s3://"):], Key=f"p/data/{name}", Body=b"__label__1 a\n")
    listed = []
    storage.s3_client().meta.events.register("before-call.s3.ListObjectsV2", lambda **kw: listed.append(1))
    with pytest.raises(FastTextError) as told:
        ws.prepared(asked, "train")
    assert str(told.value) == (f"no prepared train data for dataset {asked!r} at {ws.data}/{asked}.train{said}: run "
                               f"notebook 01 with dataset={asked!r} (and train_file=, your file, for your own data) and "
                               f"this bucket and prefix first")
    assert len(listed) == 1


def test_02s_did_you_mean_reads_past_the_first_thousand_entries_under_data(tmp_path, s3_bucket):
    """The names offered were those of the first 1,000 objects under data/ (one List request's answer): in a bucket
    holding more, a dataset whose files sorted past them was never offered. The List now goes on to later pages (a
    few requests at most), and a name in a folder (``exp/Drug``) is looked for in that folder only."""
    from concurrent.futures import ThreadPoolExecutor

    import boto3

    from fasttext_lib import storage
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    bucket = s3_bucket[len("s3://"):]
    client = boto3.client("s3")
    keys = [f"p/data/aa{i:04d}.test" for i in range(1001)] + ["p/data/drug.train", "p/data/exp/drug.train"]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda key: client.put_object(Bucket=bucket, Key=key, Body=b"__label__1 a\n"), keys))
    ws = Workspace(bucket, "p", str(tmp_path))
    listed = []
    storage.s3_client().meta.events.register("before-parameter-build.s3.ListObjectsV2",
                                             lambda **kw: listed.append(kw["params"]))
    for asked, meant in (("Drug", "drug"), ("exp/Drug", "exp/drug")):
        listed.clear()
        with pytest.raises(FastTextError) as told:
            ws.prepared(asked, "train")
        assert f" (did you mean {meant!r}?): run notebook 01" in str(told.value), told.value
        assert 1 <= len(listed) <= 2 and all(p["Delimiter"] == "/" for p in listed), listed
    assert {p["Prefix"] for p in listed} == {"p/data/exp/"}


@pytest.mark.parametrize("asked, meant", [("drug", "exp/drug"), ("exp/mine", "exp/sub/mine")])
def test_02s_did_you_mean_offers_a_dataset_one_folder_deeper(asked, meant, tmp_path, s3_bucket):
    """``-p dataset drug`` after 01 prepared ``exp/drug`` was offered nothing: only the folder of the name asked
    (data/) was listed. Where no name there is close, those one folder deeper are offered by their own name, from at
    most NAMES_LISTED_PAGES List requests however many folders there are (the folder's own, then one a subfolder)."""
    import boto3

    from fasttext_lib import storage
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import NAMES_LISTED_PAGES, Workspace

    bucket = s3_bucket[len("s3://"):]
    keys = ["p/data/other.train", "p/data/exp/drug.train", "p/data/exp/sub/mine.train", "p/data/runs/drug.train",
            *(f"p/data/f{i:02d}/x.train" for i in range(12))]  # (runs/ sorts after more folders than are listed)
    for key in keys:
        boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=b"__label__1 a\n")
    ws = Workspace(bucket, "p", str(tmp_path))
    listed = []
    storage.s3_client().meta.events.register("before-parameter-build.s3.ListObjectsV2",
                                             lambda **kw: listed.append(kw["params"]))
    with pytest.raises(FastTextError) as told:
        ws.prepared(asked, "train")
    assert f" (did you mean {meant!r}?): run notebook 01" in str(told.value), told.value
    assert 1 < len(listed) <= NAMES_LISTED_PAGES and all(p["Delimiter"] == "/" for p in listed), listed


def test_02s_did_you_mean_offers_a_close_name_and_one_a_folder_deeper_closest_first(tmp_path, s3_bucket):
    """``drug`` asked, ``drugs`` and ``exp/drug`` prepared: only ``drugs`` was offered, the folder deeper looked into
    only where no name in the folder asked was close. Both now, closest first: ``exp/drug`` is the name asked. The
    name itself in other capitals is still the one offered alone (no folder deeper listed)."""
    import boto3

    from fasttext_lib.errors import FastTextError
    from fasttext_lib.workspace import Workspace

    bucket = s3_bucket[len("s3://"):]
    for key in ("p/data/drugs.train", "p/data/exp/drug.train", "p/data/Drug2.train"):
        boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=b"__label__1 a\n")
    ws = Workspace(bucket, "p", str(tmp_path))
    for asked, meant in (("drug", "'exp/drug' or 'drugs'"), ("drugs2", "'drugs' or 'exp/drug'"), ("DRUGS", "'drugs'")):
        with pytest.raises(FastTextError) as told:
            ws.prepared(asked, "train")
        assert f" (did you mean {meant}?): run notebook 01" in str(told.value), (asked, told.value)


_HEADERLESS_BY_WORDS = {  # a file detection cannot tell that --format would read, and what 01 says to do instead
    "a CSV whose capitalised classes have a space after the comma": (
        "reviews.csv", lambda label, text: f"{label.capitalize()}, {text.replace(',', '')}\n",
        "--format csv", "is read once its first line is a header row naming its columns"),
    "a TSV with the text first": (
        "reviews.tsv", lambda label, text: f"{text}\t{label}\n",
        "--format tsv", "add a header row that names the class and text columns"),
}


@pytest.mark.parametrize("case", list(_HEADERLESS_BY_WORDS))
def test_01_says_to_add_a_header_row_where_the_cli_says_to_give_a_format(case, tmp_path):
    """A headerless file whose format detection cannot tell (classes written as words) was told to 01's user "is read
    with --format csv" / "give --format tsv": 01 has no format parameter and reads every file as detected. It now
    says what such a user can do (a header row naming the columns, after which the file is read); the command line
    still names its flag."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.own_data import read_own_splits

    name, line, flag, said = _HEADERLESS_BY_WORDS[case]
    path = tmp_path / name
    path.write_text("".join(line(label, text) for label, text in ROWS))
    with pytest.raises(FastTextError) as told:
        read_own_splits(str(path))
    assert "--" not in str(told.value) and said in str(told.value), told.value
    cli = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert cli.returncode == 2 and flag in cli.stderr, cli.stderr
    # as told: with a header row naming the columns, 01 reads the file
    path.write_text(("label,text\n" if name.endswith(".csv") else "text\tlabel\n") + path.read_text())
    assert sorted(set(read_own_splits(str(path))["train"].labels)) in (["Negative", "Positive"], ["negative", "positive"])


def _ids_first(path):  # reviews to label with their ids first, where the class goes (review_id,text)
    path.write_text("review_id,text\n" + "".join(f"rv{i:05d}x,the food was good number {i} and the staff kind\n"
                                                 for i in range(60)))


def _jsonl(rows):
    def write(path):
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return write


# Tables whose columns must be named (in 01: its parameters), each with what the command line names instead
COLUMNS_TO_NAME = {
    "ids first under a header of text columns": ("to_label.csv", _ids_first, "name the class column: ",
                                                 "--label-column NAME"),
    "JSON Lines with a class key and no text key": (
        "short.jsonl", _jsonl([{"stars": 1 + i % 2, "n": i % 5, "m": "q"} for i in range(60)]),
        "beside the class key 'stars'; name the text key: ", "--text-column"),
    "JSON Lines with a number key among the text keys": (
        "titled.jsonl", _jsonl([{"stars": 1 + i % 2, "title": 1000 + 3 * i, "text": f"great food {i}"}
                                for i in range(60)]), "; name the text keys: ", "--text-column"),
}


@pytest.mark.parametrize("case", list(COLUMNS_TO_NAME))
def test_01_asks_for_columns_the_header_does_not_tell_as_its_parameters_not_the_clis_flags(case, tmp_path):
    """A header whose first column holds ids ("name the class column: --label-column NAME"), JSON Lines objects with
    no text key training knows ("name it with --text-column") or a number key among the text keys ("Name the text
    keys with --text-column") were refused to 01's user with the command line's flags: they are ColumnsToName now,
    asked as 01's parameters. The command line keeps its flags."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.own_data import read_own_splits

    name, write, asked, flag = COLUMNS_TO_NAME[case]
    path = tmp_path / name
    write(path)
    with pytest.raises(FastTextError) as told:
        read_own_splits(str(path))
    said = str(told.value)
    assert "--" not in said and asked + "label_column='NAME' and text_column='NAME' (this notebook's parameters)" \
        in said, said
    cli = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert cli.returncode == 2 and flag in cli.stderr, cli.stderr


@pytest.mark.parametrize("case", ["extra columns", "pandas index"])
def test_01_says_how_it_read_the_users_table_in_its_own_parameters(case, tmp_path, capsys):
    """01 read a Kaggle table (Amazon Fine Food's Id, ProductId, Score, Summary, Text) or a pandas index column
    without a word: which columns were the class and the text, and what was left out, the command line says on stderr,
    and 01 said nothing (its head(5) shows the text joined, not where from). Now the same notes, in the notebook's
    terms: its text_column parameter, not the command line's --text-column flag."""
    from fasttext_lib.own_data import read_own_splits

    path = tmp_path / "reviews.csv"
    if case == "extra columns":
        path.write_text("Id,ProductId,Score,Summary,Text\n" + "".join(
            f'{i},B00{i},{1 + 4 * (label == "positive")},"{text[:10]}","{text}"\n' for i, (label, text) in enumerate(ROWS)))
        told = (f"{path}: the class is column 'Score', the text 'Summary', 'Text'; left out: 'Id', 'ProductId' "
                f"(text_column='NAME' reads a column as text)")
    else:
        path.write_text(",label,text\n" + "".join(f'{i},{label},"{text}"\n' for i, (label, text) in enumerate(ROWS)))
        told = (f"{path}: its first column (unnamed in the header, row numbers below it) is a row index (pandas' "
                f"df.to_csv() without index=False, R's write.csv row names): left out; the rest is read as the columns "
                f"label,text")
    read_own_splits(str(path))
    assert capsys.readouterr().err.splitlines() == [told]
