"""The scan's streaming response: it gives its scan slot back however the response ends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

SCAN_DEADLINE = "hudi_shim.scan_deadline"
"""Scope key: the `time.monotonic()` by which a scan's response must be sent (bounds each send)."""


class ScanResponse(StreamingResponse):
    """A stream of chunks that, when it ends (sent, failed, or the client gone), closes its source
    at once (its producer thread stops, the scan's memory is freed) and calls `release`."""

    def __init__(self, chunks: AsyncIterator[bytes | memoryview], release: Callable[[], None], *,
                 media_type: str) -> None:
        super().__init__(chunks, media_type=media_type)
        self._chunks = chunks
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            try:
                await self._chunks.aclose()  # type: ignore[attr-defined]
            finally:
                self._release()
