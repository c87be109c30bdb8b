"""Serving's numpy forward pass (scoring.CpuScorer) against the MXNet route (predict_bags)."""
import re

import mxnet as mx
import numpy as np
import pytest

from conftest import make_splits, save_as_before_the_rule_was_recorded
from fasttext_lib import native_features as nf
from fasttext_lib.config import TrainConfig
from fasttext_lib.data import LabeledTexts
from fasttext_lib.table_memory import cpu_view
from fasttext_lib.predict import Predictor
from fasttext_lib.scoring import CpuScorer, predict_bags
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


@pytest.mark.parametrize("native", [True, False], ids=["native mean", "numpy mean"])
def test_a_review_gets_the_same_bits_alone_or_among_other_reviews(trained, native, monkeypatch):
    """A review's probabilities are a function of the review alone: the batch's matrix product (BLAS, whose kernels
    differ by the number of rows) gave the same review other last digits in another request or mini-batch
    (0.6600844860 alone, 0.6600845456 among others), so an endpoint's answer and predict's on a file disagreed."""
    trained, texts = trained
    if not native:
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu())
    together = predictor.predict_proba(texts)
    for n in (1, 2, 3, 5, 7, 16, 33, 100):
        assert predictor.predict_proba(texts[:n]).tobytes() == together[:n].tobytes(), n
    order = np.random.default_rng(0).permutation(len(texts))
    assert predictor.predict_proba([texts[i] for i in order]).tobytes() == together[order].tobytes()
    alone = np.concatenate([predictor.predict_proba([t]) for t in texts])
    assert alone.tobytes() == together.tobytes()


def test_past_the_own_sums_classes_the_scores_are_blas_s_product_to_float_rounding(trained, monkeypatch):
    """Many classes (past scoring.OWN_SUMS_CLASSES) score with BLAS's product: the same probabilities to rounding."""
    from fasttext_lib import scoring

    trained, texts = trained
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu())
    own_sums = predictor.predict_proba(texts)
    monkeypatch.setattr(scoring, "OWN_SUMS_CLASSES", 0)
    np.testing.assert_allclose(predictor.predict_proba(texts), own_sums, atol=1e-6, rtol=0)


def test_a_confident_binary_answer_keeps_the_other_class_probability_exact():
    """The first class's probability was 1 - p in float32: 0.0 once p was within 6e-8 of 1 (a score above ~17),
    where it is ~exp(-score), so evaluate's log loss of a confident mistake was capped for that class and exact for
    the other. Both routes (numpy for serving, MXNet's operators for other devices) give each class its own sigmoid."""
    from fasttext_lib.synthetic import generate_reviews

    data = generate_reviews(300, seed=5)
    trained = train(LabeledTexts(data.labels, data.texts), None, TrainConfig(epochs=1, batch_size=64, buckets=1000,
                                                                             progress=False))
    weight, texts = trained.model.output.weight, data.texts[:100]
    bags = trained.featurizer.transform(texts)
    means = CpuScorer(trained.model, mx.cpu()).means(bags, 0, len(bags))
    weight.set_data(weight.data() * float(30 / np.median(np.abs(means @ weight.data().asnumpy().T))))
    scores = means @ weight.data().asnumpy().T  # half of them beyond +-30
    confident = np.abs(scores[:, 0]) > 20  # p within 2e-9 of 1
    assert 10 <= confident.sum() < 100, np.sort(np.abs(scores[:, 0]))
    expected = 1.0 / (1.0 + np.exp(np.stack([scores[:, 0], -scores[:, 0]], axis=1).astype(np.float64)))
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu())
    for got in (predictor.predict_proba(texts), predict_bags(trained.model, trained.featurizer, bags, mx.cpu())):
        assert (got[confident] > 0).all(), got[confident]
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=0)


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


def test_native_mean_summed_on_a_slice_at_a_time_is_the_same_bits(trained):
    """``bag_mean(..., add=True)`` goes on from what ``out`` holds: a document's entries given in slices (each slice's
    rows gathered alone, as CpuScorer gathers a compact bundle's) sum to the bits of one call."""
    trained, texts = trained
    bags = trained.featurizer.transform([" ".join(texts)])
    table = trained.model.embedding.weight.data().asnumpy()
    whole = nf.bag_mean(table, bags.rows, bags.weights, bags.offsets)
    out = np.zeros_like(whole)
    for a in range(0, len(bags.rows), 7):
        b = min(len(bags.rows), a + 7)
        nf.bag_mean(table[bags.rows[a:b]], np.arange(b - a), bags.weights[a:b], np.array([0, b - a]), out=out, add=True)
    assert len(bags.rows) > 70 and out.tobytes() == whole.tobytes()
    with pytest.raises(ValueError, match="out must be"):
        nf.bag_mean(table, bags.rows, bags.weights, bags.offsets, out=np.zeros((2, table.shape[1]), np.float32))


def test_cpu_view_shares_memory_and_sees_updates():
    a = mx.nd.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    view = cpu_view(a)
    np.testing.assert_array_equal(view, a.asnumpy())
    a[:] = a * 2  # an in-place update through the engine
    a.wait_to_read()
    np.testing.assert_array_equal(view, np.arange(12).reshape(3, 4) * 2)
    assert cpu_view(a.astype("float64")) is None


def test_scorer_follows_training_updates():
    # a CpuScorer over the live table (training's validation scoring): it must see the latest parameters
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


def test_predict_top_ranks_classes_like_predict_and_filters_by_threshold(trained, tmp_path):
    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.errors import FastTextError

    predictor = Predictor.load(save_bundle(trained[0], str(tmp_path / "b")))
    texts = list(trained[1][:50])
    probs = predictor.predict_proba(texts)
    classes = len(predictor.labels)
    every = predictor.predict_top(texts, k=-1)
    assert [len(r) for r in every] == [classes] * len(texts)
    for p, ranked in zip(probs, every):
        got = [r["probability"] for r in ranked]
        assert got == sorted(got, reverse=True) and got == sorted(p.tolist(), reverse=True)
        assert [predictor.labels.index(r["class_id"]) for r in ranked] == sorted(range(classes), key=lambda j: -p[j])
    assert [r[0] for r in predictor.predict_top(texts)] == predictor.predict(texts)  # k=1: predict's answer
    assert predictor.predict_top(texts, k=classes + 5) == every  # more than there are: all of them
    assert [r[:2] for r in every] == predictor.predict_top(texts, k=2)
    cut = float(np.median(probs.max(axis=1)))
    kept = predictor.predict_top(texts, k=-1, threshold=cut)
    assert kept == [[c for c in r if c["probability"] >= cut] for r in every]
    assert any(r == [] for r in kept) and any(r for r in kept)
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(FastTextError, match="^k must be a whole number"):
            predictor.predict_top(texts, k=bad)
    for bad in (-0.1, 1.01, float("nan"), "0.5"):
        with pytest.raises(FastTextError, match="^threshold must be a probability"):
            predictor.predict_top(texts, threshold=bad)
    # top_of of probabilities that are no (texts, classes) array of this model's: a list was a TypeError traceback, a
    # row an AxisError, another model's of more classes an IndexError, and of fewer named this model's first classes
    assert predictor.top_of(probs.tolist(), k=2) == predictor.top_of(probs, k=2)
    for bad in (probs[0], probs[:, :-1], np.hstack([probs, probs])):
        shape = re.escape(str(bad.shape))
        with pytest.raises(FastTextError, match=rf"^probs must be class probabilities of shape \(texts, {classes}\), "
                                                rf"this model's predict_proba, got shape {shape}$"):
            predictor.top_of(bad)


def test_per_class_scores_from_confusion_counts():
    from fasttext_lib.evaluation import per_class_scores

    # rows: true class; columns: predicted. Class 2 is never predicted; class 3 never occurs.
    counts = [[5, 1, 0, 0], [2, 6, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]]
    a, b, c, d = per_class_scores(counts)
    assert a == {"precision": 5 / 8, "recall": 5 / 6, "f1": 2 * (5 / 8) * (5 / 6) / (5 / 8 + 5 / 6), "support": 6}
    assert b == {"precision": 6 / 8, "recall": 6 / 8, "f1": 6 / 8, "support": 8}
    assert c == {"precision": None, "recall": 0.0, "f1": None, "support": 2}
    assert d == {"precision": None, "recall": None, "f1": None, "support": 0}
    assert per_class_scores([[0, 3], [0, 0]])[0] == {"precision": None, "recall": 0.0, "f1": None, "support": 3}
    assert per_class_scores([[0, 3], [2, 0]])[0] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 3}


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_a_bundle_written_before_text_was_put_in_nfc_reads_its_text_as_then(tmp_path, monkeypatch, native):
    """Text is put in NFC before it is normalized (text.nfc) since bundles record "unicode_normalization": "NFC".
    A bundle written before holds the words of its text as they came: spelled with combining accents (e + U+0301,
    Vietnamese typed so, text from macOS), they were trained on so. Its config.json has no such entry, and its
    text is still read as then: composed, every such word was unknown, and the same data it scored 1.0 on scored
    0.5, silently. A bundle written now records NFC and composes (an NFD and an NFC spelling are one word)."""
    import json
    import os
    import unicodedata

    from fasttext_lib import text as text_module
    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.bundle_format import CONFIG

    if not native:
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
    nfd = lambda s: unicodedata.normalize("NFD", s)  # noqa: E731
    words = {"positive": ["tuyệt", "hài", "lòng", "đẹp"], "negative": ["thất", "vọng", "dở", "tệ"]}
    labels = ["positive", "negative"] * 60
    texts = [nfd(f"quán ăn {words[label][i % 4]} {words[label][(i + 1) % 4]} nay") for i, label in enumerate(labels)]
    config = TrainConfig(epochs=5, batch_size=16, progress=False)
    with monkeypatch.context() as old:  # as the library trained before: no NFC
        old.setattr(text_module, "nfc", lambda s: s)
        trained = train(LabeledTexts(labels, texts), None, config)
    path = save_as_before_the_rule_was_recorded(trained, str(tmp_path / "old"), monkeypatch)
    with open(os.path.join(path, CONFIG)) as f:
        written = json.load(f)
    written.pop("unicode_normalization", None)
    assert nfd("tuyệt") in trained.featurizer.vocab.token_to_idx
    with open(os.path.join(path, CONFIG), "w") as f:
        json.dump(written, f)  # as the library wrote it before
    old_bundle = Predictor.load(path)
    assert [r["label"] for r in old_bundle.predict(texts)] == labels

    fresh = train(LabeledTexts(labels, texts), None, config)
    new_path = save_bundle(fresh, str(tmp_path / "new"))
    with open(os.path.join(new_path, CONFIG)) as f:
        assert json.load(f).get("unicode_normalization") == "NFC-tokens-quotes-br-fixpoint-marks"
    new_bundle = Predictor.load(new_path)
    composed = [unicodedata.normalize("NFC", t) for t in texts]
    assert [r["label"] for r in new_bundle.predict(texts)] == labels
    np.testing.assert_allclose(new_bundle.predict_proba(texts), new_bundle.predict_proba(composed), atol=1e-6)


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_a_bundle_written_before_its_tokens_were_put_in_nfc_reads_its_text_as_then(tmp_path, monkeypatch, native):
    """Bundles record "unicode_normalization": "NFC-tokens" since text is put in NFC again once lowercased (text.lowered):
    Greek capitals with a combining ypogegrammeni (U+0345), or with dialytika and an acute, lowercased out of NFC,
    and a file prepare wrote (normalized once) was trained on composed, predict's raw text not. A bundle written
    before ("NFC") holds those words as lowercasing left them, and reads its text so: composed, they were unknown."""
    import json
    import os

    from fasttext_lib import text as text_module
    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.bundle_format import CONFIG

    if not native:
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
    words = {"positive": ["ΆͅΙ", "ΚΑΛΌ", "ΉͅΣ", "ΩΡΑΪ́Ο"], "negative": ["ΏͅΣ", "ΚΑΚΌ", "ΆͅΣ", "ΆΣΧΗΜΟ"]}
    labels = ["positive", "negative"] * 60
    texts = [f"ΤΟ {words[label][i % 4]} {words[label][(i + 1) % 4]} ΦΑΓΗΤΟ" for i, label in enumerate(labels)]
    first_form = text_module.lowered
    config = TrainConfig(epochs=5, batch_size=16, progress=False)
    with monkeypatch.context() as old:  # as the library trained before: NFC before lowercasing only
        old.setattr(text_module, "lowered", lambda text, form=None: first_form(text, text_module.NFC_FIRST))
        old.setattr(nf, "lowered", lambda text, form=None: first_form(text, text_module.NFC_FIRST))
        trained = train(LabeledTexts(labels, texts), None, config)
    assert "ά\u0345ι" in trained.featurizer.vocab.token_to_idx
    path = save_as_before_the_rule_was_recorded(trained, str(tmp_path / "old"), monkeypatch)
    with open(os.path.join(path, CONFIG)) as f:
        written = json.load(f)
    with open(os.path.join(path, CONFIG), "w") as f:
        json.dump(dict(written, unicode_normalization="NFC"), f)  # as the library wrote it before
    old_bundle = Predictor.load(path)
    assert old_bundle.featurizer.unicode_form == "NFC"
    assert [r["label"] for r in old_bundle.predict(texts)] == labels
    assert old_bundle.featurizer.unk_id not in old_bundle.featurizer.transform(texts).rows

    fresh = Predictor.load(save_bundle(train(LabeledTexts(labels, texts), None, config), str(tmp_path / "new")))
    assert "ᾴι" in fresh.featurizer.vocab.token_to_idx
    assert fresh.featurizer.unicode_form == "NFC-tokens-quotes-br-fixpoint-marks"
    assert [r["label"] for r in fresh.predict(texts)] == labels


def _quoted_reviews():
    """Reviews typed with typographic quotes and <br> (phones, scraped HTML), and the same typed with ASCII ones."""
    words = {"positive": ["don’t miss", "“great”", "loved<br>it", "it´s superb"],
             "negative": ["don’t go", "“awful”", "hated<br/>it", "it´s bland"]}
    labels = ["positive", "negative"] * 60
    texts = [f"the {words[label][i % 4]} and {words[label][(i + 1) % 4]} here" for i, label in enumerate(labels)]
    ascii = [t.replace("’", "'").replace("´", "'").replace("“", '"').replace("”", '"').replace("<br>", "<br />")
             .replace("<br/>", "<br />") for t in texts]
    return labels, texts, ascii


def _bundles_before_and_after(tmp_path, monkeypatch, labels, texts, old_form, old_words):
    """A bundle trained on ``texts`` as the library did under the text rule ``old_form`` (its vocabulary holding
    ``old_words``), and one trained now; each saved, loaded, checked to record its rule and to read its own training
    texts as their labels. Returns (the new training, the new bundle)."""
    import json
    import os

    from fasttext_lib import text as text_module
    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.bundle_format import CONFIG

    config = TrainConfig(epochs=5, batch_size=16, progress=False)
    with monkeypatch.context() as old:  # as the library trained before
        old.setattr(text_module, "TRAINING_FORM", old_form)
        trained = train(LabeledTexts(labels, texts), None, config)
    assert old_words <= set(trained.featurizer.vocab.token_to_idx)
    fresh = train(LabeledTexts(labels, texts), None, config)
    bundles = []
    for model, where, form in ((trained, "old", old_form), (fresh, "new", text_module.TRAINING_FORM)):
        path = save_bundle(model, str(tmp_path / where))
        with open(os.path.join(path, CONFIG)) as f:
            assert json.load(f)["unicode_normalization"] == form  # (the old one: as the library wrote it before)
        bundle = Predictor.load(path)
        assert bundle.featurizer.unicode_form == form
        assert [r["label"] for r in bundle.predict(texts)] == labels
        bundles.append(bundle)
    old_bundle, new_bundle = bundles
    assert old_bundle.featurizer.unk_id not in old_bundle.featurizer.transform(texts).rows
    assert new_bundle.featurizer.unicode_form == "NFC-tokens-quotes-br-fixpoint-marks"
    assert not old_words & set(new_bundle.featurizer.vocab.token_to_idx)
    return fresh, new_bundle


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_a_bundle_written_before_typographic_quotes_were_read_as_ascii_reads_its_text_as_then(tmp_path, monkeypatch,
                                                                                            native):
    """Bundles record "unicode_normalization": "NFC-tokens-quotes-br" since typographic apostrophes and quotes are
    read as ASCII ones and <br>, <br/> as line breaks (text.QUOTES_AND_BREAKS): don’t is don ' t, as don't is. A
    bundle written before ("NFC-tokens") was trained with don’t, “great” and loved<br>it as words, and reads its
    text so: read today's way, every such word was unknown. A bundle written now reads don’t and don't alike."""
    from fasttext_lib import text as text_module

    if not native:
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
    labels, texts, ascii = _quoted_reviews()
    _, new_bundle = _bundles_before_and_after(tmp_path, monkeypatch, labels, texts, text_module.NFC_TOKENS,
                                              {"don’t", "“great”", "loved<br>it", "it´s"})
    np.testing.assert_array_equal(new_bundle.predict_proba(texts), new_bundle.predict_proba(ascii))


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_a_bundle_written_before_line_breaks_its_rules_form_were_read_reads_its_text_as_then(tmp_path, monkeypatch,
                                                                                            native):
    """Bundles record "unicode_normalization": "NFC-tokens-quotes-br-fixpoint" since a <br /> the rules form
    (<br\t/>: whitespace squeezed; <br;/>; a<br<br>/>b) is a space too (text.FORMED_BREAKS), so that normalizing twice
    changes nothing. A bundle written before ("NFC-tokens-quotes-br") was trained with great<br and />food as words,
    and reads its text so; one written now reads great<br\t/>food as great food, as the file prepare wrote it."""
    from fasttext_lib import text as text_module

    if not native:
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
    words = {"positive": ["great<br\t/>food", "loved<br;/>it", "fine"], "negative": ["awful<br  />food", "bad", "meh"]}
    labels = ["positive", "negative"] * 60
    texts = [f"the {words[label][i % 3]} here {words[label][(i + 1) % 3]}" for i, label in enumerate(labels)]
    prepared = [text_module.normalize_text(t) for t in texts]  # (what prepare writes)
    fresh, new_bundle = _bundles_before_and_after(tmp_path, monkeypatch, labels, texts, text_module.QUOTES_AND_BREAKS,
                                                  {"great<br", "/>food", "loved<br", "/>it", "awful<br"})
    config = TrainConfig(epochs=5, batch_size=16, progress=False)
    trained_on_prepared = train(LabeledTexts(labels, prepared), None, config)
    assert trained_on_prepared.featurizer.vocab.idx_to_token == fresh.featurizer.vocab.idx_to_token
    np.testing.assert_array_equal(new_bundle.predict_proba(texts), new_bundle.predict_proba(prepared))


# Variation selectors and bidirectional controls (text.MARKS' pattern), to write the reviews without them
_MARKS = "[\ufe00-\ufe0f\U000e0100-\U000e01ef\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]"


def _marked_reviews():
    """Reviews whose class a heart, a Hebrew, Arabic or Japanese word tells, typed with an emoji variation selector
    (❤️ is U+2764 U+FE0F) and direction marks (web pages, phones), and the same typed without them."""
    import re

    words = {"positive": ["❤️", "טוב\u200f", "\u202bممتاز\u202c", "葛\U000e0100城"],
             "negative": ["👎\ufe0e", "רע\u200f", "\u061cسيء", "\u2067meh\u2069"]}
    labels = ["positive", "negative"] * 60
    texts = [f"the {words[label][i % 4]} and {words[label][(i + 1) % 4]} here" for i, label in enumerate(labels)]
    return labels, texts, [re.sub(_MARKS, "", t) for t in texts]


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_a_bundle_written_before_variation_selectors_and_direction_marks_were_dropped_reads_its_text_as_then(
        tmp_path, monkeypatch, native):
    """Bundles record "unicode_normalization": "NFC-tokens-quotes-br-fixpoint-marks" since emoji variation selectors
    and bidirectional controls are dropped (text.MARKS): ❤️ and ❤ are one word, and a Hebrew word with a
    right-to-left mark the word without. A bundle written before ("NFC-tokens-quotes-br-fixpoint") was trained with
    ❤️ and טוב\u200f as words, and reads its text so; one written now reads both spellings alike."""
    from fasttext_lib import text as text_module

    if not native:
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
    labels, texts, plain = _marked_reviews()
    _, new_bundle = _bundles_before_and_after(tmp_path, monkeypatch, labels, texts, text_module.FORMED_BREAKS,
                                              {"❤️", "טוב\u200f", "\u202bممتاز\u202c", "葛\U000e0100城", "\u061cسيء"})
    np.testing.assert_array_equal(new_bundle.predict_proba(texts), new_bundle.predict_proba(plain))



@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_a_bundle_of_an_older_rule_knows_the_documents_its_refit_trained_on_as_it_read_them(tmp_path, monkeypatch,
                                                                                           capsys, native):
    """An autotune refit records fingerprints of its --autotune-validation documents as its text rule read them
    (text.sampled_fingerprints); evaluate fingerprinted the documents it scored by today's rule. A bundle of a rule
    before text.MARKS, scored on those very documents (❤️ and words with direction marks in each), found none of
    them (today's rule reads them otherwise) and said nothing: its accuracy there passed as a held-out score."""
    from fasttext_lib import text as text_module
    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.text import fingerprint_of_normalized, normalize_text

    if not native:
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
    labels, texts, _ = _marked_reviews()
    old_form = text_module.FORMED_BREAKS
    with monkeypatch.context() as old:  # as the library trained before, and recorded the refit's documents
        old.setattr(text_module, "TRAINING_FORM", old_form)
        trained = train(LabeledTexts(labels, texts), None, TrainConfig(epochs=1, batch_size=16, progress=False))
    fingerprints = {f"{fingerprint_of_normalized(normalize_text(t, old_form).encode()):016x}" for t in texts}
    assert fingerprints.isdisjoint(f"{text_module.fingerprint(t):016x}" for t in texts)  # (read otherwise today)
    trained.autotune = {"refit": True, "validation_documents": {"fraction": 1.0, "fingerprints": sorted(fingerprints)}}
    bundle = Predictor.load(save_bundle(trained, str(tmp_path / "old")))
    assert bundle.featurizer.unicode_form == old_form
    capsys.readouterr()
    bundle.evaluate(LabeledTexts(labels, texts))
    assert "holds the documents of the --autotune-validation data this model was trained on" in capsys.readouterr().err
    check = bundle.refit_documents()
    for text in texts:
        check.see(text)
    assert check.sampled == check.found == len(texts)

def test_a_heart_and_a_word_with_or_without_their_marks_get_the_same_answers_everywhere(tmp_path):
    """A model trained on ❤ and on Hebrew and Arabic words typed without marks answered ❤️ (U+2764 U+FE0F) and the
    words with a direction mark as unknown words (opposite answers on a small model). Now the same answers, bit for
    bit, from the Predictor, ``predict`` and the endpoint's handlers (sm_serve: input_fn, predict_fn)."""
    import json

    from conftest import run_cli
    from fasttext_lib import sm_serve
    from fasttext_lib.bundle import save_bundle

    labels, marked, plain = _marked_reviews()
    path = save_bundle(train(LabeledTexts(labels, plain), None, TrainConfig(epochs=5, batch_size=16, progress=False)),
                       str(tmp_path / "model"))
    queries = ["Loved it ❤️", "Loved it ❤", "שלום\u200f", "שלום", "\u202bممتاز\u202c!", "ممتاز!"]
    queries += marked[:4] + plain[:4]
    pairs = [(0, 1), (2, 3), (4, 5)] + [(6 + i, 10 + i) for i in range(4)]
    predictor = Predictor.load(path)
    probabilities = predictor.predict_proba(queries)
    for a, b in pairs:
        np.testing.assert_array_equal(probabilities[a], probabilities[b], err_msg=queries[a])
    assert [r["label"] for r in predictor.predict(marked)] == labels
    (tmp_path / "queries.txt").write_text("\n".join(queries) + "\n", encoding="utf-8")
    r = run_cli("predict", "--model", path, "--input", tmp_path / "queries.txt")
    assert r.returncode == 0, r.stderr
    answered = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(answered) == len(queries) and all(answered[a] == answered[b] for a, b in pairs)
    served = sm_serve.predict_fn(sm_serve.input_fn("\n".join(queries).encode("utf-8"), "text/plain"),
                                 sm_serve.model_fn(path))
    assert len(served) == len(queries) and all(served[a] == served[b] for a, b in pairs)
    assert served[6:10] == predictor.predict(marked[:4])


def test_a_bundle_trained_under_other_unicode_data_loads_with_a_note(tmp_path, capsys):
    """config.json records the Unicode data of the Python that trained it (unicodedata.unidata_version): lowercasing
    and NFC follow it, so under another version a word outside ASCII may be read otherwise. Loading such a bundle
    says so in one note (not an error: it predicts); one whose words are all ASCII reads alike, and says nothing."""
    import json
    import os
    import unicodedata

    from fasttext_lib.bundle import save_bundle
    from fasttext_lib.bundle_format import CONFIG

    labels = ["pos", "neg"] * 20
    for name, words in [("accents", ("très bon café", "pas bon")), ("ascii", ("very good", "not good"))]:
        texts = [words[i % 2] for i in range(len(labels))]
        path = save_bundle(train(LabeledTexts(labels, texts), None, TrainConfig(epochs=2, progress=False)),
                           str(tmp_path / name))
        with open(os.path.join(path, CONFIG)) as f:
            written = json.load(f)
        assert written["unicode_data_version"] == unicodedata.unidata_version
        capsys.readouterr()
        Predictor.load(path)
        assert capsys.readouterr().err == ""  # the same Unicode data: nothing to say
        written["unicode_data_version"] = "9.0.0"  # as a Python 3.6 wrote it
        with open(os.path.join(path, CONFIG), "w") as f:
            json.dump(written, f)
        predictor = Predictor.load(path)
        err = capsys.readouterr().err.splitlines()
        if name == "ascii":
            assert err == []
        else:
            assert len(err) == 1 and err[0].startswith("note: ") and "Unicode 9.0.0" in err[0], err
            assert unicodedata.unidata_version in err[0] and "error" not in err[0]
            with open(os.path.join(path, CONFIG), "w") as f:  # (whatever it holds, one line)
                json.dump(dict(written, unicode_data_version="9.0\nerror: x"), f)
            assert len(Predictor.load(path) and capsys.readouterr().err.splitlines()) == 1
        assert [r["label"] for r in predictor.predict(texts[:2])] == ["pos", "neg"]


@pytest.mark.parametrize("native", [True, False], ids=["native features", "python features"])
@pytest.mark.parametrize("texts, why", [
    ("the food was great", "got one str"),  # answered once per character: 18 answers for one review
    (b"the food was great", "got one bytes"),
    (bytearray(b"the food was great"), "got one bytearray"),  # was "texts[0] is 116 (int)": answered byte by byte
    (memoryview(b"the food was great"), "got one memoryview"),
    (None, "got None"),
    (["fine", float("nan")], "texts[1] is nan (float), not a str: a missing value"),  # pandas' missing text
    (["fine", None], "texts[1] is None (NoneType), not a str: a missing value? fill it first"),  # an object column's
    ("na", "texts[1] is <NA> (NAType), not a str: a missing value? fill it first"),  # a "string" column's
    (["fine", 3], "texts[1] is 3 (int), not a str"),
    (["fine", b"cold soup"], "texts[1] is b'cold soup' (bytes), not a str: decode it"),
    (["fine", "caf\udce9"], "texts[1] is not valid Unicode text (character '\\udce9' at position 3: a lone surrogate)"),
    # iterated, a DataFrame is its column names: one answer per column ("text"), not per row, exit 0; a dict its keys
    # (the ids of {id: review}); a set its reviews in an order no answer can be matched back to
    ("frame", "got a pandas DataFrame, whose items are its column names: pass its text column (df['text'])"),
    ("subframe", "got a pandas DataFrame, whose items are its column names"),  # a subclass (geopandas' GeoDataFrame)
    ({"r1": "fine", "r2": "cold soup"}, "got a dict, whose items are its keys: pass its values (list(d.values()))"),
    ({"fine", "cold soup"}, "got a set, which has no order to answer in: pass a list"),
], ids=["str", "bytes", "bytearray", "memoryview", "None", "nan", "None item", "NA item", "int", "bytes item", "lone surrogate", "DataFrame",
      "DataFrame subclass", "dict", "set"])
def test_predictor_refuses_what_is_not_a_list_of_review_texts_in_one_line(trained, texts, why, native, monkeypatch):
    """A notebook's ``predictor.predict("a review")`` answered each character as a review (one review, 18
    answers: out of step with the data); a NaN from a DataFrame column, a number, bytes or a lone surrogate was
    a TypeError or UnicodeEncodeError traceback from inside the featurizer, naming no review."""
    from fasttext_lib.errors import FastTextError

    if not native:
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
    trained, _ = trained
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu())
    if texts in ("frame", "subframe", "na"):
        import pandas as pd

        class ReviewFrame(pd.DataFrame):  # another package's DataFrame subclass (its module is not pandas)
            pass

        frame = {"label": ["1", "2", "1"], "text": ["fine", "cold soup", "great"]}
        texts = {"frame": lambda: pd.DataFrame(frame), "subframe": lambda: ReviewFrame(frame),
                 "na": lambda: pd.Series(["fine", None], dtype="string")}[texts]()
    for call in (predictor.predict, predictor.predict_proba, predictor.predict_top):
        with pytest.raises(FastTextError) as exc:
            call(texts)
        assert why in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("native", [True, False], ids=["native features", "python features"])
def test_evaluate_names_a_text_that_is_not_valid_unicode_in_one_line(trained, native, monkeypatch):
    """``evaluate`` / ``evaluate_examples`` of a text with a lone surrogate was a raw UnicodeEncodeError from inside the
    featurizer (predict_proba already said it in one line); past the first chunk it names the example by its index
    among all of them."""
    from fasttext_lib.errors import FastTextError

    if not native:
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
    trained, texts = trained
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu())
    monkeypatch.setattr(Predictor, "EVALUATED_PER_CHUNK", 2)
    label = trained.labels[0]
    pairs = [(label, texts[0]), (label, texts[1]), (label, texts[2]), (label, "caf\udce9")]
    why = "[3] is not valid Unicode text (character '\\udce9' at position 3: a lone surrogate)"
    data = LabeledTexts([label for label, _ in pairs], [text for _, text in pairs])
    for call, name in ((lambda: predictor.evaluate_examples(iter(pairs)), "examples"),
                       (lambda: predictor.evaluate(data), "data.texts")):
        with pytest.raises(FastTextError) as exc:
            call()
        assert str(exc.value).startswith(name + why) and "\n" not in str(exc.value)


def test_predictor_takes_any_sequence_of_texts(trained):
    """A pandas Series (any index), a numpy array of str, a generator: one answer per text, in order."""
    import pandas as pd

    trained, texts = trained
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu())
    expected = predictor.predict(texts[:5])
    assert predictor.predict(pd.Series(texts[:5], index=[9, 3, 7, 1, 5])) == expected
    assert predictor.predict(np.array(texts[:5])) == expected
    assert predictor.predict(t for t in texts[:5]) == expected


def test_evaluate_examples_takes_a_list_of_pairs_as_it_takes_a_generator(trained):
    """``evaluate_examples`` cut its input in chunks with ``islice`` of the object given: a list (the natural way to
    call it from Python) gave its first chunk again and again, a loop that never ended."""
    import signal

    trained, texts = trained
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu())
    labels = [trained.labels[i % len(trained.labels)] for i in range(len(texts))]
    pairs = list(zip(labels, texts))
    expected = predictor.evaluate(LabeledTexts(labels, texts))

    def stuck(*_):
        raise TimeoutError("evaluate_examples never returned")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(20)
    try:
        assert predictor.evaluate_examples(pairs) == expected
        assert predictor.evaluate_examples(tuple(pairs)) == expected
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert predictor.evaluate_examples(iter(pairs)) == expected


def test_evaluate_of_no_documents_is_refused_as_evaluate_examples_refuses_it(trained):
    """``evaluate`` of empty data answered an accuracy and a loss of NaN (with numpy's "Mean of empty slice" warnings
    on stderr), where ``evaluate_examples`` (the CLI's) refuses it."""
    from fasttext_lib.errors import FastTextError

    trained, _ = trained
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu())
    for call in (lambda: predictor.evaluate(LabeledTexts([], [])), lambda: predictor.evaluate_examples([])):
        with pytest.raises(FastTextError, match="evaluation data: contains no labeled documents"):
            call()


def test_evaluate_refuses_a_class_the_model_does_not_know_before_it_scores_a_document(trained, monkeypatch):
    """``evaluate`` and ``evaluate_examples`` score by one route, a chunk at a time, alike. Where they differed:
    evaluate has its classes all at hand, and refuses one the model does not know before it scores any document (so
    that error comes first, before one a text gives in featurization), where evaluate_examples, which reads its labels
    as they come, can tell only once it has scored them all."""
    from fasttext_lib.errors import FastTextError

    trained, texts = trained
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu())
    labels = [trained.labels[i % len(trained.labels)] for i in range(len(texts))]
    monkeypatch.setattr(Predictor, "EVALUATED_PER_CHUNK", 64)  # (several chunks, the last one shorter)
    evaluation = predictor.evaluation(LabeledTexts(labels, texts))
    assert evaluation.probabilities.tobytes() == predictor.predict_proba(texts).tobytes()
    assert evaluation.metrics == predictor.evaluate_examples(zip(labels, texts), confusion=True)
    monkeypatch.setattr(predictor.featurizer, "transform", lambda *args, **kwargs: pytest.fail("a document scored"))
    with pytest.raises(FastTextError, match=r"^evaluation data has label\(s\) 'zzz' not seen in training"):
        predictor.evaluate(LabeledTexts(labels[:-1] + ["zzz"], texts))


def test_evaluate_examples_refuses_what_is_no_label_and_text_pair_in_one_line(trained):
    """``evaluate_examples([("positive", nan)])`` (a DataFrame's missing text) was ``TypeError: object of type 'float'
    has no len()`` from inside the featurizer; a str given as the examples, ``ValueError: not enough values to
    unpack``. Each is now one line naming the example."""
    from fasttext_lib.errors import FastTextError

    trained, _ = trained
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu())
    label = trained.labels[0]
    for examples, said in [([(label, "fine"), (label, float("nan"))], r"^examples\[1\] is .*nan.*: a missing text\?"),
                           ([(label, "fine", "extra")], r"^examples\[0\] is .* \(tuple\), not a \(label, text\) pair"),
                           ([(label, b"bytes")], r"^examples\[0\] is "),
                           ("positive good", r"^examples must be \(label, text\) pairs, got str"),
                           (None, r"^examples must be \(label, text\) pairs, got NoneType")]:
        with pytest.raises(FastTextError, match=said):
            predictor.evaluate_examples(examples)
    assert predictor.evaluate_examples([(label, "fine"), [label, "good"]])["n"] == 2


def _word_class_predictor(classes, names=None):
    texts = ["good great fine", "bad awful poor", "so so meh", "okay then"]
    model = train(LabeledTexts(list(classes) * 4, texts[:len(classes)] * 4, dict(names or {})), None,
                  TrainConfig(epochs=1, progress=False, ctx="cpu"))
    return Predictor(model.model, model.featurizer, model.labels, {}, ctx=mx.cpu(), label_names=model.label_names)


@pytest.mark.parametrize("classes, names, labels, hint", [
    (["negative", "positive"], {}, ["Positive", "negative"], "('Positive' for positive)"),
    (["neg", "pos"], {"neg": "negative", "pos": "positive"}, ["Negative", "POSITIVE"],
     "('Negative' for negative, 'POSITIVE' for positive)"),  # the names predictions show
    (["Neg", "pos"], {}, ["NEG", "pos"], "('NEG' for Neg)"),
    # str.lower() of the whole column would leave 'NEUTRAL' no class: not offered
    (["NEUTRAL", "negative", "positive"], {}, ["Positive", "NEUTRAL"], "('Positive' for positive)"),
])
def test_evaluate_of_labels_in_another_case_names_the_class_each_is_written_for(classes, names, labels, hint):
    """'Positive' for a model of 'positive' was refused as a class never seen in training, with no word of the case,
    where '1.0' for '1' is named as the class written otherwise. Still refused: which class a label means is not
    guessed."""
    from fasttext_lib.errors import FastTextError

    predictor = _word_class_predictor(classes, names)
    with pytest.raises(FastTextError) as caught:
        predictor.evaluate_examples([(label, "good") for label in labels])
    said = str(caught.value)
    assert f"; the model's classes written in another case {hint}: write them as the training data did" in said, said
    assert "\n" not in said and ("str.lower()" in said) == all(c == c.lower() for c in classes)


def test_evaluate_gives_no_case_hint_when_a_label_matches_no_class_or_several():
    """'POSITIVE' beside classes 'Positive' and 'positive' could mean either; 'neutral' matches none: no guess."""
    from fasttext_lib.errors import FastTextError

    for classes, labels in [(["Positive", "positive", "negative"], ["POSITIVE", "negative"]),
                            (["negative", "positive"], ["Positive", "neutral"])]:
        predictor = _word_class_predictor(classes)
        with pytest.raises(FastTextError) as caught:
            predictor.evaluate_examples([(label, "good") for label in labels])
        said = str(caught.value)
        assert "another case" not in said and said.endswith(
            "; a model answers only the classes it was trained on: drop those documents, or train on data that has "
            "those classes too"), said


@pytest.mark.parametrize("classes, label, meant", [
    (["radio", "t\u00e9l\u00e9"], "Te\u0301le\u0301", "t\u00e9l\u00e9"),  # combining accents, a capital
    (["Radio", "T\u00e9l\u00e9"], "te\u0301le\u0301", "T\u00e9l\u00e9"),
])
def test_a_case_hint_of_a_label_in_another_normalization_too_shows_it_escaped_and_merges_it(classes, label, meant):
    """'Te\u0301le\u0301' (combining accents) for a model of 'télé' got the case hint, shown as 'Télé' for télé (they
    print alike but for the case), and its pandas line, str.lower(), left the accents combining: still no class. The
    labels are shown escaped, and the pandas line, run, writes them as the classes are."""
    import pandas as pd
    from fasttext_lib.errors import FastTextError

    predictor = _word_class_predictor(classes)
    with pytest.raises(FastTextError) as caught:
        predictor.evaluate(LabeledTexts(pd.Series([label, classes[0]], name="channel"), ["good", "bad"]))
    said = str(caught.value)
    assert f"written in another case and Unicode normalization ({ascii(label)} for {ascii(meant)})" in said, said
    pandas = said.partition("(pandas: ")[2][:-1]
    if classes == [c.lower() for c in classes]:
        df = pd.DataFrame({"channel": [label, classes[0]]})
        exec(pandas, {"df": df})
        assert list(df["channel"]) == [meant, classes[0]], pandas
    else:
        assert not pandas, said


@pytest.mark.parametrize("invisible", ["\u200b", "\u00ad", "\ufeff", "\u2060"])
def test_evaluate_of_labels_with_an_invisible_character_names_it_and_how_to_remove_it(invisible):
    """'positive' + a zero-width space (a label pasted from a web page or a spreadsheet cell; a soft hyphen, a BOM or
    a word joiner likewise) for a model of 'positive' got only "not seen in training": the label prints as the class.
    Training names such a pair of classes; evaluation now names the label, the character's code point and the pandas
    line that removes it, which, run on the user's column, leaves each label a class. Still refused: no guess."""
    import pandas as pd
    from fasttext_lib.errors import FastTextError

    predictor = _word_class_predictor(["negative", "positive"])
    labels = ["positive" + invisible, "negative", invisible + "negative"]
    with pytest.raises(FastTextError) as caught:
        predictor.evaluate(LabeledTexts(pd.Series(labels, name="sentiment"), ["good", "bad", "awful"]))
    said = str(caught.value)
    assert "\n" not in said and (f"; the model's classes with an invisible character (U+{ord(invisible):04X}) "
                                 f"added ({ascii('positive' + invisible)} for positive, "
                                 f"{ascii(invisible + 'negative')} for negative): write them without it") in said, said
    pandas = said.partition("(pandas: ")[2][:-1]
    df = pd.DataFrame({"sentiment": labels})
    exec(pandas, {"df": df})
    assert list(df["sentiment"]) == ["positive", "negative", "negative"], pandas
    with pytest.raises(FastTextError) as caught:  # (the same of examples as they come)
        predictor.evaluate_examples([(label, "good") for label in labels])
    assert f"(U+{ord(invisible):04X}) added" in str(caught.value) and "df['label']" in str(caught.value)


def test_the_invisible_character_hint_removes_each_character_its_labels_carry():
    """Labels with two different invisible characters (a soft hyphen in some, a zero-width space in others): the hint
    names both code points, and its pandas line removes both."""
    import pandas as pd
    from fasttext_lib.unknown_labels import invisible_otherwise

    hint = invisible_otherwise(["neg\u00adative", "positive\u200b"], {"negative", "positive"}, "label")
    assert hint.startswith("; the model's classes with invisible characters (U+00AD, U+200B) added "), hint
    df = pd.DataFrame({"label": ["neg\u00adative", "positive\u200b", "positive"]})
    exec(hint.partition("(pandas: ")[2][:-1], {"df": df})
    assert list(df["label"]) == ["negative", "positive", "positive"], hint
    assert invisible_otherwise(["positive\u200b"], {"positive"}, None).endswith(
        "(remove '\\u200b' from the __label__ words)")


def test_the_invisible_character_hint_leaves_a_joiner_inside_a_word_which_shows():
    """A zero-width joiner or non-joiner inside a Persian or Indic word, or an emoji sequence, changes how it is
    written: such a label is another class, not the class with an invisible character. At a label's end it joins
    nothing: the hint strips it from the ends (replaced everywhere it would change the labels it does join)."""
    from fasttext_lib.unknown_labels import invisible_otherwise

    persian = "\u0645\u06cc\u062e\u0648\u0627\u0647\u0645"
    assert invisible_otherwise([persian[:2] + "\u200c" + persian[2:]], {persian, "other"}, "label") == ""
    family = "\U0001f468\U0001f469"
    assert invisible_otherwise(["\U0001f468\u200d\U0001f469"], {family}, "label") == ""
    hint = invisible_otherwise(["positive\u200d"], {"positive"}, "label")
    assert hint.endswith("(U+200D) added ('positive\\u200d' for positive): write them without it (pandas: "
                         "df['label'] = df['label'].str.strip('\\u200d'))"), hint


def test_evaluate_gives_no_invisible_character_hint_when_a_label_is_no_class_without_it():
    """'neutral' + a zero-width space beside 'positive' + one: no class is 'neutral', so no hint but the way out; and
    'Positive' + one is no class either (case and the character both: the case hint's rule does not strip it)."""
    from fasttext_lib.errors import FastTextError

    predictor = _word_class_predictor(["negative", "positive"])
    for labels in (["positive\u200b", "neutral\u200b"], ["Positive\u200b", "negative"]):
        with pytest.raises(FastTextError) as caught:
            predictor.evaluate_examples([(label, "good") for label in labels])
        said = str(caught.value)
        assert "invisible" not in said and said.endswith("those classes too"), said


def test_one_evaluation_gives_the_metrics_the_confusion_and_each_documents_answer(trained, monkeypatch):
    """Notebook 04 scored its test split three times (evaluate, predict_proba for the per-document table, then
    confusion_frame, which evaluated again). ``Predictor.evaluation`` scores it once; its metrics are evaluate's, its
    confusion frame confusion_frame's and its per-document frame predict_proba's answers, by name."""
    trained, texts = trained
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu(),
                          label_names={trained.labels[0]: "first"})
    labels = [trained.labels[(i * 7) % len(trained.labels)] for i in range(len(texts))]
    data = LabeledTexts(labels, list(texts))
    expected = predictor.evaluate(data, confusion=True)
    confusion = predictor.confusion_frame(data)
    probs = predictor.predict_proba(data.texts)

    scored = []
    score = Predictor._probabilities
    monkeypatch.setattr(Predictor, "_probabilities", lambda self, bags: scored.append(len(bags)) or score(self, bags))
    evaluation = predictor.evaluation(data)
    assert scored == [len(texts)]  # one scoring
    assert evaluation.metrics == expected
    assert evaluation.confusion_frame().equals(confusion)
    assert list(confusion.index) == list(confusion.columns) == predictor.names and predictor.names[0] == "first"
    frame = evaluation.documents_frame(text_chars=10)
    assert list(frame.columns) == ["true", "predicted", "confidence", "text"] and len(frame) == len(texts)
    assert list(frame.true) == [predictor.name_of(label) for label in labels]
    assert list(frame.predicted) == [predictor.names[k] for k in probs.argmax(axis=1)]
    np.testing.assert_array_equal(frame.confidence, probs.max(axis=1))
    assert list(frame.text) == [t[:10] for t in texts]
    assert (frame.true == frame.predicted).mean() == expected["accuracy"]
    from fasttext_lib.errors import FastTextError

    assert list(evaluation.documents_frame(text_chars=None).text) == list(texts)
    for text_chars in (-1, 0, 1.5, "80"):  # (-1 cut each text's last character, silently; 1.5 was a TypeError)
        with pytest.raises(FastTextError, match=rf"^text_chars must be a positive integer, got {text_chars!r}$"):
            evaluation.documents_frame(text_chars=text_chars)


def test_an_evaluation_gives_each_classs_precision_recall_and_f1_as_a_table(trained):
    """``evaluate`` on the command line prints each class's precision, recall, F1 and support; notebook 04, which
    scores the same way (``Predictor.evaluation``), showed the confusion matrix alone. ``per_class_frame`` is that
    table, one row per class by name; a class never predicted has no precision (NaN, not None in an object column)."""
    import math

    from fasttext_lib.evaluation import Evaluation

    trained, texts = trained
    predictor = Predictor(trained.model, trained.featurizer, trained.labels, {}, ctx=mx.cpu(),
                          label_names={trained.labels[0]: "first"})
    labels = [trained.labels[(i * 7) % len(trained.labels)] for i in range(len(texts))]
    evaluation = predictor.evaluation(LabeledTexts(labels, list(texts)))
    frame = evaluation.per_class_frame()
    assert list(frame.columns) == ["precision", "recall", "f1", "support"] and frame.index.name == "class"
    assert list(frame.index) == predictor.names and predictor.names[0] == "first"
    for name, row in zip(predictor.names, evaluation.metrics["per_class"]):  # (None, 0/0, is NaN in the table)
        assert row["label"] == name
        shown = frame.loc[name].to_dict()
        assert all(math.isnan(shown[k]) if row[k] is None else shown[k] == row[k]
                   for k in ("precision", "recall", "f1", "support"))
    assert frame.support.sum() == len(texts)

    # the first class never predicted: its precision and F1 are 0/0
    n = len(predictor.names)
    counts = [[0] * n for _ in range(n)]
    counts[0][1] = counts[1][1] = 3
    from fasttext_lib.evaluation import per_class_scores

    metrics = {"per_class": [dict(label=name, **scores) for name, scores in zip(predictor.names, per_class_scores(counts))]}
    never = Evaluation(predictor.names, [], None, None, metrics).per_class_frame()
    assert math.isnan(never.precision.iloc[0]) and math.isnan(never.f1.iloc[0]) and never.recall.iloc[0] == 0.0
    assert str(never.precision.dtype) == "float64"


@pytest.mark.parametrize("metrics, split, accuracy, said", [
    ({"final": {"val_accuracy": 0.78391}}, "test", 0.78391, "final held-out accuracy at training: 0.7839"),
    ({"final": {"val_accuracy": 0.75612}, "autotune": {"refit": False}}, "validation", 0.75612,
     "final validation (autotune's split of the training data) accuracy at training: 0.7561"),
    # trained without validation data (train without --validation; a training job without a test channel): 02's job
    # cell failed in round(None). No accuracy: no split it was measured on (it said "test")
    ({"final": {"val_accuracy": None}}, None, None, "no held-out accuracy at training (trained without validation data)"),
    # autotune's refit (the default) was trained on its validation split too: it was said to have had none
    ({"final": {"val_accuracy": None}, "autotune": {"refit": True}}, None, None,
     "no held-out accuracy at training (the final model was refitted on training + validation data, so it has no "
     "held-out score)"),
    ({"final": {"val_accuracy": None}, "autotune": {"refit": True}, "scored_as": "float32"}, None, None,
     "no held-out accuracy at training (the final model was refitted on training + validation data, so it has no "
     "held-out score)"),
    ({}, None, None, "no held-out accuracy at training (trained without validation data)"),  # (no epoch recorded)
    # a bundle saved with a lossy compact: the score is the float32 model's, not the rounded rows' it stores
    ({"final": {"val_accuracy": 0.78391}, "scored_as": "float32"}, "test", 0.78391,
     "final held-out accuracy at training: 0.7839 (the float32 model's: this bundle's embedding rows are stored lossy; "
     "evaluate scores it as saved)"),
])
def test_the_held_out_score_names_the_split_it_was_measured_on(metrics, split, accuracy, said):
    """Notebooks 02 and 04 each worked out "validation if autotuned, else test" and read metrics.json's
    final val_accuracy themselves: one library answer, bundle_format.held_out_score (Predictor.held_out_score)."""
    from fasttext_lib.bundle_format import held_out_score

    score = held_out_score(metrics)
    assert (score.split, score.accuracy, score.describe()) == (split, accuracy, said)


def test_a_saved_bundle_and_its_trained_model_give_the_same_held_out_score(tmp_path):
    """02 labels its plot with the trained model's held_out_score, 04 the bundle's: the same split and accuracy."""
    from fasttext_lib.bundle import save_bundle

    train_data, test_data = make_splits(200, 80, seed=3)
    trained = train(train_data, test_data, TrainConfig(epochs=1, buckets=1000, progress=False))
    score = trained.held_out_score
    assert score.split == "test" and score.accuracy == trained.history[-1]["val_accuracy"]
    assert Predictor.load(save_bundle(trained, str(tmp_path / "b"))).held_out_score == score
    # float16 rounds the rows the score was not taken of: the same score, said to be the float32 model's
    lossy = Predictor.load(save_bundle(trained, str(tmp_path / "c"), compact="float16"))
    assert lossy.metrics["scored_as"] == "float32" and lossy.held_out_score == score._replace(scored_as="float32")
    assert "scored_as" not in Predictor.load(save_bundle(trained, str(tmp_path / "d"), compact="float32")).metrics
    trained.autotune = {"best_trial": 1}  # an autotuned model's history is on the search's validation split
    assert trained.held_out_score.split == "validation"
    unscored = train(train_data, None, TrainConfig(epochs=1, buckets=1000, progress=False)).held_out_score
    assert unscored == (None, None, None, False)  # no accuracy, so no split (it said "test")
    # autotune's refit (the default): the final model has no score, as it was trained on the search's split too
    refitted = train(train_data, None, TrainConfig(epochs=1, buckets=1000, progress=False))
    refitted.autotune = {"best_trial": 1, "refit": True}
    assert refitted.held_out_score == (None, None, None, True)
    assert Predictor.load(save_bundle(refitted, str(tmp_path / "e"))).held_out_score == refitted.held_out_score


def test_evaluate_of_a_file_read_whole_names_the_line_and_file_of_an_unknown_label(tmp_path):
    """Predictor.evaluate(read_labeled(path)) said "evaluation data has label(s) 'neutral'" with no line, where the
    CLI's evaluate of the same file names it: the line and its file now."""
    from fasttext_lib.data import read_labeled
    from fasttext_lib.errors import FastTextError

    predictor = _word_class_predictor(["negative", "positive"])
    path = tmp_path / "test.csv"
    path.write_text('label,text\npositive,"good\nfine"\nneutral,meh\n')
    with pytest.raises(FastTextError, match=rf"^evaluation data has label\(s\) 'neutral' \(line 4 of {path}\) not seen"):
        predictor.evaluate(read_labeled(str(path)))
