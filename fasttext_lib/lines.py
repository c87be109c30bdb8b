"""Files to lines: every reader's first stage.

A local path or ``s3://`` URI is opened through :mod:`fasttext_lib.storage`; gzip, bzip2, xz and legacy .lzma are read
transparently (recognized by their first bytes and the structure after them: :mod:`fasttext_lib.binary_data`; read by
:mod:`fasttext_lib.compressed_streams`); zstd data, archives, workbooks, Parquet and text that is not UTF-8 are refused
in one line that says how to convert them; a line is taken whole, up to :data:`MAX_LINE_BYTES`.
Excel's ``sep=,`` first line is read as a blank one (:func:`excel_sep_line`, the endpoint's rule too, which asks
:mod:`fasttext_lib.columns` whether a table stands under another separator's line, and :func:`json_lines_start`
whether JSON Lines do: the one test of a JSON Lines input). Nothing else here knows about classes or columns.
"""
import csv
import io
import itertools
import json
import os
import re
import unicodedata

from . import storage
from .binary_data import (PROBE_BYTES, TOLD_BY_STRUCTURE, binary_kind, bom_charset, cut_magic_kind, magic_kind,
                          utf32_byte_order)
from .compressed_streams import DECOMPRESS_ERRORS, FORMATS, Streams
from .errors import FastTextError
from .shell_words import DECOMPRESS_COMMANDS, copied_down, new_file, shell_name, shell_word


def open_decompressed(uri):
    """``(stream, compression)``: a binary stream of the file's text, gzip, bzip2, xz and .lzma recognized as
    :func:`decompressed` tells them; closing the stream closes the file (a decompressed one left it to garbage
    collection: ``closes_raw``)."""
    raw = storage.open_read(uri, "rb")
    try:
        return decompressed(raw, uri, closes_raw=True)
    except BaseException:
        raw.close()
        raise


def regular_file_size(stream):
    """``(file descriptor, size)`` of the regular local file ``stream`` reads (uncompressed), as it is now; ``None``
    for anything else (an S3 object, whose reads are pinned to one version; a pipe; a stream with no descriptor)."""
    import stat

    try:
        fd = stream.fileno()
        status = os.fstat(fd)
    except (OSError, AttributeError, ValueError):  # (io.UnsupportedOperation is both an OSError and a ValueError)
        return None
    return (fd, status.st_size) if stat.S_ISREG(status.st_mode) else None


def check_not_shorter(opened, uri, ended=True):
    """Refuse a file that got shorter while it was read (``opened``: :func:`regular_file_size` at its start). A file
    truncated or rewritten in place (``>``) meanwhile ends early, and its end was read as the end of the data: a run
    then trained on part of it, silently (predict checks the same). ``ended``: the whole file was read (else: its
    reading failed, and a record cut short by the change reads as a malformed one; the change is the cause to name)."""
    if opened is None:
        return
    fd, size = opened
    try:  # at the end of the file, the position is every byte there was when it was read
        read = os.lseek(fd, 0, os.SEEK_CUR) if ended else os.fstat(fd).st_size
    except OSError:
        return
    if read < size:
        raise FastTextError(f"{uri} changed while it was read: it is shorter than when it was opened ({read} of its "
                            f"{size} bytes{' were there to read' if ended else ' are left'}); run again once nothing "
                            f"writes to it")


class _Prepended(io.RawIOBase):
    """``head`` (bytes already read) and then the rest of the binary stream ``rest``."""

    def __init__(self, head, rest):
        self.head, self.rest = head, rest

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self.head[:len(buffer)] if self.head else self.rest.read1(len(buffer))
        self.head = self.head[len(data):] if self.head else b""
        buffer[:len(data)] = data
        return len(data)

    def close(self):
        self.rest.close()
        super().close()


# What a file may be text in where its first bytes are those of compressed data or an archive and what follows them is
# too short to tell (binary_data.binary_kind): UTF-16, refused as such (utf16_text), where its first line is UTF-16 as
# utf16_text tells it (a NUL beside every ASCII character); else none, and it is that format cut short, as a stopped
# download leaves it. (A UTF-16 reading alone let a 4-byte "PK\3\4" through as a review, and refused gzip's or zstd's
# first bytes as Windows-1252 text with an iconv of the compressed file, or as a binary file.)
_FILE_CHARSETS = ("utf-16-le", "utf-16-be")


def decompressed(raw, name, charsets=None, document=False, closes_raw=False):
    """``(stream, compression)``: ``raw`` (a binary stream), decompressed if it starts as gzip, bzip2, xz or legacy
    .lzma data (``compression`` is then their name, else None); ``name`` is the file's, for errors. zstd data, archives
    and binary tables are refused (``document``: ``name`` is a document of a class folder, import-folders': the advice
    is to take it out of the folder, :func:`_refused`). ``charsets``: those the data may be text in where the user named
    one (import-folders' ``--encoding``), else told from its first line (:data:`_FILE_CHARSETS`). Gzip, xz, .lzma, zstd,
    zip and .xls are told by their structure after their magic bytes or header (binary_data.binary_kind, the endpoint's
    rule too), not by those alone: a UTF-16 file without a byte order mark (with one, it starts FF FE or FE FF, no
    magic) whose first characters are U+B528 U+FD2F or U+4B50 U+0403 was refused as zstd or a zip archive, one starting
    with U+8B1F read as gzip ("corrupt or truncated gzip data"); they are read on as the UTF-16 text they are, and
    refused as such (utf16_text: with the iconv that converts them). A file of the first 1 to 5 bytes of xz's magic
    alone is xz data cut short (binary_data.cut_magic_kind: no text but in a charset the user named), read as such to
    say so ("corrupt or truncated xz data"), not called Windows-1252 text. ``closes_raw``: closing the stream closes
    ``raw`` (:func:`open_decompressed`'s file), else ``raw`` is the caller's to close (stdin, say) where it is
    decompressed."""
    if not hasattr(raw, "peek"):
        raw = io.BufferedReader(raw)
    head = raw.peek(6)[:6]
    if len(head) < 6:  # peek reads once: a pipe's first write can be shorter than xz's magic (gzip sent as
        head = raw.read(6)  # b"\x1f" then the rest was read as text). Read up to it, and give it back.
        raw = io.BufferedReader(_Prepended(head, raw))
    kind = magic_kind(head)
    if kind in TOLD_BY_STRUCTURE:  # (read whole, not peeked: a pipe's first write may end before what tells)
        probe = raw.read(PROBE_BYTES)
        raw = io.BufferedReader(_Prepended(probe, raw))
        if charsets is None:
            charsets = _FILE_CHARSETS if utf16_text(probe.split(b"\n", 1)[0], name, 1, "") else ()
        kind = binary_kind(probe, charsets, whole=len(probe) < PROBE_BYTES)
    kind = kind or cut_magic_kind(head, charsets or ())  # (1 to 5 bytes of xz's magic, and no more: cut short)
    if kind in ("zip", "parquet", "xls", "zstd"):
        head = raw.peek(512) if kind == "zip" else b""
        raw.close()
        raise FastTextError(f"{name}: {_refused(kind, head, name, document)}")
    if kind in FORMATS:
        return io.BufferedReader(Streams(raw, name, document, kind, closes_raw)), kind
    return raw, None


# What the readers decompress themselves: said where they refuse what they do not (zstd data, archives).
READ_DIRECTLY = "gzip, bzip2, xz and .lzma"


def _refused(kind, head, name, document):
    """The error's text for zstd data, a zip archive (starting with ``head``), a Parquet file or an .xls workbook
    (``kind``). For a ``document`` of a class folder (import-folders), how to take it out of the folder: a single
    file's fix (``zstd -d``, unzip, a conversion to CSV) left the .zst, the zip or the table in it, refused again by
    the rerun (or a table's CSV copy written as one document's text)."""
    if kind == "zip":
        first = _zip_first_member(head)
        kind = "xlsx" if _is_workbook(first) else kind
    if document:
        return _in_a_class_folder(kind, name)
    if kind == "zip":
        return _zip_contents(first)
    if kind == "zstd":
        return _zstd_hint(name)
    what, how = _TABLES[kind]
    return f"is {what}, not text; {how}"


_EXCEL_CSV = ("save it as 'CSV UTF-8' in Excel, or convert it (pandas: pd.read_excel(path).to_csv(new_path, "
              "index=False))")
# Binary tables: what each is, and how to convert it. An Excel workbook (.xlsx) is a zip archive too, whose "unzip it"
# would give XML; a Parquet file is a pandas frame saved with to_parquet (a Hugging Face dataset's files).
_TABLES = {
    "xlsx": ("an Excel workbook (.xlsx)", _EXCEL_CSV),
    "xls": ("an Excel workbook (.xls)", _EXCEL_CSV),
    "parquet": ("a Parquet file", "convert it to CSV first (pandas: pd.read_parquet(path).to_csv(new_path, "
                                  "index=False); pandas reads Parquet with pyarrow: pip install pyarrow)"),
}


def _in_a_class_folder(kind, name):
    """:func:`_refused`'s text for a document of a class folder: zstd data decompressed in its place (``--rm``: the
    .zst, left beside its copy, was refused again), a zip's documents extracted beside it and the zip moved out, a
    table moved out (a class folder holds one text document per file; a table of labeled rows is a training file). The
    unzip command never asks nor replaces: a document of the name of one of the zip's files (its own, or two of the
    zip's of one name in different folders of it, -j) stays, and the zip's file stays in the zip, moved out."""
    quoted = shell_word(name)
    if kind == "zstd":
        out = "" if name.endswith(".zst") else f" -o {shell_word(_without_zst(name) or name + '.txt')}"
        return (f"is zstd-compressed, which this program does not read; decompress it in its place first (zstd -d "
                f"--rm {quoted}{out}: --rm removes the compressed file, which the next run would refuse again) "
                f"({READ_DIRECTLY} files are read directly)")
    if kind == "zip":  # (-n: unzip asked before replacing a document of a member's name; -o would replace it)
        return (f"is a zip archive; a class folder holds one document per file: extract its files beside it (unzip "
                f"-n -j {quoted} -d {shell_word(os.path.dirname(name) or '.')}: -n keeps a file already there of a "
                f"name the zip holds, and leaves the zip's in it, which unzip -l lists) and move the zip out of the "
                f"folder, where the next run would refuse it again")
    return (f"is {_TABLES[kind][0]}, not a text document; move it out of the class folder (a class folder holds one "
            f"document per file; a table of labeled rows is converted to CSV and given to train as it is)")


def _zstd_hint(uri):
    """The error's text for zstd data: the standard library has no zstd before Python 3.14, so it is refused (it read
    as "not a text file (contains NUL bytes ...)"), with the command that decompresses it."""
    name = shell_name(uri)
    if name == "stdin":  # (predict's reviews piped in)
        return ("is zstd-compressed, which this program does not read; decompress it first (pipe it through zstd -dc) "
                f"({READ_DIRECTLY} data are read directly)")
    if name.endswith(".zst"):
        command = f"zstd -d {shell_word(name)}"  # (writes the name without .zst)
    else:
        command = f"zstd -d {shell_word(name)} -o {new_file(os.path.splitext(_without_zst(name) or name)[1])}"
    return (f"is zstd-compressed, which this program does not read; decompress it first ({copied_down(uri, command)}) "
            f"and give that file ({READ_DIRECTLY} files are read directly)")


def _without_zst(name):
    """``name`` without an ending ``.zst`` in other case than zstd's (``.ZST``), else None: zstd -d names its output
    itself by a lowercase ``.zst`` only, and refuses any other ("unknown suffix ... Specify it with -o"), so a command
    for ``reviews.ZST`` without ``-o`` failed as pasted."""
    return name[:-4] if name.lower().endswith(".zst") and not name.endswith(".zst") else None


def _zip_first_member(head):
    """The name of the first member of a zip archive that starts with ``head`` (its local file header holds it), or
    ``""``."""
    size = int.from_bytes(head[26:28], "little")
    return head[30:30 + size].decode("utf-8", "replace") if len(head) >= 30 + size else ""


def _is_workbook(first):
    """Whether a zip archive whose first member is named ``first`` is an Excel workbook (.xlsx)."""
    return first == "[Content_Types].xml" or first.startswith(("xl/", "docProps/", "_rels/"))


def _zip_contents(first):
    """The error's text for a zip archive whose first member is ``first`` (not a workbook): what to do. Not read
    directly: a zip's list of members is at its end (no streaming from S3 or a pipe), and Kaggle's downloads hold one
    CSV as often as several (train.csv, test.csv)."""
    holding = f" (its first file: {first})" if first else ""
    return (f"is a zip archive{holding}; unzip it first and give the file inside it (unzip -l lists them; "
            f"{READ_DIRECTLY} files are read directly)")


def _converting(command, uri, extension, compression=None, reads_stdin=False):
    """``command`` (a filter of text, to UTF-8) run on the text of ``uri``, into ``new{extension}``; for input piped in
    (``stdin``), the pipe. Compressed data (``compression``) is decompressed into it: the command was given the
    compressed file (iconv -f CP1252 -t UTF-8 reviews.csv.gz), and converted its bytes into garbage. ``reads_stdin``:
    ``command`` reads stdin, not a file named after it."""
    name, decompress = shell_name(uri), DECOMPRESS_COMMANDS.get(compression)
    if name == "stdin":
        return f"pipe it through {f'{decompress} | ' if decompress else ''}{command}"
    fed = (f"{decompress} {shell_word(name)} | {command}" if decompress else
           f"{command} {'< ' if reads_stdin else ''}{shell_word(name)}")
    return copied_down(uri, f"{fed} > {new_file(extension)}")


def _iconv(source, uri, extension, compression=None):
    """The command that converts ``uri`` (its text, where ``compression`` is its data's) from ``source`` to UTF-8; for
    input piped in (``stdin``), the pipe."""
    return _converting(f"iconv -f {source} -t UTF-8", uri, extension, compression)


def _not_text(raw, uri, lineno, table=True, compression=None):
    """The error for a line holding NUL bytes: UTF-16 text (:func:`utf16_text`) and tar archives are named, with how to
    convert them; else a binary file. ``table``: a file of rows (Excel's 'Unicode Text' may be one: its pandas
    conversion is said too), else of vectors (converted to a .vec, no CSV). ``compression``: the file's data's."""
    where, name = f"{uri}:{lineno}: ", shell_name(uri)
    if lineno == 1 and raw[257:262] == b"ustar":  # a tar header's magic (a .tar.gz arrives here decompressed)
        if name == "stdin":  # (predict's reviews piped in: no file to name)
            return (f"{uri}: is a tar archive; extract the file from it first and pipe that in (tar -xOf ARCHIVE FILE "
                    f"| ...) ({READ_DIRECTLY} data of one CSV or text file are read directly)")
        extract = copied_down(uri, f"tar -xf {shell_word(name)}")
        return (f"{uri}: is a tar archive; extract the file from it first ({extract}) "
                f"and give that file "
                f"({READ_DIRECTLY} files of one CSV or text file are read directly)")
    utf32 = _utf32_source(raw) if lineno == 1 else None
    if utf32:  # (no Excel nor pandas hint: Excel writes no UTF-32)
        unmarked = "" if utf32 == "UTF-32" else " (no byte order mark)"
        return (f"{where}not a text file this program reads: it is UTF-32 text{unmarked}; convert it to UTF-8 first, "
                f"e.g. {_iconv(utf32, uri, '.csv' if table else '.vec', compression)}")
    utf16 = utf16_text(raw, uri, lineno, ".csv" if table else ".vec", compression)
    if utf16 and not table:
        return f"{where}not a text file this program reads: {utf16}"
    if utf16:  # Excel's "Unicode Text" (tab-separated) and PowerShell's > write UTF-16
        return (f"{where}not a text file this program reads: {utf16} (Excel's 'Unicode Text' is tab-separated: "
                f"pandas: {pandas_conversion(_UTF16_TABS)})")
    return f"{where}not a text file (contains NUL bytes; UTF-16 text or a binary file?)"


def _utf32_source(raw):
    """iconv's name of the UTF-32 text a file's first line ``raw`` (up to its \\n byte, which is a character's first
    byte in little-endian, its last in big-endian) is in: ``UTF-32`` by its byte order mark, ``UTF-32LE`` or
    ``UTF-32BE`` without one (binary_data.utf32_byte_order, and every character one of text: a binary file of small
    32-bit numbers reads as control characters); else None. (Without a mark such a file was "UTF-16 text or a binary
    file?")"""
    if bom_charset(raw) == "utf-32":
        return "UTF-32"
    for order, body in (("LE", raw[:-1] if raw.endswith(b"\n") else raw), ("BE", raw)):
        if utf32_byte_order(body) == order:
            try:
                text = body.decode(f"utf-32-{order.lower()}")
            except UnicodeDecodeError:
                return None
            return f"UTF-32{order}" if all(c.isprintable() or c in "\t\r\n" for c in text) else None
    return None


def utf16_text(raw, uri, lineno, extension, compression=None):
    """What a line holding NUL bytes (``raw``, line ``lineno`` of ``uri``, ``compression`` its data's) is when it is
    UTF-16 text, and how to convert it (to ``new{extension}``): "it is UTF-16 text; convert it to UTF-8 first, e.g.
    iconv ..."; ``None`` when it is not (a binary file's bytes, a stray NUL). UTF-16 is its byte order mark starting the
    file, or without one, a NUL beside every ASCII character."""
    mark = bom_charset(raw) if lineno == 1 else None
    if mark == "utf-32":  # (its mark, FF FE 00 00, starts as UTF-16's)
        return None
    bom = mark == "utf-16"
    # (a UTF-16LE line after the first starts with the \n's NUL; the first line's NUL is its own: stripped, a UTF-16BE
    # file's first line, 00 5F 00 5F ..., counted as little-endian, and the iconv said garbled the whole file)
    body = raw[2:] if bom else raw if lineno == 1 else raw.lstrip(b"\x00")
    odd, even = body[1::2].count(0), body[0::2].count(0)
    # (two NULs at least: UTF-16 puts one beside every ASCII character, so a line of two has two; a short UTF-8 line
    # with one stray NUL, "ok\0", was called UTF-16, and the iconv it gave garbles the whole file)
    if not (bom or (len(body) >= 4 and max(odd, even) >= 2 and 2 * max(odd, even) >= len(body) // 2
                    and min(odd, even) <= max(odd, even) // 8)):
        return None
    source = "UTF-16" if bom else "UTF-16LE" if odd >= even else "UTF-16BE"
    return (f"it is UTF-16 text{'' if bom else ' (no byte order mark)'}; convert it to UTF-8 first, e.g. "
            f"{_iconv(source, uri, extension, compression)}")


# Decodes what is UTF-8 as UTF-8 and every other byte as Windows-1252 (a file of both: rows typed or pasted in UTF-8, and
# rows a Windows program wrote), from stdin to stdout.
_MIXED_FIX = ("python3 -c \"import codecs,sys; codecs.register_error('cp1252', lambda e: (e.object[e.start:e.end]"
              ".decode('cp1252', 'replace'), e.end)); sys.stdout.buffer.write(sys.stdin.buffer.read().decode('utf-8', "
              "'cp1252').encode())\"")


_BEYOND_ASCII = re.compile(rb"[\x80-\xff]")


def _utf8_beyond_ascii(raw):
    """Does the line ``raw`` hold a character beyond ASCII written as UTF-8 (beside bytes that are not UTF-8)?"""
    return any(c > "\x7f" and c != "\ufffd" for c in raw.decode("utf-8", "replace"))


def reads_as_windows_1252(raw):
    """Do the bytes ``raw`` decode as Windows-1252 (Excel's plain 'CSV', Windows programs)? Not where they hold a byte
    it leaves undefined (0x81, 0x8d, 0x8f, 0x90, 0x9d). A file's line here, an endpoint's body in serve_requests."""
    try:
        raw.decode("cp1252")
    except UnicodeDecodeError:
        return False
    return True


def _not_utf8(raw, uri, lineno, exc, utf8_line=None, compression=None):
    """The error for a line that is not UTF-8: a line that reads as Windows-1252 (Excel's plain 'CSV' on Windows, Latin
    letters and curly quotes in one byte each) says how to convert from it. ``utf8_line``: the number of an earlier
    line that holds characters beyond ASCII in UTF-8, if any. When it or this line does, the file mixes the two, and
    converting it all from Windows-1252 (iconv) garbles its UTF-8 (``’`` became ``â€™``, three unknown words, silently):
    the line gives the command that converts only the bytes that are not UTF-8. ``compression``: the file's data's."""
    message = (f"{uri}:{lineno}: not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1}; "
               f"re-encode the file as UTF-8")
    if not reads_as_windows_1252(raw):
        return message + ")"
    stem = re.sub(r"\.(gz|bz2|xz|lzma)$", "", uri.lower())
    if utf8_line is not None or _utf8_beyond_ascii(raw):
        where = f"line {utf8_line if utf8_line is not None else lineno}"
        fix = _converting(_MIXED_FIX, uri, os.path.splitext(stem)[1], compression, reads_stdin=True)
        return (f"{message}: the file mixes UTF-8 ({where}) and Windows-1252, as rows pasted from Windows programs "
                f"are; converting it all from Windows-1252 would garble its UTF-8; convert the other bytes only: {fix})")
    if not stem.endswith((".csv", ".tsv")):  # (a .vec or fastText-format file: Excel and pandas are no help there)
        extension = os.path.splitext(stem)[1] or ".txt"
        return (f"{message}: it reads as Windows-1252, as Windows programs write it; convert it: "
                f"{_iconv('CP1252', uri, extension, compression)})")
    return (f"{message}: it reads as Windows-1252, as Excel's 'CSV' and Windows programs write it; save it as 'CSV "
            f"UTF-8' in Excel, or convert it: {_iconv('CP1252', uri, '.csv', compression)}, or pandas: "
            f"{CP1252_PANDAS})")


# Python's codecs that decode bytes to text but are no charset text is written in (escapes, IDNA's and punycode's
# domain-name forms, the codec that decodes nothing, the one that needs a table): codecs.lookup finds them and
# bytes.decode runs them (unicode_escape read the six characters "caf\\xe9" as "café")
_PYTHON_ONLY_CODECS = frozenset({"unicode-escape", "raw-unicode-escape", "punycode", "idna", "undefined", "charmap",
                                 "mbcs", "oem"})


class NoCharset(ValueError):
    """A name of one of Python's codecs that is no charset text is written in; ``codec``: Python's name of it."""

    def __init__(self, codec):
        super().__init__(f"Python's {codec} codec is no text charset")
        self.codec = codec


def text_codec(name):
    """The codec (``codecs.CodecInfo``) that reads text written in the charset ``name``: UTF-8, UTF-16 with its BOM,
    latin-1, cp1252, Shift JIS... The one rule for a charset a user names (import-folders' ``--encoding``, a request's
    ``charset``). A ``LookupError`` for a name Python does not know, :class:`NoCharset` for one of its codecs that
    is no charset: its transforms (rot13, base64, hex, zlib: ``_is_text_encoding`` False) and
    :data:`_PYTHON_ONLY_CODECS`."""
    import codecs

    try:
        codec = codecs.lookup(name)
    except (TypeError, ValueError):  # (not a str; a NUL or a lone surrogate in it: no codec's name either)
        raise LookupError(f"unknown encoding: {name!r}") from None
    if not getattr(codec, "_is_text_encoding", True) or codec.name in _PYTHON_ONLY_CODECS:
        raise NoCharset(codec.name)
    return codec


def pandas_conversion(options):
    """The pandas line an error advises to convert a whole file read with ``options`` (``"sep=';'"``) to a CSV file
    training reads: every line as it is, a header row or none. Read as a header, a headerless file's first row
    (Sentiment140's "0","1467810369",...; GLUE's CoLA, gj04<TAB>1<TAB><TAB>...) had repeated values renamed (0.1) and
    empty ones named (Unnamed: 3); and a review "NA", "null" or "None" was NaN, written back empty."""
    return (f"pd.read_csv(path, {options}, header=None, dtype=str, keep_default_na=False)"
            f".to_csv(new_path, index=False, header=False)")


CP1252_PANDAS = pandas_conversion("encoding='cp1252'")
_UTF16_TABS = "encoding='utf-16', sep='\\t'"  # (Excel's "Unicode Text": as the line shows it, \t written out)


# Every reader takes a line whole before parsing it. fastText takes lines of any length; this bound (far
# above any review: CSV fields stop at 16 Mi characters) stops input with no line breaks in it (a binary
# file, /dev/zero, text whose lines end in a lone \r) from being read into memory until it runs out.
MAX_LINE_BYTES = 64 << 20


class DecodedLines:
    """Decoded physical lines, counted exactly (each line is decoded on its own, so a bad byte is
    reported at its own line, never at the end of a read buffer). ``every_lines_bom``: a BOM starting any line is
    dropped (where files were joined); else only the first line's, the file's (a ``.vec`` word line's is its word's).
    ``table``: the lines are rows of data, not vectors (:func:`_not_text`)."""

    def __init__(self, stream, uri, compression, every_lines_bom=True, table=True):
        self.stream, self.uri, self.compression, self.lineno = stream, uri, compression, 0
        self.compressed = compression  # the file's data's, for the commands its errors give (line_blocks' too)
        self.every_lines_bom, self.table = every_lines_bom, table
        self.ended = False  # the stream's end was read
        self.utf8_line = None  # the first line that holds characters beyond ASCII (_not_utf8)
        self.failed = False  # the decompressor failed, or the data past a refused line was looked at (damage)
        self.cut = False  # the line last read goes on past what was read of it (longer than MAX_LINE_BYTES)

    def __iter__(self):
        while True:
            try:
                raw = self.stream.readline(MAX_LINE_BYTES + 1)
            except DECOMPRESS_ERRORS as exc:
                if self.compression is None:
                    raise
                self.failed = True
                raise FastTextError(_corrupt(self.uri, self.compression, self.lineno + 1, exc)) from None
            if not raw:
                self.ended = True
                return
            self.lineno += 1
            if b"\x00" in raw:
                raise self._refused(_not_text(raw, self.uri, self.lineno, self.table, self.compressed))
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                self.cut = True
                raise self._refused(f"{self.uri}:{self.lineno}: line longer than {MAX_LINE_BYTES >> 20} MiB; "
                                    f"expected one document per line (a binary file, or lines that end in a lone \\r?)")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise self._refused(_not_utf8(raw, self.uri, self.lineno, exc, self.utf8_line,
                                              self.compressed)) from None
            if self.utf8_line is None and not raw.isascii():  # (a BOM too: UTF-8's)
                self.utf8_line = self.lineno
            # the file's BOM, or one starting a line where Windows files were joined (cat a.csv b.csv): its class was
            # another class that printed the same
            if line.startswith("\ufeff") and (self.every_lines_bom or self.lineno == 1):
                line = line.lstrip("\ufeff")
                if not line:  # the file's last bytes are a BOM (the whole file, or after its last \n): no line
                    return  # more, as line_blocks reads it
            yield line

    def _refused(self, said):
        """The error for the line just read, ``said``; or the damage of the compressed data past it (:meth:`damage`)."""
        return FastTextError(self.damage() or said)

    def damage(self):
        """Where the line last read, or a record that ends there, is refused: the error for the compressed data, where
        it is found damaged past it (:func:`damaged_past`; the line is likely what the damage decompressed to), else
        None; None too once the decompressor has failed, or this was asked."""
        if self.compression is None or self.failed:
            return None
        self.failed = True
        return damaged_past(self.stream, self.uri, self.compression, self.lineno - self.cut)


def _corrupt(uri, compression, lineno, exc):
    """The error for ``compression`` data whose decompressor failed (``exc``) at line ``lineno`` of its text."""
    return f"{uri}:{lineno}: corrupt or truncated {compression} data ({exc})"


# How much of the text after a line that fails a check is decompressed to tell whether the data is damaged, by format:
# as far as its damage shows. gzip's deflate gives garbage up to its member's end, where its CRC is; bzip2's CRC is its
# block's (900 kB before its run-length step, which text seldom expands), and lzma's decoder (.lzma, xz) fails within
# KiB of the garbage it gives. Each is a wait before a genuine text error is said: 64 MiB of bzip2 took 5 s, for a
# line 1 said at once before (gzip decompresses over ten times as fast).
_DAMAGE_LOOKAHEAD = {"gzip": 64 << 20, "bzip2": 8 << 20, "xz": 8 << 20, "lzma": 8 << 20}


def damaged_past(stream, uri, compression, lineno, rest=b""):
    """The error (:func:`_corrupt`) for the ``compression`` data of ``stream`` where its decompressor fails within the
    next :data:`_DAMAGE_LOOKAHEAD` bytes of its text (at the line counted from line ``lineno``, the last ended, then
    ``rest``, the bytes read past it); else None. Damaged compressed data decompresses to garbage before its
    decompressor fails (.lzma has no check; gzip's is at its end): a bit flipped in an .lzma file gave "not UTF-8 text
    ... iconv ... f.lzma" or "not a text file (contains NUL bytes ...)", where xz -t says it is corrupt."""
    newlines, read, lookahead = rest.count(b"\n"), 0, _DAMAGE_LOOKAHEAD[compression]
    try:
        # (read as DecodedLines' readline and line_blocks read it, a buffer at a time: a decompressor's error drops
        # the text of the read it ends, and larger reads named an earlier line than the other reader did)
        while read < lookahead and (text := stream.read1(io.DEFAULT_BUFFER_SIZE)):
            newlines, read = newlines + text.count(b"\n"), read + len(text)
    except DECOMPRESS_ERRORS as exc:
        return _corrupt(uri, compression, lineno + newlines + 1, exc)
    except FastTextError:  # (bytes after the data, refused: the line's own error is said first)
        pass
    return None


_BOM_AFTER_LINE_END = re.compile("\n\ufeff+")

# Excel's separator hint: a first line "sep=," (before the header) that Excel writes and reads to pick the separator.
# (Its separator is a character of the line: "sep=\r\n" names none, and was read as a file separated by \r.)
_EXCEL_SEP = re.compile(r"sep=([^\r\n])\r?\n?")


def reads_as_excel_sep(line):
    """Does ``line`` read as Excel's separator line, ``sep=`` and one character (its line end aside)? Whether it is
    that line is :func:`excel_sep_line`'s to say."""
    return _EXCEL_SEP.fullmatch(line) is not None


def excel_separator(line):
    """The separator ``line`` names when it reads as Excel's separator line (:func:`reads_as_excel_sep`) and names one
    Excel separates fields by, a punctuation or symbol character (``,``, ``;``, ``|``, ``^``...) or a tab; else None.
    A letter, digit or space is none: ``sep= `` or ``sep=a`` above short reviews is a review, where every reader refused
    the file as separated by that character (``great food``: two names a space separates)."""
    match = _EXCEL_SEP.fullmatch(line)
    sep = match and match.group(1)
    return sep if sep and (sep == "\t" or unicodedata.category(sep)[0] in "PS") else None


def excel_sep_line(line, uri, following, lineno=1):
    """Is ``line`` (a file's or a body's first line, BOM removed) Excel's separator hint? The one rule of the file
    readers (:func:`without_excel_sep`, :func:`line_blocks`) and the endpoint (serve_requests._excel_sep_blank), and
    of a line that reads so after blank lines (``lineno`` > 1: :func:`past_a_sep_review`, training's
    formats._refuse_a_sep_line). ``following``: the lines after it (an iterable; their line ends dropped
    or not). ``sep=,``: True (the caller reads it as a blank line, keeping line numbers; it was "cannot detect the
    format", and predict answered it and the header as reviews), and so is a tab's (tab-separated files are read).

    Another separator's (``sep=;``) is Excel's only above a table (:func:`_under_excel_sep`). Above a table of that
    separator: an error that says how to convert the file. Above a comma- or tab-separated table: True, the table read
    as it is, the line as a blank one (hand-made: Excel writes the separator it uses; taken for a review, the header and
    rows under it were answered as reviews, one a line, and predict refused the file). Above JSON Lines: an error, to
    remove it (no JSON object, nor a table's line; training said that no table followed it, predict "not a JSON object",
    the endpoint advised a semicolon table's conversion: one refusal of all three now). Else False: a review that reads
    ``sep=;`` (one column of reviews: a CSV writer leaves it unquoted), answered in its place, where predict refused the
    file. A line that names no separator of Excel's (:func:`excel_separator`: ``sep=a``, ``sep= ``): False, a review.

    ``lineno``: the line ``line`` is, which an error names and its conversion skips with the lines above it
    (``skiprows=1`` read that line as the table's header). After blank lines no line is Excel's, and none is read as
    a blank one, ``sep=,``'s neither: above a table of its separator it is refused with the conversion, above a comma
    or tab table or JSON Lines refused, to be removed (:func:`_excel_sep_to_remove`; a ``sep=,`` above any lines too);
    else (reviews) False. A line naming another separator than a semicolon table's under it (``sep=|``; ``sep=,``
    after blank lines) is refused with the table's conversion, skipping it, by every reader alike."""
    sep = excel_separator(line)
    if sep is None:
        return False
    if sep in (",", "\t") and lineno == 1:
        return True
    under = _under_excel_sep(sep, following)
    if under == "its own table":
        raise FastTextError(f"{uri}:{lineno}: Excel's separator line sep={sep}: the file is {sep!r}-separated; only "
                            f"{_READ_AND_CONVERT}{pandas_conversion(f'sep={sep!r}, skiprows={lineno}')})")
    if under == "a semicolon table":
        raise FastTextError(f"{uri}: line {lineno} reads {sep_line(sep)} (Excel's separator line) above a "
                            f"semicolon-separated table, and it names another separator than the table's; only "
                            f"{_READ_AND_CONVERT}{pandas_conversion(f'sep={SEMICOLON!r}, skiprows={lineno}')})")
    if under == "JSON Lines" or (lineno > 1 and _no_record_after_blank_lines(sep, under)):
        raise _excel_sep_to_remove(uri, lineno, sep, under)
    return under == "a comma or tab table"


_READ_AND_CONVERT = "comma- and tab-separated files, JSON Lines and fastText format are read: convert it (e.g. pandas: "
SEMICOLON = ";"  # (the one separator besides a comma and a tab whose tables the readers tell: formats.semicolon_table)


def _no_record_after_blank_lines(sep, under):
    """Is a line that names Excel's separator ``sep`` after blank lines, above ``under`` (:func:`_under_excel_sep`'s
    verdict), no record of the lines it stands among? Above a comma or tab table; and a ``sep=,`` (or a tab's) above
    any lines (reviews, rows too few to tell a table by), which no CSV writer writes unquoted as a review: training
    refused it, where predict read it as a blank line and the endpoint answered it as an empty review."""
    return under == "a comma or tab table" or (sep in (",", "\t") and under == "reviews")


def _under_excel_sep(sep, following):
    """What a line naming Excel's separator ``sep`` is above, by the lines ``following`` it: ``"its own table"`` (a
    ``sep``-separated one; never a comma's or a tab's, which are read), ``"JSON Lines"`` (:func:`json_lines_start`,
    as predict and the endpoint tell them), ``"a comma or tab table"``, ``"a semicolon table"`` under another
    separator's line (``sep=|``: training said no ``|``-separated table followed it, predict and the endpoint refused
    the table alone), ``"reviews"`` (lines that are no table), or None (blank lines alone). The one
    verdict of :func:`excel_sep_line`."""
    opening = _table_opening(following)
    if opening is None:
        return None
    if json_lines_start(opening[0]):
        return "JSON Lines"
    if sep not in (",", "\t") and _separated_table(*opening, sep):
        return "its own table"
    if _comma_or_tab_table(*opening):
        return "a comma or tab table"
    return "a semicolon table" if sep != SEMICOLON and _separated_table(*opening, SEMICOLON) else "reviews"


def _excel_sep_to_remove(uri, lineno, sep, under):
    """The error for a line ``lineno`` that reads ``sep=`` above JSON Lines, or after blank lines above a comma or
    tab table (``sep=,`` above any lines: :func:`_no_record_after_blank_lines`; ``under``: :func:`_under_excel_sep`'s
    verdict), which is no record of what is under it (only a file's
    first line is Excel's): the file without it is read, so the error says to remove it. (After blank lines,
    training took a ``sep=;`` for a semicolon-separated file's first line and advised a conversion that read the comma
    rows as one field each, and a ``sep=,`` for no format; predict read the one as a malformed row of the table, the
    other as no row; the endpoint answered it and every row under it as reviews.)"""
    if under == "JSON Lines":
        return FastTextError(f"{uri}: line {lineno} reads {sep_line(sep)} (Excel's separator line, which names a "
                             f"table's separator) above JSON Lines, where it is no JSON object; remove that line")
    if under == "reviews":  # (training said "it is no labeled example": no reader reads it as one)
        return FastTextError(f"{uri}: line {lineno} reads {sep_line(sep)} (Excel's separator line) after blank lines, "
                             f"where only a file's first line is Excel's: it is no record; remove that line")
    other = "" if sep in (",", "\t") else ", and it names another separator than the table's"
    return FastTextError(f"{uri}: line {lineno} reads {sep_line(sep)} (Excel's separator line) after blank lines, "
                         f"above a comma- or tab-separated table: Excel reads that line only as a file's first{other}; "
                         f"remove that line")


def sep_line(sep):
    """Excel's separator line naming ``sep`` as an error shows it: ``sep=;``, a tab written ``sep=\\t`` (a tab in
    the line showed as spaces)."""
    return "sep=\\t" if sep == "\t" else f"sep={sep}"


def past_a_sep_review(lines, uri, anywhere=False):
    """``(blank, first, rest)`` of the lines of an input to label (an iterator; line ends dropped or not): ``first``,
    its first line that is not blank, and ``rest``, an iterator of those after it (lines read ahead put back);
    ``blank``, those above it. A first line that reads as Excel's (:func:`reads_as_excel_sep`) where the reader has
    not read it as a blank one (:func:`excel_sep_line`: a review) is one of ``blank`` too: what starts under it is
    judged as if it were blank, and read with it (a semicolon table or JSON Lines under it was answered as reviews, a
    row a review). After blank lines (no line of Excel's there: only the first is) such a line is refused where
    :func:`excel_sep_line` refuses it, above a table or JSON Lines, as training refuses it. The one rule of predict's
    files (predict_input._table) and the endpoint's bodies (serve_requests._judged_past_a_sep_review). ``anywhere``:
    the lines may start anywhere in a file (a Batch Transform mini-batch), where a ``sep=,`` or a tab's after blank
    lines above a comma or tab table may be the line of files joined with cat that start with it
    (formats.excel_sep_record): judged past, never refused (it was answered; refused, the mini-batch failed the job,
    wherever SageMaker cut the file)."""
    from .columns import HEADER_LOOKAHEAD

    blank, first = leading_blank_lines(lines)
    if first is None or not reads_as_excel_sep(first):
        return blank, first, lines
    if blank:
        following = list(itertools.islice(lines, HEADER_LOOKAHEAD))
        lines = itertools.chain(following, lines)
        if not (anywhere and _joined_files_line(first, following)):
            excel_sep_line(first, uri, following, len(blank) + 1)  # (after blank lines: an error, or False)
    more, after = leading_blank_lines(lines)
    return [*blank, first, *more], after, lines


def _joined_files_line(line, following):
    """Is ``line`` (after blank lines) ``sep=,`` or a tab's above a comma or tab table (``following``: the lines after
    it), as where files that start with Excel's line were joined (``cat a.csv b.csv``)?"""
    sep = excel_separator(line)
    return sep in (",", "\t") and _under_excel_sep(sep, following) in ("a comma or tab table", "reviews")


def json_integer(digits):
    """json's ``parse_int``: an integer of more digits than Python converts (4,300) is a float (inf beyond its range)
    rather than a ValueError. A line with such an id was taken for no JSON (predict answered its braces and keys as a
    review), training refused it, and the endpoint failed the request with a 500."""
    try:
        return int(digits)
    except ValueError:
        return float(digits)


def json_object_line(line):
    """Is ``line`` one JSON object (a line of JSON Lines: ``{"stars": 5, "text": "..."}``)?"""
    if not line.startswith("{"):
        return False
    try:
        return isinstance(json.loads(line, parse_int=json_integer), dict)
    except ValueError:
        return False
    except RecursionError:  # nested too deeply for json to read (it was a traceback): jsonl._json_objects names its line
        return line.rstrip().endswith("}")


def json_lines_start(line):
    """Does an input whose first line that is not blank is ``line`` read as JSON Lines (:func:`json_object_line`)?
    The one test of predict's files (predict_input._json_lines), the endpoint's ``text/csv`` bodies
    (serve_requests.csv_request) and what a ``sep=`` line stands above (:func:`excel_sep_line`); its start is looked
    at first, so that a first line of 60 MB that is no JSON is not copied whole (:func:`stripped_start`)."""
    return stripped_start(line, 1) == "{" and json_object_line(line.strip())


def _table_opening(lines):
    """``(first, rows)`` of ``lines`` (an iterable; line ends dropped or not): the first line that is not blank and
    those after it in the look-ahead that are not (columns.HEADER_LOOKAHEAD, as predict and the endpoint judge a table
    by); None when every line is blank."""
    from .columns import HEADER_LOOKAHEAD

    lines = (line.rstrip("\r\n") for line in lines)
    first = leading_blank_lines(lines)[1]
    if first is None:
        return None
    return first, [line for line in itertools.islice(lines, HEADER_LOOKAHEAD) if line.strip()]


def _separated_table(first, rows, separator):
    """Is the table that starts with ``first`` and ``rows`` (:func:`_table_opening`) one ``separator`` (not a comma or
    a tab) separates, as Excel writes under its line: ``first`` a header row of such a table, of names training knows
    or not (columns.separated_names: ``Titel;Bewertung;Sterne``), and at least half of ``rows`` with as many
    separators (formats.semicolon_table's test of a header row); or, headerless, rows with a class first
    (columns.class_rows)? Reviews under a review that reads ``sep=;``, a few with a semicolon, are not."""
    from .columns import class_rows, separated_names

    if not separated_names(first, separator):
        return class_rows([first] + rows, separator)
    return 2 * sum(row.count(separator) >= first.count(separator) for row in rows) >= len(rows)


def _comma_or_tab_table(first, rows):
    """Is the table that starts with ``first`` and ``rows`` (:func:`_table_opening`) comma- or tab-separated, as a
    ``sep=;`` that named the wrong separator stands above: ``first`` a header row (a TSV's: columns.tsv_header_line;
    a CSV's of column names training knows, columns.short_header, or of one text column, ``text``), or rows with a
    class first (columns.class_rows)?"""
    from .columns import class_rows, one_column_text_header, short_header, tsv_header_line

    try:
        names = next(csv.reader([first.lstrip("\ufeff")]), [])
    except csv.Error:
        names = []
    return (tsv_header_line(first) or len(names) >= 2 and short_header(names) or one_column_text_header(names)
            or any(class_rows([first] + rows, separator) for separator in ",\t"))


def without_excel_sep(lines, uri):
    """``lines`` (:class:`DecodedLines`) with a first line that is Excel's (:func:`excel_sep_line`) read as a blank
    one; the lines after it that tell are read ahead and handed out after it."""
    lines = iter(lines)
    first = next(lines, None)
    if first is None:
        return
    ahead = list(_read_ahead(lines)) if reads_as_excel_sep(first) else []
    yield "\n" if excel_sep_line(first, uri, ahead) else first
    yield from ahead
    yield from lines


def _read_ahead(lines):
    """The lines of the iterator ``lines`` that :func:`_table_opening` reads: the blank ones, the first that is not,
    and the look-ahead after it."""
    from .columns import HEADER_LOOKAHEAD

    blank, first = leading_blank_lines(lines)
    yield from blank
    if first is not None:
        yield first
        yield from itertools.islice(lines, HEADER_LOOKAHEAD)


def line_blocks(stream, name, compression=None, sink=None, reviews=False):
    """:func:`_line_blocks`, a first line that is Excel's (:func:`excel_sep_line`: ``sep=,``) read as a blank one.
    Another separator's is judged by the lines after it as training's reader judges it (:func:`without_excel_sep`),
    however many blocks they take: judged by the lines of its own block alone, a first row longer than a block left
    none, and ``sep=;`` over a comma table whose first review is long was answered as a review (and the row under it
    read as one more), where training read the table without it. ``reviews`` (predict's ``--format text``: every
    line a review, as the endpoint's text/plain reads them): a line that excel_sep_line refuses (above JSON Lines or
    its own table) is a review, answered in its place; it was refused, where the refusals advise ``--format text``."""
    blocks = _line_blocks(stream, name, compression, sink)
    held = []  # the blocks up to the first with a line, and those read ahead
    for block in blocks:
        held.append(block)
        if block[1]:
            break
    if held and held[-1][1] and reads_as_excel_sep(held[-1][1][0]):
        first = held[-1][1]
        if _excel_sep_or_review(first[0], name, _lines_after_first(held, blocks), reviews):
            first[0] = ""
    yield from held
    yield from blocks


def _excel_sep_or_review(line, uri, following, reviews):
    """:func:`excel_sep_line`'s verdict on ``line``; with ``reviews``, False (a review) where it refuses the line."""
    try:
        return excel_sep_line(line, uri, following)
    except FastTextError:
        if not reviews:
            raise
        return False


def _lines_after_first(held, blocks):
    """The lines after the first of the last block in ``held``, and then of ``blocks``, each block read kept in
    ``held``, to be handed out in its turn."""
    yield from itertools.islice(held[-1][1], 1, None)
    for block in blocks:
        held.append(block)
        yield from block[1]


def _line_blocks(stream, name, compression=None, sink=None):
    """``(size, lines)`` a block of the input at a time: ``size`` the block's bytes (whole lines), ``lines`` its
    lines decoded, without their ``\\n`` (a CRLF's ``\\r`` dropped too), the first line's BOM removed; ``sink(raw)``,
    if given, is called with each block's bytes (a bytes-like object) before its lines are handed out.

    The same checks and errors as :class:`DecodedLines` (UTF-8, no NUL, at most MAX_LINE_BYTES a line), at the
    speed of bulk decoding: a block is decoded at once, and only a block with a problem is read again
    line by line by :class:`DecodedLines` itself, which names the line. ``predict`` reads its input with it.

    A line longer than a block is gathered in one ``bytearray`` and decoded alone, without a copy of its bytes or of
    its text (:func:`_one_line`), and its bytes are let go before it is handed out: a line of 60 MB held ~5 bytes a
    byte of it (the bytes joined twice, the text split into a copy, the bytes kept beside it) before predict's memory
    check (Featurizer.check_room) could weigh it; now it is its text alone."""
    block_bytes = min(1 << 20, MAX_LINE_BYTES)  # a line within one block is never over the bound
    lineno, pending = 0, bytearray()  # lines handed out; the start of a line not yet complete
    utf8_line = None  # as DecodedLines.utf8_line, over the blocks handed out

    def fail(data):  # the same error DecodedLines gives for these bytes (they hold a problem), at their line numbers
        read = io.BytesIO(data)
        lines = DecodedLines(read, name, None)
        lines.lineno, lines.utf8_line, lines.compressed = lineno, utf8_line, compression
        try:
            for _ in lines:
                pass
        except FastTextError:  # (or the damage of the compressed data past the line, as DecodedLines says it)
            damaged = compression and damaged_past(stream, name, compression, lines.lineno - lines.cut,
                                                   data[read.tell():])
            if damaged:
                raise FastTextError(damaged) from None
            raise
        raise AssertionError(f"{name}: a block failed its checks but not line by line")  # pragma: no cover

    def read_decompressed():
        # A decompressor's read(n) that meets bad data raises and drops the text it had decoded before it,
        # text that DecodedLines has read line by line: the error named the block's first line, not the line
        # where the data goes bad. So read what decodes piece by piece, and on an error count its lines. (They are
        # not checked: they may be the damaged data's garbage, and DecodedLines says the damage past a line that
        # fails a check, damaged_past.)
        pieces, size = [], 0
        while size < block_bytes:
            try:
                piece = stream.read1(min(io.DEFAULT_BUFFER_SIZE, block_bytes - size))  # as DecodedLines' readline reads it
            except DECOMPRESS_ERRORS as exc:  # (pending holds no line end)
                newlines = sum(piece.count(b"\n") for piece in pieces)
                raise FastTextError(_corrupt(name, compression, lineno + newlines + 1, exc)) from None
            if not piece:
                break
            pieces.append(piece)
            size += len(piece)
        return b"".join(pieces)

    def decoded(raw):  # the lines of raw (whole lines; the last one may lack its \n at the end of the input)
        nonlocal utf8_line
        if raw.find(b"\n") > MAX_LINE_BYTES or (not raw.endswith(b"\n") and len(raw) > MAX_LINE_BYTES):
            fail(raw)
        try:
            lines = _one_line(raw) if raw.find(b"\n") in (-1, len(raw) - 1) else _split_lines(raw)
        except UnicodeDecodeError:
            fail(raw)
        if utf8_line is None and not raw.isascii():
            utf8_line = lineno + raw.count(b"\n", 0, _BEYOND_ASCII.search(raw).start()) + 1
        if sink is not None:
            sink(raw)
        return lines

    while True:
        chunk = stream.read(block_bytes) if compression is None else read_decompressed()
        if not chunk and not pending:
            return
        if b"\x00" in chunk:
            fail(bytes(pending) + chunk)
        cut = chunk.rfind(b"\n") + 1
        if chunk and cut == 0:  # no line ends in this chunk
            pending += chunk
            if len(pending) > MAX_LINE_BYTES:
                fail(pending)
            continue
        if pending:  # the line begun before this chunk ends in it (or ends the input): decoded alone
            first_end = chunk.find(b"\n") + 1
            pending += memoryview(chunk)[:first_end]
            size, lines, pending = len(pending), decoded(pending), bytearray()  # (its bytes let go here)
            lineno += len(lines)
            yield size, lines
            del lines
        else:
            first_end = 0
        if cut > first_end:
            raw = chunk[first_end:cut] if first_end else chunk[:cut] if cut < len(chunk) else chunk
            size, lines = len(raw), decoded(raw)
            del raw
            lineno += len(lines)
            yield size, lines
        pending = bytearray(memoryview(chunk)[cut:])


def _one_line(raw):
    """``[line]``: the one line of ``raw`` (bytes ending in its ``\\n``, or at the end of the input without it)
    decoded, its ``\\n``, a ``\\r`` before it and the BOMs it starts with (any line's, as :func:`_split_lines`)
    left out in the bytes, so that the text is decoded once and never copied; ``[]`` when it is only BOMs at the end
    of the input."""
    start = 0
    while raw.startswith(_BOM_BYTES, start):
        start += len(_BOM_BYTES)
    end = len(raw) - 1 if raw.endswith(b"\n") else len(raw)
    if end == len(raw) and start == end:  # (a file whose last bytes are a BOM: no line, as split_lines reads it)
        return []
    if end > start and raw[end - 1] == 13:  # \r
        end -= 1
    with memoryview(raw) as view:
        return [str(view[start:end], "utf-8")]


_BOM_BYTES = "\ufeff".encode()


def without_line_boms(text):
    """``text`` (a block of whole lines) without the BOMs that start any of its lines: the file's, or one where Windows
    files were joined (``cat a.txt b.txt``), which made its line's ``__label__`` a word of the review, its CSV row's
    quoted class no class, its JSON line no JSON."""
    text = text.lstrip("\ufeff")
    return _BOM_AFTER_LINE_END.sub("\n", text) if "\n\ufeff" in text else text


def _split_lines(raw):
    """The lines of ``raw`` (short ones: a block's, each under its size) decoded, as :func:`_one_line` gives each."""
    lines = without_line_boms(raw.decode("utf-8")).split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


# Lines that end in a carriage return alone (Excel's "CSV (Macintosh)", classic Mac OS) read as one long line.
LONE_CR_HINT = ("; its lines seem to end in a lone carriage return (\\r, an old Mac file): convert the line breaks "
                 "to \\n (e.g. tr '\\r' '\\n')")


def has_lone_cr(line):
    return "\r" in line.rstrip("\r\n")


def lone_cr_as_space(line):
    """``line`` with each ``\\r`` a space, for the readings that tell a table from reviews by its first lines: a lone
    ``\\r`` in an unquoted field stopped the csv module's reader there, and what it held was left unjudged."""
    return line.replace("\r", " ") if "\r" in line else line


def leading_blank_lines(it):
    """``(blank lines, first other line)`` taken from the iterator ``it`` (that line ``None`` if there is none):
    a file's format is judged by its first line with text."""
    blank = []
    first = next(it, None)
    while first is not None and (not first or first.isspace()):  # (strip() copied a first line of 60 MB)
        blank.append(first)
        first = next(it, None)
    return blank, first


def chain_lines(first, rest):
    yield from first
    yield from rest


_LEADING_SPACE = re.compile(r"\s*")  # (re's \s for str patterns is str.strip's whitespace: Py_UNICODE_ISSPACE)
_LEADING_BOMS_AND_SPACE = re.compile("\ufeff*\\s*")
_NON_SPACE = re.compile(r"\S")


def stripped_start(line, chars, boms=False):
    """``line.strip()[:chars]`` (with ``boms``: ``line.lstrip("\\ufeff").strip()[:chars]``), without a copy of the
    whole line: the format tests of predict's first line each stripped it whole, a copy of a 60 MB line each."""
    start = (_LEADING_BOMS_AND_SPACE if boms else _LEADING_SPACE).match(line).end()
    head = line[start:start + chars]
    # text goes on past the head: it is the stripped line's start as it is; else only whitespace follows it
    return head if _NON_SPACE.search(line, start + chars) else head.rstrip()
