"""Partitions: finding them on storage and reading column values from their paths."""

from __future__ import annotations

import os
from urllib.parse import unquote

from shim.files import BASE_FILE_EXTENSIONS, PARTITION_METAFILE_PREFIX
from shim.properties import TableConfig
from shim.storage import Storage

DEFAULT_PARTITION_NAMES = ("__HIVE_DEFAULT_PARTITION__", "default")


def list_partitions(storage: Storage, config: TableConfig) -> list[str]:
    """Relative paths of all partitions of the table at the storage's root ("" for a
    non-partitioned table), sorted.

    A folder is a partition when it holds Hudi's partition metafile or data files; hidden folders
    (`.hoodie`, `.spark-staging`, ...) are skipped, and so is the metadata table.
    """
    if not config.is_partitioned:
        return [""]
    found: list[str] = []
    table_path = storage.root
    for root, dirs, files in storage.walk(table_path):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        if root == table_path:
            continue
        if any(_is_partition_marker(name) for name in files):
            found.append(os.path.relpath(root, table_path).replace(os.sep, "/"))
    return sorted(found)


def _is_partition_marker(name: str) -> bool:
    if name.startswith(PARTITION_METAFILE_PREFIX):
        return True
    if name.startswith(".") and ".log." in name:
        return True
    return name.endswith(BASE_FILE_EXTENSIONS) and not name.startswith(".")


def partition_values(partition_path: str, config: TableConfig) -> dict[str, str | None] | None:
    """Column -> raw string value encoded in a partition path, or None when the path does not map
    one-to-one onto the partition fields (timestamp-based or custom key generators reformat values).

    The default partition (`__HIVE_DEFAULT_PARTITION__`, `default`) reads as NULL.
    """
    fields = config.partition_fields
    if not fields or not partition_path:
        return {} if not fields else None
    if config.spelled_partition_fields != fields:  # dates formatted from a column, or fields of unknown type
        return None
    segments = partition_path.split("/")
    if len(segments) != len(fields):
        return None
    values: dict[str, str | None] = {}
    for name, segment in zip(fields, segments):
        if config.hive_style_partitioning:
            key, sep, raw = segment.partition("=")
            if not sep or key != name:
                return None
        else:
            raw = segment
        if config.url_encode_partitioning:
            raw = unquote(raw)
        values[name] = None if raw in DEFAULT_PARTITION_NAMES else raw
    return values
