"""The shim's snapshot read against Spark+Hudi's snapshot read of the same merge-on-read table.

    python bench/bench_hudi_read.py [--rows 2000000] [--buckets 16] [--repeat 3]

Apache Hudi 1.2 (Spark 3.5 bundle, the oracle environment `tests.oracle.env`) writes the table:
the rows of `bench_write.COLUMNS` inserted, then 10% of the keys upserted into log files (bucket
index of `--buckets` buckets, partitioned by city, Hudi's defaults otherwise: table version 9,
metadata table on). Then, best of `--repeat` runs each:
  Spark+Hudi: spark.read.format("hudi") (snapshot) with every row and column produced into Spark's
              `noop` sink, local[2] (both cores), Spark's vectorized Parquet reader on (the oracle
              turns it off for evolved nested columns), after one untimed warm-up read;
  shim:       shim.open_table(path).read() into one pyarrow.Table (both cores).
Also read-optimized both ways. Ratios are Hudi's time / the shim's time (target >= 3x).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from bench.bench_write import COLUMNS

READS = [{"name": "snapshot", "options": {"hoodie.datasource.query.type": "snapshot"}},
         {"name": "read_optimized", "options": {"hoodie.datasource.query.type": "read_optimized"}}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--buckets", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import shim
    from tests.oracle.env import ensure_env, run_driver

    root = tempfile.mkdtemp(prefix="bench-hudi-read-")
    path = os.path.join(root, "trips")
    options = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
               "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.index.type": "BUCKET",
               "hoodie.index.bucket.engine": "SIMPLE", "hoodie.bucket.index.num.buckets": str(args.buckets)}
    select = f"SELECT {', '.join(COLUMNS)} FROM range({args.rows})"
    kept = [c for c in COLUMNS if not c.endswith(" as ts") and not c.endswith(" as fare")]
    updates = (f"SELECT {', '.join(kept)}, id + 1000000000 AS ts, CAST(-1 AS DOUBLE) AS fare "
               f"FROM range(0, {args.rows}, 10)")
    try:
        started = time.perf_counter()
        response = run_driver(ensure_env(), [
            {"kind": "steps", "path": path, "steps": [
                {"write": {"select": select, "options": {**options, "hoodie.datasource.write.operation": "insert"}}},
                {"write": {"select": updates, "options": {**options, "hoodie.datasource.write.operation": "upsert"}}}]},
            {"kind": "time_reads", "path": path, "reads": READS[:1], "repeat": 1},  # warm-up
            {"kind": "time_reads", "path": path, "reads": READS, "repeat": args.repeat},
        ], conf={"spark.driver.memory": "3g", "spark.sql.parquet.enableVectorizedReader": "true"})
        hudi = response["jobs"][2]["seconds_by_read"]
        print(f"Hudi wrote {args.rows:,} rows + {args.rows // 10:,} upserts in {time.perf_counter() - started:.0f} s "
              f"(with its session)")
        table = shim.open_table(path)
        logs = sum(len(s.log_files) for s in table.file_slices())
        ours = {}
        for mode in ("snapshot", "read_optimized"):
            table.read(mode)  # warm-up (file system cache, imports)
            times = []
            for _ in range(args.repeat):
                fresh = shim.open_table(path, merge_cache_bytes=0)  # nothing remembered between runs
                began = time.perf_counter()
                result = fresh.read(mode)
                times.append(time.perf_counter() - began)
            ours[mode] = min(times)
            assert result.num_rows == args.rows, (mode, result.num_rows)
        updated = table.read(columns=["id"], filter="fare < 0").num_rows
        assert updated == args.rows // 10, updated
        print(f"table: {len(table.file_slices())} file slices, {logs} log files; columns {len(COLUMNS)}")
        for mode in ("snapshot", "read_optimized"):
            print(f"{mode:15s} Spark+Hudi {hudi[mode]:6.2f}s   shim {ours[mode]:6.2f}s   ratio {hudi[mode] / ours[mode]:.2f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
