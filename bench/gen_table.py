"""Generate a benchmark MOR table: N rows in G file groups, a fraction updated through log blocks
(Avro data blocks, as Spark writes them by default, or Parquet data blocks).

    python bench/gen_table.py /tmp/bench-table --rows 2000000 --groups 10 --updates 0.1 [--log-format parquet]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time

import numpy as np
import pyarrow as pa

from shim.files import log_file_name
from shim.log.blocks import HeaderKey
from shim.log.writer import encode_parquet_data_block, write_log_file
from shim.properties import TableConfig, TableType
from shim.storage import Storage, as_storage
from shim.timeline.instant import Action
from shim.write.clock import new_instant_time
from shim.write.commit import CommitRecord, InstantFiles
from shim.write.data_files import (
    FileWrite,
    avro_record_schema,
    next_log_version,
    with_meta_columns,
    write_base_file,
    write_log_blocks,
)
from shim.write.table_init import TableSpec, create_table

CITIES = ["san_francisco", "sao_paulo", "chennai", "new_york", "berlin", "tokyo", "lagos", "lima"]


def make_rows(start: int, count: int, ts: int, rng: np.random.Generator) -> pa.Table:
    """Trip-like rows with ids start..start+count-1."""
    ids = np.arange(start, start + count)
    return pa.table({
        "id": pa.array([f"trip-{i:09d}" for i in ids], pa.string()),
        "ts": pa.array(np.full(count, ts, dtype=np.int64)),
        "city": pa.array(np.array(CITIES, dtype=object)[ids % len(CITIES)].tolist(), pa.string()),
        "fare": pa.array(rng.random(count) * 100.0),
        "rider": pa.array([f"rider-{i % 5000:05d}" for i in ids], pa.string()),
        "driver": pa.array([f"driver-{i % 700:04d}" for i in ids], pa.string()),
        "distance_km": pa.array(rng.random(count).astype(np.float32) * 30),
        "passengers": pa.array((ids % 4 + 1).astype(np.int32)),
    })


def generate(path: str, rows: int, groups: int, updates: float, seed: int = 7,
             log_format: str = "avro", positions: bool = False) -> dict[str, object]:
    """Write the table (log blocks in `log_format`: avro or parquet; with `positions`, Avro blocks
    carry the base file rows they update, as Hudi 1.x writes them); returns what was written."""
    if os.path.exists(path):
        shutil.rmtree(path)
    rng = np.random.default_rng(seed)
    spec = TableSpec(name="bench", record_key_fields=("id",), table_type=TableType.MERGE_ON_READ,
                     ordering_fields=("ts",))
    schema = make_rows(0, 1, 1, rng).schema
    avro = json.dumps(avro_record_schema("bench", schema))
    config = create_table(path, spec, avro)
    per_group = rows // groups
    started = time.perf_counter()
    base_instant = new_instant_time()
    files = InstantFiles(as_storage(path), config, base_instant, Action.DELTA_COMMIT)
    files.request()
    files.start(b"{}")
    writes = []
    for g in range(groups):
        data = make_rows(g * per_group, per_group, 1, rng)
        writes.append(write_base_file(as_storage(path), config, partition_path="", file_id=f"{g:08d}-bench-0000-0000-0",
                                      instant=base_instant, write_token=f"{g}-1-{g}", data=data,
                                      partition_id=g))
    files.complete(CommitRecord(tuple(writes), "BULK_INSERT", {"schema": avro}))
    log_instant = new_instant_time()
    files = InstantFiles(as_storage(path), config, log_instant, Action.DELTA_COMMIT)
    files.request()
    files.start(b"{}")
    log_writes = []
    per_group_updates = int(per_group * updates)
    write_log = write_log_blocks if log_format == "avro" else _write_parquet_log
    for g in range(groups):
        rows_chosen = np.sort(rng.choice(per_group, per_group_updates, replace=False))
        data = updated_rows(rows_chosen + g * per_group, rng)
        placed = {"positions": rows_chosen} if positions else {}  # the base file holds ids in order
        log_writes.append(write_log(as_storage(path), config, partition_path="", file_id=f"{g:08d}-bench-0000-0000-0",
                                    base_instant=base_instant, instant=log_instant,
                                    write_token=f"{g}-2-{g}", upserts=data, partition_id=g,
                                    base_file=writes[g].file_name, **placed))
    files.complete(CommitRecord(tuple(log_writes), "UPSERT", {"schema": avro}))
    return {"rows": per_group * groups, "groups": groups, "updated": per_group_updates * groups,
            "log_format": log_format, "positions": positions, "seconds": round(time.perf_counter() - started, 1)}


def _write_parquet_log(storage: Storage, config: TableConfig, *, partition_path: str, file_id: str, base_instant: str,
                       instant: str, write_token: str, upserts: pa.Table, partition_id: int,
                       base_file: str) -> FileWrite:
    """A log file of one PARQUET_DATA block holding `upserts` (the bench's tables are unpartitioned)."""
    full = with_meta_columns(upserts, config, instant=instant, file_name=file_id, partition_id=partition_id)
    header = {HeaderKey.INSTANT_TIME: instant,
              HeaderKey.SCHEMA: json.dumps(avro_record_schema(config.name, full.schema))}
    version = next_log_version(storage, storage.root, file_id, base_instant)
    name = log_file_name(file_id, base_instant, version, write_token)
    target = os.path.join(storage.root, name)
    write_log_file(storage, target, [encode_parquet_data_block(full, header)])
    return FileWrite(partition_path=partition_path, file_id=file_id, file_name=name, num_writes=full.num_rows,
                     num_updates=full.num_rows, num_deletes=0, file_size=storage.file_size(target),
                     prev_commit=base_instant, base_file=base_file, log_version=version)


def updated_rows(ids: np.ndarray, rng: np.random.Generator) -> pa.Table:
    """New versions (ordering value 2) of the rows with these ids."""
    table = make_rows(0, len(ids), 2, rng)
    return table.set_column(0, "id", pa.array([f"trip-{i:09d}" for i in ids], pa.string()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path")
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--updates", type=float, default=0.1)
    parser.add_argument("--log-format", choices=("avro", "parquet"), default="avro")
    args = parser.parse_args()
    print(generate(args.path, args.rows, args.groups, args.updates, log_format=args.log_format))


if __name__ == "__main__":
    main()
