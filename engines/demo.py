"""The quick-start job: build a small merge-on-read table and read it back."""

from __future__ import annotations

import json
import os
import shutil

import pyarrow as pa

import shim
from engines.output import render_table
from shim.properties import TableType
from shim.timeline.instant import Action
from shim.write.clock import new_instant_time
from shim.write.commit import CommitRecord, InstantFiles
from shim.write.data_files import FileWrite, avro_record_schema, write_base_file, write_log_blocks
from shim.write.table_init import TableSpec, create_table

TRIPS = pa.schema([("trip_id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("fare", pa.float64())])


def build_demo_table(path: str) -> str:
    """A partitioned MOR table: two base files, then an update, an insert and a delete in logs."""
    if os.path.exists(path):
        shutil.rmtree(path)
    spec = TableSpec(name="trips", record_key_fields=("trip_id",), table_type=TableType.MERGE_ON_READ,
                     partition_fields=("city",), ordering_fields=("ts",), hive_style_partitioning=True)
    schema_json = json.dumps(avro_record_schema("trips", TRIPS))
    config = create_table(path, spec, schema_json)

    def commit(writes: list[FileWrite], instant: str, operation: str) -> None:
        InstantFiles(path, config, instant, Action.DELTA_COMMIT).complete(
            CommitRecord(tuple(writes), operation, {"schema": schema_json}))

    first = new_instant_time()
    base = []
    for city, rows in {
        "sf": [("t1", 10.0), ("t2", 22.5), ("t3", 7.25)],
        "nyc": [("t4", 31.0), ("t5", 12.0)],
    }.items():
        data = pa.Table.from_pylist(
            [{"trip_id": t, "ts": 1, "city": city, "fare": f} for t, f in rows], schema=TRIPS)
        base.append(write_base_file(path, config, partition_path=f"city={city}", file_id=f"{city}-fg-0",
                                    instant=first, write_token="0-1-0", data=data))
    commit(base, first, "INSERT")
    second = new_instant_time()
    update = pa.Table.from_pylist([{"trip_id": "t2", "ts": 2, "city": "sf", "fare": 25.0},
                                   {"trip_id": "t6", "ts": 2, "city": "sf", "fare": 9.5}], schema=TRIPS)
    logs = [
        write_log_blocks(path, config, partition_path="city=sf", file_id="sf-fg-0", base_instant=first,
                         instant=second, write_token="0-2-0", upserts=update, base_file=base[0].file_name),
        write_log_blocks(path, config, partition_path="city=nyc", file_id="nyc-fg-0", base_instant=first,
                         instant=second, write_token="1-2-0", delete_keys=["t4"], base_file=base[1].file_name),
    ]
    commit(logs, second, "UPSERT")
    return path


def run_demo(folder: str) -> int:
    """Build the demo table under `folder` and print what each reader returns."""
    path = build_demo_table(os.path.join(os.path.abspath(folder), "trips"))
    table = shim.open_table(path)
    print(f"demo table written to {path}\n")
    print("snapshot (base files merged with log files: t2 updated, t6 inserted, t4 deleted):")
    print(render_table(table.read(columns=["trip_id", "city", "fare"]).sort_by("trip_id")))
    print("read_optimized (base files only):")
    print(render_table(table.read(mode="read_optimized", columns=["trip_id", "city", "fare"]).sort_by("trip_id")))
    print("filtered: fare > 10 AND city = 'sf'")
    print(render_table(table.read(filter="fare > 10 AND city = 'sf'").sort_by("trip_id")))
    return 0
