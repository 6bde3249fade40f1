"""Column metrics of published base files from the metadata table's column stats, in place of
their footers (`catalog.iceberg.metrics`), under the same rules: counts of flat columns, and
bounds where the stats' value type is the table column's exactly (Hudi 1.1+'s `valueType`, or
the wrapper older writers name) and the type is one the footer metrics bound (no floating point,
no binary: Java orders bytes signed). A column without stats gets no metrics; a file whose stats
give no row count is left to its footer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal

import pyarrow as pa

from catalog.iceberg.metrics import FileMetrics, bounded_type, single_value
from shim.read import ColumnStats

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


def stats_rows(stats: Mapping[str, ColumnStats] | None) -> int | None:
    """The file's rows as its stats count them (every flat column counts every row)."""
    counts = {s.value_count for s in (stats or {}).values() if s.value_count is not None and "." not in s.column_name}
    return counts.pop() if len(counts) == 1 else None


def stats_metrics(stats: Mapping[str, ColumnStats] | None,
                  columns: Mapping[str, tuple[int, pa.DataType]]) -> FileMetrics | None:
    """Metrics of a file's top-level columns named in `columns` (file column name -> Iceberg id
    and type of the table column it reads as), from its column stats; None without a row count."""
    rows = stats_rows(stats)
    if stats is None or rows is None:
        return None
    metrics = FileMetrics()
    for name, (field_id, table_type) in columns.items():
        found = stats.get(name)
        if found is None or pa.types.is_nested(table_type) or found.value_count != rows:
            continue
        metrics.value_counts[field_id] = rows
        if found.null_count is not None:
            metrics.null_counts[field_id] = found.null_count
        kind = bounded_type(table_type)
        low, high = (_bound(found, found.min_value, table_type, kind), _bound(found, found.max_value, table_type, kind)) \
            if kind is not None else (None, None)
        if kind is not None and low is not None and high is not None:
            metrics.lower[field_id] = single_value(low, kind)
            metrics.upper[field_id] = single_value(high, kind)
    return metrics


def _bound(stats: ColumnStats, value: object, table_type: pa.DataType, kind: str) -> object:
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
