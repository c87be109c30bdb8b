"""A deterministic synthetic Yelp-shaped corpus of any size, for scale tests and benchmarks.

Its words are pronounceable pseudo-words, not English: the demo's built-in sample is real review text
(sample.py). The real Yelp polarity data is 560k reviews we cannot ship; this generator makes text
with the properties that matter for a bag-of-words classifier at that scale, in the same Zhang et al.
CSV format:

* Yelp-shaped lengths: log-normal, median ~110 words, long tail (clipped to 3..1000);
* a Zipf vocabulary of pronounceable pseudo-words, so most tokens are uninformative;
* real but imperfect signal: each class has cue words, cues also leak into other classes,
  a share of cues is negated ("not <cue of another class>", which only word bigrams can read),
  and a few labels are flipped;
* surface noise that normalization must remove: capitals, punctuation, ``""`` quotes, literal
  ``\\n`` line breaks and ``<br />``.

Same arguments, same corpus, byte for byte (``numpy.random.RandomState`` is stable across versions).
"""
import numpy as np

from .data import LabeledTexts

_ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "ch", "st", "tr", "pl", "gr"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "oo", "ou"]
_CODAS = ["", "", "n", "r", "s", "t", "l", "m", "ck", "nd"]


def _pseudo_words(rng, n):
    words, seen = [], {"not"}
    while len(words) < n:
        syllables = rng.randint(1, 4)
        w = "".join(
            _ONSETS[rng.randint(len(_ONSETS))] + _VOWELS[rng.randint(len(_VOWELS))] + _CODAS[rng.randint(len(_CODAS))]
            for _ in range(syllables)
        )
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


MAX_CLASSES = (30000 - 200) // 150  # what the default vocabulary and cue words allow (198)


# Peak bytes per document while generating (the per-token arrays, then the texts): ~6 KB at the default median
# length of 110 tokens (measured on 20k and 100k documents), in proportion to the median length.
PEAK_BYTES_PER_DOC = 6500
PEAK_MEDIAN_LENGTH = 110


def _check_room(n_docs, median_length):
    """Refuse a corpus that cannot fit in the memory available (one line): ``synthetic --train-docs 100000000`` or
    notebook 01's ``-p train_docs 100000000`` were ended by the kernel's OOM killer, with no line at all."""
    from .devices import available_memory
    from .errors import FastTextError

    need = n_docs * PEAK_BYTES_PER_DOC * max(median_length, 1) / PEAK_MEDIAN_LENGTH
    room = available_memory()
    if room is not None and need > room:
        raise FastTextError(f"generating {n_docs:,} synthetic reviews takes about {need / 2**30:.1f} GiB of memory, "
                            f"more than the {room / 2**30:.1f} GiB available here; generate fewer documents")


def generate_reviews(
    n_docs,
    num_classes=2,
    seed=0,
    vocab_size=30000,
    cues_per_class=150,
    cue_rate=0.08,
    negation_rate=0.2,
    cue_leak=0.1,
    label_noise=0.02,
    median_length=110,
):
    """Return :class:`LabeledTexts` with labels ``"1".."num_classes"`` and raw review text."""
    from .config import check_seed

    check_seed(seed)  # notebook 01's -p seed x (or -1) was numpy's TypeError (ValueError) traceback
    if n_docs <= 0 or num_classes < 2:
        raise ValueError("need n_docs > 0 and num_classes >= 2")
    # Cue words are drawn from ranks 200 .. 200 + spread x (cues per class x classes): spread 40 up to
    # 4 classes (the corpora of RESULTS.md; unchanged), narrower where that range would pass the vocabulary.
    spread = min(40, (vocab_size - 200) // (cues_per_class * num_classes))
    if spread < 1:
        raise ValueError(f"at most {(vocab_size - 200) // cues_per_class} classes fit a vocabulary of {vocab_size} "
                         f"words with {cues_per_class} cue words each, got {num_classes}")
    _check_room(n_docs, median_length)
    rng = np.random.RandomState(seed)
    words = _pseudo_words(rng, vocab_size)
    ranks = np.arange(1, vocab_size + 1, dtype=np.float64)
    cdf = np.cumsum(ranks ** -1.07)
    cdf /= cdf[-1]
    # Cue words come from the middle of the frequency range: frequent enough to learn, never stop words.
    cue_pool = rng.permutation(np.arange(200, 200 + spread * cues_per_class * num_classes))
    cues = cue_pool[: cues_per_class * num_classes].reshape(num_classes, cues_per_class)

    labels = rng.randint(num_classes, size=n_docs)
    lengths = np.clip(rng.lognormal(np.log(median_length), 0.7, size=n_docs), 3, 1000).astype(np.int64)
    total = int(lengths.sum())
    tokens = np.searchsorted(cdf, rng.random_sample(total))
    doc_of = np.repeat(np.arange(n_docs), lengths)
    # Some reviews are vague, some emphatic: the cue rate varies per document.
    doc_cue_rate = cue_rate * rng.gamma(2.0, 0.5, size=n_docs)
    is_cue = rng.random_sample(total) < doc_cue_rate[doc_of]
    n_cues = int(is_cue.sum())
    own = labels[doc_of[is_cue]]
    other = (own + 1 + rng.randint(num_classes - 1, size=n_cues)) % num_classes
    negated = rng.random_sample(n_cues) < negation_rate
    leaked = rng.random_sample(n_cues) < cue_leak
    # A negated cue names another class ("not <cue of other>") and so supports its own class.
    cue_class = np.where(negated | leaked, other, own)
    tokens[is_cue] = cues[cue_class, rng.randint(cues_per_class, size=n_cues)]
    prefix = np.zeros(total, dtype=np.int8)
    prefix[np.flatnonzero(is_cue)[negated]] = 1
    punct = np.searchsorted(_PUNCT_CDF, rng.random_sample(total))
    capital = np.concatenate([[True], np.isin(punct[:-1], _SENTENCE_END)])

    flipped = rng.random_sample(n_docs) < label_noise
    labels = np.where(flipped, (labels + 1 + rng.randint(num_classes - 1, size=n_docs)) % num_classes, labels)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    capital[offsets[:-1]] = True
    capitalized = [w.capitalize() for w in words]
    texts = []
    for d in range(n_docs):
        a, b = offsets[d], offsets[d + 1]
        pieces = []
        for t, pre, pun, cap in zip(tokens[a:b].tolist(), prefix[a:b].tolist(), punct[a:b].tolist(), capital[a:b].tolist()):
            w = (capitalized if cap else words)[t]
            w = ("Not " + words[t] if cap else "not " + w) if pre else w
            pieces.append(_PUNCT_FORMS[pun].format(w))
        texts.append(" ".join(pieces).rstrip() + ".")
    return LabeledTexts([str(int(y) + 1) for y in labels], texts)


# Punctuation after a word: (probability, format, ends a sentence). Literal "\n" line breaks and
# <br /> markup appear as in the Yelp CSV and are removed again by normalize_text.
_PUNCT = [
    (0.9095, "{}", False),
    (0.06, "{}.", True),
    (0.02, "{},", False),
    (0.005, "{}!", True),
    (0.002, '"{}"', False),
    (0.002, "{}.\n", True),
    (0.0015, "{}.<br />", True),
]
_PUNCT_CDF = np.cumsum([p for p, _, _ in _PUNCT])
_PUNCT_CDF[-1] = 1.0
_PUNCT_FORMS = [f for _, f, _ in _PUNCT]
_SENTENCE_END = [i for i, (_, _, end) in enumerate(_PUNCT) if end]
