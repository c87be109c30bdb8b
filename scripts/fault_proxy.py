"""A loopback HTTP proxy that injects faults in front of the local S3 server (tests only).

``with FaultProxy(upstream) as proxy:`` listens on 127.0.0.1 and forwards every request to
``upstream`` (moto's server), unless a rule matches it::

    proxy.fail("PUT", r"/model-", action="500")        # answer 500 InternalError, forward nothing
    proxy.fail("GET", r"/vocab-", action="403")        # refuse (AccessDenied)
    proxy.fail("PUT", r".", action="503")              # throttle (SlowDown), as S3 does under load
    proxy.fail("HEAD", r".", action="expired")         # 400 ExpiredToken (a HEAD's answer has no body: a bare 400)
    proxy.fail("PUT", r"/config\\.json", action="reset")  # read half the body, then reset the connection
    proxy.fail("PUT", r"/config\\.json", action="lost")   # forward, then answer 500 (a lost response)
    proxy.fail("GET", r"/train", action="cut")          # forward, send half the answer's body, then reset
    proxy.fail("GET", r"/train", action="close")        # the same, ended by an orderly close instead of a reset
    proxy.fail("GET", r"/train", action=replace, nth=2) # call replace() (e.g. a PUT to the server), then forward
    proxy.fail("PUT", r".", nth=3)                      # only the 3rd matching request (1-based)
    proxy.fail("GET", r".", action="403-if-missing")    # forward; a 404 answer becomes 403 AccessDenied
    proxy.fail("PUT", r"/model-", action="stall")      # read the request, hold it until proxy.release(), then forward
    proxy.fail("PUT", r"/note", action="400-if-match") # a PUT with If-Match: 400 InvalidArgument; others forwarded
    proxy.fail("PUT", r".", action="403-if-match")     # a PUT with If-Match: 403 AccessDenied; others forwarded
    proxy.fail("PUT", r".", action="501-if-match")     # a PUT with If-Match: 501 NotImplemented; others forwarded
    proxy.fail("PUT", r".", action="501-if-none-match")  # a PUT with If-None-Match: 501 NotImplemented; the others
                                                        # forwarded
    proxy.fail("GET", r".", action="405-versioning")   # GetBucketVersioning: 405 (or 400-versioning); others forwarded

``stall`` is a request S3 received whole but answers late (a slow or congested S3): a client that
gives up meanwhile (a signal, a read timeout) cannot know whether it will be applied; ``proxy.stalled``
is set once one is held, and ``proxy.release()`` lets every held request through (also at exit).

``400-if-match`` is an S3-compatible store that takes If-None-Match but answers If-Match, which it does not
support, with 400 (S3 takes both; a store may also ignore a header it does not know, or answer 501).
``501-if-match`` is a store that answers a condition it does not support with 501 NotImplemented;
``501-if-none-match`` one without conditional writes at all (a create-only PUT is 501; a plain one is stored).
``403-if-match`` is S3 answering a caller without s3:GetObject: a PUT with If-Match needs it too (the ETag it
compares is read), a plain or If-None-Match PUT does not (moto asks for s3:PutObject alone).

``403-if-missing`` is how S3 answers a caller without s3:ListBucket: a missing key is refused, not
reported missing (moto answers 404 whatever the policy).

``proxy.log`` lists ``(method, path, query)`` of every request seen, ``proxy.headers`` the request headers of each
(a dict, one per entry of ``proxy.log``: a conditional request's If-Match); ``proxy.clear()`` drops the rules.
Real sockets and real HTTP, so boto3 exercises its genuine retry and error paths.
"""
import http.client
import re
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

_ERRORS = {"500": (500, "InternalError", "injected failure"), "403": (403, "AccessDenied", "injected refusal"),
           "503": (503, "SlowDown", "Please reduce your request rate."),
           "expired": (400, "ExpiredToken", "The provided token has expired."),
           "unknown-key": (403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."),
           "400-if-match": (400, "InvalidArgument", "Unsupported header 'If-Match' received for this API call."),
           "403-if-match": (403, "AccessDenied", "injected refusal of a conditional write (no s3:GetObject)"),
           "501-if-match": (501, "NotImplemented", "A header you provided implies functionality that is not implemented"),
           "501-if-none-match": (501, "NotImplemented",
                                 "A header you provided implies functionality that is not implemented"),
           "409": (409, "ConditionalRequestConflict", "A conflicting conditional operation is currently in progress "
                                                      "against this resource. Please try again."),
           "400-versioning": (400, "InvalidRequest", "injected: this store has no versioning API"),
           "405-versioning": (405, "MethodNotAllowed", "injected: this store has no versioning API")}


class _Rule:
    def __init__(self, method, pattern, action, nth):
        self.method, self.pattern, self.action, self.nth = method, re.compile(pattern), action, nth
        self.seen = 0

    def matches(self, method, path):
        if method != self.method or not self.pattern.search(path):
            return False
        self.seen += 1
        return self.nth is None or self.seen == self.nth


class FaultProxy:
    def __init__(self, upstream):
        parts = urlsplit(upstream)
        self.upstream, self.upstream_url = (parts.hostname, parts.port), upstream
        self.rules, self.log, self.headers, self.lock = [], [], [], threading.Lock()
        self.stalled, self.released = threading.Event(), threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _body(self):
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    data = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0], 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return data
                        data += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _handle(self):
                path = unquote(urlsplit(self.path).path)
                with proxy.lock:
                    proxy.log.append((self.command, path, urlsplit(self.path).query))
                    proxy.headers.append(dict(self.headers.items()))
                    rule = next((r for r in proxy.rules if r.matches(self.command, path)), None)
                action = rule.action if rule else None
                if action == "reset":
                    length = int(self.headers.get("Content-Length") or 0)
                    self.rfile.read(length // 2)
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                body = self._body()
                if callable(action):  # something done upstream first (an object replaced), then forwarded
                    action()
                    action = None
                if action in ("400-if-match", "403-if-match", "501-if-match") and self.headers.get("If-Match") is None:
                    action = None
                if action == "501-if-none-match" and self.headers.get("If-None-Match") is None:
                    action = None
                if action in ("400-versioning", "405-versioning") and "versioning" not in urlsplit(self.path).query:
                    action = None
                if action in _ERRORS:
                    return self._error(*_ERRORS[action])
                if action in ("stall", "stall-lost"):
                    proxy.stalled.set()
                    proxy.released.wait()
                status, headers, payload = self._forward(body)
                if action in ("lost", "stall-lost"):
                    return self._error(*_ERRORS["500"])
                if action in ("cut", "close") and self.command != "HEAD":
                    self.send_response(status)
                    for k, v in headers:
                        if k.lower() not in ("transfer-encoding", "connection", "date", "server"):
                            self.send_header(k, v)  # the full Content-Length (and Content-Range) upstream gave
                    self.end_headers()
                    self.wfile.write(payload[:len(payload) // 2])
                    self.wfile.flush()
                    if action == "cut":  # a reset (RST); "close": an orderly end (FIN), the body short of its length
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    else:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    self.connection.close()
                    self.close_connection = True
                    return
                if action == "403-if-missing" and status == 404:
                    return self._error(*_ERRORS["403"])
                self.send_response(status)
                for k, v in headers:
                    if k.lower() not in ("transfer-encoding", "content-length", "connection", "date", "server"):
                        self.send_header(k, v)
                if self.command != "HEAD":
                    self.send_header("Content-Length", str(len(payload)))
                else:
                    self.send_header("Content-Length", dict((k.lower(), v) for k, v in headers).get("content-length", "0"))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            def _forward(self, body):
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in ("transfer-encoding", "content-length")}
                    headers["Content-Length"] = str(len(body))
                    conn.request(self.command, self.path, body=body, headers=headers)
                    resp = conn.getresponse()
                    return resp.status, resp.getheaders(), resp.read()
                finally:
                    conn.close()

            def _error(self, status, code, message):
                payload = (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
                           f"<Message>{message}</Message></Error>").encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(payload) if self.command != "HEAD" else 0))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            def _handle_quietly(self):
                try:
                    self._handle()
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a stalled answer)
                    self.close_connection = True

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle_quietly

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def fail(self, method, pattern, action="500", nth=None):
        with self.lock:
            self.rules.append(_Rule(method, pattern, action, nth))

    def release(self):
        self.released.set()

    def clear(self):
        with self.lock:
            self.rules, self.log, self.headers = [], [], []

    def __enter__(self):
        # (its loop looks for shutdown() every poll_interval: the default 0.5 s was waited out at each exit, ~0.4 s
        # of every test behind a proxy)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.release()
        self.server.shutdown()
        self.server.server_close()
