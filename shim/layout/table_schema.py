"""The table's Arrow schema as of an instant, for tables read by column name."""

from __future__ import annotations

import pyarrow as pa

from shim.avro.schema import avro_to_arrow_schema
from shim.errors import InvalidTableError
from shim.properties import TableConfig
from shim.timeline.timeline import Timeline

META_COLUMNS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
OPERATION_COLUMN = "_hoodie_operation"
IS_DELETED_COLUMN = "_hoodie_is_deleted"
META_SCHEMA = pa.schema([pa.field(name, pa.string()) for name in META_COLUMNS])
ALL_META_NAMES = frozenset(META_COLUMNS) | {OPERATION_COLUMN}


def strip_meta(schema: pa.Schema) -> pa.Schema:
    """`schema` without Hudi's meta columns."""
    return pa.schema([field for field in schema if field.name not in ALL_META_NAMES], metadata=schema.metadata)


def avro_schema_as_of(timeline: Timeline, config: TableConfig, as_of: str | None) -> str | None:
    """Avro writer schema of the newest commit at or before `as_of`, else the table's create schema."""
    latest = timeline.latest_commit_metadata(as_of)
    if latest is not None and latest[1].schema:
        return latest[1].schema
    return config.create_schema


def data_schema_from_avro(avro_schema: str, source: str) -> pa.Schema:
    """Data columns of an Avro writer schema, meta columns removed."""
    try:
        return strip_meta(avro_to_arrow_schema(avro_schema))
    except InvalidTableError as exc:
        raise InvalidTableError(f"cannot read the table schema from {source}: {exc.message}", path=source) from exc
