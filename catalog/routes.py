"""The `/v1` endpoints. Metadata handlers are plain functions (FastAPI runs them in its worker
threads); scans take a slot (`catalog.admission`) and do their blocking work on threads of their own."""

from __future__ import annotations

import base64
import binascii
import logging
import time
from collections.abc import Iterator
from functools import partial
from typing import Annotated, Any, Literal

import pyarrow as pa
from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

import shim
from catalog.admission import ScanSlots
from catalog.auth.oauth import Authenticator
from catalog.auth.tokens import ANONYMOUS, Principal
from catalog.errors import ForbiddenError, failure_document, redact_paths
from catalog.models import (
    ErrorBody,
    FileSchemaModel,
    FilesModel,
    InstantModel,
    ScanBody,
    TableDetail,
    TableList,
    TableSummary,
    TimelineModel,
    schema_fields,
)
from catalog.responses import SCAN_DEADLINE, ScanResponse
from catalog.service import Catalog, ScanRequest
from catalog.stream import MEDIA_TYPE, ipc_stream, prefetched
from shim.errors import FileGoneError, HudiShimError, InvalidArgumentError, InvalidFilterError
from shim.filters.substrait import filter_from_substrait
from shim.read import SkippedBlocks, TimeLimit

log = logging.getLogger(__name__)
_bearer = HTTPBearer(auto_error=False, description="the server's token, when it was started with one")

AsOf = Annotated[str | None, Query(max_length=64, description="instant to read as of")]


def _catalog(request: Request) -> Catalog:
    catalog: Catalog = request.app.state.catalog
    return catalog


async def require_token(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> None:
    """Who the request is from (`principal_of`): the server's token, or a client's (`catalog.auth`)."""
    authenticator: Authenticator = request.app.state.auth
    request.state.principal = authenticator.principal(credentials.credentials if credentials is not None else None)


def principal_of(request: Request) -> Principal:
    principal: Principal = getattr(request.state, "principal", ANONYMOUS)
    return principal


def allow_table(request: Request, name: str) -> None:
    """Refuse (403) a table out of the request's client's scope, whether or not it exists."""
    principal = principal_of(request)
    if not principal.may_read(name):
        raise ForbiddenError(f"client {principal.name!r} may not read table {name!r}")


def allow_everything(request: Request, what: str) -> None:
    """Refuse (403) `what` to a client limited to some tables."""
    principal = principal_of(request)
    if not principal.unrestricted:
        raise ForbiddenError(f"client {principal.name!r} may not {what}: it is limited to some tables")


async def reject_unknown_query_parameters(request: Request) -> None:
    """A misspelt parameter (`?asof=`) is an error, not silently ignored."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return
    allowed = set(_query_parameters(dependant))
    unknown = sorted(set(request.query_params) - allowed)
    if unknown:
        accepted = ", ".join(sorted(allowed)) or "none"
        raise InvalidArgumentError(f"unknown query parameter {unknown[0]!r} (accepted: {accepted})")


def _query_parameters(dependant: Any) -> Iterator[str]:
    for param in dependant.query_params:
        yield param.alias
    for child in dependant.dependencies:
        yield from _query_parameters(child)


_ERRORS = {
    400: {"model": ErrorBody, "description": "the body is not JSON"},
    401: {"model": ErrorBody, "description": "missing, wrong or expired token"},
    403: {"model": ErrorBody, "description": "the token's client may not read that table"},
    404: {"model": ErrorBody, "description": "no table of that name is registered"},
    422: {"model": ErrorBody, "description": "invalid request (unknown column, bad filter or instant)"},
    409: {"model": ErrorBody, "description": "the table uses a feature hudi-shim does not read (UnsupportedFeatureError), "
                                             "or changed under the request: a file it planned to read was removed "
                                             "meanwhile (FileGoneError; ask again)"},
    500: {"model": ErrorBody, "description": "the table's files cannot be read, or data a completed commit wrote "
                                             "is missing or damaged (CommittedDataError)"},
}

router = APIRouter(prefix="/v1", dependencies=[Depends(require_token), Depends(reject_unknown_query_parameters)],
                   responses=_ERRORS)  # type: ignore[arg-type]


@router.get("/tables", response_model=TableList, summary="List registered tables")
async def list_tables(request: Request) -> TableList:
    # On the event loop (a thread hop costs more than the listing under load), except for tables
    # that must be loaded first (new, or changed since): those are summed up on a worker thread.
    catalog = _catalog(request)
    principal = principal_of(request)
    names = [name for name in catalog.names() if principal.may_read(name)]
    loaded = {name: table for name in names if (table := catalog.loaded_snapshot(name)) is not None}
    others = [name for name in names if name not in loaded]
    summaries = {name: _summary(catalog, name, table) for name, table in loaded.items()}
    if others:
        summaries.update(await run_in_threadpool(lambda: {name: _summary(catalog, name) for name in others}))
    return TableList(tables=[summaries[name] for name in names])


def _summary(catalog: Catalog, name: str, table: shim.TableSnapshot | None = None) -> TableSummary:
    try:
        table = table or catalog.snapshot(name)
        latest = table.active_timeline.latest_write()
        return TableSummary(name=name, table_type=table.config.table_type.value,
                            latest_instant=latest.requested_time if latest else None)
    except Exception as exc:  # one table that cannot be read never costs the listing of the others
        if not isinstance(exc, HudiShimError):
            log.error("listing table %s failed", name, exc_info=exc)
        return TableSummary(name=name, error=failure_document(catalog, exc))  # type: ignore[arg-type]


@router.get("/tables/{name}", response_model=TableDetail, response_model_by_alias=True,
            summary="Schema with column ids, properties and latest instant")
def get_table(request: Request, name: str, as_of: AsOf = None) -> TableDetail:
    allow_table(request, name)
    info = _catalog(request).describe(name, as_of or None)
    encoded = base64.b64encode(info.schema.serialize().to_pybytes()).decode("ascii")
    return TableDetail.of(info, encoded)


@router.get("/tables/{name}/timeline", response_model=TimelineModel, summary="The active timeline")
def get_timeline(request: Request, name: str) -> TimelineModel:
    allow_table(request, name)
    instants = _catalog(request).timeline(name)
    return TimelineModel(name=name, instants=[InstantModel.of(i) for i in instants])


@router.get("/tables/{name}/files", response_model=FilesModel, response_model_by_alias=True,
            summary="Per-file schema and name mapping of a view")
def get_files(
    request: Request,
    name: str,
    view: Annotated[Literal["snapshot", "read_optimized"], Query()] = "snapshot",
    as_of: AsOf = None,
) -> FilesModel:
    allow_table(request, name)
    published = _catalog(request).view(name, view, as_of or None)
    return FilesModel(name=name, view=view, instant=published.instant, schema=schema_fields(published.schema),
                      files=[FileSchemaModel.of(f) for f in published.files])


@router.post(
    "/tables/{name}/scan",
    response_class=StreamingResponse,
    summary="Scan rows as an Arrow IPC stream",
    responses={200: {"content": {MEDIA_TYPE: {"schema": {"type": "string", "format": "binary"}}},
                     "description": "Arrow IPC stream, one record batch at a time"},
               413: {"model": ErrorBody, "description": "the scan exceeds a server limit"},
               503: {"model": ErrorBody, "description": "the server runs as many scans as it allows "
                                                        "(ServerBusyError); ask again after Retry-After seconds"}},
)
async def scan(request: Request, name: str, body: ScanBody) -> Response:
    allow_table(request, name)
    started = time.monotonic()
    catalog = _catalog(request)
    slots: ScanSlots = request.app.state.scan_slots
    release = await slots.acquire()
    try:
        time_limit = TimeLimit.starting_now(catalog.limits.max_seconds, started)
        request.scope[SCAN_DEADLINE] = time_limit.deadline  # sending the rows counts too
        chunks = await slots.run(partial(_scan_chunks, catalog, name, body, time_limit))
    except BaseException:
        release()
        raise
    return ScanResponse(prefetched(chunks, time_limit=time_limit), release, media_type=MEDIA_TYPE)


def _scan_chunks(catalog: Catalog, name: str, body: ScanBody, time_limit: TimeLimit) -> Iterator[bytes | memoryview]:
    """The scan's stream, its first batch already read: an error until then is answered as JSON."""
    folder = catalog.handle(name).entry.path  # an unknown table is a 404 whatever else is wrong with the request
    scan_request = body.scan_options(filter=_filter(body))
    reader, first, skipped = _started(catalog, name, scan_request, body.limit, time_limit)
    # The report of the log regions skipped is sent last, once the scan has met them all.
    trailer = partial(skipped.metadata, relative_to=folder) if body.corrupt == "skip" else None
    return ipc_stream(reader, catalog.limits, limit=body.limit, first=first,
                      started=time_limit.deadline - time_limit.seconds, compression=body.compression, trailer=trailer,
                      redact=partial(redact_paths, catalog))


def _started(catalog: Catalog, name: str, scan_request: ScanRequest, limit: int | None,
             time_limit: TimeLimit) -> tuple[pa.RecordBatchReader, pa.RecordBatch | None, SkippedBlocks]:
    """A scan, its first batch and the corrupt log regions it skips. When a file it planned is
    removed before the first batch (a clean or rollback that completed meanwhile), it is planned
    again once, on the files listed anew."""
    for attempt in (1, 2):
        skipped = SkippedBlocks()
        reader = catalog.scan(name, scan_request, reopen=attempt == 2, skipped=skipped, time_limit=time_limit)
        try:
            return reader, (reader.read_next_batch() if limit != 0 else None), skipped
        except StopIteration:
            return reader, None, skipped
        except FileGoneError:
            reader.close()
            if attempt == 2:
                raise
        except BaseException:
            reader.close()
            raise
    raise AssertionError("unreachable")


def _filter(body: ScanBody) -> object:
    if not body.filter_substrait:
        return body.filter
    if body.filter not in (None, "", []):
        raise InvalidArgumentError("give either filter or filter_substrait, not both")
    try:
        data = base64.b64decode(body.filter_substrait, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidFilterError(f"filter_substrait is not base64: {exc}") from None
    return filter_from_substrait(data)
