"""The GPU route, run on the CPU: every MXNet operator it calls is one docs/GPU.md cites, and none
falls back to dense storage.

No GPU here or in CI can run ``mxnet-cu*``; the route's choices depend on the device only through
the native operators (CPU only) and the numpy scorer (CPU only), which benchmarks/list_gpu_ops.py
switches off. It runs the route (one device, two devices with a kvstore, SGD and Adam, two and four
classes, checkpoints, MXNet's scorer) and lists the operators it called; a new operator on that
route fails this test until docs/GPU.md cites its GPU registration.
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_gpu_route_operator_is_cited_in_gpu_md_and_none_falls_back(tmp_path):
    out = tmp_path / "ops.json"
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    run = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "list_gpu_ops.py"), "--docs", "600",
                          "--json", str(out)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "fallback" not in run.stderr.lower(), run.stderr[-3000:]  # MXNet logs every storage fallback
    found = json.loads(out.read_text())
    assert all(steps > 0 for steps in found["steps"].values())
    used = set(found["python_ops"]) | set(found["engine_ops"])
    # the route's core, so that a run that silently skipped it cannot pass
    assert {"take", "dot", "sgd_update", "adam_update", "cast_storage", "RowSparseElementwiseSum",
            "KVStoreSparseRetain", "KVStoreUnique", "FullyConnected", "Embedding"} <= used
    sparse_rows = {(r[1], r[3], r[4]) for r in found["rows"]}
    assert ("dot", "csr+default", "default") in sparse_rows
    assert ("sgd_update", "default+row_sparse", "default") in sparse_rows
    assert ("sgd_update", "row_sparse+row_sparse", "row_sparse") in sparse_rows
    doc = open(os.path.join(ROOT, "docs", "GPU.md")).read()
    cited = set(re.findall(r"`([A-Za-z_0-9]+)`", doc))
    assert not used - cited, f"operators on the GPU route that docs/GPU.md does not cite: {sorted(used - cited)}"
