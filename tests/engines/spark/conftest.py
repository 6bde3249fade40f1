"""A local Spark session for the `hudi_shim` data source tests (one per test session)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """SparkSession on local[2] with the hudi_shim data source registered."""
    pytest.importorskip("pyspark", reason="PySpark 4 is needed for the Spark tests (pip install 'hudi-shim[spark]')")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java 17 is needed for the Spark tests")
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    import engines.spark

    session = (
        SparkSession.builder.master("local[2]")
        .appName("hudi-shim-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    session.dataSource.register(engines.spark.HudiShimDataSource)
    yield session
    session.stop()
