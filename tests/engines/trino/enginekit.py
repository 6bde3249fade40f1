"""The catalog and the Trino and Presto servers the cross-engine tests query.

With a Docker daemon, each runs in a container started by Testcontainers (the images
`docker/build_image.py` and `docker/build_engine_image.py` build), on the host's network, so
every connection stays on 127.0.0.1; without one, the same servers run as local processes
(`HUDI_SHIM_ENGINE_RUNNER=process|docker` chooses). Folders the servers read are mounted at the
same paths, so the `file://` locations the catalog publishes resolve in every container.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")
os.environ.setdefault("TC_HOST", "127.0.0.1")

from catalog.server import running
from catalog.settings import Settings
from engines.http import RemoteError, ShimClient
from engines.trino.configuration import LOOPBACK, jvm_options, write_etc
from engines.trino.distribution import Distribution
from engines.trino.server import EngineServer, free_port, start_process, tail, wait_until_ready
from tests.conftest import REPO
from tests.dockerkit import docker_unavailable

HEAP = "2G"
#: How a container in a network of its own names the host (Docker's `host-gateway`).
HOST_ALIAS = "host.docker.internal"


def runner() -> str:
    """"docker" or "process": how the servers run (`HUDI_SHIM_ENGINE_RUNNER`, else docker when a
    daemon answers)."""
    chosen = os.environ.get("HUDI_SHIM_ENGINE_RUNNER")
    if chosen in ("docker", "process"):
        return chosen
    return "docker" if docker_unavailable() is None else "process"


@dataclass
class Catalog:
    """A running catalog server: its URL, token and what `POST /v1/publish` answers."""

    url: str
    token: str

    def client(self) -> ShimClient:
        return ShimClient(self.url, token=self.token)

    def publish(self) -> dict:
        """Publish every table now and bring the Hadoop catalog folder (Presto's) up to date."""
        request = urllib.request.Request(f"{self.url}/v1/publish", method="POST",
                                         headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=600) as response:
            import json

            report: dict = json.load(response)
        if report["failed"]:
            raise AssertionError(f"publishing failed: {report['failed']}")
        return report


@contextmanager
def catalog_server(warehouse: Path, published: Path, token: str, *, how: str,
                   hive_metastore: str | None = None) -> Iterator[Catalog]:
    """`hudi-shim serve` over `warehouse`, its Iceberg files and Hadoop catalog folder under
    `published` (iceberg/, hadoop/), keeping `hive_metastore` (if any) up to date, in a container
    or in this process."""
    settings = Settings(warehouse=str(warehouse), catalog_db=":memory:", token=token,
                        iceberg_dir=str(published / "iceberg"), hadoop_catalog_dir=str(published / "hadoop"),
                        hadoop_catalog_seconds=3600.0, hive_metastore=hive_metastore, hive_metastore_seconds=3600.0,
                        iceberg_slices="deletes")  # the engines read base files in place with position deletes
    if how == "process":
        with running(settings) as live:
            yield Catalog(live.url, token)
        return
    from testcontainers.core.container import DockerContainer

    image = subprocess.run([sys.executable, str(REPO / "docker" / "build_image.py")], capture_output=True,
                           text=True, check=True, timeout=900).stdout.strip().splitlines()[-1]
    port = free_port()
    container = (DockerContainer(image)
                 .with_kwargs(network_mode="host")
                 .with_volume_mapping(str(warehouse), str(warehouse), "ro")
                 .with_volume_mapping(str(published), str(published), "rw")
                 .with_command(["serve", "--warehouse", str(warehouse), "--host", "127.0.0.1", "--port", str(port),
                                "--catalog-db", ":memory:", "--token", token,
                                "--iceberg-dir", settings.iceberg_location(),
                                "--hadoop-catalog-dir", str(published / "hadoop"),
                                "--hadoop-catalog-seconds", "3600", "--iceberg-slices", "deletes"]
                               + (["--hive-metastore", hive_metastore, "--hive-metastore-seconds", "3600"]
                                  if hive_metastore else [])))
    with container:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                ShimClient(url, token=token, timeout=5).tables()
                break
            except (RemoteError, OSError):
                if time.monotonic() > deadline:
                    _, stderr = container.get_logs()
                    raise AssertionError(f"the catalog container did not answer on {url}: {stderr[-2000:]!r}")
                time.sleep(0.3)
        yield Catalog(url, token)


@contextmanager
def engine_server(distribution: Distribution, catalogs: Mapping[str, Mapping[str, str]], folder: Path,
                  readable: Sequence[Path], *, how: str) -> Iterator[EngineServer]:
    """A Trino or Presto server with `catalogs`, its files under `folder`; a container sees the
    `readable` folders (read-only, at the same paths)."""
    if how == "process":
        server = start_process(distribution, catalogs, folder=folder, heap=HEAP)
        try:
            yield server
        finally:
            server.stop()
        return
    from testcontainers.core.container import DockerContainer

    sys.path.insert(0, str(REPO / "docker"))
    from build_engine_image import build, layout, own_network

    image = build(distribution.flavor)
    port = free_port()
    inside = layout(distribution)
    isolated = own_network(distribution)
    if isolated:  # the host's services (a Hive Metastore) are reached through the host's gateway
        catalogs = {name: {key: value.replace(f"thrift://{LOOPBACK}:", f"thrift://{HOST_ALIAS}:")
                           for key, value in properties.items()} for name, properties in catalogs.items()}
    etc = write_etc(folder / "etc", distribution, port, catalogs, bind="0.0.0.0" if isolated else LOOPBACK)
    container = (DockerContainer(image).with_volume_mapping(str(etc), inside.etc, "ro")
                 .with_command(inside.command(distribution, jvm_options(distribution, HEAP))))
    if isolated:
        container.ports[f"{port}/tcp"] = (LOOPBACK, port)  # type: ignore[assignment]  # published on loopback only
        container = container.with_kwargs(extra_hosts={HOST_ALIAS: "host-gateway"})
    else:
        container = container.with_kwargs(network_mode="host")
    for path in readable:
        container = container.with_volume_mapping(str(path), str(path), "ro")
    log_path = folder / "server.log"
    with ExitStack() as stack:
        stack.enter_context(container)

        def save_log() -> None:
            stdout, stderr = container.get_logs()
            log_path.write_bytes(stdout + stderr)

        server = EngineServer(distribution, port, log_path, save_log)
        try:
            wait_until_ready(server, 300, alive=lambda: _running(container))
        except BaseException:  # noqa: BLE001 - any failure to start is reported with the server's log
            save_log()
            raise AssertionError(f"{distribution.name} did not start in its container:\n{tail(log_path)}") from None
        yield server
        save_log()


def _running(container: object) -> bool:
    wrapped = container.get_wrapped_container()  # type: ignore[attr-defined]
    wrapped.reload()
    return bool(wrapped.status in ("created", "running"))
