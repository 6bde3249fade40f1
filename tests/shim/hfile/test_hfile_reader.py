"""The HFile reader on the metadata table HFiles of a real table Hudi wrote (HBase's HFile writer:
gzip, CRC32C checksums): scans, lookups through the block index, ranged reads, the HFile inside
a log block, the bloom filter meta block, and corrupt bytes."""

from __future__ import annotations

import gzip
import os
import shutil
import struct
from pathlib import Path

import pytest

from shim.bloom import DynamicBloomFilter
from shim.errors import CorruptFileError, UnsupportedFeatureError
from shim.hfile import HFileReader
from shim.log.blocks import BlockType
from shim.log.reader import read_log_file
from tests.local import LOCAL

TRIPS = "trips__mor__avro__v8_trips_8i3u1d"


@pytest.fixture(scope="module")
def mdt(shared_tables: dict[str, Path]) -> Path:
    return shared_tables[TRIPS] / ".hoodie" / "metadata"


def _hfiles(mdt: Path) -> list[Path]:
    return sorted(mdt.glob("*/*.hfile"))


def test_scan_every_hfile_yields_the_trailers_count_in_key_order(mdt: Path) -> None:
    files = _hfiles(mdt)
    assert len(files) == 24
    for path in files:
        reader = HFileReader.open(LOCAL, str(path))
        pairs = list(reader.scan())
        keys = [key for key, _ in pairs]
        assert len(pairs) == reader.entry_count, path
        assert keys == sorted(keys) and len(set(keys)) == len(keys), path
        if keys:  # (two record index file groups hold no key)
            assert keys[0] == reader.file_info[b"minRecordKey"], path
            assert keys[-1] == reader.file_info[b"maxRecordKey"] == reader.last_key, path
    assert sum(HFileReader.open(LOCAL, str(p)).entry_count == 0 for p in files) == 2


def test_files_partition_base_file_holds_the_partition_list_and_three_partitions(mdt: Path) -> None:
    reader = HFileReader.open(LOCAL, str(mdt / "files" / "files-0000-0_23-1133-3302_20251220210130942.hfile"))
    assert [key for key, _ in reader.scan()] == [b"__all_partitions__", b"city=chennai", b"city=san_francisco",
                                                 b"city=sao_paulo"]
    assert reader.trailer.codec == 1 and reader.trailer.data_index_levels == 1


def test_get_finds_every_key_reading_one_data_block_each(mdt: Path) -> None:
    path = str(mdt / "column_stats" / "col-stats-0000-0_11-1133-3290_20251220210130942.hfile")
    pairs = dict(HFileReader.open(LOCAL, path).scan())
    assert len(pairs) == 48
    for key, value in pairs.items():
        reader = HFileReader.open(LOCAL, path)
        assert reader.get(key) == value
        assert reader.blocks_read == 1
    reader = HFileReader.open(LOCAL, path)
    first, last = min(pairs), max(pairs)
    assert reader.get(first[:-1]) is None  # before the first key
    assert reader.get(last + b"~") is None  # after the last
    assert reader.get(first + b"\x00") is None  # between two keys
    assert reader.get_many([first, last, b"zz", first]) == {first: pairs[first], last: pairs[last]}


def test_prefixed_returns_exactly_the_keys_with_the_prefix(mdt: Path) -> None:
    path = str(mdt / "column_stats" / "col-stats-0001-0_12-1133-3291_20251220210130942.hfile")
    reader = HFileReader.open(LOCAL, path)
    pairs = list(reader.scan())
    prefixes = {key[:n] for key, _ in pairs for n in (1, 12, 24, 30)} | {b"", b"zzz", b"A"}
    for prefix in sorted(prefixes):
        assert list(reader.prefixed(prefix)) == [p for p in pairs if p[0].startswith(prefix)], prefix
    assert len(list(reader.prefixed(pairs[0][0][:12]))) == 2  # a column's stats of the files in this group


def test_ranged_reads_read_the_tail_then_only_what_a_call_needs(mdt: Path) -> None:
    path = str(mdt / "record_index" / "record-index-0001-0_2-1133-3281_20251220210130942.hfile")
    whole = list(HFileReader.open(LOCAL, path).scan())
    reader = HFileReader.open(LOCAL, path, whole_file_bytes=0)
    assert reader._source.reads == 2  # the trailer, then the load-on-open section
    assert reader.get(whole[0][0]) == whole[0][1]
    assert reader._source.reads == 3  # the one data block
    assert list(reader.scan()) == whole
    assert reader._source.reads == 4  # the data section in one request


def test_hfile_data_block_of_a_log_file_reads_from_memory(mdt: Path) -> None:
    path = mdt / "files" / ".files-0000-0_20251220210108078.log.1_10-999-2838"
    contents = read_log_file(LOCAL, str(path))
    [block] = contents.blocks
    assert block.block_type is BlockType.HFILE
    data = contents.data[block.content_offset:block.content_offset + block.content_length]
    reader = HFileReader.from_bytes(data, str(path), offset=block.content_offset)
    assert [key for key, _ in reader.scan()] == [b"__all_partitions__", b"city=chennai", b"city=san_francisco",
                                                 b"city=sao_paulo"]
    assert b"schema" in reader.file_info


def test_bloom_filter_meta_block_holds_every_key(mdt: Path) -> None:
    reader = HFileReader.open(LOCAL, str(mdt / "column_stats" / "col-stats-0000-0_11-1133-3290_20251220210130942.hfile"))
    bloom = DynamicBloomFilter.parse(reader.meta_block("bloomFilter") or b"")
    keys = [key.decode() for key, _ in reader.scan()]
    assert all(bloom.might_contain(key) for key in keys)
    assert not bloom.might_contain_any(["x" + key for key in keys])
    assert reader.meta_block("no such block") is None


def test_every_byte_flip_reads_the_same_entries_or_names_the_file_and_offset(mdt: Path, tmp_path: Path) -> None:
    """HFile blocks carry CRC32C checksums Hudi does not check, nor does this reader: a flip in a
    value's bytes or a checksum can go unseen. Every flip elsewhere is caught: headers, sizes,
    index entries, the gzip streams, the file info and the trailer's message."""
    source = mdt / "files" / "files-0000-0_23-1133-3302_20251220210130942.hfile"
    original = source.read_bytes()
    expected = list(HFileReader.from_bytes(original, str(source)).scan())
    target = tmp_path / source.name
    outcomes = {"same": 0, "corrupt": 0, "changed": 0}
    for offset in range(len(original)):
        flipped = bytearray(original)
        flipped[offset] ^= 0xFF
        try:
            entries = list(HFileReader.from_bytes(bytes(flipped), str(target)).scan())
        except CorruptFileError as exc:
            assert exc.path == str(target) and exc.offset is not None and 0 <= exc.offset <= len(original), exc
            outcomes["corrupt"] += 1
            continue
        except UnsupportedFeatureError as exc:  # the trailer's codec ordinal, flipped to another codec
            assert "codec" in exc.feature
            continue
        if entries == expected:
            outcomes["same"] += 1
        else:
            outcomes["changed"] += 1
            assert len(entries) == len(expected)  # a flip inside one value's uncompressed... never here: gzip
    assert outcomes["changed"] == 0  # the one data block is gzip: its CRC catches every flip inside
    assert outcomes["corrupt"] > 700
    assert outcomes["same"] > 3000  # the trailer's zero padding, checksums, file info values not read


def test_truncated_files_name_the_file(mdt: Path, tmp_path: Path) -> None:
    source = mdt / "files" / "files-0000-0_23-1133-3302_20251220210130942.hfile"
    data = source.read_bytes()
    for size in (0, 10, 4095, 4096, 5000, len(data) - 1):
        target = tmp_path / f"cut-{size}.hfile"
        target.write_bytes(data[:size])
        with pytest.raises(CorruptFileError) as raised:
            list(HFileReader.open(LOCAL, str(target)).scan())
        assert raised.value.path == str(target)


def test_a_codec_hudi_never_writes_is_refused_by_name(mdt: Path, tmp_path: Path) -> None:
    source = mdt / "files" / "files-0000-0_23-1133-3302_20251220210130942.hfile"
    data = bytearray(source.read_bytes())
    field = data.rindex(b"\x60\x01")  # trailer field 12 (compression codec) = 1, GZ
    data[field + 1] = 3  # SNAPPY
    target = tmp_path / "snappy.hfile"
    target.write_bytes(bytes(data))
    with pytest.raises(UnsupportedFeatureError, match="SNAPPY"):
        HFileReader.open(LOCAL, str(target))


@pytest.mark.skipif(not os.environ.get("HUDI_SHIM_HFILE_FIXTURES"),
                    reason="set HUDI_SHIM_HFILE_FIXTURES to a folder of HBase-written HFiles (hudi-rs's test data)")
def test_hbase_written_hfiles_with_multi_level_indexes(tmp_path: Path) -> None:
    """hudi-rs's test HFiles (keys `hudi-key-<9 digits>`, values `hudi-value-<same>`): block
    sizes from 1 KB (three index levels) to 512 KB, gzip and none, fake first keys, no entries."""
    folder = Path(os.environ["HUDI_SHIM_HFILE_FIXTURES"])
    seen_levels = set()
    for path in sorted(folder.glob("*.hfile")):
        copy = tmp_path / path.name
        shutil.copy(path, copy)
        for whole in (1 << 30, 0):
            reader = HFileReader.open(LOCAL, str(copy), whole_file_bytes=whole)
            pairs = list(reader.scan())
            assert len(pairs) == reader.entry_count
            seen_levels.add(reader.trailer.data_index_levels)
            for key, value in pairs[:: max(len(pairs) // 40, 1)]:
                assert reader.get(key) == value or b"non_unique" in path.name.encode()
    assert seen_levels >= {1, 2, 3}


def _block(magic: bytes, data: bytes) -> bytes:
    """A gzip block as HFile writers lay it out (no checksums)."""
    packed = gzip.compress(data)
    return (magic + struct.pack(">iiqBii", len(packed), len(data), -1, 0, 16384, 33 + len(packed)) + packed)


def _pb(number: int, value: int | bytes) -> bytes:
    def varint(v: int) -> bytes:
        out = bytearray()
        while True:
            out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
            v >>= 7
            if not v:
                return bytes(out)
    if isinstance(value, bytes):
        return varint(number << 3 | 2) + varint(len(value)) + value
    return varint(number << 3) + varint(value)


def two_level_copy(data: bytes) -> bytes:
    """The HFile `data` (one data block, gzip) with its data index one level deeper: the root
    names a leaf index block, which names the data block. Data, meta index and file info blocks
    are the original's bytes."""
    reader = HFileReader.from_bytes(data, "original")
    trailer = reader.trailer
    [entry] = reader._root
    section = data[trailer.load_on_open_offset:len(data) - 4096]
    root_size = 33 + struct.unpack_from(">i", section, 8)[0]
    rest = section[root_size:]  # the meta index and file info blocks, as written
    first_key = (struct.pack(">h", len(entry.first_key)) + entry.first_key + b"\x00"  # row, no family,
                 + struct.pack(">q", 2**63 - 1) + b"\x04")  # the latest timestamp, a Put
    leaf_entry = struct.pack(">qi", entry.offset, entry.size) + first_key
    leaf = _block(b"IDXLEAF2", struct.pack(">iii", 1, 0, len(leaf_entry)) + leaf_entry)
    leaf_offset = trailer.load_on_open_offset
    root_entry = struct.pack(">qi", leaf_offset, len(leaf)) + bytes([len(first_key)]) + first_key
    root = _block(b"IDXROOT2", root_entry + struct.pack(">qii", leaf_offset, len(leaf), 0))
    load_on_open = leaf_offset + len(leaf)
    message = b"".join([_pb(1, load_on_open), _pb(2, load_on_open),  # (the file info offset: unread)
                        _pb(5, 1), _pb(6, trailer.meta_index_count), _pb(7, trailer.entry_count), _pb(8, 2),
                        _pb(9, 0), _pb(10, leaf_offset), _pb(11, trailer.comparator.encode()), _pb(12, trailer.codec)])
    tail = b'TRABLK"$' + bytes([len(message)]) + message
    tail += b"\x00" * (4096 - 4 - len(tail)) + struct.pack(">i", (trailer.minor_version << 24) | 3)
    return data[:leaf_offset] + leaf + root + rest + tail


def test_a_two_level_index_is_descended_one_block_per_level(mdt: Path) -> None:
    original = (mdt / "column_stats" / "col-stats-0000-0_11-1133-3290_20251220210130942.hfile").read_bytes()
    pairs = list(HFileReader.from_bytes(original, "original").scan())
    deeper = HFileReader.from_bytes(two_level_copy(original), "two-level")
    assert deeper.trailer.data_index_levels == 2
    assert list(deeper.scan()) == pairs
    for key, value in pairs[::7]:
        reader = HFileReader.from_bytes(two_level_copy(original), "two-level")
        assert reader.get(key) == value
        assert reader.blocks_read == 2  # the leaf index block, then the data block
    assert list(deeper.prefixed(pairs[5][0][:12])) == [p for p in pairs if p[0].startswith(pairs[5][0][:12])]
