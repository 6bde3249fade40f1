"""Filters on the source column of date partitions skip the partitions that cannot match, and
never a row that does: every filter's rows equal the whole table's rows filtered afterwards."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import shim
from shim.filters import bind, to_arrow_expression
from shim.filters.expr import CompareOp
from shim.filters.parse import parse_filter
from shim.filters.partition import ValueRange, evaluate_on_partition
from shim.planning.planner import build_scan
from shim.scan_options import ScanOptions
from tests.writekit import write

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("secs", pa.int64())])
DST_START = 1711846800  # 2024-03-31T01:00Z: Paris skips 02:00-03:00
DST_END = 1729990800  # 2024-10-27T01:00Z: Paris repeats 02:00-03:00
BY_HOUR_IN_PARIS = {
    "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
    "hoodie.datasource.write.partitionpath.field": "region:SIMPLE,secs:TIMESTAMP",
    "hoodie.datasource.write.hive_style_partitioning": "true",
    "hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP",
    "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd/HH",
    "hoodie.keygen.timebased.timezone": "Europe/Paris",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
}


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> shim.Table:
    path: Path = tmp_path_factory.mktemp("pruning") / "t"
    rng = random.Random(3)
    seconds = [edge + rng.randint(-4 * 3600, 4 * 3600) for edge in (DST_START, DST_END) for _ in range(60)]
    rows = [{"id": f"k{i:03d}", "ts": 1, "region": ("eu", "us")[i % 2], "secs": s} for i, s in enumerate(seconds)]
    rows.append({"id": "knull", "ts": 1, "region": "eu", "secs": None})
    write(path, rows, schema=SCHEMA, **BY_HOUR_IN_PARIS)
    write(path, [{**r, "ts": 2} for r in rows[::7]], schema=SCHEMA)  # log blocks on some slices
    return shim.open_table(str(path))


def test_partitions_are_hours_in_paris(table: shim.Table) -> None:
    partitions = table.snapshot().listing.partitions()
    assert "region=eu/secs=2024-03-31/03" in partitions or "region=us/secs=2024-03-31/03" in partitions
    assert not any("secs=2024-03-31/02" in p for p in partitions)  # that hour does not exist in Paris
    assert "region=eu/secs=1970-01-01/01" in partitions  # a null stands for the second 1 (01:00 in Paris)


def test_random_filters_keep_every_matching_row(table: shim.Table) -> None:
    everything = table.read()
    values = [v for v in everything.column("secs").to_pylist() if v is not None]
    rng = random.Random(11)
    for _ in range(20):
        low = rng.choice(values) + rng.randint(-5000, 5000)
        high = low + rng.choice([1, 60, 3600, 7200, 86400])
        filters = [
            f"secs >= {low} AND secs < {high}", f"secs = {rng.choice(values)}", f"secs <= {low}",
            f"NOT (secs > {low}) OR region = 'us'", f"secs IN ({low}, {high}, {rng.choice(values)})",
            f"secs > {low} AND secs IS NOT NULL", "secs IS NULL", f"secs != {low}",
        ]
        for text in filters:
            expected = sorted(everything.filter(_as_arrow(text)).column("id").to_pylist())
            assert sorted(table.read(filter=text, columns=["id"]).column("id").to_pylist()) == expected, text


def test_a_narrow_filter_reads_few_partitions(table: shim.Table) -> None:
    hour = DST_START - 2 * 3600  # 2024-03-31T01:00 in Paris
    scan = build_scan(table.snapshot(), ScanOptions(filter=f"secs >= {hour} AND secs < {hour + 3600}"))
    read = {s.partition_path for s in scan.slices}
    assert read and len(read) < len(table.snapshot().listing.partitions()) / 2
    assert all("1970" not in p and "-10-" not in p for p in read)
    # Nulls live in the partition of the instant 1 only.
    assert {s.partition_path for s in build_scan(table.snapshot(), ScanOptions(filter="secs IS NULL")).slices} == \
        {"region=eu/secs=1970-01-01/01"}


def test_arrow_expressions_prune_with_the_same_ranges(table: shim.Table) -> None:
    hour = DST_END - 3600
    # `ts + 1 > 0` has no shim counterpart: Arrow's own simplification decides.
    expression = (pc.field("secs") >= hour) & (pc.field("secs") < hour + 600) & ((pc.field("ts") + 1) > 0)
    scan = build_scan(table.snapshot(), ScanOptions(filter=expression))
    assert len({s.partition_path for s in scan.slices}) < len(table.snapshot().listing.partitions()) / 2
    everything = table.read()
    assert sorted(table.read(filter=expression, columns=["id"]).column("id").to_pylist()) == \
        sorted(everything.filter(expression).column("id").to_pylist())


def test_ranges_answer_every_possible_truth() -> None:
    span = ValueRange(10, 20)
    for literal in (5, 10, 15, 20, 25):
        for op in CompareOp:
            possible = span.truths(op, literal)
            outcomes = {_compare(op, v, literal) for v in range(10, 21)} | {None}
            assert outcomes <= possible, (op, literal)
    assert not evaluate_on_partition(parse_filter("secs > 20"), {"secs": span})
    assert evaluate_on_partition(parse_filter("secs IS NULL"), {"secs": span})
    assert not evaluate_on_partition(parse_filter("secs IS NULL"), {"secs": ValueRange(10, 20, nullable=False)})
    assert not ValueRange(10, 20, nullable=False).truths(CompareOp.GT, 20) & {True, None}


def _compare(op: CompareOp, value: int, literal: int) -> bool:
    return {CompareOp.EQ: value == literal, CompareOp.NE: value != literal, CompareOp.LT: value < literal,
            CompareOp.LE: value <= literal, CompareOp.GT: value > literal, CompareOp.GE: value >= literal}[op]


def _as_arrow(text: str) -> pc.Expression:
    return to_arrow_expression(parse_filter(text))


@pytest.mark.parametrize(("kind", "fmt", "zone", "column_type", "scale"), [
    ("EPOCHMICROSECONDS", "yyyy/MM/dd", "America/Los_Angeles", pa.int64(), 10**6),
    ("UNIX_TIMESTAMP", "yyyy-MM-dd", "UTC", pa.float64(), 1),  # fractions truncate before formatting
])
def test_other_units_zones_and_types_keep_every_matching_row(tmp_path: Path, kind: str, fmt: str, zone: str,
                                                             column_type: pa.DataType, scale: int) -> None:
    rng = random.Random(kind)
    seconds = [edge + rng.randint(-6 * 3600, 6 * 3600) + rng.random() for edge in (1710064800, 1730624400)
               for _ in range(40)]
    values = [int(s * scale) if pa.types.is_integer(column_type) else s * scale for s in seconds]
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", column_type)])
    rows = [{"id": f"k{i:03d}", "ts": 1, "v": v} for i, v in enumerate(values)] + [{"id": "knull", "ts": 1, "v": None}]
    write(tmp_path, rows, schema=schema, **{
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.datasource.write.partitionpath.field": "v", "hoodie.keygen.timebased.timestamp.type": kind,
        "hoodie.keygen.timebased.output.dateformat": fmt, "hoodie.keygen.timebased.timezone": zone})
    table = shim.open_table(str(tmp_path))
    everything = table.read()
    for _ in range(15):
        low = rng.choice(values)
        for text in (f"v >= {low} AND v < {low + 3600 * scale}", f"v = {rng.choice(values)}", f"v <= {low}",
                     "v IS NULL"):
            expected = everything.filter(to_arrow_expression(bind(parse_filter(text), everything.schema)))
            assert sorted(table.read(filter=text, columns=["id"]).column("id").to_pylist()) == \
                sorted(expected.column("id").to_pylist()), text
    one = build_scan(table.snapshot(), ScanOptions(filter=f"v >= {values[0]} AND v <= {values[0]}"))
    assert len({s.partition_path for s in one.slices}) == 1
