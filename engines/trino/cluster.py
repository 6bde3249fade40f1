"""A Trino cluster of local processes: a coordinator that only plans and schedules, and workers
that run every task, all on 127.0.0.1 (a port each).

    cluster = start_cluster(TRINO, {"hudi": iceberg_rest("trino", "http://127.0.0.1:8080/iceberg")},
                            folder=Path("/tmp/trino-cluster"), workers=2)
    cluster.coordinator.query("SELECT count(*) FROM hudi.\\"default\\".trips")
    cluster.stop()

This is how a deployment outgrows one machine: the shim publishes metadata, and every worker
reads the table's files itself, so each needs the catalogs (and the files' storage) the
coordinator has. The defaults keep each node small (1 GB of heap, 256 MB per query and node).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from engines.trino.distribution import Distribution
from engines.trino.server import (
    STARTUP_SECONDS,
    EngineError,
    EngineServer,
    free_port,
    launch,
    tail,
    wait_until_ready,
)


@dataclass
class Cluster:
    """A running cluster: the coordinator to query, and the workers."""

    coordinator: EngineServer
    workers: list[EngineServer]

    def active_workers(self) -> int:
        """How many workers the coordinator sees as active."""
        rows = self.coordinator.query("SELECT count(*) FROM system.runtime.nodes "
                                      "WHERE state = 'active' AND NOT coordinator")
        return int(rows[0][0])

    def stop(self) -> None:
        for server in [*self.workers, self.coordinator]:
            server.stop()


def start_cluster(distribution: Distribution, catalogs: Mapping[str, Mapping[str, str]], *, folder: Path,
                  workers: int = 2, heap: str = "1G", query_memory: str = "256MB",
                  startup_seconds: float = STARTUP_SECONDS) -> Cluster:
    """Start a coordinator and `workers` workers, each under `folder/<node>`, with the same
    catalogs; returns once every worker is active."""
    if distribution.flavor != "trino":
        raise EngineError("start_cluster runs Trino clusters only")
    port = free_port()
    started: list[tuple[EngineServer, Callable[[], bool]]] = []
    try:
        coordinator, coordinator_alive = launch(distribution, catalogs, folder=folder / "coordinator", port=port,
                                                heap=heap, query_memory=query_memory, role="coordinator")
        started.append((coordinator, coordinator_alive))
        for index in range(workers):
            worker, alive = launch(distribution, catalogs, folder=folder / f"worker-{index + 1}", port=free_port(),
                                   heap=heap, query_memory=query_memory, role="worker", coordinator_port=port)
            started.append((worker, alive))
        cluster = Cluster(coordinator, [server for server, _ in started[1:]])
        deadline = time.monotonic() + startup_seconds
        wait_until_ready(coordinator, startup_seconds, alive=coordinator_alive)
        while cluster.active_workers() < workers:
            for server, alive in started:
                if not alive():
                    raise EngineError(f"a {distribution.name} node exited while starting; its log ends:\n"
                                      + tail(server.log_path))
            if time.monotonic() > deadline:
                raise EngineError(f"{distribution.name}'s workers did not join in {startup_seconds:.0f} s; "
                                  "the first worker's log ends:\n" + tail(started[1][0].log_path))
            time.sleep(0.5)
        return cluster
    except BaseException:
        for server, _ in reversed(started):
            server.stop()
        raise
