"""Parquet pages carry a CRC (as parquet-java writes them) and reads check it: a flipped byte in
a base file's or a Parquet log block's pages is an error naming the file, never changed values."""

from __future__ import annotations

import collections
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import shim
from shim.errors import CorruptFileError
from shim.log.reader import read_log_file
from tests.local import LOCAL
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])
ROWS = [{"id": f"k{i}", "ts": i, "v": f"value-{i}"} for i in range(200)]


def pages(path: Path) -> range:
    """The bytes of the file's column chunks (page headers and pages)."""
    group = pq.read_metadata(path).row_group(0)
    chunks = [group.column(i) for i in range(group.num_columns)]
    starts = [c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset for c in chunks]
    return range(min(starts), max(s + c.total_compressed_size for s, c in zip(starts, chunks, strict=True)))


def outcomes(table: Path, file: Path, offsets: range | list[int]) -> collections.Counter[str]:
    original = file.read_bytes()
    good = shim.open_table(table).read(include_meta=True)
    seen: collections.Counter[str] = collections.Counter()
    try:
        for offset in offsets:
            flipped = bytearray(original)
            flipped[offset] ^= 0xFF
            file.write_bytes(bytes(flipped))
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    seen["same" if shim.open_table(table).read(include_meta=True).equals(good) else "changed"] += 1
            except CorruptFileError as exc:
                assert exc.path is not None and Path(exc.path).name == file.name, exc
                seen["error"] += 1
    finally:
        file.write_bytes(original)
    return seen


def test_base_files_are_written_with_page_checksums_and_a_flipped_page_byte_is_an_error(tmp_path: Path) -> None:
    table = TinyTable(tmp_path / "t", SCHEMA, mor=False)
    table.base(ROWS)
    [base] = table.path.glob("*.parquet")

    seen = outcomes(table.path, base, pages(base)[::7])

    assert seen["changed"] == 0, seen
    assert seen["error"] > 10 * seen["same"], seen  # 'same': page header fields a read does not use


def test_a_file_without_page_checksums_still_reads(tmp_path: Path) -> None:
    table = TinyTable(tmp_path / "t", SCHEMA, mor=False)
    table.base(ROWS)
    [base] = table.path.glob("*.parquet")
    source = pq.read_table(base)
    pq.write_table(source, base, write_page_checksum=False)

    assert sorted(shim.open_table(table.path).read().column("id").to_pylist()) == sorted(r["id"] for r in ROWS)


def test_parquet_log_blocks_are_written_with_page_checksums_and_checked_too(tmp_path: Path) -> None:
    table = TinyTable(tmp_path / "t", SCHEMA)
    base = table.base(ROWS)
    table.log(ROWS[:100], base_instant=base, block_format="parquet")
    [log] = (p for p in table.path.glob(".*.log.*"))
    [block] = read_log_file(LOCAL, str(log)).blocks
    content = log.read_bytes()[block.content_offset:block.content_offset + block.content_length]
    group = pq.read_metadata(pa.BufferReader(content)).row_group(0)
    chunks = [group.column(i) for i in range(group.num_columns)]
    first = min(c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset for c in chunks)
    last = max(c.data_page_offset + c.total_compressed_size for c in chunks)

    seen = outcomes(table.path, log, range(block.content_offset + first, block.content_offset + last, 7))

    assert seen["changed"] == 0, seen
    assert seen["error"] > 10 * seen["same"], seen
