"""The value range a date folder bounds, at its edges: every value that formats into the folder
falls inside (fractions, finer units truncated toward zero), and the neighbours' values do not."""

from __future__ import annotations

import pyarrow as pa
import pytest

from shim.keys.timestamp_keygen import TimestampPartitioning
from shim.planning.timestamp_ranges import partition_ranges
from shim.properties import TableConfig

P = "hoodie.keygen.timebased."
MARCH_2_MS = 1_709_337_600_000  # 2024-03-02T00:00Z


def config(kind: str, fmt: str = "yyyy-MM-dd", zone: str = "UTC") -> TableConfig:
    return TableConfig({
        "hoodie.table.name": "t", "hoodie.table.version": "6", "hoodie.table.type": "COPY_ON_WRITE",
        "hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "v",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        P + "timestamp.type": kind, P + "output.dateformat": fmt, P + "timezone": zone,
    })


@pytest.mark.parametrize(("kind", "column_type", "inside", "outside"), [
    ("UNIX_TIMESTAMP", pa.float64(), [1709251200.0, 1709337599.999], [1709251199.0, 1709337601.0]),
    ("UNIX_TIMESTAMP", pa.int64(), [1709251200, 1709337599], [1709251199, 1709337600]),
    ("EPOCHMILLISECONDS", pa.int64(), [MARCH_2_MS - 86_400_000, MARCH_2_MS - 1], [MARCH_2_MS, MARCH_2_MS - 86_400_001]),
    ("EPOCHMICROSECONDS", pa.int64(), [(MARCH_2_MS - 86_400_000) * 1000, MARCH_2_MS * 1000 - 1],
     [MARCH_2_MS * 1000, (MARCH_2_MS - 86_400_000) * 1000 - 1000]),
])
def test_the_edges_of_a_day(kind: str, column_type: pa.DataType, inside: list[float], outside: list[float]) -> None:
    settings = TimestampPartitioning.from_options({P + "timestamp.type": kind, P + "output.dateformat": "yyyy-MM-dd",
                                                   P + "timezone": "UTC"})
    assert settings.values(pa.array(inside, column_type), "v").to_pylist() == ["2024-03-01"] * 2  # the premise
    span = partition_ranges("2024-03-01", config(kind), pa.schema([("v", column_type)]))["v"]
    assert all(span.low <= v <= span.high for v in inside), span
    assert not any(span.low <= v <= span.high for v in outside if column_type == pa.int64()), span
    assert not span.nullable


def test_the_folder_of_the_instant_one_holds_the_nulls() -> None:
    span = partition_ranges("1970-01-01", config("UNIX_TIMESTAMP"), pa.schema([("v", pa.int64())]))["v"]
    assert span.nullable and span.low <= 1 <= span.high


def test_no_range_where_values_do_not_compare_as_times() -> None:
    assert partition_ranges("2024-03-01", config("UNIX_TIMESTAMP"), pa.schema([("v", pa.string())])) == {}
    assert partition_ranges("2024-03-01", config("UNIX_TIMESTAMP", fmt="dd/MM"), pa.schema([("v", pa.int64())])) == {}
    assert partition_ranges("03/2024", config("UNIX_TIMESTAMP", fmt="MM/yyyy"), pa.schema([("v", pa.int64())])) != {}
