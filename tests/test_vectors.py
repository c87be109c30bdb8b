"""Word vectors in and out: ``.vec`` files (vec_files.py), ``train --pretrained-vectors`` (pretrained.py),
``export-vectors`` and cos_similarity (vectors.py)."""
import bz2
import gzip
import json
import os
import re
import stat

import boto3
import numpy as np
import pytest

from conftest import cli_in_process, make_splits, params_of, run_cli, save_as_before_the_rule_was_recorded
from fasttext_lib import bag_ops, storage
from fasttext_lib.bundle import save_bundle
from fasttext_lib.compact import changed_rows
from fasttext_lib.config import TrainConfig
from fasttext_lib.errors import FastTextError
from fasttext_lib.init_rows import initial_rows
from fasttext_lib.predict import Predictor
from fasttext_lib.train import featurize, initial_model, train
from fasttext_lib.vec_files import WordVectors, check_vec_start, read_vec, write_vec
from fasttext_lib.vectors import cos_similarity, export_vectors, token_embedding, word_vectors

DIM = 8
TINY = ["--epochs", "2", "--batch-size", "64", "--emsize", str(DIM), "--no-progress", "--ctx", "cpu"]


def vec_text(words, dim=DIM, seed=0, count=None):
    """A .vec file's text as fastText writes it (a space after every value)."""
    rng = np.random.RandomState(seed)
    lines = [f"{len(words) if count is None else count} {dim}\n"]
    for word in words:
        lines.append(word + " " + "".join(f"{v:.6f} " for v in rng.uniform(-1, 1, dim)) + "\n")
    return "".join(lines)


@pytest.fixture(scope="module")
def splits():
    return make_splits(600, 200, seed=4)


@pytest.fixture(scope="module")
def vocab_words(splits):
    featurizer, _, _ = featurize(splits[0], None, TrainConfig(emsize=DIM, progress=False))
    return list(featurizer.vocab.idx_to_token)


@pytest.fixture(scope="module")
def vec_file(tmp_path_factory, vocab_words):
    """Vectors for <unk>, half of the vocabulary's words, and words the vocabulary lacks."""
    path = tmp_path_factory.mktemp("vec") / "pre.vec"
    words = ["<unk>"] + vocab_words[1::2] + ["zzzunseen", "qqqunseen"]
    path.write_text(vec_text(words), encoding="utf-8")
    return path


def config(**changes):
    return TrainConfig(**{**dict(epochs=2, batch_size=64, emsize=DIM, progress=False, ctx="cpu", seed=5), **changes})


# ---------------------------------------------------------------- reading

def test_read_vec_as_fasttext_writes_it(tmp_path):
    path = tmp_path / "a.vec"
    path.write_bytes(b"\xef\xbb\xbf3 2\ncaf\xc3\xa9 1 2 \nb 0.5 -1e-3 \n\nNew_York 3 4\n\n")  # BOM, UTF-8 word, blank lines
    vectors = read_vec(str(path), dim=2)
    assert vectors.words == ["café", "b", "New_York"] and vectors.dim == 2
    np.testing.assert_array_equal(vectors.vectors, np.array([[1, 2], [0.5, -1e-3], [3, 4]], np.float32))
    assert vectors.vectors.dtype == np.float32 and re.fullmatch(r"[0-9a-f]{64}", vectors.sha256)
    gz, bz = tmp_path / "a.vec.gz", tmp_path / "a.vec.bz2"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    bz.write_bytes(bz2.compress(path.read_bytes()))
    for compressed in (gz, bz):
        again = read_vec(str(compressed))
        assert again.words == vectors.words and np.array_equal(again.vectors, vectors.vectors)


BAD_VEC_FILES = [
    (b"", "empty file"),
    (b"\n\n", "empty file"),
    (b"hello world\n", r":1: malformed \.vec header 'hello world'"),
    (b"3\na 1 2\n", r":1: malformed \.vec header"),
    (b"2 -4\n", r":1: malformed \.vec header"),
    (b"1 0\na\n", "dimension 0; it must be positive"),
    (b"2 3\na 1 2 3\nb 1 2\n", r":3: expected a word and 3 values, got 2 value\(s\)"),
    (b"2 3\na 1 2 3\nb 1 2 3 4\n", r":3: expected a word and 3 values, got 4"),
    (b"1 3\na 1 two 3\n", r":2: 'two' is not a number"),
    (b"1 3\na_b 1 1_0 3\n", r":2: '1_0' is not a number"),  # Python's float() read it as 10
    (b"1 3\na 1 nan 3\n", r":2: value 'nan' is not finite"),
    (b"1 3\na 1 2 inf\n", r":2: value 'inf' is not finite"),
    (b"1 3\na 1 2 1e39\n", r":2: value '1e39' is not finite \(as float32\)"),
    # (the Windows-1252 advice named Excel's 'CSV UTF-8' and pandas' read_csv, of no help for a .vec file)
    (b"1 3\ncaf\xe9 1 2 3\n", r":2: not UTF-8 text \(byte 0xe9 at column 4; re-encode the file as UTF-8: it reads as "
                                r"Windows-1252, as Windows programs write it; convert it: iconv -f CP1252 -t UTF-8 \S+"
                                r"bad\.vec > new\.vec\)$"),
    (b"1 3\na 1 2 3\x00\n", r":2: not a text file"),
    # (said as a CSV's was: converted to new.csv, with Excel's 'Unicode Text' and a pandas to_csv line)
    ("1 3\na 1 2 3\n".encode("utf-16"), r":1: not a text file this program reads: it is UTF-16 text; convert it to "
                                         r"UTF-8 first, e\.g\. iconv -f UTF-16 -t UTF-8 \S+bad\.vec > new\.vec$"),
    (b"3 3\na 1 2 3\nb 1 2 3\n", "announces 3 words but the file has 2"),
    (b"1 3\na 1 2 3\nb 1 2 3\n", r":3: more word lines than the 1 the header announces"),
    (gzip.compress(b"1 3\na 1 2 3\n", mtime=0)[:-12], "corrupt or truncated gzip"),
]


@pytest.mark.parametrize("content, pattern", BAD_VEC_FILES, ids=[p for _, p in BAD_VEC_FILES])
def test_bad_vec_files_are_one_error(tmp_path, content, pattern):
    path = tmp_path / "bad.vec"
    path.write_bytes(content)
    with pytest.raises(FastTextError, match=pattern) as info:
        read_vec(str(path), dim=3)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_blank_lines_above_the_header_are_skipped_as_fasttext_skips_them(tmp_path):
    """A .vec whose header comes after a blank line (fastText's ``in >> n >> dim`` skips it) was refused as "empty
    file", of a file full of vectors. It reads as fastText reads it; a bad header is named at its own line."""
    path = tmp_path / "blank_first.vec"
    path.write_bytes("\ufeff\r\n  \n2 3\r\na 1 2 3 \r\nb 4 5 6\r\n".encode("utf-8"))  # (a BOM, CRLF, a blank line)
    vectors = read_vec(str(path), dim=3)
    assert vectors.words == ["a", "b"] and vectors.vectors.tolist() == [[1, 2, 3], [4, 5, 6]]
    path.write_bytes(b"\n\nhello world\n")
    with pytest.raises(FastTextError, match=r"blank_first\.vec:3: malformed \.vec header 'hello world'"):
        read_vec(str(path), dim=3)
    path.write_bytes(b"\n1 0\na\n")
    with pytest.raises(FastTextError, match=r"blank_first\.vec:2: the header gives dimension 0"):
        read_vec(str(path), dim=3)


def word2vec_binary(words, dim, newline):
    """word2vec's binary format (GoogleNews-vectors-negative300.bin; gensim's binary=True): a text header, then each
    word, a space and its values as raw little-endian float32 (older writers end each with a newline)."""
    rng = np.random.RandomState(1)
    return f"{len(words)} {dim}\n".encode() + b"".join(
        w.encode() + b" " + rng.normal(0, 0.1, dim).astype("<f4").tobytes() + (b"\n" if newline else b"")
        for w in words)


FASTTEXT_BIN = (793712314).to_bytes(4, "little") + (12).to_bytes(4, "little") + bytes(range(40))  # .bin's start


@pytest.mark.parametrize("name, content, pattern", [
    # (they were "not UTF-8 text ...: convert it: iconv -f CP1252 ..." of raw floats, or "a binary file?")
    ("w2v.bin", word2vec_binary(["</s>", "the", "in"], 3, newline=True),
     r"w2v\.bin: is word2vec's binary format \(a word, then its 3 values as raw bytes\), not a \.vec text file; "
     r"convert it to text \(gensim: KeyedVectors\.load_word2vec_format\(path, binary=True\)\.save_word2vec_format"),
    ("w2v.vec", word2vec_binary(["the", "in"], 3, newline=False), r"w2v\.vec: is word2vec's binary format"),
    ("cc.en.300.bin", FASTTEXT_BIN, r"cc\.en\.300\.bin: is a fastText binary model \(\.bin\), not a \.vec text "
                                    r"file; give the \.vec file of the same vectors"),
    ("cc.en.300.bin.gz", gzip.compress(FASTTEXT_BIN, mtime=0), r"cc\.en\.300\.bin\.gz: is a fastText binary model"),
    # (it was ":2: expected a word and 3 values, got 2 value(s)", of a line with 3)
    ("space.vec", b"2 3\n 1 2 3\nb 1 2 3\n", r"space\.vec:2: the line starts with whitespace: its word is empty or "
                                            r"is whitespace, which a \.vec file cannot hold; remove the line"),
    ("mac.vec", b"2 3\ra 1 2 3\rb 1 2 3\r", r"mac\.vec:1: malformed \.vec header .*; its lines seem to end in a lone "
                                         r"carriage return"),
])
def test_files_of_other_formats_are_named_as_such(tmp_path, name, content, pattern):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(FastTextError, match=pattern) as info:
        read_vec(str(tmp_path / name), dim=3)
    assert "\n" not in str(info.value)


def test_a_file_without_a_header_says_how_to_add_it_and_that_works(tmp_path, monkeypatch):
    """GloVe's files have no '<count> <dim>' line: the error (the first word line shown as a malformed header) says
    so, with the command that adds it."""
    import subprocess

    monkeypatch.chdir(tmp_path)
    text = "the 0.418 0.24968 -0.41242\n, 0.013441 0.23682 -0.16899\n\n"
    (tmp_path / "glove.6B.3d.txt").write_text(text)
    with pytest.raises(FastTextError) as info:
        read_vec("glove.6B.3d.txt", dim=3)
    message = str(info.value)
    assert message.startswith("glove.6B.3d.txt:1: malformed .vec header 'the 0.418 0.24968 -0.41242': expected "
                              "'<count> <dim>' (two positive integers); it is a word and 3 values: a file without the "
                              "header line (GloVe's format); add the line '<number of words> 3' at its top: "), message
    subprocess.run(["bash", "-c", message.split("at its top: ", 1)[1]], check=True)
    vectors = read_vec(str(tmp_path / "new.vec"), dim=3)
    assert vectors.words == ["the", ","] and vectors.vectors[1, 2] == np.float32(-0.16899)


def test_a_headerless_file_whose_first_word_is_a_number_gets_the_same_advice_and_a_non_ascii_header_is_refused(
        tmp_path, monkeypatch):
    """A GloVe-style file whose first word is a number (2010, a year) got "malformed .vec header" alone, without the
    command; a header written in other digits (Arabic-Indic ٢ ٣) was read, which fastText refuses."""
    import subprocess

    monkeypatch.chdir(tmp_path)
    (tmp_path / "years.txt").write_text("2010 0.1 0.2 0.3 0.4\nthe 0.5 0.6 0.7 0.8\n")
    with pytest.raises(FastTextError, match="it is a word and 4 values") as info:
        read_vec("years.txt", dim=4)
    subprocess.run(["bash", "-c", str(info.value).split("at its top: ", 1)[1]], check=True)
    assert read_vec(str(tmp_path / "new.vec"), dim=4).words == ["2010", "the"]
    (tmp_path / "years.txt").write_text("2 8 1\nthe 0.5 0.6 0.7 0.8\n")  # a header gone wrong: no GloVe advice
    with pytest.raises(FastTextError, match=r"^years.txt:1: malformed .vec header '2 8 1': expected '<count> <dim>' "
                                            r"\(two positive integers\)$"):
        read_vec("years.txt", dim=4)
    (tmp_path / "arabic.vec").write_text("\u0662 \u0663\na 1 2 3\nb 4 5 6\n")
    with pytest.raises(FastTextError, match="malformed .vec header"):
        read_vec("arabic.vec", dim=3)


@pytest.mark.parametrize("name, compress, read", [
    # (the command named the file unquoted: "cat my vecs/glove 3d.txt" read "my" and "vecs/glove", then "3d.txt")
    ("my vecs/glove 3d $HOME's.txt", lambda data: data, "cat"),
    # (compressed files got no command: "add the line ... at its top", of a file one cannot edit as text; then zcat,
    # bzcat and xzcat, where lines.py's hints gave gzip -dc, bzip2 -dc and xz -dc: an older macOS's zcat reads .Z only)
    ("glove.6B.3d.txt.gz", lambda data: gzip.compress(data, mtime=0), "gzip -dc"),
    ("glove.6B.3d.txt.bz2", bz2.compress, "bzip2 -dc"),
    ("glove.6B.3d.txt", lambda data: __import__("lzma").compress(data), "xz -dc"),  # (xz, found by its bytes)
    ("glove.6B.3d.txt.lzma", lambda data: __import__("lzma").compress(data, format=__import__("lzma").FORMAT_ALONE),
     "xz -dc --format=lzma"),
    ("-glove.txt", lambda data: data, "cat"),  # (cat -glove.txt: read as cat's options)
])
def test_the_command_that_adds_the_header_works_for_any_local_file_name_and_compression(tmp_path, monkeypatch, name,
                                                                                        compress, read):
    """The command is run as printed, by sh (not bash alone), and writes the file with its header; a compressed file is
    read by the decompressor every other hint names."""
    import subprocess

    from fasttext_lib.shell_words import shell_word

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my vecs").mkdir()
    text = b"the 0.418 0.24968 -0.41242\n, 0.013441 0.23682 -0.16899\n\n"
    (tmp_path / name).write_bytes(compress(text))
    with pytest.raises(FastTextError) as info:
        read_vec(name, dim=3)
    command = str(info.value).split("at its top: ", 1)[1]
    assert command.endswith(f"; {read} {shell_word(name)}) > new.vec"), command  # (quoted, -name as ./-name)
    subprocess.run(["sh", "-c", command], check=True)
    assert (tmp_path / "new.vec").read_bytes() == b"2 3\n" + text
    vectors = read_vec(str(tmp_path / "new.vec"), dim=3)
    assert vectors.words == ["the", ","] and vectors.vectors[1, 2] == np.float32(-0.16899)


@pytest.mark.parametrize("compress", [lambda data: data, lambda data: gzip.compress(data, mtime=0)])
def test_the_header_command_counts_the_lines_the_reader_reads_whatever_the_locale(tmp_path, monkeypatch, compress):
    """The command counted lines with grep '[^[:space:]]', whose [:space:] in a UTF-8 locale holds U+3000 and the other
    wide spaces; the reader skips only lines of ASCII whitespace (bytes.split, as fastText). A line of U+3000 was left
    out of the count, so the new file was refused as "more word lines than the header announces" instead of by its
    line. Counted in the C locale, the header holds every line the reader reads."""
    import subprocess

    monkeypatch.chdir(tmp_path)
    (tmp_path / "glove.txt").write_bytes(compress("the 0.1 0.2 0.3\n\u3000\n\n, 0.4 0.5 0.6\n".encode()))
    with pytest.raises(FastTextError) as info:
        read_vec("glove.txt", dim=3)
    subprocess.run(["bash", "-c", str(info.value).split("at its top: ", 1)[1]], check=True,
                   env={**os.environ, "LC_ALL": "C.UTF-8"})
    assert (tmp_path / "new.vec").read_bytes().split(b"\n")[0] == b"3 3"
    with pytest.raises(FastTextError, match=r"new\.vec:3: expected a word and 3 values, got 0 value\(s\)$"):
        read_vec("new.vec", dim=3)


def test_dimension_mismatch_names_both_dimensions(tmp_path):
    path = tmp_path / "d.vec"
    path.write_text(vec_text(["a"], dim=5))
    with pytest.raises(FastTextError, match=r"dimension 5 but the model's emsize is 8.*TrainConfig\(emsize=5\)"):
        read_vec(str(path), dim=8)


def test_a_dimension_no_model_can_have_is_not_advised_as_emsize(tmp_path):
    """A header "3 2000000000" was answered "train with --emsize 2000000000", advice that then failed on the tensor
    size limit: the smallest table of that dimension (<unk> and one word) is more than MXNet holds in one tensor."""
    from fasttext_lib.devices import MAX_TABLE_VALUES

    path = tmp_path / "d.vec"
    path.write_text("3 2000000000\na 1 2\n")
    with pytest.raises(FastTextError) as info:
        read_vec(str(path), dim=8)
    assert str(info.value) == (f"{path}: the pretrained vectors have dimension 2000000000, which no model can be "
                               f"trained with: even a table of 2 rows (<unk> and one word) of it is more than the "
                               f"{MAX_TABLE_VALUES:,} values MXNet can hold in one tensor (the largest dimension is "
                               f"{MAX_TABLE_VALUES // 2:,})")
    path.write_text(f"1 {MAX_TABLE_VALUES // 2}\na 1 2\n")  # the largest one still gets the emsize advice...
    # ...as the Python API's caller (read_vec is its function, called outside train) sets it, not as the --emsize flag
    with pytest.raises(FastTextError, match=f"train with TrainConfig\\(emsize={MAX_TABLE_VALUES // 2}\\)\\)$"):
        read_vec(str(path), dim=8)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FastTextError, match="no such file"):
        read_vec(str(tmp_path / "absent.vec"))
    with pytest.raises(FastTextError, match="directory"):
        read_vec(str(tmp_path))


def test_a_model_bundle_given_as_vectors_says_how_to_export_them(tmp_path, splits, s3_bucket):
    """A run's bundle given as --pretrained-vectors (to start from its vectors) was "expected a file but got a
    directory" (on S3 "no such S3 object"); it is named, with the command that writes its vectors."""
    trained = train(*splits, config(epochs=1))
    for bundle in (save_bundle(trained, str(tmp_path / "run1")), save_bundle(trained, f"{s3_bucket}/models/run1")):
        with pytest.raises(FastTextError) as info:
            read_vec(bundle, dim=DIM)
        assert str(info.value) == (f"{bundle} is a model bundle, not a .vec file; export its word vectors first "
                                   f"(python -m fasttext_lib export-vectors --model {bundle} --output vectors.vec) and "
                                   f"give that file")
    with pytest.raises(FastTextError, match=f"^no such S3 object: {s3_bucket}/models/run2$"):
        read_vec(f"{s3_bucket}/models/run2")


def test_words_are_separated_at_ascii_whitespace_only_as_fasttext_does(tmp_path):
    # The published wiki vectors hold words with U+00A0 inside; fastText (and gensim) keep them as one word.
    path = tmp_path / "u.vec"
    path.write_bytes("3 2\na\u00a0b 1 2\nc\u3000d\t3 4\r\ne\u2028f 5 6\n".encode("utf-8"))
    vectors = read_vec(str(path), dim=2)
    assert vectors.words == ["a\u00a0b", "c\u3000d", "e\u2028f"]
    np.testing.assert_array_equal(vectors.vectors, np.array([[1, 2], [3, 4], [5, 6]], np.float32))


@pytest.mark.parametrize("header", [b"20000 100000000000\n", b"100000 10000000\n"])
def test_a_header_that_lies_about_a_huge_dimension_is_one_error_not_an_allocation(tmp_path, header):
    # Without dim (autotune, the library): nothing is allocated from the header alone.
    path = tmp_path / "lie.vec"
    path.write_bytes(header + b"a 1 2\n")
    with pytest.raises(FastTextError, match=r"lie\.vec:2: expected a word and \d+ values, got 2"):
        read_vec(str(path))


def test_cli_autotune_with_a_huge_header_dimension_is_one_error_line(tmp_path, splits):
    from fasttext_lib.writers import write_csv

    write_csv(splits[0], str(tmp_path / "train.csv"))
    write_csv(splits[1], str(tmp_path / "val.csv"))
    (tmp_path / "lie.vec").write_bytes(b"20000 100000000000\na 1 2\n")
    r = run_cli("train", "--train", tmp_path / "train.csv", "--autotune-validation", tmp_path / "val.csv",
                "--output", tmp_path / "out", "--pretrained-vectors", tmp_path / "lie.vec", "--no-progress")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines() == [f"error: {tmp_path / 'lie.vec'}:2: expected a word and 100000000000 "
                                             f"values, got 2 value(s)"]
    assert not (tmp_path / "out").exists()


def _big_vec_file(path, vocabulary, extra_words, dim):
    """A .vec whose vocabulary words are few among many others, with the spellings pretrained_rows reads
    (a word listed twice, a capitalized and an NFD spelling)."""
    rng = np.random.RandomState(3)
    words = ["Zzfirst"] + [f"other{i}" for i in range(extra_words // 2)] + list(vocabulary) + [
        vocabulary[0], vocabulary[1].upper(), vocabulary[1].capitalize(), "caf\u00e9".upper(), "cafe\u0301",
        "ZZFIRST", "zzfirst"] + [f"more{i}" for i in range(extra_words // 2)]
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{len(words)} {dim}\n")
        for block in range(0, len(words), 4096):
            values = rng.uniform(-1, 1, (min(4096, len(words) - block), dim))
            f.writelines(w + " " + " ".join(f"{v:.6f}" for v in row) + "\n"
                         for w, row in zip(words[block:block + 4096], values))
    return len(words)


def test_read_vec_with_a_vocabulary_holds_only_the_rows_it_gives_and_gives_the_same_rows(tmp_path):
    """A wiki .vec (2.3 GB of text) was read whole into memory: on a 4 GB notebook instance an OOM kill."""
    from fasttext_lib.pretrained import pretrained_rows

    vocabulary = {"<unk>": 0, "good": 1, "bad": 2, "café": 3, "zzfirst": 4, "haus": 5, "absent": 6}
    path = tmp_path / "big.vec"
    count = _big_vec_file(path, ["good", "bad", "Haus", "café"], 2000, DIM)
    full = read_vec(str(path), dim=DIM)
    kept = read_vec(str(path), dim=DIM, keep=vocabulary)
    assert kept.words_in_file == full.words_in_file == len(full) == count and kept.sha256 == full.sha256
    assert len(kept) <= 2 * len(vocabulary) and kept.vectors.shape == (len(kept), DIM)
    assert not [w for w in kept.words if w.startswith(("other", "more"))]
    rows, values = pretrained_rows(full, vocabulary)
    kept_rows, kept_values = pretrained_rows(kept, vocabulary)
    assert rows.tolist() == kept_rows.tolist() == [1, 2, 3, 4, 5]
    assert values.tobytes() == kept_values.tobytes()  # bit for bit: the last "good", "BAD" before "Bad", ...
    assert describe_of(kept) == describe_of(full)


def describe_of(vectors):
    from fasttext_lib.pretrained import describe

    return describe(vectors, 3, 10)


# Word lists a .vec file may hold for one vocabulary, in hostile orders: NFC and NFD spellings of one word (and
# a capitalised NFD one), several capitalisations, words that differ only in case (both in the vocabulary too),
# <unk> and <UNK>, duplicates, Greek final sigma and a typographic apostrophe (lowered() is more than str.lower).
_HOSTILE_VOCABULARY = ["<unk>", "café", "haus", "good", "us", "US", "école", "οδος", "don't", "absent",
                       "\u2764", "\u05e9\u05dc\u05d5\u05dd", "'", "\u043f\u0440\u0438\u0432\u0435\u0442", "\u043c\u0438\u0440"]
_HOSTILE_WORD_LISTS = {
    "nfd_then_nfc": ["cafe\u0301", "café", "Haus"],
    "nfc_then_nfd": ["café", "cafe\u0301", "CAFE\u0301"],
    "capitalised_nfd_only": ["CAFE\u0301", "Café", "E\u0301COLE", "École"],
    "capitals_before_own": ["HAUS", "Haus", "haus", "HAUS"],
    "own_before_capitals": ["haus", "Haus", "HAUS", "haus"],
    "capitals_only": ["Haus", "HAUS", "hAUS", "Haus"],
    "differ_only_in_case": ["Us", "US", "uS", "us", "US"],
    "cased_token_only": ["US", "Us", "uS"],
    "unk": ["<UNK>", "<unk>", "<Unk>", "<unk>"],
    "unk_capitalised_only": ["<UNK>", "<Unk>"],
    "duplicates": ["good", "Good", "good", "GOOD", "good", "Good"],
    "greek_and_apostrophe": ["ΟΔΟΣ", "Οδος", "DON’T", "Don't", "don't"],
    "nothing_of_the_vocabulary": ["other", "Other", "ABSENTS"],
    # what the training rule drops or changes (text.MARKS): variation selectors, direction marks, typographic quotes
    "marks_before_own": ["\u2764\ufe0f", "\u2764\ufe0e", "\u2764", "\u2764\ufe0f", "\u2764"],
    "marks_only": ["\u2764\ufe0f", "\u2764\ufe0e", "\u200f\u05e9\u05dc\u05d5\u05dd", "\u05e9\u05dc\u05d5\u05dd\u200f", "\u202bHAUS\u202c"],
    # the words of a published .vec of another script than ASCII (text.one_token reads most of them without the
    # rule's passes), among ASCII, capitalized, marked and quoted ones: привет, ПРИВЕТ, Привет, мир, миры
    "mixed_scripts": ["good", "Good", "\u041f\u0420\u0418\u0412\u0415\u0422", "\u041f\u0440\u0438\u0432\u0435\u0442",
                      "\u043f\u0440\u0438\u0432\u0435\u0442", "\u043c\u0438\u0440\u044b", "\u041c\u0438\u0440",
                      "\u200f\u05e9\u05dc\u05d5\u05dd\u200e", "\u2764\ufe0f", "\u2019", "\u043c\u0438\u0440\u2019"],
    "quotes_and_invisible": ["\u2019", "\u2018", "\u00b4", "\ufeffgood", "\u201cgood\u201d", "go\u00adod", "\u201c"],
}


def _rule_says(words, vocabulary):
    """token -> the file line whose vector starts its row, as the rule is documented (said here on its own, not
    taken from either implementation): the last line whose word is the token in NFC; else the first line whose word
    (in NFC) is no token itself, and is the token as training reads text (``text.tokenize``: one token, the token)."""
    from fasttext_lib.text import nfc, tokenize

    chosen = {}
    for token in vocabulary:
        own = [i for i, word in enumerate(words) if nfc(word) == token]
        cased = [i for i, word in enumerate(words) if nfc(word) not in vocabulary and tokenize(word) == [token]]
        if own or cased:
            chosen[token] = own[-1] if own else cased[0]
    return chosen


def _orders(words):
    """The list as given, reversed, and two seeded shuffles."""
    rng = np.random.RandomState(len(words))
    return [list(words), words[::-1]] + [[words[i] for i in rng.permutation(len(words))] for _ in range(2)]


@pytest.mark.parametrize("name", sorted(_HOSTILE_WORD_LISTS))
def test_reading_with_a_vocabulary_and_pretrained_rows_take_the_rows_the_word_rule_says(tmp_path, name):
    """read_vec(keep=) decides while it reads which rows to hold, and pretrained_rows which of them start the
    table: if they ever disagreed, a row would silently start from the wrong spelling's vector (or none)."""
    from fasttext_lib.pretrained import pretrained_rows

    vocabulary = {token: row for row, token in enumerate(_HOSTILE_VOCABULARY)}
    for order, words in enumerate(_orders(_HOSTILE_WORD_LISTS[name])):
        path = tmp_path / f"{order}.vec"
        # each line's vector is its line number: the rows taken say which lines were
        path.write_text(f"{len(words)} 2\n" + "".join(f"{w} {i} {-i}\n" for i, w in enumerate(words)), encoding="utf-8")
        expected = _rule_says(words, vocabulary)
        line_of_row = {vocabulary[token]: line for token, line in expected.items()}
        expected_rows = sorted(line_of_row)
        expected_lines = [line_of_row[row] for row in expected_rows]
        kept = read_vec(str(path), dim=2, keep=vocabulary)
        assert len(kept) <= 2 * len(expected), (words, kept.words)
        for vectors in (kept, read_vec(str(path), dim=2)):
            rows, values = pretrained_rows(vectors, vocabulary)
            assert rows.tolist() == expected_rows, (words, vectors.words)
            assert values[:, 0].tolist() == expected_lines, (words, vectors.words)


def test_reading_a_large_vec_for_a_small_vocabulary_allocates_the_vocabularys_rows_not_the_files(tmp_path):
    import tracemalloc

    dim = 64
    path = tmp_path / "large.vec"
    # 2 MB of float32 values (4.7 MB of text): holding the file's rows, or allocating blocks for them, is 4x the
    # bound below; reading for the vocabulary peaks at ~20 KB. (tracemalloc makes each line's read slow: the file is
    # no larger than that margin needs.)
    count = _big_vec_file(path, ["good", "bad", "Haus", "café"], 8_000, dim)
    tracemalloc.start()
    try:
        kept = read_vec(str(path), dim=dim, keep={"<unk>", "good", "bad", "haus"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert kept.words_in_file == count and sorted(kept.words) == ["BAD", "Haus", "bad", "good"]
    assert peak < 500_000, f"reading held {peak} bytes for 4 rows of {dim} values"


def test_training_reads_only_the_vocabularys_rows_of_the_vectors_file(splits, vocab_words, tmp_path, monkeypatch):
    """train() and the CLI read the file once the vocabulary is known, holding its rows only."""
    import fasttext_lib.vec_files as vec_files
    from fasttext_lib.writers import write_csv

    path = tmp_path / "big.vec"
    count = _big_vec_file(path, vocab_words[1::2], 3000, DIM)
    held, read = [], vec_files.read_vec
    monkeypatch.setattr(vec_files, "read_vec", lambda *a, **k: held.append(read(*a, **k)) or held[-1])
    trained = train(*splits, config(pretrained_vectors=str(path)))
    assert len(held) == 1 and not [w for w in held[0].words if w.startswith(("other", "more"))]
    assert len(held[0]) <= trained.featurizer.vocab_size
    assert trained.pretrained["words_in_file"] == count
    assert trained.pretrained["rows_initialized"] == len(vocab_words[1::2])
    write_csv(splits[0], str(tmp_path / "train.csv"))
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "out", *TINY,
                       "--pretrained-vectors", path)
    assert r.returncode == 0, r.stderr
    assert len(held) == 2 and len(held[1].words) == 0  # released once in the table
    assert Predictor.load(str(tmp_path / "out")).config["pretrained_vectors"]["words_in_file"] == count


def test_the_bundle_records_where_the_vectors_were_read_from(splits, vec_file, tmp_path, monkeypatch):
    """config.json recorded the file as given: ``v/w.vec`` names nothing once the bundle is elsewhere. A local file is
    recorded by its absolute path (a name for standard input, /dev/stdin, by the file it is); S3 as given (below)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "w.vec").write_bytes(vec_file.read_bytes())
    trained = train(*splits, config(pretrained_vectors="v/w.vec"))
    assert trained.pretrained["file"] == str(tmp_path / "v" / "w.vec")
    with open(tmp_path / "v" / "w.vec", "rb") as stdin:  # (train < v/w.vec, --pretrained-vectors /dev/stdin)
        trained = train(*splits, config(pretrained_vectors=f"/dev/fd/{stdin.fileno()}"))
    assert trained.pretrained["file"] == str(tmp_path / "v" / "w.vec")
    save_bundle(trained, str(tmp_path / "out"))
    record = json.loads((tmp_path / "out" / "config.json").read_text())["pretrained_vectors"]
    assert record["file"] == str(tmp_path / "v" / "w.vec") and len(record["sha256"]) == 64


def test_the_bundles_train_config_records_the_vectors_where_they_were_read_from(splits, vec_file, tmp_path, monkeypatch):
    """config.json's train_config recorded pretrained_vectors as given (``v/w.vec``), which names nothing once the
    bundle is elsewhere, while its "pretrained_vectors" record beside it said the absolute path: train_config says
    the file as that record does (a local file by its absolute path, a name of an open file by the file it is)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "w.vec").write_bytes(vec_file.read_bytes())
    for given in ("v/w.vec", "./v/../v/w.vec"):
        save_bundle(train(*splits, config(pretrained_vectors=given)), str(tmp_path / "out"), overwrite=True)
        saved = json.loads((tmp_path / "out" / "config.json").read_text())
        assert saved["train_config"]["pretrained_vectors"] == saved["pretrained_vectors"]["file"] == \
            str(tmp_path / "v" / "w.vec"), given
    with open(tmp_path / "v" / "w.vec", "rb") as stdin:  # (train < v/w.vec, --pretrained-vectors /dev/stdin)
        trained = train(*splits, config(pretrained_vectors=f"/dev/fd/{stdin.fileno()}"))
    save_bundle(trained, str(tmp_path / "out"), overwrite=True)
    saved = json.loads((tmp_path / "out" / "config.json").read_text())
    assert saved["train_config"]["pretrained_vectors"] == str(tmp_path / "v" / "w.vec")
    save_bundle(train(*splits, config()), str(tmp_path / "out"), overwrite=True)  # without vectors: None, as before
    assert json.loads((tmp_path / "out" / "config.json").read_text())["train_config"]["pretrained_vectors"] is None


def test_a_bad_line_deep_in_the_vectors_is_one_error_line_before_training(tmp_path, splits):
    """The CLI checks the file's start before the data, and the rest as it reads the rows it keeps."""
    from fasttext_lib.writers import write_csv

    write_csv(splits[0], str(tmp_path / "train.csv"))
    vec = tmp_path / "pre.vec"
    text = vec_text([f"w{i}" for i in range(1500)])
    vec.write_text(text.replace("w1400 ", "w1400 x "), encoding="utf-8")
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "out", *TINY,
                       "--pretrained-vectors", vec)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: {vec}:1402: expected a word and {DIM} values, got {DIM + 1} value(s)"], r.stderr
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- initialization

def test_initial_rows_are_the_file_vectors_for_vocabulary_words(splits, vec_file):
    cfg = config(pretrained_vectors=str(vec_file))
    pretrained = read_vec(str(vec_file), dim=DIM)
    featurizer, _, _ = featurize(splits[0], None, cfg)
    model, record = initial_model(featurizer, 2, cfg, [__import__("mxnet").cpu()], pretrained)
    table = model.embedding_table()
    seeded = initial_rows(cfg.seed, np.arange(len(table)), DIM)
    covered = [featurizer.vocab.token_to_idx[w] for w in pretrained.words if w in featurizer.vocab.token_to_idx]
    assert len(covered) == len(pretrained) - 2  # the two unseen words are ignored
    for row in covered:
        np.testing.assert_array_equal(table[row], pretrained[featurizer.vocab.idx_to_token[row]])
    others = np.setdiff1d(np.arange(len(table)), covered)
    np.testing.assert_array_equal(table[others], seeded[others])  # every other row keeps the seeded value
    assert record["rows_initialized"] == len(covered) and record["words_in_file"] == len(pretrained)
    assert record["sha256"] == pretrained.sha256 and record["dim"] == DIM


@pytest.mark.parametrize("route", ["native", "generic"])
def test_both_training_routes_start_from_the_pretrained_rows(splits, vec_file, route, monkeypatch):
    if route == "generic":
        monkeypatch.setenv(bag_ops.ENV_SWITCH, "0")
        assert not bag_ops.available()
    pretrained = read_vec(str(vec_file))
    plain = train(*splits, config())
    started = train(*splits, config(pretrained_vectors=str(vec_file)))
    again = train(*splits, config(pretrained_vectors=str(vec_file)), pretrained=pretrained)
    index = started.featurizer.vocab.token_to_idx
    table, plain_table = started.model.embedding_table(), plain.model.embedding_table()
    # <unk> never occurs in training (min_count 1): its row is still exactly the file's vector
    np.testing.assert_array_equal(table[index["<unk>"]], pretrained["<unk>"])
    assert not np.array_equal(plain_table[index["<unk>"]], pretrained["<unk>"])
    # trained words moved from their pretrained start, and differently from the seeded run
    word = pretrained.words[1]
    assert not np.array_equal(table[index[word]], pretrained[word])
    assert not np.array_equal(table[index[word]], plain_table[index[word]])
    # seeded runs stay deterministic, whether the file is read by train() or handed over
    for name, value in params_of(started).items():
        np.testing.assert_array_equal(value, params_of(again)[name])
    assert started.pretrained == again.pretrained and started.pretrained["rows_initialized"] == len(pretrained) - 2


def test_release_pretrained_empties_the_vectors_once_the_table_holds_them(splits, vec_file):
    """A wiki .vec is gigabytes: the CLI and the training job do not keep it for the whole run."""
    sizes = []
    pretrained = read_vec(str(vec_file))
    rows = len(pretrained)
    train(*splits, config(pretrained_vectors=str(vec_file)), on_epoch_end=lambda row: sizes.append(len(pretrained)),
          pretrained=pretrained, release_pretrained=True)
    assert rows > 0 and sizes == [0, 0] and pretrained.vectors.size == 0
    kept = read_vec(str(vec_file))
    trained = train(*splits, config(pretrained_vectors=str(vec_file)), pretrained=kept)  # autotune's trials share it
    assert len(kept) == rows and trained.pretrained["rows_initialized"] == rows - 2


def test_native_and_generic_routes_agree_with_pretrained_vectors(splits, vec_file, monkeypatch):
    cfg = config(pretrained_vectors=str(vec_file), ngrams=2, buckets=5000)
    native = train(*splits, cfg)
    monkeypatch.setenv(bag_ops.ENV_SWITCH, "0")
    generic = train(*splits, cfg)
    for name, value in params_of(native).items():
        np.testing.assert_array_equal(value, params_of(generic)[name])


def test_pretrained_vectors_of_another_dimension_are_refused_before_featurizing(splits, tmp_path, monkeypatch):
    path = tmp_path / "five.vec"
    path.write_text(vec_text(["a", "b"], dim=5))
    import fasttext_lib.train as training

    monkeypatch.setattr(training, "featurize", lambda *a, **k: pytest.fail("featurized before reading the vectors"))
    with pytest.raises(FastTextError, match="dimension 5 but the model's emsize is 8"):
        train(*splits, config(pretrained_vectors=str(path)))
    with pytest.raises(FastTextError, match="dimension 5 but the model's emsize is 8"):
        train(*splits, config(pretrained_vectors=str(path)), pretrained=read_vec(str(path)))


def test_pretrained_vectors_of_another_dimension_name_emsize_as_train_is_given_it(splits, tmp_path):
    """A caller of train() (a notebook, the Python API) was told "train with --emsize 5" for a .vec file of another
    dimension: a flag it has none of. It is told TrainConfig's emsize; the command line keeps its flag."""
    path = tmp_path / "five.vec"
    path.write_text(vec_text(["a", "b"], dim=5))
    said = r"but the model's emsize is 8: they must be equal \(train with TrainConfig\(emsize=5\)\)$"
    with pytest.raises(FastTextError, match=said):
        train(*splits, config(pretrained_vectors=str(path)))
    with pytest.raises(FastTextError, match=said):
        train(*splits, config(pretrained_vectors=str(path)), pretrained=read_vec(str(path)))
    (tmp_path / "train.txt").write_text("__label__1 good food\n__label__2 bad food\n")
    r = cli_in_process("train", "--train", tmp_path / "train.txt", "--output", tmp_path / "b", *TINY,
                       "--pretrained-vectors", path)  # (the command line's wording: its flag)
    assert r.returncode == 2 and r.stderr.rstrip().endswith(f"emsize is {DIM}: they must be equal (train with "
                                                            f"--emsize 5)"), r.stderr


def test_no_progress_leaves_out_the_pretrained_vectors_line_as_its_help_says(splits, vec_file, capsys):
    """--no-progress (progress=False) also left out the "pretrained vectors: N of the M vocabulary words start from
    ..." line, which its help did not say: it named the bars and the settings line. The pretrained line goes with
    them by design (how the run starts, as the settings line says it; the bundle records both; autotune's trials run
    without them, or each would print them again), and the help names it."""
    from fasttext_lib.cli import build_parser

    train_parser = build_parser()._subparsers._group_actions[0].choices["train"]
    said = next(a.help for a in train_parser._actions if a.dest == "progress")
    assert "'settings from the data' and 'pretrained vectors' lines" in said, said
    for progress in (True, False):
        train(*splits, config(pretrained_vectors=str(vec_file), epochs=1, progress=progress))
        err = capsys.readouterr().err
        assert ("\npretrained vectors: " in "\n" + err) is progress and ("settings from the data" in err) is progress


def test_export_refuses_an_existing_file_in_the_python_apis_terms(tmp_path, splits):
    """export_vectors (and write_vec) without overwrite, a file there: the refusal said "pass --overwrite", the
    command line's flag, to a caller of the Python API (notebook 04). It names the argument."""
    trained = train(*splits, config(epochs=1))
    out = tmp_path / "mine.vec"
    out.write_text("the user's file\n")
    with pytest.raises(FastTextError) as exported:
        export_vectors(trained, str(out))
    with pytest.raises(FastTextError) as written:
        write_vec(word_vectors(trained), str(out))
    for refused in (exported, written):
        assert str(refused.value) == f"{out} already exists; pass overwrite=True to replace it"
    assert out.read_text() == "the user's file\n"


def test_compact_bundle_keeps_pretrained_rows_training_did_not_change(splits, vec_file, tmp_path):
    """compact.py rebuilds unstored rows from the seed: a pretrained row that training never touched
    (<unk> here) must be stored, or the loaded model would silently lose it."""
    trained = train(*splits, config(pretrained_vectors=str(vec_file), ngrams=2, buckets=5000))
    unk = trained.featurizer.vocab.token_to_idx["<unk>"]
    assert unk in changed_rows(trained.model.embedding_table(), trained.config.seed)
    loaded = Predictor.load(save_bundle(trained, str(tmp_path / "compact"), compact="float32"))
    np.testing.assert_array_equal(loaded.model.embedding_table()[unk], read_vec(str(vec_file))["<unk>"])
    for name, value in params_of(trained).items():
        np.testing.assert_array_equal(loaded.model._collect_params_with_prefix()[name].data().asnumpy(), value)
    assert loaded.config["pretrained_vectors"]["file"] == str(vec_file)
    assert loaded.config["train_config"]["pretrained_vectors"] == str(vec_file)


def test_autotune_keeps_emsize_at_the_vectors_dimension(splits, vec_file):
    from fasttext_lib.autotune import autotune

    # (a start of 1 epoch, not starting_config's 10: its emsize of 100 is set to the vectors' as the default start's is)
    start = config(emsize=100, epochs=1, lr=0.5, ngrams=2)
    result = autotune(*splits, duration=600, base=config(pretrained_vectors=str(vec_file), emsize=100), start=start,
                      max_trials=5, verbose=False)
    assert set(result.trials.emsize) == {DIM}
    assert result.trained.pretrained["rows_initialized"] > 0


@pytest.mark.parametrize("progress", [True, False])
def test_cli_autotune_says_the_pretrained_vectors_line_once_of_its_final_model(tmp_path, splits, vec_file, progress):
    """train --autotune-validation --pretrained-vectors never printed the "pretrained vectors: N of the M vocabulary
    words start from ..." line, even without --no-progress: the trials and the refit run with progress off (each
    would have said it again). It is said once, of the final model (the refit's vocabulary: training and validation
    data), and still not with --no-progress."""
    from fasttext_lib.writers import write_csv

    write_csv(splits[0], str(tmp_path / "train.csv"))
    write_csv(splits[1], str(tmp_path / "val.csv"))
    # (a budget of half a second: the first trial, which always runs, then the refit; a line said by each run would
    # be two lines)
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--autotune-validation", tmp_path / "val.csv",
                       "--autotune-duration", "0.5", "--output", tmp_path / "out", "--pretrained-vectors", vec_file,
                       "--ctx", "cpu", *([] if progress else ["--no-progress"]))
    assert r.returncode == 0, r.stderr
    said = [line for line in r.stderr.splitlines() if line.startswith("pretrained vectors: ")]
    if not progress:
        assert said == [], r.stderr
        return
    record = Predictor.load(str(tmp_path / "out")).config["pretrained_vectors"]  # (the final model's)
    assert said == [f"pretrained vectors: {record['rows_initialized']} of the {record['vocab_size']} vocabulary words "
                    f"start from {vec_file} ({record['words_in_file']} words, dim {DIM})"], r.stderr


# ---------------------------------------------------------------- export and round trip

def test_export_then_pretrained_round_trip(splits, tmp_path):
    trained = train(*splits, config(ngrams=2, buckets=5000))
    exported = word_vectors(trained)
    assert exported.words == list(trained.featurizer.vocab.idx_to_token)  # words only, no n-gram buckets
    assert exported.vectors.shape == (trained.featurizer.vocab_size, DIM)
    path = tmp_path / "learned.vec"
    write_vec(exported, str(path))
    back = read_vec(str(path), dim=DIM)
    assert back.words == exported.words
    np.testing.assert_array_equal(back.vectors, exported.vectors)  # 9 significant digits: float32 exactly
    # a new run (other seed) starts every vocabulary row from the exported values
    cfg = config(seed=11, pretrained_vectors=str(path))
    featurizer, _, _ = featurize(splits[0], None, cfg)
    model, record = initial_model(featurizer, 2, cfg, [__import__("mxnet").cpu()], back)
    np.testing.assert_array_equal(model.embedding_table()[:featurizer.vocab_size], exported.vectors)
    assert record["rows_initialized"] == featurizer.vocab_size


def test_cli_export_and_train_round_trip(splits, tmp_path):
    from fasttext_lib.writers import write_csv

    write_csv(splits[0], str(tmp_path / "train.csv"))
    # (the commands' answers in this process: what they write is under test, not the process around them)
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "first", *TINY)
    assert r.returncode == 0, r.stderr
    r = cli_in_process("export-vectors", "--model", tmp_path / "first", "--output", tmp_path / "first.vec")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"output": str(tmp_path / "first.vec"), "words": len(read_vec(str(tmp_path / "first.vec")))}
    first = Predictor.load(tmp_path / "first")
    tokens, vectors = first.vocabulary_rows()
    exported = read_vec(str(tmp_path / "first.vec"), dim=DIM)
    assert exported.words == tokens and np.array_equal(exported.vectors, vectors)
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "second", *TINY,
                       "--pretrained-vectors", tmp_path / "first.vec", "--seed", "7")
    assert r.returncode == 0, r.stderr
    second = Predictor.load(tmp_path / "second")
    assert second.config["pretrained_vectors"]["rows_initialized"] == len(tokens)
    assert second.config["train_config"]["pretrained_vectors"] == str(tmp_path / "first.vec")


def test_export_refuses_to_overwrite_unless_asked(tmp_path, splits):
    trained = train(*splits, config(epochs=1))
    bundle = save_bundle(trained, str(tmp_path / "b"))
    out = tmp_path / "mine.vec"
    out.write_text("the user's file\n")
    r = run_cli("export-vectors", "--model", bundle, "--output", out)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [f"error: {out} already exists; pass --overwrite to replace it"]
    assert out.read_text() == "the user's file\n"
    r = cli_in_process("export-vectors", "--model", bundle, "--output", out, "--overwrite")  # (the refusal's process above)
    assert r.returncode == 0, r.stderr
    assert read_vec(str(out)).words == list(trained.featurizer.vocab.idx_to_token)
    assert sorted(os.listdir(tmp_path)) == ["b", "mine.vec"]  # no temporary file left beside it


@pytest.mark.parametrize("case, pattern", [
    ("not a bundle", "model bundle not found"),
    ("output is a directory", "is a directory; give a file name"),
    ("output under a file", "cannot write|not a directory|exists and is not a directory"),
    ("output names no S3 object", "^error: S3 URI names no object: s3://bucket/dir/$"),
    # "" was "error:  is a directory" (the current one); "-" (stdin for --input) wrote a file named "-" there
    ("output is empty", "^error: an output file name is needed, got ''"),
    ("output is -", "^error: --output -: writing the word vectors to standard output is not supported; give a file$"),
    # "cannot write to /proc: /proc: No such file or directory", of a folder that exists
    ("output in /proc", "^error: cannot write to /proc/x.vec: /proc is on the kernel's proc file system, where no "
                        "file can be created \\(No such file or directory\\); choose a folder on a disk$"),
    ("output in /sys", "^error: cannot write to /sys/x.vec: /sys is on the kernel's sysfs file system, where no file "
                       "can be created"),
])
def test_export_errors_are_one_line_and_write_nothing(tmp_path, splits, case, pattern, monkeypatch):
    bundle = save_bundle(train(*splits, config(epochs=1)), str(tmp_path / "b"))
    output = tmp_path / "out.vec"
    monkeypatch.chdir(tmp_path)
    if case in ("output is empty", "output is -"):
        output = case.split()[-1].replace("empty", "")
    elif case == "not a bundle":
        bundle = tmp_path / "absent"
    elif case == "output is a directory":
        output = tmp_path / "adir"
        output.mkdir()
    elif case == "output names no S3 object":
        output = "s3://bucket/dir/"
    elif case in ("output in /proc", "output in /sys"):
        output = f"/{case.split('/')[-1]}/x.vec"
    else:
        (tmp_path / "afile").write_text("x")
        output = tmp_path / "afile" / "out.vec"
    run = run_cli if case == "not a bundle" else cli_in_process  # one CLI process; the output's errors in-process
    r = run("export-vectors", "--model", bundle, "--output", output)
    assert r.returncode == 2 and "Traceback" not in r.stderr + r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and re.search(pattern, lines[0]), lines
    assert not (tmp_path / "out.vec").exists()
    assert sorted(os.listdir(tmp_path)) == sorted({"b", "adir", "afile"} & set(os.listdir(tmp_path)))  # nothing else


def test_gzip_export_reads_back(tmp_path, splits):
    trained = train(*splits, config(epochs=1))
    assert export_vectors(trained, str(tmp_path / "v.vec.gz")) == trained.featurizer.vocab_size
    with gzip.open(tmp_path / "v.vec.gz", "rt") as f:
        assert f.readline() == f"{trained.featurizer.vocab_size} {DIM}\n"
    np.testing.assert_array_equal(read_vec(str(tmp_path / "v.vec.gz")).vectors, word_vectors(trained).vectors)



def test_an_export_named_bz2_or_xz_is_compressed_so_and_a_zip_is_refused(tmp_path, splits, monkeypatch):
    """export-vectors --output v.vec.bz2 (or .xz, or .lzma) wrote plain text under that name: bzcat, and readers that go
    by the name (gensim's smart_open), failed on it. A .zip (an archive of files) was plain text too; it is refused."""
    import lzma

    learned = word_vectors(train(*splits, config(epochs=1)))
    plain = write_vec(learned, str(tmp_path / "v.vec"))
    for name, decompress in (("v.vec.bz2", bz2.decompress), ("v.VEC.XZ", lzma.decompress),
                             ("v.vec.lzma", lambda data: lzma.decompress(data, lzma.FORMAT_ALONE))):
        write_vec(learned, str(tmp_path / name))
        assert decompress((tmp_path / name).read_bytes()) == (tmp_path / "v.vec").read_bytes(), name
        assert read_vec(str(tmp_path / name)).words == learned.words, name  # (and read back as it is named)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FastTextError, match=r"^v\.vec\.zip: a \.vec file is written as text, or compressed by gzip, "
                                            r"bzip2, xz or LZMA \(\.vec\.gz, \.vec\.bz2, \.vec\.xz, \.vec\.lzma\), "
                                            r"not as a zip archive; give another name$"):
        export_vectors(str(tmp_path / "nowhere"), "v.vec.zip")  # (before the bundle is looked at)
    assert not os.path.exists("v.vec.zip") and plain


@pytest.mark.parametrize("word", ["a b", "", "a\tb", "a\x0bb", "a\rb", "a\x00b", "\ud800x"])
def test_words_that_cannot_be_written_are_refused(tmp_path, word):
    # NUL and a lone surrogate were written: a file read_vec refuses, and a UnicodeEncodeError traceback
    with pytest.raises(FastTextError, match="may not be empty or contain ASCII whitespace or NUL, and must be UTF-8"):
        write_vec(WordVectors(["ok", word], np.zeros((2, 2), np.float32)), str(tmp_path / "x.vec"))
    assert os.listdir(tmp_path) == []


def test_vectors_read_with_other_whitespace_in_words_are_written_back_as_they_were(tmp_path):
    """read_vec keeps U+00A0 (in the wiki vectors' words), U+3000 and U+2028 in a word, as fastText does; write_vec
    refused such a word (str.isspace), so a read .vec (filtered to a vocabulary, say) could not be written again."""
    (tmp_path / "wiki.vec").write_bytes("3 2\n\u00a0 1 2\nc\u3000d 3 4\ne\u2028f 5 6\n".encode("utf-8"))
    vectors = read_vec(str(tmp_path / "wiki.vec"))
    write_vec(vectors, str(tmp_path / "again.vec"))
    assert (tmp_path / "again.vec").read_bytes() == (tmp_path / "wiki.vec").read_bytes()



def test_words_that_start_with_a_byte_order_mark_read_back_as_written(tmp_path):
    """A word starting with U+FEFF (a bundle trained before the rule that drops it, text.FORMED_BREAKS, holds
    ``\ufeffgreat`` as a word of its own) was written, and read back without it: as ``great``, whose vector it then
    replaced (a later line wins). Only the BOM before the header is the file's; a word line's is part of its word."""
    words = ["\ufeffgreat", "great", "\ufeff\ufeffgood", "\ufeff"]
    written = WordVectors(words, np.arange(8, dtype=np.float32).reshape(4, 2))
    write_vec(written, str(tmp_path / "v.vec"))
    read = read_vec(str(tmp_path / "v.vec"))
    assert read.words == words and read.vectors.tolist() == written.vectors.tolist()
    from fasttext_lib.pretrained import pretrained_rows

    rows, values = pretrained_rows(read_vec(str(tmp_path / "v.vec"), keep={"great": 0}), {"great": 0})
    assert values.tolist() == [[2, 3]]  # great's own line, not the word with a BOM
    write_vec(read, str(tmp_path / "again.vec"))
    assert (tmp_path / "again.vec").read_bytes() == (tmp_path / "v.vec").read_bytes()
    (tmp_path / "bom.vec").write_bytes("\ufeff".encode() + (tmp_path / "v.vec").read_bytes())  # the file's BOM
    assert read_vec(str(tmp_path / "bom.vec")).words == words

# ---------------------------------------------------------------- the CLI with bad vectors, and S3

@pytest.mark.parametrize("content, pattern", [
    (b"", "empty file"),
    (b"2 8\na 1 2 3 4 5 6 7 8\nb 1 2\n", r"pre\.vec:3: expected a word and 8 values, got 2"),
    (vec_text(["a"], dim=5).encode(), "dimension 5 but the model's emsize is 8"),
    (b"1 8\nab\xff 1 2 3 4 5 6 7 8\n", r"pre\.vec:2: not UTF-8 text"),
    (None, r"^error: --pretrained-vectors: no such file: .*pre\.vec$"),
    ("a folder", r"^error: --pretrained-vectors: expected a file but got a directory: .*pre\.vec$"),
])
def test_cli_train_with_bad_vectors_is_one_error_before_reading_data(tmp_path, content, pattern):
    """(a file that is not there, or a folder, is named by its flag, as --train's is)"""
    vec = tmp_path / "pre.vec"
    if content == "a folder":
        vec.mkdir()
    elif content is not None:
        vec.write_bytes(content)
    # The training file does not exist: the vectors are checked first, so that is never reached.
    run = run_cli if content is None else cli_in_process  # one CLI process; the file's errors in-process
    r = run("train", "--train", tmp_path / "absent.csv", "--output", tmp_path / "out", *TINY,
                "--pretrained-vectors", vec)
    assert r.returncode == 2 and "Traceback" not in r.stderr + r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(pattern, lines[0]), lines
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["", " "])
def test_cli_pretrained_vectors_with_an_empty_name_is_one_error_line(tmp_path, name):
    """``--pretrained-vectors "$VEC"`` with VEC unset read as "no vectors" (a hyperparameter's "" is no value): the run
    trained from the seeded rows, and said nothing."""
    r = cli_in_process("train", "--train", tmp_path / "absent.csv", "--output", tmp_path / "out", *TINY,
                       "--pretrained-vectors", name)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: argument --pretrained-vectors: expected a file name or s3:// URI, got {name!r} (see python -m "
        f"fasttext_lib train --help)"], r.stderr
    assert not (tmp_path / "out").exists()


def test_pretrained_vectors_dash_points_at_dev_stdin(tmp_path, monkeypatch):
    """``--pretrained-vectors -`` said "no such file: -". Training reads none of its inputs from ``-`` (only predict
    --input does); standard input is read as /dev/stdin, so the line says to give that, before the data is read."""
    monkeypatch.chdir(tmp_path)
    r = cli_in_process("train", "--train", tmp_path / "absent.csv", "--output", tmp_path / "out", *TINY,
                       "--pretrained-vectors", "-")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "error: --pretrained-vectors -: the vectors are not read from '-'; to read them from standard input give "
        "--pretrained-vectors /dev/stdin"], r.stderr
    assert not (tmp_path / "out").exists()


def test_pretrained_vectors_dash_is_refused_by_the_python_api_too(splits, vec_file, tmp_path, monkeypatch):
    """``-`` was refused for the vectors by the command line only: ``TrainConfig(pretrained_vectors="-")`` (and
    autotune or a notebook given it) trained, then stopped at "no such file: -". The config refuses it in the
    command line's line, naming the setting (a file named ``-`` in the working directory is still read)."""
    from dataclasses import replace

    monkeypatch.chdir(tmp_path)
    said = ("^pretrained_vectors -: the vectors are not read from '-'; to read them from standard input give "
            "pretrained_vectors /dev/stdin$")
    with pytest.raises(FastTextError, match=said):
        config(pretrained_vectors="-")
    with pytest.raises(FastTextError, match=said):
        replace(config(), pretrained_vectors="-")
    (tmp_path / "-").write_bytes(vec_file.read_bytes())
    assert train(*splits, config(pretrained_vectors="-")).pretrained["file"] == str(tmp_path / "-")


def test_vectors_from_a_pipe_are_read_once_and_start_their_rows(tmp_path, splits, vocab_words):
    """``--pretrained-vectors <(zcat wiki.en.vec.gz)`` (a pipe, /dev/fd/N): the file's start was checked before the
    data, which used up the pipe, so the read for the vocabulary's rows met an empty one: "empty file", of a file
    that was not. A pipe is read once, when the vocabulary is known."""
    import threading

    from fasttext_lib.writers import write_csv

    write_csv(splits[0], str(tmp_path / "train.csv"))
    text = vec_text(vocab_words[1:40], seed=3).encode()
    read_end, write_end = os.pipe()

    def feed():
        with os.fdopen(write_end, "wb") as out:
            out.write(text)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "out", *TINY,
                           "--pretrained-vectors", f"/dev/fd/{read_end}")
    finally:
        os.close(read_end)
    feeder.join()
    assert r.returncode == 0, r.stderr
    record = json.loads((tmp_path / "out" / "config.json").read_text())["pretrained_vectors"]
    assert record["rows_initialized"] == 39 and record["words_in_file"] == 39
    # (/dev/fd/N named nothing once the run was over: it is recorded as a stream, its content by its sha256)
    assert record["file"] == f"a stream, read once (/dev/fd/{read_end})" and len(record["sha256"]) == 64
    # A pipe without the header line: the advice is to add it, without the command that reads the file twice.
    read_end, write_end = os.pipe()
    os.write(write_end, b"the 1 2 3 4\n")
    os.close(write_end)
    try:
        with pytest.raises(FastTextError, match=r"add the line '<number of words> 4' at its top$"):
            read_vec(f"/dev/fd/{read_end}")
    finally:
        os.close(read_end)



@pytest.mark.parametrize("stdin", ["/dev/null", "a terminal"])
def test_vectors_from_standard_input_that_is_a_device_are_one_error_before_the_data(tmp_path, stdin):
    """``--pretrained-vectors /dev/stdin`` with standard input a terminal or /dev/null (a cron job, nohup, a forgotten
    ``<``): the start check skips what can be read once only, so the data was read (minutes at Yelp size), then the
    read of the vectors waited for typing, or met "an empty file". A device holds no .vec: one line before the data.
    (A pipe, or a file given as ``< w.vec``, is still read: test_vectors_from_a_pipe_are_read_once...)"""
    import pty
    import subprocess
    import sys

    from conftest import ROOT

    master = None
    if stdin == "a terminal":
        master, source = pty.openpty()
        shown = os.ttyname(source)
    else:
        source, shown = open(os.devnull, "rb"), "/dev/null"
    try:
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        r = subprocess.run([sys.executable, "-m", "fasttext_lib", "train", "--train", str(tmp_path / "absent.csv"),
                            "--output", str(tmp_path / "out"), *TINY, "--pretrained-vectors", "/dev/stdin"],
                           stdin=source, capture_output=True, text=True, env=env, timeout=600)
    finally:
        os.close(source) if master is not None else source.close()
        if master is not None:
            os.close(master)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: /dev/stdin ({shown}) is a device, not a .vec file; give a .vec file, or pipe one in as standard "
        f"input (/dev/stdin < wiki.vec, or zcat wiki.vec.gz | ...)"], r.stderr
    assert not (tmp_path / "out").exists()
    for name in ("/dev/null", "/dev/zero"):  # (the Python API: read_vec, and the start check, which skipped them)
        said = f"^{name} is a device, not a .vec file"
        with pytest.raises(FastTextError, match=said):
            read_vec(name)
        with pytest.raises(FastTextError, match=said):
            check_vec_start(name)

def test_vectors_that_cover_no_word_of_the_data_are_one_error_line(tmp_path, splits):
    """A .vec of other text (another language) covered none of the vocabulary: training went on from the seeded rows
    as if no vectors had been given, said only by a progress line (none with --no-progress)."""
    from fasttext_lib.writers import write_csv

    write_csv(splits[0], str(tmp_path / "train.csv"))
    vec = tmp_path / "other.vec"
    vec.write_text(vec_text(["Großartig", "schrecklich", "zzqx"], dim=DIM))
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "out", *TINY,
                       "--pretrained-vectors", vec)
    assert r.returncode == 2 and "Traceback" not in r.stderr + r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and re.match(r"error: none of the 3 words of .*other\.vec is in the training data's "
                                        r"vocabulary \(\d+ words\)", lines[0]), lines
    assert not (tmp_path / "out").exists()


def test_pretrained_vectors_and_export_on_s3(s3_bucket, splits, vec_file, tmp_path):
    from fasttext_lib.writers import write_csv

    bucket = s3_bucket[len("s3://"):]
    boto3.client("s3").upload_file(str(vec_file), bucket, "vectors/pre.vec")
    write_csv(splits[0], str(tmp_path / "train.csv"))
    r = run_cli("train", "--train", tmp_path / "train.csv", "--output", f"{s3_bucket}/model", *TINY,
                "--pretrained-vectors", f"{s3_bucket}/vectors/pre.vec")
    assert r.returncode == 0, r.stderr
    model = Predictor.load(f"{s3_bucket}/model")
    pretrained = read_vec(str(vec_file))
    assert model.config["pretrained_vectors"]["sha256"] == pretrained.sha256
    assert model.config["pretrained_vectors"]["file"] == f"{s3_bucket}/vectors/pre.vec"
    np.testing.assert_array_equal(model.model.embedding_table()[0], pretrained["<unk>"])
    r = run_cli("export-vectors", "--model", f"{s3_bucket}/model", "--output", f"{s3_bucket}/vectors/learned.vec")
    assert r.returncode == 0, r.stderr
    assert read_vec(f"{s3_bucket}/vectors/learned.vec").words == model.vocabulary_rows()[0]
    # (the refusals' answers in this process: train and export-vectors to S3 as processes are above)
    r = cli_in_process("export-vectors", "--model", f"{s3_bucket}/model", "--output", f"{s3_bucket}/vectors/learned.vec")
    assert r.returncode == 2 and "already exists; pass --overwrite" in r.stderr
    r = cli_in_process("train", "--train", tmp_path / "train.csv", "--output", tmp_path / "m", *TINY,
                "--pretrained-vectors", f"{s3_bucket}/vectors/absent.vec")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [f"error: no such S3 object: {s3_bucket}/vectors/absent.vec"]
    assert not (tmp_path / "m").exists()


def _bundle_files(location):
    config = json.loads(storage.read_bytes(storage.join(location, "config.json")))
    return ["config.json"] + sorted(entry["object"] for entry in config["files"].values())


def test_overwrite_never_replaces_a_fifo_or_device_with_a_file(tmp_path, splits):
    # The atomic rename put a regular file in place of a FIFO (as root, of /dev/null itself).
    bundle = save_bundle(train(*splits, config(epochs=1)), str(tmp_path / "b"))
    os.mkfifo(tmp_path / "pipe")
    os.symlink(tmp_path / "pipe", tmp_path / "link")
    for output, run in ((tmp_path / "pipe", run_cli), (tmp_path / "link", cli_in_process)):  # (one process is enough)
        r = run("export-vectors", "--model", bundle, "--output", output, "--overwrite")
        assert r.returncode == 2 and r.stderr.strip().splitlines() == [
            f"error: cannot write {output}: it exists and is not a regular file"], r.stderr
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode) and os.path.islink(tmp_path / "link")
    os.mkfifo(tmp_path / "train.csv")
    r = cli_in_process("sample", "--output", tmp_path, "--overwrite")  # every atomic write refuses it, not only export-vectors
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: cannot write {tmp_path / 'train.csv'}: it exists and is not a regular file"], r.stderr
    assert stat.S_ISFIFO(os.lstat(tmp_path / "train.csv").st_mode)


def test_overwrite_through_a_symbolic_link_replaces_its_target_and_keeps_the_link(tmp_path, splits):
    """As the shell's '>': the rename put a regular file in place of the user's link, the file it named untouched."""
    bundle = save_bundle(train(*splits, config(epochs=1)), str(tmp_path / "b"))
    (tmp_path / "real.vec").write_text("the user's file\n")
    os.symlink("real.vec", tmp_path / "link.vec")
    os.symlink("sub/new.vec", tmp_path / "dangling.vec")
    for output in ("link.vec", "dangling.vec"):  # (the answers in this process: the files are under test)
        r = cli_in_process("export-vectors", "--model", bundle, "--output", tmp_path / output, "--overwrite")
        assert r.returncode == 0, r.stderr
    assert os.readlink(tmp_path / "link.vec") == "real.vec" and os.readlink(tmp_path / "dangling.vec") == "sub/new.vec"
    assert read_vec(str(tmp_path / "real.vec")).words == read_vec(str(tmp_path / "sub" / "new.vec")).words
    assert sorted(os.listdir(tmp_path)) == ["b", "dangling.vec", "link.vec", "real.vec", "sub"]
    os.symlink("loop.vec", tmp_path / "loop.vec")
    r = cli_in_process("export-vectors", "--model", bundle, "--output", tmp_path / "loop.vec", "--overwrite")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: cannot write {tmp_path / 'loop.vec'}: a loop of symbolic links"], r.stderr
    os.symlink("none.vec", tmp_path / "new-dangling.vec")  # without --overwrite a link is an existing output
    r = cli_in_process("export-vectors", "--model", bundle, "--output", tmp_path / "new-dangling.vec")
    assert r.returncode == 2 and "already exists" in r.stderr and not (tmp_path / "none.vec").exists()
    # a pair of files (sample): each link stays, its target replaced
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "mine.csv").write_text("x\n")
    os.symlink("mine.csv", tmp_path / "s" / "train.csv")
    assert cli_in_process("sample", "--output", tmp_path / "s", "--overwrite").returncode == 0
    assert os.readlink(tmp_path / "s" / "train.csv") == "mine.csv"
    assert (tmp_path / "s" / "mine.csv").read_text() != "x\n"
    assert sorted(os.listdir(tmp_path / "s")) == ["mine.csv", "test.csv", "train.csv"]


def test_export_past_a_file_size_limit_is_one_line_naming_it_and_keeps_the_old_file(tmp_path, splits):
    """Under ``ulimit -f`` the export said only "File too large" (the temporary files' error names the limit)."""
    import resource
    import subprocess
    import sys

    from conftest import ROOT

    bundle = save_bundle(train(*splits, config(epochs=1)), str(tmp_path / "b"))
    export_vectors(bundle, str(tmp_path / "size.vec"))
    largest = max(os.path.getsize(tmp_path / "b" / name) for name in os.listdir(tmp_path / "b"))
    limit = (largest + os.path.getsize(tmp_path / "size.vec")) // 2  # the bundle loads; its vectors do not fit
    assert largest < limit < os.path.getsize(tmp_path / "size.vec")
    (tmp_path / "old.vec").write_text("the user's file\n")
    r = subprocess.run([sys.executable, "-m", "fasttext_lib", "export-vectors", "--model", bundle, "--output",
                        str(tmp_path / "old.vec"), "--overwrite"], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT),
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: cannot write {tmp_path / 'old.vec'}: File too large (larger than this process's file-size limit, "
        f"ulimit -f, of {limit} bytes; raise it)"], r.stderr
    assert (tmp_path / "old.vec").read_text() == "the user's file\n"
    assert sorted(os.listdir(tmp_path)) == ["b", "old.vec", "size.vec"]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600)])
def test_exported_and_written_files_get_the_mode_of_the_umask(tmp_path, splits, umask, mode):
    # The atomic write's temporary (mkstemp: 0600) became the file: owner-only whatever the umask.
    bundle = save_bundle(train(*splits, config(epochs=1)), str(tmp_path / "b"))
    old = os.umask(umask)
    try:
        # (in this process, whose umask it is: the kernel applies it as each file is created)
        assert cli_in_process("export-vectors", "--model", bundle, "--output", tmp_path / "v.vec").returncode == 0
        assert cli_in_process("sample", "--output", tmp_path / "s").returncode == 0
    finally:
        os.umask(old)
    for path in (tmp_path / "v.vec", tmp_path / "s" / "train.csv"):
        assert stat.S_IMODE(os.stat(path).st_mode) == mode, path


def test_export_never_overwrites_a_file_of_the_bundle_it_reads(tmp_path, splits):
    bundle = save_bundle(train(*splits, config(epochs=1)), str(tmp_path / "b"))
    before = {name: (tmp_path / "b" / name).read_bytes() for name in os.listdir(tmp_path / "b")}
    for name in _bundle_files(bundle) + [".fasttext.lock"]:
        for output in (tmp_path / "b" / name, f"{tmp_path}/./b/../b/{name}"):
            with pytest.raises(FastTextError) as info:  # in-process: the check the CLI runs (one CLI run below)
                export_vectors(bundle, str(output), overwrite=True)
            assert str(info.value) == f"{output} is a file of the model bundle {bundle}; write the vectors elsewhere"
    output = tmp_path / "b" / "config.json"
    r = run_cli("export-vectors", "--model", bundle, "--output", output, "--overwrite")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: {output} is a file of the model bundle {bundle}; write the vectors elsewhere"], r.stderr
    assert {name: (tmp_path / "b" / name).read_bytes() for name in os.listdir(tmp_path / "b")} == before
    assert Predictor.load(bundle).labels == ["1", "2"]
    r = cli_in_process("export-vectors", "--model", bundle, "--output", tmp_path / "b" / "vectors.vec")  # beside: fine
    assert r.returncode == 0, r.stderr


def test_export_from_a_loaded_predictor_never_overwrites_a_file_of_its_bundle(tmp_path, splits):
    """The library's export_vectors(predictor, ...) checked the bundle's files only when given its location: a
    Predictor.load(bundle) exported to bundle/config.json with overwrite=True replaced it (the bundle no longer loaded)."""
    bundle = save_bundle(train(*splits, config(epochs=1)), str(tmp_path / "b"))
    before = {name: (tmp_path / "b" / name).read_bytes() for name in os.listdir(tmp_path / "b")}
    predictor = Predictor.load(bundle)
    for name in _bundle_files(bundle):
        with pytest.raises(FastTextError, match=re.escape(f"is a file of the model bundle {bundle}; write the vectors")):
            export_vectors(predictor, str(tmp_path / "b" / name), overwrite=True)
    assert {name: (tmp_path / "b" / name).read_bytes() for name in os.listdir(tmp_path / "b")} == before
    assert export_vectors(predictor, str(tmp_path / "b" / "vectors.vec")) == len(predictor.vocabulary_rows()[0])


def test_export_never_overwrites_a_file_of_an_s3_bundle(s3_bucket, splits):
    bundle = save_bundle(train(*splits, config(epochs=1)), f"{s3_bucket}/model")
    names = _bundle_files(bundle)
    before = {name: storage.read_bytes(f"{bundle}/{name}") for name in names}
    # (in this process: the refusal's process is test_export_never_overwrites_a_file_of_the_bundle_it_reads's)
    r = cli_in_process("export-vectors", "--model", bundle, "--output", f"{bundle}/config.json", "--overwrite")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: {bundle}/config.json is a file of the model bundle {bundle}; write the vectors elsewhere"]
    # the bundle's own name: it was written, an object "model" beside the bundle's prefix "model/"
    output = bundle.rstrip("/")
    r = cli_in_process("export-vectors", "--model", bundle, "--output", output)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: {output} is the model bundle itself; give a file name such as {output}/vectors.vec"], r.stderr
    with pytest.raises(FastTextError, match=re.escape(f"{output} is the model bundle itself")):
        export_vectors(Predictor.load(bundle), output)
    with pytest.raises(FastTextError, match=re.escape(f"{output}/ is the model bundle itself")):
        export_vectors(bundle, output + "/")
    assert not storage.exists(bundle.rstrip("/"))
    assert {name: storage.read_bytes(f"{bundle}/{name}") for name in names} == before
    assert Predictor.load(bundle).labels == ["1", "2"]


def test_export_to_an_s3_folder_is_refused_as_a_local_directory_is(s3_bucket, splits):
    """--output s3://b/vectors over s3://b/vectors/earlier.vec (the S3 form of a folder, given for the folder the
    vectors go to) wrote an object "vectors" beside the prefix, where a local folder of that name is refused ("is a
    directory"): tools that show S3 as folders show a file and a folder of one name, and the user's next
    --output s3://b/vectors/ was 'names no object'."""
    bundle = save_bundle(train(*splits, config(epochs=1)), f"{s3_bucket}/model")
    boto3.client("s3").put_object(Bucket=s3_bucket[len("s3://"):], Key="vectors/earlier.vec", Body=b"1 1\nword 0.5\n")
    # (in this process: export-vectors to S3 as a process is test_pretrained_vectors_and_export_on_s3's)
    r = cli_in_process("export-vectors", "--model", bundle, "--output", f"{s3_bucket}/vectors")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: {s3_bucket}/vectors is a folder (objects are stored under {s3_bucket}/vectors/); give a file name "
        f"such as {s3_bucket}/vectors/vectors.vec"], r.stderr
    assert not storage.exists(f"{s3_bucket}/vectors")
    # (the answers that write in this process: the refusal's process is above)
    r = cli_in_process("export-vectors", "--model", bundle, "--output", f"{s3_bucket}/vectors/learned.vec")
    assert r.returncode == 0, r.stderr
    r = cli_in_process("export-vectors", "--model", bundle, "--output", f"{s3_bucket}/vector")  # a prefix of the folder's
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------- cosine similarity

def test_cos_similarity_is_the_readme_helper_on_a_gluonnlp_embedding():
    import gluonnlp
    import mxnet as mx

    vectors = WordVectors(["<unk>", "great", "excellent", "terrible", "nil"],
                          np.array([[0, 0, 1], [1, 0, 0], [1, 1, 0], [-2, 0, 0], [0, 0, 0]], np.float32))
    embedding = token_embedding(vectors)
    assert isinstance(embedding, gluonnlp.embedding.TokenEmbedding)
    assert cos_similarity(embedding, "great", "excellent") == pytest.approx(2 ** -0.5, rel=1e-6)
    assert cos_similarity(embedding, "great", "terrible") == pytest.approx(-1.0)
    vec1, vec2 = embedding["great"], embedding["excellent"]  # the README's formula, on the same embedding
    readme = (mx.nd.dot(vec1, vec2) / (vec1.norm() * vec2.norm())).asnumpy()[0]
    assert cos_similarity(embedding, "great", "excellent") == pytest.approx(float(readme), rel=1e-6)
    with pytest.raises(FastTextError, match="'awful' is not in the embedding's vocabulary"):
        cos_similarity(embedding, "great", "awful")
    with pytest.raises(FastTextError, match=r"^'Great' is not in the embedding's vocabulary \(its words are as reviews "
                                            r"are read, lowercased: 'great' is there\)$"):
        cos_similarity(embedding, "Great", "excellent")  # (a refusal that gave no hint why)
    with pytest.raises(FastTextError, match="zero vector"):
        cos_similarity(embedding, "great", "nil")
    with pytest.raises(FastTextError, match=r"^cos_similarity compares two words, got \['great'\]$"):
        cos_similarity(embedding, ["great"], "excellent")  # (a TypeError: unhashable type 'list')


@pytest.mark.parametrize("scale", [1e20, 1e-25])
def test_cosine_similarity_of_vectors_far_from_unit_length_is_their_angle(scale):
    """float32 squares overflowed (a vector of 1e20s: every similarity nan, neighbours all 0.0) or underflowed (1e-25s:
    "a zero vector") although read_vec accepts such values; the angle does not depend on the length."""
    from fasttext_lib.vectors import neighbours

    base = np.array([[1, 2, 3], [2, 4, 6.5], [-1, 0, 1]])
    vectors = WordVectors(["a", "b", "c"], (base * scale).astype(np.float32))
    cosine = base @ base[0] / (np.linalg.norm(base, axis=1) * np.linalg.norm(base[0]))
    embedding = token_embedding(vectors)
    assert [cos_similarity(embedding, "a", w) for w in ("b", "c")] == pytest.approx(cosine[1:], rel=1e-6)
    assert cos_similarity(embedding, "a", "a") == 1.0  # (never above 1: 1.0000001 was)
    nearest, _ = neighbours(vectors, "a", 2)
    assert nearest == [("b", pytest.approx(cosine[1], rel=1e-6)), ("c", pytest.approx(cosine[2], rel=1e-6))]


def test_cos_similarity_on_a_trained_model(splits):
    trained = train(*splits, config(epochs=3))
    vectors = word_vectors(trained)
    embedding = token_embedding(vectors)
    a, b = vectors.words[1], vectors.words[2]
    expected = vectors[a] @ vectors[b] / (np.linalg.norm(vectors[a]) * np.linalg.norm(vectors[b]))
    assert cos_similarity(embedding, a, b) == pytest.approx(float(expected), rel=1e-5)
    assert cos_similarity(embedding, a, a) == pytest.approx(1.0, rel=1e-6)


def test_config_field_and_hyperparameter():
    from fasttext_lib import cli, sm_train

    args = cli.build_parser().parse_args(["train", "--train", "t", "--output", "o", "--pretrained-vectors", "s3://b/v.vec"])
    assert args.pretrained_vectors == "s3://b/v.vec"
    for none in ("none", "", "null"):
        assert sm_train.parse_hyperparameters(["--pretrained_vectors", none])[0].pretrained_vectors is None
    assert sm_train.parse_hyperparameters(["--pretrained-vectors", "w.vec"])[0].pretrained_vectors == "w.vec"
    with pytest.raises(FastTextError, match="pretrained_vectors must be a file name"):
        TrainConfig(pretrained_vectors="  ")
    assert TrainConfig().same_run({**TrainConfig().to_dict()})
    assert not TrainConfig(pretrained_vectors="a.vec").same_run(TrainConfig().to_dict())  # checkpoints: another run
    # (the same file named from another directory: its content is compared in the data fingerprint)
    assert TrainConfig(pretrained_vectors="a.vec").same_run(TrainConfig(pretrained_vectors="proj/a.vec").to_dict())


def test_pretrained_source_in_a_training_job(tmp_path):
    from fasttext_lib import sm_train

    channel = tmp_path / "pretrained"
    channel.mkdir()
    assert sm_train.pretrained_source(None, None) is None
    assert sm_train.pretrained_source("s3://b/w.vec", None) == "s3://b/w.vec"
    (channel / "wiki.vec").write_text("1 2\na 1 2\n")
    assert sm_train.pretrained_source(None, str(channel)) == str(channel / "wiki.vec")
    assert sm_train.pretrained_source("wiki.vec", str(channel)) == str(channel / "wiki.vec")
    with pytest.raises(FastTextError, match="both the pretrained channel .* and the pretrained_vectors hyperparameter"):
        sm_train.pretrained_source("s3://b/w.vec", str(channel))  # (the channel downloaded, then left unread)
    assert sm_train.pretrained_source(str(channel), str(channel)) == str(channel / "wiki.vec")  # (the channel itself)
    with pytest.raises(FastTextError, match="'other.vec' is not a file of the pretrained channel"):
        sm_train.pretrained_source("other.vec", str(channel))
    (channel / "crawl.vec").write_text("1 2\na 1 2\n")
    with pytest.raises(FastTextError, match="holds 2 files; name the .vec file"):
        sm_train.pretrained_source(None, str(channel))


def _keys(policy, prefix):
    return sorted(o["Key"] for o in policy.client("admin").list_objects_v2(Bucket=policy.bucket, Prefix=prefix).get("Contents", []))


def test_export_to_s3_with_only_put_permission(s3_policy_server, splits, tmp_path, monkeypatch):
    # s3:PutObject alone (no ListBucket, GetObject or DeleteObject): S3 answers every HEAD with 403, so the
    # no-overwrite check could not tell a missing object from an existing one and export-vectors stopped
    # with "access denied" (HeadBucket and the probe's DELETE were refused too). Now S3 itself refuses an
    # existing key (a conditional PUT, If-None-Match: *).
    policy = s3_policy_server
    bundle = save_bundle(train(*splits, config(epochs=1)), str(tmp_path / "b"))
    expected = export_vectors(bundle, str(tmp_path / "local.vec"))
    uri = f"s3://{policy.bucket}/vectors/model.vec"
    put_only = policy.env("putter")
    r = run_cli("export-vectors", "--model", bundle, "--output", uri, env=put_only)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["words"] == expected
    read = policy.client("admin").get_object(Bucket=policy.bucket, Key="vectors/model.vec")["Body"].read()
    assert read == (tmp_path / "local.vec").read_bytes()
    assert _keys(policy, "vectors/") == ["vectors/model.vec"]  # no probe or other object left
    policy.client("admin").put_object(Bucket=policy.bucket, Key="vectors/model.vec", Body=b"the user's own")
    for key, value in put_only.items():  # (the other answers in this process, as the putter: its process is above)
        monkeypatch.setenv(key, value)
    r = cli_in_process("export-vectors", "--model", bundle, "--output", uri)
    assert (r.returncode, r.stdout, r.stderr.strip().splitlines()) == (
        2, "", [f"error: {uri} already exists; pass --overwrite to replace it"]), r.stderr
    assert policy.client("admin").get_object(Bucket=policy.bucket, Key="vectors/model.vec")["Body"].read() == b"the user's own"
    r = cli_in_process("export-vectors", "--model", bundle, "--output", uri, "--overwrite")
    assert r.returncode == 0, r.stderr
    assert policy.client("admin").get_object(Bucket=policy.bucket, Key="vectors/model.vec")["Body"].read() == read
    assert _keys(policy, "vectors/") == ["vectors/model.vec"]


def test_pretrained_words_with_combining_accents_start_the_rows_of_their_composed_spelling():
    """Training text is read in NFC (text.nfc): a .vec whose words are decomposed (café as cafe + U+0301, as
    text from macOS or typed Vietnamese has them) must still start those words' rows."""
    from fasttext_lib.pretrained import pretrained_rows

    vocab = {"<unk>": 0, "caf\u00e9": 1, "great": 2}
    vectors = WordVectors(["cafe\u0301", "great", "other"], np.arange(9, dtype=np.float32).reshape(3, 3))
    rows, values = pretrained_rows(vectors, vocab)
    assert rows.tolist() == [1, 2]
    assert values.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]



def test_pretrained_words_written_with_capitals_start_the_rows_of_their_lowercased_spelling():
    """Training text is lowercased: a .vec of cased text (fastText's published cc.*.vec, its German nouns "Haus",
    names "Paris") started no row for a word the file holds only capitalized, silently. The word as written in
    lowercase keeps its own vector where the file has one (it comes first, whatever the order); else the first
    cased spelling, as the file lists them (the published files: most frequent first)."""
    from fasttext_lib.pretrained import pretrained_rows

    vocab = {"<unk>": 0, "haus": 1, "the": 2, "paris": 3, "don": 4}
    words = ["The", "the", "Haus", "HAUS", "PARIS", "Paris", "Don't", "Unused"]
    vectors = WordVectors(words, np.arange(len(words), dtype=np.float32).reshape(-1, 1).repeat(2, axis=1))
    rows, values = pretrained_rows(vectors, vocab)
    assert rows.tolist() == [1, 2, 3]  # ("Don't" is three tokens of text: no word's vector)
    assert values[:, 0].tolist() == [words.index("Haus"), words.index("the"), words.index("PARIS")]


def test_pretrained_words_start_the_rows_of_the_word_the_training_rule_reads_them_as():
    """Training text is read by text.TRAINING_FORM's rule, which drops emoji variation selectors and direction marks
    (text.MARKS), characters nobody sees, and reads typographic apostrophes as ' (a token of its own): the vocabulary
    holds ❤ for ❤️, שלום for שלום + U+200F, ' for ’. A .vec word was matched in NFC and lowercased only, so ❤️ (the
    emoji style phones write) started no row. Its own spelling's vector still wins (the last line of it), else the
    first spelling in the file that the rule reads as the word; a word the rule splits (don’t) is no word's."""
    from fasttext_lib.pretrained import pretrained_rows

    vocab = {"<unk>": 0, "\u2764": 1, "\u05e9\u05dc\u05d5\u05dd": 2, "'": 3, "great": 4, "don": 5, "\U0001f44d": 6}
    words = ["\u2764\ufe0f", "\u200f\u05e9\u05dc\u05d5\u05dd\u200f", "\u2019", "\ufeffGreat", "Don\u2019t",
             "\u2764\ufe0e", "\u2764", "\u2764\ufe0f", "\u2018", "\U0001f44d\ufe0f", "\u05e9\u05dc\u05d5\u05dd\u200e"]
    vectors = WordVectors(words, np.arange(len(words), dtype=np.float32).reshape(-1, 1).repeat(2, axis=1))
    rows, values = pretrained_rows(vectors, vocab)
    assert rows.tolist() == [1, 2, 3, 4, 6]
    assert values[:, 0].tolist() == [6, 1, 2, 3, 9]  # ❤ its own line; the others the first they are read as


def test_training_counts_each_row_the_rule_folds_several_vec_words_into_once(tmp_path):
    """❤️, ❤︎ and ❤ in a .vec are one vocabulary word (❤) to training: one row starts from them, from ❤'s own vector,
    and the bundle's record and the progress line count it once."""
    import mxnet as mx

    from fasttext_lib.data import LabeledTexts

    texts = ["i \u2764\ufe0f it", "\u05e9\u05dc\u05d5\u05dd\u200f friend", "bad \u2019 day", "awful day"] * 5
    data = LabeledTexts(["pos", "pos", "neg", "neg"] * 5, texts)
    path = tmp_path / "marks.vec"
    words = ["\u2764\ufe0f", "\u2764\ufe0e", "\u2764", "\u200f\u05e9\u05dc\u05d5\u05dd", "\u2019", "\u2018", "elsewhere"]
    path.write_text(vec_text(words, dim=4), encoding="utf-8")
    cfg = config(emsize=4, pretrained_vectors=str(path))
    featurizer, _, _ = featurize(data, None, cfg)
    pretrained = read_vec(str(path), dim=4, keep=featurizer.vocab.token_to_idx)
    model, record = initial_model(featurizer, 2, cfg, [mx.cpu()], pretrained)
    assert record["rows_initialized"] == 3 and record["words_in_file"] == len(words)
    table, whole = model.embedding_table(), read_vec(str(path), dim=4)
    row = featurizer.vocab.token_to_idx
    assert table[row["\u2764"]].tolist() == whole["\u2764"].tolist()
    assert table[row["\u05e9\u05dc\u05d5\u05dd"]].tolist() == whole["\u200f\u05e9\u05dc\u05d5\u05dd"].tolist()
    assert table[row["'"]].tolist() == whole["\u2019"].tolist()

@pytest.mark.parametrize("word", ["<unk>", "<UNK>", "good", "Good", "\u2764\ufe0f", "\u200f\u05e9\u05dc\u05d5\u05dd"])
def test_a_vec_word_starts_the_row_that_training_text_of_the_word_trains(word):
    """A .vec word is a word of text: it starts the row training reads that text as. ``<unk>`` too: the rule reads the
    text ``<unk>`` (and ``<UNK>``) as the token ``<unk>``, whose row (0) every unknown word shares, so training on text
    holding it trains that row; and export-vectors writes that row as the word ``<unk>``, which starts it again (the
    round trip: test_export_then_pretrained_round_trip). fastText has no such row; in another .vec, ``<unk>`` is
    the word that stood for rare words in the text the vectors were trained on (PTB's, WikiText's)."""
    from fasttext_lib.features import Featurizer
    from fasttext_lib.pretrained import pretrained_rows

    featurizer = Featurizer.fit(["good <unk> day \u2764 \u05e9\u05dc\u05d5\u05dd", "bad <UNK> day"])
    trained_rows = featurizer.transform([word]).rows.tolist()
    assert len(trained_rows) == 1
    rows, _ = pretrained_rows(WordVectors([word], np.ones((1, 2), np.float32)), featurizer.vocab.token_to_idx)
    assert rows.tolist() == trained_rows


def test_neighbours_rank_by_cosine_and_strongest_words_leave_out_special_tokens():
    from fasttext_lib.vectors import neighbours, strongest_words

    learned = WordVectors(["<unk>", "good", "great", "bad", "table"],
                          np.array([[9, 9], [1, 0.1], [2, 0.3], [-1.5, 0], [0, 0.5]], dtype=np.float32))
    nearest, opposite = neighbours(learned, "good", 2)
    assert [w for w, _ in nearest] == ["great", "<unk>"] and nearest[0][1] == pytest.approx(0.9988, abs=1e-4)
    assert [w for w, _ in opposite] == ["bad", "table"] and opposite[0][1] == pytest.approx(-0.995, abs=1e-3)
    assert strongest_words(learned, 2) == ["great", "bad"]  # <unk>'s longer vector is no word of the text
    hearts = WordVectors(["<unk>", "<3", "good"], np.array([[9, 9], [3, 0], [1, 0]], dtype=np.float32))
    assert strongest_words(hearts, 2) == ["<3", "good"]  # (a word starting with "<" was left out as <unk> is)
    with pytest.raises(FastTextError, match="'nice' is not in the vectors' vocabulary"):
        neighbours(learned, "nice", 2)
    with pytest.raises(FastTextError, match="'Good' is not in the vectors' vocabulary .*'good' is there"):
        neighbours(learned, "Good", 2)


def test_a_word_refused_only_for_its_unicode_normalization_is_shown_escaped():
    """A query word written with a combining accent (café as e + U+0301, pasted from a Mac) is not the vocabulary's
    café (U+00E9): the refusal said "'café' is not in the vectors' vocabulary (... lowercased: 'café' is there)", two
    words that print alike. It shows them escaped, and says why."""
    import unicodedata

    from fasttext_lib.vectors import neighbours

    learned = WordVectors(["<unk>", "café", "thé"], np.array([[1, 0], [1, 0.1], [0.5, 1]], dtype=np.float32))
    embedding = token_embedding(learned)
    decomposed = unicodedata.normalize("NFD", "café")
    with pytest.raises(FastTextError, match=r"^'cafe\\u0301' is not in the vectors' vocabulary \(its words are as "
                                            r"reviews are read, in Unicode NFC: 'caf\\xe9' is there\)$"):
        neighbours(learned, decomposed, 1)
    with pytest.raises(FastTextError, match=r"^'CAFE\\u0301' is not in the embedding's vocabulary \(its words are "
                                            r"as reviews are read, in Unicode NFC and lowercased: 'caf\\xe9' is there\)$"):
        cos_similarity(embedding, decomposed.upper(), "thé")


def test_a_word_refused_only_for_an_emoji_variation_selector_is_shown_escaped():
    """❤️ (U+2764 U+FE0F) is read as ❤ (text.MARKS), and a vocabulary holds ❤: the refusal of ❤️ as a query said
    "'❤️' is not in the vectors' vocabulary (... normalized: '❤' is there)", two words that print alike (repr
    escapes no variation selector: a nonspacing mark). Both are shown escaped."""
    from fasttext_lib.vectors import neighbours

    learned = WordVectors(["<unk>", "\u2764", "good"], np.array([[1, 0], [1, 0.1], [0.5, 1]], dtype=np.float32))
    with pytest.raises(FastTextError, match=r"^'\\u2764\\ufe0f' is not in the vectors' vocabulary \(its words are as "
                                            r"reviews are read, normalized: '\\u2764' is there\)$"):
        neighbours(learned, "\u2764\ufe0f", 1)


def test_query_words_are_read_as_an_older_bundle_reads_its_text(tmp_path, monkeypatch, capsys):
    """Notebook 04's query words and word pairs (vocabulary_words, vocabulary_pairs) are looked up as the model reads
    text: a bundle written before text was put in NFC (no "unicode_normalization") holds its words spelled as they
    came (e + U+0301), and reads its reviews so (Predictor); its query words were put in NFC (today's rule), and
    each of its words written with combining accents was 'not in the vocabulary'."""
    import unicodedata

    from fasttext_lib import text as text_module
    from fasttext_lib.bundle_format import CONFIG
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.vectors import vocabulary_pairs, vocabulary_words

    nfd = lambda s: unicodedata.normalize("NFD", s)  # noqa: E731
    labels = ["pos", "neg"] * 20
    texts = [nfd("quán tuyệt vời") if label == "pos" else nfd("quán thất vọng") for label in labels]
    with monkeypatch.context() as old:  # as the library trained before: no NFC
        old.setattr(text_module, "nfc", lambda s: s)
        trained = train(LabeledTexts(labels, texts), None, config(epochs=1))
    path = save_as_before_the_rule_was_recorded(trained, str(tmp_path / "old"), monkeypatch)
    with open(os.path.join(path, CONFIG)) as f:
        written = json.load(f)
    written.pop("unicode_normalization", None)
    with open(os.path.join(path, CONFIG), "w") as f:
        json.dump(written, f)  # as the library wrote it before
    learned = word_vectors(Predictor.load(path))
    assert nfd("tuyệt") in learned.words
    assert vocabulary_words([nfd("Tuyệt"), nfd("Quán")], learned) == [nfd("tuyệt"), nfd("quán")]
    assert vocabulary_pairs([(nfd("Tuyệt"), nfd("vọng"))], set(learned.words), form=learned.unicode_form) == \
        [(nfd("tuyệt"), nfd("vọng"))]
    assert "not in" not in capsys.readouterr().out


def test_an_output_that_is_no_file_name_is_one_error_and_writes_nothing(tmp_path, splits, monkeypatch):
    """export_vectors(predictor, df["path"]) wrote a 6.6 MB file named "0    x\\ndtype: object" in the current folder:
    the output's str() was taken as its name, whatever it was."""
    import pandas as pd

    bundle = save_bundle(train(*splits, config(epochs=1)), str(tmp_path / "b"))
    monkeypatch.chdir(tmp_path)
    for output in (pd.Series(["x.vec"]), ["x.vec"], 7):
        with pytest.raises(FastTextError, match=r"^an output file name \(a str or path\) is needed, got "):
            export_vectors(bundle, output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


def test_the_vector_helpers_given_one_anothers_object_are_one_error():
    """Notebook 04 holds ``learned`` (WordVectors) and ``embedding`` (its TokenEmbedding): either given for the other,
    or the Predictor for both, was an AttributeError or TypeError traceback from inside the helper."""
    from fasttext_lib.vectors import neighbours, strongest_words, vocabulary_pairs, vocabulary_words

    learned = WordVectors(["<unk>", "good", "great"], np.array([[9, 9], [1, 0.1], [2, 0.3]], dtype=np.float32))
    embedding = token_embedding(learned)
    takes = r" takes word vectors \(word_vectors\(predictor\), or read_vec of a \.vec file\), got a "
    for call, pattern in ((lambda: neighbours(embedding, "good", 1), "^neighbours" + takes + "TokenEmbedding$"),
                          (lambda: strongest_words(embedding, 1), "^strongest_words" + takes + "TokenEmbedding$"),
                          (lambda: token_embedding(object()), "^token_embedding" + takes + "object$"),
                          (lambda: cos_similarity(learned, "good", "great"),
                           r"^cos_similarity takes a GluonNLP TokenEmbedding \(token_embedding\(vectors\) of these\), "
                           r"got a WordVectors$"),
                          (lambda: cos_similarity(object(), "good", "great"),
                           r"^cos_similarity takes a GluonNLP TokenEmbedding, got a object$"),
                          (lambda: vocabulary_words(["good"], object()), r"^vocabulary_words looks words up in word "
                           r"vectors \(word_vectors\(predictor\)\) or a set or dict of words, got a object$"),
                          (lambda: vocabulary_pairs([("good", "great")], 7), r"^vocabulary_pairs looks words up in ")):
        with pytest.raises(FastTextError, match=pattern):
            call()
    assert neighbours(learned, "good", 1)[0][0][0] == "great"  # (what each takes still works)
    assert cos_similarity(embedding, "good", "great") == pytest.approx(cos_similarity(embedding, "great", "good"))
    assert vocabulary_pairs([("Good", "great")], embedding.token_to_idx) == [("good", "great")]


@pytest.mark.parametrize("model", [None, 7, {"model": "b"}])
def test_word_vectors_of_no_model_is_one_error(model):
    with pytest.raises(FastTextError, match=r"^word_vectors needs a Predictor, a TrainedModel or a bundle's location, "
                                            rf"got {type(model).__name__}$"):
        word_vectors(model)


def test_an_overwrite_that_is_no_bool_is_refused_and_the_file_kept(tmp_path, splits):
    """overwrite="no" (or papermill's text "False") is true in Python: export_vectors wrote over the user's file."""
    bundle = save_bundle(train(*splits, config(epochs=1)), str(tmp_path / "b"))
    mine = tmp_path / "mine.vec"
    mine.write_text("1 1\nmine 1\n", encoding="utf-8")
    for overwrite in ("no", "False", 0, None):
        with pytest.raises(FastTextError, match=rf"^overwrite must be True or False, got {overwrite!r}$"):
            export_vectors(bundle, str(mine), overwrite=overwrite)
    assert mine.read_text(encoding="utf-8") == "1 1\nmine 1\n"
    assert export_vectors(bundle, str(mine), overwrite=True) == len(word_vectors(bundle))



@pytest.mark.parametrize("name, args, pattern", [
    # (a list was "unhashable type: 'list'", k=2.5 or "3" "slice indices must be integers": TypeError tracebacks)
    ("neighbours", (["good"], 2), r"^neighbours looks up one word, got \['good'\]$"),
    ("neighbours", ("good", 2.5), r"^k must be a positive integer, got 2\.5$"),
    ("neighbours", ("good", "3"), r"^k must be a positive integer, got '3'$"),
    # (k=-2 gave every word but the last two, n=-1 every word but one: slices counted from the end)
    ("neighbours", ("good", -2), r"^k must be a positive integer, got -2$"),
    ("strongest_words", (-1,), r"^n must be a positive integer, got -1$"),
    # (a zero vector ranked every other word at similarity 0.0, in vocabulary order; cos_similarity refuses it)
    ("neighbours", ("blank", 2), r"^'blank' has a zero vector: no cosine similarity$"),
])
def test_neighbours_and_strongest_words_refuse_what_they_cannot_rank(name, args, pattern):
    from fasttext_lib import vectors

    learned = WordVectors(["<unk>", "good", "great", "bad", "blank"],
                          np.array([[9, 9], [1, 0.1], [2, 0.3], [-1.5, 0], [0, 0]], dtype=np.float32))
    with pytest.raises(FastTextError, match=pattern):
        getattr(vectors, name)(learned, *args)



@pytest.mark.parametrize("name, given, pattern", [
    # (one word given alone was its letters, each a query word: 'g', 'o', 'd' of "good", and no word of why)
    ("vocabulary_words", "good", r"^query_words must be a list of words, got 'good'$"),
    ("vocabulary_words", None, r"^query_words must be a list of words, got None$"),
    ("vocabulary_words", ["good", None], r"^query_words must be a list of words, got \['good', None\]$"),
    # (one pair given alone was pairs of its letters; a pair of one word was kept, which cos_similarity cannot take)
    ("vocabulary_pairs", ("good", "great"), r"^word_pairs must be a list of \(word, word\) pairs, got \('good', "),
    ("vocabulary_pairs", [("good",)], r"^word_pairs must be a list of \(word, word\) pairs, got \[\('good',\)\]$"),
])
def test_query_words_or_pairs_that_are_no_list_of_them_are_one_error(name, given, pattern, capsys):
    from fasttext_lib import vectors

    learned = WordVectors(["<unk>", "good", "great"], np.array([[9, 9], [1, 0.1], [2, 0.3]], dtype=np.float32))
    with pytest.raises(FastTextError, match=pattern):
        getattr(vectors, name)(given, learned)
    assert capsys.readouterr().out == ""

def test_vec_files_interoperate_with_fasttext_itself(splits, tmp_path):
    """What fastText's C++ library (the fasttext wheel) reads and writes: our export is its -pretrainedVectors (every
    row taken as written, seen with lr=0), and the .vec of its own vectors starts our rows exactly."""
    fasttext = pytest.importorskip("fasttext")

    corpus = tmp_path / "train.txt"
    corpus.write_text("".join(f"__label__{label} {text}\n" for label, text in zip(splits[0].labels, splits[0].texts)),
                      encoding="utf-8")
    ours = tmp_path / "ours.vec"
    export_vectors(train(*splits, config(epochs=1, ngrams=2, buckets=5000)), str(ours))
    theirs = fasttext.train_supervised(input=str(corpus), pretrainedVectors=str(ours), dim=DIM, epoch=1, lr=0.0,
                                       verbose=0, thread=1)
    exported = read_vec(str(ours), dim=DIM)
    for word in exported.words:
        np.testing.assert_array_equal(theirs.get_input_vector(theirs.get_word_id(word)), exported[word])

    unsupervised = fasttext.train_unsupervised(input=str(corpus), dim=DIM, epoch=1, minCount=1, verbose=0, thread=1)
    words = unsupervised.get_words()
    lines = [f"{len(words)} {DIM}\n"] + [w + " " + "".join(f"{v:.5f} " for v in unsupervised.get_word_vector(w)) + "\n"
                                          for w in words]  # as fastText's print-word-vectors / .vec (a space after each)
    (tmp_path / "theirs.vec").write_text("".join(lines), encoding="utf-8")
    cfg = config(seed=11, pretrained_vectors=str(tmp_path / "theirs.vec"))
    featurizer, _, _ = featurize(splits[0], None, cfg)
    pretrained = read_vec(cfg.pretrained_vectors, dim=DIM)
    model, record = initial_model(featurizer, 2, cfg, [__import__("mxnet").cpu()], pretrained)
    shared = [w for w in featurizer.vocab.idx_to_token if w in pretrained]
    # (and more rows, of words their vectors hold only capitalized: "Great" when training text said so)
    assert record["rows_initialized"] >= len(shared) > featurizer.vocab_size // 2
    rows = [featurizer.vocab.token_to_idx[w] for w in shared]
    np.testing.assert_array_equal(model.embedding_table()[rows], np.stack([pretrained[w] for w in shared]))
