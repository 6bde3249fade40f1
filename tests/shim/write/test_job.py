"""The write job without Spark: layout, meta columns, operations, commit protocol, failures."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import shim
from shim.errors import ConcurrentWriteError, WriteError
from shim.storage import as_storage
from shim.write.bucket import bucket_of_key
from shim.write.job import commit_write, plan_write
from shim.write.markers import IOType, create_marker
from shim.write.task import TaskInfo, write_task
from tests.writekit import SCHEMA, data_files, hudi_rs_rows, shim_rows, write

REPO = Path(__file__).resolve().parents[3]
COLUMNS = ["id", "ts", "region", "fare"]
FAST_HEARTBEAT = {"hoodie.client.heartbeat.interval_in_ms": "100", "hoodie.client.heartbeat.tolerable.misses": "2"}


def trips(ids: range, ts: int = 1, fare: float = 1.0) -> list[dict]:
    return [{"id": f"k{i}", "ts": ts, "region": "sf" if i % 2 else "ny", "fare": fare * i} for i in ids]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("partition", [{}, {"hoodie.datasource.write.partitionpath.field": "region"},
                                       {"hoodie.datasource.write.partitionpath.field": "region",
                                        "hoodie.datasource.write.hive_style_partitioning": "true"}],
                         ids=["unpartitioned", "plain", "hive"])
def test_insert_upsert_delete_read_the_same_in_shim_and_hudi_rs(tmp_path, table_type, partition):
    path = tmp_path / "t"
    options = {"hoodie.datasource.write.table.type": table_type, **partition}
    write(path, trips(range(20)), tasks=2, **options)
    write(path, trips(range(15, 25), ts=2, fare=-1.0), tasks=2, **options)
    write(path, [{"id": f"k{i}", "ts": 9, "region": "sf" if i % 2 else "ny", "fare": None} for i in (1, 2, 99)],
          **{**options, "hoodie.datasource.write.operation": "delete"})
    expected = {f"k{i}": (-1.0 * i if i >= 15 else 1.0 * i) for i in range(25) if i not in (1, 2)}
    ours = shim_rows(path)
    assert {r["id"]: r["fare"] for r in ours} == expected
    assert ours == hudi_rs_rows(path, COLUMNS)
    files = data_files(path)
    prefix = {"plain": "sf/", "hive": "region=sf/"}.get(next(iter(partition.values()), "") and (
        "hive" if partition.get("hoodie.datasource.write.hive_style_partitioning") else "plain"), "")
    assert any(f.startswith(prefix) for f in files)
    logs = [f for f in files if ".log." in f]
    assert bool(logs) is (table_type == "MERGE_ON_READ")


def test_file_groups_are_hudi_buckets_with_one_base_file_each(tmp_path):
    path = tmp_path / "t"
    write(path, trips(range(40)), tasks=3)  # rows of every bucket reach all three tasks
    bases = [f for f in data_files(path) if f.endswith(".parquet")]
    buckets = [int(name[:8]) for name in bases]
    assert sorted(buckets) == sorted(set(buckets))  # one base file per bucket
    for name in bases:
        keys = pq.read_table(path / name, columns=["_hoodie_record_key"]).column(0).to_pylist()
        assert {bucket_of_key(k, ["id"], 4) for k in keys} == {int(name[:8])}
    assert len(shim_rows(path)) == 40


def test_one_key_in_two_tasks_is_precombined_by_ordering_value(tmp_path):
    path = tmp_path / "t"
    rows = [{"id": "a", "ts": 5, "region": "x", "fare": 5.0}, {"id": "a", "ts": 3, "region": "x", "fare": 3.0}]
    write(path, rows, tasks=2)  # task 0 gets ts=5, task 1 (writing second) ts=3
    assert [(r["ts"], r["fare"]) for r in shim_rows(path)] == [(5, 5.0)]


def test_meta_columns_filled_as_hudi_and_kept_for_carried_over_records(tmp_path):
    path = tmp_path / "t"
    first = write(path, trips(range(4)))
    second = write(path, trips(range(1), ts=2))
    rows = {r["id"]: r for r in shim.open_table(str(path)).read(include_meta=True).to_pylist()}
    assert rows["k0"]["_hoodie_commit_time"] == second
    assert rows["k0"]["_hoodie_commit_seqno"] == f"{second}_0_0"
    for key in ("k1", "k2", "k3"):
        assert rows[key]["_hoodie_commit_time"] == first
        assert rows[key]["_hoodie_commit_seqno"].startswith(f"{first}_0_")
    for row in rows.values():
        assert row["_hoodie_record_key"] == row["id"] and row["_hoodie_partition_path"] == ""
        assert (path / row["_hoodie_file_name"]).is_file()


def test_commit_protocol_files_metadata_and_schema_history(tmp_path):
    path = tmp_path / "t"
    instant = write(path, trips(range(6)), **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    hoodie = path / ".hoodie"
    assert sorted(p.name for p in hoodie.glob(f"{instant}*")) == [
        f"{instant}.deltacommit", f"{instant}.deltacommit.inflight", f"{instant}.deltacommit.requested"]
    metadata = json.loads((hoodie / f"{instant}.deltacommit").read_text())
    assert metadata["operationType"] == "UPSERT" and metadata["compacted"] is False
    stats = metadata["partitionToWriteStats"][""]
    assert sum(s["numWrites"] for s in stats) == 6 and all(s["prevCommit"] == "null" for s in stats)
    latest = json.loads(metadata["extraMetadata"]["latest_schema"])
    assert latest["version_id"] == int(instant) and latest["max_column_id"] == 8
    assert json.loads(metadata["extraMetadata"]["schema"])["name"] == "trips_record"
    assert (hoodie / ".schema" / f"{instant}.schemacommit").is_file()
    assert not (hoodie / ".temp" / instant).exists() and not (hoodie / ".heartbeat" / instant).exists()
    props = (hoodie / "hoodie.properties").read_text()
    assert "hoodie.table.version=6" in props and "hoodie.bucket.index.num.buckets=4" in props


def test_new_column_evolves_schema_with_a_new_id_and_old_rows_read_null(tmp_path):
    path = tmp_path / "t"
    write(path, trips(range(3)), **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    wider = SCHEMA.append(pa.field("tip", pa.float64()))
    second = write(path, [{"id": "k1", "ts": 2, "region": "sf", "fare": 5.0, "tip": 0.5}], schema=wider)
    table = shim.open_table(str(path))
    assert table.schema().names == ["id", "ts", "region", "fare", "tip"]
    assert table.snapshot().schema_history.schema_of_instant(second).find_field_by_name("tip").id == 9
    assert [(r["id"], r["tip"]) for r in shim_rows(path)] == [("k0", None), ("k1", 0.5), ("k2", None)]


def test_insert_overwrite_replaces_touched_partitions_and_table_all(tmp_path):
    path = tmp_path / "t"
    options = {"hoodie.datasource.write.partitionpath.field": "region"}
    write(path, trips(range(6)), **options)
    write(path, [{"id": "n1", "ts": 1, "region": "sf", "fare": 1.0}],
          **{**options, "hoodie.datasource.write.operation": "insert_overwrite"})
    assert [r["id"] for r in shim_rows(path)] == ["k0", "k2", "k4", "n1"]
    assert [r["id"] for r in hudi_rs_rows(path, COLUMNS)] == ["k0", "k2", "k4", "n1"]
    last = write(path, [{"id": "z", "ts": 1, "region": "la", "fare": 1.0}],
                 **{**options, "hoodie.datasource.write.operation": "insert_overwrite_table"})
    assert [r["id"] for r in shim_rows(path)] == ["z"]
    metadata = json.loads((path / ".hoodie" / f"{last}.replacecommit").read_text())
    assert metadata["operationType"] == "INSERT_OVERWRITE_TABLE"
    assert set(metadata["partitionToReplaceFileIds"]) == {"sf", "ny"}


def test_bulk_insert_and_insert_keep_duplicates_within_a_batch(tmp_path):
    path = tmp_path / "t"
    write(path, [{"id": "a", "ts": 1, "region": "x", "fare": 1.0}, {"id": "a", "ts": 2, "region": "x", "fare": 2.0}],
          **{"hoodie.datasource.write.operation": "bulk_insert"})
    assert len(shim_rows(path, mode="read_optimized")) == 2


def test_event_time_payload_keeps_higher_ordering_value_on_copy_on_write(tmp_path):
    path = tmp_path / "t"
    options = {"hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload"}
    write(path, trips(range(2), ts=5), **options)
    write(path, [{"id": "k0", "ts": 3, "region": "ny", "fare": -1.0}, {"id": "k1", "ts": 6, "region": "sf",
                                                                        "fare": -1.0}], **options)
    assert [r["fare"] for r in shim_rows(path)] == [0.0, -1.0]


def test_commit_removes_files_of_task_attempts_that_died_before_recording_them(tmp_path):
    path = tmp_path / "t"
    write(path, trips(range(2)))
    plan = plan_write(str(path), {}, SCHEMA)
    write_task(plan, pa.Table.from_pylist(trips(range(2, 4)), schema=SCHEMA).to_batches(), TaskInfo(0, 9, 900))
    orphan = f"00000001-0000-0000-0000-000000000000-0_1-9-901_{plan.instant}.parquet"
    create_marker(as_storage(str(path)), plan.instant, "", orphan, IOType.CREATE)
    pq.write_table(pa.table({"x": [1]}), path / orphan)
    commit_write(plan)
    assert not (path / orphan).exists()
    assert [r["id"] for r in shim_rows(path)] == ["k0", "k1", "k2", "k3"]


def test_table_without_bucket_layout_is_refused_clearly(tmp_path):
    from tests.tablekit import TinyTable

    table = TinyTable(tmp_path / "t", SCHEMA, mor=False, partition=("region",), hive_style=False)
    table.base(trips(range(2)), partition="ny")
    with pytest.raises(WriteError, match="holds file group fg1-0, which does not fit the bucket index layout"):
        write(table.path, trips(range(2, 4)))
    assert [r["id"] for r in shim_rows(table.path)] == ["k0", "k1"]


def test_second_writer_fails_while_the_first_holds_the_table_and_nothing_is_lost(tmp_path):
    path = tmp_path / "t"
    write(path, trips(range(4)))
    data = pa.Table.from_pylist(trips(range(4, 8)), schema=SCHEMA)
    first = plan_write(str(path), {"hoodie.datasource.write.operation": "insert"}, SCHEMA)
    write_task(first, data.to_batches())
    with pytest.raises(ConcurrentWriteError, match=f"{first.instant} is inflight and its heartbeat is fresh"):
        write(path, trips(range(100, 102)))
    commit_write(first)
    write(path, trips(range(100, 102)))
    assert [r["id"] for r in shim_rows(path)] == ["k0", "k1", "k100", "k101", "k2", "k3", "k4", "k5", "k6", "k7"]


def test_failed_write_is_invisible_and_rolled_back_by_the_next_write(tmp_path):
    path = tmp_path / "t"
    write(path, trips(range(4)), **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    before = data_files(path)
    failed = write(path, trips(range(2), ts=5, fare=-1.0) + trips(range(10, 12)), commit=False)
    failed_files = set(data_files(path)) - set(before)
    assert failed_files and (path / ".hoodie" / f"{failed}.deltacommit.inflight").exists()
    assert shim_rows(path) == sorted(trips(range(4)), key=lambda r: r["id"])
    write(path, trips(range(20, 21)))
    assert not failed_files & set(data_files(path))
    rollbacks = list((path / ".hoodie").glob("*.rollback"))
    assert len(rollbacks) == 1 and not list((path / ".hoodie").glob(f"{failed}.*"))
    assert [r["id"] for r in shim_rows(path)] == ["k0", "k1", "k2", "k20", "k3"]


def test_writer_rolled_back_by_another_cannot_commit(tmp_path):
    path = tmp_path / "t"
    write(path, trips(range(2)))
    slow = plan_write(str(path), FAST_HEARTBEAT, SCHEMA)
    time.sleep(0.4)  # its heartbeat goes stale: the next writer takes it for dead
    write(path, trips(range(5, 6)), **FAST_HEARTBEAT)
    with pytest.raises(WriteError, match=f"instant {slow.instant} is no longer pending"):
        commit_write(slow)


KILLED_WRITER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {repo!r})
    import pyarrow as pa
    from shim.write.job import plan_write
    from shim.write.task import write_task
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("fare", pa.float64())])
    rows = pa.Table.from_pylist([{{"id": f"x{{i}}", "ts": 1, "region": "ny", "fare": 1.0}} for i in range(50)],
                                schema=schema)
    plan = plan_write({path!r}, {options!r}, schema)
    write_task(plan, rows.to_batches())
    print("written", plan.instant, flush=True)
    time.sleep(600)
""")


def test_killed_writer_leaves_an_invisible_inflight_instant_rolled_back_by_the_next(tmp_path):
    path = tmp_path / "t"
    write(path, trips(range(3)), **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    before = data_files(path)
    code = KILLED_WRITER.format(repo=str(REPO), path=str(path), options={**FAST_HEARTBEAT})
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert line.startswith("written"), line
        instant = line.split()[1]
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert set(data_files(path)) > set(before)
    assert (path / ".hoodie" / f"{instant}.deltacommit.inflight").exists()
    assert [r["id"] for r in shim_rows(path)] == ["k0", "k1", "k2"]
    time.sleep(0.4)
    write(path, trips(range(7, 8)), **FAST_HEARTBEAT)
    assert not list((path / ".hoodie").glob(f"{instant}.*"))
    assert len(list((path / ".hoodie").glob("*.rollback"))) == 1
    assert [r["id"] for r in shim_rows(path)] == ["k0", "k1", "k2", "k7"]
    assert not [f for f in data_files(path) if instant in f]
    assert os.listdir(path / ".hoodie" / ".temp") == []
