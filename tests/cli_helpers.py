"""What the CLI tests share: tiny settings, a small labeled data set and a bundle trained on it (module fixtures), a
private TMPDIR, and the checks of a failure's one error line and of what it must not change."""
import os

import pytest

from conftest import run_cli, synthetic_reviews

TINY = ["--epochs", "1", "--batch-size", "64", "--emsize", "4", "--no-progress", "--ctx", "cpu"]
REVIEWS = "great food and friendly staff\nawful cold food\n"


def with_options(base, *changes):
    """The arguments ``base`` with the options ``changes`` names (``"--emsize", "100"``) set to their values there, the
    others added: an option given twice with different values is a usage error (cli._Once)."""
    out, given = list(base), dict(zip(changes[::2], changes[1::2]))
    for i in range(len(out) - 1):
        if out[i] in given:
            out[i + 1] = given.pop(out[i])
    return out + [part for pair in given.items() for part in pair]


def tiny(*changes):
    """TINY with ``changes`` (:func:`with_options`)."""
    return with_options(TINY, *changes)


def make_data(where, n, seed):
    from fasttext_lib.writers import write_csv

    write_csv(synthetic_reviews(n, seed=seed), str(where))
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
    """Every file under ``path`` with its size (the state a failure must not change)."""
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
