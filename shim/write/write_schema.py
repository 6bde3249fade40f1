"""The schema a write uses: the table's schema, evolved by the incoming data as Hudi does it.

Hudi's schema-on-read write path (`AvroSchemaEvolutionUtils.reconcileSchemaRequirements`, then
`reconcileSchema`), matching columns by full name:
- a table column missing from the data is kept (written as null);
- a column new to the table is added with a fresh id, placed before the next incoming column
  the table already has (else last);
- a column whose incoming type the table type can hold (`int` into `long`) is cast to the table
  type; a column whose table type can widen to the incoming type (`int` -> `long`) is widened;
  any other type difference is an error;
- nested struct fields follow the same rules.
"""

from __future__ import annotations

import json

import pyarrow as pa

from shim.errors import SchemaEvolutionError, WriteError
from shim.schema import InternalSchema, internal_from_arrow, internal_from_avro, internal_to_arrow
from shim.schema.arrow import arrow_primitive_to_internal, type_to_arrow, without_field_ids
from shim.schema.internal_schema import META_FIELD_NAMES
from shim.schema.promote import convert, is_direct_change
from shim.schema.types import Field, PrimitiveType, RecordType, Type
from shim.write.data_files import avro_record_schema
from shim.write.schema_changes import add_column, move_column, update_column_type


def initial_schema(table_name: str, incoming: pa.Schema) -> InternalSchema:
    """The first InternalSchema of a table, ids assigned as Hudi assigns them (meta columns 0-4)."""
    data = pa.schema([_utc(f) for f in incoming if f.name not in META_FIELD_NAMES])
    return internal_from_avro(json.dumps(avro_record_schema(table_name, data)), add_meta=True)


def _utc(field: pa.Field) -> pa.Field:
    t = field.type
    if pa.types.is_timestamp(t) and t.tz is not None and t.tz != "UTC":
        return field.with_type(pa.timestamp(t.unit, tz="UTC"))
    return field


def evolve_for_write(current: InternalSchema, incoming: pa.Schema) -> InternalSchema:
    """`current` evolved to hold `incoming` (unchanged when it already does).

    Raises:
        SchemaEvolutionError: a column's incoming type differs from its table type in a way Hudi
            does not allow in either direction.
    """
    data = pa.schema([_utc(f) for f in incoming if f.name not in META_FIELD_NAMES])
    incoming_internal = internal_from_arrow(data)
    schema = current
    schema = _reconcile_fields(schema, "", incoming_internal.record.fields)
    return schema


def _reconcile_fields(schema: InternalSchema, parent: str, fields: tuple[Field, ...]) -> InternalSchema:
    names = [f.name for f in fields]
    for index, field in enumerate(fields):
        full = f"{parent}.{field.name}" if parent else field.name
        existing = schema.find_field_by_name(full)
        if existing is None:
            schema = _add(schema, parent, field, names[index + 1:])
            continue
        schema = _reconcile_type(schema, full, existing.type, field.type)
    return schema


def _add(schema: InternalSchema, parent: str, field: Field, following: list[str]) -> InternalSchema:
    full = f"{parent}.{field.name}" if parent else field.name
    before = next((n for n in following if schema.find_field_by_name(f"{parent}.{n}" if parent else n)), None)
    schema = add_column(schema, full, field.type)
    if before is None:
        return schema
    return _place_before(schema, parent, full, before)


def _place_before(schema: InternalSchema, parent: str, full: str, before: str) -> InternalSchema:
    owner_fields = schema.record.fields if not parent else _struct_fields(schema, parent)
    names = [f.name for f in owner_fields if f.name != full.rpartition(".")[2]]
    index = names.index(before)
    if index == 0:
        return move_column(schema, full, first=True)
    return move_column(schema, full, after=names[index - 1])


def _struct_fields(schema: InternalSchema, name: str) -> tuple[Field, ...]:
    field = schema.find_field_by_name(name)
    assert field is not None and isinstance(field.type, RecordType)
    return field.type.fields


def _reconcile_type(schema: InternalSchema, full: str, table_type: Type, incoming: Type) -> InternalSchema:
    if isinstance(table_type, PrimitiveType) and isinstance(incoming, PrimitiveType):
        if table_type == incoming or is_direct_change(incoming, table_type):
            return schema  # the data is cast to the table type
        if is_direct_change(table_type, incoming):
            return update_column_type(schema, full, incoming)
        raise SchemaEvolutionError(
            f"column {full!r} is {incoming} in the data but {table_type} in the table, and Hudi allows "
            "neither change; cast the column before writing",
            column=full,
        )
    if isinstance(table_type, RecordType) and isinstance(incoming, RecordType):
        return _reconcile_fields(schema, full, incoming.fields)
    if _same_shape(table_type, incoming):
        return schema
    raise SchemaEvolutionError(
        f"column {full!r} is {incoming} in the data but {table_type} in the table; nested type changes "
        "other than new struct fields are not supported",
        column=full,
    )


def _same_shape(a: Type, b: Type) -> bool:
    return type_to_arrow(a).equals(type_to_arrow(b), check_metadata=False) if type(a) is type(b) else False


def align_to_schema(data: pa.Table, schema: InternalSchema) -> pa.Table:
    """`data` as the data columns of `schema`: columns by name, cast to their table types, missing
    ones null, in table order (meta columns excluded).

    Raises:
        WriteError: a value cannot be converted, or a required column holds nulls.
    """
    target = list(data_arrow_schema(schema))
    columns: list[pa.Array | pa.ChunkedArray] = []
    for tf in target:
        internal = schema.find_field_by_name(tf.name)
        assert internal is not None
        if tf.name not in data.column_names:
            if not tf.nullable:
                raise WriteError(f"column {tf.name!r} is required by the table but missing from the data",
                                 column=tf.name)
            columns.append(pa.nulls(data.num_rows, tf.type))
            continue
        chunked = data.column(tf.name)
        column = chunked if chunked.type.equals(tf.type) else _cast(
            chunked.combine_chunks(), tf.type, internal.type, tf.name)
        if not tf.nullable and column.null_count:
            raise WriteError(f"column {tf.name!r} is required (not nullable) but the data holds nulls",
                             column=tf.name)
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=pa.schema(target))


def data_arrow_schema(schema: InternalSchema) -> pa.Schema:
    """The Arrow schema of the data columns, without column-id metadata (Hudi's files carry none)."""
    arrow = internal_to_arrow(schema)
    return without_field_ids(pa.schema([f for f in arrow if f.name not in META_FIELD_NAMES]))


def _cast(column: pa.Array, arrow_type: pa.DataType, table_type: Type, name: str) -> pa.Array:
    if isinstance(table_type, PrimitiveType) and not pa.types.is_nested(column.type):
        try:
            source = arrow_primitive_to_internal(column.type, name)
            if source != table_type and is_direct_change(source, table_type):
                return convert(column.cast(type_to_arrow(source)), source, table_type)
        except (ValueError, SchemaEvolutionError):
            pass
    try:
        return column.cast(arrow_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise WriteError(f"column {name!r} cannot be written as {arrow_type}: {exc}", column=name) from exc
