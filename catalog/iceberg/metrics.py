"""Column metrics of published data files, for Iceberg manifests: column sizes, value, null and
NaN counts, lower and upper bounds, and the row groups' offsets (`split_offsets`), taken from the
files' Parquet footers, so readers skip the files a filter rules out without opening them, plan
splits at row groups, and estimate sizes (Trino's `SHOW STATS` data size) as for files a native
Iceberg writer wrote.

Where statistics come from is a `StatsSource`: per file, what each file column's statistics say
(`FileStats`). `FooterStats` reads them from Parquet footers; Hudi's metadata table (its column
stats partition holds per file and column the same counts, bounds and sizes) can be another
source without changing how manifests are built (`file_metrics`).

Only what is certain is given, for flat columns whose stored type is exactly the table column's
(no promotion to reason about), found by the name mapping readers apply themselves (or by the
field ids of files written with them): counts when every row group records them; bounds when
every row group records them or holds only nulls, taken from the raw statistics (booleans,
integers, decimals, dates, times and timestamps down to microseconds, strings, binary). Column
sizes (bytes on disk, per leaf column, nested ones included) are always in a footer. Floating
point: Parquet statistics leave NaNs out without counting them, so a floating-point column's
NaN count is known only where no row holds a value, or where the publisher wrote the file and
recorded the count in its footer (`NAN_COUNTS_KEY`); its bounds are given only where that count
is 0 (readers disagree on where NaN sorts: DuckDB puts it above every number). Anything else is
left out, and readers then read the file to know.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from catalog.iceberg.types import primitive_name
from shim.errors import UnsupportedFeatureError
from shim.read import parquet_footer, read_file_schema
from shim.schema import arrow_field_id
from shim.storage import Storage

_EPOCH = dt.date(1970, 1, 1)
#: Types whose bounds are given (besides decimals, times and timestamps of at most microseconds,
#: and floating point without NaNs).
_BOUNDED = frozenset({"boolean", "int", "long", "date", "string", "binary"})
_FLOATING = frozenset({"float", "double"})
#: Microseconds per unit of a time or timestamp.
_MICROS = {"s": 1_000_000, "ms": 1_000, "us": 1}
#: Footer key-value metadata of files the publisher writes: JSON, top-level column -> NaNs in it.
NAN_COUNTS_KEY = "hudi-shim.nan-counts"


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """What a file's statistics say of one of its columns (a top-level column, or a nested leaf
    by its dotted Parquet path; then only `size` is used).

    Attributes:
        value_count: values, nulls included (None: unknown).
        null_count: nulls (None: unknown).
        nan_count: NaNs of a floating-point column (None: unknown).
        lower, upper: bounds as Iceberg orders them (see `comparable`), None when not certain.
        size: bytes the column takes in the file (compressed), None when unknown.
    """

    value_count: int | None = None
    null_count: int | None = None
    nan_count: int | None = None
    lower: object = None
    upper: object = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class FileStats:
    """A data file's statistics: its rows, its Arrow schema, each column's `ColumnStats`, the
    offsets its row groups start at, and whether its columns carry field ids of their own."""

    row_count: int
    schema: pa.Schema
    columns: Mapping[str, ColumnStats]
    split_offsets: tuple[int, ...] = ()
    has_field_ids: bool = False


class StatsSource(Protocol):
    """Where the statistics of a table's data files come from (`FooterStats`: Parquet footers)."""

    def file_stats(self, storage: Storage, path: str) -> FileStats:
        """The statistics of the Parquet file at `path` on `storage`."""
        ...


class FooterStats:
    """Statistics from the files' Parquet footers (read once per file version: `parquet_footer`)."""

    def file_stats(self, storage: Storage, path: str) -> FileStats:
        footer = parquet_footer(storage, path)
        assert isinstance(footer, pq.FileMetaData), path  # Lance slices are written out as Parquet
        return footer_stats(footer, read_file_schema(storage, path))


@dataclass(frozen=True, slots=True)
class FileMetrics:
    """Per Iceberg field id: column sizes, values (nulls included), nulls, NaNs, the bounds in
    single-value form; and the file's split offsets."""

    value_counts: dict[int, int] = field(default_factory=dict)
    null_counts: dict[int, int] = field(default_factory=dict)
    lower: dict[int, bytes] = field(default_factory=dict)
    upper: dict[int, bytes] = field(default_factory=dict)
    column_sizes: dict[int, int] = field(default_factory=dict)
    nan_counts: dict[int, int] = field(default_factory=dict)
    split_offsets: tuple[int, ...] = ()


def bounded_type(data_type: pa.DataType) -> str | None:
    """The Iceberg type a column's bounds are given in, or None when they are not given (floating
    point: given only where the file holds no NaN)."""
    try:
        kind = primitive_name(data_type, "")
    except UnsupportedFeatureError:
        return None
    if kind in ("timestamp", "timestamptz", "time"):
        return kind if data_type.unit in _MICROS else None  # nanoseconds: not Iceberg's microseconds
    return kind if kind in _BOUNDED or kind in _FLOATING or kind.startswith("decimal(") else None


def file_metrics(metadata: pq.FileMetaData, file_schema: pa.Schema,
                 columns: Mapping[str, tuple[int, pa.DataType]],
                 mapping: Sequence[Mapping[str, Any]] = ()) -> FileMetrics:
    """Metrics of a Parquet file from its footer (see `metrics_of`)."""
    return metrics_of(footer_stats(metadata, file_schema), columns, mapping)


def metrics_of(stats: FileStats, columns: Mapping[str, tuple[int, pa.DataType]],
               mapping: Sequence[Mapping[str, Any]] = ()) -> FileMetrics:
    """Manifest metrics of a file from its statistics: counts and bounds of the top-level columns
    named in `columns` (file column name -> Iceberg id and type of the table column it reads as),
    sizes of every leaf column the name `mapping` (or the file's own field ids) gives an id."""
    metrics = FileMetrics(split_offsets=stats.split_offsets)
    if stats.has_field_ids:
        columns = {f.name: (field_id, f.type) for f in stats.schema
                   if (field_id := arrow_field_id(f)) is not None}
        mapping = _mapping_of(stats.schema)
    for name, (field_id, table_type) in columns.items():
        index = stats.schema.get_field_index(name)
        column = stats.columns.get(name)
        if index < 0 or column is None or not stats.schema.field(index).type.equals(table_type) \
                or pa.types.is_nested(table_type) or column.value_count is None:
            continue
        metrics.value_counts[field_id] = column.value_count
        if column.null_count is not None:
            metrics.null_counts[field_id] = column.null_count
        kind = bounded_type(table_type)
        if kind in _FLOATING:
            if column.nan_count is None:
                continue
            metrics.nan_counts[field_id] = column.nan_count
            if column.nan_count:
                continue
        if kind is not None and column.lower is not None and column.upper is not None:
            metrics.lower[field_id] = single_value(column.lower, kind)
            metrics.upper[field_id] = single_value(column.upper, kind)
    for path, column in stats.columns.items():
        field_id = _leaf_id(mapping, path.split("."))
        if field_id is not None and column.size is not None:
            metrics.column_sizes[field_id] = column.size
    return metrics


def _leaf_id(mapping: Sequence[Mapping[str, Any]], parts: Sequence[str]) -> int | None:
    """The field id a name mapping gives the leaf at a Parquet path (the repeated groups Parquet
    puts inside lists and maps, `list` and `key_value`, are not in the mapping: skipped)."""
    entries: Sequence[Mapping[str, Any]] = mapping
    found: Mapping[str, Any] | None = None
    for part in parts:
        entry = next((e for e in entries if part in e.get("names", ())), None)
        if entry is None:
            if found is None:
                return None
            continue  # a repeated group between a list or map and its members
        found, entries = entry, entry.get("fields", ())
    return None if found is None or found.get("fields") else int(found["field-id"])


def _mapping_of(schema: pa.Schema) -> list[dict[str, Any]]:
    """A name mapping from the field ids a file's schema carries."""
    def entry(f: pa.Field) -> dict[str, Any]:
        members = [f.type.field(i) for i in range(f.type.num_fields)] if pa.types.is_nested(f.type) else []
        found: dict[str, Any] = {"field-id": arrow_field_id(f), "names": [f.name]}
        if members:
            found["fields"] = [entry(m) for m in members]
        return found

    return [entry(f) for f in schema if arrow_field_id(f) is not None]


def footer_stats(metadata: pq.FileMetaData, file_schema: pa.Schema) -> FileStats:
    """What a Parquet footer says of each column: top-level flat columns' counts and bounds, every
    leaf's size, and the row groups' starting offsets."""
    columns: dict[str, ColumnStats] = {}
    nan_counts = _recorded_nan_counts(metadata)
    chunks_by_path: dict[str, list[tuple[pq.ColumnChunkMetaData, int]]] = {}
    for group_index in range(metadata.num_row_groups):
        group = metadata.row_group(group_index)
        for i in range(group.num_columns):
            chunk = group.column(i)
            chunks_by_path.setdefault(chunk.path_in_schema, []).append((chunk, group.num_rows))
    for path, chunks in chunks_by_path.items():
        size = sum(chunk.total_compressed_size for chunk, _ in chunks)
        index = file_schema.get_field_index(path)
        if index < 0 or len(chunks) != metadata.num_row_groups or pa.types.is_nested(file_schema.field(index).type):
            columns[path] = ColumnStats(size=size)
            continue
        data_type = file_schema.field(index).type
        stats = [chunk.statistics for chunk, _ in chunks]
        nulls = sum(s.null_count for s in stats if s is not None) \
            if all(s is not None and s.has_null_count for s in stats) else None
        nan_count = nan_counts.get(path)
        if nan_count is None and nulls == metadata.num_rows:
            nan_count = 0  # nothing but nulls
        bounds = _bounds(chunks, data_type)
        columns[path] = ColumnStats(value_count=metadata.num_rows, null_count=nulls,
                                    nan_count=nan_count if _is_floating(data_type) else None,
                                    lower=bounds[0] if bounds else None, upper=bounds[1] if bounds else None,
                                    size=size)
    return FileStats(metadata.num_rows, file_schema, columns, _split_offsets(metadata),
                     any(arrow_field_id(f) is not None for f in file_schema))


def _is_floating(data_type: pa.DataType) -> bool:
    return bool(pa.types.is_floating(data_type))


def _recorded_nan_counts(metadata: pq.FileMetaData) -> dict[str, int]:
    recorded = (metadata.metadata or {}).get(NAN_COUNTS_KEY.encode())
    if not recorded:
        return {}
    try:
        counts = json.loads(recorded)
    except ValueError:
        return {}
    return {str(k): int(v) for k, v in counts.items()} if isinstance(counts, dict) else {}


def nan_counts(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> dict[str, int]:
    """NaNs per top-level floating-point column of `batches` (what `NAN_COUNTS_KEY` records)."""
    import pyarrow.compute as pc

    counts = {f.name: 0 for f in schema if _is_floating(f.type)}
    for batch in batches:
        for name in counts:
            column = batch.column(name)
            counts[name] += int(pc.sum(pc.is_nan(column)).as_py() or 0) if len(column) else 0
    return counts


def _split_offsets(metadata: pq.FileMetaData) -> tuple[int, ...]:
    """Where each row group starts: its first column chunk's dictionary page, else its first data
    page (as Parquet readers and Iceberg's writers count a row group's start)."""
    offsets = []
    for group_index in range(metadata.num_row_groups):
        group = metadata.row_group(group_index)
        if group.num_columns == 0:
            return ()
        first = group.column(0)
        start = first.data_page_offset
        if first.has_dictionary_page and 0 < first.dictionary_page_offset < start:
            start = first.dictionary_page_offset
        offsets.append(int(start))
    return tuple(offsets)


def _bounds(chunks: list[tuple[pq.ColumnChunkMetaData, int]], data_type: pa.DataType) -> tuple[object, object] | None:
    """The smallest minimum and largest maximum over the row groups, in Iceberg's terms, or None
    when a row group holding values records none (or records one no reader may trust)."""
    lows, highs = [], []
    for chunk, rows in chunks:
        stats = chunk.statistics
        if stats is not None and stats.has_min_max:
            low, high = _comparable(stats.min_raw, stats.physical_type, data_type), \
                _comparable(stats.max_raw, stats.physical_type, data_type)
            if low is None or high is None:
                return None
            lows.append(low)
            highs.append(high)
        elif not (stats is not None and stats.has_null_count and stats.null_count == rows):
            return None
    if not lows:
        return None
    return min(lows), max(highs)  # type: ignore[type-var]


def _comparable(raw: object, physical: str, data_type: pa.DataType) -> object:
    """A statistic as the value Iceberg bounds order: microseconds for times and timestamps, the
    unscaled integer for decimals, the number, text or date itself otherwise; None when it
    cannot be used (a physical type these rules do not expect)."""
    if pa.types.is_timestamp(data_type) or pa.types.is_time(data_type):
        factor = _MICROS.get(data_type.unit)
        return raw * factor if factor is not None and physical in ("INT32", "INT64") and isinstance(raw, int) else None
    if pa.types.is_decimal(data_type):
        if physical in ("INT32", "INT64") and isinstance(raw, int):
            return raw
        if physical in ("FIXED_LEN_BYTE_ARRAY", "BYTE_ARRAY") and isinstance(raw, bytes) and raw:
            return int.from_bytes(raw, "big", signed=True)
        return None
    if pa.types.is_date32(data_type):
        return _EPOCH + dt.timedelta(days=raw) if isinstance(raw, int) else None
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return raw.decode("utf-8") if isinstance(raw, bytes) else None
    if pa.types.is_boolean(data_type):
        return bool(raw)
    if pa.types.is_floating(data_type):
        return raw if isinstance(raw, float) and not math.isnan(raw) else None
    return raw if isinstance(raw, (int, bytes)) else None


def single_value(value: object, iceberg_type: str) -> bytes:
    """Iceberg's single-value binary form of a bound: little-endian numbers (IEEE 754 for floating
    point), UTF-8 text, days for dates, microseconds for times and timestamps, raw bytes for
    binary, and for decimals the unscaled value in the fewest big-endian two's-complement bytes."""
    if iceberg_type == "string":
        assert isinstance(value, str)
        return value.encode("utf-8")
    if iceberg_type == "binary":
        assert isinstance(value, bytes)
        return value
    if iceberg_type == "boolean":
        return b"\x01" if value else b"\x00"
    if iceberg_type == "date":
        assert isinstance(value, dt.date)
        return struct.pack("<i", (value - _EPOCH).days)
    if iceberg_type in _FLOATING:
        assert isinstance(value, float)
        return struct.pack("<f" if iceberg_type == "float" else "<d", value)
    assert isinstance(value, int)
    if iceberg_type.startswith("decimal("):
        return value.to_bytes(((value if value >= 0 else ~value).bit_length() + 8) // 8, "big", signed=True)
    return struct.pack("<i" if iceberg_type == "int" else "<q", value)
