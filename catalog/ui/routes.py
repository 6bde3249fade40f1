"""The UI's routes: HTML pages under `/ui`, their JSON under `/ui/api` (read-only, same token as
the API: a bearer header or the login cookie), static files under `/ui/static`.

JSON endpoints (errors are the API's JSON errors):
    GET /ui/api/tables                         the tables list (`tables.TableRow`)
    GET /ui/api/tables/{name}/schemas          the schema history grid (`evolution.SchemaGrid`)
    GET /ui/api/tables/{name}/timeline         every instant, archived ones too (`timeline.TimelineEntry`)
    GET /ui/api/tables/{name}/files            files, slices, mappings, misreads (`files.FilesPage`);
                                               ?view=snapshot|read_optimized&as_of=
    GET /ui/api/tables/{name}/plan             a scan's plan explained and its first rows
                                               (`plan.QueryPlan`); ?filter=&as_of=&mode=&limit=
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable
from functools import partial
from importlib import resources
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import quote

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

import shim
from catalog.admission import ScanSlots
from catalog.models import ErrorBody
from catalog.routes import reject_unknown_query_parameters
from catalog.service import Catalog, ScanRequest
from catalog.ui import auth, pages
from catalog.ui.evolution import table_schema_grid
from catalog.ui.files import files_page
from catalog.ui.plan import explain, rows_json
from catalog.ui.tables import table_row, table_rows
from catalog.ui.timeline import made_by, table_timeline
from shim.read import TimeLimit

MAX_ROWS = 1000
T = TypeVar("T")

pages_router = APIRouter(prefix="/ui", include_in_schema=False)
_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "a malformed request"},
    401: {"model": ErrorBody, "description": "missing or wrong token (or login cookie)"},
    404: {"model": ErrorBody, "description": "no table of that name is registered"},
    409: {"model": ErrorBody, "description": "the table uses a feature hudi-shim does not read, or changed under "
                                             "the request"},
    413: {"model": ErrorBody, "description": "the plan's rows exceed a server limit"},
    422: {"model": ErrorBody, "description": "invalid request (unknown column, bad filter or instant)"},
    500: {"model": ErrorBody, "description": "the table's files cannot be read"},
    503: {"model": ErrorBody, "description": "the server runs as many scans as it allows; ask again after Retry-After"},
}
api = APIRouter(prefix="/ui/api", tags=["ui"], responses=_ERRORS,
                dependencies=[Depends(auth.require_ui_token), Depends(reject_unknown_query_parameters)])

AsOf = Annotated[str | None, Query(max_length=64, description="instant to read as of")]
View = Annotated[Literal["snapshot", "read_optimized"], Query(description="the view")]


def mount(app: FastAPI) -> None:
    """Serve the UI from `app`: its pages, JSON endpoints and static files."""
    app.include_router(pages_router)
    app.include_router(api)
    static = resources.files("catalog.ui") / "static"
    # Not checked at startup: a copy of the package without its static files still serves the API.
    app.mount("/ui/static", StaticFiles(directory=str(static), check_dir=False), name="ui-static")


def _catalog(request: Request) -> Catalog:
    catalog: Catalog = request.app.state.catalog
    return catalog


# -- pages ----------------------------------------------------------------------------------------


def _login_redirect(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"{auth.LOGIN_PATH}?next={quote(target, safe='')}", status_code=303)


@pages_router.get("", response_class=HTMLResponse)
@pages_router.get("/", response_class=HTMLResponse)
def tables_html(request: Request) -> Response:
    if not auth.is_authorized(request):
        return _login_redirect(request)
    return HTMLResponse(pages.tables_page(table_rows(_catalog(request))))


@pages_router.get("/tables/{name}", response_class=HTMLResponse)
def table_html(request: Request, name: str) -> Response:
    if not auth.is_authorized(request):
        return _login_redirect(request)
    _catalog(request).handle(name)  # an unknown table is the API's 404
    return HTMLResponse(pages.table_page(name))


@pages_router.get("/login", response_class=HTMLResponse)
def login_html(request: Request, next: str = "/ui") -> Response:
    return HTMLResponse(pages.login_page(auth.safe_next(next), needed=auth.needs_token(request)))


@pages_router.post("/login")
async def login(request: Request) -> Response:
    token = _catalog(request).settings.token
    given, target = await auth.login_form(request)
    if token is None:
        return RedirectResponse(target, status_code=303)
    if not auth.token_matches(given, token):
        return HTMLResponse(pages.login_page(target, message="That is not the server's token."), status_code=401)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(auth.COOKIE, auth.session_value(token), path=auth.COOKIE_PATH, httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")
    return response


@pages_router.post("/logout")
def logout() -> Response:
    response = RedirectResponse(auth.LOGIN_PATH, status_code=303)
    response.delete_cookie(auth.COOKIE, path=auth.COOKIE_PATH)
    return response


# -- JSON -----------------------------------------------------------------------------------------


def _default(value: object) -> object:
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return {name: getattr(value, name) for name in fields}
    if isinstance(value, frozenset | set):
        return sorted(value)
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def json_text(value: object) -> str:
    """`value` (dataclasses, lists, dicts) as JSON text."""
    return json.dumps(value, default=_default, separators=(",", ":"), ensure_ascii=False)


def json_response(value: object) -> Response:
    """`value` (dataclasses, lists, dicts), or JSON text, as a JSON response."""
    return Response(value if isinstance(value, str) else json_text(value), media_type="application/json")


class _PerTable:
    """Results computed from one loaded table object (a table's timeline never changes under it:
    a new commit makes the catalog load a new object)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: weakref.WeakKeyDictionary[shim.TableSnapshot, dict[str, object]] = weakref.WeakKeyDictionary()

    def get(self, table: shim.TableSnapshot, key: str, compute: Callable[[], T]) -> T:
        with self._lock:
            found = self._values.get(table, {}).get(key)
        if found is None:
            found = compute()
            with self._lock:
                self._values.setdefault(table, {})[key] = found
        return found  # type: ignore[return-value]


_remembered = _PerTable()


@api.get("/tables", summary="The tables list, with last commit, rows estimate and published views")
def tables_json(request: Request) -> Response:
    return json_response(table_rows(_catalog(request)))


@api.get("/tables/{name}", summary="One table's summary")
def table_json(request: Request, name: str) -> Response:
    catalog = _catalog(request)
    return json_response(table_row(catalog, name, catalog.handle(name).entry.path))


@api.get("/tables/{name}/schemas", summary="The schema history: columns by id across schema versions")
def schemas_json(request: Request, name: str) -> Response:
    table = _catalog(request).snapshot(name)

    def grid() -> str:
        found = table_schema_grid(table)
        versions = set(found.versions)
        return json_text({"grid": found, "instants": made_by(table, versions)})

    return json_response(_remembered.get(table, "schemas json", grid))


@api.get("/tables/{name}/timeline", summary="Every instant (archived ones too) and what it did")
def timeline_json(request: Request, name: str) -> Response:
    table = _catalog(request).snapshot(name)
    return json_response(_remembered.get(table, "timeline json", lambda: json_text(
        _remembered.get(table, "timeline", lambda: table_timeline(table)))))


@api.get("/tables/{name}/files", summary="File groups and slices by partition, with column mappings and misreads")
def files_json(request: Request, name: str, view: View = "snapshot", as_of: AsOf = None) -> Response:
    catalog = _catalog(request)
    table = catalog.snapshot(name)
    published = catalog.view(name, view, as_of or None)
    return json_response(_remembered.get(table, f"files json {view} {published.instant}",
                                         lambda: json_text(files_page(table, published))))


@api.get("/tables/{name}/plan", summary="Which partitions and files a scan prunes, which log blocks merge; "
                                        "its first rows")
async def plan_json(request: Request, name: str, filter: Annotated[str | None, Query(max_length=4096)] = None,
                    as_of: AsOf = None, mode: View = "snapshot",
                    limit: Annotated[int, Query(ge=0, le=MAX_ROWS)] = 100) -> Response:
    catalog = _catalog(request)
    slots: ScanSlots = request.app.state.scan_slots
    release = await slots.acquire()
    try:
        result = await slots.run(partial(_plan, catalog, name, filter or None, as_of or None, mode, limit))
    finally:
        release()
    return json_response(result)


def _plan(catalog: Catalog, name: str, filter: str | None, as_of: str | None, mode: Any, limit: int) -> dict[str, Any]:
    table = catalog.snapshot(name)
    explained = explain(table, catalog.view(name, mode, as_of).files, mode=mode, filter=filter, as_of=as_of)
    request = ScanRequest(mode=mode, filter=filter, as_of=as_of, limit=limit)
    with catalog.scan(name, request, time_limit=TimeLimit.starting_now(catalog.limits.max_seconds)) as reader:
        rows = reader.read_all()
    columns = [{"name": f.name, "type": str(f.type)} for f in rows.schema]
    return {"plan": explained, "columns": columns, "rows": rows_json(rows.to_pylist())}
