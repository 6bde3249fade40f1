"""Planned scans are remembered per table version: the same request is planned once, a different
one (or a new commit) is planned anew, and the rows are always the current ones."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import shim
from shim.planning import plan_cache
from shim.planning import snapshot as table_module
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.int64())])


@pytest.fixture
def built(tmp_path) -> TinyTable:
    table = TinyTable(tmp_path / "t", SCHEMA, mor=False)
    table.base([{"id": f"k{i}", "ts": 1, "v": i} for i in range(10)])
    return table


@pytest.fixture
def plans(monkeypatch) -> list[object]:
    """Every scan planned (through `Table.scan`)."""
    made: list[object] = []
    original = table_module.build_scan

    def spy(table, options, **kwargs):  # type: ignore[no-untyped-def]
        made.append(options.filter)
        return original(table, options, **kwargs)

    monkeypatch.setattr(table_module, "build_scan", spy)
    return made


def ids(reader: pa.RecordBatchReader) -> list[str]:
    return sorted(reader.read_all().column("id").to_pylist())


def test_the_same_request_is_planned_once(built, plans):
    table = shim.open_table(built.path)
    for _ in range(3):
        assert ids(table.scan(filter="v >= 8")) == ["k8", "k9"]
        assert ids(table.scan(filter=pc.field("v") < 1)) == ["k0"]
        assert ids(table.scan(columns=["id"])) == [f"k{i}" for i in range(10)]
    assert len(plans) == 3
    assert ids(table.scan(filter="v >= 9")) == ["k9"]  # another filter, another columns list: planned
    assert ids(table.scan(columns=["id", "v"])) == [f"k{i}" for i in range(10)]
    assert len(plans) == 5


def test_expressions_that_print_alike_are_told_apart(built, plans):
    table = shim.open_table(built.path)
    wide, narrow = pc.field("v") == 3, pc.field("v") == pa.scalar(3, pa.int8())
    assert str(wide) == str(narrow) and not wide.equals(narrow)
    assert ids(table.scan(filter=wide)) == ids(table.scan(filter=narrow)) == ["k3"]
    assert len(plans) == 2


def test_a_new_commit_is_planned_anew_and_read(built, plans):
    table = shim.open_table(built.path)
    assert ids(table.scan(filter="v >= 9")) == ["k9"]
    built.base([{"id": "k99", "ts": 2, "v": 99}], file_id="fg2-0")
    assert ids(table.scan(filter="v >= 9")) == ["k9", "k99"]
    assert len(plans) == 2


def test_filters_given_as_lists_are_planned_every_time(built, plans):
    table = shim.open_table(built.path)
    for _ in range(2):
        assert ids(table.scan(filter=[("v", ">=", 9)])) == ["k9"]
    assert len(plans) == 2


def test_the_least_recently_used_plan_goes_first_and_big_plans_are_not_kept(built, plans, monkeypatch):
    monkeypatch.setattr(plan_cache, "MAX_PLANS", 2)
    table = shim.open_table(built.path)
    for text in ("v = 1", "v = 2", "v = 1", "v = 3", "v = 1", "v = 2"):
        table.scan(filter=text).read_all()
    assert plans == ["v = 1", "v = 2", "v = 3", "v = 2"]
    monkeypatch.setattr(plan_cache, "MAX_SLICES", 0)
    table = shim.open_table(built.path)
    table.scan().read_all()
    table.scan().read_all()
    assert plans[4:] == [None, None]
