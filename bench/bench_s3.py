"""Reading a table on an S3-compatible server: requests, bytes and time of hudi-shim against
pyarrow's own dataset read of the same base files.

    python bench/bench_s3.py [--rows 2000000] [--repeat 3]

Starts s3proxy (from Maven Central, objects in memory) on 127.0.0.1 behind a counting tap
(tests/s3tap.py), uploads the bench table (bench/gen_table.py: 10 file groups, 10% of rows
updated in Avro logs), then, for a full scan and a selective one (two columns, one city), counts
the GET (whole and ranged), HEAD and LIST requests and the bytes sent back, and times them:
  read-optimized vs pyarrow.dataset over the same base files (same projection and filter);
  snapshot (base files and logs merged) beside them.
Figures are of a loopback server: time on a real store adds latency per request, which is why
the request counts matter.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs

import shim
from engines.s3server import CLIENT_ENVIRONMENT, start_s3proxy
from tests.s3tap import S3Tap

COLUMNS = ["id", "ts", "city", "fare", "rider", "driver", "distance_km", "passengers"]
SELECTIVE_COLUMNS = ["id", "fare"]
SELECTIVE_CITY = "tokyo"


def measure(tap: S3Tap, repeat: int, read: Callable[[], int]) -> dict[str, float]:
    """Best time of `repeat` reads, and the requests of one read (a fresh table object each)."""
    times, rows = [], 0
    for _ in range(repeat):
        tap.counts.reset()
        start = time.perf_counter()
        rows = read()
        times.append(time.perf_counter() - start)
    counts = tap.counts.snapshot()
    return {"seconds": min(times), "rows": rows, **counts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--table-dir", default="/tmp")
    args = parser.parse_args()
    os.environ.update(CLIENT_ENVIRONMENT)
    from bench.bench_read import table_for

    local = table_for(args.table_dir, args.rows, "avro-10")
    with tempfile.TemporaryDirectory() as scratch:
        server = start_s3proxy(Path(scratch), heap="3g")
        tap = S3Tap(server.endpoint).start()
        try:
            server.create_bucket("bench")
            upload = pafs.S3FileSystem(**server.storage_options())
            pafs.copy_files(local, "bench/table", destination_filesystem=upload)
            options = {**server.storage_options(), "endpoint_override": tap.endpoint}
            uri = "s3://bench/table"
            system = pafs.S3FileSystem(**options)
            base_files = [f"bench/table/{name}" for name in sorted(os.listdir(local)) if name.endswith(".parquet")]
            city = pc.field("city") == SELECTIVE_CITY

            def arrow(columns: list[str], filter: pc.Expression | None) -> int:
                dataset = ds.dataset(base_files, format="parquet", filesystem=system)
                return dataset.to_table(columns=columns, filter=filter).num_rows

            def hudi_shim(mode: str, columns: list[str], filter: pc.Expression | None) -> int:
                table = shim.open_table(uri, storage_options=options, merge_cache_bytes=0)
                return table.read(mode=mode, columns=columns, filter=filter).num_rows

            results = {}
            for label, columns, filter in (("full", COLUMNS, None), ("selective", SELECTIVE_COLUMNS, city)):
                results[label] = {
                    "pyarrow dataset": measure(tap, args.repeat, lambda c=columns, f=filter: arrow(c, f)),
                    "shim read-optimized": measure(tap, args.repeat, lambda c=columns, f=filter: hudi_shim(
                        "read_optimized", c, f)),
                    "shim snapshot": measure(tap, args.repeat, lambda c=columns, f=filter: hudi_shim(
                        "snapshot", c, f)),
                }
        finally:
            tap.stop()
            server.stop()
    print(f"table: {args.rows:,} rows, {len(base_files)} base files, 10% updated in Avro logs; s3proxy on loopback")
    header = f"{'scan':<10} {'reader':<20} {'rows':>10} {'s':>7} {'req':>5} {'GET':>4} {'range':>6} {'HEAD':>5} " \
             f"{'LIST':>5} {'MB':>8} {'req x':>6} {'time x':>6}"
    print(header)
    for label, readers in results.items():
        baseline = readers["pyarrow dataset"]
        for name, figures in readers.items():
            print(f"{label:<10} {name:<20} {figures['rows']:>10,} {figures['seconds']:>7.3f} {figures['requests']:>5} "
                  f"{figures.get('GET', 0):>4} {figures.get('GET_RANGE', 0):>6} {figures.get('HEAD', 0):>5} "
                  f"{figures.get('LIST', 0):>5} {figures['bytes'] / 1e6:>8.1f} "
                  f"{figures['requests'] / max(1, baseline['requests']):>6.2f} "
                  f"{figures['seconds'] / baseline['seconds']:>6.2f}")


if __name__ == "__main__":
    main()
