"""The query schema of a read and the resolver that maps each file onto it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from shim.errors import InvalidTableError
from shim.layout.table_schema import avro_schema_as_of, strip_meta
from shim.planning.partition_fill import PartitionFillingResolver
from shim.planning.resolvers import IdResolver, NameMatchingResolver
from shim.properties import TableConfig
from shim.read.base_files import read_file_schema
from shim.read.file_plan import SchemaResolver
from shim.read.table_schemas import TableSchemas
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
    from shim.read.snapshot_state import SnapshotState


def table_schemas_as_of(table: SnapshotState, read_instant: str | None) -> TableSchemas:
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


def _schema_from_any_base_file(table: SnapshotState, read_instant: str | None) -> pa.Schema:
    from shim.layout.slices import file_slices_as_of

    if read_instant is None:
        return pa.schema([])
    files = table.files.for_read(read_instant)
    partitions = files.partitions()
    for file_slice in file_slices_as_of(table.storage, partitions, table.active_timeline, read_instant,
                                        groups=files.file_groups(partitions)):
        path = file_slice.base_path(table.path)
        if path is not None:
            return read_file_schema(table.storage, path)
    raise InvalidTableError(
        f"{table.path}: no schema in commit metadata, no create schema and no base file to read one from",
        path=table.path,
    )
