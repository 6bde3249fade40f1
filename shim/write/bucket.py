"""Hudi's simple bucket index: record key -> bucket number -> file group, with no lookup.

`BucketIdentifier.getBucketId` hashes the index key values as Java's `List<String>.hashCode()`
(`h = 1; h = 31 * h + s.hashCode()` per value, `String.hashCode` over UTF-16 code units, 32-bit
wrap-around), then takes `(h & Integer.MAX_VALUE) % numBuckets`. The values come from the record
key string: a key without `:` is the single value; otherwise it is split into `field:value`
pairs on `,` and `:` and the index key fields are looked up in it (a missing field hashes as
null, 0). A bucket's file id is the 8-digit bucket number, then the rest of a UUID, then `-0`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shim.errors import WriteError

_MASK32 = 0xFFFFFFFF
_FILE_ID_NAMESPACE = uuid.UUID("6f1c1f0e-8d0b-4f43-9a3e-0c5b3f0d6a11")


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode()` as a signed 32-bit int."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _MASK32
    return _signed(h)


def java_list_hash(values: Sequence[str | None]) -> int:
    """Java's `List<String>.hashCode()` as a signed 32-bit int (null elements hash as 0)."""
    h = 1
    for value in values:
        h = (31 * h + (0 if value is None else java_string_hash(value))) & _MASK32
    return _signed(h)


def _signed(h: int) -> int:
    return h - (1 << 32) if h & 0x80000000 else h


def hash_key_values(record_key: str, index_fields: Sequence[str]) -> list[str | None]:
    """The values Hudi hashes for one record key (`BucketIdentifier.getHashKeys`).

    Raises:
        WriteError: the key contains `:` but is not a `field:value` list (Hudi fails there too).
    """
    if ":" not in record_key:
        return [record_key]
    pairs: dict[str, str] = {}
    for part in record_key.split(","):
        pieces = part.split(":")
        while len(pieces) > 1 and pieces[-1] == "":  # Java's split drops trailing empty strings
            pieces.pop()
        if len(pieces) < 2 or pieces[0] in pairs:
            raise WriteError(
                f"record key {record_key!r} contains ':' but is not a list of field:value pairs; "
                "Hudi's bucket index cannot hash it (avoid ':' and ',' in key values)"
            )
        pairs[pieces[0]] = pieces[1]
    return [pairs.get(name) for name in index_fields]


def bucket_of_key(record_key: str, index_fields: Sequence[str], num_buckets: int) -> int:
    """The bucket of one record key."""
    h = java_list_hash(hash_key_values(record_key, index_fields))
    return (h & 0x7FFFFFFF) % num_buckets


def bucket_ids(record_keys: pa.Array | pa.ChunkedArray, index_fields: Sequence[str], num_buckets: int) -> np.ndarray:
    """Bucket of every record key (int32 array), vectorised for keys without `:`.

    Raises:
        WriteError: a key is null, or a `:`-key cannot be parsed as Hudi parses it.
    """
    if num_buckets <= 0:
        raise WriteError(f"hoodie.bucket.index.num.buckets must be positive, got {num_buckets}")
    keys = record_keys.combine_chunks() if isinstance(record_keys, pa.ChunkedArray) else record_keys
    keys = keys.cast(pa.string())
    if keys.null_count:
        raise WriteError("a record key is null; every record needs a non-null record key field value")
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int32)
    hashes = _string_hashes(keys)  # uint32 String.hashCode of each key
    lists = (np.uint32(31) + hashes).astype(np.uint32)  # List.of(key).hashCode()
    if _has_byte(keys, b":"):  # composite keys (`name:value,...`) are hashed as Hudi parses them
        colon = pc.match_substring(keys, ":").to_numpy(zero_copy_only=False)
        for index in np.flatnonzero(colon):
            value = keys[int(index)].as_py()
            lists[index] = np.uint32(java_list_hash(hash_key_values(value, index_fields)) & _MASK32)
    return ((lists & np.uint32(0x7FFFFFFF)) % np.uint32(num_buckets)).astype(np.int32)


def _has_byte(keys: pa.StringArray, byte: bytes) -> bool:
    """Whether any of `keys` holds `byte` (one scan of their bytes)."""
    offsets = np.frombuffer(keys.buffers()[1], dtype=np.int32, count=len(keys) + 1, offset=keys.offset * 4)
    data = keys.buffers()[2]
    if data is None:
        return False
    return bool((np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]] == byte[0]).any())


def _string_hashes(keys: pa.StringArray) -> np.ndarray:
    """`String.hashCode()` of every string as uint32 (ASCII vectorised, others per value).

    Horner's rule over byte positions, one pass per position, strings grouped by length.
    """
    n = len(keys)
    offsets = np.frombuffer(keys.buffers()[1], dtype=np.int32, count=n + 1, offset=keys.offset * 4)
    data_buffer = keys.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1].astype(np.int64)
    lengths = np.diff(offsets)
    out = np.zeros(n, dtype=np.uint32)
    thirty_one = np.uint32(31)
    with np.errstate(over="ignore"):
        distinct: np.ndarray = np.flatnonzero(np.bincount(lengths)) if n else np.zeros(0, dtype=np.int64)
        for length in distinct:
            if length == 0:
                continue
            rows = np.flatnonzero(lengths == length) if len(distinct) > 1 else None
            first = starts if rows is None else starts[rows]
            h = np.zeros(len(first), dtype=np.uint32)
            for j in range(int(length)):
                h *= thirty_one
                h += data[first + j]
            if rows is None:
                out = h
            else:
                out[rows] = h
    if len(data) and int(data[offsets[0]:offsets[-1]].max(initial=0)) >= 0x80:
        byte_lengths = pc.binary_length(keys)
        non_ascii = pc.not_equal(pc.utf8_length(keys), byte_lengths).to_numpy(zero_copy_only=False)
        for index in np.flatnonzero(non_ascii):
            out[index] = np.uint32(java_string_hash(keys[int(index)].as_py()) & _MASK32)
    return out


def bucket_file_id(bucket: int, salt: str) -> str:
    """The file id of a new file group for `bucket`: `%08d` bucket + rest of a UUID + `-0`.

    The UUID is derived from `salt` (instant, partition, bucket) so that every task writing the
    same new bucket in one commit picks the same file id without coordination.
    """
    text = str(uuid.uuid5(_FILE_ID_NAMESPACE, salt))
    return f"{bucket:08d}{text[8:]}-0"


def bucket_of_file_id(file_id: str) -> int | None:
    """The bucket number a file id starts with (`BucketIdentifier.bucketIdFromFileId`), or None."""
    head = file_id[:8]
    return int(head) if len(head) == 8 and head.isdigit() else None
