"""`TableSnapshot`: a table as loaded at one moment (its configuration, active timeline, schema
history and files) and the plans made on it. `shim.Table` is the user's API; each of its reads
plans on its current snapshot (`Table.snapshot()`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from shim.layout.committed import CommittedFiles
from shim.metadata.table_files import TableFiles
from shim.planning.plan_cache import PlanCache
from shim.planning.planner import Scan, build_scan
from shim.planning.query_schema import table_schemas_as_of
from shim.properties import TableConfig
from shim.read.cache import ByteBoundedCache
from shim.read.table_schemas import TableSchemas
from shim.scan_options import ScanMode, ScanOptions
from shim.storage import Storage
from shim.timeline.archived import archived_completed_instants
from shim.timeline.instant import instant_key
from shim.timeline.schemas import SchemaHistory
from shim.timeline.stamp import timeline_stamp
from shim.timeline.timeline import Timeline

if TYPE_CHECKING:
    from shim.layout.listing import TableListing
    from shim.layout.slices import FileSlice


class TableSnapshot:
    """A table as loaded at one moment. It never changes: scans running on it, in any thread, keep
    their view, and a plan never pairs an old timeline with today's files (a clean since then would
    make file groups vanish from it without a trace).

    Attributes:
        storage, path, config: the table's storage, its root, and `hoodie.properties` as loaded.
        metadata: whether reads may list files from the metadata table.
        files: the snapshot's files (from the metadata table or a storage listing).
        committed: which files and log blocks completed commits wrote.
        slice_cache: merged file slices remembered between scans (shared by the table's snapshots).
        stamp: the timeline's fingerprint when it was loaded (`shim.timeline.stamp`).
    """

    def __init__(self, storage: Storage, config: TableConfig, timeline: Timeline, files: TableFiles,
                 stamp: tuple[int, ...], *, metadata: bool, slice_cache: ByteBoundedCache[Any]) -> None:
        self.storage = storage
        self.path = storage.root
        self.config = config
        self.metadata = metadata
        self.files = files
        self.stamp = stamp
        self.slice_cache = slice_cache
        self.committed = CommittedFiles(timeline)
        self._timeline = timeline
        self._schema_history = SchemaHistory(self.path, timeline)
        self._schemas: dict[str | None, TableSchemas] = {}
        self._plans = PlanCache()
        self._with_archive: TableSnapshot | None = None
        self._loaded: TableSnapshot = self  # the snapshot loaded from storage (this one, or what it extends)
        self._files_gone = False

    @classmethod
    def load(cls, storage: Storage, config: TableConfig, *, metadata: bool = True,
             slice_cache: ByteBoundedCache[Any] | None = None) -> TableSnapshot:
        """Load the timeline and the files of the table at the storage's root (`slice_cache`: none
        kept when not given)."""
        stamp = timeline_stamp(storage)  # before the listing: a change during it loads again
        timeline = Timeline.load(storage, config)
        files = TableFiles(storage, config, timeline, metadata=metadata)
        return cls(storage, config, timeline, files, stamp, metadata=metadata,
                   slice_cache=slice_cache if slice_cache is not None else ByteBoundedCache(0))

    def __repr__(self) -> str:
        return f"TableSnapshot({self.path!r}, {len(self._timeline.instants)} instants)"

    @property
    def active_timeline(self) -> Timeline:
        """The timeline loaded with this snapshot."""
        return self._timeline

    @property
    def schema_history(self) -> SchemaHistory:
        """Schema-on-read versions of the table (InternalSchema by instant)."""
        return self._schema_history

    @property
    def listing(self) -> TableListing:
        """The storage listing of this snapshot (what reads list when the metadata table cannot
        serve them)."""
        return self.files.storage_listing

    def is_stale(self) -> bool:
        """Whether the table changed since this snapshot was loaded (its timeline's fingerprint
        differs, a few `stat` calls), or a read found one of its files gone."""
        return self._loaded._files_gone or timeline_stamp(self.storage) != self.stamp

    def files_gone(self) -> None:
        """Note that a read found a file of this snapshot gone: its listing is stale."""
        self._loaded._files_gone = True

    def schemas_as_of(self, read_instant: str | None) -> TableSchemas:
        """Query schema and per-file resolver at a read instant (remembered: they never change)."""
        cached = self._schemas.get(read_instant)
        if cached is None:
            cached = self._schemas[read_instant] = table_schemas_as_of(self, read_instant)
        return cached

    def plan(self, options: ScanOptions, *, files: bool = True) -> Scan:
        """Check `options` against this snapshot and plan the file slices to read (remembered per
        request). `files=False` plans the schemas only."""
        planned = options.plan_only()
        if not files:
            return build_scan(self, planned, plan_files=False)
        return self._plans.planned(planned.key(), planned.filter, lambda: build_scan(self, planned))

    def schema(self, as_of: str | None = None) -> pa.Schema:
        """Data columns (no meta columns) in table order, as of `as_of` (default: latest), each
        field's column id in its metadata (`PARQUET:field_id`)."""
        return self.plan(ScanOptions(as_of=as_of), files=False).data_schema

    def file_slices(self, as_of: str | None = None, *, mode: ScanMode = "snapshot") -> list[FileSlice]:
        """The file slices a scan as of `as_of` reads (read-optimized: base files only)."""
        return self.plan(ScanOptions(mode=mode, as_of=as_of)).slices

    def reaching(self, instant: str | None) -> TableSnapshot:
        """The snapshot to read as of (or from) `instant`: this one, or, when `instant` precedes the
        active timeline's first write and instants were archived, `with_archive()`."""
        writes = self._timeline.completed_writes()
        if instant is None or self._timeline.includes_archive:
            return self
        if writes and instant_key(instant) >= instant_key(writes[0].requested_time):
            return self
        return self.with_archive()

    def with_archive(self) -> TableSnapshot:
        """This snapshot with the archive's completed instants on its timeline (read once): reads
        as of archived commits and incremental windows over them see which writes completed when
        and what they wrote. This snapshot itself when nothing was archived."""
        found = self._with_archive
        if found is not None:
            return found
        archived = archived_completed_instants(self.storage, self.config)
        extended = self
        if archived:
            extended = TableSnapshot(self.storage, self.config, self._timeline.including_archive(archived),
                                     self.files, self.stamp, metadata=self.metadata, slice_cache=self.slice_cache)
            extended._with_archive, extended._loaded = extended, self
        self._with_archive = extended
        return extended
