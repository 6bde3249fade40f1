"""The `hudi_shim` writer against Apache Hudi's own Spark writer (1.2, Spark 3.5 bundle).

    python bench/bench_hudi_write.py [--rows 2000000] [--buckets 16] [--table-type both]

Both write the same DataFrame (the rows of `bench_write.COLUMNS`, made by the same Spark SQL in
each session and cached first, untimed): all rows inserted, then 10% of the keys upserted, into a
new copy-on-write and a new merge-on-read table, with a bucket index of `--buckets` buckets
(Hudi: `hoodie.index.type=BUCKET`, SIMPLE engine) partitioned by city. Each side warms up with one
untimed insert. Same Spark settings: local[2], 4 shuffle partitions, 3 GiB driver. Hudi runs in
its own session of PySpark 3.5 (the oracle environment, `tests.oracle.env`), writing its default
table version with its metadata table off (this writer keeps none); the shim's writer runs in the
project's PySpark, set up by `engines.spark.register`. Ratios are Hudi's time / hudi_shim's time
(>= 1.0: at least Hudi's throughput). One run each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from bench.bench_write import COLUMNS, frames, hudi_options, hudi_write, spark_session, timed

KINDS = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}
HUDI_SESSION = {"spark.driver.memory": "3g", "spark.sql.shuffle.partitions": "4",
                "spark.sql.parquet.enableVectorizedReader": "true"}  # Spark's default (the oracle turns it off)


def hudi_writer_options(kind: str, buckets: int) -> dict[str, str]:
    """Apache Hudi's writer with a bucket index, as close to `bench_write.hudi_options` as it goes."""
    return {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
            "hoodie.datasource.write.table.type": kind, "hoodie.index.type": "BUCKET",
            "hoodie.index.bucket.engine": "SIMPLE", "hoodie.bucket.index.num.buckets": str(buckets),
            "hoodie.metadata.enable": "false", "hoodie.parquet.compression.codec": "snappy"}


def hudi_side(rows: int, kinds: list[str], buckets: int, root: str) -> dict[str, tuple[float, float]]:
    """Insert and upsert seconds of Apache Hudi's writer, per table type (one Spark session)."""
    from tests.oracle.env import ensure_env, run_driver

    select = f"SELECT {', '.join(COLUMNS)} FROM range({rows})"
    updates = [c for c in COLUMNS if not c.endswith(" as ts") and not c.endswith(" as fare")]
    update_select = (f"SELECT {', '.join(updates)}, id + 1000000000 AS ts, CAST(-1 AS DOUBLE) AS fare "
                     f"FROM range(0, {rows}, 10)")
    jobs: list[dict[str, Any]] = []
    for kind in kinds:
        options = hudi_writer_options(kind, buckets)
        insert = {**options, "hoodie.datasource.write.operation": "insert"}
        upsert = {**options, "hoodie.datasource.write.operation": "upsert"}
        jobs.append({"kind": "steps", "path": os.path.join(root, f"hudi-warm-{kind}"), "steps": [
            {"write": {"select": select, "options": insert, "cache": True}}]})
        jobs.append({"kind": "steps", "path": os.path.join(root, f"hudi-{kind}"), "steps": [
            {"write": {"select": select, "options": insert, "cache": True}},
            {"write": {"select": update_select, "options": upsert, "cache": True}}]})
    response = run_driver(ensure_env(), jobs, conf=HUDI_SESSION)
    found = {}
    for kind, job in zip(kinds, response["jobs"][1::2], strict=True):
        found[kind] = (job["steps"][0]["seconds"], job["steps"][1]["seconds"])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--buckets", type=int, default=16)
    parser.add_argument("--table-type", choices=["cow", "mor", "both"], default="both")
    args = parser.parse_args()
    kinds = [KINDS[args.table_type]] if args.table_type in KINDS else list(KINDS.values())
    root = tempfile.mkdtemp(prefix="bench-hudi-write-")
    try:
        hudi = hudi_side(args.rows, kinds, args.buckets, root)
        import engines.spark

        spark = spark_session()
        engines.spark.register(spark)
        base, updates = frames(spark, args.rows)
        ours = {}
        for kind in kinds:
            options = hudi_options(kind, args.buckets)
            hudi_write(base, options, "insert", os.path.join(root, f"warm-{kind}"), False)
            path = os.path.join(root, f"shim-{kind}")
            insert = timed(lambda: hudi_write(base, options, "insert", path, False))  # noqa: B023
            upsert = timed(lambda: hudi_write(updates, options, "upsert", path, False))  # noqa: B023
            ours[kind] = (insert, upsert)
        spark.stop()
        print(f"rows {args.rows:,}, updates {args.rows // 10:,}, buckets {args.buckets}, partitioned by city")
        for kind in kinds:
            (h_insert, h_upsert), (s_insert, s_upsert) = hudi[kind], ours[kind]
            print(f"{kind:14s} insert: Hudi {h_insert:6.2f}s  hudi_shim {s_insert:6.2f}s  ratio {h_insert / s_insert:.2f}x"
                  f"   upsert: Hudi {h_upsert:6.2f}s  hudi_shim {s_upsert:6.2f}s  ratio {h_upsert / s_upsert:.2f}x"
                  f"   both: {(h_insert + h_upsert) / (s_insert + s_upsert):.2f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
