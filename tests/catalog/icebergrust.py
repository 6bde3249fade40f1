"""A third Iceberg reader for the tests: iceberg-rust (`pyiceberg-core`) under DataFusion.

DuckDB's iceberg extension and PyIceberg are two implementations; iceberg-rust follows the Java
library (what Trino and Presto use) closely, name mapping and position deletes included. It reads
a published metadata file directly, as an engine does after loading the table from the catalog.
"""

from __future__ import annotations

import pyarrow as pa
from datafusion import SessionContext
from pyiceberg_core.datafusion import IcebergDataFusionTable


def iceberg_rust_query(metadata_location: str, sql: str = "SELECT * FROM t") -> pa.Table:
    """Run `sql` over the Iceberg table at `metadata_location`, registered as `t`."""
    provider = IcebergDataFusionTable(identifier=["default", "t"], metadata_location=metadata_location,
                                      file_io_properties={})
    context = SessionContext()
    context.register_table("t", provider)
    return context.sql(sql).to_arrow_table()
