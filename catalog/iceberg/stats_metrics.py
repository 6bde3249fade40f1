"""Statistics of published base files from the metadata table's column stats, in place of their
footers: a `StatsSource` (`catalog.iceberg.metrics`) whose manifests follow the same rules. Counts
of flat columns; bounds where the stats' value type is the file column's exactly (Hudi 1.1+'s
`valueType`, or the wrapper older writers name) and the type is one the footer metrics bound (no
floating point: the stats count no NaN; no binary: Java orders bytes signed); column sizes of the
columns the stats hold; no split offsets. A file's schema is its commit's (one footer per commit,
`shim.planning.file_schemas.commit_file_schema`). A file the stats do not cover, or whose stats give
no row count, is left to the fallback source (its footer).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal

import pyarrow as pa

import shim
from catalog.iceberg.metrics import ColumnStats, FileStats, StatsSource, bounded_type
from shim.planning import commit_file_schema
from shim.read import ColumnStats as MetadataColumnStats
from shim.schema import arrow_field_id
from shim.storage import Storage

_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH = dt.datetime(1970, 1, 1)
#: Hudi's ValueType ordinals (1.1+) and older wrapper names, per Iceberg type bounded.
_VALUE_TYPES: dict[str, tuple[frozenset[int], frozenset[str]]] = {
    "boolean": (frozenset({2}), frozenset({"BooleanWrapper"})),
    "int": (frozenset({3}), frozenset({"IntWrapper"})),
    "long": (frozenset({4}), frozenset({"LongWrapper"})),
    "string": (frozenset({7}), frozenset({"StringWrapper"})),
    "date": (frozenset({12}), frozenset({"DateWrapper", "LocalDateWrapper"})),
    "decimal": (frozenset({10}), frozenset({"DecimalWrapper"})),
    "timestamptz": (frozenset({15, 16}), frozenset({"TimestampMicrosWrapper"})),
    "timestamp": (frozenset({18, 19}), frozenset()),
}


class MetadataStats:
    """Base files' statistics from the metadata table's column stats of one scan (`stats`: base
    file path -> column -> stats, `shim.Scan.base_file_stats`), others from `fallback`."""

    def __init__(self, stats: Mapping[str, Mapping[str, MetadataColumnStats]], instants: Mapping[str, str],
                 table: Storage, table_path: str, fallback: StatsSource) -> None:
        self._stats, self._instants, self._fallback = stats, instants, fallback
        self._table, self._table_path = table, table_path

    @classmethod
    def of(cls, scan: shim.Scan, stats: Mapping[str, Mapping[str, MetadataColumnStats]],
           fallback: StatsSource) -> MetadataStats:
        """The source for `scan`'s base files (their commits name the schema they share)."""
        instants = {path: s.base_file.instant_time for s in scan.slices
                    if s.base_file is not None and (path := s.base_path(scan.table.path)) is not None}
        return cls(stats, instants, scan.table.storage, scan.table.path, fallback)

    def file_stats(self, storage: Storage, path: str) -> FileStats:
        found = self._stats.get(path) if storage is self._table else None
        rows = stats_rows(found)
        instant = self._instants.get(path)
        if found is None or rows is None or instant is None:
            return self._fallback.file_stats(storage, path)
        schema = commit_file_schema(storage, self._table_path, instant, path)
        return metadata_file_stats(found, rows, schema)


def stats_rows(stats: Mapping[str, MetadataColumnStats] | None) -> int | None:
    """The file's rows as its stats count them (every flat column counts every row)."""
    counts = {s.value_count for s in (stats or {}).values() if s.value_count is not None and "." not in s.column_name}
    return counts.pop() if len(counts) == 1 else None


def metadata_file_stats(stats: Mapping[str, MetadataColumnStats], rows: int, schema: pa.Schema) -> FileStats:
    """A file's `FileStats` from its column stats (`rows`: its row count, `schema`: its stored
    schema): each flat column of the schema the stats hold, bounds where certain."""
    columns: dict[str, ColumnStats] = {}
    for name, found in stats.items():
        index = schema.get_field_index(name)
        if index < 0 or pa.types.is_nested(schema.field(index).type):
            continue
        data_type = schema.field(index).type
        kind = bounded_type(data_type)
        low = high = None
        if kind is not None and found.value_count == rows:
            low, high = _bound(found, found.min_value, data_type, kind), _bound(found, found.max_value, data_type, kind)
        columns[name] = ColumnStats(value_count=rows if found.value_count == rows else None,
                                    null_count=found.null_count if found.value_count == rows else None,
                                    lower=low if high is not None else None, upper=high if low is not None else None,
                                    size=found.total_size)
    return FileStats(rows, schema, columns, (), any(arrow_field_id(f) is not None for f in schema))


def _bound(stats: MetadataColumnStats, value: object, table_type: pa.DataType, kind: str) -> object:
    """A min or max in the form `single_value` takes, or None when it cannot be given."""
    family = "decimal" if kind.startswith("decimal(") else kind
    expected = _VALUE_TYPES.get(family)
    if expected is None or value is None:
        return None
    info = stats.value_type_info
    ordinal = int(info.get("typeOrdinal") or 0) if info else 0
    if (ordinal not in expected[0]) if ordinal else (stats.value_type not in expected[1]):
        return None
    if family == "decimal":
        return _unscaled(value, table_type, info)
    if family in ("timestamp", "timestamptz"):
        return _micros(value, table_type)
    if family == "boolean":
        return value if isinstance(value, bool) else None
    if family in ("int", "long"):
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if family == "date":
        return value if isinstance(value, dt.date) and not isinstance(value, dt.datetime) else None
    # Java orders text by UTF-16 units, Iceberg by code points: they agree below U+E000.
    return value if isinstance(value, str) and max(value, default="") < "\ue000" else None


def _unscaled(value: object, table_type: pa.DataType, info: Mapping[str, object] | None) -> int | None:
    if not isinstance(value, Decimal) or not value.is_finite():
        return None
    written = str((info or {}).get("additionalInfo") or "")
    if written and written != f"{table_type.precision},{table_type.scale}":
        return None  # written with another precision or scale: not the table column's type
    unscaled = value.scaleb(table_type.scale)
    return int(unscaled) if unscaled == unscaled.to_integral_value() else None


def _micros(value: object, table_type: pa.DataType) -> int | None:
    if not isinstance(value, dt.datetime) or (value.tzinfo is not None) != (table_type.tz is not None):
        return None
    delta = value - (_EPOCH_UTC if value.tzinfo is not None else _EPOCH)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
