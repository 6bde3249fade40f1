"""Unit tests of `catalog.iceberg.types`: Iceberg schemas, file schemas and type rules."""

from __future__ import annotations

import pyarrow as pa
import pytest

from catalog.iceberg.types import (
    file_schema_for_iceberg,
    iceberg_id,
    iceberg_schema,
    last_column_id,
    promotes,
    same_type,
)
from shim.errors import UnsupportedFeatureError
from shim.schema import (
    FIELD_ID_KEY,
    ArrayType,
    DecimalType,
    Field,
    FixedType,
    InternalSchema,
    MapType,
    RecordType,
    arrow_field_id,
    internal_to_arrow,
)
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
)


def with_id(name: str, data_type: pa.DataType, column_id: int, nullable: bool = True) -> pa.Field:
    return pa.field(name, data_type, nullable, {FIELD_ID_KEY: str(column_id).encode()})


#: Column ids deliberately not in order, and nested ids above every top-level id.
EVERY_TYPE = InternalSchema.of([
    Field(0, "id", STRING, optional=False),
    Field(1, "amount", DecimalType(10, 2)),
    Field(2, "at", TIMESTAMP),
    Field(3, "local", LOCAL_TIMESTAMP_MICROS),
    Field(4, "tod", TIME),
    Field(5, "digest", FixedType(16), optional=False),
    Field(6, "blob", BINARY),
    Field(7, "point", RecordType((Field(20, "x", DOUBLE, optional=False), Field(21, "y", FLOAT)))),
    Field(8, "tags", ArrayType(22, STRING, element_optional=False)),
    Field(9, "attrs", MapType(23, STRING, 24, LONG, value_optional=True)),
    Field(10, "day", DATE),
    Field(11, "flag", BOOLEAN),
    Field(12, "n", INT),
    Field(13, "at_ms", TIMESTAMP_MILLIS),
    Field(14, "local_ms", LOCAL_TIMESTAMP_MILLIS),
    Field(15, "tod_ms", TIME_MILLIS),
    Field(16, "nested", ArrayType(25, MapType(26, STRING, 27, RecordType((Field(28, "z", INT),)),
                                              value_optional=False))),
])


def test_iceberg_schema_of_every_type_is_exact() -> None:
    schema = internal_to_arrow(EVERY_TYPE)

    assert iceberg_schema(schema, schema_id=3) == {
        "type": "struct",
        "schema-id": 3,
        "fields": [
            {"id": 1, "name": "id", "required": True, "type": "string"},
            {"id": 2, "name": "amount", "required": False, "type": "decimal(10, 2)"},
            {"id": 3, "name": "at", "required": False, "type": "timestamptz"},
            {"id": 4, "name": "local", "required": False, "type": "timestamp"},
            {"id": 5, "name": "tod", "required": False, "type": "time"},
            {"id": 6, "name": "digest", "required": True, "type": "fixed[16]"},
            {"id": 7, "name": "blob", "required": False, "type": "binary"},
            {"id": 8, "name": "point", "required": False, "type": {"type": "struct", "fields": [
                {"id": 21, "name": "x", "required": True, "type": "double"},
                {"id": 22, "name": "y", "required": False, "type": "float"},
            ]}},
            {"id": 9, "name": "tags", "required": False, "type": {
                "type": "list", "element-id": 23, "element": "string", "element-required": True}},
            {"id": 10, "name": "attrs", "required": False, "type": {
                "type": "map", "key-id": 24, "key": "string", "value-id": 25, "value": "long",
                "value-required": False}},
            {"id": 11, "name": "day", "required": False, "type": "date"},
            {"id": 12, "name": "flag", "required": False, "type": "boolean"},
            {"id": 13, "name": "n", "required": False, "type": "int"},
            {"id": 14, "name": "at_ms", "required": False, "type": "timestamptz"},
            {"id": 15, "name": "local_ms", "required": False, "type": "timestamp"},
            {"id": 16, "name": "tod_ms", "required": False, "type": "time"},
            {"id": 17, "name": "nested", "required": False, "type": {
                "type": "list", "element-id": 26, "element-required": False, "element": {
                    "type": "map", "key-id": 27, "key": "string", "value-id": 28, "value-required": True,
                    "value": {"type": "struct", "fields": [
                        {"id": 29, "name": "z", "required": False, "type": "int"}]}}}},
        ],
    }


def test_iceberg_schema_default_schema_id_and_hand_built_fields() -> None:
    schema = pa.schema([with_id("k", pa.string(), 4, nullable=False), with_id("v", pa.int64(), 0),
                        with_id("w", pa.large_string(), 7), with_id("b", pa.large_binary(), 8),
                        with_id("s", pa.int16(), 9)])

    assert iceberg_schema(schema) == {"type": "struct", "schema-id": 0, "fields": [
        {"id": 5, "name": "k", "required": True, "type": "string"},
        {"id": 1, "name": "v", "required": False, "type": "long"},
        {"id": 8, "name": "w", "required": False, "type": "string"},
        {"id": 9, "name": "b", "required": False, "type": "binary"},
        {"id": 10, "name": "s", "required": False, "type": "int"},
    ]}


def test_iceberg_id_is_column_id_plus_one() -> None:
    assert iceberg_id(with_id("a", pa.int32(), 0), "a") == 1
    assert iceberg_id(with_id("a", pa.int32(), 41), "a") == 42


def test_last_column_id_counts_nested_ids() -> None:
    assert last_column_id(internal_to_arrow(EVERY_TYPE)) == 29  # column 28 (`nested...z`), not 17
    deep_map = pa.schema([with_id("a", pa.int32(), 3),
                          with_id("m", pa.map_(with_id("key", pa.string(), 1, nullable=False),
                                               with_id("value", pa.int32(), 9)), 2)])
    assert last_column_id(deep_map) == 10  # the map value's id, not the top-level 4
    flat = pa.schema([with_id("a", pa.int32(), 3), with_id("b", pa.int32(), 1)])
    assert last_column_id(flat) == 4
    assert last_column_id(pa.schema([])) == 0


def test_file_schema_widens_millisecond_times_and_stamps_iceberg_ids() -> None:
    source = internal_to_arrow(EVERY_TYPE)
    out = file_schema_for_iceberg(source)

    assert out.names == source.names
    assert out.field("at_ms").type == pa.timestamp("us", tz="UTC")
    assert out.field("local_ms").type == pa.timestamp("us")
    assert out.field("tod_ms").type == pa.time64("us")
    # microsecond types, already Iceberg's, stay as they are
    assert source.field("at").type == out.field("at").type == pa.timestamp("us", tz="UTC")
    assert out.field("local").type == pa.timestamp("us")
    assert out.field("tod").type == pa.time64("us")
    assert out.field("amount").type == pa.decimal128(10, 2)
    assert out.field("digest").type == pa.binary(16)
    # every field, nested ones included, carries its Iceberg id (column id + 1); nullability kept
    assert [arrow_field_id(f) for f in out] == list(range(1, 18))
    assert [f.nullable for f in out] == [f.nullable for f in source]
    point = out.field("point").type
    assert [(point.field(i).name, arrow_field_id(point.field(i)), point.field(i).nullable) for i in range(2)] == [
        ("x", 21, False), ("y", 22, True)]
    tags = out.field("tags").type
    assert arrow_field_id(tags.value_field) == 23 and not tags.value_field.nullable
    attrs = out.field("attrs").type
    assert (arrow_field_id(attrs.key_field), arrow_field_id(attrs.item_field)) == (24, 25)
    nested = out.field("nested").type
    inner = nested.value_field.type
    assert arrow_field_id(nested.value_field) == 26
    assert (arrow_field_id(inner.key_field), arrow_field_id(inner.item_field)) == (27, 28)
    assert not inner.item_field.nullable
    assert arrow_field_id(inner.item_field.type.field(0)) == 29


def test_file_schema_widens_nested_times_and_narrow_types() -> None:
    source = pa.schema([
        with_id("s", pa.struct([with_id("t", pa.timestamp("ms"), 5), with_id("c", pa.time32("ms"), 6)]), 0),
        with_id("l", pa.list_(with_id("element", pa.timestamp("ms", tz="UTC"), 7)), 1),
        with_id("m", pa.map_(with_id("key", pa.string(), 8, nullable=False), with_id("value", pa.time32("ms"), 9)), 2),
        with_id("i8", pa.int8(), 3),
        with_id("ls", pa.large_string(), 4),
    ])
    out = file_schema_for_iceberg(source)

    struct = out.field("s").type
    assert [struct.field(i).type for i in range(2)] == [pa.timestamp("us"), pa.time64("us")]
    assert [arrow_field_id(struct.field(i)) for i in range(2)] == [6, 7]
    assert out.field("l").type.value_type == pa.timestamp("us", tz="UTC")
    assert out.field("m").type.item_type == pa.time64("us")
    assert out.field("i8").type == pa.int32()
    assert out.field("ls").type == pa.string()
    assert [arrow_field_id(f) for f in out] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(("file_type", "table_type", "same"), [
    (pa.int32(), pa.int32(), True),
    (pa.int64(), pa.int64(), True),
    (pa.string(), pa.string(), True),
    (pa.decimal128(5, 2), pa.decimal128(5, 2), True),
    (pa.timestamp("us", tz="UTC"), pa.timestamp("us", tz="UTC"), True),
    (pa.time64("us"), pa.time64("us"), True),
    (pa.binary(16), pa.binary(16), True),
    (pa.struct([("a", pa.int32()), ("b", pa.string())]), pa.struct([("a", pa.int32()), ("b", pa.string())]), True),
    (pa.int32(), pa.int64(), False),
    (pa.int64(), pa.int32(), False),
    (pa.float32(), pa.float64(), False),
    (pa.string(), pa.int32(), False),
    (pa.decimal128(5, 2), pa.decimal128(9, 2), False),
    (pa.timestamp("ms", tz="UTC"), pa.timestamp("ms", tz="UTC"), False),  # Iceberg has no ms timestamps
    (pa.time32("ms"), pa.time32("ms"), False),
    (pa.timestamp("us"), pa.timestamp("us", tz="UTC"), False),
    (pa.int16(), pa.int16(), False),  # written as int32 for Iceberg
    (pa.large_string(), pa.large_string(), False),
    (pa.struct([("a", pa.int32())]), pa.struct([("b", pa.int32())]), False),  # member renamed
    (pa.struct([("a", pa.int32())]), pa.struct([("a", pa.int32()), ("b", pa.int32())]), False),
    (pa.struct([("a", pa.int32())]), pa.struct([("a", pa.int64())]), False),
    (pa.struct([pa.field("a", pa.int32(), True)]), pa.struct([pa.field("a", pa.int32(), False)]), False),
    (pa.struct([pa.field("a", pa.int32(), False)]), pa.struct([pa.field("a", pa.int32(), True)]), True),
    # lists and maps: the same when their members are (element names aside)
    (pa.list_(pa.int32()), pa.list_(pa.int32()), True),
    (pa.list_(pa.field("item", pa.int32())), pa.list_(pa.field("element", pa.int32())), True),
    (pa.map_(pa.string(), pa.int32()), pa.map_(pa.string(), pa.int32()), True),
    (pa.struct([("l", pa.list_(pa.int32()))]), pa.struct([("l", pa.list_(pa.int32()))]), True),
    (pa.list_(pa.int32()), pa.list_(pa.int64()), False),  # a change inside: not even a promotion
    (pa.list_(pa.timestamp("ms")), pa.list_(pa.timestamp("ms")), False),
    (pa.list_(pa.field("e", pa.int32(), True)), pa.list_(pa.field("e", pa.int32(), False)), False),
    (pa.map_(pa.string(), pa.int32()), pa.map_(pa.string(), pa.string()), False),
    (pa.map_(pa.string(), pa.int32()), pa.map_(pa.int32(), pa.int32()), False),
    (pa.list_(pa.int32()), pa.map_(pa.int32(), pa.int32()), False),
    (pa.list_(pa.int32()), pa.int32(), False),
    (pa.struct([("a", pa.int32())]), pa.list_(pa.int32()), False),
    (pa.decimal256(40, 2), pa.decimal256(40, 2), False),  # unsupported: never the same, no error
])
def test_same_type(file_type: pa.DataType, table_type: pa.DataType, same: bool) -> None:
    assert same_type(file_type, table_type) is same


def test_same_type_ignores_field_ids_of_struct_members() -> None:
    ids = pa.struct([with_id("a", pa.int32(), 3)])
    other_ids = pa.struct([with_id("a", pa.int32(), 9)])
    assert same_type(ids, other_ids)


@pytest.mark.parametrize(("file_type", "table_type", "widens"), [
    (pa.int32(), pa.int64(), True),
    (pa.float32(), pa.float64(), True),
    (pa.decimal128(5, 2), pa.decimal128(9, 2), True),
    (pa.decimal128(5, 2), pa.decimal128(5, 2), True),
    (pa.int64(), pa.int32(), False),
    (pa.float64(), pa.float32(), False),
    (pa.decimal128(9, 2), pa.decimal128(5, 2), False),
    (pa.decimal128(5, 2), pa.decimal128(9, 3), False),  # scale change
    (pa.decimal128(5, 2), pa.decimal128(5, 1), False),
    (pa.string(), pa.int32(), False),
    (pa.int32(), pa.string(), False),
    (pa.int64(), pa.string(), False),
    (pa.int32(), pa.float64(), False),
    (pa.int64(), pa.float64(), False),
    (pa.date32(), pa.timestamp("us"), False),
])
def test_promotes(file_type: pa.DataType, table_type: pa.DataType, widens: bool) -> None:
    assert promotes(file_type, table_type) is widens


def _raises_naming(call, column: str) -> UnsupportedFeatureError:
    with pytest.raises(UnsupportedFeatureError) as caught:
        call()
    assert repr(column) in str(caught.value)
    return caught.value


WIDE_DECIMAL = pa.schema([with_id("ok", pa.int32(), 0), with_id("huge", pa.decimal256(40, 2), 1)])


def test_decimal_over_38_digits_is_refused_naming_the_column() -> None:
    for call in (lambda: iceberg_schema(WIDE_DECIMAL), lambda: file_schema_for_iceberg(WIDE_DECIMAL)):
        error = _raises_naming(call, "huge")
        assert error.feature == "decimal256"
        assert "decimal256(40, 2)" in str(error)


def test_nested_wide_decimal_is_refused_naming_its_path() -> None:
    schema = pa.schema([with_id("s", pa.struct([with_id("d", pa.decimal256(39, 0), 2)]), 0)])
    _raises_naming(lambda: iceberg_schema(schema), "s.d")
    _raises_naming(lambda: file_schema_for_iceberg(schema), "s.d")


def test_decimal256_within_38_digits_is_a_decimal() -> None:
    schema = pa.schema([with_id("d", pa.decimal256(38, 4), 0)])
    assert iceberg_schema(schema)["fields"][0]["type"] == "decimal(38, 4)"


def test_field_without_id_is_refused_naming_the_column() -> None:
    schema = pa.schema([with_id("a", pa.int32(), 0), pa.field("no_id", pa.string())])
    for call in (lambda: iceberg_schema(schema), lambda: file_schema_for_iceberg(schema),
                 lambda: last_column_id(schema)):
        error = _raises_naming(call, "no_id")
        assert error.feature == "column without id"


def test_nested_field_without_id_is_refused_naming_its_path() -> None:
    element_without_id = pa.schema([with_id("l", pa.list_(pa.field("element", pa.int32())), 0)])
    _raises_naming(lambda: iceberg_schema(element_without_id), "l.element")
    _raises_naming(lambda: last_column_id(element_without_id), "l.element")
    _raises_naming(lambda: file_schema_for_iceberg(element_without_id), "l.element")
    item_without_id = pa.schema([with_id("l", pa.list_(pa.field("item", pa.int32())), 0)])
    for check in (iceberg_schema, last_column_id, file_schema_for_iceberg):  # Iceberg's name, whatever Arrow's
        _raises_naming(lambda check=check: check(item_without_id), "l.element")
    value_without_id = pa.schema([with_id("m", pa.map_(with_id("key", pa.string(), 1, nullable=False),
                                                       pa.field("value", pa.int32())), 0)])
    _raises_naming(lambda: iceberg_schema(value_without_id), "m.value")
    _raises_naming(lambda: last_column_id(value_without_id), "m.value")
    member_without_id = pa.schema([with_id("s", pa.struct([pa.field("inner", pa.int32())]), 0)])
    _raises_naming(lambda: iceberg_schema(member_without_id), "s.inner")
    _raises_naming(lambda: file_schema_for_iceberg(member_without_id), "s.inner")


def test_type_without_iceberg_counterpart_is_refused_naming_the_column() -> None:
    schema = pa.schema([with_id("span", pa.duration("s"), 0)])
    _raises_naming(lambda: iceberg_schema(schema), "span")
    _raises_naming(lambda: file_schema_for_iceberg(schema), "span")
