"""The query schema of a read and the resolver that maps each file onto it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa

from shim.errors import InvalidTableError
from shim.plan.table_schema import avro_schema_as_of, strip_meta
from shim.properties import TableConfig
from shim.read.base_files import read_file_schema
from shim.read.partition_fill import PartitionFillingResolver
from shim.read.plan import SchemaResolver
from shim.read.resolvers import IdResolver, NameMatchingResolver
from shim.schema import (
    META_FIELD_NAMES,
    META_FIELDS,
    Field,
    InternalSchema,
    RecordType,
    internal_from_arrow,
    internal_from_avro,
    internal_to_arrow,
)
from shim.schema.types import STRING

if TYPE_CHECKING:
    from shim.table import Table


@dataclass(frozen=True, slots=True)
class PartitionValues:
    """A partition's column values as its path spells them: all that could be typed, and those
    the path spells exactly (what every row of the partition holds)."""

    typed: Mapping[str, object] | None
    exact: Mapping[str, object] | None


@dataclass(frozen=True, slots=True)
class TableSchemas:
    """Schemas of one read.

    Attributes:
        internal: the table's InternalSchema at the read instant, meta columns included.
        full_schema: `internal` as Arrow (meta columns first; column ids in field metadata).
        data_schema: `full_schema` without meta columns.
        resolver: per-file plans onto `internal`.
        schema_on_read: whether files are matched by column id.
        partition_values: per partition path, its typed column values (filled by scans as they
            prune partitions; None: the path does not spell them).
        stored: the InternalSchema as the table records it (`internal` without the partition
            columns readers add back to tables that drop them from files); None: the same.
    """

    internal: InternalSchema
    full_schema: pa.Schema
    data_schema: pa.Schema
    resolver: SchemaResolver
    schema_on_read: bool
    history: tuple[InternalSchema, ...] = ()
    partition_values: dict[str, PartitionValues] = field(default_factory=dict, compare=False)
    stored: InternalSchema | None = None

    def current_name(self, name: str) -> str | None:
        """The column's name now, found by id when it was renamed (key and ordering fields are
        recorded by name in the table config)."""
        if self.internal.find_field_by_name(name) is not None:
            return name
        for old in self.history:
            field = old.find_field_by_name(name)
            if field is not None:
                return self.internal.find_full_name(field.id)
        return None


def table_schemas_as_of(table: Table, read_instant: str | None) -> TableSchemas:
    """Schema of the table as of the read instant.

    Schema-on-read tables use the InternalSchema of the newest commit (ids, renames, drops);
    other tables use the newest commit's Avro writer schema, ids assigned as Hudi assigns them.
    """
    history = table.schema_history
    internal = history.table_schema(read_instant)
    if internal is not None:
        internal = _with_meta(internal)
        resolver: SchemaResolver = IdResolver(internal, history.schema_of_instant)
        on_read = True
    else:
        avro = avro_schema_as_of(table.active_timeline, table.config, read_instant)
        if avro is not None:
            internal = internal_from_avro(avro, add_meta=True)
        else:
            internal = _with_meta(internal_from_arrow(_schema_from_any_base_file(table, read_instant)))
        resolver = NameMatchingResolver(internal)
        on_read = False
    stored = internal
    internal = _with_dropped_partition_columns(internal, table.config)
    full = internal_to_arrow(internal)
    if table.config.is_partitioned:
        resolver = PartitionFillingResolver(resolver, table.path, table.config, full)
    versions = tuple(history.history()) if on_read else ()
    return TableSchemas(internal, full, strip_meta(full), resolver, on_read, versions,
                        stored=stored if stored is not internal else None)


def _with_dropped_partition_columns(internal: InternalSchema, config: TableConfig) -> InternalSchema:
    """`internal` with the partition columns a table written with
    `hoodie.datasource.write.drop.partition.columns` keeps out of its files and schema: appended
    as strings (as Hudi's TableSchemaResolver appends them), filled from the folder names."""
    if not (config.drop_partition_columns and config.is_partitioned):
        return internal
    present = {field.name for field in internal.record.fields}
    missing = [name for name in config.partition_fields if "." not in name and name not in present]
    if not missing:
        return internal
    first = internal.max_column_id + 1
    added = tuple(Field(first + i, name, STRING, True, "") for i, name in enumerate(missing))
    record = RecordType(internal.record.fields + added, internal.record.name)
    return InternalSchema(record, internal.version_id, internal.max_column_id + len(missing))


def _with_meta(internal: InternalSchema) -> InternalSchema:
    """`internal` with Hudi's meta columns (ids 0-4) in front, when it lacks them and the ids are free."""
    names = set(internal.field_names())
    if names & set(META_FIELD_NAMES) or internal.find_field(0) is not None:
        return internal
    record = RecordType(tuple(META_FIELDS) + internal.record.fields, internal.record.name)
    return InternalSchema(record, internal.version_id, internal.max_column_id)


def _schema_from_any_base_file(table: Table, read_instant: str | None) -> pa.Schema:
    from shim.plan.slices import file_slices_as_of

    if read_instant is None:
        return pa.schema([])
    partitions = table.listing.partitions()
    for file_slice in file_slices_as_of(table.path, partitions, table.active_timeline, read_instant,
                                        groups=table.listing.file_groups(partitions)):
        path = file_slice.base_path(table.path)
        if path is not None:
            return read_file_schema(path)
    raise InvalidTableError(
        f"{table.path}: no schema in commit metadata, no create schema and no base file to read one from",
        path=table.path,
    )
