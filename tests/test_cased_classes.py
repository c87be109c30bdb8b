"""The warning for one class written in two cases (class_checks.warn_classes_cased_alike): the command it prints for
fastText-format files (perl, which macOS and every Debian ship: GNU sed's escapes were no BSD sed's) is run here, in a
shell, as a user pastes it."""
import gzip
import os
import re
import shutil
import subprocess

import pytest

from fasttext_lib.class_checks import warn_classes_cased_alike
from fasttext_lib.data import read_counted, read_labeled

ROWS = [("Positive", "great stuff foo__label__Positive kept as written"), ("positive", "fine"),
        ("negative", "Bad. not__label__Positive either"), ("Positive", "Loved it")]


def _write(path, rows=ROWS, compress=False):
    text = "".join(f"__label__{label} {words}\n" for label, words in rows).encode()
    path.write_bytes(gzip.compress(text, mtime=0) if compress else text)


def _merge_line(data, capsys):
    """The warning said, and the command it gives to merge the labels (None where it gives none)."""
    warn_classes_cased_alike(data.classes(), data)
    said = capsys.readouterr().err
    found = re.search(r"\((?:this file|these files): (perl -C0 -i\.bak -pe .*)\)$", said.strip())
    return said, found and found.group(1)


def _perl_alone(tmp_path):
    """A PATH holding perl and nothing else (no sed: the command must not need GNU's, or any), and bash's path."""
    tools = tmp_path / "only_perl"
    tools.mkdir()
    os.symlink(shutil.which("perl"), tools / "perl")
    return str(tools), shutil.which("bash")


@pytest.mark.parametrize("reader", [read_labeled, read_counted])
def test_the_merge_line_merges_the_labels_of_a_file_at_any_path_and_edits_no_text(tmp_path, capsys, reader):
    """The file's name was pasted unquoted (a space or a $ in it: sed read other files, or none), and a text word
    that ends in __label__Positive was rewritten too."""
    folder = tmp_path / "my data $HOME"
    folder.mkdir()
    path = folder / "train 1.txt"
    _write(path)
    said, command = _merge_line(reader(str(path)), capsys)
    assert command, said
    r = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    merged = read_labeled(str(path))
    assert merged.labels == ["positive", "positive", "negative", "positive"]
    assert [t for t in merged.texts] == [words for _, words in ROWS]  # the text as written, case and all
    assert (folder / "train 1.txt.bak").read_bytes().decode().startswith("__label__Positive great")


@pytest.mark.parametrize("reader", [read_labeled, read_counted])
def test_data_read_from_several_files_gets_a_merge_line_for_each_of_them(tmp_path, capsys, reader):
    """Every spelling first met in the first file: the line said 'this file: sed ... a.txt', and b.txt, which holds
    'Positive' too, kept it."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    _write(a)
    _write(b, [("negative", "meh"), ("Positive", "Great")])
    said, command = _merge_line(reader([str(a), str(b)]), capsys)
    assert command, said
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
    assert set(read_labeled([str(a), str(b)]).labels) == {"positive", "negative"}


def test_a_compressed_file_gets_no_merge_line(tmp_path, capsys):
    """An in-place edit (sed -i then, perl -i now) of gzip data rewrites no label: the line told a user to run what
    changes nothing."""
    path = tmp_path / "train.txt.gz"
    _write(path, compress=True)
    said, command = _merge_line(read_labeled(str(path)), capsys)
    assert "warning: training data has classes 'Positive'" in said and command is None, said
    assert "df[" not in said and "write the labels one way (the __label__ words in the file)" in said, said


@pytest.mark.parametrize("name, content, column", [
    ("train.csv", "sentiment,review\nPositive,great\npositive,fine\nnegative,bad\n", "sentiment"),
    ("train.tsv", "review\tRating\ngreat\tPositive\nfine\tpositive\nbad\tnegative\n", "Rating"),
    ("train.jsonl", '{"stars": "Positive", "body": "great"}\n{"stars": "positive", "body": "fine"}\n'
                    '{"stars": "negative", "body": "bad"}\n', "stars"),
    ("train.csv", "Positive,great\npositive,fine\nnegative,bad\n", "label"),  # (no header: no name to give)
])
def test_the_pandas_line_names_the_files_own_class_column(tmp_path, capsys, name, content, column):
    """The warning's pandas line said df['label'] whatever the file's class column (a header's 'sentiment', a JSON
    Lines key 'stars'): pasted, it raised KeyError, or made a new column and merged nothing. It names the column the
    classes were read from."""
    path = tmp_path / name
    path.write_text(content)
    data = read_labeled(str(path), fmt="csv" if column == "label" else "auto")  # (word classes, no header: CSV)
    warn_classes_cased_alike(data.classes(), data)
    said = capsys.readouterr().err
    assert said.strip().endswith(f"(pandas: df[{column!r}] = df[{column!r}].str.lower())"), said


def test_a_fasttext_format_file_gets_no_pandas_line(tmp_path, capsys):
    """fastText-format data has no class column for pandas: the line offered df['label'] beside the merge line."""
    path = tmp_path / "train.txt"
    _write(path)
    said, command = _merge_line(read_labeled(str(path)), capsys)
    assert command and "pandas" not in said and "df[" not in said, said


# every character the fastText reader splits a line's words at (str.split(): formats.parse_fasttext_line), but the
# line end, which ends each line perl reads
READ_AS_SEPARATORS = [chr(c) for c in range(0x110000) if chr(c).isspace() and chr(c) != "\n"]


@pytest.mark.parametrize("environment", [{}, {"PERL_UNICODE": "SDA", "LC_ALL": "C.UTF-8"}], ids=["plain", "utf8"])
@pytest.mark.parametrize("reader", [read_labeled, read_counted])
def test_the_merge_line_merges_a_label_next_to_any_separator_the_reader_splits_at(tmp_path, capsys, reader,
                                                                                 environment):
    """The merge line was GNU sed's (LC_ALL=C sed -E with \\t, \\xHH and [\\x1c-\\x1f], which BSD sed, a Mac's, does
    not read), and it took the separator after a label as part of its match: of two labels a separator apart, only
    the first was rewritten. It is a perl line now (perl is on macOS and every Debian), run here with perl alone on
    PATH: a label beside each separator the reader splits at (the no-break space, \\x1c-\\x1f, the wide spaces U+2000...),
    at a line's start and end (the file's last line unended), and labels side by side, are all merged; a text word
    that ends in one is kept. Perl told to read its files as UTF-8 (PERL_UNICODE) matches the same."""
    rows = [(sep, "Positive" if i % 2 else "positive") for i, sep in enumerate(READ_AS_SEPARATORS)]
    path = tmp_path / "train.txt"
    content = ("".join(f"{sep}__label__{label}{sep}good{sep}x__label__{label}\n" for sep, label in rows)
               + "".join(f"good{sep}x__label__Positive{sep}__label__{label}\n" for sep, label in rows)
               + "__label__negative bad\n__label__Positive last")
    path.write_bytes(content.encode("utf-8"))
    assert set(read_labeled(str(path)).labels) == {"Positive", "positive", "negative"}  # (each a label as read)
    said, command = _merge_line(reader(str(path)), capsys)
    assert command, said
    side_by_side = "".join(f"__label__Positive{sep}" for sep in READ_AS_SEPARATORS) + "__label__Positive\n"
    (tmp_path / "side_by_side.txt").write_bytes(side_by_side.encode("utf-8"))  # (the reader refuses 2 labels a line)
    command = command.replace(str(path), f"{path} side_by_side.txt")
    tools, bash = _perl_alone(tmp_path)
    r = subprocess.run([bash, "-c", command], cwd=tmp_path, capture_output=True, text=True,
                       env={"PATH": tools, **environment})
    assert r.returncode == 0 and not r.stderr, r.stderr
    merged = read_labeled(str(path))
    assert set(merged.labels) == {"positive", "negative"}
    n = len(rows)
    assert merged.texts[:n] == [f"good x__label__{label}" for _, label in rows]  # (a text word is no label: kept)
    assert merged.texts[n:2 * n] == ["good x__label__Positive"] * n
    assert merged.labels[-1] == "positive" and merged.texts[-1] == "last"
    assert path.read_bytes() == re.sub("(?<!x)__label__Positive", "__label__positive", content).encode("utf-8")
    assert (tmp_path / "side_by_side.txt").read_bytes() == side_by_side.replace("Positive", "positive").encode("utf-8")
    assert (tmp_path / "train.txt.bak").read_bytes() == content.encode("utf-8")  # (bytes: read_text reads \r as \n)


@pytest.mark.parametrize("marks", [1, 2])
@pytest.mark.parametrize("reader", [read_labeled, read_counted])
def test_the_merge_line_merges_a_label_after_a_byte_order_mark(tmp_path, capsys, reader, marks):
    """The reader takes a label after UTF-8 byte order marks at a line's start (Notepad writes one before the first
    line; two where a file read with its mark was written again with utf-8-sig): the perl line matched a label only
    at a line's very start or after a separator (then after one mark only), so that first label was left as written,
    and the warning came back after the line was run."""
    path = tmp_path / "train.txt"
    path.write_bytes(b"\xef\xbb\xbf" * marks + b"__label__Positive great\n__label__positive fine\n__label__Positive ok\n")
    said, command = _merge_line(reader(str(path)), capsys)
    assert command, said
    tools, bash = _perl_alone(tmp_path)
    r = subprocess.run([bash, "-c", command], cwd=tmp_path, capture_output=True, text=True, env={"PATH": tools})
    assert r.returncode == 0 and not r.stderr, r.stderr
    assert path.read_bytes() == \
        b"\xef\xbb\xbf" * marks + b"__label__positive great\n__label__positive fine\n__label__positive ok\n"
    assert read_labeled(str(path)).classes() == ["positive"]
