"""Read throughput and peak memory of hudi-shim against plain pyarrow and hudi-rs, on one table.

    python bench/bench_read.py [--table /tmp/bench-table] [--rows 2000000] [--repeat 3]

Generates the table (bench/gen_table.py) when it is missing. Times, in this process:
  read-optimized scan vs a plain pyarrow read of the same base files with the same projection;
  snapshot scan vs hudi-rs's snapshot read.
Peak memory of each reader is measured in a fresh subprocess (max RSS growth while streaming).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

import pyarrow.dataset as ds

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import shim
from shim.read.request import ScanMode

COLUMNS = ["id", "ts", "city", "fare", "rider", "driver", "distance_km", "passengers"]


def best_of(repeat: int, fn: Callable[[], int]) -> tuple[float, int]:
    times, rows = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        rows = fn()
        times.append(time.perf_counter() - start)
    return min(times), rows


def pyarrow_base_files(path: str) -> int:
    files = sorted(glob.glob(os.path.join(path, "*.parquet")))
    return ds.dataset(files, format="parquet").to_table(columns=COLUMNS).num_rows


def shim_read(path: str, mode: ScanMode) -> int:
    return shim.open_table(path).read(mode=mode, columns=COLUMNS).num_rows


def hudi_rs_snapshot(path: str) -> int:
    import hudi

    options = hudi.HudiReadOptions(projection=COLUMNS)
    return sum(b.num_rows for b in hudi.HudiTable(path).read(options))


def peak_memory_mb(path: str, reader: str) -> float:
    """Peak RSS growth (MB) of a fresh process while it streams the table with `reader`.

    RSS is sampled every 2 ms from /proc/self/statm, starting after all imports.
    """
    code = f"""
import os, sys, threading, time
sys.path.insert(0, {os.path.dirname(HERE)!r})
import glob, pyarrow as pa, pyarrow.dataset as ds, shim, hudi
page = os.sysconf("SC_PAGE_SIZE")
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page
start, peak, done = rss(), [0], threading.Event()
def sample():
    while not done.is_set():
        peak[0] = max(peak[0], rss()); time.sleep(0.002)
thread = threading.Thread(target=sample); thread.start()
path, cols = {path!r}, {COLUMNS!r}
if {reader!r} == "pyarrow":
    files = sorted(glob.glob(os.path.join(path, "*.parquet")))
    for b in ds.dataset(files, format="parquet").to_batches(columns=cols): pass
elif {reader!r} == "hudi-rs":
    for b in hudi.HudiTable(path).read_stream(hudi.HudiReadOptions(projection=cols)): pass
else:
    for b in shim.open_table(path).scan(mode={reader!r}, columns=cols): pass
done.set(); thread.join()
print((peak[0] - start) / 2**20)
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", default="/tmp/hudi-shim-bench-table")
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-memory", action="store_true")
    args = parser.parse_args()
    if not os.path.exists(os.path.join(args.table, ".hoodie")):
        from bench.gen_table import generate

        print("generating", generate(args.table, args.rows, 10, 0.1))
    path = args.table
    results: dict[str, object] = {}
    t_pa, n_pa = best_of(args.repeat, lambda: pyarrow_base_files(path))
    t_ro, n_ro = best_of(args.repeat, lambda: shim_read(path, "read_optimized"))
    t_rs, n_rs = best_of(args.repeat, lambda: hudi_rs_snapshot(path))
    t_snap, n_snap = best_of(args.repeat, lambda: shim_read(path, "snapshot"))
    assert n_pa == n_ro and n_rs == n_snap, (n_pa, n_ro, n_rs, n_snap)
    results["rows"] = n_snap
    results["read_optimized_s"] = round(t_ro, 3)
    results["pyarrow_base_files_s"] = round(t_pa, 3)
    results["read_optimized_vs_pyarrow_throughput"] = round(t_pa / t_ro, 2)
    results["snapshot_s"] = round(t_snap, 3)
    results["hudi_rs_snapshot_s"] = round(t_rs, 3)
    results["snapshot_vs_hudi_rs_throughput"] = round(t_rs / t_snap, 2)
    if not args.no_memory:
        for reader in ("pyarrow", "read_optimized", "snapshot", "hudi-rs"):
            results[f"peak_rss_growth_mb_{reader}"] = round(peak_memory_mb(path, reader), 1)
    results["cores"] = os.cpu_count()
    print(json.dumps(results, indent=2))
    print(f"read-optimized throughput = {results['read_optimized_vs_pyarrow_throughput']}x plain pyarrow "
          f"(target >= 0.9x)")
    print(f"snapshot throughput       = {results['snapshot_vs_hudi_rs_throughput']}x hudi-rs (target >= 1.5x)")


if __name__ == "__main__":
    main()
