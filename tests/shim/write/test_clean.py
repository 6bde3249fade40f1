"""Cleaning: which file slices go, the clean instants, time travel limits, resuming, protections."""

from __future__ import annotations

import datetime
import os
import time

import fastavro
import httpx
import pyarrow as pa
import pytest

import shim
from catalog.settings import Settings
from shim.errors import CorruptFileError, InvalidArgumentError, WriteError
from shim.properties import TableConfig, read_table_config
from shim.storage import LocalStorage, as_storage
from shim.timeline.timeline import Timeline
from shim.write.avro_metadata import CLEAN_METADATA, CLEANER_PLAN, decode_avro_record, encode_avro_record
from shim.write.service_options import CleanSettings, clean_settings
from shim.write.services.clean import clean_table
from shim.write.services.clean_plan import earliest_commit_to_retain, plan_clean
from shim.write.services.cleaning import clean
from shim.write.services.compaction import compact, start_compaction
from tests.catalog.servekit import live_server
from tests.writekit import data_files, hudi_rs_rows, shim_rows, write

COLUMNS = ["id", "ts", "region", "fare"]
KEEP_2 = {"hoodie.cleaner.commits.retained": "2", "hoodie.datasource.write.partitionpath.field": "region"}
NO_CLEAN = {"hoodie.clean.automatic": "false", "hoodie.datasource.write.partitionpath.field": "region"}
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def trips(ids: range, version: int) -> list[dict]:
    return [{"id": f"k{i}", "ts": version, "region": "eu" if i % 2 else "us", "fare": float(version * 100 + i)}
            for i in ids]


def table_config(path) -> TableConfig:  # type: ignore[no-untyped-def]
    config = read_table_config(as_storage(str(path)))
    assert config is not None
    return config


def versions_written(path, ids: range, count: int, **options: str) -> list[str]:
    return [write(path, trips(ids, v), **options) for v in range(count)]


def base_instants(path) -> dict[str, list[str]]:
    """File id -> instants of its base files, oldest first."""
    found: dict[str, list[str]] = {}
    for name in data_files(path):
        if name.endswith(".parquet"):
            stem = os.path.basename(name)[: -len(".parquet")]
            file_id, instant = stem.split("_")[0], stem.split("_")[-1]
            found.setdefault(file_id, []).append(instant)
    return {k: sorted(v) for k, v in found.items()}


def hoodie_file(path, name: str) -> dict:
    with open(os.path.join(path, ".hoodie", name), "rb") as handle:
        return decode_avro_record(handle.read())


def cleans(path) -> list[str]:
    return sorted(n for n in os.listdir(os.path.join(path, ".hoodie")) if n.split(".", 1)[-1].startswith("clean"))


def test_each_file_group_keeps_the_slices_reads_since_the_earliest_retained_commit_need(tmp_path):
    path = tmp_path / "t"
    instants = versions_written(path, range(6), 5, **KEEP_2)
    groups = base_instants(path)
    assert len(groups) == 4
    # retained: the slices of the last two commits and the one before them (a read as of the
    # earliest retained commit needs the slice that was the latest then)
    assert all(kept == instants[2:] for kept in groups.values())
    expected = [{"id": f"k{i}", "fare": 400.0 + i} for i in range(6)]
    assert shim_rows(path, columns=["id", "fare"]) == expected == hudi_rs_rows(path, ["id", "fare"])
    # two cleans ran (after commits 4 and 5): nothing was old enough before
    assert cleans(path) == sorted(f"{t}.clean{s}" for t in [c.split(".")[0] for c in cleans(path)][::3]
                                  for s in ("", ".inflight", ".requested"))
    assert len(cleans(path)) == 6


def test_the_clean_instant_records_plan_and_result_as_hudi_does(tmp_path):
    path = tmp_path / "t"
    instants = versions_written(path, range(6), 4, **KEEP_2)
    stamp = cleans(path)[0].split(".")[0]
    plan = hoodie_file(path, f"{stamp}.clean.requested")
    assert plan["policy"] == "KEEP_LATEST_COMMITS" and plan["version"] == 2
    assert plan["earliestInstantToRetain"] == {"timestamp": instants[2], "action": "commit", "state": "COMPLETED"}
    assert plan["lastCompletedCommitTimestamp"] == instants[3]
    deleted = {p: sorted(os.path.basename(i["filePath"]) for i in infos)
               for p, infos in plan["filePathsToBeDeletedPerPartition"].items()}
    assert sorted(deleted) == ["eu", "us"] and all(len(names) == 2 for names in deleted.values())
    assert all(name.endswith(f"_{instants[0]}.parquet") for names in deleted.values() for name in names)
    for infos in plan["filePathsToBeDeletedPerPartition"].values():
        assert all(os.path.isabs(i["filePath"]) and not os.path.exists(i["filePath"]) for i in infos)
    assert hoodie_file(path, f"{stamp}.clean.inflight") == plan
    done = hoodie_file(path, f"{stamp}.clean")
    assert done["earliestCommitToRetain"] == instants[2] and done["totalFilesDeleted"] == 4
    assert done["startCleanTime"] == stamp and done["version"] == 2
    assert {p: sorted(m["successDeleteFiles"]) for p, m in done["partitionMetadata"].items()} == deleted
    assert all(m["failedDeleteFiles"] == [] and m["policy"] == "KEEP_LATEST_COMMITS"
               for m in done["partitionMetadata"].values())
    # the files are single-record Avro containers of Hudi's schemas
    with open(os.path.join(path, ".hoodie", f"{stamp}.clean"), "rb") as handle:
        assert fastavro.reader(handle).writer_schema["name"] == "org.apache.hudi.avro.model.HoodieCleanMetadata"


def test_time_travel_reaches_back_to_the_earliest_retained_commit_and_no_further(tmp_path):
    path = tmp_path / "t"
    instants = versions_written(path, range(6), 5, **KEEP_2)
    table = shim.open_table(str(path))
    for version in (3, 4):
        fares = table.read(as_of=instants[version], columns=["fare"]).column("fare").to_pylist()
        assert sorted(fares) == [version * 100.0 + i for i in range(6)]
    for version in (0, 1, 2):
        with pytest.raises(InvalidArgumentError, match=rf"as of {instants[version]}.*clean .*retains commits from "
                                                        rf"{instants[3]} on.*hoodie.cleaner.commits.retained"):
            table.read(as_of=instants[version])
    # incremental windows may start anywhere, but end no earlier than the horizon
    rows = table.incremental(instants[0], instants[3], columns=["fare"]).column("fare").to_pylist()
    assert sorted(rows) == [300.0 + i for i in range(6)]
    with pytest.raises(InvalidArgumentError, match="end of the incremental window"):
        table.incremental(instants[0], instants[2])


def test_no_clean_without_automatic_cleaning_and_clean_on_demand(tmp_path):
    path = tmp_path / "t"
    instants = versions_written(path, range(4), 5, **NO_CLEAN)
    assert cleans(path) == [] and all(len(v) == 5 for v in base_instants(path).values())
    results = clean(str(path), {"hoodie.cleaner.commits.retained": "1"})
    assert len(results) == 1 and results[0].earliest_retained == instants[4]
    assert all(v == instants[3:] for v in base_instants(path).values())
    assert len(results[0].deleted) == 4 * 3 and results[0].failed == ()
    assert clean(str(path), {"hoodie.cleaner.commits.retained": "1"}) == []  # nothing left to delete
    assert shim_rows(path, columns=["id", "fare"]) == hudi_rs_rows(path, ["id", "fare"])


def test_merge_on_read_slices_go_with_their_log_files(tmp_path):
    path = tmp_path / "t"
    options = {**MOR, **NO_CLEAN}
    first = write(path, trips(range(4), 0), **options)
    write(path, trips(range(4), 1), **options)  # logs on the first slice
    compact(str(path))
    write(path, trips(range(0, 4, 2), 2), **options)  # logs on the compacted slice
    compact(str(path))
    before = data_files(path)
    results = clean(str(path), {"hoodie.cleaner.commits.retained": "1"})
    after = data_files(path)
    gone = sorted(set(before) - set(after))
    assert sorted(f"{p}/{n}" for p, n in results[0].deleted) == gone
    # the first slices went (base files and the logs written on them); the compacted slice before
    # the last compaction stays with its logs
    assert gone == sorted(f for f in before if first in f)
    assert sum(".log." in f for f in gone) == 4 and sum(f.endswith(".parquet") for f in gone) == 4
    # k0 and k2's groups: two compacted base files and one log; k1 and k3's: one compacted base file
    assert sum(".log." in f for f in after) == 2 and len(after) == 2 * 3 + 2 * 1
    expected = [{"id": f"k{i}", "fare": (200.0 if i % 2 == 0 else 100.0) + i} for i in range(4)]
    assert shim_rows(path, columns=["id", "fare"]) == expected == hudi_rs_rows(path, ["id", "fare"])


def test_slices_a_pending_compaction_reads_are_kept(tmp_path):
    path = tmp_path / "t"
    options = {**MOR, **NO_CLEAN, "hoodie.client.heartbeat.interval_in_ms": "100"}
    write(path, trips(range(4), 0), **options)
    write(path, trips(range(4), 1), **options)
    config = table_config(path)
    job = start_compaction(as_storage(str(path)), config, timeout_s=0.2)
    assert job is not None
    time.sleep(0.3)  # its writer is gone; the plan stays pending
    for version in (2, 3, 4):
        write(path, trips(range(4), version), **options)
    planned = {os.path.basename(op["dataFilePath"]) for op in job.operations}
    assert clean(str(path), {"hoodie.cleaner.commits.retained": "1"}) == []
    assert planned <= {os.path.basename(f) for f in data_files(path)}
    assert compact(str(path), options=options) == job.instant
    assert shim_rows(path, columns=["id", "fare"]) == hudi_rs_rows(path, ["id", "fare"])
    assert [r["fare"] for r in shim_rows(path)] == [400.0 + i for i in range(4)]


def test_a_pending_write_holds_back_the_earliest_retained_commit(tmp_path):
    path = tmp_path / "t"
    instants = versions_written(path, range(2), 5, **NO_CLEAN)
    config = table_config(path)
    keep_1 = CleanSettings(commits_retained=1)
    assert earliest_commit_to_retain(Timeline.load(as_storage(str(path)), config), keep_1).requested_time == instants[4]
    # a writer (of another engine) started between commits 2 and 3 and has not finished
    pending = str(int(instants[2]) + 1)
    LocalStorage(path).write_atomically(os.path.join(path, ".hoodie", f"{pending}.commit.requested"), b"")
    timeline = Timeline.load(as_storage(str(path)), config)
    assert earliest_commit_to_retain(timeline, keep_1).requested_time == instants[2]
    plan = plan_clean(as_storage(str(path)), timeline, keep_1)
    assert plan is not None
    assert {n.split("_")[-1] for names in plan.files.values() for n in names} == {f"{instants[0]}.parquet"}


def test_an_interrupted_clean_is_finished_by_the_next_one(tmp_path):
    path = tmp_path / "t"
    instants = versions_written(path, range(4), 4, **NO_CLEAN)
    config = table_config(path)
    keep_1 = CleanSettings(commits_retained=1)
    plan = plan_clean(as_storage(str(path)), Timeline.load(as_storage(str(path)), config), keep_1)
    assert plan is not None
    stamp = str(int(instants[-1]) + 1)  # the clean died after its plan and one deletion
    LocalStorage(path).write_atomically(os.path.join(path, ".hoodie", f"{stamp}.clean.requested"),
                     encode_avro_record(CLEANER_PLAN, plan.to_avro(str(path))))
    first = next(iter(plan.files.items()))
    os.remove(os.path.join(path, first[0], first[1][0]))
    expected = shim_rows(path)  # readers ignore the pending clean
    results = clean_table(as_storage(str(path)), config, keep_1)
    assert [r.clean_instant for r in results] == [stamp]
    assert results[0].failed == ((first[0], first[1][0]),)  # already gone, recorded as Hudi does
    assert len(results[0].deleted) == sum(len(v) for v in plan.files.values()) - 1
    assert os.path.exists(os.path.join(path, ".hoodie", f"{stamp}.clean"))
    assert shim_rows(path) == expected == sorted(hudi_rs_rows(path, COLUMNS), key=lambda r: r["id"])


def test_a_broken_clean_plan_fails_the_clean_naming_it_after_the_commit_completed(tmp_path):
    path = tmp_path / "t"
    instants = versions_written(path, range(2), 2, **NO_CLEAN)
    stamp = str(int(instants[-1]) + 1)  # a clean that died before its plan was whole
    LocalStorage(path).write_atomically(os.path.join(path, ".hoodie", f"{stamp}.clean.requested"), b"not avro")
    with pytest.raises(WriteError, match=rf"commit (\d+) completed, but the clean after it failed: .*"
                                         rf"{stamp}.clean.requested: the interrupted clean's plan does not decode"):
        write(path, trips(range(2), 7), **KEEP_2)
    assert [r["fare"] for r in shim_rows(path)] == [700.0, 701.0]  # the data is committed
    with pytest.raises(CorruptFileError, match="clean.requested"):
        clean(str(path))


def test_replaced_file_groups_go_once_the_replacement_is_older_than_the_horizon(tmp_path):
    path = tmp_path / "t"
    write(path, trips(range(4), 0), **NO_CLEAN)
    old_ids = set(base_instants(path))
    write(path, trips(range(2), 1), **NO_CLEAN, **{"hoodie.datasource.write.operation": "insert_overwrite_table"})
    assert clean(str(path), {"hoodie.cleaner.commits.retained": "1"}) == []  # the replacement is the horizon
    write(path, trips(range(2), 2), **NO_CLEAN)
    clean(str(path), {"hoodie.cleaner.commits.retained": "1"})
    assert not old_ids & set(base_instants(path))
    assert shim_rows(path, columns=["id", "fare"]) == [{"id": "k0", "fare": 200.0}, {"id": "k1", "fare": 201.0}]


def test_savepointed_files_are_kept(tmp_path):
    path = tmp_path / "t"
    instants = versions_written(path, range(2), 4, **NO_CLEAN)
    saved = {(os.path.dirname(f), os.path.basename(f)) for f in data_files(path) if instants[0] in f}
    schema = {
        "type": "record", "name": "HoodieSavepointMetadata", "namespace": "org.apache.hudi.avro.model",
        "fields": [
            {"name": "savepointedBy", "type": "string"}, {"name": "savepointedAt", "type": "long"},
            {"name": "comments", "type": "string"},
            {"name": "partitionMetadata", "type": {"type": "map", "values": {
                "type": "record", "name": "HoodieSavepointPartitionMetadata", "fields": [
                    {"name": "partitionPath", "type": "string"},
                    {"name": "savepointDataFile", "type": {"type": "array", "items": "string"}}]}}},
            {"name": "version", "type": ["int", "null"], "default": 1},
        ],
    }
    by_partition: dict[str, list[str]] = {}
    for partition, name in saved:
        by_partition.setdefault(partition, []).append(name)
    record = {"savepointedBy": "ops", "savepointedAt": 0, "comments": "", "version": 1,
              "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": n} for p, n in by_partition.items()}}
    LocalStorage(path).write_atomically(os.path.join(path, ".hoodie", f"{instants[0]}.savepoint"), encode_avro_record(schema, record))
    clean(str(path), {"hoodie.cleaner.commits.retained": "1"})
    left = {(os.path.dirname(f), os.path.basename(f)) for f in data_files(path)}
    assert saved <= left and not any(instants[1] in name for _, name in left)


def test_reads_after_a_clean_without_retention_horizon_stay_on_the_latest_commit(tmp_path):
    path = tmp_path / "t"
    instants = versions_written(path, range(2), 3, **NO_CLEAN)
    stamp = str(int(instants[2]) + 1)  # as Hudi records a KEEP_LATEST_FILE_VERSIONS clean
    record = {"startCleanTime": stamp, "timeTakenInMillis": 1, "totalFilesDeleted": 0, "earliestCommitToRetain": "",
              "lastCompletedCommitTimestamp": instants[2], "partitionMetadata": {}, "version": 2}
    LocalStorage(path).write_atomically(os.path.join(path, ".hoodie", f"{stamp}.clean"), encode_avro_record(CLEAN_METADATA, record))
    table = shim.open_table(str(path))
    assert table.read(as_of=instants[2]).num_rows == 2
    with pytest.raises(InvalidArgumentError, match="records no earliest commit to retain"):
        table.read(as_of=instants[1])


def test_an_unknown_cleaner_policy_is_refused_before_writing(tmp_path):
    with pytest.raises(InvalidArgumentError, match="'KEEP_SOME' is not a cleaner policy"):
        write(tmp_path / "t", trips(range(2), 0), **{"hoodie.cleaner.policy": "KEEP_SOME"})
    assert not (tmp_path / "t" / ".hoodie").exists() or not data_files(tmp_path / "t")


def test_keep_latest_file_versions_keeps_the_newest_slices_of_each_file_group(tmp_path):
    path = tmp_path / "t"
    versions = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "2",
                "hoodie.datasource.write.partitionpath.field": "region"}
    instants = versions_written(path, range(4), 4, **versions)
    assert all(kept == instants[2:] for kept in base_instants(path).values())
    done = hoodie_file(path, [n for n in cleans(path) if n.endswith(".clean")][-1])
    assert done["earliestCommitToRetain"] == "" and done["partitionMetadata"]["eu"]["policy"] == (
        "KEEP_LATEST_FILE_VERSIONS")
    stamp = [n for n in cleans(path) if n.endswith(".clean.requested")][-1]
    assert hoodie_file(path, stamp)["earliestInstantToRetain"] is None
    expected = [{"id": f"k{i}", "fare": 300.0 + i} for i in range(4)]
    assert shim_rows(path, columns=["id", "fare"]) == expected == hudi_rs_rows(path, ["id", "fare"])
    table = shim.open_table(str(path))
    with pytest.raises(InvalidArgumentError, match="records no earliest commit to retain"):
        table.read(as_of=instants[2])  # its files are there, but the clean does not say which reads it kept
    # versions count per file group: a commit writing one group cleans that group only
    last = write(path, [{"id": "k0", "ts": 9, "region": "us", "fare": -1.0}], **versions)
    groups = base_instants(path)
    assert sorted(kept == [instants[3], last] for kept in groups.values()) == [False, False, False, True]
    assert all(kept in ([instants[3], last], instants[2:]) for kept in groups.values())


def test_keep_latest_by_hours_retains_the_writes_of_the_last_hours(tmp_path):
    path = tmp_path / "t"
    instants = versions_written(path, range(2), 3, **NO_CLEAN)
    config = table_config(path)
    hours = {"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS", "hoodie.cleaner.hours.retained": "1"}
    assert clean(str(path), hours) == []  # all three commits are from the last hour
    third = datetime.datetime.strptime(instants[2][:14], "%Y%m%d%H%M%S").replace(
        microsecond=int(instants[2][14:]) * 1000)
    settings = clean_settings(hours)
    # an hour after the third commit: only it is retained (with the slice before it)
    results = clean_table(as_storage(str(path)), config, settings, now=third + datetime.timedelta(hours=1))
    assert [r.earliest_retained for r in results] == [instants[2]]
    assert all(v == instants[1:] for v in base_instants(path).values())
    # hours later nothing is recent: nothing is retained for sure, so nothing more goes
    assert clean_table(as_storage(str(path)), config, settings, now=third + datetime.timedelta(hours=5)) == []


def test_the_http_api_refuses_instants_the_cleaner_no_longer_retains(tmp_path):
    path = tmp_path / "wh" / "trips"
    instants = versions_written(path, range(4), 4, **KEEP_2)
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live, \
            httpx.Client(base_url=live.url) as client:
        for request in (lambda at: client.get("/v1/tables/trips/files", params={"as_of": at}),
                        lambda at: client.post("/v1/tables/trips/scan", json={"as_of": at})):
            refused = request(instants[1])
            assert refused.status_code == 422
            assert "the cleaner (clean " in refused.json()["error"]["message"]
            assert request(instants[2]).status_code == 200
        rows = pa.ipc.open_stream(client.post("/v1/tables/trips/scan", json={"as_of": instants[2]}).content)
        assert sorted(rows.read_all().column("fare").to_pylist()) == [200.0 + i for i in range(4)]
