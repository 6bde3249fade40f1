"""A warehouse deleted under a running server, and made again: the server says it cannot serve it
meanwhile (`/health` and every listing a 503 with the reason, naming no server path) and serves it
again once it is back, without a restart; so for the registry's database deleted alone (issue 36,
finding 2)."""

from __future__ import annotations

import shutil

import httpx
import pyarrow as pa

from catalog.settings import Settings
from engines.http import ShimClient
from tests.catalog.servekit import live_server
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64())])


def test_a_warehouse_deleted_then_made_again_is_served_again_without_restart(tmp_path):
    warehouse = tmp_path / "wh"
    TinyTable(warehouse / "t", SCHEMA, mor=False).base([{"id": "a", "ts": 1}])
    shutil.copytree(warehouse / "t", tmp_path / "copy")
    registry = warehouse / ".hudi-shim" / "catalog.sqlite"
    with live_server(Settings(warehouse=str(warehouse))) as live, \
            httpx.Client(base_url=live.url, timeout=30) as client:
        assert client.get("/health").json() == {"status": "ok"}
        assert [t["name"] for t in client.get("/v1/tables").json()["tables"]] == ["t"]
        shutil.rmtree(warehouse)
        gone = [client.get("/health"), client.get("/v1/tables"), client.get("/v1/tables/t"),
                client.get("/iceberg/v1/namespaces/default/tables")]
        warehouse.mkdir()
        shutil.copytree(tmp_path / "copy", warehouse / "t")
        shutil.copytree(tmp_path / "copy", warehouse / "t2")  # a table the registry never saw
        back = client.get("/health")
        listed = client.get("/v1/tables")
        rows = ShimClient(live.url).scan("t2").to_pylist()
        published = client.post("/v1/publish")
    assert [response.status_code for response in gone] == [503] * 4
    assert gone[0].json() == {"status": "unavailable", "reason": "the warehouse folder <warehouse> does not exist "
                              "(deleted or unmounted?): its tables are served again when it is back"}
    assert gone[1].json()["error"]["type"] == "CatalogUnavailableError"
    assert all(str(tmp_path) not in response.text for response in gone)
    assert (back.status_code, back.json()) == (200, {"status": "ok"})
    assert [t["name"] for t in listed.json()["tables"]] == ["t", "t2"]
    assert rows == [{"id": "a", "ts": 1}]
    assert published.status_code == 200 and published.json()["failed"] == {}
    assert registry.is_file()  # made again where it was


def test_a_registry_deleted_alone_is_made_again_with_its_entries(tmp_path):
    outside = tmp_path / "elsewhere" / "kept"  # registered by path: not found by searching the warehouse
    TinyTable(outside, SCHEMA, mor=False).base([{"id": "b", "ts": 2}])
    TinyTable(tmp_path / "wh" / "t", SCHEMA, mor=False).base([{"id": "a", "ts": 1}])
    state = tmp_path / "wh" / ".hudi-shim"
    with live_server(Settings(warehouse=str(tmp_path / "wh"), tables=(f"named={outside}",))) as live, \
            httpx.Client(base_url=live.url, timeout=30) as client:
        shutil.rmtree(state)
        named = client.get("/v1/tables/named")
        listed = client.get("/v1/tables")
        health = client.get("/health")
    assert named.status_code == 200, named.text
    assert sorted(t["name"] for t in listed.json()["tables"]) == ["named", "t"]
    assert health.json() == {"status": "ok"}
    assert (state / "catalog.sqlite").is_file()


def test_health_reports_a_registry_whose_folder_cannot_be_made_again(tmp_path):
    TinyTable(tmp_path / "wh" / "t", SCHEMA, mor=False).base([{"id": "a", "ts": 1}])
    database = tmp_path / "state" / "catalog" / "registry.sqlite"
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=str(database))) as live, \
            httpx.Client(base_url=live.url, timeout=30) as client:
        shutil.rmtree(tmp_path / "state")
        unavailable = client.get("/health")
        (tmp_path / "state").mkdir()  # its parent back: the registry's own folder is made again
        back = client.get("/health")
        listed = client.get("/v1/tables")
    assert unavailable.status_code == 503
    assert unavailable.json() == {"status": "unavailable", "reason": "the catalog database <catalog-db> was "
                                  "deleted and cannot be made again: No such file or directory"}
    assert back.json() == {"status": "ok"} and [t["name"] for t in listed.json()["tables"]] == ["t"]
    assert database.is_file()
