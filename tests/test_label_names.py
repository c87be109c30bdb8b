"""Label names (label_names.py): parsed, found beside the data, stored in the bundle and shown by
predict, evaluate and the Predictor; hostile mapping files are one-line errors that leave nothing."""
import json
import os
import re
import shutil

import pytest

from conftest import cli_in_process, cli_in_process_with, make_splits, run_cli
from fasttext_lib import cli, label_names, storage
from fasttext_lib.data import LabeledTexts, read_labeled
from fasttext_lib.errors import FastTextError
from fasttext_lib.predict import Predictor
from fasttext_lib.writers import write_csv, write_fasttext

FAST = ["--epochs", "2", "--batch-size", "256", "--emsize", "16", "--no-progress"]
POLARITY = {"1": "negative", "2": "positive"}


# ---------------------------------------------------------------- parsing

def test_zhang_classes_txt_names_line_i_class_i():
    assert label_names.parse_text("World\nSports\n\nBusiness\r\nSci/Tech\n", "f") == \
        {"1": "World", "2": "Sports", "3": "Business", "4": "Sci/Tech"}


def test_id_name_lines_and_inline_forms():
    assert label_names.parse_text("\ufeff2=positive\n1 = negative\n", "f") == {"2": "positive", "1": "negative"}
    assert label_names.parse_inline("1=negative, 2=positive") == POLARITY
    assert label_names.parse_inline('{"pos": "a, b", "neg": "c=d"}') == {"pos": "a, b", "neg": "c=d"}
    assert label_names.from_option("yelp_review_polarity") == POLARITY
    assert label_names.from_option("none") == {} and label_names.from_option("") == {}


@pytest.mark.parametrize("mapping", [POLARITY, {"1": "a, b", "2": "c"}, {"x=y": "z", "w": "v"}])
def test_inline_round_trip(mapping):
    """What training_hyperparameters sends a SageMaker job reads back as the same mapping."""
    assert label_names.from_option(label_names.to_inline(mapping)) == mapping


def test_known_names_cover_every_registry_dataset():
    from fasttext_lib.download import DATASETS

    assert set(label_names.KNOWN) == set(DATASETS)
    for name, spec in DATASETS.items():
        known = label_names.KNOWN[name]
        assert list(known) == [str(i) for i in range(1, spec.num_classes + 1)], name
        assert len(set(known.values())) == spec.num_classes
    assert label_names.KNOWN["ag_news"]["4"] == "Sci/Tech" and label_names.KNOWN["dbpedia"]["14"] == "WrittenWork"
    assert label_names.KNOWN["yelp_review_full"]["1"] == "1 star"


@pytest.mark.parametrize("separator", ["\x85", "\u2028", "\u2029"])
def test_a_name_with_a_unicode_line_separator_stays_one_class(tmp_path, separator):
    # Lines end at \n / \r\n / \r, as in the data: class 2 stays "positive", not a fragment of name 1.
    path = tmp_path / "classes.txt"
    path.write_text(f"neg{separator}ative\npositive\n", encoding="utf-8")
    assert label_names.read_file(str(path)) == {"1": f"neg{separator}ative", "2": "positive"}


@pytest.mark.parametrize("separator", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e"])
def test_a_name_with_an_ascii_separator_is_refused_not_split(tmp_path, separator):
    path = tmp_path / "classes.txt"
    path.write_text(f"neg{separator}ative\npositive\n", encoding="utf-8")
    with pytest.raises(FastTextError, match=r"classes\.txt:1: name .* holds a control character"):
        label_names.read_file(str(path))


def test_cli_does_not_renumber_classes_after_a_name_with_a_line_separator(tmp_path):
    data = make_splits(300, 10, seed=2)[0]
    write_csv(data, str(tmp_path / "train.csv"))
    (tmp_path / "classes.txt").write_text("bad\u2028review\ngood review\n", encoding="utf-8")
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "b", *FAST)
    assert r.returncode == 0, r.stderr
    assert Predictor.load(tmp_path / "b").label_names == {"1": "bad\u2028review", "2": "good review"}


@pytest.mark.parametrize("text, pattern", [
    ("", "names no class"),
    ("\n \n", "names no class"),
    ("good\ngood\n", "have the same name 'good'"),
    ("1=a\n1=b\n", ":2: class '1' is named twice"),
    ("1=a\n2=\n", ":2: empty name"),
    ("=a\n", ":1: empty class id"),
    ("1=a\nplain\n", ":2: expected id=name"),
    ("1=" + "x" * 500 + "\n", "500 characters"),
    ("1=a\tb\n", "control character"),
])
def test_hostile_names_files(tmp_path, text, pattern):
    path = tmp_path / "classes.txt"
    path.write_text(text)
    with pytest.raises(FastTextError, match=pattern):
        label_names.read_file(str(path))


def _read_names(tmp_path, content):
    """label_names.read_file of a names.txt holding ``content`` (text, or bytes as they are)."""
    path = tmp_path / "names.txt"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return label_names.read_file(str(path))


@pytest.mark.parametrize("text", ["Label names\n1=negative\n2=positive\n", "classes\n1=negative\n2=positive\n",
                                  "negative\n2=positive\n"])
def test_id_name_lines_after_a_first_line_without_are_refused_not_taken_as_names(tmp_path, text):
    """A first line without '=' (a comment or title above id=name lines) made the file read as classes.txt lines:
    class 1 was named '# label names' and class 2 '1=negative', silently, as every class after it."""
    with pytest.raises(FastTextError, match=r"names.txt:\d: an id=name line .* but line 1 is a name"):
        _read_names(tmp_path, text)


@pytest.mark.parametrize("text", ["# label names\n1=negative\n2=positive\n", "# classes\nnegative\npositive\n",
                                  "negative\n  # the good ones:\npositive\n# end\n"])
def test_lines_starting_with_a_hash_are_comments_in_both_forms(tmp_path, text):
    """A '# classes' line above classes.txt lines named class 1 '# classes' and every class after it one off."""
    assert _read_names(tmp_path, text) == POLARITY


@pytest.mark.parametrize("text, line", [("names:\nnegative\npositive\n", 1), ("negative\nClasses:\npositive\n", 2)])
def test_a_title_above_classes_txt_lines_is_refused_not_taken_as_class_1(tmp_path, text, line):
    """'names:' was class 1's name, 'negative' class 2's: every class shown one off, silently."""
    with pytest.raises(FastTextError, match=rf"names.txt:{line}: '\w+:' is a title, not a class name .* comment"):
        _read_names(tmp_path, text)


def test_cli_refuses_a_label_names_file_with_a_title_and_reads_one_with_a_comment(tmp_path):
    data = make_splits(300, 10, seed=2)[0]
    write_csv(data, str(tmp_path / "train.csv"))
    (tmp_path / "names.txt").write_text("names:\nnegative\npositive\n")
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "b", "--label-names",
                tmp_path / "names.txt", *FAST)
    assert r.returncode != 0 and r.stderr.count("error:") == 1 and "is a title" in r.stderr, r.stderr
    assert not (tmp_path / "b").exists()
    (tmp_path / "names.txt").write_text("# names\nnegative\npositive\n")
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "b", "--label-names",
                tmp_path / "names.txt", *FAST)
    assert r.returncode == 0, r.stderr
    assert Predictor.load(tmp_path / "b").label_names == POLARITY


@pytest.mark.parametrize("beside_train, beside_validation, named", [
    (None, "negative\npositive\n", POLARITY),  # beside --validation only: ignored, the bundle said 1 and 2
    ("negative\npositive\n", "negative\npositive\n", POLARITY),  # the same names beside both
    ("negative\npositive\n", None, POLARITY),
])
def test_train_takes_the_class_names_beside_the_validation_file_too(tmp_path, beside_train, beside_validation, named):
    """``train --validation FILE`` ignored a classes.txt beside FILE, where notebook 01 reads one beside its test_file:
    beside --validation only, it names the classes as one beside --train does."""
    out = _train_beside(tmp_path, beside_train, beside_validation)
    assert out.returncode == 0, out.stderr
    assert Predictor.load(tmp_path / "b").label_names == named
    assert "label names: 1=negative, 2=positive" in out.stderr


def test_train_refuses_other_class_names_beside_the_validation_file_than_beside_the_train_file(tmp_path):
    """A classes.txt beside --validation that names the classes otherwise than the one beside --train: which is right
    is the user's to say (as notebook 01 refuses them), one line before the data is read, nothing written;
    ``--label-names`` says it."""
    out = _train_beside(tmp_path, "negative\npositive\n", "bad\ngood\n")
    assert out.returncode == 2 and out.stderr.count("error:") == 1 and not (tmp_path / "b").exists(), out.stderr
    assert out.stderr.splitlines()[-1] == (
        f"error: {tmp_path / 'train' / 'classes.txt'} (beside --train) and {tmp_path / 'valid' / 'classes.txt'} "
        f"(beside --validation) name the classes differently (class '1': 'negative' and 'bad'): make them the same, "
        f"or remove the one that is wrong (or give --label-names)")
    named = _train_beside(tmp_path, "negative\npositive\n", "bad\ngood\n", "--label-names", "1=neg,2=pos")
    assert named.returncode == 0 and Predictor.load(tmp_path / "b").label_names == {"1": "neg", "2": "pos"}


def test_a_validation_class_training_lacks_is_said_as_such_where_the_names_are_beside_the_validation_file(tmp_path):
    """A classes.txt beside --validation only, naming a class the validation data has and the training data lacks:
    the run was refused with ``train_data.names gives a name to class(es) '3' ...`` (a name of the library's own
    code), where the same data without the file is refused for what is wrong, the validation class training never
    saw. It is now refused as without the file, the names shown as they are for the training data's classes."""
    (tmp_path / "v").mkdir()
    (tmp_path / "t.txt").write_text("__label__1 bad food\n__label__2 good food\n__label__1 awful\n__label__2 great\n")
    (tmp_path / "v" / "v.txt").write_text("__label__1 bad\n__label__2 good\n__label__3 odd\n")
    (tmp_path / "v" / "classes.txt").write_text("bad\ngood\nodd\n")
    out = cli_in_process("train", "--train", tmp_path / "t.txt", "--validation", tmp_path / "v" / "v.txt", "--output",
                  tmp_path / "b", *FAST)
    assert out.returncode == 2 and out.stderr.count("error:") == 1 and not (tmp_path / "b").exists(), out.stderr
    assert "train_data" not in out.stderr, out.stderr
    assert out.stderr.splitlines()[-1].startswith(
        f"error: {tmp_path / 'v' / 'v.txt'} has label(s) '3' (line 3) not seen in training (known: 1 (bad), 2 (good))")


def _train_beside(tmp_path, beside_train, beside_validation, *flags):
    """``train`` of train/set.csv, validated on valid/set.csv, with a classes.txt of ``beside_train`` /
    ``beside_validation`` beside each (None: none)."""
    train, valid = make_splits(300, 60, seed=2)
    for folder, data, names in (("train", train, beside_train), ("valid", valid, beside_validation)):
        (tmp_path / folder).mkdir(exist_ok=True)
        write_csv(data, str(tmp_path / folder / "set.csv"))
        if names is not None:
            (tmp_path / folder / "classes.txt").write_text(names)
    return cli_in_process("train", "--train", tmp_path / "train" / "set.csv", "--validation",
                          tmp_path / "valid" / "set.csv", "--output", tmp_path / "b", "--overwrite", *FAST, *flags)


@pytest.mark.parametrize("title", ["Classes", "Label names", "class names", "List of categories", "LABELS"])
@pytest.mark.parametrize("route", ["--label-names", "beside the data"])
def test_a_title_without_a_colon_above_more_names_than_classes_is_refused(tmp_path, title, route):
    """'Classes' above 'negative', 'positive' named class 1 'Classes' and class 2 'negative': every class shown one
    off, silently (a title without ':' is a possible name). With one more name than the data has classes, it is the
    title."""
    data = make_splits(300, 10, seed=2)[0]
    write_csv(data, str(tmp_path / "train.csv"))
    names = tmp_path / ("names.txt" if route == "--label-names" else "classes.txt")
    names.write_text(f"{title}\nnegative\npositive\n")
    extra = ["--label-names", names] if route == "--label-names" else []
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "b", *extra, *FAST)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: {names}:1: {title!r} looks like a title, not the name of class 1: with it the file names 3 classes "
        f"for the data's 2, each name one class off; remove it, or make it a comment ('# {title}')"], r.stderr
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("text, labels, expected", [
    ("Classes\nnegative\npositive\n", ["1", "2", "3"], {"1": "Classes", "2": "negative", "3": "positive"}),  # as many
    ("Company\nEducationalInstitution\nArtist\n", ["1", "2"], {"1": "Company", "2": "EducationalInstitution"}),
    ("Topics & Names\nWorld\n", ["1"], {"1": "Topics & Names"}),  # (punctuation: a name)
    ("Label\nSpam\nHam\n", ["1", "2", "3"], {"1": "Label", "2": "Spam", "3": "Ham"}),
], ids=["as many names as classes", "a head of dbpedia", "not only title words", "a class named Label"])
def test_names_files_a_title_cannot_be_told_in_are_read_as_before(tmp_path, text, labels, expected):
    """Only a first line of title words (class, label, name, category, ...) above more names than the data's classes
    is refused: a class named so with as many names as classes, or a dataset's classes.txt beside a split that lacks
    its last classes (dbpedia's are sorted by class), are read as before."""
    found = _read_names(tmp_path, text)
    assert label_names.kept_for_data(found, labels, "names.txt", subset=True) == expected
    data = LabeledTexts(labels, ["a"] * len(labels))
    label_names.settle(data, label_names.DatasetNames(found, title=found.title), "--label-names")
    assert data.names == expected


def test_a_classes_txt_name_with_an_equals_sign_is_still_a_name():
    assert label_names.parse_text("World\nE=mc2 and other physics\n", "f") == \
        {"1": "World", "2": "E=mc2 and other physics"}


@pytest.mark.parametrize("raw, pattern", [
    (b"neg\x00ative\n", "NUL bytes"),
    (b"n\xe9gatif\n", "not UTF-8"),
    (b"x" * (label_names.MAX_FILE_BYTES + 1), "more than"),
])
def test_binary_or_huge_names_files(tmp_path, raw, pattern):
    with pytest.raises(FastTextError, match=pattern):
        _read_names(tmp_path, raw)


@pytest.mark.parametrize("route", ["--label-names", "beside the data"])
@pytest.mark.parametrize("encoding, bom, source", [
    ("utf-16", b"", "UTF-16"),  # Windows Notepad's "Unicode": UTF-16LE after its byte order mark
    ("utf-16-be", b"\xfe\xff", "UTF-16"),
    ("utf-16-le", b"", "UTF-16LE (no byte order mark)"),
])
def test_a_utf16_names_file_is_said_to_be_utf16_with_how_to_convert_it(tmp_path, route, encoding, bom, source):
    """A names file saved as UTF-16 was refused as "not a text file (contains NUL bytes)": neither what it is nor how
    to fix it. Said as the data's readers say it (lines.utf16_text), on one line, nothing written."""
    data = make_splits(300, 10, seed=2)[0]
    write_csv(data, str(tmp_path / "train.csv"))
    names = tmp_path / ("names.txt" if route == "--label-names" else "classes.txt")
    names.write_bytes(bom + "negative\r\npositive\r\n".encode(encoding))
    extra = ["--label-names", names] if route == "--label-names" else []
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "b", *extra, *FAST)
    bare, marked = source.split(" ", 1) if " " in source else (source, "")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: {names}:1: not a text file this program reads: it is UTF-16 text{' ' + marked if marked else ''}; "
        f"convert it to UTF-8 first, e.g. iconv -f {bare} -t UTF-8 {names} > new.txt, or save it again as UTF-8 in "
        f"its editor"], r.stderr
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("spec, pattern", [
    ("1=negative,2", "expected id=name pairs"),
    ("nonsense", "no such file, not a known dataset"),
    ('{"1": 2}', "map class ids to strings"),
    ("{oops", "not a valid JSON object"),
    ("1=a,2=a", "same name 'a'"),
    ('{"1": "a", "1": "b"}', "class '1' is named twice"),  # json.loads alone keeps the last
])
def test_bad_inline_specs(spec, pattern):
    with pytest.raises(FastTextError, match=pattern):
        label_names.from_option(spec)


def test_a_folder_named_like_a_dataset_does_not_hide_its_names(tmp_path, monkeypatch):
    # prepare --dataset ag_news --output ag_news leaves that folder in the working directory.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ag_news").mkdir()
    assert label_names.from_option("ag_news") == label_names.KNOWN["ag_news"]
    (tmp_path / "mine").mkdir()
    with pytest.raises(FastTextError, match=r"--label-names 'mine' is a folder; give its names file \(e\.g\. mine/classes\.txt\)"):
        label_names.from_option("mine")


def test_checked_against_the_trained_labels():
    labels = ["1", "2", "3"]
    assert label_names.for_labels({"1": "a", "9": "z"}, labels, "x", strict=False) == {"1": "a"}
    with pytest.raises(FastTextError, match=r"x gives a name to class\(es\) '9' that the training data does not have"):
        label_names.for_labels({"1": "a", "9": "z"}, labels, "x", strict=True)
    with pytest.raises(FastTextError, match="3 classes would show as 2 names"):  # "1" is named like raw label "3"
        label_names.for_labels({"1": "3"}, labels, "x", strict=True)


# ---------------------------------------------------------------- found beside the data

def test_names_file_beside_the_data(tmp_path):
    data = LabeledTexts(["1", "2", "1"], ["good", "bad", "fine"])
    write_fasttext(data, str(tmp_path / "set.train"))
    assert read_labeled(str(tmp_path / "set.train")).names == {}
    (tmp_path / "classes.txt").write_text("neg\npos\nother\n")  # the archives' layout; class 3 is absent here
    assert read_labeled(str(tmp_path / "set.train")).names == {"1": "neg", "2": "pos"}
    (tmp_path / "set.classes.txt").write_text("1=negative\n2=positive\n")  # <stem>.classes.txt comes first
    assert read_labeled(str(tmp_path / "set.train")).names == POLARITY
    assert read_labeled(str(tmp_path / "set.train"), find_names=False).names == {}
    assert read_labeled(str(tmp_path / "set.train")).head(1).names == POLARITY


def test_names_file_beside_s3_data(s3_bucket):
    write_fasttext(LabeledTexts(["1", "2"], ["good", "bad"]), f"{s3_bucket}/data/set.train")
    assert read_labeled(f"{s3_bucket}/data/set.train").names == {}
    with storage.atomic_write(f"{s3_bucket}/data/set.classes.txt", "wb") as f:
        f.write(b"1=negative\n2=positive\n")
    assert read_labeled(f"{s3_bucket}/data/set.train").names == POLARITY


def test_s3_data_readable_without_list_permission_trains_without_names(s3_bucket, tmp_path):
    # Without s3:ListBucket, S3 answers a HEAD of a missing object with 403, not 404: the optional look
    # for a names file beside the data stopped training with "access denied" to a file nobody named.
    from fault_proxy import FaultProxy

    data = make_splits(300, 10, seed=2)[0]
    write_csv(data, f"{s3_bucket}/data/train.csv")
    with FaultProxy(os.environ["AWS_ENDPOINT_URL"]) as proxy:
        proxy.fail("HEAD", r"classes\.txt$", "403")
        r = cli_in_process_with({"AWS_ENDPOINT_URL": proxy.endpoint, "AWS_MAX_ATTEMPTS": "1"},
                                "train", "--train", f"{s3_bucket}/data/train.csv", "--output", tmp_path / "b", *FAST)
        assert r.returncode == 0, r.stderr
        assert [path for method, path, _ in proxy.log if method == "HEAD" and path.endswith("classes.txt")]
    assert Predictor.load(tmp_path / "b").label_names == {}
    # --label-names naming that file is explicit: there a refusal is the error it is.
    with FaultProxy(os.environ["AWS_ENDPOINT_URL"]) as proxy:
        proxy.fail("HEAD", r"classes\.txt$", "403")
        r = cli_in_process_with({"AWS_ENDPOINT_URL": proxy.endpoint, "AWS_MAX_ATTEMPTS": "1"},
                                "train", "--train", f"{s3_bucket}/data/train.csv", "--output", tmp_path / "c", *FAST,
                                "--label-names", f"{s3_bucket}/data/classes.txt")
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].startswith(
        f"error: access denied to {s3_bucket}/data/classes.txt"), r.stderr
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("data", ["S3://bucket/data/train.csv", "s3a://bucket/data/train.csv",
                                  "s3://my bucket/data/train.csv"])
def test_data_at_a_uri_refused_is_named_itself_not_its_names_file(tmp_path, s3_bucket, data):
    """The optional look for a names file beside --train came first, so a --train refused for its scheme or its
    bucket name was refused as 'S3://bucket/data/train.classes.txt: ...', a file the user never named."""
    r = cli_in_process("train", "--train", data, "--output", tmp_path / "b", *FAST)
    last = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 2 and last.startswith("error: ") and data in last and "classes.txt" not in last, r.stderr
    assert not (tmp_path / "b").exists()


def test_an_endpoint_out_of_reach_is_asked_once_and_named_for_the_data(s3_bucket, monkeypatch):
    """A names file the endpoint did not answer for was looked for again as the data itself, to name the data: one
    more request, whose attempts each wait out a timeout (a minute each where packets are dropped)."""
    from fault_proxy import FaultProxy

    data = f"{s3_bucket}/data/train.csv"
    with FaultProxy(os.environ["AWS_ENDPOINT_URL"]) as proxy:
        proxy.fail("HEAD", r".", "reset")  # the connection closed before any answer
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
        with pytest.raises(FastTextError) as err:
            label_names.find_beside(data)
    assert str(err.value).startswith(f"S3 request for {data} failed (connection lost or timed out): ")
    assert "classes.txt" not in str(err.value)
    assert len(proxy.log) == 1, proxy.log


def test_autotune_split_keeps_the_names():
    from fasttext_lib.autotune import split_validation

    data = LabeledTexts(["1", "2"] * 10, ["a", "b"] * 10, dict(POLARITY))
    assert all(part.names == POLARITY for part in split_validation(data))


# ---------------------------------------------------------------- CLI: train, predict, evaluate

@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """Synthetic polarity data as prepare writes a dataset: set.train / set.test and set.classes.txt."""
    out = tmp_path_factory.mktemp("data")
    train, test = make_splits(1500, 300, seed=5)
    write_fasttext(train, str(out / "set.train"))
    write_fasttext(test, str(out / "set.test"))
    (out / "set.classes.txt").write_text("1=negative\n2=positive\n")
    return out


@pytest.fixture(scope="module")
def named_bundle(data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("named") / "bundle"
    r = run_cli("train", "--train", data_dir / "set.train", "--output", out, *FAST)
    assert r.returncode == 0, r.stderr
    assert "label names: 1=negative, 2=positive" in r.stderr
    return out


def _config(bundle):
    return json.loads((bundle / "config.json").read_text())


def test_train_stores_the_names_found_beside_the_data(named_bundle):
    config = _config(named_bundle)
    assert config["labels"] == ["1", "2"] and config["label_names"] == POLARITY


def test_predict_shows_names_and_keeps_the_class_id(named_bundle):
    r = run_cli("predict", "--model", named_bundle, input="great food, friendly staff\nawful, cold and slow\n")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [set(row) for row in rows] == [{"label", "probability", "class_id"}] * 2
    assert all({"1": "negative", "2": "positive"}[row["class_id"]] == row["label"] for row in rows)


def test_evaluate_prints_a_named_confusion_matrix(named_bundle, data_dir):
    r = cli_in_process("evaluate", "--model", named_bundle, "--data", data_dir / "set.test")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    metrics = json.loads(lines[-1])
    matrix = metrics["confusion_matrix"]
    assert matrix["labels"] == ["negative", "positive"] and matrix["class_ids"] == ["1", "2"]
    counts = matrix["counts"]
    assert sum(map(sum, counts)) == metrics["n"] == 300
    assert (counts[0][0] + counts[1][1]) / 300 == pytest.approx(metrics["accuracy"])
    table = lines[:-1]
    assert table[0].split()[-2:] == ["negative", "positive"]
    assert table[1].split() == ["negative", *map(str, counts[0])] and table[2].split() == ["positive", *map(str, counts[1])]


def test_predictor_names_labels_and_confusion_frame(named_bundle, data_dir):
    predictor = Predictor.load(named_bundle)
    assert predictor.labels == ["1", "2"] and predictor.names == ["negative", "positive"]
    assert predictor.name_of("2") == "positive" and predictor.name_of("7") == "7"
    assert predictor.name_of(2) == predictor.name_of(2.0) == "positive"  # (pandas' int class: was given back as 2)
    probs = predictor.predict_proba(["so good", "so bad"])
    for row, p in zip(predictor.predict(["so good", "so bad"]), probs):
        k = int(p.argmax())
        assert row == {"label": predictor.names[k], "probability": pytest.approx(float(p[k])), "class_id": predictor.labels[k]}
    test = read_labeled(str(data_dir / "set.test"))
    frame = predictor.confusion_frame(test)
    assert list(frame.index) == list(frame.columns) == ["negative", "positive"]
    assert int(frame.values.sum()) == len(test)
    assert predictor.evaluate(test)["accuracy"] == pytest.approx(float(frame.values.trace()) / len(test))


def _named_test_file(data_dir, tmp_path, fmt):
    """``(set.test labeled by class id, the same labeled by class name)`` in fastText or CSV format."""
    if fmt == "fasttext":
        text = (data_dir / "set.test").read_text()
        named = text.replace("__label__1 ", "__label__negative ").replace("__label__2 ", "__label__positive ")
        assert named.count("__label__") == text.count("__label__") and "__label__1" not in named
        (tmp_path / "named.test").write_text(named)
        return data_dir / "set.test", tmp_path / "named.test"
    test = read_labeled(str(data_dir / "set.test"))
    write_csv(test, str(tmp_path / "ids.csv"))
    write_csv(LabeledTexts([POLARITY[label] for label in test.labels], test.texts), str(tmp_path / "named.csv"))
    return tmp_path / "ids.csv", tmp_path / "named.csv"


@pytest.mark.parametrize("fmt", ["fasttext", "csv"])
def test_evaluate_reads_data_labeled_by_the_class_names(named_bundle, data_dir, tmp_path, fmt):
    """Predictions show negative / positive, so a user labels a test file so (or __label__positive); evaluate
    refused it: "label(s) 'negative', 'positive' not seen in training (known: 1, 2)". Such a file is now read as
    the classes it names: the same table and numbers as the file labeled by class id."""
    ids, named = _named_test_file(data_dir, tmp_path, fmt)
    by_id = cli_in_process("evaluate", "--model", named_bundle, "--data", ids)
    by_name = cli_in_process("evaluate", "--model", named_bundle, "--data", named)
    assert by_id.returncode == by_name.returncode == 0, by_name.stderr
    assert by_name.stdout == by_id.stdout and json.loads(by_name.stdout.splitlines()[-1])["n"] == 300
    predictor = Predictor.load(named_bundle)
    assert predictor.evaluate(read_labeled(str(named)), confusion=True) == \
        predictor.evaluate(read_labeled(str(ids)), confusion=True)


@pytest.mark.parametrize("labels, pattern", [
    (["negative", "neutral"], r"bad.test has label\(s\) 'neutral' \(line 2\) not seen in training \(known: 1 \(negative\), 2 \(positive\)\); "
                              r"a model answers only the classes it was trained on: drop those documents, or train on "
                              r"data that has those classes too$"),
    (["1", "3"], r"bad.test has label\(s\) '3' \(line 2\) not seen in training \(known: 1 \(negative\), 2 \(positive\)\); "
                 r"a model answers only the classes it was trained on: drop those documents, or train on "
                 r"data that has those classes too$"),
    (["1", "positive"], r"mixes class ids \('1'\) and class names \('positive'\); label every document one way"),
])
def test_evaluate_refuses_unknown_or_mixed_labels_naming_the_classes(named_bundle, tmp_path, labels, pattern):
    path = tmp_path / "bad.test"
    path.write_text("".join(f"__label__{label} some words here\n" for label in labels * 3))
    r = cli_in_process("evaluate", "--model", named_bundle, "--data", path)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert re.search(pattern, r.stderr.strip()), r.stderr


def test_evaluate_reads_data_labeled_as_predictions_show_classes_some_of_which_have_no_name(named_bundle, tmp_path):
    """A class no name is given for is shown by its id (predictions say "2"): data labeled as the predictions show
    the classes, "negative" and "2" for names {1: negative}, was refused as "mixes class ids ('2') and class names
    ('negative')". It reads as the file labeled by id does; ids and names mixed for one class stay refused."""
    import shutil

    partial = tmp_path / "partial"
    shutil.copytree(named_bundle, partial)
    config = _config(partial)
    config["label_names"] = {"1": "negative"}
    (partial / "config.json").write_text(json.dumps(config))
    reviews = ["cold and slow", "great food", "awful service", "friendly staff"]
    by_id, shown = tmp_path / "ids.test", tmp_path / "shown.test"
    by_id.write_text("".join(f"__label__{label} {text}\n" for label, text in zip(["1", "2"] * 2, reviews)))
    shown.write_text("".join(f"__label__{label} {text}\n" for label, text in zip(["negative", "2"] * 2, reviews)))
    ids_run = cli_in_process("evaluate", "--model", partial, "--data", by_id)
    shown_run = cli_in_process("evaluate", "--model", partial, "--data", shown)
    assert ids_run.returncode == 0 and shown_run.returncode == 0, shown_run.stderr
    assert shown_run.stdout == ids_run.stdout
    mixed = tmp_path / "mixed.test"
    mixed.write_text("__label__1 cold and slow\n__label__negative awful\n__label__2 great food\n")
    r = cli_in_process("evaluate", "--model", partial, "--data", mixed)
    assert r.returncode == 2 and "mixes class ids" in r.stderr, r.stderr


def test_a_name_that_is_another_classs_id_is_refused_not_flipped(named_bundle, tmp_path):
    """Names 1=2, 2=good: a file labeled 2 / good is all names, but 2 read as a name is class 1, as an id class 2.
    Refused, not guessed. A file labeled by ids only reads as ids (as it always did), also where every id is
    a name too (names 1=2, 2=1)."""
    import shutil

    odd = tmp_path / "odd"
    shutil.copytree(named_bundle, odd)
    config = _config(odd)
    config["label_names"] = {"1": "2", "2": "good"}
    (odd / "config.json").write_text(json.dumps(config))
    path = tmp_path / "data.test"
    path.write_text("__label__2 cold and slow\n__label__good great food\n")
    r = cli_in_process("evaluate", "--model", odd, "--data", path)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert "'2' (class 2's id, and the name of class 1) could mean either class" in r.stderr
    assert "known: 1 (2), 2 (good)" in r.stderr
    path.write_text("__label__1 cold and slow\n__label__2 great food\n")
    by_id = cli_in_process("evaluate", "--model", named_bundle, "--data", path)
    assert by_id.returncode == 0, by_id.stderr
    for names in ({"1": "2", "2": "good"}, {"1": "2", "2": "1"}):
        config["label_names"] = names
        (odd / "config.json").write_text(json.dumps(config))
        r = cli_in_process("evaluate", "--model", odd, "--data", path)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout.splitlines()[-1])["accuracy"] == json.loads(by_id.stdout.splitlines()[-1])["accuracy"]


def test_train_validation_labeled_by_the_class_names(data_dir, tmp_path):
    """train --validation takes a file labeled by the names the training data's classes.txt gives, as evaluate does:
    the same validation numbers as with class ids (and the same checkpoint fingerprint: it is the same data)."""
    ids, named = _named_test_file(data_dir, tmp_path, "fasttext")
    runs = []
    for validation, out in ((ids, "a"), (named, "b")):
        r = cli_in_process("train", "--train", data_dir / "set.train", "--validation", validation,
                           "--output", tmp_path / out, *FAST)
        assert r.returncode == 0, r.stderr
        runs.append([{k: v for k, v in json.loads(line).items() if k not in ("seconds", "samples_per_s")}
                     for line in r.stdout.splitlines()])
    assert runs[0] == runs[1] and len(runs[0]) == 2 and all(row["val_loss"] > 0 for row in runs[0])


def test_a_bundle_without_label_names_predicts_as_before(named_bundle, tmp_path):
    """A format-2 bundle written before label names (no "label_names" key): raw labels, as it always did."""
    import shutil

    old = tmp_path / "old"
    shutil.copytree(named_bundle, old)
    config = _config(old)
    del config["label_names"]
    (old / "config.json").write_text(json.dumps(config))
    before, now = Predictor.load(old), Predictor.load(named_bundle)
    assert before.names == before.labels == ["1", "2"] and before.label_names == {}
    texts = ["great food", "cold and slow"]
    assert [r["label"] for r in before.predict(texts)] == [r["class_id"] for r in now.predict(texts)]
    assert [r["class_id"] for r in before.predict(texts)] == [r["label"] for r in before.predict(texts)]


@pytest.mark.parametrize("label_names_value, pattern", [
    ({"3": "ghost"}, "label_names gives a name to class(es) '3'"),
    ({"1": "2"}, "2 classes would show as 1 names"),
    (["negative", "positive"], "not a mapping of labels to names"),
    ({"1": ""}, "empty name"),
])
def test_a_corrupt_label_names_entry_is_named(named_bundle, tmp_path, label_names_value, pattern):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(named_bundle, bad)
    config = _config(bad)
    config["label_names"] = label_names_value
    (bad / "config.json").write_text(json.dumps(config))
    with pytest.raises(FastTextError, match="corrupt model bundle") as exc:
        Predictor.load(bad)
    assert pattern in str(exc.value)


# ---------------------------------------------------------------- the explicit option

def _train(tmp_path, *extra, train=None):
    out = tmp_path / "out"
    code = cli.main(["train", "--train", str(train), "--output", str(out), *FAST, *extra])
    return code, out


@pytest.mark.parametrize("option, expected", [
    ("1=bad,2=good", {"1": "bad", "2": "good"}),  # inline
    ("2=good", {"2": "good"}),  # a label left out keeps its raw id
    ("amazon_review_polarity", POLARITY),  # a known dataset
    ("none", {}),  # no names, although set.classes.txt is beside the data
])
def test_the_explicit_option_wins_over_the_file_beside_the_data(data_dir, tmp_path, option, expected):
    code, out = _train(tmp_path, "--label-names", option, train=data_dir / "set.train")
    assert code == 0
    assert _config(out)["label_names"] == expected
    predictor = Predictor.load(out)
    assert predictor.names == [expected.get("1", "1"), expected.get("2", "2")]


def test_the_explicit_option_reads_a_file_local_or_s3(data_dir, tmp_path, s3_bucket):
    names = tmp_path / "my names.txt"
    names.write_text("bad\ngood\n")
    code, out = _train(tmp_path, "--label-names", str(names), train=data_dir / "set.train")
    assert code == 0 and _config(out)["label_names"] == {"1": "bad", "2": "good"}
    with storage.atomic_write(f"{s3_bucket}/names.txt", "wb") as f:
        f.write(b"1=neg\n2=pos\n")
    code, out2 = _train(tmp_path / "s3", "--label-names", f"{s3_bucket}/names.txt", train=data_dir / "set.train")
    assert code == 0 and _config(out2)["label_names"] == {"1": "neg", "2": "pos"}


@pytest.mark.parametrize("option, pattern", [
    ("1=a,2=b,3=c", "--label-names gives a name to class(es) '3' that the training data does not have"),
    ("1=2", "2 classes would show as 1 names"),
    ("1=2,2=1", "--label-names: class '1' is named '2', which is the id of class '2': data labeled 2 would mean either "
                "class; give class '1' a name that is no class id"),
    ('{"1": "bad", "2": "1"}', "--label-names: class '2' is named '1', which is the id of class '1'"),
    ("1=a,1=b", "class '1' is named twice"),
    ("1=,2=b", "empty name"),
    ("no_such_file.txt", "no such file, not a known dataset"),
    ("ag_news", "gives a name to class(es) '3', '4'"),
    ("s3://no-such-bucket-here/names.txt", "no-such-bucket-here"),
])
def test_bad_explicit_names_are_one_error_line_and_write_nothing(data_dir, tmp_path, option, pattern, s3_server):
    out = tmp_path / "out"
    run = run_cli if option == "1=a,2=b,3=c" else cli_in_process  # one CLI process; the others in-process
    r = run("train", "--train", data_dir / "set.train", "--output", out, *FAST, "--label-names", option)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("error: ") and pattern in lines[-1], r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists() or not os.listdir(out)


def test_a_hostile_file_beside_the_data_stops_training_with_one_line(tmp_path):
    data = tmp_path / "d"
    data.mkdir()
    train, _ = make_splits(300, 0, seed=1)
    write_csv(train, str(data / "train.csv"))
    (data / "classes.txt").write_bytes(b"negative\nnegative\n")
    out = tmp_path / "out"
    r = cli_in_process("train", "--train", data / "train.csv", "--output", out, *FAST)
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].startswith("error: ")
    assert "same name 'negative'" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists() or not os.listdir(out)
    # the explicit option is the way past a names file one cannot change
    r = cli_in_process("train", "--train", data / "train.csv", "--output", out, *FAST, "--label-names", "none")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("route", ["train", "autotune"])
def test_a_bad_names_file_beside_the_data_is_reported_before_the_data_is_read(tmp_path, route):
    # The data breaks at its last line; the names file is read first, so its error is the one shown
    # (it came after the whole data was read: minutes at Yelp size).
    train, val = make_splits(300, 50, seed=1)
    write_csv(train, str(tmp_path / "train.csv"))
    write_csv(val, str(tmp_path / "val.csv"))
    with open(tmp_path / "train.csv", "a") as f:
        f.write('"1","unclosed\n')
    (tmp_path / "classes.txt").write_bytes(b"negative\nnegative\n")
    extra = ["--autotune-validation", tmp_path / "val.csv", "--autotune-duration", "5"] if route == "autotune" else []
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "out", *FAST, *extra)
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1] == (
        f"error: {tmp_path / 'classes.txt'}: classes '1' and '2' have the same name 'negative'"), r.stderr


def test_compact_bundles_and_checkpoints_carry_the_names(data_dir, tmp_path):
    checkpoints = tmp_path / "ckpt"
    code, out = _train(tmp_path, "--compact", "float16", "--checkpoint-dir", str(checkpoints), train=data_dir / "set.train")
    assert code == 0
    assert _config(out)["compact"] and Predictor.load(out).names == ["negative", "positive"]
    meta = json.loads((checkpoints / "epoch-0002" / "checkpoint.json").read_text())
    assert meta["label_names"] == POLARITY
    # names change how classes are shown, not the run: a resume under other names is the same run
    code, out2 = _train(tmp_path / "again", "--checkpoint-dir", str(checkpoints), "--label-names", "1=bad,2=good",
                        train=data_dir / "set.train")
    assert code == 0 and _config(out2)["label_names"] == {"1": "bad", "2": "good"}


def test_library_api_carries_the_names_into_the_bundle(data_dir, tmp_path):
    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train

    data = read_labeled(str(data_dir / "set.train"))
    config = TrainConfig(epochs=1, emsize=8, batch_size=256, progress=False, ctx="cpu")
    trained = train(data, None, config)
    assert trained.label_names == POLARITY and trained.names() == ["negative", "positive"]
    assert Predictor.load(save_bundle(trained, str(tmp_path / "b"))).names == ["negative", "positive"]
    data.names = {"1": "x", "5": "y"}
    with pytest.raises(FastTextError, match=r"train_data.names gives a name to class\(es\) '5'"):
        train(data, None, config)


@pytest.mark.parametrize("route", ["train", "autotune"])
def test_a_names_file_numbered_from_1_beside_data_numbered_from_0_is_refused(tmp_path, route):
    """Data with classes 0 and 1 beside a Zhang classes.txt (line 1 names class 1): the bundle stored
    1=negative and predictions called every class-1 (positive) review 'negative', with no word of warning."""
    train, val = make_splits(300, 50, seed=1)
    shifted = {"1": "0", "2": "1"}
    write_csv(LabeledTexts([shifted[label] for label in train.labels], train.texts), str(tmp_path / "train.csv"))
    write_csv(LabeledTexts([shifted[label] for label in val.labels], val.texts), str(tmp_path / "val.csv"))
    (tmp_path / "classes.txt").write_text("negative\npositive\n")
    with pytest.raises(FastTextError, match=r"classes\.txt names class\(es\) '2' that the data does not have but not "
                                            r"its class\(es\) '0': its numbering is not the data's"):
        read_labeled(str(tmp_path / "train.csv"))
    out = tmp_path / "out"
    extra = ["--autotune-validation", tmp_path / "val.csv", "--autotune-duration", "5"] if route == "autotune" else []
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", out, *FAST, *extra)
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].startswith("error: ") and "Traceback" not in r.stderr
    assert "numbering is not the data's" in r.stderr and not out.exists()
    # the way out it names works (it said "pass --label-names", also to one who had: the data's own numbers now)
    assert r.stderr.rstrip().endswith("name the classes one by one: --label-names 0=negative,1=positive"), r.stderr
    if route == "train":
        r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", out, *FAST,
                           "--label-names", "0=negative,1=positive")
        assert r.returncode == 0 and _config(out)["label_names"] == {"0": "negative", "1": "positive"}, r.stderr
        shutil.rmtree(out)
    # names for classes a split lacks are still fine (a test split without class 3), and so is the explicit option
    (tmp_path / "val.classes.txt").write_text("0=negative\n1=positive\n2=neutral\n")
    assert read_labeled(str(tmp_path / "val.csv")).names == {"0": "negative", "1": "positive"}
    r = run_cli("train", "--train", tmp_path / "train.csv", "--output", out, *FAST, "--label-names", "0=negative,1=positive")
    assert r.returncode == 0, r.stderr
    assert Predictor.load(str(out)).names == ["negative", "positive"]


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_the_names_file_of_a_compressed_split_is_found(tmp_path, suffix):
    """yelp_review_polarity.train gzipped to save space was looked up as yelp_review_polarity.train.classes.txt: the
    names prepare wrote beside it were missed and the bundle predicted raw ids."""
    import bz2
    import gzip
    import lzma

    compress = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[suffix]
    (tmp_path / f"set.train{suffix}").write_bytes(compress(b"__label__1 good\n__label__2 bad\n"))
    (tmp_path / "set.classes.txt").write_text("1=negative\n2=positive\n")
    assert read_labeled(str(tmp_path / f"set.train{suffix}")).names == POLARITY
    assert label_names.beside(f"s3://b/d/set.train{suffix}")[0] == "s3://b/d/set.classes.txt"
    assert label_names.beside(f"s3://b/d/set{suffix}")[0] == "s3://b/d/set.classes.txt"  # (no other extension)


AG_NEWS = "World\nSports\nBusiness\nSci/Tech\n"


def test_a_classes_txt_of_another_dataset_beside_the_data_is_refused(tmp_path):
    """ag_news' classes.txt left in the folder of two-class reviews (1, 2): the bundle stored 1=World, 2=Sports
    and every prediction was shown under a topic's name. A folder's classes.txt must now fit the data."""
    train, _ = make_splits(300, 10, seed=2)
    write_csv(train, str(tmp_path / "train.csv"))
    (tmp_path / "classes.txt").write_text(AG_NEWS)
    with pytest.raises(FastTextError, match=r"classes\.txt names 4 classes but the data has only 2 of them \(its "
                                            r"classes: 1, 2\): is it another dataset's\?"):
        read_labeled(str(tmp_path / "train.csv"))
    out = tmp_path / "out"
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", out, *FAST)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "another dataset's" in r.stderr and not out.exists()
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", out, *FAST, "--label-names", "none")
    assert r.returncode == 0, r.stderr
    # and the other way round: a two-name file beside five classes names two of them
    stars = LabeledTexts([str(i % 5 + 1) for i in range(50)], ["some text"] * 50)
    write_csv(stars, str(tmp_path / "stars.csv"))
    (tmp_path / "classes.txt").write_text("negative\npositive\n")
    with pytest.raises(FastTextError, match=r"names 2 of the data's 5 classes, not its class\(es\) '3', '4', '5'"):
        read_labeled(str(tmp_path / "stars.csv"))


def test_a_training_channel_with_another_datasets_classes_txt_is_refused(tmp_path):
    from fasttext_lib.sm_train import names_of_channels, read_channel

    train, _ = make_splits(100, 10, seed=2)
    write_fasttext(train, str(tmp_path / "a.train"))
    (tmp_path / "classes.txt").write_text(AG_NEWS)
    with pytest.raises(FastTextError, match=r"classes\.txt names 4 classes but the data has only 2 of them"):
        read_channel(str(tmp_path), names=names_of_channels(str(tmp_path), None).train)
    os.remove(tmp_path / "classes.txt")
    (tmp_path / "a.classes.txt").write_text(AG_NEWS)  # prepare's name for a.train's own names: any share of them
    assert read_channel(str(tmp_path), names=names_of_channels(str(tmp_path), None).train).names == \
        {"1": "World", "2": "Sports"}


@pytest.mark.parametrize("case", ["split without a class", "stem file", "archive folder", "limit", "no shared class"])
def test_names_that_are_the_datas_own_still_apply_to_a_split_that_lacks_classes(tmp_path, case):
    folder = tmp_path / ("ag_news_csv" if case == "archive folder" else "data")
    folder.mkdir()
    labels = {"split without a class": ["1", "2", "3"], "limit": ["1", "1", "2", "3", "4"],
              "no shared class": ["pos", "neg"]}.get(case, ["1", "2"])
    data = LabeledTexts(labels, ["text"] * len(labels))
    write_fasttext(data, str(folder / "set.test"))
    (folder / ("set.classes.txt" if case == "stem file" else "classes.txt")).write_text(AG_NEWS)
    got = read_labeled(str(folder / "set.test"), limit=2 if case == "limit" else None)
    expected = {"split without a class": {"1": "World", "2": "Sports", "3": "Business"}, "limit": {"1": "World"},
                "no shared class": {}}.get(case, {"1": "World", "2": "Sports"})
    assert got.names == expected


DBPEDIA = ("Company\nEducationalInstitution\nArtist\nAthlete\nOfficeHolder\nMeanOfTransportation\nBuilding\n"
           "NaturalPlace\nVillage\nAnimal\nPlant\nAlbum\nFilm\nWrittenWork\n")


def test_a_datasets_classes_txt_beside_a_split_with_few_of_its_classes_can_be_passed_explicitly(tmp_path):
    """dbpedia's files are sorted by class: a head of train.csv, copied with the archive's classes.txt into a
    folder, holds 6 of its 14 classes. The file beside it is refused (it may be another dataset's), and the line
    said to pass --label-names, but passing that file was refused as well (it names classes the data lacks): the
    user had to type the names. The file passed explicitly now names the data's classes."""
    labels = [str(c) for c in range(1, 7) for _ in range(50)]
    write_csv(LabeledTexts(labels, [f"an article of class {c}" for c in labels]), str(tmp_path / "train.csv"))
    (tmp_path / "classes.txt").write_text(DBPEDIA)
    out = tmp_path / "out"
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", out, *FAST)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "classes.txt itself if it is this data's" in r.stderr
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", out, *FAST,
                       "--label-names", tmp_path / "classes.txt")
    assert r.returncode == 0, r.stderr
    assert _config(out)["label_names"] == dict(zip("123456", DBPEDIA.split()[:6]))
    # a file whose numbering is not the data's (class 0 unnamed) is still refused, explicit or not
    write_csv(LabeledTexts(["0"] + labels, ["x"] * 301), str(tmp_path / "zero.csv"))
    r = cli_in_process("train", "--train", tmp_path / "zero.csv", "--output", tmp_path / "o2", *FAST,
                       "--label-names", tmp_path / "classes.txt")
    assert r.returncode == 2 and "its numbering is not the data's" in r.stderr, r.stderr


@pytest.mark.parametrize("names", ["2\n1\n", "1=2\n2=1\n"])
def test_names_that_reuse_the_class_ids_are_refused_for_a_new_bundle(tmp_path, names):
    """Names 1=2, 2=1 (a class named with another class's id) were trained and stored: a file labeled 2 then meant
    class 2 by its id and class 1 by its name. Refused in one line naming the clash, from a names file beside the
    data (before any data is read), a job's channel, or names set by hand on the data; a bundle stored with such names
    before still loads (test_a_name_that_is_another_classs_id_is_refused_not_flipped)."""
    from fasttext_lib.train import train

    data = tmp_path / "d"
    data.mkdir()
    write_fasttext(make_splits(300, 0, seed=1)[0], str(data / "set.train"))
    (data / "set.classes.txt").write_text(names)
    out = tmp_path / "out"
    r = cli_in_process("train", "--train", data / "set.train", "--output", out, *FAST)
    assert r.returncode == 2 and not out.exists()
    assert r.stderr.splitlines() == [f"error: {data / 'set.classes.txt'}: class '1' is named '2', which is the id of "
                                     f"class '2': data labeled 2 would mean either class; give class '1' a name that "
                                     f"is no class id"]
    own = LabeledTexts(["1", "2"] * 20, ["good food"] * 20 + ["cold soup"] * 20, {"1": "positive", "2": "1"})
    with pytest.raises(FastTextError, match="train_data.names: class '2' is named '1', which is the id of class '1'"):
        train(own)


@pytest.mark.parametrize("labels, shown", [
    (["1.0", "2"], "'1.0' (line 1)"),  # pandas writes float classes so (a column with a NaN in it); all so: read as 1, 2
    (["__label__1", "__label__2"], "'__label__1' (line 1), '__label__2' (line 2)"),  # fastText's prefix in a CSV's class column
    (["1.0", "__label__2"], "'1.0' (line 1), '__label__2' (line 2)"),
])
def test_evaluate_names_the_class_a_label_written_otherwise_is(named_bundle, tmp_path, labels, shown):
    """A CSV whose classes are written 1.0 / __label__2 for the model's 1 / 2 was refused as labels 'not seen in
    training (known: 1, 2)', which reads as if the data were another dataset's; the line now says which class each
    is written for and how to write them. Still refused: 1.0 is not a class id training saw."""
    path = tmp_path / "bad.csv"
    path.write_text("".join(f'"{label}","some words here"\n' for label in labels * 3))
    r = cli_in_process("evaluate", "--model", named_bundle, "--data", path)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert f"label(s) {shown} not seen in training" in r.stderr
    assert "the model's classes written otherwise (" in r.stderr and "write them as the training data did" in r.stderr


@pytest.mark.parametrize("text, line", [("sports\n#news\npolitics\n", 2), ("#sports\n#politics\n", 1),
                                        ("# hashtags\n#sports\n#politics\n", 2)])
def test_a_classes_txt_name_starting_with_a_hash_is_refused_not_taken_as_a_comment(tmp_path, text, line):
    """Hashtags as classes (#sports, #news): with every '#' line a comment, '#news' vanished and 'politics' named
    class 2, silently (every class after it one off); a file of hashtags only was 'names no class (empty file)'.
    A comment is '#' and a space; '#news' could be either, so it is refused with both ways out."""
    with pytest.raises(FastTextError, match=rf"names.txt:{line}: '#\w+' starts with '#' but not '# ': a comment or "
                                            rf"a class name\? .*'# \w+'.*id=name form \(\d+=#\w+\)"):
        _read_names(tmp_path, text)


@pytest.mark.parametrize("text", ["#\n# classes\nnegative\npositive\n", "#1=neutral\n1=negative\n2=positive\n",
                                  "1=negative\n#3=neutral\n2=positive\n"])
def test_hash_lines_that_can_only_be_comments_are_still_comments(tmp_path, text):
    assert _read_names(tmp_path, text) == POLARITY


def test_a_hashtag_class_name_can_be_given_in_the_id_name_form():
    assert label_names.parse_text("1=#sports\n2=#news\n", "f") == {"1": "#sports", "2": "#news"}


def test_evaluate_reads_a_csv_whose_classes_are_all_whole_floats_as_training_does(named_bundle, tmp_path):
    """``1.0`` / ``2.0`` for the model's 1 / 2 in every row (pandas' float class column): training reads such a file's
    classes as 1 and 2 (data.whole_number_classes), so evaluate does too (it was refused as written otherwise)."""
    path = tmp_path / "floats.csv"
    path.write_text("".join(f'"{label}","some words here"\n' for label in ["1.0", "2.0"] * 3))
    r = cli_in_process("evaluate", "--model", named_bundle, "--data", path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["n"] == 6


def test_train_with_names_beside_the_validation_file_and_a_checkpoint_dir_writes_its_bundle(tmp_path):
    """The names beside --validation were kept in the variable that held the run's kept checkpoint
    (checkpoints.KeptCheckpoint): with --checkpoint-dir the run trained every epoch and then ended in an
    AttributeError traceback ('dict' object has no attribute 'confirm'), no bundle written."""
    out = _train_beside(tmp_path, None, "negative\npositive\n", "--checkpoint-dir", tmp_path / "ck")
    assert out.returncode == 0, out.stderr
    assert Predictor.load(tmp_path / "b").label_names == POLARITY
    assert (tmp_path / "ck" / "epoch-0002" / "checkpoint.json").is_file()
