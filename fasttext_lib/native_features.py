"""Featurization at native speed (``featurize.cc``), bit-identical to the pure-Python reference.

The reference is ``text.tokenize`` plus ``features.Featurizer.fit/transform/_bags``; this module
gives the same tokens, counts and bags, and is what the Featurizer calls when :func:`available`.

Why it is exact with any Unicode: Python puts the text in NFC and lowercases it (``text.lowered``, as ``normalize_text``
does, on the joined chunk of documents, so Unicode case rules, including a final sigma, are Python's own), UTF-8 encodes, and
C++ applies the ASCII punctuation rules (and the line breaks of the bundle's form: :func:`_line_breaks`)
and splits on the exact set of code points ``str.split()`` treats as whitespace. CRC32 word hashes equal ``zlib.crc32`` of the UTF-8 bytes.

The library is a plain shared object loaded with ctypes (no MXNet: the predictor uses it too),
built on first use and cached like the operators (native_build.py). Without a compiler, or with
``FASTTEXT_LIB_NATIVE=0``, :func:`available` is False and the Python path is used (one warning
when the build fails; none when switched off on purpose).

Memory stays bounded: documents go to C++ a chunk at a time, results grow in blocks there and are
copied into their final numpy arrays block by block.
"""
import contextlib
import ctypes
import errno
import itertools
import os
import re
import sys
import tempfile
import threading
import weakref
import zlib
from dataclasses import dataclass

import numpy as np

from . import native_build
from .text import TRAINING_FORM, lowered, reads_every_line_break, reads_formed_line_breaks, without_labels

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "featurize.cc")
CXXFLAGS = ["-O3", "-std=c++17", "-pthread", "-shared", "-fPIC"]
ENV_SWITCH = native_build.MASTER_SWITCH
UNK_HASH = zlib.crc32(b"<unk>")
CHUNK_DOCS = 4096  # documents lowercased and encoded per call: a few MB of text at a time


def threads():
    """Threads that encode bags (documents are independent; counting is one thread)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)

_lock = threading.Lock()
_state = {"lib": None, "tried": False, "reason": None}

_P = ctypes.c_void_p
_I64 = ctypes.c_int64
_SIGNATURES = {
    "ft_crc32": (ctypes.c_uint32, [ctypes.c_char_p, _I64]),
    "ft_tokenize": (_I64, [ctypes.c_char_p, _I64, _P, ctypes.c_int32]),
    "ft_count_tokens": (_I64, [ctypes.c_char_p, _P, _I64, ctypes.c_int32]),
    "ft_counter_new": (_P, []),
    "ft_counter_free": (None, [_P]),
    "ft_counter_add": (ctypes.c_int, [_P, ctypes.c_char_p, _P, _I64, ctypes.c_int32]),
    "ft_counter_sizes": (None, [_P, _P]),
    "ft_counter_take": (None, [_P, _P, _P, _P, _P, _P, _P]),
    "ft_counter_spill": (ctypes.c_int, [_P, ctypes.c_int, ctypes.c_int32]),
    "ft_read_ranges": (ctypes.c_int, [ctypes.c_int, _P, _P, _I64, _P]),
    "ft_vocab_new": (_P, [ctypes.c_char_p, _P, _P, _I64]),
    "ft_vocab_free": (None, [_P]),
    "ft_encoder_new": (_P, [ctypes.c_int32, _I64, _I64, _I64, ctypes.c_uint32]),
    "ft_encoder_free": (None, [_P]),
    "ft_encoder_add_text": (ctypes.c_int, [_P, _P, ctypes.c_char_p, _P, _I64, ctypes.c_int32, ctypes.c_int32]),
    "ft_encoder_add_ids": (ctypes.c_int, [_P, _P, _P, _I64, _P, _P, ctypes.c_int32]),
    "ft_encoder_sizes": (None, [_P, _P]),
    "ft_encoder_take": (None, [_P, _P, _P, _P]),
    "ft_encode_selected": (_I64, [_P, _P, _P, _I64, _P, _P, ctypes.c_int32, _I64, _I64, _I64, ctypes.c_uint32,
                                  _P, _P, _P]),
    "ft_unpack_ids": (None, [_P, _I64, _P]),
    "ft_uniform_rows": (None, [ctypes.c_uint64, _P, _I64, _I64, ctypes.c_float, _P, ctypes.c_int32]),
    "ft_changed_rows": (None, [ctypes.c_uint64, _P, _I64, _I64, ctypes.c_float, _P, ctypes.c_int32]),
    "ft_bag_mean": (ctypes.c_int, [_P, _I64, _I64, _P, _P, _P, _I64, _P, ctypes.c_int32, ctypes.c_int32]),
    "ft_set_piece_words": (_I64, [_I64]),
}


def build():
    """Compile the library if it is not cached yet; returns its path (RuntimeError if it cannot)."""
    return native_build.build("fasttext_featurize", [SOURCE], CXXFLAGS)


def available():
    """Whether native featurization is in use (building and loading it on the first call)."""
    if native_build.switch_is_off(ENV_SWITCH):
        return False
    with _lock:
        if not _state["tried"]:
            _state["tried"] = True
            try:
                lib = ctypes.CDLL(build())
                for name, (restype, argtypes) in _SIGNATURES.items():
                    getattr(lib, name).restype, getattr(lib, name).argtypes = restype, argtypes
                _state["lib"], _state["reason"] = lib, "loaded"
            except (RuntimeError, OSError) as exc:
                _state["reason"] = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
                print(f"fasttext_lib: native featurization unavailable ({_state['reason']}); "
                      f"using the Python tokenizer (same results, slower)", file=sys.stderr)
        return _state["lib"] is not None


def status():
    """``(available, reason)``."""
    if native_build.switch_is_off(ENV_SWITCH):
        return False, f"{ENV_SWITCH}={os.environ[ENV_SWITCH]}"
    return available(), _state["reason"]


def _lib():
    if not available():
        raise RuntimeError(f"native featurization is not available: {status()[1]}")
    return _state["lib"]


def _ptr(array):
    return array.ctypes.data_as(_P)


def _check(code):
    if code != 0:
        raise MemoryError("native featurization ran out of memory")


class CodesFileError(OSError):
    """The temporary file of packed token ids could not be made, written or read (CodesFile)."""


def _check_io(code):
    if code != 0:
        raise CodesFileError(code, os.strerror(code))


def _line_breaks(form):
    """featurize.cc's ``LineBreaks`` for text read in ``form``: 0, only ``<br />`` is a space; 1, ``<br/>`` and
    ``<br>`` too (``text.reads_every_line_break``); 2, and a ``<br />`` the rules form, until nothing changes
    (``text.reads_formed_line_breaks``)."""
    return 2 if reads_formed_line_breaks(form) else 1 if reads_every_line_break(form) else 0


def _chunks(texts):
    it = iter(texts)
    while True:
        chunk = list(itertools.islice(it, CHUNK_DOCS))
        if not chunk:
            return
        yield chunk


def _lowered_utf8(chunk, form=TRAINING_FORM, drop_labels=False):
    """One buffer of the lowercased documents, one byte between each, and where each one ends.

    NUL-joined first (one ``text.lowered`` and ``encode`` for the chunk; NUL is neither cased nor
    case-ignorable, so a final sigma never sees the neighbouring document, and it composes with no
    character, so NFC never joins two documents); if a document holds a NUL itself, each is put in
    NFC, lowercased and encoded on its own. ``form``: how text is put in NFC (``text.UNICODE_FORMS``: a
    bundle's, as it was trained). A chunk with a document longer than :data:`PIECE_CHARS` is made a piece at a
    time (:func:`_lowered_utf8_in_pieces`). ``drop_labels``: each document's ``__label__`` words are left out
    (``text.without_labels``), a long one's a piece at a time: a copy of the whole document was made for them.
    """
    if any(len(text) > PIECE_CHARS for text in chunk):
        return _lowered_utf8_in_pieces(chunk, form, drop_labels)
    if drop_labels:
        chunk = [without_labels(text) for text in chunk]
    buf = lowered("\0".join(chunk), form).encode("utf-8")
    ends = np.empty(len(chunk), dtype=np.int64)
    if buf.count(b"\0") == len(chunk) - 1:
        ends[:-1] = np.flatnonzero(np.frombuffer(buf, dtype=np.uint8) == 0)
        ends[-1] = len(buf)
    else:
        parts = [lowered(text, form).encode("utf-8") for text in chunk]
        buf = b"\0".join(parts)
        np.cumsum([len(p) + 1 for p in parts], out=ends)
        ends -= 1
    return buf, ends


# A document longer than this (characters) is lowercased and encoded a piece of about this size at a time, into one
# buffer: whole, its lowercased copy and its UTF-8 were both held (2 bytes a byte of ASCII text, 5 of CJK), and the
# C++ copied it once more without its '"' (split_once).
PIECE_CHARS = 1 << 20
_WHITESPACE = re.compile(r"\s")  # str.isspace's characters (re's \s for str patterns: Py_UNICODE_ISSPACE)


def _lowered_utf8_in_pieces(chunk, form, drop_labels=False):
    """:func:`_lowered_utf8` of a chunk holding a long document: each document lowercased and encoded on its own,
    a long one a piece at a time, into one buffer (a ``bytearray``, passed to C++ without a copy:
    :func:`_as_char_array`).

    The same bytes as the whole document's, but for its '"' (dropped here; split_once drops them first, so the tokens
    are the same): a piece ends before a whitespace character, and every step of ``text.lowered`` stops at one. It is
    neither cased nor case-ignorable (the final-sigma rule looks no further), it is a starter that composes with
    nothing before it (NFC), and it is none of the characters replaced or dropped. With ``drop_labels``, each piece
    loses its ``__label__`` words (``text.without_labels``): such a word is whole in one piece, and the whitespace
    a piece starts with is what the word's match looks behind for."""
    buf = bytearray()
    ends = np.empty(len(chunk), dtype=np.int64)
    for i, text in enumerate(chunk):
        for piece in _pieces(text):
            lowered_piece = lowered(without_labels(piece) if drop_labels else piece, form)
            del piece
            if '"' in lowered_piece:
                lowered_piece = lowered_piece.replace('"', "")
            buf += lowered_piece.encode("utf-8")
        ends[i] = len(buf)
        buf += b"\0"
    return _as_char_array(buf), ends


def _pieces(text):
    """``text`` in consecutive slices of about :data:`PIECE_CHARS` characters, each after the first starting with a
    whitespace character (a text with none after a piece's length: the rest in one)."""
    start = 0
    while len(text) - start > PIECE_CHARS:
        space = _WHITESPACE.search(text, start + PIECE_CHARS)
        if space is None:
            break
        yield text[start:space.start()]
        start = space.start()
    yield text[start:] if start else text


def _as_char_array(buf):
    """A ``bytearray`` as the ctypes ``char`` array over its memory, which ctypes passes as a ``char *``."""
    return (ctypes.c_char * len(buf)).from_buffer(buf) if buf else b""


def tokenize(text, form=TRAINING_FORM):
    """``text.tokenize(text, form)`` natively (for tests and single documents)."""
    raw = lowered(text, form).encode("utf-8")
    out = ctypes.create_string_buffer(2 * len(raw) + 1)  # every byte may become a token plus a space
    n = _lib().ft_tokenize(raw, len(raw), ctypes.cast(out, _P), _line_breaks(form))
    return out.raw[:n].decode("utf-8").split(" ") if n else []


def normalized_utf8(texts, form=TRAINING_FORM):
    """``[text.normalize_text(t, form).encode("utf-8") for t in texts]`` (``form``: as training reads text, or as
    the bundle's rule read its text, text.UNICODE_FORMS) in one native pass: ~5 times as fast (evaluate fingerprints every document it scores with an autotune-refitted bundle:
    trained_on.TrainedOnCheck). None when a text holds a NUL itself (the caller reads them in Python).

    The texts are NUL-joined, lowercased as one (as :func:`_lowered_utf8`) and tokenized as one document: NUL is a
    token byte, so it is glued to the tokens beside it and no rule sees across it (a ``<br />`` has none; a formed
    line break needs a token ending in ``<br`` before one starting with ``/>``, and the token by a NUL ends or starts
    with it); cut at the NULs, each piece is the tokens of its document, with a space at an end where one stood."""
    texts = list(texts)
    if not texts:
        return []
    buf = lowered("\0".join(texts), form).encode("utf-8")
    if buf.count(b"\0") != len(texts) - 1:
        return None
    out = ctypes.create_string_buffer(2 * len(buf) + 1)  # every byte may become a token plus a space
    n = _lib().ft_tokenize(buf, len(buf), ctypes.cast(out, _P), _line_breaks(form))
    return [piece.strip(b" ") for piece in out.raw[:n].split(b"\0")]


def total_tokens(texts, form=TRAINING_FORM):
    """``sum(len(text.tokenize(t, form)) for t in texts)`` (any iterable of str), counted natively a chunk at a time
    (schedule.mean_tokens: ~0.8 s in Python for the 10,000 documents every run whose settings come from the data
    measures)."""
    lib = _lib()
    total = 0
    for chunk in _chunks(texts):
        buf, ends = _lowered_utf8(chunk, form)
        counted = lib.ft_count_tokens(buf, _ptr(ends), len(chunk), _line_breaks(form))
        if counted < 0:
            raise MemoryError("native featurization ran out of memory")
        total += counted
    return total


def crc32(token):
    raw = token.encode("utf-8")
    return _lib().ft_crc32(raw, len(raw))


@dataclass
class TokenCounts:
    """Every token of a corpus: distinct ``words`` in first-seen order with their ``counts`` and
    CRC32 ``hashes``, and each document's tokens as ids into ``words``: ``lengths`` tokens each,
    packed as varints (``codes``, uint8; ``features.pack_ids``), document ``d`` being
    ``codes[starts[d]:starts[d + 1]]``. Frequent words come first, so most ids take one or two bytes
    (Yelp-shaped text: ~1.55 bytes a token instead of 4). ``ids``: unpacked, as int32."""

    words: list
    counts: np.ndarray  # int64
    hashes: np.ndarray  # int64 (zlib.crc32 of the UTF-8 bytes)
    codes: object  # uint8 np.ndarray, all documents back to back; or the same bytes in a CodesFile
    starts: np.ndarray  # int64 len(documents) + 1: byte offsets into codes
    lengths: np.ndarray  # int64 tokens per document
    form: object = TRAINING_FORM  # how the text was read (text.UNICODE_FORMS): the Featurizer fit on it reads so

    @property
    def ids(self):
        codes = self.codes.read_all() if isinstance(self.codes, CodesFile) else self.codes
        if not available():
            return unpack_ids(codes).astype(np.int32)
        n = int(self.lengths.sum())
        out = np.empty(n, np.int32)
        _lib().ft_unpack_ids(_ptr(np.ascontiguousarray(codes)), n, _ptr(out))
        return out


def unpack_ids(codes):
    """The values of varint-packed ``codes`` (``features.pack_ids``), as int64, in numpy (the Python
    route's decoder; the native one is part of ``ft_encode_selected`` and ``TokenCounts.ids``)."""
    if len(codes) == 0:
        return np.zeros(0, dtype=np.int64)
    last = (codes & 0x80) == 0
    ends = np.flatnonzero(last)
    firsts = np.concatenate([[0], ends[:-1] + 1])
    position = np.arange(len(codes)) - np.repeat(firsts, ends - firsts + 1)
    return np.add.reduceat((codes & 0x7F).astype(np.int64) << (7 * position), firsts)


def count_tokens(texts, to_file=False, form=TRAINING_FORM, drop_labels=False):
    """Tokenize and count ``texts`` (any iterable of str), as ``Featurizer.fit``'s first loop.
    ``to_file``: the packed ids go to a :class:`CodesFile` as they are made, a block at a time. ``form``: how text
    is read (``text.UNICODE_FORMS``: ``features.count_tokens`` gives the training's). ``drop_labels``: as
    :func:`_lowered_utf8`."""
    lib = _lib()
    handle = lib.ft_counter_new()
    if not handle:
        raise MemoryError("native featurization ran out of memory")
    spill = CodesFile() if to_file else None
    try:
        for chunk in _chunks(texts):
            buf, ends = _lowered_utf8(chunk, form, drop_labels)
            _check(lib.ft_counter_add(handle, buf, _ptr(ends), len(chunk), _line_breaks(form)))
            if spill is not None:
                _check_io(lib.ft_counter_spill(handle, spill.fileno(), 0))
        if spill is not None:
            _check_io(lib.ft_counter_spill(handle, spill.fileno(), 1))
        sizes = np.zeros(5, dtype=np.int64)
        lib.ft_counter_sizes(handle, _ptr(sizes))
        n_words, n_bytes, n_tokens, n_docs, n_codes = sizes.tolist()
        words = ctypes.create_string_buffer(n_bytes + n_words + 1)
        counts, hashes = np.empty(n_words, np.int64), np.empty(n_words, np.int64)
        codes = np.empty(0 if spill is not None else n_codes, np.uint8)  # spilled: nothing left to copy
        starts, lengths = np.zeros(n_docs + 1, np.int64), np.empty(n_docs, np.int64)
        lib.ft_counter_take(handle, ctypes.cast(words, _P), _ptr(counts), _ptr(hashes), _ptr(codes), _ptr(starts[1:]),
                            _ptr(lengths))
    except BaseException:
        if spill is not None:
            spill.close()
        raise
    finally:
        lib.ft_counter_free(handle)
    if spill is not None:
        spill.size, codes = n_codes, spill
    words = words.raw[:n_bytes + n_words].decode("utf-8").split("\n")[:-1]
    return TokenCounts(words, counts, hashes, codes, starts, lengths, form)


class CodesFile:
    """Packed token ids (:class:`TokenCounts`' ``codes``) kept in an unlinked temporary file instead
    of the process's memory, read back a batch's documents at a time (:meth:`gather`).

    Why: at Yelp size (560k reviews, 87M tokens) the ids are ~125 MB, more than half of a unigram
    run's memory beside MXNet. In the file they sit in the kernel's page cache (reclaimable, and not
    the process's RSS), as fastText's training file does while fastText streams it every epoch;
    reading a batch back costs one ``pread`` a document (~1 us; ~0.5 s of system time an epoch at
    Yelp size, against ~35 s of computing). The file lives in the temporary directory (``TMPDIR``)
    and disappears with this object or the process, however it ends.
    """

    dtype = np.dtype(np.uint8)

    def __init__(self):
        try:
            self.file = tempfile.TemporaryFile(buffering=0)  # unbuffered: native code appends to the same fd
        except OSError as exc:
            raise CodesFileError(exc.errno, exc.strerror) from None
        self.size = 0

    def fileno(self):
        return self.file.fileno()

    def close(self):
        self.file.close()

    def __len__(self):
        return self.size

    def append(self, codes):
        data = np.ascontiguousarray(codes, dtype=np.uint8).tobytes()
        view = memoryview(data)
        try:
            while view:
                view = view[self.file.write(view):]
        except OSError as exc:
            raise CodesFileError(exc.errno, exc.strerror) from None
        self.size += len(data)

    def gather(self, starts, ends):
        """``(codes, local_starts)``: the bytes ``[starts[i], ends[i])`` back to back (uint8), and where
        each range begins in them."""
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        ends = np.ascontiguousarray(ends, dtype=np.int64)
        sizes = ends - starts
        local = np.zeros(len(starts), dtype=np.int64)
        np.cumsum(sizes[:-1], out=local[1:])
        out = np.empty(int(sizes.sum()), dtype=np.uint8)
        if available():
            _check_io(_lib().ft_read_ranges(self.fileno(), _ptr(starts), _ptr(ends), len(starts), _ptr(out)))
            return out, local
        for i, (start, size) in enumerate(zip(starts.tolist(), sizes.tolist())):
            data = os.pread(self.fileno(), size, start) if size else b""
            if len(data) != size:
                raise CodesFileError(errno.EIO, "shorter than written")
            out[local[i]:local[i] + size] = np.frombuffer(data, dtype=np.uint8)
        return out, local

    def read_all(self):
        return self.gather([0], [self.size])[0]


class CodeTable:
    """A vocabulary on the native side: ``tokens[i]`` has id ``i`` (``vocab.idx_to_token``)."""

    def __init__(self, tokens):
        lib = _lib()
        raw = [t.encode("utf-8") for t in tokens]
        starts = np.zeros(len(raw) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in raw], out=starts[1:])
        ids = np.arange(len(raw), dtype=np.int64)
        self.handle = lib.ft_vocab_new(b"".join(raw), _ptr(starts), _ptr(ids), len(raw))
        if not self.handle:
            raise MemoryError("native featurization ran out of memory")
        weakref.finalize(self, lib.ft_vocab_free, self.handle)


class _Encoder:
    def __init__(self, ngrams, buckets, vocab_size, unk_id, unk_hash):
        if ngrams < 1 or (ngrams > 1 and buckets < 1):
            raise ValueError("need ngrams >= 1, and buckets >= 1 when ngrams > 1")
        self.lib = _lib()
        self.handle = self.lib.ft_encoder_new(int(ngrams), int(buckets) if ngrams > 1 else 0, int(vocab_size),
                                              int(unk_id), int(unk_hash))
        if not self.handle:
            raise MemoryError("native featurization ran out of memory")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.lib.ft_encoder_free(self.handle)

    def take(self):
        """(rows int32, weights float32, offsets int64): the ``Bags`` arrays."""
        sizes = np.zeros(2, dtype=np.int64)
        self.lib.ft_encoder_sizes(self.handle, _ptr(sizes))
        nnz, n_docs = sizes.tolist()
        rows, weights, offsets = np.empty(nnz, np.int32), np.empty(nnz, np.float32), np.empty(n_docs + 1, np.int64)
        self.lib.ft_encoder_take(self.handle, _ptr(rows), _ptr(weights), _ptr(offsets))
        return rows, weights, offsets


@contextlib.contextmanager
def piece_words(words):
    """Long documents folded into their bags ``words`` words at a time (featurize.cc's Encoder::fold_piece) while
    this runs (the process's setting: for tests, which fold short documents to compare their bags)."""
    before = _lib().ft_set_piece_words(int(words))
    try:
        yield
    finally:
        _lib().ft_set_piece_words(before)


def encode_texts(texts, table, ngrams, buckets, vocab_size, unk_id, unk_hash=UNK_HASH, form=TRAINING_FORM, check=None,
                 drop_labels=False):
    """``Featurizer.transform(texts)`` as (rows, weights, offsets), with ``table`` a :class:`CodeTable`
    (``form``: how text is read, as :func:`_lowered_utf8`, and its line breaks). ``check(chunk, first)``: called
    before each chunk of documents (``first``: the index of its first one) is encoded (features.Featurizer's memory
    check). ``drop_labels``: as :func:`_lowered_utf8`."""
    with _Encoder(ngrams, buckets, vocab_size, unk_id, unk_hash) as encoder:
        first = 0
        for chunk in _chunks(texts):
            if check is not None:
                check(chunk, first)
            first += len(chunk)
            buf, ends = _lowered_utf8(chunk, form, drop_labels)
            _check(encoder.lib.ft_encoder_add_text(encoder.handle, table.handle, buf, _ptr(ends), len(chunk), threads(),
                                                   _line_breaks(form)))
        return encoder.take()


def encode_ids(ids, lengths, to_id, to_hash, ngrams, buckets, vocab_size, unk_id, unk_hash=UNK_HASH):
    """The bags of counted documents (``Featurizer.fit(..., return_bags=True)``) as (rows, weights,
    offsets): token ``t`` is word ``to_id[ids[t]]`` with hash ``to_hash[ids[t]]``."""
    ids = np.ascontiguousarray(ids, dtype=np.int32)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    to_id = np.ascontiguousarray(to_id, dtype=np.int64)
    to_hash = np.ascontiguousarray(to_hash, dtype=np.int64)
    if (lengths < 0).any() or lengths.sum() != len(ids) or (len(ids) and (ids.min() < 0 or ids.max() >= min(len(to_id), len(to_hash)))):
        raise ValueError("ids and lengths do not match, or an id is outside to_id/to_hash")
    with _Encoder(ngrams, buckets, vocab_size, unk_id, unk_hash) as encoder:
        token_ends = np.cumsum(lengths)
        _check(encoder.lib.ft_encoder_add_ids(encoder.handle, _ptr(ids), _ptr(token_ends), len(lengths), _ptr(to_id),
                                              _ptr(to_hash), threads()))
        return encoder.take()


def bag_mean(table, rows, weights, offsets, out=None, add=False):
    """Each document's mean row, ``sum_e weights[e] * table[rows[e]]``, as float32 (n_docs, dim): the
    forward pass of prediction, summed in entry order as training's native operator does. ``add``: each sum goes on
    from what ``out`` holds, so that a document's entries given a slice at a time (each slice's rows gathered alone:
    scoring.CpuScorer) sum to the same bits as in one call."""
    if table.dtype != np.float32 or table.ndim != 2 or not table.flags.c_contiguous:
        raise ValueError("table must be a C-contiguous float32 matrix")
    rows = np.ascontiguousarray(rows, dtype=np.int32)
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n_docs = len(offsets) - 1
    if n_docs < 0 or offsets[0] != 0 or offsets[-1] != len(rows) or len(weights) != len(rows) or (np.diff(offsets) < 0).any():
        raise ValueError("offsets must run from 0 to the number of entries without going back")
    if out is None:
        if add:
            raise ValueError("add=True sums into out: give it")
        out = np.empty((n_docs, table.shape[1]), dtype=np.float32)
    if out.dtype != np.float32 or out.shape != (n_docs, table.shape[1]) or not out.flags.c_contiguous:
        raise ValueError("out must be a C-contiguous float32 (n_docs, dim) array")
    if _lib().ft_bag_mean(_ptr(table), table.shape[0], table.shape[1], _ptr(rows), _ptr(weights), _ptr(offsets),
                          n_docs, _ptr(out), threads(), int(bool(add))) != 0:
        raise ValueError("a bag row is outside the table")
    return out


def uniform_rows(seed, rows, dim, scale, out):
    """Fill ``out`` (len(rows), dim) float32 with the initial values of table ``rows`` (init_rows.py)."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if out.dtype != np.float32 or out.shape != (len(rows), dim) or not out.flags.c_contiguous:
        raise ValueError("out must be a C-contiguous float32 (len(rows), dim) array")
    _lib().ft_uniform_rows(int(seed) & 0xFFFFFFFFFFFFFFFF, _ptr(rows), len(rows), int(dim), float(scale), _ptr(out),
                           threads())
    return out


def changed_rows(seed, table, scale):
    """Numbers (int64, ascending) of the rows of ``table`` (C-contiguous float32 (rows, dim)) that differ
    from their initial value (init_rows.py); the numpy reference is compact.changed_rows."""
    if table.dtype != np.float32 or table.ndim != 2 or not table.flags.c_contiguous:
        raise ValueError("table must be a C-contiguous float32 (rows, dim) array")
    changed = np.zeros(len(table), dtype=np.uint8)
    _lib().ft_changed_rows(int(seed) & 0xFFFFFFFFFFFFFFFF, _ptr(table), len(table), table.shape[1], float(scale),
                           _ptr(changed), threads())
    return np.flatnonzero(changed)


def encode_selected(codes, starts, lengths, to_id, to_hash, ngrams, buckets, vocab_size, unk_id, bound, unk_hash=UNK_HASH):
    """The bags of chosen documents of a counted corpus, in order, as (rows, weights, offsets): document
    ``i`` is the ``lengths[i]`` varint-packed tokens from byte ``starts[i]`` of ``codes`` (see
    ``features.pack_ids``), value ``v`` being word ``to_id[v]`` with hash ``to_hash[v]``; ``bound`` is at least
    their number of features (entries). No checks: features.TokenBags makes the inputs."""
    rows, weights = np.empty(bound, np.int32), np.empty(bound, np.float32)
    offsets = np.empty(len(starts) + 1, np.int64)
    nnz = _lib().ft_encode_selected(_ptr(codes), _ptr(starts), _ptr(lengths), len(starts), _ptr(to_id), _ptr(to_hash),
                                    int(ngrams), int(buckets) if ngrams > 1 else 0, int(vocab_size), int(unk_id),
                                    int(unk_hash), _ptr(rows), _ptr(weights), _ptr(offsets))
    if nnz < 0:
        raise MemoryError("native featurization ran out of memory")
    return rows[:nnz], weights[:nnz], offsets
