"""HTTP status of every error the API returns: one table, and the handlers that apply it.

Error bodies are `{"error": {"type", "message", "code", "column"?, "instant"?, "feature"?}}` (`code`:
the HTTP status, as in the Iceberg REST error model). No message shows an absolute server path:
paths are shown relative to the warehouse, as the table's catalog name, or as the server folder
they are (`redact_paths`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from catalog.admission import ServerBusyError
from catalog.registry import CatalogUnavailableError
from catalog.service import WAREHOUSE
from catalog.stream import ScanLimitError, error_document
from shim.errors import (
    ColumnNotFoundError,
    FileGoneError,
    HudiShimError,
    InstantNotFoundError,
    InvalidArgumentError,
    InvalidFilterError,
    SchemaEvolutionError,
    TableNotFoundError,
    UnsupportedFeatureError,
)

if TYPE_CHECKING:
    from catalog.service import Catalog

log = logging.getLogger(__name__)


class UnauthorizedError(HudiShimError):
    """The request carries no bearer token, or the wrong one."""


class ForbiddenError(HudiShimError):
    """The request's token is valid, and does not allow what it asks for (a table out of its scope)."""


#: First matching class wins: subclasses before their bases.
STATUS_BY_ERROR: tuple[tuple[type[BaseException], int], ...] = (
    (UnauthorizedError, 401),
    (ForbiddenError, 403),
    (TableNotFoundError, 404),
    (ColumnNotFoundError, 422),
    (InvalidFilterError, 422),
    (InstantNotFoundError, 422),
    (InvalidArgumentError, 422),
    (UnsupportedFeatureError, 409),
    (FileGoneError, 409),  # the table changed under the request: asking again sees the new state
    (SchemaEvolutionError, 409),
    (ScanLimitError, 413),
    (ServerBusyError, 503),  # with Retry-After
    (CatalogUnavailableError, 503),  # the warehouse or the registry's database is gone
    (HudiShimError, 500),  # corrupt files, unreadable table metadata: the server's data, not the request
)


def status_for(error: BaseException) -> int:
    for kind, status in STATUS_BY_ERROR:
        if isinstance(error, kind):
            return status
    return 500


def redact(message: str, request: Request) -> str:
    """`message` without absolute server paths: table folders become their catalog names."""
    catalog = getattr(request.app.state, "catalog", None)
    return message if catalog is None else redact_paths(catalog, message)


def redact_paths(catalog: Catalog, message: str) -> str:
    """`message` without absolute server paths: every registered table folder (deleted ones too)
    shown as the table's catalog name, other paths under the warehouse relative to it, and the
    server's own folders (the warehouse itself, the Iceberg and Hadoop catalog folders, the
    registry's) by what they are: `<warehouse>`, `<iceberg-dir>`, `<hadoop-catalog-dir>`, `<catalog-db>`."""
    for entry in sorted(catalog.registry.known(), key=lambda e: len(e.path), reverse=True):
        message = message.replace(entry.path, entry.name)
    for folder, label in catalog.server_folders():
        if label == WAREHOUSE:  # what lies under it is named relative to it
            message = message.replace(folder + "/", "")
        message = message.replace(folder, label)
    return message


def failure_text(error: BaseException) -> str:
    """The message reported for one table among many that met `error`: the shim's errors by their
    message, any other (a fault of the server's) with its type."""
    return str(error) if isinstance(error, HudiShimError) else f"{type(error).__name__}: {error}"


def failure_document(catalog: Catalog, error: BaseException) -> dict[str, object]:
    """The JSON error object of why one table could not be served, its paths redacted: what a
    listing or a publication of every table reports for that table while it goes on with the others."""
    document = error_document(error)
    document["message"] = redact_paths(catalog, str(document["message"]))
    return document


def error_response(
    status: int, document: dict[str, object], headers: Mapping[str, str] | None = None
) -> JSONResponse:
    headers = dict(headers or {})
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse({"error": {**document, "code": status}}, status_code=status, headers=headers or None)


async def _shim_error(request: Request, exc: Exception) -> JSONResponse:
    status = status_for(exc)
    document = error_document(exc)
    document["message"] = redact(str(document["message"]), request)
    if status >= 500 and status != 503:
        log.error("%s %s failed: %s", request.method, request.url.path, document["message"])
    retry = getattr(exc, "retry_after", None)
    return error_response(status, document, {"Retry-After": str(retry)} if retry is not None else None)


def server_fault_response(request: Request, error: Exception) -> JSONResponse:
    """The answer to an error no handler knows (a fault of the server's own, not one of the
    shim's errors): 500 with a JSON body like every other error, never a plain-text page."""
    return error_response(500, {"type": "InternalServerError",
                                "message": redact(f"{type(error).__name__}: {error}", request)})


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = []
    for item in exc.errors()[:5]:
        where = ".".join(str(part) for part in item.get("loc", ()))
        problems.append(f"{where}: {item.get('msg', 'invalid')}")
    return error_response(422, {"type": "RequestValidationError", "message": "; ".join(problems) or "invalid request"})


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    return error_response(exc.status_code, {"type": "HTTPError", "message": str(exc.detail)}, exc.headers)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(HudiShimError, _shim_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
