"""Compressed input read stream after stream, as each format's own tool reads it: gzip (through zlib), bzip2, xz and
legacy .lzma. lines.decompressed tells the format (binary_data) and reads the data through :class:`Streams`: what
follows a stream is read where the tool would read another, NULs skipped where they are padding, and any other bytes
after the data refused in one line with the ``head -c`` that keeps the data (Python's GzipFile, BZ2File and LZMAFile
read on where they could and dropped the rest without a word)."""
import bz2
import io
import lzma
import re
import zlib

from .binary_data import PROBE_BYTES, lzma_stream_start, xz_stream_start
from .errors import FastTextError
from .shell_words import DECOMPRESS_COMMANDS, copied_down, new_file, shell_name, shell_word


# What a decompressor, or the read under it, raises on data it cannot read (bz2's: an OSError)
DECOMPRESS_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)

class _Inflate:
    """zlib's decompressor of gzip members with lzma's and bz2's interface (``needs_input``; input past what
    ``max_length`` let out kept here, not given back as zlib's ``unconsumed_tail``), for :class:`Streams`."""

    def __init__(self):
        self.zlib, self.tail = zlib.decompressobj(wbits=31), b""  # (31: a gzip header and trailer, both checked)

    needs_input = property(lambda self: not self.tail)
    eof = property(lambda self: self.zlib.eof)
    unused_data = property(lambda self: self.zlib.unused_data)

    def decompress(self, data, max_length):
        out = self.zlib.decompress(self.tail + data, max_length)
        self.tail = self.zlib.unconsumed_tail
        return out


class _Format:
    """How :class:`Streams` reads one format: ``decompressor()`` makes a stream's; ``starts(head)``: do the bytes
    ``head`` after a stream (and its NULs, where ``padding`` is not None) start another, as the format's own tool
    takes them; ``padding``: what the NULs after a stream must be a multiple of (None: NULs are no padding);
    ``refused``: what that tool does with other bytes after the data; ``extension``: its files'."""

    def __init__(self, decompressor, starts, padding, refused, extension):
        self.decompressor, self.starts, self.padding = decompressor, starts, padding
        self.refused, self.extension = refused, extension


# Each compressed format the readers read (binary_data tells them), and what may follow its first stream. Python's
# GzipFile and BZ2File read on after a stream where they could, and dropped the rest without a word (BZ2File any
# bytes that fail a stream's start; GzipFile called text after a member "Not a gzipped file (b'__')"), as LZMAFile
# did after xz and .lzma data: the file trained on fewer rows than it holds. A stream is read after another where its
# tool reads one: gzip -d and bzip2 -d by its magic bytes (or their start, where the data ends there: they say such a
# file is cut short, and so does the decompressor), xz by binary_data's rules. NULs after gzip data are skipped, as
# gzip -d and Python skip them (and a member after them read, as Python reads it); xz's stream padding too (a multiple
# of 4 bytes); bzip2 -d calls NULs "trailing garbage", as it does any other bytes after the data.
FORMATS = {
    "gzip": _Format(_Inflate, lambda head: re.match(rb"\x1f(\x8b|\Z)", head), 1,
                    "gzip -d ignores them, with a warning", ".gz"),
    "bzip2": _Format(bz2.BZ2Decompressor, lambda head: re.match(rb"BZh[1-9]|B(Zh?)?\Z", head), None,
                     "bzip2 -d ignores them, with a warning", ".bz2"),
    "xz": _Format(lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ), xz_stream_start, 4, "xz -d refuses them too", ".xz"),
    "lzma": _Format(lambda: lzma.LZMADecompressor(lzma.FORMAT_ALONE), lzma_stream_start, None,
                    "xz -d refuses them too", ".lzma"),
}


class Streams(io.RawIOBase):
    """The text of the gzip, bzip2, xz or .lzma data (``kind``, :data:`FORMATS`) ``raw`` starts with (binary_data
    told it), stream after stream; but a stream after the first must start as its format's tool takes one (for xz and
    .lzma, the rule that told the first: binary_data.xz_stream_start, lzma_stream_start), after NULs where they are
    padding (:meth:`_padding`), and other bytes after the data are refused, not read nor dropped
    (:meth:`_not_data_after`): liblzma starts an .lzma stream on 13 NULs (a dictionary of 0), and LZMAFile read NULs
    after .lzma data as empty streams, /dev/zero's without end; after xz data (FORMAT_XZ) it dropped other bytes
    without a word (an .lzma stream too), and ended in "corrupt or truncated" at padding shorter than a stream header.
    An lzma decompressor's MemoryError is said to be its .lzma header's dictionary where that is large
    (:meth:`_no_room`). ``raw`` is left open, as GzipFile and LZMAFile leave it, unless ``closes_raw`` (it is the
    stream's: :meth:`close` closes it); ``name`` and ``document`` are lines.decompressed's."""

    def __init__(self, raw, name, document=False, kind="lzma", closes_raw=False):
        self.raw, self.name, self.document, self.kind, self.closes_raw = raw, name, document, kind, closes_raw
        self.format = FORMATS[kind]
        self.decompressor = None
        self.pending = b""  # compressed bytes read and not yet given to the decompressor
        self.start = self.fed = 0  # where the stream starts in the data; what its decompressor was given of it
        self.failure = None  # the error a read ended in: every read after it ends in it

    def readable(self):
        return True

    def close(self):
        try:
            if self.closes_raw:
                self.raw.close()
        finally:
            super().close()

    def readinto(self, buffer):
        # (read again, a decompressor that failed said another error: liblzma's "Internal error", where a reader's
        # peek at the start had met "Corrupt input data" and gone on)
        if self.failure is not None:
            raise self.failure
        try:
            return self._decompressed_into(buffer)
        except DECOMPRESS_ERRORS as exc:
            self.failure = exc
            raise

    def _decompressed_into(self, buffer):
        while len(buffer):
            if (self.decompressor is None or self.decompressor.eof) and not self._next_stream():
                return 0
            ended = False
            if self.decompressor.needs_input and not self.pending:
                self.pending = self.raw.read1(PROBE_BYTES)
                ended = not self.pending  # (zlib may hold output still: it is asked once more)
            data, self.pending = self.pending, b""
            self.fed += len(data)
            try:
                out = self.decompressor.decompress(data, len(buffer))
            except MemoryError:  # (liblzma sets the header's dictionary aside as the stream starts)
                if self.dictionary <= _XZ_LARGEST_DICTIONARY:
                    raise
                raise FastTextError(self._no_room()) from None
            if ended and not out and not self.decompressor.eof:
                raise EOFError("Compressed file ended before the end-of-stream marker was reached")
            buffer[:len(out)] = out
            if out:
                return len(out)
        return 0

    def _next_stream(self):
        """Start the next stream's decompressor: False at the end of the data; refused where what follows a stream
        is no stream's start."""
        if self.decompressor is not None:
            self.pending = self.decompressor.unused_data
            self.start += self.fed - len(self.pending)
        head = self.pending + self.raw.read(max(PROBE_BYTES - len(self.pending), 0))
        if self.decompressor is not None:
            every = self.format.padding
            head, padding = self._padding(head) if every else (head, 0)
            if padding > _MOST_PADDING or every and padding % every or head and not self.format.starts(head):
                raise FastTextError(self._not_data_after(head, padding))
            self.start += padding
        if not head:
            return False
        self.decompressor = self.format.decompressor()
        lzma_alone = self.kind == "lzma"
        self.pending, self.fed, self.dictionary = head, 0, int.from_bytes(head[1:5], "little") if lzma_alone else 0
        return True

    def _padding(self, head):
        """``(head, padding)``: the bytes after a stream without the NULs they start with (xz's stream padding,
        gzip's NULs: read on up to :data:`_MOST_PADDING` and a block, not to the end of /dev/zero's), those of the
        next stream's start there to tell; and how many NULs there were."""
        padding = 0
        while head and not head.strip(b"\x00") and padding <= _MOST_PADDING:
            padding += len(head)
            head = self.raw.read(PROBE_BYTES)
        rest = head.lstrip(b"\x00")
        padding += len(head) - len(rest)
        return (rest + self.raw.read(max(PROBE_BYTES - len(rest), 0)) if rest else rest), padding

    def _not_data_after(self, head, padding):
        """The error for bytes ``head`` (their first; none after NULs only) that follow the data's streams (and the
        ``padding`` NULs after them) and start none, or for more NULs than :data:`_MOST_PADDING`, where the format
        reads NULs as padding: its tool reads on through them, and this reader stops (as MAX_LINE_BYTES stops
        /dev/zero where no compression is)."""
        if padding > _MOST_PADDING:
            most = f"{_MOST_PADDING >> 20} MiB"
            said = (f"more than {most} of NUL bytes ({self.kind} -d reads on through NUL bytes after its data, where "
                    f"this program stops at {most})")
        else:
            what = ("NUL bytes" if not head.strip(b"\x00") else
                    f"bytes ({head[:8].hex(' ')}{' ...' * (len(head) > 8)})")
            said = f"{what} that are not {self.kind} data ({self.format.refused})"
        name, data = shell_name(self.name), ".lzma" if self.kind == "lzma" else self.kind
        keep = (f"pipe in the {data} data alone" if name == "stdin" else f"keep the {data} data alone (" + copied_down(
            self.name, f"head -c {self.start} {shell_word(name)} > {new_file(self.format.extension)}") +
            f") {self._then()}")
        return f"{self.name}: its {self.kind} data (its first {self.start} bytes) is followed by {said}; {keep}"

    def _no_room(self):
        """The error's text for a MemoryError of the decompressor where its header's dictionary is larger than xz's
        largest: a few bytes made to look like .lzma, or an encoder's with a huge dictionary. (A tiny file ended in
        "out of memory ... use a machine with more memory", which said nothing of the file.)"""
        name = shell_name(self.name)
        decompress = DECOMPRESS_COMMANDS["lzma"]
        where = (f"pipe it through {decompress}" if name == "stdin" else
                 copied_down(self.name, f"{decompress} {shell_word(name)} > {new_file('')}"))
        size = (f"{self.dictionary / (1 << 30):.1f} GiB" if self.dictionary >= 1 << 30 else
                f"{self.dictionary >> 20} MiB")
        return (f"{self.name}: its lzma header asks for a dictionary of {size}, more memory than is free: likely not "
                f".lzma data, or made with a huge dictionary; decompress it where that memory is ({where}) "
                f"{'' if name == 'stdin' else self._then()}").rstrip()

    def _then(self):
        """What to do with the file a command of an error wrote: give it, or for a ``document`` of a class folder
        (import-folders'), put it in the folder in the document's place (else the next run refused the document
        again)."""
        return "and put it in the class folder in its place" if self.document else "and give that file"


# The largest dictionary xz's presets write (-9's): a MemoryError under a larger one is said to be the header's
_XZ_LARGEST_DICTIONARY = 64 << 20
# The most NULs read after xz data (its stream padding) or gzip data: far above any a tool writes (a tape block's); more
# are refused, as MAX_LINE_BYTES stops /dev/zero where no compression is (gzip -d and Python's GzipFile read on)
_MOST_PADDING = 64 << 20
