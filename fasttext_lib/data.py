"""Reading labeled text: fastText format, CSV and TSV (Zhang et al. 2015 and files with a header), and JSON Lines
(:mod:`fasttext_lib.writers` writes fastText format and Zhang et al. CSV).

* fastText format: ``__label__2 the food was great .`` (one document a line).
* Zhang et al. CSV (Yelp polarity, ag_news, dbpedia, ...): ``"2","the food ""rocked""\\nreally"``;
  the first column is the class, the remaining columns (title, body, ...) are joined with a space;
  ``""`` escapes a quote and a literal ``\\n`` stands for a line break.

The stages, one module each: :mod:`fasttext_lib.lines` opens a local path or ``s3://`` URI (gzip, bzip2 and xz read
transparently) and yields checked lines; this module detects the format (:func:`detect_format`) and parses records;
:mod:`fasttext_lib.columns` decides which columns of a table are the class and the text (a header row such as
``"label","text"`` or Yelp's ``review_id,...,stars,...,text``; pandas' index); :mod:`fasttext_lib.jsonl` reads JSON
Lines, its keys taken as column names. Every malformed input raises :class:`FastTextError` naming the file and its
exact physical line. :func:`read_counted` reads training data for the CLI and SageMaker without keeping its texts:
each chunk of documents is tokenized and counted as it is parsed.
"""
import collections
import contextlib
import csv
import itertools
import numbers
import re
import sys
from dataclasses import dataclass, field
from typing import Dict, List

from . import storage
from .columns import (HEADER_LABEL_NAMES, HEADER_LOOKAHEAD, HEADER_TEXT_NAMES, Columns, check_text_columns,
                      chosen_columns, csv_text, header_columns, ids_column, index_column, index_header_start,
                      index_named, index_note, index_rows, is_int_text, left_out_columns, looks_like_header,
                      number_with_comma, one_column_text_header, one_hot_hint, read_from_note, reads_as_number,
                      semicolon_header, series_values_header, several_class_columns, short_header, short_names,
                      table_header, table_text_columns, table_texts, text_header, tsv_header_line, unread_columns,
                      unread_header, whole_number)
from .errors import FastTextError
from .jsonl import json_input, json_object_line, jsonl_examples
from .label_names import display
from .lines import (LONE_CR_HINT, DecodedLines, chain_lines, check_not_shorter, has_lone_cr, leading_blank_lines,
                    open_decompressed, regular_file_size, stripped_start, without_excel_sep)
from .text import LABEL_PREFIX

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
        return sort_labels(self.labels)


    def head(self, n):
        return LabeledTexts(list(self.labels)[:n], list(self.texts)[:n], dict(self.names), self.class_from)

    def subset(self, indices):
        """The documents at ``indices`` (positions), in that order (names kept)."""
        # (positions, also of a DataFrame's columns, LabeledTexts(df["label"], df["text"]): a Series is indexed by its
        # index labels, which after train_test_split or df.sample() are no positions, and split_validation failed in a
        # KeyError traceback, or took other rows than drawn)
        labels, texts = list(self.labels), list(self.texts)
        return LabeledTexts([labels[i] for i in indices], [texts[i] for i in indices], dict(self.names),
                            self.class_from)

    def display_labels(self):
        """Each document's label as shown: its name when known, else the raw label."""
        return display(self.labels, self.names)


def check_labeled_texts(data, what, counted_too=False):
    """Refuse what is not :class:`LabeledTexts` (nor, with ``counted_too``, :class:`CountedTexts`) in one line: a
    DataFrame or Series passed as the data itself was an AttributeError traceback ("'DataFrame' object has no
    attribute 'labels'") from deep in train, autotune or evaluate."""
    if isinstance(data, LabeledTexts) or (counted_too and isinstance(data, CountedTexts)):
        return
    raise FastTextError(f'{what} must be LabeledTexts (data.read_labeled(path), or LabeledTexts(df["label"], '
                        f'df["text"]) for a DataFrame\'s columns), got a {type(data).__name__}')


def as_read_from_a_file(data, what):
    """``data`` (:class:`LabeledTexts`) with every label and text a str, as a file's reader gives them; ``data``
    itself when they are. ``what``: how the error calls it (``train_data``).

    Built from a DataFrame (``LabeledTexts(df["label"], df["text"])``), a class column of numbers is ints (pandas
    reads the Zhang sets' 1 / 2 so), or floats once it held a missing value: each was an AttributeError traceback
    from sorting or encoding the labels. A whole number is its digits, as JSON Lines reads one (``5.0`` is class
    ``5``: jsonl), a bool ``True`` / ``False`` (pandas' ``astype(str)``); a missing class (NaN, None, ``pd.NA``) or
    text (a TypeError from inside the featurizer), or any other value, is refused in one line naming its row. The
    classes are then read as a file's are (:func:`whole_number_classes`: str classes ``"1.0"``, ``"2.0"`` are 1 and 2)."""
    check_labeled_texts(data, what)
    labels, texts = data.labels, data.texts
    if all(type(label) is str for label in labels) and all(type(text) is str for text in texts):
        if any(_unstripped(label) for label in labels):  # (a reader's classes are stripped already: no copy)
            labels = [_label_as_read(label, f"{what}.labels[{i}]") for i, label in enumerate(labels)]
        read = whole_number_classes(labels)  # (str classes "1.0", "2.0": as a file of them is read)
        # (the readers' own lists: one pass each, no copy)
        return data if read is data.labels else LabeledTexts(read, texts, _names_of(data, read), data.class_from)
    labels = whole_number_classes([_label_as_read(label, f"{what}.labels[{i}]") for i, label in enumerate(labels)])
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise FastTextError(f"{what}.texts[{i}] is {text!r} ({type(text).__name__}), not a str"
                                + (": a missing value? fill it first (df['text'].fillna(''))" if missing_value(text) else
                                   ": decode it first (text.decode('utf-8'))" if isinstance(text, bytes) else ""))
    return LabeledTexts(labels, list(texts), _names_of(data, labels), data.class_from)


def _names_of(data, labels):
    """``data.names`` for its classes as read (``labels``): names given for the classes as written (``{"1.0":
    "negative"}``) follow them where they are read as whole numbers (train refused them as naming classes the data
    does not have)."""
    from .label_names import keyed_by_class

    return keyed_by_class(dict(data.names), labels)


def missing_value(value):
    """A DataFrame's missing value: NaN (a float column's, NumPy's too), None (an object column's), ``pd.NA``."""
    return value is None or type(value).__name__ == "NAType" or (isinstance(value, numbers.Real) and value != value)


def _unstripped(label):
    return not label or label[0].isspace() or label[-1].isspace()


def _label_as_read(label, name):
    """One label of a DataFrame's class column as a file's reader reads it (:func:`as_read_from_a_file`): a str
    without the whitespace around it, as the CSV and JSON Lines readers strip a class (``'positive '``, typed so in
    some rows, trained as a class of its own beside ``positive``); an empty one is a missing class."""
    if isinstance(label, str):
        if label.strip():
            return label.strip()
        raise FastTextError(f"{name} is {label!r} (str): a document without a class; drop such rows first "
                            f"(df.dropna(subset=['label']), or df[df['label'].str.strip() != ''])")
    if missing_value(label):
        raise FastTextError(f"{name} is {label!r} ({type(label).__name__}): a document without a class; drop such rows "
                            f"first (df.dropna(subset=['label']))")
    if type(label).__name__ in ("bool", "bool_"):
        return str(bool(label))
    if isinstance(label, numbers.Integral):
        return str(int(label))
    if isinstance(label, numbers.Real) and float(label).is_integer():
        return str(int(label))
    raise FastTextError(f"{name} is {label!r} ({type(label).__name__}), not a str: write the classes as the data "
                        f"does, e.g. df['label'].astype(str)")


def _label_sort_key(label):
    # "2" < "10" for numeric class ids, plain string order otherwise.
    return (0, int(label), "") if label.isdigit() else (1, 0, label)


def sort_labels(labels):
    return sorted(set(labels), key=_label_sort_key)


def _parse_fasttext_line(line, uri, lineno):
    tokens = line.split()
    labels = [t for t in tokens if t.startswith(LABEL_PREFIX)]
    if not labels:
        raise FastTextError(f"{uri}:{lineno}: line has no __label__ prefix")
    if len(labels) > 1:
        # fastText's multi-label files (its cooking tutorial: __label__sauce __label__cheese How much ...) say how to
        # train on them here: one line per (label, text), or the first label alone
        hint = LONE_CR_HINT if has_lone_cr(line) else (
            "; for multi-label data write one line per label and text (__label__a the text, __label__b the text), "
            "or keep each line's first label: sed -E 's/^(__label__[^ ]+)( __label__[^ ]+)+/\\1/'")
        raise FastTextError(f"{uri}:{lineno}: line has {len(labels)} labels; only single-label classification is "
                            f"supported{hint}")
    label = labels[0][len(LABEL_PREFIX):]
    if not label:
        raise FastTextError(f"{uri}:{lineno}: empty label after __label__")
    return label, " ".join(t for t in tokens if not t.startswith(LABEL_PREFIX))


# (a class not yet given, pandas' NaN written as an empty field: the refusal named no way on)
_NO_CLASS = (": a document without a class; drop such rows first (pandas: df.dropna(subset=['label'])"
             ".to_csv(new_path, index=False))")


def _csv_row_to_example(row, uri, lineno, layout=None, tsv=False):
    """``(label, text)`` of one CSV row. ``layout``: ``(label column, text columns, header's column count)`` from a
    header row that names the class column elsewhere than first (``text,label``); None: the class is the first
    column and every other column is text (Zhang et al.). ``tsv``: the row is a TSV's (for errors)."""
    if layout is not None:
        label_col, text_cols, width = layout
        if len(row) != width:  # (a TSV's stray separator is a tab typed in a text: a comma there does no harm)
            raise FastTextError(f"{uri}:{lineno}: malformed CSV row: {len(row)} column(s) where the header row has "
                                f"{width} ({'a tab' if tsv else 'a comma'} in an unquoted text? quote the field)")
        label = row[label_col].strip()
        if not label:
            raise FastTextError(f"{uri}:{lineno}: CSV row has an empty class column{_NO_CLASS}")
        return label, " ".join(row[c] for c in text_cols if row[c]).replace("\\n", " ")
    if len(row) < 2:
        raise FastTextError(f"{uri}:{lineno}: malformed CSV row: expected \"class\",\"text\"[,...] but got {len(row)} column(s)")
    label = row[0].strip()
    if not label:
        raise FastTextError(f"{uri}:{lineno}: CSV row has an empty class column{_NO_CLASS}")
    return label, csv_text(row[1:])


# (a whole float too, 1.0: pandas' to_csv(header=False) of a float class column, read as 1 by whole_number_classes)
_UNQUOTED_CSV = re.compile(r"^\s*-?\d+(\.0+)?\s*,")
# a class number first, headerless (df.to_csv(sep="\t", header=False)); quoted too (quoting=csv.QUOTE_ALL)
_UNQUOTED_TSV = re.compile(r'^\s*(-?\d+(\.0+)? *|"-?\d+(\.0+)?")\t')


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
    return len(row) >= 2 and (short_header(row) or index_header_start(row)
                              or labeled_csv_row(row, stripped.startswith('"'), classes))


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
    if header and any(c[:1].isspace() for c in first[1:]):
        # A space after a comma is prose's, not a CSV writer's (pandas, csv and R write a header's names with none): a
        # first review of two short phrases, one a class column's name ("Overall, highly recommended."; "Great phone,
        # overall"), over reviews with commas, was taken for a header of a class and a text column: left unanswered,
        # and every review after it cut at its first comma, the words before it taken for its class (as the endpoint)
        header = False
    if header and (short_header(first) or (index and (one_column_text_header(first) or series_values_header(first)))):
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


def tsv_with_header(lines, classes=()):
    """Is an input to label a TSV with a header row, as ``predict`` reads one (and the endpoint a ``text/csv`` body)?
    ``lines``: its first line (after blank ones) and up to :data:`HEADER_LOOKAHEAD` lines after it, with or without
    their line ends. It is when the first is a TSV's header row (columns.tsv_header_line: a tab before any comma, its
    fields column names) and the records after it are as wide as it (:func:`labeled_csv_records`; ``classes``: the
    model's). A review holding a tab (``great food<TAB>loved it``) is no header row."""
    if not lines or not tsv_header_line(lines[0]):
        return False
    records = []
    with contextlib.suppress(csv.Error):
        records = list(csv.reader((line.rstrip("\r\n") + "\n" for line in lines), delimiter="\t"))
    return labeled_csv_records(records, False, classes)


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


class _UndetectedFormat(FastTextError):
    """:func:`detect_format`'s error when line 1 says nothing (not a tab- or semicolon-separated file, which is
    named as such): :func:`examples_of_lines` then looks at the first lines (:func:`word_class_csv`)."""


def detect_format(first_line, uri):
    stripped = first_line.lstrip("\ufeff").lstrip()
    if json_object_line(stripped):
        return "jsonl"
    if stripped.startswith(LABEL_PREFIX):
        return "fasttext"
    if semicolon_header(stripped) or (stripped.startswith('"') and _separated_by(stripped.rstrip("\r\n"), ";")):
        # (a quoted one, "sentiment";"review" or "positive";"great food": R's write.csv2, QUOTE_ALL, was refused as
        # malformed CSV, and a header with spaces, class name;review text, as of no format: named so by predict)
        raise _semicolon_separated(uri)
    quoted_tsv = stripped.startswith('"') and _separated_by(stripped.rstrip("\r\n"), "\t")
    if (stripped.startswith('"') and not quoted_tsv) or _UNQUOTED_CSV.match(stripped):
        return "csv"
    # (a first line longer than the csv module's 128 KiB field limit, 2<TAB>a long document: its "field larger than
    # field limit" was taken for a lone \r's error, and the TSV refused as an old Mac file)
    allow_long_csv_fields()
    try:
        row = next(csv.reader([stripped]), [])
    except csv.Error:  # a lone \r inside line 1 (class,text\r...: an old Mac file) stopped training in a traceback
        raise FastTextError(f"{uri}:1: cannot detect the format of line 1: it holds a line break inside it"
                            f"{LONE_CR_HINT}") from None
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
        # words over the first lines (examples_of_lines: word_class_csv): GLUE's CoLA (gj04<TAB>1<TAB><TAB>sentence,
        # no header) was trained on its sources as the classes, the real class a word of the text, and text<TAB>label
        # lines on each text as a class of its own
        if quoted_tsv or "," not in line or line.index("\t") < line.index(","):
            cells = next(csv.reader([line], delimiter="\t"), [])
            if (_UNQUOTED_TSV.match(line) or (looks_like_header(cells) and not several_class_columns(cells))
                    or (index_named(cells) and short_names(cells[1:]))):
                return "tsv"
            if len(cells) >= 3 and short_names(cells) and not any(reads_as_number(c) for c in cells):
                raise _UnknownColumns(f"{uri}: line 1 reads as a TSV header row ({','.join(c.strip() for c in cells)}), "
                                      f"{unread_columns(cells)}")
        raise _HeaderlessTsv(
            f"{uri}: line 1 looks tab-separated, but it is no header row naming the columns (such as "
            f"sentence<TAB>label) and its lines do not start with a class (a number, or a word that repeats line "
            f"after line): add a header row that names the class and text columns (e.g. pandas: pd.read_csv(path, "
            f"sep='\\t', header=None{'' if quoted_tsv else ', quoting=3'}, names=[...]).to_csv(new_path, index=False)), or give --format tsv "
            f"to read each line's first field as its class")
    cells = line.split(";")
    # a class column before the separator: one word, no comma (text often holds a semicolon)
    if len(cells) >= 2 and cells[0].strip() and not any(c in cells[0] for c in ", "):
        raise _semicolon_separated(uri)
    json_hint = json_input(stripped.strip(), uri)
    if json_hint:
        raise FastTextError(json_hint)
    if len(row) >= 3 and short_names(row) and not any(reads_as_number(c) for c in row):
        # a header of a table with more than a class and a text (tweet_id,airline_sentiment,...,text) whose class
        # column has a name training does not know: the columns can be named
        raise _UnknownColumns(f"{uri}: line 1 reads as a CSV header row ({','.join(c.strip() for c in row)}), "
                              f"{unread_columns(row)}")
    raise _UndetectedFormat(
        f"{uri}: cannot detect the format of line 1 (expected '__label__X text', a '\"class\",\"text\"' CSV row, or a "
        f"CSV header row naming the class column ({', '.join(sorted(HEADER_LABEL_NAMES)[:6])}, ...) and the text "
        f"column(s) ({', '.join(sorted(HEADER_TEXT_NAMES)[:6])}, ...))"
    )


def _semicolon_separated(uri):
    """:func:`detect_format`'s error for a semicolon-separated file, with the conversion that reads it (a first line
    that is no header row is kept a row too: pandas takes it for the header and writes it back as the first line)."""
    return FastTextError(
        f"{uri}: line 1 looks semicolon-separated; only comma- and tab-separated files, JSON Lines and fastText "
        f"format are read: convert it (e.g. pandas: pd.read_csv(path, sep=';').to_csv(new_path, index=False))")


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


class _HeaderlessTsv(FastTextError):
    """:func:`detect_format`'s error for a tab-separated line 1 that is neither a header nor a class number first:
    :func:`examples_of_lines` reads it as a TSV when the first lines are classes written as words
    (:func:`word_class_csv`: ``positive<TAB>the text``)."""


class _UnknownColumns(_UndetectedFormat):
    """:func:`detect_format`'s error for a header row whose class column it cannot tell."""


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


def _csv_rows(lines, uri, delimiter=",", empty_fields=False):
    """``(row, first line)`` of each non-empty CSV record (``delimiter``: ``"\t"`` for a TSV). ``empty_fields``: a
    row of empty fields is a record (predict's: see :func:`examples_of_lines`)."""
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
                                    f"inside an unquoted field{LONE_CR_HINT}") from None
            if "field larger than field limit" in str(exc):  # a review this long is read as a file's rest by mistake
                raise FastTextError(f"{uri}:{start}: malformed CSV record starting at this line: a field longer than "
                                    f"{CSV_FIELD_LIMIT >> 20} Mi characters (an unclosed quote? else split the text: "
                                    f"no review is that long)") from None
            raise FastTextError(f"{uri}:{start}: malformed CSV record starting at this line: {exc}{hint}") from None
        # a line of spaces (trailing lines an editor left) is blank, as fastText-format input and a file's leading
        # lines read it; so is a row of empty fields (,, : rows Excel exports below the data once they were formatted
        # or cleared, pandas' row of NaNs), which was refused as "an empty class column", naming no way on
        # Excel's separator line sep=, (or a tab's) where files that start with it were joined (cat a.csv b.csv; the
        # first file's is read as a blank line: lines.without_excel_sep) is one too: it was a document of the class
        # "sep=" and no text
        if ((_has_text(row) or (empty_fields and len(row) > 1))
                and not (len(row) == 2 and not row[1] and row[0].lstrip("\ufeff") == "sep=")):
            yield row, start


def _has_text(row):
    for value in row:  # (every record of a file passes here: no copies, and the class field decides at once)
        if value and not value.isspace():
            return True
    return False


def iter_examples(uri, fmt="auto", note=None, found=None):
    """Yield ``(label, raw_text)`` pairs from a local path or ``s3://`` URI.

    gzip/bzip2/xz files are decompressed; a CSV header row is detected and skipped; errors name the
    exact physical line. ``note``, ``found``: as :func:`examples_of_lines`'.
    """
    if fmt not in FORMATS and not isinstance(fmt, Columns):
        raise FastTextError(f"unknown data format {fmt!r}; choose one of {', '.join(FORMATS)}")
    uri = str(uri)
    stream, compression = open_decompressed(uri)
    try:
        # (compressed data cut short is refused by its decompressor: "corrupt or truncated gzip data")
        opened = regular_file_size(stream) if compression is None else None
        lines = DecodedLines(stream, uri, compression)
        try:
            yield from examples_of_lines(without_excel_sep(lines, uri), uri, fmt, note=note, found=found)
        except FastTextError:
            check_not_shorter(opened, uri, ended=False)  # a record the change cut short: "malformed CSV record"
            raise
        if lines.ended:
            check_not_shorter(opened, uri)
    finally:
        stream.close()


def _one_csv_field(line):
    """Is ``line`` one field read as CSV? Not when it cannot be read (a lone ``\r`` inside it, an old Mac file's
    line ends: the CSV reader's error, which names the file, follows; here it was a traceback)."""
    try:
        return len(next(csv.reader([line.strip()]), [])) < 2
    except csv.Error:
        return False


def examples_of_lines(lines, uri, fmt="auto", predicting=False, note=None, found=None):
    """:func:`iter_examples` of ``lines``: decoded physical lines, each with its line end (the first's BOM
    removed); ``uri`` names them in errors. ``predict`` reads a labeled CSV input with it (``predicting``): there a
    header row of text columns only (columns.text_header_columns: ``title,body``; or one, ``review``:
    columns.one_column_text_header) yields ``(None, text)``, each record's columns joined; training refuses it (it
    names no class column). A first column that is pandas' index (columns.index_column) is left out, and ``note``
    (a callable, or None) is given a line that says so. ``found`` (a dict, or None) is given ``"class_from"``:
    where the classes are read from (:attr:`LabeledTexts.class_from`), and ``"line"``: the line each example starts
    at, as it is handed out (:class:`RecentLines`).

    Each decision about the whole file is a function of its own, in the order they are taken; the loops over the
    records stay here, so that no generator is added between them and the reader (read_counted's speed: docs/RESULTS.md
    §4)."""
    found = {} if found is None else found
    choice, fmt = (fmt, "csv") if isinstance(fmt, Columns) else (None, fmt)
    it = iter(lines)
    blank, first = leading_blank_lines(it)
    if first is None:
        raise FastTextError(f"{uri}: file is empty")
    fmt, it = _format_to_read(first, it, fmt, choice, uri)
    rest = chain_lines(blank + [first], it)
    if fmt == "jsonl":
        yield from jsonl_examples(rest, uri, choice, note, found)
        return
    found["class_from"] = CLASS_FROM_FASTTEXT if fmt == "fasttext" else ""
    if fmt == "fasttext":
        for lineno, line in enumerate(rest, 1):
            if line.strip():
                found["line"] = lineno
                yield _parse_fasttext_line(line, uri, lineno)
        return
    # CSV or TSV: its first records say whether the first row is a header, and which columns are the class and text
    rows, ahead, repeated = _table_lookahead(rest, uri, fmt, predicting, note)
    index = bool(ahead) and index_column(ahead[0][0], [r for r, _ in ahead[1:]])
    header_row = ahead[0][0] if ahead else []  # as the file writes it
    if index:  # pandas' index column first (,label,text): left out, the rest read as usual
        ahead, rows = _without_index_column(ahead, rows, repeated, uri, note)
        repeated = _AlreadySkipped(repeated)  # (its rows are without the header's repeats: not compared again)
    if (choice is None and ahead and text_header(ahead[0][0], [r for r, _ in ahead[1:]], predicting or index, index)
            and (predicting or not several_class_columns(ahead[0][0]))):  # (training asks which is the class)
        header = ahead[0][0]
        columns = _text_only_columns(ahead, header_row, index, predicting, uri, note)  # (training: refused)
        found["class_columns"] = several_class_columns(header)  # (predict: its classes are not scored)
        for text in table_texts(_noting_lines(repeated.skipped(chain_lines(ahead[1:], rows)), found), header, columns,
                                lambda start: f"{uri}:{start}"):
            yield None, text
        return
    columns = _class_and_text_columns(ahead, choice, header_row, predicting, uri)
    layout, names = None, None
    if columns is not None:  # a header row: the records start after it
        layout = _header_layout(ahead[0][0], columns, index, uri, note, found)
        names, ahead = ahead[0][0], ahead[1:]
        if not ahead:
            raise FastTextError(f"{uri}: no data rows (only a header row)")
    if choice is None or not choice.texts:  # (text columns the user named are read as named)
        check_text_columns([r for r, _ in ahead], columns, uri, names)
    if names is None:  # the first row is a record: rows equal to it are records too
        records, width, first_length = chain_lines(repeated.kept(ahead), rows), -1, 0
    else:  # the header's repeats are skipped in this loop, tested first on what a repeat needs (_RepeatedHeader)
        records, width, first_length = chain_lines(ahead, rows), repeated.width, repeated.first_length
        repeated.tell_set_apart()
    for row, start in records:
        if len(row) == width and len(row[0]) >= first_length and repeated.repeats(row):
            repeated.tell(start)
            continue
        if predicting and not _has_text(row):  # (predict's rows of empty fields, kept by _csv_rows: no class, no text)
            continue
        found["line"] = start
        yield _csv_row_to_example(row, uri, start, layout, fmt == "tsv")


def _format_to_read(first, rest, fmt, choice, uri):
    """``(format, rest)``: what to read a file as (``fasttext``, ``csv``, ``tsv`` or ``jsonl``) whose first non-blank
    line is ``first``; ``fmt``: the format given (``auto``: detected), ``choice``: the columns the user named
    (:class:`Columns`) or None. ``rest``: the lines after ``first`` (an iterator), returned with any that detection
    looked at put back."""
    if choice is not None and "\t" in first and _one_csv_field(first):
        return "tsv", rest  # (columns named in a header of tabs, not commas)
    # (a JSON object is no CSV record: --format csv on JSON Lines read each object's '{"review_id": "..."' as its
    # class, one class per document, and its other keys and values as the text)
    if fmt == "jsonl" or (fmt in ("auto", "csv") and json_object_line(first.strip())):
        return "jsonl", rest
    if fmt != "auto":
        return fmt, rest
    return _detected_format(first, rest, uri)


def _detected_format(first, rest, uri):
    """``(format, rest)`` of a file of no format given: :func:`detect_format` of its first line; when that says
    nothing, the first :data:`HEADER_LOOKAHEAD` lines after it (taken from ``rest``, and put back) are classes written
    as words (:func:`word_class_csv`), or the file is refused."""
    try:
        return detect_format(first, uri), rest
    except FastTextError as exc:
        ahead = list(itertools.islice(rest, HEADER_LOOKAHEAD))
        rest = chain_lines(ahead, rest)
        if isinstance(exc, _HeaderlessTsv) and word_class_csv([first] + ahead, "\t"):
            return "tsv", rest  # (positive<TAB>the text)
        if word_class_csv([first] + ahead):
            return "csv", rest  # (positive,the text; positive,a text<TAB>with a tab)
        if not isinstance(exc, _UndetectedFormat) or isinstance(exc, _UnknownColumns):
            raise  # a tab- or semicolon-separated file: as said; a header: name its columns, as said
        raise FastTextError(f"{exc}; a CSV whose class is written as a word (positive,the text) is read "
                            f"with --format csv") from None


def _table_lookahead(lines, uri, fmt, predicting, note):
    """``(rows, ahead, repeated)`` of a CSV or TSV file (``fmt``): its records, ``(row, first line)`` each, of which
    ``ahead`` holds the first :data:`HEADER_LOOKAHEAD` + 1 (that decide what its first row is) and ``rows`` the rest;
    ``repeated``: the rows that repeat the first one (:class:`_RepeatedHeader`), left out of ``ahead``."""
    counted = _Counted(lines)  # counts the lines the CSV reader takes: record start lines
    # predict answers a table of text columns one record each, a row of empty fields too (pd.read_csv reads it as a
    # row of NaNs): left out, every answer after it was one off; a labeled one's are left out below, as training does
    rows = _csv_rows(counted, uri, "\t" if fmt == "tsv" else ",", empty_fields=predicting)
    ahead = list(itertools.islice(rows, HEADER_LOOKAHEAD + 1))
    repeated = _RepeatedHeader(ahead, uri, note, "<TAB>" if fmt == "tsv" else ",")  # (as the note shows it)
    return rows, repeated.look_ahead(ahead), repeated


def _without_index_column(ahead, rows, repeated, uri, note):
    """``(ahead, rows)`` (:func:`_table_lookahead`'s) without their first column, pandas' index (``,label,text``:
    :func:`index_column`), which ``note`` is told of; rows that repeat the header are left out of ``rows``."""
    if note is not None:
        note(index_note(uri, ahead[0][0]))
    rows = index_rows(repeated.skipped(chain_lines(ahead[1:], rows)), lambda start: f"{uri}:{start}")
    ahead = [(ahead[0][0][1:], ahead[0][1])] + list(itertools.islice(rows, len(ahead) - 1))
    return ahead, rows


def _text_only_columns(ahead, header_row, index, predicting, uri, note):
    """The columns ``predict`` reads of a table whose header row (``ahead[0]``; ``header_row``: as the file writes it)
    names text columns only (:func:`text_header`), ``note`` told of those it leaves out. Training refuses such a
    header (:func:`_no_class_column`), and the file is refused when no record follows it."""
    header, start = ahead[0]
    later = [r for r, _ in ahead[1:]]
    columns = table_text_columns(header, later)
    if not predicting:
        raise _no_class_column(uri, start, header, header_row, columns, later, index)
    if len(ahead) == 1:
        raise FastTextError(f"{uri}: no data rows (only a header row)")
    left = left_out_columns(header, (-1, columns))
    if left and note is not None:
        note(read_from_note(uri, "column", [c.strip() for c in header], columns, left))
    return columns


def _no_class_column(uri, start, header, header_row, columns, later, index):
    """Training's error for a header row of text columns only (line ``start``; ``header``: without pandas' index,
    ``header_row``: as written): ``columns``, the text columns, are fewer than the header's (a table of reviews with
    more columns: the class may be one of them); its first column is pandas' index (``index``: its row numbers
    were trained on as the classes, one document each); or it has text columns alone."""
    if columns != list(range(len(header))):  # a table of reviews with more columns, none a class
        return FastTextError(
            f"{uri}:{start}: the CSV header row ({','.join(header_row)}) names no class column training "
            f"knows ({', '.join(sorted(HEADER_LABEL_NAMES)[:8])}, ...); if one of them is the class, name "
            f"it: --label-column NAME (the SageMaker job's label_column); else label these texts with predict"
            f"{one_hot_hint(header, later)}")
    if index:  # its row numbers were trained on as the classes, one document each
        names = ["text"] if series_values_header(header) else [c.strip() for c in header]
        how = (f'pd.DataFrame({{"label": labels, "{names[0]}": texts}}).to_csv(path, index=False)'
               if len(names) == 1 else
               f'df[[{", ".join(repr(n) for n in ["label"] + names)}]].to_csv(path, index=False)')
        return FastTextError(
            f"{uri}:{start}: the CSV header row ({','.join(header_row)}) names no class column: its first "
            f"column is pandas' index (row numbers, not classes), the rest text; write the file with its "
            f"classes in a column named e.g. label, without the index: {how}; or label these texts with "
            f"predict")
    first_is_class = " (its first column would be read as each row's class)" if len(header) > 1 else ""
    return FastTextError(
        f"{uri}:{start}: the CSV header row ({','.join(header_row)}) names no class column, only text columns"
        f"{first_is_class}; add the class as a column named "
        f"e.g. label (label,{','.join(header)}), or label these texts with predict")


def _class_and_text_columns(ahead, choice, header_row, predicting, uri):
    """``(class column, text columns)`` of a table whose first row (``ahead[0]``; ``header_row``: as the file writes
    it) is a header row: the columns the user named (``choice``), else those its names say
    (:func:`header_columns`); None when the first row is a record (the class first, as Zhang et al.). A first row
    that reads as a header naming no class column, or one whose class column holds ids, is refused."""
    later = [r for r, _ in ahead[1:]]
    if choice is not None and ahead:
        return chosen_columns(ahead[0][0], choice, later, uri)
    columns = header_columns(ahead[0][0], later) if ahead else None
    if columns is None and ahead and unread_header(ahead[0][0], later):
        raise FastTextError(f"{uri}:{ahead[0][1]}: its first row reads as a header ({','.join(header_row)}), "
                            f"{unread_columns(ahead[0][0])}")
    first_name = ahead[0][0][0].lstrip("\ufeff").strip() if ahead else ""
    if (columns is not None and columns[0] == 0 and not predicting and first_name.lower() not in HEADER_LABEL_NAMES
            and ids_column([r[0] for r in later if r])):
        # a header whose first column has a name training does not know, beside text columns (review_id,text:
        # reviews to label, with their ids) is read with that column as the class, as Zhang et al.'s header
        # ("Class Index",Title,Description) is; ids there made a class of every review
        raise FastTextError(
            f"{uri}:{ahead[0][1]}: the header row ({','.join(header_row)}) puts {first_name!r} first, where the "
            f"class goes, but over the first {len(later)} rows it holds ids (nearly all different, with digits: "
            f"{later[0][0].strip()!r}, ...), not classes; name the class column: --label-column NAME (the "
            f"SageMaker job's label_column), or label these texts with predict")
    return columns


def _header_layout(header, columns, index, uri, note, found):
    """:func:`_csv_row_to_example`'s ``layout`` of the records under the header row ``header`` whose ``(class column,
    text columns)`` are ``columns`` (None: the class first and every other column text, as without a header);
    ``found`` is told where the classes are read from (``index``: a column of pandas' index was left out before
    them), and ``note`` of the columns left out."""
    label_col, text_cols = columns
    layout = None
    if label_col != 0 or len(text_cols) != len(header) - 1:  # text,label or ,label,text (pandas)
        layout = (label_col, text_cols, len(header))
    found["class_from"] = f"column {label_col + 1 + index} ({header[label_col].strip()!r})"
    left = left_out_columns(header, columns)
    if left and note is not None:
        note(read_from_note(uri, "column", [c.strip() for c in header], text_cols, left, label_col))
    return layout


def _header_key(row):
    return [field.lstrip("\ufeff").strip() for field in row]


class _RepeatedHeader:
    """The rows after a file's first row that are that row again. When the first row is a header, they are skipped:
    CSV files written each with its header and joined (``cat a.csv b.csv``, an export in parts) repeat it where the
    next one starts, and it was read as a document (its class the class column's name, ``label`` or ``sentiment``: a
    class of one document, trained on without a word; predict answered it). ``note`` (a callable, or None) is told of
    the first. The look-ahead that decides whether the first row is a header sees none of them (a file joined from
    parts of a few rows had its header taken for data); when it is no header (a Zhang et al. file whose first review
    occurs again), they are read as the documents they are. A header of one column is no such row: a first line
    ``review`` that occurs again is a review (:func:`columns.one_column_text_header`). A repeat is the header in any
    capitals (``Sentiment,Review`` after ``sentiment,review``: parts exported by different tools), every field of it:
    a row that only starts as the header does is a document."""

    def __init__(self, ahead, uri, note, delimiter=","):
        self.key = _header_key(ahead[0][0]) if ahead else None
        self.folded = [name.lower() for name in self.key] if ahead else None
        # What a row needs to be compared at all, tested inline by the reading loop before it calls :meth:`repeats`
        # (a generator and a call per record cost 16 ms of the 0.8 s that 88k Yelp-shaped records under label,text
        # take to parse; 3 ms so): as many fields as the header, which has two or more (-1: no row), and a first field
        # at least as long as the header's first name (stripped, a repeat's is as long: :meth:`repeats`; a class, 1 or
        # positive, seldom is).
        self.width = len(self.key) if ahead and len(self.key) >= 2 else -1
        self.first_length = len(self.key[0]) if ahead else 0
        self.set_apart = [(row, start) for row, start in ahead[1:] if self.repeats(row)]
        self.uri, self.note, self.noted, self.delimiter = uri, note, False, delimiter

    def repeats(self, row):
        """Does ``row`` repeat the header? (:meth:`tell` of it.)"""
        # (a row of two fields or more: a first line "review" that occurs again is a review, one_column_text_header)
        if len(row) != self.width:
            return False
        first = row[0].lstrip("\ufeff").strip()
        # the first field first (the others, reviews, are copied to compare), lowercased only when it is as long as
        # the header's (a class, positive or 1, seldom is): the per-row work of every other row is as it was
        if len(first) != self.first_length or (first != self.key[0] and first.lower() != self.folded[0]):
            return False
        return [field.lower() for field in _header_key(row)] == self.folded

    def look_ahead(self, ahead):
        """The look-ahead without the rows set apart."""
        return [record for record in ahead if record not in self.set_apart] if self.set_apart else ahead

    def kept(self, ahead):
        """The look-ahead with the rows set apart back in their places: the first row is no header."""
        return sorted(ahead + self.set_apart, key=lambda record: record[1]) if self.set_apart else ahead

    def skipped(self, records):
        """``records`` (``(row, first line)`` pairs after the header) without the header's repeats. (The reading
        loop of :func:`examples_of_lines` skips them itself, without this generator over every record:
        :meth:`tell_set_apart`, :meth:`repeats`.)"""
        self.tell_set_apart()
        width, first_length = self.width, self.first_length
        for row, start in records:
            if len(row) == width and len(row[0]) >= first_length and self.repeats(row):
                self.tell(start)
                continue
            yield row, start

    def tell_set_apart(self):
        """Tell of the first of the rows the look-ahead set apart, if any: before the records after the header are
        read (where :meth:`skipped` tells of it)."""
        if self.set_apart:
            self.tell(self.set_apart[0][1])

    def tell(self, start):
        """``note`` is told of the first repeat (at line ``start``), once."""
        if self.note is not None and not self.noted:
            self.noted = True
            self.note(f"{self.uri}:{start}: this row repeats the header row ({self.delimiter.join(self.key)}): files joined with "
                      f"their headers? skipped, as every such row")


class _AlreadySkipped:
    """A :class:`_RepeatedHeader` whose repeats :func:`_without_index_column` took out of the rows already: each
    row of a file with pandas' index column went through the comparison twice, the second time without its index
    field, so that it could never match (a layer of work per row for nothing)."""

    width, first_length = -1, 0  # (no row is compared)

    def __init__(self, repeated):
        self.kept = repeated.kept

    @staticmethod
    def skipped(records):
        return records

    def tell_set_apart(self):
        pass


def _noting_lines(records, found):
    """``records`` (``(record, start line)`` pairs), each one's line put in ``found["line"]`` as it is taken."""
    for record, start in records:
        found["line"] = start
        yield record, start


class RecentLines:
    """An iterator of ``items`` (documents a reader hands out, setting ``found["line"]`` to the line each starts at:
    :func:`examples_of_lines`, ``jsonl.jsonl_texts``) that keeps the lines of the last ``keep`` of them, to name the
    line of one that a chunk read before it was featurized cannot take (features.NoRoomToFeaturize): it was named
    by its place among the documents ("document 7", "record 7"), which a CSV's quoted line breaks, blank lines and
    header put off its line."""

    def __init__(self, items, found, keep):
        self.items, self.found = iter(items), found
        self.lines, self.count = collections.deque(maxlen=keep), 0

    def __iter__(self):
        return self

    def __next__(self):
        item = next(self.items)
        self.lines.append(self.found.get("line"))
        self.count += 1
        return item

    def line_of(self, index):
        """The line document ``index`` (0-based, among all handed out) starts at; None once it is too far back."""
        back = self.count - index
        return self.lines[-back] if 0 < back <= len(self.lines) else None


def whole_number_classes(labels):
    """``labels`` (every class of one read: a file's, or all the files' of a training channel, as its reader gives
    them) as :func:`whole_number` reads them when each one is a whole number written as a float (``1.0``, ``5.0``:
    pandas writes a class column of floats so, as Amazon's ``overall``, or any column that held a missing value); else
    ``labels`` as they are. The one rule of every format (a CSV's or TSV's class column, fastText format's
    ``__label__5.0``, a JSON string ``"5.0"``; a JSON number ``5.0`` is ``5`` already), by which training
    (read_labeled, read_counted), ``evaluate`` (``Predictor.evaluate_examples``) and a DataFrame's classes
    (:func:`as_read_from_a_file`) all read them. A float class column was read as the classes "1.0" ... "5.0" from a
    CSV, and as 1 ... 5 from JSON Lines or a DataFrame: the same data trained different classes, and a names file
    (classes.txt) numbered 1, 2, ... named none of them. Only when all are: a read holding ``1.5``, ``v1.0``,
    ``positive`` or ``1`` beside them has classes that are no floats (``1`` and ``1.0`` would have been one class).
    Over the whole read, not file by file: a channel of a file of 1.0, 1.5, 2.0 beside one of 1.0, 2.0 trained the
    classes 1.0 and 1 as two."""
    distinct = set(labels)
    as_read = {label: whole_number(label) for label in distinct}
    if not distinct or None in as_read.values():
        return labels
    return [as_read[label] for label in labels]


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
    """Read a whole dataset (one or more files, in order: ``uri`` or a list of them) into memory; an empty file is an
    error. The classes are read over all the files at once (:func:`whole_number_classes`), as one file's.

    ``limit``: at most this many documents (a positive integer; ``None``: all).
    ``find_names``: take ``names`` from a names file beside the data (``<stem>.classes.txt`` or
    ``classes.txt``), else from an unpacked Zhang et al. archive's folder name (label_names.py), keeping the
    labels this data has (one file only).
    ``note``: None, or a callable given a line about how the file was read (pandas' index column left out).
    """
    from . import label_names

    check_limit(limit)
    uris = list(uris_of(uri))
    find_names = find_names and len(uris) == 1
    # The names file first: a bad one is reported before the data is read (minutes at Yelp size), not after.
    names_file, found = label_names.find_beside(uris[0]) if find_names else (None, {})
    data = LabeledTexts()
    limited = False
    layout = []
    for examples in _each_file(uris, fmt, note, layout, lambda: len(data.labels)):
        for label, text in examples:
            data.labels.append(label)
            data.texts.append(text)
            if limit is not None and len(data) >= limit:
                limited = True
                break
        if limited:
            examples.close()  # (the file, closed once the limit is reached, not when this returns)
            break
    data.labels = whole_number_classes(data.labels)  # (over every file read: one class is one class in all)
    data.class_from = class_from_files(_class_from_each(layout))
    if find_names:
        data.names = label_names.kept_for_data(found, data.labels, names_file,
                                               subset=limited or label_names.named_for(names_file, uris[0]))
    return data


def _each_file(uris, fmt, note, layout, count):
    """The examples of each of ``uris`` in turn (:func:`iter_examples`: one iterator per file, which the caller reads
    in its own loop, so that no generator is added between the reader and it); a file of none is an error
    (``count()``: the documents taken so far). ``layout`` is given each file's ``(uri, found)`` as it starts
    (:func:`_class_from_each`): read_labeled may stop inside a file (its ``limit``)."""
    for uri in uris:
        before, read = count(), {}
        layout.append((uri, read))
        yield iter_examples(uri, fmt, note=note, found=read)
        if count() == before:
            raise FastTextError(f"{uri}: contains no labeled documents")


def _class_from_each(layout):
    """:func:`class_from_files`' ``per_file`` of :func:`_each_file`'s ``layout``: where each file's classes were read
    from."""
    return [(uri, read.get("class_from", "")) for uri, read in layout]


def uris_of(uri):
    """The files of a read: ``uri`` itself, or each of a list or tuple of them."""
    return uri if isinstance(uri, (list, tuple)) else [uri]


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

    uris = list(uris_of(uris))
    labels, sample, layout = [], [], []
    names_file, found = label_names.find_beside(uris[0]) if find_names and len(uris) == 1 else (None, {})  # before the data, as read_labeled

    def texts():
        for examples in _each_file(uris, fmt, note, layout, lambda: len(labels)):
            for label, text in examples:
                labels.append(sys.intern(label))  # one str per class, not one per document
                if len(sample) < SAMPLE_DOCS:
                    sample.append(text)
                yield text

    try:  # the packed ids go to an unlinked temporary file, not memory (native_features.CodesFile)
        counts = count_tokens(texts(), progress, to_file=True)
    except CodesFileError as exc:
        raise FastTextError(f"cannot keep the training data's token ids in a temporary file in "
                            f"{storage.temporary_root_named()} ({exc.strerror or exc}); set TMPDIR to a writable "
                            f"directory with space") from None
    # The classes over every file read, as one file's (file by file, 1.0 beside 1.5 in one file and 1.0 beside 2.0 in
    # another were two classes, 1.0 and 1): one pass over the interned labels, after the texts are counted.
    labels = whole_number_classes(labels)
    data = CountedTexts(labels, counts, sample, class_from=class_from_files(_class_from_each(layout)))
    if find_names and len(uris) == 1:
        data.names = label_names.kept_for_data(found, labels, names_file, subset=label_names.named_for(names_file, uris[0]))
    return data
