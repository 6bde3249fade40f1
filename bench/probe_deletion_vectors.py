"""Do Trino 476, Presto 0.287 and DuckDB 1.5.5 read Iceberg v3 deletion vectors? (issue 35, item 2)

    python bench/probe_deletion_vectors.py [--dir /tmp/hudi-shim-dv-probe] [--rows 20000]
                                           [--engines trino,presto,duckdb,pyiceberg]

A small merge-on-read table (partitioned by city, 10% of rows updated in log blocks, then some
rows deleted in a delete block) is published twice by `hudi-shim serve --iceberg-slices deletes`:
with `--iceberg-deletes positions`, format version 2, base files in place with Parquet position
deletes; with `--iceberg-deletes vectors`, format version 3, each base file's deletes a deletion
vector (a `deletion-vector-v1` blob in a Puffin file, `catalog.iceberg.deletion_vectors`, named by
a delete manifest entry with `file_format=PUFFIN`, `referenced_data_file`, `content_offset`,
`content_size_in_bytes`), with v3's row lineage fields. A control is the v3 publication without
its delete manifest (`without_deletes`). The tables are served by a minimal Iceberg REST catalog
(`serve_rest`, what Trino and DuckDB read) and kept as a Hadoop catalog folder (Presto's), and
each engine's rows are compared with `shim.open_table(path).read()`: same rows, rows without the
deletes applied, or an error.

The probe writes nothing into the shim's catalog: it only finds out what the engines read.
Found (20,000 rows; docs/catalog.md): Trino 476 reads v3 metadata but fails on the deletion
vectors (`ICEBERG_BAD_DATA Unexpected PUFFIN file format`); Presto 0.287 reads no v3 table
(`Cannot read unsupported version 3`); DuckDB 1.5.5 and PyIceberg 0.12 read the shim's rows.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import fastavro
import httpx
import numpy as np
import pyarrow as pa

import shim
from bench.bench_serve import free_port, generate, start_server
from bench.bench_trino import hadoop_folder_of
from catalog.iceberg.deletion_vectors import read_vector_file
from shim.storage import as_storage, as_uri, from_uri

COLUMNS = ("id", "ts", "city", "fare", "rider", "driver", "distance_km", "passengers")


def delete_some(table_path: str, share: float = 0.02) -> int:
    """One more commit: a delete block removing `share` of one partition's rows."""
    from shim.timeline.instant import Action
    from shim.write.clock import new_instant_time
    from shim.write.commit import CommitRecord, InstantFiles
    from shim.write.data_files import avro_record_schema, write_log_blocks

    table = shim.open_table(table_path)
    [slice_] = [s for s in table.file_slices() if s.partition_path == "city=tokyo"]
    rows = table.read(filter="city = 'tokyo'")
    keys = rows["id"].to_pylist()[:: max(1, int(1 / share))]
    ordering = rows["ts"].take(pa.array(np.arange(0, rows.num_rows, max(1, int(1 / share)))))
    instant = new_instant_time()
    files = InstantFiles(as_storage(table_path), table.config, instant, Action.DELTA_COMMIT)
    files.request()
    files.start(b"{}")
    write = write_log_blocks(as_storage(table_path), table.config, partition_path="city=tokyo", file_id=slice_.file_id,
                             base_instant=slice_.base_instant, instant=instant, write_token="7-4-7",
                             delete_keys=[str(k) for k in keys], delete_ordering=[ordering], partition_id=7,
                             base_file=slice_.base_file.name if slice_.base_file else None)
    avro = json.dumps(avro_record_schema("serve_bench", rows.schema))
    files.complete(CommitRecord((write,), "UPSERT", {"schema": avro}))
    return len(keys)


def without_deletes(metadata_location: str, out: Path) -> str:
    """The current snapshot of a published table without its delete manifests, under `out` (a
    control whose rows must differ from the shim's); returns the new metadata file's path."""
    metadata = json.loads(Path(from_uri(metadata_location)).read_text())
    [snapshot] = [s for s in metadata["snapshots"] if s["snapshot-id"] == metadata["current-snapshot-id"]]
    folder = out / "metadata"
    folder.mkdir(parents=True, exist_ok=True)
    with open(from_uri(snapshot["manifest-list"]), "rb") as handle:
        listed = fastavro.reader(handle)
        schema: Any = listed.writer_schema
        header = {k: v for k, v in dict(listed.metadata).items() if not k.startswith("avro.")}
        manifests = [m for m in listed if isinstance(m, dict) and m["content"] == 0]
    list_path = folder / f"snap-{snapshot['snapshot-id']}.avro"
    _write_avro(list_path, schema, manifests, header)
    control = metadata | {"location": as_uri(str(out)), "statistics": [],
                          "snapshots": [snapshot | {"manifest-list": as_uri(str(list_path))}],
                          "table-uuid": "6b5a1c9e-0d6c-4d4e-9f51-3c1d2a000003"}
    path = folder / "00001-control.metadata.json"
    path.write_text(json.dumps(control, indent=1))
    return str(path)


def _write_avro(path: Path, schema: dict[str, Any], records: list[dict[str, Any]], header: dict[str, Any]) -> None:
    with open(path, "wb") as handle:
        fastavro.writer(handle, fastavro.parse_schema(schema), records,
                        metadata={k: v.decode() if isinstance(v, bytes) else v for k, v in header.items()},
                        codec="null")


@contextmanager
def serve_rest(tables: dict[str, str]) -> Iterator[str]:
    """A minimal Iceberg REST catalog (under `/iceberg`) answering for `tables` (name ->
    metadata file) in namespace `default`; yields its URL."""
    def answer(path: str) -> tuple[int, dict[str, Any] | None]:
        parts = path.split("?")[0].removeprefix("/iceberg/v1/").strip("/").split("/")
        if parts == ["config"]:
            return 200, {"defaults": {}, "overrides": {}}
        if parts == ["namespaces"]:
            return 200, {"namespaces": [["default"]]}
        if parts == ["namespaces", "default"]:
            return 200, {"namespace": ["default"], "properties": {}}
        if parts == ["namespaces", "default", "tables"]:
            return 200, {"identifiers": [{"namespace": ["default"], "name": n} for n in tables]}
        if len(parts) == 4 and parts[:3] == ["namespaces", "default", "tables"] and parts[3] in tables:
            location = tables[parts[3]]
            return 200, {"metadata-location": as_uri(location), "metadata": json.loads(Path(location).read_text()),
                         "config": {}}
        return 404, {"error": {"message": f"no {path}", "type": "NoSuchTableException", "code": 404}}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = answer(self.path)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_HEAD(self) -> None:
            status, _ = answer(self.path)
            self.send_response(204 if status == 200 else status)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _normal(row: Any) -> tuple:
    """A row with its floating-point values as float32 (a `real` comes back from Trino as the
    shortest decimal of the float32, from Arrow widened to a double: both round to the same)."""
    return tuple(float(np.float32(v)) if isinstance(v, float) else v for v in row)


def verdict(expected: list[tuple], run: Callable[[], list[tuple]]) -> dict[str, object]:
    """What an engine's rows are: the shim's, or not (how many, what differs), or its error."""
    try:
        rows = sorted(_normal(r) for r in run())
    except Exception as exc:  # noqa: BLE001 - the engine's error is the finding
        text = str(exc).strip().splitlines()
        return {"outcome": "error", "error": (text[0] if text else repr(exc))[:600],
                "type": type(exc).__name__}
    if rows == expected:
        return {"outcome": "same rows as the shim", "rows": len(rows)}
    extra = len(set(rows) - set(expected))
    missing = len(set(expected) - set(rows))
    return {"outcome": "WRONG rows", "rows": len(rows), "expected": len(expected), "not_in_shim": extra,
            "missing": missing}


def _duckdb_rows(con: Any, sql: str) -> list[tuple]:
    rows: list[tuple] = con.execute(sql).fetchall()
    return rows


def _pyiceberg_rows(location: str) -> list[tuple]:
    from pyiceberg.table import StaticTable

    table = StaticTable.from_metadata(location).scan(selected_fields=COLUMNS).to_arrow()
    return [tuple(row.values()) for row in table.to_pylist()]


def _wait_for_workers(server: Any, seconds: float = 60) -> None:
    """Until a query gets a node (a server just started may answer 'No nodes available')."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            server.query("SELECT count(*) FROM (VALUES 1, 2) AS t(x)")
            return
        except Exception as exc:  # retried while the node is not there yet
            if "No nodes available" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(1)


def delete_formats(location: str) -> dict[str, int]:
    """How many live delete files of each format the table's current snapshot names (each
    deletion vector read back, its CRC checked)."""
    metadata = json.loads(Path(location).read_text())
    [snapshot] = [s for s in metadata["snapshots"] if s["snapshot-id"] == metadata["current-snapshot-id"]]
    formats: dict[str, int] = {}
    with open(from_uri(snapshot["manifest-list"]), "rb") as handle:
        manifests = [m for m in fastavro.reader(handle) if isinstance(m, dict)]
    for manifest in manifests:
        with open(from_uri(manifest["manifest_path"]), "rb") as handle:
            for entry in fastavro.reader(handle):
                if isinstance(entry, dict) and entry["status"] != 2 and entry["data_file"]["content"] == 1:
                    if entry["data_file"]["file_format"] == "PUFFIN":
                        path = from_uri(entry["data_file"]["file_path"])
                        read_vector_file(as_storage(path), path)
                    formats[entry["data_file"]["file_format"]] = formats.get(entry["data_file"]["file_format"], 0) + 1
    return formats


def published(table_path: str, folder: Path, deletes: str) -> str:
    """The metadata location `hudi-shim serve --iceberg-deletes <deletes>` publishes the table's
    snapshot view at (base files in place with deletes, no older snapshots)."""
    port = free_port()
    server = start_server(table_path, port, "--iceberg-dir", str(folder), "--iceberg-slices", "deletes",
                          "--iceberg-history", "0", "--iceberg-deletes", deletes)
    try:
        loaded = httpx.get(f"http://127.0.0.1:{port}/iceberg/v1/namespaces/default/tables/bench", timeout=300)
        loaded.raise_for_status()
        location: str = loaded.json()["metadata-location"]
        return location
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default="/tmp/hudi-shim-dv-probe")
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--engines", default="trino,presto,duckdb,pyiceberg")
    args = parser.parse_args()
    engines = args.engines.split(",")
    root = Path(args.dir)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    table_path = str(root / "bench")
    generate(table_path, args.rows, 0.1)
    deleted = delete_some(table_path)
    expected = sorted(_normal(r.values()) for r in shim.open_table(table_path).read(columns=list(COLUMNS)).to_pylist())
    v2_location, v3_location = (published(table_path, root / f"iceberg-{form}", form) for form in ("positions", "vectors"))
    tables = {"bench_v2": from_uri(v2_location), "bench_v3": from_uri(v3_location),
              "bench_v3_no_dv": without_deletes(v3_location, root / "v3" / "bench_v3_no_dv")}
    results: dict[str, object] = {"rows": len(expected), "deleted_keys": deleted}
    results |= {f"{name}_delete_files": delete_formats(location) for name, location in tables.items()}
    select = f"SELECT {', '.join(COLUMNS)} FROM {{table}}"
    with serve_rest(tables) as url:
        if "duckdb" in engines:
            import duckdb

            from engines.iceberg import load_extensions

            con = duckdb.connect()
            load_extensions(con)
            results["duckdb_version"] = duckdb.__version__
            con.execute(f"ATTACH 'probe' AS probe (TYPE iceberg, ENDPOINT '{url}/iceberg', AUTHORIZATION_TYPE 'none')")
            for name, location in tables.items():
                results[f"duckdb_rest_{name}"] = verdict(
                    expected, partial(_duckdb_rows, con, select.format(table=f"probe.default.{name}")))
                results[f"duckdb_iceberg_scan_{name}"] = verdict(
                    expected, partial(_duckdb_rows, con, select.format(table=f"iceberg_scan('{location}')")))
            con.close()
        if "pyiceberg" in engines:
            import pyiceberg

            results["pyiceberg_version"] = pyiceberg.__version__
            for name, location in tables.items():
                results[f"pyiceberg_{name}"] = verdict(expected, partial(_pyiceberg_rows, location))
        from engines.trino import PRESTO, TRINO, start_process
        from engines.trino.catalogs import iceberg_hadoop, iceberg_rest

        if "trino" in engines:
            trino = start_process(TRINO, {"probe": iceberg_rest("trino", f"{url}/iceberg")}, folder=root / "trino")
            try:
                _wait_for_workers(trino)
                results["trino_version"] = trino.query("SELECT version()")[0][0]
                for name in tables:
                    results[f"trino_rest_{name}"] = verdict(
                        expected, partial(trino.query, select.format(table=f'probe."default".{name}')))
            finally:
                trino.stop()
        if "presto" in engines:
            folder = hadoop_folder_of(tables, root / "hadoop")
            presto = start_process(PRESTO, {"probe": iceberg_hadoop("presto", str(folder))}, folder=root / "presto")
            try:
                _wait_for_workers(presto)
                results["presto_version"] = presto.distribution.name
                for name in tables:
                    results[f"presto_hadoop_{name}"] = verdict(
                        expected, partial(presto.query, select.format(table=f'probe."default".{name}')))
            finally:
                presto.stop()
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
