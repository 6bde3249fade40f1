"""Tables written with `hoodie.datasource.write.drop.partition.columns=true` keep partition columns
out of their files and of the commits' schema; readers add them back from the folder names, as
strings at the end (as Hudi's TableSchemaResolver does)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

import shim
from shim.planning.planner import build_scan
from shim.scan_options import ScanOptions
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("year", pa.int32()),
                    ("fare", pa.float64())])
DROP = {"hoodie.datasource.write.drop.partition.columns": "true"}


def test_partition_columns_come_back_from_the_folders(tmp_path):
    table = TinyTable(tmp_path / "t", SCHEMA, partition=["city", "year"], extra=DROP)
    base = table.base([{"id": "a", "ts": 1, "city": "sf", "year": 2024, "fare": 1.0},
                       {"id": "b", "ts": 1, "city": "sf", "year": 2024, "fare": 2.0}],
                      file_id="sf-0", partition="city=sf/year=2024")
    table.base([{"id": "c", "ts": 1, "city": "ny", "year": 2023, "fare": 3.0}], file_id="ny-0",
               partition="city=ny/year=2023")
    table.log([{"id": "a", "ts": 2, "city": "sf", "year": 2024, "fare": 9.0}], file_id="sf-0",
              partition="city=sf/year=2024", base_instant=base)
    stored = pq.read_schema(next((tmp_path / "t" / "city=sf" / "year=2024").glob("*.parquet"))).names
    assert "city" not in stored and "year" not in stored  # the premise: the files leave them out

    read = shim.open_table(str(tmp_path / "t"))
    assert read.schema().names == ["id", "ts", "fare", "city", "year"]
    assert read.schema().field("year").type == pa.string()
    assert sorted(read.read().to_pylist(), key=lambda r: r["id"]) == [
        {"id": "a", "ts": 2, "fare": 9.0, "city": "sf", "year": "2024"},
        {"id": "b", "ts": 1, "fare": 2.0, "city": "sf", "year": "2024"},
        {"id": "c", "ts": 1, "fare": 3.0, "city": "ny", "year": "2023"},
    ]
    assert read.read(filter="year = '2023'", columns=["id", "city"]).to_pylist() == [{"id": "c", "city": "ny"}]
    assert [s.partition_path for s in build_scan(read.snapshot(), ScanOptions(filter="city = 'ny'")).slices] == ["city=ny/year=2023"]
    ro = read.read(mode="read_optimized", columns=["id", "city"]).to_pylist()
    assert sorted(ro, key=lambda r: r["id"]) == [{"id": "a", "city": "sf"}, {"id": "b", "city": "sf"},
                                                  {"id": "c", "city": "ny"}]
