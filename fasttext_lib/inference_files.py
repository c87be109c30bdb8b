"""Notebook 04's files in a run's local folder, and 04's record of what it wrote there.

04 writes its predictions table, confusion matrix and word vectors into ``{output_dir}/{run_name}/``
(workspace.Workspace.run_folder). Once notebook 02 saves another bundle for the run they are of a model no longer
there, and :func:`remove_written` removes them. A file is 04's only by its record, :data:`RECORD` (written_record.py):
each one has its name, size and sha256 (and the bundle it is of: ``of``, each writer's) in ``04_written.json`` beside
it, written with the file as one set (storage.atomic_writes: where the record cannot be written, a file of yours has
its name, or a Stop comes as they are put in place, both are as they were, so the two never disagree). Known by
their content (a CSV header, a PNG mark, a ``.vec`` first line), a table of the user's with 04's columns, or any
``.vec`` file, under one of 04's names was removed. A file changed since 04 wrote it is the user's
now: it stays, and is said to.

The output folder is always local (Workspace.out), so are these files; the writes go through storage.atomic_write.
"""
import sys

from . import storage
from .stops import note_written
from .written_record import WrittenRecord

PREDICTIONS_TABLE, CONFUSION_PLOT, VECTORS_FILE = "04_predictions.csv", "04_confusion_matrix.png", "04_word_vectors.vec"
# The names 04 writes, in the order it writes them, and its record of them.
OUTPUTS = (PREDICTIONS_TABLE, CONFUSION_PLOT, VECTORS_FILE)
RECORD = WrittenRecord("04_written.json", OUTPUTS, "notebook 04")


def write_predictions(folder, predictions, of=None):
    """``predictions`` (a DataFrame) as :data:`PREDICTIONS_TABLE` in ``folder``, written whole or not at all (a plain
    ``to_csv`` stopped part way left a truncated table in place of the earlier one), and recorded. Returns its path."""
    return _write_recorded(folder, PREDICTIONS_TABLE, predictions.to_csv(index=False).encode("utf-8"), of)


def write_figure(folder, fig, dpi=100, of=None):
    """``fig`` as :data:`CONFUSION_PLOT` in ``folder`` (marked as the library's, figures.FIGURE_MARK), written whole,
    and recorded. Returns its path."""
    from .figures import png_bytes

    return _write_recorded(folder, CONFUSION_PLOT, png_bytes(fig, dpi), of)


def write_vectors(folder, predictor, of=None):
    """``predictor``'s word vectors as :data:`VECTORS_FILE` in ``folder`` (vectors.export_vectors: written whole, over
    an earlier one), and its record with it, as one set: both in place or both as they were, whatever the stop point.
    Recorded once the file was in place, a stop just after the record's write put the earlier file back under the
    new file's record, and 04 kept it later as one changed since. Returns the number of words."""
    from .vectors import export_vectors

    what = f"{VECTORS_FILE} not written"
    RECORD.check_writable(folder, what)  # (before the export, not only after it)
    path = folder / VECTORS_FILE
    return export_vectors(predictor, str(path), overwrite=True, on_written=lambda n: note_written(),
                          beside=(folder / RECORD.name, lambda digest: RECORD.updated(
                              folder, {}, what, of=of, digests={VECTORS_FILE: digest})))


def _write_recorded(folder, name, data, of=None):
    """``data`` as ``name`` in ``folder`` with its record, as one set (as :func:`write_vectors` writes)."""
    what = f"{name} not written"
    RECORD.check_writable(folder, what)
    path = folder / name
    with storage.atomic_writes([str(path), str(folder / RECORD.name)],
                               overwrite_as=storage.OVERWRITE_ARGUMENT) as (f, record):  # (notebook 04 has no command)
        f.write(data)
        record.write(RECORD.updated(folder, {name: data}, what, of=of))
    return path


def remove_written(folder, shown, of=None):
    """Remove the files 04's record in ``folder`` names that still hold what 04 wrote, then the record
    (:meth:`~fasttext_lib.written_record.WrittenRecord.remove_unchanged`: a file changed since stays, said in one
    line). ``shown``: the folder as printed. ``of``: the bundle replaced; a file 04 recorded as of another (the run
    folder is one for every prefix and bucket: 02's run to prefix exp2 removed 04's files of exp1's bundle, still
    there, as "of the model replaced") stays, said in one line. Says on stderr what it removed; returns the names."""
    return RECORD.remove_unchanged(folder, shown, lambda removed: print(
        f"removed {', '.join(removed)} from {shown}: 04's, of the model replaced", file=sys.stderr), of)
