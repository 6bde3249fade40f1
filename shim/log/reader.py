"""Reading Hudi log files: locating blocks the way HoodieLogFileReader does, decoding data blocks.

A file is read once into memory and split into blocks without decoding their content; callers
decode only the blocks they keep (`decode_data_block`, `decode_delete_block`).

Block layout (big-endian): `#HUDI#` · blockLen(i64, bytes after this field) · formatVersion(i32)
· blockType(i32) · header · contentLen(i64) · content · footer · totalLen(i64, magic..footer).
A block is corrupt, as in Hudi, when its length runs past the end of the file, when the trailing
totalLen disagrees with blockLen, or when the bytes right after it are neither a magic nor the
end of the file; the reader then skips to the next magic and goes on. A block that passes those
checks but does not parse (a header running past it, a format version or block type Hudi never
wrote, a header that is not UTF-8) is a region too, one Hudi itself would fail on: readers
decide about both kinds (`shim.read.damage`). Every count and length read from the file is
bounded by the bytes that remain before it is used.
"""

from __future__ import annotations

import struct
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from shim.avro.decode import decode_records
from shim.avro.schema import avro_to_arrow_schema
from shim.errors import (
    UNDECODABLE,
    ColumnNotFoundError,
    CorruptFileError,
    HudiShimError,
    InvalidArgumentError,
    InvalidTableError,
    UnsupportedFeatureError,
    file_gone,
    is_missing_file,
)
from shim.log.blocks import LOG_FORMAT_VERSION, MAGIC, BlockType, HeaderKey, LogBlock, header_key
from shim.storage import Storage

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_AVRO_BLOCK_VERSIONS = (1, 2, 3)  # same layout: version, record count, length-prefixed records
_WRITTEN_TYPES = frozenset(t.value for t in BlockType if t is not BlockType.CORRUPT)  # CORRUPT: readers only


class CorruptBlockWarning(UserWarning):
    """A corrupt region of a log file (a partial write, garbage, a bad length) was skipped."""


@dataclass(frozen=True, slots=True)
class CorruptRegion:
    """Bytes of a log file that hold no readable block.

    Attributes:
        start: offset of the bad block's magic (or of the bytes where one should start).
        end: offset of the next magic, or the file size.
        reason: what is wrong, for messages.
        hudi_skips: True when the block fails Hudi's own corruption checks, so Hudi skips it (the
            torn tail of a failed append is the expected case); False when it passes them but
            does not parse, which Hudi's reader fails on.
    """

    start: int
    end: int
    reason: str
    hudi_skips: bool = True


@dataclass(frozen=True, slots=True)
class LogFileContents:
    """A log file's bytes and its blocks in file order, with the regions that hold no block."""

    path: str
    data: bytes
    blocks: tuple[LogBlock, ...]
    corrupt: tuple[CorruptRegion, ...] = ()

    @property
    def corrupt_regions(self) -> tuple[tuple[int, int], ...]:
        """`(start, end)` of each corrupt region."""
        return tuple((region.start, region.end) for region in self.corrupt)

    def raise_unreadable(self) -> None:
        """Raise for the first region Hudi would fail on (for readers that skip nothing else).

        Raises:
            CorruptFileError: naming the file and the region's offset.
        """
        region = next((r for r in self.corrupt if not r.hudi_skips), None)
        if region is not None:
            raise CorruptFileError(f"{self.path}: log block at byte offset {region.start} is malformed: "
                                   f"{region.reason}", path=self.path, offset=region.start)


class _Malformed(Exception):
    """A block passed Hudi's corruption checks but does not parse."""


def read_log_file(storage: Storage, path: str) -> LogFileContents:
    """Read a log file and locate its blocks (contents are not decoded).

    Raises:
        CorruptFileError: the file does not start with a block, or a block that passes Hudi's
            corruption checks is malformed inside.
        UnsupportedFeatureError: a block of a log format version or block type Hudi never wrote.
        FileGoneError: the file no longer exists (a clean or rollback removed it after it was listed).
    """
    try:
        data = storage.read_bytes(path)
    except OSError as exc:
        if is_missing_file(exc):
            raise file_gone(path) from exc
        raise CorruptFileError(f"cannot read log file {path}: {exc}", path=path) from exc
    return parse_log_bytes(data, path)


def parse_log_bytes(data: bytes, path: str) -> LogFileContents:
    """Locate the blocks of a log file already in memory; see `read_log_file`."""
    size = len(data)
    blocks: list[LogBlock] = []
    corrupt: list[CorruptRegion] = []
    pos = 0
    while size - pos >= len(MAGIC):  # fewer bytes left is Hudi's end of file
        if data[pos : pos + len(MAGIC)] != MAGIC:
            end = _next_magic(data, pos)
            corrupt.append(_region(path, pos, end, "no log block starts here", hudi_skips=False))
            pos = end
            continue
        body = pos + len(MAGIC)
        length = _java_int(_I64.unpack_from(data, body)[0]) if size - body >= 8 else None
        reason = "its length field is cut off" if length is None else _corruption(data, body + 8, length)
        if reason is not None:
            end = _next_magic(data, body)
            corrupt.append(_region(path, pos, end, reason, hudi_skips=True))
            pos = end
            continue
        assert length is not None
        end = body + 8 + length
        try:
            blocks.append(_parse_block(data, path, pos, body + 8, end))
        except _Malformed as exc:
            corrupt.append(_region(path, pos, end, str(exc), hudi_skips=False))
        pos = end
    return LogFileContents(path=path, data=data, blocks=tuple(blocks), corrupt=tuple(corrupt))


def _next_magic(data: bytes, start: int) -> int:
    found = data.find(MAGIC, start)
    return len(data) if found < 0 else found


def _region(path: str, start: int, end: int, reason: str, *, hudi_skips: bool) -> CorruptRegion:
    what = "corrupt" if hudi_skips else "malformed"
    warnings.warn(
        CorruptBlockWarning(f"{path}: {what} log block at byte offset {start} ({reason}); "
                            f"skipped {end - start} bytes to offset {end}"),
        stacklevel=3,
    )
    return CorruptRegion(start, end, reason, hudi_skips)


def _java_int(value: int) -> int:
    """Hudi reads the block and content lengths as longs and casts them to int."""
    return (value + 2**31) % 2**32 - 2**31


def _corruption(data: bytes, current: int, length: int) -> str | None:
    """Why Hudi's isBlockCorrupted would call the block at `current` corrupt; None if it is sound."""
    trailer = current + length - 8
    if trailer < 0 or trailer + 8 > len(data):
        return f"its length {length} runs past the end of the file"
    total = _I64.unpack_from(data, trailer)[0] - len(MAGIC)
    if total != length:
        return f"its length {length} disagrees with its trailing length {total}"
    after = current + length
    if len(data) - after >= len(MAGIC) and data[after : after + len(MAGIC)] != MAGIC:
        return "no block magic follows it"
    return None


class _Cursor:
    """Bounded big-endian reads inside one block; running past it raises `_Malformed`."""

    def __init__(self, data: bytes, pos: int, end: int) -> None:
        self.data, self.pos, self.end = data, pos, end

    def take(self, size: int, what: str) -> int:
        if size < 0 or self.pos + size > self.end:
            raise _Malformed(f"its {what} runs past the end of the block")
        start = self.pos
        self.pos += size
        return start

    def i32(self, what: str) -> int:
        return int(_I32.unpack_from(self.data, self.take(4, what))[0])

    def i64(self, what: str) -> int:
        return int(_I64.unpack_from(self.data, self.take(8, what))[0])

    def metadata(self, what: str) -> dict[HeaderKey | int, str]:
        entries: dict[HeaderKey | int, str] = {}
        count = self.i32(what)
        if count < 0 or count * 8 > self.end - self.pos:  # an entry takes at least its key and length
            raise _Malformed(f"its {what} announces {count} entries")
        for _ in range(count):
            key = header_key(self.i32(what))
            size = self.i32(what)
            start = self.take(size, what)
            if key in entries:
                raise _Malformed(f"its {what} holds key {int(key)} twice")
            try:
                entries[key] = self.data[start : start + size].decode("utf-8")
            except UnicodeDecodeError:
                raise _Malformed(f"its {what} entry {int(key)} is not UTF-8") from None
        return entries


def _parse_block(data: bytes, path: str, offset: int, pos: int, end: int) -> LogBlock:
    cursor = _Cursor(data, pos, end)
    version = cursor.i32("format version")
    if version != LOG_FORMAT_VERSION:
        raise _Malformed(f"log format version {version}; Hudi has only ever written version {LOG_FORMAT_VERSION}")
    type_id = cursor.i32("block type")
    if type_id not in _WRITTEN_TYPES:
        raise _Malformed(f"block type {type_id}, which Hudi never writes to a file")
    header = cursor.metadata("header")
    content_length = _java_int(cursor.i64("content length"))
    content_offset = cursor.take(content_length, "content")
    footer = cursor.metadata("footer")
    cursor.i64("trailing length")
    if cursor.pos != end:
        raise _Malformed(f"its parts end at {cursor.pos}, its length says {end}")
    return LogBlock(
        path=path,
        offset=offset,
        block_type=BlockType(type_id),
        header=header,
        footer=footer,
        content_offset=content_offset,
        content_length=content_length,
    )


def block_avro_schema(contents: LogFileContents, block: LogBlock) -> dict[str, Any]:
    """The writer's Avro schema of a data block (its SCHEMA header), parsed.

    Raises:
        CorruptFileError: the header is missing or is not an Avro schema, naming file and offset.
    """
    where = f"{contents.path}: {block.block_type.name} block at byte offset {block.offset}"
    try:
        schema = block.schema
    except InvalidTableError as exc:
        raise CorruptFileError(f"{where}: its SCHEMA header is not an Avro schema: {exc.message}",
                               path=contents.path, offset=block.offset) from exc
    if schema is None:
        raise CorruptFileError(f"{where} has no SCHEMA header", path=contents.path, offset=block.offset)
    return schema


def data_block_schema(contents: LogFileContents, block: LogBlock) -> pa.Schema:
    """Arrow schema of a data block's rows, without decoding them.

    Avro blocks: the SCHEMA header (the writer's schema) mapped to Arrow; Parquet blocks: the
    schema in the content's footer. Raises as `decode_data_block` does for other blocks.
    """
    where = f"{contents.path}: {block.block_type.name} block at byte offset {block.offset}"
    if block.block_type is BlockType.AVRO_DATA:
        schema = block_avro_schema(contents, block)
        try:
            return avro_to_arrow_schema(schema)
        except InvalidTableError as exc:
            raise CorruptFileError(f"{where}: its SCHEMA header is not an Avro schema: {exc.message}",
                                   path=contents.path, offset=block.offset) from exc
    if block.block_type is BlockType.PARQUET_DATA:
        stored = _parquet_file(contents, block, where).schema_arrow
        header = block_avro_schema(contents, block)
        try:
            declared = avro_to_arrow_schema(header)
        except InvalidTableError as exc:
            raise CorruptFileError(f"{where}: its SCHEMA header is not an Avro schema: {exc.message}",
                                   path=contents.path, offset=block.offset) from exc
        if _shape(declared) != _shape(stored):  # both are the writer's schema: a damaged footer
            raise CorruptFileError(f"{where}: the schema of its Parquet content ({stored.names}) is not "
                                   "the one its SCHEMA header declares", path=contents.path, offset=block.offset)
        return stored
    raise _not_a_data_block(block, where, contents.path)


def _shape(schema: pa.Schema | pa.DataType) -> object:
    """Names and kinds of values (not widths, units or zones) of a schema or type, to compare."""
    if isinstance(schema, pa.Schema):
        return tuple((f.name, _shape(f.type)) for f in schema)
    t = schema
    if pa.types.is_struct(t):
        return ("struct", tuple((t.field(i).name, _shape(t.field(i).type)) for i in range(t.num_fields)))
    if pa.types.is_map(t):
        return ("map", _shape(t.key_type), _shape(t.item_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return ("list", _shape(t.value_type))
    if pa.types.is_dictionary(t):
        return _shape(t.value_type)
    for kind, test in _KINDS:
        if test(t):
            return kind
    return str(t)


_KINDS = (("string", lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)),
          ("binary", lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)),
          ("integer", pa.types.is_integer), ("floating", pa.types.is_floating), ("decimal", pa.types.is_decimal),
          ("timestamp", pa.types.is_timestamp), ("date", pa.types.is_date), ("time", pa.types.is_time))


def decode_data_block(
    contents: LogFileContents, block: LogBlock, columns: Sequence[str] | None = None
) -> pa.Table:
    """Rows of an Avro or Parquet data block, projected to `columns` (schema order).

    Raises:
        UnsupportedFeatureError: an HFile block (metadata table), or a CDC block (change records,
            not table rows: skip them for snapshot reads).
        CorruptFileError: the content does not decode, or has an Avro content version Hudi
            never wrote.
        ColumnNotFoundError: a requested column is not in the block.
        InvalidArgumentError: the block holds no rows (command, delete, corrupt).
    """
    where = f"{contents.path}: {block.block_type.name} block at byte offset {block.offset}"
    if block.block_type is BlockType.AVRO_DATA:
        return _decode_avro(contents, block, columns, where)
    if block.block_type is BlockType.PARQUET_DATA:
        return _decode_parquet(contents, block, columns, where)
    raise _not_a_data_block(block, where, contents.path)


def _not_a_data_block(block: LogBlock, where: str, path: str) -> HudiShimError:
    if block.block_type is BlockType.HFILE:
        return UnsupportedFeatureError(
            f"{where} is an HFile data block (metadata table); hudi-shim does not read HFile blocks",
            feature="hfile-log-block",
            path=path,
        )
    if block.block_type is BlockType.CDC:
        return UnsupportedFeatureError(
            f"{where} holds change-data-capture records, not table rows; skip CDC blocks for snapshot reads",
            feature="cdc-log-block",
            path=path,
        )
    return InvalidArgumentError(f"{where} holds no rows to decode", path=path)


def _decode_avro(
    contents: LogFileContents, block: LogBlock, columns: Sequence[str] | None, where: str
) -> pa.Table:
    data, path = contents.data, contents.path
    pos, end = block.content_offset, block.content_offset + block.content_length

    def corrupt(what: str, offset: int = block.offset) -> CorruptFileError:
        return CorruptFileError(f"{where} is corrupt: {what}", path=path, offset=offset)

    if end - pos < 8:
        raise corrupt(f"its content of {end - pos} bytes is too short for a version and a record count")
    version, count = int(_I32.unpack_from(data, pos)[0]), int(_I32.unpack_from(data, pos + 4)[0])
    if version not in _AVRO_BLOCK_VERSIONS:
        raise corrupt(f"its Avro content version is {version}; Hudi writes versions 1-3")
    if count < 0 or count > (end - pos - 8) // 4:  # a record takes at least its 4-byte length
        raise corrupt(f"its record count {count} cannot fit in its {end - pos - 8} bytes of records")
    schema = block_avro_schema(contents, block)
    starts, ends = _record_bounds(data, pos + 8, end, count, corrupt)
    return decode_records(memoryview(data), starts, schema, columns, ends=ends, path=path)


def _record_bounds(data: bytes, pos: int, end: int, count: int,
                   corrupt: Callable[[str, int], CorruptFileError]) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of each of `count` length-prefixed records from `pos` (one Python step per
    record: the lengths chain); `count` is already bounded by the bytes before `end`."""
    try:
        sizes = _chained_sizes(data, pos, count)
    except struct.error:  # a length led outside the file: find the first bad record with checks
        sizes = _checked_sizes(data, pos, end, count)
    lengths = np.array(sizes, dtype=np.int64)
    starts = pos + 4 * np.arange(1, count + 1, dtype=np.int64) + np.cumsum(lengths) - lengths
    bad = np.flatnonzero((lengths < 0) | (starts + lengths > end))
    if bad.size:
        first = int(bad[0])
        at = int(starts[first]) - 4
        raise corrupt(f"record {first} at byte offset {at} runs past the end of the block", at)
    last = int(starts[-1] + lengths[-1]) if count else pos
    if last != end:  # Hudi writes nothing after the records: a smaller count would hide records
        raise corrupt(f"{end - last} bytes follow its {count} records", last)
    return starts, starts + lengths


def _chained_sizes(data: bytes, pos: int, count: int) -> list[int]:
    """The record lengths, read without checks (the caller checks them all at once)."""
    sizes = [0] * count
    unpack = _I32.unpack_from
    for i in range(count):
        size, = unpack(data, pos)
        sizes[i] = size
        pos += 4 + size
    return sizes


def _checked_sizes(data: bytes, pos: int, end: int, count: int) -> list[int]:
    """The record lengths up to the first record that does not start inside the block (-1)."""
    sizes = [0] * count
    unpack = _I32.unpack_from
    for i in range(count):
        if pos < 0 or pos + 4 > end:
            sizes[i] = -1
            break
        size, = unpack(data, pos)
        sizes[i] = size
        pos += 4 + size
    return sizes


def _parquet_file(contents: LogFileContents, block: LogBlock, where: str) -> pq.ParquetFile:
    content = memoryview(contents.data)[block.content_offset : block.content_offset + block.content_length]
    try:
        return pq.ParquetFile(pa.BufferReader(pa.py_buffer(content)), page_checksum_verification=True)
    except UNDECODABLE as exc:
        raise CorruptFileError(
            f"{where}: Parquet content does not decode: {exc}", path=contents.path, offset=block.offset
        ) from exc


def _decode_parquet(
    contents: LogFileContents, block: LogBlock, columns: Sequence[str] | None, where: str
) -> pa.Table:
    parquet = _parquet_file(contents, block, where)
    names = parquet.schema_arrow.names
    wanted = None
    if columns is not None:
        missing = [c for c in columns if c not in names]
        if missing:
            raise ColumnNotFoundError(
                f"column {missing[0]!r} is not in {where} (columns: {', '.join(names)})", column=missing[0]
            )
        wanted = [n for n in names if n in set(columns)]
    try:
        return parquet.read(columns=wanted)
    except UNDECODABLE as exc:
        raise CorruptFileError(
            f"{where}: Parquet content does not decode: {exc}", path=contents.path, offset=block.offset
        ) from exc
