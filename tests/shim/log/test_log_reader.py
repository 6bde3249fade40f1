"""read_log_file / decode_data_block on real Hudi log files and on damaged synthetic ones."""

from __future__ import annotations

import collections
import struct
import warnings
from pathlib import Path

import pyarrow as pa
import pytest
from log_cases import log_files, needs_shared, snapshot_rows, unzip_all, unzip_table

from shim.errors import ColumnNotFoundError, CorruptFileError, InvalidArgumentError, UnsupportedFeatureError
from shim.log import (
    BlockType,
    CorruptBlockWarning,
    CorruptRegion,
    HeaderKey,
    LogFileContents,
    data_block_schema,
    decode_data_block,
    encode_avro_data_block,
    encode_command_block,
    parse_log_bytes,
    read_log_file,
)
from shim.log.writer import encode_block
from tests.local import LOCAL

SCHEMA = {
    "type": "record",
    "name": "r",
    "namespace": "hoodie.t",
    "fields": [
        {"name": "_hoodie_record_key", "type": ["null", "string"], "default": None},
        {"name": "v", "type": ["null", "long"], "default": None},
    ],
}


def _command(instant: str) -> bytes:
    return encode_command_block({HeaderKey.INSTANT_TIME: instant, HeaderKey.TARGET_INSTANT_TIME: "1"})


def _instants(data: bytes, path: str = "/t/.f.log.1_0-1-1") -> list[str | None]:
    return [b.instant_time for b in parse_log_bytes(data, path).blocks]


# -- real files -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not Path("/work/shared/hudi-tables").is_dir():
        pytest.skip("needs the real Hudi tables in /work/shared/hudi-tables")
    return unzip_all(tmp_path_factory.mktemp("hudi-tables"))


@needs_shared
@pytest.mark.shared
def test_read_log_file_every_real_log_file_parses_without_corruption(tables: dict[str, Path]) -> None:
    counts: collections.Counter[str] = collections.Counter()
    files = [f for t in tables.values() for f in log_files(t)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptBlockWarning)
        for path in files:
            contents = read_log_file(LOCAL, str(path))
            assert contents.corrupt_regions == ()
            counts.update(b.block_type.name for b in contents.blocks)

    assert len(files) == 222
    assert counts == {"HFILE": 123, "DELETE": 87, "AVRO_DATA": 7, "PARQUET_DATA": 4, "COMMAND": 1}


@needs_shared
@pytest.mark.shared
def test_read_log_file_delete_block_header_is_located(tables: dict[str, Path]) -> None:
    (path,) = [p for p in log_files(tables["trips__mor__avro__v6_trips_8i3d"]) if "metadata" not in str(p)]

    (block,) = read_log_file(LOCAL, str(path)).blocks

    assert (block.block_type, block.offset, block.content_length) == (BlockType.DELETE, 0, 190)
    assert block.instant_time == "20250618054714114"
    assert block.schema is not None and block.schema["name"] == "v6_trips_8i3d_record"
    assert block.footer == {}


@needs_shared
@pytest.mark.shared
def test_read_log_file_rollback_command_block_names_its_target(tables: dict[str, Path]) -> None:
    table = tables["sample__mor__parquet__v6_nonpartitioned_rollback"]
    (path,) = [p for p in log_files(table) if ".log.2_" in p.name]

    (block,) = read_log_file(LOCAL, str(path)).blocks

    assert block.block_type is BlockType.COMMAND and block.is_rollback_command
    assert (block.instant_time, block.target_instant_time) == ("20250126040936578", "20250126040826878")
    assert block.content_length == 0


@needs_shared
@pytest.mark.shared
@pytest.mark.parametrize(
    "zip_stem",
    [
        "trips__mor__avro__v6_trips_8i1u",
        "trips__mor__avro__v8_trips_8i3u1d",
        "sample__mor__avro__v9_txns_simple_meta",
        "sample__mor__parquet__v6_nonpartitioned",
        "sample__mor__parquet__v6_simplekeygen_nonhivestyle",
    ],
)
def test_decode_data_block_rows_equal_hudi_rs_rows(tables: dict[str, Path], zip_stem: str) -> None:
    """Every logged row hudi-rs still returns has the same values (file names change on compaction)."""
    expected = snapshot_rows(tables[zip_stem])
    compared = 0
    for path in log_files(tables[zip_stem]):
        if "metadata" in str(path):
            continue
        contents = read_log_file(LOCAL, str(path))
        for block in contents.blocks:
            if block.block_type not in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
                continue
            for row in decode_data_block(contents, block).to_pylist():
                theirs = expected.get(str(row["_hoodie_record_key"]))
                if theirs is not None:
                    compared += 1
                    assert {k: v for k, v in row.items() if k != "_hoodie_file_name"} == {
                        k: theirs[k] for k in row if k != "_hoodie_file_name"
                    }
    assert compared >= 1


@needs_shared
@pytest.mark.shared
def test_decode_data_block_parquet_projection_keeps_file_order(tables: dict[str, Path]) -> None:
    (path,) = [
        p for p in log_files(tables["sample__mor__parquet__v6_nonpartitioned"]) if "metadata" not in str(p)
    ]
    contents = read_log_file(LOCAL, str(path))

    table = decode_data_block(contents, contents.blocks[0], columns=["name", "id"])

    assert table.column_names == ["id", "name"]
    assert table.num_rows == 1
    with pytest.raises(ColumnNotFoundError, match="'missing' is not in"):
        decode_data_block(contents, contents.blocks[0], columns=["missing"])


@needs_shared
@pytest.mark.shared
def test_decode_data_block_hfile_block_raises_unsupported(tables: dict[str, Path]) -> None:
    table = tables["trips__mor__avro__v8_trips_8i3u1d"]
    path = next(p for p in log_files(table) if "/metadata/files/" in str(p) and p.stat().st_size > 100)
    contents = read_log_file(LOCAL, str(path))
    block = next(b for b in contents.blocks if b.block_type is BlockType.HFILE)

    with pytest.raises(
        UnsupportedFeatureError, match=rf"{path}: HFILE block at byte offset {block.offset} is an HFile"
    ):
        decode_data_block(contents, block)


# -- synthetic files ------------------------------------------------------------------------


def test_parse_log_bytes_consecutive_blocks_are_read_in_order() -> None:
    data = _command("100") + _command("200") + _command("300")

    contents = parse_log_bytes(data, "/t/.f.log.1_0-1-1")

    assert [b.instant_time for b in contents.blocks] == ["100", "200", "300"]
    size = len(_command("100"))
    assert [b.offset for b in contents.blocks] == [0, size, 2 * size]


def test_parse_log_bytes_garbage_after_block_skips_it_like_hudi_and_reads_next() -> None:
    """Hudi calls a block corrupt when no magic follows it, so junk costs the block before it."""
    first, junk, second = _command("100"), b"\x00garbage\xff", _command("200")
    data = first + junk + second

    skipped = len(first) + len(junk)
    expected = (
        rf"/t/\.f\.log\.1_0-1-1: corrupt log block at byte offset 0 \(no block magic follows it\); "
        rf"skipped {skipped} bytes to offset {skipped}"
    )
    with pytest.warns(CorruptBlockWarning, match=expected):
        contents = parse_log_bytes(data, "/t/.f.log.1_0-1-1")

    assert [b.instant_time for b in contents.blocks] == ["200"]
    assert contents.corrupt_regions == ((0, skipped),)


def test_parse_log_bytes_block_with_wrong_length_is_skipped_and_next_read() -> None:
    first, bad, last = _command("100"), bytearray(_command("200")), _command("300")
    struct.pack_into(">q", bad, 6, struct.unpack_from(">q", bad, 6)[0] - 3)

    with pytest.warns(
        CorruptBlockWarning, match=f"byte offset {len(first)} .its length {len(bad) - 17} disagrees"
    ):
        instants = _instants(first + bytes(bad) + last)

    assert instants == ["100", "300"]


def test_parse_log_bytes_truncated_last_block_is_skipped_with_warning() -> None:
    first, second = _command("100"), _command("200")

    with pytest.warns(
        CorruptBlockWarning, match=f"byte offset {len(first)} .its length {len(second) - 14} runs past"
    ):
        contents = parse_log_bytes(first + second[:-10], "/t/.f.log.1_0-1-1")

    assert [b.instant_time for b in contents.blocks] == ["100"]
    assert contents.corrupt_regions == ((len(first), len(first) + len(second) - 10),)


def test_parse_log_bytes_length_field_cut_off_is_skipped_with_warning() -> None:
    first = _command("100")

    with pytest.warns(CorruptBlockWarning, match=f"byte offset {len(first)} .its length field is cut off"):
        assert _instants(first + b"#HUDI#\x00\x00") == ["100"]


def test_parse_log_bytes_huge_or_negative_length_is_corrupt() -> None:
    for length in (2**40, -(2**20)):
        block = bytearray(_command("200"))
        struct.pack_into(">q", block, 6, length)
        with pytest.warns(CorruptBlockWarning, match=f"byte offset {len(block)}"):
            assert _instants(_command("100") + bytes(block) + _command("300")) == ["100", "300"]


def test_parse_log_bytes_fewer_than_magic_trailing_bytes_are_ignored_silently() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _instants(_command("100") + b"#HU") == ["100"]


def _malformed(data: bytes, path: str = "/t/x") -> LogFileContents:
    with pytest.warns(CorruptBlockWarning, match="malformed log block"):
        return parse_log_bytes(data, path)


def test_parse_log_bytes_file_not_starting_with_magic_is_a_region_hudi_cannot_read() -> None:
    contents = _malformed(b"not a log" + _command("100"))

    assert [b.instant_time for b in contents.blocks] == ["100"]
    assert contents.corrupt == (CorruptRegion(0, 9, "no log block starts here", hudi_skips=False),)
    with pytest.raises(CorruptFileError, match=r"/t/x: log block at byte offset 0 is malformed: no log block") as info:
        contents.raise_unreadable()
    assert (info.value.path, info.value.offset) == ("/t/x", 0)


def test_parse_log_bytes_unsupported_format_version_is_malformed_naming_the_offset() -> None:
    block = bytearray(_command("200"))
    struct.pack_into(">i", block, 14, 2)

    contents = _malformed(_command("100") + bytes(block))

    assert [b.instant_time for b in contents.blocks] == ["100"]
    [region] = contents.corrupt
    assert (region.start, region.end, region.hudi_skips) == (len(block), 2 * len(block), False)
    assert "log format version 2" in region.reason


@pytest.mark.parametrize("type_id", [9, BlockType.CORRUPT.value])
def test_parse_log_bytes_block_type_hudi_never_writes_is_malformed(type_id: int) -> None:
    block = bytearray(_command("200"))
    struct.pack_into(">i", block, 18, type_id)

    [region] = _malformed(bytes(block)).corrupt
    assert region.reason == f"block type {type_id}, which Hudi never writes to a file"


def test_parse_log_bytes_header_that_is_not_utf8_or_repeats_a_key_is_malformed() -> None:
    bad_text = encode_block(BlockType.COMMAND, {HeaderKey.INSTANT_TIME: "100"}, b"").replace(b"100", b"1\xff0")
    assert "entry 0 is not UTF-8" in _malformed(bad_text).corrupt[0].reason
    twice = bytearray(encode_block(BlockType.COMMAND, {HeaderKey.INSTANT_TIME: "1", HeaderKey.SCHEMA: "2"}, b""))
    struct.pack_into(">i", twice, 35, HeaderKey.INSTANT_TIME)  # the second entry's key
    assert "holds key 0 twice" in _malformed(bytes(twice)).corrupt[0].reason


def test_parse_log_bytes_unknown_header_key_is_kept_as_int() -> None:
    header = {HeaderKey.INSTANT_TIME: "100", 42: "from a newer Hudi"}

    (block,) = parse_log_bytes(encode_block(BlockType.COMMAND, header, b""), "/t/x").blocks

    assert block.header == {HeaderKey.INSTANT_TIME: "100", 42: "from a newer Hudi"}


def test_parse_log_bytes_header_running_past_block_is_malformed() -> None:
    block = bytearray(_command("100"))
    struct.pack_into(">i", block, 22, 50)  # 50 header entries in a 75-byte block

    assert _malformed(bytes(block)).corrupt[0].reason == "its header announces 50 entries"


def test_decode_data_block_avro_round_trips_rows() -> None:
    table = pa.table({"_hoodie_record_key": ["a", None, "c"], "v": [1, 2, None]})
    data = _command("1") + encode_avro_data_block(table, SCHEMA, {HeaderKey.INSTANT_TIME: "2"})
    contents = parse_log_bytes(data, "/t/x")

    decoded = decode_data_block(contents, contents.blocks[1])

    assert decoded.to_pylist() == table.to_pylist()
    assert decode_data_block(contents, contents.blocks[1], columns=["v"]).column_names == ["v"]


def test_decode_data_block_unknown_avro_content_version_is_corrupt() -> None:
    block = bytearray(encode_avro_data_block(pa.table({"v": [1]}), SCHEMA, {HeaderKey.INSTANT_TIME: "2"}))
    contents = parse_log_bytes(bytes(block), "/t/x")
    struct.pack_into(">i", block, contents.blocks[0].content_offset, 9)
    contents = parse_log_bytes(bytes(block), "/t/x")

    with pytest.raises(
        CorruptFileError, match="AVRO_DATA block at byte offset 0 is corrupt: its Avro content version is 9"
    ) as info:
        decode_data_block(contents, contents.blocks[0])
    assert info.value.offset == 0


def test_decode_data_block_schema_header_that_is_not_avro_is_corrupt_naming_the_block() -> None:
    data = encode_avro_data_block(pa.table({"v": [1]}), SCHEMA, {HeaderKey.INSTANT_TIME: "2"}).replace(
        b'"type":"record"', b'"type":"recorf"')
    contents = parse_log_bytes(data, "/t/x")

    for read in (data_block_schema, decode_data_block):
        with pytest.raises(CorruptFileError, match="block at byte offset 0: its SCHEMA header is not an Avro") as info:
            read(contents, contents.blocks[0])
        assert (info.value.path, info.value.offset) == ("/t/x", 0)


def test_decode_data_block_record_length_past_block_raises_corrupt() -> None:
    block = bytearray(encode_avro_data_block(pa.table({"v": [1]}), SCHEMA, {HeaderKey.INSTANT_TIME: "2"}))
    offset = parse_log_bytes(bytes(block), "/t/x").blocks[0].content_offset
    struct.pack_into(">i", block, offset + 8, 1000)
    contents = parse_log_bytes(bytes(block), "/t/x")

    with pytest.raises(
        CorruptFileError, match=f"record 0 at byte offset {offset + 8} runs past the end"
    ) as info:
        decode_data_block(contents, contents.blocks[0])
    assert info.value.offset == offset + 8


def test_decode_data_block_cdc_block_raises_unsupported() -> None:
    contents = parse_log_bytes(encode_block(BlockType.CDC, {HeaderKey.INSTANT_TIME: "1"}, b"x"), "/t/x")

    with pytest.raises(UnsupportedFeatureError, match="change-data-capture records, not table rows") as info:
        decode_data_block(contents, contents.blocks[0])
    assert info.value.feature == "cdc-log-block"


def test_decode_data_block_command_block_raises_invalid_argument() -> None:
    contents = parse_log_bytes(_command("1"), "/t/x")

    with pytest.raises(InvalidArgumentError, match="COMMAND block at byte offset 0 holds no rows"):
        decode_data_block(contents, contents.blocks[0])


def test_read_log_file_reads_from_disk(tmp_path: Path) -> None:
    path = tmp_path / ".f1_100.log.1_0-1-1"
    path.write_bytes(_command("100"))

    contents = read_log_file(LOCAL, str(path))

    assert contents.path == str(path) and contents.blocks[0].path == str(path)


@needs_shared
@pytest.mark.shared
def test_unzip_table_gives_one_table_directory(tmp_path: Path) -> None:
    table = unzip_table("trips__mor__avro__v6_trips_8i3d", tmp_path)

    assert (table / ".hoodie" / "hoodie.properties").is_file()


def test_data_block_schema_avro_block_is_its_header_schema_in_arrow() -> None:
    contents = parse_log_bytes(
        encode_avro_data_block(pa.table({"v": [1]}), SCHEMA, {HeaderKey.INSTANT_TIME: "2"}), "/t/x"
    )

    schema = data_block_schema(contents, contents.blocks[0])

    assert schema == pa.schema([pa.field("_hoodie_record_key", pa.string()), pa.field("v", pa.int64())])


@needs_shared
@pytest.mark.shared
def test_data_block_schema_parquet_block_matches_decoded_rows(tables: dict[str, Path]) -> None:
    (path,) = [
        p for p in log_files(tables["sample__mor__parquet__v6_nonpartitioned"]) if "metadata" not in str(p)
    ]
    contents = read_log_file(LOCAL, str(path))

    schema = data_block_schema(contents, contents.blocks[0])

    assert schema == decode_data_block(contents, contents.blocks[0]).schema
    assert "decimalField" in schema.names


def test_data_block_schema_command_block_raises_invalid_argument() -> None:
    contents = parse_log_bytes(_command("1"), "/t/x")

    with pytest.raises(InvalidArgumentError, match="holds no rows"):
        data_block_schema(contents, contents.blocks[0])
