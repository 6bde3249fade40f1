"""Hudi's record-key bloom filter, as Hudi writes it into every base file's Parquet footer.

Type DYNAMIC_V0 (Hudi's default): rows of standard bloom filters, each taking up to `num_entries`
keys; a new row starts when one is full, until rows * num_entries reaches `max_entries`, after
which keys go to the rows in turn. A key sets `num_hashes` bits per row, from MurmurHash2 (32-bit,
Hadoop's variant) applied to its UTF-8 bytes again and again, each round seeded with the last
result. Serialized with Java's DataOutput (big-endian) and Base64, under the footer key
`org.apache.hudi.bloomfilter`, the type under `hoodie_bloom_filter_type_code`. Hudi's bloom index
and its metadata table read it (see `HoodieDynamicBoundedBloomFilter` in hudi-common).

Hashing is vectorised with numpy over all keys of one byte length at a time.
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

BLOOM_FILTER_KEY = b"org.apache.hudi.bloomfilter"
TYPE_CODE_KEY = b"hoodie_bloom_filter_type_code"
DYNAMIC_V0 = "DYNAMIC_V0"

NUM_ENTRIES = 60_000
"""Keys per filter row (`hoodie.index.bloom.num_entries`)."""
FPP = 0.000000001
"""False-positive probability a row is sized for (`hoodie.index.bloom.fpp`)."""
MAX_ENTRIES = 100_000
"""Keys after which no row is added (`hoodie.bloom.index.filter.dynamic.max.entries`)."""

_VERSION = -1
_MURMUR = 1  # Hadoop's hash type code of MurmurHash
_M = np.uint32(0x5BD1E995)
_MAX_HASHES = 1024  # Hudi sizes filters with a handful (ln 2 * bits per entry); more is a damaged footer
_CHUNK = 16_384


def bit_size(num_entries: int, fpp: float) -> int:
    """Bits of one row."""
    return math.ceil(num_entries * (-math.log(fpp) / (math.log(2) * math.log(2))))


def num_hashes(bits: int, num_entries: int) -> int:
    """Bits a key sets in a row."""
    return math.ceil(math.log(2) * bits / num_entries)


def dynamic_bloom_filter(keys: pa.Array, *, num_entries: int = NUM_ENTRIES, fpp: float = FPP,
                         max_entries: int = MAX_ENTRIES) -> str:
    """The serialized DYNAMIC_V0 filter of `keys` (strings, added in order), as Hudi writes it."""
    vector_size = bit_size(num_entries, fpp)
    hashes = num_hashes(vector_size, num_entries)
    rows, current = _rows_of(len(keys), num_entries, max_entries)
    row_count = int(rows.max()) + 1 if len(rows) else 1
    bits = np.zeros((row_count, vector_size), dtype=bool)
    # A chunk of keys at a time, so the hashing's working arrays stay in the CPU cache.
    for start in range(0, len(keys), _CHUNK):
        positions = positions_by_round(keys.slice(start, _CHUNK), hashes, vector_size)
        chunk_rows = rows[start:start + _CHUNK]
        if chunk_rows[0] == chunk_rows[-1] and (chunk_rows == chunk_rows[0]).all():
            bits[chunk_rows[0]][positions.ravel()] = True
        else:
            bits[chunk_rows[None, :], positions] = True
    return _serialized(hashes, vector_size, num_entries, current, list(bits))


def extended_bloom_filter(previous: str | bytes, added: pa.Array, total: int, *, num_entries: int = NUM_ENTRIES,
                          fpp: float = FPP) -> str | None:
    """The filter `dynamic_bloom_filter` gives for a file holding `total` keys: the keys of the
    file whose filter is `previous` plus `added` (updated keys may be among them, deleted ones
    may not). Only `added` is hashed. None when that result is not certain to be the same bytes:
    a `previous` of other settings or with more than one row, or more keys than one row takes
    (rows then depend on the order keys came in)."""
    try:
        parsed = DynamicBloomFilter.parse(previous)
    except (ValueError, struct.error):
        return None
    vector_size = bit_size(num_entries, fpp)
    if (len(parsed.rows) != 1 or parsed.num_entries != num_entries or parsed.vector_size != vector_size
            or parsed.num_hashes != num_hashes(vector_size, num_entries) or not 0 < total <= num_entries):
        return None
    bits = np.unpackbits(parsed.rows[0], count=vector_size, bitorder="little")  # 0/1 bytes: packs back as they are
    for start in range(0, len(added), _CHUNK):
        bits[positions_by_round(added.slice(start, _CHUNK), parsed.num_hashes, vector_size).ravel()] = 1
    return _serialized(parsed.num_hashes, vector_size, num_entries, total, [bits])


def _serialized(hashes: int, vector_size: int, num_entries: int, current: int, rows: Sequence[np.ndarray]) -> str:
    header = struct.pack(">iibi", _VERSION, hashes, _MURMUR, vector_size)
    parts = [header, struct.pack(">iii", num_entries, current, len(rows))]
    for row in rows:
        parts += [header, np.packbits(row, bitorder="little").tobytes()]
    return base64.b64encode(b"".join(parts)).decode("ascii")


def _rows_of(count: int, num_entries: int, max_entries: int) -> tuple[np.ndarray, int]:
    """The row each of `count` keys goes to, and the keys counted in the last row started."""
    full_rows = max(1, -(-max_entries // num_entries))  # rows once rows * num_entries >= max_entries
    index = np.arange(count, dtype=np.int64)
    rows = np.minimum(index // num_entries, full_rows - 1)
    spread = index >= full_rows * num_entries
    # The first key past the last row's capacity goes to row 0, the next ones to the rows in turn.
    turn = index[spread] - full_rows * num_entries
    rows[spread] = np.where(turn == 0, 0, (turn - 1) % full_rows)
    last_started = min((count - 1) // num_entries, full_rows - 1) * num_entries if count else 0
    return rows, count - last_started


def bit_positions(keys: pa.Array, hashes: int, vector_size: int) -> np.ndarray:
    """For each key, the `hashes` bits it sets: an (n, hashes) array."""
    return positions_by_round(keys, hashes, vector_size).T


def positions_by_round(keys: pa.Array, hashes: int, vector_size: int) -> np.ndarray:
    """The bits the keys set, round by round: a contiguous (hashes, n) array (flattened without
    a copy, to set them all at once)."""
    keys = keys.cast(pa.string()) if keys.type != pa.string() else keys
    if keys.null_count:
        raise ValueError("record keys must not be null")
    # A slice's offsets start `keys.offset` entries in; they point into the whole data buffer.
    offsets = np.frombuffer(keys.buffers()[1], dtype=np.int32, count=len(keys) + 1, offset=keys.offset * 4)
    data = np.frombuffer(keys.buffers()[2], dtype=np.uint8) if keys.buffers()[2] is not None else \
        np.zeros(0, np.uint8)
    lengths = np.diff(offsets)
    if len(keys) and lengths.min() == 0:
        raise ValueError("record keys must not be empty")
    if len(keys) and lengths.min() == lengths.max():
        # Keys of one length (the usual case) are rows of the data buffer as it is.
        length = int(lengths[0])
        matrix = data[offsets[0]:offsets[0] + len(keys) * length].reshape(len(keys), length)
        return _chained_murmur(matrix, hashes, vector_size)
    out = np.empty((hashes, len(keys)), dtype=np.uint32)
    for length in np.unique(lengths):
        chosen = np.flatnonzero(lengths == length)
        matrix = data[offsets[chosen][:, None] + np.arange(length)]
        out[:, chosen] = _chained_murmur(matrix, hashes, vector_size)
    return out


def _chained_murmur(keys: np.ndarray, hashes: int, vector_size: int) -> np.ndarray:
    """Hadoop's HashFunction over keys of one length (rows of a uint8 matrix): round i hashes the
    key seeded with round i-1's value (0 first); each value gives bit |value % vector_size|.
    Returns a (hashes, n) array."""
    count, length = keys.shape
    blocks = length // 4
    words = keys[:, : blocks * 4].reshape(count, blocks, 4).astype(np.uint32)
    # One contiguous row of mixed words per block (each round reads them in order).
    mixed = np.ascontiguousarray((words[:, :, 0] | words[:, :, 1] << 8 | words[:, :, 2] << 16
                                  | words[:, :, 3] << 24).T)
    size = np.uint32(vector_size)
    with np.errstate(over="ignore"):
        mixed *= _M
        mixed ^= mixed >> np.uint32(24)
        mixed *= _M
        tail = np.zeros(count, dtype=np.uint32)
        left = length - blocks * 4
        # Hadoop's variant: the last byte unshifted, the one before by 8 bits, the one before that
        # by 16; Java bytes are signed, so bytes above 127 spread ones into the high bits.
        signed = keys[:, blocks * 4:].view(np.int8).astype(np.int32)
        for i in range(left):
            tail ^= (signed[:, i] << (8 * (left - 1 - i))).astype(np.uint32)
        out = np.empty((hashes, count), dtype=np.uint32)
        h = np.zeros(count, dtype=np.uint32)  # the seed of each round: the last round's value
        shifted = np.empty(count, dtype=np.uint32)  # scratch: no array is allocated per pass
        quotient = np.empty(count, dtype=np.uint32)
        signed, magnitude = h.view(np.int32), shifted
        key_length = np.uint32(length)
        for round_ in range(hashes):
            h ^= key_length
            for block in mixed:
                h *= _M
                h ^= block
            if left:
                h ^= tail
                h *= _M
            np.right_shift(h, np.uint32(13), out=shifted)
            h ^= shifted
            h *= _M
            np.right_shift(h, np.uint32(15), out=shifted)
            h ^= shifted
            # Java's Math.abs(value % size) on the signed value is |value| % size; the absolute
            # value of -2**31 wraps to itself, whose unsigned reading is the right magnitude.
            # (Division by a constant is fast in numpy, remainder is not: a - (a // size) * size.)
            np.abs(signed, out=magnitude.view(np.int32))
            np.floor_divide(magnitude, size, out=quotient)
            quotient *= size
            np.subtract(magnitude, quotient, out=out[round_])
    return out


@dataclass(frozen=True)
class DynamicBloomFilter:
    """A parsed DYNAMIC_V0 filter, to test keys against (rows kept packed, 8 bits a byte)."""

    num_hashes: int
    vector_size: int
    num_entries: int
    current: int
    rows: tuple[np.ndarray, ...]

    @classmethod
    def parse(cls, text: str | bytes) -> DynamicBloomFilter:
        """Read a serialized filter (ValueError when it is not one)."""
        raw = base64.b64decode(text)
        if len(raw) < 25:
            raise ValueError(f"a bloom filter of {len(raw)} bytes is truncated")
        version, hashes, hash_type, vector_size = struct.unpack_from(">iibi", raw, 0)
        if version != _VERSION or hash_type != _MURMUR or vector_size <= 0 or hashes <= 0:
            raise ValueError(f"unsupported bloom filter (version {version}, hash type {hash_type})")
        if hashes > _MAX_HASHES or vector_size > 8 * len(raw):  # each hash costs a pass over the keys
            raise ValueError(f"a bloom filter of {hashes} hashes over {vector_size} bits is corrupt")
        num_entries, current, row_count = struct.unpack_from(">iii", raw, 13)
        offset, size, rows = 25, (vector_size + 7) // 8, []
        for _ in range(row_count):
            offset += 13
            if offset + size > len(raw):
                raise ValueError("bloom filter is truncated")
            rows.append(np.frombuffer(raw, np.uint8, size, offset))
            offset += size
        return cls(hashes, vector_size, num_entries, current, tuple(rows))

    @property
    def nbytes(self) -> int:
        return sum(row.nbytes for row in self.rows)

    def might_contain(self, key: str) -> bool:
        return self.might_contain_any([key])

    def might_contain_any(self, keys: Sequence[str]) -> bool:
        """False only when none of `keys` was added (a bloom filter has no false negatives)."""
        if not keys:
            return False
        bits = bit_positions(pa.array(list(keys), pa.string()), self.num_hashes, self.vector_size)
        for row in self.rows:
            held = (row[bits >> 3] >> (bits & 7).astype(np.uint8)) & 1
            if held.all(axis=1).any():
                return True
        return False
