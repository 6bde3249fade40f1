"""Column metrics in published manifests: counts and bounds from the Parquet footers, only where
they are certain, and readers skipping the files a filter rules out by them."""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.table import StaticTable

from catalog.iceberg.metrics import file_metrics, single_value
from catalog.iceberg.publish import IcebergPublisher
from catalog.service import Catalog
from catalog.settings import Settings
from tests.catalog.icebergrust import iceberg_rust_query
from tests.tablekit import EvolvingTable, rename, retype

TYPES = {"s": pa.string(), "i": pa.int32(), "l": pa.int64(), "d": pa.date32(), "b": pa.bool_(), "f": pa.float64()}


def _metrics(tmp_path, table: pa.Table, columns: dict[str, tuple[int, pa.DataType]], **write):
    path = str(tmp_path / "f.parquet")
    pq.write_table(table, path, **write)
    parquet = pq.ParquetFile(path)
    return file_metrics(parquet.metadata, parquet.schema_arrow, columns)


def test_bounds_and_counts_span_every_row_group(tmp_path):
    table = pa.table({"s": ["m", None, "b", "z"], "i": pa.array([5, -3, None, 9], pa.int32()), "l": [2**40, 1, 2, 3],
                      "d": [dt.date(2024, 1, 2), dt.date(1969, 12, 31), None, None],
                      "b": [False, False, None, False], "f": [1.5, 0.5, 2.5, None]})
    columns = {name: (number, TYPES[name]) for number, name in enumerate(TYPES, start=1)}
    metrics = _metrics(tmp_path, table, columns, row_group_size=2)
    assert metrics.value_counts == dict.fromkeys(range(1, 7), 4)
    assert metrics.null_counts == {1: 1, 2: 1, 3: 0, 4: 2, 5: 1, 6: 1}
    assert metrics.lower == {1: b"b", 2: struct.pack("<i", -3), 3: struct.pack("<q", 1), 4: struct.pack("<i", -1),
                             5: b"\x00"}
    assert metrics.upper == {1: b"z", 2: struct.pack("<i", 9), 3: struct.pack("<q", 2**40),
                             4: struct.pack("<i", 19724), 5: b"\x00"}  # no bounds for floating point


def test_decimal_time_timestamp_and_binary_bounds_take_icebergs_forms(tmp_path):
    table = pa.table({
        "dec": pa.array([Decimal("-1.28"), Decimal("3.50"), None], pa.decimal128(5, 2)),
        "big": pa.array([Decimal("-12345678901234567890.123"), Decimal("1.000"), None], pa.decimal128(38, 3)),
        "ts": pa.array([dt.datetime(2024, 1, 1), dt.datetime(1969, 12, 31, 23, 59, 59, 999999), None],
                       pa.timestamp("us")),
        "tz": pa.array([dt.datetime(2024, 1, 1), dt.datetime(2023, 1, 1), None], pa.timestamp("ms", tz="UTC")),
        "ns": pa.array([1, 2, 3], pa.timestamp("ns")),
        "tm": pa.array([dt.time(1, 2, 3), dt.time(0, 0, 1), None], pa.time64("us")),
        "bin": pa.array([b"\xff\x00", b"\x01", b""], pa.binary()),
        "nan": pa.array([float("nan"), 1.0, 2.0], pa.float64()),
    })
    columns = {name: (number, table.schema.field(name).type) for number, name in enumerate(table.column_names, 1)}
    for integers in (False, True):  # decimals stored as fixed-length bytes, then as INT32 / INT64
        metrics = _metrics(tmp_path, table, columns, store_decimal_as_integer=integers)
        unscaled = -12345678901234567890123
        assert metrics.lower == {
            1: b"\x80", 2: unscaled.to_bytes(10, "big", signed=True), 3: struct.pack("<q", -1),
            4: struct.pack("<q", 1672531200 * 10**6), 6: struct.pack("<q", 10**6), 7: b""}, integers
        assert metrics.upper == {
            1: b"\x01\x5e", 2: b"\x03\xe8", 3: struct.pack("<q", 1704067200 * 10**6),
            4: struct.pack("<q", 1704067200 * 10**6), 6: struct.pack("<q", 3723 * 10**6), 7: b"\xff\x00"}, integers
    # Nanosecond timestamps (Iceberg's are microseconds) and floating point (NaNs uncounted): none.
    assert single_value(0, "decimal(9, 2)") == b"\x00" and single_value(-129, "decimal(9, 2)") == b"\xff\x7f"


def test_nothing_uncertain_is_given(tmp_path):
    table = pa.table({"s": ["a", "b"], "i": pa.array([1, 2], pa.int32()), "x": [{"y": 1}, {"y": 2}]})
    # Statistics not written (counts of rows only), a column whose stored type differs from the
    # table's (int read as long), a nested column, a column the file does not hold.
    no_stats = _metrics(tmp_path, table, {"s": (1, pa.string())}, write_statistics=False)
    assert no_stats.lower == {} and no_stats.null_counts == {} and no_stats.value_counts == {1: 2}
    widened = _metrics(tmp_path, table, {"i": (2, pa.int64()), "x": (3, pa.struct([("y", pa.int64())])),
                                         "gone": (4, pa.string())})
    assert widened.value_counts == {} and widened.lower == {}


def test_an_all_null_row_group_does_not_hide_the_others_bounds(tmp_path):
    table = pa.table({"i": pa.array([None, None, 4, 7], pa.int32())})
    metrics = _metrics(tmp_path, table, {"i": (1, pa.int32())}, row_group_size=2)
    assert metrics.lower == {1: single_value(4, "int")} and metrics.upper == {1: single_value(7, "int")}
    assert metrics.null_counts == {1: 2}


def test_readers_skip_the_files_a_filter_rules_out_by_their_bounds(tmp_path):
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("n", pa.int32()), ("note", pa.string())])
    table = EvolvingTable(tmp_path / "wh" / "t", schema, mor=False)
    table.base([{"id": f"a{i}", "ts": 1, "n": i, "note": None} for i in range(100)], file_id="fg1-0")
    table.base([{"id": f"b{i}", "ts": 1, "n": 1000 + i, "note": "x"} for i in range(100)], file_id="fg2-0")
    table.alter(rename("n", "amount"))
    table.alter(retype("amount", "long"))  # the files keep int: no bounds for amount any more
    table.base([{"id": f"c{i}", "ts": 2, "amount": 5000 + i, "note": "y"} for i in range(10)], file_id="fg3-0")
    catalog = Catalog(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:"))
    try:
        published = IcebergPublisher(catalog, str(tmp_path / "ice")).publish("t", "snapshot")
    finally:
        catalog.close()
    loaded = StaticTable.from_metadata(published.metadata_location)

    def planned(row_filter: str) -> set[str]:
        return {task.file.file_path.rsplit("/", 1)[1][:5] for task in loaded.scan(row_filter=row_filter).plan_files()}

    assert planned("id >= 'b'") == {"fg2-0", "fg3-0"}
    assert planned("note IS NULL") == {"fg1-0"}  # the others hold no null note
    assert planned("amount > 4000") == {"fg1-0", "fg2-0", "fg3-0"}  # int files read as long: no bounds
    assert planned("ts = 2") == {"fg3-0"}
    rows = iceberg_rust_query(published.metadata_location, "SELECT id FROM t WHERE id >= 'b9' ORDER BY id")
    assert rows.column("id").to_pylist() == ["b9", "b90", "b91", "b92", "b93", "b94", "b95", "b96", "b97", "b98",
                                             "b99", "c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"]


def test_readers_skip_files_by_timestamp_and_decimal_bounds_and_agree_on_the_rows(tmp_path):
    from engines.iceberg import attach
    from tests.catalog.servekit import live_server

    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("at", pa.timestamp("us", tz="UTC")),
                        ("price", pa.decimal128(10, 2))])
    table = EvolvingTable(tmp_path / "wh" / "t", schema, mor=False)
    start = {"fg1-0": dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
             "fg2-0": dt.datetime(2024, 6, 1, tzinfo=dt.UTC)}
    for number, (file_id, first) in enumerate(start.items()):
        table.base([{"id": f"{file_id[:3]}-{i}", "ts": 1, "at": first + dt.timedelta(hours=i),
                     "price": Decimal(f"{number * 1000 + i}.25")} for i in range(50)], file_id=file_id)
    settings = Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:", iceberg_dir=str(tmp_path / "ice"))
    with live_server(settings) as live:
        published = IcebergPublisher(live.catalog, str(tmp_path / "ice")).publish("t", "snapshot")
        loaded = StaticTable.from_metadata(published.metadata_location)
        duck = attach(live.url)
        for text, iceberg_text, sql, files in (
            ("at >= '2024-06-01 00:30:00'", "at >= '2024-06-01T00:30:00+00:00'",
             "\"at\" >= TIMESTAMPTZ '2024-06-01 00:30:00+00'", {"fg2-0"}),
            ("at < '2024-01-01 03:00:00'", "at < '2024-01-01T03:00:00+00:00'",
             "\"at\" < TIMESTAMPTZ '2024-01-01 03:00:00+00'", {"fg1-0"}),
            ("price <= 3.25", "price <= 3.25", "price <= 3.25", {"fg1-0"}),
            ("price > 1048.25", "price > 1048.25", "price > 1048.25", {"fg2-0"}),
        ):
            scan = loaded.scan(row_filter=iceberg_text)
            assert {task.file.file_path.rsplit("/", 1)[1][:5] for task in scan.plan_files()} == files, text
            want = sorted(live.catalog.table("t").read(filter=text).column("id").to_pylist())
            assert want, text
            assert sorted(scan.to_arrow().column("id").to_pylist()) == want, text
            by_rust = iceberg_rust_query(published.metadata_location, f"SELECT id FROM t WHERE {sql}")
            assert sorted(by_rust.column("id").to_pylist()) == want, text
            by_duck = duck.execute(f"SELECT id FROM shim.default.t WHERE {sql}").fetchall()
            assert sorted(row[0] for row in by_duck) == want, text
