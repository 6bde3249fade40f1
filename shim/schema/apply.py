"""Execute a ReadPlan on Arrow data: the per-batch half of schema reconciliation.

`apply` runs on every batch of every file, so it does no per-row Python: unchanged columns
are passed through (zero-copy), renames and reorders rebuild only the struct/list/map
wrappers around the same child buffers, and conversions are Arrow compute kernels.

The output has exactly the plan's schema (`internal_to_arrow(query)`): column order, names,
types and the `PARQUET:field_id` field metadata. Input may name list items `array`, `item`
or `element` and map entries `key_value` or `entries` (Parquet writers differ); child names
are matched exactly, then case-insensitively. Types are matched strictly: a column whose
Arrow type does not fit its file schema type is an error, apart from representations of the
same type (timestamp units, large/view strings, integer widths, dictionary encoding).
"""

from __future__ import annotations

from typing import TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from shim.errors import SchemaEvolutionError, UnsupportedFeatureError
from shim.schema import casts, promote
from shim.schema.arrow import arrow_primitive_to_internal, primitive_to_arrow
from shim.schema.reconcile import FieldPlan, ListPlan, MapPlan, Node, PrimitivePlan, ReadPlan, StructPlan
from shim.schema.types import (
    BINARY,
    DATE,
    INT,
    LOCAL_TIMESTAMP_MICROS,
    LOCAL_TIMESTAMP_MILLIS,
    LONG,
    STRING,
    TIMESTAMP,
    TIMESTAMP_MILLIS,
    UUID,
    DecimalType,
    FixedType,
    PrimitiveType,
    VectorType,
)

_TIMESTAMPS = (TIMESTAMP, TIMESTAMP_MILLIS, LOCAL_TIMESTAMP_MICROS, LOCAL_TIMESTAMP_MILLIS)

Data = TypeVar("Data", pa.RecordBatch, pa.Table)


def apply(data: Data, plan: ReadPlan) -> Data:
    """Turn a batch or table with a file's columns into the plan's query schema.

    Raises:
        SchemaEvolutionError: a column the plan reads is missing from `data`, or holds an
            Arrow type that does not fit the file schema.
    """
    ctx = _Context(plan.file_path)
    if isinstance(data, pa.RecordBatch):
        arrays = [_column(data, c, ctx) for c in plan.columns]
        return pa.RecordBatch.from_arrays(arrays, schema=plan.schema)
    columns = []
    for c in plan.columns:
        if c.source is None:
            columns.append(pa.chunked_array([pa.nulls(data.num_rows, c.arrow_field.type)]))
            continue
        chunked = data.column(_index(data.schema, c.source, c.name, ctx))
        chunks = [ctx.convert(chunk, c.node, c.name) for chunk in chunked.chunks]
        columns.append(pa.chunked_array(chunks, type=c.arrow_field.type))
    return pa.Table.from_arrays(columns, schema=plan.schema)


def _column(batch: pa.RecordBatch, column: FieldPlan, ctx: _Context) -> pa.Array:
    if column.source is None:
        return pa.nulls(batch.num_rows, column.arrow_field.type)
    array = batch.column(_index(batch.schema, column.source, column.name, ctx))
    return ctx.convert(array, column.node, column.name)


def _index(schema: pa.Schema | pa.StructType, name: str, path: str, ctx: _Context) -> int:
    index = schema.get_field_index(name)
    if index >= 0:
        return index
    names = [
        schema.field(i).name
        for i in range(len(schema) if isinstance(schema, pa.Schema) else schema.num_fields)
    ]
    matches = [i for i, n in enumerate(names) if n.lower() == name.lower()]
    if len(matches) == 1:
        return matches[0]
    raise ctx.error(path, f"the data has no column '{name}' (it has {', '.join(names)})")


def _same_layout(a: pa.DataType, b: pa.DataType) -> bool:
    """Equal types apart from list/map child names, nullability and metadata (`view` is valid)."""
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        # Struct children keep their names: a view must never relabel one child as another.
        return a.num_fields == b.num_fields and all(
            a.field(i).name == b.field(i).name and _same_layout(a.field(i).type, b.field(i).type)
            for i in range(a.num_fields)
        )
    if pa.types.is_map(a) and pa.types.is_map(b):
        return _same_layout(a.key_type, b.key_type) and _same_layout(a.item_type, b.item_type)
    if pa.types.is_list(a) and pa.types.is_list(b):
        return _same_layout(a.value_type, b.value_type)
    return bool(a == b)


class _Context:
    def __init__(self, file_path: str | None) -> None:
        self.file_path = file_path

    def error(self, column: str, problem: str) -> SchemaEvolutionError:
        where = f"file {self.file_path}" if self.file_path else "the file"
        return SchemaEvolutionError(
            f"Cannot read column '{column}' of {where}: {problem}; the file's schema does not "
            "describe its data (check the schema resolved for its commit instant)",
            path=self.file_path,
            column=column,
        )

    def convert(self, arr: pa.Array, node: Node | None, path: str) -> pa.Array:
        assert node is not None
        target = node.arrow_type
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        if node.identity:
            if arr.type == target:
                return arr
            if _same_layout(arr.type, target):
                return arr.view(target)
        if isinstance(node, PrimitivePlan):
            return self._primitive(arr, node, path)
        if isinstance(node, StructPlan):
            return self._struct(arr, node, path)
        if isinstance(node, ListPlan):
            return self._list(arr, node, path)
        return self._map(arr, node, path)

    def _primitive(self, arr: pa.Array, node: PrimitivePlan, path: str) -> pa.Array:
        if isinstance(node.query_type, VectorType):  # a vector's bytes, whatever the file's schema says
            return self._vector(arr, node.query_type, node.arrow_type, path)
        arr = self._normalize(arr, node.file_type, path)
        out = promote.convert(arr, node.file_type, node.query_type)
        return out if out.type == node.arrow_type else pc.cast(out, node.arrow_type)

    def _normalize(self, arr: pa.Array, file_type: PrimitiveType, path: str) -> pa.Array:
        """`arr` as the canonical Arrow type of `file_type`, if it is a form of that type."""
        canonical = primitive_to_arrow(file_type)
        if arr.type == canonical:
            return arr
        if isinstance(file_type, VectorType):
            return self._vector(arr, file_type, canonical, path)
        try:
            held = arrow_primitive_to_internal(arr.type, path)
        except UnsupportedFeatureError:
            held = None
        fits = held is not None and (
            held == file_type
            or promote.conversion(held, file_type)
            in (promote.Conversion.PRECISION, promote.Conversion.REINTERPRET)
            or (held in (INT, LONG) and file_type in (INT, LONG))
            or (
                isinstance(held, DecimalType)
                and isinstance(file_type, DecimalType)
                and held.scale == file_type.scale
            )
            or (file_type == UUID and held == STRING)
            or (isinstance(file_type, FixedType) and held == BINARY)
            or (file_type == BINARY and isinstance(held, FixedType))
            or (file_type == DATE and pa.types.is_date(arr.type))
            or (file_type in _TIMESTAMPS and pa.types.is_timestamp(arr.type))
        )
        if not fits:
            raise self.error(path, f"it holds Arrow type {arr.type} but its schema type is {file_type}")
        try:
            return pc.cast(arr, canonical, safe=not pa.types.is_temporal(arr.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise self.error(path, f"its {arr.type} values do not fit {file_type}: {exc}") from exc

    def _vector(self, arr: pa.Array, file_type: VectorType, canonical: pa.DataType, path: str) -> pa.Array:
        """A VECTOR column as stored: Hudi's bytes (Parquet binary, Avro fixed), or a list of its
        elements (Arrow-native writers)."""
        kind = arr.type
        try:
            if pa.types.is_fixed_size_binary(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
                return casts.bytes_to_vector(arr, canonical, file_type.byte_size)
            if (pa.types.is_fixed_size_list(kind) or pa.types.is_list(kind) or pa.types.is_large_list(kind)) \
                    and kind.value_type == canonical.value_type:
                return pc.cast(arr, canonical)
        except (ValueError, pa.ArrowInvalid) as exc:
            raise self.error(path, f"its {kind} values are no {file_type}: {exc}") from exc
        raise self.error(path, f"it holds Arrow type {kind} but its schema type is {file_type}")

    def _struct(self, arr: pa.Array, node: StructPlan, path: str) -> pa.Array:
        if not pa.types.is_struct(arr.type):
            raise self.error(path, f"it holds Arrow type {arr.type} but its schema type is a struct")
        children = []
        for f in node.fields:
            child_path = f"{path}.{f.name}"
            if f.source is None:
                children.append(pa.nulls(len(arr), f.arrow_field.type))
                continue
            child = arr.field(_index(arr.type, f.source, child_path, self))
            children.append(self.convert(child, f.node, child_path))
        fields = [node.arrow_type.field(i) for i in range(node.arrow_type.num_fields)]
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)

    def _list(self, arr: pa.Array, node: ListPlan, path: str) -> pa.Array:
        if pa.types.is_large_list(arr.type) or pa.types.is_list_view(arr.type):
            arr = pc.cast(arr, pa.list_(arr.type.value_field))
        if not pa.types.is_list(arr.type):
            raise self.error(path, f"it holds Arrow type {arr.type} but its schema type is an array")
        values = self.convert(arr.values, node.element, f"{path}.element")
        return _rewrap(arr, node.arrow_type, [values])

    def _map(self, arr: pa.Array, node: MapPlan, path: str) -> pa.Array:
        if not pa.types.is_map(arr.type):
            raise self.error(path, f"it holds Arrow type {arr.type} but its schema type is a map")
        target = node.arrow_type
        keys = self.convert(arr.keys, node.key, f"{path}.key")
        items = self.convert(arr.items, node.value, f"{path}.value")
        entries = pa.StructArray.from_arrays([keys, items], fields=[target.key_field, target.item_field])
        return _rewrap(arr, target, [entries])


def _rewrap(arr: pa.Array, target: pa.DataType, children: list[pa.Array]) -> pa.Array:
    """A list/map of `target` type over `arr`'s validity and offsets and new (whole) children."""
    buffers = arr.buffers()
    return pa.Array.from_buffers(
        target, len(arr), buffers[:2], null_count=arr.null_count, offset=arr.offset, children=children
    )
