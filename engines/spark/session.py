"""A SparkSession ready for the `hudi_shim` data source: `register` an existing one, or start a
`local_session`."""

from __future__ import annotations

import os
import sys
from typing import Any

# Spark measures the Arrow batch it is filling after every row it adds when a batch byte limit is
# set (the default: 64 MiB), which costs the JVM more than converting the rows: with no byte
# limit, batches are cut by `maxRecordsPerBatch` rows alone and handing rows to Python data
# sources (and Arrow UDFs) is about 3x cheaper (bench/bench_write.py).
ARROW_TRANSFER_CONF = {"spark.sql.execution.arrow.maxBytesPerBatch": str(2**31 - 1)}

# Each Spark task talks to its Python worker over a new loopback TCP connection by default, whose
# small handshake messages wait on delayed acknowledgements: tens of milliseconds per task, which
# dominate reads of many small file slices (one Spark task each). Unix domain sockets do not
# (Spark 4.1+; set when a session starts, so `register` cannot set it on a running session).
UNIX_SOCKETS = ("spark.python.unix.domain.socket.enabled", "true")


def register(spark: Any) -> None:
    """Register the `hudi_shim` format with `spark` and set `ARROW_TRANSFER_CONF` where the session
    has not set those keys itself."""
    from engines.spark.datasource import HudiShimDataSource

    spark.dataSource.register(HudiShimDataSource)
    for key, value in ARROW_TRANSFER_CONF.items():
        if not _is_set(spark, key):
            spark.conf.set(key, value)


def _is_set(spark: Any, key: str) -> bool:
    """Whether the session (or its builder) set `key` itself, rather than leaving Spark's default."""
    return spark.conf.get(key, None) is not None


def local_session(app_name: str = "hudi-shim", *, cores: int = 2, shuffle_partitions: int = 2,
                  driver_memory: str | None = None, unix_sockets: bool = True) -> Any:
    """`local[cores]` Spark on loopback, UI off, the `hudi_shim` format registered (`register`),
    Python workers reached over Unix domain sockets (`UNIX_SOCKETS`) unless `unix_sockets` is off.

    Filter pushdown to Python data sources is switched on (Spark 4.1+ needs it asked for).
    """
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.default.parallelism", str(cores))
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config(UNIX_SOCKETS[0], str(unix_sockets).lower())
    )
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    return session
