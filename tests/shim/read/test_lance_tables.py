"""Tables Apache Hudi 1.2 wrote with Lance base files (hudi-rs's test data, from the `hudi` sdist on
PyPI) read exactly as hudi-rs 0.5 reads them: both views, projections, filters, time travel to
every commit and incremental reads from every commit; key lookups skip Lance files by the bloom
filter Hudi keeps in their schema metadata."""

from __future__ import annotations

import os
import shutil
import sys

import pyarrow as pa
import pytest

import shim
from shim.errors import CorruptFileError, UnsupportedFeatureError
from shim.read import lance_files, parquet_footer, read_file_schema
from shim.read.key_lookup import files_with_any
from shim.write.job import plan_write
from shim.write.services.compaction import compact
from tests.local import LOCAL

hudi = pytest.importorskip("hudi", reason="hudi-rs (pip install hudi) is a test dependency")

NAMES = [
    "sample__cow__v9_lance_nonpartitioned",
    "sample__cow__v9_lance_txns_nonpart",
    "sample__cow__v9_lance_txns_simple",
    "sample__mor__avro__v9_lance_nonhivestyle",
    "trips__cow__v9_trips_lance",
    "trips__mor__avro__v9_trips_lance",
]
# Per table: columns to project and a filter (hudi-rs's triples; the shim takes the same list).
QUERIES = {
    "sample__cow__v9_lance_nonpartitioned": (["id", "name", "tags", "score"], [("score", ">", "0.9"), ("category", "!=", "nlp")]),
    "sample__cow__v9_lance_txns_nonpart": (["txn_id", "amount", "txn_datetime", "txn_date"],
                                           [("currency", "=", "USD"), ("txn_type", "!=", "refund")]),
    "sample__cow__v9_lance_txns_simple": (["txn_id", "region", "fee_amount"], [("region", "!=", "apac"), ("txn_type", "=", "debit")]),
    "sample__mor__avro__v9_lance_nonhivestyle": (["event_id", "payload", "event_ts"],
                                                 [("user_id", "=", "user-100")]),
    "trips__cow__v9_trips_lance": (["uuid", "rider", "fare"], [("fare", ">", "20"), ("city", "!=", "chennai")]),
    "trips__mor__avro__v9_trips_lance": (["uuid", "fare", "city"], [("fare", "<=", "40")]),
}


def _hudi_rs(path, mode: str = "snapshot", **options) -> pa.Table:
    read = hudi.HudiReadOptions(filters=options.pop("filters", None), projection=options.pop("projection", None))
    if mode == "read_optimized":
        read = read.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    if "as_of" in options:
        read = read.with_as_of_timestamp(options.pop("as_of"))
    if "start" in options:
        read = read.with_query_type(hudi.HudiQueryType.Incremental).with_start_timestamp(options.pop("start"))
    assert not options
    return pa.Table.from_batches(hudi.HudiTable(str(path)).read(read))


def _rows(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda row: repr(sorted(row.items(), key=lambda kv: kv[0])))


def _completed(table: shim.Table) -> list[str]:
    return [i.requested_time for i in table.timeline() if i.state.name == "COMPLETED"]


def test_hudi_rs_sdist_holds_six_lance_tables_cow_and_mor(lance_tables):
    assert sorted(lance_tables) == NAMES
    formats = {name: shim.open_table(path).config.base_file_format for name, path in lance_tables.items()}
    assert set(formats.values()) == {"LANCE"}


@pytest.mark.parametrize("mode", ["snapshot", "read_optimized"])
@pytest.mark.parametrize("name", NAMES)
def test_lance_table_rows_meta_columns_and_types_equal_hudi_rs(lance_tables, name, mode):
    path = lance_tables[name]
    theirs = _hudi_rs(path, mode)
    ours = shim.open_table(path).read(mode=mode, include_meta=True)
    assert ours.num_rows > 0
    assert ours.column_names == theirs.column_names
    assert [f.type for f in ours.schema] == [f.type for f in theirs.schema]
    assert _rows(ours) == _rows(theirs)


@pytest.mark.parametrize("mode", ["snapshot", "read_optimized"])
@pytest.mark.parametrize("name", NAMES)
def test_lance_table_projection_and_filter_equal_hudi_rs(lance_tables, name, mode):
    path = lance_tables[name]
    columns, filters = QUERIES[name]
    theirs = _hudi_rs(path, mode, filters=filters, projection=columns)
    ours = shim.open_table(path).read(mode=mode, columns=columns, filter=filters)
    everything = shim.open_table(path).read(mode=mode)
    assert 0 < ours.num_rows < everything.num_rows  # the filter keeps some rows, not all
    assert ours.column_names == columns
    assert _rows(ours) == _rows(theirs.select(columns))


@pytest.mark.parametrize("name", NAMES)
def test_lance_table_time_travel_and_incremental_reads_equal_hudi_rs_at_every_commit(lance_tables, name):
    path = lance_tables[name]
    table = shim.open_table(path)
    instants = _completed(table)
    assert len(instants) >= 4
    for instant in instants:
        assert _rows(table.read(as_of=instant, include_meta=True)) == _rows(_hudi_rs(path, as_of=instant)), instant
    for start in instants[:-1]:
        ours = table.incremental(start, include_meta=True)
        assert _rows(ours) == _rows(_hudi_rs(path, start=start)), start


def test_merge_on_read_lance_slice_takes_its_log_update(lance_tables):
    table = shim.open_table(lance_tables["sample__mor__avro__v9_lance_nonhivestyle"])
    [logged] = [s for s in table.file_slices() if s.log_files]
    assert logged.base_file is not None and logged.base_file.name.endswith(".lance")
    query = {"columns": ["event_id", "payload", "event_ts"], "filter": "event_id = 'evt-001'"}
    assert table.read(**query).to_pylist() == [
        {"event_id": "evt-001", "payload": '{"page": "/home", "session": "sess-abc123"}', "event_ts": 1700000000001}]
    assert table.read(mode="read_optimized", **query).to_pylist() == [
        {"event_id": "evt-001", "payload": '{"page": "/home"}', "event_ts": 1700000000000}]


@pytest.mark.parametrize("name", ["trips__cow__v9_trips_lance", "trips__mor__avro__v9_trips_lance"])
def test_key_lookup_skips_lance_files_by_their_bloom_filter(lance_tables, name):
    table = shim.open_table(lance_tables[name])
    key = "334e26e9-8355-45cc-97c6-c31daf0df330"  # rider-A, in one file group of san_francisco
    paths = [s.base_path(table.path) for s in table.file_slices()]
    assert all(p is not None and p.endswith(".lance") for p in paths)
    holding = files_with_any(LOCAL, paths, frozenset([key]))
    assert 0 < len(holding) < len(paths)
    assert files_with_any(LOCAL, paths, frozenset(["no-such-key"])) == []
    rows = table.read(columns=["uuid", "rider"], filter=f"uuid = '{key}'").to_pylist()
    assert rows == [{"uuid": key, "rider": "rider-A"}]


def test_lance_base_file_footer_schema_and_previews(lance_tables):
    table = shim.open_table(lance_tables["sample__cow__v9_lance_nonpartitioned"])
    path = table.file_slices()[0].base_path(table.path)
    assert path is not None
    schema = read_file_schema(LOCAL, path)
    assert schema.names[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                                "_hoodie_partition_path", "_hoodie_file_name"]
    assert schema.field("tags").type == pa.list_(pa.string())
    footer = parquet_footer(LOCAL, path)
    assert footer.num_row_groups == 0
    assert footer.num_rows == lance_files.lance_footer(LOCAL, path).num_rows > 0
    assert b"org.apache.hudi.bloomfilter" in footer.metadata
    preview = table.read(limit=3)
    assert preview.num_rows == 3
    assert all(row in table.read().to_pylist() for row in preview.to_pylist())
    encoded = table.scan(dictionary_strings=True).read_all()
    assert _rows(encoded.cast(table.read().schema)) == _rows(table.read())


def test_damaged_lance_file_is_an_error_naming_it(lance_tables, tmp_path):
    copy = shutil.copytree(lance_tables["trips__cow__v9_trips_lance"], tmp_path / "t")
    table = shim.open_table(copy)
    path = table.file_slices()[0].base_path(table.path)
    assert path is not None
    with open(path, "r+b") as handle:
        handle.truncate(os.path.getsize(path) // 2)  # the footer gone
    with pytest.raises(CorruptFileError) as info:
        shim.open_table(copy).read()
    assert info.value.path == path
    assert path in str(info.value)


def test_writes_and_compactions_of_lance_tables_are_refused(lance_tables):
    mor = str(lance_tables["trips__mor__avro__v9_trips_lance"])
    options = {"hoodie.table.name": "v9_trips_lance_mor", "hoodie.datasource.write.recordkey.field": "uuid"}
    with pytest.raises(UnsupportedFeatureError, match="cannot write to it: the table keeps its base files in LANCE"):
        plan_write(mor, options, pa.schema([("uuid", pa.string()), ("ts", pa.int64())]))
    with pytest.raises(UnsupportedFeatureError, match="cannot compact it: the table keeps its base files in LANCE"):
        compact(mor)


def test_without_pylance_reading_a_lance_file_names_the_extra(lance_tables, monkeypatch, tmp_path):
    copy = shutil.copytree(lance_tables["trips__cow__v9_trips_lance"], tmp_path / "t")
    lance_files._lance_file_module.cache_clear()
    monkeypatch.setitem(sys.modules, "lance", None)  # what `import lance` meets where it is not installed
    monkeypatch.setitem(sys.modules, "lance.file", None)
    try:
        with pytest.raises(ImportError, match=r"pip install 'hudi-shim\[lance\]'"):
            shim.open_table(copy).read()
    finally:
        lance_files._lance_file_module.cache_clear()
