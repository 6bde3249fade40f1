"""The quick-start job: an evolving Hudi table written with PySpark, served by the catalog, queried
through DuckDB and the HTTP API, next to what a by-name reader (hudi-rs) returns.

Steps:
1. PySpark writes a merge-on-read table `trips` (hudi_shim data source, bucket index).
2. Its schema evolves: `rider` renamed to `passenger`, `tip` (int) dropped and re-added as text,
   `fare` widened from int to double; then new rows and updates are upserted.
3. The catalog serves the warehouse on a loopback port; the same query runs through DuckDB
   (views `trips` / `trips_ro`), through the HTTP scan API, through the Iceberg REST catalog
   (DuckDB's iceberg extension) and, with `--trino`, through a real Trino 476.
4. hudi-rs, which reads files by column name, answers the same question wrongly.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from engines.output import render_table

QUERY_COLUMNS = ["trip_id", "city", "passenger", "fare", "tip"]
OPTIONS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "trip_id",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.hive_style_partitioning": "true",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.bucket.index.num.buckets": "2",
}


def write_demo_table(spark: Any, path: str) -> None:
    """Write, evolve and update the demo table with PySpark."""
    import engines.spark

    def upsert(rows: list[tuple[Any, ...]], schema: str) -> None:
        (spark.createDataFrame(rows, schema).write.format("hudi_shim").mode("append").options(**OPTIONS)
         .option("hoodie.datasource.write.operation", "upsert").save(path))

    upsert([("t1", 1, "sf", "ana", 10, 1), ("t2", 1, "sf", "bo", 22, 3), ("t3", 1, "nyc", "cy", 31, 5),
            ("t4", 1, "nyc", "di", 12, 0)],
           "trip_id string, ts long, city string, rider string, fare int, tip int")
    (engines.spark.alter_table(path)
     .rename_column("rider", "passenger")
     .drop_column("tip")
     .add_column("tip", "string")
     .alter_column_type("fare", "double"))
    upsert([("t2", 2, "sf", "bo", 24.5, "cash"), ("t5", 2, "nyc", "ed", 8.25, "card")],
           "trip_id string, ts long, city string, passenger string, fare double, tip string")


def run_demo(folder: str, *, trino: bool = False, serve: bool = False) -> int:
    """Build the demo warehouse under `folder`, serve it, query it four ways (five with `trino`);
    with `serve`, keep serving it (its web UI too) until interrupted; returns 0."""
    from catalog.server import running
    from catalog.settings import Settings
    from engines.duckdb import connect
    from engines.http import ShimClient
    from engines.spark.session import local_session

    warehouse = os.path.abspath(folder)
    path = os.path.join(warehouse, "trips")
    if os.path.exists(warehouse):
        shutil.rmtree(warehouse)
    os.makedirs(warehouse)
    print("1. writing the demo table with PySpark (local[2]) ...", flush=True)
    from pyspark.sql import SparkSession

    shared = SparkSession.getActiveSession()
    spark = local_session("hudi-shim-demo")
    try:
        write_demo_table(spark, path)
    finally:
        if shared is None:  # leave a session the caller already had running
            spark.stop()
    print(f"   {path}: rider -> passenger, tip int dropped and re-added as string, fare int -> double\n")
    sql = f"SELECT {', '.join(QUERY_COLUMNS)} FROM trips ORDER BY trip_id"
    with running(Settings(warehouse=warehouse)) as server:
        print(f"2. catalog serving {warehouse} at {server.url}; in a browser: {ui_url(server.url)}\n")
        print(f"3a. DuckDB: {sql}")
        print(render_table(connect(warehouse).execute(sql).to_arrow_table()))
        print(f"3b. HTTP scan API: POST {server.url}/v1/tables/trips/scan columns={QUERY_COLUMNS}")
        print(render_table(ShimClient(server.url).scan("trips", columns=QUERY_COLUMNS).sort_by("trip_id")))
        print(f"3c. Iceberg REST catalog at {server.url}/iceberg (as Trino or Presto would read it), DuckDB's "
              "iceberg extension:")
        print(render_table(_through_iceberg(server.url, sql.replace("FROM trips", "FROM shim.default.trips"))))
        if trino:
            print(_through_trino(server.url, sql.replace("FROM trips", 'FROM hudi."default".trips'), warehouse))
        print("4. hudi-rs 0.5 (reads by column name) on the same table:")
        print(_hudi_rs_rows(path))
        print("   hudi-rs loses passenger for rows written before the rename and brings back the dropped int tip\n"
              "   as text; hudi-shim reads every file with the schema of the commit that wrote it.")
        print(f"5. why, in a browser (schema history, files a by-name reader misreads, plans): {ui_url(server.url)}")
        if serve:
            print("   serving until interrupted (Ctrl-C) ...", flush=True)
            _wait_until_interrupted()
    return 0


def ui_url(url: str) -> str:
    """The demo table's page in the catalog's web UI."""
    return f"{url}/ui/tables/trips"


def _wait_until_interrupted() -> None:
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


def _through_iceberg(url: str, sql: str) -> Any:
    from engines.iceberg import attach

    return attach(url).execute(sql).to_arrow_table()


def _through_trino(url: str, sql: str, warehouse: str) -> str:
    """Trino 476 (fetched and unpacked the first time) on the catalog, answering `sql`."""
    from engines.trino.local import TRINO, trino_catalogs
    from engines.trino.server import start_process

    print("3d. Trino 476 on the Iceberg REST catalog (connector.name=iceberg, iceberg.catalog.type=rest), "
          "starting ...", flush=True)
    server = start_process(TRINO, trino_catalogs(url, None), folder=Path(warehouse) / ".hudi-shim" / "trino")
    try:
        rows, columns = server.query_with_types(sql)
    finally:
        server.stop()
    names = [name for name, _ in columns]
    return render_table(pa.Table.from_pylist([dict(zip(names, row, strict=True)) for row in rows]))


def _hudi_rs_rows(path: str) -> str:
    try:
        import hudi
    except ImportError:
        return "   (hudi-rs is not installed: pip install hudi)\n"
    table = pa.Table.from_batches(hudi.HudiTable(path).read())
    columns = [c for c in QUERY_COLUMNS if c in table.column_names]
    return render_table(table.select(columns).sort_by("trip_id"))
