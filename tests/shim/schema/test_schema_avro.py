"""Avro <-> InternalSchema, with Hudi's id assignment order."""

from __future__ import annotations

import io
import json
from pathlib import Path

import fastavro
import pytest

from shim.errors import InvalidTableError
from shim.schema import InternalSchema, add_meta_fields, internal_from_avro, internal_to_avro, schema_to_json
from shim.schema import types as t
from shim.schema.avro import min_bytes_for_precision
from tests.conftest import shared_tables_dir

SHARED = shared_tables_dir() or Path("/nonexistent/shared/hudi-tables")


def _opt(avro_type):
    return ["null", avro_type]


NESTED_AVRO = {
    "type": "record",
    "name": "rec",
    "namespace": "ns",
    "fields": [
        {"name": "a", "type": "int"},
        {
            "name": "b",
            "type": _opt(
                {
                    "type": "record",
                    "name": "b",
                    "fields": [
                        {"name": "c", "type": _opt("int"), "default": None},
                        {
                            "name": "d",
                            "type": {
                                "type": "array",
                                "items": {
                                    "type": "record",
                                    "name": "e_rec",
                                    "fields": [{"name": "e", "type": "int"}],
                                },
                            },
                        },
                    ],
                }
            ),
            "default": None,
        },
        {
            "name": "f",
            "type": {
                "type": "map",
                "values": _opt({"type": "record", "name": "g_rec", "fields": [{"name": "g", "type": "int"}]}),
            },
        },
        {"name": "h", "type": "long", "doc": "the h"},
    ],
}


def test_internal_from_avro_nested_ids_follow_hudi_order():
    # Root fields 0-3; then depth-first: b's record takes 4-5, d's element 6, its record 7;
    # f's key and value 8-9, the value record 10.
    schema = internal_from_avro(NESTED_AVRO)
    assert schema.record == t.RecordType(
        (
            t.Field(0, "a", t.INT, False),
            t.Field(
                1,
                "b",
                t.RecordType(
                    (
                        t.Field(4, "c", t.INT, True),
                        t.Field(
                            5,
                            "d",
                            t.ArrayType(6, t.RecordType((t.Field(7, "e", t.INT, False),)), False),
                            False,
                        ),
                    )
                ),
                True,
            ),
            t.Field(
                2,
                "f",
                t.MapType(8, t.STRING, 9, t.RecordType((t.Field(10, "g", t.INT, False),)), True),
                False,
            ),
            t.Field(3, "h", t.LONG, False, "the h"),
        )
    )
    assert schema.max_column_id == 10
    assert schema.record.name == "ns.rec"
    assert schema.find_field(1).type.name == "ns.b"


def test_internal_from_avro_add_meta_puts_meta_columns_at_ids_0_to_4():
    schema = internal_from_avro(NESTED_AVRO, add_meta=True, version_id=7)
    assert schema.field_names()[:6] == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
        "a",
    ]
    assert schema.find_field(0) == t.Field(0, "_hoodie_commit_time", t.STRING, True, "")
    assert schema.find_field_by_name("b.c").id == 9  # root now has 9 fields: 0-8
    assert schema.version_id == 7


def test_add_meta_fields_existing_meta_columns_are_not_duplicated():
    with_meta = add_meta_fields(NESTED_AVRO)
    again = add_meta_fields(with_meta)
    assert [f["name"] for f in again["fields"]] == [f["name"] for f in with_meta["fields"]]


def test_internal_from_avro_multi_branch_union_takes_first_non_null_and_ids_of_all_branches():
    avro = {
        "type": "record",
        "name": "r",
        "fields": [
            {
                "name": "u",
                "type": [
                    "null",
                    {
                        "type": "record",
                        "name": "x",
                        "fields": [{"name": "x1", "type": "int"}, {"name": "x2", "type": "int"}],
                    },
                    {"type": "record", "name": "y", "fields": [{"name": "y1", "type": "int"}]},
                ],
            },
            {"name": "v", "type": {"type": "record", "name": "z", "fields": [{"name": "z1", "type": "int"}]}},
        ],
    }
    schema = internal_from_avro(avro)
    u = schema.find_field(0)
    assert u.optional is False  # a three-branch union is not "optional" to Hudi
    assert u.type == t.RecordType((t.Field(2, "x1", t.INT, False), t.Field(3, "x2", t.INT, False)))
    assert schema.find_field_by_name("v.z1").id == 5  # 4 went to the discarded branch y


@pytest.mark.parametrize(
    ("avro_type", "expected", "optional"),
    [
        ("boolean", t.BOOLEAN, False),
        (["int", "null"], t.INT, True),
        ("float", t.FLOAT, False),
        ("double", t.DOUBLE, False),
        ("bytes", t.BINARY, False),
        ("string", t.STRING, False),
        ({"type": "enum", "name": "E", "symbols": ["A"]}, t.STRING, False),
        ({"type": "fixed", "name": "F", "size": 7}, t.FixedType(7), False),
        (
            {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 3},
            t.DecimalType(12, 3),
            False,
        ),
        (
            {"type": "fixed", "name": "D", "size": 5, "logicalType": "decimal", "precision": 10, "scale": 5},
            t.DecimalType(10, 5),
            False,
        ),
        ({"type": "int", "logicalType": "date"}, t.DATE, False),
        ({"type": "int", "logicalType": "time-millis"}, t.TIME_MILLIS, False),
        ({"type": "long", "logicalType": "time-micros"}, t.TIME, False),
        ({"type": "long", "logicalType": "timestamp-millis"}, t.TIMESTAMP_MILLIS, False),
        ({"type": "long", "logicalType": "timestamp-micros"}, t.TIMESTAMP, False),
        ({"type": "long", "logicalType": "local-timestamp-micros"}, t.LOCAL_TIMESTAMP_MICROS, False),
        ({"type": "long", "logicalType": "local-timestamp-millis"}, t.LOCAL_TIMESTAMP_MILLIS, False),
        ({"type": "string", "logicalType": "uuid"}, t.UUID, False),
        ({"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"}, t.UUID, False),
    ],
)
def test_internal_from_avro_primitive_maps_to_hudi_type(avro_type, expected, optional):
    schema = internal_from_avro({"type": "record", "name": "r", "fields": [{"name": "c", "type": avro_type}]})
    assert schema.find_field(0) == t.Field(0, "c", expected, optional)


def test_internal_from_avro_named_type_reference_resolves_in_namespace():
    avro = {
        "type": "record",
        "name": "r",
        "namespace": "n",
        "fields": [
            {"name": "a", "type": {"type": "fixed", "name": "f16", "size": 16}},
            {"name": "b", "type": "f16"},
            {"name": "c", "type": "n.f16"},
        ],
    }
    assert [f.type for f in internal_from_avro(avro).fields] == [t.FixedType(16)] * 3


def test_internal_from_avro_recursive_record_raises():
    avro = {
        "type": "record",
        "name": "node",
        "fields": [{"name": "next", "type": ["null", "node"]}],
    }
    with pytest.raises(InvalidTableError, match="recursive"):
        internal_from_avro(avro)


def test_internal_from_avro_not_a_record_raises():
    with pytest.raises(InvalidTableError, match="not a record"):
        internal_from_avro('{"type": "array", "items": "int"}')


def test_internal_from_avro_json_text_equals_dict_input():
    assert internal_from_avro(json.dumps(NESTED_AVRO)) == internal_from_avro(NESTED_AVRO)


@pytest.mark.parametrize(
    ("precision", "size"), [(1, 1), (2, 1), (3, 2), (9, 4), (10, 5), (18, 8), (19, 9), (38, 16)]
)
def test_min_bytes_for_precision_matches_spark(precision, size):
    assert min_bytes_for_precision(precision) == size


def test_internal_to_avro_names_nested_types_as_hudi():
    schema = InternalSchema.of(
        [
            t.Field(0, "id", t.INT, False),
            t.Field(
                1,
                "fare",
                t.RecordType(
                    (t.Field(4, "amount", t.DecimalType(10, 2)), t.Field(5, "when", t.TIMESTAMP, False))
                ),
            ),
            t.Field(2, "tags", t.ArrayType(6, t.RecordType((t.Field(7, "k", t.UUID),)), False)),
            t.Field(3, "m", t.MapType(8, t.STRING, 9, t.DATE, True), True, "a map"),
        ]
    )
    assert internal_to_avro(schema, "trip") == {
        "type": "record",
        "name": "trip",
        "fields": [
            {"name": "id", "type": "int"},
            {
                "name": "fare",
                "type": [
                    "null",
                    {
                        "type": "record",
                        "name": "fare",
                        "namespace": "trip",
                        "fields": [
                            {
                                "name": "amount",
                                "type": [
                                    "null",
                                    {
                                        "type": "fixed",
                                        "name": "fixed",
                                        "namespace": "trip.fare.amount",
                                        "size": 5,
                                        "logicalType": "decimal",
                                        "precision": 10,
                                        "scale": 2,
                                    },
                                ],
                                "default": None,
                            },
                            {"name": "when", "type": {"type": "long", "logicalType": "timestamp-micros"}},
                        ],
                    },
                ],
                "default": None,
            },
            {
                "name": "tags",
                "type": [
                    "null",
                    {
                        "type": "array",
                        "items": {
                            "type": "record",
                            "name": "tags",
                            "namespace": "trip",
                            "fields": [
                                {
                                    "name": "k",
                                    "type": [
                                        "null",
                                        {
                                            "type": "fixed",
                                            "name": "fixed",
                                            "namespace": "trip.tags.k",
                                            "size": 16,
                                            "logicalType": "uuid",
                                        },
                                    ],
                                    "default": None,
                                }
                            ],
                        },
                    },
                ],
                "default": None,
            },
            {
                "name": "m",
                "type": ["null", {"type": "map", "values": ["null", {"type": "int", "logicalType": "date"}]}],
                "doc": "a map",
                "default": None,
            },
        ],
    }


def test_internal_to_avro_record_keeps_its_avro_name():
    schema = internal_from_avro(NESTED_AVRO)
    avro = internal_to_avro(schema, "ignored")
    assert (avro["name"], avro["namespace"]) == ("rec", "ns")


def test_internal_to_avro_equal_records_are_referenced_by_name():
    point = t.RecordType((t.Field(3, "x", t.INT),))
    schema = InternalSchema.of([t.Field(0, "p", point, False), t.Field(1, "q", point, False)])
    avro = internal_to_avro(schema, "r")
    assert avro["fields"][1]["type"] == "r.p"
    fastavro.parse_schema(avro)


def test_internal_to_avro_round_trip_keeps_ids_and_types():
    schema = internal_from_avro(NESTED_AVRO)
    assert internal_from_avro(internal_to_avro(schema, "x")) == schema


def test_internal_to_avro_output_writes_and_reads_with_fastavro():
    schema = InternalSchema.of(
        [
            t.Field(0, "id", t.INT, False),
            t.Field(1, "price", t.DecimalType(10, 2)),
            t.Field(2, "tags", t.ArrayType(3, t.STRING)),
        ]
    )
    parsed = fastavro.parse_schema(internal_to_avro(schema, "r"))
    from decimal import Decimal

    buffer = io.BytesIO()
    record = {"id": 1, "price": Decimal("12.34"), "tags": ["a", None]}
    fastavro.writer(buffer, parsed, [record])
    buffer.seek(0)
    assert list(fastavro.reader(buffer)) == [record]


@pytest.mark.skipif(not SHARED.exists(), reason="needs ../shared/hudi-tables (real Hudi tables)")
def test_internal_from_avro_real_commit_schema_gets_spark_ids(tmp_path):
    import zipfile

    with zipfile.ZipFile(SHARED / "sample__cow__v6_simplekeygen_nonhivestyle.zip") as z:
        name = next(
            n for n in z.namelist() if n.endswith(".hoodie/20240418172804498.commit") and "MACOSX" not in n
        )
        commit = json.loads(z.read(name))
    schema = internal_from_avro(
        commit["extraMetadata"]["schema"], add_meta=True, version_id=20240418172804498
    )
    ids = {
        name: schema.find_id(name)
        for name in (
            "id",
            "byteField",
            "arrayField.element",
            "arrayField.element.arr_struct_f2",
            "mapField.key",
            "mapField.value.map_field_value_struct_f1",
            "structField.child_struct.child_field2",
        )
    }
    assert ids == {
        "id": 5,
        "byteField": 20,
        "arrayField.element": 21,
        "arrayField.element.arr_struct_f2": 23,
        "mapField.key": 24,
        "mapField.value.map_field_value_struct_f1": 26,
        "structField.child_struct.child_field2": 32,
    }
    assert schema.find_type("decimalField") == t.DecimalType(10, 5)
    assert schema_to_json(schema).startswith(
        '{"max_column_id":32,"version_id":20240418172804498,"type":"record","fields":[{"id":0,'
        '"name":"_hoodie_commit_time","optional":true,"type":"string","doc":""}'
    )
