"""A local Spark session for the tests of engines/ (one per test session): the `hudi_shim` data
source tests, and the Trino/Presto tests that write their tables with it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """SparkSession on local[2] with the hudi_shim data source registered."""
    pytest.importorskip("pyspark", reason="PySpark 4 is needed for the Spark tests (pip install 'hudi-shim[spark]')")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java 17 is needed for the Spark tests")
    from engines.spark.session import local_session

    session = local_session("hudi-shim-tests")
    yield session
    session.stop()
