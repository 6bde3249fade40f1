"""Files completed commits wrote, checked against what a read finds: a missing one is an error
naming it and its commit, never fewer or older rows; files a clean removed are not missing."""

from __future__ import annotations

import pyarrow as pa
import pytest

import shim
from shim.errors import CommittedDataError
from shim.write.clean import clean_table
from shim.write.clean_plan import CleanPolicy, CleanSettings
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])


def two_groups(tmp_path, mor: bool = True) -> TinyTable:
    table = TinyTable(tmp_path / "t", SCHEMA, mor=mor)
    first = table.base([{"id": "a", "ts": 1, "v": "a1"}])
    table.base([{"id": "b", "ts": 1, "v": "b1"}], file_id="fg2-0")
    if mor:
        table.log([{"id": "a", "ts": 2, "v": "a2"}], base_instant=first)
    return table


def test_a_missing_base_file_is_an_error_naming_it_and_its_commit(tmp_path):
    table = two_groups(tmp_path)
    [gone] = table.path.glob("fg2-0_*.parquet")
    gone.unlink()
    for mode in ("snapshot", "read_optimized"):
        with pytest.raises(CommittedDataError, match=gone.name) as info:
            shim.open_table(table.path).read(mode=mode)
        assert info.value.instant == table.instants[1]


def test_a_missing_log_file_is_an_error_in_snapshot_reads_only(tmp_path):
    table = two_groups(tmp_path)
    [gone] = table.path.glob(".fg1-0_*.log.*")
    gone.unlink()
    with pytest.raises(CommittedDataError, match=gone.name):
        shim.open_table(table.path).read()
    assert sorted(shim.open_table(table.path).read(mode="read_optimized").column("v").to_pylist()) == ["a1", "b1"]


def test_a_file_removed_after_the_listing_is_found_on_the_next_read(tmp_path):
    table = two_groups(tmp_path, mor=False)
    opened = shim.open_table(table.path)
    assert opened.read().num_rows == 2
    [gone] = table.path.glob("fg2-0_*.parquet")
    gone.unlink()
    with pytest.raises(CommittedDataError, match=gone.name):  # FileGoneError, then the files listed anew
        opened.read()
    with pytest.raises(CommittedDataError, match=gone.name):
        opened.scan().read_all()


def test_time_travel_checks_the_files_of_that_version(tmp_path):
    table = two_groups(tmp_path, mor=False)
    before = table.instants[0]
    [gone] = table.path.glob("fg2-0_*.parquet")
    gone.unlink()
    assert shim.open_table(table.path).read(as_of=before).column("id").to_pylist() == ["a"]


def test_files_a_clean_removed_are_not_missing(tmp_path):
    table = TinyTable(tmp_path / "t", SCHEMA, mor=False)
    for version in range(3):
        table.base([{"id": "a", "ts": version, "v": f"a{version}"}])
    results = clean_table(str(table.path), table.config,
                          CleanSettings(policy=CleanPolicy.KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1))
    assert sum(len(r.deleted) for r in results) == 2
    assert shim.open_table(table.path).read().column("v").to_pylist() == ["a2"]


def test_a_replaced_file_group_is_not_expected(tmp_path):
    table = two_groups(tmp_path, mor=False)
    from shim.timeline.instant import Action

    table.base([{"id": "c", "ts": 1, "v": "c1"}], file_id="fg3-0", action=Action.REPLACE_COMMIT,
               replaced={"": ("fg2-0",)}, operation="INSERT_OVERWRITE")
    for path in table.path.glob("fg2-0_*.parquet"):
        path.unlink()
    assert sorted(shim.open_table(table.path).read().column("id").to_pylist()) == ["a", "c"]
