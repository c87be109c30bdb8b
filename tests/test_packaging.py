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


def test_make_refuses_a_python_the_lock_cannot_install_on_in_one_line(tmp_path):
    """README's two commands bootstrap .venv from requirements/lock.txt, which installs on Python 3.10-3.11 only
    (NumPy 1.23 has no 3.12 build; boto3, moto and papermill need 3.10). With another python3, pip failed after
    minutes with pages of errors. Here a stand-in Python 3.12 runs make's first step; nothing is installed."""
    fake = tmp_path / "python3.12"
    fake.write_text(f"#!{sys.executable}\n"
                    "import runpy, sys\n"
                    "sys.version_info, sys.executable = (3, 12, 1, 'final', 0), sys.argv[0]\n"
                    "if sys.argv[1:2] and sys.argv[1].endswith('.py'):\n"
                    "    sys.argv = sys.argv[1:]\n"
                    "    runpy.run_path(sys.argv[0], run_name='__main__')\n")  # anything else (-m venv): does nothing
    fake.chmod(0o755)
    venv = tmp_path / "venv"
    r = subprocess.run(["make", "--no-print-directory", "venv", f"PYTHON={fake}", f"VENV={venv}"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode != 0 and len(errors) == 1, r.stdout + r.stderr
    assert f"{fake} is Python 3.12: run make with PYTHON=python3.11" in errors[0] and "3.10 to 3.11" in errors[0]
    assert "pip" not in r.stdout + r.stderr and not venv.exists()
