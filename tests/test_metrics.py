"""evaluation.metrics_of: the numbers `evaluate` prints and returns."""
import math

import numpy as np

from fasttext_lib.evaluation import metrics_of


def test_a_loss_of_certain_right_answers_is_zero_not_minus_zero():
    # (every probability of the true class 1.0: -mean(log 1) is -0.0, which evaluate printed as "loss": -0.0)
    metrics = metrics_of(np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32), np.array([0, 1]))
    assert metrics["loss"] == 0.0 and math.copysign(1.0, metrics["loss"]) == 1.0
    assert metrics["accuracy"] == 1.0 and metrics["n"] == 2


def test_the_loss_is_the_mean_cross_entropy_of_the_true_class():
    probs = np.array([[0.25, 0.75], [0.5, 0.5], [0.9, 0.1]])
    metrics = metrics_of(probs, np.array([1, 0, 1]), confusion=True)
    assert math.isclose(metrics["loss"], -(math.log(0.75) + math.log(0.5) + math.log(0.1)) / 3, rel_tol=1e-12)
    assert metrics["accuracy"] == 2 / 3  # (the tie 0.5 / 0.5 goes to the first class, argmax)
    assert metrics["confusion"] == [[1, 0], [1, 1]]
