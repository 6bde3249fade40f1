"""PySpark engine: write Hudi tables (base and log files, DDL, compaction) and read them through the shim.

    import engines.spark
    engines.spark.register(spark)  # = spark.dataSource.register(engines.spark.HudiShimDataSource)
                                   #   + Spark's Arrow hand-over to Python without its per-row cost
    df.write.format("hudi_shim").mode("append").option("hoodie.table.name", "trips")...save(path)
    engines.spark.alter_table(path).add_column("tip", "double", after="fare")
    engines.spark.compact(path, spark)
    engines.spark.schedule_compaction(path)  # plan only; compact() runs it (hoodie.compact.inline: after commits)
    engines.spark.clean(path)            # also runs after every commit (hoodie.clean.automatic)
    engines.spark.archive(path)          # also runs after every commit (hoodie.archive.automatic)

Modules: `options` (Hudi option names and defaults), `bucket` (bucket index hashing), `records`
(keys, buckets, pre-combine), `merge` (base file rewrites), `group_state` (per-commit file group
locks), `handoff` (rows one task leaves for another), `txn` (instants, heartbeats, rollback of failed writes), `job` / `task` (the write
without Spark), `datasource` / `reader` (the Spark data source), `ddl`, `compaction`
(`compaction_trigger`: when inline compaction fires),
`repartition`, `cleaning`, `archiving`. PySpark is imported only by the Spark-facing names below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engines.spark.archiving import archive
    from engines.spark.cleaning import clean
    from engines.spark.compaction import compact, schedule_compaction
    from engines.spark.datasource import HudiShimDataSource
    from engines.spark.ddl import AlterTable, alter_table
    from engines.spark.repartition import repartition_by_bucket, with_bucket_id
    from engines.spark.session import local_session, register

_LAZY = {
    "HudiShimDataSource": "engines.spark.datasource",
    "alter_table": "engines.spark.ddl",
    "AlterTable": "engines.spark.ddl",
    "archive": "engines.spark.archiving",
    "clean": "engines.spark.cleaning",
    "compact": "engines.spark.compaction",
    "schedule_compaction": "engines.spark.compaction",
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
