"""DuckDB's selective query through the Iceberg REST catalog, by how the snapshot's deletes are
published (issue 35: "snapshot at most 3x plain Parquet on the selective query").

    python bench/bench_deletion_vectors.py [--table /tmp/hudi-shim-serve-bench] [--rows 4000000] [--repeat 7]

The table of `bench/bench_serve.py` (a MOR table partitioned by city, one file group per city, 10%
of rows updated in log blocks; generated when missing, with its plain Parquet copy) is served by
one `hudi-shim serve` per contender, each with an Iceberg folder of its own:

    positions  --iceberg-slices deletes --iceberg-deletes positions  (v2, Parquet position deletes)
    vectors    --iceberg-slices deletes --iceberg-deletes vectors    (v3, deletion vectors)
    auto       --iceberg-slices auto (the default: this table's slices are merged)

and, as the floor, the read-optimized view of the `auto` server (base files alone, no deletes).

DuckDB 1.5.5 attaches each (its iceberg extension) and runs `SELECT sum(fare) ... WHERE city =
'berlin'` (one column of one partition); plain Parquet runs the same query with
`read_parquet(..., hive_partitioning = true)`. Contenders run in turn, 8 queries each per round,
round after round in this one process; the ratios compare the fastest runs (medians beside).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from functools import partial
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from bench.bench_serve import (
    SELECTIVE_CITY,
    free_port,
    generate,
    interleaved,
    start_server,
    write_plain_copy,
)

#: Contender -> `hudi-shim serve` options.
CONTENDERS = {
    "positions": ("--iceberg-slices", "deletes", "--iceberg-deletes", "positions"),
    "vectors": ("--iceberg-slices", "deletes", "--iceberg-deletes", "vectors"),
    "auto": ("--iceberg-slices", "auto"),
}


def total(con: Any, view: str) -> float:
    row = con.execute(f"SELECT sum(fare) FROM {view} WHERE city = '{SELECTIVE_CITY}'").fetchone()
    assert row is not None
    return float(row[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", default="/tmp/hudi-shim-serve-bench")
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    import duckdb

    from engines.iceberg import attach

    table_path, plain_path = os.path.join(args.table, "bench"), os.path.join(args.table, "plain")
    if not os.path.exists(os.path.join(table_path, ".hoodie")):
        print("generating", generate(table_path, args.rows, 0.1), file=sys.stderr)
        write_plain_copy(table_path, plain_path)
    servers: list[subprocess.Popen[bytes]] = []
    connections: list[Any] = []
    try:
        plain = duckdb.connect()
        connections.append(plain)
        plain.execute(f"CREATE VIEW bench AS SELECT * FROM read_parquet('{plain_path}/*/*.parquet', "
                      "hive_partitioning = true)")
        queries = {"plain": partial(total, plain, "bench")}
        for name, options in CONTENDERS.items():
            folder = os.path.join(args.table, f"iceberg-{name}")
            shutil.rmtree(folder, ignore_errors=True)
            port = free_port()
            servers.append(start_server(table_path, port, "--iceberg-dir", folder, *options))
            con = attach(f"http://127.0.0.1:{port}")
            connections.append(con)
            queries[name] = partial(total, con, "shim.default.bench")
            if name == "auto":  # the floor: the read-optimized view, base files alone, no deletes
                queries["read_optimized"] = partial(total, con, "shim.default.bench_ro")
        for query in queries.values():
            query()  # warm-up: the first load publishes the table
        timed = interleaved(max(args.repeat, 3), queries, inner=8)
    finally:
        for con in connections:
            con.close()
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
    t_plain, m_plain, expected = timed.pop("plain")
    results: dict[str, object] = {"cores": os.cpu_count(), "rows": args.rows, "plain_parquet_s": round(t_plain, 4)}
    for name, (fastest, median, got) in timed.items():
        # (the read-optimized view leaves the log records out: its sum differs)
        assert name == "read_optimized" or abs(got - expected) <= 1e-6 * abs(expected), (name, got, expected)
        results[f"{name}_s"] = round(fastest, 4)
        results[f"{name}_vs_plain_time"] = round(fastest / t_plain, 2)
        results[f"{name}_vs_plain_time_median"] = round(median / m_plain, 2)
    print(json.dumps(results, indent=2))
    for name in (*CONTENDERS, "read_optimized"):
        print(f"selective DuckDB over the catalog, {name:<9} = {results[f'{name}_vs_plain_time']}x plain Parquet "
              f"(medians {results[f'{name}_vs_plain_time_median']}x; target <= 3x)")


if __name__ == "__main__":
    main()
