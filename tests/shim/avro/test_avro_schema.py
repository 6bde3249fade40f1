"""Avro schema parsing, the Avro -> Arrow mapping and its inverse for writing."""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from avro_cases import SchemaMaker

from shim.avro import arrow_to_avro_schema, avro_to_arrow_schema, avro_to_arrow_type, parse_avro_schema
from shim.avro.schema import min_bytes_for_precision, named_once
from shim.errors import InvalidTableError, UnsupportedFeatureError
from shim.log import HeaderKey, parse_log_bytes
from tests.conftest import shared_tables_dir

SHARED = shared_tables_dir() or Path("/nonexistent/shared/hudi-tables")


def _record(*fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "record", "name": "r", "namespace": "ns", "fields": list(fields)}


def test_parse_avro_schema_inlines_named_references_in_namespaces() -> None:
    schema = _record(
        {"name": "a", "type": {"type": "fixed", "name": "Money", "size": 4}},
        {"name": "b", "type": ["null", "Money"]},
        {
            "name": "c",
            "type": {
                "type": "record",
                "name": "Inner",
                "namespace": "other",
                "fields": [
                    {"name": "m", "type": "ns.Money"},
                    {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X"]}},
                ],
            },
        },
        {"name": "d", "type": {"type": "array", "items": "other.E"}},
    )

    parsed = parse_avro_schema(json.dumps(schema))

    money = parsed["fields"][0]["type"]
    assert parsed["fields"][1]["type"] == ["null", money]
    assert parsed["fields"][2]["type"]["fields"][0]["type"] is money
    assert money == {"type": "fixed", "name": "Money", "namespace": "ns", "size": 4}
    assert parsed["fields"][3]["type"]["items"] == {
        "type": "enum",
        "name": "E",
        "namespace": "other",
        "symbols": ["X"],
    }


def test_parse_avro_schema_parsing_twice_gives_the_same_schema() -> None:
    schema = _record(
        {"name": "a", "type": {"type": "fixed", "name": "F", "size": 2}},
        {"name": "b", "type": "F"},
    )

    once = parse_avro_schema(schema)

    assert parse_avro_schema(once) == once


def test_parse_avro_schema_primitive_objects_become_names_but_keep_logical_types() -> None:
    schema = _record(
        {"name": "a", "type": {"type": "string"}},
        {"name": "b", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    )

    parsed = parse_avro_schema(schema)

    assert [f["type"] for f in parsed["fields"]] == [
        "string",
        {"type": "long", "logicalType": "timestamp-micros"},
    ]


def test_parse_avro_schema_malformed_json_raises_invalid_table() -> None:
    with pytest.raises(InvalidTableError, match=r"Avro schema is not valid JSON \(Expecting"):
        parse_avro_schema('{"type": "record", "name": ')


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (_record({"name": "a", "type": "Missing"}), "unknown type 'Missing' at ns.r.a"),
        ({"type": "record", "name": "r"}, "record 'r' has no 'fields' list"),
        (_record({"name": "a"}), "malformed field"),
        ({"type": "record", "fields": []}, "record at <schema> has no 'name'"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_parse_avro_schema_malformed_schema_raises_invalid_table_naming_it(schema: Any, message: str) -> None:
    with pytest.raises(InvalidTableError, match=message):
        parse_avro_schema(json.dumps(schema))


def test_parse_avro_schema_recursive_record_raises_unsupported() -> None:
    schema = _record({"name": "next", "type": ["null", "r"]})

    with pytest.raises(UnsupportedFeatureError, match="recursive type 'ns.r' at ns.r.next") as info:
        parse_avro_schema(schema)
    assert info.value.feature == "avro-recursive-type"


@pytest.mark.parametrize(
    ("avro_type", "arrow_type"),
    [
        ("boolean", pa.bool_()),
        ("int", pa.int32()),
        ("long", pa.int64()),
        ("float", pa.float32()),
        ("double", pa.float64()),
        ("bytes", pa.binary()),
        ("string", pa.string()),
        ({"type": "enum", "name": "E", "symbols": ["A"]}, pa.string()),
        ({"type": "fixed", "name": "F", "size": 16}, pa.binary(16)),
        ({"type": "int", "logicalType": "date"}, pa.date32()),
        ({"type": "int", "logicalType": "time-millis"}, pa.time32("ms")),
        ({"type": "long", "logicalType": "time-micros"}, pa.time64("us")),
        ({"type": "long", "logicalType": "timestamp-millis"}, pa.timestamp("ms", tz="UTC")),
        ({"type": "long", "logicalType": "timestamp-micros"}, pa.timestamp("us", tz="UTC")),
        ({"type": "long", "logicalType": "local-timestamp-millis"}, pa.timestamp("ms")),
        ({"type": "long", "logicalType": "local-timestamp-micros"}, pa.timestamp("us")),
        ({"type": "string", "logicalType": "uuid"}, pa.string()),
        ({"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}, pa.decimal128(10, 2)),
        (
            {"type": "fixed", "name": "D", "size": 5, "logicalType": "decimal", "precision": 10, "scale": 5},
            pa.decimal128(10, 5),
        ),
        ({"type": "bytes", "logicalType": "decimal", "precision": 39, "scale": 0}, pa.decimal256(39, 0)),
        ({"type": "bytes", "logicalType": "decimal", "scale": 2}, pa.binary()),
        ({"type": "fixed", "name": "D", "size": 2, "logicalType": "decimal", "precision": 10}, pa.binary(2)),
        ({"type": "long", "logicalType": "no-such-type"}, pa.int64()),
        ({"type": "array", "items": ["null", "int"]}, pa.list_(pa.field("element", pa.int32()))),
        ({"type": "array", "items": "int"}, pa.list_(pa.field("element", pa.int32(), nullable=False))),
        ({"type": "map", "values": ["null", "long"]}, pa.map_(pa.string(), pa.int64())),
        (
            {"type": "record", "name": "S", "fields": [{"name": "x", "type": ["null", "double"]}]},
            pa.struct([pa.field("x", pa.float64())]),
        ),
    ],
)
def test_avro_to_arrow_type_maps_each_avro_type(avro_type: Any, arrow_type: pa.DataType) -> None:
    parsed = parse_avro_schema(_record({"name": "f", "type": avro_type}))

    data_type, nullable = avro_to_arrow_type(parsed["fields"][0]["type"])

    assert data_type == arrow_type
    assert nullable is False


@pytest.mark.parametrize("union", [["null", "string"], ["string", "null"]])
def test_avro_to_arrow_type_null_union_either_order_is_nullable(union: list[str]) -> None:
    assert avro_to_arrow_type(union) == (pa.string(), True)


def test_avro_to_arrow_schema_multi_branch_union_raises_naming_field() -> None:
    schema = _record(
        {
            "name": "s",
            "type": {
                "type": "record",
                "name": "S",
                "fields": [{"name": "v", "type": ["null", "int", "string"]}],
            },
        }
    )

    with pytest.raises(
        UnsupportedFeatureError, match="Avro field 's.v' is a union of 2 non-null types"
    ) as info:
        avro_to_arrow_schema(schema)
    assert (info.value.feature, info.value.column) == ("avro-union", "s.v")


def test_arrow_to_avro_schema_names_nested_types_like_hudi() -> None:
    schema = pa.schema(
        [
            pa.field("id", pa.int32(), nullable=False),
            pa.field("price", pa.decimal128(10, 2)),
            pa.field("tags", pa.list_(pa.field("element", pa.struct([pa.field("k", pa.string())])))),
            pa.field("attrs", pa.map_(pa.string(), pa.int64())),
            pa.field(
                "inner",
                pa.struct(
                    [pa.field("when", pa.timestamp("us", tz="UTC")), pa.field("amount", pa.decimal128(4, 1))]
                ),
            ),
        ]
    )

    avro = arrow_to_avro_schema(schema, "t_record", "hoodie.t")

    assert avro == {
        "type": "record",
        "name": "t_record",
        "namespace": "hoodie.t",
        "fields": [
            {"name": "id", "type": "int"},
            {
                "name": "price",
                "type": [
                    "null",
                    {
                        "type": "fixed",
                        "name": "fixed",
                        "namespace": "hoodie.t.t_record.price",
                        "size": 5,
                        "logicalType": "decimal",
                        "precision": 10,
                        "scale": 2,
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
                        "items": [
                            "null",
                            {
                                "type": "record",
                                "name": "tags",
                                "namespace": "hoodie.t.t_record",
                                "fields": [{"name": "k", "type": ["null", "string"], "default": None}],
                            },
                        ],
                    },
                ],
                "default": None,
            },
            {"name": "attrs", "type": ["null", {"type": "map", "values": ["null", "long"]}], "default": None},
            {
                "name": "inner",
                "type": [
                    "null",
                    {
                        "type": "record",
                        "name": "inner",
                        "namespace": "hoodie.t.t_record",
                        "fields": [
                            {
                                "name": "when",
                                "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}],
                                "default": None,
                            },
                            {
                                "name": "amount",
                                "type": [
                                    "null",
                                    {
                                        "type": "fixed",
                                        "name": "fixed",
                                        "namespace": "hoodie.t.t_record.inner.amount",
                                        "size": 2,
                                        "logicalType": "decimal",
                                        "precision": 4,
                                        "scale": 1,
                                    },
                                ],
                                "default": None,
                            },
                        ],
                    },
                ],
                "default": None,
            },
        ],
    }


@pytest.mark.parametrize("seed", range(25))
def test_arrow_to_avro_schema_round_trip_keeps_arrow_types(seed: int) -> None:
    avro = SchemaMaker(random.Random(seed)).record(fields=8)
    arrow = avro_to_arrow_schema(avro)

    back = avro_to_arrow_schema(arrow_to_avro_schema(arrow, "x_record", "hoodie.x"))

    assert back == arrow
    fastavro.parse_schema(arrow_to_avro_schema(arrow, "x_record", "hoodie.x"))


def test_arrow_to_avro_schema_unsupported_type_names_column() -> None:
    with pytest.raises(UnsupportedFeatureError, match="column 'big' has Arrow type uint64") as info:
        arrow_to_avro_schema(pa.schema([pa.field("big", pa.uint64())]), "r", None)
    assert info.value.feature == "arrow-type"


def test_named_once_defines_each_named_type_once_for_fastavro() -> None:
    parsed = parse_avro_schema(
        _record(
            {"name": "a", "type": {"type": "fixed", "name": "F", "size": 2}},
            {"name": "b", "type": ["null", "F"]},
            {
                "name": "c",
                "type": {
                    "type": "record",
                    "name": "O",
                    "namespace": "other",
                    "fields": [{"name": "f", "type": "ns.F"}],
                },
            },
        )
    )

    plain = named_once(parsed)

    assert plain["fields"][0]["type"] == {"type": "fixed", "name": "F", "namespace": "ns", "size": 2}
    assert plain["fields"][1]["type"] == ["null", "F"]
    assert plain["fields"][2]["type"]["fields"][0]["type"] == "ns.F"
    fastavro.parse_schema(plain)


@pytest.mark.parametrize(("precision", "size"), [(1, 1), (2, 1), (3, 2), (9, 4), (10, 5), (18, 8), (38, 16)])
def test_min_bytes_for_precision_matches_spark(precision: int, size: int) -> None:
    assert min_bytes_for_precision(precision) == size


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs the real Hudi tables in /work/shared/hudi-tables")
def test_arrow_to_avro_schema_reproduces_hudi_writer_schema() -> None:
    """The SCHEMA header Hudi wrote for a table of all types, from its Arrow form (docs aside)."""
    with zipfile.ZipFile(SHARED / "sample__mor__parquet__v6_nonpartitioned.zip") as archive:
        name = next(n for n in archive.namelist() if ".log." in n and "__MACOSX" not in n)
        data = archive.read(name)
    block = parse_log_bytes(data, name).blocks[0]
    hudi_schema = json.loads(block.header[HeaderKey.SCHEMA])
    for field in hudi_schema["fields"]:
        field.pop("doc", None)

    ours = arrow_to_avro_schema(
        avro_to_arrow_schema(hudi_schema), hudi_schema["name"], hudi_schema["namespace"]
    )

    assert ours == hudi_schema
