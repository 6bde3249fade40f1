"""Block encoders (byte-exact against Hudi's own files) and log file writing."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from log_cases import log_files, needs_shared, unzip_all

from shim.avro import arrow_to_avro_schema
from shim.errors import InvalidArgumentError, WriteError
from shim.log import (
    BlockType,
    HeaderKey,
    append_log_blocks,
    decode_data_block,
    decode_delete_block,
    encode_avro_data_block,
    encode_command_block,
    encode_delete_block,
    encode_parquet_data_block,
    extend_log_file,
    parse_log_bytes,
    read_log_file,
    write_log_file,
)
from shim.log.writer import encode_block
from tests.local import LOCAL

TABLE = pa.table(
    {
        "_hoodie_record_key": ["a", "b"],
        "ts": pa.array([1, None], pa.int64()),
        "when": pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.UTC), None], pa.timestamp("us", tz="UTC")),
        "price": pa.array([Decimal("1.50"), Decimal("-2.25")], pa.decimal128(10, 2)),
        "tags": pa.array([["x", None], []], pa.list_(pa.field("element", pa.string()))),
        "attrs": pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64())),
        "inner": pa.array([{"d": dt.date(2020, 2, 29)}, None], pa.struct([pa.field("d", pa.date32())])),
    }
)
SCHEMA = arrow_to_avro_schema(TABLE.schema, "t_record", "hoodie.t")


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not Path("/work/shared/hudi-tables").is_dir():
        pytest.skip("needs the real Hudi tables in /work/shared/hudi-tables")
    return unzip_all(tmp_path_factory.mktemp("hudi-tables"))


@needs_shared
@pytest.mark.shared
def test_encoders_reproduce_every_real_avro_delete_and_command_block_byte_for_byte(
    tables: dict[str, Path],
) -> None:
    checked = 0
    for table in tables.values():
        for path in log_files(table):
            if "metadata" in str(path):
                continue
            contents = read_log_file(LOCAL, str(path))
            for block in contents.blocks:
                header = dict(block.header)
                if block.block_type is BlockType.AVRO_DATA:
                    assert block.schema is not None
                    ours = encode_avro_data_block(decode_data_block(contents, block), block.schema, header)
                elif block.block_type is BlockType.DELETE:
                    deletes = decode_delete_block(contents, block)
                    keys, partitions = deletes.record_keys.to_pylist(), deletes.partition_paths.to_pylist()
                    ours = encode_delete_block(keys, partitions, [], header)
                elif block.block_type is BlockType.COMMAND:
                    ours = encode_command_block(header)
                else:
                    continue
                end = block.content_offset + block.content_length + 4 + 8  # empty footer, trailing length
                assert ours == contents.data[block.offset : end], (path, block.offset)
                checked += 1
    assert checked == 13


def test_encode_avro_data_block_round_trips_nested_and_logical_types() -> None:
    block = encode_avro_data_block(TABLE, SCHEMA, {HeaderKey.INSTANT_TIME: "20250101000000000"})
    contents = parse_log_bytes(block, "/t/x")

    (located,) = contents.blocks
    decoded = decode_data_block(contents, located)

    assert located.block_type is BlockType.AVRO_DATA
    assert located.schema == SCHEMA
    assert decoded.to_pylist() == TABLE.to_pylist()
    assert decoded.schema == TABLE.schema


def test_encode_parquet_data_block_round_trips_table() -> None:
    header = {HeaderKey.INSTANT_TIME: "20250101000000000", HeaderKey.SCHEMA: "{}"}

    contents = parse_log_bytes(encode_parquet_data_block(TABLE, header), "/t/x")

    assert contents.data[contents.blocks[0].content_offset :][:4] == b"PAR1"
    assert decode_data_block(contents, contents.blocks[0]).equals(TABLE)


def test_encode_parquet_data_block_without_schema_header_raises() -> None:
    with pytest.raises(InvalidArgumentError, match="log block header needs SCHEMA"):
        encode_parquet_data_block(TABLE, {HeaderKey.INSTANT_TIME: "1"})


def test_encode_command_block_is_a_rollback_of_the_target() -> None:
    block = encode_command_block({HeaderKey.INSTANT_TIME: "200", HeaderKey.TARGET_INSTANT_TIME: "100"})

    (located,) = parse_log_bytes(block, "/t/x").blocks

    assert located.is_rollback_command
    assert (located.instant_time, located.target_instant_time) == ("200", "100")
    assert located.header[HeaderKey.COMMAND_BLOCK_TYPE] == "0"


def test_encode_command_block_without_target_raises() -> None:
    with pytest.raises(InvalidArgumentError, match="needs TARGET_INSTANT_TIME"):
        encode_command_block({HeaderKey.INSTANT_TIME: "200"})


def test_encode_block_layout_matches_hudi_format() -> None:
    block = encode_block(
        BlockType.COMMAND, {HeaderKey.INSTANT_TIME: "1"}, b"xy", {HeaderKey.BLOCK_IDENTIFIER: "7"}
    )

    assert block == (
        b"#HUDI#"
        + (4 + 4 + 13 + 8 + 2 + 13 + 8).to_bytes(8, "big")  # everything after the length field
        + (1).to_bytes(4, "big")
        + (0).to_bytes(4, "big")  # format version, block type
        + (1).to_bytes(4, "big")
        + (0).to_bytes(4, "big")
        + (1).to_bytes(4, "big")
        + b"1"  # header
        + (2).to_bytes(8, "big")
        + b"xy"  # content
        + (1).to_bytes(4, "big")
        + (6).to_bytes(4, "big")
        + (1).to_bytes(4, "big")
        + b"7"  # footer
        + (6 + 4 + 4 + 13 + 8 + 2 + 13 + 8).to_bytes(8, "big")  # magic to footer
    )


def test_log_block_compacted_block_times_split_the_header() -> None:
    header = {
        HeaderKey.INSTANT_TIME: "300",
        HeaderKey.TARGET_INSTANT_TIME: "0",
        HeaderKey.COMPACTED_BLOCK_TIMES: "100,200",
    }

    (located,) = parse_log_bytes(encode_command_block(header), "/t/x").blocks

    assert located.compacted_block_times == ("100", "200")


def test_write_log_file_then_append_keeps_block_order(tmp_path: Path) -> None:
    path = str(tmp_path / ".f1_100.log.1_0-1-1")
    first = encode_command_block({HeaderKey.INSTANT_TIME: "1", HeaderKey.TARGET_INSTANT_TIME: "0"})
    data = encode_avro_data_block(TABLE, SCHEMA, {HeaderKey.INSTANT_TIME: "2"})
    deletes = encode_delete_block(["a"], ["p"], [pa.array([5], pa.int64())], {HeaderKey.INSTANT_TIME: "3"})

    write_log_file(LOCAL, path, [first])
    append_log_blocks(LOCAL, path, [data, deletes])
    contents = read_log_file(LOCAL, path)

    assert [(b.block_type, b.instant_time) for b in contents.blocks] == [
        (BlockType.COMMAND, "1"),
        (BlockType.AVRO_DATA, "2"),
        (BlockType.DELETE, "3"),
    ]
    assert [b.offset for b in contents.blocks] == [0, len(first), len(first) + len(data)]
    assert decode_delete_block(contents, contents.blocks[2]).ordering_values[0].to_pylist() == [5]


def test_write_log_file_existing_file_raises_write_error(tmp_path: Path) -> None:
    path = tmp_path / ".f1_100.log.1_0-1-1"
    path.write_bytes(b"")

    with pytest.raises(WriteError, match="exists; write the next log version instead"):
        write_log_file(LOCAL, str(path), [])


def test_append_log_blocks_missing_file_raises_write_error(tmp_path: Path) -> None:
    with pytest.raises(WriteError, match="does not exist"):
        append_log_blocks(LOCAL, str(tmp_path / "nope"), [])


def test_extend_log_file_appends_after_the_valid_bytes_cutting_a_torn_tail(tmp_path: Path) -> None:
    path = str(tmp_path / ".f1_100.log.1_0-1-1")
    first = encode_avro_data_block(TABLE, SCHEMA, {HeaderKey.INSTANT_TIME: "100"})
    second = encode_delete_block(["a"], ["p"], [pa.array([5], pa.int64())], {HeaderKey.INSTANT_TIME: "100"})
    write_log_file(LOCAL, path, [first])
    with open(path, "ab") as handle:  # a writer that died half-way through its block
        handle.write(second[: len(second) // 2])

    extend_log_file(LOCAL, path, len(first), [second])

    contents = read_log_file(LOCAL, path)
    assert [(b.block_type, b.offset) for b in contents.blocks] == [(BlockType.AVRO_DATA, 0),
                                                                   (BlockType.DELETE, len(first))]
    assert contents.corrupt_regions == ()
    with pytest.raises(WriteError, match="fewer than the"):
        extend_log_file(LOCAL, path, len(first) + len(second) + 1, [second])
    with pytest.raises(WriteError, match="does not exist"):
        extend_log_file(LOCAL, str(tmp_path / "nope"), 0, [second])
