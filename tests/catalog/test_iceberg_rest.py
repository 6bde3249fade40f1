"""The Iceberg REST catalog on a real uvicorn server, read by real Iceberg clients: DuckDB's iceberg
extension (as Trino's or Presto's Iceberg connector would: list, load, read the files), PyIceberg,
and iceberg-rust under DataFusion (`tests.catalog.icebergrust`).
Rows must equal the shim's own reads of the same views, across renames, a drop and re-add, a
widening and merged log files; uncommitted data never shows."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog import load_catalog

from catalog.service import Catalog
from catalog.settings import Settings
from engines.iceberg import attach
from tests.catalog.icebergrust import iceberg_rust_query
from tests.catalog.servekit import TRIPS_RO_ROWS, TRIPS_ROWS, build_warehouse, live_server
from tests.conftest import shared_table_names
from tests.tablekit import TinyTable

TOKEN = "ice-token"
VIEWS = {"trips": "snapshot", "trips_ro": "read_optimized", "events": "snapshot", "events_ro": "read_optimized"}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    return build_warehouse(tmp_path_factory.mktemp("ice") / "wh")


@pytest.fixture(scope="module")
def server(warehouse, tmp_path_factory):
    iceberg_dir = tmp_path_factory.mktemp("published")
    settings = Settings(warehouse=str(warehouse.root), catalog_db=":memory:", token=TOKEN,
                        iceberg_dir=str(iceberg_dir))
    with live_server(settings) as live:
        yield live


def rest(server, path: str, method: str = "GET", token: str | None = TOKEN) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.request(method, f"{server.url}/iceberg/v1{path}", headers=headers, timeout=30)


def shim_rows(server, name: str) -> list[dict]:
    """The rows the shim reads itself for an Iceberg table name (view by suffix), ordered."""
    table, view = name.removesuffix("_ro"), VIEWS[name]
    rows = server.catalog.table(table).read(mode=view).to_pylist()
    return sorted(rows, key=lambda row: tuple(str(v) for v in row.values()))


def ordered(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda row: tuple(str(v) for v in row.values()))


def test_catalog_lists_one_namespace_with_both_views_of_every_table(server):
    config = rest(server, "/config?warehouse=shim")
    assert config.status_code == 200 and config.json()["overrides"] == {}
    assert "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}" in config.json()["endpoints"]
    assert rest(server, "/namespaces").json() == {"namespaces": [["default"]]}
    assert rest(server, "/namespaces/default").json() == {"namespace": ["default"], "properties": {}}
    listed = rest(server, "/namespaces/default/tables?pageSize=100").json()["identifiers"]
    assert [(i["namespace"], i["name"]) for i in listed] == [(["default"], n) for n in sorted(VIEWS)]
    assert rest(server, "/namespaces/default/tables/trips_ro", "HEAD").status_code == 204
    assert rest(server, "/namespaces/default/tables/nope", "HEAD").status_code == 404


def test_unknown_namespace_and_table_are_404_in_the_iceberg_error_model(server):
    missing = rest(server, "/namespaces/other/tables")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == 404 and "other" in missing.json()["error"]["message"]
    gone = rest(server, "/namespaces/default/tables/nope")
    assert gone.status_code == 404 and gone.json()["error"]["type"] == "TableNotFoundError"
    # A name is only ever a registered table: paths do not reach files.
    for name in ("..%2F..%2Fetc", "trips%2F..%2Fevents", "%2Ftmp"):
        assert rest(server, f"/namespaces/default/tables/{name}").status_code == 404


def test_token_is_required(server):
    assert rest(server, "/config", token=None).status_code == 401
    assert rest(server, "/namespaces/default/tables/trips", token="wrong").status_code == 401
    with pytest.raises(duckdb.Error, match="401|Unauthorized"):
        attach(server.url, token="wrong").execute("SELECT 1 FROM shim.default.trips").fetchall()


def test_load_table_answers_metadata_with_ids_and_name_mapping(server):
    loaded = rest(server, "/namespaces/default/tables/events").json()
    metadata = loaded["metadata"]
    assert loaded["metadata-location"].startswith("file://") and metadata["format-version"] == 2
    [schema] = [s for s in metadata["schemas"] if s["schema-id"] == metadata["current-schema-id"]]
    fields = {f["name"]: (f["id"], f["type"]) for f in schema["fields"]}
    column_ids = {f.name: int(f.metadata[b"PARQUET:field_id"]) for f in server.catalog.describe("events").schema}
    assert fields == {"key": (column_ids["key"] + 1, "string"), "ts": (column_ids["ts"] + 1, "long"),
                      "count": (column_ids["count"] + 1, "long"), "label": (column_ids["label"] + 1, "string")}
    import json

    mapping = {e["field-id"]: e["names"] for e in json.loads(metadata["properties"]["schema.name-mapping.default"])}
    assert sorted(mapping[fields["count"][0]]) == ["count", "n"]  # the renamed column keeps its old name


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_duckdb_reads_every_view_as_the_shim_does(server, name):
    con = attach(server.url, token=TOKEN)
    result = con.execute(f"SELECT * FROM shim.default.{name}").to_arrow_table()
    assert ordered(result.to_pylist()) == shim_rows(server, name)


def test_duckdb_rows_are_the_evolved_ones(server):
    con = attach(server.url, token=TOKEN)
    columns = list(TRIPS_ROWS[0])
    for name, expected in (("trips", TRIPS_ROWS), ("trips_ro", TRIPS_RO_ROWS)):
        rows = con.execute(f"SELECT {', '.join(columns)} FROM shim.default.{name} ORDER BY id").fetchall()
        assert rows == [tuple(row[c] for c in columns) for row in expected]


def test_duckdb_filters_aggregates_and_joins_over_iceberg(server):
    con = attach(server.url, token=TOKEN)
    assert con.execute("SELECT id FROM shim.default.trips WHERE amount > 5 ORDER BY id").fetchall() == \
        [("a",), ("b",)]
    # The dropped column's old values stay gone under the re-added name.
    assert con.execute("SELECT count(note) FROM shim.default.trips_ro").fetchall() == [(1,)]
    assert con.execute("SELECT city, sum(amount) FROM shim.default.trips GROUP BY city ORDER BY city").fetchall() \
        == [("la", 3.0), ("ny", 8.0), ("sf", 16.0)]
    changed = con.execute(
        "SELECT s.id, r.amount, s.amount FROM shim.default.trips s JOIN shim.default.trips_ro r USING (id) "
        "WHERE s.ts <> r.ts ORDER BY s.id").fetchall()
    assert changed == [("a", 5.0, 15.0), ("b", 7.0, 8.0)]
    assert con.execute("SELECT sum(count) FROM shim.default.events WHERE label = 'two'").fetchall() == \
        [(5_000_000_000,)]


def test_pyiceberg_and_iceberg_rust_read_through_the_rest_catalog(server):
    catalog = load_catalog("shim", type="rest", uri=f"{server.url}/iceberg", token=TOKEN)
    assert sorted(catalog.list_tables("default")) == [("default", name) for name in sorted(VIEWS)]
    for name in VIEWS:
        table = catalog.load_table(f"default.{name}")
        assert ordered(table.scan().to_arrow().to_pylist()) == shim_rows(server, name)
        assert ordered(iceberg_rust_query(table.metadata_location).to_pylist()) == shim_rows(server, name)
    filtered = catalog.load_table("default.trips").scan(row_filter="amount > 5", selected_fields=("id", "amount"))
    assert sorted(filtered.to_arrow().to_pylist(), key=lambda r: r["id"]) == \
        [{"id": "a", "amount": 15.0}, {"id": "b", "amount": 8.0}]


def test_tables_are_partitioned_by_their_hudi_partition_column_and_readers_prune_by_it(server):
    metadata = rest(server, "/namespaces/default/tables/trips").json()["metadata"]
    city_id = next(f["id"] for f in metadata["schemas"][0]["fields"] if f["name"] == "city")
    assert metadata["partition-specs"] == [{"spec-id": 0, "fields": [
        {"name": "city", "transform": "identity", "source-id": city_id, "field-id": 1000}]}]
    assert rest(server, "/namespaces/default/tables/events").json()["metadata"]["partition-specs"] == \
        [{"spec-id": 0, "fields": []}]  # unpartitioned in Hudi, unpartitioned here
    catalog = load_catalog("shim", type="rest", uri=f"{server.url}/iceberg", token=TOKEN)
    table = catalog.load_table("default.trips")
    every = list(table.scan().plan_files())
    assert {task.file.partition[0] for task in every} == {"sf", "ny", "la"}
    for task in every:
        assert f"city={task.file.partition[0]}" in task.file.file_path or "/data/" in task.file.file_path
        for delete in task.delete_files:  # position deletes name the one file they delete rows of
            assert delete.partition == task.file.partition
            assert delete.referenced_data_file == task.file.file_path
    sf = list(table.scan(row_filter="city = 'sf'").plan_files())
    assert sf and all(task.file.partition[0] == "sf" for task in sf) and len(sf) < len(every)
    rows = table.scan(row_filter="city = 'sf'", selected_fields=("id", "amount")).to_arrow().sort_by("id")
    assert rows.to_pylist() == [{"id": r["id"], "amount": r["amount"]} for r in TRIPS_ROWS if r["city"] == "sf"]
    con = attach(server.url, token=TOKEN)
    assert con.execute("SELECT id, amount FROM shim.default.trips WHERE city = 'sf' ORDER BY id").fetchall() == \
        [(r["id"], r["amount"]) for r in TRIPS_ROWS if r["city"] == "sf"]
    by_rust = iceberg_rust_query(table.metadata_location, "SELECT id, amount FROM t WHERE city = 'sf' ORDER BY id")
    assert by_rust.to_pylist() == [{"id": r["id"], "amount": r["amount"]} for r in TRIPS_ROWS if r["city"] == "sf"]


def test_data_files_are_table_files_or_published_slices(server, warehouse):
    catalog = load_catalog("shim", type="rest", uri=f"{server.url}/iceberg", token=TOKEN)
    published = server.app.state.iceberg.folder
    for name in VIEWS:
        for task in catalog.load_table(f"default.{name}").scan().plan_files():
            path = task.file.file_path.removeprefix("file://")
            assert path.startswith((str(warehouse.root) + os.sep, published + os.sep)), path


def test_new_commits_are_published_and_uncommitted_ones_are_not(tmp_path):
    built = build_warehouse(tmp_path / "wh")
    settings = Settings(warehouse=str(built.root), catalog_db=":memory:", iceberg_dir=str(tmp_path / "ice"))
    with live_server(settings) as live:
        con = attach(live.url)
        before = rest(live, "/namespaces/default/tables/events", token=None).json()["metadata-location"]
        assert con.execute("SELECT count(*) FROM shim.default.events").fetchall() == [(2,)]
        built.events.base([{"key": "k3", "ts": 1, "count": 7, "label": "three"}], file_id="fg3-0")
        built.events.base([{"key": "k4", "ts": 1, "count": 8, "label": "pending"}], file_id="fg4-0", complete=False)
        after = rest(live, "/namespaces/default/tables/events", token=None).json()["metadata-location"]
        assert after != before
        rows = attach(live.url).execute("SELECT key, count FROM shim.default.events ORDER BY key").fetchall()
        assert rows == [("k1", 1), ("k2", 5_000_000_000), ("k3", 7)]
        # Nothing new to publish: the same metadata, nothing written.
        files = sorted(p for p in Path(tmp_path / "ice").rglob("*") if p.is_file())
        assert rest(live, "/namespaces/default/tables/events", token=None).json()["metadata-location"] == after
        assert sorted(p for p in Path(tmp_path / "ice").rglob("*") if p.is_file()) == files


def test_tables_stay_readable_when_published_without_a_warehouse(tmp_path):
    built = build_warehouse(tmp_path / "wh")
    settings = Settings(tables=(f"t={built.trips.path}",), catalog_db=":memory:")
    with live_server(settings) as live:
        folder = live.app.state.iceberg.folder
        rows = attach(live.url).execute("SELECT id, amount FROM shim.default.t ORDER BY id").fetchall()
        assert rows == [(r["id"], r["amount"]) for r in TRIPS_ROWS]
        assert os.path.isdir(folder)
    assert not os.path.exists(folder)  # a temporary folder goes with the server


@pytest.mark.shared
@pytest.mark.parametrize("zip_name", shared_table_names())
def test_real_hudi_tables_read_through_iceberg_as_through_the_shim(shared_tables, zip_name, tmp_path):
    """Tables written by Apache Hudi (v6/v8/v9, COW/MOR, Avro and Parquet log blocks, deletes,
    rollbacks, nested lists): DuckDB, PyIceberg and iceberg-rust over the Iceberg catalog read
    what the shim reads, in both views."""
    path = shared_tables[zip_name]
    catalog = Catalog(Settings(tables=(f"t={path}",), catalog_db=":memory:"))
    try:
        expected = {view: catalog.table("t").read(mode=view) for view in ("snapshot", "read_optimized")}
    finally:
        catalog.close()
    with live_server(Settings(tables=(f"t={path}",), catalog_db=":memory:",
                              iceberg_dir=str(tmp_path / "ice"))) as live:
        con = attach(live.url)
        rest_catalog = load_catalog("shim", type="rest", uri=f"{live.url}/iceberg")
        for name, view in (("t", "snapshot"), ("t_ro", "read_optimized")):
            want = ordered(_plain(expected[view]).to_pylist())
            got = con.execute(f"SELECT * FROM shim.default.{name}").to_arrow_table()
            assert ordered(_plain(got).to_pylist()) == want, ("duckdb", zip_name, view)
            loaded = rest_catalog.load_table(f"default.{name}")
            got = loaded.scan().to_arrow()
            assert ordered(_plain(got).to_pylist()) == want, ("pyiceberg", zip_name, view)
            # iceberg-rust applies the name mapping to top-level columns only (apache/iceberg-rust
            # issue 1845): nested columns of files without field ids read as NULL there, not in Java.
            flat = [f.name for f in loaded.schema().fields if f.field_type.is_primitive]
            got = iceberg_rust_query(loaded.metadata_location, f"SELECT {', '.join(map(_quoted, flat))} FROM t")
            assert ordered(_plain(got).to_pylist()) == ordered(_plain(expected[view].select(flat)).to_pylist()), \
                ("iceberg-rust", zip_name, view)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _plain(table: pa.Table) -> pa.Table:
    """Dictionary columns decoded, timestamps in microseconds: values compared, not encodings."""
    columns = []
    for column in table.columns:
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        if pa.types.is_timestamp(column.type):
            column = column.cast(pa.timestamp("us", column.type.tz))
        columns.append(column)
    return pa.table(columns, names=table.column_names)


def test_merge_on_read_logs_become_position_deletes_and_standing_records(tmp_path):
    """Base files stay in place; a log's updates and deletes reach Iceberg readers as position
    deletes of the base rows plus a file of the standing log records. Under event-time ordering a
    late log record with a lower `ts` loses to the base row, as in the shim's own read."""
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])
    table = TinyTable(tmp_path / "wh" / "m", schema)
    base = table.base([{"id": k, "ts": 5, "v": f"base-{k}"} for k in "abcdef"])
    table.log([{"id": "b", "ts": 9, "v": "new-b"}, {"id": "d", "ts": 1, "v": "stale-d"},
               {"id": "g", "ts": 1, "v": "new-g"}], base_instant=base)
    table.log(deletes=["e"], base_instant=base)
    table.log([{"id": "a", "ts": 10, "v": "pending"}], base_instant=base, complete=False)
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:", iceberg_slices="deletes",
                              iceberg_dir=str(tmp_path / "ice"))) as live:
        expected = [("a", 5, "base-a"), ("b", 9, "new-b"), ("c", 5, "base-c"), ("d", 5, "base-d"),
                    ("f", 5, "base-f"), ("g", 1, "new-g")]
        shim_read = live.catalog.table("m").read(mode="snapshot").sort_by("id")
        assert [tuple(r.values()) for r in shim_read.to_pylist()] == expected
        assert attach(live.url).execute("SELECT id, ts, v FROM shim.default.m ORDER BY id").fetchall() == expected
        loaded = load_catalog("shim", type="rest", uri=f"{live.url}/iceberg").load_table("default.m")
        assert sorted(tuple(r.values()) for r in loaded.scan().to_arrow().to_pylist()) == expected
        by_rust = iceberg_rust_query(loaded.metadata_location, "SELECT id, ts, v FROM t ORDER BY id")
        assert [tuple(r.values()) for r in by_rust.to_pylist()] == expected
        tasks = {task.file.file_path: task for task in loaded.scan().plan_files()}
        [base_file] = (tmp_path / "wh" / "m").glob("*.parquet")
        base_task = tasks.pop("file://" + str(base_file))  # read in place
        [log_task] = tasks.values()
        assert pq.read_table(log_task.file.file_path.removeprefix("file://")).column("id").to_pylist() == ["b", "g"]
        [deletes] = base_task.delete_files
        positions = pq.read_table(deletes.file_path.removeprefix("file://")).column("pos").to_pylist()
        assert positions == [1, 4]  # b (updated) and e (deleted); d's stale update loses to the base row
        summary = json.loads(Path(loaded.metadata_location.removeprefix("file://")).read_text())["snapshots"][-1][
            "summary"]
        # The base file stays (an existing entry); the log side written for the commit before goes
        # (its records b and g, its delete of b's base row).
        assert {k: summary[k] for k in summary if k.startswith(("added", "deleted", "removed", "total"))} == {
            "added-data-files": "1", "deleted-data-files": "1", "added-delete-files": "1",
            "removed-delete-files": "1", "added-position-delete-files": "1", "removed-position-delete-files": "1",
            "added-records": "2", "deleted-records": "2", "added-position-deletes": "2",
            "removed-position-deletes": "1", "total-records": "8", "total-data-files": "2",
            "total-delete-files": "1", "total-position-deletes": "2", "total-equality-deletes": "0",
            "added-files-size": summary["added-files-size"], "removed-files-size": summary["removed-files-size"],
            "total-files-size": summary["total-files-size"]}
        assert summary["operation"] == "overwrite"
