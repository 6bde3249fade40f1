"""HFile version 3, the layout Hudi reads: block headers, the trailer, file info, index entries.

Layout (see Apache Hudi's `hudi-io/hfile_format.md`): data blocks, meta blocks, the "load-on-open"
section (root data index block, meta index block, file info block) and a 4096-byte trailer. A
block is an 8-byte magic, onDiskSizeWithoutHeader (i32, data and checksums), uncompressed size
without header (i32), the previous block's offset (i64), checksum type (u8), bytes per checksum
(i32), onDiskDataSizeWithHeader (i32), then the (compressed) data and the checksums. Numbers are
big-endian. The trailer and the file info are length-delimited protobuf messages; index entry key
lengths are Hadoop `WritableUtils` variable-length integers.

Every count and length read from a file is checked against the bytes that remain before it is
used; a violation raises `Corrupt`, which the reader turns into `CorruptFileError` naming the
file and the byte offset.
"""

from __future__ import annotations

import enum
import struct
import zlib
from dataclasses import dataclass

HEADER_SIZE = 33
"""Block header: magic, two sizes, previous offset, checksum type, bytes per checksum, data size."""
TRAILER_SIZE = 4096
"""The version 3 trailer's fixed size, at the end of every HFile."""
MAX_GZIP_RATIO = 1100
"""Deflate expands at most ~1032-fold: a block claiming more than this is corrupt (no allocation)."""

_TRAILER_REQUIRED = (2, 5, 6, 7)
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class Corrupt(Exception):
    """Bytes that do not follow the layout, at a byte offset of the file."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(reason)
        self.offset = offset
        self.reason = reason


class BlockType(enum.Enum):
    """Block types by magic (HBase's `BlockType`); Hudi writes DATA, META, ROOT_INDEX, FILE_INFO."""

    DATA = b"DATABLK*"
    ENCODED_DATA = b"DATABLKE"
    LEAF_INDEX = b"IDXLEAF2"
    BLOOM_CHUNK = b"BLMFBLK2"
    META = b"METABLKc"
    INTERMEDIATE_INDEX = b"IDXINTE2"
    ROOT_INDEX = b"IDXROOT2"
    FILE_INFO = b"FILEINF2"
    GENERAL_BLOOM_META = b"BLMFMET2"
    DELETE_FAMILY_BLOOM_META = b"DFBLMET2"
    TRAILER = b'TRABLK"$'
    INDEX_V1 = b"IDXBLK)+"


_BY_MAGIC = {t.value: t for t in BlockType}


class Codec(enum.IntEnum):
    """Compression codec ordinals of the trailer (HBase's `Compression.Algorithm`)."""

    LZO = 0
    GZ = 1
    NONE = 2
    SNAPPY = 3
    LZ4 = 4
    BZIP2 = 5
    ZSTD = 6


READABLE_CODECS = (Codec.NONE, Codec.GZ)
"""What Hudi writes (`hoodie.hfile.compression.algorithm`: GZ by default, or NONE) and reads."""


@dataclass(frozen=True, slots=True)
class Trailer:
    """The trailer's fields (`TrailerProto`) and the file's version."""

    major_version: int
    minor_version: int
    file_info_offset: int
    load_on_open_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator: str
    codec: int


@dataclass(frozen=True, slots=True)
class BlockHeader:
    """A block's header; `data_length` excludes the checksums that follow the data."""

    block_type: BlockType
    offset: int
    on_disk_size: int  # header, data and checksums: the block's extent in the file
    uncompressed_size: int
    checksum_type: int
    data_length: int


def i16(buf: bytes, pos: int, end: int, base: int) -> int:
    """A big-endian int16 at `pos`, which must end by `end` (`base`: file offset of buf[0])."""
    need(pos, 2, end, base, "a 2-byte length")
    return int(_I16.unpack_from(buf, pos)[0])


def i32(buf: bytes, pos: int, end: int, base: int) -> int:
    """A big-endian int32 at `pos`."""
    need(pos, 4, end, base, "a 4-byte integer")
    return int(_I32.unpack_from(buf, pos)[0])


def i64(buf: bytes, pos: int, end: int, base: int) -> int:
    """A big-endian int64 at `pos`."""
    need(pos, 8, end, base, "an 8-byte integer")
    return int(_I64.unpack_from(buf, pos)[0])


def need(pos: int, length: int, end: int, base: int, what: str) -> None:
    """Check that `length` bytes from `pos` lie before `end`."""
    if length < 0 or pos + length > end:
        raise Corrupt(base + pos, f"{what} of {length} bytes runs past the end of its section "
                                  f"({max(end - pos, 0)} bytes remain)")


def length(value: int, pos: int, end: int, base: int, what: str) -> int:
    """A length read from the file: not negative, and no more than the bytes that remain."""
    if value < 0 or value > end - pos:
        raise Corrupt(base + pos, f"{what} {value} is negative or longer than the "
                                  f"{max(end - pos, 0)} bytes that remain")
    return value


def vlong(buf: bytes, pos: int, end: int, base: int) -> tuple[int, int]:
    """A Hadoop `WritableUtils` variable-length long: (value, position after it)."""
    need(pos, 1, end, base, "a variable-length integer")
    first = buf[pos] - 256 if buf[pos] > 127 else buf[pos]
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = -(first + 120) if negative else -(first + 112)
    need(pos + 1, size, end, base, "a variable-length integer")
    value = int.from_bytes(buf[pos + 1:pos + 1 + size], "big")
    return (~value if negative else value), pos + 1 + size


def pb_varint(buf: bytes, pos: int, end: int, base: int) -> tuple[int, int]:
    """A protobuf varint (at most 10 bytes): (value, position after it)."""
    value = shift = 0
    for index in range(10):
        need(pos + index, 1, end, base, "a protobuf varint")
        byte = buf[pos + index]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos + index + 1
        shift += 7
    raise Corrupt(base + pos, "a protobuf varint longer than 10 bytes")


def pb_fields(buf: bytes, pos: int, end: int, base: int) -> list[tuple[int, int | bytes]]:
    """The fields of a protobuf message in `buf[pos:end]`: (number, varint or bytes); fixed
    32- and 64-bit fields come back as their bytes."""
    fields: list[tuple[int, int | bytes]] = []
    while pos < end:
        at = pos
        tag, pos = pb_varint(buf, pos, end, base)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise Corrupt(base + at, "protobuf field number 0")
        if wire == 0:
            value, pos = pb_varint(buf, pos, end, base)
            fields.append((number, value))
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            need(pos, size, end, base, "a fixed-size protobuf field")
            fields.append((number, bytes(buf[pos:pos + size])))
            pos += size
        elif wire == 2:
            size, pos = pb_varint(buf, pos, end, base)
            length(size, pos, end, base, "protobuf field length")
            fields.append((number, bytes(buf[pos:pos + size])))
            pos += size
        else:
            raise Corrupt(base + pos, f"protobuf wire type {wire} (field {number}), which HFiles never hold")
    return fields


def parse_trailer(tail: bytes, file_size: int) -> Trailer:
    """Parse the trailer: the last `TRAILER_SIZE` bytes of a file of `file_size` bytes."""
    base = file_size - len(tail)
    if file_size < TRAILER_SIZE or len(tail) != TRAILER_SIZE:
        raise Corrupt(0, f"{file_size} bytes: shorter than the {TRAILER_SIZE}-byte HFile trailer")
    version = int.from_bytes(tail[-4:], "big")
    major, minor = version & 0x00FFFFFF, version >> 24
    if tail[:8] != BlockType.TRAILER.value:
        raise Corrupt(base, f"no trailer magic {BlockType.TRAILER.value!r} {TRAILER_SIZE} bytes before the end")
    if major != 3:
        raise Corrupt(file_size - 4, f"HFile major version {major}; Hudi writes and reads version 3")
    size, pos = pb_varint(tail, 8, TRAILER_SIZE - 4, base)
    length(size, pos, TRAILER_SIZE - 4, base, "trailer message length")
    values = {number: value for number, value in pb_fields(tail, pos, pos + size, base) if isinstance(value, int)}
    missing = [number for number in _TRAILER_REQUIRED if number not in values]
    if missing:
        raise Corrupt(base + 8, f"the trailer lacks fields {missing} (load-on-open offset, index and entry counts), "
                                "which HFile writers always write")
    comparator = next((v.decode("utf-8", "replace") for n, v in pb_fields(tail, pos, pos + size, base)
                       if n == 11 and isinstance(v, bytes)), "")
    return Trailer(
        major_version=major, minor_version=minor,
        file_info_offset=values.get(1, 0), load_on_open_offset=values.get(2, 0),
        uncompressed_data_index_size=values.get(3, 0), total_uncompressed_bytes=values.get(4, 0),
        data_index_count=values.get(5, 0), meta_index_count=values.get(6, 0), entry_count=values.get(7, 0),
        data_index_levels=values.get(8, 1), first_data_block_offset=values.get(9, 0),
        last_data_block_offset=values.get(10, 0), comparator=comparator,
        codec=values.get(12, int(Codec.NONE)),
    )


def parse_header(buf: bytes, pos: int, end: int, base: int) -> BlockHeader:
    """The header of the block at `buf[pos]` (file offset `base + pos`); the block must end by
    `end` (the section or index entry it lies in)."""
    need(pos, HEADER_SIZE, end, base, "a block header")
    magic = bytes(buf[pos:pos + 8])
    block_type = _BY_MAGIC.get(magic)
    if block_type is None:
        raise Corrupt(base + pos, f"unknown block magic {magic!r}")
    on_disk_without_header = i32(buf, pos + 8, end, base)
    uncompressed = i32(buf, pos + 12, end, base)
    checksum_type = buf[pos + 24]
    data_with_header = i32(buf, pos + 29, end, base)
    length(on_disk_without_header, pos + HEADER_SIZE, end, base, "block size on disk")
    if not HEADER_SIZE <= data_with_header <= HEADER_SIZE + on_disk_without_header:
        raise Corrupt(base + pos + 29, f"block data size with header {data_with_header} is outside "
                                       f"[{HEADER_SIZE}, {HEADER_SIZE + on_disk_without_header}]")
    if uncompressed < 0:
        raise Corrupt(base + pos + 12, f"negative uncompressed block size {uncompressed}")
    if checksum_type not in (0, 1, 2):
        raise Corrupt(base + pos + 24, f"unknown checksum type {checksum_type}")
    return BlockHeader(block_type, base + pos, HEADER_SIZE + on_disk_without_header, uncompressed,
                       checksum_type, data_with_header - HEADER_SIZE)


def block_data(buf: bytes, pos: int, header: BlockHeader, codec: int, base: int) -> bytes:
    """The uncompressed data of the block whose header is at `buf[pos]`."""
    start = pos + HEADER_SIZE
    raw = buf[start:start + header.data_length]
    if codec == Codec.NONE:
        if header.uncompressed_size > header.data_length:
            raise Corrupt(base + pos + 12, f"uncompressed block size {header.uncompressed_size} exceeds its "
                                           f"{header.data_length} bytes of data")
        return bytes(raw[:header.uncompressed_size])
    if codec != Codec.GZ:
        raise Corrupt(base + pos, f"codec {codec}")  # (the reader refuses other codecs up front)
    if header.uncompressed_size > MAX_GZIP_RATIO * header.data_length + 1024:
        raise Corrupt(base + pos + 12, f"uncompressed block size {header.uncompressed_size} is more than gzip can "
                                       f"expand {header.data_length} bytes to")
    inflater = zlib.decompressobj(wbits=47)  # a gzip (or zlib) stream
    try:
        data = inflater.decompress(bytes(raw), header.uncompressed_size + 1)
    except zlib.error as exc:
        raise Corrupt(base + start, f"gzip data does not inflate: {exc}") from None
    if len(data) != header.uncompressed_size or not inflater.eof:
        raise Corrupt(base + start, f"gzip data inflates to {len(data)}{'' if inflater.eof else '+'} bytes, "
                                    f"not the {header.uncompressed_size} its header says")
    return data
