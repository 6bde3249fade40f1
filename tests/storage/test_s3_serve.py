"""`hudi-shim serve --warehouse s3://...`: tables found on a real S3-compatible server, served
over HTTP on 127.0.0.1 and queried by DuckDB, read as the same tables do locally."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pyarrow.fs as pafs
import pytest

import shim
from catalog.settings import Settings
from engines.duckdb import connect
from engines.http import ShimClient
from tests.catalog.servekit import live_server

pytestmark = pytest.mark.shared

TABLES = ("sample__cow__v6_simplekeygen_nonhivestyle", "trips__mor__avro__v8_trips_8i3u1d")


@pytest.fixture(scope="module")
def warehouse(s3, shared_tables) -> str:
    system = pafs.S3FileSystem(**s3.storage_options())
    for name in TABLES:
        pafs.copy_files(str(shared_tables[name]), f"lake/wh/{name}", destination_filesystem=system)
    return "s3://lake/wh"


def test_a_warehouse_on_s3_is_discovered_served_and_queried_by_duckdb(s3, warehouse, shared_tables, tmp_path):
    settings = Settings(warehouse=warehouse, storage_options=s3.storage_options(), catalog_db=":memory:",
                        iceberg_dir=str(tmp_path / "iceberg"))
    with live_server(settings) as live:
        listed = {t["name"]: t for t in httpx.get(f"{live.url}/v1/tables").json()["tables"]}
        assert set(listed) == set(TABLES)
        client = ShimClient(live.url)
        con = connect(live.url)
        for name in TABLES:
            local = shim.open_table(str(shared_tables[name]))
            expected = sorted(local.read().to_pylist(), key=repr)
            assert sorted(client.scan(name).to_pylist(), key=repr) == expected
            assert con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] == len(expected)
            ro = local.read(mode="read_optimized").num_rows
            assert con.execute(f'SELECT count(*) FROM "{name}_ro"').fetchone()[0] == ro


def test_the_serve_command_takes_the_store_from_the_aws_environment(s3, warehouse, tmp_path):
    port = s3.port + 1 if s3.port < 65000 else s3.port - 1
    env = {**os.environ, **s3.environment()}
    command = [sys.executable, "-m", "engines.cli", "serve", "--warehouse", warehouse, "--port", str(port),
               "--catalog-db", ":memory:", "--iceberg-dir", str(tmp_path / "iceberg")]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                names = [t["name"] for t in httpx.get(f"http://127.0.0.1:{port}/v1/tables").json()["tables"]]
                break
            except httpx.HTTPError:
                assert process.poll() is None and time.monotonic() < deadline, process.stdout.read().decode()
                time.sleep(0.3)
        assert sorted(names) == sorted(TABLES)
    finally:
        process.terminate()
        output = process.communicate(timeout=30)[0].decode()
    assert s3.secret_key not in output


def test_a_table_registered_by_its_s3_location(s3, warehouse, shared_tables, tmp_path):
    name = TABLES[1]
    settings = Settings(tables=(f"trips={warehouse}/{name}",), storage_options=s3.storage_options(),
                        catalog_db=":memory:", iceberg_dir=str(tmp_path / "iceberg"))
    with live_server(settings) as live:
        [entry] = httpx.get(f"{live.url}/v1/tables").json()["tables"]
        assert entry["name"] == "trips"
        expected = shim.open_table(str(shared_tables[name])).read().num_rows
        assert ShimClient(live.url).scan("trips").num_rows == expected
