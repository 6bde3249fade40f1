"""`hudi_shim`: a Spark 4 Python data source writing and reading Hudi tables.

    spark.dataSource.register(engines.spark.HudiShimDataSource)
    df.write.format("hudi_shim").mode("append").option(...).save(path)
    spark.read.format("hudi_shim").option("hoodie.datasource.query.type", "snapshot").load(path)

Writes: `writer()` runs once on the driver side and starts the instant (`job.plan_write`); each
Spark task writes its rows' file groups through Arrow batches (`task.write_task`); `commit()`
completes the instant from the file group states, `abort()` leaves it for the next writer to roll
back. Spark cannot be asked to partition the rows by bucket, so any partitioning is written
correctly: tasks running at once hand the rows of shared file groups to whichever writes the group
first (`handoff`), so each base file is written once; `repartition_by_bucket` gives each file
group to exactly one task even when tasks do not run at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, DataSourceReader, WriterCommitMessage
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from engines.spark.reader import HudiShimReader, spark_schema
from shim.errors import InvalidArgumentError
from shim.write.job import WritePlan, abort_write, commit_write, plan_write
from shim.write.task import TaskReport, write_task
from shim.write.task_info import TaskInfo

FORMAT = "hudi_shim"


@dataclass
class HudiShimCommitMessage(WriterCommitMessage):
    """What one task reports back to the driver."""

    report: TaskReport


class HudiShimDataSource(DataSource):
    """The `hudi_shim` data source (Hudi option names; see `shim.write.options`)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def _path(self) -> str:
        path = self.options.get("path")
        if not path:
            raise InvalidArgumentError("give the table path: .save(path) / .load(path)")
        return str(path)

    def schema(self) -> StructType:
        return spark_schema(self._path(), dict(self.options))

    def reader(self, schema: StructType) -> DataSourceReader:
        return HudiShimReader(self._path(), dict(self.options), schema)

    def writer(self, schema: StructType, overwrite: bool) -> HudiShimWriter:
        arrow_schema = to_arrow_schema(schema, timezone="UTC")
        plan = plan_write(self._path(), dict(self.options), arrow_schema, overwrite=overwrite)
        return HudiShimWriter(plan)


class HudiShimWriter(DataSourceArrowWriter):
    """Writes Arrow batches of each Spark task into the instant started by the plan."""

    def __init__(self, plan: WritePlan) -> None:
        self.plan = plan

    def write(self, iterator: Iterator[pa.RecordBatch]) -> HudiShimCommitMessage:
        from pyspark import TaskContext

        context = TaskContext.get()
        task = TaskInfo(context.partitionId(), context.stageId(), context.taskAttemptId()) if context else TaskInfo()
        return HudiShimCommitMessage(write_task(self.plan, iterator, task))

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        commit_write(self.plan)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        abort_write(self.plan)
