"""What a stop's line says a stopped training keeps: a checkpoint whose checkpoint.json S3 had not answered for, a
stop Python dropped in a finalizer (raised again only as the command ends), and a cluster's other workers."""
import os
import signal

import pytest

from conftest import make_splits
from fasttext_lib import storage
from fasttext_lib.config import TrainConfig
from fasttext_lib.stops import RESUME_BY_RERUN, stop_message
from fasttext_lib.train import train


@pytest.fixture(scope="module")
def splits():
    return make_splits(2000, 200, seed=5)


def _config(epochs=3):
    return TrainConfig(epochs=epochs, batch_size=256, progress=False, seed=4)


@pytest.mark.parametrize("held_epoch", [1, 2])
def test_a_stop_while_s3_has_not_answered_a_checkpoint_json_put_names_no_epoch_it_cannot_know(
        splits, s3_bucket, monkeypatch, capsys, held_epoch):
    """A stop while the PUT of epoch N's checkpoint.json waited for S3's answer named the epoch before as the one kept
    (or, at epoch 1, none), while S3 may apply that PUT after the stop: the rerun then resumes from epoch N. Here the
    PUT is held at that point and S3 applies it after the stop, as a slow S3 does; the rerun resumes from epoch N,
    which the line now names beside the epoch before, saying why."""
    import fasttext_lib.storage.sets as sets_module

    real_put, held = sets_module._put_manifest, []

    def put(client, bucket, key, *rest):
        if key.endswith(f"epoch-{held_epoch:04d}/checkpoint.json") and not held:
            held.append((client, bucket, key, *rest))
            raise KeyboardInterrupt  # the stop comes while the PUT awaits S3's answer: S3 has not applied it yet
        return real_put(client, bucket, key, *rest)

    monkeypatch.setattr(sets_module, "_put_manifest", put)
    ckpt = f"{s3_bucket}/late"
    with pytest.raises(KeyboardInterrupt) as stopped:
        train(*splits, _config(), checkpoint_dir=ckpt)
    monkeypatch.undo()
    if held_epoch == 1:
        assert stop_message(stopped.value) == (
            f"interrupted (SIGINT); stopped and cleaned up, keeping the checkpoint of epoch 1 in {ckpt}/epoch-0001 if "
            f"S3 applies its checkpoint.json (being written when the stop came){RESUME_BY_RERUN}")
    else:
        assert stop_message(stopped.value) == (
            f"interrupted (SIGINT); stopped and cleaned up, keeping the checkpoint of epoch 1 or 2 in {ckpt} (epoch 2's "
            f"checkpoint.json was being written when the stop came: S3 may still apply it): run the same command again "
            f"to resume from the newer")
        assert stopped.value.__notes__ == [
            f"the checkpoint of epoch 1 or 2 is kept in {ckpt} (epoch 2's checkpoint.json was being written when the "
            f"stop came): train again with the same checkpoint_dir to resume from the newer"]
    sets_module._put_manifest(*held[0])  # S3 applies the PUT it held: the epoch's checkpoint is complete
    capsys.readouterr()
    train(*splits, _config(), checkpoint_dir=ckpt)
    assert f"resuming from the checkpoint in {ckpt}: epoch {held_epoch} of 3 done" in capsys.readouterr().err
    assert storage.exists(f"{ckpt}/epoch-0003/checkpoint.json")


class _StopInAFinalizer:
    """What a stop landing in a ``__del__`` (MXNet frees its arrays there) does: its handler runs there, and Python
    drops what it raises (the stop blocks take it from sys.unraisablehook and raise it again at their end)."""

    def __init__(self, stop):
        self.stop = stop

    def __del__(self):
        self.stop()


def _ctrl_c():
    signal.getsignal(signal.SIGINT)(signal.SIGINT, None)  # what Ctrl-C arriving here runs


def _notebook_stop():
    raise KeyboardInterrupt  # a kernel's Stop button


def test_a_notebooks_stop_dropped_in_a_finalizer_after_the_last_step_names_the_checkpoint_kept(splits, tmp_path):
    """A Stop that lands in a finalizer after train's last check for one is raised again as train's kept_stops block
    ends, past the block that tells the checkpoint: the line said "stopped by the user at epoch 2, step ...; nothing
    was saved; run the cell again to start over", with every epoch's checkpoint kept. It names the checkpoint now."""
    from fasttext_lib.notebook_errors import RESUME_BY_RUNNING_THE_CELL

    ckpt = tmp_path / "ckpt"

    def stop_after_the_last_epoch(row):
        if row["epoch"] == 2:
            _StopInAFinalizer(_notebook_stop)  # (collected at once: its raise is dropped)

    with pytest.raises(KeyboardInterrupt) as stopped:
        train(*splits, _config(epochs=2), checkpoint_dir=str(ckpt), on_epoch_end=stop_after_the_last_epoch)
    where = ckpt / "epoch-0002"
    assert stop_message(stopped.value, RESUME_BY_RUNNING_THE_CELL) == (
        f"interrupted (SIGINT); stopped and cleaned up, keeping the checkpoint of epoch 2 in {where}: run the cell "
        f"again to resume from it")
    assert (where / "checkpoint.json").is_file()


def test_a_ctrl_c_dropped_in_a_finalizer_as_the_command_ends_says_the_bundle_was_written(tmp_path, small_train_file,
                                                                                         monkeypatch):
    """A Ctrl-C whose raise a finalizer dropped as `train` said its last line was raised again only as cli.main's
    stop block ended, and said "stopped and cleaned up": the bundle was written, and the checkpoint kept. The line
    now says where the bundle is, as a stop raised there at once does."""
    from conftest import cli_in_process
    import fasttext_lib.devices as devices_module

    real_describe = devices_module.describe_ctx

    def describe(ctx):
        _StopInAFinalizer(_ctrl_c)
        return real_describe(ctx)

    monkeypatch.setattr(devices_module, "describe_ctx", describe)
    out = tmp_path / "model"
    stopped = cli_in_process("train", "--train", small_train_file, "--output", out, "--epochs", "2", "--batch-size", "64", "--emsize", "8", "--no-progress", "--ctx", "cpu",
                             "--checkpoint-dir", tmp_path / "ck")
    monkeypatch.undo()
    assert (stopped.returncode, stopped.stderr.splitlines()[-1]) == (
        130, f"error: interrupted (SIGINT); stopped after the bundle was written to {out}"), stopped.stderr
    assert os.path.isfile(out / "config.json")


def test_a_checkpoint_not_yet_compared_keeps_its_condition_beside_one_being_written():
    """A stop while epoch 2's checkpoint.json awaited S3's answer, with the kept checkpoint of epoch 1 found before
    the data was read (not yet compared with it: it may be another run's, which a rerun refuses): the line and the
    Python API's note named "epoch 1 or 2" and said to resume, dropping "if it was written from the same data", which
    the line of epoch 1 alone says. Where S3 does not apply epoch 2's, the rerun resumes from epoch 1 only on that
    condition: both now say so."""
    from fasttext_lib.stops import note_checkpoint_being_written, note_checkpoint_kept
    from fasttext_lib.train import _told_to_the_caller_on_a_stop

    ckpt = "s3://bucket/ck"
    with pytest.raises(KeyboardInterrupt) as stopped, _told_to_the_caller_on_a_stop():
        stop = KeyboardInterrupt()
        note_checkpoint_being_written(stop, f"{ckpt}/epoch-0002", 2, ckpt, "checkpoint.json")
        note_checkpoint_kept(stop, f"{ckpt}/epoch-0001", 1, ckpt, compared=False)
        raise stop
    assert stop_message(stopped.value) == (
        f"interrupted (SIGINT); stopped and cleaned up, keeping the checkpoint of epoch 1 (not yet compared with the "
        f"data) or 2 in {ckpt} (epoch 2's checkpoint.json was being written when the stop came: S3 may still apply "
        f"it): run the same command again to resume from the newer (from epoch 1 only if it was written from the "
        f"same data)")
    assert stopped.value.__notes__ == [
        f"the checkpoint of epoch 1 (not yet compared with the data) or 2 is kept in {ckpt} (epoch 2's checkpoint.json "
        f"was being written when the stop came): train again with the same checkpoint_dir to resume from the newer "
        f"(from epoch 1 only if it was written from the same data)"]


def test_a_cluster_workers_stop_tells_the_python_api_caller_that_the_first_host_keeps_the_checkpoints(splits,
                                                                                                       tmp_path):
    """A dist_* cluster's worker other than the first, stopped in a script: the CLI and the training job say that the
    first host (worker 0) keeps the checkpoints, and where; the Python API's KeyboardInterrupt carried no note, as if
    nothing were kept. Its note now says so, and how to resume."""
    from fasttext_lib.checkpoints import KeptCheckpoint

    class KeptByAnotherWorker(KeptCheckpoint):
        def joined_as(self, rank):  # (as a worker of rank 1 joins: the cluster itself is not needed for the note)
            super().joined_as(1)

    ckpt = str(tmp_path / "ck")

    def stop_after_epoch_1(row):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as stopped:
        train(*splits, _config(epochs=2), checkpoint_dir=ckpt, on_epoch_end=stop_after_epoch_1,
              kept=KeptByAnotherWorker(ckpt))
    assert stop_message(stopped.value) == (
        f"interrupted (SIGINT); stopped and cleaned up; the checkpoints are kept by the first host (worker 0) in "
        f"{ckpt}: run the same command again to resume from the newest")
    assert stopped.value.__notes__ == [
        f"the checkpoints are kept by the first host (worker 0) in {ckpt}: train again with the same checkpoint_dir "
        f"to resume from the newest"]


def test_a_notebooks_stop_dropped_in_a_finalizer_during_a_write_of_splits_says_they_were_written(tmp_path, monkeypatch):
    """A Stop that lands in a finalizer while write_fasttext_splits writes is raised again only as its kept_stops block
    (stops.telling_stops) ends, once the splits have replaced the older ones: its line said "none was replaced
    (written together: an older one is as it was)", of files that were replaced. It says they were written now."""
    from fasttext_lib import writers
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.stops import stopped_line

    texts = LabeledTexts(["1", "2"] * 5, ["good food here", "bad food there"] * 5)
    write_fasttext_splits = writers.write_fasttext_splits
    write_fasttext_splits({"train": texts, "test": texts}, str(tmp_path), "x")
    newer = LabeledTexts(["1", "2"], ["newer good", "newer bad"])
    real_line, lines = writers.fasttext_line, []

    def line_with_a_stop_in_a_finalizer(*args, **kwargs):
        lines.append(1)
        if len(lines) == 1:
            _StopInAFinalizer(_notebook_stop)  # (collected at once: its raise is dropped, kept for the block's end)
        return real_line(*args, **kwargs)

    monkeypatch.setattr(writers, "fasttext_line", line_with_a_stop_in_a_finalizer)
    with pytest.raises(KeyboardInterrupt) as stopped:
        write_fasttext_splits({"train": newer, "test": newer}, str(tmp_path), "x")
    assert "newer good" in (tmp_path / "x.train").read_text() and "newer good" in (tmp_path / "x.test").read_text()
    assert stopped_line(stopped.value) == (
        f"stopped by the user once x's splits were written to {tmp_path} (all of them, whole: the older ones are "
        f"replaced); run the cell again to go on")
