"""Transient download failures retried within the run: a busy server (408, 429, 500, 502, 503, 504), a connection
refused, reset, timed out or cut short, a 206 with no Content-Range, a server too slow (download_fetch's stall watch).

Each ended the run in one error line ("run again to resume"): a Yelp download of hundreds of MB over a flaky network
(notebook 01, ``prepare``) needed a rerun for every hiccup, where pip or ``curl --retry`` try again by themselves.
Now :func:`retried` asks again up to :func:`attempts_allowed` times in all, each retry resuming the ``.part`` (the
resume a rerun does), after a wait of :data:`BACKOFF_S` doubled each time (1, 2, 4, 8 s), or what the server's
``Retry-After`` asks where that is longer, at most :data:`MAX_WAIT_S`; each retry is one line on stderr. The last
failure is the one error line, saying how many attempts were made. What cannot be the archive (a 404, a page, a range from elsewhere, a
checksum that fails) is no :class:`TransientError`: it fails at once, as asking again would answer the same.
"""
import os
import sys
import time
import urllib.parse

from .errors import FastTextError

ATTEMPTS = 5  # requests in all for one download, the first included
ATTEMPTS_ENV = "FASTTEXT_DOWNLOAD_ATTEMPTS"  # another count (1: no retry)
BACKOFF_S = 1.0  # the wait before the first retry, doubled before each next one
PROGRESS_BYTES = 1 << 20  # an attempt that gained this much of the archive starts the count of attempts afresh
MAX_WAIT_S = 60  # the longest wait, whatever a Retry-After asks (a server asking for an hour is asked again sooner)


class TransientError(FastTextError):
    """A failure that asking again may not meet: ``cannot download <url>: <what>``. ``reason``: its few words for the
    retry's line; ``retry_after``: the seconds the server asked to wait (None: it did not say)."""

    def __init__(self, url, what, reason, retry_after=None):
        super().__init__(f"cannot download {url}: {what}")
        self.url, self.what, self.reason, self.retry_after = url, what, reason, retry_after

    def after(self, attempts):
        """The error line once ``attempts`` attempts all failed, this one last."""
        if attempts == 1:
            return self
        return FastTextError(f"cannot download {self.url} after {attempts} attempts: {self.what}")


def attempts_allowed():
    """How many attempts a download makes: :data:`ATTEMPTS`, or :data:`ATTEMPTS_ENV`'s whole number (1 or more)."""
    text = os.environ.get(ATTEMPTS_ENV, "").strip()
    if not text:
        return ATTEMPTS
    if not (text.isdigit() and int(text) >= 1):
        raise FastTextError(f"{ATTEMPTS_ENV} must be a whole number of attempts, 1 or more, got {text!r}")
    return int(text)


def retried(fetch_once, url, attempts, have=lambda: 0):
    """Call ``fetch_once`` (which continues the .part) until it returns: a :class:`TransientError` is waited out
    and tried again, up to ``attempts`` attempts in a row that each gained less than :data:`PROGRESS_BYTES` (``have``:
    the bytes the .part holds); any other error ends it at once. (Counted over the whole run, a connection reset
    every few hundred MB ended a Yelp download after 5 resets, whatever each had gained; a server that resets after
    a few bytes each time is still stopped.)"""
    attempt = 1
    while True:
        before = have()
        try:
            return fetch_once()
        except TransientError as exc:
            if have() - before >= PROGRESS_BYTES:
                attempt = 1
            if attempt == attempts:
                raise exc.after(attempt) from None
            failure = exc
        # (waited outside the handler: a Ctrl-C here is the stop alone, with no failure chained to it)
        wait = _wait_before(attempt, failure.retry_after)
        print(f"download: {failure.reason} from {urllib.parse.urlsplit(url).netloc}; retrying in {wait:g} s "
              f"(attempt {attempt + 1} of {attempts})", file=sys.stderr, flush=True)
        _pause(wait)
        attempt += 1


def _wait_before(attempt, retry_after):
    """Seconds to wait before the attempt after ``attempt`` failed: the backoff's, or longer where the server asks.
    (A Retry-After that shortened it, 0 from a busy proxy, had every attempt made within milliseconds: spent before a
    busy moment could pass. curl --retry too lets a Retry-After lengthen its wait only.)"""
    wait = max(BACKOFF_S * 2 ** (attempt - 1), retry_after or 0)
    return min(wait, MAX_WAIT_S)


def _pause(seconds):
    time.sleep(seconds)  # (a Ctrl-C or SIGTERM ends it at once: KeyboardInterrupt, download's stop line)
