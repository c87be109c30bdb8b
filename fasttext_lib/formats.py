"""The formats of labeled text, and their records: what a file is read as, and each record parsed as (class, text).

* fastText format: ``__label__2 the food was great .`` (one document a line).
* Zhang et al. CSV (Yelp polarity, ag_news, dbpedia, ...): ``"2","the food ""rocked""\\nreally"``;
  the first column is the class, the remaining columns (title, body, ...) are joined with a space;
  ``""`` escapes a quote and a literal ``\\n`` stands for a line break.
* CSV and TSV with a header row (``label,text``; ``sentence<TAB>label``), and JSON Lines (:mod:`fasttext_lib.jsonl`).

:func:`format_to_read` decides a file's format (:func:`detect_format` from its first line, :func:`word_class_csv`
from its first few when that says nothing); :func:`parse_fasttext_line`, :func:`csv_rows` and
:func:`csv_row_to_example` parse its records. ``predict`` and the endpoint ask :func:`labeled_csv_start`,
:func:`labeled_csv_records` and :func:`tsv_with_header` whether an input to label is a labeled table,
:func:`header_alone` whether it is a header row with no rows, and :func:`semicolon_table` whether it is a table
neither reads.

A module of its own because these are decisions about a line or a record, each with its own refusals, apart from
what is done with a whole file: :mod:`fasttext_lib.data` reads files with them and keeps what they give, and
:mod:`fasttext_lib.header_row` decides what a table's first row is.
"""
import contextlib
import csv
import functools
import heapq
import itertools
import re
import sys

from .columns import (HEADER_LABEL_NAMES, HEADER_LOOKAHEAD, HEADER_TEXT_NAMES, ColumnsToName, as_given,
                      class_and_text_names, csv_text, header_layout, index_column, index_header_start, index_named, is_int_text,
                      looks_like_header, number_with_comma, one_column_text_header, prose_commas, reads_as_number,
                      semicolon_header, series_values_header, several_class_columns, short_header, short_names,
                      table_header, text_header_columns, tsv_header_line, two_names, unread_columns, unread_header,
                      whole_number, width_error)
from .errors import FastTextError
from .jsonl import json_input
from .lines import (LONE_CR_HINT, chain_lines, excel_sep_line, excel_separator, has_lone_cr, json_object_line,
                    pandas_conversion, sep_line, stripped_start)
from .text import LABEL_PREFIX

# what a file may be read as (``auto``: detected); cli.py writes them out, its parser importing no reader
FORMATS = ("auto", "fasttext", "csv", "tsv", "jsonl")


def format_to_read(first, rest, fmt, choice, uri, lineno=1):
    """``(format, rest)``: what to read a file as (``fasttext``, ``csv``, ``tsv`` or ``jsonl``) whose first non-blank
    line is ``first``, line ``lineno`` of the file (after blank ones: the line its errors name, and the rows a
    conversion they advise skips); ``fmt``: the format given (``auto``: detected), ``choice``: the columns the user
    named (:class:`Columns`) or None. ``rest``: the lines after ``first`` (an iterator), returned with any that
    detection looked at put back."""
    rest = _refuse_a_sep_line(first, rest, uri, lineno, fmt)
    if choice is not None and "\t" in first and _one_csv_field(first):
        return "tsv", rest  # (columns named in a header of tabs, not commas)
    # (a JSON object is no CSV record: --format csv on JSON Lines read each object's '{"review_id": "..."' as its
    # class, one class per document, and its other keys and values as the text)
    if fmt == "jsonl" or (fmt in ("auto", "csv") and json_object_line(first.strip())):
        return "jsonl", rest
    if fmt != "auto":
        return fmt, rest
    return _detected_format(first, rest, uri, lineno)


def _one_csv_field(line):
    """Is ``line`` one field read as CSV? Not when it cannot be read (a lone ``\r`` inside it, an old Mac file's
    line ends: the CSV reader's error, which names the file, follows; here it was a traceback)."""
    try:
        return len(next(csv.reader([line.strip()]), [])) < 2
    except csv.Error:
        return False


def _detected_format(first, rest, uri, lineno):
    """``(format, rest)`` of a file of no format given: :func:`detect_format` of its first line; when that says
    nothing, the first :data:`HEADER_LOOKAHEAD` lines after it (taken from ``rest``, and put back) are classes written
    as words (:func:`word_class_csv`), or the file is refused."""
    try:
        return detect_format(first, uri, lineno), rest
    except FastTextError as exc:
        ahead = list(itertools.islice(rest, HEADER_LOOKAHEAD))
        rest = chain_lines(ahead, rest)
        if isinstance(exc, _HeaderlessTsv) and word_class_csv([first] + ahead, "\t"):
            return "tsv", rest  # (positive<TAB>the text)
        if word_class_csv([first] + ahead):
            return "csv", rest  # (positive,the text; positive,a text<TAB>with a tab)
        if not isinstance(exc, _UndetectedFormat) or isinstance(exc, _UnknownColumns):
            raise  # a tab- or semicolon-separated file: as said; a header: name its columns, as said
        for delimiter in ";,":
            if word_class_last([first] + ahead, delimiter):
                raise _class_last(uri, lineno, first, delimiter) from None
        header = _header_above_class_last(first, ahead)
        if header:  # (feedback,verdict: its columns asked for, as a header's above classes first below)
            raise _header_of_unknown_columns(uri, "CSV", *header, lineno) from None
        header = _unread_header_above_word_classes(first, ahead)
        if header:
            line, row = header
            if two_names(row):  # v1,v2,,, or positive,great whose class is rare at the top: the rest of the file
                return "csv", rest  # tells (header_row.class_and_text_columns), which refuses a header so
            # (the hint below, --format csv, read such a header as a document: a class of its own, v1)
            raise _header_of_unknown_columns(uri, "CSV", line, row, lineno) from None
        raise FormatToGive(f"{exc}; a CSV whose class is written as a word (positive,the text) is read",
                           " with {format}", " once its first line is a header row naming its columns (label,text)",
                           "csv") from None


def _unread_header_above_word_classes(first, ahead):
    """``(line 1 as written (stripped), its fields)`` when it reads as a header row naming columns training does not
    know (:func:`columns.unread_header`) above rows of classes written as words (:func:`word_class_csv`), else None:
    ``v1,v2,,,`` above ``ham,Go until jurong point...`` (the SMS Spam Collection as it is shared)."""
    line = first.lstrip("\ufeff").strip()
    try:
        row = next(csv.reader([line]), [])
        later = [r for r in csv.reader(a.lstrip("\ufeff") for a in ahead) if r]
    except csv.Error:
        return None
    return (line, row) if word_class_csv(ahead) and unread_header(row, later) else None


# (a whole float too, 1.0: pandas' to_csv(header=False) of a float class column, read as 1 by
# data.whole_number_classes)
_UNQUOTED_CSV = re.compile(r"^\s*-?\d+(\.0+)?\s*,")

# a class number first, headerless (df.to_csv(sep="\t", header=False)); quoted too (quoting=csv.QUOTE_ALL)
_UNQUOTED_TSV = re.compile(r'^\s*(-?\d+(\.0+)? *|"-?\d+(\.0+)?")\t')


class _UndetectedFormat(FastTextError):
    """:func:`detect_format`'s error when line 1 says nothing (not a tab- or semicolon-separated file, which is
    named as such): :func:`_detected_format` then looks at the first lines (:func:`word_class_csv`)."""


def detect_format(first_line, uri, lineno=1):
    """The format of a file whose first line that is not blank is ``first_line``, line ``lineno`` (its errors name it:
    blank lines above it were said as line 1)."""
    stripped = first_line.lstrip("\ufeff").lstrip()
    if json_object_line(stripped):
        return "jsonl"
    if stripped.startswith(LABEL_PREFIX):
        return "fasttext"
    if semicolon_header(stripped) or (stripped.startswith('"') and _separated_by(stripped.rstrip("\r\n"), ";")):
        # (a quoted one, "sentiment";"review" or "positive";"great food": R's write.csv2, QUOTE_ALL, was refused as
        # malformed CSV, and a header with spaces, class name;review text, as of no format: named so by predict)
        raise _semicolon_separated(uri, lineno)
    quoted_tsv = stripped.startswith('"') and _separated_by(stripped.rstrip("\r\n"), "\t")
    if (stripped.startswith('"') and not quoted_tsv) or _UNQUOTED_CSV.match(stripped):
        return "csv"
    # (a first line longer than the csv module's 128 KiB field limit, 2<TAB>a long document: its "field larger than
    # field limit" was taken for a lone \r's error, and the TSV refused as an old Mac file)
    allow_long_csv_fields()
    try:
        row = next(csv.reader([stripped]), [])
    except csv.Error:  # a lone \r inside line 1 (class,text\r...: an old Mac file) stopped training in a traceback
        raise FastTextError(f"{uri}:{lineno}: cannot detect the format of line {lineno}: it holds a line break "
                            f"inside it{LONE_CR_HINT}") from None
    # (a header naming two class columns, id,rating,label,text, is a header predict reads: refused below, as before)
    if len(row) >= 2 and ((looks_like_header(row) and not several_class_columns(row))
                          or (index_named(row) and short_names(row[1:]))):
        return "csv"  # (a header row; or one whose first column is pandas' index, ,label,text: index_column)
    if any(token.startswith(LABEL_PREFIX) for token in stripped.split()):
        return "fasttext"  # the label after the text ("great food __label__pos"), as fastText reads it
    line = stripped.rstrip("\r\n")
    if "\t" in line:
        # tab-separated (pandas' to_csv(sep="\t"); GLUE's SST-2 sentence<TAB>label; Amazon's review TSVs): read as a
        # CSV is, a header naming its columns or the class first (it was refused, to be converted). A comma before
        # the first tab is a CSV's (positive,a text<TAB>with a tab: word_class_csv), or a text's. Without a header,
        # only a class number first says so on line 1, as for a CSV (_UNQUOTED_CSV), and else classes written as
        # words over the first lines (_detected_format: word_class_csv): GLUE's CoLA (gj04<TAB>1<TAB><TAB>sentence,
        # no header) was trained on its sources as the classes, the real class a word of the text, and text<TAB>label
        # lines on each text as a class of its own
        if quoted_tsv or "," not in line or line.index("\t") < line.index(","):
            cells = next(csv.reader([line], delimiter="\t"), [])
            if (_UNQUOTED_TSV.match(line) or (looks_like_header(cells) and not several_class_columns(cells))
                    or (index_named(cells) and short_names(cells[1:]))):
                return "tsv"
            _refuse_a_header_of_unknown_columns(uri, "TSV", cells, lineno)
        raise _HeaderlessTsv(
            f"{uri}: line {lineno} looks tab-separated, but it is no header row naming the columns (such as "
            f"sentence<TAB>label) and its lines do not start with a class (a number, or a word that repeats line "
            f"after line): add a header row that names the class and text columns (e.g. pandas: pd.read_csv(path, "
            f"sep='\\t', header=None{'' if quoted_tsv else ', quoting=3'}, names=[...]).to_csv(new_path, "
            f"index=False))", ", or give {format} to read each line's first field as its class", "", "tsv")
    cells = line.split(";")
    # a class column before the separator: one word, no comma (text often holds a semicolon)
    if len(cells) >= 2 and cells[0].strip() and not any(c in cells[0] for c in ", "):
        raise _semicolon_separated(uri, lineno)
    json_hint = json_input(stripped.strip(), uri)
    if json_hint:
        raise FastTextError(json_hint)
    _refuse_a_header_of_unknown_columns(uri, "CSV", row, lineno)
    raise _UndetectedFormat(
        f"{uri}: cannot detect the format of line {lineno} (expected '__label__X text', a '\"class\",\"text\"' CSV "
        f"row, or a CSV header row naming the class column ({', '.join(sorted(HEADER_LABEL_NAMES)[:6])}, ...) and the "
        f"text column(s) ({', '.join(sorted(HEADER_TEXT_NAMES)[:6])}, ...))"
    )


def _refuse_a_header_of_unknown_columns(uri, kind, row, lineno):
    """Refuse a first line (line ``lineno``) of three or more fields, each a short name and none a number: the header
    row of a table with more than a class and a text (tweet_id,airline_sentiment,...,text) whose class column has a
    name training does not know. The columns can be named, so the error says how (unread_columns). ``kind``: CSV or
    TSV, as it was read."""
    if len(row) >= 3 and short_names(row) and not any(reads_as_number(c) for c in row):
        raise _header_of_unknown_columns(uri, kind, ",".join(c.strip() for c in row), row, lineno)


def _header_of_unknown_columns(uri, kind, shown, row, lineno):
    """The error for a first line (line ``lineno``) that reads as a ``kind`` (CSV, TSV) header row, ``shown`` as its
    names are, whose columns training cannot read: what it names (columns.unread_columns), so that they can be
    named."""
    return _UnknownColumns(f"{uri}: line {lineno} reads as a {kind} header row ({shown}), {unread_columns(row)}")


def _refuse_a_sep_line(first, rest, uri, lineno, fmt):
    """``rest`` (lines read ahead put back), after refusing a ``first`` line (line ``lineno``) that reads as Excel's
    separator line (lines.excel_separator) where lines.excel_sep_line refuses it, by the lines under it: above a table
    of its separator, or JSON Lines; after blank lines, where no line is Excel's, above a comma or tab table too (a
    ``sep=,`` there was "cannot detect the format", where predict read the table), whatever the format given, as
    predict refuses it (lines.past_a_sep_review). Of no format given (``fmt`` ``auto``), one over lines that are no
    table (fastText lines, reviews) is refused as no labeled example: on line 1 the file's reader
    (lines.without_excel_sep) kept it, a review; it was refused as "line 1 looks semicolon-separated", with a
    conversion that read the lines under it as a semicolon table (``sep=|``: "cannot detect the format"). (``sep=,``
    and a tab's, Excel's above anything, are a blank line on line 1.)"""
    sep = excel_separator(first)
    if sep is None or (fmt != "auto" and lineno == 1):
        return rest
    ahead = list(itertools.islice(rest, HEADER_LOOKAHEAD))
    if not excel_sep_line(first, uri, ahead, lineno) and fmt == "auto":  # (sep=, after blank lines: over none)
        where = ("after blank lines, where only a file's first line is Excel's" if sep in ",\t" else
                 f"but no {sep!r}-separated table follows it")
        raise FastTextError(f"{uri}: line {lineno} reads {sep_line(sep)} (Excel's separator line), {where}: it is no "
                            f"labeled example; remove that line")
    return chain_lines(ahead, rest)


def _semicolon_separated(uri, lineno):
    """:func:`detect_format`'s error for a semicolon-separated file, with the conversion that reads it (every line kept
    as it is, a header row or a first record: lines.pandas_conversion)."""
    return FastTextError(
        f"{uri}: line {lineno} looks semicolon-separated; only comma- and tab-separated files, JSON Lines and fastText "
        f"format are read: convert it (e.g. pandas: {pandas_conversion(SEMICOLONS)})")


def _separated_by(line, delimiter):
    """Does ``delimiter`` (a tab, a semicolon), not a comma, separate the fields of ``line`` (a first line whose first
    field is quoted: ``"great food"<TAB>positive``, a header ``"text"<TAB>"label"``, pandas' ``to_csv(sep="\t",
    quoting=QUOTE_ALL)``, R's ``write.csv2``'s ``"sentiment";"review"``)? Read with it, the line has two fields or
    more; read with commas it is one field, or no CSV at all (a quote closed and then a tab). Such a first line was
    taken for a CSV's and the file refused as malformed CSV at line 1."""
    try:
        tabbed = next(csv.reader([line], delimiter=delimiter, strict=True), [])
    except csv.Error:
        return False
    try:
        return len(tabbed) >= 2 and len(next(csv.reader([line], strict=True), [])) < 2
    except csv.Error:
        return len(tabbed) >= 2


class FormatToGive(FastTextError):
    """A file whose format detection cannot tell, that a format given would read: ``found`` says what it is, and the
    message goes on to the command line's flag (``flagged``: "with {format}", said as ``--format csv`` for the format
    ``fmt``). A caller whose user has no such flag (notebook 01, which reads every file as detected) raises
    :attr:`unflagged` instead: ``found`` followed by ``otherwise``, what that user can do (a header row naming the
    columns), as columns.ColumnsToName's ``advising`` does for the columns; one whose user gives the format otherwise
    (the training job's hyperparameter) raises :meth:`given_as` its setting."""

    def __init__(self, found, flagged, otherwise, fmt):
        self.found, self.flagged, self.fmt = found, flagged, fmt
        super().__init__(self._said("--format"))
        self.unflagged = FastTextError(found + otherwise)

    def _said(self, setting):
        return self.found + self.flagged.replace("{format}", as_given(setting, self.fmt))

    def given_as(self, setting):
        """This error, naming the format as the user gives it: ``setting`` (as columns.as_given says it)."""
        return FastTextError(self._said(setting))


class _HeaderlessTsv(FormatToGive):
    """:func:`detect_format`'s error for a tab-separated line 1 that is neither a header nor a class number first:
    :func:`_detected_format` reads it as a TSV when the first lines are classes written as words
    (:func:`word_class_csv`: ``positive<TAB>the text``)."""


class _UnknownColumns(_UndetectedFormat, ColumnsToName):
    """:func:`detect_format`'s error for a header row whose class column it cannot tell."""


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
    ``So``. But a sentence opens with a capital: when every line's first word is in lower case, as a class column's
    values are (``positive, the text``, written by hand), the space after the comma does not matter (such lines
    needed ``--format csv``). ``Positive, the text`` still does."""
    try:
        records = [r for r in csv.reader((line.lstrip("\ufeff") for line in lines), delimiter=delimiter) if r]
    except csv.Error:
        return False
    firsts = [r[0].strip() for r in records]
    if delimiter == "\t" and all(len(r) > 2 and is_int_text(r[1].strip()) for r in records):
        return False  # a word, then a number in every line (GLUE's CoLA: gj04<TAB>1<TAB><TAB>sentence): a source or
        # an id before the class, not a class before the text
    if len(records) < MIN_UNQUOTED_ROWS or not all(
            _WORD_CLASS.fullmatch(f) and any(c.strip() for c in r[1:]) for r, f in zip(records, firsts)):
        return False
    spaced = sum(r[1][:1].isspace() for r in records)
    return (firsts.count(firsts[0]) >= 2 and 2 * len(set(firsts)) <= len(firsts)
            and (2 * spaced < len(records) or all(f.islower() for f in firsts)))


def word_class_last(lines, delimiter):
    """Are ``lines`` (a file's first lines) records of a text and then its class, without a header (the Emotion
    dataset's ``i didnt feel humiliated;sadness``; ``df[["text", "label"]].to_csv(path, index=False, header=False)``)?
    As :func:`word_class_csv` tells a class first: at least :data:`MIN_UNQUOTED_ROWS` records of two fields or more,
    each last one a word (or a whole number) right after the ``delimiter`` (prose puts a space after its commas and
    semicolons), whose values repeat as classes do (the first one among them, half of them at most different)."""
    try:
        records = [r for r in csv.reader((line.lstrip("\ufeff") for line in lines), delimiter=delimiter) if r]
    except csv.Error:
        return False
    lasts = [r[-1].rstrip() for r in records]
    if len(records) < MIN_UNQUOTED_ROWS or not all(
            len(r) >= 2 and r[0].strip() and (_WORD_CLASS.fullmatch(last) or is_int_text(last))
            for r, last in zip(records, lasts)):
        return False
    return lasts.count(lasts[0]) >= 2 and 2 * len(set(lasts)) <= len(lasts)


def _header_above_class_last(first, ahead):
    """``(line 1 as written (stripped), its fields)`` when it reads as a header row of names training does not know
    (``feedback,verdict``), none a number, above rows of a text and then its class (:func:`word_class_last`), the last
    name none of those classes; else None. It was "cannot detect the format ... read with --format csv", which read
    the header as a document and each text as its class."""
    line = first.lstrip("\ufeff").strip()
    try:
        row = next(csv.reader([line]), [])
        classes = {r[-1].strip() for r in csv.reader(a.lstrip("\ufeff") for a in ahead) if r}
    except csv.Error:
        return None
    return (line, row) if _names_row(row) and row[-1].strip() not in classes and word_class_last(ahead, ",") else None


def _names_row(row):
    """Could ``row`` be a header row of names of the user's own: two fields or more, each a short name, none a number
    (``feedback,verdict``)? Only the rows below it tell (:func:`_header_above_class_last`,
    :func:`class_last_header`)."""
    return len(row) >= 2 and short_names(row) and not any(reads_as_number(c) for c in row)


def _class_last(uri, lineno, first, delimiter):
    """:func:`_detected_format`'s error for lines of a text and then its class, without a header
    (:func:`word_class_last`), with the pandas line that writes them with a header row naming the columns, which
    training reads. It was "cannot detect the format ... read with --format csv", and that read the text as the
    class."""
    cells = next(csv.reader([first.lstrip("\ufeff")], delimiter=delimiter))
    said = "looks semicolon-separated, a text" if delimiter == ";" else "reads as a text"
    where = ("only comma- and tab-separated files, JSON Lines and fastText format are read" if delimiter == ";" else
             "without a header row the class is read from the first column")
    return FastTextError(f"{uri}: line {lineno} {said} and then its class ({cells[-1].strip()!r}), with no header row; "
                         f"{where}: {class_last_header_advice(delimiter)}")


def class_last_header_advice(delimiter=","):
    """How to write a file of a text and then its class (``delimiter``-separated) with a header row naming its columns,
    which training and evaluate read: said where such a file without one is refused."""
    options = {";": "sep=';', ", "\t": "sep='\\t', "}.get(delimiter, "")  # (\t written out, as pandas reads it)
    return (f"write it with a header row naming its columns (e.g. pandas: pd.read_csv(path, {options}header=None, "
            f"names=['text', 'label'], dtype=str, keep_default_na=False).to_csv(new_path, index=False))")


# Keeps each line's first __label__ word and drops the others, wherever they are (fastText reads them anywhere on a
# line; the sed this was, for labels leading a line as in fastText's tutorials, left "the text __label__a __label__b"
# as it was, and the file was refused again). Words are joined by one space, as they are read. Perl, of bytes, split
# at every character the reader splits at (separator_bytes): the awk this was split at spaces and tabs only, so two
# labels a no-break space apart (text pasted from a web page), or a first label behind Notepad's byte order mark,
# stayed two, and the file was refused again. Every byte order mark a line starts with is dropped, as the reader
# skips them all (lines.DecodedLines): behind two, one dropped left the first label a word and the second kept.
@functools.lru_cache(maxsize=None)
def first_label_command():
    keep = "!/^__label__/ || !$n++"
    return (f"perl -C0 -ne 's/^(?:\\xef\\xbb\\xbf)+//; chomp; my $n = 0; "
            f"print join(\" \", grep {{ length && ({keep}) }} split /(?:{separator_bytes()})+/), \"\\n\"'")


@functools.lru_cache(maxsize=None)  # (built when a warning needs it: scanning every code point takes 0.3 s)
def separator_bytes():
    """A perl pattern (of bytes: ``perl -C0``) of one character the fastText reader splits a line's words at
    (``str.split()``: formats.parse_fasttext_line), as its UTF-8 bytes: ``\\s`` or ``[[:space:]]`` missed the no-break
    space (``\\xa0``: text pasted from a web page), ``\\x1c``-``\\x1f`` and the wide spaces (U+2000 ...), or matched
    them by the locale, so that a label beside one was left a class of its own. Bytes, not characters decoded from
    UTF-8: nothing for perl to decode, so no byte of the file can stop it, and UTF-8 being self-synchronizing, a
    character's bytes match only where that character is. Each character's bytes but its last are a prefix, the last
    bytes after a prefix one bracket (runs of three or more written a-b); the line end is none (``$`` matches there)."""
    by_prefix = {}
    for code in range(sys.maxunicode + 1):
        if chr(code).isspace() and chr(code) != "\n":
            raw = chr(code).encode("utf-8")
            by_prefix.setdefault(raw[:-1], []).append(raw[-1])
    named = {9: "\\t", 12: "\\f", 13: "\\r", 32: " "}  # (not \\v: perl's is a class of vertical spaces)

    def byte(b):
        return named.get(b, f"\\x{b:02x}")

    alternatives = []
    for prefix, lasts in by_prefix.items():
        runs = []
        for b in lasts:  # (a named byte, \\t or a space, is written alone: [\\t\\x0b\\f\\r\\x1c-\\x1f ])
            if runs and b == runs[-1][1] + 1 and b not in named and runs[-1][1] not in named:
                runs[-1][1] = b
            else:
                runs.append([b, b])
        spelled = "".join(byte(a) if a == z else byte(a) + byte(z) if z == a + 1 else f"{byte(a)}-{byte(z)}"
                          for a, z in runs)
        tail = spelled if len(lasts) == 1 else f"[{spelled}]"
        alternatives.append("".join(byte(b) for b in prefix) + tail)
    return "|".join(alternatives)


def parse_fasttext_line(line, uri, lineno):
    tokens = line.split()
    labels = [t for t in tokens if t.startswith(LABEL_PREFIX)]
    if not labels:
        raise FastTextError(f"{uri}:{lineno}: line has no __label__ prefix")
    if len(labels) > 1:
        # fastText's multi-label files (its cooking tutorial: __label__sauce __label__cheese How much ...) say how to
        # train on them here: one line per (label, text), or the first label alone
        hint = LONE_CR_HINT if has_lone_cr(line) else (
            "; for multi-label data write one line per label and text (__label__a the text, __label__b the text), "
            f"or keep each line's first label: {first_label_command()} FILE > NEW_FILE")
        raise FastTextError(f"{uri}:{lineno}: line has {len(labels)} labels; only single-label classification is "
                            f"supported{hint}")
    label = labels[0][len(LABEL_PREFIX):]
    if not label:
        raise FastTextError(f"{uri}:{lineno}: empty label after __label__")
    return label, " ".join(t for t in tokens if not t.startswith(LABEL_PREFIX))


class CountedLines:
    """``lines`` counted as they are taken (``lineno``): the CSV reader takes a record's lines, so that
    :func:`csv_rows` names the line each record starts at. With ``look_ahead``, the lines taken until
    :meth:`end_look_ahead` whose first character (spaces and a BOM aside) is a quotation mark are noted too: a
    record's first field is quoted when its first line starts so."""

    def __init__(self, lines, look_ahead=False):
        self.lines, self.lineno = lines, 0
        self.quoted = set() if look_ahead else None
        self.last = None  # the line last taken: a record of one line as written (:func:`_as_written`)

    def __iter__(self):
        lines = iter(self.lines)
        if self.quoted is not None:
            for line in lines:
                self.lineno += 1
                self.last = line
                if stripped_start(line, 1, boms=True) == '"':
                    self.quoted.add(self.lineno)
                yield line
                if self.quoted is None:
                    break
        for line in lines:  # (past the look-ahead, the loop it always was: no test per line)
            self.lineno += 1
            self.last = line
            yield line

    def end_look_ahead(self):
        """The numbers of the quoted lines taken so far (a set); none are noted after."""
        quoted, self.quoted = self.quoted or set(), None
        return quoted


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
_GLUE_TSV = "sep='\\t', quoting=3"  # (pandas_conversion's options: quotes as any other character; \t written out)
_TSV_QUOTES_HINT = (" (if its quotation marks are no CSV quoting, as in GLUE's .tsv files, convert it: pandas: "
                    f"{pandas_conversion(_GLUE_TSV)})")
SEMICOLONS = "sep=';'"  # (pandas_conversion's options for a semicolon-separated file)


def csv_rows(lines, uri, delimiter=",", empty_fields=False, blanks=None):
    """``(row, first line)`` of each non-empty CSV record (``delimiter``: ``"\t"`` for a TSV). ``empty_fields``: a
    row of empty fields is a record (predict's: see :func:`data.examples_of_lines`). ``blanks``: a
    :class:`BlankRecords` told of each blank record left out (predict answers it)."""
    allow_long_csv_fields()
    seen = False  # a record with text read: blank ones before it may be above a header row
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
                                    f"inside an unquoted field{LONE_CR_HINT}") from None
            if "field larger than field limit" in str(exc):  # a review this long is read as a file's rest by mistake
                raise FastTextError(f"{uri}:{start}: malformed CSV record starting at this line: a field longer than "
                                    f"{CSV_FIELD_LIMIT >> 20} Mi characters (an unclosed quote? else split the text: "
                                    f"no review is that long)") from None
            raise FastTextError(f"{uri}:{start}: malformed CSV record starting at this line: {exc}{hint}") from None
        # a line of spaces (trailing lines an editor left) is blank, as fastText-format input and a file's leading
        # lines read it; so is a row of empty fields (,, : rows Excel exports below the data once they were formatted
        # or cleared, pandas' row of NaNs), which was refused as "an empty class column", naming no way on. Blank
        # lines are left out without a note (training counts none, and normal output stays quiet): so are these;
        # a row with a text and no class is no blank line, and still refused (_no_class)
        # Excel's separator line sep=, (or a tab's) where files that start with it were joined (cat a.csv b.csv; the
        # first file's is read as a blank line: lines.without_excel_sep) is one too: it was a document of the class
        # "sep=" and no text
        if excel_sep_record(row):
            continue
        if delimiter == "," and _quote_after_a_space(row):
            row = _as_written(lines, start, uri)
        if has_text(row) or (empty_fields and len(row) > 1):
            seen = True
            yield row, start
        elif blanks is not None:
            blanks.add(start, above_first_row=not seen)


def _quote_after_a_space(row):
    """Does a field of the CSV record ``row`` start with spaces and then a quotation mark that it does not close (an
    odd number of them in it)? Typed by hand, ``positive, "great food, really"``: CSV's quoting starts right after the
    comma, so that quotation mark was read as text and the field cut at the comma inside it (``' "great food'``,
    ``' really"'``): the comma lost from the text, the columns after it shifted. One that closes in the field
    (``positive, "Best" phone``) was read as written, and is."""
    for field in row:
        if field[:1].isspace() and field.lstrip()[:1] == '"' and field.count('"') % 2:
            return True
    return False


def _as_written(lines, start, uri):
    """The record of :func:`_quote_after_a_space` starting at line ``start`` (``lines``: the :class:`CountedLines` the
    reader took it from) read as it was meant: its quotation mark after a space opens a quoted field, as pandas'
    ``skipinitialspace=True`` reads it, where the record is one line that reads so; else the record is refused (its
    quote goes on over a line break, or text follows its closing quotation mark), naming it: read on, it lost text."""
    if start == lines.lineno:
        with contextlib.suppress(csv.Error):
            rows = list(csv.reader([lines.last], strict=True, skipinitialspace=True))
            if len(rows) == 1:
                return rows[0]
    raise FastTextError(f"{uri}:{start}: malformed CSV record starting at this line: a quotation mark after a comma "
                        f"and a space, which CSV reads as text, not as the start of a quoted field, so the field is "
                        f"cut at the commas inside it; write the field quoted right after the comma (no space "
                        f"before its opening quotation mark) and closed before the next comma")


def excel_sep_record(row):
    """Is the CSV record ``row`` Excel's separator line, ``sep=,`` (or ``sep=<TAB>`` read tab-separated), after a
    table's first line, where files that start with one were joined (``cat a.csv b.csv``)? No record: training and
    predict (:func:`csv_rows`) leave it out, and so does the endpoint's ``text/csv`` (serve_requests), which answered
    it as an empty review, one answer more than predict gives for the same bytes."""
    return len(row) == 2 and not row[1] and row[0].lstrip("\ufeff") == "sep="


class BlankRecords:
    """The blank records of a table ``predict`` reads (an empty line, a line of spaces, a row of empty fields), each
    answered as an empty review in its place, as the endpoint's ``text/csv`` answers it: one answer a record, so that
    the same file has as many answers either way, and answers joined back to the rows by position are not off after
    it (predict left them out; pd.read_csv(path, skip_blank_lines=False) has a row for each). Those above a header row
    are no records (:meth:`above_header`; the endpoint answers none); those above a first row that is data are.

    Kept as runs of consecutive lines, ``[first line, count]``, in a heap by line: the reading hands them out
    (:meth:`before`) as it reaches their place, so that many blank lines take no memory. ``keep=False`` (predict's
    checking pass, which answers nothing): only counted, with the first one's line (:attr:`first`)."""

    def __init__(self, keep=True):
        self.keep, self.runs, self.last = keep, [], None  # last: the run a consecutive line joins
        self.count, self.leading, self.first, self.first_below = 0, 0, None, None

    def add(self, line, above_first_row=False):
        """A blank record at ``line``; ``above_first_row``: before any record with text."""
        self.count += 1
        self.leading += above_first_row
        self.first = line if self.first is None else self.first
        self.first_below = line if self.first_below is None and not above_first_row else self.first_below
        if not self.keep:
            return
        if self.last is not None and self.last[0] + self.last[1] == line:
            self.last[1] += 1
        else:
            self.last = [line, 1]
            heapq.heappush(self.runs, self.last)

    def above_header(self):
        """The table's first row is a header row: the blank records above it are none."""
        self.count -= self.leading
        self.first = self.first_below
        while self.leading > 0 and self.keep:  # (the first runs: none goes on past the first row)
            self.leading -= self.runs[0][1]
            self._pop()
        self.leading = 0

    def before(self, line):
        """The lines of the blank records before ``line`` (None: all of them), in order, each handed out once."""
        while self.runs and (line is None or self.runs[0][0] < line):
            start, count = self.runs[0]
            self._pop()
            yield from range(start, start + count)

    def _pop(self):
        if heapq.heappop(self.runs) is self.last:
            self.last = None


def has_text(row):
    for value in row:  # (every record of a file passes here: no copies, and the class field decides at once)
        if value and not value.isspace():
            return True
    return False


def _no_class(uri, lineno, class_column):
    """A class not yet given, pandas' NaN written as an empty field: the refusal names the way on, by the file's own
    class column (a header's ``sentiment``; ``df.dropna(subset=['label'])`` of it was a KeyError pasted)."""
    column = "label" if class_column is None else class_column  # (no header: read by pandas as names=[label, text])
    return FastTextError(f"{uri}:{lineno}: CSV row has an empty class column: a document without a class; drop such "
                         f"rows first (pandas: df.dropna(subset=[{column!r}]).to_csv(new_path, index=False))")


def csv_row_to_example(row, uri, lineno, layout=None, tsv=False, class_column=None):
    """``(label, text)`` of one CSV row. ``layout``: ``(label column, text columns, header's column count)`` from a
    header row that names the class column elsewhere than first (``text,label``); None: the class is the first
    column and every other column is text (Zhang et al.). ``tsv``: the row is a TSV's (for errors);
    ``class_column``: the header's name of the class column (for errors; None: no header)."""
    if layout is not None:
        label_col, text_cols, width = layout
        if len(row) != width:  # (a TSV's stray separator is a tab typed in a text: a comma there does no harm)
            # (no class_column: predict's rows of a text and then its class, without a header: data.examples_of_lines)
            raise width_error(f"{uri}:{lineno}", len(row), width, tsv,
                              "the header row" if class_column is not None else "the first row")
        label = row[label_col].strip()
        if not label:
            raise _no_class(uri, lineno, class_column)
        return label, " ".join(row[c] for c in text_cols if row[c]).replace("\\n", " ")
    if len(row) < 2:
        raise FastTextError(f"{uri}:{lineno}: malformed CSV row: expected \"class\",\"text\"[,...] but got {len(row)} column(s)")
    label = row[0].strip()
    if not label:
        raise _no_class(uri, lineno, class_column)
    return label, csv_text(row[1:])


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
    return bool(first) and (first in classes or (quoted and is_int_text(first)) or whole_number(first) in classes)


def semicolon_class(line, classes):
    """Does ``line`` start with one of ``classes`` (ids or names; ``"2"`` as 2, ``2.0`` as 2) and a semicolon, as a row
    of a semicolon-separated labeled table does (``negative;cold soup``)? Unless the class is quoted, the text starts
    without a space, as :func:`labeled_csv_row` has it: a writer puts none after its separator, and reviews a person
    wrote so (``positive; the food was great``) were refused."""
    cell, semicolon, rest = line[:200].lstrip("\ufeff").partition(";")
    quoted = cell.strip().startswith('"')
    cell = cell.strip().strip('"').strip()
    return (bool(semicolon) and bool(cell) and (quoted or not rest[:1].isspace())
            and (cell in classes or whole_number(cell) in classes))


def semicolon_table(first, lines, classes, header=True):
    """Is an input to label whose first line that is not blank is ``first`` a semicolon-separated table (European
    Excel's CSV, ``to_csv(sep=";")``, R's ``write.csv2``)? Read a line at a time, its header row was answered as a
    review and each row's class as a word of its text; training refuses such a file (:func:`detect_format`). ``predict``
    and the endpoint's ``text/csv`` refuse it alike: this is their one rule. ``lines``: an iterator of the lines after
    ``first``; ``classes``: the model's class ids and names; ``header``: False when the input is told that ``first`` is
    no header row (the endpoint's ``header=absent``): then only rows tell, as without a header.

    It is when ``first`` is such a table's header row (columns.semicolon_header) and at least half of the lines after it
    in the look-ahead that are not blank have as many fields (a first review ``Review;Loved it`` above plain reviews is
    a review); or when ``first`` and half those lines, 4 at least with it, start with one of ``classes`` and a semicolon
    (:func:`semicolon_class`), as a CSV's labeled rows are recognized (:func:`labeled_csv_records`).

    -> ``(what, lines)``: what it is, said after "line N" (``first``'s) by the caller's error, which goes on to the
    caller's own way out (None: no such table); and ``lines`` as they were (:data:`HEADER_LOOKAHEAD` of them read
    ahead, and put back, only when ``first`` may start such a table: a bad byte later is said as it was)."""
    header, labeled = header and semicolon_header(first), semicolon_class(first, classes)
    if not (header or labeled):
        return None, lines
    following, lines = lines_ahead(lines)
    rows = [line for line in following if line.strip()]
    first = first.lstrip("\ufeff")
    conversion = (f"; only comma- and tab-separated ones are read: convert it (e.g. pandas: "
                  f"{pandas_conversion(SEMICOLONS)})")
    if header and rows and 2 * sum(line.count(";") >= first.count(";") for line in rows) >= len(rows):
        return f"is the header row of a semicolon-separated table ({first.strip()}){conversion}", lines
    if labeled and 1 + sum(semicolon_class(line, classes) for line in rows) >= max(4, (len(rows) + 2) // 2):
        return (f"and the lines after it start with one of the model's classes and a semicolon "
                f"({first.split(';', 1)[0].strip()};...): a semicolon-separated table{conversion}"), lines
    return None, lines


def lines_ahead(lines):
    """``(ahead, lines)``: the next :data:`HEADER_LOOKAHEAD` lines of the iterator ``lines`` (fewer at its end), blank
    ones among them, and ``lines`` with them put back. An input to label is judged a table by its first line that is
    not blank and these after it (:func:`tsv_with_header`, :func:`semicolon_table`), by ``predict`` and the endpoint
    alike: the endpoint looked at the first lines that were not blank for a TSV's, and a body with blank lines among
    its first ones was a TSV to one and reviews, one a line, to the other."""
    ahead = list(itertools.islice(lines, HEADER_LOOKAHEAD))
    return ahead, itertools.chain(ahead, lines)


def predicted_record(row):
    """Is the CSV record ``row`` one that ``predict`` answers, not a blank one: text in it, or two fields or more (a
    row of empty fields, pandas' row of NaNs: :func:`csv_rows` with ``empty_fields``)? A line of spaces is blank, as
    the endpoint reads it too. The records that tell a table (:func:`tsv_with_header`, predict's first records) are
    counted so: a line of spaces counted as a row of one field made a TSV or CSV with such lines among its first ones
    reviews to predict and a table to the endpoint."""
    return has_text(row) or len(row) > 1


def header_alone(records):
    """Are an input to label's ``records`` (blank ones, ``[]``, left out) one header row training recognizes
    (columns.short_header: ``label,text``) and nothing after it? ``df.head(0).to_csv()``, a file whose rows were never
    written: ``predict`` refuses it ("no data rows"), and the endpoint's ``text/csv`` reads it as a header (it was
    answered as a review, exit 0, as if it held one)."""
    rows = [record for record in records if record]
    return len(rows) == 1 and len(rows[0]) >= 2 and short_header(rows[0])


START_CHARS = 4096  # of a first line, what labeled_csv_start parses


def labeled_csv_start(line, classes):
    """Can an input to label whose first non-blank line is ``line`` hold labeled CSV data: a header row
    (:func:`short_header`: ``label,text``; pandas' ``,text,label``) or a :func:`labeled_csv_row`? Only a first
    test: :func:`labeled_csv_records` decides from the first records."""
    stripped = stripped_start(line, START_CHARS, boms=True)  # (not a copy of all of a line of 60 MB)
    try:
        # The class and the start of the text decide: a prefix is parsed, so that a review longer than the csv
        # module's field limit (128 KiB; raised only once the records decide) is no csv.Error here, which read a
        # labeled file as text (its class a word of each review); not strict: a record that goes on past this
        row = next(csv.reader([stripped]), [])
    except csv.Error:  # a lone \r inside the line: text (predict names such input as one line)
        return False
    return len(row) >= 2 and (short_header(row) or index_header_start(row) or typed_header_kind(row) is not None
                              or class_and_text_names(row) or labeled_csv_row(row, stripped.startswith('"'), classes))


def labeled_csv_records(records, quoted, classes, header=True):
    """Is an input to label labeled CSV, judged by its first records (:data:`HEADER_LOOKAHEAD` + 1 of them, blank
    ones left out; ``quoted``: the first one's first field was quoted)? One line is not enough: reviews start with
    ``1,000 calories``, ``2,5 stars`` (a decimal comma) or ``Class, style and comfort``, and a file read as CSV
    would lose their first words, or be refused at its first line without a comma.

    It is when the first record is a labeled row (:func:`labeled_csv_row`) or, with ``header``, a header row
    (:func:`short_header`), and at least half of the records after it are of the same kind: labeled rows (their class one of
    ``classes`` or a whole number) or rows as wide as the header; for a labeled row, not every record may read as a
    number with a comma (:func:`number_with_comma`: ``1,000 calories`` alone is a review; pandas' unquoted
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
    if header and unnamed_class_header(first, rest, classes):
        return True
    typed = header and prose_commas(first) and typed_header(first, rest, classes)
    if header and prose_commas(first) and not typed:
        # A space after a comma is prose's, not a CSV writer's (pandas, csv and R write a header's names with none): a
        # first review of two short phrases, one a class column's name ("Overall, highly recommended."; "Great phone,
        # overall"), over reviews with commas, was taken for a header of a class and a text column: left unanswered,
        # and every review after it cut at its first comma, the words before it taken for its class (as the endpoint)
        header = False
    if header and (short_header(first) or typed
                   or (index and (one_column_text_header(first) or series_values_header(first)))):
        wide = [r for r in rest if len(r) == len(first)]
        if table_header(first) and 2 * sum(any(c[:1].isspace() for c in r[1:]) for r in wide) >= len(wide):
            # A table's rows, as a program writes them, put no space after a comma (a text with commas is quoted):
            # reviews with as many commas as a first line of short words (title,date; Good,text,bad) put one after
            # each, as prose does. Read as a table, that line went unanswered and the reviews were cut to a column.
            return False
        return 2 * len(wide) >= len(rest) > 0
    if not labeled_csv_row(first, quoted, classes):
        return False
    labeled = [r for r in rest if len(r) >= 2 and (r[0].strip() in classes or is_int_text(r[0].strip())
                                                    or whole_number(r[0].strip()) in classes)]
    if 2 * len(labeled) < len(rest):
        return False
    if quoted:
        return True
    return 1 + len(labeled) >= MIN_UNQUOTED_ROWS and not all(number_with_comma(r) for r in [first] + labeled)


def typed_header_kind(row):
    """Which header ``row`` would be if it were one typed by hand (``Sentiment, Review Body``), as training reads
    it: ``"class first"`` (its first name a class column's training knows), ``"class last"`` (its last is, and
    training reads the others as text: columns.header_layout), ``"texts"`` (text columns only, none a class's:
    columns.text_header_columns; training reads it as a header and refuses it), else None; each field a short name,
    none a number. Only the rows below it tell whether it is one (:func:`typed_header`)."""
    if len(row) < 2 or not short_names(row) or any(reads_as_number(c) for c in row):
        return None
    names = [c.lstrip("\ufeff").strip().lower() for c in row]
    if names[0] in HEADER_LABEL_NAMES:
        return "class first"
    if names[-1] in HEADER_LABEL_NAMES:
        layout = header_layout(row)
        return "class last" if layout is not None and layout[0] == len(row) - 1 else None
    if not any(n in HEADER_LABEL_NAMES for n in names) and text_header_columns(row) is not None:
        return "texts"
    return None


def typed_header(first, rest, classes):
    """Is ``first``, a first row with a space after a comma as prose has one (columns.prose_commas: ``Sentiment,
    Review Body``, typed by hand, one name training does not know), a header row all the same? Training reads it as
    one (its names matched stripped); predict and the endpoint took it for a review and answered every row whole, its
    class a word of its text. It is, unambiguously, when it could be one (:func:`typed_header_kind`) and the ``rest``
    (the records after it) are, on their own, what no review list is: with the class first, labeled rows of the
    model's ``classes`` (:func:`labeled_csv_records`, unquoted: 4 rows at least); with the class last, rows as wide as
    it with one of them last (:func:`class_last_rows`); with text columns only, rows as a CSV writer writes them
    (:func:`writers_rows`). A first line that names a class column above such rows is no labeled row, nor a review of
    theirs. A review of short phrases (``Overall, highly recommended.``; ``Summary, great phone``) over reviews,
    which put a space after their commas, stays a review."""
    kind = typed_header_kind(first)
    if kind == "class first":
        return labeled_csv_records(rest, False, classes, header=False)
    if kind == "class last":
        return class_last_rows(rest, classes) and len(next(r for r in rest if r)) == len(first)
    return kind == "texts" and writers_rows(rest, len(first))


def unnamed_class_header(first, rest, classes):
    """Is ``first`` a header row of two names training does not know, a class column's and a text column's, whatever
    they are (the SMS Spam Collection's ``v1,v2,,,``: columns.class_and_text_names, columns.unread_header), over
    ``rest`` (the records after it) that are on their own labeled rows of the model's ``classes``
    (:func:`labeled_csv_records`, unquoted: 4 rows at least)? Training refuses it, to be told its columns
    (``--label-column v1 --text-column v2``); predict and the endpoint answered it as a review and every row whole,
    its ``ham,`` or ``spam,`` a word of its text. The model's classes below it, which its first name is not among,
    leave no doubt: a header, the class first. (A first name that is one of them, ``positive,great``, is a record.)"""
    return (class_and_text_names(first) and header_layout(first) is None and text_header_columns(first) is None
            and unread_header(first, [r for r in rest if r], classes)
            and labeled_csv_records(rest, False, classes, header=False))


def writers_rows(records, width):
    """Are ``records`` (blank ones left out) rows of a table of ``width`` columns as a CSV writer writes them: each as
    wide, no field after the first starting with a space (pandas, csv and R put none after a comma; prose does, and
    a review's own commas make reviews one a line differ in width), :data:`MIN_UNQUOTED_ROWS` of them at least?"""
    rows = [r for r in records if r]
    return len(rows) >= MIN_UNQUOTED_ROWS and all(len(r) == width and not any(c[:1].isspace() for c in r[1:])
                                                  for r in rows)


def class_last_rows(records, classes, at=-1):
    """Are ``records`` (no header among them: a CSV request's, a Batch Transform mini-batch after the first of a file
    whose class comes after its text, ``text,label``, whose header only the first mini-batch held; or the rows below a
    typed header, :func:`typed_header`) rows with the class last? Every one (blank ones left out),
    :data:`MIN_UNQUOTED_ROWS` or more, as wide as the others (a CSV writer's; reviews one a line, unquoted, differ
    where one holds a comma), two fields or more, the last one of
    the model's ``classes``, and not after a digit (``I'd say 4,5``: a decimal comma). A review's own words are no
    class column in every record: a record or three (a small last mini-batch, SingleRecord) are too thin a sign, as
    they are for a class first (formats.labeled_csv_records). The caller asks only when the class is not first.
    ``at``: the class's column, -1 (last) or 0 (first: a TSV's rows, :func:`labeled_tsv_rows`)."""
    rows = [r for r in records if r]
    return (len(rows) >= MIN_UNQUOTED_ROWS and len({len(r) for r in rows}) == 1 and len(rows[0]) >= 2
            and all(r[at].strip() in classes
                    and not (at == -1 and r[-1].strip().isdigit() and r[-2].rstrip()[-1:].isdigit()) for r in rows))


def labeled_tsv_rows(records, classes):
    """Are ``records`` (a headerless input's first ones read tab-separated: :data:`HEADER_LOOKAHEAD` + 1 of them, blank
    ones left out) rows with one of the model's ``classes`` first (``2<TAB>great food``, as training reads a labeled
    TSV) or last (``great food<TAB>2``) in every one of them (:func:`class_last_rows`: as many as it asks for, one
    width)? ``"first"``, ``"last"``, else None. predict and the endpoint answered each line whole, its class a word of
    its review; a review holding a tab stays one unless every first record has the pattern."""
    rows = [r for r in records if r and not excel_sep_record(r)]
    return "last" if class_last_rows(rows, classes) else "first" if class_last_rows(rows, classes, at=0) else None


def class_last_table(records, classes):
    """What an input to label is, judged by its first records (``records``: :data:`HEADER_LOOKAHEAD` + 1 of them,
    blank ones left out) when it is a table with the model's ``classes`` last (``text,label``): ``"rows"`` when every
    record is such a row (:func:`class_last_rows`: ``df[["text", "label"]].to_csv(header=False, index=False)``),
    ``"header"`` when the first is a header row of names of the user's own (``feedback,verdict``; none of those
    classes, no space after a comma as prose has: a typed header is :func:`typed_header`'s) above such rows; else
    None. predict and the endpoint answered every record whole, the class a word of its review (and the answer then
    partly the label), and such a header as a review too. The model's classes last in every record, as many as the
    class-first rule asks for (:data:`MIN_UNQUOTED_ROWS`), leave no doubt: a review that ends with a comma and one of
    their names is one record, not all of them."""
    # (Excel's sep=, where files were joined is no record, as predict and the endpoint read them: it made such files
    # reviews, one a line, to both)
    rows = [r for r in records if r and not excel_sep_record(r)]
    if class_last_rows(rows, classes):
        return "rows"
    if rows and class_last_header(rows[0], rows[1:], classes):
        return "header"
    return None


def class_last_header(first, rest, classes):
    """Is ``first`` a header row of names of the user's own (``feedback,verdict``: :func:`_names_row`, no space after a
    comma, no header training reads columns from: columns.looks_like_header, several_class_columns; the last name
    none of the model's ``classes``) above ``rest``, rows as wide as it with one of those classes last
    (:func:`class_last_rows`)? Training asks for its columns (--label-column); predict and the endpoint read it as
    a header, its last column the class."""
    rows = [r for r in rest if r]
    return (_names_row(first) and not prose_commas(first) and not looks_like_header(first)
            and not several_class_columns(first) and first[-1].strip() not in classes
            and class_last_rows(rows, classes) and len(rows[0]) == len(first))


def tsv_with_header(lines, classes=()):
    """Is an input to label a TSV with a header row, as ``predict`` reads one (and the endpoint a ``text/csv`` body)?
    ``lines``: its first line (after blank ones) and the :data:`HEADER_LOOKAHEAD` lines after it (:func:`lines_ahead`:
    blank ones among them, and counted), with or without their line ends. It is when the first is a TSV's header row
    (columns.tsv_header_line: a tab before any comma, its fields column names) and the records after it
    (:func:`predicted_record`: a line of spaces is none) are as wide as it (:func:`labeled_csv_records`; ``classes``:
    the model's). A review holding a tab (``great food<TAB>loved it``) is no header row."""
    if not lines or not tsv_header_line(lines[0]):
        return False
    records = []
    with contextlib.suppress(csv.Error):
        records = list(csv.reader((line.rstrip("\r\n") + "\n" for line in lines), delimiter="\t"))
    return labeled_csv_records([r for r in records if predicted_record(r)], False, classes)
