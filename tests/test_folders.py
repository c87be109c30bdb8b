"""Class-folder datasets (IMDB's aclImdb, 20 Newsgroups, BBC News: one folder per class, one document per file):
``import-folders`` writes them as one ``label,text`` CSV, and ``train`` / ``evaluate`` given such a directory say so
(class_folders.py)."""
import bz2
import csv
import gzip
import io
import json
import lzma
import os
import shlex

import pytest

from cli_helpers import TINY, assert_error, listing
from conftest import cli_in_process, ole2_header, run_cli, zstd_frame
from fasttext_lib.class_folders import DOCUMENT_BYTES
from fasttext_lib.formats import CSV_FIELD_LIMIT

POSITIVE = ["great wonderful film", "a superb and moving story", "loved it , brilliant acting", "wonderful cast"]
NEGATIVE = ["awful boring film", "a dull and tedious story", "hated it , terrible acting", "boring cast"]


def _imdb(root, per_class=30, reverse=False):
    """An aclImdb-shaped split: train/pos, train/neg, train/unsup (unlabeled), the files beside them that are no
    documents, a .DS_Store; a review over lines with <br /> breaks, as IMDB's are. ``reverse``: the files created in
    the other order (the output must not depend on it)."""
    split = root / "aclImdb" / "train"
    files = []
    for folder, texts in (("pos", POSITIVE), ("neg", NEGATIVE), ("unsup", POSITIVE + NEGATIVE)):
        (split / folder).mkdir(parents=True)
        for i in range(per_class):
            text = texts[i % len(texts)] + f" number {i}"
            if i == 0:
                text = f'{texts[0]}<br /><br />"quoted", and\nover lines\n'
            if i == 1:  # (a lone carriage return: a line end to a reader, unless quoted)
                text += "\rafter a carriage return, alone"
            files.append((split / folder / f"{i}_{7 if folder == 'pos' else 2}.txt", text))
    for path, text in (reversed(files) if reverse else files):
        path.write_text(text, encoding="utf-8")
    (split / "pos" / ".DS_Store").write_bytes(b"\x00\x01binary")
    (split / "urls_pos.txt").write_text("http://www.imdb.com/title/tt0453418/usercomments\n")
    (split / "labeledBow.feat").write_text("9 0:9 1:1\n")
    (split.parent / "imdb.vocab").write_text("the\nand\n")
    return split


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:  # (newline="": the line ends inside fields as written)
        return list(csv.reader(f))


def _no_temporaries(folder):
    return [name for name in os.listdir(folder) if name.startswith(".") or ".tmp" in name]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """An aclImdb-shaped split converted by ``import-folders --skip unsup``, then trained on for one epoch."""
    root = tmp_path_factory.mktemp("imdb")
    split = _imdb(root)
    out = root / "imdb_train.csv"
    converted = cli_in_process("import-folders", "--input", split, "--output", out, "--skip", "unsup")
    model = root / "model"
    trained = run_cli("train", "--train", out, "--output", model, *TINY) if converted.returncode == 0 else None
    return split, out, converted, model, trained


def test_the_aclimdb_layout_is_converted_then_trained_and_evaluated(imported):
    split, out, r, model, trained = imported
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary == {"output": str(out), "documents": 60, "classes": {"neg": 30, "pos": 30}}
    assert "unsup" in r.stderr and "30" in r.stderr  # the skipped folder said, with its documents
    assert "labeledBow.feat" in r.stderr and "urls_pos.txt" in r.stderr  # the files beside the folders left out
    rows = _rows(out)
    assert rows[0] == ["label", "text"]
    assert [label for label, _ in rows[1:]] == ["neg"] * 30 + ["pos"] * 30  # sorted: by folder, then by file
    by_file = {(label, name): text for label, name, text in
               ((p.parent.name, p.name, p.read_bytes().decode()) for p in split.glob("[np]*/*.txt"))}
    names = sorted(os.listdir(split / "neg")) + sorted(n for n in os.listdir(split / "pos") if not n.startswith("."))
    expected = [by_file[("neg" if i < 30 else "pos", name)].rstrip("\n") for i, name in enumerate(names)]
    assert [text for _, text in rows[1:]] == expected  # each file's content, whole (its line breaks quoted)
    assert '"quoted", and\nover lines' in rows[1][1]

    from fasttext_lib.data import read_labeled  # what training reads of it: the same documents

    read = read_labeled(str(out))
    assert read.labels == ["neg"] * 30 + ["pos"] * 30 and read.texts == expected

    assert trained.returncode == 0, trained.stderr
    r = run_cli("evaluate", "--model", model, "--data", out)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["n"] == 60 and len(result["per_class"]) == 2 and "neg" in r.stdout and "pos" in r.stdout


@pytest.mark.parametrize("command", [
    ("train", "--train", "{split}", "--output", "{tmp}/model", "--no-progress"),
    ("train", "--train", "{tmp}/t.csv", "--validation", "{split}", "--output", "{tmp}/model", "--no-progress"),
    ("evaluate", "--model", "{bundle}", "--data", "{split}"),
])
def test_a_directory_of_class_folders_given_as_data_names_its_folders_and_the_converter(tmp_path, command, imported):
    """``train --train aclImdb/train`` said only "expected a file but got a directory"."""
    split = _imdb(tmp_path, per_class=2)
    (tmp_path / "t.csv").write_text("label,text\npos,good\nneg,bad\n")
    args = [a.format(split=split, tmp=tmp_path, bundle=imported[3]) for a in command]
    r = cli_in_process(*args)
    assert_error(r, f"expected a file but got a directory: {split}")
    assert "a directory of class folders (neg, pos, unsup)" in r.stderr
    assert f"import-folders --input {split} --output" in r.stderr and "--skip unsup" in r.stderr
    assert not (tmp_path / "model").exists()


def test_a_directory_of_class_folders_given_to_predict_names_its_folders_the_converter_and_how_to_score_them(
        tmp_path, imported):
    """``predict --input aclImdb/test`` said only "expected a file but got a directory", where train and evaluate
    name the class folders and the converter: predict does too, with what to do with the CSV written (evaluate scores
    the model against its classes, predict labels each document), before the model is loaded."""
    split = _imdb(tmp_path, per_class=2)
    r = cli_in_process("predict", "--model", imported[3], "--input", split)
    assert_error(r, f"expected a file but got a directory: {split}")
    assert "a directory of class folders (neg, pos, unsup)" in r.stderr
    assert f"import-folders --input {split} --output FILE.csv --skip unsup" in r.stderr
    model = imported[3]
    assert f"FILE.csv --skip unsup; then evaluate --model {model} --data FILE.csv scores the model against their " \
           f"classes, or predict --model {model} --input FILE.csv answers each document (docs/INPUT.md" in r.stderr
    assert r.stdout == ""
    parent = cli_in_process("predict", "--model", tmp_path / "no model", "--input", split.parent)  # (before the model)
    assert_error(parent, f"expected a file but got a directory: {split.parent}")
    assert "folders of class folders (train)" in parent.stderr
    assert f"evaluate --model {shlex.quote(str(tmp_path / 'no model'))} --data FILE.csv" in parent.stderr
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("x\n")
    plain = cli_in_process("predict", "--model", imported[3], "--input", tmp_path / "d")
    assert plain.returncode == 2 and plain.stderr.strip() == \
        f"error: --input: expected a file but got a directory: {tmp_path / 'd'}"


@pytest.mark.parametrize("command, flag", [
    (("evaluate", "--model", "{bundle}", "--data", "{directory}"), "--data"),
    (("predict", "--model", "{bundle}", "--input", "{directory}"), "--input"),
])
@pytest.mark.parametrize("layout", ["class_folders", "empty"])
def test_a_directory_given_to_evaluate_or_predict_is_refused_in_a_line_that_starts_with_the_flag(
        tmp_path, imported, command, flag, layout):
    """``evaluate --data DIR`` and ``predict --input DIR`` said "error: expected a file but got a directory", where
    ``train --validation DIR`` names its flag first: they name theirs the same way, the class-folder hint kept."""
    directory = tmp_path / "in"
    if layout == "class_folders":
        directory = _imdb(tmp_path, per_class=2)
    else:
        directory.mkdir()
    r = cli_in_process(*[a.format(bundle=imported[3], directory=directory) for a in command])
    assert_error(r, f"error: {flag}: expected a file but got a directory: {directory}")
    if layout == "class_folders":
        assert "a directory of class folders (neg, pos, unsup)" in r.stderr
        assert f"import-folders --input {directory} --output FILE.csv --skip unsup" in r.stderr
    else:
        assert r.stderr.strip() == f"error: {flag}: expected a file but got a directory: {directory}"
    assert r.stdout == ""


def test_a_directory_of_split_folders_says_which_one_to_convert(tmp_path):
    split = _imdb(tmp_path, per_class=2)
    r = cli_in_process("train", "--train", split.parent, "--output", tmp_path / "model", "--no-progress")
    assert_error(r, f"expected a file but got a directory: {split.parent}")
    assert "folders of class folders (train)" in r.stderr and f"--input {split}" in r.stderr


@pytest.mark.parametrize("command, suggested", [
    (("train", "--train", "{top}", "--output", "{tmp}/model", "--no-progress"), "train"),
    (("train", "--train", "{tmp}/t.csv", "--validation", "{top}", "--output", "{tmp}/model", "--no-progress"), "test"),
    (("train", "--train", "{tmp}/t.csv", "--autotune-validation", "{top}", "--output", "{tmp}/model", "--no-progress"),
     "test"),
    (("predict", "--model", "{bundle}", "--input", "{top}"), "test"),
    (("evaluate", "--model", "{bundle}", "--data", "{top}"), "test"),
])
def test_a_directory_of_train_and_test_folders_suggests_the_split_the_command_reads(tmp_path, imported, command,
                                                                                   suggested):
    """aclImdb/ (train/ and test/, each of class folders) given whole: the hint always said to convert train/, where
    validation, predict and evaluate read held-out data, test/'s."""
    import shutil

    split = _imdb(tmp_path, per_class=2)
    shutil.copytree(split, split.parent / "test")
    (tmp_path / "t.csv").write_text("label,text\npos,good\nneg,bad\n")
    r = cli_in_process(*[a.format(top=split.parent, tmp=tmp_path, bundle=imported[3]) for a in command])
    assert_error(r, f"expected a file but got a directory: {split.parent}")
    assert "folders of class folders (test, train)" in r.stderr
    assert f"import-folders --input {split.parent / suggested} --output FILE.csv" in r.stderr, r.stderr
    assert not (tmp_path / "model").exists()


def test_the_command_the_hint_gives_runs_as_printed_for_a_folder_name_with_a_space(tmp_path):
    """The hint's command is a shell line: a folder such as "My Reviews" was printed unquoted, two words to a shell."""
    root = tmp_path / "My Reviews"
    split = _imdb(root, per_class=2)
    r = cli_in_process("train", "--train", split, "--output", tmp_path / "model", "--no-progress")
    assert r.returncode == 2
    command = r.stderr.split("with python -m fasttext_lib ", 1)[1].split(" (docs/INPUT.md")[0]
    words = shlex.split(command.replace("FILE.csv", str(tmp_path / "out.csv")))
    assert words[words.index("--input") + 1] == str(split)
    converted = cli_in_process(*words)
    assert converted.returncode == 0, converted.stderr
    assert _rows(tmp_path / "out.csv")[0] == ["label", "text"]


def test_a_plain_directory_keeps_the_plain_error(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("x\n")
    r = cli_in_process("train", "--train", tmp_path / "d", "--output", tmp_path / "model", "--no-progress")
    assert r.returncode == 2 and r.stderr.strip() == (f"error: --train: expected a file but got a directory: "
                                                      f"{tmp_path / 'd'}")


def _refusal_cases():
    def empty(root):
        (root / "in").mkdir()

    def files_only(root):
        (root / "in").mkdir()
        (root / "in" / "a.txt").write_text("a review\n")

    def one_class(root):
        (root / "in" / "pos").mkdir(parents=True)
        (root / "in" / "pos" / "1.txt").write_text("a review\n")
        (root / "in" / ".ipynb_checkpoints").mkdir()  # hidden: no class
        (root / "in" / ".ipynb_checkpoints" / "1.txt").write_text("a review\n")

    def unsup(root):
        os.rename(_imdb(root, per_class=2), root / "in")

    def not_utf8(root):
        (root / "in" / "sci.med").mkdir(parents=True)
        (root / "in" / "alt.atheism").mkdir()
        (root / "in" / "sci.med" / "58043").write_text("plain ascii\n")
        (root / "in" / "alt.atheism" / "49960").write_bytes(b"From: a@b.c\nSubject: Re: caf\xe9\n")

    def nested(root):
        os.rename(_imdb(root, per_class=2).parent, root / "in")

    def skip_missing(root):
        os.rename(_imdb(root, per_class=2), root / "in")

    return [
        (empty, (), "is empty"),
        (files_only, (), "holds no class folders"),
        (one_class, (), "only one class folder"),
        (unsup, (), "--skip unsup"),
        (not_utf8, (), "alt.atheism/49960"),
        (nested, (), "holds folders (neg, pos, unsup)"),
        (skip_missing, ("--skip", "unsup", "--skip", "unlabeled"), "--skip unlabeled: no folder"),
    ]


@pytest.mark.parametrize("make, extra, says", _refusal_cases(), ids=lambda v: getattr(v, "__name__", None))
def test_a_directory_that_is_no_class_folder_dataset_is_refused_and_nothing_written(tmp_path, make, extra, says):
    make(tmp_path)
    before = listing(tmp_path)
    r = cli_in_process("import-folders", "--input", tmp_path / "in", "--output", tmp_path / "out.csv", *extra)
    assert_error(r, says)
    assert r.stdout == "" and listing(tmp_path) == before and _no_temporaries(tmp_path) == []


def test_undecodable_bytes_name_the_file_and_latin1_reads_them(tmp_path):
    (tmp_path / "in" / "sci.med").mkdir(parents=True)
    (tmp_path / "in" / "alt.atheism").mkdir()
    (tmp_path / "in" / "sci.med" / "58043").write_bytes(b"Subject: Re: na\xefve\n")
    (tmp_path / "in" / "alt.atheism" / "49960").write_bytes(b"Subject: Re: caf\xe9\n")
    r = cli_in_process("import-folders", "--input", tmp_path / "in", "--output", tmp_path / "out.csv")
    assert_error(r, f"{tmp_path / 'in' / 'alt.atheism' / '49960'}: not UTF-8")
    assert "--encoding latin-1" in r.stderr and not (tmp_path / "out.csv").exists()
    r = cli_in_process("import-folders", "--input", tmp_path / "in", "--output", tmp_path / "out.csv",
                       "--encoding", "latin-1")
    assert r.returncode == 0, r.stderr
    assert _rows(tmp_path / "out.csv") == [["label", "text"], ["alt.atheism", "Subject: Re: caf\u00e9"],
                                           ["sci.med", "Subject: Re: na\u00efve"]]


COMPRESSORS = {"gzip": lambda data: gzip.compress(data, mtime=0), "bzip2": bz2.compress, "xz": lzma.compress,
               "lzma": lambda data: lzma.compress(data, format=lzma.FORMAT_ALONE)}


def _with_a_document(tmp_path, data):
    """Two class folders of plain documents, and ``data`` as a third document of pos/."""
    _folders(tmp_path, {"pos": POSITIVE[:2], "neg": NEGATIVE[:2]})
    (tmp_path / "in" / "pos" / "9.txt").write_bytes(data)
    return tmp_path / "in", tmp_path / "in" / "pos" / "9.txt"


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
@pytest.mark.parametrize("encoding", [[], ["--encoding", "latin-1"], ["--encoding", "cp1252"]])
def test_a_compressed_document_is_read_as_the_readers_read_it_whatever_the_encoding(tmp_path, compression, encoding):
    """A gzip, bzip2, xz or .lzma file in a class folder is decompressed, as training and predict read such a file
    (lines.decompressed). It was read as bytes of the encoding: without --encoding, "not UTF-8 ... pass --encoding
    latin-1", and with it (which decodes any byte) a bzip2 file was written as a review of garbage, silently."""
    text = "café review, compressed\nover two lines"
    directory, _ = _with_a_document(tmp_path, COMPRESSORS[compression](text.encode("cp1252" if encoding else "utf-8")))
    r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv", *encoding)
    assert r.returncode == 0, r.stderr
    assert _rows(tmp_path / "out.csv")[-1] == ["pos", text]


@pytest.mark.parametrize("data, says", [
    (zstd_frame(b"great fun"), "is zstd-compressed, which this program does not read"),
    (gzip.compress(" ".join(map(str, range(2000))).encode(), mtime=0)[:400], "corrupt or truncated gzip data"),
    (lzma.compress(" ".join(map(str, range(2000))).encode(), format=lzma.FORMAT_ALONE)[:400],
     "corrupt or truncated lzma data"),
], ids=["zstd", "gzip cut short", "lzma cut short"])
def test_compressed_data_the_readers_refuse_is_refused_in_one_line_whatever_the_encoding(tmp_path, data, says):
    """zstd data (no decompressor in the standard library) and data cut short are refused naming the file, with or
    without --encoding: under latin-1, zstd's bytes were written as the review "(µ/ý ..." and trained on."""
    directory, document = _with_a_document(tmp_path, data)
    for encoding in ([], ["--encoding", "latin-1"]):
        r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv", *encoding)
        assert_error(r, f"{document}: {says}")
        assert not (tmp_path / "out.csv").exists()


def test_a_document_cut_within_xz_magic_is_xz_cut_short_unless_its_encoding_reads_it(tmp_path):
    """A document of xz's first magic bytes alone (FD 37 7A: a download stopped at once) was "not UTF-8 text", with
    --encoding latin-1 to pass: it is xz data cut short (FD starts no UTF-8 character). Under an encoding the user
    names that reads those bytes, they are that text (cp1252: "ý7z")."""
    directory, document = _with_a_document(tmp_path, lzma.compress(b"great fun")[:3])
    r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv")
    assert_error(r, f"{document}: corrupt or truncated xz data")
    r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv", "--encoding", "cp1252")
    assert r.returncode == 0, r.stderr
    assert ["pos", "\u00fd7z"] in _rows(tmp_path / "out.csv")

def _gzip_members(path, byte, size, members=1):
    """A gzip file of ``members`` members, each of ``size`` bytes ``byte``, written a MiB at a time (no ``size`` bytes
    in memory): one member of just over the bound, or 1,024 of 1 MiB each, a "bomb" of 1 GiB in about 1 MB."""
    block = byte * min(size, 1 << 20)
    with open(path, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=1) as f:
            for _ in range(size // len(block)):
                f.write(block)
            f.write(byte * (size % len(block)))
        member = raw.tell()
    with open(path, "ab") as raw:
        raw.write(path.read_bytes()[:member] * (members - 1))


@pytest.mark.parametrize("byte, size, members", [
    (b"a", DOCUMENT_BYTES + 1, 1), (b"\x00", DOCUMENT_BYTES + 1, 1), (b"\x00", 1 << 20, 1024),
], ids=["just over the bound", "zeros just over it", "1 GiB of zeros in 1 MB"])
def test_a_compressed_document_is_decompressed_up_to_the_bound_a_document_has_and_refused_beyond_it(
        tmp_path, byte, size, members):
    """A gzip "bomb" in a class folder (a few MB of gzip that are GBs of zeros) was decompressed whole into memory,
    which ran out (a crash, no error line), or written as a row that every reader refuses (a CSV field over 16 Mi
    characters); it is read up to the bytes a document may take, and refused in one line naming the file and the
    bound, with nothing written."""
    directory, document = _with_a_document(tmp_path, b"")
    _gzip_members(document, byte, size, members)
    r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv")
    assert_error(r, f"{document}: over 64 MiB decompressed, longer than the 16 Mi characters a document may be "
                    f"(every reader refuses a CSV field that long); split it into documents, or move it out of the "
                    f"class folder")
    assert not (tmp_path / "out.csv").exists()


def test_a_document_is_written_up_to_the_length_a_reader_takes_and_refused_beyond_it(tmp_path):
    """A plain document had no bound either: one longer than a CSV field may be (formats.CSV_FIELD_LIMIT characters),
    or with a line longer than a line may be (lines.MAX_LINE_BYTES, in the UTF-8 written), was written, and the file
    refused by every reader after ("malformed CSV record ... a field longer than 16 Mi characters", "line longer than
    64 MiB"), naming a line of the CSV, not the document. One of the longest, in characters of 4 bytes each (UTF-8's
    most) over lines, is written and read back whole; one character more, or one line of them, is refused, naming the
    file, and nothing written."""
    from fasttext_lib.data import read_labeled

    directory, document = _with_a_document(tmp_path, b"")
    line = "\U0001f600" * 1023 + "\n"
    longest = line * (CSV_FIELD_LIMIT // len(line)) + "\U0001f600" * (CSV_FIELD_LIMIT % len(line))
    document.write_bytes(longest.encode() + b"\r\n")
    r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv")
    assert r.returncode == 0, r.stderr
    assert max(len(text) for text in read_labeled(str(tmp_path / "out.csv")).texts) == CSV_FIELD_LIMIT
    for text, says in ((longest + "a", f"{CSV_FIELD_LIMIT + 1} characters, longer than the 16 Mi characters a "
                                       f"document may be (every reader refuses a CSV field that long)"),
                       ("\U0001f600" * (CSV_FIELD_LIMIT - 100), f"a line of {4 * (CSV_FIELD_LIMIT - 100)} bytes as "
                                                                 f"written (UTF-8, its quotes doubled), longer than the "
                                                                 f"64 MiB a line may be (every reader refuses a line")):
        document.write_bytes(text.encode())
        r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "again.csv")
        assert_error(r, f"{document}: {says}")
        assert not (tmp_path / "again.csv").exists()


def test_zstd_data_in_a_class_folder_is_decompressed_in_its_place_as_the_error_says(tmp_path):
    """The advice was a single file's, "zstd -d FILE ... and give that file": zstd -d leaves the .zst beside the file
    it writes, in the class folder, and the rerun refused it again. The command the line gives (--rm) runs as printed
    and the rerun writes the document."""
    import subprocess

    directory, document = _with_a_document(tmp_path, b"")
    document = document.with_name("my review.txt.zst")
    document.write_bytes(zstd_frame(b"great fun\n"))
    r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv")
    assert_error(r, f"{document}: is zstd-compressed, which this program does not read; decompress it in its place "
                    f"first (zstd -d --rm {shlex.quote(str(document))}: --rm removes the compressed file")
    assert "(gzip, bzip2, xz and .lzma files are read directly)" in r.stderr
    command = r.stderr.split("(zstd -d --rm ", 1)[1].split(": --rm", 1)[0]
    subprocess.run(f"zstd -q -d --rm {command}", shell=True, check=True)
    r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv")
    assert r.returncode == 0, r.stderr
    assert ["pos", "great fun"] in _rows(tmp_path / "out.csv")


@pytest.mark.parametrize("name", ["my review.TXT.ZST", "it's a review"])
def test_zstd_data_in_a_class_folder_not_named_zst_is_decompressed_by_the_command_as_printed(tmp_path, name):
    """zstd -d names its output only for a lowercase .zst: "zstd -d --rm 'my review.TXT.ZST'", the advice as it was,
    failed as pasted ("unknown suffix ... Specify it with -o"), and the document stayed refused. The command names its
    output where zstd would not, and runs as printed."""
    import subprocess

    directory, document = _with_a_document(tmp_path, b"")
    document.unlink()
    document = document.with_name(name)
    document.write_bytes(zstd_frame(b"great fun\n"))
    r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv")
    assert_error(r, f"{document}: is zstd-compressed, which this program does not read; decompress it in its place "
                    f"first (zstd -d --rm {shlex.quote(str(document))} -o ")
    command = r.stderr.split("(zstd -d --rm ", 1)[1].split(": --rm", 1)[0]
    subprocess.run(f"zstd -q -d --rm {command}", shell=True, check=True)
    assert not document.exists()
    r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv")
    assert r.returncode == 0, r.stderr
    assert ["pos", "great fun"] in _rows(tmp_path / "out.csv")


@pytest.mark.parametrize("encoding", ["utf-32-le", "utf-32-be"])
def test_short_utf32_documents_whose_zero_bytes_pass_an_lzma_header_are_read_as_text(tmp_path, encoding):
    """UTF-32 text has the zero bytes of an .lzma header's dictionary size ('x' U+3000 in UTF-32-LE: 78 00 00 00 00;
    ' hi' in UTF-32-BE: 00 00 00 20 00), and a document too short for the decompression probe to tell (under 18
    bytes) was refused as "corrupt or truncated lzma data", where it was read before .lzma was; real .lzma data, cut
    as short, is still refused as such."""
    # ('x' U+4E01, 8 bytes: 78 00 00 00 01, a 16 MiB dictionary; as short as an .lzma file cut within its header,
    # which is no .lzma but a cut of xz's header, its size's bytes FF: binary_data._LZMA_START's comment)
    texts = {"utf-32-le": ["x\u3000\u4e00", "x\u3000", "x\u4e01"], "utf-32-be": [" hi", "0 ok"]}[encoding]
    (tmp_path / "in" / "pos").mkdir(parents=True)
    (tmp_path / "in" / "neg").mkdir()
    for i, text in enumerate(texts):
        (tmp_path / "in" / "pos" / f"{i}.txt").write_bytes(text.encode(encoding))
    (tmp_path / "in" / "neg" / "0.txt").write_bytes("a review".encode(encoding))
    r = cli_in_process("import-folders", "--input", tmp_path / "in", "--output", tmp_path / "out.csv",
                       "--encoding", encoding)
    assert r.returncode == 0, r.stderr
    assert sorted(_rows(tmp_path / "out.csv")[1:]) == sorted([["neg", "a review"]] + [["pos", t] for t in texts])
    cut = tmp_path / "in" / "neg" / "1.txt"
    cut.write_bytes(lzma.compress(b"a review", format=lzma.FORMAT_ALONE)[:12])
    r = cli_in_process("import-folders", "--input", tmp_path / "in", "--output", tmp_path / "again.csv",
                       "--encoding", encoding)
    assert_error(r, f"{cut}: corrupt or truncated lzma data")


def test_a_zip_archive_in_a_class_folder_is_extracted_beside_it_as_the_error_says(tmp_path):
    """A zip's advice was a single file's, "unzip it first and give the file inside it": the zip left in the class
    folder was refused again. The command the line gives extracts the documents into the folder. It was unzip -j,
    which asked before replacing a document of one of the zip's names (a prompt in a notebook's terminal; no answer:
    exit 1), and whose "A" answer replaced the user's document: -n keeps it, and the zip's file stays in the zip."""
    import shlex
    import subprocess
    import zipfile

    directory, _ = _with_a_document(tmp_path, b"")
    archive = directory / "pos" / "9.txt"
    archive.unlink()
    archive = archive.with_name("more.zip")
    (archive.parent / "b.txt").write_bytes(b"the user's own review")  # (a name the zip holds too)
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("reviews/a.txt", "superb acting")
        z.writestr("reviews/b.txt", "moving story")
    r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv")
    command = f"unzip -n -j {archive} -d {archive.parent}"
    assert_error(r, f"{archive}: is a zip archive; a class folder holds one document per file: extract its files "
                    f"beside it ({command}: -n keeps a file already there of a name the zip holds, and leaves the "
                    f"zip's in it, which unzip -l lists) and move the zip out of the folder")
    ran = subprocess.run(shlex.split(command), stdin=subprocess.DEVNULL, capture_output=True, text=True)
    assert ran.returncode == 0 and "replace" not in ran.stdout, ran  # (no question asked)
    assert (archive.parent / "b.txt").read_bytes() == b"the user's own review"
    archive.rename(tmp_path / archive.name)
    r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv")
    assert r.returncode == 0, r.stderr
    assert ["pos", "superb acting"] in _rows(tmp_path / "out.csv")
    assert ["pos", "the user's own review"] in _rows(tmp_path / "out.csv")
    with zipfile.ZipFile(tmp_path / archive.name) as z:  # (the zip's b.txt, not extracted, is still there)
        assert z.read("reviews/b.txt") == b"moving story"


@pytest.mark.parametrize("data, what", [
    (b"PAR1\x15\x04\x15\x80\x01" + b"x" * 64 + b"\x00\x00PAR1", "a Parquet file"),
    (ole2_header() + b"x" * 64, "an Excel workbook (.xls)"),
], ids=["parquet", "xls"])
def test_a_table_in_a_class_folder_is_said_to_be_moved_out_of_it(tmp_path, data, what):
    """A table's advice was a single file's, "convert it to CSV first": its CSV copy in the class folder would be
    written as one document's text, the table refused again."""
    directory, document = _with_a_document(tmp_path, data)
    r = cli_in_process("import-folders", "--input", directory, "--output", tmp_path / "out.csv")
    assert_error(r, f"{document}: is {what}, not a text document; move it out of the class folder")


def test_an_unknown_encoding_is_refused_before_anything_is_read(tmp_path):
    split = _imdb(tmp_path, per_class=2)
    r = cli_in_process("import-folders", "--input", split, "--output", tmp_path / "out.csv", "--skip", "unsup",
                       "--encoding", "latin-9x")
    assert_error(r, "--encoding latin-9x")
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("encoding", ["unicode_escape", "raw_unicode_escape", "punycode", "idna", "undefined",
                                      "charmap", "rot13", "base64"])
def test_python_codecs_that_are_no_text_encoding_are_refused_as_the_endpoint_refuses_them(tmp_path, encoding):
    """--encoding unicode_escape read a review's six characters caf\\xe9 as café, punycode and idna decoded letters
    as domain names: Python's codecs that no file is written in (the endpoint's 415 for them as charsets, by the same
    rule: lines.text_codec). One error line naming Python's codec, before anything is read; nothing written."""
    import codecs

    from fasttext_lib.class_folders import folders_to_csv
    from fasttext_lib.errors import FastTextError

    split = _imdb(tmp_path, per_class=2)
    (split / "pos" / "0.txt").write_text("caf\\xe9 au lait")
    r = cli_in_process("import-folders", "--input", split, "--output", tmp_path / "out.csv", "--skip", "unsup",
                       "--encoding", encoding)
    assert_error(r, f"--encoding {encoding}: Python's {codecs.lookup(encoding).name} codec reads no text file")
    assert not (tmp_path / "out.csv").exists()
    with pytest.raises(FastTextError, match=f"^encoding='{encoding}': Python's "):
        folders_to_csv(split, str(tmp_path / "out.csv"), skip=["unsup"], encoding=encoding)


def test_an_existing_output_is_kept_without_overwrite_and_replaced_with_it(tmp_path):
    split = _imdb(tmp_path, per_class=2)
    out = tmp_path / "out.csv"
    out.write_text("label,text\nmine,my own data\n")
    r = cli_in_process("import-folders", "--input", split, "--output", out, "--skip", "unsup")
    assert_error(r, "--overwrite")
    assert out.read_text() == "label,text\nmine,my own data\n"
    r = cli_in_process("import-folders", "--input", split, "--output", out, "--skip", "unsup", "--overwrite")
    assert r.returncode == 0, r.stderr
    assert [row[0] for row in _rows(out)] == ["label", "neg", "neg", "pos", "pos"]


def test_the_output_does_not_depend_on_the_order_files_were_made_in(tmp_path):
    one, other = _imdb(tmp_path / "a"), _imdb(tmp_path / "b", reverse=True)
    outputs = []
    for split, name in ((one, "1.csv"), (other, "2.csv"), (one, "3.csv")):
        r = cli_in_process("import-folders", "--input", split, "--output", tmp_path / name, "--skip", "unsup")
        assert r.returncode == 0, r.stderr
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    names = [row[1].split(" number ")[-1].split()[0] for row in _rows(tmp_path / "1.csv")[2:31]]
    assert names == sorted(names, key=lambda n: f"{n}_2.txt")  # files in sorted name order: 1, 10, 11, ..., 2, 20


def test_a_failure_or_an_interruption_midway_leaves_the_old_output_and_no_temporary(tmp_path, monkeypatch):
    from fasttext_lib import class_folders

    split = _imdb(tmp_path, per_class=5)
    out = tmp_path / "out" / "imdb.csv"
    out.parent.mkdir()
    out.write_text("label,text\nmine,my own data\n")
    (split / "pos" / "4_7.txt").write_bytes(b"\xff\xfe u\x00t\x00f\x00")  # the last file read: UTF-16
    r = cli_in_process("import-folders", "--input", split, "--output", out, "--skip", "unsup", "--overwrite")
    assert_error(r, "4_7.txt")
    assert "UTF-16" in r.stderr
    assert out.read_text() == "label,text\nmine,my own data\n" and os.listdir(out.parent) == ["imdb.csv"]

    (split / "pos" / "4_7.txt").write_text("fine again\n")
    read, seen = class_folders._read_document, []

    def interrupted(path, *args):
        seen.append(path)
        if len(seen) == 7:
            raise KeyboardInterrupt
        return read(path, *args)

    monkeypatch.setattr(class_folders, "_read_document", interrupted)
    r = cli_in_process("import-folders", "--input", split, "--output", out, "--skip", "unsup", "--overwrite")
    assert r.returncode == 130 and len(seen) == 7, r.stderr
    assert out.read_text() == "label,text\nmine,my own data\n" and os.listdir(out.parent) == ["imdb.csv"]
    assert r.stdout == ""


def test_the_output_may_be_compressed_or_on_s3(tmp_path, s3_bucket):
    from fasttext_lib import storage
    from fasttext_lib.data import read_labeled

    split = _imdb(tmp_path, per_class=3)
    for out in (str(tmp_path / "imdb.csv.gz"), f"{s3_bucket}/data/imdb.csv"):
        r = cli_in_process("import-folders", "--input", split, "--output", out, "--skip", "unsup")
        assert r.returncode == 0, r.stderr
        assert read_labeled(out).labels == ["neg"] * 3 + ["pos"] * 3
    raw = storage.read_bytes(f"{s3_bucket}/data/imdb.csv")
    assert raw.startswith(b"label,text\n") and list(csv.reader(io.StringIO(raw.decode())))[1][0] == "neg"


def test_the_python_function_returns_the_counts(tmp_path):
    from fasttext_lib.class_folders import folders_to_csv
    from fasttext_lib.errors import FastTextError

    split = _imdb(tmp_path, per_class=2)
    with pytest.raises(FastTextError, match="--skip unsup|skip=\\['unsup'\\]"):
        folders_to_csv(split, tmp_path / "o.csv")
    notes = []
    assert folders_to_csv(split, tmp_path / "o.csv", skip=["unsup"], note=notes.append) == {"neg": 2, "pos": 2}
    assert any("unsup" in line for line in notes)


def test_the_python_function_refuses_an_existing_output_in_its_own_terms(tmp_path):
    """folders_to_csv without overwrite, its output there: the Python API's caller was told "pass --overwrite to
    replace it, or choose another --output", flags it has none of. It names its arguments; the command keeps its own."""
    from fasttext_lib.class_folders import folders_to_csv
    from fasttext_lib.errors import FastTextError

    split = _imdb(tmp_path, per_class=2)
    out = tmp_path / "o.csv"
    out.write_text("the user's file\n")
    with pytest.raises(FastTextError) as err:
        folders_to_csv(split, out, skip=["unsup"])
    assert str(err.value) == f"{out} already exists; pass overwrite=True to replace it, or choose another uri"
    r = run_cli("import-folders", "--input", split, "--output", out, "--skip", "unsup")
    assert (r.returncode, r.stderr.splitlines()) == (
        2, [f"error: {out} already exists; pass --overwrite to replace it, or choose another --output"]), r.stderr
    assert out.read_text() == "the user's file\n"


def _folders(root, documents):
    """``root/in``: a folder per class of ``documents`` ({folder name: [text, ...]}), one file per text."""
    for folder, texts in documents.items():
        (root / "in" / folder).mkdir(parents=True)
        for i, text in enumerate(texts):
            (root / "in" / folder / f"{i}.txt").write_text(text, encoding="utf-8")
    return root / "in"


@pytest.mark.parametrize("documents", [
    {"label": ["apples and pears", "ripe fruit"], "space": ["a rocket in orbit", "the moon"]},
    {"Label": ["apples and pears", "Text"], "space": ["a rocket in orbit", "the moon"]},
    {"label": ["apples and pears"], "class": ["ripe fruit"], "space": ["text", "the moon"]},
], ids=["class-label", "class-Label", "classes-label-class-and-a-document-text"])
def test_a_class_or_document_named_as_the_header_is_read_back_as_written(tmp_path, documents):
    """A class folder named ``label`` (or a document whose whole text is ``text``): under a header ``label,text``
    every reader took that header for a document of the class ``label`` (a class that recurs is no column name), and
    ``Label,Text``-cased rows for repeats of the header, skipped: the header is named so that none of that can be."""
    from fasttext_lib.data import read_labeled

    out = tmp_path / "out.csv"
    r = cli_in_process("import-folders", "--input", _folders(tmp_path, documents), "--output", out)
    assert r.returncode == 0, r.stderr
    read = read_labeled(out)
    expected = [(name, text) for name in sorted(documents) for text in documents[name]]
    assert sorted(zip(read.labels, read.texts)) == sorted(expected)
    assert len(_rows(out)) == len(expected) + 1


@pytest.mark.parametrize("names, says", [
    (["pos", "pos "], "'pos' and 'pos '"),
    (["caf\u00e9", "cafe\u0301", "tea"], "'cafe\\u0301' and 'caf\\xe9'"),
    ([" ", "pos", "neg"], "' '"),
], ids=["spaces-at-an-end", "two-unicode-normalizations", "blank"])
def test_folders_that_training_reads_as_one_class_or_none_are_refused(tmp_path, names, says):
    """Folder names that differ in spaces at their ends were one class when read (the class is stripped), written as
    two; in two Unicode normalizations (macOS writes NFD) training refused the file written; a blank name, a row
    "without a class". Refused here, naming the folders, before anything is written."""
    _folders(tmp_path, {name: ["a document"] for name in names})
    before = listing(tmp_path)
    r = cli_in_process("import-folders", "--input", tmp_path / "in", "--output", tmp_path / "out.csv")
    assert_error(r, says)
    assert listing(tmp_path) == before


def test_files_of_no_text_are_written_and_named(tmp_path):
    """An empty file (a failed download, a placeholder) became an empty document without a word: training then said
    only "N documents have no words", naming no file."""
    split = _imdb(tmp_path, per_class=2)
    (split / "pos" / "9_10.txt").write_text("")
    (split / "neg" / "8_1.txt").write_text(" \n")
    r = cli_in_process("import-folders", "--input", split, "--output", tmp_path / "o.csv", "--skip", "unsup")
    assert r.returncode == 0, r.stderr
    assert "2 file(s) hold no text, written as empty documents" in r.stderr
    assert "8_1.txt" in r.stderr and "9_10.txt" in r.stderr
    assert len(_rows(tmp_path / "o.csv")) == 1 + 2 * 3


@pytest.mark.parametrize("skip", ["unsup/", "{split}/unsup", "{split}/unsup/"])
def test_a_skipped_folder_may_be_named_as_a_shell_completes_it(tmp_path, skip):
    """``--skip unsup/`` (the shell's completion adds the slash) and the folder's path were refused as "no folder"."""
    split = _imdb(tmp_path, per_class=2)
    r = cli_in_process("import-folders", "--input", split, "--output", tmp_path / "o.csv",
                       "--skip", skip.format(split=split))
    assert r.returncode == 0, r.stderr
    assert {row[0] for row in _rows(tmp_path / "o.csv")[1:]} == {"neg", "pos"}


def test_a_skipped_path_outside_the_directory_is_no_folder_of_it(tmp_path):
    split = _imdb(tmp_path, per_class=2)
    (tmp_path / "unsup").mkdir()
    r = cli_in_process("import-folders", "--input", split, "--output", tmp_path / "o.csv", "--skip", tmp_path / "unsup")
    assert_error(r, f"--skip {tmp_path / 'unsup'}: no folder")
    assert not (tmp_path / "o.csv").exists()


def test_the_python_function_names_its_own_arguments_in_every_refusal(tmp_path):
    """folders_to_csv is the Python API's too (a notebook's cell): its refusals named the command line's flags
    (--output, --encoding, --skip, --input), which its caller has none of. Each names the argument to change; the
    command's lines keep their flags."""
    from fasttext_lib.class_folders import folders_to_csv
    from fasttext_lib.errors import FastTextError

    def refusal(*args, **kwargs):
        with pytest.raises(FastTextError) as err:
            folders_to_csv(*args, **kwargs)
        assert not any(flag in str(err.value) for flag in ("--output", "--encoding", "--skip", "--input")), err.value
        return str(err.value)

    split = _imdb(tmp_path, per_class=2)
    assert refusal(split, "-", skip=["unsup"]).startswith("uri -: writing the CSV file to standard output")
    assert refusal(split, split / "pos" / "o.csv", skip=["unsup"]) == (
        f"uri {split / 'pos' / 'o.csv'} is inside a class folder, where it would be read as a document the next time; "
        f"write it elsewhere")
    assert refusal(split, split, skip=["unsup"]).startswith(f"uri {split} is a directory")
    assert refusal(split, tmp_path / "o.csv", skip=["unsup"], encoding="rot13").startswith("encoding='rot13': ")
    assert refusal(split, tmp_path / "o.csv", skip=["nothere"]).startswith("skip=['nothere']: no folder nothere in ")
    assert refusal(tmp_path / "none", tmp_path / "o.csv").startswith("directory: no such directory: ")
    assert refusal(split, tmp_path / "o.csv").endswith("pass skip=['unsup'] to leave them out")
    (split / "pos" / "0_7.txt").write_bytes(b"caf\xe9")
    assert refusal(split, tmp_path / "o.csv", skip=["unsup"]).endswith(
        "if the files are Latin-1 (20 Newsgroups' are), pass encoding='latin-1'")
    (split / "pos" / "0_7.txt").write_bytes(b"\xff\xfe u\x00t\x00f\x00")
    assert refusal(split, tmp_path / "o.csv", skip=["unsup"]).endswith(
        "it starts with a UTF-16 byte order mark: pass encoding='utf-16'")
    (split / "pos" / "0_7.txt").write_bytes("utf".encode("utf-32"))  # (FF FE 00 00: UTF-16-LE's mark, then NULs)
    assert refusal(split, tmp_path / "o.csv", skip=["unsup"]).endswith(
        "it starts with a UTF-32 byte order mark: pass encoding='utf-32'")
    (split / "pos" / "0_7.txt").write_bytes(b"a\x00b")
    assert refusal(split, tmp_path / "o.csv", skip=["unsup"]).endswith(
        "remove the file, or pass the encoding it is written in (encoding=...)")
    assert not (tmp_path / "o.csv").exists()
    r = cli_in_process("import-folders", "--input", split, "--output", split / "pos" / "o.csv", "--skip", "unsup")
    assert_error(r, f"--output {split / 'pos' / 'o.csv'} is inside a class folder")
