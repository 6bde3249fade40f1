"""Files completed commits wrote, checked against what a read finds: a missing one is an error
naming it and its commit, never fewer or older rows; files a clean removed are not missing."""

from __future__ import annotations

import json
import re
from contextlib import nullcontext
from pathlib import Path

import pyarrow as pa
import pytest

import shim
from shim.errors import CommittedDataError
from shim.log.reader import CorruptBlockWarning
from shim.read.damage import SKIPPED_BLOCKS_KEY, SkippedBlocks
from shim.storage import as_storage
from shim.write.service_options import CleanPolicy, CleanSettings
from shim.write.services.clean import clean_table
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
    results = clean_table(as_storage(str(table.path)), table.config,
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


# -- damaged log files -------------------------------------------------------------------------------


def updated(tmp_path, updates: int = 50) -> tuple[TinyTable, Path]:
    """A merge-on-read table of 100 rows whose one log file holds a data block updating the first
    `updates` rows and a delete block removing row 99."""
    table = TinyTable(tmp_path / "t", SCHEMA)
    base = table.base([{"id": f"{i:03d}", "ts": 1, "v": "old"} for i in range(100)])
    table.log([{"id": f"{i:03d}", "ts": 2, "v": "new"} for i in range(updates)], deletes=["099"], base_instant=base)
    [log] = table.path.glob(".fg1-0_*.log.*")
    return table, log


def values(result: pa.Table) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in result.column("v").to_pylist():
        counts[value] = counts.get(value, 0) + 1
    return counts


def skipped_report(result: pa.Table) -> dict:
    return json.loads(result.schema.metadata[SKIPPED_BLOCKS_KEY])


@pytest.mark.parametrize("damage", ["truncated", "magic flipped", "cut at a block boundary"])
def test_a_damaged_committed_log_block_is_an_error_naming_file_offset_and_instant(tmp_path, damage):
    table, log = updated(tmp_path)
    data = bytearray(log.read_bytes())
    second = data.find(b"#HUDI#", 1)
    if damage == "truncated":
        data = data[: second // 2]
    elif damage == "magic flipped":
        data[second] ^= 0x01
    else:
        data = data[:second]
    log.write_bytes(bytes(data))
    with pytest.warns(CorruptBlockWarning) if damage != "cut at a block boundary" else nullcontext(), \
            pytest.raises(CommittedDataError, match=re.escape(log.name)) as info:
        shim.open_table(table.path).read()
    assert info.value.instant == table.instants[1]
    assert info.value.offset == (second if damage == "cut at a block boundary" else 0)
    assert f"offset {info.value.offset}" in str(info.value)


def test_corrupt_skip_reads_on_as_hudi_does_and_reports_what_it_skipped(tmp_path):
    table, log = updated(tmp_path)
    data = bytearray(log.read_bytes())
    data[data.find(b"#HUDI#", 1)] ^= 0x01  # the delete block's magic: the data block before it fails too
    log.write_bytes(bytes(data))
    with pytest.warns(CorruptBlockWarning):
        result = shim.open_table(table.path).read(corrupt="skip")
    assert values(result) == {"old": 100}  # the committed updates and the delete are lost
    report = skipped_report(result)
    assert report["count"] == 1
    [block] = report["blocks"]
    assert (block["path"], block["offset"], block["length"], block["instant"]) == (
        str(log), 0, len(data), table.instants[1])
    skipped = SkippedBlocks()
    with pytest.warns(CorruptBlockWarning):
        rows = shim.open_table(table.path).scan(corrupt="skip", skipped=skipped).read_all().num_rows
    assert rows == 100 and len(skipped) == 1


def test_a_torn_tail_no_commit_wrote_is_skipped_without_error_and_reported(tmp_path):
    table, log = updated(tmp_path)
    with open(log, "ab") as handle:
        handle.write(b"#HUDI#" + b"\x00\x00\x00\x00\x00\x01\x00\x00" + b"torn")  # an append that died
    with pytest.warns(CorruptBlockWarning):
        assert values(shim.open_table(table.path).read()) == {"new": 50, "old": 49}
    with pytest.warns(CorruptBlockWarning):
        report = skipped_report(shim.open_table(table.path).read(corrupt="skip"))
    assert report["count"] == 1 and report["blocks"][0]["instant"] is None


def test_a_damaged_block_read_before_is_not_served_from_memory(tmp_path):
    table, log = updated(tmp_path)
    opened = shim.open_table(table.path)
    data = bytearray(log.read_bytes())
    data[data.find(b"#HUDI#", 1)] ^= 0x01
    log.write_bytes(bytes(data))
    with pytest.warns(CorruptBlockWarning):
        assert values(opened.read(corrupt="skip")) == {"old": 100}
    with pytest.warns(CorruptBlockWarning), pytest.raises(CommittedDataError):
        opened.read()
