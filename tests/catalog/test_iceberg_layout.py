"""Which slices Iceberg readers read in place and which are written out (`catalog.iceberg.layout`),
on real tables written with `tests.tablekit`, checked end to end: the published table read by
PyIceberg must hold the rows the shim reads itself."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import StaticTable

from catalog.iceberg.layout import Layout, Placement, plan_layout
from catalog.iceberg.publish import IcebergPublisher, PublishedTable, Readers, file_uri
from catalog.service import Catalog
from catalog.settings import Settings
from shim.planning.planner import build_scan
from shim.scan_options import ScanOptions
from shim.schema import arrow_field_id
from shim.storage import as_storage
from shim.timeline.instant import Action
from shim.write.data_files import write_log_blocks
from tests.catalog.servekit import EVENTS_ROWS, TRIPS_RO_ROWS, TRIPS_ROWS, build_warehouse
from tests.parquetkit import empty_dictionary_chunks
from tests.tablekit import EvolvingTable, TinyTable, add, drop, forced_retype, rename

ROWS = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("a", pa.int64())])


# -- helpers -------------------------------------------------------------------------------------


@pytest.fixture
def open_catalog() -> Iterator[Callable[[Path], Catalog]]:
    """Catalogs over a warehouse folder (tables found when opened), closed after the test."""
    opened: list[Catalog] = []

    def make(warehouse: Path) -> Catalog:
        catalog = Catalog(Settings(warehouse=str(warehouse), catalog_db=":memory:"))
        opened.append(catalog)
        return catalog

    yield make
    for catalog in opened:
        catalog.close()


def layout_of(catalog: Catalog, name: str, view: str, merging: str = "deletes") -> Layout:
    """The layout the publisher plans for the view at its latest instant (slices with logs kept in
    place with deletes unless `merging` says otherwise)."""
    table = catalog.table(name)
    scan = build_scan(table.snapshot(), ScanOptions(mode=view))
    return plan_layout(catalog.view(name, view, scan.read_instant), scan.slices, table.storage,
                       table.config.partition_fields, merging=merging)


def by_group(layout: Layout) -> dict[str, Placement]:
    """Placements by partition path (or file id in unpartitioned tables)."""
    return {p.file_slice.partition_path or p.file_slice.file_id: p for p in layout.placements}


def base_file(table: Path, file_id: str, instant: str, partition: str = "") -> Path:
    [path] = (table / partition).glob(f"{file_id}_*_{instant}.parquet")
    return path


def current_schema(metadata: dict) -> dict:
    """The Iceberg schema of the table's current snapshot."""
    [schema] = [s for s in metadata["schemas"] if s["schema-id"] == metadata["current-schema-id"]]
    return schema


def mapping_names(published: PublishedTable) -> dict[str, list[str]]:
    """Top-level column name -> the names the published name mapping gives its id."""
    ids = {f["name"]: f["id"] for f in current_schema(published.metadata)["fields"]}
    mapping = json.loads(published.metadata["properties"]["schema.name-mapping.default"])
    names = {entry["field-id"]: entry["names"] for entry in mapping}
    return {name: names[field_id] for name, field_id in ids.items()}


def manifest_files(published: PublishedTable, content: int = 0) -> list[str]:
    """Paths of the current snapshot's data files (content 0) or position delete files (1), read
    from its manifest list and manifests (deleted entries, status 2, name files it no longer has)."""
    [snapshot] = [s for s in published.metadata["snapshots"]
                  if s["snapshot-id"] == published.metadata["current-snapshot-id"]]
    paths = []
    with open(snapshot["manifest-list"].removeprefix("file://"), "rb") as handle:
        manifests = list(fastavro.reader(handle))
    for manifest in manifests:
        with open(manifest["manifest_path"].removeprefix("file://"), "rb") as handle:
            paths.extend(entry["data_file"]["file_path"] for entry in fastavro.reader(handle)
                         if entry["data_file"]["content"] == content and entry["status"] != 2)
    return sorted(paths)


def delete_files(published: PublishedTable) -> list[str]:
    return manifest_files(published, content=1)


def planned_files(published: PublishedTable) -> list[str]:
    """Data file paths PyIceberg plans to read."""
    table = StaticTable.from_metadata(published.metadata_location)
    return sorted(task.file.file_path for task in table.scan().plan_files())


def iceberg_rows(published: PublishedTable, key: str = "id") -> list[dict]:
    rows = StaticTable.from_metadata(published.metadata_location).scan().to_arrow().to_pylist()
    return sorted(rows, key=lambda row: row[key])


def shim_rows(catalog: Catalog, name: str, view: str = "snapshot", key: str = "id") -> list[dict]:
    return sorted(catalog.table(name).read(mode=view).to_pylist(), key=lambda row: row[key])


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def data_files(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.glob("*/data/*.parquet"))


def written_for_current(published: PublishedTable, folder: Path) -> list[str]:
    """The written slices the current snapshot reads (older snapshots may name others)."""
    return sorted(p.removeprefix("file://") for p in manifest_files(published)
                  if p.removeprefix("file://").startswith(str(folder)))


# -- (a) the evolved warehouse -------------------------------------------------------------------


@pytest.fixture
def warehouse(tmp_path, open_catalog):
    built = build_warehouse(tmp_path / "wh")
    return built, open_catalog(built.root)


@pytest.mark.parametrize("view", ["snapshot", "read_optimized"])
def test_events_base_files_are_read_in_place_through_the_renamed_column(warehouse, tmp_path, view):
    built, catalog = warehouse
    events = built.events.path
    expected = sorted([str(base_file(events, "fg1-0", built.events.instants[0])),
                       str(base_file(events, "fg2-0", built.events.instants[-1]))])

    placements = layout_of(catalog, "events", view).placements
    assert sorted(p.base_path for p in placements) == expected
    assert [p.reason for p in placements] == [None, None]

    published = IcebergPublisher(catalog, str(tmp_path / "ice")).publish("events", view)
    assert mapping_names(published)["count"] == ["count", "n"]  # the old file holds it as `n`
    assert mapping_names(published)["label"] == ["label"]
    assert published.written_slices == 0
    assert manifest_files(published) == [file_uri(p) for p in expected]
    assert data_files(tmp_path / "ice") == []
    assert iceberg_rows(published, "key") == EVENTS_ROWS == shim_rows(catalog, "events", view, "key")


def test_trips_read_optimized_writes_out_the_files_holding_the_dropped_note(warehouse, tmp_path):
    built, catalog = warehouse
    placements = by_group(layout_of(catalog, "trips", "read_optimized"))

    assert sorted(placements) == ["city=la", "city=ny", "city=sf"]
    la = placements["city=la"]
    assert la.reason is None
    assert la.base_path == str(base_file(built.trips.path, "fg3-0", built.trips.instants[-2], "city=la"))
    for old in ("city=ny", "city=sf"):  # written before `note` was dropped and added again
        assert placements[old].base_path is None
        assert "'note'" in placements[old].reason

    published = IcebergPublisher(catalog, str(tmp_path / "ice")).publish("trips", "read_optimized")
    written = written_for_current(published, tmp_path / "ice")
    assert len(written) == 2 and published.written_slices == 2
    assert manifest_files(published) == sorted([file_uri(la.base_path), *map(file_uri, written)])
    assert iceberg_rows(published) == TRIPS_RO_ROWS == shim_rows(catalog, "trips", "read_optimized")


def test_trips_snapshot_writes_out_the_old_note_files_with_their_logs_merged(warehouse, tmp_path):
    built, catalog = warehouse
    placements = by_group(layout_of(catalog, "trips", "snapshot"))

    la = placements["city=la"]
    assert la.reason is None and not la.merge_logs
    assert la.base_path == str(base_file(built.trips.path, "fg3-0", built.trips.instants[-2], "city=la"))
    for logged in ("city=ny", "city=sf"):  # their base files hold the dropped note: written out whole
        assert placements[logged].file_slice.has_logs and placements[logged].merge_logs
        assert placements[logged].base_path is None
        assert "'note'" in placements[logged].reason

    published = IcebergPublisher(catalog, str(tmp_path / "ice")).publish("trips", "snapshot")
    assert mapping_names(published)["amount"] == ["amount", "fare"]
    assert mapping_names(published)["note"] == ["note"]  # never the dropped note's old files
    written = written_for_current(published, tmp_path / "ice")
    assert len(written) == 2 and published.written_slices == 2
    assert manifest_files(published) == sorted([file_uri(la.base_path), *map(file_uri, written)])
    assert delete_files(published) == []  # the written slices hold the merged rows
    assert iceberg_rows(published) == TRIPS_ROWS == shim_rows(catalog, "trips")


# -- (b) (c) (d) renames, forced type changes, drops ---------------------------------------------


def test_a_name_reused_by_a_rename_writes_out_the_files_holding_the_old_column(tmp_path, open_catalog):
    table = EvolvingTable(tmp_path / "wh" / "reuse", ROWS, mor=False)
    old = table.base([{"id": "r1", "ts": 1, "a": 10}])
    table.alter(rename("a", "b"))
    table.alter(add("a", "string"))  # a new column under the old name
    new = table.base([{"id": "r2", "ts": 1, "b": 20, "a": "new"}], file_id="fg2-0")
    catalog = open_catalog(tmp_path / "wh")

    placements = by_group(layout_of(catalog, "reuse", "snapshot"))
    assert placements["fg1-0"].base_path is None
    assert "'a'" in placements["fg1-0"].reason
    new_path = str(base_file(table.path, "fg2-0", new))
    assert placements["fg2-0"].base_path == new_path and placements["fg2-0"].reason is None

    published = IcebergPublisher(catalog, str(tmp_path / "ice")).publish("reuse", "snapshot")
    names = mapping_names(published)
    assert names["a"] == ["a"] and names["b"] == ["b"]  # `a` never reads as `b`
    [written] = written_for_current(published, tmp_path / "ice")
    assert manifest_files(published) == planned_files(published) == sorted([file_uri(new_path), file_uri(written)])
    assert file_uri(str(base_file(table.path, "fg1-0", old))) not in manifest_files(published)
    ids = {f["name"]: f["id"] for f in current_schema(published.metadata)["fields"]}
    assert {f.name: arrow_field_id(f) for f in pq.read_schema(written)} == ids
    expected = [{"id": "r1", "ts": 1, "b": 10, "a": None}, {"id": "r2", "ts": 1, "b": 20, "a": "new"}]
    assert iceberg_rows(published) == expected == shim_rows(catalog, "reuse")


def test_a_forced_type_change_writes_out_the_old_file(tmp_path, open_catalog):
    table = EvolvingTable(tmp_path / "wh" / "forced", ROWS, mor=False)
    table.base([{"id": "r1", "ts": 1, "a": 10}])
    table.alter(forced_retype("a", "string"))  # long -> string: no Iceberg reader converts it
    new = table.base([{"id": "r2", "ts": 1, "a": "x"}], file_id="fg2-0")
    catalog = open_catalog(tmp_path / "wh")

    placements = by_group(layout_of(catalog, "forced", "snapshot"))
    assert placements["fg1-0"].base_path is None
    assert "'a'" in placements["fg1-0"].reason and "int64" in placements["fg1-0"].reason
    assert placements["fg2-0"].base_path == str(base_file(table.path, "fg2-0", new))

    published = IcebergPublisher(catalog, str(tmp_path / "ice")).publish("forced", "snapshot")
    [written] = data_files(tmp_path / "ice")
    assert pq.read_schema(written).field("a").type == pa.string()
    [a] = [f for f in current_schema(published.metadata)["fields"] if f["name"] == "a"]
    assert a["type"] == "string"
    assert arrow_field_id(pq.read_schema(written).field("a")) == a["id"]
    expected = [{"id": "r1", "ts": 1, "a": "10"}, {"id": "r2", "ts": 1, "a": "x"}]
    assert iceberg_rows(published) == expected == shim_rows(catalog, "forced")


def test_a_dropped_column_never_added_again_leaves_the_old_file_in_place(tmp_path, open_catalog):
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("a", pa.int64()), ("gone", pa.string())])
    table = EvolvingTable(tmp_path / "wh" / "dropped", schema, mor=False)
    old = table.base([{"id": "r1", "ts": 1, "a": 10, "gone": "g"}])
    table.alter(drop("gone"))
    new = table.base([{"id": "r2", "ts": 1, "a": 20}], file_id="fg2-0")
    catalog = open_catalog(tmp_path / "wh")

    layout = layout_of(catalog, "dropped", "snapshot")
    old_path, new_path = str(base_file(table.path, "fg1-0", old)), str(base_file(table.path, "fg2-0", new))
    assert sorted(p.base_path for p in layout.placements) == sorted([old_path, new_path])
    assert "gone" in pq.read_schema(old_path).names  # the premise: the old file still holds it

    published = IcebergPublisher(catalog, str(tmp_path / "ice")).publish("dropped", "snapshot")
    fields = current_schema(published.metadata)["fields"]
    assert [f["name"] for f in fields] == ["id", "ts", "a"]
    mapping = json.loads(published.metadata["properties"]["schema.name-mapping.default"])
    [gone] = [entry for entry in mapping if "gone" in entry["names"]]
    assert gone["names"] == ["gone"]
    assert gone["field-id"] > max(f["id"] for f in fields)  # selects no column of the table
    assert len({entry["field-id"] for entry in mapping}) == len(mapping)
    assert published.metadata["last-column-id"] >= gone["field-id"]
    assert data_files(tmp_path / "ice") == []
    assert manifest_files(published) == planned_files(published) == sorted([file_uri(old_path), file_uri(new_path)])
    expected = [{"id": "r1", "ts": 1, "a": 10}, {"id": "r2", "ts": 1, "a": 20}]
    assert iceberg_rows(published) == expected == shim_rows(catalog, "dropped")


def test_nested_columns_whose_members_match_are_read_in_place(tmp_path, open_catalog):
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("l", pa.list_(pa.int64())),
                        ("m", pa.map_(pa.string(), pa.int64())),
                        ("s", pa.struct([("x", pa.int32()), ("y", pa.list_(pa.string()))]))])
    table = EvolvingTable(tmp_path / "wh" / "nested", schema, mor=False)
    instant = table.base([{"id": "r1", "ts": 1, "l": [1, 2], "m": [("k", 3), ("j", 4)], "s": {"x": 4, "y": ["p", None]}},
                          {"id": "r2", "ts": 1, "l": None, "m": None, "s": None},
                          {"id": "r3", "ts": 1, "l": [], "m": [], "s": {"x": None, "y": []}}])
    table.alter(rename("l", "numbers"))
    catalog = open_catalog(tmp_path / "wh")

    [placement] = layout_of(catalog, "nested", "snapshot").placements
    assert placement.reason is None
    assert placement.base_path == str(base_file(table.path, "fg1-0", instant))

    published = IcebergPublisher(catalog, str(tmp_path / "ice")).publish("nested", "snapshot")
    assert mapping_names(published)["numbers"] == ["numbers", "l"]
    assert data_files(tmp_path / "ice") == []
    rows = iceberg_rows(published)
    assert rows == shim_rows(catalog, "nested")
    assert rows[0] == {"id": "r1", "ts": 1, "numbers": [1, 2], "m": [("k", 3), ("j", 4)],
                       "s": {"x": 4, "y": ["p", None]}}


def test_a_file_with_field_ids_on_nested_members_only_is_written_out(tmp_path, open_catalog):
    """Iceberg readers take a Parquet file with ids anywhere for one written with ids, and no
    longer apply the name mapping to it (Trino read every top-level column of such a file as
    null): it must not be read in place."""
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("s", pa.struct([("x", pa.int32())]))])
    table = EvolvingTable(tmp_path / "wh" / "ids", schema, mor=False)
    instant = table.base([{"id": "r1", "ts": 1, "s": {"x": 4}}])
    path = base_file(table.path, "fg1-0", instant)
    written = pq.read_table(path)
    member = pa.field("x", pa.int32(), metadata={b"PARQUET:field_id": b"7"})
    pq.write_table(written.cast(written.schema.set(7, pa.field("s", pa.struct([member])))), path)
    catalog = open_catalog(tmp_path / "wh")

    [placement] = layout_of(catalog, "ids", "snapshot").placements
    assert placement.base_path is None and placement.reason == "the file carries field ids of its own"
    published = IcebergPublisher(catalog, str(tmp_path / "ice")).publish("ids", "snapshot")
    assert iceberg_rows(published) == shim_rows(catalog, "ids") == [{"id": "r1", "ts": 1, "s": {"x": 4}}]


def test_written_out_files_give_no_valueless_column_chunk_a_dictionary(tmp_path, open_catalog):
    """A re-added column holds no value in the old file's written-out slice: without a dictionary
    there, Presto can filter on it (an empty dictionary page fails: 'cannot use empty ranges')."""
    table = EvolvingTable(tmp_path / "wh" / "readded", ROWS, mor=False)
    table.base([{"id": f"r{i}", "ts": 1, "a": i} for i in range(5)])
    table.alter(drop("a"))
    table.alter(add("a", "string"))
    catalog = open_catalog(tmp_path / "wh")
    published = IcebergPublisher(catalog, str(tmp_path / "ice")).publish("readded", "snapshot")
    [written] = written_for_current(published, tmp_path / "ice")
    assert empty_dictionary_chunks(written) == []
    assert pq.ParquetFile(written).metadata.row_group(0).column(0).has_dictionary_page  # the others keep theirs
    assert iceberg_rows(published) == shim_rows(catalog, "readded")


def test_a_partition_column_missing_from_the_files_is_written_out(tmp_path, open_catalog):
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string())])
    table = TinyTable(tmp_path / "wh" / "dropped_parts", schema, mor=False, partition=["city"],
                      extra={"hoodie.datasource.write.drop.partition.columns": "true"})
    table.base([{"id": "r1", "ts": 1, "city": "sf"}], partition="city=sf")
    catalog = open_catalog(tmp_path / "wh")

    [placement] = layout_of(catalog, "dropped_parts", "snapshot").placements
    assert placement.base_path is None and "'city'" in placement.reason
    published = IcebergPublisher(catalog, str(tmp_path / "ice")).publish("dropped_parts", "snapshot")
    assert iceberg_rows(published) == [{"id": "r1", "ts": 1, "city": "sf"}] == shim_rows(catalog, "dropped_parts")


# -- (e) publishing again ------------------------------------------------------------------------


def logged_table(root: Path) -> tuple[TinyTable, str]:
    """A MOR table: fg1-0 a base file alone, fg2-0 a base file and a log file updating one row."""
    table = TinyTable(root / "t", ROWS)
    table.base([{"id": "r1", "ts": 1, "a": 1}])
    base = table.base([{"id": "r0", "ts": 1, "a": 0}, {"id": "r2", "ts": 1, "a": 2}], file_id="fg2-0")
    table.log([{"id": "r2", "ts": 2, "a": 20}, {"id": "r3", "ts": 1, "a": 3}], file_id="fg2-0", base_instant=base)
    return table, base


LOGGED_ROWS = [{"id": "r0", "ts": 1, "a": 0}, {"id": "r1", "ts": 1, "a": 1}, {"id": "r2", "ts": 2, "a": 20},
               {"id": "r3", "ts": 1, "a": 3}]


def test_a_slice_with_logs_keeps_its_base_file_in_place_and_adds_what_the_logs_change(tmp_path, open_catalog):
    table, base = logged_table(tmp_path / "wh")
    catalog = open_catalog(tmp_path / "wh")
    fg2 = str(base_file(table.path, "fg2-0", base))

    placements = by_group(layout_of(catalog, "t", "snapshot"))
    assert placements["fg2-0"].base_path == fg2 and placements["fg2-0"].reason is None
    assert placements["fg2-0"].merge_logs and not placements["fg1-0"].merge_logs

    folder = tmp_path / "ice"
    published = IcebergPublisher(catalog, str(folder), slice_merging="deletes").publish("t", "snapshot")
    assert published.written_slices == 0
    [deletes] = delete_files(published)
    [log_rows] = [uri for uri in manifest_files(published) if uri.startswith(file_uri(str(folder)))]
    assert sorted(manifest_files(published)) == sorted(
        [file_uri(str(base_file(table.path, "fg1-0", table.instants[0]))), file_uri(fg2), log_rows])
    # the base row r2 is superseded (position 1 of the base file); the log's records stand
    assert pq.read_table(deletes.removeprefix("file://")).to_pylist() == [{"file_path": file_uri(fg2), "pos": 1}]
    assert pq.read_table(log_rows.removeprefix("file://")).to_pylist() == [
        {"id": "r2", "ts": 2, "a": 20}, {"id": "r3", "ts": 1, "a": 3}]
    assert [arrow_field_id(f) for f in pq.read_schema(log_rows.removeprefix("file://"))] == [
        f["id"] for f in current_schema(published.metadata)["fields"]]
    assert iceberg_rows(published) == LOGGED_ROWS == shim_rows(catalog, "t")

    read_optimized = IcebergPublisher(catalog, str(folder)).publish("t", "read_optimized")
    assert delete_files(read_optimized) == []
    assert len(manifest_files(read_optimized)) == 2
    assert iceberg_rows(read_optimized) == [{"id": "r0", "ts": 1, "a": 0}, {"id": "r1", "ts": 1, "a": 1},
                                            {"id": "r2", "ts": 1, "a": 2}] == shim_rows(catalog, "t", "read_optimized")


def test_publishing_again_without_a_commit_writes_nothing(tmp_path, open_catalog):
    logged_table(tmp_path / "wh")
    catalog = open_catalog(tmp_path / "wh")
    folder = tmp_path / "ice"
    publisher = IcebergPublisher(catalog, str(folder))

    first = publisher.publish("t", "snapshot")
    before = listing(folder)
    assert len(data_files(folder)) == 2  # fg2-0's standing log records and position deletes
    again = publisher.publish("t", "snapshot")
    assert again.metadata_location == first.metadata_location
    assert listing(folder) == before
    fresh = IcebergPublisher(catalog, str(folder)).publish("t", "snapshot")  # nothing remembered
    assert fresh.metadata_location == first.metadata_location
    assert fresh.metadata == first.metadata
    assert listing(folder) == before


def test_a_new_commit_is_published_reusing_the_log_side_it_did_not_touch(tmp_path, open_catalog):
    table, _ = logged_table(tmp_path / "wh")
    catalog = open_catalog(tmp_path / "wh")
    folder = tmp_path / "ice"
    publisher = IcebergPublisher(catalog, str(folder), slice_merging="deletes")
    first = publisher.publish("t", "snapshot")
    written = data_files(folder)
    written_at = [os.stat(path).st_mtime_ns for path in written]
    before = listing(folder)

    added = table.base([{"id": "r9", "ts": 1, "a": 9}], file_id="fg3-0")
    second = publisher.publish("t", "snapshot")

    assert second.metadata_location != first.metadata_location
    assert data_files(folder) == written  # fg2-0's files are not written again
    assert [os.stat(path).st_mtime_ns for path in written] == written_at
    new_files = sorted(set(listing(folder)) - set(before))
    sketched = [name for name in new_files if name.endswith(".theta.puffin")]  # the new slice's sketches
    assert len(sketched) == 1 and all("/metadata/" in name for name in new_files if name not in sketched)
    new_base = file_uri(str(base_file(table.path, "fg3-0", added)))
    assert manifest_files(second) == sorted([*manifest_files(first), new_base])  # the same log records file
    assert delete_files(second) == delete_files(first)
    assert sorted(manifest_files(first) + delete_files(first)) == sorted(
        [*(uri for uri in manifest_files(first) if not uri.startswith(file_uri(str(folder)))),
         *(file_uri(p) for p in written)])
    assert iceberg_rows(second) == sorted([*LOGGED_ROWS, {"id": "r9", "ts": 1, "a": 9}],
                                          key=lambda row: row["id"]) == shim_rows(catalog, "t")


MILLIS = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("at", pa.time32("ms"))])


def test_a_new_commit_is_published_reusing_the_written_slices_it_did_not_touch(tmp_path, open_catalog):
    table = TinyTable(tmp_path / "wh" / "ms", MILLIS, mor=False)
    table.base([{"id": "r1", "ts": 1, "at": dt.time(1, 2, 3, 4000)}])
    catalog = open_catalog(tmp_path / "wh")
    folder = tmp_path / "ice"
    publisher = IcebergPublisher(catalog, str(folder))
    first = publisher.publish("ms", "snapshot")
    [placement] = layout_of(catalog, "ms", "snapshot").placements
    assert placement.base_path is None and "'at'" in placement.reason  # Iceberg has no ms times
    [written] = data_files(folder)
    written_at = os.stat(written).st_mtime_ns

    table.base([{"id": "r2", "ts": 1, "at": dt.time(5, 6, 7, 8000)}], file_id="fg2-0")
    second = publisher.publish("ms", "snapshot")

    assert second.metadata_location != first.metadata_location
    [new] = sorted(set(data_files(folder)) - {written})  # only the new slice is written
    assert os.stat(written).st_mtime_ns == written_at
    assert manifest_files(second) == sorted([file_uri(written), file_uri(new)])
    assert manifest_files(first) == [file_uri(written)]
    assert pq.read_schema(written).field("at").type == pa.time64("us")
    expected = [{"id": "r1", "ts": 1, "at": dt.time(1, 2, 3, 4000)}, {"id": "r2", "ts": 1, "at": dt.time(5, 6, 7, 8000)}]
    assert iceberg_rows(second) == expected == shim_rows(catalog, "ms")


def test_a_schema_change_alone_is_published(tmp_path, open_catalog):
    table = EvolvingTable(tmp_path / "wh" / "e", ROWS, mor=False)
    table.base([{"id": "r1", "ts": 1, "a": 1}])
    catalog = open_catalog(tmp_path / "wh")
    publisher = IcebergPublisher(catalog, str(tmp_path / "ice"))
    first = publisher.publish("e", "snapshot")

    table.alter(rename("a", "b"))
    second = publisher.publish("e", "snapshot")

    assert second.metadata_location != first.metadata_location
    assert [f["name"] for f in current_schema(second.metadata)["fields"]] == ["id", "ts", "b"]
    assert iceberg_rows(second) == [{"id": "r1", "ts": 1, "b": 1}] == shim_rows(catalog, "e")


# -- (f) uncommitted writes ----------------------------------------------------------------------


def test_inflight_base_files_are_never_published(tmp_path, open_catalog):
    table = TinyTable(tmp_path / "wh" / "t", ROWS)
    table.base([{"id": "r1", "ts": 1, "a": 1}])
    table.base([{"id": "r2", "ts": 1, "a": 2}], file_id="fg2-0")
    completed = sorted(file_uri(str(p)) for p in (tmp_path / "wh" / "t").glob("*.parquet"))
    catalog = open_catalog(tmp_path / "wh")
    publisher = IcebergPublisher(catalog, str(tmp_path / "ice"))
    before = publisher.publish("t", "snapshot")

    new_group = table.base([{"id": "r3", "ts": 1, "a": 3}], file_id="fg3-0", complete=False)
    same_group = table.base([{"id": "r1", "ts": 5, "a": 100}], complete=False)
    inflight = [file_uri(str(base_file(table.path, "fg3-0", new_group))),
                file_uri(str(base_file(table.path, "fg1-0", same_group)))]

    expected = [{"id": "r1", "ts": 1, "a": 1}, {"id": "r2", "ts": 1, "a": 2}]
    for publish in (publisher.publish, IcebergPublisher(catalog, str(tmp_path / "ice2")).publish):
        for view in ("snapshot", "read_optimized"):
            published = publish("t", view)
            assert manifest_files(published) == planned_files(published) == completed
            assert not set(inflight) & set(manifest_files(published))
            assert iceberg_rows(published) == expected == shim_rows(catalog, "t", view)
    assert publisher.publish("t", "snapshot").metadata_location == before.metadata_location


@pytest.mark.parametrize("readers", list(Readers))
def test_a_commit_completed_after_a_write_still_inflight_is_published(tmp_path, open_catalog, readers):
    """The latest commit is published even when an earlier write is still inflight (a concurrent
    writer): reading the latest is no time travel, which Hudi refuses past an inflight write."""
    table = TinyTable(tmp_path / "wh" / "t", ROWS)
    base = table.base([{"id": "r1", "ts": 1, "a": 1}, {"id": "r2", "ts": 1, "a": 2}])
    table.log([{"id": "r2", "ts": 3, "a": 99}], base_instant=base, complete=False)
    table.log([{"id": "r1", "ts": 2, "a": 10}], base_instant=base)
    catalog = open_catalog(tmp_path / "wh")
    for view in ("snapshot", "read_optimized"):
        published = IcebergPublisher(catalog, str(tmp_path / "ice")).publish("t", view, readers)
        assert iceberg_rows(published) == shim_rows(catalog, "t", view)
    assert shim_rows(catalog, "t") == [{"id": "r1", "ts": 2, "a": 10}, {"id": "r2", "ts": 1, "a": 2}]


@pytest.mark.parametrize("fresh", [False, True], ids=["same-publisher", "new-publisher"])
def test_a_log_file_published_while_inflight_shows_once_committed(tmp_path, open_catalog, fresh):
    table = TinyTable(tmp_path / "wh" / "t", ROWS)
    base = table.base([{"id": "r1", "ts": 1, "a": 1}, {"id": "r2", "ts": 1, "a": 2}])
    table.log([{"id": "r2", "ts": 2, "a": 20}], base_instant=base)
    catalog = open_catalog(tmp_path / "wh")
    publisher = IcebergPublisher(catalog, str(tmp_path / "ice"))

    instant, _ = table._begin(Action.DELTA_COMMIT)  # a log file written, its commit not yet complete
    update = pa.Table.from_pylist([{"id": "r1", "ts": 5, "a": 9}], schema=ROWS)
    write = write_log_blocks(as_storage(str(table.path)), table.config, partition_path="", file_id="fg1-0",
                             base_instant=base, instant=instant, write_token="0-3-0", upserts=update)
    while_inflight = publisher.publish("t", "snapshot")
    assert iceberg_rows(while_inflight) == [{"id": "r1", "ts": 1, "a": 1}, {"id": "r2", "ts": 2, "a": 20}]

    table._commit([write], instant, Action.DELTA_COMMIT, True, ROWS)
    expected = [{"id": "r1", "ts": 5, "a": 9}, {"id": "r2", "ts": 2, "a": 20}]
    assert shim_rows(catalog, "t") == expected  # the premise: the commit is complete and read
    if fresh:  # nothing remembered in memory: only the files in the folder
        publisher = IcebergPublisher(catalog, str(tmp_path / "ice"))
    committed = publisher.publish("t", "snapshot")
    assert committed.metadata_location != while_inflight.metadata_location
    assert iceberg_rows(committed) == expected
