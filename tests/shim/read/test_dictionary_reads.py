"""String columns stored as dictionary indices are read as dictionaries and decoded in one pass:
which columns qualify, and that scans return the same values and types as a value-by-value read."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import shim
from shim.read.base_files import dictionary_columns, iter_parquet_in_order, read_file_schema, scan_parquet
from tests.local import LOCAL
from tests.tablekit import EvolvingTable, TinyTable, rename

ROWS = 20_000


def _columns(rows: int) -> dict[str, pa.Array]:
    return {
        "city": pa.array([None if i % 97 == 0 else f"city-{i % 9}" for i in range(rows)], pa.string()),
        "unique": pa.array([f"a-long-unique-value-{i:012d}" for i in range(rows)], pa.string()),
        "blob": pa.array([f"b{i % 5}".encode() for i in range(rows)], pa.binary()),
        "n": pa.array(range(rows), pa.int64()),
    }


def test_low_cardinality_string_and_binary_columns_are_read_as_dictionaries(tmp_path):
    path = str(tmp_path / "f.parquet")
    # A small dictionary page limit: the unique column falls back to plain pages, as Parquet
    # writers do once a column's dictionary grows too big.
    pq.write_table(pa.table(_columns(ROWS)), path, dictionary_pagesize_limit=16_384)
    assert dictionary_columns(LOCAL, path, ["city", "unique", "blob", "n"]) == ["city", "blob"]
    assert dictionary_columns(LOCAL, path, ["n", "unique"]) == []


def test_columns_written_without_dictionaries_are_read_as_they_are(tmp_path):
    path = str(tmp_path / "f.parquet")
    pq.write_table(pa.table(_columns(ROWS)), path, use_dictionary=["blob"])
    assert dictionary_columns(LOCAL, path, ["city", "unique", "blob"]) == ["blob"]


def test_a_column_that_falls_back_in_any_row_group_is_not_read_as_a_dictionary(tmp_path):
    path = str(tmp_path / "f.parquet")
    low = pa.table({"c": pa.array([f"v{i % 3}" for i in range(ROWS)])})
    high = pa.table({"c": pa.array([f"a-long-unique-value-{i:012d}" for i in range(ROWS)])})
    with pq.ParquetWriter(path, low.schema, dictionary_pagesize_limit=16_384) as writer:
        writer.write_table(low)
        writer.write_table(high)
    assert pq.ParquetFile(path).metadata.num_row_groups == 2
    assert dictionary_columns(LOCAL, path, ["c"]) == []


class _AsStored:
    """A plan reading the file's columns unchanged."""

    def __init__(self, columns: list[str]) -> None:
        self.read_columns = tuple(columns)
        self.passthrough = {name: name for name in columns}

    def apply(self, data: pa.RecordBatch) -> pa.RecordBatch:
        return data


def test_readers_hand_on_batches_of_the_files_own_types(tmp_path):
    path = str(tmp_path / "f.parquet")
    data = pa.table(_columns(ROWS))
    pq.write_table(data, path, row_group_size=7_000)
    plan = _AsStored(["city", "blob", "n"])
    keep = pa.array([i % 3 != 0 for i in range(ROWS)])
    ordered = [batch for _, batch in iter_parquet_in_order(LOCAL, path, plan, keep=keep, batch_size=4_096)]
    scanned = list(scan_parquet(LOCAL, [path], read_file_schema(LOCAL, path), plan, None))
    for batches, wanted in ((ordered, data.select(plan.read_columns).filter(keep)),
                            (scanned, data.select(plan.read_columns))):
        assert all(batch.schema == wanted.schema for batch in batches)
        assert pa.Table.from_batches(batches).sort_by("n").equals(wanted.sort_by("n"))


SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("note", pa.binary())])


def _rows(first: int, count: int, ts: int) -> list[dict]:
    return [{"id": f"k{i:06d}", "ts": ts, "city": None if i % 31 == 0 else f"c{i % 4}",
             "note": f"n{i % 3}-{ts}".encode()} for i in range(first, first + count)]


def _by_id(table: pa.Table) -> dict[str, dict]:
    return {row["id"]: row for row in table.to_pylist()}


@pytest.mark.parametrize("mor", [False, True], ids=["cow", "mor"])
def test_scans_return_the_stored_values_with_plain_types(tmp_path, mor):
    built = TinyTable(tmp_path / "t", SCHEMA, mor=mor)
    base = built.base(_rows(0, 6_000, 1), file_id="fg1-0")
    built.base(_rows(6_000, 6_000, 1), file_id="fg2-0")
    stored = [p for p in built.path.glob("*.parquet") if p.name.startswith("fg1-0")]
    assert dictionary_columns(LOCAL, str(stored[0]), ["id", "city", "note"]) == ["city", "note"]
    expected = _by_id(pa.Table.from_pylist(_rows(0, 12_000, 1), schema=SCHEMA))
    if mor:
        updates = _rows(100, 50, 2)
        built.log(updates, file_id="fg1-0", base_instant=base)
        expected.update(_by_id(pa.Table.from_pylist(updates, schema=SCHEMA)))
    table = shim.open_table(built.path)
    for mode in ("snapshot", "read_optimized"):
        result = table.read(mode=mode, columns=["id", "city", "note"])
        assert result.schema.field("city").type == pa.string()
        assert result.schema.field("note").type == pa.binary()
        assert all(not pa.types.is_dictionary(chunk.type) for column in result.columns for chunk in column.chunks)
        want = expected if mode == "snapshot" else _by_id(pa.Table.from_pylist(_rows(0, 12_000, 1), schema=SCHEMA))
        assert _by_id(result) == {k: {"id": v["id"], "city": v["city"], "note": v["note"]} for k, v in want.items()}
    filtered = table.read(columns=["id", "city"], filter="city = 'c1'")
    assert sorted(filtered.column("id").to_pylist()) == sorted(
        k for k, v in expected.items() if v["city"] == "c1")
    preview = table.read(columns=["city"], limit=10)
    assert preview.num_rows == 10 and preview.schema.field("city").type == pa.string()


def test_a_renamed_dictionary_column_reads_under_its_new_name(tmp_path):
    built = EvolvingTable(tmp_path / "t", pa.schema([("id", pa.string()), ("ts", pa.int64()), ("f1", pa.string())]))
    built.base([{"id": f"k{i}", "ts": 1, "f1": f"v{i % 3}"} for i in range(3_000)])
    built.alter(rename("f1", "label"))
    result = shim.open_table(built.path).read(columns=["id", "label"])
    assert result.schema.field("label").type == pa.string()
    assert {row["id"]: row["label"] for row in result.to_pylist()} == {f"k{i}": f"v{i % 3}" for i in range(3_000)}


def test_a_small_file_of_one_row_group_is_read_at_once_and_gives_what_streaming_gives(tmp_path, monkeypatch):
    from shim.read import base_files

    small, grouped = str(tmp_path / "small.parquet"), str(tmp_path / "grouped.parquet")
    data = pa.table(_columns(ROWS))
    pq.write_table(data, small)
    pq.write_table(data, grouped, row_group_size=7_000)
    assert base_files._read_at_once(pq.read_metadata(small), ["city", "n"])
    assert not base_files._read_at_once(pq.read_metadata(grouped), ["city", "n"])
    plan = _AsStored(["city", "blob", "n"])
    keep = pa.array([i % 3 != 0 for i in range(ROWS)])

    def reads() -> tuple[list[pa.RecordBatch], list[pa.RecordBatch]]:
        ordered = [batch for _, batch in iter_parquet_in_order(LOCAL, small, plan, keep=keep, batch_size=4_096)]
        return ordered, list(scan_parquet(LOCAL, [small], read_file_schema(LOCAL, small), plan, None, batch_size=4_096))

    at_once = reads()
    monkeypatch.setattr(base_files, "_AT_ONCE_BYTES", 0)
    assert not base_files._read_at_once(pq.read_metadata(small), ["n"])
    streamed = reads()
    for got, wanted in zip(at_once, streamed, strict=True):
        assert all(batch.num_rows <= 4_096 for batch in got)
        assert all(batch.schema == wanted[0].schema for batch in got + wanted)
        assert pa.Table.from_batches(got).equals(pa.Table.from_batches(wanted))
    assert pa.Table.from_batches(at_once[0]).equals(data.select(plan.read_columns).filter(keep))


@pytest.mark.parametrize("mor", [False, True], ids=["cow", "mor"])
def test_table_scans_give_the_same_rows_whether_files_are_read_at_once_or_streamed(tmp_path, monkeypatch, mor):
    from shim.read import base_files

    built = TinyTable(tmp_path / "t", SCHEMA, mor=mor)
    base = built.base(_rows(0, 3_000, 1), file_id="fg1-0")
    expected = _by_id(pa.Table.from_pylist(_rows(0, 3_000, 1), schema=SCHEMA))
    if mor:
        built.log(_rows(10, 40, 2), file_id="fg1-0", base_instant=base)
        expected.update(_by_id(pa.Table.from_pylist(_rows(10, 40, 2), schema=SCHEMA)))
    wanted = {k: v for k, v in expected.items() if v["city"] == "c1"}
    results = {}
    default = base_files._AT_ONCE_BYTES
    for threshold in (default, 0):
        monkeypatch.setattr(base_files, "_AT_ONCE_BYTES", threshold)
        table = shim.open_table(built.path)  # a table of its own: no merge remembered from the other read
        results[threshold] = [table.read(mode=mode, filter="city = 'c1'").sort_by("id")
                              for mode in ("snapshot", "snapshot", "read_optimized")]
    at_once, streamed = results[default], results[0]
    assert _by_id(at_once[0]) == wanted and _by_id(at_once[1]) == wanted  # merged, then remembered
    for got, reference in zip(at_once, streamed, strict=True):
        assert got.equals(reference)
