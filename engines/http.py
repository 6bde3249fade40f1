"""A Python client of the hudi-shim HTTP API.

    from engines.http import ShimClient
    with ShimClient("http://127.0.0.1:8080", token="...") as client:
        client.tables()                                   # ['trips', ...]
        client.scan("trips", columns=["city", "fare"], filter="fare > 10")   # pyarrow.Table
        client.scan("trips", shim.ScanOptions(as_of="20240101000000000", limit=10))
        for batch in client.scan_batches("trips"):        # streamed, one batch at a time
            ...

Errors come back as the shim's own exception classes (`TableNotFoundError`, `ColumnNotFoundError`,
...); anything else is a `RemoteError` carrying the HTTP status.
"""

from __future__ import annotations

import base64
import datetime as dt
import http.client
import json
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any, Self
from urllib.parse import quote, urlencode, urlsplit

import pyarrow as pa
import pyarrow.compute as pc

from catalog.stream import ERROR_METADATA_KEY, MEDIA_TYPE, SKIPPED_METADATA_KEY
from engines.tokens import resolve_token
from shim import ScanOptions
from shim import errors as shim_errors
from shim.errors import HudiShimError, InvalidArgumentError
from shim.filters.expr import EXPR_TYPES
from shim.scan_options import REMOTE_NAMES


class RemoteError(HudiShimError):
    """The server answered with an error that has no shim exception class, or the stream broke.

    Attributes:
        retry_after: seconds the server asked to wait before asking again (a busy server, 503).
    """

    def __init__(self, message: str, *, status: int | None = None, kind: str | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.retry_after = retry_after


_SIMPLE = {
    name: getattr(shim_errors, name)
    for name in ("TableNotFoundError", "InvalidTableError", "InstantNotFoundError", "ColumnNotFoundError",
                 "InvalidFilterError", "SchemaEvolutionError", "InvalidArgumentError", "FileGoneError")
}


def error_from_document(document: dict[str, Any], status: int | None = None) -> HudiShimError:
    """The exception an error document (`{"type", "message", ...}`) describes."""
    kind = str(document.get("type", ""))
    message = str(document.get("message", "")) or f"server error ({status})"
    column = document.get("column")
    instant = document.get("instant")
    if kind in _SIMPLE:
        error: HudiShimError = _SIMPLE[kind](message, column=column, instant=instant)
    elif kind == "UnsupportedFeatureError":
        error = shim_errors.UnsupportedFeatureError(message, feature=str(document.get("feature") or "unknown"))
    elif kind in ("CorruptFileError", "CommittedDataError"):
        offset = document.get("offset")
        error = getattr(shim_errors, kind)(message, path="", instant=instant,
                                           offset=offset if isinstance(offset, int) else None)
    else:
        error = RemoteError(message, status=status, kind=kind or None)
    return error


class ShimClient:
    """Talks to `hudi-shim serve` (standard library HTTP: each request on its own connection, so
    one client can serve several readers at once, from any thread).

    Args:
        url: the server, e.g. `http://127.0.0.1:8080`.
        token: the bearer token the server was started with, if any (default: `HUDI_SHIM_TOKEN`,
            or the file `HUDI_SHIM_TOKEN_FILE` names; see `engines.tokens`).
        timeout: seconds to wait for a connection or for the next bytes of a response.
        compression: "lz4" or "zstd" asks the server to compress the scans' record batches (for
            slow networks: lz4 sends about 40% of the bytes, at some CPU cost on both ends).
        wire_dictionaries: scans ask the server for repeated strings dictionary-encoded, as data
            files store them, and decode them here: fewer bytes to send, and the decoding runs on
            the client's side. Results have the same types either way.
        busy_wait: for how many seconds a request the server refuses as busy (503, it runs as
            many scans as it allows) is asked again, after the `Retry-After` it gives.
    """

    def __init__(self, url: str, token: str | None = None, *, timeout: float = 300.0,
                 compression: str | None = None, wire_dictionaries: bool = True, busy_wait: float = 60.0) -> None:
        parsed = urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise InvalidArgumentError(f"not an http(s) URL: {url!r}")
        self.url = url.rstrip("/")
        self._parsed = parsed
        self._prefix = parsed.path.rstrip("/")
        token = resolve_token(token)
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.timeout = timeout
        if compression not in (None, "lz4", "zstd"):
            raise InvalidArgumentError(f"compression must be lz4, zstd or None, not {compression!r}")
        self.compression = compression
        self.wire_dictionaries = wire_dictionaries
        self.busy_wait = busy_wait

    def close(self) -> None:
        """Nothing to release (connections are closed after each request); kept for `with`."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None,
                 accept: str = "application/json") -> http.client.HTTPResponse:
        """The response to a request, asked again while the server is busy (up to `busy_wait` seconds)."""
        give_up = time.monotonic() + self.busy_wait
        while True:
            try:
                return self._request_once(method, path, body, accept)
            except RemoteError as exc:
                wait = exc.retry_after
                if wait is None or time.monotonic() + wait > give_up:
                    raise
                time.sleep(wait)

    def _request_once(self, method: str, path: str, body: dict[str, Any] | None,
                      accept: str) -> http.client.HTTPResponse:
        kind = http.client.HTTPSConnection if self._parsed.scheme == "https" else http.client.HTTPConnection
        connection = kind(self._parsed.hostname or "", self._parsed.port, timeout=self.timeout)
        headers = {**self._headers, "Accept": accept}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        try:
            connection.request(method, self._prefix + path, body=data, headers=headers)
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            raise RemoteError(f"cannot reach {self.url}: {exc}") from exc
        if response.status != 200:
            try:
                raise _error_of(response, response.read())
            finally:
                connection.close()
        return response

    # -- metadata ---------------------------------------------------------------------------------

    def _get(self, path: str, params: dict[str, str | None] | None = None) -> Any:
        query = urlencode({k: v for k, v in (params or {}).items() if v is not None})
        response = self._request("GET", path + (f"?{query}" if query else ""))
        with response:
            return json.loads(response.read())

    def tables(self) -> list[str]:
        """Names of the registered tables."""
        return [entry["name"] for entry in self._get("/v1/tables")["tables"]]

    def table(self, name: str, as_of: str | None = None) -> dict[str, Any]:
        """Schema with ids, properties and latest instant, as the server publishes them."""
        return dict(self._get(f"/v1/tables/{_quote(name)}", {"as_of": as_of}))

    def schema(self, name: str, as_of: str | None = None) -> pa.Schema:
        """The table's data columns, column ids in field metadata (`PARQUET:field_id`)."""
        encoded = self.table(name, as_of)["arrow_schema"]
        return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(encoded)))

    def timeline(self, name: str) -> list[dict[str, Any]]:
        return list(self._get(f"/v1/tables/{_quote(name)}/timeline")["instants"])

    def files(self, name: str, view: str = "snapshot", as_of: str | None = None) -> dict[str, Any]:
        """The published view: schema with ids and, per file, its column mapping."""
        return dict(self._get(f"/v1/tables/{_quote(name)}/files", {"view": view, "as_of": as_of}))

    # -- scans ------------------------------------------------------------------------------------

    def scan(self, name: str, options: ScanOptions | None = None, /, **changes: Any) -> pa.Table:
        """The rows of a scan, collected (see `scan_batches` to stream them). A scan a concurrent
        clean or rollback broke off (FileGoneError) is asked for once more. With `corrupt="skip"`
        the result's schema metadata holds the server's report of the corrupt log regions skipped
        (`SKIPPED_METADATA_KEY`: JSON `{"count", "blocks"}`, paths relative to the table)."""
        options = _scan_options(options, changes)
        for attempt in (1, 2):
            skipped: dict[bytes, bytes] = {}
            try:
                result = self.scan_batches(name, options, report=skipped).read_all()
            except shim_errors.FileGoneError:
                if attempt == 2:
                    raise
                continue
            return result.replace_schema_metadata({**(result.schema.metadata or {}), **skipped}) if skipped else result
        raise AssertionError("unreachable")

    def scan_batches(self, name: str, options: ScanOptions | None = None, /, *,
                     report: dict[bytes, bytes] | None = None, **changes: Any) -> pa.RecordBatchReader:
        """Stream a scan: batches are read from the connection as the caller consumes them.

        The scan is `options` (a `shim.ScanOptions`; default: all rows of the snapshot) with
        `changes`, options by name (`client.scan_batches("trips", columns=["id"], limit=10)`);
        the server takes those in `shim.scan_options.REMOTE_NAMES` (others raise
        `InvalidArgumentError`). `filter` is filter text,
        `[(column, op, value), ...]`, or a `pyarrow.compute.Expression` (sent as Substrait).
        With `corrupt="skip"`, damaged log blocks are skipped and `report` receives the
        server's report of them (`SKIPPED_METADATA_KEY`) once the stream is read to its end.
        Errors in the request are raised here; an error the server meets mid-stream is raised
        when the batch that carries it is read.
        """
        options = _scan_options(options, changes)
        body: dict[str, Any] = {}
        for key, value in options.non_defaults().items():
            if key not in REMOTE_NAMES:
                raise InvalidArgumentError(f"a server does not take the scan option {key!r}; "
                                           f"it takes {', '.join(REMOTE_NAMES)}")
            if key == "filter":
                body.update(self._filter(name, options))
            else:
                body[key] = list(value) if key == "columns" else value
        # Asked for on the wire only, and decoded as batches arrive, unless the caller wants them.
        decode = self.wire_dictionaries and not options.dictionary_partitions and not options.dictionary_strings
        if decode:
            body["dictionary_strings"] = True
        if self.compression is not None:
            body["compression"] = self.compression
        response = self._request("POST", f"/v1/tables/{_quote(name)}/scan", body, accept=MEDIA_TYPE)
        try:
            stream = pa.ipc.open_stream(response)
        except BaseException as exc:
            response.close()
            if isinstance(exc, (OSError, http.client.HTTPException, pa.ArrowInvalid)):
                raise RemoteError(f"the scan stream from the server broke off: {exc}") from exc
            raise
        if decode:
            schema = plain_schema(stream.schema)
            return pa.RecordBatchReader.from_batches(schema, _batches(stream, response, schema, report))
        return pa.RecordBatchReader.from_batches(stream.schema, _batches(stream, response, report=report))

    def _filter(self, name: str, options: ScanOptions) -> dict[str, Any]:
        """The request's filter: text, [column, op, value] items, or Substrait for an Expression."""
        filter = options.filter
        if filter is None:
            return {}
        if isinstance(filter, pc.Expression):
            schema = self.schema(name, options.as_of)
            return {"filter_substrait": base64.b64encode(bytes(filter.to_substrait(schema))).decode("ascii")}
        if isinstance(filter, (str, *EXPR_TYPES)):
            return {"filter": str(filter)}
        return {"filter": [_jsonable(item) for item in filter]}


def _scan_options(options: ScanOptions | None, changes: dict[str, Any]) -> ScanOptions:
    options = options if options is not None else ScanOptions()
    return options.replace(**changes) if changes else options


def plain_schema(schema: pa.Schema) -> pa.Schema:
    """`schema` with its top-level dictionary columns as their value types."""
    return pa.schema([f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f for f in schema],
                     metadata=schema.metadata)


def _decoded(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    if batch.schema.equals(schema):
        return batch
    return pa.RecordBatch.from_arrays([column.cast(field.type) for column, field in zip(batch.columns, schema)],
                                      schema=schema)


def _batches(stream: pa.ipc.RecordBatchStreamReader, response: http.client.HTTPResponse,
             decode_to: pa.Schema | None = None, report: dict[bytes, bytes] | None = None) -> Iterator[pa.RecordBatch]:
    try:
        while True:
            try:
                batch, metadata = stream.read_next_batch_with_custom_metadata()
            except StopIteration:
                return
            if metadata is not None and ERROR_METADATA_KEY in metadata:
                raise error_from_document(json.loads(metadata[ERROR_METADATA_KEY]))
            if metadata is not None and SKIPPED_METADATA_KEY in metadata:
                if report is not None:
                    report[SKIPPED_METADATA_KEY] = metadata[SKIPPED_METADATA_KEY]
                continue
            yield batch if decode_to is None else _decoded(batch, decode_to)
    except (http.client.HTTPException, OSError, pa.ArrowInvalid) as exc:
        raise RemoteError(f"the scan stream from the server broke off: {exc}") from exc
    finally:
        response.close()


def _error_of(response: http.client.HTTPResponse, content: bytes) -> HudiShimError:
    try:
        document = json.loads(content)["error"]
        if not isinstance(document, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        text = content[:500].decode("utf-8", "replace")
        return RemoteError(f"HTTP {response.status} from the server: {text}", status=response.status)
    error = error_from_document(document, response.status)
    if isinstance(error, RemoteError):
        error.status = response.status
        if response.status == 503:
            error.retry_after = _seconds(response.getheader("Retry-After"))
    return error


def _seconds(value: str | None) -> float | None:
    """A `Retry-After` given in seconds (None: absent, or an HTTP date)."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _quote(name: str) -> str:
    return quote(name, safe="")


def _jsonable(item: object) -> object:
    """A filter item as JSON: Expr as filter text, dates and decimals as text (bound to the column's type)."""
    if isinstance(item, EXPR_TYPES):
        return str(item)
    if isinstance(item, (tuple, list)):
        return [_jsonable(v) for v in item]
    if isinstance(item, (dt.date, dt.time)):
        return item.isoformat(sep=" ") if isinstance(item, dt.datetime) else item.isoformat()
    if isinstance(item, (Decimal, bytes)):
        return item.decode("utf-8") if isinstance(item, bytes) else str(item)
    return item
