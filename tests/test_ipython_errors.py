"""The one-line error display in an IPython kernel (notebook_errors.show_errors_as_lines), in a real InteractiveShell."""
import pytest

from fasttext_lib import notebook_errors
from fasttext_lib.errors import FastTextError

IPython = pytest.importorskip("IPython")  # a base dependency (notebooks); never skipped in this environment


@pytest.fixture
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.set_custom_exc((), None)
    yield shell
    shell.set_custom_exc((), None)
    InteractiveShell.clear_instance()


def run(shell, capsys, code):
    result = shell.run_cell(code)
    return result, capsys.readouterr().out


def test_an_earlier_custom_handler_keeps_its_exceptions_and_comes_back(shell, capsys):
    """show_errors_as_lines replaced any custom handler the user had installed (IPython keeps one): their handler for
    other exceptions stopped being called. It is now chained to, and stop_showing_errors_as_lines restores it."""
    seen = []

    def users(self, etype, value, tb, tb_offset=None):
        seen.append(value)
        return [f"user's handler: {value}"]

    shell.set_custom_exc((ValueError,), users)
    shell.user_ns["FastTextError"] = FastTextError
    notebook_errors.show_errors_as_lines()
    notebook_errors.show_errors_as_lines()  # a second check cell: installed once, not chained to itself
    result, out = run(shell, capsys, "raise FastTextError('no such S3 object: s3://b/k')")
    assert not result.success and out.strip() == "error: no such S3 object: s3://b/k" and seen == []
    result, out = run(shell, capsys, "raise ValueError('theirs')")
    assert not result.success and [str(v) for v in seen] == ["theirs"] and "Traceback" not in out
    result, out = run(shell, capsys, "raise KeyError('other')")  # neither handler's: IPython's own traceback
    assert "Traceback" in out and "KeyError" in out and len(seen) == 1
    notebook_errors.stop_showing_errors_as_lines()
    assert shell.custom_exceptions == (ValueError,)
    run(shell, capsys, "raise ValueError('again')")
    assert [str(v) for v in seen] == ["theirs", "again"]
    result, out = run(shell, capsys, "raise FastTextError('bad')")
    assert "Traceback" in out and "FastTextError" in out  # ours is gone


def test_without_an_earlier_handler_ours_is_installed_alone_and_removed(shell, capsys):
    shell.user_ns["FastTextError"] = FastTextError
    notebook_errors.show_errors_as_lines()
    assert shell.custom_exceptions == (FastTextError, KeyboardInterrupt)  # (a Stop in training: one line too)
    result, out = run(shell, capsys, "raise FastTextError('bad')")
    assert out.strip() == "error: bad"
    notebook_errors.stop_showing_errors_as_lines()
    assert shell.custom_exceptions == ()
    result, out = run(shell, capsys, "raise FastTextError('bad')")
    assert "Traceback" in out


@pytest.mark.parametrize("earlier", [False, True])
def test_a_handler_installed_after_ours_is_left_alone_when_ours_stops(shell, capsys, earlier):
    """stop_showing_errors_as_lines told ours by its types: a handler the user installed after it, for
    FastTextError, was taken for ours and removed (or replaced by the one from before ours)."""
    seen = []

    def earlier_handler(self, etype, value, tb, tb_offset=None):
        return ["earlier"]

    def later(self, etype, value, tb, tb_offset=None):
        seen.append(value)
        return [f"later: {value}"]

    if earlier:
        shell.set_custom_exc((ValueError,), earlier_handler)
    shell.user_ns["FastTextError"] = FastTextError
    notebook_errors.show_errors_as_lines()
    shell.set_custom_exc((FastTextError,), later)
    notebook_errors.show_errors_as_lines()  # theirs now: chained to, not taken for ours
    result, out = run(shell, capsys, "raise FastTextError('bad')")
    assert out.strip() == "error: bad" and seen == []
    notebook_errors.stop_showing_errors_as_lines()
    assert shell.custom_exceptions == (FastTextError,)
    run(shell, capsys, "raise FastTextError('f')")
    assert [str(v) for v in seen] == ["f"]
    shell.set_custom_exc((FastTextError,), later)  # installed after ours, not over it: stop leaves it
    notebook_errors.show_errors_as_lines()
    shell.set_custom_exc((FastTextError,), later)
    notebook_errors.stop_showing_errors_as_lines()
    assert shell.custom_exceptions == (FastTextError,)
    run(shell, capsys, "raise FastTextError('g')")
    assert [str(v) for v in seen] == ["f", "g"]


def test_a_traceback_display_installed_over_ipythons_still_shows_our_line(shell, capsys, monkeypatch):
    """``import sagemaker`` in a notebook (02's bundle cell, 04's deploy cell, a user's own first cell) installs rich's
    traceback display into the kernel (sagemaker_core's logger calls rich.traceback.install, which replaces the
    shell's ``_showtraceback``): every FastTextError after it was a 40-line boxed traceback again, sent as display
    output, so papermill's "Exception encountered at In [N]" said nothing. Our line goes to IPython's own display."""
    import sys

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # rich.traceback.install replaces it: put back after
    monkeypatch.setitem(sys.modules, "sagemaker_core.main.utils", None)  # rich's display is not the SDK's here: kept
    shell.user_ns["FastTextError"] = FastTextError
    notebook_errors.show_errors_as_lines()
    result, out = run(shell, capsys, "import rich.traceback\nrich.traceback.install()")  # what import sagemaker does
    assert result.success and "_showtraceback" in vars(shell)  # (rich's, over IPython's)
    result, out = run(shell, capsys, "raise FastTextError('no such S3 object: s3://b/k')")
    assert not result.success and out.strip() == "error: no such S3 object: s3://b/k"


def test_the_sdks_traceback_display_is_taken_out_again(shell, capsys, monkeypatch):
    """After ``import sagemaker`` (sagemaker_core's logger installs rich's traceback display into the kernel) every
    other exception was rich's boxed traceback, sent as display output, not as the cell's error: papermill said
    "Exception encountered at In [N]:" and nothing else (02's training job cell, 04's deploy cell: an SDK error).
    It is taken out before the next cell runs, and by the library's own session (the cell that imported it)."""
    import sys

    pytest.importorskip("sagemaker_core")
    from fasttext_lib.sagemaker_utils import sagemaker_session

    shown = []  # what the kernel sends as the cell's error (ipykernel's _showtraceback: papermill reads it)
    monkeypatch.setattr(type(shell), "_showtraceback", lambda self, etype, value, stb: shown.append(etype.__name__))
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # rich's install replaces it: put back after
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")  # (the session needs one; it calls no service)
    shell.user_ns["sagemaker_session"] = sagemaker_session
    notebook_errors.show_errors_as_lines()
    sdk_import = ("import sagemaker_core.main.utils as utils\n"
                  "utils.textual_rich_console_and_traceback_enabled = False\n"  # (imported before, in this process)
                  "utils.enable_rich_logging()\n")  # what its import does in a kernel
    run(shell, capsys, sdk_import)
    result, out = run(shell, capsys, "raise KeyError('theirs')")
    assert not result.success and shown == ["KeyError"]
    run(shell, capsys, sdk_import + "sagemaker_session()\nraise KeyError('same cell')")
    assert shown == ["KeyError", "KeyError"]
    notebook_errors.stop_showing_errors_as_lines()
    run(shell, capsys, sdk_import)
    assert "_showtraceback" in vars(shell)  # ours stopped: the kernel is left as the SDK makes it


def test_a_stop_in_the_cell_that_imports_the_sdk_is_the_cells_error(shell, capsys, monkeypatch):
    """The Stop button pressed while 02's bundle cell imported the SDK (``from sagemaker.s3 import S3Downloader``:
    seconds), once sagemaker_core had put rich's traceback display in and before the cell's sagemaker_session() took
    it out: the KeyboardInterrupt was rich's boxed traceback, sent as display output, and the cell had no error
    output (nbclient and papermill read none), and rich's display stayed for the next cell's errors. It is IPython's
    traceback, sent as the cell's error, and rich's display is gone."""
    import sys

    pytest.importorskip("sagemaker_core")
    shown = []  # what the kernel sends as the cell's error (ipykernel's _showtraceback: papermill reads it)
    monkeypatch.setattr(type(shell), "_showtraceback", lambda self, etype, value, stb: shown.append(etype.__name__))
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # rich's install replaces it: put back after
    notebook_errors.show_errors_as_lines()
    result, _ = run(shell, capsys, "import sagemaker_core.main.utils as utils\n"
                                   "utils.textual_rich_console_and_traceback_enabled = False\n"  # (imported before)
                                   "utils.enable_rich_logging()\n"  # what its import does in a kernel
                                   "raise KeyboardInterrupt")  # the Stop, before the import returns
    assert not result.success and type(result.error_in_exec) is KeyboardInterrupt
    assert shown == ["KeyboardInterrupt"] and "_showtraceback" not in vars(shell)
    notebook_errors.stop_showing_errors_as_lines()


@pytest.mark.parametrize("earlier", [False, True])
def test_the_stop_button_during_training_is_one_line_and_the_cell_still_fails(shell, capsys, monkeypatch, earlier):
    """The Stop button (a KeyboardInterrupt) while 02's train() ran showed IPython's whole traceback through the
    training loop and MXNet. The kernel now sends one line naming the epoch and step, as the cell's error of type
    KeyboardInterrupt (papermill still stops there); a Stop anywhere else keeps IPython's traceback, and a user's
    earlier handler is not given it."""
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.sample import load_sample
    from fasttext_lib.train import train

    sent = []  # what the kernel sends as the cell's error (ipykernel's _showtraceback: papermill reads it)
    shown = type(shell)._showtraceback
    monkeypatch.setattr(type(shell), "_showtraceback",
                        lambda self, etype, value, stb: sent.append((etype.__name__, stb)) or shown(self, etype, value, stb))
    if earlier:
        shell.set_custom_exc((ValueError,), lambda self, etype, value, tb, tb_offset=None: pytest.fail("theirs"))
    shell.user_ns.update(train=train, TrainConfig=TrainConfig, data=load_sample("train").head(300))
    notebook_errors.show_errors_as_lines()
    result, out = run(shell, capsys, """\
def stop_pressed(row):
    if row["epoch"] == 2:
        raise KeyboardInterrupt  # the Stop button, pressed at the end of epoch 2
train(data, None, TrainConfig(epochs=3, batch_size=32, buckets=1000, progress=False), on_epoch_end=stop_pressed)
""")
    line = ("error: stopped by the user at epoch 2, step 10; nothing was saved; run the cell again to start over")
    assert not result.success and type(result.error_in_exec) is KeyboardInterrupt
    assert sent == [("KeyboardInterrupt", [line])] and out.strip() == line
    result, out = run(shell, capsys, "raise KeyboardInterrupt")  # a Stop elsewhere: as IPython shows it
    assert not result.success and "Traceback" in out and "KeyboardInterrupt" in out and len(sent) == 2
    notebook_errors.stop_showing_errors_as_lines()
    assert shell.custom_exceptions == ((ValueError,) if earlier else ())


def test_a_stop_anywhere_in_an_autotune_search_is_one_true_line_and_the_cell_still_fails(shell, capsys, monkeypatch):
    """A Stop in notebook 02's autotune was told as its trial's epoch and step, as if they were the run's ("stopped by
    the user at epoch 2, step 5"), and a Stop between trials (the first trial's featurizing) was IPython's whole
    traceback. A Stop that ends the call is now one line saying where in the search it came, and the cell fails (a
    KeyboardInterrupt: papermill stops); a first Stop after a trial completed stops the search and keeps the chosen
    trial's model, as Ctrl-C in the CLI does, and its note says so (no 'interrupt again' with nothing left to stop)."""
    import fasttext_lib.autotune as autotune_module
    from fasttext_lib.autotune import split_validation
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.sample import load_sample

    sent = []  # what the kernel sends as the cell's error (ipykernel's _showtraceback: papermill reads it)
    shown = type(shell)._showtraceback
    monkeypatch.setattr(type(shell), "_showtraceback",
                        lambda self, etype, value, stb: sent.append((etype.__name__, stb)) or shown(self, etype, value, stb))
    real_train, real_featurize = autotune_module.train, autotune_module.featurize
    stop = {}  # where the Stop button is pressed: {"trial": n, "epoch": e}, {"featurize": True} or {"refit": e}

    def train(train_data, val_data, config, **kwargs):
        trial = stop.setdefault("trials", 0) + (val_data is not None)
        stop["trials"] = trial
        epoch = stop.get("epoch" if val_data is not None and trial == stop.get("trial") else
                         "refit" if val_data is None else None)

        def stop_pressed(row):
            if row["epoch"] == epoch:
                raise KeyboardInterrupt
        return real_train(train_data, val_data, config, on_epoch_end=stop_pressed, **kwargs)

    def featurize(*args):
        if stop.get("featurize"):
            raise KeyboardInterrupt
        return real_featurize(*args)

    monkeypatch.setattr(autotune_module, "train", train)
    monkeypatch.setattr(autotune_module, "featurize", featurize)
    search_train, search_val = split_validation(load_sample("train").head(400), seed=0)
    start = TrainConfig(ctx="cpu", buckets=50_000, optimizer="sgd", lr=2.0, batch_size=64, epochs=3, emsize=20,
                        ngrams=2, progress=False)
    shell.user_ns.update(run_autotune=autotune_module.autotune, search_train=search_train, search_val=search_val,
                         start=start, base=TrainConfig(ctx="cpu", buckets=50_000, progress=False))
    notebook_errors.show_errors_as_lines()
    cell = "tuned = run_autotune(search_train, search_val, duration=600, base=base, start=start, max_trials=3, refit={})"
    ends = "; nothing was saved; run the cell again to start over"
    for where, refit, line in (
            ({"trial": 1, "epoch": 2}, False, "error: stopped by the user during autotune trial 1 of the search" + ends),
            ({"featurize": True}, False, "error: stopped by the user during autotune trial 1 of the search" + ends),
            ({"trial": 2, "epoch": 2, "refit": 1}, True,
             "error: stopped by the user during autotune's final model (trial 1's setting trained again on the training "
             "and validation data), after 1 trial of the search" + ends)):
        stop.clear()
        stop.update(where)
        sent.clear()
        result, out = run(shell, capsys, cell.format(refit))
        assert not result.success and type(result.error_in_exec) is KeyboardInterrupt, out
        assert sent == [("KeyboardInterrupt", [line])] and out.strip() == line
    stop.clear()
    stop.update(trial=2, epoch=2)  # a first Stop after a trial completed: the search stops, the chosen model is kept
    sent.clear()
    result = shell.run_cell(cell.format(False))
    out, err = capsys.readouterr()
    assert result.success and shell.user_ns["tuned"].interrupted and sent == [] and out == ""
    assert "note: the autotune search was stopped (interrupted) after 1 trial;" in err
    assert "its model (training data only) is the final one" in err and "interrupt again" not in err
    notebook_errors.stop_showing_errors_as_lines()


def test_a_stop_in_02s_autotune_cell_after_the_search_is_one_true_line(shell, capsys, monkeypatch, tmp_path,
                                                                      s3_bucket):
    """A Stop in notebook 02's autotune cell after the search had returned (while it evaluated the tuned model on the
    test split, drew the trials or saved the trial table) was IPython's whole traceback; and the cell had already
    saved this search's plot and table, and replaced the notebook's model, before its slowest step. The cell's work
    after the search is now the library's (Workspace.autotune), and it saves nothing (the save cell puts the plot and
    table in place with the model): a Stop anywhere in it is one line saying that nothing was saved (an earlier run's
    plot and table stay as they were)."""
    import os

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import nbformat
    import pandas as pd

    import fasttext_lib.autotune as autotune_module
    from conftest import ROOT
    from fasttext_lib.autotune import AutotuneResult
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.sample import load_sample
    from fasttext_lib.workspace import Workspace

    nb = nbformat.read(os.path.join(ROOT, "notebooks", "02_train_gpu.ipynb"), as_version=4)
    cell = next(c.source for c in nb.cells if c.cell_type == "code" and c.source.startswith("if autotune:"))
    sent = []  # what the kernel sends as the cell's error (ipykernel's _showtraceback: papermill reads it)
    shown = type(shell)._showtraceback
    monkeypatch.setattr(type(shell), "_showtraceback",
                        lambda self, etype, value, stb: sent.append((etype.__name__, stb)) or shown(self, etype, value, stb))
    real_autotune, real_evaluate, real_to_csv = autotune_module.autotune, AutotuneResult.evaluate, pd.DataFrame.to_csv
    stop = {}  # where the Stop button is pressed: "evaluate" (the test split's score) or "save" (the trial table)

    def evaluate(self, data):
        if stop.get("at") == "evaluate":
            raise KeyboardInterrupt
        return real_evaluate(self, data)

    def to_csv(self, *args, **kwargs):
        if stop.get("at") == "save":
            raise KeyboardInterrupt
        return real_to_csv(self, *args, **kwargs)

    monkeypatch.setattr(autotune_module, "autotune",  # one trial: seconds
                        lambda *args, **kwargs: real_autotune(*args, max_trials=1, **kwargs))
    monkeypatch.setattr(AutotuneResult, "evaluate", evaluate)
    monkeypatch.setattr(pd.DataFrame, "to_csv", to_csv)
    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    shell.user_ns.update(autotune=True, train_data=load_sample("train").head(300), test_data=load_sample("test").head(100),
                         config=TrainConfig(ctx="cpu", buckets=50_000, progress=False), seed=0, autotune_duration=600,
                         ws=ws, run_name="run", plt=plt)
    notebook_errors.show_errors_as_lines()
    result = shell.run_cell(cell)
    assert result.success and sent == [], capsys.readouterr()
    assert shell.user_ns["trained"] is shell.user_ns["tuned"].trained
    folder = ws.out / "run"
    assert not folder.exists()  # (the save cell writes the plot and table, with the model)
    earlier = plt.figure()
    ws.save_run(shell.user_ns["trained"], "run", earlier)  # 02's save cell: this search's, saved with its model
    plt.close(earlier)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert sorted(before) == ["autotune.png", "autotune_trials.csv", "autotune_written.json", "history.csv",
                              "history.png", "history_written.json"]  # (and their records; the model's history)
    capsys.readouterr()
    line = ("error: stopped by the user after the autotune search (1 trial), while showing its results; nothing was "
            "saved; run the cell again to start over")
    for at in ("evaluate", "save"):  # (save: the trial table kept for the save cell)
        stop["at"] = at
        sent.clear()
        shell.user_ns["trained"] = "the model trained before"
        result, out = run(shell, capsys, cell)
        assert not result.success and type(result.error_in_exec) is KeyboardInterrupt, out
        assert sent == [("KeyboardInterrupt", [line])] and out.strip().splitlines()[-1] == line, out
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # the earlier search's, whole; no temporary
        assert shell.user_ns["trained"] == "the model trained before"  # the cell's model is not replaced either
    # Pressed once the plot and table are kept for the save cell (closing the figure): they are of a model the cell
    # did not keep, which the save cell never writes (tests/test_notebooks.py), so nothing was saved still holds
    real_close = plt.close

    def close(*args):
        real_close(*args)
        raise KeyboardInterrupt
    monkeypatch.setattr(plt, "close", close)
    stop.clear()
    sent.clear()
    result, out = run(shell, capsys, cell)
    assert not result.success and sent == [("KeyboardInterrupt", [line])], out
    assert shell.user_ns["trained"] == "the model trained before"
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    monkeypatch.setattr(plt, "close", real_close)
    notebook_errors.stop_showing_errors_as_lines()
    plt.close("all")


def test_a_stop_that_left_a_pair_mixed_says_so_in_its_one_line(shell, capsys, monkeypatch, s3_bucket):
    """The Stop button between the copies that put a pair in place on S3 (write_fasttext_splits, as 01 and prepare
    write): the CLI's line says the pair may now be mixed, the kernel showed a bare KeyboardInterrupt traceback. It is
    now the CLI's one line (stops.stop_message), and the cell still fails with the KeyboardInterrupt."""
    from fasttext_lib import storage
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.writers import write_fasttext_splits

    sent = []
    shown = type(shell)._showtraceback
    monkeypatch.setattr(type(shell), "_showtraceback",
                        lambda self, etype, value, stb: sent.append((etype.__name__, stb)) or shown(self, etype, value, stb))
    real_copy, copies = storage.pairs._copy, []

    def copy(*args):
        copies.append(args[4])
        if len(copies) == 2:
            raise KeyboardInterrupt  # the Stop button, pressed once the train split is in place
        real_copy(*args)
    monkeypatch.setattr(storage.pairs, "_copy", copy)
    data = LabeledTexts(["1", "2"], ["good food", "bad food"])
    shell.user_ns.update(write_fasttext_splits=write_fasttext_splits, data=data, prefix=f"{s3_bucket}/data")
    notebook_errors.show_errors_as_lines()
    result, out = run(shell, capsys, 'write_fasttext_splits({"train": data, "test": data}, prefix, "pair")')
    train, test = f"{s3_bucket}/data/pair.train", f"{s3_bucket}/data/pair.test"
    # (a notebook has no command to run again: write_fasttext_splits is called again)
    line = (f"error: interrupted (SIGINT); stopped and cleaned up, but {train}, {test} may now be a mixed set, of two "
            f"writes (reading them together is refused): call it again")
    assert not result.success and type(result.error_in_exec) is KeyboardInterrupt
    assert sent == [("KeyboardInterrupt", [line])] and out.strip() == line, out
    notebook_errors.stop_showing_errors_as_lines()


@pytest.mark.parametrize("call", ["read_prepared", "write_fasttext_splits", "Predictor.load"])
def test_a_stop_during_a_long_read_or_write_of_the_library_is_one_line(shell, capsys, monkeypatch, tmp_path, call):
    """The Stop button during 02's or 04's data read (read_prepared), 01's write cell (write_fasttext_splits) or 04's
    bundle load (minutes each at Yelp size) showed IPython's 14-line KeyboardInterrupt traceback through the reader,
    where a Stop in training is one line. It is one line now, saying what it stopped and that the cell can be run
    again; the cell still fails with the KeyboardInterrupt, the files written before are as they were, and a Stop in
    the user's own code keeps IPython's traceback (so does any other exception the reader raises: a bug's)."""
    from fasttext_lib import data, writers
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.own_data import read_prepared
    from fasttext_lib.predict import Predictor
    from fasttext_lib.train import train
    from fasttext_lib.writers import write_fasttext_splits

    sent = []
    shown = type(shell)._showtraceback
    monkeypatch.setattr(type(shell), "_showtraceback",
                        lambda self, etype, value, stb: sent.append((etype.__name__, stb)) or shown(self, etype, value, stb))
    texts = LabeledTexts(["1", "2"] * 20, ["good food here", "bad food there"] * 20)
    old = write_fasttext_splits({"train": texts, "test": texts}, str(tmp_path), "x")
    before = {name: (tmp_path / f"x.{name}").read_bytes() for name in ("train", "test")}
    bundle = str(tmp_path / "bundle")
    if call == "Predictor.load":
        from fasttext_lib.bundle import save_bundle

        save_bundle(train(texts, None, TrainConfig(epochs=1, buckets=100, progress=False)), bundle)
    lines_done = []

    def stopped_part_way(real):  # the Stop button, pressed on the second line read or written
        def part(*args, **kwargs):
            lines_done.append(1)
            if len(lines_done) == 2:
                raise KeyboardInterrupt
            return real(*args, **kwargs)
        return part
    if call == "Predictor.load":  # (once its files are fetched and checked: while their arrays are read)
        monkeypatch.setattr(Predictor, "from_files", classmethod(stopped_part_way(lambda *args: pytest.fail("read"))))
        lines_done.append(1)
    elif call == "read_prepared":
        monkeypatch.setattr(data, "parse_fasttext_line", stopped_part_way(data.parse_fasttext_line))
    else:
        monkeypatch.setattr(writers, "fasttext_line", stopped_part_way(writers.fasttext_line))
    shell.user_ns.update(read_prepared=read_prepared, write_fasttext_splits=write_fasttext_splits, Predictor=Predictor,
                         data=texts, uri=old["train"], folder=str(tmp_path), bundle=bundle)
    notebook_errors.show_errors_as_lines()
    code, line = {
        "read_prepared": ("read_prepared(uri, 'x')",
                          f"error: stopped by the user while reading {old['train']}; run the cell again to read it"),
        "write_fasttext_splits": ("write_fasttext_splits({'train': data, 'test': data}, folder, 'x')",
                                  f"error: stopped by the user while writing x's splits to {tmp_path}; none was "
                                  f"replaced (written together: an older one is as it was); run the cell again to "
                                  f"write them"),
        "Predictor.load": ("Predictor.load(bundle)",
                           f"error: stopped by the user while reading the bundle {bundle}; run the cell again to read it"),
    }[call]
    result, out = run(shell, capsys, code)
    assert not result.success and type(result.error_in_exec) is KeyboardInterrupt, out
    assert sent == [("KeyboardInterrupt", [line])] and out.strip() == line, out
    assert {name: (tmp_path / f"x.{name}").read_bytes() for name in ("train", "test")} == before
    result, out = run(shell, capsys, "raise KeyboardInterrupt")  # a Stop in the user's own code: as IPython shows it
    assert not result.success and "Traceback" in out and len(sent) == 2
    notebook_errors.stop_showing_errors_as_lines()


def _objects(uri):
    """{key: ETag} of every object under the bucket of ``uri``."""
    from fasttext_lib import storage

    bucket, _ = storage.split_s3(uri)
    listing = storage.s3_client().list_objects_v2(Bucket=bucket).get("Contents", [])
    return {entry["Key"]: entry["ETag"] for entry in listing}


def _files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.is_dir() else {}


def _stop_on(monkeypatch, owner, name):
    """``owner.name`` raises KeyboardInterrupt (the Stop button) where it is called."""
    def stopped(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(owner, name, stopped)


def _sets():
    from fasttext_lib.storage import sets

    return sets


def _workspace_class():
    from fasttext_lib.workspace import Workspace

    return Workspace


# Where a Stop lands in 02's save cell (ws.save_run): the function it lands in, what the line says ("while" saving,
# "once" saved, or that S3 may still apply the bundle's config.json), and whether the new bundle and history are in
# place (None: the earlier history, and the bundle's new files on S3, which its config.json may still name).
SAVE_RUN_STOPS = {
    "a data file's upload": (_sets, "upload_file", "while", False),
    "config.json's PUT, unanswered": (_sets, "_put_manifest", "undecided", None),
    "the staging folder's removal once saved": (_sets, "_s3_collect", "once", True),
    "04's files' removal once saved": (_workspace_class, "remove_inference", "once", True),
}


@pytest.mark.parametrize("where", list(SAVE_RUN_STOPS))
def test_a_stop_during_02s_save_is_one_line_saying_what_was_saved(shell, capsys, monkeypatch, tmp_path, s3_bucket,
                                                                   where):
    """The Stop button during 02's save cell (ws.save_run: its bundle's upload, minutes at Yelp size) showed IPython's
    traceback through boto, where the other long writes give one line. It is one line now, saying whether the bundle
    and its history were saved; a Stop once the bundle's config.json was in place (its staging folder going) put the
    earlier history back beside the new bundle: the history now stays with it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from conftest import make_splits
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.predict import Predictor
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    owner, name, said, saves = SAVE_RUN_STOPS[where]
    splits = make_splits(100, 20, seed=0)
    old, new = (train(*splits, TrainConfig(epochs=n, ngrams=1, buckets=100, progress=False)) for n in (1, 2))
    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    ws.save_run(old, "sample", fig)
    folder, bundle = tmp_path / "out" / "sample", ws.model("sample")
    history, objects = _files(folder), _objects(bundle)
    _stop_on(monkeypatch, owner(), name)
    shell.user_ns.update(ws=ws, trained=new, fig=fig)
    notebook_errors.show_errors_as_lines()
    result, out = run(shell, capsys, "ws.save_run(trained, 'sample', fig)")
    monkeypatch.undo()
    plt.close(fig)
    shown = f"{tmp_path}/out/sample"
    line = {"while": f"error: stopped by the user while saving the bundle {bundle} and its history to {shown}; nothing "
                     f"was saved: the earlier bundle and history are as they were; run the cell again to save them",
            "once": f"error: stopped by the user once the bundle was saved to {bundle} with its history in {shown} "
                    f"(files there of the bundle it replaced, 04's or an earlier search's, may be left)",
            "undecided": f"error: interrupted (SIGINT); stopped and cleaned up, but {bundle} may still be replaced by "
                         f"this save (S3 had not answered the PUT of its config.json), beside the earlier history"}[said]
    assert not result.success and type(result.error_in_exec) is KeyboardInterrupt, out
    assert out.strip() == line, out
    epochs = len(Predictor.load(bundle).metrics["history"])
    if saves:  # the new bundle and its history, together
        assert epochs == 2 and len(_files(folder)["history.csv"].decode().splitlines()) == 1 + 2
    else:  # the earlier ones, as they were (and nothing of the save left on S3 but what S3 may still name)
        assert epochs == 1 and _files(folder) == history and (saves is None or _objects(bundle) == objects)
    _bug_keeps_its_traceback(shell, capsys, monkeypatch, _sets(), "upload_file", "ws.save_run(trained, 'sample', fig)")


def _bug_keeps_its_traceback(shell, capsys, monkeypatch, owner, name, code):
    """A bug's error in ``owner.name``, called by the cell ``code``: IPython's traceback through the library, not a
    line; then the kernel's display put back."""
    def bug(*args, **kwargs):
        raise RuntimeError("a bug")
    monkeypatch.setattr(owner, name, bug)
    result, out = run(shell, capsys, code)
    monkeypatch.undo()
    assert type(result.error_in_exec) is RuntimeError and out.count("\n") > 10 and name in out, out
    notebook_errors.stop_showing_errors_as_lines()


def _stopped_once_in_place(monkeypatch, owner, name):
    """A Stop just after ``owner.name`` (what notes a write in place) has returned, where the write's last steps run
    (its locks let go, its staging folder removed)."""
    real = getattr(owner, name)

    def then_stopped(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt
    monkeypatch.setattr(owner, name, then_stopped)


def _04_cell(tmp_path, s3_bucket):
    """A Workspace, and two bundles saved to its models/ (seeds 0 and 1), for 04's cells."""
    from conftest import make_splits
    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    splits = make_splits(100, 20, seed=0)
    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    return ws, [save_bundle(train(*splits, TrainConfig(epochs=1, ngrams=1, buckets=100, seed=seed, progress=False)),
                            f"{ws.models}/m{seed}") for seed in (0, 1)]


@pytest.mark.parametrize("stop", ["while", "once"])
@pytest.mark.parametrize("cell", ["save_word_vectors", "pack_model"])
def test_a_stop_during_04s_vectors_or_pack_is_one_line_saying_what_was_written(shell, capsys, monkeypatch, tmp_path,
                                                                              s3_bucket, cell, stop):
    """The Stop button during 04's export of the word vectors (ws.save_word_vectors) or its deploy cell's pack_model
    (the bundle fetched, tarred and uploaded: minutes at Yelp size) showed IPython's traceback. It is one line now,
    saying that the earlier file is as it was, or, once the new one is in place (its record written, its staging
    folder going), that it was written; nothing half-written is left either way, locally or on S3."""
    from fasttext_lib import inference_files, packaging, stops, vec_files
    from fasttext_lib.predict import Predictor

    ws, bundles = _04_cell(tmp_path, s3_bucket)
    folder, archive = tmp_path / "out" / "sample", f"{ws.base}/sagemaker/sample/model.tar.gz"
    predictors = [Predictor.load(b) for b in bundles]
    if cell == "save_word_vectors":
        ws.save_word_vectors(predictors[0], "sample")
        code = "ws.save_word_vectors(predictor, 'sample')"
        vec = f"{tmp_path}/out/sample/04_word_vectors.vec"
        lines = {"while": f"error: stopped by the user while writing the word vectors to {vec}; the earlier file "
                          f"there, if any, is as it was; run the cell again to write them",
                 "once": f"error: stopped by the user once the word vectors were written to {vec}"}
    else:
        packaging.pack_model(bundles[0], archive)
        code = "pack_model(bundle, archive)"
        lines = {"while": f"error: stopped by the user while packing the bundle {bundles[1]} into {archive}; nothing "
                          f"was written there (an earlier archive is as it was); run the cell again to pack it",
                 "once": f"error: stopped by the user once the bundle {bundles[1]} was packed into {archive}"}
    before = (_files(folder), _objects(archive))
    if stop == "while":
        _stop_on(monkeypatch, *((vec_files, "compressing") if cell == "save_word_vectors" else
                                (packaging, "_normalize_member")))
    elif cell == "save_word_vectors":  # (as the write's last steps run, once the file and its record are in place)
        written, real_end, real_note = [], stops.DefaultStopsHeld.end, inference_files.note_written

        def stopped_as_it_ends(self):
            real_end(self)
            if written:
                raise KeyboardInterrupt
        monkeypatch.setattr(stops.DefaultStopsHeld, "end", stopped_as_it_ends)
        monkeypatch.setattr(inference_files, "note_written", lambda: written.append(real_note()))
    else:  # (once the archive is uploaded, as its staging folder goes)
        _stopped_once_in_place(monkeypatch, packaging, "note_written")
    shell.user_ns.update(ws=ws, predictor=predictors[1], pack_model=packaging.pack_model, bundle=bundles[1],
                         archive=archive)
    notebook_errors.show_errors_as_lines()
    result, out = run(shell, capsys, code)
    monkeypatch.undo()
    assert not result.success and type(result.error_in_exec) is KeyboardInterrupt, out
    assert out.strip() == lines[stop], out
    after = (_files(folder), _objects(archive))
    if stop == "while":  # the earlier file and record, as they were; nothing else made
        assert after == before
    elif cell == "save_word_vectors":  # the new file, recorded as 04's
        assert after[0]["04_word_vectors.vec"] != before[0]["04_word_vectors.vec"]
        assert inference_files.RECORD.unchanged(folder) == ["04_word_vectors.vec"]
    else:  # the new archive, and nothing else
        assert set(after[1]) == set(before[1]) and after[1] != before[1]
    _bug_keeps_its_traceback(shell, capsys, monkeypatch, *(
        (vec_files, "compressing") if cell == "save_word_vectors" else (packaging, "_normalize_member")), code)


def test_a_stop_just_after_04s_vectors_were_noted_written_whose_files_are_put_back_says_so(
        shell, capsys, monkeypatch, tmp_path, s3_bucket):
    """A Stop in the few bytecodes between the vectors' note that they are written (stops.note_written, called as the
    set is in place) and the set's last step: the .vec and its record were put back, and the line said "once the
    word vectors were written". It is the cell's line of a Stop while writing them now: the earlier files are as
    they were."""
    from fasttext_lib import inference_files
    from fasttext_lib.predict import Predictor

    ws, bundles = _04_cell(tmp_path, s3_bucket)
    ws.save_word_vectors(Predictor.load(bundles[0]), "sample")
    folder = tmp_path / "out" / "sample"
    before = _files(folder)
    _stopped_once_in_place(monkeypatch, inference_files, "note_written")
    shell.user_ns.update(ws=ws, predictor=Predictor.load(bundles[1]))
    notebook_errors.show_errors_as_lines()
    result, out = run(shell, capsys, "ws.save_word_vectors(predictor, 'sample')")
    monkeypatch.undo()
    assert not result.success and type(result.error_in_exec) is KeyboardInterrupt, out
    assert _files(folder) == before
    assert out.strip() == (f"error: stopped by the user while writing the word vectors to {folder}/04_word_vectors.vec; "
                           f"the earlier file there, if any, is as it was; run the cell again to write them"), out


def test_a_stop_once_pack_models_upload_is_answered_is_the_cells_once_packed_line(shell, capsys, monkeypatch, tmp_path,
                                                                                 s3_bucket):
    """04's deploy cell's pack_model to S3, stopped once S3 had answered the archive's upload, before the write's last
    steps (its staging folder going): the line was atomic_write's "interrupted (SIGINT); stopped after
    s3://.../model.tar.gz was written", where the cell's other Stops say "stopped by the user ...". It is the cell's
    "once packed" line now (the archive is there)."""
    from fasttext_lib import packaging, storage

    ws, bundles = _04_cell(tmp_path, s3_bucket)
    archive = f"{ws.base}/sagemaker/sample/model.tar.gz"
    _stopped_once_in_place(monkeypatch, storage.atomic, "upload_file")
    shell.user_ns.update(pack_model=packaging.pack_model, bundle=bundles[1], archive=archive)
    notebook_errors.show_errors_as_lines()
    result, out = run(shell, capsys, "pack_model(bundle, archive)")
    monkeypatch.undo()
    assert not result.success and type(result.error_in_exec) is KeyboardInterrupt, out
    assert out.strip() == f"error: stopped by the user once the bundle {bundles[1]} was packed into {archive}", out
    assert storage.exists(archive)


@pytest.mark.parametrize("after", ["04_written.json", "the file"])
@pytest.mark.parametrize("file", ["04_word_vectors.vec", "04_predictions.csv"])
def test_a_stop_as_04s_vectors_or_their_record_are_put_in_place_leaves_them_agreeing(monkeypatch, tmp_path, s3_bucket,
                                                                                     file, after):
    """04's word vectors were recorded once the file was in place (export_vectors' on_written): a Stop just after
    ``04_written.json`` was updated, the ``.vec`` write not yet done, put the earlier ``.vec`` back under a record
    naming the new one, and 04 later kept it as a file changed since it wrote it. The file and its record are one set
    now: a Stop just after either is put in place leaves both as they were, said so. So are 04's predictions table
    (and its confusion matrix), whose record was written so too."""
    import os

    import pandas as pd

    from conftest import make_splits
    from fasttext_lib import inference_files
    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.predict import Predictor
    from fasttext_lib.stops import stop_message
    from fasttext_lib.train import train
    from fasttext_lib.workspace import Workspace

    splits = make_splits(100, 20, seed=0)
    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    predictors = [Predictor.load(save_bundle(train(*splits, TrainConfig(epochs=1, ngrams=1, buckets=100, seed=seed,
                                                                        progress=False)), f"{ws.models}/m{seed}"))
                  for seed in (0, 1)]
    def save(i):
        if file == inference_files.VECTORS_FILE:
            return ws.save_word_vectors(predictors[i], "sample")
        return ws.save_predictions(pd.DataFrame({"label": predictors[i].labels, "run": i}), "sample")
    save(0)
    folder, after = tmp_path / "out" / "sample", file if after == "the file" else after
    before, real, fired = _files(folder), os.replace, []

    def replace(src, dst, *args, **kwargs):  # (the rename that puts ``after`` in place, then a Stop)
        real(src, dst, *args, **kwargs)
        if str(dst).endswith(after) and not fired:
            fired.append(dst)
            raise KeyboardInterrupt
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt) as stopped:
        save(1)
    monkeypatch.undo()
    assert fired and _files(folder) == before
    assert inference_files.RECORD.unchanged(folder) == [file]
    if file == inference_files.VECTORS_FILE:  # (the table's write has no line of its own: a second's write)
        assert stop_message(stopped.value) == (
            f"stopped by the user while writing the word vectors to {tmp_path}/out/sample/04_word_vectors.vec; the "
            f"earlier file there, if any, is as it was; run the cell again to write them")


def test_a_stop_in_01s_look_at_the_data_just_written_is_its_one_line(shell, capsys, monkeypatch, tmp_path, s3_bucket):
    """01's write cell notes what the data at S3 is once written (ws.writing_data: HEAD requests, seconds on a slow
    S3). A Stop there showed IPython's traceback through boto, where a Stop anywhere else in the write is one line. It
    is that write's line for a Stop once the splits are written now: they are."""
    from conftest import make_splits
    from fasttext_lib import storage
    from fasttext_lib.workspace import Workspace
    from fasttext_lib.writers import splits_written_line, write_fasttext_splits

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    train, test = make_splits(100, 20, seed=0)
    _stop_on(monkeypatch, Workspace, "_data_now")  # (its HEAD requests: the Stop button pressed there)
    shell.user_ns.update(ws=ws, splits={"train": train, "test": test}, write_fasttext_splits=write_fasttext_splits)
    notebook_errors.show_errors_as_lines()
    result, out = run(shell, capsys, "with ws.writing_data('sample'):\n"
                                     "    written = write_fasttext_splits(splits, ws.data, 'sample')")
    monkeypatch.undo()
    assert not result.success and type(result.error_in_exec) is KeyboardInterrupt, out
    assert out.strip() == f"error: {splits_written_line(ws.data, 'sample')}", out
    assert all(storage.exists(f"{ws.data}/sample.{split}") for split in ("train", "test"))
    notebook_errors.stop_showing_errors_as_lines()


def test_a_stop_in_01s_histogram_save_is_one_line_and_leaves_the_earlier_files(shell, capsys, monkeypatch, tmp_path,
                                                                              s3_bucket):
    """01's histogram save looks at the data at S3 again (HEAD requests) under the data's lock before it writes: a
    Stop there, or while it waits for another run's write, showed IPython's traceback through boto. One line now,
    saying the earlier files are as they were, and they are."""
    import pandas as pd

    from conftest import make_splits
    from fasttext_lib.workspace import Workspace
    from fasttext_lib.writers import write_fasttext_splits

    ws = Workspace(s3_bucket[len("s3://"):], "p", str(tmp_path / "out"))
    train, test = make_splits(100, 20, seed=0)
    with ws.writing_data("sample"):
        write_fasttext_splits({"train": train, "test": test}, ws.data, "sample")
    ws.save_dataset_files("sample", {"lengths.csv": pd.DataFrame({"n": [1]})})
    earlier = (ws.dataset_folder("sample") / "lengths.csv").read_bytes()
    _stop_on(monkeypatch, Workspace, "_data_now")  # (its HEAD requests: the Stop button pressed there)
    shell.user_ns.update(ws=ws, pd=pd)
    notebook_errors.show_errors_as_lines()
    result, out = run(shell, capsys, "ws.save_dataset_files('sample', {'lengths.csv': pd.DataFrame({'n': [2]})})")
    monkeypatch.undo()
    notebook_errors.stop_showing_errors_as_lines()
    assert not result.success and type(result.error_in_exec) is KeyboardInterrupt, out
    assert out.strip() == (f"error: stopped by the user while saving {ws.show('sample/lengths.csv')}; the earlier files "
                           f"there, if any, are as they were; run the cell again to save them"), out
    assert (ws.dataset_folder("sample") / "lengths.csv").read_bytes() == earlier


def test_a_stop_while_s3_holds_pack_models_upload_says_the_archive_may_still_be_replaced(shell, capsys, tmp_path,
                                                                                         s3_bucket, s3_proxy):
    """04's deploy cell (pack_model) stopped while S3 held the archive's PUT (received whole, answered late: a slow
    S3; the proxy holds it): S3 may apply it after the Stop, so the line is not the one saying that nothing was
    written there (an earlier archive as it was), but storage.atomic_write's: the archive may still be replaced. Then
    S3 applies it, as the line said it might."""
    import os
    import signal
    import threading
    import time

    from conftest import make_splits, wait_for_abandoned_transfers
    from fasttext_lib import packaging
    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.config import TrainConfig
    from fasttext_lib.train import train

    splits = make_splits(100, 20, seed=0)
    bundles = [save_bundle(train(*splits, TrainConfig(epochs=1, ngrams=1, buckets=100, seed=seed, progress=False)),
                           f"{s3_bucket}/p/models/m{seed}") for seed in (0, 1)]
    archive = f"{s3_bucket}/p/sagemaker/sample/model.tar.gz"
    packaging.pack_model(bundles[0], archive)
    before = _objects(archive)
    s3_proxy.fail("PUT", r"/sample/model\.tar\.gz$", "stall")

    def stop_at_the_stall():  # (the Stop button: SIGINT, Python's KeyboardInterrupt in the kernel's main thread)
        assert s3_proxy.stalled.wait(120)
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=stop_at_the_stall, daemon=True).start()
    shell.user_ns.update(pack_model=packaging.pack_model, bundle=bundles[1], archive=archive)
    notebook_errors.show_errors_as_lines()
    result, out = run(shell, capsys, "pack_model(bundle, archive)")
    notebook_errors.stop_showing_errors_as_lines()
    assert not result.success and type(result.error_in_exec) is KeyboardInterrupt, out
    assert out.strip() == (f"error: interrupted (SIGINT); stopped and cleaned up, but {archive} may still be replaced "
                           f"by its upload, under way when this run stopped (S3 had not answered it)"), out
    assert _objects(archive) == before  # (not yet: S3 holds the PUT)
    s3_proxy.release()
    wait_for_abandoned_transfers()
    deadline = time.monotonic() + 30
    while _objects(archive) == before:  # S3 applies it: the archive replaced, as the line said it might be
        assert time.monotonic() < deadline, "S3 never applied the held PUT"
        time.sleep(0.05)
