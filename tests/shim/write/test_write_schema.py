"""The write schema: the table schema evolved by incoming columns, and data aligned to it."""

from __future__ import annotations

import decimal

import pyarrow as pa
import pytest

from shim.errors import SchemaEvolutionError, WriteError
from shim.schema.types import DOUBLE, LONG, STRING
from shim.write.write_schema import align_to_schema, data_arrow_schema, evolve_for_write, initial_schema

INCOMING = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("fare", pa.float64()), ("n", pa.int32())])


def test_initial_schema_assigns_hudi_ids_with_meta_columns_first():
    schema = initial_schema("trips", INCOMING)
    assert schema.field_names()[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                                        "_hoodie_partition_path", "_hoodie_file_name"]
    assert [(f.id, f.name) for f in schema.fields[5:]] == [(5, "id"), (6, "ts"), (7, "fare"), (8, "n")]


def test_evolve_adds_new_column_before_the_next_known_one_with_a_fresh_id():
    table = initial_schema("trips", INCOMING)
    incoming = pa.schema([("id", pa.string()), ("tip", pa.float64()), ("ts", pa.int64())])
    evolved = evolve_for_write(table, incoming)
    assert evolved.field_names()[5:] == ["id", "tip", "ts", "fare", "n"]
    assert evolved.find_field_by_name("tip").id == 9 and evolved.max_column_id == 9


def test_evolve_unchanged_when_columns_fit_or_are_missing():
    table = initial_schema("trips", INCOMING)
    narrower = pa.schema([("id", pa.string()), ("n", pa.int16())])  # int16 fits int: cast on write
    assert evolve_for_write(table, narrower) == table


def test_evolve_widens_table_type_when_the_data_is_wider():
    table = initial_schema("trips", INCOMING)
    evolved = evolve_for_write(table, pa.schema([("n", pa.int64()), ("ts", pa.string())]))
    assert evolved.find_type("n") == LONG and evolved.find_type("ts") == STRING
    assert evolved.find_type("fare") == DOUBLE


def test_evolve_rejects_a_type_change_hudi_forbids_both_ways():
    table = initial_schema("trips", INCOMING)
    with pytest.raises(SchemaEvolutionError, match="'ts' is boolean in the data but long in the table, and Hudi allows neither"):
        evolve_for_write(table, pa.schema([("ts", pa.bool_())]))


def test_evolve_adds_nested_struct_field():
    table = initial_schema("t", pa.schema([("p", pa.struct([("x", pa.int32())]))]))
    evolved = evolve_for_write(table, pa.schema([("p", pa.struct([("x", pa.int32()), ("y", pa.int32())]))]))
    assert evolved.find_field_by_name("p.y").id == table.max_column_id + 1


def test_align_casts_fills_missing_and_orders_by_table():
    table = evolve_for_write(initial_schema("trips", INCOMING), pa.schema([("price", pa.decimal128(10, 2))]))
    data = pa.table({"n": pa.array([7], pa.int32()), "id": ["a"], "price": pa.array([decimal.Decimal("1.50")],
                                                                                    pa.decimal128(10, 2))})
    aligned = align_to_schema(data, table)
    assert aligned.schema == data_arrow_schema(table)
    assert aligned.to_pylist() == [{"id": "a", "ts": None, "fare": None, "n": 7, "price": decimal.Decimal("1.50")}]
    assert all(not f.metadata for f in aligned.schema)  # no column-id metadata in written files


def test_align_converts_allowed_promotions_like_hudi():
    table = evolve_for_write(initial_schema("t", pa.schema([("v", pa.int32())])), pa.schema([("v", pa.string())]))
    assert align_to_schema(pa.table({"v": pa.array([5], pa.int32())}), table).column("v").to_pylist() == ["5"]


def test_align_rejects_nulls_in_a_required_column():
    table = initial_schema("t", pa.schema([pa.field("id", pa.string(), nullable=False)]))
    with pytest.raises(WriteError, match="'id' is required"):
        align_to_schema(pa.table({"id": pa.array([None], pa.string())}), table)
