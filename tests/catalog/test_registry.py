"""The SQLite table registry: registration by path, discovery under a warehouse, names."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from catalog.registry import DISCOVERED, REGISTERED, Registry, check_name, name_for_folder
from shim.errors import InvalidArgumentError, TableNotFoundError
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64())])


def make_table(path):
    table = TinyTable(path, SCHEMA)
    table.base([{"id": "a", "ts": 1}])
    return table


def test_register_by_path_then_get_returns_real_path(tmp_path):
    make_table(tmp_path / "my-trips")
    registry = Registry(":memory:")
    entry = registry.register(str(tmp_path / "my-trips"))
    assert entry.name == "my_trips"
    assert registry.get("my_trips").path == os.path.realpath(tmp_path / "my-trips")
    assert registry.get("my_trips").origin == REGISTERED


def test_register_folder_without_table_raises_table_not_found(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(TableNotFoundError, match="no Hudi table at .*empty"):
        Registry(":memory:").register(str(tmp_path / "empty"))


def test_register_taken_name_raises_and_same_pair_is_idempotent(tmp_path):
    make_table(tmp_path / "a")
    make_table(tmp_path / "b")
    registry = Registry(":memory:")
    registry.register(str(tmp_path / "a"), "t")
    assert registry.register(str(tmp_path / "a"), "t").name == "t"
    with pytest.raises(InvalidArgumentError, match="'t' is already registered"):
        registry.register(str(tmp_path / "b"), "t")
    with pytest.raises(InvalidArgumentError, match="already registered as 't'"):
        registry.register(str(tmp_path / "a"), "other")


@pytest.mark.parametrize("name", ["", "../x", "a/b", "a.b", "1abc", "x" * 129, "a b", "é"])
def test_check_name_invalid_raises(name):
    with pytest.raises(InvalidArgumentError, match="invalid table name"):
        check_name(name)


def test_name_for_folder_makes_valid_names():
    assert name_for_folder("db/my-trips") == "db_my_trips"
    assert name_for_folder("2024") == "_2024"


def test_get_unknown_name_raises_table_not_found():
    with pytest.raises(TableNotFoundError, match="no table named 'nope' is registered"):
        Registry(":memory:").get("nope")


def test_discover_finds_nested_tables_skips_hidden_and_symlinks(tmp_path):
    warehouse = tmp_path / "wh"
    make_table(warehouse / "trips")
    make_table(warehouse / "sales" / "eu")
    make_table(warehouse / ".trash" / "old")
    make_table(tmp_path / "outside")
    os.symlink(tmp_path / "outside", warehouse / "linked")
    registry = Registry(":memory:")
    found = registry.discover(str(warehouse))
    assert [(e.name, e.origin) for e in found] == [("sales_eu", DISCOVERED), ("trips", DISCOVERED)]
    assert [e.name for e in registry.tables()] == ["sales_eu", "trips"]


def test_discover_forgets_vanished_tables_but_keeps_registered_ones(tmp_path):
    warehouse = tmp_path / "wh"
    make_table(warehouse / "trips")
    make_table(tmp_path / "elsewhere")
    registry = Registry(":memory:")
    registry.register(str(tmp_path / "elsewhere"))
    registry.discover(str(warehouse))
    os.rename(warehouse / "trips", warehouse / "trips2")
    registry.discover(str(warehouse))
    assert [e.name for e in registry.tables()] == ["elsewhere", "trips2"]


def test_registry_file_persists_between_instances(tmp_path):
    make_table(tmp_path / "t")
    location = str(tmp_path / "state" / "catalog.sqlite")
    first = Registry(location)
    first.register(str(tmp_path / "t"), "kept")
    first.close()
    assert [e.name for e in Registry(location).tables()] == ["kept"]


def test_discover_missing_warehouse_raises(tmp_path):
    with pytest.raises(TableNotFoundError, match="warehouse folder .*missing does not exist"):
        Registry(":memory:").discover(str(tmp_path / "missing"))


def test_discover_on_a_table_folder_registers_that_table(tmp_path):
    make_table(tmp_path / "solo")
    assert [e.name for e in Registry(":memory:").discover(str(tmp_path / "solo"))] == ["solo"]
