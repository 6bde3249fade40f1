"""Evolved tables in a warehouse folder, and a real uvicorn server on a free loopback port."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pyarrow as pa

from catalog.server import RunningServer, running
from catalog.settings import Settings
from catalog.stream import ERROR_METADATA_KEY
from tests.tablekit import EvolvingTable, add, drop, rename, retype

TRIPS = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("fare", pa.float64()),
                   ("note", pa.string())])
EVENTS = pa.schema([("key", pa.string()), ("ts", pa.int64()), ("n", pa.int32()), ("label", pa.string())])

#: Snapshot rows of `trips` after its whole history, by id.
TRIPS_ROWS = [
    {"id": "a", "ts": 2, "city": "sf", "amount": 15.0, "tip": None, "note": None},
    {"id": "b", "ts": 3, "city": "ny", "amount": 8.0, "tip": 1.0, "note": "late"},
    {"id": "c", "ts": 1, "city": "sf", "amount": 1.0, "tip": None, "note": None},
    {"id": "d", "ts": 1, "city": "la", "amount": 3.0, "tip": 0.5, "note": "new"},
]
#: Read-optimized rows of `trips` (base files only), by id.
TRIPS_RO_ROWS = [
    {"id": "a", "ts": 1, "city": "sf", "amount": 5.0, "tip": None, "note": None},
    {"id": "b", "ts": 1, "city": "ny", "amount": 7.0, "tip": None, "note": None},
    {"id": "c", "ts": 1, "city": "sf", "amount": 1.0, "tip": None, "note": None},
    {"id": "d", "ts": 1, "city": "la", "amount": 3.0, "tip": 0.5, "note": "new"},
]
EVENTS_ROWS = [
    {"key": "k1", "ts": 1, "count": 1, "label": "one"},
    {"key": "k2", "ts": 1, "count": 5_000_000_000, "label": "two"},
]


@dataclass
class Warehouse:
    root: Path
    trips: EvolvingTable
    events: EvolvingTable
    trips_first: str  # the first commit of trips (time travel before any evolution)


def build_warehouse(root: Path) -> Warehouse:
    """`trips` (MOR, partitioned by city): rename, drop and re-add, add, log updates in a new schema;
    `events` (COW): rename and int -> long widening."""
    trips = EvolvingTable(root / "trips", TRIPS, partition=["city"])
    first = trips.base([{"id": "a", "ts": 1, "city": "sf", "fare": 5.0, "note": "x"},
                        {"id": "c", "ts": 1, "city": "sf", "fare": 1.0, "note": "y"}], partition="city=sf")
    ny = trips.base([{"id": "b", "ts": 1, "city": "ny", "fare": 7.0, "note": "z"}], partition="city=ny",
                    file_id="fg2-0")
    trips.alter(rename("fare", "amount"))
    trips.log([{"id": "a", "ts": 2, "city": "sf", "amount": 15.0, "note": "x2"}], partition="city=sf",
              base_instant=first)
    trips.alter(drop("note"))
    trips.alter(add("note", "string"))  # a new column: the old notes must not come back
    trips.alter(add("tip", "double", after="amount"))
    trips.base([{"id": "d", "ts": 1, "city": "la", "amount": 3.0, "tip": 0.5, "note": "new"}], partition="city=la",
               file_id="fg3-0")
    trips.log([{"id": "b", "ts": 3, "city": "ny", "amount": 8.0, "tip": 1.0, "note": "late"}], partition="city=ny",
              file_id="fg2-0", base_instant=ny)
    events = EvolvingTable(root / "events", EVENTS, mor=False, key=("key",))
    events.base([{"key": "k1", "ts": 1, "n": 1, "label": "one"}])
    events.alter(rename("n", "count"))
    events.alter(retype("count", "long"))
    events.base([{"key": "k2", "ts": 1, "count": 5_000_000_000, "label": "two"}], file_id="fg2-0")
    return Warehouse(root, trips, events, first)


LiveServer = RunningServer


def live_server(settings: Settings) -> AbstractContextManager[RunningServer]:
    """A uvicorn server running `create_app(settings)` in a thread, on a free 127.0.0.1 port."""
    return running(settings)


@contextmanager
def server_log(level: int = logging.INFO) -> Iterator[list[logging.LogRecord]]:
    """Records the server logs (uvicorn's, which do not reach the root logger, and the catalog's)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(level)
    loggers = [logging.getLogger(name) for name in ("uvicorn.error", "catalog")]
    previous = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(min(level, logger.level or level))
    try:
        yield records
    finally:
        for logger, old in zip(loggers, previous):
            logger.removeHandler(handler)
            logger.setLevel(old)


def logged(records: list[logging.LogRecord]) -> str:
    """The records' messages and tracebacks, one after another."""
    formatter = logging.Formatter("%(levelname)s %(name)s %(message)s")
    return "\n".join(formatter.format(record) for record in records)


@dataclass
class ScanOutcome:
    """What a client received for a scan: the status, the rows before any error, the error
    document (JSON body or the stream's error batch), and whether the HTTP body ended properly."""

    status: int
    rows: int
    error: dict | None
    complete: bool


def scan_outcome(url: str, table: str, body: dict, *, timeout: float = 60) -> ScanOutcome:
    """POST a scan and read whatever arrives, to the end or until the connection breaks."""
    received = bytearray()
    complete = True
    with httpx.stream("POST", f"{url}/v1/tables/{table}/scan", json=body, timeout=timeout) as response:
        try:
            for chunk in response.iter_bytes():
                received += chunk
        except httpx.RemoteProtocolError:
            complete = False
    if response.status_code != 200:
        return ScanOutcome(response.status_code, 0, json.loads(received)["error"], complete)
    reader = pa.ipc.open_stream(bytes(received))
    rows, error = 0, None
    while True:
        try:
            batch, metadata = reader.read_next_batch_with_custom_metadata()
        except StopIteration:
            break
        if metadata is not None and ERROR_METADATA_KEY in metadata:
            error = json.loads(metadata[ERROR_METADATA_KEY])
        rows += batch.num_rows
    return ScanOutcome(200, rows, error, complete)
