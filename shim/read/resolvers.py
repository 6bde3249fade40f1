"""Schema resolvers: name matching for tables without schema-on-read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from shim.read.plan import FilePlan


@dataclass(frozen=True, slots=True)
class _NamePlan:
    target: pa.Schema
    sources: tuple[str | None, ...]
    read_columns: tuple[str, ...]
    passthrough: Mapping[str, str]

    def apply(self, data: pa.RecordBatch) -> pa.RecordBatch:
        arrays = []
        for field, source in zip(self.target, self.sources):
            if source is None:
                arrays.append(pa.nulls(data.num_rows, type=field.type))
                continue
            column = data.column(source)
            arrays.append(column if column.type == field.type else column.cast(field.type))
        return pa.RecordBatch.from_arrays(arrays, schema=self.target)


class NameMatchingResolver:
    """Matches file columns to query columns by name, casting to the query type."""

    def __init__(self, query_schema: pa.Schema) -> None:
        self.query_schema = query_schema

    def plan(self, *, instant: str, file_schema: pa.Schema, columns: Sequence[str], path: str) -> FilePlan:
        target = pa.schema([self.query_schema.field(name) for name in columns])
        names = set(file_schema.names)
        sources = tuple(name if name in names else None for name in columns)
        exact = {
            name: name
            for name in columns
            if name in names and file_schema.field(name).type == self.query_schema.field(name).type
        }
        return _NamePlan(target, sources, tuple(s for s in sources if s is not None), exact)
