"""The metadata tables Apache Hudi 1.2 writes (recipes with the metadata table on: table versions
6 and 9, Avro and Parquet log blocks, compactions of the data table and of the metadata table,
cleaning, archival; `mor_metadata_indexes` with the record index, bloom filters, column and
partition stats) read by `shim.metadata` against what storage, the Parquet footers and the
tables' rows say.

(Hudi 1.2 cannot show its own view of these metadata tables to compare with: its
`hudi_metadata(...)` table-valued function and a `spark.read` of `.hoodie/metadata` both fail in
the metadata table's log scan with `ArrayIndexOutOfBoundsException: Index 7 out of bounds for
length 7` from `GenericData$Record.put`.)"""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import shim
from shim.bloom import BLOOM_FILTER_KEY, TYPE_CODE_KEY
from shim.files import parse_base_file, parse_log_file
from shim.layout.partitions import list_partitions
from shim.layout.slices import FileGroupFiles, file_slices_as_of, list_file_groups
from shim.metadata import MetadataTable, metadata_listing
from shim.timeline.instant import Action, instant_key
from tests.oracle.failures import failed_write_table
from tests.oracle.generate import GeneratedTable
from tests.oracle.recipes import RECIPES

pytestmark = [pytest.mark.hudi_oracle, pytest.mark.spark]

WITH_MDT = sorted(name for name, recipe in RECIPES.items() if "metadata table on" in recipe.features)
INDEXES = "mor_metadata_indexes"


def _norm(groups: list[FileGroupFiles]) -> list[tuple[Any, ...]]:
    return [(g.partition_path, g.file_id, sorted((b.name, b.size) for b in g.base_files),
             sorted((log.name, log.size) for log in g.log_files)) for g in groups]


def test_the_recipes_with_the_metadata_table_on_have_one(hudi_tables: dict[str, GeneratedTable]) -> None:
    assert WITH_MDT == ["mor_evolve", "mor_metadata_indexes", "mor_partial_updates", "mor_v6_parquet"]
    for name, generated in hudi_tables.items():
        table = shim.open_table(generated.path)
        listing = metadata_listing(table.storage, table.config, table.snapshot().active_timeline, None)
        if name in WITH_MDT:
            assert listing.reason is None, name


@pytest.mark.parametrize("recipe", WITH_MDT)
def test_listing_equals_storage_and_plans_the_same_slices_as_of_every_write(
        hudi_tables: dict[str, GeneratedTable], recipe: str) -> None:
    table = shim.open_table(hudi_tables[recipe].path)
    listing = metadata_listing(table.storage, table.config, table.snapshot().active_timeline, None)
    partitions = list_partitions(table.storage, table.config)
    stored = list_file_groups(table.storage, partitions)
    assert listing.partitions() == partitions
    assert _norm(listing.file_groups()) == _norm(stored)
    timeline = table.snapshot().with_archive().active_timeline
    served = 0
    for write in timeline.completed_writes():
        instant = write.requested_time
        at = metadata_listing(table.storage, table.config, table.snapshot().active_timeline, instant)
        if at.files is None:  # only reads as of commits a clean no longer keeps
            assert at.reason is not None and at.reason.startswith("clean "), at.reason
            clean = table.snapshot().active_timeline.latest_clean()
            assert clean is not None and instant_key(instant) < instant_key(clean[1])
            continue
        served += 1
        assert (file_slices_as_of(table.storage, partitions, timeline, instant, groups=at.file_groups())
                == file_slices_as_of(table.storage, partitions, timeline, instant, groups=stored)), instant
    assert served >= 4


@pytest.mark.parametrize("recipe", WITH_MDT)
def test_files_as_of_every_write_are_the_files_committed_by_then(hudi_tables: dict[str, GeneratedTable],
                                                                recipe: str) -> None:
    table = shim.open_table(hudi_tables[recipe].path)
    timeline = table.snapshot().active_timeline
    stored = {p: {e.name: e.size for g in list_file_groups(table.storage, [p]) for e in (*g.base_files, *g.log_files)}
              for p in list_partitions(table.storage, table.config)}
    for write in table.snapshot().with_archive().active_timeline.completed_writes():
        instant = write.requested_time
        mdt = MetadataTable.open(table.storage, timeline, instant)
        if not mdt.is_usable_for(instant):
            continue
        expected = {p: {n: s for n, s in files.items() if _committed(table, n, p, instant)}
                    for p, files in stored.items()}
        assert mdt.all_files(list(stored)) == expected, instant


def _committed(table: shim.Table, name: str, partition: str, instant: str) -> bool:
    timeline = table.snapshot().with_archive().active_timeline
    base = parse_base_file(name, partition)
    if base is not None:
        return timeline.is_committed(base.instant_time, instant)
    log = parse_log_file(name, partition)
    assert log is not None
    if table.config.version >= 8:
        return timeline.is_committed(log.instant_time, instant)
    return instant_key(log.instant_time) <= instant_key(instant)  # version 6: the slice's base instant


@pytest.mark.parametrize("recipe", [r for r in WITH_MDT if r in ("mor_partial_updates", INDEXES)])
def test_column_stats_of_base_files_equal_their_parquet_footers(hudi_tables: dict[str, GeneratedTable],
                                                                recipe: str) -> None:
    table = shim.open_table(hudi_tables[recipe].path)
    mdt = MetadataTable.open(table.storage, table.snapshot().active_timeline)
    files = {p: [n for n in names if n.endswith(".parquet")] for p, names in mdt.all_files().items()}
    columns = [f.name for f in table.schema()] + ["_hoodie_commit_time", "_hoodie_record_key"]
    stats = mdt.column_stats(files, columns)
    checked = set()
    for partition, names in files.items():
        for name in names:
            footer = pq.read_metadata(Path(table.path) / partition / name)
            by_path = {footer.row_group(0).column(j).path_in_schema: j for j in range(footer.num_columns)}
            for column, got in stats[(partition, name)].items():
                chunks = [footer.row_group(i).column(by_path[column]) for i in range(footer.num_row_groups)]
                values = [c.statistics for c in chunks if c.statistics is not None and c.statistics.has_min_max]
                low = min((_raw(s.min) for s in values), default=None)
                high = max((_raw(s.max) for s in values), default=None)
                assert (_raw(got.min_value), _raw(got.max_value)) == (low, high), (name, column, got)
                assert got.null_count == sum(c.statistics.null_count for c in chunks), (name, column)
                assert got.value_count == sum(c.num_values for c in chunks), (name, column)
                assert got.total_size == sum(c.total_compressed_size for c in chunks), (name, column)
                assert got.total_uncompressed_size == sum(c.total_uncompressed_size for c in chunks), (name, column)
                checked.add(column)
    assert {"id", "name", "price", "_hoodie_record_key"} <= checked
    if recipe == INDEXES:
        assert {"qty", "day", "amount", "flag", "at"} <= checked


def _raw(value: Any) -> Any:
    """A footer statistic as a comparable value (Spark's timestamps are adjusted to UTC)."""
    if isinstance(value, datetime.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=datetime.UTC)
    return value


def test_record_index_locates_every_key_of_the_snapshot_and_none_deleted(
        hudi_tables: dict[str, GeneratedTable]) -> None:
    table = shim.open_table(hudi_tables[INDEXES].path)
    mdt = MetadataTable.open(table.storage, table.snapshot().active_timeline)
    assert "record_index" in mdt.enabled_partitions
    rows = table.read(include_meta=True).to_pylist()
    located = mdt.record_locations(r["_hoodie_record_key"] for r in rows)
    assert len(located) == len(rows) >= 15
    for row in rows:
        where = located[row["_hoodie_record_key"]]
        assert (where.partition, row["_hoodie_file_name"].startswith(where.file_id)) == (
            row["_hoodie_partition_path"], True), row["_hoodie_record_key"]
    ever = {str(i) for i in [*range(1, 13), *range(20, 24), 30, 40, 41, 42]}  # the keys the recipe writes
    deleted = ever - {r["_hoodie_record_key"] for r in rows}
    assert deleted == {"5", "21"}  # (Hudi 1.2 updates key 9 by the MERGE's UPDATE clause, not its DELETE)
    assert mdt.record_locations(deleted) == {}


def test_bloom_filters_equal_the_base_files_footers_and_cleaned_files_have_none(
        hudi_tables: dict[str, GeneratedTable]) -> None:
    table = shim.open_table(hudi_tables[INDEXES].path)
    mdt = MetadataTable.open(table.storage, table.snapshot().active_timeline)
    checked = 0
    for partition, names in mdt.all_files().items():
        for name in names:
            if not name.endswith(".parquet"):
                continue
            footer = pq.read_metadata(Path(table.path) / partition / name).metadata
            entry = mdt.bloom_filter(partition, name)
            assert entry is not None and not entry.is_deleted
            assert (entry.serialized, entry.type.encode()) == (footer[BLOOM_FILTER_KEY], footer[TYPE_CODE_KEY])
            keys = [r["_hoodie_record_key"] for r in pq.read_table(Path(table.path) / partition / name,
                                                                    columns=["_hoodie_record_key"]).to_pylist()]
            assert entry.parse().might_contain_any(keys)
            checked += 1
    assert checked >= 3
    cleaned = _cleaned_base_files(table)
    assert cleaned, "the recipe's cleans removed base files"
    for partition, name in cleaned:
        assert not (Path(table.path) / partition / name).exists()
        assert mdt.bloom_filter(partition, name) is None
        assert mdt.column_stats({partition: [name]}, ["id"]) == {}


def _cleaned_base_files(table: shim.Table) -> list[tuple[str, str]]:
    timeline = table.snapshot().active_timeline
    found = []
    for instant in timeline.instants:
        if instant.action is not Action.CLEAN or not instant.is_completed:
            continue
        partitions = timeline.read_raw(instant).get("partitionMetadata") or {}
        for partition, meta in partitions.items():  # type: ignore[union-attr]
            for deleted in meta.get("successDeleteFiles") or ():
                if deleted.endswith(".parquet"):
                    found.append((partition, deleted.rsplit("/", 1)[-1]))
    return found


def test_partition_stats_bound_each_partitions_rows(hudi_tables: dict[str, GeneratedTable]) -> None:
    table = shim.open_table(hudi_tables[INDEXES].path)
    mdt = MetadataTable.open(table.storage, table.snapshot().active_timeline)
    stats = mdt.partition_stats(["id", "price", "qty", "name"])
    assert sorted(stats) == ["region=ap", "region=eu", "region=us"]
    rows = table.read(columns=["id", "price", "qty", "name", "region"]).to_pylist()
    for partition, columns in stats.items():
        mine = [r for r in rows if f"region={r['region']}" == partition]
        for column, got in columns.items():
            present = [r[column] for r in mine if r[column] is not None]
            if present:
                assert got.min_value <= min(present) and max(present) <= got.max_value, (partition, column, got)


@pytest.mark.parametrize("recipe", [r for r in WITH_MDT if RECIPES[r].version >= 8])
def test_hudi_rs_plans_from_its_metadata_listing_the_slices_the_shim_plans(hudi_tables: dict[str, GeneratedTable],
                                                                           recipe: str) -> None:
    hudi = pytest.importorskip("hudi", reason="hudi-rs (pip install hudi) is a test dependency")
    table = shim.open_table(hudi_tables[recipe].path)
    listing = metadata_listing(table.storage, table.config, table.snapshot().active_timeline, None)
    ours = sorted((s.partition_path, s.file_id, s.base_file.name if s.base_file else "",
                   tuple(sorted(log.name for log in s.log_files)))
                  for s in file_slices_as_of(table.storage, listing.partitions(), table.snapshot().active_timeline, None,
                                             groups=listing.file_groups()))
    theirs = sorted((s.partition_path, s.file_id, s.base_file_name, tuple(sorted(s.log_file_names)))
                    for s in hudi.HudiTableBuilder.from_base_uri(table.path).build().get_file_slices())
    assert ours == theirs


def test_the_mdt_commit_of_a_compaction_that_did_not_complete_is_ignored(hudi_tables: dict[str, GeneratedTable],
                                                                         tmp_path: Path) -> None:
    """A crash after the metadata table committed the last data compaction and before the data
    table did (its commit file removed from a copy): the compaction's new base files, their column
    stats and bloom filters are not listed; the MDT compaction before it (requested while the
    previous deltacommit was running, so holding only what completed before) stays usable."""
    copy = tmp_path / "table"
    shutil.copytree(hudi_tables[INDEXES].path, copy)
    timeline = copy / ".hoodie" / "timeline"
    last = max((p for p in timeline.iterdir() if p.name.endswith(".commit")), key=lambda p: p.name)
    compaction = last.name.split("_")[0]
    last.unlink()
    table = shim.open_table(copy)
    mdt = MetadataTable.open(table.storage, table.snapshot().active_timeline)
    assert mdt.unusable_reason() is None
    orphans = {(p.parent.name, p.name) for p in copy.glob(f"*/*_{compaction}.parquet")}
    assert orphans
    listed = mdt.all_files()
    assert not {(p, n) for p, names in listed.items() for n in names} & orphans
    assert all(mdt.bloom_filter(p, n) is None for p, n in orphans)
    assert mdt.column_stats({p: [n] for p, n in orphans}, ["id"]) == {}
    listing = metadata_listing(table.storage, table.config, table.snapshot().active_timeline, None)
    partitions = list_partitions(table.storage, table.config)
    assert (file_slices_as_of(table.storage, partitions, table.snapshot().active_timeline, None, groups=listing.file_groups())
            == file_slices_as_of(table.storage, partitions, table.snapshot().active_timeline, None))


@pytest.mark.parametrize("recipe", ["mor_metadata_indexes", "mor_v6_parquet"])
def test_a_failed_write_and_its_rollback_list_as_storage_does(hudi_tables: dict[str, GeneratedTable],
                                                              recipe: str) -> None:
    """Hudi writes an UPDATE's files, fails its pre-commit validation, and rolls the write back
    when the next UPDATE starts (`tests.oracle.failures`): version 9 deletes the failed write's
    log files, version 6 appends a rollback command block in a new log file version and records
    both in a metadata table deltacommit of the rollback."""
    path = failed_write_table(recipe)
    table = shim.open_table(path)
    timeline = table.snapshot().active_timeline
    [rollback] = [i for i in timeline.instants if i.action is Action.ROLLBACK and i.is_completed]
    [failed] = timeline.read_raw(rollback)["commitsRollback"]  # type: ignore[misc]
    assert not timeline.is_committed(str(failed))
    mdt = MetadataTable.open(table.storage, timeline)
    assert mdt.unusable_reason() is None
    assert str(failed) not in {i.requested_time for i in mdt._opened.timeline.instants}  # type: ignore[union-attr]
    listing = metadata_listing(table.storage, table.config, timeline, None)
    partitions = list_partitions(table.storage, table.config)
    stored = list_file_groups(table.storage, partitions)
    assert _norm(listing.file_groups()) == _norm(stored)
    if recipe == "mor_v6_parquet":  # the failed write's log file and the rollback's are listed, with their sizes
        [rolled] = timeline.read_raw(rollback)["partitionMetadata"].values()  # type: ignore[union-attr]
        logs = {**rolled["logFilesFromFailedCommit"],
                **{name.rsplit("/", 1)[-1]: size for name, size in rolled["rollbackLogFiles"].items()}}
        assert len(logs) == 2
        assert {name: (listing.files or {})[""].get(name) for name in logs} == logs
    for write in table.snapshot().with_archive().active_timeline.completed_writes():
        at = metadata_listing(table.storage, table.config, timeline, write.requested_time)
        if at.files is not None:
            assert (file_slices_as_of(table.storage, partitions, timeline, write.requested_time, groups=at.file_groups())
                    == file_slices_as_of(table.storage, partitions, timeline, write.requested_time, groups=stored))
    hudi_rows = pq.read_table(Path(path).parent / "reads" / "snapshot.parquet").sort_by("id")
    ours = table.read().sort_by("id")
    assert ours.column("id").to_pylist() == hudi_rows.column("id").to_pylist()
    column, value = ("score", 99) if recipe == "mor_v6_parquet" else ("price", 99.5)
    assert value not in ours.column(column).to_pylist()  # the failed UPDATE's value
    assert ours.column(column).to_pylist() == hudi_rows.column(column).to_pylist()
