"""InternalSchema JSON, checked byte for byte against the layout Hudi's SerDeHelper writes."""

from __future__ import annotations

import pytest

from shim.errors import InvalidTableError
from shim.schema import (
    history_from_json,
    history_to_json,
    inherit_schema_history,
    schema_from_json,
    schema_to_json,
    search_schema,
)
from shim.schema import types as t
from shim.schema.internal_schema import InternalSchema
from shim.schema.serde import parse_type_token

# Written by hand in SerDeHelper's layout: Jackson, no whitespace, keys in its order, meta
# column doc "", a dropped column (max_column_id above every id), nested record, array, map.
NESTED_JSON = (
    '{"max_column_id":14,"version_id":20240101120000000,"type":"record","fields":['
    '{"id":0,"name":"_hoodie_commit_time","optional":true,"type":"string","doc":""},'
    '{"id":1,"name":"id","optional":false,"type":"int"},'
    '{"id":2,"name":"price","optional":true,"type":"decimal(10, 2)","doc":"unit price"},'
    '{"id":3,"name":"address","optional":true,"type":{"type":"record","fields":['
    '{"id":7,"name":"city","optional":true,"type":"string"},'
    '{"id":8,"name":"zip","optional":false,"type":"fixed[16]"}]}},'
    '{"id":4,"name":"tags","optional":true,"type":{"type":"array","element_id":9,"element":"string",'
    '"element_optional":true}},'
    '{"id":5,"name":"attrs","optional":true,"type":{"type":"map","key_id":10,"key":"string","value_id":11,'
    '"value":{"type":"record","fields":[{"id":12,"name":"v","optional":true,"type":"long"},'
    '{"id":13,"name":"at","optional":true,"type":"timestamp"}]},"value_optional":false}},'
    '{"id":6,"name":"d","optional":true,"type":"date"}]}'
)

NESTED = InternalSchema(
    t.RecordType(
        (
            t.Field(0, "_hoodie_commit_time", t.STRING, True, ""),
            t.Field(1, "id", t.INT, False),
            t.Field(2, "price", t.DecimalType(10, 2), True, "unit price"),
            t.Field(
                3,
                "address",
                t.RecordType((t.Field(7, "city", t.STRING), t.Field(8, "zip", t.FixedType(16), False))),
            ),
            t.Field(4, "tags", t.ArrayType(9, t.STRING, True)),
            t.Field(
                5,
                "attrs",
                t.MapType(
                    10,
                    t.STRING,
                    11,
                    t.RecordType((t.Field(12, "v", t.LONG), t.Field(13, "at", t.TIMESTAMP))),
                    False,
                ),
            ),
            t.Field(6, "d", t.DATE),
        )
    ),
    version_id=20240101120000000,
    max_column_id=14,
)


def test_schema_from_json_nested_schema_builds_the_model():
    assert schema_from_json(NESTED_JSON) == NESTED
    assert schema_from_json(NESTED_JSON).max_column_id == 14


def test_schema_to_json_nested_schema_is_byte_identical_to_hudi():
    assert schema_to_json(NESTED) == NESTED_JSON


def test_schema_to_json_every_primitive_writes_hudi_tokens():
    primitives = [
        t.BOOLEAN,
        t.INT,
        t.LONG,
        t.FLOAT,
        t.DOUBLE,
        t.DATE,
        t.TIME,
        t.TIMESTAMP,
        t.STRING,
        t.UUID,
        t.BINARY,
        t.FixedType(16),
        t.DecimalType(38, 10),
    ]
    schema = InternalSchema.of([t.Field(i, f"c{i}", p) for i, p in enumerate(primitives)], version_id=1)
    text = schema_to_json(schema)
    tokens = [
        "boolean",
        "int",
        "long",
        "float",
        "double",
        "date",
        "time",
        "timestamp",
        "string",
        "uuid",
        "binary",
        "fixed[16]",
        "decimal(38, 10)",
    ]
    expected_fields = ",".join(
        f'{{"id":{i},"name":"c{i}","optional":true,"type":"{tok}"}}' for i, tok in enumerate(tokens)
    )
    assert text == '{"max_column_id":12,"version_id":1,"type":"record","fields":[' + expected_fields + "]}"
    assert schema_from_json(text) == schema


def test_schema_from_json_without_version_gets_version_zero_and_computed_max_id():
    text = '{"max_column_id":40,"type":"record","fields":[{"id":3,"name":"a","optional":true,"type":"int"}]}'
    schema = schema_from_json(text)
    # Hudi ignores max_column_id when the version is absent and computes it.
    assert (schema.version_id, schema.max_column_id) == (0, 3)


def test_schema_from_json_without_max_id_computes_it_over_nested_ids():
    # the hyphenated keys this project's writer used before Hudi's own spelling: still read
    text = (
        '{"version-id":7,"type":"record","fields":[{"id":0,"name":"m","optional":true,"type":'
        '{"type":"map","key-id":1,"key":"string","value-id":2,"value":"int","value_optional":true}}]}'
    )
    assert schema_from_json(text).max_column_id == 2


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("decimal(10,2)", t.DecimalType(10, 2)),
        ("decimal_bytes(12,3)", t.DecimalType(12, 3)),
        ("decimal_fixed(12, 3)[6]", t.DecimalType(12, 3)),
        ("DECIMAL(5, 1)", t.DecimalType(5, 1)),
        ("fixed[3]", t.FixedType(3)),
        ("timestamp-millis", t.TIMESTAMP_MILLIS),
        ("local-timestamp-micros", t.LOCAL_TIMESTAMP_MICROS),
        ("local-timestamp-millis", t.LOCAL_TIMESTAMP_MILLIS),
        ("time-millis", t.TIME_MILLIS),
    ],
)
def test_parse_type_token_variants_of_other_hudi_versions_parse(token, expected):
    assert parse_type_token(token) == expected


def test_parse_type_token_unknown_token_raises_naming_it():
    with pytest.raises(InvalidTableError, match="unknown type 'varchar'"):
        parse_type_token("varchar")


def test_schema_from_json_underscore_keys_parse_like_hyphen_keys():
    text = (
        '{"max_column_id":3,"version_id":5,"type":"record","fields":['
        '{"id":0,"name":"a","optional":true,"type":{"type":"array","element_id":1,"element":"int",'
        '"element_optional":false}},'
        '{"id":2,"name":"m","optional":true,"type":{"type":"map","key_id":3,"key":"string","value_id":4,'
        '"value":"int","value_optional":true}}]}'
    )
    schema = schema_from_json(text)
    assert schema.version_id == 5
    assert schema.find_field(0).type == t.ArrayType(1, t.INT, False)
    assert schema.find_field(2).type == t.MapType(3, t.STRING, 4, t.INT, True)


def test_schema_to_json_special_characters_escape_like_jackson():
    schema = InternalSchema.of([t.Field(0, 'we"ird\\na\nme\x01é/', t.INT, True, "tab\there")], version_id=1)
    assert schema_to_json(schema) == (
        '{"max_column_id":0,"version_id":1,"type":"record","fields":[{"id":0,'
        '"name":"we\\"ird\\\\na\\nme\\u0001é/","optional":true,"type":"int","doc":"tab\\there"}]}'
    )
    assert schema_from_json(schema_to_json(schema)) == schema


@pytest.mark.parametrize("text", ["", "{not json", "[]", '{"type":"record"}', '{"type":"array","fields":[]}'])
def test_schema_from_json_malformed_raises_invalid_table_error(text):
    with pytest.raises(InvalidTableError):
        schema_from_json(text)


def _simple(version: int, max_id: int, name: str) -> InternalSchema:
    return InternalSchema.of([t.Field(0, name, t.INT)], version_id=version, max_column_id=max_id)


V1_JSON = '{"max_column_id":0,"version_id":100,"type":"record","fields":[{"id":0,"name":"a","optional":true,"type":"int"}]}'
V2_JSON = '{"max_column_id":0,"version_id":200,"type":"record","fields":[{"id":0,"name":"b","optional":true,"type":"int"}]}'


def test_history_to_json_writes_schemas_in_given_order():
    text = history_to_json([_simple(200, 0, "b"), _simple(100, 0, "a")])
    assert text == '{"schemas":[' + V2_JSON + "," + V1_JSON + "]}"


def test_history_from_json_returns_newest_first_whatever_the_file_order():
    history = history_from_json('{"schemas":[' + V1_JSON + "," + V2_JSON + "]}")
    assert [s.version_id for s in history] == [200, 100]
    assert history[0].field_names() == ["b"]


def test_history_from_json_duplicate_version_later_entry_wins():
    other = V1_JSON.replace('"name":"a"', '"name":"z"')
    history = history_from_json('{"schemas":[' + V1_JSON + "," + other + "]}")
    assert [(s.version_id, s.field_names()) for s in history] == [(100, ["z"])]


def test_history_from_json_without_schemas_key_raises():
    with pytest.raises(InvalidTableError, match="'schemas'"):
        history_from_json('{"other":[]}')


def test_inherit_schema_history_prepends_new_schema_by_string_surgery():
    old = '{"schemas":[' + V1_JSON + "]}"
    assert (
        inherit_schema_history(_simple(200, 0, "b"), old) == '{"schemas":[' + V2_JSON + "," + V1_JSON + "]}"
    )


def test_inherit_schema_history_without_history_starts_one():
    assert inherit_schema_history(_simple(100, 0, "a"), "") == '{"schemas":[' + V1_JSON + "]}"


def test_inherit_schema_history_unexpected_prefix_returns_empty_like_hudi():
    assert inherit_schema_history(_simple(100, 0, "a"), '{"other":1}') == ""


@pytest.mark.parametrize(
    ("version", "expected"), [(100, 100), (150, 100), (200, 200), (999, 200), (99, None)]
)
def test_search_schema_picks_exact_or_newest_older_version(version, expected):
    history = [_simple(200, 0, "b"), _simple(100, 0, "a")]
    found = search_schema(history, version)
    assert (found.version_id if found else None) == expected
