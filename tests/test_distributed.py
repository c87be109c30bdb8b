"""kvstore dist_sync on a real local cluster: scheduler, server and two workers as processes."""
import contextlib
import errno
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

import pytest

from cli_helpers import with_options
from conftest import ROOT, held_once_there, run_cli, server_port

EPOCHS, WORKER_BATCH = 6, 128


def _history(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def _common(sample_dir, epochs=EPOCHS):
    return ["--train", sample_dir / "train.csv", "--validation", sample_dir / "test.csv", "--epochs", epochs,
            "--no-progress", "--ctx", "cpu", "--seed", "7"]


def run_cluster(args, outputs, stop_when=None, kvstore="dist_sync", env=None):
    """Scheduler, server and two workers (``train *args --output <outputs[rank]>``) -> each worker's (stdout, stderr).

    ``stop_when``: polled while the workers run; once it is true every process is killed (a host
    lost mid-job) and None is returned. ``env``: as run_workers'.
    """
    ended = run_workers(args, outputs, kvstore=kvstore, stop_when=stop_when, env=env)
    if ended is None:
        return None
    for status, out, err in ended:
        assert status == 0, err[-2000:]
    return [(out, err) for _, out, err in ended]


def run_workers(args, outputs, kvstore="dist_sync", stop_when=None, each=None, env=None, while_running=None,
                deadline=300, programs=None):
    """The cluster of :func:`run_cluster` -> each worker's ``(exit status, stdout, stderr)``, whatever they are.

    ``each``: per worker, more arguments (its own --train, ...); ``env``: more variables for the workers, or per
    worker (a list of dicts); ``while_running(workers)``: called every poll (to kill one); ``programs``: per worker,
    the command it runs instead of the CLI's train (None: the CLI's). Workers still running
    after ``deadline`` seconds fail the test (a hang); the scheduler and server are killed at the end. (The deadline
    bounds a hang only, and every wait a test tells apart from the behaviour it asserts is longer: 600 s or more. Tests
    whose deadlines were 40 to 150 s, four processes importing MXNet on a loaded 2-core machine, could fail by it.)
    """
    env_all = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", DMLC_PS_ROOT_URI="127.0.0.1",
                   DMLC_PS_ROOT_PORT=str(server_port()), DMLC_NUM_SERVER="1", DMLC_NUM_WORKER=str(len(outputs)),
                   DMLC_INTERFACE="lo", DMLC_NODE_HOST="127.0.0.1")
    worker_envs = env if isinstance(env, list) else [env or {}] * len(outputs)
    # MXNet turns a process into the scheduler or a server when it is imported with that DMLC_ROLE. Each process
    # leads a process group of its own: a worker's children (the one that tells the others it failed,
    # cluster._telling_child) are killed with it at the end (_kill_groups), whatever ended the test.
    roles = [subprocess.Popen([sys.executable, "-c", "import fasttext_lib, mxnet"], env=dict(env_all, DMLC_ROLE=role),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
             for role in ("scheduler", "server")]
    logs = [(tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")) for _ in outputs]
    # (a worker's own --train or --seed set in place of args': an option given twice with two values is refused)
    workers = [subprocess.Popen(program or [sys.executable, "-m", "fasttext_lib", "train",
                                            *map(str, with_options(args, *extra)), "--kvstore", kvstore,
                                            "--batch-size", str(WORKER_BATCH), "--output", str(out)],
                                env=dict(env_all, DMLC_ROLE="worker", **own), stdout=stdout, stderr=stderr, text=True,
                                start_new_session=True)
               for out, (stdout, stderr), extra, own, program in zip(outputs, logs, each or [[]] * len(outputs),
                                                                     worker_envs, programs or [None] * len(outputs))]
    try:
        until = time.time() + deadline
        while any(w.poll() is None for w in workers):
            if stop_when is not None and stop_when():
                return None
            if while_running is not None:
                while_running(workers)
            assert time.time() < until, f"the cluster did not finish in {deadline} s:\n" + _worker_logs(workers, logs)
            time.sleep(0.1)
        results = []
        for worker, (stdout, stderr) in zip(workers, logs):
            stdout.seek(0)
            stderr.seek(0)
            results.append((worker.returncode, stdout.read(), stderr.read()))
        if all(status == 0 for status, _, _ in results):
            for role in roles:
                role.wait(timeout=60)  # the cluster shuts down once both workers have finished
        return results
    finally:
        _kill_groups(roles + workers)
        for stdout, stderr in logs:
            stdout.close()
            stderr.close()


def _kill_groups(processes):
    """Kill each of ``processes`` and what it started (its process group: start_new_session), and reap it. A worker
    that ended leaves its group while a child of it lives (a test failed as a worker's telling child waited to join:
    the child was left running, joined to nothing)."""
    for proc in processes:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # (it ended, and every process of its group)
            pass
        proc.wait()


def _worker_logs(workers, logs):
    """Each worker's state and the end of its stderr: what a hang's failure shows."""
    shown = []
    for rank, (worker, (_, stderr)) in enumerate(zip(workers, logs)):
        stderr.flush()
        stderr.seek(0)
        shown.append(f"--- worker process {rank} (pid {worker.pid}), exit status {worker.poll()}:\n{stderr.read()[-1500:]}")
    return "\n".join(shown)


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


@pytest.fixture(scope="module")
def killed_checkpoints(sample_dir, tmp_path_factory):
    """The checkpoint dir of a cluster run of ``_common`` killed (every process: a host lost) once its checkpoint of
    epoch 2 or a later one was saved. Each test resumes from its own copy (:func:`_killed_checkpoints_in`): one
    killed cluster, not one per test."""
    where = tmp_path_factory.mktemp("killed")
    checkpoints = where / "checkpoints"

    def some_epochs_done():
        return any(p.name >= "epoch-0002" and (p / "checkpoint.json").exists()
                   for p in checkpoints.glob("epoch-*")) if checkpoints.exists() else False

    args = _common(sample_dir) + ["--checkpoint-dir", checkpoints]
    # (held in epoch 3 until killed: a loaded machine's test looked again only once the cluster had gone on for epochs)
    held = _site(where / "held", held_once_there(checkpoints / "epoch-0002" / "checkpoint.json"))
    assert run_cluster(args, [where / f"killed{rank}" for rank in range(2)], stop_when=some_epochs_done,
                       env=held) is None
    return checkpoints


def _killed_checkpoints_in(killed_checkpoints, tmp_path):
    """A copy of :func:`killed_checkpoints` in ``tmp_path`` -> (its path, the newest complete epoch in it)."""
    checkpoints = tmp_path / "checkpoints"
    shutil.copytree(killed_checkpoints, checkpoints)
    done = max(int(p.name[len("epoch-"):]) for p in checkpoints.glob("epoch-*") if (p / "checkpoint.json").exists())
    return checkpoints, done


def test_dist_sync_resumes_from_a_checkpoint(sample_dir, tmp_path, uninterrupted, killed_checkpoints):
    """A cluster killed mid-run and started again with the same checkpoint dir continues after the last
    checkpoint: no epoch twice, workers in sync, the earlier epochs' history kept, and it ends with exactly
    the parameters of the cluster never stopped. (The servers hold the optimizer: their update count, the lr
    schedule's step, started again from 0, and the resumed run ended elsewhere, at a higher lr.)"""
    checkpoints, done = _killed_checkpoints_in(killed_checkpoints, tmp_path)
    args = _common(sample_dir) + ["--checkpoint-dir", checkpoints]
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


def _errors(stderr):
    return [line for line in stderr.splitlines() if line.startswith("error: ")]


def _probing_after_2_s(where, also=""):
    """A ``sitecustomize`` in ``where`` (put it on the workers' PYTHONPATH) that has a worker ask its peers whether
    they live after 2 s without a step, not cluster.PROBE_AFTER's 10: a lost worker is found by the same probe, 8 s
    sooner per test. (A live peer answers every probe, so probing sooner ends no healthy run.) ``also``: more code."""
    return _site(where, "import fasttext_lib.cluster\nfasttext_lib.cluster.PROBE_AFTER = 2\n" + also)


def _site(where, code):
    """The workers' environment for a ``sitecustomize`` in ``where`` that runs ``code``."""
    where.mkdir(exist_ok=True)
    (where / "sitecustomize.py").write_text(code)
    return {"PYTHONPATH": f"{where}{os.pathsep}{ROOT}"}


@pytest.mark.parametrize("signal_name", ["SIGKILL", "SIGTERM"])
def test_a_worker_lost_mid_epoch_ends_the_other_in_one_line_naming_it(sample_dir, tmp_path, signal_name):
    """A worker killed mid-run (the OOM killer, a lost spot host: SIGKILL; a SIGTERM on its host alone) left the
    other waiting for its pushes for ever, and the SIGTERMed one hung too, after its error line, in the kvstore's
    exit barrier: a SageMaker job billed until its max runtime. The other worker now finds it gone (it no longer
    answers on its port) and ends in one line naming it, within seconds (not FASTTEXT_CLUSTER_TIMEOUT's 30 minutes:
    run_workers' deadline), writing no bundle."""
    checkpoints = tmp_path / "checkpoints"
    killed = []

    def kill_one_after_an_epoch(workers):
        if not killed and any((p / "checkpoint.json").exists() for p in checkpoints.glob("epoch-*")):
            workers[1].send_signal(getattr(signal, signal_name))
            killed.append(True)

    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    (status, _, err), (killed_status, _, killed_err) = run_workers(
        _common(sample_dir, epochs=400) + ["--checkpoint-dir", checkpoints], outputs,
        while_running=kill_one_after_an_epoch, env=_probing_after_2_s(tmp_path / "hooks"))
    assert killed  # (and the other ended by the probe, not after FASTTEXT_CLUSTER_TIMEOUT's 30 minutes: its line)
    assert status == 2 and len(_errors(err)) == 1, err[-2000:]
    assert re.match(r"error: worker [01] on host \S+ \(127\.0\.0\.1\) stopped in epoch \d+: its process ended or its "
                    r"host is lost", _errors(err)[0]), err
    if signal_name == "SIGTERM":
        # (the first worker, rank 0, which may be either process: it saves the checkpoints, and names the one kept)
        assert killed_status == 143 and len(_errors(killed_err)) == 1, killed_err
        # (the other one, rank 1, says that the first keeps them)
        said = re.fullmatch(r"error: terminated \(SIGTERM\); stopped and cleaned up(?:, keeping the checkpoint of "
                            r"epoch \d+ in (\S+): run the same command again to resume from it|; the checkpoints are kept "
                            r"by the first host \(worker 0\) in \S+: run the same command again to resume from the newest)",
                            _errors(killed_err)[0])
        assert said, killed_err
        assert said[1] is None or (pathlib.Path(said[1]) / "checkpoint.json").is_file(), killed_err
    else:
        assert killed_status == -signal.SIGKILL
    assert not any((out / "config.json").exists() for out in outputs)


def test_a_stopped_worker_other_than_the_first_says_the_first_host_keeps_the_checkpoints(sample_dir, tmp_path):
    """Only the first worker (rank 0) writes a cluster's checkpoints, and only its stop's line named the one kept: a
    SIGTERM on another host said "stopped and cleaned up", as if the run kept nothing. That worker's line now says
    that the first host keeps them, where, and how to resume. (Worker 1 sends itself the SIGTERM once epoch 1's
    checkpoint is saved, whichever process it is.)"""
    checkpoints = tmp_path / "checkpoints"
    saved = checkpoints / "epoch-0001" / "checkpoint.json"
    stop_worker_1 = (f"import os, signal, fasttext_lib.stops as stops\n"
                     f"ranks, real_describe, real_check = [], fasttext_lib.cluster.describe, stops.raise_if_interrupted\n"
                     f"def describe(watch, rank, *rest):\n"
                     f"    ranks.append(rank)\n"
                     f"    return real_describe(watch, rank, *rest)\n"
                     f"def check():  # (train calls it every step)\n"
                     f"    if ranks == [1] and os.path.exists({str(saved)!r}):\n"
                     f"        ranks.append('stopped')\n"
                     f"        os.kill(os.getpid(), signal.SIGTERM)\n"
                     f"    real_check()\n"
                     f"fasttext_lib.cluster.describe, stops.raise_if_interrupted = describe, check\n")
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir, epochs=400) + ["--checkpoint-dir", checkpoints], outputs,
                        env=_probing_after_2_s(tmp_path / "hooks", also=stop_worker_1))
    stopped = [err for status, _, err in ended if status == 143]
    assert len(stopped) == 1 and sorted(status for status, _, _ in ended) == [2, 143], ended
    assert _errors(stopped[0]) == [
        f"error: terminated (SIGTERM); stopped and cleaned up; the checkpoints are kept by the first host (worker 0) in "
        f"{checkpoints}: run the same command again to resume from the newest"], stopped[0]
    assert saved.is_file()


@pytest.mark.parametrize("differs", ["data", "settings"])
def test_workers_given_other_data_or_settings_are_refused_before_training(sample_dir, tmp_path, differs):
    """One worker reading another file (another host's channel, a ShardedByS3Key channel), or given another
    --seed, trained with the others without a word: each with its own vocabulary, or on shares that overlap. Every
    worker now ends in the same line naming what differs, before the first step, and no bundle is written."""
    if differs == "data":  # the same documents in another order: each worker's share would be other documents
        lines = (sample_dir / "train.csv").read_text().splitlines(keepends=True)
        (tmp_path / "reordered.csv").write_text("".join(reversed(lines)))
        own = [[], ["--train", tmp_path / "reordered.csv"]]
        pattern = r"error: worker 1 \(host \S+\) and worker 0 \(host \S+\) read different training data"
    else:
        own = [[], ["--seed", "8"]]
        pattern = r"error: worker 1 \(host \S+\) and worker 0 \(host \S+\) train with different settings \(seed [78] -> [78]\)"
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs, each=own)
    assert [status for status, _, _ in ended] == [2, 2], ended
    assert _errors(ended[0][2]) == _errors(ended[1][2]) and len(_errors(ended[0][2])) == 1, ended
    assert re.match(pattern, _errors(ended[0][2])[0]), ended[0][2]
    assert not any(out.exists() for out in outputs)


@pytest.mark.parametrize("case", ["missing on one host", "empty on one host", "missing on both", "a long path"])
def test_a_worker_that_fails_reading_its_data_tells_the_others_its_reason(sample_dir, tmp_path, case):
    """Every worker reads its data before it joins the cluster: one that could not (a file missing or empty on its
    host alone) ended in its line, and the others waited for it in mx.kv.create for FASTTEXT_CLUSTER_TIMEOUT (30
    minutes by default), then blamed "a worker or server" that did not join. The failed worker now joins to tell
    them its reason, and every worker ends at once, in one line, the others' naming it; no bundle is written."""
    (tmp_path / "empty.csv").write_text("")
    bad = {"missing on one host": tmp_path / "missing.csv", "empty on one host": tmp_path / "empty.csv",
           "missing on both": tmp_path / "missing.csv",
           "a long path": tmp_path.joinpath(*["d" * 200] * 18, "missing.csv")}[case]  # (a line of 3.7k characters)
    each = [["--train", bad]] * 2 if case == "missing on both" else [[], ["--train", bad]]
    said = (f"error: --train: no such file: {bad}" if "empty" not in case else
            f"error: {bad}: file is empty")
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs, each=each)
    assert [status for status, _, _ in ended] == [2, 2], ended
    assert [len(_errors(err)) for _, _, err in ended] == [1, 1], ended
    if case == "missing on both":
        assert [_errors(err) for _, _, err in ended] == [[said]] * 2, ended
    else:
        (_, _, err), (_, _, failed_err) = ended
        assert _errors(failed_err) == [said] and "Traceback" not in failed_err, failed_err
        told = re.fullmatch(r"error: worker [01] \(host \S+\) failed before training: (.+)", _errors(err)[0])
        assert told and said[len("error: "):].startswith(told[1]), err
        assert told[1] == said[len("error: "):] or case == "a long path", err
    assert not any(out.exists() for out in outputs)


def test_a_worker_that_cannot_join_ends_the_other_after_the_timeout(sample_dir, tmp_path):
    """A worker that failed on its cluster settings themselves (here its own FASTTEXT_CLUSTER_TIMEOUT) cannot join
    to say why: the others give up after their FASTTEXT_CLUSTER_TIMEOUT seconds, in one line."""
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs,
                        env=[{"FASTTEXT_CLUSTER_TIMEOUT": "1"}, {"FASTTEXT_CLUSTER_TIMEOUT": "soon"}])
    (status, _, err), (failed_status, _, failed_err) = ended
    assert failed_status == 2 and _errors(failed_err) == [
        "error: FASTTEXT_CLUSTER_TIMEOUT must be a number of seconds above 0, got 'soon'"], failed_err
    assert status == 2 and len(_errors(err)) == 1, err
    assert _errors(err)[0].startswith("error: the cluster did not move for 1 s while joining the cluster: a worker or "
                                      "server did not join"), err
    assert not any(out.exists() for out in outputs)


def test_a_scheduler_address_that_cannot_be_one_is_refused_before_the_data_is_read(monkeypatch):
    """An unknown scheduler host name left every worker waiting for it for ever."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.cluster import check_kvstore_environment

    for name, value in {"DMLC_PS_ROOT_URI": "no-such-host.invalid", "DMLC_PS_ROOT_PORT": "9000",
                        "DMLC_NUM_SERVER": "1", "DMLC_NUM_WORKER": "2"}.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(FastTextError, match=r"^DMLC_PS_ROOT_URI 'no-such-host.invalid' \(the scheduler's address\) "
                                            r"does not resolve"):
        check_kvstore_environment("dist_sync")
    monkeypatch.setenv("DMLC_PS_ROOT_URI", "127.0.0.1")
    monkeypatch.setenv("DMLC_PS_ROOT_PORT", "90000")
    with pytest.raises(FastTextError, match="DMLC_PS_ROOT_PORT must be a port number, got '90000'"):
        check_kvstore_environment("dist_sync")
    monkeypatch.setenv("DMLC_PS_ROOT_PORT", "9000")
    for name in ("DMLC_NUM_WORKER", "DMLC_NUM_SERVER"):  # (ps-lite's atoi: "two" waits for no worker, for ever)
        for bad in ("two", "2.0", "0", "-1", "\u0662"):
            monkeypatch.setenv(name, bad)
            with pytest.raises(FastTextError, match=rf"^{name} must be a whole number above 0 \(how many the cluster "
                                                    rf"waits for\), got {bad!r}$"):
                check_kvstore_environment("dist_sync")
        monkeypatch.setenv(name, "2")
    monkeypatch.setenv("FASTTEXT_CLUSTER_TIMEOUT", "soon")
    with pytest.raises(FastTextError, match="FASTTEXT_CLUSTER_TIMEOUT must be a number of seconds above 0, got 'soon'"):
        check_kvstore_environment("dist_sync")
    monkeypatch.setenv("FASTTEXT_CLUSTER_TIMEOUT", "60")
    check_kvstore_environment("dist_sync")
    check_kvstore_environment("auto")  # no cluster: nothing read
    # an interface with no IPv4 address here: mx.kv.create's "failed to get ip" traceback, the others left waiting
    for bad in ("nosuch0", "lo ", "x" * 16, "lo0"):
        monkeypatch.setenv("DMLC_INTERFACE", bad)
        with pytest.raises(FastTextError, match=rf"^DMLC_INTERFACE {re.escape(repr(bad))} is no network interface with "
                                                rf"an IPv4 address on this host \(those with one: [^)]*\blo\b"):
            check_kvstore_environment("dist_sync")
    # what MXNet 1.9.1's ps-lite joins with (GetIP: strncmp over the value's length, so a name's start; "": unset)
    for good in ("l", ""):
        monkeypatch.setenv("DMLC_INTERFACE", good)
        check_kvstore_environment("dist_sync")
    monkeypatch.setenv("DMLC_NODE_HOST", "127.0.0.1")  # (ps-lite takes it instead of the interface's)
    check_kvstore_environment("dist_sync")
    monkeypatch.delenv("DMLC_NODE_HOST")
    monkeypatch.setenv("DMLC_INTERFACE", "lo")
    check_kvstore_environment("dist_sync")


@pytest.mark.parametrize("refusal", [errno.EPERM, errno.ENOTTY, errno.EOPNOTSUPP],
                         ids=["EPERM", "ENOTTY", "EOPNOTSUPP"])
def test_a_dmlc_interface_is_not_refused_where_this_host_cannot_say_which_interfaces_have_an_address(monkeypatch,
                                                                                                     refusal):
    """A container whose sandbox refuses the SIOCGIFADDR ioctl (gVisor's, a seccomp profile) said of every interface,
    lo and the one MXNet would have joined with too, that it has no IPv4 address, and refused the run."""
    import fcntl

    from fasttext_lib.cluster import check_kvstore_environment

    def refused(*_):
        raise OSError(refusal, os.strerror(refusal))

    monkeypatch.setattr(fcntl, "ioctl", refused)
    monkeypatch.delenv("DMLC_NODE_HOST", raising=False)
    for name, value in (("DMLC_PS_ROOT_URI", "127.0.0.1"), ("DMLC_PS_ROOT_PORT", "9000"), ("DMLC_NUM_WORKER", "2"),
                        ("DMLC_NUM_SERVER", "1"), ("DMLC_INTERFACE", "lo")):
        monkeypatch.setenv(name, value)
    check_kvstore_environment("dist_sync")


@pytest.mark.parametrize("node_host", ["localhost", "192.0.2.1"])
def test_a_workers_port_answers_on_every_interface_whatever_its_address_resolves_to_here(monkeypatch, node_host):
    """The address a worker is told to give the others (DMLC_NODE_HOST: a host name such as algo-2, or an address)
    may resolve on its own host to another interface than on theirs (Debian maps the machine's own name to
    127.0.1.1), or be no local address at all (a NAT's): a port bound to that one address answered no peer (which
    then ended a healthy run, 'stopped: its process ended'), or could not be bound (an OSError traceback)."""
    from fasttext_lib import cluster

    monkeypatch.setenv("DMLC_NODE_HOST", node_host)
    watch = cluster.Watch(timeout=60)
    try:
        assert watch.address == node_host  # what the others are told
        assert cluster._answers({"address": "127.0.0.2", "port": watch.port})  # another interface of this host
    finally:
        watch.close()
    for thread in threading.enumerate():  # both of its threads end (a closed watch's slept in a loop for ever)
        if thread.name.startswith("fasttext-cluster"):
            thread.join(timeout=60)  # (a bound on "for ever": 5 s, a loaded machine's thread could take)
            assert not thread.is_alive(), thread.name


def test_a_worker_that_hits_a_bug_exits_after_its_traceback_and_the_other_ends_naming_it(sample_dir, tmp_path):
    """A bug (an exception that is no user error) in one worker printed its traceback, then the process waited for
    ever in the kvstore's exit barrier, alive, so the other worker's watch found it answering and waited the whole
    FASTTEXT_CLUSTER_TIMEOUT (30 minutes by default) before giving up; the buggy one never ended at all."""
    bug = ("import fasttext_lib.train as t\n"
           "def bug(*args, **kwargs):\n"
           "    raise RuntimeError('an injected bug')\n"
           "t.stop_if_diverged = bug\n")
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs,
                        env=[{"FASTTEXT_CLUSTER_TIMEOUT": "600", **_probing_after_2_s(tmp_path / "probing")},
                             {"FASTTEXT_CLUSTER_TIMEOUT": "600", **_probing_after_2_s(tmp_path / "buggy", also=bug)}])
    (status, _, err), (buggy_status, _, buggy_err) = ended
    assert buggy_status == 1 and "RuntimeError: an injected bug" in buggy_err, buggy_err[-2000:]
    # (a worker's rank is MXNet's scheduler's choice, by address then port: here one host, so by their random ports)
    assert status == 2 and re.match(r"error: worker [01] on host \S+ \(127\.0\.0\.1\) stopped", _errors(err)[0]), err
    assert not any((out / "config.json").exists() for out in outputs)


def test_workers_resuming_from_different_checkpoints_are_refused_before_training(sample_dir, tmp_path,
                                                                                killed_checkpoints):
    """A checkpoint dir on one host's disk alone (only the first worker writes them): the worker that found a
    checkpoint resumed at its epoch, the other started anew, and with fewer epochs left the first one done waited
    for the other in the kvstore's exit barrier, the other for its pushes, both alive: FASTTEXT_CLUSTER_TIMEOUT
    (30 minutes) later each ended blaming a parameter server or the scheduler. Every worker now ends in the same
    line naming the checkpoints that differ, before the first step, and no bundle is written."""
    checkpoints, done = _killed_checkpoints_in(killed_checkpoints, tmp_path)
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs,
                        each=[["--checkpoint-dir", checkpoints], ["--checkpoint-dir", tmp_path / "empty"]])
    assert [status for status, _, _ in ended] == [2, 2], ended
    assert _errors(ended[0][2]) == _errors(ended[1][2]) and len(_errors(ended[0][2])) == 1, ended
    epochs = {f"epoch {done}", "none"}
    said = re.match(r"error: worker 1 \(host \S+\) and worker 0 \(host \S+\) resume from different checkpoints "
                    r"\(worker 0: (epoch \d+|none), worker 1: (epoch \d+|none)\): every worker must resume from the same "
                    r"one, and only the first \(rank 0\) writes them, which MXNet's scheduler picks by the hosts' "
                    r"addresses, not by who wrote them before; give every host the same --checkpoint-dir \(an s3:// "
                    r"one, or on SageMaker the job's checkpoint_s3_uri\), or copy the newest epoch-\* folder into "
                    r"every host's$",
                    _errors(ended[0][2])[0])
    assert said and {said[1], said[2]} == epochs, ended[0][2]
    assert not any(out.exists() for out in outputs)
    assert (checkpoints / f"epoch-{done:04d}" / "checkpoint.json").is_file()  # the user's checkpoint kept


def test_a_scheduler_port_another_program_holds_ends_the_workers_in_one_line_saying_so(sample_dir, tmp_path):
    """A DMLC_PS_ROOT_PORT another program listens on: MXNet's scheduler could not listen there and ended, and the
    workers sent their registrations to that program, waiting for FASTTEXT_CLUSTER_TIMEOUT (30 minutes) to end in a
    line that blamed a worker or server that did not join. The port is now found answering as no ZeroMQ socket
    does, soon after the join stalls, and every worker ends in one line saying so."""
    taken = socket.create_server(("127.0.0.1", 0))
    _serve(taken, _http_error)  # (it waits for its client to speak first, then answers as no ZeroMQ socket does)
    port = taken.getsockname()[1]
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    try:
        # (the port's program speaks second: each of the check's first reads waits PROBE_TIMEOUT, 5 s; at 1 s, this
        # process's thread, answering once a worker spoke, could miss the second read's window on a loaded machine,
        # and the check, made once, let the workers wait FASTTEXT_CLUSTER_TIMEOUT)
        hooks = _probing_after_2_s(tmp_path / "hooks")
        ended = run_workers(_common(sample_dir), outputs, env=dict(hooks, DMLC_PS_ROOT_PORT=str(port)))
    finally:
        taken.close()
    assert [status for status, _, _ in ended] == [2, 2], ended
    for _, _, err in ended:
        assert _errors(err) == [f"error: the scheduler's address 127.0.0.1:{port} (DMLC_PS_ROOT_URI, DMLC_PS_ROOT_PORT) "
                                f"answers, but not as MXNet's scheduler: another program holds that port, so the "
                                f"scheduler could not listen on it; start the cluster again with a free "
                                f"DMLC_PS_ROOT_PORT"], err
    assert not any(out.exists() for out in outputs)


def test_a_join_that_waits_for_a_slow_worker_finds_the_scheduler_and_trains(sample_dir, tmp_path):
    """The check of the scheduler's port (while a join stalls) finds MXNet's own scheduler what it is: a worker that
    starts seconds after the other (its data read slowly) joins, and both train to the end."""
    slow = _probing_after_2_s(tmp_path / "slow", also="import time\ntime.sleep(6)\n")  # (2 s probe: checked at 2 s)
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir, epochs=1), outputs,
                        env=[_probing_after_2_s(tmp_path / "probing"), slow])
    assert [status for status, _, _ in ended] == [0, 0], ended
    assert sum((out / "config.json").exists() for out in outputs) == 1


def test_a_worker_that_fails_between_joining_and_comparing_ends_the_other_naming_it(sample_dir, tmp_path):
    """The workers learnt where the others answer only as they compared their data and settings: one that failed
    after joining and before that (its model's table too large for its host's memory, a checkpoint of its own
    disk refused) exited in its line, and the other waited for it, comparing, for FASTTEXT_CLUSTER_TIMEOUT (30
    minutes). They now learn it as they join, and the other ends soon after, in one line naming it."""
    fail = ("import fasttext_lib.train as t\n"
            "from fasttext_lib.errors import FastTextError\n"
            "def build(*args, **kwargs):\n"
            "    raise FastTextError('an injected failure after joining')\n"
            "t._build_model = build\n")
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs,
                        env=[_probing_after_2_s(tmp_path / "probing"), _probing_after_2_s(tmp_path / "failing", also=fail)])
    (status, _, err), (failed_status, _, failed_err) = ended
    assert failed_status == 2 and _errors(failed_err) == ["error: an injected failure after joining"], failed_err
    assert status == 2 and len(_errors(err)) == 1, err
    assert re.match(r"error: worker [01] on host \S+ \(127\.0\.0\.1\) stopped while the workers compared their data "
                    r"and settings: its process ended", _errors(err)[0]), err
    assert not any(out.exists() for out in outputs)


def _before_joining(code):
    """Code for a worker's sitecustomize that runs ``code`` (a line of it, indented as a function's body) as the
    worker's training begins, before it joins the cluster (as it checks its inputs)."""
    return ("import os, signal, fasttext_lib.train as t\n"
            "real_checked_inputs = t._checked_inputs\n"
            "def checked_inputs(*args, **kwargs):\n"
            f"    {code}\n"
            "    return real_checked_inputs(*args, **kwargs)\n"
            "t._checked_inputs = checked_inputs\n")


def _the_second_worker_before_joining(sample_dir, tmp_path, code):
    """``(outputs, ended)``: two workers trained on the sample, the second running ``code`` before it joins (a bug, a
    stop), each with a FASTTEXT_CLUSTER_TIMEOUT far beyond the run's deadline (waiting for it fails the test)."""
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs,
                        env=[{"FASTTEXT_CLUSTER_TIMEOUT": "600"},
                             {"FASTTEXT_CLUSTER_TIMEOUT": "600",
                              **_probing_after_2_s(tmp_path / "second", also=_before_joining(code))}])
    return outputs, ended


def test_a_worker_that_hits_a_bug_before_joining_tells_the_others(sample_dir, tmp_path):
    """A bug (an exception that is no user error) in one worker before it joined the cluster printed its traceback
    and ended it, and the others waited for it in mx.kv.create for FASTTEXT_CLUSTER_TIMEOUT (30 minutes by default).
    It now joins to tell them, after its traceback, and they end at once in one line naming it and the bug."""
    outputs, ended = _the_second_worker_before_joining(sample_dir, tmp_path, "raise RuntimeError('an injected bug')")
    (status, _, err), (buggy_status, _, buggy_err) = ended
    assert buggy_status == 1 and "Traceback" in buggy_err and "RuntimeError: an injected bug" in buggy_err, buggy_err
    assert status == 2 and _errors(err) and re.fullmatch(
        r"error: worker [01] \(host \S+\) failed before training: RuntimeError: an injected bug", _errors(err)[0]), err
    assert len(_errors(err)) == 1 and not _errors(buggy_err), ended
    assert not any(out.exists() for out in outputs)


def test_a_worker_stopped_before_joining_tells_the_others_it_was_stopped(sample_dir, tmp_path):
    """A SIGTERM (a spot host reclaimed, a job stopped on one host) or Ctrl-C on one worker before it joined the
    cluster ended it in its stop line, and the others waited for it in mx.kv.create for FASTTEXT_CLUSTER_TIMEOUT
    (30 minutes by default). It now joins to tell them, and they end at once in one line saying it was stopped."""
    outputs, ended = _the_second_worker_before_joining(sample_dir, tmp_path, "os.kill(os.getpid(), signal.SIGTERM)")
    (status, _, err), (stopped_status, _, stopped_err) = ended
    assert stopped_status == 143 and _errors(stopped_err) == ["error: terminated (SIGTERM); stopped and cleaned up"], \
        stopped_err
    assert "Traceback" not in stopped_err, stopped_err
    assert status == 2 and len(_errors(err)) == 1 and re.fullmatch(
        r"error: worker [01] \(host \S+\) was stopped before training", _errors(err)[0]), err
    assert not any(out.exists() for out in outputs)


@contextlib.contextmanager
def _watched_by_a_peer(monkeypatch):
    """``(this, peer, failed)``: two workers' watches on this host, rank 0 knowing rank 1 as its peer, armed while
    training; ``failed``: the lines this one's watch would end the run in (its ``fail``, recorded)."""
    from fasttext_lib import cluster

    monkeypatch.setenv("DMLC_NODE_HOST", "127.0.0.1")
    this, peer = cluster.Watch(timeout=600), cluster.Watch(timeout=600)
    failed = []
    monkeypatch.setattr(this, "fail", lambda message, status=2: failed.append(message))
    try:
        this.rank, peer.rank = 0, 1
        this.peers = [{"rank": 1, "host": "peer-host", "address": "127.0.0.1", "port": peer.port}]
        peer.peers = [{"rank": 0, "host": "this-host", "address": "127.0.0.1", "port": this.port}]
        with this.armed("while training"):
            yield this, peer, failed
    finally:
        this.close()
        peer.close()


def _first_failure(failed):
    """What ``failed`` (:func:`_watched_by_a_peer`'s) holds first, once the watch has taken it (up to 30 s)."""
    deadline = time.monotonic() + 30
    while not failed:
        assert time.monotonic() < deadline, "the peer's stop was never taken"
        time.sleep(0.1)
    return failed[0]


def test_a_stop_told_on_a_workers_port_counts_only_from_one_of_its_peers(monkeypatch):
    """A worker's port listens on every interface (listen_everywhere), so anything that connects can send to it: a
    message not of the shape tell_stopped sends ({"stopped": {}}) killed the watch thread with a KeyError, after which
    no timeout, lost worker or stop ended the run; and any {"stopped": {"rank": ..., "host": ...}} (a stranger's, a
    run's before on a reused port) ended it in 'worker N (host X) was stopped before training'. Only a peer's (its
    rank and its port, as the exchange gave them) ends it, named as the exchange named it."""
    from fasttext_lib import cluster

    with _watched_by_a_peer(monkeypatch) as (this, peer, failed):
        for stranger in ({"stopped": {}}, {"stopped": {"rank": 1, "host": "stranger"}},
                         {"stopped": {"rank": 1, "host": "stranger", "port": peer.port + 1}}):
            with socket.create_connection(("127.0.0.1", this.port)) as connection:
                connection.sendall(json.dumps(stranger).encode("utf-8"))
        time.sleep(2.5)  # (the watch looks each second: a stranger's message, taken, fails it by now)
        assert failed == []
        cluster.tell_stopped(peer)
        assert _first_failure(failed) == "worker 1 (host peer-host) was stopped before training"


def test_a_peers_stop_sent_seconds_after_it_connects_is_taken(monkeypatch):
    """A worker held between its connect and its send (a loaded machine) sent its stop after the port's read had
    given up (1 s): the others said "its process ended" where it "was stopped". The read waits PROBE_TIMEOUT now.
    (Here the stop is sent 1.5 s after the read began, past the old second; PROBE_TIMEOUT is made far longer than a
    loaded machine's delays, where 2.5 s of 5 once left a test's thread 2.5 s to be held.)"""
    from fasttext_lib import cluster

    monkeypatch.setattr(cluster, "PROBE_TIMEOUT", 600)
    reading, real_read_told = threading.Event(), cluster._read_told

    def read_told(connection):
        reading.set()
        return real_read_told(connection)
    monkeypatch.setattr(cluster, "_read_told", read_told)
    with _watched_by_a_peer(monkeypatch) as (this, peer, failed):
        with socket.create_connection(("127.0.0.1", this.port)) as connection:
            assert reading.wait(60)
            time.sleep(1.5)  # (the held worker: beyond the old read's 1 s, from its start)
            connection.sendall(json.dumps({"stopped": {"rank": 1, "port": peer.port}}).encode("utf-8"))
        assert _first_failure(failed) == "worker 1 (host peer-host) was stopped before training"


def _waiting_to_tell_marked(marker):
    """Code for a worker's sitecustomize that touches ``marker`` as it begins to join to tell the others why it ended
    (cluster._join_to_tell): its note is out, and a stop ends the wait from then on."""
    return ("import fasttext_lib.cluster as c\n"
            "real_join_to_tell = c._join_to_tell\n"
            "def join_to_tell(*args):\n"
            f"    open({str(marker)!r}, 'w').close()\n"
            "    return real_join_to_tell(*args)\n"
            "c._join_to_tell = join_to_tell\n")


def _stop_the_teller_then_end_the_sleeper(stop, marker, after):
    """``run_workers``' while_running for worker 1, waiting to tell the others why it ended, and worker 0, which never
    comes (it sleeps): where ``stop``, worker 1 is sent a SIGTERM ``after`` seconds once ``marker`` exists (once); worker
    0 is killed once worker 1 has ended."""
    stopped = []

    def step(workers):
        if stop and marker.exists() and not stopped:
            time.sleep(after)
            workers[1].send_signal(signal.SIGTERM)
            stopped.append(True)
        _end_the_sleeper_once_the_second_ended(workers)
    return step


@pytest.mark.parametrize("ended_by", ["the bound", "a second stop"])
def test_a_worker_stopped_before_joining_ends_though_the_others_never_come(sample_dir, tmp_path, ended_by):
    """Telling the others it was stopped means joining, which waits for them to finish reading their data: the
    stopped worker gives up after cluster.STOPPED_TELLS_FOR seconds (60; 1 here) and exits quietly with its stop's
    status, or at once on a second stop, rather than hang. (The other worker here never comes: it sleeps.)"""
    marker = tmp_path / "waiting"
    stop = _before_joining("os.kill(os.getpid(), signal.SIGTERM)") + _waiting_to_tell_marked(marker)
    # (a second stop that did not end the wait: the bound, far beyond run_workers' deadline, fails the test; the
    # second stop came 5 s after the first, and a loaded machine's worker that had not yet set the wait's handlers by
    # then took it in its cleanup)
    stop += f"c.STOPPED_TELLS_FOR = {1 if ended_by == 'the bound' else 600}\n"
    asleep = _probing_after_2_s(tmp_path / "asleep", also="import time\ntime.sleep(600)\n")
    # (3 s after the marker: joining by now, in MXNet's C++)
    stop_again_then_end_the_sleeper = _stop_the_teller_then_end_the_sleeper(ended_by == "a second stop", marker, 3)

    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs, while_running=stop_again_then_end_the_sleeper,
                        env=[asleep, _probing_after_2_s(tmp_path / "stopped", also=stop)])
    stopped_status, _, stopped_err = ended[1]
    assert stopped_status == 143 and _errors(stopped_err) == ["error: terminated (SIGTERM); stopped and cleaned up"], \
        stopped_err
    assert "Traceback" not in stopped_err and not any(out.exists() for out in outputs), stopped_err


def test_the_python_api_in_a_worker_that_fails_before_joining_tells_the_others(sample_dir, tmp_path):
    """``train()`` called from Python in a cluster's worker (DMLC_ROLE=worker) raised its error before joining, and the
    others waited for that worker in mx.kv.create for FASTTEXT_CLUSTER_TIMEOUT (30 minutes by default). It now tells
    them, as the CLI does: it says its line and exits 2 (it joined; the kvstore's exit barrier would wait for ever),
    and they end at once in one line naming it and its reason."""
    script = ("from fasttext_lib.config import TrainConfig\n"
              "from fasttext_lib.data import LabeledTexts\n"
              "from fasttext_lib.train import train\n"
              "train(LabeledTexts(labels=['1'], texts=['']), config=TrainConfig(kvstore='dist_sync', ctx='cpu'))\n")
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs, env={"FASTTEXT_CLUSTER_TIMEOUT": "600"},
                        programs=[None, [sys.executable, "-c", script]])
    (status, _, err), (failed_status, _, failed_err) = ended
    assert failed_status == 2 and len(_errors(failed_err)) == 1 and "Traceback" not in failed_err, failed_err
    reason = _errors(failed_err)[0][len("error: "):]
    assert status == 2 and _errors(err) == [f"error: worker {rank} (host {socket.gethostname()}) failed before "
                                            f"training: {reason}" for rank in "01" if f"worker {rank}" in err], err
    assert not any(out.exists() for out in outputs)


def test_a_usage_error_on_one_host_tells_the_others(sample_dir, tmp_path):
    """A usage error in one worker's own command line (a CLI user's hosts are each given theirs: a bad value typed on
    one) ended that worker in its line, before it read anything, and the others waited for it in mx.kv.create for
    FASTTEXT_CLUSTER_TIMEOUT (30 minutes by default). It now joins to tell them, and they end at once naming it."""
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs, env={"FASTTEXT_CLUSTER_TIMEOUT": "600"},
                        each=[[], ["--epochs", "zero"]])
    (status, _, err), (failed_status, _, failed_err) = ended
    said = "error: argument --epochs: expected an integer, got 'zero' (see python -m fasttext_lib train --help)"
    assert failed_status == 2 and _errors(failed_err) == [said], failed_err
    assert status == 2 and len(_errors(err)) == 1 and re.fullmatch(
        r"error: worker [01] \(host \S+\) failed before training: argument --epochs: expected an integer, got 'zero' "
        r"\(see python -m fasttext_lib train --help\)", _errors(err)[0]), err
    assert not any(out.exists() for out in outputs)


@pytest.mark.parametrize("environment, said, own, limit_mb", [
    ({"OMP_NUM_THREADS": "abc"}, "environment variable OMP_NUM_THREADS='abc' is not a whole number", [], None),
    ({"MXNET_CPU_WORKER_NTHREADS": "2000000000"}, "this process would start about", [], None),  # (above any kernel's)
    ({"MXNET_ENGINE_TYPE": "garbage"}, "MXNet cannot start", [], None),
    ({"OMP_NUM_THREADS": "abc"}, "argument --epochs: expected an integer, got 'zero'", ["--epochs", "zero"], None),
    ({"OMP_NUM_THREADS": "2"}, "MXNet needs about 790 MB of address space to train (2 threads, joining its cluster), "
                               "and this process may use 720 MB at most (ulimit -v)", [], 720)],
    ids=["a value MXNet aborts on", "more threads than the host allows", "no such engine", "and a usage error",
         "an address space too small for the join"])
def test_a_worker_whose_environment_mxnet_cannot_start_in_tells_the_others(sample_dir, tmp_path, environment, said,
                                                                         own, limit_mb):
    """A worker whose MXNet cannot start (a value MXNet aborts on, more threads than the host allows, an engine that
    does not exist) ended in its line before it read anything, and could not join to tell the others (joining is
    MXNet's): they waited for it in mx.kv.create for FASTTEXT_CLUSTER_TIMEOUT (30 minutes by default). It now tells
    them from a child process whose MXNet starts (those settings left at MXNet's defaults, one thread each), and they
    end at once in one line naming it and its reason. (A usage error there too: importing MXNet to tell the others
    aborted it, exit 134 and a C++ message under its line; it then told nobody.) An address-space limit (``ulimit -v``,
    here ``limit_mb``, set as the worker starts) that let MXNet start but not join (its threads and buffers): the
    join aborted, or raised a traceback, and the others waited; it is now refused before the join, and the child,
    whose one thread needs less, tells them."""
    limited = {} if limit_mb is None else _probing_after_2_s(tmp_path / "limited", also=(
        f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({limit_mb} << 20, {limit_mb} << 20))\n"))
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs, each=[[], own],
                        env=[{"FASTTEXT_CLUSTER_TIMEOUT": "600"},
                             {"FASTTEXT_CLUSTER_TIMEOUT": "600", **environment, **limited}])
    (status, _, err), (failed_status, _, failed_err) = ended
    assert failed_status == 2 and len(_errors(failed_err)) == 1, failed_err
    line = _errors(failed_err)[0]
    assert line.startswith(f"error: {said}") and "Traceback" not in failed_err, failed_err
    assert status == 2 and _errors(err) == [f"error: worker {rank} (host {socket.gethostname()}) failed before "
                                            f"training: {line[len('error: '):]}" for rank in "01"
                                            if f"worker {rank}" in err], err
    assert not any(out.exists() for out in outputs)


def test_server_port_never_gives_a_port_another_test_process_picked(monkeypatch):
    """server_port's port is free only until its scheduler binds it, seconds later: xdist's workers picking at once
    could each find the same port free, and two clusters' schedulers were given one port (a worker of one registered
    with the other's). A port another process picked is passed over, whatever the odds of picking it again."""
    import random

    tests = pathlib.Path(__file__).parent
    other = subprocess.Popen([sys.executable, "-c", "import sys\nfrom conftest import server_port\n"
                              "print(server_port(), flush=True)\nsys.stdin.read()\n"],
                             cwd=tests, env=dict(os.environ, PYTHONPATH=f"{tests}{os.pathsep}{ROOT}"),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        taken = int(other.stdout.readline())
        picks = []

        class PicksTheOthersFirst:  # (then any other: the second of its picks)
            def randrange(self, low, high):
                picks.append(taken if not picks else random.randrange(low, high))
                return picks[-1]
        monkeypatch.setattr(random, "SystemRandom", PicksTheOthersFirst)
        assert server_port() not in (taken, None) and picks[0] == taken and len(picks) >= 2
    finally:
        other.stdin.close()
        other.wait(timeout=120)


def _lone_worker_env():
    """The environment of a cluster's worker of two whose scheduler and other worker never come."""
    return dict(os.environ, PYTHONPATH=ROOT, DMLC_ROLE="worker", DMLC_PS_ROOT_URI="127.0.0.1",
                DMLC_PS_ROOT_PORT=str(server_port()), DMLC_NUM_SERVER="1", DMLC_NUM_WORKER="2")


def test_a_worker_told_from_another_thread_does_not_say_a_stop_ends_its_wait():
    """tell_the_others from a thread other than the main one (the Python API's train() in a thread) can catch no stop
    (Python's handlers are the main thread's): its note said "a stop ends the wait" all the same. It waits its bound
    (here 1 s; no other worker comes) and exits with the failure's status, its note saying only that it waits."""
    env = _lone_worker_env()
    code = ("import threading, fasttext_lib.cluster as c\n"
            "c.FAILED_TELLS_FOR = 1\n"
            "told = threading.Thread(target=c.tell_the_others, args=('error: --train: no such file: x', 2))\n"
            "told.start()\n"
            "told.join()\n")
    ended = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert ended.returncode == 2 and ended.stderr.splitlines() == [
        "note: waiting up to 1 s for the other workers to join the cluster, to tell them why this one ended"], ended


def test_a_stop_the_worker_ignores_does_not_end_its_wait_to_tell_the_others():
    """A worker started with SIGINT ignored (a script's ``cmd &`` background job: POSIX has it ignore SIGINT) waits to
    tell the others why it failed: that wait put a handler on SIGINT too, and a Ctrl-C meant for the script's
    foreground (or a ``kill -INT`` of its process group) ended the wait, untold. An ignored signal stays ignored; the
    others it catches (SIGTERM here, once the ignored SIGINT has not ended the wait) still end the wait. (No other
    worker comes; its bound, FAILED_TELLS_FOR's 600 s, is not reached: at 2 s, a loaded machine could end the wait
    by it before the thread said "still waiting".)"""
    env = _lone_worker_env()
    code = ("import os, signal, threading, time, fasttext_lib.cluster as c\n"
            "waiting, real_exit_on_a_stop = threading.Event(), c._exit_on_a_stop\n"
            "def exit_on_a_stop(*args):\n"
            "    caught = real_exit_on_a_stop(*args)\n"
            "    waiting.set()\n"
            "    return caught\n"
            "def interrupt():\n"
            "    waiting.wait()\n"
            "    print('ignored' if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else 'handled', flush=True)\n"
            "    os.kill(os.getpid(), signal.SIGINT)\n"
            "    time.sleep(0.5)\n"
            "    print('still waiting', flush=True)\n"
            "    os.kill(os.getpid(), signal.SIGTERM)\n"
            "c._exit_on_a_stop = exit_on_a_stop\n"
            "threading.Thread(target=interrupt, daemon=True).start()\n"
            "c.tell_the_others('error: --train: no such file: x', 2)\n")
    ended = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert ended.returncode == 2 and ended.stdout.splitlines() == ["ignored", "still waiting"], ended
    assert ended.stderr.splitlines() == ["note: waiting up to 600 s for the other workers to join the cluster, to tell "
                                         "them why this one ended; a stop ends the wait"], ended


def _stopped_while_joining(marker):
    """Code for a worker's sitecustomize that sends it a SIGTERM 2 s after it begins to join (its Watch made, then
    mx.kv.create: MXNet's C++, where the Python handler waits for the call to return), touching ``marker``."""
    return ("import os, signal, threading, fasttext_lib.cluster as c\n"
            "real_init = c.Watch.__init__\n"
            "def init(self, *args, **kwargs):\n"
            "    real_init(self, *args, **kwargs)\n"
            "    if self.quiet_status is None:\n"
            f"        threading.Timer(2, lambda: (open({str(marker)!r}, 'w').close(), "
            "os.kill(os.getpid(), signal.SIGTERM))).start()\n"
            "c.Watch.__init__ = init\n")


def _joining_once_stopped(marker, others):
    """Code for the other worker's sitecustomize: where ``others`` is "join later", it joins 1 s after the stopped
    worker's stop lands (``marker``, touched as the SIGTERM is sent); else it never comes (sleeps). (It slept a fixed
    20 s, to be sure to come after the stop.)"""
    if others != "join later":
        return _before_joining("import time; time.sleep(600)")
    return _before_joining(f"import os, time; [time.sleep(0.05) for _ in iter(lambda: os.path.exists({str(marker)!r}), "
                           f"True)]; time.sleep(1)")


@pytest.mark.parametrize("others", ["join later", "never come"])
def test_a_worker_stopped_inside_the_join_tells_the_others(sample_dir, tmp_path, others):
    """A stop that lands inside mx.kv.create (a C++ call: Python's handler runs once it returns) was raised just after
    the join, before the worker told the others where it answers: they waited for it for FASTTEXT_CLUSTER_TIMEOUT (30
    minutes by default), and while they had not joined yet it waited for them as long. It now tells them it was
    stopped, and they end in one line saying so; where they never come, it ends STOPPED_TELLS_FOR seconds after the
    stop (1 here). Either way its own line is the CLI's stop line, and its status the stop's."""
    marker = tmp_path / "stopped"
    stopped = _probing_after_2_s(tmp_path / "stopped-hooks", also=_stopped_while_joining(marker)
                                 + "fasttext_lib.cluster.STOPPED_TELLS_FOR = 1\n" * (others == "never come"))
    slow = _probing_after_2_s(tmp_path / "slow", also=_joining_once_stopped(marker, others))

    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs,
                        while_running=_end_the_sleeper_once_the_second_ended if others == "never come" else None,
                        env=[dict(slow, FASTTEXT_CLUSTER_TIMEOUT="600"), dict(stopped, FASTTEXT_CLUSTER_TIMEOUT="600")])
    (status, _, err), (stopped_status, _, stopped_err) = ended
    assert marker.exists()
    assert stopped_status == 143 and _errors(stopped_err) == ["error: terminated (SIGTERM); stopped and cleaned up"], \
        stopped_err
    if others == "join later":
        assert status == 2 and _errors(err) and re.fullmatch(
            r"error: worker [01] \(host \S+\) was stopped before training", _errors(err)[0]), err
        assert len(_errors(err)) == 1, err
    assert not any(out.exists() for out in outputs)


def _in_the_exchange_of_addresses(code):
    """Code for a worker's sitecustomize that runs ``code`` (a line of it) as the worker begins the exchange of the
    workers' addresses (cluster.introduce, right after the join), before its push."""
    return ("import os, signal, threading, time, fasttext_lib.cluster as c\n"
            "real_exchange = c._exchange\n"
            "def exchange(kv, description, first_key):\n"
            "    if first_key == c.INTRODUCE_KEY:\n"
            f"        {code}\n"
            "    return real_exchange(kv, description, first_key)\n"
            "c._exchange = exchange\n")


def test_a_worker_stopped_in_the_exchange_of_addresses_after_its_push_tells_the_others(sample_dir, tmp_path):
    """A stop that lands in the exchange of addresses after this worker's push (waiting in MXNet's barrier for the
    others' pushes) is held until the exchange is done, but its push had said nothing of it: the worker ended in its
    stop line, and the others found it gone only by the probe, PROBE_AFTER seconds on (10 s; 2 here), saying "its
    process ended or its host is lost". It now tells them on their ports, and they end in "was stopped before
    training". (The stopped worker's SIGTERM comes 2 s into the exchange; the other worker pushes 6 s into it.)"""
    stop = _in_the_exchange_of_addresses("threading.Timer(2, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()")
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs, env=[
        dict(_probing_after_2_s(tmp_path / "slow", also=_in_the_exchange_of_addresses("time.sleep(6)")),
             FASTTEXT_CLUSTER_TIMEOUT="600"),
        dict(_probing_after_2_s(tmp_path / "stopped", also=stop), FASTTEXT_CLUSTER_TIMEOUT="600")])
    (status, _, err), (stopped_status, _, stopped_err) = ended
    assert stopped_status == 143 and _errors(stopped_err) == ["error: terminated (SIGTERM); stopped and cleaned up"], \
        stopped_err
    assert status == 2 and _errors(err) == [f"error: worker {rank} (host {socket.gethostname()}) was stopped before "
                                            f"training" for rank in "01" if f"worker {rank}" in err], err
    assert not any(out.exists() for out in outputs)


@pytest.mark.parametrize("others", ["join later", "never come"])
def test_the_python_api_stopped_inside_the_join_with_no_handler_of_its_own_tells_the_others(sample_dir, tmp_path,
                                                                                           others):
    """``train()`` called from Python on the main thread, where SIGTERM has no Python handler (Python's default: the
    process ends by it): a SIGTERM inside mx.kv.create ended the worker there, untold, and the other, whose join
    then completed, waited for it in the exchange of addresses for FASTTEXT_CLUSTER_TIMEOUT. The stop is now held
    until the others are told it was stopped, then comes as it would have: the process ends by SIGTERM. (Its handler
    is put back as it was: the Python default.) Where they never come, the held stop ends the process
    STOPPED_TELLS_FOR seconds on (1 here) by SIGTERM too, after the stop's line: it exited 143, as no process
    without a handler ends."""
    marker = tmp_path / "stopped"
    script = ("import signal\n"
              "from fasttext_lib.config import TrainConfig\n"
              "from fasttext_lib.data import LabeledTexts\n"
              "from fasttext_lib.train import train\n"
              "assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL\n"
              "texts = [f'word{i % 7} other{i % 3} text' for i in range(200)]\n"
              "train(LabeledTexts(labels=[str(i % 2) for i in range(200)], texts=texts),\n"
              "      config=TrainConfig(kvstore='dist_sync', ctx='cpu'))\n")
    stopped = _probing_after_2_s(tmp_path / "stopped-hooks", also=_stopped_while_joining(marker)
                                 + "fasttext_lib.cluster.STOPPED_TELLS_FOR = 1\n" * (others == "never come"))
    late = _probing_after_2_s(tmp_path / "slow", also=_joining_once_stopped(marker, others))
    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs, programs=[None, [sys.executable, "-c", script]],
                        while_running=_end_the_sleeper_once_the_second_ended if others == "never come" else None,
                        env=[dict(late, FASTTEXT_CLUSTER_TIMEOUT="600"), dict(stopped, FASTTEXT_CLUSTER_TIMEOUT="600")])
    (status, _, err), (stopped_status, _, stopped_err) = ended
    assert marker.exists()
    assert stopped_status == -signal.SIGTERM, stopped_err
    if others == "join later":
        assert not _errors(stopped_err), stopped_err
        assert status == 2 and _errors(err) == [f"error: worker {rank} (host {socket.gethostname()}) was stopped "
                                                f"before training" for rank in "01" if f"worker {rank}" in err], err
    else:
        assert _errors(stopped_err) == ["error: terminated (SIGTERM); stopped and cleaned up"], stopped_err
    assert not any(out.exists() for out in outputs)


def _end_the_sleeper_once_the_second_ended(workers):
    """``run_workers``' while_running: the first worker, which never comes (it sleeps), is killed once the second
    has ended."""
    if workers[1].poll() is not None and workers[0].poll() is None:
        workers[0].kill()


@pytest.mark.parametrize("ended_by", ["the bound", "a stop"])
def test_a_failed_worker_says_it_waits_to_tell_the_others_and_waits_a_bounded_time(sample_dir, tmp_path, ended_by):
    """A worker that failed reading its data joins to tell the others, which waits for them to finish reading theirs:
    where they never come (SIGKILLed, their hosts lost) it waited quietly for FASTTEXT_CLUSTER_TIMEOUT (30 minutes by
    default, billed), and a stop could not end that wait (MXNet's C++). It now says its line, then that it waits, at
    most cluster.FAILED_TELLS_FOR seconds (600; 2 here), whatever FASTTEXT_CLUSTER_TIMEOUT is, and a stop ends the
    wait at once with the failure's status. (The other worker here never comes: it sleeps.)"""
    marker = tmp_path / "waiting"
    waiting = _waiting_to_tell_marked(marker)  # (once its note is out: a stop before it ended the process unsaid)
    if ended_by == "the bound":
        waiting += "c.FAILED_TELLS_FOR = 2\n"
    asleep = _probing_after_2_s(tmp_path / "asleep", also="import time\ntime.sleep(600)\n")
    # (3 s after the marker: joining by now, in MXNet's C++)
    stop_then_end_the_sleeper = _stop_the_teller_then_end_the_sleeper(ended_by == "a stop", marker, 3)

    outputs = [tmp_path / f"worker{rank}" for rank in range(2)]
    ended = run_workers(_common(sample_dir), outputs, while_running=stop_then_end_the_sleeper,
                        each=[[], ["--train", tmp_path / "missing.csv"]],
                        env=[dict(hooks, FASTTEXT_CLUSTER_TIMEOUT="600") for hooks in (
                            asleep, _probing_after_2_s(tmp_path / "failed", also=waiting))])
    failed_status, _, failed_err = ended[1]
    wait = 2 if ended_by == "the bound" else 600
    said = [line for line in failed_err.splitlines() if line.startswith(("error:", "note:"))]
    assert failed_status == 2 and said == [
        f"error: --train: no such file: {tmp_path / 'missing.csv'}",
        f"note: waiting up to {wait} s for the other workers to join the cluster, to tell them why this one ended; a "
        f"stop ends the wait"], failed_err
    assert "Traceback" not in failed_err and not any(out.exists() for out in outputs)


def _serve(server, answer):
    """Accept on ``server`` until it is closed, handing each connection to ``answer``."""
    def accept():
        while True:
            try:
                connection, _ = server.accept()
            except OSError:  # (closed)
                return
            with connection:
                answer(connection)
    threading.Thread(target=accept, daemon=True).start()


def test_the_scheduler_check_does_not_blame_a_forwarder_whose_scheduler_has_not_started_yet():
    """A port forwarded to the scheduler's host (ssh -L, docker-proxy) accepts each connection and closes it at once
    while no scheduler listens behind it yet (one started slowly: MXNet's import takes seconds): the check read that
    closed connection as another program answering, and ended a healthy cluster 10 s into its join, telling the
    user to choose another port. A connection closed before a byte is sent says nothing about the port, as nothing
    listening says nothing; one that answers otherwise, or waits for its client to speak first, is still another
    program."""
    from fasttext_lib import cluster

    closing = socket.create_server(("127.0.0.1", 0))
    _serve(closing, lambda connection: None)  # (accepted, and closed with nothing sent)
    speaking = socket.create_server(("127.0.0.1", 0))
    _serve(speaking, lambda connection: connection.sendall(b"SSH-2.0-OpenSSH_9.6\r\n"))
    zmq_like = socket.create_server(("127.0.0.1", 0))
    _serve(zmq_like, lambda connection: (connection.sendall(b"\xff" + bytes(8) + b"\x7f"), connection.recv(1)))
    try:
        assert not cluster.scheduler_port_taken("127.0.0.1", closing.getsockname()[1])
        assert cluster.scheduler_port_taken("127.0.0.1", speaking.getsockname()[1])
        assert not cluster.scheduler_port_taken("127.0.0.1", zmq_like.getsockname()[1])
    finally:
        for server in (closing, speaking, zmq_like):
            server.close()


def _http_error(connection):
    """What an HTTP server says to a client that sent it something else: once the client spoke."""
    if connection.recv(100):
        connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def test_the_scheduler_check_does_not_blame_a_frozen_scheduler_host_on_another_program(monkeypatch):
    """A scheduler whose host is frozen past the check's window (swapping, a suspended VM) has its connections accepted
    by the kernel, and it greets only once it runs again: the check read that silence as another program holding the
    port, and ended a healthy cluster, telling the user to choose another port. Silence is now no answer; a program
    that waits for its client to speak first is still found, by what it answers to ZeroMQ's own greeting."""
    from fasttext_lib import cluster

    monkeypatch.setattr(cluster, "PROBE_TIMEOUT", 0.5)
    frozen = socket.create_server(("127.0.0.1", 0))  # (never accepts: connections wait in its backlog, unanswered)
    http = socket.create_server(("127.0.0.1", 0))
    _serve(http, _http_error)
    try:
        assert not cluster.scheduler_port_taken("127.0.0.1", frozen.getsockname()[1])
        # (the library's own window for the answer: in 0.5 s this process's thread, answering once the check spoke,
        # could miss it on a loaded machine, and silence is no answer)
        monkeypatch.setattr(cluster, "PROBE_TIMEOUT", 5)
        assert cluster.scheduler_port_taken("127.0.0.1", http.getsockname()[1])
    finally:
        frozen.close()
        http.close()


def test_a_stop_as_the_join_ends_is_left_to_the_caller_not_to_the_watch():
    """cluster.stops_told_as_it_joins: a stop that lands as the join ends is raised at the block's end, for the
    caller's cleanup (``watch.stop`` cleared, so the watch does not end the process STOPPED_TELLS_FOR seconds later).
    Its byte on the wakeup descriptor was read by the block's thread after the block had ended, and that thread set
    ``watch.stop`` again: the caller's cleanup was cut short a minute on, in the stop's line. Handlers and the wakeup
    descriptor are put back."""
    from fasttext_lib import cluster

    class Watch:
        stop, peers = None, []

        def stopped(self, signum):
            self.stop = signum

    watch, handler, descriptor = Watch(), signal.getsignal(signal.SIGINT), signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(descriptor)
    for _ in range(5):  # (the thread read the byte late most times, not every time)
        with pytest.raises(KeyboardInterrupt):
            with cluster.stops_told_as_it_joins(watch) as stopped:
                signal.raise_signal(signal.SIGINT)
                assert stopped()
        for thread in threading.enumerate():  # (the block's reader: ends once its descriptor is closed)
            if thread.name == "fasttext-cluster-stops":
                thread.join(10)
        assert watch.stop is None
    assert signal.getsignal(signal.SIGINT) is handler and signal.set_wakeup_fd(descriptor) == descriptor


@pytest.mark.parametrize("role, cluster", [("", False), ("Worker", False), ("server", False), ("scheduler", True),
                                           ("worker", False), (None, False), ("server", True)])
def test_a_dmlc_role_mxnet_starts_a_server_for_without_its_cluster_is_one_line(role, cluster):
    """ps-lite takes any DMLC_ROLE but ``worker`` for a server's (``""`` left in a shell, ``Worker``), and with no
    cluster set MXNet's import stopped with "cannot load MXNet (Check notnull: ...DMLC_NUM_WORKER)": neither the
    variable nor the fix. Checked before the import (mxnet_env.check_cluster_role); a worker's, none, or a server's or
    scheduler's with its cluster set (MXNet's tools/launch.py) passes."""
    from fasttext_lib.errors import FastTextError
    from fasttext_lib.mxnet_env import check_cluster_role

    environ = {"DMLC_ROLE": role} if role is not None else {}
    if cluster:
        environ.update(DMLC_PS_ROOT_URI="127.0.0.1", DMLC_PS_ROOT_PORT="9091", DMLC_NUM_SERVER="1", DMLC_NUM_WORKER="2")
    if role in (None, "worker") or cluster:
        check_cluster_role(environ)
        return
    with pytest.raises(FastTextError, match=f"^environment variable DMLC_ROLE={role!r} starts this process as .*; "
                                            f"unset DMLC_ROLE to run on this host"):
        check_cluster_role(environ)


def test_train_with_an_empty_dmlc_role_says_so_in_one_line(sample_dir, tmp_path):
    r = run_cli("train", "--train", sample_dir / "train.csv", "--output", tmp_path / "m", "--epochs", 1,
                env={"DMLC_ROLE": ""})
    assert (r.returncode, r.stderr) == (2, "error: environment variable DMLC_ROLE='' starts this process as a cluster's "
                                           "parameter server (MXNet takes any role but 'worker' for a server's), which "
                                           "needs DMLC_PS_ROOT_URI, DMLC_PS_ROOT_PORT, DMLC_NUM_SERVER, DMLC_NUM_WORKER "
                                           "set too; unset DMLC_ROLE to run on this host, or set DMLC_ROLE=worker in a "
                                           "cluster's worker\n")
    assert not (tmp_path / "m").exists()


def test_a_failing_test_leaves_no_child_of_a_worker_running(tmp_path):
    """run_workers killed the workers of a test that failed, not their children: a worker's telling child
    (cluster._telling_child), waiting up to FAILED_TELLS_FOR to join, outlived the test. Here a worker's program starts
    a child that sleeps, and the test fails (its while_running raises) once the child has started: no process of the
    worker's is left."""
    started = tmp_path / "child"
    program = [sys.executable, "-c", "import os, subprocess, sys, time\n"
               "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
               f"open({str(started)!r} + '.part', 'w').write(str(child.pid))\n"
               f"os.replace({str(started)!r} + '.part', {str(started)!r})\n"
               "time.sleep(600)\n"]

    def fail_once_started(workers):
        if started.exists():
            raise AssertionError("the test failed")
    with pytest.raises(AssertionError, match="the test failed"):
        run_workers([], [tmp_path / "worker0"], programs=[program], while_running=fail_once_started)
    child = int(started.read_text())
    deadline = time.monotonic() + 30
    while _running(child):
        assert time.monotonic() < deadline, f"the worker's child (pid {child}) was left running"
        time.sleep(0.1)


def _running(pid):
    """Whether process ``pid`` runs (not ended, nor a zombie left for its new parent to reap)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
