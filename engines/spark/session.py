"""A local SparkSession ready for the `hudi_shim` data source."""

from __future__ import annotations

import os
import sys
from typing import Any


def local_session(app_name: str = "hudi-shim", *, cores: int = 2, shuffle_partitions: int = 2,
                  driver_memory: str | None = None) -> Any:
    """`local[cores]` Spark on loopback, UI off, the `hudi_shim` format registered.

    Filter pushdown to Python data sources is switched on (Spark 4.1+ needs it asked for).
    """
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from engines.spark.datasource import HudiShimDataSource

    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.default.parallelism", str(cores))
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
    )
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    session.dataSource.register(HudiShimDataSource)
    return session
