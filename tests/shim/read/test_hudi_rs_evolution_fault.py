"""The fault hudi-shim exists to fix, documented against hudi-rs 0.5 (which reads by name).

hudi-rs is right on tables that never evolved (see test_shared_tables.py); on an evolved table it
returns the dropped column's old values under the re-added name and nulls for a renamed column.
These tests pin both its wrong rows and our right ones.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import shim
from tests.tablekit import EvolvingTable, add, drop, rename

hudi = pytest.importorskip("hudi", reason="hudi-rs (pip install hudi) is a test dependency")

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("f1", pa.string()), ("f2", pa.int32())])


@pytest.fixture
def evolved(tmp_path) -> EvolvingTable:
    table = EvolvingTable(tmp_path / "t", SCHEMA, mor=False)
    table.base([{"id": "old", "ts": 1, "f1": "before-rename", "f2": 7}])
    table.alter(rename("f1", "name"))
    table.alter(drop("f2"))
    table.alter(add("f2", "string"))
    table.base([{"id": "new", "ts": 2, "name": "after-rename", "f2": "fresh"}], file_id="fg2-0")
    return table


def _by_id(table: pa.Table) -> dict[str, dict]:
    return {row["id"]: row for row in table.to_pylist()}


def test_hudi_rs_reads_the_evolved_table_wrong(evolved):
    theirs = _by_id(pa.Table.from_batches(hudi.HudiTable(str(evolved.path)).read()))
    # the renamed column reads null in the old file ...
    assert theirs["old"]["name"] is None
    # ... and the dropped int f2 comes back, as text, under the re-added string f2
    assert theirs["old"]["f2"] == "7"


def test_hudi_shim_reads_the_evolved_table_right(evolved):
    ours = _by_id(shim.open_table(evolved.path).read())
    assert ours["old"] == {"id": "old", "ts": 1, "name": "before-rename", "f2": None}
    assert ours["new"] == {"id": "new", "ts": 2, "name": "after-rename", "f2": "fresh"}
