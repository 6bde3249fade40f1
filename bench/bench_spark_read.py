"""Spark reads through the `hudi_shim` data source against Spark reading plain Parquet.

    python bench/bench_spark_read.py [--rows 2000000] [--buckets 16] [--repeat 3] [--tcp]

Writes a copy-on-write table (`bench_write`'s rows: 4 cities x `--buckets` file groups, one Spark
input partition per file slice) and a plain Parquet copy of the same DataFrame, then times each
read into Spark's `noop` sink (best of `--repeat`). Also timed: a Python data source that yields
one prepared batch per partition, as many partitions as the table has file slices (what Spark's
Python data source machinery costs before any reading). `--tcp` starts the session without
`spark.python.unix.domain.socket.enabled` (Spark's default: a loopback TCP connection per task).
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

from bench.bench_write import frames, hudi_options, hudi_write, timed


def floor_source(partitions: int, rows: int) -> Any:
    """A Python data source of `partitions` partitions, each one prepared batch of two columns."""
    import pyarrow as pa
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class FloorReader(DataSourceReader):
        def partitions(self) -> list[InputPartition]:
            return [InputPartition(i) for i in range(partitions)]

        def read(self, partition: InputPartition) -> Any:
            import numpy as np

            n = rows // partitions
            yield pa.RecordBatch.from_arrays([pa.array(np.arange(n)), pa.array(np.arange(n) * 0.5)], names=["a", "b"])

    class FloorSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "bench_python_floor"

        def schema(self) -> str:
            return "a bigint, b double"

        def reader(self, schema: Any) -> FloorReader:
            return FloorReader()

    return FloorSource


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--buckets", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tcp", action="store_true", help="Spark's default TCP connections to Python workers")
    args = parser.parse_args()

    from engines.spark.session import UNIX_SOCKETS, local_session

    spark = local_session("hudi-shim-bench-read", shuffle_partitions=4, driver_memory="3g", unix_sockets=not args.tcp)
    print(f"{UNIX_SOCKETS[0]} = {spark.conf.get(UNIX_SOCKETS[0])}")
    root = tempfile.mkdtemp(prefix="bench-spark-read-")
    try:
        base, _ = frames(spark, args.rows)
        table, plain = os.path.join(root, "table"), os.path.join(root, "plain")
        hudi_write(base, hudi_options("COPY_ON_WRITE", args.buckets), "insert", table, False)
        base.write.parquet(plain)
        slices = spark.read.format("hudi_shim").load(table).rdd.getNumPartitions()
        spark.dataSource.register(floor_source(slices, args.rows))
        runs = {
            "plain Parquet": lambda: spark.read.parquet(plain).write.format("noop").mode("overwrite").save(),
            "hudi_shim": lambda: spark.read.format("hudi_shim").load(table).write.format("noop").mode(
                "overwrite").save(),
            "Python data source floor": lambda: spark.read.format("bench_python_floor").load().write.format(
                "noop").mode("overwrite").save(),
        }
        best = {}
        for name, run in runs.items():
            run()  # warm-up
            best[name] = min(timed(run) for _ in range(args.repeat))
        print(f"{args.rows:,} rows in {slices} file slices (Spark input partitions)")
        for name, seconds in best.items():
            print(f"{name:26s} {seconds:6.2f}s   plain / this: {best['plain Parquet'] / seconds:.2f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
