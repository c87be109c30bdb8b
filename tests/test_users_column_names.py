"""The pandas lines of the errors and warnings about a user's labeled data name the user's own columns (a DataFrame's
``df['sentiment']``, a header's, a JSON Lines key), not ``df['label']`` / ``df['text']`` whatever they were called:
pasted, those raised KeyError, or made a new column and fixed nothing. The column name travels with the data as read
(``LabeledTexts.class_column``), not parsed back out of a message."""
import numpy as np
import pandas as pd
import pytest

from conftest import cli_in_process
from fasttext_lib.class_checks import warn_classes_cased_alike
from fasttext_lib.config import TrainConfig
from fasttext_lib.data import LabeledTexts, read_counted, read_labeled
from fasttext_lib.errors import FastTextError
from fasttext_lib.predict import Predictor
from fasttext_lib.sample import load_sample
from fasttext_lib.train import train

CONFIG = TrainConfig(epochs=1, progress=False, ctx="cpu")


@pytest.fixture(scope="module")
def reviews():
    """The built-in sample's real sentences as a DataFrame whose columns are named as a user's often are."""
    data = load_sample("train").head(300)
    return pd.DataFrame({"sentiment": list(data.labels), "review": list(data.texts)})


@pytest.fixture(scope="module")
def predictor(reviews):
    model = train(LabeledTexts(reviews["sentiment"], reviews["review"]), None, CONFIG)
    return Predictor(model.model, model.featurizer, model.labels, {})


def test_evaluates_case_hint_names_the_dataframes_class_column(reviews, predictor):
    frame = reviews.assign(sentiment=reviews["sentiment"].str.capitalize())
    with pytest.raises(FastTextError) as caught:
        predictor.evaluate(LabeledTexts(frame["sentiment"], frame["review"]))
    said = str(caught.value)
    assert said.endswith("(pandas: df['sentiment'] = df['sentiment'].str.lower())"), said


@pytest.mark.parametrize("name, content, column", [
    ("e.csv", "review,sentiment\ngood,Positive\nbad,negative\n", "sentiment"),
    ("e.tsv", "Stars\tbody\nPositive\tgood\nnegative\tbad\n", "Stars"),
    ("e.jsonl", '{"body": "good", "stars": "Positive"}\n{"body": "bad", "stars": "negative"}\n', "stars"),
    ("e.txt", "__label__Positive good\n__label__negative bad\n", None),  # (no column: no pandas line)
])
def test_the_cli_evaluates_case_hint_names_the_files_class_column(tmp_path, reviews, name, content, column):
    """The CLI's evaluate of a file said df['label'] whatever the file's class column, and for a fastText-format file,
    which has none, too."""
    path = tmp_path / "t.csv"
    reviews.to_csv(path, index=False)
    r = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert r.returncode == 0, r.stderr
    (tmp_path / name).write_text(content)
    r = cli_in_process("evaluate", "--model", tmp_path / "m", "--data", tmp_path / name)
    said = r.stderr.strip().splitlines()[-1]
    assert r.returncode != 0 and "('Positive' for positive): write them as the training data did" in said, r.stderr
    if column is None:
        assert said.endswith("write them as the training data did") and "df[" not in said, said
    else:
        assert said.endswith(f"(pandas: df[{column!r}] = df[{column!r}].str.lower())"), said


def test_the_cased_classes_warning_names_the_dataframes_class_column(reviews, capsys):
    labels = reviews["sentiment"].where(reviews.index % 5 != 0, reviews["sentiment"].str.upper())
    data = LabeledTexts(labels, reviews["review"])
    warn_classes_cased_alike(sorted(set(labels)), data)
    said = capsys.readouterr().err
    assert said.strip().endswith("(pandas: df['sentiment'] = df['sentiment'].str.lower())"), said


@pytest.mark.parametrize("change, message", [
    (lambda f: f.assign(sentiment=f["sentiment"].where(f.index != 3)),
     "train_data.labels[3] is nan (float): a document without a class; drop such rows first "
     "(df.dropna(subset=['sentiment']))"),
    (lambda f: f.assign(sentiment=f["sentiment"].where(f.index != 3, " ")),
     "train_data.labels[3] is ' ' (str): a document without a class; drop such rows first "
     "(df.dropna(subset=['sentiment']), or df[df['sentiment'].str.strip() != ''])"),
    (lambda f: f.assign(sentiment=f["sentiment"].where(f.index != 0, 2.5)),
     "train_data.labels[0] is 2.5 (float), not a str: write the classes as the data does, e.g. "
     "df['sentiment'].astype(str)"),
    (lambda f: f.assign(review=f["review"].where(f.index != 5)),
     "train_data.texts[5] is nan (float), not a str: a missing value? fill it first (df['review'].fillna(''))"),
])
def test_a_dataframes_refusals_name_its_own_columns(reviews, change, message):
    changed = change(reviews)
    with pytest.raises(FastTextError) as caught:
        train(LabeledTexts(changed["sentiment"], changed["review"]), None, CONFIG)
    assert str(caught.value) == message


def test_a_missing_review_given_to_predict_names_the_series_it_came_from(reviews, predictor):
    texts = reviews["review"].where(reviews.index != 2)
    with pytest.raises(FastTextError) as caught:
        predictor.predict(texts)
    assert str(caught.value) == "texts[2] is nan (float), not a str: a missing value? fill it first (df['review']" \
                                ".fillna(''))"


@pytest.mark.parametrize("reader", [read_labeled, read_counted])
@pytest.mark.parametrize("name, content, column", [
    ("t.csv", "sentiment,review\nPositive,great\npositive,fine\nnegative,bad\n", "sentiment"),
    ("t.csv", "review,label\ngreat,Positive\nfine,positive\nbad,negative\n", "label"),
    ("t.jsonl", '{"stars": "Positive", "body": "great"}\n{"stars": "positive", "body": "fine"}\n', "stars"),
    ("t.txt", "__label__Positive great\n__label__positive fine\n", None),
    ("t.csv", "Positive,great\npositive,fine\nnegative,bad\n", None),  # (no header: no name)
])
def test_the_readers_keep_the_name_of_the_class_column(tmp_path, reader, name, content, column):
    path = tmp_path / name
    path.write_text(content)
    assert reader(str(path), fmt="csv" if content.startswith("Positive") else "auto").class_column == column


def test_files_whose_class_columns_are_named_alike_keep_the_name_and_others_none(tmp_path):
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    a.write_text("sentiment,review\npositive,great\nnegative,bad\n")
    b.write_text("review,sentiment\ngreat,positive\nbad,negative\n")
    c.write_text("label,review\npositive,great\nnegative,bad\n")
    assert read_labeled([str(a), str(b)]).class_column == "sentiment"
    assert read_labeled([str(a), str(c)]).class_column is None


def test_a_dataframe_given_to_predict_is_refused_naming_its_text_column(reviews, predictor):
    with pytest.raises(FastTextError) as caught:
        predictor.predict(reviews)
    assert str(caught.value).endswith("pass its text column (df['review'])")


@pytest.mark.parametrize("reader", [read_labeled, read_counted])
@pytest.mark.parametrize("content, line, column", [
    ("sentiment,review\npositive,great\n,cold soup\n", 3, "sentiment"),  # (the class first: no layout)
    ("review,stars\ngreat,5\ncold soup,\n", 3, "stars"),
    ("positive,great\n,cold soup\n", 2, "label"),  # (no header: pandas reads it with names=['label', 'text'])
])
def test_an_empty_class_field_names_the_files_own_class_column(tmp_path, reader, content, line, column):
    """A CSV row without a class was told df.dropna(subset=['label']) whatever its header called the class column:
    pasted, a KeyError."""
    path = tmp_path / "t.csv"
    path.write_text(content)
    with pytest.raises(FastTextError) as caught:
        reader(str(path), fmt="csv" if content.startswith("positive") else "auto")
    assert str(caught.value) == (f"{path}:{line}: CSV row has an empty class column: a document without a class; drop such "
                                 f"rows first (pandas: df.dropna(subset=[{column!r}]).to_csv(new_path, index=False))")


def test_a_missing_text_among_evaluate_examples_pairs_names_the_frames_text_column(reviews, predictor):
    """evaluate_examples of a DataFrame's rows (itertuples: pairs that carry their columns' names) with a missing review
    was told df['text'].fillna(''): pasted, a KeyError. Pairs without names (zip of two Series) still say 'text'."""
    frame = reviews.assign(review=reviews["review"].where(reviews.index != 4))
    with pytest.raises(FastTextError) as caught:
        predictor.evaluate_examples(frame[["sentiment", "review"]].itertuples(index=False))
    assert str(caught.value).endswith("a missing text? fill it first (df['review'].fillna(''))"), str(caught.value)
    with pytest.raises(FastTextError) as caught:
        predictor.evaluate_examples(zip(frame["sentiment"].tolist(), frame["review"].tolist()))
    assert str(caught.value).endswith("a missing text? fill it first (df['text'].fillna(''))"), str(caught.value)


def test_a_dataframe_given_as_evaluate_examples_is_refused_naming_its_columns(reviews, predictor):
    """Iterated, a DataFrame is its column names: it was "examples[0] is 'sentiment' (str), not a (label, text) pair"."""
    with pytest.raises(FastTextError) as caught:
        predictor.evaluate_examples(reviews)
    assert str(caught.value).endswith("pass its rows as pairs (zip(df['sentiment'], df['review']))"), str(caught.value)


@pytest.mark.parametrize("content", [
    "label ,text\npositive,great\n,cold soup\n",  # (pandas names the class column 'label ')
    " sentiment, review\npositive, great\n, cold soup\n",
])
def test_the_pandas_lines_name_a_headers_columns_as_pandas_reads_them(tmp_path, content):
    """A header with spaces around its names (typed by hand): the text column's pandas line named it as pandas reads
    the file (' text'), the class column's stripped ('label', where pandas has 'label '): pasted, a KeyError. Both
    are named the same way now, as pd.read_csv(path) names them."""
    import ast
    import re

    path = tmp_path / "t.csv"
    path.write_text(content)
    with pytest.raises(FastTextError) as caught:
        read_labeled(str(path))
    column = ast.literal_eval(re.search(r"subset=\[('[^']*')\]", str(caught.value)).group(1))
    assert column in pd.read_csv(path).columns, str(caught.value)
    path.write_text(content.replace(",cold soup", "negative,").replace(", cold soup", "negative,"))
    said = []
    read_labeled(str(path), note=said.append)
    column = ast.literal_eval(re.search(r"df\[df\[('[^']*')\]", said[-1]).group(1))
    assert column in pd.read_csv(path).columns, said


@pytest.mark.parametrize("unnamed", [",,,", ",Unnamed: 2,Unnamed: 3,Unnamed: 4"])
def test_the_label_column_alone_reads_a_texts_spilled_columns_as_its_text_too(tmp_path, unnamed):
    """The SMS Spam Collection's shape, ``v1,v2,,,``: a message's commas spill into the columns without a name after
    it. ``--label-column v1`` alone found the text column ``v2`` and left the spilled parts out (said on stderr as
    left out: '', '', ''), where ``label,text,,,`` and predict read every column after the class as text. Named only
    by the class, the columns without a name after the text are its text too; ``--text-column v2`` still reads v2
    alone, as named."""
    from fasttext_lib.columns import csv_columns

    rows = ["ham,free entry,,,", "spam,call now, win a prize, today,", "ham,see you later,,,", "spam,txt stop,,,"] * 3
    path = tmp_path / "spam.csv"
    path.write_text("\r\n".join([f"v1,v2{unnamed}"] + rows) + "\r\n")
    notes = []
    data = read_labeled(str(path), fmt=csv_columns("auto", "v1", None), note=notes.append)
    labeled = tmp_path / "labeled.csv"
    labeled.write_text("\r\n".join(["label,text,,,"] + rows) + "\r\n")
    assert data.texts == read_labeled(str(labeled)).texts and data.texts[1] == "call now  win a prize  today"
    assert not any("left out" in note for note in notes), notes
    named = read_labeled(str(path), fmt=csv_columns("auto", "v1", ["v2"]))
    assert named.texts[1] == "call now"


def test_the_case_hint_of_evaluate_examples_rows_names_the_frames_class_column(reviews, predictor):
    """evaluate_examples of a DataFrame's rows (itertuples: pairs that carry their columns' names) whose classes are
    written in another case was told df['label'] = df['label'].str.lower(): pasted, a KeyError, or a new column that
    fixed nothing. The rows' own class column is named now; pairs without names (a zip of two Series) still say
    'label'."""
    frame = reviews.assign(sentiment=reviews["sentiment"].str.capitalize())
    with pytest.raises(FastTextError) as caught:
        predictor.evaluate_examples(frame[["sentiment", "review"]].itertuples(index=False))
    said = str(caught.value)
    assert said.endswith("(pandas: df['sentiment'] = df['sentiment'].str.lower())"), said
    with pytest.raises(FastTextError) as caught:
        predictor.evaluate_examples(zip(frame["sentiment"].tolist(), frame["review"].tolist()))
    said = str(caught.value)
    assert said.endswith("(pandas: df['label'] = df['label'].str.lower())"), said


def test_a_dataframe_given_as_the_data_itself_is_refused_naming_its_columns(reviews, predictor):
    """predictor.evaluate(df) and train(df, ...): the refusal said LabeledTexts(df["label"], df["text"]) of a frame
    whose columns are sentiment and review: pasted, a KeyError. It names the frame's own columns now."""
    for call, what in [(lambda: predictor.evaluate(reviews), "data"),
                       (lambda: train(reviews, None, CONFIG), "train_data")]:
        with pytest.raises(FastTextError) as caught:
            call()
        said = str(caught.value)
        assert said.startswith(f"{what} must be LabeledTexts") and \
            'LabeledTexts(df["sentiment"], df["review"])' in said, said


def test_the_case_hint_of_rows_whose_class_column_is_no_identifier_names_no_renamed_field(reviews, predictor):
    """itertuples() renames a column that is no Python name to its position (AG News on Kaggle: "Class Index" is
    the row's field _0): the hint said df['_0'] = df['_0'].str.lower(), pasted a KeyError. Such a field names no
    column: the hint says 'label', as for pairs without names."""
    frame = pd.DataFrame({"Class Index": reviews["sentiment"].str.capitalize(), "Description": reviews["review"]})
    with pytest.raises(FastTextError) as caught:
        predictor.evaluate_examples(frame.itertuples(index=False))
    said = str(caught.value)
    assert said.endswith("(pandas: df['label'] = df['label'].str.lower())"), said


def test_a_dataframe_refusal_stays_one_line_whatever_its_column_names_hold(reviews, predictor):
    """A class column read from a spreadsheet's header cell with a line break after its name ("Sentiment" then
    Alt+Enter): the refusal wrote the name as it is inside df["..."], so its line break split the error line and the
    line to paste was no Python. It is written as a string literal, escapes and all."""
    frame = reviews.rename(columns={"sentiment": "Sentiment\n"})
    with pytest.raises(FastTextError) as caught:
        predictor.evaluate(frame)
    said = str(caught.value)
    assert "\n" not in said and 'LabeledTexts(df["Sentiment\\n"], df["review"])' in said, said


def _headerless_frames():
    """Frames whose column names are no header's: pd.read_csv(path, header=None) of a real file (0, 1), Zhang et al.'s
    class, title, body (0, 1, 2), a MultiIndex, names that two columns share."""
    path = "/work/shared/data/real/amazon_snippets_train.csv"
    headerless = pd.read_csv(path, header=None, nrows=300)
    three = headerless.assign(body=headerless[1]).set_axis([0, 1, 2], axis=1)
    multi = headerless.set_axis(pd.MultiIndex.from_tuples([("review", "label"), ("review", "text")]), axis=1)
    duplicated = headerless.set_axis(["text", "text"], axis=1)
    return {"headerless": headerless, "three": three, "multi": multi, "duplicated": duplicated}


@pytest.mark.parametrize("kind", ["headerless", "three", "multi", "duplicated"])
def test_a_dataframe_refusal_for_columns_named_by_no_header_pastes_without_an_error(predictor, kind):
    """A frame read with header=None (columns 0 and 1) was told LabeledTexts(df["label"], df["text"]) and
    zip(df['label'], df['text']): pasted, a KeyError. Its own columns are named now (df[0], df[1]); where no df[...]
    names one column (a MultiIndex; a name two columns share, whose df[...] is a frame of both) the refusal says in
    words to pass the two columns, and gives no code."""
    import re

    df = _headerless_frames()[kind]
    calls = [lambda: predictor.evaluate(df), lambda: train(df, None, CONFIG), lambda: predictor.evaluate_examples(df)]
    for call in calls:
        with pytest.raises(FastTextError) as caught:
            call()
        said = str(caught.value)
        pasted = re.findall(r"df\[[^\]]*\]", said)
        if kind == "headerless":
            assert pasted[:2] == ["df[0]", "df[1]"], said
            assert all(isinstance(eval(expression, {"df": df}), pd.Series) for expression in pasted), said
        elif kind == "three":  # (its title and body joined: test_a_headerless_zhang_frame_is_told_to_join_...)
            assert pasted[0] == "df[0]" and "df[[1, 2]]" in said, said
        else:
            assert pasted == [] and "its class column and its text column, each a Series" in said, said
    with pytest.raises(FastTextError) as caught:
        predictor.predict(df)  # (its text column alone)
    said = str(caught.value)
    pasted = re.findall(r"df\[[^\]]*\]", said)
    if kind == "headerless":
        assert pasted == ["df[1]"] and isinstance(eval(pasted[0], {"df": df}), pd.Series), said
    elif kind == "three":
        assert "df[[1, 2]]" in said, said
    else:
        assert pasted == [] and said.endswith("pass its text column, a Series"), said


@pytest.mark.parametrize("make", [lambda texts: pd.DataFrame({0: texts}), lambda texts: pd.DataFrame({"review": texts}),
                                  lambda texts: pd.Series(texts).to_frame()], ids=["header=None", "named", "to_frame"])
def test_predict_of_a_frame_of_one_column_predicts_that_column(reviews, predictor, make):
    """``pd.read_csv(path, header=None)`` of a file of one review a line (its one column named 0) was refused with
    "pass its text column, a Series": the frame's only column is its text. Predicted as that column is."""
    texts = list(reviews["review"][:20])
    frame = make(texts)
    expected = predictor.predict(texts)
    assert predictor.predict(frame) == expected
    assert predictor.predict_proba(frame).tolist() == predictor.predict_proba(texts).tolist()
    assert predictor.predict_top(frame, k=2) == predictor.predict_top(texts, k=2)


def test_predict_of_a_numpy_array_of_one_column_predicts_that_column(reviews, predictor):
    """``df[["review"]].values`` (shape (n, 1)) was refused as ``texts[0] is array([...]) (ndarray), not a str``; it is
    read as the frame of one column is. Any other shape is one line saying what to pass (a 0-d array was "got
    ndarray")."""
    texts = list(reviews["review"][:20])
    column = reviews[["review"]][:20].values
    assert column.shape == (20, 1)
    assert predictor.predict(column) == predictor.predict(texts)
    assert predictor.predict_top(column, k=2) == predictor.predict_top(texts, k=2)
    for given, said in ((reviews[["sentiment", "review"]].values, r"\(\d+, 2\): pass its texts as one list"),
                        (np.array([texts]), r"\(1, 20\): pass its texts as one list"),
                        (np.array("great"), r"\(\); for one review pass \[text\]")):
        with pytest.raises(FastTextError, match=r"^texts must be a list of review texts, got a numpy array of shape "
                                                + said):
            predictor.predict(given)


def test_a_headerless_zhang_frame_is_told_to_join_title_and_body_as_training_reads_them(tmp_path, predictor):
    """Zhang et al.'s class, title, body read with header=None (columns 0, 1, 2): the refusal said df[1] (the title
    alone) for predict, and LabeledTexts(df[0], df[1]) for training, dropping every body. It names the title and body
    joined as a training file of them is read (a space between, a literal \\n a space; an empty title none), and the
    code pasted gives the texts read_labeled reads."""
    import re

    path = tmp_path / "zhang.csv"
    path.write_text('"2","Great","the food was great\\nand cheap"\n"1","","cold soup, rude staff"\n'
                    '"2","Lovely place","lovely"\n', encoding="utf-8")
    df = pd.read_csv(path, header=None)
    as_read = read_labeled(str(path))
    for call, shape in ((lambda: predictor.predict(df), r"pass its text columns joined as training reads them \((.*)\)$"),
                        (lambda: train(df, None, CONFIG), r"LabeledTexts\(df\[0\], (.*)\) for a DataFrame's columns"),
                        (lambda: predictor.evaluate_examples(df), r"pass its rows as pairs \(zip\(df\[0\], (.*)\)\)$")):
        with pytest.raises(FastTextError) as caught:
            call()
        said = str(caught.value)
        pasted = re.search(shape, said)
        assert pasted, said
        joined = eval(pasted[1], {"df": df})
        assert [" ".join(t.split()) for t in joined] == [" ".join(t.split()) for t in as_read.texts], said
        assert predictor.predict(joined) == predictor.predict(as_read.texts)
