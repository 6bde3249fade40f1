"""Encoding Arrow rows as Avro binary records (the writer side of Avro data blocks).

Values are converted to their Avro storage form here (temporal types to their integers, decimals
to big-endian two's complement bytes) and written by fastavro against the schema with those
logical types stripped, so nothing goes through Python datetimes or rounding contexts.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa

from shim.avro.schema import arrow_type_at, logical_arrow_type, named_once, parse_avro_schema
from shim.errors import ColumnNotFoundError, WriteError


def encode_records(table: pa.Table, schema: Mapping[str, Any]) -> list[bytes]:
    """Avro binary encoding of each row of `table` under the record schema `schema`.

    Columns are matched to fields by name and cast to the field's Arrow type; a field missing from
    the table is written as null when nullable.

    Raises:
        ColumnNotFoundError: a non-nullable field has no column.
        WriteError: a value cannot be cast to its field's type.
    """
    parsed = parse_avro_schema(schema)
    columns: dict[str, list[Any]] = {}
    for field in parsed["fields"]:
        name = str(field["name"])
        arrow_type, nullable = arrow_type_at(field["type"], name)
        if name not in table.column_names:
            if not nullable:
                raise ColumnNotFoundError(f"column {name!r} is required by the Avro schema", column=name)
            columns[name] = [None] * table.num_rows
            continue
        column = table.column(name).combine_chunks()
        try:
            if not column.type.equals(arrow_type):
                column = column.cast(arrow_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise WriteError(
                f"column {name!r} cannot be written as {arrow_type}: {exc}", column=name
            ) from exc
        columns[name] = _to_python(column, field["type"])
    writer_schema = fastavro.parse_schema(named_once(_storage_schema(parsed)))
    out = io.BytesIO()
    bounds = [0]
    names = list(columns)
    for row in range(table.num_rows):
        fastavro.schemaless_writer(out, writer_schema, {name: columns[name][row] for name in names})
        bounds.append(out.tell())
    data = out.getvalue()
    return [data[bounds[i] : bounds[i + 1]] for i in range(table.num_rows)]


def _storage_schema(t: Any) -> Any:
    """The schema with logical types replaced by their underlying types (names kept)."""
    if isinstance(t, list):
        return [_storage_schema(b) for b in t]
    if not isinstance(t, dict):
        return t
    kind = t["type"]
    if kind in ("record", "error"):
        return {**t, "fields": [{**f, "type": _storage_schema(f["type"])} for f in t["fields"]]}
    if kind == "array":
        return {**t, "items": _storage_schema(t["items"])}
    if kind == "map":
        return {**t, "values": _storage_schema(t["values"])}
    if kind == "fixed":
        return {k: v for k, v in t.items() if k not in ("logicalType", "precision", "scale")}
    if kind in ("enum",):
        return t
    return kind


def _to_python(array: pa.Array, t: Any) -> list[Any]:
    """Python values of `array` in the Avro storage form of `t`."""
    if isinstance(t, list):
        branch = next((b for b in t if b != "null"), "null")
        return _to_python(array, branch)
    kind = t if isinstance(t, str) else t["type"]
    logical = None if isinstance(t, str) else logical_arrow_type(t)
    if logical is not None and pa.types.is_decimal(logical):
        size = int(t["size"]) if kind == "fixed" else None
        return [None if v is None else _decimal_bytes(v, logical.scale, size) for v in array.to_pylist()]
    if logical is not None:
        storage = pa.int32() if kind == "int" else pa.int64()
        return array.view(storage).to_pylist()
    if kind in ("record", "error"):
        assert isinstance(array, pa.StructArray)
        children = {str(f["name"]): _to_python(array.field(i), f["type"]) for i, f in enumerate(t["fields"])}
        valid = array.is_valid().to_pylist()
        return [
            {name: values[i] for name, values in children.items()} if valid[i] else None
            for i in range(len(array))
        ]
    if kind == "array":
        assert isinstance(array, pa.ListArray)
        items = _to_python(array.values, t["items"])
        return _slices(array, items, lambda part: part)
    if kind == "map":
        assert isinstance(array, pa.MapArray)
        entries = array.values
        keys = entries.field(0).to_pylist()
        values = _to_python(entries.field(1), t["values"])
        pairs = list(zip(keys, values, strict=True))
        return _slices(array, pairs, dict)
    return array.to_pylist()


def _slices(array: pa.ListArray | pa.MapArray, items: list[Any], build: Any) -> list[Any]:
    offsets = array.offsets.to_pylist()
    valid = array.is_valid().to_pylist()
    return [build(items[offsets[i] : offsets[i + 1]]) if valid[i] else None for i in range(len(array))]


def _decimal_bytes(value: Decimal, scale: int, size: int | None) -> bytes:
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    unscaled = int("".join(map(str, digits)) or "0") * 10 ** (exponent + scale)
    if sign:
        unscaled = -unscaled
    if size is None:
        magnitude = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
        size = magnitude // 8 + 1  # Java BigInteger.toByteArray: minimal with a sign bit
    return unscaled.to_bytes(size, "big", signed=True)
