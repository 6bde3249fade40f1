"""What a table's folders hold, listed once per table snapshot.

A `Table` reads as of the timeline it loaded; files written by later commits are invisible to it,
so its listing can be kept until the table is refreshed (which also catches cleaned-up files).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from shim.layout.partitions import list_partitions
from shim.layout.slices import FileGroupFiles, list_file_groups
from shim.properties import TableConfig
from shim.storage import Storage


@dataclass(frozen=True, slots=True)
class ListingSource:
    """Where a read's partitions and files were listed from: the metadata table's `files`
    partition, or storage (`reason` says why not the metadata table)."""

    metadata: bool
    reason: str | None = None

    def __str__(self) -> str:
        return "the metadata table" if self.metadata else f"storage ({self.reason or 'no metadata table'})"


class TableListing:
    """Cached partition list and per-partition file groups of one table."""

    def __init__(self, storage: Storage, config: TableConfig) -> None:
        self.storage = storage
        self.config = config
        self._partitions: list[str] | None = None
        self._groups: dict[str, list[FileGroupFiles]] = {}
        self._lock = threading.Lock()

    def partitions(self) -> list[str]:
        """Every partition of the table ("" when not partitioned)."""
        with self._lock:
            if self._partitions is None:
                self._partitions = list_partitions(self.storage, self.config)
            return list(self._partitions)

    def file_groups(self, partitions: Sequence[str]) -> list[FileGroupFiles]:
        """The file groups (all their files) of the given partitions."""
        missing = [p for p in partitions if p not in self._groups]
        if missing:
            listed = list_file_groups(self.storage, missing)
            by_partition: dict[str, list[FileGroupFiles]] = {p: [] for p in missing}
            for group in listed:
                by_partition[group.partition_path].append(group)
            with self._lock:
                self._groups.update(by_partition)
        return [group for p in partitions for group in self._groups[p]]
