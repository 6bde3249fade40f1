"""One catalog, one Trino and one Presto for the whole session, over one warehouse: the evolved
tables the PySpark writer writes (`evolvedkit`), copies of the real Hudi tables (`real_<zip>`) and
of tables Apache Hudi 1.2 writes with partial updates (`oracle_<recipe>`).

Trino reads the catalog's Iceberg REST endpoint with the server's token (catalog `hudi`) and
with a wrong one (catalog `wrong`); Presto 0.287 reads the Hadoop catalog folder the server
keeps (catalog `hudi`), brought up to date by `POST /v1/publish` before it is queried. Both
read the Iceberg tables the server keeps in a real Hive Metastore (catalog `hms`, the session's
`hive_metastore`) and Hudi's own tables synced there with their own Hudi connector
(`hms_hudi`, schema `hudi`). Both also have their own Hudi connector (catalog `native`) over a
file-based Hive metastore folder each (`Stack.metastores`), where tests register the tables
they show it reading wrong, and a catalog that reads those tables matching columns by position
(`native_by_position`).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engines.hms import MetastoreServer
from engines.trino import PRESTO, TRINO, EngineServer
from engines.trino.catalogs import hudi_connector, iceberg_hadoop, iceberg_metastore, iceberg_rest
from tests.engines.trino import evolvedkit
from tests.engines.trino.enginekit import Catalog, catalog_server, engine_server, runner

TOKEN = "trino-presto-test-token"
ORACLE_TABLES = ("mor_partial_updates", "mor_partial_commit_time", "mor_changelog", "mor_nbcc",
                 "mor_consistent_hashing", "mor_two_writers")
"""Tables Apache Hudi writes (`tests.oracle` recipes) that the engines read too: partial-update
log blocks and record positions, what Hudi 1.x writes by default; and tables as other writers
leave them (Flink's changelog mode, the bucket indexes, concurrent writers)."""


@dataclass
class Stack:
    """What the tests query: the catalog, both engines, the warehouse and the table paths."""

    catalog: Catalog
    trino: EngineServer
    presto: EngineServer
    warehouse: Path
    tables: dict[str, Path]
    how: str
    metastores: dict[str, Path]

    def engine(self, flavor: str) -> EngineServer:
        return self.trino if flavor == "trino" else self.presto


@pytest.fixture(scope="session")
def engine_warehouse(tmp_path_factory: pytest.TempPathFactory, spark: Any, shared_tables: dict[str, Path],
                     request: pytest.FixtureRequest) -> Path:
    root = tmp_path_factory.mktemp("engines")
    warehouse = root / "warehouse"
    evolvedkit.build(spark, warehouse)
    for name, table in shared_tables.items():
        shutil.copytree(table, warehouse / "real" / name)
    from tests.oracle.generate import generate  # Apache Hudi's own tables (built once, cached)

    for name, generated in generate(list(ORACLE_TABLES)).items():
        shutil.copytree(generated.path, warehouse / "oracle" / name)
    for name, table in _lance_tables(request).items():
        shutil.copytree(table, warehouse / "lance" / name)
    return warehouse


def _lance_tables(request: pytest.FixtureRequest) -> dict[str, Path]:
    """hudi-rs's tables with Lance base files (`lance_<name>`), where pylance and the registry are
    there (their tests skip otherwise)."""
    try:
        return dict(request.getfixturevalue("lance_tables"))
    except pytest.skip.Exception:
        return {}


@pytest.fixture(scope="session")
def stack(engine_warehouse: Path, hive_metastore: MetastoreServer) -> Iterator[Stack]:
    how = runner()
    root = engine_warehouse.parent
    published = root / "published"
    published.mkdir(exist_ok=True)
    with catalog_server(engine_warehouse, published, TOKEN, how=how, hive_metastore=hive_metastore.uri) as catalog:
        catalog.publish()
        iceberg_uri = f"{catalog.url}/iceberg"
        metastores = {flavor: root / "metastore" / flavor for flavor in ("trino", "presto")}
        for folder in metastores.values():
            folder.mkdir(parents=True, exist_ok=True)
        trino_catalogs = {"hudi": iceberg_rest("trino", iceberg_uri, token=TOKEN),
                          "wrong": iceberg_rest("trino", iceberg_uri, token="not-" + TOKEN),
                          "native": hudi_connector("trino", str(metastores["trino"])),
                          "native_by_position": hudi_connector("trino", str(metastores["trino"]), by_position=True),
                          "hms": iceberg_metastore("trino", hive_metastore.uri),
                          "hms_hudi": hudi_connector("trino", hive_metastore.uri)}
        presto_catalogs = {"hudi": iceberg_hadoop("presto", str(published / "hadoop")),
                           "hms": iceberg_metastore("presto", hive_metastore.uri),
                           "hms_hudi": hudi_connector("presto", hive_metastore.uri),
                           "native": hudi_connector("presto", str(metastores["presto"])),
                           "native_by_position": hudi_connector("presto", str(metastores["presto"]), by_position=True)}
        readable = [engine_warehouse, published, root / "metastore"]
        servers: dict[str, Any] = {}
        errors: list[BaseException] = []
        contexts = {"trino": engine_server(TRINO, trino_catalogs, root / "trino", readable, how=how),
                    "presto": engine_server(PRESTO, presto_catalogs, root / "presto", readable, how=how)}

        def start(flavor: str) -> None:
            try:
                servers[flavor] = contexts[flavor].__enter__()
            except BaseException as exc:  # noqa: BLE001 - reported below, from the test's thread
                errors.append(exc)

        threads = [threading.Thread(target=start, args=(flavor,)) for flavor in contexts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        try:
            if errors:
                raise errors[0]
            tables = {name: engine_warehouse / name for name in evolvedkit.TABLES}
            yield Stack(catalog, servers["trino"], servers["presto"], engine_warehouse, tables, how, metastores)
        finally:
            for flavor in servers:
                contexts[flavor].__exit__(None, None, None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here queries real Trino and Presto servers (marker `engines`)."""
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.engines)
