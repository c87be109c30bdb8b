"""The native bag operators (fasttext_lib/bag_ops.cc): built here, equal to MXNet's generic route."""
import mxnet as mx
import numpy as np
import pytest
from mxnet import nd

from conftest import assert_rebuilt_for_other_flags, synthetic_reviews
from fasttext_lib import bag_ops
from fasttext_lib.data import LabeledTexts
from fasttext_lib.batches import BatchMaker, sgd_row_scale_entries
from fasttext_lib.config import TrainConfig
from fasttext_lib.features import Featurizer
from fasttext_lib.synthetic import generate_reviews
from fasttext_lib.train import train


@pytest.fixture(scope="module")
def ops():
    ok, why = bag_ops.status()
    assert ok, f"the native bag operators must build and load on this machine (CI has g++): {why}"
    return why


@pytest.fixture(scope="module")
def batch():
    data = generate_reviews(300, seed=4)
    featurizer, bags = Featurizer.fit(data.texts, ngrams=2, buckets=5000, return_bags=True)
    maker = BatchMaker(bags, np.zeros(len(bags)), featurizer.num_rows)
    return maker.make(np.random.RandomState(0).permutation(len(bags))[:100]), featurizer.num_rows


def _inputs(b):
    return (nd.array(b.offsets, dtype="int64"), nd.array(b.entry_rows, dtype="int32"),
            nd.array(b.columns, dtype="int32"), nd.array(b.weights, dtype="float32"))


def test_forward_and_backward_are_bit_identical_to_take_and_csr_dot(ops, batch):
    b, num_rows = batch
    rs = np.random.RandomState(1)
    table = nd.array(rs.uniform(-1, 1, (num_rows, 16)).astype(np.float32))
    offsets, entry_rows, columns, weights = _inputs(b)
    bag = nd.sparse.csr_matrix((b.weights, b.columns, b.offsets), shape=(b.size, len(b.rows)))
    bag_t = nd.sparse.csr_matrix((b.t_weights, b.t_columns, b.t_offsets), shape=(len(b.rows), b.size))

    docs = nd.fasttext_bag_mean(table, offsets, entry_rows, weights)
    generic = nd.sparse.dot(bag, nd.take(table, nd.array(b.rows, dtype="int64")))
    np.testing.assert_array_equal(docs.asnumpy(), generic.asnumpy())

    dh = nd.array(rs.randn(b.size, 16).astype(np.float32))
    grad = nd.fasttext_bag_mean_backward(offsets, columns, weights, dh, num_rows=len(b.rows))
    np.testing.assert_array_equal(grad.asnumpy(), nd.sparse.dot(bag_t, dh).asnumpy())
    # per-row document-frequency scale (SGD): row r times n / (documents containing r)
    scaled = nd.fasttext_bag_mean_backward(offsets, columns, weights, dh, num_rows=len(b.rows), doc_freq_scale=1)
    df = np.bincount(b.columns, minlength=len(b.rows))
    np.testing.assert_allclose(scaled.asnumpy(), grad.asnumpy() * (b.size / df)[:, None], rtol=1e-5, atol=1e-7)
    # with shrink k: n (1 + k) / (documents containing r + k), bit-identical to the generic route's bag_t
    shrunk = nd.fasttext_bag_mean_backward(offsets, columns, weights, dh, num_rows=len(b.rows), doc_freq_scale=1,
                                           shrink=2.5)
    np.testing.assert_allclose(shrunk.asnumpy(), grad.asnumpy() * (b.size * 3.5 / (df + 2.5))[:, None],
                               rtol=1e-5, atol=1e-7)
    bag_t_shrunk = nd.sparse.csr_matrix((b.t_weights * sgd_row_scale_entries(b, 2.5), b.t_columns, b.t_offsets),
                                        shape=(len(b.rows), b.size))
    np.testing.assert_array_equal(shrunk.asnumpy(), nd.sparse.dot(bag_t_shrunk, dh).asnumpy())


def test_fused_sgd_step_is_mxnet_lazy_sgd(ops, batch):
    b, num_rows = batch
    rs = np.random.RandomState(2)
    start = rs.uniform(-1, 1, (num_rows, 16)).astype(np.float32)
    offsets, _, columns, weights = _inputs(b)
    rows = nd.array(b.rows, dtype="int64")
    dh = nd.array(rs.randn(b.size, 16).astype(np.float32))
    fused, reference = nd.array(start), nd.array(start)
    nd.fasttext_bag_sgd_update(fused, offsets, columns, weights, dh, rows, lr=0.5, wd=0.01, doc_freq_scale=1)
    grad = nd.fasttext_bag_mean_backward(offsets, columns, weights, dh, num_rows=len(b.rows), doc_freq_scale=1)
    nd.sgd_update(reference, nd.sparse.row_sparse_array((grad, rows), shape=start.shape), out=reference,
                  lr=0.5, wd=0.01, lazy_update=True)
    np.testing.assert_array_equal(fused.asnumpy(), reference.asnumpy())
    # the same with the row scale's shrink
    fused_shrunk, reference_shrunk = nd.array(start), nd.array(start)
    nd.fasttext_bag_sgd_update(fused_shrunk, offsets, columns, weights, dh, rows, lr=0.5, wd=0.01, doc_freq_scale=1,
                               shrink=3.0)
    grad = nd.fasttext_bag_mean_backward(offsets, columns, weights, dh, num_rows=len(b.rows), doc_freq_scale=1,
                                         shrink=3.0)
    nd.sgd_update(reference_shrunk, nd.sparse.row_sparse_array((grad, rows), shape=start.shape), out=reference_shrunk,
                  lr=0.5, wd=0.01, lazy_update=True)
    np.testing.assert_array_equal(fused_shrunk.asnumpy(), reference_shrunk.asnumpy())
    assert not np.array_equal(fused_shrunk.asnumpy(), fused.asnumpy())
    untouched = np.setdiff1d(np.arange(num_rows), b.rows)
    np.testing.assert_array_equal(fused.asnumpy()[untouched], start[untouched])


def test_fused_sgd_step_flags_non_finite_values_it_writes(ops, batch):
    b, num_rows = batch
    offsets, _, columns, weights = _inputs(b)
    rows = nd.array(b.rows, dtype="int64")
    start = np.random.RandomState(3).uniform(-1, 1, (num_rows, 16)).astype(np.float32)
    start[np.setdiff1d(np.arange(num_rows), b.rows)[0]] = np.nan  # not written by the step: not its to report
    status, dh = nd.zeros((1,)), nd.ones((b.size, 16))

    def step(scale, lr):
        nd.fasttext_bag_sgd_update(nd.array(start), offsets, columns, weights, dh * scale, rows, status, lr=lr,
                                   with_status=1, wd=0.0, doc_freq_scale=0)
        return status.asscalar()

    assert step(1.0, 0.1) == 0
    for scale, lr in ((1e38, 1e30), (float("inf"), 0.1), (float("nan"), 0.1)):
        assert step(scale, lr) == 1
        assert step(1.0, 0.1) == 1  # set, never cleared, by the operator: the caller resets it
        status[:] = 0


def test_bad_indices_fail_instead_of_reading_out_of_bounds(ops):
    table = nd.ones((10, 4))
    with pytest.raises(mx.base.MXNetError, match="outside the table"):
        nd.fasttext_bag_mean(table, nd.array([0, 2], dtype="int64"), nd.array([3, 10], dtype="int32"),
                             nd.ones(2)).wait_to_read()
    with pytest.raises(mx.base.MXNetError, match="offsets do not span"):
        nd.fasttext_bag_mean(table, nd.array([0, 4, 2], dtype="int64"), nd.array([1, 2], dtype="int32"),
                             nd.ones(2)).wait_to_read()
    with pytest.raises(mx.base.MXNetError, match="outside the batch's rows"):
        nd.fasttext_bag_mean_backward(nd.array([0, 2], dtype="int64"), nd.array([0, 5], dtype="int32"), nd.ones(2),
                                      nd.ones((1, 4)), num_rows=2).wait_to_read()


@pytest.mark.parametrize("optimizer, batch_size", [("sgd", 128), ("adam", 128), ("sgd", 512)])
def test_training_is_bit_identical_with_native_and_generic_operators(ops, optimizer, batch_size, monkeypatch):
    """(sgd at batch 512: with the per-row scale's shrink, schedule.row_shrink)"""
    data = synthetic_reviews(1300, seed=6)
    splits = LabeledTexts(data.labels[:1000], data.texts[:1000]), LabeledTexts(data.labels[1000:], data.texts[1000:])
    cfg = TrainConfig(epochs=2, batch_size=batch_size, ngrams=2, buckets=20000, optimizer=optimizer, wd=1e-4,
                      progress=False, ctx="cpu", seed=9)
    native = train(*splits, cfg)
    monkeypatch.setenv(bag_ops.ENV_SWITCH, "0")
    assert not bag_ops.available()
    generic = train(*splits, cfg)
    for name in ("embedding", "output"):
        a = getattr(native.model, name).weight.data().asnumpy()
        np.testing.assert_array_equal(a, getattr(generic.model, name).weight.data().asnumpy())
    assert [r["val_loss"] for r in native.history] == [r["val_loss"] for r in generic.history]


def test_real_text_at_small_batches_and_a_large_lr_is_bit_identical_too(ops, monkeypatch):
    """The built-in sample's first 300 sentences at batch 16 and lr 4 (the rule's setting for tiny
    sets): the linear schedule's lr values there include some MXNet's parameter parser rounds one unit
    in the last place off (optim.as_mxnet_parses); the fused operator must step with the same value."""
    from fasttext_lib.sample import load_sample

    data = load_sample("train")
    data = LabeledTexts(data.labels[:300], data.texts[:300])
    cfg = TrainConfig(epochs=1, batch_size=16, ngrams=2, buckets=2000, optimizer="sgd", lr=4.0, progress=False,
                      ctx="cpu", seed=3)
    native = train(data, None, cfg)
    monkeypatch.setenv(bag_ops.ENV_SWITCH, "0")
    generic = train(data, None, cfg)
    for name in ("embedding", "output"):
        a = getattr(native.model, name).weight.data().asnumpy()
        np.testing.assert_array_equal(a, getattr(generic.model, name).weight.data().asnumpy(), err_msg=name)


def test_the_fused_sgd_gets_the_float_mxnet_operators_parse():
    """as_mxnet_parses(x) is the float32 ``sgd_update`` computes with for lr=x: read back from MXNet
    (weight 0, gradient -1: the result is lr itself) for schedule-like values, round ones, exponents."""
    from fasttext_lib.optim import as_mxnet_parses

    rng = np.random.RandomState(0)
    values = [4.0, 0.5, 0.1, 1e-4, 3.1578947368421053, 2.5e-05, 7.1e-07, 12.75, 0.0, 1.0, 123456.789]
    values += [float(4.0 * (1 - k / 181)) for k in range(181)] + list(rng.uniform(0, 5, 300)) + list(rng.uniform(0, 1e-3, 100))
    read = nd.zeros((len(values),))
    for i, v in enumerate(values):
        out = nd.zeros((1,))
        nd.sgd_update(nd.zeros((1,)), -nd.ones((1,)), lr=v, wd=0.0, out=out)
        read[i] = out
    got = np.array([as_mxnet_parses(v) for v in values], dtype=np.float32)
    np.testing.assert_array_equal(got, read.asnumpy())
    assert (got != np.array(values, dtype=np.float32)).any()  # the parser is not round-to-nearest: else no test


def test_library_is_cached_and_rebuilt_only_when_its_inputs_change(ops, tmp_path, monkeypatch):
    monkeypatch.setenv("FASTTEXT_LIB_CACHE", str(tmp_path))
    first = bag_ops.build()
    assert first.startswith(str(tmp_path)) and first.endswith(".so")
    mtime = __import__("os").path.getmtime(first)
    assert bag_ops.build() == first and __import__("os").path.getmtime(first) == mtime  # cached
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no half-written library left
    assert_rebuilt_for_other_flags(bag_ops, first, monkeypatch)  # other flags, other library


def test_a_failed_build_says_why_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("FASTTEXT_LIB_CACHE", str(tmp_path))
    monkeypatch.setattr(bag_ops, "CXXFLAGS", bag_ops.CXXFLAGS + ["-DFASTTEXT_TEST_FAIL", "-Werror=this-is-not-a-flag"])
    with pytest.raises(RuntimeError, match="failed"):
        bag_ops.build()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".so") or p.name.endswith(".tmp")]
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    with pytest.raises((RuntimeError, OSError)):
        bag_ops.build()


@pytest.mark.parametrize("route", ["native", "generic"])
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_divergence_in_the_parameters_alone_stops_the_run(ops, route, optimizer, monkeypatch):
    """One step (batch >= documents): its loss is computed before the update and stays finite, so only
    the parameter check can see that the update (lr * wd overflows) left infinities in the table."""
    from fasttext_lib.errors import FastTextError

    if route == "generic":
        monkeypatch.setenv(bag_ops.ENV_SWITCH, "0")
    data = synthetic_reviews(200, seed=6)
    cfg = TrainConfig(epochs=1, batch_size=256, ngrams=2, buckets=2000, optimizer=optimizer, lr=1e30, wd=1e30,
                      lr_schedule="constant", progress=False, ctx="cpu", seed=9)  # (linear: the only step has lr 0)
    with pytest.raises(FastTextError, match=r"training diverged: the model parameters became NaN or infinite at epoch 1"):
        train(data, None, cfg)
    sane = train(data, None, TrainConfig(epochs=1, batch_size=256, ngrams=2, buckets=2000, optimizer=optimizer,
                                         progress=False, ctx="cpu", seed=9))
    assert np.isfinite(sane.history[0]["train_loss"])


ENGINE_THREADS = r"""
import json
from fasttext_lib import bag_ops
import mxnet as mx
assert bag_ops.available()
probe = mx.nd.zeros(1)
report = {"before": mx.nd.fasttext_engine_threads(probe).asnumpy().tolist()}
table = mx.nd.ones((10, 4))
docs = mx.nd.fasttext_bag_mean(table, mx.nd.array([0, 2, 3], dtype="int64"), mx.nd.array([1, 2, 9], dtype="int32"),
                               mx.nd.array([0.5, 0.5, 1.0]))
report["docs"] = docs.asnumpy().tolist()
report["after"] = mx.nd.fasttext_engine_threads(probe).asnumpy().tolist()
print(json.dumps(report))
"""


@pytest.mark.parametrize("omp_threads", ["2", "3"])
def test_after_a_bag_operator_mxnets_operators_run_on_one_thread_and_the_bag_operators_keep_theirs(ops, omp_threads):
    """bag_ops.cc claim_threads: the step's small dense MXNet operators run single-threaded on the engine
    thread (an OpenMP region each cost more than its work on short texts), while the bag operators keep
    the thread count MXNet gave that thread (OMP_NUM_THREADS). A child process: libgomp reads it at start."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, OMP_NUM_THREADS=omp_threads)
    out = subprocess.run([sys.executable, "-c", ENGINE_THREADS], env=env, capture_output=True, text=True, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["before"] == [int(omp_threads), -1]
    assert report["after"] == [1, int(omp_threads)]
    assert report["docs"] == [[1.0] * 4, [1.0] * 4]


SEEDED_RUN = """
import hashlib, json
from fasttext_lib.config import TrainConfig
from fasttext_lib.sample import load_sample
from fasttext_lib.train import train

run = train(load_sample("train"), load_sample("test"), TrainConfig(epochs=3, ngrams=2, batch_size=1024, seed=42,
                                                                   ctx="cpu", progress=False))
digest = hashlib.sha256()
for name in ("embedding", "output"):
    digest.update(getattr(run.model, name).weight.data().asnumpy().tobytes())
print(json.dumps({"params": digest.hexdigest(), "history": [[e["train_loss"], e["val_loss"]] for e in run.history]}))
"""


def seeded_run(**env):
    import json
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root, **env}
    out = subprocess.run([sys.executable, "-c", SEEDED_RUN], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_seeded_runs_are_the_same_whatever_openmps_thread_count(ops):
    """Parameters bit for bit, in fresh processes, with 1 OpenMP thread and with 8 on this machine's 2 CPUs (a
    larger machine's default: MXNet takes half its CPUs). Batches of 1024 bigram documents, so that the bag
    operators run in parallel; the step's dense operators run single-threaded once a bag operator has claimed
    the engine thread (bag_ops.cc claim_threads): oneDNN's FullyConnected, run by 4 or more threads, splits
    its weight gradient's sum over the batch between them (a different sum, other parameters)."""
    assert seeded_run(OMP_NUM_THREADS="8") == seeded_run(OMP_NUM_THREADS="1")
