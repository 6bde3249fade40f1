"""Tables written by shim.write read the same in hudi-rs and in hudi-shim (no evolution)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import shim
from tests.tablekit import TinyTable

hudi = pytest.importorskip("hudi", reason="hudi-rs (pip install hudi) is a test dependency")

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("fare", pa.float64())])


def _sorted(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: r["id"])


def test_partitioned_mor_with_updates_inserts_and_deletes_reads_like_hudi_rs(tmp_path):
    table = TinyTable(tmp_path / "trips", SCHEMA, partition=["city"])
    sf = table.base([{"id": f"s{i}", "ts": 1, "city": "sf", "fare": float(i)} for i in range(5)],
                    file_id="fg-sf-0", partition="city=sf")
    ny = table.base([{"id": f"n{i}", "ts": 1, "city": "ny", "fare": float(i)} for i in range(5)],
                    file_id="fg-ny-0", partition="city=ny")
    table.log([{"id": "s1", "ts": 2, "city": "sf", "fare": 99.0}, {"id": "s9", "ts": 2, "city": "sf", "fare": 9.0}],
              file_id="fg-sf-0", partition="city=sf", base_instant=sf)
    table.log(deletes=["n2", "n3"], file_id="fg-ny-0", partition="city=ny", base_instant=ny)
    theirs = pa.Table.from_batches(hudi.HudiTable(str(table.path)).read())
    ours = shim.open_table(table.path).read()
    assert ours.num_rows == 9
    assert _sorted(ours) == _sorted(theirs.select(ours.column_names))
    by_id = {r["id"]: r for r in ours.to_pylist()}
    assert by_id["s1"]["fare"] == 99.0 and "n2" not in by_id and by_id["s9"]["fare"] == 9.0
