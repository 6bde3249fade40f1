"""Reading Hudi log files: locating blocks the way HoodieLogFileReader does, decoding data blocks.

A file is read once into memory and split into blocks without decoding their content; callers
decode only the blocks they keep (`decode_data_block`, `decode_delete_block`).

Block layout (big-endian): `#HUDI#` · blockLen(i64, bytes after this field) · formatVersion(i32)
· blockType(i32) · header · contentLen(i64) · content · footer · totalLen(i64, magic..footer).
A block is corrupt, as in Hudi, when its length runs past the end of the file, when the trailing
totalLen disagrees with blockLen, or when the bytes right after it are neither a magic nor the
end of the file; the reader then skips to the next magic and goes on.
"""

from __future__ import annotations

import struct
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from shim import storage
from shim.avro.decode import decode_records
from shim.avro.schema import avro_to_arrow_schema
from shim.errors import (
    ColumnNotFoundError,
    CorruptFileError,
    HudiShimError,
    InvalidArgumentError,
    UnsupportedFeatureError,
    file_gone,
    is_missing_file,
)
from shim.log.blocks import LOG_FORMAT_VERSION, MAGIC, BlockType, HeaderKey, LogBlock, header_key

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_AVRO_BLOCK_VERSIONS = (1, 2, 3)  # same layout: version, record count, length-prefixed records


class CorruptBlockWarning(UserWarning):
    """A corrupt region of a log file (a partial write, garbage, a bad length) was skipped."""


@dataclass(frozen=True, slots=True)
class LogFileContents:
    """A log file's bytes and its blocks in file order.

    Attributes:
        corrupt_regions: `(start, end)` byte ranges skipped as corrupt; `start` is the offset of the
            bad block's magic, `end` that of the next magic (or the file size).
        corrupt_reasons: why each region is corrupt, in the same order.
    """

    path: str
    data: bytes
    blocks: tuple[LogBlock, ...]
    corrupt_regions: tuple[tuple[int, int], ...] = ()
    corrupt_reasons: tuple[str, ...] = ()


def read_log_file(path: str) -> LogFileContents:
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
    corrupt: list[tuple[int, int]] = []
    reasons: list[str] = []
    pos = 0
    while size - pos >= len(MAGIC):  # fewer bytes left is Hudi's end of file
        if data[pos : pos + len(MAGIC)] != MAGIC:
            raise CorruptFileError(
                f"{path}: no log block starts at byte offset {pos} (Hudi cannot read this file either)",
                path=path,
                offset=pos,
            )
        body = pos + len(MAGIC)
        length = _java_int(_I64.unpack_from(data, body)[0]) if size - body >= 8 else None
        reason = "its length field is cut off" if length is None else _corruption(data, body + 8, length)
        if reason is not None:
            next_magic = data.find(MAGIC, body)
            end = size if next_magic < 0 else next_magic
            warnings.warn(
                CorruptBlockWarning(
                    f"{path}: corrupt log block at byte offset {pos} ({reason}); "
                    f"skipped {end - pos} bytes to offset {end}"
                ),
                stacklevel=2,
            )
            corrupt.append((pos, end))
            reasons.append(reason)
            pos = end
            continue
        assert length is not None
        block = _parse_block(data, path, pos, body + 8, body + 8 + length)
        blocks.append(block)
        pos = body + 8 + length
    return LogFileContents(path=path, data=data, blocks=tuple(blocks), corrupt_regions=tuple(corrupt),
                           corrupt_reasons=tuple(reasons))


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
    """Bounded big-endian reads inside one block."""

    def __init__(self, data: bytes, path: str, block_offset: int, pos: int, end: int) -> None:
        self.data, self.path, self.block_offset, self.pos, self.end = data, path, block_offset, pos, end

    def take(self, size: int, what: str) -> int:
        if size < 0 or self.pos + size > self.end:
            raise CorruptFileError(
                f"{self.path}: log block at byte offset {self.block_offset} is malformed: its {what} "
                f"runs past the end of the block",
                path=self.path,
                offset=self.block_offset,
            )
        start = self.pos
        self.pos += size
        return start

    def i32(self, what: str) -> int:
        return int(_I32.unpack_from(self.data, self.take(4, what))[0])

    def i64(self, what: str) -> int:
        return int(_I64.unpack_from(self.data, self.take(8, what))[0])

    def metadata(self, what: str) -> dict[HeaderKey | int, str]:
        entries: dict[HeaderKey | int, str] = {}
        for _ in range(max(self.i32(what), 0)):
            key = self.i32(what)
            size = self.i32(what)
            start = self.take(size, what)
            entries[header_key(key)] = self.data[start : start + size].decode("utf-8", errors="replace")
        return entries


def _parse_block(data: bytes, path: str, offset: int, pos: int, end: int) -> LogBlock:
    cursor = _Cursor(data, path, offset, pos, end)
    version = cursor.i32("format version")
    if version != LOG_FORMAT_VERSION:
        raise UnsupportedFeatureError(
            f"{path}: log block at byte offset {offset} has log format version {version}; "
            f"only version {LOG_FORMAT_VERSION} (every Hudi release since 0.5) can be read",
            feature=f"log-format-version-{version}",
            path=path,
        )
    type_id = cursor.i32("block type")
    if type_id not in BlockType._value2member_map_:
        raise UnsupportedFeatureError(
            f"{path}: log block at byte offset {offset} has unknown block type {type_id}",
            feature=f"log-block-type-{type_id}",
            path=path,
        )
    header = cursor.metadata("header")
    content_length = _java_int(cursor.i64("content length"))
    content_offset = cursor.take(content_length, "content")
    footer = cursor.metadata("footer")
    cursor.i64("trailing length")
    if cursor.pos != end:
        raise CorruptFileError(
            f"{path}: log block at byte offset {offset} is malformed: its parts end at {cursor.pos}, "
            f"its length says {end}",
            path=path,
            offset=offset,
        )
    return LogBlock(
        path=path,
        offset=offset,
        block_type=BlockType(type_id),
        header=header,
        footer=footer,
        content_offset=content_offset,
        content_length=content_length,
    )


def data_block_schema(contents: LogFileContents, block: LogBlock) -> pa.Schema:
    """Arrow schema of a data block's rows, without decoding them.

    Avro blocks: the SCHEMA header (the writer's schema) mapped to Arrow; Parquet blocks: the
    schema in the content's footer. Raises as `decode_data_block` does for other blocks.
    """
    where = f"{contents.path}: {block.block_type.name} block at byte offset {block.offset}"
    if block.block_type is BlockType.AVRO_DATA:
        schema = block.schema
        if schema is None:
            raise CorruptFileError(f"{where} has no SCHEMA header", path=contents.path, offset=block.offset)
        return avro_to_arrow_schema(schema)
    if block.block_type is BlockType.PARQUET_DATA:
        return _parquet_file(contents, block, where).schema_arrow
    raise _not_a_data_block(block, where, contents.path)


def decode_data_block(
    contents: LogFileContents, block: LogBlock, columns: Sequence[str] | None = None
) -> pa.Table:
    """Rows of an Avro or Parquet data block, projected to `columns` (schema order).

    Raises:
        UnsupportedFeatureError: an HFile block (metadata table), a CDC block (change records,
            not table rows: skip them for snapshot reads), or an Avro content version Hudi never wrote.
        CorruptFileError: the content does not decode.
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
    cursor = _Cursor(
        data, path, block.offset, block.content_offset, block.content_offset + block.content_length
    )
    version = cursor.i32("content version")
    if version not in _AVRO_BLOCK_VERSIONS:
        raise UnsupportedFeatureError(
            f"{where} has Avro content version {version}; versions 1-3 can be read",
            feature=f"avro-block-version-{version}",
            path=path,
        )
    count = cursor.i32("record count")
    if count < 0:
        raise CorruptFileError(f"{where} has a negative record count {count}", path=path, offset=block.offset)
    schema = block.schema
    if schema is None:
        raise CorruptFileError(f"{where} has no SCHEMA header", path=path, offset=block.offset)
    starts, ends = _record_bounds(cursor, count)
    return decode_records(memoryview(data), starts, schema, columns, ends=ends, path=path)


def _record_bounds(cursor: _Cursor, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of each length-prefixed record (one Python step per record: the lengths chain)."""
    try:
        sizes = _chained_sizes(cursor.data, cursor.pos, count)
    except struct.error:  # a length led outside the file: find the first bad record with checks
        sizes = _checked_sizes(cursor, count)
    lengths = np.array(sizes, dtype=np.int64)
    starts = cursor.pos + 4 * np.arange(1, count + 1, dtype=np.int64) + np.cumsum(lengths) - lengths
    bad = np.flatnonzero((lengths < 0) | (starts + lengths > cursor.end))
    if bad.size:
        first = int(bad[0])
        raise CorruptFileError(
            f"{cursor.path}: Avro data block at byte offset {cursor.block_offset} is corrupt: record {first} "
            f"at byte offset {int(starts[first]) - 4} runs past the end of the block",
            path=cursor.path,
            offset=int(starts[first]) - 4,
        )
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


def _checked_sizes(cursor: _Cursor, count: int) -> list[int]:
    """The record lengths up to the first record that does not start inside the block (-1)."""
    data, pos, end = cursor.data, cursor.pos, cursor.end
    sizes = [0] * count
    unpack = _I32.unpack_from
    for i in range(count):
        if pos + 4 > end:
            sizes[i] = -1
            break
        size, = unpack(data, pos)
        sizes[i] = size
        pos += 4 + size
    return sizes


def _parquet_file(contents: LogFileContents, block: LogBlock, where: str) -> pq.ParquetFile:
    content = memoryview(contents.data)[block.content_offset : block.content_offset + block.content_length]
    try:
        return pq.ParquetFile(pa.BufferReader(pa.py_buffer(content)))
    except (pa.ArrowInvalid, OSError) as exc:
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
    except (pa.ArrowInvalid, OSError) as exc:
        raise CorruptFileError(
            f"{where}: Parquet content does not decode: {exc}", path=contents.path, offset=block.offset
        ) from exc
