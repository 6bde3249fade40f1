"""Trino reads Hudi tables kept on a real S3-compatible server (s3proxy on 127.0.0.1) through the
catalog: `hudi-shim serve --warehouse s3://...` publishes the Iceberg metadata and written-out
slices to the store (and Presto's Hadoop catalog folder there too); Trino's native S3 file system
and Presto's Hive S3 file system read them and the Hudi base files there, returning the rows the
shim reads from the same tables kept locally."""

from __future__ import annotations

import json
import urllib.request

import pyarrow.fs as pafs
import pytest

import shim
from catalog.server import running
from catalog.settings import Settings
from engines.trino.catalogs import iceberg_hadoop, iceberg_rest, presto_s3_files, s3_files
from engines.trino.distribution import PRESTO, TRINO
from engines.trino.server import start_process
from tests.engines.trino.rowkit import arrow_rows, engine_rows, engine_type, same_rows, squeeze

pytestmark = [pytest.mark.engines, pytest.mark.shared]

TABLES = ("trips__mor__avro__v8_trips_8i3u1d", "sample__cow__v8_simplekeygen_nonhivestyle")
VIEWS = {"snapshot": "", "read_optimized": "_ro"}


@pytest.fixture(scope="module")
def engines_on_s3(s3, shared_tables, tmp_path_factory):
    """Trino on the REST catalog and Presto on a Hadoop catalog folder, both on S3."""
    system = pafs.S3FileSystem(**s3.storage_options())
    for name in TABLES:
        pafs.copy_files(str(shared_tables[name]), f"lake/engines-wh/{name}", destination_filesystem=system)
    settings = Settings(warehouse="s3://lake/engines-wh", storage_options=s3.storage_options(), catalog_db=":memory:",
                        token="s3-test-token", hadoop_catalog_dir="s3://lake/presto-hadoop",
                        hadoop_catalog_seconds=3600.0)
    with running(settings) as live:
        request = urllib.request.Request(f"{live.url}/v1/publish", method="POST",
                                         headers={"Authorization": "Bearer s3-test-token"})
        with urllib.request.urlopen(request, timeout=600) as response:
            assert not json.load(response)["failed"]
        trino = start_process(TRINO, {"hudi": iceberg_rest(
            "trino", f"{live.url}/iceberg", token="s3-test-token",
            s3=s3_files(s3.endpoint, s3.access_key, s3.secret_key))}, folder=tmp_path_factory.mktemp("trino-s3"))
        try:
            presto = start_process(PRESTO, {"hudi": iceberg_hadoop(
                "presto", "s3://lake/presto-hadoop", s3=presto_s3_files(s3.endpoint, s3.access_key, s3.secret_key))},
                folder=tmp_path_factory.mktemp("presto-s3"))
            try:
                yield {"trino": trino, "presto": presto}
            finally:
                presto.stop()
        finally:
            trino.stop()


@pytest.mark.parametrize("flavor", ["trino", "presto"])
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("name", TABLES)
def test_engines_read_tables_on_s3_as_the_shim_reads_them_locally(engines_on_s3, shared_tables, name, view, flavor):
    engine = engines_on_s3[flavor]
    expected = shim.open_table(str(shared_tables[name])).read(mode=view)
    sql = f'SELECT * FROM hudi."default"."{name}{VIEWS[view]}"'
    rows, columns = engine.query_with_types(sql)
    assert [c for c, _ in columns] == [n.lower() for n in expected.schema.names]
    assert [squeeze(t) for _, t in columns] == [engine_type(f.type, flavor) for f in expected.schema]
    got, want = engine_rows(rows, [t for _, t in columns]), arrow_rows(expected, flavor)
    assert same_rows(got, want), f"got {sorted(map(repr, got))[:5]}\nwant {sorted(map(repr, want))[:5]}"
    files = engine.query(f'SELECT file_path FROM hudi."default"."{name}{VIEWS[view]}$files"')
    assert files and all(path.startswith("s3://lake/engines-wh/") for (path,) in files), files
