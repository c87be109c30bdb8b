"""Compact bundles (compact.py): only changed rows stored; exact with float32, close with float16."""
import json
import os

import numpy as np
import pytest

from conftest import as_an_older_writer_left_it, cli_in_process, make_splits, params_of, run_cli
from fasttext_lib.bundle import save_bundle
from fasttext_lib.compact import ROWS_FILE, changed_rows
from fasttext_lib.config import TrainConfig
from fasttext_lib.errors import FastTextError
from fasttext_lib.predict import Predictor
from fasttext_lib.train import train


@pytest.fixture(scope="module")
def small():
    # 500k buckets (not the default 2M): a bigram table still ~11x the rows 400 reviews change, and 50M values
    # (a dozen of all_finite's blocks), at a quarter of the time and memory each dense copy of it costs.
    # (test_cli_writes_a_compact_bundle keeps the default 2M.)
    splits = make_splits(400, 200, seed=9)
    return train(*splits, TrainConfig(epochs=2, batch_size=64, ngrams=2, buckets=500_000, optimizer="sgd", lr=0.5,
                                      progress=False)), splits


@pytest.fixture(scope="module")
def float32_bundle(small, tmp_path_factory):
    """``small``'s model saved as a float32 compact bundle, once (not to be modified: tests that damage it copy it)."""
    return save_bundle(small[0], str(tmp_path_factory.mktemp("float32") / "b"), compact="float32")


@pytest.fixture(scope="module")
def full_bundle(small, tmp_path_factory):
    """``small``'s model saved as a full bundle (its whole 200 MB table), once (not to be modified)."""
    return save_bundle(small[0], str(tmp_path_factory.mktemp("full") / "b"), compact="none")


@pytest.fixture(scope="module")
def small_files(small, tmp_path_factory):
    """``small``'s 400 training and 200 validation documents as train.csv and test.csv, for the command line (the
    session's sample_dir has 4,000 reviews to generate and train on, for checks that need a bundle of each kind)."""
    from fasttext_lib.writers import write_csv

    d = tmp_path_factory.mktemp("small_files")
    for name, split in zip(("train.csv", "test.csv"), small[1]):
        write_csv(split, str(d / name))
    return d


def _size(directory):
    return sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory))


def test_float32_compact_bundle_is_exact_and_small(small, full_bundle, tmp_path):
    trained, (_, val) = small
    full = Predictor.load(full_bundle)
    where = save_bundle(trained, str(tmp_path / "compact"), compact="float32")
    compact = Predictor.load(where)
    for name, value in params_of(trained).items():  # the rebuilt model is the trained one, bit for bit
        np.testing.assert_array_equal(compact.model._collect_params_with_prefix()[name].data().asnumpy(), value)
    np.testing.assert_array_equal(compact.predict_proba(val.texts), full.predict_proba(val.texts))
    assert _size(where) < _size(full_bundle) / 8  # 400 reviews change ~1/11 of the 509k rows
    stored = compact.config["compact"]["rows_stored"]
    table = trained.model.embedding_table()
    assert 0 < stored < len(table) / 10 and stored == len(changed_rows(table, trained.config.seed))


def test_float16_compact_bundle_predicts_within_1e3(small, full_bundle, tmp_path):
    trained, (_, val) = small
    reference = Predictor.load(full_bundle).predict_proba(val.texts)
    half = Predictor.load(save_bundle(trained, str(tmp_path / "half"), compact="float16"))
    assert np.abs(half.predict_proba(val.texts) - reference).max() < 1e-3
    assert _size(str(tmp_path / "half")) < _size(full_bundle) / 16  # half of float32's ~1/11


def test_auto_compacts_small_data_and_keeps_the_full_table_when_most_rows_changed(small, tmp_path):
    """The default (auto): exact compaction for a bigram model of small data (few of its rows
    changed), the full table when more than a quarter of the rows changed (few buckets, dense)."""
    trained, _ = small
    sparse = Predictor.load(save_bundle(trained, str(tmp_path / "sparse")))
    assert sparse.config["compact"]["dtype"] == "float32"
    for name, value in params_of(trained).items():  # exact
        np.testing.assert_array_equal(sparse.model._collect_params_with_prefix()[name].data().asnumpy(), value)
    del sparse, value  # (each dense table is 80 MB)
    dense_model = train(*make_splits(400, 200, seed=9), TrainConfig(epochs=1, batch_size=64, ngrams=2, buckets=300,
                                                                     optimizer="sgd", lr=0.5, progress=False))
    table = dense_model.model.embedding_table()
    assert len(changed_rows(table, dense_model.config.seed)) > len(table) / 4
    dense = Predictor.load(save_bundle(dense_model, str(tmp_path / "dense")))
    assert "compact" not in dense.config and ROWS_FILE not in dense.config["files"]


def test_native_changed_rows_equal_the_numpy_reference(small, monkeypatch):
    from fasttext_lib import native_features

    table = small[0].model.embedding_table()[:200_000].copy()
    table[7, 99] = np.nan  # a value that compares unequal to everything, itself included
    table[11, 50] = 0.0
    seed = small[0].config.seed
    native = changed_rows(table, seed)
    assert native_features.available() and {7, 11} <= set(native.tolist()) and 0 < len(native) < len(table) / 2
    monkeypatch.setattr(native_features, "available", lambda: False)
    np.testing.assert_array_equal(native, changed_rows(table, seed))


@pytest.mark.parametrize("dim", [1, 8, 9, 16, 17, 100])
def test_native_changed_rows_find_a_difference_at_every_position(monkeypatch, dim):
    """The native scan stops at a row's first differing value: a single changed value anywhere in a row
    (or a NaN) must be found as the numpy reference finds it, and no unchanged row reported."""
    from fasttext_lib import native_features
    from fasttext_lib.init_rows import initial_rows

    seed, n = 5, 40 * dim + 30
    table = initial_rows(seed, np.arange(n), dim)
    for i in range(0, n, 3):  # every third row differs at one position, each position in turn
        k = (i // 3) % dim
        table[i, k] = np.nan if i % 9 == 0 else np.nextafter(table[i, k], np.float32(2))
    native = changed_rows(table, seed)
    np.testing.assert_array_equal(native, np.arange(0, n, 3))
    monkeypatch.setattr(native_features, "available", lambda: False)
    np.testing.assert_array_equal(changed_rows(table, seed), native)


@pytest.mark.usefixtures("no_pause_between_rereads")  # (a file stays missing: no reread can find it)
def test_damaged_rows_file_is_one_error(small, tmp_path):
    trained, _ = small
    where = save_bundle(trained, str(tmp_path / "b"), compact="float32")
    with open(os.path.join(where, "config.json")) as f:
        stored = json.load(f)["files"][ROWS_FILE]["object"]  # the published name of the rows file
    with open(os.path.join(where, stored), "wb") as f:
        f.write(b"not a zip")
    with pytest.raises(FastTextError, match="truncated|does not match its checksum"):
        Predictor.load(where)
    os.remove(os.path.join(where, stored))
    with pytest.raises(FastTextError, match="incomplete model bundle"):
        Predictor.load(where)


@pytest.mark.parametrize("change", [
    {"compact": "int4"}, {"compact": ["float32"]}, {"compact": {"dtype": ["int8"]}}, {"compact": {"seed": 1}},
    {"compact": {"dtype": "int3", "file": ROWS_FILE}}, {"compact": {"dtype": "float32", "file": 5}},
    {"compact": {"dtype": "float32", "file": "/etc/passwd"}},
    {"buckets": "many"}, {"buckets": -1}, {"buckets": 2.5}, {"buckets": None},
], ids=lambda change: json.dumps(change))
def test_a_corrupt_compact_or_buckets_entry_is_one_error(float32_bundle, tmp_path, change):
    # config.json is the manifest (not checksummed): a hand-edited or damaged entry was an
    # AttributeError / TypeError / ValueError traceback, or read a file outside the bundle.
    import shutil

    where = shutil.copytree(float32_bundle, str(tmp_path / "b"))  # (the module's bundle, saved once: a copy to edit)
    with open(os.path.join(where, "config.json")) as f:
        config = json.load(f)
    config.update(change)
    with open(os.path.join(where, "config.json"), "w") as f:
        json.dump(config, f)
    # one CLI process per entry (the process's whole stderr is the one line); the other cases in-process
    run = run_cli if change in ({"compact": "int4"}, {"buckets": "many"}) else cli_in_process
    r = run("predict", "--model", where, input="great\n")
    assert r.returncode == 2 and r.stdout == "", r.stderr
    key = next(iter(change))
    assert r.stderr.strip().splitlines() == [
        f"error: corrupt model bundle {where}: config.json has no valid 'buckets'" if key == "buckets" else
        f"error: corrupt model bundle {where}: config.json's 'compact' entry is not a storage type "
        f"(float32, float16, int8, int4) and a file the bundle lists"]


def test_float16_refuses_values_it_cannot_hold(tmp_path):
    # A finite float32 value above 65504 (pretrained vectors can hold one) became inf in a float16
    # bundle, whose predictions then saturated or were NaN while the trained model's were not.
    from fasttext_lib.table_memory import cpu_view

    trained = train(*make_splits(200, 50, seed=1), TrainConfig(epochs=1, batch_size=64, progress=False))
    table = cpu_view(trained.model.embedding.weight.data())
    table[1] = 1e5
    # said as save_bundle's caller gives it: its argument (a notebook, the Python API), or the command line's flag
    with pytest.raises(FastTextError, match=r"^compact='float16' cannot store this model: it has values up to 1e\+05 "
                                            r"and float16 ends at 65504; use compact='float32', 'int8' or 'int4'$"):
        save_bundle(trained, str(tmp_path / "b"), compact="float16")
    with pytest.raises(FastTextError, match=r"^--compact float16 cannot store this model: it has values up to 1e\+05 "
                                            r"and float16 ends at 65504; use --compact float32, int8 or int4$"):
        save_bundle(trained, str(tmp_path / "b"), compact="float16", compact_as="--compact")
    assert not (tmp_path / "b").exists()
    for dtype in ("float32", "int8"):  # what the message proposes works, and keeps the value's size
        loaded = Predictor.load(save_bundle(trained, str(tmp_path / dtype), compact=dtype))
        assert np.isfinite(loaded.model.embedding_table()).all() and loaded.model.embedding_table()[1].max() == pytest.approx(1e5)


def _with_value(value):
    def damage(path):
        with np.load(path) as stored:
            arrays = dict(stored)
        arrays["values"][len(arrays["values"]) // 2, 3] = value
        with open(path, "wb") as f:
            np.savez(f, **arrays)
    return damage


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan], ids=["inf", "-inf", "nan"])
def test_an_older_float16_bundle_holding_inf_is_refused_on_load(small, tmp_path, value):
    # compact.save refuses values beyond float16's 65504 now; bundles written before stored them as inf and
    # loaded without a word: NaN probabilities, or one class for every text.
    from fasttext_lib import sm_serve

    trained, (_, val) = small
    where = save_bundle(trained, str(tmp_path / "half"), compact="float16")
    as_an_older_writer_left_it(where, ROWS_FILE, _with_value(value))
    expected = (f"corrupt model bundle {where}: embedding_rows.npz's stored float16 rows holds inf or NaN values, so it "
                f"cannot predict (float16 bundles written by older versions stored values beyond 65504 as inf); retrain it")
    with pytest.raises(FastTextError) as caught:
        Predictor.load(where)
    assert str(caught.value) == expected
    with pytest.raises(FastTextError, match="holds inf or NaN values"):
        sm_serve.model_fn(where)  # an endpoint refuses it at startup rather than answering NaN
    out = tmp_path / "vectors.vec"
    run = run_cli if value == np.inf else cli_in_process  # one CLI process per command; the other values in-process
    for args in (("predict", "--model", where), ("export-vectors", "--model", where, "--output", out)):
        r = run(*args, input="great food\n")
        assert (r.returncode, r.stdout, r.stderr.strip().splitlines()) == (2, "", [f"error: {expected}"]), r.stderr
    assert not out.exists() and not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_a_full_bundle_with_nan_parameters_is_refused_on_load(small, tmp_path):
    # A full bundle (the whole table in model.params), e.g. from a run before training checked for divergence.
    from mxnet import nd

    def damage(path):
        params = nd.load(path)
        params["output.weight"][0, 0] = np.nan
        nd.save(path, params)

    trained, _ = small
    where = save_bundle(trained, str(tmp_path / "full"), compact="none")
    as_an_older_writer_left_it(where, "model.params", damage)
    with pytest.raises(FastTextError, match=r"^corrupt model bundle .*: parameter 'output.weight' holds inf or NaN "
                                            r"values, so it cannot predict; retrain it$"):
        Predictor.load(where)


def test_finite_check_covers_every_value(small):
    from fasttext_lib.table_memory import all_finite

    table = small[0].model.embedding_table()  # 509k x 100: several of the check's blocks
    assert all_finite(table)
    for where in (0, table.size // 2 + 1, table.size - 1):
        saved, table.flat[where] = table.flat[where], np.inf
        assert not all_finite(table)
        table.flat[where] = saved
    from mxnet import nd  # what is no float32 CPU array (a GPU's) is asked on its device: MXNet's all_finite

    for value, finite in ((1.0, True), (np.inf, False), (np.nan, False)):
        assert all_finite(nd.array([[0.5, value]], dtype="float16")) is finite


def test_cli_writes_a_compact_bundle(small_files, tmp_path):
    sample_dir = small_files
    # (in this process: the flag's bundle and the evaluation's exit code and line are under test, not the process)
    out = tmp_path / "bundle"
    done = cli_in_process("train", "--train", str(sample_dir / "train.csv"), "--output", str(out), "--epochs", "1",
                   "--ngrams", "2", "--no-progress", "--compact", "float32")
    assert done.returncode == 0, done.stderr
    assert ROWS_FILE in json.loads((out / "config.json").read_text())["files"]
    assert _size(str(out)) < 804e6 / 4  # 400 reviews touch few of the 2M bigram rows (the full table: 804 MB)
    done = cli_in_process("evaluate", "--model", str(out), "--data", str(sample_dir / "test.csv"))
    assert done.returncode == 0 and '"accuracy"' in done.stdout


@pytest.mark.parametrize("bits,emsize", [(8, 6), (4, 6), (4, 5)])
def test_quantize_round_trip_error_is_half_a_step(bits, emsize):
    from fasttext_lib.compact import dequantize, quantize

    values = np.random.RandomState(bits + emsize).normal(0, 0.1, (50, emsize)).astype(np.float32)
    values[3] = 0.0  # an all-zero row (scale 0) comes back as zeros
    codes, scales = quantize(values, bits)
    assert codes.shape == (50, emsize if bits == 8 else (emsize + 1) // 2)
    back = dequantize(codes, scales, bits, emsize)
    step = scales / (2 ** (bits - 1) - 1)
    assert (np.abs(back - values) <= step[:, None] / 2 + 1e-7).all()
    np.testing.assert_array_equal(back[3], 0.0)
    assert np.abs(back).max(axis=1) == pytest.approx(np.abs(values).max(axis=1), rel=1e-6)  # the extremes are exact


def _rows_file_size(where):
    with open(os.path.join(where, "config.json")) as f:
        stored = json.load(f)["files"][ROWS_FILE]["object"]
    return os.path.getsize(os.path.join(where, stored))


@pytest.mark.parametrize("dtype,fraction,max_diff", [("int8", 1 / 4, 1e-3), ("int4", 1 / 8, 2e-2)])
def test_quantized_compact_bundles_are_smaller_and_close(small, float32_bundle, tmp_path, dtype, fraction, max_diff):
    trained, (_, val) = small
    exact = float32_bundle
    reference = Predictor.load(exact).predict_proba(val.texts)
    where = save_bundle(trained, str(tmp_path / dtype), compact=dtype)
    quantized = Predictor.load(where)
    assert quantized.config["compact"]["dtype"] == dtype
    probs = quantized.predict_proba(val.texts)
    assert 0 < np.abs(probs - reference).max() < max_diff  # lossy, but close
    assert (probs.argmax(1) == reference.argmax(1)).mean() >= 0.97
    # codes plus a float32 scale and an int32 row number per row, against 4 bytes a value
    rows, emsize = quantized.config["compact"]["rows_stored"], quantized.model.emsize
    assert _rows_file_size(where) <= rows * (emsize * 4 * fraction + 8) + 1024
    assert _rows_file_size(where) < _rows_file_size(exact) * (fraction + 0.05)


def test_an_allocation_that_fails_reading_stored_rows_is_one_error_naming_the_bundle(small, tmp_path, monkeypatch):
    """Rows that pass the memory check can still fail to be allocated (memory taken meanwhile): numpy's bare
    MemoryError left Predictor.load, naming neither the bundle nor what to do. Now the out-of-memory line of its
    stored rows, numpy's own words in it."""
    from fasttext_lib import compact

    trained, _ = small
    where = save_bundle(trained, str(tmp_path / "int8"), compact="int8")

    def no_memory(*args):
        raise MemoryError("Unable to allocate 6.90 MiB for an array with shape (36164, 50) and data type float32")

    monkeypatch.setattr(compact, "dequantize", no_memory)
    with pytest.raises(FastTextError) as caught:
        Predictor.load(where)
    message = str(caught.value)
    assert message.startswith(f"out of memory to load {where}: its stored embedding rows, "), message
    assert "x emsize 100 (int8, read as float32), need " in message and "(Unable to allocate 6.90 MiB" in message
    # (Predictor.load is the Python API's: its caller saves bundles with save_bundle, and has no train --compact)
    assert message.endswith("or a bundle of float16 rows (save_bundle(..., compact='float16')), which holds them in 2 "
                            "bytes a value"), message


def test_cli_writes_an_int4_bundle(small_files, tmp_path):
    sample_dir = small_files
    # (in this process: the flag's bundle and the evaluation's exit code and line are under test, not the process)
    out = tmp_path / "bundle"
    done = cli_in_process("train", "--train", str(sample_dir / "train.csv"), "--output", str(out), "--epochs", "1",
                   "--ngrams", "2", "--no-progress", "--compact", "int4")
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "config.json").read_text())["compact"]["dtype"] == "int4"
    done = cli_in_process("evaluate", "--model", str(out), "--data", str(sample_dir / "test.csv"))
    assert done.returncode == 0 and '"accuracy"' in done.stdout


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("block", [7, 4096])  # several blocks, the last one partial; one block
def test_streamed_rows_file_is_np_savez_byte_for_byte(small, tmp_path, monkeypatch, dtype, block):
    """compact.save streams the changed rows from the table into the zip member a block at a time
    (write_npz) instead of gathering them and calling np.savez: the file must stay np.savez's, byte for
    byte (bundles written before, and readers of the format), and the rows must really go in blocks."""
    from fasttext_lib import compact

    trained, _ = small
    table, seed = trained.model.embedding_table(), trained.config.seed
    rows = changed_rows(table, seed)
    assert len(rows) > 3 * 7
    monkeypatch.setattr(compact._RowBlocks, "block", block)
    gathered = []
    real_gather = compact._RowBlocks._gather
    monkeypatch.setattr(compact._RowBlocks, "_gather", lambda self, a, out: gathered.append(len(out)) or real_gather(self, a, out))
    savez = np.savez
    monkeypatch.setattr(np, "savez", lambda *a, **k: pytest.fail("compact.save gathered the rows for np.savez"))
    (tmp_path / "new").mkdir()
    entry = compact.save(trained.model, seed, str(tmp_path / "new"), "model.params", dtype=dtype)
    assert entry["rows_stored"] == len(rows)
    assert gathered == [min(block, len(rows))] * -(-len(rows) // block)  # every block through a block-sized buffer
    reference = tmp_path / "reference.npz"
    savez(reference, seed=np.int64(seed), rows=rows.astype(np.int32), values=table[rows].astype(dtype))
    assert (tmp_path / "new" / ROWS_FILE).read_bytes() == reference.read_bytes()


def test_write_npz_of_plain_and_empty_arrays_is_np_savez(tmp_path):
    from fasttext_lib.compact import _RowBlocks, write_npz

    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    no_rows = np.zeros(0, np.int64)
    arrays = dict(seed=np.int64(3), rows=no_rows.astype(np.int32), codes=np.ones((2, 5), np.uint8))
    write_npz(str(tmp_path / "a.npz"), dict(arrays, values=_RowBlocks(table, no_rows, "float32")))
    np.savez(tmp_path / "b.npz", **arrays, values=table[no_rows])
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
def test_a_compact_bundle_predicts_on_the_cpu_without_building_its_table(small, tmp_path, monkeypatch, dtype):
    """Loaded on the CPU, a compact bundle keeps only its stored rows (compact.StoredRows): predictions,
    evaluation and word vectors read them, each other row made from the seed, and equal bit for bit what
    the full table (built when the model itself is asked for) gives. It built all 2M x emsize rows
    first: ~1 GB per endpoint worker for a model that changed a few thousand rows. Each route of the lazy side (the
    native mean, numpy's) against one full table: the bundle, the full table and its answers made once for both."""
    from fasttext_lib import native_features

    trained, (_, val) = small
    where = save_bundle(trained, str(tmp_path / "b"), compact=dtype)
    texts = val.texts + ["", "zzqx unseen words only", "great " * 300]
    dense = Predictor.load(where)
    table = dense.model.embedding_table()  # built now, as every caller of .model gets it
    assert len(table) == trained.featurizer.num_rows
    if dtype == "float32":  # and that table is the trained one
        np.testing.assert_array_equal(table, trained.model.embedding_table())
    dense_probs, dense_metrics = dense.predict_proba(texts), dense.evaluate(val, confusion=True)
    for native in (True, False):
        with monkeypatch.context() as m:
            if not native:
                m.setattr(native_features, "available", lambda: False)
            lazy = Predictor.load(where)
            assert not lazy.block.embedding.weight._data  # the table was never made
            probs, metrics, (tokens, vectors) = (lazy.predict_proba(texts), lazy.evaluate(val, confusion=True),
                                                 lazy.vocabulary_rows())
            assert not lazy.block.embedding.weight._data
            np.testing.assert_array_equal(probs, dense_probs)
            assert metrics == dense_metrics
            assert tokens == list(dense.featurizer.vocab.idx_to_token)
            np.testing.assert_array_equal(vectors, table[:len(tokens)])
            np.testing.assert_array_equal(lazy.model.embedding_table(), table)  # a lazy predictor builds the same table
            np.testing.assert_array_equal(lazy.predict_proba(texts), probs)
            del lazy  # (its table: 200 MB)


def test_stored_rows_read_as_a_table_written_from_them():
    """Rows out of order or listed twice (save() writes them ascending, once) read as a dense table written
    from them in order: the last value of a row wins, every other row is its seeded initial value."""
    from fasttext_lib.compact import StoredRows
    from fasttext_lib.init_rows import fill_table

    rng = np.random.default_rng(0)
    rows = np.array([7, 2, 9, 2, 0, 7], np.int32)
    values = rng.standard_normal((len(rows), 5)).astype(np.float32)
    stored = StoredRows(11, rows, values, num_rows=12)
    dense = fill_table(11, np.empty((12, 5), np.float32))
    for r, v in zip(rows, values):
        dense[r] = v
    ids = np.array([0, 1, 2, 7, 9, 11, 2, 3])
    np.testing.assert_array_equal(stored.rows_of(ids), dense[ids])
    filled = np.empty((12, 5), np.float32)
    stored.fill(filled)
    np.testing.assert_array_equal(filled, dense)
    empty = StoredRows(11, np.zeros(0, np.int32), np.zeros((0, 5), np.float32), num_rows=12)
    np.testing.assert_array_equal(empty.rows_of(ids), fill_table(11, np.empty((12, 5), np.float32))[ids])
    stored.ROWS_AT_ONCE = 3  # gathered a slice of ids at a time: the same rows, bit for bit
    np.testing.assert_array_equal(stored.rows_of(ids), dense[ids])


def test_stored_rows_of_many_ids_hold_little_beside_their_answer():
    """One 60 MB review asks a compact bigram model for ~680k rows: their stored values and their initial values were
    each gathered whole before being copied into the answer, ~800 MB beside its 272 MB, the peak of the prediction
    (1.37 GB RSS). A slice of ids at a time, the temporaries are a slice's."""
    import tracemalloc

    from fasttext_lib.compact import StoredRows

    stored = StoredRows(5, np.arange(0, 200_000, 2), np.ones((100_000, 100), np.float32), num_rows=200_000)
    stored.ROWS_AT_ONCE = 4096
    ids = np.arange(200_000)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        answer = stored.rows_of(ids)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert answer[0, 0] == 1 and answer[1, 0] != 1
    assert peak < 1.25 * answer.nbytes, (peak, answer.nbytes)


def test_the_endpoint_serves_a_compact_bundle_from_its_stored_rows(small, full_bundle, tmp_path):
    from fasttext_lib import sm_serve

    trained, (_, val) = small
    where = save_bundle(trained, str(tmp_path / "b"), compact="float32")
    block = sm_serve.model_fn(where)
    answers = sm_serve.predict_fn(sm_serve.input_fn(json.dumps(val.texts[:20]), "application/json"), block)
    assert not block.embedding.weight._data  # served without the full table
    assert answers == Predictor.load(full_bundle).predict(val.texts[:20])


def _dense_and_sliced(trained, texts, tmp_path, monkeypatch, entries):
    """``texts``' probabilities from the full table built, a compact Predictor of the same bundle that scores
    ``entries`` entries at a time (CpuScorer.STORED_ENTRIES), and the list of how many rows each of its gathers took."""
    from fasttext_lib import compact
    from fasttext_lib.scoring import CpuScorer

    where = save_bundle(trained, str(tmp_path / "b"), compact="float32")
    dense = Predictor.load(where)
    dense.model  # the full table, built
    expected = dense.predict_proba(texts)
    largest, real = [], compact.StoredRows.rows_of
    monkeypatch.setattr(compact.StoredRows, "rows_of", lambda self, ids: largest.append(len(ids)) or real(self, ids))
    monkeypatch.setattr(CpuScorer, "STORED_ENTRIES", entries)
    return expected, Predictor.load(where), largest


def test_stored_rows_are_gathered_a_bounded_number_at_a_time(small, tmp_path, monkeypatch):
    """Scoring many documents at once (evaluate, a long predict_proba list) made every row the chunk of up to
    65,536 documents needs in one array: 1.26M of a bigram table's 2M rows for 40,000 reviews, 500 MB at
    emsize 100, the table the stored rows avoid. Documents are now gathered STORED_ENTRIES entries at a
    time (one longer document alone), and give the same probabilities bit for bit."""
    trained, (_, val) = small
    texts = val.texts + ["great " * 300]  # one document past the bound
    expected, lazy, largest = _dense_and_sliced(trained, texts, tmp_path, monkeypatch, entries=200)
    np.testing.assert_array_equal(lazy.predict_proba(texts), expected)
    bags = lazy.featurizer.transform(texts)
    longest = int(np.diff(bags.offsets).max())
    assert len(largest) > 1 and max(largest) <= max(200, longest)
    assert len(bags.rows) > 200  # more than one group was needed


def test_threads_asking_a_compact_predictor_for_its_model_build_the_table_once(small, tmp_path, monkeypatch):
    """Serving threads sharing one Predictor: the first ``.model`` builds the full table from the stored
    rows. Two threads asking at once both passed the "not built yet" check and built it twice, and the
    second could read the stored rows after the first had dropped them."""
    import threading
    import time

    from fasttext_lib import compact

    trained, _ = small
    lazy = Predictor.load(save_bundle(trained, str(tmp_path / "b"), compact="float32"))
    builds, real = [], compact.materialize

    def slow_materialize(model, stored, ctx, *args):
        builds.append(stored)
        time.sleep(0.3)  # both threads are past the check before the first build ends
        return real(model, stored, ctx, *args)

    monkeypatch.setattr(compact, "materialize", slow_materialize)
    models, errors = [], []

    def ask():
        try:
            models.append(lazy.model)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(builds) == 1 and builds[0] is not None
    assert all(m is models[0] for m in models)
    np.testing.assert_array_equal(models[0].embedding_table(), trained.model.embedding_table())


def test_a_training_jobs_compact_bundle_is_fetched_back_whole(small, tmp_path):
    """README's ``fetch_job_model(est.model_data, ...)`` took only model.params, vocab.json and metrics.json from the
    job's model.tar.gz: a compact bundle (the default, --compact auto) lost its embedding_rows.npz and was refused as
    "holds no model bundle (... embedding_rows.npz ... is missing)". Every file config.json lists is taken now."""
    import tarfile

    from fasttext_lib.packaging import fetch_job_model

    trained, (_, val) = small
    where = save_bundle(trained, str(tmp_path / "model_dir"), compact="float32")  # SM_MODEL_DIR, as the job leaves it
    archive = tmp_path / "model.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:  # SageMaker tars SM_MODEL_DIR's top level
        for name in os.listdir(where):
            tar.add(os.path.join(where, name), arcname=name)
    fetched = fetch_job_model(str(archive), str(tmp_path / "fetched"))
    assert Predictor.load(fetched).config["compact"]["dtype"] == "float32"
    assert Predictor.load(fetched).predict(val.texts[:20]) == Predictor.load(where).predict(val.texts[:20])


def test_the_memory_check_counts_what_scoring_a_long_document_holds(small, tmp_path):
    """Featurizer.check_room weighed featurizing alone, but a compact bundle's scoring gathers the document's rows
    (a 60 MB review's: 545 MB at emsize 100, 5 times its featurizing). CpuScorer.held_bytes, which the check now
    weighs, covers what scoring really allocates, for as many entries as the check expects from the text."""
    import tracemalloc

    trained, (_, val) = small
    lazy = Predictor.load(save_bundle(trained, str(tmp_path / "b"), compact="float32"))
    text = " ".join(val.texts * 3)
    bags = lazy.featurizer.transform([text])
    assert lazy.featurizer.bag_entries([text]) >= len(bags.rows) > 10_000
    lazy.predict(["warm up"])
    tracemalloc.start()
    try:
        lazy._probabilities(bags)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= lazy.scorer().held_bytes(len(bags.rows), 1), (peak, lazy.scorer().held_bytes(len(bags.rows), 1))


@pytest.mark.parametrize("route", ["native", "numpy"])
def test_a_long_documents_stored_rows_are_gathered_a_slice_at_a_time(small, tmp_path, monkeypatch, route):
    """One document longer than STORED_ENTRIES entries had all its distinct rows gathered at once (a 60 MB review's
    1.36M bigram rows: 545 MB at emsize 100, 880 MB peak to predict it, against 166 MB to featurize it). Its entries
    are now summed a slice at a time, each slice's rows gathered alone, into the same bits."""
    if route == "numpy":
        monkeypatch.setenv("FASTTEXT_LIB_NATIVE", "0")
    trained, (_, val) = small
    texts = [" ".join(val.texts), "fine", " ".join(val.texts[::-1])]
    expected, lazy, largest = _dense_and_sliced(trained, texts, tmp_path, monkeypatch, entries=500)
    assert lazy.predict_proba(texts).tobytes() == expected.tobytes()
    bags = lazy.featurizer.transform(texts)
    assert int(np.diff(bags.offsets).max()) > 10 * 500 and max(largest) <= 500


def test_the_advice_to_make_a_compact_bundle_names_a_value_the_default_is_not():
    """A bundle too large to load advised "a compact bundle (train --compact)": the option without a value, while its
    default (auto) is what wrote that full bundle (auto compacts only where at most 1/4 of the rows changed). The
    flag now names the value the Python API's advice names beside it: float32, exact."""
    from fasttext_lib.compact import COMPACT_EITHER, COMPACT_FLAG, made_with

    assert made_with(COMPACT_FLAG) == "train --compact float32"
    assert made_with(COMPACT_EITHER) == "train --compact float32, or save_bundle(..., compact='float32') in Python"
    assert made_with(COMPACT_FLAG, "float16") == "train --compact float16"
