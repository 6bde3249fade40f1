"""InternalSchema <-> Arrow schema.

The type mapping is the one `shim.avro.schema` uses for Avro writer schemas, so a column read
through either path has the same Arrow type: boolean->bool, int->int32, long->int64,
float->float32, double->float64, date->date32, time->time64[us], timestamp->timestamp[us, UTC],
string and uuid->string, binary->binary, fixed[n]->fixed_size_binary(n), decimal(p, s)->
decimal128(p, s) (decimal256 above 38 digits), record->struct, array->list<element>,
map->map<key, value>. Hudi 1.x extras: time-millis->time32[ms], timestamp-millis->
timestamp[ms, UTC], local-timestamp-micros/millis->timestamp[us]/[ms] without zone.

Every Arrow field (list elements and map keys/values too) carries its column id in the field
metadata under `PARQUET:field_id`, the key Arrow's Parquet writer and reader use.
"""

from __future__ import annotations

import pyarrow as pa

from shim.errors import UnsupportedFeatureError
from shim.schema.internal_schema import InternalSchema
from shim.schema.types import (
    BINARY,
    BOOLEAN,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    LOCAL_TIMESTAMP_MICROS,
    LOCAL_TIMESTAMP_MILLIS,
    LONG,
    STRING,
    TIME,
    TIME_MILLIS,
    TIMESTAMP,
    TIMESTAMP_MILLIS,
    UUID,
    ArrayType,
    DecimalType,
    Field,
    FixedType,
    MapType,
    PrimitiveType,
    RecordType,
    Type,
    VectorType,
)

FIELD_ID_KEY = b"PARQUET:field_id"

_PRIMITIVE_TO_ARROW: dict[PrimitiveType, pa.DataType] = {
    BOOLEAN: pa.bool_(),
    INT: pa.int32(),
    LONG: pa.int64(),
    FLOAT: pa.float32(),
    DOUBLE: pa.float64(),
    DATE: pa.date32(),
    TIME: pa.time64("us"),
    TIME_MILLIS: pa.time32("ms"),
    TIMESTAMP: pa.timestamp("us", tz="UTC"),
    TIMESTAMP_MILLIS: pa.timestamp("ms", tz="UTC"),
    LOCAL_TIMESTAMP_MICROS: pa.timestamp("us"),
    LOCAL_TIMESTAMP_MILLIS: pa.timestamp("ms"),
    STRING: pa.string(),
    UUID: pa.string(),
    BINARY: pa.binary(),
}


def _meta(field_id: int) -> dict[bytes, bytes]:
    return {FIELD_ID_KEY: str(field_id).encode()}


def primitive_to_arrow(type_: PrimitiveType) -> pa.DataType:
    """The Arrow type of a primitive."""
    if isinstance(type_, DecimalType):
        if type_.precision > 38:
            return pa.decimal256(type_.precision, type_.scale)
        return pa.decimal128(type_.precision, type_.scale)
    if isinstance(type_, FixedType):
        return pa.binary(type_.length)
    if isinstance(type_, VectorType):
        return vector_arrow_type(type_)
    return _PRIMITIVE_TO_ARROW[type_]


_VECTOR_ELEMENTS = {"FLOAT": pa.float32(), "DOUBLE": pa.float64(), "INT8": pa.int8()}


def vector_arrow_type(type_: VectorType) -> pa.DataType:
    """A VECTOR as Arrow: a fixed-size list of `dimension` non-null elements."""
    return pa.list_(pa.field("element", _VECTOR_ELEMENTS[type_.element_type], nullable=False), type_.dimension)


def type_to_arrow(type_: Type) -> pa.DataType:
    """The Arrow type of any InternalSchema type, ids in the children's field metadata."""
    if isinstance(type_, RecordType):
        return pa.struct([field_to_arrow(f) for f in type_.fields])
    if isinstance(type_, ArrayType):
        element = pa.field(
            "element", type_to_arrow(type_.element), type_.element_optional, _meta(type_.element_id)
        )
        return pa.list_(element)
    if isinstance(type_, MapType):
        key = pa.field("key", type_to_arrow(type_.key), False, _meta(type_.key_id))
        value = pa.field("value", type_to_arrow(type_.value), type_.value_optional, _meta(type_.value_id))
        return pa.map_(key, value)
    assert isinstance(type_, PrimitiveType)
    return primitive_to_arrow(type_)


def field_to_arrow(field: Field) -> pa.Field:
    """The Arrow field of a record field, its id in the metadata."""
    return pa.field(field.name, type_to_arrow(field.type), field.optional, _meta(field.id))


def internal_to_arrow(schema: InternalSchema) -> pa.Schema:
    """The Arrow schema of an InternalSchema, ids in every field's metadata."""
    return pa.schema([field_to_arrow(f) for f in schema.fields])


def internal_from_arrow(
    schema: pa.Schema, *, version_id: int = 0, use_field_ids: bool = False
) -> InternalSchema:
    """An InternalSchema for an Arrow schema.

    Ids are assigned fresh in Hudi's order (see `shim.schema.avro`), unless `use_field_ids`
    is set and every field carries `PARQUET:field_id`.

    Raises:
        UnsupportedFeatureError: an Arrow type has no InternalSchema counterpart.
    """
    if use_field_ids:
        try:
            return InternalSchema(RecordType(tuple(_field_with_ids(f) for f in schema)), version_id)
        except _NoFieldId:
            pass
    assigner = _FreshIds()
    first = assigner.take(len(schema))
    fields = [
        Field(first + i, f.name, assigner.convert(f.type, f.name), f.nullable) for i, f in enumerate(schema)
    ]
    return InternalSchema(RecordType(tuple(fields)), version_id)


class _NoFieldId(Exception):
    pass


def without_field_ids(schema: pa.Schema) -> pa.Schema:
    """`schema` with no `PARQUET:field_id` on any field, nested ones included (Hudi's files carry
    none; a Parquet file with ids on some fields is read by id, not by name, by Iceberg readers)."""
    return pa.schema([_plain_field(f) for f in schema], metadata=schema.metadata)


def has_field_ids(schema: pa.Schema) -> bool:
    """Whether any field of `schema`, nested ones included, carries `PARQUET:field_id`."""
    return any(_carries_id(f) for f in schema)


def _carries_id(field: pa.Field) -> bool:
    return arrow_field_id(field) is not None or any(_carries_id(child) for child in member_fields(field.type))


def member_fields(t: pa.DataType) -> list[pa.Field]:
    """A nested type's members: struct fields, a map's key and value, a list's element."""
    if pa.types.is_struct(t):
        return [t.field(i) for i in range(t.num_fields)]
    if pa.types.is_map(t):
        return [t.key_field, t.item_field]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [t.value_field]
    return []


def _plain_field(field: pa.Field) -> pa.Field:
    return pa.field(field.name, _plain_type(field.type), field.nullable)


def _plain_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(t):
        return pa.struct([_plain_field(t.field(i)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(_plain_field(t.key_field), _plain_field(t.item_field), keys_sorted=t.keys_sorted)
    if pa.types.is_list(t):
        return pa.list_(_plain_field(t.value_field))
    if pa.types.is_large_list(t):
        return pa.large_list(_plain_field(t.value_field))
    return t


def arrow_field_id(field: pa.Field) -> int | None:
    """The column id an Arrow field carries in its metadata (`PARQUET:field_id`), if any."""
    raw = (field.metadata or {}).get(FIELD_ID_KEY)
    return int(raw) if raw is not None else None


def _field_id(field: pa.Field) -> int:
    value = arrow_field_id(field)
    if value is None or value < 0:
        raise _NoFieldId
    return value


def _field_with_ids(field: pa.Field) -> Field:
    return Field(_field_id(field), field.name, _type_with_ids(field.type, field.name), field.nullable)


def _type_with_ids(t: pa.DataType, name: str) -> Type:
    if pa.types.is_struct(t):
        return RecordType(tuple(_field_with_ids(t.field(i)) for i in range(t.num_fields)))
    if pa.types.is_map(t):
        key, item = t.key_field, t.item_field
        return MapType(
            _field_id(key),
            _type_with_ids(key.type, name),
            _field_id(item),
            _type_with_ids(item.type, name),
            item.nullable,
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        element = t.value_field
        return ArrayType(_field_id(element), _type_with_ids(element.type, name), element.nullable)
    return arrow_primitive_to_internal(t, name)


class _FreshIds:
    def __init__(self) -> None:
        self.next_id = 0

    def take(self, count: int) -> int:
        first = self.next_id
        self.next_id += count
        return first

    def convert(self, t: pa.DataType, name: str) -> Type:
        if pa.types.is_struct(t):
            first = self.take(t.num_fields)
            children = [t.field(i) for i in range(t.num_fields)]
            types = [self.convert(c.type, c.name) for c in children]
            return RecordType(
                tuple(
                    Field(first + i, c.name, ct, c.nullable)
                    for i, (c, ct) in enumerate(zip(children, types, strict=True))
                )
            )
        if pa.types.is_map(t):
            key_id = self.take(2)
            key = arrow_primitive_to_internal(t.key_type, name)
            return MapType(key_id, key, key_id + 1, self.convert(t.item_type, name), t.item_field.nullable)
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            element_id = self.take(1)
            return ArrayType(element_id, self.convert(t.value_type, name), t.value_field.nullable)
        return arrow_primitive_to_internal(t, name)


def arrow_primitive_to_internal(t: pa.DataType, name: str = "?") -> PrimitiveType:
    """The InternalSchema primitive for an Arrow type (the inverse of `primitive_to_arrow`).

    Narrow integers widen to `int`, large/view strings and binaries to `string`/`binary`,
    nanosecond and second timestamps to microseconds, dictionaries to their value type.

    Raises:
        UnsupportedFeatureError: the type has no counterpart (unsigned 64-bit, intervals...).
    """
    if pa.types.is_dictionary(t):
        return arrow_primitive_to_internal(t.value_type, name)
    if pa.types.is_boolean(t):
        return BOOLEAN
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return INT
    if pa.types.is_uint8(t) or pa.types.is_uint16(t):
        return INT
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return LONG
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return FLOAT
    if pa.types.is_float64(t):
        return DOUBLE
    if pa.types.is_decimal(t):
        return DecimalType(t.precision, t.scale)
    if pa.types.is_date(t):
        return DATE
    if pa.types.is_time32(t):
        return TIME_MILLIS if t.unit == "ms" else TIME
    if pa.types.is_time64(t):
        return TIME
    if pa.types.is_timestamp(t):
        millis = t.unit in ("s", "ms")
        if t.tz is None:
            return LOCAL_TIMESTAMP_MILLIS if millis else LOCAL_TIMESTAMP_MICROS
        return TIMESTAMP_MILLIS if millis else TIMESTAMP
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return STRING
    if pa.types.is_fixed_size_binary(t):
        return FixedType(t.byte_width)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return BINARY
    raise UnsupportedFeatureError(
        f"column '{name}' has Arrow type {t}, which has no Hudi schema type",
        feature="arrow-type",
        column=name,
    )
