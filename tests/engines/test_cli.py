"""The `hudi-shim` command line, run in-process on a tiny table."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engines.cli import main
from tests.tablekit import EvolvingTable, rename

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("fare", pa.float64())])


@pytest.fixture
def table(tmp_path) -> EvolvingTable:
    t = EvolvingTable(tmp_path / "trips", SCHEMA)
    base = t.base([{"id": "a", "ts": 1, "city": "sf", "fare": 5.0}, {"id": "b", "ts": 1, "city": "ny", "fare": 20.0}])
    t.alter(rename("fare", "amount"))
    t.log([{"id": "a", "ts": 2, "city": "sf", "amount": 15.0}], base_instant=base)
    return t


def test_scan_json_applies_filter_and_columns(table, capsysbinary):
    assert main(["scan", str(table.path), "--columns", "id,amount", "--filter", "amount > 10", "--format", "json"]) == 0
    rows = sorted((json.loads(line) for line in capsysbinary.readouterr().out.splitlines()), key=lambda r: r["id"])
    assert rows == [{"id": "a", "amount": 15.0}, {"id": "b", "amount": 20.0}]


def test_scan_read_optimized_csv_and_table_formats(table, capsysbinary):
    assert main(["scan", str(table.path), "--mode", "read_optimized", "--columns", "id,amount", "--format", "csv"]) == 0
    lines = sorted(capsysbinary.readouterr().out.decode().splitlines())
    assert lines == ['"a",5', '"b",20', '"id","amount"']
    assert main(["scan", str(table.path), "--columns", "id", "--limit", "1"]) == 0
    out = capsysbinary.readouterr().out.decode()
    assert out.splitlines()[0].strip() == "id" and "(1 row)" in out


def test_scan_parquet_output_file(table, tmp_path):
    target = tmp_path / "out.parquet"
    assert main(["scan", str(table.path), "--format", "parquet", "--output", str(target)]) == 0
    assert pq.read_table(target).num_rows == 2


def test_inspect_prints_timeline_slices_and_schema_mapping(table, capsys):
    assert main(["inspect", str(table.path), "--schemas"]) == 0
    out = capsys.readouterr().out
    assert "hoodie.table.type = MERGE_ON_READ" in out
    assert "deltacommit" in out and "file slices (1)" in out
    assert "amount <- fare (double): rename" in out


def test_errors_exit_1_with_a_message(tmp_path, capsys):
    assert main(["scan", str(tmp_path / "missing")]) == 1
    assert "no Hudi table at" in capsys.readouterr().err


def test_sql_as_of_before_the_first_commit_names_the_table_and_why(table, caplog, capsys):
    warehouse = str(table.path.parent)
    with caplog.at_level("WARNING"):
        assert main(["sql", "--warehouse", warehouse, "--as-of", "2001-01-01", "SELECT count(*) FROM trips"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("hudi-shim: error: table trips is not queryable as of 2001-01-01: ")
    assert "does not exist" not in err and "sqlite_temp_master" not in err
    assert not [r for r in caplog.records if "not queryable" in r.getMessage()], "said once, as the error"
    assert main(["sql", "--warehouse", warehouse, "SELECT count(*) AS n FROM trips", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"n": 2}
