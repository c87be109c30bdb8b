"""Documents -> bags of feature rows: the vocabulary and hashed word n-grams.

A document becomes the *set* of embedding rows it touches with a weight each, ``count / length``,
so one sparse product computes the mean over its real tokens (no padding enters the mean):

* words found in the vocabulary (built from the training split, ``min_count``) use their own row;
  other words share the ``<unk>`` row (row 0), and an empty document is a single ``<unk>``;
* word n-grams (2..ngrams) are hashed into ``buckets`` extra rows after the vocabulary, like
  fastText's ``-bucket``, so Yelp-size bigram models fit in memory. The hash is fastText's
  n-gram recurrence over CRC32 word hashes, so unknown words still form n-grams.

The encoded corpus is one CSR matrix, :class:`Bags`; batches.py cuts it into training and scoring
batches over only the rows each batch touches. See model.py for why.

Two routes compute the same bags, bit for bit: native featurization (featurize.cc through
native_features.py, used whenever it is available) and the pure-Python reference below
(``text.tokenize`` and numpy), used with ``FASTTEXT_LIB_NATIVE=0`` or without a compiler and
tested against the native one (tests/test_native_features.py).
"""
import threading
import zlib
from array import array
from dataclasses import dataclass, replace

import numpy as np

from . import native_features, text as text_rules
from .errors import FastTextError
from .text import AS_WRITTEN, NFC_FIRST, NFC_TOKENS, TRAINING_FORM, UNICODE_FORMS, tokenize, without_labels

UNK = "<unk>"
NGRAM_PRIME = 116049371  # fastText's multiplier for hashing n-grams
_MASK32 = 0xFFFFFFFF


def word_hash(token):
    return zlib.crc32(token.encode("utf-8"))


@dataclass
class Bags:
    """An encoded corpus in CSR layout: document ``d`` is ``rows/weights[offsets[d]:offsets[d+1]]``.

    Its columns are the embedding table's rows, so the column array is called ``rows`` (batches.py
    renumbers them into compact ``columns``)."""

    rows: np.ndarray  # int32 feature rows, unique and sorted within each document
    weights: np.ndarray  # float32 count / number of features: the per-document mean
    offsets: np.ndarray  # int64, len(docs) + 1

    def __len__(self):
        return len(self.offsets) - 1

    @property
    def nnz(self):
        return len(self.rows)

    def select(self, docs):
        """The bags of documents ``docs`` (an index array), in that order, as new :class:`Bags`."""
        starts = self.offsets[docs]
        lens = self.offsets[docs + 1] - starts
        offsets = np.zeros(len(docs) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        gather = np.repeat(starts - offsets[:-1], lens) + np.arange(offsets[-1])
        return Bags(self.rows[gather], self.weights[gather], offsets)


def chunk_stops(ends, per_chunk):
    """The end (exclusive) of each chunk of documents whose sizes (tokens, entries) sum to ``ends`` (their running
    total, ``np.cumsum``): consecutive chunks of at most ``per_chunk`` in all, a document bigger than that alone."""
    doc = 0
    while doc < len(ends):
        first = ends[doc - 1] if doc else 0
        doc = max(doc + 1, int(np.searchsorted(ends, first + per_chunk, side="right")))
        yield doc


@dataclass
class TokenBags:
    """A training corpus kept as token ids, its bags encoded batch by batch (:meth:`select`), as
    fastText hashes n-grams on the fly. The bags are exactly ``Featurizer``'s.

    The ids are ``count_tokens``' packed ones (:func:`pack_ids`): each token is the LEB128 varint of
    its index into ``to_id`` (vocabulary id) and ``to_hash`` (CRC32), most in one or two bytes (Yelp:
    ~1.55 bytes a token on Yelp-shaped text, against 4 as int32 and ~8 per bag entry as bags). Document ``d`` is
    ``lengths[d]`` tokens in ``codes[starts[d]:starts[d + 1]]``.
    """

    codes: object  # uint8 np.ndarray, or native_features.CodesFile (data.read_counted's: kept in a file)
    starts: np.ndarray  # int64, len(docs) + 1: byte offsets into codes
    lengths: np.ndarray  # int64 tokens per document
    to_id: np.ndarray  # int64
    to_hash: np.ndarray  # int64
    featurizer: "Featurizer"

    def __len__(self):
        return len(self.lengths)

    def select(self, docs):
        f = self.featurizer
        docs = np.asarray(docs, dtype=np.int64)
        lengths = np.ascontiguousarray(self.lengths[docs])
        codes, starts = self.codes, np.ascontiguousarray(self.starts[docs])
        if isinstance(codes, native_features.CodesFile):  # read_counted's: just these documents, read back
            codes, starts = codes.gather(starts, self.starts[docs + 1])
        if native_features.available():
            bound = int(sum(np.maximum(lengths - n + 1, 0).sum() for n in range(1, f.ngrams + 1))) + len(docs)
            return Bags(*native_features.encode_selected(
                codes, starts, lengths, self.to_id, self.to_hash, f.ngrams, f.buckets, f.vocab_size, f.unk_id, bound))
        if len(docs) == 0:
            return Bags(np.zeros(0, np.int32), np.zeros(0, np.float32), np.zeros(1, np.int64))
        sizes = self.starts[docs + 1] - self.starts[docs]
        gather = np.repeat(starts - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes) + np.arange(sizes.sum())
        tokens = native_features.unpack_ids(codes[gather])
        return f._bags(self.to_id[tokens], self.to_hash[tokens], lengths)

    def encode_all(self):
        """Every document's bag, as :class:`Bags` (what ``fit(return_bags=True)`` returns)."""
        return self.select(np.arange(len(self)))

    def every_word(self):
        """These documents as bags of every word of theirs, no n-gram encoded (:meth:`select` of the copy): for what
        reads the data's words (class_signal), whose sample's n-grams were most of its memory (~0.6 GB for 20k documents
        of 900 tokens). Every word, whatever the vocabulary's ``min_count``: the token ids hold them all. A word of the
        vocabulary is its own row (so at min_count 1 these are :meth:`select`'s word rows, to the bit); one below
        ``min_count`` (``<unk>`` in training) gets a row of its own past the vocabulary's, ``vocab_size`` + its id. An
        empty document stays one ``<unk>`` row."""
        f = self.featurizer
        own = np.where(self.to_id != f.unk_id, self.to_id, f.vocab_size + np.arange(len(self.to_id), dtype=np.int64))
        return replace(self, to_id=own, featurizer=_EveryWord(f, f.vocab_size + len(own)))


def pack_ids(ids, lengths, chunk_tokens=4_000_000):
    """``(codes, byte_ends)``: each of ``ids`` as a LEB128 varint (uint8; 7 bits a byte, low bits first,
    the high bit on every byte but a token's last), and where each document (``lengths`` tokens
    each) ends in ``codes``. The reference for native counting's packed ids; done ``chunk_tokens``
    at a time to bound the temporaries."""
    token_ends = np.cumsum(lengths, dtype=np.int64)
    parts, byte_ends, written, token = [], np.empty(len(lengths), np.int64), 0, 0
    while token < len(ids):
        values = np.asarray(ids[token:token + chunk_tokens], dtype=np.int64)
        widths = np.ones(len(values), dtype=np.int64)
        for k in range(1, 5):
            widths += values >= (1 << (7 * k))
        ends = np.cumsum(widths)
        out = np.empty(int(ends[-1]), dtype=np.uint8)
        for k in range(5):
            has = np.flatnonzero(widths > k)
            more = np.where(widths[has] > k + 1, 0x80, 0)
            out[ends[has] - widths[has] + k] = ((values[has] >> (7 * k)) & 0x7F) | more
        parts.append(out)
        docs = (token_ends > token) & (token_ends <= token + len(values))  # documents ending in this chunk
        byte_ends[docs] = written + ends[token_ends[docs] - token - 1]
        written, token = written + len(out), token + len(values)
    byte_ends[token_ends == 0] = 0  # empty documents before the first token (other empty ones end where the last did)
    codes = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
    return codes, byte_ends


class Featurizer:
    """Maps raw text to :class:`Bags`; holds the GluonNLP vocabulary and the n-gram settings."""

    def __init__(self, vocab, ngrams=1, buckets=2_000_000, unicode_form=TRAINING_FORM):
        """``unicode_form``: how text is put in NFC before its words are looked up (``text.UNICODE_FORMS``;
        text.normalize_text): as the bundle was trained. ``text.TRAINING_FORM`` for every model trained now; an
        older bundle's is ``QUOTES_AND_BREAKS`` (the rules applied once: a ``<br />`` they formed, as ``<br\\t/>``
        squeezed, stayed in words), ``NFC_TOKENS`` (its typographic quotes and ``<br>`` were parts of words),
        ``NFC_FIRST`` or ``AS_WRITTEN`` (its words spelled with combining accents were trained on as they came: in NFC
        they were never found)."""
        if ngrams < 1:
            raise ValueError("ngrams must be >= 1")
        if unicode_form not in UNICODE_FORMS:
            raise ValueError(f"unicode_form must be one of {UNICODE_FORMS}")
        self.vocab = vocab
        self.ngrams = int(ngrams)
        self.buckets = int(buckets) if self.ngrams > 1 else 0
        self.unk_id = vocab.token_to_idx[UNK]
        self.unicode_form = unicode_form
        self._tables = {}  # the token tables of transform, made on first use (see _table)
        self._tables_lock = threading.Lock()

    def _table(self, native):
        """The token -> (id, hash) table of :meth:`transform`: native (``CodeTable``) or a Python dict,
        built once (hashing every word of a large vocabulary takes a while) and shared by threads."""
        with self._tables_lock:
            if native not in self._tables:
                self._tables[native] = (native_features.CodeTable(self.vocab.idx_to_token) if native
                                        else _CodeTable(self.vocab.token_to_idx, self.unk_id))
            return self._tables[native]

    def __getstate__(self):  # picklable (the lock and the native table are rebuilt on use)
        state = dict(self.__dict__)
        state["_tables"], state["_tables_lock"] = {}, None
        return state

    def __setstate__(self, state):
        if "compose" in state:  # (pickled before there were three forms: True was NFC before lowercasing only)
            state["unicode_form"] = NFC_FIRST if state.pop("compose") else AS_WRITTEN
        state.setdefault("unicode_form", NFC_TOKENS)
        self.__dict__.update(state)
        self._tables_lock = threading.Lock()

    @property
    def vocab_size(self):
        return len(self.vocab)

    @property
    def num_rows(self):
        """Rows of the embedding matrix: the vocabulary, then the n-gram buckets."""
        return self.vocab_size + self.buckets

    @classmethod
    def fit(cls, texts, min_count=1, ngrams=1, buckets=2_000_000, return_bags=False, progress=None):
        """Build the vocabulary from ``texts`` (the training split only).

        ``texts``: an iterable of str, or their ``count_tokens`` already made (a
        ``native_features.TokenCounts``, as ``data.read_counted`` makes while reading).
        ``progress``: ``None`` or a function wrapping an iterable in a progress bar (``progress.bar``).
        With ``return_bags=True`` also returns the encoded ``texts``: each document is tokenized once,
        to provisional ids, which are remapped once the vocabulary is known. ``return_bags="tokens"``
        returns them as :class:`TokenBags` instead (bags encoded batch by batch: training's choice).
        """
        import gluonnlp

        counted = texts if isinstance(texts, native_features.TokenCounts) else count_tokens(texts, progress)
        counter = gluonnlp.data.Counter(dict(zip(counted.words, counted.counts.tolist())))
        vocab = gluonnlp.Vocab(counter, min_freq=int(min_count), unknown_token=UNK, padding_token=None, bos_token=None, eos_token=None)
        featurizer = cls(vocab, ngrams=ngrams, buckets=buckets, unicode_form=counted.form)
        if not return_bags:
            return featurizer
        to_id = np.array([vocab.token_to_idx.get(w, featurizer.unk_id) for w in counted.words], dtype=np.int64)
        to_hash = np.ascontiguousarray(counted.hashes, dtype=np.int64)
        if return_bags == "tokens":
            return featurizer, TokenBags(counted.codes, counted.starts, counted.lengths, to_id, to_hash, featurizer)
        prov = counted.ids
        if native_features.available():
            return featurizer, Bags(*native_features.encode_ids(
                prov, counted.lengths, to_id, to_hash, featurizer.ngrams, featurizer.buckets,
                featurizer.vocab_size, featurizer.unk_id))
        return featurizer, featurizer._encode(counted.lengths, lambda a, b: (to_id[prov[a:b]], to_hash[prov[a:b]]))

    def transform(self, texts, progress=None, scoring=None):
        """Encode documents (validation, test, inference) with the fitted vocabulary. A ``__label__`` word is no
        feature, as in :meth:`fit` (:func:`text.without_labels`). Documents whose featurization needs more memory
        than is available are refused (:class:`NoRoomToFeaturize`) before it is used; ``scoring``: with bags that
        are scored next, what scoring holds beside them (:meth:`check_room`), weighed too."""
        def check(chunk, first, native=True):
            self.check_room(chunk, first, native, scoring)

        if native_features.available():
            return Bags(*native_features.encode_texts(texts, self._table(True), self.ngrams, self.buckets,
                                                      self.vocab_size, self.unk_id, form=self.unicode_form,
                                                      check=check, drop_labels=True))
        codes, lengths = array("q"), array("q")
        table = self._table(False)
        for i, text in enumerate(_maybe_progress(texts, progress, "encode")):
            check([text], i, native=False)
            toks = tokenize(without_labels(text), self.unicode_form)
            codes.extend([table[t] for t in toks])
            lengths.append(len(toks))
        codes = np.frombuffer(codes, dtype=np.int64)
        return self._encode(np.frombuffer(lengths, dtype=np.int64), lambda a, b: (codes[a:b] >> 32, codes[a:b] & _MASK32))

    def featurizing_bytes(self, texts, native=True):
        """About how many bytes featurizing ``texts`` together takes beyond the texts themselves
        (:data:`FEATURIZING_BYTES`)."""
        sizes = [len(text) if text.isascii() else 3 * len(text) for text in texts]  # their UTF-8, at most
        if not native:  # Python's route: each token a str in a list, n-gram arrays of int64 (~27 bytes a byte of
            return sum(sizes) * (PYTHON_BYTES_PER_BYTE * self.ngrams + 5)  # text unigrams, ~48 bigrams, measured)
        long = max(sizes, default=0) > native_features.PIECE_CHARS  # lowered a piece at a time: one copy, in a bytearray
        text = sum(sizes) * (1.25 if long else 2)
        bags = sum(min(BAG_BYTES_PER_BYTE * self.ngrams * size, 16 * self.num_rows) for size in sizes)
        return int(text + bags) + FEATURIZING_BYTES

    def bag_entries(self, texts):
        """About how many bag entries (distinct rows of each document) ``texts`` make: a word or n-gram every ~4
        bytes of text (:data:`BAG_BYTES_PER_BYTE`), at most every row of the table in each document."""
        return sum(min(BAG_BYTES_PER_BYTE * self.ngrams * size // BAG_ENTRY_BYTES + 1, self.num_rows)
                   for size in (len(text) if text.isascii() else 3 * len(text) for text in texts))

    def check_room(self, texts, first=0, native=True, scoring=None):
        """Refuse ``texts`` (a chunk of documents featurized together; ``first``: the index of the first one) when
        featurizing them needs more memory than this process can still fill (devices.memory_room: the memory
        available, a container's limit, ``ulimit -v``): one error, where the OOM killer ended the process without a
        word (a review of 62 MB took ~1.4 GB with bigrams). Only text of more than :data:`CHECKED_ABOVE` bytes is
        weighed (reading /proc for each request of a few reviews would cost more than it scores).

        ``scoring(entries, documents)``: the bytes that scoring bags of ``entries`` entries in all, of ``documents``
        documents, holds beside them (scoring.CpuScorer.held_bytes: a compact bundle gathers a document's rows); the
        bags and that are weighed too, after featurizing (whose temporaries are let go by then): a compact bigram
        model's 60 MB review fit the featurizing and was OOM-killed gathering its rows, ~545 MB at emsize 100."""
        if sum(map(len, texts)) < CHECKED_ABOVE:
            return
        from .devices import memory_room

        need, what = self.featurizing_bytes(texts, native), "featurize"
        if scoring is not None:
            entries = self.bag_entries(texts)
            scored = BAG_ENTRY_BYTES * entries + 8 * (len(texts) + 1) + int(scoring(entries, len(texts)))
            need, what = max((need, what), (scored, "score"))
        room = memory_room()
        if room is not None and need > room:
            longest = max(range(len(texts)), key=lambda i: len(texts[i]))
            raise NoRoomToFeaturize(first + longest, len(texts[longest]), len(texts), need, room, what)

    # Tokens per chunk of _encode: bounds the int64 temporaries (features, owners, the unique sort)
    # to a few hundred MB whatever the corpus size; documents are independent, so chunking changes nothing.
    CHUNK_TOKENS = 4_000_000

    def _encode(self, lengths, tokens_of):
        """Bags of every document, built chunk by chunk; ``tokens_of(a, b)`` gives tokens ``a:b``
        as (word ids, word hashes)."""
        if len(lengths) == 0:
            return Bags(np.zeros(0, np.int32), np.zeros(0, np.float32), np.zeros(1, np.int64))
        ends = np.cumsum(lengths)
        # Every document has at most max(1, len - n + 1) features of each order n: allocate that once
        # and fill it chunk by chunk, instead of concatenating the chunks (which needs twice the memory).
        bound = int(sum(np.maximum(lengths - n + 1, 0).sum() for n in range(1, self.ngrams + 1))) + len(lengths)
        rows, weights = np.empty(bound, dtype=np.int32), np.empty(bound, dtype=np.float32)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        doc = nnz = 0
        for stop in chunk_stops(ends, self.CHUNK_TOKENS):
            first_token = ends[doc - 1] if doc else 0
            part = self._bags(*tokens_of(first_token, ends[stop - 1]), lengths[doc:stop])
            rows[nnz:nnz + part.nnz], weights[nnz:nnz + part.nnz] = part.rows, part.weights
            offsets[doc + 1:stop + 1] = part.offsets[1:] + nnz
            doc, nnz = stop, nnz + part.nnz
        return Bags(rows=rows[:nnz], weights=weights[:nnz], offsets=offsets)

    def _bags(self, word_ids, word_hashes, lengths):
        n_docs = len(lengths)
        lengths = lengths.copy()
        empty = np.flatnonzero(lengths == 0)
        if len(empty):  # an empty document is one <unk> token
            at = np.concatenate([[0], np.cumsum(lengths)])[empty]
            word_ids = np.insert(word_ids, at, self.unk_id)
            word_hashes = np.insert(word_hashes, at, word_hash(UNK))
            lengths[empty] = 1
        doc_of = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        features, owners = [word_ids.astype(np.int64)], [doc_of]
        if self.ngrams > 1:
            starts = np.repeat(np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
            pos = np.arange(len(word_ids)) - starts
            remaining = np.repeat(lengths, lengths) - pos  # tokens from here to the end of the document
            h = word_hashes.astype(np.uint64)
            for n in range(2, self.ngrams + 1):
                at = np.flatnonzero(remaining >= n)
                g = h[at]
                for k in range(1, n):
                    g = g * np.uint64(NGRAM_PRIME) + h[at + k]
                features.append(self.vocab_size + (g % np.uint64(self.buckets)).astype(np.int64))
                owners.append(doc_of[at])
        features = np.concatenate(features)
        owners = np.concatenate(owners)
        per_doc = np.bincount(owners, minlength=n_docs)
        keys, counts = np.unique(owners * self.num_rows + features, return_counts=True)
        docs = keys // self.num_rows
        offsets = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(np.bincount(docs, minlength=n_docs), out=offsets[1:])
        return Bags(
            rows=(keys - docs * self.num_rows).astype(np.int32),
            weights=(counts / per_doc[docs]).astype(np.float32),
            offsets=offsets,
        )


# What featurize.cc holds beside the text of a chunk, whatever its length: a long document's piece of words and n-grams
# (a million words, 20 bytes each with bigrams), its bag so far (at most every row of the table), the threads' parts.
FEATURIZING_BYTES = 64 << 20
BAG_BYTES_PER_BYTE = 2  # a bag entry (int32 row, float32 weight) a feature, a word or n-gram every ~4 bytes of text
BAG_ENTRY_BYTES = 8  # (its int32 row and float32 weight)
PYTHON_BYTES_PER_BYTE = 25  # and the Python route's, for each order of n-grams
CHECKED_ABOVE = 8 << 20  # characters of a chunk of documents below which no memory check is made


class NoRoomToFeaturize(FastTextError):
    """Documents whose featurization, or scoring, needs more memory than this process has left
    (:meth:`Featurizer.check_room`): ``index`` (of the longest, in the texts featurized), its ``chars``, how many
    ``documents`` were featurized with it, the bytes needed (``need``) and left (``room``), and ``what`` needs them
    (``"featurize"`` or ``"score"``). ``where(name)`` says it of the document ``name``
    (a file's line: the CLI; ``texts[i]``: the Python API; a request's review: the endpoint)."""

    def __init__(self, index, chars, documents, need, room, what="featurize"):
        self.index, self.chars, self.documents, self.need, self.room = index, chars, documents, need, room
        self.what = what  # what needs the most: "featurize", or "score" (its rows gathered: Featurizer.check_room)
        super().__init__(self.where(f"texts[{index}]"))

    def where(self, name):
        others = (f", with {self.documents - 1:,} other document{'s' if self.documents > 2 else ''},"
                  if self.documents > 1 else "")
        return (f"{name}: a document of {self.chars / 1e6:,.1f} million characters{others} needs about "
                f"{self.need >> 20:,} MB of memory to {self.what}, and this process has {self.room >> 20:,} MB left "
                f"(memory available, a container's limit, ulimit -v); split it into shorter documents, or give the "
                f"process more memory")


def count_tokens(texts, progress=None, to_file=False):
    """Every token of ``texts``: a :class:`native_features.TokenCounts` (natively when available), read as
    training reads text now (``text.TRAINING_FORM``, its ``form``). ``to_file``: its packed ids kept in a
    :class:`native_features.CodesFile`, not in memory. A ``__label__`` word is a class, no feature
    (:func:`text.without_labels`): skipped here and by :meth:`Featurizer.transform`, so in training text of any
    format as in predict's."""
    form = text_rules.TRAINING_FORM  # (looked up now: what a test trains an older version's bundle with)
    if native_features.available():
        return native_features.count_tokens(_maybe_progress(texts, progress, "vocabulary"), to_file=to_file, form=form,
                                            drop_labels=True)
    provisional = {}
    ids, lengths = array("i"), array("q")
    for text in _maybe_progress(texts, progress, "vocabulary"):
        toks = tokenize(without_labels(text), form)
        ids.extend([provisional.setdefault(t, len(provisional)) for t in toks])
        lengths.append(len(toks))
    words = list(provisional)
    ids = np.frombuffer(ids, dtype=np.int32)
    lengths = np.frombuffer(lengths, dtype=np.int64)
    codes, byte_ends = pack_ids(ids, lengths)
    if to_file:
        packed, codes = codes, native_features.CodesFile()
        codes.append(packed)
    return native_features.TokenCounts(
        words=words, counts=np.bincount(ids, minlength=len(words)).astype(np.int64),
        hashes=np.array([word_hash(w) for w in words], dtype=np.int64), codes=codes,
        starts=np.concatenate([[0], byte_ends]).astype(np.int64), lengths=lengths, form=form)


class _EveryWord(Featurizer):
    """:meth:`TokenBags.every_word`'s unigram featurizer: ``rows`` word rows, the vocabulary's and one past it for each
    word below its min_count (:func:`class_signal.pairs_of_bags` reads a row below ``vocab_size`` as a word)."""

    def __init__(self, featurizer, rows):
        super().__init__(featurizer.vocab, ngrams=1, unicode_form=featurizer.unicode_form)
        self.rows = rows

    @property
    def vocab_size(self):
        return self.rows


class _CodeTable(dict):
    """token -> ``id << 32 | hash``, computing and caching the code of unknown tokens on a miss."""

    _MAX_CACHED_UNKNOWN = 1_000_000

    def __init__(self, token_to_idx, unk_id):
        super().__init__((t, (i << 32) | word_hash(t)) for t, i in token_to_idx.items())
        self._known = len(self)
        self._unk = unk_id << 32

    def __missing__(self, token):
        code = self._unk | word_hash(token)
        if len(self) - self._known < self._MAX_CACHED_UNKNOWN:  # bound memory in long-running servers
            self[token] = code
        return code


def _maybe_progress(items, progress, desc):
    # progress: None, or a wrapper such as progress.bar (passed in, so that serving never imports tqdm)
    return progress(items, desc=desc) if progress else items
