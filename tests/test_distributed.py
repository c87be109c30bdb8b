"""kvstore dist_sync on a real local cluster: scheduler, server and two workers as processes."""
import json
import os
import subprocess
import sys

from conftest import ROOT, free_port, run_cli

EPOCHS, WORKER_BATCH = 6, 128


def _history(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_dist_sync_two_workers_match_one_process(sample_dir, tmp_path):
    common = ["--train", sample_dir / "train.csv", "--validation", sample_dir / "test.csv", "--epochs", EPOCHS,
              "--no-progress", "--ctx", "cpu", "--seed", "7"]
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", DMLC_PS_ROOT_URI="127.0.0.1",
               DMLC_PS_ROOT_PORT=str(free_port()), DMLC_NUM_SERVER="1", DMLC_NUM_WORKER="2",
               DMLC_INTERFACE="lo", DMLC_NODE_HOST="127.0.0.1")
    # MXNet turns a process into the scheduler or a server when it is imported with that DMLC_ROLE.
    roles = [subprocess.Popen([sys.executable, "-c", "import mxnet"], env=dict(env, DMLC_ROLE=role),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for role in ("scheduler", "server")]
    workers = [subprocess.Popen([sys.executable, "-m", "fasttext_lib", "train", *map(str, common),
                                 "--kvstore", "dist_sync", "--batch-size", str(WORKER_BATCH),
                                 "--output", str(tmp_path / f"worker{rank}")],
                                env=dict(env, DMLC_ROLE="worker"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for rank in range(2)]
    try:
        outputs = [w.communicate(timeout=300) for w in workers]
        for role in roles:
            role.wait(timeout=60)  # the cluster shuts down once both workers have finished
    finally:
        for proc in roles + workers:
            if proc.poll() is None:
                proc.kill()
    for worker, (out, err) in zip(workers, outputs):
        assert worker.returncode == 0, err[-2000:]

    histories = [_history(out) for out, _ in outputs]
    assert [len(h) for h in histories] == [EPOCHS, EPOCHS]
    # both workers hold the same synchronized model, so they score the validation split identically
    assert [r["val_loss"] for r in histories[0]] == [r["val_loss"] for r in histories[1]]
    # each worker trained on its own half: their training losses differ
    assert histories[0][-1]["train_loss"] != histories[1][-1]["train_loss"]
    # only one worker writes the bundle
    written = [os.path.isfile(tmp_path / f"worker{rank}" / "config.json") for rank in range(2)]
    assert sorted(written) == [False, True]

    # one process with the same global batch (2 workers x WORKER_BATCH) reaches the same accuracy
    single = run_cli("train", *common, "--batch-size", 2 * WORKER_BATCH, "--output", tmp_path / "single")
    assert single.returncode == 0, single.stderr
    single_acc = _history(single.stdout)[-1]["val_accuracy"]
    dist_acc = histories[0][-1]["val_accuracy"]
    assert dist_acc > 0.75 and abs(dist_acc - single_acc) < 0.03, (dist_acc, single_acc)
