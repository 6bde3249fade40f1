"""A view's Arrow schema as an Iceberg schema, its name mapping, and the Arrow schema of files
written for Iceberg readers.

Iceberg field ids are the table's column ids plus one (Hudi numbers columns from 0, Iceberg
from 1); nested fields (struct members, list elements, map keys and values) keep their own ids
the same way. Types Iceberg has no exact match for are widened in files written for it: time
and timestamps in milliseconds become microseconds. A Hudi VECTOR (a fixed-size list, one id for
the column) is an Iceberg list of required elements, its element id `VECTOR_ELEMENT_ID_BASE`
above the column's; files written for Iceberg hold it as such a list (Hudi's own files hold its
bytes, so its slices are always written out).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from shim.errors import UnsupportedFeatureError
from shim.schema import FIELD_ID_KEY, arrow_field_id
from shim.schema.arrow import member_fields as children

ID_OFFSET = 1
#: Iceberg's reserved field ids of the columns of position delete files.
DELETE_FILE_PATH_ID, DELETE_POS_ID = 2147483546, 2147483545
#: A vector's element id is its column's Iceberg id plus this (Hudi gives vector elements no id).
VECTOR_ELEMENT_ID_BASE = 1 << 24


def iceberg_id(field: pa.Field, where: str) -> int:
    """The Iceberg id of an Arrow field carrying a column id."""
    column_id = arrow_field_id(field)
    if column_id is None:
        raise UnsupportedFeatureError(f"column {where!r} has no column id; it cannot be published to Iceberg",
                                      feature="column without id")
    return column_id + ID_OFFSET


def iceberg_schema(schema: pa.Schema, schema_id: int = 0) -> dict[str, Any]:
    """The Iceberg schema (JSON object) of a view schema whose fields carry column ids."""
    return {"type": "struct", "schema-id": schema_id,
            "fields": [_field(f, f.name) for f in schema]}


def zone_free(schema: pa.Schema) -> pa.Schema:
    """`schema` with timestamps with a time zone (UTC instants) as timestamps without one, nested
    ones included, ids kept: for readers with no Iceberg `timestamptz` (Presto 0.287), which then
    show the instants' UTC date and time."""
    return pa.schema([_zone_free_field(f) for f in schema], metadata=schema.metadata)


def _zone_free_field(field: pa.Field) -> pa.Field:
    data_type = field.type
    if pa.types.is_timestamp(data_type) and data_type.tz:
        data_type = pa.timestamp(data_type.unit)
    elif pa.types.is_struct(data_type):
        data_type = pa.struct([_zone_free_field(child) for child in children(data_type)])
    elif pa.types.is_map(data_type):
        data_type = pa.map_(_zone_free_field(data_type.key_field), _zone_free_field(data_type.item_field))
    elif _is_list(data_type):
        data_type = pa.list_(_zone_free_field(data_type.value_field))
    return field.with_type(data_type)


def last_column_id(schema: pa.Schema) -> int:
    """The highest Iceberg id in the schema, nested fields included."""
    return max((i for i, _ in _ids(schema)), default=0)


def _ids(schema: pa.Schema) -> Iterator[tuple[int, str]]:
    def walk(field: pa.Field, where: str) -> Iterator[tuple[int, str]]:
        yield iceberg_id(field, where), where
        if pa.types.is_fixed_size_list(field.type):
            yield iceberg_id(field, where) + VECTOR_ELEMENT_ID_BASE, f"{where}.element"
        labels = ["key", "value"] if pa.types.is_map(field.type) else ["element"] if _is_list(field.type) else None
        for i, child in enumerate(children(field.type)):
            yield from walk(child, f"{where}.{labels[i] if labels else child.name}")

    for field in schema:
        yield from walk(field, field.name)


def _field(field: pa.Field, where: str) -> dict[str, Any]:
    field_id = iceberg_id(field, where)
    return {"id": field_id, "name": field.name, "required": not field.nullable,
            "type": _type(field.type, where, field_id)}


def _type(data_type: pa.DataType, where: str, field_id: int = 0) -> Any:
    if pa.types.is_struct(data_type):
        return {"type": "struct", "fields": [_field(f, f"{where}.{f.name}") for f in children(data_type)]}
    if pa.types.is_map(data_type):
        key, value = data_type.key_field, data_type.item_field
        return {"type": "map", "key-id": iceberg_id(key, f"{where}.key"), "key": _type(key.type, f"{where}.key"),
                "value-id": iceberg_id(value, f"{where}.value"), "value": _type(value.type, f"{where}.value"),
                "value-required": not value.nullable}
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        element = data_type.value_field
        return {"type": "list", "element-id": iceberg_id(element, f"{where}.element"),
                "element": _type(element.type, f"{where}.element"), "element-required": not element.nullable}
    if pa.types.is_fixed_size_list(data_type):  # a VECTOR
        return {"type": "list", "element-id": field_id + VECTOR_ELEMENT_ID_BASE,
                "element": primitive_name(data_type.value_type, f"{where}.element"), "element-required": True}
    return primitive_name(data_type, where)


def primitive_name(data_type: pa.DataType, where: str) -> str:
    """Iceberg's name for a primitive Arrow type."""
    if pa.types.is_boolean(data_type):
        return "boolean"
    if pa.types.is_int32(data_type) or pa.types.is_int16(data_type) or pa.types.is_int8(data_type):
        return "int"
    if pa.types.is_int64(data_type):
        return "long"
    if pa.types.is_float32(data_type):
        return "float"
    if pa.types.is_float64(data_type):
        return "double"
    if pa.types.is_decimal(data_type):
        if data_type.precision > 38:
            raise UnsupportedFeatureError(
                f"column {where!r} is {data_type}: Iceberg decimals hold at most 38 digits", feature="decimal256")
        return f"decimal({data_type.precision}, {data_type.scale})"
    if pa.types.is_date32(data_type):
        return "date"
    if pa.types.is_time(data_type):
        return "time"
    if pa.types.is_timestamp(data_type):
        return "timestamptz" if data_type.tz else "timestamp"
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return "string"
    if pa.types.is_fixed_size_binary(data_type):
        return f"fixed[{data_type.byte_width}]"
    if pa.types.is_binary(data_type) or pa.types.is_large_binary(data_type):
        return "binary"
    raise UnsupportedFeatureError(f"column {where!r} has type {data_type}, which Iceberg has no type for",
                                  feature=str(data_type))


def file_schema_for_iceberg(schema: pa.Schema) -> pa.Schema:
    """The Arrow schema a file written for Iceberg readers has: Iceberg ids as Parquet field ids,
    types Iceberg reads natively."""
    return pa.schema([_file_field(f, f.name) for f in schema])


def _file_field(field: pa.Field, where: str) -> pa.Field:
    field_id = iceberg_id(field, where)
    return pa.field(field.name, _file_type(field.type, where, field_id), field.nullable,
                    {FIELD_ID_KEY: str(field_id).encode()})


def _file_type(data_type: pa.DataType, where: str, field_id: int = 0) -> pa.DataType:
    if pa.types.is_struct(data_type):
        return pa.struct([_file_field(f, f"{where}.{f.name}") for f in children(data_type)])
    if pa.types.is_map(data_type):
        return pa.map_(_file_field(data_type.key_field, f"{where}.key"),
                       _file_field(data_type.item_field, f"{where}.value"))
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return pa.list_(_file_field(data_type.value_field, f"{where}.element"))
    if pa.types.is_fixed_size_list(data_type):  # a VECTOR: a list of required elements
        element = _file_type(data_type.value_type, f"{where}.element")
        return pa.list_(pa.field("element", element, False,
                                 {FIELD_ID_KEY: str(field_id + VECTOR_ELEMENT_ID_BASE).encode()}))
    primitive_name(data_type, where)  # refuses what Iceberg cannot hold
    if pa.types.is_time(data_type):
        return pa.time64("us")
    if pa.types.is_timestamp(data_type):
        return pa.timestamp("us", tz=data_type.tz)
    if pa.types.is_int8(data_type) or pa.types.is_int16(data_type):
        return pa.int32()
    if pa.types.is_large_string(data_type):
        return pa.string()
    if pa.types.is_large_binary(data_type):
        return pa.binary()
    return data_type


def same_type(file_type: pa.DataType, table_type: pa.DataType) -> bool:
    """Whether a file's column reads as the table's type with no conversion: equal primitives, or
    structs, lists and maps whose members match (field ids, list element names aside; a member the
    file holds as required may be optional in the table)."""
    nested = (pa.types.is_struct, pa.types.is_map, _is_list)
    for kind in nested:
        if kind(file_type) and kind(table_type):
            files, tables = children(file_type), children(table_type)
            named = kind is pa.types.is_struct
            return len(files) == len(tables) and all(
                (f.name == t.name or not named) and (t.nullable or not f.nullable) and same_type(f.type, t.type)
                for f, t in zip(files, tables)
            )
    if children(file_type) or children(table_type):
        return False
    try:
        return _file_type(file_type, "") == file_type == table_type
    except UnsupportedFeatureError:
        return False


def _is_list(data_type: pa.DataType) -> bool:
    return bool(pa.types.is_list(data_type) or pa.types.is_large_list(data_type))


def promotes(file_type: pa.DataType, table_type: pa.DataType) -> bool:
    """Whether Iceberg readers widen `file_type` to `table_type` themselves (int to long, float
    to double, a decimal to more digits of the same scale)."""
    if pa.types.is_int32(file_type) and pa.types.is_int64(table_type):
        return True
    if pa.types.is_float32(file_type) and pa.types.is_float64(table_type):
        return True
    return (pa.types.is_decimal128(file_type) and pa.types.is_decimal128(table_type)
            and file_type.scale == table_type.scale and file_type.precision <= table_type.precision)
