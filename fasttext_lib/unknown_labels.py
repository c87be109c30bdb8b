"""What the refusal of labels a model does not know (predict.class_ids: evaluate, train's and autotune's validation
data) says beyond naming them: the class each one is, written in another case (:func:`cased_otherwise`), or, when no
hint says which class a label is written for, the way out (:data:`WAY_OUT`). Refused either way: which class a label
means is not guessed."""
import unicodedata

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
