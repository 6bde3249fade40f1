"""The metadata table of a real table Hudi wrote (`trips__mor__avro__v8_trips_8i3u1d`: table
version 8, merge-on-read, three partitions; its metadata table holds files, column_stats,
partition_stats, record_index and a secondary index on `rider`, one compaction) against what
storage, the Parquet footers and the table's rows say."""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import shim
from shim.files import parse_base_file, parse_log_file
from shim.layout.partitions import list_partitions
from shim.layout.slices import FileGroupFiles, file_slices_as_of, list_file_groups
from shim.log.blocks import BlockType
from shim.log.reader import decode_data_block, read_log_file
from shim.metadata import MetadataTable, MetadataTableError, metadata_listing
from shim.metadata import keys as mdt_keys

TRIPS = "trips__mor__avro__v8_trips_8i3u1d"
INDEXED = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key", "ts", "uuid", "rider", "driver",
           "fare", "city")


@pytest.fixture(scope="module")
def trips(shared_tables: dict[str, Path]) -> shim.Table:
    return shim.open_table(shared_tables[TRIPS])


@pytest.fixture
def trips_copy(shared_tables: dict[str, Path], tmp_path: Path) -> Path:
    target = tmp_path / "trips"
    shutil.copytree(shared_tables[TRIPS], target)
    return target


def _sorted_groups(groups: list[FileGroupFiles]) -> list[tuple[str, str, list[str], list[tuple[str, int]]]]:
    return [(g.partition_path, g.file_id, sorted(f"{b.name}:{b.size}" for b in g.base_files),
             sorted((log.name, log.size) for log in g.log_files)) for g in groups]


def test_listing_equals_the_storage_listing_and_plans_the_same_slices_as_of_every_commit(trips: shim.Table) -> None:
    timeline = trips.snapshot().active_timeline
    listing = metadata_listing(trips.storage, trips.config, timeline, None)
    assert listing.reason is None
    partitions = list_partitions(trips.storage, trips.config)
    assert listing.partitions() == partitions == ["city=chennai", "city=san_francisco", "city=sao_paulo"]
    stored = list_file_groups(trips.storage, partitions)
    assert _sorted_groups(listing.file_groups()) == _sorted_groups(stored)
    assert sum(len(files) for files in (listing.files or {}).values()) == 11
    for write in timeline.completed_writes():
        instant = write.requested_time
        at = metadata_listing(trips.storage, trips.config, timeline, instant)
        assert at.reason is None
        assert (file_slices_as_of(trips.storage, partitions, timeline, instant, groups=at.file_groups())
                == file_slices_as_of(trips.storage, partitions, timeline, instant, groups=stored)), instant


def test_files_as_of_each_commit_are_the_files_committed_by_then(trips: shim.Table) -> None:
    timeline = trips.snapshot().active_timeline
    stored = {p: {e.name: e.size for g in list_file_groups(trips.storage, [p]) for e in (*g.base_files, *g.log_files)}
              for p in list_partitions(trips.storage, trips.config)}
    counts = []
    for write in timeline.completed_writes():
        instant = write.requested_time
        mdt = MetadataTable.open(trips.storage, timeline, instant)
        committed = {p: {name: size for name, size in files.items()
                         if timeline.is_committed(_instant_of(name, p), instant)} for p, files in stored.items()}
        assert mdt.all_files() == committed, instant
        counts.append(sum(len(files) for files in committed.values()))
    assert counts == [3, 4, 5, 6, 7, 10, 11]


def _instant_of(name: str, partition: str) -> str:
    base = parse_base_file(name, partition)
    if base is not None:
        return base.instant_time
    log = parse_log_file(name, partition)
    assert log is not None
    return log.instant_time  # (table version 8: the deltacommit that wrote the log file)


def test_column_stats_of_base_files_equal_their_parquet_footers(trips: shim.Table) -> None:
    mdt = MetadataTable.open(trips.storage, trips.snapshot().active_timeline)
    files = mdt.all_files()
    stats = mdt.column_stats({p: list(names) for p, names in files.items()}, INDEXED)
    checked = 0
    for partition, names in files.items():
        for name in names:
            if not name.endswith(".parquet"):
                continue
            footer = pq.read_metadata(Path(trips.path) / partition / name)
            for column in INDEXED:
                chunks = [footer.row_group(i).column(j) for i in range(footer.num_row_groups)
                          for j in range(footer.num_columns) if footer.row_group(i).column(j).path_in_schema == column]
                [chunk] = chunks
                got = stats[(partition, name)][column]
                assert (got.min_value, got.max_value) == (chunk.statistics.min, chunk.statistics.max), (name, column)
                assert got.null_count == chunk.statistics.null_count
                assert got.value_count == chunk.num_values
                assert got.total_size == chunk.total_compressed_size
                assert got.total_uncompressed_size == chunk.total_uncompressed_size
                assert got.file_name == name and not got.is_deleted
                checked += 1
    assert checked == 6 * len(INDEXED)


def test_column_stats_of_log_files_bound_their_records(trips: shim.Table) -> None:
    mdt = MetadataTable.open(trips.storage, trips.snapshot().active_timeline)
    logs = {p: [n for n in names if n.startswith(".")] for p, names in mdt.all_files().items()}
    stats = mdt.column_stats(logs, ["fare", "rider", "ts"])
    seen = {"data": 0, "delete": 0}
    for partition, names in logs.items():
        for name in names:
            contents = read_log_file(trips.storage, str(Path(trips.path) / partition / name))
            data = [b for b in contents.blocks if b.block_type is BlockType.AVRO_DATA]
            for column in ("fare", "rider", "ts"):
                got = stats[(partition, name)][column]
                if not data:  # a delete block only: no values
                    assert (got.value_count, got.min_value, got.max_value) == (0, None, None)
                    seen["delete"] += 1
                    continue
                values = pc.drop_null(decode_data_block(contents, data[0], [column]).column(column)).to_pylist()
                assert got.value_count == len(values) and (got.min_value, got.max_value) == (min(values), max(values))
                seen["data"] += 1
    assert seen == {"data": 9, "delete": 6}


def test_record_index_locates_every_key_of_the_snapshot_and_no_deleted_key(trips: shim.Table) -> None:
    rows = trips.read(include_meta=True).to_pylist()
    mdt = MetadataTable.open(trips.storage, trips.snapshot().active_timeline)
    located = mdt.record_locations([r["_hoodie_record_key"] for r in rows] + ["no-such-key"])
    assert len(located) == len(rows) == 6
    assert mdt.stats.base_files == 7  # the file group Hudi hashes each key to, and no other
    for row in rows:
        where = located[row["_hoodie_record_key"]]
        assert where.partition == row["_hoodie_partition_path"]
        assert row["_hoodie_file_name"].startswith(where.file_id)
    first = trips.snapshot().active_timeline.completed_writes()[0].requested_time
    every_key = {r["_hoodie_record_key"] for r in trips.read(as_of=first, include_meta=True).to_pylist()}
    deleted = every_key - {r["_hoodie_record_key"] for r in rows}
    assert len(deleted) == 2 and not mdt.record_locations(deleted)


def test_secondary_index_maps_each_rider_to_its_keys(trips: shim.Table) -> None:
    rows = trips.read(columns=["uuid", "rider"]).to_pylist()
    expected: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        expected[row["rider"]].append(row["uuid"])
    mdt = MetadataTable.open(trips.storage, trips.snapshot().active_timeline)
    found = mdt.secondary_index("secondary_index_rider_idx", list(expected) + ["rider-Z"])
    assert {k: sorted(v) for k, v in found.items()} == {k: sorted(v) for k, v in expected.items()}


def test_partition_stats_bound_each_partitions_rows(trips: shim.Table) -> None:
    mdt = MetadataTable.open(trips.storage, trips.snapshot().active_timeline)
    stats = mdt.partition_stats(["fare", "ts", "rider", "city"])
    assert sorted(stats) == ["city=chennai", "city=san_francisco", "city=sao_paulo"]
    assert stats == mdt.partition_stats(["fare", "ts", "rider", "city"], list(stats))
    rows = trips.read(columns=["fare", "ts", "rider", "city"]).to_pylist()
    for partition, columns in stats.items():
        values = [r for r in rows if f"city={r['city']}" == partition]
        for column, got in columns.items():
            present = [r[column] for r in values]
            assert got.min_value <= min(present) and max(present) <= got.max_value, (partition, column)
    assert stats["city=chennai"]["city"].min_value == stats["city=chennai"]["city"].max_value == "chennai"


def test_keys_are_built_as_hudi_builds_them(trips: shim.Table) -> None:
    mdt = MetadataTable.open(trips.storage, trips.snapshot().active_timeline)
    files = mdt.all_files()
    column_records = mdt._partition("column_stats").read()
    assert len(column_records) == len(INDEXED) * sum(len(names) for names in files.values())
    for key, record in column_records.items():
        name = record.payload["ColumnStatsMetadata"]["fileName"]  # type: ignore[index]
        column = record.payload["ColumnStatsMetadata"]["columnName"]  # type: ignore[index]
        [partition] = [p for p, names in files.items() if name in names]
        assert key == mdt_keys.column_stats_key(column, partition, name)
    for key, record in mdt._partition("partition_stats").read().items():
        stats = record.payload["ColumnStatsMetadata"]  # type: ignore[index]
        assert key == mdt_keys.partition_stats_key(stats["columnName"], stats["fileName"])


def test_an_mdt_commit_of_a_write_that_did_not_complete_is_ignored(trips_copy: Path) -> None:
    """A crash after the metadata table committed deltacommit 20251220210130911 and before the data
    table did: the MDT's log blocks of that instant must not list the log file the write left.
    (The MDT compaction requested at 20251220210130942 does not hold it: the deltacommit completed
    after, at 20251220210131727, so its log starts the compacted slice's logs.)"""
    (trips_copy / ".hoodie" / "timeline" / "20251220210130911_20251220210131755.deltacommit").unlink()
    table = shim.open_table(trips_copy)
    mdt = MetadataTable.open(table.storage, table.snapshot().active_timeline)
    assert mdt.unusable_reason() is None
    orphan = ".8aa68f7e-afd6-4c94-b86c-8a886552e08d-0_20251220210130911.log.1_0-1139-3316"
    assert (trips_copy / "city=sao_paulo" / orphan).exists()
    assert orphan not in mdt.files("city=sao_paulo")
    assert len(mdt.files("city=sao_paulo")) == 3
    assert metadata_listing(table.storage, table.config, table.snapshot().active_timeline, None).reason is None


def test_with_the_mdt_compaction_pending_the_slices_before_it_are_read(trips_copy: Path) -> None:
    (trips_copy / ".hoodie" / "timeline" / "20251220210130911_20251220210131755.deltacommit").unlink()
    (trips_copy / ".hoodie" / "metadata" / ".hoodie" / "timeline" / "20251220210130942_20251220210131219.commit").unlink()
    table = shim.open_table(trips_copy)
    mdt = MetadataTable.open(table.storage, table.snapshot().active_timeline)
    assert len(mdt.files("city=sao_paulo")) == 3
    assert mdt.stats.base_files == 1 and mdt.stats.log_blocks == 7  # the init base file, then a log per commit


def test_an_mdt_compaction_over_a_write_that_did_not_complete_makes_it_unusable(trips_copy: Path) -> None:
    """The data table's compaction 20251220210129235 left pending (its commit file removed from a
    copy), while the MDT compacted its deltacommit (completed at 20251220210129845) into the base
    file of compaction 20251220210130942."""
    (trips_copy / ".hoodie" / "timeline" / "20251220210129235_20251220210129883.commit").unlink()
    table = shim.open_table(trips_copy)
    mdt = MetadataTable.open(table.storage, table.snapshot().active_timeline)
    assert mdt.unusable_reason() == ("metadata table compaction 20251220210130942 includes deltacommit "
                                     "20251220210129235, whose data instant is not completed")
    listing = metadata_listing(table.storage, table.config, table.snapshot().active_timeline, None)
    assert listing.files is None and "20251220210129235" in (listing.reason or "")
    with pytest.raises(MetadataTableError, match="cannot be used"):
        mdt.files("city=sao_paulo")


def test_an_mdt_without_a_completed_write_of_the_data_table_is_behind(trips_copy: Path) -> None:
    (trips_copy / ".hoodie" / "metadata" / ".hoodie" / "timeline"
     / "20251220210128625_20251220210129169.deltacommit").unlink()
    table = shim.open_table(trips_copy)
    mdt = MetadataTable.open(table.storage, table.snapshot().active_timeline)
    expected = ("the metadata table is behind the data table: deltacommit 20251220210128625 completed but the "
                "metadata table has no deltacommit for it")
    assert mdt.unusable_reason() == expected
    assert mdt.is_usable_for("20251220210127080")  # the reads before it are served
    assert not mdt.is_usable_for("20251220210128625")


def test_an_mdt_the_table_does_not_list_is_not_used(trips_copy: Path) -> None:
    properties = trips_copy / ".hoodie" / "hoodie.properties"
    text = properties.read_text()
    properties.write_text(text.replace("hoodie.table.metadata.partitions=column_stats,files,",
                                       "hoodie.table.metadata.partitions=column_stats,"))
    table = shim.open_table(trips_copy)
    listing = metadata_listing(table.storage, table.config, table.snapshot().active_timeline, None)
    assert listing.files is None
    assert listing.reason is not None and "files partition is not listed in hoodie.table.metadata.partitions" in listing.reason
    shutil.rmtree(trips_copy / ".hoodie" / "metadata")
    properties.write_text(text)
    table = shim.open_table(trips_copy)
    assert metadata_listing(table.storage, table.config, table.snapshot().active_timeline, None).reason == (
        f"no metadata table at {table.path}/.hoodie/metadata")


def test_a_partition_the_mdt_does_not_have_is_named(trips: shim.Table) -> None:
    mdt = MetadataTable.open(trips.storage, trips.snapshot().active_timeline)
    with pytest.raises(MetadataTableError, match="no bloom_filters partition"):
        mdt.bloom_filter("city=chennai", "x.parquet")
