"""Strip what a run adds to a notebook but a reader does not need, so a re-run diffs only real changes.

papermill and nbclient record per-cell timestamps and durations, the absolute input/output paths of
the machine that ran them, and the kernel's exact Python version. The committed notebooks are the
source people edit on a SageMaker instance; these keys would make every re-run a whole-file diff.

    python scripts/clean_notebooks.py notebooks/*.ipynb      (run_notebooks.py --in-place calls it)
"""
import sys

import nbformat

NOTEBOOK_KEYS = ("papermill",)
CELL_KEYS = ("papermill", "execution")


def clean(nb):
    """Drop run metadata from ``nb`` in place; returns it."""
    for key in NOTEBOOK_KEYS:
        nb.metadata.pop(key, None)
    nb.metadata.get("language_info", {}).pop("version", None)
    for cell in nb.cells:
        for key in CELL_KEYS:
            cell.metadata.pop(key, None)
    return nb


def clean_file(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.write(clean(nb), path)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        clean_file(name)
