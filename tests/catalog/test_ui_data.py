"""The UI's values without a browser: the schema grid, the misread rules, the plan's statistics
and key lookups, the login redirect target."""

from __future__ import annotations

import pyarrow as pa
import pytest

import shim
from catalog.ui.auth import safe_next
from catalog.ui.evolution import Column, Version, schema_grid, table_schema_grid
from catalog.ui.misreads import FileColumn, misreads
from catalog.ui.plan import explain
from catalog.ui.timeline import table_timeline
from shim import ColumnMapping
from shim.storage import as_storage
from tests.tablekit import EvolvingTable, TinyTable, add, drop, rename


def test_schema_grid_keeps_a_renamed_column_on_its_row_and_a_readded_name_on_a_new_one():
    versions = [
        Version("1", (Column(5, "id", "string", 0), Column(6, "tip", "int", 0))),
        Version("2", (Column(5, "key", "string", 0), Column(6, "tip", "int", 0))),
        Version("3", (Column(5, "key", "string", 0),)),
        Version("4", (Column(5, "key", "string", 0), Column(7, "tip", "string", 0))),
    ]
    grid = schema_grid("id", versions)
    rows = {row.id: row for row in grid.rows}
    assert [row.id for row in grid.rows] == [5, 6, 7]
    assert rows[5].names == ("id", "key")
    assert [(c.change, c.was_name) for c in rows[5].cells] == [("initial", None), ("renamed", "id"), ("same", None),
                                                               ("same", None)]
    assert [c.change for c in rows[6].cells] == ["initial", "same", "dropped", "absent"]
    assert [c.change for c in rows[7].cells] == ["absent", "absent", "absent", "readded"]


def test_schema_grid_of_a_table_without_ids_is_keyed_by_name_from_its_avro_schemas(tmp_path):
    table = TinyTable(tmp_path / "t", pa.schema([("id", pa.string()), ("ts", pa.int64()), ("n", pa.int32())]))
    table.base([{"id": "a", "ts": 1, "n": 1}])
    wider = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("n", pa.int64()), ("extra", pa.string())])
    table.base([{"id": "b", "ts": 1, "n": 2, "extra": "x"}], schema=wider, file_id="fg2-0")
    grid = table_schema_grid(shim.open_table(str(tmp_path / "t")).snapshot())
    assert grid.keyed_by == "name" and grid.versions == tuple(table.instants)
    rows = {row.names[0]: row for row in grid.rows}
    assert [(c.change, c.type, c.was_type) for c in rows["n"].cells] == [("initial", "int", None),
                                                                       ("widened", "long", "int")]
    assert [c.change for c in rows["extra"].cells] == ["absent", "added"]


def _mapping(name: str, column_id: int, file_column: str | None, action: str, table_type: str = "string",
             file_type: str | None = "string") -> ColumnMapping:
    return ColumnMapping(name, column_id, table_type, file_column, file_type if file_column else None, action)


def test_misreads_name_what_by_name_and_by_position_readers_return():
    mapping = [_mapping("id", 5, "id", "read"), _mapping("passenger", 6, "rider", "rename"),
               _mapping("tip", 9, None, "null")]
    file_columns = [FileColumn("id", 5), FileColumn("rider", 6), FileColumn("tip", 7)]
    found = {(m.reader, m.column): (m.kind, m.reads) for m in misreads(mapping, file_columns,
                                                                       {5: "id", 6: "passenger", 9: "tip"})}
    assert found == {
        ("by name", "passenger"): ("null", "NULL: the file holds this column as 'rider'"),
        ("by name", "tip"): ("other", "the values of 'tip' (id 7, a dropped column), where it should read NULL"),
        ("by position", "tip"): ("other", ("the values of the file's column 3, 'tip' (id 7, a dropped column), "
                                          "where it should read NULL")),
    }


def test_misreads_of_a_file_in_todays_schema_are_none():
    mapping = [_mapping("id", 5, "id", "read"), _mapping("n", 6, "n", "read", "int64", "int64")]
    assert misreads(mapping, [FileColumn("id", 5), FileColumn("n", 6)], {5: "id", 6: "n"}) == []


@pytest.fixture
def evolved(tmp_path) -> tuple[shim.Table, list[str]]:
    table = EvolvingTable(tmp_path / "e", pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()),
                                                     ("n", pa.int64())]), partition=["city"])
    table.base([{"id": "a", "ts": 1, "city": "sf", "n": 1}, {"id": "b", "ts": 1, "city": "sf", "n": 5}],
               partition="city=sf")
    table.base([{"id": "c", "ts": 1, "city": "ny", "n": 50}], partition="city=ny", file_id="fg2-0")
    table.alter(rename("n", "m"))
    table.alter(drop("ts"))
    table.alter(add("ts", "long"))
    return shim.open_table(str(tmp_path / "e")).snapshot(), table.instants


def test_explain_skips_row_groups_by_statistics_only_on_columns_stored_under_their_name(evolved):
    table, _ = evolved
    plan = explain(table, filter="m > 10 AND id > 'a'", mode="read_optimized")
    assert {p.path: p.kept for p in plan.partitions} == {"city=ny": True, "city=sf": True}
    by_partition = {f.partition: f for f in plan.files}
    # m is n in both files (renamed): not pushed; id > 'a' is, and rules nothing out in either file
    assert by_partition["city=sf"].base == "read"
    assert by_partition["city=sf"].not_pushed == ("m > 10: 'm' is 'n' in this file; applied to the rows after reading",)
    plan = explain(table, filter="id > 'b'", mode="read_optimized")
    skipped = {f.partition: f.base for f in plan.files}
    assert skipped == {"city=sf": "skipped by statistics", "city=ny": "read"}
    [why] = [f.row_groups_skipped[0].reason for f in plan.files if f.partition == "city=sf"]
    assert why == "id > 'b' is false for id from 'a' to 'b'"


def test_explain_names_the_partition_term_that_prunes_and_the_keys_bloom_filters_rule_out(evolved):
    table, _ = evolved
    plan = explain(table, filter="city = 'ny' AND id = 'zz'")
    assert [(p.path, p.kept, p.reason) for p in plan.partitions] == [
        ("city=ny", True, ""), ("city=sf", False, "city = 'ny' is false where city = 'sf'")]
    assert plan.keys == ("zz",)
    [ny] = plan.files
    assert ny.base == "skipped by bloom filter"
    assert ny.reason == "the bloom filter in its footer holds none of the keys zz"


def test_timeline_lists_every_instant_with_its_schema_version(evolved):
    table, instants = evolved
    entries = table_timeline(table)
    assert [e.time for e in entries] == instants
    assert [e.operation for e in entries] == ["UPSERT", "UPSERT", "ALTER_SCHEMA", "ALTER_SCHEMA", "ALTER_SCHEMA"]
    assert entries[1].schema_version == instants[0] and entries[4].schema_version == instants[4]
    assert entries[0].wrote[0].file.startswith("fg1-0_") and entries[0].wrote[0].inserts == 2


@pytest.mark.parametrize(("given", "expected"), [("/ui/tables/t#files", "/ui/tables/t#files"), ("//evil.example/ui", "/ui"),
                                                 ("https://evil.example", "/ui"), ("/v1/tables", "/ui")])
def test_login_goes_back_only_to_ui_pages(given, expected):
    assert safe_next(given) == expected


def test_timeline_includes_the_archived_instants_with_what_they_wrote(tmp_path):
    from shim.write.service_options import ArchiveSettings
    from shim.write.services.archive import archive_timeline

    table = TinyTable(tmp_path / "a", pa.schema([("id", pa.string()), ("ts", pa.int64())]), mor=False)
    for i in range(6):
        table.base([{"id": f"k{i}", "ts": 1}], file_id=f"fg{i}-0")
    assert archive_timeline(as_storage(str(tmp_path / "a")), table.config, ArchiveSettings(min_commits=2, max_commits=3))
    reopened = shim.open_table(str(tmp_path / "a"))
    opened = reopened.snapshot()
    archived = {a.requested_time for a in reopened.archived_timeline()}
    entries = table_timeline(opened)
    assert [e.time for e in entries] == table.instants
    assert {e.time for e in entries if e.archived} == archived and len(archived) == 4
    first = entries[0]
    assert first.archived and first.action == "commit" and first.state == "completed"
    assert [(w.file_id, w.inserts) for w in first.wrote] == [("fg0-0", 1)]
