"""Small writes on a long-lived merge-on-read table: timeline archival (Hudi's default) against
an active timeline that only grows (`hoodie.archive.automatic=false`).

    python bench/bench_timeline.py [--commits 300] [--rows 200]

Both tables get the same upserts of `--rows` keys (of 5,000), inline compaction every 5 delta
commits and automatic cleaning, through the writer's job and task code (no Spark: the commit
path is what grows with the timeline). Printed: the mean write time over the last 50 commits of
each, their ratio (unarchived time / archived time; above 1 means archival pays), the files left
in `.hoodie/` and `.hoodie/.schema/`, and a snapshot read of each table.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pyarrow as pa

import shim
from shim.write.job import commit_write, plan_write
from shim.write.task import TaskInfo, write_task

OPTIONS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.partitionpath.field": "region",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.bucket.index.num.buckets": "4",
    "hoodie.compact.inline": "true",
    "hoodie.compact.inline.max.delta.commits": "5",
}
SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("fare", pa.float64())])


def write(path: str, rows: pa.Table, options: dict[str, str], stage: int) -> float:
    """One commit through the writer's job and task code; returns its seconds."""
    start = time.perf_counter()
    plan = plan_write(path, options, rows.schema)
    write_task(plan, rows.to_batches(), TaskInfo(0, stage, stage * 100))
    commit_write(plan)
    return time.perf_counter() - start


def batch(rng: random.Random, ts: int, rows: int) -> pa.Table:
    keys = rng.sample(range(5000), rows)
    return pa.Table.from_pylist(
        [{"id": f"k{k:05d}", "ts": ts, "region": f"r{k % 4}", "fare": float(ts)} for k in keys], schema=SCHEMA)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--rows", type=int, default=200)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="hudi-shim-bench-timeline-")
    try:
        contenders = {"archived": OPTIONS, "unarchived": {**OPTIONS, "hoodie.archive.automatic": "false"}}
        times: dict[str, list[float]] = {name: [] for name in contenders}
        rng = random.Random(7)
        for ts in range(1, args.commits + 1):
            rows = batch(rng, ts, args.rows)
            for name, options in contenders.items():  # interleaved: machine noise hits both alike
                times[name].append(write(os.path.join(root, name), rows, options, ts))
        tail = {name: statistics.mean(values[-50:]) for name, values in times.items()}
        for name in contenders:
            path = os.path.join(root, name)
            start = time.perf_counter()
            count = shim.open_table(path).read().num_rows
            read_s = time.perf_counter() - start
            print(f"{name:>10}: last 50 writes {tail[name] * 1000:6.1f} ms each; .hoodie/ "
                  f"{len(os.listdir(os.path.join(path, '.hoodie')))} files, .schema/ "
                  f"{len(os.listdir(os.path.join(path, '.hoodie', '.schema')))}; snapshot read {read_s:.3f} s "
                  f"({count} rows)")
        print(f"after {args.commits} commits: archived writes are {tail['unarchived'] / tail['archived']:.2f}x "
              "as fast as unarchived ones")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
