"""Trino 476 and Presto 0.287 reading a Hudi table through the shim's catalog, against the same
engines reading a native Iceberg copy of the same rows (written by PyIceberg).

    python bench/bench_trino.py [--dir /tmp/hudi-shim-trino-bench] [--rows 2000000] [--repeat 5]
                                [--slices deletes|merged|auto] [--updates 0.1] [--deletes]

The table: 2M rows, merge-on-read, partitioned by city (8 file groups), 10% of rows (`--updates`)
updated in Avro log blocks (`bench/bench_serve.py`'s generator; with `--deletes`, deleted instead: logs
of delete blocks alone). Native copies: the snapshot's rows and
the read-optimized view's rows as Iceberg tables partitioned by city, snappy Parquet (as the
Hudi base files). Trino reads the shim through its Iceberg REST catalog and the copies through
a file metastore (`register_table`); Presto reads both through Hadoop catalog folders (the
shim's kept by `hudi-shim serve --hadoop-catalog-dir`). Needs `pip install sqlalchemy` (PyIceberg's
SQL catalog writes the copies).

Each query runs `--repeat` rounds, contenders in turn; reported: fastest and median seconds,
and shim / native time ratios (targets: read-optimized <= 1.2x, snapshot <= 1.5x). Also: the
time to publish each view (first load, again, after one more commit) for Trino's and Presto's
readers, and how many bytes the by-name publication (Presto) writes out. Trino's own Hudi
connector on the read-optimized view is timed too when `engines.trino.metastore` can register it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import httpx
import pyarrow as pa

import shim
from bench.bench_serve import free_port, generate, start_server
from engines.trino import PRESTO, TRINO, EngineServer, start_process
from engines.trino.catalogs import iceberg_hadoop, iceberg_rest
from shim.storage import as_storage

FULL = ("SELECT count(*), checksum(id), checksum(ts), checksum(city), checksum(fare), checksum(rider), "
        "checksum(driver), checksum(distance_km), checksum(passengers) FROM {table}")
SELECTIVE = "SELECT sum(fare) FROM {table} WHERE city = 'berlin'"


def native_copies(table_path: str, folder: Path) -> dict[str, str]:
    """PyIceberg writes the snapshot and the read-optimized rows as Iceberg tables partitioned by
    city; returns name -> metadata file."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.transforms import IdentityTransform

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    catalog = SqlCatalog("native", uri=f"sqlite:///{folder}/catalog.db", warehouse=f"file://{folder}/warehouse")
    catalog.create_namespace("default")
    table = shim.open_table(table_path)
    metadata = {}
    for name, mode in (("native", "snapshot"), ("native_ro", "read_optimized")):
        rows = table.read(mode=mode)
        rows = rows.cast(pa.schema([pa.field(f.name, f.type, f.nullable) for f in rows.schema]))  # no Hudi ids
        created = catalog.create_table(f"default.{name}", schema=rows.schema,
                                       properties={"write.parquet.compression-codec": "snappy"})
        with created.update_spec() as update:
            update.add_field("city", IdentityTransform(), "city")
        catalog.load_table(f"default.{name}").append(rows)
        metadata[name] = catalog.load_table(f"default.{name}").metadata_location
    return metadata


def hadoop_folder_of(metadata: dict[str, str], folder: Path) -> Path:
    """Tables (name -> metadata file, a path or file:// URI) as a Hadoop catalog folder (what
    Presto reads)."""
    for name, location in metadata.items():
        target = folder / "default" / name / "metadata"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(location.removeprefix("file://"), target / "v1.metadata.json")
        (target / "version-hint.text").write_text("1")
    return folder


def start_catalog(table_path: str, root: Path, port: int, slices: str = "deletes") -> subprocess.Popen[bytes]:
    return start_server(table_path, port, "--iceberg-dir", str(root / "iceberg"),
                        "--hadoop-catalog-dir", str(root / "hadoop"), "--hadoop-catalog-seconds", "86400",
                        "--iceberg-slices", slices)


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return round(time.perf_counter() - start, 3)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.parquet")) if folder.exists() else 0


def publish_times(url: str, table_path: str, root: Path) -> dict[str, object]:
    """Seconds to publish each view for Trino (REST load) and Presto (POST /v1/publish): the
    first time, again with no commit, and after one more commit (1% of rows updated)."""
    results: dict[str, object] = {}

    def load(name: str) -> None:
        httpx.get(f"{url}/iceberg/v1/namespaces/default/tables/{name}", timeout=600).raise_for_status()

    def refresh() -> None:
        httpx.post(f"{url}/v1/publish", timeout=600).raise_for_status()

    for attempt in ("first", "again"):
        for name in ("bench", "bench_ro"):
            results[f"trino_publish_{name}_{attempt}_s"] = timed(lambda n=name: load(n))  # type: ignore[misc]
        results[f"presto_publish_both_views_{attempt}_s"] = timed(refresh)
    results["presto_written_out_bytes"] = folder_bytes(root / "iceberg" / "bench" / "data")
    results["hudi_base_file_bytes"] = sum(p.stat().st_size for p in Path(table_path).rglob("*.parquet"))
    update_one_percent(table_path)
    for name in ("bench", "bench_ro"):
        results[f"trino_publish_{name}_after_commit_s"] = timed(lambda n=name: load(n))  # type: ignore[misc]
    results["presto_publish_both_views_after_commit_s"] = timed(refresh)
    return results


def evolution_cost(url: str, table_path: str, root: Path) -> dict[str, object]:
    """What a rename costs each publication: Trino's readers apply the name mapping, so the base
    files stay in place; Presto's match files by name, so every slice holding the old name is
    written out with field ids (once: later publications reuse the files)."""
    from shim.write.ddl import alter_table

    alter_table(table_path).rename_column("rider", "rider_name")
    before = {"trino": folder_bytes(root / "iceberg" / "bench" / "data")}
    results: dict[str, object] = {}
    results["rename_trino_publish_both_views_s"] = timed(lambda: [
        httpx.get(f"{url}/iceberg/v1/namespaces/default/tables/{name}", timeout=600).raise_for_status()
        for name in ("bench", "bench_ro")])
    results["rename_trino_written_out_bytes"] = folder_bytes(root / "iceberg" / "bench" / "data") - before["trino"]
    before["presto"] = folder_bytes(root / "iceberg" / "bench" / "data")
    results["rename_presto_publish_both_views_s"] = timed(
        lambda: httpx.post(f"{url}/v1/publish", timeout=600).raise_for_status())
    results["rename_presto_written_out_bytes"] = folder_bytes(root / "iceberg" / "bench" / "data") - before["presto"]
    results["rename_presto_publish_again_s"] = timed(
        lambda: httpx.post(f"{url}/v1/publish", timeout=600).raise_for_status())
    return results


def update_one_percent(table_path: str) -> None:
    """One more commit: 1% of the rows of one partition updated through a log block."""
    import numpy as np
    import pyarrow.compute as pc

    from shim.timeline.instant import Action
    from shim.write.clock import new_instant_time
    from shim.write.commit import CommitRecord, InstantFiles
    from shim.write.data_files import avro_record_schema, write_log_blocks

    table = shim.open_table(table_path)
    [slice_] = [s for s in table.file_slices() if s.partition_path == "city=berlin"]
    rows = table.read(filter="city = 'berlin'")
    chosen = rows.take(pa.array(np.arange(0, rows.num_rows, 100)))
    chosen = chosen.set_column(chosen.schema.get_field_index("ts"), "ts",
                               pa.array(np.full(chosen.num_rows, 3, np.int64)))
    chosen = chosen.set_column(chosen.schema.get_field_index("fare"), "fare", pc.multiply(chosen["fare"], 2.0))
    instant = new_instant_time()
    avro = json.dumps(avro_record_schema("serve_bench", chosen.schema))
    files = InstantFiles(as_storage(table_path), table.config, instant, Action.DELTA_COMMIT)
    files.request()
    files.start(b"{}")
    write = write_log_blocks(as_storage(table_path), table.config, partition_path="city=berlin", file_id=slice_.file_id,
                             base_instant=slice_.base_instant, instant=instant, write_token="9-3-9", upserts=chosen,
                             partition_id=9,
                             base_file=slice_.base_file.name if slice_.base_file else None)
    files.complete(CommitRecord((write,), "UPSERT", {"schema": avro}))


def query_times(server: EngineServer, pairs: dict[str, tuple[str, str]], repeat: int) -> dict[str, object]:
    """For each (shim table, native table) pair and each query: fastest and median seconds, and
    the ratio of the shim's to the native copy's (fastest; medians)."""
    results: dict[str, object] = {}
    flavor = server.distribution.flavor
    for label, (ours, native) in pairs.items():
        for query_name, query in (("full_scan", FULL), ("selective", SELECTIVE)):
            runs = {"shim": query.format(table=ours), "native": query.format(table=native)}
            answers = {name: server.query(sql) for name, sql in runs.items()}  # warm up; same answer
            if not _same_answer(answers["shim"], answers["native"]):
                raise AssertionError(f"{flavor} {label} {query_name}: {answers}")
            times: dict[str, list[float]] = {name: [] for name in runs}
            for _ in range(repeat):
                for name, sql in runs.items():
                    times[name].append(timed(lambda s=sql: server.query(s)))  # type: ignore[misc]
            key = f"{flavor}_{label}_{query_name}"
            results[f"{key}_shim_s"] = (min(times["shim"]), statistics.median(times["shim"]))
            results[f"{key}_native_s"] = (min(times["native"]), statistics.median(times["native"]))
            results[f"{key}_ratio"] = round(min(times["shim"]) / min(times["native"]), 2)
            results[f"{key}_ratio_median"] = round(statistics.median(times["shim"]) / statistics.median(times["native"]), 2)
    return results


def _same_answer(ours: list[tuple], theirs: list[tuple]) -> bool:
    """Equal rows; sums of floating-point values may differ in their last bits (summing order)."""
    return len(ours) == len(theirs) and all(
        len(a) == len(b) and all(x == y or (isinstance(x, float) and math.isclose(x, y, rel_tol=1e-9))
                                 for x, y in zip(a, b, strict=True))
        for a, b in zip(ours, theirs, strict=True))


def hudi_connector_times(server: EngineServer, table_path: str, metastore: Path, repeat: int) -> dict[str, object]:
    """Trino's own Hudi connector on the read-optimized view vs the shim's `bench_ro` (when the
    metastore helper exists)."""
    try:
        from engines.trino.metastore import register_table  # type: ignore[attr-defined]
    except ImportError:
        return {"trino_hudi_connector": "engines.trino.metastore is missing"}
    register_table(metastore, "trino", table_path, "bench")
    results: dict[str, object] = {}
    for query_name, query in (("full_scan", FULL), ("selective", SELECTIVE)):
        sqls = {"shim": query.format(table='hudi."default".bench_ro'),
                "connector": query.format(table='native_hudi."default".bench')}
        for sql in sqls.values():
            server.query(sql)
        times = {name: min(timed(lambda s=sql: server.query(s)) for _ in range(repeat))  # type: ignore[misc]
                 for name, sql in sqls.items()}
        results[f"trino_hudi_connector_ro_{query_name}_s"] = times["connector"]
        results[f"trino_shim_ro_{query_name}_s"] = times["shim"]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default="/tmp/hudi-shim-trino-bench")
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--slices", choices=("deletes", "merged", "auto"), default="deletes",
                        help="how the shim publishes the snapshot's slices with log files (serve --iceberg-slices)")
    parser.add_argument("--updates", type=float, default=0.1,
                        help="share of the rows updated in log blocks (the log's share of each slice)")
    parser.add_argument("--deletes", action="store_true",
                        help="the logs delete that share of the rows instead (delete blocks alone)")
    args = parser.parse_args()
    root = Path(args.dir)
    table_path = str(root / "bench")
    for stale in ("iceberg", "hadoop", "trino", "presto", "metastore"):
        shutil.rmtree(root / stale, ignore_errors=True)
    print("generating", generate(table_path, args.rows, args.updates, deletes=args.deletes), file=sys.stderr)
    (root / "metastore").mkdir()
    port = free_port()
    catalog = start_catalog(table_path, root, port, args.slices)
    url = f"http://127.0.0.1:{port}"
    results: dict[str, object] = {"cores": os.cpu_count(), "rows": args.rows, "slices": args.slices,
                                 "updates": args.updates, "deletes": args.deletes}
    servers: list[EngineServer] = []
    try:
        results.update(publish_times(url, table_path, root))  # ends with one more commit, published
        metadata = native_copies(table_path, root / "native")
        native_hadoop = hadoop_folder_of(metadata, root / "native" / "hadoop")
        trino = start_process(TRINO, {
            "hudi": iceberg_rest("trino", f"{url}/iceberg"),
            "native": {"connector.name": "iceberg", "iceberg.catalog.type": "testing_file_metastore",
                       "hive.metastore.catalog.dir": f"local://{root / 'native' / 'trino-metastore'}",
                       "iceberg.register-table-procedure.enabled": "true",
                       "fs.native-local.enabled": "true", "local.location": "/"},
            "native_hudi": {"connector.name": "hudi", "hive.metastore": "file",
                            "hive.metastore.catalog.dir": f"local://{root / 'metastore'}",
                            "fs.native-local.enabled": "true", "local.location": "/"},
        }, folder=root / "trino")
        servers.append(trino)
        trino.query('CREATE SCHEMA native."default"')
        for name, location in metadata.items():
            table_location, file_name = location.rsplit("/metadata/", 1)
            trino.query(f"CALL native.system.register_table(schema_name => 'default', table_name => '{name}', "
                        f"table_location => '{table_location}', metadata_file_name => '{file_name}')")
        pairs = {"read_optimized": ('hudi."default".bench_ro', 'native."default".native_ro'),
                 "snapshot": ('hudi."default".bench', 'native."default".native')}
        results.update(query_times(trino, pairs, args.repeat))
        results.update(hudi_connector_times(trino, table_path, root / "metastore", args.repeat))
        trino.stop()
        presto = start_process(PRESTO, {"hudi": iceberg_hadoop("presto", str(root / "hadoop")),
                                        "native": iceberg_hadoop("presto", str(native_hadoop))},
                               folder=root / "presto")
        servers.append(presto)
        results.update(query_times(presto, pairs, args.repeat))
        presto.stop()
        results.update(evolution_cost(url, table_path, root))
    finally:
        for server in servers:
            server.stop()
        catalog.terminate()
        catalog.wait(timeout=10)
    print(json.dumps(results, indent=1))
    print(f"publish (first / again / after a 1% commit): Trino snapshot {results['trino_publish_bench_first_s']} / "
          f"{results['trino_publish_bench_again_s']} / {results['trino_publish_bench_after_commit_s']} s, "
          f"read-optimized {results['trino_publish_bench_ro_first_s']} / {results['trino_publish_bench_ro_again_s']}"
          f" / {results['trino_publish_bench_ro_after_commit_s']} s; Presto (both views, after Trino's) "
          f"{results['presto_publish_both_views_first_s']} / {results['presto_publish_both_views_again_s']} / "
          f"{results['presto_publish_both_views_after_commit_s']} s")
    print(f"after a rename: Trino's publication writes {results['rename_trino_written_out_bytes']:,} bytes in "
          f"{results['rename_trino_publish_both_views_s']} s; Presto's {results['rename_presto_written_out_bytes']:,}"
          f" bytes in {results['rename_presto_publish_both_views_s']} s (again: "
          f"{results['rename_presto_publish_again_s']} s); base files {results['hudi_base_file_bytes']:,} bytes")
    for flavor in ("trino", "presto"):
        for label, target in (("read_optimized", 1.2), ("snapshot", 1.5)):
            for query_name in ("full_scan", "selective"):
                key = f"{flavor}_{label}_{query_name}"
                if f"{key}_ratio" in results:
                    print(f"{flavor:6} {label:14} {query_name:9}: shim {results[f'{key}_shim_s']} s, native "
                          f"{results[f'{key}_native_s']} s -> {results[f'{key}_ratio']}x "
                          f"(medians {results[f'{key}_ratio_median']}x; target <= {target}x)")


if __name__ == "__main__":
    main()
