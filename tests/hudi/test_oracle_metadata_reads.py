"""Reads planned from the metadata tables Apache Hudi 1.2 writes equal reads planned from storage
and Spark+Hudi's rows: every recipe with the metadata table on (its files partition only, or
with column stats, partition stats, the record index and bloom filters; the metadata table
compacted and cleaned), a copy-on-write table with Hudi's defaults in 40 partitions, a write
Hudi failed and rolled back, and a metadata table lagging behind its data table (storage is
listed then, saying why). Filters on every column of the latest rows return Hudi's rows, with
files and partitions skipped by the stats."""

from __future__ import annotations

import datetime as dt
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import shim
from shim.errors import HudiShimError
from shim.timeline.instant import Action
from tests.oracle.compare import compare_same_schema
from tests.oracle.failures import failed_write_table
from tests.oracle.generate import GeneratedTable, generate
from tests.oracle.recipes import BENCH_RECIPES, RECIPES

pytestmark = [pytest.mark.hudi_oracle, pytest.mark.spark]

WITH_MDT = sorted(name for name, recipe in RECIPES.items() if "metadata table on" in recipe.features)
COW40 = "cow_40_partitions"
KEY = "_hoodie_record_key"


@pytest.fixture(scope="module")
def tables(hudi_tables: dict[str, GeneratedTable]) -> dict[str, GeneratedTable]:
    """The recipes with the metadata table on, and the 40-partition copy-on-write table."""
    return {**{name: hudi_tables[name] for name in WITH_MDT}, **generate([BENCH_RECIPES[COW40]])}


def _hudi(generated: GeneratedTable, read: str = "snapshot") -> pa.Table:
    found = generated.reads[read]
    assert found.file is not None, found.error
    return pq.read_table(found.file)


def _read(table: shim.Table, **options: Any) -> pa.Table:
    return _sorted(table.read(include_meta=True, **options))


def _sorted(rows: pa.Table) -> pa.Table:
    """By record key and partition (keys repeat across partitions in some recipes)."""
    return rows.sort_by([(KEY, "ascending"), ("_hoodie_partition_path", "ascending")])


@pytest.mark.parametrize("recipe", [*WITH_MDT, COW40])
def test_every_read_is_the_same_with_and_without_the_metadata_table(tables: dict[str, GeneratedTable],
                                                                    recipe: str) -> None:
    generated = tables[recipe]
    table, plain = shim.open_table(generated.path), shim.open_table(generated.path, metadata=False)
    assert table.listing_source().metadata, table.listing_source()
    modes = ["snapshot", "read_optimized"] if table.config.is_mor else ["snapshot"]
    writes = [w.requested_time for w in table.snapshot().with_archive().active_timeline.completed_writes()]
    listed = 0
    for as_of in [None, *writes]:
        for mode in modes:
            try:
                expected = _read(plain, mode=mode, as_of=as_of)
            except HudiShimError as exc:  # refused (a clean since): refused alike
                with pytest.raises(type(exc)):
                    _read(table, mode=mode, as_of=as_of)
                continue
            assert _read(table, mode=mode, as_of=as_of) == expected, (recipe, mode, as_of)
            listed += table.listing_source(as_of).metadata
    assert listed >= 2
    result = compare_same_schema("snapshot", _hudi(generated), _read(table))
    assert result.equal, result.problems


def _filters(rows: pa.Table) -> list[tuple[str, str, Any]]:
    """For each flat data column: `>`, `<=` and `=` on its median value, and `IS NULL`."""
    found: list[tuple[str, str, Any]] = []
    for field in rows.schema:
        if field.name.startswith("_hoodie") or pa.types.is_nested(field.type):
            continue
        values = sorted({v for v in rows.column(field.name).to_pylist() if v is not None}, key=_order)
        if not values or isinstance(values[0], (bytes, dict, list)):
            continue
        middle = values[len(values) // 2]
        found += [(field.name, ">", middle), (field.name, "<=", middle), (field.name, "=", middle),
                  (field.name, "IS NULL", None)]
    return found


def _order(value: Any) -> Any:
    return value.timestamp() if isinstance(value, dt.datetime) else value


def _expected_keys(hudi: pa.Table, column: str, op: str, value: Any) -> list[str]:
    """The record keys of Hudi's rows the filter holds for."""
    field = pc.field(column)
    if op == "IS NULL":
        mask = field.is_null()
    else:
        literal = pa.scalar(value) if isinstance(value, Decimal) else pa.scalar(value, type=hudi.schema.field(column).type)
        mask = {">": field > literal, "<=": field <= literal, "=": field == literal}[op]
    return sorted(hudi.filter(mask).column(KEY).to_pylist())


@pytest.mark.parametrize("recipe", [*WITH_MDT, COW40])
def test_filters_on_every_column_return_hudis_rows_and_skip_what_the_stats_rule_out(
        tables: dict[str, GeneratedTable], recipe: str) -> None:
    generated = tables[recipe]
    table, plain = shim.open_table(generated.path), shim.open_table(generated.path, metadata=False)
    hudi = _hudi(generated)
    ours = table.read()
    skipped = 0
    for column, op, value in _filters(ours):
        where = [(column, op, value)]
        scan = table.plan(shim.ScanOptions(filter=where, include_meta=True))
        got = scan.reader().read_all()
        assert sorted(got.column(KEY).to_pylist()) == _expected_keys(hudi, column, op, value), (recipe, where)
        assert _sorted(got) == _sorted(plain.read(filter=where, include_meta=True)), (recipe, where)
        assert scan.report is not None and scan.report.listing.metadata
        skipped += scan.report.partitions_skipped + scan.report.slices_skipped
    built = table.config.get("hoodie.table.metadata.partitions") or ""
    if "column_stats" in built or "partition_stats" in built:
        assert skipped > 0, recipe


def test_a_range_of_ids_in_one_file_reads_that_file_only(tables: dict[str, GeneratedTable]) -> None:
    """The issue's case: 4,000 rows in 40 partitions, `id >= 1234 AND id <= 1240` in one file."""
    generated = tables[COW40]
    table = shim.open_table(generated.path)
    scan = table.plan(shim.ScanOptions(filter="id >= 1234 AND id <= 1240"))
    assert scan.report is not None and scan.report.partitions == 40 and len(scan.slices) == 1
    assert scan.report.partitions_skipped + scan.report.slices_skipped == 39
    assert scan.reader().read_all().column("id").to_pylist() == list(range(1234, 1241))
    hudi = _hudi(generated)
    assert sorted(hudi.filter((pc.field("id") >= 1234) & (pc.field("id") <= 1240)).column("id").to_pylist()) == \
        list(range(1234, 1241))
    assert {p.rsplit("=", 1)[-1] for p in table.config.get("hoodie.table.metadata.partitions", "").split(",")} >= {
        "files", "column_stats", "partition_stats"}


def test_key_lookups_through_the_record_index_and_bloom_filters_return_hudis_rows(
        tables: dict[str, GeneratedTable]) -> None:
    generated = tables["mor_metadata_indexes"]
    table, hudi = shim.open_table(generated.path), _hudi(generated)
    keys = sorted(hudi.column(KEY).to_pylist())
    deleted = {"5", "9", "21"} - set(keys)
    assert deleted  # keys Hudi deleted: the index must not find them
    for key in [*keys, *sorted(deleted)]:
        scan = table.plan(shim.ScanOptions(filter=f"id = {key}", include_meta=True))
        assert scan.report is not None and "record_index" in scan.report.indexes
        assert len(scan.slices) == (1 if key in keys else 0), key
        got = scan.reader().read_all()
        assert got.column(KEY).to_pylist() == ([key] if key in keys else [])
    # read-optimized: the record index (of merged records) is not used; base files' bloom filters are
    scan = table.plan(shim.ScanOptions(filter=f"id IN ({keys[0]}, {keys[-1]})", mode="read_optimized"))
    assert scan.report is not None and "record_index" not in scan.report.indexes
    assert "bloom_filters" in scan.report.indexes
    # (rows in any order: slices are read at once)
    assert scan.reader().read_all().sort_by("id") == shim.open_table(generated.path, metadata=False).plan(
        shim.ScanOptions(filter=f"id IN ({keys[0]}, {keys[-1]})", mode="read_optimized")).reader().read_all().sort_by("id")


def test_a_compacted_and_archived_metadata_table_of_a_cleaned_table_serves_the_reads(
        tables: dict[str, GeneratedTable]) -> None:
    """`mor_metadata_indexes`: the metadata table compacted (its `commit`s) and archived, the data
    table cleaned (each clean a deltacommit of the metadata table, removing the cleaned files)."""
    table = shim.open_table(tables["mor_metadata_indexes"].path)
    names = [p.name for p in Path(table.path, ".hoodie", "metadata", ".hoodie", "timeline").iterdir()]
    assert any(n.endswith(".commit") for n in names) and "history" in names
    cleans = [i.requested_time for i in table.timeline() if i.action is Action.CLEAN and i.is_completed]
    assert cleans and all(any(n.startswith(f"{c}_") and n.endswith(".deltacommit") for n in names) for c in cleans)
    assert table.listing_source().metadata


@pytest.mark.parametrize("recipe", ["mor_metadata_indexes", "mor_v6_parquet"])
def test_a_failed_and_rolled_back_write_reads_as_hudi_reads_it(recipe: str) -> None:
    path = failed_write_table(recipe)
    table, plain = shim.open_table(path), shim.open_table(path, metadata=False)
    assert table.listing_source().metadata
    assert any(i.action is Action.ROLLBACK for i in table.timeline())
    hudi = pq.read_table(Path(path).parent / "reads" / "snapshot.parquet")
    ours = _read(table)
    assert ours == _read(plain)
    assert compare_same_schema("snapshot", hudi, ours).equal
    for column, op, value in _filters(table.read()):
        where = [(column, op, value)]
        assert sorted(table.read(filter=where, include_meta=True).column(KEY).to_pylist()) == \
            _expected_keys(hudi, column, op, value), where


def test_a_metadata_table_lagging_behind_a_write_is_not_used(tables: dict[str, GeneratedTable], tmp_path: Path) -> None:
    """The last data write's deltacommit removed from a copy's metadata table (a writer that
    failed between the data commit and the metadata table's, as Hudi 0.x could leave it)."""
    generated = tables["mor_metadata_indexes"]
    copy = tmp_path / "t"
    shutil.copytree(generated.path, copy)
    last = shim.open_table(copy).snapshot().active_timeline.completed_writes()[-1].requested_time
    [mdt_commit] = (copy / ".hoodie" / "metadata" / ".hoodie" / "timeline").glob(f"{last}_*.deltacommit")
    mdt_commit.unlink()
    table = shim.open_table(copy)
    source = table.listing_source()
    assert not source.metadata and source.reason is not None and f"{last} completed" in source.reason
    assert compare_same_schema("snapshot", _hudi(generated), _read(table)).equal
    scan = table.plan(shim.ScanOptions(filter="price > 10"))
    assert scan.report is not None and scan.report.slices_skipped == scan.report.partitions_skipped == 0


def _published(path: Path, folder: Path, *, metadata: bool) -> tuple[dict[str, tuple[Any, ...]], set[str]]:
    """Data file -> (rows, size, value counts, null counts, bounds) of the published snapshot view,
    and the base files whose footer publishing read."""
    from pyiceberg.table import StaticTable

    from catalog.iceberg.publish import IcebergPublisher
    from catalog.service import Catalog
    from catalog.settings import Settings
    from shim.planning import file_schemas
    from shim.read import base_files
    from shim.read.cache import ByteBoundedCache
    from shim.storage import LocalStorage

    base_files._parsed_footer.cache_clear()
    file_schemas._COMMIT_SCHEMAS = ByteBoundedCache(file_schemas._COMMIT_SCHEMAS.capacity)
    opened: set[str] = set()
    original = LocalStorage.parquet_metadata

    def spy(self: LocalStorage, file: str) -> Any:
        opened.add(file)
        return original(self, file)

    LocalStorage.parquet_metadata = spy  # type: ignore[method-assign]
    catalog = Catalog(Settings(tables=(f"t={path}",), catalog_db=":memory:", metadata=metadata))
    try:
        # metrics only: distinct-value statistics read every new slice whole
        published = IcebergPublisher(catalog, str(folder), statistics_max_columns=0).publish("t", "snapshot")
    finally:
        catalog.close()
        LocalStorage.parquet_metadata = original  # type: ignore[method-assign]
    files = {}
    for task in StaticTable.from_metadata(published.metadata_location).scan().plan_files():
        f = task.file
        files[f.file_path] = (f.record_count, f.file_size_in_bytes, f.value_counts, f.null_value_counts,
                              f.lower_bounds, f.upper_bounds)
    return files, opened


@pytest.mark.parametrize("recipe", ["mor_metadata_indexes", COW40])
def test_publishing_takes_rows_and_metrics_from_the_stats_and_reads_a_footer_per_commit(
        tables: dict[str, GeneratedTable], recipe: str, tmp_path: Path) -> None:
    generated = tables[recipe]
    with_stats, opened = _published(generated.path, tmp_path / "mdt", metadata=True)
    from_footers, opened_without = _published(generated.path, tmp_path / "plain", metadata=False)
    assert with_stats == from_footers
    assert any(bounds for *_, bounds in with_stats.values())
    # Without: every base file of the published commits; with: one per commit (its schema), and
    # those a merge-on-read slice's logs are merged onto (read to place the position deletes)
    inside = {file for file in opened_without if file.startswith(str(generated.path))}
    commits = {Path(file).stem.rsplit("_", 1)[-1] for file in inside}
    table = shim.open_table(generated.path)
    merged: set[str | None] = set()
    for write in table.snapshot().active_timeline.completed_writes():
        try:
            merged.update(s.base_path(table.path) for s in table.file_slices(as_of=write.requested_time) if s.has_logs)
        except HudiShimError:  # refused after a clean: not published
            continue
    schema_reads = {f for f in opened if f.startswith(table.path) and f not in merged}
    assert len({Path(f).stem.rsplit("_", 1)[-1] for f in schema_reads}) == len(schema_reads)  # one per commit
    assert len(schema_reads) <= len(commits) < len(inside - merged)


@pytest.mark.parametrize("recipe", [*WITH_MDT, COW40])
def test_the_base_files_of_one_commit_share_their_stored_schema(tables: dict[str, GeneratedTable], recipe: str) -> None:
    """What publishing relies on to read one footer per commit (`shim.planning.file_schemas`)."""
    from shim.read import read_file_schema

    table = shim.open_table(tables[recipe].path)
    first: dict[str, pa.Schema] = {}
    for path in Path(table.path).rglob("*.parquet"):
        if ".hoodie" in path.parts:
            continue
        instant = path.stem.rsplit("_", 1)[-1]
        schema = read_file_schema(table.storage, str(path))
        assert schema.equals(first.setdefault(instant, schema), check_metadata=False), path
