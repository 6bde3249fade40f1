"""Avro data blocks encoded column-wise with numpy (same bytes as `shim.log.writer`).

`encode_avro_data_block` in `shim.log.writer` encodes row by row through fastavro, which costs
about 10 us a row. Records of flat schemas (primitive, logical and fixed fields, optionally
nullable) are encoded here a column at a time instead: every field yields, for each row, a run of
bytes (a union branch, a zig-zag varint, a length-prefixed string...), and the runs are
scattered into one buffer in row order, each record behind its 4-byte big-endian length. Nested
schemas fall back to the row-wise encoder.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shim.avro.schema import arrow_type_at, named_once, parse_avro_schema, union_branches
from shim.errors import ColumnNotFoundError, WriteError
from shim.log.blocks import BLOCK_CONTENT_VERSION, BlockType, HeaderKey, header_key
from shim.log.writer import Header, encode_avro_data_block, encode_block

_Part = tuple[np.ndarray, np.ndarray]  # (byte length of each row's run, the runs concatenated)
_I32 = struct.Struct(">i")


def encode_data_block(table: pa.Table, avro_schema: Mapping[str, Any], header: Header) -> bytes:
    """An AVRO_DATA block of `table`'s rows, byte-identical to `encode_avro_data_block`."""
    schema = parse_avro_schema(avro_schema)
    parts = _record_parts(table, schema)
    if parts is None:
        return encode_avro_data_block(table, avro_schema, header)
    n = table.num_rows
    sizes = np.zeros(n, dtype=np.int64)
    for lengths, _ in parts:
        sizes += lengths
    if n and int(sizes.max()) >= 2**31:
        raise WriteError("an Avro record is larger than 2 GiB")
    prefix = np.frombuffer(sizes.astype(">i4").tobytes(), dtype=np.uint8)
    content = _scatter([(np.full(n, 4, dtype=np.int64), prefix), *parts], n)
    body = _I32.pack(BLOCK_CONTENT_VERSION) + _I32.pack(n) + content.tobytes()
    schema_json = json.dumps(named_once(schema), separators=(",", ":"), ensure_ascii=False)
    full_header: dict[HeaderKey | int, str] = {header_key(int(k)): v for k, v in header.items()}
    full_header[HeaderKey.SCHEMA] = schema_json
    return encode_block(BlockType.AVRO_DATA, full_header, body)


def _scatter(parts: list[_Part], n: int) -> np.ndarray:
    totals = np.zeros(n, dtype=np.int64)
    for lengths, _ in parts:
        totals += lengths
    row_starts = np.concatenate(([0], np.cumsum(totals)[:-1])) if n else np.zeros(0, dtype=np.int64)
    out = np.empty(int(totals.sum()), dtype=np.uint8)
    within = np.zeros(n, dtype=np.int64)
    for lengths, data in parts:
        if len(data):
            src_starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            shift = np.repeat(row_starts + within - src_starts, lengths)
            out[shift + np.arange(len(data), dtype=np.int64)] = data
        within += lengths
    return out


def _record_parts(table: pa.Table, schema: dict[str, Any]) -> list[_Part] | None:
    parts: list[_Part] = []
    n = table.num_rows
    for field in schema["fields"]:
        name = str(field["name"])
        ftype = field["type"]
        null_index: int | None = None
        data_index: int | None = None
        branch = ftype
        if isinstance(ftype, list):
            if len(ftype) > 2:
                return None
            branch, null_index = union_branches(ftype, name)
            data_index = next(i for i, b in enumerate(ftype) if b != "null") if len(ftype) > (null_index is not None) else None
        arrow_type, _ = arrow_type_at(branch, name)
        encoder = _encoder(branch, arrow_type)
        if encoder is None:
            return None
        if name in table.column_names:
            column = table.column(name).combine_chunks()
            if not column.type.equals(arrow_type):
                try:
                    column = column.cast(arrow_type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise WriteError(f"column {name!r} cannot be written as {arrow_type}: {exc}", column=name) from exc
        else:
            column = pa.nulls(n, arrow_type)
        valid = _valid(column)
        if null_index is None and not valid.all():
            if name not in table.column_names:
                raise ColumnNotFoundError(f"column {name!r} is required by the Avro schema", column=name)
            raise WriteError(f"column {name!r} holds nulls but its Avro type is not nullable", column=name)
        if isinstance(ftype, list):
            if data_index is None:
                return None  # a union of "null" alone
            null_byte = _zigzag_byte(null_index if null_index is not None else 0)
            branch_bytes = np.where(valid, np.uint8(_zigzag_byte(data_index)), np.uint8(null_byte))
            parts.append((np.ones(n, dtype=np.int64), branch_bytes.astype(np.uint8)))
        parts.extend(encoder(column, valid))
    return parts


def _zigzag_byte(value: int) -> int:
    return (value << 1) ^ (value >> 63)


def _valid(column: pa.Array) -> np.ndarray:
    if column.null_count == 0:
        return np.ones(len(column), dtype=bool)
    return np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _encoder(branch: Any, arrow_type: pa.DataType) -> Any:
    kind = branch if isinstance(branch, str) else branch.get("type")
    if kind == "boolean":
        return _boolean
    if kind in ("int", "long"):
        return _integer
    if kind == "float":
        return lambda col, valid: [_fixed_width(col, valid, "<f4")]
    if kind == "double":
        return lambda col, valid: [_fixed_width(col, valid, "<f8")]
    if kind in ("string", "bytes") and not pa.types.is_decimal(arrow_type):
        return _binary
    if kind == "fixed":
        size = int(branch["size"])
        if pa.types.is_decimal(arrow_type):
            return lambda col, valid: [_decimal(col, valid, size)]
        return lambda col, valid: [_fixed_bytes(col, valid, size)]
    return None


def _boolean(column: pa.Array, valid: np.ndarray) -> list[_Part]:
    values = np.asarray(pc.fill_null(column, False).to_numpy(zero_copy_only=False), dtype=np.uint8)
    return [(valid.astype(np.int64), values[valid])]


def _integer(column: pa.Array, valid: np.ndarray) -> list[_Part]:
    storage = pa.int64() if column.type.bit_width == 64 else pa.int32()
    values = column.view(storage) if not pa.types.is_integer(column.type) else column
    numbers = np.asarray(pc.fill_null(values, 0).to_numpy(zero_copy_only=False), dtype=np.int64)[valid]
    return [_varints(numbers, valid)]


def _varints(numbers: np.ndarray, valid: np.ndarray) -> _Part:
    zigzag = ((numbers << 1) ^ (numbers >> 63)).view(np.uint64)
    count = np.ones(len(zigzag), dtype=np.int64)
    rest = zigzag >> np.uint64(7)
    while rest.any():
        count += rest > 0
        rest >>= np.uint64(7)
    width = int(count.max()) if len(count) else 1
    positions = np.arange(width, dtype=np.uint64)
    groups = ((zigzag[:, None] >> (positions * np.uint64(7))[None, :]) & np.uint64(0x7F)).astype(np.uint8)
    index = np.arange(width)[None, :]
    groups |= np.where(index < (count[:, None] - 1), np.uint8(0x80), np.uint8(0))
    data = groups[index < count[:, None]]
    lengths = np.zeros(len(valid), dtype=np.int64)
    lengths[valid] = count
    return lengths, data


def _fixed_width(column: pa.Array, valid: np.ndarray, dtype: str) -> _Part:
    values = np.asarray(pc.fill_null(column, 0).to_numpy(zero_copy_only=False)).astype(dtype)[valid]
    width = np.dtype(dtype).itemsize
    return valid.astype(np.int64) * width, np.frombuffer(values.tobytes(), dtype=np.uint8)


def _binary(column: pa.Array, valid: np.ndarray) -> list[_Part]:
    filled = pc.fill_null(column, b"" if pa.types.is_binary(column.type) else "")
    if pa.types.is_large_string(filled.type) or pa.types.is_large_binary(filled.type):
        filled = filled.cast(pa.binary())
    offsets = np.frombuffer(filled.buffers()[1], dtype=np.int32, count=len(filled) + 1, offset=filled.offset * 4)
    lengths = np.diff(offsets).astype(np.int64)
    lengths[~valid] = 0
    buffer = filled.buffers()[2]
    raw = np.frombuffer(buffer, dtype=np.uint8) if buffer is not None else np.zeros(0, dtype=np.uint8)
    if valid.all():
        data = raw[offsets[0]:offsets[-1]]
    else:
        starts = offsets[:-1].astype(np.int64)[valid]
        kept = lengths[valid]
        data = raw[np.repeat(starts - np.concatenate(([0], np.cumsum(kept)[:-1])), kept) + np.arange(kept.sum())]
    return [_varints(lengths[valid], valid), (lengths, data)]


def _fixed_bytes(column: pa.Array, valid: np.ndarray, size: int) -> _Part:
    raw = np.frombuffer(column.buffers()[1], dtype=np.uint8)[column.offset * size:(column.offset + len(column)) * size]
    rows = raw.reshape(len(column), size)[valid]
    return valid.astype(np.int64) * size, rows.reshape(-1)


def _decimal(column: pa.Array, valid: np.ndarray, size: int) -> _Part:
    width = column.type.byte_width
    raw = np.frombuffer(column.buffers()[1], dtype=np.uint8)[column.offset * width:(column.offset + len(column)) * width]
    big_endian = raw.reshape(len(column), width)[:, ::-1][valid]
    return valid.astype(np.int64) * size, np.ascontiguousarray(big_endian[:, width - size:]).reshape(-1)
