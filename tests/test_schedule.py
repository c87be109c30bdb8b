"""The settings that come from the data: schedule.default_schedule and TrainConfig.resolve."""
import pytest

from fasttext_lib.config import TrainConfig
from fasttext_lib.schedule import (DOCS_PER_CLASS_PER_STEP, MAX_BATCH, MAX_CLASS_FACTOR, MAX_LENGTH_FACTOR, MAX_LR, MIN_BATCH,
                                   REFERENCE_TOKENS, class_factor, default_schedule, length_factor, mean_tokens, row_shrink)

SIZES = [50, 546, 2_888, 8_454, 20_000, 60_000, 200_000, 560_000, 3_600_000]


def test_batch_grows_with_the_data_in_powers_of_two_within_the_bounds():
    batches = [default_schedule(n, 20.0, 2, 1, 10)["batch_size"] for n in SIZES]
    assert batches == sorted(batches)
    assert batches[0] == MIN_BATCH and batches[-1] == MAX_BATCH  # clipped at both ends
    assert all(b & (b - 1) == 0 for b in batches)
    # about 256 steps an epoch where the bounds do not bite
    for n, b in zip(SIZES, batches):
        if MIN_BATCH < b < MAX_BATCH:
            assert 128 <= n / b <= 512, (n, b)


def test_lr_spends_a_fixed_budget_over_the_run():
    """lr x total steps is the same for every size the lr cap does not reach; fewer steps, larger lr."""
    budgets = []
    for n in SIZES[2:]:
        for epochs in (5, 10):
            s = default_schedule(n, 20.0, 2, 1, epochs)
            steps = epochs * -(-n // s["batch_size"])
            budgets.append(s["lr"] * steps)
    assert max(budgets) / min(budgets) < 1.01
    five, ten = (default_schedule(20_000, 20.0, 2, 1, e)["lr"] for e in (5, 10))
    assert five == pytest.approx(2 * ten, rel=1e-3)
    assert default_schedule(20_000, 20.0, 2, 2, 10)["lr"] == pytest.approx(1.5 * ten, rel=1e-3)  # bigrams


def test_lr_is_capped_on_tiny_data():
    assert default_schedule(50, 20.0, 2, 1, 5)["lr"] == MAX_LR
    assert default_schedule(546, 99.0, 2, 2, 5)["lr"] == MAX_LR
    assert all(0 < default_schedule(n, 20.0, 2, 2, 1)["lr"] <= MAX_LR for n in SIZES)


def test_with_three_documents_of_each_class_a_step_the_number_of_classes_does_not_change_the_schedule():
    """Multi-class sets (3 and 5 classes at batch 16 and up) did not call for a class term (docs/RESULTS.md):
    a softmax over K classes gets the binary sigmoid's lr and batch size wherever batch / K >= 3."""
    for n in (600, 2_966, 8_484, 560_000):
        for ngrams in (1, 2):
            binary = default_schedule(n, 19.0, 2, ngrams, 10)
            assert all(default_schedule(n, 19.0, k, ngrams, 10) == binary for k in (3, 5))
    big = default_schedule(560_000, 55.0, 2, 1, 5)  # DBpedia-sized: 14 classes at batch 1024
    assert default_schedule(560_000, 55.0, 14, 1, 5) == big and big["batch_size"] == 1024


def test_many_classes_on_small_batches_get_the_budget_and_the_cap_times_three_classes_over_batch():
    """A softmax row is pulled by its own class's documents in the batch: fewer than 3 a step, more lr."""
    assert class_factor(2, 16) == class_factor(5, 16) == class_factor(14, 512) == 1.0
    assert class_factor(8, 16) == pytest.approx(1.5) and class_factor(20, 32) == pytest.approx(1.875)
    assert class_factor(52, 32) == pytest.approx(4.875) and class_factor(200, 16) == MAX_CLASS_FACTOR == 8.0
    for n, k in ((5_485, 8), (6_532, 52), (11_293, 20)):
        for ngrams in (1, 2):
            binary = default_schedule(n, 100.0, 2, ngrams, 10)
            many = default_schedule(n, 100.0, k, ngrams, 10)
            assert many["batch_size"] == binary["batch_size"]
            factor = DOCS_PER_CLASS_PER_STEP * k / binary["batch_size"]
            assert factor > 1 and many["lr"] == pytest.approx(factor * binary["lr"], rel=1e-3)
    # with long documents the two terms multiply; the cap moves with both
    assert default_schedule(11_293, 320.0, 20, 1, 10)["lr"] == pytest.approx(2 * 1.875 * default_schedule(11_293, 20.0, 2, 1, 10)["lr"], rel=1e-3)
    assert default_schedule(546, 20.0, 32, 1, 5)["lr"] == pytest.approx(6 * MAX_LR)  # batch 16: 3 x 32 / 16


def test_the_budget_spread_over_very_many_steps_is_a_small_lr_not_zero():
    """--batch-size 1 on Yelp-size data (fastText's one document a step) for 300 epochs (168M steps): the lr,
    3.6e-5, was rounded to 4 decimals, 0.0, and the run stopped after reading the data with 'lr must be a positive
    finite number, got 0.0' (no --lr was given); at 5 epochs 0.00214 was rounded to 0.0021, 2% off the budget."""
    budget = 2 * 500.0 * class_factor(2, 1)
    for epochs in (5, 300, 10_000):
        s = default_schedule(560_000, 20.0, 2, 1, epochs, batch_size=1)
        steps = epochs * 560_000
        assert s["lr"] * steps == pytest.approx(budget, rel=0.005)
        TrainConfig(lr=s["lr"])  # a valid lr


def test_a_fixed_batch_size_sets_the_steps_the_lr_is_spread_over():
    free = default_schedule(20_000, 20.0, 2, 1, 10)
    fixed = default_schedule(20_000, 20.0, 2, 1, 10, batch_size=1024)
    assert fixed["batch_size"] == 1024 and free["batch_size"] == 64
    assert fixed["lr"] > free["lr"]


def test_resolve_fills_only_what_is_unset():
    kw = dict(num_docs=2_888, mean_tokens=19.0, num_classes=2)
    rule = default_schedule(2_888, 19.0, 2, 1, 10)
    assert TrainConfig().optimizer == "sgd" and TrainConfig().lr is None and TrainConfig().batch_size is None
    auto = TrainConfig().resolve(**kw)
    assert (auto.optimizer, auto.lr, auto.batch_size) == ("sgd", rule["lr"], rule["batch_size"])
    assert auto.resolved and auto.resolve(num_docs=10, mean_tokens=1.0, num_classes=2) == auto
    # explicit values win
    both = TrainConfig(lr=0.3, batch_size=100)
    assert both.resolve(**kw) == both
    lr_only = TrainConfig(lr=0.3).resolve(**kw)
    assert (lr_only.lr, lr_only.batch_size) == (0.3, rule["batch_size"])
    batch_only = TrainConfig(batch_size=1024).resolve(**kw)
    assert batch_only.batch_size == 1024
    assert batch_only.lr == default_schedule(2_888, 19.0, 2, 1, 10, batch_size=1024)["lr"]
    # adam keeps its own lr; its batch size still comes from the data
    adam = TrainConfig(optimizer="adam").resolve(**kw)
    assert (adam.lr, adam.batch_size) == (0.01, rule["batch_size"])
    assert TrainConfig(optimizer="adam").learning_rate == 0.01
    with pytest.raises(ValueError, match="from the data"):
        TrainConfig().learning_rate


def test_the_row_scale_shrinks_only_above_batch_256_and_with_ngrams():
    """The sets the rule was derived on (batch 16-256) keep the plain per-row mean; above, with word
    n-grams, k grows with the batch: 1 at 512, 3 at 1024 (560k documents); unigrams never shrink
    (docs/RESULTS.md 3, "At scale")."""
    assert [row_shrink(b, 2) for b in (16, 64, 256, 512, 1024)] == [0.0, 0.0, 0.0, 1.0, 3.0]
    assert [row_shrink(b, 1) for b in (16, 256, 512, 1024)] == [0.0] * 4
    assert row_shrink(1024, 3) == 3.0
    small = [default_schedule(n, 20.0, 2, 2, 5)["batch_size"] for n in (546, 2_888, 8_454, 20_000, 60_000)]
    assert all(row_shrink(b, 2) == 0.0 for b in small)
    assert row_shrink(default_schedule(560_000, 155.0, 2, 2, 5)["batch_size"], 2) == 3.0


def test_documents_up_to_the_reference_length_get_the_budget_unchanged():
    """The budget was derived on documents of 19-156 tokens: up to REFERENCE_TOKENS the length changes nothing."""
    for n in (546, 2_888, 20_000, 560_000):
        for ngrams in (1, 2):
            short = default_schedule(n, 14.0, 2, ngrams, 10)
            assert all(default_schedule(n, length, 2, ngrams, 10) == short for length in (1.0, 99.0, 155.8, REFERENCE_TOKENS))


def test_longer_documents_get_the_budget_and_the_cap_times_their_length_over_the_reference():
    """A row's gradient is 1/length of its document's: above the reference length the lr grows with it."""
    assert length_factor(REFERENCE_TOKENS / 2) == 1.0 and length_factor(2 * REFERENCE_TOKENS) == 2.0
    # capped: nothing longer than 760 tokens was measured
    assert length_factor(100 * REFERENCE_TOKENS) == MAX_LENGTH_FACTOR == 8.0
    for n in (2_888, 11_293, 560_000):
        for ngrams in (1, 2):
            base = default_schedule(n, 20.0, 2, ngrams, 10)
            for times in (1.5, 3.0, 4.75):
                longer = default_schedule(n, times * REFERENCE_TOKENS, 2, ngrams, 10)
                assert longer["batch_size"] == base["batch_size"]
                assert longer["lr"] == pytest.approx(times * base["lr"], rel=1e-3)
    # the cap moves with the budget: 546 documents at 5 epochs are capped either way
    assert default_schedule(546, 99.0, 2, 1, 5)["lr"] == MAX_LR
    assert default_schedule(546, 3 * REFERENCE_TOKENS, 2, 1, 5)["lr"] == pytest.approx(3 * MAX_LR)


def test_the_mean_length_counts_tokens_as_the_model_does():
    """Punctuation is a token of its own (text.tokenize), as the model's rows are counted."""
    assert mean_tokens(["Great food, friendly staff!", "ok"]) == pytest.approx((6 + 1) / 2)
    assert mean_tokens([]) == 0.0


def test_training_resolves_long_documents_to_a_larger_lr():
    """train() measures the documents it is given: 200-token documents (1.25x the reference) get 1.25x the lr of 3-token ones."""
    from fasttext_lib.data import LabeledTexts
    from fasttext_lib.train import resolve_settings

    words = " ".join(f"w{i}" for i in range(200))  # 200 tokens: 1.25x the reference
    long = LabeledTexts(["1", "2"] * 100, [words] * 200)
    short = LabeledTexts(["1", "2"] * 100, ["a b c"] * 200)
    config = TrainConfig(epochs=5, progress=False)
    got_long = resolve_settings(config, long.texts, 2, len(long))
    got_short = resolve_settings(config, short.texts, 2, len(short))
    assert got_long.batch_size == got_short.batch_size
    assert got_long.lr == pytest.approx(1.25 * got_short.lr, rel=1e-3)


@pytest.fixture(params=["native", "python"])
def token_route(request, monkeypatch):
    from fasttext_lib import native_features

    if request.param == "python":
        monkeypatch.setenv(native_features.ENV_SWITCH, "0")
    return request.param


def _mixed_lengths(sample_docs):
    """Labels and texts whose first ``sample_docs`` (short; punctuation, capitals, a __label__ word that the
    featurizer leaves out and the mean length counts, an empty text) differ in length from the rest (long)."""
    first = ["Great food, friendly staff!", "ok", "the __label__2 soup was cold", "", "ÉCOLE d'été… très BIEN 👍",
             "__label__1", "a\\nb  c\td"]
    texts = [first[i % len(first)] + f" w{i}" * (i % 5) for i in range(sample_docs)]
    texts += [" ".join(f"long{j}" for j in range(300))] * 40
    return [str(1 + i % 2) for i in range(len(texts))], texts


@pytest.mark.parametrize("counted", [False, True], ids=["read_labeled", "read_counted"])
def test_train_takes_the_mean_length_from_the_token_counts_it_holds(tmp_path, monkeypatch, token_route, counted):
    """train() resolves the settings from the first SAMPLE_DOCS documents' mean length as schedule.mean_tokens
    counts it, without counting their tokens again: the featurizer's token bags hold each document's count
    (only a text holding a __label__ word, which the featurizer leaves out, is counted again)."""
    from fasttext_lib import data as data_module
    from fasttext_lib import native_features
    from fasttext_lib import train as train_module
    from fasttext_lib.data import LabeledTexts, read_counted
    from fasttext_lib.writers import write_csv

    sample_docs = 60
    monkeypatch.setattr(data_module, "SAMPLE_DOCS", sample_docs)
    monkeypatch.setattr(train_module, "SAMPLE_DOCS", sample_docs)
    labels, texts = _mixed_lengths(sample_docs)
    expected_mean = mean_tokens(texts[:sample_docs])  # the reference: every token of the first SAMPLE_DOCS counted
    assert expected_mean != pytest.approx(mean_tokens(texts))  # (the first SAMPLE_DOCS are what decides)
    config = TrainConfig(epochs=1, emsize=4, progress=False, ctx="cpu")
    expected = config.resolve(len(texts), expected_mean, 2)
    data = LabeledTexts(labels, texts)
    if counted:
        write_csv(data, str(tmp_path / "d.csv"))
        data = read_counted(str(tmp_path / "d.csv"))
    counted_again = []
    if token_route == "native":
        real = native_features.total_tokens
        monkeypatch.setattr(native_features, "total_tokens", lambda t, *a, **k: counted_again.extend(t) or real(t, *a, **k))
    got = train_module.train(data, None, config).config
    assert (got.lr, got.batch_size) == (expected.lr, expected.batch_size)
    if token_route == "native":
        assert counted_again == [t for t in texts[:sample_docs] if "__label__" in t]


def test_mean_tokens_of_held_counts_is_the_count_of_the_texts():
    """schedule.mean_tokens given the featurizer's counts of the same texts: the same number, bit for bit."""
    from fasttext_lib.features import Featurizer

    _, texts = _mixed_lengths(60)
    _, bags = Featurizer.fit(texts, return_bags="tokens")
    assert mean_tokens(texts, lengths=bags.lengths) == mean_tokens(texts)
    assert mean_tokens(texts[:60], lengths=bags.lengths[:60]) == mean_tokens(texts[:60])
    assert mean_tokens(texts[:60], lengths=bags.lengths) == mean_tokens(texts[:60])  # (the counts after them: left out)
    assert mean_tokens([], lengths=bags.lengths[:0]) == 0.0


def test_mean_tokens_of_a_pandas_series_with_its_own_index():
    """The pandas API passes a frame's text column: a Series whose index is not 0..n-1 (a shuffled or filtered
    frame's). Its truth value raised ("ambiguous") and its [i] is the label i, not the i-th text: counted by position,
    with and without the featurizer's counts, the same number as the list's."""
    import pandas as pd

    from fasttext_lib.features import Featurizer

    _, texts = _mixed_lengths(60)
    _, bags = Featurizer.fit(texts, return_bags="tokens")
    series = pd.Series(texts, index=range(len(texts) * 3, 0, -3))
    assert mean_tokens(series) == mean_tokens(texts)
    assert mean_tokens(series, lengths=bags.lengths) == mean_tokens(texts, lengths=bags.lengths) == mean_tokens(texts)
    assert mean_tokens(series[:0]) == mean_tokens(series[:0], lengths=bags.lengths[:0]) == 0.0
