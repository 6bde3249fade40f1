"""Checks on the Parquet files the project writes."""

from __future__ import annotations

import pyarrow.parquet as pq

from shim.write.parquet_settings import empty_dictionary_chunks as _empty_dictionary_chunks


def empty_dictionary_chunks(path: str) -> list[tuple[int, str]]:
    """(row group, column) of every dictionary-encoded column chunk of the file at `path` holding
    only nulls: its dictionary page is empty, which Presto 0.287's dictionary filter refuses."""
    return _empty_dictionary_chunks(pq.ParquetFile(path).metadata)
