"""Tasks that share file groups hand their rows over, so each base file is written once."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pyarrow as pa
import pytest

import shim
from shim.log import HeaderKey, encode_avro_data_block, read_log_file
from shim.storage import as_storage
from shim.write.bucket import bucket_of_key
from shim.write.data_files import avro_record_schema
from shim.write.group_state import locked_group, state_folder
from shim.write.handoff import HandOverTurn, write_spill
from shim.write.job import commit_write, plan_write
from shim.write.services.compaction import compact
from shim.write.task import TaskInfo, TaskReport, TaskWrite, write_task
from tests.local import LOCAL
from tests.writekit import BASE_OPTIONS, SCHEMA, data_files, hudi_rs_rows, shim_rows, write

COLUMNS = ["id", "ts", "region", "fare"]
REGION = {"hoodie.datasource.write.partitionpath.field": "region"}


def trips(ids: range, ts: int = 1, fare: float = 1.0) -> list[dict]:
    return [{"id": f"k{i}", "ts": ts, "region": "sf" if i % 2 else "ny", "fare": fare * i} for i in ids]


def groups_of(rows: list[dict]) -> set[tuple[str, int]]:
    return {(r["region"], bucket_of_key(r["id"], ["id"], 4)) for r in rows}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_tasks_running_together_write_each_new_base_file_once(tmp_path, table_type):
    path = tmp_path / "t"
    rows = trips(range(40))
    reports: list[TaskReport] = []
    write(path, rows, tasks=3, together=True, reports=reports, **REGION,
          **{"hoodie.datasource.write.table.type": table_type})
    written = [name for report in reports for name in report.files]
    assert len(written) == len(set(written)) == len(groups_of(rows))  # no base file written twice
    assert sorted(f.split("/")[-1] for f in data_files(path)) == sorted(written)
    expected = sorted(rows, key=lambda r: r["id"])
    assert shim_rows(path, columns=COLUMNS) == expected
    assert hudi_rs_rows(path, COLUMNS) == expected


def test_copy_on_write_upsert_from_several_tasks_rewrites_each_touched_base_file_once(tmp_path):
    path = tmp_path / "t"
    write(path, trips(range(40)), **REGION)
    updates = trips(range(0, 40, 3), ts=2, fare=-1.0)
    reports: list[TaskReport] = []
    write(path, updates, tasks=3, together=True, reports=reports, **REGION,
          **{"hoodie.datasource.write.operation": "upsert"})
    written = [name for report in reports for name in report.files]
    assert len(written) == len(groups_of(updates))
    changed = {r["id"]: r for r in updates}
    expected = sorted((changed.get(r["id"], r) for r in trips(range(40))), key=lambda r: r["id"])
    assert shim_rows(path, columns=COLUMNS) == expected
    assert hudi_rs_rows(path, COLUMNS) == expected


def test_merge_on_read_updates_from_several_tasks_go_to_one_log_file_per_file_group(tmp_path):
    path = tmp_path / "t"
    mor = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", **REGION}
    write(path, trips(range(40)), **mor)
    updates = trips(range(0, 40, 3), ts=2, fare=-1.0)
    reports: list[TaskReport] = []
    write(path, updates, tasks=3, together=True, reports=reports, **mor,
          **{"hoodie.datasource.write.operation": "upsert"})
    written = [name for report in reports for name in report.files]
    assert written and all(".log." in name for name in written)
    logs = [f for f in data_files(path) if ".log." in f]
    assert len(logs) == len(set(written)) == len(groups_of(updates))  # tasks extend the group's log file
    assert sum(len(read_log_file(LOCAL, str(path / f)).blocks) for f in logs) == len(written)  # a block per task
    changed = {r["id"]: r for r in updates}
    expected = sorted((changed.get(r["id"], r) for r in trips(range(40))), key=lambda r: r["id"])
    assert shim_rows(path, columns=COLUMNS) == expected
    assert hudi_rs_rows(path, COLUMNS) == expected


@pytest.mark.parametrize("first", [0, 1])
def test_one_key_handed_over_by_two_tasks_is_precombined_by_ordering_value(tmp_path, first):
    path = tmp_path / "t"
    rows = [{"id": "a", "ts": 5, "region": "x", "fare": 5.0}, {"id": "a", "ts": 3, "region": "x", "fare": 3.0}]
    write(path, rows if first == 0 else rows[::-1], tasks=2, together=True)
    assert [(r["ts"], r["fare"]) for r in shim_rows(path)] == [(5, 5.0)]


@pytest.mark.parametrize("first", [0, 1])
@pytest.mark.parametrize("together", [True, False])
def test_one_key_logged_by_two_tasks_of_a_merge_on_read_upsert_is_precombined(tmp_path, first, together):
    path = tmp_path / "t"
    mor = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write(path, [{"id": "a", "ts": 1, "region": "x", "fare": 1.0}, {"id": "b", "ts": 1, "region": "x", "fare": 1.0}],
          **mor)
    rows = [{"id": "a", "ts": 5, "region": "x", "fare": 5.0}, {"id": "a", "ts": 3, "region": "x", "fare": 3.0}]
    reports: list[TaskReport] = []
    write(path, rows if first == 0 else rows[::-1], tasks=2, together=together, reports=reports, **mor)
    assert [(r["id"], r["ts"], r["fare"]) for r in shim_rows(path)] == [("a", 5, 5.0), ("b", 1, 1.0)]
    assert hudi_rs_rows(path, COLUMNS)[0]["fare"] == 5.0
    # the task coming second logs its row only when it wins
    assert sum(len(report.files) for report in reports) == (1 if first == 0 else 2)


def _task(plan, rows: list[dict], partition: int, attempt: int) -> TaskWrite:
    return TaskWrite(plan, pa.Table.from_pylist(rows, schema=SCHEMA).to_batches(), TaskInfo(partition, 7, attempt))


@pytest.mark.parametrize("retry_before_write", [True, False], ids=["retry-first", "retry-after"])
def test_hand_over_of_a_failed_task_attempt_counts_once(tmp_path, retry_before_write):
    path = tmp_path / "t"
    plan = plan_write(str(path), dict(BASE_OPTIONS), SCHEMA)
    ours, theirs = trips(range(0, 20, 2)), trips(range(1, 20, 2))
    _task(plan, theirs, 1, 701).hand_over()  # this attempt dies after handing over
    other = _task(plan, ours, 0, 700)
    other.hand_over()
    retry = _task(plan, theirs, 1, 702)
    if retry_before_write:
        retry.hand_over()  # replaces the dead attempt's hand-over
        other.write()
    else:
        other.write()  # takes in the dead attempt's rows
        retry.hand_over()  # rows of groups written already: one more rewrite
    retry.write()
    commit_write(plan)
    expected = sorted(trips(range(20)), key=lambda r: r["id"])
    assert shim_rows(path, columns=COLUMNS) == expected
    assert hudi_rs_rows(path, COLUMNS) == expected
    bases = [f for f in data_files(path) if f.endswith(".parquet")]
    assert len(bases) == len({int(name[:8]) for name in bases})


def test_a_task_deleting_in_a_group_takes_in_the_rows_handed_over_to_it(tmp_path):
    path = tmp_path / "t"
    one_group = {"hoodie.bucket.index.num.buckets": "1"}
    write(path, trips(range(4)), **one_group)
    schema = SCHEMA.append(pa.field("_hoodie_is_deleted", pa.bool_()))
    plan = plan_write(str(path), {**BASE_OPTIONS, **one_group, "hoodie.datasource.write.operation": "upsert"}, schema)
    adds = TaskWrite(plan, pa.Table.from_pylist([{**trips(range(5, 6))[0], "_hoodie_is_deleted": False}],
                                                schema=schema).to_batches(), TaskInfo(1, 7, 701))
    deletes = TaskWrite(plan, pa.Table.from_pylist([{**trips(range(1, 2), ts=2)[0], "_hoodie_is_deleted": True}],
                                                   schema=schema).to_batches(), TaskInfo(0, 7, 700))
    adds.hand_over()
    deletes.hand_over()  # deletes are not handed over: this task writes the group itself
    assert len(deletes.write().files) == 1
    assert adds.write().files == ()  # its row went into the other task's base file
    commit_write(plan)
    assert [r["id"] for r in shim_rows(path)] == ["k0", "k2", "k3", "k5"]


def test_rows_of_a_group_being_written_are_written_later_by_their_own_task(tmp_path):
    path = tmp_path / "t"
    one_group = {**BASE_OPTIONS, "hoodie.bucket.index.num.buckets": "1"}
    plan = plan_write(str(path), one_group, SCHEMA)
    early, late = _task(plan, trips(range(0, 6, 2)), 0, 700), _task(plan, trips(range(1, 6, 2)), 1, 701)
    with locked_group(as_storage(str(path)), plan.instant, "", 0):  # as while another task writes the group
        late.hand_over()  # gives up waiting instead of queueing behind the writer
    early.hand_over()
    assert len(early.write().files) == 1
    assert len(late.write().files) == 1  # not taken in: this task rewrites the base file itself
    commit_write(plan)
    assert [r["id"] for r in shim_rows(path)] == [f"k{i}" for i in range(6)]
    assert len(data_files(path)) == 1


def _delayed(batches: list[pa.RecordBatch], delay_s: float) -> Iterator[pa.RecordBatch]:
    time.sleep(delay_s)  # as a task whose rows arrive later than another's
    yield from batches


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_task_with_its_rows_first_waits_for_a_running_task_to_hand_over_before_writing(tmp_path, table_type):
    path = tmp_path / "t"
    plan = plan_write(str(path), {**BASE_OPTIONS, **REGION, "hoodie.datasource.write.table.type": table_type}, SCHEMA)
    rows = trips(range(40))
    early, late = pa.Table.from_pylist(rows[:20], schema=SCHEMA), pa.Table.from_pylist(rows[20:], schema=SCHEMA)
    assert groups_of(rows[:20]) == groups_of(rows[20:])  # every group gets rows of both tasks
    reports: dict[int, TaskReport] = {}
    slow = threading.Thread(target=lambda: reports.setdefault(1, write_task(
        plan, _delayed(late.to_batches(), 0.5), TaskInfo(1, 9, 901))))
    slow.start()
    turn = os.path.join(state_folder(str(path), plan.instant), "tasks", "p1.lock")
    while not os.path.exists(turn):  # the slow task has announced itself before its rows arrive
        time.sleep(0.005)
    reports[0] = write_task(plan, early.to_batches(), TaskInfo(0, 9, 900))
    slow.join()
    commit_write(plan)
    written = [name for report in reports.values() for name in report.files]
    assert len(written) == len(set(written)) == len(groups_of(rows))  # no group rewritten by the late task
    expected = sorted(rows, key=lambda r: r["id"])
    assert shim_rows(path, columns=COLUMNS) == expected
    assert hudi_rs_rows(path, COLUMNS) == expected


def test_a_task_that_died_before_handing_over_does_not_hold_up_the_others(tmp_path):
    folder = str(tmp_path / "state")
    code = ("import os, sys; sys.path.insert(0, os.getcwd()); from shim.write.handoff import HandOverTurn; "
            "from shim.storage import LocalStorage; "
            f"HandOverTurn(LocalStorage({folder!r}), {folder!r}, 3).__enter__(); os._exit(1)")  # announced, then killed
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 1
    assert os.path.exists(os.path.join(folder, "tasks", "p3.lock"))
    with HandOverTurn(LOCAL, folder, 0) as turn:
        turn.handed_over()
        waiter = threading.Thread(target=turn.wait_for_others, daemon=True)
        waiter.start()
        waiter.join(timeout=10)
        assert not waiter.is_alive()


def test_tasks_that_ran_one_after_another_are_told_to_repartition_by_bucket(tmp_path, caplog):
    rows = trips(range(40))
    with caplog.at_level(logging.WARNING, logger="shim.write.job"):
        write(tmp_path / "together", rows, tasks=3, together=True, **REGION)
        assert caplog.records == []
        instant = write(tmp_path / "waves", rows, tasks=3, **REGION)  # as three waves of Spark tasks
    groups = len(groups_of(rows))
    (record,) = caplog.records
    assert record.getMessage().startswith(
        f"hudi_shim write {instant}: {groups} base file(s) written by this write were rewritten {2 * groups} time(s)")
    assert "engines.spark.repartition_by_bucket(df, options)" in record.getMessage()
    assert shim_rows(tmp_path / "waves", columns=COLUMNS) == sorted(rows, key=lambda r: r["id"])


@pytest.mark.parametrize("operation", ["insert", "upsert"])
def test_merge_on_read_rows_of_later_task_waves_go_to_log_files_on_the_new_base_files(tmp_path, caplog, operation):
    path = tmp_path / "t"
    mor = {**REGION, "hoodie.datasource.write.table.type": "MERGE_ON_READ",
           "hoodie.datasource.write.operation": operation}
    rows = trips(range(40))
    with caplog.at_level(logging.WARNING, logger="shim.write.job"):
        write(path, rows, tasks=3, **mor)  # as three waves of Spark tasks: the first writes the base files
    assert caplog.records == []  # nothing rewritten
    files = data_files(path)
    bases = [f for f in files if f.endswith(".parquet")]
    logs = [f for f in files if ".log." in f]
    assert len(bases) == len({f.split("/")[-1][:8] + f.split("/")[0] for f in bases}) == len(groups_of(rows))
    assert len(logs) == len(groups_of(rows))  # one per file group: the later tasks' blocks in one log file
    assert all(len(read_log_file(LOCAL, str(path / f)).blocks) == 2 for f in logs)
    instant = shim.open_table(str(path)).timeline()[-1].requested_time
    assert all(f"_{instant}.log." in f.split("/")[-1] for f in logs)  # on the base files of this write
    expected = sorted(rows, key=lambda r: r["id"])
    assert shim_rows(path, columns=COLUMNS) == expected
    assert hudi_rs_rows(path, COLUMNS) == expected
    assert shim.open_table(str(path)).read(mode="read_optimized").num_rows == len(trips(range(0, 40, 3)))
    assert compact(str(path)) is not None  # the logs merge into new base files
    assert shim.open_table(str(path)).read(mode="read_optimized").num_rows == len(rows)
    assert shim_rows(path, columns=COLUMNS) == expected == hudi_rs_rows(path, COLUMNS)


@pytest.mark.parametrize("order", [(5, 3, 4), (3, 5, 4), (4, 3, 5)])
def test_one_key_in_three_task_waves_of_a_merge_on_read_upsert_keeps_the_greatest_ordering_value(tmp_path, order):
    path = tmp_path / "t"
    mor = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.datasource.write.operation": "upsert"}
    rows = [{"id": "a", "ts": ts, "region": "x", "fare": float(ts)} for ts in order]
    rows += [{"id": f"k{i}", "ts": 1, "region": "x", "fare": 1.0} for i in range(6)]
    reports: list[TaskReport] = []
    write(path, rows, tasks=3, reports=reports, **mor)
    got = {r["id"]: (r["ts"], r["fare"]) for r in shim_rows(path)}
    assert got["a"] == (5, 5.0) and len(got) == 7
    assert {r["id"]: r["fare"] for r in hudi_rs_rows(path, COLUMNS)} == {k: v[1] for k, v in got.items()}


def test_a_task_stops_waiting_for_a_much_slower_one_after_as_long_as_its_own_hand_over_took(tmp_path):
    folder = str(tmp_path / "state")
    # task 1 is still receiving its rows for as long as this test runs
    with HandOverTurn(LOCAL, folder, 1), HandOverTurn(LOCAL, folder, 0) as turn:
        turn.handed_over()
        start = time.monotonic()
        turn.wait_for_others(at_least_s=0.3)
        waited = time.monotonic() - start
    assert 0.3 <= waited < 5


def test_merge_on_read_delete_in_a_later_task_wave_removes_the_key_from_the_new_base_file(tmp_path):
    path = tmp_path / "t"
    schema = SCHEMA.append(pa.field("_hoodie_is_deleted", pa.bool_()))
    first = [{**r, "_hoodie_is_deleted": False} for r in trips(range(6), ts=5)]
    later = [{**trips(range(2, 3), ts=7)[0], "_hoodie_is_deleted": True},
             {**trips(range(10, 11), ts=7)[0], "_hoodie_is_deleted": False}]
    mor = {**REGION, "hoodie.datasource.write.table.type": "MERGE_ON_READ",
           "hoodie.datasource.write.operation": "upsert", "hoodie.bucket.index.num.buckets": "1"}
    plan = plan_write(str(path), {**BASE_OPTIONS, **mor}, schema)
    for task, rows in enumerate((first, later)):  # one wave after the other
        write_task(plan, pa.Table.from_pylist(rows, schema=schema).to_batches(), TaskInfo(task, 3, 300 + task))
    commit_write(plan)
    expected = ["k0", "k1", "k10", "k3", "k4", "k5"]
    assert [r["id"] for r in shim_rows(path)] == expected
    assert [r["id"] for r in hudi_rs_rows(path, COLUMNS)] == expected
    assert any(".log." in f for f in data_files(path))


@pytest.mark.parametrize("another_task_logs_after", [True, False])
def test_blocks_a_dead_task_attempt_appended_to_a_log_without_recording_them_are_cut_off(tmp_path,
                                                                                       another_task_logs_after):
    path = tmp_path / "t"
    one = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.bucket.index.num.buckets": "1"}
    write(path, trips(range(4)), **one)
    plan = plan_write(str(path), {**BASE_OPTIONS, **one, "hoodie.datasource.write.operation": "upsert"}, SCHEMA)
    (log,) = write_task(plan, pa.Table.from_pylist(trips(range(1, 2), ts=2, fare=-1.0), schema=SCHEMA).to_batches(),
                        TaskInfo(0, 5, 500)).files
    log_path = next(path / f for f in data_files(path) if f.endswith(log))
    recorded = log_path.stat().st_size
    dead = encode_avro_data_block(pa.Table.from_pylist(trips(range(2, 3), ts=9, fare=-9.0), schema=SCHEMA),
                                  avro_record_schema("trips", SCHEMA), {HeaderKey.INSTANT_TIME: plan.instant})
    with open(log_path, "ab") as handle:  # an attempt that died before recording its block
        handle.write(dead)
    # ... after setting aside its keys, which claim a newer version of k3 than the next task's
    phantom = pa.table({"_hoodie_record_key": ["k3"], "ts": pa.array([99], pa.int64())})
    write_spill(LOCAL, state_folder(str(path), plan.instant), f"{log}.{recorded + len(dead)}.keys.arrow", phantom)
    if another_task_logs_after:
        write_task(plan, pa.Table.from_pylist(trips(range(3, 4), ts=2, fare=-3.0), schema=SCHEMA).to_batches(),
                   TaskInfo(1, 5, 501))
    commit_write(plan)
    contents = read_log_file(LOCAL, str(log_path))
    assert len(contents.blocks) == (2 if another_task_logs_after else 1) and contents.corrupt_regions == ()
    assert [b.offset for b in contents.blocks][1:] == ([recorded] if another_task_logs_after else [])
    fares = {r["id"]: r["fare"] for r in shim_rows(path)}
    assert fares == {"k0": 0.0, "k1": -1.0, "k2": 2.0, "k3": -9.0 if another_task_logs_after else 3.0}
    assert {r["id"]: r["fare"] for r in hudi_rs_rows(path, COLUMNS)} == fares
