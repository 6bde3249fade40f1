"""hudi-rs 0.5 plans a version 8+ table's file slices from its metadata table's files partition
(when `hoodie.table.metadata.partitions` lists it): its slices equal those the shim plans from
`metadata_listing`, on the real trips table and on the trips table after a crash between the
metadata table's commit and the data table's (which neither counts)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import shim
from shim.layout.slices import FileSlice, file_slices_as_of
from shim.metadata import metadata_listing

hudi = pytest.importorskip("hudi", reason="hudi-rs (pip install hudi) is a test dependency")

TRIPS = "trips__mor__avro__v8_trips_8i3u1d"


def _ours(path: Path) -> list[tuple[str, str, str, tuple[str, ...]]]:
    table = shim.open_table(path)
    listing = metadata_listing(table.storage, table.config, table.snapshot().active_timeline, None)
    assert listing.reason is None
    slices = file_slices_as_of(table.storage, listing.partitions(), table.snapshot().active_timeline, None,
                               groups=listing.file_groups())
    return sorted(_key(s) for s in slices)


def _key(s: FileSlice) -> tuple[str, str, str, tuple[str, ...]]:
    return (s.partition_path, s.file_id, s.base_file.name if s.base_file else "",
            tuple(sorted(log.name for log in s.log_files)))


def _theirs(path: Path) -> list[tuple[str, str, str, tuple[str, ...]]]:
    table = hudi.HudiTableBuilder.from_base_uri(str(path)).build()
    return sorted((s.partition_path, s.file_id, s.base_file_name, tuple(sorted(s.log_file_names)))
                  for s in table.get_file_slices())


def test_hudi_rs_plans_the_slices_the_metadata_listing_plans(shared_tables: dict[str, Path]) -> None:
    ours = _ours(shared_tables[TRIPS])
    assert ours == _theirs(shared_tables[TRIPS])
    assert [s[3] for s in ours] == [(), (), (".8aa68f7e-afd6-4c94-b86c-8a886552e08d-0_20251220210130911.log.1_0-1139-3316",)]


def test_after_a_crash_between_the_two_commits_both_leave_the_write_out(shared_tables: dict[str, Path],
                                                                         tmp_path: Path) -> None:
    copy = tmp_path / "trips"
    shutil.copytree(shared_tables[TRIPS], copy)
    (copy / ".hoodie" / "timeline" / "20251220210130911_20251220210131755.deltacommit").unlink()
    ours = _ours(copy)
    assert ours == _theirs(copy)
    assert all(not logs for *_, logs in ours)
