"""The schema a write starts from: the table's InternalSchema as of the instant it reads."""

from __future__ import annotations

from shim.errors import InvalidTableError
from shim.planning.query_schema import table_schemas_as_of
from shim.planning.snapshot import TableSnapshot
from shim.schema import InternalSchema, internal_from_avro


def current_schema(table: TableSnapshot, read_instant: str | None) -> InternalSchema | None:
    """The table's InternalSchema (meta columns included) as of `read_instant`, or None if it has
    no schema yet."""
    if read_instant is None:
        create = table.config.create_schema
        return internal_from_avro(create, add_meta=True) if create else None
    try:
        schemas = table_schemas_as_of(table, read_instant)
        return schemas.stored or schemas.internal
    except InvalidTableError:
        return None
