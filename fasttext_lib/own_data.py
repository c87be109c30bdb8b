"""Notebook 01's route for the user's own labelled files: ``train_file`` (and ``test_file``) prepared as ``dataset``'s
splits, which 02, 03 and 04 then read by that name like any other prepared dataset.

01 took only its own names (``sample``, ``synthetic``, a Zhang et al. set): ``-p dataset my_reviews.csv`` was
"unknown dataset", and the series had no way in for a data scientist's own CSV. The files are read as training
reads them (fastText, CSV with a header or Zhang's, TSV, JSON Lines, compressed; local or ``s3://``:
data.read_labeled), so a table's columns are chosen the same way (``label_column``, ``text_column``). A table whose
header does not tell them is told to name them as the notebooks do (:func:`read_own_splits`, :func:`read_prepared`),
not with the command line's flags, which no notebook has.
"""
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
            return {"train": train, "test": read_labeled(test_file, fmt=fmt)}
    except ColumnsToName as exc:
        raise exc.advising(NAMED_IN_01) from None
    if len(train) < 2:
        raise FastTextError(f"{train_file} holds {len(train)} document: too few to hold out a test split (give "
                            f"test_file)")
    kept, held_out = split_validation(train, TEST_FRACTION, seed)
    return {"train": kept, "test": held_out}


def read_prepared(uri, dataset, limit=None):
    """02's, 03's and 04's read of ``dataset``'s split ``uri`` (Workspace.prepared), as ``read_labeled`` reads it
    (``limit``: its). A table whose columns must be named (a Kaggle table uploaded as ``data/NAME.train``) is told to
    be prepared by 01 with its columns named, where the command line's flags were the advice."""
    from .data import read_labeled

    try:
        return read_labeled(uri, limit=limit)
    except ColumnsToName as exc:
        raise exc.advising(NAMED_BY_RUNNING_01.format(dataset=dataset)) from None
