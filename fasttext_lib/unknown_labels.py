"""What the refusal of labels a model does not know (label_encoding.class_ids: evaluate, train's and autotune's
validation data) says beyond naming them: the class each one is, written in another case (:func:`cased_otherwise`) or
with an invisible character (:func:`invisible_otherwise`), or, when no hint says which class a label is written for,
the way out (:data:`WAY_OUT`). Refused either way: which class a label means is not guessed."""
import re
import unicodedata

from .text import BIDI_CONTROLS, INVISIBLE, ZERO_WIDTH_SPACE

WAY_OUT = ("; a model answers only the classes it was trained on: drop those documents, or train on data that has "
           "those classes too")


def case_folded(label):
    """``label`` as two spellings of one class in another case are one: NFC, then lowercased (not casefold: ß is no
    ss). The one rule of this hint and of class_checks.warn_classes_cased_alike, which pairs training's classes."""
    return unicodedata.normalize("NFC", label).lower()


def cased_otherwise(unknown, known, column="label"):
    """The error's hint when each label in ``unknown`` is, but for its case, one of ``known`` (the model's classes:
    their ids and the names predictions show) and one only: ``Positive`` for ``positive`` (a column labelled by hand,
    or another tool's export); else "". A label that matches two of them (``POSITIVE`` for a model of ``Positive``
    and ``positive``) or none is no hint's. ``column``: the name of the data's class column for the pandas line (the
    user's own: data.pandas_class_column), or None: no column (fastText format), no pandas line."""
    by_case = {}
    for label in sorted(known):
        by_case.setdefault(case_folded(label), []).append(label)
    meant = {label: by_case.get(case_folded(label), []) for label in unknown}
    if not meant or any(len(classes) != 1 for classes in meant.values()):
        return ""
    # a label in another Unicode normalization too (combining accents: 'Te\u0301le\u0301' for 'télé') prints as
    # the class in another case: shown escaped, and lowercasing alone, which keeps its accents combining, is no fix
    normalized = any(label.lower() != classes[0].lower() for label, classes in meant.items())
    show = ascii if normalized else repr
    shown = ", ".join(f"{show(label)} for {show(classes[0]) if normalized else classes[0]}"
                      for label, classes in list(meant.items())[:3])
    # str.lower() of the whole column only where it leaves every class as written: a model of 'NEUTRAL' beside
    # 'positive' would have its 'NEUTRAL' rows made a class it does not know; NFC first only where every class is in
    # NFC (a model of classes written with combining accents would have those rows made other classes)
    lowered = column is not None and all(label == label.lower() for label in known) and (
        not normalized or all(label == unicodedata.normalize("NFC", label) for label in known))
    how = f"df[{column!r}]" + (".str.normalize('NFC')" if normalized else "") + ".str.lower()"
    return (f"; the model's classes written in another case{' and Unicode normalization' if normalized else ''} "
            f"({shown}): write them as the training data did"
            + (f" (pandas: df[{column!r}] = {how})" if lowered else ""))


# Characters that draw nothing and tell no label from another, wherever they are: the byte order mark, the word
# joiner, the soft hyphen, the zero-width space (text.INVISIBLE, text.ZERO_WIDTH_SPACE) and the direction marks and
# controls (text.BIDI_CONTROLS). Not every format character (Unicode's Cf), which this rule was: the zero-width
# non-joiner and joiner U+200C, U+200D change how a Persian or Indic word and an emoji sequence are written (two
# labels they tell apart print differently), the tag characters U+E0020-U+E007F say which flag a black flag is
# (England's, Scotland's), and U+0600-U+0605 and U+06DD are drawn.
_HIDDEN = re.compile(f"[{INVISIBLE}{ZERO_WIDTH_SPACE}{BIDI_CONTROLS}]")
# The joiners join nothing at a label's start or end: there they draw nothing either.
JOINERS = "\u200c\u200d"


def without_invisible(label):
    """``label`` without the characters in it that draw nothing (:data:`_HIDDEN` anywhere, :data:`JOINERS` at its
    ends): the one rule of :func:`invisible_otherwise` and of class_checks' refusal of two training classes that differ
    in them alone."""
    return _HIDDEN.sub("", label).strip(JOINERS)


def invisible_in(label):
    """The characters :func:`without_invisible` removes from ``label``."""
    inner = _HIDDEN.sub("", label)
    left, right = len(inner) - len(inner.lstrip(JOINERS)), len(inner.rstrip(JOINERS))
    return _HIDDEN.findall(label) + list(inner[:left]) + list(inner[max(left, right):])


def removal(column, hidden):
    """How to remove the ``hidden`` characters (:func:`invisible_in`) from the labels: the pandas line for ``column``
    (the data's class column), or for fastText format (None) the characters to remove from its __label__ words. A
    joiner is stripped from the ends only: inside a label it may join a word another class is written with."""
    hidden = sorted(set(hidden))
    if column is None:
        return f"remove {', '.join(map(ascii, hidden))} from the __label__ words"
    joiners = "".join(c for c in hidden if c in JOINERS)
    return (f"pandas: df[{column!r}] = df[{column!r}]"
            + "".join(f".str.replace({ascii(c)}, '')" for c in hidden if c not in JOINERS)
            + (f".str.strip({ascii(joiners)})" if joiners else ""))


def invisible_otherwise(unknown, known, column="label"):
    """The error's hint when each label in ``unknown`` is one of ``known`` (the model's classes: their ids and the
    names predictions show) with invisible characters added: ``positive`` + a zero-width space, pasted from a web page
    or a spreadsheet cell, which prints as the class; else "". Named by code point, with the pandas line that removes
    them from ``column`` (the data's class column: data.pandas_class_column), or for fastText format (None), the
    characters to remove from its __label__ words. Only where removing them leaves a class exactly as written, so that
    the line given is the fix (training refuses such a pair of classes in one line: class_checks)."""
    meant = {label: without_invisible(label) for label in unknown}
    if not meant or any(visible == label or visible not in known for label, visible in meant.items()):
        return ""
    hidden = sorted({c for label in unknown for c in invisible_in(label)})
    shown = ", ".join(f"{ascii(label)} for {visible}" for label, visible in list(meant.items())[:3])
    named, them = invisible_named(hidden)
    return (f"; the model's classes with {named} added ({shown}): write them without {them} "
            f"({removal(column, hidden)})")


def invisible_named(hidden):
    """``('an invisible character (U+200B)', 'it')``, or ``('invisible characters (U+00AD, U+200B)', 'them')``: the
    ``hidden`` characters (:func:`invisible_in`, each once) as this hint and class_checks' refusal name them, and the
    word their fix says them by."""
    points = ", ".join(f"U+{ord(c):04X}" for c in hidden)
    if len(hidden) == 1:
        return f"an invisible character ({points})", "it"
    return f"invisible characters ({points})", "them"
