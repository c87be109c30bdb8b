"""Skewed two-class data whose words barely tell the rarer class apart gets less lr: class_signal.py's held-out
test of the words and schedule.skew_factor, through TrainConfig.resolve, train() and autotune's start."""
import itertools
import random
from dataclasses import replace

import numpy as np
import pytest

from fasttext_lib.autotune import starting_config, texts_pairs
from fasttext_lib.class_signal import (MIN_RARE_DOCS, SAMPLE_DOCS, SKEWED_BELOW, RareClassSignal, auc, pairs_of_bags,
                                       pairs_of_texts, rare_class_signal)
from fasttext_lib.config import TrainConfig
from fasttext_lib.data import LabeledTexts
from fasttext_lib.schedule import MIN_SKEW_FACTOR, WEAK_SIGNAL_AUC, default_schedule, skew_factor
from fasttext_lib.train import featurize, train

WORDS = [f"w{i}" for i in range(300)]


def skewed(n=2000, rare_share=0.12, telling=True, seed=0):
    """Two classes, the rarer ("1") ``rare_share`` of them; with ``telling`` each rare document holds one of ten
    words of its own (its class's words generalize), else both classes draw from the same words."""
    rng = random.Random(seed)
    labels, texts = [], []
    for _ in range(n):
        rare = rng.random() < rare_share
        words = [rng.choice(WORDS) for _ in range(12)]
        if rare and telling:
            words[rng.randrange(12)] = f"rare{rng.randrange(10)}"
        labels.append("1" if rare else "2")
        texts.append(" ".join(words))
    return LabeledTexts(labels, texts)


def test_auc_is_the_share_of_rare_common_pairs_ranked_right_ties_half():
    rng = np.random.RandomState(3)
    score = rng.randint(0, 6, size=80).astype(float)  # many ties
    positive = rng.rand(80) < 0.3
    pairs = [(p, q) for p, q in itertools.product(score[positive], score[~positive])]
    brute = sum(1.0 if p > q else 0.5 if p == q else 0.0 for p, q in pairs) / len(pairs)
    assert auc(score, positive) == pytest.approx(brute)


def test_balanced_or_many_class_data_is_not_tested_and_its_words_not_read():
    def pairs_of(docs):
        raise AssertionError("read the words of data that is not skewed")

    assert rare_class_signal(["a"] * 75 + ["b"] * 25, pairs_of) is None  # a quarter: the budget's own data
    assert rare_class_signal(["a"] * 80 + ["b"] * 10 + ["c"] * 10, pairs_of) is None  # three classes
    assert rare_class_signal(["a"] * 100, pairs_of) is None
    assert rare_class_signal(["a"] * 100 + ["b"] * (MIN_RARE_DOCS - 1), pairs_of) is None  # too few to score


def test_a_sample_holding_too_few_rare_documents_is_not_scored():
    """Two rare documents in 200k: the seeded sample of 20k holds none or one, whose AUC is no measure (a division by
    zero with none): the budget as before."""
    labels = np.array(["a"] * 200_000)
    labels[[5, 150_000]] = "b"
    assert rare_class_signal(labels, lambda docs: pairs_of_texts(["x y"] * len(docs))) is None


def test_words_that_tell_the_rare_class_apart_score_high_and_words_that_do_not_score_near_a_half():
    telling, weak = skewed(telling=True), skewed(telling=False)
    strong_signal = rare_class_signal(telling.labels, texts_pairs(telling))
    weak_signal = rare_class_signal(weak.labels, texts_pairs(weak))
    assert strong_signal.share == pytest.approx(telling.labels.count("1") / len(telling))
    assert strong_signal.auc > 0.9
    assert abs(weak_signal.auc - 0.5) < 0.08


def test_the_rare_class_is_the_rarer_label_whatever_its_name():
    data = skewed(telling=True)
    swapped = LabeledTexts(["2" if label == "1" else "1" for label in data.labels], data.texts)
    assert rare_class_signal(swapped.labels, texts_pairs(swapped)) == rare_class_signal(data.labels, texts_pairs(data))


def test_a_large_split_is_read_through_a_seeded_sample():
    asked = []

    def pairs_of(docs):
        asked.append(docs)
        return pairs_of_texts(["x"] * len(docs))

    labels = ["a"] * (SAMPLE_DOCS * 2) + ["b"] * (SAMPLE_DOCS // 4)
    rare_class_signal(labels, pairs_of)
    rare_class_signal(labels, pairs_of)
    assert len(asked[0]) == SAMPLE_DOCS and np.array_equal(asked[0], asked[1])
    assert np.all(np.diff(asked[0]) > 0)  # in order
    assert asked[0][-1] >= SAMPLE_DOCS * 2  # (the rare documents at the end are among them)


@pytest.mark.parametrize("signal, factor", [
    (None, 1.0),
    (RareClassSignal(0.10, WEAK_SIGNAL_AUC), 1.0),  # words that separate it: the full budget
    (RareClassSignal(0.10, 0.55), MIN_SKEW_FACTOR),
    (RareClassSignal(0.20, 0.55), (0.20 / SKEWED_BELOW) ** 2),
    (RareClassSignal(0.249, 0.50), (0.249 / SKEWED_BELOW) ** 2),
])
def test_the_skew_factor_lowers_the_budget_only_for_a_skewed_class_with_weak_words(signal, factor):
    assert skew_factor(signal) == pytest.approx(factor)


def test_the_schedule_spends_the_skew_factor_times_the_budget_and_the_cap():
    weak = RareClassSignal(0.10, 0.55)
    for n in (300, 2000, 60_000):  # the cap binds on the smallest
        plain = default_schedule(n, 20.0, 2, 1, 5)
        lowered = default_schedule(n, 20.0, 2, 1, 5, rare_class=weak)
        assert lowered["batch_size"] == plain["batch_size"]
        assert lowered["lr"] == pytest.approx(MIN_SKEW_FACTOR * plain["lr"], rel=1e-3)


def _with_empty_documents(data, seed=5):
    """``data`` with a tenth of the common documents and a third of the rare ones empty."""
    rng = random.Random(seed)
    texts = ["" if rng.random() < (0.33 if label == "1" else 0.1) else text
             for label, text in zip(data.labels, data.texts)]
    return LabeledTexts(data.labels, texts)


def _with_a_label_word_in_the_rare_documents(data):
    """``data`` whose rare documents hold a ``__label__`` word: a class, no word, to training (text.without_labels)."""
    return LabeledTexts(data.labels, [text + " __label__spam" if label == "1" else text
                                      for label, text in zip(data.labels, data.texts)])


@pytest.mark.parametrize("made", [
    lambda data: data,
    _with_empty_documents,  # an empty document is one <unk> row in its bag: no word, as in its text
    _with_a_label_word_in_the_rare_documents,  # its text held the class, which no bag holds
    lambda data: LabeledTexts(data.labels, [text.upper().replace(" ", ", ") for text in data.texts]),
    # a word spelt <unk> is a word of the text (training's <unk> row: the bags left it out)
    lambda data: LabeledTexts(data.labels, [text + " <unk>" if label == "1" else text
                                            for label, text in zip(data.labels, data.texts)]),
], ids=["plain", "empty documents", "a __label__ word", "capitals and commas", "a word spelt <unk>"])
def test_the_words_of_bags_and_of_texts_give_the_same_test(made):
    """train() reads the words from its bags (n-gram rows left out: rare_class_of), autotune from the texts: one
    answer."""
    import types

    from fasttext_lib.features import Featurizer
    from fasttext_lib.train import rare_class_of

    data = made(skewed(telling=False, seed=4))
    featurizer, bags = Featurizer.fit(data.texts, ngrams=2, buckets=4096, return_bags="tokens")
    y_train = np.array([int(label) for label in data.labels])
    from_bags = rare_class_of(types.SimpleNamespace(y_train=y_train, train_bags=bags, featurizer=featurizer))
    assert from_bags == pytest.approx(rare_class_signal(data.labels, texts_pairs(data)))


def _telling_words_below_min_count_5(n=2000, seed=0):
    """Skewed data whose rare documents each hold, besides the common words, one of 120 words of their own: ~2 documents
    a word, most below min_count 5 (the held-out test sees them at min_count 1: AUC 0.88; without them: 0.60)."""
    rng = random.Random(seed)
    labels, texts = [], []
    for _ in range(n):
        rare = rng.random() < 0.12
        words = [rng.choice(WORDS) for _ in range(12)] + ([f"rare{rng.randrange(120)}"] if rare else [])
        labels.append("1" if rare else "2")
        texts.append(" ".join(words))
    return LabeledTexts(labels, texts)


@pytest.mark.parametrize("min_count", [1, 5])
def test_the_test_reads_every_word_of_the_data_whatever_the_min_count(min_count):
    """train() read the words of its vocabulary at the run's min_count (AUC 0.60 at 5: its lr 0.4x), autotune every
    word of the texts (0.88: the full budget), so train --min-count 5 and autotune with min_count 5 decided otherwise
    on the same data. The test is of the data: every word, as the threshold was derived (min_count 1)."""
    import types

    from fasttext_lib.features import Featurizer
    from fasttext_lib.train import rare_class_of

    data = _telling_words_below_min_count_5()
    featurizer, bags = Featurizer.fit(data.texts, min_count=min_count, ngrams=2, buckets=4096, return_bags="tokens")
    rare_words = sum(word.startswith("rare") for word in featurizer.vocab.idx_to_token)
    assert rare_words < 20 if min_count == 5 else rare_words > 100  # (at 5, most rare words are no row of the model)
    y_train = np.array([int(label) for label in data.labels])
    from_bags = rare_class_of(types.SimpleNamespace(y_train=y_train, train_bags=bags, featurizer=featurizer))
    from_texts = rare_class_signal(data.labels, texts_pairs(data))
    assert from_texts.auc > WEAK_SIGNAL_AUC
    assert from_bags == pytest.approx(from_texts)
    config = TrainConfig(epochs=10, ngrams=2, emsize=8, buckets=1024, ctx="cpu", progress=False, min_count=min_count)
    featurizer, token_bags, _ = featurize(data, None, config)
    encoded = (featurizer, token_bags.encode_all(), None)  # a caller's featurized Bags: the vocabulary's words only
    assert (train(data, None, config).config.lr == train(data, None, config, featurized=encoded).config.lr
            == starting_config(data, config).lr)


def test_autotune_starts_from_the_lr_train_resolves_for_text_holding_a_label_word():
    """A __label__ word in the rare documents' text (CSV text naming a class) told them apart to autotune's test of the
    texts, which train()'s bags never hold: autotune started from the full lr, train took 0.4x of it."""
    data = _with_a_label_word_in_the_rare_documents(skewed(telling=False))
    config = TrainConfig(epochs=10, ngrams=2, emsize=8, buckets=1024, ctx="cpu", progress=False)
    assert starting_config(data).lr == train(data, None, config).config.lr


def _settings_line(capsys):
    return next(line for line in capsys.readouterr().err.splitlines() if line.startswith("settings"))


def test_training_on_a_skewed_class_with_weak_words_takes_less_lr_and_says_why(capsys):
    data = skewed(telling=False)
    config = TrainConfig(epochs=1, emsize=8, buckets=1024, ctx="cpu", progress=True)
    trained = train(data, None, config)
    line = _settings_line(capsys)
    rule = default_schedule(len(data), 12.0, 2, 1, 1)
    assert trained.config.lr == pytest.approx(MIN_SKEW_FACTOR * rule["lr"], rel=1e-3)
    assert "the lr 0.4x: the rarer class, 12% of the documents, is barely told apart by its words (held-out AUC 0." in line


def test_training_on_a_skewed_class_with_telling_words_keeps_the_rule(capsys):
    data = skewed(telling=True)
    trained = train(data, None, TrainConfig(epochs=1, emsize=8, buckets=1024, ctx="cpu", progress=True))
    assert trained.config.lr == default_schedule(len(data), 12.0, 2, 1, 1)["lr"]
    assert "barely told apart" not in _settings_line(capsys)


def test_an_lr_given_or_adams_is_left_alone_and_the_words_not_tested(monkeypatch):
    import fasttext_lib.class_signal as class_signal

    def not_called(*args):
        raise AssertionError("tested the words of a run whose lr is not the data's")

    monkeypatch.setattr(class_signal, "rare_class_signal", not_called)
    data = skewed(telling=False)
    for given in ({"lr": 0.3}, {"optimizer": "adam"}):
        trained = train(data, None, TrainConfig(epochs=1, emsize=8, buckets=1024, ctx="cpu", progress=False, **given))
        assert trained.config.lr == given.get("lr", 0.01)


def test_autotune_starts_from_the_lowered_lr_and_its_final_line_says_why():
    from fasttext_lib.autotune import _final_settings_line, rare_class_of_texts

    weak, telling = skewed(telling=False), skewed(telling=True)
    start = starting_config(weak)
    assert start.lr == pytest.approx(MIN_SKEW_FACTOR * starting_config(telling).lr, rel=1e-3)
    said = _final_settings_line(start, start, True, len(weak), rare_class_of_texts(weak))
    assert "the lr 0.4x: the rarer class, 12% of the documents" in said
    assert "barely" not in _final_settings_line(start, start, True, len(telling), rare_class_of_texts(telling))


def test_autotune_tests_the_words_once_for_its_start_and_its_final_line(monkeypatch, capsys):
    """It tested them twice: for the start's lr, and again for the final settings line (with progress on)."""
    import fasttext_lib.class_signal as class_signal
    from fasttext_lib.autotune import autotune

    calls = []

    def counted(*args):
        calls.append(args)
        return real(*args)

    real = class_signal.rare_class_signal
    monkeypatch.setattr(class_signal, "rare_class_signal", counted)
    base = TrainConfig(ctx="cpu", buckets=1024, progress=True)
    autotune(skewed(telling=False), skewed(n=400, telling=False, seed=1), duration=600, base=base, max_trials=1,
             verbose=False, refit=False)
    assert len(calls) == 1
    assert "the lr 0.4x: the rarer class, 12% of the documents" in _settings_line(capsys)


def test_train_reads_its_sample_as_bags_of_words_without_encoding_their_n_grams(monkeypatch):
    """The sample's n-grams, which the test leaves out, were most of its memory (20k documents of 900 tokens: 0.65 GB
    of 0.25)."""
    import fasttext_lib.class_signal as class_signal

    read = []

    def pairs_of_bags(bags, featurizer):
        read.append((int(bags.rows.max()), featurizer.vocab_size))
        return real(bags, featurizer)

    real = class_signal.pairs_of_bags
    monkeypatch.setattr(class_signal, "pairs_of_bags", pairs_of_bags)
    data = skewed(telling=False)
    trained = train(data, None, TrainConfig(epochs=1, ngrams=2, emsize=8, buckets=1024, ctx="cpu", progress=False))
    assert trained.config.lr == pytest.approx(MIN_SKEW_FACTOR * default_schedule(len(data), 12.0, 2, 2, 1)["lr"],
                                              rel=1e-3)
    [(highest_row, vocab_size)] = read
    assert highest_row < vocab_size


def test_the_held_out_score_is_naive_bayes_learned_on_the_other_folds():
    """held_out_auc against the rule written out document by document (word ids in the millions, as a vocabulary's)."""
    from fasttext_lib.class_signal import FOLDS, held_out_auc

    rng = np.random.RandomState(7)
    n = 300
    rare = rng.rand(n) < 0.2
    words_of = [set(rng.choice([5, 70, 3_000_000, 4_999_999, 123] + list(range(200, 230)), size=rng.randint(0, 9)))
                for _ in range(n)]
    fold = np.random.RandomState(0).permutation(n) % FOLDS
    score = []
    for d in range(n):
        others = [e for e in range(n) if fold[e] != fold[d]]
        rare_docs = [e for e in others if rare[e]]
        common_docs = [e for e in others if not rare[e]]
        total = 0.0
        for w in words_of[d]:
            in_rare = sum(w in words_of[e] for e in rare_docs)
            in_common = sum(w in words_of[e] for e in common_docs)
            if in_rare + in_common:
                total += (np.log((in_rare + 1) / (len(rare_docs) + 2))
                          - np.log((in_common + 1) / (len(common_docs) + 2)))
        score.append(total)
    doc_of = np.array([d for d in range(n) for _ in sorted(words_of[d])], dtype=np.int64)
    word = np.array([w for d in range(n) for w in sorted(words_of[d])], dtype=np.int64)
    assert held_out_auc(rare, doc_of, word) == pytest.approx(auc(np.array(score), rare))


def test_a_run_resumed_from_a_checkpoint_the_rule_before_the_test_wrote_is_told_the_lr_that_resumes_it(tmp_path,
                                                                                                      monkeypatch):
    """A run interrupted before this version (its lr the full budget's) and resumed by it (0.4x of it, nothing else
    changed) was refused as "a different run (lr 1.2 -> 0.48)" and told to use another checkpoint_dir or remove it:
    its epochs lost. The lr it was written with resumes it, and the refusal says so."""
    import fasttext_lib.schedule as schedule
    from fasttext_lib.errors import FastTextError

    class Crash(Exception):
        pass

    def crash_after_epoch_1(row):
        if row["epoch"] == 1:
            raise Crash()

    data, ckpt = skewed(telling=False), str(tmp_path / "ckpt")
    config = TrainConfig(epochs=2, emsize=8, buckets=1024, ctx="cpu", progress=False)
    with monkeypatch.context() as before_the_test:
        before_the_test.setattr(schedule, "skew_factor", lambda signal: 1.0)
        with pytest.raises(Crash):
            train(data, None, config, checkpoint_dir=ckpt, on_epoch_end=crash_after_epoch_1)
    written_with = default_schedule(len(data), 12.0, 2, 1, 2)["lr"]
    with pytest.raises(FastTextError) as refused:
        train(data, None, config, checkpoint_dir=ckpt)
    message = str(refused.value)
    assert f"different run (lr {written_with} -> " in message, message
    assert f"rerun with TrainConfig(lr={written_with}) to resume it" in message, message
    seen = []
    train(data, None, replace(config, lr=written_with), checkpoint_dir=ckpt, on_epoch_end=seen.append)  # as told
    assert [row["epoch"] for row in seen] == [2]
