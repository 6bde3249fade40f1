"""Hudi's record-key bloom filter (DYNAMIC_V0): byte for byte what Hudi writes into base files."""

from __future__ import annotations

import base64
import glob
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shim.bloom import (
    BLOOM_FILTER_KEY,
    DynamicBloomFilter,
    bit_size,
    dynamic_bloom_filter,
    extended_bloom_filter,
    num_hashes,
)


def base_files(table) -> list[str]:
    return [f for f in glob.glob(f"{table}/**/*.parquet", recursive=True) if "/.hoodie/" not in f]


def test_filters_equal_the_ones_hudi_wrote(shared_tables):
    files = [path for table in shared_tables.values() for path in base_files(table)]
    assert len(files) >= 40  # every base file of the real tables (v6, v8, v9), keys of 1 to 7+ bytes
    for path in files:
        written = pq.read_metadata(path).metadata[BLOOM_FILTER_KEY].decode()
        keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).combine_chunks()
        assert dynamic_bloom_filter(keys) == written, path


def java_murmur(data: bytes, seed: int) -> int:
    """MurmurHash2 as Hadoop's Java code computes it (signed bytes, 32-bit ints), one key at a time."""
    def i32(value: int) -> int:
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value & 0x80000000 else value

    def signed(byte: int) -> int:
        return byte - 256 if byte > 127 else byte

    m, length = 0x5BD1E995, len(data)
    h = i32(seed ^ length)
    for i in range(length >> 2):
        k = (data[4 * i] | data[4 * i + 1] << 8 | data[4 * i + 2] << 16 | data[4 * i + 3] << 24)
        k = i32(k * m)
        k = i32(k ^ ((k & 0xFFFFFFFF) >> 24))
        k = i32(k * m)
        h = i32(h * m) ^ k
    left = length & 3
    if left:
        if left >= 3:
            h ^= i32(signed(data[length - 3]) << 16)
        if left >= 2:
            h ^= i32(signed(data[length - 2]) << 8)
        h ^= signed(data[length - 1])
        h = i32(h * m)
    h = i32(h ^ ((h & 0xFFFFFFFF) >> 13))
    h = i32(h * m)
    return i32(h ^ ((h & 0xFFFFFFFF) >> 15))


def java_dynamic_filter(keys: list[str], num_entries: int, fpp: float, max_entries: int) -> str:
    """Hudi's InternalDynamicBloomFilter, key by key, serialized."""
    vector_size = bit_size(num_entries, fpp)
    hashes = num_hashes(vector_size, num_entries)
    rows: list[set[int]] = [set()]
    current, reached, turn = 0, False, 0
    for key in keys:
        if reached:
            row = rows[turn % len(rows)]
            turn += 1
        elif current >= num_entries and len(rows) * num_entries < max_entries:
            rows.append(set())
            current, row = 0, rows[-1]
        elif current >= num_entries:
            reached, row = True, rows[0]
        else:
            row = rows[-1]
        value = 0
        for _ in range(hashes):
            value = java_murmur(key.encode("utf-8"), value)
            row.add(abs(value % vector_size) if value >= 0 else abs(-(-value % vector_size)))
        current += 1
    header = struct.pack(">iibi", -1, hashes, 1, vector_size)
    out = header + struct.pack(">iii", num_entries, current, len(rows))
    for bits in rows:
        vector = bytearray((vector_size + 7) // 8)
        for bit in bits:
            vector[bit // 8] |= 1 << (bit % 8)
        out += header + bytes(vector)
    return base64.b64encode(out).decode()


KEYS = ["a", "ab", "abc", "abcd", "abcde", "é", "ñandú", "日本語キー", "\u00ff\u00fe\u00fd", "key-0001",
        "key-0002", "x" * 33, "größe", "🙂", "id:42,part:7", "zz", "zzz", "q", "r", "s", "t", "u"]


@pytest.mark.parametrize("count", [0, 1, 3, 4, 6, 7, 9, 10, 11, 16, len(KEYS)])
def test_rows_fill_then_take_keys_in_turn_as_hudi_does(count):
    # Tiny rows (3 keys, at most 7 before taking turns) exercise every branch of Hudi's row logic;
    # the keys cover every tail length and bytes above 127 (Java hashes them as negative numbers).
    keys = KEYS[:count]
    assert dynamic_bloom_filter(pa.array(keys, pa.string()), num_entries=3, fpp=0.01, max_entries=7) == \
        java_dynamic_filter(keys, 3, 0.01, 7)


def test_every_key_is_found_and_others_mostly_not():
    keys = [f"trip-{i:06d}" for i in range(2_000)]
    parsed = DynamicBloomFilter.parse(dynamic_bloom_filter(pa.array(keys)))
    assert (parsed.num_hashes, parsed.vector_size, parsed.num_entries, parsed.current) == (30, 2587966, 60000, 2000)
    assert all(parsed.might_contain(k) for k in keys[::97])
    assert not any(parsed.might_contain(f"other-{i}") for i in range(50))


def test_sliced_and_large_string_keys_hash_their_own_bytes():
    keys = pa.array(["skip", "a", "ab", "abc"]).slice(1)
    assert dynamic_bloom_filter(keys) == dynamic_bloom_filter(pa.array(["a", "ab", "abc"]))
    assert dynamic_bloom_filter(keys.cast(pa.large_string())) == dynamic_bloom_filter(keys)


def test_written_base_files_carry_the_filter_of_their_keys(tmp_path):
    from shim.bloom import TYPE_CODE_KEY
    from tests.tablekit import TinyTable

    table = TinyTable(tmp_path / "t", pa.schema([("id", pa.string()), ("ts", pa.int64())]))
    table.base([{"id": f"k{i}", "ts": 1} for i in range(50)])
    [path] = base_files(tmp_path / "t")
    footer = pq.read_metadata(path).metadata
    keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
    assert footer[TYPE_CODE_KEY] == b"DYNAMIC_V0"
    assert footer[BLOOM_FILTER_KEY].decode() == dynamic_bloom_filter(pa.array(keys))
    parsed = DynamicBloomFilter.parse(footer[BLOOM_FILTER_KEY])
    assert parsed.current == 50 and all(parsed.might_contain(k) for k in keys)


def test_an_extended_filter_is_the_filter_of_all_keys(shared_tables):
    # the real tables' files: their Hudi-written filter plus new and updated keys
    for path in base_files(next(iter(shared_tables.values()))):
        written = pq.read_metadata(path).metadata[BLOOM_FILTER_KEY].decode()
        keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).combine_chunks().to_pylist()
        added = [keys[0], "new-key-1", "new-key-22", "ключ-3"]
        everything = keys + added[1:]
        assert extended_bloom_filter(written, pa.array(added), len(everything)) == dynamic_bloom_filter(
            pa.array(sorted(everything)))


def test_a_filter_is_extended_only_when_the_result_is_certain():
    old = [f"k{i}" for i in range(100)]
    assert extended_bloom_filter(dynamic_bloom_filter(pa.array(old)), pa.array(["x"]), 101) == dynamic_bloom_filter(
        pa.array(old + ["x"]))
    assert extended_bloom_filter(dynamic_bloom_filter(pa.array(old)), pa.array([], pa.string()), 100) == \
        dynamic_bloom_filter(pa.array(old))
    small = dynamic_bloom_filter(pa.array(old), num_entries=150)
    assert extended_bloom_filter(small, pa.array(["x"]), 101) is None  # other settings
    assert extended_bloom_filter(small, pa.array(["x"] * 60), 160, num_entries=150) is None  # a second row
    two_rows = dynamic_bloom_filter(pa.array([f"k{i}" for i in range(200)]), num_entries=150)
    assert extended_bloom_filter(two_rows, pa.array(["x"]), 120, num_entries=150) is None
    assert extended_bloom_filter("not a filter", pa.array(["x"]), 1) is None
