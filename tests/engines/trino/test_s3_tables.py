"""Trino reads Hudi tables kept on a real S3-compatible server (s3proxy on 127.0.0.1) through the
catalog: `hudi-shim serve --warehouse s3://...` publishes the Iceberg metadata and written-out
slices to the store, and Trino's native S3 file system reads them and the Hudi base files there,
returning the rows the shim reads from the same tables kept locally."""

from __future__ import annotations

import pyarrow.fs as pafs
import pytest

import shim
from catalog.server import running
from catalog.settings import Settings
from engines.trino.catalogs import iceberg_rest, s3_files
from engines.trino.distribution import TRINO
from engines.trino.server import start_process
from tests.engines.trino.rowkit import arrow_rows, engine_rows, engine_type, same_rows, squeeze

pytestmark = [pytest.mark.engines, pytest.mark.shared]

TABLES = ("trips__mor__avro__v8_trips_8i3u1d", "sample__cow__v8_simplekeygen_nonhivestyle")
VIEWS = {"snapshot": "", "read_optimized": "_ro"}


@pytest.fixture(scope="module")
def trino_on_s3(s3, shared_tables, tmp_path_factory):
    system = pafs.S3FileSystem(**s3.storage_options())
    for name in TABLES:
        pafs.copy_files(str(shared_tables[name]), f"lake/trino-wh/{name}", destination_filesystem=system)
    settings = Settings(warehouse="s3://lake/trino-wh", storage_options=s3.storage_options(), catalog_db=":memory:",
                        token="s3-test-token")
    with running(settings) as live:
        catalogs = {"hudi": iceberg_rest("trino", f"{live.url}/iceberg", token="s3-test-token",
                                         s3=s3_files(s3.endpoint, s3.access_key, s3.secret_key))}
        server = start_process(TRINO, catalogs, folder=tmp_path_factory.mktemp("trino-s3"))
        try:
            yield server
        finally:
            server.stop()


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("name", TABLES)
def test_trino_reads_tables_on_s3_as_the_shim_reads_them_locally(trino_on_s3, s3, shared_tables, name, view):
    expected = shim.open_table(str(shared_tables[name])).read(mode=view)
    sql = f'SELECT * FROM hudi."default"."{name}{VIEWS[view]}"'
    rows, columns = trino_on_s3.query_with_types(sql)
    assert [c for c, _ in columns] == [n.lower() for n in expected.schema.names]
    assert [squeeze(t) for _, t in columns] == [engine_type(f.type, "trino") for f in expected.schema]
    got, want = engine_rows(rows, [t for _, t in columns]), arrow_rows(expected, "trino")
    assert same_rows(got, want), f"got {sorted(map(repr, got))[:5]}\nwant {sorted(map(repr, want))[:5]}"
    files = trino_on_s3.query(f'SELECT file_path FROM hudi."default"."{name}{VIEWS[view]}$files"')
    assert files and all(path.startswith("s3://lake/trino-wh/") for (path,) in files), files
