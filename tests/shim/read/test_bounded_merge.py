"""Snapshot merges of slices read side by side: base files streamed in bounded batches that cross
row-group boundaries, and merges remembered as row choices (a row mask and log positions)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import shim
import shim.read.merged_slice as merged_module
import shim.read.slice_state as state_module
from shim.write.parquet_settings import ParquetSettings
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.int64()), ("note", pa.string())])
ROWS = 1_000
GROUP_ROWS = 333  # row groups of 333 rows, read in batches of 100: batches cross their boundaries
EDGES = [0, 99, 100, 101, 332, 333, 334, 665, 666, 667, 998, 999]


def _key(i: int) -> str:
    return f"k{i:04d}"


@pytest.fixture
def table(tmp_path, monkeypatch) -> TinyTable:
    monkeypatch.setattr(ParquetSettings, "row_group_rows", lambda self, data: GROUP_ROWS)
    made = TinyTable(tmp_path / "t", SCHEMA)
    for group in ("fg1-0", "fg2-0"):
        base = made.base([{"id": f"{group}-{_key(i)}", "ts": 5, "v": i, "note": f"base {i}"} for i in range(ROWS)],
                         file_id=group)
        # Newer updates at the batch and row-group edges, older ones (which lose to the base row)
        # next to them, deletes across an edge, and an insert.
        made.log([{"id": f"{group}-{_key(i)}", "ts": 9, "v": -i, "note": f"log {i}"} for i in EDGES]
                 + [{"id": f"{group}-{_key(i + 1)}", "ts": 1, "v": -1, "note": "old"} for i in EDGES[:-1]]
                 + [{"id": f"{group}-new", "ts": 1, "v": 7, "note": "new"}], file_id=group, base_instant=base)
        made.log(deletes=[f"{group}-{_key(i)}" for i in range(330, 337)], file_id=group, base_instant=base)
    return made


def _expected() -> set[tuple]:
    out = set()
    for group in ("fg1-0", "fg2-0"):
        for i in range(ROWS):
            if 330 <= i < 337:
                continue
            if i in EDGES:
                out.add((f"{group}-{_key(i)}", 9, -i, f"log {i}"))
            else:
                out.add((f"{group}-{_key(i)}", 5, i, f"base {i}"))
        out.add((f"{group}-new", 1, 7, "new"))
    return out


def _rows(result: pa.Table, names: list[str]) -> set[tuple]:
    return set(zip(*(result.column(n).to_pylist() for n in names), strict=True))


@pytest.fixture
def bounded(monkeypatch) -> list[int]:
    """Merges read bounded (two slices are as many as the workers) in batches of 100 rows; the
    sizes of the base batches read are recorded."""
    monkeypatch.setattr(merged_module, "default_workers", lambda: 2)
    monkeypatch.setattr(merged_module, "BOUNDED_BATCH_SIZE", 100)
    monkeypatch.setattr(merged_module, "MERGE_COLUMNS_BATCH_SIZE", 150)
    sizes: list[int] = []
    original = merged_module.iter_parquet_in_order

    def spy(*args, **kwargs):
        assert kwargs.get("bounded"), "a merge of two slices reads bounded"
        for rows, batch in original(*args, **kwargs):
            sizes.append(rows)
            yield rows, batch

    monkeypatch.setattr(merged_module, "iter_parquet_in_order", spy)
    return sizes


def test_bounded_merges_cross_row_group_boundaries_losing_no_row(table, bounded):
    names = ["id", "ts", "v", "note"]
    opened = shim.open_table(table.path)
    assert {pq.read_metadata(p).num_row_groups for p in table.path.glob("*.parquet")} == {4}
    assert _rows(opened.read(columns=names), names) == _expected()
    # The merge columns in batches of 150 rows, then the query's in batches of 100.
    assert bounded and set(bounded) == {100, 150} and sum(bounded) == 2 * 2 * ROWS
    batches = list(opened.scan(columns=names))  # the merges remembered: row masks applied in batches of 100
    assert _rows(pa.Table.from_batches(batches), names) == _expected()


def test_a_lone_merge_is_not_bounded(table, monkeypatch):
    monkeypatch.setattr(merged_module, "default_workers", lambda: 3)
    original = merged_module.iter_parquet_in_order
    seen = []
    monkeypatch.setattr(merged_module, "iter_parquet_in_order",
                        lambda *a, **k: seen.append(k.get("bounded")) or original(*a, **k))
    names = ["id", "ts", "v", "note"]
    assert _rows(shim.open_table(table.path).read(columns=names), names) == _expected()
    assert seen and not any(seen)


def test_remembered_choices_serve_other_columns_decoding_the_standing_log_records(table, bounded, monkeypatch):
    opened = shim.open_table(table.path)
    assert _rows(opened.read(columns=["id", "v"]), ["id", "v"]) == {(r[0], r[2]) for r in _expected()}
    remembered = [v for v in opened.snapshot().slice_cache._items.values() if isinstance(v[0], state_module.SliceChoices)]
    assert len(remembered) == 2 and all(len(v[0].log_positions) for v in remembered)
    assert all(v[1] < 4_096 for v in remembered)  # a row mask and positions, no decoded rows
    decoded = []
    original = state_module.read_slice_log
    monkeypatch.setattr(state_module, "read_slice_log", lambda *a: decoded.append(1) or original(*a))
    names = ["id", "ts", "v", "note"]
    assert _rows(opened.read(columns=names), names) == _expected()
    assert len(decoded) == 2  # each slice's standing log records, decoded with the columns asked for


def test_remembered_choices_of_logs_now_unreadable_merge_again(table, bounded):
    opened = shim.open_table(table.path)
    names = ["id", "ts", "v", "note"]
    assert _rows(opened.read(columns=names), names) == _expected()
    key = next(k for k, v in opened.snapshot().slice_cache._items.items() if isinstance(v[0], state_module.SliceChoices))
    choices = opened.snapshot().slice_cache.get(key)
    # Positions beyond the log records the slice decodes to: the merge is done again.
    opened.snapshot().slice_cache.put(key, state_module.SliceChoices(choices.base_rows, choices.base_keep,
                                                          choices.log_positions + 10_000), 1)
    assert _rows(opened.read(columns=names), names) == _expected()
