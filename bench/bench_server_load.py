"""Metadata latency under scan load: 60 scans whose filter keeps no row and 50 full scans at once,
while `GET /v1/tables` is polled.

    python bench/bench_server_load.py [--table /tmp/hudi-shim-load-bench] [--rows 1000000]
                                      [--empty 60] [--full 50] [--poll-ms 20] [--serve-option=--max-scans=4 ...]

Generates (when missing) the serving benchmark's MOR table (8 city partitions, 10% of rows updated
in log blocks). The server runs as a separate process (`hudi-shim serve`, default limits) on a
loopback port. Every scan is its own client thread; a scan the server refuses as busy (503) is
asked again after its `Retry-After`, as `ShimClient` does, until all have run. Prints the latency
of `/v1/tables` at rest and under the load (p50 / p95 / max; target p95 < 100 ms), and how the
scans fared (answers, refusals, time to the last byte).
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import socket
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.synchronize import Event
from queue import Queue

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from bench.bench_serve import generate, start_server

NO_ROW = "fare = 12.3456789"  # inside every file's bounds: every row is read and merged, none kept
TARGET_P95_MS = 100.0


@dataclass
class ScanResult:
    status: int
    refusals: int
    seconds: float
    body_bytes: int


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def request(port: int, method: str, path: str, body: dict | None = None, timeout: float = 600) -> tuple[int, bytes, str | None]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        connection.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        response = connection.getresponse()
        return response.status, response.read(), response.getheader("Retry-After")
    finally:
        connection.close()


def raw_post(port: int, path: str, body: dict) -> tuple[int, int, str | None]:
    """Status, bytes received and Retry-After of a POST read to the connection's end with plain
    socket reads (a Python HTTP client's chunk parsing would make the load's client side, on the
    same two cores, cost more than the server's)."""
    data = json.dumps(body).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nConnection: close\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode()
    buffer = bytearray(1 << 20)
    first = b""
    total = 0
    with socket.create_connection(("127.0.0.1", port), timeout=600) as connection:
        connection.sendall(head + data)
        while received := connection.recv_into(buffer):
            if len(first) < 4096:
                first += bytes(buffer[: min(received, 4096)])
            total += received
    header = first.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    status = int(header.split(" ", 2)[1])
    retry = next((line.split(":", 1)[1].strip() for line in header.split("\r\n")
                  if line.lower().startswith("retry-after:")), None)
    return status, total, retry


def scan(port: int, body: dict, give_up: float) -> ScanResult:
    """One scan to its last byte, asked again after Retry-After while the server is busy."""
    started = time.monotonic()
    refusals = 0
    while True:
        status, received, retry = raw_post(port, "/v1/tables/bench/scan", body)
        if status != 503 or time.monotonic() > give_up:
            return ScanResult(status, refusals, time.monotonic() - started, received)
        refusals += 1
        time.sleep(float(retry or 1))


def poll(port: int, stop: Event, interval: float, out: Queue) -> None:
    """Latencies (seconds) of `GET /v1/tables`, one request every `interval` until `stop`, put in
    `out` (run in a process of its own: the clients' threads do not delay it)."""
    latencies = []
    while not stop.is_set():
        began = time.perf_counter()
        status, _, _ = request(port, "GET", "/v1/tables", timeout=60)
        latencies.append(time.perf_counter() - began)
        assert status == 200, status
        stop.wait(max(0.0, interval - latencies[-1]))
    out.put(latencies)


def polled(port: int, interval: float, during: Callable[[], object]) -> tuple[list[float], object]:
    """The metadata latencies measured by a poller process while `during()` runs, and its result."""
    context = multiprocessing.get_context("spawn")
    stop, out = context.Event(), context.Queue()
    poller = context.Process(target=poll, args=(port, stop, interval, out))
    poller.start()
    try:
        time.sleep(0.5)  # the poller is under way
        result = during()
    finally:
        stop.set()
    latencies = out.get(timeout=120)
    poller.join(30)
    return latencies, result


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (f"p50 {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
            f"max {ordered[-1] * 1000:.1f} ms ({len(ordered)} requests)")


def timed(run: Callable[[], object]) -> float:
    began = time.perf_counter()
    run()
    return time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", default="/tmp/hudi-shim-load-bench")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--empty", type=int, default=60, help="scans whose filter keeps no row")
    parser.add_argument("--full", type=int, default=50, help="scans of every row")
    parser.add_argument("--poll-ms", type=float, default=20.0, help="pause between metadata requests")
    parser.add_argument("--serve-option", action="append", default=[], help="passed to hudi-shim serve")
    args = parser.parse_args()
    if not os.path.exists(os.path.join(args.table, ".hoodie", "hoodie.properties")):
        print(f"generating {args.rows:,} rows in {args.table} ...", flush=True)
        generate(args.table, args.rows, 0.1)
    port = free_port()
    server = start_server(args.table, port, *args.serve_option)
    try:
        at_rest, _ = polled(port, args.poll_ms / 1000, lambda: time.sleep(2.0))
        full_seconds = timed(lambda: scan(port, {}, time.monotonic() + 60))
        print(f"one full scan alone: {full_seconds:.2f} s")
        bodies = [{"filter": NO_ROW}] * args.empty + [{}] * args.full
        give_up = time.monotonic() + 900

        def load() -> list[ScanResult]:
            with ThreadPoolExecutor(len(bodies)) as clients:
                return [f.result() for f in [clients.submit(scan, port, body, give_up) for body in bodies]]

        began = time.monotonic()
        under_load, outcome = polled(port, args.poll_ms / 1000, load)
        results: list[ScanResult] = outcome  # type: ignore[assignment]
        elapsed = time.monotonic() - began
    finally:
        server.terminate()
        server.wait(30)
    print(f"/v1/tables at rest:      {percentiles(at_rest)}")
    print(f"/v1/tables under load:   {percentiles(under_load)}  (target p95 < {TARGET_P95_MS:.0f} ms)")
    for label, group in (("no-row scans", results[:args.empty]), ("full scans", results[args.empty:])):
        statuses: dict[int, int] = {}
        for result in group:
            statuses[result.status] = statuses.get(result.status, 0) + 1
        seconds = [r.seconds for r in group]
        print(f"{label}: {len(group)}, answers {statuses}, refused as busy {sum(r.refusals for r in group)} times, "
              f"to the last byte p50 {statistics.median(seconds):.2f} s, max {max(seconds):.2f} s, "
              f"{sum(r.body_bytes for r in group) / 1e6:.0f} MB")
    print(f"all {len(bodies)} scans done in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
