"""File-slice planning on hand-laid timelines (file contents do not matter for planning)."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shim.layout.partitions import list_partitions, partition_values
from shim.layout.slices import file_slices_as_of
from shim.properties import TableConfig, format_properties
from shim.storage import as_storage
from shim.timeline.timeline import Timeline

FG = "aaaaaaaa-0000-0000-0000-000000000001-0"
FG2 = "bbbbbbbb-0000-0000-0000-000000000002-0"
T1, T2, T3, T4, T5 = (f"2024010100000{i}000" for i in range(1, 6))


def _table(tmp_path: Path, version: int = 6, **props: str) -> tuple[Path, TableConfig]:
    base = {
        "hoodie.table.name": "t",
        "hoodie.table.version": str(version),
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.recordkey.fields": "id",
    }
    base.update(props)
    (tmp_path / ".hoodie").mkdir(parents=True, exist_ok=True)
    text = format_properties(base)
    (tmp_path / ".hoodie" / "hoodie.properties").write_text(text)
    return tmp_path, TableConfig.from_text(text)


def _instant(root: Path, name: str, content: dict | None = None, layout: int = 1) -> None:
    folder = root / ".hoodie" / ("timeline" if layout == 2 else "")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(content) if content is not None else "")


def _touch(root: Path, partition: str, name: str) -> None:
    folder = root / partition if partition else root
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(b"x")


def _base(fg: str, ts: str, token: str = "0-1-1") -> str:
    return f"{fg}_{token}_{ts}.parquet"


def _log(fg: str, ts: str, version: int = 1, token: str = "0-1-1") -> str:
    return f".{fg}_{ts}.log.{version}_{token}"


def _slices(root: Path, config: TableConfig, as_of: str | None = None):
    timeline = Timeline.load(as_storage(str(root)), config)
    read = timeline.resolve_as_of(as_of)
    return file_slices_as_of(as_storage(str(root)), list_partitions(as_storage(str(root)), config), timeline, read)


def test_inflight_base_file_is_not_visible_and_previous_slice_is_read(tmp_path):
    root, config = _table(tmp_path, **{"hoodie.table.type": "COPY_ON_WRITE"})
    _instant(root, f"{T1}.commit", {})
    _instant(root, f"{T2}.inflight")
    _touch(root, "", _base(FG, T1))
    _touch(root, "", _base(FG, T2))
    [file_slice] = _slices(root, config)
    assert file_slice.base_file.name == _base(FG, T1)


def test_file_group_created_by_inflight_commit_is_absent(tmp_path):
    root, config = _table(tmp_path)
    _instant(root, f"{T1}.deltacommit", {})
    _instant(root, f"{T2}.deltacommit.requested")
    _touch(root, "", _base(FG, T1))
    _touch(root, "", _base(FG2, T2))
    assert [s.file_id for s in _slices(root, config)] == [FG]


def test_time_travel_picks_slice_as_of_instant(tmp_path):
    root, config = _table(tmp_path, **{"hoodie.table.type": "COPY_ON_WRITE"})
    _instant(root, f"{T1}.commit", {})
    _instant(root, f"{T3}.commit", {})
    _touch(root, "", _base(FG, T1))
    _touch(root, "", _base(FG, T3))
    assert _slices(root, config, as_of=T2)[0].base_file.instant_time == T1
    assert _slices(root, config)[0].base_file.instant_time == T3


def test_v6_logs_join_their_base_instant_and_sort_by_version_then_token(tmp_path):
    root, config = _table(tmp_path)
    _instant(root, f"{T1}.deltacommit", {})
    _instant(root, f"{T2}.deltacommit", {})
    _touch(root, "", _base(FG, T1))
    _touch(root, "", _log(FG, T1, 2, "0-10-2"))
    _touch(root, "", _log(FG, T1, 1, "1-10-1"))
    _touch(root, "", _log(FG, T1, 1, "0-10-1"))
    [file_slice] = _slices(root, config)
    assert [log.name for log in file_slice.log_files] == [
        _log(FG, T1, 1, "0-10-1"), _log(FG, T1, 1, "1-10-1"), _log(FG, T1, 2, "0-10-2")]


def test_v6_logs_after_pending_compaction_merge_into_previous_slice(tmp_path):
    root, config = _table(tmp_path)
    _instant(root, f"{T1}.deltacommit", {})
    _instant(root, f"{T2}.deltacommit", {})
    _instant(root, f"{T3}.compaction.requested", {})
    _instant(root, f"{T4}.deltacommit", {})
    _touch(root, "", _base(FG, T1))
    _touch(root, "", _log(FG, T1))
    _touch(root, "", _log(FG, T3))  # written after the compaction was scheduled
    [file_slice] = _slices(root, config)
    assert file_slice.base_instant == T1
    assert [log.instant_time for log in file_slice.log_files] == [T1, T3]


def test_v6_completed_compaction_starts_a_new_slice(tmp_path):
    root, config = _table(tmp_path)
    _instant(root, f"{T1}.deltacommit", {})
    _instant(root, f"{T2}.deltacommit", {})
    _instant(root, f"{T3}.compaction.requested", {})
    _instant(root, f"{T3}.commit", {})
    _instant(root, f"{T4}.deltacommit", {})
    _touch(root, "", _base(FG, T1))
    _touch(root, "", _log(FG, T1))
    _touch(root, "", _base(FG, T3))
    _touch(root, "", _log(FG, T3))
    [file_slice] = _slices(root, config)
    assert (file_slice.base_instant, [log.instant_time for log in file_slice.log_files]) == (T3, [T3])
    [old] = _slices(root, config, as_of=T2)
    assert (old.base_instant, [log.instant_time for log in old.log_files]) == (T1, [T1])


def test_log_only_file_group_reads_from_logs(tmp_path):
    root, config = _table(tmp_path)
    _instant(root, f"{T1}.deltacommit", {})
    _touch(root, "", _log(FG, T1))
    [file_slice] = _slices(root, config)
    assert file_slice.base_file is None and [log.instant_time for log in file_slice.log_files] == [T1]


def test_replaced_file_group_is_dropped_only_after_the_replacecommit(tmp_path):
    root, config = _table(tmp_path, **{"hoodie.table.type": "COPY_ON_WRITE"})
    _instant(root, f"{T1}.commit", {})
    _instant(root, f"{T2}.replacecommit", {"partitionToReplaceFileIds": {"": [FG]}})
    _touch(root, "", _base(FG, T1))
    _touch(root, "", _base(FG2, T2))
    assert [s.file_id for s in _slices(root, config)] == [FG2]
    assert [s.file_id for s in _slices(root, config, as_of=T1)] == [FG]


def test_v8_logs_attach_by_completion_time(tmp_path):
    root, config = _table(tmp_path, version=8)
    _instant(root, f"{T1}_{T1[:-3]}100.deltacommit", {}, layout=2)
    # log requested before the compaction at T3 but completed after it: belongs to the new slice
    _instant(root, f"{T2}_{T3[:-3]}500.deltacommit", {}, layout=2)
    _instant(root, f"{T3}.compaction.requested", {}, layout=2)
    _instant(root, f"{T3}_{T4}.commit", {}, layout=2)
    _instant(root, f"{T5}.deltacommit.inflight", None, layout=2)
    _touch(root, "", _base(FG, T1))
    _touch(root, "", _log(FG, T2))
    _touch(root, "", _base(FG, T3))
    _touch(root, "", _log(FG, T5))  # uncommitted
    [file_slice] = _slices(root, config)
    assert (file_slice.base_instant, [log.instant_time for log in file_slice.log_files]) == (T3, [T2])


def _archive_lsm(root: Path, completed: dict[str, tuple[str, str]]) -> None:
    """An LSM history holding `completed` (requested time -> (completion time, action))."""
    history = root / ".hoodie" / "timeline" / "history"
    history.mkdir(parents=True, exist_ok=True)
    times = sorted(completed)
    name = f"{times[0]}_{times[-1]}_0.parquet"
    pq.write_table(pa.table({"instantTime": times, "completionTime": [completed[t][0] for t in times],
                             "action": [completed[t][1] for t in times]}), history / name)
    (history / "manifest_1").write_text(json.dumps({"files": [{"fileName": name, "fileLen": 1}]}))
    (history / "_version_").write_text("1")


def test_v8_log_of_an_archived_write_completed_after_a_compaction_joins_the_compacted_slice(tmp_path):
    # Non-blocking concurrency control: a writer's commit (T2) completes after a compaction (T3)
    # was planned; both were archived since. The archive's completion time slices the log.
    root, config = _table(tmp_path, version=8)
    _archive_lsm(root, {T1: (f"{T1[:-3]}100", "deltacommit"), T2: (f"{T3[:-3]}500", "deltacommit"),
                        T3: (f"{T3[:-3]}200", "commit")})
    _instant(root, f"{T4}_{T5}.deltacommit", {}, layout=2)
    _touch(root, "", _base(FG, T1))
    _touch(root, "", _log(FG, T1))
    _touch(root, "", _log(FG, T2))
    _touch(root, "", _base(FG, T3))
    _touch(root, "", _log(FG, T4))
    [file_slice] = _slices(root, config)
    assert (file_slice.base_instant, [log.instant_time for log in file_slice.log_files]) == (T3, [T2, T4])


def test_v8_logs_of_archived_writes_before_every_base_need_no_archive(tmp_path):
    # The newest base file was requested before the archived log's write: whenever that write
    # completed, its log belongs to the newest slice (the archive, unreadable here, is not read).
    root, config = _table(tmp_path, version=8)
    _archive_lsm(root, {T1: (T1, "commit")})
    next((root / ".hoodie" / "timeline" / "history").glob("*.parquet")).write_bytes(b"not parquet")
    _instant(root, f"{T4}_{T5}.deltacommit", {}, layout=2)
    _touch(root, "", _base(FG, T1))
    _touch(root, "", _log(FG, T2))
    [file_slice] = _slices(root, config)
    assert (file_slice.base_instant, [log.instant_time for log in file_slice.log_files]) == (T1, [T2])


def test_v8_time_travel_reads_a_write_that_completed_after_a_later_compaction_was_planned(tmp_path):
    # As of T2, the compaction planned at T3 does not exist yet: the log of the write begun at T2
    # (completed after T3) is read on the slice of T1 (Hudi 1.2 drops it with T3's slice).
    root, config = _table(tmp_path, version=8)
    _instant(root, f"{T1}_{T1[:-3]}100.deltacommit", {}, layout=2)
    _instant(root, f"{T2}_{T3[:-3]}500.deltacommit", {}, layout=2)
    _instant(root, f"{T3}_{T4}.commit", {}, layout=2)
    _touch(root, "", _base(FG, T1))
    _touch(root, "", _log(FG, T2))
    _touch(root, "", _base(FG, T3))
    [file_slice] = _slices(root, config, as_of=T2)
    assert (file_slice.base_instant, [log.instant_time for log in file_slice.log_files]) == (T1, [T2])
    [file_slice] = _slices(root, config)
    assert (file_slice.base_instant, [log.instant_time for log in file_slice.log_files]) == (T3, [T2])


def test_v8_log_completing_after_pending_compaction_goes_to_previous_slice(tmp_path):
    root, config = _table(tmp_path, version=8)
    _instant(root, f"{T1}_{T1[:-3]}100.deltacommit", {}, layout=2)
    _instant(root, f"{T2}.compaction.inflight", None, layout=2)
    _instant(root, f"{T3}_{T3[:-3]}100.deltacommit", {}, layout=2)
    _touch(root, "", _base(FG, T1))
    _touch(root, "", _base(FG, T2))  # half-written compaction output
    _touch(root, "", _log(FG, T3))
    [file_slice] = _slices(root, config)
    assert (file_slice.base_instant, [log.instant_time for log in file_slice.log_files]) == (T1, [T3])


def test_files_older_than_the_active_timeline_count_as_committed(tmp_path):
    root, config = _table(tmp_path, **{"hoodie.table.type": "COPY_ON_WRITE"})
    _instant(root, f"{T3}.commit", {})
    _touch(root, "", _base(FG, T1))  # its commit was archived
    _touch(root, "", _base(FG2, T3))
    assert sorted(s.file_id for s in _slices(root, config)) == [FG, FG2]


@pytest.mark.parametrize("savepoint_first", [True, False])
def test_a_savepoint_at_its_commits_time_does_not_hide_the_commit(tmp_path, savepoint_first):
    root, config = _table(tmp_path, **{"hoodie.table.type": "COPY_ON_WRITE"})
    _instant(root, f"{T1}.commit", {})
    _instant(root, f"{T1}.savepoint", {})
    _touch(root, "", _base(FG, T1))
    listed = Timeline.load(as_storage(str(root)), config).instants
    ordered = sorted(listed, key=lambda i: (i.action.value != "savepoint") == savepoint_first)
    timeline = Timeline(str(root / ".hoodie"), ordered, config)  # whatever order the folder lists
    assert timeline.is_committed(T1) and [i.requested_time for i in timeline.completed_writes()] == [T1]
    [file_slice] = file_slices_as_of(as_storage(str(root)), [""], timeline, T1)
    assert file_slice.base_instant == T1


def test_cleans_older_than_the_first_active_write_do_not_hide_archived_compactions(tmp_path):
    # Hudi archives cleans apart from writes: a clean may stay older than the first active write.
    # A compaction archived after that clean still counts as committed.
    root, config = _table(tmp_path)
    _instant(root, f"{T1}.clean", {})
    _instant(root, f"{T4}.deltacommit", {})
    _touch(root, "", _base(FG, T2))
    _touch(root, "", _base(FG, T3))  # compacted at T3, whose commit was archived
    _touch(root, "", _log(FG, T3))
    [file_slice] = _slices(root, config)
    assert (file_slice.base_instant, [log.instant_time for log in file_slice.log_files]) == (T3, [T3])
    assert Timeline.load(as_storage(str(root)), config).start == T4


@pytest.mark.parametrize(
    ("props", "path", "expected"),
    [
        ({"hoodie.datasource.write.hive_style_partitioning": "true"}, "city=sf", {"city": "sf"}),
        ({}, "sf", {"city": "sf"}),
        ({"hoodie.datasource.write.partitionpath.urlencode": "true"}, "san%20jose", {"city": "san jose"}),
        ({}, "__HIVE_DEFAULT_PARTITION__", {"city": None}),
        ({"hoodie.datasource.write.hive_style_partitioning": "true"}, "town=sf", None),
        ({}, "2024/01/01", None),
    ],
)
def test_partition_values_from_paths(tmp_path, props, path, expected):
    _, config = _table(tmp_path, **{"hoodie.table.partition.fields": "city",
                                    "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
                                    **props})
    assert partition_values(path, config) == expected


def test_list_partitions_finds_nested_partitions_and_skips_hidden_folders(tmp_path):
    root, config = _table(tmp_path, **{"hoodie.table.partition.fields": "y,m"})
    _touch(root, "y=2024/m=01", ".hoodie_partition_metadata")
    _touch(root, "y=2024/m=02", _base(FG, T1))
    _touch(root, ".hoodie/metadata/files", ".hoodie_partition_metadata")
    _touch(root, ".spark-staging", _base(FG2, T1))
    assert list_partitions(as_storage(str(root)), config) == ["y=2024/m=01", "y=2024/m=02"]


def test_a_file_removed_while_its_folder_is_listed_is_left_out(tmp_path, monkeypatch):
    import os

    from shim.layout import slices
    from shim.storage import local

    root, _ = _table(tmp_path)
    _touch(root, "p", _base(FG, T1))
    _touch(root, "p", _base(FG2, T1))
    real_scandir = os.scandir

    def scandir_then_remove(folder):  # as when another writer replaces a file mid-listing
        entries = list(real_scandir(folder))
        os.remove(os.path.join(folder, _base(FG2, T1)))
        return iter(entries)

    monkeypatch.setattr(local.os, "scandir", scandir_then_remove)
    groups = slices.list_file_groups(as_storage(str(root)), ["p"])
    assert [(g.file_id, [b.name for b in g.base_files]) for g in groups] == [(FG, [_base(FG, T1)])]
