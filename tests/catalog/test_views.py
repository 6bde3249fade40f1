"""Published views: merged schema with ids, per-file name mapping, and what a new instant invalidates."""

from __future__ import annotations

import pyarrow as pa
import pytest

from catalog import Catalog, Settings
from shim.errors import InvalidArgumentError
from shim.storage import as_storage
from shim.timeline.instant import Action
from shim.write.data_files import write_log_blocks
from tests.catalog.servekit import build_warehouse
from tests.tablekit import EvolvingTable, add, rename

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("p", pa.string()), ("v", pa.int32())])


@pytest.fixture
def warehouse(tmp_path):
    return build_warehouse(tmp_path / "wh")


@pytest.fixture
def catalog(warehouse):
    cat = Catalog(Settings(warehouse=str(warehouse.root), catalog_db=":memory:"))
    yield cat
    cat.close()


def mapping(view, path_part, kind="base_file"):
    [file] = [f for f in view.files if path_part in f.path and f.kind == kind]
    return {c.table_column: (c.file_column, c.action) for c in file.columns}


def test_snapshot_view_maps_renamed_and_readded_columns(catalog):
    view = catalog.view("trips", "snapshot")
    assert view.schema.names == ["id", "ts", "city", "amount", "tip", "note"]
    ids = [int(f.metadata[b"PARQUET:field_id"]) for f in view.schema]
    assert len(set(ids)) == 6
    assert mapping(view, "city=sf/") == {
        "id": ("id", "read"), "ts": ("ts", "read"), "city": ("city", "read"), "amount": ("fare", "rename"),
        "tip": (None, "null"), "note": (None, "null")}  # the file's `note` is the dropped column
    assert mapping(view, "city=la/") == {c: (c, "read") for c in view.schema.names}
    assert {f.kind for f in view.files} == {"base_file", "log_block"}
    logs = [f for f in view.files if f.kind == "log_block"]
    assert all(f.block_offset is not None and f.schema_version is not None for f in logs)


def test_read_optimized_view_lists_base_files_only(catalog):
    view = catalog.view("trips", "read_optimized")
    assert sorted(f.partition_path for f in view.files) == ["city=la", "city=ny", "city=sf"]
    assert {f.kind for f in view.files} == {"base_file"}


def test_view_as_of_first_commit_uses_that_schema(catalog, warehouse):
    view = catalog.view("trips", "snapshot", as_of=warehouse.trips_first)
    assert view.instant == warehouse.trips_first
    assert view.schema.names == ["id", "ts", "city", "fare", "note"]
    assert mapping(view, "city=sf/")["fare"] == ("fare", "read")


def test_view_cow_widened_column_is_a_cast(catalog):
    view = catalog.view("events")
    first = next(f for f in view.files if f.file_id == "fg1-0")
    count = next(c for c in first.columns if c.table_column == "count")
    assert (count.file_column, count.file_type, count.table_type, count.action) == ("n", "int32", "int64",
                                                                                   "rename+cast")


def test_unknown_view_raises_invalid_argument(catalog):
    with pytest.raises(InvalidArgumentError, match="unknown view 'fast'"):
        catalog.view("trips", "fast")


# -- cache invalidation ---------------------------------------------------------------------------


@pytest.fixture
def counted(monkeypatch):
    """Records which file groups each resolution had to open."""
    resolved: list[set[str]] = []
    from shim.planning import file_schemas as file_schemas_module

    original = file_schemas_module.file_schemas

    def spy(scan):
        resolved.append({s.file_id for s in scan.slices})
        return original(scan)

    monkeypatch.setattr(file_schemas_module, "file_schemas", spy)
    return resolved


@pytest.fixture
def two_groups(tmp_path):
    table = EvolvingTable(tmp_path / "t", SCHEMA, partition=["p"])
    one = table.base([{"id": "a", "ts": 1, "p": "x", "v": 1}], partition="p=x", file_id="g1-0")
    two = table.base([{"id": "b", "ts": 1, "p": "y", "v": 2}], partition="p=y", file_id="g2-0")
    cat = Catalog(Settings(tables=(f"t={table.path}",), catalog_db=":memory:"))
    yield table, cat, one, two
    cat.close()


def test_repeated_view_is_served_from_cache(two_groups, counted):
    _, cat, _, _ = two_groups
    first = cat.view("t")
    second = cat.view("t")
    assert counted == [{"g1-0", "g2-0"}]
    assert first.files == second.files


def test_new_commit_reresolves_only_the_file_group_it_wrote(two_groups, counted):
    table, cat, one, _ = two_groups
    cat.view("t")
    table.log([{"id": "a", "ts": 2, "p": "x", "v": 10}], partition="p=x", file_id="g1-0", base_instant=one)
    view = cat.view("t")
    assert counted == [{"g1-0", "g2-0"}, {"g1-0"}]
    assert [f.kind for f in view.files if f.file_id == "g1-0"] == ["base_file", "log_block"]


def test_schema_change_reresolves_every_file_group(two_groups, counted):
    table, cat, _, _ = two_groups
    cat.view("t")
    table.alter(rename("v", "value"))
    view = cat.view("t")
    assert counted == [{"g1-0", "g2-0"}, {"g1-0", "g2-0"}]
    assert all({c.table_column: c.action for c in f.columns}["value"] == "rename" for f in view.files)


def test_write_completing_after_a_later_one_reresolves_its_group(two_groups, counted):
    # A log block written by an instant that completes after a later commit to the same group: the
    # slice's files and the read instant stay the same, but the block becomes visible.
    table, cat, one, _ = two_groups
    pending, _ = table._begin(Action.DELTA_COMMIT)
    rows = pa.Table.from_pylist([{"id": "a", "ts": 2, "p": "x", "v": 10}], schema=SCHEMA)
    write = write_log_blocks(as_storage(str(table.path)), table.config, partition_path="p=x", file_id="g1-0",
                             base_instant=one, instant=pending, write_token="0-2-0", upserts=rows)
    later = table.log([{"id": "c", "ts": 2, "p": "x", "v": 30}], partition="p=x", file_id="g1-0",
                      base_instant=one)
    before = cat.view("t")
    assert [f.instant for f in before.files if f.file_id == "g1-0" and f.kind == "log_block"] == [later]
    table._commit([write], pending, Action.DELTA_COMMIT, True, None)
    after = cat.view("t")
    assert counted[-1] == {"g1-0"}
    blocks = [f.instant for f in after.files if f.file_id == "g1-0" and f.kind == "log_block"]
    assert sorted(blocks) == sorted([pending, later])


def test_time_travel_view_reuses_unchanged_groups(two_groups, counted):
    table, cat, _, two = two_groups
    table.alter(add("w", "int"))
    cat.view("t", as_of=two)
    cat.view("t")
    # The schema differs between the two read instants, so nothing is shared; the same as_of again is.
    cat.view("t", as_of=two)
    assert counted == [{"g1-0", "g2-0"}, {"g1-0", "g2-0"}]


def test_partition_column_left_out_of_the_files_is_described_as_from_the_path(tmp_path):
    """hoodie.datasource.write.drop.partition.columns: the files lack `city`, the path holds it."""
    from tests.tablekit import TinyTable

    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string())])
    table = TinyTable(tmp_path / "wh" / "parts", schema, mor=False, partition=["city"],
                      extra={"hoodie.datasource.write.drop.partition.columns": "true"})
    table.base([{"id": "r1", "ts": 1, "city": "sf"}], partition="city=sf")
    cat = Catalog(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:"))
    try:
        [base] = cat.view("parts", "snapshot").files
        actions = {c.table_column: (c.file_column, c.action) for c in base.columns}
        assert actions == {"id": ("id", "read"), "ts": ("ts", "read"), "city": (None, "partition")}
    finally:
        cat.close()
