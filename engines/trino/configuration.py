"""A Trino or Presto server's configuration folder (`etc/`): a single node, or a cluster's
coordinator or worker; and the Java command that runs it.

The command is built here rather than by the distributions' launchers (a Go binary in Trino, a
Python script in Presto), so a local process and a container run exactly the same thing. The
server listens on 127.0.0.1 only.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from engines.trino.distribution import Distribution

LOOPBACK = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class ServerLayout:
    """Where a server's pieces are, as the server process sees them (here, or inside a container)."""

    java: str
    install: str
    etc: str

    def command(self, distribution: Distribution, jvm_options: list[str]) -> list[str]:
        """The server's command line."""
        return [self.java, "-cp", f"{self.install}/lib/*", *jvm_options,
                f"-Dconfig={self.etc}/config.properties",
                f"-Dlog.levels-file={self.etc}/log.properties",
                f"-Dcatalog.config-dir={self.etc}/catalog",
                f"-Dplugin.dir={self.install}/plugin",
                distribution.main_class]


def jvm_options(distribution: Distribution, heap: str) -> list[str]:
    """JVM options for a small single-node server."""
    options = [f"-Xmx{heap}", "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError", "-Djdk.attach.allowAttachSelf=true",
               "-Dfile.encoding=UTF-8", "-Duser.timezone=UTC", "-XX:-UsePerfData"]
    if distribution.flavor == "trino":
        options += ["--enable-native-access=ALL-UNNAMED", "-XX:+EnableDynamicAgentLoading"]
    return options


def server_properties(distribution: Distribution, port: int, *, query_memory: str = "1GB",
                      node_id: str | None = None, bind: str = LOOPBACK, role: str = "single",
                      coordinator_port: int | None = None) -> dict[str, str]:
    """config.properties of a server on `bind`:`port` (127.0.0.1; 0.0.0.0 inside a container of
    its own, whose port is published on the host's 127.0.0.1). `role`: "single", a coordinator
    that also runs tasks; "coordinator", one that leaves tasks to its workers; "worker", a node
    that announces itself to the coordinator on `coordinator_port` and runs tasks."""
    if role not in ("single", "coordinator", "worker"):
        raise ValueError(f"unknown server role {role!r}")
    if role == "worker" and coordinator_port is None:
        raise ValueError("a worker needs its coordinator's port")
    properties = {
        "coordinator": str(role != "worker").lower(),
        "node-scheduler.include-coordinator": str(role == "single").lower(),
        "http-server.http.port": str(port),
        "discovery.uri": f"http://{LOOPBACK}:{coordinator_port or port}",
        "node.environment": "hudishim",
        "node.id": node_id or str(uuid.uuid4()),
        "node.internal-address": LOOPBACK,
        "node.bind-ip": bind,
        "query.max-memory": query_memory,
        "query.max-memory-per-node": query_memory,
    }
    if role == "worker":
        del properties["node-scheduler.include-coordinator"]
    if distribution.flavor == "presto" and role != "worker":
        properties["discovery-server.enabled"] = "true"
        properties["query.max-total-memory-per-node"] = query_memory
    return properties


def write_etc(folder: Path, distribution: Distribution, port: int, catalogs: Mapping[str, Mapping[str, str]],
              *, query_memory: str = "1GB", bind: str = LOOPBACK, role: str = "single",
              coordinator_port: int | None = None) -> Path:
    """Write `folder` (config.properties, log.properties, catalog/<name>.properties); returns it.
    `role` and `coordinator_port` as `server_properties` takes them."""
    (folder / "catalog").mkdir(parents=True, exist_ok=True)
    for stale in (folder / "catalog").glob("*.properties"):
        stale.unlink()
    _write_properties(folder / "config.properties", server_properties(
        distribution, port, query_memory=query_memory, bind=bind, role=role, coordinator_port=coordinator_port))
    root_logger = "io.trino" if distribution.flavor == "trino" else "com.facebook.presto"
    _write_properties(folder / "log.properties", {root_logger: "WARN",
                                                  f"{root_logger}.server.Server": "INFO",
                                                  f"{root_logger}.server.PrestoServer": "INFO"})
    for name, properties in catalogs.items():
        _write_properties(folder / "catalog" / f"{name}.properties", properties)
    return folder


def _write_properties(path: Path, properties: Mapping[str, str]) -> None:
    path.write_text("".join(f"{key}={value}\n" for key, value in properties.items()), encoding="utf-8")
