"""Scans planned from the metadata table of a real table Hudi wrote (`trips__mor__avro__v8_trips_8i3u1d`:
three partitions, files, column_stats, partition_stats, record_index and a secondary index on
`rider`): the same rows as a storage listing, files pruned by the stats, key lookups located by the
indexes, and the fallbacks to storage with their reasons."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import shim
from engines.inspect import describe_table
from shim.errors import InvalidArgumentError
from shim.read import scan_stream as scan_module
from tests.spies import spy_on

TRIPS = "trips__mor__avro__v8_trips_8i3u1d"
SF, CHENNAI, SAO_PAULO = "city=san_francisco", "city=chennai", "city=sao_paulo"
FIRST_WRITE, THIRD_WRITE = "20251220210108078", "20251220210125441"


@pytest.fixture(scope="module")
def trips(shared_tables: dict[str, Path]) -> Path:
    return shared_tables[TRIPS]


@pytest.fixture
def trips_copy(trips: Path, tmp_path: Path) -> Path:
    target = tmp_path / "trips"
    shutil.copytree(trips, target)
    return target


@pytest.fixture
def files_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Base files read without merging."""
    return spy_on(monkeypatch, scan_module, "scan_parquet")


def _rows(table: shim.Table, **options: object) -> pa.Table:
    return table.read(include_meta=True, **options).sort_by("_hoodie_record_key")  # type: ignore[arg-type]


def test_every_read_lists_from_the_metadata_table_and_returns_the_storage_listings_rows(trips: Path) -> None:
    table, plain = shim.open_table(trips), shim.open_table(trips, metadata=False)
    writes = [w.requested_time for w in table.snapshot().active_timeline.completed_writes()]
    assert len(writes) == 7
    for as_of in [None, *writes]:
        for mode in ("snapshot", "read_optimized"):
            scan = table.plan(shim.ScanOptions(mode=mode, as_of=as_of))
            assert scan.report is not None and scan.report.listing.metadata, (mode, as_of)
            assert scan.slices == plain.plan(shim.ScanOptions(mode=mode, as_of=as_of)).slices
            assert _rows(table, mode=mode, as_of=as_of) == _rows(plain, mode=mode, as_of=as_of)
    assert _rows(table).num_rows == 6


@pytest.mark.parametrize(("where", "kept", "skipped_partitions", "rows"), [
    ("fare > 50", [SF], 2, 1),                          # only san_francisco's fares reach 93.50
    ("fare < 20", [SF, SAO_PAULO], 1, 2),               # chennai's one fare is 41.06
    ("fare > 1000", [], 3, 0),
    ("driver = 'driver-S'", [CHENNAI], 2, 1),
    ("fare > 50 OR city = 'chennai'", [CHENNAI, SF], 1, 2),
    ("NOT (fare <= 50)", [CHENNAI, SF, SAO_PAULO], 0, 1),  # a NaN (stats leave it out) is not <= 50
    ("fare IS NULL", [], 3, 0),                         # no partition counts a null fare
])
def test_partition_stats_skip_partitions_a_filter_rules_out(trips: Path, files_read: list[str], where: str,
                                                            kept: list[str], skipped_partitions: int, rows: int) -> None:
    table = shim.open_table(trips)
    scan = table.plan(shim.ScanOptions(filter=where))
    assert sorted(s.partition_path for s in scan.slices) == kept
    assert scan.report is not None and scan.report.partitions_skipped == skipped_partitions
    got = scan.reader().read_all()
    assert {Path(f).parent.name for f in files_read} <= set(kept)  # files of other partitions are not opened
    expected = shim.open_table(trips, metadata=False).read(filter=where)
    assert got.num_rows == rows and got.sort_by("uuid") == expected.sort_by("uuid")


def test_column_stats_skip_slices_of_an_earlier_instant(trips: Path, files_read: list[str]) -> None:
    """Partition stats describe the latest files only: a read as of an earlier write prunes with
    the stats of the files it reads (their base and log files, one range per column)."""
    table = shim.open_table(trips)
    scan = table.plan(shim.ScanOptions(filter="fare > 90", as_of=THIRD_WRITE))
    assert scan.report is not None and scan.report.partitions_skipped == 0
    assert scan.report.slices_skipped == 2 and scan.report.indexes == ("column_stats",)
    assert [s.partition_path for s in scan.slices] == [SF]
    got = scan.reader().read_all()
    assert got.column("fare").to_pylist() == [93.5]
    assert got == shim.open_table(trips, metadata=False).read(filter="fare > 90", as_of=THIRD_WRITE)


def test_a_record_key_lookup_opens_the_file_group_the_record_index_names(trips: Path) -> None:
    table = shim.open_table(trips)
    everything = table.read()
    for uuid, city in zip(everything.column("uuid").to_pylist(), everything.column("city").to_pylist(), strict=True):
        scan = table.plan(shim.ScanOptions(filter=f"uuid = '{uuid}'"))
        assert scan.report is not None and "record_index" in scan.report.indexes
        assert [s.partition_path for s in scan.slices] == [f"city={city}"]
        assert scan.reader().read_all().column("uuid").to_pylist() == [uuid]
    missing = table.plan(shim.ScanOptions(filter="uuid IN ('no-such-key', 'nor-this')"))
    assert missing.slices == [] and missing.reader().read_all().num_rows == 0


def test_a_lookup_by_a_column_with_a_secondary_index_opens_the_groups_of_its_records(trips: Path) -> None:
    table = shim.open_table(trips)
    scan = table.plan(shim.ScanOptions(filter="rider IN ('rider-G', 'rider-I')"))
    assert scan.report is not None and scan.report.indexes[-2:] == ("secondary_index_rider_idx", "record_index")
    assert sorted(s.partition_path for s in scan.slices) == [CHENNAI, SAO_PAULO]
    assert sorted(scan.reader().read_all().column("rider").to_pylist()) == ["rider-G", "rider-I"]
    # a rider whose record was updated away from san_francisco's group reads as the storage listing does
    where = "rider = 'rider-A' AND fare = 0"
    assert table.read(filter=where) == shim.open_table(trips, metadata=False).read(filter=where)


def test_indexes_of_the_latest_state_are_not_used_for_earlier_or_read_optimized_reads(trips: Path) -> None:
    table = shim.open_table(trips)
    uuid = "334e26e9-8355-45cc-97c6-c31daf0df330"  # rider-A, inserted by the second write
    for options in (shim.ScanOptions(filter=f"uuid = '{uuid}'", as_of=FIRST_WRITE),
                    shim.ScanOptions(filter=f"uuid = '{uuid}'", mode="read_optimized")):
        scan = table.plan(options)
        assert scan.report is not None and "record_index" not in scan.report.indexes
        assert scan.reader().read_all() == shim.open_table(trips, metadata=False).plan(options).reader().read_all()


def test_turned_off_reads_list_storage_and_say_so(trips: Path) -> None:
    reason = "turned off (metadata=False or hoodie.metadata.enable=false)"
    for table in (shim.open_table(trips, metadata=False),
                  shim.open_table(trips, options={"hoodie.metadata.enable": "false"})):
        assert table.listing_source().reason == reason
        scan = table.plan(shim.ScanOptions(filter="fare > 50"))
        assert scan.report is not None and not scan.report.listing.metadata and len(scan.slices) == 3
    table = shim.open_table(trips)
    assert table.listing_source().metadata
    scan = table.plan(shim.ScanOptions(filter="fare > 50", metadata=False))
    assert scan.report is not None and scan.report.listing.reason == reason and len(scan.slices) == 3
    with pytest.raises(InvalidArgumentError, match="hoodie.metadata.enable='maybe'"):
        shim.open_table(trips, options={"hoodie.metadata.enable": "maybe"})
    with pytest.raises(InvalidArgumentError, match="unknown read option 'hoodie.other'"):
        shim.open_table(trips, options={"hoodie.other": "1"})


def _fallback(table_path: Path) -> tuple[str, pa.Table]:
    table = shim.open_table(table_path)
    source = table.listing_source()
    assert not source.metadata and source.reason is not None
    assert f"listing: storage, not the metadata table: {source.reason}" in describe_table(table)
    rows = _rows(table)
    assert rows == _rows(shim.open_table(table_path, metadata=False))
    return source.reason, rows


def test_a_missing_unbuilt_or_lagging_metadata_table_falls_back_to_storage_with_the_reason(trips_copy: Path) -> None:
    properties = trips_copy / ".hoodie" / "hoodie.properties"
    text = properties.read_text()
    properties.write_text(text.replace("metadata.partitions=column_stats,files,", "metadata.partitions=column_stats,"))
    reason, rows = _fallback(trips_copy)
    assert "files partition is not listed in hoodie.table.metadata.partitions" in reason and rows.num_rows == 6
    properties.write_text(text.replace("metadata.partitions.inflight=", "metadata.partitions.inflight=files"))
    assert "files partition is being built" in _fallback(trips_copy)[0]
    properties.write_text(text)
    lagging = trips_copy / ".hoodie" / "metadata" / ".hoodie" / "timeline" / "20251220210128625_20251220210129169.deltacommit"
    saved = lagging.read_bytes()
    lagging.unlink()
    assert _fallback(trips_copy)[0] == ("the metadata table is behind the data table: deltacommit 20251220210128625 "
                                        "completed but the metadata table has no deltacommit for it")
    lagging.write_bytes(saved)
    assert shim.open_table(trips_copy).listing_source().metadata
    shutil.rmtree(trips_copy / ".hoodie" / "metadata")
    assert _fallback(trips_copy)[0] == f"no metadata table at {trips_copy}/.hoodie/metadata"


def test_the_mdt_commit_of_a_write_that_did_not_complete_lists_none_of_its_files(trips_copy: Path) -> None:
    """The data table's last deltacommit left inflight after the metadata table committed it."""
    (trips_copy / ".hoodie" / "timeline" / "20251220210130911_20251220210131755.deltacommit").unlink()
    table = shim.open_table(trips_copy)
    scan = table.plan(shim.ScanOptions())
    assert scan.report is not None and scan.report.listing.metadata
    assert all(not s.log_files for s in scan.slices)
    rows = _rows(table)
    assert rows == _rows(shim.open_table(trips_copy, metadata=False))
    assert "20251220210130911" not in rows.column("_hoodie_commit_time").to_pylist()


def test_a_damaged_metadata_table_falls_back_to_storage_naming_the_file(trips_copy: Path) -> None:
    hfile = max((trips_copy / ".hoodie" / "metadata" / "files").glob("*.hfile"))  # the compacted base file
    data = bytearray(hfile.read_bytes())
    data[-60:] = bytes(60)  # the trailer
    hfile.write_bytes(bytes(data))
    reason, rows = _fallback(trips_copy)
    assert reason.startswith("the metadata table cannot be read: ") and hfile.name in reason
    assert rows.num_rows == 6


def test_nan_and_null_counts_decide_as_sql_does() -> None:
    from shim.filters import parse_filter
    from shim.filters.partition import ValueRange, possible_truths

    floats = {"x": ValueRange(10.0, 20.0, nullable=False, unordered=True)}
    assert True in possible_truths(parse_filter("NOT (x > 5)"), floats)  # NaN > 5 is false: NOT holds
    assert True not in possible_truths(parse_filter("x < 5"), floats)
    ints = {"x": ValueRange(10, 20, nullable=False)}
    assert True not in possible_truths(parse_filter("NOT (x > 5)"), ints)
    assert True not in possible_truths(parse_filter("x IS NULL"), ints)
    assert True in possible_truths(parse_filter("x IS NULL"), {"x": ValueRange(10, 20, nullable=True)})
    assert True not in possible_truths(parse_filter("x = 'a'"), {"x": None})  # only nulls
    assert True in possible_truths(parse_filter("x = 'b'"), {"x": ValueRange("a", "c")})
    assert True in possible_truths(parse_filter("x = 15"), {"x": ValueRange("a", "c")})  # unlike kinds: unknown


def test_stats_are_used_only_where_they_compare_as_the_column_does() -> None:
    import datetime as dt

    from shim.metadata.ranges import EMPTY, UNKNOWN, stats_range
    from shim.metadata.records import ColumnStats

    def stats(low: object, high: object, nulls: int = 0, values: int = 3, info: dict | None = None) -> ColumnStats:
        return ColumnStats("f.parquet", "c", low, high, None, nulls, values, None, None, False,
                           value_type_info=info)

    assert stats_range(stats(1, 5), pa.int64()) != UNKNOWN
    assert stats_range(stats(1, 5), pa.string()) is UNKNOWN
    assert stats_range(stats("a", "z\ue000"), pa.string()) is UNKNOWN  # Java's UTF-16 order differs there
    aware = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    assert stats_range(stats(aware, aware), pa.timestamp("us", "UTC")) != UNKNOWN
    assert stats_range(stats(aware, aware), pa.timestamp("us")) is UNKNOWN
    assert stats_range(stats(aware, aware, info={"typeOrdinal": 17}), pa.timestamp("ns", "UTC")) is UNKNOWN
    assert stats_range(stats(None, None, nulls=3, values=3), pa.int64()) is None
    assert stats_range(stats(None, None, nulls=1, values=3), pa.int64()) is UNKNOWN
    assert stats_range(stats(None, None, nulls=0, values=0), pa.int64()) is EMPTY  # a log of deletes only
