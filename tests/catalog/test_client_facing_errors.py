"""What clients are told: deleted tables are no longer listed (by the API nor the Iceberg
namespace), errors name paths relative to the table, never the server's folders, and a stream
cut short is an incomplete HTTP body (never a complete shorter result), without server errors."""

from __future__ import annotations

import logging
import shutil
import socket
from urllib.parse import urlsplit

import httpx
import pyarrow as pa
import pytest

import catalog.routes
from catalog.settings import Settings
from catalog.stream import ERROR_METADATA_KEY
from tests.catalog.servekit import live_server, logged, server_log
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64())])


@pytest.fixture
def two_tables(tmp_path):
    for name in ("kept", "deleted"):
        TinyTable(tmp_path / "wh" / name, SCHEMA, mor=False).base([{"id": "a", "ts": 1}])
    return tmp_path / "wh"


def test_a_deleted_table_is_no_longer_listed_nor_served(two_tables):
    with live_server(Settings(warehouse=str(two_tables), catalog_db=":memory:")) as live, \
            httpx.Client(base_url=live.url, timeout=30) as client:
        assert [t["name"] for t in client.get("/v1/tables").json()["tables"]] == ["deleted", "kept"]
        shutil.rmtree(two_tables / "deleted")
        listed = client.get("/v1/tables")
        assert [t["name"] for t in listed.json()["tables"]] == ["kept"]
        iceberg = client.get("/iceberg/v1/namespaces/default/tables").json()["identifiers"]
        assert sorted(i["name"] for i in iceberg) == ["kept", "kept_ro"]
        for response in (client.get("/v1/tables/deleted"), client.post("/v1/tables/deleted/scan", json={}),
                         client.get("/iceberg/v1/namespaces/default/tables/deleted")):
            assert response.status_code == 404, response.text[:300]
            assert str(two_tables) not in response.text
        assert str(two_tables) not in listed.text


def test_errors_of_tables_that_cannot_be_opened_name_no_server_path(two_tables):
    properties = two_tables / "kept" / ".hoodie" / "hoodie.properties"
    properties.write_text(properties.read_text().replace("hoodie.table.version=6", "hoodie.table.version=99"))
    with live_server(Settings(warehouse=str(two_tables), catalog_db=":memory:")) as live:
        listed = httpx.get(f"{live.url}/v1/tables", timeout=30)
    entry = next(t for t in listed.json()["tables"] if t["name"] == "kept")
    assert entry["error"] is not None
    assert str(two_tables) not in listed.text


def raw_scan(url: str, body: bytes = b"{}") -> bytes:
    """The raw HTTP response to a scan, read until the server closes the connection."""
    address = urlsplit(url)
    with socket.create_connection((address.hostname, address.port), timeout=30) as connection:
        connection.sendall(b"POST /v1/tables/big/scan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        received = bytearray()
        while chunk := connection.recv(1 << 16):
            received += chunk
    return bytes(received)


def test_a_stream_cut_by_a_limit_is_an_incomplete_http_body_and_no_server_error(tmp_path):
    table = TinyTable(tmp_path / "wh" / "big", SCHEMA, mor=False)
    table.base([{"id": f"{i:05d}", "ts": i} for i in range(5000)])
    limited = Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:", max_scan_rows=3000, batch_rows=1000)
    with live_server(limited) as live, server_log() as records:
        raw = raw_scan(live.url)
        with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
            httpx.post(f"{live.url}/v1/tables/big/scan", json={}, timeout=30)
        complete = raw_scan(live.url, b'{"limit": 2500}')
    assert raw.startswith(b"HTTP/1.1 200") and b"transfer-encoding: chunked" in raw
    assert not raw.endswith(b"0\r\n\r\n")  # the chunked body never ends: the transfer was aborted
    assert ERROR_METADATA_KEY in raw  # after the error batch
    assert complete.endswith(b"0\r\n\r\n")
    text = logged(records)
    assert [r.levelname for r in records if r.levelno >= logging.ERROR] == [], text
    assert text.count("ended early") == 2 and "limit of 3000 rows" in text


def test_a_fault_of_the_server_mid_stream_is_still_logged_as_an_error(tmp_path, monkeypatch):
    TinyTable(tmp_path / "wh" / "big", SCHEMA, mor=False).base([{"id": "a", "ts": 1}])
    real = catalog.routes._scan_chunks

    def failing(*args, **kwargs):
        chunks = real(*args, **kwargs)
        yield next(chunks)  # the schema: the response has started
        raise RuntimeError("a bug")

    monkeypatch.setattr(catalog.routes, "_scan_chunks", failing)
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live, \
            server_log() as records:
        raw = raw_scan(live.url)
    assert raw.startswith(b"HTTP/1.1 200") and not raw.endswith(b"0\r\n\r\n")
    errors = [r for r in records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is not None and "a bug" in logged(errors)


def test_no_client_facing_message_names_a_server_path(tmp_path):
    """Every endpoint, for tables that fail in each way, with the server's folders outside the
    warehouse, then with the warehouse deleted: no absolute server path in any answer but the
    Iceberg metadata's own file URIs (which readers open)."""
    warehouse = tmp_path / "wh"
    TinyTable(warehouse / "good", SCHEMA, mor=False).base([{"id": "a", "ts": 1}])
    for name, folder in (("gone", warehouse / "gone"), ("outside", tmp_path / "outside")):
        TinyTable(folder, SCHEMA, mor=False).base([{"id": "a", "ts": 1}])
        next(folder.glob("*.parquet")).unlink()  # data a completed commit wrote is missing
    TinyTable(warehouse / "boot", SCHEMA).base([{"id": "a", "ts": 1}])
    with open(warehouse / "boot" / ".hoodie" / "hoodie.properties", "a") as properties:
        properties.write("hoodie.bootstrap.base.path=/somewhere\n")
    TinyTable(warehouse / "v99", SCHEMA, mor=False).base([{"id": "a", "ts": 1}])
    properties = warehouse / "v99" / ".hoodie" / "hoodie.properties"
    properties.write_text(properties.read_text().replace("hoodie.table.version=6", "hoodie.table.version=99"))
    settings = Settings(warehouse=str(warehouse), tables=(f"outside={tmp_path / 'outside'}",),
                        iceberg_dir=str(tmp_path / "iceberg"), hadoop_catalog_dir=str(tmp_path / "presto"))
    with live_server(settings) as live, httpx.Client(base_url=live.url, timeout=60) as client:
        published = client.post("/v1/publish")
        responses = [published, client.get("/v1/tables")]
        for name in ("good", "gone", "boot", "v99", "outside", "nope"):
            responses += [client.post(f"/v1/tables/{name}/scan", json={}), client.get(f"/v1/tables/{name}"),
                          client.get(f"/v1/tables/{name}/files"), client.get(f"/v1/tables/{name}/timeline"),
                          client.get(f"/iceberg/v1/namespaces/default/tables/{name}"),
                          client.get(f"/iceberg/v1/namespaces/default/tables/{name}_ro")]
        shutil.rmtree(warehouse)
        responses += [client.get("/health"), client.get("/v1/tables"), client.post("/v1/publish"),
                      client.get("/v1/tables/good")]
    failed = published.json()["failed"]
    assert set(failed) == {f"{name}{suffix}" for name in ("gone", "boot", "v99", "outside") for suffix in ("", "_ro")}
    assert failed["boot"].startswith("boot/.hoodie/hoodie.properties: bootstrapped tables")
    assert published.json()["hadoop_catalog"] == "<hadoop-catalog-dir>"
    assert responses[-3].json()["error"]["message"].startswith("the warehouse folder <warehouse> does not exist")
    errors = [response for response in responses if response.status_code >= 400]
    assert len(errors) >= 25
    for response in responses:
        if response.request.url.path.startswith("/iceberg/") and response.status_code == 200:
            continue
        assert str(tmp_path) not in response.text, (response.request.url.path, response.text[:500])
