"""Process limits other than the address space (``ulimit -v``: test_hostile_cli.py; ``ulimit -f`` and a full TMPDIR:
test_storage.py), end to end: the real CLI in subprocesses started under ``ulimit -t`` (CPU time), ``ulimit -s``
(stack), ``ulimit -n`` (open files), a thread limit, or with stderr unwritable.

Every failure ends as test_hostile_cli.py's do: its exit status, exactly one ``error:`` line, no traceback, and every
existing file (a bundle replaced with ``--overwrite``) as it was, no staging leftovers.
"""
import json
import os
import resource
import signal
import subprocess
import sys

import pytest

from conftest import ROOT, run_cli

TINY = ["--epochs", "1", "--batch-size", "64", "--emsize", "4", "--no-progress", "--ctx", "cpu"]
REVIEWS = "great food and friendly staff\nawful cold food\n"


def make_data(where, n, seed):
    from fasttext_lib.data import LabeledTexts, write_csv
    from fasttext_lib.synthetic import generate_reviews

    data = generate_reviews(n, seed=seed)
    write_csv(LabeledTexts(data.labels, data.texts), str(where))
    return where


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    return {"train": make_data(d / "train.csv", 300, 1), "test": make_data(d / "test.csv", 60, 2)}


@pytest.fixture(scope="module")
def bundle(data, tmp_path_factory):
    """A finished bundle (not to be modified: tests copy it)."""
    out = tmp_path_factory.mktemp("bundle") / "model"
    r = run_cli("train", "--train", data["train"], "--output", out, *TINY)
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture
def tmpdir_env(tmp_path):
    """A private TMPDIR for the CLI run, to prove that it leaves no temporary files behind."""
    where = tmp_path / "tmpdir"
    where.mkdir()
    return where, {"TMPDIR": str(where)}


def assert_error(r, pattern, status=2):
    """Exit ``status``, exactly one ``error:`` line (matching ``pattern``), no traceback anywhere."""
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == status, (r.returncode, r.stderr)
    assert len(errors) == 1 and pattern in errors[0], r.stderr
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, r.stderr + r.stdout


def listing(path):
    """Every file under ``path`` with its size."""
    out = {}
    for root, _, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            out[os.path.relpath(full, path)] = os.path.getsize(full)
    return out


def predictions(model):
    from fasttext_lib.predict import Predictor

    return Predictor.load(str(model)).predict(REVIEWS.splitlines())


def copy_bundle(src, dest):
    dest.mkdir(parents=True)
    for name in os.listdir(src):
        (dest / name).write_bytes((src / name).read_bytes())
    return dest


def cli(args, limit=None, env=None, timeout=120, **kwargs):
    """``python -m fasttext_lib ARGS`` in a child process; ``limit``: ``(resource, soft, hard)`` set in it first."""
    def preexec():
        if limit is not None:
            resource.setrlimit(limit[0], limit[1:])

    kwargs.setdefault("capture_output", True)
    return subprocess.run([sys.executable, "-m", "fasttext_lib", *map(str, args)], text=True, timeout=timeout,
                          env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", **(env or {})),
                          preexec_fn=preexec, **kwargs)


def test_a_cpu_time_limit_stops_training_in_one_line_and_keeps_the_old_bundle(tmp_path, data, bundle, tmpdir_env):
    """``ulimit -St 1`` (a batch system's CPU-time limit): SIGXCPU's default action killed the run where it stood,
    exit 152 and no line, its staging files left where a publish or a checkpoint was under way. Now it stops as a
    SIGTERM does: cleaned up, one line that names the limit, the shell's status for SIGXCPU (152)."""
    tmpdir, env = tmpdir_env
    out = copy_bundle(bundle, tmp_path / "model")
    old, before = predictions(out), listing(out)
    ckpt = tmp_path / "ckpt"
    r = cli(["train", "--train", data["train"], "--output", out, *TINY, "--epochs", "100000", "--overwrite",
             "--checkpoint-dir", ckpt], limit=(resource.RLIMIT_CPU, 1, resource.RLIM_INFINITY), env=env)
    assert_error(r, "CPU time limit reached (SIGXCPU, ulimit -t)", status=128 + signal.SIGXCPU)
    assert listing(out) == before and predictions(out) == old and os.listdir(tmpdir) == []
    for epoch in os.listdir(ckpt) if ckpt.exists() else []:  # only whole checkpoints
        assert not [n for n in os.listdir(ckpt / epoch) if "staging" in n], os.listdir(ckpt / epoch)


def stderr_that_fails(how):
    """A descriptor for the child's stderr whose writes fail: a full device (ENOSPC) or a pipe whose reader is gone
    (EPIPE, as ``2> >(head -c0)`` or a log collector that died)."""
    if how == "full":
        return os.open("/dev/full", os.O_WRONLY)
    reader, writer = os.pipe()
    os.close(reader)
    return writer


@pytest.mark.parametrize("how", ["full", "closed pipe"])
def test_an_unwritable_stderr_does_not_stop_predict_answering(data, bundle, how):
    """``predict --input test.csv 2>/dev/full``: the note on how a labeled CSV is read failed to print, and that
    OSError ended the command before its first answer (exit 1: a traceback that could not be shown either). Notes
    and progress are for a reader who may be gone; the answers on stdout are the command's work."""
    sink = stderr_that_fails(how)
    try:
        r = cli(["predict", "--model", bundle, "--input", data["test"]], capture_output=False,
                stdout=subprocess.PIPE, stderr=sink)
    finally:
        os.close(sink)
    assert r.returncode == 0
    assert len(r.stdout.splitlines()) == 60 and all(json.loads(line)["label"] for line in r.stdout.splitlines())


@pytest.mark.parametrize("how", ["full", "closed pipe"])
def test_an_unwritable_stderr_does_not_stop_training(tmp_path, data, how):
    """``train ... 2>/dev/full`` (progress bars and notes on stderr): the first progress line failed, and the run
    ended there, exit 1, no bundle. Now the bundle is written, exit 0."""
    sink = stderr_that_fails(how)
    out = tmp_path / "out"
    try:
        r = cli(["train", "--train", data["train"], "--validation", data["test"], "--output", out, "--epochs", "2",
                 "--emsize", "4", "--ctx", "cpu"], capture_output=False, stdout=subprocess.PIPE, stderr=sink)
    finally:
        os.close(sink)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 2
    assert len(predictions(out)) == 2


def test_an_error_with_stderr_unwritable_still_exits_2(tmp_path, bundle):
    """The error line cannot be shown, but the status still says it (and nothing is written)."""
    sink = stderr_that_fails("full")
    try:
        r = cli(["predict", "--model", tmp_path / "missing", "--input", "-"], capture_output=False, input=REVIEWS,
                stdout=subprocess.PIPE, stderr=sink)
    finally:
        os.close(sink)
    assert (r.returncode, r.stdout) == (2, "")
