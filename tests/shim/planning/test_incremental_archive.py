"""Incremental reads whose window starts before the active timeline, where commits were archived:
the archived timeline (archive logs on version 6, the LSM history on 8+) says which commits
completed and what they wrote, so the windows are exact."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import shim
from shim.errors import InvalidTableError
from shim.storage import as_storage
from shim.write.service_options import ArchiveSettings
from shim.write.services.archive import archive_timeline
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])
BEFORE_ALL = "20000101000000000"


def archive(table: TinyTable, *instants: str) -> None:
    """Move the oldest commits (`instants`, of the fixture's four) to a version-6 archive log."""
    kept = 4 - len(instants)
    done = archive_timeline(as_storage(str(table.path)), table.config, ArchiveSettings(min_commits=kept, max_commits=kept))
    assert done is not None and {i.requested_time for i in done.instants} == set(instants)


@pytest.fixture
def table(tmp_path: Path) -> tuple[TinyTable, list[str]]:
    built = TinyTable(tmp_path / "t", SCHEMA)
    t1 = built.base([{"id": "a", "ts": 1, "v": "a1"}, {"id": "b", "ts": 1, "v": "b1"}], file_id="fg1-0")
    t2 = built.base([{"id": "c", "ts": 1, "v": "c1"}], file_id="fg2-0")
    t3 = built.base([{"id": "d", "ts": 1, "v": "d1"}], file_id="fg3-0")
    t4 = built.log([{"id": "a", "ts": 2, "v": "a2"}], file_id="fg1-0", base_instant=t1)
    return built, [t1, t2, t3, t4]


def ids(result: pa.Table) -> list[str]:
    return sorted(result.column("id").to_pylist())


def test_window_reaching_archived_commits_reads_the_archive(table):
    built, (t1, t2, t3, _) = table
    archive(built, t1, t2)
    opened = shim.open_table(built.path)
    assert ids(opened.incremental(BEFORE_ALL)) == ["a", "b", "c", "d"]
    assert ids(opened.incremental(t1)) == ["a", "c", "d"]  # c's commit t2 is archived, its group untouched since
    assert ids(opened.incremental(t1, t3)) == ["c", "d"]
    assert opened.incremental(t1, t3, columns=["v"]).column("v").to_pylist() in (["c1", "d1"], ["d1", "c1"])


def test_window_ending_among_archived_commits_reads_as_of_its_end(table):
    built, (t1, t2, _, _) = table
    archive(built, t1, t2)
    assert ids(shim.open_table(built.path).incremental(BEFORE_ALL, t2)) == ["a", "b", "c"]
    assert ids(shim.open_table(built.path).incremental(t1, t2)) == ["c"]
    assert ids(shim.open_table(built.path).read(as_of=t1)) == ["a", "b"]


def test_window_within_the_active_timeline_reads_only_the_groups_it_touched(table):
    built, (t1, t2, t3, _) = table
    archive(built, t1)
    assert ids(shim.open_table(built.path).incremental(t3)) == ["a"]
    assert ids(shim.open_table(built.path).incremental(t2)) == ["a", "d"]


def test_without_an_archive_an_early_start_is_the_whole_history(table):
    built, _ = table
    assert ids(shim.open_table(built.path).incremental(BEFORE_ALL)) == ["a", "b", "c", "d"]


def test_version_8_lsm_history_without_a_manifest_holds_nothing_and_a_bad_file_is_named(shared_tables, tmp_path):
    source = shared_tables["trips__mor__avro__v8_trips_8i3u1d"]
    copy = tmp_path / "v8"
    shutil.copytree(source, copy)
    whole = shim.open_table(copy).incremental(BEFORE_ALL)
    assert whole.num_rows > 0  # no archived instants yet: the window is the whole active timeline
    history = copy / ".hoodie" / "timeline" / "history"
    (history / "00000000000000000_00000000000000001_0.parquet").write_bytes(b"x")
    assert shim.open_table(copy).archived_timeline() == []  # no manifest lists it
    (history / "manifest_1").write_text('{"files": [{"fileName": "00000000000000000_00000000000000001_0.parquet", '
                                        '"fileLen": 1}]}')
    (history / "_version_").write_text("1")
    with pytest.raises(InvalidTableError, match=r"00000000000000001_0\.parquet: not an LSM timeline file"):
        shim.open_table(copy).incremental(BEFORE_ALL)
