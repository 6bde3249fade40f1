"""Publishing a slice that changes at every commit: merged (its base file written again each
time), in place with deletes, and `auto` (which keeps a slice in place once `HOT_WRITES` of the
table's last `RECENT_WRITES` writes appended to its logs, unless they reach `HOT_MERGE_SHARE`).

    python bench/bench_hot_slice.py [--rows 4000000] [--commits 6] [--dir /tmp/hudi-shim-hot-slice]

The table of `bench/bench_serve.py` (one file group per city, here with 1% of rows updated in
logs) takes `--commits` more commits, each updating 1% of one partition (the same slice every
time, `bench_trino.update_one_percent`). After each, one publisher per contender (in this
process, each with its Iceberg folder) publishes the snapshot view; printed: per contender, the
median seconds and bytes written per publication after a commit, and the last publication's
placement of the changing slice.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.bench_serve import generate
from bench.bench_trino import update_one_percent
from catalog.iceberg.publish import IcebergPublisher
from catalog.service import Catalog
from catalog.settings import Settings

CONTENDERS = ("merged", "deletes", "auto")


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default="/tmp/hudi-shim-hot-slice")
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--commits", type=int, default=6)
    args = parser.parse_args()
    root = Path(args.dir)
    shutil.rmtree(root, ignore_errors=True)
    warehouse = root / "warehouse"
    table_path = str(warehouse / "bench")
    print("generating", generate(table_path, args.rows, 0.01), file=sys.stderr)
    base_bytes = max(p.stat().st_size for p in Path(table_path).rglob("*.parquet"))
    catalog = Catalog(Settings(warehouse=str(warehouse), catalog_db=":memory:"))
    try:
        publishers = {name: IcebergPublisher(catalog, str(root / f"iceberg-{name}"), slice_merging=name)
                      for name in CONTENDERS}
        first = {}
        for name, publisher in publishers.items():
            start = time.perf_counter()
            publisher.publish("bench", "snapshot")
            first[name] = round(time.perf_counter() - start, 3)
        seconds: dict[str, list[float]] = {name: [] for name in CONTENDERS}
        written: dict[str, list[int]] = {name: [] for name in CONTENDERS}
        for _ in range(args.commits):
            update_one_percent(table_path)
            for name, publisher in publishers.items():
                before = folder_bytes(root / f"iceberg-{name}")
                start = time.perf_counter()
                publisher.publish("bench", "snapshot")
                seconds[name].append(time.perf_counter() - start)
                written[name].append(folder_bytes(root / f"iceberg-{name}") - before)
        results: dict[str, object] = {"cores": os.cpu_count(), "rows": args.rows, "commits": args.commits,
                                      "largest_base_file_bytes": base_bytes}
        for name in CONTENDERS:
            results[f"{name}_first_publish_s"] = first[name]
            results[f"{name}_publish_after_commit_s"] = [round(t, 3) for t in seconds[name]]
            results[f"{name}_publish_after_commit_median_s"] = round(statistics.median(seconds[name]), 3)
            results[f"{name}_bytes_written_per_commit_median"] = int(statistics.median(written[name]))
        print(json.dumps(results, indent=1))
        for name in CONTENDERS:
            print(f"{name:<8} publication after each commit: median {results[f'{name}_publish_after_commit_median_s']} s "
                  f"({results[f'{name}_publish_after_commit_s']}), {results[f'{name}_bytes_written_per_commit_median']:,} "
                  "bytes written (median)")
    finally:
        catalog.close()


if __name__ == "__main__":
    main()
