"""Record positions in log block headers (`RECORD_POSITIONS`): the rows of the base file a block's
records update, as Hudi 1.x writes them.

The header is Base64 of a `Roaring64NavigableMap` in the portable format: the number of 32-bit
buckets (u64), then per bucket its high 32 bits (u32) and a 32-bit Roaring bitmap: a cookie
(12346, then the container count as u32; or 12347 with the count - 1 in its high 16 bits, then a
bitset of run containers), per container its 16-bit key and cardinality - 1, the containers'
offsets (omitted for a run cookie with fewer than 4 containers), then the containers: arrays of
u16, bitmaps of 1024 u64, or runs (a u16 count, then start and length - 1 per run). Everything
little-endian. Positions are in ascending order: the i-th record of the block is at the i-th.
"""

from __future__ import annotations

import base64
import binascii
import struct

import numpy as np

from shim.errors import CorruptFileError

_NO_RUNS = 12346
_WITH_RUNS = 12347
_NO_OFFSET_THRESHOLD = 4
_ARRAY_MAX = 4096


def decode_positions(text: str, path: str, offset: int) -> np.ndarray:
    """The ascending positions a `RECORD_POSITIONS` header holds (int64).

    Raises:
        CorruptFileError: the header does not decode, naming the file and the block's offset.
    """
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise _corrupt(path, offset, "is not Base64") from None
    reader = _Reader(raw, path, offset)
    buckets = reader.u64()
    if buckets > len(raw):  # a bucket takes bytes
        raise _corrupt(path, offset, f"announces {buckets} buckets in {len(raw)} bytes")
    parts = []
    for _ in range(buckets):
        high = reader.u32()
        parts.append((np.int64(high) << 32) | _bitmap32(reader))
    if reader.pos != len(raw):
        raise _corrupt(path, offset, f"has {len(raw) - reader.pos} bytes after its bitmap")
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def encode_positions(positions: np.ndarray) -> str:
    """The `RECORD_POSITIONS` header of ascending, distinct, non-negative `positions` (array and
    bitmap containers; Roaring's readers take either, runs are an optimization)."""
    values = np.asarray(positions, dtype=np.int64)
    highs = values >> 32
    buckets = np.unique(highs).tolist()
    out = bytearray(struct.pack("<Q", len(buckets)))
    for high in buckets:
        out += struct.pack("<I", high) + _bitmap32_bytes((values[highs == high] & 0xFFFFFFFF).astype(np.uint32))
    return base64.b64encode(bytes(out)).decode("ascii")


def _bitmap32_bytes(low: np.ndarray) -> bytes:
    keys = np.unique(low >> 16).tolist()
    containers = [low[(low >> 16) == key].astype(np.uint16) for key in keys]
    header = struct.pack("<II", _NO_RUNS, len(containers)) + b"".join(
        struct.pack("<HH", key, len(values) - 1) for key, values in zip(keys, containers, strict=True))
    bodies = [_container(values) for values in containers]
    offsets, position = [], len(header) + 4 * len(containers)  # from the bitmap's first byte
    for body in bodies:
        offsets.append(position)
        position += len(body)
    return header + struct.pack(f"<{len(offsets)}I", *offsets) + b"".join(bodies)


def _container(values: np.ndarray) -> bytes:
    if len(values) <= _ARRAY_MAX:
        return values.astype("<u2").tobytes()
    bits = np.zeros(65536, dtype=bool)
    bits[values] = True
    return np.packbits(bits, bitorder="little").tobytes()


def _bitmap32(reader: _Reader) -> np.ndarray:
    cookie = reader.u32()
    if cookie & 0xFFFF == _WITH_RUNS:
        count = (cookie >> 16) + 1
        flags = reader.take((count + 7) // 8)
        is_run = np.unpackbits(np.frombuffer(flags, dtype=np.uint8), bitorder="little")[:count].astype(bool)
    elif cookie == _NO_RUNS:
        count = reader.u32()
        is_run = np.zeros(count, dtype=bool)
    else:
        raise reader.corrupt(f"has a bitmap cookie {cookie} Roaring never writes")
    if count > reader.left() // 4:  # a container's key and cardinality take 4 bytes
        raise reader.corrupt(f"announces {count} containers")
    header = np.frombuffer(reader.take(4 * count), dtype="<u2").reshape(count, 2).astype(np.int64)
    keys, cardinalities = header[:, 0], header[:, 1] + 1
    if cookie == _NO_RUNS or count >= _NO_OFFSET_THRESHOLD:
        reader.take(4 * count)  # offsets: the containers follow in order anyway
    parts = []
    for key, cardinality, run in zip(keys.tolist(), cardinalities.tolist(), is_run.tolist(), strict=True):
        if run:
            runs = reader.u16()
            pairs = np.frombuffer(reader.take(4 * runs), dtype="<u2").reshape(runs, 2).astype(np.int64)
            if int((pairs[:, 1] + 1).sum()) != cardinality:  # checked before the runs are spelled out
                raise reader.corrupt(f"has runs that do not add up to the {cardinality} values its header says")
            low = np.concatenate([np.arange(s, s + n + 1) for s, n in pairs]) if runs else np.zeros(0, np.int64)
        elif cardinality <= _ARRAY_MAX:
            low = np.frombuffer(reader.take(2 * cardinality), dtype="<u2").astype(np.int64)
        else:
            bits = np.unpackbits(np.frombuffer(reader.take(8192), dtype=np.uint8), bitorder="little")
            low = np.flatnonzero(bits).astype(np.int64)
        if len(low) != cardinality:
            raise reader.corrupt(f"has a container of {len(low)} values where its header says {cardinality}")
        parts.append((key << 16) | low)
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


class _Reader:
    def __init__(self, data: bytes, path: str, offset: int) -> None:
        self.data, self.path, self.offset, self.pos = data, path, offset, 0

    def left(self) -> int:
        return len(self.data) - self.pos

    def take(self, size: int) -> bytes:
        if size < 0 or size > self.left():
            raise self.corrupt(f"runs out of bytes ({size} wanted, {self.left()} left)")
        start = self.pos
        self.pos += size
        return self.data[start:self.pos]

    def u16(self) -> int:
        return int(struct.unpack("<H", self.take(2))[0])

    def u32(self) -> int:
        return int(struct.unpack("<I", self.take(4))[0])

    def u64(self) -> int:
        return int(struct.unpack("<Q", self.take(8))[0])

    def corrupt(self, what: str) -> CorruptFileError:
        return _corrupt(self.path, self.offset, what)


def _corrupt(path: str, offset: int, what: str) -> CorruptFileError:
    return CorruptFileError(f"{path}: the RECORD_POSITIONS header of the log block at byte offset {offset} {what}",
                            path=path, offset=offset)
