"""Notebook 01's route for the user's own labelled files: ``train_file`` (and ``test_file``) prepared as ``dataset``'s
splits, which 02, 03 and 04 then read by that name like any other prepared dataset.

01 took only its own names (``sample``, ``synthetic``, a Zhang et al. set): ``-p dataset my_reviews.csv`` was
"unknown dataset", and the series had no way in for a data scientist's own CSV. The files are read as training
reads them (fastText, CSV with a header or Zhang's, TSV, JSON Lines, compressed; local or ``s3://``:
data.read_labeled), so a table's columns are chosen the same way (``label_column``, ``text_column``). A table whose
header does not tell them is told to name them as the notebooks do (:func:`read_own_splits`, :func:`read_prepared`),
not with the command line's flags, which no notebook has.
"""
import sys

from .columns import ColumnsToName
from .errors import FastTextError
from .notebook_params import key_path, known_datasets

# The share of the training file held out as the test split when no test_file is given (autotune's validation share).
TEST_FRACTION = 0.2
# How 01 is told to name a table's columns (ColumnsToName.advising), and 02, 03 and 04 (which read what 01 prepared).
NAMED_IN_01 = "label_column='NAME' and text_column='NAME' (this notebook's parameters)"
NAMED_BY_RUNNING_01 = ("run notebook 01 with dataset={dataset!r}, train_file=<your file>, label_column='NAME' and "
                       "text_column='NAME' (02, 03 and 04 read what 01 prepared)")


def check_own_data(dataset, train_file, test_file=None, label_column=None, text_column=None):
    """01's check of its own-data parameters, before anything is read: ``train_file`` a path (``None``: no own data,
    and then ``test_file`` and the columns mean nothing), ``dataset`` a name of the user's own for its splits (not one
    01 makes itself: its files, and a Zhang set's ``.classes.txt``, would be read as this data's), the columns names."""
    for name, value in {"train_file": train_file, "test_file": test_file}.items():
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise FastTextError(f"{name} must be a file's path (local or s3://) or None, got {value!r}")
    for name, value in {"label_column": label_column, "text_column": text_column}.items():
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise FastTextError(f"{name} must be a column's name or None, got {value!r}")
    if train_file is None:
        given = [n for n, v in {"test_file": test_file, "label_column": label_column, "text_column": text_column}.items()
                 if v is not None]
        if given:
            raise FastTextError(f"{given[0]} is for your own data: give train_file too (and a dataset name for it)")
        return
    if not isinstance(dataset, str) or dataset in known_datasets():
        raise FastTextError(f"dataset names your own data's splits when train_file is given: choose a name of your own "
                            f"(such as 'my_reviews'), got {dataset!r}")
    key_path(dataset, "dataset")


def read_own_splits(train_file, test_file=None, label_column=None, text_column=None, seed=0):
    """``{"train": data, "test": data}`` of the user's files (:class:`~fasttext_lib.data.LabeledTexts`): ``test_file``
    as the test split, else a seeded :data:`TEST_FRACTION` of ``train_file`` (the same every run of ``seed``)."""
    from .autotune import split_validation
    from .columns import csv_columns
    from .data import read_labeled

    fmt = csv_columns("auto", label_column, [text_column] if text_column else None)
    try:
        train = read_labeled(train_file, fmt=fmt)
        if test_file is not None:
            return _writable_classes({"train": train, "test": read_labeled(test_file, fmt=fmt)})
    except ColumnsToName as exc:
        raise exc.advising(NAMED_IN_01) from None
    if len(train) < 2:
        raise FastTextError(f"{train_file} holds {len(train)} document: too few to hold out a test split (give "
                            f"test_file)")
    kept, held_out = split_validation(train, TEST_FRACTION, seed)
    return _writable_classes({"train": kept, "test": held_out})


def _writable_classes(splits):
    """``splits`` with each class a fastText-format file cannot hold (one with whitespace: Kaggle's ``Extremely
    Negative``, ``1 star``) written as an id without it (``Extremely_Negative``; ``_2``, ... after it where that is a
    class too) and named as written (``names``: the classes.txt 01 writes beside the splits), so that 02's bundle
    and 04's predictions say it as the user's file does. 01 was refused "write CSV instead, or rename the class",
    which it has no way to do."""
    import re
    from dataclasses import replace

    classes = sorted({label for data in splits.values() for label in data.labels})
    taken, ids = set(classes), {}
    for label in classes:
        if re.search(r"\s", label):
            base = re.sub(r"\s+", "_", label.strip())
            new, n = base, 1
            while new in taken:
                n += 1
                new = f"{base}_{n}"
            taken.add(new)
            ids[label] = new
    if not ids:
        return splits
    # (the train split's names are those 01 writes; a class they do not name is named as the file writes it)
    names = {ids.get(label, label): name for label, name in splits["train"].names.items()}
    for label, new in ids.items():
        names.setdefault(new, label)
    return {split: replace(data, labels=[ids.get(label, label) for label in data.labels], names=dict(names),
                           first_lines={ids.get(label, label): line for label, line in data.first_lines.items()})
            for split, data in splits.items()}


def write_own_splits(splits, prefix, dataset):
    """01's write of the user's ``splits`` as ``dataset``'s (writers.write_fasttext_splits), with their class names
    (``{dataset}.classes.txt``) when they have any. Without: the ``{dataset}.classes.txt`` an earlier run of 01 wrote
    for this name is removed once the splits are written, as they replace what that run prepared; left, it named
    the new data's classes, silently (02 reads it with the splits). Returns what write_fasttext_splits does."""
    from . import storage
    from .label_names import SUFFIX
    from .writers import write_fasttext_splits

    names = splits["train"].names
    written = write_fasttext_splits(splits, prefix, dataset, names=names or None)
    stale = storage.join(prefix, key_path(dataset, "dataset") + SUFFIX)
    if not names and storage.exists(stale, forbidden_is_missing=True):
        try:
            storage.remove_file(stale)
        except FastTextError as exc:
            raise FastTextError(f"{exc}: it names the classes of the data prepared before as {dataset!r}, and would "
                                f"name this data's (02 reads it with the splits); delete it") from None
        print(f"removed {stale}: the class names of the data prepared before as {dataset!r}", file=sys.stderr)
    return written


def read_prepared(uri, dataset, limit=None):
    """02's, 03's and 04's read of ``dataset``'s split ``uri`` (Workspace.prepared), as ``read_labeled`` reads it
    (``limit``: its). A table whose columns must be named (a Kaggle table uploaded as ``data/NAME.train``) is told to
    be prepared by 01 with its columns named, where the command line's flags were the advice."""
    from .data import read_labeled

    try:
        return read_labeled(uri, limit=limit)
    except ColumnsToName as exc:
        raise exc.advising(NAMED_BY_RUNNING_01.format(dataset=dataset)) from None
