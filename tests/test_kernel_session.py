"""The library used from one long-lived Python process, as a Jupyter kernel runs a notebook's cells: the Stop button
(a KeyboardInterrupt in the main thread, with Python's own SIGINT handler), cells run again, several models trained
one after the other. Nothing a call leaves behind may change what a later call does."""
import signal
import sys

import numpy as np
import pytest

from fasttext_lib.config import TrainConfig
from fasttext_lib.data import LabeledTexts
from fasttext_lib.sample import load_sample
from fasttext_lib.train import train

SMALL = dict(epochs=3, ngrams=2, buckets=20000, emsize=20, progress=False, seed=3)


@pytest.fixture(scope="module")
def sample():
    test_data = load_sample("test")
    return load_sample("train"), LabeledTexts(test_data.labels[:200], test_data.texts[:200])


class StopPressedHere:
    """An object whose finalizer runs while the kernel's Stop button is pressed: Python's SIGINT handler raises
    KeyboardInterrupt inside ``__del__`` (MXNet frees every NDArray there), where Python drops it."""

    def __del__(self):
        signal.raise_signal(signal.SIGINT)  # (the handler runs now, in this frame)


def test_a_stop_that_a_finalizer_swallowed_still_stops_train(sample, capsys):
    """The Stop button during train() in a notebook: one press in ~6 (ctx 'cpu:0,1', adam: 4 of 25 tried) landed in
    an NDArray's ``__del__``; Python printed 'Exception ignored in: <function NDArrayBase.__del__ ...>' and a
    KeyboardInterrupt traceback, and training went on to its last epoch, as if Stop had not been pressed. The CLI
    took such a dropped signal up again (stops.stop_on_signals); the library's own calls did not."""
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # (a kernel's, while a cell runs)
    epochs, hook = [], sys.unraisablehook

    def on_epoch_end(row):
        epochs.append(row["epoch"])
        if row["epoch"] == 1:
            StopPressedHere()  # dropped at once: the press lands in the finalizer

    with pytest.raises(KeyboardInterrupt) as stopped:
        train(*sample, TrainConfig(**SMALL), on_epoch_end=on_epoch_end)
    assert type(stopped.value) is KeyboardInterrupt  # as the Stop button's: no signal name of the CLI's
    assert epochs == [1]  # stopped at the next step, not after the last epoch
    assert "Exception ignored" not in capsys.readouterr().err
    assert sys.unraisablehook is hook and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # The next cell: train again, as in a fresh kernel (the press is not raised a second time).
    again = train(*sample, TrainConfig(**SMALL))
    assert [row["epoch"] for row in again.history] == [1, 2, 3]
    fresh = train(*sample, TrainConfig(**SMALL))
    assert [row["train_loss"] for row in again.history] == [row["train_loss"] for row in fresh.history]


def test_a_finalizers_own_errors_are_still_reported(sample, capsys):
    """Only the Stop button's KeyboardInterrupt is taken up: any other exception a finalizer drops during train() is
    shown by Python as before, and training goes on."""

    class Broken:
        def __del__(self):
            raise ValueError("a finalizer's own bug")

    seen = []
    hook = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        trained = train(*sample, TrainConfig(**SMALL), on_epoch_end=lambda row: Broken())
    finally:
        sys.unraisablehook = hook
    assert len(trained.history) == 3
    assert [str(u.exc_value) for u in seen] == ["a finalizer's own bug"] * 3
    assert np.isfinite(trained.history[-1]["train_loss"])


HALF_IMPORTED = """\
import importlib.abc, sys
import fasttext_lib
from fasttext_lib.config import TrainConfig
from fasttext_lib.predict import Predictor
from fasttext_lib.sample import load_sample
from fasttext_lib.train import train

class StopPressedDuring(importlib.abc.MetaPathFinder):
    # the Stop button pressed while {package} imports {module}: its earlier modules are imported by then
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise KeyboardInterrupt

data = load_sample("train")
sys.meta_path.insert(0, StopPressedDuring())
try:
    train(data, None, TrainConfig(epochs=1, buckets=1000, progress=False))
except KeyboardInterrupt:
    print("stopped", {package!r} in sys.modules, any(m.startswith({package!r} + ".") for m in sys.modules))
sys.meta_path.pop(0)
trained = train(data, None, TrainConfig(epochs=1, buckets=1000, progress=False))  # the cell run again
print("trained", len(trained.history))
"""


@pytest.mark.parametrize("module", ["mxnet.gluon", "mxnet.kvstore"])
def test_train_run_again_after_a_stop_during_its_first_import_of_mxnet(module):
    """The first train() of a kernel imports MXNet and GluonNLP (seconds); Stop pressed then left the package's
    first modules in sys.modules and not the package: the cell run again failed with "AttributeError: module 'mxnet'
    has no attribute 'context'" (a traceback) at every call, until the kernel was restarted."""
    import subprocess

    from conftest import ROOT

    ran = subprocess.run([sys.executable, "-c", HALF_IMPORTED.format(package="mxnet", module=module)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert ran.stdout.splitlines() == ["stopped False True", "trained 1"], ran.stderr[-3000:]
    assert ran.returncode == 0 and "Traceback" not in ran.stderr
