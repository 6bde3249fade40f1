"""A tap in front of an S3-compatible server, on 127.0.0.1: it forwards every request unchanged,
counts them (GET, ranged GET, HEAD, LIST, PUT, DELETE and bytes sent back) and can answer some with
an error instead (throttling: `503 SlowDown`), for benches and fault tests.

    tap = S3Tap(server.endpoint)
    tap.start()                       # clients use tap.endpoint instead of server.endpoint
    tap.counts.reset(); ...; print(tap.counts.snapshot())
    tap.fail_next(3, status=503, code="SlowDown")
    tap.stop()

Requests are signed for the Host the client connected to (the tap's); the server behind checks
the signature against that Host header, which the tap passes on as it is.
"""

from __future__ import annotations

import http.client
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

LOOPBACK = "127.0.0.1"
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
               "transfer-encoding", "upgrade"}


@dataclass
class RequestCounts:
    """Requests seen by kind, and the bytes of the responses' bodies."""

    by_kind: Counter[str] = field(default_factory=Counter)
    response_bytes: int = 0
    #: (kind, path without the query) of every request since the last reset.
    requests: list[tuple[str, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, kind: str, body_bytes: int, path: str = "") -> None:
        with self._lock:
            self.by_kind[kind] += 1
            self.response_bytes += body_bytes
            self.requests.append((kind, unquote(urlparse(path).path)))

    def reset(self) -> None:
        with self._lock:
            self.by_kind.clear()
            self.response_bytes = 0
            self.requests.clear()

    def paths(self, *kinds: str) -> list[str]:
        """The paths of the requests of those kinds (all: none given), in order."""
        with self._lock:
            return [path for kind, path in self.requests if not kinds or kind in kinds]

    def snapshot(self) -> dict[str, int]:
        """{'GET': .., 'GET_RANGE': .., 'HEAD': .., 'LIST': .., 'PUT': .., 'DELETE': .., 'bytes': ..}"""
        with self._lock:
            return {**self.by_kind, "requests": sum(self.by_kind.values()), "bytes": self.response_bytes}


def request_kind(method: str, path: str, headers: Mapping[str, str]) -> str:
    """LIST for a bucket listing, GET_RANGE for a ranged read, else the method."""
    query = parse_qs(urlparse(path).query, keep_blank_values=True)
    if method == "GET" and ("list-type" in query or "prefix" in query or "delimiter" in query):
        return "LIST"
    if method == "GET" and headers.get("Range"):
        return "GET_RANGE"
    return method


class S3Tap:
    """The tap (see the module's docstring)."""

    def __init__(self, upstream: str) -> None:
        parsed = urlparse(upstream)
        self.upstream_host, self.upstream_port = parsed.hostname or LOOPBACK, parsed.port or 80
        self.counts = RequestCounts()
        self._faults: list[tuple[Callable[[str, str], bool], int, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((LOOPBACK, 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="s3-tap", daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self._server.server_address[1]}"

    def start(self) -> S3Tap:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def fail_next(self, count: int, *, status: int = 503, code: str = "SlowDown",
                  when: Callable[[str, str], bool] = lambda method, path: True) -> None:
        """Answer the next `count` requests for which `when(method, path)` holds with `status`
        and an S3 error body of `code`."""
        with self._lock:
            self._faults.extend([(when, status, code)] * count)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def _take_fault(self, method: str, path: str) -> tuple[int, str] | None:
        with self._lock:
            for i, (when, status, code) in enumerate(self._faults):
                if when(method, path):
                    del self._faults[i]
                    return status, code
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        tap = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                fault = tap._take_fault(self.command, self.path)
                if fault is not None:
                    status, code = fault
                    payload = (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code>"
                               f"<Message>injected by the test tap</Message></Error>").encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(payload)
                    tap.counts.add("FAULT", 0)
                    return
                connection = http.client.HTTPConnection(tap.upstream_host, tap.upstream_port, timeout=120)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                    connection.request(self.command, self.path, body=body, headers=headers)
                    response = connection.getresponse()
                    data = response.read()
                finally:
                    connection.close()
                tap.counts.add(request_kind(self.command, self.path, dict(self.headers.items())), len(data), self.path)
                self.send_response(response.status, response.reason)
                for key, value in response.getheaders():  # HEAD: the object's length, as it came
                    if key.lower() not in _HOP_BY_HOP and (key.lower() != "content-length" or self.command == "HEAD"):
                        self.send_header(key, value)
                if self.command != "HEAD":
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        return Handler
