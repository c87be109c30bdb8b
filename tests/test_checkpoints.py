"""Per-epoch checkpoints: an interrupted run resumes and ends exactly where an uninterrupted one does."""
import collections
import json
import os
import re
import signal
import subprocess
import sys
import time

import boto3
import numpy as np
import pytest

from conftest import (CLI_AFTER_IT, ROOT, UNRESUMABLE_BEFORE_READING, edit_checkpoint, held_once_there, make_splits,
                      params_of)
from fasttext_lib import storage
from fasttext_lib.data import LabeledTexts
from fasttext_lib.errors import FastTextError
from fasttext_lib.synthetic import generate_reviews
from fasttext_lib.config import TrainConfig
from fasttext_lib.train import train


class Crash(Exception):
    pass


@pytest.fixture(scope="module")
def splits():
    """800 training documents (of the 2,000 the module's runs trained on: none of its checks is about their number, and
    a checkpoint's run trains them again and again) and 200 validation documents."""
    train_split, val_split = make_splits(2000, 200, seed=5)
    return LabeledTexts(train_split.labels[:800], train_split.texts[:800]), val_split


@pytest.fixture(scope="module")
def few(splits):
    """The first 600 training documents of ``splits`` (five batches of 128 an epoch) and its validation split: for
    the runs that are compared with an uninterrupted one bit for bit, where the number of documents is no part of
    what is checked (a resumed run's optimizer state, its dropout draws, its devices), at under a third of the
    training."""
    train_split, val_split = splits
    return LabeledTexts(train_split.labels[:600], train_split.texts[:600]), val_split


@pytest.fixture(scope="module")
def uninterrupted(splits):
    """``uninterrupted(config)``: the embedding table of ``train(*splits, config)``, never stopped, for a resumed run to
    end with bit for bit. A seeded CPU run is deterministic, so it is trained once per config for the module (read
    only), not again by every test that resumes with that config."""
    tables = {}

    def table(config):
        if repr(config) not in tables:
            tables[repr(config)] = train(*splits, config).model.embedding_table()
            tables[repr(config)].flags.writeable = False
        return tables[repr(config)]
    return table


def _crash_after(epoch):
    def hook(row):
        if row["epoch"] == epoch:
            raise Crash()
    return hook


def _first_epochs_marker(splits, tmp_path, **kwargs):
    """``(config, ckpt, marker, meta)`` of a 2-epoch run that crashed after epoch 1: its checkpoint.json and what
    it holds, for a test to rewrite as an older version or another run would have written it."""
    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    ckpt = tmp_path / "ckpt"
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(1), **kwargs)
    marker = ckpt / "epoch-0001" / "checkpoint.json"
    return config, ckpt, marker, json.loads(marker.read_text())


def _without_timing(history):
    return [{k: v for k, v in row.items() if k not in ("seconds", "samples_per_s")} for row in history]


@pytest.mark.parametrize("optimizer, ctx, dropout", [("adam", "cpu", 0.2), ("sgd", "cpu", 0.0), ("adam", "cpu:0,1", 0.0)])
def test_resumed_run_ends_with_the_same_parameters(few, tmp_path, optimizer, ctx, dropout):
    splits = few
    config = TrainConfig(epochs=3, batch_size=128, optimizer=optimizer, ctx=ctx, dropout=dropout, ngrams=2,
                         buckets=20000, progress=False, seed=9)
    whole = train(*splits, config)

    ckpt = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(2))
    assert sorted(os.listdir(ckpt)) == ["epoch-0002"]  # the epoch-1 checkpoint was replaced
    seen = []
    resumed = train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=seen.append)
    assert [row["epoch"] for row in seen] == [3]  # only the missing epoch ran
    for name, value in params_of(whole).items():
        np.testing.assert_array_equal(params_of(resumed)[name], value, err_msg=name)
    assert _without_timing(resumed.history) == _without_timing(whole.history)

    # a finished run resumed again trains nothing and returns the same model
    again = train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=seen.append)
    assert len(seen) == 1 and len(again.history) == 3
    np.testing.assert_array_equal(again.model.embedding_table(), whole.model.embedding_table())


def test_a_resume_reads_the_checkpoints_table_into_the_runs_own_without_a_second_one(few, tmp_path, monkeypatch):
    """Resuming loaded model.params with Gluon's load_parameters into the model train() had built: the whole file
    read into arrays of their own (nd.load), then copied into the parameters. For a moment the run held two
    tables (a 2M-row bigram resume peaked at 1.78 GB RSS instead of 1.02 GB), one more than its memory check
    counted. Now the file is read into the run's own table, and the run ends as an uninterrupted one, bit for bit."""
    import mxnet as mx

    splits = few
    config = TrainConfig(epochs=2, batch_size=128, optimizer="sgd", ngrams=2, buckets=20000, progress=False, seed=9)
    whole = train(*splits, config)
    ckpt = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
    loaded, load = [], mx.nd.load

    def load_noted(fname):
        arrays = load(fname)
        loaded.extend(a.shape for a in (arrays.values() if isinstance(arrays, dict) else arrays))
        return arrays

    monkeypatch.setattr(mx.nd, "load", load_noted)
    resumed = train(*splits, config, checkpoint_dir=ckpt)
    table = resumed.model.embedding.weight.shape
    assert table[0] > 20000 and table not in loaded, loaded
    for name, value in params_of(whole).items():
        np.testing.assert_array_equal(params_of(resumed)[name], value, err_msg=name)
    assert _without_timing(resumed.history) == _without_timing(whole.history)


def _numpy_peak(run):
    """``(run()'s result, the most memory numpy and Python held at once during it, in bytes)`` (tracemalloc: numpy's
    arrays are counted, MXNet's are not)."""
    import tracemalloc

    tracemalloc.start()
    try:
        return run(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_adams_moments_are_written_and_read_back_without_a_copy_of_them(few, tmp_path):
    """A save copied adam's two moment tables out whole (``asnumpy``) to write them, and a resume read them whole
    (``np.load``), then copied them again into MXNet arrays and kept the numpy ones for the rest of the run: a 1M x 100
    run with checkpoints peaked at ~5 tables' worth (2.26 GB RSS, 1.49 GB without checkpoints), the memory check
    counted 3. Now each moment goes between its own memory and the file a block of rows at a time: a run with
    checkpoints, and a resumed one, hold no more numpy memory than a run without, give or take a block. (A resumed run
    ending as an uninterrupted one, bit for bit: test_resumed_run_ends_with_the_same_parameters.)"""
    # (600 documents in two batches an epoch: each step updates adam's whole 80 MB moments, and every run here is
    # traced; the memory compared is the moments', the same for any number of documents or batches)
    splits = few
    config = TrainConfig(epochs=2, batch_size=300, optimizer="adam", ngrams=2, buckets=200_000, progress=False, seed=4)
    plain, without = _numpy_peak(lambda: train(*splits, config))
    table = plain.model.num_rows * config.emsize * 4  # (80 MB)
    ckpt = str(tmp_path / "ckpt")
    _, saving = _numpy_peak(lambda: train(*splits, config, checkpoint_dir=ckpt))
    assert saving - without < table // 4, (saving, without, table)
    stopped = str(tmp_path / "stopped")
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=stopped, on_epoch_end=_crash_after(1))
    resumed, resuming = _numpy_peak(lambda: train(*splits, config, checkpoint_dir=stopped))
    assert len(resumed.history) == 2 and resuming - without < table // 4, (resuming, without, table)


def test_adams_moments_are_written_as_np_savez_writes_them(splits, tmp_path):
    """The moments written a block at a time make the file np.savez makes of them: checkpoints of either version
    resume with either."""
    import io

    ckpt = tmp_path / "ckpt"
    train(*splits, TrainConfig(epochs=1, batch_size=256, optimizer="adam", progress=False), checkpoint_dir=str(ckpt))
    written = next((ckpt / "epoch-0001").glob("optimizer-*")).read_bytes()
    with np.load(io.BytesIO(written), allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    assert len(arrays) == 4 and _npz(**arrays) == written


@pytest.mark.parametrize("where", ["cpu", "another device", "row_sparse"])
def test_a_state_is_written_a_block_of_rows_at_a_time_as_np_savez_writes_it(tmp_path, monkeypatch, where):
    """state_file.StateRows, each route (a CPU state's own memory; a GPU state's copied a block at a time, simulated
    without a GPU; a kvstore's row_sparse state, its stored rows) over several blocks and a last short one: the
    file np.savez makes of the state's values, read back by read_npz into an MXNet array."""
    import io

    import mxnet as mx

    from fasttext_lib import state_file
    from fasttext_lib.compact import write_npz

    values = np.random.default_rng(3).standard_normal((23, 5)).astype(np.float32)
    rows = np.array([1, 4, 5, 9, 20, 22], dtype=np.int64)
    state = (mx.nd.sparse.row_sparse_array((values[rows], rows), shape=values.shape) if where == "row_sparse"
             else mx.nd.array(values))
    expected = values[rows] if where == "row_sparse" else values
    monkeypatch.setattr(state_file, "BLOCK_VALUES", 20)  # 4 rows a block
    if where == "another device":
        monkeypatch.setattr(state_file, "cpu_view", lambda array: None)
    write_npz(tmp_path / "state.npz", {"a0": state_file.StateRows(state)})
    written = (tmp_path / "state.npz").read_bytes()
    reference = io.BytesIO()
    np.savez(reference, a0=expected)
    assert written == reference.getvalue()
    monkeypatch.undo()
    monkeypatch.setattr(state_file, "BLOCK_VALUES", 20)  # (read a few values at a time too)
    read = state_file.read_npz(tmp_path / "state.npz")["a0"]
    assert isinstance(read, mx.nd.NDArray) and read.context == mx.cpu()
    np.testing.assert_array_equal(read.asnumpy(), expected)


def test_a_checkpoint_that_cannot_be_read_for_want_of_memory_is_named(splits, tmp_path, monkeypatch):
    """A resume copies the checkpoint's files 1 MB at a time (to verify them), and reads adam's moments into arrays
    it allocates then: either failing for want of memory was a bare MemoryError or MXNet's 'Failed to allocate'
    traceback. Now one line that names the checkpoint; it stays, and resumes where there is the memory."""
    import shutil

    import mxnet as mx

    config = TrainConfig(epochs=2, batch_size=256, optimizer="adam", progress=False, seed=4)
    ckpt = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))

    def no_buffer(*args, **kwargs):
        raise MemoryError()

    empty, tables = mx.nd.empty, []

    def no_room_past_the_table(shape, *args, **kwargs):  # (the run's own table is allocated first, and fits)
        tables.append(shape)
        if len(tables) > 1 and shape == tables[0]:
            raise mx.base.MXNetError("Traceback (most recent call last):\n  File \"../src/storage/./cpu_device_storage"
                                     ".h\", line 72\nMXNetError: Failed to allocate CPU Memory")
        return empty(shape, *args, **kwargs)

    for seam, name, failing, cause in ((shutil, "copyfileobj", no_buffer, "an allocation failed"),
                                       (mx.nd, "empty", no_room_past_the_table, "Failed to allocate CPU Memory")):
        with monkeypatch.context() as patched:
            patched.setattr(seam, name, failing)
            with pytest.raises(FastTextError) as caught:
                train(*splits, config, checkpoint_dir=ckpt)
        said = str(caught.value)
        assert said.startswith("out of memory to ") and f"{ckpt}/epoch-0001 ({cause}); use a machine with more " \
            f"memory" in said and "\n" not in said, said
    assert len(train(*splits, config, checkpoint_dir=ckpt).history) == 2


@pytest.mark.parametrize("first, then", [("cpu", "cpu:0,1"), ("cpu:0,1", "cpu"), ("cpu:1", "cpu")])
def test_adam_resumed_on_other_devices_ends_as_an_uninterrupted_run(few, tmp_path, first, then):
    """ctx is where a run trains, not what it learns: a checkpoint resumes on other devices (a GPU notebook's on a
    CPU, one device's on several). Its adam state did not: a kvstore keeps the embedding's moments row_sparse, one
    device dense, and a state restored in the other's type went to MXNet's dense fallback (every row's moments
    decayed, rows without a gradient moved); and each key's update count was kept under the saving run's device
    number (cpu:1 is device 1), so on another adam's bias correction started over. Both ended ~0.03-0.07 away from
    the uninterrupted run, which ends the same on either device list (~1e-7)."""
    splits = few
    config = TrainConfig(epochs=3, batch_size=128, optimizer="adam", ctx=first, ngrams=2, buckets=20000,
                         progress=False, seed=9)
    ckpt = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
    elsewhere = TrainConfig(**dict(config.to_dict(), ctx=then))
    resumed = params_of(train(*splits, elsewhere, checkpoint_dir=ckpt))
    for name, value in params_of(train(*splits, elsewhere)).items():
        np.testing.assert_allclose(resumed[name], value, rtol=0, atol=1e-5, err_msg=name)


def test_resume_with_settings_from_the_data(splits, tmp_path):
    """lr and batch size left to the data resolve to the same values again, so the run's own
    checkpoint is accepted and it ends as an uninterrupted run; other data resolves to other
    settings, and that checkpoint is refused."""
    config = TrainConfig(epochs=2, ngrams=2, buckets=20000, progress=False, seed=3)
    whole = train(*splits, config)
    ckpt = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
    resumed = train(*splits, config, checkpoint_dir=ckpt)
    assert resumed.config == whole.config and whole.config.lr is not None
    for name, value in params_of(whole).items():
        np.testing.assert_array_equal(params_of(resumed)[name], value, err_msg=name)
    saved = json.load(open(os.path.join(ckpt, "epoch-0002", "checkpoint.json")))["config"]
    assert (saved["lr"], saved["batch_size"]) == (whole.config.lr, whole.config.batch_size)
    half = LabeledTexts(splits[0].labels[:400], splits[0].texts[:400])  # other data: other rows, other settings
    with pytest.raises(FastTextError, match="different run"):  # (its validation data: not refused for dropping it)
        train(half, splits[1], config, checkpoint_dir=ckpt)


def test_a_finished_run_resumed_removes_the_checkpoint_a_kill_left_before_its_last(splits, tmp_path):
    """kill -9 between the last epoch's publish and the removal of the epoch before left both; the rerun resumed the
    finished run, trained nothing and saved nothing, so the older checkpoint (the model's size, 3x with adam) stayed
    for good. Now the rerun removes it; another run's checkpoint in the directory stays."""
    import shutil

    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    ckpt = tmp_path / "ckpt"
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(1))
    shutil.copytree(ckpt / "epoch-0001", tmp_path / "epoch-0001")
    train(*splits, config, checkpoint_dir=str(ckpt))
    shutil.copytree(tmp_path / "epoch-0001", ckpt / "epoch-0001")  # what the kill left: epoch 1 not yet removed
    assert sorted(os.listdir(ckpt)) == ["epoch-0001", "epoch-0002"]
    seen = []
    again = train(*splits, config, checkpoint_dir=str(ckpt), on_epoch_end=seen.append)
    assert seen == [] and [row["epoch"] for row in again.history] == [1, 2]
    assert sorted(os.listdir(ckpt)) == ["epoch-0002"]

    other = tmp_path / "other"  # a checkpoint of other settings at epoch 1 beside this run's finished one
    with pytest.raises(Crash):
        train(*splits, TrainConfig(**dict(config.to_dict(), emsize=16)), checkpoint_dir=str(other),
              on_epoch_end=_crash_after(1))
    shutil.copytree(other / "epoch-0001", ckpt / "epoch-0001")
    train(*splits, config, checkpoint_dir=str(ckpt))
    assert sorted(os.listdir(ckpt)) == ["epoch-0001", "epoch-0002"]


def test_checkpoint_of_another_run_is_refused(splits, tmp_path):
    ckpt = str(tmp_path / "ckpt")
    train(*splits, TrainConfig(epochs=1, batch_size=256, progress=False), checkpoint_dir=ckpt)
    with pytest.raises(FastTextError, match="different run"):
        train(*splits, TrainConfig(epochs=1, batch_size=256, emsize=20, progress=False), checkpoint_dir=ckpt)


@pytest.mark.parametrize("interrupted", [False, True])
def test_a_checkpoint_refused_for_other_settings_names_them(splits, tmp_path, interrupted):
    """``--epochs 2`` then ``--epochs 3`` on the same --checkpoint-dir (to train one epoch more) was refused as "written
    by a different run (other data or settings)", naming nothing: the user was left to guess. It is still refused (the
    lr schedule spans the epochs a run started with), and the refusal says what differs and how to resume."""
    ckpt = str(tmp_path / "ckpt")
    config = TrainConfig(epochs=2, batch_size=256, lr=0.5, progress=False, seed=4)
    if interrupted:
        with pytest.raises(Crash):
            train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
    else:
        train(*splits, config, checkpoint_dir=ckpt)
    with pytest.raises(FastTextError) as refused:
        train(*splits, TrainConfig(epochs=3, batch_size=256, lr=0.5, progress=False, seed=4), checkpoint_dir=ckpt)
    message = str(refused.value)
    assert "different run (epochs 2 -> 3)" in message, message
    assert "resumes only with the epochs it started with" in message and "rerun with TrainConfig(epochs=2) to resume it" in message, message
    with pytest.raises(FastTextError) as refused:
        train(*splits, TrainConfig(epochs=2, batch_size=256, lr=0.5, emsize=20, progress=False, seed=4),
              checkpoint_dir=ckpt)
    message = str(refused.value)
    assert "different run (emsize 100 -> 20)" in message and "rerun with" not in message, message
    train(*splits, config, checkpoint_dir=ckpt)  # its own settings still resume it


def _synced_dir_of_two_runs(splits, tmp_path, older, newer):
    """SageMaker's synced checkpoint directory holding two complete epochs (a kill between a save and its removal of
    the epoch before, or a prefix two jobs shared): epoch 1 of a run of ``older``, epoch 2 of one of ``newer``."""
    import shutil

    synced = tmp_path / "synced"
    synced.mkdir()
    for run, (config, epoch) in enumerate(((older, 1), (newer, 2))):
        with pytest.raises(Crash):
            train(*splits, config, checkpoint_dir=str(tmp_path / f"run{run}"), on_epoch_end=_crash_after(epoch))
        shutil.copytree(tmp_path / f"run{run}" / f"epoch-{epoch:04d}", synced / f"epoch-{epoch:04d}")
    return synced


@pytest.mark.parametrize("newest", ["complete", "params missing", "params cut short"])
def test_the_synced_directory_is_refused_early_for_the_settings_of_the_epoch_its_resume_reads(splits, tmp_path,
                                                                                            newest):
    """The early refusal of a checkpoint of other settings (before the data is read: minutes at Yelp size) was skipped
    wherever SageMaker's synced directory held more than one epoch, as the newest might be set aside there (a sync
    cut short left it without its files) and an older one resumed: the job read all its data first. It now compares
    the epoch the resume reads: the newest whose files are all there at their size, and refuses nothing the resume
    would take."""
    from fasttext_lib.checkpoints import refuse_an_older_format, refuse_other_settings

    older = TrainConfig(epochs=3, batch_size=256, progress=False, seed=4)
    newer = TrainConfig(epochs=3, batch_size=256, emsize=16, progress=False, seed=4)
    synced = _synced_dir_of_two_runs(splits, tmp_path, older, newer)
    if newest != "complete":
        params = next((synced / "epoch-0002").glob("model-*.params"))
        if newest == "params missing":
            params.unlink()
        else:
            params.write_bytes(params.read_bytes()[:params.stat().st_size // 2])
    resumed, other = (newer, older) if newest == "complete" else (older, newer)
    search = refuse_an_older_format(str(synced), 3, synced=True)
    assert search.epochs == (1, 2)
    refuse_other_settings(str(synced), search, resumed)  # the settings of the epoch the resume reads: no refusal
    read = synced / ("epoch-0002" if newest == "complete" else "epoch-0001")
    with pytest.raises(FastTextError, match=f"^checkpoint {re.escape(str(read))} was written by a different run "
                                            f"\\(emsize {resumed.emsize} -> {other.emsize}\\); use another "):
        refuse_other_settings(str(synced), search, other)


def _edited(data, how):
    """``data`` with two words swapped between its first two documents (``swapped``), or a word of the first replaced
    by another of the vocabulary (``replaced``): the vocabulary, labels and token counts stay as they were."""
    from fasttext_lib.features import Featurizer

    first, second = (data.texts[d].split(" ") for d in (0, 1))
    plain = [[i for i, w in enumerate(words) if w.isalpha() and w.islower()] for words in (first, second)]
    vocab = Featurizer.fit(data.texts).vocab.idx_to_token
    # Words whose count no other word has, nor one more or less, first: one replaced (a count down, another's up)
    # then keeps the vocabulary's order, which tried in document order took ~400 fits (14 s).
    counts = collections.Counter(w for text in data.texts for w in text.split(" "))
    shared = collections.Counter(counts.values())
    alone = {w for w, c in counts.items() if shared[c] == 1 and not shared[c - 1] and not shared[c + 1]}
    pairs = sorted(((i, j) for i in plain[0] for j in plain[1]),
                   key=lambda ij: (first[ij[0]] not in alone) + (second[ij[1]] not in alone))
    for i, j in pairs:
        a, b = list(first), list(second)
        if a[i] == b[j]:
            continue
        if how == "swapped":
            a[i], b[j] = b[j], a[i]
        else:
            a[i] = b[j]
        texts = [" ".join(a), " ".join(b)] + list(data.texts[2:])
        if Featurizer.fit(texts).vocab.idx_to_token == vocab:  # (a count crossing another's reorders it)
            return LabeledTexts(list(data.labels), texts)
    raise AssertionError("no edit keeps the vocabulary")


@pytest.mark.parametrize("source", ["in memory", "read from a file"])
@pytest.mark.parametrize("how", ["swapped", "replaced"])
def test_a_checkpoint_of_data_with_other_words_in_its_documents_is_refused(splits, tmp_path, how, source):
    """The data fingerprint covered the vocabulary, the labels and every document's token count, not the tokens:
    two words swapped between documents, or one replaced by another word of the vocabulary, left it unchanged, and
    the edited data resumed the old data's checkpoint silently (ending with neither data's parameters). Now the
    token ids are fingerprinted too, whether they sit in memory or in read_counted's file (CodesFile)."""
    from fasttext_lib.data import read_counted
    from fasttext_lib.writers import write_csv
    from fasttext_lib.features import count_tokens

    train_data, val_data = splits
    edited = _edited(train_data, how)
    before, after = count_tokens(train_data.texts), count_tokens(edited.texts)
    np.testing.assert_array_equal(before.lengths, after.lengths)  # what the fingerprint compared stays alike
    if source == "read from a file":
        paths = [tmp_path / "train.csv", tmp_path / "edited.csv"]
        for data, path in zip((train_data, edited), paths):
            write_csv(data, str(path))
        train_data, edited = (read_counted([str(path)]) for path in paths)
    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    ckpt = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(train_data, val_data, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
    with pytest.raises(FastTextError, match=r"different run \(the training data"):
        train(edited, val_data, config, checkpoint_dir=ckpt)
    if source == "read from a file":
        train_data = read_counted([str(paths[0])])
    seen = []
    train(train_data, val_data, config, checkpoint_dir=ckpt, on_epoch_end=seen.append)  # its own data resumes it
    assert [row["epoch"] for row in seen] == [2]


def test_the_data_fingerprint_is_the_same_however_the_data_was_read(splits, tmp_path, monkeypatch):
    """The token ids it covers are numbered in first-seen order: the same for data in memory and data read_counted
    kept in a file, counted natively or not, so a checkpoint resumes whichever way the data is read again."""
    from fasttext_lib.checkpoints import DATA_FINGERPRINT, data_fingerprint
    from fasttext_lib.data import read_counted
    from fasttext_lib.writers import write_csv
    from fasttext_lib.train import featurize

    train_data = splits[0]
    write_csv(train_data, str(tmp_path / "train.csv"))
    config = TrainConfig(ngrams=2, buckets=20000)
    y = np.arange(len(train_data)) % 2
    found = set()
    for native in ("1", "0"):
        monkeypatch.setenv("FASTTEXT_LIB_NATIVE", native)
        for data in (train_data, read_counted([str(tmp_path / "train.csv")])):
            featurizer, bags, _ = featurize(data, None, config)
            found.add(data_fingerprint(featurizer, bags, y))
    assert len(found) == 1 and found.pop().startswith(DATA_FINGERPRINT)


def test_a_checkpoint_with_an_older_versions_data_fingerprint_is_refused_in_one_line(splits, tmp_path):
    """Checkpoints written before the fingerprint covered the tokens hold one that cannot tell the data they were
    written with: refused in one line that says so and what to do, not as "other data" (nothing may have changed)."""
    config, ckpt, marker, meta = _first_epochs_marker(splits, tmp_path)
    meta["data"] = meta["data"].rsplit(":", 1)[1]  # what an older version wrote: the bare hex digest
    marker.write_text(json.dumps(meta))
    with pytest.raises(FastTextError) as refused:
        train(*splits, config, checkpoint_dir=str(ckpt))
    message = str(refused.value)
    assert "written by an older version of this library" in message and "\n" not in message, message
    assert "use another checkpoint_dir or remove it to train from the start" in message, message


@pytest.mark.parametrize("caller", ["Python API", "command line"])
def test_an_unwritten_note_of_the_newest_epoch_names_epochs_as_the_caller_sets_it(splits, s3_bucket, monkeypatch,
                                                                                    capsys, caller):
    """The warning of a newest-epoch note S3 refused told every caller "1 to --epochs": a flag a caller of train()
    (a notebook) has none of. It names TrainConfig's epochs there; the command line keeps its flag (the training job
    names its hyperparameter: config.setting_said)."""
    from fasttext_lib import checkpoints

    def refused(where, epoch):
        raise FastTextError(f"access denied to {where} (AccessDenied)")
    monkeypatch.setattr(checkpoints, "_write_note", refused)
    ckpt = f"{s3_bucket}/notes/{caller.replace(' ', '-')}"
    config = TrainConfig(epochs=1, batch_size=256, progress=False, seed=4)
    train(*splits, config, checkpoint_dir=ckpt, said_as_flags=caller == "command line")  # (the CLI's call)
    warned = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: ")]
    epochs = "TrainConfig(epochs=...)" if caller == "Python API" else "--epochs"
    assert len(warned) == 1 and f"among the epochs it asks for (1 to {epochs}, the one noted" in warned[0], warned


def test_a_job_says_a_refusal_that_holds_remove_it_elsewhere_as_it_was(tmp_path):
    """sm_train.in_job_terms rewrote "remove it" anywhere in a checkpoint refusal of a synced checkpoint directory:
    a class or setting value holding those words (the labels a checkpoint was written with) was said as "delete the
    job's checkpoint_s3_uri prefix". Only the remedy's own words are rewritten."""
    from fasttext_lib.sm_train import in_job_terms

    synced = str(tmp_path / "checkpoints")
    message = (f"checkpoint {synced}/epoch-0001 was written for the classes ['keep it', 'remove it'], this run's are "
               f"['a', 'b']; use another --checkpoint-dir or remove it")
    said = in_job_terms(message, synced, synced_dir=synced)
    assert said.startswith(f"checkpoint {synced}/epoch-0001 was written for the classes ['keep it', 'remove it']"), said
    assert "; use another checkpoint_s3_uri (or the hyperparameter checkpoint_dir=none) or delete the job's " \
           "checkpoint_s3_uri prefix; SageMaker copies" in said, said
    older = (f"checkpoint {synced}/epoch-0001 was written by an older version of this library, whose optimizer state "
             f"is a Python pickle (loading one runs any code it holds), and is not read: resume it with the version "
             f"that wrote it, or remove it or use another --checkpoint-dir to train from the start")
    assert "or delete the job's checkpoint_s3_uri prefix or use another checkpoint_s3_uri" in in_job_terms(
        older, synced, synced_dir=synced)


def test_checkpoints_on_s3(splits, s3_bucket):
    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    ckpt = f"{s3_bucket}/jobs/run1/checkpoints"
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
    bucket = s3_bucket[len("s3://"):]
    keys = sorted(o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket=bucket)["Contents"])
    assert [k.rsplit("/", 1)[0] for k in keys] == ["jobs/run1/checkpoints/epoch-0001"] * 3 + ["jobs/run1/checkpoints"]
    assert [re.sub("-[0-9a-f]{16}", "", k.rsplit("/", 1)[1]) for k in keys] == ["checkpoint.json", "model.params",
                                                                                "optimizer.npz", "newest-epoch.json"]
    note = boto3.client("s3").get_object(Bucket=bucket, Key="jobs/run1/checkpoints/newest-epoch.json")["Body"].read()
    assert json.loads(note) == {"epoch": 1}  # (what a resume without s3:ListBucket asks for, past its own epochs)
    resumed = train(*splits, config, checkpoint_dir=ckpt)
    whole = train(*splits, config)
    np.testing.assert_array_equal(resumed.model.embedding_table(), whole.model.embedding_table())
    keys = {o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket=bucket)["Contents"]}
    assert {k.split("/")[3] for k in keys} == {"epoch-0002", "newest-epoch.json"}


def test_checkpoints_in_a_bucket_that_keeps_versions_leave_no_version_of_the_older_epochs(splits, s3_bucket):
    """Each save removes the epoch before it; in a bucket that keeps versions its plain DELETEs only added delete
    markers, and every older epoch (~800 MB for a bigram model) stayed as noncurrent versions, billed for good. They
    are deleted by the versions their uploads created: a run of 3 epochs keeps the last one's files and one version
    of newest-epoch.json, and only the delete markers of the removed epochs' checkpoint.json."""
    bucket = s3_bucket[len("s3://"):]
    boto3.client("s3").put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    ckpt = f"{s3_bucket}/jobs/run1/checkpoints"
    train(*splits, TrainConfig(epochs=3, batch_size=256, progress=False, seed=4), checkpoint_dir=ckpt)
    listed = boto3.client("s3").list_object_versions(Bucket=bucket, Prefix="jobs/run1/checkpoints/")

    def shown(kind):
        keys = (v["Key"][len("jobs/run1/checkpoints/"):] for v in listed.get(kind, []))
        return sorted(re.sub("-[0-9a-f]{16}", "", key) for key in keys)

    assert shown("Versions") == ["epoch-0003/checkpoint.json", "epoch-0003/model.params", "epoch-0003/optimizer.npz",
                                 "newest-epoch.json"]
    assert shown("DeleteMarkers") == ["epoch-0001/checkpoint.json", "epoch-0002/checkpoint.json"]


def test_checkpoints_on_s3_without_list_bucket(splits, unlisted, uninterrupted):
    """A role that may put, get and delete objects but not list them (S3 then answers 403 for a missing
    key): the run saves its checkpoints, resumes from the newest, and removes the older ones."""
    policy, _, dest = unlisted
    ckpt = dest.rsplit("/", 1)[0] + "/checkpoints"
    config = TrainConfig(epochs=3, batch_size=256, progress=False, seed=4)
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(2))
    prefix = storage.split_s3(ckpt)[1] + "/"
    admin = policy.client("admin")

    def epochs_kept():
        listed = admin.list_objects_v2(Bucket=policy.bucket, Prefix=prefix).get("Contents", [])
        return sorted({o["Key"][len(prefix):].split("/")[0] for o in listed})

    assert epochs_kept() == ["epoch-0002", "newest-epoch.json"]  # epoch 1's was found without a listing and removed
    resumed = train(*splits, config, checkpoint_dir=ckpt)
    assert [row["epoch"] for row in resumed.history] == [1, 2, 3]
    np.testing.assert_array_equal(resumed.model.embedding_table(), uninterrupted(config))
    assert epochs_kept() == ["epoch-0003", "newest-epoch.json"]


@pytest.mark.parametrize("where", ["local", "s3 without ListBucket"])
def test_a_rerun_with_fewer_epochs_than_its_checkpoint_is_refused_also_without_list_bucket(splits, tmp_path, request,
                                                                                          where):
    """A rerun with fewer --epochs than the checkpoint's epoch: refused locally, naming the epochs to resume with. On
    S3 without s3:ListBucket each epoch's checkpoint.json was asked for by name, 1 .. --epochs only, so the
    checkpoint past them was never seen and the run started over silently. A save there now notes its epoch in
    newest-epoch.json, which a resume asks for too: refused the same way, and nothing is written."""
    config = TrainConfig(epochs=3, batch_size=256, progress=False, seed=4)
    if where == "local":
        ckpt = str(tmp_path / "ckpt")

        def kept():
            return sorted(os.listdir(ckpt))
    else:
        policy, _, dest = request.getfixturevalue("unlisted")
        ckpt = dest.rsplit("/", 1)[0] + "/checkpoints"
        prefix = storage.split_s3(ckpt)[1] + "/"

        def kept():
            listed = policy.client("admin").list_objects_v2(Bucket=policy.bucket, Prefix=prefix).get("Contents", [])
            return sorted({o["Key"][len(prefix):].split("/")[0] for o in listed} - {"newest-epoch.json"})
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(2))
    assert kept() == ["epoch-0002"]
    with pytest.raises(FastTextError) as refused:
        train(*splits, TrainConfig(**dict(config.to_dict(), epochs=1)), checkpoint_dir=ckpt)
    message = str(refused.value)
    assert "different run (epochs 3 -> 1)" in message and "rerun with TrainConfig(epochs=3) to resume it" in message, message
    assert kept() == ["epoch-0002"]
    seen = []
    train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=seen.append)  # its own epochs resume it
    assert [row["epoch"] for row in seen] == [3] and kept() == ["epoch-0003"]


def test_a_rerun_with_other_epochs_and_other_settings_is_told_every_setting_that_resumes_it(splits, tmp_path):
    """A rerun that changed --epochs and another setting was told "rerun with --epochs 3 to resume it", which was
    refused again for the other setting. The way out names each setting the checkpoint was written with."""
    ckpt = str(tmp_path / "ckpt")
    config = TrainConfig(epochs=3, batch_size=256, lr=0.5, progress=False, seed=4)
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(2))
    with pytest.raises(FastTextError) as refused:
        train(*splits, TrainConfig(**dict(config.to_dict(), epochs=1, batch_size=128, lr=0.3)), checkpoint_dir=ckpt)
    message = str(refused.value)
    assert "epochs 3 -> 1" in message and "batch_size 256 -> 128" in message, message
    assert "rerun with TrainConfig(epochs=3, lr=0.5, batch_size=256) to resume it" in message, message
    seen = []
    train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=seen.append)  # as told: resumed
    assert [row["epoch"] for row in seen] == [3]


def test_a_checkpoint_saved_before_newest_epoch_json_is_found_past_the_reruns_epochs_without_list_bucket(splits,
                                                                                                      unlisted):
    """A checkpoint a version before newest-epoch.json saved to S3 (no note beside it), resumed by a role without
    s3:ListBucket with fewer --epochs than the checkpoint's epoch: only epochs 1 .. --epochs were asked for, so the
    run started over silently where a local or listable one is refused. The epochs past them are asked for too."""
    policy, _, dest = unlisted
    ckpt = dest.rsplit("/", 1)[0] + "/checkpoints"
    bucket, prefix = policy.bucket, storage.split_s3(ckpt)[1] + "/"
    admin = policy.client("admin")
    config = TrainConfig(epochs=4, batch_size=256, progress=False, seed=4)  # (epoch 3 is past a rerun's 1 .. 2)
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(3))
    admin.delete_object(Bucket=bucket, Key=prefix + "newest-epoch.json")  # as that older version left it

    def kept():
        return sorted(o["Key"][len(prefix):] for o in admin.list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"])

    before = kept()
    assert [name.split("/")[0] for name in before] == ["epoch-0003"] * 3
    with pytest.raises(FastTextError) as refused:
        train(*splits, TrainConfig(**dict(config.to_dict(), epochs=2)), checkpoint_dir=ckpt)
    message = str(refused.value)
    assert "different run (epochs 4 -> 2)" in message and "rerun with TrainConfig(epochs=4) to resume it" in message, message
    assert kept() == before  # nothing written, nothing removed


def test_the_newest_epoch_noted_on_s3_never_goes_back_when_two_runs_save_to_one_prefix(s3_bucket, monkeypatch):
    """Two runs of one command saving to one S3 prefix: run B noting epoch 3 after run A noted 7 (also when B read
    the note before A wrote it, then wrote its own) left newest-epoch.json saying 3, and a rerun without
    s3:ListBucket with fewer --epochs than 7 no longer found A's checkpoint (it started over). The note only rises."""
    from fasttext_lib import checkpoints

    ckpt = f"{s3_bucket}/shared-note"
    bucket, key = storage.split_s3(storage.join(ckpt, checkpoints.NEWEST_EPOCH))

    def noted():
        return json.loads(boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read())

    checkpoints._note_newest(ckpt, 2)
    checkpoints._note_newest(ckpt, 7)  # run A
    checkpoints._note_newest(ckpt, 3)  # run B, after it
    assert noted() == {"epoch": 7}

    boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=b'{"epoch": 2}')  # a fresh start of both runs
    real_client, interleaved = storage.s3_client, []

    class WhileBWrites:
        """B's client: A's note lands between what B read and B's write of the note."""

        def __getattr__(self, name):
            return getattr(real_client(), name)

        def put_object(self, **kwargs):
            if kwargs.get("Key") == key and not interleaved:
                interleaved.append(True)
                monkeypatch.setattr(storage, "s3_client", real_client)
                checkpoints._note_newest(ckpt, 7)  # run A
                monkeypatch.setattr(storage, "s3_client", WhileBWrites)
            return real_client().put_object(**kwargs)

    monkeypatch.setattr(storage, "s3_client", WhileBWrites)
    checkpoints._note_newest(ckpt, 3)  # run B
    assert interleaved and noted() == {"epoch": 7}
    checkpoints._note_newest(ckpt, 8)  # a newer epoch is still noted
    assert noted() == {"epoch": 8}


def _note_written_while(ckpt, monkeypatch, before_put):
    """``checkpoints._note_newest``'s client, with ``before_put(kwargs)`` called before each PUT of the note."""
    from fasttext_lib import checkpoints

    key = storage.split_s3(storage.join(ckpt, checkpoints.NEWEST_EPOCH))[1]
    real_client = storage.s3_client

    class Client:
        def __getattr__(self, name):
            return getattr(real_client(), name)

        def put_object(self, **kwargs):
            if kwargs.get("Key") == key:
                before_put(kwargs)
            return real_client().put_object(**kwargs)

    monkeypatch.setattr(storage, "s3_client", Client)


def test_a_note_deleted_between_its_read_and_its_conditional_put_is_written_as_a_first_one(s3_bucket, monkeypatch):
    """newest-epoch.json deleted (a lifecycle rule, by hand) after a save read it and before its If-Match PUT: S3
    answers 404 NoSuchKey, which was not retried, and the note was not written. It is read again: no note now, so it is
    written as a first one (If-None-Match)."""
    from fasttext_lib import checkpoints

    ckpt = f"{s3_bucket}/deleted-note"
    bucket, key = storage.split_s3(storage.join(ckpt, checkpoints.NEWEST_EPOCH))
    checkpoints._note_newest(ckpt, 2)
    conditions = []

    def delete_it_first(kwargs):
        conditions.append({k for k in ("IfMatch", "IfNoneMatch") if k in kwargs})
        if len(conditions) == 1:
            boto3.client("s3").delete_object(Bucket=bucket, Key=key)

    _note_written_while(ckpt, monkeypatch, delete_it_first)
    checkpoints._note_newest(ckpt, 3)
    assert conditions == [{"IfMatch"}, {"IfNoneMatch"}]
    assert json.loads(boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()) == {"epoch": 3}


@pytest.fixture
def proxied_bucket(s3_server, s3_bucket, monkeypatch):
    """``(proxy, bucket URI)``: the session's S3 server behind a FaultProxy."""
    from fault_proxy import FaultProxy

    with FaultProxy(s3_server) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        yield proxy, s3_bucket


def test_a_store_answering_if_match_with_400_notes_unconditionally_and_saves_every_epoch(splits, proxied_bucket, capfd):
    """An S3-compatible store that takes If-None-Match but answers If-Match, which it does not support, with 400 (not
    501, nor ignoring it): the note's conditional PUT failed every save from epoch 2 on, so no run got past its first
    checkpoint. The note is then written unconditionally (the weaker guarantee of a store without conditions), and
    the run remembers it: the store was asked the refused condition once, not again at every later epoch."""
    proxy, bucket_uri = proxied_bucket
    proxy.fail("PUT", r"/newest-epoch\.json$", action="400-if-match")
    ckpt = f"{bucket_uri}/if-match-400"
    config = TrainConfig(epochs=4, batch_size=256, progress=False, seed=4)
    resumed = train(*splits, config, checkpoint_dir=ckpt)
    assert [row["epoch"] for row in resumed.history] == [1, 2, 3, 4]
    note_puts = [path for method, path, _ in proxy.log if method == "PUT" and path.endswith("/newest-epoch.json")]
    assert len(note_puts) == 5, note_puts  # epoch 1 If-None-Match; 2 If-Match (400) and again without; 3, 4 without
    bucket, key = storage.split_s3(storage.join(ckpt, "newest-epoch.json"))
    assert json.loads(boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()) == {"epoch": 4}
    assert "warning" not in capfd.readouterr().err


def test_a_note_that_cannot_be_written_fails_no_save_and_is_one_warning_line(splits, proxied_bucket, capfd):
    """newest-epoch.json is a hint for a resume without s3:ListBucket: a PUT of it refused (a policy that allows the
    epochs' keys only) or failing failed the save whose checkpoint was already published, and so the run. Now each
    such save says so in one warning line, and the run goes on."""
    proxy, bucket_uri = proxied_bucket
    proxy.fail("PUT", r"/newest-epoch\.json$", action="403")
    ckpt = f"{bucket_uri}/note-refused"
    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    trained = train(*splits, config, checkpoint_dir=ckpt)
    assert [row["epoch"] for row in trained.history] == [1, 2]
    bucket, prefix = storage.split_s3(ckpt)
    keys = {o["Key"][len(prefix) + 1:].split("/")[0] for o in boto3.client("s3").list_objects_v2(
        Bucket=bucket, Prefix=prefix + "/")["Contents"]}
    assert keys == {"epoch-0002"}
    warnings = [line for line in capfd.readouterr().err.splitlines() if "newest-epoch.json" in line]
    assert len(warnings) == 2 and all(line.startswith("warning: ") for line in warnings), warnings
    assert "access denied" in warnings[0] and "s3:ListBucket" in warnings[0], warnings[0]


def _markers_asked(proxy, start):
    """How many times each epoch's checkpoint.json was asked for (HEAD) in ``proxy.log`` from ``start`` on."""
    from collections import Counter

    found = (re.search(r"/epoch-(\d{4})/checkpoint\.json$", path) for method, path, _ in proxy.log[start:]
             if method == "HEAD")
    return Counter(int(m.group(1)) for m in found if m)


def test_a_command_line_run_without_list_bucket_searches_its_checkpoints_once(small_train_file, tmp_path, unlisted):
    """Without s3:ListBucket a search asks S3 for each epoch's checkpoint.json, 1 .. --epochs and the 100 past them,
    one HEAD each. The command line searched twice (its look for an older format before the data is read, then the
    resume), ~220 HEADs where ~110 do, fresh runs too; and a resume searched once more after any refusal. Now the first
    search is passed on: every epoch past --epochs is asked for once a run, by a fresh run and by a refused rerun."""
    from conftest import cli_in_process

    _, proxy, dest = unlisted
    ckpt = dest.rsplit("/", 1)[0] + "/checkpoints"
    command = ["train", "--train", small_train_file, "--output", tmp_path / "out", "--batch-size", "64", "--emsize",
               "8", "--no-progress", "--ctx", "cpu", "--checkpoint-dir", ckpt]
    start = len(proxy.log)
    first = cli_in_process(*command, "--epochs", "2")
    assert first.returncode == 0, first.stderr
    asked = _markers_asked(proxy, start)
    assert {epoch: asked[epoch] for epoch in range(3, 103)} == dict.fromkeys(range(3, 103), 1)
    start = len(proxy.log)
    rerun = cli_in_process(*command[:4], tmp_path / "other", *command[5:], "--epochs", "3")
    assert rerun.returncode != 0 and "different run (epochs 2 -> 3)" in rerun.stderr, rerun.stderr
    asked = _markers_asked(proxy, start)
    assert {epoch: asked[epoch] for epoch in range(4, 104)} == dict.fromkeys(range(4, 104), 1)
    assert asked[2] <= 2, asked  # the search, and whether the refused one is still there (removed meanwhile: searched)


def test_killed_cli_run_resumes_from_its_checkpoint(sample_dir, tmp_path):
    """SIGKILL a real training process mid-run, rerun the same command: same bundle as an unbroken run. (The run is
    held in epoch 3 once epoch 2's checkpoint is whole, until killed: on a loaded machine the test looked again only
    after the run had gone on past epoch 4's checkpoint, or written its bundle.)"""
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    ckpt = tmp_path / "ckpt"

    def command(output):
        return [sys.executable, "-m", "fasttext_lib", "train", "--train", str(sample_dir / "train.csv"),
                "--validation", str(sample_dir / "test.csv"), "--output", str(output), "--epochs", "5",
                "--batch-size", "128", "--ngrams", "2", "--buckets", "50000", "--no-progress", "--ctx", "cpu",
                "--checkpoint-dir", str(ckpt)]

    held = [sys.executable, "-c", held_once_there(ckpt / "epoch-0002" / "checkpoint.json") + CLI_AFTER_IT]
    proc = subprocess.Popen(held + command(tmp_path / "bundle")[3:], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        deadline = time.time() + 240
        while not (ckpt / "epoch-0002" / "checkpoint.json").exists():
            assert proc.poll() is None and time.time() < deadline, "no checkpoint for epoch 2"
            time.sleep(0.02)
    finally:  # (the run held, or still training where the test failed, is not left to the tests after it)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL and not (tmp_path / "bundle").exists()

    resumed = subprocess.run(command(tmp_path / "bundle"), env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    epochs_run = [json.loads(line)["epoch"] for line in resumed.stdout.splitlines() if line.startswith("{")]
    assert epochs_run[0] == 3 and epochs_run[-1] == 5
    # and says so (it resumed silently: a rerun looked like a fresh start that skipped epochs)
    assert f"resuming from the checkpoint in {ckpt}: epoch {epochs_run[0] - 1} of 5 done" in resumed.stderr

    from fasttext_lib.predict import Predictor
    from fasttext_lib.data import read_labeled

    from conftest import cli_in_process

    ckpt_free = [c if c != str(ckpt) else str(tmp_path / "ckpt2") for c in command(tmp_path / "whole")]
    whole = cli_in_process(*ckpt_free[3:])  # (the reference run: the same command in this process, never stopped)
    assert whole.returncode == 0, whole.stderr
    assert "resuming" not in whole.stderr  # an empty checkpoint directory: a fresh start, said nothing about
    a, b = Predictor.load(str(tmp_path / "bundle")), Predictor.load(str(tmp_path / "whole"))
    np.testing.assert_array_equal(a.model.embedding_table(), b.model.embedding_table())
    assert a.metrics["history"][-1]["val_loss"] == b.metrics["history"][-1]["val_loss"]
    test = read_labeled(str(sample_dir / "test.csv"))
    assert a.predict(test.texts[:20]) == b.predict(test.texts[:20])


# ---------------------------------------------------------------- hostile: other runs, signals mid-upload, hand edits


@pytest.mark.parametrize("where", ["local", "s3"])
def test_a_checkpoint_another_run_removes_while_it_is_read_resumes_from_the_newer_one(splits, tmp_path, s3_bucket,
                                                                                       monkeypatch, where, uninterrupted):
    """Two runs of one command with one --checkpoint-dir: while the second reads epoch 2, the first saves
    epoch 3 and removes epoch 2. The reader stopped with '.../epoch-0002 has no checkpoint.json' (S3) or
    '... does not exist' (local); it resumes from epoch 3 now, and ends as an uninterrupted run."""
    config = TrainConfig(epochs=4, batch_size=256, progress=False, seed=4)
    ckpt = str(tmp_path / "ckpt") if where == "local" else f"{s3_bucket}/ckpt"
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(2))
    real_fetch, other_ran = storage.sets.fetch, []

    def fetch_after_the_other_run_moved_on(*args, **kwargs):
        if not other_ran:  # the manifest of epoch 2 is read; now the other run saves epoch 3, removes epoch 2
            other_ran.append(True)
            with pytest.raises(Crash):
                train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(3))
        return real_fetch(*args, **kwargs)

    monkeypatch.setattr(storage.sets, "fetch", fetch_after_the_other_run_moved_on)
    seen = []
    resumed = train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=seen.append)
    assert other_ran and [row["epoch"] for row in seen] == [4]
    np.testing.assert_array_equal(resumed.model.embedding_table(), uninterrupted(config))


def test_a_checkpoint_whose_epoch_was_edited_by_hand_is_refused(splits, tmp_path):
    """checkpoint.json is the manifest: its files are checksummed, its config compared, but its "epoch" decided
    alone where training went on: edited from 2 to 1 the run trained epoch 2 twice (history 1, 2, 2, 3)."""
    config = TrainConfig(epochs=3, batch_size=256, progress=False, seed=4)
    ckpt = tmp_path / "ckpt"
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(2))
    manifest = ckpt / "epoch-0002" / "checkpoint.json"
    original = manifest.read_text()
    for edit in ({"epoch": 1}, {"epoch": 3}, {"history": json.loads(original)["history"][:1]}):
        manifest.write_text(json.dumps(dict(json.loads(original), **edit)))
        with pytest.raises(FastTextError, match="epoch-0002 is inconsistent"):
            train(*splits, config, checkpoint_dir=str(ckpt))
    (ckpt / "epoch-0002").rename(ckpt / "epoch-0001")  # renamed: epoch 2's parameters under epoch 1's name
    manifest = ckpt / "epoch-0001" / "checkpoint.json"
    manifest.write_text(original)
    with pytest.raises(FastTextError, match="epoch-0001 is inconsistent"):
        train(*splits, config, checkpoint_dir=str(ckpt))


def _checkpoint_command(train_file, ckpt, output, epochs=3):
    return [sys.executable, "-m", "fasttext_lib", "train", "--train", str(train_file), "--output", str(output),
            "--epochs", str(epochs), "--batch-size", "64", "--emsize", "8", "--no-progress", "--ctx", "cpu",
            "--checkpoint-dir", ckpt]


@pytest.fixture(scope="module")
def uninterrupted_run(small_train_file, tmp_path_factory):
    """The word vectors of _checkpoint_command's run without checkpoints, never stopped."""
    from fasttext_lib.predict import Predictor

    out = tmp_path_factory.mktemp("whole") / "bundle"
    whole = subprocess.run(_checkpoint_command(small_train_file, "none", out)[:-2], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1"), timeout=600)
    assert whole.returncode == 0, whole.stderr
    return Predictor.load(str(out)).model.embedding_table()


@pytest.mark.parametrize("listing", [True, False], ids=["listable", "no-ListBucket"])
@pytest.mark.parametrize("stalled, sig", [("checkpoint.json", signal.SIGTERM), ("model-", signal.SIGINT)])
def test_signal_while_s3_holds_a_checkpoint_upload(request, tmp_path, small_train_file, uninterrupted_run, stalled, sig, listing,
                                                   monkeypatch):
    """S3 received a checkpoint file's PUT whole but answers late (a slow S3; the proxy holds it), and the run
    is stopped meanwhile; the PUT is applied after the run exited. For the manifest, the run had taken its
    data files back, so epoch 2's checkpoint.json named deleted files: every resume failed ('... is missing:
    the set was replaced or removed while reading; try again'), forever. Now the files stay until S3 has
    answered, the resume ends as an uninterrupted run, and what a data file's late PUT leaves is precisely one
    young unreferenced object in epoch-0002/, which checkpoint saves sweep once it is older than the grace. (The stopped
    run is a process of its own, as the signal needs; the rerun runs the same command in this one.)"""
    from conftest import cli_in_process
    from fault_proxy import FaultProxy

    if listing:
        upstream = request.getfixturevalue("s3_server")
        bucket = request.getfixturevalue("s3_bucket")[len("s3://"):]
        env, admin = dict(os.environ), boto3.client("s3")
    else:
        policy = request.getfixturevalue("s3_policy_server")
        upstream, bucket, env, admin = policy.endpoint, policy.bucket, dict(os.environ, **policy.env("writer")), policy.client("admin")
    prefix = f"stalled-{os.urandom(4).hex()}"
    ckpt = f"s3://{bucket}/{prefix}"
    env.update(PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    with FaultProxy(upstream) as proxy:
        if not listing:
            for method in ("GET", "HEAD"):
                proxy.fail(method, r".", "403-if-missing")
        proxy.fail("PUT", f"/epoch-0002/{re.escape(stalled)}", "stall")
        proc = subprocess.Popen(_checkpoint_command(small_train_file, ckpt, tmp_path / "out"),
                                env=dict(env, AWS_ENDPOINT_URL=proxy.endpoint), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proxy.stalled.wait(300), proc.communicate()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 128 + sig and err.count("\n") == 1 and err.startswith("error: "), err
        if stalled == "checkpoint.json":  # (S3 may apply the PUT it holds: epoch 1's is kept, or epoch 2's)
            assert err == (f"error: terminated (SIGTERM); stopped and cleaned up, keeping the checkpoint of epoch 1 or 2 "
                           f"in {ckpt} (epoch 2's checkpoint.json was being written when the stop came: S3 may still "
                           f"apply it): run the same command again to resume from the newer\n")
        proxy.release()  # S3 applies the held PUT now, after the run gave up on it
        deadline = time.time() + 30
        while not any(stalled in o["Key"] for o in admin.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])):
            assert time.time() < deadline, "the held PUT was never applied"
            time.sleep(0.1)
        proxy.clear()
        if not listing:
            for method in ("GET", "HEAD"):
                proxy.fail(method, r".", "403-if-missing")
        with monkeypatch.context() as m:
            for key, value in dict(env, AWS_ENDPOINT_URL=proxy.endpoint).items():
                if key.startswith("AWS_"):  # (the rerun's environment: the stopped process's)
                    m.setenv(key, value)
            resumed = cli_in_process(*_checkpoint_command(small_train_file, ckpt, tmp_path / "out")[3:])
    assert resumed.returncode == 0, resumed.stderr
    from fasttext_lib.predict import Predictor

    np.testing.assert_array_equal(Predictor.load(str(tmp_path / "out")).model.embedding_table(), uninterrupted_run)
    listed = admin.list_objects_v2(Bucket=bucket, Prefix=prefix + "/").get("Contents", [])
    left = sorted(re.sub("-[0-9a-f]{16}", "-ID", o["Key"][len(prefix) + 1:]) for o in listed)
    final = ["epoch-0003/checkpoint.json", "epoch-0003/model-ID.params", "epoch-0003/optimizer-ID.npz"]
    # a late manifest completed its set (resumed from it, then removed); a late model-*.params is unreferenced
    # (its publish was taken back) and young: kept by the sweep, and without a listing nothing can find it
    assert left == (["epoch-0002/model-ID.params"] if stalled == "model-" else []) + final + ["newest-epoch.json"]


@pytest.mark.parametrize("where", ["local", "s3"])
def test_what_an_interrupted_save_left_in_an_epoch_directory_is_swept(splits, tmp_path, s3_bucket, monkeypatch, where):
    """An epoch directory without checkpoint.json (a save killed before its manifest, the rest of a removal a
    kill cut short, an upload a signal abandoned that S3 applied later) was never visited again: no resume reads
    it and only marked epochs were removed. Saves now sweep our own files there (on S3 once older than the
    grace period); a file the user put in such a directory stays, and is no error."""
    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    stale = ["model-0123456789abcdef.params", "optimizer-0123456789abcdef.npz"]
    if where == "local":
        ckpt = root = tmp_path / "ckpt"
        for name in stale + [".fasttext.lock", "fasttext_lib-staging-0123456789abcdef-checkpoint.json"]:
            (ckpt / "epoch-0007").mkdir(parents=True, exist_ok=True)
            (ckpt / "epoch-0007" / name).write_bytes(b"left")
        (ckpt / "epoch-0008").mkdir()
        (ckpt / "epoch-0008" / "notes.txt").write_text("mine")

        def left():
            return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != ".fasttext.lock")
        ckpt = str(ckpt)
    else:
        monkeypatch.setattr(storage.sets, "ORPHAN_GRACE_SECONDS", -1)  # (younger ones may be a concurrent upload's)
        ckpt = f"{s3_bucket}/ckpt"
        bucket, prefix = storage.split_s3(ckpt)
        client = boto3.client("s3")
        for name in stale:
            client.put_object(Bucket=bucket, Key=f"{prefix}/epoch-0007/{name}", Body=b"left")
        client.put_object(Bucket=bucket, Key=f"{prefix}/epoch-0008/notes.txt", Body=b"mine")

        def left():
            return sorted(o["Key"][len(prefix) + 1:] for o in client.list_objects_v2(Bucket=bucket, Prefix=prefix + "/")["Contents"])
    train(*splits, config, checkpoint_dir=ckpt)
    assert [re.sub("-[0-9a-f]{16}", "-ID", name) for name in left()] == [
        "epoch-0002/checkpoint.json", "epoch-0002/model-ID.params", "epoch-0002/optimizer-ID.npz", "epoch-0008/notes.txt"] \
        + (["newest-epoch.json"] if where == "s3" else [])


@pytest.mark.parametrize("other", ["settings", "train_accuracy scoring", "workers"])
def test_two_runs_with_other_settings_started_together_do_not_replace_each_others_checkpoints(splits, s3_bucket, monkeypatch,
                                                                                             other, uninterrupted):
    """Both found the directory empty at their start; the second's first save replaced the first's epoch 1 (and
    its later saves removed the first's epochs), so the first run, stopped and rerun, was refused: its checkpoints
    were gone. Now the second's save is refused in one line and the first run resumes from its own checkpoint.
    (score_train changes no parameter, but a history mixing it is what a resume refuses; "workers": the second
    is a cluster of 2, whose checkpoints a single process's resume refuses.)"""
    ckpt = f"{s3_bucket}/shared-{other.split()[0]}"
    mine = TrainConfig(epochs=3, batch_size=256, progress=False, seed=4)
    theirs = TrainConfig(epochs=3, batch_size=256, progress=False, seed=4, emsize=16) if other == "settings" else mine
    import fasttext_lib.train as train_module

    real_save, first_saved = train_module.save_checkpoint, []

    def save_after_the_first_run_saved(*args, **kwargs):
        if not first_saved:  # the other run, started with this one, saves its epoch 1 first (and is then stopped)
            first_saved.append(True)
            with pytest.raises(Crash):
                train(*splits, mine, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
            if other == "workers":  # (this run's saves, not the other's above)
                kwargs = dict(kwargs, num_workers=2)
        return real_save(*args, **kwargs)

    monkeypatch.setattr(train_module, "save_checkpoint", save_after_the_first_run_saved)
    with pytest.raises(FastTextError, match="two trainings share this checkpoint_dir") as refused:
        train(*splits, theirs, checkpoint_dir=ckpt, score_train=other == "train_accuracy scoring")
    assert "\n" not in str(refused.value) and first_saved
    monkeypatch.setattr(train_module, "save_checkpoint", real_save)
    seen = []
    resumed = train(*splits, mine, checkpoint_dir=ckpt, on_epoch_end=seen.append)
    assert [row["epoch"] for row in seen] == [2, 3]
    np.testing.assert_array_equal(resumed.model.embedding_table(), uninterrupted(mine))


@pytest.mark.parametrize("when", ["data file in place", "manifest in place"])
def test_training_job_stopped_mid_checkpoint_then_rerun(tmp_path, small_train_file, monkeypatch, when):
    """The SageMaker job (sm_train.main, in-process) checkpointing to a local directory, as /opt/ml/checkpoints
    is, gets SIGTERM (a spot interruption) while epoch 2's checkpoint is published: after its first data file
    is in place, or right after os.replace put checkpoint.json in place (Python runs the handler between two
    bytecodes: there, before the publish had noted its commit, it took the files back and left a manifest
    naming deleted files; every rerun failed 'model.params ... is missing ... try again'). The rerun job
    ends with the parameters of an uninterrupted one, and only its newest checkpoint is left. The stop's line names the
    checkpoint kept: epoch 1's while epoch 2's is published, epoch 2's once its manifest is in place."""
    import io
    import contextlib

    from fasttext_lib import sm_train
    from fasttext_lib.predict import Predictor

    def container(name):
        root = tmp_path / name
        for sub in ("model", "output/data", "train"):
            (root / sub).mkdir(parents=True)
        (root / "train" / "train.csv").write_bytes(small_train_file.read_bytes())
        return {"SM_MODEL_DIR": str(root / "model"), "SM_OUTPUT_DIR": str(root / "output"),
                "SM_OUTPUT_DATA_DIR": str(root / "output" / "data"), "SM_CHANNEL_TRAIN": str(root / "train"),
                "SM_HOSTS": '["algo-1"]', "SM_CURRENT_HOST": "algo-1", "SM_NUM_GPUS": "0"}

    def job(env, ckpt):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = sm_train.main(["--epochs", "3", "--emsize", "8", "--batch-size", "64", "--checkpoint-dir", str(ckpt)],
                                 environ=env)
        return code, err.getvalue()

    def spot_interruption():
        signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)  # what SIGTERM arriving here runs

    ckpt = tmp_path / "checkpoints"
    real_move, real_replace = storage.sets._move_hashing, os.replace

    def move(src, dst):
        entry = real_move(src, dst)
        if "epoch-0002" in dst and when == "data file in place":
            spot_interruption()
        return entry

    def replace(src, dst, **kwargs):
        real_replace(src, dst, **kwargs)
        if dst.endswith(os.path.join("epoch-0002", "checkpoint.json")) and when == "manifest in place":
            spot_interruption()

    monkeypatch.setattr(storage.sets, "_move_hashing", move)
    monkeypatch.setattr(os, "replace", replace)
    first = container("first")
    kept = ckpt / ("epoch-0001" if when == "data file in place" else "epoch-0002")  # (the manifest: committed)
    assert job(first, ckpt) == (143, f"error: terminated (SIGTERM); stopped and cleaned up, keeping the checkpoint of "
                                     f"epoch {kept.name[-1]} in {kept}: a job started with the same checkpoint_dir "
                                     f"hyperparameter resumes from it\n")
    assert os.listdir(first["SM_MODEL_DIR"]) == []
    monkeypatch.undo()
    rerun, whole = container("rerun"), container("whole")
    assert job(rerun, ckpt)[0] == 0 and job(whole, tmp_path / "other")[0] == 0
    np.testing.assert_array_equal(Predictor.load(rerun["SM_MODEL_DIR"]).model.embedding_table(),
                                  Predictor.load(whole["SM_MODEL_DIR"]).model.embedding_table())
    assert sorted(os.listdir(ckpt)) == ["epoch-0003"]


def _manifest_edit(**changes):
    def harm(d):
        meta = json.loads((d / "checkpoint.json").read_text())
        (d / "checkpoint.json").write_text(json.dumps(dict(meta, **changes)))
    return harm


def _republished(logical, content):
    """``logical``'s file replaced by ``content(old bytes)``, its checksum in checkpoint.json updated: damage no
    checksum catches (a hand edit, another writer)."""
    import hashlib

    def harm(d):
        meta = json.loads((d / "checkpoint.json").read_text())
        entry = meta["files"][logical]
        data = content((d / entry["object"]).read_bytes())
        (d / entry["object"]).write_bytes(data)
        entry.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
        (d / "checkpoint.json").write_text(json.dumps(meta))
    return harm


DAMAGE = {
    "model.params deleted": (lambda d: os.remove(next(d.glob("model-*"))),
                             "its checkpoint.json names model.params (model-"),
    "optimizer.npz truncated": (lambda d: os.truncate(next(d.glob("optimizer-*")), 10), "optimizer.npz is truncated"),
    "model.params overwritten": (lambda d: next(d.glob("model-*")).write_bytes(b"x" * next(d.glob("model-*")).stat().st_size),
                                 "model.params does not match its checksum"),
    "checkpoint.json truncated": (lambda d: os.truncate(d / "checkpoint.json", 20), "checkpoint.json is not valid JSON"),
    "older format (no manifest fields)": (
        lambda d: (d / "checkpoint.json").write_text(json.dumps({k: v for k, v in json.loads((d / "checkpoint.json").read_text()).items()
                                                                 if k not in ("files", "written_by")})),
        "checkpoint.json was not written by this library"),
    # edited by hand, each was an AttributeError / TypeError traceback
    "checkpoint.json's history not a list": (_manifest_edit(history=5), "checkpoint.json's 'history'"),
    "checkpoint.json's history rows not objects": (_manifest_edit(history=[1, 2]), "checkpoint.json's 'history'"),
    "checkpoint.json's config not an object": (_manifest_edit(config="x"), "checkpoint.json's 'config'"),
    "checkpoint.json's labels not a list": (_manifest_edit(labels=5), "checkpoint.json's 'labels'"),
    # content no checksum catches: MXNet's "Traceback (most recent call last): ..." and pickle's UnpicklingError
    "model.params not MXNet's": (_republished("model.params", lambda old: b"garbage"), "model.params cannot be loaded"),
    "model.params cut short": (_republished("model.params", lambda old: old[:len(old) // 2]), "model.params cannot be loaded"),
    "optimizer.npz cut short": (_republished("optimizer.npz", lambda old: old[:20]), "optimizer.npz cannot be loaded"),
    # the optimizer state is data read with allow_pickle=False, and checked against the model's weights
    "optimizer.npz holding pickled objects": (_republished("optimizer.npz", lambda old: _npz(a0=np.array([object()]))),
                                              "optimizer.npz cannot be loaded"),
    "optimizer.npz with an array no state names": (_republished("optimizer.npz", lambda old: _npz(a0=np.zeros((3, 3), np.float32))),
                                                  "optimizer.npz cannot be loaded"),
    "optimizer counters edited": (_manifest_edit(optimizer={"format": 1, "optimizer": "sgd", "num_update": "x"}),
                                  "optimizer.npz cannot be loaded"),
}


def _io(data):
    import io

    return io.BytesIO(data)


def _npz(**arrays):
    out = _io(b"")
    np.savez(out, **arrays)
    return out.getvalue()


@pytest.fixture(scope="module")
def crashed_after_epoch_2(splits, tmp_path_factory):
    """``(config, directory)``: the checkpoints of a run of ``config`` that crashed after epoch 2, for each case to
    copy (the same seeded run for every case, trained once)."""
    config = TrainConfig(epochs=3, batch_size=256, progress=False, seed=4)
    ckpt = tmp_path_factory.mktemp("crashed") / "ckpt"
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(2))
    return config, ckpt


@pytest.mark.usefixtures("no_pause_between_rereads")  # (a file stays missing: no reread can find it)
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_checkpoint_is_refused_in_one_line_that_says_what_to_do(splits, tmp_path, damage, crashed_after_epoch_2,
                                                                          uninterrupted):
    """Files deleted or truncated by hand, an older format: one line naming the checkpoint, the damage and the
    remedy (a deleted file said '... the set was replaced or removed while reading; try again', which never
    helps). Removing it, as the line says, then trains from the start and ends as an uninterrupted run."""
    import shutil

    config, crashed = crashed_after_epoch_2
    ckpt = tmp_path / "ckpt"
    shutil.copytree(crashed, ckpt)
    harm, says = DAMAGE[damage]
    harm(ckpt / "epoch-0002")
    with pytest.raises(FastTextError) as refused:
        train(*splits, config, checkpoint_dir=str(ckpt))
    assert str(refused.value).startswith(f"cannot resume from checkpoint {ckpt}/epoch-0002: ")
    assert says in str(refused.value) and "remove that directory" in str(refused.value) and "\n" not in str(refused.value)
    shutil.rmtree(ckpt / "epoch-0002")
    resumed = train(*splits, config, checkpoint_dir=str(ckpt))
    np.testing.assert_array_equal(resumed.model.embedding_table(), uninterrupted(config))


def _values_cut_short(old):
    """optimizer.npz ``old`` with its largest array's values cut in half while its zip directory still gives that
    member's whole size: a member whose values end early (its CRC right for the bytes there), which only the
    values' read can find."""
    import io
    import struct
    import zipfile

    from numpy.lib import format as npy

    with zipfile.ZipFile(io.BytesIO(old)) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    name = max(members, key=lambda n: len(members[n]))
    whole = members[name]
    header = io.BytesIO(whole)
    npy.read_array_header_1_0(header) if npy.read_magic(header) == (1, 0) else npy.read_array_header_2_0(header)
    values = len(whole) - header.tell()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for member, data in members.items():
            archive.writestr(member, data if member != name else whole[:len(whole) - values // 8 * 4])
    data = bytearray(out.getvalue())
    (entry,) = struct.unpack_from("<I", data, len(data) - 22 + 16)  # the central directory (no archive comment)
    while True:  # its entries: 46 bytes, then the name, extra field and comment
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, entry + 28)
        if bytes(data[entry + 46:entry + 46 + name_length]) == name.encode():
            break
        entry += 46 + name_length + extra_length + comment_length
    struct.pack_into("<I", data, entry + 24, len(whole))  # its uncompressed size: the whole member's
    return bytes(data)


def _cut_short_once_parsed(monkeypatch):
    """model.params cut in half by another writer after its layout was read and before its values are
    (params_file.read_into checks their sizes against the file's first)."""
    from fasttext_lib import params_file

    parse = params_file._arrays

    def parse_then_cut(f, size):
        arrays = parse(f, size)
        os.truncate(f.name, size // 2)
        return arrays

    monkeypatch.setattr(params_file, "_arrays", parse_then_cut)


@pytest.mark.parametrize("file, says", [
    ("model.params", r"model\.params cannot be loaded \(model\.params was cut short while it was read\)"),
    ("optimizer.npz", r"optimizer\.npz cannot be loaded \(ValueError: EOF: the array's values are cut short\)"),
])
def test_an_adam_checkpoint_whose_values_end_early_is_refused_in_one_line_naming_the_file(splits, tmp_path, monkeypatch,
                                                                                         file, says):
    """The values of model.params and of adam's moments (optimizer.npz) are read straight into the resumed run's
    arrays, a block at a time; a file whose values end before its layout says they do (model.params cut short as it
    is read, an optimizer.npz member shorter than its zip directory says) is one line naming the checkpoint and
    the file, not a traceback or a run resumed from half its values."""
    config = TrainConfig(epochs=3, batch_size=256, optimizer="adam", progress=False, seed=4)
    ckpt = tmp_path / "ckpt"
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(2))
    if file == "model.params":
        _cut_short_once_parsed(monkeypatch)
    else:
        _republished("optimizer.npz", _values_cut_short)(ckpt / "epoch-0002")
    with pytest.raises(FastTextError) as refused:
        train(*splits, config, checkpoint_dir=str(ckpt))
    message = str(refused.value)
    assert message.startswith(f"cannot resume from checkpoint {ckpt}/epoch-0002: "), message
    assert re.search(says, message) and "remove that directory" in message and "\n" not in message, message


@pytest.mark.usefixtures("no_pause_between_rereads")  # (a file stays missing: no reread can find it)
@pytest.mark.parametrize("where", ["local", "s3 without ListBucket"])
def test_a_checkpoint_missing_a_file_is_refused_naming_it_and_resumes_once_it_is_back(splits, tmp_path, request,
                                                                                     monkeypatch, where, uninterrupted):
    """A save writes checkpoint.json after the files it names, so a checkpoint.json naming a missing file was complete
    and lost that file since (deleted by hand or by a lifecycle rule, skipped by a copy). Falling back to an earlier
    checkpoint (one a kill before its removal left) would have its next save remove this one, and with it what
    could still be restored: it is refused in one line naming the file, nothing is removed, and once the file is
    back the rerun resumes from it. (The refusal said only 'a file its checkpoint.json names is missing'.)"""
    config = TrainConfig(epochs=3, batch_size=256, progress=False, seed=4)
    if where == "local":
        ckpt = str(tmp_path / "ckpt")

        def files():
            return {os.path.relpath(os.path.join(d, f), ckpt): open(os.path.join(d, f), "rb").read()
                    for d, _, names in os.walk(ckpt) for f in names if f != ".fasttext.lock"}

        def delete(name):
            os.remove(os.path.join(ckpt, name))

        def put_back(name, data):
            with open(os.path.join(ckpt, name), "wb") as f:
                f.write(data)
    else:
        policy, _, dest = request.getfixturevalue("unlisted")
        ckpt, admin = dest.rsplit("/", 1)[0] + "/checkpoints", policy.client("admin")
        prefix = storage.split_s3(ckpt)[1] + "/"

        def files():
            listed = admin.list_objects_v2(Bucket=policy.bucket, Prefix=prefix).get("Contents", [])
            return {o["Key"][len(prefix):]: admin.get_object(Bucket=policy.bucket, Key=o["Key"])["Body"].read()
                    for o in listed}

        def delete(name):
            admin.delete_object(Bucket=policy.bucket, Key=prefix + name)

        def put_back(name, data):
            admin.put_object(Bucket=policy.bucket, Key=prefix + name, Body=data)
    with monkeypatch.context() as killed_before_the_removal:
        killed_before_the_removal.setattr(storage, "remove", lambda *args: None)
        with pytest.raises(Crash):
            train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(2))
    params = next(name for name in files() if name.startswith("epoch-0002/model-"))
    data = files()[params]
    delete(params)
    left = files()
    assert any(name.startswith("epoch-0001/") for name in left)
    with pytest.raises(FastTextError) as refused:
        train(*splits, config, checkpoint_dir=ckpt)
    message = str(refused.value)
    assert message.startswith(f"cannot resume from checkpoint {ckpt}/epoch-0002: its checkpoint.json names "
                              f"model.params ({params.split('/')[1]}), which is missing") and "\n" not in message, message
    assert "put that file back, or remove that directory" in message, message
    assert files() == left  # nothing removed, nothing written
    put_back(params, data)
    seen = []
    resumed = train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=seen.append)
    assert [row["epoch"] for row in seen] == [3]
    np.testing.assert_array_equal(resumed.model.embedding_table(), uninterrupted(config))


def _a_pickled_checkpoint(splits, tmp_path, config):
    """``tmp_path/ckpt`` holding epoch 1 as versions before optimizer.npz wrote it: the optimizer state a pickle,
    here one that would create ``tmp_path/the payload ran`` when loaded. Returns (checkpoint dir, epoch dir, that path)."""
    import hashlib
    import pickle

    ran = tmp_path / "the payload ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(ran), "w"))

    ckpt = tmp_path / "ckpt"
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(1))
    epoch = ckpt / "epoch-0001"
    meta = json.loads((epoch / "checkpoint.json").read_text())
    logical = next(name for name in meta["files"] if name.startswith("optimizer."))
    entry = meta["files"].pop(logical)
    os.remove(epoch / entry["object"])
    crafted = pickle.dumps(Payload())
    (epoch / "optimizer-0123456789abcdef.states").write_bytes(crafted)
    meta["files"]["optimizer.states"] = {"object": "optimizer-0123456789abcdef.states", "bytes": len(crafted),
                                         "sha256": hashlib.sha256(crafted).hexdigest()}
    (epoch / "checkpoint.json").write_text(json.dumps(meta))
    return ckpt, epoch, ran


def test_a_checkpoint_with_a_pickled_optimizer_state_is_refused_and_never_unpickled(splits, tmp_path):
    """The optimizer state was MXNet's pickled updater, unpickled at resume: a checkpoint directory (a shared folder,
    an S3 prefix a SageMaker job copies in) crafted to run code at resume ran it. Such a checkpoint (what versions
    before optimizer.npz wrote) is refused in one line and never unpickled; removing it trains from the start."""
    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    ckpt, epoch, ran = _a_pickled_checkpoint(splits, tmp_path, config)
    with pytest.raises(FastTextError) as refused:
        train(*splits, config, checkpoint_dir=str(ckpt))
    assert not ran.exists(), "the checkpoint's pickle was loaded"
    message = str(refused.value)
    assert message.startswith(f"checkpoint {epoch} was written by an older version") and "pickle" in message, message
    assert "remove it" in message and "\n" not in message, message


def test_the_command_line_refuses_a_pickled_checkpoint_before_it_reads_the_data(splits, tmp_path):
    """The refusal came from the resume, after the training data was read (minutes at Yelp size): here a --train
    that does not exist was reported instead. The newest checkpoint's format is checked first."""
    from conftest import cli_in_process

    ckpt, epoch, ran = _a_pickled_checkpoint(splits, tmp_path, TrainConfig(epochs=2, batch_size=256, progress=False))
    r = cli_in_process("train", "--train", tmp_path / "no-such.csv", "--output", tmp_path / "out", "--checkpoint-dir",
                       ckpt, "--epochs", "2", "--no-progress")
    assert r.returncode == 2 and r.stderr.startswith(f"error: checkpoint {epoch} was written by an older version"), \
        r.stderr
    assert len(r.stderr.splitlines()) == 1 and not ran.exists()


def _first_epoch_without_validation(splits, tmp_path):
    """``(config, ckpt, marker)``: as :func:`_first_epochs_marker`, of a run without validation data."""
    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    ckpt = tmp_path / "ckpt"
    with pytest.raises(Crash):
        train(splits[0], None, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(1))
    return config, ckpt, ckpt / "epoch-0001" / "checkpoint.json"


@pytest.mark.parametrize("case", list(UNRESUMABLE_BEFORE_READING))
def test_a_checkpoint_refused_for_what_is_known_without_the_data_is_refused_before_train_featurizes(
        splits, tmp_path, monkeypatch, case):
    """Validation data added or dropped, another number of workers, the other score_train, a text rule the data
    cannot make exact, an older version's fingerprint, an edited epoch or history: each was refused by the resume,
    after the training data had been featurized (the vocabulary and every document's tokens: minutes at Yelp size),
    though none depends on the data. Refused now before it, in the same line."""
    from fasttext_lib import train as train_module

    edit, validates, settings, says = UNRESUMABLE_BEFORE_READING[case]
    config, ckpt, marker = _first_epoch_without_validation(splits, tmp_path)
    edit_checkpoint(marker.parent, edit)

    def featurize(*args, **kwargs):
        raise AssertionError("the training data was featurized before the checkpoint was refused")

    monkeypatch.setattr(train_module, "featurize", featurize)
    with pytest.raises(FastTextError) as refused:
        train(splits[0], splits[1] if validates else None, TrainConfig(**dict(config.to_dict(), **settings)),
              checkpoint_dir=str(ckpt))
    message = str(refused.value)
    assert says in message and str(marker.parent) in message and "\n" not in message, message


def _damage(read, write, delete, stored, how):
    """``how`` done to the checkpoint file ``stored`` (``read`` / ``write`` / ``delete`` it, local or S3) -> what the
    resume's refusal says of it."""
    content = read(stored)
    name = stored.rsplit("/", 1)[1]
    logical = re.sub("-[0-9a-f]{16}", "", name)
    if how == "missing":
        delete(stored)
        return f"names {logical} ({name}), which is missing"
    if how == "truncated":
        write(stored, content[:-10])
        return f"{logical} is truncated: {len(content) - 10} of {len(content)} bytes"
    write(stored, content + b"0" * 10)
    return f"{logical} does not match its checksum in the manifest"


_DAMAGE = [("model.params", "missing"), ("optimizer.npz", "truncated"), ("model.params", "grown")]


@pytest.mark.parametrize("logical, how", _DAMAGE)
def test_a_checkpoints_damaged_file_is_refused_before_train_featurizes(splits, tmp_path, monkeypatch, logical, how):
    """A file of the checkpoint a resume reads, missing or not at the size its checkpoint.json gives, was refused by
    the resume, after the training data had been featurized (minutes at Yelp size). Its presence and size are asked
    before (no checksum: that reads the file), and it is refused then, in the resume's line."""
    from fasttext_lib import train as train_module

    config, ckpt, marker = _first_epoch_without_validation(splits, tmp_path)
    stored = next(str(f) for f in marker.parent.iterdir() if f.name.startswith(logical.split(".")[0] + "-"))
    says = _damage(lambda f: open(f, "rb").read(), lambda f, b: open(f, "wb").write(b), os.remove, stored, how)
    with pytest.raises(FastTextError) as resumed:  # (the resume's own refusal, after the data is read)
        train(splits[0], None, config, checkpoint_dir=str(ckpt))

    def featurize(*args, **kwargs):
        raise AssertionError("the training data was featurized before the checkpoint was refused")

    monkeypatch.setattr(train_module, "featurize", featurize)
    with pytest.raises(FastTextError) as refused:
        train(splits[0], None, config, checkpoint_dir=str(ckpt))
    assert str(refused.value) == str(resumed.value) and says in str(refused.value), str(refused.value)
    assert str(refused.value).startswith(f"cannot resume from checkpoint {marker.parent}: ")


@pytest.mark.parametrize("logical, how", _DAMAGE)
def test_a_checkpoints_damaged_file_on_s3_is_refused_before_train_featurizes_from_the_listing(
        splits, s3_bucket, monkeypatch, logical, how):
    """On S3, the listing that found the epochs gave every file's size: the same check costs no request more."""
    from fasttext_lib import train as train_module

    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    ckpt = f"{s3_bucket}/jobs/{logical}-{how}/checkpoints"
    with pytest.raises(Crash):
        train(splits[0], None, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
    bucket, s3 = s3_bucket[len("s3://"):], boto3.client("s3")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=ckpt.split("/", 3)[3])["Contents"]]
    stored = next(k for k in keys if k.rsplit("/", 1)[1].startswith(logical.split(".")[0] + "-"))
    says = _damage(lambda k: s3.get_object(Bucket=bucket, Key=k)["Body"].read(),
                   lambda k, b: s3.put_object(Bucket=bucket, Key=k, Body=b),
                   lambda k: s3.delete_object(Bucket=bucket, Key=k), stored, how)

    def featurize(*args, **kwargs):
        raise AssertionError("the training data was featurized before the checkpoint was refused")

    monkeypatch.setattr(train_module, "featurize", featurize)
    with pytest.raises(FastTextError) as refused:
        train(splits[0], None, config, checkpoint_dir=ckpt)
    where = storage.join(ckpt, "epoch-0001")
    assert str(refused.value).startswith(f"cannot resume from checkpoint {where}: ") and says in str(refused.value), \
        str(refused.value)


@pytest.mark.parametrize("case", list(UNRESUMABLE_BEFORE_READING))
def test_the_command_line_refuses_a_checkpoint_it_cannot_resume_before_it_reads_the_data(splits, tmp_path, case):
    """As train() does: the refusal came after the whole --train file had been read (here a --train that does not
    exist was reported instead)."""
    from conftest import cli_in_process
    from fasttext_lib.writers import write_csv

    edit, validates, settings, says = UNRESUMABLE_BEFORE_READING[case]
    config, ckpt, marker = _first_epoch_without_validation(splits, tmp_path)
    edit_checkpoint(marker.parent, edit)
    flags = [item for name, value in settings.items() for item in (f"--{name.replace('_', '-')}", value)]
    if validates:
        write_csv(splits[1], str(tmp_path / "val.csv"))
        flags += ["--validation", tmp_path / "val.csv"]
    r = cli_in_process("train", "--train", tmp_path / "no-such.csv", "--output", tmp_path / "out", "--checkpoint-dir",
                       ckpt, "--epochs", "2", "--batch-size", "256", "--seed", "4", "--no-progress", *flags)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert says in r.stderr and str(marker.parent) in r.stderr and "no-such.csv" not in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_the_command_line_refuses_a_gpu_none_is_visible_before_it_reads_the_data(tmp_path, monkeypatch):
    """``--ctx gpu`` on a machine without one was refused by train(), once the --train file had been read."""
    import mxnet as mx
    from conftest import cli_in_process

    monkeypatch.setattr(mx.context, "num_gpus", lambda: 0)  # (a machine without a GPU)
    r = cli_in_process("train", "--train", tmp_path / "no-such.csv", "--output", tmp_path / "out", "--ctx", "gpu",
                       "--no-progress")
    assert r.returncode == 2 and r.stderr.startswith("error: --ctx 'gpu' asks for a GPU but none is visible"), r.stderr
    assert len(r.stderr.splitlines()) == 1 and not (tmp_path / "out").exists()


def test_the_optimizer_state_is_numpy_arrays_and_json(splits, tmp_path):
    """What a checkpoint holds of adam: its two moment tables per weight in optimizer.npz (no object arrays), its
    update counts in checkpoint.json; sgd keeps no arrays."""
    for optimizer, arrays in (("adam", 4), ("sgd", 0)):
        ckpt = tmp_path / optimizer
        train(*splits, TrainConfig(epochs=1, batch_size=256, optimizer=optimizer, progress=False), checkpoint_dir=str(ckpt))
        meta = json.loads((ckpt / "epoch-0001" / "checkpoint.json").read_text())
        with np.load(ckpt / "epoch-0001" / meta["files"]["optimizer.npz"]["object"], allow_pickle=False) as saved:
            assert len(saved.files) == arrays and all(saved[name].dtype == np.float32 for name in saved.files)
        assert meta["optimizer"]["optimizer"] == optimizer and meta["optimizer"]["num_update"] > 0


def test_adams_state_of_other_shapes_or_types_is_refused(splits, tmp_path):
    """Arrays that do not fit the model's weights went on to MXNet's update (a traceback mid-training, or steps taken
    with another model's moments): refused at resume, as damage (one line, by the caller)."""
    from fasttext_lib.checkpoints import _read_optimizer_state

    ckpt = tmp_path / "ckpt"
    config = TrainConfig(epochs=1, batch_size=256, optimizer="adam", progress=False)
    result = train(*splits, config, checkpoint_dir=str(ckpt))
    meta = json.loads((ckpt / "epoch-0001" / "checkpoint.json").read_text())
    path = str(ckpt / "epoch-0001" / meta["files"]["optimizer.npz"]["object"])
    assert _read_optimizer_state(path, meta, result.model, config).counters == meta["optimizer"]
    with np.load(path) as archive:
        arrays = dict(archive)
    for name, bad in (("shape", lambda a: a[:3]), ("dtype", lambda a: a.astype(np.float64))):
        edited = tmp_path / f"{name}.npz"
        np.savez(edited, **dict(arrays, a0=bad(arrays["a0"])))
        with pytest.raises(ValueError, match="array a0"):
            _read_optimizer_state(str(edited), meta, result.model, config)
    with pytest.raises(ValueError, match="not sgd's"):
        _read_optimizer_state(path, meta, result.model, TrainConfig(epochs=1, batch_size=256, optimizer="sgd"))


def _first_weights_state(edit):
    """A harm for :data:`DAMAGE`-style tests: the first weight's entry of checkpoint.json's optimizer "states" (adam's
    ``{"tuple": [mean, var]}``) replaced by ``edit(entry)`` (None: the entry removed), optimizer.npz rewritten without
    the arrays no entry names any more, checksums updated: a state every array of which fits its weight."""
    import hashlib

    def harm(d):
        meta = json.loads((d / "checkpoint.json").read_text())
        states = meta["optimizer"]["states"]
        changed = edit(states[0][1])
        states[:1] = [] if changed is None else [[states[0][0], changed]]
        named = set(re.findall(r"'(?:dense|row_sparse)': '(\w+)'", repr(states)))
        entry = meta["files"]["optimizer.npz"]
        with np.load(d / entry["object"], allow_pickle=False) as old:
            data = _npz(**{name: old[name] for name in old.files if name.removesuffix("_rows") in named})
        (d / entry["object"]).write_bytes(data)
        entry.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
        (d / "checkpoint.json").write_text(json.dumps(meta))
    return harm


@pytest.mark.parametrize("edit", [lambda state: state["tuple"][0], lambda state: {"tuple": state["tuple"][:1]},
                                  lambda state: None],
                         ids=["one table for a weight's two", "one of a weight's two tables", "no state for a weight"])
def test_adams_state_not_made_of_two_tables_per_weight_is_refused_at_resume(splits, tmp_path, edit):
    """Every array fitted its weight, so the check passed: one table where adam keeps two (its mean and variance), or a
    pair cut to one, stopped the resumed run's first step in a traceback (ValueError: too many / not enough values to
    unpack); a weight without its state resumed without a word, its moments started again from zero (the run then
    ended away from an uninterrupted one's parameters). Refused as damage, in one line."""
    config = TrainConfig(epochs=2, batch_size=256, optimizer="adam", progress=False, seed=4)
    ckpt = tmp_path / "ckpt"
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(1))
    _first_weights_state(edit)(ckpt / "epoch-0001")
    with pytest.raises(FastTextError) as refused:
        train(*splits, config, checkpoint_dir=str(ckpt))
    assert str(refused.value).startswith(f"cannot resume from checkpoint {ckpt}/epoch-0001: optimizer.npz cannot be "
                                         f"loaded"), str(refused.value)


@pytest.mark.parametrize("change", ["labels fixed in a few documents", "documents reordered"])
def test_a_checkpoint_of_other_data_with_the_same_classes_and_vocabulary_is_refused(splits, tmp_path, change):
    """Only the classes and the table size stood for the data: with both unchanged (labels corrected in a few
    documents, the file shuffled) the old data's checkpoint was resumed silently, and the run ended with
    parameters neither an uninterrupted run on the old data nor one on the new data has."""
    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    ckpt = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
    labels, texts = list(splits[0].labels), list(splits[0].texts)
    if change == "documents reordered":
        labels, texts = labels[::-1], texts[::-1]
    else:
        first, second = sorted(set(labels))[:2]
        for i in range(5):
            labels[i] = second if labels[i] == first else first
    edited = LabeledTexts(labels, texts)
    with pytest.raises(FastTextError, match="different run"):
        train(edited, splits[1], config, checkpoint_dir=ckpt)
    train(*splits, config, checkpoint_dir=ckpt)  # the data it was written with still resumes it


@pytest.mark.parametrize("change", ["other validation data", "validation dropped", "validation added"])
def test_a_checkpoint_validated_on_other_data_is_refused(splits, tmp_path, change):
    """Validation changes no parameter, so a run resumed with another --validation (or none, or one where the
    first run had none) went on silently: its history, and the bundle's metrics, then held val_loss and
    val_accuracy measured on two validation sets."""
    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    train_split, val_split = splits
    other = LabeledTexts(list(val_split.labels[:100]), list(val_split.texts[:100]))
    first_val, rerun_val, says = {"other validation data": (val_split, other, "was validated on other validation data"),
                                  "validation dropped": (val_split, None, "on validation data this run lacks"),
                                  "validation added": (None, val_split, "was written without validation data")}[change]
    ckpt = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(train_split, first_val, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
    with pytest.raises(FastTextError) as refused:
        train(train_split, rerun_val, config, checkpoint_dir=ckpt)
    assert says in str(refused.value) and "rerun with the val_data it was written with" in str(refused.value)
    assert sorted(os.listdir(ckpt)) == ["epoch-0001"]  # nothing trained, nothing replaced
    resumed = train(train_split, first_val, config, checkpoint_dir=ckpt)  # the validation it was written with
    whole = train(train_split, first_val, config)
    assert json.dumps(_without_timing(resumed.history), sort_keys=True) == json.dumps(_without_timing(whole.history),
                                                                                        sort_keys=True)  # (NaN: none)


@pytest.mark.parametrize("first, rerun", [(True, False), (False, True)])
def test_a_checkpoint_resumed_with_the_other_train_accuracy_scoring_is_refused(splits, tmp_path, first, rerun):
    """score_train (notebook 02's train_accuracy) changes no parameter, so a run resumed with the other choice went
    on silently, and its history had train_accuracy for some epochs and not for the others. Refused in one line,
    as other validation data is; the choice the checkpoint was written with resumes it."""
    config = TrainConfig(epochs=2, batch_size=256, progress=False, seed=4)
    ckpt = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1), score_train=first)
    saved = json.load(open(os.path.join(ckpt, "epoch-0001", "checkpoint.json")))
    assert saved["score_train"] is first and ("train_accuracy" in saved["history"][0]) is first
    with pytest.raises(FastTextError) as refused:
        train(*splits, config, checkpoint_dir=ckpt, score_train=rerun)
    message = str(refused.value)
    assert "\n" not in message and f"written {'with' if first else 'without'} train_accuracy" in message
    assert f"rerun with score_train={first}" in message
    assert sorted(os.listdir(ckpt)) == ["epoch-0001"]  # nothing trained, nothing replaced
    resumed = train(*splits, config, checkpoint_dir=ckpt, score_train=first)
    whole = train(*splits, config, score_train=first)
    assert [("train_accuracy" in row) for row in resumed.history] == [first, first]
    assert json.dumps(_without_timing(resumed.history), sort_keys=True) == json.dumps(_without_timing(whole.history),
                                                                                        sort_keys=True)


def test_a_checkpoint_from_before_score_train_was_recorded_is_judged_by_its_history(splits, tmp_path):
    """Checkpoints written before the choice was recorded: a history with train_accuracy was scored."""
    config, ckpt, marker, meta = _first_epochs_marker(splits, tmp_path, score_train=True)
    del meta["score_train"]
    marker.write_text(json.dumps(meta))
    with pytest.raises(FastTextError, match="written with train_accuracy"):
        train(*splits, config, checkpoint_dir=str(ckpt))
    assert len(train(*splits, config, checkpoint_dir=str(ckpt), score_train=True).history) == 2


def test_a_checkpoint_of_another_number_of_workers_is_refused_and_one_from_before_they_were_recorded_resumes(
        splits, tmp_path):
    """Each dist_* worker steps through its share of the data: a checkpoint resumed by a cluster of another size
    would go on with other steps per epoch (the servers' update count, the lr schedule's step, is the
    checkpoint's epoch times them). Checkpoints written before the number was recorded resume as before."""
    config, ckpt, marker, meta = _first_epochs_marker(splits, tmp_path)
    assert meta["num_workers"] == 1
    marker.write_text(json.dumps(dict(meta, num_workers=2)))
    with pytest.raises(FastTextError, match=r"epoch-0001 was written by 2 worker\(s\) and this run has 1: .*rerun "
                                            r"with 2 worker\(s\) \(hosts\), or use another checkpoint_dir"):
        train(*splits, config, checkpoint_dir=str(ckpt))
    del meta["num_workers"]
    marker.write_text(json.dumps(meta))
    resumed = train(*splits, config, checkpoint_dir=str(ckpt))
    whole = train(*splits, config)
    for name, value in params_of(whole).items():
        np.testing.assert_array_equal(params_of(resumed)[name], value, err_msg=name)


def _write_vectors(path, words, dim, seed):
    values = np.random.RandomState(seed).uniform(-1, 1, (len(words), dim))
    lines = [f"{len(words)} {dim}"] + [w + " " + " ".join(f"{v:.5f}" for v in row) for w, row in zip(words, values)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_pretrained_vectors_replaced_under_the_same_name_do_not_resume_the_old_ones_checkpoint(splits, tmp_path):
    """The settings name the .vec file by its path only: other vectors written under the same name resumed the
    checkpoint the old ones started, and the bundle then recorded the new file's sha256 for rows that came from
    the old one. The file's content is part of what a checkpoint is compared on."""
    words = sorted({w for text in splits[0].texts[:200] for w in text.lower().split()})[:50]
    vec = tmp_path / "words.vec"
    _write_vectors(vec, words, 16, seed=1)
    config = TrainConfig(epochs=2, batch_size=256, emsize=16, progress=False, seed=4, pretrained_vectors=str(vec))
    ckpt = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=_crash_after(1))
    _write_vectors(vec, words, 16, seed=2)
    with pytest.raises(FastTextError, match=r"different run \(the training data .* or the pretrained vectors' "
                                            r"content\)"):
        train(*splits, config, checkpoint_dir=ckpt)
    _write_vectors(vec, words, 16, seed=1)  # the vectors it started from resume it, and end as an uninterrupted run
    resumed = train(*splits, config, checkpoint_dir=ckpt)
    assert len(resumed.history) == 2
    np.testing.assert_array_equal(resumed.model.embedding_table(), train(*splits, config).model.embedding_table())


def test_the_same_vectors_named_from_another_directory_resume_and_other_vectors_are_refused(small_train_file, tmp_path,
                                                                                            monkeypatch):
    """A checkpoint compared --pretrained-vectors as typed: the same run resumed from the parent directory
    (``proj/v.vec`` for ``v.vec``, the same file) was refused, and its suggestion named a file that is not there
    from where it ran. Whether vectors were given is compared; their content is the data fingerprint's."""
    from conftest import cli_in_process
    from fasttext_lib.predict import Predictor

    proj = tmp_path / "proj"
    proj.mkdir()
    words = sorted({w for text in generate_reviews(200, seed=3).texts for w in text.lower().split()})[:80]
    _write_vectors(proj / "v.vec", words, 8, seed=1)
    _write_vectors(tmp_path / "other.vec", words, 8, seed=2)  # (the same words and dimension, other values)

    def command(vectors, checkpoints, output):
        return ["train", "--train", small_train_file, "--output", output, "--epochs", "2", "--emsize", "8",
                "--batch-size", "64", "--seed", "4", "--no-progress", "--ctx", "cpu", "--checkpoint-dir", checkpoints,
                *(["--pretrained-vectors", vectors] if vectors else [])]

    monkeypatch.chdir(proj)
    first = cli_in_process(*command("v.vec", "ckpt", "first"))
    assert first.returncode == 0, first.stderr
    monkeypatch.chdir(tmp_path)
    resumed = cli_in_process(*command("proj/v.vec", "proj/ckpt", "resumed"))
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming from the checkpoint in proj/ckpt: epoch 2 of 2 done" in resumed.stderr, resumed.stderr
    np.testing.assert_array_equal(Predictor.load(str(proj / "first")).model.embedding_table(),
                                  Predictor.load(str(tmp_path / "resumed")).model.embedding_table())
    for vectors, difference in (("other.vec", "the training data (its vocabulary, labels or documents) or the "
                                              "pretrained vectors' content"),
                                (None, f"pretrained_vectors {proj / 'v.vec'} -> None")):  # (recorded absolute)
        refused = cli_in_process(*command(vectors, "proj/ckpt", "refused"))
        assert refused.returncode != 0 and refused.stderr.count("error: ") == 1, refused.stderr
        assert f"was written by a different run ({difference})" in refused.stderr, refused.stderr
        assert not (tmp_path / "refused").exists()


def test_the_rerun_a_refused_resume_suggests_names_the_vectors_so_that_it_runs_when_pasted(small_train_file, tmp_path,
                                                                                             monkeypatch):
    """A resume refused for other --epochs and no --pretrained-vectors suggested "rerun with --epochs 2
    --pretrained-vectors v.vec": the path as the first run typed it, in another directory, naming no file from where
    this run is (and, in a folder named with a space, two shell words). The suggestion, pasted, resumes the run."""
    import shlex

    from conftest import cli_in_process

    proj = tmp_path / "my proj"
    proj.mkdir()
    words = sorted({w for text in generate_reviews(200, seed=3).texts for w in text.lower().split()})[:80]
    _write_vectors(proj / "v.vec", words, 8, seed=1)

    def command(epochs, checkpoints, output, *more):
        return ["train", "--train", small_train_file, "--output", output, "--emsize", "8", "--batch-size", "64",
                "--seed", "4", "--no-progress", "--ctx", "cpu", "--checkpoint-dir", checkpoints,
                *(["--epochs", epochs] if epochs else []), *more]

    monkeypatch.chdir(proj)
    first = cli_in_process(*command("2", "ckpt", "first", "--pretrained-vectors", "v.vec"))
    assert first.returncode == 0, first.stderr
    monkeypatch.chdir(tmp_path)
    refused = cli_in_process(*command("3", "my proj/ckpt", "refused"))
    assert refused.returncode != 0 and refused.stderr.count("error: ") == 1, refused.stderr
    suggested = refused.stderr.split("rerun with ", 1)[1].split(" to resume it", 1)[0]
    pasted = cli_in_process(*command(None, "my proj/ckpt", "resumed", *shlex.split(suggested)))
    assert pasted.returncode == 0, (suggested, pasted.stderr)
    assert "resuming from the checkpoint in my proj/ckpt: epoch 2 of 2 done" in pasted.stderr, pasted.stderr


@pytest.mark.parametrize("data, min_count, ngrams, resumes", [("quoted", 2, 1, False), ("br", 2, 2, False),
                                                               ("quoted", 1, 1, False), ("ascii", 1, 2, True),
                                                               ("ascii", 2, 1, False)])
def test_a_checkpoint_written_before_typographic_quotes_were_read_as_ascii_resumes_only_where_exact(
        tmp_path, monkeypatch, data, min_count, ngrams, resumes):
    """A checkpoint written by the version before typographic quotes were read as ASCII ones and <br>, <br/> as line
    breaks records "NFC-tokens": its run read “great” as a word seen once (min_count 2: <unk>), today's reads great, a
    word of the vocabulary, and food<br> was <unk> where today's food is a word. Vocabulary, labels and token counts
    are the same, so the data fingerprint is too: resumed, the run mixed both rules' epochs (and its bundle said
    "NFC-tokens-quotes-br"). Such a checkpoint resumes only with min_count 1, where the fingerprint is exact (“great”
    was a word of its vocabulary, never of today's: another vocabulary, refused as other data)."""
    from fasttext_lib import text as text_module

    # (20,000 buckets: with the default 2M, a bigram case saved, hashed and read back an 800 MB table for a refusal
    # or a resume that the bucket count does not decide)
    config = TrainConfig(epochs=2, batch_size=16, progress=False, seed=4, min_count=min_count, ngrams=ngrams,
                         buckets=20000)
    labels = ["pos", "neg"] * 30
    texts = LabeledTexts(labels, [("great food" if label == "pos" else "bad bad bad food") for label in labels])
    texts.texts[0] = {"quoted": "“great” food", "br": "great food<br>", "ascii": "great food"}[data]
    ckpt = tmp_path / "ckpt"
    with monkeypatch.context() as old:  # as the library trained before
        old.setattr(text_module, "TRAINING_FORM", text_module.NFC_TOKENS)
        with pytest.raises(Crash):
            train(texts, None, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(1))
    written = json.loads((ckpt / "epoch-0001" / "checkpoint.json").read_text())
    assert written["unicode_normalization"] == "NFC-tokens"
    if resumes:
        assert len(train(texts, None, config, checkpoint_dir=str(ckpt)).history) == 2
    elif min_count == 1:
        with pytest.raises(FastTextError, match="epoch-0001 was written by a different run .the training data"):
            train(texts, None, config, checkpoint_dir=str(ckpt))
    else:
        with pytest.raises(FastTextError, match="epoch-0001 was written by an older version of this library, which "
                                                "read typographic quotes .* as parts of words"):
            train(texts, None, config, checkpoint_dir=str(ckpt))


@pytest.mark.parametrize("data, min_count, outcome", [("alike", 1, "older"), ("alike", 2, "older"),
                                                       ("told", 1, "other data"), ("none", 1, "resumes")])
def test_a_checkpoint_written_before_formed_line_breaks_were_read_resumes_only_where_the_data_tells(
        tmp_path, monkeypatch, data, min_count, outcome):
    """A checkpoint written before a <br /> the rules form was a space too (text.FORMED_BREAKS) records
    "NFC-tokens-quotes-br": its run read great<br\t/>food as great<br and />food, today's as great food. Those words
    may be words of both vocabularies (another document has them apart), the document has two tokens under both
    rules, and with the counts in the same order the data fingerprint is the same, even with min_count 1: resumed,
    the run mixed both rules' epochs. Refused then; with min_count 1 and no word ending in <br (or none starting
    with />) the fingerprint tells (another vocabulary), and data without any resumes."""
    from fasttext_lib import text as text_module
    from fasttext_lib.features import Featurizer

    config = TrainConfig(epochs=2, batch_size=16, progress=False, seed=4, min_count=min_count)
    labels = ["pos", "neg"] * 30
    texts = LabeledTexts(labels, [("great food" if label == "pos" else "bad bad bad food") for label in labels])
    texts.texts[0] = "great<br\t/>food" if data != "none" else "great food<br>"
    if data == "alike":
        texts.texts[2] = texts.texts[4] = "great<br zzz />food"
    ckpt = tmp_path / "ckpt"
    with monkeypatch.context() as old:  # as the library trained before
        old.setattr(text_module, "TRAINING_FORM", text_module.QUOTES_AND_BREAKS)
        with pytest.raises(Crash):
            train(texts, None, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(1))
        vocabulary_then = Featurizer.fit(texts.texts, min_count=min_count).vocab.idx_to_token
    assert json.loads((ckpt / "epoch-0001" / "checkpoint.json").read_text())["unicode_normalization"] == \
        "NFC-tokens-quotes-br"
    assert (Featurizer.fit(texts.texts, min_count=min_count).vocab.idx_to_token == vocabulary_then) == (data != "told")
    if outcome == "resumes":
        assert len(train(texts, None, config, checkpoint_dir=str(ckpt)).history) == 2
        return
    with pytest.raises(FastTextError, match="epoch-0001 was written by an older version of this library, which read "
                       "a <br /> its rules formed .* as parts of words" if outcome == "older" else
                       "epoch-0001 was written by a different run .the training data"):
        train(texts, None, config, checkpoint_dir=str(ckpt))


@pytest.mark.parametrize("data, min_count, outcome", [("marked", 1, "other data"), ("marked", 2, "older"),
                                                       ("plain", 2, "older"), ("plain", 1, "resumes")])
def test_a_checkpoint_written_before_variation_selectors_and_direction_marks_were_dropped_resumes_only_where_exact(
        tmp_path, monkeypatch, data, min_count, outcome):
    """A checkpoint written before emoji variation selectors and direction marks were dropped (text.MARKS) records
    "NFC-tokens-quotes-br-fixpoint": its run read ❤️ as a word seen once (min_count 2: <unk>), today's reads ❤, a word
    of the vocabulary, with the same vocabulary, labels and token counts. Resumed, the run mixed both rules' epochs
    (and its bundle recorded the new rule). With min_count 1 the fingerprint tells: ❤️ was a word of the old
    vocabulary, and no word today has a selector or a mark in it (another vocabulary, refused as other data); data
    without any resumes."""
    from fasttext_lib import text as text_module

    config = TrainConfig(epochs=2, batch_size=16, progress=False, seed=4, min_count=min_count)
    labels = ["pos", "neg"] * 30
    texts = LabeledTexts(labels, [("great ❤ food" if label == "pos" else "bad bad bad food") for label in labels])
    texts.texts[0] = "great ❤\ufe0f food" if data == "marked" else "great food"
    texts.texts[1] = "bad\u200f bad bad food" if data == "marked" else "bad food"
    ckpt = tmp_path / "ckpt"
    with monkeypatch.context() as old:  # as the library trained before
        old.setattr(text_module, "TRAINING_FORM", text_module.FORMED_BREAKS)
        with pytest.raises(Crash):
            train(texts, None, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(1))
    assert json.loads((ckpt / "epoch-0001" / "checkpoint.json").read_text())["unicode_normalization"] == \
        "NFC-tokens-quotes-br-fixpoint"
    if outcome == "resumes":
        assert len(train(texts, None, config, checkpoint_dir=str(ckpt)).history) == 2
        return
    with pytest.raises(FastTextError, match="epoch-0001 was written by an older version of this library, which read "
                       "emoji variation selectors .❤️. and right-to-left direction marks as parts of words"
                       if outcome == "older" else "epoch-0001 was written by a different run .the training data"):
        train(texts, None, config, checkpoint_dir=str(ckpt))


def test_a_checkpoint_of_a_text_rule_this_library_does_not_know_is_refused(tmp_path):
    config = TrainConfig(epochs=2, batch_size=16, progress=False, seed=4)
    texts = make_splits(200, 10, seed=3)[0]
    ckpt = tmp_path / "ckpt"
    with pytest.raises(Crash):
        train(texts, None, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(1))
    manifest = ckpt / "epoch-0001" / "checkpoint.json"
    manifest.write_text(json.dumps(dict(json.loads(manifest.read_text()), unicode_normalization="NFC-tokens-v9")))
    with pytest.raises(FastTextError, match="read text in Unicode form 'NFC-tokens-v9', this one in "
                                            "'NFC-tokens-quotes-br-fixpoint-marks'"):
        train(texts, None, config, checkpoint_dir=str(ckpt))


def _greek_reviews(rare_capital):
    """Reviews whose word ᾴι (many times, precomposed) and, once, its capital ΆͅΙ (``rare_capital``): lowercased,
    ΆͅΙ is ά + U+0345 + ι, put in NFC again ᾴι (text.lowered, NFC_TOKENS)."""
    labels = ["pos", "neg"] * 30
    texts = [("ᾴι good food" if label == "pos" else "bad food here") for label in labels]
    if rare_capital:
        texts[0] = "ΆͅΙ good food"
    return LabeledTexts(labels, texts)


@pytest.mark.parametrize("data, min_count, ngrams, resumes", [("greek", 2, 1, False), ("ascii", 2, 1, False),
                                                               ("ascii, one greek word", 2, 2, False),
                                                               ("greek", 1, 1, False), ("ascii", 1, 2, True)])
def test_a_checkpoint_written_before_tokens_were_put_in_nfc_resumes_only_where_that_changes_nothing(
        tmp_path, monkeypatch, data, min_count, ngrams, resumes):
    """A checkpoint written by the version before tokens were put in NFC again once lowercased (its checkpoint.json
    has no "unicode_normalization"): its run read ΆͅΙ as ά + U+0345 + ι, a word seen once (min_count 2: <unk>),
    today's as ᾴι, a word of the vocabulary. The vocabulary, labels and token counts were the same, so the data
    fingerprint was too, and the run resumed silently with one rule's epochs and the other's (and a bundle saying
    "NFC-tokens"); with bigrams, an <unk> word's spelling sets its bigrams' buckets. Such a checkpoint resumes only
    where the fingerprint is exact: min_count 1 (the old spelling was a word of its vocabulary: another vocabulary,
    refused as other data). (No n-grams and an all-ASCII vocabulary was exact too, before typographic quotes were read
    as ASCII ones: “great” is <unk> in such a run, great a word of today's.)"""
    from fasttext_lib import native_features, text as text_module

    # (20,000 buckets: with the default 2M, a bigram case saved, hashed and read back an 800 MB table for a refusal
    # or a resume that the bucket count does not decide)
    config = TrainConfig(epochs=2, batch_size=16, progress=False, seed=4, min_count=min_count, ngrams=ngrams,
                         buckets=20000)
    texts = _greek_reviews(rare_capital=True) if data == "greek" else make_splits(400, 10, seed=3)[0]
    if data == "ascii, one greek word":
        texts.texts[0] += " ΆͅΙ"
    ckpt = tmp_path / "ckpt"
    first_form = text_module.lowered
    with monkeypatch.context() as old:  # as the library trained before: NFC before lowercasing only
        old.setattr(text_module, "lowered", lambda text, form=None: first_form(text, text_module.NFC_FIRST))
        old.setattr(native_features, "lowered", lambda text, form=None: first_form(text, text_module.NFC_FIRST))
        with pytest.raises(Crash):
            train(texts, None, config, checkpoint_dir=str(ckpt), on_epoch_end=_crash_after(1))
    manifest = ckpt / "epoch-0001" / "checkpoint.json"
    written = json.loads(manifest.read_text())
    written.pop("unicode_normalization", None)
    manifest.write_text(json.dumps(written))  # as the version before wrote it
    if resumes:
        assert len(train(texts, None, config, checkpoint_dir=str(ckpt)).history) == 2
    else:
        with pytest.raises(FastTextError, match="epoch-0001 was written by (an older version.*Unicode NFC|a "
                                                "different run .the training data)"):
            train(texts, None, config, checkpoint_dir=str(ckpt))


def test_a_full_tmpdir_while_the_optimizer_state_is_staged_is_one_error_line(tmp_path, tmpfs):
    """np.savez into an open file left its zip unclosed when the disk filled: after the error line, the zip's
    finalizer failed on the closed file at exit ('Exception ignored in: <function ZipFile.__del__ ...>' and a
    traceback on stderr). The checkpoint's arrays (adam's: twice the table) are staged in TMPDIR, where the
    table itself still fits."""
    from conftest import run_cli

    sample = os.path.join(ROOT, "fasttext_lib", "sample_data", "amazon_snippets_train.csv")
    tmp = tmpfs("4m")  # model.params (~1.9 MB) fits, optimizer.npz (~3.8 MB) does not
    r = run_cli("train", "--train", sample, "--output", tmp_path / "out", "--checkpoint-dir", tmp_path / "ckpt",
                "--optimizer", "adam", "--epochs", "2", "--no-progress",
                env={"TMPDIR": str(tmp), "OMP_NUM_THREADS": "1"})
    errors = [line for line in r.stderr.splitlines() if not re.match(r"\[[\d:]+\] |\{", line)]  # (MXNet's own notes)
    assert r.returncode == 2 and errors == [f"error: no room for temporary files in {tmp} (No space left on device); "
                                            f"free space there or set TMPDIR to a directory with more room"], r.stderr
    assert not os.listdir(tmp) and not (tmp_path / "out").exists()


@pytest.mark.parametrize("pickled", ["older", "newest, cut short"])
def test_a_pickled_checkpoint_the_synced_directorys_resume_would_read_is_refused_before_the_data(splits, tmp_path,
                                                                                              pickled):
    """In SageMaker's synced directory an incomplete newest checkpoint is set aside and the one before it resumed.
    Only the newest one's format was checked before the data was read, so an older version's pickled epoch 1 behind
    an incomplete epoch 2 was let through, and refused by the resume only after the job had read all its data. Every
    epoch the resume may read is checked now (a pickled one is refused even when incomplete), in the resume's line;
    nothing is unpickled."""
    import shutil

    from fasttext_lib.checkpoints import Search, refuse_an_older_format

    config = TrainConfig(epochs=3, batch_size=256, progress=False, seed=4)
    ckpt, epoch, ran = _a_pickled_checkpoint(splits, tmp_path, config)
    with pytest.raises(Crash):
        train(*splits, config, checkpoint_dir=str(tmp_path / "other"), on_epoch_end=_crash_after(2))
    if pickled == "older":
        shutil.copytree(tmp_path / "other" / "epoch-0002", ckpt / "epoch-0002")
        next((ckpt / "epoch-0002").glob("model-*.params")).unlink()  # (what a sync cut short leaves)
    else:
        os.rename(epoch, ckpt / "epoch-0002")
        epoch = ckpt / "epoch-0002"
        meta = json.loads((epoch / "checkpoint.json").read_text())
        (epoch / "checkpoint.json").write_text(json.dumps(dict(meta, epoch=2, history=meta["history"] + [
            dict(meta["history"][0], epoch=2)])))
        next(epoch.glob("optimizer-*.states")).unlink()
        shutil.copytree(tmp_path / "other" / "epoch-0002", ckpt / "epoch-0001")  # (its name only: never read)
    with pytest.raises(FastTextError) as resumed:  # (the resume's own refusal, after the data is read)
        train(*splits, config, checkpoint_dir=str(ckpt), checkpoint_search=Search((1, 2), synced=True),
              said_as_flags=True)  # (as the job calls it: its in_job_terms reads the flags)
    with pytest.raises(FastTextError) as refused:
        refuse_an_older_format(str(ckpt), 3, synced=True)
    assert str(refused.value) == str(resumed.value), str(refused.value)
    assert str(refused.value).startswith(f"checkpoint {epoch} was written by an older version") and not ran.exists()


def _ctrl_c():
    signal.getsignal(signal.SIGINT)(signal.SIGINT, None)  # what Ctrl-C arriving here runs


@pytest.mark.parametrize("when", ["after epoch 2", "before the first checkpoint", "while the data is read",
                                  "while the bundle is written", "as training returns"])
def test_a_stopped_cli_run_says_which_checkpoint_it_keeps(tmp_path, small_train_file, monkeypatch, when):
    """Ctrl-C during `train --checkpoint-dir` said 'interrupted (SIGINT); stopped and cleaned up': nothing of the
    checkpoint kept, nor that the same command resumes from it ('cleaned up' read as the checkpoints removed). Now
    the line names the newest checkpoint there and says to rerun; a run stopped before there is one says what it
    said. The rerun then resumes from that epoch. (As training returns: the command confirmed the last epoch's
    checkpoint as kept only once train() had returned, and a stop in between named none.)"""
    from conftest import cli_in_process
    import fasttext_lib.bundle as bundle_module
    import fasttext_lib.cli as cli_module
    import fasttext_lib.data as data_module
    import fasttext_lib.train as train_module

    ckpt, out = tmp_path / "ck", tmp_path / "model"
    command = _checkpoint_command(small_train_file, str(ckpt), out)[3:]
    if when == "while the data is read":  # an earlier run, stopped after its epoch 1, left epoch-0001
        monkeypatch.setattr(cli_module, "say", lambda text, **kw: _ctrl_c() if '"epoch": 1,' in text else None)
        assert cli_in_process(*command).returncode == 130
        monkeypatch.undo()
        real_read = data_module.read_counted
        monkeypatch.setattr(data_module, "read_counted", lambda *a, **kw: (_ctrl_c(), real_read(*a, **kw))[1])
        kept = 1
    elif when == "after epoch 2":
        monkeypatch.setattr(cli_module, "say", lambda text, **kw: _ctrl_c() if '"epoch": 2,' in text else None)
        kept = 2
    elif when == "before the first checkpoint":
        monkeypatch.setattr(train_module, "save_checkpoint", lambda *a, **kw: _ctrl_c())
        kept = None
    elif when == "as training returns":
        real_train = train_module.train
        monkeypatch.setattr(train_module, "train", lambda *a, **kw: (real_train(*a, **kw), _ctrl_c())[0])
        kept = 3
    else:
        monkeypatch.setattr(bundle_module, "save_bundle", lambda *a, **kw: _ctrl_c())
        kept = 3
    stopped = cli_in_process(*command)
    monkeypatch.undo()
    if kept is None:
        assert (stopped.returncode, stopped.stderr) == (130, "error: interrupted (SIGINT); stopped and cleaned up\n")
        return
    where = os.path.join(str(ckpt), f"epoch-{kept:04d}")
    # (before the data is read, the checkpoint found may be another run's: the line says so)
    found, condition = ((" (not yet compared with the data)", " if it was written from the same data")
                        if when == "while the data is read" else ("", ""))
    assert (stopped.returncode, stopped.stderr) == (130, (
        f"error: interrupted (SIGINT); stopped and cleaned up, keeping the checkpoint of epoch {kept} in {where}{found}: "
        f"run the same command again to resume from it{condition}\n"))
    assert not out.exists()
    rerun = cli_in_process(*command)
    assert rerun.returncode == 0 and f"epoch {kept} of 3 done" in rerun.stderr, rerun.stderr



def _stop_once_published(monkeypatch, stop):
    """Have ``stop`` run just after bundle.publish_bundle has put the bundle in place (its config.json committed) and
    before save_bundle returns: what a signal arriving as save_bundle removes its staging folder runs."""
    import fasttext_lib.bundle as bundle_module

    real = bundle_module.publish_bundle

    def published_then_stopped(*args, **kwargs):
        where = real(*args, **kwargs)
        stop()
        return where

    monkeypatch.setattr(bundle_module, "publish_bundle", published_then_stopped)


def _stop_in_the_last_line(monkeypatch, stop):
    """Have ``stop`` run as the command prints its last line ('bundle written to ...', which names the device)."""
    import fasttext_lib.devices as devices_module

    monkeypatch.setattr(devices_module, "describe_ctx", lambda ctx: stop())


@pytest.mark.parametrize("checkpoints", [True, False])
@pytest.mark.parametrize("stopping", [_stop_once_published, _stop_in_the_last_line],
                         ids=["as its save ends", "as it says so"])
def test_a_cli_run_stopped_once_its_bundle_is_written_says_so_and_not_to_run_it_again(tmp_path, small_train_file,
                                                                                     monkeypatch, checkpoints, stopping):
    """A stop once the bundle was published said 'stopped and cleaned up, keeping the checkpoint of epoch 3 in ...:
    run the same command again to resume from it' (or, without --checkpoint-dir, 'stopped and cleaned up'): the bundle
    was there all the same, and the same command run again was refused, as --output held a bundle. Now the line says
    where the bundle was written, from the moment its config.json is in place (storage.publish's on_commit: a stop as
    save_bundle removes its staging folder too), to the command's last line; the status is still the stop's."""
    from conftest import cli_in_process

    ckpt, out = tmp_path / "ck", tmp_path / "model"
    command = _checkpoint_command(small_train_file, str(ckpt), out)[3:]
    command = command if checkpoints else command[:-2]
    stopping(monkeypatch, _ctrl_c)
    stopped = cli_in_process(*command)
    monkeypatch.undo()
    assert (stopped.returncode, stopped.stderr.splitlines()[-1]) == (
        130, f"error: interrupted (SIGINT); stopped after the bundle was written to {out}"), stopped.stderr
    assert stopped.stderr.count("error:") == 1
    assert cli_in_process("predict", "--model", str(out), input="good food\n").returncode == 0


def test_train_stopped_with_a_checkpoint_dir_tells_the_caller_and_the_notebook_what_it_keeps(splits, tmp_path):
    """The Python API: train(checkpoint_dir=...) stopped (a notebook's Stop, Ctrl-C in a script) raised a bare
    KeyboardInterrupt, and a notebook showed IPython's traceback through the training loop. Now the exception
    carries a note naming the checkpoint kept, and a notebook shows one line that says to run the cell again."""
    from fasttext_lib.notebook_errors import _error_as_line

    config = TrainConfig(epochs=3, batch_size=256, progress=False, seed=4)
    ckpt = str(tmp_path / "ckpt")

    def stop_after_epoch_2(row):
        if row["epoch"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as stopped:
        train(*splits, config, checkpoint_dir=ckpt, on_epoch_end=stop_after_epoch_2)
    where = os.path.join(ckpt, "epoch-0002")
    assert stopped.value.__notes__ == [
        f"the checkpoint of epoch 2 is kept in {where}: train again with the same checkpoint_dir to resume from it"]

    class Shell:
        @staticmethod
        def _showtraceback(shell, etype, value, lines):
            shown.extend(lines)

    shown = []
    _error_as_line(Shell(), KeyboardInterrupt, stopped.value, None)
    assert shown == [f"error: interrupted (SIGINT); stopped and cleaned up, keeping the checkpoint of epoch 2 in "
                     f"{where}: run the cell again to resume from it"]


def test_a_cli_run_stopped_while_its_data_is_read_does_not_promise_another_runs_checkpoint(tmp_path, small_train_file,
                                                                                          monkeypatch):
    """A --checkpoint-dir holding the checkpoint of a run on other data (same settings): Ctrl-C while this run read
    its data said 'keeping the checkpoint of epoch 1 in ...: run the same command again to resume from it', and
    the rerun was refused as 'written by a different run'. Until the data is read, nobody knows whose it is: the
    line says it was not compared yet. The rerun then says whose it is, as the run would have."""
    from conftest import cli_in_process
    import fasttext_lib.data as data_module
    from fasttext_lib.writers import write_csv

    other = tmp_path / "other.csv"
    data = generate_reviews(900, seed=11)
    write_csv(LabeledTexts(data.labels, data.texts), str(other))
    ckpt, out = tmp_path / "ck", tmp_path / "model"
    command = _checkpoint_command(small_train_file, str(ckpt), out, epochs=1)[3:] + ["--lr", "0.5"]  # (lr: not the data's)
    first = cli_in_process("train", "--train", other, "--output", tmp_path / "other-model", *command[5:])
    assert first.returncode == 0, first.stderr
    real_read = data_module.read_counted
    monkeypatch.setattr(data_module, "read_counted", lambda *a, **kw: (_ctrl_c(), real_read(*a, **kw))[1])
    stopped = cli_in_process(*command)
    monkeypatch.undo()
    where = os.path.join(str(ckpt), "epoch-0001")
    assert (stopped.returncode, stopped.stderr) == (130, (
        f"error: interrupted (SIGINT); stopped and cleaned up, keeping the checkpoint of epoch 1 in {where} (not yet "
        f"compared with the data): run the same command again to resume from it if it was written from the same data\n"))
    rerun = cli_in_process(*command)
    assert rerun.returncode == 2 and f"checkpoint {where} was written by a different run" in rerun.stderr


def test_a_save_stopped_while_it_sweeps_leftovers_names_its_own_checkpoint_not_the_one_it_removed(splits, tmp_path,
                                                                                                  monkeypatch):
    """A save removes the epoch before its own, then the epoch directories without a marker that an interrupted save
    left. A stop during that sweep named the epoch before (removed by then) as the checkpoint kept: a rerun would
    resume from another one than the line said. Now it names the one just saved, which is there."""
    import fasttext_lib.checkpoints as checkpoints_module

    config = TrainConfig(epochs=3, batch_size=256, progress=False, seed=4)
    ckpt = tmp_path / "ckpt"
    real_remove = checkpoints_module.storage.remove

    def remove(where, marker):
        if str(where).endswith("epoch-0009"):  # the leftover: a stop arrives while it is removed
            raise KeyboardInterrupt
        return real_remove(where, marker)

    def leave_a_leftover(row):
        if row["epoch"] == 1:  # (what an interrupted save of another run left: no marker)
            (ckpt / "epoch-0009").mkdir()

    monkeypatch.setattr(checkpoints_module.storage, "remove", remove)
    with pytest.raises(KeyboardInterrupt) as stopped:
        train(*splits, config, checkpoint_dir=str(ckpt), on_epoch_end=leave_a_leftover)
    where, epoch, _, _ = stopped.value.checkpoint_kept
    assert (where, epoch) == (str(ckpt / "epoch-0002"), 2) and (ckpt / "epoch-0002" / "checkpoint.json").is_file()


def test_a_checkpoint_refusal_to_a_caller_of_train_names_its_arguments_not_the_clis_flags(splits, tmp_path):
    """train(checkpoint_dir=...) refused a checkpoint it cannot resume with "use another --checkpoint-dir or remove
    it" and "rerun with --epochs 1": flags of the command line, which a caller of the Python API (a notebook) has
    none of. It now names train's checkpoint_dir and TrainConfig's epochs; the CLI and the training job keep theirs
    (sm_train.in_job_terms rewrites the flags)."""
    ckpt = str(tmp_path / "ckpt")
    config = TrainConfig(epochs=1, emsize=8, batch_size=64, progress=False)
    train(*splits, config, checkpoint_dir=ckpt)
    half = LabeledTexts(splits[0].labels[:400], splits[0].texts[:400])  # other data: found once it is read
    with pytest.raises(FastTextError) as other_data:
        train(half, splits[1], config, checkpoint_dir=ckpt)
    with pytest.raises(FastTextError) as more_epochs:  # found before the data is read (refuse_other_settings)
        train(*splits, TrainConfig(epochs=2, emsize=8, batch_size=64, progress=False), checkpoint_dir=ckpt)
    for told, said in ((other_data, "use another checkpoint_dir or remove it"), (more_epochs, "epochs=1")):
        assert "--" not in str(told.value) and said in str(told.value), told.value


def test_a_stop_just_after_a_save_returns_names_the_checkpoint_it_saved(splits, tmp_path, monkeypatch):
    """train confirmed a save's epoch as the one kept only once save_checkpoint had returned, after it had removed the
    epoch before: a stop in between (a few bytecodes) named that removed epoch. The save now confirms its own epoch
    the moment its checkpoint.json is in place."""
    import fasttext_lib.train as train_module

    real_save = train_module.save_checkpoint

    def save(checkpoint_dir, epoch, *args, **kwargs):
        real_save(checkpoint_dir, epoch, *args, **kwargs)
        if epoch == 2:  # the stop arrives as the save returns
            raise KeyboardInterrupt

    monkeypatch.setattr(train_module, "save_checkpoint", save)
    ckpt = tmp_path / "ckpt"
    with pytest.raises(KeyboardInterrupt) as stopped:
        train(*splits, TrainConfig(epochs=3, batch_size=256, progress=False, seed=4), checkpoint_dir=str(ckpt))
    where, epoch, _, compared = stopped.value.checkpoint_kept
    assert (where, epoch, compared) == (str(ckpt / "epoch-0002"), 2, True)
    assert (ckpt / "epoch-0002" / "checkpoint.json").is_file() and not (ckpt / "epoch-0001").exists()


@pytest.mark.parametrize("stopped_in", ["_s3_collect", "_put_manifest"])
def test_a_stop_in_an_s3_save_after_its_commit_names_the_checkpoint_it_saved(splits, s3_bucket, monkeypatch,
                                                                              stopped_in):
    """On S3 a stop within a save after its checkpoint.json was put (while the replaced objects are collected, or as
    the PUT's answer came) named the epoch before, while the rerun resumes from the one just saved (the newest). The
    save now takes its epoch as the one kept the moment its PUT is answered, with no S3 call more during the stop."""
    import fasttext_lib.storage.sets as sets_module

    real = getattr(sets_module, stopped_in)
    calls = []

    def stopping(*args, **kwargs):
        answer = real(*args, **kwargs)
        calls.append(stopped_in)
        if len(calls) == 2:  # epoch 2's save: its checkpoint.json is in place
            raise KeyboardInterrupt
        return answer

    monkeypatch.setattr(sets_module, stopped_in, stopping)
    ckpt = f"{s3_bucket}/stopped"
    with pytest.raises(KeyboardInterrupt) as stopped:
        train(*splits, TrainConfig(epochs=3, batch_size=256, progress=False, seed=4), checkpoint_dir=ckpt)
    where, epoch, _, compared = stopped.value.checkpoint_kept
    assert (where, epoch, compared) == (f"{ckpt}/epoch-0002", 2, True)
    assert storage.exists(f"{ckpt}/epoch-0002/checkpoint.json")


@pytest.mark.parametrize("folder", ["rerun with me", "rerun with bob's", "a--checkpoint-dir"])
def test_a_checkpoint_refusal_in_arguments_keeps_a_path_that_reads_like_its_remedy(splits, tmp_path, folder):
    """The refusal's remedy is rewritten from the CLI's flags to train's arguments in its text, and the rewrite took
    the checkpoint's path for part of it: a path holding "rerun with" became TrainConfig(...) of its words (or an
    IndexError or shlex ValueError traceback), one holding "--checkpoint-dir" lost its dashes. Only the remedy is
    rewritten now; the path is said as it is."""
    ckpt = str(tmp_path / folder / "ckpt")
    config = TrainConfig(epochs=1, emsize=8, batch_size=64, progress=False)
    train(*splits, config, checkpoint_dir=ckpt)
    with pytest.raises(FastTextError) as more_epochs:
        train(*splits, TrainConfig(epochs=2, emsize=8, batch_size=64, progress=False), checkpoint_dir=ckpt)
    told = str(more_epochs.value)
    assert told.startswith(f"checkpoint {os.path.join(ckpt, 'epoch-0001')} was written by a different run ("), told
    assert "rerun with TrainConfig(epochs=1) to resume it" in told and "use another checkpoint_dir" in told, told
