"""Column metrics of published data files, for Iceberg manifests: value counts, null counts and
lower and upper bounds, taken from the files' Parquet footers, so readers skip the files a filter
rules out without opening them (Trino plans splits from them).

Only what is certain is given, for flat columns whose stored type is exactly the table column's
(no promotion to reason about), found by the name mapping readers apply themselves: counts when
every row group records them; bounds when every row group records them or holds only nulls,
taken from the raw statistics (booleans, integers, decimals, dates, times and timestamps down to
microseconds, strings, binary). Floating point gets none: Parquet statistics leave NaNs out
without counting them, and readers disagree on where NaN sorts (DuckDB puts it above every
number, so `x > 5` holds for it there). Anything else is left out, and readers then read the
file to know.
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from catalog.iceberg.types import primitive_name
from shim.errors import UnsupportedFeatureError

_EPOCH = dt.date(1970, 1, 1)
#: Types whose bounds are given (besides decimals, and times and timestamps of at most microseconds).
_BOUNDED = frozenset({"boolean", "int", "long", "date", "string", "binary"})
#: Microseconds per unit of a time or timestamp.
_MICROS = {"s": 1_000_000, "ms": 1_000, "us": 1}


@dataclass(frozen=True, slots=True)
class FileMetrics:
    """Per Iceberg field id: values (nulls included), nulls, and the bounds in single-value form."""

    value_counts: dict[int, int] = field(default_factory=dict)
    null_counts: dict[int, int] = field(default_factory=dict)
    lower: dict[int, bytes] = field(default_factory=dict)
    upper: dict[int, bytes] = field(default_factory=dict)


def bounded_type(data_type: pa.DataType) -> str | None:
    """The Iceberg type a column's bounds are given in, or None when they are not given."""
    try:
        kind = primitive_name(data_type, "")
    except UnsupportedFeatureError:
        return None
    if kind in ("timestamp", "timestamptz", "time"):
        return kind if data_type.unit in _MICROS else None  # nanoseconds: not Iceberg's microseconds
    return kind if kind in _BOUNDED or kind.startswith("decimal(") else None


def file_metrics(metadata: pq.FileMetaData, file_schema: pa.Schema,
                 columns: Mapping[str, tuple[int, pa.DataType]]) -> FileMetrics:
    """Metrics of the file's top-level columns named in `columns` (file column name -> Iceberg
    id and type of the table column it reads as)."""
    metrics = FileMetrics()
    for name, (field_id, table_type) in columns.items():
        index = file_schema.get_field_index(name)
        if index < 0 or not file_schema.field(index).type.equals(table_type) or pa.types.is_nested(table_type):
            continue
        chunks = _chunks(metadata, name)
        if chunks is None:
            continue
        metrics.value_counts[field_id] = metadata.num_rows
        stats = [chunk.statistics for chunk, _ in chunks]
        if all(s is not None and s.has_null_count for s in stats):
            metrics.null_counts[field_id] = sum(s.null_count for s in stats if s is not None)
        kind = bounded_type(table_type)
        bounds = _bounds(chunks, table_type) if kind is not None else None
        if kind is not None and bounds is not None:
            metrics.lower[field_id] = single_value(bounds[0], kind)
            metrics.upper[field_id] = single_value(bounds[1], kind)
    return metrics


def _chunks(metadata: pq.FileMetaData, name: str) -> list[tuple[pq.ColumnChunkMetaData, int]] | None:
    """The column's chunk in every row group, with the row group's rows; None when it is nested
    or missing from a row group."""
    found = []
    for group_index in range(metadata.num_row_groups):
        group = metadata.row_group(group_index)
        chunk = next((group.column(i) for i in range(group.num_columns) if group.column(i).path_in_schema == name),
                     None)
        if chunk is None:
            return None
        found.append((chunk, group.num_rows))
    return found


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
    return raw if isinstance(raw, (int, bytes)) else None


def single_value(value: object, iceberg_type: str) -> bytes:
    """Iceberg's single-value binary form of a bound: little-endian numbers, UTF-8 text, days for
    dates, microseconds for times and timestamps, raw bytes for binary, and for decimals the
    unscaled value in the fewest big-endian two's-complement bytes."""
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
    assert isinstance(value, int)
    if iceberg_type.startswith("decimal("):
        return value.to_bytes(((value if value >= 0 else ~value).bit_length() + 8) // 8, "big", signed=True)
    return struct.pack("<i" if iceberg_type == "int" else "<q", value)
