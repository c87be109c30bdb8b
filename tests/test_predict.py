"""Serving's numpy forward pass (predict.CpuScorer) against the MXNet route (predict_bags)."""
import mxnet as mx
import numpy as np
import pytest

from conftest import make_splits
from fasttext_lib import native_features as nf
from fasttext_lib.config import TrainConfig
from fasttext_lib.data import LabeledTexts
from fasttext_lib.model import cpu_view
from fasttext_lib.predict import CpuScorer, Predictor, predict_bags
from fasttext_lib.train import train


@pytest.fixture(scope="module", params=[2, 3], ids=["binary", "3 classes"])
def trained(request):
    from fasttext_lib.synthetic import generate_reviews

    data = generate_reviews(1300, num_classes=request.param, seed=4)
    config = TrainConfig(epochs=2, batch_size=128, ngrams=2, buckets=5000, progress=False)
    return train(LabeledTexts(data.labels[:1000], data.texts[:1000]), None, config), data.texts[1000:]


def _reference(trained, texts):
    model, featurizer = trained.model, trained.featurizer
    return predict_bags(model, featurizer, featurizer.transform(texts), mx.cpu())


@pytest.mark.parametrize("native", [True, False], ids=["native mean", "numpy mean"])
def test_cpu_scorer_equals_the_mxnet_route(trained, native, monkeypatch):
    trained, texts = trained
    texts = texts + ["", "!!!", "never seen words zzzq", texts[0] * 30]
    expected = _reference(trained, texts)
    if not native:
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu())
    got = predictor.predict_proba(texts)
    assert got.dtype == np.float32 and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, atol=1e-6, rtol=0)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-6)
    one = [predictor.predict_proba([t])[0] for t in texts[:20]]  # one review at a time: the same
    np.testing.assert_allclose(np.array(one), expected[:20], atol=1e-6, rtol=0)
    labels = predictor.predict(texts[:5])
    assert [r["label"] for r in labels] == [trained.labels[k] for k in expected[:5].argmax(axis=1)]


def test_native_mean_is_the_training_forward_sum(trained):
    trained, texts = trained
    bags = trained.featurizer.transform(texts)
    table = trained.model.embedding.weight.data().asnumpy()
    got = nf.bag_mean(table, bags.rows, bags.weights, bags.offsets)
    expected = np.stack([(table[bags.rows[a:b]] * bags.weights[a:b, None]).sum(axis=0)
                         for a, b in zip(bags.offsets[:-1], bags.offsets[1:])])
    np.testing.assert_allclose(got, expected, atol=1e-6)
    with pytest.raises(ValueError, match="outside the table"):
        nf.bag_mean(table, np.array([len(table)], np.int32), np.ones(1, np.float32), np.array([0, 1]))
    with pytest.raises(ValueError, match="offsets"):
        nf.bag_mean(table, np.array([0], np.int32), np.ones(1, np.float32), np.array([0, 2]))


def test_cpu_view_shares_memory_and_sees_updates():
    a = mx.nd.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    view = cpu_view(a)
    np.testing.assert_array_equal(view, a.asnumpy())
    a[:] = a * 2  # an in-place update through the engine
    a.wait_to_read()
    np.testing.assert_array_equal(view, np.arange(12).reshape(3, 4) * 2)
    assert cpu_view(a.astype("float64")) is None


def test_scorer_follows_training_updates():
    # evaluate_bags scores with a scorer over the live table: it must see the latest parameters
    train_data, val = make_splits(600, 100, seed=6)
    trained = train(train_data, val, TrainConfig(epochs=2, batch_size=64, progress=False))
    scorer = CpuScorer(trained.model, mx.cpu())
    bags = trained.featurizer.transform(val.texts)
    before = scorer.probabilities(bags)
    weight = trained.model.embedding.weight.data()
    weight[:] = weight * 0.5
    np.testing.assert_allclose(scorer.probabilities(bags), predict_bags(trained.model, trained.featurizer, bags, mx.cpu()), atol=1e-6)
    assert not np.allclose(before, scorer.probabilities(bags))
    np.testing.assert_allclose(trained.history[-1]["val_accuracy"],
                               (before.argmax(1) == np.array([trained.labels.index(l) for l in val.labels])).mean())
