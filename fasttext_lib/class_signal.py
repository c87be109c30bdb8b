"""Whether a skewed two-class training split's words tell its rarer class apart: :func:`rare_class_signal`.

The lr budget (schedule.py) was derived on balanced and moderately skewed data. On strongly skewed two-class data
whose words say little about the rarer class (NYT editorial sentences with 17% of one class), it fits the rare
class's training documents (95% training accuracy) and calls test documents rare with a precision of 0.33: up to 2
points below the majority vote, where fastText's lr 0.1 stays. Less lr reaches the majority vote there, but costs
skewed sets whose rare class's words do generalize (movie-review snippets at 13-18%: up to 2 points). Skew alone does
not tell the two apart; the training split can, by asking the question a validation split would on folds of itself:
each document is scored by a naive Bayes log-likelihood ratio of its words, learned on the other folds, and the
score's AUC (how often a rare document outranks a common one) measures how well the words separate the classes on
documents they were not learned from: 0.57 on the NYT sets, 0.71-0.84 where the full budget wins.
schedule.skew_factor turns it into less budget. Evidence: docs/RESULTS.md 3, "Skewed classes: a held-out test of
the words".

It reads the words only (each document's words, not its n-grams), so unigram and bigram runs of the same data decide
alike, and at most :data:`SAMPLE_DOCS` documents: from train's token ids ~0.2 s and 60 MB on 560k reviews of ~110
words (0.7 s and 250 MB at ~900 words), from the texts (autotune's start) ~1.5 s.

It is a property of the data, not of a run's settings: every word of a document, whatever the vocabulary's
``min_count`` (train reads them from its token ids, features.TokenBags.every_word, autotune from the texts). Its
threshold (schedule.WEAK_SIGNAL_AUC) was derived with min_count 1, every word; read at the run's min_count, ``train
--min-count 5`` left out the rare words that tell a class apart (lowering the AUC), and decided otherwise than
autotune with the same base on the same data.
"""
from collections import namedtuple

import numpy as np

SKEWED_BELOW = 0.25  # a rarer class of at least this share: no test (the budget's derivation sets reach 28%)
FOLDS = 5
SAMPLE_DOCS = 20_000  # documents scored at most (a seeded sample of larger splits): the AUC's error is then < 0.01
# fewer rare documents in the sample: no test, the budget as before. An AUC of few is noise: 36 rare documents whose
# words tell nothing scored 0.42-0.72 over five seeds; the smallest set measured has 54 (drug3_neu, RESULTS.md)
MIN_RARE_DOCS = 50

RareClassSignal = namedtuple("RareClassSignal", "share auc")  # the rarer class's share of the documents; held-out AUC


def rare_class_signal(labels, pairs_of):
    """:class:`RareClassSignal` of a two-class split whose rarer class is below :data:`SKEWED_BELOW`, else None (also
    with fewer than :data:`MIN_RARE_DOCS` rare documents to score).

    ``labels``: each document's class (any values); ``pairs_of(docs)``: ``(doc_of, word)`` of the documents ``docs``
    (indices, in order), one pair per distinct word of a document, ``doc_of`` counting from 0 in ``docs``
    (:func:`pairs_of_bags`, :func:`pairs_of_texts`). Balanced enough data costs nothing: its words are not read."""
    labels = np.asarray(labels)
    classes, counts = np.unique(labels, return_counts=True)
    if len(classes) != 2 or counts.min() / len(labels) >= SKEWED_BELOW:
        return None
    docs = sample(len(labels))
    rare = labels[docs] == classes[np.argmin(counts)]
    if rare.sum() < MIN_RARE_DOCS:
        return None
    doc_of, word = pairs_of(docs)
    return RareClassSignal(float(counts.min() / len(labels)), held_out_auc(rare, doc_of, word))


def held_out_auc(rare, doc_of, word):
    """The AUC of each document's naive Bayes score (sum over its distinct words of log P(word | rare) /
    P(word | common), add-one smoothed document frequencies) learned on the other :data:`FOLDS` folds."""
    word = _numbered_from_0(word)
    n_docs, n_words = len(rare), int(word.max()) + 1 if len(word) else 1
    fold = (np.random.RandomState(0).permutation(n_docs) % FOLDS).astype(np.int8)
    pair_fold = fold[doc_of]
    # documents holding each word, per fold and class: (FOLDS, 2, words), in one pass over the pairs (a pair-long
    # mask per fold and class were ten)
    held = np.bincount(_flat_index(2 * pair_fold + rare[doc_of], n_words, word),
                       minlength=FOLDS * 2 * n_words).reshape(FOLDS, 2, n_words)
    docs_of = np.array([[np.sum((fold == f) & (rare == c)) for c in (0, 1)] for f in range(FOLDS)], dtype=float)
    seen, docs = held.sum(0) - held, docs_of.sum(0) - docs_of  # each fold's: the other folds'
    log_ratio = np.log((seen[:, 1] + 1) / (docs[:, 1:] + 2)) - np.log((seen[:, 0] + 1) / (docs[:, :1] + 2))
    log_ratio[seen.sum(1) == 0] = 0.0  # a word the other folds never saw says nothing
    # each document's words weighed by its own fold's table (summed in the pairs' order, as fold by fold)
    score = np.bincount(doc_of, weights=log_ratio.reshape(-1)[_flat_index(pair_fold, n_words, word)], minlength=n_docs)
    return auc(score, rare)


def _numbered_from_0(word):
    """``word`` (ids) renumbered from 0 in their order, as int32: a vocabulary's ids reach millions, and
    :func:`held_out_auc`'s tables are words long. Through a table of the ids (5 bytes an id): sorting the pairs
    (np.unique) took seconds and ~30 bytes a pair (20k documents of 900 tokens: 8.6M pairs)."""
    if len(word) == 0:
        return word.astype(np.int32)
    present = np.zeros(int(word.max()) + 1, dtype=bool)
    present[word] = True
    return (np.cumsum(present, dtype=np.int32) - 1)[word]


def _flat_index(outer, n_words, word):
    """``outer * n_words + word`` as int64, made in place (one pair-long array)."""
    index = outer.astype(np.int64)
    index *= n_words
    index += word
    return index


def auc(score, positive):
    """The probability that a positive's score exceeds a negative's (ties count half): Mann-Whitney's U over the
    product of the two counts, from mid-ranks."""
    order = np.argsort(score, kind="mergesort")
    ranks = np.empty(len(score))
    sorted_scores = score[order]
    # mid-ranks of tied runs: each run's first and last position, averaged (ranks from 1)
    starts = np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])
    ends = np.r_[starts[1:], len(score)]
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    n_pos = int(positive.sum())
    n_neg = len(score) - n_pos
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def sample(n_docs, seed=0):
    """The documents the test reads: all, or :data:`SAMPLE_DOCS` of them, seeded, in order."""
    if n_docs <= SAMPLE_DOCS:
        return np.arange(n_docs)
    return np.sort(np.random.RandomState(seed).choice(n_docs, SAMPLE_DOCS, replace=False))


def pairs_of_bags(bags, featurizer):
    """``(doc_of, word)`` of features.Bags of ``featurizer``: each document's word rows (rows below its vocabulary's
    size; n-gram rows above), ``<unk>``'s left out: an empty document's bag is one ``<unk>`` row where its text has no
    word (:func:`pairs_of_texts`). A text's words are all in its bags with min_count 1, or those of
    features.TokenBags.every_word (train's)."""
    doc_of = np.repeat(np.arange(len(bags), dtype=np.int32), np.diff(bags.offsets))
    is_word = (bags.rows < featurizer.vocab_size) & (bags.rows != featurizer.unk_id)
    return doc_of[is_word], bags.rows[is_word]


def pairs_of_texts(texts):
    """``(doc_of, word)`` of raw texts, their words as training reads them (features.count_tokens: the training's
    text rule, natively where it can, a ``__label__`` word no word; word ids of this call's own)."""
    from .features import count_tokens

    counted = count_tokens(texts)
    doc_of = np.repeat(np.arange(len(counted.lengths), dtype=np.int64), counted.lengths)
    n_words = max(len(counted.words), 1)
    pairs = np.unique(doc_of * n_words + counted.ids)  # one per distinct word of a document
    return pairs // n_words, pairs % n_words


def texts_pairs(data):
    """``pairs_of`` for LabeledTexts ``data``: its documents ``docs`` (sorted indices), as the training splits their
    words (by position: texts may be a pandas Series, whose [i] is its index's label i)."""
    def pairs_of(docs):
        wanted = set(docs.tolist())
        return pairs_of_texts([text for i, text in enumerate(data.texts) if i in wanted])
    return pairs_of
