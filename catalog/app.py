"""The HTTP API: `create_app(settings)` builds the FastAPI application.

    uvicorn.run(create_app(Settings(warehouse="/data/warehouse")), host="127.0.0.1", port=8080)

The catalog (registry, open tables, view cache) is created by the application's lifespan and
lives on `app.state.catalog`.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

try:
    from fastapi import FastAPI, HTTPException
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the hudi-shim HTTP API needs FastAPI: pip install 'hudi-shim[serve]'") from exc

import shim
from catalog.errors import error_response, install_error_handlers
from catalog.iceberg.hadoop import HadoopCatalogFolder
from catalog.iceberg.publish import IcebergPublisher
from catalog.iceberg.routes import publish_router
from catalog.iceberg.routes import router as iceberg_router
from catalog.routes import router
from catalog.service import Catalog
from catalog.settings import Settings
from catalog.stream import StreamAborted

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

DESCRIPTION = """Registered Hudi tables, their schemas with column ids, per-file name mappings and
scans as Arrow IPC streams, all read by column id across schema evolution. Tables are named by
their catalog name, never by path. Under `/iceberg`, a read-only Iceberg REST catalog publishes
every table (`<table>`: snapshot, `<table>_ro`: read-optimized) for Trino, Presto, DuckDB and
other Iceberg readers."""


def create_app(settings: Settings) -> FastAPI:
    """The FastAPI application serving `settings` (nothing is opened until it starts)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        catalog = Catalog(settings)
        app.state.catalog = catalog
        folder = settings.iceberg_location()
        temporary = folder is None
        if folder is None:
            folder = tempfile.mkdtemp(prefix="hudi-shim-iceberg-")
        app.state.iceberg = IcebergPublisher(catalog, folder, keep_seconds=settings.iceberg_keep_seconds,
                                             history=settings.iceberg_history)
        hadoop_folder = settings.hadoop_catalog_location()
        app.state.hadoop = None if hadoop_folder is None else HadoopCatalogFolder(app.state.iceberg, hadoop_folder)
        stop = threading.Event()
        if app.state.hadoop is not None:
            threading.Thread(target=_keep_refreshed, args=(app.state.hadoop, settings.hadoop_catalog_seconds, stop),
                             name="hadoop-catalog", daemon=True).start()
        try:
            yield
        finally:
            stop.set()
            catalog.close()
            if temporary:
                shutil.rmtree(folder, ignore_errors=True)

    app = FastAPI(title="hudi-shim", version=shim.__version__, description=DESCRIPTION, lifespan=lifespan)
    app.add_middleware(_EndAbortedStreams)
    app.add_middleware(_LimitRequestBody, max_bytes=settings.max_request_bytes)
    install_error_handlers(app)
    app.include_router(router)
    app.include_router(iceberg_router)
    app.include_router(publish_router)

    @app.get("/health", summary="Liveness", tags=["health"])
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


def _keep_refreshed(folder: HadoopCatalogFolder, seconds: float, stop: threading.Event) -> None:
    """Bring the Hadoop catalog folder up to date every `seconds` until `stop` is set."""
    while not stop.is_set():
        try:
            folder.refresh()
        except Exception:  # a bad pass must not end the refreshing; the next one tries again
            log.exception("refreshing the Hadoop catalog folder %s failed", folder.folder)
        stop.wait(seconds)


class _EndAbortedStreams:
    """A scan that fails mid-stream has sent its error batch: end the response there, cut short."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except StreamAborted as exc:
            log.warning("scan of %s ended early: %s", scope.get("path"), exc.error)
        except BaseExceptionGroup as group:
            aborted, rest = group.split(StreamAborted)
            if rest is not None:
                raise
            log.warning("scan of %s ended early: %s", scope.get("path"), aborted)


class _LimitRequestBody:
    """Refuse request bodies over `max_bytes` (413), announced or streamed."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope.get("headers", ()):
            if key == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._refuse(send)
                return
        seen = 0

        async def limited() -> MutableMapping[str, Any]:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise HTTPException(413, f"the request body is larger than {self.max_bytes} bytes")
            return message

        await self.app(scope, limited, send)

    async def _refuse(self, send: Send) -> None:
        response = error_response(413, {"type": "HTTPError",
                                        "message": f"the request body is larger than {self.max_bytes} bytes"})
        await send({"type": "http.response.start", "status": 413, "headers": response.raw_headers})
        await send({"type": "http.response.body", "body": response.body})
