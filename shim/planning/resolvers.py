"""Schema resolvers: the per-file plan, by column id (schema-on-read tables) or by name.

Both build on `shim.schema.resolve` / `apply`: a by-name table gets ids assigned by name, so the
same reconciliation (and the same type promotions) serves both kinds of table. Columns outside the
table schema that a merge needs (`_hoodie_operation`) are read by name when a file has them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from shim.layout.table_schema import OPERATION_COLUMN
from shim.read.file_plan import FilePlan
from shim.schema import InternalSchema, ReadPlan, apply, assign_ids_by_name, internal_from_arrow, resolve

EXTRA_COLUMNS = {OPERATION_COLUMN: pa.string()}


@dataclass(frozen=True, slots=True)
class ReconciledPlan:
    """A `ReadPlan` over table columns, plus extra columns read by name, in the requested order."""

    plan: ReadPlan
    columns: tuple[str, ...]
    extras: tuple[str, ...]
    schema: pa.Schema
    passthrough: Mapping[str, str] = field(default_factory=dict)

    @property
    def read_columns(self) -> tuple[str, ...]:
        return self.plan.read_columns + self.extras

    @property
    def present(self) -> frozenset[str]:
        return frozenset(c.name for c in self.plan.columns if c.source is not None) | frozenset(self.extras)

    def apply(self, data: pa.RecordBatch) -> pa.RecordBatch:
        # A plan without columns (all of them come from elsewhere) still carries the row count.
        body = apply(data.select(list(self.plan.read_columns)), self.plan) if self.plan.columns else data.select([])
        if not self.extras and list(self.columns) == body.schema.names:
            return body
        arrays: dict[str, pa.Array] = dict(zip(body.schema.names, body.columns))
        for name in self.columns:
            if name in arrays:
                continue
            arrays[name] = (
                data.column(name).cast(EXTRA_COLUMNS[name]) if name in self.extras
                else pa.nulls(data.num_rows, EXTRA_COLUMNS[name])
            )
        return pa.RecordBatch.from_arrays([arrays[n] for n in self.columns], schema=self.schema)


def _passthrough(plan: ReadPlan) -> dict[str, str]:
    return {
        c.name: c.source
        for c in plan.columns
        if c.source is not None and c.node is not None and c.node.identity
    }


class _Resolver:
    """Shared machinery: cached plans keyed by (file schema, instant, columns)."""

    def __init__(self, query: InternalSchema) -> None:
        self.query = query
        self._names = set(query.field_names())
        self._cache: dict[tuple[object, ...], ReconciledPlan] = {}
        self._lock = threading.Lock()

    def file_internal_schema(self, instant: str, file_schema: pa.Schema) -> InternalSchema:
        raise NotImplementedError

    def cache_key(self, instant: str, file_schema: pa.Schema) -> object:
        raise NotImplementedError

    def plan(self, *, instant: str, file_schema: pa.Schema, columns: Sequence[str], path: str) -> FilePlan:
        table_columns = [c for c in columns if c in self._names]
        present = tuple(c for c in columns if c not in self._names and file_schema.get_field_index(c) >= 0)
        key = (self.cache_key(instant, file_schema), tuple(columns), present)
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None:
            return _with_path(cached, path)
        file_internal = self.file_internal_schema(instant, file_schema)
        plan = resolve(self.query.select(table_columns), file_internal, file_path=path)
        by_name = {f.name: f for f in plan.schema}
        schema = pa.schema([by_name[c] if c in by_name else pa.field(c, EXTRA_COLUMNS[c]) for c in columns])
        reconciled = ReconciledPlan(plan, tuple(columns), present, schema, _passthrough(plan))
        with self._lock:
            self._cache[key] = reconciled
        return reconciled


def _with_path(plan: ReconciledPlan, path: str) -> ReconciledPlan:
    """The cached plan, naming this file in errors."""
    if plan.plan.file_path == path:
        return plan
    inner = ReadPlan(plan.plan.columns, plan.plan.schema, path)
    return ReconciledPlan(inner, plan.columns, plan.extras, plan.schema, plan.passthrough)


class NameMatchingResolver(_Resolver):
    """Tables without schema-on-read: file columns match query columns by name."""

    def cache_key(self, instant: str, file_schema: pa.Schema) -> object:
        return file_schema

    def file_internal_schema(self, instant: str, file_schema: pa.Schema) -> InternalSchema:
        return assign_ids_by_name(internal_from_arrow(file_schema), self.query)


class IdResolver(_Resolver):
    """Schema-on-read tables: each file's schema is the InternalSchema of the instant that wrote it.

    Files written before the table used schema-on-read (no schema for their instant) are matched
    by name, as Hudi does.
    """

    def __init__(self, query: InternalSchema, schema_of_instant: Callable[[str], InternalSchema | None]) -> None:
        super().__init__(query)
        self.schema_of_instant = schema_of_instant

    def cache_key(self, instant: str, file_schema: pa.Schema) -> object:
        schema = self.schema_of_instant(instant)
        if schema is None:
            return ("name", file_schema)
        return ("id", schema.version_id, tuple(n for n in schema.field_names() if file_schema.get_field_index(n) < 0))

    def file_internal_schema(self, instant: str, file_schema: pa.Schema) -> InternalSchema:
        schema = self.schema_of_instant(instant)
        if schema is None:
            return assign_ids_by_name(internal_from_arrow(file_schema), self.query)
        # A column of the instant's schema that the file lacks reads as null, as Hudi rewrites
        # records into the query schema (e.g. a MERGE INTO source column Hudi added to the table
        # schema, then wrote no value of).
        names = schema.field_names()
        present = [n for n in names if file_schema.get_field_index(n) >= 0]
        return schema if len(present) == len(names) else schema.select(present)
