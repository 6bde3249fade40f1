"""`dictionary_strings=True`: string columns that data files store as dictionaries come back
dictionary-encoded, holding exactly the values a plain scan returns; columns the filter or the
merge compares, and columns of distinct values, stay plain."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import shim
from shim.planning.planner import build_scan, stored_dictionaries
from shim.scan_options import ScanOptions
from shim.storage import as_storage
from tests.tablekit import EvolvingTable, TinyTable, rename

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("tag", pa.string()),
                    ("v", pa.int64())])
DICTIONARY = pa.dictionary(pa.int32(), pa.string())


def _rows(first: int, count: int, ts: int) -> list[dict]:
    return [{"id": f"k{i:06d}", "ts": ts, "city": None if i % 31 == 0 else f"c{i % 4}", "tag": f"t{i % 7}-{ts}",
             "v": i * ts} for i in range(first, first + count)]


def _by_id(data: pa.Table) -> dict[str, dict]:
    return {row["id"]: row for row in data.to_pylist()}


@pytest.fixture(scope="module", params=[False, True], ids=["cow", "mor"])
def built(request, tmp_path_factory) -> tuple[str, dict[str, dict], dict[str, dict]]:
    """A table, the rows of its snapshot and of its read-optimized view."""
    table = TinyTable(tmp_path_factory.mktemp("t") / "t", SCHEMA, mor=request.param)
    base = table.base(_rows(0, 6_000, 1), file_id="fg1-0")
    table.base(_rows(6_000, 4_000, 1), file_id="fg2-0")
    read_optimized = _by_id(pa.Table.from_pylist(_rows(0, 10_000, 1), schema=SCHEMA))
    snapshot = dict(read_optimized)
    if request.param:
        updates = _rows(100, 60, 2)
        table.log(updates, file_id="fg1-0", base_instant=base)
        snapshot.update(_by_id(pa.Table.from_pylist(updates, schema=SCHEMA)))
    return str(table.path), snapshot, read_optimized


def _decoded(data: pa.Table) -> pa.Table:
    return pa.table({name: data.column(name).cast(data.column(name).type.value_type)
                     if pa.types.is_dictionary(data.column(name).type) else data.column(name)
                     for name in data.column_names})


@pytest.mark.parametrize("at_once", [True, False], ids=["at-once", "streamed"])
def test_dictionary_stored_strings_come_back_as_dictionaries_with_the_plain_values(built, at_once, monkeypatch):
    from shim.read import base_files

    if not at_once:  # files go through the dataset scanner, batch by batch
        monkeypatch.setattr(base_files, "_AT_ONCE_BYTES", 0)
    path, snapshot, read_optimized = built
    table = shim.open_table(path)  # its own merge cache: the first read merges, the second remembers
    for mode, expected in (("snapshot", snapshot), ("snapshot", snapshot), ("read_optimized", read_optimized)):
        got = table.scan(mode=mode, dictionary_strings=True).read_all()
        assert got.schema.field("city").type == DICTIONARY
        assert got.schema.field("tag").type == DICTIONARY
        assert got.schema.field("id").type == pa.string()  # distinct values: stored plain
        assert got.schema.field("city").metadata == table.read(columns=["city"]).schema.field("city").metadata
        assert all(chunk.type == DICTIONARY for chunk in got.column("tag").chunks)
        assert _by_id(_decoded(got)) == expected, mode


def test_a_filtered_column_stays_plain_and_the_filter_holds(built):
    path, snapshot, _ = built
    table = shim.open_table(path)
    got = table.scan(filter="city = 'c1' AND v >= 50", columns=["id", "city", "tag"], dictionary_strings=True).read_all()
    assert got.schema.field("city").type == pa.string()
    assert got.schema.field("tag").type == DICTIONARY
    wanted = {k: {"id": k, "city": r["city"], "tag": r["tag"]} for k, r in snapshot.items()
              if r["city"] == "c1" and r["v"] >= 50}
    assert wanted and _by_id(_decoded(got)) == wanted


def test_a_limited_read_returns_dictionaries_too(built):
    path, snapshot, _ = built
    got = shim.open_table(path).scan(columns=["id", "tag"], limit=10, dictionary_strings=True).read_all()
    assert got.num_rows == 10 and got.schema.field("tag").type == DICTIONARY
    assert all(snapshot[row["id"]]["tag"] == row["tag"] for row in _decoded(got).to_pylist())


def test_a_renamed_column_is_kept_as_a_dictionary_under_its_new_name(tmp_path):
    built = EvolvingTable(tmp_path / "t", pa.schema([("id", pa.string()), ("ts", pa.int64()), ("f1", pa.string())]))
    built.base([{"id": f"k{i}", "ts": 1, "f1": f"v{i % 3}"} for i in range(3_000)])
    built.alter(rename("f1", "label"))
    built.base([{"id": f"n{i}", "ts": 2, "label": f"w{i % 2}"} for i in range(3_000)], file_id="fg2-0")
    got = shim.open_table(built.path).scan(columns=["id", "label"], dictionary_strings=True).read_all()
    assert got.schema.field("label").type == DICTIONARY
    assert all(chunk.type == DICTIONARY for chunk in got.column("label").chunks)
    expected = {f"k{i}": f"v{i % 3}" for i in range(3_000)} | {f"n{i}": f"w{i % 2}" for i in range(3_000)}
    assert {row["id"]: row["label"] for row in _decoded(got).to_pylist()} == expected


def test_compared_columns_and_distinct_values_are_not_chosen(built):
    path, _, _ = built
    table = shim.open_table(path)
    plain = build_scan(table.snapshot(), ScanOptions())
    assert stored_dictionaries(as_storage(path), plain.slices, plain.output_schema, set()) == ["city", "tag"]
    assert stored_dictionaries(as_storage(path), plain.slices, plain.output_schema, {"tag"}) == ["city"]
    assert stored_dictionaries(as_storage(path), [], plain.output_schema, set()) == []
    assert plain.dictionaries == frozenset()
    assert build_scan(table.snapshot(), ScanOptions(dictionary_strings=True)).dictionaries == frozenset({"city", "tag"})


def test_partition_columns_come_back_as_dictionaries(tmp_path):
    built = TinyTable(tmp_path / "t", SCHEMA, partition=["city"])
    built.base([{"id": "a", "ts": 1, "city": "sf", "tag": "x", "v": 1}], file_id="sf-0", partition="city=sf")
    got = shim.open_table(built.path).scan(dictionary_strings=True).read_all()
    assert got.schema.field("city").type == DICTIONARY
    assert _decoded(got).to_pylist() == [{"id": "a", "ts": 1, "city": "sf", "tag": "x", "v": 1}]


def test_a_base_file_gone_at_planning_leaves_the_choice_to_the_read(tmp_path):
    from shim.errors import FileGoneError

    built = TinyTable(tmp_path / "t", SCHEMA, mor=False)
    built.base(_rows(0, 3_000, 1))
    table = shim.open_table(built.path)
    plain = build_scan(table.snapshot(), ScanOptions())
    [path] = [s.base_path(str(built.path)) for s in plain.slices]
    assert path is not None
    os.remove(path)
    assert stored_dictionaries(as_storage(str(built.path)), plain.slices, plain.output_schema, set()) == []
    with pytest.raises(FileGoneError, match="is gone"):  # the read names the file
        table.scan(dictionary_strings=True).read_all()


@pytest.mark.parametrize("row_filter", [
    "city = 'c1'", "city IS NULL", "tag != 't3-1'", "v >= 5000 OR city = 'c2'", "tag IN ('t1-1', 't5-2')",
    "v < 100 AND tag = 't2-1'", "city > 'c1'", "tag NOT IN ('t1-1')", pc.field("tag") == "t4-1",
], ids=str)
@pytest.mark.parametrize("mode", ["snapshot", "read_optimized"])
def test_filtered_reads_with_dictionaries_equal_plain_reads(built, mode, row_filter):
    path, _, _ = built
    table = shim.open_table(path)
    plain = table.read(mode=mode, filter=row_filter)
    kept = table.scan(mode=mode, filter=row_filter, dictionary_strings=True).read_all()
    assert plain.num_rows > 0
    assert _by_id(_decoded(kept)) == _by_id(plain)
    for limit in (1, 7):
        few = table.scan(mode=mode, filter=row_filter, dictionary_strings=True, limit=limit).read_all()
        assert few.num_rows == limit and all(_by_id(plain)[r["id"]] == r for r in _decoded(few).to_pylist())
