"""Run a single-node Trino or Presto server as a local process, and query it.

    server = start_process(TRINO, {"hudi": iceberg_rest("trino", "http://127.0.0.1:8080/iceberg")},
                           folder=Path("/tmp/trino"))
    server.query("SELECT count(*) FROM hudi.\"default\".trips")
    server.stop()

Containers run the same command (`engines.trino.configuration.ServerLayout`); see
`docker/build_engine_image.py`.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.foreground import stop_process
from engines.trino.configuration import LOOPBACK, ServerLayout, jvm_options, write_etc
from engines.trino.distribution import Distribution, install, java_home
from shim.errors import HudiShimError

STARTUP_SECONDS = 240.0
NODES_WAIT_SECONDS = 30.0


class EngineError(HudiShimError):
    """A Trino or Presto server did not start, or a query failed (the engine's message)."""


@dataclass
class EngineServer:
    """A running server: where it listens, and how to stop it.

    Attributes:
        distribution: the server's distribution.
        port: its HTTP port on 127.0.0.1.
        log_path: the server's output.
        stopper: stops the server (a process's or a container's).
    """

    distribution: Distribution
    port: int
    log_path: Path
    stopper: Callable[[], None]
    _stopped: bool = field(default=False, repr=False)

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def connect(self, catalog: str | None = None, schema: str | None = None) -> Any:
        """A DB-API connection from the engine's own Python client (`trino` or `presto-python-client`)."""
        if self.distribution.flavor == "trino":
            import trino.dbapi

            return trino.dbapi.connect(host=LOOPBACK, port=self.port, user="hudi-shim", catalog=catalog,
                                       schema=schema, http_scheme="http")
        import prestodb.dbapi

        return prestodb.dbapi.connect(host=LOOPBACK, port=self.port, user="hudi-shim", catalog=catalog or "system",
                                      schema=schema or "runtime", http_scheme="http")

    def query(self, sql: str, *, catalog: str | None = None, schema: str | None = None) -> list[tuple[Any, ...]]:
        """All rows of `sql`, as the engine's client types them; an engine error raises `EngineError`."""
        rows, _ = self.query_with_types(sql, catalog=catalog, schema=schema)
        return rows

    def query_with_types(self, sql: str, *, catalog: str | None = None,
                         schema: str | None = None) -> tuple[list[tuple[Any, ...]], list[tuple[str, str]]]:
        """All rows of `sql` and the result's (column name, engine type) pairs. A query refused
        with NO_NODES_AVAILABLE (just after start, before the server's own worker has announced
        the catalogs it serves) is tried again for up to `NODES_WAIT_SECONDS`."""
        deadline = time.monotonic() + NODES_WAIT_SECONDS
        while True:
            connection = self.connect(catalog, schema)
            try:
                cursor = connection.cursor()
                try:
                    cursor.execute(sql)
                    rows = [tuple(row) for row in cursor.fetchall()]
                except Exception as exc:  # the clients raise their own error classes
                    if getattr(exc, "error_name", None) == "NO_NODES_AVAILABLE" and time.monotonic() < deadline:
                        time.sleep(0.5)
                        continue
                    raise EngineError(f"{self.distribution.name} failed {sql!r}: {_engine_message(exc)}") from exc
                columns = [(str(d[0]), str(d[1])) for d in cursor.description or ()]
                return rows, columns
            finally:
                connection.close()

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self.stopper()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def start_process(distribution: Distribution, catalogs: Mapping[str, Mapping[str, str]], *, folder: Path,
                  port: int | None = None, heap: str = "2G", query_memory: str = "1GB",
                  startup_seconds: float = STARTUP_SECONDS) -> EngineServer:
    """Start the server as a child process, its configuration and data under `folder`; returns
    once it accepts queries."""
    server, alive = launch(distribution, catalogs, folder=folder, port=port or free_port(), heap=heap,
                           query_memory=query_memory)
    try:
        wait_until_ready(server, startup_seconds, alive=alive)
    except BaseException:
        server.stop()
        raise
    return server


def launch(distribution: Distribution, catalogs: Mapping[str, Mapping[str, str]], *, folder: Path, port: int,
           heap: str, query_memory: str, role: str = "single",
           coordinator_port: int | None = None) -> tuple[EngineServer, Callable[[], bool]]:
    """Start a server process (`role` as `configuration.server_properties` takes it) without
    waiting for it; returns it and whether its process still runs."""
    install_path = install(distribution)
    java = java_home(distribution) / "bin" / "java"
    etc = write_etc(folder / "etc", distribution, port, catalogs, query_memory=query_memory, role=role,
                    coordinator_port=coordinator_port)
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    command = ServerLayout(str(java), str(install_path), str(etc)).command(distribution,
                                                                          jvm_options(distribution, heap))
    log_path = folder / "server.log"
    with open(log_path, "ab") as log:
        process = subprocess.Popen(command, cwd=data, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)

    def stop() -> None:
        stop_process(process)

    return EngineServer(distribution, port, log_path, stop), lambda: process.poll() is None


def wait_until_ready(server: EngineServer, seconds: float, alive: Callable[[], bool] = lambda: True) -> None:
    """Wait until the server's `/v1/info` says it has started (and a node is active)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive():
            raise EngineError(f"{server.distribution.name} exited while starting; its log ends:\n"
                              + tail(server.log_path))
        if _started(server):
            return
        time.sleep(0.5)
    raise EngineError(f"{server.distribution.name} did not start in {seconds:.0f} s; its log ends:\n"
                      + tail(server.log_path))


def _started(server: EngineServer) -> bool:
    try:
        with urllib.request.urlopen(f"{server.url}/v1/info", timeout=2) as response:
            info = json.load(response)
    except (OSError, urllib.error.URLError, ValueError):
        return False
    if info.get("starting", True):
        return False
    try:  # tasks need an active worker node (the coordinator itself), announced after start
        server.query("SELECT 1")
    except EngineError:
        return False
    return True


def tail(path: Path, lines: int = 40) -> str:
    """The last lines of a log file, leaving out Java's stack frames."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(no log)"
    kept = [line for line in text if not line.lstrip().startswith("at ")]
    return "\n".join(kept[-lines:])


def _engine_message(exc: BaseException) -> str:
    message = getattr(exc, "message", None)
    if isinstance(message, str) and message:
        return message
    args: Sequence[Any] = getattr(exc, "args", ())
    for arg in args:
        if isinstance(arg, dict) and "message" in arg:
            return str(arg["message"])
    return str(exc)
