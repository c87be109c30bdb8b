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
        "from fasttext_lib.lean_import import import_mxnet_lean\n"
        "meta_path = list(sys.meta_path)\n"
        "import_mxnet_lean()\n"
        "print('mxnet' in sys.modules, any(m.startswith('scipy') for m in sys.modules), sys.meta_path == meta_path)\n"
        "import scipy.sparse, scipy.stats\n"
        "print(scipy.sparse.csr_matrix([[1.0, 0.0]]).nnz, scipy.stats.norm.cdf(0.0))\n")
    assert out == ["True", "False", "True", "1", "0.5"]


def test_scipy_imported_first_is_left_alone():
    """Nothing breaks and MXNet keeps its SciPy interop when the process had SciPy already."""
    out = _python(
        "import scipy.sparse\n"
        "from fasttext_lib.lean_import import import_mxnet_lean\n"
        "import_mxnet_lean()\n"
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


# Lazy operator functions and requests (lean_import.py): the child runs OPS_USED after the import,
# lean or plain, and prints what a user could observe of the ops it called.
OPS_USED = r"""
import gc, inspect, json, pydoc, sys
import numpy as np
import fasttext_lib  # before mxnet, as everywhere: under NumPy >= 1.24 it restores the aliases MXNet imports
import mxnet as mx
from mxnet import autograd, gluon
from fasttext_lib.lean_import import OPS_MADE, _LazyOp

stand_ins = sum(type(o) is _LazyOp for o in gc.get_objects())  # (isinstance would load a lazy module)
at_import = sorted(OPS_MADE)
mx.random.seed(7)
x = mx.nd.array(np.arange(12, dtype="float32").reshape(3, 4) / 10)
net = gluon.nn.HybridSequential()
net.add(gluon.nn.Dense(5, activation="relu"), gluon.nn.Dense(2))
net.initialize(mx.init.Xavier())
net.hybridize()
with autograd.record():
    loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), mx.nd.array([0, 1, 1]))
loss.backward()
csr = mx.nd.sparse.csr_matrix(x.asnumpy() * (x.asnumpy() > 0.5))
results = {
    "dot": mx.nd.dot(x, x.T).asnumpy().tolist(),
    "loss": loss.asnumpy().tolist(),
    "grad": net[0].weight.grad().asnumpy().tolist(),
    "sparse": mx.nd.sparse.dot(csr, x.T).asnumpy().tolist(),
    "np": (mx.np.add(mx.np.ones((2, 2)), 1.5) * mx.npx.relu(mx.np.array([[-1.0, 2.0]]))).asnumpy().tolist(),
}
ops = {name: eval(name) for name in ["mx.nd.dot", "mx.nd.FullyConnected", "mx.sym.FullyConnected",
       "mx.nd.sparse.dot", "mx.nd.contrib.box_nms", "mx.contrib.nd.box_nms", "mx.np.add", "mx.nd.np.add",
       "mx.sym.np.add", "mx.npx.relu", "mx.nd._internal._plus_scalar", "mx.nd.random.uniform_like",
       "mx.nd.linalg.gemm2", "mx.nd.contrib.adamw_update", "mx.np.cumsum"]}
print(json.dumps({
    "stand_ins": stand_ins, "at_import": at_import, "after": sorted(OPS_MADE), "results": results,
    "called_directly": [type(f).__name__ for f in (mx.nd.dot, mx.nd.op.dot, mx.sym.FullyConnected)],
    "docs": {k: f.__doc__ for k, f in ops.items()},
    "help": {k: pydoc.render_doc(f, renderer=pydoc.plaintext) for k, f in ops.items()},
    "names": {k: [f.__name__, f.__module__] for k, f in ops.items()},
    # read again: now the functions made, which replaced the stand-ins (mx.np's signatures are set at import)
    "signatures": {k: str(inspect.signature(eval(k))) for k in ops},
    "requests_loaded": "urllib3" in sys.modules,
    # executed (a lazy module not yet loaded is of LazyLoader's module class); never imported counts as not
    "contrib_executed": {name: type(sys.modules.get(name)).__name__ == "module"
                         for name in ("mxnet.contrib.text", "mxnet.contrib.onnx", "mxnet.contrib.quantization")},
}))
"""


def _ops_child(lean, before=""):
    import json

    lean_import = ("import fasttext_lib.lean_import as lean\n" + before + "lean.import_mxnet_lean()\n") if lean else ""
    r = subprocess.run([sys.executable, "-c", lean_import + OPS_USED], capture_output=True, text=True, cwd=ROOT,
                       timeout=300, env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_operator_functions_are_made_on_first_use_and_are_mxnets_own():
    lean, plain = _ops_child(True), _ops_child(False)
    assert lean["stand_ins"] > 2000 and plain["stand_ins"] == 0
    # Only the four whose docstrings MXNet edits at import (adamw_update's) are made at import.
    assert lean["at_import"] == ["mxnet.ndarray._internal._adamw_update", "mxnet.ndarray._internal._mp_adamw_update",
                                 "mxnet.symbol._internal._adamw_update", "mxnet.symbol._internal._mp_adamw_update"]
    assert 10 < len(lean["after"]) < 100  # the ops this run called or documented, of ~2,500
    assert "mxnet.ndarray.op.dot" in lean["after"] and "mxnet.symbol.op.FullyConnected" in lean["after"]
    # Once made, mx.nd.dot & co are MXNet's function, no stand-in in between (every step calls them).
    assert lean["called_directly"] == plain["called_directly"] == ["function"] * 3
    assert lean["results"] == plain["results"]  # bit-identical (floats through JSON round-trip exactly)
    assert lean["docs"] == plain["docs"]
    assert all(doc for name, doc in lean["docs"].items() if name != "mx.sym.np.add")  # Python-written, no doc
    assert lean["help"] == plain["help"]
    assert lean["names"] == plain["names"]
    assert lean["signatures"] == plain["signatures"]


def test_requests_and_mxnets_unused_contrib_modules_load_only_when_used():
    lean, plain = _ops_child(True), _ops_child(False)
    assert not lean["requests_loaded"] and plain["requests_loaded"]
    assert not any(lean["contrib_executed"].values()) and all(plain["contrib_executed"].values())
    out = _python(
        "import sys\n"
        "from fasttext_lib.lean_import import import_mxnet_lean\n"
        "import_mxnet_lean()\n"
        "import mxnet as mx\n"
        "print(mx.contrib.text.vocab.Vocabulary.__name__, mx.contrib.quant.quantize_net.__name__,\n"
        "      mx.contrib.onnx.export_model.__name__, 'mxnet.onnx' in sys.modules)\n"
        "print(type(mx.contrib.text).__name__, type(sys.modules['mxnet.contrib.quantization']).__name__)\n")
    assert out == ["Vocabulary", "quantize_net", "export_model", "True", "module", "module"]
    out = _python(
        "import sys\n"
        "from fasttext_lib.lean_import import import_mxnet_lean\n"
        "import_mxnet_lean()\n"
        "import requests, mxnet.gluon.utils\n"
        "print('urllib3' in sys.modules, mxnet.gluon.utils.requests is requests)\n"
        "print(requests.Session.__name__, 'urllib3' in sys.modules, type(requests).__name__)\n")
    assert out == ["False", "True", "Session", "True", "module"]


def test_mxnet_gets_distutils_version_alone_and_distutils_imports_as_usual_afterwards():
    """MXNet compares NumPy versions with distutils.version; under setuptools a plain ``import distutils``
    loads setuptools' whole copy (~90 ms). The lean import serves that one module, then takes it out."""
    out = _python(
        "import sys\n"
        "from fasttext_lib.lean_import import import_mxnet_lean\n"
        "import_mxnet_lean()\n"
        "import mxnet.numpy_dispatch_protocol as p, mxnet.numpy_op_fallback as f\n"
        "print('distutils' in sys.modules, 'setuptools' in sys.modules)\n"
        "print(f.StrictVersion('1.17.0') < f.StrictVersion('1.23.5'), f.StrictVersion.__module__)\n"
        "import distutils.version\n"
        "print(distutils.version.LooseVersion('1.23.5') >= distutils.version.LooseVersion('1.17'),\n"
        "      distutils.version is not sys.modules['mxnet.numpy_op_fallback'].StrictVersion and\n"
        "      hasattr(sys.modules['distutils'], '__file__'))\n")
    assert out == ["False", "False", "True", "distutils.version", "True", "True"]


def test_another_mxnet_version_is_imported_mxnets_own_way():
    other = _ops_child(True, before="lean._mxnet_version = lambda: '1.9.0'\n")
    assert other["stand_ins"] == 0 and other["requests_loaded"]
    assert _ops_child(True, before="lean._mxnet_version = lambda: '1.9.1'\n")["stand_ins"] > 2000


def test_a_failing_lazy_registration_falls_back_to_mxnets_own():
    # The legacy (mx.nd / mx.sym) registration fails: MXNet's own makes those; mx.np stays lazy.
    out = _python(
        "import types\n"
        "import fasttext_lib.lean_import as lean\n"
        "def broken(*args): raise RuntimeError('broken')\n"
        "lean._lazy_init_op_module = broken\n"
        "lean.import_mxnet_lean()\n"
        "import mxnet as mx\n"
        "print(type(mx.nd.dot).__name__, type(mx.sym.dot).__name__, type(mx.npx.relu).__name__)\n"
        "print(mx.nd.dot(mx.nd.ones((1, 2)), mx.nd.ones((2, 1))).asnumpy().item(), 'dot' in mx.nd.op.__all__)\n")
    assert out == ["function", "function", "_LazyOp", "2.0", "True"]
