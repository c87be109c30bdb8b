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
from collections import Counter

from . import storage
from .columns import FLAG_ADVICE, LEFT_OUT_READ_BY, ColumnsToName
from .errors import FastTextError
from .notebook_params import key_path, known_datasets
from .stops import stopped_reading, telling_stops

# The share of each class of the training file held out as the test split when no test_file is given (autotune's
# validation share).
TEST_FRACTION = 0.2
SHOWN_CLASSES = 5  # the classes of one document held_out_line names
# How 01 is told to name a table's columns (ColumnsToName.advising), and 02, 03 and 04 (which read what 01 prepared).
NAMED_IN_01 = "label_column='NAME' and text_column='NAME' (this notebook's parameters)"
NOTEBOOK_SETTINGS = ("label_column", "text_column")  # what a refusal of the columns names (columns.Columns.given_as)
READ_AS_TEXT_IN_01 = "text_column='NAME'"  # what 01's note of a table's columns says reads one left out
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
    train_file, test_file = storage.expand_home(train_file), storage.expand_home(test_file)  # (~: the home folder)
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
    _refuse_train_file_as_test_file(train_file, test_file)


def _refuse_train_file_as_test_file(train_file, test_file):
    """The train file given as test_file too (or a link to it) was prepared as a test split of the training documents:
    02 reported their accuracy as val_accuracy and 04 as the held-out score. The command line warns of such a
    --validation (cli); 02 reads two objects 01 wrote and cannot tell, so 01 refuses it."""
    from .storage import same_location

    if test_file is not None and same_location(train_file, test_file):
        raise FastTextError(f"test_file {test_file} is the train_file: the test split would be the documents the model "
                            f"trains on, and 02's and 04's accuracy no held-out score; give held-out data, or "
                            f"test_file=None to hold out a seeded {TEST_FRACTION:.0%} of each class of train_file")


@telling_stops(lambda train_file, test_file=None, *_, **__: stopped_reading(  # (a Stop: one line in a notebook)
    train_file if test_file is None else f"{train_file} and {test_file}"))
def read_own_splits(train_file, test_file=None, label_column=None, text_column=None, seed=0):
    """``{"train": data, "test": data}`` of the user's files (:class:`~fasttext_lib.data.LabeledTexts`): ``test_file``
    as the test split, else a seeded :data:`TEST_FRACTION` of each class of ``train_file`` (:func:`hold_out_by_class`,
    the same every run of ``seed``). Class names (classes.txt) beside either file name both splits
    (label_names.find_beside_either)."""
    from .columns import csv_columns
    from .config import check_seed
    from .data import read_labeled
    from .formats import FormatToGive
    from . import label_names

    train_file, test_file = storage.expand_home(train_file), storage.expand_home(test_file)  # (~: the home folder)
    if test_file is None:  # before the file is read (a bad one was numpy's traceback once it had been)
        check_seed(seed)
    fmt = csv_columns("auto", label_column, [text_column] if text_column else None, given_as=NOTEBOOK_SETTINGS)
    try:
        if test_file is not None:
            # (before the data: minutes at Yelp size)
            named = label_names.find_beside_either(train_file, test_file, ("train_file", "test_file"))
            splits = {"train": read_labeled(train_file, fmt=fmt, find_names=False, note=_note),
                      "test": read_labeled(test_file, fmt=fmt, find_names=False, note=_note)}
            _check_trainable(splits["train"])
            splits = _named(_test_by_class_ids(splits, named[1], test_file), *named)
            _check_test_classes(splits, test_file)
            return _writable_classes(splits)
        named = label_names.find_beside(train_file)  # (read_labeled's, whose refusal of it names --label-names)
        train = read_labeled(train_file, fmt=fmt, find_names=False, note=_note)
    except ColumnsToName as exc:
        raise exc.advising(NAMED_IN_01) from None
    except FormatToGive as exc:  # (01 has no format parameter: the CLI's --format was the advice)
        raise exc.unflagged from None
    train = _named({"train": train}, *named, train_file)["train"]  # (as read_labeled: the names, then the classes)
    _check_trainable(train)
    kept, held_out = hold_out_by_class(train, TEST_FRACTION, seed, train_file)
    return _writable_classes({"train": kept, "test": held_out})


def _note(line):
    """How 01 read the user's file (data.read_labeled's ``note``: the columns read as the class and the text, pandas'
    index column left out, a repeated header row skipped, documents without words), on stderr as the command line
    says it, in the notebook's terms: its parameters, not the command line's flags. 01 said none of it: a Kaggle
    table's Summary joined to its Text, its other columns left out, without a word."""
    line = line.replace(f"({LEFT_OUT_READ_BY} reads", f"({READ_AS_TEXT_IN_01} reads").replace(FLAG_ADVICE, NAMED_IN_01)
    print(line, file=sys.stderr, flush=True)  # (flushed: in a notebook, above the lines 01 prints after it)


def _check_trainable(train):
    """Refuse ``train`` as 02's training would (class_checks.check_classes), while the user's file is what the line
    is about. A headerless CSV with the text first was prepared with every review a class of its own: the "names"
    went to {dataset}.classes.txt, and 02 stopped on that file (a name too long) instead of saying the columns were
    the wrong way round; a file whose reviews were all different was told "give test_file"."""
    from .class_checks import check_classes
    from .data import sort_labels

    check_classes(train, sort_labels(train.labels))


def _check_test_classes(splits, test_file):
    """Refuse a test split with a label the training split has no class for, as 02's validation would
    (label_encoding.class_ids: a class's id, or its name where the classes have names), naming the user's
    ``test_file``: 02 named the split 01 had written (``s3://.../data/mix.test has label(s) 'negative' (line 1 of
    ...) not seen in training``)."""
    from .data import lines_named, pandas_class_column, sort_labels
    from .label_encoding import class_ids

    train, test = splits["train"], splits["test"]
    class_ids(test.labels, sort_labels(train.labels), test_file, train.names,
              lines_named(test.first_lines, test_file), pandas_class_column(test))


def _test_by_class_ids(splits, found, test_file):
    """``splits`` with a test split labelled by the names ``found`` (the names file beside either file) gives the
    training split's classes (``negative`` for ``1``) labelled by those classes' ids, as 02 reads it with the names
    01 writes beside it. The CLI's validation data is read so (label_encoding.class_ids); 01 refused it as a names
    file naming 2 of the data's 4 classes. A test split labelled by class ids, or with labels that are neither, is
    left as it is, for the checks after this to say what is wrong."""
    from dataclasses import replace

    from . import label_names
    from .data import sort_labels
    from .label_encoding import class_ids

    train, test = splits["train"], splits["test"]
    classes = sort_labels(train.labels)
    names = {label: name for label, name in label_names.keyed_by_class(found, classes).items() if label in classes}
    if not names or set(test.labels) <= set(classes) or not set(test.labels) <= set(names.values()) | set(classes):
        return splits
    ids = class_ids(test.labels, classes, test_file, names)  # (a mix of ids and names: refused, naming test_file)
    as_id = dict(zip(test.labels, ids))
    first_lines = {}
    for label, line in test.first_lines.items():
        first_lines.setdefault(as_id.get(label, label), line)
    return {"train": train, "test": replace(test, labels=list(ids), first_lines=first_lines)}


def _named(splits, names_file, found, data_file):
    """``splits`` named by ``found`` (what label_names.find_beside_either found beside ``data_file``), checked
    against the classes of both splits as read_labeled checks a names file against one file's
    (label_names.kept_for_data), its refusals saying what a notebook's user can do (no --label-names here)."""
    from . import label_names

    if names_file is None:
        return splits
    labels = [label for data in splits.values() for label in data.labels]
    names = label_names.kept_for_data(found, labels, names_file, subset=label_names.named_for(names_file, data_file),
                                      option=None, own_name=label_names.beside(data_file)[0])
    for data in splits.values():
        data.names = dict(names)
    return splits


def hold_out_by_class(data, fraction, seed, source):
    """``(kept, held_out)``: a seeded ``fraction`` of each class of ``data`` held out (rounded; at least one document
    of a class of two or more, and at least one kept), in the order of one seeded shuffle of all of it. Drawn over
    the whole file, a small or skewed one's test split could miss a class (and training another). A class of one
    document stays in training. ``source``: the file, named in the refusal of data whose every class has one."""
    import numpy as np

    sizes = Counter(data.labels)
    wanted = {label: min(n - 1, max(1, int(round(fraction * n)))) for label, n in sizes.items()}
    if not any(wanted.values()):
        raise FastTextError(f"{source} has no class of 2 documents or more: none can be held out as the test split "
                            f"(give test_file)")
    kept, held_out = [], []
    for i in np.random.RandomState(seed).permutation(len(data)).tolist():
        label = data.labels[i]
        (held_out if wanted[label] else kept).append(i)
        wanted[label] -= bool(wanted[label])
    return data.subset(kept), data.subset(held_out)


def held_out_line(splits, train_file, seed):
    """01's line saying what :func:`hold_out_by_class` held out of ``train_file`` (``splits``: its result)."""
    held, total = len(splits["test"]), len(splits["train"]) + len(splits["test"])
    line = (f"held out as the test split: {held} of the {total} documents of {train_file}, a seeded "
            f"{TEST_FRACTION:.0%} of each class (seed {seed}; at least one of each class of 2 or more documents)")
    alone = sorted(set(splits["train"].labels) - set(splits["test"].labels), key=lambda c: (len(c), c))
    if alone:  # (the classes with one document; a few by name, the line stays one line)
        shown = ", ".join(splits["train"].names.get(c, c) for c in alone[:SHOWN_CLASSES])
        more = f" and {len(alone) - SHOWN_CLASSES} more" if len(alone) > SHOWN_CLASSES else ""
        line += f"; in training only, classes of one document: {shown}{more}"
    return line


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


@telling_stops(lambda uri, *_, **__: stopped_reading(uri))  # (a Stop: one line in a notebook, not a traceback)
def read_prepared(uri, dataset, limit=None, streamed=False):
    """02's, 03's and 04's read of ``dataset``'s split ``uri`` (Workspace.prepared), as ``read_labeled`` reads it
    (``limit``: its). A table whose columns must be named (a Kaggle table uploaded as ``data/NAME.train``) is told to
    be prepared by 01 with its columns named, where the command line's flags were the advice.

    ``streamed=True`` (02's training split, unless autotune splits its texts): read as the command line's ``train``
    reads ``--train`` (data.read_counted), tokenized as it streams in, the token ids in a temporary file; the
    :class:`~fasttext_lib.data.CountedTexts` keeps no texts (its first data.SAMPLE_DOCS aside). Read whole, Yelp's
    560k reviews held ~0.7 GB of strings in the kernel through training and after, and were tokenized in a second
    pass once read (docs/RESULTS.md section 4 measures the command line's route)."""
    from .data import read_counted, read_labeled

    if streamed and limit is not None:
        raise ValueError("read_prepared: a streamed read takes the whole split (limit is read_labeled's)")
    try:
        return read_counted(uri, find_names=True) if streamed else read_labeled(uri, limit=limit)
    except ColumnsToName as exc:
        raise exc.advising(NAMED_BY_RUNNING_01.format(dataset=dataset)) from None
