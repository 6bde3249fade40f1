"""Published Iceberg tables keep the table's recent commits as snapshots: readers time-travel to
any of them (PyIceberg by snapshot id, DuckDB with `AT (VERSION => ...)`) and get the rows and
columns the shim reads as of that commit, across renames, drops and re-adds."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

import shim
from catalog.iceberg.history import history_instants, snapshot_id
from catalog.settings import Settings
from engines.iceberg import attach
from shim.errors import InvalidArgumentError
from tests.catalog.servekit import live_server
from tests.tablekit import EvolvingTable, add, drop, rename

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("a", pa.int64()), ("note", pa.string()),
                    ("gone", pa.int32())])


@pytest.fixture
def evolved(tmp_path) -> tuple[EvolvingTable, list[str]]:
    """A merge-on-read table through a rename, an update in a log, a drop, and a drop and re-add of
    a name."""
    table = EvolvingTable(tmp_path / "wh" / "t", SCHEMA, mor=True)
    first = table.base([{"id": "r1", "ts": 1, "a": 10, "note": "x", "gone": 1},
                        {"id": "r2", "ts": 1, "a": 20, "note": "y", "gone": 2}])
    instants = [first, table.alter(rename("a", "b"))]
    instants.append(table.log([{"id": "r1", "ts": 2, "b": 11, "note": "x2", "gone": 3}], base_instant=first))
    instants.append(table.alter(drop("gone")))  # for good: older snapshots read it through the mapping
    instants.append(table.alter(drop("note")))
    instants.append(table.alter(add("note", "long")))  # the name again, another column
    instants.append(table.base([{"id": "r3", "ts": 3, "b": 30, "note": 7}], file_id="fg2-0"))
    return table, instants


def _sorted(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda row: row["id"])


@pytest.mark.parametrize("view", ["t", "t_ro"])
def test_every_commit_is_a_snapshot_readers_travel_to(tmp_path, evolved, view):
    _, instants = evolved
    mode = "snapshot" if view == "t" else "read_optimized"
    settings = Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:", iceberg_dir=str(tmp_path / "ice"))
    with live_server(settings) as live:
        table = load_catalog("shim", type="rest", uri=f"{live.url}/iceberg").load_table(f"default.{view}")
        snapshots = table.metadata.snapshots
        assert [s.snapshot_id for s in snapshots] == [snapshot_id(i) for i in instants]
        assert [s.parent_snapshot_id for s in snapshots] == [None] + [s.snapshot_id for s in snapshots[:-1]]
        assert table.metadata.current_snapshot_id == snapshots[-1].snapshot_id
        assert [s.timestamp_ms for s in snapshots] == sorted(s.timestamp_ms for s in snapshots)
        duck = attach(live.url)
        for instant, snapshot in zip(instants, snapshots, strict=True):
            want = live.catalog.table("t").read(mode=mode, as_of=instant)
            got = table.scan(snapshot_id=snapshot.snapshot_id).to_arrow()
            assert got.column_names == want.column_names, instant
            assert _sorted(got.to_pylist()) == _sorted(want.to_pylist()), instant
            by_duck = duck.execute(f"SELECT * FROM shim.default.{view} AT (VERSION => {snapshot.snapshot_id})")
            names = [d[0] for d in by_duck.description]
            assert names == want.column_names, instant
            assert _sorted([dict(zip(names, row)) for row in by_duck.fetchall()]) == _sorted(want.to_pylist())
        # The dropped note's values never come back under the re-added name.
        latest = _sorted(table.scan().to_arrow().to_pylist())
        assert [row["note"] for row in latest] == ([None, None, 7])


def test_the_history_is_as_deep_as_asked(tmp_path, evolved):
    _, instants = evolved
    for depth, kept in ((0, instants[-1:]), (2, instants[-3:])):
        settings = Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:",
                            iceberg_dir=str(tmp_path / f"ice{depth}"), iceberg_history=depth)
        with live_server(settings) as live:
            table = load_catalog("shim", type="rest", uri=f"{live.url}/iceberg").load_table("default.t")
            assert [s.snapshot_id for s in table.metadata.snapshots] == [snapshot_id(i) for i in kept]
    with pytest.raises(InvalidArgumentError, match="iceberg_history"):
        Settings(iceberg_history=-1)


def test_only_completed_commits_are_snapshots(tmp_path, evolved):
    built, instants = evolved
    table = shim.open_table(built.path).snapshot()
    assert history_instants(table, instants[-1], 10) == instants[:-1]
    assert history_instants(table, instants[-1], 2) == instants[-3:-1]
    built.base([{"id": "r9", "ts": 9, "b": 90, "note": 9}], file_id="fg3-0", complete=False)  # still in flight
    assert history_instants(shim.open_table(built.path).snapshot(), instants[-1], 10) == instants[:-1]
    assert snapshot_id("20240601120000123") == 20240601120000123
    assert snapshot_id("20240601120000") == 20240601120000999  # as Hudi orders it: after that second's ms
