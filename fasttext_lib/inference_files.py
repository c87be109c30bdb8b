"""Notebook 04's files in a run's local folder, and 04's record of what it wrote there.

04 writes its predictions table, confusion matrix and word vectors into ``{output_dir}/{run_name}/``
(workspace.Workspace.run_folder). Once notebook 02 saves another bundle for the run they are of a model no longer
there, and :func:`remove_written` removes them. A file is 04's only by this record: each one, once in place, has its
name, size and sha256 written to :data:`RECORD` beside it (atomically; where the record cannot be written the file is
put back as it was, so the two never disagree). Known by their content (a CSV header, a PNG mark, a ``.vec`` first
line), a table of the user's with 04's columns, or any ``.vec`` file, under one of 04's names was removed. A file
changed since 04 wrote it is the user's now: it stays, and is said to.

The output folder is always local (Workspace.out), so are these files; the writes go through storage.atomic_write.
"""
import hashlib
import io
import json
import sys

from . import storage
from .errors import FastTextError

PREDICTIONS_TABLE, CONFUSION_PLOT, VECTORS_FILE = "04_predictions.csv", "04_confusion_matrix.png", "04_word_vectors.vec"
# The names 04 writes, in the order it writes them; a record is read for these names only: a record edited by hand
# to name another file (history.csv, ../x) removes nothing else.
OUTPUTS = (PREDICTIONS_TABLE, CONFUSION_PLOT, VECTORS_FILE)
RECORD = "04_written.json"
_HASHED_BLOCK = 1 << 20


def write_predictions(folder, predictions):
    """``predictions`` (a DataFrame) as :data:`PREDICTIONS_TABLE` in ``folder``, written whole or not at all (a plain
    ``to_csv`` stopped part way left a truncated table in place of the earlier one), and recorded. Returns its path."""
    return _write_recorded(folder, PREDICTIONS_TABLE, predictions.to_csv(index=False).encode("utf-8"))


def write_figure(folder, fig, dpi=100):
    """``fig`` as :data:`CONFUSION_PLOT` in ``folder`` (marked as the library's, figures.FIGURE_MARK), written whole,
    and recorded. Returns its path."""
    from .figures import FIGURE_MARK

    plot = io.BytesIO()
    fig.savefig(plot, format="png", dpi=dpi, metadata={"Software": FIGURE_MARK})
    return _write_recorded(folder, CONFUSION_PLOT, plot.getvalue())


def write_vectors(folder, predictor):
    """``predictor``'s word vectors as :data:`VECTORS_FILE` in ``folder`` (vectors.export_vectors: written whole, over
    an earlier one), recorded once in place. Returns the number of words."""
    from .vectors import export_vectors

    path = folder / VECTORS_FILE
    return export_vectors(predictor, str(path), overwrite=True, on_written=lambda n: _record(folder, VECTORS_FILE))


def _write_recorded(folder, name, data):
    path = folder / name
    with storage.atomic_write(str(path), "wb", on_written=lambda: _record(folder, name, _digest_of(data))) as f:
        f.write(data)
    return path


def _record(folder, name, digest=None):
    """Add ``name`` (its ``digest``, else that of the file now in place) to ``folder``'s record, written atomically."""
    try:
        files = read_record(folder) or {}
        files[name] = digest or _digest(folder / name)
        _write_record(folder, files)
    except OSError as exc:  # (a folder of that name): the file is put back as it was, as the line says
        raise FastTextError(f"{name} not written: its record {folder / RECORD} cannot be written: "
                            f"{exc.strerror or exc}") from None


def read_record(folder):
    """{name: {"size", "sha256"}} of 04's files in ``folder`` as its record says, for :data:`OUTPUTS` only; None where
    there is no record, or a file of that name that is not one (nothing is taken for 04's then, nor is it removed)."""
    try:
        record = json.loads((folder / RECORD).read_bytes())
    except FileNotFoundError:
        return None
    except ValueError:  # (not JSON, or not UTF-8: not a record 04 wrote)
        return None
    files = record.get("files") if isinstance(record, dict) else None
    if not isinstance(files, dict):
        return None
    return {name: entry for name, entry in files.items() if name in OUTPUTS and _is_digest(entry)}


def _is_digest(entry):
    return (isinstance(entry, dict) and set(entry) == {"size", "sha256"} and type(entry["size"]) is int
            and isinstance(entry["sha256"], str))


def _write_record(folder, files):
    if not files:
        (folder / RECORD).unlink(missing_ok=True)
        return
    with storage.atomic_write(str(folder / RECORD), "wb") as f:
        f.write(json.dumps({"written_by": "notebook 04 (fasttext_lib)", "files": files}, indent=1).encode("utf-8"))


def _digest_of(data):
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _digest(path):
    sha = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_HASHED_BLOCK), b""):
            sha.update(block)
            size += len(block)
    return {"size": size, "sha256": sha.hexdigest()}


def _as_written(path, digest):
    """Whether ``path`` is a plain file holding what 04 wrote (its size first: a changed size needs no hashing)."""
    if path.is_symlink() or not path.is_file() or path.stat().st_size != digest["size"]:
        return False
    return _digest(path) == digest


def remove_written(folder, shown):
    """Remove the files 04's record in ``folder`` names that still hold what 04 wrote, then the record; a file changed
    since (edited, replaced, a link or folder now) stays, said in one line on stderr. ``shown``: the folder as
    printed. Says on stderr what it removed; returns the names. An error (a file that cannot be read or removed) is
    raised once the others are done, with the files it left still in the record."""
    recorded = read_record(folder)
    if recorded is None:
        return []
    removed, left, error = [], {}, None
    for name in (n for n in OUTPUTS if n in recorded):
        path = folder / name
        try:
            if not (path.exists() or path.is_symlink()):
                continue  # (removed meanwhile: nothing to do)
            if not _as_written(path, recorded[name]):
                print(f"kept {shown}/{name}: changed since notebook 04 wrote it", file=sys.stderr)
                continue
            path.unlink()
            removed.append(name)
        except OSError as exc:
            left[name], error = recorded[name], error or exc
    if removed:
        print(f"removed {', '.join(removed)} from {shown}: 04's, of the model replaced", file=sys.stderr)
    _write_record(folder, left)  # (none left: the record removed)
    if error is not None:
        raise error
    return removed
