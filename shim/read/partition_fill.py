"""Partition columns of tables written with `hoodie.datasource.write.drop.partition.columns=true`.

Such tables leave the partition columns out of the data files; readers recover them from the
partition path, which is exact only when the path holds the plain column values (simple and
complex key generators).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from shim.errors import UnsupportedFeatureError
from shim.plan.partitions import partition_values
from shim.properties import TableConfig
from shim.read.plan import FilePlan, SchemaResolver


@dataclass(frozen=True, slots=True)
class _FilledPlan:
    inner: FilePlan
    constants: Mapping[str, pa.Scalar]

    @property
    def read_columns(self) -> tuple[str, ...]:
        return self.inner.read_columns

    @property
    def passthrough(self) -> Mapping[str, str]:
        return {k: v for k, v in self.inner.passthrough.items() if k not in self.constants}

    def apply(self, data: pa.RecordBatch) -> pa.RecordBatch:
        batch = self.inner.apply(data)
        for name, value in self.constants.items():
            index = batch.schema.get_field_index(name)
            if index >= 0:
                column = pa.array([value.as_py()] * batch.num_rows, type=batch.schema.field(index).type)
                batch = batch.set_column(index, batch.schema.field(index), column)
        return batch


class PartitionFillingResolver:
    """Wraps a resolver: partition columns absent from files take their value from the path."""

    def __init__(self, inner: SchemaResolver, table_path: str, config: TableConfig, schema: pa.Schema) -> None:
        self.inner = inner
        self.table_path = table_path
        self.config = config
        self.schema = schema
        self._cache: dict[str, dict[str, pa.Scalar]] = {}

    def plan(self, *, instant: str, file_schema: pa.Schema, columns: Sequence[str], path: str) -> FilePlan:
        plan = self.inner.plan(instant=instant, file_schema=file_schema, columns=columns, path=path)
        wanted = [c for c in self.config.partition_fields if c in columns and file_schema.get_field_index(c) < 0]
        if not wanted:
            return plan
        constants = self._values(path)
        return _FilledPlan(plan, {name: constants[name] for name in wanted})

    def _values(self, path: str) -> dict[str, pa.Scalar]:
        file_path = path.split("@", 1)[0]
        partition = os.path.relpath(os.path.dirname(file_path), self.table_path).replace(os.sep, "/")
        partition = "" if partition == "." else partition
        if partition in self._cache:
            return self._cache[partition]
        raw = partition_values(partition, self.config)
        if raw is None:
            raise UnsupportedFeatureError(
                f"{file_path}: partition columns were dropped from the data files and the partition path "
                f"{partition!r} does not hold their values (key generator {self.config.key_generator})",
                feature="drop-partition-columns",
                path=file_path,
            )
        values = {}
        for name, text in raw.items():
            target = self.schema.field(name).type
            values[name] = pa.scalar(text, pa.string()).cast(target) if text is not None else pa.scalar(None, target)
        self._cache[partition] = values
        return values
