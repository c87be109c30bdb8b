"""Files as tools export them (pandas, Excel, Hugging Face datasets), made of the shared real English reviews: each is
read right (every document, its class, its text) or refused in one line that says what to do."""
import csv
import gzip
import json
import os

import pandas as pd
import pytest

from conftest import cli_in_process
from fasttext_lib.data import read_labeled
from fasttext_lib.errors import FastTextError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL = os.path.join(os.environ.get("FASTTEXT_LIB_SHARED") or os.path.join(ROOT, "..", "shared"), "data", "real")


@pytest.fixture(scope="module")
def reviews():
    """The first 200 Amazon snippets as a DataFrame of ``sentiment`` (negative, positive) and ``review``."""
    raw = pd.read_csv(os.path.join(REAL, "amazon_snippets_train.csv"), header=None, names=["label", "text"],
                      dtype=str, keep_default_na=False).head(200)
    return pd.DataFrame({"sentiment": raw.label.map({"1": "negative", "2": "positive"}), "review": raw.text})


def _model(tmp_path, frame):
    """A bundle trained (tiny) on ``frame``, its classes negative and positive."""
    path = tmp_path / "train.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "model"
    r = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--emsize", "4", "--no-progress")
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("parts", [2, 40])  # halves; parts of 5 rows, the second header inside the look-ahead
@pytest.mark.parametrize("write", [
    lambda part, first: part.to_csv(index=False),                                          # pandas
    lambda part, first: ("\ufeff" + part.to_csv(index=False, lineterminator="\r\n")),      # Excel's CSV UTF-8
    lambda part, first: part.to_csv(sep="\t", index=False),                                # TSV
    lambda part, first: part.to_csv(),                                                     # pandas' index column
    lambda part, first: part[["review", "sentiment"]].to_csv(index=False),                 # the class last
    lambda part, first: "\ufeffsep=,\r\n" + part.to_csv(index=False, lineterminator="\r\n"),  # Excel's sep= line
    lambda part, first: "sep=\t\n" + part.to_csv(sep="\t", index=False),
], ids=["pandas", "excel", "tsv", "index", "class-last", "excel-sep", "tsv-sep"])
def test_exports_joined_with_their_headers_read_each_review_once_and_no_header_as_a_document(tmp_path, reviews, parts,
                                                                                          write):
    """``cat part1.csv part2.csv``: the second header row was a document, its class ``sentiment`` (a third class of
    one document trained on without a word), and predict answered it as a review."""
    size = len(reviews) // parts
    path = tmp_path / "joined.csv"
    path.write_bytes("".join(write(reviews[i:i + size], i == 0) for i in range(0, len(reviews), size)).encode())
    notes = []
    data = read_labeled(str(path), note=notes.append)
    assert data.labels == list(reviews.sentiment) and data.texts == list(reviews.review)
    said = [note for note in notes if "repeats the header row" in note]
    tsv = "\t" in path.read_text()[:200]  # (the header as the file writes it: a TSV's said with <TAB>, not commas)
    assert said and ("sentiment<TAB>review" in said[0] if tsv else "<TAB>" not in said[0]), notes
    model = _model(tmp_path, reviews)
    r = cli_in_process("predict", "--model", model, "--input", path)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == len(reviews), r.stderr
    r = cli_in_process("evaluate", "--model", model, "--data", path)
    assert r.returncode == 0 and json.loads(r.stdout.splitlines()[-1])["n"] == len(reviews), r.stderr


@pytest.mark.parametrize("parts", [2, 40])  # halves; parts of 5 rows, the second header inside the look-ahead
@pytest.mark.parametrize("sep", [",", "\t"])
def test_a_header_repeated_in_other_capitals_or_spacing_is_skipped_as_the_header(tmp_path, reviews, parts, sep):
    """Exports joined from tools that capitalize differently (``sentiment,review`` then ``Sentiment,Review``): the
    repeat was skipped only in the first header's capitals; in others it was a document of class ``Sentiment``
    (trained on, answered by predict)."""
    size = len(reviews) // parts
    spellings = ["sentiment{0}review", "Sentiment{0}Review", "SENTIMENT {0} review", "\ufeffSentiment{0}REVIEW"]
    path = tmp_path / "joined.csv"
    path.write_bytes("".join(
        spellings[n % len(spellings)].format(sep) + "\n" + reviews[i:i + size].to_csv(sep=sep, index=False, header=False)
        for n, i in enumerate(range(0, len(reviews), size))).encode())
    notes = []
    data = read_labeled(str(path), note=notes.append)
    assert data.labels == list(reviews.sentiment) and data.texts == list(reviews.review)
    assert [note for note in notes if "repeats the header row" in note], notes
    model = _model(tmp_path, reviews)
    r = cli_in_process("predict", "--model", model, "--input", path)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == len(reviews), r.stderr
    r = cli_in_process("evaluate", "--model", model, "--data", path)
    assert r.returncode == 0 and json.loads(r.stdout.splitlines()[-1])["n"] == len(reviews), r.stderr


def test_a_row_that_starts_as_the_header_but_differs_after_is_a_document(tmp_path):
    """A repeat matches the header in every field (in any capitals): a row whose class is the class column's name
    and whose text is a review is read as the document it is."""
    path = tmp_path / "d.csv"
    path.write_text("label,text\npositive,great food\nnegative,cold soup\nLabel,Text of a review\n"
                    "label,text\npositive,fine\n")
    data = read_labeled(str(path))
    assert data.labels == ["positive", "negative", "Label", "positive"]
    assert data.texts == ["great food", "cold soup", "Text of a review", "fine"]


def test_a_zhang_file_whose_first_review_occurs_again_keeps_every_copy(tmp_path):
    """No header, no repeat skipped: the first row is a document, and so is each row equal to it."""
    path = tmp_path / "dup.csv"
    path.write_text('"2","great food"\n"1","cold soup"\n"2","great food"\n"1","slow service"\n"2","great food"\n')
    data = read_labeled(str(path))
    assert data.labels == ["2", "1", "2", "1", "2"] and data.texts.count("great food") == 3


@pytest.mark.parametrize("write", [
    lambda frame, path: frame.to_json(path),                    # the default, orient="columns"
    lambda frame, path: frame.to_json(path, orient="index"),
    lambda frame, path: frame.to_json(path, orient="split"),
    lambda frame, path: frame.to_json(path, orient="table"),
    lambda frame, path: frame.review.to_json(path),             # a Series
], ids=["columns", "index", "split", "table", "series"])
def test_a_whole_table_pandas_wrote_as_one_json_object_is_refused_with_the_conversion_that_reads_it(tmp_path, reviews,
                                                                                                  write):
    """``df.to_json(path)``'s one object was read as JSON Lines of one document: training refused it as one class in a
    line that held the whole class column, and predict answered every review as one."""
    path = tmp_path / "reviews.json"
    write(reviews, str(path))
    with pytest.raises(FastTextError, match="one JSON object holding a whole table") as refused:
        read_labeled(str(path))
    model = _model(tmp_path, reviews)
    for command in (["train", "--train", path, "--output", tmp_path / "out"], ["predict", "--model", model, "--input", path]):
        r = cli_in_process(*command)
        errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
        assert r.returncode == 2 and r.stdout == "" and len(errors) == 1, r.stderr
        assert "whole table" in errors[0] and len(errors[0]) < 400, errors[0]
        assert errors[0].endswith("or give --format text to answer each line as it is") == (command[0] == "predict")
    assert not (tmp_path / "out").exists()
    # the conversion the line gives reads every review
    conversion = str(refused.value).split("write it as JSON Lines: ", 1)[1]
    new_path = str(tmp_path / "reviews.jsonl")
    eval(conversion, {"pd": pd, "path": str(path), "new_path": new_path})
    r = cli_in_process("predict", "--model", model, "--input", new_path)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == len(reviews), r.stderr
    if "typ='series'" not in conversion:  # (a Series has no classes)
        data = read_labeled(new_path)
        assert data.labels == list(reviews.sentiment) and data.texts == list(reviews.review)


def test_json_lines_of_one_record_are_read_as_before(tmp_path):
    """One object a line, nested values and all (Amazon's ``style``), however few lines: no whole table."""
    path = tmp_path / "one.jsonl"
    path.write_text('{"overall": 5.0, "style": {"Format:": " Hardcover"}, "reviewText": "a great read"}\n')
    data = read_labeled(str(path))
    assert data.labels == ["5"] and data.texts == ["a great read"]


@pytest.mark.parametrize("names", ['["neg", "pos"]\n', '{"0": "neg", "1": "pos"}\n'], ids=["ClassLabel-names", "id2label"])
def test_a_hugging_face_export_with_its_class_names_as_json_is_named_as_the_dataset_numbers_them(tmp_path, reviews,
                                                                                                 names):
    """``ds.to_json(path)`` (``label`` 0/1, ``text``) beside ``json.dump(ds.features["label"].names, f)``: the JSON list
    was read as one classes.txt line, class 1 named ``["neg", "pos"]`` and class 0 unnamed."""
    path = tmp_path / "train.jsonl"
    pd.DataFrame({"text": reviews.review, "label": (reviews.sentiment == "positive").astype(int)}).to_json(
        path, orient="records", lines=True)
    (tmp_path / "names.json").write_text(names)
    out = tmp_path / "model"
    r = cli_in_process("train", "--train", path, "--output", out, "--label-names", tmp_path / "names.json",
                       "--epochs", "1", "--emsize", "4", "--no-progress")
    assert r.returncode == 0, r.stderr
    config = json.loads((out / "config.json").read_text())
    assert config["labels"] == ["0", "1"] and config["label_names"] == {"0": "neg", "1": "pos"}
    r = cli_in_process("evaluate", "--model", out, "--data", path)
    assert r.returncode == 0 and json.loads(r.stdout.splitlines()[-1])["n"] == len(reviews), r.stderr
    # numbered from 0, a list does not fit classes numbered from 1 (Zhang et al.'s): one line, nothing written
    zhang = tmp_path / "zhang.csv"
    zhang.write_text("".join(f'"{1 + (s == "positive")}","{t}"\n' for s, t in zip(reviews.sentiment, reviews.review)
                             if '"' not in t))
    r = cli_in_process("train", "--train", zhang, "--output", tmp_path / "m2", "--label-names", tmp_path / "names.json",
                       "--no-progress")
    assert r.returncode == 2 and r.stderr.startswith("error:") and "not the data's" in r.stderr, r.stderr
    assert not (tmp_path / "m2").exists()


def test_a_names_file_of_json_that_names_no_classes_is_one_line(tmp_path):
    from fasttext_lib.label_names import read_file

    (tmp_path / "names.json").write_text("[1, 2]\n")
    with pytest.raises(FastTextError, match="neither a list of class names"):
        read_file(str(tmp_path / "names.json"))
    (tmp_path / "classes.txt").write_text("[positive]\n[negative]\n")  # no JSON: classes.txt lines, as before
    assert read_file(str(tmp_path / "classes.txt")) == {"1": "[positive]", "2": "[negative]"}


@pytest.mark.parametrize("excel", [False, True], ids=["pandas", "excel"])
def test_a_semicolon_separated_export_is_refused_by_predict_as_by_training(tmp_path, reviews, excel):
    """European Excel's CSV (``;``) and ``to_csv(sep=";")``: training refuses it; predict answered its header row as a
    review, and each row's class as a word of its text."""
    path = tmp_path / "reviews.csv"
    body = reviews.to_csv(index=False, sep=";", lineterminator="\r\n" if excel else "\n")
    path.write_bytes(("\ufeff" if excel else "").encode() + body.encode())
    model = _model(tmp_path, reviews)
    for command in (["predict", "--model", model, "--input", path], ["train", "--train", path, "--output", tmp_path / "m"]):
        r = cli_in_process(*command)
        errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
        assert r.returncode == 2 and r.stdout == "" and len(errors) == 1 and "semicolon" in errors[0], r.stderr
    assert not (tmp_path / "m").exists()
    r = cli_in_process("predict", "--model", model, "--input", path, "--format", "text")  # as the line says
    assert r.returncode == 0 and len(r.stdout.splitlines()) == len(reviews) + 1, r.stderr
    # a review that holds a semicolon is answered as it was
    r = cli_in_process("predict", "--model", model, input="Great;would buy again\nawful; never again\n")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 2, r.stderr
    # a first review that reads as a header of two columns, plain reviews after it: reviews (it was refused)
    r = cli_in_process("predict", "--model", model, input="Review;Loved it\ngreat food\nawful\n")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 3, r.stderr
    # the same table without its header row: each class was answered as a word of its review
    headerless = tmp_path / "headerless.csv"
    headerless.write_text(reviews.to_csv(index=False, header=False, sep=";"))
    r = cli_in_process("predict", "--model", model, "--input", headerless)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and "semicolon" in r.stderr, r.stderr
    command = r.stderr.split("pandas: ", 1)[1].split(")), or give", 1)[0] + ")"  # the conversion it names
    exec(command, {"pd": pd, "path": str(headerless), "new_path": str(tmp_path / "converted.csv")})
    r = cli_in_process("predict", "--model", model, "--input", tmp_path / "converted.csv")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == len(reviews), r.stderr
    # one such line, or a few among reviews, is a review (as "positive,would buy again" is)
    r = cli_in_process("predict", "--model", model, input="positive;would buy again\ngreat\nawful\nok\nfine\n")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 5, r.stderr
    # reviews that open with a class's name, a semicolon and a space, as a person writes them (an export puts no
    # space after its separator: "positive, but the battery died" is a review for the CSV reader so) were refused
    notes = "positive; the food was great\nnegative; cold soup\npositive; would go again\nnegative; never again\n"
    r = cli_in_process("predict", "--model", model, input=notes)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 4, r.stderr


@pytest.mark.parametrize("header", [True, False], ids=["header", "headerless"])
@pytest.mark.parametrize("quoting", [csv.QUOTE_ALL, csv.QUOTE_MINIMAL], ids=["quoted", "unquoted"])
def test_a_semicolon_separated_export_quoted_or_not_is_refused_by_every_command_with_a_conversion_that_reads_it(
        tmp_path, reviews, header, quoting):
    """R's ``write.csv2(df, row.names=FALSE)`` and ``to_csv(sep=";", quoting=csv.QUOTE_ALL)`` quote every field:
    train and evaluate refused such a file as malformed CSV (``',' expected after '"'``), not as semicolon-separated,
    and predict answered its header row ``"sentiment";"review"`` as a review, each row's class a word of its text.
    Without a header row, training's conversion (``pd.read_csv(path, sep=';')``) made its first review the header."""
    path = tmp_path / "reviews.csv"
    path.write_text(reviews.to_csv(index=False, sep=";", quoting=quoting, header=header))
    model = _model(tmp_path, reviews)
    for command in (["predict", "--model", model, "--input", path], ["evaluate", "--model", model, "--data", path],
                    ["train", "--train", path, "--output", tmp_path / "m"]):
        r = cli_in_process(*command)
        errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
        assert r.returncode == 2 and r.stdout == "" and len(errors) == 1 and "semicolon" in errors[0], r.stderr
        if command[0] == "predict":  # its conversion, followed, gives a file predict answers one record each
            advised = errors[0].split("pandas: ", 1)[1].split("), or give --format text")[0]
            exec(advised, {"pd": pd, "path": str(path), "new_path": str(tmp_path / "to_predict.csv")})
            answered = cli_in_process("predict", "--model", model, "--input", tmp_path / "to_predict.csv")
            assert answered.returncode == 0 and len(answered.stdout.splitlines()) == len(reviews), answered.stderr
    assert not (tmp_path / "m").exists()
    with pytest.raises(FastTextError, match="semicolon-separated") as refused:
        read_labeled(str(path))
    conversion = str(refused.value).split("pandas: ", 1)[1][:-1]  # (the closing parenthesis of "(e.g. pandas: ...)")
    exec(conversion, {"pd": pd, "path": str(path), "new_path": str(tmp_path / "converted.csv")})
    data = read_labeled(str(tmp_path / "converted.csv"))
    assert data.labels == list(reviews.sentiment) and data.texts == list(reviews.review)


@pytest.mark.parametrize("first_line", [" sentiment ; review ", "class name;review text"])
def test_a_semicolon_header_row_predict_names_as_such_training_names_so_too(tmp_path, first_line):
    """A header row with spaces (around its names, or in them): predict refused it as a semicolon-separated table's,
    training said only that it cannot detect the format of line 1."""
    path = tmp_path / "reviews.csv"
    path.write_text(first_line + "\n" + "positive;great food\nnegative;cold soup\n" * 5)
    with pytest.raises(FastTextError, match="line 1 looks semicolon-separated"):
        read_labeled(str(path))


def test_a_file_mixing_utf8_and_windows_1252_is_told_a_conversion_that_keeps_its_utf8(tmp_path, reviews):
    """Drug reviews typed with ``’`` (UTF-8) and rows pasted from a Windows program (``’`` as the byte 0x92): the line
    said to convert the file from Windows-1252, which garbles every UTF-8 ``’`` into ``â€™`` (words never seen again)
    without a word. The command it gives now converts the other bytes only."""
    import subprocess

    raw = pd.read_csv(os.path.join(REAL, "drug_reviews_train.csv"), header=None, names=["label", "text"], dtype=str,
                      keep_default_na=False).head(60)
    body = raw.to_csv(index=False).encode()
    assert "’".encode() in body[:body.index(b"\n", 2000)]  # UTF-8 beyond ASCII in the first rows
    later = body.index(b"'", len(body) // 2)
    path = tmp_path / "reviews.csv"
    path.write_bytes(body[:later] + b"\x92" + body[later + 1:])
    with pytest.raises(FastTextError, match="mixes UTF-8") as refused:
        read_labeled(str(path))
    model = _model(tmp_path, reviews)
    for command in (["predict", "--model", model, "--input", path],
                    ["train", "--train", path, "--output", tmp_path / "m", "--no-progress"]):
        r = cli_in_process(*command)  # predict reads in blocks, training line by line: the same line
        assert r.returncode == 2 and r.stderr.strip() == f"error: {refused.value}", r.stderr
    command = str(refused.value).split("convert the other bytes only: ", 1)[1][:-1]
    subprocess.run(command, shell=True, check=True, cwd=tmp_path)
    fixed = read_labeled(str(tmp_path / "new.csv"))
    assert fixed.labels == list(raw.label) and len(fixed) == len(raw)
    assert not any("â€" in text for text in fixed.texts)
    assert sum("’" in t for t in fixed.texts) == sum("’" in t for t in raw.text) + 1
    # a file of Windows-1252 alone is still told iconv, as before
    path.write_bytes(body.replace("’".encode(), b"\x92"))
    with pytest.raises(FastTextError, match="iconv -f CP1252"):
        read_labeled(str(path))


@pytest.mark.parametrize("sep", [",", "\t"])
def test_rows_of_empty_fields_that_excel_exports_below_the_data_are_blank_lines(tmp_path, reviews, sep):
    """Excel writes ``,`` rows for rows below the data that were ever formatted or cleared, and pandas writes one for a
    row of NaNs: each was refused as "an empty class column" without a way on. Blank, as a line of spaces is."""
    lines = reviews.to_csv(index=False, sep=sep, lineterminator="\r\n").split("\r\n")
    blank = sep + "\r\n"
    path = tmp_path / "export.csv"
    path.write_bytes(("\ufeff" + "\r\n".join(lines[:10]) + "\r\n" + blank + "\r\n".join(lines[10:]) + blank * 5).encode())
    data = read_labeled(str(path))
    assert data.labels == list(reviews.sentiment) and data.texts == list(reviews.review)
    model = _model(tmp_path, reviews)
    r = cli_in_process("predict", "--model", model, "--input", path)
    # predict answers every record in its place, as the endpoint's text/csv and pd.read_csv's rows (NaN ones) do: the
    # empty rows get empty reviews' answers, and a note says where the first is
    answers = r.stdout.splitlines()
    assert r.returncode == 0 and len(answers) == len(reviews) + 6 == len(pd.read_csv(path, sep=sep)), r.stderr
    assert "export.csv:11: a blank record, answered as an empty review in its place (6 in all)" in r.stderr, r.stderr
    empty = cli_in_process("predict", "--model", model, input=b"\n")
    assert empty.returncode == 0 and answers[9] == answers[-1] == empty.stdout.splitlines()[0], empty.stderr
    # a table of text columns only (no class) keeps one answer per record, as pd.read_csv reads its rows (an all-NaN
    # row among them): its rows of empty fields were answered before, and left out they put every answer after one off
    texts = tmp_path / "texts.csv"
    texts.write_text("title,body\ngreat,loved it\n,\nbad,awful\n")
    r = cli_in_process("predict", "--model", model, "--input", texts)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == len(pd.read_csv(texts)) == 3, r.stderr
    # a row with a text and no class is still refused, naming its line
    path.write_text("sentiment,review\npositive,great food\n,cold soup\nnegative,slow service\n")
    with pytest.raises(FastTextError, match=r"export\.csv:3: CSV row has an empty class column"):
        read_labeled(str(path))


@pytest.mark.parametrize("sep", [",", "\t"])
def test_a_row_of_nans_written_with_pandas_index_is_a_blank_line_as_without_it(tmp_path, reviews, sep):
    """pandas' row of NaNs is blank written with index=False (``,``), but df.to_csv(path), pandas' default, writes it
    with its row number (``3,,``): once the index column was left out, training refused it as "an empty class
    column", so the same frame read one way and was refused the other. Left out as the blank line it is, and as a
    blank line says nothing: the same documents as without the index. A row with a text and no class is still
    refused."""
    from fasttext_lib.data import iter_examples, read_counted

    frame = pd.concat([reviews.head(8), pd.DataFrame({"sentiment": [None], "review": [None]}), reviews.iloc[8:20]],
                      ignore_index=True)
    without, path = tmp_path / "no_index.csv", tmp_path / "indexed.csv"
    frame.to_csv(without, index=False, sep=sep)
    frame.to_csv(path, sep=sep)
    assert path.read_text().splitlines()[9] == sep.join(["8", "", ""])
    expected = read_labeled(str(without))
    notes = []
    data = read_labeled(str(path), note=notes.append)
    assert (data.labels, data.texts) == (expected.labels, expected.texts) == (list(reviews.sentiment[:20]),
                                                                            list(reviews.review[:20]))
    assert len(notes) == 1 and "row index" in notes[0], notes  # (the index column's note only)
    assert [label for label, _ in iter_examples(str(path))] == expected.labels
    assert read_counted(str(path)).labels == expected.labels
    path.write_text(path.read_text().replace(sep.join(["8", "", ""]), sep.join(["8", "", "cold soup"])))
    with pytest.raises(FastTextError, match=r"indexed\.csv:10: CSV row has an empty class column"):
        read_labeled(str(path))


def test_a_json_lines_object_of_nothing_but_missing_values_is_a_blank_line_as_its_csv_row_is(tmp_path, reviews):
    """pandas' row of NaNs written as JSON Lines (``{"sentiment":null,"review":null}``) was refused as "this object's
    class is empty" where the same frame written as CSV (``,``) reads it as the blank line it is, and a blank line in
    JSON Lines is left out as well: the object holds no document either. An object with a text and no class is still
    refused."""
    from fasttext_lib.data import read_counted

    frame = pd.concat([reviews.head(8), pd.DataFrame({"sentiment": [None], "review": [None]}), reviews.iloc[8:20]],
                      ignore_index=True)
    as_csv, path = tmp_path / "train.csv", tmp_path / "train.jsonl"
    frame.to_csv(as_csv, index=False)
    frame.to_json(path, orient="records", lines=True)
    assert path.read_text().splitlines()[8] == '{"sentiment":null,"review":null}'
    expected = read_labeled(str(as_csv))
    data = read_labeled(str(path))
    assert (data.labels, data.texts) == (expected.labels, expected.texts) == (list(reviews.sentiment[:20]),
                                                                            list(reviews.review[:20]))
    assert read_counted(str(path)).labels == expected.labels
    lines = path.read_text().splitlines()
    for empty in ('{"sentiment": "", "review": "  "}', "{}"):  # (empty strings, a space; no field at all)
        path.write_text("\n".join(lines[:8] + [empty] + lines[9:]) + "\n")
        assert read_labeled(str(path)).labels == expected.labels
    path.write_text("\n".join(lines[:8] + ['{"sentiment":null,"review":"cold soup"}'] + lines[9:]) + "\n")
    with pytest.raises(FastTextError, match=r"train\.jsonl:9: this object's class \('sentiment'\) is empty"):
        read_labeled(str(path))


def test_a_parquet_export_is_one_line_that_names_the_conversion_and_the_package_it_needs(tmp_path, reviews):
    """``df.to_parquet(path)`` (and a Hugging Face dataset's files): pandas reads Parquet only with pyarrow (or
    fastparquet), which a user of this library may not have: the line said pd.read_parquet, which then failed with
    "Missing optional dependency 'pyarrow'"."""
    try:
        reviews.to_parquet(tmp_path / "reviews.parquet")
    except ImportError:  # (no pyarrow here either: the file as it starts and ends)
        (tmp_path / "reviews.parquet").write_bytes(b"PAR1\x15\x04\x15\x80\x01" + os.urandom(200) + b"\x00\x00PAR1")
    path = tmp_path / "reviews.parquet"
    model = _model(tmp_path, reviews)
    for command in (["predict", "--model", model, "--input", path],
                    ["train", "--train", path, "--output", tmp_path / "m", "--no-progress"]):
        r = cli_in_process(*command)
        errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
        assert r.returncode == 2 and r.stdout == "" and r.stderr.splitlines() == errors and len(errors) == 1, r.stderr
        assert "pd.read_parquet(path)" in errors[0] and "pip install pyarrow" in errors[0], errors[0]
    assert not (tmp_path / "m").exists()


def test_a_dataframes_columns_after_train_test_split_are_split_by_position(reviews):
    """``LabeledTexts(df["sentiment"], df["review"])`` of a frame sampled or split (its index no positions):
    ``split_validation`` indexed the Series by their index labels, a KeyError traceback (or other rows than drawn)."""
    from fasttext_lib.autotune import split_validation
    from fasttext_lib.data import LabeledTexts

    sampled = reviews.sample(frac=0.8, random_state=0)  # as sklearn's train_test_split leaves it
    data = LabeledTexts(sampled["sentiment"], sampled["review"])
    search_train, search_val = split_validation(data, fraction=0.25, seed=1)
    pairs = list(zip(sampled["sentiment"], sampled["review"]))
    drawn = list(zip(search_train.labels, search_train.texts)) + list(zip(search_val.labels, search_val.texts))
    assert sorted(drawn) == sorted(pairs) and len(search_val) == round(0.25 * len(pairs))
    assert list(data.head(3).texts) == list(sampled["review"][:3])


# ---- predict on a file of reviews only, no header: df[["text"]].to_csv(path, index=False, header=False)

@pytest.fixture(scope="module")
def snippets_model(tmp_path_factory, reviews):
    return _model(tmp_path_factory.mktemp("snippets"), reviews)


def _drug_reviews(count=60):
    """``count`` real drug reviews, a few written in paragraphs (a line break after their first sentence, one with a
    blank line between), as people type them: pandas quotes such a review over several lines."""
    raw = pd.read_csv(os.path.join(REAL, "drug_reviews_test.csv"), header=None, names=["label", "text"], dtype=str,
                      keep_default_na=False)
    texts = list(raw.text[:count])
    for i, breaks in ((3, "\n"), (17, "\n\n"), (41, "\n")):
        assert ". " in texts[i]
        texts[i] = texts[i].replace(". ", "." + breaks, 1)
    texts[8] = '"Miracle drug" is what my doctor said. ' + texts[8]  # quoted by pandas as """Miracle drug"" is ..."
    return list(raw.label[:count]), texts


def _endpoint_answers(model, body, content_type):
    from fasttext_lib import sm_serve

    served = sm_serve.model_fn(str(model))
    return json.loads(sm_serve.output_fn(sm_serve.predict_fn(sm_serve.input_fn(body, content_type), served),
                                         "application/json")[0])


@pytest.mark.parametrize("name", ["reviews.csv", "reviews.txt", "reviews.csv.gz", "-"])
def test_a_one_column_csv_with_a_review_over_lines_gets_one_answer_per_review(tmp_path, snippets_model, name):
    """``df[["text"]].to_csv(path, index=False, header=False)``, the usual file of reviews to label: a review written
    in paragraphs is quoted over several lines. Read a line at a time, each of its lines was answered, 63 answers for
    60 reviews, every answer after it one review off, and nothing said; the endpoint's text/csv answered 60."""
    from fasttext_lib.predict import Predictor

    _, texts = _drug_reviews()
    body = pd.DataFrame({"text": texts})[["text"]].to_csv(index=False, header=False)
    assert body.count("\n") == len(texts) + 4
    path = tmp_path / name
    if name != "-":
        path.write_bytes(gzip.compress(body.encode(), mtime=0) if name.endswith(".gz") else body.encode())
    expected = Predictor.load(snippets_model).predict(texts)
    r = cli_in_process("predict", "--model", snippets_model, "--input", path if name != "-" else "-",
                       input=body if name == "-" else None)
    assert r.returncode == 0, r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == expected
    said = r.stderr.splitlines()
    assert len(said) == 1 and "read as CSV of one column" in said[0] and "line 4" in said[0], r.stderr
    assert "--format text" in said[0]
    assert _endpoint_answers(snippets_model, body.encode(), "text/csv") == expected
    # --format text still answers each line as it is
    r = cli_in_process("predict", "--model", snippets_model, "--format", "text", "--input", "-", input=body)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == body.count("\n"), r.stderr


def test_a_one_column_csv_without_a_review_over_lines_is_answered_a_line_at_a_time_without_a_note(tmp_path,
                                                                                                  snippets_model):
    # read a line at a time or as CSV records, such a file gets the same answers (a quotation mark is no word): as before
    from fasttext_lib.predict import Predictor

    texts = [text.replace("\n", " ") for text in _drug_reviews()[1]]
    path = tmp_path / "reviews.csv"
    pd.DataFrame({"text": texts}).to_csv(path, index=False, header=False)
    r = cli_in_process("predict", "--model", snippets_model, "--input", path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == Predictor.load(snippets_model).predict(texts)


@pytest.mark.parametrize("name", ["reviews.txt", "reviews.csv"])
def test_reviews_one_a_line_with_stray_quotation_marks_are_still_one_answer_per_line(tmp_path, snippets_model, name):
    """Every shared real set's reviews one a line (their quotation marks as people type them), with reviews that open
    a quotation mark and never close it: one answer per line, nothing said, as before."""
    from fasttext_lib.predict import Predictor

    lines = []
    for set_name in ("amazon_snippets", "nyt_editorials", "drug_reviews"):
        raw = pd.read_csv(os.path.join(REAL, f"{set_name}_test.csv"), header=None, names=["label", "text"], dtype=str,
                          keep_default_na=False)
        lines += [" ".join(text.split()) for text in raw.text]
    assert sum('"' in line for line in lines) > 50
    for at in (0, 5, len(lines) // 2, len(lines) - 1):
        lines.insert(at, '"Never again, ' + lines[at])  # a quotation mark opened and never closed
    lines.insert(3, '"Amazing!" is all I can say')
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    r = cli_in_process("predict", "--model", snippets_model, "--input", path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == Predictor.load(snippets_model).predict(lines)


@pytest.mark.parametrize("shape", ["index", "id column"])
def test_a_headerless_table_with_a_record_over_lines_is_one_error_naming_the_ways_on(tmp_path, snippets_model, shape):
    """``df.to_csv(path, header=False)`` (pandas' index first), or a table of ids and reviews without a header: read a
    line at a time, a record over lines was answered once per line, every answer after it off, and nothing said.
    Whether its first column is a word of the review or to be left out, only its writer knows."""
    from fasttext_lib.predict import Predictor

    _, texts = _drug_reviews()
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(len(texts))], "text": texts})
    path = tmp_path / "reviews.txt"
    if shape == "index":
        frame[["text"]].to_csv(path, header=False)
    else:
        frame.to_csv(path, index=False, header=False)
    r = cli_in_process("predict", "--model", snippets_model, "--input", path)
    errors = r.stderr.splitlines()
    assert r.returncode == 2 and r.stdout == "" and len(errors) == 1 and errors[0].startswith("error: "), r.stderr
    assert f"{path}: line 4 opens a quotation mark that a CSV reader closes on line 5" in errors[0], errors[0]
    assert "--format text" in errors[0] and "--format csv" in errors[0] and "df.to_csv(path, index=False)" in errors[0]
    predictor = Predictor.load(snippets_model)
    r = cli_in_process("predict", "--model", snippets_model, "--input", path, "--format", "text")
    assert r.returncode == 0 and [json.loads(line) for line in r.stdout.splitlines()] == \
        predictor.predict(path.read_text().splitlines()), r.stderr
    r = cli_in_process("predict", "--model", snippets_model, "--input", path, "--format", "csv")
    assert r.returncode == 0 and [json.loads(line) for line in r.stdout.splitlines()] == predictor.predict(texts), \
        r.stderr  # (its first column where a class goes: left out, as the note says)
    frame[["text"] if shape == "index" else ["id", "text"]].to_csv(path, index=False)  # with its header row
    r = cli_in_process("predict", "--model", snippets_model, "--input", path)
    assert r.returncode == 0 and [json.loads(line) for line in r.stdout.splitlines()] == predictor.predict(texts), \
        r.stderr


def test_sentences_one_a_line_whose_quotation_goes_on_over_lines_are_still_one_answer_per_line(tmp_path,
                                                                                                snippets_model):
    """The shared NYT editorials, a sentence a line: a quotation over two sentences opens on one line and closes on a
    later one (``"...`` then ``... About tuition!"``), as a CSV reader reads a quoted field over lines. The input is
    no CSV (commas outside quotes, lines of other widths): each line is answered, as before, and one note says why."""
    from fasttext_lib.predict import Predictor

    raw = pd.read_csv(os.path.join(REAL, "nyt_editorials_train.csv"), header=None, names=["label", "text"],
                      dtype=str, keep_default_na=False)
    lines = [" ".join(text.split()) for text in raw.text]
    closing = lines.index('About tuition!"')
    lines[closing - 1] = '"' + lines[closing - 1].replace('"', "")  # the quotation opened a sentence before
    path = tmp_path / "sentences.txt"
    path.write_text("".join(line + "\n" for line in lines))
    r = cli_in_process("predict", "--model", snippets_model, "--input", path)
    assert r.returncode == 0, r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == Predictor.load(snippets_model).predict(lines)
    said = r.stderr.splitlines()
    assert len(said) == 1 and said[0].startswith(f"{path}: read a line at a time, one answer per line: line "
                                                 f"{closing} opens a quotation mark that a CSV reader closes on line "
                                                 f"{closing + 1}, but the input is no CSV"), r.stderr


def test_a_labeled_csv_with_a_review_over_lines_is_read_by_predict_and_evaluate_as_before(tmp_path, snippets_model):
    from fasttext_lib.predict import Predictor

    labels, texts = _drug_reviews()
    path = tmp_path / "test.csv"
    pd.DataFrame({"label": labels, "text": texts}).to_csv(path, index=False, header=False)
    model = tmp_path / "drugs"
    r = cli_in_process("train", "--train", path, "--output", model, "--epochs", "1", "--emsize", "4", "--no-progress")
    assert r.returncode == 0, r.stderr
    r = cli_in_process("evaluate", "--model", model, "--data", path)
    assert r.returncode == 0 and json.loads(r.stdout.splitlines()[-1])["n"] == len(texts), r.stderr
    r = cli_in_process("predict", "--model", model, "--input", path)
    assert r.returncode == 0 and "read as labeled CSV" in r.stderr, r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == Predictor.load(model).predict(texts)


@pytest.mark.parametrize("over_lines", [True, False], ids=["review-over-lines", "one-a-line"])
def test_forced_csv_reads_a_headerless_one_column_csv_as_its_texts(tmp_path, snippets_model, over_lines):
    """``predict --format csv`` on ``df[["text"]].to_csv(path, index=False, header=False)`` (a review written in
    paragraphs quoted over lines, or none) stopped with 'expected "class","text"... got 1 column(s)': predict scores no
    class, so its one column is each record's text, one answer per record, as auto-detection reads the same file.
    ``evaluate --format csv`` still refuses it in one line: it has no classes to score."""
    from fasttext_lib.predict import Predictor

    _, texts = _drug_reviews()
    if not over_lines:
        texts = [text.replace("\n", " ") for text in texts]
    path = tmp_path / "reviews.csv"
    pd.DataFrame({"text": texts})[["text"]].to_csv(path, index=False, header=False)
    expected = Predictor.load(snippets_model).predict(texts)
    for given in (["--input", path], ["--input", "-"]):
        r = cli_in_process("predict", "--model", snippets_model, "--format", "csv", *given,
                           input=path.read_text() if given[1] == "-" else None)
        assert r.returncode == 0, r.stderr
        assert [json.loads(line) for line in r.stdout.splitlines()] == expected
        assert "Traceback" not in r.stderr and len(r.stderr.splitlines()) <= 1, r.stderr
    r = cli_in_process("evaluate", "--model", snippets_model, "--format", "csv", "--data", path)
    errors = r.stderr.splitlines()
    assert r.returncode == 2 and r.stdout == "" and len(errors) == 1 and errors[0].startswith("error: "), r.stderr
    # one column as a person types it, no CSV writer's (a quotation mark outside a quoted field): one line says so
    path.write_text('Worked well for me\nNo side effects at all\nToo tired to drive\nI said "never again"\n')
    r = cli_in_process("predict", "--model", snippets_model, "--format", "csv", "--input", path)
    errors = r.stderr.splitlines()
    assert r.returncode == 2 and r.stdout == "" and len(errors) == 1 and errors[0].startswith("error: "), r.stderr
    assert "(line 4: a quotation mark outside a quoted field); --format text answers" in errors[0], errors[0]
