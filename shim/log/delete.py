"""Delete blocks: the record keys a deltacommit deletes and their ordering values.

Content: version(i32) · length(i32) · payload. Version 3 (every Hudi since 0.11) is the Avro
record `HoodieDeleteRecordList {deleteRecordList: array<HoodieDeleteRecord>}` with
`HoodieDeleteRecord {recordKey: ["null", string], partitionPath: ["null", string], orderingVal}`.
`orderingVal` is a union of value wrappers, each a record with one field `value`:

    0 null, 1 BooleanWrapper, 2 IntWrapper, 3 LongWrapper, 4 FloatWrapper, 5 DoubleWrapper,
    6 BytesWrapper, 7 StringWrapper, 8 DateWrapper (int days), 9 DecimalWrapper (bytes,
    decimal(30, 15)), 10 TimeMicrosWrapper (long), 11 TimestampMicrosWrapper (long micros),
    12 ArrayWrapper {wrappedValues: array<[null, 1..11]>}  (several ordering fields, HUDI-9569)

Hudi 0.14/0.15 stop at 11; branch 12 was appended when Hudi 1.1 added multiple ordering fields,
so one schema reads both forms. Versions 1 and 2 are Java-serialized objects and cannot be read here.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa

from shim.errors import CorruptFileError, InvalidArgumentError, UnsupportedFeatureError
from shim.log.blocks import BlockType, LogBlock
from shim.log.reader import LogFileContents

_I32 = struct.Struct(">i")
_JAVA_SERIALIZATION_MAGIC = b"\xac\xed"  # what versions 1 and 2 hold after their length
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
DECIMAL_WRAPPER_TYPE = pa.decimal128(30, 15)


class Wrapper(enum.IntEnum):
    """Union branch of `orderingVal` (HoodieDeleteRecordList.avsc)."""

    NULL = 0
    BOOLEAN = 1
    INT = 2
    LONG = 3
    FLOAT = 4
    DOUBLE = 5
    BYTES = 6
    STRING = 7
    DATE = 8
    DECIMAL = 9
    TIME_MICROS = 10
    TIMESTAMP_MICROS = 11
    ARRAY = 12


WRAPPER_ARROW_TYPES: dict[Wrapper, pa.DataType] = {
    Wrapper.BOOLEAN: pa.bool_(),
    Wrapper.INT: pa.int32(),
    Wrapper.LONG: pa.int64(),
    Wrapper.FLOAT: pa.float32(),
    Wrapper.DOUBLE: pa.float64(),
    Wrapper.BYTES: pa.binary(),
    Wrapper.STRING: pa.string(),
    Wrapper.DATE: pa.date32(),
    Wrapper.DECIMAL: DECIMAL_WRAPPER_TYPE,
    Wrapper.TIME_MICROS: pa.time64("us"),
    Wrapper.TIMESTAMP_MICROS: pa.timestamp("us", tz="UTC"),
}


@dataclass(frozen=True, slots=True)
class DeleteRecords:
    """The keys a delete block removes.

    Attributes:
        record_keys: record key of each delete.
        partition_paths: partition path of each delete.
        ordering_values: one array per ordering field, typed from the wrappers Hudi wrote
            (IntWrapper -> int32, LongWrapper -> int64, ...). Null means the delete carries no
            ordering value: Hudi writes IntWrapper(0) (HoodieRecord.DEFAULT_ORDERING_VALUE) for
            those, and its mergers treat that value, or none, as commit-time ordering: the delete
            wins over the records before it whatever their ordering field
            (`OrderingValues.isCommitTimeOrderingValue`). That top-level int 0 is returned as null.
    """

    record_keys: pa.StringArray
    partition_paths: pa.StringArray
    ordering_values: tuple[pa.Array, ...]

    def __len__(self) -> int:
        return len(self.record_keys)


def decode_delete_block(contents: LogFileContents, block: LogBlock) -> DeleteRecords:
    """Decode the delete records of a DELETE block.

    Raises:
        UnsupportedFeatureError: content version 1 or 2 (Java-serialized; feature
            "delete-block-v1"/"delete-block-v2") or any version other than 3.
        CorruptFileError: the payload does not decode.
    """
    if block.block_type is not BlockType.DELETE:
        raise InvalidArgumentError(
            f"{block.path}: block at byte offset {block.offset} is a {block.block_type.name} block, not DELETE",
            path=block.path,
        )
    reader = _Reader(
        contents.data,
        contents.path,
        block.offset,
        block.content_offset,
        block.content_offset + block.content_length,
    )
    version = reader.i32()
    if version in (1, 2) and contents.data[reader.pos + 4 : reader.pos + 6] == _JAVA_SERIALIZATION_MAGIC:
        raise UnsupportedFeatureError(
            f"{contents.path}: delete block at byte offset {block.offset} has content version {version} "
            "(Java-serialized, written by old Hudi releases); only version 3 can be read. "
            "Compact the file group with Hudi first.",
            feature=f"delete-block-v{version}",
            path=contents.path,
        )
    if version != 3:
        raise reader.corrupt(f"content version {version}, which Hudi never wrote,")
    size = reader.i32()
    if reader.need(size) != reader.end:  # Hudi writes the payload and nothing after it
        raise reader.corrupt(f"a payload of {size} bytes in {reader.end - reader.pos} bytes of content")
    keys: list[str | None] = []
    partitions: list[str | None] = []
    orderings: list[tuple[Wrapper, Any]] = []
    for _ in reader.items():
        keys.append(reader.optional_string())
        partitions.append(reader.optional_string())
        orderings.append(reader.wrapped())
    if reader.pos != reader.end:
        raise reader.corrupt(f"{reader.end - reader.pos} bytes after the last delete")
    return DeleteRecords(
        record_keys=pa.array(keys, type=pa.string()),
        partition_paths=pa.array(partitions, type=pa.string()),
        ordering_values=_ordering_arrays(orderings, contents.path, block.offset),
    )


def _ordering_arrays(orderings: list[tuple[Wrapper, Any]], path: str, offset: int) -> tuple[pa.Array, ...]:
    rows: list[list[tuple[Wrapper, Any]] | None] = []
    for kind, value in orderings:
        if kind is Wrapper.NULL or (kind is Wrapper.INT and value == 0):
            rows.append(None)  # commit-time ordering
        elif kind is Wrapper.ARRAY:
            rows.append(value)
        else:
            rows.append([(kind, value)])
    width = max((len(r) for r in rows if r is not None), default=1)
    if any(r is not None and len(r) != width for r in rows):
        raise CorruptFileError(
            f"{path}: delete block at byte offset {offset} mixes deletes with different numbers of "
            "ordering values",
            path=path,
            offset=offset,
        )
    columns = []
    for i in range(width):
        cells = [None if r is None else r[i] for r in rows]
        kinds = {c[0] for c in cells if c is not None and c[0] is not Wrapper.NULL}
        if len(kinds) > 1:
            names = ", ".join(sorted(k.name for k in kinds))
            raise UnsupportedFeatureError(
                f"{path}: delete block at byte offset {offset} has ordering values of several types ({names})",
                feature="delete-ordering-mixed-types",
                path=path,
            )
        kind = kinds.pop() if kinds else Wrapper.INT
        values = [None if c is None or c[0] is Wrapper.NULL else c[1] for c in cells]
        columns.append(pa.array(values, type=WRAPPER_ARROW_TYPES[kind]))
    return tuple(columns)


class _Reader:
    """Avro binary reads over the delete payload, bounded by the block."""

    def __init__(self, data: bytes, path: str, block_offset: int, pos: int, end: int) -> None:
        self.data, self.path, self.block_offset, self.pos, self.end = data, path, block_offset, pos, end

    def corrupt(self, what: str) -> CorruptFileError:
        return CorruptFileError(
            f"{self.path}: delete block at byte offset {self.block_offset} is corrupt: {what} "
            f"at byte offset {self.pos}",
            path=self.path,
            offset=self.block_offset,
        )

    def need(self, size: int) -> int:
        if size < 0 or self.pos + size > self.end:
            raise self.corrupt(f"{size} bytes run past the end of the block")
        return self.pos + size

    def i32(self) -> int:
        end = self.need(4)
        value = int(_I32.unpack_from(self.data, self.pos)[0])
        self.pos = end
        return value

    def long(self) -> int:
        raw, shift = 0, 0
        while True:
            if self.pos >= self.end or shift >= 70:
                raise self.corrupt("a varint runs past the end")
            byte = self.data[self.pos]
            self.pos += 1
            raw |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return (raw >> 1) ^ -(raw & 1)

    def raw(self, size: int) -> bytes:
        end = self.need(size)
        value = self.data[self.pos : end]
        self.pos = end
        return value

    def items(self) -> Iterable[int]:
        """Yield once per item of an Avro array, reading its block headers."""
        index = 0
        while True:
            count = self.long()
            if count == 0:
                return
            if count < 0:
                count = -count
                self.long()  # block size in bytes
            if count > self.end - self.pos:
                raise self.corrupt(f"an array block of {count} items")
            for _ in range(count):
                yield index
                index += 1

    def branch(self, branches: int) -> int:
        index = self.long()
        if not 0 <= index < branches:
            raise self.corrupt(f"union branch {index}, which no Hudi release writes,")
        return index

    def optional_string(self) -> str | None:
        if self.branch(2) == 0:
            return None
        return self.string()

    def string(self) -> str:
        data = self.raw(self.long())
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise self.corrupt("a string that is not UTF-8") from None

    def wrapped(self, allow_array: bool = True) -> tuple[Wrapper, Any]:
        kind = Wrapper(self.branch(len(Wrapper) if allow_array else Wrapper.ARRAY))
        if kind is Wrapper.ARRAY:
            return kind, [self.wrapped(allow_array=False) for _ in self.items()]
        return kind, self.value(kind)

    def value(self, kind: Wrapper) -> Any:
        if kind is Wrapper.NULL:
            return None
        if kind is Wrapper.BOOLEAN:
            return self.raw(1) != b"\x00"
        if kind in (Wrapper.INT, Wrapper.LONG, Wrapper.DATE, Wrapper.TIME_MICROS, Wrapper.TIMESTAMP_MICROS):
            return self.long()
        if kind is Wrapper.FLOAT:
            return _F32.unpack(self.raw(4))[0]
        if kind is Wrapper.DOUBLE:
            return _F64.unpack(self.raw(8))[0]
        if kind is Wrapper.BYTES:
            return self.raw(self.long())
        if kind is Wrapper.STRING:
            return self.string()
        size = self.long()
        if size > 16:  # DecimalWrapper holds a decimal(30, 15): at most 16 bytes unscaled
            raise self.corrupt(f"a decimal of {size} bytes")
        unscaled = int.from_bytes(self.raw(size), "big", signed=True)
        digits = tuple(int(d) for d in str(abs(unscaled)))
        return Decimal((1 if unscaled < 0 else 0, digits, -DECIMAL_WRAPPER_TYPE.scale))


# -- writing --------------------------------------------------------------------------------


def encode_delete_payload(
    record_keys: Sequence[str | None],
    partition_paths: Sequence[str | None],
    ordering_values: Sequence[pa.Array],
    form: str = "union",
) -> bytes:
    """Avro `HoodieDeleteRecordList` of the deletes.

    Args:
        ordering_values: one array per ordering field; none writes Hudi's default IntWrapper(0).
        form: "union" writes the single ordering value as its wrapper (every Hudi release);
            "array" wraps the values of all ordering fields in an ArrayWrapper (Hudi 1.1+).
    """
    if len(record_keys) != len(partition_paths) or any(len(a) != len(record_keys) for a in ordering_values):
        raise ValueError("record keys, partition paths and ordering values must have the same length")
    if form not in ("union", "array"):
        raise ValueError(f"form must be 'union' or 'array', not {form!r}")
    if form == "union" and len(ordering_values) > 1:
        raise ValueError("the union form holds one ordering value; use form='array' for several")
    kinds = [_wrapper_of(a.type) for a in ordering_values]
    columns = [a.to_pylist() for a in _storage(ordering_values)]
    out = bytearray()
    if record_keys:
        _write_long(out, len(record_keys))
        for row, (key, partition) in enumerate(zip(record_keys, partition_paths, strict=True)):
            _write_optional_string(out, key)
            _write_optional_string(out, partition)
            cells = [(kind, column[row]) for kind, column in zip(kinds, columns, strict=True)]
            if form == "array":
                _write_long(out, Wrapper.ARRAY)
                if cells:
                    _write_long(out, len(cells))
                    for kind, value in cells:
                        _write_wrapped(out, kind, value)
                _write_long(out, 0)
            elif cells:
                _write_wrapped(out, *cells[0])
            else:
                _write_wrapped(out, Wrapper.INT, 0)
    _write_long(out, 0)
    return bytes(out)


def _wrapper_of(t: pa.DataType) -> Wrapper:
    if pa.types.is_boolean(t):
        return Wrapper.BOOLEAN
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return Wrapper.INT
    for kind, arrow_type in WRAPPER_ARROW_TYPES.items():
        if t.equals(arrow_type) or (pa.types.is_timestamp(t) and kind is Wrapper.TIMESTAMP_MICROS):
            return kind
    if pa.types.is_decimal(t):
        return Wrapper.DECIMAL
    if pa.types.is_large_string(t):
        return Wrapper.STRING
    raise UnsupportedFeatureError(
        f"no Hudi ordering value wrapper holds Arrow type {t}", feature="arrow-type"
    )


def _storage(arrays: Sequence[pa.Array]) -> list[pa.Array]:
    out = []
    for array in arrays:
        t = array.type
        if pa.types.is_timestamp(t):
            array = array.cast(pa.timestamp("us", tz=t.tz)).view(pa.int64())
        elif pa.types.is_date32(t) or t == pa.time64("us"):
            array = array.view(pa.int32() if pa.types.is_date32(t) else pa.int64())
        elif pa.types.is_decimal(t):
            array = array.cast(DECIMAL_WRAPPER_TYPE)
        out.append(array)
    return out


def _write_long(out: bytearray, value: int) -> None:
    raw = (value << 1) ^ (value >> 63)
    raw &= (1 << 64) - 1
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)


def _write_bytes(out: bytearray, data: bytes) -> None:
    _write_long(out, len(data))
    out += data


def _write_optional_string(out: bytearray, value: str | None) -> None:
    if value is None:
        _write_long(out, 0)
    else:
        _write_long(out, 1)
        _write_bytes(out, value.encode("utf-8"))


def _write_wrapped(out: bytearray, kind: Wrapper, value: Any) -> None:
    if value is None:
        _write_long(out, Wrapper.NULL)
        return
    _write_long(out, kind)
    if kind is Wrapper.BOOLEAN:
        out.append(1 if value else 0)
    elif kind is Wrapper.FLOAT:
        out += _F32.pack(value)
    elif kind is Wrapper.DOUBLE:
        out += _F64.pack(value)
    elif kind is Wrapper.BYTES:
        _write_bytes(out, value)
    elif kind is Wrapper.STRING:
        _write_bytes(out, value.encode("utf-8"))
    elif kind is Wrapper.DECIMAL:
        sign, digits, exponent = value.as_tuple()
        unscaled = int("".join(map(str, digits)) or "0") * 10 ** (exponent + DECIMAL_WRAPPER_TYPE.scale)
        unscaled = -unscaled if sign else unscaled
        magnitude = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
        _write_bytes(out, unscaled.to_bytes(magnitude // 8 + 1, "big", signed=True))
    else:
        _write_long(out, int(value))
