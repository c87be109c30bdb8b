"""Labels as the model's classes: each document's label -> its class's index (:func:`encode_labels`), for training,
validation and evaluation alike. A label is read as its class id, or as the class's name (``positive``) where the data
is labeled by the names the model shows (:func:`class_ids`); one no class answers to is one error that lists the known
classes and, where it can tell, what the label meant (a class id written otherwise: ``1.0``, ``__label__2``, another
Unicode normalization; pandas' row numbers).
"""
import contextlib
import unicodedata

import numpy as np

from .columns import distinct_row_numbers, whole_number
from .errors import FastTextError
from .text import LABEL_PREFIX
from .unknown_labels import WAY_OUT, cased_otherwise, invisible_otherwise


def encode_labels(labels, classes, where, names=None, lines=None, column="label"):
    """Each label's index in ``classes`` (the trained labels, in order); a label training never saw is an
    error naming ``where`` (and the line it first occurs at, where ``lines``, ``{label: line}``, has it). ``names``
    (``{class id: name}``, the model's label names): data labeled by the names the model shows (``positive``,
    ``__label__positive``) instead of the class ids is read as those classes (:func:`class_ids`). ``column``: the
    data's class column, as a hint's pandas line names it (data.pandas_class_column; None: no pandas line)."""
    index = {label: i for i, label in enumerate(classes)}
    return np.array([index[label] for label in class_ids(labels, classes, where, names, lines, column)],
                    dtype=np.int64)


def class_ids(labels, classes, where, names=None, lines=None, column="label"):
    """``labels`` as class ids of ``classes``: the labels themselves when each is a class id (the list given,
    unchanged: ids always read as ids), or, when each is a class as predictions show it (its name, ``names``:
    ``{class id: name}``, or its id where it has no name), those classes' ids.

    The labels are read as every command reads a file's (``data.whole_number_classes``: ``5.0`` for ``5`` only when every
    label is a whole float); a label that is no class is the class written as its whole float, where one is (``5``:
    the ``5.0`` of a model of half stars, or of one trained on ``__label__5.0`` before that rule). A file is labeled one way: a mix of ids and names is an error, and so is a file of names one of which is
    also another class's id (names ``1=2,2=good``, labels ``2`` and ``good``): read as names, ``2`` would be
    class 1, which is not what it means as an id. Any other label is unknown, and the error lists the known
    classes with their names (``known: 1 (negative), 2 (positive)``)."""
    present = set(labels)
    ids = set(classes)
    if present <= ids:
        return labels
    # The labels were read by data.whole_number_classes (5.0 is 5 when every label of the file is a whole float), the
    # model's classes from its training data: a class written 5.0 is kept so beside classes that are no whole floats
    # (half stars: 1.0, 1.5, 2.0, which a file of whole stars alone reads as 1 and 2), and by a model trained on
    # __label__5.0 before the rule. A label that is no class is then the class written as its whole float.
    as_float = {}
    for label in classes:
        whole = whole_number(label)
        if whole is not None and whole not in ids:
            as_float.setdefault(whole, []).append(label)
    as_float = {whole: spelled[0] for whole, spelled in as_float.items() if len(spelled) == 1}  # (5.0 and 05.0: no)
    if present <= ids | set(as_float):
        return [label if label in ids else as_float[label] for label in labels]
    by_name = {}
    for label in classes:  # each class as predictions show it: its name, or its id where it has none
        by_name.setdefault((names or {}).get(label, label), []).append(label)
    if present <= set(by_name):
        flips = sorted(label for label in present if label in ids and by_name[label] != [label])
        if flips:
            shown = ", ".join(f"{label!r} (class {label}'s id, and the name of class "
                              f"{' / '.join(by_name[label])})" for label in flips[:3])
            raise FastTextError(f"{where}: label(s) {shown} could mean either class: the model's class names reuse "
                                f"its class ids (known: {_known(classes, names)}); label the data by class id")
        twice = sorted(name for name in present if len(by_name[name]) > 1)
        if twice:  # (a mapping set by hand; names files and --label-names refuse one)
            raise FastTextError(f"{where}: label(s) {', '.join(map(repr, twice[:3]))} name several classes "
                                f"(known: {_known(classes, names)}); label the data by class id")
        return [by_name[label][0] for label in labels]
    unknown = sorted(present - ids - set(by_name))
    if not unknown:  # each label is an id or a name, but not all of one kind
        raise FastTextError(f"{where} mixes class ids ({', '.join(map(repr, sorted(present & ids)[:5]))}) and class "
                            f"names ({', '.join(map(repr, sorted(present - ids)[:5]))}); label every document one "
                            f"way (known: {_known(classes, names)})")
    lines = lines or {}
    shown = ", ".join(repr(u) + (f" (line {lines[u]})" if lines.get(u) else "") for u in unknown[:5])
    # every document a label of its own, each a whole number: pandas' index written first without a header
    hint = ("; each document's is a different whole number: row numbers? (df.to_csv(path, header=False) writes "
            "pandas' index first: write the file with index=False)"
            if len(present) == len(labels) and distinct_row_numbers(present)
            else _spelled_otherwise(unknown, ids) or invisible_otherwise(unknown, ids | set(by_name), column)
            or cased_otherwise(unknown, ids | set(by_name), column))
    raise FastTextError(f"{where} has label(s) {shown} not seen in training (known: {_known(classes, names)})"
                        f"{hint or WAY_OUT}")


def note_first_lines(first_lines, chunk, start, line_of):
    """Put in ``first_lines`` (``{label: line}``) the line of each label of ``chunk`` (``(label, text)`` pairs, the
    first at index ``start`` among all read) seen for the first time."""
    for i, (label, _) in enumerate(chunk):
        if label not in first_lines:
            first_lines[label] = line_of(start + i)


def _spelled_otherwise(unknown, ids):
    """The error's hint when every label in ``unknown`` is one of the class ids ``ids`` written otherwise: ``1.0``
    for ``1`` (pandas writes a class column of floats so, as when it holds a NaN), ``__label__2`` for ``2``
    (fastText's prefix in a CSV's class column). Still refused: which class a label means is not guessed."""
    def plain(label):
        label = label.strip()
        label = label[len(LABEL_PREFIX):] if label.startswith(LABEL_PREFIX) else label
        with contextlib.suppress(ValueError, OverflowError):
            number = float(label)
            label = str(int(number)) if number.is_integer() else label
        return label

    meant = {label: plain(label) for label in unknown}
    if not all(m in ids for m in meant.values()):
        return _normalized_otherwise(unknown, ids)
    shown = ", ".join(f"{label!r} for {m}" for label, m in list(meant.items())[:3])
    return f"; the model's classes written otherwise ({shown}): write them as the training data did"


def _normalized_otherwise(unknown, ids):
    """The error's hint when every label in ``unknown`` is one of the class ids ``ids`` in another Unicode normalization
    (``cafe`` + a combining accent for a precomposed ``café``): shown escaped, as they print alike."""
    by_nfc = {unicodedata.normalize("NFC", label): label for label in ids}
    meant = {label: by_nfc.get(unicodedata.normalize("NFC", label)) for label in unknown}
    if not all(meant.values()):
        return ""
    shown = ", ".join(f"{ascii(label)} for {ascii(m)}" for label, m in list(meant.items())[:3])
    return (f"; the model's classes in another Unicode normalization ({shown}: combining accents and precomposed "
            f"letters): write them as the training data did")


def _known(classes, names):
    """``1 (negative), 2 (positive)``: the class ids, each with its name where it has one of its own."""
    names = names or {}
    return ", ".join(f"{label} ({names[label]})" if names.get(label, label) != label else label for label in classes)
