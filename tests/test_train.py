import mxnet as mx
import numpy as np
import pytest

from conftest import make_splits, params_of
from fasttext_lib.bundle import save_bundle
from fasttext_lib.config import TrainConfig
from fasttext_lib.data import LabeledTexts, read_labeled
from fasttext_lib.devices import parse_ctx
from fasttext_lib.errors import FastTextError
from fasttext_lib.predict import Predictor
from fasttext_lib.schedule import default_schedule
from fasttext_lib.synthetic import generate_reviews
from fasttext_lib.train import HISTORY_COLUMNS, train


@pytest.fixture(scope="module")
def splits():
    return make_splits(3000, 300, seed=11)


def test_adam_learns_and_history_has_every_column(splits):
    trained = train(*splits, TrainConfig(epochs=4, optimizer="adam", batch_size=256, progress=False, ctx="cpu"))
    frame = trained.history_frame()
    assert list(frame.reset_index().columns) == [{"val_loss": "validation_loss", "val_accuracy": "validation_accuracy"}
                                                 .get(c, c) for c in HISTORY_COLUMNS] and len(frame) == 4
    assert frame["train_loss"].iloc[-1] < frame["train_loss"].iloc[0]
    assert frame["validation_accuracy"].iloc[-1] > 0.7
    assert (frame["samples_per_s"] > 0).all()


def test_settings_left_to_the_data_are_resolved_recorded_and_announced(splits, tmp_path, capsys):
    """No lr or batch size: SGD with the schedule's values for this data, in the TrainedModel, the
    bundle's config.json and one stderr line; the steps taken are the resolved batch size's."""
    import json

    from fasttext_lib.bundle import save_bundle

    rule = default_schedule(len(splits[0]), 0, 2, 1, 2)
    trained = train(*splits, TrainConfig(epochs=2, progress=True, ctx="cpu"))
    used = trained.config
    assert (used.optimizer, used.lr, used.batch_size) == ("sgd", rule["lr"], rule["batch_size"]) and used.batch_size < 1024
    assert f"settings from the data: sgd lr={rule['lr']:g} batch={rule['batch_size']}" in capsys.readouterr().err
    saved = json.loads(open(save_bundle(trained, tmp_path / "b") + "/config.json").read())["train_config"]
    assert (saved["lr"], saved["batch_size"]) == (rule["lr"], rule["batch_size"])
    explicit = train(*splits, TrainConfig(epochs=1, lr=0.25, batch_size=500, progress=False, ctx="cpu"))
    assert (explicit.config.lr, explicit.config.batch_size) == (0.25, 500)



@pytest.mark.parametrize("given, said", [
    ({}, "settings from the data: sgd lr={lr:g} batch={batch} (3000 documents, 2 epochs)"),
    ({"lr": 0.25}, "settings from the data: batch={batch} (3000 documents, 2 epochs); given: sgd lr=0.25"),
    ({"batch_size": 500}, "settings from the data: sgd lr={lr:g} (3000 documents, 2 epochs); given: batch=500"),
    ({"optimizer": "adam"}, "settings from the data: batch={batch} (3000 documents, 2 epochs); adam's default: lr=0.01"),
    ({"optimizer": "adam", "lr": 0.003}, "settings from the data: batch={batch} (3000 documents, 2 epochs); given: "
                                         "adam lr=0.003"),
    ({"optimizer": "adam", "batch_size": 64}, "settings given: batch=64; adam's default: lr=0.01"),
])
def test_the_settings_line_says_which_values_came_from_the_data_and_which_were_given(given, said, splits, capsys):
    """``settings from the data: sgd lr=0.25 batch=16`` said "from the data" of an lr (or a batch size) the user had
    given (notebook 02's -p lr 0.25), or adam's fixed default: it names which is which now."""
    from fasttext_lib.train import resolve_settings

    used = resolve_settings(TrainConfig(epochs=2, progress=True, **given), splits[0].texts, 2, len(splits[0]))
    assert capsys.readouterr().err == said.format(lr=used.lr, batch=used.batch_size) + "\n"

def test_sgd_learns(splits):
    trained = train(*splits, TrainConfig(epochs=5, progress=False))  # the defaults: SGD, lr and batch from the data
    assert trained.config.optimizer == "sgd"
    assert trained.history[-1]["train_loss"] < trained.history[0]["train_loss"]
    assert trained.history[-1]["val_accuracy"] > 0.6


@pytest.mark.parametrize("classes, hybridized", [(2, True), (3, True), (2, False)])
def test_the_steps_head_gradient_is_exactly_the_scaled_loss_ones(classes, hybridized):
    """sparse_step back-propagates loss_sum with the head gradient 1 / global_batch (step.mean_head_gradient)
    instead of recording ``loss_sum * (1 / global_batch)``: the gradients must be those of the recorded
    product to the bit, for batch sizes whose reciprocal is not exact in float32."""
    from mxnet import autograd, nd

    from fasttext_lib.batches import BatchArrays
    from fasttext_lib.model import FastTextClassifier
    from fasttext_lib.step import sparse_step, summed_loss_block

    mx.random.seed(1)
    model = FastTextClassifier(50, 8, classes)
    model.initialize_like_fasttext([mx.cpu()], seed=2)
    rng = np.random.RandomState(0)
    for global_batch in (7, 50, 333):
        docs = nd.array(rng.uniform(-0.1, 0.1, (global_batch, 8)).astype(np.float32))
        labels = rng.randint(0, classes, global_batch).astype(np.float32)
        labels = nd.array(labels.reshape(-1, 1) if classes == 2 else labels)
        arrays = BatchArrays(rows=nd.arange(3, dtype="int64"), labels=labels, native=False, sgd_row_scale=False,
                             bag=nd.sparse.csr_matrix(nd.eye(global_batch).tostype("csr")))
        block = summed_loss_block(model)
        if hybridized:
            block.hybridize(static_alloc=True)
        loss_sum, docs_grad, out_grad = sparse_step(model, docs, None, arrays, global_batch, block)[1:]
        got = (loss_sum.asnumpy(), docs_grad.asnumpy(), out_grad.asnumpy().copy())

        ref_docs = docs.copy()
        ref_docs.attach_grad()
        with autograd.record():  # the step as it was recorded before
            ref_sum = model.loss(model.classify(ref_docs), labels).sum()
            scaled = ref_sum * (1.0 / global_batch)
        scaled.backward()
        expected = (ref_sum.asnumpy(), ref_docs.grad.asnumpy(), model.output.weight.grad().asnumpy())
        for a, b in zip(got, expected):
            assert a.tobytes() == b.tobytes(), global_batch


@pytest.mark.parametrize("native", [True, False], ids=["native-bag-ops", "generic-mxnet-ops"])
def test_sparse_step_gradient_equals_autograd_on_the_dense_model(splits, native):
    """The hand-made row-sparse embedding gradient is exactly autograd's, restricted to the batch's rows,
    with the native operators (bag_ops.cc) and with MXNet's generic ones."""
    from mxnet import autograd, nd

    from fasttext_lib.batches import BatchMaker, to_batch_arrays
    from fasttext_lib.features import Featurizer
    from fasttext_lib.model import FastTextClassifier
    from fasttext_lib.label_encoding import encode_labels
    from fasttext_lib.step import embedding_gradient, sparse_step, use_bag_ops

    assert not native or use_bag_ops([mx.cpu()])  # loads the native operators (not left to an earlier test)
    texts, labels = splits[0].texts[:40], splits[0].labels[:40]
    featurizer, bags = Featurizer.fit(texts, ngrams=2, buckets=3000, return_bags=True)
    y = encode_labels(labels, ["1", "2"], "test")
    mx.random.seed(0)
    model = FastTextClassifier(featurizer.num_rows, 8, 2)
    model.initialize_like_fasttext([mx.cpu()])
    batch = BatchMaker(bags, y, featurizer.num_rows).make(np.arange(3, 40), with_transpose=not native)
    arrays = to_batch_arrays(batch, mx.cpu(), model.binary, native)
    table = model.embedding.weight.data()
    values, index = (table, arrays.entry_rows) if native else (nd.take(table, arrays.rows), None)
    loss_sum, docs_grad, out_grad = sparse_step(model, values, index, arrays, global_batch=50)[1:]
    grad = embedding_gradient(model, arrays, docs_grad)
    assert grad.stype == "row_sparse"
    np.testing.assert_array_equal(grad.indices.asnumpy(), batch.rows)  # only the batch's rows
    assert len(batch.rows) < featurizer.num_rows

    # reference: a dense (docs x all rows) mean matrix, autograd through the whole table
    dense_bag = np.zeros((batch.size, featurizer.num_rows), dtype=np.float32)
    for d in range(batch.size):
        cols = batch.columns[batch.offsets[d]:batch.offsets[d + 1]]
        dense_bag[d, batch.rows[cols]] = batch.weights[batch.offsets[d]:batch.offsets[d + 1]]
    full = table.copy()
    full.attach_grad()
    weight = model.output.weight.data().copy()
    weight.attach_grad()
    with autograd.record():
        scores = nd.dot(nd.dot(nd.array(dense_bag), full), weight, transpose_b=True)
        ref_loss = model.loss(scores, nd.array(batch.labels).reshape((-1, 1))).sum() / 50
    ref_loss.backward()
    expected = full.grad.asnumpy()
    np.testing.assert_allclose(grad.data.asnumpy(), expected[batch.rows], rtol=1e-4, atol=1e-7)
    untouched = np.setdiff1d(np.arange(featurizer.num_rows), batch.rows)
    assert not expected[untouched].any()
    np.testing.assert_allclose(out_grad.asnumpy(), weight.grad.asnumpy(), rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(loss_sum.asscalar() / 50, ref_loss.asscalar(), rtol=1e-5)

    # SGD's per-row scale multiplies each row's gradient by batch size / its document frequency
    scaled_arrays = to_batch_arrays(batch, mx.cpu(), model.binary, native, sgd_row_scale=True)
    scaled = embedding_gradient(model, scaled_arrays, docs_grad)
    df = np.bincount(batch.columns, minlength=len(batch.rows))
    np.testing.assert_allclose(scaled.data.asnumpy(), expected[batch.rows] * (batch.size / df)[:, None], rtol=1e-4, atol=1e-7)
    # with a shrink k (large batches): batch size x (1 + k) / (document frequency + k)
    shrunk_arrays = to_batch_arrays(batch, mx.cpu(), model.binary, native, sgd_row_scale=True, row_shrink=3.0)
    shrunk = embedding_gradient(model, shrunk_arrays, docs_grad)
    np.testing.assert_allclose(shrunk.data.asnumpy(), expected[batch.rows] * (batch.size * 4.0 / (df + 3.0))[:, None],
                               rtol=1e-4, atol=1e-7)
    assert (df > 1).any() and not np.allclose(shrunk.data.asnumpy(), scaled.data.asnumpy())


def _initial_table(num_rows, cfg):
    from fasttext_lib.model import FastTextClassifier

    fresh = FastTextClassifier(num_rows, cfg.emsize, 2)
    fresh.initialize_like_fasttext([mx.cpu()], seed=cfg.seed)
    return fresh.embedding_table()


@pytest.mark.parametrize("optimizer, ctx", [("adam", "cpu"), ("sgd", "cpu"), ("adam", "cpu:0,1"), ("sgd", "cpu:0,1")])
def test_lazy_update_leaves_untouched_rows_alone(optimizer, ctx):
    """Weight decay pulls every row a standard update visits towards zero; the lazy one visits only the
    rows a batch holds. The <unk> row is in no batch: it must keep its initial value exactly."""
    docs = LabeledTexts(["1", "2"], ["aaa bbb", "ccc ddd"])
    cfg = TrainConfig(epochs=2, batch_size=1, progress=False, seed=5, wd=0.1, optimizer=optimizer, lr=0.5, ctx=ctx)
    trained = train(docs, None, cfg)
    initial = _initial_table(trained.model.num_rows, cfg)
    assert initial[0].any()  # nonzero to start with, so decay would show
    np.testing.assert_array_equal(trained.model.embedding_table()[0], initial[0])
    assert not np.array_equal(trained.model.embedding_table()[1:], initial[1:])


def test_a_standard_update_would_move_the_untouched_row(monkeypatch):
    """The check above can fail: the same run with lazy_update off decays the <unk> row."""
    create = mx.optimizer.create
    monkeypatch.setattr(mx.optimizer, "create", lambda name, **kw: create(name, **{**kw, "lazy_update": False}))
    docs = LabeledTexts(["1", "2"], ["aaa bbb", "ccc ddd"])
    cfg = TrainConfig(epochs=2, batch_size=1, progress=False, seed=5, wd=0.1, optimizer="adam", lr=0.5, ctx="cpu")
    trained = train(docs, None, cfg)
    assert not np.array_equal(trained.model.embedding_table()[0], _initial_table(trained.model.num_rows, cfg)[0])


@pytest.mark.parametrize("optimizer, schedule", [("sgd", "linear"), ("adam", "linear"), ("sgd", "constant"), ("adam", "constant")])
def test_lr_schedule_over_the_run(splits, monkeypatch, optimizer, schedule):
    """linear: from the base rate down to ~0 at the run's last step, never 0 (as fastText); constant: the base rate
    throughout."""
    from fasttext_lib import optim

    made = []
    make = optim.make_optimizer
    monkeypatch.setattr("fasttext_lib.train.make_optimizer", lambda *a: made.append(make(*a)) or made[-1])
    cfg = TrainConfig(epochs=3, batch_size=500, progress=False, optimizer=optimizer, lr_schedule=schedule, ctx="cpu")
    trained = train(splits[0], None, cfg)
    opt = made[0]
    steps = 3 * -(-len(splits[0]) // 500)
    assert opt.num_update == steps  # the schedule counted every step
    base = trained.config.learning_rate  # sgd: from the data; adam: 0.01
    assert base == (0.01 if optimizer == "adam" else default_schedule(len(splits[0]), 0, 2, 1, 3, batch_size=500)["lr"])
    if schedule == "constant":
        assert opt._get_lr(0) == base
        return
    # step n of the run takes base * (1 - n / (steps + 1)): the schedule's 0 one step past the run
    lrs = [opt.lr_scheduler(n) for n in (1, steps // 2, steps)]
    assert lrs[0] == pytest.approx(base * steps / (steps + 1))
    assert lrs[1] == pytest.approx(base * (1 - (steps // 2) / (steps + 1)))
    assert lrs[2] == pytest.approx(base / (steps + 1))
    assert opt._get_lr(0) == pytest.approx(base / (steps + 1))  # where training left it: the last step ran at ~0


def test_seeded_cpu_runs_are_deterministic(splits):
    cfg = TrainConfig(epochs=2, batch_size=200, progress=False, ngrams=2, buckets=10000, seed=3)
    a, b = train(*splits, cfg), train(*splits, cfg)
    for k, v in params_of(a).items():
        np.testing.assert_array_equal(v, params_of(b)[k])
    assert [r["val_loss"] for r in a.history] == [r["val_loss"] for r in b.history]


def test_multi_class_uses_softmax(splits):
    data = generate_reviews(1200, num_classes=4, seed=2)
    trained = train(data, data.head(200), TrainConfig(epochs=3, optimizer="adam", batch_size=128, progress=False))
    assert trained.model.output.weight.shape[0] == 4
    assert trained.labels == ["1", "2", "3", "4"]
    assert trained.history[-1]["val_accuracy"] > 0.4


def test_several_devices_train_like_one(splits):
    """Two devices, each with half of every batch, end with the parameters of one device (adam:
    the summed gradients are the whole batch's). SGD differs by design: its row scale is per device."""
    cfg = dict(epochs=2, batch_size=256, progress=False, optimizer="adam")
    two = train(*splits, TrainConfig(**cfg, ctx="cpu:0,1"))
    one = train(*splits, TrainConfig(**cfg, ctx="cpu"))
    assert len(two.ctx) == 2
    for name, value in params_of(one).items():
        np.testing.assert_allclose(params_of(two)[name], value, atol=1e-5, err_msg=name)
    assert [r["val_loss"] for r in two.history] == pytest.approx([r["val_loss"] for r in one.history], rel=1e-5)


def test_ctx_parsing(monkeypatch):
    monkeypatch.setattr(mx.context, "num_gpus", lambda: 2)
    assert parse_ctx("auto") == [mx.gpu(0), mx.gpu(1)]
    assert parse_ctx(" GPU ") == [mx.gpu(0)]
    assert parse_ctx("gpu:1") == [mx.gpu(1)]
    assert parse_ctx("gpu:0,1") == [mx.gpu(0), mx.gpu(1)]
    assert parse_ctx(["cpu", "gpu:1"]) == [mx.cpu(), mx.gpu(1)]
    with pytest.raises(FastTextError, match="only 2 GPU"):
        parse_ctx("gpu:2")
    monkeypatch.setattr(mx.context, "num_gpus", lambda: 0)
    assert parse_ctx("auto") == [mx.cpu()]
    assert parse_ctx("cpu:0,1") == [mx.cpu(0), mx.cpu(1)]
    with pytest.raises(FastTextError, match="none is visible"):
        parse_ctx("gpu:0")
    with pytest.raises(FastTextError, match="unknown ctx"):
        parse_ctx("tpu")



@pytest.mark.parametrize("spec", ["gpu", "GPU", "gpu:0,1"])
def test_a_gpu_ctx_on_a_machine_without_one_says_what_to_pass(spec, monkeypatch):
    """`papermill 02 -p ctx gpu` on a CPU instance stopped with "ctx 'gpu' asks for a GPU but none is visible" alone
    (and `-p ctx GPU` was quoted as 'gpu', not as typed): the line says what to pass instead."""
    monkeypatch.setattr(mx.context, "num_gpus", lambda: 0)
    with pytest.raises(FastTextError) as err:
        parse_ctx(spec)
    assert str(err.value) == (f"ctx {spec!r} asks for a GPU but none is visible (mx.context.num_gpus() == 0): use auto "
                              f"(every GPU, else the CPU) or cpu")


def test_an_mx_context_of_a_gpu_that_is_not_there_is_refused_as_its_string_is(monkeypatch):
    """``ctx=[mx.cpu(), mx.gpu(0)]`` (the Python API's list of contexts) on a machine without a GPU was returned
    unchecked, and training ended in MXNet's raw "GPU is not enabled" traceback; ``'gpu:0'`` is one line."""
    monkeypatch.setattr(mx.context, "num_gpus", lambda: 0)
    assert parse_ctx([mx.cpu(), mx.cpu(1)]) == [mx.cpu(), mx.cpu(1)]
    with pytest.raises(FastTextError) as err:
        parse_ctx([mx.cpu(), mx.gpu(0)])
    assert str(err.value) == ("ctx gpu(0) asks for a GPU but none is visible (mx.context.num_gpus() == 0): use auto "
                              "(every GPU, else the CPU) or cpu")
    monkeypatch.setattr(mx.context, "num_gpus", lambda: 2)
    assert parse_ctx(mx.gpu(1)) == [mx.gpu(1)]
    with pytest.raises(FastTextError, match=r"^ctx gpu\(2\): only 2 GPU\(s\) visible$"):
        parse_ctx([mx.gpu(0), mx.gpu(2)])


def test_training_on_a_gpu_context_without_a_gpu_is_one_error_not_mxnets_traceback(monkeypatch):
    monkeypatch.setattr(mx.context, "num_gpus", lambda: 0)  # (as on a machine without one)
    with pytest.raises(FastTextError, match="asks for a GPU but none is visible"):
        train(LabeledTexts(["1", "2"], ["a", "b"]), None, TrainConfig(progress=False, ctx=[mx.cpu(), mx.gpu(0)]))


@pytest.mark.parametrize("kwargs, message", [
    ({"epochs": 0}, "epochs"), ({"emsize": -1}, "emsize"), ({"batch_size": 0}, "batch_size"),
    ({"optimizer": "rmsprop"}, "optimizer"), ({"lr": 0}, "lr"), ({"wd": -1.0}, "wd"), ({"kvstore": "nccl"}, "kvstore"),
])
def test_bad_config(kwargs, message):
    with pytest.raises(FastTextError, match=message):
        TrainConfig(**kwargs)


def test_single_class_and_unknown_validation_label():
    with pytest.raises(FastTextError, match="single class"):
        train(LabeledTexts(["1", "1"], ["a", "b"]), None, TrainConfig(progress=False))
    with pytest.raises(FastTextError, match="not seen in training"):
        train(LabeledTexts(["1", "2"], ["a", "b"]), LabeledTexts(["3"], ["c"]), TrainConfig(progress=False))


def test_bundle_round_trip_predicts_the_same(splits, tmp_path):
    trained = train(*splits, TrainConfig(epochs=2, batch_size=256, progress=False, ngrams=2, buckets=20000))
    where = save_bundle(trained, str(tmp_path / "bundle"))
    predictor = Predictor.load(where)
    from fasttext_lib.scoring import predict_bags

    texts = splits[1].texts[:50]
    expected = predict_bags(trained.model, trained.featurizer, trained.featurizer.transform(texts), mx.cpu())
    np.testing.assert_allclose(predictor.predict_proba(texts), expected, rtol=1e-6)
    out = predictor.predict(["Vai not good", ""])
    assert {o["label"] for o in out} <= {"1", "2"} and all(0.5 <= o["probability"] <= 1 for o in out)
    metrics = predictor.evaluate(splits[1])
    assert metrics["n"] == len(splits[1]) and abs(metrics["accuracy"] - trained.history[-1]["val_accuracy"]) < 1e-9
    assert predictor.metrics["history"][-1]["epoch"] == 2
    tokens, vectors = predictor.vocabulary_rows()
    assert len(tokens) == vectors.shape[0] and vectors.shape[1] == 100


def test_prediction_batches_shrink_to_fit_the_tensor_limit(splits, monkeypatch):
    from fasttext_lib import batches
    from fasttext_lib.scoring import predict_bags

    trained = train(*splits, TrainConfig(epochs=1, batch_size=256, progress=False, ngrams=2, buckets=50000))
    bags = trained.featurizer.transform(splits[1].texts)
    expected = predict_bags(trained.model, trained.featurizer, bags, mx.cpu())
    # pretend the limit is small: 300 documents x their distinct rows no longer fit in one batch
    monkeypatch.setattr(batches, "MAX_TENSOR_CELLS", 300 * 2000)
    got = predict_bags(trained.model, trained.featurizer, bags, mx.cpu(), batch_size=300)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    batch = batches.BatchMaker(bags, np.zeros(len(bags)), trained.featurizer.num_rows).make(np.arange(300))
    with pytest.raises(FastTextError, match="smaller batch size"):
        batches.to_batch_arrays(batch, mx.cpu(), True, native=False)


def test_release_texts_frees_them_and_changes_nothing(splits):
    from fasttext_lib.data import LabeledTexts

    cfg = TrainConfig(epochs=2, batch_size=200, progress=False, ngrams=2, buckets=10000, seed=3)
    kept = train(*splits, cfg)
    copies = [LabeledTexts(list(d.labels), list(d.texts)) for d in splits]
    released = train(*copies, cfg, release_texts=True)
    assert copies[0].texts == [] and copies[1].texts == []
    for k, v in params_of(kept).items():
        np.testing.assert_array_equal(v, params_of(released)[k])
    assert kept.history[-1]["val_loss"] == released.history[-1]["val_loss"]


def test_sgd_on_large_batches_gives_the_output_layer_the_row_scales_factor():
    """With n-grams above batch 256 the SGD row scale's shrink k multiplies frequent rows' steps by up
    to 1 + k; the output layer (in every document) gets lr x (1 + k). Not below, not for unigrams,
    not for adam."""
    from fasttext_lib.optim import EMBEDDING_KEY, OUTPUT_KEY, make_optimizer
    from fasttext_lib.schedule import sgd_row_shrink

    for batch, factor in ((16, 1.0), (256, 1.0), (512, 2.0), (1024, 4.0)):
        cfg = TrainConfig(lr=0.5, batch_size=batch, epochs=1, ngrams=2)
        opt = make_optimizer(cfg, steps_per_epoch=10)
        assert opt._get_lr(OUTPUT_KEY) == pytest.approx(0.5 * factor) and opt._get_lr(EMBEDDING_KEY) == 0.5
        assert sgd_row_shrink(cfg) == factor - 1.0
    unigrams = make_optimizer(TrainConfig(lr=0.5, batch_size=1024, epochs=1, ngrams=1), steps_per_epoch=10)
    assert unigrams._get_lr(OUTPUT_KEY) == unigrams._get_lr(EMBEDDING_KEY) == 0.5
    adam = make_optimizer(TrainConfig(optimizer="adam", lr=0.01, batch_size=1024, epochs=1, ngrams=2), steps_per_epoch=10)
    assert adam._get_lr(OUTPUT_KEY) == adam._get_lr(EMBEDDING_KEY) == 0.01


@pytest.mark.parametrize("classes, dropout, optimizer", [(2, 0.0, "sgd"), (3, 0.3, "sgd"), (2, 0.0, "adam")])
def test_cached_classifier_graphs_change_no_number(monkeypatch, classes, dropout, optimizer):
    """train() runs the output layer, the loss and its sum as one cached graph (hybridize, for the
    per-step overhead); the parameters and losses must be exactly those of the step run op by op."""
    data = generate_reviews(600, num_classes=classes, seed=5)
    cfg = TrainConfig(epochs=2, batch_size=64, progress=False, ngrams=2, buckets=5000, seed=4, dropout=dropout,
                      optimizer=optimizer, lr=0.5 if optimizer == "sgd" else 0.01)
    cached = train(data, data.head(100), cfg)
    assert cached.model.output._active
    monkeypatch.setattr(mx.gluon.HybridBlock, "hybridize", lambda self, *args, **kwargs: None)
    op_by_op = train(data, data.head(100), cfg)
    assert not op_by_op.model.output._active
    for name, value in params_of(op_by_op).items():
        np.testing.assert_array_equal(params_of(cached)[name], value, err_msg=name)
    assert [r["train_loss"] for r in cached.history] == [r["train_loss"] for r in op_by_op.history]
    assert [r["val_loss"] for r in cached.history] == [r["val_loss"] for r in op_by_op.history]


def test_the_history_frame_names_the_split_its_held_out_scores_are_of(splits):
    """The frame's val_loss / val_accuracy held the test split's scores where that was the split given (notebook 02's,
    a training job's test channel): they are named by the split now, validation_ (what train() calls val_data) unless
    told test, and left out where none was scored. The history records keep their keys, which metrics.json and
    checkpoints store: a checkpoint an older version wrote resumes, and its readers read it as before."""
    from fasttext_lib.errors import FastTextError

    trained = train(*splits, TrainConfig(epochs=1, buckets=5000, progress=False, ctx="cpu"))
    assert set(trained.history[0]) == set(HISTORY_COLUMNS)
    accuracy = trained.history[0]["val_accuracy"]
    for held_out in ("validation", "test"):
        frame = trained.history_frame(held_out)
        assert list(frame.columns) == ["train_loss", f"{held_out}_loss", f"{held_out}_accuracy", "seconds",
                                       "samples_per_s"]
        assert frame[f"{held_out}_accuracy"].tolist() == [accuracy]
    assert list(trained.history_frame(None).columns) == ["train_loss", "seconds", "samples_per_s"]
    with pytest.raises(FastTextError, match="^held_out must be one of validation, test, got 'val'"):
        trained.history_frame("val")


def test_score_train_records_training_accuracy_and_changes_no_parameter(splits):
    """``score_train=True`` (notebook 02's train accuracy beside test accuracy): each epoch's
    ``train_accuracy`` is the accuracy of that epoch's final parameters on the training split
    (scored in chunks); training is bit-identical without it."""
    config = TrainConfig(epochs=2, ngrams=2, buckets=5000, progress=False, ctx="cpu")
    scored = train(*splits, config, score_train=True)
    plain = train(*splits, config)
    for name, value in params_of(plain).items():
        assert np.array_equal(params_of(scored)[name], value), name
    assert all("train_accuracy" not in row for row in plain.history)
    frame = scored.history_frame("test")
    assert list(frame.columns[:4]) == ["train_loss", "test_loss", "train_accuracy", "test_accuracy"]
    assert list(plain.history_frame("test").reset_index().columns) == ["epoch", "train_loss", "test_loss",
                                                                       "test_accuracy", "seconds", "samples_per_s"]
    predictor = Predictor(scored.model, scored.featurizer, scored.labels, scored.config.to_dict())
    assert frame["train_accuracy"].iloc[-1] == predictor.evaluate(splits[0])["accuracy"]
    assert frame["train_accuracy"].iloc[-1] > frame["test_accuracy"].iloc[-1]


def test_score_train_as_text_is_refused_not_taken_as_true(splits):
    """score_train="no" (notebook 02's train_accuracy from papermill -p train_accuracy no) was true: a pass over
    the training split per epoch that nobody asked for. Refused before anything is read or trained."""
    with pytest.raises(FastTextError, match="^score_train must be True or False, got 'no'$"):
        train(*splits, TrainConfig(epochs=1, progress=False, ctx="cpu"), score_train="no")


def test_train_names_the_settings_of_its_refusals_as_the_python_api_takes_them():
    """The lines train() says of a setting name it as its caller's user gives it: the command line's flags
    (tests/test_hostile_cli.py), the Python API's arguments here (min_count, lr), not a flag it has none of."""
    from fasttext_lib.train import diverged

    data = LabeledTexts(["1", "2"], ["good food", "bad food"])
    with pytest.raises(FastTextError, match=r"^empty vocabulary: no word occurs at least 3 times in the training data "
                                            r"\(min_count=3\), so every document would get the same prediction; "
                                            r"lower min_count$"):
        train(data, None, TrainConfig(epochs=1, min_count=3, progress=False, ctx="cpu"))
    said = str(diverged("the training loss became nan", 1, 2, TrainConfig(lr=2.0, optimizer="sgd")))
    assert said.endswith("at epoch 1, step 2 (lr=2, optimizer='sgd'); try a smaller lr"), said


def test_accuracy_on_scores_every_document_in_chunks(splits):
    from fasttext_lib.features import Featurizer
    from fasttext_lib.label_encoding import encode_labels
    from fasttext_lib.train import accuracy_on

    trained = train(*splits, TrainConfig(epochs=1, progress=False, ctx="cpu"))
    featurizer, tokens = Featurizer.fit(splits[0].texts, return_bags="tokens")
    assert featurizer.vocab.idx_to_token == trained.featurizer.vocab.idx_to_token
    y = encode_labels(splits[0].labels, trained.labels, "train")
    whole = accuracy_on(trained.model, featurizer, tokens.encode_all(), y, mx.cpu(), chunk_size=10 ** 9)
    assert accuracy_on(trained.model, featurizer, tokens, y, mx.cpu(), chunk_size=70) == whole
    assert accuracy_on(trained.model, featurizer, tokens.encode_all(), y, mx.cpu(), chunk_size=1) == whole
    probs = Predictor(trained.model, trained.featurizer, trained.labels, {}).predict_proba(splits[0].texts)
    assert whole == float((probs.argmax(axis=1) == y).mean())


def test_score_train_encodes_the_training_split_a_bounded_number_of_tokens_at_a_time(splits, monkeypatch):
    """The training split is scored in chunks of at most SCORED_AT_ONCE tokens, however few its documents: a chunk of
    65,536 documents (the whole of any split up to that size) was encoded at once, ~190 MB of bags at 94k Yelp-shaped
    reviews, which the heap then kept (train.keep_freed_memory): most of notebook 02's peak above the command line's."""
    import fasttext_lib.train as train_module

    scored = []
    real = train_module.probabilities
    monkeypatch.setattr(train_module, "probabilities", lambda model, featurizer, bags, ctx: (
        scored.append((len(bags), bags.nnz)), real(model, featurizer, bags, ctx))[1])
    monkeypatch.setattr(train_module, "SCORED_AT_ONCE", 2000, raising=False)
    config = TrainConfig(epochs=2, ngrams=2, buckets=10000, progress=False, ctx="cpu", seed=3)
    trained = train(splits[0], None, config, score_train=True)  # (no validation split: every scoring is score_train's)
    assert sum(n for n, _ in scored) == 2 * len(splits[0]) and len(scored) > 2
    assert all(nnz <= 2 * 2000 or n == 1 for n, nnz in scored), max(scored, key=lambda s: s[1])
    # the same accuracies as scoring each epoch's split whole
    monkeypatch.setattr(train_module, "SCORED_AT_ONCE", 10 ** 9, raising=False)
    assert [r["train_accuracy"] for r in train(splits[0], None, config, score_train=True).history] == \
        [r["train_accuracy"] for r in trained.history]


def test_train_gives_the_heap_back_once_the_runs_arrays_are_freed(splits, monkeypatch):
    """As train() returns, the heap's free pages go back to the kernel (malloc_trim), after the run's bags, batch maker
    and updater are freed: kept resident (keep_freed_memory keeps the heap whole), they were peak memory under what
    the caller did next (the CLI's save, notebook 02's plot and imports)."""
    import weakref

    import fasttext_lib.train as train_module

    makers, trims = [], []

    class Maker(train_module.BatchMaker):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            makers.append(weakref.ref(self))

    monkeypatch.setattr(train_module, "BatchMaker", Maker)
    monkeypatch.setattr(train_module, "give_freed_memory_back",
                        lambda: trims.append([maker() is not None for maker in makers]), raising=False)
    train(*splits, TrainConfig(epochs=1, progress=False, ctx="cpu"), score_train=True)
    assert trims and trims[-1] == [False], trims  # the last trim: the run's batch maker (its bags with it) freed first


@pytest.mark.parametrize("native", ["1", "0"])
@pytest.mark.parametrize("split", ["train", "validation"])
def test_a_lone_surrogate_in_a_text_to_train_on_is_one_error_naming_it(monkeypatch, native, split):
    # (json.loads("\"\\ud83d\"") or a str decoded with surrogateescape: no UTF-8 holds it) it was a UnicodeEncodeError
    # traceback from inside the featurizer; Predictor.predict names the text, and so does training now
    monkeypatch.setenv("FASTTEXT_LIB_NATIVE", native)
    good = LabeledTexts(["a", "b"] * 5, ["good food", "bad food"] * 5)
    bad = LabeledTexts(["a", "b"] * 5, ["good food", "bad food", "ok \ud83d great"] + ["bad food"] * 7)
    data, validation = (bad, good) if split == "train" else (good, bad)
    with pytest.raises(FastTextError, match=rf"{split} text 2 is not valid Unicode text \(character '\\ud83d' at "
                                            rf"position 3: a lone surrogate\)"):
        train(data, validation, TrainConfig(epochs=1, progress=False))


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_a_run_of_one_step_learns(optimizer, tmp_path):
    """The linear schedule reached lr 0 at the run's last step (MXNet counts the first update as 1, and
    PolyScheduler's lr is 0 at max_update): a run of one step (data smaller than a batch, --epochs 1) trained
    nothing at all, its predictions those of the initialization (0.50)."""
    data = LabeledTexts(["a", "b", "a", "b"], ["good fine nice", "bad awful poor", "great good", "terrible bad"])
    trained = train(data, None, TrainConfig(epochs=1, lr=0.5, batch_size=16, progress=False, ctx="cpu",
                                            optimizer=optimizer))
    predictor = Predictor.load(save_bundle(trained, tmp_path / "b"))
    good, bad = predictor.predict(["good fine", "bad awful"])
    assert (good["label"], bad["label"]) == ("a", "b")
    assert min(good["probability"], bad["probability"]) > 0.51


def test_every_step_of_the_linear_schedule_has_a_positive_lr_and_they_spend_half_the_budget():
    """fastText's lr falls linearly from lr towards 0 over the run: T steps spend lr * T / 2 in all. The
    last step's lr was 0 (one step of the budget lost)."""
    from fasttext_lib.optim import make_optimizer

    for steps in (1, 2, 7, 100):
        optimizer = make_optimizer(TrainConfig(epochs=1, lr=0.5, batch_size=16, progress=False), steps)
        lrs = []
        for _ in range(steps):
            optimizer._update_count(0)
            lrs.append(optimizer._get_lr(0))
        assert min(lrs) > 0 and lrs == sorted(lrs, reverse=True)
        assert sum(lrs) == pytest.approx(0.5 * steps / 2)


def test_classes_that_differ_only_in_unicode_normalization_are_refused():
    """'café' precomposed and 'café' with a combining accent (data joined from two sources) trained as two
    classes that look the same everywhere they are shown: each half of the documents of one class."""
    composed, combining = "caf\u00e9", "cafe\u0301"
    data = LabeledTexts([composed, combining, "tea", composed, combining, "tea"],
                        ["good fine", "good nice", "bad awful", "great good", "fine nice", "terrible bad"])
    with pytest.raises(FastTextError, match=r"classes 'cafe\\u0301' and 'caf\\xe9', one label in two Unicode normalizations") as caught:
        train(data, None, TrainConfig(epochs=1, progress=False, ctx="cpu"))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("invisible", ["\u200b", "\u00ad", "\ufeff", "\u2060"])
def test_classes_that_differ_only_in_an_invisible_character_are_refused(tmp_path, invisible):
    """'positive' and 'positive' + a zero-width space (a label pasted from a web page or a spreadsheet cell in some
    rows; a soft hyphen, a BOM or a word joiner likewise) trained as two classes, each with part of the class's
    documents, that print alike in evaluate's table and the notebooks, without a word."""
    path = tmp_path / "train.csv"
    rows = [("positive" + (invisible if i % 3 == 0 else ""), "good fine great") if i % 2 else ("negative", "bad awful")
            for i in range(12)]
    path.write_text("label,text\n" + "".join(f"{label},{text}\n" for label, text in rows), encoding="utf-8")
    with pytest.raises(FastTextError) as caught:
        train(read_labeled(str(path)), None, TrainConfig(epochs=1, progress=False, ctx="cpu"))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"training data has classes 'positive' ({path}:3) and {ascii('positive' + invisible)} "
                              f"({path}:5), one label with an invisible character (U+{ord(invisible):04X}) in some rows")


ENGLAND, SCOTLAND = ("\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in tag) + "\U000e007f"
                     for tag in ("gbeng", "gbsct"))  # (a black flag and tag characters, U+E0020-U+E007F)


@pytest.mark.parametrize("classes", [
    ["\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "\u0645\u06cc\u062e\u0648\u0627\u0647\u0645"],  # Persian: ZWNJ
    ["\u0915\u094d\u200d\u0937", "\u0915\u094d\u0937"],  # Devanagari: a ZWJ asks for the half form
    ["\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f468\U0001f469\U0001f467"],  # one family, three faces
    [ENGLAND, SCOTLAND],  # two flags, told apart by their tag characters alone
], ids=["persian-zwnj", "devanagari-zwj", "emoji-zwj", "flags"])
def test_classes_that_a_joiner_or_a_tag_character_tells_apart_are_two_classes(classes):
    """The zero-width joiners U+200C and U+200D change how Persian and Indic words and emoji sequences are written,
    and tag characters which flag a black flag is: classes they tell apart print differently and are two. They were
    refused as "one label with an invisible character" (the rule was every Unicode format character, Cf)."""
    from fasttext_lib.class_checks import refuse_classes_spelled_alike

    refuse_classes_spelled_alike(classes)  # (not refused)


@pytest.mark.parametrize("label", ["positive\u200d", "\u200cpositive", "positive\u200b\u200d", "posi\u200ftive"])
def test_a_joiner_that_joins_nothing_or_a_direction_mark_is_still_an_invisible_character_of_a_class(label):
    """A joiner at a label's start or end joins nothing, and a direction mark (U+200F) draws nothing: pasted into
    some rows' labels they still make two classes that print alike."""
    from fasttext_lib.class_checks import refuse_classes_spelled_alike

    with pytest.raises(FastTextError, match="one label with (an )?invisible character"):
        refuse_classes_spelled_alike(["positive", label, "negative"])


@pytest.mark.parametrize("classes", [["positive", "posi\u00adtive\u200b\u00ad"], ["posi\u00adtive", "positive\u200b"]],
                         ids=["both-in-one", "one-in-each"])
def test_classes_that_differ_in_several_invisible_characters_name_each(classes):
    """A soft hyphen and a zero-width space (in one class, or one in each): the error named the first alone, and its
    pandas line removed only that one, which left the two classes two."""
    from fasttext_lib.class_checks import refuse_classes_spelled_alike

    with pytest.raises(FastTextError) as caught:
        refuse_classes_spelled_alike(classes + ["negative"])
    message = str(caught.value)
    assert ("one label with invisible characters (U+00AD, U+200B) in some rows, which would train as two classes "
            "shown alike; write the labels without them (pandas: df['label'] = df['label'].str.replace('\\xad', '')"
            ".str.replace('\\u200b', ''))") in message, message


def test_validation_labels_in_another_unicode_normalization_are_named_as_such():
    """'café' not seen in training (known: café, tea): the error showed two strings that print alike."""
    composed, combining = "caf\u00e9", "cafe\u0301"
    data = LabeledTexts([composed, "tea", composed, "tea"], ["good fine", "bad awful", "great good", "terrible bad"])
    validation = LabeledTexts([combining, "tea"], ["good", "bad"])
    with pytest.raises(FastTextError, match=r"another Unicode normalization.*'cafe\\u0301' for 'caf\\xe9'"):
        train(data, validation, TrainConfig(epochs=1, progress=False, ctx="cpu"))
