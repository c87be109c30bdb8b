"""Native featurization (fasttext_lib/featurize.cc) against the pure-Python reference, bit for bit.

The reference is always computed with ``FASTTEXT_LIB_NATIVE=0`` (text.tokenize and the
Featurizer's Python loops); the native side is the Featurizer itself with the library available,
asserted to have gone through native_features.
"""
import os
import subprocess
import sys
import zlib
from collections import Counter

import numpy as np
import pytest

from conftest import assert_rebuilt_for_other_flags, random_texts_of_line_break_pieces, synthetic_reviews
from fasttext_lib import bag_ops, native_build
from fasttext_lib import native_features as nf
from fasttext_lib.data import read_labeled
from fasttext_lib.features import UNK, Featurizer
from fasttext_lib.text import FORMED_BREAKS, NFC_TOKENS, QUOTES_AND_BREAKS, UNICODE_FORMS, tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# CI checks the shared data out beside the repository; FASTTEXT_LIB_SHARED points elsewhere (a worktree).
REAL = os.path.join(os.environ.get("FASTTEXT_LIB_SHARED") or os.path.join(ROOT, "..", "shared"), "data", "real")

HOSTILE = [
    "",
    "   \t\n  ",
    "...",
    "!?!?(),.'",
    '"";;::<br /><br />',
    "Don't STOP!!! <br />Never;ever:\"quote\"",
    "<br \"/>joined by a dropped quote, <b\"r /> too; <br/> and <br> are breaks (in older forms words)",
    "It’s “great”, isn’t it? „Gut“ «bien» ‘ok’ ‚so‛ ‟yes” donʼt don´t ′″ ＂＇",  # typographic quotes (text.APOSTROPHES)
    "wor“\u0301d x”\u0307 ’\u0301 <BR>a<br>b<br/>c<br<br>>d<br >e<b\"r>f<br\"/>g<br />h<br/<br />>“<br>”",
    "İstanbul İİ ß ẞ ǅ ﬁ ΣΑΣ ΟΔΟΣ. Σ aΣ Σa ΌΣ'Σ",  # lower() grows, final sigma
    "e\u0301 cafe\u0301 n\u0303 a\u0308\u0308\u0308",  # combining marks
    "ΆͅΙ ΤΡΌΛΪ́ ΉͅΣ wor\"\u0301d x\"\u0307 Ὰͅ Ώͅ Ϋ́",  # out of NFC once lowercased or once '"' is dropped
    "👍🏽 👨‍👩‍👧‍👦 ❤️ 🇫🇷🇩🇪 emoji",  # emoji, zero-width joiners, flags
    "שלום עולם, مرحبا بالعالم! \u202bembedded\u202c",  # right to left
    # variation selectors and bidirectional controls (text.MARKS): dropped, before an accent, a final sigma, a line
    # break; tag characters (England's flag) and joiners kept
    "☺\ufe0e ❤\ufe0f! שלום\u200f \u200eok\u200e \u061cمرحبا \u2066iso\u2069 \u202dx\u202e 葛\U000e0100城\U000e01ef "
    "cafe\u200f\u0301 ΟΔΟΣ\u200f ΑΣ\u200eΒ <br\u200f />x \ufe0f \u200f\u200e 🏴\U000e0067\U000e0062\U000e0065"
    "\U000e006e\U000e0067\U000e007f می\u200cخواهم",
    "a\u00a0b\u1680c\u2000d\u2005e\u200af\u2028g\u2029h\u202fi\u205fj\u3000k\x85l\x1cm\x1fn\x0bo\x0cp",  # split
    "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom \u180e mongolian",  # not whitespace for str.split
    "我喜欢这家餐厅。很好吃！日本語のテキスト、句読点。한국어 텍스트",  # CJK without spaces
    "tab\tnew\nline\r\ncr\rnul\x00inside \x00 \x7f del",
    "<unk> <UNK> unk",
    "ＡＢＣ ｆｕｌｌｗｉｄｔｈ！ Ⅻ ⓐⓑ",
    "x" * 5000 + " " + "y" * 3,
]


def _python_fit(texts, monkeypatch, **kwargs):
    with monkeypatch.context() as m:
        m.setenv(nf.ENV_SWITCH, "0")
        return Featurizer.fit(list(texts), return_bags=True, **kwargs)


def _python_transform(featurizer, texts, monkeypatch):
    with monkeypatch.context() as m:
        m.setenv(nf.ENV_SWITCH, "0")
        return featurizer.transform(list(texts))


def _native_fit(texts, min_count=1, ngrams=1, buckets=2_000_000):
    """Featurizer.fit(return_bags=True) with native featurization (asserted to be the route taken)."""
    calls = []
    with pytest.MonkeyPatch.context() as m:
        for name in ("count_tokens", "encode_ids"):
            original = getattr(nf, name)
            m.setattr(nf, name, lambda *a, _f=original, _n=name, **k: calls.append(_n) or _f(*a, **k))
        featurizer, bags = Featurizer.fit(texts, min_count=min_count, ngrams=ngrams, buckets=buckets, return_bags=True)
    assert calls == ["count_tokens", "encode_ids"]
    return featurizer, (bags.rows, bags.weights, bags.offsets)


def _native_transform(featurizer, texts):
    calls = []
    with pytest.MonkeyPatch.context() as m:
        m.setattr(nf, "encode_texts", lambda *a, _f=nf.encode_texts, **k: calls.append(1) or _f(*a, **k))
        bags = featurizer.transform(texts)
    assert calls == [1]
    return bags.rows, bags.weights, bags.offsets


def _assert_same_bags(native, reference):
    rows, weights, offsets = native
    assert rows.dtype == np.int32 and weights.dtype == np.float32 and offsets.dtype == np.int64
    np.testing.assert_array_equal(offsets, reference.offsets)
    np.testing.assert_array_equal(rows, reference.rows)
    assert weights.tobytes() == reference.weights.tobytes()  # bit for bit, not merely close


def _assert_same_tokens(texts):
    from fasttext_lib.features import pack_ids

    counted = nf.count_tokens(texts)
    codes, ends = pack_ids(counted.ids, counted.lengths)  # the packed ids are exactly the reference's
    assert counted.codes.dtype == np.uint8 and counted.codes.tobytes() == codes.tobytes()
    np.testing.assert_array_equal(counted.starts, np.concatenate([[0], ends]))
    per_doc = np.split(counted.ids, np.cumsum(counted.lengths)[:-1]) if len(texts) else []
    assert [[counted.words[i] for i in ids] for ids in per_doc] == [tokenize(t) for t in texts]
    first_seen = list(dict.fromkeys(t for text in texts for t in tokenize(text)))
    assert counted.words == first_seen
    flat = [t for text in texts for t in tokenize(text)]
    frequency = Counter(flat)
    assert counted.counts.tolist() == [frequency[w] for w in first_seen]
    assert counted.hashes.tolist() == [zlib.crc32(w.encode("utf-8")) for w in first_seen]
    return counted


def _check_corpus(train_texts, test_texts, monkeypatch, **settings):
    featurizer, reference = _python_fit(train_texts, monkeypatch, **settings)
    native_featurizer, native = _native_fit(train_texts, **settings)
    assert native_featurizer.vocab.idx_to_token == featurizer.vocab.idx_to_token
    _assert_same_bags(native, reference)
    _assert_same_bags(_native_transform(featurizer, test_texts), _python_transform(featurizer, test_texts, monkeypatch))


@pytest.fixture(scope="module", autouse=True)
def native():
    ok, why = nf.status()
    assert ok, f"native featurization must build and load on this machine (CI has g++): {why}"


def test_every_code_point_tokenizes_as_python_does():
    # Each code point between two letters, and alone between spaces: whitespace, punctuation and
    # case mapping of the whole of Unicode (surrogates cannot reach us from decoded UTF-8).
    points = [c for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    docs = [" ".join(f"a{chr(c)}b {chr(c)}" for c in points[i:i + 2000]) for i in range(0, len(points), 2000)]
    counted = nf.count_tokens(docs)
    words = np.array(counted.words, dtype=object)
    for doc, ids in zip(docs, np.split(counted.ids, np.cumsum(counted.lengths)[:-1])):
        assert words[ids].tolist() == tokenize(doc)
    assert all(nf.tokenize(f"a{chr(c)}b") == tokenize(f"a{chr(c)}b") for c in range(0x3001))


def test_hostile_unicode_tokens_and_bags(monkeypatch):
    _assert_same_tokens(HOSTILE)
    for text in HOSTILE:
        assert nf.tokenize(text) == tokenize(text), repr(text)
    for ngrams in (1, 2, 3):
        _check_corpus(HOSTILE, HOSTILE[::-1] + ["never seen ΣΣ", ""], monkeypatch, ngrams=ngrams, buckets=97)


def test_hostile_documents_without_a_nul_tokenize_as_python_does():
    # (a document holding a NUL sends its whole chunk the per-document route: these go the joined one)
    _assert_same_tokens([text for text in HOSTILE if "\x00" not in text])


def test_documents_never_share_case_context():
    # A final sigma is decided by its neighbours: a document ending in a letter before one
    # starting with Σ must lowercase as if alone (the chunk is lowercased in one call).
    docs = ["aΣ", "Σa", "a", "Σ", "ΣΣ", "bΣ\x00", "\x00Σb", "Σ"]
    _assert_same_tokens(docs)
    _assert_same_tokens(docs[:5])  # without the NUL documents: the one-lower() path


def test_empty_and_punctuation_only_documents(monkeypatch):
    docs = ["", ".", "", "!!!", ",,,(((", "\"\"\"", ";:;", "<br />", "", "a", ""]
    _assert_same_tokens(docs)
    for ngrams in (1, 2, 3):
        _check_corpus(docs, docs, monkeypatch, ngrams=ngrams, buckets=11)
    rows, weights, offsets = _native_transform(_native_fit(["x"])[0], ["", ""])
    assert rows.tolist() == [0, 0] and weights.tolist() == [1.0, 1.0] and offsets.tolist() == [0, 1, 2]


def test_very_long_documents(monkeypatch):
    data = synthetic_reviews(40, seed=3)
    long_doc = " ".join(data.texts) * 20  # ~100k tokens in one document
    docs = [long_doc, "short one", long_doc.upper(), ""]
    _assert_same_tokens(docs)
    _check_corpus(docs, docs[::-1], monkeypatch, ngrams=3, buckets=2_000_000)


@pytest.mark.parametrize("ngrams,buckets,min_count", [(1, 2_000_000, 1), (2, 2_000_000, 1), (2, 50, 1),
                                                      (3, 2_000_000, 3), (3, 7, 2), (2, 2_000_000, 5)])
def test_synthetic_corpus(monkeypatch, ngrams, buckets, min_count):
    data = synthetic_reviews(1500, seed=11)
    _check_corpus(data.texts[:1200], data.texts[1200:], monkeypatch, ngrams=ngrams, buckets=buckets,
                  min_count=min_count)


def test_unknown_words_still_form_ngrams(monkeypatch):
    # min_count drops both rare words: they share <unk>'s row but not their bigram rows.
    featurizer, _ = _native_fit(["common common rare1", "common common rare2"], min_count=2, ngrams=2)
    rows, _, offsets = _native_transform(featurizer, ["common rare1", "common rare2"])
    first, second = rows[offsets[0]:offsets[1]], rows[offsets[1]:offsets[2]]
    assert featurizer.unk_id in first and featurizer.unk_id in second
    assert set(first) != set(second)
    _assert_same_bags((rows, _, offsets), _python_transform(featurizer, ["common rare1", "common rare2"], monkeypatch))


@pytest.mark.parametrize("name", ["amazon_snippets", "drug_reviews", "nyt_editorials"])
def test_real_english_sets(monkeypatch, name):
    train = read_labeled(os.path.join(REAL, f"{name}_train.csv"))  # must exist: CI has ../shared
    test = read_labeled(os.path.join(REAL, f"{name}_test.csv"))
    _assert_same_tokens(train.texts)
    _check_corpus(train.texts, test.texts, monkeypatch, ngrams=2, buckets=2_000_000, min_count=2)
    _check_corpus(train.texts, test.texts, monkeypatch, ngrams=3, buckets=1000)


def test_decomposed_accents_give_the_precomposed_tokens_natively_and_in_python(monkeypatch):
    # NFD text (e + U+0301 for é) is put in NFC before it is lowercased, by text.normalize_text and by the native
    # route's chunks alike: the same word one token however its accents are encoded, in both, bit for bit
    import unicodedata

    real = read_labeled(os.path.join(REAL, "drug_reviews_test.csv")).texts[:200]
    accented = ["Café crème brûlée, très bien", "Ñandú Ångström Ελλάδα 한국어", "naïve résumé ÉLAN"]
    nfd = [unicodedata.normalize("NFD", t) for t in accented + real]
    assert any(a != b for a, b in zip(nfd, accented))
    for doc in nfd + [d + "\x00Σ" for d in nfd[:3]]:  # (a NUL document: the chunk's per-document route)
        assert nf.tokenize(doc) == tokenize(doc) == tokenize(unicodedata.normalize("NFC", doc))
    counted = _assert_same_tokens(nfd + ["e\u0301\x00", "\u0301 alone", "cafe\u0301"])
    assert "é\x00" in counted.words and "e\u0301" not in " ".join(counted.words)
    assert "café" in counted.words and "cafe\u0301" not in counted.words
    featurizer, _ = _python_fit(accented + real, monkeypatch, ngrams=2, buckets=1000)
    _check_corpus(nfd, accented + real, monkeypatch, ngrams=2, buckets=1000)
    # a model fit on NFC text reads the NFD spelling as the same words
    _assert_same_bags(_native_transform(featurizer, nfd), _python_transform(featurizer, accented + real, monkeypatch))


@pytest.mark.parametrize("form", UNICODE_FORMS)
def test_each_bundles_unicode_form_reads_text_natively_as_in_python(monkeypatch, form):
    # a bundle's text is read with the Unicode form it records (text.UNICODE_FORMS), by both routes alike
    import gluonnlp

    docs = ["ΆͅΙ ΤΡΌΛΪ́ ΉͅΣ", 'wor"\u0301d x"\u0307', "cafe\u0301 Café", "Ὰͅ Ώͅ Ϋ́\x00ΆͅΙ", "plain text",
            "don’t “great”<br>wor“\u0301d", "great<br/>really<br>", "great<br\t/>food, a<br<br>/>b",
            "loved it ❤️ שלום\u200f cafe\u200e\u0301"]
    trained = gluonnlp.data.Counter(t for doc in docs for t in tokenize(doc, form))
    vocab = gluonnlp.Vocab(trained, unknown_token=UNK, padding_token=None, bos_token=None, eos_token=None)
    featurizer = Featurizer(vocab, ngrams=2, buckets=97, unicode_form=form)
    for some in (docs, [doc for doc in docs if "\x00" not in doc]):  # (a NUL document: the per-document route)
        python = _python_transform(featurizer, some, monkeypatch)
        _assert_same_bags(_native_transform(featurizer, some), python)
        assert featurizer.unk_id not in python.rows  # every word found: read with the form it was trained with
    forms = [[tokenize(doc, f) for doc in docs] for f in UNICODE_FORMS]
    assert len({repr(tokens) for tokens in forms}) == len(UNICODE_FORMS)  # (they all differ on these documents)


def test_shared_real_sets_and_the_sample_are_nfc_already():
    # NFC changes no line of them: their tokens, the notebooks' outputs and the benchmarks' numbers are as before
    import glob
    import unicodedata

    sample = os.path.join(ROOT, "fasttext_lib", "sample_data")
    files = sorted(glob.glob(os.path.join(REAL, "*.csv")) + glob.glob(os.path.join(sample, "*.csv")))
    assert len(files) >= 8
    for path in files:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        assert all(unicodedata.is_normalized("NFC", line) for line in lines), path
        # and lowercased they are still NFC: putting them in NFC again (text.NFC_TOKENS) changes no token either
        assert all(tokenize(line, "NFC") == tokenize(line, NFC_TOKENS) for line in lines), path
        # nor does reading typographic quotes as ASCII ones, but in the drug reviews' lines that have ’ or “ ” (the
        # built-in sample, the notebooks' data, has none: their outputs are as before), and none has <br> or <br/>;
        # nor dropping invisible characters, but in the drug reviews' lines with a zero-width space (sleepy\u200b,)
        # and none has a variation selector or a direction mark (text.MARKS): no token changes under it
        assert all(tokenize(line) == tokenize(line, FORMED_BREAKS) for line in lines), path
        changed = [line for line in lines if tokenize(line) != tokenize(line, NFC_TOKENS)]
        assert changed == [line for line in lines if any(q in line for q in "’“”\u200b\ufeff\u00ad\u2060")], path
        assert not changed or os.path.basename(path).startswith("drug_reviews"), path


@pytest.mark.parametrize("form", UNICODE_FORMS)
def test_typographic_quotes_and_line_breaks_count_natively_as_in_python(form):
    # each form's quotes and <br> spellings, in C++ (line breaks: featurize.cc's line_break_width) as in Python, and
    # the line breaks its rules form (text.FORMED_BREAKS; featurize.cc's FormedBreaks), in random texts of their pieces
    docs = HOSTILE[-20:] + ["a<br>b", "<br/>", "x<br", "<br />", "<br>\x00<br/>", "’”", "<br\t/>x", "<br  />",
                            "a<br<br>/>b", "<br<br />/>/>/;;/>", "x<br<br<br\t/>/>/>y " * 3, "<br" * 999 + " />" * 1000]
    docs += random_texts_of_line_break_pieces(20_000, seed=1)
    docs += [" ".join(random_texts_of_line_break_pieces(40, seed=seed)) for seed in range(2, 500)]
    assert [nf.tokenize(doc, form) for doc in docs] == [tokenize(doc, form) for doc in docs]
    counted = nf.count_tokens(docs, form=form)
    per_doc = np.split(counted.ids, np.cumsum(counted.lengths)[:-1])
    assert [[counted.words[i] for i in ids] for ids in per_doc] == [tokenize(doc, form) for doc in docs]
    assert counted.form == form


def _assert_read_as(monkeypatch, route, fitted, other):
    """A featurizer fit on ``fitted`` encodes ``other`` (natively or in Python: ``route``) to ``fitted``'s bags,
    every word known."""
    featurizer = Featurizer.fit(fitted, ngrams=2, buckets=97)
    if route == "python":
        monkeypatch.setenv(nf.ENV_SWITCH, "0")
        got = featurizer.transform(other)
        got = got.rows, got.weights, got.offsets
    else:
        got = _native_transform(featurizer, other)
    _assert_same_bags(got, _python_transform(featurizer, fitted, monkeypatch))
    assert featurizer.unk_id not in got[0]


@pytest.mark.parametrize("route", ["native", "python"])
def test_a_model_fit_on_ascii_quotes_reads_typographic_ones_as_the_same_words(monkeypatch, route):
    # don’t was one unknown word and “great” an unknown one where the model knew don ' t and great
    _assert_read_as(monkeypatch, route, ["I don't like it", "\"great\" food<br />really", "it's 'fine'"],
                    ["I don’t like it", "“great” food<br>really", "it´s ‘fine’"])


@pytest.mark.parametrize("route", ["native", "python"])
def test_a_model_fit_on_plain_text_reads_invisible_characters_as_nothing(monkeypatch, route):
    # a byte order mark inside a line (Windows files joined with cat) made \ufeffgreat an unknown word where the model
    # knew great; a soft hyphen split nothing and joined nothing either, and a zero-width space is a space
    invisible = ["\ufeffgreat food\u2060", "inter\u00adnational flights", "good\u200bvalue"]
    _assert_read_as(monkeypatch, route, ["great food", "international flights", "good value"], invisible)
    assert [tokenize(t, QUOTES_AND_BREAKS) for t in invisible] == [["\ufeffgreat", "food\u2060"],
                                                                   ["inter\u00adnational", "flights"], ["good\u200bvalue"]]


@pytest.mark.parametrize("route", ["native", "python"])
def test_a_model_fit_on_plain_text_reads_variation_selectors_and_direction_marks_as_nothing(monkeypatch, route):
    # ❤️ (U+2764 U+FE0F) was an unknown word where the model knew ❤, and so was a Hebrew or Arabic word with a
    # direction mark (copied from a web page or a phone) where it knew the word
    marked = ["loved it ❤️", "שלום\u200f עולם", "\u202bمرحبا\u202c \u061cبالعالم", "葛\U000e0100城 \u2066x\u2069"]
    _assert_read_as(monkeypatch, route, ["loved it ❤", "שלום עולם", "مرحبا بالعالم", "葛城 x"], marked)
    assert [tokenize(t, FORMED_BREAKS) for t in marked[:2]] == [["loved", "it", "❤️"], ["שלום\u200f", "עולם"]]


def test_chunks_and_threads_change_nothing(monkeypatch):
    data = synthetic_reviews(600, seed=5)  # > 64k tokens: worth several threads
    texts = data.texts + HOSTILE
    monkeypatch.setattr(nf, "threads", lambda: 1)
    featurizer, whole = _native_fit(texts, ngrams=2, buckets=1000)
    one_thread = _native_transform(featurizer, texts)
    monkeypatch.setattr(nf, "threads", lambda: 3)
    monkeypatch.setattr(nf, "CHUNK_DOCS", 97)
    _, chunked = _native_fit(iter(texts), ngrams=2, buckets=1000)  # any iterable, not only lists
    for a, b in zip(whole + one_thread, chunked + _native_transform(featurizer, texts)):
        np.testing.assert_array_equal(a, b)
    _assert_same_bags(_native_transform(featurizer, iter(texts)), _python_transform(featurizer, texts, monkeypatch))


def test_crc32_is_zlib():
    rs = np.random.RandomState(0)
    for n in [0, 1, 3, 8, 9, 100, 4096]:
        raw = rs.randint(0, 256, n).astype(np.uint8).tobytes().decode("latin-1")
        assert nf.crc32(raw) == zlib.crc32(raw.encode("utf-8"))
    for word in HOSTILE:
        assert nf.crc32(word) == zlib.crc32(word.encode("utf-8"))


def test_bad_arguments_are_refused():
    featurizer, _ = _native_fit(["a b"], ngrams=2, buckets=10)
    with pytest.raises(ValueError):
        nf.encode_ids(np.array([0, 5], np.int32), np.array([2]), np.zeros(2), np.zeros(2), 2, 10, 3, 0)
    with pytest.raises(ValueError):
        nf.encode_ids(np.array([0, 1], np.int32), np.array([3]), np.zeros(2), np.zeros(2), 2, 10, 3, 0)
    with pytest.raises(ValueError):
        nf.encode_texts(["a"], nf.CodeTable(featurizer.vocab.idx_to_token), 2, 0, 3, 0)
    with pytest.raises(UnicodeEncodeError):  # as the Python path: a lone surrogate has no UTF-8 (no hash)
        nf.count_tokens(["bad \udc80 surrogate"])


def test_switched_off_uses_python_with_identical_results(monkeypatch):
    data = synthetic_reviews(200, seed=8)
    native_featurizer, native = _native_fit(data.texts, ngrams=2, buckets=5000)
    monkeypatch.setenv(nf.ENV_SWITCH, "0")
    assert nf.status() == (False, f"{nf.ENV_SWITCH}=0")
    with pytest.raises(RuntimeError, match="not available"):
        nf.count_tokens(["a"])
    assert not bag_ops.available()  # the master switch turns the operators off too
    featurizer, reference = Featurizer.fit(data.texts, ngrams=2, buckets=5000, return_bags=True)
    reference_transform = featurizer.transform(data.texts[:50])
    assert featurizer.vocab.idx_to_token == native_featurizer.vocab.idx_to_token
    _assert_same_bags(native, reference)
    monkeypatch.delenv(nf.ENV_SWITCH)
    assert nf.available()
    _assert_same_bags(_native_transform(native_featurizer, data.texts[:50]), reference_transform)


def test_without_a_compiler_python_is_used_with_one_warning(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FASTTEXT_LIB_CACHE", str(tmp_path))
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    monkeypatch.setattr(nf, "_state", {"lib": None, "tried": False, "reason": None})
    assert not nf.available() and not nf.available()
    err = capsys.readouterr().err
    assert err.count("native featurization unavailable") == 1 and "no-such-compiler" in err
    assert not nf.status()[0]
    assert not list(tmp_path.glob("*.so")) and not list(tmp_path.glob("*.tmp"))


def test_a_cache_that_cannot_be_written_is_named_with_how_to_choose_another(tmp_path, monkeypatch, capsys):
    """A HOME that is read-only or missing (here: the cache's folder would be under a file): the warning said only
    "[Errno 20] Not a directory: '.../.cache'", and every run went on without the native code, slower."""
    (tmp_path / "home").write_text("a file, not a folder")
    monkeypatch.setenv("FASTTEXT_LIB_CACHE", str(tmp_path / "home" / ".cache" / "fasttext_lib"))
    monkeypatch.setattr(nf, "_state", {"lib": None, "tried": False, "reason": None})
    assert not nf.available()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "native featurization unavailable (cannot write the build cache " in err
    assert "(Not a directory); set FASTTEXT_LIB_CACHE to a writable directory)" in err


def test_library_is_cached_and_rebuilt_only_when_its_inputs_change(tmp_path, monkeypatch):
    """The compiler is asked once for the library of these inputs, into the cache, and not again while they are
    unchanged. (A stand-in compiler that writes its output, as assert_rebuilt_for_other_flags has: a real compile into
    an empty cache took ~7 s and proves no more here; the autouse ``native`` fixture builds and loads the real one,
    compiled whenever the source or flags change, since both name it.)"""
    monkeypatch.setenv("FASTTEXT_LIB_CACHE", str(tmp_path))
    commands = []

    def compile_stand_in(cmd, **kwargs):
        commands.append(cmd)
        with open(cmd[cmd.index("-o") + 1], "wb") as f:
            f.write(b"compiled")
        return subprocess.CompletedProcess(cmd, 0, "")

    with monkeypatch.context() as m:
        m.setattr(native_build.subprocess, "run", compile_stand_in)
        first = nf.build()
        assert len(commands) == 1 and nf.SOURCE in commands[0] and commands[0][1:1 + len(nf.CXXFLAGS)] == nf.CXXFLAGS
        assert first.startswith(str(tmp_path)) and os.path.basename(first).startswith("libfasttext_featurize-")
        assert sorted(os.listdir(tmp_path)) == sorted([os.path.basename(first), os.path.basename(first) + ".lock"])
        mtime = os.path.getmtime(first)
        assert nf.build() == first and os.path.getmtime(first) == mtime and len(commands) == 1  # cached: no compile
    assert_rebuilt_for_other_flags(nf, first, monkeypatch)
    assert native_build.cache_dir() == str(tmp_path)


@pytest.mark.parametrize("ngrams,buckets", [(1, 2_000_000), (2, 2_000_000), (3, 53)])
def test_token_bags_encode_any_documents_as_the_stored_bags(monkeypatch, ngrams, buckets):
    # Training keeps token ids and encodes each batch's bags on the fly (features.TokenBags):
    # every selection, native or Python, equals the same documents of the fully encoded corpus.
    texts = synthetic_reviews(700, seed=12).texts + HOSTILE
    featurizer, stored = _python_fit(texts, monkeypatch, ngrams=ngrams, buckets=buckets, min_count=2)
    _, tokens = Featurizer.fit(texts, ngrams=ngrams, buckets=buckets, min_count=2, return_bags="tokens")
    assert len(tokens) == len(stored)
    rng = np.random.RandomState(0)
    selections = [rng.permutation(len(texts)), rng.permutation(len(texts))[:37], np.array([5, 5, 0]),
                  np.array([len(texts) - 1]), np.array([], dtype=np.int64)]
    for docs in selections:
        expected = stored.select(docs)
        _assert_same_bags(*[(b.rows, b.weights, b.offsets) for b in [tokens.select(docs)]], expected)
        with monkeypatch.context() as m:
            m.setenv(nf.ENV_SWITCH, "0")
            python = tokens.select(docs)
        _assert_same_bags((python.rows, python.weights, python.offsets), expected)
    whole = tokens.encode_all()
    _assert_same_bags((whole.rows, whole.weights, whole.offsets), stored)


@pytest.mark.parametrize("chunk_tokens", [1, 3, 1000])
def test_packed_token_ids_unpack_exactly_natively_and_in_python(chunk_tokens):
    # Counting keeps every token id as a LEB128 varint (features.pack_ids is the reference); training's
    # TokenBags and TokenCounts.ids read them back.
    from fasttext_lib.features import pack_ids
    from fasttext_lib.native_features import unpack_ids

    rng = np.random.RandomState(3)
    words = 300_000  # ids of 1, 2 and 3 bytes
    rank = rng.permutation(words).astype(np.int32)
    rank[:6] = [0, 127, 128, 16_383, 16_384, 2_097_152 - 1]
    lengths = np.array([0, 0, 5, 0, 1, 7, 0, 0, 12, 3, 0], dtype=np.int64)  # empty first, inside and last
    ids = rng.randint(0, words, size=int(lengths.sum())).astype(np.int32)
    ids[:6] = np.arange(6)
    codes, ends = pack_ids(rank[ids], lengths, chunk_tokens=chunk_tokens)
    whole_codes, whole_ends = pack_ids(rank[ids], lengths)
    assert codes.dtype == np.uint8 and codes.tobytes() == whole_codes.tobytes()
    np.testing.assert_array_equal(ends, whole_ends)
    np.testing.assert_array_equal(unpack_ids(codes), rank[ids])
    counted = nf.TokenCounts([], np.zeros(0, np.int64), np.zeros(0, np.int64), codes,
                             np.concatenate([[0], ends]), lengths)
    assert counted.ids.dtype == np.int32
    np.testing.assert_array_equal(counted.ids, rank[ids])  # natively unpacked
    starts, token_starts = counted.starts, np.concatenate([[0], np.cumsum(lengths)])
    for d in range(len(lengths)):  # each document's bytes hold exactly its tokens
        np.testing.assert_array_equal(unpack_ids(codes[starts[d]:starts[d + 1]]),
                                      rank[ids[token_starts[d]:token_starts[d + 1]]])
    assert [len(pack_ids(np.array([v], np.int64), np.array([1]))[0])
            for v in (0, 127, 128, 16_383, 16_384, 2**21 - 1, 2**21, 2**28)] == [1, 1, 2, 2, 3, 3, 4, 5]


@pytest.mark.parametrize("spill_route", ["native", "python"])
def test_token_ids_kept_in_a_file_select_the_same_bags(monkeypatch, spill_route):
    # data.read_counted keeps the packed ids in an unlinked temporary file (nf.CodesFile), written a
    # 1 MiB block at a time while counting, and TokenBags reads each batch's documents back: the same
    # codes, and the same bags for any selection, as with the ids in memory. ~2.6 MB of codes (ids
    # up to 3 bytes), so several full blocks are spilled between chunks, then the partial last one.
    import dataclasses

    rng = np.random.RandomState(5)
    texts = [" ".join(f"w{v}" for v in rng.randint(0, 60_000, size=rng.randint(0, 400))) for _ in range(4000)]
    texts[7] = ""
    monkeypatch.setattr(nf, "CHUNK_DOCS", 500)
    in_memory = Featurizer.fit(texts, ngrams=2, buckets=5000, return_bags="tokens")[1]
    with monkeypatch.context() as m:
        if spill_route == "python":
            m.setenv(nf.ENV_SWITCH, "0")
        from fasttext_lib.features import count_tokens

        counted = count_tokens(texts, to_file=True)
    assert isinstance(counted.codes, nf.CodesFile) and len(counted.codes) == len(in_memory.codes) > 2 * 2**20
    assert counted.codes.read_all().tobytes() == in_memory.codes.tobytes()
    np.testing.assert_array_equal(counted.starts, in_memory.starts)
    from_file = dataclasses.replace(in_memory, codes=counted.codes)
    for docs in [rng.permutation(len(texts))[:1024], np.array([7, 7, 0, len(texts) - 1]), np.array([], dtype=np.int64)]:
        expected = in_memory.select(docs)
        got = from_file.select(docs)
        _assert_same_bags((got.rows, got.weights, got.offsets), expected)
        with monkeypatch.context() as m:
            m.setenv(nf.ENV_SWITCH, "0")
            python = from_file.select(docs)
        _assert_same_bags((python.rows, python.weights, python.offsets), expected)


THREADS_WITHOUT_ROOM = """
import ctypes, resource
import numpy as np
from fasttext_lib import native_features as nf
from fasttext_lib.features import Featurizer
from fasttext_lib.synthetic import generate_reviews

texts = generate_reviews(800, seed=3).texts  # > 64k tokens, and > 2^20 values below: each call would split its work
featurizer = Featurizer.fit(texts)
table = np.random.RandomState(0).rand(featurizer.num_rows, 64).astype(np.float32)
seed_rows = np.arange(20000)
outs = [np.empty((len(texts), 64), np.float32), np.empty((len(seed_rows), 64), np.float32)]

def calls(threads):
    nf.threads = lambda: threads
    bags = featurizer.transform(texts)  # (native: encode_texts)
    means = nf.bag_mean(table, bags.rows, bags.weights, bags.offsets, out=outs[0]).copy()
    initial = nf.uniform_rows(7, seed_rows, 64, 0.5, outs[1])
    return [bags.rows, bags.weights, bags.offsets, means, initial.copy(), nf.changed_rows(7, initial, 0.5)]

ctypes.CDLL(None).mallopt(-8, 1)  # one malloc arena (M_ARENA_MAX), as the CLI has under a ulimit -v
before = calls(1)  # (no thread started: none of their stacks is cached for later)
with open("/proc/self/status") as f:
    mapped = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (mapped + (6 << 20), resource.RLIM_INFINITY))  # no room for a thread's stack
after = calls(4)
resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))  # room to compare
assert all(np.array_equal(a, b) for a, b in zip(before, after))
print("same", flush=True)
"""


def test_a_thread_that_cannot_start_does_its_work_in_the_caller():
    """Under a ``ulimit -v`` with no room left for a thread's stack, ``std::thread`` throws, and a pool that still
    held started threads was ``std::terminate``: predict aborted (exit 134, "Resource temporarily unavailable") at
    670 MB, above the limit it is refused under. A part whose thread cannot start now runs in the calling thread,
    with the same result. (The 6 MB of room also holds only because an encoder no longer reserves two 4 MB blocks
    for its first bags: four parts took 32 MB.)"""
    r = subprocess.run([sys.executable, "-c", THREADS_WITHOUT_ROOM], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert (r.returncode, r.stdout) == (0, "same\n"), r.stderr[-2000:]


@pytest.mark.parametrize("piece", [1, 2, 3, 7, 1000])
@pytest.mark.parametrize("ngrams,buckets", [(1, 2_000_000), (2, 2_000_000), (3, 53), (4, 11)])
def test_long_documents_folded_a_piece_at_a_time_give_the_same_bags(monkeypatch, piece, ngrams, buckets):
    """A long document's words are folded into its bag a piece at a time (featurize.cc's Encoder::fold_piece), so
    that its features are never all held: 8 bytes a word unigrams, 20 bigrams (a 62 MB review peaked at ~1.4 GB in
    predict). Its counts are whole numbers, so the bags are the reference's bit for bit, whatever the piece: n-grams
    across two pieces (and across several short ones) counted once, and a document of exactly a piece's words,
    predicted (encode_texts), trained on (encode_ids) and selected in training's batches (encode_selected)."""
    texts = synthetic_reviews(60, seed=5).texts + HOSTILE + [" ".join(synthetic_reviews(30, seed=6).texts),
                                                            "a b", "a b c", "a", "", "x y z w v u"]
    featurizer, reference = _python_fit(texts, monkeypatch, ngrams=ngrams, buckets=buckets, min_count=2)
    _, tokens = Featurizer.fit(texts, ngrams=ngrams, buckets=buckets, min_count=2, return_bags="tokens")
    with nf.piece_words(piece):
        _assert_same_bags(_native_transform(featurizer, texts), _python_transform(featurizer, texts, monkeypatch))
        _, native = _native_fit(texts, min_count=2, ngrams=ngrams, buckets=buckets)
        _assert_same_bags(native, reference)
        selected = tokens.select(np.arange(len(texts))[::-1])
        _assert_same_bags((selected.rows, selected.weights, selected.offsets), reference.select(np.arange(len(texts))[::-1]))


@pytest.mark.parametrize("piece_chars", [1, 3, 16])
def test_long_documents_lowercased_a_piece_at_a_time_give_the_same_tokens_and_bags(monkeypatch, piece_chars):
    """A document longer than native_features.PIECE_CHARS is lowercased and encoded a piece at a time, each piece
    ending before a whitespace character (whole, its lowercased copy and its UTF-8 were both held beside it). Pieces
    of a few characters cut the hostile texts (final sigmas, combining accents, quotes dropped before an accent,
    line breaks with spaces inside, every kind of whitespace) everywhere they can be cut: the same tokens and bags,
    in every form a bundle may read text in, and a document of the Unicode reference's words shuffled."""
    # (arrays, not lists: RandomState.choice turns a list into one on every call, ~1 ms each; the same draws)
    words = np.array([chr(c) for c in range(0x20, 0x3000) if not chr(c).isspace() and chr(c).isprintable()], object)
    spaces = np.array(["", "", " ", "\u3000", "\u2028", "\t"], object)
    rng = np.random.RandomState(4)
    shuffled = "".join(rng.choice(words) + rng.choice(spaces) for _ in range(4000))
    texts = HOSTILE + [" ".join(HOSTILE), shuffled, "", "x"]
    monkeypatch.setattr(nf, "PIECE_CHARS", piece_chars)
    _assert_same_tokens(texts)
    vocab = _python_fit(texts, monkeypatch, ngrams=2, buckets=1000)[0].vocab  # (the same for every form: fitted once)
    for form in UNICODE_FORMS:
        featurizer = Featurizer(vocab, ngrams=2, buckets=1000, unicode_form=form)  # (as fit makes it, in that form)
        _assert_same_bags(_native_transform(featurizer, texts), _python_transform(featurizer, texts, monkeypatch))


# Documents side by side whose rules could meet across the NUL that joins them (a line break cut in two, a final sigma,
# an accent after a dropped quote, punctuation, empty and blank documents).
NEIGHBOURS = [["x<br", "/>y"], ["x<br", " />y"], ["x<br ", "/>y"], ["a<br<br", "/>/>b"], ["x<br", "", "/>y"],
              ["<br", "/>"], ["x<b", "r />"], ["a.", ".b"], ["", ""], ["", "a", ""], [" ", " "], ["ΟΔΟΣ", "Σ"],
              ["ΟΔΟΣ", "ΑΣ"], ['"', "\u0301"], ["e", "\u0301"], ["x\u200b", "\u200by"], ['"', '"'], ["\ufeff", "a"],
              ["e\u200f", "\u0301"], ["ΟΔΟΣ\u200f", "Σ"], ["\ufe0f", "\ufe0f"]]


def test_normalized_utf8_of_documents_together_is_each_ones_normalized_text():
    """native_features.normalized_utf8 (evaluate's fingerprints of the documents it scores with a refitted bundle,
    in one native pass) gives each document's text.normalize_text, whatever its neighbours; a document holding a
    NUL itself sends the chunk back to Python (None)."""
    from fasttext_lib.text import normalize_text

    texts = [t for t in HOSTILE if "\x00" not in t]
    for chunk in [texts, texts[::-1], *NEIGHBOURS, *([a, b] for a in texts for b in texts)]:
        assert nf.normalized_utf8(chunk) == [normalize_text(t).encode("utf-8") for t in chunk], chunk
    assert nf.normalized_utf8([]) == []
    assert nf.normalized_utf8(["a", "nul\x00inside"]) is None


def test_an_autotune_refit_check_fingerprints_a_chunk_natively_as_python_does_one_by_one(monkeypatch):
    """trained_on.TrainedOnCheck: evaluate of an autotune-refitted bundle fingerprinted every document it scored in
    Python (text.normalize_text, ~36 us for a 460-character review: evaluate took up to twice as long); a chunk is
    now read natively, with the same counts."""
    from fasttext_lib import trained_on
    from fasttext_lib.text import sampled_fingerprints

    texts = synthetic_reviews(300, seed=3).texts + HOSTILE
    record = sampled_fingerprints(texts[::2])
    one_by_one = trained_on.TrainedOnCheck(record)
    for text in texts:
        one_by_one.see(text)
    assert one_by_one.sampled > 20 and 0 < one_by_one.found < one_by_one.sampled
    monkeypatch.setattr(trained_on, "fingerprint", lambda text: pytest.fail("fingerprinted in Python"))
    together = trained_on.TrainedOnCheck(record)
    examples = [("1", text) for text in texts if "\x00" not in text]
    assert list(together.watch(examples, per_chunk=64)) == examples
    monkeypatch.undo()
    together.see_all([text for text in texts if "\x00" in text])  # (a NUL inside: read in Python)
    assert (together.sampled, together.found) == (one_by_one.sampled, one_by_one.found)


def test_the_mean_length_the_settings_come_from_is_counted_natively_as_python_counts_it(monkeypatch):
    """schedule.mean_tokens (train and autotune measure the first 10,000 documents for the lr: ~0.8 s in Python for
    Yelp-length text) counts natively (native_features.total_tokens) exactly the tokens text.tokenize gives: hostile
    texts, line breaks its rules form, a NUL inside (the chunk's per-document route), documents longer than a piece
    (lowercased a piece at a time), several chunks; the same float as the reference (FASTTEXT_LIB_NATIVE=0)."""
    from fasttext_lib import schedule

    long_doc = " ".join(HOSTILE) * 3
    texts = HOSTILE + random_texts_of_line_break_pieces(2_000, seed=7) + synthetic_reviews(300, seed=8).texts
    texts += [long_doc, "", long_doc.upper(), "<br" * 99 + " />" * 100]
    corpora = [texts, [t for t in HOSTILE if "\x00" not in t], [""], ["nul\x00inside"], []]
    monkeypatch.setattr(nf, "CHUNK_DOCS", 97)
    for piece_chars in (nf.PIECE_CHARS, 16):
        monkeypatch.setattr(nf, "PIECE_CHARS", piece_chars)
        for corpus in corpora:
            expected = sum(len(tokenize(t)) for t in corpus)
            assert nf.total_tokens(corpus) == expected
            assert nf.total_tokens(iter(corpus)) == expected
            calls = []
            with monkeypatch.context() as m:
                m.setattr(nf, "total_tokens", lambda *a, _f=nf.total_tokens, **k: calls.append(1) or _f(*a, **k))
                native = schedule.mean_tokens(corpus)
            assert calls == [1]
            with monkeypatch.context() as m:
                m.setenv(nf.ENV_SWITCH, "0")
                m.setattr(nf, "total_tokens", lambda *a, **k: pytest.fail("counted natively with the switch off"))
                reference = schedule.mean_tokens(corpus)
            assert native == reference == expected / max(1, len(corpus))
            assert type(native) is float
