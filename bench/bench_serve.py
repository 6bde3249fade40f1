"""Serving benchmarks: the HTTP Arrow stream against an in-process scan, and a selective DuckDB query
over the shim against DuckDB over plain Parquet of the same data.

    python bench/bench_serve.py [--table /tmp/hudi-shim-serve-bench] [--rows 4000000] [--repeat 5]

Generates (when missing) a MOR table partitioned by city (8 partitions, one file group each, 10% of
rows updated through Avro log blocks) and a hive-partitioned plain Parquet copy of its snapshot.
The server runs as a separate process (`hudi-shim serve`), on a loopback port. Contenders run in
turn, round after round, so a shared machine's changing speed weighs on each alike; ratios compare
the fastest runs (medians beside them).
Targets: HTTP stream >= 0.8x the in-process throughput; the selective query <= 2x plain Parquet.
The selective query also runs through the Iceberg REST catalog (DuckDB's iceberg extension: the
engine reads the published files itself, as Trino would).
Also measured: the stream with lz4 compression (for slow networks) and the bytes each sends.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

import shim
from bench.gen_table import CITIES, make_rows
from shim.properties import TableType
from shim.storage import as_storage
from shim.timeline.instant import Action
from shim.write.clock import new_instant_time
from shim.write.commit import CommitRecord, InstantFiles
from shim.write.data_files import avro_record_schema, write_base_file, write_log_blocks
from shim.write.table_init import TableSpec, create_table

SELECTIVE_CITY = "berlin"
T = TypeVar("T")


def generate(path: str, rows: int, updates: float, seed: int = 11, *, deletes: bool = False) -> dict[str, object]:
    """A MOR table partitioned by city, one file group per city, a fraction of rows updated in logs
    (with `deletes`, deleted: the logs hold delete blocks alone)."""
    if os.path.exists(path):
        shutil.rmtree(path)
    rng = np.random.default_rng(seed)
    spec = TableSpec(name="serve_bench", record_key_fields=("id",), table_type=TableType.MERGE_ON_READ,
                     partition_fields=("city",), ordering_fields=("ts",), hive_style_partitioning=True)
    data = make_rows(0, rows, 1, rng)
    avro = json.dumps(avro_record_schema("serve_bench", data.schema))
    config = create_table(path, spec, avro)

    def commit(writes_for: Callable[[str], list], operation: str) -> None:
        instant = new_instant_time()
        files = InstantFiles(as_storage(path), config, instant, Action.DELTA_COMMIT)
        files.request()
        files.start(b"{}")
        files.complete(CommitRecord(tuple(writes_for(instant)), operation, {"schema": avro}))

    base_names: dict[str, str] = {}
    base_instant: list[str] = []

    def bases(instant: str) -> list:
        base_instant.append(instant)
        writes = []
        for g, city in enumerate(CITIES):
            part = data.filter(pc.equal(data["city"], city))
            write = write_base_file(as_storage(path), config, partition_path=f"city={city}", file_id=f"{g:08d}-serve-0000-0",
                                    instant=instant, write_token=f"{g}-1-{g}", data=part, partition_id=g)
            base_names[city] = write.file_name
            writes.append(write)
        return writes

    def logs(instant: str) -> list:
        writes = []
        for g, city in enumerate(CITIES):
            part = data.filter(pc.equal(data["city"], city))
            chosen = np.sort(rng.choice(part.num_rows, int(part.num_rows * updates), replace=False))
            changed = part.take(pa.array(chosen)).set_column(1, "ts", pa.array(np.full(len(chosen), 2, np.int64)))
            changed = changed.set_column(3, "fare", pa.array(rng.random(len(chosen)) * 100.0))
            change = {"delete_keys": changed["id"].to_pylist()} if deletes else {"upserts": changed}
            writes.append(write_log_blocks(as_storage(path), config, partition_path=f"city={city}",
                                           file_id=f"{g:08d}-serve-0000-0", base_instant=base_instant[0],
                                           instant=instant, write_token=f"{g}-2-{g}", partition_id=g,
                                           base_file=base_names[city], **change))
        return writes

    commit(bases, "BULK_INSERT")
    commit(logs, "UPSERT")
    return {"rows": rows, "partitions": len(CITIES), ("deleted_fraction" if deletes else "updated_fraction"): updates}


def write_plain_copy(table_path: str, plain_path: str) -> None:
    """The table's snapshot as plain hive-partitioned Parquet (what DuckDB reads without the shim)."""
    if os.path.exists(plain_path):
        shutil.rmtree(plain_path)
    snapshot = shim.open_table(table_path).read()
    pq.write_to_dataset(snapshot, plain_path, partition_cols=["city"])


def interleaved(repeat: int, runs: Mapping[str, Callable[[], T]], inner: int = 1) -> dict[str, tuple[float, float, T]]:
    """Each run's fastest and median time over `repeat` rounds, and its last result.

    Every round runs each contender in turn, `inner` times in a row, so the machine's changing
    speed (it may be shared) weighs on all of them alike, and what one contender leaves behind
    (a query through DuckDB's iceberg extension leaves the process slower for the next few
    milliseconds) weighs only on the first of the next one's runs."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    results: dict[str, T] = {}
    for _ in range(repeat):
        for name, fn in runs.items():
            for _ in range(inner):
                start = time.perf_counter()
                results[name] = fn()
                times[name].append(time.perf_counter() - start)
    return {name: (min(t), statistics.median(t), results[name]) for name, t in times.items()}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(table_path: str, port: int, *options: str) -> subprocess.Popen[bytes]:
    """`hudi-shim serve` of the table as `bench` (with more `options`), once it answers."""
    process = subprocess.Popen(
        [sys.executable, "-m", "engines.cli", "serve", "--table", f"bench={table_path}", "--port", str(port),
         "--catalog-db", ":memory:", *options],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.terminate()
    raise RuntimeError("the server did not start")


def count(reader: pa.RecordBatchReader) -> int:
    return sum(batch.num_rows for batch in reader)


def wire_bytes(url: str, mode: str, compression: str | None, dictionaries: bool = True) -> int:
    """Bytes of the scan's HTTP response body (as `ShimClient` asks for it: repeated strings
    dictionary-encoded, unless `dictionaries` is false)."""
    import httpx

    body = {"mode": mode, "dictionary_strings": dictionaries, **({"compression": compression} if compression else {})}
    with httpx.stream("POST", f"{url}/v1/tables/bench/scan", json=body, timeout=300) as response:
        return sum(len(chunk) for chunk in response.iter_raw())


def http_vs_in_process(table_path: str, url: str, repeat: int) -> dict[str, object]:
    """Whole-table scans (all columns): streamed from the server vs iterated in this process.

    Ratios compare the fastest runs (and, in `*_median`, the median runs)."""
    from engines.http import ShimClient

    results: dict[str, object] = {}
    table = shim.open_table(table_path)
    client, lz4 = ShimClient(url), ShimClient(url, compression="lz4")
    plain = ShimClient(url, wire_dictionaries=False)
    for mode in ("snapshot", "read_optimized"):
        count(client.scan_batches("bench", mode=mode))  # warm-up: the server opens the table
        timed = interleaved(repeat, {
            "local": partial(lambda m: count(table.scan(mode=m)), mode),
            "http": partial(lambda m: count(client.scan_batches("bench", mode=m)), mode),
            "http_lz4": partial(lambda m: count(lz4.scan_batches("bench", mode=m)), mode),
            "http_plain_strings": partial(lambda m: count(plain.scan_batches("bench", mode=m)), mode),
        })
        (t_local, m_local, n_local), (t_http, m_http, n_http) = timed["local"], timed["http"]
        t_lz4, _, n_lz4 = timed["http_lz4"]
        assert n_local == n_http == n_lz4, (n_local, n_http, n_lz4)
        results[f"{mode}_http_lz4_vs_in_process_throughput"] = round(t_local / t_lz4, 2)
        results[f"{mode}_http_plain_strings_vs_in_process_throughput"] = round(
            t_local / timed["http_plain_strings"][0], 2)
        results[f"{mode}_wire_bytes_plain_strings"] = wire_bytes(url, mode, None, dictionaries=False)
        results[f"{mode}_wire_bytes"], results[f"{mode}_wire_bytes_lz4"] = wire_bytes(url, mode, None), \
            wire_bytes(url, mode, "lz4")
        results[f"{mode}_rows"] = n_local
        results[f"{mode}_in_process_s"] = round(t_local, 3)
        results[f"{mode}_http_s"] = round(t_http, 3)
        results[f"{mode}_http_vs_in_process_throughput"] = round(t_local / t_http, 2)
        results[f"{mode}_http_vs_in_process_throughput_median"] = round(m_local / m_http, 2)
    return results


def iceberg_publish(url: str) -> dict[str, object]:
    """Seconds to load each view from the Iceberg REST catalog: the first load publishes it (files
    written out, position deletes), the second finds it published."""
    import httpx

    results: dict[str, object] = {}
    for name in ("bench", "bench_ro"):
        for attempt in ("first", "again"):
            start = time.perf_counter()
            httpx.get(f"{url}/iceberg/v1/namespaces/default/tables/{name}", timeout=300).raise_for_status()
            results[f"iceberg_load_{name}_{attempt}_s"] = round(time.perf_counter() - start, 3)
    return results


def selective_queries(table_path: str, plain_path: str, url: str, repeat: int) -> dict[str, object]:
    """One column of one partition: DuckDB over the shim (in-process and HTTP) vs over plain Parquet.

    Each query takes milliseconds: every round (at least 7) runs each query 8 times in a row; the
    fastest runs compare (and, in `*_median`, the median runs)."""
    repeat = max(repeat, 7)
    import duckdb

    from engines.duckdb import connect

    def value(con: duckdb.DuckDBPyConnection, view: str) -> float:
        row = con.execute(f"SELECT sum(fare) FROM {view} WHERE city = '{SELECTIVE_CITY}'").fetchone()
        assert row is not None
        return float(row[0])

    plain = duckdb.connect()
    plain.execute(f"CREATE VIEW bench AS SELECT * FROM read_parquet('{plain_path}/*/*.parquet', "
                  "hive_partitioning = true)")
    from engines.iceberg import attach

    local, remote, iceberg = connect(table_path), connect(url), attach(url)
    queries = {"plain": partial(value, plain, "bench"), "snapshot": partial(value, local, "bench"),
               "read_optimized": partial(value, local, "bench_ro"), "snapshot_http": partial(value, remote, "bench"),
               "snapshot_iceberg": partial(value, iceberg, "shim.default.bench"),
               "read_optimized_iceberg": partial(value, iceberg, "shim.default.bench_ro")}
    for query in queries.values():
        query()  # warm-up
    timed = interleaved(repeat, queries, inner=8)
    t_plain, m_plain, expected = timed.pop("plain")
    results: dict[str, object] = {"selective_plain_parquet_s": round(t_plain, 4)}
    for label, (elapsed, median, got) in timed.items():
        if label.startswith("snapshot"):
            assert abs(got - expected) <= 1e-6 * abs(expected), (label, got, expected)
        results[f"selective_{label}_s"] = round(elapsed, 4)
        results[f"selective_{label}_vs_plain_time"] = round(elapsed / t_plain, 2)
        results[f"selective_{label}_vs_plain_time_median"] = round(median / m_plain, 2)
    results.update(string_filter_queries(plain, local, repeat))
    return results


def string_filter_queries(plain: Any, local: Any, repeat: int) -> dict[str, object]:
    """No target: a filter on a string column stored as a dictionary, over every partition
    (`driver = '...'`, about 0.1% of rows), in process vs plain Parquet."""

    def count(con: Any, view: str) -> int:
        return int(con.execute(f"SELECT count(*) FROM {view} WHERE driver = 'driver-0007'").fetchone()[0])

    timed = interleaved(repeat, {"plain": partial(count, plain, "bench"), "snapshot": partial(count, local, "bench"),
                                 "read_optimized": partial(count, local, "bench_ro")}, inner=4)
    t_plain, _, expected = timed.pop("plain")
    results: dict[str, object] = {"string_filter_plain_parquet_s": round(t_plain, 4)}
    for label, (elapsed, _, got) in timed.items():
        if label == "snapshot":
            assert got == expected, (got, expected)
        results[f"string_filter_{label}_s"] = round(elapsed, 4)
        results[f"string_filter_{label}_vs_plain_time"] = round(elapsed / t_plain, 2)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", default="/tmp/hudi-shim-serve-bench")
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--iceberg-slices", choices=("auto", "deletes", "merged"), default="auto",
                        help="how the server publishes the snapshot's slices with log files (serve --iceberg-slices)")
    parser.add_argument("--iceberg-deletes", choices=("positions", "vectors"), default="positions",
                        help="how the server publishes deletes (serve --iceberg-deletes; bench/bench_deletion_vectors.py "
                             "compares them in one process)")
    args = parser.parse_args()
    table_path = os.path.join(args.table, "bench")
    plain_path = os.path.join(args.table, "plain")
    if not os.path.exists(os.path.join(table_path, ".hoodie")):
        print("generating", generate(table_path, args.rows, 0.1), file=sys.stderr)
        write_plain_copy(table_path, plain_path)
    results: dict[str, object] = {"cores": os.cpu_count()}
    port = free_port()
    server = start_server(table_path, port, "--iceberg-slices", args.iceberg_slices,
                          "--iceberg-deletes", args.iceberg_deletes)
    try:
        url = f"http://127.0.0.1:{port}"
        results.update(http_vs_in_process(table_path, url, args.repeat))
        results.update(iceberg_publish(url))
        results.update(selective_queries(table_path, plain_path, url, args.repeat))
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(json.dumps(results, indent=2))
    for mode in ("snapshot", "read_optimized"):
        print(f"HTTP stream {mode:<15} = {results[f'{mode}_http_vs_in_process_throughput']}x in-process "
              f"throughput (medians {results[f'{mode}_http_vs_in_process_throughput_median']}x; target >= 0.8x)")
        print(f"  with lz4 compression: {results[f'{mode}_http_lz4_vs_in_process_throughput']}x on loopback; "
              f"{results[f'{mode}_wire_bytes_lz4']:,} bytes sent instead of {results[f'{mode}_wire_bytes']:,}")
        print(f"  strings sent plain (wire_dictionaries=False): "
              f"{results[f'{mode}_http_plain_strings_vs_in_process_throughput']}x; "
              f"{results[f'{mode}_wire_bytes_plain_strings']:,} bytes")
    for label in ("snapshot", "read_optimized", "snapshot_http", "snapshot_iceberg", "read_optimized_iceberg"):
        print(f"selective DuckDB {label:<14} = {results[f'selective_{label}_vs_plain_time']}x plain Parquet "
              f"time (medians {results[f'selective_{label}_vs_plain_time_median']}x; target <= 2x)")
    for label in ("snapshot", "read_optimized"):
        print(f"string filter DuckDB {label:<14} = {results[f'string_filter_{label}_vs_plain_time']}x plain Parquet "
              f"time ({results[f'string_filter_{label}_s']} s; no target)")


if __name__ == "__main__":
    main()
