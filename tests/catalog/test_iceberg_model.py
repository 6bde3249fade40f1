"""The Iceberg REST catalog follows a table that keeps changing: after every random step (writes,
deletes, renames, drops and re-adds, widenings, moves, compactions, cleans), three Iceberg
implementations (PyIceberg, iceberg-rust, DuckDB's iceberg extension) read the published views
as the model and the shim do, whatever the key generator (identity partitions or none), while
replaced versions are removed as soon as they are replaced."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

from catalog.settings import Settings
from engines.iceberg import attach
from tests.catalog.icebergrust import iceberg_rust_query
from tests.catalog.servekit import live_server
from tests.modelkit import (
    KEY_GENERATORS,
    EvolvingHistory,
    random_evolving_step,
    random_evolving_write,
    time_travel_horizon,
    write_options,
)


def _by_id(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda row: row["id"])


def _random_filter(rng: random.Random, rows: list[dict], schema: pa.Schema) -> tuple[str, str, bool]:
    """A comparison on a random column against a value some row holds (or a null check): as
    filter text for the shim and PyIceberg, as SQL for DuckDB and DataFusion, and whether
    PyIceberg answers it as SQL does. For `!=` it does not: on a file that lacks the column it
    keeps every row (Iceberg's evaluator holds null != x true), where SQL keeps none."""
    column = rng.choice([f.name for f in schema if not pa.types.is_floating(f.type)] or ["id"])
    values = [row[column] for row in rows if row.get(column) is not None]
    if not values or rng.random() < 0.15:
        check = rng.choice(["IS NULL", "IS NOT NULL"])
        return f"{column} {check}", f'"{column}" {check}', True
    value = rng.choice(values)
    operator = rng.choice(["=", "<", ">", "<=", ">=", "!="])
    literal = f"'{value}'" if isinstance(value, str) else str(value)
    return f"{column} {operator} {literal}", f'"{column}" {operator} {literal}', operator != "!="


def _check_history(live, table, view: str, model: EvolvingHistory, step: int) -> None:  # type: ignore[no-untyped-def]
    """Every snapshot of the published table is a commit a read may still be as of, the newest
    ones (and the latest last); time travel to it reads what the shim (and, for snapshots, the
    model) reads as of that commit."""
    shim_table = live.catalog.table("trips")
    horizon = time_travel_horizon(shim_table.snapshot())
    instants = [s.summary["hudi-shim.instant"] for s in table.metadata.snapshots]
    writes = [i.requested_time for i in shim_table.snapshot().active_timeline.completed_writes()
              if i.requested_time >= horizon]
    assert instants == writes[-len(instants):] and len(instants) == min(len(writes), 11), (step, view)
    modelled = dict(model.snapshots)
    for snapshot, instant in zip(table.metadata.snapshots, instants, strict=True):
        got = _by_id(table.scan(snapshot_id=snapshot.snapshot_id).to_arrow().to_pylist())
        assert got == _by_id(shim_table.read(mode=view, as_of=instant).to_pylist()), ("history", step, view, instant)
        if view == "snapshot" and instant in modelled:
            assert got == modelled[instant], ("history model", step, instant)


@pytest.mark.parametrize("keygen", range(len(KEY_GENERATORS)), ids=["simple", "custom", "timestamp"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_iceberg_readers_follow_random_histories(tmp_path, table_type, keygen):
    rng = random.Random(f"iceberg-{table_type}-{keygen}")
    warehouse = tmp_path / "wh"
    path = warehouse / "trips"
    options = write_options(table_type, buckets=2, commits_retained=3) | KEY_GENERATORS[keygen]
    model = EvolvingHistory()
    random_evolving_write(path, rng, 1, model, options)
    settings = Settings(warehouse=str(warehouse), catalog_db=":memory:", iceberg_dir=str(tmp_path / "ice"),
                        iceberg_keep_seconds=0)
    with live_server(settings) as live:
        rest = load_catalog("shim", type="rest", uri=f"{live.url}/iceberg")
        duck = attach(live.url)
        for step in range(2, 10):
            random_evolving_step(path, rng, step, model, options, change_rate=0.35, compact_rate=0.2)
            for name, view in (("trips", "snapshot"), ("trips_ro", "read_optimized")):
                want = _by_id(live.catalog.table("trips").read(mode=view).to_pylist())
                if view == "snapshot":
                    assert want == model.snapshots[-1][1], step
                table = rest.load_table(f"default.{name}")
                assert _by_id(table.scan().to_arrow().to_pylist()) == want, ("pyiceberg", step, view)
                assert _by_id(iceberg_rust_query(table.metadata_location).to_pylist()) == want, \
                    ("iceberg-rust", step, view)
                rows = duck.execute(f"SELECT * FROM shim.default.{name}").to_arrow_table().to_pylist()
                assert _by_id(rows) == want, ("duckdb", step, view)
                _check_history(live, table, view, model, step)
                # Filters, which readers may answer by skipping files on their partitions and bounds.
                for _ in range(3):
                    text, sql, as_sql = _random_filter(rng, want, model.schema())
                    kept = _by_id(live.catalog.table("trips").read(mode=view, filter=text).to_pylist())
                    where = (step, view, text)
                    if as_sql:
                        assert _by_id(table.scan(row_filter=text).to_arrow().to_pylist()) == kept, \
                            ("pyiceberg", *where)
                    by_rust = iceberg_rust_query(table.metadata_location, f"SELECT * FROM t WHERE {sql}")
                    assert _by_id(by_rust.to_pylist()) == kept, ("iceberg-rust", *where)
                    rows = duck.execute(f"SELECT * FROM shim.default.{name} WHERE {sql}").to_arrow_table().to_pylist()
                    assert _by_id(rows) == kept, ("duckdb", *where)
        spec = rest.load_table("default.trips").metadata.specs()[0]
        assert [f.name for f in spec.fields] == ([] if keygen == 2 else ["region"])
