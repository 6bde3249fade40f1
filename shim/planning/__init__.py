"""Planning a read: from a table snapshot and a scan's options to the file slices it reads and
how each file's columns map onto the query's, handed to `shim.read` as a `PlannedScan` to execute
(reading never imports planning).

    snapshot          TableSnapshot: the table as loaded at one moment; plans on it (`plan`)
    planner           build_scan: options checked, read instant resolved, files listed and pruned
    read_instant      which commits a time-travel or incremental read covers
    query_schema      the query schema as of a read instant, and the resolver of each file
    resolvers, partition_fill   per-file column plans (`shim.read.file_plan`) by column id, by
                      name, and filling partition columns from partition paths
    index_pruning, timestamp_ranges   pruning with the metadata table's indexes and date partitions
    file_schemas      the name-mapped view: each file's instant, schema version and mappings
    plan_cache        plans remembered per snapshot

What the catalog and engines use is public here, by name, imported on first use:

    TableSnapshot                       a table as loaded at one moment (`Table.snapshot()`)
    check_time_travel                   an `as_of` refused at or after a write not completed
    commit_file_schema                  the schema mapping of a file a commit wrote
    exact_from_path, typed_partition_values   partition values typed from partition paths
    with_dictionary_partitions          a schema with partition columns dictionary-encoded
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shim.planning.file_schemas import commit_file_schema
    from shim.planning.partition_fill import exact_from_path, typed_partition_values
    from shim.planning.planner import with_dictionary_partitions
    from shim.planning.read_instant import check_time_travel
    from shim.planning.snapshot import TableSnapshot


def __getattr__(name: str) -> object:
    module: object
    if name == "TableSnapshot":
        from shim.planning import snapshot as module
    elif name == "check_time_travel":
        from shim.planning import read_instant as module
    elif name == "commit_file_schema":
        from shim.planning import file_schemas as module
    elif name in ("exact_from_path", "typed_partition_values"):
        from shim.planning import partition_fill as module
    elif name == "with_dictionary_partitions":
        from shim.planning import planner as module
    else:
        raise AttributeError(f"module 'shim.planning' has no attribute {name!r}")
    return getattr(module, name)


__all__ = [
    "TableSnapshot",
    "check_time_travel",
    "commit_file_schema",
    "exact_from_path",
    "typed_partition_values",
    "with_dictionary_partitions",
]
