"""InternalSchema <-> Arrow: the shared type mapping and field ids in metadata."""

from __future__ import annotations

import pyarrow as pa
import pytest

from shim.errors import UnsupportedFeatureError
from shim.schema import (
    FIELD_ID_KEY,
    InternalSchema,
    internal_from_arrow,
    internal_from_avro,
    internal_to_arrow,
)
from shim.schema import types as t
from shim.schema.arrow import arrow_primitive_to_internal, type_to_arrow


@pytest.mark.parametrize(
    ("internal", "arrow"),
    [
        (t.BOOLEAN, pa.bool_()),
        (t.INT, pa.int32()),
        (t.LONG, pa.int64()),
        (t.FLOAT, pa.float32()),
        (t.DOUBLE, pa.float64()),
        (t.BINARY, pa.binary()),
        (t.STRING, pa.string()),
        (t.FixedType(16), pa.binary(16)),
        (t.UUID, pa.string()),
        (t.DATE, pa.date32()),
        (t.TIME, pa.time64("us")),
        (t.TIMESTAMP, pa.timestamp("us", tz="UTC")),
        (t.DecimalType(10, 2), pa.decimal128(10, 2)),
        (t.DecimalType(38, 0), pa.decimal128(38, 0)),
        (t.DecimalType(39, 4), pa.decimal256(39, 4)),
        (t.TIME_MILLIS, pa.time32("ms")),
        (t.TIMESTAMP_MILLIS, pa.timestamp("ms", tz="UTC")),
        (t.LOCAL_TIMESTAMP_MICROS, pa.timestamp("us")),
        (t.LOCAL_TIMESTAMP_MILLIS, pa.timestamp("ms")),
    ],
)
def test_type_to_arrow_primitive_matches_the_shared_mapping(internal, arrow):
    assert type_to_arrow(internal) == arrow


def test_type_to_arrow_nested_types_name_children_like_the_avro_mapping():
    assert type_to_arrow(t.ArrayType(1, t.INT, False)) == pa.list_(pa.field("element", pa.int32(), False))
    assert type_to_arrow(t.MapType(1, t.STRING, 2, t.LONG, True)) == pa.map_(
        pa.field("key", pa.string(), False), pa.field("value", pa.int64(), True)
    )
    assert type_to_arrow(t.RecordType((t.Field(1, "a", t.INT, False),))) == pa.struct(
        [pa.field("a", pa.int32(), False)]
    )


def _id(field: pa.Field) -> int:
    return int(field.metadata[FIELD_ID_KEY])


def test_internal_to_arrow_every_field_carries_its_id():
    schema = InternalSchema.of(
        [
            t.Field(0, "a", t.INT, False),
            t.Field(1, "s", t.RecordType((t.Field(5, "x", t.STRING),))),
            t.Field(2, "l", t.ArrayType(6, t.RecordType((t.Field(7, "y", t.LONG),)))),
            t.Field(3, "m", t.MapType(8, t.STRING, 9, t.ArrayType(10, t.DOUBLE))),
        ]
    )
    arrow = internal_to_arrow(schema)
    assert [_id(f) for f in arrow] == [0, 1, 2, 3]
    assert arrow.field("a").nullable is False
    assert _id(arrow.field("s").type.field("x")) == 5
    element = arrow.field("l").type.value_field
    assert (_id(element), _id(element.type.field("y"))) == (6, 7)
    m = arrow.field("m").type
    assert (_id(m.key_field), _id(m.item_field), _id(m.item_field.type.value_field)) == (8, 9, 10)


def test_internal_to_arrow_equals_avro_helper_mapping_for_avro_schemas():
    avro_schema = pytest.importorskip("shim.avro.schema")
    avro = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "b", "type": ["null", "boolean"]},
            {"name": "i", "type": "int"},
            {"name": "l", "type": ["null", "long"]},
            {"name": "f", "type": "float"},
            {"name": "d", "type": "double"},
            {"name": "by", "type": "bytes"},
            {"name": "s", "type": ["null", "string"]},
            {"name": "fx", "type": {"type": "fixed", "name": "fx", "size": 4}},
            {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "dt", "type": {"type": "int", "logicalType": "date"}},
            {"name": "tm", "type": {"type": "long", "logicalType": "time-micros"}},
            {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
            {"name": "tsm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "lts", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
            {
                "name": "dec",
                "type": {
                    "type": "fixed",
                    "name": "dec",
                    "size": 5,
                    "logicalType": "decimal",
                    "precision": 10,
                    "scale": 2,
                },
            },
            {
                "name": "bigdec",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 2},
            },
            {
                "name": "rec",
                "type": [
                    "null",
                    {"type": "record", "name": "rec", "fields": [{"name": "x", "type": ["null", "int"]}]},
                ],
            },
            {"name": "arr", "type": {"type": "array", "items": ["null", "string"]}},
            {"name": "map", "type": {"type": "map", "values": "long"}},
        ],
    }
    ours = internal_to_arrow(internal_from_avro(avro))
    theirs = avro_schema.avro_to_arrow_schema(avro)
    assert ours.remove_metadata() == theirs
    assert [(f.name, f.type, f.nullable) for f in ours] == [(f.name, f.type, f.nullable) for f in theirs]


def test_internal_from_arrow_assigns_fresh_ids_in_hudi_order():
    arrow = pa.schema(
        [
            pa.field("a", pa.int32()),
            pa.field("s", pa.struct([pa.field("x", pa.list_(pa.int64()))])),
            pa.field("m", pa.map_(pa.string(), pa.struct([pa.field("y", pa.float64())]))),
        ]
    )
    schema = internal_from_arrow(arrow)
    assert schema.record == t.RecordType(
        (
            t.Field(0, "a", t.INT),
            t.Field(1, "s", t.RecordType((t.Field(3, "x", t.ArrayType(4, t.LONG)),))),
            t.Field(2, "m", t.MapType(5, t.STRING, 6, t.RecordType((t.Field(7, "y", t.DOUBLE),)))),
        )
    )


def test_internal_from_arrow_use_field_ids_round_trips_internal_to_arrow():
    schema = InternalSchema.of(
        [
            t.Field(4, "a", t.INT, False),
            t.Field(9, "m", t.MapType(11, t.STRING, 12, t.ArrayType(13, t.DecimalType(5, 1)))),
        ],
        version_id=3,
    )
    assert internal_from_arrow(internal_to_arrow(schema), version_id=3, use_field_ids=True) == schema


def test_internal_from_arrow_use_field_ids_without_ids_falls_back_to_fresh_ids():
    schema = internal_from_arrow(
        pa.schema([pa.field("a", pa.int32()), pa.field("b", pa.string())]), use_field_ids=True
    )
    assert [f.id for f in schema.fields] == [0, 1]


@pytest.mark.parametrize(
    ("arrow", "expected"),
    [
        (pa.int8(), t.INT),
        (pa.int16(), t.INT),
        (pa.large_string(), t.STRING),
        (pa.large_binary(), t.BINARY),
        (pa.timestamp("ns", tz="UTC"), t.TIMESTAMP),
        (pa.timestamp("ns"), t.LOCAL_TIMESTAMP_MICROS),
        (pa.timestamp("s", tz="UTC"), t.TIMESTAMP_MILLIS),
        (pa.dictionary(pa.int32(), pa.string()), t.STRING),
        (pa.date64(), t.DATE),
    ],
)
def test_arrow_primitive_to_internal_other_representations_map_to_the_same_type(arrow, expected):
    assert arrow_primitive_to_internal(arrow) == expected


def test_arrow_primitive_to_internal_uint64_is_unsupported():
    with pytest.raises(UnsupportedFeatureError, match="column 'c' has Arrow type uint64"):
        arrow_primitive_to_internal(pa.uint64(), "c")
