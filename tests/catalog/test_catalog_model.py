"""The catalog's cached views and scans follow a table that keeps changing: after every random
step (writes, schema changes, compactions, cleans) a long-lived catalog answers as a new one does,
and its scans give the model's rows, latest and as of every retained commit."""

from __future__ import annotations

import contextlib
import random

import pytest

from catalog import Catalog, Settings
from catalog.service import ScanRequest
from catalog.views import VIEWS
from engines.duckdb import connect
from tests.catalog.servekit import live_server
from tests.modelkit import (
    EvolvingHistory,
    random_evolving_step,
    random_evolving_write,
    time_travel_horizon,
    write_options,
)


def _catalog(warehouse) -> Catalog:
    return Catalog(Settings(warehouse=str(warehouse), catalog_db=":memory:"))


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_long_lived_catalog_follows_random_histories(tmp_path, table_type, seed):
    rng = random.Random(f"catalog-{table_type}-{seed}")
    warehouse = tmp_path / "wh"
    path = warehouse / "trips"
    options = write_options(table_type, buckets=2, commits_retained=3)
    model = EvolvingHistory()
    random_evolving_write(path, rng, 1, model, options)
    live = _catalog(warehouse)
    try:
        for step in range(2, 14):
            random_evolving_step(path, rng, step, model, options, change_rate=0.35, compact_rate=0.2)
            fresh = _catalog(warehouse)
            try:
                horizon = time_travel_horizon(live.table("trips"))
                retained = [(i, rows) for i, rows in model.snapshots if i >= horizon]
                for instant in [None, *(i for i, _ in retained)]:
                    for view in VIEWS:
                        assert live.view("trips", view, instant) == fresh.view("trips", view, instant), (view, instant)
                for instant, rows in [(None, model.snapshots[-1][1]), *retained]:
                    read = live.scan("trips", ScanRequest(as_of=instant)).read_all()
                    assert read.schema.names == model.names[instant or model.snapshots[-1][0]]
                    assert sorted(read.to_pylist(), key=lambda r: r["id"]) == rows, instant
                    kept = live.scan("trips", ScanRequest(as_of=instant, dictionary_strings=True)).read_all()
                    assert sorted(kept.cast(read.schema).to_pylist(), key=lambda r: r["id"]) == rows, instant
            finally:
                fresh.close()
    finally:
        live.close()


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("over", ["process", "http"])
def test_duckdb_views_follow_random_schema_changes_by_column_id(tmp_path, seed, over):
    """A view registered earlier finds its columns by id (renamed: same data, dropped: null, a
    name added again: not the old column); registering again shows the current shape. In
    process, and through `hudi-shim serve` on loopback."""
    rng = random.Random(f"duckdb-{seed}")
    warehouse = tmp_path / "wh"
    path = warehouse / "trips"
    options = write_options("MERGE_ON_READ", buckets=2, commits_retained=10)
    model = EvolvingHistory()
    random_evolving_write(path, rng, 1, model, options)
    with contextlib.ExitStack() as stack:
        source = str(warehouse)
        if over == "http":
            source = stack.enter_context(live_server(Settings(warehouse=source, catalog_db=":memory:"))).url
        _follow_in_duckdb(source, path, rng, model, options)


def _follow_in_duckdb(source: str, path, rng: random.Random, model: EvolvingHistory,  # type: ignore[no-untyped-def]
                      options: dict[str, str]) -> None:
    con = connect(source)
    registered = dict(model.ids)
    for step in range(2, 16):
        random_evolving_step(path, rng, step, model, options, change_rate=0.5)
        rows = con.sql("SELECT * FROM trips ORDER BY id").arrow().read_all().to_pylist()
        assert rows == model.seen_through(registered), f"step {step}"
        if rng.random() < 0.4:
            connect(source, connection=con)
            registered = dict(model.ids)
            current = con.sql("SELECT * FROM trips ORDER BY id").arrow().read_all()
            assert current.schema.names == model.schema().names
            assert current.to_pylist() == model.snapshots[-1][1]
