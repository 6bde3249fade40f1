"""What the engines see of the catalog besides the rows: a wrong token fails with a clear error
and no rows; a new commit shows at once in Trino (REST) and in Presto once the Hadoop catalog
folder is brought up to date; an inflight write never shows. Through the Hive Metastore, a
commit whose writer announces it (Hudi's HTTP commit callback) shows in both at the next query,
with no publication asked for and no timer."""

from __future__ import annotations

import pyarrow as pa
import pytest

import shim
from engines.trino import EngineError
from tests.engines.trino.conftest import TOKEN
from tests.engines.trino.rowkit import arrow_rows, engine_rows
from tests.tablekit import TinyTable
from tests.writekit import write


def test_trino_with_a_wrong_token_gets_a_clear_error_and_no_rows(stack):
    for sql in ('SELECT * FROM wrong."default".rides', 'SHOW TABLES FROM wrong."default"'):
        with pytest.raises(EngineError) as failure:
            stack.trino.query(sql)
        message = str(failure.value)
        assert "Not authorized: missing or wrong bearer token" in message, message
    assert [row[0] for row in stack.trino.query('SHOW TABLES FROM hudi."default"')]  # the right token works


SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("n", pa.int64())])


@pytest.fixture(scope="module")
def fresh(stack):
    """A small merge-on-read table added to the warehouse while the servers run, and the
    instant of its base file."""
    table = TinyTable(stack.warehouse / "fresh", SCHEMA)
    return table, table.base([{"id": "a", "ts": 1, "n": 1}, {"id": "b", "ts": 1, "n": 2}])


def _rows(stack, flavor: str) -> list[tuple]:
    rows, columns = stack.engine(flavor).query_with_types('SELECT * FROM hudi."default".fresh')
    return sorted(engine_rows(rows, [t for _, t in columns]))


def _shim_rows(table: TinyTable) -> list[tuple]:
    return sorted(arrow_rows(shim.open_table(str(table.path)).read(), "trino"))


@pytest.mark.parametrize("flavor", ["trino", "presto"])
def test_a_new_table_and_its_next_commits_show_and_inflight_ones_never(stack, fresh, flavor):
    table, base_instant = fresh
    stack.catalog.publish()  # Presto's folder; Trino asks the catalog at every query
    before = _rows(stack, flavor)
    assert before == _shim_rows(table) and len(before) == 2

    value = 10 if flavor == "trino" else 20
    table.log([{"id": "a", "ts": 2, "n": value}], base_instant=base_instant)
    table.log([{"id": "b", "ts": 3, "n": 99}], base_instant=base_instant, complete=False)  # stays inflight
    if flavor == "presto":
        assert _rows(stack, flavor) == before  # the folder still holds the previous commit
        stack.catalog.publish()
    after = _rows(stack, flavor)
    assert after == _shim_rows(table)
    assert ("a", 2, value) in after and ("b", 1, 2) in after  # the inflight update of b never shows


@pytest.mark.parametrize("flavor", ["trino", "presto"])
def test_a_commit_its_writer_announces_shows_through_the_metastore_at_the_next_query(stack, flavor):
    path = stack.warehouse / f"announced_{flavor}"
    announce = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.commit.callback.on": "true",
                "hoodie.write.commit.callback.http.url": f"{stack.catalog.url}/v1/commits",
                "hoodie.write.commit.callback.http.custom.headers": f"Authorization:Bearer {TOKEN}"}
    engine = stack.engine(flavor)
    sql = f'SELECT id, ts, fare FROM hms."default".announced_{flavor} ORDER BY id'
    write(path, [{"id": "a", "ts": 1, "region": "eu", "fare": 1.0}, {"id": "b", "ts": 1, "region": "us", "fare": 2.0}],
          **announce)  # a new table: registered in the metastore by its first commit
    assert engine.query(sql) == [("a", 1, 1.0), ("b", 1, 2.0)]
    write(path, [{"id": "a", "ts": 2, "region": "eu", "fare": 10.0}], **announce)  # a log update
    assert engine.query(sql) == [("a", 2, 10.0), ("b", 1, 2.0)]
