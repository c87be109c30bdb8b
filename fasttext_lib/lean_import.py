"""Import MXNet without SciPy, in the processes this library starts (the CLI, the SageMaker job).

``import mxnet`` (1.9.1) also imports SciPy: ``mxnet/__init__.py`` imports ``test_utils``, which
tries ``import scipy.stats``, and ``ndarray/sparse.py`` / ``ndarray/utils.py`` try
``import scipy.sparse``. All three catch ``ImportError`` and only lose MXNet's SciPy interop
(``CSRNDArray.asscipy()``, building a CSR array from a SciPy matrix or a COO tuple), which
training and prediction never use. SciPy is ~475 modules and ~53 MB of a process's peak memory
(VmHWM 184 -> 131 MB for ``import mxnet`` alone): at Yelp scale with unigrams that is a fifth
of the whole run, and fastText C++'s entire run is 165 MB.

So :func:`import_mxnet_without_scipy` makes ``scipy`` unimportable only while ``import mxnet``
runs, and only where neither is imported yet; afterwards ``import scipy`` works as always (MXNet's
own modules keep ``spsp = None``, so their SciPy interop stays off in that process). It is
called by the command line (``python -m fasttext_lib``, the ``fasttext-lib`` script) and the
SageMaker training entry point, never by ``import fasttext_lib``: in a notebook a user may want
MXNet's SciPy interop, and there the import is theirs.
"""
import importlib
import importlib.abc
import sys


class _NoScipy(importlib.abc.MetaPathFinder):
    """Answers every ``scipy`` / ``scipy.*`` import with ModuleNotFoundError (an ImportError, which
    is what MXNet's ``try: import scipy...`` blocks catch)."""

    def find_spec(self, name, path=None, target=None):
        if name == "scipy" or name.startswith("scipy."):
            raise ModuleNotFoundError(f"No module named {name!r} (left out while MXNet is imported)", name=name)
        return None


def import_mxnet_without_scipy():
    """Import ``mxnet`` with ``scipy`` kept out; a no-op when either is already imported."""
    if "mxnet" in sys.modules or "scipy" in sys.modules:
        return
    finder = _NoScipy()
    sys.meta_path.insert(0, finder)
    try:
        importlib.import_module("mxnet")
    finally:
        sys.meta_path.remove(finder)
