"""Delete blocks: the real one hudi-rs applies, every ordering wrapper, both payload forms, old versions."""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from log_cases import log_files, needs_shared, snapshot_rows, unzip_table

from shim.errors import CorruptFileError, InvalidArgumentError, UnsupportedFeatureError
from shim.log import (
    DeleteRecords,
    HeaderKey,
    decode_delete_block,
    encode_command_block,
    encode_delete_block,
    parse_log_bytes,
    read_log_file,
)
from shim.log.blocks import BlockType
from shim.log.writer import encode_block
from tests.local import LOCAL

HEADER = {HeaderKey.INSTANT_TIME: "20250101000000000"}
PATH = "/t/p/.f1_100.log.1_0-1-1"


def _decode(block: bytes) -> DeleteRecords:
    contents = parse_log_bytes(block, PATH)
    return decode_delete_block(contents, contents.blocks[0])


def _delete_block_with_payload(payload: bytes, version: int = 3) -> bytes:
    return encode_block(BlockType.DELETE, HEADER, struct.pack(">ii", version, len(payload)) + payload)


@needs_shared
@pytest.mark.shared
def test_decode_delete_block_real_block_gives_the_keys_hudi_rs_deletes(tmp_path: Path) -> None:
    table = unzip_table("trips__mor__avro__v6_trips_8i3d", tmp_path)
    base_keys = {
        key
        for f in table.rglob("*.parquet")
        for key in pq.read_table(f).column("_hoodie_record_key").to_pylist()
    }
    deleted_by_hudi_rs = base_keys - set(snapshot_rows(table))
    (path,) = [p for p in log_files(table) if "metadata" not in str(p)]
    contents = read_log_file(LOCAL, str(path))

    deletes = decode_delete_block(contents, contents.blocks[0])

    assert len(deleted_by_hudi_rs) == 3
    assert deletes.record_keys.to_pylist() == [
        "e96c4396-3fad-413a-a942-4cb36106d721",
        "9909a8b1-2d15-4d3d-8ec9-efc48c536a00",
        "334e26e9-8355-45cc-97c6-c31daf0df330",
    ]
    assert set(deletes.record_keys.to_pylist()) == deleted_by_hudi_rs
    assert deletes.partition_paths.to_pylist() == ["city=san_francisco"] * 3
    # Hudi wrote IntWrapper(0), its "no ordering value": commit-time ordering, returned as null.
    assert len(deletes.ordering_values) == 1
    assert deletes.ordering_values[0].type == pa.int32()
    assert deletes.ordering_values[0].null_count == 3


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (pa.array([True, False, None]), pa.array([True, False, None])),
        (pa.array([5, 0, None], pa.int32()), pa.array([5, None, None], pa.int32())),
        (pa.array([2**62, 0, -1], pa.int64()), pa.array([2**62, 0, -1], pa.int64())),
        (pa.array([1.5, -0.25, None], pa.float32()), pa.array([1.5, -0.25, None], pa.float32())),
        (pa.array([1e300, None, 0.0]), pa.array([1e300, None, 0.0])),
        (pa.array([b"\x00\xff", b"", None]), pa.array([b"\x00\xff", b"", None])),
        (pa.array(["2024", "é", None]), pa.array(["2024", "é", None])),
        (
            pa.array([dt.date(2024, 1, 2), None, dt.date(1, 1, 1)]),
            pa.array([dt.date(2024, 1, 2), None, dt.date(1, 1, 1)]),
        ),
        (
            pa.array(
                [Decimal("-12.5"), Decimal("123456789012345.123456789012345"), None], pa.decimal128(30, 15)
            ),
            pa.array(
                [Decimal("-12.5"), Decimal("123456789012345.123456789012345"), None], pa.decimal128(30, 15)
            ),
        ),
        (
            pa.array([Decimal("1.25"), None, None], pa.decimal128(5, 2)),
            pa.array([Decimal("1.25"), None, None], pa.decimal128(30, 15)),
        ),
        (
            pa.array([dt.time(1, 2, 3, 4), None, dt.time(0)], pa.time64("us")),
            pa.array([dt.time(1, 2, 3, 4), None, dt.time(0)], pa.time64("us")),
        ),
        (
            pa.array([0, 1_700_000_000_000_000, None], pa.timestamp("us", tz="UTC")),
            pa.array([0, 1_700_000_000_000_000, None], pa.timestamp("us", tz="UTC")),
        ),
        (
            pa.array([1_700_000_000_000, None, -1], pa.timestamp("ms")),
            pa.array([1_700_000_000_000_000, None, -1000], pa.timestamp("us", tz="UTC")),
        ),
    ],
)
def test_decode_delete_block_union_form_round_trips_each_wrapper(
    values: pa.Array, expected: pa.Array
) -> None:
    block = encode_delete_block(["a", "b", None], ["p1", None, "p3"], [values], HEADER)

    deletes = _decode(block)

    assert deletes.record_keys.to_pylist() == ["a", "b", None]
    assert deletes.partition_paths.to_pylist() == ["p1", None, "p3"]
    assert deletes.ordering_values == (expected,)


def test_decode_delete_block_array_form_gives_one_array_per_ordering_field() -> None:
    ts = pa.array([10, 20, None], pa.int64())
    seq = pa.array(["x", None, "z"])
    block = encode_delete_block(["a", "b", "c"], ["p", "p", "p"], [ts, seq], HEADER, form="array")

    deletes = _decode(block)

    assert deletes.ordering_values == (ts, seq)


def test_decode_delete_block_array_form_zero_int_is_a_value_not_the_default() -> None:
    zero = pa.array([0], pa.int32())

    deletes = _decode(encode_delete_block(["a"], ["p"], [zero], HEADER, form="array"))

    assert deletes.ordering_values == (zero,)


def test_encode_delete_block_without_ordering_writes_hudi_default_int_zero() -> None:
    block = encode_delete_block(["k"], ["p"], [], HEADER)
    located = parse_log_bytes(block, PATH).blocks[0]
    content = block[located.content_offset : located.content_offset + located.content_length]

    # One item: key "k", partition "p", IntWrapper (branch 2) holding 0; then the array's end.
    payload = bytes([0x02, 0x02, 0x02, ord("k"), 0x02, 0x02, ord("p"), 0x04, 0x00, 0x00])
    assert content == struct.pack(">ii", 3, len(payload)) + payload
    assert _decode(block).ordering_values[0].to_pylist() == [None]


def test_decode_delete_block_no_deletes_gives_empty_arrays() -> None:
    deletes = _decode(encode_delete_block([], [], [], HEADER))

    assert len(deletes) == 0
    assert deletes.record_keys.type == pa.string()


@pytest.mark.parametrize("version", [1, 2])
def test_decode_delete_block_java_serialized_versions_raise_unsupported(version: int) -> None:
    command = encode_command_block({HeaderKey.INSTANT_TIME: "1", HeaderKey.TARGET_INSTANT_TIME: "0"})
    block = command + _delete_block_with_payload(b"\xac\xed\x00\x05", version=version)

    contents = parse_log_bytes(block, PATH)
    expected = (
        rf"{PATH}: delete block at byte offset {len(command)} has content version {version} \(Java-serialized"
    )
    with pytest.raises(UnsupportedFeatureError, match=expected) as info:
        decode_delete_block(contents, contents.blocks[1])
    assert info.value.feature == f"delete-block-v{version}"
    assert info.value.path == PATH


def test_decode_delete_block_mixed_wrapper_types_raise_unsupported() -> None:
    # Two deletes: LongWrapper(5) and StringWrapper("x").
    payload = bytes(
        [0x04, 0x02, 0x02, ord("a"), 0x00, 0x06, 0x0A, 0x02, 0x02, ord("b"), 0x00, 0x0E, 0x02, ord("x"), 0x00]
    )

    with pytest.raises(
        UnsupportedFeatureError, match=r"ordering values of several types \(LONG, STRING\)"
    ) as info:
        _decode(_delete_block_with_payload(payload))
    assert info.value.feature == "delete-ordering-mixed-types"


def test_decode_delete_block_unknown_wrapper_branch_is_corrupt_naming_the_block() -> None:
    payload = bytes([0x02, 0x02, 0x02, ord("a"), 0x00, 0x1A, 0x00])  # branch 13

    with pytest.raises(CorruptFileError, match="union branch 13, which no Hudi release writes") as info:
        _decode(_delete_block_with_payload(payload))
    assert (info.value.path, info.value.offset) == (PATH, 0)


def test_decode_delete_block_unknown_version_is_corrupt_and_version_2_without_java_bytes_too() -> None:
    for version, payload in ((7, bytes([0x00])), (2, bytes([0x00]))):
        with pytest.raises(CorruptFileError, match=f"content version {version}, which Hudi never wrote") as info:
            _decode(_delete_block_with_payload(payload, version=version))
        assert (info.value.path, info.value.offset) == (PATH, 0)


def test_decode_delete_block_bytes_after_the_deletes_are_corrupt() -> None:
    payload = bytes([0x02, 0x02, 0x02, ord("a"), 0x00, 0x00, 0x00]) + b"\x00\x00"  # one delete, then two bytes

    with pytest.raises(CorruptFileError, match="2 bytes after the last delete"):
        _decode(_delete_block_with_payload(payload))


def test_decode_delete_block_truncated_payload_raises_corrupt() -> None:
    payload = bytes([0x02, 0x02, 0x40, ord("a")])  # a key of 32 bytes with one present

    with pytest.raises(CorruptFileError, match="delete block at byte offset 0 is corrupt: 32 bytes run past"):
        _decode(_delete_block_with_payload(payload))


def test_decode_delete_block_on_command_block_raises_invalid_argument() -> None:
    contents = parse_log_bytes(
        encode_command_block({HeaderKey.INSTANT_TIME: "1", HeaderKey.TARGET_INSTANT_TIME: "0"}), PATH
    )

    with pytest.raises(InvalidArgumentError, match="is a COMMAND block, not DELETE"):
        decode_delete_block(contents, contents.blocks[0])


def test_encode_delete_block_union_form_refuses_several_ordering_fields() -> None:
    with pytest.raises(ValueError, match="use form='array'"):
        encode_delete_block(["a"], ["p"], [pa.array([1]), pa.array([2])], HEADER)
