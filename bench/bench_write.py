"""Writer throughput of the `hudi_shim` Spark data source against Spark's plain Parquet write.

    python bench/bench_write.py [--rows 2000000] [--buckets 16] [--table-type both] [--repartition]

One local[2] Spark session; the DataFrames are cached first so generating them is not timed, and
both writers are warmed up by one untimed write of all rows (the JVM's code paths get compiled). For each table type (best of `--repeat` runs, each into a new table):
  insert of all rows           vs  df.write.parquet of the same DataFrame;
  upsert of 10% of the keys     vs  df.write.parquet of those 10%.
Ratios are plain-Parquet time / hudi_shim time (>= 0.5 means at most twice as slow). Also timed:
a Python data source that only receives the rows (the floor for any writer in Python).
`--log-block-format parquet` writes merge-on-read changes as Parquet data blocks (Avro by default).
`--no-bloom-filter` leaves Hudi's record-key bloom filter out of base files.
The session is set up by `engines.spark.register` (Spark's Arrow hand-over to Python without a
per-batch byte limit, which costs more than the rows' conversion); `--spark-arrow-defaults` keeps
Spark's default instead. Plain Parquet writes do not use Arrow: the setting does not change them.
`--repartition` first shuffles the rows by bucket (engines.spark.repartition_by_bucket); the
shuffle is timed as part of the hudi_shim write.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

COLUMNS = [
    "concat('trip-', lpad(cast(id as string), 10, '0')) as id",
    "id as ts",
    "element_at(array('sf', 'nyc', 'la', 'sea'), cast(id % 4 as int) + 1) as city",
    "cast(id % 1000 as double) / 10 as fare",
    "concat('rider-', cast(id % 5000 as string)) as rider",
    "concat('driver-', cast(id % 700 as string)) as driver",
    "cast(id % 97 as double) * 0.37 as distance_km",
    "cast(id % 4 + 1 as int) as passengers",
]


def spark_session() -> Any:
    from engines.spark.session import local_session

    return local_session("hudi-shim-bench", shuffle_partitions=4, driver_memory="3g")


def frames(spark: Any, rows: int) -> tuple[Any, Any]:
    """The cached insert DataFrame and the cached 10% update DataFrame (new ts, negative fare)."""
    base = spark.range(rows).selectExpr(*COLUMNS).cache()
    base.count()
    update_cols = ["id + 1000000000 as ts" if c.endswith(" as ts") else c for c in COLUMNS]
    update_cols = ["cast(-1 as double) as fare" if c.endswith(" as fare") else c for c in update_cols]
    updates = spark.range(0, rows, 10).selectExpr(*update_cols).cache()
    updates.count()
    return base, updates


def counting_source() -> Any:
    """A Python data source whose writer only counts the rows it receives: what any writer in
    Python pays before doing anything (Spark's JVM sending the rows over Arrow)."""
    from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

    class CountingWriter(DataSourceArrowWriter):
        def write(self, iterator: Any) -> WriterCommitMessage:
            for _ in iterator:
                pass
            return WriterCommitMessage()

    class CountingSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "bench_count_rows"

        def writer(self, schema: Any, overwrite: bool) -> CountingWriter:
            return CountingWriter()

    return CountingSource


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def hudi_options(kind: str, buckets: int, bloom_filter: bool = True, log_blocks: str = "avro") -> dict[str, str]:
    return {
        "hoodie.logfile.data.block.format": log_blocks,
        "hoodie.parquet.bloom.filter.enabled": str(bloom_filter).lower(),
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.table.type": kind,
        "hoodie.bucket.index.num.buckets": str(buckets),
    }


def hudi_write(df: Any, options: dict[str, str], operation: str, path: str, repartition: bool) -> None:
    import engines.spark

    if repartition:
        df = engines.spark.repartition_by_bucket(df, options)
    df.write.format("hudi_shim").mode("append").options(**options).option(
        "hoodie.datasource.write.operation", operation).save(path)


def bench_table_type(kind: str, base: Any, updates: Any, root: str, args: argparse.Namespace) -> tuple[float, float]:
    """Best insert and upsert times into new tables of one type."""
    import shim

    options = hudi_options(kind, args.buckets, not args.no_bloom_filter, args.log_block_format)
    hudi_write(base, options, "insert", os.path.join(root, f"warm-{kind}"), args.repartition)  # warms the JVM too
    inserts: list[float] = []
    upserts: list[float] = []
    path = ""
    for attempt in range(args.repeat):
        path = os.path.join(root, f"{kind.lower()}-{attempt}")
        inserts.append(timed(functools.partial(hudi_write, base, options, "insert", path, args.repartition)))
        upserts.append(timed(functools.partial(hudi_write, updates, options, "upsert", path, args.repartition)))
    table = shim.open_table(path)
    rows = table.read(columns=["id"]).num_rows
    updated = table.read(columns=["id"], filter="fare < 0").num_rows
    assert rows == args.rows and updated == updates.count(), (rows, updated)
    return min(inserts), min(upserts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--buckets", type=int, default=16)
    parser.add_argument("--table-type", choices=["cow", "mor", "both"], default="both")
    parser.add_argument("--repartition", action="store_true")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--log-block-format", choices=["avro", "parquet"], default="avro")
    parser.add_argument("--no-bloom-filter", action="store_true",
                        help="hoodie.parquet.bloom.filter.enabled=false (no record-key bloom filter in base files)")
    parser.add_argument("--spark-arrow-defaults", action="store_true",
                        help="Spark's default Arrow batching (a 64 MiB byte limit checked after every row)")
    args = parser.parse_args()

    import engines.spark

    spark = spark_session()
    if args.spark_arrow_defaults:
        spark.dataSource.register(engines.spark.HudiShimDataSource)
        from engines.spark.session import ARROW_TRANSFER_CONF

        for key in ARROW_TRANSFER_CONF:
            spark.conf.unset(key)
    else:
        engines.spark.register(spark)
    base, updates = frames(spark, args.rows)
    root = tempfile.mkdtemp(prefix="bench-write-")
    try:
        base.write.mode("overwrite").parquet(os.path.join(root, "warm"))
        plain_insert = min(timed(lambda: base.write.mode("overwrite").parquet(os.path.join(root, "plain")))
                           for _ in range(args.repeat))
        plain_upsert = min(timed(lambda: updates.write.mode("overwrite").parquet(os.path.join(root, "plain-up")))
                           for _ in range(args.repeat))
        print(f"rows {args.rows:,} in {base.rdd.getNumPartitions()} Spark partitions, updates {updates.count():,}, "
              f"buckets {args.buckets}, repartition by bucket: {args.repartition}, "
              f"bloom filter: {not args.no_bloom_filter}, log blocks: {args.log_block_format}, "
              f"Arrow batching: {'Spark defaults' if args.spark_arrow_defaults else 'engines.spark.register'}")
        spark.dataSource.register(counting_source())
        base.write.format("bench_count_rows").mode("append").save()
        receive = min(timed(lambda: base.write.format("bench_count_rows").mode("append").save())
                      for _ in range(args.repeat))
        print(f"plain parquet: insert {plain_insert:.2f}s, 10% write {plain_upsert:.2f}s")
        print(f"a Python writer that only receives the rows: {receive:.2f}s "
              f"({plain_insert / receive:.2f}x, the ceiling for any Python writer)")
        kinds = {"cow": ["COPY_ON_WRITE"], "mor": ["MERGE_ON_READ"]}.get(args.table_type,
                                                                        ["COPY_ON_WRITE", "MERGE_ON_READ"])
        for kind in kinds:
            insert, upsert = bench_table_type(kind, base, updates, root, args)
            print(f"{kind:14s} insert {insert:6.2f}s  ratio {plain_insert / insert:.2f}x   "
                  f"upsert {upsert:6.2f}s  ratio {plain_upsert / upsert:.2f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
