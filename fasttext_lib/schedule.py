"""The default optimizer settings as a function of the training data: :func:`default_schedule`.

A :class:`~fasttext_lib.config.TrainConfig` whose ``lr`` or ``batch_size`` is ``None`` takes them
from here once the data is known (``TrainConfig.resolve``, called by ``train()``). Derivation and
evidence: docs/RESULTS.md, "Defaults that adapt to the data".

* **Batch**: about 256 optimizer steps per epoch (docs / 256, a power of two, in [16, 1024]). A
  fixed batch of 1024 gives a 3k-document set 3 steps an epoch and the model barely moves; 1024 is
  where Yelp-size data (560k documents) lands anyway.
* **lr**: a fixed budget for the sum of the learning rate over the run (lr x total steps / 2 under
  the linear decay to zero): the distance batch-averaged SGD travels. Fewer steps, larger lr.
  Bigrams (twice the rows per document, each with half the weight, each rarely seen) get 1.5x.
* **The per-row SGD scale's shrink** (:func:`row_shrink`, word n-grams only): above batch 256 a row
  found in many of a batch's documents steps up to ``batch / 256`` times its mean gradient, a row in
  one document as before (batches.sgd_row_scale_entries); the output layer's lr gets the same
  factor. At 560k documents (batch 1024) this is what brings bigrams level with fastText.
"""
import math

TARGET_STEPS_PER_EPOCH = 256
MIN_BATCH, MAX_BATCH = 16, 1024  # below 16 a step is mostly overhead; 1024 keeps Yelp-size epochs fast
LR_BUDGET = 500.0  # sum of the lr over a unigram run (lr0 x steps / 2 under linear decay)
BIGRAM_FACTOR = 1.5  # ngrams > 1
MAX_LR = 4.0  # the per-row SGD scale makes a rare row's step lr x its per-document gradient: keep it bounded
SHRINK_ABOVE_BATCH = 256  # the per-row SGD scale's shrink (n-grams): 0 up to this batch (where the rule was derived)


def default_batch_size(num_docs):
    """Documents per step: about :data:`TARGET_STEPS_PER_EPOCH` steps an epoch, a power of two in [16, 1024]."""
    batch = 2 ** round(math.log2(max(1.0, num_docs / TARGET_STEPS_PER_EPOCH)))
    return int(min(MAX_BATCH, max(MIN_BATCH, batch)))


def default_schedule(num_docs, mean_tokens, num_classes, ngrams, epochs, batch_size=None):
    """``{"optimizer": "sgd", "lr": ..., "batch_size": ...}`` for data of this shape.

    ``batch_size``: a batch size the caller fixed; the lr then follows from its number of steps.
    ``mean_tokens`` and ``num_classes`` are part of the interface, but the evidence so far (binary
    sets, 17-155 tokens per document; 3- and 5-class sets) did not call for a term in either: on
    the multi-class derivation sets 0.5x-1.5x the budget moved unigram accuracy by up to 2 points,
    in no consistent direction across 3 and 5 classes (docs/RESULTS.md, "Multi-class data").
    """
    batch = int(batch_size) if batch_size else default_batch_size(num_docs)
    steps = epochs * math.ceil(num_docs / batch)
    budget = LR_BUDGET * (BIGRAM_FACTOR if ngrams > 1 else 1.0)
    lr = min(MAX_LR, 2.0 * budget / steps)  # linear decay: the mean lr is half the initial one
    return {"optimizer": "sgd", "lr": round(lr, 4), "batch_size": batch}


def row_shrink(batch_size, ngrams):
    """The per-row SGD scale's ``shrink`` k (batches.sgd_row_scale_entries): with word n-grams
    ``batch / 256 - 1``, 0 up to batch 256; 0 for unigrams. Evidence: docs/RESULTS.md 3, "At scale"
    (unigrams at 560k, where every row is a word seen often, overfit with it: -0.1 points)."""
    if ngrams < 2:
        return 0.0
    return max(0.0, batch_size / SHRINK_ABOVE_BATCH - 1.0)
