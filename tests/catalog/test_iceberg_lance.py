"""Tables with Lance base files (Hudi 1.2) through the Iceberg REST catalog: Iceberg has no Lance
file format, so every slice is published written out as Parquet (logs merged in), and Iceberg
readers (DuckDB's iceberg extension, PyIceberg) get exactly the shim's rows, in both views and
at every commit published for time travel; no published file is a Lance file."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

from catalog.iceberg.publish import Readers
from catalog.settings import Settings
from engines.iceberg import attach
from tests.catalog.servekit import live_server
from tests.shim.read.test_lance_tables import NAMES

TOKEN = "lance-token"


@pytest.fixture(scope="module")
def server(lance_tables, tmp_path_factory):
    tables = tuple(f"{name}={lance_tables[name]}" for name in NAMES)
    settings = Settings(tables=tables, catalog_db=":memory:", token=TOKEN,
                        iceberg_dir=str(tmp_path_factory.mktemp("lance-published")))
    with live_server(settings) as live:
        yield live


def _ordered(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda row: repr(sorted(row.items())))


@pytest.mark.parametrize("name", NAMES)
def test_lance_tables_read_through_iceberg_as_the_shim_reads_them(server, name):
    con = attach(server.url, token=TOKEN)
    rest = load_catalog("shim", type="rest", uri=f"{server.url}/iceberg", token=TOKEN)
    for published, view in ((name, "snapshot"), (f"{name}_ro", "read_optimized")):
        want = server.catalog.table(name).read(mode=view)
        assert want.num_rows > 0
        got = con.execute(f'SELECT * FROM shim.default."{published}"').to_arrow_table()
        assert got.column_names == want.column_names
        assert _ordered(got) == _ordered(want), ("duckdb", view)
        loaded = rest.load_table(f"default.{published}")
        assert _ordered(loaded.scan().to_arrow()) == _ordered(want), ("pyiceberg", view)
        properties = loaded.metadata.properties
        assert properties["hudi-shim.files-in-place"] == "0"
        assert int(properties["hudi-shim.slices-written"]) == len(server.catalog.table(name).file_slices())
        paths = [task.file.file_path for task in loaded.scan().plan_files()]
        assert paths and all(p.endswith(".parquet") and "/lance-published" in p for p in paths)


def test_lance_table_time_travel_through_iceberg_reads_each_commit(server):
    name = "trips__mor__avro__v9_trips_lance"
    table = server.catalog.table(name)
    loaded = load_catalog("shim", type="rest", uri=f"{server.url}/iceberg", token=TOKEN).load_table(f"default.{name}")
    snapshots = {int(s.summary["hudi-shim.instant"]): s.snapshot_id for s in loaded.metadata.snapshots}
    assert len(snapshots) >= 4
    for instant, snapshot_id in snapshots.items():
        got = loaded.scan(snapshot_id=snapshot_id).to_arrow()
        assert _ordered(got) == _ordered(table.read(as_of=str(instant))), instant


def test_lance_tables_published_for_presto_are_written_out_too(server):
    publisher = server.app.state.iceberg
    published = publisher.publish("trips__cow__v9_trips_lance", "snapshot", Readers.BY_NAME)
    assert published.metadata["properties"]["hudi-shim.files-in-place"] == "0"
    assert published.written_slices == len(server.catalog.table("trips__cow__v9_trips_lance").file_slices())
