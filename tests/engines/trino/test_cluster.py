"""A Trino 476 cluster of three local processes (a coordinator that runs no tasks, two workers)
reads the session's tables through each catalog kind Trino has: the REST catalog with the
server's token (`hudi`), the Hive Metastore the server publishes to (`hms`), and a REST catalog
on S3 that vends per-table STS credentials to an OAuth2 client (`vended`, no keys in the
catalog's file). It gives the rows the session's single-node Trino gives, or the shim reads;
the splits run on the workers. A wrong client secret and a table out of a client's scope are
refused."""

from __future__ import annotations

import uuid

import pytest

import shim
from engines.trino import TRINO, EngineError
from engines.trino.catalogs import iceberg_metastore, iceberg_rest, s3_files
from engines.trino.cluster import start_cluster
from tests.conftest import VENDED_TABLES
from tests.engines.trino.conftest import TOKEN
from tests.engines.trino.rowkit import arrow_rows, engine_rows, same_rows

#: Tables both catalogs kinds hold: the evolved ones, and real ones of several files.
TABLES = ("rides", "rides_cow", "real_trips__mor__avro__v8_trips_8i3u1d", "real_sample__cow__v8_simplekeygen_nonhivestyle")
VIEWS = ("", "_ro")


@pytest.fixture(scope="module")
def cluster(stack, hive_metastore, vended_catalog, tmp_path_factory):
    vended_uri = f"{vended_catalog.url}/iceberg"
    files = s3_files(vended_catalog.store.endpoint)  # the store's address; the keys come from the catalog
    credentials = vended_catalog.credentials
    catalogs = {"hudi": iceberg_rest("trino", f"{stack.catalog.url}/iceberg", token=TOKEN),
                "hms": iceberg_metastore("trino", hive_metastore.uri),
                "vended": iceberg_rest("trino", vended_uri, credential=credentials["reader"],
                                       vended_credentials=True, s3=files),
                "vended_scoped": iceberg_rest("trino", vended_uri, credential=credentials["scoped"],
                                              vended_credentials=True, s3=files),
                "vended_wrong": iceberg_rest("trino", vended_uri, credential="reader:not-its-secret",
                                             vended_credentials=True, s3=files)}
    running = start_cluster(TRINO, catalogs, folder=tmp_path_factory.mktemp("trino-cluster"), workers=2)
    try:
        yield running
    finally:
        running.stop()


def _names(stack) -> list[str]:
    listed = {name for (name,) in stack.trino.query('SHOW TABLES FROM hudi."default"')}
    names = [name for name in TABLES if name in listed]
    assert len(names) >= 3, sorted(listed)
    return names


@pytest.mark.parametrize("kind", ["hudi", "hms"])
def test_the_cluster_gives_the_rows_one_node_gives(cluster, stack, kind):
    for name in _names(stack):
        for suffix in VIEWS:
            sql = f'SELECT * FROM {kind}."default"."{name}{suffix}"'
            one, columns = stack.trino.query_with_types(sql)
            many, cluster_columns = cluster.coordinator.query_with_types(sql)
            assert cluster_columns == columns, sql
            assert sorted(map(repr, many)) == sorted(map(repr, one)), sql


def test_splits_run_on_the_workers_only(cluster, stack):
    marker = uuid.uuid4().hex
    for name in _names(stack):
        cluster.coordinator.query(f"SELECT count(*), '{marker}' FROM hudi.\"default\".\"{name}\"")
    queries = cluster.coordinator.query(
        f"SELECT query_id FROM system.runtime.queries WHERE query LIKE '%''{marker}''%' AND state = 'FINISHED' "
        "AND query NOT LIKE '%system.runtime%'")
    ids = ", ".join(f"'{q}'" for (q,) in queries)
    assert len(queries) == len(_names(stack))
    nodes = dict(cluster.coordinator.query("SELECT node_id, coordinator FROM system.runtime.nodes"))
    assert len(nodes) == 3 and sum(nodes.values()) == 1
    split_nodes = cluster.coordinator.query(
        f"SELECT node_id, sum(completed_splits) FROM system.runtime.tasks WHERE query_id IN ({ids}) "
        "GROUP BY node_id HAVING sum(completed_splits) > 0")
    assert split_nodes and not any(nodes[node] for node, _ in split_nodes), split_nodes
    assert len(split_nodes) == 2, f"splits ran on {split_nodes}, not on both workers"


def test_the_cluster_reads_tables_on_s3_with_vended_credentials_and_no_keys_of_its_own(cluster, vended_catalog):
    for path in cluster.coordinator.log_path.parent.glob("etc/catalog/vended*.properties"):
        text = path.read_text(encoding="utf-8")
        assert "aws-access-key" not in text and "aws-secret-key" not in text
    for name in VENDED_TABLES:
        for suffix, mode in (("", "snapshot"), ("_ro", "read_optimized")):
            expected = shim.open_table(str(vended_catalog.tables[name])).read(mode=mode)
            rows, columns = cluster.coordinator.query_with_types(f'SELECT * FROM vended."default"."{name}{suffix}"')
            got, want = engine_rows(rows, [t for _, t in columns]), arrow_rows(expected, "trino")
            assert same_rows(got, want), f"{name}{suffix}: got {sorted(map(repr, got))[:3]}"


def test_a_wrong_secret_and_a_table_out_of_scope_are_refused(cluster):
    with pytest.raises(EngineError):
        cluster.coordinator.query(f'SELECT count(*) FROM vended_wrong."default"."{VENDED_TABLES[0]}"')
    scoped = {name for (name,) in cluster.coordinator.query('SHOW TABLES FROM vended_scoped."default"')}
    assert scoped == {VENDED_TABLES[0], VENDED_TABLES[0] + "_ro"}
    assert cluster.coordinator.query(f'SELECT count(*) FROM vended_scoped."default"."{VENDED_TABLES[0]}"')[0][0] > 0
    with pytest.raises(EngineError):
        cluster.coordinator.query(f'SELECT count(*) FROM vended_scoped."default"."{VENDED_TABLES[1]}"')
