"""Real-world text and file shapes (what people download and point the tool at), built from the
built-in sample's real English sentences: each is read right (every document, its label, its whole
text) or refused in one line naming the file and what to do."""
import csv
import io
import json
import os
import re
import shlex

import pandas as pd
import pytest

from conftest import cli_in_process
from fasttext_lib.columns import csv_columns
from fasttext_lib.data import read_labeled
from fasttext_lib.errors import FastTextError
from fasttext_lib.sample import load_sample

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The shared real English sets (README there): CI checks them out beside the repository; FASTTEXT_LIB_SHARED points
# elsewhere (a worktree), as in test_native_features.
REAL = os.path.join(os.environ.get("FASTTEXT_LIB_SHARED") or os.path.join(ROOT, "..", "shared"), "data", "real")


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
    ({"tweet": "texts", "sentiment": "labels"}, {"index": False}),                   # the text's name unknown: the
    ({"reviewText": "texts", "label": "labels"}, {}),                                # one column beside the class
])
def test_a_header_naming_the_class_column_anywhere_reads_every_row(tmp_path, real, columns, to_csv):
    path = tmp_path / "kaggle.csv"
    _frame(real, **columns).to_csv(path, **to_csv)
    data = read_labeled(str(path))
    n_text = list(columns.values()).count("texts")
    assert data.labels == real.labels
    assert data.texts == [" ".join([t] * n_text) for t in real.texts]


@pytest.mark.parametrize("first, quoting, word_classes", [
    (["1", "Rating"], csv.QUOTE_ALL, False),       # a Zhang et al. file whose first review is the word "Rating"
    (["2", "Y"], csv.QUOTE_MINIMAL, False),
    (["positive", "Score"], csv.QUOTE_MINIMAL, True),   # classes written as words
])
def test_a_first_row_whose_text_is_a_class_columns_name_is_data_not_a_header(tmp_path, real, first, quoting,
                                                                              word_classes):
    """A header of the class column beside one column of any name (tweet,sentiment) is followed: but a first data
    row whose text is one word that names a class column ("1","Rating") read so too, as a header with its class in
    the text's column: every review became its own class (121 classes for 121 rows). Its other value, the class,
    recurs below it, as no column's name does: it is read as data."""
    ids = {"negative": "1", "positive": "2"}
    labels = real.labels if word_classes else [ids[label] for label in real.labels]
    path = tmp_path / "data.csv"
    with open(path, "w", newline="") as f:
        csv.writer(f, quoting=quoting, lineterminator="\n").writerows([first] + [list(r) for r in zip(labels, real.texts)])
    data = read_labeled(str(path))
    assert data.labels == [first[0]] + labels and data.texts == [first[1]] + real.texts


def test_a_labels_file_of_ids_beside_the_class_is_refused_not_trained_on_its_ids(tmp_path, real):
    """tweet_id,sentiment (a labels file whose texts are in another file) was 'cannot detect the format'; since the
    one column beside a named class is taken for the text whatever its name, its ids were trained on as words. A
    column so taken that holds only whole numbers, nearly all different, is an id: one line says the file has no text."""
    path = tmp_path / "labels.csv"
    frame = pd.DataFrame({"tweet_id": [str(1093 + 7 * i) for i in range(len(real))], "sentiment": real.labels})
    frame.to_csv(path, index=False)
    with pytest.raises(FastTextError, match=r"labels.csv: the header names the class column \(sentiment\) beside one "
                                            r"other column, 'tweet_id', .* an id, not text; this file has no text"):
        read_labeled(str(path))
    frame.sample(frac=1, random_state=0).to_csv(path, index=False)  # ids in no order: the same
    with pytest.raises(FastTextError, match="no text column"):
        read_labeled(str(path))
    frame.assign(tweet_id=real.texts).to_csv(path, index=False)  # the tweets themselves: read
    assert read_labeled(str(path)).texts == real.texts
    # Yelp's review ids (22 characters of base64): ids all the same
    yelp = pd.DataFrame({"review_id": [f"{i:03d}xK9vQ-2mZp_7hRtL0aBc"[:22] for i in range(len(real))],
                         "stars": real.labels})
    yelp.to_csv(path, index=False)
    with pytest.raises(FastTextError, match=r"'review_id', which over the first \d+ rows holds one token per row"):
        read_labeled(str(path))


def test_a_headerless_csv_whose_classes_are_words_trains_as_with_format_csv(tmp_path, real):
    """df[["label", "text"]].to_csv(path, index=False, header=False) with classes named by words (positive,the
    text): the first line alone cannot say CSV (a number or a quoted class does), and training stopped with
    'cannot detect the format'. Classes that repeat over the first lines say it."""
    path = tmp_path / "words.csv"
    _frame(real, label="labels", text="texts").to_csv(path, index=False, header=False)
    assert not path.read_text().startswith('"')
    data = read_labeled(str(path))
    assert data.labels == real.labels and data.texts == real.texts
    four = tmp_path / "four.csv"
    four.write_text("positive,great food\nnegative,cold soup\npositive,kind staff\nnegative,rude, and slow\n")
    assert read_labeled(str(four)).texts == ["great food", "cold soup", "kind staff", "rude  and slow"]  # (columns joined)
    out = tmp_path / "model"
    r = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert r.returncode == 0, r.stderr


_UNDETECTED = r"data.csv: cannot detect the format of line 1 .*--format csv"


@pytest.mark.parametrize("text, refusal", [
    # (a header of two names over word classes, the SMS Spam Collection's shape: its columns asked for)
    ("sentiment_label,review_blurb\npositive,great food\nnegative,cold soup\npositive,kind staff\nnegative,rude\n",
     r"data.csv:1: its first row reads as a header \(sentiment_label,review_blurb\).*--label-column NAME --text-column"),
    ("Great,would buy again\nTerrible,never again\nFine,i guess\nLovely,just lovely\nAwful,no\n", _UNDETECTED),
    ("positive,great food\nnegative,cold soup\npositive,kind staff\n", _UNDETECTED),  # too few to tell
])
def test_word_first_lines_that_are_not_a_labeled_csv_are_still_refused_with_the_way_to_read_them(tmp_path, text,
                                                                                                refusal):
    """A header no rule knows, or reviews that open with a word and a comma: the first values do not repeat as
    classes do, so the file is not guessed (a header read as a class of one document, each review its own
    class); the error says how to read such a file: as CSV, or, for a header above word classes, with its columns
    named."""
    path = tmp_path / "data.csv"
    path.write_text(text)
    with pytest.raises(FastTextError, match=refusal):
        read_labeled(str(path))


def test_a_label_last_row_with_a_stray_unquoted_comma_is_named(tmp_path, real):
    path = tmp_path / "hand.csv"
    path.write_text("text,label\ni like it,positive\ni like it, a lot,positive\n")
    with pytest.raises(FastTextError, match=r"hand.csv:3: .*3 column\(s\) where the header row has 2"):
        list(read_labeled(str(path)).labels)


@pytest.mark.parametrize("header", [True, False])
def test_semicolon_separated_files_are_named_as_such(tmp_path, real, header):
    path = tmp_path / "data.csv"
    _frame(real, label="labels", text="texts").to_csv(path, sep=";", index=False, header=header)
    with pytest.raises(FastTextError, match=r"data.csv: line 1 looks semicolon-separated; .*convert it") as refused:
        read_labeled(str(path))
    assert "--format csv" not in str(refused.value)  # (it would not read it: the separator is not a comma)
    # it named comma- and tab-separated files and fastText format as all that is read: JSON Lines are too
    assert "only comma- and tab-separated files, JSON Lines and fastText format are read" in str(refused.value)


@pytest.mark.parametrize("columns, to_csv", [
    ({"sentence": "texts", "label": "labels"}, {"index": False}),               # GLUE's SST-2 train.tsv
    ({"Review": "texts", "Liked": "labels"}, {"index": False}),                 # (named below: --label-column)
    ({"label": "labels", "text": "texts"}, {"index": False, "header": False}),  # the class first, no header
    ({"label": "labels", "text": "texts"}, {}),                                 # pandas' index first
])
def test_tab_separated_files_are_read_as_csv_files_are(tmp_path, real, columns, to_csv):
    """TSV (pandas' to_csv(sep="\t"), GLUE's SST-2, Amazon's review TSVs) was refused, to be converted to CSV: it is
    read as a CSV file is, a header naming the columns (or --label-column), or the class first. A text holding a tab,
    a quote or a line break is quoted by pandas, and read back whole."""
    from fasttext_lib.columns import Columns

    frame = _frame(real, **columns)
    frame.iloc[0, list(columns.values()).index("texts")] = 'a "quoted"\ttab and a\nline break'
    path = tmp_path / "data.tsv"
    frame.to_csv(path, sep="\t", **to_csv)
    fmt = Columns("Liked") if "Liked" in columns else "auto"
    data = read_labeled(str(path), fmt)
    assert data.labels == list(frame[[c for c, v in columns.items() if v == "labels"][0]])
    assert data.texts == list(frame[[c for c, v in columns.items() if v == "texts"][0]])
    if fmt == "auto":
        assert read_labeled(str(path), "tsv").texts == data.texts


@pytest.mark.parametrize("columns, said", [
    # (Kaggle's Restaurant_Reviews.tsv)
    ({"Review": "texts", "Liked": "labels"}, "the TSV header row (Review<TAB>Liked) names no class column training knows"),
    ({"title": "texts", "body": "texts"}, "the TSV header row (title<TAB>body) names no class column, only text columns "
                                          "(its first column would be read as each row's class); add the class as a "
                                          "column named e.g. label (label<TAB>title<TAB>body)"),
])
def test_a_tsv_header_naming_no_class_column_is_said_as_the_tsv_it_is(tmp_path, real, columns, said):
    """A TSV whose header names no class column was refused as "the CSV header row (Review,Liked)": a TSV said to be
    a CSV, its names shown comma-separated, and the header to write given with commas in a file of tabs."""
    path = tmp_path / "reviews.tsv"
    _frame(real, **columns).to_csv(path, sep="\t", index=False)
    with pytest.raises(FastTextError) as refused:
        read_labeled(str(path))
    assert str(refused.value).startswith(f"{path}:1: {said}"), refused.value


@pytest.mark.parametrize("columns, to_csv", [
    ({"text": "texts", "label": "labels"}, {"index": False}),                   # "text"<TAB>"label"
    ({"label": "labels", "text": "texts"}, {"index": False}),
    ({"label": "labels", "text": "texts"}, {"index": False, "header": False}),  # "positive"<TAB>"the text"
    ({"label": "ids", "text": "texts"}, {"index": False, "header": False}),    # "2"<TAB>"the text"
    ({"label": "ids", "text": "texts"}, {"index": False, "header": False, "quoting": csv.QUOTE_NONNUMERIC}),
])
def test_a_tsv_whose_first_field_is_quoted_is_read_as_tsv(tmp_path, real, columns, to_csv):
    """A TSV whose first field is quoted (pandas' to_csv(sep="\t", quoting=csv.QUOTE_ALL); a first text holding a
    comma or a quote) was taken for a CSV by its opening quote and refused as malformed CSV at line 1: tabs, not
    commas, separate its fields."""
    frame = _frame(real, **{k: v for k, v in columns.items() if v != "ids"})
    if "ids" in columns.values():
        frame.insert(0, "label", [str(1 + (c == "positive")) for c in real.labels])
    frame.loc[0, "text"] = 'great, "really" great food, ' + frame.loc[0, "text"]
    path = tmp_path / "data.tsv"
    frame.to_csv(path, sep="\t", **{"quoting": csv.QUOTE_ALL, **to_csv})
    assert path.read_text().startswith('"')
    data = read_labeled(str(path))
    assert data.labels == [str(v) for v in frame["label"]] and data.texts == list(frame["text"])
    assert read_labeled(str(path), "tsv").texts == data.texts


def test_a_quoted_tsv_of_text_then_class_without_a_header_is_refused_as_a_tsv(tmp_path, real):
    # ("great food"<TAB>positive: refused as a headerless TSV, with a header to add, not as malformed CSV)
    path = tmp_path / "data.tsv"
    _frame(real, text="texts", label="labels").to_csv(path, sep="\t", index=False, header=False,
                                                      quoting=csv.QUOTE_NONNUMERIC)
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("error:") == 1 and not (tmp_path / "m").exists(), got.stderr
    assert "line 1 looks tab-separated, but it is no header row" in got.stderr and "malformed" not in got.stderr
    assert "pd.read_csv(path, sep='\\t', header=None, names=[...])" in got.stderr  # (its quotes are CSV quoting)
    pd.read_csv(path, sep="\t", header=None, names=["text", "label"]).to_csv(tmp_path / "named.csv", index=False)
    assert read_labeled(str(tmp_path / "named.csv")).texts == real.texts  # the advice, followed


def test_a_tsv_whose_quotes_are_no_csv_quoting_is_refused_with_how_to_convert_it(tmp_path, real):
    # GLUE's .tsv files put quotation marks in sentences unquoted: read as CSV quoting, a quote that opens a field
    # ran on to the file's end
    path = tmp_path / "train.tsv"
    path.write_text("sentence\tlabel\n" + "".join(f"{t}\t{i % 2}\n" for i, t in enumerate(real.texts[:5]))
                    + '" a quote that opens it\t1\n' + "".join(f"{t}\t1\n" for t in real.texts[5:10]))
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("error:") == 1 and not (tmp_path / "m").exists()
    assert "train.tsv:7: malformed CSV record starting at this line" in got.stderr
    advice = ("pd.read_csv(path, sep='\\t', quoting=3, header=None, dtype=str, keep_default_na=False)"
              ".to_csv(new_path, index=False, header=False)")
    assert advice in got.stderr
    exec(advice, {"pd": pd, "path": str(path), "new_path": str(tmp_path / "converted.csv")})  # the advice, followed
    assert read_labeled(str(tmp_path / "converted.csv")).texts[5] == '" a quote that opens it'


def test_a_word_class_csv_whose_first_text_holds_a_tab_reads_as_csv(tmp_path, real):
    path = tmp_path / "words.csv"
    frame = _frame(real, label="labels", text="texts")
    frame.loc[0, "text"] = "tab\tinside " + frame.loc[0, "text"]
    frame.to_csv(path, index=False, header=False)
    data = read_labeled(str(path))
    assert data.labels == list(frame["label"]) and data.texts == list(frame["text"])


def test_class_last_without_a_header_is_refused_not_trained_as_a_class_per_review(tmp_path, real):
    path, out = tmp_path / "noheader.csv", tmp_path / "model"
    _frame(real, text="texts", label="labels").to_csv(path, index=False, header=False, quoting=csv.QUOTE_ALL)
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert got.returncode == 2, got.stderr
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: training data has 120 classes for 120 documents")
    assert "is the text in the class column?" in lines[0]
    assert not out.exists()


@pytest.mark.parametrize("words", [1, 2, 3])
def test_class_last_short_texts_without_a_header_are_refused(tmp_path, words):
    # Short reviews ("great food","positive") passed the guard: the classes (the reviews) read like labels, so a
    # model of hundreds of classes was trained on the texts "positive" and "negative". Now the texts are seen to be
    # a few values, repeated, as labels are.
    from fasttext_lib.train import train

    data = load_sample("train").head(300)
    rows = [(" ".join(text.split()[:words]), label) for label, text in zip(data.labels, data.texts)]
    path, out = tmp_path / "short.csv", tmp_path / "model"
    with open(path, "w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert got.returncode == 2, got.stderr
    lines = got.stderr.strip().splitlines()
    classes = len({text for text, _ in rows})
    assert len(lines) == 1 and lines[0].startswith(f"error: training data has {classes} classes for 300 documents")
    assert "the texts hold only 2 different value(s), such as 'positive'" in lines[0]
    assert "is the text in the class column?" in lines[0] and not out.exists()
    with pytest.raises(FastTextError, match="is the text in the class column"):  # the library's own train() too
        train(read_labeled(str(path), find_names=False))


INTENTS = ["book_flight", "cancel_flight", "check_balance", "transfer_money", "weather", "alarm_set", "alarm_remove",
           "play_music", "pause_music", "order_pizza", "track_order", "reset_password", "greeting", "goodbye",
           "thanks", "restaurant_reviews", "calendar_add", "calendar_remove", "translate", "timer"]


@pytest.mark.parametrize("labels", ["intents", "topic names"])
def test_a_genuine_small_set_of_many_classes_trains(tmp_path, labels):
    # 20 classes in 30 documents was refused as 'is the text in the class column?': the guard against class-last
    # files now also asks that the classes read like text
    from fasttext_lib.label_names import KNOWN

    names = INTENTS if labels == "intents" else list(KNOWN["yahoo_answers"].values()) + list(KNOWN["dbpedia"].values())
    rows = [(name, f"please {name.replace('_', ' ').lower()} for me now") for name in names]
    rows += [(name, f"can you {name.replace('_', ' ').lower()}") for name in names[::2]]
    path = tmp_path / "intents.csv"
    with open(path, "w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
    assert len(set(names)) >= 20 and 2 * len(set(names)) > len(rows)
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "5", "--no-progress")
    assert got.returncode == 0, got.stderr
    answer = json.loads(cli_in_process("predict", "--model", tmp_path / "m", input=f"please {rows[7][0].lower()}\n").stdout)
    assert answer["class_id"] in names


def test_class_values_that_read_like_text():
    from fasttext_lib.class_checks import classes_look_like_text

    assert classes_look_like_text(load_sample("train").texts[:40])
    assert classes_look_like_text(["x" * 60 + str(i) for i in range(30)])  # text without spaces (CJK)
    assert not classes_look_like_text(INTENTS)
    assert not classes_look_like_text(["Society & Culture", "Business & Finance", "1 star", "2 stars", "Sci/Tech"])


def test_texts_that_read_like_labels():
    from fasttext_lib.class_checks import texts_look_like_labels

    sentences = [" ".join(t.split()[:3]) for t in load_sample("train").texts[:40]]
    assert texts_look_like_labels(["positive", "negative "] * 20, sentences) == (2, "positive")  # class last
    assert texts_look_like_labels(sentences, INTENTS * 2) is None  # a text per document
    assert texts_look_like_labels([f"please {i}" for i in INTENTS] + ["thanks"] * 10, INTENTS + INTENTS[:10]) is None


def test_a_multi_label_set_written_as_one_row_per_tag_trains(tmp_path):
    # each abstract repeated once per tag (single-label training on a multi-label set): its texts take fewer values
    # than half its many tags, and it was refused as "is the text in the class column?" though a header named both
    # columns; its texts read like documents, not like the few real labels of a class-last file
    import random

    from fasttext_lib.class_checks import texts_look_like_labels

    texts = [" ".join(t.split()) for t in load_sample("train").texts[:60]]
    pick = random.Random(0)
    rows = [(f"tag{t}", text) for text in texts for t in pick.sample(range(400), 8)]
    assert 2 * len(set(texts)) <= len({tag for tag, _ in rows})
    assert texts_look_like_labels([text for _, text in rows], [tag for tag, _ in rows]) is None
    path = tmp_path / "tags.csv"
    pd.DataFrame(rows, columns=["label", "text"]).to_csv(path, index=False)
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert got.returncode == 0, got.stderr


def _zhang(real, ids):
    """Zhang et al. rows as distributed: every field quoted, quotes doubled, line breaks as a literal \\n."""
    def field(text):
        return '"' + text.replace('"', '""').replace("\n", "\\n") + '"'
    return "".join(f"{field(ids[label])},{field(text)}\n" for label, text in zip(real.labels, real.texts))


@pytest.mark.parametrize("dataset, expected", [
    ("yelp_review_polarity", {"1": "negative", "2": "positive"}),
    ("amazon_review_polarity", {"1": "negative", "2": "positive"}),
    ("my_reviews", {}),  # any other folder: no names
])
def test_an_unpacked_zhang_archive_without_classes_txt_trains_with_its_names(tmp_path, real, dataset, expected):
    # yelp/amazon polarity and full archives ship train.csv, test.csv and readme.txt, no classes.txt.
    folder = tmp_path / f"{dataset}_csv"
    folder.mkdir()
    (folder / "train.csv").write_text(_zhang(real, {"negative": "1", "positive": "2"}), encoding="utf-8")
    (folder / "readme.txt").write_text("The classes are 1 = negative, 2 = positive.\n")
    data = read_labeled(str(folder / "train.csv"))
    assert len(data) == len(real) and data.names == expected
    got = cli_in_process("train", "--train", folder / "train.csv", "--output", tmp_path / "m", "--epochs", "1",
                         "--no-progress")
    assert got.returncode == 0, got.stderr
    answer = cli_in_process("predict", "--model", tmp_path / "m", input="the battery died after a week\n")
    first = json.loads(answer.stdout)
    assert first["label"] == expected.get(first["class_id"], first["class_id"])


def test_a_star_archive_folder_names_its_stars_and_refuses_other_numbering(tmp_path, real):
    folder = tmp_path / "yelp_review_full_csv"
    folder.mkdir()
    (folder / "train.csv").write_text(_zhang(real, {"negative": "1", "positive": "5"}), encoding="utf-8")
    assert read_labeled(str(folder / "train.csv")).names == {"1": "1 star", "5": "5 stars"}
    (folder / "train.csv").write_text(_zhang(real, {"negative": "0", "positive": "4"}), encoding="utf-8")
    with pytest.raises(FastTextError, match="yelp_review_full_csv.*numbering is not the data's"):
        read_labeled(str(folder / "train.csv"))


def test_fasttext_lines_with_the_label_after_the_text_are_detected(tmp_path, real):
    path = tmp_path / "after.txt"
    path.write_text("".join(f"{text} __label__{label}\n" for label, text in zip(real.labels, real.texts)),
                    encoding="utf-8")
    data = read_labeled(str(path))
    assert data.labels == real.labels
    assert data.texts == [" ".join(text.split()) for text in real.texts]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory, real):
    from fasttext_lib.writers import write_csv

    where = tmp_path_factory.mktemp("bundle")
    write_csv(real, str(where / "train.csv"))
    got = cli_in_process("train", "--train", where / "train.csv", "--output", where / "m", "--epochs", "2",
                         "--ngrams", "2", "--no-progress")
    assert got.returncode == 0, got.stderr
    return where / "m"


def test_a_labeled_line_is_answered_as_its_text_by_every_predict_route(bundle, real):
    # fastText's predict skips __label__ words: predicting a .test file's lines answers their texts. Here the
    # label was a word of the review (an unknown one, and a bigram), which moved every probability.
    from fasttext_lib import sm_serve
    from fasttext_lib.predict import Predictor

    texts = [" ".join(t.split()) for t in real.texts[:30]]
    labeled = [f"__label__{label} {text}" if i % 2 else f"{text} __label__{label}"
               for i, (label, text) in enumerate(zip(real.labels, texts))]
    predictor = Predictor.load(bundle)
    plain = predictor.predict_proba(texts)
    assert (predictor.predict_proba(labeled) == plain).all()
    cli = cli_in_process("predict", "--model", bundle, input="".join(line + "\n" for line in labeled))
    assert [json.loads(line)["probability"] for line in cli.stdout.splitlines()] == \
        [float(p.max()) for p in plain]
    model = sm_serve.model_fn(str(bundle))
    body = sm_serve.output_fn(sm_serve.predict_fn(sm_serve.input_fn(json.dumps(labeled), "application/json"), model),
                              "application/json")[0]
    assert [a["probability"] for a in json.loads(body)] == [float(p.max()) for p in plain]


def _served(bundle, body, content_type="text/csv"):
    from fasttext_lib import sm_serve

    model = sm_serve.model_fn(str(bundle))
    return json.loads(sm_serve.output_fn(sm_serve.predict_fn(sm_serve.input_fn(body.encode("utf-8"), content_type),
                                                             model), "application/json")[0])


@pytest.mark.parametrize("shape", ["zhang", "zhang 3 columns, another set's ids", "pandas header", "unquoted class"])
def test_a_labeled_csv_file_is_answered_for_its_texts_by_predict_and_the_endpoint(tmp_path, bundle, real, shape):
    # predict on a Zhang test file ("positive","the text") scored the class and the commas as words of the review,
    # and so did the endpoint's text/csv. Now the file is read as training reads it, one answer per record.
    from fasttext_lib.writers import csv_line
    from fasttext_lib.predict import Predictor

    part = real.head(40)
    path = tmp_path / "test.csv"
    if shape == "zhang":
        path.write_text("".join(csv_line(label, text) for label, text in zip(part.labels, part.texts)))
    elif shape.startswith("zhang 3"):  # a quoted number is a class even when the model does not know it
        q = [t.replace('"', '""') for t in part.texts]
        path.write_text("".join(f'"{i % 4 + 1}","{t[:10]}","{t[10:]}"\n' for i, t in enumerate(q)))
    elif shape == "pandas header":
        _frame(part, label="labels", text="texts").to_csv(path, index=False)
    else:
        path.write_text("".join(f"{label},{text}\n" for label, text in zip(part.labels, part.texts)
                                if "," not in text and '"' not in text))
    expected = Predictor.load(bundle).predict(read_labeled(str(path), "csv", find_names=False).texts)
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 0, cli.stderr
    assert [json.loads(line) for line in cli.stdout.splitlines()] == expected
    if shape.startswith("zhang 3"):  # (another set's classes: evaluate would refuse them, and the note says so)
        assert "read as CSV, as training reads a labeled one" in cli.stderr and "not this model's classes" in cli.stderr
    else:
        assert "read as labeled CSV" in cli.stderr
    if shape != "pandas header":  # a header is no record of the endpoint's (it would be answered as a review)
        assert _served(bundle, path.read_text()) == expected
    raw = cli_in_process("predict", "--model", bundle, "--input", path, "--format", "text")  # the lines as they are
    assert [json.loads(line) for line in raw.stdout.splitlines()] == \
        Predictor.load(bundle).predict(path.read_text().splitlines())


@pytest.mark.parametrize("header", [False, True])
def test_a_csv_with_its_class_last_is_answered_for_its_texts_as_evaluate_scores_them(tmp_path, bundle, real, header):
    # df[["text", "label"]].to_csv(header=False, index=False) of a test split (and the same under a header of names
    # of the user's own, feedback,verdict): predict scored each class as a word of its review, the answers then
    # partly the label (0.692 against the labels for 0.668 of the same rows written class first), the header
    # answered as a review too (301 answers for 300 rows). predict, the endpoint and evaluate (told the columns,
    # as the note says) read the same rows, the class left out of each text
    from fasttext_lib.predict import Predictor

    part = real.head(60)
    texts = [" ".join(t.split()) for t in part.texts]
    path = tmp_path / "test.csv"
    pd.DataFrame({"feedback": texts, "verdict": part.labels}).to_csv(path, header=header, index=False)
    expected = Predictor.load(bundle).predict(texts)
    for fmt in ("csv", "auto"):  # (--format csv read the text as the class, and answered the class)
        cli = cli_in_process("predict", "--model", bundle, "--input", path, "--format", fmt)
        answers = [json.loads(line) for line in cli.stdout.splitlines()]
        assert cli.returncode == 0 and answers == expected, cli.stderr
        assert cli.stderr.count("\n") == 1 and "read as labeled CSV" in cli.stderr
    assert _served(bundle, path.read_text()) == expected
    if header:  # evaluate scores the rows predict answers, given the flags its note gives
        flags = cli.stderr.split("evaluate --data ", 1)[1].split(" scores")[0].split()[1:]
        assert flags == ["--label-column", "verdict", "--text-column", "feedback"]
        evaluated = cli_in_process("evaluate", "--model", bundle, "--data", path, *flags)
        accuracy = sum(a["label"] == label for a, label in zip(answers, part.labels)) / len(texts)
        assert json.loads(evaluated.stdout.splitlines()[-1])["accuracy"] == pytest.approx(accuracy)
    else:  # evaluate does not score rows whose class it would read from the text's column: it asks for a header (its
        # first text quoted, it read the texts as classes and refused them as unknown labels, saying nothing of why)
        assert '"' in path.read_text().splitlines()[0][:1]
        evaluated = cli_in_process("evaluate", "--model", bundle, "--data", path)
        assert evaluated.returncode != 0 and evaluated.stderr.count("error:") == 1
        assert "then its class" in evaluated.stderr and "header row naming its columns" in evaluated.stderr


@pytest.mark.parametrize("sep", ["\t", ","], ids=["tsv", "csv"])
def test_predicts_note_on_class_last_rows_without_a_header_gives_a_conversion_that_evaluate_then_reads(tmp_path, bundle,
                                                                                                    real, sep):
    # great food<TAB>positive, no header: the note said to add a text,label header, which is no header of a TSV (its
    # rows tab-separated, the header one field). The pandas line it gives, run, writes a file evaluate scores
    from fasttext_lib.predict import Predictor

    part = real.head(40)
    texts = [" ".join(t.split()) for t in part.texts]
    path = tmp_path / "test.tsv"
    pd.DataFrame({"text": texts, "label": part.labels}).to_csv(path, sep=sep, header=False, index=False)
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    answers = [json.loads(line) for line in cli.stdout.splitlines()]
    assert cli.returncode == 0 and answers == Predictor.load(bundle).predict(texts), cli.stderr
    assert "its class last" in cli.stderr and cli.stderr.count("\n") == 1, cli.stderr
    command = cli.stderr.split("pandas: ", 1)[1].rsplit(")", 1)[0]
    converted = tmp_path / "converted.csv"
    exec(command, {"pd": pd, "path": str(path), "new_path": str(converted)})
    evaluated = cli_in_process("evaluate", "--model", bundle, "--data", converted)
    assert evaluated.returncode == 0, evaluated.stderr
    accuracy = sum(a["label"] == label for a, label in zip(answers, part.labels)) / len(texts)
    assert json.loads(evaluated.stdout.splitlines()[-1])["accuracy"] == pytest.approx(accuracy)


@pytest.mark.parametrize("columns, header", [(("text", "label"), False), (("label", "text"), False),
                                            (("text", "label"), True)], ids=["class-last", "class-first", "header"])
def test_format_csv_reads_a_tsv_as_auto_does(tmp_path, bundle, real, columns, header):
    # --format csv on a tab-separated file read it with commas: each record one field ("expected class,text but got 1
    # column(s)"), or malformed CSV at a text's quotation mark, where auto reads it as a TSV
    from fasttext_lib.predict import Predictor

    part = real.head(40)
    texts = [" ".join(t.split()) for t in part.texts]
    path = tmp_path / "test.tsv"
    pd.DataFrame({"text": texts, "label": part.labels})[list(columns)].to_csv(path, sep="\t", header=header,
                                                                              index=False)
    expected = Predictor.load(bundle).predict(texts)
    for fmt in ("auto", "csv"):
        cli = cli_in_process("predict", "--model", bundle, "--input", path, "--format", fmt)
        assert cli.returncode == 0 and [json.loads(line) for line in cli.stdout.splitlines()] == expected, cli.stderr
        assert "read as labeled TSV" in cli.stderr and cli.stderr.count("\n") == 1, cli.stderr


@pytest.mark.parametrize("header", ["label,text\n", ""], ids=["header", "headerless"])
def test_a_quoted_field_typed_after_a_space_is_read_as_meant_by_training_and_predict(tmp_path, bundle, header):
    # positive, "great food, really" (a space before the opening quotation mark, as typed by hand): the quotation mark
    # was read as text and the field cut at the comma inside it, ' "great food' and ' really"' (the comma lost; under a
    # class-last header, a row too wide). Both routes read it as pandas' skipinitialspace=True does; a quotation mark
    # that closes in its field (positive, "Best" phone) is read as written, as before
    from fasttext_lib.predict import Predictor

    rows = ["positive,great food and friendly staff", "negative,awful cold food", "positive,loved it",
            "negative,never again", 'positive, "great food, really"', 'negative, "Worst" meal, ever',
            "positive,nice place"]
    path = tmp_path / "typed.csv"
    path.write_text(header + "\n".join(rows) + "\n")
    texts = ["great food and friendly staff", "awful cold food", "loved it", "never again", "great food, really",
             ' "Worst" meal', "nice place"]
    data = read_labeled(str(path))
    assert data.texts[4] == "great food, really" and data.labels[4] == "positive"
    assert [t.strip() for t in data.texts[:4] + data.texts[6:]] == texts[:4] + texts[6:]
    assert data.texts[5] == ' "Worst" meal  ever'  # (no opening quote: three fields, as before)
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 0, cli.stderr
    answers = [json.loads(line) for line in cli.stdout.splitlines()]
    assert answers == Predictor.load(bundle).predict(data.texts)
    # a quoted field after a space that goes on over a line break, or with text after its closing quotation mark:
    # one error line naming the record (read on, its text was cut at the commas inside it); past the first records,
    # which tell a headerless file's format
    for bad in ('positive, "great food,\nreally"', 'positive, "great, food" really'):
        path.write_text(header + "\n".join(rows[:4] * 15 + [bad] + rows[6:]) + "\n")
        line = 61 + bool(header)
        with pytest.raises(FastTextError, match=rf"typed.csv:{line}: malformed CSV record .* quotation mark after a "
                                                r"comma and a space"):
            read_labeled(str(path))
        cli = cli_in_process("predict", "--model", bundle, "--input", path)
        assert cli.returncode != 0 and cli.stdout == "" and cli.stderr.count("error:") == 1, cli.stderr
        assert f"typed.csv:{line}: malformed CSV record" in cli.stderr


def test_predictor_evaluate_of_class_last_rows_read_class_first_says_they_are_a_text_and_then_its_class(tmp_path,
                                                                                                       bundle, real):
    # read_labeled of a headerless text,label CSV whose first text is quoted reads it class first (as evaluate does);
    # Predictor.evaluate of that listed its texts as unknown labels, without the hint the CLI's evaluate gives
    from fasttext_lib.predict import Predictor

    part = real.head(40)
    path = tmp_path / "test.csv"
    pd.DataFrame({"text": [" ".join(t.split()) for t in part.texts], "label": part.labels}).to_csv(
        path, header=False, index=False)
    assert path.read_text().startswith('"')
    data = read_labeled(str(path))
    with pytest.raises(FastTextError, match=r"^evaluation data: each document's text is one of the model's classes "
                                            r".*then its class.*header row naming its columns"):
        Predictor.load(bundle).evaluate(data)


@pytest.mark.parametrize("text_name, label_name", [("feedback, text", "verdict"), ('the "review"', "-verdict"),
                                                     ("-feedback", "my verdict")])
def test_predicts_class_last_note_gives_an_evaluate_command_that_scores_the_file(tmp_path, bundle, real, text_name,
                                                                                   label_name):
    # a class-last header's names with a comma, a quote, a leading dash or a space: the note's evaluate command was
    # --text-column 'feedback, text' (split at its comma: "names no such column") or --label-column -verdict (argparse
    # took it for a flag). The command it gives, pasted, scores the file (once the header is renamed as it says)
    import shlex

    part = real.head(40)
    texts = [" ".join(t.split()) for t in part.texts]
    path = tmp_path / "test.csv"
    pd.DataFrame({text_name: texts, label_name: part.labels}).to_csv(path, index=False)
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    answers = [json.loads(line) for line in cli.stdout.splitlines()]
    assert cli.returncode == 0 and len(answers) == len(texts), cli.stderr
    command = shlex.split(cli.stderr.split("(evaluate ", 1)[1].split(" scores the model")[0])
    if "," in text_name:  # (--text-column splits at commas: the note says what to rename it, and the command names it so)
        assert f"renames {text_name!r} as 'feedback text'" in cli.stderr
        pd.DataFrame({"feedback text": texts, label_name: part.labels}).to_csv(path, index=False)
    evaluated = cli_in_process("evaluate", "--model", bundle, *command)
    assert evaluated.returncode == 0, evaluated.stderr
    accuracy = sum(a["label"] == label for a, label in zip(answers, part.labels)) / len(texts)
    assert json.loads(evaluated.stdout.splitlines()[-1])["accuracy"] == pytest.approx(accuracy)


def _title_and_body(real):
    titles, bodies = [], []
    for text in real.texts:
        words = text.split()
        titles.append(" ".join(words[:3]))
        bodies.append(" ".join(words[3:]))
    return titles, bodies


@pytest.mark.parametrize("header", [("title", "body"), ("review", "comment"), ("Summary", "Text"),
                                    ("title", "body", "comment")])
def test_a_csv_whose_header_names_only_text_columns_is_answered_for_every_column(tmp_path, bundle, real, header):
    # pandas' df[["title", "body"]].to_csv(index=False), a file of reviews to label: the header was read as
    # class,text, so predict and the endpoint answered the body only, the title dropped as if it were a class
    from fasttext_lib import sm_serve
    from fasttext_lib.columns import csv_text
    from fasttext_lib.predict import Predictor

    part = real.head(40)
    titles, bodies = _title_and_body(part)
    columns = [titles, bodies, part.texts][:len(header)]
    path = tmp_path / "reviews.csv"
    pd.DataFrame(dict(zip(header, columns))).to_csv(path, index=False)
    expected = Predictor.load(bundle).predict([csv_text(list(row)) for row in zip(*columns)])
    for fmt in ("auto", "csv"):
        cli = cli_in_process("predict", "--model", bundle, "--input", path, "--format", fmt)
        assert cli.returncode == 0, cli.stderr
        assert [json.loads(line) for line in cli.stdout.splitlines()] == expected
        assert "header row names text columns and no class" in cli.stderr and "labeled" not in cli.stderr
    assert _served(bundle, path.read_text(), "text/csv; header=present") == expected
    reviews = sm_serve.input_fn(path.read_bytes(), "text/csv; header=present")
    assert list(reviews) == [csv_text(list(row)) for row in zip(*columns)]


@pytest.mark.parametrize("header", ["review", "Text", '"review"'])
def test_a_csv_of_one_text_column_with_its_header_is_answered_per_record(tmp_path, bundle, real, header):
    # pandas' df[["review"]].to_csv(index=False), the usual file of reviews to label: predict answered its header
    # line as a review (every answer after it one off) and a quoted review's quotes with it
    from fasttext_lib.predict import Predictor

    texts = real.head(40).texts + ["good, but slow", 'he said "never again"', "line one\nline two"]
    path = tmp_path / "reviews.csv"
    body = pd.DataFrame({"review": texts}).to_csv(index=False).split("\n", 1)[1]
    path.write_text(f"{header}\n{body}")
    expected = Predictor.load(bundle).predict([t.replace("\n", " ") for t in texts])
    for fmt in ("auto", "csv"):
        cli = cli_in_process("predict", "--model", bundle, "--input", path, "--format", fmt)
        assert cli.returncode == 0, cli.stderr
        assert [json.loads(line) for line in cli.stdout.splitlines()] == expected
    assert _served(bundle, path.read_text(), "text/csv; header=present") == expected
    # a first line "review" that is a review (it recurs, or nothing follows it) is answered as one, as before
    for lines in (["review", "review", "great food"], ["Review"]):
        path.write_text("\n".join(lines) + "\n")
        cli = cli_in_process("predict", "--model", bundle, "--input", path)
        assert cli.returncode == 0 and len(cli.stdout.splitlines()) == len(lines), cli.stderr
    # written by hand (or with sep="\t"), a review's commas unquoted: answered whole, commas kept (they were
    # dropped, the fields joined with spaces, where the endpoint keeps them)
    unquoted = ["good, but slow", "cold food, rude staff, long wait"] + real.head(10).texts
    path.write_text("review\n" + "".join(t.replace('"', "") + "\n" for t in unquoted))
    expected = Predictor.load(bundle).predict([t.replace('"', "") for t in unquoted])
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 0 and [json.loads(line) for line in cli.stdout.splitlines()] == expected, cli.stderr
    assert _served(bundle, path.read_text(), "text/csv; header=present") == expected


def test_training_on_a_csv_whose_header_names_only_text_columns_is_refused(tmp_path, real):
    # it trained on the titles as classes, one class per review
    titles, bodies = _title_and_body(real)
    path = tmp_path / "reviews.csv"
    pd.DataFrame({"title": titles, "body": bodies}).to_csv(path, index=False)
    with pytest.raises(FastTextError, match=r"reviews.csv:1: the CSV header row \(title,body\) names no class "
                                            r"column, only text columns"):
        read_labeled(str(path))
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("error:") == 1 and "names no class column" in got.stderr
    assert not (tmp_path / "m").exists()
    # a class column first, named or not, is read as before: the class, then every other column
    for header in (["label", "title", "body"], ["Class Index", "Title", "Description"], ["topic", "question", "answer"]):
        pd.DataFrame(dict(zip(header, [real.labels, titles, bodies]))).to_csv(path, index=False)
        data = read_labeled(str(path))
        assert data.labels == real.labels and data.texts == [f"{t} {b}".strip() for t, b in zip(titles, bodies)]
    # a headerless file whose first row's class recurs is data, as a header named label,text would be
    path.write_text("question,comment\n" + "".join(f"question,{t}\n" for t in bodies[:5]))
    data = read_labeled(str(path))
    assert data.labels == ["question"] * 6 and data.texts[0] == "comment"


def test_reviews_that_only_look_like_csv_stay_reviews(tmp_path, bundle):
    from fasttext_lib.predict import Predictor

    lines = ['"Amazing!" is all I can say', "positive, but the battery died in a week", '"Great","loved it"',
             "1,2,3 and it broke", "negative"]
    expected = Predictor.load(bundle).predict(lines)
    for first in range(len(lines)):
        reordered = lines[first:] + lines[:first]
        cli = cli_in_process("predict", "--model", bundle, input="".join(line + "\n" for line in reordered))
        assert cli.returncode == 0, cli.stderr
        assert [json.loads(line) for line in cli.stdout.splitlines()] == expected[first:] + expected[:first]
        assert "CSV" not in cli.stderr
    # the endpoint's text/csv: one review per record, its unquoted commas kept
    assert _served(bundle, "positive, but the battery died in a week\n") == [expected[1]]


def test_a_few_unquoted_lines_that_open_with_a_class_name_are_reviews(tmp_path, bundle, real):
    # "positive,would buy again" alone was read as a labeled CSV row (the class positive, then the text) by predict and
    # the endpoint's text/csv: one line is too thin a sign. Unquoted, it takes MIN_UNQUOTED_ROWS rows.
    from fasttext_lib.formats import MIN_UNQUOTED_ROWS
    from fasttext_lib.predict import Predictor

    predictor = Predictor.load(bundle)
    texts = [" ".join(t.split()) for t in real.texts if "," not in t and '"' not in t][:MIN_UNQUOTED_ROWS]
    lines = ["positive,would buy again"] + [f"{label},{text}" for label, text in
                                             zip(["negative", "positive", "negative"], texts)]
    for n in range(1, MIN_UNQUOTED_ROWS):
        given = lines[:n]
        cli = cli_in_process("predict", "--model", bundle, input="".join(line + "\n" for line in given))
        assert cli.returncode == 0 and "CSV" not in cli.stderr, cli.stderr
        assert [json.loads(line) for line in cli.stdout.splitlines()] == predictor.predict(given)
        assert _served(bundle, "".join(line + "\n" for line in given)) == predictor.predict(given)
    # as many rows as it takes: labeled CSV, answered for the texts
    given = lines[:MIN_UNQUOTED_ROWS]
    texts = [line.split(",", 1)[1] for line in given]
    cli = cli_in_process("predict", "--model", bundle, input="".join(line + "\n" for line in given))
    assert cli.returncode == 0 and "read as labeled CSV" in cli.stderr, cli.stderr
    assert [json.loads(line) for line in cli.stdout.splitlines()] == predictor.predict(texts)
    assert _served(bundle, "".join(line + "\n" for line in given)) == predictor.predict(texts)
    # a quoted class, or a header row, is a sign on its own: one record is a row
    for body in ('"positive","would buy again"\n', 'label,text\npositive,would buy again\n'):
        cli = cli_in_process("predict", "--model", bundle, input=body)
        assert cli.returncode == 0 and "read as labeled CSV" in cli.stderr, cli.stderr
        assert [json.loads(line) for line in cli.stdout.splitlines()] == predictor.predict(["would buy again"])
    assert _served(bundle, '"positive","would buy again"\n') == predictor.predict(["would buy again"])
    cli = cli_in_process("predict", "--model", bundle, "--format", "csv", input="positive,would buy again\n")
    assert [json.loads(line) for line in cli.stdout.splitlines()] == predictor.predict(["would buy again"])


@pytest.fixture(scope="module")
def polarity_bundle(tmp_path_factory, real):
    """A model whose classes are "1" and "2", as one trained on Yelp or Amazon polarity."""
    where = tmp_path_factory.mktemp("polarity")
    (where / "train.csv").write_text("".join(f'"{1 if label == "negative" else 2}","{text.replace(chr(34), 2 * chr(34))}"\n'
                                             for label, text in zip(real.labels, real.texts)))
    got = cli_in_process("train", "--train", where / "train.csv", "--output", where / "m", "--epochs", "2",
                         "--no-progress")
    assert got.returncode == 0, got.stderr
    return where / "m"


@pytest.fixture(scope="module")
def named_polarity_bundle(polarity_bundle, tmp_path_factory):
    """The polarity model's data, its classes 1 and 2 named negative and positive (a Yelp polarity model)."""
    where = tmp_path_factory.mktemp("named_polarity")
    got = cli_in_process("train", "--train", polarity_bundle.parent / "train.csv", "--output", where / "m",
                         "--epochs", "2", "--no-progress", "--label-names", "1=negative,2=positive")
    assert got.returncode == 0, got.stderr
    return where / "m"


def test_a_labeled_csv_whose_classes_are_written_by_name_is_answered_for_its_texts(named_polarity_bundle, real):
    # rows labeled by the names the model shows (negative,the food was cold) were read as reviews: the class name was
    # scored as a word of each review, as predict and the endpoint recognized class ids only
    from fasttext_lib.formats import MIN_UNQUOTED_ROWS
    from fasttext_lib.predict import Predictor

    predictor = Predictor.load(named_polarity_bundle)
    part = real.head(12)
    texts = [" ".join(t.split()) for t in part.texts]
    for lines in ([f"{label},{text}" for label, text in zip(part.labels, texts) if "," not in text and '"' not in text],
                  ['"{}","{}"'.format(label, text.replace('"', '""')) for label, text in zip(part.labels, texts)]):
        assert len(lines) >= MIN_UNQUOTED_ROWS
        body = "".join(line + "\n" for line in lines)
        expected = predictor.predict([next(csv.reader([line]))[1] for line in lines])
        assert expected != predictor.predict(lines)  # the class name as a word moves the answers
        cli = cli_in_process("predict", "--model", named_polarity_bundle, input=body)
        assert cli.returncode == 0 and "read as labeled CSV" in cli.stderr, cli.stderr
        assert [json.loads(line) for line in cli.stdout.splitlines()] == expected
        assert _served(named_polarity_bundle, body) == expected
    # unquoted, a few lines that open with a class's name are still reviews
    lines = ["positive,would buy again", "negative,never again", "positive,loved it"]
    for n in range(1, MIN_UNQUOTED_ROWS):
        body = "".join(line + "\n" for line in lines[:n])
        cli = cli_in_process("predict", "--model", named_polarity_bundle, input=body)
        assert cli.returncode == 0 and "CSV" not in cli.stderr, cli.stderr
        assert [json.loads(line) for line in cli.stdout.splitlines()] == predictor.predict(lines[:n])
        assert _served(named_polarity_bundle, body) == predictor.predict(lines[:n])


# Reviews as people write them: a number with a thousands or decimal comma, a count, a rating; and reviews that open
# with a word that names a CSV column. Each was read as a labeled CSV row or header by a model with classes 1 and 2
# (its first words dropped, or the file refused at its next line without a comma).
NUMBER_REVIEWS = ["1,000 calories for a salad? No thanks.", "2,000 calories of pure joy, worth every bite.",
                  "2,5 stars, rounding up because the staff was nice.", "1,5 hours wait for a table on a Tuesday.",
                  "1,2,3 done! Easiest setup ever.", "2,99 for a coffee is fine by me.",
                  "Class, style and comfort. Love these shoes.", "Rating, 5 out of 5 from our whole family.",
                  "Score, 10/10 for the fries.", "Label, packaging and bottle all look cheap."]


@pytest.mark.parametrize("first", NUMBER_REVIEWS)
def test_a_review_that_opens_like_a_csv_row_is_a_review(polarity_bundle, real, first):
    from fasttext_lib import sm_serve
    from fasttext_lib.predict import Predictor

    lines = [first] + [" ".join(t.split()) for t in real.texts[:30]]
    expected = Predictor.load(polarity_bundle).predict(lines)
    for given in (lines, [first], [first, "1,5 hours wait, never again."]):  # also alone, or beside another
        cli = cli_in_process("predict", "--model", polarity_bundle, input="".join(line + "\n" for line in given))
        assert cli.returncode == 0 and "CSV" not in cli.stderr, cli.stderr
        assert [json.loads(line) for line in cli.stdout.splitlines()] == Predictor.load(polarity_bundle).predict(given)
    assert [json.loads(line) for line in cli_in_process("predict", "--model", polarity_bundle, input="".join(
        line + "\n" for line in lines)).stdout.splitlines()] == expected
    model = sm_serve.model_fn(str(polarity_bundle))  # the endpoint's text/csv: each record whole, its commas kept
    records = [line for line in lines if '"' not in line]
    for given in (records, [first]):
        body = "".join(line + "\n" for line in given).encode()
        got = sm_serve.predict_fn(sm_serve.input_fn(body, "text/csv"), model)
        assert [dict(a) for a in got] == Predictor.load(polarity_bundle).predict(given)


def test_a_zhang_test_file_of_one_line_is_read_as_csv(tmp_path, polarity_bundle):
    # a quoted class id is a sign on its own, however few the records
    from fasttext_lib.predict import Predictor

    path = tmp_path / "test.csv"
    path.write_text('"2","great food"\n')
    cli = cli_in_process("predict", "--model", polarity_bundle, "--input", path)
    assert cli.returncode == 0 and "read as labeled CSV" in cli.stderr, cli.stderr
    expected = Predictor.load(polarity_bundle).predict(["great food"])
    assert [json.loads(line) for line in cli.stdout.splitlines()] == expected
    assert _served(polarity_bundle, path.read_text()) == expected


def test_an_unquoted_labeled_csv_whose_first_text_opens_with_a_number_is_still_read_as_csv(tmp_path, polarity_bundle,
                                                                                              real):
    # pandas writes 1,3 months of use ... unquoted: beside the rows after it, still a labeled row
    from fasttext_lib.predict import Predictor

    texts = ["3 months of use and it no longer recognizes anything."] + \
        [" ".join(t.split()) for t in real.texts[:20] if "," not in t and '"' not in t]
    path = tmp_path / "pandas.csv"
    path.write_text("".join(f"{1 + i % 2},{t}\n" for i, t in enumerate(texts)))
    cli = cli_in_process("predict", "--model", polarity_bundle, "--input", path)
    assert cli.returncode == 0 and "read as labeled CSV" in cli.stderr, cli.stderr
    assert [json.loads(line) for line in cli.stdout.splitlines()] == Predictor.load(polarity_bundle).predict(texts)


def test_a_labeled_csv_input_with_a_line_that_is_no_row_is_one_error_naming_it(tmp_path, bundle):
    path = tmp_path / "mixed.csv"
    path.write_text('"positive","a great phone"\n"negative","it broke"\njust a review\n')
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 2 and cli.stdout == ""
    assert cli.stderr.count("\n") == 1 and "mixed.csv:3: malformed CSV row" in cli.stderr
    assert "--format text" in cli.stderr
    with pytest.raises(Exception, match="CSV record 3 has one column, but record 1 is a labeled row"):
        _served(bundle, path.read_text())


def _sentiment140(real):
    """Sentiment140's layout, "class","id","date","query","user","text", on real sentences (0 = negative, 4 = positive)."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for i, (label, text) in enumerate(zip(real.labels, real.texts)):
        writer.writerow(["0" if label == "negative" else "4", str(1467810369 + 977 * i),
                         f"Mon Apr 06 22:{i % 60:02d}:45 PDT 2009", "NO_QUERY", f"user{i * 7919 % 100003}", text])
    return out.getvalue()


def test_a_file_with_id_date_and_user_columns_is_refused_not_trained_on_as_words(tmp_path, real, bundle):
    # Zhang's rule (every column after the class is text) trained Sentiment140 on its tweet ids, dates, NO_QUERY and
    # user names as words of every tweet.
    path = tmp_path / "training.1600000.processed.noemoticon.csv"
    path.write_text(_sentiment140(real))
    with pytest.raises(FastTextError, match=r"processed\.noemoticon\.csv: not every column after the class is text: "
                                            r"over the first 51 rows, column 2 holds only whole numbers \('1467810369', "
                                            r"\.\.\.\); column 4 is 'NO_QUERY' in every one"):
        read_labeled(str(path))
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and not (tmp_path / "m").exists()
    fix = got.stderr.split("e.g. pandas: ")[1].strip()  # what the line says to do, done
    assert fix == ("pd.read_csv(path, header=None, dtype=str, keep_default_na=False).iloc[:, [0, 5]].to_csv(new_path, "
                   "header=False, index=False)")
    pd.read_csv(path, header=None, dtype=str, keep_default_na=False).iloc[:, [0, 5]].to_csv(
        tmp_path / "fixed.csv", header=False, index=False)
    fixed = read_labeled(str(tmp_path / "fixed.csv"))
    assert fixed.texts == real.texts and set(fixed.labels) == {"0", "4"}
    # with a header row naming its columns (the class first, a text column among the others): the class and the
    # text are read, the rest left out, as for any table (TABLES: amazon_2018, sentiment140_with_header)
    header = '"target","ids","date","flag","user","text"\n'
    (tmp_path / "named.csv").write_text(header + _sentiment140(real))
    named = read_labeled(str(tmp_path / "named.csv"))
    assert named.texts == real.texts and set(named.labels) == {"0", "4"}
    # predict and the endpoint's text/csv read such a file as training does
    body = _sentiment140(real).replace('"0",', '"negative",').replace('"4",', '"positive",')
    with pytest.raises(Exception, match="400 Bad Request: request: not every column after the class is text"):
        _served(bundle, body)


@pytest.mark.parametrize("layout", ["label,drug,review", "label,stars,review", "label,year,review", "class,title,review",
                                    "label,released,review", "label,reviewed,review"])
@pytest.mark.parametrize("header", [True, False])
def test_a_rating_year_or_one_product_column_is_read_as_text(tmp_path, real, layout, header):
    # real review sets carry such a column (a drug review file of one drug; the star rating beside a polarity; a
    # title every early review shares): Zhang's rule reads it as text, as before the id column guard, not refused.
    # A film's year, different in every row (1900 to 2100), was refused as an id column.
    def value(i):
        return {"label,drug,review": "Levonorgestrel", "label,stars,review": str(i % 3 + (1 if i % 2 else 8)),
                "label,year,review": str(2008 + i % 10), "class,title,review": "Great!",
                "label,released,review": str(1900 + i * 37 % 201),
                "label,reviewed,review": str(1999 + i // 6)}[layout]  # review years in file order, each repeated

    rows = [[label, value(i), text] for i, (label, text) in enumerate(zip(real.labels, real.texts))]
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    if header:
        writer.writerow(layout.split(","))
    writer.writerows(rows)
    (tmp_path / "reviews.csv").write_text(out.getvalue())
    data = read_labeled(str(tmp_path / "reviews.csv"))
    if header and layout != "class,title,review":
        # a header that names the class first and a text column beside a column of another name (drug, stars, year)
        # is a table, read as one with the class elsewhere is (review,drug,label): that column is left out, and said
        # so (TABLES: amazon_2018, sentiment140_with_header)
        assert data.labels == real.labels and data.texts == [t for _, _, t in rows]
        return
    assert data.labels == real.labels and data.texts == [f"{v} {t}" if t else v for _, v, t in rows]


@pytest.mark.parametrize("ids", ["four digits", "years but one", "rows 1801 on", "rows 1950 on, a few gone",
                                 "counting down from 2100"])
def test_an_id_column_of_four_digit_numbers_is_refused(tmp_path, real, ids):
    # years are read as text; four-digit ids that are not all years (1800 to 2100) are still no text, and neither are
    # ids that are (rows 1801 to 1920 of a larger file): they count up row by row, where years repeat or jump about
    def value(i):
        if ids == "four digits":
            return str(1000 + i * 7919 % 9000)
        if ids == "rows 1801 on":
            return str(1801 + i)
        if ids == "rows 1950 on, a few gone":
            return str(1950 + i + i // 7)
        if ids == "counting down from 2100":
            return str(2100 - i)
        return str(2101 if i == 30 else 1900 + i * 37 % 201)

    path = tmp_path / "ids.csv"
    path.write_text("".join(f'"{label}","{value(i)}","{text.replace(chr(34), 2 * chr(34))}"\n'
                            for i, (label, text) in enumerate(zip(real.labels, real.texts))))
    with pytest.raises(FastTextError, match=r"ids.csv: not every column after the class is text: .*column 2 holds only "
                                            r"whole numbers"):
        read_labeled(str(path))


def test_an_id_column_after_the_text_is_refused_with_a_fix_that_keeps_the_text(tmp_path, real):
    # UCI drug reviews' usefulCount after the review: the line said to keep the class and the count column. (Under a
    # header that names the review column, review, the count is left out and said so, as in any table: TABLES.)
    frame = pd.DataFrame({"label": real.labels, "review": real.texts,
                          "useful_count": [(i * 7919) % 1000 for i in range(len(real))]})
    frame.to_csv(tmp_path / "named.csv", index=False)
    notes = []
    named = read_labeled(str(tmp_path / "named.csv"), note=notes.append)
    assert named.texts == real.texts and named.labels == real.labels and any("left out: 'useful_count'" in n for n in notes)
    frame.rename(columns={"review": "patient_story"}).to_csv(tmp_path / "drugs.csv", index=False)
    with pytest.raises(FastTextError, match=r"column 3 holds only whole numbers") as refused:
        read_labeled(str(tmp_path / "drugs.csv"))
    fix = str(refused.value).split("e.g. pandas: ")[1]
    assert fix == "pd.read_csv(path, dtype=str, keep_default_na=False).iloc[:, [0, 1]].to_csv(new_path, index=False)"
    pd.read_csv(tmp_path / "drugs.csv", dtype=str, keep_default_na=False).iloc[:, [0, 1]].to_csv(
        tmp_path / "fixed.csv", index=False)
    fixed = read_labeled(str(tmp_path / "fixed.csv"))
    assert fixed.texts == real.texts and fixed.labels == real.labels


@pytest.mark.parametrize("name", ["ag_news", "dbpedia", "yahoo_answers", "amazon_review_full", "yelp_review_polarity"])
def test_zhang_sets_with_several_text_columns_still_read_every_column(tmp_path, real, name):
    # the id/constant column check must not touch real Zhang layouts, over more rows than it looks at
    rows, expected = [], []
    for i, (label, text) in enumerate(zip(real.labels, real.texts)):
        words = text.split()
        title, body = " ".join(words[:3]), " ".join(words[3:])
        cls = str(i % 4 + 1)
        if name == "ag_news":
            cols = [cls, title, body]
        elif name == "dbpedia":
            cols = [cls, title, " " + body]
        elif name == "yahoo_answers":
            cols = [cls, title, body if i % 3 else "", text]
        elif name == "amazon_review_full":
            cols = [cls, "" if i % 5 == 0 else ("Great" if i % 2 else title), body]
        else:
            cols = [cls, text]
        rows.append(cols)
        expected.append(" ".join(c for c in cols[1:] if c))
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_MINIMAL if name == "dbpedia" else csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    (tmp_path / "train.csv").write_text(out.getvalue())
    data = read_labeled(str(tmp_path / "train.csv"))
    assert len(data) == len(real) > 100 and data.texts == expected and data.labels == [r[0] for r in rows]


HOSTILE_REVIEWS = [
    "The food was great! 😀👍 Would come back.",
    "Café crème brûlée",                        # precomposed
    "Cafe\u0301 cre\u0300me bru\u0302le\u0301e",  # combining accents (NFD): other words, as in fastText
    "Great\u00a0value,\u00a0terrible\u00a0service",
    "zero\u200bwidth\u200djoiner",
    "全角句読点、テスト。ＧＲＥＡＴ！",
    "שלום עולם مرحبا بالعالم good",
    "Movie was bad.<br /><br />Really bad &amp; boring &quot;avoid&quot;",
    "!!!???...",
    "",
    "   ",
    'He said "wow", then; left: ok',
    "tab\tseparated\twords",
    "line\u2028separator, \x85 next line and \x0c form feed",
    "ΣΊΣΥΦΟΣ ὈΔΥΣΣΕΎΣ İstanbul",
    "x" * 5000 + " great",
]


def test_hostile_reviews_get_the_same_answer_from_every_route(bundle):
    import io

    from fasttext_lib import sm_serve
    from fasttext_lib.predict import Predictor

    reference = Predictor.load(bundle).predict(HOSTILE_REVIEWS)
    cli = cli_in_process("predict", "--model", bundle, input="".join(r + "\n" for r in HOSTILE_REVIEWS))
    assert [json.loads(line) for line in cli.stdout.splitlines()] == reference
    model = sm_serve.model_fn(str(bundle))

    def endpoint(body, content_type, accept="application/json"):
        inputs = sm_serve.input_fn(body.encode("utf-8"), content_type)
        return sm_serve.output_fn(sm_serve.predict_fn(inputs, model), accept)[0]

    records = io.StringIO()
    csv.writer(records).writerows([r] for r in HOSTILE_REVIEWS)
    assert json.loads(endpoint(json.dumps(HOSTILE_REVIEWS), "application/json")) == reference
    assert json.loads(endpoint(records.getvalue(), "text/csv")) == reference
    assert json.loads(endpoint("\r\n".join(HOSTILE_REVIEWS), "text/plain; charset=utf-8")) == reference
    lines = endpoint("".join(json.dumps({"source": r}) + "\n" for r in HOSTILE_REVIEWS), "application/jsonlines",
                     "application/jsonlines").splitlines()
    assert [{"label": a["label"][0], "probability": a["prob"][0], "class_id": a["class_id"][0]}
            for a in map(json.loads, lines)] == reference


@pytest.mark.parametrize("body, labels, texts", [
    # dbpedia: class unquoted, title, description (leading space kept as distributed)
    ('1,"E. D. Abbott Ltd"," Abbott of Farnham E D Abbott Limited was a British coachbuilding business"\n'
     '14,"Bruce Chatwin"," In Patagonia (1977) is a travel book"\n', ["1", "14"],
     ["E. D. Abbott Ltd  Abbott of Farnham E D Abbott Limited was a British coachbuilding business",
      "Bruce Chatwin  In Patagonia (1977) is a travel book"]),
    # yahoo_answers: class, question title, question content (often empty), best answer with literal \n
    ('"5","why doesn\'t an optical mouse work on a glass table?","","Optical mice use an LED\\nand a camera."\n'
     '"2","What is ""pinyin""?","Question","Romanized Chinese\\n\\nwriting"\n', ["5", "2"],
     ["why doesn't an optical mouse work on a glass table? Optical mice use an LED and a camera.",
      'What is "pinyin"? Question Romanized Chinese  writing']),
    # sogou_news: pinyin
    ('"3","zhong1guo2 dian4ying3","2008nian2 dian4ying3 piao4fang2"\n"1","ti3yu4","zu2qiu2 bi3sai4"\n', ["3", "1"],
     ["zhong1guo2 dian4ying3 2008nian2 dian4ying3 piao4fang2", "ti3yu4 zu2qiu2 bi3sai4"]),
])
def test_zhang_multi_column_sets_as_distributed(tmp_path, body, labels, texts):
    path = tmp_path / "train.csv"
    path.write_text(body, encoding="utf-8")
    data = read_labeled(str(path))
    assert data.labels == labels and data.texts == texts


def test_a_zhang_file_whose_first_text_opens_with_a_space_is_read_as_csv(tmp_path, bundle, real):
    # a scraped review keeps its leading spaces ("  this problem vanished after ..." in VADER's Amazon snippets):
    # "positive","  the text" was taken for a review, since a CSV writer puts no space after a comma; quoted, the
    # class is a field all the same
    from fasttext_lib.writers import csv_line
    from fasttext_lib.predict import Predictor

    texts = ["  " + real.texts[0]] + list(real.texts[1:20])
    path = tmp_path / "test.csv"
    path.write_text("".join(csv_line(label, text) for label, text in zip(real.labels, texts)))
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 0 and "read as labeled CSV" in cli.stderr, cli.stderr
    assert [json.loads(line) for line in cli.stdout.splitlines()] == Predictor.load(bundle).predict(texts)


def test_a_labeled_csv_with_an_unclosed_quote_early_on_is_one_error_not_read_as_reviews(tmp_path, bundle, real):
    # the first records decide; an unclosed quote in them (the rest of the file one field, past the csv field limit)
    # made them no records at all, and the file was answered line by line, its classes scored as words
    from fasttext_lib.formats import CSV_FIELD_LIMIT
    from fasttext_lib.writers import csv_line

    path = tmp_path / "test.csv"
    with open(path, "w") as f:
        f.write("".join(csv_line(label, text) for label, text in zip(real.labels[:5], real.texts[:5])))
        f.write('"positive","an unclosed quote\n')
        f.write(("x" * 999 + "\n") * (CSV_FIELD_LIMIT // 1000 + 10))
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 2 and cli.stdout == "" and cli.stderr.count("\n") == 1, cli.stderr[:500]
    assert "test.csv:6: malformed CSV record" in cli.stderr and "--format text" in cli.stderr


def _pandas_index_file(path, real, shape):
    """``real`` written as pandas writes it without index=False (its index column first), in ``shape``; the
    ``(labels, texts)`` the file holds, in its order."""
    frame = _frame(real, sentiment="labels", tweet="texts")
    if shape == "df.to_csv()":  # ,sentiment,tweet over 0, 1, 2, ...
        frame.to_csv(path)
    elif shape == "filtered":  # ,label,text over 0, 2, 3, 5, ...: rows dropped by a filter
        frame = frame[[i % 3 != 1 for i in range(len(real))]]
        frame.rename(columns={"sentiment": "label", "tweet": "text"}).to_csv(path)
    elif shape == "shuffled":  # df.sample(frac=1).to_csv(): ,sentiment,tweet over 83, 53, 70, ...
        frame = frame.sample(frac=1, random_state=0)
        frame.to_csv(path)
    elif shape == "shuffled, Unnamed: 0":  # shuffled, then read back and written again
        frame = frame.sample(frac=1, random_state=1)
        frame.to_csv(path)
        pd.read_csv(path).to_csv(path, index=False)
    else:  # read back and written again: pandas names the old index column "Unnamed: 0", here over 1, 4, 7, ...
        frame.index = range(1, 3 * len(real), 3)
        frame.to_csv(path)
        pd.read_csv(path).to_csv(path, index=False)
    return list(frame["sentiment"]), list(frame["tweet"])


@pytest.mark.parametrize("shape", ["df.to_csv()", "filtered", "Unnamed: 0", "shuffled", "shuffled, Unnamed: 0"])
def test_a_csv_with_pandas_index_column_first_is_read_without_it(tmp_path, real, bundle, shape):
    # df.to_csv(path) without index=False, the most common pandas mistake: ,sentiment,tweet over 0,negative,... was
    # "cannot detect the format", and Unnamed: 0,sentiment,tweet was trained with the row numbers as its classes;
    # so were both when shuffled before they were saved (df.sample(frac=1)), the row numbers in no order
    from fasttext_lib.predict import Predictor

    path = tmp_path / "tweets.csv"
    labels, texts = _pandas_index_file(path, real, shape)
    data = read_labeled(str(path))
    assert data.labels == labels and data.texts == texts
    header = path.read_text().splitlines()[0]
    note = f"{path}: its first column ("
    # training: the classes, not the row numbers, and one note line that says the column was left out
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert got.returncode == 0, got.stderr
    assert got.stderr.count(note) == 1 and f"the rest is read as the columns {header.split(',', 1)[1]}" in got.stderr
    assert Predictor.load(tmp_path / "m").labels == ["negative", "positive"]
    # evaluate: scored against the classes, as the same file without the index column
    clean = tmp_path / "clean.csv"
    pd.read_csv(path, index_col=0).to_csv(clean, index=False)
    by_clean = cli_in_process("evaluate", "--model", bundle, "--data", clean)
    evaluated = cli_in_process("evaluate", "--model", bundle, "--data", path)
    assert evaluated.returncode == 0, evaluated.stderr
    assert evaluated.stdout == by_clean.stdout and json.loads(evaluated.stdout.splitlines()[-1])["n"] == len(data)
    assert evaluated.stderr.count(note) == 1
    # predict --format auto: one answer per record, for its text (neither the header nor the numbers scored)
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 0, cli.stderr
    assert [json.loads(line) for line in cli.stdout.splitlines()] == Predictor.load(bundle).predict(data.texts)
    assert cli.stderr.count(note) == 1 and "read as labeled CSV" in cli.stderr


@pytest.mark.parametrize("shuffled", [False, True])
def test_a_csv_of_pandas_index_and_text_only_is_refused_for_training_and_answered_by_predict(tmp_path, real, bundle,
                                                                                            shuffled):
    # df[["text"]].to_csv(path): ,text over 0,the review ... was trained with each row number as a class of its own
    # (shuffled first, df.sample(frac=1), too)
    from fasttext_lib.predict import Predictor

    path = tmp_path / "reviews.csv"
    frame = _frame(real, text="texts")
    frame = frame.sample(frac=1, random_state=2) if shuffled else frame
    frame.to_csv(path)
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert got.returncode == 2 and not (tmp_path / "m").exists()
    assert got.stderr.splitlines()[-1] == (
        f"error: {path}:1: the CSV header row (,text) names no class column: its first column is pandas' index (row "
        f"numbers, not classes), the rest text; write the file with its classes in a column named e.g. label, without "
        f"the index: pd.DataFrame({{\"label\": labels, \"text\": texts}}).to_csv(path, index=False); or label these "
        f"texts with predict")
    assert sum(line.startswith("error: ") for line in got.stderr.splitlines()) == 1
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 0, cli.stderr
    assert [json.loads(line) for line in cli.stdout.splitlines()] == Predictor.load(bundle).predict(list(frame["text"]))


@pytest.mark.parametrize("shape", ["Series", "Series shuffled", "DataFrame(texts)", "part of a larger frame"])
def test_an_unnamed_series_of_texts_with_pandas_index_is_refused_for_training_and_answered_by_predict(
        tmp_path, real, bundle, shape):
    # pd.Series(texts).to_csv(path): ,0 over 0,the review, 1,... (pandas names an unnamed series' values 0): the index
    # was found, but the header left (0) was read as a class-first row of one column: "malformed CSV row" at line 1
    # for training, and predict answered the header as a review and each row number as a word of its text
    from fasttext_lib.predict import Predictor

    texts = list(real.texts[:60])
    series = {"Series": pd.Series(texts), "Series shuffled": pd.Series(texts).sample(frac=1, random_state=5),
              "DataFrame(texts)": pd.DataFrame(texts)[0],
              "part of a larger frame": pd.Series(list(real.texts) * 3).sample(n=60, random_state=6)}[shape]
    path = tmp_path / "texts.csv"
    (series.to_frame() if shape == "DataFrame(texts)" else series).to_csv(path)
    assert path.read_text().startswith(",0\n") and len(set(series.index)) == len(series) == 60
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert got.returncode == 2 and not (tmp_path / "m").exists()
    assert sum(line.startswith("error: ") for line in got.stderr.splitlines()) == 1
    last = got.stderr.splitlines()[-1]
    assert last.startswith(f"error: {path}:1: the CSV header row (,0) names no class column: its first column is "
                           f"pandas' index (row numbers, not classes)"), last
    assert "index=False" in last and "label" in last
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 0, cli.stderr
    answers = [json.loads(line) for line in cli.stdout.splitlines()]
    assert len(answers) == len(series)
    assert answers == Predictor.load(bundle).predict(list(series))


@pytest.mark.parametrize("classes", ["repeated", "one class, then the other"])
def test_a_series_to_csv_keeps_its_first_column_as_the_class(tmp_path, real, classes):
    # Series.to_csv() also writes an empty first header name (,text), but over the series' index: here the classes,
    # which repeat (not row numbers that count up); they stay the classes
    ids = ["1" if label == "negative" else "2" for label in real.labels]
    order = sorted(range(len(real)), key=lambda i: ids[i]) if classes != "repeated" else range(len(real))
    labels, texts = [ids[i] for i in order], [real.texts[i] for i in order]
    path = tmp_path / "series.csv"
    pd.Series(texts, index=[int(c) for c in labels], name="text").to_csv(path)
    assert path.read_text().startswith(",text\n")
    data = read_labeled(str(path))
    assert data.labels == labels and data.texts == texts
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert got.returncode == 0 and "pandas' index" not in got.stderr, got.stderr


def test_a_pandas_index_that_repeats_or_turns_back_past_the_look_ahead_is_still_left_out(tmp_path, real):
    # pd.concat([a, b]).to_csv(path) numbers b's rows from 0 again (and a shuffle after it mixes them): the look-ahead
    # had found the row numbers, which are left out wherever they go; the concatenation was refused at b's first row
    a, b = _frame(real.head(70), label="labels", text="texts"), _frame(real, label="labels", text="texts")
    path = tmp_path / "concat.csv"
    pd.concat([a, b]).to_csv(path)
    data = read_labeled(str(path))
    assert data.labels == real.labels[:70] + real.labels and data.texts == real.texts[:70] + real.texts
    pd.concat([b, a]).sample(frac=1, random_state=3).to_csv(path)  # shuffled: repeated numbers in the look-ahead
    assert read_labeled(str(path)).labels == list(pd.concat([b, a]).sample(frac=1, random_state=3)["label"])


@pytest.mark.parametrize("shuffled", [False, True])
def test_a_pandas_index_that_holds_no_row_number_past_the_look_ahead_is_named_at_its_line(tmp_path, real, shuffled):
    frame = _frame(real, label="labels", text="texts")
    frame.index = [str(i) for i in range(100)] + ["x5"] + [str(i) for i in range(200, 200 + len(real) - 101)]
    if shuffled:
        frame = pd.concat([frame.head(100).sample(frac=1, random_state=4), frame.iloc[100:]])
    frame.to_csv(tmp_path / "mixed.csv")
    with pytest.raises(FastTextError) as refused:
        read_labeled(str(tmp_path / "mixed.csv"))
    assert str(refused.value) == (
        f"{tmp_path / 'mixed.csv'}:102: the first column was read as pandas' index column (unnamed in the header, the "
        f"rows before numbered 0, 1, 2, ... or so), but this row's is 'x5', not a row number; write the file without "
        f"it (df.to_csv(path, index=False)), or give the column a name")


@pytest.mark.parametrize("rows", [19, 20, 60])
def test_a_shuffled_pandas_index_takes_twenty_rows_all_different(tmp_path, real, rows):
    # A column of numbers in no order under an empty name is pandas' index only when there are enough of them, all
    # different, to tell it from Series.to_csv()'s classes (,text over 2, 1, 3, 5, 4 stars): 20 rows or more
    frame = _frame(real.head(rows), label="labels", text="texts")
    frame.index = [(7 * i) % 101 for i in range(rows)]  # all different, never counting up for long
    path = tmp_path / "few.csv"
    frame.to_csv(path)
    data = read_labeled(str(path))
    if rows < 20:  # as before: ,label,text names the class column itself, the numbers are left out by the layout
        assert data.labels == list(frame["label"])
        path.write_text(path.read_text().replace(",label,text", ",text", 1).replace(",negative,", ",").replace(
            ",positive,", ","))
        assert read_labeled(str(path)).labels == [str(i) for i in frame.index]  # Series.to_csv()'s classes
        return
    assert data.labels == list(frame["label"])
    frame[["text"]].to_csv(path)  # ,text over numbers in no order: no class column (they were the classes)
    with pytest.raises(FastTextError, match="names no class column: its first column is pandas' index"):
        read_labeled(str(path))


@pytest.mark.parametrize("header", ["label,text", "text,label"])
def test_a_header_naming_the_wrong_column_as_the_class_is_refused_for_what_it_named(tmp_path, real, header):
    # the many-classes refusal said "The class must be the first column, or a header row must name it" when a header
    # had named the class column (here the column of reviews): now it says which column the header named
    path, out = tmp_path / "swapped.csv", tmp_path / "model"
    columns = header.split(",")
    frame = _frame(real, **{columns[0]: "texts", columns[1]: "labels"}) if header == "label,text" else \
        _frame(real, **{columns[0]: "labels", columns[1]: "texts"})
    frame.to_csv(path, index=False)
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert got.returncode == 2 and not out.exists(), got.stderr
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: training data has 120 classes for 120 documents")
    where = "column 1 ('label')" if header == "label,text" else "column 2 ('label')"
    assert f"The header row names {where} as the class column: name the columns in the order the rows hold " \
           f"them" in lines[0]
    assert "must be the first column" not in lines[0]


def test_a_many_classes_refusal_of_fasttext_data_speaks_of_its_label_words(tmp_path, real):
    path, out = tmp_path / "words.train", tmp_path / "model"
    path.write_text("".join(f"__label__{'_'.join(text.split())} {label}\n" for label, text in zip(real.labels, real.texts)))
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert got.returncode == 2 and not out.exists(), got.stderr
    assert "each line's class is its __label__ word" in got.stderr and "column" not in got.stderr


@pytest.mark.parametrize("counted", [True, False])
def test_a_many_classes_refusal_of_several_files_names_each_files_class_column(tmp_path, real, counted):
    # A training channel of several files: the refusal spoke of the first file's layout only ("The header row names
    # column 2 ('label')"), here wrong for the file at fault, a class-last CSV without a header
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.sm_train import read_channel
    from fasttext_lib.train import train

    channel = tmp_path / "train"
    channel.mkdir()
    _frame(real.head(30), text="texts", label="labels").to_csv(channel / "a.csv", index=False)
    _frame(real, text="texts", label="labels").to_csv(channel / "b.csv", index=False, header=False,
                                                     quoting=csv.QUOTE_ALL)
    data = read_channel(str(channel), counted=counted)
    with pytest.raises(FastTextError) as refused:
        train(data, config=TrainConfig(epochs=1, progress=False))
    message = str(refused.value)
    assert message.startswith("training data has 122 classes for 150 documents"), message
    assert ("is the text in the class column? The files differ in where each row's class is read from (a.csv: column "
            "2 ('label'), as the header row names it; b.csv: the first column (no header row names one))") in message
    # files that agree are spoken of as one file is
    (channel / "a.csv").unlink()
    _frame(real.head(30), text="texts", label="labels").to_csv(channel / "a.csv", index=False, header=False,
                                                             quoting=csv.QUOTE_ALL)
    with pytest.raises(FastTextError, match="Without a header row naming it the class is the first column"):
        train(read_channel(str(channel), counted=counted), config=TrainConfig(epochs=1, progress=False))


@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("classes", ["words", "numbers"])
def test_pandas_index_written_without_a_header_is_refused_not_trained_as_a_class_per_row(tmp_path, real, shuffled,
                                                                                          classes):
    """df.to_csv(path, header=False) writes the row numbers first (0,positive,the text): read class first, each row
    was a class of its own, a whole number, and the real class a word of its text."""
    frame = _frame(real, label="labels", text="texts")
    if classes == "numbers":
        frame["label"] = frame["label"].map({"negative": "1", "positive": "2"})
    if shuffled:
        frame = frame.sample(frac=1, random_state=3)
    path, out = tmp_path / "indexed.csv", tmp_path / "model"
    frame.to_csv(path, header=False)
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert got.returncode == 2, got.stderr
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: training data has 120 classes for 120 documents, each a "
                                                   "different whole number"), lines
    assert "index=False" in lines[0] and not out.exists()


def test_pandas_index_of_a_concatenation_written_without_a_header_is_refused(tmp_path):
    """pd.concat([a, b]).to_csv(path, header=False): the row numbers first start again at 0 with b (0..545, 0..999),
    so each 'class' held one or two documents, not each a different one: 1000 classes of 1546 shared real documents
    trained without a word (train_loss 6.4), the real class the first word of every text."""
    parts = [_shared("drug_reviews_train", ("label", "text")), _shared("amazon_snippets_train", ("label", "text")).head(60)]
    path, out = tmp_path / "concat.csv", tmp_path / "model"
    pd.concat(parts).to_csv(path, header=False)
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    lines = got.stderr.strip().splitlines()
    assert got.returncode == 2 and len(lines) == 1, got.stderr
    assert lines[0].startswith("error: training data has 546 classes for 606 documents, whole numbers that count up "
                               "and start again ('0', '1', '2', ...), each text opening with one of a few words ('1', "
                               "'2', ...): row numbers, not classes") and "index=False" in lines[0], lines
    assert not out.exists()
    pd.concat(parts).to_csv(path, header=False, index=False)  # as it says: trains
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert got.returncode == 0, got.stderr


def test_classes_numbered_in_turn_from_0_still_train(tmp_path, real):
    """25 classes 0..24 dealt out in turn count up and start again at 0 as a concatenation's row numbers do: their
    texts, real sentences that open with many different words, say they are classes."""
    path, out = tmp_path / "turns.csv", tmp_path / "model"
    pd.DataFrame({"label": [str(i % 25) for i in range(len(real))], "text": real.texts}).to_csv(
        path, index=False, header=False)
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert got.returncode == 0, got.stderr


def test_numbered_classes_of_several_documents_each_still_train(tmp_path):
    """Classes that are whole numbers train when some hold more than one document (a 25-class set of ids)."""
    path, out = tmp_path / "many.csv", tmp_path / "model"
    rows = [(str(100 + i % 25), f"sentence number {i} about topic {i % 25} words") for i in range(50)]
    pd.DataFrame(rows).to_csv(path, index=False, header=False)
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert got.returncode == 0, got.stderr


def test_evaluating_a_file_written_with_pandas_index_and_no_header_says_row_numbers(tmp_path, bundle, real):
    """The same file shape as above, given to evaluate: its 'labels' are row numbers, each a different one, and the
    refusal says so (it only said they were not seen in training); a few unknown labels get no such guess."""
    path = tmp_path / "indexed.csv"
    _frame(real, label="labels", text="texts").head(30).to_csv(path, header=False)
    got = cli_in_process("evaluate", "--model", bundle, "--data", path)
    lines = got.stderr.strip().splitlines()
    assert got.returncode == 2 and len(lines) == 1, got.stderr
    assert "not seen in training" in lines[0] and "row numbers?" in lines[0] and "index=False" in lines[0], lines
    other = tmp_path / "other.csv"
    other.write_text("".join(f"{label},{text}\n" for label, text in zip(["neutral"] * 25, real.texts)))
    got = cli_in_process("evaluate", "--model", bundle, "--data", other)
    assert got.returncode == 2 and "not seen in training" in got.stderr and "row numbers" not in got.stderr, got.stderr


def _shared(name, columns=("sentiment", "tweet")):
    """A shared real set (``drug_reviews_test``, ...) as pandas reads it: its class (1, 2) and text columns."""
    return pd.read_csv(os.path.join(REAL, f"{name}.csv"), header=None, names=list(columns), dtype=str,
                       keep_default_na=False)


@pytest.mark.parametrize("header", ["sentiment,tweet", "stars_given,review_body"])
@pytest.mark.parametrize("shape", ["three files concatenated", "monthly pieces of 25", "a short file first"])
def test_a_concatenation_written_with_pandas_index_is_read_without_it(tmp_path, header, shape):
    # pd.concat([a, b]).to_csv(path): b's rows are numbered from 0 again. When that happened within the look-ahead the
    # numbers were no index (neither counting up nor all different), and under a header whose other columns are not
    # both known names the row numbers were read as the classes (0, 1, ..., 29: 30 classes), the class a word of the text
    columns = header.split(",")
    parts = {"three files concatenated": [_shared("drug_reviews_test", columns).head(30),
                                          _shared("nyt_editorials_test", columns).head(40),
                                          _shared("amazon_snippets_test", columns).head(60)],
             "monthly pieces of 25": [_shared("nyt_editorials_test", columns).iloc[i:i + 25].reset_index(drop=True)
                                      for i in range(0, 200, 25)],
             "a short file first": [_shared("drug_reviews_test", columns).head(12),
                                    _shared("drug_reviews_train", columns)]}[shape]
    frame = pd.concat(parts)
    path = tmp_path / "concat.csv"
    frame.to_csv(path)
    notes = []
    data = read_labeled(str(path), note=notes.append)
    assert data.labels == list(frame[columns[0]]) and data.texts == list(frame[columns[1]])
    assert len(notes) == 1 and "is a row index (pandas'" in notes[0]


@pytest.mark.parametrize("shape", ["concatenated, then shuffled", "10 rows shuffled", "a split's 12 rows"])
def test_a_shuffled_pandas_index_under_a_header_that_names_the_class_is_left_out(tmp_path, shape):
    # The header names the class column (,sentiment,tweet), so the unnamed column is not the class, whatever its order:
    # a shuffled concatenation repeats its numbers (83, 12, 83, ...), and under 20 rows numbers in no order were too
    # few to tell from classes; both were read as the classes (60 classes of 120 documents; 10 of 10)
    test, train = _shared("drug_reviews_test"), _shared("drug_reviews_train")
    frame = {"concatenated, then shuffled": pd.concat([test.head(60), train.head(60)]).sample(frac=1, random_state=0),
             "10 rows shuffled": test.head(10).sample(frac=1, random_state=1),
             "a split's 12 rows": train.sample(n=12, random_state=2)}[shape]  # train_test_split's part, as it came
    path, out = tmp_path / "tweets.csv", tmp_path / "model"
    frame.to_csv(path)
    data = read_labeled(str(path))
    assert data.labels == list(frame["sentiment"]) and data.texts == list(frame["tweet"])
    if shape == "concatenated, then shuffled":
        from fasttext_lib.predict import Predictor

        got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
        assert got.returncode == 0 and got.stderr.count("is a row index (pandas'") == 1, got.stderr
        assert Predictor.load(out).labels == ["1", "2"]


@pytest.mark.parametrize("header", [",title,body", ",review_id,text", ",airline_sentiment,text"])
def test_a_shuffled_concatenations_index_under_a_header_that_names_no_class_column_is_left_out(tmp_path, header):
    # pd.concat([a, b]).sample(frac=1).to_csv(path): row numbers repeated, in no order (48, 34, ..., 59, 16, ...).
    # Under a header naming its other columns but no class column, the index rules had only counting up, all
    # different, or a concatenation's runs: the row numbers were read as the classes (60 classes of 120 documents,
    # trained without a word), the real class a word of the text. A DataFrame's columns are named: only its index is
    # not
    test, train = _shared("drug_reviews_test"), _shared("drug_reviews_train")
    frame = pd.concat([test.head(60), train.head(60)]).sample(frac=1, random_state=0)
    assert frame.index.duplicated().any() and not frame.index.is_monotonic_increasing
    first, second = header.split(",")[1:]
    frame = frame.rename(columns={"sentiment": first, "tweet": second})
    if first == "review_id":
        frame[first] = [f"r{i * 7919 % 100003:x}" for i in range(len(frame))]
    path, out = tmp_path / "concat.csv", tmp_path / "model"
    frame.to_csv(path)
    flags = ["--label-column", "airline_sentiment"] if first == "airline_sentiment" else []
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress", *flags)
    assert got.stderr.count("is a row index (pandas'") == 1, got.stderr
    if flags:  # the class named: trained on it, the index left out
        from fasttext_lib.predict import Predictor

        assert got.returncode == 0 and Predictor.load(out).labels == ["1", "2"], got.stderr
    else:  # no class column: refused in one line, as the same file not shuffled is
        assert got.returncode == 2 and got.stderr.count("error:") == 1 and not out.exists(), got.stderr
        frame.sort_index(kind="stable").to_csv(path)
        again = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
        same = [r.stderr.splitlines()[-1].split(" over the first")[0] for r in (got, again)]  # (ids shown differ)
        assert again.returncode == 2 and same[0] == same[1], again.stderr
    answers = cli_in_process("predict", "--model", _drug_bundle(tmp_path), "--input", path)
    assert answers.returncode == 0 and len(answers.stdout.splitlines()) == len(frame), answers.stderr


def _drug_bundle(tmp_path):
    out = tmp_path / "drug_model"
    if not out.exists():
        got = cli_in_process("train", "--train", os.path.join(REAL, "drug_reviews_train.csv"), "--output", out,
                             "--epochs", "1", "--no-progress")
        assert got.returncode == 0, got.stderr
    return out


@pytest.mark.parametrize("header", ["text", "review", None])
@pytest.mark.parametrize("classes", [20, 25])
def test_numbered_classes_dealt_in_turn_under_an_empty_header_stay_the_classes(tmp_path, header, classes):
    # Series.to_csv() of texts indexed by classes 1..K dealt out in turn (1, 2, ..., 25, 1, 2, ...), K of 20 or more:
    # they count up and start again as a concatenation's row numbers do, and were taken for pandas' index; the file
    # was refused as a header of text columns only (,text) or as malformed (,0). A concatenation's frames are
    # numbered from 0 again, each one
    texts = list(_shared("nyt_editorials_test")["tweet"].head(120))
    labels = [1 + i % classes for i in range(len(texts))]
    path = tmp_path / "series.csv"
    pd.Series(texts, index=labels, name=header).to_csv(path)
    notes = []
    data = read_labeled(str(path), note=notes.append)
    assert data.labels == [str(c) for c in labels] and data.texts == texts and not notes
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert got.returncode == 0, got.stderr


@pytest.mark.parametrize("header", [",title,body", ",summary,text"])
def test_classes_as_a_dataframes_unnamed_index_beside_named_text_columns_stay_the_classes(tmp_path, header):
    # pd.DataFrame({"title": ..., "body": ...}, index=labels).to_csv(path): the classes (1, 2, ...) as the frame's
    # index, unnamed, as Series.to_csv() writes them beside one column. Read as the classes before an unnamed first
    # column beside columns that name no class column was taken for pandas' index in any order; then the file was
    # refused as naming no class column ("its first column is pandas' index (row numbers, not classes)"). Row numbers
    # of a shuffled concatenation are many different ones; classes are few
    data = _shared("drug_reviews_test").head(120)
    first, second = header.split(",")[1:]
    frame = pd.DataFrame({first: [t[:30] for t in data["tweet"]], second: list(data["tweet"])},
                         index=list(data["sentiment"]))
    path, out = tmp_path / "indexed.csv", tmp_path / "m"
    frame.to_csv(path)
    notes = []
    read = read_labeled(str(path), note=notes.append)
    assert read.labels == list(data["sentiment"]) and not any("row index" in n for n in notes), notes
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert got.returncode == 0, got.stderr
    from fasttext_lib.predict import Predictor

    assert Predictor.load(str(out)).labels == ["1", "2"]


@pytest.mark.parametrize("header", ["text", None])
def test_a_concatenation_of_filtered_frames_under_an_empty_header_is_its_index(tmp_path, header):
    # pd.concat([a[...], b[...]]) of two files' rows kept by a filter: each frame keeps its own row numbers (0, 2, 3,
    # 7, ..., 1, 4, 5, ...), going up in runs that start again elsewhere than at 0, some numbers in both. Read as
    # pandas' index before runs had to start again at 0; then read as the classes, the texts (,text) trained on their
    # row numbers as some 50 classes without a word, where training refused the file as naming no class column
    test, train = _shared("drug_reviews_test"), _shared("drug_reviews_train")
    kept = [frame[(frame["tweet"].str.len() > 120) & (frame.index > 0)].head(30) for frame in (test, train)]
    texts = pd.concat(kept)["tweet"].rename(header)
    numbers = list(texts.index)
    assert numbers[30] != 0 and numbers[30:] != numbers[:30] and len(set(numbers)) < len(numbers)  # (not in turn)
    path = tmp_path / "texts.csv"
    texts.to_csv(path)
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert got.returncode != 0 and "pandas' index" in got.stderr and "names no class column" in got.stderr, got.stderr
    sample = tmp_path / "sample"
    assert cli_in_process("sample", "--output", sample).returncode == 0
    assert cli_in_process("train", "--train", sample / "train.csv", "--output", tmp_path / "model", "--epochs", "1",
                          "--no-progress").returncode == 0
    answered = cli_in_process("predict", "--model", tmp_path / "model", "--input", path)
    assert answered.returncode == 0 and len(answered.stdout.splitlines()) == len(texts)
    assert "is a row index (pandas'" in answered.stderr, answered.stderr


@pytest.mark.parametrize("index", ["0/1 in no order", "0/1 in turn", "0/1 sorted", "stars 1 to 5", "stars in turn",
                                   "three classes, one each", "years", "0/1 under ,label"])
def test_small_whole_number_classes_under_an_empty_header_stay_the_classes(tmp_path, index):
    # Series.to_csv() writes its index first under an empty name (,text): here the classes, which the index rules
    # must not take for row numbers (nor 1, 2, 3, 4, 5, 1, 2, ... for a concatenation's runs)
    texts = list(_shared("nyt_editorials_test")["tweet"].head(45))
    classes = {"0/1 in no order": [(i * 7 // 3) % 2 for i in range(45)], "0/1 in turn": [i % 2 for i in range(45)],
               "0/1 sorted": sorted(i % 2 for i in range(45)), "stars 1 to 5": [(i * 7) % 5 + 1 for i in range(45)],
               "stars in turn": [i % 5 + 1 for i in range(45)], "three classes, one each": [2, 0, 1],
               "years": [2000 + i % 13 for i in range(45)], "0/1 under ,label": [(i * 5 // 2) % 2 for i in range(45)]}[index]
    texts = texts[:len(classes)]
    path = tmp_path / "series.csv"
    pd.Series(texts, index=classes, name="label" if index == "0/1 under ,label" else "text").to_csv(path)
    notes = []
    data = read_labeled(str(path), note=notes.append)
    assert data.labels == [str(c) for c in classes] and data.texts == texts and not notes


@pytest.mark.parametrize("name", ["nyt_editorials_test", "amazon_snippets_test", "drug_reviews_test"])
def test_unlabeled_lines_that_open_with_a_word_and_a_comma_are_not_taken_for_a_word_class_csv(tmp_path, name):
    # Reviews to label whose every line opens with one of a few words and a comma (Well, So, ...): the openers repeat
    # as classes do, and training took the file for a word-class CSV, its classes Well, So, Honestly, ... Prose puts a
    # space after its comma; a CSV writer puts none
    texts = [t for t in _shared(name)["tweet"] if '"' not in t][:120]
    openers = ["Well", "So", "Honestly", "Overall", "Actually"]
    path, out = tmp_path / "reviews.txt", tmp_path / "model"
    path.write_text("".join(f"{openers[i * 7 % 5]}, {t[0].lower()}{t[1:]}\n" for i, t in enumerate(texts)))
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert got.returncode == 2 and not out.exists(), got.stderr
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "reviews.txt: cannot detect the format of line 1" in lines[0], lines
    # the same texts after a class word, as pandas writes them (no space after the comma), are a word-class CSV
    frame = pd.DataFrame({"label": [openers[i * 7 % 5] for i in range(len(texts))], "text": texts})
    frame.to_csv(tmp_path / "words.csv", index=False, header=False)
    data = read_labeled(str(tmp_path / "words.csv"))
    assert data.labels == list(frame["label"]) and data.texts == texts


@pytest.mark.parametrize("name", ["nyt_editorials_test", "amazon_snippets_test"])
@pytest.mark.parametrize("classes", [("positive", "negative"), ("sports", "world", "sci-fi", "very_negative")])
def test_classes_written_as_lower_case_words_with_a_space_after_the_comma_read_as_a_word_class_csv(tmp_path, name,
                                                                                                   classes):
    # positive, the text (written by hand: a space after the comma) needed --format csv, the space taken for prose's.
    # A sentence opens with a capital (Well, So, ...: the test above); lower-case first words in every line are a
    # class column's values
    texts = [t for t in _shared(name)["tweet"] if '"' not in t and ',' not in t][:80]
    labels = [classes[i * 7 % len(classes)] for i in range(len(texts))]
    path, out = tmp_path / "spaced.csv", tmp_path / "model"
    path.write_text("".join(f"{c}, {t}\n" for c, t in zip(labels, texts)))
    data = read_labeled(str(path))
    assert data.labels == labels and [t.strip() for t in data.texts] == texts
    assert read_labeled(str(path), "csv").texts == data.texts  # as --format csv reads it
    got = cli_in_process("train", "--train", path, "--output", out, "--epochs", "1", "--no-progress")
    assert got.returncode == 0, got.stderr
    # the same with its first words capitalized is prose's opening (Positive, ...): --format csv, as before
    path.write_text("".join(f"{c.capitalize()}, {t}\n" for c, t in zip(labels, texts)))
    with pytest.raises(FastTextError, match=r"cannot detect the format of line 1 .*--format csv"):
        read_labeled(str(path))


@pytest.mark.parametrize("sep, said", [
    (";", "looks semicolon-separated, a text and then its class ('sadness'), with no header row"),
    (",", "reads as a text and then its class ('sadness'), with no header row"),
])
def test_text_then_a_word_class_without_a_header_is_refused_with_the_conversion_that_reads_it(tmp_path, real, sep,
                                                                                            said):
    """The Emotion dataset's train.txt (``i didnt feel humiliated;sadness``), or ``df[["text", "label"]].to_csv(path,
    index=False, header=False)``: the class last, a word that repeats, no header. It was "cannot detect the format
    ... read with --format csv", and --format csv read the text as the class ("1 column(s)" for the semicolon lines, a
    class per review for the comma ones): no way on. The line says what the file is and gives the pandas line that
    writes it with a header row; that line, run, makes a file training reads whole."""
    texts = [t for t in real.texts if ";" not in t and "," not in t and '"' not in t][:40]
    labels = ["joy" if i % 3 else "sadness" for i in range(len(texts))]
    path = tmp_path / "train.txt"
    path.write_text("".join(f"{t}{sep}{c}\n" for t, c in zip(texts, labels)))
    with pytest.raises(FastTextError) as told:
        read_labeled(str(path))
    message = str(told.value)
    assert message.startswith(f"{path}: line 1 {said}") and "--format" not in message, message
    conversion = re.search(r"pandas: (pd\.read_csv\(.*\)\.to_csv\(new_path, index=False\))\)$", message).group(1)
    new_path = str(tmp_path / "converted.csv")
    eval(conversion, {"pd": pd, "path": str(path), "new_path": new_path})  # noqa: S307 - the line's own pandas
    data = read_labeled(new_path)
    assert (data.labels, data.texts) == (labels, texts)
    cli = cli_in_process("train", "--train", path, "--output", tmp_path / "model", "--epochs", "1", "--no-progress")
    assert cli.returncode == 2 and cli.stderr.strip().splitlines() == [f"error: {message}"], cli.stderr


def test_a_header_of_unknown_names_above_a_text_and_then_its_class_asks_for_its_columns(tmp_path, real):
    """``feedback,verdict`` (names of the user's own) above ``the text,positive`` rows: training said "cannot detect the
    format ... read with --format csv", and --format csv read the text as the class and the header as a document
    ("301 classes for 301 documents ... add a header row", to a file that has one). The header row is said to be one,
    naming no class column training knows, with the flags that name its columns; named, every row is read."""
    path = tmp_path / "mine.csv"
    _frame(real, feedback="texts", verdict="labels").to_csv(path, index=False)
    with pytest.raises(FastTextError, match=r"mine.csv: line 1 reads as a CSV header row \(feedback,verdict\), but it "
                                            r"names no class column training knows .*--label-column NAME --text-column"):
        read_labeled(str(path))
    named = read_labeled(str(path), fmt=csv_columns("auto", "verdict", ["feedback"]))
    assert (named.labels, named.texts) == (real.labels, real.texts)


# Tables as real data comes: more columns than a class and a text (ids, counts, dates), written with pandas from the
# published shapes. name -> (columns in order: name -> "labels" | "texts" | a metadata maker, to_csv kwargs, the
# class column, the text columns in reading order)
def _ids(prefix):
    return lambda n: [f"{prefix}{i * 7919 % 100003:x}" for i in range(n)]


TABLES = {
    "yelp_json_as_csv": ({"review_id": _ids("r"), "user_id": _ids("u"), "business_id": _ids("b"), "stars": "labels",
                          "useful": lambda n: [i % 3 for i in range(n)], "funny": lambda n: [0] * n,
                          "cool": lambda n: [i % 2 for i in range(n)], "text": "texts",
                          "date": lambda n: [f"2018-07-{1 + i % 28:02d} 22:09:11" for i in range(n)]},
                         {"index": False}, "stars", ["text"]),
    "amazon_mcauley": ({"reviewerID": _ids("A"), "asin": _ids("B00"), "reviewerName": lambda n: ["J. Smith"] * n,
                        "helpful": lambda n: ["[0, 0]"] * n, "reviewText": "texts", "overall": "labels",
                        "summary": "texts", "unixReviewTime": lambda n: [1_300_000_000 + 86_400 * i for i in range(n)],
                        "reviewTime": lambda n: ["02 14, 2014"] * n}, {"index": False}, "overall",
                       ["reviewText", "summary"]),
    "amazon_fine_food": ({"Id": lambda n: list(range(1, n + 1)), "ProductId": _ids("B00"), "UserId": _ids("A"),
                          "ProfileName": lambda n: ["delmartian"] * n, "HelpfulnessNumerator": lambda n: [1] * n,
                          "HelpfulnessDenominator": lambda n: [1] * n, "Score": "labels",
                          "Time": lambda n: [1_300_000_000 + 86_400 * i for i in range(n)], "Summary": "texts",
                          "Text": "texts"}, {"index": False}, "Score", ["Summary", "Text"]),
    "kaggle_clothing": ({"Clothing ID": lambda n: [(i * 37) % 1000 for i in range(n)], "Age": lambda n: [33 + i % 40 for i in range(n)],
                         "Title": "texts", "Review Text": "texts", "Rating": "labels",
                         "Recommended IND": lambda n: [i % 2 for i in range(n)],
                         "Division Name": lambda n: ["General"] * n, "Class Name": lambda n: ["Knits", "Dresses"] * (n // 2)},
                        {}, "Rating", ["Title", "Review Text"]),   # df.to_csv(): pandas' index first
    # The class first, then other columns beside the named text (pd.read_json of Amazon's 2018 reviews, their keys in
    # that order; Sentiment140 with its header): every column after the class was read as text (Zhang's rule), the
    # reviewer ids, asins, names and dates trained on as words; with a column of whole-number ids (unixReviewTime,
    # ids) among them, refused
    "amazon_2018": ({"overall": "labels", "verified": lambda n: [True, False] * (n // 2),
                     "reviewTime": lambda n: [f"0{1 + i % 9} {1 + i % 28}, 2016" for i in range(n)],
                     "reviewerID": _ids("A"), "asin": _ids("B00"), "style": lambda n: ["{'Size:': ' Large'}"] * n,
                     "reviewerName": lambda n: ["J. Smith", "Amazon Customer"] * (n // 2), "reviewText": "texts",
                     "summary": "texts"}, {"index": False}, "overall", ["reviewText", "summary"]),
    "amazon_2018_unix_time": ({"overall": "labels", "reviewerID": _ids("A"), "asin": _ids("B00"),
                               "reviewerName": lambda n: ["J. Smith"] * n, "reviewText": "texts", "summary": "texts",
                               "unixReviewTime": lambda n: [1_450_000_000 + 86_400 * i for i in range(n)]},
                              {"index": False}, "overall", ["reviewText", "summary"]),
    "sentiment140_with_header": ({"target": "labels", "ids": lambda n: [1467810369 + 977 * i for i in range(n)],
                                  "date": lambda n: [f"Mon Apr 06 22:{i % 60:02d}:45 PDT 2009" for i in range(n)],
                                  "flag": lambda n: ["NO_QUERY"] * n, "user": _ids("u"), "text": "texts"},
                                 {"index": False}, "target", ["text"]),
}


def _table(real, columns):
    n = len(real)
    return pd.DataFrame({name: (real.labels if how == "labels" else real.texts if how == "texts" else how(n))
                         for name, how in columns.items()})


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_table_with_more_columns_reads_its_named_class_and_text_and_says_what_it_left_out(tmp_path, real, name):
    """Yelp's and Amazon's reviews as published, and Kaggle's clothing reviews, as pandas writes them: the named class
    and text columns are read, the ids, counts and dates left out (they were "cannot detect the format", or, after
    pandas' index, the clothing ids trained on as 945 classes), and a line says which columns were left out."""
    columns, to_csv, label, texts = TABLES[name]
    path = tmp_path / f"{name}.csv"
    _table(real, columns).to_csv(path, **to_csv)
    notes = []
    data = read_labeled(str(path), note=notes.append)
    assert data.labels == real.labels
    assert data.texts == [" ".join([t] * len(texts)) for t in real.texts]
    left = [c for c, how in columns.items() if how not in ("labels", "texts")]
    said = [n for n in notes if "left out" in n and "the class is column" in n]
    assert len(said) == 1 and f"the class is column {label!r}" in said[0]
    assert said[0].endswith(f"left out: {', '.join(map(repr, left))} (--text-column NAME reads a column as text)")
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert got.returncode == 0, got.stderr
    assert json.load(open(tmp_path / "m" / "config.json"))["num_classes"] == 2


def test_a_column_of_prose_beside_the_named_text_is_read_as_text_not_left_out(tmp_path, real):
    """Left out are the columns that are not text: a column of prose under a name training does not know (an
    answer beside its question's title) is text, in the header's order; a repeated short value (a user name) is not."""
    frame = pd.DataFrame({"title": real.texts, "best_answer": real.texts[::-1], "user": ["ann", "bob"] * 60,
                          "label": real.labels})
    frame.to_csv(tmp_path / "qa.csv", index=False)
    notes = []
    data = read_labeled(str(tmp_path / "qa.csv"), note=notes.append)
    assert data.labels == real.labels
    assert data.texts == [f"{a} {b}" for a, b in zip(real.texts, real.texts[::-1])]
    assert any(n.endswith("left out: 'user' (--text-column NAME reads a column as text)") for n in notes)


@pytest.mark.parametrize("index", [True, False])
@pytest.mark.parametrize("text", ["Review Text", "Words"])
def test_a_table_whose_class_column_has_an_unknown_name_is_refused_with_the_flags_that_read_it(tmp_path, real, index,
                                                                                               text):
    """A header no rule can read the class from (``Stars Given``; the airline tweets' ``airline_sentiment``): refused
    in one line that names the flags. Read as data, with pandas' index before it, its first row was a document and
    the clothing ids its classes (a model of 120 "classes"); a text column of a known name makes it a table to
    label, which training refuses too."""
    frame = pd.DataFrame({"Clothing ID": [(i * 37) % 1000 for i in range(len(real))], "Age": [33 + i % 40 for i in range(len(real))],
                          text: real.texts, "Stars Given": real.labels})
    path = tmp_path / "clothing.csv"
    frame.to_csv(path, index=index)
    header = rf"\(,?Clothing ID,Age,{text},Stars Given\)"
    with pytest.raises(FastTextError, match=rf"clothing.csv:?1?: (the CSV header row {header} names no class column "
                                            rf"training knows|(its first row|line 1) reads as a (CSV )?header(| row) "
                                            rf"{header}).*--label-column"):
        read_labeled(str(path))
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress",
                         "--label-column", "stars given", "--text-column", text)
    assert got.returncode == 0, got.stderr
    assert f"the class is column 'Stars Given', the text '{text}'; left out: 'Clothing ID', 'Age'" in got.stderr
    evaluated = cli_in_process("evaluate", "--model", tmp_path / "m", "--data", path, "--label-column", "Stars Given",
                               "--text-column", text)
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads(evaluated.stdout.splitlines()[-1])["n"] == len(real)


@pytest.mark.parametrize("fmt", [[], ["--format", "csv"]])
def test_a_two_column_header_of_unknown_names_above_word_classes_is_refused_with_the_flags_that_read_it(tmp_path, real,
                                                                                                      fmt):
    """The SMS Spam Collection as it is shared: a header ``v1,v2,,,`` (two names and empty ones, where a message's
    commas spill over) above ``ham,Go until jurong point...`` rows. Auto-detection refused it with a hint, "read with
    --format csv", that read the header as a document: a model of three classes, one of them ``v1``. Both now say
    line 1 is a header of names training does not know, and the flags that read it; with them it trains on two."""
    words = {"negative": "ham", "positive": "spam"}
    lines = ["v1,v2,,,"] + [f"{words[label]},{text.replace(',', ' ')},,," for label, text in zip(real.labels, real.texts)]
    path = tmp_path / "spam.csv"
    path.write_text("\r\n".join(lines) + "\r\n")
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress", *fmt)
    assert got.returncode == 2 and got.stderr.count("error:") == 1, got.stderr
    assert "reads as a CSV header row (v1,v2,,,)" in got.stderr or "reads as a header (v1,v2,,,)" in got.stderr
    assert "--label-column NAME --text-column NAME" in got.stderr and "add a header row above it" in got.stderr
    assert not (tmp_path / "m").exists()
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress",
                         "--label-column", "v1", "--text-column", "v2")
    assert got.returncode == 0, got.stderr
    assert json.loads((tmp_path / "m" / "config.json").read_text())["labels"] == ["ham", "spam"]


def test_a_first_row_of_two_short_values_whose_class_recurs_below_is_still_a_record(tmp_path, real):
    """Only a first row whose class is in no row below reads as a header: ``ham,ok`` above ``ham,...`` rows is the
    first document (not refused, and trained on with --format csv)."""
    words = {"negative": "ham", "positive": "spam"}
    lines = ["ham,ok lar"] + [f"{words[label]},{text.replace(',', ' ')}" for label, text in zip(real.labels, real.texts)]
    path = tmp_path / "spam.csv"
    path.write_text("\n".join(lines) + "\n")
    data = read_labeled(str(path))
    assert data.labels[0] == "ham" and data.texts[0] == "ok lar" and len(data) == len(lines)


def _rare_first_record(tmp_path, real):
    """A headerless CSV whose first record, ``positive,great``, has a class that is in none of the 50 rows below it
    (the look-ahead) but is in rows further down: a file sorted so, or a class rare at its top."""
    words = {"negative": "negative", "positive": "positive"}
    pairs = list(zip(real.labels, real.texts))
    top = [(label, text) for label, text in pairs if label == "negative"][:60]
    lines = ["positive,great"] + [f"{words[label]},{text.replace(',', ' ')}" for label, text in top + pairs[:120]]
    path = tmp_path / "rare.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, len(lines)


def test_a_first_record_whose_class_is_only_further_down_trains_with_format_csv(tmp_path, real):
    """The rule for a header of two unknown names (v1,v2,,,: its class column's name in no row below) looks only 50
    rows down; a genuine first record, ``positive,great``, whose class is further down was refused as such a header,
    with --format csv too, where it had trained. Its class further down makes it a record."""
    path, records = _rare_first_record(tmp_path, real)
    data = read_labeled(str(path), fmt="csv")
    assert (data.labels[0], data.texts[0], len(data)) == ("positive", "great", records)


def test_a_first_record_of_one_of_the_models_classes_is_answered_by_predict_and_the_endpoint(tmp_path, real):
    """predict and the endpoint read a first row of two names above rows of the model's classes as a header
    (v1,v2,,,): ``positive,great``, whose class is a class of the model, was left out, no answer for it (one answer
    fewer than the records), and predict's note advised --label-column positive --text-column great."""
    from fasttext_lib.predict import Predictor

    path, records = _rare_first_record(tmp_path, real)
    labeled = tmp_path / "labeled.csv"
    labeled.write_text("label,text\n" + path.read_text())
    trained = cli_in_process("train", "--train", labeled, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert trained.returncode == 0, trained.stderr
    expected = Predictor.load(tmp_path / "m").predict(read_labeled(str(labeled)).texts)
    assert len(expected) == records
    for fmt in ("auto", "csv"):
        got = cli_in_process("predict", "--model", tmp_path / "m", "--input", path, "--format", fmt)
        assert got.returncode == 0, got.stderr
        assert [json.loads(line) for line in got.stdout.splitlines()] == expected, fmt
        assert "--label-column" not in got.stderr, got.stderr
    assert _served(tmp_path / "m", path.read_text()) == expected


@pytest.mark.parametrize("header", ["v1,v2,,,", "v1,v2,Unnamed: 2,Unnamed: 3,Unnamed: 4", "-v 1,v2,,,"])
def test_the_sms_spam_collections_messages_are_answered_without_their_classes_by_predict_and_the_endpoint(
        tmp_path, real, header):
    """The SMS Spam Collection as it is shared (``v1,v2,,,``; or as pandas writes it back, the re-encoding the UTF-8
    error advises: ``Unnamed: 2``, ...), a message's commas spilling into the unnamed columns. Trained with the flags
    training asks for, predict and the endpoint's text/csv answered the header as a message and every row whole, its
    ``ham,`` or ``spam,`` a word of its text (one answer more than the messages). The model's classes below a first
    row of two names that is not among them make it a header, its class first: each message is answered for the
    columns after the class, as under ``label,text,,,``."""
    from fasttext_lib.predict import Predictor

    words = {"negative": "ham", "positive": "spam"}
    rows = [[words[label], text, "", "", ""] for label, text in zip(real.labels, real.texts)]
    for row in rows[::9]:  # (a message spilled over the unnamed columns at its commas, as a few of the file's are)
        parts = row[1].split(",", 2)
        row[1:] = parts + [""] * (4 - len(parts))
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    path = tmp_path / "spam.csv"
    path.write_text(header + "\r\n" + buffer.getvalue(), newline="")
    label = header.split(",")[0]  # (-v 1: its note's --label-column=-v 1 quoted, as argparse reads it back)
    trained = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress",
                             f"--label-column={label}", "--text-column", "v2")
    assert trained.returncode == 0, trained.stderr
    as_labeled = tmp_path / "as_labeled.csv"  # the same rows under a header training reads: the class, then text
    as_labeled.write_text("label,text,,,\r\n" + buffer.getvalue(), newline="")
    expected = Predictor.load(tmp_path / "m").predict(read_labeled(str(as_labeled)).texts)
    assert len(expected) == len(rows)
    for fmt in ("auto", "csv"):
        got = cli_in_process("predict", "--model", tmp_path / "m", "--input", path, "--format", fmt)
        assert got.returncode == 0, got.stderr
        assert [json.loads(line) for line in got.stdout.splitlines()] == expected, fmt
        # its note names the evaluate that scores the file (evaluate --data alone refuses it, for its columns)
        advised = re.search(r"\((evaluate --data .*) scores the model against its classes\)", got.stderr)
        # (--label-column alone: the text is v2 and the unnamed columns after it, as predict read it)
        flag = {"v1": "--label-column v1", "-v 1": "--label-column='-v 1'"}[label]  # (-v 1: argparse's flag unquoted)
        assert advised and advised.group(1).endswith(flag), got.stderr
    scored = cli_in_process(*shlex.split(advised.group(1))[:1], "--model", tmp_path / "m",
                            *shlex.split(advised.group(1))[1:])
    assert scored.returncode == 0 and json.loads(scored.stdout.splitlines()[-1])["n"] == len(rows), scored.stderr
    assert _served(tmp_path / "m", path.read_text()) == expected
    assert _served(tmp_path / "m", path.read_text(), "text/csv; header=present") == expected


@pytest.mark.parametrize("text_name", ["v2", "v2, text"])
def test_predicts_note_on_a_header_of_two_unknown_names_gives_an_evaluate_that_scores_the_file(tmp_path, bundle, real,
                                                                                              text_name):
    # v1,v2 over rows of the model's classes, the text column's name with a comma ("v2, text"): the note's evaluate
    # named it --text-column 'v2, text', which the flag splits at its comma ("the file has no header row to find it
    # in"). Pasted, the command it gives scores the rows predict answered
    from fasttext_lib.predict import Predictor

    texts = [" ".join(t.split()) for t in real.texts]
    path = tmp_path / "spam.csv"
    pd.DataFrame({"v1": real.labels, text_name: texts}).to_csv(path, index=False)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    answers = [json.loads(line) for line in got.stdout.splitlines()]
    assert got.returncode == 0 and answers == Predictor.load(bundle).predict(texts), got.stderr
    advised = re.search(r"\(evaluate (--data .*) scores the model against its classes\)", got.stderr)
    assert advised and "--label-column v1" in advised.group(1), got.stderr
    scored = cli_in_process("evaluate", "--model", bundle, *shlex.split(advised.group(1)))
    assert scored.returncode == 0, scored.stderr
    accuracy = sum(a["label"] == label for a, label in zip(answers, real.labels)) / len(texts)
    assert json.loads(scored.stdout.splitlines()[-1])["accuracy"] == pytest.approx(accuracy)


def test_label_and_text_columns_are_read_as_named_and_bad_names_are_one_line(tmp_path, real):
    frame = pd.DataFrame({"tweet_id": range(10**17, 10**17 + len(real)), "airline_sentiment": real.labels,
                          "airline": ["United", "Delta"] * 60, "text": real.texts, "title": real.texts[::-1]})
    path = tmp_path / "tweets.csv"
    frame.to_csv(path, index=False)
    from fasttext_lib.columns import Columns

    data = read_labeled(str(path), Columns("AIRLINE_SENTIMENT", ("title", "text")))
    assert data.labels == real.labels
    assert data.texts == [f"{b} {a}" for a, b in zip(real.texts, real.texts[::-1])]  # joined in the order named
    for flags, message in [
        (["--label-column", "sentiment"], "--label-column sentiment: no column of that name in the header row "
                                          "(tweet_id,airline_sentiment,airline,text,title)"),
        (["--label-column", "airline_sentiment", "--text-column", "text,body"], "--text-column body: no column"),
        (["--label-column", "text", "--text-column", "text"], "column 'text' cannot be both the class"),
        # a text column named twice (by another case) had its text read twice, every word counted double
        (["--label-column", "airline_sentiment", "--text-column", "text,TEXT"],
         "--text-column text: column 'text' is named more than once"),
        (["--text-column", "text"], "names no class column(s) training knows; name it with --label-column"),
        (["--label-column", "airline_sentiment", "--format", "fasttext"], "not of fastText format"),
    ]:
        got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress",
                             *flags)
        assert got.returncode != 0 and got.stderr.count("error:") == 1 and message in got.stderr, (flags, got.stderr)
        assert not (tmp_path / "m").exists()

@pytest.mark.parametrize("header_form, flag_form", [("NFD", "NFC"), ("NFC", "NFD")])
@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_column_names_match_in_any_unicode_normalization(tmp_path, header_form, flag_form, suffix):
    # A header written on macOS (catégorie as e + U+0301) named with a typed --label-column catégorie (U+00E9), or
    # the other way round, was "no column of that name in the header row (catégorie,...)": two names that print alike
    import unicodedata

    from fasttext_lib.columns import Columns

    def spelled(name, form):
        return unicodedata.normalize(form, name)

    label, text = spelled("catégorie", header_form), spelled("avis client", header_form)
    rows = [("positif" if i % 2 else "négatif", f"très bon café {i}" if i % 2 else f"café froid {i}") for i in range(8)]
    path = tmp_path / f"avis{suffix}"
    if suffix == ".csv":
        path.write_text(f"{label},{text}\n" + "".join(f"{c},{t}\n" for c, t in rows), encoding="utf-8")
    else:
        path.write_text("".join(json.dumps({label: c, text: t}) + "\n" for c, t in rows), encoding="utf-8")
    data = read_labeled(str(path), Columns(spelled("Catégorie", flag_form), (spelled("Avis Client", flag_form),)))
    assert (data.labels, data.texts) == ([c for c, _ in rows], [t for _, t in rows])



def test_column_flags_on_a_headerless_validation_file_or_json_keys_say_what_the_file_lacks(tmp_path, real):
    """--label-column beside a headerless --validation (a Zhang et al. test file, the first line a record) said 'no
    column of that name in the header row ("2","the food...")', calling a review the header; and errors about JSON
    Lines' keys spoke of a header row and columns. Each now names what its file has."""
    table = tmp_path / "table.csv"
    pd.DataFrame({"review_id": _ids("r")(len(real)), "stars": real.labels, "text": real.texts}).to_csv(table, index=False)
    zhang = tmp_path / "test.csv"
    zhang.write_text("".join(f'"{label}","{text}"\n' for label, text in zip(real.labels[:20], real.texts[:20])))
    got = cli_in_process("train", "--train", table, "--validation", zhang, "--output", tmp_path / "m", "--epochs",
                         "1", "--no-progress", "--label-column", "stars")
    assert got.returncode == 2 and got.stderr.count("error:") == 1, got.stderr
    assert f"{zhang}: --label-column stars: the file has no header row to find it in (its first line is a record: " \
           f'"{real.labels[0]}","' not in got.stderr  # shown as the fields it holds, not re-quoted
    assert f"{zhang}: --label-column stars: the file has no header row to find it in (its first line is a record: " \
           f"{real.labels[0]},{real.texts[0][:20]}" in got.stderr, got.stderr
    assert "header row (" not in got.stderr and not (tmp_path / "m").exists()

    lines = tmp_path / "reviews.jsonl"
    lines.write_text("".join(json.dumps({"stars": label, "text": text}) + "\n" for label, text in
                             zip(real.labels, real.texts)))
    for flags, message in [
        (["--label-column", "rating"], "--label-column rating: no key of that name in its objects' keys (stars,text)"),
        (["--text-column", "body"], "--text-column body: no key of that name in its objects' keys (stars,text)"),
        (["--text-column", "stars"], "its objects' keys (stars,text) name no class key(s) training knows"),
    ]:
        got = cli_in_process("train", "--train", lines, "--output", tmp_path / "m", "--epochs", "1", "--no-progress",
                             *flags)
        assert got.returncode == 2 and got.stderr.count("\n") == 1 and message in got.stderr, (flags, got.stderr)
        said = got.stderr.replace(str(tmp_path), "").replace("--label-column", "").replace("--text-column", "")
        assert "header" not in said and "column" not in said, got.stderr


@pytest.mark.parametrize("shape", ["class number, short text", "class word, short text", "tsv, class word",
                                   "two records of short words"])
def test_column_flags_on_a_headerless_validation_file_of_short_records_do_not_call_a_record_the_header(tmp_path, real,
                                                                                                     shape):
    """--label-column beside a headerless --validation whose first record is short (1,cold soup; positive,great
    food: a few words, no prose) said 'no column of that name in the header row (1,cold soup)', a record shown as the
    header row. A number, or a value that recurs in its column below, says it is a record; short words that may be
    either are named as the first line, both readings said."""
    table = tmp_path / "table.csv"
    pd.DataFrame({"review_id": _ids("r")(len(real)), "stars": real.labels, "text": real.texts}).to_csv(table, index=False)
    short = [" ".join(t.split()[:2]) for t in real.texts[:20]]
    lines, first, said = {
        "class number, short text": ([f"{i % 2 + 1},{t}" for i, t in enumerate(short)], f"1,{short[0]}", "record"),
        "class word, short text": ([f"{c},{t}" for c, t in zip(real.labels, short)], f"{real.labels[0]},{short[0]}",
                                   "record"),
        "tsv, class word": ([f"{c}\t{t}" for c, t in zip(real.labels, short)], f"{real.labels[0]},{short[0]}",
                            "record"),
        "two records of short words": (["positive,great", "negative,cold"], "positive,great", "either"),
    }[shape]
    validation = tmp_path / ("valid.tsv" if "tsv" in shape else "valid.csv")
    validation.write_text("".join(line + "\n" for line in lines))
    got = cli_in_process("train", "--train", table, "--validation", validation, "--output", tmp_path / "m",
                         "--epochs", "1", "--no-progress", "--label-column", "stars")
    assert got.returncode == 2 and got.stderr.count("error:") == 1, got.stderr  # (after the table's note)
    assert got.stderr.strip().splitlines()[-1].startswith("error: ") and "in the header row (" not in got.stderr and not (tmp_path / "m").exists(), got.stderr
    if said == "record":
        assert (f"{validation}: --label-column stars: the file has no header row to find it in (its first line is a "
                f"record: {first})") in got.stderr, got.stderr
    else:
        assert (f"{validation}: --label-column stars: its first line ({first}) names no such column: if that line is "
                f"the header row, those are its columns; if it is a record, the file has no header row") in got.stderr
    # a real header still has its names listed as the header row's
    header = tmp_path / "header.csv"
    header.write_text("rating,text\n" + "".join(f"{c},{t}\n" for c, t in zip(real.labels, short)))
    got = cli_in_process("train", "--train", table, "--validation", header, "--output", tmp_path / "m",
                         "--epochs", "1", "--no-progress", "--label-column", "stars")
    assert got.returncode == 2 and "--label-column stars: no column of that name in the header row (rating,text)" \
        in got.stderr, got.stderr


def test_a_table_with_more_columns_is_answered_for_its_text_by_predict_and_the_endpoint(tmp_path, bundle, real):
    """The same table sent to be labeled (a Yelp export with its stars) is answered for its text columns only, by
    predict and by the endpoint's ``text/csv; header=present``: the ids, counts and dates are not words of the
    review, and a column of prose under an unknown name is (as training reads it)."""
    from fasttext_lib import sm_serve
    from fasttext_lib.predict import Predictor

    part = real.head(40)
    frame = pd.DataFrame({"review_id": _ids("r")(len(part)), "stars": part.labels, "useful": [0, 1] * 20,
                          "text": part.texts, "owner_reply": part.texts[::-1],
                          "date": [f"2018-07-{1 + i % 28:02d} 22:09:11" for i in range(len(part))]})
    path = tmp_path / "yelp.csv"
    frame.to_csv(path, index=False)
    texts = [f"{a} {b}" for a, b in zip(part.texts, part.texts[::-1])]
    expected = Predictor.load(bundle).predict(texts)
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 0, cli.stderr
    assert [json.loads(line) for line in cli.stdout.splitlines()] == expected
    assert "left out: 'review_id', 'useful', 'date'" in cli.stderr
    assert list(sm_serve.input_fn(path.read_bytes(), "text/csv; header=present")) == texts
    assert _served(bundle, path.read_text(), "text/csv; header=present") == expected


def test_a_table_of_reviews_without_a_class_is_answered_per_record_for_its_text_and_not_trained_on(tmp_path, bundle,
                                                                                                   real):
    """Yelp's export without its stars, to be labeled: its header was answered as a review and every answer after it
    one off, each review scored with its ids and dates as words; now one answer per record, for its text. Training
    refuses it in one line that names --label-column."""
    from fasttext_lib import sm_serve
    from fasttext_lib.predict import Predictor

    part = real.head(40)
    frame = pd.DataFrame({"review_id": _ids("r")(len(part)), "useful": [0, 1] * 20, "text": part.texts,
                          "date": [f"2018-07-{1 + i % 28:02d} 22:09:11" for i in range(len(part))]})
    path = tmp_path / "to_label.csv"
    frame.to_csv(path, index=False)
    expected = Predictor.load(bundle).predict(part.texts)
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 0, cli.stderr
    assert [json.loads(line) for line in cli.stdout.splitlines()] == expected
    assert "the text is column 'text'; left out: 'review_id', 'useful', 'date'" in cli.stderr
    assert list(sm_serve.input_fn(path.read_bytes(), "text/csv; header=present")) == part.texts
    trained = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert trained.returncode == 2 and trained.stderr.count("error:") == 1
    assert "names no class column training knows" in trained.stderr and "--label-column NAME" in trained.stderr
    path.write_text(path.read_text() + "r1,0,a review with a comma, unquoted,2018-07-01 22:09:11\n")
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode != 0 and "to_label.csv:42: malformed CSV row: 5 column(s) where the header row has 4" in cli.stderr
    assert cli.stdout == ""  # every record is checked before any answer


def _excel_rows(real, sep=","):
    """The rows as Excel's "CSV UTF-8" writes them: a BOM, CRLF line ends, fields quoted only where needed."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=sep, lineterminator="\r\n")
    writer.writerow(["label", "text"])
    writer.writerows(zip(real.labels, real.texts))
    return out.getvalue()


def test_excels_separator_line_before_the_header_is_read_as_blank(tmp_path, real, bundle):
    # Excel writes (and reads) a first line "sep=," to say which separator the file uses: training and evaluate
    # stopped at "cannot detect the format of line 1", and predict answered that line and the header as reviews
    plain, hinted = tmp_path / "plain.csv", tmp_path / "hinted.csv"
    plain.write_bytes(("\ufeff" + _excel_rows(real)).encode())
    hinted.write_bytes(("\ufeffsep=,\r\n" + _excel_rows(real)).encode())
    _read_as_without_the_line(hinted, plain, real, bundle)
    assert cli_in_process("evaluate", "--model", bundle, "--data", hinted).stdout == \
        cli_in_process("evaluate", "--model", bundle, "--data", plain).stdout
    hinted.write_bytes(("sep=;\r\n" + _excel_rows(real, ";")).encode())  # a European locale's Excel
    for command in (("train", "--train", hinted, "--output", tmp_path / "m", "--no-progress"),
                    ("predict", "--model", bundle, "--input", hinted)):
        got = cli_in_process(*command)
        assert got.returncode == 2 and got.stdout == "" and not (tmp_path / "m").exists()
        assert got.stderr == (f"error: {hinted}:1: Excel's separator line sep=;: the file is ';'-separated; only "
                              f"comma- and tab-separated files, JSON Lines and fastText format are read: convert it (e.g. pandas: "
                              f"pd.read_csv(path, sep=';', skiprows=1, header=None, dtype=str, "
                              f"keep_default_na=False).to_csv(new_path, index=False, header=False))\n")


def _read_as_without_the_line(hinted, plain, real, bundle):
    """``hinted`` (Excel's sep= line, then ``plain``'s rows) is trained on and answered as ``plain`` is."""
    got = read_labeled(str(hinted))
    assert (got.labels, got.texts) == (real.labels, real.texts)
    answers = cli_in_process("predict", "--model", bundle, "--input", hinted)
    assert answers.returncode == 0, answers.stderr
    assert answers.stdout == cli_in_process("predict", "--model", bundle, "--input", plain).stdout
    assert len(answers.stdout.splitlines()) == len(real)


@pytest.mark.parametrize("end", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_sep_line_naming_the_wrong_separator_above_a_comma_table_is_read_as_excel_s(tmp_path, real, bundle, end):
    """A hand-made ``sep=;`` (Excel writes the separator it uses) above a comma-separated table with a header row:
    training, evaluate and predict refused the file as semicolon-separated. The table is read as it is, the line as
    a blank one, as under ``sep=,`` (lines.excel_sep_line, the endpoint's rule too); with Excel's CRLF line ends or
    not."""
    plain, hinted = tmp_path / "plain.csv", tmp_path / "hinted.csv"
    rows = _excel_rows(real).replace("\r\n", end)
    plain.write_bytes(rows.encode())
    hinted.write_bytes(f"sep=;{end}{rows}".encode())
    _read_as_without_the_line(hinted, plain, real, bundle)
    evaluated = cli_in_process("evaluate", "--model", bundle, "--data", hinted)
    assert evaluated.returncode == 0 and evaluated.stdout == cli_in_process("evaluate", "--model", bundle, "--data",
                                                                            plain).stdout


@pytest.mark.parametrize("first", ["sep=;", "sep=|", "sep="], ids=["semicolon", "pipe", "no-separator"])
@pytest.mark.parametrize("end", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_first_review_that_reads_like_excel_s_line_is_answered_by_predict(tmp_path, real, bundle, first, end):
    """A file of reviews whose first review reads ``sep=;`` (a CSV writer leaves it unquoted), no table under it:
    predict refused the file as semicolon-separated (``sep=`` with CRLF: as separated by ``\r``, in training's reader).
    It is Excel's line only above a table of its separator (lines.excel_sep_line: the endpoint's rule), else the
    review it is, answered in its place: one answer a line, the first as the review's."""
    reviews = [first] + list(real.texts[:20]) + ["cold soup; would not go again"]
    path, alone = tmp_path / "reviews.txt", tmp_path / "first.txt"
    path.write_bytes(end.join(reviews + [""]).encode())
    alone.write_bytes(f"{first}{end}".encode())
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    answers = got.stdout.splitlines()
    assert len(answers) == len(reviews)
    assert answers[0] == cli_in_process("predict", "--model", bundle, "--input", alone).stdout.strip()
    assert answers[1:] == cli_in_process("predict", "--model", bundle, "--input", "-",
                                         input=end.join(reviews[1:]).encode()).stdout.splitlines()
    assert list(lines_after_excel_sep(path)) == [line + end for line in reviews]  # (training's reader keeps it too)


@pytest.mark.parametrize("header", [True, False], ids=["header", "headerless"])
@pytest.mark.parametrize("first, blank", [("sep=|", 0), ("sep= ", 0), ("sep=|", 2)],
                         ids=["pipe", "space", "pipe-after-blank-lines"])
def test_a_semicolon_table_under_a_review_that_reads_like_excel_s_line_is_refused_as_without_it(tmp_path, real, bundle,
                                                                                              first, blank, header):
    """A semicolon-separated table under a first line ``sep=|`` or ``sep= ``: predict judged the file by that line,
    answered it and every row under it as reviews (the header too, each class a word of its text), where the endpoint
    and Batch Transform refuse the body. ``sep= `` names no separator (a review): refused as the table alone is, its
    line numbers one on, from a file and from stdin. ``sep=|`` names another separator than the table's: refused as
    that line, with the conversion that skips it (lines.excel_sep_line), as training and the endpoint refuse it
    (training said no '|'-separated table followed it, predict refused the table alone). So too after blank lines (no
    line of Excel's there: only a file's first line is), where predict still judged the file by it. (A ``sep=;``
    there, above its own table, is refused as that line by every reader: test_sagemaker's
    test_train_predict_and_the_endpoint_refuse_a_sep_line_alike.)"""
    table = _excel_rows(real, ";").replace("\r\n", "\n")
    table = table if header else table.split("\n", 1)[1]
    alone, path = tmp_path / "table.csv", tmp_path / "hinted.csv"
    alone.write_text(table)
    path.write_text("\n" * blank + f"{first}\n{table}")
    refused = cli_in_process("predict", "--model", bundle, "--input", alone)
    assert refused.returncode == 2 and "semicolon" in refused.stderr, refused.stderr
    expected = refused.stderr.replace(f"{alone}: line 1 ", f"{path}: line {2 + blank} ")
    if first == "sep=|":
        expected = (f"error: {path}: line {1 + blank} reads sep=| (Excel's separator line) above a semicolon-separated "
                    f"table, and it names another separator than the table's; only comma- and tab-separated files, "
                    f"JSON Lines and fastText format are read: convert it (e.g. pandas: "
                    f"pd.read_csv(path, sep=';', skiprows={1 + blank}, header=None, dtype=str, keep_default_na=False)"
                    f".to_csv(new_path, index=False, header=False))\n")
    for source, stdin in ((path, None), ("-", path.read_bytes())):
        got = cli_in_process("predict", "--model", bundle, "--input", source, input=stdin)
        assert (got.returncode, got.stdout) == (2, "")
        assert got.stderr == (expected if source != "-" else expected.replace(f"{path}:", "stdin:"))


def test_json_lines_under_a_review_that_reads_like_excel_s_line_are_not_answered_as_reviews(tmp_path, bundle):
    """JSON Lines under a first line ``sep=;`` (no JSON, nor Excel's line over a table): predict judged the file by that
    line and answered each JSON object's text, braces and keys, as a review; it is judged by the lines under it, as
    the endpoint judges a body, and refused in one line at line 1, saying to remove it (lines.excel_sep_line)."""
    path = tmp_path / "hinted.jsonl"
    path.write_text('sep=;\n{"text": "great food"}\n{"text": "cold soup"}\n')
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert (got.returncode, got.stdout) == (2, "")
    assert got.stderr == (f"error: {path}: line 1 reads sep=; (Excel's separator line, which names a table's separator) "
                          f"above JSON Lines, where it is no JSON object; remove that line\n")


@pytest.mark.parametrize("under", ['{"text": "great food"}\n{"text": "cold soup"}\n', "label;text\n2;great food\n"],
                         ids=["json-lines", "semicolon-table"])
@pytest.mark.parametrize("source", ["file", "-"])
def test_format_text_answers_a_first_line_that_reads_sep_as_a_review_above_anything(tmp_path, bundle, under, source):
    """``predict --format text`` answers every line as a review (the endpoint's text/plain too), the way out its
    refusals of a table or JSON Lines name: a first line ``sep=;`` above JSON Lines (or above a semicolon table) was
    refused all the same (lines.line_blocks judged it as a table's reader does), where the same lines were answered
    before and are without that line. It is a review, answered in its place, from a file and from stdin."""
    path = tmp_path / "hinted.txt"
    path.write_text(f"sep=;\n{under}")
    args = ("predict", "--model", bundle, "--format", "text", "--input")
    got = cli_in_process(*args, path) if source == "file" else cli_in_process(*args, "-", input=path.read_bytes())
    assert (got.returncode, got.stderr) == (0, ""), got.stderr
    (tmp_path / "line.txt").write_text("sep=;\n")
    (tmp_path / "under.txt").write_text(under)
    each = [cli_in_process(*args, tmp_path / name).stdout for name in ("line.txt", "under.txt")]
    assert got.stdout == "".join(each) and got.stdout.count("\n") == 1 + under.count("\n")


@pytest.mark.parametrize("first, reviews", [
    ("sep= ", ["great food", "cold soup"]),  # (two names a space separates, over a row with as many spaces)
    ("sep=a", ["great meal", "bad pasta", "fair wage"]),
    ("sep=1", ["Rated 1 star", "Rated 10 of 10", "Rated 1 star, cold", "Rated 10, superb"]),  # (a "class" first)
], ids=["space", "letter", "digit"])
def test_a_sep_line_naming_a_letter_digit_or_space_is_a_review(tmp_path, bundle, first, reviews):
    """``sep=`` and a space, letter or digit above short reviews: every reader took it for Excel's line and refused the
    file as separated by that character. Excel separates by a punctuation or symbol character or a tab
    (lines.excel_separator): such a line is a review, answered in its place by predict, kept by training's reader,
    and refused by training as no labeled example (line 1 is no format), not as a table of that separator."""
    path, alone = tmp_path / "reviews.txt", tmp_path / "first.txt"
    path.write_text("\n".join([first] + reviews) + "\n")
    alone.write_text(f"{first}\n")
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    answers = got.stdout.splitlines()
    assert answers[0] == cli_in_process("predict", "--model", bundle, "--input", alone).stdout.strip()
    assert answers[1:] == cli_in_process("predict", "--model", bundle, "--input", "-",
                                         input="\n".join(reviews).encode()).stdout.splitlines()
    assert list(lines_after_excel_sep(path)) == [line + "\n" for line in [first] + reviews]
    path.write_text(f"{first}\n" + "".join(f"__label__{c} {r}\n" for c, r in zip("xyzw", reviews)))
    with pytest.raises(FastTextError, match=f"{path}: cannot detect the format of line 1"):
        read_labeled(str(path))


@pytest.mark.parametrize("under", ["__label__positive great food\n__label__negative cold soup\n",
                                   '{"label": "positive", "text": "great food"}\n',
                                   "great food\ncold soup\n"], ids=["fasttext", "jsonl", "reviews"])
@pytest.mark.parametrize("sep", [";", "|"], ids=["semicolon", "pipe"])
def test_excel_s_line_over_no_table_is_refused_by_training_as_that_line(tmp_path, bundle, under, sep):
    """``sep=;`` above fastText lines, JSON Lines or reviews (no table: lines.excel_sep_line reads it as a review):
    training and evaluate refused the file as "line 1 looks semicolon-separated", with a conversion that read the
    lines under it as a semicolon table (``sep=|``: "cannot detect the format"). The line is no labeled example, and
    the error says so: what it reads as, and to remove it (above JSON Lines, as predict and the endpoint say it)."""
    path = tmp_path / "data.txt"
    path.write_text(f"sep={sep}\n{under}")
    why = ("(Excel's separator line, which names a table's separator) above JSON Lines, where it is no JSON object"
           if under.startswith("{") else
           f"(Excel's separator line), but no '{sep}'-separated table follows it: it is no labeled example")
    for command in (("train", "--train", path, "--output", tmp_path / "m", "--no-progress"),
                    ("evaluate", "--model", bundle, "--data", path)):
        got = cli_in_process(*command)
        assert (got.returncode, got.stdout) == (2, "") and not (tmp_path / "m").exists()
        assert got.stderr == f"error: {path}: line 1 reads sep={sep} {why}; remove that line\n"


_BLANK_LINES_AT_THE_START = [1, 2]  # (blank lines above a file's first line with text: the messages said line 1)


@pytest.mark.parametrize("blank", _BLANK_LINES_AT_THE_START)
@pytest.mark.parametrize("body, said", [
    ("great food\ncold soup\nkind staff\n", "{path}: cannot detect the format of line {n} (expected"),
    ("row_id,mood,remark\n1,happy,great food\n2,sad,cold soup\n",
     "{path}: line {n} reads as a CSV header row (row_id,mood,remark), but it names no class column"),
    ("row_id\tmood\tremark\n1\thappy\tgreat food\n2\tsad\tcold soup\n",
     "{path}: line {n} reads as a TSV header row (row_id,mood,remark), but it names no class column"),
    ("v1,v2,,,\nham,hello there\nspam,win money\nham,see you\nham,ok\n",
     "{path}:{n}: its first row reads as a header (v1,v2,,,), but it names no class column"),
    ("class,text\r1,nice place\r2,awful\r", "{path}:{n}: cannot detect the format of line {n}: it holds a line break"),
    ("sep=;\n__label__positive great food\n__label__negative cold soup\n",
     "{path}: line {n} reads sep=; (Excel's separator line), but no ';'-separated table follows it"),
    # (sep=, is Excel's on line 1 only: after blank lines it was "cannot detect the format", which named no way on;
    # predict and the endpoint refuse it in the same words: test_sagemaker's test_train_predict_and_the_endpoint_...)
    ("sep=,\n__label__positive great food\n__label__negative cold soup\n",
     "{path}: line {n} reads sep=, (Excel's separator line) after blank lines, where only a file's first line is "
     "Excel's: it is no record; remove that line"),
], ids=["unknown-format", "unknown-csv-header", "unknown-tsv-header", "two-unknown-names", "line-break-inside",
        "excel-sep-over-no-table", "excel-comma-sep-over-no-table"])
def test_format_messages_name_the_first_line_with_text_after_blank_lines_at_the_start(tmp_path, blank, body, said):
    """Blank lines above a training file's first line with text: detection judged that line but its messages called
    it line 1 (``FILE:1:``), and a header of two names asked "if line 1 is a record". They name its line, as
    every other message names the line it speaks of; train says the same."""
    path = tmp_path / "data.csv"
    path.write_bytes(("\n" * blank + body).encode())
    expected = said.format(path=path, n=blank + 1)
    with pytest.raises(FastTextError) as refused:
        read_labeled(str(path))
    message = str(refused.value)
    assert message.startswith(expected), message
    assert "line 1 " not in message and ":1:" not in message, message
    if body.startswith("v1,v2"):  # (a header of two names may be a record: the way out names its line too)
        assert f"; if line {blank + 1} is a record, not a header, add a header row above it" in message, message
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert (got.returncode, got.stdout) == (2, "") and not (tmp_path / "m").exists()
    assert got.stderr.startswith(f"error: {expected}") and got.stderr.count("\n") == 1, got.stderr


@pytest.mark.parametrize("blank", _BLANK_LINES_AT_THE_START)
@pytest.mark.parametrize("table, said", [
    ("sep=;\n{header}{semicolons}", "{path}:{n}: Excel's separator line sep=;: the file is ';'-separated"),
    ("{header}{semicolons}", "{path}: line {n} looks semicolon-separated"),
    ("{semicolons}", "{path}: line {n} looks semicolon-separated"),
    ("{tabbed}", "{path}: line {n} looks tab-separated, but it is no header row"),
], ids=["excel-sep", "semicolons", "headerless-semicolons", "headerless-tsv"])
def test_the_conversion_a_format_message_advises_after_blank_lines_at_the_start_reads_the_file(tmp_path, real, blank,
                                                                                              table, said):
    """The pandas line a format message advises, run on a file that opens with blank lines, converts it to one that
    trains on every row, the header first where the file has one: Excel's ``sep=;`` line after blank lines was
    skipped with ``skiprows=1`` (only the first blank line), read as a row of its own above the header."""
    semicolons = _excel_rows(real, ";").replace("\r\n", "\n")
    header, semicolons = semicolons.split("\n", 1)
    tabbed = "".join(f"{text}\t{label}\n" for text, label in zip(real.texts, real.labels))
    path, converted = tmp_path / "data.csv", tmp_path / "converted.csv"
    path.write_text("\n" * blank + table.format(header=header + "\n", semicolons=semicolons, tabbed=tabbed))
    with pytest.raises(FastTextError) as refused:
        read_labeled(str(path))
    message = str(refused.value)
    assert message.startswith(said.format(path=path, n=blank + 1)), message
    conversion = message.split("pandas: ", 1)[1].split(", or give")[0][:-1]  # (the ")" closing "(e.g. pandas: ")
    conversion = conversion.replace("names=[...]", "names=['text', 'label']")  # (the TSV's columns, as the user says)
    exec(conversion, {"pd": pd, "path": str(path), "new_path": str(converted)})
    data = read_labeled(str(converted))
    assert (data.labels, data.texts) == (real.labels, real.texts)
    if "{header}" in table:
        assert converted.read_text().split("\n", 1)[0] == "label,text"  # (not a row "sep=," above it)


@pytest.mark.parametrize("header", [True, False], ids=["header", "headerless"])
def test_a_sep_line_after_blank_lines_above_a_comma_table_is_refused_by_training_and_predict_saying_to_remove_it(
        tmp_path, real, bundle, header):
    """``sep=;`` after blank lines, above a comma table: only a file's first line is Excel's (lines.excel_sep_line), so
    no reader reads it as a blank line there. Training took it for a semicolon-separated file's first line and advised
    a pandas conversion that read each comma row as one field; predict read it as a malformed row of the table. Both
    refuse it in the same line, saying to remove it; so removed, the file trains on every row."""
    table = _excel_rows(real).replace("\r\n", "\n")
    table = table if header else table.split("\n", 1)[1]
    path, removed = tmp_path / "hinted.csv", tmp_path / "removed.csv"
    path.write_text(f"\n\nsep=;\n{table}")
    removed.write_text(f"\n\n{table}")  # (the line removed, as the error says)
    with pytest.raises(FastTextError) as refused:
        read_labeled(str(path))
    message = str(refused.value)
    assert message.startswith(f"{path}: line 3 reads sep=;") and message.endswith("remove that line"), message
    data = read_labeled(str(removed))
    assert (data.labels, data.texts) == (real.labels, real.texts)
    for source, stdin in ((path, None), ("-", path.read_bytes())):
        got = cli_in_process("predict", "--model", bundle, "--input", source, input=stdin)
        assert (got.returncode, got.stdout) == (2, "")
        assert got.stderr == f"error: {message if source != '-' else message.replace(str(path), 'stdin')}\n"


def test_a_sep_line_over_a_comma_table_whose_first_row_is_longer_than_a_block_is_judged_by_the_rows(tmp_path, real,
                                                                                                   bundle):
    """``sep=;`` over a headerless comma table whose first review is longer than predict's block (lines.line_blocks, a
    MiB): predict judged the line by the lines of its own block, none, and answered it as a review, the table under it
    read otherwise (one answer fewer than its lines), where training's reader (which reads ahead line by line) and the
    endpoint read it as Excel's, a blank line. It is judged by the rows under it, however many blocks they take: read
    as under ``sep=,``."""
    rows = _excel_rows(real).replace("\r\n", "\n").split("\n", 1)[1]
    label, text = rows.split(",", 1)
    rows = f"{label},{'long review ' * 100_000}{text}"
    hinted, excel = tmp_path / "hinted.csv", tmp_path / "excel.csv"
    hinted.write_text(f"sep=;\n{rows}")
    excel.write_text(f"sep=,\n{rows}")
    got = cli_in_process("predict", "--model", bundle, "--input", hinted)
    assert got.returncode == 0, got.stderr
    assert got.stdout == cli_in_process("predict", "--model", bundle, "--input", excel).stdout
    assert len(got.stdout.splitlines()) == len(real) + 1  # (the line answered blank, as under sep=,, a row a line)
    assert next(lines_after_excel_sep(hinted)) == "\n"  # (training's reader: the same)


def lines_after_excel_sep(path):
    """The lines of ``path`` as training's reader hands them on after Excel's line (lines.without_excel_sep)."""
    from fasttext_lib.lines import DecodedLines, without_excel_sep

    with open(path, "rb") as stream:
        yield from without_excel_sep(DecodedLines(stream, str(path), None), str(path))


def test_a_tab_separated_file_after_excels_sep_line_is_read_as_tsv(tmp_path, real, bundle):
    # sep=<TAB> before tab-separated rows was refused ("the file is tab-separated; only comma-separated CSV and
    # fastText format are read"), though a TSV without that line is read: it is read as the TSV now, the line blank
    plain, hinted = tmp_path / "plain.tsv", tmp_path / "hinted.tsv"
    plain.write_bytes(_excel_rows(real, "\t").encode())
    hinted.write_bytes(("sep=\t\r\n" + _excel_rows(real, "\t")).encode())
    _read_as_without_the_line(hinted, plain, real, bundle)


def test_excels_legacy_csv_export_is_refused_with_how_to_convert_it(tmp_path, real):
    # Excel's plain "CSV" on Windows writes Windows-1252 (é, curly quotes in one byte): "re-encode the file as UTF-8"
    # said neither from what nor how
    texts = list(real.texts)
    texts[3] = "caf\u00e9 \u201cgreat\u201d " + texts[3]
    p = tmp_path / "legacy.csv"
    p.write_bytes(_excel_rows(real).replace(real.texts[3], texts[3], 1).encode("cp1252"))
    got = cli_in_process("train", "--train", p, "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and not (tmp_path / "m").exists()
    assert got.stderr == (f"error: {p}:5: not UTF-8 text (byte 0xe9 at column {len(real.labels[3]) + 5}; re-encode "
                          f"the file as UTF-8: it reads as Windows-1252, as Excel's 'CSV' and Windows programs write "
                          f"it; save it as 'CSV UTF-8' in Excel, or convert it: iconv -f CP1252 -t UTF-8 {p} > new.csv, or pandas: "
                          f"pd.read_csv(path, encoding='cp1252', header=None, dtype=str, keep_default_na=False)"
                          f".to_csv(new_path, index=False, header=False))\n")
    converted = tmp_path / "converted.csv"
    pd.read_csv(p, encoding='cp1252', header=None, dtype=str, keep_default_na=False).to_csv(
        converted, index=False, header=False)  # the advice, followed
    assert read_labeled(str(converted)).texts[3] == texts[3]


@pytest.mark.parametrize("header", ["", "sentiment,id,review\r\n"])
def test_the_pandas_conversion_of_a_cp1252_file_gives_back_every_line_with_or_without_a_header(tmp_path, header):
    """The pandas line of the Windows-1252 advice read the first row as a header: a headerless file's first record
    (Sentiment140's, of repeated values) came back renamed ("0","0" as 0,0.1) and a review "NA" came back empty.
    Followed as given, the conversion now reads as the UTF-8 file does, header or not."""
    from fasttext_lib.lines import CP1252_PANDAS

    rows = header + '"0","0","caf\u00e9 ok"\r\n"4","4","NA"\r\n"0","1","n/a \u201cmeh\u201d"\r\n"4","2","fine"\r\n'
    utf8, legacy = tmp_path / "utf8.csv", tmp_path / "legacy.csv"
    utf8.write_bytes(rows.encode("utf-8"))
    legacy.write_bytes(rows.encode("cp1252"))
    with pytest.raises(FastTextError, match=re.escape(CP1252_PANDAS)):
        read_labeled(str(legacy))
    converted = tmp_path / "converted.csv"
    eval(CP1252_PANDAS, {"pd": pd, "path": str(legacy), "new_path": str(converted)})  # the advice, as given
    want, got = read_labeled(str(utf8)), read_labeled(str(converted))
    assert (got.labels, got.texts) == (want.labels, want.texts) and len(got) == 4


@pytest.mark.parametrize("to_json", [{}, {"indent": 2}])
def test_a_json_array_is_refused_with_the_pandas_line_that_converts_it(tmp_path, real, bundle, to_json):
    # A JSON array (df.to_json(orient="records")): training was "cannot detect the format", predict answered every
    # line, keys and braces as words. (JSON Lines are read: test_json_lines_...)
    p = tmp_path / "reviews.json"
    frame = pd.DataFrame({"stars": [1 if label == "negative" else 5 for label in real.labels], "text": real.texts})
    frame.to_json(p, orient="records", **to_json)
    read = f"pd.read_json(path{', lines=True' if to_json.get('lines') else ''})"
    got = cli_in_process("train", "--train", p, "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and not (tmp_path / "m").exists()
    columns = "['stars', 'text']" if "indent" not in to_json else "['label', 'text']"  # (its keys: not on line 1)
    assert got.stderr == (f"error: {p}: is JSON but not JSON Lines (one object a line, which are read, as CSV, TSV "
                          f"and fastText format are); convert it to CSV (e.g. pandas: {read}[{columns}].to_csv(new_path, index=False))\n")
    got = cli_in_process("predict", "--model", bundle, "--input", p)
    assert (got.returncode, got.stdout) == (2, "")
    assert got.stderr == (f"error: {p}: is JSON, not one review per line; convert it (e.g. pandas: {read}[['text']]"
                          f".to_csv(new_path, index=False)), or give --format text to answer each line as it is\n")
    converted = tmp_path / "converted.csv"  # the advice, followed
    frame = pd.read_json(p, lines=bool(to_json.get("lines")))
    frame[["stars", "text"]].to_csv(converted, index=False)
    assert read_labeled(str(converted)).texts == real.texts
    frame[["text"]].to_csv(converted, index=False)
    answers = cli_in_process("predict", "--model", bundle, "--input", converted)
    assert answers.returncode == 0 and len(answers.stdout.splitlines()) == len(real), answers.stderr


def test_an_indented_json_object_is_told_the_pandas_line_that_reads_it(tmp_path, real, bundle):
    # df.to_json(path, indent=2) (pandas' default orient, a whole table as one object over many lines): the line said
    # pd.read_json(path, lines=True), which fails on it ("Expected object or value")
    p = tmp_path / "reviews.json"
    frame = pd.DataFrame({"label": real.labels, "text": real.texts})
    frame.to_json(p, indent=2)
    got = cli_in_process("train", "--train", p, "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and not (tmp_path / "m").exists(), got.stderr
    assert "pd.read_json(path)[['label', 'text']].to_csv(new_path, index=False)" in got.stderr, got.stderr
    assert "jq -c . path > new_path" in got.stderr  # (indented objects one after another)
    got = cli_in_process("predict", "--model", bundle, "--input", p)
    assert (got.returncode, got.stdout) == (2, "") and "pd.read_json(path)[['text']]" in got.stderr, got.stderr
    converted = tmp_path / "converted.csv"  # the advice, followed
    pd.read_json(p)[["label", "text"]].to_csv(converted, index=False)
    assert read_labeled(str(converted)).texts == real.texts


def _yelp_objects(data):
    """The Yelp dataset's review.json shape: one object a line, the stars a float, ids, counts and a date."""
    return pd.DataFrame({"review_id": _ids("r")(len(data)), "user_id": _ids("u")(len(data)),
                         "stars": [1.0 if label == "negative" else 5.0 for label in data.labels],
                         "useful": [i % 3 for i in range(len(data))], "text": data.texts,
                         "date": ["2018-07-07 22:09:11"] * len(data)})


def test_json_lines_train_evaluate_and_predict_on_their_named_keys(tmp_path, real, bundle):
    """JSON Lines, as the Yelp dataset ships its reviews (and df.to_json(orient="records", lines=True) writes):
    they were "cannot detect the format". The class key and the text keys are read as a CSV header's names would
    be, the ids, counts and date left out (a line says so); a whole float class is written without its .0; predict
    answers each object for its text keys, and evaluate scores them."""
    from fasttext_lib.predict import Predictor

    path = tmp_path / "review.json"
    _yelp_objects(real).to_json(path, orient="records", lines=True)
    notes = []
    data = read_labeled(str(path), note=notes.append)
    assert data.labels == ["1" if label == "negative" else "5" for label in real.labels]
    assert data.texts == real.texts
    assert notes == [f"{path}: the class is key 'stars', the text 'text'; left out: 'review_id', 'user_id', "
                     f"'useful', 'date' (--text-column NAME reads a key as text)"]
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "2", "--no-progress")
    assert got.returncode == 0, got.stderr
    evaluated = cli_in_process("evaluate", "--model", tmp_path / "m", "--data", path)
    assert evaluated.returncode == 0 and json.loads(evaluated.stdout.splitlines()[-1])["n"] == len(real)
    answers = cli_in_process("predict", "--model", bundle, "--input", path)
    assert answers.returncode == 0, answers.stderr
    assert [json.loads(line) for line in answers.stdout.splitlines()] == Predictor.load(bundle).predict(real.texts)
    assert "the text is key 'text'; left out: 'review_id', 'user_id', 'stars', 'useful', 'date'" in answers.stderr
    # the same objects as lines of text, when asked: braces and keys as words (--format text)
    as_text = cli_in_process("predict", "--model", bundle, "--input", path, "--format", "text")
    assert len(as_text.stdout.splitlines()) == len(real) and as_text.stdout != answers.stdout


def test_json_lines_with_an_unknown_class_key_or_a_bad_line_are_one_error_line(tmp_path, real, bundle):
    path = tmp_path / "tweets.jsonl"
    frame = pd.DataFrame({"tweet_id": range(len(real)), "airline_sentiment": real.labels, "text": real.texts})
    frame.to_json(path, orient="records", lines=True)
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("error:") == 1 and "--label-column NAME" in got.stderr
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress",
                         "--label-column", "airline_sentiment")
    assert got.returncode == 0, got.stderr
    from fasttext_lib.columns import Columns

    assert read_labeled(str(path), Columns("airline_sentiment")).labels == real.labels
    lines = path.read_text().splitlines()
    for bad, message in [  # a missing class as Python's json writes a float one (NaN) is missing as null is: it was
                         # trained as a class "nan"
                         ('{"tweet_id": 1, "airline_sentiment": NaN, "text": "x"}',
                          "tweets.jsonl:7: this object's class ('airline_sentiment') is empty"),
                         ('{"tweet_id": 1, "text": "no class here"}', "tweets.jsonl:7: this object has no "
                                                                       "'airline_sentiment' key"),
                         ('{"tweet_id": 1, "airline_sentiment": "positive", "text": "cut', "tweets.jsonl:7: not a JSON "
                                                                                           "object"),
                         ('["positive", "a list"]', "tweets.jsonl:7: a JSON list, not an object")]:
        path.write_text("\n".join(lines[:6] + [bad] + lines[6:]) + "\n")
        got = cli_in_process("train", "--train", path, "--output", tmp_path / "m2", "--no-progress",
                             "--label-column", "airline_sentiment")
        assert got.returncode == 2 and got.stderr.count("error:") == 1 and message in got.stderr, got.stderr
        assert not (tmp_path / "m2").exists()
    answers = cli_in_process("predict", "--model", bundle, "--input", path)  # (the list at line 7)
    assert (answers.returncode, answers.stdout) == (2, "") and "tweets.jsonl:7: a JSON list" in answers.stderr


@pytest.mark.parametrize("columns", [{"sentence": "texts", "label": "labels"},
                                     {"review_id": "ids", "text": "texts", "date": "dates"}])
def test_predict_answers_a_tsv_with_a_header_per_record_for_its_text(tmp_path, bundle, real, columns):
    """A TSV to label (GLUE's SST-2 dev.tsv, its class beside; or reviews with ids and dates): its header was answered
    as a review and every answer after it one off, the class and the ids scored as words."""
    from fasttext_lib.predict import Predictor

    part = real.head(30)
    makers = {"texts": part.texts, "labels": part.labels, "ids": _ids("r")(len(part)), "dates": ["2018-07-07"] * 30}
    frame = pd.DataFrame({name: makers[how] for name, how in columns.items()})
    frame.loc[0, [c for c, how in columns.items() if how == "texts"][0]] = 'a "quoted"\ttab, kept whole'
    path = tmp_path / "dev.tsv"
    frame.to_csv(path, sep="\t", index=False)
    texts = list(frame[[c for c, how in columns.items() if how == "texts"][0]])
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    assert [json.loads(line) for line in got.stdout.splitlines()] == Predictor.load(bundle).predict(texts)
    assert "read as labeled TSV" in got.stderr if "labels" in columns.values() else "read as TSV" in got.stderr


@pytest.mark.parametrize("first", ["Title, date", "Summary, great phone", "Text, title, date", "title,date",
                                   "Good,text,bad", "comment,5 stars",
                                   # a class column's name and a phrase (read as class,text: the review unanswered,
                                   # every later one cut at its comma, its first words taken for a class)
                                   "Overall, highly recommended.", "Great phone, overall"])
def test_reviews_to_label_whose_first_line_is_short_phrases_and_a_text_columns_name_get_one_answer_a_line(
        tmp_path, bundle, first):
    """Plain reviews, one a line, the first a few short phrases of which one is a text column's name (``Title,
    date``), the others with as many commas (Amazon's snippets): the first line was taken for a table's header (a
    text column among others, none a class), skipped unanswered, and every review after it answered for its first
    column and what read as prose: one answer short, the others for cut texts. Prose puts a space after its comma;
    a program writing a header, or a table's rows, does not."""
    from fasttext_lib.predict import Predictor

    snippets = list(_shared("amazon_snippets_test")["tweet"])
    width = first.count(",")
    texts = [t for t in snippets if t.count(",") == width and '"' not in t][:30] + \
        [t for t in snippets if "," not in t and '"' not in t][:20]
    lines = [first] + texts
    path = tmp_path / "reviews.txt"
    path.write_text("".join(line + "\n" for line in lines))
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 0, cli.stderr
    assert [json.loads(line) for line in cli.stdout.splitlines()] == Predictor.load(bundle).predict(lines)
    # as a program writes such a table's header (no space after its commas), it is one, as before
    header = first.replace(", ", ",").lower()
    (tmp_path / "table.csv").write_text(pd.DataFrame([[f.strip() for f in t.split(",")] for t in texts[:30]],
                                                     columns=header.split(",")).to_csv(index=False))
    table = cli_in_process("predict", "--model", bundle, "--input", tmp_path / "table.csv")
    assert table.returncode == 0 and len(table.stdout.splitlines()) == 30, table.stderr


def test_jigsaws_toxic_comments_and_kaggles_rotten_tomatoes_phrases_are_read_for_their_text(tmp_path, bundle):
    """Jigsaw's ``id,comment_text,toxic,severe_toxic,...`` (one-hot classes, a comment over several lines) and Kaggle's
    Rotten Tomatoes ``PhraseId,SentenceId,Phrase,Sentiment``: their text columns' names were unknown, so predict
    answered the header as a review and every line of a comment as one (answers not one a record), and training's
    error said the header named no class column (Sentiment is one) or named none beside a text column."""
    from fasttext_lib.predict import Predictor

    reviews = list(_shared("drug_reviews_test")["tweet"][:40])
    comments = [r.replace(". ", ".\n", 1) for r in reviews]  # pandas quotes a comment with line breaks
    flags = {c: [(i * k) % 5 == 0 for i in range(40)] for k, c in enumerate(["toxic", "severe_toxic", "insult"], 2)}
    path = tmp_path / "train.csv"
    pd.DataFrame({"id": [f"{i * 7919:016x}" for i in range(40)], "comment_text": comments,
                  **{c: [int(v) for v in vs] for c, vs in flags.items()}}).to_csv(path, index=False)
    cli = cli_in_process("predict", "--model", bundle, "--input", path)
    assert cli.returncode == 0, cli.stderr
    assert [json.loads(line) for line in cli.stdout.splitlines()] == \
        Predictor.load(bundle).predict([c.replace("\n", " ") for c in comments])
    assert "the text is column 'comment_text'; left out: 'id', 'toxic', 'severe_toxic', 'insult'" in cli.stderr
    refused = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "--label-column NAME" in refused.stderr
    # one-hot classes: what naming one of them does (the line said only "if one of them is the class, name it")
    assert ("(its 3 columns of 0 and 1, toxic, severe_toxic, insult, read as one-hot classes: naming one as the class "
            "trains a yes/no model of that one;") in refused.stderr
    toxic = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress", "--epochs", "1",
                           "--label-column", "toxic")
    assert toxic.returncode == 0, toxic.stderr
    assert "the class is column 'toxic', the text 'comment_text'; left out: 'id', 'severe_toxic', 'insult'" in \
        toxic.stderr
    phrases = _shared("amazon_snippets_test")[:60]
    pd.DataFrame({"PhraseId": range(1, 61), "SentenceId": [1 + i // 6 for i in range(60)], "Phrase": phrases["tweet"],
                  "Sentiment": phrases["sentiment"]}).to_csv(tmp_path / "rt.csv", index=False)
    notes = []
    data = read_labeled(str(tmp_path / "rt.csv"), note=notes.append)
    assert data.labels == list(phrases["sentiment"]) and data.texts == list(phrases["tweet"])
    assert any(n.endswith("left out: 'PhraseId', 'SentenceId' (--text-column NAME reads a column as text)") for n in notes)


@pytest.mark.parametrize("columns, says", [
    (["ItemID", "Sentiment", "SentimentSource", "SentimentText"],
     "names no text column training knows (abstract, answer, body, comment, comment_text, content, ...) beside the "
     "class column 'Sentiment'; say which to read: --label-column NAME --text-column NAME"),
    (["text", "sentiment", "stars"], "names 2 class columns (sentiment, stars): one is the class; say which to read"),
    (["tweet_id", "mood", "tweet_text"], "names no class column training knows (category, class, class_index, "),
])
def test_a_header_training_cannot_read_is_refused_with_what_it_names(tmp_path, columns, says):
    """The error line said "names no class column training knows" of a header that names one (the Twitter sentiment
    set's ItemID,Sentiment,SentimentSource,SentimentText; its text column's name is unknown) or two (sentiment and
    stars beside a text): the user looked for a name that was there."""
    snippets = _shared("amazon_snippets_test")[:60]
    values = {"ItemID": range(1, 61), "tweet_id": range(10**17, 10**17 + 60), "SentimentSource": ["Sentiment140"] * 60,
              "stars": [4 * int(v) - 3 for v in snippets["sentiment"]]}
    frame = pd.DataFrame({c: values.get(c, snippets["tweet"] if "text" in c.lower() else snippets["sentiment"])
                          for c in columns})
    frame.to_csv(tmp_path / "t.csv", index=False)
    got = cli_in_process("train", "--train", tmp_path / "t.csv", "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and says in got.stderr, got.stderr


def test_amazons_us_reviews_are_read_with_their_headline(tmp_path):
    """Amazon's US reviews as published (tab-separated: ...,star_rating,...,review_headline,review_body,...): the
    headline, a short title of the review under a name no rule knew (too short to read as prose), was left out."""
    snippets = _shared("amazon_snippets_test")[:60]
    headlines = [" ".join(t.split()[:3]) for t in snippets["tweet"]]
    frame = pd.DataFrame({"marketplace": ["US"] * 60, "customer_id": [10**7 + 7919 * i for i in range(60)],
                          "product_title": ["Kindle", "Echo Dot"] * 30, "star_rating": snippets["sentiment"],
                          "verified_purchase": ["Y"] * 60, "review_headline": headlines,
                          "review_body": snippets["tweet"], "review_date": ["2015-08-31"] * 60})
    frame.to_csv(tmp_path / "amazon_reviews_us.tsv", sep="\t", index=False)
    notes = []
    data = read_labeled(str(tmp_path / "amazon_reviews_us.tsv"), note=notes.append)
    assert data.labels == list(snippets["sentiment"])
    assert data.texts == [f"{h} {t}" for h, t in zip(headlines, snippets["tweet"])]
    assert any("the text 'review_headline', 'review_body'; left out: 'marketplace', 'customer_id', 'product_title', "
               "'verified_purchase', 'review_date'" in n for n in notes), notes


@pytest.mark.parametrize("numbered", [False, True])
@pytest.mark.parametrize("index", [False, True])
def test_pandas_default_column_names_are_a_header_not_a_document(tmp_path, real, numbered, index):
    """pd.DataFrame(pairs).to_csv(path, index=False) of (class, text) pairs writes the header 0,1: it was read as a
    document of the class "0" and the text "1" (with word classes, a class of one document)."""
    labels = [str(int(label == "positive")) for label in real.labels] if numbered else real.labels
    path = tmp_path / "pairs.csv"
    pd.DataFrame(list(zip(labels, real.texts))).to_csv(path, index=index)
    data = read_labeled(str(path))
    assert data.labels == labels and data.texts == real.texts

def _amazon_objects(data):
    """Amazon's reviews (2018) as published: one object a line, ``overall`` a float, ``style`` a nested object that
    some records lack, and some records without ``reviewText``."""
    objects = []
    for i, (label, text) in enumerate(zip(data.labels, data.texts)):
        obj = {"overall": 1.0 if label == "negative" else 5.0, "verified": bool(i % 2), "reviewTime": "09 13, 2009",
               "reviewerID": f"A{i:013d}", "asin": f"B{i % 7:09d}", "style": {"Format:": " Hardcover"},
               "reviewerName": "Some Body", "reviewText": text, "summary": f"summary {i}",
               "unixReviewTime": 1252800000 + i}
        if i % 5 == 0:
            del obj["style"]
        if i % 17 == 0:
            del obj["reviewText"]
        objects.append(obj)
    return objects


def test_json_lines_whose_first_object_lacks_a_key_read_it_from_the_objects_after(tmp_path, real, bundle):
    """Amazon's first review without reviewText (some records lack it): the keys were the first object's alone, so
    reviewText was never read, every review trained on (and answered for) its summary only, and the note named
    only summary as the text."""
    from fasttext_lib.predict import Predictor

    path = tmp_path / "Books_5.json"
    objects = _amazon_objects(real)
    path.write_text("".join(json.dumps(o) + "\n" for o in objects))
    notes = []
    data = read_labeled(str(path), note=notes.append)
    # (joined in the order the keys first come: summary in the first object, reviewText after it)
    assert data.texts == [" ".join(t for t in (o["summary"], o.get("reviewText")) if t) for o in objects]
    assert data.texts[0] == "summary 0" and data.labels == ["1" if x == "negative" else "5" for x in real.labels]
    assert len(notes) == 1 and "the text 'summary', 'reviewText'" in notes[0] and "'style'" in notes[0]
    answers = cli_in_process("predict", "--model", bundle, "--input", path)
    assert answers.returncode == 0, answers.stderr
    assert [json.loads(line) for line in answers.stdout.splitlines()] == Predictor.load(bundle).predict(data.texts)


def test_a_json_lines_labels_file_of_ids_beside_the_class_is_refused_not_trained_on_its_ids(tmp_path, real):
    # {"review_id": ..., "stars": 5.0} (the texts in another file): the CSV of it is refused (review13), the JSON
    # Lines were trained on the ids as words
    path = tmp_path / "labels.jsonl"
    pd.DataFrame({"review_id": _ids("r")(len(real)), "stars": [1.0 if x == "negative" else 5.0 for x in real.labels]}
                 ).to_json(path, orient="records", lines=True)
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("error:") == 1 and not (tmp_path / "m").exists()
    assert "'review_id', which over the first 51 objects holds one token per object" in got.stderr, got.stderr


def test_format_csv_on_json_lines_reads_them_as_json_lines(tmp_path, real, bundle):
    # --format csv on review.json read each object as a CSV row: its '{"review_id": "r..."' the class (one class per
    # review) and its other keys and values the text; predict --format csv answered keys and braces as words
    from fasttext_lib.predict import Predictor

    path = tmp_path / "review.json"
    _yelp_objects(real).to_json(path, orient="records", lines=True)
    data = read_labeled(str(path), "csv")
    assert data.texts == real.texts and data.labels == ["1" if x == "negative" else "5" for x in real.labels]
    answers = cli_in_process("predict", "--model", bundle, "--input", path, "--format", "csv")
    assert answers.returncode == 0, answers.stderr
    assert [json.loads(line) for line in answers.stdout.splitlines()] == Predictor.load(bundle).predict(real.texts)


@pytest.mark.parametrize("shape", ["cola", "text then label"])
def test_a_headerless_tsv_that_does_not_start_with_a_class_is_refused_not_trained_on_its_first_column(tmp_path, real,
                                                                                                      shape):
    # GLUE's CoLA (no header: source<TAB>label<TAB>original label<TAB>sentence) was trained on its sources (gj04,
    # ...) as the classes, the real class a word of each text; text<TAB>label lines on each text as a class of its own
    path = tmp_path / "in_domain_train.tsv"
    sources = ["gj04", "bc01", "ad03"]
    if shape == "cola":
        lines = [f"{sources[i * 3 // len(real)]}\t{int(x == 'positive')}\t{'' if x == 'positive' else '*'}\t{t}\n"
                 for i, (x, t) in enumerate(zip(real.labels, real.texts))]
    else:
        lines = [f"{t}\t{x}\n" for x, t in zip(real.labels, real.texts)]
    path.write_text("".join(lines))
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("error:") == 1 and not (tmp_path / "m").exists(), got.stderr
    assert "line 1 looks tab-separated, but it is no header row" in got.stderr
    # the advice, followed: a header row names the columns
    names = ["source", "label", "original", "sentence"] if shape == "cola" else ["sentence", "label"]
    pd.read_csv(path, sep="\t", header=None, quoting=3, names=names, keep_default_na=False).to_csv(
        tmp_path / "named.csv", index=False)
    data = read_labeled(str(tmp_path / "named.csv"), "auto" if shape != "cola" else
                        __import__("fasttext_lib.data", fromlist=["Columns"]).Columns("label", ("sentence",)))
    assert data.texts == real.texts


def test_predict_answers_every_line_of_reviews_whose_first_line_holds_a_tab_and_a_column_name(tmp_path, bundle, real):
    # a review pasted with a tab ("Summary<TAB>works great") read as a TSV header: the reviews after it (one field
    # each) were refused as malformed TSV rows, or answered without the first line, every answer one off
    from fasttext_lib.predict import Predictor

    lines = ["Summary\tworks great"] + list(real.texts[:20])
    path = tmp_path / "reviews.txt"
    path.write_text("".join(line + "\n" for line in lines))
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    assert [json.loads(line) for line in got.stdout.splitlines()] == Predictor.load(bundle).predict(lines)


def test_predict_of_a_one_column_csv_reads_a_literal_backslash_n_as_training_does(tmp_path, bundle, real):
    # Zhang et al.'s line break (a literal \n) is a space in training's texts (csv_text): a one-column file to
    # label (review) kept it, once its records were joined with commas, "food.\nthe" one word
    from fasttext_lib.predict import Predictor

    texts = [t.replace(" ", "\\n", 1) for t in real.texts[:20]]
    path = tmp_path / "reviews.csv"
    pd.DataFrame({"review": texts}).to_csv(path, index=False)
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    assert [json.loads(line) for line in got.stdout.splitlines()] == Predictor.load(bundle).predict(real.texts[:20])


def test_json_lines_without_a_class_key_are_not_trained_on_their_first_key_as_the_class(tmp_path, real):
    # reviews to label ({"review_id": ..., "text": ...}): the first key was read as an unnamed class (a CSV header's
    # first column may be one), and training learnt one class per review id
    path = tmp_path / "reviews.jsonl"
    pd.DataFrame({"review_id": _ids("r")(len(real)), "text": real.texts}).to_json(path, orient="records", lines=True)
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("error:") == 1 and not (tmp_path / "m").exists(), got.stderr
    assert "name no class key training knows" in got.stderr and "--label-column NAME" in got.stderr


def test_ids_first_under_a_header_of_text_columns_are_refused_as_classes_and_answered_by_predict(tmp_path, real,
                                                                                                 bundle):
    """review_id,text (reviews to label, with their ids): the first column, under a name training does not know, is
    where Zhang et al.'s header puts the class ("Class Index",Title,Description), so every review was its own class.
    Training refuses ids there; predict answers each record for its text, as before. Classes written as words that
    differ often (intents) are not ids: they hold no digits."""
    from fasttext_lib.predict import Predictor

    path = tmp_path / "to_label.csv"
    pd.DataFrame({"review_id": _ids("r")(len(real)), "text": real.texts}).to_csv(path, index=False)
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("error:") == 1 and not (tmp_path / "m").exists()
    assert "puts 'review_id' first, where the class goes, but over the first 50 rows it holds ids" in got.stderr
    answers = cli_in_process("predict", "--model", bundle, "--input", path)
    assert answers.returncode == 0
    assert [json.loads(line) for line in answers.stdout.splitlines()] == Predictor.load(bundle).predict(real.texts)
    intents = [f"intent_{'abcdefghijklmnopqrstuvwxyz'[i % 26]}{'abcdefghij'[i % 10]}" for i in range(len(real))]
    pd.DataFrame({"intent": intents, "text": real.texts}).to_csv(path, index=False)
    assert read_labeled(str(path)).labels == intents


def test_predict_reads_blazingtext_source_lines_as_the_endpoint_does(tmp_path, bundle, real):
    """Lines written for the endpoint's Batch Transform ({"source": ..., "id": ...}) read by predict: "source" is the
    review, other keys carried along (a "text" key beside it was joined to it, where the endpoint answers "source")."""
    from fasttext_lib import sm_serve
    from fasttext_lib.predict import Predictor

    part = real.head(20)
    path = tmp_path / "requests.jsonl"
    path.write_text("".join(json.dumps({"source": t, "text": "carried along", "id": i}) + "\n"
                            for i, t in enumerate(part.texts)))
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert got.returncode == 0, got.stderr
    assert [json.loads(line) for line in got.stdout.splitlines()] == Predictor.load(bundle).predict(part.texts)
    assert list(sm_serve.input_fn(path.read_bytes(), "application/jsonlines")) == part.texts


@pytest.mark.parametrize("header", ["label,text", "text,label", "review_id,stars,text", '"Class Index","Title","Description"'])
def test_predict_of_a_header_row_alone_is_no_data_not_a_review(tmp_path, bundle, header):
    # a CSV whose rows were never written: its header was answered as a review, exit 0
    path = tmp_path / "empty.csv"
    path.write_text(header + "\n")
    got = cli_in_process("predict", "--model", bundle, "--input", path)
    assert (got.returncode, got.stdout) == (2, "") and got.stderr.count("error:") == 1
    assert "no data rows (only a header row" in got.stderr
    assert cli_in_process("predict", "--model", bundle, "--input", path, "--format", "text").stdout.count("\n") == 1


@pytest.mark.parametrize("header, sep", [
    (("id", "date", "rating", "Review Text", "label"), ","),    # a Kaggle export: a text rating and the label last
    (("id", "rating", "sentiment", "review"), ","),
    (("id", "rating", "sentiment", "review"), "\t"),
])
def test_a_table_whose_header_names_two_class_columns_is_answered_for_its_text_by_predict(tmp_path, bundle, real,
                                                                                           header, sep):
    """A table with a rating and a label (id,date,rating,Review Text,label) names two class columns: training asks
    which one is the class (--label-column), but predict and the endpoint answered it a line at a time, silently:
    the header as a review, each row's id, date, rating and class as words of its review, and a review holding a
    line break as two. The class columns are no text to score: each record is answered for its text column."""
    from fasttext_lib import sm_serve
    from fasttext_lib.predict import Predictor

    part = real.head(40)
    texts = [t.replace(" ", "\n", 1) if i % 5 == 0 else t for i, t in enumerate(part.texts)]  # (a line break inside)
    values = {"id": [str(7001 + 13 * i) for i in range(len(texts))], "date": ["2019-01-%02d" % (i % 28 + 1)
              for i in range(len(texts))], "rating": ["5 stars" if c == "positive" else "1 star" for c in part.labels],
              "label": part.labels, "sentiment": part.labels, "Review Text": texts, "review": texts}
    path = tmp_path / ("kaggle.tsv" if sep == "\t" else "kaggle.csv")
    pd.DataFrame({name: values[name] for name in header}).to_csv(path, index=False, sep=sep)
    expected = Predictor.load(bundle).predict(texts)
    for fmt in ("auto", "csv") if sep == "," else ("auto",):
        cli = cli_in_process("predict", "--model", bundle, "--input", path, "--format", fmt)
        assert cli.returncode == 0, cli.stderr
        assert [json.loads(line) for line in cli.stdout.splitlines()] == expected
        left = ", ".join(repr(n) for n in header if n not in ("Review Text", "review"))
        assert f"left out: {left}" in cli.stderr and "names 2 class columns" in cli.stderr, cli.stderr
    if sep == ",":
        assert _served(bundle, path.read_text(), "text/csv; header=present") == expected
        assert list(sm_serve.input_fn(path.read_bytes(), "text/csv; header=present")) == texts
    # training still asks which column is the class, in one line
    got = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--no-progress")
    assert got.returncode == 2 and got.stderr.count("error:") == 1, got.stderr
    assert "names 2 class columns" in got.stderr and "--label-column NAME" in got.stderr
    assert not (tmp_path / "m").exists()


def test_training_says_once_per_file_how_many_documents_have_no_words(real, tmp_path):
    """CSV rows 2,"" (a review whose text was lost) trained as documents of no words, silently. Kept, as fastText keeps
    such lines, and the CLI's training says so in one note on stderr per file, not per chunk."""
    rows = [f'{label},"{text}"' for label, text in zip(real.labels, (t.replace('"', '""') for t in real.texts))]
    rows[5], rows[70] = 'positive,""', "negative,"
    path = tmp_path / "train.csv"
    path.write_text("label,text\n" + "\n".join(rows) + "\n")
    r = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if "no words" in line]
    assert notes == [f"{path}: 2 documents have no words (the first at line 7); they are kept, as fastText keeps such "
                     f"lines, each read as one unknown word (<unk>): to leave them out, drop them first (pandas: "
                     f"df[df['text'].fillna('').str.strip() != ''])"], r.stderr


def test_classes_written_in_two_cases_are_named_with_a_line_of_each_and_how_to_merge_them(real, tmp_path):
    """'Positive' in some rows and 'positive' in others: the warning named the two spellings, but not where each is,
    nor how to merge them but by pandas. Now the first line of each, and a perl line for a fastText-format file."""
    labels = list(real.labels)
    first_upper = next(i for i, label in enumerate(labels) if label == "positive" and i > 3)
    labels[first_upper] = "Positive"
    path = tmp_path / "train.txt"
    path.write_text("".join(f"__label__{label} {text}\n" for label, text in zip(labels, real.texts)))
    first_lower = labels.index("positive") + 1
    r = cli_in_process("train", "--train", path, "--output", tmp_path / "m", "--epochs", "1", "--no-progress")
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    sep = r"[\t\x0b\f\r\x1c-\x1f ]|\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80"
    assert warnings == [
        f"warning: training data has classes 'Positive' ({path}:{first_upper + 1}) and 'positive' ({path}:"
        f"{first_lower}), each one label written in two cases, which train as separate classes; if they are one "
        f"class, write the labels one way (this file: perl -C0 -i.bak -pe "
        f"'s/(?:^(?:\\xef\\xbb\\xbf)*|{sep})\\K__label__Positive(?={sep}|$)/__label__positive/g' {path})"], r.stderr


@pytest.mark.parametrize("body", ["{0}\n\n{1}\n{2}\n\n", '"{0}\nits second paragraph"\n\n{1}\n{2}\n'])
def test_a_blank_line_of_a_one_column_file_is_answered_alike_by_every_reading(bundle, real, body):
    """A blank line of a CSV of one column without a header gets an answer with --format csv. So it does read without
    --format (a line at a time, or as CSV records when a review goes on over lines) and by the endpoint's text/csv
    (a blank line is a record there, so that Batch Transform's answers stay line for line): all agree, the answers
    in step with the records, blank ones included. (Pinned: skipped with --format csv alone, every answer after a
    blank line would be one off from what the other readings give.)"""
    from fasttext_lib import sm_serve

    reviews = [t for t in real.texts if "," not in t and '"' not in t][:3]
    text = body.format(*reviews)
    answers = {}
    for fmt in ("csv", "auto"):
        r = cli_in_process("predict", "--model", bundle, "--format", fmt, input=text)
        assert r.returncode == 0, r.stderr
        answers[fmt] = [json.loads(line) for line in r.stdout.splitlines()]
    model = sm_serve.model_fn(str(bundle))
    endpoint = json.loads(sm_serve.output_fn(sm_serve.predict_fn(sm_serve.input_fn(text.encode(), "text/csv"),
                                                                 model), "application/json")[0])
    records = list(csv.reader(io.StringIO(text)))  # (Python's csv: a blank line is a record, [])
    assert answers["csv"] == answers["auto"] == endpoint and len(endpoint) == len(records), (answers, endpoint)


@pytest.mark.parametrize("sep", [",", "\t"])
def test_a_class_first_row_wider_than_its_header_is_read_as_csv_and_tsv_alike(tmp_path, real, sep):
    """A row of a class-first table wider than its header (a tab or a comma typed in an unquoted text) is its class
    and its text, the extra fields joined with a space: the class is the first field whatever the width, and a tab is
    a space to the tokenizer, so the words are those the row holds. Where the class is elsewhere (text,label), which
    field is the class cannot be told: one error naming the line and the separator, CSV and TSV alike."""
    path = tmp_path / f"t.{'csv' if sep == ',' else 'tsv'}"
    texts = [t for t in real.texts if sep not in t and '"' not in t][:3]
    path.write_text(f"label{sep}text\n" + "".join(f"{label}{sep}{text}\n" for label, text in zip(
        real.labels, [texts[0], texts[1].replace(" ", sep, 1), texts[2]])))
    data = read_labeled(str(path))
    assert data.labels == list(real.labels[:3]) and data.texts == texts
    path.write_text(f"text{sep}label\n" + "".join(f"{text}{sep}{label}\n" for label, text in zip(
        real.labels, [texts[0], texts[1].replace(" ", sep, 1), texts[2]])))
    with pytest.raises(FastTextError, match=rf"^{path}:3: malformed CSV row: 3 column\(s\) where the header row has 2 "
                                            rf"\(a {'comma' if sep == ',' else 'tab'} in an unquoted text\?"):
        read_labeled(str(path))


def _two_names_lines(first, recurs_at, rows):
    """The lines of a headerless CSV of ``rows`` records of word classes whose first row is ``first`` (two names: a
    record, or a header such as v1,v2), its first value recurring at row ``recurs_at`` only (None: never)."""
    words = "food service staff slow cold warm great awful tasty bland rude kind".split()
    value = first.split(",")[0]
    return [first + "\n"] + [f"{value if row == recurs_at else ('negative' if row % 2 else 'neutral')},"
                             f"{' '.join(words[(row * k) % len(words)] for k in range(1, 6))}\n"
                             for row in range(2, rows + 1)]


def _two_names_first(tmp_path, first, recurs_at, rows=10_100):
    """:func:`_two_names_lines` as a file (``(path, records)``): by default past the 50 rows of the look-ahead and
    the 10,000 searched after it."""
    lines = _two_names_lines(first, recurs_at, rows)
    path = tmp_path / "late.csv"
    path.write_text("".join(lines))
    return path, len(lines)


def _counting(monkeypatch):
    """``[n]``: how many lines the reads after this call take of their files (data.iter_examples' lines)."""
    from fasttext_lib import data

    count, lines_of = [0], data.without_excel_sep

    def counted(lines, uri):
        for line in lines_of(lines, uri):
            count[0] += 1
            yield line
    monkeypatch.setattr(data, "without_excel_sep", counted)
    return count


_UNSETTLED = r"late.csv:1: its first row \({first}\) reads as a header row or as a record, and a read limited to {limit} "


@pytest.mark.parametrize("fmt", ["auto", "csv"])
def test_a_first_record_whose_class_recurs_only_past_ten_thousand_rows_is_read_as_a_record(tmp_path, fmt):
    """A first row of two names over word classes is a header (v1,v2,,,) when its first value is no class of the
    file. That was decided from the 50 rows below it (no --format: refused as a header) or 10,050 (--format csv): a
    genuine first record, ``positive,great food``, whose class recurs only further down was refused as a header of
    unknown names, and so were its documents. The whole file decides now: its class further down makes it a record,
    read with every other one (read_labeled, and training's read_counted alike; read_labeled's limit, when it reaches
    the row that recurs)."""
    from fasttext_lib.data import read_counted

    path, records = _two_names_first(tmp_path, "positive,great food", recurs_at=10_060)
    data = read_labeled(str(path), fmt=fmt)
    assert (data.labels[0], data.texts[0], len(data), data.labels.count("positive")) == \
        ("positive", "great food", records, 2)
    assert read_labeled(str(path), fmt=fmt, limit=10_060).labels[-1] == "positive"  # (its last document: the row)
    counted = read_counted([str(path)], fmt)
    assert len(counted.labels) == records and list(counted.labels).count("positive") == 2


@pytest.mark.parametrize("fmt", ["auto", "csv"])
def test_a_first_row_of_two_names_whose_first_is_no_class_of_the_file_is_still_refused_as_a_header(tmp_path, fmt):
    """The other way round: ``v1,v2`` over more than 10,050 rows none of which has the class v1 is a header of names
    training does not know, refused with the flags that read it, once the whole file has shown it (a limited read
    whose limit is the whole file too)."""
    path, records = _two_names_first(tmp_path, "v1,v2", recurs_at=None)
    for limit in (None, records):
        with pytest.raises(FastTextError, match=r"reads as a (CSV )?header( row)? \(v1,v2\).*--label-column NAME "
                                                r"--text-column NAME.*add a header row above it"):
            read_labeled(str(path), fmt=fmt, limit=limit)


@pytest.mark.parametrize("first, recurs_at", [("v1,v2", None), ("positive,great food", 20_000)])
def test_a_limited_read_does_not_read_the_whole_file_to_settle_its_first_row(tmp_path, monkeypatch, first,
                                                                              recurs_at):
    """A read with a limit (read_labeled's: notebooks 02-04's ``read_prepared``) whose first row of two names the
    look-ahead leaves unsettled read the rest of the file to settle it: all 30,000 lines for 100 documents (a 5 GB
    file to its end). The rows read so far cannot tell a header (v1,v2) from a record whose class recurs further
    down, and either guess is wrong for one of them (a class v1 of one document; a record lost), where the whole read
    is right for both: it is refused in one line that says how to tell it which, after the rows the look-ahead read
    and one more (was the file at its end? then the whole read's answer), counted here."""
    path, _ = _two_names_first(tmp_path, first, recurs_at, rows=30_000)
    count = _counting(monkeypatch)
    with pytest.raises(FastTextError, match=_UNSETTLED.format(first=first, limit=100) + r"documents cannot tell "
                       r"which: none of the rows up to line 10052 .*; if it is a header, say which to read: "
                       r"--label-column NAME --text-column NAME.*; if line 1 is a record, not a header, add a header "
                       r"row above it \(label,text\)$"):
        read_labeled(str(path), limit=100)
    assert count[0] == 10_052  # line 1, the 10,050 rows searched, one more
    count[0] = 0
    with pytest.raises(FastTextError, match=_UNSETTLED.format(first=first, limit=12_000)):
        read_labeled(str(path), limit=12_000)  # (a limit past the rows searched: as far as it goes)
    assert count[0] == 12_001  # (its documents, one line each, and one more)
    count[0] = 0
    if recurs_at is not None:  # a limit that reaches the row of its class: a record, the rest unread
        assert read_labeled(str(path), limit=recurs_at).labels[0] == "positive" and count[0] == recurs_at


def test_a_first_row_left_unsettled_after_the_rows_searched_is_told_before_the_rest_is_read(tmp_path):
    """A first row of two names the 10,050 rows searched leave unsettled is settled by the rest of the file, read to
    its end for a header (minutes for 5 GB) before its one line of refusal: one note says so before the rest is read,
    and how to spare the wait; on stderr, above the error line (the CLI)."""
    from fasttext_lib.data import examples_of_lines

    count, notes = [0], []

    def counted(lines):
        for line in lines:
            count[0] += 1
            yield line
    with pytest.raises(FastTextError, match=r"its first row reads as a header \(v1,v2\)"):
        list(examples_of_lines(counted(_two_names_lines("v1,v2", None, 30_000)), "stream.csv",
                               note=lambda line: notes.append((line, count[0]))))
    assert len(notes) == 1 and notes[0][1] < 10_100 and count[0] == 30_000  # (told before the rest was read)
    assert re.fullmatch(r"stream.csv:1: its first row \(v1,v2\) may be a header row: none of the rows up to line "
                        r"10051 has its first value \('v1'\) as its class, and the rest of the file decides .*; to "
                        r"skip the wait, say which it is: if line 1 is a record, add a header row above it "
                        r"\(label,text\); if it is a header, name its columns: --label-column NAME --text-column NAME "
                        r"\(the SageMaker job's label_column and text_column\)", notes[0][0])
    path, _ = _two_names_first(tmp_path, "v1,v2", None, rows=30_000)
    run = cli_in_process("train", "--train", path, "--output", tmp_path / "m")
    assert run.returncode == 2 and run.stderr.splitlines()[0] == notes[0][0].replace("stream.csv", str(path))
    assert [line.split(":")[0] for line in run.stderr.splitlines()] == [str(path), "error"]


@pytest.mark.parametrize("first, recurs_at, rows", [
    ("positive,great food", 3_000, 30_000),  # its class among the rows searched: a record
    ("v1,v2", None, 5_000),                  # the file ends among them: a header, refused
    ("label,text", None, 30_000),            # a header training reads
])
def test_a_first_row_settled_by_the_rows_searched_is_read_without_a_note(first, recurs_at, rows):
    from fasttext_lib.data import examples_of_lines

    notes = []
    try:
        list(examples_of_lines(iter(_two_names_lines(first, recurs_at, rows)), "s.csv", note=notes.append))
    except FastTextError as exc:
        assert first == "v1,v2" and "its first row reads as a header (v1,v2)" in str(exc)
    assert notes == []
