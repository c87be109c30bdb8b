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
