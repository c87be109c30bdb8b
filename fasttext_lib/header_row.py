"""What a CSV or TSV file's first row is, decided from the records after it, and what follows from it.

:func:`table_lookahead` reads a table's first :data:`HEADER_LOOKAHEAD` + 1 records; by :mod:`fasttext_lib.columns`'
rules, the first row is a header row or a record (Zhang et al.'s files have no header), and a header names the class
and text columns (:func:`class_and_text_columns`, :func:`header_layout`), or text columns only, which ``predict``
reads and training refuses (:func:`text_only_columns`). pandas' index column is left out
(:func:`without_index_column`), and rows that repeat the header further down (files joined with their headers) are
skipped (:class:`RepeatedHeader`). Each decision tells the user (``note``) of what it leaves out, and refuses in one
line naming the file and its line what it cannot read.

A module of its own because these decisions are about a whole table, taken once before its records are read:
:mod:`fasttext_lib.columns` holds the rules over the rows' values and names, :mod:`fasttext_lib.formats` parses each
record, and :func:`fasttext_lib.data.examples_of_lines` takes these decisions in order and then loops over the
records itself.
"""
import collections
import itertools

from .columns import (FLAG_ADVICE, HEADER_LABEL_NAMES, HEADER_LOOKAHEAD, ColumnsToName, chosen_columns,
                      class_and_text_names, first_value, header_columns, header_or_record, ids_column, index_note,
                      index_rows, left_out_columns, one_column_text_header, one_hot_hint, read_from_note,
                      series_values_header, table_text_columns, text_header, two_names, unread_columns, unread_header,
                      without_trailing_empty)
from .errors import FastTextError
from .formats import CountedLines, csv_rows, labeled_csv_records
from .lines import chain_lines


def table_lookahead(lines, uri, fmt, predicting, note, blanks=None):
    """``(rows, ahead, repeated, quoted)`` of a CSV or TSV file (``fmt``): its records, ``(row, first line)`` each, of
    which ``ahead`` holds the first :data:`HEADER_LOOKAHEAD` + 1 (that decide what its first row is) and ``rows`` the
    rest; ``repeated``: the rows that repeat the first one (:class:`RepeatedHeader`), left out of ``ahead``;
    ``quoted``: the first lines of those in ``ahead`` whose first field is quoted (``"2","great food"``: a sign of a
    labeled row on its own, formats.labeled_csv_records). ``blanks`` (predict's
    :class:`~fasttext_lib.formats.BlankRecords`, or None) is told of the blank records, none of them in ``ahead`` or
    ``rows``: what the first row is is decided as training decides it."""
    counted = CountedLines(lines, look_ahead=True)  # counts the lines the CSV reader takes: record start lines
    # predict answers a table of text columns one record each, a row of empty fields too (pd.read_csv reads it as a
    # row of NaNs): left out, every answer after it was one off; a labeled one's are left out below, as training does
    rows = csv_rows(counted, uri, "\t" if fmt == "tsv" else ",", empty_fields=predicting, blanks=blanks)
    ahead = list(itertools.islice(rows, HEADER_LOOKAHEAD + 1))
    quoted = counted.end_look_ahead()
    repeated = RepeatedHeader(ahead, uri, note, "<TAB>" if fmt == "tsv" else ",")  # (as the note shows it)
    return rows, repeated.look_ahead(ahead), repeated, quoted


def _header_key(row):
    return [field.lstrip("\ufeff").strip() for field in row]


class RepeatedHeader:
    """The rows after a file's first row that are that row again. When the first row is a header, they are skipped:
    CSV files written each with its header and joined (``cat a.csv b.csv``, an export in parts) repeat it where the
    next one starts, and it was read as a document (its class the class column's name, ``label`` or ``sentiment``: a
    class of one document, trained on without a word; predict answered it). ``note`` (a callable, or None) is told of
    the first. The look-ahead that decides whether the first row is a header sees none of them (a file joined from
    parts of a few rows had its header taken for data); when it is no header (a Zhang et al. file whose first review
    occurs again), they are read as the documents they are. A header of one column is no such row: a first line
    ``review`` that occurs again is a review (:func:`columns.one_column_text_header`). A repeat is the header in any
    capitals (``Sentiment,Review`` after ``sentiment,review``: parts exported by different tools), every field of it,
    and with empty fields at its end or without them (``v1,v2,,,`` after ``v1,v2``: the second part written with
    columns without a name, SMS Spam's shape; taken for a record of the class ``v1``, it made the first row one too):
    a row that only starts as the header does is a document."""

    # :attr:`width` when no row is compared (no header of two fields or more)
    NO_ROW = float("inf")

    def __init__(self, ahead, uri, note, delimiter=","):
        self.key = _header_key(ahead[0][0]) if ahead else None
        self.folded = [name.lower() for name in without_trailing_empty(self.key)] if ahead else None
        # What a row needs to be compared at all, tested inline by the reading loop before it calls :meth:`repeats`
        # (a generator and a call per record cost 16 ms of the 0.8 s that 88k Yelp-shaped records under label,text
        # take to parse; 3 ms so): at least as many fields as the header's up to its last named one (a header of two
        # fields or more: NO_ROW else), and a first field at least as long as the header's first name (stripped, a
        # repeat's is as long: :meth:`repeats`; a class, 1 or positive, seldom is).
        self.width = len(self.folded) if ahead and len(self.key) >= 2 and self.folded else self.NO_ROW
        self.first_length = len(self.key[0]) if ahead else 0
        self.set_apart = [(row, start) for row, start in ahead[1:] if self.repeats(row)]
        self.uri, self.note, self.noted, self.delimiter = uri, note, False, delimiter

    def repeats(self, row):
        """Does ``row`` repeat the header? (:meth:`tell` of it.)"""
        # (a row of two fields or more: a first line "review" that occurs again is a review, one_column_text_header)
        if len(row) < max(self.width, 2):
            return False
        first = row[0].lstrip("\ufeff").strip()
        # the first field first (the others, reviews, are copied to compare), lowercased only when it is as long as
        # the header's (a class, positive or 1, seldom is): the per-row work of every other row is as it was
        if len(first) != self.first_length or (first != self.key[0] and first.lower() != self.folded[0]):
            return False
        return [field.lower() for field in without_trailing_empty(_header_key(row))] == self.folded

    def look_ahead(self, ahead):
        """The look-ahead without the rows set apart."""
        return [record for record in ahead if record not in self.set_apart] if self.set_apart else ahead

    def kept(self, ahead):
        """The look-ahead with the rows set apart back in their places: the first row is no header."""
        return sorted(ahead + self.set_apart, key=lambda record: record[1]) if self.set_apart else ahead

    def skipped(self, records):
        """``records`` (``(row, first line)`` pairs after the header) without the header's repeats. (The reading
        loop of :func:`data.examples_of_lines` skips them itself, without this generator over every record:
        :meth:`tell_set_apart`, :meth:`repeats`.)"""
        self.tell_set_apart()
        width, first_length = self.width, self.first_length
        for row, start in records:
            if len(row) >= width and len(row[0]) >= first_length and self.repeats(row):
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


class AlreadySkipped:
    """A :class:`RepeatedHeader` whose repeats :func:`without_index_column` took out of the rows already: each
    row of a file with pandas' index column went through the comparison twice, the second time without its index
    field, so that it could never match (a layer of work per row for nothing)."""

    width, first_length = RepeatedHeader.NO_ROW, 0  # (no row is compared)

    def __init__(self, repeated):
        self.kept = repeated.kept

    @staticmethod
    def skipped(records):
        return records

    def tell_set_apart(self):
        pass


def without_index_column(ahead, rows, repeated, uri, note):
    """``(ahead, rows)`` (:func:`table_lookahead`'s) without their first column, pandas' index (``,label,text``:
    :func:`columns.index_column`), which ``note`` is told of; rows that repeat the header are left out of ``rows``."""
    if note is not None:
        note(index_note(uri, ahead[0][0]))
    rows = index_rows(repeated.skipped(chain_lines(ahead[1:], rows)), lambda start: f"{uri}:{start}")
    ahead = [(ahead[0][0][1:], ahead[0][1])] + list(itertools.islice(rows, len(ahead) - 1))
    return ahead, rows


def labeled_rows_under_one_name(ahead, classes, quoted):
    """Is a table's first row (``ahead[0]``) a header of one text column (``text``, ``review``) over labeled rows of
    the model's ``classes``, as :func:`formats.labeled_csv_records` tells them in a file without a header
    (``1,bad``; ``positive,nice``: enough of them; ``"2","great food"``, ``quoted``: the first row after the header
    has its first field quoted, from one row on)? Such a file is labeled, its header naming its text column only
    (typed above the rows, or given to a file without one); pandas writes none (it quotes a text's commas).
    ``predict`` reads its rows as without the header, each for its text, the class not scored (training reads it so
    with ``--format csv``), and so does the endpoint's text/csv (serve_requests.csv_texts): the one rule for both,
    here. (Each row was answered whole, the class a word of its review, by one and not the other: by the endpoint
    before, then, under 4 rows with quoted classes, by predict and not the endpoint's header=present.)"""
    later = [row for row, _ in ahead[1:]]
    return (len(ahead) > 1 and one_column_text_header(ahead[0][0]) and text_header(ahead[0][0], later, predicting=True)
            and labeled_csv_records(later, quoted, classes, header=False))


def text_only_columns(ahead, header_row, index, predicting, uri, note, tsv=False):
    """The columns ``predict`` reads of a table whose header row (``ahead[0]``; ``header_row``: as the file writes it)
    names text columns only (:func:`columns.text_header`), ``note`` told of those it leaves out; ``tsv``: the table is
    a TSV. Training refuses such a header (:func:`_no_class_column`), and the file is refused when no record follows
    it."""
    header, start = ahead[0]
    later = [r for r, _ in ahead[1:]]
    columns = table_text_columns(header, later)
    if not predicting:
        raise _no_class_column(uri, start, header, header_row, columns, later, index, tsv)
    if len(ahead) == 1:
        raise FastTextError(f"{uri}: no data rows (only a header row)")
    left = left_out_columns(header, (-1, columns))
    if left and note is not None:
        note(read_from_note(uri, "column", [c.strip() for c in header], columns, left))
    return columns


def _no_class_column(uri, start, header, header_row, columns, later, index, tsv=False):
    """Training's error for a header row of text columns only (line ``start``; ``header``: without pandas' index,
    ``header_row``: as written): ``columns``, the text columns, are fewer than the header's (a table of reviews with
    more columns: the class may be one of them); its first column is pandas' index (``index``: its row numbers
    were trained on as the classes, one document each); or it has text columns alone. ``tsv``: the table is a TSV,
    said as one, its names shown tab-separated (it was "the CSV header row (Review,Liked)")."""
    kind, sep = ("TSV", "<TAB>") if tsv else ("CSV", ",")
    if columns != list(range(len(header))):  # a table of reviews with more columns, none a class
        # (a ColumnsToName: the notebooks ask their own parameters, not --label-column: own_data.py)
        return ColumnsToName(
            f"{uri}:{start}: the {kind} header row ({sep.join(header_row)}) names no class column training "
            f"knows ({', '.join(sorted(HEADER_LABEL_NAMES)[:8])}, ...)", "if one of them is the class, say which to read",
            f"; else label these texts with predict{one_hot_hint(header, later)}")
    if index:  # its row numbers were trained on as the classes, one document each
        names = ["text"] if series_values_header(header) else [c.strip() for c in header]
        how = (f'pd.DataFrame({{"label": labels, "{names[0]}": texts}}).to_csv(path, index=False)'
               if len(names) == 1 else
               f'df[[{", ".join(repr(n) for n in ["label"] + names)}]].to_csv(path, index=False)')
        return FastTextError(
            f"{uri}:{start}: the {kind} header row ({sep.join(header_row)}) names no class column: its first "
            f"column is pandas' index (row numbers, not classes), the rest text; write the file with its "
            f"classes in a column named e.g. label, without the index: {how}; or label these texts with "
            f"predict")
    first_is_class = " (its first column would be read as each row's class)" if len(header) > 1 else ""
    return FastTextError(
        f"{uri}:{start}: the {kind} header row ({sep.join(header_row)}) names no class column, only text columns"
        f"{first_is_class}; add the class as a column named "
        f"e.g. label ({sep.join(['label'] + header)}), or label these texts with predict")


def class_and_text_columns(ahead, choice, header_row, predicting, uri, rows=(), classes=()):
    """``(columns, rows)``: ``(class column, text columns)`` of a table whose first row (``ahead[0]``; ``header_row``:
    as the file writes it) is a header row: the columns the user named (``choice``), else those its names say
    (:func:`header_columns`); None when the first row is a record (the class first, as Zhang et al.). A first row
    that reads as a header naming no class column, or one whose class column holds ids, is refused. ``rows``: the
    records after ``ahead``, returned as they are to be read (those looked at put back); ``classes``: a model's, to
    predict (a first row of two names whose first is one of them is a record)."""
    later = [r for r, _ in ahead[1:]]
    if choice is not None and ahead:
        return chosen_columns(ahead[0][0], choice, later, uri), rows
    columns = header_columns(ahead[0][0], later) if ahead else None
    if columns is None and ahead and unread_header(ahead[0][0], later, classes):
        refusal = ColumnsToName(f"{uri}:{ahead[0][1]}: its first row reads as a header ({','.join(header_row)}), "
                                f"{unread_columns(ahead[0][0])}", after=header_or_record(*ahead[0]))
        if two_names(ahead[0][0]):
            further = list(itertools.islice(rows, FURTHER_ROWS))
            if _class_further_down(ahead[0][0], further):  # (positive,great: a record whose class is rare at the
                return None, chain_lines(further, rows)     # top of its file, not v1,v2,,,)
            if not predicting:  # (predict's rows are the model's classes: unread_header has told it already)
                return None, FirstClassWatch(ahead[0], further, rows, refusal,
                                             f"{uri}:{ahead[0][1]}: its first row ({','.join(header_row)})")
            rows = chain_lines(further, rows)
        if predicting and class_and_text_names(ahead[0][0]):
            # (v1,v2,,,: predict reads it only over rows of the model's classes, formats.unnamed_class_header, or
            # with --format csv) the class first, not scored, and every column after it text, as under label,text,,,
            return (0, list(range(1, len(ahead[0][0])))), rows
        raise refusal
    first_name = first_value(ahead[0][0]) if ahead else ""
    if (columns is not None and columns[0] == 0 and not predicting and first_name.lower() not in HEADER_LABEL_NAMES
            and ids_column([r[0] for r in later if r])):
        # a header whose first column has a name training does not know, beside text columns (review_id,text:
        # reviews to label, with their ids) is read with that column as the class, as Zhang et al.'s header
        # ("Class Index",Title,Description) is; ids there made a class of every review
        # (a ColumnsToName: 01 and the job ask their own parameters, not --label-column)
        raise ColumnsToName(
            f"{uri}:{ahead[0][1]}: the header row ({','.join(header_row)}) puts {first_name!r} first, where the "
            f"class goes, but over the first {len(later)} rows it holds ids (nearly all different, with digits: "
            f"{later[0][0].strip()!r}, ...), not classes", "name the class column", ", or label these texts with predict",
            flags="--label-column NAME (the SageMaker job's label_column)")
    return columns, rows


# How many records after the look-ahead are searched for the class of a first row of two names that reads as a header
# (columns.two_names): a header's class column name is in none of them, a record's class, rare at the top, is in one.
# (They are kept in memory meanwhile: 10,000 reviews of Yelp's length, ~7 MB.)
FURTHER_ROWS = 10_000


def _class_further_down(row, further):
    """Is ``row``'s first value the first value of one of ``further``, the next :data:`FURTHER_ROWS` records
    (:func:`_of_the_class_of`)?"""
    of_its_class = _of_the_class_of(row)
    return any(of_its_class(r) for r, _ in further)


def _of_the_class_of(first):
    """Whether a row has the first value of the first row ``first`` and is not ``first`` again. A row that repeats it
    whole is where files written each with its header were joined (``cat a.csv b.csv``: :class:`RepeatedHeader`): it
    tells nothing of the class, and taken for a record of it, the header v1,v2 was trained as a class v1 of its own."""
    value, repeats = first_value(first), RepeatedHeader([(first, 0)], None, None).repeats
    return lambda row: bool(row) and first_value(row) == value and not repeats(row)


class FirstClassWatch:
    """The records after the look-ahead of a file whose first row of two names reads as a header (v1,v2,,,) or as a
    record whose class is rare at its top (``positive,great``), its first value found in none of the ``searched``
    (:func:`_class_further_down`'s, in memory) nor, so far, of ``rows`` (the rest of the file). Only the whole file
    tells them apart: the first row is read as the record it may be, and the file refused as the header it then is
    (``refusal``) once its records are all read and none has that class. (Refused after the 10,050 rows searched, a
    genuine first record whose class recurs further down failed a file that trains; taken for a header, a document
    was lost.) ``first``: that row's record, ``(row, line)``; ``said``: ``FILE:1: its first row (v1,v2)``, as the
    messages start. Iterated once: each record as it comes, compared until the class is found."""

    def __init__(self, first, searched, rows, refusal, said):
        (first, self.line), self.refusal, self.found = first, refusal, False
        self.of_its_class = _of_the_class_of(first)
        self.first, self.said = first, said
        self.searched, self.rows = iter(searched), iter(rows)
        # (fewer than FURTHER_ROWS: the file ended among them, and the refusal comes once they are read)
        self.more = len(searched) == FURTHER_ROWS
        self.searched_to = searched[-1][1] if searched else None

    def __iter__(self):
        yield from self.searched  # (none of its class)
        of_its_class = self.of_its_class
        for record in self.rows:
            # (compared before it is handed out: a read that stops at it, read_labeled's limit, knows it)
            self.found = of_its_class(record[0])
            yield record
            if self.found:
                break
        yield from self.rows
        if not self.found:
            raise self.refusal

    def tell(self, note):
        """``note`` (a callable, or None) is told, once the rows searched are read, that the rest of the file decides,
        and how to spare that: its whole read (minutes of a 5 GB file) showed nothing before the refusal at its end."""
        if note is None or not self.more:
            return
        note(f"{self.said} may be a header row: none of the rows up to line {self.searched_to} has its first value "
             f"({first_value(self.first)!r}) as its class, and the rest of the file decides (read to its end: a header "
             f"is refused there, a record read as one); to skip the wait, say which it is: if line {self.line} is a "
             f"record, add a header row above it (label,text); if it is a header, name its columns: {FLAG_ADVICE}")

    def settle_at_limit(self, limit):
        """For a read that stops at its ``limit`` of documents (read_labeled's), before the first row is settled: the
        file is refused as the header it is when it has ended, else as unsettled. Its rest is not read: it was, to
        settle the first row, all of a 5 GB file for a limit of 100 documents. Nor is the first row taken for what it
        most likely is: read as a record, the header v1,v2 would be trained as a class v1 of one document, which the
        whole read refuses; left out as a header, a record would be lost, and a header of names training does not
        know accepted, which the whole read refuses too. The user says which it is (or reads it whole)."""
        if self.found:
            return
        collections.deque(self.searched, maxlen=0)  # (in memory, none of its class)
        record = next(self.rows, None)
        if record is None:  # the whole file is read: as the whole read decides
            raise self.refusal
        if self.of_its_class(record[0]):
            self.found = True
            return
        raise ColumnsToName(
            f"{self.said} reads as a header row or as a record, and a read limited to {limit} documents cannot tell "
            f"which: none of the rows up to line {record[1]} has its first value ({first_value(self.first)!r}) as its "
            f"class, and only the rest of the file would show whether one does (read without a limit, it is read to "
            f"its end to tell)", "if it is a header, say which to read",
            after=header_or_record(self.first, self.line))


def header_layout(header, columns, index, uri, note, found):
    """:func:`formats.csv_row_to_example`'s ``layout`` of the records under the header row ``header`` whose
    ``(class column, text columns)`` are ``columns`` (None: the class first and every other column text, as without a
    header); ``found`` is told where the classes are read from (``index``: a column of pandas' index was left out
    before them), and ``note`` of the columns left out."""
    label_col, text_cols = columns
    layout = None
    if label_col != 0 or len(text_cols) != len(header) - 1:  # text,label or ,label,text (pandas)
        layout = (label_col, text_cols, len(header))
    found["class_from"] = f"column {label_col + 1 + index} ({header[label_col].strip()!r})"
    # The pandas lines' names (data.LabeledTexts.class_column; data.note_no_words' line), both as pd.read_csv(path)
    # names the columns, spaces around them kept (label ,text: 'label '); the class's was stripped, a KeyError pasted
    found["class_column"] = header[label_col].lstrip("\ufeff")
    found["text_names"] = [header[c].lstrip("\ufeff") for c in text_cols]
    left = left_out_columns(header, columns)
    if left and note is not None:
        note(read_from_note(uri, "column", [c.strip() for c in header], text_cols, left, label_col))
    return layout
