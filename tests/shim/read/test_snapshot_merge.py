"""Snapshot merges on tiny MOR tables: every merge rule, with exact rows."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet
import pytest

import shim
from shim.scan_options import ScanOptions
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])


def rows(table: TinyTable, **kwargs) -> list[tuple]:
    result = shim.open_table(table.path).read(**kwargs)
    return sorted(tuple(r.values()) for r in result.to_pylist())


@pytest.fixture
def event_time(tmp_path) -> TinyTable:
    return TinyTable(tmp_path / "t", SCHEMA)  # DefaultHoodieRecordPayload: event-time ordering


@pytest.fixture
def commit_time(tmp_path) -> TinyTable:
    return TinyTable(tmp_path / "t", SCHEMA,
                     payload="org.apache.hudi.common.model.OverwriteWithLatestAvroPayload")


def test_log_update_replaces_base_row_and_log_insert_is_added(event_time):
    base = event_time.base([{"id": "a", "ts": 1, "v": "a1"}, {"id": "b", "ts": 1, "v": "b1"}])
    event_time.log([{"id": "a", "ts": 2, "v": "a2"}, {"id": "c", "ts": 1, "v": "c1"}], base_instant=base)
    assert rows(event_time) == [("a", 2, "a2"), ("b", 1, "b1"), ("c", 1, "c1")]
    assert rows(event_time, mode="read_optimized") == [("a", 1, "a1"), ("b", 1, "b1")]


def test_event_time_lower_ordering_log_record_loses_to_base(event_time):
    base = event_time.base([{"id": "a", "ts": 5, "v": "base"}])
    event_time.log([{"id": "a", "ts": 3, "v": "late"}], base_instant=base)
    assert rows(event_time) == [("a", 5, "base")]


def test_event_time_tie_goes_to_the_newer_write(event_time):
    base = event_time.base([{"id": "a", "ts": 5, "v": "base"}])
    event_time.log([{"id": "a", "ts": 5, "v": "new"}], base_instant=base)
    assert rows(event_time) == [("a", 5, "new")]


def test_event_time_between_log_blocks_greatest_ordering_wins(event_time):
    base = event_time.base([{"id": "a", "ts": 5, "v": "base"}])
    event_time.log([{"id": "a", "ts": 9, "v": "nine"}], base_instant=base)
    event_time.log([{"id": "a", "ts": 7, "v": "seven"}], base_instant=base)
    assert rows(event_time) == [("a", 9, "nine")]


def test_commit_time_latest_write_wins_whatever_the_ordering(commit_time):
    base = commit_time.base([{"id": "a", "ts": 5, "v": "base"}])
    commit_time.log([{"id": "a", "ts": 9, "v": "nine"}], base_instant=base)
    commit_time.log([{"id": "a", "ts": 3, "v": "three"}], base_instant=base)
    assert rows(commit_time) == [("a", 3, "three")]


def test_delete_block_without_ordering_deletes_in_both_modes(event_time, tmp_path):
    for table in (event_time, TinyTable(tmp_path / "c", SCHEMA,
                                        payload="org.apache.hudi.common.model.OverwriteWithLatestAvroPayload")):
        base = table.base([{"id": "a", "ts": 5, "v": "x"}, {"id": "b", "ts": 5, "v": "y"}])
        table.log(deletes=["a"], base_instant=base)
        assert rows(table) == [("b", 5, "y")]


def test_event_time_delete_with_lower_ordering_loses_to_base(event_time):
    base = event_time.base([{"id": "a", "ts": 5, "v": "x"}, {"id": "b", "ts": 5, "v": "y"}])
    event_time.log(deletes=["a", "b"], delete_ordering=[pa.array([4, 5], pa.int64())], base_instant=base)
    assert rows(event_time) == [("a", 5, "x")]  # 4 < 5 keeps a; the tie deletes b


def test_commit_time_delete_then_reinsert_with_lower_ordering_brings_base_back(event_time):
    # Hudi 1.x: the re-insert absorbs the delete, then the base wins on its higher ordering value.
    base = event_time.base([{"id": "a", "ts": 5, "v": "base"}])
    event_time.log(deletes=["a"], base_instant=base)
    event_time.log([{"id": "a", "ts": 1, "v": "again"}, {"id": "n", "ts": 1, "v": "new"}], base_instant=base)
    assert rows(event_time) == [("a", 5, "base"), ("n", 1, "new")]


def test_is_deleted_column_marks_deletes(tmp_path):
    schema = SCHEMA.append(pa.field("_hoodie_is_deleted", pa.bool_()))
    table = TinyTable(tmp_path / "t", schema)
    base = table.base([{"id": "a", "ts": 1, "v": "x", "_hoodie_is_deleted": False},
                       {"id": "b", "ts": 1, "v": "y", "_hoodie_is_deleted": False}])
    table.log([{"id": "a", "ts": 2, "v": "x", "_hoodie_is_deleted": True}], base_instant=base)
    assert rows(table, columns=["id"]) == [("b",)]


def test_uncommitted_log_block_is_invisible(event_time):
    base = event_time.base([{"id": "a", "ts": 1, "v": "x"}])
    event_time.log([{"id": "a", "ts": 2, "v": "inflight"}], base_instant=base, complete=False)
    assert rows(event_time) == [("a", 1, "x")]


def test_time_travel_reads_each_instant(event_time):
    t1 = event_time.base([{"id": "a", "ts": 1, "v": "v1"}])
    t2 = event_time.log([{"id": "a", "ts": 2, "v": "v2"}], base_instant=t1)
    t3 = event_time.log([{"id": "b", "ts": 1, "v": "b"}], base_instant=t1)
    assert rows(event_time, as_of=t1) == [("a", 1, "v1")]
    assert rows(event_time, as_of=t2) == [("a", 2, "v2")]
    assert rows(event_time, as_of=t3) == [("a", 2, "v2"), ("b", 1, "b")]


def test_incremental_returns_records_changed_in_range(event_time):
    t1 = event_time.base([{"id": "a", "ts": 1, "v": "v1"}, {"id": "b", "ts": 1, "v": "b1"}])
    t2 = event_time.log([{"id": "a", "ts": 2, "v": "v2"}], base_instant=t1)
    t3 = event_time.log([{"id": "c", "ts": 1, "v": "c1"}], base_instant=t1)
    table = shim.open_table(event_time.path)
    assert sorted(table.incremental(t1).column("id").to_pylist()) == ["a", "c"]
    assert table.incremental(t1, t2).column("id").to_pylist() == ["a"]
    assert table.incremental(t3).num_rows == 0


def test_filter_and_projection_apply_after_the_merge(event_time):
    base = event_time.base([{"id": "a", "ts": 1, "v": "keep"}, {"id": "b", "ts": 1, "v": "keep"}])
    event_time.log([{"id": "a", "ts": 2, "v": "drop"}], base_instant=base)
    result = shim.open_table(event_time.path).read(columns=["id"], filter="v = 'keep'")
    assert result.column_names == ["id"]
    assert result.column("id").to_pylist() == ["b"]


def test_arrow_expression_filter_prunes_partitions_and_filters_after_merge(tmp_path):
    import pyarrow.compute as pc

    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("v", pa.int64())])
    table = TinyTable(tmp_path / "t", schema, partition=["city"])
    sf = table.base([{"id": "a", "ts": 1, "city": "sf", "v": 1}, {"id": "b", "ts": 1, "city": "sf", "v": 5}],
                    file_id="sf-0", partition="city=sf")
    table.base([{"id": "c", "ts": 1, "city": "ny", "v": 9}], file_id="ny-0", partition="city=ny")
    table.log([{"id": "a", "ts": 2, "city": "sf", "v": 7}], file_id="sf-0", partition="city=sf", base_instant=sf)
    t = shim.open_table(table.path)
    expression = (pc.field("city") == "sf") & (pc.field("v") > 4)
    assert sorted(t.read(filter=expression, columns=["id", "v"]).to_pylist(), key=lambda r: r["id"]) == [
        {"id": "a", "v": 7}, {"id": "b", "v": 5}]
    from shim.planning.planner import build_scan

    assert [s.partition_path for s in build_scan(t.snapshot(), ScanOptions(filter=expression)).slices] == ["city=sf"]
    with pytest.raises(shim.InvalidFilterError):
        t.read(filter=pc.field("nope") > 1)


def test_dropped_partition_columns_are_recovered_from_the_path(tmp_path):
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("year", pa.int32())])
    table = TinyTable(tmp_path / "t", schema, partition=["year"],
                      extra={"hoodie.datasource.write.drop.partition.columns": "true"})
    base = table.base([{"id": "a", "ts": 1, "year": 2024}], file_id="y-0", partition="year=2024")
    table.log([{"id": "b", "ts": 1, "year": 2024}], file_id="y-0", partition="year=2024", base_instant=base)
    files = list((table.path / "year=2024").glob("*.parquet"))
    assert "year" not in pa.parquet.read_schema(files[0]).names
    # As Hudi writes such tables, the commits' schema leaves `year` out too: it comes back as text.
    result = shim.open_table(table.path).read(filter="year = '2024'")
    assert sorted(result.to_pylist(), key=lambda r: r["id"]) == [
        {"id": "a", "ts": 1, "year": "2024"}, {"id": "b", "ts": 1, "year": "2024"}]


def test_partition_terms_guaranteed_by_the_path_are_not_reread(tmp_path):
    from shim.planning.planner import build_scan

    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("v", pa.int64())])
    table = TinyTable(tmp_path / "t", schema, partition=["city"], mor=False)
    table.base([{"id": "a", "ts": 1, "city": "sf", "v": 1}], file_id="sf-0", partition="city=sf")
    table.base([{"id": "b", "ts": 1, "city": "ny", "v": 2}], file_id="ny-0", partition="city=ny")
    t = shim.open_table(table.path)
    scan = build_scan(t.snapshot(), ScanOptions(columns=["v"], filter="city = 'sf' AND v > 0"))
    assert str(scan.row_filter.expr) == "v > 0"
    assert scan.read_schema.names == ["v"]
    assert t.read(columns=["id", "city"], filter="city = 'sf'").to_pylist() == [{"id": "a", "city": "sf"}]


def test_partition_column_alone_reads_from_paths(tmp_path):
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string())])
    table = TinyTable(tmp_path / "t", schema, partition=["city"])
    base = table.base([{"id": "a", "ts": 1, "city": "sf"}], file_id="sf-0", partition="city=sf")
    table.log([{"id": "b", "ts": 1, "city": "sf"}], file_id="sf-0", partition="city=sf", base_instant=base)
    t = shim.open_table(table.path)
    assert t.read(columns=["city"]).to_pylist() == [{"city": "sf"}, {"city": "sf"}]
    assert t.read(mode="read_optimized", columns=["city"]).to_pylist() == [{"city": "sf"}]
