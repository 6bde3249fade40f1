"""Trino and Presto read the PySpark-written evolved tables through the catalog exactly as the
shim's own `Table.read` does: rows with their types, both views, filters, aggregates, a join,
DESCRIBE, and time travel to every published snapshot."""

from __future__ import annotations

import datetime as dt

import duckdb
import pyarrow as pa
import pytest

import shim
from shim.schema import apply, internal_from_arrow, resolve
from tests.engines.trino.conftest import Stack
from tests.engines.trino.rowkit import arrow_rows, engine_rows, engine_type, same_rows, squeeze

ENGINES = ["trino", "presto"]
VIEWS = {"snapshot": "", "read_optimized": "_ro"}


#: The shim's Iceberg tables as the engines reach them: through the REST catalog (Trino) or the
#: Hadoop catalog folder (Presto), catalog `hudi`; through the Hive Metastore it keeps, `hms`.
CATALOGS = ["hudi", "hms"]


def _iceberg_name(table: str, view: str, catalog: str = "hudi") -> str:
    return f'{catalog}."default"."{table}{VIEWS[view]}"'


def check_same(stack: Stack, flavor: str, sql: str, expected: pa.Table) -> None:
    """`sql` on the engine returns `expected`'s columns (names, engine types) and rows."""
    rows, columns = stack.engine(flavor).query_with_types(sql)
    assert [name for name, _ in columns] == [name.lower() for name in expected.schema.names], sql
    assert [squeeze(t) for _, t in columns] == [engine_type(f.type, flavor) for f in expected.schema], sql
    got, want = engine_rows(rows, [t for _, t in columns]), arrow_rows(expected, flavor)
    assert same_rows(got, want), f"{flavor}: {sql}\n got {sorted(map(repr, got))}\nwant {sorted(map(repr, want))}"


@pytest.mark.parametrize("catalog", CATALOGS)
@pytest.mark.parametrize("flavor", ENGINES)
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("table", ["rides", "rides_cow"])
def test_engine_reads_every_row_and_type_as_the_shim(stack, flavor, view, table, catalog):
    expected = shim.open_table(str(stack.tables[table])).read(mode=view)
    assert expected.num_rows >= 5
    check_same(stack, flavor, f"SELECT * FROM {_iceberg_name(table, view, catalog)}", expected)


@pytest.mark.parametrize("catalog", CATALOGS)
@pytest.mark.parametrize("flavor", ENGINES)
def test_evolved_values_are_where_the_shim_puts_them(stack, flavor, catalog):
    """The history's traps, spelt out: renamed passenger keeps its old values, the re-added tip
    does not bring back the dropped ints, widened columns keep their values, the struct's new
    field is null in old rows, the deleted row is gone."""
    rows = stack.engine(flavor).query(
        f"SELECT id, passenger, tip, fare, qty, info.a, info.c FROM {_iceberg_name('rides', 'snapshot', catalog)} "
        "ORDER BY id")
    assert [tuple(r) for r in rows] == [
        ("a", "ann", None, 10.0, 1, 1, None),
        ("b", "bo", "cash", 24.5, 5_000_000_000, 20, "new"),
        ("d", "dee", "card", 41.25, 44, 40, None),
        ("e", "eddie", "cash", 55.0, 6, 50, "e"),
        ("f", "fay", None, 7.5, 1, 6, "la"),
    ]


@pytest.mark.parametrize("flavor", ENGINES)
@pytest.mark.parametrize("table", ["rides", "rides_cow"])
def test_describe_shows_the_current_names_and_types(stack, flavor, table):
    described = stack.engine(flavor).query(f"DESCRIBE {_iceberg_name(table, 'snapshot')}")
    schema = shim.open_table(str(stack.tables[table])).schema()
    assert [(row[0], squeeze(row[1])) for row in described] == [(f.name, engine_type(f.type, flavor))
                                                                 for f in schema]


FILTERS = [
    ("city = 'sf'", "city = 'sf'"),
    ("fare > 20", "fare > 20"),
    ("city = 'nyc' AND qty > 10", "city = 'nyc' AND qty > 10"),
    ("tip IS NULL", "tip IS NULL"),
    ("passenger IN ('ann', 'eddie', 'zed')", "passenger IN ('ann', 'eddie', 'zed')"),
    ("price >= 4.80", "price >= 4.80"),
]


@pytest.mark.parametrize("flavor", ENGINES)
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize(("sql_filter", "shim_filter"), FILTERS)
def test_filters_on_partition_and_data_columns(stack, flavor, view, sql_filter, shim_filter):
    expected = shim.open_table(str(stack.tables["rides"])).read(mode=view, filter=shim_filter)
    check_same(stack, flavor, f"SELECT * FROM {_iceberg_name('rides', view)} WHERE {sql_filter}", expected)


def _reference(stack: Stack, sql: str) -> list[tuple]:
    """`sql` run by DuckDB over the shim's reads of both tables (views `rides`, `rides_cow`)."""
    con = duckdb.connect()
    for name, path in stack.tables.items():
        con.register(name, shim.open_table(str(path)).read())
    return [tuple(row) for row in con.execute(sql).fetchall()]


AGGREGATE = ("SELECT city, count(*), sum(fare), max(qty), count(tip) FROM {rides} GROUP BY city ORDER BY city")
JOIN = ("SELECT m.id, m.fare, c.fare, m.passenger = c.passenger FROM {rides} m JOIN {rides_cow} c ON m.id = c.id "
        "WHERE m.city <> 'la' ORDER BY m.id")


@pytest.mark.parametrize("flavor", ENGINES)
@pytest.mark.parametrize("query", [AGGREGATE, JOIN], ids=["aggregate", "join"])
def test_aggregates_and_joins_equal_duckdb_over_the_shim(stack, flavor, query):
    engine_sql = query.format(rides=_iceberg_name("rides", "snapshot"), rides_cow=_iceberg_name("rides_cow", "snapshot"))
    got = [tuple(row) for row in stack.engine(flavor).query(engine_sql)]
    assert got == _reference(stack, query.format(rides="rides", rides_cow="rides_cow"))


def _as_engine_reads_it(table: shim.Table, flavor: str, view: str, instant: str) -> pa.Table:
    """What reading `table` as of `instant` gives in `flavor`: Trino reads a snapshot with the
    schema of its time, as the shim does; Presto 0.287 reads every snapshot with the table's
    current schema, its columns found by id (renamed ones under today's name, widened to today's
    type, added ones null)."""
    then = table.read(mode=view, as_of=instant)
    if flavor == "trino":
        return then
    current = internal_from_arrow(table.schema(), use_field_ids=True)
    return apply(then, resolve(current, internal_from_arrow(then.schema, use_field_ids=True)))


@pytest.mark.parametrize("catalog", CATALOGS)
@pytest.mark.parametrize("flavor", ENGINES)
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("table", ["rides", "rides_cow"])
def test_time_travel_to_every_published_snapshot(stack, flavor, view, table, catalog):
    hudi_table = shim.open_table(str(stack.tables[table]))
    name = _iceberg_name(table, view, catalog)
    snapshots = stack.engine(flavor).query(
        f'SELECT snapshot_id, committed_at FROM {catalog}."default"."{table}{VIEWS[view]}$snapshots" ORDER BY 1')
    commits = [i.requested_time for i in hudi_table.snapshot().active_timeline.completed_writes()]
    # 12 commits (1 insert, 8 schema changes, 3 writes): the latest and the 10 before it are kept
    assert len(commits) == 12 and [str(snapshot_id) for snapshot_id, _ in snapshots] == commits[-11:]
    for snapshot_id, committed_at in snapshots:
        expected = _as_engine_reads_it(hudi_table, flavor, view, str(snapshot_id))
        check_same(stack, flavor, f"SELECT * FROM {name} FOR VERSION AS OF {snapshot_id}", expected)
        moment = _timestamp_literal(committed_at)
        check_same(stack, flavor, f"SELECT * FROM {name} FOR TIMESTAMP AS OF TIMESTAMP '{moment}'", expected)


def _timestamp_literal(committed_at: object) -> str:
    """A `timestamp with time zone` literal of a snapshot's commit time (milliseconds, UTC); the
    clients give it as a datetime (Trino) or as text (Presto)."""
    if isinstance(committed_at, str):
        return committed_at
    return committed_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"  # type: ignore[attr-defined]
