"""The scan options are declared once (`shim.ScanOptions`): `Table.scan`/`read` take exactly them,
the HTTP scan request has a field for each option a server takes, and an option's kind (plan,
request, reading) decides where it goes."""

from __future__ import annotations

import dataclasses
import inspect

import pyarrow as pa
import pytest

import shim
from catalog.models import WIRE_ONLY, ScanBody
from engines.http import ShimClient
from shim.errors import InvalidArgumentError, ScanLimitError
from shim.read.damage import SkippedBlocks
from shim.scan_options import NAMES, PLAN_NAMES, REMOTE_NAMES, ScanOptions
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.int64())])


@pytest.fixture
def table(tmp_path) -> shim.Table:
    tiny = TinyTable(tmp_path / "t", SCHEMA)
    base = tiny.base([{"id": f"k{i}", "ts": 1, "v": i} for i in range(10)])
    tiny.log([{"id": "k1", "ts": 2, "v": -1}], base_instant=base)
    return shim.open_table(tiny.path)


@pytest.mark.parametrize("method", ["scan", "read"])
def test_table_reads_take_exactly_the_scan_options(method):
    parameters = list(inspect.signature(getattr(shim.Table, method)).parameters)
    assert parameters == ["self", *NAMES]
    defaults = {n: p.default for n, p in inspect.signature(getattr(shim.Table, method)).parameters.items()}
    assert all(defaults[f.name] == f.default for f in dataclasses.fields(ScanOptions))


def test_positional_and_named_options_read_alike(table):
    by_position = table.read("snapshot", ["id", "v"], "v < 3")
    by_name = table.read(columns=["id", "v"], filter="v < 3")
    assert by_position.equals(by_name)
    assert sorted(by_name.column("v").to_pylist()) == [-1, 0, 2]
    assert table.read("read_optimized", ["v"], "v < 3").column("v").to_pylist() == [0, 1, 2]


def test_reading_options_are_not_part_of_the_plan(table):
    assert set(NAMES) - set(PLAN_NAMES) == {"skipped", "time_limit"}
    one = ScanOptions(columns=["id"], time_limit=5.0, skipped=SkippedBlocks())
    assert one.key() == ScanOptions(columns=["id"]).key()
    assert one.plan_only() == ScanOptions(columns=["id"])
    assert table.plan(one) is table.plan(ScanOptions(columns=["id"]))


def test_a_time_limit_stops_scan_and_read(table):
    with pytest.raises(ScanLimitError, match="limit of 0 seconds"):
        table.scan(time_limit=0.0).read_all()
    with pytest.raises(ScanLimitError, match="limit of 0 seconds"):
        table.read(time_limit=0.0)
    assert table.read(time_limit=60.0).num_rows == 10


def test_the_http_request_has_a_field_for_each_remote_option():
    fields = set(ScanBody.model_fields)
    assert fields - WIRE_ONLY == set(REMOTE_NAMES)
    defaults = {f.name: f.default for f in dataclasses.fields(ScanOptions)}
    assert all(ScanBody.model_fields[name].default == defaults[name] for name in REMOTE_NAMES)
    body = ScanBody(mode="read_optimized", columns=["id"], as_of="", limit=3, corrupt="skip")
    assert body.scan_options(filter="v > 1") == ScanOptions(mode="read_optimized", columns=["id"], filter="v > 1",
                                                            limit=3, corrupt="skip")


@pytest.mark.parametrize("option", ["include_meta", "changes", "time_limit"])
def test_the_http_client_refuses_options_no_server_takes(option):
    value = {"include_meta": True, "changes": ("1", None), "time_limit": 1.0}[option]
    client = ShimClient("http://127.0.0.1:9")  # never reached: the request is refused first
    with pytest.raises(InvalidArgumentError, match=f"does not take the scan option '{option}'"):
        client.scan_batches("t", **{option: value})
