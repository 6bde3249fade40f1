"""A Hive Metastore for the tests (Apache Hive's standalone metastore from Maven Central, Derby
embedded): in a container started by Testcontainers where Docker runs (the image
`docker/build_metastore_image.py` builds, on the host's network), else a local process; the same
choice as the engines' (`HUDI_SHIM_ENGINE_RUNNER`)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engines.hms import DEFAULT_VERSION, MetastoreServer, command, start_process, wait_until_ready, write_conf
from engines.trino.server import free_port
from tests.conftest import REPO


@contextmanager
def metastore_server(folder: Path, *, how: str, version: str = DEFAULT_VERSION) -> Iterator[MetastoreServer]:
    """A running metastore, its configuration (and, as a process, its database and log) under `folder`."""
    if how == "process":
        server = start_process(folder, version=version)
        try:
            yield server
        finally:
            server.stop()
        return
    from testcontainers.core.container import DockerContainer

    sys.path.insert(0, str(REPO / "docker"))
    from build_metastore_image import CONF, DATA, LIB, build, java_path

    port = free_port()
    conf = write_conf(folder, port, DATA)
    container = (DockerContainer(build(version)).with_kwargs(network_mode="host")
                 .with_volume_mapping(str(conf), CONF, "ro")
                 .with_command(command(java_path(), LIB, CONF)))
    log_path = folder / "metastore.log"
    with container:
        server = MetastoreServer(port, log_path, lambda: None)
        try:
            wait_until_ready(server, 240, alive=lambda: _running(container))
            yield server
        finally:
            stdout, stderr = container.get_logs()
            log_path.write_bytes(stdout + stderr)


def _running(container: object) -> bool:
    wrapped = container.get_wrapped_container()  # type: ignore[attr-defined]
    wrapped.reload()
    return bool(wrapped.status in ("created", "running"))
