"""Schema-on-read: every file read with its own instant's schema, reconciled by column id."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest

import shim
from tests.tablekit import EvolvingTable, add, drop, forced_retype, move, rename, retype

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("f1", pa.string()), ("f2", pa.int32())])


def read(table, **kwargs) -> list[dict]:
    return sorted(shim.open_table(table.path).read(**kwargs).to_pylist(), key=lambda r: r["id"])


@pytest.fixture(params=[True, False], ids=["mor", "cow"])
def table(request, tmp_path) -> EvolvingTable:
    return EvolvingTable(tmp_path / "t", SCHEMA, mor=request.param)


def test_rename_reads_old_files_under_the_new_name(table):
    table.base([{"id": "a", "ts": 1, "f1": "x", "f2": 1}])
    table.alter(rename("f1", "name"))
    table.base([{"id": "b", "ts": 1, "name": "y", "f2": 2}], file_id="fg2-0")
    assert read(table) == [{"id": "a", "ts": 1, "name": "x", "f2": 1}, {"id": "b", "ts": 1, "name": "y", "f2": 2}]


def test_dropped_then_readded_column_does_not_resurrect_old_values(table):
    table.base([{"id": "a", "ts": 1, "f1": "x", "f2": 7}])
    table.alter(drop("f2"))
    table.alter(add("f2", "string"))
    table.base([{"id": "b", "ts": 1, "f1": "y", "f2": "new"}], file_id="fg2-0")
    assert read(table, columns=["id", "f2"]) == [{"id": "a", "f2": None}, {"id": "b", "f2": "new"}]
    assert shim.open_table(table.path).schema().field("f2").type == pa.string()


def test_added_column_reads_null_in_old_files_and_reorder_follows_the_table(table):
    table.base([{"id": "a", "ts": 1, "f1": "x", "f2": 1}])
    table.alter(add("price", "decimal(10, 2)", after="id"))
    table.alter(move("f1", "f2"))
    t = shim.open_table(table.path)
    assert t.schema().names == ["id", "price", "ts", "f2", "f1"]
    assert read(table) == [{"id": "a", "price": None, "ts": 1, "f2": 1, "f1": "x"}]


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("long", 7),
        ("double", 7.0),
        ("string", "7"),
        ("decimal(10, 2)", decimal.Decimal("7.00")),
    ],
)
def test_widened_int_column_reads_old_values_cast(tmp_path, token, expected):
    table = EvolvingTable(tmp_path / "t", SCHEMA)
    table.base([{"id": "a", "ts": 1, "f1": "x", "f2": 7}])
    table.alter(retype("f2", token))
    assert read(table, columns=["id", "f2"]) == [{"id": "a", "f2": expected}]


def test_string_to_date_change_parses_old_strings(tmp_path):
    table = EvolvingTable(tmp_path / "t", SCHEMA)
    table.base([{"id": "a", "ts": 1, "f1": "2024-02-29", "f2": 1}])
    table.alter(retype("f1", "date"))
    assert read(table, columns=["id", "f1"]) == [{"id": "a", "f1": datetime.date(2024, 2, 29)}]


def test_forbidden_type_change_is_an_error_naming_column_and_types(tmp_path):
    table = EvolvingTable(tmp_path / "t", SCHEMA)
    table.base([{"id": "a", "ts": 1, "f1": "x", "f2": 1}])
    table.alter(forced_retype("f1", "int"))  # string -> int is not a change Hudi allows
    with pytest.raises(shim.SchemaEvolutionError) as info:
        shim.open_table(table.path).read()
    message = str(info.value)
    assert "f1" in message and "string" in message and "int" in message


def test_mor_log_blocks_are_read_with_their_own_schema(tmp_path):
    table = EvolvingTable(tmp_path / "t", SCHEMA, partition=["f1"])
    base = table.base([{"id": "a", "ts": 1, "f1": "p", "f2": 1}, {"id": "b", "ts": 1, "f1": "p", "f2": 2}],
                      partition="f1=p")
    table.log([{"id": "a", "ts": 2, "f1": "p", "f2": 10}], partition="f1=p", base_instant=base)
    table.alter(rename("f2", "amount"))
    table.alter(retype("amount", "long"))
    table.log([{"id": "b", "ts": 3, "f1": "p", "amount": 20}], partition="f1=p", base_instant=base)
    table.log(deletes=["a"], partition="f1=p", base_instant=base, schema=table.schema)
    assert read(table) == [{"id": "b", "ts": 3, "f1": "p", "amount": 20}]
    assert read(table, mode="read_optimized", columns=["id", "amount"]) == [
        {"id": "a", "amount": 1}, {"id": "b", "amount": 2}]


def test_time_travel_uses_the_schema_as_of_that_instant(table):
    first = table.base([{"id": "a", "ts": 1, "f1": "x", "f2": 1}])
    table.alter(rename("f1", "name"))
    t = shim.open_table(table.path)
    assert t.schema(as_of=first).names == ["id", "ts", "f1", "f2"]
    assert t.read(as_of=first).to_pylist() == [{"id": "a", "ts": 1, "f1": "x", "f2": 1}]
    assert t.schema().names == ["id", "ts", "name", "f2"]


def test_incremental_after_evolution(tmp_path):
    table = EvolvingTable(tmp_path / "t", SCHEMA)
    first = table.base([{"id": "a", "ts": 1, "f1": "x", "f2": 1}])
    table.alter(rename("f1", "name"))
    table.log([{"id": "b", "ts": 1, "name": "y", "f2": 2}], base_instant=first)
    rows = shim.open_table(table.path).incremental(first).to_pylist()
    assert rows == [{"id": "b", "ts": 1, "name": "y", "f2": 2}]


def test_inflight_write_with_a_new_schema_is_invisible(tmp_path):
    table = EvolvingTable(tmp_path / "t", SCHEMA)
    base = table.base([{"id": "a", "ts": 1, "f1": "x", "f2": 1}])
    table.log([{"id": "a", "ts": 2, "f1": "z", "f2": 9}], base_instant=base, complete=False)
    assert read(table) == [{"id": "a", "ts": 1, "f1": "x", "f2": 1}]


def test_filter_on_renamed_column_uses_the_new_name(tmp_path):
    table = EvolvingTable(tmp_path / "t", SCHEMA)
    table.base([{"id": "a", "ts": 1, "f1": "x", "f2": 1}, {"id": "b", "ts": 1, "f1": "y", "f2": 2}])
    table.alter(rename("f1", "name"))
    assert read(table, columns=["id"], filter="name = 'y'") == [{"id": "b"}]


def test_file_schemas_publish_each_files_mapping(tmp_path):
    table = EvolvingTable(tmp_path / "t", SCHEMA)
    first = table.base([{"id": "a", "ts": 1, "f1": "x", "f2": 7}])
    table.alter(rename("f1", "name"))
    table.alter(drop("f2"))
    table.alter(add("f2", "long"))
    second = table.log([{"id": "a", "ts": 2, "name": "y", "f2": 8}], base_instant=first)
    views = shim.open_table(table.path).file_schemas()
    base, block = views
    assert (base.kind, base.instant, base.block_offset) == ("base_file", first, None)
    assert (block.kind, block.instant) == ("log_block", second) and block.block_offset == 0
    assert base.schema_version == int(first) and block.schema_version > base.schema_version
    by_column = {m.table_column: m for m in base.columns}
    assert [m.table_column for m in base.columns] == ["id", "ts", "name", "f2"]
    assert (by_column["name"].file_column, by_column["name"].action) == ("f1", "rename")
    assert (by_column["f2"].file_column, by_column["f2"].action) == (None, "null")
    assert by_column["id"].action == "read" and by_column["id"].column_id == 5
    assert {m.table_column: m.action for m in block.columns}["f2"] == "read"
    ro = shim.open_table(table.path).file_schemas(mode="read_optimized")
    assert [v.kind for v in ro] == ["base_file"]


def test_renamed_ordering_field_is_still_the_ordering_field(tmp_path):
    table = EvolvingTable(tmp_path / "t", SCHEMA)  # ordering field "ts" (event-time merge)
    base = table.base([{"id": "a", "ts": 5, "f1": "base", "f2": 1}])
    table.alter(rename("ts", "event_time"))
    table.log([{"id": "a", "event_time": 3, "f1": "older", "f2": 2}], base_instant=base)
    assert read(table, columns=["id", "event_time", "f1"]) == [{"id": "a", "event_time": 5, "f1": "base"}]


def test_combined_evolution_on_partitioned_mor_at_every_instant(tmp_path):
    """rename + int->long + drop/re-add + reorder, with deletes and an inflight write, read as of
    each instant, read-optimized and incrementally."""
    table = EvolvingTable(tmp_path / "t", SCHEMA, partition=["f1"])
    t1 = table.base([{"id": "a", "ts": 1, "f1": "p", "f2": 1}, {"id": "b", "ts": 1, "f1": "p", "f2": 2}],
                    partition="f1=p")
    t2 = table.alter(rename("f2", "qty"))
    t3 = table.log([{"id": "a", "ts": 2, "f1": "p", "qty": 10}], partition="f1=p", base_instant=t1)
    t4 = table.alter(retype("qty", "long"))
    t5 = table.alter(add("note", "string", after="id"))
    t6 = table.log([{"id": "c", "note": "new", "ts": 1, "f1": "p", "qty": 3_000_000_000}], partition="f1=p",
                   base_instant=t1)
    t7 = table.log(deletes=["b"], partition="f1=p", base_instant=t1, schema=table.schema)
    table.log([{"id": "a", "note": "ghost", "ts": 9, "f1": "p", "qty": -1}], partition="f1=p", base_instant=t1,
              complete=False)
    t = shim.open_table(table.path)
    expected = {
        t1: [{"id": "a", "ts": 1, "f1": "p", "f2": 1}, {"id": "b", "ts": 1, "f1": "p", "f2": 2}],
        t2: [{"id": "a", "ts": 1, "f1": "p", "qty": 1}, {"id": "b", "ts": 1, "f1": "p", "qty": 2}],
        t3: [{"id": "a", "ts": 2, "f1": "p", "qty": 10}, {"id": "b", "ts": 1, "f1": "p", "qty": 2}],
        t4: [{"id": "a", "ts": 2, "f1": "p", "qty": 10}, {"id": "b", "ts": 1, "f1": "p", "qty": 2}],
        t5: [{"id": "a", "note": None, "ts": 2, "f1": "p", "qty": 10},
             {"id": "b", "note": None, "ts": 1, "f1": "p", "qty": 2}],
        t6: [{"id": "a", "note": None, "ts": 2, "f1": "p", "qty": 10},
             {"id": "b", "note": None, "ts": 1, "f1": "p", "qty": 2},
             {"id": "c", "note": "new", "ts": 1, "f1": "p", "qty": 3_000_000_000}],
        t7: [{"id": "a", "note": None, "ts": 2, "f1": "p", "qty": 10},
             {"id": "c", "note": "new", "ts": 1, "f1": "p", "qty": 3_000_000_000}],
    }
    for instant, rows in expected.items():
        got = sorted(t.read(as_of=instant).to_pylist(), key=lambda r: r["id"])
        assert got == rows, instant
    assert sorted(t.read().to_pylist(), key=lambda r: r["id"]) == expected[t7]
    assert t.read(mode="read_optimized", columns=["id", "qty"]).sort_by("id").to_pylist() == [
        {"id": "a", "qty": 1}, {"id": "b", "qty": 2}]
    assert t.incremental(t5, t6, columns=["id", "qty"]).to_pylist() == [{"id": "c", "qty": 3_000_000_000}]


def test_nested_struct_field_rename_and_add_are_read_by_id(tmp_path):
    from shim.schema import Field, InternalSchema, RecordType
    from shim.schema.types import LONG, STRING

    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()),
                        ("info", pa.struct([("city", pa.string()), ("n", pa.int32())]))])
    table = EvolvingTable(tmp_path / "t", schema)
    table.base([{"id": "a", "ts": 1, "info": {"city": "sf", "n": 1}}])

    def evolve(current: InternalSchema) -> InternalSchema:
        fields = []
        for f in current.record.fields:
            if f.name == "info":
                city, n = f.type.fields
                struct = RecordType((Field(city.id, "town", STRING, True), Field(n.id, n.name, LONG, True),
                                     Field(current.max_column_id + 1, "zip", STRING, True)))
                f = Field(f.id, f.name, struct, f.optional)
            fields.append(f)
        return InternalSchema.of(fields, current.version_id, current.max_column_id + 1)

    table.alter(evolve)
    rows = shim.open_table(table.path).read(columns=["info"]).to_pylist()
    assert rows == [{"info": {"town": "sf", "n": 1, "zip": None}}]
