"""Snapshot merges decode only the log columns a read needs: later reads of other columns from the
same table object must not take a remembered merge that lacks them."""

from __future__ import annotations

import pyarrow as pa

import shim
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string()), ("w", pa.int64())])


def _rows(table: pa.Table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in table.to_pylist())


def _table(tmp_path) -> TinyTable:
    table = TinyTable(tmp_path / "t", SCHEMA)
    base = table.base([{"id": f"k{i}", "ts": 5, "v": f"base{i}", "w": i} for i in range(20)])
    # k0..k4 updated once (newer), k5 updated with an older ordering value (loses to the base row),
    # k6 updated twice in one block (the greater ordering value wins), k7 deleted, n1 inserted.
    table.log([{"id": f"k{i}", "ts": 9, "v": f"log{i}", "w": -i} for i in range(5)]
              + [{"id": "k5", "ts": 1, "v": "old", "w": -5},
                 {"id": "k6", "ts": 8, "v": "eight", "w": -68}, {"id": "k6", "ts": 7, "v": "seven", "w": -67},
                 {"id": "n1", "ts": 1, "v": "new", "w": 100}], base_instant=base)
    table.log(deletes=["k7"], base_instant=base)
    return table


def _expected() -> list[tuple]:
    rows = [(f"k{i}", 5, f"base{i}", i) for i in range(20) if i not in (0, 1, 2, 3, 4, 6, 7)]
    rows += [(f"k{i}", 9, f"log{i}", -i) for i in range(5)]
    rows += [("k6", 8, "eight", -68), ("n1", 1, "new", 100)]
    return sorted(rows)


def test_a_read_of_other_columns_after_a_narrow_one_gives_the_merged_rows(tmp_path):
    opened = shim.open_table(_table(tmp_path).path)
    expected = _expected()
    assert _rows(opened.read(columns=["id", "v"])) == sorted((r[0], r[2]) for r in expected)
    assert _rows(opened.read(columns=["id", "w"])) == sorted((r[0], r[3]) for r in expected)
    assert _rows(opened.read(columns=["id", "ts", "v", "w"])) == expected
    assert _rows(opened.read(columns=["v"])) == sorted((r[2],) for r in expected)


def test_a_limited_read_then_a_read_of_other_columns_gives_the_merged_rows(tmp_path):
    opened = shim.open_table(_table(tmp_path).path)
    assert opened.read(columns=["id"], limit=3).num_rows == 3
    assert _rows(opened.read(columns=["id", "ts", "v", "w"])) == _expected()
