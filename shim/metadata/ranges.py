"""Column stats as the value ranges filters are evaluated on (`shim.filters.partition.ValueRange`).

A file's or partition's stats (min, max, null and value counts) stand for a column's values only
where they compare as the column's values do in a read: the stats' Python value must be of the
kind the query type reads (integers for integer columns, floats for floating point ones, text for
strings, dates, timestamps with or without a zone as the column has one), else nothing is known.
Text holding characters at U+E000 and above is not used (Java orders such text by UTF-16 units,
Python by code points), nor are nanosecond timestamps (Hudi truncates them to microseconds), and
floating-point ranges allow NaN (Parquet statistics leave it out).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal

import pyarrow as pa

from shim.filters.partition import ValueRange
from shim.metadata.records import ColumnStats, ValueType

UNKNOWN = object()
"""Nothing is known of the column (no stats, or stats that cannot be trusted for its type)."""
EMPTY = object()
"""The file holds no value of the column, not even a null (a log file of deletes only)."""
_NANOS = (ValueType.TIMESTAMP_NANOS, ValueType.LOCAL_TIMESTAMP_NANOS)
_SURROGATE_ORDER = "\ue000"


def stats_range(stats: ColumnStats | None, data_type: pa.DataType) -> object:
    """The column's values as the stats tell them for a column read as `data_type`: a
    `ValueRange`, None (only nulls), `EMPTY` or `UNKNOWN`."""
    if stats is None or stats.is_deleted:
        return UNKNOWN
    if stats.value_count == 0:
        return EMPTY
    if stats.value_count is not None and stats.value_count == stats.null_count:
        return None
    low, high = stats.min_value, stats.max_value
    if low is None or high is None or not (_fits(low, data_type, stats) and _fits(high, data_type, stats)):
        return UNKNOWN
    nullable = stats.null_count is None or stats.null_count > 0
    return ValueRange(low, high, nullable, unordered=pa.types.is_floating(data_type))


def union_range(ranges: Sequence[object]) -> object:
    """What the values of several files (a file slice's base and logs) may be, as one range."""
    ranges = [r for r in ranges if r is not EMPTY]
    if not ranges or any(r is UNKNOWN for r in ranges):
        return UNKNOWN
    known = [r for r in ranges if isinstance(r, ValueRange)]
    if not known:
        return None  # only nulls everywhere
    try:
        low = min(r.low for r in known)
        high = max(r.high for r in known)
    except TypeError:
        return UNKNOWN
    nullable = len(known) < len(ranges) or any(r.nullable for r in known)
    return ValueRange(low, high, nullable, any(r.unordered for r in known))


def known_values(ranges: Iterable[tuple[str, object]]) -> dict[str, object]:
    """Column -> range or None, leaving out the columns nothing is known of (what
    `shim.filters.partition.possible_truths` takes)."""
    return {name: value for name, value in ranges if value is not UNKNOWN and value is not EMPTY}


def _fits(value: object, data_type: pa.DataType, stats: ColumnStats) -> bool:
    """Whether a stats value compares as the column's values read as `data_type`."""
    if pa.types.is_boolean(data_type):
        return isinstance(value, bool)
    if pa.types.is_integer(data_type):
        return isinstance(value, int) and not isinstance(value, bool)
    if pa.types.is_floating(data_type):
        return isinstance(value, float)
    if pa.types.is_decimal(data_type):
        return isinstance(value, Decimal) and value.is_finite()
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return isinstance(value, str) and max(value, default="") < _SURROGATE_ORDER
    if pa.types.is_date32(data_type):
        return isinstance(value, dt.date) and not isinstance(value, dt.datetime)
    if pa.types.is_timestamp(data_type):
        info = stats.value_type_info
        ordinal = int(info.get("typeOrdinal") or 0) if info else 0
        aware = data_type.tz is not None
        return (isinstance(value, dt.datetime) and (value.tzinfo is not None) == aware
                and ordinal not in _NANOS)
    return False
