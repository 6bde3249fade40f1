"""Compaction with Spark: the service (`shim.write.services.compaction`) runs each file group in a task.

    engines.spark.compact(path, spark)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shim.write.services.compaction import CompactionJob, compact_file_group, schedule_compaction
from shim.write.services.compaction import compact as compact_here
from shim.write.task_info import TaskInfo

__all__ = ["compact", "schedule_compaction"]


def compact(location: str, spark: Any = None, options: Mapping[str, str] | None = None) -> str | None:
    """Schedule (or resume) and run a compaction; returns its instant, or None if no slice has logs.

    With a SparkSession, every file group is compacted in its own Spark task; without, in this
    process.
    """
    if spark is None:
        return compact_here(location, options)

    def in_spark_tasks(job: CompactionJob, operations: list[dict[str, Any]]) -> None:
        spark.sparkContext.parallelize(operations, len(operations)).map(
            lambda op: _run_in_task(job, op)).collect()

    return compact_here(location, options, runner=in_spark_tasks)


def _run_in_task(job: CompactionJob, op: dict[str, Any]) -> str:
    from pyspark import TaskContext

    context = TaskContext.get()
    task = TaskInfo(context.partitionId(), context.stageId(), context.taskAttemptId()) if context else TaskInfo()
    return compact_file_group(job, op, task)
