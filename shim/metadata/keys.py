"""The metadata table's record keys, built as Hudi builds them.

- `files`: the partition path (`.` for the non-partitioned table's partition), and
  `__all_partitions__` for the list of partitions.
- `column_stats`: `ColumnIndexID(column) + PartitionIndexID(partition) + FileIndexID(file name)`,
  `partition_stats`: `ColumnIndexID(column) + PartitionIndexID(partition)`, `bloom_filters`:
  `PartitionIndexID(partition) + FileIndexID(file name)`: each id is the Base64 (standard, padded)
  of a hash of the UTF-8 name: XXH64 with seed 0xdabadaba as 8 big-endian bytes for columns and
  partitions, MD5 for file names (Hudi's `HashID`).
- `record_index`: the record key; `secondary_index_*`: the secondary key and the record key,
  `$`-separated, with `\\` escaping `\\` and `$` in both.

Records go to the file group `(Java String.hashCode(key) mod groups)` of their partition
(`mapRecordKeyToFileGroupIndex`); secondary index records by their secondary key alone.
"""

from __future__ import annotations

import base64
import hashlib

ALL_PARTITIONS_KEY = "__all_partitions__"
NON_PARTITIONED_NAME = "."
_SEED = (-625288518) & 0xFFFFFFFFFFFFFFFF  # 0xdabadaba as a Java int widened to long
_M = 0xFFFFFFFFFFFFFFFF
_P1, _P2, _P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
_P4, _P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
_ESCAPE, _SEPARATOR = "\\", "$"


def partition_identifier(partition: str) -> str:
    """The name a data partition has in the metadata table (`.` for the table's one partition)."""
    return partition or NON_PARTITIONED_NAME


def data_partition(identifier: str) -> str:
    """The data table's partition path of a metadata table partition identifier."""
    return "" if identifier == NON_PARTITIONED_NAME else identifier


def column_id(column: str) -> str:
    """`ColumnIndexID(column).asBase64EncodedString()`."""
    return _b64(xxh64(column.encode("utf-8"), _SEED).to_bytes(8, "big"))


def partition_id(partition: str) -> str:
    """`PartitionIndexID(partition identifier).asBase64EncodedString()` of a data partition path."""
    return _b64(xxh64(partition_identifier(partition).encode("utf-8"), _SEED).to_bytes(8, "big"))


def file_id(file_name: str) -> str:
    """`FileIndexID(file name).asBase64EncodedString()`."""
    return _b64(hashlib.md5(file_name.encode("utf-8"), usedforsecurity=False).digest())


def column_stats_key(column: str, partition: str, file_name: str) -> str:
    """The `column_stats` key of one column of one file."""
    return column_id(column) + partition_id(partition) + file_id(file_name)


def partition_stats_key(column: str, partition: str) -> str:
    """The `partition_stats` key of one column of one partition."""
    return column_id(column) + partition_id(partition)


def bloom_filter_key(partition: str, file_name: str) -> str:
    """The `bloom_filters` key of a base file."""
    return partition_id(partition) + file_id(file_name)


def secondary_index_key(secondary_key: str, record_key: str) -> str:
    """A `secondary_index_*` key: both keys escaped, then joined by `$`."""
    return _escape(secondary_key) + _SEPARATOR + _escape(record_key)


def split_secondary_index_key(key: str) -> tuple[str, str]:
    """(secondary key, record key) of a `secondary_index_*` key."""
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for char in key:
        if escaped:
            current.append(char)
            escaped = False
        elif char == _ESCAPE:
            escaped = True
        elif char == _SEPARATOR and not parts:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if not parts:
        raise ValueError(f"secondary index key {key!r} has no unescaped {_SEPARATOR!r}")
    return parts[0], "".join(current)


def file_group_index(key: str, groups: int) -> int:
    """The file group (0-based) of a partition with `groups` file groups that holds `key`:
    `abs(abs(Java hashCode) % groups)`."""
    h = 0
    for unit in _utf16_units(key):
        h = (31 * h + unit) & 0xFFFFFFFF
    signed = h - (1 << 32) if h >= 1 << 31 else h
    if signed == -(1 << 31):  # Java's Math.abs leaves it negative; % keeps the dividend's sign
        return (1 << 31) % groups
    return abs(signed) % groups


def xxh64(data: bytes, seed: int) -> int:
    """XXH64 of `data` (the algorithm of lz4-java's `XXHash64`, which Hudi uses)."""
    n = len(data)
    pos = 0
    if n >= 32:
        v1, v2, v3, v4 = (seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed, (seed - _P1) & _M
        while pos + 32 <= n:
            v1 = _round(v1, int.from_bytes(data[pos:pos + 8], "little"))
            v2 = _round(v2, int.from_bytes(data[pos + 8:pos + 16], "little"))
            v3 = _round(v3, int.from_bytes(data[pos + 16:pos + 24], "little"))
            v4 = _round(v4, int.from_bytes(data[pos + 24:pos + 32], "little"))
            pos += 32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M
        for v in (v1, v2, v3, v4):
            h = ((h ^ _round(0, v)) * _P1 + _P4) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while pos + 8 <= n:
        h ^= _round(0, int.from_bytes(data[pos:pos + 8], "little"))
        h = (_rotl(h, 27) * _P1 + _P4) & _M
        pos += 8
    if pos + 4 <= n:
        h ^= (int.from_bytes(data[pos:pos + 4], "little") * _P1) & _M
        h = (_rotl(h, 23) * _P2 + _P3) & _M
        pos += 4
    while pos < n:
        h ^= (data[pos] * _P5) & _M
        h = (_rotl(h, 11) * _P1) & _M
        pos += 1
    h ^= h >> 33
    h = (h * _P2) & _M
    h ^= h >> 29
    h = (h * _P3) & _M
    return h ^ (h >> 32)


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M, 31) * _P1) & _M


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _escape(text: str) -> str:
    return text.replace(_ESCAPE, _ESCAPE + _ESCAPE).replace(_SEPARATOR, _ESCAPE + _SEPARATOR)


def _utf16_units(text: str) -> list[int]:
    raw = text.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(raw[i:i + 2], "big") for i in range(0, len(raw), 2)]
