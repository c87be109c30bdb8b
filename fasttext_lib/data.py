"""Reading and writing labeled text: fastText format and the Zhang et al. (2015) CSV.

* fastText format: ``__label__2 the food was great .`` (one document a line).
* Zhang et al. CSV (Yelp polarity, ag_news, dbpedia, ...): ``"2","the food ""rocked""\\nreally"``;
  the first column is the class, the remaining columns (title, body, ...) are joined with a space;
  ``""`` escapes a quote and a literal ``\\n`` stands for a line break.

Both stream from a local path or ``s3://`` URI through :mod:`fasttext_lib.storage`. Every
malformed input raises :class:`FastTextError` naming the file and line.
"""
import csv
import io
from dataclasses import dataclass, field
from typing import List

from . import storage
from .errors import FastTextError
from .text import normalize_text

LABEL_PREFIX = "__label__"
FORMATS = ("auto", "fasttext", "csv")


@dataclass
class LabeledTexts:
    """Documents and their labels, labels kept as they appear in the data ("1", "pos", ...)."""

    labels: List[str] = field(default_factory=list)
    texts: List[str] = field(default_factory=list)

    def __len__(self):
        return len(self.texts)

    def label_names(self):
        return sorted(set(self.labels), key=_label_sort_key)

    def head(self, n):
        return LabeledTexts(self.labels[:n], self.texts[:n])


def _label_sort_key(label):
    # "2" < "10" for numeric class ids, plain string order otherwise.
    return (0, int(label), "") if label.isdigit() else (1, 0, label)


def sort_labels(labels):
    return sorted(set(labels), key=_label_sort_key)


def _text_lines(uri):
    raw = storage.open_read(uri, "rb")
    return io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline="")


def detect_format(first_line, uri):
    stripped = first_line.lstrip("\ufeff").lstrip()
    if stripped.startswith(LABEL_PREFIX):
        return "fasttext"
    if stripped.startswith('"'):
        return "csv"
    raise FastTextError(
        f"{uri}: cannot detect the format of line 1 (expected '__label__X text' or a '\"class\",\"text\"' CSV row)"
    )


def _parse_fasttext_line(line, uri, lineno):
    tokens = line.split()
    labels = [t for t in tokens if t.startswith(LABEL_PREFIX)]
    if not labels:
        raise FastTextError(f"{uri}:{lineno}: line has no __label__ prefix")
    if len(labels) > 1:
        raise FastTextError(f"{uri}:{lineno}: line has {len(labels)} labels; only single-label classification is supported")
    label = labels[0][len(LABEL_PREFIX):]
    if not label:
        raise FastTextError(f"{uri}:{lineno}: empty label after __label__")
    return label, " ".join(t for t in tokens if not t.startswith(LABEL_PREFIX))


def _csv_row_to_example(row, uri, lineno):
    if len(row) < 2:
        raise FastTextError(f"{uri}:{lineno}: malformed CSV row: expected \"class\",\"text\"[,...] but got {len(row)} column(s)")
    label = row[0].strip()
    if not label:
        raise FastTextError(f"{uri}:{lineno}: CSV row has an empty class column")
    text = " ".join(col for col in row[1:] if col).replace("\\n", " ")
    return label, text


def iter_examples(uri, fmt="auto"):
    """Yield ``(label, raw_text)`` pairs from a local path or ``s3://`` URI."""
    if fmt not in FORMATS:
        raise FastTextError(f"unknown data format {fmt!r}; choose one of {', '.join(FORMATS)}")
    uri = str(uri)
    stream = _text_lines(uri)
    try:
        try:
            first = stream.readline()
            while first and not first.strip():
                first = stream.readline()
        except UnicodeDecodeError:
            raise FastTextError(f"{uri}: not UTF-8 text (binary or wrongly encoded file)") from None
        if not first:
            raise FastTextError(f"{uri}: file is empty")
        if "\x00" in first:
            raise FastTextError(f"{uri}: not a text file (contains NUL bytes)")
        if fmt == "auto":
            fmt = detect_format(first, uri)
        lines = _chain([first.lstrip("\ufeff")], stream)
        lineno = 0
        try:
            if fmt == "fasttext":
                for lineno, line in enumerate(lines, 1):
                    if "\x00" in line:
                        raise FastTextError(f"{uri}:{lineno}: not a text file (contains NUL bytes)")
                    if line.strip():
                        yield _parse_fasttext_line(line, uri, lineno)
            else:
                reader = csv.reader(lines, strict=True)
                for row in reader:
                    lineno = reader.line_num
                    if not row:
                        continue
                    yield _csv_row_to_example(row, uri, lineno)
        except csv.Error as exc:
            raise FastTextError(f"{uri}:{lineno + 1}: malformed CSV: {exc}") from None
        except UnicodeDecodeError:
            raise FastTextError(f"{uri}: line {lineno + 1} is not UTF-8 text (binary or wrongly encoded file)") from None
    finally:
        stream.close()


def _chain(first, rest):
    yield from first
    yield from rest


def read_labeled(uri, fmt="auto", limit=None):
    """Read a whole dataset into memory; an empty dataset is an error."""
    data = LabeledTexts()
    for label, text in iter_examples(uri, fmt):
        data.labels.append(label)
        data.texts.append(text)
        if limit is not None and len(data) >= limit:
            break
    if not data.texts:
        raise FastTextError(f"{uri}: contains no labeled documents")
    return data


def fasttext_line(label, text):
    return f"{LABEL_PREFIX}{label} {normalize_text(text)}\n"


def write_fasttext(data, uri):
    """Write normalized fastText-format lines atomically to a local path or ``s3://`` URI."""
    with storage.atomic_write(uri, "wb") as f:
        writer = io.TextIOWrapper(f, encoding="utf-8", newline="\n")
        for label, text in zip(data.labels, data.texts):
            writer.write(fasttext_line(label, text))
        writer.flush()
        writer.detach()
    return str(uri)


def csv_line(label, text):
    """One Zhang et al. CSV row (quotes doubled, line breaks as a literal backslash-n)."""
    body = text.replace('"', '""').replace("\n", "\\n")
    return f'"{label}","{body}"\n'


def write_csv(data, uri):
    with storage.atomic_write(uri, "wb") as f:
        for label, text in zip(data.labels, data.texts):
            f.write(csv_line(label, text).encode("utf-8"))
    return str(uri)
