"""The settings that come from the data: schedule.default_schedule and TrainConfig.resolve."""
import pytest

from fasttext_lib.config import TrainConfig
from fasttext_lib.schedule import MAX_BATCH, MAX_LR, MIN_BATCH, default_schedule, row_shrink

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


def test_the_number_of_classes_does_not_change_the_schedule():
    """Multi-class sets (3 and 5 classes) did not call for a class term (docs/RESULTS.md): a softmax
    over K classes gets the binary sigmoid's lr and batch size for data of the same shape."""
    for n in (600, 2_966, 8_484, 560_000):
        for ngrams in (1, 2):
            binary = default_schedule(n, 19.0, 2, ngrams, 10)
            assert all(default_schedule(n, 19.0, k, ngrams, 10) == binary for k in (3, 5, 14))


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
