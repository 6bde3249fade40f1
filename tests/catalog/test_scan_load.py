"""Scans under load on a real server: the time limit holds inside scans that send nothing and
against clients that stop reading, the number of running scans is bounded (503 with
Retry-After beyond it), and metadata endpoints answer while every scan slot is taken.

Loops are bounded in count and time; the only timings asserted are generous bounds that prove
nothing hung (measurements are in bench/bench_server_load.py)."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pyarrow as pa
import pytest

from catalog.service import Catalog
from catalog.settings import Settings
from engines.http import RemoteError, ShimClient
from tests.catalog.servekit import live_server, logged, server_log
from tests.tablekit import TinyTable

GROUPS, ROWS = 6, 300_000
NO_ROW = "v = 12.5"  # inside every file's min/max: each row is read, none kept


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    """A copy-on-write table of 1.8M rows (about 50 MB of Arrow data) in 6 files."""
    root = tmp_path_factory.mktemp("load") / "wh"
    table = TinyTable(root / "t", pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.float64())]),
                      mor=False)
    for g in range(GROUPS):
        table.base(pa.table({"id": [f"{g}-{i}" for i in range(ROWS)], "ts": pa.array(range(ROWS), pa.int64()),
                             "v": pa.array(range(ROWS), pa.float64())}), file_id=f"fg{g}-0")
    return root


def settings(warehouse: Path, **limits) -> Settings:
    return Settings(warehouse=str(warehouse), catalog_db=":memory:", **limits)


def post_scan(url: str, body: dict, timeout: float = 60) -> httpx.Response:
    return httpx.post(f"{url}/v1/tables/t/scan", json=body, timeout=timeout)


def until(condition, seconds: float = 30) -> bool:
    """Whether `condition()` became true within `seconds` (polled)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_a_scan_that_keeps_no_row_stops_at_the_time_limit(warehouse):
    with live_server(settings(warehouse, max_scan_seconds=0.05)) as live:
        response = post_scan(live.url, {"filter": NO_ROW})
        assert response.status_code == 413, response.text[:300]
        assert response.json()["error"]["type"] == "ScanLimitError"
        assert "limit of 0.05 seconds" in response.json()["error"]["message"]
        assert until(lambda: live.app.state.scan_slots.in_use == 0)


def test_scans_past_the_running_and_waiting_limits_are_refused_with_503_and_retry_after(warehouse):
    with live_server(settings(warehouse, max_scans=2, max_waiting_scans=1, scan_wait_seconds=30)) as live, \
            httpx.Client(base_url=live.url, timeout=60) as client:
        slots = live.app.state.scan_slots
        held = [client.stream("POST", "/v1/tables/t/scan", json={}) for _ in range(2)]
        for stream in held:
            assert stream.__enter__().status_code == 200  # headers read, body not: the scan holds its slot
        assert slots.in_use == 2
        with ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(post_scan, live.url, {"limit": 5})
            assert until(lambda: slots._waiters == 1)
            refused = post_scan(live.url, {"limit": 5})
            assert refused.status_code == 503, refused.text[:300]
            assert refused.headers["retry-after"] == "1"
            assert refused.json()["error"]["type"] == "ServerBusyError"
            held[0].__exit__(None, None, None)  # a slot frees up: the waiting scan runs
            assert waiting.result(timeout=60).status_code == 200
        held[1].__exit__(None, None, None)
        assert until(lambda: slots.in_use == 0)


def test_metadata_endpoints_answer_while_every_scan_slot_is_taken(warehouse, monkeypatch):
    """45 scans that cannot finish until let go (more than the 40 worker threads FastAPI runs
    plain handlers on): the metadata endpoints must still answer meanwhile."""
    let_go = threading.Event()
    planned = Catalog.scan

    def held_scan(self, name, request, **kwargs):
        assert let_go.wait(60)
        return planned(self, name, request, **kwargs)

    monkeypatch.setattr(Catalog, "scan", held_scan)
    with live_server(settings(warehouse)) as live, ThreadPoolExecutor(45) as pool:
        scans = [pool.submit(post_scan, live.url, {"limit": 10}, 120) for _ in range(45)]
        slots = live.app.state.scan_slots
        assert until(lambda: slots.in_use == slots.running and slots._waiters == slots.waiting)
        try:
            for path in ("/health", "/v1/tables", "/v1/tables/t", "/v1/tables/t/timeline"):
                assert httpx.get(live.url + path, timeout=10).status_code == 200, path
            assert not let_go.is_set() and slots.in_use == slots.running  # answered while the scans ran
        finally:
            let_go.set()
        statuses = sorted(scan.result(timeout=120).status_code for scan in scans)
    assert set(statuses) <= {200, 503} and statuses.count(200) >= slots.running + slots.waiting


def test_a_client_that_stops_reading_loses_its_scan_at_the_time_limit(warehouse):
    with live_server(settings(warehouse, max_scan_seconds=1.0)) as live, server_log() as records:
        address = urlsplit(live.url)
        slots = live.app.state.scan_slots
        connection = socket.create_connection((address.hostname, address.port))
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            connection.sendall(b"POST /v1/tables/t/scan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                               b"Content-Length: 2\r\n\r\n{}")
            assert connection.recv(12).startswith(b"HTTP/1.1 200")
            assert until(lambda: slots.in_use == 1, 10)
            # ... and reads nothing more: the server must give the slot and the scan up.
            assert until(lambda: slots.in_use == 0, 30)
            assert post_scan(live.url, {"limit": 3}).status_code == 200
        finally:
            connection.close()
    text = logged(records)
    assert "ended early" in text and "Exception in ASGI application" not in text


def test_a_response_the_client_does_not_take_is_given_up_after_the_write_timeout(warehouse):
    with live_server(settings(warehouse, write_timeout_seconds=1.0)) as live:
        address = urlsplit(live.url)
        slots = live.app.state.scan_slots
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
        connection.request("POST", "/v1/tables/t/scan", body=b"{}", headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        assert response.status == 200
        assert until(lambda: slots.in_use == 0, 30)  # 15 minutes of scan time left, but nobody reads
        connection.close()


def test_the_client_asks_a_busy_server_again_after_retry_after(warehouse):
    with live_server(settings(warehouse, max_scans=1, max_waiting_scans=0)) as live, \
            httpx.Client(base_url=live.url, timeout=60) as client, ThreadPoolExecutor(1) as pool:
        held = client.stream("POST", "/v1/tables/t/scan", json={})
        assert held.__enter__().status_code == 200
        with pytest.raises(RemoteError) as busy:
            ShimClient(live.url, busy_wait=0).scan("t", limit=3)
        assert (busy.value.status, busy.value.retry_after) == (503, 1.0)
        patient = pool.submit(lambda: ShimClient(live.url, busy_wait=30).scan("t", limit=3))
        time.sleep(0.5)  # refused at least once meanwhile
        held.__exit__(None, None, None)
        assert patient.result(timeout=60).num_rows == 3
