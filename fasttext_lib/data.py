"""Reading labeled text: what is read (:class:`LabeledTexts`, :class:`CountedTexts`) and the readers that read it
(:func:`read_labeled`, :func:`read_counted`, :func:`iter_examples`, :func:`examples_of_lines`).

The stages, one module each: :mod:`fasttext_lib.lines` opens a local path or ``s3://`` URI (gzip, bzip2, xz and .lzma
read transparently) and yields checked lines; :mod:`fasttext_lib.formats` decides the format (fastText, CSV, TSV or JSON
Lines) and parses records; for a table, :mod:`fasttext_lib.header_row` decides what its first row is (a header row
such as ``"label","text"`` or Yelp's ``review_id,...,stars,...,text``; pandas' index) by
:mod:`fasttext_lib.columns`' rules for which columns are the class and the text; :mod:`fasttext_lib.jsonl` reads
JSON Lines, its keys taken as column names. This module runs them over a file, and its loops over the records are
the readers' own (no generator between a record and the caller: read_counted's speed). Every malformed input raises
:class:`FastTextError` naming the file and its exact physical line; the readers keep the line where each class is
first met (``first_lines``: an unknown validation class and classes written in two cases are named by it) and say
once per file how many documents have no words (:func:`note_no_words`). :func:`read_counted` reads training data for
the CLI and SageMaker without keeping its texts: each chunk of documents is tokenized and counted as it is parsed.
(:mod:`fasttext_lib.writers` writes fastText format and Zhang et al. CSV.)
"""
import collections
import json
import numbers
import sys
from dataclasses import dataclass, field
from typing import Dict, List

from . import storage
from .class_folders import refuse_a_directory
from .columns import (Columns, check_text_columns, frame_columns, header_columns, index_column, several_class_columns,
                      table_texts, text_header, title_and_body, whole_number)
from .errors import FastTextError
from .formats import FORMATS, csv_row_to_example, format_to_read, has_text, parse_fasttext_line
from .header_row import (AlreadySkipped, FirstClassWatch, RepeatedHeader, class_and_text_columns, header_layout,
                         labeled_rows_under_one_name, table_lookahead, text_only_columns, without_index_column)
from .jsonl import jsonl_examples
from .label_names import display
from .shell_words import column_flag
from .lines import (DecodedLines, chain_lines, check_not_shorter, leading_blank_lines, open_decompressed,
                    regular_file_size, without_excel_sep)
from .stops import stopped_reading, telling_stops

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
    # where each class is first met, ``{label: (file, line)}`` (read_labeled's, :func:`first_lines_as_read`): the
    # line an error or a warning about the class names; empty for data not read from a file
    first_lines: Dict[str, tuple] = field(default_factory=dict, compare=False, repr=False)
    # the files read, in order, each ``(uri, compression)`` (``"gzip"``, ``"bzip2"``, ``"xz"``, ``"lzma"`` or None:
    # lines.decompressed's): a warning's command that edits them names each one, and none that is compressed
    files: tuple = field(default=(), compare=False, repr=False)
    # the name of the column the classes were read from (a header's, a JSON Lines key; the files' one name where
    # several are read), for the pandas lines of errors and warnings (:func:`pandas_class_column`); None where none
    # names it (fastText format, a CSV without a header, files whose class columns are named differently). A
    # DataFrame's column (LabeledTexts(df["sentiment"], ...)) is named by its Series (:func:`class_column_of`)
    class_column: object = field(default=None, compare=False, repr=False)

    def __len__(self):
        return len(self.texts)

    def classes(self):
        """The distinct labels, sorted (``"2"`` before ``"10"``): raw labels, not their :attr:`names`."""
        return sort_labels(self.labels)


    def head(self, n):
        return LabeledTexts(list(self.labels)[:n], list(self.texts)[:n], dict(self.names), self.class_from,
                            dict(self.first_lines), self.files, class_column_of(self))

    def subset(self, indices):
        """The documents at ``indices`` (positions), in that order (names kept)."""
        # (positions, also of a DataFrame's columns, LabeledTexts(df["label"], df["text"]): a Series is indexed by its
        # index labels, which after train_test_split or df.sample() are no positions, and split_validation failed in a
        # KeyError traceback, or took other rows than drawn)
        labels, texts = list(self.labels), list(self.texts)
        return LabeledTexts([labels[i] for i in indices], [texts[i] for i in indices], dict(self.names),
                            self.class_from, dict(self.first_lines), self.files,  # (a line of each class: still one of it)
                            class_column_of(self))

    def display_labels(self):
        """Each document's label as shown: its name when known, else the raw label."""
        return display(self.labels, self.names)


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
    first_lines: Dict[str, tuple] = field(default_factory=dict, compare=False, repr=False)  # as LabeledTexts'
    files: tuple = field(default=(), compare=False, repr=False)  # as LabeledTexts'
    class_column: object = field(default=None, compare=False, repr=False)  # as LabeledTexts'

    def __len__(self):
        return len(self.labels)

    def classes(self):
        """The distinct labels, sorted, as :meth:`LabeledTexts.classes`."""
        return sort_labels(self.labels)


def column_name(values):
    """The name of the DataFrame column ``values`` is (a pandas Series' ``name``: ``'sentiment'``, or ``0`` of a frame
    read without a header), or None (a list; a Series without a name)."""
    name = getattr(values, "name", None)
    return name if isinstance(name, (str, int)) and not isinstance(name, bool) else None


def class_column_of(data):
    """:attr:`LabeledTexts.class_column` of ``data``, or the name of its labels' Series (a DataFrame's column,
    before :func:`as_read_from_a_file` made it a list)."""
    named = getattr(data, "class_column", None)
    return named if named is not None else column_name(getattr(data, "labels", None))


def pandas_class_column(data=None, class_from="", class_column=None):
    """The column a pandas line of an error or a warning about ``data``'s classes names (or that of data read so:
    ``class_from``, ``class_column``, a reader's ``found``): the user's own (:func:`class_column_of`: a header's
    ``sentiment``, a JSON Lines key, a DataFrame's Series), else ``'label'`` (a CSV without a header, lists); None for
    fastText format, whose classes are in no column (their pandas line was a KeyError pasted)."""
    if data is not None:
        class_from, class_column = getattr(data, "class_from", ""), class_column_of(data)
    if class_from == CLASS_FROM_FASTTEXT:
        return None
    return "label" if class_column is None else class_column


def check_labeled_texts(data, what, counted_too=False):
    """Refuse what is not :class:`LabeledTexts` (nor, with ``counted_too``, :class:`CountedTexts`) in one line: a
    DataFrame or Series passed as the data itself was an AttributeError traceback ("'DataFrame' object has no
    attribute 'labels'") from deep in train, autotune or evaluate."""
    if isinstance(data, LabeledTexts) or (counted_too and isinstance(data, CountedTexts)):
        return
    pandas = sys.modules.get("pandas")  # (only ever given a DataFrame where pandas is imported; not imported here)
    # a frame's own columns (df["sentiment"], df["review"]): df["label"] of a frame without one was a KeyError pasted
    columns = frame_columns(data) if pandas is not None and isinstance(data, pandas.DataFrame) else ("label", "text")
    if columns is None:  # (no df[...] is one of its columns: said in words)
        raise FastTextError(f"{what} must be LabeledTexts (data.read_labeled(path), or for a DataFrame LabeledTexts of "
                            f"its class column and its text column, each a Series), got a {type(data).__name__}")
    # (as string literals: a name's line break, "Sentiment" and Alt+Enter in a spreadsheet's cell, split the line)
    label, text = (f"df[{json.dumps(name, ensure_ascii=False)}]" for name in columns)
    if pandas is not None and isinstance(data, pandas.DataFrame):
        text = title_and_body(data) or text  # (Zhang et al.'s title and body: df[1] alone dropped every body)
    raise FastTextError(f"{what} must be LabeledTexts (data.read_labeled(path), or LabeledTexts({label}, "
                        f"{text}) for a DataFrame's columns), got a {type(data).__name__}")


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
    _check_paired(labels, texts, what)
    # (the errors' pandas lines name the frame's own columns, df['sentiment']: df['label'] was a KeyError pasted)
    column = class_column_of(data)
    named = "label" if column is None else column
    if all(type(label) is str for label in labels) and all(type(text) is str for text in texts):
        if any(_unstripped(label) for label in labels):  # (a reader's classes are stripped already: no copy)
            labels = [label_as_read(label, f"{what}.labels[{i}]", named) for i, label in enumerate(labels)]
        read = whole_number_classes(labels)  # (str classes "1.0", "2.0": as a file of them is read)
        # (the readers' own lists: one pass each, no copy)
        return data if read is data.labels else LabeledTexts(read, texts, _names_of(data, read), data.class_from,
                                                             class_column=column)
    labels = whole_number_classes([label_as_read(label, f"{what}.labels[{i}]", named)
                                   for i, label in enumerate(labels)])
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise FastTextError(f"{what}.texts[{i}] is {text!r} ({type(text).__name__}), not a str"
                                + (f": a missing value? fill it first ({missing_text_fill(texts)})"
                                   if missing_value(text) else
                                   ": decode it first (text.decode('utf-8'))" if isinstance(text, bytes) else ""))
    return LabeledTexts(labels, list(texts), _names_of(data, labels), data.class_from, class_column=column)


def _check_paired(labels, texts, what):
    """Refuse labels and texts that are no pairs, in one line: lists or Series of different lengths (labels longer was
    an IndexError traceback from inside the featurizer; texts longer trained, and evaluate scored up to the shorter
    one, without a word), or two Series of the same rows in different orders (one of them sorted or shuffled), which
    pandas pairs by index and this reading by position: each text with another row's class, without a word. Series
    of other indexes (one reset) are read by position, as lists are."""
    for name, values in (("labels", labels), ("texts", texts)):
        if not hasattr(values, "__len__"):  # (a generator or map: len() was a TypeError traceback, and it reads once)
            raise FastTextError(f"{what}.{name} must be a list, a Series or an array, got a {type(values).__name__}: "
                                f"pass list({name})")
    if len(labels) != len(texts):
        raise FastTextError(f"{what}: {len(labels)} labels but {len(texts)} texts: each document is one label and one "
                            f"text, in order; pass two columns of one DataFrame (LabeledTexts(df['label'], df['text']))")
    pandas = sys.modules.get("pandas")  # (only ever given a Series where pandas is imported; not imported here)
    if pandas is None or not (isinstance(labels, pandas.Series) and isinstance(texts, pandas.Series)):
        return
    ours, theirs = labels.index, texts.index
    if (not ours.equals(theirs) and ours.is_unique and theirs.is_unique and bool(ours.isin(theirs).all())):
        # (or of one order, numbered apart: a frame shuffled and its labels encoded into a new Series, pd.Series(codes),
        # numbered 0, 1, ... in the shuffled order; their indexes cannot tell which, so both ways are said: aligned by
        # index alone, these were paired wrong)
        raise FastTextError(f"{what}: its labels and texts are Series of the same rows in different orders (their "
                            f"indexes differ), which would pair each text with another row's class: take both from "
                            f"one DataFrame (LabeledTexts(df['label'], df['text'])), or align them first "
                            f"(texts.reindex(labels.index)); if they are in the same order already, pass them as "
                            f"lists: LabeledTexts(list(labels), list(texts))")


def missing_text_fill(texts):
    """How to fill the missing texts of ``texts``: its own column's (a Series' name), else ``df['text']``."""
    column = column_name(texts)
    return f"df[{'text' if column is None else column!r}].fillna('')"


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


def label_as_read(label, name, column="label"):
    """One label of a DataFrame's class column (named ``column``) as a file's reader reads it
    (:func:`as_read_from_a_file`): a str without the whitespace around it, as the CSV and JSON Lines readers strip a
    class (``'positive '``, typed so in some rows, trained as a class of its own beside ``positive``); an empty one
    is a missing class."""
    if isinstance(label, str):
        if label.strip():
            return label.strip()
        raise FastTextError(f"{name} is {label!r} (str): a document without a class; drop such rows first "
                            f"(df.dropna(subset=[{column!r}]), or df[df[{column!r}].str.strip() != ''])")
    if missing_value(label):
        raise FastTextError(f"{name} is {label!r} ({type(label).__name__}): a document without a class; drop such rows "
                            f"first (df.dropna(subset=[{column!r}]))")
    if type(label).__name__ in ("bool", "bool_"):
        return str(bool(label))
    if isinstance(label, numbers.Integral):
        return str(int(label))
    if isinstance(label, numbers.Real) and float(label).is_integer():
        return str(int(label))
    raise FastTextError(f"{name} is {label!r} ({type(label).__name__}), not a str: write the classes as the data "
                        f"does, e.g. df[{column!r}].astype(str)")


def _label_sort_key(label):
    # "2" < "10" for numeric class ids, plain string order otherwise.
    return (0, int(label), "") if label.isdigit() else (1, 0, label)


def sort_labels(labels):
    return sorted(set(labels), key=_label_sort_key)


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


def iter_examples(uri, fmt="auto", note=None, found=None):
    """Yield ``(label, raw_text)`` pairs from a local path or ``s3://`` URI.

    gzip/bzip2/xz files are decompressed; a CSV header row is detected and skipped; errors name the
    exact physical line. ``note``, ``found``: as :func:`examples_of_lines`'.
    """
    if fmt not in FORMATS and not isinstance(fmt, Columns):
        raise FastTextError(f"unknown data format {fmt!r}; choose one of {', '.join(FORMATS)}")
    uri = str(storage.expand_home(uri))
    refuse_a_directory(uri)  # (aclImdb/train: said as a directory of class folders, with how to convert it)
    stream, compression = open_decompressed(uri)
    if found is not None:
        found["compression"] = compression  # (LabeledTexts.files)
    try:
        # (compressed data cut short is refused by its decompressor: "corrupt or truncated gzip data")
        opened = regular_file_size(stream) if compression is None else None
        lines = DecodedLines(stream, uri, compression)
        try:
            yield from examples_of_lines(without_excel_sep(lines, uri), uri, fmt, note=note, found=found)
        except FastTextError:
            check_not_shorter(opened, uri, ended=False)  # a record the change cut short: "malformed CSV record"
            damaged = lines.damage()  # (a record of damaged data's garbage: "line has no __label__ prefix")
            if damaged:
                raise FastTextError(damaged) from None
            raise
        if lines.ended:
            check_not_shorter(opened, uri)
    finally:
        stream.close()


def examples_of_lines(lines, uri, fmt="auto", predicting=False, note=None, found=None, classes=(), class_last=False):
    """:func:`iter_examples` of ``lines``: decoded physical lines, each with its line end (the first's BOM
    removed); ``uri`` names them in errors. ``predict`` reads a labeled CSV input with it (``predicting``): there a
    header row of text columns only (columns.text_header_columns: ``title,body``; or one, ``review``:
    columns.one_column_text_header) yields ``(None, text)``, each record's columns joined; training refuses it (it
    names no class column). A first column that is pandas' index (columns.index_column) is left out, and ``note``
    (a callable, or None) is given a line that says so. ``found`` (a dict, or None) is given ``"class_from"``:
    where the classes are read from (:attr:`LabeledTexts.class_from`), and ``"line"``: the line each example starts
    at, as it is handed out (:class:`RecentLines`); with ``predicting``, a ``"blank_records"`` it holds
    (formats.BlankRecords) is told of a table's blank records, which are no examples, and ``classes``, the model's,
    tell a first record from a header of two names (header_row.class_and_text_columns). ``class_last``: predict's
    table without a header whose rows hold one of the model's classes last (formats.class_last_table): each row's
    class is its last column and its text the others, as under a header ``text,label``.

    Each decision about the whole file is a function of its own (its format: :mod:`fasttext_lib.formats`; a table's
    first row: :mod:`fasttext_lib.header_row`), in the order they are taken; the loops over the records stay here, so
    that no generator is added between them and the reader (read_counted's speed: docs/RESULTS.md §4)."""
    found = {} if found is None else found
    choice, fmt = (fmt, "csv") if isinstance(fmt, Columns) else (None, fmt)
    it = iter(lines)
    blank, first = leading_blank_lines(it)
    if first is None:
        raise FastTextError(f"{uri}: file is empty")
    fmt, it = format_to_read(first, it, fmt, choice, uri, len(blank) + 1)
    rest = chain_lines(blank + [first], it)
    if fmt == "jsonl":
        yield from jsonl_examples(rest, uri, choice, note, found)
        return
    found["class_from"] = CLASS_FROM_FASTTEXT if fmt == "fasttext" else ""
    if fmt == "fasttext":
        for lineno, line in enumerate(rest, 1):
            if line.strip():
                found["line"] = lineno
                yield parse_fasttext_line(line, uri, lineno)
        return
    # CSV or TSV: its first records say whether the first row is a header, and which columns are the class and text
    blanks = found.get("blank_records") if predicting else None  # (predict answers them: formats.BlankRecords)
    rows, ahead, repeated, quoted = table_lookahead(rest, uri, fmt, predicting, note, blanks)
    index = bool(ahead) and index_column(ahead[0][0], [r for r, _ in ahead[1:]])
    header_row = ahead[0][0] if ahead else []  # as the file writes it
    if index:  # pandas' index column first (,label,text): left out, the rest read as usual
        ahead, rows = without_index_column(ahead, rows, repeated, uri, note)
        repeated = AlreadySkipped(repeated)  # (its rows are without the header's repeats: not compared again)
    one_name = (predicting and choice is None and not index
                and labeled_rows_under_one_name(ahead, classes, len(ahead) > 1 and ahead[1][1] in quoted))
    if (not one_name and choice is None and ahead
            and text_header(ahead[0][0], [r for r, _ in ahead[1:]], predicting or index, index)
            and (predicting or not several_class_columns(ahead[0][0]))):  # (training asks which is the class)
        header = ahead[0][0]
        if blanks is not None:
            blanks.above_header()
        # (training: refused)
        columns = text_only_columns(ahead, header_row, index, predicting, uri, note, fmt == "tsv")
        found["class_columns"] = several_class_columns(header)  # (predict: its classes are not scored)
        for text in table_texts(_noting_lines(repeated.skipped(chain_lines(ahead[1:], rows)), found), header, columns,
                                lambda start: f"{uri}:{start}", fmt == "tsv"):
            yield None, text
        return
    columns, layout, names = None, None, None
    if one_name:  # text over 1,bad: its rows read as without the header, the class first (evaluate: --format csv)
        found["columns_flags"] = "--format csv"
        names, ahead = ahead[0][0], ahead[1:]
        if blanks is not None:
            blanks.above_header()
    else:
        columns, rows = class_and_text_columns(ahead, choice, header_row, predicting, uri, rows, classes)
        if isinstance(rows, FirstClassWatch):  # (a read that stops early settles it: read_labeled's limit)
            found["first_row_unsettled"] = rows
            rows.tell(note)  # (the rest of the file decides: said before it is read)
    if columns is not None:  # a header row: the records start after it
        layout = header_layout(ahead[0][0], columns, index, uri, note, found)
        if predicting and choice is None and header_columns(ahead[0][0], [r for r, _ in ahead[1:]]) is None:
            # (v1,v2,,,: predict read its columns, which evaluate and training are told: predict's note says how)
            # (--label-column alone reads v2 and the unnamed columns after it, as predict did; --text-column v2, v2
            # only. A name with a comma, "v2, text", is none --text-column can give, which splits its value at commas
            # ("names no such column"): left out, --label-column alone reads that column, as predict did)
            texts = found["text_names"]
            named = len(texts) == 1 and "," not in texts[0]
            found["columns_flags"] = column_flag("--label-column", found['class_column'].strip()) + (
                f" {column_flag('--text-column', texts[0].strip())}" if named else "")
        names, ahead = ahead[0][0], ahead[1:]
        if blanks is not None:
            blanks.above_header()
        if not ahead:
            raise FastTextError(f"{uri}: no data rows (only a header row)")
    checked = columns
    if class_last and names is None:  # (predict: text,label rows, no header; as wide as the first, as under one)
        width = len(ahead[0][0])
        layout = (width - 1, list(range(width - 1)), width)
        checked = layout[:2]
    if choice is None or not choice.texts:  # (text columns the user named are read as named)
        check_text_columns([r for r, _ in ahead], checked, uri, names if columns is not None else None)
    if names is None:  # the first row is a record: rows equal to it are records too
        records, width, first_length = chain_lines(repeated.kept(ahead), rows), RepeatedHeader.NO_ROW, 0
    else:  # the header's repeats are skipped here, tested first on what a repeat needs (header_row.RepeatedHeader)
        records, width, first_length = chain_lines(ahead, rows), repeated.width, repeated.first_length
        repeated.tell_set_apart()
    class_column = found.get("class_column") if names is not None else None  # (header_layout's: for errors)
    for row, start in records:
        if len(row) >= width and len(row[0]) >= first_length and repeated.repeats(row):
            repeated.tell(start)
            continue
        if not has_text(row):  # no class, no text: a blank line, as csv_rows reads a row of empty fields
            # (predict's, kept by csv_rows; training's: pandas' row of NaNs written with its index, 3,, which is a
            # row of empty fields once the index column is left out, and was refused as "an empty class column".
            # Left out as blank lines are, without a note: training says nothing of blank lines either)
            if blanks is not None:  # answered as an empty review in its place, as the endpoint answers it
                blanks.add(start)
            continue
        found["line"] = start
        yield csv_row_to_example(row, uri, start, layout, fmt == "tsv", class_column)


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


@telling_stops(lambda uri, *_, **__: stopped_reading(  # (a Stop: one line in a notebook, not a traceback)
    ", ".join(map(str, uri)) if isinstance(uri, (list, tuple)) else uri))
def read_labeled(uri, fmt="auto", limit=None, find_names=True, note=None):
    """Read a whole dataset (one or more files, in order: ``uri`` or a list of them) into memory; an empty file is an
    error. The classes are read over all the files at once (:func:`whole_number_classes`), as one file's.

    ``limit``: at most this many documents (a positive integer; ``None``: all); the file is not read on past it to
    tell whether a first row of two names is a header (header_row.FirstClassWatch.settle_at_limit).
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
    layout, first_lines = [], {}
    for examples in _each_file(uris, fmt, note, layout, lambda: len(data.labels)):
        uri, read = str(layout[-1][0]), layout[-1][1]
        for label, text in examples:
            data.labels.append(label)
            data.texts.append(text)
            if label not in first_lines:
                first_lines[label] = (uri, read.get("line"))
            if not text or text.isspace():
                count_no_words(read)
            if limit is not None and len(data) >= limit:
                limited = True
                break
        if limited:
            if "first_row_unsettled" in read:  # a header or a record: refused unless settled (header_row)
                read["first_row_unsettled"].settle_at_limit(limit)
            examples.close()  # (the file, closed once the limit is reached, not when this returns)
            note_no_words(uri, read, note)  # (_each_file, left inside this file, says it no more)
            break
    data.labels = whole_number_classes(data.labels)  # (over every file read: one class is one class in all)
    data.first_lines = first_lines_as_read(first_lines)
    data.class_from, data.files = class_from_files(_class_from_each(layout)), _files_of(layout)
    data.class_column = _class_column_of_files(layout)
    if find_names:
        data.names = label_names.kept_for_data(found, data.labels, names_file,
                                               subset=limited or label_names.named_for(names_file, uris[0]))
    return data


def _each_file(uris, fmt, note, layout, count):
    """The examples of each of ``uris`` in turn (:func:`iter_examples`: one iterator per file, which the caller reads
    in its own loop, so that no generator is added between the reader and it); a file of none is an error
    (``count()``: the documents taken so far), and ``note`` is told of its documents without words
    (:func:`note_no_words`) once it is read. ``layout`` is given each file's ``(uri, found)`` as it starts
    (:func:`_class_from_each`; the readers' loops count in ``found`` what :func:`count_no_words` counts): read_labeled
    may stop inside a file (its ``limit``)."""
    for uri in uris:
        before, read = count(), {}
        layout.append((uri, read))
        yield iter_examples(uri, fmt, note=note, found=read)
        if count() == before:
            raise FastTextError(f"{uri}: contains no labeled documents")
        note_no_words(str(uri), read, note)


def _files_of(layout):
    """:attr:`LabeledTexts.files` of :func:`_each_file`'s ``layout``."""
    return tuple((str(uri), read.get("compression")) for uri, read in layout)


def _class_from_each(layout):
    """:func:`class_from_files`' ``per_file`` of :func:`_each_file`'s ``layout``: where each file's classes were read
    from."""
    return [(uri, read.get("class_from", "")) for uri, read in layout]


def _class_column_of_files(layout):
    """:attr:`LabeledTexts.class_column` of :func:`_each_file`'s ``layout``: the name of every file's class column
    when it is one (files of ``sentiment,review`` and ``review,sentiment``: ``sentiment``), else None."""
    names = {read.get("class_column") for _, read in layout}
    return names.pop() if len(names) == 1 else None


def count_no_words(found):
    """Count in ``found`` (a file's, :func:`_each_file`'s) a document without words, the one just read (at
    ``found["line"]``): empty text (CSV ``2,""``, JSON ``"text": null``, a ``__label__2`` line alone) or spaces."""
    found["no_words"] = found.get("no_words", 0) + 1
    found.setdefault("first_no_words", found.get("line"))


def note_no_words(uri, found, note):
    """Tell ``note`` (a callable, or None) how many documents of the file ``uri`` have no words
    (:func:`count_no_words`), once. They are kept: fastText keeps such lines (trains them on its end-of-line token), and
    the featurizer reads an empty document as one ``<unk>``; but a text lost on the way (a column emptied by an export)
    trained without a word said, so one line per file says it."""
    count = found.pop("no_words", 0)
    if not count or note is None:
        return
    first = found["first_no_words"]
    if count == 1:
        said, them = f"1 document has no words (line {first}); it is kept, as fastText keeps such lines, read as", "it"
    else:
        said = (f"{count} documents have no words (the first at line {first}); they are kept, as fastText keeps such "
                f"lines, each read as")
        them = "them"
    note(f"{uri}: {said} one unknown word (<unk>): to leave {them} out, drop {them} first ({_how_to_drop(found)})")


def _how_to_drop(found):
    """How to drop the documents without words of a file (``found``, as its reader left it): a pandas line of the
    file's own text column(s) (a header's, JSON Lines keys: ``text_names``; ``'text'`` where the file names none), or
    for fastText format, which has no columns, the lines to drop. It said ``df['text']`` of every file: pasted for a
    file whose text column is ``review``, a KeyError."""
    if found.get("class_from") == CLASS_FROM_FASTTEXT:
        return "lines of a label alone"
    names = found.get("text_names") or ["text"]
    if len(names) == 1:
        return f"pandas: df[df[{names[0]!r}].fillna('').str.strip() != '']"
    joined = " + ".join(f"df[{name!r}].fillna('')" for name in names)  # (a document is its text columns joined)
    return f"pandas: df[({joined}).str.strip() != '']"


def first_lines_as_read(first_lines):
    """``first_lines`` (``{label: where}``, in the order first met: the readers' ``(file, line)``, evaluate's line)
    keyed by the labels as :func:`whole_number_classes` reads them (``5.0`` as ``5`` when all are), each keeping its
    first."""
    as_read = {}
    for label, where in zip(whole_number_classes(list(first_lines)), first_lines.values()):
        as_read.setdefault(label, where)
    return as_read


def lines_named(first_lines, where):
    """``{label: line}`` of ``first_lines`` for an error that calls the data ``where``: ``3`` where that is its file's
    name (the CLI's errors), else ``3 of train.csv``."""
    return {label: line if uri == str(where) else f"{line} of {uri}" for label, (uri, line) in first_lines.items()}


def uris_of(uri):
    """The files of a read: ``uri`` itself, or each of a list or tuple of them; a ``~`` read as the home folder
    (storage.expand_home: ``read_labeled("~/data/train.csv")`` reads what pandas' ``read_csv`` of it does)."""
    return [storage.expand_home(u) for u in (uri if isinstance(uri, (list, tuple)) else [uri])]


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
    labels, sample, layout, interned, first_lines = [], [], [], {}, {}
    names_file, found = label_names.find_beside(uris[0]) if find_names and len(uris) == 1 else (None, {})  # before the data, as read_labeled

    def texts():
        for examples in _each_file(uris, fmt, note, layout, lambda: len(labels)):
            uri, read = str(layout[-1][0]), layout[-1][1]
            for label, text in examples:
                known = interned.get(label)  # one str per class, not one per document
                if known is None:  # a class met for the first time: where
                    known = interned[label] = sys.intern(label)
                    first_lines[known] = (uri, read.get("line"))
                labels.append(known)
                if not text or text.isspace():
                    count_no_words(read)
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
    data = CountedTexts(labels, counts, sample, class_from=class_from_files(_class_from_each(layout)),
                        first_lines=first_lines_as_read(first_lines), files=_files_of(layout),
                        class_column=_class_column_of_files(layout))
    if find_names and len(uris) == 1:
        data.names = label_names.kept_for_data(found, labels, names_file, subset=label_names.named_for(names_file, uris[0]))
    return data
