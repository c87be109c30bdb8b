"""The dataset downloader against a local HTTP server (no internet): resume, verification, caching, prepare."""
import contextlib
import errno
import gzip
import hashlib
import http.server
import io
import os
import re
import signal
import subprocess
import sys
import socket
import struct
import tarfile
import tempfile
import threading
import time

import pytest

from conftest import cli_in_process, remount_ro
from fasttext_lib import storage
from fasttext_lib.data import read_labeled
from fasttext_lib.download import DATASETS, ZhangDataset, download, prepare
from fasttext_lib.errors import FastTextError
from fasttext_lib.text import normalize_text
from fasttext_lib.writers import csv_line

NAME = "tiny"
TRAIN = [("1", 'The food was "GREAT"!\nWould go again.'), ("2", "Terrible; service: slow."), ("1", "ok<br />fine")]
TEST = [("2", "Never (again)?"), ("1", "Don't miss it.")]
TITLED = ("3", "A Title", 'Body with ""quotes""\\nand a break.')  # ag_news style: class, title, body


def _add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


@pytest.fixture
def archive(tmp_path):
    """A Zhang-style ``tiny_csv.tgz`` and its spec, with its real size and md5."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        _add(tar, f"{NAME}_csv/readme.txt", b"tiny dataset\n")
        _add(tar, f"{NAME}_csv/classes.txt", b"good\nbad\nother\n")
        _add(tar, f"{NAME}_csv/train.csv", "".join(csv_line(l, t) for l, t in TRAIN).encode())
        test_rows = "".join(csv_line(l, t) for l, t in TEST) + '"%s","%s","%s"\n' % TITLED
        _add(tar, f"{NAME}_csv/test.csv", test_rows.encode())
        _add(tar, "../escape.csv", b"must never be written\n")
    data = buf.getvalue()
    spec = ZhangDataset(NAME, f"https://example.invalid/mirror/{NAME}_csv.tgz", len(data),
                        hashlib.md5(data).hexdigest(), 3)
    return spec, data


class _Handler(http.server.BaseHTTPRequestHandler):
    files = {}  # path -> bytes; set per server
    log = None  # list of (path, Range header)
    ignore_range = False
    truncate_at = None  # announce the full length but close after this many bytes
    slow = None  # send the body this many bytes at a time, 10 ms apart
    refuse_range_once = False  # answer the first request for a range 416 (the .part is no prefix, as it says)
    # A Content-Encoding the archive is sent in, as a misconfigured server or CDN does (gzip: compressed again; its
    # ranges are of that encoding, as HTTP has them); another one: the header alone.
    encoding = None
    # With encoding gzip or x-gzip: the header alone, the .tgz sent as it is, its ranges the archive's (Apache's
    # ``AddEncoding x-gzip .tgz``, an S3 object whose metadata says ContentEncoding gzip).
    labelled_only = False
    no_length = False  # no Content-Length: the connection's close ends the body
    content_type = None  # the Content-Type of the archive's answers (None: none sent)
    damaged = False  # a gzip encoding damaged on the way
    from_zero = None  # a Range answered 206 with the whole archive: "bare" (no Content-Range) or "content-range"
    hold_at = None  # send this many bytes, then wait for ``release`` (a threading.Event) before the rest
    # A Range answered 206 with the archive's first this many bytes (Content-Range: bytes 0-<prefix - 1>/<size>),
    # wherever it asked to start: each time, or only the first time (``prefix_once``).
    prefix = None
    prefix_once = False
    cap = None  # every request answered 206 with at most this many bytes from where it asks (a server's range limit)
    piece_delay = None  # with cap: wait this many seconds before each answer (a server slow to send each piece)
    pieces_from_zero = False  # with cap: each piece begins at byte 0 (the bytes before where it asks sent again)
    # With cap: the piece asked for from this byte on is a bad one (``bad_piece``): "length", its Content-Length
    # disagrees with its Content-Range; "overlong", no Content-Length and more bytes than its Content-Range says;
    # "size", its Content-Range gives the archive another size.
    bad_piece_from = None
    bad_piece = None
    # A Range answered 206 from where it asks but with no readable Content-Range: "none" (no such header, the rest's
    # Content-Length), "none, no length" (neither), or the header's value (one that cannot be read).
    no_content_range = None
    # (status, Retry-After or "") answered to the first requests, one each, before the file is served (a busy server)
    busy = ()
    reset_at = None  # the first answer's connection is reset (RST) after this many bytes of its body; later ones whole
    slow_once = False  # with slow: only the first answer trickles
    reset_every = None  # every answer's connection is reset after this many bytes of its body (from where it asks)

    # With encoding gzip: each range gzipped alone, its Content-Range the archive's bytes (a server compressing each
    # answer's body after cutting the range, as some do), its Content-Length the gzip's ("no length": none)
    gzips_each_range = False
    # A Range answered with a Content-Range of unknown total (bytes <first>-<last>/*): "rest" (the bytes to the end
    # asked for), or this many bytes (a piece ending before the archive's end)
    unknown_total = None
    # A request for the whole (no Range) answered 206 from byte 0 instead of 200, as a server that gzips on the fly
    # may: "given" (Content-Range bytes 0-<last>/<size>) or "unknown" (bytes 0-<last>/*); a request for a range too
    # (``whole_as_206_to_ranges``)
    whole_as_206 = None
    whole_as_206_to_ranges = False
    # Every request answered 206 with at most this many bytes of the archive gzipped again, from where it asks (byte 0
    # for the whole), of unknown total (bytes <first>-<last>/*): a server gzipping on the fly that limits each answer
    gzip_pieces = None

    def do_GET(self):
        self.log.append((self.path, self.headers.get("Range")))
        data = self.files.get(self.path)
        if data is None:
            self.send_error(404)
            return
        if self.gzip_pieces:
            encoded = gzip.compress(data, mtime=0)
            start = int(self.headers["Range"].split("=")[1].split("-")[0]) if self.headers.get("Range") else 0
            piece = encoded[start:start + self.gzip_pieces]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{start + len(piece) - 1}/*")
            self.send_header("Content-Length", str(len(piece)))
            self.send_header("Content-Encoding", "gzip")
            self.end_headers()
            self.wfile.write(piece)
            return
        if self.gzips_each_range and self.headers.get("Range"):
            start = int(self.headers["Range"].split("=")[1].split("-")[0])
            body = gzip.compress(data[start:], mtime=0)
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            if self.gzips_each_range != "no length":
                self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Encoding", self.encoding)
            self.end_headers()
            self.wfile.write(body)
            return
        if self.busy:
            (status, retry_after), type(self).busy = self.busy[0], self.busy[1:]
            self.send_response(status)
            if retry_after:
                self.send_header("Retry-After", retry_after)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.reset_every is not None:
            rng = self.headers.get("Range")
            start = int(rng.split("=")[1].split("-")[0]) if rng else 0
            if start + self.reset_every < len(data):
                self._reset_after(data, self.reset_every, start)
                return
        if self.reset_at is not None:
            self._reset_after(data, self.reset_at)
            type(self).reset_at = None
            return
        if self.headers.get("Range") and self.prefix is not None:
            self._send_range(data, 0, self.prefix)
            if self.prefix_once:
                type(self).prefix = None
            return
        if self.cap is not None:
            start = int(self.headers["Range"].split("=")[1].split("-")[0]) if self.headers.get("Range") else 0
            end = min(len(data), start + self.cap)
            if self.piece_delay:
                time.sleep(self.piece_delay)
            if self.bad_piece_from is not None and start >= self.bad_piece_from:
                self._send_a_bad_piece(data, start, end)
                return
            self._send_range(data, 0 if self.pieces_from_zero else start, end)
            return
        if self.headers.get("Range") and self.no_content_range:
            start = int(self.headers["Range"].split("=")[1].split("-")[0])
            self.send_response(206)
            if not self.no_content_range.startswith("none"):
                self.send_header("Content-Range", self.no_content_range)
            if self.no_content_range != "none, no length":
                self.send_header("Content-Length", str(len(data) - start))
            self.end_headers()
            self.wfile.write(data[start:])
            return
        if self.encoding in ("gzip", "x-gzip") and not self.labelled_only:
            data = gzip.compress(data, mtime=0)
            if self.damaged:  # its CRC: the archive decodes whole, its encoding does not check
                data = data[:-5] + bytes([data[-5] ^ 1]) + data[-4:]
        if self.whole_as_206 and (self.whole_as_206_to_ranges or not self.headers.get("Range")):
            self.send_response(206)
            self.send_header("Content-Range", f"bytes 0-{len(data) - 1}/"
                                              f"{len(data) if self.whole_as_206 == 'given' else '*'}")
            if not self.no_length:
                self.send_header("Content-Length", str(len(data)))
            if self.encoding:
                self.send_header("Content-Encoding", self.encoding)
            self.end_headers()
            self.wfile.write(data)
            return
        if self.headers.get("Range") and self.from_zero:
            self.send_response(206)
            if self.from_zero == "content-range":
                self.send_header("Content-Range", f"bytes 0-{len(data) - 1}/{len(data)}")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:self.truncate_at] if self.truncate_at is not None else data)
            return
        if self.headers.get("Range") and self.refuse_range_once:
            type(self).refuse_range_once = False
            self.send_error(416)
            return
        start, end = 0, len(data)
        rng = self.headers.get("Range")
        if rng and not self.ignore_range:
            start = int(rng.split("=")[1].split("-")[0])
            if start >= len(data):
                self.send_error(416)
                return
            self.send_response(206)
            if self.unknown_total is None:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                end = len(data) if self.unknown_total == "rest" else min(len(data), start + self.unknown_total)
                self.send_header("Content-Range", f"bytes {start}-{end - 1}/*")
        else:
            self.send_response(200)
        body = data[start:end]
        if not self.no_length:
            self.send_header("Content-Length", str(len(body)))
        if self.content_type:
            self.send_header("Content-Type", self.content_type)
        if self.encoding:
            self.send_header("Content-Encoding", self.encoding)
        self.end_headers()
        if self.hold_at is not None:
            self.wfile.write(body[:self.hold_at])
            self.wfile.flush()
            self.release.wait(60)
            body = body[self.hold_at:]
        body = body[:self.truncate_at] if self.truncate_at is not None else body
        slow = self.slow
        if self.slow_once:
            type(self).slow = None
        for at in range(0, len(body), slow or len(body) or 1):  # slow: this many bytes at a time
            self.wfile.write(body[at:at + (slow or len(body))])
            self.wfile.flush()
            if slow:
                time.sleep(0.01)

    def _reset_after(self, data, size, start=0):
        """Answer the whole file (200; from ``start``: 206), but reset the connection after the first ``size`` bytes
        of its body: a lost connection."""
        if start:
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        self.wfile.write(data[start:start + size])
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # (close: a RST)
        self.close_connection = True
        self.connection.close()

    def _send_range(self, data, start, end):
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        self.send_header("Content-Length", str(end - start))
        self.end_headers()
        self.wfile.write(data[start:end])

    def _send_a_bad_piece(self, data, start, end):
        self.send_response(206)
        size = len(data) + (9 if self.bad_piece == "size" else 0)
        self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        if self.bad_piece == "length":
            self.send_header("Content-Length", str(end - start + 7))
        self.end_headers()
        self.wfile.write(data[start:end + (self.cap if self.bad_piece == "overlong" else 7)])

    def log_message(self, *args):
        pass


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    """Retries of transient failures (download_retry) wait a few ms here, not seconds: 1, 2, 4 ms; at most 10 ms,
    whatever a Retry-After asks."""
    from fasttext_lib import download_retry

    monkeypatch.delenv(download_retry.ATTEMPTS_ENV, raising=False)
    monkeypatch.setattr(download_retry, "BACKOFF_S", 0.001)
    monkeypatch.setattr(download_retry, "MAX_WAIT_S", 0.01)


@pytest.fixture
def one_attempt(monkeypatch):
    """No retry within the run: what a transient failure leaves for a rerun (FASTTEXT_DOWNLOAD_ATTEMPTS=1)."""
    from fasttext_lib import download_retry

    monkeypatch.setenv(download_retry.ATTEMPTS_ENV, "1")


@pytest.fixture
def server(archive, monkeypatch):
    """Serve the archive on 127.0.0.1; yields (base_url, handler class) so tests can read the log."""
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    spec, data = archive
    handler = type("Handler", (_Handler,), {"files": {f"/mirror/{spec.filename}": data}, "log": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # (poll_interval: how often the loop looks for shutdown(), which waits for that at each test's end)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/mirror/", handler
    httpd.shutdown()
    httpd.server_close()


def test_download_fetches_and_verifies(archive, server, tmp_path):
    spec, data = archive
    base_url, handler = server
    path = download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert path == str(tmp_path / "cache" / spec.filename)
    with open(path, "rb") as f:
        assert f.read() == data
    assert os.listdir(tmp_path / "cache") == [spec.filename]  # no .part left behind
    assert handler.log == [(f"/mirror/{spec.filename}", None)]


def test_download_resumes_a_partial_file(archive, server, tmp_path):
    spec, data = archive
    base_url, handler = server
    cache = tmp_path / "cache"
    cache.mkdir()
    half = len(data) // 2
    (cache / (spec.filename + ".part")).write_bytes(data[:half])
    path = download(spec, str(cache), base_url=base_url, progress=False)
    assert handler.log == [(f"/mirror/{spec.filename}", f"bytes={half}-")]
    with open(path, "rb") as f:
        assert f.read() == data


def test_download_restarts_when_the_server_ignores_range(archive, server, tmp_path):
    spec, data = archive
    base_url, handler = server
    handler.ignore_range = True
    cache = tmp_path / "cache"
    cache.mkdir()
    # (another .tgz's start: no prefix of this one, yet resumed from, so the answer ignoring the range is seen)
    (cache / (spec.filename + ".part")).write_bytes(b"\x1f\x8b" + b"x" * 98)
    path = download(spec, str(cache), base_url=base_url, progress=False)
    assert handler.log[0][1] == "bytes=100-"
    with open(path, "rb") as f:
        assert f.read() == data


@pytest.mark.parametrize("cut_at, kept, said", [
    (50, 100, r"connection lost after 50 of \d+ bytes of the archive sent again from its start \(the server ignored "
              r"the request to resume\); the partial download .* is kept as it was before this answer \(100 bytes\): "
              r"run again to resume \(delete it to start over\)$"),
    (150, 150, r"connection lost after 150 of \d+ bytes; the partial download .* is kept: run again to resume$")])
def test_a_resume_answered_with_the_whole_archive_cut_short_never_leaves_less_than_the_part_held(
        archive, server, tmp_path, one_attempt, cut_at, kept, said):
    """A server that ignores Range answers a resume with the whole archive (200): the .part was truncated at once and
    rewritten, so a 200 cut short left less than the .part held (a Yelp .part of 150 MB cut back to a few MB). The
    .part is kept as it was until the new body has grown past it; a rerun resumes from the longer of the two."""
    spec, data = archive
    base_url, handler = server
    handler.ignore_range, handler.truncate_at = True, cut_at
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with pytest.raises(FastTextError) as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert part.read_bytes() == data[:kept] and os.listdir(cache) == [part.name]  # (no temporary left behind)
    assert re.match(rf"cannot download {base_url}{spec.filename}: {said}", str(exc.value)), str(exc.value)
    handler.ignore_range, handler.truncate_at = False, None
    path = download(spec, str(cache), base_url=base_url, progress=False)
    assert handler.log[-1] == (f"/mirror/{spec.filename}", f"bytes={kept}-")
    assert hashlib.md5(open(path, "rb").read()).hexdigest() == spec.md5


@pytest.mark.parametrize("part_bytes, staged_bytes, resumed_from", [
    (100, 50, 100),  # (a kill -9 before the restart outgrew the .part: the .part is the longer)
    (50, 150, 150),  # (the .part cut back or replaced since: the staged restart is the longer)
    (None, 150, 150),  # (the .part deleted since)
    (100, "past the archive", 100)])  # (longer than the archive: no start of it)
def test_a_staged_restart_a_killed_download_left_is_taken_up_by_the_next_run(archive, server, tmp_path, part_bytes,
                                                                             staged_bytes, resumed_from):
    """The archive a server sends whole answering a resume is written to ``.part.new`` until it outgrows the .part;
    a kill -9 meanwhile left it in the cache (up to the .part's size: hundreds of MB) until another resume happened to
    be answered whole, and beside the verified archive for good. The next run resumes from the longer of the two and
    removes the other: the longer is never lost."""
    spec, data = archive
    base_url, handler = server
    cache = tmp_path / "cache"
    cache.mkdir()
    part = cache / (spec.filename + ".part")
    if part_bytes is not None:
        part.write_bytes(data[:part_bytes])
    staged = cache / (spec.filename + ".part.new")
    staged.write_bytes(data + b"more" if staged_bytes == "past the archive" else data[:staged_bytes])
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", f"bytes={resumed_from}-")]
    assert os.listdir(cache) == [spec.filename]


@pytest.mark.parametrize("staged", ["longer than the .part", "as long as the archive"])
def test_a_staged_restart_whose_bytes_are_not_the_part_s_is_removed_never_taken_up(archive, server, tmp_path, staged):
    """A ``.part.new`` that does not begin with the bytes the .part holds (another archive's, of another mirror or
    version; a file damaged since) cannot be the same archive's restart. Taken up for being the longer, it replaced
    the .part: the resume appended the rest to bytes that were never the archive's, the md5 failed and the download
    was deleted whole (the good .part too, hundreds of MB), or, as long as the archive, it was not even resumed, only
    failed. It is removed; the .part is resumed, and the download succeeds."""
    spec, data = archive
    base_url, handler = server
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    other = bytes(b ^ 0x5A for b in data)  # (another archive of the same size)
    (cache / (spec.filename + ".part.new")).write_bytes(other[:150] if staged.startswith("longer") else other)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-")]
    assert os.listdir(cache) == [spec.filename]


@pytest.mark.parametrize("kind", ["link", "folder"])
def test_a_staged_restart_that_is_no_file_is_removed_and_a_folder_there_named_and_kept(archive, server, tmp_path,
                                                                                       kind):
    """A link where a restart is staged is removed (its target, a file of the user's, stays as it was) and the .part
    resumed; a folder there is someone's: named, left alone, the .part kept."""
    spec, data = archive
    base_url, handler = server
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    staged = cache / (spec.filename + ".part.new")
    victim = tmp_path / "notes.txt"
    victim.write_bytes(data + b"the user's own notes\n")  # (longer than the .part, than the archive even)
    if kind == "link":
        staged.symlink_to(victim)
        with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
            assert f.read() == data
        assert os.listdir(cache) == [spec.filename] and handler.log[-1][1] == "bytes=100-"
    else:
        (staged / "mine").mkdir(parents=True)
        with pytest.raises(FastTextError, match=rf"^the download cache holds a folder {staged} where the restart of a "
                                                r"partial download goes: move it away") as exc:
            download(spec, str(cache), base_url=base_url, progress=False)
        assert "\n" not in str(exc.value) and (staged / "mine").is_dir() and part.read_bytes() == data[:100]
    assert victim.read_bytes() == data + b"the user's own notes\n"


def test_interrupted_download_keeps_the_part_and_resumes(archive, server, tmp_path, one_attempt):
    spec, data = archive
    base_url, handler = server
    handler.truncate_at = 200
    cache = str(tmp_path / "cache")
    with pytest.raises(FastTextError, match="connection lost.*run again to resume"):
        download(spec, cache, base_url=base_url, progress=False)
    assert os.path.getsize(os.path.join(cache, spec.filename + ".part")) == 200
    handler.truncate_at = None
    path = download(spec, cache, base_url=base_url, progress=False)
    assert handler.log[-1][1] == "bytes=200-"
    with open(path, "rb") as f:
        assert f.read() == data


def test_a_download_started_over_after_a_refused_range_leaves_its_bar_in_a_terminal(archive, server, tmp_path,
                                                                                     monkeypatch):
    """The download that starts over after a 416 runs inside the handler of that HTTPError: its bar, closed there
    after the whole archive arrived, was taken for one a failure closed (sys.exc_info()) and cleared, as if the
    download had failed."""
    spec, data = archive
    base_url, handler = server
    handler.refuse_range_once = True
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)

    terminal = _terminal_on_stderr(monkeypatch)
    path = download(spec, str(cache), base_url=base_url, progress=True)
    with open(path, "rb") as f:
        assert f.read() == data
    assert [rng for _, rng in handler.log] == ["bytes=100-", None]
    last_state = terminal.getvalue().rstrip("\n").rsplit("\r", 1)[-1]
    assert spec.filename in last_state and "100%" in last_state and terminal.getvalue().endswith("\n")


class _Portal(http.server.BaseHTTPRequestHandler):
    """A captive portal (or a proxy's login page): every request answered 200 with an HTML page."""
    page = b"<html><body>Log in to the hotel Wi-Fi</body></html>"
    chunked = False  # no Content-Length: the page's length is not known until it ends

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        if self.chunked:
            self.send_header("Connection", "close")
        else:
            self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, *args):
        pass


class _Terminal(io.StringIO):
    """stderr as a terminal (progress bars draw there), its text kept."""
    def isatty(self):
        return True


def _terminal_on_stderr(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    return terminal


def _cache_with_a_partial_download(tmp_path, spec, data):
    """A download cache holding the first 100 bytes of ``spec``'s archive as its ``.part``: (cache, part)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    part = cache / (spec.filename + ".part")
    part.write_bytes(data[:100])
    return cache, part


def _serve_with(handler_class):
    """A local HTTP server answering with ``handler_class``, serving in a thread (shut down by the caller)."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    return httpd


@pytest.mark.parametrize("chunked", [False, True])
def test_a_captive_portal_answering_a_resume_keeps_the_partial_download(archive, server, tmp_path, chunked):
    """A page answered with 200 to the request that resumes a .part was taken for a server ignoring Range: the
    .part (up to 690 MB already downloaded) was deleted, or truncated to the page. It is kept, and resumed later."""
    spec, data = archive
    base_url, handler = server
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    httpd = _serve_with(type("Portal", (_Portal,), {"chunked": chunked}))
    try:
        with pytest.raises(FastTextError, match="the partial download .* is kept") as exc:
            download(spec, str(cache), base_url=f"http://127.0.0.1:{httpd.server_address[1]}/", progress=False)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert "\n" not in str(exc.value)
    assert os.listdir(cache) == [part.name] and part.read_bytes() == data[:100]
    path = download(spec, str(cache), base_url=base_url, progress=False)  # the portal is gone: resumed
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-")]
    with open(path, "rb") as f:
        assert f.read() == data


@pytest.mark.parametrize("kind", ["link", "dangling link", "fifo"])
def test_a_partial_download_that_is_no_file_is_started_over_and_what_it_points_to_kept(archive, server, tmp_path, kind):
    """A ``.part`` that is a symbolic link (another user's, in a shared cache folder; a link the user made) was
    followed: its target's size taken for the bytes already downloaded, the rest of the archive appended to the
    target (a file of the user's, outside the cache), then the md5 failed. A FIFO there hung the download for good
    (opening it waits for a reader). Neither is a download of ours: it is removed, the archive fetched whole."""
    spec, data = archive
    base_url, handler = server
    cache = tmp_path / "cache"
    cache.mkdir()
    part = cache / (spec.filename + ".part")
    victim = tmp_path / "notes.txt"
    if kind == "fifo":
        os.mkfifo(part)
    else:
        if kind == "link":
            victim.write_bytes(b"the user's own notes\n")
        part.symlink_to(victim)
    path = download(spec, str(cache), base_url=base_url, progress=False)
    with open(path, "rb") as f:
        assert f.read() == data
    assert os.listdir(cache) == [spec.filename] and not os.path.islink(path)
    assert handler.log == [(f"/mirror/{spec.filename}", None)]  # fetched whole, not resumed from the target's size
    if kind == "link":
        assert victim.read_bytes() == b"the user's own notes\n"
    else:
        assert not victim.exists()


def test_a_folder_where_the_partial_download_goes_is_named_and_kept(archive, server, tmp_path):
    """It said "cannot write the download cache ...: Is a directory", naming neither the folder nor what to do."""
    spec, _ = archive
    cache = tmp_path / "cache"
    (cache / (spec.filename + ".part") / "mine").mkdir(parents=True)
    with pytest.raises(FastTextError, match=rf"holds a folder {cache}/{spec.filename}.part where the partial "
                                            r"download goes: move it away") as exc:
        download(spec, str(cache), base_url=server[0], progress=False)
    assert "\n" not in str(exc.value) and (cache / (spec.filename + ".part") / "mine").is_dir()


def test_checksum_mismatch_raises_and_leaves_nothing(archive, server, tmp_path):
    spec, _ = archive
    base_url, _ = server
    bad = ZhangDataset(spec.name, spec.url, spec.size, "0" * 32, spec.num_classes)
    with pytest.raises(FastTextError, match="md5") as exc:
        download(bad, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value)
    assert os.listdir(tmp_path / "cache") == []


@pytest.mark.parametrize("delta", [1, -1])
def test_wrong_size_raises_and_leaves_nothing(archive, server, tmp_path, delta):
    spec, _ = archive
    base_url, _ = server
    bad = ZhangDataset(spec.name, spec.url, spec.size + delta, spec.md5, spec.num_classes)
    with pytest.raises(FastTextError, match="expected %d" % (spec.size + delta)):
        download(bad, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert os.listdir(tmp_path / "cache") == []


def test_cached_archive_is_reused_without_a_request(archive, server, tmp_path):
    spec, _ = archive
    base_url, handler = server
    cache = str(tmp_path / "cache")
    first = download(spec, cache, base_url=base_url, progress=False)
    assert len(handler.log) == 1
    assert download(spec, cache, base_url=base_url, progress=False) == first
    prepare(spec, str(tmp_path / "out"), cache, base_url=base_url, progress=False)
    assert len(handler.log) == 1


def test_http_error_is_a_one_line_error(archive, server, tmp_path):
    spec, _ = archive
    base_url, _ = server
    with pytest.raises(FastTextError, match=r"cannot download .*/nowhere/tiny_csv.tgz: HTTP 404"):
        download(spec, str(tmp_path / "cache"), base_url=base_url + "nowhere/", progress=False)


def test_unreachable_host_is_a_one_line_error(archive, tmp_path, capsys):
    """A connection refused may be a server restarting: asked again (one line each), then one error line."""
    spec, _ = archive
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(FastTextError, match=f"^cannot download http://127.0.0.1:{port}/tiny_csv.tgz after 5 attempts: "
                                            r"\[Errno 111\] Connection refused$") as exc:
        download(spec, str(tmp_path / "cache"), base_url=f"http://127.0.0.1:{port}", progress=False)
    assert "\n" not in str(exc.value)
    assert _retry_lines(capsys.readouterr().err)[0] == (f"download: Connection refused from 127.0.0.1:{port}; "
                                                        f"retrying in 0.001 s (attempt 2 of 5)")


def _expected_lines(rows):
    return [f"__label__{label} {normalize_text(text.replace(chr(10), ' '))}" for label, text in rows]


def test_prepare_writes_normalized_fasttext_files(archive, server, tmp_path):
    spec, _ = archive
    base_url, _ = server
    out = tmp_path / "out"
    result = prepare(spec, str(out), str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert result == {"train": str(out / "tiny.train"), "test": str(out / "tiny.test"),
                      "label_names": str(out / "tiny.classes.txt")}
    assert sorted((out / "tiny.train").read_text().splitlines()) == sorted(_expected_lines(TRAIN))  # (shuffled)
    titled = (TITLED[0], TITLED[1] + " " + TITLED[2].replace('""', '"').replace("\\n", " "))
    assert sorted((out / "tiny.test").read_text().splitlines()) == sorted(_expected_lines(TEST + [titled]))
    assert "__label__3 a title body with quotes and a break ." in (out / "tiny.test").read_text().splitlines()
    assert sorted(os.listdir(out)) == ["tiny.classes.txt", "tiny.test", "tiny.train"]
    # the archive's classes.txt (no built-in names for "tiny"), as id=name lines
    assert (out / "tiny.classes.txt").read_text() == "1=good\n2=bad\n3=other\n"
    assert not (tmp_path / "escape.csv").exists() and not (out.parent / "escape.csv").exists()


def test_prepare_with_a_full_tmpdir_blames_the_tmpdir_not_the_archive(archive, server, tmp_path, tmpfs, monkeypatch):
    """The archive is extracted into TMPDIR: a full one was reported as 'cannot read the archive (... No space
    left on device)', which points at a good download (that a user may then delete)."""
    import tempfile

    spec, _ = archive
    base_url, _ = server
    cache = tmp_path / "cache"
    prepare(spec, str(tmp_path / "out"), str(cache), base_url=base_url, progress=False)  # the archive, cached
    disk = tmpfs("64k")
    with open(disk / "filler", "wb", buffering=0) as f:
        with pytest.raises(OSError):
            while True:
                f.write(b"\0" * 1024)
    monkeypatch.setattr(tempfile, "tempdir", str(disk))
    with pytest.raises(FastTextError, match=f"no room for temporary files in {disk} \\(No space left on device\\)"):
        prepare(spec, str(tmp_path / "out2"), str(cache), base_url=base_url, progress=False)
    assert os.listdir(disk) == ["filler"] and not (tmp_path / "out2").exists()
    assert os.listdir(cache) == [spec.filename]


@pytest.mark.parametrize("cache", ["full disk", "in /proc", "read-only"])
def test_a_cache_that_cannot_be_written_is_one_error(archive, server, tmp_path, tmpfs, cache):
    """A full disk under the cache (or a file where its directory goes) was a traceback from writing the .part.
    A cache in /proc was "No such file or directory", of a folder that exists: the message says what is wrong."""
    spec, _ = archive
    base_url, _ = server
    if cache == "full disk":
        where = tmpfs("64k")
        with open(where / "filler", "wb", buffering=0) as f:
            with pytest.raises(OSError):
                while True:
                    f.write(b"\0" * 1024)
        why = "No space left on device"
    elif cache == "in /proc":
        where, why = "/proc/fasttext-cache", "/proc is on the kernel's proc file system, where no file can be created"
    elif cache == "read-only":
        disk = tmpfs("64k")
        remount_ro(disk)
        where, why = disk / "cache", f"{disk} is on a file system mounted read-only \\(Read-only file system\\)"
    with pytest.raises(FastTextError, match=f"cannot write the download cache {where}: {why}"):
        download(spec, str(where), base_url=base_url, progress=False)


@pytest.mark.parametrize("where", ["afile", "afile/cache", "loopa"])
def test_a_cache_folder_that_is_a_file_is_named_so(archive, server, tmp_path, monkeypatch, where):
    """A cache folder that is an existing file said "cannot write the download cache afile: File exists" (under one:
    "Not a directory"; a loop of symbolic links: "File exists"): an OSError's text, naming neither the path nor that a
    folder goes there. One line says both; the file is kept as it was, and nothing is fetched."""
    spec, _ = archive
    base_url, handler = server
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(DATASETS, NAME, spec)
    (tmp_path / "afile").write_text("mine")
    (tmp_path / "loopa").symlink_to("loopb")
    (tmp_path / "loopb").symlink_to("loopa")
    expected = {"afile": "the download cache afile is a file, not a folder: choose another cache folder",
                "afile/cache": f"cannot create the download cache afile/cache: {tmp_path}/afile is a file, not a "
                               f"folder; choose another cache folder",
                "loopa": "the download cache loopa is a loop of symbolic links: choose another cache folder"}[where]
    r = cli_in_process("prepare", "--dataset", NAME, "--output", tmp_path / "out", "--cache-dir", where,
                       "--base-url", base_url)
    assert r.returncode != 0 and r.stderr.strip().splitlines() == [f"error: {expected}"], r.stderr
    with pytest.raises(FastTextError, match=f"^{re.escape(expected)}$"):
        download(spec, where, base_url=base_url, progress=False)
    assert (tmp_path / "afile").read_text() == "mine" and handler.log == [] and not (tmp_path / "out").exists()


@contextlib.contextmanager
def _as_another_user():
    """Within the block, this process reads files as a user who is not their owner (``nobody``, where the tests run as
    root, whom no file mode stops): its paths are then given relative to the working directory, whose parents
    (pytest's, 0700) that user may not enter. Anything the block imports must have been imported before."""
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)


@pytest.mark.parametrize("unreadable", ["archive", "partial download"])
def test_a_cache_file_that_may_not_be_read_is_said_so_not_that_the_cache_cannot_be_written(
        archive, server, tmp_path, monkeypatch, unreadable):
    """An archive another user cached, which this one may not read (a shared cache folder, the other's umask), was
    "cannot write the download cache ...: Permission denied", though nothing was being written (and, of a .part,
    "run again to resume", which fails the same). The line says what could not be read and what to do; the file stays
    as it was."""
    spec, data = archive
    base_url, handler = server
    tmp_path.chmod(0o755)  # (the cache folder's own is 0755: another user may look in, not read a file of mode 0)
    monkeypatch.chdir(tmp_path)
    path = download(spec, "cache", base_url=base_url, progress=False)  # (as its owner: all it imports is imported)
    if unreadable == "partial download":
        os.replace(path, path + ".part")
        os.truncate(path + ".part", 100)
        path += ".part"
    os.chmod(path, 0)
    with _as_another_user(), pytest.raises(FastTextError) as exc:
        download(spec, "cache", base_url=base_url, progress=False)
    assert str(exc.value) == (f"cannot read {path} in the download cache: Permission denied; make it readable to "
                              f"this user (or ask its owner to), or choose another cache folder")
    assert os.listdir("cache") == [os.path.basename(path)] and len(handler.log) == 1
    os.chmod(path, 0o644)
    with open(path, "rb") as f:
        assert f.read() == data[:os.path.getsize(path)]


def test_a_cache_folder_that_may_be_written_but_not_read_is_said_so_and_what_to_do(archive, server, tmp_path,
                                                                                  monkeypatch):
    """A cache folder this user may write in but not read (mode -wx: a shared folder set up so) cannot be opened to
    lock it against another download into it: that said "cannot write the download cache ...: Permission denied",
    though it could be written, and not what to do. The line says what could not be read and what to do; nothing in
    the folder is touched, nothing is asked of the server."""
    spec, data = archive
    base_url, handler = server
    tmp_path.chmod(0o755)  # (another user may look in: _as_another_user)
    monkeypatch.chdir(tmp_path)
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    cache.chmod(0o333)
    with _as_another_user(), pytest.raises(FastTextError) as exc:
        download(spec, "cache", base_url=base_url, progress=False)
    assert str(exc.value) == ("cannot read the download cache cache (it is opened to lock it against another download "
                              "into it at once): Permission denied; make it readable to this user (or ask its owner "
                              "to), or choose another cache folder")
    cache.chmod(0o755)
    assert os.listdir(cache) == [part.name] and part.read_bytes() == data[:100] and handler.log == []


class _FailingReads:
    """A file whose reads fail with EIO though it opened: a disk failing under it."""

    def __init__(self, f):
        self._f = f

    def read(self, *args):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    readinto = read1 = read

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def _reads_fail(monkeypatch, path):
    """From here on, the file ``path`` opens (open, os.fdopen) as it does, but its reads fail with EIO."""
    import builtins

    found = os.stat(path)
    real_open = io.open

    def opened(*args, **kwargs):
        f = real_open(*args, **kwargs)
        same = os.fstat(f.fileno())
        return _FailingReads(f) if (same.st_dev, same.st_ino) == (found.st_dev, found.st_ino) else f

    monkeypatch.setattr(io, "open", opened)  # (os.fdopen's)
    monkeypatch.setattr(builtins, "open", opened)


@pytest.mark.parametrize("failing", ["archive", "partial download"])
def test_a_cache_file_whose_reads_fail_after_it_opened_is_said_unreadable_and_kept(archive, server, tmp_path,
                                                                                   monkeypatch, failing):
    """A read of the cached archive or of the .part failing after the file opened (EIO: a failing disk) said "cannot
    write the download cache ...: Input/output error (the partial download is kept: run again to resume)", though
    nothing was written and a rerun fails the same, or, of the archive, not what to do. The line says what could not
    be read and what to do; the file stays as it was, and nothing is asked of the server."""
    spec, data = archive
    base_url, handler = server
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    path = part
    if failing == "archive":
        path = cache / spec.filename
        part.rename(path)
        path.write_bytes(data)
    _reads_fail(monkeypatch, path)
    with pytest.raises(FastTextError) as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert str(exc.value) == (f"cannot read {path} in the download cache: Input/output error; check the disk it is "
                              f"on, or choose another cache folder")
    monkeypatch.undo()
    assert os.listdir(cache) == [path.name] and path.read_bytes() == data[:os.path.getsize(path)]
    assert handler.log == []


def test_prepare_limit_caps_each_split(archive, server, tmp_path):
    spec, _ = archive
    base_url, _ = server
    result = prepare(spec, str(tmp_path / "out"), str(tmp_path / "cache"), base_url=base_url, limit=2, progress=False)
    titled = (TITLED[0], TITLED[1] + " " + TITLED[2].replace('""', '"').replace("\\n", " "))
    for split, rows in (("train", TRAIN), ("test", TEST + [titled])):
        with open(result[split]) as f:
            lines = f.read().splitlines()
        assert len(lines) == 2 and lines == [line for line in _expected_lines(rows) if line in lines]



@pytest.mark.parametrize("limit", [0, -5, 2.5, True])
def test_prepare_refuses_a_limit_that_is_not_a_positive_count_before_downloading(archive, server, tmp_path, limit):
    """limit=0 or -5 (notebook 01's train_docs) wrote one-document splits over the prepared data, silently."""
    spec, _ = archive
    base_url, _ = server
    prepare(spec, str(tmp_path / "out"), str(tmp_path / "cache"), base_url=base_url, progress=False)
    before = {name: (tmp_path / "out" / name).read_bytes() for name in os.listdir(tmp_path / "out")}
    with pytest.raises(FastTextError, match=f"limit must be a positive number of documents .*got {limit!r}"):
        prepare(spec, str(tmp_path / "out"), str(tmp_path / "cache2"), base_url=base_url, limit=limit, progress=False)
    assert {name: (tmp_path / "out" / name).read_bytes() for name in os.listdir(tmp_path / "out")} == before
    assert not (tmp_path / "cache2").exists()  # refused before the download
    with pytest.raises(FastTextError, match="limit must be a positive number"):
        read_labeled(str(tmp_path / "out" / "tiny.train"), limit=limit)


def test_prepare_writes_to_s3(archive, server, tmp_path, s3_bucket):
    spec, _ = archive
    base_url, _ = server
    prefix = f"{s3_bucket}/datasets/tiny"
    result = prepare(spec, prefix, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert result == {"train": f"{prefix}/tiny.train", "test": f"{prefix}/tiny.test", "label_names": f"{prefix}/tiny.classes.txt"}
    assert sorted(storage.read_bytes(result["train"]).decode().splitlines()) == sorted(_expected_lines(TRAIN))
    # read back from S3 as training reads it: the names come with the data (class 3 is not in train)
    assert read_labeled(result["train"]).names == {"1": "good", "2": "bad"}


def _archive_as(name, classes=None, compresslevel=9):
    """A Zhang-style archive for dataset ``name`` (``classes``: its classes.txt, or none) and its spec."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=compresslevel) as tar:
        if classes is not None:
            _add(tar, f"{name}_csv/classes.txt", classes)
        _add(tar, f"{name}_csv/train.csv", "".join(csv_line(l, t) for l, t in TRAIN).encode())
        _add(tar, f"{name}_csv/test.csv", "".join(csv_line(l, t) for l, t in TEST).encode())
    data = buf.getvalue()
    return ZhangDataset(name, f"https://example.invalid/mirror/{name}_csv.tgz", len(data), hashlib.md5(data).hexdigest(), 2), data


def _serve(server, spec, data):
    _, handler = server
    handler.files[f"/mirror/{spec.filename}"] = data


def test_prepare_names_a_known_dataset_from_the_built_in_table(server, tmp_path):
    """ag_news's archive has a classes.txt; the built-in table (the same names, verified) is what is written."""
    spec, data = _archive_as("ag_news", classes=b"W\nS\nB\nT\n")
    _serve(server, spec, data)
    result = prepare(spec, str(tmp_path / "out"), str(tmp_path / "cache"), base_url=server[0], progress=False)
    assert (tmp_path / "out" / "ag_news.classes.txt").read_text() == "1=World\n2=Sports\n3=Business\n4=Sci/Tech\n"
    assert read_labeled(result["train"]).names == {"1": "World", "2": "Sports"}


def test_prepare_names_polarity_sets_whose_archives_have_no_classes_txt(server, tmp_path):
    spec, data = _archive_as("yelp_review_polarity")
    _serve(server, spec, data)
    result = prepare(spec, str(tmp_path / "out"), str(tmp_path / "cache"), base_url=server[0], progress=False)
    assert read_labeled(result["train"]).names == {"1": "negative", "2": "positive"}


def test_prepare_writes_no_names_when_none_are_known(server, tmp_path):
    spec, data = _archive_as("private")
    _serve(server, spec, data)
    result = prepare(spec, str(tmp_path / "out"), str(tmp_path / "cache"), base_url=server[0], progress=False)
    assert "label_names" not in result and sorted(os.listdir(tmp_path / "out")) == ["private.test", "private.train"]


def test_prepare_refuses_a_hostile_classes_txt_and_writes_nothing(server, tmp_path):
    spec, data = _archive_as("private", classes=b"same\nsame\n")
    _serve(server, spec, data)
    with pytest.raises(FastTextError, match=r"private_csv.tgz:private_csv/classes.txt: .*have the same name 'same'"):
        prepare(spec, str(tmp_path / "out"), str(tmp_path / "cache"), base_url=server[0], progress=False)
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []


@pytest.mark.parametrize("train, pattern", [
    (b'"1","ok"\n"2","an unclosed quote\n"1","x"\n', r"^\S+/cache/bad_csv.tgz:bad_csv/train.csv:2: malformed CSV record "
                                                    r"starting at this line"),
    (b'"1","ok"\n"2","a NUL\x00 byte"\n', r"^\S+/cache/bad_csv.tgz:bad_csv/train.csv:2: not a text file \(contains NUL"),
])
def test_prepare_refuses_a_damaged_csv_in_the_archive_and_leaves_no_folder(server, tmp_path, train, pattern):
    """A bad split (read after the output folder was made for the new files) left that folder behind, empty, and
    the error named the split's extracted copy, a temporary file already deleted: it names the archive's member."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        _add(tar, "bad_csv/train.csv", train)
        _add(tar, "bad_csv/test.csv", "".join(csv_line(l, t) for l, t in TEST).encode())
    data = buf.getvalue()
    spec = ZhangDataset("bad", "https://example.invalid/mirror/bad_csv.tgz", len(data), hashlib.md5(data).hexdigest(), 2)
    _serve(server, spec, data)
    out = tmp_path / "new" / "out"
    with pytest.raises(FastTextError, match=pattern) as exc:
        prepare(spec, str(out), str(tmp_path / "cache"), base_url=server[0], progress=False)
    assert "\n" not in str(exc.value)
    assert not (tmp_path / "new").exists()


def _earlier_splits_and_an_archive(server, tmp_path, test_rows):
    """An output folder holding a user's earlier paired.train / paired.test, and the "paired" archive served
    with ``test_rows`` as its test split: (spec, output folder, the folder's files as they were)."""
    spec, _ = _archive_as("paired")
    out = tmp_path / "out"
    out.mkdir()
    (out / "paired.train").write_text("__label__1 my earlier train split\n")
    (out / "paired.test").write_text("__label__1 my earlier test split\n")
    before = {name: (out / name).read_bytes() for name in os.listdir(out)}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        _add(tar, "paired_csv/train.csv", "".join(csv_line(l, t) for l, t in TRAIN).encode())
        _add(tar, "paired_csv/test.csv", "".join(csv_line(l, t) for l, t in test_rows).encode())
    data = buf.getvalue()
    spec = ZhangDataset("paired", spec.url, len(data), hashlib.md5(data).hexdigest(), 2)
    _serve(server, spec, data)
    return spec, out, before


def test_prepare_replaces_train_and_test_together_or_not_at_all(server, tmp_path):
    """A failure while writing the second split (here a class fastText's format cannot hold; a full disk
    alike) left the new .train beside the old .test: both are now written before either is replaced."""
    spec, out, before = _earlier_splits_and_an_archive(server, tmp_path, TEST + [("very good", "fine")])  # a spaced class
    with pytest.raises(FastTextError, match=r"cannot write the label 'very good' to the fastText-format file .*paired\.test"):
        prepare(spec, str(out), str(tmp_path / "cache"), base_url=server[0], progress=False, overwrite=True)
    assert {name: (out / name).read_bytes() for name in os.listdir(out)} == before  # nothing else, nothing changed


def test_prepared_names_reach_predictions(archive, server, tmp_path, capsys):
    """prepare -> train -> predict through the command line: the prediction says what the class means."""
    from fasttext_lib import cli
    from fasttext_lib.predict import Predictor

    spec, data = _archive_as("yelp_review_polarity")
    _serve(server, spec, data)
    out = tmp_path / "out"
    written = prepare(spec, str(out), str(tmp_path / "cache"), base_url=server[0], progress=False)
    assert cli.main(["train", "--train", written["train"], "--output", str(tmp_path / "model"), "--epochs", "1",
                     "--emsize", "8", "--no-progress"]) == 0
    predictor = Predictor.load(str(tmp_path / "model"))
    row = predictor.predict(["the food was great"])[0]
    assert predictor.names == ["negative", "positive"] and row["label"] == {"1": "negative", "2": "positive"}[row["class_id"]]


def test_registry_lists_the_zhang_datasets():
    yelp = DATASETS["yelp_review_polarity"]
    assert (yelp.num_classes, yelp.size) == (2, 166373201)
    assert yelp.url == "https://s3.amazonaws.com/fast-ai-nlp/yelp_review_polarity_csv.tgz"
    assert len(DATASETS) == 8
    assert all(len(d.md5) == 32 and d.filename == f"{d.name}_csv.tgz" for d in DATASETS.values())


def test_unknown_dataset_name_is_an_error(tmp_path):
    with pytest.raises(FastTextError, match="unknown dataset 'nope'.*yelp_review_polarity"):
        download("nope", str(tmp_path))


def test_prepare_command_line(archive, server, tmp_path, monkeypatch, capsys):
    """``python -m fasttext_lib prepare`` with a mirror: the JSON it prints names the files it wrote."""
    import json

    from fasttext_lib import cli
    from fasttext_lib.data import read_labeled

    spec, _ = archive
    base_url, handler = server
    monkeypatch.setitem(DATASETS, NAME, spec)
    out, cache = tmp_path / "out", tmp_path / "cache"
    assert cli.main(["prepare", "--dataset", NAME, "--output", str(out), "--cache-dir", str(cache),
                     "--base-url", base_url]) == 0
    written = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert written == {"train": str(out / f"{NAME}.train"), "test": str(out / f"{NAME}.test"),
                       "label_names": str(out / f"{NAME}.classes.txt")}
    train = read_labeled(written["train"])
    assert sorted(zip(train.labels, train.texts)) == sorted((label, normalize_text(text)) for label, text in TRAIN)
    assert len(read_labeled(written["test"])) == len(TEST) + 1
    assert os.listdir(cache) == [spec.filename] and len(handler.log) == 1

    assert cli.main(["prepare", "--dataset", "no_such_set", "--output", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: unknown dataset 'no_such_set'")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/"
    assert cli.main(["prepare", "--dataset", NAME, "--output", str(tmp_path / "o2"), "--cache-dir",
                     str(tmp_path / "c2"), "--base-url", closed]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: ")
    assert not (tmp_path / "o2").exists()


def test_cli_prepare_whose_summary_stdout_cannot_take_keeps_the_files_as_they_were(archive, server, tmp_path,
                                                                                  monkeypatch):
    """``prepare ... > /dev/full`` wrote its files, then failed on the summary line (exit 2): a failed command had
    replaced the user's files. The line is written before they are put in place: one error line, the old files kept."""
    import errno
    import io

    from fasttext_lib import cli

    class Full(io.StringIO):
        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    spec, _ = archive
    base_url, _ = server
    monkeypatch.setitem(DATASETS, NAME, spec)
    out = tmp_path / "out"
    out.mkdir()
    (out / f"{NAME}.train").write_text("__label__1 the user's own\n")
    monkeypatch.setattr(sys, "stdout", Full())
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert cli.main(["prepare", "--dataset", NAME, "--output", str(out), "--cache-dir", str(tmp_path / "cache"),
                     "--base-url", base_url, "--overwrite"]) == 2
    assert err.getvalue().splitlines()[-1] == "error: cannot write to standard output: No space left on device"
    assert os.listdir(out) == [f"{NAME}.train"] and (out / f"{NAME}.train").read_text() == "__label__1 the user's own\n"


def test_prepare_refuses_a_review_holding_a_label_word_and_keeps_both_old_splits(server, tmp_path):
    """A review with the word ``__label__2`` was written into the .test as a line with two labels: prepare
    succeeded and train/evaluate on what it wrote failed ('line has 2 labels')."""
    spec, out, before = _earlier_splits_and_an_archive(server, tmp_path, TEST + [("1", "it printed __LABEL__2")])
    with pytest.raises(FastTextError, match=rf"cannot write document {len(TEST) + 1} \(class '1'\) to the "
                                            rf"fastText-format file .*paired\.test: .*'__label__'"):
        prepare(spec, str(out), str(tmp_path / "cache"), base_url=server[0], progress=False, overwrite=True)
    assert {name: (out / name).read_bytes() for name in os.listdir(out)} == before


def test_prepare_with_a_limit_names_the_archives_row_not_the_samples():
    """With a limit the split is a sample: an error named the document by its place in the sample ("document 40"),
    where the archive's CSV has it at row 200."""
    from fasttext_lib import zhang_splits
    from fasttext_lib.writers import write_fasttext_rows

    rows = [("1", f"review {i}") for i in range(199)] + [("1", "it printed __label__2")]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "test.csv")
        with open(path, "w") as f:
            f.write("".join(csv_line(label, text) for label, text in rows))
        data, numbers = zhang_splits.spread_sample(path, 40)
        assert numbers[-1] == 200 and data.texts[-1] == "it printed __label__2"  # (the reservoir keeps the last row)
        with pytest.raises(FastTextError, match=r"^cannot write document 200 \(class '1'\)"):
            write_fasttext_rows(data, io.BytesIO(), "x.test", order=zhang_splits.shuffled(40), numbers=numbers)


def test_a_failed_prepare_keeps_the_names_file_the_user_edited(server, tmp_path):
    """The names file was replaced before the splits were written: a split that then failed left the user's
    own edited names (here 'bad'/'good') replaced by the built-in ones beside the old splits."""
    rows = TEST + [("very good", "fine")]  # a class fastText's format cannot hold: the test split fails
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        _add(tar, "yelp_review_polarity_csv/train.csv", "".join(csv_line(l, t) for l, t in TRAIN).encode())
        _add(tar, "yelp_review_polarity_csv/test.csv", "".join(csv_line(l, t) for l, t in rows).encode())
    data = buf.getvalue()
    spec = ZhangDataset("yelp_review_polarity", "https://example.invalid/mirror/yelp_review_polarity_csv.tgz",
                        len(data), hashlib.md5(data).hexdigest(), 2)
    _serve(server, spec, data)
    out = tmp_path / "out"
    out.mkdir()
    (out / "yelp_review_polarity.classes.txt").write_text("1=bad\n2=good\n")
    (out / "yelp_review_polarity.train").write_text("__label__1 my earlier train split\n")
    before = {name: (out / name).read_bytes() for name in os.listdir(out)}
    with pytest.raises(FastTextError, match="cannot write the label 'very good'"):
        prepare(spec, str(out), str(tmp_path / "cache"), base_url=server[0], progress=False, overwrite=True)
    assert {name: (out / name).read_bytes() for name in os.listdir(out)} == before
    # and a prepare that succeeds (told to replace them) writes all three, the names first
    _serve(server, *_archive_as("yelp_review_polarity"))
    written = prepare(_archive_as("yelp_review_polarity")[0], str(out), str(tmp_path / "cache2"), base_url=server[0],
                      progress=False, overwrite=True)
    assert (out / "yelp_review_polarity.classes.txt").read_text() == "1=negative\n2=positive\n"
    assert read_labeled(written["train"]).names == {"1": "negative", "2": "positive"}


@pytest.mark.parametrize("where", ["missing-bucket", "under-a-file"])
def test_prepare_refuses_an_output_it_cannot_write_before_downloading(archive, server, tmp_path, s3_server, where):
    """Notebook 01 with a wrong bucket (or `prepare --output` under a file) downloaded the archive and normalized
    every review (minutes for Yelp) before the first write failed; now it stops first, having fetched nothing."""
    spec, _ = archive
    base_url, handler = server
    (tmp_path / "afile").write_text("x")
    out = "s3://no-such-bucket-4f1c/data" if where == "missing-bucket" else str(tmp_path / "afile" / "data")
    message = "S3 bucket does not exist: no-such-bucket-4f1c" if where == "missing-bucket" else "afile is not a directory"
    with pytest.raises(FastTextError, match=message):
        prepare(spec, out, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert handler.log == [] and not (tmp_path / "cache").exists()  # nothing downloaded
    assert (tmp_path / "afile").read_text() == "x"


def _serve_splits(server, name, train_rows, test_rows, num_classes):
    """An archive ``{name}_csv.tgz`` of these (label, text) rows as its train.csv and test.csv, served; its spec."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for split, rows in (("train", train_rows), ("test", test_rows)):
            _add(tar, f"{name}_csv/{split}.csv", "".join(csv_line(l, t) for l, t in rows).encode())
    data = buf.getvalue()
    spec = ZhangDataset(name, f"https://example.invalid/mirror/{name}_csv.tgz", len(data),
                        hashlib.md5(data).hexdigest(), num_classes)
    _serve(server, spec, data)
    return spec


def test_prepare_limit_samples_a_split_sorted_by_class_not_its_first_rows(server, tmp_path):
    """dbpedia's train.csv holds its 14 classes one after the other (40,000 rows each): limit=20000 (notebook 01's
    train_docs) wrote the first 20,000 rows, a .train of class 1 alone beside a .test of four classes, and said
    nothing. A limit now takes a sample spread over the whole split (the same every run), in the file's order."""
    rows = [(str(c), f"document {i} of class {c}") for c in (1, 2, 3, 4) for i in range(50)]
    spec = _serve_splits(server, "sorted", rows, rows[::10], 4)
    written = [prepare(spec, str(tmp_path / out), str(tmp_path / "cache"), base_url=server[0], limit=40,
                       progress=False) for out in ("out", "again")]
    train = read_labeled(written[0]["train"])
    assert len(train) == 40 and sorted(set(train.labels)) == ["1", "2", "3", "4"]
    assert all(train.labels.count(c) >= 5 for c in "1234")  # not a run of one class
    assert (tmp_path / "again" / "sorted.train").read_bytes() == (tmp_path / "out" / "sorted.train").read_bytes()
    assert sorted(read_labeled(written[0]["test"]).labels) == sorted(l for l, _ in rows[::10])  # under the limit: all


def test_prepare_writes_each_split_shuffled_as_fastTexts_script_does_the_same_every_run(server, tmp_path):
    """A split whose archive lists its classes one after the other (dbpedia's train.csv) was written in that order:
    fastText C++, which trains in file order, learned the last classes only, and every reader of the first rows
    (read_labeled(limit=N), notebook 03's timing rows, the training settings' first 10,000 documents) saw one class.
    fastText's classification-example.sh shuffles both splits (myshuf); prepare does, seeded."""
    rows = [(str(c), f"document {i} of class {c}") for c in (1, 2) for i in range(100)]
    spec = _serve_splits(server, "grouped", rows, rows[::4], 2)
    written = [prepare(spec, str(tmp_path / out), str(tmp_path / "cache"), base_url=server[0], progress=False)
               for out in ("out", "again")]
    for split, expected in (("train", rows), ("test", rows[::4])):
        lines = (tmp_path / "out" / f"grouped.{split}").read_text().splitlines()
        assert sorted(lines) == sorted(_expected_lines(expected)) and lines != _expected_lines(expected)
        assert (tmp_path / "again" / f"grouped.{split}").read_text().splitlines() == lines  # the same every run
    first = read_labeled(written[0]["train"], limit=20).labels
    assert set(first) == {"1", "2"}, first  # (the archive's first 20 rows: class 1 alone)


class _Odd(http.server.BaseHTTPRequestHandler):
    """A server that answers every request in one odd way (``kind``), with ``body``."""
    kind = None
    body = b""

    def do_GET(self):
        if self.kind in ("redirect loop", "redirect to"):  # (redirect to: the Location is ``body``)
            self.send_response(302)
            self.send_header("Location", self.path if self.kind == "redirect loop" else self.body.decode())
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.kind.startswith("busy"):  # busy <status>: that status, and the wait it asks for (``body``) if any
            self.send_response(int(self.kind.split()[1]))
            if self.body:
                self.send_header("Retry-After", self.body.decode())
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.kind == "not http":  # no status line: a service of another protocol on that port
            self.wfile.write(self.body)
            return
        self.send_response(200)
        if self.kind.startswith("page"):  # a captive portal's or an expired link's page, not the archive
            self.send_header("Content-Type", "text/html; charset=utf-8")
            if self.kind == "page":
                self.send_header("Content-Length", str(len(self.body)))
        if self.kind == "unreadable length":
            self.send_header("Content-Length", f"{len(self.body)}, {len(self.body)}")  # a proxy's merged headers
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            if self.kind == "endless":  # no length announced, and no end
                while True:
                    self.wfile.write(b"<html>" * 10000)
            if self.kind == "cut short":  # no length announced, and the connection closes half-way
                self.wfile.write(self.body[:len(self.body) // 2])
                return
            self.wfile.write(self.body)
        except OSError:
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def odd_server(monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    servers = []

    def start(kind, body=b""):
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("Odd", (_Odd,), {"kind": kind, "body": body}))
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/"
    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def test_a_redirect_loop_is_one_error_line(archive, odd_server, tmp_path):
    """urllib's reason for a redirect loop holds two line breaks: the error was three lines."""
    spec, _ = archive
    with pytest.raises(FastTextError, match=r"cannot download .*: HTTP 302 .*redirect.* loop") as exc:
        download(spec, str(tmp_path / "cache"), base_url=odd_server("redirect loop"), progress=False)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("location", ["http://[::1/tiny_csv.tgz", "https://[mirror/"])
def test_a_redirect_to_a_url_that_cannot_be_parsed_is_one_error_line(archive, odd_server, tmp_path, location):
    """A redirect whose Location urllib cannot parse (an unclosed IPv6 bracket: "Invalid IPv6 URL") stopped the
    download in a ValueError traceback."""
    spec, _ = archive
    with pytest.raises(FastTextError, match=r"cannot download .*: the server redirects to a URL that cannot be read.*"
                                            r"\(Invalid IPv6 URL\)") as exc:
        download(spec, str(tmp_path / "cache"), base_url=odd_server("redirect to", location.encode()), progress=False)
    assert "\n" not in str(exc.value)
    assert os.listdir(tmp_path / "cache") == []


@pytest.mark.parametrize("resume", [False, True])
def test_a_redirect_to_another_host_answering_a_page_is_named_a_page_and_the_partial_download_kept(
        archive, odd_server, tmp_path, resume):
    """A mirror that redirects to another host (an expired signed link's, a login page's) answering HTML: the page is
    named in one line, as one the mirror itself answers, and a .part there is kept as it was."""
    spec, data = archive
    cache = tmp_path / "cache"
    if resume:
        cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    page_host = odd_server("page", b"<html><body>This link has expired.</body></html>")
    mirror = odd_server("redirect to", (page_host + "expired").encode())
    with pytest.raises(FastTextError, match=rf"^cannot download {mirror}{spec.filename}: the server answered with a "
                                            r"text/html page, not the \d+-byte archive") as exc:
        download(spec, str(cache), base_url=mirror, progress=False)
    assert "\n" not in str(exc.value) and ("is kept" in str(exc.value)) == resume
    assert os.listdir(cache) == ([part.name] if resume else []) and (not resume or part.read_bytes() == data[:100])


def test_a_resume_redirected_to_another_host_asks_it_for_the_same_range(archive, odd_server, server, tmp_path):
    """The Range goes with the redirect (urllib keeps the request's headers): the other host's 206 is appended."""
    spec, data = archive
    base_url, handler = server
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    mirror = odd_server("redirect to", (base_url + spec.filename).encode())
    with open(download(spec, str(cache), base_url=mirror, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-")]


@pytest.mark.parametrize("location", ["file:///etc/hostname", "gopher://127.0.0.1/x"])
def test_a_redirect_to_a_scheme_not_fetched_is_one_error_line_and_reads_nothing(archive, odd_server, tmp_path,
                                                                                 location):
    """A redirect to file:// (a local file passed off as the archive) or another scheme is refused in one line."""
    spec, data = archive
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with pytest.raises(FastTextError, match=r"^cannot download .*: HTTP 302 .*not allowed") as exc:
        download(spec, str(cache), base_url=odd_server("redirect to", location.encode()), progress=False)
    assert "\n" not in str(exc.value) and part.read_bytes() == data[:100]


def test_an_answer_that_is_not_http_is_named_as_such_not_quoted_whole(archive, odd_server, tmp_path):
    """A service of another protocol on the mirror's port (or https:// written http://) answers no status line:
    the error quoted its first line, up to 64 KB of binary bytes, as the reason."""
    spec, _ = archive
    binary = bytes(range(11, 256)) * 200  # (no line break: one 49 KB "status line")
    with pytest.raises(FastTextError, match=r"cannot download .*: the server's answer is not HTTP \(it begins ") as exc:
        download(spec, str(tmp_path / "cache"), base_url=odd_server("not http", binary), progress=False)
    assert len(str(exc.value)) < 400, len(str(exc.value))
    assert os.listdir(tmp_path / "cache") == []


@pytest.mark.parametrize("status, retry_after, said", [
    (503, "120", r"HTTP 503 Service Unavailable \(the server is busy or down; it asks to wait 120 s\)"),
    (429, "Wed, 21 Oct 2037 07:28:00 GMT", r"HTTP 429 Too Many Requests \(the server is busy or down; it asks to "
                                           r"wait until Wed, 21 Oct 2037 07:28:00 GMT\)"),
    (502, "", r"HTTP 502 Bad Gateway \(the server is busy or down\)")])
def test_a_busy_server_answering_a_resume_says_when_to_retry_and_that_the_partial_download_is_kept(
        archive, odd_server, server, tmp_path, status, retry_after, said):
    """A 503 or 429 (Retry-After) to the request that resumes a .part said only "HTTP 503 Service Unavailable":
    nothing said to wait, nor that the .part (up to 690 MB) was kept, so a user deleted it to "start clean"."""
    spec, data = archive
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    busy = odd_server(f"busy {status}", retry_after.encode())
    with pytest.raises(FastTextError, match=said + rf": run again later; the partial download {part} is kept and "
                                                   r"will be resumed$") as exc:
        download(spec, str(cache), base_url=busy, progress=False)
    assert "\n" not in str(exc.value)
    assert part.read_bytes() == data[:100]
    with open(download(spec, str(cache), base_url=server[0], progress=False), "rb") as f:
        assert f.read() == data
    assert server[1].log == [(f"/mirror/{spec.filename}", "bytes=100-")]


def test_a_busy_server_answering_a_fresh_download_says_to_run_again_later(archive, odd_server, tmp_path):
    spec, _ = archive
    with pytest.raises(FastTextError, match=r"HTTP 503 Service Unavailable \(the server is busy or down; it asks to "
                                            r"wait 5 s\): run again later$"):
        download(spec, str(tmp_path / "cache"), base_url=odd_server("busy 503", b"5"), progress=False)
    assert os.listdir(tmp_path / "cache") == []


def test_a_content_length_that_is_no_number_is_read_as_unknown_not_a_traceback(archive, odd_server, tmp_path):
    """A Content-Length such as '123, 123' (two headers merged by a proxy), which http.client itself reads as an
    unknown length, stopped the download in a ValueError traceback."""
    spec, data = archive
    path = download(spec, str(tmp_path / "cache"), base_url=odd_server("unreadable length", data), progress=False)
    with open(path, "rb") as f:
        assert f.read() == data


def test_a_response_longer_than_the_archive_is_not_written_to_its_end(archive, odd_server, tmp_path):
    """A response of no announced length (a page, a stream) was written to the .part until it ended, however far
    past the archive's size (a full disk, for an endless one): it stops one byte past it."""
    spec, _ = archive
    with pytest.raises(FastTextError, match=f"failed verification .*more than the {spec.size} bytes expected"):
        download(spec, str(tmp_path / "cache"), base_url=odd_server("endless"), progress=False)
    assert os.listdir(tmp_path / "cache") == []


def test_a_download_of_no_announced_length_cut_short_is_kept_for_a_resume(archive, odd_server, server, tmp_path,
                                                                         one_attempt):
    """With no Content-Length (an HTTP/1.0 proxy) the connection's close is the body's only end: a body cut short was
    taken as complete, failed its size check and the .part was deleted (hundreds of MB of a Yelp download). It is
    kept when it begins as the archive does, and the next run resumes it; a page of no length is still deleted."""
    spec, data = archive
    assert data[:2] == b"\x1f\x8b"
    cache = tmp_path / "cache"
    with pytest.raises(FastTextError, match=rf"connection closed after {len(data) // 2} of {spec.size} bytes \(the "
                                            rf"server announced no length\); the partial download {cache}/\S+ is "
                                            r"kept: run again to resume$"):
        download(spec, str(cache), base_url=odd_server("cut short", data), progress=False)
    (part,) = os.listdir(cache)
    assert (cache / part).read_bytes() == data[:len(data) // 2]
    with open(download(spec, str(cache), base_url=server[0], progress=False), "rb") as f:
        assert f.read() == data
    page = b"<html>" + bytes(len(data))
    with pytest.raises(FastTextError, match="failed verification"):
        download(spec, str(tmp_path / "other"), base_url=odd_server("cut short", page), progress=False)
    assert os.listdir(tmp_path / "other") == []


def test_two_downloads_into_one_cache_at_once_share_one_archive(archive, server, tmp_path):
    """Two prepares of one dataset into one cache (two notebooks, a notebook and the command line) both wrote the
    one .part: the second resumed the first's, both appended, and the second failed in a FileNotFoundError traceback
    once the first had put the archive in place (or a .part mixed from both failed its md5 and was deleted). The
    second now waits for the first and uses its archive."""
    spec, data = archive
    base_url, handler = server
    handler.slow = 64
    cache = str(tmp_path / "cache")
    results = []

    def fetch():
        try:
            results.append(download(spec, cache, base_url=base_url, progress=False))
        except BaseException as exc:  # (reported below, not lost in the thread)
            results.append(exc)

    first = threading.Thread(target=fetch)
    first.start()
    deadline = time.monotonic() + 10
    while not os.path.exists(os.path.join(cache, spec.filename + ".part")) and time.monotonic() < deadline:
        time.sleep(0.005)
    fetch()  # the second, while the first is under way
    first.join()
    assert results == [os.path.join(cache, spec.filename)] * 2
    with open(results[0], "rb") as f:
        assert f.read() == data
    assert os.listdir(cache) == [spec.filename] and len(handler.log) == 1


def test_a_member_the_archive_holds_twice_is_read_as_tar_extracts_it_the_later_one(server, tmp_path):
    """An archive updated with tar -r holds a member twice; tar -xzf (fastText's classification-example.sh) gives the
    later one. The scan stopped once it had found train.csv, test.csv and classes.txt: the older train.csv was
    prepared, silently."""
    stale = [("1", "an older copy of the split")]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        _add(tar, "twice_csv/classes.txt", b"good\nbad\n")
        _add(tar, "twice_csv/train.csv", "".join(csv_line(l, t) for l, t in stale).encode())
        _add(tar, "twice_csv/test.csv", "".join(csv_line(l, t) for l, t in TEST).encode())
        _add(tar, "twice_csv/train.csv", "".join(csv_line(l, t) for l, t in TRAIN).encode())
    data = buf.getvalue()
    spec = ZhangDataset("twice", "https://example.invalid/mirror/twice_csv.tgz", len(data), hashlib.md5(data).hexdigest(), 2)
    _serve(server, spec, data)
    written = prepare(spec, str(tmp_path / "out"), str(tmp_path / "cache"), base_url=server[0], progress=False)
    assert sorted((tmp_path / "out" / "twice.train").read_text().splitlines()) == sorted(_expected_lines(TRAIN))
    assert sorted(read_labeled(written["test"]).labels) == sorted(l for l, _ in TEST)


def test_a_split_that_is_a_link_in_the_archive_is_named_as_one(server, tmp_path):
    """A split stored as a symbolic link (tar czf of a folder whose test.csv links elsewhere) was reported as missing
    ('archive has no linked_csv/test.csv'), beside a listing that shows it; links are not followed."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        _add(tar, "linked_csv/train.csv", "".join(csv_line(l, t) for l, t in TRAIN).encode())
        link = tarfile.TarInfo("linked_csv/test.csv")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    data = buf.getvalue()
    spec = ZhangDataset("linked", "https://example.invalid/mirror/linked_csv.tgz", len(data), hashlib.md5(data).hexdigest(), 2)
    _serve(server, spec, data)
    with pytest.raises(FastTextError, match=r"linked_csv.tgz: linked_csv/test.csv is a link \(to /etc/passwd\), not a "
                                            r"file$"):
        prepare(spec, str(tmp_path / "out"), str(tmp_path / "cache"), base_url=server[0], progress=False)
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []


def test_a_local_folder_as_the_mirror_is_read_and_a_base_url_that_is_no_url_is_one_error(archive, tmp_path, capsys):
    """--base-url /mnt/mirror (an offline machine's copy of the archives) and --base-url mirror.local/data (no
    scheme) were ValueError tracebacks ('unknown url type'), as was a URL urllib cannot parse: a folder is now read
    as the mirror it is, and the others are one error line, before anything is written."""
    from fasttext_lib import cli

    spec, data = archive
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / spec.filename).write_bytes(data)
    path = download(spec, str(tmp_path / "cache"), base_url=str(mirror), progress=False)
    with open(path, "rb") as f:
        assert f.read() == data
    for base_url in ("mirror.local/data", str(tmp_path / "no-such-folder"), "http://[::1", "s3://bucket/mirror"):
        assert cli.main(["prepare", "--dataset", "ag_news", "--output", str(tmp_path / "out"), "--cache-dir",
                         str(tmp_path / "c2"), "--base-url", base_url]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: cannot download from the mirror {base_url!r}: ")
    # a host and port without a scheme: urlparse reads the host as one ("localhost:// is not read here")
    assert cli.main(["prepare", "--dataset", "ag_news", "--output", str(tmp_path / "out"), "--cache-dir",
                     str(tmp_path / "c2"), "--base-url", "localhost:8000/data"]) == 2
    assert capsys.readouterr().err == ("error: cannot download from the mirror 'localhost:8000/data': it has no scheme: "
                                       "write http://localhost:8000/data (or https://)\n")
    assert not (tmp_path / "out").exists() and not (tmp_path / "c2").exists()


class _WrongRange(http.server.BaseHTTPRequestHandler):
    """A broken cache or proxy: any Range is answered 206 with the bytes from 10 bytes further on, its Content-Range
    saying so (a gap after the .part's end; one from before it is a start of what is left: see
    test_a_resume_answered_with_a_prefix_from_byte_0_uses_it_and_continues_from_its_end)."""
    data = b""

    def do_GET(self):
        start = int(self.headers["Range"].split("=")[1].split("-")[0]) + 10
        body = self.data[start:]
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{len(self.data) - 1}/{len(self.data)}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_resume_answered_from_another_byte_keeps_the_partial_download(archive, server, tmp_path):
    """A 206 whose Content-Range starts after the .part's end had its bytes appended all the same: the archive
    failed its md5 and the .part (up to 690 MB) was deleted. It is refused before a byte is written."""
    spec, data = archive
    base_url, handler = server
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    httpd = _serve_with(type("Wrong", (_WrongRange,), {"data": data}))
    try:
        with pytest.raises(FastTextError, match=r"asked to resume at byte 100, .* sends the bytes from 110 .*"
                                                r"the partial download .* is kept") as exc:
            download(spec, str(cache), base_url=f"http://127.0.0.1:{httpd.server_address[1]}/", progress=False)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert "\n" not in str(exc.value) and os.listdir(cache) == [part.name] and part.read_bytes() == data[:100]
    path = download(spec, str(cache), base_url=base_url, progress=False)
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-")]
    with open(path, "rb") as f:
        assert f.read() == data


def test_a_resume_answered_with_a_prefix_from_byte_0_uses_it_and_continues_from_its_end(archive, server, tmp_path):
    """A 206 from byte 0 that is not the whole archive (``Content-Range: bytes 0-<n>/<size>``: a server or proxy
    sending from the start, whatever the range asked) was refused as a range from elsewhere, though it is a prefix of
    the archive. The bytes the .part holds are compared with it, the rest appended, and the download continues with a
    range from where it ended."""
    spec, data = archive
    base_url, handler = server
    prefix = len(data) // 2
    assert prefix > 100  # (longer than the .part: it brings bytes the .part lacks)
    handler.prefix, handler.prefix_once = prefix, True
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    path = download(spec, str(cache), base_url=base_url, progress=False)
    with open(path, "rb") as f:
        assert f.read() == data
    assert [rng for _, rng in handler.log] == ["bytes=100-", f"bytes={prefix}-"] and os.listdir(cache) == [
        spec.filename]


def test_a_server_that_sends_the_archive_in_pieces_is_read_piece_by_piece_under_one_bar(archive, server, tmp_path,
                                                                                       monkeypatch):
    """A server that answers every request with a 206 of at most so many bytes (``Content-Range: bytes 0-99/<size>``,
    a limit on what one answer holds): the download "failed verification (server sends 100 bytes, expected ...)",
    every time. Each piece is a start of what is left: it is appended, and the next asked for from its end."""
    spec, data = archive
    base_url, handler = server
    handler.cap = 100

    terminal = _terminal_on_stderr(monkeypatch)
    path = download(spec, str(tmp_path / "cache"), base_url=base_url, progress=True)
    with open(path, "rb") as f:
        assert f.read() == data
    assert [rng for _, rng in handler.log] == [None] + [f"bytes={at}-" for at in range(100, len(data), 100)]
    assert terminal.getvalue().count("\n") == 1  # one bar for the download, not one per piece
    assert "100%" in terminal.getvalue().rstrip("\n").rsplit("\r", 1)[-1]


@pytest.mark.parametrize("bad_piece, says", [
    ("length", r"the server's answer contradicts itself: Content-Range bytes 200-299 \(100 bytes\), Content-Length "
               r"107"),
    ("overlong", r"the server sends more than the bytes 200-299 its Content-Range announced"),
    ("size", r"the server's Content-Range gives the archive \d+ bytes, not the \d+ expected \(another version of "
             r"it\? pass --base-url a mirror that holds tiny_csv.tgz\)")])
def test_a_bad_piece_after_good_ones_is_refused_and_the_partial_download_kept_as_it_was_before_it(
        archive, server, tmp_path, bad_piece, says):
    """A piece whose Content-Length disagrees with its Content-Range, whose body runs past that range, or whose
    Content-Range gives the archive another size "failed verification" and the .part was deleted: the good bytes of
    every piece before it (and of earlier runs: hundreds of MB) lost for one bad answer. Refused in one line, the
    .part as it was before that answer; a rerun resumes it."""
    spec, data = archive
    base_url, handler = server
    assert len(data) > 300
    handler.cap, handler.bad_piece_from, handler.bad_piece = 100, 200, bad_piece
    cache = tmp_path / "cache"
    part = cache / (spec.filename + ".part")
    with pytest.raises(FastTextError, match=rf"^cannot download .*: {says}; the partial download {part} is kept as "
                                            r"it was before this answer \(200 bytes\): run again to resume") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value) and os.listdir(cache) == [part.name] and part.read_bytes() == data[:200]
    handler.bad_piece_from, asked = None, len(handler.log)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log[asked][1] == "bytes=200-"  # resumed where it stopped


@pytest.mark.parametrize("content_range", ["none", "none, no length", "bytes */999", "100-"])
def test_a_206_with_no_readable_content_range_is_refused_and_the_partial_download_kept(archive, server, tmp_path,
                                                                                      content_range):
    """RFC 9110 requires a Content-Range on a single-part 206: without one, nothing says which bytes it holds. It was
    taken for the bytes from the .part's end on (appended unchecked, or "failed verification" when its length did
    not fit, deleting the .part). curl refuses such an answer to a resume (error 33, its file untouched) and wget
    counts it a range error (retried, its file kept): asked again, then refused in one line, the .part as it was."""
    spec, data = archive
    base_url, handler = server
    handler.no_content_range = content_range
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with pytest.raises(FastTextError, match=r"^cannot download .*: asked to resume at byte 100, the server answered "
                                            r"206 \(Partial Content\) with (no Content-Range saying|a Content-Range "
                                            r"that does not say) which bytes it sends .*the partial download "
                                            rf"{part} is kept: run again to resume") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value) and os.listdir(cache) == [part.name] and part.read_bytes() == data[:100]
    assert "after 5 attempts" in str(exc.value) and len(handler.log) == 5  # (a proxy's fault: asked again)
    handler.no_content_range = None
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log[-1] == (f"/mirror/{spec.filename}", "bytes=100-")


def test_a_206_of_the_whole_archive_with_no_content_range_cut_short_keeps_the_partial_download(archive, server,
                                                                                              tmp_path):
    """A 206 with no Content-Range but the archive's length is read as the whole archive; it was written anew over
    the .part, so one cut short before the .part's end left fewer bytes than the .part had held. Its start is
    compared with the .part instead (as a 206 from byte 0 with a Content-Range is), and only what follows appended."""
    spec, data = archive
    base_url, handler = server
    handler.from_zero, handler.truncate_at = "bare", 50
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with pytest.raises(FastTextError, match=r"connection lost after 100 of .*run again to resume"):
        download(spec, str(cache), base_url=base_url, progress=False)
    assert part.read_bytes() == data[:100]
    handler.from_zero, handler.truncate_at = None, None
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log[-1] == (f"/mirror/{spec.filename}", "bytes=100-")


def test_a_server_sending_tiny_pieces_slowly_is_stopped_and_a_slow_steady_one_is_not(archive, server, tmp_path,
                                                                                    monkeypatch, one_attempt):
    """The stall watch started over with each piece, so a server sending a few bytes per answer, slowly, was never
    stopped however little arrived (a 158 MB archive in 10-byte pieces: months). Progress is counted across pieces:
    too few bytes in a window is one line, the .part kept for a rerun; a server that keeps above the minimum in
    pieces of fewer bytes than it is not stopped."""
    import fasttext_lib.download_fetch as dl

    spec, data = archive
    base_url, handler = server
    monkeypatch.setattr(dl, "_STALL_WINDOW_S", 0.5)
    monkeypatch.setattr(dl, "_STALL_MIN_BYTES", 1000)  # (at most ~200 bytes in a window: 10 bytes per 50 ms)
    handler.cap, handler.piece_delay = 10, 0.05
    cache = tmp_path / "cache"
    part = cache / (spec.filename + ".part")
    with pytest.raises(FastTextError, match=r"^cannot download .*: the server sends too slowly .*the partial download "
                                            r"is kept: run again to resume") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value)
    kept = part.stat().st_size
    assert 0 < kept < len(data) and data.startswith(part.read_bytes())
    monkeypatch.setattr(dl, "_STALL_MIN_BYTES", 5)  # (fewer than a piece: steady pieces pass window after window)
    handler.piece_delay = 0.01
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert f"bytes={kept}-" in [rng for _, rng in handler.log]  # resumed where the slow server was stopped


def _incompressible(size):
    """``size`` bytes that gzip cannot shrink, the same every run, as a 2-class dataset's archive: (spec, data). They
    begin with gzip's magic bytes, as every .tgz does (a .part that does not is started over: no start of one)."""
    data = b"\x1f\x8b" + b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(size // 32 + 1))[:size - 2]
    return ZhangDataset(NAME, f"https://example.invalid/mirror/{NAME}_csv.tgz", size, hashlib.md5(data).hexdigest(),
                        2), data


def test_a_server_resending_what_was_had_with_each_tiny_piece_is_stopped(server, tmp_path, monkeypatch, one_attempt):
    """The stall watch counted the bytes a piece sends again (from before where it was asked to start, compared with
    the .part) as progress: a server answering every range from byte 0 to a few bytes past where it was asked sent
    kilobytes a window, and so was never stopped, though the download gained a few bytes an answer (a 158 MB
    archive: years). Only bytes not yet had in this run count: a rerun stops it with the .part kept."""
    import fasttext_lib.download_fetch as dl

    spec, data = _incompressible(4000)
    _serve(server, spec, data)
    base_url, handler = server
    monkeypatch.setattr(dl, "_STALL_WINDOW_S", 0.5)
    monkeypatch.setattr(dl, "_STALL_MIN_BYTES", 1000)  # (at most ~250 new bytes in a window: 10 bytes per 20 ms)
    handler.cap, handler.piece_delay, handler.pieces_from_zero = 10, 0.02, True
    cache = tmp_path / "cache"
    cache.mkdir()
    part = cache / (spec.filename + ".part")
    part.write_bytes(data[:2000])  # (its bytes, sent again by the first answer, are read once: they count then)
    with pytest.raises(FastTextError, match=r"^cannot download .*: the server sends too slowly .*the partial download "
                                            r"is kept: run again to resume") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value)
    kept = part.stat().st_size
    assert 2000 < kept < len(data) and data.startswith(part.read_bytes())


def test_a_wrong_file_sent_in_pieces_is_read_piece_by_piece_and_named_by_its_md5(server, tmp_path, monkeypatch,
                                                                                  one_attempt):
    """A file on the mirror that is no .tgz (not beginning with gzip's magic bytes), of the archive's size, sent in
    pieces: the .part its first piece begins is no start of an archive. A .part is looked at for that as a download
    begins (left by an older version), never between the pieces of one: there it was removed and the first piece
    asked for again and again, until the stall watch stopped it as "too slow". The pieces are read in turn, and the
    md5 says what is wrong."""
    import fasttext_lib.download_fetch as dl

    spec, data = _incompressible(400)
    _serve(server, spec, bytes(len(data)))
    base_url, handler = server
    monkeypatch.setattr(dl, "_STALL_WINDOW_S", 0.5)  # (the first piece asked for again: stopped within a second)
    monkeypatch.setattr(dl, "_STALL_MIN_BYTES", 50)  # (a piece of 100 new bytes a window: never stopped)
    handler.cap = 100
    with pytest.raises(FastTextError, match=r"failed verification \(md5 "):
        download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert [rng for _, rng in handler.log] == [None, "bytes=100-", "bytes=200-", "bytes=300-"]
    assert os.listdir(tmp_path / "cache") == []


def test_a_gzipped_resume_reading_what_the_part_holds_for_longer_than_a_window_is_not_stopped(server, tmp_path,
                                                                                              monkeypatch):
    """A resume the server answers gzip-encoded is read from the archive's start: the bytes the .part holds come first,
    compared, not written. Read at a steady rate above the minimum, they are progress the first time they come in a
    run (counted as none, every resume of a .part sent again for longer than a window would stop each rerun alike)."""
    import fasttext_lib.download_fetch as dl

    spec, data = _incompressible(4000)
    _serve(server, spec, data)
    base_url, handler = server
    monkeypatch.setattr(dl, "_STALL_WINDOW_S", 0.5)
    # (any byte in a window: bytes counted as none leave a window empty, and the trickle's rate, 20 bytes per 10 ms,
    # fell below 300 bytes a window on a loaded machine, whose threads wake late from each 10 ms sleep)
    monkeypatch.setattr(dl, "_STALL_MIN_BYTES", 1)
    handler.encoding, handler.slow = "gzip", 20
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / (spec.filename + ".part")).write_bytes(data[:3000])  # (~1.5 s of bytes sent again: three windows)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    # (asked to resume, then read from its start: the .part compared, not started over)
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=3000-"), (f"/mirror/{spec.filename}", None)]


def test_a_download_in_pieces_stopped_between_two_of_them_is_resumed_by_a_rerun(archive, server, tmp_path,
                                                                              monkeypatch):
    """Ctrl-C between two pieces keeps the .part of the pieces before it; a rerun resumes from its end."""
    import fasttext_lib.download_fetch as dl

    spec, data = archive
    base_url, handler = server
    handler.cap = 100
    real_open, opened = dl.open_from_byte, []

    def interrupted_at_the_third_piece(url, offset, part):
        opened.append(offset)
        if len(opened) == 3:
            raise KeyboardInterrupt
        return real_open(url, offset, part)

    monkeypatch.setattr(dl, "open_from_byte", interrupted_at_the_third_piece)
    cache = tmp_path / "cache"
    part = cache / (spec.filename + ".part")
    with pytest.raises(KeyboardInterrupt):
        download(spec, str(cache), base_url=base_url, progress=False)
    assert opened == [0, 100, 200] and part.read_bytes() == data[:200]
    monkeypatch.setattr(dl, "open_from_byte", real_open)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert [rng for _, rng in handler.log][2] == "bytes=200-"


def test_a_prefix_from_byte_0_ending_before_the_partial_download_is_refused_and_the_partial_download_kept(
        archive, server, tmp_path):
    """A server that answers every resume with the same first bytes, fewer than the .part holds, brings nothing new:
    asked again from the .part's end, it would answer the same for ever. Refused in one line, the .part kept."""
    spec, data = archive
    base_url, handler = server
    handler.prefix = 50
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with pytest.raises(FastTextError, match=rf"^cannot download .*: asked to resume at byte 100, the server sends "
                                            rf"only bytes 0-49 .*the partial download {part} is kept") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value) and os.listdir(cache) == [part.name] and part.read_bytes() == data[:100]


def test_a_prefix_from_byte_0_that_the_partial_download_does_not_begin_with_is_refused_and_it_kept(archive, server,
                                                                                                 tmp_path):
    """Another archive's .part: the prefix the server sends again does not match it. Kept, and the line says so."""
    spec, data = archive
    base_url, handler = server
    handler.prefix = len(data) // 2
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    part.write_bytes(b"\x1f\x8b" + bytes(98))
    with pytest.raises(FastTextError, match=rf"^cannot download .*: asked to resume at byte 100, the server sends "
                                            rf"bytes 0-{len(data) // 2 - 1}, and they differ from the partial "
                                            rf"download {part}'s .*it is kept") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value) and part.read_bytes() == b"\x1f\x8b" + bytes(98)


def test_a_resumed_download_s_bar_starts_at_the_bytes_already_there(archive, server, tmp_path, monkeypatch):
    """The bar of a resume counts the bytes the .part holds from its first state, not from 0."""
    spec, data = archive
    base_url, handler = server
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)

    terminal = _terminal_on_stderr(monkeypatch)
    download(spec, str(cache), base_url=base_url, progress=True)
    first_state = next(state for state in terminal.getvalue().split("\r") if state.strip())
    assert f"| 100/{len(data)} [" in first_state, first_state


class _EncodedPage(http.server.BaseHTTPRequestHandler):
    """An expired link's HTML page, answered 200 in the Content-Encoding ``encoding`` (None: none)."""
    page = b"<html><head><title>Link expired</title></head><body>This link has expired.</body></html>"
    encoding = None

    def do_GET(self):
        body = gzip.compress(self.page) if self.encoding == "gzip" else self.page
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        if self.encoding:
            self.send_header("Content-Encoding", self.encoding)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("resume", [False, True])
def test_a_page_is_named_in_the_same_line_whatever_its_content_encoding(archive, tmp_path, monkeypatch, resume):
    """An HTML page sent gzip-encoded (Content-Encoding: gzip) or in an encoding not decoded here (br) is the same
    page as one sent as it is: it was called "the archive br-encoded", and a gzip-encoded page answering a resume did
    not say that the .part is kept (an uncompressed one did, calling it "82 bytes")."""
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    spec, data = archive
    lines = {}
    for encoding in (None, "gzip", "br"):
        (tmp_path / str(encoding)).mkdir()
        cache = tmp_path / str(encoding) / "cache"
        if resume:
            cache, part = _cache_with_a_partial_download(tmp_path / str(encoding), spec, data)
        httpd = _serve_with(type("Page", (_EncodedPage,), {"encoding": encoding}))
        base_url = f"http://127.0.0.1:{httpd.server_address[1]}/"
        try:
            with pytest.raises(FastTextError) as exc:
                download(spec, str(cache), base_url=base_url, progress=False)
        finally:
            httpd.shutdown()
            httpd.server_close()
        lines[encoding] = str(exc.value).replace(base_url, "<url>").replace(str(cache), "<cache>")
        assert os.listdir(cache) == ([part.name] if resume else []) and (not resume or part.read_bytes() == data[:100])
    assert lines["gzip"] == lines[None] and lines["br"] == lines[None], lines
    assert re.match(r"^cannot download <url>tiny_csv.tgz: the server answered with a text/html page, not the "
                    r"\d+-byte archive .*browser", lines[None]) and "\n" not in lines[None]
    assert ("the partial download <cache>/tiny_csv.tgz.part is kept" in lines[None]) == resume


def test_a_server_that_trickles_bytes_is_stopped_and_its_partial_download_kept(archive, server, tmp_path, monkeypatch,
                                                                              one_attempt):
    """A server sending a byte now and then never trips the socket's timeout (each read gets a byte in time): the
    download went on for days without a word (a 166 MB archive at a byte a second). Too few bytes in a whole window
    is one error, the .part kept for a resume."""
    import fasttext_lib.download_fetch as dl

    spec, data = archive
    base, handler = server
    handler.slow = 1  # a byte every 10 ms: ~100 bytes a second
    monkeypatch.setattr(dl, "_STALL_WINDOW_S", 0.5)
    monkeypatch.setattr(dl, "_STALL_MIN_BYTES", 1000)
    cache = tmp_path / "cache"
    with pytest.raises(FastTextError, match=r"too slowly.*run again to resume") as exc:
        download(spec, str(cache), base_url=base, progress=False)
    assert "\n" not in str(exc.value)
    part = cache / (spec.filename + ".part")
    kept = part.stat().st_size
    assert 0 < kept < len(data) and data.startswith(part.read_bytes())  # stopped before the end of the trickle
    handler.slow = None
    # (the rest, fewer bytes than the minimum, comes at once: within the 0.5 s window only on a machine not loaded)
    monkeypatch.setattr(dl, "_STALL_WINDOW_S", 120)
    assert open(download(spec, str(cache), base_url=base, progress=False), "rb").read() == data
    assert handler.log[-1][1] == f"bytes={kept}-"  # resumed where the trickle was stopped


@pytest.mark.parametrize("kind", ["page", "page of no length"])
def test_a_page_answering_a_fresh_download_is_named_as_one_not_a_retry(archive, odd_server, tmp_path, kind):
    """A captive portal's login page or an expired link's error page, answered 200: the error said the download
    "failed verification ... run again to retry", which fails the same way however often it is run."""
    spec, _ = archive
    page = b"<html><body>Sign in to the hotel Wi-Fi</body></html>"
    cache = tmp_path / "cache"
    with pytest.raises(FastTextError, match=r"answered with a text/html page, not the .*archive.*captive portal.*"
                                            r"browser") as exc:
        download(spec, str(cache), base_url=odd_server(kind, page), progress=False)
    assert "retry" not in str(exc.value) and "\n" not in str(exc.value)
    assert os.listdir(cache) == []  # the page was not kept as a partial download


@pytest.mark.parametrize("no_length", [False, True])
def test_an_archive_a_server_gzips_again_is_decoded_and_verified(archive, server, tmp_path, no_length):
    """A server (a CDN, a misconfigured web server) that gzips the .tgz again, ``Content-Encoding: gzip``: its bytes
    were taken for the archive's and "failed verification ... run again to retry", which failed so every time. The
    body is decoded, then verified by size and md5 as any download is. (With no length, its decoded start, the .tgz's
    and no tar's, tells it from the .tgz only labelled gzip.)"""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.no_length = "gzip", no_length
    path = download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False)
    with open(path, "rb") as f:
        assert f.read() == data
    assert os.listdir(tmp_path / "cache") == [spec.filename]


@pytest.mark.parametrize("no_length", [False, True])
def test_a_resume_from_a_server_that_gzips_again_reads_the_whole_and_compares_what_the_part_holds(
        archive, server, tmp_path, no_length):
    """A resume's range is of the server's gzip encoding (HTTP's ranges are of what is sent), no range of the archive:
    appended, it failed the md5 and the .part was deleted. The whole is fetched and decoded; the bytes the .part holds
    already are compared with it, not written again, and the rest appended."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.no_length = "gzip", no_length
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    path = download(spec, str(cache), base_url=base_url, progress=False)
    with open(path, "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-"), (f"/mirror/{spec.filename}", None)]


@pytest.mark.parametrize("resume", [False, True])
def test_an_archive_a_server_labels_as_text_and_gzips_again_is_no_page(archive, server, tmp_path, resume):
    """A web server that types a file it does not know as text/plain (nginx's default_type, Apache 2.2's DefaultType)
    behind a CDN or proxy that gzips text/plain answers whatever Accept-Encoding says: the .tgz was refused as "a text/plain page ... open the
    URL in a browser", every time, though the decoded body was the archive. The decoded start decides: the
    archive's gzip magic is no page; verified by size and md5 as any download is."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.content_type = "gzip", "text/plain"
    cache = tmp_path / "cache"
    if resume:
        cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert os.listdir(cache) == [spec.filename]


class _MislabelledPage(_EncodedPage):
    """An expired link's page labelled Content-Encoding: gzip, its body ``sent``: the page as it is (not gzip at
    all), nothing (gzip's encoding of no bytes), or its gzip encoding cut short in its header (``cut``)."""
    sent = "plain"

    def do_GET(self):
        body = {"plain": self.page, "empty": gzip.compress(b""), "cut": gzip.compress(self.page)}[self.sent]
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[:5] if self.sent == "cut" else body)  # (cut: the connection lost within gzip's header)


@pytest.mark.parametrize("resume", [False, True])
@pytest.mark.parametrize("sent", ["plain", "empty"])
def test_a_gzip_labelled_page_that_decodes_to_nothing_is_still_named_as_a_page(archive, tmp_path, monkeypatch,
                                                                                resume, sent):
    """A text/html answer labelled gzip-encoded whose body is no gzip (the page as it is) or decodes to no bytes: it
    was named a page by its headers, as every text/* answer in gzip was; since the decoded start decides, nothing
    decoded was left to the copy, which said "failed verification ... run again to retry" (or "damaged on the way?"),
    however often it was run. Only the archive's own start clears a text/* answer; the .part is kept as before."""
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    spec, data = archive
    cache = tmp_path / "cache"
    if resume:
        cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    httpd = _serve_with(type("Page", (_MislabelledPage,), {"sent": sent}))
    try:
        with pytest.raises(FastTextError, match=r"^cannot download .*tiny_csv.tgz: the server answered with a "
                                                r"text/html page, not the \d+-byte archive") as exc:
            download(spec, str(cache), base_url=f"http://127.0.0.1:{httpd.server_address[1]}/", progress=False)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert ("is kept for a rerun to resume" in str(exc.value)) == resume
    assert os.listdir(cache) == ([part.name] if resume else []) and (not resume or part.read_bytes() == data[:100])


def test_a_gzip_encoded_text_answer_cut_short_before_its_start_is_a_lost_connection(archive, tmp_path, monkeypatch,
                                                                                   one_attempt):
    """Cut short within gzip's header, a text/* answer may be the archive as well as a page: a lost connection, the
    .part kept for a rerun (named a page, the archive a server types text/plain would be refused for a break)."""
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    spec, data = archive
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    httpd = _serve_with(type("Page", (_MislabelledPage,), {"sent": "cut"}))
    try:
        with pytest.raises(FastTextError, match=r"connection lost after 100 of \d+ bytes; the partial download .*is "
                                                r"kept"):
            download(spec, str(cache), base_url=f"http://127.0.0.1:{httpd.server_address[1]}/", progress=False)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert part.read_bytes() == data[:100]


def test_a_partial_download_that_a_gzipped_answer_does_not_begin_with_is_kept_and_named(archive, server, tmp_path):
    """Another archive's .part (or a page's): the decoded body does not begin with it. It is kept, and the line says
    so, as for a captive portal answering a resume."""
    spec, data = archive
    base_url, handler = server
    handler.encoding = "gzip"
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    part.write_bytes(b"\x1f\x8b" + bytes(98))
    with pytest.raises(FastTextError, match=rf"cannot download .*: the server sends the archive gzip-encoded again "
                                            rf"\(Content-Encoding\), and it does not begin with the 100 bytes of the "
                                            rf"partial download {part}.*is kept") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value) and part.read_bytes() == b"\x1f\x8b" + bytes(98)


def test_a_gzipped_answer_shorter_than_the_partial_download_is_refused_and_the_partial_download_kept(
        archive, server, tmp_path):
    """A gzip-encoded answer to a resume that ends, whole, before the bytes the .part holds (all of them its start):
    no archive of which the .part is a start. The .part is kept, and the line says so."""
    spec, data = archive
    base_url, handler = server
    handler.encoding = "gzip"
    handler.files = {f"/mirror/{spec.filename}": data[:50]}  # (gzip-encoded: longer than the .part, no 416)
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    part.write_bytes(data[:60])
    with pytest.raises(FastTextError, match=rf"^cannot download .*: the server sends the archive gzip-encoded again "
                                            rf"\(Content-Encoding\), and it is shorter than the 60 bytes of the "
                                            rf"partial download {part}; it is kept: delete it to download the archive "
                                            rf"whole$") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value) and part.read_bytes() == data[:60]
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=60-"), (f"/mirror/{spec.filename}", None)]


def test_a_gzipped_answer_that_is_not_the_archive_fails_verification_and_leaves_nothing(archive, server, tmp_path):
    """Decoded bytes are verified as any download is: only an archive of the right md5 is ever kept."""
    spec, data = archive
    base_url, handler = server
    handler.encoding = "gzip"
    handler.files = {f"/mirror/{spec.filename}": data[:-1] + bytes([data[-1] ^ 1])}
    with pytest.raises(FastTextError, match=r"failed verification \(md5 "):
        download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert os.listdir(tmp_path / "cache") == []


def test_a_gzip_encoding_damaged_on_the_way_is_not_trusted_and_its_partial_download_not_kept(archive, server,
                                                                                            tmp_path):
    """What a damaged encoding decodes to cannot be trusted, nor resumed from: the .part goes, and a rerun (the damage
    was on the way) fetches it whole."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.damaged = "gzip", True
    with pytest.raises(FastTextError, match=r"failed verification \(the server's gzip encoding of it cannot be "
                                            r"decoded: .*\); the partial file was deleted, run again to retry"):
        download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert os.listdir(tmp_path / "cache") == []
    handler.damaged = False
    with open(download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data


def test_a_gzip_encoding_damaged_on_the_way_answering_a_resume_keeps_the_partial_download(archive, server,
                                                                                          tmp_path):
    """A gzip-encoded answer to a resume whose encoding cannot be decoded deleted the .part (hundreds of MB of a Yelp
    download) though its bytes were had before that answer: only what the answer appended is untrusted. The .part is
    cut back to what it held before it, the line says so, and a rerun resumes it."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.damaged = "gzip", True
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with pytest.raises(FastTextError, match=r"^cannot download .*: the server's gzip encoding of the archive cannot "
                                            r"be decoded \(.+\): damaged on the way\?; the partial download "
                                            rf"{part} is kept as it was before this answer \(100 bytes\): run again "
                                            r"to resume") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value) and os.listdir(cache) == [part.name] and part.read_bytes() == data[:100]
    handler.encoding, handler.damaged = None, False
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log[-1] == (f"/mirror/{spec.filename}", "bytes=100-")


def test_a_gzipped_answer_to_a_resume_that_decodes_past_the_archive_keeps_the_partial_download(archive, server,
                                                                                               tmp_path):
    """A gzip-encoded answer to a resume whose start matched the .part but that decodes to more than the archive:
    the .part (hundreds of MB of a Yelp download) was deleted. It is kept as it was before that answer, the line says
    so, and a rerun against a sound server resumes it."""
    spec, data = archive
    base_url, handler = server
    handler.encoding = "gzip"
    handler.files = {f"/mirror/{spec.filename}": data + b"more than the archive"}
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with pytest.raises(FastTextError, match=rf"^cannot download .*: the server sends the archive gzip-encoded again "
                                            rf"\(Content-Encoding\), and it decodes to more than the {spec.size} "
                                            rf"bytes expected; the partial download {part} is kept as it was before "
                                            rf"this answer \(100 bytes\): run again to resume") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value) and part.read_bytes() == data[:100]
    handler.files = {f"/mirror/{spec.filename}": data}
    handler.encoding = None
    path = download(spec, str(cache), base_url=base_url, progress=False)
    assert handler.log[-1] == (f"/mirror/{spec.filename}", "bytes=100-")
    assert hashlib.md5(open(path, "rb").read()).hexdigest() == spec.md5


def test_an_archive_sent_in_an_encoding_not_decoded_here_is_named_not_a_retry(archive, server, tmp_path):
    """``Content-Encoding: br`` (or any but gzip): the line says what the server does, not "run again to retry"."""
    spec, data = archive
    base_url, handler = server
    handler.encoding = "br"
    with pytest.raises(FastTextError, match=r"cannot download .*: the server sends the archive br-encoded "
                                            r"\(Content-Encoding: br\), which is not decoded here: ") as exc:
        download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert "retry" not in str(exc.value) and "\n" not in str(exc.value)
    assert os.listdir(tmp_path / "cache") == []


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip"])
@pytest.mark.parametrize("no_length", [False, True])
@pytest.mark.parametrize("content_type", [None, "text/plain"])
def test_an_archive_a_server_labels_gzip_encoded_is_stored_as_sent(archive, server, tmp_path, encoding, no_length,
                                                                   content_type):
    """A server that labels the .tgz itself ``Content-Encoding: gzip`` (Apache's ``AddEncoding x-gzip .tgz``, an S3
    object whose metadata says ContentEncoding gzip) sends the archive as it is: decoded, it was the bare tar, which
    "failed verification ... run again to retry" on every run. Its bytes as sent are the archive (of its length, or,
    with none announced, decoding to a tar, not to a .tgz): stored as they are."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.labelled_only = encoding, True
    handler.no_length, handler.content_type = no_length, content_type
    with open(download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert os.listdir(tmp_path / "cache") == [spec.filename]
    assert handler.log == [(f"/mirror/{spec.filename}", None)]


def _archive_gzipping_to_its_own_length():
    """An archive (and its spec) whose gzip encoding is exactly as long as itself: a .tgz compressed lightly, which
    gzip shrinks by as much as its own header and trailer add. Found by trying documents of a few words more each."""
    words = ("good", "bad", "food", "service", "slow", "great", "again", "never", "fine", "ok")
    for count in range(3000):
        text = " ".join(words[(i * 7 + i // 3) % 10] for i in range(count))
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
            _add(tar, "even_csv/train.csv", csv_line("1", text).encode())
            _add(tar, "even_csv/test.csv", csv_line("2", "bad").encode())
        data = buf.getvalue()
        if len(gzip.compress(data, mtime=0)) == len(data):
            return ZhangDataset("even", "https://example.invalid/mirror/even_csv.tgz", len(data),
                                hashlib.md5(data).hexdigest(), 2), data
    raise AssertionError("no archive of these documents gzips to its own length")


@pytest.mark.parametrize("resume", [False, True])
def test_an_archive_gzipped_again_to_its_own_length_is_decoded_not_stored_as_sent(server, tmp_path, resume):
    """A server that gzips the .tgz again, where the gzip happens to be exactly as long as the archive: by its
    length alone it was the .tgz only labelled gzip, stored as sent, and "failed verification ... run again to
    retry" on every run. Its decoded start tells (the .tgz's gzip magic bytes, no tar): it is decoded, also as the
    whole answering a resume (a server ignoring the Range), whose start is compared with the .part's bytes."""
    spec, data = _archive_gzipping_to_its_own_length()
    _serve(server, spec, data)
    base_url, handler = server
    handler.encoding, handler.ignore_range = "gzip", resume
    cache = tmp_path / "cache"
    if resume:
        cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert os.listdir(cache) == [spec.filename] and len(handler.log) == 1


@pytest.mark.parametrize("total", ["given", "unknown"])
@pytest.mark.parametrize("no_length", [False, True])
def test_a_resume_from_a_server_gzipping_again_to_the_archive_s_own_length_reads_the_whole_in_the_first_run(
        server, tmp_path, total, no_length):
    """A server that gzips the .tgz again answers a resume with a range of its encoding. Where the encoding is as long
    as the archive, its Content-Range (``bytes 100-<last>/<size>``, or ``/*`` ending at that last byte) is the one a
    server only labelling the .tgz gzip sends: the range was appended to the .part as the archive's bytes, "failed
    verification ... run again to retry", and only the rerun (a 200) worked. Nothing in the 206 tells it: the whole is
    asked for, whose decoded start tells (the .tgz's, no tar's), and read decoded, the .part's bytes compared with it.
    Nothing wrong is ever appended to the .part."""
    spec, data = _archive_gzipping_to_its_own_length()
    _serve(server, spec, data)
    base_url, handler = server
    handler.encoding, handler.no_length = "gzip", no_length
    handler.unknown_total = "rest" if total == "unknown" else None
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-"), (f"/mirror/{spec.filename}", None)]
    assert os.listdir(cache) == [spec.filename]


@pytest.mark.parametrize("total", ["given", "unknown"])
@pytest.mark.parametrize("no_length", [False, True])
@pytest.mark.parametrize("resume", [None, "its range", "all of it"])
def test_a_server_gzipping_again_that_answers_a_request_for_the_whole_with_a_206_from_byte_0_is_read_whole(
        archive, server, tmp_path, total, no_length, resume):
    """A server that gzips the .tgz again as it sends it, and answers a request for the whole (no Range: a fresh
    download's, or the one a resume's range of its encoding is followed by) with a 206 of all its encoding, from byte
    0 (``Content-Range: bytes 0-<last>/<size>``, or ``/*``: a server compressing on the fly knows no total), where
    others answer 200. It was refused as "a range of that" on every run, though it holds all of the encoding: it is
    read whole and decoded as a 200 is, verified by size and md5 as any download, the .part's bytes compared with it.
    One answering a resume's range so (``all of it``) is read at once, not asked for again."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.whole_as_206, handler.no_length = "gzip", total, no_length
    handler.whole_as_206_to_ranges = resume == "all of it"
    cache = tmp_path / "cache"
    if resume:
        cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    asked = {None: [None], "its range": ["bytes=100-", None], "all of it": ["bytes=100-"]}[resume]
    assert handler.log == [(f"/mirror/{spec.filename}", r) for r in asked] and os.listdir(cache) == [spec.filename]


@pytest.mark.parametrize("resume", [False, True])
def test_a_206_from_byte_0_of_a_gzip_encoding_that_is_only_a_piece_of_it_is_refused_not_resumed_for_ever(
        archive, server, tmp_path, resume):
    """A server gzipping on the fly that limits what one answer holds answers a request for the whole with its
    encoding's first bytes, ``bytes 0-<last>/*``, as one sending all of it would. Read whole, its gzip ended short of
    its end with every byte its Content-Range announced in: taken for a lost connection, it was retried five times
    and the .part kept, "run again to resume", which every rerun was answered the same. It is refused as a range of
    the encoding is (as it was before such 206s were read whole), the .part as it was: none for a fresh download."""
    spec, data = archive
    base_url, handler = server
    handler.gzip_pieces = 200
    cache = tmp_path / "cache"
    if resume:
        cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
        held = part.read_bytes()
    kept = f"; the partial download {cache / (spec.filename + '.part')} is kept" if resume else ""
    with pytest.raises(FastTextError) as caught:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert str(caught.value) == (
        f"cannot download {base_url}{spec.filename}: the server sends the archive gzip-encoded (Content-Encoding: "
        f"gzip), and answers a request for all of it with a range of that: pass --base-url a mirror that sends the "
        f".tgz as it is, or copy {spec.filename} into the cache folder yourself (a verified archive there is used as "
        f"it is){kept}")
    assert len(handler.log) <= 2  # (not retried)
    assert os.listdir(cache) == ([spec.filename + ".part"] if resume else [])
    if resume:
        assert part.read_bytes() == held


@pytest.mark.parametrize("total", ["given", "unknown"])
def test_a_206_from_byte_0_of_a_gzip_encoding_is_verified_by_its_md5_as_any_download(archive, server, tmp_path,
                                                                                    total):
    """Read whole, such an answer is verified as every download is: another archive of the same size, sent so, fails
    its md5 and leaves nothing in the cache."""
    spec, _ = archive
    base_url, handler = server
    handler.encoding, handler.whole_as_206 = "gzip", total
    bad = ZhangDataset(spec.name, spec.url, spec.size, "0" * 32, spec.num_classes)
    with pytest.raises(FastTextError, match=rf"^download of {base_url}{spec.filename} failed verification \(md5 "
                                            rf"{spec.md5}, expected 0{{32}}\); the partial file was deleted"):
        download(bad, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert os.listdir(tmp_path / "cache") == []


@pytest.mark.parametrize("no_length", [False, True])
def test_a_resume_from_a_server_that_labels_the_archive_gzip_encoded_continues_with_its_range(archive, server,
                                                                                              tmp_path, no_length):
    """Such a server's ranges are of the archive (its Content-Range gives the archive's size): the resume's 206 was
    thrown away for the whole, which decoded to the tar and "did not begin with" the .part. The range is appended,
    once the whole, asked for to tell it from a range of the .tgz gzipped again to the archive's length (its headers
    are the same), decodes to a tar: that answer is left unread (a few KB of it), never written over the .part."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.labelled_only, handler.no_length = "gzip", True, no_length
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-"), (f"/mirror/{spec.filename}", None),
                           (f"/mirror/{spec.filename}", "bytes=100-")]


def test_a_resume_a_gzip_labelling_server_answers_whole_starts_over_as_from_any_server(archive, server, tmp_path):
    """Ignoring the Range, such a server sends the whole archive as it is (of the archive's length): a restart, as
    from a server sending it unlabelled, never the tar its decoding is compared with the .part."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.labelled_only, handler.ignore_range = "gzip", True, True
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-")] and os.listdir(cache) == [spec.filename]


def test_a_resume_answered_whole_of_no_length_by_a_gzip_labelling_server_keeps_the_partial_download(
        archive, server, tmp_path):
    """The whole archive as it is, of no announced length, answering a resume: refused as from any server (its
    length unknown, it may be a page), the .part kept as it was; never decoded to the tar and compared with it."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.labelled_only, handler.ignore_range, handler.no_length = "gzip", True, True, True
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with pytest.raises(FastTextError, match=rf"^cannot download .*: the request to resume at byte 100 was answered "
                                            rf"with a response of unknown length, not the {spec.size}-byte archive "
                                            rf".*the partial download {part} is kept") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value) and os.listdir(cache) == [part.name] and part.read_bytes() == data[:100]


@pytest.mark.parametrize("no_length", [False, True])
def test_a_gzip_labelled_archive_cut_short_is_kept_and_resumed_with_the_archive_s_bytes(archive, server, tmp_path,
                                                                                       no_length, one_attempt):
    """A lost connection leaves the bytes as sent (the archive's) in the .part; the resume appends the range of the
    same bytes: never decoded ones after raw ones."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.labelled_only, handler.no_length = "gzip", True, no_length
    handler.truncate_at = len(data) // 2
    cache = tmp_path / "cache"
    with pytest.raises(FastTextError, match=rf"(connection lost|the connection closed) after {len(data) // 2} of "
                                            rf"{spec.size} bytes.*is kept: run again to resume$"):
        download(spec, str(cache), base_url=base_url, progress=False)
    assert (cache / (spec.filename + ".part")).read_bytes() == data[:len(data) // 2]
    handler.truncate_at = None
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log[-1] == (f"/mirror/{spec.filename}", f"bytes={len(data) // 2}-")


def test_a_resume_whose_range_a_server_gzips_alone_reads_the_whole_and_keeps_nothing_wrong(archive, server,
                                                                                            tmp_path):
    """A server that gzips each answer's body after cutting the range: its 206's Content-Range gives the archive's
    size, as a server only labelling the .tgz gzip does, but its Content-Length is the gzip's, not the range's. Taken
    for the archive as sent, it was refused as contradicting itself on every rerun, the resume never finished; it is a
    range of the encoding, and the whole is read and decoded, as from any server that gzips the .tgz again."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.gzips_each_range = "gzip", True
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-"), (f"/mirror/{spec.filename}", None)]
    assert os.listdir(cache) == [spec.filename]


@pytest.mark.parametrize("whole", ["gzipped again", "as sent"])
@pytest.mark.parametrize("no_length", [False, True])
def test_a_resume_whose_range_a_server_gzips_alone_with_no_length_reads_the_whole_and_keeps_nothing_wrong(
        archive, server, tmp_path, whole, no_length):
    """The same server sending no Content-Length: nothing in its headers tells its 206 (the archive's Content-Range,
    labelled gzip) from the .tgz sent as it is. Taken for that, its gzip was appended to the .part: it ran past the
    range ("sends more than ... run again to resume", on every rerun) or failed the md5 once. Its body begins with a
    gzip header, which the archive's bytes after its first do not: the whole is read instead, as it is sent (gzipped
    again, or the .tgz labelled gzip; of no announced length either), and nothing is appended to the .part."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.gzips_each_range = "gzip", "no length"
    handler.labelled_only, handler.no_length = whole == "as sent", no_length
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-"), (f"/mirror/{spec.filename}", None)]
    assert os.listdir(cache) == [spec.filename]


def test_a_resume_whose_range_a_server_gzips_alone_to_the_range_s_own_length_reads_the_whole(server, tmp_path):
    """The same server, where the range's gzip happens to be as long as the range (a tail of the archive that
    compresses a little: a .tgz of stored blocks ends in the tar's zeros): its Content-Length then agrees with its
    Content-Range, as the .tgz only labelled gzip's does. Appended, its gzip filled the .part to the archive's size
    and "failed verification ... run again to retry" once. Its body begins with a gzip header, which the archive's
    bytes after its first do not: the whole is read instead, and nothing is appended to the .part."""
    spec, data = _archive_as("stored", compresslevel=0)
    offset = next((at for at in range(1, len(data)) if len(gzip.compress(data[at:], mtime=0)) == len(data) - at),
                  None)
    assert offset is not None and data[offset:offset + 3] != b"\x1f\x8b\x08"  # (a tail that gzips to its length)
    _serve(server, spec, data)
    base_url, handler = server
    handler.encoding, handler.gzips_each_range = "gzip", True
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    part.write_bytes(data[:offset])
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", f"bytes={offset}-"), (f"/mirror/{spec.filename}", None)]
    assert os.listdir(cache) == [spec.filename]


@pytest.mark.parametrize("sends", ["as it is", "labelled gzip", "gzipped again"])
@pytest.mark.parametrize("no_length", [False, True])
def test_a_partial_download_an_older_version_stored_decoded_is_started_over_whatever_the_server_sends(
        archive, server, tmp_path, sends, no_length):
    """An older version stored the .tgz a server labels Content-Encoding: gzip decoded, the bare tar. Resumed, the
    range of the archive was appended to it and the download "failed verification ... run again to retry" once (from
    a server sending the .tgz as it is, unlabelled: a mirror passed since, the server's setting changed); from one
    that gzips the .tgz again, the decoded answer "did not begin with" it, on every run. Every archive is a .tgz (read
    as one: zhang_splits), which begins with gzip's magic bytes; a .part that does not is no start of it, whatever
    the server sends: the download starts over from the first byte, with no range asked for, in the one run."""
    spec, data = archive
    base_url, handler = server
    handler.encoding = None if sends == "as it is" else "gzip"
    handler.labelled_only, handler.no_length = sends == "labelled gzip", no_length
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    part.write_bytes(gzip.decompress(data)[:100])
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", None)] and os.listdir(cache) == [spec.filename]


@pytest.mark.parametrize("no_length", [False, True])
def test_a_gzip_labelled_range_of_unknown_total_to_the_archive_s_end_continues_the_partial_download(
        archive, server, tmp_path, no_length):
    """A 206 labelled gzip whose Content-Range gives no total (``bytes 100-<last>/*``) was taken for a range of the
    server's encoding and the whole read again (with no length announced, refused on every run). Asked for the bytes
    to the end, one ending at the archive's last byte sends as many bytes as the archive has, which the .tgz gzipped
    again cannot, unless it happens to be as long (told by the whole's decoded start, a tar's: the range asked for
    again): it is the archive's range, appended to the .part."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.labelled_only, handler.no_length = "gzip", True, no_length
    handler.unknown_total = "rest"
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-"), (f"/mirror/{spec.filename}", None),
                           (f"/mirror/{spec.filename}", "bytes=100-")]
    assert os.listdir(cache) == [spec.filename]


@pytest.mark.parametrize("no_length", [False, True])
def test_a_gzip_labelled_piece_of_unknown_total_reads_the_whole_and_never_fails(archive, server, tmp_path,
                                                                                no_length):
    """A 206 labelled gzip of unknown total ending before the archive's end (``bytes 100-149/*``) may as well be a
    range of the .tgz gzipped again (a server compressing as it sends knows no total for its encoding): appended, a
    wrong guess failed the md5 and cost the .part. The whole is read instead; of no announced length (the .tgz as it
    is, labelled gzip), it was refused as a resume answered with an answer of unknown length, on every run, though
    it was the answer asked for: it restarts the download, the .part kept until it holds more."""
    spec, data = archive
    base_url, handler = server
    handler.encoding, handler.labelled_only, handler.no_length = "gzip", True, no_length
    handler.unknown_total = 50
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-"), (f"/mirror/{spec.filename}", None)]
    assert os.listdir(cache) == [spec.filename]


@pytest.mark.parametrize("resume", [False, True])
def test_an_archive_gzipped_again_as_x_gzip_is_decoded_and_one_labelled_identity_is_as_sent(archive, server,
                                                                                            tmp_path, resume):
    """``x-gzip`` is gzip (RFC 9110): decoded as it is; ``identity`` is no encoding at all."""
    spec, data = archive
    base_url, handler = server
    for encoding in ("x-gzip", "identity"):
        handler.encoding = encoding
        (tmp_path / encoding).mkdir()
        cache = tmp_path / encoding / "cache"
        if resume:
            cache, part = _cache_with_a_partial_download(tmp_path / encoding, spec, data)
        with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
            assert f.read() == data, encoding
        assert os.listdir(cache) == [spec.filename]


@pytest.mark.parametrize("encoding", ["br", "deflate", "compress"])
@pytest.mark.parametrize("resume", [False, True])
def test_an_archive_in_an_encoding_not_decoded_here_is_one_error_line_and_the_partial_download_kept(
        archive, server, tmp_path, encoding, resume):
    """Any encoding but gzip's is refused in one line, whatever its length (``br`` of the archive's size is no
    archive), and a .part there is kept as it was."""
    spec, data = archive
    base_url, handler = server
    handler.encoding = encoding
    cache = tmp_path / "cache"
    if resume:
        cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with pytest.raises(FastTextError, match=rf"^cannot download .*: the server sends the archive {encoding}-encoded "
                                            rf"\(Content-Encoding: {encoding}\), which is not decoded here: ") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value) and "retry" not in str(exc.value)
    assert ("is kept" in str(exc.value)) == resume
    assert os.listdir(cache) == ([part.name] if resume else []) and (not resume or part.read_bytes() == data[:100])


@pytest.mark.parametrize("from_zero", ["bare", "content-range"])
def test_a_resume_answered_206_with_the_whole_archive_uses_it_whole(archive, server, tmp_path, from_zero):
    """A 206 to a resume that sends the whole archive (no Content-Range and the archive's length, or a Content-Range
    from byte 0 to its end: a server that sends from the start): its bytes were appended to the .part, and the
    archive "failed verification ... run again to retry", which failed so every time. It is the archive whole."""
    spec, data = archive
    base_url, handler = server
    handler.from_zero = from_zero
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    path = download(spec, str(cache), base_url=base_url, progress=False)
    with open(path, "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-")] and os.listdir(cache) == [spec.filename]


def test_a_folder_where_the_archive_goes_is_named_and_kept(archive, server, tmp_path):
    """It said "cannot write the download cache ...: Is a directory", naming neither the folder nor what to do."""
    spec, _ = archive
    base_url, handler = server
    cache = tmp_path / "cache"
    (cache / spec.filename / "mine").mkdir(parents=True)
    with pytest.raises(FastTextError, match=rf"^the download cache holds a folder {cache}/{spec.filename} where the "
                                            r"archive goes: move it away, or choose another cache folder$") as exc:
        download(spec, str(cache), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value) and (cache / spec.filename / "mine").is_dir()
    assert handler.log == []  # refused before the download, not after it


STOPPED_DOWNLOAD = """
import sys
from fasttext_lib import cli, download

size, md5 = int(sys.argv.pop(1)), sys.argv.pop(1)
download.DATASETS["tiny"] = download.ZhangDataset("tiny", "https://example.invalid/tiny_csv.tgz", size, md5, 3)
raise SystemExit(cli.run())
"""


@pytest.mark.parametrize("sig, status, says", [(signal.SIGINT, 130, "interrupted (SIGINT)"),
                                               (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_a_download_stopped_by_a_signal_says_its_partial_download_is_kept_for_a_rerun(archive, server, tmp_path, sig,
                                                                                      status, says):
    """Ctrl-C or SIGTERM during ``prepare``'s download said "stopped and cleaned up", not that the partial download
    is kept on purpose and resumed by a rerun: a user deleted it (hundreds of MB) or thought it had to start over."""
    spec, data = archive
    base_url, handler = server
    handler.hold_at, handler.release = 200, threading.Event()
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(STOPPED_DOWNLOAD)
    cache = tmp_path / "cache"
    part = cache / (spec.filename + ".part")
    proc = subprocess.Popen([sys.executable, str(wrapper), str(spec.size), spec.md5, "prepare", "--dataset", NAME,
                             "--output", str(tmp_path / "out"), "--cache-dir", str(cache), "--base-url", base_url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(
                                __file__)))))
    try:
        deadline = time.monotonic() + 120  # (only so that a broken download ends the test)
        while not (part.exists() and part.stat().st_size == 200):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        handler.release.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == status, err
    assert err.strip().splitlines()[-1] == (f"error: {says}; stopped and cleaned up; the partial download {part} "
                                            f"is kept: a rerun resumes it")
    assert os.listdir(cache) == [part.name] and part.read_bytes() == data[:200] and not (tmp_path / "out").exists()
    handler.hold_at = None
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log[-1] == (f"/mirror/{spec.filename}", "bytes=200-")


def _stop_as_the_test_split_is_written(monkeypatch, stop):
    """``stop()`` as prepare writes its test split: the names file and the train split are written already."""
    import fasttext_lib.download as download_module

    real = download_module.write_fasttext_rows

    def write_fasttext_rows(data, f, uri, **kwargs):
        if uri.endswith(".test"):
            stop()
        return real(data, f, uri, **kwargs)

    monkeypatch.setattr(download_module, "write_fasttext_rows", write_fasttext_rows)


@pytest.mark.parametrize("sig, status, says", [(signal.SIGINT, 130, "interrupted (SIGINT)"),
                                               (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_a_prepare_stopped_as_it_writes_the_dataset_says_what_it_cleaned_up_and_that_the_archive_is_kept(
        archive, server, tmp_path, monkeypatch, sig, status, says):
    """A stop (Ctrl-C, SIGTERM) while ``prepare`` writes the dataset's files said "stopped and cleaned up", as if
    nothing were kept: the verified archive stays in the cache (the download is the expensive part, up to 690 MB),
    and a rerun uses it without downloading it again. The line names the files whose writes it cleaned up, and the
    archive kept, where."""
    from conftest import cli_in_process

    spec, data = archive
    base_url, handler = server
    monkeypatch.setitem(DATASETS, NAME, spec)
    out, cache = tmp_path / "out", tmp_path / "cache"
    _stop_as_the_test_split_is_written(monkeypatch, lambda: signal.getsignal(sig)(sig, None))  # (a signal there)
    stopped = cli_in_process("prepare", "--dataset", NAME, "--output", out, "--cache-dir", cache, "--base-url",
                             base_url)
    written = ", ".join(str(out / f"{NAME}.{suffix}") for suffix in ("classes.txt", "train"))
    assert (stopped.returncode, stopped.stderr.strip().splitlines()[-1]) == (
        status, f"error: {says}; stopped and cleaned up {written} and {out / NAME}.test, being written when the "
                f"stop came; the downloaded archive {cache / spec.filename} is kept in the cache: a rerun does "
                f"not download it again"), stopped.stderr
    assert os.listdir(cache) == [spec.filename] and not out.exists()
    monkeypatch.undo()
    monkeypatch.setitem(DATASETS, NAME, spec)
    assert cli_in_process("prepare", "--dataset", NAME, "--output", out, "--cache-dir", cache, "--base-url", base_url
                          ).returncode == 0
    assert len(handler.log) == 1 and sorted(os.listdir(out)) == [f"{NAME}.classes.txt", f"{NAME}.test",
                                                                 f"{NAME}.train"]


def test_a_prepare_stopped_in_python_as_it_writes_over_the_dataset_keeps_it_and_says_the_archive_is_kept(
        archive, server, tmp_path, monkeypatch):
    """The same stop in a notebook or a script (a KeyboardInterrupt: the kernel's Stop button), over files a
    prepare wrote before (overwrite=True): they stay as they were, and the stop's line (a notebook shows it:
    notebook_errors) says the archive is kept."""
    from fasttext_lib.stops import stop_message

    spec, _ = archive
    base_url, handler = server
    out, cache = tmp_path / "out", tmp_path / "cache"
    uris = prepare(spec, str(out), str(cache), base_url=base_url, progress=False)
    before = _listing(out)

    def notebook_stop():
        raise KeyboardInterrupt

    _stop_as_the_test_split_is_written(monkeypatch, notebook_stop)
    with pytest.raises(KeyboardInterrupt) as stopped:
        prepare(spec, str(out), str(cache), base_url=base_url, progress=False, overwrite=True)
    assert stop_message(stopped.value) == (
        f"interrupted (SIGINT); stopped and cleaned up {uris['label_names']}, {uris['train']} and {uris['test']}, "
        f"being written when the stop came; the downloaded archive {cache / spec.filename} is kept in the "
        f"cache: a rerun does not download it again")
    assert _listing(out) == before and os.listdir(cache) == [spec.filename] and len(handler.log) == 1


def _listing(out):
    return {name: (out / name).read_bytes() for name in os.listdir(out)}


def test_a_prepare_stopped_once_its_files_are_written_says_the_archive_is_kept_without_a_but(
        archive, server, s3_bucket, tmp_path, monkeypatch):
    """A stop once prepare's files are all written on S3 (during the check that follows the set's writes) said
    "stopped after ... were written whole, but the downloaded archive ... is kept": the "but" read as if something
    were lost where nothing was. The archive kept is said after the rest of the line, as when the stop cleaned the
    files up (above)."""
    from fasttext_lib.stops import stop_message

    spec, _ = archive
    prefix, cache = f"{s3_bucket}/datasets/tiny", tmp_path / "cache"

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(storage.pairs, "_write_ids", stopped)
    with pytest.raises(KeyboardInterrupt) as caught:
        prepare(spec, prefix, str(cache), base_url=server[0], progress=False)
    written = ", ".join(f"{prefix}/{NAME}.{suffix}" for suffix in ("classes.txt", "train", "test"))
    assert stop_message(caught.value) == (
        f"interrupted (SIGINT); stopped after {written} were written whole; the downloaded archive "
        f"{cache / spec.filename} is kept in the cache: a rerun does not download it again")


def test_prepare_again_keeps_an_edited_names_file_unless_overwrite_and_reruns_writing_the_same_files(
        archive, server, tmp_path, monkeypatch):
    """A second prepare into the same folder replaced its .train/.test/.classes.txt silently, a .classes.txt the
    user had edited too (every other writing command keeps its outputs unless --overwrite). Now what differs is kept
    (one error naming it), a rerun that writes the same bytes (notebook 01 on every run) succeeds, and
    ``overwrite=True`` replaces."""
    from fasttext_lib import zhang_splits

    spec, _ = archive
    out, cache = tmp_path / "out", str(tmp_path / "cache")
    first = prepare(spec, str(out), cache, base_url=server[0], progress=False)
    prepared = _listing(out)
    assert prepare(spec, str(out), cache, base_url=server[0], progress=False) == first  # the same files: fine
    assert _listing(out) == prepared

    (out / "tiny.classes.txt").write_text("1=great\n2=awful\n3=meh\n")  # the user's own names
    edited = _listing(out)
    # refused as soon as the names are known: before the splits are read (minutes for Yelp)
    monkeypatch.setattr(zhang_splits, "read_split", lambda *a: pytest.fail("the splits were read"))
    with pytest.raises(FastTextError, match=rf"^{out / 'tiny.classes.txt'} already exists; it differs from what "
                                            rf"prepare writes .*pass overwrite=True to replace it") as exc:
        prepare(spec, str(out), cache, base_url=server[0], progress=False)
    # (said as prepare's argument, as notebook 01 passes it: its parameter overwrite, not the command line's flag)
    assert "\n" not in str(exc.value) and "--" not in str(exc.value), exc.value
    assert _listing(out) == edited  # unchanged, and no temporary left beside
    monkeypatch.undo()

    # a split that differs (another limit) is refused too, all three kept
    (out / "tiny.classes.txt").write_bytes(prepared["tiny.classes.txt"])
    with pytest.raises(FastTextError, match=rf"^{out / 'tiny.train'} already exists; it differs"):
        prepare(spec, str(out), cache, base_url=server[0], limit=1, progress=False)
    assert _listing(out) == prepared

    (out / "tiny.classes.txt").write_text("1=great\n2=awful\n3=meh\n")
    assert prepare(spec, str(out), cache, base_url=server[0], progress=False, overwrite=True) == first
    assert _listing(out) == prepared


def test_prepare_again_to_s3_keeps_an_edited_names_file_unless_overwrite(archive, server, tmp_path, s3_bucket):
    spec, _ = archive
    prefix, cache = f"{s3_bucket}/datasets/tiny", str(tmp_path / "cache")
    bucket, key = storage.split_s3(f"{prefix}/tiny.classes.txt")
    client = storage.s3_client()

    def objects():
        listed = client.list_objects_v2(Bucket=bucket).get("Contents", [])
        return {o["Key"]: client.get_object(Bucket=bucket, Key=o["Key"])["Body"].read() for o in listed}

    first = prepare(spec, prefix, cache, base_url=server[0], progress=False)
    prepared = objects()
    assert prepare(spec, prefix, cache, base_url=server[0], progress=False) == first  # the same files: fine
    assert objects() == prepared
    assert read_labeled(first["train"]).names == {"1": "good", "2": "bad"}  # (still one set)

    client.put_object(Bucket=bucket, Key=key, Body=b"1=great\n2=awful\n3=meh\n")
    edited = objects()
    with pytest.raises(FastTextError, match=rf"^{prefix}/tiny.classes.txt already exists; it differs"):
        prepare(spec, prefix, cache, base_url=server[0], progress=False)
    assert objects() == edited  # unchanged, and no staging object left

    assert prepare(spec, prefix, cache, base_url=server[0], progress=False, overwrite=True) == first
    assert objects() == prepared
    assert read_labeled(first["train"]).names == {"1": "good", "2": "bad"}


def test_prepare_command_line_keeps_what_differs_unless_overwrite(archive, server, tmp_path, monkeypatch, capsys):
    from fasttext_lib import cli

    spec, _ = archive
    monkeypatch.setitem(DATASETS, NAME, spec)
    out = tmp_path / "out"
    command = ["prepare", "--dataset", NAME, "--output", str(out), "--cache-dir", str(tmp_path / "cache"),
               "--base-url", server[0]]
    assert cli.main(command) == 0
    prepared = _listing(out)
    assert cli.main(command) == 0 and _listing(out) == prepared  # a rerun: the same files
    capsys.readouterr()
    (out / f"{NAME}.classes.txt").write_text("1=great\n2=awful\n3=meh\n")
    edited = _listing(out)
    assert cli.main(command) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.splitlines() == [
        f"error: {out / (NAME + '.classes.txt')} already exists; it differs from what prepare writes (edited since, "
        f"or prepared with another limit or archive): pass --overwrite to replace it, or choose another --output"]
    assert _listing(out) == edited
    assert cli.main(command + ["--overwrite"]) == 0 and _listing(out) == prepared


@pytest.fixture
def proxy(s3_proxy):
    """The S3 server behind a FaultProxy (conftest.s3_proxy)."""
    return s3_proxy


def _gets(proxy, pattern):
    import re

    return [path for method, path, _ in proxy.log if method == "GET" and re.search(pattern, path)]


def test_prepare_rerun_to_s3_tells_the_same_files_by_their_etags_without_reading_them(
        archive, server, tmp_path, s3_bucket, proxy):
    """A rerun to S3 downloaded every prepared file to hash it (hundreds of MB for Yelp), and without s3:GetObject on
    them (HEAD allowed) an identical rerun was refused as "it differs", after the archive's download. S3's ETag is the
    MD5 of what our writes put there (one PUT or a copy; of each part for a multipart upload): a HEAD tells."""
    spec, _ = archive
    prefix, cache = f"{s3_bucket}/datasets/tiny", str(tmp_path / "cache")
    first = prepare(spec, prefix, cache, base_url=server[0], progress=False)
    proxy.clear()
    proxy.fail("GET", r"/datasets/tiny/tiny\.", "403")  # the prepared files may not be read
    assert prepare(spec, prefix, cache, base_url=server[0], progress=False) == first
    assert _gets(proxy, r"/datasets/tiny/tiny\.") == []  # not one read
    proxy.clear()
    assert read_labeled(first["train"]).names == {"1": "good", "2": "bad"}  # (still one set)


def test_holds_tells_a_multipart_upload_by_its_etag_and_a_different_object_without_reading(tmp_path, s3_bucket,
                                                                                           proxy):
    """An object of our multipart uploads (8 MiB parts: storage.UPLOAD_PART_BYTES) has the ETag md5(part md5s)-N;
    one PUT's ETag is the MD5 of its bytes, so another object of the same size is told different by a HEAD too."""
    data = os.urandom(storage.UPLOAD_PART_BYTES * 2 + 1000)
    local = tmp_path / "blob"
    local.write_bytes(data)
    bucket = s3_bucket[len("s3://"):]
    storage.upload_file(storage.s3_client(), str(local), bucket, "parts")
    storage.s3_client().put_object(Bucket=bucket, Key="other", Body=os.urandom(len(data)))
    written = storage.Written(io.BytesIO(), s3=True)
    written.write(data[:12345])
    written.write(data[12345:])
    proxy.fail("GET", r"/(parts|other)$", "403")
    assert storage.holds(f"{s3_bucket}/parts", written)
    assert not storage.holds(f"{s3_bucket}/other", written)
    assert _gets(proxy, r"/(parts|other)$") == []


@pytest.mark.parametrize("caller", ["api", "cli"])
def test_prepare_rerun_to_s3_that_cannot_tell_refuses_before_the_download(archive, server, tmp_path, s3_bucket,
                                                                         proxy, monkeypatch, capsys, caller):
    """An object whose ETag is no MD5 of its bytes (SSE-KMS) can only be told the same by reading it: where that is
    refused (no s3:GetObject, or no kms:Decrypt), the rerun is one line saying so, before the archive's download
    (minutes for Yelp), not a claim that the file differs after it. What to do is said as the caller gives it: the
    Python API (notebook 01, which has no flags) was told to pass --overwrite too; now overwrite=True."""
    import fasttext_lib.download as download_module
    from fasttext_lib import cli

    spec, _ = archive
    prefix, cache = f"{s3_bucket}/datasets/tiny", str(tmp_path / "cache")
    first = prepare(spec, prefix, cache, base_url=server[0], progress=False)
    bucket, key = storage.split_s3(first["train"])
    client = storage.s3_client()
    body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
    client.put_object(Bucket=bucket, Key=key, Body=body, ServerSideEncryption="aws:kms")
    proxy.fail("GET", r"/datasets/tiny/tiny\.", "403")
    monkeypatch.setattr(download_module, "download", lambda *a, **k: pytest.fail("the archive was downloaded"))
    if caller == "cli":
        monkeypatch.setitem(DATASETS, NAME, spec)
        capsys.readouterr()
        assert cli.main(["prepare", "--dataset", NAME, "--output", prefix, "--cache-dir", cache]) == 2
        said = capsys.readouterr().err.splitlines()
        assert len(said) == 1 and said[0].startswith("error: "), said
        said, replace = said[0][len("error: "):], "pass --overwrite to replace it"
    else:
        with pytest.raises(FastTextError) as exc:
            prepare(spec, prefix, cache, base_url=server[0], progress=False)
        said, replace = str(exc.value), "pass overwrite=True to replace it"
        assert "--overwrite" not in said and "\n" not in said, said
    assert re.match(rf"cannot tell whether {re.escape(first['train'])} holds what this run writes: .*s3:GetObject.*; "
                    rf"{replace}, or grant that permission$", said), said


def _meanwhile(monkeypatch, action):
    """Run ``action()`` once, as prepare reads its first split: another run's doing while this one works."""
    from fasttext_lib import zhang_splits

    real, done = zhang_splits.read_split, []

    def read_split(*args):
        if not done:
            done.append(1)
            action()
        return real(*args)

    monkeypatch.setattr(zhang_splits, "read_split", read_split)


@pytest.mark.parametrize("where", ["local", "s3"])
def test_two_prepare_runs_into_an_empty_place_both_pass_when_they_write_the_same_bytes(
        archive, server, tmp_path, s3_bucket, monkeypatch, where):
    """Two runs into an empty place without --overwrite: the second to finish failed ("already exists") although
    it wrote the very same bytes. Now it passes; had the other run written other bytes (another limit), it is refused
    and the other run's files are kept."""
    spec, _ = archive
    out = str(tmp_path / "out") if where == "local" else f"{s3_bucket}/datasets/tiny"
    cache = str(tmp_path / "cache")
    _meanwhile(monkeypatch, lambda: prepare(spec, out, cache, base_url=server[0], progress=False))
    first = prepare(spec, out, cache, base_url=server[0], progress=False)
    prepared = {name: storage.read_bytes(uri) for name, uri in first.items()}
    assert read_labeled(first["train"]).names == {"1": "good", "2": "bad"}

    other = str(tmp_path / "other") if where == "local" else f"{s3_bucket}/datasets/other"
    monkeypatch.undo()
    _meanwhile(monkeypatch, lambda: prepare(spec, other, cache, base_url=server[0], progress=False, limit=1))
    with pytest.raises(FastTextError, match=r"tiny\.train already exists; it differs"):
        prepare(spec, other, cache, base_url=server[0], progress=False)
    assert storage.read_bytes(storage.join(other, "tiny.train")) != prepared["train"]  # the other run's, kept
    assert {name: storage.read_bytes(uri) for name, uri in first.items()} == prepared


@pytest.mark.parametrize("where", ["local", "s3"])
def test_prepare_rerun_keeps_a_file_changed_after_its_comparison(archive, server, tmp_path, s3_bucket, monkeypatch,
                                                                where):
    """A file found the same, then changed by someone else before the files were put in place (ms locally, an upload's
    duration on S3), was replaced. Now it is kept: one line naming it."""
    import fasttext_lib.download as download_module

    spec, _ = archive
    out = str(tmp_path / "out") if where == "local" else f"{s3_bucket}/datasets/tiny"
    cache = str(tmp_path / "cache")
    first = prepare(spec, out, cache, base_url=server[0], progress=False)
    edited = b"1=great\n2=awful\n3=meh\n"
    real = download_module._refuse_what_differs

    def compared_then_edited(outputs, *hints):
        real(outputs, *hints)
        if len(outputs) > 1:  # the last comparison, of all the files, just before they are put in place
            if where == "local":
                with open(first["label_names"], "wb") as f:
                    f.write(edited)
            else:
                storage.s3_client().put_object(Bucket=storage.split_s3(out)[0],
                                               Key=storage.split_s3(first["label_names"])[1], Body=edited)

    monkeypatch.setattr(download_module, "_refuse_what_differs", compared_then_edited)
    with pytest.raises(FastTextError, match=r"tiny\.classes\.txt already exists; it differs"):
        prepare(spec, out, cache, base_url=server[0], progress=False)
    assert storage.read_bytes(first["label_names"]) == edited


def test_prepare_rerun_to_s3_mends_a_set_a_failed_write_left_mixed_though_its_bytes_are_the_same(
        archive, server, tmp_path, s3_bucket, monkeypatch):
    """A write that failed between its copies leaves members of two writes, and reading them is refused "until the
    pair is written again". A rerun without --overwrite writing the same bytes found every file alike and wrote
    nothing: it passed, and the set it reported stayed unreadable."""
    spec, _ = archive
    prefix, cache = f"{s3_bucket}/datasets/tiny", str(tmp_path / "cache")
    first = prepare(spec, prefix, cache, base_url=server[0], progress=False)
    real, copies = storage.pairs._copy, []

    def copy_then_fail(*args):
        copies.append(args)
        if len(copies) == 2:
            raise FastTextError("connection lost")
        return real(*args)

    monkeypatch.setattr(storage.pairs, "_copy", copy_then_fail)
    with pytest.raises(FastTextError, match="no longer belong together"):
        prepare(spec, prefix, cache, base_url=server[0], progress=False, overwrite=True)
    monkeypatch.setattr(storage.pairs, "_copy", real)
    with pytest.raises(FastTextError, match="another write"):
        read_labeled(first["train"])
    assert prepare(spec, prefix, cache, base_url=server[0], progress=False) == first
    assert read_labeled(first["train"]).names == {"1": "good", "2": "bad"}


def test_an_sse_kms_object_of_our_part_count_that_may_not_be_read_is_refused_before_any_work(tmp_path, s3_bucket,
                                                                                           proxy):
    """check_comparable let an object whose ETag had a part count of ours pass without trying a read ("its ETag may
    tell"), but an SSE-KMS object's ETag is no checksum of its bytes, multipart or not: holds() read it later, after
    the archive's download, and failed there."""
    local = tmp_path / "blob"
    local.write_bytes(os.urandom(storage.UPLOAD_PART_BYTES + 1000))
    bucket = s3_bucket[len("s3://"):]
    storage.s3_client().upload_file(str(local), bucket, "kms", ExtraArgs={"ServerSideEncryption": "aws:kms"},
                                     Config=__import__("boto3").s3.transfer.TransferConfig(
                                         multipart_threshold=storage.UPLOAD_PART_BYTES,
                                         multipart_chunksize=storage.UPLOAD_PART_BYTES))
    assert storage.s3_client().head_object(Bucket=bucket, Key="kms")["ETag"].endswith('-2"')
    proxy.fail("GET", r"/kms$", "403")
    with pytest.raises(FastTextError, match=rf"^cannot tell whether {s3_bucket}/kms holds what this run writes"):
        storage.check_comparable(f"{s3_bucket}/kms")


def _another_run_before_create(monkeypatch, nth, other_run):
    """``(keys created, what other_run() returned)``: ``other_run()`` runs whole just before this run's ``nth``
    create-only upload (storage.pairs._upload_new) is sent; the dict is filled then."""
    real, calls, returned = storage.pairs._upload_new, [], {}

    def upload_new(*args, **kwargs):
        calls.append(args[3])
        if len(calls) == nth:
            returned.update(other_run())
        return real(*args, **kwargs)

    monkeypatch.setattr(storage.pairs, "_upload_new", upload_new)
    return calls, returned


@pytest.mark.parametrize("deletable", [True, False])
def test_a_prepare_run_that_loses_a_race_to_s3_deletes_none_of_the_files_the_other_run_put_in_place(
        archive, server, tmp_path, s3_bucket, proxy, monkeypatch, deletable):
    """Two runs into an empty prefix: A creates its names file; B finds it (the same bytes) and writes its whole set
    over it (another limit: other splits), and passes; A's create of its train split finds B's, and A took back "the
    members it created" by their keys: it deleted B's names file, then failed (B's splits differ). B's set, reported
    written, had lost a member. Without s3:DeleteObject (nothing taken back) A failed saying its files "no longer
    belong together", though they were B's set, whole: it is told B's train split differs, as A with it is."""
    spec, _ = archive
    out, cache = f"{s3_bucket}/datasets/tiny", str(tmp_path / "cache")
    if not deletable:
        _refuse_delete_and_list(proxy)
    calls, other_run = _another_run_before_create(monkeypatch, 2, lambda: prepare(  # A, about to create its train
        spec, out, cache, base_url=server[0], progress=False, limit=1))               # split: B runs whole meanwhile
    with pytest.raises(FastTextError, match=r"tiny\.train already exists; it differs"):
        prepare(spec, out, cache, base_url=server[0], progress=False)
    assert storage.read_bytes(other_run["label_names"]) == b"1=good\n2=bad\n3=other\n"
    assert read_labeled(other_run["train"]).names == {"1": "good"}  # (B's set, read together: limit=1, one row)


def test_a_prepare_run_without_delete_permission_that_loses_a_race_to_s3_passes_when_the_bytes_are_the_same(
        archive, server, tmp_path, s3_bucket, proxy, monkeypatch):
    """A role without s3:DeleteObject uploads each file in place (conditionally: none is replaced). Two runs into an
    empty prefix: A creates its names file and train split; B finds them (the same bytes) and writes its whole set
    over them, and passes; A's create of its test split finds B's. A failed, "no longer belong together", though the
    prefix held B's set, whole, of A's very bytes: the race the run that finds its own bytes already there passes."""
    spec, _ = archive
    out, cache = f"{s3_bucket}/datasets/tiny", str(tmp_path / "cache")
    _refuse_delete_and_list(proxy)
    calls, other_run = _another_run_before_create(monkeypatch, 3, lambda: prepare(  # A, about to create its test
        spec, out, cache, base_url=server[0], progress=False))                        # split: B runs whole meanwhile
    first = prepare(spec, out, cache, base_url=server[0], progress=False)
    assert first == other_run and calls[2].endswith("tiny.test")
    assert read_labeled(first["train"]).names == {"1": "good", "2": "bad"}  # (read together: one write's set)
    assert len(read_labeled(first["test"])) > 0


def _refuse_delete_and_list(proxy):
    """Act as a role that may put and get objects, but neither delete nor list them (S3 refuses a missing key too)."""
    proxy.fail("HEAD", r"^/[^/]+/?$", "403")  # (HeadBucket: s3:ListBucket)
    for method, action in (("DELETE", "403"), ("HEAD", "403-if-missing"), ("GET", "403-if-missing")):
        proxy.fail(method, r".", action)


def test_a_prepare_run_without_delete_permission_that_finds_another_file_created_meanwhile_says_what_it_left(
        archive, server, tmp_path, s3_bucket, proxy, monkeypatch):
    """The same race, but the file created meanwhile is someone else's, of other bytes: this run's names file and
    train split stay beside it (without s3:DeleteObject they cannot be taken back). The line says both: that file
    differs (it is kept), and which files this run had written."""
    spec, _ = archive
    out, cache = f"{s3_bucket}/datasets/tiny", str(tmp_path / "cache")
    _refuse_delete_and_list(proxy)
    real, calls = storage.pairs._upload_new, []

    def upload_new(*args, **kwargs):
        calls.append(args[3])
        if len(calls) == 3:  # A, about to create its test split: someone puts a file of their own there
            storage.s3_client().put_object(Bucket=args[2], Key=args[3], Body=b"__label__1 theirs\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(storage.pairs, "_upload_new", upload_new)
    with pytest.raises(FastTextError, match=r"tiny\.test already exists; it differs.*; \S+tiny\.classes\.txt, "
                                            r"\S+tiny\.train had already been written, so .* no longer belong together"):
        prepare(spec, out, cache, base_url=server[0], progress=False)
    assert storage.read_bytes(storage.join(out, "tiny.test")) == b"__label__1 theirs\n"


def _prepare_as(caller, spec, out, cache, server, monkeypatch, capsys):
    """The one line prepare fails with, called as ``caller`` gives it: the Python API (notebook 01, which has no flags:
    its parameter is overwrite) or the command line (its flags); the API's with no flag in it."""
    from fasttext_lib import cli

    if caller == "cli":
        monkeypatch.setitem(DATASETS, NAME, spec)
        capsys.readouterr()
        assert cli.main(["prepare", "--dataset", NAME, "--output", out, "--cache-dir", cache,
                         "--base-url", server[0]]) == 2
        said = capsys.readouterr().err.splitlines()
        assert len(said) == 1 and said[0].startswith("error: "), said
        return said[0][len("error: "):]
    with pytest.raises(FastTextError) as exc:
        prepare(spec, out, cache, base_url=server[0], progress=False)
    said = str(exc.value)
    assert "--" not in said and "\n" not in said, said
    return said


@pytest.mark.parametrize("caller", ["api", "cli"])
def test_prepare_to_a_store_that_cannot_write_conditionally_nor_see_a_missing_file_says_what_to_do_as_its_caller(
        archive, server, tmp_path, s3_bucket, proxy, monkeypatch, capsys, caller):
    """A store without conditional writes (a create-only PUT is 501) is asked with a HEAD first; one that refuses it
    (403: no s3:ListBucket) cannot say whether the file is there. The line said to pass --overwrite to the Python API
    too, and so in notebook 01, which has no flags: there it says overwrite=True."""
    spec, _ = archive
    out, cache = f"{s3_bucket}/datasets/tiny", str(tmp_path / "cache")
    proxy.fail("PUT", r"/datasets/tiny/tiny\.", "501-if-none-match")
    proxy.fail("HEAD", r"/datasets/tiny/tiny\.", "403")
    said = _prepare_as(caller, spec, out, cache, server, monkeypatch, capsys)
    replace = "--overwrite" if caller == "cli" else "overwrite=True"
    assert said == (f"cannot tell whether {out}/tiny.classes.txt exists: S3 refused to say (403: without "
                    f"s3:ListBucket a missing object is refused too) and this S3 client or endpoint cannot write "
                    f"conditionally; pass {replace} if replacing it is fine, or grant s3:ListBucket"), said
    assert [p for m, p, _ in proxy.log if m == "PUT" and "/datasets/tiny/tiny." in p]  # (the create was tried)
    assert storage.s3_client().list_objects_v2(Bucket=s3_bucket[len("s3://"):]).get("KeyCount") == 0


@pytest.mark.parametrize("caller", ["api", "cli"])
def test_prepare_that_loses_its_create_race_twice_says_what_to_do_as_its_caller(
        archive, server, tmp_path, s3_bucket, proxy, monkeypatch, capsys, caller):
    """Each time this run creates its names file, another run has just created one there (S3 answers 412), and then
    taken it back (a run that failed): the second time the run gives up, "already exists; pass --overwrite to replace
    it", also to the Python API and so in notebook 01, which has no flags: there it says overwrite=True."""
    spec, _ = archive
    out, cache = f"{s3_bucket}/datasets/tiny", str(tmp_path / "cache")
    real, calls = storage.pairs._upload_new, []

    def upload_new(client, path, bucket, key, *args, **kwargs):
        calls.append(key)
        client.put_object(Bucket=bucket, Key=key, Body=b"theirs\n")  # the other run's create, just before ours
        try:
            return real(client, path, bucket, key, *args, **kwargs)
        finally:
            client.delete_object(Bucket=bucket, Key=key)  # ... and its take-back
    monkeypatch.setattr(storage.pairs, "_upload_new", upload_new)
    said = _prepare_as(caller, spec, out, cache, server, monkeypatch, capsys)
    replace = "--overwrite" if caller == "cli" else "overwrite=True"
    assert said == f"{out}/tiny.classes.txt already exists; pass {replace} to replace it", said
    assert calls == ["datasets/tiny/tiny.classes.txt"] * 2


def test_prepare_left_beside_a_failed_runs_file_says_to_call_it_again_with_overwrite_true(
        archive, server, tmp_path, s3_bucket, proxy, monkeypatch):
    """This run creates its names file and train split; another run (another limit) writes its set over them and fails
    at its copy onto the test split; this run creates its test split and finds a mixed set. The line said "run the
    command again with --overwrite (overwrite=True)" to the Python API too (notebook 01 has no command, no flags)."""
    spec, _ = archive
    out, cache = f"{s3_bucket}/datasets/tiny", str(tmp_path / "cache")

    def other_run():
        proxy.fail("PUT", r"/datasets/tiny/tiny\.test$", "500")  # (its copy onto the test split)
        with pytest.raises(FastTextError, match="no longer belong together"):
            prepare(spec, out, cache, base_url=server[0], progress=False, limit=1, overwrite=True)
        proxy.clear()
        return {}
    calls, _ = _another_run_before_create(monkeypatch, 3, other_run)
    with pytest.raises(FastTextError) as exc:
        prepare(spec, out, cache, base_url=server[0], progress=False)
    said = str(exc.value)
    assert said == (f"{out}/tiny.classes.txt, {out}/tiny.train were written over by another run after this one "
                    f"created them, so {out}/tiny.classes.txt, {out}/tiny.train, {out}/tiny.test are now a mixed "
                    f"set, of two writes (reading them together is refused); this run replaced nothing: call it again "
                    f"with overwrite=True to write them whole"), said
    assert calls[2].endswith("tiny.test")
    assert prepare(spec, out, cache, base_url=server[0], progress=False, overwrite=True)  # as it says
    assert len(read_labeled(f"{out}/tiny.train")) > 1


def test_a_prepare_run_that_fails_takes_back_no_file_replaced_after_it_looked(archive, server, tmp_path, s3_bucket,
                                                                               monkeypatch):
    """A run that fails after creating its names file takes it back where it is still its own (a HEAD: its set id),
    then deletes it. A file of other bytes put there between that HEAD and the DELETE (an edited names file) was
    deleted: the DELETE is now conditional on the ETag the HEAD saw (If-Match), and that file is kept."""
    spec, _ = archive
    out, cache = f"{s3_bucket}/datasets/tiny", str(tmp_path / "cache")
    edited = b"1=great\n2=awful\n3=meh\n"
    real_new, real_ours, calls = storage.pairs._upload_new, storage.pairs._still_ours, []

    def upload_new(*args, **kwargs):
        calls.append(args[3])
        if len(calls) == 2:  # A's train split: its upload fails
            raise FastTextError("connection lost")
        return real_new(*args, **kwargs)

    def still_ours(client, created, set_id):
        ours = real_ours(client, created, set_id)
        for bucket, key, *_ in ours:  # then, before A's DELETE, the user puts their own names file there
            storage.s3_client().put_object(Bucket=bucket, Key=key, Body=edited)
        return ours

    monkeypatch.setattr(storage.pairs, "_upload_new", upload_new)
    monkeypatch.setattr(storage.pairs, "_still_ours", still_ours)
    with pytest.raises(FastTextError, match="^connection lost$"):
        prepare(spec, out, cache, base_url=server[0], progress=False)
    assert calls[0].endswith("tiny.classes.txt")
    assert storage.read_bytes(storage.join(out, "tiny.classes.txt")) == edited


def _copy_refused(*args):
    """A role without s3:GetObject on the staging objects: S3 refuses their server-side copy."""
    raise FastTextError(f"access denied to s3://{args[3]}/{args[4]} (AccessDenied)")


@pytest.mark.parametrize("role", ["no-delete", "no-get"])
@pytest.mark.parametrize("a_run", ["overwrite", "rerun"])
def test_two_prepare_runs_uploading_in_place_at_once_leave_one_runs_set_whole(
        archive, server, tmp_path, s3_bucket, proxy, monkeypatch, role, a_run):
    """A role that may not delete the staging objects (or not copy them: no s3:GetObject on them) uploads each member
    to its key, one after another. Two runs at once interleaved: A's names file, then all of B (--overwrite), then
    A's splits. Both passed, and B's names file stayed beside A's splits: readers refused the set. The same for a
    rerun without --overwrite writing a set only partly there whole again while another run wrote it. The run that
    finds its set mixed after its uploads now uploads it again, as the copies do: the set ends whole."""
    spec, _ = archive
    out, cache = f"{s3_bucket}/datasets/tiny", str(tmp_path / "cache")
    reference = prepare(spec, f"{s3_bucket}/datasets/reference", cache, base_url=server[0], progress=False)
    if a_run == "rerun":  # a set only partly there (its splits gone): the rerun writes it whole again
        prepare(spec, out, cache, base_url=server[0], progress=False)
        bucket = storage.split_s3(out)[0]
        for name in ("tiny.train", "tiny.test"):
            storage.s3_client().delete_object(Bucket=bucket, Key=f"datasets/tiny/{name}")
    if role == "no-delete":
        _refuse_delete_and_list(proxy)
    else:
        monkeypatch.setattr(storage.pairs, "_copy", _copy_refused)
    real, in_place = storage.pairs.upload_file, []

    def upload_file(client, path, bucket, key, *args, **kwargs):
        if ".fasttext-staging-" not in key:
            in_place.append(key)
            if len(in_place) == 2:  # A, about to upload its train split: B runs whole meanwhile
                prepare(spec, out, cache, base_url=server[0], progress=False, overwrite=True,
                        limit=1 if a_run == "overwrite" else None)
        return real(client, path, bucket, key, *args, **kwargs)

    monkeypatch.setattr(storage.pairs, "upload_file", upload_file)
    first = prepare(spec, out, cache, base_url=server[0], progress=False, overwrite=a_run == "overwrite")
    assert in_place[0].endswith("tiny.classes.txt") and in_place[1].endswith("tiny.train")
    proxy.clear()
    assert read_labeled(first["train"]).names == {"1": "good", "2": "bad"}  # read together: of one write
    assert len(read_labeled(first["test"])) > 0
    assert {name: storage.read_bytes(uri) for name, uri in first.items()} == {
        name: storage.read_bytes(uri) for name, uri in reference.items()}  # A's set, whole


# Transient failures (a busy server, a lost connection, a stall) are retried within the run (download_retry), each
# retry resuming the .part; what cannot be the archive is not.

def _retry_lines(err):
    return [line for line in err.splitlines() if line.startswith("download: ")]


@pytest.mark.parametrize("status, said", [(503, "503 Service Unavailable"), (500, "500 Internal Server Error"),
                                          (408, "408 Request Timeout")])
def test_a_busy_server_is_retried_with_backoff_and_the_download_resumed_in_the_same_run(archive, server, tmp_path,
                                                                                       capsys, status, said):
    """A 503 ended the run in one error line (run again later): a Yelp download in notebook 01 over a flaky network
    stopped at the first busy answer. It is retried, each wait twice the one before, one line each; the .part is
    resumed each time."""
    spec, data = archive
    base_url, handler = server
    handler.busy = [(status, ""), (status, "")]
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    with open(download(spec, str(cache), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert handler.log == [(f"/mirror/{spec.filename}", "bytes=100-")] * 3
    host = base_url.split("/")[2]
    assert _retry_lines(capsys.readouterr().err) == [
        f"download: HTTP {said} from {host}; retrying in 0.001 s (attempt 2 of 5)",
        f"download: HTTP {said} from {host}; retrying in 0.002 s (attempt 3 of 5)"]


@pytest.mark.parametrize("retry_after, waited", [("2", 2), ("3600", 60)])
def test_a_retry_waits_what_retry_after_asks_up_to_a_minute(archive, server, tmp_path, capsys, monkeypatch,
                                                             retry_after, waited):
    """A 429's Retry-After (seconds) is the wait before the retry, in place of the backoff's; one asking for an hour
    is waited a minute (then asked again)."""
    from fasttext_lib import download_retry

    spec, data = archive
    base_url, handler = server
    monkeypatch.setattr(download_retry, "MAX_WAIT_S", 60)
    waits = []
    monkeypatch.setattr(download_retry, "_pause", waits.append)  # (not waited: the wait is what is checked)
    handler.busy = [(429, retry_after)]
    with open(download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert waits == [waited] and len(handler.log) == 2
    (line,) = _retry_lines(capsys.readouterr().err)
    assert line.startswith("download: HTTP 429 Too Many Requests from ") and line.endswith(
        f"; retrying in {waited} s (attempt 2 of 5)")


def test_a_retry_after_given_as_a_date_is_waited_until_then(archive, server, tmp_path, capsys, monkeypatch):
    """Retry-After may be an HTTP date (RFC 9110), as some servers and proxies send it. It was waited as no Retry-After
    at all: the backoff's first second, against a server that asked for half a minute. A date already past is the
    backoff's wait."""
    import email.utils
    import time

    from fasttext_lib import download_retry

    spec, data = archive
    base_url, handler = server
    monkeypatch.setattr(download_retry, "MAX_WAIT_S", 60)
    waits = []
    monkeypatch.setattr(download_retry, "_pause", waits.append)  # (not waited: the wait is what is checked)
    handler.busy = [(503, email.utils.formatdate(time.time() + 30, usegmt=True)),
                    (503, "Fri, 31 Dec 1999 23:59:59 GMT")]
    with open(download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert len(waits) == 2 and 28 <= waits[0] <= 31, waits
    assert waits[1] == download_retry.BACKOFF_S * 2  # (the second retry's backoff: the date has passed)
    assert len(_retry_lines(capsys.readouterr().err)) == 2


def test_a_connection_reset_mid_body_is_resumed_in_the_same_run(archive, server, tmp_path, capsys):
    spec, data = archive
    base_url, handler = server
    handler.reset_at = 200
    path = download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert hashlib.md5(open(path, "rb").read()).hexdigest() == spec.md5 and os.listdir(tmp_path / "cache") == [
        spec.filename]
    assert [rng for _, rng in handler.log] == [None, "bytes=200-"]
    (line,) = _retry_lines(capsys.readouterr().err)
    assert re.match(rf"download: connection lost after 200 of {spec.size} bytes \(ConnectionResetError\) from "
                    r"127\.0\.0\.1:\d+; retrying in 0\.001 s \(attempt 2 of 5\)$", line), line


def test_a_connection_lost_again_and_again_but_gaining_each_time_is_resumed_until_it_is_whole(archive, server, tmp_path,
                                                                                          capsys, monkeypatch):
    """The attempts were counted over the whole run: a connection reset every few hundred MB (a Yelp download over a
    flaky link) ended after 5 resets, however much each attempt had gained, and needed reruns. An attempt that
    gained at least download_retry.PROGRESS_BYTES starts the count (and the backoff) afresh."""
    from fasttext_lib import download_retry

    spec, data = archive
    base_url, handler = server
    monkeypatch.setattr(download_retry, "PROGRESS_BYTES", 40)
    handler.reset_every = 40
    path = download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert hashlib.md5(open(path, "rb").read()).hexdigest() == spec.md5
    starts = [0 if rng is None else int(rng[len("bytes="):-1]) for _, rng in handler.log]
    assert starts == list(range(0, len(data), 40)) and len(starts) > download_retry.ATTEMPTS
    lines = _retry_lines(capsys.readouterr().err)
    assert len(lines) == len(starts) - 1 and all(line.endswith("retrying in 0.001 s (attempt 2 of 5)") for line in lines)


def test_attempts_that_gain_too_little_are_counted_in_a_row(archive, server, tmp_path, capsys, monkeypatch):
    """A gain below PROGRESS_BYTES does not start the count afresh: a server that sends a few bytes and resets, again
    and again, still ends after the attempts, in one line, the .part kept."""
    from fasttext_lib import download_retry

    spec, data = archive
    base_url, handler = server
    monkeypatch.setattr(download_retry, "PROGRESS_BYTES", 1000)
    handler.reset_every = 10
    with pytest.raises(FastTextError, match=r"after 5 attempts: .*kept") as exc:
        download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert "\n" not in str(exc.value) and len(handler.log) == 5
    assert (tmp_path / "cache" / (spec.filename + ".part")).read_bytes() == data[:50]


def test_a_server_that_trickles_is_asked_again_and_the_download_finished_in_the_same_run(archive, server, tmp_path,
                                                                                        capsys, monkeypatch):
    """The stall watch's stop is retried too: a new connection is often a faster one (a congested route, a stuck
    node behind a CDN), as curl --retry counts its too-slow stop transient."""
    import fasttext_lib.download_fetch as dl

    spec, data = archive
    base_url, handler = server
    handler.slow, handler.slow_once = 1, True
    monkeypatch.setattr(dl, "_STALL_WINDOW_S", 0.5)
    monkeypatch.setattr(dl, "_STALL_MIN_BYTES", 1000)
    real_open = dl.open_from_byte

    def asked_again_with_a_real_window(url, offset, part):
        if handler.log:  # (the retry's answer, the rest at once but fewer bytes than the minimum: within 0.5 s only
            monkeypatch.setattr(dl, "_STALL_WINDOW_S", 120)  # on a machine not loaded)
        return real_open(url, offset, part)
    monkeypatch.setattr(dl, "open_from_byte", asked_again_with_a_real_window)
    with open(download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    kept = int(handler.log[1][1][len("bytes="):-1])
    assert 0 < kept < len(data) and len(handler.log) == 2
    (line,) = _retry_lines(capsys.readouterr().err)
    assert re.match(r"download: too slow \(\d+ new bytes in [\d.]+ s\) from 127\.0\.0\.1:\d+; retrying in ",
                    line), line


@pytest.mark.parametrize("where", ["nowhere/", "page"])
def test_an_answer_that_is_no_archive_is_not_retried(archive, server, odd_server, tmp_path, capsys, where):
    """A 404, or a page in place of the archive, says the same however often it is asked: one request, one line."""
    spec, _ = archive
    base_url, handler = server
    base_url = base_url + where if where == "nowhere/" else odd_server("page", b"<html>log in</html>")
    with pytest.raises(FastTextError, match=r"^cannot download \S+: (HTTP 404|the server answered with a text/html "
                                            r"page)") as exc:
        download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert "attempts" not in str(exc.value) and _retry_lines(capsys.readouterr().err) == []
    if where == "nowhere/":
        assert len(handler.log) == 1


def test_a_server_busy_every_time_is_one_error_line_after_all_attempts_with_the_partial_download_kept(
        archive, odd_server, tmp_path, monkeypatch, capsys):
    from fasttext_lib import cli, download_retry

    spec, data = archive
    monkeypatch.setitem(DATASETS, NAME, spec)
    monkeypatch.setenv(download_retry.ATTEMPTS_ENV, "3")
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    busy = odd_server("busy 503")
    assert cli.main(["prepare", "--dataset", NAME, "--output", str(tmp_path / "out"), "--cache-dir", str(cache),
                     "--base-url", busy]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(_retry_lines("\n".join(err))) == 2 and [line for line in err if line.startswith("error: ")] == [err[-1]]
    assert err[-1] == (f"error: cannot download {busy}{spec.filename} after 3 attempts: HTTP 503 Service Unavailable "
                       f"(the server is busy or down): run again later; the partial download {part} is kept and will "
                       f"be resumed")
    assert os.listdir(cache) == [part.name] and part.read_bytes() == data[:100]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["0", "-2", "five", "2.5"])
def test_an_attempt_count_that_is_no_positive_whole_number_is_one_error_line_before_any_request(
        archive, server, tmp_path, monkeypatch, value):
    from fasttext_lib import download_retry

    spec, _ = archive
    base_url, handler = server
    monkeypatch.setenv(download_retry.ATTEMPTS_ENV, value)
    with pytest.raises(FastTextError, match=rf"^FASTTEXT_DOWNLOAD_ATTEMPTS must be a whole number of attempts, 1 or "
                                            rf"more, got '{value}'$"):
        download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False)
    assert handler.log == []


def test_ctrl_c_while_a_retry_waits_stops_at_once_and_keeps_the_partial_download(archive, odd_server, tmp_path):
    """The wait before a retry (here the minute a Retry-After asks) is cut short by Ctrl-C: the stop's own line, the
    .part kept, as during the download itself."""
    spec, data = archive
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(STOPPED_DOWNLOAD)
    cache, part = _cache_with_a_partial_download(tmp_path, spec, data)
    busy = odd_server("busy 503", b"600")
    proc = subprocess.Popen([sys.executable, str(wrapper), str(spec.size), spec.md5, "prepare", "--dataset", NAME,
                             "--output", str(tmp_path / "out"), "--cache-dir", str(cache), "--base-url", busy],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(
                                __file__)))))
    try:
        first = proc.stderr.readline()  # (the retry's line: written just before its wait)
        assert first.startswith("download: HTTP 503 Service Unavailable from ") and "retrying in 60 s" in first, first
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)  # (the wait is 60 s: only a stop cut short ends in time)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == [f"error: interrupted (SIGINT); stopped and cleaned up; the partial "
                                        f"download {part} is kept: a rerun resumes it"]
    assert os.listdir(cache) == [part.name] and part.read_bytes() == data[:100]


@pytest.mark.parametrize("retry_after, waited", [("\u00b2", "backoff"), ("9" * 5000, "longest")])
def test_a_retry_after_that_int_cannot_read_is_waited_not_a_traceback(archive, server, tmp_path, monkeypatch,
                                                                       retry_after, waited):
    """A Retry-After that str.isdigit takes for a number but int() does not read was a ValueError traceback: a
    latin-1 superscript digit ('²', no number of seconds: the backoff's wait), more digits than int() converts (a
    wait of ages: the longest, as an hour is)."""
    from fasttext_lib import download_retry

    spec, data = archive
    base_url, handler = server
    waits = []
    monkeypatch.setattr(download_retry, "_pause", waits.append)
    handler.busy = [(503, retry_after)]
    with open(download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert waits == [download_retry.BACKOFF_S if waited == "backoff" else download_retry.MAX_WAIT_S]
    assert len(handler.log) == 2


def test_a_retry_after_of_0_does_not_cut_the_backoff_short(archive, server, tmp_path, monkeypatch, capsys):
    """A server busy every time that asks to be asked again at once (Retry-After: 0, a misconfigured proxy's) had
    every attempt made within milliseconds: the retries, there to outlast a busy moment, were spent before it could
    pass. A Retry-After lengthens the backoff's wait, never shortens it (as curl --retry waits)."""
    from fasttext_lib import download_retry

    spec, data = archive
    base_url, handler = server
    waits = []
    monkeypatch.setattr(download_retry, "_pause", waits.append)
    handler.busy = [(503, "0"), (503, "0"), (429, "1")]
    with open(download(spec, str(tmp_path / "cache"), base_url=base_url, progress=False), "rb") as f:
        assert f.read() == data
    assert waits == [download_retry.BACKOFF_S, 2 * download_retry.BACKOFF_S, download_retry.MAX_WAIT_S]
    assert _retry_lines(capsys.readouterr().err)[0].endswith(
        f"; retrying in {download_retry.BACKOFF_S:g} s (attempt 2 of 5)")
