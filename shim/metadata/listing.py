"""The table's file listing from its metadata table, for the planner (which lists storage today).

`metadata_listing` answers what `shim.layout` lists from storage (partitions, and per partition
the base and log files with their sizes) from the MDT's `files` partition, or says why it cannot
(no MDT, its files partition not built, behind the data table, inconsistent with it, a clean
since the read instant); the planner then lists storage as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from shim.files import parse_base_file, parse_log_file
from shim.layout.slices import FileGroupFiles
from shim.metadata.table import MetadataTable
from shim.properties import TableConfig
from shim.storage import Storage
from shim.timeline.timeline import Timeline


@dataclass(frozen=True, slots=True)
class MetadataListing:
    """Partition -> file name -> size, from the MDT; `files` is None when it cannot be used, and
    `reason` says why."""

    files: dict[str, dict[str, int]] | None
    reason: str | None = None

    def partitions(self) -> list[str]:
        """The listed partitions, sorted."""
        return sorted(self.files or {})

    def file_groups(self, partitions: Iterable[str] | None = None) -> list[FileGroupFiles]:
        """The file groups of `partitions` (default: all), as `shim.layout.slices.list_file_groups`
        builds them from a storage listing."""
        groups: dict[tuple[str, str], FileGroupFiles] = {}
        listed = self.files or {}
        for partition in sorted(listed if partitions is None else partitions):
            for name, size in listed.get(partition, {}).items():
                base = parse_base_file(name, partition)
                log = None if base else parse_log_file(name, partition)
                item = base or log
                if item is None:
                    continue
                group = groups.setdefault((partition, item.file_id), FileGroupFiles(partition, item.file_id, [], []))
                if base is not None:
                    group.base_files.append(replace(base, size=size))
                elif log is not None:
                    group.log_files.append(replace(log, size=size))
        return [groups[key] for key in sorted(groups)]


def metadata_listing(storage: Storage, config: TableConfig, timeline: Timeline,
                     read_instant: str | None) -> MetadataListing:
    """The files of every partition of the table at the storage's root as its MDT lists them, when it can
    serve a read as of `read_instant` (None: the latest); else None, with the reason to list
    storage instead. Like a storage listing, it holds files of commits after `read_instant`
    (planning leaves them out)."""
    mdt = MetadataTable.open(storage, timeline, read_instant, config=config)
    reason = mdt.unusable_reason()
    if reason is not None:
        return MetadataListing(None, reason)
    return MetadataListing(mdt.all_files(mdt.partitions(), committed=False))
