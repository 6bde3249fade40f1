"""Hudi's metadata table: its file listing and indexes, read as of a data table's timeline."""

from __future__ import annotations

from shim.metadata.listing import MetadataListing, metadata_listing
from shim.metadata.records import BloomFilterEntry, ColumnStats, RecordLocation, RecordType
from shim.metadata.table import MetadataTable, MetadataTableError

__all__ = ["BloomFilterEntry", "ColumnStats", "MetadataListing", "MetadataTable", "MetadataTableError", "RecordLocation",
           "RecordType", "metadata_listing"]
