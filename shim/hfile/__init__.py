"""HFile, the sorted key-value file format of the metadata table's base files and log blocks."""

from __future__ import annotations

from shim.hfile.reader import WHOLE_FILE_BYTES, HFileReader, IndexEntry

__all__ = ["WHOLE_FILE_BYTES", "HFileReader", "IndexEntry"]
