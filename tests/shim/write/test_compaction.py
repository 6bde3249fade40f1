"""Compaction: plan, execution with the shim's merge, completion as a compacted commit, resume."""

from __future__ import annotations

import json
import time

import pytest

import shim
from shim.errors import UnsupportedFeatureError
from shim.properties import read_table_config
from shim.storage import as_storage
from shim.write.avro_metadata import decode_avro_record
from shim.write.ddl import alter_table
from shim.write.markers import IOType, create_marker
from shim.write.services.compaction import compact, start_compaction
from tests.writekit import data_files, hudi_rs_rows, shim_rows, write

MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.datasource.write.partitionpath.field": "region"}
COLUMNS = ["id", "ts", "region", "fare"]


def trips(ids: range, ts: int = 1, fare: float = 1.0) -> list[dict]:
    return [{"id": f"k{i}", "ts": ts, "region": "sf" if i % 2 else "ny", "fare": fare * i} for i in ids]


@pytest.fixture
def table(tmp_path):  # type: ignore[no-untyped-def]
    path = tmp_path / "t"
    write(path, trips(range(12)), **MOR)
    write(path, trips(range(0, 12, 3), ts=2, fare=-1.0), **MOR)
    write(path, trips(range(1, 12, 4)), **{**MOR, "hoodie.datasource.write.operation": "delete"})
    return path


def test_compaction_merges_logs_into_base_files_with_the_same_rows(table):
    expected = shim_rows(table)
    instant = compact(str(table))
    assert instant is not None
    assert shim_rows(table) == expected == shim_rows(table, mode="read_optimized")
    assert shim_rows(table) == hudi_rs_rows(table, COLUMNS)
    hoodie = table / ".hoodie"
    assert sorted(p.name for p in hoodie.glob(f"{instant}*")) == [
        f"{instant}.commit", f"{instant}.compaction.inflight", f"{instant}.compaction.requested"]
    metadata = json.loads((hoodie / f"{instant}.commit").read_text())
    assert metadata["compacted"] is True and metadata["operationType"] == "COMPACT"
    plan = decode_avro_record((hoodie / f"{instant}.compaction.requested").read_bytes())
    assert plan["version"] == 2 and {op["partitionPath"] for op in plan["operations"]} == {"sf", "ny"}
    for op in plan["operations"]:
        assert op["dataFilePath"].endswith(".parquet") and all(p.startswith(".") for p in op["deltaFilePaths"])
    new_bases = [f for f in data_files(table) if f.endswith(f"_{instant}.parquet")]
    assert len(new_bases) == len(plan["operations"])


def test_compacted_records_keep_their_commit_times(table):
    before = {r["id"]: r["_hoodie_commit_time"] for r in shim.open_table(str(table)).read(include_meta=True).to_pylist()}
    compact(str(table))
    after = {r["id"]: r["_hoodie_commit_time"] for r in shim.open_table(str(table)).read(include_meta=True).to_pylist()}
    assert after == before


def test_writes_after_compaction_and_nothing_to_compact(table):
    compact(str(table))
    assert compact(str(table)) is None  # no slice has logs
    write(table, trips(range(2), ts=3, fare=-5.0), **MOR)
    assert shim_rows(table)[0] == {"id": "k0", "ts": 3, "region": "ny", "fare": -0.0}
    assert shim_rows(table) == hudi_rs_rows(table, COLUMNS)


def test_compaction_after_a_rename_reads_old_logs_by_id(table):
    before = [(r["id"], r["fare"]) for r in shim_rows(table)]
    alter_table(str(table)).rename_column("fare", "amount")
    compact(str(table))
    assert [(r["id"], r["amount"]) for r in shim_rows(table, mode="read_optimized")] == before


def test_dead_compaction_is_resumed_and_its_partial_files_rolled_back(table):
    config = read_table_config(as_storage(str(table)))
    assert config is not None
    job = start_compaction(as_storage(str(table)), config, timeout_s=0.2)
    assert job is not None
    partial = f"{job.operations[0]['fileId']}_9-9-9_{job.instant}.parquet"
    create_marker(as_storage(str(table)), job.instant, job.operations[0]["partitionPath"], partial, IOType.CREATE)
    (table / job.operations[0]["partitionPath"] / partial).write_bytes(b"partial")
    expected = shim_rows(table)
    time.sleep(0.3)
    resumed = compact(str(table), options={"hoodie.client.heartbeat.interval_in_ms": "100"})
    assert resumed == job.instant
    assert len(list((table / ".hoodie").glob("*.rollback"))) == 1
    assert not [f for f in data_files(table) if f.endswith(partial)]
    assert shim_rows(table, mode="read_optimized") == expected


def test_copy_on_write_tables_are_not_compacted(tmp_path):
    write(tmp_path / "t", trips(range(2)))
    with pytest.raises(UnsupportedFeatureError, match="only merge-on-read tables are compacted"):
        compact(str(tmp_path / "t"))


def test_writes_during_a_pending_compaction_land_in_the_new_slice(table):
    config = read_table_config(as_storage(str(table)))
    assert config is not None
    job = start_compaction(as_storage(str(table)), config, timeout_s=0.2)
    assert job is not None
    time.sleep(0.3)  # the compaction's writer is gone
    fast = {"hoodie.client.heartbeat.interval_in_ms": "100"}
    write(table, trips(range(4), ts=9, fare=-7.0), **{**MOR, **fast})
    logs_on_plan = [f for f in data_files(table) if ".log." in f and f"_{job.instant}.log" in f]
    assert logs_on_plan  # named with the pending compaction's instant, as Hudi names them
    expected = shim_rows(table)
    fares = {r["id"]: r["fare"] for r in expected}
    assert [fares[f"k{i}"] for i in range(4)] == [-0.0, -7.0, -14.0, -21.0]
    assert compact(str(table), options=fast) == job.instant
    assert shim_rows(table) == expected == hudi_rs_rows(table, COLUMNS)
