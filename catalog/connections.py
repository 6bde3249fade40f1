"""HTTP connections with the guards uvicorn leaves out: requests arrive whole in time, responses
wait on the client's progress.

uvicorn's httptools protocol (what `hudi-shim serve` runs) times nothing out while a request's
headers or body arrive: a client that sends half a request holds a connection and a descriptor
for good. `guarded_protocol(request_timeout)` closes a connection whose request (headers and
body) has not all arrived `request_timeout` seconds after its first byte (after the connection
opened, for its first request), answering 408 if no response has started.

A response's write timeout is on progress: `send_while_progressing` waits for one `send` for as
long as the client keeps taking bytes, and gives up after `idle_timeout` seconds in which it took
none. The protocol puts into each request's scope how many bytes of the connection's responses
still wait to be delivered (`UNSENT_BYTES`: the transport's buffer and, on Linux, the socket's
send queue), and a way to drop the connection at once (`ABORT`), buffered bytes and all.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import struct
import termios
import time
from collections.abc import Awaitable, Callable
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger(__name__)

#: Scope extension: a callable giving the bytes of the connection not yet delivered to the client.
UNSENT_BYTES = "hudi_shim.unsent_bytes"
#: Scope extension: a callable closing the connection at once, dropping what it has buffered.
ABORT = "hudi_shim.abort"


class ClientTooSlowError(Exception):
    """The client took none of a response's bytes for the write timeout (or past a scan's deadline)."""


async def send_while_progressing(sending: Awaitable[None], unsent: Callable[[], int], idle_timeout: float,
                                 deadline: float | None = None) -> None:
    """Await `sending` while the client takes bytes: raises ClientTooSlowError once `unsent()`
    (the bytes not yet delivered) stayed the same for `idle_timeout` seconds, or at `deadline`
    (a `time.monotonic()`)."""
    task = asyncio.ensure_future(sending)
    poll = min(1.0, idle_timeout / 4)
    try:
        last, quiet_since = unsent(), time.monotonic()
        while True:
            await asyncio.wait({task}, timeout=poll)
            if task.done():
                return task.result()
            now = time.monotonic()
            pending = unsent()
            if pending != last:
                last, quiet_since = pending, now
            elif now - quiet_since >= idle_timeout:
                raise ClientTooSlowError(f"the client took no bytes for {idle_timeout:.3g} seconds")
            if deadline is not None and now >= deadline:
                raise ClientTooSlowError("the client had not taken the response by the scan's deadline")
    finally:
        if not task.done():
            task.cancel()


def guarded_protocol(request_timeout: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol (`uvicorn.Config(http=...)`) with a request timeout and the
    scope extensions `UNSENT_BYTES` and `ABORT`."""
    return type("GuardedHttpProtocol", (_GuardedHttpProtocol,), {"request_timeout": request_timeout})


class _GuardedHttpProtocol(HttpToolsProtocol):
    request_timeout = 30.0
    _request_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        extensions: dict[str, Any] = self.scope.setdefault("extensions", {})
        extensions[UNSENT_BYTES] = self._unsent_bytes
        extensions[ABORT] = self.transport.abort
        if self._request_timer is None:
            self._arm()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()

    def _arm(self) -> None:
        self._request_timer = self.loop.call_later(self.request_timeout, self._request_too_slow)

    def _disarm(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None

    def _request_too_slow(self) -> None:
        self._request_timer = None
        if self.transport.is_closing():
            return
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
        log.warning("%s sent no whole request within %.3g seconds: connection closed", client, self.request_timeout)
        if self.cycle is None or self.cycle.response_complete or not self.cycle.response_started:
            if self.cycle is not None and not self.cycle.response_complete:
                self.cycle.disconnected = True  # its handler, waiting for the body, is told the client left
            message = f"the request did not arrive whole within {self.request_timeout:.3g} seconds"
            body = json.dumps({"error": {"type": "RequestTimeoutError", "message": message, "code": 408}}).encode()
            self.transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
                                 b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body))
        self.transport.close()
        if self.cycle is not None:
            self.cycle.message_event.set()

    def _unsent_bytes(self) -> int:
        return self.transport.get_write_buffer_size() + _socket_unsent(self.transport)


_OUTQ = struct.Struct("i")


def _socket_unsent(transport: asyncio.Transport) -> int:
    """Bytes in the socket's send queue not yet acknowledged by the client (Linux; 0 elsewhere)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return 0
    try:
        raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * _OUTQ.size)
    except (OSError, ValueError):
        return 0
    return int(_OUTQ.unpack(raw)[0])
