"""The default training schedule as a function of the data (derivation: docs/defaults_derivation.md).

A pure function, so the lead can move it into the library (``TrainConfig`` fields left ``None``
would be filled from it once the training data is known).
"""
import math

# Optimizer steps per epoch we aim for: batch = training docs / this, as a power of two.
TARGET_STEPS_PER_EPOCH = 256
MIN_BATCH, MAX_BATCH = 16, 1024  # below 16 a step is mostly overhead; 1024 keeps Yelp-size epochs fast
# Sum of the learning rate over the run (lr x total steps, times 1/2 for the linear decay to 0):
# the distance batch-averaged SGD travels. Unigrams on every set tried wanted 400-800, bigrams
# (twice the rows per document, each rarely seen, each with half the weight) about 1.5x that.
LR_BUDGET = 500.0
BIGRAM_FACTOR = 1.5
MAX_LR = 4.0  # the per-row scale makes a rare row's step lr x its per-document gradient: keep it bounded


def default_schedule(num_docs, mean_tokens, num_classes, ngrams, epochs):
    """Settings for :class:`fasttext_lib.train.TrainConfig` given the training data's shape.

    ``mean_tokens`` and ``num_classes`` are accepted for the interface; the evidence so far
    (binary sets, 17-155 tokens per document) did not call for them (see the derivation).
    """
    batch = 2 ** round(math.log2(max(1.0, num_docs / TARGET_STEPS_PER_EPOCH)))
    batch = int(min(MAX_BATCH, max(MIN_BATCH, batch)))
    steps = epochs * math.ceil(num_docs / batch)
    budget = LR_BUDGET * (BIGRAM_FACTOR if ngrams > 1 else 1.0)
    lr = min(MAX_LR, 2.0 * budget / steps)  # linear decay: the mean lr is half the initial one
    return {"optimizer": "sgd", "lr": round(lr, 4), "batch_size": batch, "lr_schedule": "linear"}
