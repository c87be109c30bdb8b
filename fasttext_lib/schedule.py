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
* **Long documents** (:func:`length_factor`): the hidden vector is the mean of a document's rows, so
  each row's gradient is 1/length of the document's. The budget was derived on documents of up to
  ~156 tokens; above :data:`REFERENCE_TOKENS` the budget and the lr cap grow with the mean length,
  so that a row of a long document steps as far as one of a reference-length document.
* **Many classes on small batches** (:func:`class_factor`): a softmax row's gradient is averaged
  over the batch, and only the batch's documents of its class pull it toward them. Where a step holds
  fewer than 3 documents of a class on average (batch / classes < 3: many classes, small data), the
  budget and the lr cap grow with ``3 x classes / batch``.
* **Skewed two-class data whose words barely tell the rarer class apart** (:func:`skew_factor`): a rarer class
  below a quarter of the documents whose held-out naive Bayes AUC (class_signal.py) is below
  :data:`WEAK_SIGNAL_AUC` gets ``(share / 0.25)^2`` of the budget and the lr cap, at least 0.4x: the full budget
  fits such a class's training documents and calls test documents rare that are not (up to 2 points below the
  majority vote); where the words do separate it (AUC 0.71 and up), nothing changes.
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
REFERENCE_TOKENS = 160.0  # the longest mean length the budget was derived on (synthetic Yelp-shaped: 156), rounded up
MAX_LENGTH_FACTOR = 8.0  # 1,280 tokens: the longest set measured has 760 (whole movie reviews, stable up to 16x the budget)
DOCS_PER_CLASS_PER_STEP = 3  # below this many documents of a class in a batch (on average), a class row gets more lr
MAX_CLASS_FACTOR = 8.0  # Reuters R52 (52 classes, batch 32) still gained at 8x the budget
WEAK_SIGNAL_AUC = 0.68  # held-out AUC below which a skewed class's words count as weak (derived: 0.57-0.65 vs 0.71+)
MIN_SKEW_FACTOR = 0.4  # the least budget skew_factor gives (a rarer class at 16% and below)
SHRINK_ABOVE_BATCH = 256  # the per-row SGD scale's shrink (n-grams): 0 up to this batch (where the rule was derived)


def default_batch_size(num_docs):
    """Documents per step: about :data:`TARGET_STEPS_PER_EPOCH` steps an epoch, a power of two in [16, 1024]."""
    batch = 2 ** round(math.log2(max(1.0, num_docs / TARGET_STEPS_PER_EPOCH)))
    return int(min(MAX_BATCH, max(MIN_BATCH, batch)))


def mean_tokens(texts, lengths=None):
    """The mean number of tokens (as the model counts them: :func:`~fasttext_lib.text.tokenize`) of ``texts``.

    Counted natively when the featurizer's library is in use (``native_features.total_tokens``: the same count,
    ~0.07 s instead of ~0.8-1 s for the 10,000 Yelp-length documents train and autotune measure, paid by every run
    whose settings come from the data); ``text.tokenize`` is the reference (``FASTTEXT_LIB_NATIVE=0``).

    ``lengths``: each of ``texts``' token count as the featurizer made it (``features.TokenBags.lengths``, in the same
    order; the counts of documents after them are left out), when it is held: those are not counted again. The featurizer leaves a ``__label__`` word out
    (``text.without_labels``) and this mean counts it, so a text holding one is counted here: the same number."""
    if lengths is None:
        return _total_tokens(texts) / max(1, len(texts))
    from .text import LABEL_PREFIX

    # (by position, as zip walks them: texts may be a pandas Series, whose [i] is its index's label i)
    held, recount = 0, []
    for text, length in zip(texts, lengths):
        if LABEL_PREFIX in text:
            recount.append(text)
        else:
            held += int(length)
    return (held + _total_tokens(recount)) / max(1, len(texts))


def _total_tokens(texts):
    from . import native_features

    if native_features.available():
        return native_features.total_tokens(texts)
    from .text import tokenize

    return sum(len(tokenize(t)) for t in texts)


def length_factor(mean_tokens):
    """How much more lr documents of ``mean_tokens`` tokens get: ``mean_tokens / REFERENCE_TOKENS``, from 1 to
    :data:`MAX_LENGTH_FACTOR`.

    A row's gradient is 1/length of its document's (the hidden vector is a mean), so at a fixed lr
    the rows of long documents barely move: at the unchanged budget, 269-token newsgroup posts
    reached 0.54 and 760-token movie reviews 0.68 where 4-8x that lr gave 0.80-0.87. Up to the
    reference length (the budget's derivation sets: 19-156 tokens) nothing changes; the synthetic
    Yelp-shaped set (156 tokens) loses 0.3 points with unigrams at 2x (docs/RESULTS.md 3, "Long documents").
    """
    return min(MAX_LENGTH_FACTOR, max(1.0, float(mean_tokens) / REFERENCE_TOKENS))


def class_factor(num_classes, batch_size):
    """How much more lr ``num_classes`` classes get at ``batch_size``: ``3 x classes / batch``, from 1 to
    :data:`MAX_CLASS_FACTOR`.

    Each output row of a softmax is pulled toward its class by the batch's documents of that class,
    and its step is their sum divided by the batch. With many classes and small batches a row sees
    one or two of its documents a step: at the budget Reuters R52 (52 classes, batch 32), 20 Newsgroups
    (20, batch 32) and Reuters R8 (8, batch 16) reached 0.82, 0.72 and 0.95, where 4-8x that lr gave
    0.93, 0.82 and 0.97; two-class subsets of the same texts were level from 1x to 8x. Where a step
    holds 3 or more documents of each class (every 2- to 5-class set at batch 16 and up, which wanted
    the budget, and large data: 14 classes at batch 512, which lost 1 point at 2.8x) nothing changes
    (docs/RESULTS.md 3, "Many classes").
    """
    return min(MAX_CLASS_FACTOR, max(1.0, DOCS_PER_CLASS_PER_STEP * float(num_classes) / batch_size))


def skew_factor(signal):
    """How much of the budget and lr cap skewed two-class data gets: ``(share / 0.25)^2``, from
    :data:`MIN_SKEW_FACTOR` to 1, where ``signal`` (class_signal.RareClassSignal: the rarer class's share and
    its words' held-out AUC) says the words barely separate it (AUC below :data:`WEAK_SIGNAL_AUC`); else 1.

    On NYT editorial sentences with 12-17% of one class (AUC 0.57) the full budget was 0.8-2.0 points below
    fastText's majority vote and 0.4x brings it level; on movie-review snippets at 13-18% (AUC 0.71-0.81) the same
    factor cost up to 2 points, so the AUC decides. Evidence: docs/RESULTS.md 3, "Skewed classes: a held-out test
    of the words".
    """
    from .class_signal import SKEWED_BELOW

    if signal is None or signal.auc >= WEAK_SIGNAL_AUC:
        return 1.0
    return min(1.0, max(MIN_SKEW_FACTOR, (signal.share / SKEWED_BELOW) ** 2))


def default_schedule(num_docs, mean_tokens, num_classes, ngrams, epochs, batch_size=None, rare_class=None):
    """``{"optimizer": "sgd", "lr": ..., "batch_size": ...}`` for data of this shape.

    ``batch_size``: a batch size the caller fixed; the lr then follows from its number of steps.
    ``mean_tokens``: documents longer than :data:`REFERENCE_TOKENS` on average get
    :func:`length_factor` times the budget and the lr cap; ``num_classes``: fewer than
    :data:`DOCS_PER_CLASS_PER_STEP` documents of a class per batch, :func:`class_factor` times; ``rare_class``
    (class_signal.RareClassSignal, or None: balanced enough, or not measured), :func:`skew_factor` times.
    """
    batch = int(batch_size) if batch_size else default_batch_size(num_docs)
    steps = epochs * math.ceil(num_docs / batch)
    scale = length_factor(mean_tokens) * class_factor(num_classes, batch) * skew_factor(rare_class)
    budget = LR_BUDGET * (BIGRAM_FACTOR if ngrams > 1 else 1.0) * scale
    lr = min(MAX_LR * scale, 2.0 * budget / steps)  # linear decay: the mean lr is half the initial one
    return {"optimizer": "sgd", "lr": _rounded_lr(lr), "batch_size": batch}


def _rounded_lr(lr):
    """``lr`` to 4 decimals (the values shown and recorded), or to 3 significant digits below 0.01: spread over
    tens of millions of steps (``--batch-size 1`` on Yelp-size data) 4 decimals made it 0.0, which the run refused
    after reading the data ("lr must be a positive finite number", with no --lr given), or several % off."""
    return round(lr, 4) if lr >= 0.01 else float(f"{lr:.3g}")


def row_shrink(batch_size, ngrams):
    """The per-row SGD scale's ``shrink`` k (batches.sgd_row_scale_entries): with word n-grams
    ``batch / 256 - 1``, 0 up to batch 256; 0 for unigrams. Evidence: docs/RESULTS.md 3, "At scale"
    (unigrams at 560k, where every row is a word seen often, overfit with it: -0.1 points)."""
    if ngrams < 2:
        return 0.0
    return max(0.0, batch_size / SHRINK_ABOVE_BATCH - 1.0)


def sgd_row_shrink(config):
    """The SGD row scale's ``shrink`` for this config (:func:`row_shrink`); 0 for other optimizers."""
    return row_shrink(config.batch_size, config.ngrams) if config.optimizer == "sgd" else 0.0

