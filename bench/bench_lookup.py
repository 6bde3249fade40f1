"""Point lookups by record key: base files skipped by their bloom filters, against the same lookup
written so that it pins no key (every file read, row groups pruned by statistics where they can).

    python bench/bench_lookup.py [--table /tmp/hudi-shim-lookup-bench] [--rows 2000000] [--files 20] [--mor]

Generates (when missing) a copy-on-write table whose keys are spread over the files at random, as
a hashed index spreads them, so min/max statistics cannot tell the files apart. Times, in this
process, the lookup of each of `--keys` random keys both ways (best of `--repeat`), and prints the
ratio of the totals.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import shim
from shim.properties import TableType
from shim.storage import as_storage
from shim.timeline.instant import Action
from shim.write.clock import new_instant_time
from shim.write.commit import CommitRecord, InstantFiles
from shim.write.data_files import avro_record_schema, write_base_file, write_log_blocks
from shim.write.table_init import TableSpec, create_table


def generate(path: str, rows: int, files: int, mor: bool, seed: int = 5) -> None:
    """One commit of `files` base files, each key in a random file; merge-on-read: then a
    deltacommit updating 10% of every file group's keys through a log file."""
    rng = np.random.default_rng(seed)
    ids = rng.permutation(rows)
    data = pa.table({
        "id": pa.array([f"trip-{i:010d}" for i in ids]),
        "ts": pa.array(np.ones(rows, np.int64)),
        "fare": pa.array(rng.random(rows) * 100),
        "city": pa.array(np.array(["sf", "nyc", "la", "sea"])[ids % 4]),
    })
    spec = TableSpec(name="lookup", record_key_fields=("id",),
                     table_type=TableType.MERGE_ON_READ if mor else TableType.COPY_ON_WRITE, ordering_fields=("ts",))
    avro = json.dumps(avro_record_schema("lookup", data.schema))
    config = create_table(path, spec, avro)
    instant = new_instant_time()
    commit = InstantFiles(as_storage(path), config, instant, Action.DELTA_COMMIT if mor else Action.COMMIT)
    commit.request()
    commit.start(b"{}")
    per_file = -(-rows // files)
    writes = tuple(
        write_base_file(as_storage(path), config, partition_path="", file_id=f"{f:08d}-lookup-0000-0", instant=instant,
                        write_token=f"{f}-1-{f}", data=data.slice(f * per_file, per_file), partition_id=f)
        for f in range(files))
    commit.complete(CommitRecord(writes, "BULK_INSERT", {"schema": avro}))
    if not mor:
        return
    logs_instant = new_instant_time()
    logs = InstantFiles(as_storage(path), config, logs_instant, Action.DELTA_COMMIT)
    logs.request()
    logs.start(b"{}")
    log_writes = []
    for f, write in enumerate(writes):
        part = data.slice(f * per_file, per_file)
        updated = part.take(pa.array(np.arange(0, part.num_rows, 10))).set_column(1, "ts", pa.array(
            np.full(-(-part.num_rows // 10), 2, np.int64)))
        log_writes.append(write_log_blocks(as_storage(path), config, partition_path="", file_id=write.file_id,
                                           base_instant=instant, instant=logs_instant, write_token=f"{f}-2-{f}",
                                           upserts=updated, partition_id=f, base_file=write.file_name))
    logs.complete(CommitRecord(tuple(log_writes), "UPSERT", {"schema": avro}))


def best(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", default="/tmp/hudi-shim-lookup-bench")
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--keys", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mor", action="store_true", help="merge-on-read, 10%% of keys updated in log files")
    args = parser.parse_args()
    path = args.table + ("-mor" if args.mor else "")
    if not os.path.exists(os.path.join(path, ".hoodie")):
        generate(path, args.rows, args.files, args.mor)
    table = shim.open_table(path)
    table.read(columns=["id"])  # merge-on-read: slices merged once and remembered, as a server would
    keys = [f"trip-{i:010d}" for i in np.random.default_rng(9).choice(args.rows, args.keys, replace=False)]
    pinned = unpinned = 0.0
    for key in keys:
        by_key = f"id = '{key}'"
        by_range = f"id >= '{key}' AND id <= '{key}'"  # the same rows; pins no key
        assert table.read(filter=by_key).equals(table.read(filter=by_range))
        assert table.read(filter=by_key).num_rows == 1
        pinned += best(args.repeat, functools.partial(table.read, filter=by_key))
        unpinned += best(args.repeat, functools.partial(table.read, filter=by_range))
    result = {"rows": args.rows, "files": args.files, "merge_on_read": args.mor, "keys": len(keys),
              "lookup_ms": round(pinned / len(keys) * 1000, 2), "unpinned_ms": round(unpinned / len(keys) * 1000, 2),
              "speedup": round(unpinned / pinned, 2)}
    print(json.dumps(result, indent=2))
    print(f"point lookup by record key = {result['speedup']}x faster than reading every file")


if __name__ == "__main__":
    main()
