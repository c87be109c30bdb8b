"""What bytes are when they start as compressed data, an archive or a binary table does: the one rule of the file
readers (:func:`fasttext_lib.lines.decompressed`) and of the endpoint (``serve_requests``: a request's body).

A format's magic bytes alone do not tell it: text may begin with them. ``BZh`` and ``PAR1`` are ASCII; gzip's, zstd's,
zip's, xz's and an .xls workbook's read as UTF-16 text (1F 8B is U+8B1F little-endian, U+1F8B big-endian; 28 B5 2F FD
is U+B528 U+FD2F; PK 03 04 is U+4B50 U+0403; D0 CF 11 E0 is Hangul). Legacy .lzma data (LZMA "alone": ``xz
--format=lzma``, ``lzma.FORMAT_ALONE``) has no magic at all, only a header whose fields have few values: its
properties byte, then a dictionary size with three zero bytes (5D 00 00 80 00: ``]`` and NULs). So each is told by its
own structure after its magic or header (:func:`binary_kind`), and data too short for that to tell by whether it reads
as text (:func:`_reads_as_text`). Standard library only: the endpoint imports this without the training stack."""
import codecs
import lzma
import re
import unicodedata
import zlib


# xz's magic bytes: of them alone, cut short, a file is xz data cut short (:func:`cut_magic_kind`)
_XZ_MAGIC = b"\xfd7zXZ\x00"
_MAGICS = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (_XZ_MAGIC, "xz"), (b"\x28\xb5\x2f\xfd", "zstd"),
           (b"PK\x03\x04", "zip"), (b"PAR1", "parquet"), (b"\xd0\xcf\x11\xe0", "xls"))
# What text may begin with that is told by its structure after the magic (bzip2 and Parquet by :func:`binary_kind`
# only where the data is whole: a file is told them by its magic, as ever)
TOLD_BY_STRUCTURE = frozenset({"gzip", "zstd", "zip", "xz", "xls", "lzma"})
# How much of the data's start is read to tell it: gzip's probe of deflate data, zstd's blocks
PROBE_BYTES = 1 << 16


def bom_charset(head):
    """The charset whose byte order mark starts ``head``: ``"utf-32"`` or ``"utf-16"``, else None. UTF-32-LE's (FF FE 00
    00) starts as UTF-16-LE's does: taken for it, a UTF-32 file was called UTF-16, and the conversion said (iconv -f
    UTF-16, charset=utf-16, --encoding utf-16) made of it text with a NUL beside every character."""
    if head[:4] in (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE):
        return "utf-32"
    return "utf-16" if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else None


def utf32_text(body):
    """Are the bytes ``body`` UTF-32 text: its byte order mark (:func:`bom_charset`), or without one
    (:func:`utf32_byte_order`)?"""
    return bom_charset(body) == "utf-32" or utf32_byte_order(body) is not None


def utf32_byte_order(body):
    """``"LE"`` or ``"BE"``: the bytes ``body`` read as UTF-32 text without a byte order mark in that order, every 4
    bytes a character whose top byte is zero (its fourth little-endian, its first big-endian), and the byte below it
    (its plane) zero in half of them at least, as in text mostly of the Basic Multilingual Plane; else None. UTF-16
    text has its letters there (``ab``: 61 00 62 00), or a line end (``a\\n``: 61 00 0A 00). Told by its whole 4-byte
    characters: a UTF-32 body cut within its last (a length not a multiple of 4) was told to send charset=utf-16."""
    units = len(body) // 4
    if not units:
        return None
    body = body[:4 * units]  # (its whole characters: a body cut short, its last cut, is UTF-32 still)
    return next((order for order, top, plane in (("LE", 3, 2), ("BE", 0, 1))
                 if not body[top::4].strip(b"\x00") and 2 * body[plane::4].count(0) >= units), None)


def cut_magic_kind(data, charsets=()):
    """``"xz"`` where the bytes ``data``, all of a file, are the first 1 to 5 of xz's magic (FD 37 7A 58 5A 00): a
    download stopped within them (they were called "not UTF-8 text", with an iconv from Windows-1252); else None. The
    rule: bytes that start a format's magic and end there are that format cut short where no text is those bytes: FD
    starts no UTF-8 character, so no UTF-8 file, and a Windows-1252 file of "ý", "ý7z" alone is none a user has; but
    bytes that read as text in one of ``charsets`` (those a user named: import-folders' ``--encoding``) are that text.
    Not gzip's 1F alone (a UTF-8 control character, which a file may hold), bzip2's ``B``, ``BZ``, ``BZh`` (ASCII
    text), nor zstd's 28 B5 2F (``(µ/`` in Windows-1252, and zstd data is refused whole or cut alike)."""
    if not data or len(data) >= len(_XZ_MAGIC) or not _XZ_MAGIC.startswith(bytes(data)):
        return None
    return None if any(_decodes(bytes(data), charset) for charset in charsets) else "xz"


def _decodes(data, charset):
    """Do the bytes ``data`` decode in ``charset``?"""
    try:
        data.decode(charset)
    except (ValueError, LookupError):
        return False
    return True


def magic_kind(head):
    """``"gzip"``, ``"bzip2"``, ``"xz"``, ``"zstd"``, ``"zip"``, ``"parquet"`` or ``"xls"``: the format whose magic
    bytes ``head`` starts with; ``"lzma"`` where its first 5 bytes are an .lzma header's first fields
    (:func:`_lzma_header_start`); else None."""
    kind = next((kind for magic, kind in _MAGICS if bytes(head[:len(magic)]) == magic), None)
    return kind or ("lzma" if _lzma_header_start(bytes(head[:5])) else None)


def binary_kind(body, charsets, whole=True):
    """What ``body`` is by its first bytes (:func:`magic_kind`), where what follows them bears it out; else None.
    ``charsets``: those the data may be text in. ``whole``: ``body`` is all of the data (a request's body), else its
    first bytes (a file's first :data:`PROBE_BYTES`). ``BZh`` and ``PAR1`` may begin a review in any charset: bzip2 is
    told by its block's magic too, Parquet by the same four bytes at its end (where ``whole``, else by their magic).
    Gzip, zstd, zip, xz, xls and .lzma are told by their structure (:func:`_gzip_start`, :func:`_zstd_start`,
    :func:`_zip_start`, :func:`_xz_start`, :func:`_ole2_start`, :func:`_lzma_start`); data too short for that to tell,
    by whether it reads as text in one of ``charsets``."""
    kind = magic_kind(body)
    if kind not in TOLD_BY_STRUCTURE and not whole:
        return kind
    if kind == "bzip2":
        return kind if re.match(rb"BZh[1-9](1AY&SY|\x17rE8P\x90)", body) else None
    if kind == "parquet":
        return kind if len(body) >= 8 and body.endswith(b"PAR1") else None
    told = {"gzip": _gzip_start, "zstd": _zstd_start, "zip": _zip_start, "xz": _xz_start, "xls": _ole2_start,
            "lzma": _lzma_start}.get(kind)
    started = told(body) if told else kind is not None
    if started is None:
        started = not any(_reads_as_text(body, charset, whole, kind) for charset in charsets)
    return kind if started else None


def _reads_as_text(body, charset, whole=True, kind=None):
    """Does ``body`` read as UTF-16 text in ``charset`` (one of UTF-16's; of UTF-32's too where it starts as an .lzma
    header, ``kind`` ``"lzma"``), its characters ones text holds: none a control character but a tab or a line end,
    none for private use? (A UTF-32 text's zero bytes pass the header's test: 'x' U+3000 in UTF-32-LE, ' hi' in
    UTF-32-BE. A short document of such text, import-folders --encoding utf-32-le, was refused as "corrupt or
    truncated lzma data"; real .lzma data has a character no text holds in UTF-32: its header's fields read as a
    NUL or beyond U+10FFFF.) (Where not
    ``whole``, a character cut short at its end is left undecoded.) Asked of data that starts as gzip, zstd, zip, xz
    or xls data does and is too short to tell by more. Only UTF-16 text begins with those bytes as characters a review
    starts with (U+8B1F, U+B528, U+4B50, Hangul); in another charset they are no review's start: under latin-1 or
    Windows-1252 zstd's magic and frame byte read as ``(µ/ý$``, under UTF-32 gzip's four bytes as unassigned U+88B1F,
    and such data, cut short, was answered as a review of them. In UTF-16 a header most often has a NUL or a control
    character still (gzip's, little-endian: U+0008). One that has none reads as the text it decodes to: the price of
    answering a UTF-16 review of a few characters that begins with those bytes."""
    if codecs.lookup(charset).name not in (_UTF16 + _UTF32 if kind == "lzma" else _UTF16):
        return False
    try:
        # (not an incremental decoder for whole data: UTF-16's refuses data without a byte order mark, which
        # bytes.decode reads as little-endian)
        text = body.decode(charset) if whole else codecs.getincrementaldecoder(charset)().decode(body)
    except ValueError:  # (UnicodeDecodeError, or a codec's plain UnicodeError)
        return False
    return not any(_not_text(c) for c in text)


_UTF16 = ("utf-16", "utf-16-le", "utf-16-be")  # (codecs.lookup's names: utf_16le, UTF-16LE and utf16 are these)
_UTF32 = ("utf-32", "utf-32-le", "utf-32-be")


def _not_text(character):
    """A control character but a tab or a line end, or one for private use: none is what a review's first few
    characters hold. (Not "unassigned": which are is the Unicode version's, so Python's, to say; U+2FFD is one in
    Python 3.11, not in 3.13.)"""
    category = unicodedata.category(character)
    return category == "Cc" and character not in "\t\n\r" or category == "Co"


# A gzip header's fixed part (RFC 1952: magic, method, flags, mtime, extra flags, OS), and the fewest bytes after a
# header that hold its deflate data's start for zlib to read (a stream's: 2 of an empty final block, its 8-byte trailer)
_GZIP_FIXED, _GZIP_AFTER_HEADER = 10, 8
_FHCRC, _FEXTRA, _FNAME, _FCOMMENT = 2, 4, 8, 16


def _gzip_start(body):
    """Does ``body``, which starts with gzip's magic bytes 1F 8B, start gzip data? Its header's method is 8 (deflate),
    no reserved flag is set, and zlib reads the header and the first deflate data after it without an error (data cut
    short is gzip still); where the body is too short for that (and shorter than a probe), its extra field's
    subfields fill the field (:func:`_gzip_subfields_fill`). Text can start with those two bytes: a charset=utf-16-le
    review whose first character is U+8B1F, a utf-16-be one's U+1F8B (Greek), and was refused as gzip; text that also
    passes all this is within gzip's header, or has made deflate's codes of its bytes, which text all but never does.

    None (too short to tell) where the body ends within its header or less than 8 bytes after it: no gzip whole, and
    nothing after its header for zlib to read. A header's flags can make it long: FEXTRA's length (XLEN) and FNAME's
    and FCOMMENT's NUL-terminated strings come from the bytes after them, and in a UTF-16 review from its text (an XLEN
    of thousands of bytes; a name with no NUL in CJK text), so zlib never reached deflate data to fail on. The line is
    there, at the header's end: a real gzip body whole, or cut short past its header, has deflate data that zlib
    tells as gzip's (or the header's CRC, FHCRC, that zlib checks), and is refused under every charset; one cut within
    its header (in its file name, say) is refused unless it reads as text in its charset (:func:`_reads_as_text`),
    not read as a review of garbage. A name's bytes alone cannot tell: a name is any bytes but NUL (latin-1)."""
    if body[2:3] not in (b"", b"\x08") or len(body) > 3 and body[3] & 0xE0:
        return False
    end = _gzip_header_end(body) if len(body) >= _GZIP_FIXED else None
    if end is None or len(body) < end + _GZIP_AFTER_HEADER:
        # (too short for zlib to tell: an extra field whose subfields do not fill it is text's, as a UTF-16 review's
        # bytes read as one most often are; past the header, zlib alone tells, as Python's gzip module reads a file
        # whose subfields do not fill its field, RFC 1952 or not). Not where the body is a whole probe and ends within
        # the header: gzip -d reads an extra field of up to 64 KiB of any bytes, and one that ran past the probe was
        # refused for bytes that are no subfields, the file read as binary
        return False if len(body) < PROBE_BYTES and _gzip_subfields_fill(body) is False else None
    probe = end + PROBE_BYTES
    try:
        zlib.decompressobj(wbits=31).decompress(body[:probe], PROBE_BYTES)
    except zlib.error:
        # Deflate data that zlib reads whole, under a trailer whose CRC or length is wrong, or a header's CRC that
        # is: gzip data damaged, refused as such by its reader. Deflate data that zlib fails on: damaged gzip data (a
        # bit flipped in a download) or text, told as data too short to tell is (None: by whether it reads as text
        # in a charset it may be in). Either was "not a text file (contains NUL bytes...)" in a file within the
        # probe, or damaged in its first 64 KiB, where past them it was "corrupt or truncated gzip data".
        return True if _deflate_data(body[end:probe]) else None
    return True


def _deflate_data(body):
    """Does zlib read ``body`` as raw deflate data (cut short or not) without an error?"""
    try:
        zlib.decompressobj(wbits=-15).decompress(body, PROBE_BYTES)
    except zlib.error:
        return False
    return True


def _gzip_header_end(body):
    """Where the gzip header that ``body`` starts with ends (its fixed part, then the fields its flags name: FEXTRA,
    its length XLEN as declared, FNAME, FCOMMENT, FHCRC), as zlib reads it; None where the body ends within it."""
    flags, at = body[3], _GZIP_FIXED
    if flags & _FEXTRA:
        if len(body) < at + 2:
            return None
        at += 2 + int.from_bytes(body[at:at + 2], "little")
    for flag in (_FNAME, _FCOMMENT):
        if flags & flag:
            nul = body.find(b"\x00", at)
            if nul < 0:
                return None
            at = nul + 1
    at += 2 if flags & _FHCRC else 0
    return at if at <= len(body) else None


def _gzip_subfields_fill(body):
    """Is the extra field of the gzip header that ``body`` starts with a series of subfields that fill it (SI1 SI2 LEN
    and LEN bytes each, RFC 1952 2.3.1.1)? True without FEXTRA; None where the body ends before that tells; False
    where they do not, as a UTF-16 text's bytes read as one seldom do."""
    at = _GZIP_FIXED
    if len(body) < at + 2:
        return None if len(body) < 4 or body[3] & _FEXTRA else True
    if not body[3] & _FEXTRA:
        return True
    end = at + 2 + int.from_bytes(body[at:at + 2], "little")
    at += 2
    while at < end:  # (each subfield's length is checked against the field's, whether or not the body holds it)
        if at + 4 > end:
            return False
        if at + 4 > len(body):
            return None
        at += 4 + int.from_bytes(body[at + 2:at + 4], "little")
    return at == end


# A zstd block's largest size (RFC 8878's Block_Maximum_Size: this, or the frame's window where that is smaller)
_ZSTD_BLOCK_MAX = 128 * 1024


def _zstd_start(body):
    """Does ``body``, which starts with zstd's magic bytes 28 B5 2F FD, start a zstd frame (RFC 8878)? Its frame
    header's reserved bit is clear, and each block header the body holds, up to the frame's last block, has a block
    type zstd has and a size within the frame's largest block; None (too short to tell) where the body ends before the
    last block: a UTF-16 review starting with U+B528 U+FD2F (U+28B5 U+2FFD big-endian) was refused as zstd, and its
    text read as block headers gives a block far too large within a few characters, or (big-endian) a first block of a
    few KB past a short review's end."""
    if len(body) < 5:
        return None
    descriptor = body[4]
    if descriptor & 0x08:
        return False
    single_segment = bool(descriptor & 0x20)
    content_size_bytes = (int(single_segment), 2, 4, 8)[descriptor >> 6]
    at = 5 + (not single_segment) + (0, 1, 2, 4)[descriptor & 3] + content_size_bytes
    if len(body) < at:
        return None
    if single_segment:  # (its window is its content's size; a 2-byte size counts from 256)
        window = int.from_bytes(body[at - content_size_bytes:at], "little") + (256 if content_size_bytes == 2 else 0)
    else:  # (the window descriptor: an exponent and an eighth of its power as mantissa)
        window = (8 + (body[5] & 7)) << ((body[5] >> 3) + 7)
    while at + 3 <= len(body):
        header = int.from_bytes(body[at:at + 3], "little")
        kind, size = header >> 1 & 3, header >> 3
        if kind == 3 or size > min(window, _ZSTD_BLOCK_MAX):  # (3: reserved)
            return False
        if header & 1:  # (the frame's last block)
            return True
        at += 3 + (1 if kind == 1 else size)  # (an RLE block holds one byte; a raw or compressed one, its size)
    return None


def _zip_start(body):
    """Does ``body``, which starts with a zip archive's magic bytes (``PK\\3\\4``), start a zip archive? Its first
    member's local header (30 bytes) gives its name's length, and the name after it has no NUL byte (a UTF-16 review
    starting with U+4B50 U+0403, or U+504B U+0304 big-endian, was refused as a zip archive: text with any ASCII
    character in it has a NUL byte in UTF-16); None (too short to tell) where the body ends before the name does."""
    if len(body) < 30:
        return None
    name_end = 30 + int.from_bytes(body[26:28], "little")
    if b"\x00" in body[30:name_end]:
        return False
    return True if len(body) >= name_end else None


def _xz_start(body):
    """Does ``body``, which starts with xz's magic bytes (FD 37 7A 58 5A 00), start an xz stream? Its stream header's
    flags (2 bytes: a zero byte, then the check's type in the low 4 bits) are followed by their CRC32, as liblzma
    requires; None (too short to tell) where the body ends before that CRC. UTF-16 text's bytes give those by chance
    once in 2**32."""
    flags = body[6:8]
    if flags[:1] not in (b"", b"\x00") or len(flags) == 2 and flags[1] & 0xF0:
        return False
    if len(body) < 12:
        return None
    return zlib.crc32(flags) == int.from_bytes(body[8:12], "little")


# An OLE2 compound file's header (MS-CFB 2.2: Excel 97-2003's .xls): its whole 8-byte magic, then at 28 its byte order
# FE FF, at 30 its sector shift (9: 512-byte sectors, version 3; 12: 4096, version 4), at 32 its mini sector shift 6
_OLE2_MAGIC, _OLE2_HEADER = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 34


def _ole2_start(body):
    """Does ``body``, which starts with an OLE2 compound file's first magic bytes (D0 CF 11 E0), start one (an .xls
    workbook)? The fixed fields of its header are there (:data:`_OLE2_MAGIC`); None (too short to tell) where the
    body ends before them. A UTF-16 review starting with U+CFD0 U+E011 (Hangul, little-endian) or U+D0CF U+11E0
    (big-endian) was refused as an Excel workbook."""
    fields = ((0, (_OLE2_MAGIC,)), (28, (b"\xfe\xff",)), (30, (b"\x09\x00", b"\x0c\x00")), (32, (b"\x06\x00",)))
    for at, values in fields:
        given = body[at:at + len(values[0])]
        if not any(value.startswith(given) for value in values):
            return False
    return True if len(body) >= _OLE2_HEADER else None


# An .lzma header (LZMA "alone", as liblzma reads it): a properties byte (lc, lp, pb: below 9 * 5 * 5), a dictionary
# size, an uncompressed size (8 bytes, all FF where unknown, as xz and Python write it); then the range coder's first
# 5 bytes, the first of them 00. The fewest bytes of any .lzma file: those 18, an empty input's where its size is known
# (as the LZMA SDK writes it); xz and Python write it unknown, and then an end marker: 23 bytes at least.
# Data that ends within the header is too short to be .lzma, a cut one but of the header xz and Python write (its size
# bytes all FF, as UTF-8 and UTF-32 text never are): UTF-32 text passes the header's first fields (' hi' in UTF-32-BE,
# 12 bytes), and was refused as "corrupt or truncated lzma data", not as the text it is. Past the header, its fields
# tell (:func:`_lzma_start`).
_LZMA_PROPERTIES, _LZMA_HEADER, _LZMA_START = 225, 13, 18
_LZMA_UNKNOWN_SIZE = (1 << 64) - 1
_LZMA_SMALLEST_DICTIONARY = 1 << 12
# The probe's dictionary, at most: it decompresses PROBE_BYTES, whose matches reach no further back, so its verdict is
# that of the header's dictionary. Taken from the header (FF FF FF FF: 4 GiB), it was allocated for a body of a few
# bytes; where it could not be (a small endpoint instance, ulimit -v), such a body was a 500, not a 400.
_LZMA_PROBE_DICTIONARY = 1 << 20


def _lzma_header_start(head):
    """Do the 5 bytes ``head`` start an .lzma header: a properties byte lzma has, and a dictionary size of 2**n or
    2**n + 2**(n-1) bytes, at least 4 KiB, or FF FF FF FF? (liblzma's own rule for a file it is asked to tell from xz:
    no size else is written, so other bytes are no .lzma file; and no encoder writes one below 4 KiB, xz's nor the LZMA
    SDK's. liblzma takes a size of 0, which NULs are: /dev/zero, read as endless empty .lzma streams, hung training.)
    Such a size has three zero bytes of four: no UTF-8 text's."""
    if len(head) < 5 or head[0] >= _LZMA_PROPERTIES:
        return False
    size = int.from_bytes(head[1:5], "little")
    if size < _LZMA_SMALLEST_DICTIONARY:
        return False
    smeared = (size - 1) & 0xFFFFFFFF
    for shift in (2, 3, 4, 8, 16):  # (liblzma's: the bits below the top one or two set, then one added)
        smeared |= smeared >> shift
    return size == 0xFFFFFFFF or (smeared + 1) & 0xFFFFFFFF == size


def _lzma_start(body):
    """Does ``body``, which starts with an .lzma header's first fields (:func:`_lzma_header_start`), start .lzma data?
    Its uncompressed size is unknown or below 2**38 bytes (liblzma's bound), the range coder's first byte is 00, and
    lzma decompresses its first bytes without an error; None (too short to tell) where the body ends before the range
    coder's first 5 bytes: past the header, or within the header xz and Python write (else no .lzma: the comment
    above). Text cannot give all that: in UTF-16 (``]`` is 5D 00) bytes 10 and 11 are one character, which a size
    below 2**38 makes a NUL and an unknown one U+FFFF, which no text holds. None too where lzma fails on the bytes
    after such a header: damaged .lzma data (a bit flipped in a download), unless it reads as text in a charset it
    may be in, as damaged gzip data is told (:func:`_gzip_start`); it was read as text, "not a text file (contains NUL
    bytes ...)", where xz -t --format=lzma says "Compressed data is corrupt"."""
    if len(body) <= _LZMA_HEADER and body[5:].strip(b"\xff"):
        return False  # (too short to be .lzma: it is what it otherwise is)
    size = int.from_bytes(body[5:_LZMA_HEADER], "little") if len(body) >= _LZMA_HEADER else None
    if size is not None and size != _LZMA_UNKNOWN_SIZE and size >> 38 or body[_LZMA_HEADER:_LZMA_HEADER + 1] not in (
            b"", b"\x00"):
        return False
    if len(body) < _LZMA_START:
        return None
    try:
        dictionary = min(int.from_bytes(body[1:5], "little"), _LZMA_PROBE_DICTIONARY).to_bytes(4, "little")
        lzma.LZMADecompressor(lzma.FORMAT_ALONE).decompress(body[:1] + dictionary + body[5:PROBE_BYTES], PROBE_BYTES)
    except lzma.LZMAError:
        return None
    return True


def lzma_stream_start(body):
    """Do the bytes ``body`` that follow an .lzma stream (its first :data:`PROBE_BYTES`, or all there are) start
    another, by the rule that told the first (:func:`_lzma_header_start`, :func:`_lzma_start`; one too short to tell
    is read, and its decompressor says it is cut short)? liblzma starts one on any 13 bytes with a dictionary of 0:
    NULs after .lzma data read as endless empty streams (compressed_streams.Streams)."""
    return _lzma_header_start(bytes(body[:5])) and _lzma_start(body) is not False


def xz_stream_start(body):
    """Do the bytes ``body`` that follow an xz stream and its stream padding start another, by xz's magic bytes and
    the header after them (:func:`_xz_start`; one too short to tell is read, and its decompressor says it is cut
    short)? Other bytes there are refused (compressed_streams.Streams), as xz -d refuses them."""
    return magic_kind(body[:6]) == "xz" and _xz_start(bytes(body[:12])) is not False
