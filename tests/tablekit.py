"""Tiny Hudi tables for tests, written with the real format writer (`shim.write`).

Each method performs one commit (or leaves it inflight) so a test reads like the history it builds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pyarrow as pa

from shim.properties import TableConfig, TableType
from shim.schema import (
    META_FIELD_NAMES,
    Field,
    InternalSchema,
    inherit_schema_history,
    internal_from_avro,
    internal_to_arrow,
    schema_to_json,
)
from shim.schema.serde import parse_type_token
from shim.timeline.instant import Action
from shim.write.clock import new_instant_time
from shim.write.commit import CommitRecord, InstantFiles
from shim.write.data_files import FileWrite, avro_record_schema, write_base_file, write_log_blocks
from shim.write.table_init import TableSpec, create_table


class TinyTable:
    """A table under construction in a test's tmp_path."""

    def __init__(
        self,
        path: Path,
        schema: pa.Schema,
        *,
        mor: bool = True,
        key: Sequence[str] = ("id",),
        partition: Sequence[str] = (),
        ordering: Sequence[str] = ("ts",),
        hive_style: bool = True,
        payload: str | None = None,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.path = path
        self.schema = schema
        spec = TableSpec(
            name="tiny",
            record_key_fields=tuple(key),
            table_type=TableType.MERGE_ON_READ if mor else TableType.COPY_ON_WRITE,
            partition_fields=tuple(partition),
            ordering_fields=tuple(ordering),
            hive_style_partitioning=hive_style,
            payload_class=payload,
            extra=extra or {},
        )
        self.config: TableConfig = create_table(str(path), spec, json.dumps(self._avro(schema)))
        self.instants: list[str] = []

    def _avro(self, schema: pa.Schema) -> dict:
        return avro_record_schema("tiny", schema)

    def _rows(self, rows: Sequence[dict] | pa.Table, schema: pa.Schema | None) -> pa.Table:
        if isinstance(rows, pa.Table):
            return rows
        return pa.Table.from_pylist(list(rows), schema=schema or self.schema)

    def _commit(self, writes: list[FileWrite], instant: str, action: Action, complete: bool,
                schema: pa.Schema | None, operation: str = "UPSERT",
                replaced: dict[str, tuple[str, ...]] | None = None) -> str:
        files = InstantFiles(str(self.path), self.config, instant, action)
        if complete:
            extra = {"schema": json.dumps(self._avro(schema or self.schema))}
            files.complete(CommitRecord(tuple(writes), operation, extra, replaced or {}))
        self.instants.append(instant)
        return instant

    def _begin(self, action: Action) -> tuple[str, InstantFiles]:
        instant = new_instant_time()
        files = InstantFiles(str(self.path), self.config, instant, action)
        files.request()
        files.start(b"{}")
        return instant, files

    @property
    def write_action(self) -> Action:
        return Action.DELTA_COMMIT if self.config.is_mor else Action.COMMIT

    def base(self, rows: Sequence[dict] | pa.Table, *, file_id: str = "fg1-0", partition: str = "",
             complete: bool = True, schema: pa.Schema | None = None, action: Action | None = None,
             replaced: dict[str, tuple[str, ...]] | None = None, operation: str = "UPSERT") -> str:
        """One commit writing one base file."""
        act = action or self.write_action
        instant, _ = self._begin(act)
        data = self._rows(rows, schema)
        write = write_base_file(str(self.path), self.config, partition_path=partition, file_id=file_id,
                                instant=instant, write_token="0-1-0", data=data)
        return self._commit([write], instant, act, complete, schema or data.schema, operation, replaced)

    def log(self, rows: Sequence[dict] | pa.Table | None = None, *, deletes: Sequence[str] = (),
            delete_ordering: Sequence[pa.Array] = (), file_id: str = "fg1-0", partition: str = "",
            base_instant: str | None = None, complete: bool = True, schema: pa.Schema | None = None) -> str:
        """One deltacommit appending a log file (a data block and/or a delete block)."""
        instant, _ = self._begin(Action.DELTA_COMMIT)
        data = self._rows(rows, schema) if rows is not None else None
        write = write_log_blocks(str(self.path), self.config, partition_path=partition, file_id=file_id,
                                 base_instant=base_instant or instant, instant=instant, write_token="0-2-0",
                                 upserts=data, delete_keys=deletes, delete_ordering=delete_ordering)
        return self._commit([write], instant, Action.DELTA_COMMIT, complete,
                            schema or (data.schema if data is not None else None))



# -- schema-on-read tables ----------------------------------------------------------------------


class EvolvingTable(TinyTable):
    """A schema-on-read table: every commit records `latestSchema` and a `.schemacommit`, and
    `alter` commits an ALTER_SCHEMA instant, as Hudi does. Rows are written with the current
    schema's names and types."""

    def __init__(self, path: Path, schema: pa.Schema, **kwargs: object) -> None:
        super().__init__(path, schema, **kwargs)  # type: ignore[arg-type]
        self.internal = internal_from_avro(self._avro(schema), add_meta=True)
        self.history = ""

    def _record_schema(self, instant: str, changed: bool) -> dict[str, str]:
        if changed or not self.history:
            self.internal = InternalSchema(self.internal.record, int(instant), self.internal.max_column_id)
            self.history = inherit_schema_history(self.internal, self.history)
        folder = self.path / ".hoodie" / ".schema"
        folder.mkdir(exist_ok=True)
        (folder / f"{instant}.schemacommit").write_text(self.history)
        return {"latestSchema": schema_to_json(self.internal)}

    def _commit(self, writes, instant, action, complete, schema, operation="UPSERT", replaced=None):
        files = InstantFiles(str(self.path), self.config, instant, action)
        if complete:
            extra = {"schema": json.dumps(self._avro(self.schema)), **self._record_schema(instant, False)}
            files.complete(CommitRecord(tuple(writes), operation, extra, replaced or {}))
        self.instants.append(instant)
        return instant

    def alter(self, change: Callable[[InternalSchema], InternalSchema]) -> str:
        """Commit an ALTER_SCHEMA instant applying `change` to the current schema."""
        instant, files = self._begin(Action.COMMIT)
        self.internal = change(self.internal)
        self.schema = pa.schema([pa.field(f.name, f.type, f.nullable) for f in
                                 internal_to_arrow(self.internal) if f.name not in META_FIELD_NAMES])
        extra = {"schema": json.dumps(self._avro(self.schema)), **self._record_schema(instant, True)}
        files.complete(CommitRecord((), "ALTER_SCHEMA", extra))
        self.instants.append(instant)
        return instant


def _fields(schema: InternalSchema) -> list[Field]:
    return list(schema.record.fields)


def rename(old: str, new: str) -> Callable[[InternalSchema], InternalSchema]:
    def change(schema: InternalSchema) -> InternalSchema:
        fields = [Field(f.id, new if f.name == old else f.name, f.type, f.optional, f.doc) for f in _fields(schema)]
        return InternalSchema.of(fields, schema.version_id, schema.max_column_id)
    return change


def drop(name: str) -> Callable[[InternalSchema], InternalSchema]:
    def change(schema: InternalSchema) -> InternalSchema:
        return InternalSchema.of([f for f in _fields(schema) if f.name != name], schema.version_id,
                                 schema.max_column_id)
    return change


def add(name: str, type_token: str, after: str | None = None) -> Callable[[InternalSchema], InternalSchema]:
    def change(schema: InternalSchema) -> InternalSchema:
        new_id = schema.max_column_id + 1
        field = Field(new_id, name, parse_type_token(type_token), True)
        fields = _fields(schema)
        index = len(fields) if after is None else [f.name for f in fields].index(after) + 1
        fields.insert(index, field)
        return InternalSchema.of(fields, schema.version_id, new_id)
    return change


def retype(name: str, type_token: str) -> Callable[[InternalSchema], InternalSchema]:
    def change(schema: InternalSchema) -> InternalSchema:
        fields = [Field(f.id, f.name, parse_type_token(type_token) if f.name == name else f.type, f.optional, f.doc)
                  for f in _fields(schema)]
        return InternalSchema.of(fields, schema.version_id, schema.max_column_id)
    return change


def move(name: str, after: str) -> Callable[[InternalSchema], InternalSchema]:
    def change(schema: InternalSchema) -> InternalSchema:
        fields = _fields(schema)
        moving = next(f for f in fields if f.name == name)
        fields.remove(moving)
        fields.insert([f.name for f in fields].index(after) + 1, moving)
        return InternalSchema.of(fields, schema.version_id, schema.max_column_id)
    return change
