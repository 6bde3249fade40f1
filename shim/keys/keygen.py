"""Record keys and partition paths, built from column values as Hudi's key generators build them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from shim.errors import InvalidArgumentError

NULL_KEY_PART = "__null__"
EMPTY_KEY_PART = "__empty__"
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
# Characters Hudi's PartitionPathEncodeUtils.escapePathName escapes.
_UNSAFE = "\"#%'*/:=?\\\x7f{[]^"


def key_columns(data: pa.Table | pa.RecordBatch, fields: Iterable[str]) -> dict[str, pa.Array]:
    """The columns of `data` by name, plus every nested field among `fields` (`a.b`, Hudi's dotted
    path into struct columns) as its own column: null where the field or any parent is null.

    Raises:
        InvalidArgumentError: a field is neither a column nor a path into a struct column.
    """
    columns: dict[str, pa.Array] = {name: data.column(name) for name in data.column_names}
    for field in fields:
        if field in columns or "." not in field:
            continue
        head, *rest = field.split(".")
        if head not in columns:
            raise InvalidArgumentError(f"the data has no column {head!r} (for the key field {field!r})",
                                       column=field)
        value = columns[head]
        value = value.combine_chunks() if isinstance(value, pa.ChunkedArray) else value
        for part in rest:
            if not pa.types.is_struct(value.type) or value.type.get_field_index(part) < 0:
                raise InvalidArgumentError(f"the data has no field {field!r}: {part!r} is not in {value.type}",
                                           column=field)
            value = pc.struct_field(value, part)
        columns[field] = value
    return columns


def record_keys(columns: Mapping[str, pa.Array], fields: Sequence[str]) -> pa.Array:
    """String record keys: the value of a single key field, else `f1:v1,f2:v2`.

    Null and empty parts of composite keys read `__null__` / `__empty__`. A null single-field key
    comes back null (callers decide whether that is an error).
    """
    if len(fields) == 1:
        return _text(columns[fields[0]])
    parts = []
    for name in fields:
        text = _text(columns[name])
        text = pc.if_else(pc.equal(text, ""), EMPTY_KEY_PART, text)
        parts.append(pc.binary_join_element_wise(name, pc.fill_null(text, NULL_KEY_PART), ":"))
    return pc.binary_join_element_wise(*parts, ",")


def partition_paths(
    columns: Mapping[str, pa.Array],
    fields: Sequence[str],
    *,
    hive_style: bool,
    url_encode: bool,
    num_rows: int,
    formatted: Mapping[str, pa.Array] | None = None,
) -> pa.Array:
    """Partition path of every row ("" for non-partitioned tables).

    `formatted`: values of some fields already turned into partition values (the TIMESTAMP
    fields of timestamp-based and custom key generators), used as they are."""
    if not fields:
        return pa.array([""] * num_rows, pa.string())
    segments = []
    for name in fields:
        given = formatted.get(name) if formatted else None
        text = _text(columns[name]) if given is None else given
        if url_encode:
            text = pa.array([None if v is None else _escape(v) for v in text.to_pylist()], pa.string())
        if given is None:
            text = pc.fill_null(pc.if_else(pc.equal(text, ""), DEFAULT_PARTITION, text), DEFAULT_PARTITION)
        segments.append(pc.binary_join_element_wise(f"{name}=", text, "") if hive_style else text)
    if len(segments) == 1:
        return segments[0]
    return pc.binary_join_element_wise(*segments, "/")


def _escape(value: str) -> str:
    return "".join(f"%{ord(ch):02X}" if ch in _UNSAFE or ord(ch) < 0x20 else ch for ch in value)


def _text(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_timestamp(column.type) or pa.types.is_date(column.type):
        # Avro-style values: key generators see the stored long/int, not a formatted date.
        column = column.cast(pa.int64() if pa.types.is_timestamp(column.type) else pa.int32())
    return column.cast(pa.string())
