import numpy as np
import pytest

from fasttext_lib.batches import BatchMaker
from fasttext_lib.features import UNK, Featurizer

DOCS = ["the food was good", "the service was bad bad", "", "good good good"]


def test_vocab_from_training_split_with_min_count():
    f = Featurizer.fit(DOCS, min_count=2)
    tokens = set(f.vocab.idx_to_token)
    assert {"the", "was", "good", "bad"} <= tokens
    assert "food" not in tokens and "service" not in tokens  # seen once
    assert f.vocab.idx_to_token[0] == UNK and f.num_rows == len(f.vocab)


def test_bags_are_per_document_means_without_padding():
    f, bags = Featurizer.fit(DOCS, return_bags=True)
    assert len(bags) == 4
    assert list(np.diff(bags.offsets)) == [4, 4, 1, 1]  # distinct rows per document: no padding
    # "the service was bad bad": 4 distinct rows, "bad" weighs 2/5
    d = slice(bags.offsets[1], bags.offsets[2])
    weights = dict(zip(bags.rows[d], bags.weights[d]))
    assert weights[f.vocab["bad"]] == np.float32(2 / 5)
    # the empty document is one <unk>
    assert list(bags.rows[bags.offsets[2]:bags.offsets[3]]) == [0]


def test_fit_bags_equal_transform_bags():
    f, bags = Featurizer.fit(DOCS, ngrams=3, buckets=1000, return_bags=True)
    again = f.transform(DOCS)
    np.testing.assert_array_equal(bags.rows, again.rows)
    np.testing.assert_array_equal(bags.offsets, again.offsets)
    np.testing.assert_allclose(bags.weights, again.weights)


def _fasttext_bigram_row(featurizer, a, b):
    """fastText's n-gram hash, written out independently: (h(a) * 116049371 + h(b)) mod 2**64, then the bucket."""
    import zlib

    h = (zlib.crc32(a.encode()) * 116049371 + zlib.crc32(b.encode())) % 2 ** 64
    return featurizer.vocab_size + h % featurizer.buckets


def test_ngrams_hash_into_buckets_after_vocab_and_unknown_words_still_form_ngrams():
    f = Featurizer.fit(DOCS, ngrams=2, buckets=50)
    assert f.num_rows == f.vocab_size + 50
    bags = f.transform(["zzz qqq"])  # both unknown: <unk> + one hashed bigram
    assert list(bags.rows) == sorted([0, _fasttext_bigram_row(f, "zzz", "qqq")])
    assert list(bags.weights) == [np.float32(2 / 3), np.float32(1 / 3)]  # <unk> twice, the bigram once
    # the hash is of the words themselves (order matters), known ones included
    assert list(f.transform(["qqq zzz"]).rows) == sorted([0, _fasttext_bigram_row(f, "qqq", "zzz")])
    assert list(f.transform(["good food"]).rows) == sorted([f.vocab["good"], f.vocab["food"],
                                                            _fasttext_bigram_row(f, "good", "food")])


def test_a_document_of_five_words_has_five_unigrams_and_four_bigrams():
    f = Featurizer.fit(DOCS, ngrams=2, buckets=1_000_003)
    bags = f.transform(["the food was good bad"])
    words = ["the", "food", "was", "good", "bad"]
    expected = {f.vocab[w]: 1 / 9 for w in words}
    expected.update({_fasttext_bigram_row(f, a, b): 1 / 9 for a, b in zip(words, words[1:])})
    assert len(expected) == 9  # no collisions in a million buckets
    assert dict(zip(bags.rows.tolist(), bags.weights.tolist())) == pytest.approx(expected)
    # trigrams add three more features: every weight becomes 1/12
    tri = Featurizer.fit(DOCS, ngrams=3, buckets=1_000_003).transform(["the food was good bad"])
    assert len(tri.rows) == 12 and np.allclose(tri.weights, 1 / 12)


def test_batch_maker_builds_consistent_compact_csr_and_transpose():
    f, bags = Featurizer.fit(DOCS * 3, ngrams=2, buckets=100, return_bags=True)
    labels = np.arange(len(bags)) % 2
    maker = BatchMaker(bags, labels, f.num_rows)
    docs = np.array([5, 0, 7, 2])
    b = maker.make(docs)
    dense = np.zeros((b.size, len(b.rows)))
    for i in range(b.size):
        for j in range(b.offsets[i], b.offsets[i + 1]):
            dense[i, b.columns[j]] += b.weights[j]
    dense_t = np.zeros((len(b.rows), b.size))
    for r in range(len(b.rows)):
        for j in range(b.t_offsets[r], b.t_offsets[r + 1]):
            dense_t[r, b.t_columns[j]] += b.t_weights[j]
    np.testing.assert_allclose(dense, dense_t.T)
    # columns map back to the documents' own rows
    for i, d in enumerate(docs):
        own = dict(zip(bags.rows[bags.offsets[d]:bags.offsets[d + 1]], bags.weights[bags.offsets[d]:bags.offsets[d + 1]]))
        got = {int(b.rows[c]): dense[i, c] for c in np.flatnonzero(dense[i])}
        assert got == {int(k): v for k, v in own.items()}
    assert list(b.labels) == list(labels[docs])
    assert list(b.rows) == sorted(set(b.rows))


def test_batch_maker_sorts_small_batches_and_scans_large_ones_to_the_same_arrays():
    f, bags = Featurizer.fit(DOCS * 3, ngrams=2, buckets=100, return_bags=True)
    labels = np.arange(len(bags)) % 2
    docs = np.array([5, 0, 7, 2, 5])
    small_table = BatchMaker(bags, labels, f.num_rows).make(docs)  # nnz * 256 >= rows: the row-mask scan
    large_table = BatchMaker(bags, labels, f.num_rows + 10**6).make(docs)  # np.unique
    for name in ("rows", "columns", "offsets", "weights", "entry_rows", "t_offsets", "t_columns", "t_weights"):
        a, b = getattr(small_table, name), getattr(large_table, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name


def test_dense_recipe_timing_runs_and_reports():
    from fasttext_lib.baseline import time_dense_recipe

    f, bags = Featurizer.fit(DOCS * 30, return_bags=True)
    result = time_dense_recipe(bags, np.arange(len(bags)) % 2, f.num_rows, emsize=8, batches=3, warmup=1)
    assert result["batches"] == 3 and result["docs_per_s"] > 0


def test_encoding_in_chunks_gives_the_same_bags(monkeypatch):
    """Large corpora are encoded a few million tokens at a time; the result must not depend on it."""
    from fasttext_lib.synthetic import generate_reviews

    texts = generate_reviews(600, seed=1).texts + ["", "  "]
    featurizer, whole = Featurizer.fit(texts, ngrams=3, buckets=5000, return_bags=True)
    monkeypatch.setattr(Featurizer, "CHUNK_TOKENS", 500)
    refit, chunked = Featurizer.fit(texts, ngrams=3, buckets=5000, return_bags=True)
    for bags in (chunked, refit.transform(texts)):
        for name in ("rows", "weights", "offsets"):
            np.testing.assert_array_equal(getattr(bags, name), getattr(whole, name), err_msg=name)
    assert len(refit.transform([])) == 0 and refit.transform([]).nnz == 0


@pytest.mark.parametrize("native", ["1", "0"])
def test_label_words_are_no_feature_in_training_as_in_prediction(monkeypatch, native):
    """predict skips a ``__label__`` word (fastText's predict does; predict.without_labels), and training skipped it
    only in fastText-format files: a CSV, TSV or JSON text holding one (a column of fastText lines, ``__label__2 great
    food``) trained the word (the class itself, leaked into the text) into the vocabulary, and predict never
    looked it up: the model leaned on a feature its predictions never had."""
    monkeypatch.setenv("FASTTEXT_LIB_NATIVE", native)
    texts = ["__label__2 good food", "bad __label__1 food", "__label__1\u3000bad\u00a0__label__9"]
    f, bags = Featurizer.fit(texts, ngrams=2, buckets=100, return_bags=True)
    assert not [t for t in f.vocab.idx_to_token if "label" in t]
    without = ["good food", "bad food", "bad"]
    for got, want in ((bags, f.transform(without)), (f.transform(texts), f.transform(without))):
        np.testing.assert_array_equal(got.rows, want.rows)
        np.testing.assert_array_equal(got.weights, want.weights)
        np.testing.assert_array_equal(got.offsets, want.offsets)
    # an upper-case __LABEL__ word is no label in either (fastText's case): a word, lowercased like any other
    assert "__label__x" in Featurizer.fit(["__LABEL__x good"]).vocab.token_to_idx
