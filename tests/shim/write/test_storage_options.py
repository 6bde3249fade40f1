"""Hudi's storage options: the Parquet codec, dictionary encoding and row group size of base files
and Parquet log blocks (`hoodie.parquet.*`), and the data block format of log files
(`hoodie.logfile.data.block.format`). Whatever the settings, the shim and hudi-rs read the same rows."""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from shim.errors import InvalidArgumentError, UnsupportedFeatureError
from shim.log.blocks import BlockType
from shim.log.reader import decode_data_block, read_log_file
from shim.write.services.compaction import compact
from tests.local import LOCAL
from tests.writekit import data_files, hudi_rs_rows, shim_rows, write

COLUMNS = ["id", "ts", "region", "fare"]
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
PARQUET_LOGS = {**MOR, "hoodie.logfile.data.block.format": "parquet"}
DICTIONARY_ENCODINGS = {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}


def trips(ids: range, ts: int) -> list[dict]:
    return [{"id": f"k{i:03d}", "ts": ts, "region": ("eu", "us", "ap")[i % 3], "fare": float(ts * 1000 + i)}
            for i in ids]


def expected(*batches: list[dict], deleted: tuple[str, ...] = ()) -> list[dict]:
    latest: dict[str, dict] = {}
    for batch in batches:
        latest.update({row["id"]: row for row in batch})
    return [latest[k] for k in sorted(latest) if k not in deleted]


def base_files(path: Path) -> list[pq.FileMetaData]:
    return [pq.read_metadata(path / name) for name in data_files(path) if name.endswith(".parquet")]


def log_blocks(path: Path) -> list[tuple[str, BlockType, bytes | None]]:
    """(log file, block type, Parquet content of a Parquet data block) of every block."""
    found = []
    for name in data_files(path):
        if ".log." in name:
            contents = read_log_file(LOCAL, str(path / name))
            for block in contents.blocks:
                content = None
                if block.block_type is BlockType.PARQUET_DATA:
                    content = contents.data[block.content_offset:block.content_offset + block.content_length]
                found.append((name, block.block_type, content))
    return found


def codecs(metadata: pq.FileMetaData) -> set[str]:
    return {metadata.row_group(g).column(c).compression
            for g in range(metadata.num_row_groups) for c in range(metadata.num_columns)}


def dictionary_columns(metadata: pq.FileMetaData) -> set[str]:
    row_group = metadata.row_group(0)
    return {row_group.column(c).path_in_schema for c in range(metadata.num_columns)
            if DICTIONARY_ENCODINGS & set(row_group.column(c).encodings)}


def test_defaults_are_snappy_with_dictionaries_except_for_per_record_unique_columns(tmp_path):
    write(tmp_path / "t", trips(range(30), 1))
    footers = base_files(tmp_path / "t")
    assert footers
    for metadata in footers:
        assert codecs(metadata) == {"SNAPPY"}
        assert metadata.num_row_groups == 1
        assert dictionary_columns(metadata) == {
            "_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_file_name", "ts", "region", "fare"}


@pytest.mark.parametrize(("codec", "written"), [("uncompressed", "UNCOMPRESSED"), ("gzip", "GZIP"),
                                                ("ZSTD", "ZSTD"), ("brotli", "BROTLI"), ("lz4", "LZ4")])
def test_the_codec_compresses_every_base_file_and_both_readers_read_them(tmp_path, codec, written):
    path, option = tmp_path / "t", {"hoodie.parquet.compression.codec": codec}
    first, second = trips(range(40), 1), trips(range(20, 60), 2)
    write(path, first, **option)
    write(path, second, tasks=2, **option)  # copy-on-write: rewritten files too
    footers = base_files(path)
    assert footers and all(codecs(metadata) == {written} for metadata in footers)
    assert shim_rows(path, columns=COLUMNS) == expected(first, second) == hudi_rs_rows(path, COLUMNS)


def test_dictionaries_off_and_small_row_groups(tmp_path):
    path = tmp_path / "t"
    options = {"hoodie.parquet.dictionary.enabled": "false", "hoodie.parquet.block.size": "2048"}
    rows = trips(range(300), 1)
    write(path, rows, **{**options, "hoodie.bucket.index.num.buckets": "1"})
    (metadata,) = base_files(path)
    assert dictionary_columns(metadata) == set()
    assert metadata.num_row_groups > 3
    assert sum(metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)) == 300
    assert shim_rows(path, columns=COLUMNS) == expected(rows) == hudi_rs_rows(path, COLUMNS)


def test_parquet_log_blocks_hold_the_changes_and_mix_with_avro_blocks(tmp_path):
    path = tmp_path / "t"
    first, second, third = trips(range(30), 1), trips(range(10, 40), 2), trips(range(0, 40, 4), 3)
    write(path, first, **PARQUET_LOGS)
    write(path, second, tasks=2, **PARQUET_LOGS, **{"hoodie.parquet.compression.codec": "zstd"})
    write(path, trips(range(0, 40, 5), 4), **PARQUET_LOGS, **{"hoodie.datasource.write.operation": "delete"})
    write(path, third, **MOR)  # Avro blocks after Parquet blocks in the same file groups
    deleted = tuple(f"k{i:03d}" for i in range(0, 40, 5) if i % 4)
    want = expected(first, second, third, deleted=deleted)
    blocks = log_blocks(path)
    kinds = {kind for _, kind, _ in blocks}
    assert kinds == {BlockType.PARQUET_DATA, BlockType.DELETE, BlockType.AVRO_DATA}
    parquet_blocks = [content for _, kind, content in blocks if content is not None]
    assert parquet_blocks and all(codecs(pq.read_metadata(io.BytesIO(c))) == {"ZSTD"} for c in parquet_blocks)
    assert shim_rows(path, columns=COLUMNS) == want == hudi_rs_rows(path, COLUMNS)
    assert compact(str(path), options={"hoodie.parquet.compression.codec": "gzip"}) is not None
    assert shim_rows(path, columns=COLUMNS) == want == hudi_rs_rows(path, COLUMNS)
    compacted = [pq.read_metadata(path / name) for name in data_files(path) if name.endswith(".parquet")]
    assert any(codecs(metadata) == {"GZIP"} for metadata in compacted)


@pytest.mark.parametrize("options", [PARQUET_LOGS, MOR])
def test_log_records_name_their_file_group_as_hudi_writes_them(tmp_path, options):
    # Hudi's append handle puts the file id (not the log file's name) into `_hoodie_file_name`
    path = tmp_path / "t"
    write(path, trips(range(20), 1), **options)
    write(path, trips(range(20), 2), **options)
    checked = 0
    for name in data_files(path):
        if ".log." in name:
            contents = read_log_file(LOCAL, str(path / name))
            file_id = name.split("/")[-1][1:].split("_")[0]
            for block in contents.blocks:
                if block.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
                    names = set(decode_data_block(contents, block, ["_hoodie_file_name"]).column(0).to_pylist())
                    assert names == {file_id}
                    checked += 1
    assert checked


@pytest.mark.parametrize(("option", "value", "error", "message"), [
    ("hoodie.parquet.compression.codec", "lzo", InvalidArgumentError, "hoodie.parquet.compression.codec='lzo'"),
    ("hoodie.parquet.dictionary.enabled", "maybe", InvalidArgumentError, "must be true or false"),
    ("hoodie.parquet.block.size", "0", InvalidArgumentError, "hoodie.parquet.block.size=0 must be at least 1"),
    ("hoodie.parquet.block.size", "big", InvalidArgumentError, "must be an integer"),
    ("hoodie.logfile.data.block.format", "orc", InvalidArgumentError, "must be avro or parquet"),
    ("hoodie.logfile.data.block.format", "hfile", UnsupportedFeatureError, "hfile is not supported"),
])
def test_bad_storage_options_are_refused_before_anything_is_written(tmp_path, option, value, error, message):
    path = tmp_path / "t"
    write(path, trips(range(10), 1), **MOR)
    before = data_files(path)
    with pytest.raises(error, match=message):
        write(path, trips(range(10), 2), **{**MOR, option: value})
    if option.startswith("hoodie.parquet"):  # compaction writes base files with these settings too
        with pytest.raises(error, match=message):
            compact(str(path), options={option: value})
    assert data_files(path) == before
    assert shim_rows(path, columns=COLUMNS) == expected(trips(range(10), 1))
