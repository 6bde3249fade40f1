"""Scans with a row limit: the first rows of the scan, read in small batches from as few files as
the limit needs."""

from __future__ import annotations

import pyarrow as pa
import pytest

import shim
import shim.read.merged_slice as merged_module
import shim.read.scan_stream as scan_module
import shim.read.slice_state as state_module
from shim.errors import InvalidArgumentError
from tests.spies import spy_on
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.int64())])


@pytest.fixture
def cow(tmp_path) -> TinyTable:
    table = TinyTable(tmp_path / "t", SCHEMA, mor=False)
    for group in range(3):
        table.base([{"id": f"k{group}-{i}", "ts": 1, "v": group * 10_000 + i} for i in range(3_000)],
                   file_id=f"fg{group}-0")
    return table


def rows(result: pa.Table) -> set[tuple]:
    return set(zip(*(result.column(n).to_pylist() for n in result.column_names), strict=True))


@pytest.mark.parametrize("limit", [1, 7, 1024, 2_999, 3_001, 9_000, 20_000])
def test_limited_reads_give_that_many_rows_of_the_table(cow, limit):
    table = shim.open_table(cow.path)
    everything = rows(table.read())
    limited = table.read(limit=limit)
    assert limited.num_rows == min(limit, 9_000) and limited.schema == table.read().schema
    assert rows(limited) <= everything and len(rows(limited)) == limited.num_rows


def test_a_small_limit_reads_one_file_in_small_batches(cow, monkeypatch):
    files = spy_on(monkeypatch, scan_module, "scan_parquet")
    table = shim.open_table(cow.path)
    reader = table.scan(limit=10)
    batches = list(reader)
    assert sum(b.num_rows for b in batches) == 10 and len(files) == 1


def test_limit_zero_reads_nothing(cow, monkeypatch):
    files = spy_on(monkeypatch, scan_module, "scan_parquet")
    result = shim.open_table(cow.path).read(columns=["id"], limit=0)
    assert result.num_rows == 0 and result.column_names == ["id"] and files == []


@pytest.mark.parametrize("limit", [-1, "3", 2.5, True])
def test_bad_limits_are_refused(cow, limit):
    with pytest.raises(InvalidArgumentError, match="limit must be a whole number"):
        shim.open_table(cow.path).read(limit=limit)


def test_limited_snapshot_rows_are_merged_rows(tmp_path, monkeypatch):
    table = TinyTable(tmp_path / "m", SCHEMA)
    base = table.base([{"id": f"a{i}", "ts": 1, "v": i} for i in range(5_000)])
    table.log([{"id": f"a{i}", "ts": 2, "v": -i} for i in range(0, 5_000, 2)] + [{"id": "new", "ts": 1, "v": 7}],
              base_instant=base)
    opened = shim.open_table(table.path)
    merged = rows(opened.read())
    for limit in (5, 2_600, 6_000):
        limited = opened.read(limit=limit)
        assert limited.num_rows == min(limit, 5_001) and rows(limited) <= merged
    bases = spy_on(monkeypatch, merged_module, "iter_parquet_in_order")
    # The merge is remembered: its 2,501 standing log records come first, so three rows need no
    # base file read; 2,600 need one pass over the base file, not a second merge.
    assert opened.read(limit=3).num_rows == 3 and len(bases) == 0
    assert opened.read(limit=2_600).num_rows == 2_600 and len(bases) == 1


def test_limited_reads_apply_the_filter(cow):
    table = shim.open_table(cow.path)
    limited = table.read(filter="v >= 10000 AND v < 10003", limit=2)
    assert limited.num_rows == 2 and set(limited.column("v").to_pylist()) <= {10000, 10001, 10002}
    assert table.read(filter="v >= 20000", limit=5_000).num_rows == 3_000


def test_previews_read_slices_without_logs_before_merging_any(tmp_path, monkeypatch):
    table = TinyTable(tmp_path / "m", SCHEMA)
    merged = table.base([{"id": f"a{i}", "ts": 1, "v": i} for i in range(100)], file_id="fg1-0")
    table.log([{"id": "a1", "ts": 2, "v": -1}], file_id="fg1-0", base_instant=merged)
    table.base([{"id": f"b{i}", "ts": 1, "v": 1000 + i} for i in range(100)], file_id="fg2-0")
    bases = spy_on(monkeypatch, merged_module, "iter_parquet_in_order")
    preview = shim.open_table(table.path).read(limit=50)
    assert preview.num_rows == 50 and min(preview.column("v").to_pylist()) >= 1000 and bases == []


def test_batches_grow_only_for_fixed_width_columns(cow):
    from shim.planning.planner import build_scan
    from shim.read.base_files import BATCH_SIZE
    from shim.scan_options import ScanOptions

    table = shim.open_table(cow.path)
    assert build_scan(table.snapshot(), ScanOptions(columns=["v"])).batch_size > BATCH_SIZE  # 8-byte values: about 8 MB a batch
    assert build_scan(table.snapshot(), ScanOptions(columns=["v", "id"])).batch_size == BATCH_SIZE  # text: sizes unknown
    assert build_scan(table.snapshot(), ScanOptions(columns=["v"], limit=10)).batch_size == 1024
    assert table.read(columns=["v"]).num_rows == 9_000


def test_limited_snapshot_reads_decode_a_slice_s_logs_once(tmp_path, monkeypatch):
    table = TinyTable(tmp_path / "m", SCHEMA)
    base = table.base([{"id": f"a{i}", "ts": 5, "v": i} for i in range(5_000)])
    # Updates on both sides of where a limited read stops, some losing to the base row (older ts),
    # deletes of late rows, and an insert.
    table.log([{"id": f"a{i}", "ts": 9, "v": -i} for i in range(0, 5_000, 7)]
              + [{"id": f"a{i}", "ts": 1, "v": -1} for i in range(3, 5_000, 11)]
              + [{"id": "new", "ts": 1, "v": 7}], base_instant=base)
    table.log(deletes=[f"a{i}" for i in range(4_000, 4_100)], base_instant=base)
    expected = rows(shim.open_table(table.path).read())
    assert ("a4050", 5, 4050) not in expected and ("a3", 5, 3) in expected and ("a7", 9, -7) in expected
    opened = shim.open_table(table.path)
    decoded = []
    original = state_module.read_slice_log
    monkeypatch.setattr(state_module, "read_slice_log", lambda *a: decoded.append(1) or original(*a))
    for _ in range(3):
        limited = opened.read(limit=10)
        assert limited.num_rows == 10 and rows(limited) <= expected and len(decoded) == 1
    assert rows(opened.read()) == expected and len(decoded) == 1  # the whole merge, from the same log side
    # The merge is remembered as row choices, not decoded rows: a later read decodes the log
    # records it returns again (and nothing of the base file's merge columns).
    assert rows(opened.read(limit=6_000)) == expected and len(decoded) == 2
