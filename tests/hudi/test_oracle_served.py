"""Tables Apache Hudi wrote with partial updates and record positions, served: DuckDB (in process
and over HTTP), the HTTP scan API and the Iceberg catalog's published views (DuckDB's iceberg
extension, PyIceberg) read what the shim reads in process, which equals Spark+Hudi's reads
(`test_oracle_reads`)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

from catalog.service import Catalog
from catalog.settings import Settings
from engines.duckdb import connect
from engines.http import ShimClient
from engines.iceberg import attach
from tests.catalog.servekit import live_server
from tests.oracle.generate import GeneratedTable

pytestmark = [pytest.mark.hudi_oracle, pytest.mark.spark]

SERVED = ("mor_partial_updates", "mor_partial_commit_time")


def ordered(table: pa.Table) -> list[str]:
    plain = []
    for column in table.columns:
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        plain.append(column)
    return sorted(repr(row) for row in pa.table(plain, names=table.column_names).to_pylist())


@pytest.mark.parametrize("recipe", SERVED)
def test_partial_update_tables_read_the_same_served_as_in_process(hudi_tables: dict[str, GeneratedTable],
                                                                  recipe: str, tmp_path):
    path = hudi_tables[recipe].path
    settings = Settings(tables=(f"t={path}",), catalog_db=":memory:", iceberg_dir=str(tmp_path / "ice"))
    catalog = Catalog(Settings(tables=(f"t={path}",), catalog_db=":memory:"))
    try:
        expected = {mode: catalog.table("t").read(mode=mode) for mode in ("snapshot", "read_optimized")}
    finally:
        catalog.close()
    with live_server(settings) as live:
        client = ShimClient(live.url)
        views = connect(live.url)
        published = attach(live.url)
        rest = load_catalog("shim", type="rest", uri=f"{live.url}/iceberg")
        for mode, name in (("snapshot", "t"), ("read_optimized", "t_ro")):
            want = ordered(expected[mode])
            assert ordered(client.scan("t", mode=mode)) == want, ("http", recipe, mode)
            got = views.execute(f"SELECT * FROM {name}").to_arrow_table().cast(expected[mode].schema)
            assert ordered(got) == want, ("duckdb over http", recipe, mode)
            got = published.execute(f"SELECT * FROM shim.default.{name}").to_arrow_table()
            assert ordered(got.cast(expected[mode].schema)) == want, ("iceberg, duckdb", recipe, mode)
            got = rest.load_table(f"default.{name}").scan().to_arrow()
            assert ordered(got.cast(expected[mode].schema)) == want, ("iceberg, pyiceberg", recipe, mode)
    assert expected["snapshot"] != expected["read_optimized"]  # the logs change rows: the test can fail
