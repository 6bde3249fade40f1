"""How the snapshot view publishes a slice with log files (`--iceberg-slices`): base file in place
plus deletes, merged (written out once, read without deletes), or chosen by cost per slice."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

import shim
from catalog.iceberg import materialize
from catalog.iceberg.layout import (
    HOT_MERGE_SHARE,
    HOT_WRITES,
    MERGE_LOG_SHARE,
    SMALL_SLICE_BYTES,
    merge_reason,
    recent_writes,
)
from catalog.iceberg.publish import IcebergPublisher, file_uri
from catalog.settings import Settings
from engines.iceberg import attach
from shim.errors import InvalidArgumentError
from shim.files import BaseFile, LogFile
from shim.layout.slices import FileSlice
from tests.catalog.servekit import live_server
from tests.catalog.test_iceberg_layout import (
    LOGGED_ROWS,
    base_file,
    by_group,
    delete_files,
    iceberg_rows,
    layout_of,
    logged_table,
    manifest_files,
    open_catalog,  # noqa: F401 (fixture)
    shim_rows,
)


def slice_of(base_bytes: int, log_bytes: list[int]) -> FileSlice:
    instant = "20240101000000000"
    base = BaseFile("fg-0", "0-1-0", instant, f"fg-0_0-1-0_{instant}.parquet", "", base_bytes)
    logs = tuple(LogFile("fg-0", instant, v + 1, "0-1-0", f".fg-0_{instant}.log.{v + 1}_0-1-0", "", size)
                 for v, size in enumerate(log_bytes))
    return FileSlice("", "fg-0", instant, base, logs)


def test_auto_merges_slices_whose_logs_are_a_large_share_or_whose_base_file_is_small() -> None:
    large = 100 * SMALL_SLICE_BYTES
    assert merge_reason(slice_of(large, [int(large * MERGE_LOG_SHARE) - 1]), "auto") is None
    assert "1%" in str(merge_reason(slice_of(large, [int(large * MERGE_LOG_SHARE / 2)] * 2), "auto"))
    assert "small" in str(merge_reason(slice_of(SMALL_SLICE_BYTES, [10]), "auto"))
    assert merge_reason(slice_of(SMALL_SLICE_BYTES + 1, [10]), "auto") is None
    assert merge_reason(slice_of(SMALL_SLICE_BYTES, [10]), "deletes") is None
    assert merge_reason(slice_of(large, [10]), "merged") is not None


def test_auto_keeps_in_place_a_large_slice_that_changes_often() -> None:
    large = 100 * SMALL_SLICE_BYTES
    share = [int(large * 0.05)]  # 5% of the base file: merged by sizes alone
    assert merge_reason(slice_of(large, share), "auto", HOT_WRITES - 1) is not None
    assert merge_reason(slice_of(large, share), "auto", None) is not None  # (not known: by sizes)
    # appended to by HOT_WRITES of the last writes: in place, until the logs reach HOT_MERGE_SHARE
    assert merge_reason(slice_of(large, share), "auto", HOT_WRITES) is None
    assert merge_reason(slice_of(large, [int(large * HOT_MERGE_SHARE)]), "auto", HOT_WRITES) is not None
    # small base files are merged however often they change; a forced mode is what it says
    assert merge_reason(slice_of(SMALL_SLICE_BYTES, share), "auto", HOT_WRITES) is not None
    assert merge_reason(slice_of(large, share), "merged", HOT_WRITES) is not None
    assert merge_reason(slice_of(large, share), "deletes", 0) is None


def test_how_many_recent_writes_changed_a_slice(tmp_path: Path) -> None:
    table, _ = logged_table(tmp_path / "wh")  # fg2-0: one log
    changing = table.base([{"id": "d0", "ts": 1, "a": 0}, {"id": "d1", "ts": 1, "a": 1}], file_id="fg3-0")
    table.log(deletes=["d0"], file_id="fg3-0", base_instant=changing)
    table.log([{"id": "d1", "ts": 2, "a": 5}], file_id="fg3-0", base_instant=changing)
    snapshot = shim.open_table(str(table.path)).snapshot()
    writes = [write.requested_time for write in snapshot.committed.timeline.completed_writes()]
    slices = {s.file_id: s for s in snapshot.file_slices()}
    assert recent_writes(snapshot.committed, slices["fg2-0"], writes[-1]) == 1
    assert recent_writes(snapshot.committed, slices["fg3-0"], writes[-1]) == 2
    assert recent_writes(snapshot.committed, slices["fg3-0"], writes[-2]) == 1  # as of the first of them
    assert recent_writes(snapshot.committed, slices["fg1-0"], writes[-1]) is None  # no logs


def test_the_setting_is_checked() -> None:
    assert Settings(warehouse="/tmp").iceberg_slices == "auto"
    with pytest.raises(InvalidArgumentError, match="iceberg_slices must be one of auto, deletes, merged"):
        Settings(warehouse="/tmp", iceberg_slices="sometimes")


@pytest.mark.parametrize("merging", ["merged", "auto"])
def test_a_merged_slice_is_read_without_deletes(tmp_path: Path, open_catalog, merging: str,  # noqa: F811
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(materialize, "ROW_GROUP_ROWS", 2)
    table, base = logged_table(tmp_path / "wh")
    catalog = open_catalog(tmp_path / "wh")
    fg2 = file_uri(str(base_file(table.path, "fg2-0", base)))
    placements = by_group(layout_of(catalog, "t", "snapshot"))
    assert placements["fg2-0"].reason is None  # (with deletes: in place)

    folder = tmp_path / "ice"
    published = IcebergPublisher(catalog, str(folder), slice_merging=merging).publish("t", "snapshot")
    assert published.written_slices == 1 and delete_files(published) == []
    files = manifest_files(published)
    assert fg2 not in files and file_uri(str(base_file(table.path, "fg1-0", table.instants[0]))) in files
    assert iceberg_rows(published) == LOGGED_ROWS == shim_rows(catalog, "t")
    # written in row groups of ROW_GROUP_ROWS rows (the last fewer), Snappy-compressed
    (merged,) = [uri for uri in files if str(folder) in uri]
    metadata = pq.read_metadata(merged.removeprefix("file://"))
    sizes = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
    assert metadata.num_rows > 2 and sizes == [2] * (metadata.num_rows // 2) + [1] * (metadata.num_rows % 2)
    assert {metadata.row_group(0).column(i).compression for i in range(metadata.num_columns)} == {"SNAPPY"}
    # published again: the merged file is found, not written anew
    again = IcebergPublisher(catalog, str(folder), slice_merging=merging).publish("t", "snapshot")
    assert manifest_files(again) == files


@pytest.mark.parametrize("merging", ["merged", "deletes"])
def test_a_commit_writes_out_only_the_slice_it_changed(tmp_path: Path, open_catalog, merging: str) -> None:  # noqa: F811
    """The snapshots kept for time travel read the slice as it was: a later commit's log file,
    planned into their slices, does not rename (and rewrite) what was written for them."""
    table, base = logged_table(tmp_path / "wh")
    catalog = open_catalog(tmp_path / "wh")
    folder = tmp_path / "ice"
    publisher = IcebergPublisher(catalog, str(folder), slice_merging=merging)
    publisher.publish("t", "snapshot")
    before = {path.name for path in folder.rglob("*.parquet")}
    table.log([{"id": "r0", "ts": 3, "a": 30}], file_id="fg2-0", base_instant=base)
    published = publisher.publish("t", "snapshot")
    added = {path.name for path in folder.rglob("*.parquet")} - before
    # the new version of fg2-0 alone: merged, one file; in place, its log records and deletes
    assert len(added) == (1 if merging == "merged" else 2), added
    assert len(published.metadata["snapshots"]) >= 2
    assert iceberg_rows(published) == shim_rows(catalog, "t")


def test_duckdb_reads_merged_slices_through_the_catalog(tmp_path: Path) -> None:
    """DuckDB's iceberg extension reads every position delete file of a snapshot whatever it
    reads; with the slices merged it reads none."""
    table, _ = logged_table(tmp_path / "wh")
    table.log(deletes=["r0"], file_id="fg2-0", base_instant=table.instants[1])
    expected = [(r["id"], r["ts"], r["a"]) for r in LOGGED_ROWS if r["id"] != "r0"]
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:", iceberg_dir=str(tmp_path / "ice"),
                              iceberg_slices="merged")) as live:
        con = attach(live.url)
        assert con.execute("SELECT id, ts, a FROM shim.default.t ORDER BY id").fetchall() == expected
        assert con.execute("SELECT count(*) FROM shim.default.t_ro").fetchone() == (3,)
        written = [path.name for path in (tmp_path / "ice").rglob("*.parquet")]
        assert written and not [name for name in written if name.endswith(("-log.parquet", "-deletes.parquet"))]
