"""A table snapshot's files for a read: listed from its metadata table when that can serve the
read, else from storage, and the index (column stats, record index, ...) that comes with it.

Listing storage costs a request per partition folder; the metadata table's `files` partition
holds the same listing in a few files. `TableFiles.for_read` uses it when the table lists it as
built and it is complete up to the read instant (`MetadataTable.unusable_reason`), and says why
not otherwise (`ListingSource.reason`); planning then lists storage as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from shim.errors import HudiShimError
from shim.layout.listing import ListingSource, TableListing
from shim.layout.slices import FileGroupFiles
from shim.metadata.listing import MetadataListing
from shim.metadata.table import MetadataTable
from shim.properties import TableConfig
from shim.storage import Storage, join
from shim.timeline.timeline import Timeline

T = TypeVar("T")
TURNED_OFF = "turned off (metadata=False or hoodie.metadata.enable=false)"


class MetadataFiles:
    """The listing the metadata table's `files` partition gives (every partition, read once)."""

    def __init__(self, listing: MetadataListing) -> None:
        self._partitions = listing.partitions()
        groups: dict[str, list[FileGroupFiles]] = {p: [] for p in self._partitions}
        for group in listing.file_groups():
            groups[group.partition_path].append(group)
        self._groups = groups

    def partitions(self) -> list[str]:
        """Every partition of the table, as the metadata table lists them."""
        return list(self._partitions)

    def file_groups(self, partitions: Sequence[str]) -> list[FileGroupFiles]:
        """The file groups (all their files) of the given partitions."""
        return [group for p in partitions for group in self._groups.get(p, ())]


@dataclass(frozen=True, slots=True)
class ReadFiles:
    """What one read lists: partitions and file groups, where they came from, and the metadata
    table (for its indexes) when it served the listing.

    Attributes:
        source: the metadata table or storage, and why storage.
        index: the metadata table, when it serves this read (its column stats, record index and
            bloom filters then describe exactly the files listed); None otherwise.
    """

    listing: TableListing | MetadataFiles
    source: ListingSource
    index: GuardedIndex | None

    def partitions(self) -> list[str]:
        """Every partition of the table ("" when not partitioned)."""
        return self.listing.partitions()

    def file_groups(self, partitions: Sequence[str]) -> list[FileGroupFiles]:
        """The file groups (all their files) of the given partitions."""
        return self.listing.file_groups(partitions)


class GuardedIndex:
    """A metadata table read by one thread at a time (its partitions cache what they read)."""

    def __init__(self, mdt: MetadataTable) -> None:
        self._mdt = mdt
        self._lock = threading.Lock()

    @property
    def enabled_partitions(self) -> tuple[str, ...]:
        """The metadata table's partitions built (files, column_stats, record_index, ...)."""
        return self._mdt.enabled_partitions

    def read(self, action: Callable[[MetadataTable], T]) -> T:
        """`action(mdt)`, alone on the metadata table."""
        with self._lock:
            return action(self._mdt)


class TableFiles:
    """The files of one table snapshot (its timeline loaded once): the storage listing, and the
    metadata table's, each made once when first needed."""

    def __init__(self, storage: Storage, config: TableConfig, timeline: Timeline, *, metadata: bool = True) -> None:
        self.storage = storage
        self.config = config
        self.timeline = timeline
        self.metadata = metadata
        self.storage_listing = TableListing(storage, config)
        self._lock = threading.Lock()
        self._index: GuardedIndex | None = None
        self._files: MetadataFiles | None = None
        self._problem: str | None = None

    def for_read(self, read_instant: str | None, *, metadata: bool | None = None) -> ReadFiles:
        """The listing of a read as of `read_instant` (None: the latest): the metadata table's
        when it can serve it, the table's setting allows and `metadata` is not False, else storage's."""
        if not self.metadata or metadata is False:
            return ReadFiles(self.storage_listing, ListingSource(False, TURNED_OFF), None)
        index, files, reason = self._metadata()
        if reason is None and index is not None:
            reason = index.read(lambda mdt: mdt.unusable_reason(read_instant))
        if reason is not None or index is None or files is None:
            return ReadFiles(self.storage_listing, ListingSource(False, reason), None)
        return ReadFiles(files, ListingSource(True), index)

    def _metadata(self) -> tuple[GuardedIndex | None, MetadataFiles | None, str | None]:
        """The metadata table and its listing, when it can serve a read of the latest instant
        (a metadata table behind the data table serves no read: storage is listed then)."""
        with self._lock:
            if self._index is None and self._problem is None:
                mdt = MetadataTable.open(self.storage, self.timeline, None, config=self.config)
                self._problem = mdt.unusable_reason(None)
                if self._problem is None:
                    try:
                        self._files = self._listed(mdt)
                    except HudiShimError as exc:  # a damaged metadata table: storage still lists the files
                        self._problem = f"the metadata table cannot be read: {exc}"
                    else:
                        self._index = GuardedIndex(mdt)
            return self._index, self._files, self._problem

    def _listed(self, mdt: MetadataTable) -> MetadataFiles:
        listing = MetadataListing(mdt.all_files(mdt.partitions(), committed=False))
        root = self.storage.root
        self.storage.remember_sizes((join(root, partition, name), size)
                                    for partition, files in (listing.files or {}).items()
                                    for name, size in files.items())
        return MetadataFiles(listing)
