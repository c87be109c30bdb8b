"""The dense-gradient GluonNLP recipe (baseline.py), timed against this library by notebook 03."""
import math

import numpy as np
import pytest

from fasttext_lib.data import LabeledTexts
from fasttext_lib.features import Featurizer

# Three classes of distinct words: separable, so a recipe that learns them brings its loss well below chance's.
WORDS = {"sports": "goal match team score", "world": "election minister border treaty", "tech": "chip software phone code"}


def three_classes(n=240):
    labels = [list(WORDS)[i % 3] for i in range(n)]
    texts = [" ".join(np.random.RandomState(i).permutation(WORDS[label].split())) for i, label in enumerate(labels)]
    return LabeledTexts(labels, texts)


def test_the_dense_recipe_has_an_output_per_class_with_more_than_two_classes():
    """GluonNLP's fasttext_word_ngram.py gives a multi-class set one output per class and a softmax cross-entropy
    (one sigmoid for two). The recipe had one sigmoid for every set: notebook 03 with timing_text="dataset" on
    ag_news gave it class ids 0..3 as sigmoid targets, which it could never fit (its loss went below 0)."""
    from fasttext_lib.baseline import time_dense_recipe
    from fasttext_lib.label_encoding import encode_labels

    data = three_classes()
    featurizer, bags = Featurizer.fit(data.texts, ngrams=1, buckets=0, return_bags=True)
    labels = encode_labels(data.labels, data.classes(), "data")
    result = time_dense_recipe(bags, labels, featurizer.num_rows, emsize=8, batches=12, warmup=1, num_classes=3)
    assert result["batches"] == 12 and result["docs_per_s"] > 0
    assert 0 <= result["loss"] < 0.5 * math.log(3)  # a cross-entropy, learned below chance's


def test_the_dense_recipe_refuses_class_ids_its_output_cannot_hold():
    from fasttext_lib.baseline import time_dense_recipe
    from fasttext_lib.errors import FastTextError

    data = three_classes(80)
    featurizer, bags = Featurizer.fit(data.texts, ngrams=1, buckets=0, return_bags=True)
    with pytest.raises(FastTextError, match=r"^labels must be one class id in 0\.\.1 per document"):
        time_dense_recipe(bags, np.arange(len(bags)) % 3, featurizer.num_rows, emsize=4, batches=1)  # 2 classes


def test_two_classes_keep_the_recipes_single_sigmoid_output():
    from fasttext_lib.baseline import time_dense_recipe

    data = three_classes(96)
    featurizer, bags = Featurizer.fit(data.texts, ngrams=1, buckets=0, return_bags=True)
    result = time_dense_recipe(bags, np.arange(len(bags)) % 2, featurizer.num_rows, emsize=4, batches=2, warmup=1)
    assert result["batches"] == 2 and result["loss"] >= 0


def test_compare_with_dense_times_both_recipes_on_a_three_class_set():
    """Notebook 03's recipe table in one call: both recipes on the same documents, the dense one with an output per
    class (the labels encoded as training encodes them)."""
    from fasttext_lib.baseline import DENSE_RECIPE, compare_with_dense

    table = compare_with_dense(three_classes(), batch_size=16, epoch_docs=560_000, emsize=8, ngrams=2, buckets=1000,
                               dense_batches=4)
    assert list(table.index) == [DENSE_RECIPE, "fasttext_lib (row-sparse, batch 16)"]
    # an epoch of epoch_docs documents (not a Yelp epoch: 03's timing_text="dataset" times the prepared data)
    assert list(table.columns) == ["samples_per_s", "epoch_hours_estimate", "speedup"]
    assert (table.samples_per_s > 0).all() and table.speedup.iloc[0] == 1.0
    np.testing.assert_allclose(table.epoch_hours_estimate, 560_000 / table.samples_per_s / 3600)


def test_compare_with_dense_fits_the_vocabulary_once_for_both_recipes(monkeypatch):
    """The features are fitted once: the dense recipe's bags are Featurizer.fit's, and the trained model is the one
    train() makes when it featurizes the documents itself (it was given nothing and fitted them a second time)."""
    from conftest import params_of
    from fasttext_lib import baseline
    from fasttext_lib import train as train_module
    from fasttext_lib.config import TrainConfig

    data = three_classes()
    fits, timed, trained = [], [], []
    real_fit, real_time, real_train = Featurizer.fit.__func__, baseline.time_dense_recipe, train_module.train
    monkeypatch.setattr(Featurizer, "fit", classmethod(lambda cls, *a, **k: fits.append(1) or real_fit(cls, *a, **k)))
    monkeypatch.setattr(baseline, "time_dense_recipe", lambda bags, *a, **k: timed.append(bags) or real_time(bags, *a, **k))
    monkeypatch.setattr(train_module, "train", lambda *a, **k: trained.append(real_train(*a, **k)) or trained[-1])
    baseline.compare_with_dense(data, batch_size=16, epoch_docs=1000, emsize=8, ngrams=2, buckets=1000, dense_batches=4)
    assert len(fits) == 1
    monkeypatch.undo()
    _, bags = Featurizer.fit(data.texts, ngrams=2, buckets=1000, return_bags=True)
    for field in ("rows", "weights", "offsets"):
        assert np.array_equal(getattr(timed[0], field), getattr(bags, field)), field
    alone = train_module.train(data, None, TrainConfig(epochs=2, optimizer="sgd", emsize=8, ngrams=2, buckets=1000,
                                                       batch_size=16, ctx="cpu", seed=0, progress=False))
    assert trained[0].config == alone.config
    for name, value in params_of(alone).items():
        np.testing.assert_array_equal(value, params_of(trained[0])[name], err_msg=name)
