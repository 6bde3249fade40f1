"""Every real table written by Apache Hudi reads like hudi-rs reads it (none of them evolved)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import shim
from tests.conftest import shared_table_names

hudi = pytest.importorskip("hudi", reason="hudi-rs (pip install hudi) is a test dependency")

NAMES = shared_table_names() or ["(no shared tables)"]


def _hudi_rs_read(path: str, mode: str) -> pa.Table:
    options = hudi.HudiReadOptions()
    if mode == "read_optimized":
        options = options.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    return pa.Table.from_batches(hudi.HudiTable(path).read(options))


def _rows(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda row: repr(sorted(row.items(), key=lambda kv: kv[0])))


@pytest.mark.shared
@pytest.mark.parametrize("mode", ["snapshot", "read_optimized"])
@pytest.mark.parametrize("name", NAMES)
def test_real_table_rows_and_column_order_equal_hudi_rs(shared_tables, name, mode):
    path = str(shared_tables[name])
    theirs = _hudi_rs_read(path, mode)
    ours = shim.open_table(path).read(mode=mode)
    data_columns = [c for c in theirs.column_names if not c.startswith("_hoodie_")]
    assert ours.column_names == data_columns
    assert ours.num_rows > 0
    assert _rows(ours) == _rows(theirs.select(data_columns))


@pytest.mark.shared
@pytest.mark.parametrize("mode", ["snapshot", "read_optimized"])
@pytest.mark.parametrize("name", NAMES)
def test_real_table_strings_kept_as_dictionaries_hold_hudi_rs_values(shared_tables, name, mode):
    path = str(shared_tables[name])
    theirs = _hudi_rs_read(path, mode)
    ours = shim.open_table(path).scan(mode=mode, include_meta=True, dictionary_strings=True).read_all()
    assert ours.column_names == theirs.column_names
    kept = [f.name for f in ours.schema if pa.types.is_dictionary(f.type)]
    assert "_hoodie_record_key" not in kept  # distinct values (and a merge column)
    decoded = pa.table({n: ours.column(n).cast(theirs.schema.field(n).type) if n in kept else ours.column(n)
                        for n in ours.column_names})
    assert _rows(decoded) == _rows(theirs)


@pytest.mark.shared
@pytest.mark.parametrize("name", NAMES)
def test_real_table_meta_columns_equal_hudi_rs(shared_tables, name):
    path = str(shared_tables[name])
    theirs = _hudi_rs_read(path, "snapshot")
    ours = shim.open_table(path).read(include_meta=True)
    meta = ["_hoodie_commit_time", "_hoodie_record_key", "_hoodie_partition_path"]
    assert ours.column_names[:5] == theirs.column_names[:5]
    assert _rows(ours.select(meta)) == _rows(theirs.select(meta))


@pytest.mark.shared
def test_real_delete_block_removes_three_trips(shared_tables):
    table = shim.open_table(shared_tables["trips__mor__avro__v6_trips_8i3d"])
    snapshot = table.read(columns=["uuid"])
    read_optimized = table.read(mode="read_optimized", columns=["uuid"])
    deleted = set(read_optimized.column("uuid").to_pylist()) - set(snapshot.column("uuid").to_pylist())
    assert len(deleted) == 3


@pytest.mark.shared
def test_real_rollback_block_hides_rolled_back_rows(shared_tables):
    table = shim.open_table(shared_tables["sample__mor__parquet__v6_nonpartitioned_rollback"])
    commit_times = set(table.read(include_meta=True).column("_hoodie_commit_time").to_pylist())
    assert "20250126040826878" not in commit_times  # the rolled-back deltacommit
