"""The library must run on SageMaker's Python 3.8 MXNet containers, and import without MXNet."""
import os
import subprocess
import sys

from conftest import ROOT


def test_library_is_python38_compatible():
    vermin = os.path.join(os.path.dirname(sys.executable), "vermin")
    r = subprocess.run([vermin, "--no-tips", "--violations", "-t=3.8-", "--eval-annotations",
                        os.path.join(ROOT, "fasttext_lib")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_import_is_light():
    code = "import sys, fasttext_lib, fasttext_lib.data, fasttext_lib.text; print('mxnet' in sys.modules, 'sagemaker' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.stdout.split() == ["False", "False"], r.stderr


# NumPy 1.24 removed np.bool & co., which MXNet 1.9.1 uses at import; Python 3.12 has no NumPy below 1.25.
# Simulated here in the pinned NumPy 1.23 by dropping the deprecated aliases it still serves.
_NUMPY_WITHOUT_ALIASES = "import numpy; numpy.__deprecated_attrs__.clear(); assert not hasattr(numpy, 'bool')\n"


def test_mxnet_imports_after_fasttext_lib_under_a_numpy_without_the_removed_aliases():
    code = _NUMPY_WITHOUT_ALIASES + (
        "import fasttext_lib, mxnet as mx\n"
        "from fasttext_lib.predict import Predictor\n"
        "print(numpy.bool is bool, numpy.int is int, mx.nd.ones((2, 2)).sum().asscalar())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.split() == ["True", "True", "4.0"], r.stderr
    # without the library first, MXNet's own import is what fails: the simulation is faithful
    r = subprocess.run([sys.executable, "-c", _NUMPY_WITHOUT_ALIASES + "import mxnet"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0 and "has no attribute 'bool'" in r.stderr, r.stderr


def test_the_restored_aliases_leave_a_numpy_that_has_them_alone():
    """NumPy 2 has np.bool again (np.bool_): the library must not replace it with the builtin."""
    code = _NUMPY_WITHOUT_ALIASES + "numpy.bool = numpy.bool_\nimport fasttext_lib\nprint(numpy.bool is numpy.bool_, numpy.str is str)\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.stdout.split() == ["True", "True"], r.stderr
