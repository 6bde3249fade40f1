"""One table that cannot be read never costs the others: listing, scans, `POST /v1/publish` and
the Hadoop catalog refresh go on for the good tables and report the bad one by name, in JSON,
naming the damaged file relative to the table (issue 36, finding 1)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pyarrow as pa
import pytest

import shim
from catalog.settings import Settings
from engines.http import ShimClient
from tests.catalog.servekit import TRIPS_ROWS, build_warehouse, live_server
from tests.tablekit import TinyTable

GOOD = {"trips", "events"}


def damage(root: Path) -> dict[str, str]:
    """The good tables and two damaged ones; the start of the message expected for each of those."""
    build_warehouse(root)
    for name in ("bad_bytes", "bad_stat"):
        TinyTable(root / name, pa.schema([("id", pa.string()), ("ts", pa.int64())]), mor=False).base(
            [{"id": "a", "ts": 1}])
    properties = root / "bad_bytes" / ".hoodie" / "hoodie.properties"
    properties.write_bytes(properties.read_bytes() + b"hoodie.note=caf\xe9\n")  # Latin-1, not UTF-8
    [commit] = (root / "bad_stat" / ".hoodie").glob("*.commit")
    document = json.loads(commit.read_text())
    next(iter(document["partitionToWriteStats"].values()))[0]["numWrites"] = "lots"
    commit.write_text(json.dumps(document))
    return {"bad_bytes": "bad_bytes/.hoodie/hoodie.properties is not UTF-8 text",
            "bad_stat": f"bad_stat/.hoodie/{commit.name}: numWrites of file group 'fg1-0' is 'lots', not a number"}


@pytest.fixture
def warehouse(tmp_path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "wh"
    return root, damage(root)


def test_damaged_tables_are_reported_by_name_while_the_good_ones_are_listed_scanned_and_published(
        tmp_path, warehouse):
    root, expected = warehouse
    hadoop = tmp_path / "presto"
    settings = Settings(warehouse=str(root), catalog_db=":memory:", hadoop_catalog_dir=str(hadoop))
    with live_server(settings) as live, httpx.Client(base_url=live.url, timeout=60) as client:
        listed = client.get("/v1/tables")
        scanned = ShimClient(live.url).scan("trips")
        bad_scan = client.post("/v1/tables/bad_stat/scan", json={})
        published = client.post("/v1/publish")
        loaded = client.get("/iceberg/v1/namespaces/default/tables/events_ro")
        bad_load = client.get("/iceberg/v1/namespaces/default/tables/bad_bytes")
    for response in (listed, bad_scan, published, loaded, bad_load):
        assert response.headers["content-type"] == "application/json", response.text[:300]
    assert listed.status_code == 200
    tables = {t["name"]: t for t in listed.json()["tables"]}
    assert set(tables) == GOOD | set(expected)
    # (listing reads the properties and the timeline's file names; a commit's content, when read)
    assert {name for name, t in tables.items() if t["error"] is None and t["table_type"]} == GOOD | {"bad_stat"}
    assert tables["bad_bytes"]["error"]["type"] == "InvalidTableError"
    assert tables["bad_bytes"]["error"]["message"].startswith(expected["bad_bytes"])
    assert sorted(scanned.to_pylist(), key=lambda r: r["id"]) == TRIPS_ROWS
    assert bad_scan.status_code == 500
    assert bad_scan.json()["error"]["message"].startswith(expected["bad_stat"])
    assert published.status_code == 200
    report = published.json()
    assert set(report["published"]) == {"trips", "trips_ro", "events", "events_ro"}
    assert set(report["failed"]) == {f"{name}{suffix}" for name in expected for suffix in ("", "_ro")}
    for name, message in expected.items():
        assert report["failed"][name].startswith(message) and report["failed"][f"{name}_ro"].startswith(message)
    assert sorted(p.name for p in (hadoop / "default").iterdir()) == ["events", "events_ro", "trips", "trips_ro"]
    assert loaded.status_code == 200 and loaded.json()["metadata"]["properties"]["hudi-shim.table"] == "events"
    assert bad_load.status_code == 500 and bad_load.json()["error"]["message"].startswith(expected["bad_bytes"])
    for response in (listed, bad_scan, published, bad_load):
        assert str(tmp_path) not in response.text


def test_a_fault_of_the_servers_own_in_one_table_is_json_and_costs_no_other_table(warehouse, monkeypatch):
    """Not a shim error (a bug, a library's own exception): the listing and the publication go on,
    and the table's own endpoints answer JSON, never a plain-text 500."""
    root, _ = warehouse
    opened = shim.open_table

    def failing(path, **options):
        if str(getattr(path, "root", path)).endswith("/trips"):  # a path or a storage
            raise RuntimeError("a bug reading trips")
        return opened(path, **options)

    monkeypatch.setattr(shim, "open_table", failing)
    with live_server(Settings(warehouse=str(root), catalog_db=":memory:")) as live, \
            httpx.Client(base_url=live.url, timeout=60) as client:
        listed = client.get("/v1/tables")
        detail = client.get("/v1/tables/trips")
        published = client.post("/v1/publish")
        events = client.get("/v1/tables/events")
    assert listed.status_code == 200
    tables = {t["name"]: t for t in listed.json()["tables"]}
    assert tables["trips"]["error"] == {"type": "RuntimeError", "message": "a bug reading trips", "code": None,
                                        "column": None, "instant": None, "feature": None}
    assert tables["events"]["error"] is None
    assert (detail.status_code, detail.headers["content-type"]) == (500, "application/json")
    assert detail.json()["error"] == {"type": "InternalServerError", "message": "RuntimeError: a bug reading trips",
                                      "code": 500}
    assert published.json()["failed"]["trips"] == "RuntimeError: a bug reading trips"
    assert {"events", "events_ro"} <= set(published.json()["published"])
    assert events.status_code == 200
