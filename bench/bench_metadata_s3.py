"""Reads and publications planned from the metadata table against planned from storage, on an
S3-compatible server: requests and time.

    python bench/bench_metadata_s3.py [--tables cow_40_partitions cow_1000_partitions] [--repeat 3]

The tables are Apache Hudi 1.2's, written with its defaults by the oracle (`tests.oracle`,
`BENCH_RECIPES`: copy-on-write, table version 9, the metadata table with files, column_stats and
partition_stats; 4,000 rows in 40 partitions, 2,000 rows in 1,000; built once, then cached).
Each is uploaded to s3proxy (loopback, from Maven Central) behind a counting tap
(`tests/s3tap.py`). For each case, with the metadata table off (the baseline: storage listed,
footers opened) and on, in this process: the LIST, GET (whole and ranged) and HEAD requests of one
cold run (a table opened anew, footer caches emptied), the data files it fetched (neither `.hoodie/`
nor `.hoodie_partition_metadata`), the Parquet footers it read, and the best time
of `--repeat` cold runs.
  full       table.read(): every row
  selective  a range of ids whose rows are in one file (`id >= 1234 AND id <= 1240` / `<= 1235`)
  publish    the catalog publishing the snapshot view as an Iceberg table, manifests and their
             column metrics only (no distinct-value statistics)
  publish+ndv  the same with distinct-value statistics (the default when datasketches is
             installed: every new slice is read whole to sketch it; metadata table on only)
Times are of a loopback server: a real store adds its latency to every request.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pyarrow.fs as pafs

import shim
from catalog.iceberg.publish import IcebergPublisher
from catalog.service import Catalog
from catalog.settings import Settings
from engines.s3server import CLIENT_ENVIRONMENT, start_s3proxy
from shim.planning import file_schemas
from shim.read import base_files
from shim.read.cache import ByteBoundedCache
from shim.storage import RemoteStorage
from tests.s3tap import S3Tap

SELECTIVE = {"cow_40_partitions": "id >= 1234 AND id <= 1240", "cow_1000_partitions": "id >= 1234 AND id <= 1235"}


def cold() -> None:
    """Forget what earlier runs read (footers, commit schemas)."""
    base_files._parsed_footer.cache_clear()
    file_schemas._COMMIT_SCHEMAS = ByteBoundedCache(file_schemas._COMMIT_SCHEMAS.capacity)


class FooterCount:
    """Counts the Parquet footers read from the store (`RemoteStorage.parquet_metadata`)."""

    def __init__(self) -> None:
        self.count = 0
        self._original = RemoteStorage.parquet_metadata

    def __enter__(self) -> Self:
        original, counter = self._original, self

        def counted(storage: RemoteStorage, path: str) -> Any:
            counter.count += 1
            return original(storage, path)

        RemoteStorage.parquet_metadata = counted  # type: ignore[method-assign, assignment]
        return self

    def __exit__(self, *_: object) -> None:
        RemoteStorage.parquet_metadata = self._original  # type: ignore[method-assign]


def measure(tap: S3Tap, repeat: int, run: Callable[[], int]) -> dict[str, Any]:
    """Requests and data files of the first cold run, best time of `repeat`, the run's result."""
    figures: dict[str, Any] = {}
    times = []
    for attempt in range(repeat):
        cold()
        tap.counts.reset()
        with FooterCount() as footers:
            start = time.perf_counter()
            result = run()
            times.append(time.perf_counter() - start)
        if attempt == 0:
            counts = tap.counts.snapshot()
            fetched = {p for p in tap.counts.paths("GET", "GET_RANGE") if "/.hoodie" not in p}
            figures = {"LIST": counts.get("LIST", 0), "GET": counts.get("GET", 0) + counts.get("GET_RANGE", 0),
                       "HEAD": counts.get("HEAD", 0), "requests": counts["requests"], "files": len(fetched),
                       "footers": footers.count, "result": result}
    return {**figures, "seconds": min(times)}


def bench_table(name: str, local: Path, server: Any, tap: S3Tap, repeat: int, scratch: Path) -> list[list[str]]:
    bucket_path = f"bench/{name.replace('_', '-')}"
    pafs.copy_files(str(local), bucket_path, destination_filesystem=pafs.S3FileSystem(**server.storage_options()))
    uri = f"s3://{bucket_path}"
    options = {**server.storage_options(), "endpoint_override": tap.endpoint}

    def read(metadata: bool, where: str | None) -> Callable[[], int]:
        return lambda: shim.open_table(uri, storage_options=options, metadata=metadata,
                                       merge_cache_bytes=0).read(filter=where).num_rows

    def publish(metadata: bool, ndv: bool = False) -> Callable[[], int]:
        def run() -> int:
            folder = tempfile.mkdtemp(dir=scratch)
            catalog = Catalog(Settings(tables=(f"t={uri}",), storage_options=options, catalog_db=":memory:",
                                       iceberg_dir=folder, metadata=metadata))
            try:
                published = IcebergPublisher(catalog, folder, statistics_max_columns=200 if ndv else 0).publish(
                    "t", "snapshot")
            finally:
                catalog.close()
            return int(published.metadata["snapshots"][-1]["summary"]["total-data-files"])
        return run

    rows = []
    for case, runs in (("full", (read(False, None), read(True, None))),
                       ("selective", (read(False, SELECTIVE[name]), read(True, SELECTIVE[name]))),
                       ("publish", (publish(False), publish(True))),
                       ("publish+ndv", (None, publish(True, ndv=True)))):
        off, on = (measure(tap, repeat, run) if run is not None else None for run in runs)
        assert on is not None and (off is None or off["result"] == on["result"]), (name, case, off, on)
        for label, figures in (("storage", off), ("metadata", on)):
            if figures is None:
                continue
            rows.append([name, case, label, str(figures["LIST"]), str(figures["GET"]), str(figures["HEAD"]),
                         str(figures["requests"]), str(figures["files"]), str(figures["footers"]),
                         f"{figures['seconds']:.2f}", str(figures["result"])])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="*", default=["cow_40_partitions", "cow_1000_partitions"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from tests.oracle.generate import generate
    from tests.oracle.recipes import BENCH_RECIPES

    tables = {name: generated.path for name, generated in generate([BENCH_RECIPES[n] for n in args.tables]).items()}
    os.environ.update(CLIENT_ENVIRONMENT)
    header = ["table", "case", "listing", "LIST", "GET", "HEAD", "requests", "files", "footers", "seconds", "rows"]
    with tempfile.TemporaryDirectory() as scratch:
        server = start_s3proxy(Path(scratch) / "s3")
        tap = S3Tap(server.endpoint).start()
        try:
            server.create_bucket("bench")
            rows = [header]
            for name in args.tables:
                rows += bench_table(name, tables[name], server, tap, args.repeat, Path(scratch))
        finally:
            tap.stop()
            server.stop()
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        print("  ".join(cell.ljust(width) if i < 3 else cell.rjust(width)
                        for i, (cell, width) in enumerate(zip(row, widths, strict=True))))


if __name__ == "__main__":
    main()
