"""The HTTP API: `create_app(settings)` builds the FastAPI application.

    uvicorn.run(create_app(Settings(warehouse="/data/warehouse")), host="127.0.0.1", port=8080)

The catalog (registry, open tables, view cache) is created by the application's lifespan and
lives on `app.state.catalog`.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

try:
    from fastapi import FastAPI, HTTPException, Request
    from fastapi.responses import JSONResponse
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the hudi-shim HTTP API needs FastAPI: pip install 'hudi-shim[serve]'") from exc

import shim
from catalog.admission import ScanSlots
from catalog.auth.oauth import Authenticator
from catalog.auth.routes import router as oauth_router
from catalog.connections import ABORT, UNSENT_BYTES, ClientTooSlowError, send_while_progressing
from catalog.errors import error_response, install_error_handlers, redact_paths, server_fault_response
from catalog.hive.sync import HiveMetastoreSync
from catalog.iceberg.credentials import CredentialVendor
from catalog.iceberg.hadoop import HadoopCatalogFolder
from catalog.iceberg.publish import IcebergPublisher
from catalog.iceberg.routes import publish_router
from catalog.iceberg.routes import router as iceberg_router
from catalog.publication import Publication
from catalog.responses import SCAN_DEADLINE
from catalog.routes import router
from catalog.service import ICEBERG_DIR, Catalog
from catalog.settings import Settings
from catalog.stream import StreamAborted
from catalog.ui import mount as mount_ui
from shim.errors import HudiShimError

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
        app.state.auth = Authenticator.from_settings(settings)
        app.state.scan_slots = ScanSlots(settings.max_scans, settings.max_waiting_scans, settings.scan_wait_seconds)
        folder = settings.iceberg_location()
        temporary = folder is None
        if folder is None:
            folder = tempfile.mkdtemp(prefix="hudi-shim-iceberg-")
            catalog.private_folders.append((folder, ICEBERG_DIR))
        app.state.vendor = CredentialVendor(settings.vend_role_arn, duration_seconds=settings.vend_seconds,
                                            sts_endpoint=settings.sts_endpoint) if settings.vend_credentials else None
        app.state.iceberg = IcebergPublisher(catalog, folder, keep_seconds=settings.iceberg_keep_seconds,
                                             history=settings.iceberg_history,
                                             statistics_max_columns=settings.iceberg_statistics_max_columns,
                                             slice_merging=settings.iceberg_slices,
                                             deletes=settings.iceberg_deletes)
        hadoop_folder = settings.hadoop_catalog_location()
        app.state.hadoop = None if hadoop_folder is None else HadoopCatalogFolder(app.state.iceberg, hadoop_folder)
        hive = None if settings.hive_metastore is None else HiveMetastoreSync(
            app.state.iceberg, settings.hive_metastore, database=settings.hive_database,
            sync_database=settings.hive_sync_database)
        app.state.publication = Publication(app.state.iceberg, app.state.hadoop, hive)
        stop = threading.Event()
        if app.state.hadoop is not None:
            threading.Thread(target=_keep_refreshed, args=(app.state.hadoop.refresh, "the Hadoop catalog folder",
                                                           settings.hadoop_catalog_seconds, stop),
                             name="hadoop-catalog", daemon=True).start()
        if hive is not None:
            threading.Thread(target=_keep_refreshed, args=(hive.refresh, f"the Hive Metastore {hive.uri}",
                                                           settings.hive_metastore_seconds, stop),
                             name="hive-metastore", daemon=True).start()
        try:
            yield
        finally:
            stop.set()
            if hive is not None:
                hive.close()
            catalog.close()
            if temporary:
                shutil.rmtree(folder, ignore_errors=True)

    app = FastAPI(title="hudi-shim", version=shim.__version__, description=DESCRIPTION, lifespan=lifespan)
    app.add_middleware(_AnswerServerFaults)
    app.add_middleware(_EndResponsesCutShort, write_timeout=settings.write_timeout_seconds)
    app.add_middleware(_LimitRequestBody, max_bytes=settings.max_request_bytes)
    _quiet_on_purpose(logging.getLogger("uvicorn.error"))
    install_error_handlers(app)
    app.include_router(router)
    app.include_router(oauth_router)
    app.include_router(iceberg_router)
    app.include_router(publish_router)
    mount_ui(app)  # the browser UI at /ui (same token)

    @app.get("/health", summary="Liveness, and whether the warehouse can be served", tags=["health"],
             responses={503: {"description": "the warehouse folder or the catalog database is gone "
                                             "(`status`: unavailable, `reason`)"}})
    def health(request: Request) -> JSONResponse:
        catalog: Catalog = request.app.state.catalog
        reason = catalog.health()
        if reason is None:
            return JSONResponse({"status": "ok"})
        return JSONResponse({"status": "unavailable", "reason": redact_paths(catalog, reason)}, status_code=503)

    return app


def _keep_refreshed(refresh: Callable[[], object], what: str, seconds: float, stop: threading.Event) -> None:
    """Call `refresh` (bringing `what` up to date) now and every `seconds` until `stop` is set."""
    while not stop.is_set():
        try:
            refresh()
        except HudiShimError as exc:  # the warehouse or the metastore gone, say: the next pass tries again
            log.warning("refreshing %s failed: %s", what, exc)
        except Exception:  # a bad pass must not end the refreshing; the next one tries again
            log.exception("refreshing %s failed", what)
        stop.wait(seconds)


#: Set in the task of a request whose response this app cut short on purpose.
_CUT_SHORT: ContextVar[bool] = ContextVar("hudi_shim_cut_short", default=False)
_NOT_COMPLETED = "ASGI callable returned without completing response"
_SEND_GRACE_SECONDS = 1.0


class _EndResponsesCutShort:
    """Every send waits for the client while it takes bytes, and at most `write_timeout` seconds
    in which it takes none (on servers that do not tell the client's progress, `write_timeout`
    for the whole send); a scan's, at most until its deadline and a second more, for its error
    batch. A response that fails once started (a scan's error batch sent, a limit, a client too
    slow) ends there: the connection closes without the chunked body's last chunk, so every HTTP
    client sees it incomplete; that of a client too slow is dropped at once, with what it
    buffered. One line is logged, not the server's error for an unfinished response."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], write_timeout: float) -> None:
        self.app = app
        self.write_timeout = write_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False
        extensions = scope.get("extensions") or {}
        unsent = extensions.get(UNSENT_BYTES)

        async def send_in_time(message: MutableMapping[str, Any]) -> None:
            nonlocal started
            deadline = scope.get(SCAN_DEADLINE)
            deadline = None if deadline is None else deadline + _SEND_GRACE_SECONDS
            if unsent is not None:
                await send_while_progressing(send(message), unsent, self.write_timeout, deadline)
            else:
                timeout = self.write_timeout
                if deadline is not None:
                    timeout = min(timeout, max(deadline - time.monotonic(), 0.0))
                try:
                    async with asyncio.timeout(timeout):
                        await send(message)
                except TimeoutError:
                    raise ClientTooSlowError(f"the client took no bytes for {timeout:.3g} seconds") from None
            started = started or message["type"] == "http.response.start"

        try:
            await self.app(scope, receive, send_in_time)
        except Exception as exc:
            if not started:
                raise
            _CUT_SHORT.set(True)
            cause = _cause(exc)
            if isinstance(cause, ClientTooSlowError) and ABORT in extensions:
                extensions[ABORT]()  # what it buffered would hold the connection until the client closes it
            if isinstance(cause, HudiShimError | ClientTooSlowError | OSError):
                log.warning("%s %s ended early: %s", scope.get("method"), scope.get("path"), cause)
            else:  # not a limit, a scan error or the client: a fault of the server's own
                log.error("%s %s failed after its response started", scope.get("method"), scope.get("path"),
                          exc_info=cause)


def _cause(error: BaseException) -> BaseException:
    """The error behind the wrappers a stream's failure arrives in (task groups, StreamAborted)."""
    while True:
        if isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        elif isinstance(error, StreamAborted):
            return error.error
        else:
            return error


class _AnswerServerFaults:
    """An error no handler answers (a fault of the server's own, not one of the shim's errors)
    before the response started is answered 500 with a JSON body, its traceback logged; the
    connection stays usable (an error raised on to the server would close it)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: MutableMapping[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            if started:
                raise
            log.error("%s %s failed", scope.get("method"), scope.get("path"), exc_info=exc)
            await server_fault_response(Request(scope), exc)(scope, receive, send)


class _QuietOnPurpose(logging.Filter):
    """Drops the server's 'returned without completing response' error for responses cut short on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_CUT_SHORT.get() and str(record.msg).startswith(_NOT_COMPLETED))


def _quiet_on_purpose(logger: logging.Logger) -> None:
    if not any(isinstance(f, _QuietOnPurpose) for f in logger.filters):
        logger.addFilter(_QuietOnPurpose())


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
