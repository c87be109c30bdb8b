"""The server's answer to a request for an archive: opened (from a byte, with an HTTP ``Range``), its errors in one
line each, and checked for what is not the archive's bytes: another encoding, a page, a range from elsewhere.

Only the standard library's urllib is used for HTTP, so nothing beyond the base dependencies is needed.
"""
import datetime
import email.utils
import math
import os
import re
import socket
import urllib.error
import urllib.request
from http.client import BadStatusLine, HTTPException, IncompleteRead

from .download_retry import TransientError
from .errors import FastTextError

_TIMEOUT_S = 60


def open_from_byte(url, offset, part):
    """The server's response to a request for ``url`` from byte ``offset`` (a Range); None: the range was refused
    (416), so ``part`` is no prefix of the archive. Its errors end in one line; those asking again may not meet (a
    busy server, a connection refused or lost) are :class:`TransientError`, retried (download_retry.py)."""
    request = urllib.request.Request(url, headers={"Range": f"bytes={offset}-"} if offset else {})
    try:
        return urllib.request.urlopen(request, timeout=_TIMEOUT_S)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:
            return None
        # (urllib's reason for a redirect loop holds line breaks: the error is one line)
        status = f"HTTP {exc.code} {' '.join(str(exc.reason).split())}"
        if exc.code in _NOT_NOW:
            raise TransientError(url, f"{status}{_when_not_now(exc, part)}", status, _retry_after(exc)) from None
        raise FastTextError(f"cannot download {url}: {status}") from None
    except (urllib.error.URLError, HTTPException, OSError) as exc:
        reason = getattr(exc, "reason", exc)  # (URLError: the socket's error it wraps)
        if _is_transient(reason):
            raise TransientError(url, f"{reason}{kept_for_a_rerun(part, offset)}",
                                 getattr(reason, "strerror", None) or str(reason) or type(reason).__name__) from None
        if isinstance(exc, BadStatusLine):
            raise FastTextError(f"cannot download {url}: {_not_http(exc)}") from None
        raise FastTextError(f"cannot download {url}: {reason}") from None
    # (url itself was parsed by zhang_datasets.archive_url: a ValueError is a redirect's Location, e.g. http://[::1/...)
    except ValueError as exc:
        raise FastTextError(f"cannot download {url}: the server redirects to a URL that cannot be read "
                            f"({exc})") from None  # (was a ValueError traceback)


GZIP_ENCODINGS = ("gzip", "x-gzip")  # the Content-Encodings download_fetch's _Gunzipped decodes


def content_encoding(response):
    """The encoding the server sends the body in (Content-Encoding), lower case; ``""``: none (the bytes as they are).
    urllib decodes none: a server that gzips the .tgz again (a CDN, a web server compressing every file) sent bytes
    that "failed verification ... run again to retry", which failed so every time."""
    encoding = " ".join((response.headers.get("Content-Encoding") or "").split()).lower()
    return "" if encoding == "identity" else encoding


def labels_the_archive_as_sent(response, spec):
    """Is a gzip-encoded range (a 206) one of the .tgz itself, sent as it is, labelled gzip (Apache's ``AddEncoding
    x-gzip .tgz``, an S3 object whose metadata says ContentEncoding gzip), rather than one of the .tgz gzipped again
    (a CDN)? Its Content-Range says so: its total is the archive's size (a range of the .tgz gzipped again gives the
    encoding's, longer but for a .tgz compressed lightly, which gzip shrinks by as much as its header and trailer
    add: download_fetch._the_whole_instead asks for the whole once to tell). Its ranges were refused as the
    encoding's; decoded, the whole was the bare tar, which "failed verification ... run again to retry" on every run.
    The md5 verifies it as any download.

    A range of unknown total (``bytes 100-<last>/*``) that ends at the archive's last byte is one too: every resume
    asks for the bytes to the end (``bytes=100-``), so what is sent ends there, as long as the archive, which the
    .tgz gzipped again is not, but for that lightly compressed one (it was read whole again, the .part's bytes sent
    anew).
    One ending before is not (download_fetch._a_range_of_the_encoding).

    A whole answer (200) is never told so by its headers: a .tgz compressed lightly can gzip to its own length, and
    taken for the archive by its Content-Length, it was stored as sent and failed the md5 on every run. Its decoded
    start tells (download_fetch._the_archive_as_sent)."""
    if content_encoding(response) not in GZIP_ENCODINGS or response.status != 206:
        return False  # (any other encoding is refused, whatever its length: br of the archive's size is no archive;
    length, sent = announced_length(response), range_sent(response)
    # a whole answer, as said above) And of the range's length where one is announced: a server gzipping each
    # range's body gives the archive's Content-Range, the gzip's Content-Length.
    if sent is None or length not in (None, sent[1] - sent[0]):
        return False
    _, end, size = sent
    return size == spec.size or (size is None and end == spec.size)


def a_range_of_the_encoding(response):
    """Is ``response``, an answer in the server's encoding (not the .tgz only labelled gzip:
    :func:`labels_the_archive_as_sent`), a range of that encoding, not all of it? A 206 is one, unless it is all of
    a gzip encoding: from its byte 0 to its end (``Content-Range: bytes 0-<last>/<last + 1>``, or ``/*``: a server
    gzipping as it sends knows no total), of the range's length where a length is announced. Such a server answers
    the request for the whole (no Range) so, where others answer 200: it was refused as "a range of that" on every
    run, though it holds all there is; it is read as a 200 is, decoded, and verified by size and md5 as any download
    (one that is not all of it after all, ``/*`` ending early, ends before its gzip does: a connection cut short)."""
    if response.status != 206:
        return False
    sent = range_sent(response)
    if content_encoding(response) not in GZIP_ENCODINGS or sent is None:
        return True
    first, end, size = sent
    return first != 0 or size not in (None, end) or announced_length(response) not in (None, end)


def refuse_an_encoding(encoding, ranged, url, part, spec, offset):
    """Refuse an answer sent in another encoding than gzip (which download_fetch's ``_Gunzipped`` decodes), or a
    range of its encoding (``ranged``: :func:`a_range_of_the_encoding`) to a request for the whole: neither is the
    archive's bytes."""
    if encoding in GZIP_ENCODINGS and not ranged:
        return
    kept = f"; the partial download {part} is kept" if offset else ""
    what = ("and answers a request for all of it with a range of that" if encoding in GZIP_ENCODINGS
            else "which is not decoded here")
    encoding = encoding[:40] if encoding.isprintable() else "an unreadable"
    raise FastTextError(f"cannot download {url}: the server sends the archive {encoding}-encoded (Content-Encoding: "
                        f"{encoding}), {what}: pass --base-url a mirror that sends the .tgz as it is, or copy "
                        f"{spec.filename} into the cache folder yourself (a verified archive there is used as it "
                        f"is){kept}")


# Answers that say "not now" rather than "not here": the same request may succeed later (retried), those of a busy
# server first; and the socket's errors that say so (a connection refused, reset, timed out; a name not found
# "for now", EAI_AGAIN). Others (a certificate refused, an unknown host) say the same however often asked.
_BUSY = (429, 502, 503, 504)
_NOT_NOW = _BUSY + (408, 500)
_TRANSIENT_ERRORS = (ConnectionError, TimeoutError, IncompleteRead)


def _is_transient(reason):
    if isinstance(reason, socket.gaierror):
        return reason.errno == socket.EAI_AGAIN
    return isinstance(reason, _TRANSIENT_ERRORS)  # (RemoteDisconnected: a ConnectionResetError too)


def _retry_after(error):
    """The seconds a busy server's answer (``error``, an HTTPError) asks to wait (its Retry-After: seconds, or an HTTP
    date, RFC 9110); None: it gives none, or one that cannot be read (waited as a retry's backoff)."""
    wait = _retry_after_text(error)
    if not _is_seconds(wait):
        return _seconds_until(wait)
    # (int() refuses more than 4,300 digits: a wait of ages, waited as the longest, download_retry.MAX_WAIT_S)
    digits = wait.lstrip("0") or "0"
    return int(digits) if len(digits) <= 9 else 10 ** 9


def _seconds_until(date):
    """Whole seconds from now until an HTTP date (``Fri, 31 Dec 2027 23:59:59 GMT``), 0 where it has passed; None:
    not a date. (A date was waited as no Retry-After at all: the backoff's 1 s, against a server asking for minutes.)"""
    try:
        when = email.utils.parsedate_to_datetime(date)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # (an HTTP date is GMT; -0000 reads as naive)
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0, math.ceil((when - datetime.datetime.now(datetime.timezone.utc)).total_seconds()))


def _retry_after_text(error):
    """An HTTPError's Retry-After header as one line ("" where it has none): seconds, or a date."""
    return " ".join(((error.headers and error.headers.get("Retry-After")) or "").split())


def _is_seconds(wait):
    """Whether a Retry-After's text is a number of seconds: ASCII digits (str.isdigit takes a latin-1 superscript,
    '²', which a header can hold and int() refuses: a ValueError traceback)."""
    return wait.isascii() and wait.isdigit()


def _when_not_now(error, part):
    """What an answer of :data:`_NOT_NOW` (``error``, an HTTPError) means for the user once it is the last: run again
    later (when a busy server's Retry-After says), and that the partial download ``part`` is kept. It said only "HTTP
    503 Service Unavailable", and a user deleted a .part of hundreds of MB to start clean."""
    wait = _retry_after_text(error)[:40]  # seconds, or a date
    if _is_seconds(wait):
        wait = f"; it asks to wait {wait} s"
    elif wait and wait.isprintable():
        wait = f"; it asks to wait until {wait}"
    else:
        wait = ""
    kept = f"; the partial download {part} is kept and will be resumed" if os.path.exists(part) else ""
    busy = f" (the server is busy or down{wait})" if error.code in _BUSY else ""
    return f"{busy}: run again later{kept}"


def _not_http(error):
    """A BadStatusLine's meaning: the answer has no HTTP status line (a service of another protocol on that port,
    a TLS port written http://). Its message was that first line itself: up to 64 KB of binary bytes. (Nothing
    answered at all, RemoteDisconnected, is a BadStatusLine too, but a lost connection: _is_transient.)"""
    return (f"the server's answer is not HTTP (it begins {str(error.line)[:24]!r}): is the URL's scheme (http://, "
            f"https://) and port right?")


def refuse_a_page(response, length, url, spec, part):
    """A text page answering the download (a captive portal's login page, an expired link's error page) is said to be
    one: it was taken for a damaged archive, "failed verification ... run again to retry", which fails alike every
    time. One of the archive's exact length is left to the md5 (a real archive a server labels text/plain).
    ``length``: the page's, None when unknown (not announced, or its Content-Encoding's). ``part``: the partial
    download the request was to resume (None: none), which is kept. The line is the same whatever the page's
    encoding: a br-encoded page was called "the archive br-encoded", and one answering a resume its "N bytes"."""
    kind = page_kind(response, length, spec)
    if kind:
        raise page_error(kind, url, spec, part)


def page_kind(response, length, spec):
    """The Content-Type of an answer that is a text page by its headers (refuse_a_page's), or ``""``."""
    if response.headers.get("Content-Type") is None:  # (get_content_type's default is text/plain: no page)
        return ""
    kind = response.headers.get_content_type()
    return kind if kind.startswith("text/") and length != spec.size else ""


def page_error(kind, url, spec, part):
    """The error of a ``kind`` page answering the download of ``spec`` (``part``: the partial download kept, or
    None)."""
    kept = f"; the partial download {part} is kept for a rerun to resume" if part else ""
    return FastTextError(f"cannot download {url}: the server answered with a {kind} page, not the {spec.size}-byte "
                         f"archive (a captive portal, a login page or an expired link?); open the URL in a browser "
                         f"to see it, or pass --base-url a mirror that holds {spec.filename}{kept}")


def range_sent(response):
    """The archive's bytes a 206 says it sends (its Content-Range ``bytes <first>-<last>/<size>``): ``(first, end,
    size)``, ``end`` one past ``last``, ``size`` None where the server says ``*``; None: no such header."""
    match = re.match(r"\s*bytes\s+(\d+)-(\d+)/(\d+|\*)", response.headers.get("Content-Range") or "")
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)) + 1, None if match.group(3) == "*" else int(match.group(3))


def check_range(sent, offset, size, url, part):
    """Refuse a 206 sending the archive's bytes ``sent`` (range_sent's ``(first, end, size)``) that does not continue
    the .part of ``offset`` bytes of the ``size``-byte archive: starting after its end (a broken cache or proxy),
    ending before it (a server sending the same first bytes to every request: asked again from the .part's end, it
    answers the same for ever), or past the archive's. Appended, they failed the md5 and the .part (up to 690 MB) was
    deleted: it is kept for a resume once the path to the server is sound again. One starting before the .part's end
    and going past it continues it (its bytes the .part holds are compared, not written again)."""
    first, end, _ = sent
    if end > size:
        kept = f"; the partial download {part} is kept: run again to resume (delete it to start over)" if offset else ""
        raise FastTextError(f"cannot download {url}: the server says it sends bytes {first}-{end - 1} of the "
                            f"{size}-byte archive (a broken cache or proxy on the way?){kept}")
    if first > offset:
        raise FastTextError(f"cannot download {url}: asked to resume at byte {offset}, the server sends the bytes "
                            f"from {first} (a broken cache or proxy on the way?); the partial download {part} is "
                            f"kept: run again to resume (delete it to start over)")
    if end <= offset:
        raise FastTextError(f"cannot download {url}: asked to resume at byte {offset}, the server sends only bytes "
                            f"{first}-{end - 1} (a broken cache or proxy on the way?); the partial download {part} "
                            f"is kept: run again to resume (delete it to start over)")


def sends_the_whole(response, length, spec):
    """Is a 206 answer with no Content-Range the whole archive (its exact length: a server sending from byte 0
    whatever the range asked)? Its bytes were appended to the .part, and the archive "failed verification ... run
    again to retry", which failed so every time. (A Content-Range from byte 0 says so itself: a piece from there.)"""
    return response.headers.get("Content-Range") is None and length == spec.size


def refuse_a_206_without_a_range(response, offset, url, part):
    """Refuse a 206 that does not say which bytes it holds: RFC 9110 requires a Content-Range on a single-part 206.
    It was taken for the bytes from the .part's end on, appended unchecked (or "failed verification", deleting the
    .part, when its length did not fit). curl refuses such an answer to a resume (error 33, its file untouched) and
    wget counts it a range error, retried with its file kept: it is refused, nothing written, and asked again (a
    :class:`TransientError`: a proxy's or cache's fault that the next answer may not have)."""
    header = response.headers.get("Content-Range")
    what = ("no Content-Range saying which bytes it sends" if header is None else
            "a Content-Range that does not say which bytes it sends"
            + (f" ({header[:40]!r})" if header.isprintable() else ""))
    asked = f"asked to resume at byte {offset}" if offset else "asked for the archive"
    raise TransientError(url, f"{asked}, the server answered 206 (Partial Content) with {what} (a broken cache or "
                              f"proxy on the way?){kept_for_a_rerun(part, offset)}",
                         "206 (Partial Content) with no readable Content-Range")


def kept_for_a_rerun(part, size):
    """What a refused answer leaves: the partial download ``part`` of ``size`` bytes, kept (``""``: none there)."""
    return f"; the partial download {part} is kept: run again to resume (delete it to start over)" if size else ""


def announced_length(response):
    """The body's length as the server announced it, or None: none announced, or a Content-Length that is no
    number (two headers a proxy merged, ``123, 123``), which http.client itself reads as unknown (here it was a
    ValueError traceback)."""
    try:
        length = int(response.headers.get("Content-Length"))
    except (TypeError, ValueError):
        return None
    return length if length >= 0 else None
