"""Tables Apache Hudi itself writes, with Hudi's own reads of them (built once, then cached under
`$HUDI_SHIM_CACHE`, default ~/.cache/hudi-shim). A fresh machine builds them: a venv with PySpark
3.5 and Hudi's Spark bundle from Maven Central, about two minutes of Spark."""

from __future__ import annotations

import pytest

from tests.oracle.generate import GeneratedTable, generate


@pytest.fixture(scope="session")
def hudi_tables() -> dict[str, GeneratedTable]:
    """Every recipe's table, built by Apache Hudi where not cached (never skipped: set up here)."""
    return generate()
