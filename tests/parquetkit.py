"""Checks on the Parquet files the project writes."""

from __future__ import annotations

import pyarrow.parquet as pq


def empty_dictionary_chunks(path: str) -> list[tuple[int, str]]:
    """(row group, column) of every dictionary-encoded column chunk holding only nulls: its
    dictionary page is empty, which Presto 0.287's dictionary filter refuses."""
    metadata = pq.ParquetFile(path).metadata
    found = []
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for i in range(row_group.num_columns):
            chunk = row_group.column(i)
            if chunk.has_dictionary_page and chunk.statistics is not None \
                    and chunk.statistics.null_count == chunk.num_values:
                found.append((group, chunk.path_in_schema))
    return found
