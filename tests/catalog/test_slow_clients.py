"""Slow clients on a real server, over raw sockets: a client still reading a response slowly is
waited for, one that stopped is cut at the write timeout (its connection dropped at once), and
requests that never arrive whole are closed at the request timeout (issue 36, findings 5 and 6).

The server's sockets get a small kernel send buffer (`send_buffer`): the kernel otherwise buffers
megabytes of a response on loopback, and a test would need that many bytes to see the server wait."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow as pa
import pytest

from catalog.server import running
from catalog.settings import Settings
from tests.tablekit import TinyTable

ROWS = 20_000  # about 400 KiB of Arrow data, sent in batches of 256 KiB
SCAN = b"POST /v1/tables/t/scan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("slow") / "wh"
    table = TinyTable(root / "t", pa.schema([("id", pa.string()), ("ts", pa.int64())]), mor=False)
    table.base(pa.table({"id": [f"{i:09d}" for i in range(ROWS)], "ts": pa.array(range(ROWS), pa.int64())}))
    return root


def serve(warehouse: Path, **settings):
    return running(Settings(warehouse=str(warehouse), catalog_db=":memory:", batch_bytes=256 * 1024, **settings),
                   send_buffer=16 * 1024)


def connect(url: str, receive_buffer: int = 16 * 1024) -> socket.socket:
    address = urlsplit(url)
    connection = socket.create_connection((address.hostname, address.port), timeout=10)
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    return connection


def read_to_the_end(connection: socket.socket, rate: float | None = None) -> tuple[bytes, bool]:
    """What the server sends until a chunked body ends or the server closes (taken at about
    `rate` bytes a second), and whether it closed (False: the body ended, or nothing came for the
    socket's timeout)."""
    received = bytearray()
    started = time.monotonic()
    while not received.endswith(b"\r\n0\r\n\r\n"):
        try:
            chunk = connection.recv(4096)
        except ConnectionResetError:
            return bytes(received), True
        except TimeoutError:
            return bytes(received), False
        if not chunk:
            return bytes(received), True
        received += chunk
        if rate is not None:
            time.sleep(max(0.0, started + len(received) / rate - time.monotonic()))
    return bytes(received), False


def test_a_client_reading_slowly_but_steadily_is_not_cut(warehouse):
    """100 KiB/s: each 256 KiB batch takes the client over two seconds, twice the write timeout,
    but it never stops taking bytes for a second."""
    with serve(warehouse, write_timeout_seconds=1.0) as live, connect(live.url, 64 * 1024) as connection:
        connection.sendall(SCAN)
        started = time.monotonic()
        received, _ = read_to_the_end(connection, rate=100 * 1024)
        took = time.monotonic() - started
    assert received.startswith(b"HTTP/1.1 200") and received.endswith(b"\r\n0\r\n\r\n")  # the whole body
    body = _unchunked(received.split(b"\r\n\r\n", 1)[1])
    assert pa.ipc.open_stream(body).read_all().num_rows == ROWS
    assert took > 3.0  # the client took each batch in over twice the write timeout


def test_a_client_that_stops_reading_is_cut_at_the_write_timeout(warehouse):
    with serve(warehouse, write_timeout_seconds=1.0) as live:
        slots = live.app.state.scan_slots
        with connect(live.url) as connection:
            connection.sendall(SCAN)
            assert connection.recv(12) == b"HTTP/1.1 200"
            time.sleep(3.0)  # reads nothing: cut after a second without progress
            stalled = (slots.in_use, len(live.server.server_state.connections))
            connection.settimeout(5)
            received, closed = read_to_the_end(connection)
    # The scan is given up and the connection dropped at once, what it buffered with it (closing
    # it gracefully would hold it until the client reads all that or goes away).
    assert stalled == (0, 0)
    assert closed and not received.endswith(b"0\r\n\r\n")  # never a complete body


def _unchunked(data: bytes) -> bytes:
    body = bytearray()
    while True:
        size_line, data = data.split(b"\r\n", 1)
        size = int(size_line, 16)
        if size == 0:
            return bytes(body)
        body += data[:size]
        data = data[size + 2:]


@pytest.mark.parametrize("sent", [
    b"",  # connected, nothing sent
    b"POST /v1/tables/t/scan HTTP/1.1\r\nHost: x\r\n",  # headers never finished
    b"POST /v1/tables/t/scan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"",
], ids=["nothing", "headers", "body"])
def test_requests_that_never_arrive_whole_are_closed_at_the_request_timeout(warehouse, sent):
    with serve(warehouse, request_timeout_seconds=1.0) as live:
        connections = [connect(live.url) for _ in range(20)]
        try:
            started = time.monotonic()
            for connection in connections:
                connection.sendall(sent)
            answers = []
            for connection in connections:
                connection.settimeout(max(0.1, started + 4.0 - time.monotonic()))
                answers.append(read_to_the_end(connection))
            took = time.monotonic() - started
        finally:
            for connection in connections:
                connection.close()
        assert live.server.server_state.connections == set()
    assert all(closed for _, closed in answers), "some half-sent requests were still open after 4 seconds"
    assert 0.9 < took < 4.0
    for received, _ in answers:
        assert received.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
        assert received.endswith(b'"message": "the request did not arrive whole within 1 seconds", "code": 408}}')


def test_the_request_timeout_spares_requests_that_arrive_whole(warehouse):
    request = SCAN.replace(b"Content-Length: 2\r\n\r\n{}", b"Content-Length: 12\r\n\r\n{\"limit\": 5}")
    with serve(warehouse, request_timeout_seconds=1.0) as live, connect(live.url, 1 << 20) as connection:
        for _ in range(2):  # a kept-alive connection: its second request starts a timeout of its own
            for part in (request[:30], request[30:60], request[60:]):
                connection.sendall(part)
                time.sleep(0.4)  # the whole request takes longer than the timeout, each part less
            received = b""
            while not received.endswith(b"\r\n0\r\n\r\n"):
                received += connection.recv(65536)
            assert received.startswith(b"HTTP/1.1 200")
