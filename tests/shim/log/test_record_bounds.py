"""Avro data blocks whose record lengths lead outside the file are corrupt, named at the first bad record."""

from __future__ import annotations

import struct

import pyarrow as pa
import pytest

from shim.errors import CorruptFileError
from shim.log.blocks import HeaderKey
from shim.log.reader import decode_data_block, parse_log_bytes
from shim.log.writer import encode_avro_data_block

SCHEMA = {"type": "record", "name": "r", "fields": [{"name": "v", "type": "long"}]}


def _block(values: list[int]) -> tuple[bytearray, int]:
    block = bytearray(encode_avro_data_block(pa.table({"v": values}), SCHEMA, {HeaderKey.INSTANT_TIME: "2"}))
    return block, parse_log_bytes(bytes(block), "/t/x").blocks[0].content_offset


def test_a_record_count_beyond_the_records_names_the_first_missing_record() -> None:
    block, offset = _block([10**12, 10**12])  # 9-byte records: room for the lengths of 4
    struct.pack_into(">i", block, offset + 4, 3)  # 3 records announced, 2 written
    contents = parse_log_bytes(bytes(block), "/t/x")
    with pytest.raises(CorruptFileError, match="record 2 at byte offset .* runs past the end"):
        decode_data_block(contents, contents.blocks[0])


@pytest.mark.parametrize("count", [2**31 - 1, 2**24, 6])
def test_a_record_count_the_block_cannot_hold_is_corrupt_before_anything_is_allocated(count: int) -> None:
    """A flipped byte in the count once made the reader allocate a list of 2^31 lengths (22 GB)."""
    block, offset = _block([1, 2])
    struct.pack_into(">i", block, offset + 4, count)
    contents = parse_log_bytes(bytes(block), "/t/x")
    with pytest.raises(CorruptFileError, match=f"record count {count} cannot fit in its 10 bytes") as info:
        decode_data_block(contents, contents.blocks[0])
    assert (info.value.path, info.value.offset) == ("/t/x", 0)


def test_a_record_count_below_the_records_is_corrupt_not_fewer_rows() -> None:
    block, offset = _block([1, 2, 3])
    struct.pack_into(">i", block, offset + 4, 2)
    contents = parse_log_bytes(bytes(block), "/t/x")
    with pytest.raises(CorruptFileError, match="5 bytes follow its 2 records"):
        decode_data_block(contents, contents.blocks[0])


def test_a_negative_record_length_is_corrupt() -> None:
    block, offset = _block([1, 2, 3])
    struct.pack_into(">i", block, offset + 8, -40)
    contents = parse_log_bytes(bytes(block), "/t/x")
    with pytest.raises(CorruptFileError, match="record 0 at byte offset .* runs past the end"):
        decode_data_block(contents, contents.blocks[0])


def test_lengths_read_in_one_pass_decode_every_record() -> None:
    block, _ = _block(list(range(1000)))
    contents = parse_log_bytes(bytes(block), "/t/x")
    assert decode_data_block(contents, contents.blocks[0]).column("v").to_pylist() == list(range(1000))


def test_a_length_leading_past_the_file_names_its_record() -> None:
    block, offset = _block([1, 2, 3])
    struct.pack_into(">i", block, offset + 8, 1_000_000)  # the next length would be read outside the file
    contents = parse_log_bytes(bytes(block), "/t/x")
    with pytest.raises(CorruptFileError, match=f"record 0 at byte offset {offset + 8} runs past the end"):
        decode_data_block(contents, contents.blocks[0])
