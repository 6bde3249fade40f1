"""`dictionary_partitions=True`: partition columns come back dictionary-encoded, holding exactly the
values a plain scan returns, whether they were filled from the partition path, read from files
(the default partition) or merged from log records."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import shim
from shim.planning.partition_fill import ConstantColumns
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("day", pa.int32()),
                    ("v", pa.int64())])
DICTIONARY_CITY = pa.dictionary(pa.int32(), pa.string())
DICTIONARY_DAY = pa.dictionary(pa.int32(), pa.int32())


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> shim.Table:
    built = TinyTable(tmp_path_factory.mktemp("t") / "t", SCHEMA, partition=["city", "day"])
    sf = built.base([{"id": "a", "ts": 1, "city": "sf", "day": 1, "v": 1},
                     {"id": "b", "ts": 1, "city": "sf", "day": 1, "v": 2}], file_id="sf-0", partition="city=sf/day=1")
    built.base([{"id": "c", "ts": 1, "city": "ny", "day": 2, "v": 3}], file_id="ny-0", partition="city=ny/day=2")
    built.base([{"id": "n", "ts": 1, "city": None, "day": 2, "v": 4}], file_id="null-0",
               partition="city=__HIVE_DEFAULT_PARTITION__/day=2")
    built.log([{"id": "a", "ts": 2, "city": "sf", "day": 1, "v": 10},
               {"id": "z", "ts": 2, "city": "sf", "day": 1, "v": 11}], file_id="sf-0", partition="city=sf/day=1",
              base_instant=sf)
    return shim.open_table(built.path)


def rows(data: pa.Table) -> list[dict]:
    return sorted(data.to_pylist(), key=lambda row: row["id"])


@pytest.mark.parametrize("mode", ["snapshot", "read_optimized"])
def test_partition_columns_are_dictionaries_with_the_plain_values(table, mode):
    plain = table.read(mode=mode)
    encoded = table.read(mode=mode, dictionary_partitions=True)
    assert encoded.schema.field("city").type == DICTIONARY_CITY
    assert encoded.schema.field("day").type == DICTIONARY_DAY
    assert encoded.schema.field("v").type == pa.int64()
    assert encoded.schema.field("city").metadata == plain.schema.field("city").metadata  # column id kept
    assert all(chunk.type == DICTIONARY_CITY for chunk in encoded.column("city").chunks)
    assert rows(encoded) == rows(plain)
    expected_v = {"a": 10, "b": 2, "c": 3, "n": 4, "z": 11} if mode == "snapshot" else {"a": 1, "b": 2, "c": 3, "n": 4}
    assert {r["id"]: r["v"] for r in rows(encoded)} == expected_v
    assert {r["id"]: r["city"] for r in rows(encoded)}["n"] is None


@pytest.mark.parametrize("row_filter", [
    "city = 'sf'",
    "city IS NULL",
    "day = 2 AND v > 3",
    pc.field("city").isin(["ny", "sf"]) & (pc.field("v") >= 2),
    pc.field("day") == 1,
], ids=str)
def test_filters_select_the_same_rows(table, row_filter):
    plain = table.read(filter=row_filter, columns=["id", "city", "day"])
    encoded = table.read(filter=row_filter, columns=["id", "city", "day"], dictionary_partitions=True)
    assert rows(encoded) == rows(plain)
    assert plain.num_rows > 0


def test_projection_without_partition_columns_is_unchanged(table):
    assert table.read(columns=["id", "v"], dictionary_partitions=True).schema == table.read(columns=["id", "v"]).schema


def test_non_partitioned_tables_ignore_the_option(tmp_path):
    built = TinyTable(tmp_path / "t", SCHEMA)
    built.base([{"id": "a", "ts": 1, "city": "sf", "day": 1, "v": 1}])
    opened = shim.open_table(built.path)
    assert opened.read(dictionary_partitions=True).equals(opened.read())


def test_constant_dictionaries_share_their_indices():
    constants = ConstantColumns()
    first = constants.column(pa.scalar("sf"), 5, dictionary=True)
    second = constants.column(pa.scalar(7, pa.int32()), 3, dictionary=True)
    assert first.to_pylist() == ["sf"] * 5 and second.to_pylist() == [7] * 3
    assert first.indices.buffers()[1].address == second.indices.buffers()[1].address


def test_constant_dictionaries_grow_and_shrink_with_the_batch():
    constants = ConstantColumns()
    small = constants.column(pa.scalar("sf"), 2, dictionary=True)
    large = constants.column(pa.scalar("sf"), 9, dictionary=True)
    other = constants.column(pa.scalar("nyc"), 4, dictionary=True)
    again = constants.column(pa.scalar("sf"), 3, dictionary=True)
    assert (small.to_pylist(), large.to_pylist(), other.to_pylist(), again.to_pylist()) == (
        ["sf"] * 2, ["sf"] * 9, ["nyc"] * 4, ["sf"] * 3)
    assert again.type == pa.dictionary(pa.int32(), pa.string())
    assert constants.column(pa.scalar(None, pa.string()), 2, dictionary=True).to_pylist() == [None, None]
