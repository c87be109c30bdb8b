"""The texts a caller passes to be scored, checked: a list of review texts (:func:`review_texts`), ``(label, text)``
pairs (:func:`example_texts`), each text one UTF-8 can encode (:func:`not_unicode_error`). What is no such thing (one
str, a DataFrame, a dict, a NaN, bytes) is one error that says what was given and what to pass instead, not a
TypeError from inside the featurizer.
"""
import collections.abc
import reprlib
import sys

from .columns import frame_columns, title_and_body
from .data import missing_text_fill, missing_value
from .errors import FastTextError, lone_surrogate_message


def example_texts(chunk, start):
    """The texts of ``chunk`` (``(label, text)`` pairs, the first one ``examples[start]``), or one error naming the first
    that is none: a pair with a NaN text (a DataFrame's missing value) or no pair at all was a traceback from inside
    the featurizer (``object of type 'float' has no len()``, ``not enough values to unpack``). Its pandas line names
    the pair's own text column where the pair carries it (``df.itertuples()``' rows), else ``df['text']``."""
    for i, example in enumerate(chunk, start):
        pair = isinstance(example, (tuple, list)) and len(example) == 2
        if not (pair and isinstance(example[1], str)):
            fields = getattr(example, "_fields", None)  # (a namedtuple: itertuples(index=False) of [label, text])
            column = fields[1] if pair and fields and isinstance(fields[1], str) else "text"
            missing = pair and missing_value(example[1])
            hint = f": a missing text? fill it first (df[{column!r}].fillna(''))" if missing else ""
            raise FastTextError(f"examples[{i}] is {reprlib.repr(example)} ({type(example).__name__}), not a (label, "
                                f"text) pair whose text is a str{hint}")
    return [text for _, text in chunk]


def refuse_a_dataframe_of_examples(examples):
    """Refuse a pandas DataFrame given as ``(label, text)`` pairs, naming its own columns: iterated, its items are its
    column names, and it was ``examples[0] is 'sentiment' (str), not a (label, text) pair``."""
    pandas = sys.modules.get("pandas")  # (only ever given a DataFrame where pandas is imported; not imported here)
    if pandas is None or not isinstance(examples, pandas.DataFrame):
        return
    columns, joined = frame_columns(examples), title_and_body(examples)
    rows = (f"(zip(df[{columns[0]!r}], {joined or f'df[{columns[1]!r}]'}))" if columns else  # (else no df[...] is one
            ": a zip of its class column and its text column, each a Series")  # of its columns)
    raise FastTextError(f"examples must be (label, text) pairs, got a pandas DataFrame, whose items are its column "
                        f"names: pass its rows as pairs {rows}")


def review_texts(texts):
    """``texts`` (any iterable of str: a list, a pandas Series, a numpy array, a generator) as a list, each
    one a str. A str itself was answered once per character (``predict("great food")``: 10 answers for one
    review); a NaN (a DataFrame's missing text), a number or bytes was a TypeError from inside the featurizer; a
    bytearray or memoryview, read as its bytes, was refused as ``texts[0] is 116 (int)``."""
    if texts is None or isinstance(texts, (str, bytes, bytearray, memoryview)):  # (iterated, bytes are ints)
        raise FastTextError(f"texts must be a list of review texts, got {'None' if texts is None else 'one ' + type(texts).__name__}; "
                            f"for one review pass [text]")
    # Iterated, these are no reviews in order: a DataFrame is its column names (one answer per column, not per row),
    # a dict its keys (the ids of {id: review}), a set its reviews in an order no answer can be matched back to.
    pandas = sys.modules.get("pandas")  # (only ever given a DataFrame where pandas is imported; not imported here)
    if pandas is not None and isinstance(texts, pandas.DataFrame) and texts.shape[1] == 1:
        # its only column is the reviews (pd.read_csv(path, header=None) of one review a line): it was refused
        texts = texts.iloc[:, 0]
    elif pandas is not None and isinstance(texts, pandas.DataFrame):  # a subclass too (geopandas' GeoDataFrame)
        # (named by the frame's own column where one is named as a text column is: df['text'] was a KeyError pasted;
        # header=None's 0, 1: its text after the class, df[1]; Zhang et al.'s 0, 1, 2: the title and body joined;
        # said in words where no df[...] is one column)
        columns, joined = frame_columns(texts), title_and_body(texts)
        raise FastTextError("texts must be a list of review texts, got a pandas DataFrame, whose items are its column "
                            "names: pass its text column"
                            + (f"s joined as training reads them ({joined})" if joined
                               else f" (df[{columns[1]!r}])" if columns else ", a Series"))
    texts = _one_column_of_an_array(texts)
    if isinstance(texts, collections.abc.Mapping):
        raise FastTextError(f"texts must be a list of review texts, got a {type(texts).__name__}, whose items are its "
                            f"keys: pass its values (list(d.values()))")
    if isinstance(texts, (set, frozenset)):
        raise FastTextError(f"texts must be a list of review texts, got a {type(texts).__name__}, which has no order "
                            f"to answer in: pass a list")
    fill = missing_text_fill(texts)  # (a Series' own column: df['review'].fillna(''))
    try:
        texts = list(texts)
    except TypeError:
        raise FastTextError(f"texts must be a list of review texts, got {type(texts).__name__}") from None
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            hint = (f": a missing value? fill it first ({fill})" if missing_value(text)
                    else ": decode it first (text.decode('utf-8'))" if isinstance(text, bytes) else "")
            raise FastTextError(f"texts[{i}] is {text!r} ({type(text).__name__}), not a str{hint}")
    return texts


def _one_column_of_an_array(texts):
    """``texts`` itself, or a numpy array's one column: ``df[["review"]].values`` (shape (n, 1)) is read as the frame
    of one column is. Any other shape but one row of texts is one error: its rows were read as texts (``texts[0] is
    array([...]) (ndarray), not a str``), and a 0-d array of one text was "got ndarray", neither saying what to pass."""
    numpy = sys.modules.get("numpy")  # (only ever given an array where numpy is imported)
    if numpy is None or not isinstance(texts, numpy.ndarray) or texts.ndim == 1:
        return texts
    if texts.ndim == 2 and texts.shape[1] == 1:
        return texts[:, 0]
    one = ("; for one review pass [text]" if texts.ndim == 0 else
           ": pass its texts as one list (its column of texts, arr[:, i], or its row of them, arr[0])")
    raise FastTextError(f"texts must be a list of review texts, got a numpy array of shape {texts.shape}{one}")


def not_unicode_error(texts, name="texts[{}]", start=0):
    """The error for the first of ``texts`` that UTF-8 cannot encode (a lone surrogate: errors.lone_surrogate_message);
    ``name``: what text ``i`` is called (``.format(start + i)``: ``texts`` a slice of them from ``start`` on)."""
    return FastTextError(lone_surrogate_message(texts, lambda i: name.format(start + i))
                         or "texts hold text that is not valid Unicode")  # (pragma: no cover)
