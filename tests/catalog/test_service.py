"""The catalog service without a web server: settings, handles, metadata, scans."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from catalog import Catalog, ScanRequest, Settings
from shim.errors import InvalidArgumentError, TableNotFoundError
from tests.catalog.servekit import TRIPS_ROWS, build_warehouse
from tests.tablekit import TinyTable


@pytest.fixture
def warehouse(tmp_path):
    return build_warehouse(tmp_path / "wh")


@pytest.fixture
def catalog(warehouse):
    cat = Catalog(Settings(warehouse=str(warehouse.root), catalog_db=":memory:", max_scan_rows=10))
    yield cat
    cat.close()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_scan_rows": 0}, "max_scan_rows must be a positive integer"),
        ({"batch_rows": -5}, "batch_rows must be a positive integer"),
        ({"max_scan_seconds": 0}, "max_scan_seconds must be positive"),
        ({"iceberg_keep_seconds": -1}, "iceberg_keep_seconds must be zero or more"),
        ({"port": 70000}, "port must be in 0..65535"),
        ({"token": "  "}, "token must not be blank"),
        ({"tables": "/data/t"}, "tables must be a sequence"),
        ({"discovery_seconds": -1}, "discovery_seconds must be zero or more"),
    ],
)
def test_settings_invalid_values_raise(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        Settings(**kwargs)


def test_settings_registry_location_defaults():
    assert Settings().registry_location() == ":memory:"
    assert Settings(warehouse="/data/wh").registry_location() == os.path.join("/data/wh", ".hudi-shim",
                                                                              "catalog.sqlite")
    assert Settings(warehouse="/data/wh", catalog_db="/var/c.db").registry_location() == "/var/c.db"


def test_tables_setting_registers_named_and_unnamed_paths(tmp_path):
    for name in ("one", "two"):
        TinyTable(tmp_path / name, pa.schema([("id", pa.string()), ("ts", pa.int64())])).base([{"id": "a", "ts": 1}])
    cat = Catalog(Settings(tables=(f"first={tmp_path / 'one'}", str(tmp_path / "two"))))
    assert cat.names() == ["first", "two"]


def test_handle_reloads_snapshot_only_when_timeline_changes(catalog, warehouse):
    handle = catalog.handle("events")
    first = handle.snapshot()
    assert handle.snapshot() is first and handle.loaded() is first
    warehouse.events.base([{"key": "k3", "ts": 1, "count": 3, "label": "three"}], file_id="fg3-0")
    assert handle.loaded() is None
    second = handle.snapshot()
    assert second is not first and handle.table().snapshot() is second
    assert second.active_timeline.latest_write().requested_time == warehouse.events.instants[-1]


def test_describe_gives_ids_properties_and_latest_instant(catalog, warehouse):
    info = catalog.describe("trips")
    assert info.table_type == "MERGE_ON_READ" and info.version == 6
    assert info.instant.requested_time == warehouse.trips.instants[-1]
    assert info.schema.names == ["id", "ts", "city", "amount", "tip", "note"]
    assert all(b"PARQUET:field_id" in f.metadata for f in info.schema)
    assert info.properties["hoodie.table.recordkey.fields"] == "id"
    assert info.partition_fields == ("city",)


def test_timeline_one_entry_per_instant(catalog, warehouse):
    assert [i.requested_time for i in catalog.timeline("trips")] == warehouse.trips.instants


def test_scan_gives_the_rows(catalog):
    rows = catalog.scan("trips", ScanRequest()).read_all().to_pylist()
    assert sorted(rows, key=lambda r: r["id"]) == TRIPS_ROWS


def test_scan_limit_over_server_maximum_is_refused(catalog):
    with pytest.raises(InvalidArgumentError, match="limit 11 exceeds the server's limit of 10 rows"):
        catalog.scan("trips", ScanRequest(limit=11))


def test_unknown_table_raises_table_not_found(catalog):
    with pytest.raises(TableNotFoundError, match="no table named 'nope'"):
        catalog.table("nope")


def test_a_table_added_under_the_warehouse_shows_by_name_at_once_and_listed_after_discovery_seconds(warehouse):
    catalog = Catalog(Settings(warehouse=str(warehouse.root), catalog_db=":memory:", discovery_seconds=3600))
    try:
        before = catalog.names()
        added = TinyTable(warehouse.root / "added", pa.schema([("id", pa.string()), ("ts", pa.int64())]))
        added.base([{"id": "a", "ts": 1}])
        assert catalog.names() == before  # listed at most every discovery_seconds
        assert catalog.table("added").read().to_pylist() == [{"id": "a", "ts": 1}]  # asked for: searched at once
        assert "added" in catalog.names()
    finally:
        catalog.close()
    fresh = Catalog(Settings(warehouse=str(warehouse.root), catalog_db=":memory:", discovery_seconds=0))
    try:
        later = TinyTable(warehouse.root / "later", pa.schema([("id", pa.string()), ("ts", pa.int64())]))
        later.base([{"id": "b", "ts": 1}])
        assert "later" in fresh.names()
    finally:
        fresh.close()
