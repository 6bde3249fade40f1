"""DuckDB over hudi-shim, in-process and over HTTP: evolved tables give the right rows, and the
projection and filters DuckDB pushes reach the shim."""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import shim
from catalog.settings import Settings
from engines.cli import main
from engines.duckdb import RemoteSource, connect, split_filter
from engines.http import ShimClient
from shim.errors import HudiShimError
from tests.catalog.servekit import TRIPS_RO_ROWS, TRIPS_ROWS, build_warehouse, live_server

TOKEN = "duck-token"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    return build_warehouse(tmp_path_factory.mktemp("duck") / "wh")


@pytest.fixture(scope="module")
def server(warehouse):
    with live_server(Settings(warehouse=str(warehouse.root), catalog_db=":memory:", token=TOKEN)) as live:
        yield live


@pytest.fixture(params=["local", "http", "http-lz4"])
def con(request, warehouse):
    if request.param == "local":
        return connect(str(warehouse.root))
    server = request.getfixturevalue("server")
    return connect(server.url, token=TOKEN, compression="lz4" if request.param == "http-lz4" else None)


@pytest.fixture
def scans(monkeypatch):
    """Every shim scan planned with its files (in this process: the in-process catalog and the
    test server; `Table.scan` and the server's scans plan through `TableSnapshot.plan`)."""
    calls = []
    original = shim.TableSnapshot.plan

    def spy(self, options=shim.ScanOptions(), *, files=True):  # noqa: B008 (frozen)
        if files:
            calls.append({"table": self.path, "mode": options.mode, "columns": options.columns,
                          "filter": options.filter, "dictionary_partitions": options.dictionary_partitions})
        return original(self, options, files=files)

    monkeypatch.setattr(shim.TableSnapshot, "plan", spy)
    return calls


def rows(con, sql):
    result = con.execute(sql)
    names = [d[0] for d in result.description]
    return [dict(zip(names, row)) for row in result.fetchall()]


def test_views_per_table_and_mode(con):
    names = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
    assert names == {"trips", "trips_ro", "events", "events_ro"}


def test_snapshot_and_read_optimized_rows_of_evolved_table(con):
    assert rows(con, "SELECT * FROM trips ORDER BY id") == TRIPS_ROWS
    assert rows(con, "SELECT * FROM trips_ro ORDER BY id") == TRIPS_RO_ROWS


def test_aggregate_by_partition_column(con):
    got = con.execute("SELECT city, count(*), sum(amount), count(note) FROM trips GROUP BY city ORDER BY city")
    assert got.fetchall() == [("la", 1, 3.0, 1), ("ny", 1, 8.0, 1), ("sf", 2, 16.0, 0)]


def test_join_snapshot_with_read_optimized_finds_updated_rows(con):
    got = con.execute("""
        SELECT s.id, r.amount AS before, s.amount AS after
        FROM trips s JOIN trips_ro r ON s.id = r.id
        WHERE s.amount <> r.amount ORDER BY s.id""").fetchall()
    assert got == [("a", 5.0, 15.0), ("b", 7.0, 8.0)]


def test_join_across_tables_and_widened_column(con):
    got = con.execute("""
        SELECT e.key, t.id FROM events e JOIN trips t ON e.count = t.amount ORDER BY 1, 2""").fetchall()
    assert got == [("k1", "c")]
    assert con.execute("SELECT key FROM events WHERE count > 4000000000").fetchall() == [("k2",)]


@pytest.mark.parametrize(
    ("where", "ids"),
    [
        ("amount > 2 AND amount < 10", ["b", "d"]),  # renamed column (was fare)
        ("note IS NULL", ["a", "c"]),  # dropped and re-added: the old notes are gone
        ("tip IS NOT NULL AND city IN ('ny', 'la')", ["b", "d"]),  # added column
        ("id LIKE 'a%' OR amount = 3", ["a", "d"]),
        ("city = 'sf' AND ts = 2", ["a"]),
    ],
)
def test_filters_on_evolved_columns(con, where, ids):
    assert [r[0] for r in con.execute(f"SELECT id FROM trips WHERE {where} ORDER BY id").fetchall()] == ids


def test_projection_and_filter_reach_the_shim(con, scans, warehouse):
    got = con.execute("SELECT sum(amount) FROM trips WHERE city = 'sf'").fetchall()
    assert got == [(16.0,)]
    [call] = [c for c in scans if c["table"].endswith("trips")]
    assert set(call["columns"]) <= {"amount", "city"}
    assert call["dictionary_partitions"]
    filter_text = call["filter"] if isinstance(call["filter"], str) else str(call["filter"])
    assert "sf" in filter_text and "city" in filter_text


def test_partition_columns_reach_duckdb_as_dictionaries_and_read_as_text(con):
    types = {row[0]: row[1] for row in con.execute("DESCRIBE trips").fetchall()}
    assert types["city"] == "VARCHAR"
    got = rows(con, "SELECT city, count(*) AS n, min(city) AS low FROM trips WHERE city IN ('sf', 'la') "
                    "GROUP BY city ORDER BY city")
    assert got == [{"city": "la", "n": 1, "low": "la"}, {"city": "sf", "n": 2, "low": "sf"}]
    assert con.execute("SELECT count(*) FROM trips WHERE city LIKE 's%'").fetchone() == (2,)


def test_selective_query_does_not_read_other_partitions(tmp_path):
    # Other partitions' files are made unreadable: a query on one partition still succeeds.
    root = tmp_path / "wh"
    build_warehouse(root)
    for partition in ("city=ny", "city=la"):
        for path in (root / "trips" / partition).iterdir():
            if not path.name.startswith(".hoodie_partition"):
                path.write_bytes(b"not parquet")
    con = connect(str(root))
    assert con.execute("SELECT sum(amount) FROM trips WHERE city = 'sf'").fetchall() == [(16.0,)]
    with pytest.raises(duckdb.Error):
        con.execute("SELECT sum(amount) FROM trips").fetchall()


def test_remote_filter_without_exact_text_is_applied_on_the_client(server, warehouse):
    source = RemoteSource(ShimClient(server.url, token=TOKEN))
    schema = source.schema("trips")
    expression = (pc.field("amount") > 2) & ((pc.field("amount") + 1) > 9)
    pushed, complete = split_filter(expression, schema)
    assert [str(p) for p in pushed] == ["amount > 2.0e0"] and not complete
    reader = source.reader("trips", "snapshot", ["id"], expression, schema)
    assert sorted(reader.read_all().column("id").to_pylist()) == ["a"]


def test_connect_registers_on_a_given_connection(warehouse):
    existing = duckdb.connect()
    assert connect(str(warehouse.root), connection=existing) is existing
    assert existing.execute("SELECT count(*) FROM events_ro").fetchall() == [(2,)]


def test_cli_sql_prints_rows(warehouse, capsysbinary):
    query = "SELECT city, sum(amount) AS total FROM trips GROUP BY city ORDER BY city"
    assert main(["sql", "--warehouse", str(warehouse.root), query, "--format", "json"]) == 0
    lines = capsysbinary.readouterr().out.decode().splitlines()
    assert [json.loads(line) for line in lines] == [{"city": "la", "total": 3.0}, {"city": "ny", "total": 8.0},
                                                    {"city": "sf", "total": 16.0}]


@pytest.mark.parametrize("compression", [[], ["--compression", "zstd"]])
def test_cli_sql_over_http_with_token(server, capsysbinary, monkeypatch, compression):
    monkeypatch.setenv("HUDI_SHIM_TOKEN", TOKEN)
    query = "SELECT count(*) AS n, sum(amount) AS total FROM trips_ro"
    assert main(["sql", "--url", server.url, query, "--format", "csv", *compression]) == 0
    assert capsysbinary.readouterr().out.decode().splitlines() == ['"n","total"', "4,16"]


def test_cli_sql_bad_query_exits_1_with_message(warehouse, capsys):
    assert main(["sql", "--warehouse", str(warehouse.root), "SELECT nope FROM trips"]) == 1
    assert "nope" in capsys.readouterr().err


def test_view_keeps_working_after_a_new_commit(tmp_path):
    root = tmp_path / "wh"
    built = build_warehouse(root)
    con = connect(str(root))
    built.events.base([{"key": "k3", "ts": 1, "count": 3, "label": "three"}], file_id="fg3-0")
    assert con.execute("SELECT key FROM events ORDER BY key").fetchall() == [("k1",), ("k2",), ("k3",)]


def test_split_filter_unserializable_expression_pushes_nothing():
    schema = pa.schema([("t", pa.timestamp("ns"))])
    assert split_filter(pc.field("t") > pa.scalar(1, pa.timestamp("ns")), schema) == ([], False)


def test_local_filters_go_to_the_shim_as_arrow_which_translates_what_it_can(warehouse, scans):
    from catalog import Catalog
    from engines.duckdb import LocalSource

    source = LocalSource(Catalog(Settings(warehouse=str(warehouse.root), catalog_db=":memory:")))
    schema = source.schema("trips")
    mixed = (pc.field("amount") > 2) & ((pc.field("amount") + 1) > 9)
    assert source.reader("trips", "snapshot", ["id"], mixed, schema).read_all().column("id").to_pylist() == ["a"]
    simple = (pc.field("amount") > 2) & (pc.field("city") == "ny")
    assert source.reader("trips", "snapshot", ["id"], simple, schema).read_all().column("id").to_pylist() == ["b"]
    assert all(isinstance(scan["filter"], pc.Expression) for scan in scans[:2])
    from shim.planning.planner import build_scan
    from shim.scan_options import ScanOptions

    table = source.catalog.table("trips")
    assert build_scan(table.snapshot(), ScanOptions(filter=mixed)).row_filter.expr is None
    translated = build_scan(table.snapshot(), ScanOptions(filter=simple))
    assert {s.partition_path for s in translated.slices} == {"city=ny"}
    assert str(translated.row_filter.expr) == "amount > 2.0e0"  # the partition guarantees city = 'ny'


@pytest.mark.shared
def test_real_hudi_tables_through_duckdb_and_http_equal_in_process_reads(shared_tables):
    from catalog import Catalog

    def ordered(table: pa.Table) -> list[str]:
        return sorted(repr(row) for row in table.to_pylist())

    root = next(iter(shared_tables.values())).parent.parent  # the session's folder of unzipped tables
    catalog = Catalog(Settings(warehouse=str(root), catalog_db=":memory:"))
    assert len(catalog.names()) == len(shared_tables)
    local = connect(str(root))
    with live_server(Settings(warehouse=str(root), catalog_db=":memory:")) as live:
        remote = connect(live.url)
        client = ShimClient(live.url)
        for name in catalog.names():
            for mode, view in (("snapshot", name), ("read_optimized", name + "_ro")):
                expected = catalog.table(name).read(mode=mode)
                want = ordered(expected)
                for con in (local, remote):  # DuckDB names time zones its own way: compare in our types
                    got = con.execute(f"SELECT * FROM {view}").to_arrow_table().cast(expected.schema)
                    assert ordered(got) == want, (name, mode)
                assert ordered(client.scan(name, mode=mode)) == want, (name, mode)


def test_count_star_and_partition_only_queries_count_rows(tmp_path):
    import pyarrow as pa

    from engines.duckdb import connect
    from tests.tablekit import TinyTable

    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string())])
    table = TinyTable(tmp_path / "wh" / "trips", schema, partition=["city"])
    base = table.base([{"id": "a", "ts": 1, "city": "sf"}, {"id": "b", "ts": 1, "city": "sf"}],
                      file_id="sf-0", partition="city=sf")
    table.log([{"id": "c", "ts": 1, "city": "sf"}], deletes=["a"], file_id="sf-0", partition="city=sf",
              base_instant=base)
    con = connect(str(tmp_path / "wh"))
    assert con.execute("SELECT count(*) FROM trips").fetchone() == (2,)
    assert con.execute("SELECT count(*) FROM trips_ro").fetchone() == (2,)
    assert con.execute("SELECT city, count(*) FROM trips GROUP BY city").fetchall() == [("sf", 2)]


@pytest.mark.parametrize("where", ["local", "http"])
def test_views_as_of_an_instant_read_that_version_and_its_schema(warehouse, where, request):
    source = str(warehouse.root) if where == "local" else request.getfixturevalue("server").url
    con = connect(source, token=TOKEN if where == "http" else None, as_of=warehouse.trips_first)
    assert [d[0] for d in con.execute("SELECT * FROM trips").description] == ["id", "ts", "city", "fare", "note"]
    assert rows(con, "SELECT id, fare, note FROM trips ORDER BY id") == [
        {"id": "a", "fare": 5.0, "note": "x"}, {"id": "c", "fare": 1.0, "note": "y"}]
    views = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
    # `events` was first written after that instant: it has no version to show then.
    assert "trips_ro" in views and "events" not in views


def test_a_malformed_as_of_is_an_error(warehouse):
    with pytest.raises(HudiShimError, match="yesterday"):
        connect(str(warehouse.root), as_of="yesterday")


def test_cli_sql_as_of(warehouse, capsysbinary):
    assert main(["sql", "--warehouse", str(warehouse.root), "--as-of", warehouse.trips_first, "--format", "csv",
                 "SELECT count(*) AS n FROM trips"]) == 0
    assert capsysbinary.readouterr().out.decode().splitlines()[-1] == "2"
