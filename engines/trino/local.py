"""`hudi-shim trino` and `hudi-shim presto`: a local Trino or Presto on the shim's catalog, until
interrupted.

    hudi-shim serve --warehouse /data/warehouse --hadoop-catalog-dir /data/presto-catalog
    hudi-shim trino --catalog http://127.0.0.1:8080            # Trino on 127.0.0.1:8081
    hudi-shim presto --hadoop-catalog-dir /data/presto-catalog  # Presto on 127.0.0.1:8082

The first run fetches the server from Maven Central (Trino 476: about 800 MB; Presto 0.287:
about 2 GB) into the Maven repository and unpacks the plugins it needs into the cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from engines.foreground import run_until_interrupted
from engines.trino.catalogs import iceberg_hadoop, iceberg_rest
from engines.trino.distribution import PRESTO, TRINO, Distribution
from engines.trino.server import EngineServer, start_process

CATALOG = "hudi"


def trino_catalogs(catalog_url: str, token: str | None) -> dict[str, dict[str, str]]:
    """Trino's catalog `hudi`: the Iceberg connector on the shim's REST catalog at `catalog_url`."""
    return {CATALOG: iceberg_rest("trino", catalog_url.rstrip("/") + "/iceberg", token=token)}


def presto_catalogs(hadoop_catalog_dir: str) -> dict[str, dict[str, str]]:
    """Presto's catalog `hudi`: the Iceberg connector on the folder `serve --hadoop-catalog-dir` keeps."""
    return {CATALOG: iceberg_hadoop("presto", hadoop_catalog_dir)}


def run(distribution: Distribution, catalogs: Mapping[str, Mapping[str, str]], port: int,
        folder: str | None = None) -> int:
    """Start the server, say how to reach it, and keep it running until interrupted (Ctrl-C,
    SIGINT or SIGTERM): then the server's JVM is stopped, and a temporary folder removed."""

    def start(base: Path) -> EngineServer:
        print(f"starting {distribution.name} on 127.0.0.1:{port} (configuration and log in {base}) ...", flush=True)
        return start_process(distribution, catalogs, folder=base, port=port)

    return run_until_interrupted(start, lambda server: server.stop(), lambda server: describe(server, catalogs),
                                 folder, f"hudi-shim-{distribution.flavor}-")


def describe(server: EngineServer, catalogs: Mapping[str, Mapping[str, str]]) -> None:
    """Print where the server listens and its catalogs' properties."""
    print(f"{server.distribution.name} is up at {server.url}")
    for name, properties in catalogs.items():
        print(f"catalog {name} (etc/catalog/{name}.properties):")
        for key, value in properties.items():
            shown = "<token>" if key.endswith("oauth2.token") else value
            print(f"  {key}={shown}")
    tables = server.query(f'SHOW TABLES FROM {CATALOG}."default"')
    print(f"tables in {CATALOG}.default: {', '.join(row[0] for row in tables) or '(none yet)'}")
    print(f"query with the engine's Python client ({'trino' if server.distribution is TRINO else 'presto-python-client'})"
          f" at 127.0.0.1:{server.port}, e.g. SELECT * FROM {CATALOG}.\"default\".<table>; Ctrl-C stops it")


__all__ = ["PRESTO", "TRINO", "presto_catalogs", "run", "trino_catalogs"]
