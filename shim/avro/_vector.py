"""Vectorized readers of Avro binary primitives at many positions of one buffer at once.

Every reader takes the buffer as a uint8 array and an int64 array of positions (one per record
being decoded in lockstep) and returns the decoded values plus the positions after them. Reads
use `np.take(..., mode="clip")`, so malformed data can never index outside the buffer; the
caller detects it by checking that each record ends where its length says.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]

_MAX_VARINT_BYTES = 10
_SMALL = np.arange(128, dtype=np.int64)
_ZIGZAG_SMALL = (_SMALL >> 1) ^ -(_SMALL & 1)  # one-byte varints, decoded


class VarintTooLong(Exception):
    """A varint runs past 10 bytes; carries the index (into the positions) of the first one."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


def read_long(buf: U8, pos: I64) -> tuple[I64, I64]:
    """Zig-zag varints (Avro int, long, lengths, counts, union indexes) at `pos`."""
    first = np.take(buf, pos, mode="clip")
    more = first >= 0x80
    if not more.any():
        return _ZIGZAG_SMALL[first], pos + 1
    raw = (first & 0x7F).astype(np.uint64)
    nbytes = np.ones(pos.shape[0], dtype=np.int64)
    # Work on compact arrays of the still-open varints; write back the ones that end.
    open_rows = np.flatnonzero(more)
    cursor = pos[open_rows] + 1
    acc = raw[open_rows]
    for k in range(1, _MAX_VARINT_BYTES):
        byte = np.take(buf, cursor, mode="clip")
        acc |= (byte & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        ended = byte < 0x80
        if ended.all():
            raw[open_rows] = acc
            nbytes[open_rows] = k + 1
            open_rows = open_rows[:0]
            break
        if ended.any():
            raw[open_rows[ended]] = acc[ended]
            nbytes[open_rows[ended]] = k + 1
            still = ~ended
            open_rows, cursor, acc = open_rows[still], cursor[still], acc[still]
        cursor += 1
    if open_rows.size:
        raise VarintTooLong(int(open_rows[0]))
    value = (raw >> np.uint64(1)).astype(np.int64) ^ -((raw & np.uint64(1)).astype(np.int64))
    return value, pos + nbytes


def skip_long(buf: U8, pos: I64) -> I64:
    """Positions after the varints at `pos`."""
    first = np.take(buf, pos, mode="clip")
    more = first >= 0x80
    if not more.any():
        return pos + 1
    nbytes = np.ones(pos.shape[0], dtype=np.int64)
    active = np.flatnonzero(more)
    for _ in range(_MAX_VARINT_BYTES - 1):
        if not active.size:
            return pos + nbytes
        byte = np.take(buf, pos[active] + nbytes[active], mode="clip")
        nbytes[active] += 1
        active = active[byte >= 0x80]
    if active.size:
        raise VarintTooLong(int(active[0]))
    return pos + nbytes


def read_fixed(buf: U8, pos: I64, size: int) -> U8:
    """`size` bytes at each position, as a (len(pos), size) array."""
    if size == 0 or pos.shape[0] == 0:
        return np.zeros((pos.shape[0], size), dtype=np.uint8)
    index = pos[:, None] + np.arange(size, dtype=np.int64)
    return np.take(buf, index, mode="clip")


def read_float32(buf: U8, pos: I64) -> npt.NDArray[np.float32]:
    """Little-endian IEEE floats at `pos`."""
    return _unaligned(buf, "<f4", pos)


def read_float64(buf: U8, pos: I64) -> npt.NDArray[np.float64]:
    """Little-endian IEEE doubles at `pos`."""
    return _unaligned(buf, "<f8", pos)


def _unaligned(buf: U8, dtype: str, pos: I64) -> np.ndarray:
    """Values of `dtype` starting at any byte offset (a view with a one-byte stride)."""
    size = np.dtype(dtype).itemsize
    if buf.shape[0] < size or pos.shape[0] == 0:
        return np.ascontiguousarray(read_fixed(buf, pos, size)).view(dtype).reshape(-1)
    view = np.ndarray(shape=(buf.shape[0] - size + 1,), dtype=dtype, buffer=buf, strides=(1,))
    return view[np.clip(pos, 0, view.shape[0] - 1)]


def gather_ranges(buf: U8, starts: I64, lengths: I64) -> U8:
    """The byte ranges `[starts[i], starts[i] + lengths[i])` concatenated in order."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.uint8)
    dtype = np.int32 if buf.shape[0] < 2**31 - 1 else np.int64
    before = np.cumsum(lengths, dtype=dtype) - lengths.astype(dtype)
    index = np.repeat((starts.astype(dtype) - before), lengths)
    index += np.arange(total, dtype=dtype)
    return np.take(buf, index, mode="clip")


def binary_from_ranges(
    buffer: pa.Buffer, starts: I64, lengths: I64, ascending: bool = False
) -> pa.Array | None:
    """A binary array of the byte ranges of `buffer`, copied by Arrow; None unless they ascend.

    Ranges that follow each other in the buffer (each starting at or after the previous one's
    end) are the odd elements of an array whose even elements are the gaps between them, so
    Arrow's filter kernel copies them with one memcpy each. `ascending` skips the check when the
    caller knows.
    """
    count = starts.shape[0]
    ends = starts + lengths
    if not ascending and count > 1 and bool((starts[1:] < ends[:-1]).any()):
        return None
    wide = buffer.size >= 2**31 - 1
    offsets = np.empty(2 * count + 1, dtype=np.int64 if wide else np.int32)
    offsets[0] = 0
    offsets[1::2] = starts
    offsets[2::2] = ends
    spans = pa.Array.from_buffers(
        pa.large_binary() if wide else pa.binary(), 2 * count, [None, pa.py_buffer(offsets), buffer]
    )
    odd = pa.Array.from_buffers(pa.bool_(), 2 * count, [None, pa.py_buffer(b"\xaa" * ((2 * count + 7) // 8))])
    picked = spans.filter(odd)
    return picked.cast(pa.binary()) if wide else picked


def big_endian_to_decimal(buf: U8, pos: I64, lengths: I64, width: int) -> tuple[U8, Mask]:
    """Big-endian two's complement integers (Avro decimals) as little-endian `width`-byte integers.

    Returns:
        The (len(pos), width) little-endian bytes, and a mask of values too wide to fit.
    """
    count = pos.shape[0]
    out = np.zeros((count, width), dtype=np.uint8)
    overflow = np.zeros(count, dtype=np.bool_)
    if count == 0:
        return out, overflow
    first = np.take(buf, pos, mode="clip")
    negative = (first >= 0x80) & (lengths > 0)
    out[negative] = 0xFF
    longest = int(lengths.max())
    for j in range(min(longest, width)):
        has = lengths > j
        out[has, j] = np.take(buf, pos[has] + lengths[has] - 1 - j, mode="clip")
    if longest > width:
        # Extra leading bytes are fine only as sign extension of the value that fits.
        sign = np.where(out[:, width - 1] >= 0x80, 0xFF, 0x00).astype(np.uint8)
        for j in range(width, longest):
            has = lengths > j
            byte = np.take(buf, pos[has] + lengths[has] - 1 - j, mode="clip")
            overflow[has] |= byte != sign[has]
    return out, overflow


def validity_bitmap(valid: Mask) -> U8:
    """Arrow validity bitmap (LSB first) of a boolean mask."""
    return np.packbits(valid, bitorder="little")
