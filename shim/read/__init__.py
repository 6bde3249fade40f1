"""Reading a table: a planned scan (`planned_scan.PlannedScan`, made by `shim.planning`) executed
into Arrow batches (`scan_stream`): base files and log blocks read, records merged, per-file column
plans (`file_plan`) applied.

The modules of this package are the shim's own. What the catalog and engines use of them is
public here, by name (`from shim.read import read_file_schema`), imported on first use:

    SkippedBlocks, SKIPPED_BLOCKS_KEY   corrupt log regions a `corrupt="skip"` scan skipped
    TimeLimit, NO_LIMIT                 a scan's deadline
    parquet_footer, read_file_schema    a base file's Parquet footer and Arrow schema
    is_lance                            whether a base file is a Lance file (Hudi 1.2)
    pinned_keys, files_with_any         the record keys a filter pins, and the base files whose
                                        bloom filter may hold one of them (key lookups)
    slice_merge_state                   how a snapshot read merges one file slice
    value_types                         a schema's dictionary columns as their value types
    ColumnStats                         a column's stats in a file, from the metadata table
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shim.metadata.records import ColumnStats
    from shim.read.base_files import parquet_footer, read_file_schema
    from shim.read.damage import SKIPPED_BLOCKS_KEY, SkippedBlocks
    from shim.read.dictionary_filter import value_types
    from shim.read.key_lookup import files_with_any, pinned_keys
    from shim.read.lance_files import is_lance
    from shim.read.merged_slice import slice_merge_state
    from shim.read.time_limit import NO_LIMIT, TimeLimit


def __getattr__(name: str) -> object:
    module: object
    if name in ("SKIPPED_BLOCKS_KEY", "SkippedBlocks"):
        from shim.read import damage as module
    elif name in ("NO_LIMIT", "TimeLimit"):
        from shim.read import time_limit as module
    elif name in ("parquet_footer", "read_file_schema"):
        from shim.read import base_files as module
    elif name in ("files_with_any", "pinned_keys"):
        from shim.read import key_lookup as module
    elif name == "is_lance":
        from shim.read import lance_files as module
    elif name == "slice_merge_state":
        from shim.read import merged_slice as module
    elif name == "value_types":
        from shim.read import dictionary_filter as module
    elif name == "ColumnStats":
        from shim.metadata import records as module
    else:
        raise AttributeError(f"module 'shim.read' has no attribute {name!r}")
    return getattr(module, name)


__all__ = [
    "NO_LIMIT",
    "SKIPPED_BLOCKS_KEY",
    "ColumnStats",
    "SkippedBlocks",
    "TimeLimit",
    "files_with_any",
    "is_lance",
    "parquet_footer",
    "pinned_keys",
    "read_file_schema",
    "slice_merge_state",
    "value_types",
]
