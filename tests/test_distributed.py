"""kvstore dist_sync on a real local cluster: scheduler, server and two workers as processes."""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from conftest import ROOT, free_port, run_cli

EPOCHS, WORKER_BATCH = 6, 128


def _history(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def _common(sample_dir, epochs=EPOCHS):
    return ["--train", sample_dir / "train.csv", "--validation", sample_dir / "test.csv", "--epochs", epochs,
            "--no-progress", "--ctx", "cpu", "--seed", "7"]


def run_cluster(args, outputs, stop_when=None, kvstore="dist_sync"):
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
                                 "--kvstore", kvstore, "--batch-size", str(WORKER_BATCH), "--output", str(out)],
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


def _bundle_params(outputs):
    """Every parameter of the bundle one of ``outputs`` (one per worker) holds, as numpy, by name."""
    from fasttext_lib.predict import Predictor

    written = [out for out in outputs if (out / "config.json").exists()]
    assert len(written) == 1, written  # only one worker writes the bundle
    model = Predictor.load(str(written[0])).model
    return {name: p.data().asnumpy() for name, p in model._collect_params_with_prefix().items()}


@pytest.fixture(scope="module")
def uninterrupted(sample_dir, tmp_path_factory):
    """``(each worker's history, the bundle's parameters)`` of a cluster run of ``_common`` never stopped."""
    where = tmp_path_factory.mktemp("uninterrupted")
    outputs = [where / f"worker{rank}" for rank in range(2)]
    histories = [_history(out) for out, _ in run_cluster(_common(sample_dir), outputs)]
    return histories, _bundle_params(outputs)


def test_dist_sync_two_workers_match_one_process(sample_dir, tmp_path, uninterrupted):
    common = _common(sample_dir)
    histories = uninterrupted[0]
    assert [len(h) for h in histories] == [EPOCHS, EPOCHS]
    # both workers hold the same synchronized model, so they score the validation split identically
    assert [r["val_loss"] for r in histories[0]] == [r["val_loss"] for r in histories[1]]
    # each worker trained on its own half: their training losses differ
    assert histories[0][-1]["train_loss"] != histories[1][-1]["train_loss"]

    # one process with the same global batch (2 workers x WORKER_BATCH) reaches the same accuracy
    single = run_cli("train", *common, "--batch-size", 2 * WORKER_BATCH, "--output", tmp_path / "single")
    assert single.returncode == 0, single.stderr
    single_acc = _history(single.stdout)[-1]["val_accuracy"]
    dist_acc = histories[0][-1]["val_accuracy"]
    assert dist_acc > 0.75 and abs(dist_acc - single_acc) < 0.03, (dist_acc, single_acc)


def test_dist_sync_resumes_from_a_checkpoint(sample_dir, tmp_path, uninterrupted):
    """A cluster killed mid-run and started again with the same checkpoint dir continues after the last
    checkpoint: no epoch twice, workers in sync, the earlier epochs' history kept, and it ends with exactly
    the parameters of the cluster never stopped. (The servers hold the optimizer: their update count, the lr
    schedule's step, started again from 0, and the resumed run ended elsewhere, at a higher lr.)"""
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
    # exactly the uninterrupted cluster's epochs and parameters
    whole_history, whole_params = uninterrupted
    assert [r["val_loss"] for r in histories[0]] == [r["val_loss"] for r in whole_history[0][done:]]
    resumed_params = _bundle_params([tmp_path / f"resumed{rank}" for rank in range(2)])
    assert sorted(resumed_params) == sorted(whole_params)
    for name, value in whole_params.items():
        np.testing.assert_array_equal(resumed_params[name], value, err_msg=name)


class _ServersOf:
    """A dist_sync kvstore as the Updater sees it, keeping the optimizer the servers would receive
    (``set_optimizer`` pickles it, protocol 0, for every server)."""

    type, rank, num_workers = "dist_sync", 0, 2

    def set_optimizer(self, optimizer):
        import pickle

        self.optimizer = pickle.loads(pickle.dumps(optimizer, 0))

    def init(self, key, value):
        pass

    def pull(self, key, out):
        pass

    def row_sparse_pull(self, key, out, row_ids):
        pass


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_a_resumed_clusters_servers_go_on_with_the_lr_schedule_where_it_stopped(optimizer):
    """The lr of a resumed cluster's first step is the uninterrupted run's at that step, for each key; plain
    SGD keeps no state on the servers, adam's moments are what a resume cannot bring back (said on stderr)."""
    import mxnet as mx

    from fasttext_lib.config import TrainConfig
    from fasttext_lib.model import FastTextClassifier
    from fasttext_lib.optim import EMBEDDING_KEY, OUTPUT_KEY, Updater, make_optimizer

    config = TrainConfig(epochs=3, optimizer=optimizer, lr=0.5, batch_size=64, ngrams=2, kvstore="dist_sync")
    model = FastTextClassifier(50, 4, 2)
    model.initialize(ctx=[mx.cpu()])
    steps_per_epoch, done = 10, 20  # stopped after epoch 2
    whole = make_optimizer(config, steps_per_epoch)
    for _ in range(done + 1):
        whole._update_count([EMBEDDING_KEY, OUTPUT_KEY])
    servers = _ServersOf()
    updater = Updater(model, [mx.cpu()], make_optimizer(config, steps_per_epoch), servers, updates_done=done)
    servers.optimizer._update_count([EMBEDDING_KEY, OUTPUT_KEY])  # the first resumed step, on a server
    for key in (EMBEDDING_KEY, OUTPUT_KEY):
        assert servers.optimizer._index_update_count[key] == whole._index_update_count[key] == done + 1
        assert servers.optimizer._get_lr(key) == whole._get_lr(key) < config.lr * (1 - done / 30) + 1e-6
    assert updater.server_state_lost == (optimizer == "adam")


def test_dist_async_decays_the_lr_over_the_whole_run(sample_dir, tmp_path):
    """dist_async servers update on every worker's push, twice per step with two workers: the lr schedule, counted
    against one worker's steps, reached 0 half way, and the run's second half trained nothing (its val_loss
    stayed the same from epoch to epoch)."""
    outputs = run_cluster(_common(sample_dir, epochs=4), [tmp_path / f"worker{rank}" for rank in range(2)],
                          kvstore="dist_async")
    losses = [r["val_loss"] for r in _history(outputs[0][0])]
    assert len(losses) == 4 and losses[3] != losses[2] != losses[1], losses
