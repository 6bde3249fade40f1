"""How Parquet files are encoded: Hudi's `hoodie.parquet.*` storage settings, for base files and
Parquet log blocks.

Defaults are Hudi's: snappy, dictionaries on, row groups of about 120 MiB, a CRC in every page
header (parquet-java's `parquet.page.write-checksum.enabled`). Per-record unique meta
columns (sequence numbers, record keys) get no dictionary, and meta columns nobody filters on get
no statistics, whatever the settings.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from shim.errors import InvalidArgumentError

CODECS = {"uncompressed": "none", "snappy": "snappy", "gzip": "gzip", "zstd": "zstd", "brotli": "brotli",
          "lz4": "lz4"}
"""Hudi's codec names (`hoodie.parquet.compression.codec`) and what pyarrow calls them."""

DEFAULT_BLOCK_SIZE = 120 * 1024 * 1024
_UNIQUE_META = ("_hoodie_commit_seqno", "_hoodie_record_key")
_NO_STATISTICS = ("_hoodie_commit_seqno", "_hoodie_partition_path", "_hoodie_file_name")


@dataclass(frozen=True, slots=True)
class ParquetSettings:
    """Codec, dictionary encoding and row group size (bytes, estimated from the Arrow data)."""

    codec: str = "snappy"
    dictionary: bool = True
    block_size: int = DEFAULT_BLOCK_SIZE

    def __post_init__(self) -> None:
        if self.codec not in CODECS:
            raise InvalidArgumentError(
                f"Parquet codec {self.codec!r} is not supported; use one of {', '.join(CODECS)}")
        if self.block_size < 1:
            raise InvalidArgumentError(f"a Parquet row group size of {self.block_size} bytes is not possible")

    def writer_options(self, columns: Sequence[str], key_fields: Iterable[str] = (), *,
                       empty_in_a_row_group: Iterable[str] = ()) -> dict[str, Any]:
        """`pyarrow.parquet.ParquetWriter` arguments for a file of `columns` (`key_fields`: the
        record key columns; a single one is unique per record, so it gets no dictionary;
        `empty_in_a_row_group`: columns with no value in some row group, see `valueless_columns`)."""
        keys = tuple(key_fields)
        unique = set(_UNIQUE_META) | (set(keys) if len(keys) == 1 else set()) | set(empty_in_a_row_group)
        return {
            "compression": CODECS[self.codec],
            "use_dictionary": [c for c in columns if c not in unique] if self.dictionary else False,
            "write_statistics": [c for c in columns if c not in _NO_STATISTICS],
            "write_page_checksum": True,  # as parquet-java writes them: readers verify each page
        }

    def row_group_rows(self, table: pa.Table) -> int:
        """Rows per row group so that each holds about `block_size` bytes of `table`'s data."""
        if not table.num_rows or table.nbytes <= self.block_size:
            return max(1, table.num_rows)
        return max(1, self.block_size * table.num_rows // table.nbytes)


DEFAULT_PARQUET = ParquetSettings()


def valueless_columns(table: pa.Table, row_group_rows: int) -> list[str]:
    """The columns of `table` that hold no value (only nulls) in some row group of
    `row_group_rows` rows. Such a chunk, dictionary-encoded, gets an empty dictionary page, and
    Presto's dictionary filter fails on it ('cannot use empty ranges') whenever a query filters
    on the column: they are written without a dictionary."""
    found = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        if column.null_count == 0:
            continue
        for start in range(0, max(table.num_rows, 1), row_group_rows):
            chunk = column.slice(start, row_group_rows)
            if chunk.null_count == len(chunk):
                found.append(name)
                break
    return found


def empty_dictionary_chunks(metadata: pq.FileMetaData) -> list[tuple[int, str]]:
    """(row group, column path) of every dictionary-encoded column chunk that holds only nulls:
    its dictionary page is empty, which some readers refuse (Presto 0.287's dictionary filter:
    'cannot use empty ranges')."""
    found = []
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for i in range(row_group.num_columns):
            chunk = row_group.column(i)
            if chunk.has_dictionary_page and chunk.statistics is not None \
                    and chunk.statistics.null_count == chunk.num_values:
                found.append((group, chunk.path_in_schema))
    return found
