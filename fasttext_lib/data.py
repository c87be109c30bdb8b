"""Reading and writing labeled text: fastText format and the Zhang et al. (2015) CSV.

* fastText format: ``__label__2 the food was great .`` (one document a line).
* Zhang et al. CSV (Yelp polarity, ag_news, dbpedia, ...): ``"2","the food ""rocked""\\nreally"``;
  the first column is the class, the remaining columns (title, body, ...) are joined with a space;
  ``""`` escapes a quote and a literal ``\\n`` stands for a line break.

Both stream from a local path or ``s3://`` URI through :mod:`fasttext_lib.storage`. Every
malformed input raises :class:`FastTextError` naming the file and its exact physical line.
gzip, bzip2 and xz files are read transparently (recognized by their first bytes), and a CSV header
row (``"label","text"``, quoted or not) is recognized and skipped: see :func:`_header_columns`.
:func:`read_counted` reads training data for the CLI and SageMaker without keeping its texts: each
chunk of documents is tokenized and counted as it is parsed.
"""
import bz2
import csv
import gzip
import io
import itertools
import json
import lzma
import numbers
import re
import sys
import tempfile
import zlib
from dataclasses import dataclass, field
from typing import Dict, List

from . import storage
from .errors import FastTextError
from .text import normalize_text

LABEL_PREFIX = "__label__"
FORMATS = ("auto", "fasttext", "csv", "tsv", "jsonl")
CLASS_FROM_FASTTEXT = "__label__"  # LabeledTexts.class_from of fastText-format data


@dataclass
class LabeledTexts:
    """Documents and their labels, labels kept as they appear in the data ("1", "pos", ...).

    ``names``: what the labels mean, when known (``{"1": "negative", "2": "positive"}``; see
    label_names.py): :func:`read_labeled` takes it from a names file beside the data, and training
    stores it in the bundle.
    """

    labels: List[str] = field(default_factory=list)
    texts: List[str] = field(default_factory=list)
    names: Dict[str, str] = field(default_factory=dict)
    # where the classes were read from (:func:`examples_of_lines`' ``found``): CLASS_FROM_FASTTEXT, a CSV header's
    # column ("column 2 ('label')"), or "" for CSV without a header naming it (the class first, as Zhang et al.); for
    # several files that differ in it, each file's (uri, that) (:func:`class_from_files`)
    class_from: object = ""

    def __len__(self):
        return len(self.texts)

    def classes(self):
        """The distinct labels, sorted (``"2"`` before ``"10"``): raw labels, not their :attr:`names`."""
        return sorted(set(self.labels), key=_label_sort_key)

    label_names = classes  # the older name of classes(), kept for callers written before names existed

    def head(self, n):
        return LabeledTexts(self.labels[:n], self.texts[:n], dict(self.names), self.class_from)

    def subset(self, indices):
        """The documents at ``indices``, in that order (names kept)."""
        return LabeledTexts([self.labels[i] for i in indices], [self.texts[i] for i in indices], dict(self.names),
                            self.class_from)

    def display_labels(self):
        """Each document's label as shown: its name when known, else the raw label."""
        return [self.names.get(label, label) for label in self.labels]


def _label_sort_key(label):
    # "2" < "10" for numeric class ids, plain string order otherwise.
    return (0, int(label), "") if label.isdigit() else (1, 0, label)


def sort_labels(labels):
    return sorted(set(labels), key=_label_sort_key)


_COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))
_DECOMPRESS_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)


def _open_decompressed(uri):
    """A binary stream of the file's text: gzip, bzip2 and xz are recognized by their magic bytes."""
    return decompressed(storage.open_read(uri, "rb"), uri)


class _Prepended(io.RawIOBase):
    """``head`` (bytes already read) and then the rest of the binary stream ``rest``."""

    def __init__(self, head, rest):
        self.head, self.rest = head, rest

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self.head[:len(buffer)] if self.head else self.rest.read1(len(buffer))
        self.head = self.head[len(data):] if self.head else b""
        buffer[:len(data)] = data
        return len(data)

    def close(self):
        self.rest.close()
        super().close()


def decompressed(raw, name):
    """``(stream, compression)``: ``raw`` (a binary stream), decompressed if it starts as gzip, bzip2 or xz
    data (``compression`` is then their name, else None); ``name`` is the file's, for errors."""
    if not hasattr(raw, "peek"):
        raw = io.BufferedReader(raw)
    head = raw.peek(6)[:6]
    if len(head) < 6:  # peek reads once: a pipe's first write can be shorter than xz's magic (gzip sent as
        head = raw.read(6)  # b"\x1f" then the rest was read as text). Read up to it, and give it back.
        raw = io.BufferedReader(_Prepended(head, raw))
    if head.startswith(b"PK\x03\x04"):
        what = _zip_contents(raw.peek(512))
        raw.close()
        raise FastTextError(f"{name}: {what}")
    if head.startswith(b"PAR1") or head.startswith(b"\xd0\xcf\x11\xe0"):
        raw.close()  # a pandas frame saved with to_parquet (a Hugging Face dataset's files), or an Excel 97-2003 .xls
        raise FastTextError(f"{name}: " + (
            "is a Parquet file, not text; convert it to CSV first (pandas: pd.read_parquet(path).to_csv(new_path, "
            "index=False))" if head.startswith(b"PAR1") else
            "is an Excel workbook (.xls), not text; save it as 'CSV UTF-8' in Excel, or convert it (pandas: "
            "pd.read_excel(path).to_csv(new_path, index=False))"))
    for magic, kind in _COMPRESSED:
        if head.startswith(magic):
            opener = {"gzip": gzip.GzipFile, "bzip2": bz2.BZ2File, "xz": lzma.LZMAFile}[kind]
            return opener(fileobj=raw) if kind == "gzip" else opener(raw), kind
    return raw, None


def _zip_contents(head):
    """What a zip archive that starts with ``head`` is, and what to do (the error's text). Its first member's name is in
    its first bytes (a local file header): an Excel workbook (.xlsx) is a zip archive too, whose "unzip it" would give
    XML. Not read directly: a zip's list of members is at its end (no streaming from S3 or a pipe), and Kaggle's
    downloads hold one CSV as often as several (train.csv, test.csv)."""
    size = int.from_bytes(head[26:28], "little")
    first = head[30:30 + size].decode("utf-8", "replace") if len(head) >= 30 + size else ""
    if first == "[Content_Types].xml" or first.startswith(("xl/", "docProps/", "_rels/")):
        return ("is an Excel workbook (.xlsx), not text; save it as 'CSV UTF-8' in Excel, or convert it (pandas: "
                "pd.read_excel(path).to_csv(new_path, index=False))")
    holding = f" (its first file: {first})" if first else ""
    return (f"is a zip archive{holding}; unzip it first and give the file inside it (unzip -l lists them; gzip, bzip2 "
            f"and xz files are read directly)")


def _shell_name(uri):
    """``uri`` as a shell command in an error names it: an S3 object by its file name (copied down first)."""
    return uri.rsplit("/", 1)[-1] if storage.is_s3(uri) else uri


def _not_text(raw, uri, lineno):
    """The error for a line holding NUL bytes: UTF-16 text (with its byte order mark; or without one, a NUL beside
    every ASCII character) and tar archives are named, with how to convert them; else a binary file."""
    where, name = f"{uri}:{lineno}: ", _shell_name(uri)
    if lineno == 1 and raw[257:262] == b"ustar":  # a tar header's magic (a .tar.gz arrives here decompressed)
        return (f"{uri}: is a tar archive; extract the file from it first (tar -xf {name}) and give that file "
                f"(gzip, bzip2 and xz files of one CSV or text file are read directly)")
    bom = lineno == 1 and raw[:2] in (b"\xff\xfe", b"\xfe\xff")
    body = raw[2:] if bom else raw.lstrip(b"\x00")  # (a UTF-16LE line after the first starts with the \n's NUL)
    odd, even = body[1::2].count(0), body[0::2].count(0)
    if bom or (len(body) >= 4 and 2 * max(odd, even) >= len(body) // 2 and min(odd, even) <= max(odd, even) // 8):
        # Excel's "Unicode Text" (tab-separated) and PowerShell's > write UTF-16
        source = "UTF-16" if bom else "UTF-16LE" if odd >= even else "UTF-16BE"
        return (f"{where}not a text file this program reads: it is UTF-16 text{'' if bom else ' (no byte order mark)'}"
                f"; convert it to UTF-8 first, e.g. iconv -f {source} -t UTF-8 {name} > new.csv (Excel's 'Unicode "
                f"Text' is tab-separated: pandas: pd.read_csv(path, encoding='utf-16', sep='\\t').to_csv(new_path, "
                f"index=False))")
    return f"{where}not a text file (contains NUL bytes; UTF-16 text or a binary file?)"


def _not_utf8(raw, uri, lineno, exc):
    """The error for a line that is not UTF-8: a line that reads as Windows-1252 (Excel's plain 'CSV' on Windows, Latin
    letters and curly quotes in one byte each) says how to convert from it."""
    message = (f"{uri}:{lineno}: not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1}; "
               f"re-encode the file as UTF-8")
    try:
        raw.decode("cp1252")
    except UnicodeDecodeError:
        return message + ")"
    return (f"{message}: it reads as Windows-1252, as Excel's 'CSV' and Windows programs write it; save it as 'CSV "
            f"UTF-8' in Excel, or convert it: iconv -f CP1252 -t UTF-8 {_shell_name(uri)} > new.csv, or pandas: "
            f"pd.read_csv(path, encoding='cp1252').to_csv(new_path, index=False))")


# Every reader takes a line whole before parsing it. fastText takes lines of any length; this bound (far
# above any review: CSV fields stop at 16 Mi characters) stops input with no line breaks in it (a binary
# file, /dev/zero, text whose lines end in a lone \r) from being read into memory until it runs out.
MAX_LINE_BYTES = 64 << 20


class _Lines:
    """Decoded physical lines, counted exactly (each line is decoded on its own, so a bad byte is
    reported at its own line, never at the end of a read buffer)."""

    def __init__(self, stream, uri, compression):
        self.stream, self.uri, self.compression, self.lineno = stream, uri, compression, 0

    def __iter__(self):
        while True:
            try:
                raw = self.stream.readline(MAX_LINE_BYTES + 1)
            except _DECOMPRESS_ERRORS as exc:
                if self.compression is None:
                    raise
                raise FastTextError(f"{self.uri}:{self.lineno + 1}: corrupt or truncated {self.compression} data ({exc})") from None
            if not raw:
                return
            self.lineno += 1
            if b"\x00" in raw:
                raise FastTextError(_not_text(raw, self.uri, self.lineno))
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise FastTextError(f"{self.uri}:{self.lineno}: line longer than {MAX_LINE_BYTES >> 20} MiB; expected one "
                                    f"document per line (a binary file, or lines that end in a lone \\r?)")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise FastTextError(_not_utf8(raw, self.uri, self.lineno, exc)) from None
            if self.lineno == 1:
                line = line.lstrip("\ufeff")
                if not line:  # the whole file is a BOM: no line at all, as line_blocks (predict) reads it
                    return
            yield line


# Excel's separator hint: a first line "sep=," (before the header) that Excel writes and reads to pick the separator.
_EXCEL_SEP = re.compile(r"sep=(.)\r?\n?")


def excel_sep_line(line, uri):
    """Is ``line`` (a file's first line, BOM removed) Excel's separator hint? ``sep=,``: True (the caller reads it as a
    blank line, keeping line numbers; it was "cannot detect the format", and predict answered it and the header as
    reviews); another separator: an error that says how to convert the file; else False."""
    match = _EXCEL_SEP.fullmatch(line)
    if match is None:
        return False
    sep = match.group(1)
    if sep != ",":
        what = "tab" if sep == "\t" else repr(sep)
        raise FastTextError(f"{uri}:1: Excel's separator line sep={sep}: the file is {what}-separated; only "
                            f"comma-separated CSV and fastText format are read: convert it (e.g. pandas: "
                            f"pd.read_csv(path, sep={sep!r}, skiprows=1).to_csv(new_path, index=False))")
    return True


def _without_excel_sep(lines, uri):
    """``lines`` with a first line ``sep=,`` (:func:`excel_sep_line`) read as a blank one."""
    for line in lines:
        yield "\n" if lines.lineno == 1 and excel_sep_line(line, uri) else line


def line_blocks(stream, name, compression=None):
    """``(raw, lines)`` a block of the input at a time: ``raw`` the block's bytes (whole lines), ``lines`` its
    lines decoded, without their ``\\n`` (a CRLF's ``\\r`` dropped too), the first line's BOM removed.

    The same checks and errors as :class:`_Lines` (UTF-8, no NUL, at most MAX_LINE_BYTES a line), at the
    speed of bulk decoding: a block is decoded at once, and only a block with a problem is read again
    line by line by :class:`_Lines` itself, which names the line. ``predict`` reads its input with it."""
    block_bytes = min(1 << 20, MAX_LINE_BYTES)  # a line within one block is never over the bound
    lineno, pending, pending_bytes = 0, [], 0  # lines handed out; the start of a line not yet complete

    def fail(data):  # the same error _Lines gives for these bytes (they hold a problem), at their line numbers
        lines = _Lines(io.BytesIO(data), name, None)
        lines.lineno = lineno
        for _ in lines:
            pass
        raise AssertionError(f"{name}: a block failed its checks but not line by line")  # pragma: no cover

    def read_decompressed():
        # A decompressor's read(n) that meets bad data raises and drops the text it had decoded before it,
        # text that _Lines has read line by line: the error named the block's first line, not the line
        # where the data goes bad. So read what decodes piece by piece, and on an error check and count it.
        pieces, size = [], 0
        while size < block_bytes:
            try:
                piece = stream.read1(min(io.DEFAULT_BUFFER_SIZE, block_bytes - size))  # as _Lines' readline reads it
            except _DECOMPRESS_ERRORS as exc:
                data = b"".join(pending + pieces)
                whole = data[:data.rfind(b"\n") + 1]  # _Lines has read these lines, and a partial one past the bound
                partial = data[len(whole):]
                checked = _Lines(io.BytesIO(whole + partial[:MAX_LINE_BYTES + 1] if len(partial) > MAX_LINE_BYTES else whole),
                                 name, None)
                checked.lineno = lineno
                for _ in checked:
                    pass
                raise FastTextError(f"{name}:{checked.lineno + 1}: corrupt or truncated {compression} data ({exc})") from None
            if not piece:
                break
            pieces.append(piece)
            size += len(piece)
        return b"".join(pieces)

    while True:
        chunk = stream.read(block_bytes) if compression is None else read_decompressed()
        if not chunk and not pending:
            return
        cut = chunk.rfind(b"\n") + 1 if chunk else pending_bytes  # at EOF the last line needs no \n
        if b"\x00" in chunk:
            fail(b"".join(pending) + chunk)
        if chunk and cut == 0:  # no line ends in this chunk
            pending.append(chunk)
            pending_bytes += len(chunk)
            if pending_bytes > MAX_LINE_BYTES:
                fail(b"".join(pending))
            continue
        raw = b"".join(pending) + chunk[:cut] if chunk else b"".join(pending)
        rest = chunk[cut:] if chunk else b""
        pending, pending_bytes = ([rest], len(rest)) if rest else ([], 0)
        if raw.find(b"\n") > MAX_LINE_BYTES or (not chunk and len(raw) > MAX_LINE_BYTES):
            fail(raw)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            fail(raw)
        if lineno == 0:
            text = text.lstrip("\ufeff")
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        if lineno == 0 and lines and excel_sep_line(lines[0], name):  # sep=, (Excel): a blank line
            lines[0] = ""
        lineno += len(lines)
        yield raw, [line[:-1] if line.endswith("\r") else line for line in lines]


# Lines that end in a carriage return alone (Excel's "CSV (Macintosh)", classic Mac OS) read as one long line.
_LONE_CR_HINT = ("; its lines seem to end in a lone carriage return (\\r, an old Mac file): convert the line breaks "
                 "to \\n (e.g. tr '\\r' '\\n')")


def _has_lone_cr(line):
    return "\r" in line.rstrip("\r\n")


def _parse_fasttext_line(line, uri, lineno):
    tokens = line.split()
    labels = [t for t in tokens if t.startswith(LABEL_PREFIX)]
    if not labels:
        raise FastTextError(f"{uri}:{lineno}: line has no __label__ prefix")
    if len(labels) > 1:
        raise FastTextError(f"{uri}:{lineno}: line has {len(labels)} labels; only single-label classification is "
                            f"supported{_LONE_CR_HINT if _has_lone_cr(line) else ''}")
    label = labels[0][len(LABEL_PREFIX):]
    if not label:
        raise FastTextError(f"{uri}:{lineno}: empty label after __label__")
    return label, " ".join(t for t in tokens if not t.startswith(LABEL_PREFIX))


def _csv_row_to_example(row, uri, lineno, layout=None):
    """``(label, text)`` of one CSV row. ``layout``: ``(label column, text columns, header's column count)`` from a
    header row that names the class column elsewhere than first (``text,label``); None: the class is the first
    column and every other column is text (Zhang et al.)."""
    if layout is not None:
        label_col, text_cols, width = layout
        if len(row) != width:
            raise FastTextError(f"{uri}:{lineno}: malformed CSV row: {len(row)} column(s) where the header row has "
                                f"{width} (a comma in an unquoted text? quote the field)")
        label = row[label_col].strip()
        if not label:
            raise FastTextError(f"{uri}:{lineno}: CSV row has an empty class column")
        return label, " ".join(row[c] for c in text_cols if row[c]).replace("\\n", " ")
    if len(row) < 2:
        raise FastTextError(f"{uri}:{lineno}: malformed CSV row: expected \"class\",\"text\"[,...] but got {len(row)} column(s)")
    label = row[0].strip()
    if not label:
        raise FastTextError(f"{uri}:{lineno}: CSV row has an empty class column")
    return label, csv_text(row[1:])


def csv_text(columns):
    """The text of a CSV row's text columns, as training reads it: joined with a space, a literal ``\\n``
    (Zhang et al.'s line break) a space."""
    return " ".join(col for col in columns if col).replace("\\n", " ")


_UNQUOTED_CSV = re.compile(r"^\s*-?\d+\s*,")
_UNQUOTED_TSV = re.compile(r"^\s*-?\d+ *\t")  # a class number first, headerless (df.to_csv(sep="\t", header=False))


def labeled_csv_row(row, quoted, classes):
    """Is ``row`` (the first CSV record of an input to label, its fields) a labeled row of a CSV file, the class
    first and the text after it (``"2","the food was great"``; ``"3","title","body"``), rather than a review?

    ``classes``: the model's raw labels and their names (``negative``: a file may write the classes so);
    ``quoted``: the record's first field was quoted. It is when the row has two
    or more columns, the first one of ``classes`` or a quoted whole number (a Zhang et al. set the model was not
    trained on), and, unless quoted, the second starting without a space (a CSV writer puts none after the comma; a
    review such as ``positive, but the battery died`` has one). ``predict`` and the endpoint's ``text/csv`` then
    score the text columns only, as training reads them (:func:`csv_text`), when :func:`labeled_csv_records`
    agrees."""
    if len(row) < 2 or (not quoted and row[1][:1].isspace()):
        return False
    first = row[0].strip()
    return bool(first) and (first in classes or (quoted and _is_int(first)))


def _number_with_comma(row):
    """Does a row start as a number written with a comma does (``1,000 calories``, ``2,5 stars``, ``1,2,3 done``)?"""
    return _is_int(row[0].strip()) and row[1][:1].isdigit()


def _short_header(row):
    """A header row training recognizes (:func:`_header_layout`) whose every column is a name (3 words, 40 characters
    at most), not a review that starts with one (``Class, style and comfort.``). A table's header, which names a
    column among others that it leaves out (``review_id,text,date``), is written as a program writes one, with no
    space after its commas: a first line of short phrases, one a text column's name (``Title, date``; ``Summary,
    great phone``), followed by reviews of as many commas, was taken for a table's header, skipped unanswered and the
    reviews cut to its columns (before tables were read, such a header named text columns only)."""
    return (_looks_like_header(row) and all(len(c.split()) <= 3 and len(c) <= 40 for c in row)
            and not (any(c[:1].isspace() for c in row[1:]) and _table_header(row)))


def _table_header(row):
    """Does the header ``row`` leave a column unread (neither the class nor text: ``review_id,stars,text,date``)?"""
    layout = _header_layout(row)
    return bool(left_out_columns(row, layout if layout is not None else (-1, text_header_columns(row) or [])))


def labeled_csv_start(line, classes):
    """Can an input to label whose first non-blank line is ``line`` hold labeled CSV data: a header row
    (:func:`_short_header`: ``label,text``; pandas' ``,text,label``) or a :func:`labeled_csv_row`? Only a first
    test: :func:`labeled_csv_records` decides from the first records."""
    stripped = line.lstrip("\ufeff").strip()
    try:
        row = next(csv.reader([stripped]), [])  # not strict: a first record that goes on past this line
    except csv.Error:  # a lone \r inside the line: text (predict names such input as one line)
        return False
    return len(row) >= 2 and (_short_header(row) or index_header_start(row)
                              or labeled_csv_row(row, stripped.startswith('"'), classes))


def labeled_csv_records(records, quoted, classes, header=True):
    """Is an input to label labeled CSV, judged by its first records (:data:`HEADER_LOOKAHEAD` + 1 of them, blank
    ones left out; ``quoted``: the first one's first field was quoted)? One line is not enough: reviews start with
    ``1,000 calories``, ``2,5 stars`` (a decimal comma) or ``Class, style and comfort``, and a file read as CSV
    would lose their first words, or be refused at its first line without a comma.

    It is when the first record is a labeled row (:func:`labeled_csv_row`) or, with ``header``, a header row
    (:func:`_short_header`), and at least half of the records after it are of the same kind: labeled rows (their class one of
    ``classes`` or a whole number) or rows as wide as the header; for a labeled row, not every record may read as a
    number with a comma (:func:`_number_with_comma`: ``1,000 calories`` alone is a review; pandas' unquoted
    ``1,3 months of use`` beside other rows is a row). Unquoted, a few rows are too thin a sign: it takes
    :data:`MIN_UNQUOTED_ROWS` labeled rows (``positive,would buy again`` alone, or beside one or two more such
    lines, is a review that opens with a class's name); a quoted class (``"2","great food"``, as Zhang et al. write
    every row) or a header is a sign on its own."""
    records = [r for r in records if r]
    if not records:
        return False
    index = header and index_column(records[0], records[1:])  # pandas' index first (,label,text): left out
    if index:
        records = [r[1:] for r in records]
    first, rest = records[0], records[1:]
    if header and (_short_header(first) or (index and one_column_text_header(first))):
        wide = [r for r in rest if len(r) == len(first)]
        if _table_header(first) and 2 * sum(any(c[:1].isspace() for c in r[1:]) for r in wide) >= len(wide):
            # A table's rows, as a program writes them, put no space after a comma (a text with commas is quoted):
            # reviews with as many commas as a first line of short words (title,date; Good,text,bad) put one after
            # each, as prose does. Read as a table, that line went unanswered and the reviews were cut to a column.
            return False
        return 2 * len(wide) >= len(rest) > 0
    if not labeled_csv_row(first, quoted, classes):
        return False
    labeled = [r for r in rest if len(r) >= 2 and (r[0].strip() in classes or _is_int(r[0].strip()))]
    if 2 * len(labeled) < len(rest):
        return False
    if quoted:
        return True
    return 1 + len(labeled) >= MIN_UNQUOTED_ROWS and not all(_number_with_comma(r) for r in [first] + labeled)


# An unquoted labeled CSV input (``positive,great food``, no header) is recognized from this many labeled rows on.
MIN_UNQUOTED_ROWS = 4
_WORD_CLASS = re.compile(r"[^\W\d_][\w\-]{0,39}")  # positive, very_negative, sci-fi: a class written as a word


def word_class_csv(lines, delimiter=","):
    """Are ``lines`` (a file's first lines) CSV records with the class first, written as a word, unquoted and without
    a header (``positive,the food was great``: ``df.to_csv(path, index=False, header=False)`` of classes named by
    words)? Only a number or a quoted class says "CSV" on the first line alone (:func:`detect_format`); a word
    before a comma may be a header (``sentiment_label,review_body``) or the text itself. So: at least
    :data:`MIN_UNQUOTED_ROWS` records, each a word and some text, whose first values repeat (the first one among
    them, and half of them at most different), as classes do and a header or the openings of reviews do not; and
    whose text starts right after the comma in most of them (more than half), as a CSV writer writes it. Prose puts
    a space after its comma: lines that each open with a word and a comma (``Well, I think ...``, ``So, the food
    ...``, ``However, ...``: 5 to 6 in 100 sentences of the shared NYT editorials and Amazon snippets, every one
    followed by a space) may repeat a few openers as classes do, and were trained on as classes named ``Well`` and
    ``So``; a class written with a space after it (``positive, the text``, by hand) is read with ``--format csv``."""
    try:
        records = [r for r in csv.reader((line.lstrip("\ufeff") for line in lines), delimiter=delimiter) if r]
    except csv.Error:
        return False
    firsts = [r[0].strip() for r in records]
    if delimiter == "\t" and all(len(r) > 2 and _is_int(r[1].strip()) for r in records):
        return False  # a word, then a number in every line (GLUE's CoLA: gj04<TAB>1<TAB><TAB>sentence): a source or
        # an id before the class, not a class before the text
    if len(records) < MIN_UNQUOTED_ROWS or not all(
            _WORD_CLASS.fullmatch(f) and any(c.strip() for c in r[1:]) for r, f in zip(records, firsts)):
        return False
    spaced = sum(r[1][:1].isspace() for r in records)
    return firsts.count(firsts[0]) >= 2 and 2 * len(set(firsts)) <= len(firsts) and 2 * spaced < len(records)


@dataclass(frozen=True)
class Columns:
    """The columns of a CSV file with a header row, chosen by their names (``--label-column``, ``--text-column``;
    the SageMaker job's ``label_column`` and ``text_column``), given where a format is (``fmt``): ``label``, the
    class column's name (None: the one column the header names as a class, :data:`HEADER_LABEL_NAMES`); ``texts``,
    the text columns' names, joined in this order (empty: those the header names as text, and any other that reads
    as prose, :func:`header_text_columns`). Names are matched without case and surrounding spaces."""
    label: object = None
    texts: tuple = ()


def csv_columns(fmt, label=None, texts=None):
    """``fmt`` (a format name), or :class:`Columns` when ``label`` or ``texts`` (a list of names, each may be a
    comma-separated list) name columns; a fastText-format ``fmt`` with them is an error."""
    texts = tuple(n.strip() for t in (texts or ()) for n in str(t).split(",") if n.strip())
    label = str(label).strip() if label is not None and str(label).strip() else None
    if label is None and not texts:
        return fmt
    if fmt == "fasttext":
        raise FastTextError("--label-column and --text-column choose columns of a CSV file with a header row, not "
                            "of fastText format (--format fasttext)")
    return Columns(label, texts)


def chosen_columns(header, choice, rows, uri):
    """``(label column, text columns)`` of ``header`` (a CSV file's first row) for ``choice`` (:class:`Columns`);
    ``rows``: the rows after it (the look-ahead). A name not in the header is an error that lists the header."""
    names = [c.lstrip("\ufeff").strip() for c in header]
    lowered = [n.lower() for n in names]
    shown = ",".join(names)

    def find(name, flag):
        hits = [i for i, n in enumerate(lowered) if n == name.lower()]
        if len(hits) != 1:
            how = "no column" if not hits else f"{len(hits)} columns"
            raise FastTextError(f"{uri}: {flag} {name}: {how} of that name in the header row ({shown})")
        return hits[0]

    text_cols = [find(t, "--text-column") for t in choice.texts]
    twice = next((t for c, t in zip(text_cols, choice.texts) if text_cols.count(c) > 1), None)
    if twice is not None:  # (each record's text was read twice over, its words counted double)
        raise FastTextError(f"{uri}: --text-column {twice}: column {names[text_cols[choice.texts.index(twice)]]!r} is "
                            f"named more than once (name each text column once)")
    if choice.label is not None:
        label_col = find(choice.label, "--label-column")
    else:
        named = [i for i, n in enumerate(lowered) if n in HEADER_LABEL_NAMES and i not in text_cols]
        if len(named) != 1:
            raise FastTextError(f"{uri}: the header row ({shown}) names {'no' if not named else len(named)} class "
                                f"column(s) training knows; name it with --label-column")
        label_col = named[0]
    if label_col in text_cols:
        raise FastTextError(f"{uri}: column {names[label_col]!r} cannot be both the class (--label-column) and text "
                            f"(--text-column)")
    if not text_cols:
        named = [i for i, n in enumerate(lowered) if n in HEADER_TEXT_NAMES and i != label_col]
        text_cols = header_text_columns(header, (label_col, named), rows)[1]
        if not text_cols:
            raise FastTextError(f"{uri}: the header row ({shown}) names no text column training knows beside the class "
                                f"column {names[label_col]!r}; name it with --text-column")
    return label_col, text_cols


def _unread_header(row, later_rows):
    """Does ``row`` (a CSV file's first row, which training could not read as a header) read as one all the same: three
    columns or more, each a short name, none a number, none recurring in its column below (as a class or a repeated
    value would)? A table with more than a class and a text whose class column has a name training does not know
    (``tweet_id,airline_sentiment,...,text``): read as data, its first row was a document and its first column the
    classes (the clothing ids of ``Clothing ID,Age,Title,Review Text,Stars``)."""
    if len(row) < 3 or not later_rows or not _short_names(row) or any(_is_number(c) for c in row):
        return False
    return not any(row[c].strip() in {r[c].strip() for r in later_rows if len(r) > c} for c in range(len(row)))


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


class _UndetectedFormat(FastTextError):
    """:func:`detect_format`'s error when line 1 says nothing (not a tab- or semicolon-separated file, which is
    named as such): :func:`examples_of_lines` then looks at the first lines (:func:`word_class_csv`)."""


def detect_format(first_line, uri):
    stripped = first_line.lstrip("\ufeff").lstrip()
    if json_object_line(stripped):
        return "jsonl"
    if stripped.startswith(LABEL_PREFIX):
        return "fasttext"
    if stripped.startswith('"') or _UNQUOTED_CSV.match(stripped):
        return "csv"
    # (a first line longer than the csv module's 128 KiB field limit, 2<TAB>a long document: its "field larger than
    # field limit" was taken for a lone \r's error, and the TSV refused as an old Mac file)
    allow_long_csv_fields()
    try:
        row = next(csv.reader([stripped]), [])
    except csv.Error:  # a lone \r inside line 1 (class,text\r...: an old Mac file) stopped training in a traceback
        raise FastTextError(f"{uri}:1: cannot detect the format of line 1: it holds a line break inside it"
                            f"{_LONE_CR_HINT}") from None
    if len(row) >= 2 and (_looks_like_header(row) or (_index_named(row) and _short_names(row[1:]))):
        return "csv"  # (a header row; or one whose first column is pandas' index, ,label,text: index_column)
    if any(token.startswith(LABEL_PREFIX) for token in stripped.split()):
        return "fasttext"  # the label after the text ("great food __label__pos"), as fastText reads it
    line = stripped.rstrip("\r\n")
    if "\t" in line:
        # tab-separated (pandas' to_csv(sep="\t"); GLUE's SST-2 sentence<TAB>label; Amazon's review TSVs): read as a
        # CSV is, a header naming its columns or the class first (it was refused, to be converted). A comma before
        # the first tab is a CSV's (positive,a text<TAB>with a tab: word_class_csv), or a text's. Without a header,
        # only a class number first says so on line 1, as for a CSV (_UNQUOTED_CSV), and else classes written as
        # words over the first lines (examples_of_lines: word_class_csv): GLUE's CoLA (gj04<TAB>1<TAB><TAB>sentence,
        # no header) was trained on its sources as the classes, the real class a word of the text, and text<TAB>label
        # lines on each text as a class of its own
        if "," not in line or line.index("\t") < line.index(","):
            cells = next(csv.reader([line], delimiter="\t"), [])
            if (_UNQUOTED_TSV.match(line) or _looks_like_header(cells)
                    or (_index_named(cells) and _short_names(cells[1:]))):
                return "tsv"
            if len(cells) >= 3 and _short_names(cells) and not any(_is_number(c) for c in cells):
                raise _UnknownColumns(f"{uri}: line 1 reads as a TSV header row ({','.join(c.strip() for c in cells)}), "
                                      f"{_unread_columns(cells)}")
        raise _HeaderlessTsv(
            f"{uri}: line 1 looks tab-separated, but it is no header row naming the columns (such as "
            f"sentence<TAB>label) and its lines do not start with a class (a number, or a word that repeats line "
            f"after line): add a header row that names the class and text columns (e.g. pandas: pd.read_csv(path, "
            f"sep='\\t', header=None, quoting=3, names=[...]).to_csv(new_path, index=False)), or give --format tsv "
            f"to read each line's first field as its class")
    cells = line.split(";")
    # a class column before the separator: one word, no comma (text often holds a semicolon)
    if len(cells) >= 2 and cells[0].strip() and not any(c in cells[0] for c in ", "):
        raise FastTextError(
            f"{uri}: line 1 looks semicolon-separated; only comma- and tab-separated files and fastText format are "
            f"read: convert it (e.g. pandas: pd.read_csv(path, sep=';').to_csv(new_path, index=False))")
    json_hint = json_input(stripped.strip(), uri)
    if json_hint:
        raise FastTextError(json_hint)
    if len(row) >= 3 and _short_names(row) and not any(_is_number(c) for c in row):
        # a header of a table with more than a class and a text (tweet_id,airline_sentiment,...,text) whose class
        # column has a name training does not know: the columns can be named
        raise _UnknownColumns(f"{uri}: line 1 reads as a CSV header row ({','.join(c.strip() for c in row)}), "
                              f"{_unread_columns(row)}")
    raise _UndetectedFormat(
        f"{uri}: cannot detect the format of line 1 (expected '__label__X text', a '\"class\",\"text\"' CSV row, or a "
        f"CSV header row naming the class column ({', '.join(sorted(HEADER_LABEL_NAMES)[:6])}, ...) and the text "
        f"column(s) ({', '.join(sorted(HEADER_TEXT_NAMES)[:6])}, ...))"
    )


def tsv_header_line(line):
    """Is ``line`` (an input's first line) the header row of a TSV (``sentence<TAB>label``; ``review<TAB>stars``;
    pandas' index first): a tab before any comma, its fields column names as a CSV header's would be? ``predict``
    then reads the file as training does, one answer per record."""
    line = line.lstrip("\ufeff").strip()
    if "\t" not in line or ("," in line and line.index(",") < line.index("\t")):
        return False
    try:
        row = next(csv.reader([line], delimiter="\t"), [])
    except csv.Error:
        return False
    return len(row) >= 2 and (_short_header(row) or text_header_columns(row) is not None or index_header_start(row))


def json_object_line(line):
    """Is ``line`` one JSON object (a line of JSON Lines: ``{"stars": 5, "text": "..."}``)?"""
    if not line.startswith("{"):
        return False
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False
    except RecursionError:  # nested too deeply for json to read (it was a traceback): _json_objects names its line
        return line.rstrip().endswith("}")


def _json_value(value):
    """A JSON value as the text a CSV field would hold: null is nothing, a whole float is written without its ``.0``
    (the Yelp dataset's ``"stars": 5.0`` is the class ``5``, as its CSV sets number them), a list or an object is
    its JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, dict)):
        value = json.dumps(value, ensure_ascii=False)
    # A lone surrogate escape ("\ud83d" without its other half: a tweet cut inside an emoji) is valid JSON but no
    # character: it stopped training and predict in a UnicodeEncodeError traceback. It is U+FFFD, the replacement
    # character, as a UTF-8 decoder makes of half a character (a pair, "\ud83d\ude00", is read as its one emoji)
    return _LONE_SURROGATE.sub("\ufffd", str(value))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_objects(lines, uri):
    """``(line number, object)`` of each non-blank line of JSON Lines; a line that is no JSON object is an error at
    its line."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise FastTextError(f"{uri}:{number}: not a JSON object ({getattr(exc, 'msg', exc)} at column "
                                f"{getattr(exc, 'colno', '?')}); JSON Lines hold one object per line") from None
        except RecursionError:  # ([[[[... thousands deep: json's recursive decoder gives up; it was a traceback)
            raise FastTextError(f"{uri}:{number}: not a JSON object json can read (nested too deeply); JSON Lines hold "
                                f"one object per line") from None
        if not isinstance(value, dict):
            raise FastTextError(f"{uri}:{number}: a JSON {type(value).__name__}, not an object; JSON Lines hold one "
                                f"object per line")
        yield number, value


def _json_keys(objects):
    """The keys of JSON Lines' first ``objects`` (``(line number, object)`` pairs: the look-ahead), each once, in the
    order they first come: a record may lack a key that later ones have (Amazon's reviews without ``reviewText``,
    ``style`` or ``vote``). Read from the first object only, a text key it lacked was never read: a file whose first
    review had no ``reviewText`` was trained on its summaries alone."""
    return list(dict.fromkeys(str(k) for _, o in objects for k in o))


def _json_lookahead(lines, uri):
    """``(objects, ahead, keys, rows)`` of JSON Lines: the ``(line number, object)`` iterator, the look-ahead taken
    from it (the first :data:`HEADER_LOOKAHEAD` + 1 objects), their keys (:func:`_json_keys`) and the look-ahead's
    values under those keys as a CSV's rows (:func:`_json_value`), on which the header rules decide."""
    objects = _json_objects(lines, uri)
    ahead = list(itertools.islice(objects, HEADER_LOOKAHEAD + 1))
    keys = _json_keys(ahead)
    return objects, ahead, keys, [[_json_value(o.get(k)) for k in keys] for _, o in ahead]


def _json_text(obj, text_keys):
    """An object's text: its ``text_keys``' values joined (a missing or null one is nothing)."""
    return " ".join(t for t in (_json_value(obj.get(k)) for k in text_keys) if t)


def _read_from_note(uri, kind, names, text_cols, left, label_col=None):
    """The line that says which of a file's ``names`` (``kind``: a CSV's "column", JSON Lines' "key") are read as
    the class and the text, and which are left out."""
    def shown(cols):
        return ", ".join(repr(names[c]) for c in cols)

    if label_col is None:
        return f"{uri}: the text is {kind} {shown(text_cols)}; left out: {shown(left)}"
    return (f"{uri}: the class is {kind} {names[label_col]!r}, the text {shown(text_cols)}; left out: {shown(left)} "
            f"(--text-column NAME reads a {kind} as text)")


def jsonl_examples(lines, uri, choice=None, note=None, found=None):
    """``(label, text)`` of JSON Lines (``df.to_json(path, orient="records", lines=True)``; the Yelp dataset's
    ``review.json``: ``{"review_id": ..., "stars": 5.0, ..., "text": ..., "date": ...}`` a line). The keys of
    the first objects (:func:`_json_keys`) are read as a CSV header's names (:func:`_header_layout`): the class key
    (``stars``), the text keys (``text``, ``reviewText``, ``summary``, ...) and any other of prose
    (:func:`header_text_columns`), joined in the order they first come; the other keys are left out, and ``note`` is told which. ``choice``
    (:class:`Columns`): the keys named by ``--label-column`` / ``--text-column``. An object without the class key,
    or with an empty class, is an error at its line; a missing or null text key is empty text."""
    found = {} if found is None else found
    objects, ahead, keys, rows = _json_lookahead(lines, uri)
    if not ahead:
        raise FastTextError(f"{uri}: file is empty")
    if choice is not None:
        label_col, text_cols = chosen_columns(keys, choice, rows, uri)
    else:
        layout = _header_layout(keys)
        # (a CSV header's first column is the class unnamed when the others are named as text, as Zhang et al.'s
        # "Class Index" is; an object's first key is where its writer put it: {"review_id": ..., "text": ...}, reviews
        # to label, was trained on its ids as classes, one class per review)
        if layout is not None and keys[layout[0]].strip().lower() not in HEADER_LABEL_NAMES:
            layout = None
        if layout is None or len(keys) < 2:
            raise FastTextError(
                f"{uri}: its objects' keys ({','.join(keys)}) name no class key training knows "
                f"({', '.join(sorted(HEADER_LABEL_NAMES)[:8])}, ...) beside a text key "
                f"({', '.join(sorted(HEADER_TEXT_NAMES)[:6])}, ...); say which to read: --label-column NAME "
                f"--text-column NAME (the SageMaker job's label_column and text_column)")
        label_col = layout[0]
        named = [i for i, k in enumerate(keys) if k.strip().lower() in HEADER_TEXT_NAMES and i != label_col]
        # (a class key first reads every other column of a CSV as text, as Zhang et al.'s do; an object's other keys
        # are ids and dates as often: only the named text keys, and prose)
        text_cols = header_text_columns(keys, (label_col, named), rows)[1] or (layout[1] if len(layout[1]) == 1 else [])
        if not text_cols:
            raise FastTextError(f"{uri}: its objects' keys ({','.join(keys)}) name no text key training knows beside "
                                f"the class key {keys[label_col]!r}; name it with --text-column")
    if choice is None or not choice.texts:  # (text keys the user named are read as named)
        # as a CSV's columns are checked: a labels file ({"review_id": ..., "stars": 5.0}, its texts elsewhere) had
        # its one key beside the class read as the text, and was trained on its ids as words
        _check_text_columns(rows, (label_col, text_cols), uri, keys)
    label_key, text_keys = keys[label_col], [keys[c] for c in text_cols]
    left = left_out_columns(keys, (label_col, text_cols))
    if left and note is not None:
        note(_read_from_note(uri, "key", keys, text_cols, left, label_col))
    found["class_from"] = f"key {label_key!r}"
    for number, obj in _chain(ahead, objects):
        if label_key not in obj:
            raise FastTextError(f"{uri}:{number}: this object has no {label_key!r} key (the class, as the first "
                                f"object's keys say)")
        label = _json_value(obj[label_key]).strip()
        if not label:
            raise FastTextError(f"{uri}:{number}: this object's class ({label_key!r}) is empty")
        yield label, _json_text(obj, text_keys)


def jsonl_texts(lines, uri, note=None):
    """The text of each object of JSON Lines to label (``predict``): its text keys, as :func:`jsonl_examples` reads
    them (``text``, ``review``, ..., and the endpoint's ``source``; any other of prose), a class key among them not
    scored; the other keys are left out, and ``note`` is told which. A line that is no JSON object, or first objects
    (:func:`_json_keys`) without a text key, is an error."""
    objects, ahead, keys, rows = _json_lookahead(lines, uri)
    if not ahead:
        return
    lowered = [k.strip().lower() for k in keys]
    if "source" in lowered:  # BlazingText's request lines: "source" is the review, as the endpoint reads it
        text_cols = [lowered.index("source")]
    else:
        classes = [i for i, k in enumerate(lowered) if k in HEADER_LABEL_NAMES]
        named = [i for i, k in enumerate(lowered) if k in HEADER_TEXT_NAMES and i not in classes]
        text_cols = [c for c in header_text_columns(keys, (-1, named), rows)[1] if c not in classes]
    if not text_cols:
        raise FastTextError(f"{uri}: its objects' keys ({','.join(keys)}) name no text key "
                            f"({', '.join(sorted(HEADER_TEXT_NAMES)[:6])}, ..., source); rename the review's key to "
                            f"text, or give --format text to answer each line as it is")
    left = [c for c in range(len(keys)) if c not in text_cols]
    if left and note is not None:
        note(_read_from_note(uri, "key", keys, text_cols, left))
    text_keys = [keys[c] for c in text_cols]
    for _, obj in _chain(ahead, objects):
        yield _json_text(obj, text_keys)


def json_input(line, uri, predicting=False):
    """The error for an input whose first line (``line``, stripped) is JSON that is not read, else None: a JSON array
    (``df.to_json(path, orient="records")``, on one line or indented) or an object over several lines (JSON Lines,
    one object a line, are read: :func:`json_object_line` comes first). Training was "cannot detect the format", and
    predict answered each line, keys and braces as words: the error shows pandas' conversion, with the object's own
    keys when they name a class and a text column."""
    if line not in ("[", "{"):
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):  # (nested too deeply for json: a traceback in predict; not read as JSON)
            return None
        value = value[0] if isinstance(value, list) and value else value
        if not isinstance(value, dict):
            return None
    keys = [k for k in (value if line not in ("[", "{") else {}) if isinstance(k, str)]
    label = next((k for k in keys if k.lower() in HEADER_LABEL_NAMES), "label")
    text = next((k for k in keys if k.lower() in HEADER_TEXT_NAMES), "text")
    read = f"pd.read_json(path{', lines=True' if line.startswith('{') else ''})"
    if predicting:
        return (f"{uri}: is JSON, not one review per line; convert it (e.g. pandas: {read}[[{text!r}]]"
                f".to_csv(new_path, index=False)), or give --format text to answer each line as it is")
    return (f"{uri}: is JSON, which is not read as labeled data (CSV and fastText format are); convert it to CSV (e.g. "
            f"pandas: {read}[[{label!r}, {text!r}]].to_csv(new_path, index=False))")


# A header row names its columns: the class column is called one of these (or the text columns are).
HEADER_LABEL_NAMES = {"label", "labels", "class", "classes", "class_index", "category", "sentiment", "polarity",
                      "rating", "stars", "target", "y", "score",
                      "overall", "star_rating"}  # Amazon's reviews as published: McAuley et al.'s JSON, the US TSV
HEADER_TEXT_NAMES = {"text", "texts", "review", "review_text", "title", "body", "content", "description", "sentence",
                     "comment", "document", "question", "answer", "abstract", "headline", "summary",
                     "reviewtext", "review_body", "review text", "tweet",  # Amazon's, Kaggle's clothing reviews
                     "comment_text",  # Jigsaw's toxic comments and Civil Comments (id,comment_text,toxic,...)
                     "review_headline",  # Amazon's US reviews (TSV: ...,star_rating,...,review_headline,review_body)
                     "phrase"}  # Kaggle's Rotten Tomatoes phrases (PhraseId,SentenceId,Phrase,Sentiment)
HEADER_LOOKAHEAD = 50


INDEX_NAMES = {"", "id", "index", "unnamed: 0"}  # a first column that numbers the rows (pandas' df.to_csv())
# The header name pandas writes over its index column (df.to_csv() without index=False), and the one it gives that
# column when it reads such a file back (pd.read_csv(path).to_csv(new_path, index=False)).
PANDAS_INDEX_NAMES = ("", "unnamed: 0")
_ROW_NUMBER = re.compile(r"[0-9]+")


def _index_named(row):
    return len(row) >= 2 and row[0].lstrip("\ufeff").strip().lower() in PANDAS_INDEX_NAMES


def index_column(header, later_rows):
    """Is the first column of a CSV file with the header row ``header`` pandas' index (``df.to_csv(path)`` without
    ``index=False``: ``,label,text`` over ``0,2,great food``, ``1,1,cold soup``, ...)? It is when the header names it
    as pandas does (empty, or ``Unnamed: 0``) and over ``later_rows`` (the records after the header, at most
    :data:`HEADER_LOOKAHEAD` of them are looked at; blank ones left out; at least two) it holds non-negative whole
    numbers that

    * go up strictly down the file (0, 1, 2, ...; after a filter such as ``df[df.n > 3]``, 1, 4, 9, ...);
    * or, over :data:`SHUFFLED_INDEX_MIN_ROWS` rows or more, are all different in any order (``df.sample(frac=1)``
      shuffled before it was saved: 83, 53, 70, ...; ``train_test_split``'s part, its old row numbers as they came);
    * or go up in runs that start again (``pd.concat([a, b]).to_csv(path)`` numbers ``b``'s rows from 0 again: 0, 1,
      ..., 34, 0, 1, ...): never the same number twice in a row, down at most once in :data:`INDEX_RUN_ROWS` steps,
      and :data:`SHUFFLED_INDEX_MIN_ROWS` different numbers at least;
    * or, whatever their order, repeats and count, when the rest of the header names a class column itself
      (``,sentiment,tweet``, three columns or more, :func:`_class_named_after`): that column is the class, so the
      unnamed one is not (a concatenation shuffled after it, ``pd.concat([a, b]).sample(frac=1)``: 83, 12, 83, ...;
      a small shuffled file, ``,label,text`` over 10 rows of 7, 2, 9, ...).

    The class column of ``Series.to_csv()`` (``,text`` over the classes 2, 2, 1, ...: the series' index; two columns,
    the second named as text) repeats its values, often one after the other, and goes down as often as up: it stays
    the class, as do a few classes each once over fewer than :data:`SHUFFLED_INDEX_MIN_ROWS` rows (2, 1, 3, 5, 4
    stars). Training, evaluate, predict and the endpoint's ``header=present`` leave the index column out
    (:func:`index_rows`) and read the rest as usual."""
    if not _index_named(header):
        return False
    values = [r[0].strip() for r in later_rows if r][:HEADER_LOOKAHEAD]
    if len(values) < 2 or not all(_ROW_NUMBER.fullmatch(v) for v in values):
        return False
    numbers = [int(v) for v in values]
    if all(a < b for a, b in zip(numbers, numbers[1:])):
        return True
    distinct = len(set(numbers))
    if len(numbers) >= SHUFFLED_INDEX_MIN_ROWS and distinct == len(numbers):
        return True
    if distinct >= SHUFFLED_INDEX_MIN_ROWS and _counts_up_in_runs(numbers):
        return True
    return _class_named_after(header)


def _counts_up_in_runs(numbers, restarting_at_0=False):
    """Do ``numbers`` go up in runs that start again, as pandas numbers a concatenation's rows (0, 1, ..., 34, 0, 1,
    ...): never the same twice in a row, down at most once in :data:`INDEX_RUN_ROWS` steps? ``restarting_at_0``: and
    down at least once, each time to 0."""
    steps = [b - a for a, b in zip(numbers, numbers[1:])]
    downs = [b for b, d in zip(numbers[1:], steps) if d < 0]
    if 0 in steps or INDEX_RUN_ROWS * len(downs) > len(steps):
        return False
    return not restarting_at_0 or (bool(downs) and not any(downs))


# A shuffled index (df.sample(frac=1).to_csv(path)) is told from Series.to_csv()'s class column (,text over 2, 1, 2,
# ...) by its numbers being all different, over this many rows at least (and over all of the look-ahead's, up to
# HEADER_LOOKAHEAD, when there are more). Classes cannot all differ over 20 rows unless there are 20 classes or more
# among them (the Zhang et al. sets have 2 to 14, sentiment sets 2 to 5); a set of K classes, equally frequent, is all
# different over m rows with a chance below exp(-m(m-1)/2K): 1e-5 for 100 classes over the 50 rows of the
# look-ahead (a file of 20 to 50 rows has less than one document per class there: nothing to learn). With fewer
# rows, a class column of a few classes is all different too often (5 rows of 2, 1, 3, 5, 4 stars), and so is a
# permutation of 0..n-1 (a 3-row smoke test of the classes 0, 1, 2, one each, shuffled: 2, 0, 1): unless the header
# names a class column of its own (:func:`_class_named_after`), the numbers must count up. The same bound, as a number
# of different values, tells a concatenation's runs (0..14, 0..34) from classes dealt out in turn (1, 2, 3, 4, 5, 1,
# 2, ...: as many values as classes, fewer than 20).
SHUFFLED_INDEX_MIN_ROWS = 20
# pd.concat's index goes down where each frame starts (to 0 again); classes in random order go down at every other step
# or so, and repeat one after the other (a class of K, at each step, with a chance of 1/K)
INDEX_RUN_ROWS = 10


def _class_named_after(header):
    """Does ``header`` (a header row whose first name is pandas' index, empty or ``Unnamed: 0``) have three columns
    or more, exactly one of the others named as a class column (``,sentiment,tweet``; :data:`HEADER_LABEL_NAMES`)?
    Then the first column is not the class: a DataFrame's index, its row numbers in whatever order pandas left them.
    (``Series.to_csv()`` writes two columns, its index, which may be the classes, and its values.)"""
    names = [c.strip().lower() for c in header[1:]]
    return len(header) >= 3 and sum(n in HEADER_LABEL_NAMES for n in names) == 1


def index_rows(rows, where):
    """The ``(row, position)`` pairs of ``rows`` (the records after the header of a file whose first column is
    pandas' index, :func:`index_column`) without that column; blank records (``[]``) as they are. Each row's index
    must be a non-negative whole number, as pandas writes a row number: one that is not (the look-ahead was misled)
    is an error at ``where(position)``. Past the look-ahead, which decided that the column is the index, the numbers
    may come in any order and repeat: ``pd.concat([a, b]).to_csv(path)`` numbers ``b``'s rows from 0 again, and a
    frame sorted or shuffled after a concat mixes them; they are row numbers all the same, and only left out."""
    for row, position in rows:
        if not row:
            yield row, position
            continue
        value = row[0].strip()
        if not _ROW_NUMBER.fullmatch(value):
            raise FastTextError(f"{where(position)}: the first column was read as pandas' index column (unnamed in the "
                                f"header, the rows before numbered 0, 1, 2, ... or so), but this row's is {value!r}, "
                                f"not a row number; write the file without it (df.to_csv(path, index=False)), or give "
                                f"the column a name")
        yield row[1:], position


# Labels that are each a different whole number, over this many documents or more, are row numbers, not classes
# (distinct_row_numbers). Below it a few documents with numbered classes of one document each may be genuine.
ROW_NUMBER_LABELS = 20


def distinct_row_numbers(values):
    """Are ``values`` (a file's classes, or the labels of its documents) each a different whole number, at least
    :data:`ROW_NUMBER_LABELS` of them: row numbers read as classes? pandas' index written without a header
    (``df.to_csv(path, header=False)``: ``0,positive,the text``) reads so, class first, the real class a word of the
    text: training refuses such data (train.py), evaluate says what its unknown labels are (predict.class_ids)."""
    values = list(values)
    return (len(values) >= ROW_NUMBER_LABELS and len(set(values)) == len(values)
            and all(_ROW_NUMBER.fullmatch(v) for v in values))


def restarted_row_numbers(labels, texts):
    """Are ``labels`` (a file's, in file order) pandas' index of a concatenation written without a header
    (``pd.concat([a, b]).to_csv(path, header=False)``: ``0,positive,the text``, ..., ``0,negative,...`` again), read
    as the classes? Every one a whole number, :data:`ROW_NUMBER_LABELS` different ones or more, counting up in runs
    that start again at 0, as each frame's numbers do (never the same twice in a row, down at most once in
    :data:`INDEX_RUN_ROWS` steps, at least once, and each time to 0), and the real class, written after them, the first word of nearly
    every one of ``texts`` (the first documents' texts): those words take few values (at most one in
    :data:`INDEX_RUN_ROWS` of the texts), where the openings of real texts under classes numbered in turn vary."""
    if not all(_ROW_NUMBER.fullmatch(v) for v in labels) or len(set(labels)) < ROW_NUMBER_LABELS:
        return False
    if not _counts_up_in_runs([int(v) for v in labels], restarting_at_0=True):
        return False
    firsts = [t.split(None, 1)[0] if t.split() else "" for t in texts]
    return bool(firsts) and INDEX_RUN_ROWS * len(set(firsts)) <= len(firsts)


def headless_index_rows(records, classes):
    """Do ``records`` (a CSV request's, no header among them: a Batch Transform mini-batch after the first of a file
    written with pandas' index, ``,label,text``, whose header only the first mini-batch held) begin with pandas' index
    column? Every one (blank ones left out) must have two fields or more, the first a row number; and either every one
    has three or more, the second one of the model's ``classes`` (``8123,2,great food``: the index, the class, the
    text; a row number then a class in every record is no review, and no class-first row either: its text would be
    a class), or :func:`index_column` would take the first column for the index under an empty header that names no
    class column (counting up; all different, :data:`SHUFFLED_INDEX_MIN_ROWS` or more; or a concatenation's runs:
    ``,review``'s ``8123,great food``), not
    every first field is one of ``classes`` (``1,great`` and ``2,cold`` for a model of classes 1 and 2 are labeled
    rows, as before), and not every record reads as a number written with a comma (:func:`_number_with_comma`:
    ``3,000 calories`` and ``5,5 stars`` are reviews)."""
    rows = [r for r in records if r]
    if not rows or any(len(r) < 2 or not _ROW_NUMBER.fullmatch(r[0].strip()) for r in rows):
        return False
    if all(len(r) >= 3 and r[1].strip() in classes for r in rows):
        return True
    return (not all(r[0].strip() in classes for r in rows) and not all(_number_with_comma(r) for r in rows)
            and index_column([""] * len(rows[0]), rows))  # (no header: none names a class column)


def index_note(uri, header):
    """The note that says a file's first column was left out as pandas' index (:func:`index_column`)."""
    name = header[0].lstrip("\ufeff").strip()
    return (f"{uri}: its first column ({'unnamed' if not name else repr(name)} in the header, row numbers "
            f"below it) is a row index (pandas' df.to_csv() without index=False, R's write.csv row names): left "
            f"out; the rest is read as the "
            f"columns {','.join(header[1:])}")


def index_header_start(row):
    """Can ``row`` (the first record of a file) be a header whose first column is pandas' index, the others column
    names (:func:`_short_header`, or one text column: ``,review``)? Only a first test: :func:`index_column` decides
    from the rows after it."""
    rest = row[1:]
    return _index_named(row) and (_short_header(rest) or one_column_text_header(rest))


def _short_names(row):
    """Is every field of ``row`` a column name (not empty; 3 words, 40 characters at most)?"""
    return bool(row) and all(c.strip() and len(c.split()) <= 3 and len(c) <= 40 for c in row)


def _header_layout(row):
    """The columns a header row names: ``(label column, text columns)``, or None when ``row`` is no header.

    The class column first (``label,text``; ``class,title,body``), named or not when the others are text columns
    (``"Class Index","Title","Description"``): every other column is text, as in Zhang et al. data. Or the class
    column elsewhere, named (``text,label``, ``review,sentiment``; pandas' ``,text,label`` with its index column
    first), beside named text columns only, or beside one column of any name (``tweet,sentiment``): the index column
    is left out. A header whose every column is named as a text column (``title,body``) names no class column: None
    (:func:`text_header_columns`)."""
    names = [c.strip().lower() for c in row]
    if len(names) < 2 or _all_text_names(row):
        return None
    texts = [n for n in names[1:] if n]
    if names[0] in HEADER_LABEL_NAMES or (bool(texts) and all(n in HEADER_TEXT_NAMES for n in texts)):
        # The class first, and named text columns beside other named columns: a table, as below (Amazon's reviews
        # of 2018 as pandas writes their JSON, overall,verified,reviewTime,reviewerID,asin,...,reviewText,summary;
        # Sentiment140 with its header, target,ids,date,flag,user,text). Read as Zhang's class-then-text, every
        # column after the class was text: its ids, dates and user names were trained on as words (or, with a
        # column of whole-number ids among them, the file was refused). A class first beside no named text column
        # (class,question_title,question_content,best_answer) is Zhang's as before.
        named_texts = [i for i in range(1, len(names)) if names[i] in HEADER_TEXT_NAMES]
        if named_texts and len(named_texts) < len(names) - 1 and _short_names(row[1:]):
            return 0, named_texts
        return 0, list(range(1, len(names)))
    label_cols = [i for i, n in enumerate(names) if n in HEADER_LABEL_NAMES]
    if len(label_cols) != 1:
        return None
    others = [i for i in range(len(names)) if i != label_cols[0] and not (i == 0 and names[0] in INDEX_NAMES)]
    if others and all(names[i] in HEADER_TEXT_NAMES for i in others):
        return label_cols[0], others
    # One column beside the named class (and pandas' index) can only be the text, whatever its name: tweet,sentiment
    # and reviewText,label were "cannot detect the format" (the class first, sentiment,tweet, always read so).
    if len(others) == 1 and _short_names([row[others[0]]]):
        return label_cols[0], others
    # A table as real data comes, with more than a class and a text: Yelp's reviews as a CSV (review_id,user_id,
    # business_id,stars,useful,funny,cool,text,date), Amazon's (reviewerID,asin,...,reviewText,overall,summary,...),
    # Kaggle's clothing reviews (,Clothing ID,Age,Title,Review Text,Rating,...). The named class and the named text
    # columns are read; the other columns are left out (ids, counts and dates would be trained on as words), unless
    # their values read as prose (:func:`header_text_columns`, given the rows). They were "cannot detect the format",
    # or, after an index column, the first named column taken for the class (945 "classes" of clothing ids).
    named_texts = [i for i in others if names[i] in HEADER_TEXT_NAMES]
    if named_texts and _short_names([row[i] for i in others]):
        return label_cols[0], named_texts
    return None


def header_text_columns(header, layout, rows):
    """The text columns of a header's ``layout`` (:func:`_header_layout`: ``(label column, text columns)``) over its
    data ``rows`` (the look-ahead): its named text columns, and any other column left out of it whose values read as
    prose (:func:`_prose`: a column of answers, ``best_answer``, beside a ``title``), in the header's order. A
    layout that reads every column but the class (and pandas' index) is returned as it is."""
    label_col, text_cols = layout
    left = [c for c in left_out_columns(header, layout) if _prose([r[c] for r in rows if c < len(r)])]
    return label_col, sorted(text_cols + left)


def left_out_columns(header, layout):
    """The columns of ``header`` that its ``layout`` neither reads as the class nor as text (``id``, ``date``, ...;
    not a first column named as pandas names its index, which goes unread as it always has)."""
    label_col, text_cols = layout
    return [c for c in range(len(header)) if c != label_col and c not in text_cols
            and not (c == 0 and _index_named(header))]


def _prose(values):
    """Do a column's ``values`` read as prose: four words or more in most of them, nearly all different (a time zone
    or a department name repeats), most words holding a letter (dates and counts do not)?"""
    values = [v.strip() for v in values if v.strip()]
    if not values:
        return False
    lengths = sorted(len(v.split()) for v in values)
    words = [w for v in values for w in v.split()]
    return (lengths[len(lengths) // 2] >= 4 and len(set(values)) >= 0.8 * len(values)
            and sum(any(ch.isalpha() for ch in w) for w in words) >= 0.6 * len(words))


def text_header_columns(row, min_columns=2):
    """The columns of a header row that names no class column, only text columns (``title,body``,
    ``review,comment``, ``summary,text``: its first column is itself named as a text column), all of them; or, in a
    table of short column names none of which is a class's (``review_id,user_id,text,date``), its named text
    columns; else None. ``predict`` and the endpoint answer each record's columns joined (:func:`csv_text`); training refuses
    such a file (its titles were read as classes). ``min_columns``: 1 for :func:`one_column_text_header`."""
    names = [c.lstrip("\ufeff").strip().lower() for c in row]
    if len(names) < min_columns:
        return None
    if _all_text_names(row):
        return list(range(len(names)))
    # A table of reviews with more columns and no class (Yelp's export without its stars: review_id,user_id,text,
    # date): its named text columns (and, given its rows, any of prose: table_text_columns). Its header was answered
    # as a review, and each record's ids and dates as words of its review.
    if (min_columns >= 2 and _short_names(row) and not any(n in HEADER_LABEL_NAMES for n in names)
            and not any(_is_number(c) for c in row) and _header_layout(row) is None):  # (Class Index,Title,...)
        return [i for i, n in enumerate(names) if n in HEADER_TEXT_NAMES] or None
    return None


def table_text_columns(header, rows):
    """The text columns of a header of text columns (:func:`text_header_columns`) over its data ``rows`` (the
    look-ahead): with the other columns of a table, any of prose among them too (:func:`header_text_columns`)."""
    if len(header) < 2:  # (one text column: one_column_text_header)
        return [0]
    return header_text_columns(header, (-1, text_header_columns(header)), rows)[1]


def table_texts(records, header, columns, where):
    """The text of each of ``records`` (``(record, position)`` pairs, a file's after its ``header`` of text columns:
    :func:`table_text_columns`' ``columns``): every column joined when they are all text, else the text columns of a
    record as wide as the header (another width is an error at ``where(position)``); a blank record ``""``."""
    whole = columns == list(range(len(header)))
    for record, position in records:
        if not record:
            yield ""
        elif len(header) == 1:  # one text column: a record of several fields is a review's unquoted commas (the
            # endpoint's answer; joined with spaces, its commas were lost); a literal \n is a line break, as csv_text
            # and training read it (joined with commas alone, "great\nfood" became one unknown word)
            yield ",".join(record).replace("\\n", " ")
        elif whole:
            yield csv_text(record)
        elif len(record) != len(header):
            raise FastTextError(f"{where(position)}: malformed CSV row: {len(record)} column(s) where the header row "
                                f"has {len(header)} (a comma in an unquoted text? quote the field)")
        else:
            yield csv_text([record[c] for c in columns])


def _all_text_names(row):
    """Is every column of ``row`` named as a text column (``title,body``)?"""
    return all(n in HEADER_TEXT_NAMES and n not in HEADER_LABEL_NAMES
               for n in (c.lstrip("\ufeff").strip().lower() for c in row))


def _looks_like_header(row):
    return _header_layout(row) is not None or text_header_columns(row) is not None


def _header_columns(first, later_rows):
    """``(label column, text columns)`` when ``first`` (the first CSV row) is a header, else None.
    ``later_rows``: the next rows.

    It is a header when its class never occurs again in the look-ahead and either its columns carry
    column names, or its class is not a number while every later class is (then the class is the
    first column and the others are text).
    """
    if len(first) >= 2 and [c.strip() for c in first] == [str(i) for i in range(len(first))] and later_rows:
        # pandas' own column names, 0,1,...: pd.DataFrame(pairs).to_csv(path, index=False) of (class, text) pairs;
        # read as data, the header was a document of the class "0" and the text "1" (a class of its own, for words)
        return 0, list(range(1, len(first)))
    layout = _header_layout(first)
    col = layout[0] if layout else 0
    later = {r[col].strip() for r in later_rows if len(r) > col}
    label = first[col].strip()
    if label in later:
        return None  # a real class that happens to be called "label"
    if layout and any(first[c].strip() and first[c].strip() in {r[c].strip() for r in later_rows if len(r) > c}
                      for c in layout[1]):
        # a text column's "name" that recurs below it is a value, not a name: a data row whose text is a word such
        # training takes for a class column's name ("1","Rating"; positive,Score: the class beside it, "1", recurs
        # in the rows after it), read as a header that put the class in the text's column
        return None
    if layout:
        return header_text_columns(first, layout, later_rows)
    if (len(later) >= 2 and not _is_int(label) and all(_is_int(c) for c in later)
            and not _numbered_rows(later, later_rows)):
        return 0, list(range(1, len(first)))
    return None


def _ids_column(values):
    """Are ``values`` (a column's, over the look-ahead) ids: :data:`METADATA_MIN_ROWS` or more, one token each,
    nearly all different and nearly all holding a digit (``r25268c1b``, Yelp's ``Jk8nD-ZmV...``)? Classes repeat,
    and many classes named as words (intents: ``book_flight``) hold no digit."""
    values = [v.strip() for v in values if v.strip()]
    return (len(values) >= METADATA_MIN_ROWS and all(len(v.split()) == 1 for v in values)
            and len(set(values)) >= 0.9 * len(values)
            and sum(any(ch.isdigit() for ch in v) for v in values) >= 0.9 * len(values))


def _numbered_rows(values, rows):
    """Are ``values`` (the different values of a first column below a row that may be its header) so many, over
    ``rows`` (:data:`METADATA_MIN_ROWS` or more), that they number rows or items (ids) rather than classes? A class
    column repeats its values."""
    return len(rows) >= METADATA_MIN_ROWS and len(values) > 0.8 * len(rows)


def one_column_text_header(row):
    """Is ``row`` a header of one text column (``review``: pandas' ``df[["review"]].to_csv(index=False)``, the usual
    shape of reviews to label; quoted or not)? ``predict`` and the endpoint skip it and answer each record's field:
    the header was answered as a review, every answer after it one off."""
    return len(row) == 1 and text_header_columns(row, min_columns=1) is not None


def _text_header(first, later_rows, predicting=False):
    """Is ``first`` (the first CSV row) a header of text columns only (:func:`text_header_columns`)? Not when its
    first value occurs again in the look-ahead's first column (``later_rows``), as :func:`_header_columns`."""
    return ((text_header_columns(first) is not None or (predicting and one_column_text_header(first)))
            and first[0].strip() not in {r[0].strip() for r in later_rows if r})


ONE_HOT_MIN_COLUMNS = 3


def _one_hot_hint(header, rows):
    """A note for a table whose classes are one-hot columns (GoEmotions' admiration,...,neutral; Jigsaw's toxic,
    severe_toxic,...): :data:`ONE_HOT_MIN_COLUMNS` or more columns of only 0 and 1 (or true and false) over ``rows``.
    "if one of them is the class, name it" said nothing of what naming one does: a yes/no model of that column."""
    flags = [header[c].strip() for c in range(len(header))
             if rows and all(len(r) > c and r[c].strip().lower() in ("0", "1", "true", "false") for r in rows)]
    if len(flags) < ONE_HOT_MIN_COLUMNS:
        return ""
    shown = ", ".join(flags[:4]) + (", ..." if len(flags) > 4 else "")
    return (f" (its {len(flags)} columns of 0 and 1, {shown}, read as one-hot classes: --label-column NAME trains a "
            f"yes/no model of that one; for one model of them all, write them as one column of class names first)")


def _unread_columns(row):
    """What a header row training cannot read names (``but it names ...``), and the flags that read it. It said "no
    class column training knows" of headers that name one and no text column (PhraseId,SentenceId,Phrase,Sentiment)
    or name two (text,sentiment,stars): the user was sent looking for a name that was there."""
    names = [c.lstrip("\ufeff").strip() for c in row]
    classes = [n for n in names if n.lower() in HEADER_LABEL_NAMES]
    texts = f"({', '.join(sorted(HEADER_TEXT_NAMES)[:6])}, ...)"
    if len(classes) > 1:
        what = f"but it names {len(classes)} class columns ({', '.join(classes)}): one is the class"
    elif classes:
        what = f"but it names no text column training knows {texts} beside the class column {classes[0]!r}"
    else:
        what = (f"but it names no class column training knows ({', '.join(sorted(HEADER_LABEL_NAMES)[:8])}, ...) "
                f"beside a text column {texts}")
    return (f"{what}; say which to read: --label-column NAME --text-column NAME (the SageMaker job's label_column "
            f"and text_column)")


class _HeaderlessTsv(FastTextError):
    """:func:`detect_format`'s error for a tab-separated line 1 that is neither a header nor a class number first:
    :func:`examples_of_lines` reads it as a TSV when the first lines are classes written as words
    (:func:`word_class_csv`: ``positive<TAB>the text``)."""


class _UnknownColumns(_UndetectedFormat):
    """:func:`detect_format`'s error for a header row whose class column it cannot tell."""


def _is_int(text):
    return text.lstrip("-").isdigit()


class _Counted:
    def __init__(self, lines):
        self.lines, self.lineno = lines, 0

    def __iter__(self):
        for line in self.lines:
            self.lineno += 1
            yield line


# Python's csv module refuses fields over 128 KiB (csv.field_size_limit, global to the process): a longer
# review was "malformed CSV ... (an unclosed quote?)". fastText takes lines of any length; this bound still
# stops an unclosed quote from reading the rest of a large file into one field.
CSV_FIELD_LIMIT = 16 << 20


def allow_long_csv_fields(limit=CSV_FIELD_LIMIT):
    """Raise the csv module's field limit to ``limit`` characters (never lower it)."""
    if csv.field_size_limit() < limit:
        csv.field_size_limit(limit)


# A TSV's quotes are read as CSV's (pandas' to_csv(sep="\t") and Excel quote a field that holds a tab, a quote or a
# line break); files that put quotes in fields without that quoting (GLUE's .tsv files) are refused with this advice.
_TSV_QUOTES_HINT = (" (if its quotation marks are no CSV quoting, as in GLUE's .tsv files, convert it: pandas: "
                    "pd.read_csv(path, sep='\\t', quoting=3).to_csv(new_path, index=False))")


def _csv_rows(lines, uri, delimiter=","):
    """``(row, first line)`` of each non-empty CSV record (``delimiter``: ``"\t"`` for a TSV)."""
    allow_long_csv_fields()
    reader = csv.reader(lines, strict=True, delimiter=delimiter)
    hint = _TSV_QUOTES_HINT if delimiter == "\t" else " (an unclosed quote?)"
    while True:
        start = lines.lineno + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if "new-line character seen in unquoted field" in str(exc):  # its advice is Python's, not the user's
                raise FastTextError(f"{uri}:{start}: malformed CSV record starting at this line: a line break "
                                    f"inside an unquoted field{_LONE_CR_HINT}") from None
            if "field larger than field limit" in str(exc):  # a review this long is read as a file's rest by mistake
                raise FastTextError(f"{uri}:{start}: malformed CSV record starting at this line: a field longer than "
                                    f"{CSV_FIELD_LIMIT >> 20} Mi characters (an unclosed quote? else split the text: "
                                    f"no review is that long)") from None
            raise FastTextError(f"{uri}:{start}: malformed CSV record starting at this line: {exc}{hint}") from None
        if row and (len(row) > 1 or row[0].strip()):  # a line of spaces (trailing lines an editor left) is blank,
            yield row, start  # as fastText-format input and a file's leading lines read it


def iter_examples(uri, fmt="auto", note=None, found=None):
    """Yield ``(label, raw_text)`` pairs from a local path or ``s3://`` URI.

    gzip/bzip2/xz files are decompressed; a CSV header row is detected and skipped; errors name the
    exact physical line. ``note``, ``found``: as :func:`examples_of_lines`'.
    """
    if fmt not in FORMATS and not isinstance(fmt, Columns):
        raise FastTextError(f"unknown data format {fmt!r}; choose one of {', '.join(FORMATS)}")
    uri = str(uri)
    stream, compression = _open_decompressed(uri)
    try:
        lines = _Lines(stream, uri, compression)
        yield from examples_of_lines(_without_excel_sep(lines, uri), uri, fmt, note=note, found=found)
    finally:
        stream.close()


def _one_csv_field(line):
    """Is ``line`` one field read as CSV? Not when it cannot be read (a lone ``\r`` inside it, an old Mac file's
    line ends: the CSV reader's error, which names the file, follows; here it was a traceback)."""
    try:
        return len(next(csv.reader([line.strip()]), [])) < 2
    except csv.Error:
        return False


def leading_blank_lines(it):
    """``(blank lines, first other line)`` taken from the iterator ``it`` (that line ``None`` if there is none):
    a file's format is judged by its first line with text."""
    blank = []
    first = next(it, None)
    while first is not None and not first.strip():
        blank.append(first)
        first = next(it, None)
    return blank, first


def examples_of_lines(lines, uri, fmt="auto", predicting=False, note=None, found=None):
    """:func:`iter_examples` of ``lines``: decoded physical lines, each with its line end (the first's BOM
    removed); ``uri`` names them in errors. ``predict`` reads a labeled CSV input with it (``predicting``): there a
    header row of text columns only (:func:`text_header_columns`: ``title,body``; or one, ``review``:
    :func:`one_column_text_header`) yields ``(None, text)``, each record's columns joined; training refuses it (it
    names no class column). A first column that is pandas' index (:func:`index_column`) is left out, and ``note``
    (a callable, or None) is given a line that says so. ``found`` (a dict, or None) is given ``"class_from"``:
    where the classes are read from (:attr:`LabeledTexts.class_from`)."""
    found = {} if found is None else found
    choice, fmt = (fmt, "csv") if isinstance(fmt, Columns) else (None, fmt)
    it = iter(lines)
    blank, first = leading_blank_lines(it)
    if first is None:
        raise FastTextError(f"{uri}: file is empty")
    if choice is not None and "\t" in first and _one_csv_field(first):
        fmt = "tsv"  # (columns named in a header of tabs, not commas)
    # (a JSON object is no CSV record: --format csv on JSON Lines read each object's '{"review_id": "..."' as its
    # class, one class per document, and its other keys and values as the text)
    if fmt == "jsonl" or (fmt in ("auto", "csv") and json_object_line(first.strip())):
        yield from jsonl_examples(_chain(blank + [first], it), uri, choice, note, found)
        return
    if fmt == "auto":
        try:
            fmt = detect_format(first, uri)
        except FastTextError as exc:
            ahead = list(itertools.islice(it, HEADER_LOOKAHEAD))
            it = _chain(ahead, it)
            if isinstance(exc, _HeaderlessTsv) and word_class_csv([first] + ahead, "\t"):
                fmt = "tsv"  # (positive<TAB>the text)
            elif word_class_csv([first] + ahead):
                fmt = "csv"  # (positive,the text; positive,a text<TAB>with a tab)
            elif not isinstance(exc, _UndetectedFormat) or isinstance(exc, _UnknownColumns):
                raise  # a tab- or semicolon-separated file: as said; a header: name its columns, as said
            else:
                raise FastTextError(f"{exc}; a CSV whose class is written as a word (positive,the text) is read "
                                    f"with --format csv") from None
    rest = _chain(blank + [first], it)
    if fmt == "jsonl":
        yield from jsonl_examples(rest, uri, None, note, found)
        return
    found["class_from"] = CLASS_FROM_FASTTEXT if fmt == "fasttext" else ""
    if fmt == "fasttext":
        for lineno, line in enumerate(rest, 1):
            if line.strip():
                yield _parse_fasttext_line(line, uri, lineno)
        return
    counted = _Counted(rest)  # counts the lines the CSV reader takes: record start lines
    rows = _csv_rows(counted, uri, "\t" if fmt == "tsv" else ",")
    ahead = list(itertools.islice(rows, HEADER_LOOKAHEAD + 1))
    index = bool(ahead) and index_column(ahead[0][0], [r for r, _ in ahead[1:]])
    header_row = ahead[0][0] if ahead else []  # as the file writes it
    if index:  # pandas' index column first (,label,text): left out, the rest read as usual
        if note is not None:
            note(index_note(uri, ahead[0][0]))
        rows = index_rows(_chain(ahead[1:], rows), lambda start: f"{uri}:{start}")
        ahead = [(ahead[0][0][1:], ahead[0][1])] + list(itertools.islice(rows, len(ahead) - 1))
    if choice is None and ahead and _text_header(ahead[0][0], [r for r, _ in ahead[1:]], predicting or index):
        header, start = ahead[0]
        columns = table_text_columns(header, [r for r, _ in ahead[1:]])
        if not predicting:
            if columns != list(range(len(header))):  # a table of reviews with more columns, none a class
                raise FastTextError(
                    f"{uri}:{start}: the CSV header row ({','.join(header_row)}) names no class column training "
                    f"knows ({', '.join(sorted(HEADER_LABEL_NAMES)[:8])}, ...); if one of them is the class, name "
                    f"it: --label-column NAME (the SageMaker job's label_column); else label these texts with predict"
                    f"{_one_hot_hint(header, [r for r, _ in ahead[1:]])}")
            first_is_class = " (its first column would be read as each row's class)" if len(header) > 1 else ""
            beside = " beside pandas' index column" if index else ""
            raise FastTextError(
                f"{uri}:{start}: the CSV header row ({','.join(header_row)}) names no class column, only text columns"
                f"{beside}{first_is_class}; add the class as a column named "
                f"e.g. label (label,{','.join(header)}), or label these texts with predict")
        if len(ahead) == 1:
            raise FastTextError(f"{uri}: no data rows (only a header row)")
        left = left_out_columns(header, (-1, columns))
        if left and note is not None:
            note(_read_from_note(uri, "column", [c.strip() for c in header], columns, left))
        for text in table_texts(_chain(ahead[1:], rows), header, columns, lambda start: f"{uri}:{start}"):
            yield None, text
        return
    later = [r for r, _ in ahead[1:]]
    if choice is not None and ahead:
        columns = chosen_columns(ahead[0][0], choice, later, uri)
    else:
        columns = _header_columns(ahead[0][0], later) if ahead else None
        if columns is None and ahead and _unread_header(ahead[0][0], later):
            raise FastTextError(f"{uri}:{ahead[0][1]}: its first row reads as a header ({','.join(header_row)}), "
                                f"{_unread_columns(ahead[0][0])}")
        first_name = ahead[0][0][0].lstrip("\ufeff").strip() if ahead else ""
        if (columns is not None and columns[0] == 0 and not predicting and first_name.lower() not in HEADER_LABEL_NAMES
                and _ids_column([r[0] for r in later if r])):
            # a header whose first column has a name training does not know, beside text columns (review_id,text:
            # reviews to label, with their ids) is read with that column as the class, as Zhang et al.'s header
            # ("Class Index",Title,Description) is; ids there made a class of every review
            raise FastTextError(
                f"{uri}:{ahead[0][1]}: the header row ({','.join(header_row)}) puts {first_name!r} first, where the "
                f"class goes, but over the first {len(later)} rows it holds ids (nearly all different, with digits: "
                f"{later[0][0].strip()!r}, ...), not classes; name the class column: --label-column NAME (the "
                f"SageMaker job's label_column), or label these texts with predict")
    layout, names = None, None
    if columns is not None:
        label_col, text_cols = columns
        if label_col != 0 or len(text_cols) != len(ahead[0][0]) - 1:  # text,label or ,label,text (pandas)
            layout = (label_col, text_cols, len(ahead[0][0]))
        found["class_from"] = f"column {label_col + 1 + index} ({ahead[0][0][label_col].strip()!r})"
        names, ahead = ahead[0][0], ahead[1:]
        left = left_out_columns(names, columns)
        if left and note is not None:
            note(_read_from_note(uri, "column", [c.strip() for c in names], text_cols, left, label_col))
        if not ahead:
            raise FastTextError(f"{uri}: no data rows (only a header row)")
    if choice is None or not choice.texts:  # (text columns the user named are read as named)
        _check_text_columns([r for r, _ in ahead], columns, uri, names)
    for row, start in _chain(ahead, rows):
        yield _csv_row_to_example(row, uri, start, layout)


# A column after the class is read as text. One that, over the look-ahead's rows, holds only whole numbers, nearly all
# different (a tweet or row id), is no text: a file with metadata columns, whose ids, dates and user names would be
# trained on as words; a column of one and the same value (Sentiment140's NO_QUERY) is named beside it. A column of
# repeated numbers (a star rating), of years (4 digits, 1800 to 2100: a film's or a car's year, different in every
# row or not) or of one value (the drug or product every review is about; a title that repeats) is read as text, as
# Zhang's rule reads it; but not a column of such numbers that count up (or down) row by row, nearly without gaps, as
# ids do (rows 1801 to 1850 of a larger file: :func:`_counts_like_ids`). Decided over this many rows at least.
METADATA_MIN_ROWS = 20
_WHOLE_NUMBER = re.compile(r"\s*-?\d+\s*")
_YEAR = re.compile(r"\s*(18\d\d|19\d\d|20\d\d|2100)\s*")


def _counts_like_ids(numbers):
    """Do ``numbers`` (a column's values, in file order, nearly all different) count as ids do: row after row up (or
    down) for 9 steps in 10 at least, with few gaps (they span less than twice their count)? A year column that
    holds a different year in every row (films, in no order: 1937, 1974, 1911, ...) does not; nor do real review
    years, which repeat."""
    steps = [b - a for a, b in zip(numbers, numbers[1:])]
    if not steps:
        return False
    one_way = max(sum(d > 0 for d in steps), sum(d < 0 for d in steps))
    return one_way >= 0.9 * len(steps) and max(numbers) - min(numbers) < 2 * len(numbers)


def _check_text_columns(rows, columns, uri, names=None):
    """Refuse CSV whose text columns include an id column (:data:`METADATA_MIN_ROWS`); ``rows``: the first data rows;
    ``columns``: a header's ``(label column, text columns)``, None: the class first, then text (Zhang). Two-column
    files are refused only when ``names`` (the header row) names their text column with a name that is no known text
    column's (``tweet_id,sentiment``: taken for the text only because it is the one column beside the class)."""
    width = max((len(r) for r in rows), default=0)
    label_col, text_cols = columns if columns is not None else (0, list(range(1, width)))
    if len(rows) < METADATA_MIN_ROWS:
        return
    if len(text_cols) < 2:
        name = names[text_cols[0]].strip() if names is not None and len(text_cols) == 1 else ""
        values = [r[text_cols[0]] for r in rows if text_cols and text_cols[0] < len(r) and r[text_cols[0]].strip()]
        if (name and name.lower() not in HEADER_TEXT_NAMES and len(values) >= METADATA_MIN_ROWS
                and not any(len(v.split()) > 1 for v in values) and len({v.strip() for v in values}) >= 0.9 * len(values)):
            # a labels file (tweet_id,sentiment; Yelp's review_id,stars: the texts are elsewhere) was "cannot detect the
            # format"; since the one column beside a named class is taken for the text, its ids were trained on as
            # words. Ids are one token each and nearly all different; texts, even tweets, have words.
            raise FastTextError(
                f"{uri}: the header names the class column ({names[label_col].strip()}) beside one other column, "
                f"{name!r}, which over the first {len(rows)} rows holds one token per row, nearly all different "
                f"({values[0].strip()!r}, ...): an id, not text; this file has no text column to read (join the texts "
                f"to it first, e.g. pandas: labels.merge(texts, on={name!r}); if those tokens are the texts, name the "
                f"column text)")
        return
    ids, constant = [], []
    for c in text_cols:
        values = [r[c] for r in rows if c < len(r) and r[c].strip()]
        if len(values) < METADATA_MIN_ROWS:
            continue
        if (all(_WHOLE_NUMBER.fullmatch(v) for v in values) and len({v.strip() for v in values}) >= 0.9 * len(values)
                and (not all(_YEAR.fullmatch(v) for v in values) or _counts_like_ids([int(v) for v in values]))):
            ids.append((c, f"column {c + 1} holds only whole numbers ({values[0].strip()!r}, ...)"))
        elif len(set(values)) == 1:
            constant.append((c, f"column {c + 1} is {values[0]!r} in every one"))
    if not ids:
        return
    found = sorted(ids + constant)
    text = [c for c in text_cols if c not in {c for c, _ in found}] or text_cols
    raise FastTextError(
        f"{uri}: not every column after the class is text: over the first {len(rows)} rows, "
        f"{'; '.join(what for _, what in found)} (an id, date or user column, as in Sentiment140's "
        f"class,id,date,query,user,text), and each would be trained on as words. Keep only the class and the text "
        f"column(s), e.g. pandas: pd.read_csv(path{'' if columns else ', header=None'}).iloc[:, [{label_col}, "
        f"{text[-1]}]].to_csv(new_path, {'' if columns else 'header=False, '}index=False)")


def _chain(first, rest):
    yield from first
    yield from rest


def check_limit(limit):
    """``limit`` (documents to read at most) must be ``None`` or a positive integer: 0 or a negative one
    read one document (the count was checked after each), and prepare wrote one-document splits over the
    user's prepared data without a word (notebook 01's ``train_docs``)."""
    if limit is not None and (not isinstance(limit, numbers.Integral) or isinstance(limit, bool) or limit <= 0):
        raise FastTextError(f"limit must be a positive number of documents (or None: all), got {limit!r}")


def class_from_files(per_file):
    """:attr:`LabeledTexts.class_from` of data read from several files: ``per_file`` holds each file's ``(uri,
    class_from)``, in order. The one value when every file's is the same, else the list of them (a training channel
    of a ``text,label`` file beside a Zhang et al. one: the many-classes refusal names each file's own layout)."""
    values = {where for _, where in per_file}
    return per_file[0][1] if len(values) == 1 else list(per_file)


def read_labeled(uri, fmt="auto", limit=None, find_names=True, note=None):
    """Read a whole dataset into memory; an empty dataset is an error.

    ``limit``: at most this many documents (a positive integer; ``None``: all).
    ``find_names``: take ``names`` from a names file beside the data (``<stem>.classes.txt`` or
    ``classes.txt``), else from an unpacked Zhang et al. archive's folder name (label_names.py), keeping the
    labels this data has.
    ``note``: None, or a callable given a line about how the file was read (pandas' index column left out).
    """
    from . import label_names

    check_limit(limit)
    # The names file first: a bad one is reported before the data is read (minutes at Yelp size), not after.
    names_file, found = label_names.find_beside(uri) if find_names else (None, {})
    data = LabeledTexts()
    limited = False
    read = {}
    for label, text in iter_examples(uri, fmt, note=note, found=read):
        data.labels.append(label)
        data.texts.append(text)
        if limit is not None and len(data) >= limit:
            limited = True
            break
    if not data.texts:
        raise FastTextError(f"{uri}: contains no labeled documents")
    data.class_from = read.get("class_from", "")
    if find_names:
        data.names = label_names.kept_for_data(found, data.labels, names_file,
                                               subset=limited or label_names.named_for(names_file, uri))
    return data


SAMPLE_DOCS = 10_000  # raw texts read_counted keeps: train.resolve_settings looks at this many


@dataclass
class CountedTexts:
    """Labeled documents tokenized and counted while they were read (:func:`read_counted`), without
    their text: training needs only the token ids (``counts``, a ``native_features.TokenCounts``).

    ``sample``: the first :data:`SAMPLE_DOCS` raw texts, from which the settings are resolved.
    """

    labels: List[str]
    counts: object
    sample: List[str]
    names: Dict[str, str] = field(default_factory=dict)  # what the labels mean, as LabeledTexts.names
    class_from: object = ""  # as LabeledTexts.class_from

    def __len__(self):
        return len(self.labels)

    def classes(self):
        """The distinct labels, sorted, as :meth:`LabeledTexts.classes`."""
        return sort_labels(self.labels)

    label_names = classes


def read_counted(uris, fmt="auto", progress=None, find_names=False, note=None):
    """Read training data (one or more files, in order) and tokenize and count it as it streams.

    The same documents and errors as :func:`read_labeled`, but only a chunk of texts is alive at
    once (``features.count_tokens`` takes them a chunk at a time): at Yelp size (560k reviews) that
    saves the ~0.7 GB of review strings, and the heap fragmentation they leave behind. The packed
    token ids go to an unlinked temporary file as they are made (``native_features.CodesFile``,
    in ``TMPDIR``: ~125 MB at Yelp size that the page cache holds instead of the process), from
    which training reads each batch's documents back. ``progress``:
    None or a progress-bar wrapper (progress.bar). ``find_names``, ``note``: as :func:`read_labeled`'s
    (``find_names``: one file).
    """
    from . import label_names
    from .features import count_tokens
    from .native_features import CodesFileError

    uris = list(uris) if isinstance(uris, (list, tuple)) else [uris]
    labels, sample, layout = [], [], []
    names_file, found = label_names.find_beside(uris[0]) if find_names and len(uris) == 1 else (None, {})  # before the data, as read_labeled

    def texts():
        for uri in uris:
            before = len(labels)
            read = {}
            for label, text in iter_examples(uri, fmt, note=note, found=read):
                labels.append(sys.intern(label))  # one str per class, not one per document
                if len(sample) < SAMPLE_DOCS:
                    sample.append(text)
                yield text
            if len(labels) == before:
                raise FastTextError(f"{uri}: contains no labeled documents")
            layout.append((uri, read.get("class_from", "")))  # where each file's classes were read from

    try:  # the packed ids go to an unlinked temporary file, not memory (native_features.CodesFile)
        counts = count_tokens(texts(), progress, to_file=True)
    except CodesFileError as exc:
        raise FastTextError(f"cannot keep the training data's token ids in a temporary file in "
                            f"{tempfile.gettempdir()} ({exc.strerror or exc}); set TMPDIR to a writable "
                            f"directory with space") from None
    data = CountedTexts(labels, counts, sample, class_from=class_from_files(layout))
    if find_names and len(uris) == 1:
        data.names = label_names.kept_for_data(found, labels, names_file, subset=label_names.named_for(names_file, uris[0]))
    return data


def fasttext_line(label, text):
    return f"{LABEL_PREFIX}{label} {normalize_text(text)}\n"


def write_fasttext(data, uri):
    """Write normalized fastText-format lines atomically to a local path or ``s3://`` URI.

    A label with whitespace (a CSV class such as ``very good``) is refused: written as ``__label__very good``
    it read back as the class ``very`` and the text ``good ...``."""
    check_fasttext_labels(data, uri)
    with storage.atomic_write(uri, "wb") as f:
        write_fasttext_rows(data, f, uri)
    return str(uri)


def write_fasttext_splits(splits, prefix, stem):
    """Each split of ``splits`` (``{"train": data, "test": data}``) to ``{prefix}/{stem}.{name}``, written together:
    all in full before any replaces an older file (storage.atomic_writes), so a failure in one (a full disk, a text
    the format cannot hold) never leaves a new train split beside the old test split. Returns ``{name: uri}``."""
    uris = {name: storage.join(prefix, f"{stem}.{name}") for name in splits}
    for name, data in splits.items():  # before anything is written
        check_fasttext_labels(data, uris[name])
    with storage.atomic_writes(list(uris.values())) as files:
        for (name, data), f in zip(splits.items(), files):
            write_fasttext_rows(data, f, uris[name])
    return uris


def check_fasttext_labels(data, uri):
    bad = next((label for label in dict.fromkeys(data.labels) if not label or any(c.isspace() for c in label)), None)
    if bad is not None:
        raise FastTextError(f"cannot write the label {bad!r} to the fastText-format file {uri}: labels there may not be "
                            f"empty or hold whitespace (write CSV instead, or rename the class)")
    _check_no_nul(data, uri)


def _check_no_nul(data, uri):
    """A label or text holding NUL (``\\x00``) is refused before anything is written: every reader refuses a file
    with NUL bytes as no text (UTF-16, binary), so the written file could not be read back (fastText reads NUL as a
    word break, training from memory as part of a word). In a string it is mostly a sign of a source read with the
    wrong encoding (UTF-16 read as Latin-1: a NUL after every letter), which a space would hide."""
    bad = next((label for label in dict.fromkeys(data.labels) if "\x00" in label), None)
    if bad is not None:
        raise FastTextError(f"cannot write the label {bad!r} to {uri}: it holds a NUL character (\\x00), which a text "
                            f"file cannot hold (reading it back would refuse it as binary); rename the class")
    row = next((i for i, text in enumerate(data.texts, start=1) if "\x00" in text), None)
    if row is not None:
        text = data.texts[row - 1]
        raise FastTextError(f"cannot write document {row} (class {data.labels[row - 1]!r}) to {uri}: its text holds "
                            f"{text.count(chr(0))} NUL character(s) (\\x00, at position {text.index(chr(0))}), which a "
                            f"text file cannot hold (reading it back would refuse it as binary; was its source UTF-16 "
                            f"read as another encoding?); remove them, or replace them with spaces")


def write_fasttext_rows(data, f, uri):
    """fastText-format lines (labels checked by :func:`check_fasttext_labels`) into a binary file object.

    A text holding a word that starts with ``__label__`` (``__LABEL__`` too: normalizing lower-cases it) is
    refused: the format has no way to write it, and the file read back as a second label on that line
    (an error here, a silent extra class in fastText), so the written file could not be trained on."""
    writer = io.TextIOWrapper(f, encoding="utf-8", newline="\n")
    for row, (label, text) in enumerate(zip(data.labels, data.texts), start=1):
        line = fasttext_line(label, text)
        if line.count(LABEL_PREFIX) > 1 and any(w.startswith(LABEL_PREFIX) for w in line.split()[1:]):
            raise FastTextError(f"cannot write document {row} (class {label!r}) to the fastText-format file {uri}: its text "
                                f"holds a word starting with {LABEL_PREFIX!r}, which that format reads as a second label "
                                f"(remove or rename that word, or write CSV instead)")
        try:
            writer.write(line)
        except UnicodeEncodeError as exc:
            raise FastTextError(_not_unicode(row, label, uri, exc)) from None
    writer.flush()
    writer.detach()


def _not_unicode(row, label, uri, exc):
    # a lone surrogate ("\ud800": JSON's escapes, or bytes decoded with errors="surrogateescape") stopped the write
    # in a traceback
    return (f"cannot write document {row} (class {label!r}) to {uri}: it is not valid Unicode text (character "
            f"{exc.object[exc.start]!r}, a lone surrogate); remove it")


def csv_line(label, text):
    """One Zhang et al. CSV row (quotes doubled, line breaks as a literal backslash-n)."""
    body = text.replace('"', '""').replace("\n", "\\n")
    return f'"{label}","{body}"\n'


def write_csv(data, uri, overwrite=True):
    """Write Zhang et al. CSV rows atomically (``overwrite=False``: refuse an existing ``uri``). A label or text
    holding NUL is refused first, as by :func:`write_fasttext`."""
    _check_no_nul(data, uri)
    with storage.atomic_write(uri, "wb", overwrite=overwrite) as f:
        write_csv_rows(data, f, uri)
    return str(uri)


def write_csv_rows(data, f, uri="the CSV file"):
    """Zhang et al. CSV rows into the binary file ``f`` (``uri``: its name, for errors)."""
    for row, (label, text) in enumerate(zip(data.labels, data.texts), start=1):
        try:
            f.write(csv_line(label, text).encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise FastTextError(_not_unicode(row, label, uri, exc)) from None
