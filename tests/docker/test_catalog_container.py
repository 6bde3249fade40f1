"""Cross-engine check through a container: the catalog server runs in the image `docker/build_image.py`
builds (started by Testcontainers, warehouse mounted read-only, port published on 127.0.0.1 only);
DuckDB and the HTTP client on this side must see exactly what in-process reads see, on evolved
tables and on real Hudi tables."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")
os.environ.setdefault("TC_HOST", "127.0.0.1")

from catalog import Catalog
from catalog.settings import Settings
from engines.duckdb import connect
from engines.http import RemoteError, ShimClient
from tests.catalog.servekit import TRIPS_ROWS, build_warehouse
from tests.conftest import REPO
from tests.dockerkit import docker_unavailable

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def image() -> str:
    reason = docker_unavailable()
    if reason is not None:
        pytest.skip(reason)
    built = subprocess.run([sys.executable, str(REPO / "docker" / "build_image.py")], capture_output=True,
                           text=True, check=True, timeout=600)
    return built.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory, shared_tables: dict[str, Path]) -> Path:
    """The evolved tables of the catalog tests, and copies of the real Hudi tables under `real/`."""
    root = tmp_path_factory.mktemp("container-wh")
    build_warehouse(root)
    for name, table in shared_tables.items():
        shutil.copytree(table, root / "real" / name)
    return root


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(image: str, warehouse: Path) -> Iterator[str]:
    from testcontainers.core.container import DockerContainer

    port = _free_port()
    container = DockerContainer(image).with_volume_mapping(str(warehouse), "/warehouse", "ro")
    container.ports["8080/tcp"] = ("127.0.0.1", port)  # type: ignore[assignment]  # published on loopback only
    with container:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                ShimClient(url, timeout=5).tables()
                break
            except RemoteError:
                if time.monotonic() > deadline:
                    logs = container.get_logs()
                    pytest.fail(f"the catalog container did not answer on {url}: {logs!r}")
                time.sleep(0.3)
        yield url


def _ordered(table: pa.Table) -> list[str]:
    return sorted(repr(row) for row in table.to_pylist())


def test_container_serves_every_table_of_the_mounted_warehouse(server, warehouse):
    local = Catalog(Settings(warehouse=str(warehouse), catalog_db=":memory:"))
    assert sorted(ShimClient(server).tables()) == sorted(local.names())
    assert {"trips", "events"} <= set(local.names())


def test_evolved_table_through_the_container_has_the_right_rows(server):
    client = ShimClient(server)
    rows = sorted(client.scan("trips").to_pylist(), key=lambda r: r["id"])
    assert rows == TRIPS_ROWS
    con = connect(server)
    assert con.execute("SELECT city, sum(amount) FROM trips WHERE note IS NULL GROUP BY city ORDER BY city"
                       ).fetchall() == [("sf", 16.0)]


def test_duckdb_and_http_through_the_container_equal_in_process_reads(server, warehouse):
    local = Catalog(Settings(warehouse=str(warehouse), catalog_db=":memory:"))
    remote, client = connect(server), ShimClient(server)
    for name in local.names():
        for mode, view in (("snapshot", name), ("read_optimized", name + "_ro")):
            expected = local.table(name).read(mode=mode)
            want = _ordered(expected)
            got = remote.execute(f'SELECT * FROM "{view}"').to_arrow_table().cast(expected.schema)
            assert _ordered(got) == want, (name, mode)
            assert _ordered(client.scan(name, mode=mode)) == want, (name, mode)


def test_container_cannot_write_to_the_warehouse_and_still_answers(server, warehouse):
    before = sorted(str(p.relative_to(warehouse)) for p in warehouse.rglob("*"))
    ShimClient(server).scan("events", filter="count > 2")
    after = sorted(str(p.relative_to(warehouse)) for p in warehouse.rglob("*"))
    assert before == after


def test_container_serves_the_web_ui_with_its_static_files(server):
    import httpx

    page = httpx.get(f"{server}/ui", timeout=10)
    assert page.status_code == 200 and 'data-table="trips"' in page.text
    script = httpx.get(f"{server}/ui/static/app.js", timeout=10)
    assert script.status_code == 200 and "hudi-shim UI" in script.text


def test_iceberg_loads_from_a_read_only_warehouse_are_json_naming_the_folder(server):
    import httpx

    answer = httpx.get(f"{server}/iceberg/v1/namespaces/default/tables/trips", timeout=60)
    assert answer.headers["content-type"].startswith("application/json"), answer.text[:300]
    error = answer.json()["error"]
    assert answer.status_code == 500 and error["type"] == "PublishFolderError"
    assert "cannot write the Iceberg folder" in error["message"] and "Read-only file system" in error["message"]
    assert "--iceberg-dir" in error["message"]
