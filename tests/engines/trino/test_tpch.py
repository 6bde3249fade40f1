"""TPC-H at scale factor 0.01 through the catalog, in a real Trino 476: Trino's `tpch` connector
generates the tables, the project's writer writes them as Hudi merge-on-read tables (10% of
lineitem and orders updated through log blocks), PyIceberg writes native Iceberg copies of the
same rows (`bench/bench_tpch.py` builds both). The 22 queries answer alike on both; Trino's
`SHOW STATS` gives our tables data sizes and distinct-value counts as it gives the native copies
after `ANALYZE`, and our theta sketches are the bytes Trino's ANALYZE writes where the values
hash alike."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import datasketches
import pytest

from bench.bench_tpch import VIEWS, names, prepare, same_answer, stack
from bench.tpch_queries import QUERIES, query
from catalog.iceberg.puffin import blob_bytes, read_footer
from engines.trino import EngineServer

RO_QUERIES = (1, 6, 9, 18)  # their answers depend on the updated quantities and prices


@pytest.fixture(scope="module")
def tpch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EngineServer, Path]]:
    root = tmp_path_factory.mktemp("tpch")
    with stack(root) as (trino, url):
        prepare(trino, url, root, 0.01)
        yield trino, root


@pytest.mark.parametrize("number", sorted(QUERIES))
def test_tpch_query_on_snapshots_equals_the_native_copy(tpch, number):
    trino, _ = tpch
    ours = trino.query(query(number, names("hudi", VIEWS["snapshot"])))
    theirs = trino.query(query(number, names("native", VIEWS["snapshot"])))
    assert ours and same_answer(ours, theirs), (ours[:3], theirs[:3])


@pytest.mark.parametrize("number", RO_QUERIES)
def test_tpch_query_on_read_optimized_views_equals_the_native_copy(tpch, number):
    trino, _ = tpch
    ours = trino.query(query(number, names("hudi", VIEWS["read_optimized"])))
    theirs = trino.query(query(number, names("native", VIEWS["read_optimized"])))
    assert ours and same_answer(ours, theirs), (ours[:3], theirs[:3])
    assert ours != trino.query(query(number, names("hudi", VIEWS["snapshot"])))  # the updates are not in it


def _stats(trino: EngineServer, table: str) -> dict[str | None, tuple]:
    return {row[0]: row[1:] for row in trino.query(f"SHOW STATS FOR {table}")}


@pytest.mark.parametrize("table", ["orders", "lineitem", "customer"])
def test_show_stats_gives_data_sizes_and_distinct_counts_as_for_the_analyzed_native_copy(tpch, table):
    trino, _ = tpch
    trino.query(f'ANALYZE native."default".{table}')
    ours, theirs = _stats(trino, f'hudi."default".{table}'), _stats(trino, f'native."default".{table}')
    assert set(ours) == set(theirs)
    for column in (c for c in theirs if c is not None):
        data_size, ndv = ours[column][0], ours[column][1]
        assert ndv is not None and abs(ndv - theirs[column][1]) <= 0.05 * theirs[column][1], column
        # Trino gives data sizes of variable-width columns only (from manifests' column sizes).
        assert (data_size is None) == (theirs[column][0] is None), column
        if data_size is not None:
            assert 0.5 < data_size / theirs[column][0] < 2, column  # other files, other encodings
        assert ours[column][2] == theirs[column][2] == 0.0, column  # no nulls


def test_theta_sketches_are_the_bytes_trino_s_analyze_writes_where_values_hash_alike(tpch):
    """Exact-mode sketches (under 4096 distinct values) of columns whose values the package
    hashes as Iceberg's single-value bytes (bigint, varchar) hold the same hashes: the same
    serialized compact sketch as Trino's (Alpha family) for the same rows, but for the 4 bytes of
    the preamble a compact sketch does not use (Java writes the sampling probability 1.0 there,
    the C++ library of the datasketches package zeros)."""
    trino, _ = tpch
    trino.query('ANALYZE native."default".orders')
    ours, theirs = _sketches(trino, "hudi", "orders"), _sketches(trino, "native", "orders")
    compared = []
    for column in ("o_custkey", "o_orderstatus", "o_orderpriority", "o_clerk"):
        mine, trinos = ours[column], theirs[column]
        assert not datasketches.compact_theta_sketch.deserialize(trinos).is_estimation_mode()
        assert len(mine) == len(trinos) > 16 and mine[:12] + mine[16:] == trinos[:12] + trinos[16:], column
        compared.append(column)
    for column in ("o_orderkey", "o_comment"):  # past 4096: estimates of other sketch families
        a, b = (datasketches.compact_theta_sketch.deserialize(s[column]).get_estimate() for s in (ours, theirs))
        assert abs(a - b) <= 0.05 * b, column
    assert len(compared) == 4


def _sketches(trino: EngineServer, catalog: str, table: str) -> dict[str, bytes]:
    """Column name -> serialized theta sketch of the table's current statistics file."""
    log = f'{catalog}."default"."{table}$metadata_log_entries"'
    [(location,)] = trino.query(f"SELECT file FROM {log} ORDER BY timestamp DESC LIMIT 1")
    metadata = json.loads(Path(location.split("://", 1)[1]).read_text())
    [current] = [s for s in metadata["statistics"] if s["snapshot-id"] == metadata["current-snapshot-id"]]
    path = current["statistics-path"].split("://", 1)[1]
    puffin = read_footer(Path(path).read_bytes(), path)
    [schema] = [s for s in metadata["schemas"] if s["schema-id"] == metadata["current-schema-id"]]
    by_id = {f["id"]: f["name"] for f in schema["fields"]}
    return {by_id[blob["fields"][0]]: blob_bytes(puffin, blob, path) for blob in puffin.blobs}
