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
    internal_from_avro,
    internal_to_arrow,
    schema_to_json,
)
from shim.schema.serde import parse_type_token
from shim.storage import as_storage
from shim.timeline.instant import Action
from shim.write import schema_changes
from shim.write.clock import new_instant_time
from shim.write.commit import CommitRecord, InstantFiles
from shim.write.data_files import FileWrite, avro_record_schema, write_base_file, write_log_blocks
from shim.write.schema_history import plan_schema_commit
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
        files = InstantFiles(as_storage(str(self.path)), self.config, instant, action)
        if complete:
            written = schema or self.schema
            if self.config.drop_partition_columns:  # as Hudi: the write schema leaves them out too
                written = pa.schema([f for f in written if f.name not in self.config.partition_fields])
            extra = {"schema": json.dumps(self._avro(written))}
            files.complete(CommitRecord(tuple(writes), operation, extra, replaced or {}))
        self.instants.append(instant)
        return instant

    def _begin(self, action: Action) -> tuple[str, InstantFiles]:
        instant = new_instant_time()
        files = InstantFiles(as_storage(str(self.path)), self.config, instant, action)
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
        write = write_base_file(as_storage(str(self.path)), self.config, partition_path=partition, file_id=file_id,
                                instant=instant, write_token="0-1-0", data=data)
        return self._commit([write], instant, act, complete, schema or data.schema, operation, replaced)

    def log(self, rows: Sequence[dict] | pa.Table | None = None, *, deletes: Sequence[str] = (),
            delete_ordering: Sequence[pa.Array] = (), file_id: str = "fg1-0", partition: str = "",
            base_instant: str | None = None, complete: bool = True, schema: pa.Schema | None = None,
            block_format: str = "avro", partial: bool = False, positions: object = None) -> str:
        """One deltacommit appending a log file (a data block, Avro or Parquet, and/or a delete
        block); `partial`: the data block holds partial updates (the columns of `rows` only);
        `positions`: the base file rows of `rows`, written as the block's RECORD_POSITIONS."""
        instant, _ = self._begin(Action.DELTA_COMMIT)
        if partial and schema is None and rows is not None and not isinstance(rows, pa.Table):
            schema = pa.schema([f for f in self.schema if f.name in rows[0]])  # the columns set
        data = self._rows(rows, schema) if rows is not None else None
        write = write_log_blocks(as_storage(str(self.path)), self.config, partition_path=partition, file_id=file_id,
                                 base_instant=base_instant or instant, instant=instant, write_token="0-2-0",
                                 upserts=data, delete_keys=deletes, delete_ordering=delete_ordering,
                                 block_format=block_format, partial=partial, positions=positions)
        return self._commit([write], instant, Action.DELTA_COMMIT, complete,
                            self.schema if partial else schema or (data.schema if data is not None else None))



# -- schema-on-read tables ----------------------------------------------------------------------


class EvolvingTable(TinyTable):
    """A schema-on-read table: every commit records `latestSchema` and a `.schemacommit`, and
    `alter` commits an ALTER_SCHEMA instant, as Hudi does. Rows are written with the current
    schema's names and types."""

    def __init__(self, path: Path, schema: pa.Schema, **kwargs: object) -> None:
        super().__init__(path, schema, **kwargs)  # type: ignore[arg-type]
        self.internal = internal_from_avro(self._avro(schema), add_meta=True)
        self.history = ""

    def _record_schema(self, instant: str, evolved: InternalSchema) -> dict[str, str]:
        previous = self.internal if self.history else None
        commit = plan_schema_commit(previous or evolved, self.history, evolved, instant)
        self.internal, self.history = commit.latest, commit.history
        folder = self.path / ".hoodie" / ".schema"
        folder.mkdir(exist_ok=True)
        (folder / f"{instant}.schemacommit").write_text(self.history)
        return {"latestSchema": schema_to_json(self.internal)}

    def _commit(self, writes, instant, action, complete, schema, operation="UPSERT", replaced=None):
        files = InstantFiles(as_storage(str(self.path)), self.config, instant, action)
        if complete:
            extra = {"schema": json.dumps(self._avro(self.schema)), **self._record_schema(instant, self.internal)}
            files.complete(CommitRecord(tuple(writes), operation, extra, replaced or {}))
        self.instants.append(instant)
        return instant

    def alter(self, change: Callable[[InternalSchema], InternalSchema]) -> str:
        """Commit an ALTER_SCHEMA instant applying `change` to the current schema."""
        instant, files = self._begin(Action.COMMIT)
        evolved = change(self.internal)
        self.schema = pa.schema([pa.field(f.name, f.type, f.nullable) for f in
                                 internal_to_arrow(evolved) if f.name not in META_FIELD_NAMES])
        extra = {"schema": json.dumps(self._avro(self.schema)), **self._record_schema(instant, evolved)}
        files.complete(CommitRecord((), "ALTER_SCHEMA", extra))
        self.instants.append(instant)
        return instant


Change = Callable[[InternalSchema], InternalSchema]


def rename(old: str, new: str) -> Change:
    return lambda schema: schema_changes.rename_column(schema, old, new)


def drop(name: str) -> Change:
    return lambda schema: schema_changes.drop_column(schema, name)


def add(name: str, type_token: str, after: str | None = None) -> Change:
    return lambda schema: schema_changes.add_column(schema, name, type_token, after=after)


def retype(name: str, type_token: str) -> Change:
    return lambda schema: schema_changes.update_column_type(schema, name, type_token)


def move(name: str, after: str) -> Change:
    return lambda schema: schema_changes.move_column(schema, name, after=after)


def forced_retype(name: str, type_token: str) -> Change:
    """A type change applied without Hudi's checks, as a careless writer could record it."""

    def change(schema: InternalSchema) -> InternalSchema:
        fields = [Field(f.id, f.name, parse_type_token(type_token) if f.name == name else f.type, f.optional, f.doc)
                  for f in schema.record.fields]
        return InternalSchema.of(fields, schema.version_id, schema.max_column_id)

    return change
