"""fastText's ``.vec`` text format: :class:`WordVectors`, and ``.vec`` files read, checked and written.

A ``.vec`` file (what fastText's ``-pretrainedVectors`` reads and ``print-word-vectors`` / the
published wiki/crawl vectors are) is UTF-8 text::

    <count> <dim>
    <word> <v1> ... <vdim>          one line per word, values separated by whitespace

* :func:`read_vec` reads one (local or ``s3://``; gzip, bzip2, xz and .lzma recognized as lines.decompressed tells them,
  as the data reader does) as a stream and checks all of it, so a bad file is one ``error:`` line before
  training spends any time: the header, every line's value count (named by its line), numbers that
  are not numbers or not finite, non-UTF-8 text, a count that does not match the lines. Files of other formats are
  named as such (word2vec's binary format, a fastText ``.bin``, GloVe's text without a header, a model bundle).
  With ``keep`` (the training vocabulary) it holds only the rows of those words (those :class:`VocabularyMatch`
  may take, which pretrained.py's ``pretrained_rows`` chooses from): the published wiki and crawl files are 2 to
  4.5 GB of text, more than a notebook instance's memory, of which a run uses its vocabulary's share.
  :func:`check_vec_start` checks a file's header and first lines only, before the training data is read (a wrong
  file fails at once; the rest is checked as training reads the file, once the vocabulary is known).
  :func:`check_dim` refuses read vectors of another dimension.
* :func:`write_vec` writes :class:`WordVectors` as a ``.vec`` file, atomically (:func:`check_vec_output` checks
  its name first).

Using a file's vectors in training is pretrained.py's; a trained model's vectors and their queries are vectors.py's.
"""
import contextlib
import hashlib
import io
import os
import re
from dataclasses import dataclass, field
from typing import List

import numpy as np

from . import storage
from .columns import reads_as_number
from .errors import FastTextError, check_bool, refuse_standard_output
from .text import TRAINING_FORM, nfc, one_token
from .writers import compressing, refuse_a_name_not_written

_CHUNK_ROWS = 1 << 14  # rows parsed per block while reading (the blocks are joined once at the end)
_BLOCK_BYTES = 1 << 26  # and at most this many bytes per block (a wide file's blocks have fewer rows)
_HEADER = re.compile(r"^\s*(\d+)\s+(\d+)\s*$", re.ASCII)  # (fastText reads ASCII digits only: not ٢ ٣)


@dataclass
class WordVectors:
    """``words[i]``'s vector is ``vectors[i]`` (float32, ``(len(words), dim)``)."""

    words: List[str]
    vectors: np.ndarray
    source: str = ""
    sha256: str = ""  # of the file's (decompressed) text, recorded in the bundle
    index: dict = field(default=None, repr=False)
    # how the model these words are of reads text (text.UNICODE_FORMS; word_vectors): query words are read so
    unicode_form: object = field(default=TRAINING_FORM, repr=False)
    # how many words the file holds (read_vec with ``keep`` holds only some of them); None: len(words)
    words_in_file: int = None
    # where the words were read from, as the bundle records it (:func:`recorded_source`); "": ``source``
    recorded_source: str = ""

    def __post_init__(self):
        if self.vectors.ndim != 2 or self.vectors.shape[0] != len(self.words):
            raise ValueError(f"{len(self.words)} words but vectors of shape {self.vectors.shape}")
        if self.words_in_file is None:
            self.words_in_file = len(self.words)

    def __len__(self):
        return len(self.words)

    @property
    def dim(self):
        return self.vectors.shape[1]

    def release(self):
        """Drop the words and vectors (training calls it once they are in the table, when asked)."""
        self.words, self.vectors, self.index = [], np.zeros((0, self.dim), np.float32), None

    def __getitem__(self, word):
        if self.index is None:
            self.index = {w: i for i, w in enumerate(self.words)}
        return self.vectors[self.index[word]]

    def __contains__(self, word):
        if self.index is None:
            self.index = {w: i for i, w in enumerate(self.words)}
        return word in self.index



# ---------------------------------------------------------------- reading

def read_vec(uri, dim=None, keep=None, form=TRAINING_FORM):
    """Read and check a ``.vec`` file (local or ``s3://``, optionally gzip/bzip2/xz compressed), as a stream.

    ``dim``: the model's embedding size; a file of another dimension is refused (as fastText does).
    A word listed twice keeps its last vector (later lines overwrite earlier ones in fastText too).
    ``keep``: the vocabulary (tokens, e.g. a ``token_to_idx``) whose rows are wanted; every line is still
    checked, but only the rows :class:`VocabularyMatch` may take for those tokens are held (pretrained.py's
    ``pretrained_rows`` of them is that of the whole file, bit for bit), so memory is bounded by the vocabulary,
    not by the file. ``words_in_file`` counts them all. ``form``: the rule the model reads text by
    (text.UNICODE_FORMS), which says which token a word is (:class:`VocabularyMatch`).
    Every problem is a :class:`FastTextError` naming the file (and the line). ``~``: the home folder.
    """
    return _read(storage.expand_home(uri), dim, keep=keep, form=form)


def check_vec_start(uri, dim=None, lines=1000):
    """Check ``uri``'s header (and ``dim``) and its first ``lines`` word lines as :func:`read_vec` does, keeping
    nothing: a file of another format, dimension or encoding fails before the training data is read (the rest
    of the file is checked when it is read, once the vocabulary is known). Returns the file's dimension; None, and
    nothing read, for a pipe (:func:`_read_once_only`)."""
    uri = storage.expand_home(uri)
    _refuse_a_device(str(uri))
    if _read_once_only(uri):
        return None
    return _read(uri, dim, keep=(), max_lines=lines)


def _read_once_only(uri):
    """Is ``uri`` a local pipe, socket or device (``--pretrained-vectors <(zcat wiki.en.vec.gz)``: /dev/fd/N; /dev/stdin
    of a pipe), whose text can be read once? Checking its start used that up: the read of the vocabulary's rows then
    met "an empty file". Such a file is checked as it is read, once."""
    return storage.local_kind(uri) in ("a pipe", "a socket", "a device")


def _refuse_a_device(uri):
    """Refuse a local ``uri`` that is a device (a terminal, /dev/null: /dev/stdin of ``nohup``, cron or a forgotten
    ``<``): it holds no ``.vec``, and being read once only (:func:`_read_once_only`) it was not checked before the
    data; then its read waited for typing, or met "an empty file", once the data was read."""
    if storage.local_kind(uri) == "a device":
        real = os.path.realpath(uri)
        shown = uri if real == uri else f"{uri} ({real})"
        raise FastTextError(f"{shown} is a device, not a .vec file; give a .vec file, or pipe one in as standard input "
                            f"(/dev/stdin < wiki.vec, or zcat wiki.vec.gz | ...)")


def recorded_source(uri):
    """``uri`` as a bundle records where its vectors were read from (pretrained.describe): an ``s3://`` URI as given;
    a local file by its absolute path (``v/w.vec`` named nothing once the bundle was elsewhere), a name of an open
    file (/dev/stdin, /dev/fd/N of ``< w.vec``) by the file it is; a pipe or device as a stream, which no name
    reads again (its content is known by the recorded sha256). Called before the read: a pipe's name goes with it."""
    if storage.is_s3(uri):
        return uri
    if _read_once_only(uri):
        return f"a stream, read once ({uri})"
    path = os.path.abspath(uri)
    return os.path.realpath(path) if path.startswith(("/dev/", "/proc/")) else path


def _read(uri, dim, keep=None, max_lines=None, form=TRAINING_FORM):
    """:func:`read_vec`; with ``max_lines``, only that many word lines are read, and the file's dimension returned."""
    from .lines import DecodedLines, open_decompressed

    uri = str(uri)
    _refuse_a_device(uri)
    recorded = recorded_source(uri) if max_lines is None else ""
    try:
        stream, compression = open_decompressed(uri)
    except FastTextError as exc:
        raise _bundle_named(uri) or exc from None
    digest = hashlib.sha256()
    with stream:
        # (a word line's BOM is part of its word, as fastText reads it and write_vec wrote it: \ufeffgreat, a word of
        # a bundle trained before text.FORMED_BREAKS, was read back as great and replaced great's vector)
        lines = DecodedLines(_Hashing(stream, digest), uri, compression, every_lines_bom=False, table=False)
        rows = iter(lines)
        with _binary_vectors_named(uri, stream, lines):
            # (blank lines above the header are skipped, as fastText's ``in >> n >> dim`` skips them: "empty file",
            # of a file of vectors, was said of them)
            header = next((line for line in rows if line.strip()), None)
            if header is None:
                raise FastTextError(f"{uri}: empty file; a .vec file starts with a '<count> <dim>' line")
            header_line = lines.lineno
            match = _HEADER.match(header)
            if not match:
                raise FastTextError(_bad_header(uri, header, compression, header_line))
            # (inside: a header that damage to compressed data garbled, "2 0" or a dimension not the model's, is said
            # as the damage, as a malformed one is)
            count, file_dim = int(match.group(1)), int(match.group(2))
            if file_dim <= 0:
                raise FastTextError(f"{uri}:{header_line}: the header gives dimension {file_dim}; it must be positive")
            if dim is not None and file_dim != dim:
                raise _dim_error(uri, file_dim, dim)
        table = _Table(count, file_dim, keep, form)
        with _binary_vectors_named(uri, stream, lines, file_dim):
            _read_rows(uri, lines, rows, count, file_dim, table, max_lines)
    if max_lines is not None:
        return file_dim
    words, vectors = table.result()
    return WordVectors(words, vectors, source=uri, sha256=digest.hexdigest(), words_in_file=count,
                       recorded_source=recorded)


class VocabularyMatch:
    """Which of a ``.vec`` file's words start which of a vocabulary's rows: the one rule that :func:`read_vec`'s
    ``keep`` (the rows it holds) and pretrained.py's ``pretrained_rows`` (the rows it takes of them) both follow, so
    that a file read with ``keep`` gives the rows the whole file gives.

    Training reads text by its rule (``form``: text.UNICODE_FORMS, the model's; text.tokenize); fastText's vectors
    are of text as written. So a word starts the row of the token the rule reads it as: a ``.vec`` written with
    combining accents (``e`` + U+0301) the precomposed word's, ``Haus`` the row of ``haus``, ``❤️`` (U+2764 U+FE0F,
    the emoji style phones write) that of ``❤`` (text.MARKS drops variation selectors and direction marks), ``’`` that
    of ``'``, ``\ufeffgreat`` that of ``great``; a word the rule splits (``don’t``: don ' t) or drops (``“``) is no
    token's. A token's row starts from its own spelling's vector (the word in NFC is the token), the file's last line
    of it (a later line overwrites an earlier one, as in fastText) wherever the file lists it; else from the first
    other spelling the rule reads as it (``Haus`` before ``HAUS``, ``❤️`` before ``❤︎``: the published files list the
    most frequent first). A word that is a token itself (in NFC) is that token's only. ``<unk>`` (``<UNK>``) starts the
    row every unknown word shares, as the text ``<unk>`` is read as it (and export-vectors writes that row so).

    Give it the file's words in their order (:meth:`spelling`), then pick each token's vector (:meth:`chosen`)."""

    OWN, FOLDED = "own", "folded"

    def __init__(self, vocabulary, form=TRAINING_FORM):
        self.vocabulary = vocabulary  # tokens (a token_to_idx, a set)
        self.form = form
        self._folded = set()  # the tokens whose first other spelling has been met

    def spelling(self, word):
        """``(token, OWN or FOLDED)`` when the file's next word ``word`` gives a vector the rule may take for
        ``token`` (a later word of the same pair replaces it), else None."""
        form = nfc(word)
        if form in self.vocabulary:
            return form, self.OWN
        token = self._read_as(form)
        if token is not None and token in self.vocabulary and token not in self._folded:
            self._folded.add(token)
            return token, self.FOLDED
        return None

    def _read_as(self, word):
        """The one token the rule reads ``word`` (in NFC) as, else None (none, or several): text.one_token, which
        reads a word the rule can only lowercase (most words of a large file, in any script) without its passes."""
        return one_token(word, self.form)

    @classmethod
    def chosen(cls, taken):
        """token -> its value in ``taken`` (:meth:`spelling`'s pairs -> a value each, e.g. a line): its own
        spelling's, else its other one's."""
        tokens = {token: value for (token, kind), value in taken.items() if kind == cls.FOLDED}
        tokens.update((token, value) for (token, kind), value in taken.items() if kind == cls.OWN)
        return tokens


class _Table:
    """The rows read so far, in blocks allocated as rows arrive (never from the header's numbers alone: a header
    "20000 100000000000" would ask numpy for petabytes, a MemoryError traceback). With ``keep``, only the rows
    :class:`VocabularyMatch` may take for those tokens, a row for each of its spellings; a spelling met again
    overwrites its row."""

    def __init__(self, count, dim, keep, form=TRAINING_FORM):
        self.keep, self.dim = keep, dim
        # at most two rows a token: its own spelling's and another one's
        most = count if keep is None else min(count, 2 * len(keep))
        self.block_rows = max(1, min(most, _CHUNK_ROWS, _BLOCK_BYTES // (4 * dim)))
        self.words, self.blocks = [], []
        self.match = None if keep is None else VocabularyMatch(keep, form)
        self.slots = {}  # (with keep) VocabularyMatch.spelling's pair -> its row's slot

    def add(self, word, values):
        slot = len(self.words) if self.keep is None else self._slot_of(word)
        if slot is None:
            return
        if slot == len(self.words):
            self.words.append(word)
            if slot == len(self.blocks) * self.block_rows:
                self.blocks.append(np.empty((self.block_rows, self.dim), np.float32))
        else:
            self.words[slot] = word  # (the same spelling again, NFC or NFD: its vector wins, as in pretrained_rows)
        self.blocks[slot // self.block_rows][slot % self.block_rows] = values

    def _slot_of(self, word):
        """Where ``word``'s row goes (``len(words)``: a new one), or None when the vocabulary takes nothing of it."""
        spelling = self.match.spelling(word)
        return None if spelling is None else self.slots.setdefault(spelling, len(self.words))

    def result(self):
        """``(words, vectors)``: the rows held, one array."""
        filled = len(self.words) - (len(self.blocks) - 1) * self.block_rows if self.blocks else 0
        blocks = self.blocks[:-1] + [self.blocks[-1][:filled]] if self.blocks else [np.zeros((0, self.dim), np.float32)]
        self.blocks = []
        return self.words, np.concatenate(blocks) if len(blocks) > 1 else blocks[0]


def _bundle_named(uri):
    """The error for ``uri`` that is no file but a model bundle (a run's ``--output``, to start from its vectors):
    the command that exports them. ``None`` if it holds none (or cannot be looked at)."""
    try:
        if not storage.exists(storage.join(uri, "config.json"), forbidden_is_missing=True):
            return None
    except FastTextError:
        return None
    return FastTextError(f"{uri} is a model bundle, not a .vec file; export its word vectors first (python -m "
                         f"fasttext_lib export-vectors --model {uri} --output vectors.vec) and give that file")


def _read_rows(uri, lines, rows, count, file_dim, table, max_lines=None):
    """Check the word lines ``rows`` (the header read) and put their vectors in ``table`` (a :class:`_Table`);
    with ``max_lines``, stop after that many."""
    seen = 0
    for line in rows:
        # fastText separates a .vec line at ASCII whitespace only (bytes.split's set); str.split would
        # also cut at U+00A0, U+2028, U+3000, ..., which occur inside words of the published wiki vectors.
        encoded = line.encode("utf-8")
        parts = encoded.split()
        if not parts:
            continue  # a blank line (e.g. at the end) carries no word
        lineno = lines.lineno
        if seen == count:
            raise FastTextError(f"{uri}:{lineno}: more word lines than the {count} the header announces")
        if len(parts) == file_dim and encoded[:1].isspace():  # fastText would read the first value as the word
            raise FastTextError(f"{uri}:{lineno}: the line starts with whitespace: its word is empty or is "
                                f"whitespace, which a .vec file cannot hold; remove the line")
        if len(parts) != file_dim + 1:
            raise FastTextError(f"{uri}:{lineno}: expected a word and {file_dim} values, got {len(parts) - 1} "
                                f"value(s)")
        try:
            values = np.array(parts[1:], dtype=np.float32)
            if b"_" in encoded and any(b"_" in p for p in parts[1:]):  # Python reads 1_0 as 10; C (fastText) does not
                raise ValueError
        except ValueError:
            bad = next((p for p in parts[1:] if b"_" in p or not reads_as_number(p)), parts[1]).decode("utf-8")
            raise FastTextError(f"{uri}:{lineno}: {bad[:40]!r} is not a number") from None
        if not np.isfinite(values).all():
            bad = parts[1 + int(np.flatnonzero(~np.isfinite(values))[0])].decode("utf-8")
            raise FastTextError(f"{uri}:{lineno}: value {bad[:40]!r} is not finite (as float32)")
        table.add(parts[0].decode("utf-8"), values)
        seen += 1
        if seen == max_lines:
            return
    if seen != count:
        raise FastTextError(f"{uri}: the header announces {count} words but the file has {seen} "
                            f"(truncated?)")


_FASTTEXT_BIN_MAGIC = (793712314).to_bytes(4, "little")  # a fastText .bin model's first bytes (its file format's)
_TEXT_BYTES = frozenset(range(0x20, 0x7f)) | frozenset(b"\t\n\v\f\r")  # what a .vec line's values are made of


@contextlib.contextmanager
def _binary_vectors_named(uri, stream, lines, dim=None):
    """A text error (NUL bytes, not UTF-8, a malformed header or line) met in the block, in a binary file of vectors
    given as a ``.vec``, is said as what the file is instead: a fastText ``.bin`` model (its first bytes), or word2vec's
    binary format (``dim`` given: the header read, then a word and ``dim`` raw float32 values, on its first line). Else
    "not UTF-8 ...: convert it with iconv" (of raw floats) or "a binary file?" was all it said. A malformed line of
    compressed data found damaged past it is said to be the damage (``lines``: lines.DecodedLines.damage)."""
    try:
        head = bytes(stream.peek(2048)[:2048])
    except Exception:  # noqa: BLE001 (corrupt compressed data, a broken connection: the read below says what)
        head = b""
    try:
        yield
    except FastTextError:
        if dim is None and head.startswith(_FASTTEXT_BIN_MAGIC):
            raise FastTextError(f"{uri}: is a fastText binary model (.bin), not a .vec text file; give the .vec file of "
                                f"the same vectors (fastText publishes one beside each .bin: cc.en.300.vec.gz beside "
                                f"cc.en.300.bin.gz)") from None
        if dim is not None and lines.lineno <= 2 and _binary_values(head, dim):
            raise FastTextError(f"{uri}: is word2vec's binary format (a word, then its {dim} values as raw bytes), not "
                                f"a .vec text file; convert it to text (gensim: KeyedVectors.load_word2vec_format(path, "
                                f"binary=True).save_word2vec_format(new_path))") from None
        damaged = lines.damage()  # (a line of the damaged data's garbage: "expected a word and 3 values")
        if damaged:
            raise FastTextError(damaged) from None
        raise


def _binary_values(line, dim):
    """Is ``line`` (a file's first word line, raw) a word followed by bytes no number is written with? (Most of raw
    float32 bytes are not text; a text line with a stray NUL or Latin-1 letter has a few.)"""
    word = re.match(rb"[ \t\v\f\r]*[^ \t\n\v\f\r]+[ \t\v\f\r]", line)
    values = line[word.end():word.end() + 4 * dim] if word else b""
    return 4 * sum(byte not in _TEXT_BYTES for byte in values) >= max(len(values), 4)


def _bad_header(uri, header, compression=None, lineno=1):
    """The error for a first line that is no ``<count> <dim>`` header: for a word and its values (a file without the
    header, as GloVe's are) what to add; for lines that end in a lone \\r (an old Mac file), what to convert."""
    from .lines import LONE_CR_HINT, has_lone_cr

    text = f"{uri}:{lineno}: malformed .vec header {header.strip()[:60]!r}: expected '<count> <dim>' (two positive integers)"
    if has_lone_cr(header):
        return text + LONE_CR_HINT
    parts = header.encode("utf-8").split()
    # ("2 8.0", "2 8 1": a header gone wrong; a word that is a number, "2010 0.1 0.2 0.3 0.4", with four values or more)
    if (len(parts) < 3 or (reads_as_number(parts[0]) and len(parts) < 5)
            or not all(reads_as_number(p) and b"_" not in p for p in parts[1:])):
        return text
    dim = len(parts) - 1
    # (no command for a pipe: it would read the pipe twice, the second time empty)
    how = "" if storage.is_s3(uri) or _read_once_only(uri) else f": {_header_command(uri, dim, compression)}"
    return (f"{text}; it is a word and {dim} values: a file without the header line (GloVe's format); add the line "
            f"'<number of words> {dim}' at its top{how}")


def _header_command(uri, dim, compression):
    """The shell command that writes ``uri`` (a local file without the header line, ``compression``: as it was found
    by its bytes) with its header as ``new.vec``: the name quoted (a name with a space was cut into several), a
    compressed file read through its decompressor (``cat`` of one wrote its compressed bytes after the header)."""
    from .shell_words import DECOMPRESS_COMMANDS, shell_word

    name = shell_word(uri)
    # The count is of the lines the reader reads as words: all but those of ASCII whitespace only (_read_rows'
    # bytes.split), which is [:space:] in the C locale; a UTF-8 locale's also holds U+3000 and the other wide spaces,
    # and a line of one was left out of the count (formats.separator_bytes is str.split's set: not this one).
    count = "LC_ALL=C grep -c '[^[:space:]]'"
    if compression is None:  # (the file read once by grep, once by cat)
        return f"(echo \"$({count} {name}) {dim}\"; cat {name}) > new.vec"
    read = DECOMPRESS_COMMANDS[compression]  # (the command every hint that decompresses gives)
    return f"(echo \"$({read} {name} | {count}) {dim}\"; {read} {name}) > new.vec"


def _dim_error(uri, file_dim, dim):
    from .config import setting_said
    from .devices import MAX_TABLE_VALUES, table_fits

    # (the smallest table of that dimension, <unk> and one word, as config.py checks emsize: --emsize file_dim failed)
    if not table_fits(2, file_dim):
        return FastTextError(f"{uri}: the pretrained vectors have dimension {file_dim}, which no model can be trained "
                             f"with: even a table of 2 rows (<unk> and one word) of it is more than the "
                             f"{MAX_TABLE_VALUES:,} values MXNet can hold in one tensor (the largest dimension is "
                             f"{MAX_TABLE_VALUES // 2:,})")
    return FastTextError(f"{uri}: the pretrained vectors have dimension {file_dim} but the model's emsize is {dim}: "
                         f"they must be equal (train with {setting_said('emsize', file_dim)})")


def check_dim(pretrained, dim):
    """Refuse :class:`WordVectors` whose dimension is not the model's ``dim`` (fastText refuses them too)."""
    if pretrained.dim != dim:
        raise _dim_error(pretrained.source or "the pretrained vectors", pretrained.dim, dim)


class _Hashing(io.RawIOBase):
    """A readline-able wrapper that hashes what passes through."""

    def __init__(self, stream, digest):
        self._stream, self._digest = stream, digest

    def readline(self, size=-1):
        line = self._stream.readline(size)
        self._digest.update(line)
        return line

    def read1(self, size=-1):  # (lines.damaged_past's read, past a line refused)
        data = self._stream.read1(size)
        self._digest.update(data)
        return data

    def close(self):
        self._stream.close()
        super().close()


# ---------------------------------------------------------------- writing

def check_vec_output(uri, overwrite=False, overwrite_as=storage.OVERWRITE_ARGUMENT):
    """Fail fast (before anything is loaded): ``uri`` must not exist unless ``overwrite`` (the refusal says to pass
    ``overwrite_as``: this argument, or the command line's storage.OVERWRITE_FLAG), and must be writable, and not name a
    format it is not written in (a zip archive, writers.refuse_a_name_not_written: text under that name, which no
    zip tool opened)."""
    check_bool(overwrite, "overwrite")  # (overwrite="no", or papermill's text "False", replaced the file: it is true)
    if isinstance(uri, str) or hasattr(uri, "__fspath__"):
        refuse_a_name_not_written(uri, "a .vec file is written as text", ".vec")
    storage.check_output_file(uri, "vectors.vec", overwrite=overwrite, hint=storage.replace_with(overwrite_as))


def write_vec(vectors, uri, overwrite=False, on_written=None, overwrite_as=storage.OVERWRITE_ARGUMENT, beside=None):
    """Write :class:`WordVectors` as a ``.vec`` file (gzip, bzip2, xz or LZMA if ``uri`` ends in ``.gz``, ``.bz2``,
    ``.xz`` or ``.lzma``), atomically: the file appears whole or not at all. Values are written with 9 significant
    digits, which read back as the same float32. Refuses an existing ``uri`` unless ``overwrite`` (saying to pass
    ``overwrite_as``: :func:`check_vec_output`'s). Returns ``uri``.
    ``on_written``: called with the number of words once the file is in place (an error it raises puts back what
    ``uri`` was locally), after an S3 upload (storage.atomic_write's). ``~``: the home folder.
    ``beside``: ``(path, contents)``, a local file written with it as one set (storage.atomic_writes: both in place,
    or both as they were, whatever stops the write), holding ``contents(digest)``, bytes made of the ``.vec`` file's
    ``{"size", "sha256"}`` as written (notebook 04's record of it: written once the file was in place, a stop then put
    the earlier file back under the new file's record)."""
    uri = storage.expand_home(uri)  # (~: the home folder's, as the readers read it)
    refuse_standard_output(uri, "uri", "the word vectors", "a file")
    uri = str(uri)
    check_vec_output(uri, overwrite, overwrite_as)
    bad = next((w for w in vectors.words if not _writable_word(w)), None)
    if bad is not None:
        raise FastTextError(f"cannot write word {bad!r} to a .vec file: words may not be empty or contain ASCII "
                            f"whitespace or NUL, and must be UTF-8")
    written = on_written and (lambda: on_written(len(vectors)))
    if beside is None:
        with storage.atomic_write(uri, "wb", overwrite=overwrite, overwrite_as=overwrite_as,
                                  on_written=written) as raw:
            _write_rows(raw, vectors, uri)
        return uri
    path, contents = beside
    with storage.atomic_writes([uri, str(path)], overwrite=overwrite, overwrite_as=overwrite_as,
                               on_written=written) as (raw, other):
        counted = storage.Written(raw)  # (its size and sha256 as written)
        _write_rows(counted, vectors, uri)
        other.write(contents({"size": counted.size, "sha256": counted.sha256.hexdigest()}))
    return uri


def _write_rows(raw, vectors, uri):
    """:func:`write_vec`'s file: its header and rows into the binary file ``raw``, compressed as ``uri`` ends."""
    out = compressing(raw, uri)
    text = io.TextIOWrapper(out, encoding="utf-8", newline="\n")
    text.write(f"{len(vectors)} {vectors.dim}\n")
    # A block of rows at a time: tolist() of the whole table made a Python float of every value at once
    # (~620 MiB for 200k words x 100, several GB for a large vocabulary).
    for start in range(0, len(vectors), _CHUNK_ROWS):
        rows = vectors.vectors[start:start + _CHUNK_ROWS].tolist()
        for word, row in zip(vectors.words[start:start + _CHUNK_ROWS], rows):
            text.write(word + " " + " ".join(f"{v:.9g}" for v in row) + "\n")
    text.flush()
    text.detach()
    if out is not raw:
        out.close()


_SEPARATORS = re.compile(r"[ \t\n\v\f\r\x00]")  # what read_vec (and fastText) cuts a line at, and NUL (not text)


def _writable_word(word):
    """Does ``word`` read back from a ``.vec`` line as itself? Whitespace other than ASCII's (U+00A0 in the wiki
    vectors' words) does: read_vec and fastText keep it (a read .vec with such a word could not be written again)."""
    if not isinstance(word, str) or not word or _SEPARATORS.search(word):
        return False
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: a UnicodeEncodeError traceback halfway through the file
        return False
    return True
