"""A trained model's word vectors: extracted, exported as a ``.vec`` file, and queried (notebook 04).

* :func:`word_vectors` / :func:`export_vectors`: a trained model's word rows (its vocabulary, ``<unk>``
  included; never the n-gram buckets) as :class:`~fasttext_lib.vec_files.WordVectors` or a ``.vec`` file
  (``python -m fasttext_lib export-vectors``), written atomically (vec_files.write_vec), never over a file of the
  bundle they come from.
* :func:`token_embedding` and :func:`cos_similarity`: the learned vectors as a GluonNLP
  ``TokenEmbedding``, and the cosine-similarity helper of the original project's README;
  :func:`strongest_words` and :func:`neighbours` rank words, :func:`vocabulary_words` / :func:`vocabulary_pairs`
  keep the query words the model holds.
"""
import collections.abc
import math

import numpy as np

from . import storage
from .errors import FastTextError, check_positive_int, check_word_list, check_word_pair_list, refuse_standard_output
from .features import UNK
from .text import TRAINING_FORM, nfc
from .vec_files import WordVectors, check_vec_output, write_vec


# ---------------------------------------------------------------- the learned vectors

def word_vectors(model):
    """A trained model's word vectors (:class:`WordVectors`): its vocabulary, in vocabulary order, with
    ``<unk>``; not the n-gram buckets. ``model``: a :class:`~fasttext_lib.predict.Predictor`, a
    :class:`~fasttext_lib.train.TrainedModel`, or a bundle location (local or ``s3://``)."""
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        from .predict import Predictor

        model = Predictor.load(str(model))
    if not hasattr(model, "featurizer"):  # (None was "'NoneType' object has no attribute 'featurizer'", a traceback)
        raise FastTextError(f"word_vectors needs a Predictor, a TrainedModel or a bundle's location, got "
                            f"{type(model).__name__}")
    if hasattr(model, "vocabulary_rows"):  # a Predictor: a compact bundle's vocabulary rows without its whole table
        tokens, table = model.vocabulary_rows()
    else:
        tokens = list(model.featurizer.vocab.idx_to_token)
        table = model.model.embedding_rows(len(tokens))  # (not the whole table copied: its n-gram buckets too)
    return WordVectors(tokens, np.ascontiguousarray(table[:len(tokens)]),
                       unicode_form=getattr(model.featurizer, "unicode_form", TRAINING_FORM))


def _refuse_a_file_of_the_bundle(uri, location, config):
    """``--overwrite`` is for the user's old output, never a file of the bundle being exported: a .vec
    written over its config.json or params would destroy the model it was read from."""
    from .bundle import refuse_a_file_of, stored_names

    refuse_a_file_of(uri, location, stored_names(config), "write the vectors elsewhere")


def _refuse_the_bundle_itself(uri, location):
    """An output named as the bundle is (``s3://b/model`` of the bundle ``s3://b/model/``) is refused, as a local
    bundle's directory is: on S3 it became an object ``model`` beside the bundle's prefix ``model/``."""
    if storage.same_location(str(uri).rstrip("/"), str(location).rstrip("/")):
        raise FastTextError(f"{uri} is the model bundle itself; give a file name such as "
                            f"{storage.join(str(location).rstrip('/'), 'vectors.vec')}")


def _refuse_a_file_of_its_bundle_first(uri, model, given):
    """A file of the bundle being exported named as such (:func:`_refuse_a_file_of_the_bundle`) before the output's
    checks, which refuse a file of any bundle in general terms (storage.check_output_file). ``given``: ``model`` is
    the bundle's location, whose config.json is read only where ``uri`` lies in it; one that cannot be read is said
    so by the model's load, after the output's checks."""
    if not given:
        _refuse_a_file_of_the_bundle(uri, model.source, model.config)
        return
    from .bundle_format import CONFIG

    if storage.within(uri, str(model)):
        try:
            config = storage.read_manifest(str(model), CONFIG)
        except FastTextError:
            return
        _refuse_a_file_of_the_bundle(uri, str(model), config)


def export_vectors(model, uri, overwrite=False, on_written=None, overwrite_as=None, beside=None):
    """Write ``model``'s word vectors (see :func:`word_vectors`) to ``uri`` as a ``.vec`` file; returns
    the number of words written. The output is checked before the model is loaded, and must not be
    one of the bundle's own files (even with ``overwrite``), nor one of the bundle a
    :class:`~fasttext_lib.predict.Predictor` was loaded from (``overwrite=True`` wrote over its config.json).
    ``on_written``, ``beside``: as :func:`write_vec`'s; ``overwrite_as``: how a refusal of an existing ``uri`` says to
    replace it (None: this argument, ``overwrite=True``; the command line passes its flag). ``~`` in ``uri`` or
    ``model`` (a bundle's path): the home folder."""
    uri, model = storage.expand_home(uri), storage.expand_home(model)
    refuse_standard_output(uri, "uri", "the word vectors", "a file")  # (before the model is loaded)
    given = isinstance(model, str) or hasattr(model, "__fspath__")
    if given or getattr(model, "source", None):  # (before the folder check: the bundle's folder is named as such)
        _refuse_the_bundle_itself(uri, str(model) if given else model.source)
        _refuse_a_file_of_its_bundle_first(uri, model, given)
    overwrite_as = overwrite_as or storage.OVERWRITE_ARGUMENT
    check_vec_output(uri, overwrite, overwrite_as)
    if given:
        from .compact import COMPACT_ARGUMENT, COMPACT_FLAG
        from .predict import Predictor

        # (a bundle too large to load is told how to make a compact one as this caller's user does: its flag, or not)
        model = Predictor.load(str(model), compact_as=COMPACT_FLAG if overwrite_as == storage.OVERWRITE_FLAG
                               else COMPACT_ARGUMENT)
    if getattr(model, "source", None):  # a Predictor loaded from a bundle (or just now): its files are no output
        _refuse_a_file_of_the_bundle(uri, model.source, model.config)
    vectors = word_vectors(model)
    write_vec(vectors, uri, overwrite=overwrite, on_written=on_written, overwrite_as=overwrite_as, beside=beside)
    return len(vectors)


# ---------------------------------------------------------------- similarity

def _check_word_vectors(vectors, what):
    """``vectors`` unchanged if they are :class:`WordVectors`, else one error saying what ``what`` takes: notebook 04's
    ``embedding`` (a TokenEmbedding) given for its ``learned``, or the Predictor itself, was an AttributeError
    traceback ('TokenEmbedding' object has no attribute 'index')."""
    if not isinstance(vectors, WordVectors):
        raise FastTextError(f"{what} takes word vectors (word_vectors(predictor), or read_vec of a .vec file), got a "
                            f"{type(vectors).__name__}")
    return vectors


def token_embedding(vectors, unknown_token="<unk>"):
    """A GluonNLP ``TokenEmbedding`` of :class:`WordVectors` (``embedding["great"]`` is an NDArray).

    Words it does not hold map to ``unknown_token``'s vector (zeros if the vectors have no such word),
    as in GluonNLP; :func:`cos_similarity` refuses them instead."""
    _check_word_vectors(vectors, "token_embedding")
    import gluonnlp
    import mxnet as mx

    return gluonnlp.embedding.TokenEmbedding(unknown_token=unknown_token, idx_to_token=list(vectors.words),
                                             idx_to_vec=mx.nd.array(vectors.vectors, dtype="float32"))


_THE_VOCABULARYS = object()  # vocabulary_words' form when not given: the WordVectors' own (None is text.AS_WRITTEN)


def _as_read(word, form):
    """``word`` as the model reads text (``Great`` -> ``great``; ``form``: its bundle's text.UNICODE_FORMS), or None
    when that is not one token."""
    from .text import tokenize

    tokens = tokenize(word, form) if isinstance(word, str) else []
    return tokens[0] if len(tokens) == 1 else None


def _form_of(vocabulary, form):
    """How the model of ``vocabulary`` reads text: ``form`` when given, else a :class:`WordVectors`' own (an older
    bundle's words were trained as its text came, or in NFC before lowercasing only: Predictor reads its reviews so,
    and a query word put in NFC today's way was 'not in the vocabulary')."""
    return form if form is not _THE_VOCABULARYS else getattr(vocabulary, "unicode_form", TRAINING_FORM)


def vocabulary_words(words, vocabulary, what="query_words", form=_THE_VOCABULARYS):
    """The ``words`` a table of a model's words can show: each as the model reads text (``Great`` is ``great``, as
    in a review), those that are a token of ``vocabulary`` (a dict or set, or :class:`WordVectors`), in order, once.
    A line on stdout names the others (notebook 04 dropped them silently: ``-y "query_words: [Great]"`` gave an empty
    table and no word why). ``form``: how the model reads text (text.UNICODE_FORMS), a WordVectors' by default."""
    check_word_list(words, what)  # (one word given alone was its letters: 'g', 'r', 'e', ...; a None was "not in")
    _check_vocabulary(vocabulary, "vocabulary_words")
    form = _form_of(vocabulary, form)
    found, missing = [], []
    for word in words:
        token = _as_read(word, form)
        if token is None or token not in vocabulary:
            missing.append(word)
        elif token not in found:
            found.append(token)
    _say_missing(what, missing, bool(found), len(vocabulary))
    return found


def vocabulary_pairs(pairs, vocabulary, what="word_pairs", form=_THE_VOCABULARYS):
    """:func:`vocabulary_words` for ``(word, word)`` pairs: those whose two words are in ``vocabulary``, as the
    model reads them (``form``: as vocabulary_words); a line names the others."""
    check_word_pair_list(pairs, what)  # (one pair given alone was pairs of its letters; a 1-tuple, kept, a "pair")
    _check_vocabulary(vocabulary, "vocabulary_pairs")
    form = _form_of(vocabulary, form)
    found, missing = [], []
    for pair in pairs:
        tokens = [_as_read(word, form) for word in pair]
        if all(token is not None and token in vocabulary for token in tokens):
            found.append(tuple(tokens))
        else:
            missing.append(tuple(pair))
    _say_missing(what, missing, bool(found), len(vocabulary))
    return found


def _check_vocabulary(vocabulary, what):
    """One error for a ``vocabulary`` that cannot say which words it holds (a Predictor given for its word vectors was
    "argument of type 'Predictor' is not iterable", a traceback)."""
    if not isinstance(vocabulary, collections.abc.Container) or isinstance(vocabulary, str):
        raise FastTextError(f"{what} looks words up in word vectors (word_vectors(predictor)) or a set or dict of "
                            f"words, got a {type(vocabulary).__name__}")


def _say_missing(what, missing, any_found, size):
    """One line naming the words that are not there (a run on other data, such as the synthetic corpus, keeps the
    notebook's English defaults: its tables are then empty, and this line says why, rather than failing the run)."""
    if not missing:
        if not any_found:  # (-y "query_words: []": an empty table, and no word why)
            print(f"{what} is empty, so its table is empty")
        return
    listed = ", ".join(repr(m) for m in missing)
    empty = "" if any_found else f"; none of {what} is, so its table is empty"
    print(f"not in the model's vocabulary of {size} words ({what}): {listed}{empty}")


def cos_similarity(embedding, word1, word2):
    """The cosine of the angle between two words' vectors, as in the original project's README::

        def cos_similarity(embedding, word1, word2):
            vec1, vec2 = embedding[word1], embedding[word2]
            return mx.nd.dot(vec1, vec2) / (vec1.norm() * vec2.norm())

    ``embedding``: a GluonNLP ``TokenEmbedding`` (:func:`token_embedding`, or GloVe / fastText vectors
    from ``gluonnlp.embedding.create``). Returns a float; a word the embedding does not hold is an
    error (rather than silently comparing the unknown token's vector), and so is a zero vector.
    """
    if not hasattr(embedding, "token_to_idx"):  # (word_vectors' own, or a Predictor, was an AttributeError traceback)
        made = " (token_embedding(vectors) of these)" if isinstance(embedding, WordVectors) else ""
        raise FastTextError(f"cos_similarity takes a GluonNLP TokenEmbedding{made}, got a {type(embedding).__name__}")
    for word in (word1, word2):
        if not isinstance(word, str):  # (a list was "unhashable type" from the lookup: a TypeError traceback)
            raise FastTextError(f"cos_similarity compares two words, got {word!r}")
        if word not in embedding.token_to_idx:
            raise FastTextError(_not_held(word, embedding.token_to_idx, "the embedding's vocabulary"))
    # The README's formula in float64: in float32 a vector of 1e20s overflowed to nan, one of 1e-25s underflowed to
    # "a zero vector", though both are finite vectors a .vec file may hold.
    vec1, vec2 = (embedding[word].asnumpy().astype(np.float64).ravel() for word in (word1, word2))
    norms = np.linalg.norm(vec1) * np.linalg.norm(vec2)
    if not norms > 0:
        raise FastTextError(f"{word1!r} or {word2!r} has a zero vector: no cosine similarity")
    value = float(vec1 @ vec2 / norms)
    return min(1.0, max(-1.0, value)) if math.isfinite(value) else float("nan")  # (rounding gave 1.0000001)


def _not_held(word, vocabulary, what):
    """The error for a ``word`` that ``vocabulary`` does not hold; when the word as a review's text is read (``Great``:
    ``great``) is there, it says so: the model's words are lowercased, which a refused ``'Great'`` did not tell."""
    token = _as_read(word, TRAINING_FORM) if isinstance(word, str) else None
    if token is None or token == word or token not in vocabulary:
        return f"{word!r} is not in {what}"
    composed = nfc(word)
    how = " and ".join(step for step, done in (("in Unicode NFC", composed != word),
                                               ("lowercased", composed.lower() != composed)) if done) \
        or "normalized"  # (a soft hyphen dropped: wunder\xadbar; an emoji variation selector: ❤️, ❤)
    # (a word refused for its normalization alone prints as the token does: both are shown escaped; repr escapes a
    # soft hyphen, not a variation selector, a nonspacing mark)
    shown = ascii if composed != word or how == "normalized" else repr
    return f"{shown(word)} is not in {what} (its words are as reviews are read, {how}: {shown(token)} is there)"


def strongest_words(vectors, n):
    """The ``n`` words of :class:`WordVectors` with the longest vectors, ``<unk>`` left out: the words a trained
    classifier leans on most (notebook 04's default query words). (Every word starting with ``<`` was left out, real
    ones too: ``<3``, the heart of chat and tweets, as the rules keep it.)"""
    _check_word_vectors(vectors, "strongest_words")
    check_positive_int(n, "n")  # (a negative n sliced from the end: every word but the last)
    order = np.argsort(-np.linalg.norm(vectors.vectors, axis=1), kind="stable")
    return [vectors.words[i] for i in order if vectors.words[i] != UNK][:n]


def neighbours(vectors, word, k):
    """``(nearest, opposite)``: the ``k`` words of :class:`WordVectors` whose vectors are the most and the least
    cosine-similar to ``word``'s (itself left out), each a list of ``(word, similarity)``, ties in vocabulary order.
    As :func:`cos_similarity`, a word whose vector is zero is refused (every similarity to it was 0.0)."""
    if not isinstance(word, str):  # (a list was "unhashable type" from the lookup: a TypeError traceback)
        raise FastTextError(f"neighbours looks up one word, got {word!r}")
    _check_word_vectors(vectors, "neighbours")
    check_positive_int(k, "k")  # (a negative k sliced from the end, a float or str was a TypeError traceback)
    if word not in vectors:
        raise FastTextError(_not_held(word, vectors, "the vectors' vocabulary"))
    at = vectors.index[word]
    # Each row divided by its largest value first: float32 squares overflowed past ~1e19 (every similarity 0.0) and
    # underflowed below ~1e-23 ("a zero vector"); the angle is the same. (One float32 copy of the table, as before.)
    table = np.asarray(vectors.vectors, dtype=np.float32)
    largest = np.abs(table).max(axis=1, keepdims=True)
    if not largest[at] > 0:
        raise FastTextError(f"{word!r} has a zero vector: no cosine similarity")
    unit = np.divide(table, largest, out=np.zeros_like(table), where=largest > 0)
    unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1.0)  # (a nonzero scaled row's length is >= 1)
    similarity = np.clip(unit @ unit[at], -1.0, 1.0)
    ranked = [i for i in np.argsort(-similarity, kind="stable") if i != at]
    return ([(vectors.words[i], float(similarity[i])) for i in ranked[:k]],
            [(vectors.words[i], float(similarity[i])) for i in ranked[::-1][:k]])
