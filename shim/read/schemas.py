"""The query schema of a read and the resolver that maps each file onto it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from shim.errors import InvalidTableError
from shim.plan.table_schema import META_SCHEMA, OPERATION_COLUMN, avro_schema_as_of, data_schema_from_avro, strip_meta
from shim.read.base_files import read_file_schema
from shim.read.plan import SchemaResolver
from shim.read.resolvers import NameMatchingResolver

if TYPE_CHECKING:
    from shim.table import Table


@dataclass(frozen=True, slots=True)
class TableSchemas:
    """Schemas of one read: data columns in table order, and per-file plans onto them."""

    data_schema: pa.Schema
    resolver: SchemaResolver


def table_schemas_as_of(table: Table, read_instant: str | None) -> TableSchemas:
    """Schema of the table as of the read instant (the newest commit's writer schema)."""
    timeline = table.active_timeline
    avro = avro_schema_as_of(timeline, table.config, read_instant)
    if avro is not None:
        data_schema = data_schema_from_avro(avro, f"{table.path} as of {read_instant or 'its creation'}")
    else:
        data_schema = _schema_from_any_base_file(table, read_instant)
    full = pa.schema(list(META_SCHEMA) + [pa.field(OPERATION_COLUMN, pa.string())] + list(data_schema))
    return TableSchemas(data_schema, NameMatchingResolver(full))


def _schema_from_any_base_file(table: Table, read_instant: str | None) -> pa.Schema:
    from shim.plan.partitions import list_partitions
    from shim.plan.slices import file_slices_as_of

    if read_instant is None:
        return pa.schema([])
    partitions = list_partitions(table.path, table.config)
    for file_slice in file_slices_as_of(table.path, partitions, table.active_timeline, read_instant):
        path = file_slice.base_path(table.path)
        if path is not None:
            return strip_meta(read_file_schema(path))
    raise InvalidTableError(
        f"{table.path}: no schema in commit metadata, no create schema and no base file to read one from",
        path=table.path,
    )
