"""Which columns of a table are the class and which the text.

A header row names its columns (``label,text``, pandas' ``text,label``, Yelp's ``review_id,...,stars,...,text``):
the class column by one of :data:`HEADER_LABEL_NAMES`, the text columns by :data:`HEADER_TEXT_NAMES` or by holding
prose; ids, counts and dates are left out and named. pandas' index column first (``df.to_csv()`` without
``index=False``) is recognized and left out. ``--label-column`` / ``--text-column`` (:class:`Columns`) choose by name.
Used by the CSV and TSV readers (:mod:`fasttext_lib.data`), JSON Lines (:mod:`fasttext_lib.jsonl`: keys are read as
column names) and the endpoint's ``text/csv; header=present``.
"""
import csv
import numbers
import re
from dataclasses import dataclass

from .errors import FastTextError
from .text import nfc

# How the command line (and the SageMaker job's hyperparameters) name a table's columns: what an error of a table whose
# columns must be named asks for (ColumnsToName), unless its caller names them otherwise.
CLI_COLUMN_FLAGS = ("--label-column", "--text-column")  # how the CLI's user names the columns (Columns.given_as)
FLAG_ADVICE = "--label-column NAME --text-column NAME (the SageMaker job's label_column and text_column)"
LEFT_OUT_READ_BY = "--text-column NAME"  # what read_from_note's line says reads a column left out (the job says its own)


class ColumnsToName(FastTextError):
    """A table (or JSON Lines objects) whose header does not tell its class and text columns: ``found`` says what it
    names; the message asks for them as the command line names them (:data:`FLAG_ADVICE`). Where the user names them
    otherwise (the notebooks' parameters: own_data.py), the caller says so with :meth:`advising`: those flags were
    the advice in a notebook too, which has none."""

    def __init__(self, found, ask="say which to read", after="", flags=FLAG_ADVICE):
        # ``ask``: what leads to the advice (a condition: "if one of them is the class, say which to read");
        # ``after``: what follows it (the other way on: "; else label these texts with predict"); ``flags``: the
        # command line's advice, where one of its flags is all it lacks ("--text-column NAME")
        self.found, self.ask, self.after = found, ask, after
        super().__init__(self._said(flags))

    def _said(self, advice):
        return f"{self.found}; {self.ask}: {advice}{self.after}"

    def advising(self, advice):
        """This error, asking for the columns as ``advice`` says."""
        return FastTextError(self._said(advice))


# ---- The names a header row gives its columns

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


def is_int_text(text):
    return text.lstrip("-").isdigit()


def reads_as_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def short_names(row):
    """Is every field of ``row`` a column name (not empty; 3 words, 40 characters at most)?"""
    return bool(row) and all(c.strip() and len(c.split()) <= 3 and len(c) <= 40 for c in row)


def _all_text_names(row):
    """Is every column of ``row`` named as a text column (``title,body``)?"""
    return all(n in HEADER_TEXT_NAMES and n not in HEADER_LABEL_NAMES
               for n in (c.lstrip("\ufeff").strip().lower() for c in row))


# ---- A header row's layout: the class column, the text columns, the columns left out

def header_layout(row):
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
        if named_texts and len(named_texts) < len(names) - 1 and short_names(row[1:]):
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
    if len(others) == 1 and short_names([row[others[0]]]):
        return label_cols[0], others
    # A table as real data comes, with more than a class and a text: Yelp's reviews as a CSV (review_id,user_id,
    # business_id,stars,useful,funny,cool,text,date), Amazon's (reviewerID,asin,...,reviewText,overall,summary,...),
    # Kaggle's clothing reviews (,Clothing ID,Age,Title,Review Text,Rating,...). The named class and the named text
    # columns are read; the other columns are left out (ids, counts and dates would be trained on as words), unless
    # their values read as prose (:func:`header_text_columns`, given the rows). They were "cannot detect the format",
    # or, after an index column, the first named column taken for the class (945 "classes" of clothing ids).
    named_texts = [i for i in others if names[i] in HEADER_TEXT_NAMES]
    if named_texts and short_names([row[i] for i in others]):
        return label_cols[0], named_texts
    return None


def header_text_columns(header, layout, rows):
    """The text columns of a header's ``layout`` (:func:`header_layout`: ``(label column, text columns)``) over its
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
            and not (c == 0 and index_named(header))]


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
    if (min_columns >= 2 and short_names(row) and not any(n in HEADER_LABEL_NAMES for n in names)
            and not any(reads_as_number(c) for c in row) and header_layout(row) is None):  # (Class Index,Title,...)
        return [i for i, n in enumerate(names) if n in HEADER_TEXT_NAMES] or None
    if min_columns >= 2 and several_class_columns(row):  # (id,date,rating,Review Text,label: its text, to label)
        return [i for i, n in enumerate(names) if n in HEADER_TEXT_NAMES and n not in HEADER_LABEL_NAMES] or None
    return None


def several_class_columns(row):
    """The names of the class columns of a header row of column names (none a number) that names two or more, none
    first (``id,date,rating,Review Text,label``: a Kaggle export's text rating beside its label), so that training
    cannot tell which is the class (:func:`header_layout` is None) and asks (:func:`unread_columns`); else []. Its
    text columns are what ``predict`` and the endpoint answer (:func:`text_header_columns`): they answered such a
    table a line at a time, its header as a review and each record's ids, dates and classes as words of its text."""
    names = [c.lstrip("\ufeff").strip() for c in row]
    classes = [n for n in names if n.lower() in HEADER_LABEL_NAMES]
    if len(classes) < 2 or not short_names(row) or any(reads_as_number(c) for c in row) or header_layout(row) is not None:
        return []
    return classes


def looks_like_header(row):
    return header_layout(row) is not None or text_header_columns(row) is not None


def header_columns(first, later_rows):
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
    layout = header_layout(first)
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
    if (len(later) >= 2 and not is_int_text(label) and all(is_int_text(c) for c in later)
            and not _numbered_rows(later, later_rows)):
        return 0, list(range(1, len(first)))
    return None


def short_header(row):
    """A header row training recognizes (:func:`header_layout`) whose every column is a name (3 words, 40 characters
    at most), not a review that starts with one (``Class, style and comfort.``). A table's header, which names a
    column among others that it leaves out (``review_id,text,date``), is written as a program writes one, with no
    space after its commas: a first line of short phrases, one a text column's name (``Title, date``; ``Summary,
    great phone``), followed by reviews of as many commas, was taken for a table's header, skipped unanswered and the
    reviews cut to its columns (before tables were read, such a header named text columns only)."""
    return (looks_like_header(row) and all(len(c.split()) <= 3 and len(c) <= 40 for c in row)
            and not (any(c[:1].isspace() for c in row[1:]) and table_header(row)))


def prose_commas(row):
    """Does ``row`` (a first line read as CSV) put a space after a comma as prose does (``Overall, highly
    recommended.``; ``Great phone, overall``), where a program writes a header with none (pandas, csv, R)? Not when
    every name of it, stripped, is a column's name training knows (``label, text``; ``Review , Sentiment``): a header
    typed by hand, which training reads (its names are matched stripped), and predict and the endpoint took for a
    review, answering each row whole."""
    return (any(c[:1].isspace() for c in row[1:])
            and not all(c.lstrip("\ufeff").strip().lower() in HEADER_LABEL_NAMES | HEADER_TEXT_NAMES for c in row))


def semicolon_header(line):
    """Is ``line`` the header row of a semicolon-separated table (``sentiment;review``: European Excel's CSV, pandas'
    ``to_csv(sep=";")``; ``"sentiment";"review"``: R's ``write.csv2``, ``quoting=csv.QUOTE_ALL``), column names a
    program writes (:func:`short_header`) and no comma or tab? Its names are read as a CSV reader reads them, quotes
    and all: split at each semicolon, quoted names were no names (predict answered such a header as a review)."""
    cells = _separated_cells(line, ";")
    return len(cells) >= 2 and short_header(cells)


def separated_names(line, separator):
    """Is ``line`` a row of two names or more ``separator`` separates, as a program writes a header (no comma or tab;
    each name 3 words and 40 characters at most, as :func:`short_header` measures one, none empty or after a space, as
    prose puts one after its semicolons), names training knows or not (``Titel;Bewertung;Sterne``)? Under Excel's
    ``sep=;`` line such a row is its table's header (lines.excel_sep_line)."""
    cells = _separated_cells(line, separator)
    return len(cells) >= 2 and all(c.strip() and not c[0].isspace() and len(c.split()) <= 3 and len(c) <= 40
                                   for c in cells)


def _separated_cells(line, separator):
    """``line``'s fields ``separator`` separates, read as a CSV reader reads them, quotes and all; none where it has no
    such separator, or a comma or a tab."""
    line = line.lstrip("\ufeff").strip()
    if separator not in line or any(c in line for c in ",\t"):
        return []
    try:
        return next(csv.reader([line], delimiter=separator), [])  # (unquoted: line.split(";"), as it was)
    except csv.Error:
        return []


def class_rows(lines, separator):
    """Are ``lines`` (a table's first ones that are not blank, as text) rows with a class first, told without a
    model's classes: :data:`_CLASS_ROWS` at least, each with ``separator`` in it, their first fields (the classes,
    quotes aside) a few values over and over, as :func:`unread_header` tells a class column? Reviews that hold a
    comma do not start with the same few words before it."""
    firsts = [line.split(separator, 1)[0].strip().strip('"') for line in lines if separator in line]
    return (len(firsts) >= _CLASS_ROWS and len(firsts) == len(lines) and all(firsts)
            and 2 * len(set(firsts)) <= len(firsts))


def table_header(row):
    """Does the header ``row`` leave a column unread (neither the class nor text: ``review_id,stars,text,date``)?"""
    layout = header_layout(row)
    return bool(left_out_columns(row, layout if layout is not None else (-1, text_header_columns(row) or [])))


def one_column_text_header(row):
    """Is ``row`` a header of one text column (``review``: pandas' ``df[["review"]].to_csv(index=False)``, the usual
    shape of reviews to label; quoted or not)? ``predict`` and the endpoint skip it and answer each record's field:
    the header was answered as a review, every answer after it one off."""
    return len(row) == 1 and text_header_columns(row, min_columns=1) is not None


def text_header(first, later_rows, predicting=False, index=False):
    """Is ``first`` (the first CSV row) a header of text columns only (:func:`text_header_columns`)? Not when its
    first value occurs again in the look-ahead's first column (``later_rows``), as :func:`header_columns`.
    ``index``: pandas' index column was left out of the header before it (:func:`index_column`), and ``0``, the name
    pandas gives an unnamed series' values, is a text column's name too (:func:`series_values_header`)."""
    return ((text_header_columns(first) is not None or (predicting and one_column_text_header(first))
             or (index and series_values_header(first)))
            and first[0].strip() not in {r[0].strip() for r in later_rows if r})


def series_values_header(row):
    """Is ``row`` (a header without its index column) the one pandas writes over an unnamed series' values, ``0``
    (``pd.Series(texts).to_csv(path)``, ``pd.DataFrame(texts).to_csv(path)``: ``,0`` over ``0,the review``, ...)?
    Only beside pandas' index column, found by its row numbers (:func:`index_column`): ``,0`` over classes that repeat
    (``pd.Series(texts, index=labels).to_csv(path)``) is the classes and the texts, as it always was."""
    return len(row) == 1 and row[0].strip() == "0"


def tsv_header_line(line):
    """Is ``line`` (an input's first line) the header row of a TSV (``sentence<TAB>label``; ``review<TAB>stars``;
    pandas' index first): a tab before any comma, its fields column names as a CSV header's would be? ``predict``
    then reads the file as training does, one answer per record."""
    row = tab_separated_row(line)
    return row is not None and (short_header(row) or text_header_columns(row) is not None or index_header_start(row))


def tab_separated_row(line):
    """``line`` (an input's first line) split at its tabs when it reads as a TSV's row: a tab before any comma, two
    fields or more; else None. (:func:`tsv_header_line` asks then whether its fields are column names.)"""
    # (a leading tab is kept: pandas' index column's empty name, df[["text"]].to_csv(sep="\t"): stripped, "\ttext"
    # read as a CSV header of one text column, every row answered whole, its row number and a tab in its review)
    line = line.lstrip("\ufeff").lstrip(" ").rstrip()
    if "\t" not in line or ("," in line and line.index(",") < line.index("\t")):
        return None
    try:
        row = next(csv.reader([line], delimiter="\t"), [])
    except csv.Error:
        return None
    return row if len(row) >= 2 else None


def unread_header(row, later_rows, classes=()):
    """Does ``row`` (a CSV file's first row, which training could not read as a header) read as one all the same: three
    columns or more, each a short name, none a number, none recurring in its column below (as a class or a repeated
    value would)? Or two, over rows of classes, the first none of them nor of ``classes`` (a model's, to predict)? A
    table with more than a class and a text whose class column has a name training does not know
    (``tweet_id,airline_sentiment,...,text``): read as data, its first row was a document and its first column the
    classes (the clothing ids of ``Clothing ID,Age,Title,Review Text,Stars``)."""
    named = without_trailing_empty(row)
    if not later_rows or not short_names(named) or any(reads_as_number(c) for c in named):
        return False
    if len(named) == 2:
        # Two names (the SMS Spam Collection's v1,v2,,,): a class and a text of a data row could read so too, unless
        # the rows below hold classes, a few values over and over, which the first one is not among (a header's
        # class column name is in no row below it; a real first row's class is)
        firsts = [r[0].strip() for r in later_rows if r and r[0].strip()]
        if len(firsts) < _CLASS_ROWS or 2 * len(set(firsts)) > len(firsts) or first_value(named) in classes:
            return False
    elif len(named) < 3:
        return False
    return not _recurs_below(named, later_rows)


def two_names(row):
    """Is ``row`` two fields and empty ones after them (``v1,v2,,,``)? As a header (:func:`unread_header`), only the
    rows below tell it from a record whose class is rare at the top of its file (``positive,great``)."""
    return len(without_trailing_empty(row)) == 2


def first_value(row):
    """``row``'s first field as a class is compared: without a byte order mark and the spaces around it."""
    return row[0].lstrip("\ufeff").strip()


def header_or_record(row, lineno):
    """What :class:`ColumnsToName` says after its advice when ``row`` (line ``lineno``, after any blank ones), read as
    an unknown header (:func:`unread_header`), could be a record: two names, a class and a text (a class of one
    document, the first, in no row below)."""
    if not two_names(row):
        return ""
    return f"; if line {lineno} is a record, not a header, add a header row above it (label,text)"


def class_and_text_names(row):
    """Is ``row`` two short names (none a number) and nothing after them but columns without one: empty, or as pandas
    names them (``Unnamed: 2``)? The SMS Spam Collection's header ``v1,v2,,,``, and the same as pandas writes it back
    (``v1,v2,Unnamed: 2,Unnamed: 3,Unnamed: 4``, re-encoded as the UTF-8 error advises): a class and a text column,
    whatever their names. Only the rows below tell whether it is a header (:func:`unread_header`)."""
    named = without_trailing_empty(row, unnamed=True, keep=2)  # (label,Unnamed: 1: two names, the second pandas')
    return len(named) == 2 and short_names(named) and not any(reads_as_number(c) for c in named)


_PANDAS_UNNAMED = re.compile(r"Unnamed: \d+")
_CLASS_ROWS = 4  # (formats.MIN_UNQUOTED_ROWS: the rows a class column written as words is recognized from)


def without_trailing_empty(row, unnamed=False, keep=0):
    """``row`` without the empty fields at its end: columns with no name, which pandas calls ``Unnamed: 2``, ... (a
    spreadsheet's stray cells; the SMS Spam Collection's ``v1,v2,,,``, where a message's commas spill into them);
    with ``unnamed``, without those pandas names either (the same header as pandas writes it back); its first
    ``keep`` fields kept whatever they are."""
    end = len(row)
    while end > keep and (not row[end - 1].strip() or (unnamed and _PANDAS_UNNAMED.fullmatch(row[end - 1].strip()))):
        end -= 1
    return row[:end]


def _recurs_below(row, later_rows):
    """Does a value of ``row`` occur again in its column in ``later_rows``, as a class or a repeated value does and a
    column's name does not?"""
    return any(row[c].strip() in {r[c].strip() for r in later_rows if len(r) > c} for c in range(len(row)))


def _reads_as_record(row, later_rows):
    """Is ``row`` (a file's first row) a record, not a header: a field of prose or an empty one, a number (not
    pandas' own column names, 0,1,...), or a value that recurs in its column below (:func:`_recurs_below`)?"""
    if not short_names(row):
        return True
    if [c.strip() for c in row] == [str(i) for i in range(len(row))]:
        return False
    return any(reads_as_number(c) for c in row) or _recurs_below(row, later_rows)


def unread_columns(row):
    """What a header row training cannot read names (``but it names ...``: a :class:`ColumnsToName`'s ``found`` ends
    with it). It said "no
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
    return what

ONE_HOT_MIN_COLUMNS = 3


def one_hot_hint(header, rows):
    """A note for a table whose classes are one-hot columns (GoEmotions' admiration,...,neutral; Jigsaw's toxic,
    severe_toxic,...): :data:`ONE_HOT_MIN_COLUMNS` or more columns of only 0 and 1 (or true and false) over ``rows``.
    "if one of them is the class, name it" said nothing of what naming one does: a yes/no model of that column."""
    flags = [header[c].strip() for c in range(len(header))
             if rows and all(len(r) > c and r[c].strip().lower() in ("0", "1", "true", "false") for r in rows)]
    if len(flags) < ONE_HOT_MIN_COLUMNS:
        return ""
    shown = ", ".join(flags[:4]) + (", ..." if len(flags) > 4 else "")
    # (no flag named: the line is a ColumnsToName, which a notebook asks its own parameters in)
    return (f" (its {len(flags)} columns of 0 and 1, {shown}, read as one-hot classes: naming one as the class trains "
            f"a yes/no model of that one; for one model of them all, write them as one column of class names first)")


# ---- Columns the user names (--label-column / --text-column)

@dataclass(frozen=True)
class Columns:
    """The columns of a CSV file with a header row, chosen by their names (``--label-column``, ``--text-column``;
    the SageMaker job's ``label_column`` and ``text_column``), given where a format is (``fmt``): ``label``, the
    class column's name (None: the one column the header names as a class, :data:`HEADER_LABEL_NAMES`); ``texts``,
    the text columns' names, joined in this order (empty: those the header names as text, and any other that reads
    as prose, :func:`header_text_columns`). Names are matched without case and surrounding spaces."""
    label: object = None
    texts: tuple = ()
    given_as: tuple = CLI_COLUMN_FLAGS  # how the user gave the two, as the refusals name them: the CLI's flags


def csv_columns(fmt, label=None, texts=None, given_as=None):
    """``fmt`` (a format name), or :class:`Columns` when ``label`` or ``texts`` (a list of names, each may be a
    comma-separated list) name columns; a fastText-format ``fmt`` with them is an error. ``given_as``: the names of
    the two settings as the user gave them, named by a refusal (None: the CLI's flags; notebook 01's parameters and
    the SageMaker job's hyperparameters, ``("label_column", "text_column")``: they have no flags)."""
    texts = tuple(n.strip() for t in (texts or ()) for n in str(t).split(",") if n.strip())
    label = str(label).strip() if label is not None and str(label).strip() else None
    if label is None and not texts:
        return fmt
    given_as = tuple(given_as or CLI_COLUMN_FLAGS)
    if fmt == "fasttext":  # (the format as the columns are given: the CLI's flag, the job's hyperparameter)
        raise FastTextError(f"{given_as[0]} and {given_as[1]} choose columns of a CSV file with a header row, not of "
                            f"fastText format ({as_given('--format' if given_as[0].startswith('-') else 'format', fmt)})")
    return Columns(label, texts, given_as)


def as_given(setting, value):
    """A column named by a setting as the user gave it: ``--label-column rating``, ``label_column='rating'``."""
    return f"{setting} {value}" if setting.startswith("-") else f"{setting}={value!r}"


def chosen_columns(header, choice, rows, uri, keys=False):
    """``(label column, text columns)`` of ``header`` (a CSV file's first row; with ``keys``, JSON objects' keys) for
    ``choice`` (:class:`Columns`); ``rows``: the rows after it (the look-ahead). A name not in the header is an error
    that lists the header, or, when the first row is no header at all (a record: a Zhang et al. file given as
    ``--validation`` beside a training table's ``--label-column``), says so."""
    names = [c.lstrip("\ufeff").strip() for c in header]
    lowered = [n.lower() for n in names]
    folded = [folded_name(n) for n in names]
    shown = ",".join(names)
    where, column = ("its objects' keys", "key") if keys else ("the header row", "column")
    label_setting, text_setting = choice.given_as
    needs_header = (f"{label_setting} and {text_setting} name the columns of a header row, and every CSV or TSV file "
                    f"read with them needs one")

    def find(name, flag):
        hits = [i for i, n in enumerate(folded) if n == folded_name(name)]
        if not hits and not keys and _reads_as_record(names, rows):  # no header (1,cold soup; positive,great ...)
            raise FastTextError(f"{uri}: {as_given(flag, name)}: the file has no header row to find it in (its first line is a "
                                f"record: {_shortened(shown)}); {needs_header}")
        if not hits and not keys and not (looks_like_header(names) or any(
                n in HEADER_LABEL_NAMES or n in HEADER_TEXT_NAMES or n in INDEX_NAMES for n in lowered)):
            # short words, none a name training knows (positive,great: a header, or a record of a short file?): said
            # to be the header row, a record was
            raise FastTextError(f"{uri}: {as_given(flag, name)}: its first line ({_shortened(shown)}) names no such column: "
                                f"if that line is the header row, those are its columns; if it is a record, the file "
                                f"has no header row; {needs_header}")
        if len(hits) != 1:
            how = f"no {column}" if not hits else f"{len(hits)} {column}s"
            raise FastTextError(f"{uri}: {as_given(flag, name)}: {how} of that name in {where} ({shown})")
        return hits[0]

    text_cols = [find(t, text_setting) for t in choice.texts]
    twice = next((t for c, t in zip(text_cols, choice.texts) if text_cols.count(c) > 1), None)
    if twice is not None:  # (each record's text was read twice over, its words counted double)
        raise FastTextError(f"{uri}: {as_given(text_setting, twice)}: {column} {names[text_cols[choice.texts.index(twice)]]!r} is "
                            f"named more than once (name each text {column} once)")
    if choice.label is not None:
        label_col = find(choice.label, label_setting)
    else:
        named = [i for i, n in enumerate(lowered) if n in HEADER_LABEL_NAMES and i not in text_cols]
        if len(named) != 1:
            raise FastTextError(f"{uri}: {where} ({shown}) name{'' if keys else 's'} {'no' if not named else len(named)} "
                                f"class {column}(s) training knows; name it with {label_setting}")
        label_col = named[0]
    if label_col in text_cols:
        raise FastTextError(f"{uri}: {column} {names[label_col]!r} cannot be both the class ({label_setting}) and "
                            f"text ({text_setting})")
    if not text_cols and not keys:
        text_cols = _spilled_text(header, label_col)
    if not text_cols:
        named = [i for i, n in enumerate(lowered) if n in HEADER_TEXT_NAMES and i != label_col]
        text_cols = header_text_columns(header, (label_col, named), rows)[1]
        if not text_cols:
            raise FastTextError(f"{uri}: {where} ({shown}) name{'' if keys else 's'} no text {column} training knows "
                                f"beside the class {column} {names[label_col]!r}; name it with {text_setting}")
    return label_col, text_cols


def _spilled_text(header, label_col):
    """The text columns of a header of the class first (``label_col``), one other name and then only columns without
    one (``v1,v2,,,``: the SMS Spam Collection, where a message's commas spill into them; ``Unnamed: 2``, ... as pandas
    writes it back): every column after the class, as ``label,text,,,`` is read, and predict reads ``v1,v2,,,``.
    Named by its class alone, the text was ``v2`` (the spilled parts left out), or, short messages not reading as
    prose, refused. [] for any other header."""
    if label_col != 0 or len(without_trailing_empty(header, unnamed=True, keep=2)) != 2:
        return []
    return list(range(1, len(header)))


def folded_name(name):
    """``name`` as a column name is matched: without case, and in NFC (a header a Mac wrote, catégorie as e + U+0301,
    was no column of the name typed as U+00E9, and the error showed the two alike). Two column settings' values are
    compared so too (cli.column_meant: ``Text`` and ``text`` given for one are no two columns)."""
    return nfc(name).lower()


def _shortened(text, limit=80):
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---- pandas' index column (df.to_csv() without index=False), and row numbers taken for classes

INDEX_NAMES = {"", "id", "index", "unnamed: 0"}  # a first column that numbers the rows (pandas' df.to_csv())

# The header name pandas writes over its index column (df.to_csv() without index=False), and the one it gives that
# column when it reads such a file back (pd.read_csv(path).to_csv(new_path, index=False)).
PANDAS_INDEX_NAMES = ("", "unnamed: 0")

_ROW_NUMBER = re.compile(r"[0-9]+")


def index_named(row):
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
    * or go up in runs that start again (``pd.concat([a, b]).to_csv(path)`` numbers ``b``'s rows from 0 again:
      0, 1, ..., 34, 0, 1, ...; filtered frames from elsewhere: 1, 4, 9, ..., 2, 5, ...): never the same number twice
      in a row, down at most once in :data:`INDEX_RUN_ROWS` steps, each time to 0 or not each run the first again
      (:func:`_dealt_in_turn`), and :data:`SHUFFLED_INDEX_MIN_ROWS` different numbers at least (classes 1 to 25 dealt
      out in turn under ``Series.to_csv()``'s ``,text`` start again at 1, each run the first again: they were taken
      for row numbers, and the file refused as a header of text columns only);
    * or, whatever their order, repeats and count, when the rest of the header (three columns or more) names a class
      column itself (``,sentiment,tweet``) or names columns only (``,title,body``; ``,review_id,text``:
      :func:`_columns_named_after`): the unnamed one is an index, not the class (a concatenation shuffled after it,
      ``pd.concat([a, b]).sample(frac=1)``: 83, 12, 83, ...; a small shuffled file, ``,label,text`` over 10 rows of
      7, 2, 9, ...). Under a header of text columns only, a shuffled concatenation's row numbers were trained on as
      the classes.

    The class column of ``Series.to_csv()`` (``,text`` over the classes 2, 2, 1, ...: the series' index; two columns,
    the second named as text) repeats its values, often one after the other, and goes down as often as up: it stays
    the class, as do a few classes each once over fewer than :data:`SHUFFLED_INDEX_MIN_ROWS` rows (2, 1, 3, 5, 4
    stars). Training, evaluate, predict and the endpoint's ``header=present`` leave the index column out
    (:func:`index_rows`) and read the rest as usual."""
    if not index_named(header):
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
    if distinct >= SHUFFLED_INDEX_MIN_ROWS and _counts_up_in_runs(numbers) and (
            _counts_up_in_runs(numbers, restarting_at_0=True) or not _dealt_in_turn(numbers)):
        return True
    return _columns_named_after(header, distinct >= SHUFFLED_INDEX_MIN_ROWS)


def _dealt_in_turn(numbers):
    """Do ``numbers`` (going up in runs, :func:`_counts_up_in_runs`) repeat their first run over and over, as classes
    1..K dealt out in turn do (1, 2, ..., 25, 1, 2, ...)? A concatenation's row numbers that start again elsewhere than
    at 0 do not: each frame filtered before (``pd.concat([a[a.n > 3], b[b.n > 3]])``: 1, 4, 9, ..., 2, 5, 8, ...) keeps
    its own numbers. Those were read as the index before runs had to start again at 0, and then as the classes (over
    ``,text``: a file of texts trained on its row numbers, where training refused it as naming no class column)."""
    period = next((i for i in range(1, len(numbers)) if numbers[i] < numbers[i - 1]), len(numbers))
    return all(numbers[i] == numbers[i - period] for i in range(period, len(numbers)))


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
# names a class column or its other columns (:func:`_columns_named_after`), the numbers must count up. The same bound, as a number
# of different values, tells a concatenation's runs (0..14, 0..34) from classes dealt out in turn (1, 2, 3, 4, 5, 1,
# 2, ...: as many values as classes, fewer than 20).
SHUFFLED_INDEX_MIN_ROWS = 20

# pd.concat's index goes down where each frame starts (to 0 again); classes in random order go down at every other step
# or so, and repeat one after the other (a class of K, at each step, with a chance of 1/K)
INDEX_RUN_ROWS = 10


def _columns_named_after(header, many_numbers=True):
    """Does ``header`` (a header row whose first name is pandas' index, empty or ``Unnamed: 0``) have three columns
    or more, exactly one of the others named as a class column (``,sentiment,tweet``; :data:`HEADER_LABEL_NAMES`), or
    all of the others column names, none a number (``,title,body``; ``,review_id,text``; ``,airline_sentiment,text``
    for ``--label-column``)? Then the first column is not the class: a DataFrame's index, its row numbers in whatever
    order pandas left them; a DataFrame's columns are named, and only an index goes unnamed. (``Series.to_csv()``
    writes two columns, its index, which may be the classes, and its values.)

    ``many_numbers``: the first column holds :data:`SHUFFLED_INDEX_MIN_ROWS` different numbers or more over the
    look-ahead. Beside columns that name no class column, fewer are classes (a DataFrame built with its classes as its
    index, ``pd.DataFrame({"title": ..., "body": ...}, index=stars)``: ``,title,body`` over 5, 1, 4, 5, ..., as
    ``Series.to_csv()`` writes them beside one column), as they were read before, not row numbers: the file was refused
    as naming no class column. A shuffled concatenation's row numbers repeat a few times each, not as classes do."""
    names = [c.strip().lower() for c in header[1:]]
    return len(header) >= 3 and (sum(n in HEADER_LABEL_NAMES for n in names) == 1
                                 or (many_numbers and short_names(header[1:])
                                     and not any(reads_as_number(c) for c in header[1:])))


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


def index_header_start(row):
    """Can ``row`` (the first record of a file) be a header whose first column is pandas' index, the others column
    names (:func:`short_header`, or one text column: ``,review``)? Only a first test: :func:`index_column` decides
    from the rows after it."""
    rest = row[1:]
    return index_named(row) and (short_header(rest) or one_column_text_header(rest) or series_values_header(rest))


def index_note(uri, header):
    """The note that says a file's first column was left out as pandas' index (:func:`index_column`)."""
    name = header[0].lstrip("\ufeff").strip()
    return (f"{uri}: its first column ({'unnamed' if not name else repr(name)} in the header, row numbers "
            f"below it) is a row index (pandas' df.to_csv() without index=False, R's write.csv row names): left "
            f"out; the rest is read as the "
            f"columns {','.join(header[1:])}")


def number_with_comma(row):
    """Does a row start as a number written with a comma does (``1,000 calories``, ``2,5 stars``, ``1,2,3 done``)?"""
    return is_int_text(row[0].strip()) and row[1][:1].isdigit()


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
    rows, as before), and not every record reads as a number written with a comma (:func:`number_with_comma`:
    ``3,000 calories`` and ``5,5 stars`` are reviews)."""
    rows = [r for r in records if r]
    if not rows or any(len(r) < 2 or not _ROW_NUMBER.fullmatch(r[0].strip()) for r in rows):
        return False
    if all(len(r) >= 3 and r[1].strip() in classes for r in rows):
        return True
    return (not all(r[0].strip() in classes for r in rows) and not all(number_with_comma(r) for r in rows)
            and index_column([""] * len(rows[0]), rows))  # (no header: none names a class column)

# Labels that are each a different whole number, over this many documents or more, are row numbers, not classes
# (distinct_row_numbers). Below it a few documents with numbered classes of one document each may be genuine.
ROW_NUMBER_LABELS = 20


def distinct_row_numbers(values):
    """Are ``values`` (a file's classes, or the labels of its documents) each a different whole number, at least
    :data:`ROW_NUMBER_LABELS` of them: row numbers read as classes? pandas' index written without a header
    (``df.to_csv(path, header=False)``: ``0,positive,the text``) reads so, class first, the real class a word of the
    text: training refuses such data (train.py), evaluate says what its unknown labels are (label_encoding.class_ids)."""
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


# ---- Columns of ids, counts and dates beside the text: left out, or refused

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


def ids_column(values):
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


def check_text_columns(rows, columns, uri, names=None, keys=False):
    """Refuse CSV whose text columns include an id column (:data:`METADATA_MIN_ROWS`); ``rows``: the first data rows;
    ``columns``: a header's ``(label column, text columns)``, None: the class first, then text (Zhang). Two-column
    files are refused only when ``names`` (the header row) names their text column with a name that is no known text
    column's (``tweet_id,sentiment``: taken for the text only because it is the one column beside the class).
    ``keys``: ``rows`` are JSON Lines objects' values under their keys ``names`` (jsonl.py): the errors speak of keys
    and objects, and show pandas' JSON Lines conversion (they spoke of a header, columns and read_csv)."""
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
            header, column, row = ("its objects' keys name", "key", "object") if keys else \
                ("the header names", "column", "row")
            raise FastTextError(
                f"{uri}: {header} the class {column} ({names[label_col].strip()}) beside one other {column}, "
                f"{name!r}, which over the first {len(rows)} {row}s holds one token per {row}, nearly all different "
                f"({values[0].strip()!r}, ...): an id, not text; this file has no text {column} to read (join the texts "
                f"to it first, e.g. pandas: labels.merge(texts, on={name!r}); if those tokens are the texts, name the "
                f"{column} text)")
        return
    def where(c):
        return f"key {names[c].strip()!r}" if keys else f"column {c + 1}"

    ids, constant = [], []
    for c in text_cols:
        values = [r[c] for r in rows if c < len(r) and r[c].strip()]
        if len(values) < METADATA_MIN_ROWS:
            continue
        if (all(_WHOLE_NUMBER.fullmatch(v) for v in values) and len({v.strip() for v in values}) >= 0.9 * len(values)
                and (not all(_YEAR.fullmatch(v) for v in values) or _counts_like_ids([int(v) for v in values]))):
            ids.append((c, f"{where(c)} holds only whole numbers ({values[0].strip()!r}, ...)"))
        elif len(set(values)) == 1:
            constant.append((c, f"{where(c)} is {values[0]!r} in every one"))
    if not ids:
        return
    found = sorted(ids + constant)
    text = [c for c in text_cols if c not in {c for c, _ in found}] or text_cols
    if keys:  # (a ColumnsToName: 01 and the job ask their own parameters, not --text-column)
        kept = [names[label_col].strip()] + [names[c].strip() for c in text]
        raise ColumnsToName(
            f"{uri}: not every key beside the class is text: over the first {len(rows)} objects, "
            f"{'; '.join(what for _, what in found)} (an id, a date or a count), and each would be trained on as words",
            "name the text keys", f", or keep only the class and the text key(s), e.g. pandas: pd.read_json(path, "
            f"lines=True)[{kept!r}].to_json(new_path, orient='records', lines=True)",
            flags="--text-column NAME (the SageMaker job's text_column)")
    raise FastTextError(
        f"{uri}: not every column after the class is text: over the first {len(rows)} rows, "
        f"{'; '.join(what for _, what in found)} (an id, date or user column, as in Sentiment140's "
        f"class,id,date,query,user,text), and each would be trained on as words. Keep only the class and the text "
        f"column(s), e.g. pandas: pd.read_csv(path{'' if columns else ', header=None'}, dtype=str, "
        f"keep_default_na=False).iloc[:, [{label_col}, "
        f"{text[-1]}]].to_csv(new_path, {'' if columns else 'header=False, '}index=False)")


def frame_columns(frame):
    """The class and text columns of a pandas DataFrame ``frame`` that a refusal's pandas line names: its own, where a
    header of the same names would be read so (``sentiment``, ``review``), else ``label`` and ``text`` (pasted,
    ``df['label']`` of a frame without one was a KeyError). A frame with names no header gives
    (``pd.read_csv(path, header=None)``'s 0, 1, ...): its own columns, the class first and the text after it, as a
    file without a header is read. ``None`` where no ``df[name]`` is one column, to be said in words: a MultiIndex's
    (a tuple per column), a name several columns share (``df[name]`` a frame of them), names such as floats."""
    if frame.columns.nlevels > 1 or frame.columns.has_duplicates:
        return None
    names = list(frame.columns)
    strings = [c for c in names if isinstance(c, str)]
    label = next((c for c in strings if c.strip().lower() in HEADER_LABEL_NAMES), None)
    text = next((c for c in strings if c.strip().lower() in HEADER_TEXT_NAMES and c != label), None)
    if len(strings) == len(names):
        return label or "label", text or "text"
    others = [c for c in names if c not in (label, text)]
    label = others.pop(0) if label is None and others else label
    text = others.pop(0) if text is None and others else text
    if not all(_pasted_as_is(c) for c in (label, text)):
        return None
    return tuple(c if isinstance(c, str) else int(c) for c in (label, text))  # (numpy's ints: repr np.int64(0))


def title_and_body(frame):
    """The pandas code of a frame's text where it is Zhang et al.'s title and body (its class, title and body read
    with ``pd.read_csv(path, header=None)``: columns 0, 1, 2), joined as training reads such a file (:func:`csv_text`:
    a space between them, a literal ``\\n`` a space; an empty title read as NaN, filled): ``df[1]`` alone, the text a
    refusal named, dropped every body. None for any other frame."""
    names = list(frame.columns)
    if names != [0, 1, 2] or any(isinstance(c, bool) for c in names):
        return None
    return "df[[1, 2]].fillna('').agg(' '.join, axis=1).str.replace('\\\\n', ' ', regex=False)"


def _pasted_as_is(name):
    """Whether ``df[name]`` pasted names the column ``name``: a str or an int (not a bool, a mask to pandas)."""
    return isinstance(name, str) or (isinstance(name, numbers.Integral) and not isinstance(name, bool))


# ---- A record's text: its text columns joined

def csv_text(columns):
    """The text of a CSV row's text columns, as training reads it: joined with a space, a literal ``\\n``
    (Zhang et al.'s line break) a space."""
    return " ".join(col for col in columns if col).replace("\\n", " ")


def table_text_columns(header, rows):
    """The text columns of a header of text columns (:func:`text_header_columns`) over its data ``rows`` (the
    look-ahead): with the other columns of a table, any of prose among them too (:func:`header_text_columns`)."""
    if len(header) < 2:  # (one text column: one_column_text_header)
        return [0]
    return header_text_columns(header, (-1, text_header_columns(header)), rows)[1]


def width_error(where, fields, width, tsv=False, against="the header row"):
    """The error of a record of ``fields`` fields under a header row of ``width`` (``tsv``: a TSV's; ``against``: the
    row that has them, a table's first row where it has no header). Wider: a separator typed in an unquoted text (a
    tab in a TSV, where a comma does no harm); narrower: a field left out, or a text broken over lines unquoted (a
    separator typed in a text makes no record narrower)."""
    why = (f"{'a tab' if tsv else 'a comma'} in an unquoted text? quote the field" if fields > width
           else "a field left out, or a line break in an unquoted text? quote the field")
    return FastTextError(f"{where}: malformed CSV row: {fields} column(s) where {against} has {width} ({why})")


def table_texts(records, header, columns, where, tsv=False):
    """The text of each of ``records`` (``(record, position)`` pairs, a file's after its ``header`` of text columns:
    :func:`table_text_columns`' ``columns``): every column joined when they are all text, else the text columns of a
    record as wide as the header (another width is an error at ``where(position)``: :func:`width_error`, ``tsv``); a
    blank record ``""``."""
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
            raise width_error(where(position), len(record), len(header), tsv)
        else:
            yield csv_text([record[c] for c in columns])


def read_from_note(uri, kind, names, text_cols, left, label_col=None):
    """The line that says which of a file's ``names`` (``kind``: a CSV's "column", JSON Lines' "key") are read as
    the class and the text, and which are left out."""
    def shown(cols):
        return ", ".join(repr(names[c]) for c in cols)

    if label_col is None:
        return f"{uri}: the text is {kind} {shown(text_cols)}; left out: {shown(left)}"
    return (f"{uri}: the class is {kind} {names[label_col]!r}, the text {shown(text_cols)}; left out: {shown(left)} "
            f"({LEFT_OUT_READ_BY} reads a {kind} as text)")


_WHOLE_FLOAT = re.compile(r"-?[0-9]+\.0+")  # a whole number as a float: pandas writes 5.0


def whole_number(label):
    """``label`` (a class as a CSV writes it) without the ``.0`` of a whole number written as a float (``5.0``:
    ``5``); None for any other label. (Here, below data and label_names, which both read classes by it.)"""
    return str(int(label.split(".")[0])) if _WHOLE_FLOAT.fullmatch(label) else None
