"""Engine rows and the shim's Arrow rows in one representation, and the engine types Arrow
types read as.

Normalization (what the comparison allows, nothing more):
- values are compared as Python values of Arrow's `to_pylist()`; the clients' own forms are
  converted back by the engine type of the column: Presto's client returns decimals, dates,
  timestamps as text, varbinary as base64 and nested values as JSON text; Trino's returns rows
  as tuples;
- Presto's timestamps carry milliseconds: the shim's microseconds are cut to milliseconds, and
  its instants (UTC) compare by their UTC date and time (Presto reads no Iceberg timestamptz);
- maps compare as dicts (Arrow gives lists of pairs); NaN compares equal to NaN;
- names compare lower-cased (both engines lower-case identifiers: `isActive` shows as
  `isactive`, in rows' field names too);
- row order is not compared (sorted), column order and names are.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa

_NAN = ("NaN",)


def engine_type(data_type: pa.DataType, flavor: str) -> str:
    """The type `flavor` shows for an Iceberg column the shim reads as `data_type` (spaces after
    commas removed)."""
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return "varchar"
    simple = {pa.int32(): "integer", pa.int64(): "bigint", pa.float32(): "real", pa.float64(): "double",
              pa.bool_(): "boolean", pa.date32(): "date", pa.binary(): "varbinary", pa.large_binary(): "varbinary"}
    if data_type in simple:
        return simple[data_type]
    if pa.types.is_decimal(data_type):
        return f"decimal({data_type.precision},{data_type.scale})"
    if pa.types.is_timestamp(data_type):
        if flavor == "presto":  # the catalog publishes UTC instants as timestamps for Presto (no timestamptz)
            return "timestamp"
        return "timestamp(6)" + (" with time zone" if data_type.tz else "")
    if pa.types.is_time(data_type):
        return "time(6)" if flavor == "trino" else "time"
    if pa.types.is_fixed_size_binary(data_type):
        return "varbinary"
    if pa.types.is_struct(data_type):
        return "row(" + ",".join(f"{f.name.lower()} {engine_type(f.type, flavor)}" for f in data_type) + ")"
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return f"array({engine_type(data_type.value_type, flavor)})"
    if pa.types.is_map(data_type):
        return f"map({engine_type(data_type.key_type, flavor)},{engine_type(data_type.item_type, flavor)})"
    raise AssertionError(f"no engine type known for {data_type}")


def squeeze(type_text: str) -> str:
    """An engine's type text with no space after commas and no quotes around row field names
    (Trino writes `row(a integer, b varchar)`, Presto `row("a" integer, "b" varchar)` or no spaces)."""
    return re.sub(r",\s+", ",", type_text).replace('"', "")


def engine_rows(rows: Sequence[Sequence[Any]], types: Sequence[str]) -> list[tuple]:
    """An engine's rows as Arrow-like Python values, by the columns' engine types."""
    parsed = [_parse_type(squeeze(t)) for t in types]
    return [tuple(_from_engine(v, t) for v, t in zip(row, parsed, strict=True)) for row in rows]


def arrow_rows(table: pa.Table, flavor: str) -> list[tuple]:
    """The shim's rows in the representation `engine_rows` gives (see the module's notes)."""
    columns = [[_from_arrow(v, table.schema.field(i).type, flavor) for v in table.column(i).to_pylist()]
               for i in range(table.num_columns)]
    return list(zip(*columns, strict=True)) if columns else []


def same_rows(got: Sequence[tuple], want: Sequence[tuple]) -> bool:
    return sorted(map(repr, got)) == sorted(map(repr, want))


def _from_arrow(value: Any, data_type: pa.DataType, flavor: str) -> Any:
    if value is None:
        return None
    if pa.types.is_floating(data_type) and math.isnan(value):
        return _NAN
    if pa.types.is_timestamp(data_type) and flavor == "presto":
        value = value.replace(microsecond=value.microsecond // 1000 * 1000)
        return value.replace(tzinfo=None) if data_type.tz else value
    if pa.types.is_timestamp(data_type) and data_type.tz:
        return value.astimezone(dt.UTC)
    if pa.types.is_struct(data_type):
        return {f.name.lower(): _from_arrow(value[f.name], f.type, flavor) for f in data_type}
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return [_from_arrow(v, data_type.value_type, flavor) for v in value]
    if pa.types.is_map(data_type):
        return {_from_arrow(k, data_type.key_type, flavor): _from_arrow(v, data_type.item_type, flavor)
                for k, v in value}
    if pa.types.is_fixed_size_binary(data_type):
        return bytes(value)
    return value


# -- engine type texts ---------------------------------------------------------------------------

def _parse_type(text: str) -> tuple:
    """("row", [(name, type)...]) | ("array", type) | ("map", key, value) | (base name, text)."""
    text = text.strip()
    head, _, rest = text.partition("(")
    if head in ("row", "array", "map") and rest.endswith(")"):
        parts = _split_top(rest[:-1])
        if head == "array":
            return ("array", _parse_type(parts[0]))
        if head == "map":
            return ("map", _parse_type(parts[0]), _parse_type(parts[1]))
        fields = []
        for part in parts:
            name, _, type_text = part.strip().partition(" ")
            fields.append((name.strip('"'), _parse_type(type_text)))
        return ("row", fields)
    return (head.split(" ")[0], text)


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _from_engine(value: Any, parsed: tuple) -> Any:
    if value is None:
        return None
    kind = parsed[0]
    if kind in ("row", "array", "map") and isinstance(value, str):
        value = json.loads(value)  # Presto's client hands nested values over as JSON text
    if kind == "row":
        values = list(value.values()) if isinstance(value, dict) else list(value)
        return {name: _from_engine(v, t) for (name, t), v in zip(parsed[1], values, strict=True)}
    if kind == "array":
        return [_from_engine(v, parsed[1]) for v in value]
    if kind == "map":
        return {_from_engine(k, parsed[1]): _from_engine(v, parsed[2]) for k, v in value.items()}
    if kind in ("double", "real"):
        number = float(value)
        return _NAN if math.isnan(number) else number
    if kind == "decimal":
        return Decimal(str(value))
    if kind == "date" and isinstance(value, str):
        return dt.date.fromisoformat(value)
    if kind == "timestamp" and isinstance(value, str):
        moment = dt.datetime.fromisoformat(value.removesuffix(" UTC"))
        return moment
    if kind == "timestamp" and isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC)
    if kind == "varbinary" and isinstance(value, str):
        return base64.b64decode(value)
    return value
