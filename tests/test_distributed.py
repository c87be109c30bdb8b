"""kvstore dist_sync on a real local cluster: scheduler, server and two workers as processes."""
import json
import os
import subprocess
import sys
import tempfile
import time

from conftest import ROOT, free_port, run_cli

EPOCHS, WORKER_BATCH = 6, 128


def _history(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def _common(sample_dir, epochs=EPOCHS):
    return ["--train", sample_dir / "train.csv", "--validation", sample_dir / "test.csv", "--epochs", epochs,
            "--no-progress", "--ctx", "cpu", "--seed", "7"]


def run_cluster(args, outputs, stop_when=None):
    """Scheduler, server and two workers (``train *args --output <outputs[rank]>``) -> each worker's (stdout, stderr).

    ``stop_when``: polled while the workers run; once it is true every process is killed (a host
    lost mid-job) and None is returned.
    """
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", DMLC_PS_ROOT_URI="127.0.0.1",
               DMLC_PS_ROOT_PORT=str(free_port()), DMLC_NUM_SERVER="1", DMLC_NUM_WORKER="2",
               DMLC_INTERFACE="lo", DMLC_NODE_HOST="127.0.0.1")
    # MXNet turns a process into the scheduler or a server when it is imported with that DMLC_ROLE.
    roles = [subprocess.Popen([sys.executable, "-c", "import fasttext_lib, mxnet"], env=dict(env, DMLC_ROLE=role),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for role in ("scheduler", "server")]
    logs = [(tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")) for _ in outputs]
    workers = [subprocess.Popen([sys.executable, "-m", "fasttext_lib", "train", *map(str, args),
                                 "--kvstore", "dist_sync", "--batch-size", str(WORKER_BATCH), "--output", str(out)],
                                env=dict(env, DMLC_ROLE="worker"), stdout=stdout, stderr=stderr, text=True)
               for out, (stdout, stderr) in zip(outputs, logs)]
    try:
        deadline = time.time() + 300
        while any(w.poll() is None for w in workers):
            if stop_when is not None and stop_when():
                return None
            assert time.time() < deadline, "the cluster did not finish in 300 s"
            time.sleep(0.1)
        results = []
        for stdout, stderr in logs:
            stdout.seek(0)
            stderr.seek(0)
            results.append((stdout.read(), stderr.read()))
        for worker, (out, err) in zip(workers, results):
            assert worker.returncode == 0, err[-2000:]
        for role in roles:
            role.wait(timeout=60)  # the cluster shuts down once both workers have finished
        return results
    finally:
        for proc in roles + workers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for stdout, stderr in logs:
            stdout.close()
            stderr.close()


def test_dist_sync_two_workers_match_one_process(sample_dir, tmp_path):
    common = _common(sample_dir)
    outputs = run_cluster(common, [tmp_path / f"worker{rank}" for rank in range(2)])
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


def test_dist_sync_resumes_from_a_checkpoint(sample_dir, tmp_path):
    """A cluster killed mid-run and started again with the same checkpoint dir continues after the last
    checkpoint: no epoch twice, workers in sync, the earlier epochs' history kept."""
    checkpoints = tmp_path / "checkpoints"
    args = _common(sample_dir) + ["--checkpoint-dir", checkpoints]

    def some_epochs_done():
        return any(p.name >= "epoch-0002" and (p / "checkpoint.json").exists()
                   for p in checkpoints.glob("epoch-*")) if checkpoints.exists() else False

    assert run_cluster(args, [tmp_path / f"killed{rank}" for rank in range(2)], stop_when=some_epochs_done) is None
    done = max(int(p.name[len("epoch-"):]) for p in checkpoints.glob("epoch-*") if (p / "checkpoint.json").exists())
    assert 2 <= done < EPOCHS
    before = json.loads((checkpoints / f"epoch-{done:04d}" / "checkpoint.json").read_text())["history"]

    resumed = run_cluster(args, [tmp_path / f"resumed{rank}" for rank in range(2)])
    histories = [_history(out) for out, _ in resumed]
    assert [[r["epoch"] for r in h] for h in histories] == [list(range(done + 1, EPOCHS + 1))] * 2
    assert [r["val_loss"] for r in histories[0]] == [r["val_loss"] for r in histories[1]]  # still in sync
    # it went on from the checkpoint's parameters, not from a fresh start
    assert histories[0][0]["val_loss"] < before[0]["val_loss"]
    assert histories[0][-1]["val_accuracy"] > 0.75
    bundle = next(tmp_path / f"resumed{rank}" for rank in range(2) if (tmp_path / f"resumed{rank}" / "config.json").exists())
    from fasttext_lib.predict import Predictor

    saved = Predictor.load(str(bundle)).metrics["history"]  # the bundle's metrics.json
    assert [r["epoch"] for r in saved] == list(range(1, EPOCHS + 1))  # the checkpoint's history, then the new epochs
    assert [r["val_loss"] for r in saved[:done]] == [r["val_loss"] for r in before]
    assert sorted(p.name for p in checkpoints.glob("epoch-*")) == [f"epoch-{EPOCHS:04d}"]
