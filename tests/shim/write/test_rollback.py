"""Rolling back a failed write: markers, heartbeats, rollback plan and metadata."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa

import shim
from shim.storage import as_storage
from shim.timeline.instant import Action, Instant, State
from shim.write import heartbeat
from shim.write.avro_metadata import COMPACTION_PLAN, decode_avro_record, encode_avro_record
from shim.write.markers import IOType, create_marker, delete_marker_folder, list_markers, marker_folder
from shim.write.rollback import base_files_of_instant, rollback_failed_write
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64())])


def test_markers_list_by_partition_and_ignore_other_files(tmp_path: Path):
    create_marker(as_storage(str(tmp_path)), "100", "a=1", "f1_0-1-1_100.parquet", IOType.CREATE)
    create_marker(as_storage(str(tmp_path)), "100", "", ".f2_99.log.1_0-1-1", IOType.APPEND)
    (Path(marker_folder(str(tmp_path), "100")) / "state.json").write_text("{}")
    assert [(m.partition_path, m.file_name, m.io_type) for m in list_markers(as_storage(str(tmp_path)), "100")] == [
        ("", ".f2_99.log.1_0-1-1", IOType.APPEND),
        ("a=1", "f1_0-1-1_100.parquet", IOType.CREATE),
    ]
    delete_marker_folder(as_storage(str(tmp_path)), "100")
    assert list_markers(as_storage(str(tmp_path)), "100") == []


def test_heartbeat_is_alive_until_older_than_the_timeout(tmp_path: Path):
    assert not heartbeat.is_alive(as_storage(str(tmp_path)), "100", 60)
    heartbeat.beat(as_storage(str(tmp_path)), "100")
    assert heartbeat.is_alive(as_storage(str(tmp_path)), "100", 60)
    assert not heartbeat.is_alive(as_storage(str(tmp_path)), "100", 60, now=time.time() + 61)
    heartbeat.stop(as_storage(str(tmp_path)), "100")
    assert heartbeat.last_beat(as_storage(str(tmp_path)), "100") is None


def test_rollback_deletes_marked_files_and_records_hudi_rollback_metadata(tmp_path: Path):
    table = TinyTable(tmp_path / "t", SCHEMA, mor=True)
    table.base([{"id": "a", "ts": 1}])
    failed = table.base([{"id": "b", "ts": 2}], file_id="fg2-0", complete=False)
    path = str(table.path)
    base_name = f"fg2-0_0-1-0_{failed}.parquet"
    create_marker(as_storage(path), failed, "", base_name, IOType.CREATE)
    create_marker(as_storage(path), failed, "", "never-written_0-1-0_1.parquet", IOType.CREATE)
    assert shim.open_table(path).read().to_pylist() == [{"id": "a", "ts": 1}]

    instant = Instant(failed, Action.DELTA_COMMIT, State.INFLIGHT, None, f"{failed}.deltacommit.inflight")
    result = rollback_failed_write(as_storage(path), instant, "99990101000000000")

    assert result.deleted == (os.path.join(path, base_name),)
    assert not os.path.exists(os.path.join(path, base_name))
    hoodie = table.path / ".hoodie"
    assert not list(hoodie.glob(f"{failed}.*"))
    assert sorted(p.name for p in hoodie.glob("99990101000000000.rollback*")) == [
        "99990101000000000.rollback", "99990101000000000.rollback.inflight", "99990101000000000.rollback.requested"]
    metadata = decode_avro_record((hoodie / "99990101000000000.rollback").read_bytes())
    assert metadata["commitsRollback"] == [failed]
    assert metadata["instantsRollback"] == [{"commitTime": failed, "action": "deltacommit"}]
    assert metadata["partitionMetadata"][""]["successDeleteFiles"] == [os.path.join(path, base_name)]
    plan = decode_avro_record((hoodie / "99990101000000000.rollback.requested").read_bytes())
    assert plan["instantToRollback"] == {"commitTime": failed, "action": "deltacommit"}
    assert not os.path.exists(marker_folder(path, failed))
    reopened = shim.open_table(path)
    assert [i.action for i in reopened.timeline() if i.requested_time == "99990101000000000"][-1] is Action.ROLLBACK
    assert reopened.read().to_pylist() == [{"id": "a", "ts": 1}]


def test_rollback_can_keep_a_compaction_plan(tmp_path: Path):
    table = TinyTable(tmp_path / "t", SCHEMA, mor=True)
    table.base([{"id": "a", "ts": 1}])
    hoodie = table.path / ".hoodie"
    plan = encode_avro_record(COMPACTION_PLAN, {"operations": [], "version": 2})
    (hoodie / "20990101000000000.compaction.requested").write_bytes(plan)
    (hoodie / "20990101000000000.compaction.inflight").write_bytes(b"")
    instant = Instant("20990101000000000", Action.COMPACTION, State.INFLIGHT, None,
                      "20990101000000000.compaction.inflight")
    rollback_failed_write(as_storage(str(table.path)), instant, "20990101000000001", keep_requested=True)
    assert (hoodie / "20990101000000000.compaction.requested").exists()
    assert not (hoodie / "20990101000000000.compaction.inflight").exists()
    assert decode_avro_record(plan)["operations"] == []


def test_base_files_of_instant_finds_files_named_with_it(tmp_path: Path):
    table = TinyTable(tmp_path / "t", SCHEMA, mor=False, partition=("id",))
    instant = table.base([{"id": "a", "ts": 1}], partition="id=a", complete=False)
    found = base_files_of_instant(as_storage(str(table.path)), ["id=a", "id=b"], instant)
    assert [(m.partition_path, m.file_name) for m in found] == [("id=a", f"fg1-0_0-1-0_{instant}.parquet")]
