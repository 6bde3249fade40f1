"""Filters given as `pyarrow.compute.Expression` select exactly the rows Arrow's own filter selects
on the merged table, whether the shim translates them (and prunes by partition) or not."""

from __future__ import annotations

import math

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import shim
from shim.planning.planner import build_scan
from shim.scan_options import ScanOptions
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("v", pa.int64()),
                    ("x", pa.float64())])

EXPRESSIONS = [
    pc.field("city") == "sf",
    (pc.field("city") == "sf") & (pc.field("v") > 4),
    pc.field("city").isin(["sf", None]),
    pc.field("v").isin([1, 9, None]),
    ~(pc.field("city") == "ny") | pc.field("v").is_null(),
    pc.field("x") > 0.5,
    pc.field("x").is_nan() if hasattr(pc.Expression, "is_nan") else pc.field("x") != pc.field("x"),
    pc.field("v") > 1.5,
    pc.field("v") == pa.scalar(5, pa.int32()),
    (pc.field("v") + 1) > 6,
    pc.field("city").is_valid() & (pc.field("x") <= 1.0),
]


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> shim.Table:
    built = TinyTable(tmp_path_factory.mktemp("t") / "t", SCHEMA, partition=["city"])
    sf = built.base([{"id": "a", "ts": 1, "city": "sf", "v": 1, "x": 0.25},
                     {"id": "b", "ts": 1, "city": "sf", "v": 5, "x": math.nan},
                     {"id": "d", "ts": 1, "city": "sf", "v": None, "x": None}], file_id="sf-0", partition="city=sf")
    built.base([{"id": "c", "ts": 1, "city": "ny", "v": 9, "x": 2.0}], file_id="ny-0", partition="city=ny")
    built.log([{"id": "a", "ts": 2, "city": "sf", "v": 7, "x": 0.75}], file_id="sf-0", partition="city=sf",
              base_instant=sf)
    return shim.open_table(built.path)


@pytest.mark.parametrize("mode", ["snapshot", "read_optimized"])
@pytest.mark.parametrize("expression", EXPRESSIONS, ids=str)
def test_expression_selects_what_arrow_selects(table, mode, expression):
    everything = table.read(mode=mode)
    expected = sorted(everything.filter(expression).column("id").to_pylist())
    got = table.read(mode=mode, filter=expression, columns=["id"])
    assert sorted(got.column("id").to_pylist()) == expected


def test_translated_expression_prunes_partitions_and_drops_guaranteed_terms(table):
    scan = build_scan(table.snapshot(), ScanOptions(filter=(pc.field("city") == "ny") & (pc.field("v") > 4)))
    assert [s.partition_path for s in scan.slices] == ["city=ny"]
    assert scan.row_filter is not None and scan.row_filter.columns == {"v"}


def test_expression_without_shim_counterpart_still_filters(table):
    scan = build_scan(table.snapshot(), ScanOptions(filter=(pc.field("v") + 1) > 6))
    assert scan.row_filter is not None and scan.row_filter.expr is None
    assert scan.row_filter.columns == {"v"}
