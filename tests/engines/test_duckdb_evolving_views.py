"""DuckDB views registered before their table changed shape: columns followed by id, in process
and over HTTP, until the views are registered again."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from catalog.settings import Settings
from engines.duckdb import connect
from tests.catalog.servekit import live_server
from tests.tablekit import EvolvingTable, add, drop, rename, retype

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("n", pa.int32()), ("label", pa.string())])


@pytest.fixture
def table(tmp_path) -> EvolvingTable:
    built = EvolvingTable(tmp_path / "wh" / "items", SCHEMA, mor=False)
    built.base([{"id": "a", "ts": 1, "n": 1, "label": "one"}, {"id": "b", "ts": 1, "n": 2, "label": "two"}])
    return built


@contextmanager
def views(table: EvolvingTable, where: str) -> Iterator[tuple[duckdb.DuckDBPyConnection, str]]:
    """A connection with the warehouse's views (in process or through a live server) and its source."""
    root = str(table.path.parent)
    if where == "local":
        yield connect(root), root
        return
    with live_server(Settings(warehouse=root, catalog_db=":memory:")) as server:
        yield connect(server.url), server.url


@pytest.fixture(params=["local", "http"])
def viewed(table, request) -> Iterator[tuple[duckdb.DuckDBPyConnection, str]]:
    """The warehouse's views (in process, then through a live server) and where they come from."""
    with views(table, request.param) as connected:
        yield connected


def fetch(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    return con.execute(sql).fetchall()


def test_renamed_column_keeps_its_data_and_filters(table, viewed):
    con, _ = viewed
    table.alter(rename("n", "count"))
    table.base([{"id": "c", "ts": 1, "count": 3, "label": "three"}], file_id="fg2-0")
    assert fetch(con, "SELECT id, n FROM items ORDER BY id") == [("a", 1), ("b", 2), ("c", 3)]
    assert fetch(con, "SELECT id FROM items WHERE n >= 2 ORDER BY id") == [("b",), ("c",)]
    assert fetch(con, "SELECT sum(n) FROM items WHERE label = 'three'") == [(3,)]


def test_dropped_then_re_added_name_reads_null_until_registered_again(table, viewed):
    con, source = viewed
    table.alter(drop("label"))
    table.alter(add("label", "string"))
    table.base([{"id": "c", "ts": 1, "n": 3, "label": "new"}], file_id="fg2-0")
    # The view's `label` is the dropped column: none of its values, nor the new column's.
    assert fetch(con, "SELECT id, label FROM items ORDER BY id") == [("a", None), ("b", None), ("c", None)]
    assert fetch(con, "SELECT count(*) FROM items WHERE label IS NULL") == [(3,)]
    connect(source, connection=con)
    assert fetch(con, "SELECT id, label FROM items ORDER BY id") == [("a", None), ("b", None), ("c", "new")]


def test_widened_column_is_cast_back_while_values_fit(table, viewed):
    con, source = viewed
    table.alter(retype("n", "long"))
    table.base([{"id": "c", "ts": 1, "n": 7, "label": "x"}], file_id="fg2-0")
    assert fetch(con, "SELECT id, n FROM items ORDER BY id") == [("a", 1), ("b", 2), ("c", 7)]
    assert con.execute("SELECT n FROM items").description[0][1] == "INTEGER"
    table.base([{"id": "d", "ts": 1, "n": 5_000_000_000, "label": "big"}], file_id="fg3-0")
    with pytest.raises(duckdb.Error, match=r"column 'n' of table 'items' is int32 in the DuckDB view but "
                                           r"int64 .*connection=con"):
        fetch(con, "SELECT id, n FROM items")
    connect(source, connection=con)
    assert fetch(con, "SELECT n FROM items WHERE id = 'd'") == [(5_000_000_000,)]


def test_registering_again_shows_the_new_shape(table, viewed):
    con, source = viewed
    table.alter(rename("n", "count"))
    table.alter(add("extra", "double"))
    assert "count" not in [d[0] for d in con.execute("SELECT * FROM items").description]
    connect(source, connection=con)
    assert [d[0] for d in con.execute("SELECT * FROM items").description] == ["id", "ts", "count", "label",
                                                                               "extra"]
    assert fetch(con, "SELECT id, count, extra FROM items_ro ORDER BY id") == [("a", 1, None), ("b", 2, None)]


def test_filter_on_a_column_not_read_follows_its_id(table):
    from catalog.service import Catalog
    from catalog.settings import MEMORY
    from engines.duckdb import LocalSource, ShimDataset

    source = LocalSource(Catalog(Settings(warehouse=str(table.path.parent), catalog_db=MEMORY)))
    dataset = ShimDataset.create(source, "items", "snapshot", source.schema("items"))
    table.alter(drop("n"))
    table.alter(add("n", "int"))
    table.base([{"id": "c", "ts": 1, "n": 9, "label": "x"}], file_id="fg2-0")
    # `n` of the view is the dropped column (null everywhere): `n = 9` matches no row, nor does `n = 1`.
    for value in (9, 1):
        scanned = dataset.scanner(columns=["id"], filter=pc.field("n") == value).to_table()
        assert scanned.column_names == ["id"] and scanned.num_rows == 0
    assert sorted(dataset.scanner(columns=["id"], filter=pc.field("n").is_null()).to_table()
                  .column("id").to_pylist()) == ["a", "b", "c"]


@pytest.mark.parametrize("where", ["local", "http"])
def test_every_batch_has_the_view_types_when_a_filter_is_applied_here(table, where):
    """A filter without an exact shim text is applied on the client; the batches that reach
    DuckDB still carry the types the view was registered with (DuckDB reads the buffers as the
    declared types: a widened column must be cast back, never passed through)."""
    from catalog.service import Catalog
    from catalog.settings import MEMORY
    from engines.duckdb import LocalSource, RemoteSource, ShimDataset
    from engines.http import ShimClient

    with contextlib.ExitStack() as stack:
        if where == "local":
            source: LocalSource | RemoteSource = LocalSource(
                Catalog(Settings(warehouse=str(table.path.parent), catalog_db=MEMORY)))
        else:
            server = stack.enter_context(live_server(Settings(warehouse=str(table.path.parent), catalog_db=MEMORY)))
            source = RemoteSource(ShimClient(server.url))
        dataset = ShimDataset.create(source, "items", "snapshot", source.schema("items"))
        table.alter(retype("n", "long"))
        table.base([{"id": "c", "ts": 1, "n": 7, "label": "three"}], file_id="fg2-0")
        expression = pc.starts_with(pc.field("label"), "t")  # no exact shim text: applied here
        reader = dataset.scanner(columns=["id", "n", "label"], filter=expression).to_reader()
        assert reader.schema.field("n").type == pa.int32()
        batches = list(reader)
        assert batches and all(batch.schema.equals(reader.schema) for batch in batches)
        rows = sorted(row for batch in batches for row in zip(*(c.to_pylist() for c in batch.columns)))
        assert rows == [("b", 2, "two"), ("c", 7, "three")]
