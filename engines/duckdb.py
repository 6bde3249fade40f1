"""Query hudi-shim tables from DuckDB, projection and filters pushed down to the shim.

    from engines.duckdb import connect
    con = connect("/data/warehouse")                 # or "http://127.0.0.1:8080" (token=...)
    con.sql("SELECT city, sum(fare) FROM trips WHERE city = 'sf' GROUP BY city").show()

Every table appears as two views: `<table>` (snapshot) and `<table>_ro` (read-optimized). Partition
columns reach DuckDB dictionary-encoded (one value per batch, ingested without decoding it per row;
DuckDB shows their value type, e.g. VARCHAR). Each view is a pyarrow dataset whose `scanner(columns=..., filter=...)` DuckDB calls with the columns the query
needs and the filters it can push; those reach the shim, which prunes partitions, pushes filters
into Parquet and applies them exactly after merging. Over HTTP, filters are sent as filter text;
the parts that have none (rare: DuckDB pushes comparisons, IN lists and null checks) are applied
here, on the rows received. A view registered before its table changed shape finds its columns by
id (`engines.view_columns`); connecting again on the same connection shows the new shape.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from catalog.stream import MAX_FILTER_CHARS
from engines.view_columns import as_view_columns, current_names, fit, same_columns
from shim.errors import ColumnNotFoundError, HudiShimError, InvalidFilterError
from shim.filters import Expr, bind, parse_filter
from shim.filters.expr import columns_of
from shim.filters.parse import MAX_CONDITIONS
from shim.filters.substrait import conjuncts_from_substrait
from shim.planning import with_dictionary_partitions
from shim.properties import TableConfig
from shim.read import value_types
from shim.scan_options import ScanMode
from shim.timeline.instant import normalize_instant

try:
    import duckdb
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("DuckDB support needs duckdb: pip install 'hudi-shim[duckdb]'") from exc

if TYPE_CHECKING:
    from catalog.service import Catalog
    from engines.http import ShimClient

log = logging.getLogger(__name__)

VIEW_SUFFIXES: dict[ScanMode, str] = {"snapshot": "", "read_optimized": "_ro"}


class Source(Protocol):
    """Where a view's rows come from: the in-process catalog or a server."""

    def tables(self) -> list[str]: ...

    def schema(self, name: str) -> pa.Schema: ...

    def dictionary_fields(self, name: str) -> list[str]:
        """The partition columns scans send dictionary-encoded (those the folder names spell)."""
        ...

    def reader(self, name: str, mode: ScanMode, columns: list[str], filter: pc.Expression | None,
               schema: pa.Schema) -> pa.RecordBatchReader: ...


def connect(
    warehouse_or_url: str,
    connection: duckdb.DuckDBPyConnection | None = None,
    *,
    token: str | None = None,
    as_of: str | None = None,
    compression: str | None = None,
    left_out: dict[str, str] | None = None,
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with a view per table and mode (`<table>`, `<table>_ro`).

    Args:
        warehouse_or_url: a warehouse folder (or one table's folder), or the URL of `hudi-shim serve`.
        connection: register the views on this connection instead of a new in-memory one (or again,
            after tables changed shape or new ones appeared).
        token: the server's bearer token (URL only).
        compression: "lz4" or "zstd": scans from the server come compressed (URL only; see
            `engines.http.ShimClient`).
        as_of: every view reads its table as of this instant, schema included (time travel:
            `yyyyMMddHHmmssSSS` or `yyyy-MM-dd[ HH:mm:ss]`); tables with no commit by then are left out.
        left_out: filled with the tables left out (no view: not queryable, or no commit by `as_of`)
            and why; without it, each is logged as a warning.
    """
    if as_of is not None:
        normalize_instant(as_of)  # a malformed instant is an error here, not a warning per table
    source: Source
    if warehouse_or_url.startswith(("http://", "https://")):
        from engines.http import ShimClient

        source = RemoteSource(ShimClient(warehouse_or_url, token=token, compression=compression), as_of)
    else:
        from catalog.service import Catalog
        from catalog.settings import MEMORY, Settings

        source = LocalSource(Catalog(Settings(warehouse=warehouse_or_url, catalog_db=MEMORY)), as_of)
    con = connection if connection is not None else duckdb.connect()
    register_tables(con, source, left_out)
    return con


def register_tables(con: duckdb.DuckDBPyConnection, source: Source,
                    left_out: dict[str, str] | None = None) -> list[str]:
    """(Re)register the views of every table of `source` on `con`; returns the view names. The
    tables left out, and why, go to `left_out` (else to the log, as warnings)."""
    views = []
    for name in source.tables():
        try:
            schema = with_dictionary_partitions(source.schema(name), source.dictionary_fields(name))
        except HudiShimError as exc:
            if left_out is None:
                log.warning("table %s is not queryable: %s", name, exc)
            else:
                left_out[name] = str(exc)
            continue
        for mode, suffix in VIEW_SUFFIXES.items():
            con.register(name + suffix, ShimDataset.create(source, name, mode, schema))
            views.append(name + suffix)
    return views


class ShimDataset(ds.UnionDataset):
    """A pyarrow dataset DuckDB scans; its rows come from the shim, as DuckDB asks for them."""

    source: Source
    table: str
    mode: ScanMode

    @classmethod
    def create(cls, source: Source, table: str, mode: ScanMode, schema: pa.Schema) -> ShimDataset:
        dataset = cls(schema, [ds.dataset(schema.empty_table())])
        dataset.source, dataset.table, dataset.mode = source, table, mode
        return dataset

    def scanner(self, *args: Any, **kwargs: Any) -> ShimScan:
        columns = kwargs.get("columns")
        wanted = list(columns) if columns is not None else list(self.schema.names)
        filter = kwargs.get("filter")
        reader = self._read_by_name(wanted, filter)
        if reader is None:
            reader = self._read_by_id(wanted, filter)
        return ShimScan(reader)

    def _read_by_name(self, wanted: list[str], filter: pc.Expression | None) -> pa.RecordBatchReader | None:
        """The view's columns asked for by name, the filter pushed to the shim; None when the table
        no longer has them under those names and ids (it changed shape since the view was made)."""
        expected = pa.schema([self.schema.field(c) for c in wanted])
        if filter is not None and not _binds(filter, expected):
            return None  # the filter reads columns the query does not: their ids are checked by id
        try:
            reader = self.source.reader(self.table, self.mode, wanted, filter, self.schema)
        except (ColumnNotFoundError, InvalidFilterError):
            return None
        if same_columns(reader.schema, expected):
            return _conform(reader, expected, self.table)
        reader.close()
        return None

    def _read_by_id(self, wanted: list[str], filter: pc.Expression | None) -> pa.RecordBatchReader:
        """The view's columns found by column id in the table's current schema, the filter applied here."""
        log.info("table %s changed shape since its DuckDB views were registered: reading its columns by id",
                 self.table)
        current = self.source.schema(self.table)
        needed = wanted + [c for c in (referenced_columns(filter, self.schema) if filter is not None else [])
                           if c not in wanted]
        names = current_names(self.schema, current, needed)
        read = [name for name in dict.fromkeys(names.values()) if name is not None]
        reader = self.source.reader(self.table, self.mode, read, None, current)
        rows = pa.RecordBatchReader.from_batches(pa.schema([self.schema.field(c) for c in needed]),
                                                 as_view_columns(reader, self.schema, names, self.table))
        if filter is None:
            return rows
        return pa.RecordBatchReader.from_batches(pa.schema([self.schema.field(c) for c in wanted]),
                                                 _filtered(rows, filter, wanted))


class ShimScan:
    """What `ShimDataset.scanner` returns: the scan's rows as DuckDB takes them (`to_reader`, then
    the C stream interface). DuckDB calls nothing else on it; a pyarrow Scanner around the same
    reader would cost about 0.7 ms more per query."""

    def __init__(self, reader: pa.RecordBatchReader) -> None:
        self._reader = reader

    @property
    def projected_schema(self) -> pa.Schema:
        return self._reader.schema

    def to_reader(self) -> pa.RecordBatchReader:
        return self._reader

    def to_table(self) -> pa.Table:
        return self._reader.read_all()


class LocalSource:
    """Tables of an in-process catalog."""

    def __init__(self, catalog: Catalog, as_of: str | None = None) -> None:
        self.catalog = catalog
        self.as_of = as_of

    def tables(self) -> list[str]:
        return self.catalog.names()

    def schema(self, name: str) -> pa.Schema:
        return self.catalog.table(name).schema(self.as_of)

    def dictionary_fields(self, name: str) -> list[str]:
        return list(self.catalog.table(name).config.spelled_partition_fields)

    def reader(self, name: str, mode: ScanMode, columns: list[str], filter: pc.Expression | None,
               schema: pa.Schema) -> pa.RecordBatchReader:
        # The shim translates Arrow filters it has counterparts for, pruning and pushing them down.
        return self.catalog.table(name).scan(mode=mode, columns=columns, filter=filter, as_of=self.as_of,
                                             dictionary_partitions=True)


class RemoteSource:
    """Tables of a hudi-shim server."""

    def __init__(self, client: ShimClient, as_of: str | None = None) -> None:
        self.client = client
        self.as_of = as_of

    def tables(self) -> list[str]:
        return self.client.tables()

    def schema(self, name: str) -> pa.Schema:
        return self.client.schema(name, self.as_of)

    def dictionary_fields(self, name: str) -> list[str]:
        return list(TableConfig(self.client.table(name)["properties"]).spelled_partition_fields)

    def reader(self, name: str, mode: ScanMode, columns: list[str], filter: pc.Expression | None,
               schema: pa.Schema) -> pa.RecordBatchReader:
        pushed: list[Expr] = []
        residual = None
        if filter is not None:
            pushed, complete = split_filter(filter, value_types(schema))
            pushed, fits = within_request_limits(pushed)
            residual = None if complete and fits else filter
        text = " AND ".join(f"({expr})" for expr in pushed) or None
        if residual is None:
            return self.client.scan_batches(name, mode=mode, columns=columns, filter=text, as_of=self.as_of,
                                            dictionary_partitions=True)
        needed = columns + [c for c in referenced_columns(residual, schema) if c not in columns]
        reader = self.client.scan_batches(name, mode=mode, columns=needed, filter=text, as_of=self.as_of,
                                          dictionary_partitions=True)
        # Declared as the server sends them (the view's types may have widened since): the
        # caller casts back to the view's.
        output = pa.schema([reader.schema.field(c) for c in columns])
        return pa.RecordBatchReader.from_batches(output, _filtered(reader, residual, columns))


def split_filter(filter: pc.Expression, schema: pa.Schema) -> tuple[list[Expr], bool]:
    """The AND terms of an Arrow filter that have an exact shim filter text, and whether that is all of them."""
    try:
        data = bytes(filter.to_substrait(schema))
        terms = conjuncts_from_substrait(data)
    except (pa.ArrowException, HudiShimError, ValueError) as exc:
        log.debug("filter %s not pushed to the server: %s", filter, exc)
        return [], False
    pushed = []
    for term in terms:
        if term is None or not _exact_text(term, schema):
            continue
        pushed.append(term)
    return pushed, len(pushed) == len(terms)


def within_request_limits(terms: list[Expr]) -> tuple[list[Expr], bool]:
    """The terms a scan request can carry (the server's limits on filter text and conditions),
    and whether that is all of them; the others are applied to the rows received."""
    kept: list[Expr] = []
    size = conditions = 0
    for term in terms:
        length, count = len(str(term)) + len("() AND "), len(columns_of(term))
        if size + length > MAX_FILTER_CHARS or conditions + count > MAX_CONDITIONS:
            continue
        kept.append(term)
        size, conditions = size + length, conditions + count
    return kept, len(kept) == len(terms)


def _exact_text(expr: Expr, schema: pa.Schema) -> bool:
    try:
        return parse_filter(str(expr)) == expr and bind(expr, schema) is not None
    except HudiShimError:
        return False


def referenced_columns(expression: pc.Expression, schema: pa.Schema) -> list[str]:
    """Top-level columns an Arrow expression reads (the fewest it still binds against)."""
    empty = schema.empty_table()
    needed = list(schema.names)
    for name in schema.names:
        trial = [n for n in needed if n != name]
        try:
            empty.select(trial).filter(expression)
        except (pa.ArrowException, TypeError):
            continue
        needed = trial
    return needed


def _filtered(reader: pa.RecordBatchReader, expression: pc.Expression, columns: Sequence[str]) -> Iterator[
        pa.RecordBatch]:
    with reader:
        for batch in reader:
            kept = pa.Table.from_batches([batch]).filter(expression).select(list(columns))
            yield from kept.to_batches()


def _conform(reader: pa.RecordBatchReader, expected: pa.Schema, table: str) -> pa.RecordBatchReader:
    """`reader` with the types DuckDB was given (a column may have been widened since the view was made)."""
    if reader.schema.equals(expected, check_metadata=False):
        return reader

    def cast() -> Iterator[pa.RecordBatch]:
        with reader:
            for batch in reader:
                yield pa.RecordBatch.from_arrays(
                    [fit(column, field, table) for column, field in zip(batch.columns, expected, strict=True)],
                    schema=expected)

    return pa.RecordBatchReader.from_batches(expected, cast())


def _binds(expression: pc.Expression, schema: pa.Schema) -> bool:
    """Whether `expression` reads only columns of `schema` (remembered: DuckDB sends the same
    filters again and again, and binding one costs a tenth of a millisecond)."""
    key = (str(expression), schema)  # the text names every column the expression reads
    known = _BINDS.get(key)
    if known is None:
        try:
            schema.empty_table().filter(expression)
            known = True
        except (pa.ArrowException, TypeError):
            known = False
        if len(_BINDS) >= 1024:
            _BINDS.clear()
        _BINDS[key] = known
    return known


_BINDS: dict[tuple[str, pa.Schema], bool] = {}
