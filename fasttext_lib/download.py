"""Download the Zhang et al. (2015) text classification datasets and turn them into fastText files.

These are the archives fastText's ``classification-example.sh`` trains on (Yelp polarity, ag_news,
dbpedia, ...), from the public fast.ai mirror. Downloads are large (up to 690 MB), so they are
resumable (an interrupted ``<file>.part`` is continued with an HTTP ``Range`` request), verified
against the published size and md5 before use, and cached: a verified archive is never fetched twice.

Only the standard library's urllib is used for HTTP, so nothing beyond the base dependencies is needed.
"""
import contextlib
import fcntl
import hashlib
import os
import pathlib
import posixpath
import random
import re
import shutil
import stat
import sys
import tarfile
import time
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass
from http.client import BadStatusLine, HTTPException, RemoteDisconnected
from urllib.parse import urlparse

from . import label_names, storage
from .data import LabeledTexts, check_limit, iter_examples, read_labeled
from .errors import FastTextError, refuse_standard_output
from .stops import note_what_a_stop_left
from .progress import bar
from .writers import check_fasttext_labels, write_fasttext_rows

SPLITS = ("train", "test")
_CHUNK = 1 << 20
_TIMEOUT_S = 60
# A server that sends a byte now and then never trips _TIMEOUT_S (each read gets something in time): fewer than
# _STALL_MIN_BYTES in _STALL_WINDOW_S (under ~0.5 KB/s: days for Yelp's 166 MB) stops the download, .part kept.
_STALL_WINDOW_S = 120
_STALL_MIN_BYTES = 64 * 1024


@dataclass(frozen=True)
class ZhangDataset:
    """One dataset archive: where it lives, what it must hash to, and how many classes it has."""

    name: str
    url: str
    size: int  # bytes of the .tgz
    md5: str
    num_classes: int

    @property
    def filename(self):
        return posixpath.basename(urlparse(self.url).path)


def _entry(name, size, md5, num_classes):
    return ZhangDataset(name, f"https://s3.amazonaws.com/fast-ai-nlp/{name}_csv.tgz", size, md5, num_classes)


# Sizes and md5 sums as listed in fastai's dataset checks file (fastai/data/checks.txt) for the
# fast-ai-nlp mirror of Zhang, Zhao & LeCun (2015), "Character-level Convolutional Networks for
# Text Classification".
DATASETS = {d.name: d for d in (
    _entry("ag_news", 11784419, "b86f328f4dbd072486591cb7a5644dcd", 4),
    _entry("amazon_review_polarity", 688339454, "676f7e5208ec343c8274b4bb085bc938", 2),
    _entry("amazon_review_full", 643695014, "4a1196cf0adaea22f4bc3f592cddde90", 5),
    _entry("dbpedia", 68341743, "239c7837b9e79db34486f3de6a00e38e", 14),
    _entry("sogou_news", 384269937, "950f1366d33be52f5b944f8a8b680902", 5),
    _entry("yahoo_answers", 319476345, "0632a0d236ef3a529c0fa4429b339f68", 10),
    _entry("yelp_review_polarity", 166373201, "48c8451c1ad30472334d856b5d294807", 2),
    _entry("yelp_review_full", 196146755, "1efd84215ea3e30d90e4c33764b889db", 5),
)}


def get_dataset(name_or_spec):
    """A registry name or a :class:`ZhangDataset` (tests and private mirrors pass their own)."""
    if isinstance(name_or_spec, ZhangDataset):
        return name_or_spec
    try:
        return DATASETS[name_or_spec]
    except KeyError:
        raise FastTextError(f"unknown dataset {name_or_spec!r}; choose one of {', '.join(sorted(DATASETS))}") from None


def _md5(path):
    digest = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified(path, spec):
    # Size first: it is free and catches truncated files without hashing hundreds of MB.
    return os.path.getsize(path) == spec.size and _md5(path) == spec.md5


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def _mismatch(part, url, what):
    # A wrong archive must not be resumed from or reused, so it goes before the error is raised.
    _remove(part)
    raise FastTextError(f"download of {url} failed verification ({what}); the partial file was deleted, run again to retry")


def _fetch(url, part, spec, progress):
    """Continue ``part`` up to ``spec.size`` bytes; return once the server has sent its whole response."""
    offset = _partial_size(part)
    if offset > spec.size:  # cannot be a prefix of the right file
        _remove(part)
        offset = 0
    if offset == spec.size:  # complete already, only verification is left
        return
    response = _open(url, offset, part)
    if response is None:  # the server rejects our range (416): the .part is not a prefix
        _remove(part)
        return _fetch(url, part, spec, progress)
    if response.status == 206 and _content_encoding(response):
        # A range of the server's encoding (HTTP's ranges are of the bytes sent), no range of the archive: appended,
        # it failed the md5 and the .part was deleted. The whole is read instead, its start compared with the .part.
        response.close()
        response = _open(url, 0, part)
    with response:
        length = _announced_length(response)
        encoding = _content_encoding(response)
        held = 0  # bytes of the .part that the body's start is compared with, not written again
        if encoding:  # (a server or CDN that compresses the .tgz again: its length is the encoding's)
            _refuse_an_encoding(encoding, response, url, part, spec, offset)
            _refuse_a_page(response, None, url, spec)
            held, length = offset, None
        elif response.status != 206:  # the server ignored Range and sends the whole file: start over
            if offset and length != spec.size:
                # ...unless what it sends is not the archive (a captive portal's or a proxy's page): taken for
                # the whole file, it deleted the .part (hundreds of MB) or truncated it to the page.
                what = "a response of unknown length" if length is None else f"{length} bytes"
                raise FastTextError(f"cannot download {url}: the request to resume at byte {offset} was answered with "
                                    f"{what}, not the {spec.size}-byte archive (a captive portal or a proxy's page?); "
                                    f"the partial download {part} is kept: run again to resume (delete it to start "
                                    f"over)")
            offset = 0
            _refuse_a_page(response, length, url, spec)
        elif _sends_the_whole(response, length, spec):  # (a 206 from byte 0 whatever the range: it was appended)
            offset = 0
        else:
            _check_range_start(response, offset, url, part)
        if length is not None and length != spec.size - offset:
            _mismatch(part, url, f"server sends {offset + length} bytes, expected {spec.size}")
        # (O_NOFOLLOW: a link put there since _partial_size looked is refused, not followed out of the cache)
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if offset else os.O_TRUNC)
        with os.fdopen(os.open(part, flags, 0o666), "ab" if offset else "wb") as out, \
                (os.fdopen(os.open(part, os.O_RDONLY | os.O_NOFOLLOW), "rb") if held
                 else contextlib.nullcontext()) as have, \
                bar(total=spec.size, initial=offset - held, desc=spec.filename, disable=not progress,
                    unit="B", unit_scale=True, unit_divisor=1024) as pbar:
            # read1: what has arrived, not a full _CHUNK (read waits for 1 MB however slowly it trickles in)
            read = getattr(response, "read1", response.read)
            if encoding:
                read = _Gunzipped(read)
            window_start, window_bytes = time.monotonic(), 0
            while True:
                try:
                    block = read(_CHUNK)
                except (HTTPException, OSError, zlib.error) as exc:
                    block, error = b"", exc
                else:
                    error = None
                if not block:
                    break
                if held:  # (a gzip-encoded answer to a resume: its start is what the .part holds already)
                    same = block[:held]
                    if have.read(len(same)) != same:
                        raise FastTextError(f"cannot download {url}: the server sends the archive gzip-encoded again "
                                            f"(Content-Encoding), and it does not begin with the {offset} bytes of the "
                                            f"partial download {part} (another archive's?); it is kept: delete it to "
                                            f"download the archive whole")
                    held -= len(same)
                    pbar.update(len(same))
                    window_bytes += len(same)
                    block = block[len(same):]
                out.write(block)
                out.flush()  # (on disk as it arrives: a kill -9 keeps all of it, and the progress can be seen there)
                pbar.update(len(block))
                window_bytes += len(block)
                if time.monotonic() - window_start >= _STALL_WINDOW_S:
                    if window_bytes < _STALL_MIN_BYTES:
                        raise FastTextError(f"cannot download {url}: the server sends too slowly ({window_bytes} "
                                            f"bytes in {_STALL_WINDOW_S:g} s, {out.tell()} of {spec.size} so far); "
                                            f"the partial download is kept: run again to resume (or pass "
                                            f"--base-url a faster mirror)")
                    window_start, window_bytes = time.monotonic(), 0
                if out.tell() > spec.size:  # (a response of no announced length: a page, or an endless stream,
                    break  # was written until it ended, however far past the archive: tens of GB, a full disk)
            if out.tell() > spec.size:
                out.close()
                _mismatch(part, url, f"the server sends more than the {spec.size} bytes expected")
            if isinstance(error, zlib.error):  # (its bytes damaged on the way: what was decoded cannot be trusted)
                out.close()
                _mismatch(part, url, f"the server's gzip encoding of it cannot be decoded: {error}")
            # http.client ends a short body silently instead of raising IncompleteRead, so compare with
            # the announced length (a gzip encoding's own end, for one sent so). The .part is kept: the next call
            # resumes where this one stopped.
            cut = not read.complete if encoding else length is not None and out.tell() < spec.size
            if error or cut:
                raise FastTextError(f"cannot download {url}: connection lost after {out.tell()} of {spec.size} "
                                    f"bytes{f' ({error.__class__.__name__})' if error else ''}; run again to resume")
            if held:  # (the whole body was shorter than the .part: it is no archive of which the .part is a start)
                raise FastTextError(f"cannot download {url}: the server sends the archive gzip-encoded again "
                                    f"(Content-Encoding), and it is shorter than the {offset} bytes of the partial "
                                    f"download {part}; it is kept: delete it to download the archive whole")
            out.flush()
            if not encoding and length is None and out.tell() < spec.size and _starts_as_the_archive(part):
                # No announced length (an HTTP/1.0 proxy), so the connection's close was the body's only end: a
                # body cut short looked complete, failed its size check and was deleted. One that begins as the
                # archive does (gzip) is kept; a page (a captive portal's) is not, and fails verification below.
                raise FastTextError(f"cannot download {url}: the connection closed after {out.tell()} of {spec.size} "
                                    f"bytes (the server announced no length); run again to resume")


def _open(url, offset, part):
    """The server's response to a request for ``url`` from byte ``offset`` (a Range); None: the range was refused
    (416), so ``part`` is no prefix of the archive. Its errors end in one line."""
    request = urllib.request.Request(url, headers={"Range": f"bytes={offset}-"} if offset else {})
    try:
        return urllib.request.urlopen(request, timeout=_TIMEOUT_S)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:
            return None
        # (urllib's reason for a redirect loop holds line breaks: the error is one line)
        raise FastTextError(f"cannot download {url}: HTTP {exc.code} {' '.join(str(exc.reason).split())}"
                            f"{_when_busy(exc, part)}") from None
    except BadStatusLine as exc:
        raise FastTextError(f"cannot download {url}: {_not_http(exc)}") from None
    except (urllib.error.URLError, HTTPException, OSError) as exc:
        raise FastTextError(f"cannot download {url}: {getattr(exc, 'reason', exc)}") from None
    except ValueError as exc:  # (url itself was parsed by _archive_url: a redirect's Location, e.g. http://[::1/...)
        raise FastTextError(f"cannot download {url}: the server redirects to a URL that cannot be read "
                            f"({exc})") from None  # (was a ValueError traceback)


def _content_encoding(response):
    """The encoding the server sends the body in (Content-Encoding), lower case; ``""``: none (the bytes as they are).
    urllib decodes none: a server that gzips the .tgz again (a CDN, a web server compressing every file) sent bytes
    that "failed verification ... run again to retry", which failed so every time."""
    encoding = " ".join((response.headers.get("Content-Encoding") or "").split()).lower()
    return "" if encoding == "identity" else encoding


def _refuse_an_encoding(encoding, response, url, part, spec, offset):
    """Refuse an answer sent in another encoding than gzip (which :class:`_Gunzipped` decodes), or a range of its
    encoding to a request for the whole (``response.status`` 206): neither is the archive's bytes."""
    if encoding in ("gzip", "x-gzip") and response.status != 206:
        return
    kept = f"; the partial download {part} is kept" if offset else ""
    what = ("and answers a request for all of it with a range of that" if encoding in ("gzip", "x-gzip")
            else "which is not decoded here")
    encoding = encoding[:40] if encoding.isprintable() else "an unreadable"
    raise FastTextError(f"cannot download {url}: the server sends the archive {encoding}-encoded (Content-Encoding: "
                        f"{encoding}), {what}: pass --base-url a mirror that sends the .tgz as it is, or copy "
                        f"{spec.filename} into the cache folder yourself (a verified archive there is used as it "
                        f"is){kept}")


class _Gunzipped:
    """A read function for a body the server sent gzip-encoded, returning the bytes it encodes: at most ``size`` a
    call (a small body may encode gigabytes); ``b""`` at the end. ``complete``: the encoding's own end was reached
    (not: the body was cut short). The decoded bytes are verified as any download's are, by size and md5."""

    def __init__(self, read):
        self._read = read
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)  # (16+: gzip's header and trailer, not zlib's)

    @property
    def complete(self):
        return self._inflate.eof

    def __call__(self, size):
        while not self._inflate.eof:
            encoded = self._inflate.unconsumed_tail or self._read(size)
            if not encoded:
                return b""
            block = self._inflate.decompress(encoded, size)
            if block:
                return block
        return b""


# Answers that say "not now" rather than "not here": the same request may succeed later.
_BUSY = (429, 502, 503, 504)


def _when_busy(error, part):
    """What a busy server's answer (``error``, an HTTPError) means for the user: run again later (when its
    Retry-After says), and that the partial download ``part`` is kept. It said only "HTTP 503 Service Unavailable",
    and a user deleted a .part of hundreds of MB to start clean. Other statuses: ``""``."""
    if error.code not in _BUSY:
        return ""
    wait = " ".join(((error.headers and error.headers.get("Retry-After")) or "").split())[:40]  # seconds, or a date
    if wait.isdigit():
        wait = f"; it asks to wait {wait} s"
    elif wait and wait.isprintable():
        wait = f"; it asks to wait until {wait}"
    else:
        wait = ""
    kept = f"; the partial download {part} is kept and will be resumed" if os.path.exists(part) else ""
    return f" (the server is busy or down{wait}): run again later{kept}"


def _not_http(error):
    """A BadStatusLine's meaning: the answer has no HTTP status line (a service of another protocol on that port,
    a TLS port written http://). Its message was that first line itself: up to 64 KB of binary bytes."""
    if isinstance(error, RemoteDisconnected):  # (a BadStatusLine too: nothing was answered at all)
        return str(error)
    return (f"the server's answer is not HTTP (it begins {str(error.line)[:24]!r}): is the URL's scheme (http://, "
            f"https://) and port right?")


def _partial_size(part):
    """The bytes of the partial download ``part`` to resume from (0: none). Only a regular file is one of ours: a
    symbolic link (another user's, in a shared cache folder) was followed, the rest of the archive appended to its
    target outside the cache, and a FIFO hung the download (opening it waits for a reader). Such a thing is removed
    (a link's target stays as it was) and the download starts over; a folder there is refused."""
    try:
        found = os.lstat(part)
    except FileNotFoundError:
        return 0
    if stat.S_ISREG(found.st_mode):
        return found.st_size
    _refuse_a_folder(part, "the partial download")
    os.remove(part)
    return 0


def _refuse_a_folder(path, what):
    """Refuse a folder at ``path``, where ``what`` goes (someone's folder: not ours to delete). os.remove said only
    "cannot write the download cache ...: Is a directory", naming neither the folder nor what to do."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(found.st_mode):
        raise FastTextError(f"the download cache holds a folder {path} where {what} goes: move it away, or choose "
                            f"another cache folder")


def _refuse_a_page(response, length, url, spec):
    """A text page answering the download (a captive portal's login page, an expired link's error page) is said to be
    one: it was taken for a damaged archive, "failed verification ... run again to retry", which fails alike every
    time. One of the archive's exact length is left to the md5 (a real archive a server labels text/plain)."""
    if response.headers.get("Content-Type") is None:  # (get_content_type's default is text/plain: no page)
        return
    kind = response.headers.get_content_type()
    if kind.startswith("text/") and length != spec.size:
        raise FastTextError(f"cannot download {url}: the server answered with a {kind} page, not the {spec.size}-byte "
                            f"archive (a captive portal, a login page or an expired link?); open the URL in a browser "
                            f"to see it, or pass --base-url a mirror that holds {spec.filename}")


def _starts_as_the_archive(path):
    """Does ``path`` begin as a .tgz does (gzip's magic bytes)?"""
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _check_range_start(response, offset, url, part):
    """Refuse a 206 whose Content-Range starts elsewhere than at ``offset`` (a broken cache or proxy answering from
    byte 0): its bytes were appended all the same, the archive failed its md5, and the .part (up to 690 MB) was
    deleted. The .part is kept for a resume once the path to the server is sound again."""
    match = re.match(r"\s*bytes\s+(\d+)-", response.headers.get("Content-Range") or "")
    if match and int(match.group(1)) != offset:
        raise FastTextError(f"cannot download {url}: asked to resume at byte {offset}, the server sends the bytes "
                            f"from {match.group(1)} (a broken cache or proxy on the way?); the partial download {part} "
                            f"is kept: run again to resume (delete it to start over)")


def _sends_the_whole(response, length, spec):
    """Is a 206 answer to a resume the whole archive (a server sending from byte 0 whatever the range asked): no
    Content-Range and the archive's length, or a Content-Range from byte 0 to its end? Its bytes were appended to the
    .part, and the archive "failed verification ... run again to retry", which failed so every time."""
    content_range = response.headers.get("Content-Range")
    if content_range is None:
        return length == spec.size
    match = re.match(r"\s*bytes\s+0-(\d+)/", content_range)
    return bool(match) and int(match.group(1)) == spec.size - 1 and length in (None, spec.size)


def _announced_length(response):
    """The body's length as the server announced it, or None: none announced, or a Content-Length that is no
    number (two headers a proxy merged, ``123, 123``), which http.client itself reads as unknown (here it was a
    ValueError traceback)."""
    try:
        length = int(response.headers.get("Content-Length"))
    except (TypeError, ValueError):
        return None
    return length if length >= 0 else None


def download(name_or_spec, cache_dir, base_url=None, progress=True):
    """Download a dataset archive into ``cache_dir`` (resuming, verifying); return its local path.

    ``base_url`` replaces everything before the file name (a mirror or a local test server). Another download into
    the same cache (a second notebook, the command line) is waited for (:func:`_cache_lock`), then its archive used.
    """
    refuse_standard_output(cache_dir, "cache_dir", "the downloaded archive", "a directory")
    spec = get_dataset(name_or_spec)
    url = _archive_url(spec, base_url)
    path = os.path.join(cache_dir, spec.filename)
    part = path + ".part"
    try:
        os.makedirs(cache_dir, exist_ok=True)
        with _cache_lock(cache_dir, progress):
            _refuse_a_folder(path, "the archive")  # (before the download: os.replace would refuse it only after)
            if os.path.exists(path):
                if _verified(path, spec):
                    return path
                _remove(path)  # corrupt or from another version: fetch again
            _fetch(url, part, spec, progress)
            size = os.path.getsize(part)
            if size != spec.size:
                _mismatch(part, url, f"{size} bytes, expected {spec.size}")
            md5 = _md5(part)
            if md5 != spec.md5:
                _mismatch(part, url, f"md5 {md5}, expected {spec.md5}")
            os.replace(part, path)  # only a verified archive ever carries the final name
    except KeyboardInterrupt as exc:  # (Ctrl-C, SIGTERM: its line said "stopped and cleaned up", and a user deleted
        if _is_a_file(part):  # the .part of hundreds of MB, or thought the download had to start over)
            note_what_a_stop_left(exc, f"the partial download {part} is kept: a rerun resumes it")
        raise
    except OSError as exc:  # the cache itself: a full disk, a file in the way (the server's errors are handled in _fetch)
        kept = " (the partial download is kept: run again to resume)" if _is_a_file(part) else ""
        raise FastTextError(f"cannot write the download cache {cache_dir}: "
                            f"{storage.why_not_written(cache_dir, exc)}{kept}") from None
    return path


def _is_a_file(path):
    """A regular file, not a link to one (os.path.isfile follows links)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


_MIRROR_SCHEMES = ("http", "https", "ftp", "file")  # what urllib opens


def _archive_url(spec, base_url):
    """The URL of ``spec``'s archive: its own, or the file of that name under ``base_url``, a URL or a local folder
    (an offline machine's copy of the archives). A folder, a URL without a scheme (``mirror.local/data``) or one
    urllib cannot parse was a ValueError traceback ('unknown url type')."""
    if base_url is None:
        return spec.url

    def refused(why):
        return FastTextError(f"cannot download from the mirror {base_url!r}: {why}")

    try:
        scheme = urlparse(base_url).scheme.lower()
    except ValueError as exc:  # (http://[::1: "Invalid IPv6 URL")
        raise refused(exc) from None
    if scheme not in _MIRROR_SCHEMES:
        if scheme and len(scheme) > 1 and not base_url[len(scheme) + 1:].startswith("/"):  # (mirror.local:8000/data)
            raise refused(f"it has no scheme: write http://{base_url} (or https://)")
        if scheme and len(scheme) > 1:  # (a letter: a Windows drive, C:\mirror)
            raise refused(f"{scheme}:// is not read here, only {', '.join(s + '://' for s in _MIRROR_SCHEMES)} URLs "
                          f"or a local folder (or copy the archive {spec.filename} into the cache folder: a verified "
                          f"archive there is used as it is)")
        if not os.path.isdir(base_url):
            raise refused("it is no URL (http://, https://, ...) and no folder")
        base_url = pathlib.Path(base_url).resolve().as_uri()
    url = base_url.rstrip("/") + "/" + spec.filename
    try:
        urllib.request.Request(url)
    except ValueError as exc:
        raise refused(exc) from None
    return url


@contextlib.contextmanager
def _cache_lock(cache_dir, progress):
    """Hold an exclusive lock on ``cache_dir`` while an archive is looked up, fetched and verified there. Two
    downloads into one cache at once both wrote the one ``.part`` (the second resumed the first's, both appended):
    the second failed in a traceback once the first had put the archive in place, or the mixed .part failed its md5.
    The lock is an flock on the directory itself (no lock file to leave behind; released when the process ends, however
    it ends); a file system without locks goes unlocked, as before."""
    fd = os.open(cache_dir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if progress:
                print(f"waiting for another download into {cache_dir} to finish", file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # (ENOLCK, EOPNOTSUPP: no locks there)
            pass
        yield
    finally:
        os.close(fd)


def _extract_splits(archive, folder, out_dir):
    """Copy ``<folder>/train.csv`` and ``test.csv`` (and ``classes.txt``, when the archive has one) out
    of the archive; return their paths by split (``"classes"`` for the names).

    Members are matched by name and copied to paths we choose, so an archive can never write
    outside ``out_dir`` (no ``extractall``); links are not followed. A member the archive holds twice (an archive
    updated with ``tar -r``) is read as ``tar -xzf`` (fastText's classification-example.sh) extracts it: the later
    one wins, so the whole archive is read (the scan stopped once all three were found: the older copy was
    prepared).
    """
    wanted = {f"{folder}/{split}.csv": split for split in SPLITS}
    wanted[f"{folder}/{label_names.ZHANG_FILE}"] = "classes"
    found, links = {}, {}
    os.makedirs(os.path.join(out_dir, folder))  # so that data errors name e.g. .../ag_news_csv/train.csv
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                split = wanted.get(posixpath.normpath(member.name))
                if split is None:
                    continue
                if not member.isfile():
                    if member.issym() or member.islnk():
                        links[split] = f"{member.name} is a link (to {member.linkname}), not a file"
                    continue
                name = label_names.ZHANG_FILE if split == "classes" else f"{split}.csv"
                found[split] = os.path.join(out_dir, folder, name)
                links.pop(split, None)
                with tar.extractfile(member) as src, open(found[split], "wb") as dst:
                    shutil.copyfileobj(src, dst, _CHUNK)
    except (tarfile.TarError, EOFError, OSError) as exc:
        if getattr(exc, "errno", None) in storage.NO_ROOM:  # a full TMPDIR, not a bad archive: staging_dir says so
            raise
        raise FastTextError(f"{archive}: cannot read the archive ({exc})") from None
    missing = [name for name, split in wanted.items() if split not in found | links.keys() and split != "classes"]
    unread = [links[split] for split in SPLITS if split in links and split not in found]
    if missing or unread:
        raise FastTextError(f"{archive}: " + "; ".join(([f"archive has no {', '.join(missing)}"] if missing else [])
                                                       + unread))
    return found


def dataset_label_names(spec, classes_file=None):
    """What ``spec``'s classes mean: the built-in table (label_names.KNOWN) for the registry's
    datasets, else the archive's own ``classes.txt`` (``classes_file``: extracted); ``{}`` when neither says."""
    if spec.name in label_names.KNOWN:
        return dict(label_names.KNOWN[spec.name])
    if not classes_file:
        return {}
    return label_names.read_file(classes_file, where=f"{spec.filename}:{spec.name}_csv/{label_names.ZHANG_FILE}")


def _read_split(path, member, limit):
    """A split extracted to ``path`` (a temporary), its errors naming the archive's ``member`` instead: the user
    can look there, not at a file deleted by the time the error is shown. ``limit``: :func:`_spread_sample`.
    Returns the documents and each one's row number in the member, from 1 (None: 1, 2, 3, ...)."""
    try:
        if limit is None:
            return read_labeled(path, fmt="csv", find_names=False), None
        return _spread_sample(path, limit)
    except FastTextError as exc:
        raise FastTextError(str(exc).replace(path, member)) from None


def _shuffled(count):
    """Document indices ``0 .. count-1`` in a seeded random order, the same every run: the order in which
    :func:`prepare` writes a split, as fastText's classification-example.sh writes its splits shuffled (``myshuf``).
    Some archives list their classes one after the other (dbpedia's train.csv: 40,000 rows of class 1, then of class
    2, ...): whatever reads such a file's first rows saw one class (fastText C++, which trains in file order;
    ``read_labeled(limit=N)``; notebook 03's timing rows; the first 10,000 documents the training settings look at)."""
    order = list(range(count))
    random.Random(0).shuffle(order)
    return order


def _spread_sample(path, limit):
    """``limit`` documents of the CSV split at ``path`` drawn evenly from all of it (a reservoir sample, seeded: the
    same every run), in the file's order (then shuffled as all of a split is: :func:`_shuffled`), and their row
    numbers (from 1); all of it when it has no more. Not its first ``limit`` rows: some sets list their classes
    one after the other (dbpedia's train.csv: 40,000 rows of class 1, then of class 2, ...), and their first rows
    were a split of one class (fastText's script shuffles the whole file)."""
    rng = random.Random(0)
    kept = []  # (row number, label, text)
    for number, (label, text) in enumerate(iter_examples(path, "csv")):
        if number < limit:
            kept.append((number, label, text))
        else:
            slot = rng.randrange(number + 1)
            if slot < limit:
                kept[slot] = (number, label, text)
    if not kept:
        raise FastTextError(f"{path}: contains no labeled documents")
    kept.sort()
    return LabeledTexts([label for _, label, _ in kept], [text for _, _, text in kept]), [n + 1 for n, _, _ in kept]


# What a rerun of prepare is told when a file it would replace holds something else.
DIFFERS_HINT = ("it differs from what prepare writes (edited since, or prepared with another limit or archive): pass "
                "--overwrite (overwrite=True) to replace it, or choose another --output")


def _refuse_what_differs(outputs):
    """Refuse (one line naming it) the first of ``outputs`` (``{uri: storage.Written}``) whose uri holds something
    other than what was written for it: a names file the user edited, splits of another ``limit``. Byte for byte the
    same is no loss: a rerun (notebook 01 on every run) succeeds."""
    for uri, written in outputs.items():
        if storage.would_replace(uri) and not storage.holds(uri, written):
            raise storage.already_exists(uri, DIFFERS_HINT)


def prepare(name, out_dir_or_s3_prefix, cache_dir, base_url=None, limit=None, progress=True, on_written=None,
            overwrite=False):
    """Download ``name`` and write normalized fastText files ``<name>.train`` / ``<name>.test``.

    The output goes to a local directory or an ``s3://`` prefix, each split in a seeded random order as
    fastText's script writes them (:func:`_shuffled`); ``limit`` caps the documents per split (quick
    experiments): a sample spread over the whole split, the same every run (:func:`_spread_sample`). When the
    classes' meanings are known (:func:`dataset_label_names`), ``<name>.classes.txt`` (``id=name`` lines) is
    written first, beside them: training on ``<name>.train`` then stores the names in the bundle
    (label_names.py). Returns
    ``{"train": uri, "test": uri}`` and ``"label_names": uri`` when that file was written. ``on_written``: called
    with that once the files are in place (an error it raises puts the old local ones back), after S3 uploads
    (storage.atomic_writes' on_written).

    Files already there are kept unless ``overwrite``: where one holds other bytes than this run would write (a
    ``.classes.txt`` the user edited, splits of another ``limit``), nothing is written and the error names it. A run
    that writes the same bytes again succeeds (a notebook rerun), and leaves those files as they are: whether they
    are the same is known only once they are prepared, so each is compared as it is written, before anything is put
    in place, and again as the files are put in place (a file another run put there meanwhile, or one changed since:
    storage.atomic_writes' ``if_taken``). On S3 a HEAD tells (storage.holds: the ETag); an object it cannot tell
    and that may not be read is refused before the download (storage.check_comparable).
    """
    refuse_standard_output(out_dir_or_s3_prefix, "out_dir_or_s3_prefix", "the dataset", "a directory")
    refuse_standard_output(cache_dir, "cache_dir", "the downloaded archive", "a directory")
    spec = get_dataset(name)
    check_limit(limit)  # before a download of up to ~1.5 GB
    # and the output, before it too: a missing bucket or an unwritable folder was found after the download and
    # the normalization of every review (minutes for Yelp; notebook 01 with a wrong bucket)
    storage.check_writable(out_dir_or_s3_prefix)
    if not overwrite:  # and files there that could be told the same only once written, and then not at all
        for name in [spec.name + label_names.SUFFIX] + [f"{spec.name}.{split}" for split in SPLITS]:
            storage.check_comparable(storage.join(out_dir_or_s3_prefix, name))
    archive = download(spec, cache_dir, base_url=base_url, progress=progress)
    with storage.staging_dir() as tmp:
        csvs = _extract_splits(archive, f"{spec.name}_csv", tmp)
        names = dataset_label_names(spec, csvs.get("classes"))
        names_uri = storage.join(out_dir_or_s3_prefix, spec.name + label_names.SUFFIX) if names else None
        # All files are written in full before any replaces an older one: a failure in the second split (a full
        # disk, a label fastText's format cannot hold) left a new .train beside an old .test, and a names file the
        # user had edited replaced. The names file is put in place first: a .train without it is never left behind.
        written = {split: storage.join(out_dir_or_s3_prefix, f"{spec.name}.{split}") for split in SPLITS}
        uris = ([names_uri] if names else []) + [written[split] for split in SPLITS]
        if names:
            written["label_names"] = names_uri
        # Without overwrite, files of the same bytes as this run's stay as they are, others are refused
        # (_refuse_what_differs, and again as the files are put in place: a file another run put there meanwhile,
        # or one changed since it was compared); where none is there, none is ever replaced (a link, S3's
        # conditional PUT).
        with storage.atomic_writes(uris, overwrite=overwrite, if_taken=None if overwrite else (
                lambda uri: _refuse_what_differs({uri: outputs[uri]})),
                on_written=on_written and (lambda: on_written(written))) as files:
            outputs = {uri: storage.Written(f, s3=storage.is_s3(uri)) for uri, f in zip(uris, files)}
            if names:
                outputs[names_uri].write("".join(f"{k}={v}\n" for k, v in names.items()).encode("utf-8"))
                if not overwrite:  # at once: an edited names file is refused before minutes of normalizing
                    _refuse_what_differs({names_uri: outputs[names_uri]})
            for split in SPLITS:
                data, rows = _read_split(csvs[split], f"{archive}:{spec.name}_csv/{split}.csv", limit)
                check_fasttext_labels(data, written[split])
                # (its errors name the document by its row in the archive's CSV)
                write_fasttext_rows(data, outputs[written[split]], written[split], order=_shuffled(len(data)),
                                    numbers=rows)
                del data  # one split in memory at a time
            if not overwrite:  # the names file last: the one a user edits, looked at just before all are put in place
                _refuse_what_differs({uri: outputs[uri] for uri in uris[1:] + uris[:1]} if names else outputs)
    return written
