"""MXNet without SciPy in the processes the library starts (lean_import.py): the CLI and the
SageMaker training job (tests/test_sagemaker.py) import MXNet with SciPy kept out, ~53 MB less
peak memory; ``import scipy`` still works afterwards, and a notebook's imports are left alone."""
import os
import subprocess
import sys

from conftest import ROOT, exit_modules_probe, modules_at_exit, run_cli


def _python(code):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_cli_process_trains_and_predicts_without_scipy(sample_dir, tmp_path):
    env = {"PYTHONPATH": ROOT + os.pathsep + exit_modules_probe(tmp_path / "probe")}
    out = tmp_path / "bundle"
    r = run_cli("train", "--train", sample_dir / "train.csv", "--output", out, "--epochs", "1", "--no-progress", env=env)
    assert r.returncode == 0, r.stderr
    modules = modules_at_exit(r.stderr)
    assert "mxnet" in modules and "fasttext_lib" in modules and "scipy" not in modules
    r = run_cli("predict", "--model", out, input="the food was great\n", env=env)
    assert r.returncode == 0, r.stderr
    modules = modules_at_exit(r.stderr)
    assert "mxnet" in modules and "scipy" not in modules


def test_scipy_imports_normally_after_the_guarded_import():
    out = _python(
        "import sys\n"
        "from fasttext_lib.lean_import import import_mxnet_without_scipy\n"
        "meta_path = list(sys.meta_path)\n"
        "import_mxnet_without_scipy()\n"
        "print('mxnet' in sys.modules, any(m.startswith('scipy') for m in sys.modules), sys.meta_path == meta_path)\n"
        "import scipy.sparse, scipy.stats\n"
        "print(scipy.sparse.csr_matrix([[1.0, 0.0]]).nnz, scipy.stats.norm.cdf(0.0))\n")
    assert out == ["True", "False", "True", "1", "0.5"]


def test_scipy_imported_first_is_left_alone():
    """Nothing breaks and MXNet keeps its SciPy interop when the process had SciPy already."""
    out = _python(
        "import scipy.sparse\n"
        "from fasttext_lib.lean_import import import_mxnet_without_scipy\n"
        "import_mxnet_without_scipy()\n"
        "import mxnet as mx\n"
        "a = mx.nd.sparse.csr_matrix(scipy.sparse.csr_matrix([[0.0, 2.0], [3.0, 0.0]]))\n"
        "print(mx.nd.sparse.spsp is scipy.sparse, a.asscipy().toarray().tolist() == [[0.0, 2.0], [3.0, 0.0]])\n")
    assert out == ["True", "True"]


def test_a_plain_import_leaves_mxnet_its_scipy():
    """``import fasttext_lib`` (a notebook) and the CLI's main() called in-process change nothing."""
    out = _python(
        "import sys\n"
        "import fasttext_lib, fasttext_lib.cli, fasttext_lib.train\n"
        "import mxnet as mx\n"
        "print('scipy.sparse' in sys.modules, mx.nd.sparse.spsp is not None)\n")
    assert out == ["True", "True"]


def _openmp_spin_count(extra_env):
    """How long GNU OpenMP (loaded with MXNet) spins before a waiting thread sleeps, after
    ``import fasttext_lib, mxnet`` (its own report; an unset policy also reads 'PASSIVE' there, but
    spins 300,000 rounds)."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(extra_env, OMP_DISPLAY_ENV="VERBOSE", PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", "import fasttext_lib, mxnet"], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = [line.strip() for line in r.stderr.splitlines() if line.strip().startswith("GOMP_SPINCOUNT")]
    assert len(lines) == 1, r.stderr
    return int(lines[0].split("=")[1].strip().strip("'"))


def test_openmp_threads_sleep_between_regions_unless_the_user_chose():
    # Spinning OpenMP threads made short-text training 10x slower on a busy machine (fasttext_lib/__init__.py).
    assert _openmp_spin_count({}) == 0
    assert _openmp_spin_count({"OMP_WAIT_POLICY": "ACTIVE"}) > 10**6
