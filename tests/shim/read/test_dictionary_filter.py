"""Filters on a column read as dictionary indices are decided once per dictionary entry, before
the column is decoded: the rows kept are the ones a row-by-row filter keeps, nulls included."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import shim
from shim.read.base_files import dictionary_columns, iter_parquet_in_order
from shim.read.dictionary_filter import dictionary_mask, only_column
from tests.local import LOCAL
from tests.tablekit import TinyTable

ROWS = 6_000
CITY = pc.field("city")
FILTERS = [
    CITY == "c3",
    CITY != "c3",
    CITY.isin(["c1", "c4", "nowhere"]),
    CITY.is_null(),
    CITY.is_valid(),
    ~(CITY == "c2"),
    (CITY == "c2") | CITY.is_null(),
    pc.coalesce(CITY, pa.scalar("c0")) == "c0",
    CITY >= "c5",
    CITY == "nowhere",
]


def _data() -> pa.Table:
    return pa.table({
        "city": pa.array([None if i % 13 == 0 else f"c{i % 7}" for i in range(ROWS)], pa.string()),
        "n": pa.array(range(ROWS), pa.int64()),
    })


@pytest.mark.parametrize("expression", FILTERS, ids=str)
def test_a_mask_decided_per_entry_keeps_what_the_row_filter_keeps(expression):
    city = _data().column("city").combine_chunks()
    encoded = city.dictionary_encode()
    mask = dictionary_mask(encoded, "city", expression)
    expected = pa.table({"city": city}).filter(expression).column("city").to_pylist()
    assert city.filter(mask).to_pylist() == expected


def test_only_a_filter_on_one_column_is_decided_on_the_dictionary():
    schema = pa.schema([("city", pa.string()), ("n", pa.int64())])
    assert only_column(CITY == "c1", schema) == "city"
    assert only_column((CITY == "c1") & (pc.field("n") > 3), schema) is None
    assert only_column(pc.field("n") > 3, schema) == "n"


class _AsStored:
    def __init__(self, columns: list[str]) -> None:
        self.read_columns = tuple(columns)
        self.passthrough = {name: name for name in columns}

    def apply(self, data: pa.RecordBatch) -> pa.RecordBatch:
        return data


@pytest.mark.parametrize("row_group_size", [ROWS, 1_000], ids=["at-once", "streamed"])
@pytest.mark.parametrize("expression", FILTERS, ids=str)
def test_file_reads_filtered_on_a_dictionary_column_give_the_rows_of_the_plain_filter(tmp_path, expression,
                                                                                       row_group_size):
    path = str(tmp_path / "f.parquet")
    data = _data()
    pq.write_table(data, path, row_group_size=row_group_size)
    assert dictionary_columns(LOCAL, path, ["city", "n"]) == ["city"]
    keep = pa.array([i % 5 != 0 for i in range(ROWS)])
    read = [batch for _, batch in iter_parquet_in_order(LOCAL, path, _AsStored(["city", "n"]), keep=keep, batch_size=700,
                                                         before_plan=expression)]
    assert all(batch.num_rows <= 700 and batch.schema == data.schema for batch in read)
    assert pa.Table.from_batches(read, data.schema).equals(data.filter(keep).filter(expression))


@pytest.mark.parametrize("mor", [False, True], ids=["cow", "mor"])
def test_table_reads_filtered_on_a_dictionary_column_give_the_filtered_rows(tmp_path, mor):
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string())])
    table = TinyTable(tmp_path / "t", schema, mor=mor)
    rows = [{"id": f"k{i:05d}", "ts": 1, "city": None if i % 11 == 0 else f"c{i % 5}"} for i in range(4_000)]
    base = table.base(rows)
    if mor:
        table.log([{"id": "k00003", "ts": 2, "city": "c1"}, {"id": "k00006", "ts": 2, "city": None}],
                  base_instant=base)
    opened = shim.open_table(table.path)
    everything = opened.read()
    for text, expression in [("city = 'c1'", CITY == "c1"), ("city IS NULL", CITY.is_null()),
                             ("city IN ('c2', 'c3')", CITY.isin(["c2", "c3"])), ("city <> 'c4'", CITY != "c4")]:
        wanted = everything.filter(expression).sort_by("id")
        assert opened.read(filter=text).sort_by("id").equals(wanted), text
        assert opened.read(filter=expression, mode="read_optimized").sort_by("id").equals(
            opened.read(mode="read_optimized").filter(expression).sort_by("id")), text
