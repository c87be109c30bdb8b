"""Fetch an archive into its partial download (``<archive>.part``): resumed with an HTTP ``Range`` request where an
earlier download stopped, written to disk as it arrives, and stopped in one line when the server is too slow, sends
more than the archive or the connection is lost (the ``.part`` kept for a rerun to resume). An archive the server
gzip-encodes again (Content-Encoding) is decoded; one it only labels gzip-encoded (the .tgz as it is) is not.
download.py verifies what was fetched.
"""
import contextlib
import os
import stat
import tarfile
import time
import zlib
from dataclasses import dataclass
from http.client import HTTPException
from typing import Optional

from .download_answers import (GZIP_ENCODINGS, a_range_of_the_encoding, announced_length, check_range,
                               content_encoding, labels_the_archive_as_sent, open_from_byte, page_error, page_kind,
                               range_sent, refuse_a_206_without_a_range, refuse_a_page, refuse_an_encoding,
                               sends_the_whole)
from .download_cache import bytes_to_resume_from, fail_verification, opened_to_read, refuse_a_folder, remove_if_there
from .download_retry import TransientError
from .errors import FastTextError
from .progress import bar

_CHUNK = 1 << 20  # the most read at a time
# A server that sends a byte now and then never trips download_answers' _TIMEOUT_S (each read gets something in
# time): fewer than _STALL_MIN_BYTES in _STALL_WINDOW_S (under ~0.5 KB/s: days for Yelp's 166 MB) stops the
# download, .part kept. The windows run across the pieces of a download (a server sending a few bytes per answer).
# The stop is a TransientError, retried (download_retry): a new connection is often a faster one (a congested route, a
# stuck node behind a CDN; curl --retry counts its too-slow stop transient too), and a server that stays slow costs at
# most a window per attempt.
_STALL_WINDOW_S = 120
_STALL_MIN_BYTES = 64 * 1024


def fetch(url, part, spec, progress):
    """Continue ``part`` up to ``spec.size`` bytes; return once the server has sent the rest of the archive.

    Its steps, in order: where to resume (the .part's size; from the start where it cannot begin the archive), the
    server's answer from there (the whole archive's instead where that answer cannot be spliced onto the .part: a
    range of the server's encoding, or one it gzips alone; asked for once to tell a gzip-labelled range that may be
    the encoding's, the range asked for again where it is not; from the start where the server refuses the range),
    where that answer's body goes (the answer checked: a page, another encoding, a range from elsewhere), the body
    copied into the .part as it arrives, and how it ended (damaged: the .part deleted; cut short: kept for a rerun to
    resume). An answer that is one piece of the archive (a 206 ending before its end: a server that limits what one
    answer holds) is followed by a request for the rest from where it ended, under the same progress bar and the same
    stall watch; a bad piece (its headers disagree, its body runs past its range) is refused, the .part kept as it
    was before it.
    """
    with contextlib.ExitStack() as bars:
        pbar = None
        stall = _StallWatch(url, spec)  # (one for all pieces: one per piece never saw tiny pieces sent slowly)
        _remove_a_part_no_archive_begins_as(part, spec)  # (first: a restart staged beside it is then the longer)
        _take_up_a_staged_restart(part, spec)
        whole = False  # the next request asks for the whole archive: a range answering a resume could not be used
        telling = told = False  # it asks so to tell what a gzip-labelled range is (_the_whole_instead); was asked
        while True:
            offset = bytes_to_resume_from(part, spec)
            if offset == spec.size:  # complete already, only verification is left
                return
            response = open_from_byte(url, 0 if whole else offset, part)
            if response is None:  # the server rejects our range (416): the .part is not a prefix
                remove_if_there(part)
                continue
            with response:
                if not whole and _a_range_of_the_encoding(response, spec):
                    whole = True
                    continue
                body = _where_the_body_goes(response, offset, url, part, spec)
                read = _body_reader(response, body.encoding)
                if body.encoding:  # (the .tgz only labelled gzip, or gzipped again: its decoded start tells)
                    body, read = _the_archive_as_sent(response, read, body, url, part, spec, whole)
                    if telling and not body.encoding:  # (the .tgz only labelled gzip: the range was the archive's,
                        whole = telling = False        # asked for again, and its ranges taken as they come)
                        continue
                telling = False
                if not whole:
                    read, whole, telling = _the_whole_instead(response, read, body, told)
                    told = told or telling
                    if whole:
                        continue
                if body.page:  # (before the .part is opened: a page leaves it as it was, or none at all)
                    _refuse_a_page_by_its_start(read, body, url, part, spec)
                if pbar is None:  # (from the bytes kept: a resumed download shows the bytes already there)
                    pbar = bars.enter_context(bar(total=spec.size, initial=body.start - body.held,
                                                  desc=spec.filename, disable=not progress, unit="B",
                                                  unit_scale=True, unit_divisor=1024))
                else:  # (a piece that sends again bytes the .part holds counts them again as they are compared)
                    pbar.update(body.start - body.held - pbar.n)
                with _part_to_write(part, body) as out, _part_to_compare(part, body) as have:
                    error = _copy_body(read, out, have, body, pbar, stall, url, part, spec)
                    _refuse_a_damaged_body(out, error, body, url, part, spec)
                    _refuse_a_piece_of_the_encoding(out, read, error, body, url, part, spec)
                    _refuse_a_body_cut_short(out, read, error, body, url, part, spec)
            if body.end is None or body.end == spec.size:
                return
            whole = False  # (a piece of the whole: the rest is asked for with a range, as any piece's)


def _remove_a_part_no_archive_begins_as(part, spec):
    """Remove the partial download ``part`` where it does not begin as a .tgz does (gzip's magic bytes): no start of
    the archive (every archive is a .tgz: zhang_splits reads it as one). Such a .part is one an older version left:
    it decoded an archive a server labels gzip-encoded and stored the bare tar. Resumed, whatever the server sent (a
    range appended to it, the whole compared with it), it "failed verification ... run again to retry", or was
    refused as another archive's on every run. Looked at as fetch begins (a rerun's, a retry's), not before each
    piece: the first piece of something else (no .tgz: a wrong file on the mirror) was asked for again and again."""
    if bytes_to_resume_from(part, spec) and not _starts_as_the_archive(part):
        os.remove(part)


def _take_up_a_staged_restart(part, spec):
    """Settle a restart a killed download left staged (_staged): it stayed in the cache (up to the .part's size) until
    another resume happened to be answered whole, and beside the verified archive for good. The longer of it and the
    .part is the one resumed from, the other removed; one that is no regular file, or longer than the archive, is
    removed (a link: its target stays as it was); a folder there is refused, as one where the .part goes is. Both
    begin at the archive's first byte: one that does not begin with the bytes the .part holds is no restart of the
    same archive, and is removed (taken up for being the longer, it replaced a good .part with bytes that failed the
    md5, and the download was deleted whole)."""
    staged = _staged(part)
    try:
        found = os.lstat(staged)
    except FileNotFoundError:
        return
    refuse_a_folder(staged, "the restart of a partial download")
    held = bytes_to_resume_from(part, spec)
    if stat.S_ISREG(found.st_mode) and held < found.st_size <= spec.size and _begins_with(staged, part, held):
        os.replace(staged, part)
    else:
        os.remove(staged)


def _begins_with(path, part, held):
    """Whether the file ``path`` begins with the ``held`` bytes the .part ``part`` holds (no .part: it does)."""
    if not held:
        return True
    # (O_NOFOLLOW: a link put there since they were looked at is refused, not followed out of the cache)
    with opened_to_read(path) as longer, opened_to_read(part) as shorter:
        while held:
            block = shorter.read(min(_CHUNK, held))
            if not block or longer.read(len(block)) != block:
                return False
            held -= len(block)
    return True


def _a_range_of_the_encoding(response, spec):
    """Is ``response`` a range of the server's gzip encoding (HTTP's ranges are of the bytes sent), not of the archive
    (download_answers.labels_the_archive_as_sent)? Appended, it failed the md5 and the .part was deleted: the whole
    is read instead, its start compared with the .part. A Content-Range of unknown total (``bytes 100-199/*``)
    ending before the archive's end is one too: what it is a range of cannot be told (a server that compresses as it
    sends knows no total for its encoding, nor a range's bytes of the archive), and the whole costs a download, where
    a wrong guess cost the .part. One from the encoding's byte 0 to its end is all of it, read as it is
    (download_answers.a_range_of_the_encoding): asked for again, it was answered the same."""
    return (bool(content_encoding(response)) and not labels_the_archive_as_sent(response, spec)
            and a_range_of_the_encoding(response))


def _the_whole_instead(response, read, body, told):
    """``(read, whole, telling)``: is a gzip-labelled 206 taken for the archive's bytes as sent (its Content-Range
    gives the archive's size, or ends at its last byte of an unknown total; its length, if any, the range's), from
    after the archive's first byte, to be read whole instead (``whole``), and is that to tell what it is
    (``telling``)? ``read``: the body's read function, to read on with (its first bytes read again).

    Its headers do not tell it from a range of the .tgz gzipped again where that encoding happens to be as long as
    the archive (a .tgz compressed lightly), nor from the range gzipped alone (a server compressing each answer's
    body after cutting the range: its length can be the range's too, a tail that compresses a little). Appended,
    either "failed verification ... run again to retry" once (or ran past the range), and only the rerun's 200
    worked. A range gzipped alone begins with a gzip header, which the archive's bytes there do not (by chance, 1
    range in 16 million: the whole is read, as it is then): the whole is read instead. Else the whole is asked for
    once (``told``: it was) to tell, by its decoded start, as any whole gzip-labelled answer is
    (_the_archive_as_sent): the .tgz gzipped again is read whole, decoded and compared with the .part; the .tgz only
    labelled gzip is left unread, and the range asked for again, appended as the archive's bytes."""
    if (response.status != 206 or body.encoding or body.first == 0
            or content_encoding(response) not in GZIP_ENCODINGS):
        return read, False, False
    read = _Peeked(read)
    if read.peek(len(_GZIP_HEADER)) == _GZIP_HEADER:
        return read, True, False
    return read, not told, not told


class _Peeked:
    """A read function whose first bytes can be looked at (peek) before they are read; an error met while peeking is
    raised by the first call after them, as if met there."""

    _PEEK_ERRORS = (HTTPException, OSError)

    def __init__(self, read):
        self._read, self._peeked, self._error = read, b"", None

    def _next(self, size):
        """The next bytes after the peeked ones: at most ``size``, ``b""`` at the end."""
        return self._read(size)

    def _peek_block(self, wanted):
        return self._next(wanted)

    def peek(self, size):
        try:
            while len(self._peeked) < size and self._error is None:  # (called again: not read past an error)
                block = self._peek_block(size - len(self._peeked))
                if not block:
                    break
                self._peeked += block
        except self._PEEK_ERRORS as exc:
            self._error = exc
        return self._peeked[:size]

    def __call__(self, size):
        if self._peeked:
            block, self._peeked = self._peeked[:size], self._peeked[size:]
            return block
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._next(size)


@dataclass
class _Body:
    """Where the bytes of the server's answer go. ``start``: the archive's byte the .part is continued from (0:
    written anew); ``held``: how many of the body's first bytes the .part holds already, compared with it and not
    written again (a gzip-encoded answer to a resume, read from its start; a range from before the .part's end),
    counted down as they are compared; ``end``: the archive's byte the body ends at (the archive's size, or a range's
    end: a piece of it), None when nothing announces it (no length, or the encoding's); ``encoding``: its
    Content-Encoding (``""``: none, or a gzip label on the .tgz sent as it is); ``outgrows``: for the whole archive
    answering a resume (a server ignoring Range), the .part's size: the body is written to a sibling (_staged) that
    replaces the .part only once it holds more (written over at once, a body cut short left less than the .part held:
    a Yelp .part of 150 MB cut back to a few MB), set to 0 then (0: the body is written to the .part itself);
    ``page``: the Content-Type of a gzip-encoded
    text/* answer, a page unless it decodes to the archive's start (_refuse_a_page_by_its_start), else ``""``;
    ``encoding_end``: a gzip-encoded 206 read whole (from its byte 0: download_answers.a_range_of_the_encoding), where
    its Content-Range ends, in the encoding's bytes (None: another answer)."""

    start: int
    held: int
    end: Optional[int]
    encoding: str
    outgrows: int = 0
    page: str = ""
    encoding_end: Optional[int] = None

    @property
    def first(self):
        """The archive's byte the body begins with."""
        return self.start - self.held


def _where_the_body_goes(response, offset, url, part, spec):
    """Check the answer to a request from byte ``offset`` (the .part's size), and say where its body goes."""
    length = announced_length(response)
    encoding = content_encoding(response)
    kept = part if offset else None
    if encoding and not labels_the_archive_as_sent(response, spec):  # (a server or CDN that compresses the .tgz
        # again: its length is the encoding's; one that only labels it so sends it as it is, read as any other)
        ranged = a_range_of_the_encoding(response)  # (not all of it: a 206 from its byte 0 to its end is, as a 200)
        if encoding not in GZIP_ENCODINGS or ranged:  # (first: a page in any encoding is named as one; gzip's is
            refuse_a_page(response, None, url, spec, kept)  # told by its decoded start)
        refuse_an_encoding(encoding, ranged, url, part, spec, offset)
        sent = range_sent(response) if response.status == 206 else None
        return _Body(offset, offset, None, encoding, page=page_kind(response, None, spec),
                     encoding_end=None if sent is None else sent[1])
    first, end, outgrows = offset, spec.size, 0
    sent = range_sent(response) if response.status == 206 else None
    if response.status != 206:  # the server ignored Range and sends the whole file: start over
        refuse_a_page(response, length, url, spec, kept)
        if offset:
            _refuse_to_restart_for_another_length(length, offset, url, part, spec)
        first, offset, outgrows = 0, 0, offset
    elif sends_the_whole(response, length, spec):  # (a 206 from byte 0 whatever the range asked: it was appended)
        first = 0  # (its start compared with the .part: written anew, one cut short left less than the .part held)
    elif sent is None:  # (no Content-Range: which bytes it holds is a guess)
        refuse_a_206_without_a_range(response, offset, url, part)
    else:  # (a piece: from before the .part's end, or ending before the archive's)
        first, end, size = sent
        if size not in (None, spec.size):  # (the .part, of the expected archive, may be finished from another mirror)
            raise FastTextError(f"cannot download {url}: the server's Content-Range gives the archive {size} bytes, "
                                f"not the {spec.size} expected (another version of it? pass --base-url a mirror that "
                                f"holds {spec.filename}){_kept_as_before(part, offset)}")
        check_range(sent, offset, spec.size, url, part)
    if length is not None and length != end - first:
        if sent is not None:  # (the .part holds the good bytes of the pieces before: it was deleted)
            raise FastTextError(f"cannot download {url}: the server's answer contradicts itself: Content-Range bytes "
                                f"{first}-{end - 1} ({end - first} bytes), Content-Length {length}"
                                f"{_kept_as_before(part, offset)}")
        fail_verification(part, url, f"server sends {length} bytes, expected {spec.size}")
    if length is None and sent is None:
        end = None  # (no length announced: the connection's close is the body's only end)
    return _Body(offset, offset - first, end, "", outgrows)


def _refuse_to_restart_for_another_length(length, offset, url, part, spec):
    """A resume answered with the whole file starts over, unless what it sends is not the archive (a captive
    portal's or a proxy's page): taken for the whole file, it deleted the .part (hundreds of MB) or truncated it to
    the page."""
    if length != spec.size:
        what = "a response of unknown length" if length is None else f"{length} bytes"
        raise FastTextError(f"cannot download {url}: the request to resume at byte {offset} was answered with "
                            f"{what}, not the {spec.size}-byte archive (a captive portal or a proxy's page?); "
                            f"the partial download {part} is kept: run again to resume (delete it to start "
                            f"over)")


@contextlib.contextmanager
def _part_to_write(part, body):
    """``part`` opened to be continued from byte ``body.start`` (appended to), or written anew (``start`` 0): into
    its sibling (_staged) while ``body.outgrows``, removed if it never grew past the .part (which stays as it was)."""
    if not body.outgrows:
        with _opened_to_write(part, body.start) as out:
            yield out
        return
    staged = _staged(part)
    remove_if_there(staged)  # (a link put there since fetch began: O_NOFOLLOW refuses it, removed it is not followed)
    try:
        with _opened_to_write(staged, 0) as out:
            yield out
    finally:
        if body.outgrows:
            remove_if_there(staged)


def _opened_to_write(path, start):
    """``path`` opened to be continued from byte ``start`` (appended to), or written anew (``start`` 0)."""
    # (O_NOFOLLOW: a link put there since bytes_to_resume_from looked is refused, not followed out of the cache)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if start else os.O_TRUNC)
    return os.fdopen(os.open(path, flags, 0o666), "ab" if start else "wb")


def _staged(part):
    """Where the whole archive answering a resume is written until it holds more than the .part."""
    return part + ".new"


def _replace_the_part_once_outgrown(out, body, part):
    """A body written anew to _staged replaces the .part once it holds more (its file stays open: the rest of the body
    is written to the .part)."""
    if body.outgrows and out.tell() > body.outgrows:
        os.replace(_staged(part), part)
        body.outgrows = 0


def _part_to_compare(part, body):
    """``part`` opened to read the ``body.held`` bytes the body's start is compared with, from ``body.first`` (none:
    nothing opened)."""
    if not body.held:
        return contextlib.nullcontext()
    have = opened_to_read(part)
    have.seek(body.first)
    return have


def _body_reader(response, encoding):
    """A read function for the body: the archive's bytes as they arrive, decoded when it is gzip-encoded."""
    # read1: what has arrived, not a full _CHUNK (read waits for 1 MB however slowly it trickles in)
    read = getattr(response, "read1", response.read)
    return _Gunzipped(read) if encoding else read


def _the_archive_as_sent(response, read, body, url, part, spec, whole):
    """A whole gzip-labelled answer (download_answers.labels_the_archive_as_sent tells a range by its headers) of no
    announced length or of the archive's, whose decoded start is a tar's, not the .tgz's: the .tgz itself, sent as it
    is by a server that only labels it gzip-encoded. Its bytes as sent are read as an unencoded answer's: ``(body,
    read)``; else those given, decoded (the .tgz gzipped again: its length, the encoding's, is the archive's only by
    chance, a .tgz compressed lightly; taken for the archive by it, it was stored as sent and failed the md5 on every
    run). One of another length is decoded too, and verified as any. Whole answering a resume (a server ignoring the
    Range), one of no length is refused as any answer of unknown length is, the .part kept (decoded, the tar was
    compared with the .part and "did not begin with" it). Asked for whole (``whole``: a range answering the resume
    could not be used), it restarts the download as a server ignoring the Range does, the .part kept until it holds
    more (refused, the resume failed on every run, though the answer was the one asked for and no page)."""
    length = announced_length(response)
    if length not in (None, spec.size) or not _is_a_tar_header(read.peek(tarfile.BLOCKSIZE)):
        return body, read
    sent = read.as_sent()
    if sent is None:  # (its start took too many bytes to decode to be kept: the decoded bytes are verified)
        return body, read
    if body.start and not whole:
        _refuse_to_restart_for_another_length(length, body.start, url, part, spec)
    return _Body(0, 0, length, "", outgrows=body.start), sent


def _is_a_tar_header(block):
    """Is ``block`` a tar header (512 bytes whose checksum holds), as an archive's decoded start is?"""
    try:
        tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
    except tarfile.HeaderError:
        return False
    return True


def _refuse_a_page_by_its_start(read, body, url, part, spec):
    """Refuse a gzip-encoded text/* answer (``body.page``) whose decoded start is not the archive's (gzip's magic
    bytes): a page. By its headers alone (no length to tell it by), the archive was refused as one, every time, from
    a server that types a file it does not know as text/plain (nginx's default_type, Apache's DefaultType) behind a
    CDN or proxy that gzips text/plain answers even to this client's ``Accept-Encoding: identity`` (the origin's own
    gzip_types / mod_deflate honour that header). A body that decodes to nothing, being no gzip (the page as
    it is, mislabelled) or empty, is a page too: left to the copy, it "failed verification ... run again to retry"
    every time. Only a body cut short before its start is seen is left to the copy's own checks (retried)."""
    start = read.peek(2)
    cut_short = not read.complete and not isinstance(read.error, zlib.error)
    if start != _ARCHIVE_MAGIC[:len(start)] or not (start or cut_short):
        raise page_error(body.page, url, spec, part if body.start else None)


def _copy_body(read, out, have, body, pbar, stall, url, part, spec):
    """Append the body to the .part (``out``) as it arrives, until it ends or runs past the archive's size; return
    the error that ended it (None: none). ``stall``: the download's _StallWatch, counting the bytes that arrive."""
    while True:
        block, error = _next_block(read)
        if not block:
            return error
        if body.held:  # (a gzip-encoded answer to a resume: its start is what the .part holds already)
            compared_from = body.first
            same = _compare_with_the_part(block, have, body, url, part)
            pbar.update(same)
            stall.count(compared_from, same)
            block = block[same:]
        out.write(block)
        out.flush()  # (on disk as it arrives: a kill -9 keeps all of it, and the progress can be seen there)
        _replace_the_part_once_outgrown(out, body, part)
        pbar.update(len(block))
        stall.count(out.tell() - len(block), len(block))
        stall.check(out.tell())
        if out.tell() > _last_byte(body, spec):  # (a response of no announced length: a page, or an endless stream,
            return None  # was written until it ended, however far past the archive: tens of GB, a full disk)


def _last_byte(body, spec):
    """The .part's size once the body has ended: the end of its range (of the archive, when none is announced)."""
    return spec.size if body.end is None else body.end


def _next_block(read):
    """The body's next block and None, or ``b""`` and the error that ended the body (a connection lost, a gzip
    encoding that cannot be decoded); ``b""`` and None at its end."""
    try:
        return read(_CHUNK), None
    except (HTTPException, OSError, zlib.error) as exc:
        return b"", exc


def _compare_with_the_part(block, have, body, url, part):
    """Compare the start of ``block`` with the next of the ``body.held`` bytes the .part holds (``have``), which a
    gzip-encoded answer to a resume sends again; return how many were compared (counted off ``body.held``). A body
    that begins otherwise is another archive's: refused, the .part kept."""
    same = block[:body.held]
    if have.read(len(same)) != same:
        if not body.encoding:
            raise FastTextError(f"cannot download {url}: asked to resume at byte {body.start}, the server sends "
                                f"bytes {body.first}-{body.end - 1}, and they differ from the partial download "
                                f"{part}'s (another archive's?); it is kept: delete it to download the archive whole")
        raise FastTextError(f"cannot download {url}: the server sends the archive gzip-encoded again "
                            f"(Content-Encoding), and it does not begin with the {body.start} bytes of the "
                            f"partial download {part} (another archive's?); it is kept: delete it to "
                            f"download the archive whole")
    body.held -= len(same)
    return len(same)


class _StallWatch:
    """Stops a download whose server sends fewer than _STALL_MIN_BYTES in a window of _STALL_WINDOW_S, whatever the
    pieces (answers) they came in: the time between them (a new request each) is in the window too.

    Only bytes not had yet in this run count: ones a server sends again (pieces that each begin before where they were
    asked to, from byte 0 even) counted, and such a server, gaining a few bytes an answer, was never stopped. The
    bytes a .part holds from an earlier run count the first time they come (a gzip-encoded resume is read from the
    archive's start): counted as none, a resume whose .part takes longer than a window to be sent again would be
    stopped at every rerun alike, never finished."""

    def __init__(self, url, spec):
        self._url, self._spec = url, spec
        self._window_start, self._window_bytes = time.monotonic(), 0
        self._had = 0  # the archive's bytes up to here have come in this run

    def count(self, first, size):
        """Count ``size`` bytes that came, the archive's from byte ``first``."""
        new_from, end = max(first, self._had), first + size
        if end > new_from:
            self._window_bytes += end - new_from
            self._had = end

    def check(self, written):
        """Refuse a window that has ended with too few bytes (``written``: the .part's size, for the message)."""
        elapsed = time.monotonic() - self._window_start
        if elapsed >= _STALL_WINDOW_S:
            if self._window_bytes < _STALL_MIN_BYTES:
                raise TransientError(self._url, f"the server sends too slowly ({self._window_bytes} new bytes in "
                                                f"{elapsed:.3g} s, {written} of {self._spec.size} so far); the "
                                                f"partial download is kept: run again to resume (or pass --base-url a "
                                                f"faster mirror)",
                                     f"too slow ({self._window_bytes} new bytes in {elapsed:.3g} s)")
            self._window_start, self._window_bytes = time.monotonic(), 0


def _refuse_a_damaged_body(out, error, body, url, part, spec):
    """Refuse a body that cannot be the archive: longer than it (the .part deleted; a gzip-encoded answer to a resume,
    whose start matched the .part: the .part cut back to what it held before this answer), or than the range its
    Content-Range announced (the .part cut back to what it held before this answer: the good bytes of the pieces
    before, deleted with it), or a gzip encoding that cannot be decoded (deleted; answering a resume, the .part cut
    back to what it held before this answer, whose start matched it: those bytes were had before the damage)."""
    if out.tell() > _last_byte(body, spec):
        if body.end is not None:  # (only a Content-Range with no Content-Length: http.client stops at a length)
            out.truncate(body.start)
            out.close()
            if not body.start and not body.outgrows:  # (a body staged: the .part was not touched)
                remove_if_there(part)
            raise FastTextError(f"cannot download {url}: the server sends more than the bytes {body.first}-"
                                f"{body.end - 1} its Content-Range announced{_kept_as_before(part, body.start)}")
        if body.encoding and body.start:  # (its start was compared with the .part's: only what it appended is bad)
            out.truncate(body.start)
            out.close()
            raise FastTextError(f"cannot download {url}: the server sends the archive gzip-encoded again "
                                f"(Content-Encoding), and it decodes to more than the {spec.size} bytes expected"
                                f"{_kept_as_before(part, body.start)}")
        out.close()
        fail_verification(part, url, f"the server sends more than the {spec.size} bytes expected")
    if isinstance(error, zlib.error):  # (its bytes damaged on the way: what was decoded cannot be trusted)
        if body.start:  # (deleted, the .part lost hundreds of MB it held before this answer; a rerun resumes it)
            out.truncate(body.start)
            out.close()
            raise FastTextError(f"cannot download {url}: the server's gzip encoding of the archive cannot be decoded "
                                f"({error}): damaged on the way?{_kept_as_before(part, body.start)}")
        out.close()
        fail_verification(part, url, f"the server's gzip encoding of it cannot be decoded: {error}")


def _kept_as_before(part, size):
    """What an answer refused once its piece's bytes may have been appended leaves: the .part of ``size`` bytes."""
    return (f"; the partial download {part} is kept as it was before this answer ({size} bytes): run again to resume "
            f"(delete it to start over)" if size else "")


def _refuse_a_piece_of_the_encoding(out, read, error, body, url, part, spec):
    """Refuse a gzip-encoded 206 read whole (from its byte 0, ``bytes 0-<last>/*``: all of the encoding, as a server
    gzipping as it sends answers a request for the whole) whose body came to the end of its Content-Range, every byte
    of it, but not to its gzip's end: it was a piece of the encoding after all (a server limiting what one answer
    holds), which every request, every rerun's too, is answered with. Taken for a connection lost, it was retried,
    and kept as a .part "run again to resume", for ever. Refused as such a range is (download_answers.
    refuse_an_encoding), the .part as it was before this answer: none for a fresh download."""
    if error is not None or body.encoding_end is None or read.complete or read.received < body.encoding_end:
        return
    out.truncate(body.start)
    out.close()
    if not body.start:
        remove_if_there(part)
    refuse_an_encoding(body.encoding, True, url, part, spec, body.start)


def _refuse_a_body_cut_short(out, read, error, body, url, part, spec):
    """Refuse a body that ended before the archive's end, the .part kept for a resume (a TransientError: retried)."""
    # http.client ends a short body silently instead of raising IncompleteRead, so compare with
    # the announced length (a gzip encoding's own end, for one sent so). The .part is kept: the next call
    # resumes where this one stopped.
    cut = not read.complete if body.encoding else body.end is not None and out.tell() < body.end
    if error or cut:
        why = f" ({error.__class__.__name__})" if error else ""
        kept = (f" of the archive sent again from its start (the server ignored the request to resume)"
                f"{_kept_as_before(part, body.outgrows)}" if body.outgrows
                else f"; the partial download {part} is kept: run again to resume")
        lost = f"connection lost after {out.tell()} of {spec.size} bytes{why}"
        raise TransientError(url, f"{lost}{kept}", lost)
    if body.held:  # (the whole body was shorter than the .part: it is no archive of which the .part is a start)
        raise FastTextError(f"cannot download {url}: the server sends the archive gzip-encoded again "
                            f"(Content-Encoding), and it is shorter than the {body.start} bytes of the partial "
                            f"download {part}; it is kept: delete it to download the archive whole")
    out.flush()
    if not body.encoding and body.end is None and out.tell() < spec.size and _starts_as_the_archive(part):
        # No announced length (an HTTP/1.0 proxy), so the connection's close was the body's only end: a
        # body cut short looked complete, failed its size check and was deleted. One that begins as the
        # archive does (gzip) is kept; a page (a captive portal's) is not, and fails verification below.
        closed = f"the connection closed after {out.tell()} of {spec.size} bytes (the server announced no length)"
        raise TransientError(url, f"{closed}; the partial download {part} is kept: run again to resume", closed)


class _Gunzipped(_Peeked):
    """A read function for a body the server sent gzip-encoded, returning the bytes it encodes: at most ``size`` a
    call (a small body may encode gigabytes); ``b""`` at the end. ``complete``: the encoding's own end was reached
    (not: the body was cut short). The decoded bytes are verified as any download's are, by size and md5. Its
    :meth:`peek` looks at the first decoded bytes."""

    _PEEK_ERRORS = (HTTPException, OSError, zlib.error)

    def __init__(self, read):
        super().__init__(read)  # (peek's bytes and error: returned, then raised, by the calls after it)
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)  # (16+: gzip's header and trailer, not zlib's)
        # The body as sent up to here, for as_sent; None once past _SENT_KEPT bytes or read on from the peek.
        self._sent = []
        self.received = 0  # bytes of the body as sent read so far (the encoding's)

    @property
    def complete(self):
        return self._inflate.eof

    @property
    def error(self):
        """The error :meth:`peek` met, not raised yet (None: none)."""
        return self._error

    def _next(self, size):
        return self._decoded(size)

    def _peek_block(self, wanted):
        return self._decoded(_CHUNK)  # (a chunk of the body at a time, not the few bytes wanted)

    def as_sent(self):
        """A read function for the body as sent, not decoded, from its start (None: more than peek keeps was read);
        this one is not to be called after it."""
        if self._sent is None:
            return None
        sent, self._sent = b"".join(self._sent), None

        def read(size):
            nonlocal sent
            if not sent:
                return self._read(size)
            block, sent = sent[:size], sent[size:]
            return block
        return read

    def __call__(self, size):
        self._sent = None  # (the decoded bytes are read: the body as sent is no longer needed)
        return super().__call__(size)

    def _decoded(self, size):
        while not self._inflate.eof:
            encoded = self._inflate.unconsumed_tail or self._kept(self._read(size))
            if not encoded:
                return b""
            block = self._inflate.decompress(encoded, size)
            if block:
                return block
        return b""

    def _kept(self, sent):
        """``sent`` (bytes of the body as sent), kept for as_sent while they are few."""
        self.received += len(sent)
        if self._sent is not None:
            self._sent.append(sent)
            if sum(map(len, self._sent)) > _SENT_KEPT:
                self._sent = None
        return sent


_SENT_KEPT = 4 * _CHUNK  # the most of a body as sent kept while peek decodes its start (a tar's: a few hundred bytes)
_ARCHIVE_MAGIC = b"\x1f\x8b"  # how a .tgz begins: gzip's magic bytes
_GZIP_HEADER = _ARCHIVE_MAGIC + b"\x08"  # how any gzip stream begins: its magic bytes and deflate, its one method


def _starts_as_the_archive(path):
    """Does ``path`` begin as a .tgz does (gzip's magic bytes)?"""
    with opened_to_read(path) as f:
        return f.read(2) == _ARCHIVE_MAGIC
