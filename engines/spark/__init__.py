"""PySpark engine: the Spark adapters of the writer (`shim.write`) and the table services
(`shim.write.services`), and reads through the shim.

    import engines.spark
    engines.spark.register(spark)  # = spark.dataSource.register(engines.spark.HudiShimDataSource)
                                   #   + Spark's Arrow hand-over to Python without its per-row cost
    df.write.format("hudi_shim").mode("append").option("hoodie.table.name", "trips")...save(path)
    engines.spark.alter_table(path).add_column("tip", "double", after="fare")
    engines.spark.compact(path, spark)   # one Spark task per file group
    engines.spark.schedule_compaction(path)  # plan only; compact() runs it (hoodie.compact.inline: after commits)
    engines.spark.clean(path)            # also runs after every commit (hoodie.clean.automatic)
    engines.spark.archive(path)          # also runs after every commit (hoodie.archive.automatic)

Modules: `datasource` (the data source: driver and task wiring of `shim.write.job` / `task`),
`reader` (its reads), `session` (a local session, registration), `repartition` (rows by bucket),
`compaction` (compaction's file groups in Spark tasks). `alter_table`, `clean`, `archive` and
`schedule_compaction` need no Spark: they are `shim.write.ddl`'s and `shim.write.services`'.
PySpark is imported only by the Spark-facing names below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engines.spark.datasource import HudiShimDataSource
    from engines.spark.repartition import repartition_by_bucket, with_bucket_id
    from engines.spark.session import local_session, register
    from shim.write.ddl import AlterTable, alter_table
    from shim.write.services.archiving import archive
    from shim.write.services.cleaning import clean
    from shim.write.services.compaction import compact, schedule_compaction

_LAZY = {
    "HudiShimDataSource": "engines.spark.datasource",
    "alter_table": "shim.write.ddl",
    "AlterTable": "shim.write.ddl",
    "archive": "shim.write.services.archiving",
    "clean": "shim.write.services.cleaning",
    "compact": "engines.spark.compaction",
    "schedule_compaction": "shim.write.services.compaction",
    "repartition_by_bucket": "engines.spark.repartition",
    "with_bucket_id": "engines.spark.repartition",
    "local_session": "engines.spark.session",
    "register": "engines.spark.session",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'engines.spark' has no attribute {name!r}")
    try:
        import importlib

        return getattr(importlib.import_module(module), name)
    except ImportError as exc:
        if "pyspark" in str(exc):
            raise ImportError(
                "engines.spark needs PySpark 4: pip install 'hudi-shim[spark]'"
            ) from exc
        raise


__all__ = ["AlterTable", "HudiShimDataSource", "alter_table", "archive", "clean", "compact", "local_session", "register",
           "repartition_by_bucket", "schedule_compaction", "with_bucket_id"]
