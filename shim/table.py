"""`Table`: the public entry point for reading a Hudi table."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import pyarrow as pa

from shim.errors import FileGoneError, TableNotFoundError
from shim.layout.listing import TableListing
from shim.layout.slices import FileSlice
from shim.properties import TableConfig, config_path, read_table_config
from shim.read.cache import ByteBoundedCache
from shim.read.committed import CommittedFiles
from shim.read.damage import SkippedBlocks
from shim.read.file_schemas import FileSchema
from shim.read.plan_cache import PlanCache
from shim.read.request import Scan, build_scan
from shim.read.schemas import table_schemas_as_of
from shim.read.slice_state import RememberedSlice
from shim.read.table_schemas import TableSchemas
from shim.read.time_limit import NO_LIMIT, TimeLimit
from shim.scan_options import ScanMode, ScanOptions, takes_scan_options
from shim.storage import Storage, storage_for
from shim.timeline.archived import ArchivedInstant, archived_completed_instants, read_archived_timeline
from shim.timeline.instant import Instant, instant_key
from shim.timeline.schemas import SchemaHistory
from shim.timeline.stamp import timeline_stamp
from shim.timeline.timeline import Timeline

__all__ = ["Table", "open_table"]

DEFAULT_MERGE_CACHE_BYTES = 256 * 2**20
DEFAULT_SCAN = ScanOptions()


def open_table(location: str | os.PathLike[str] | Storage, *, merge_cache_bytes: int = DEFAULT_MERGE_CACHE_BYTES,
               storage_options: Mapping[str, object] | None = None) -> Table:
    """Open the Hudi table at a local path, a `file://` URI or an object store's URI
    (`s3://bucket/path`, `gs://...`, `hdfs://...`), or at the root of a `Storage`.

    Args:
        merge_cache_bytes: memory for remembering merged file slices between scans (0: none).
        storage_options: for an object store: credentials, region, endpoint (see
            `shim.storage.options`), kept by the table's storage (`Table.storage`) and by nothing
            else; without them the `AWS_*` environment and pyarrow's defaults apply.

    Raises:
        TableNotFoundError: no `.hoodie/hoodie.properties` there.
        UnsupportedFeatureError: the table uses a version or feature hudi-shim cannot read.
    """
    storage = location if isinstance(location, Storage) else storage_for(location, storage_options)
    config = read_table_config(storage)
    path = storage.root
    if config is None:
        if not storage.container_exists():
            raise TableNotFoundError(f"no Hudi table at {path}: the bucket does not exist", path=path)
        raise TableNotFoundError(f"no Hudi table at {path}: {config_path(path)} does not exist", path=path)
    return Table(storage, config, merge_cache_bytes=merge_cache_bytes)


class Table:
    """A Hudi table. Its reads (`scan`, `read`, `incremental`, `schema`, `file_slices`, `timeline`...)
    see the table as it is at each call: when instants were added or removed since this object
    loaded its timeline, they use the table opened anew. `active_timeline` is this object's own
    timeline; `refresh()` reloads it in place."""

    def __init__(self, storage: Storage, config: TableConfig, *,
                 merge_cache_bytes: int = DEFAULT_MERGE_CACHE_BYTES) -> None:
        self.storage = storage
        self.path = storage.root
        self.config = config
        self.slice_cache: ByteBoundedCache[RememberedSlice] = ByteBoundedCache(merge_cache_bytes)
        self._latest: Table = self
        self._load()

    def _load(self) -> None:
        self._stamp = timeline_stamp(self.storage)  # before the listing: a change during it reloads again
        self._timeline = Timeline.load(self.storage, self.config)
        self._schema_history = SchemaHistory(self.path, self._timeline)
        self.listing = TableListing(self.storage, self.config)
        self._schemas: dict[str | None, TableSchemas] = {}
        self._plans = PlanCache()
        self._with_archive: Table | None = None
        self._files_gone = False
        self.committed = CommittedFiles(self._timeline)

    def __repr__(self) -> str:
        return f"Table({self.path!r}, {self.config.table_type.value}, version {self.config.version})"

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def active_timeline(self) -> Timeline:
        """The loaded timeline object."""
        return self._timeline

    @property
    def schema_history(self) -> SchemaHistory:
        """Schema-on-read versions of the table (InternalSchema by instant)."""
        return self._schema_history

    def schemas_as_of(self, read_instant: str | None) -> TableSchemas:
        """Query schema and per-file resolver at a read instant (cached: they never change)."""
        cached = self._schemas.get(read_instant)
        if cached is None:
            cached = self._schemas[read_instant] = table_schemas_as_of(self, read_instant)
        return cached

    def refresh(self) -> None:
        """Reload the timeline to see commits completed since the table was opened."""
        self._load()

    def current(self, *, reopen: bool = False) -> Table:
        """The table as it is now: this object while its timeline is unchanged, else the table
        opened anew (kept for the next calls). A plan must not pair an old timeline with today's
        files (a clean since then would make file groups vanish from it without a trace); this
        object itself never changes, so scans already running on it, in any thread, keep their view."""
        latest = self._latest
        if reopen or latest._files_gone or timeline_stamp(self.storage) != latest._stamp:
            latest = open_table(self.storage, merge_cache_bytes=0)
            latest.slice_cache = self.slice_cache
            self._latest = latest
        return latest

    def needs_reload(self) -> bool:
        """Whether `current()` would open the table anew: its timeline changed since the latest
        object was loaded, or a read found one of its files gone."""
        latest = self._latest
        return latest._files_gone or timeline_stamp(self.storage) != latest._stamp

    def reaching(self, instant: str | None) -> Table:
        """The table to read as of (or from) `instant`: this one, or, when `instant` precedes the
        active timeline's first write and instants were archived, `with_archive()`."""
        writes = self._timeline.completed_writes()
        if instant is None or self._timeline.includes_archive:
            return self
        if writes and instant_key(instant) >= instant_key(writes[0].requested_time):
            return self
        return self.with_archive()

    def with_archive(self) -> Table:
        """This table with the archive's completed instants on its timeline (read once): reads
        as of archived commits and incremental windows over them see which writes completed when
        and what they wrote. This object itself when nothing was archived."""
        found = self._with_archive
        if found is not None:
            return found
        archived = archived_completed_instants(self.storage, self.config)
        if not archived:
            self._with_archive = self
            return self
        extended = Table.__new__(Table)
        extended.storage, extended.path, extended.config = self.storage, self.path, self.config
        extended.slice_cache = self.slice_cache
        extended._stamp, extended.listing, extended._files_gone = self._stamp, self.listing, False
        extended._timeline = self._timeline.including_archive(archived)
        extended._schema_history = SchemaHistory(self.path, extended._timeline)
        extended._schemas, extended._plans = {}, PlanCache()
        extended.committed = CommittedFiles(extended._timeline)
        extended._latest = extended._with_archive = extended
        self._with_archive = extended
        return extended

    def timeline(self) -> list[Instant]:
        """Every instant of the active timeline (all actions and states), oldest first."""
        return list(self.current()._timeline.instants)

    def archived_timeline(self) -> list[ArchivedInstant]:
        """Every archived instant (archive logs of versions 6 and 7, every state; the LSM timeline
        of 8+, completed instants), oldest first; [] when none."""
        return read_archived_timeline(self.storage, self.config)

    def file_slices(self, as_of: str | None = None, *, mode: ScanMode = "snapshot") -> list[FileSlice]:
        """The file slices a scan as of `as_of` reads (read-optimized: base files only)."""
        return self.plan(ScanOptions(mode=mode, as_of=as_of)).slices

    def file_schemas(self, as_of: str | None = None, mode: ScanMode = "snapshot") -> list[FileSchema]:
        """For every base file and log data block a scan reads: the instant that wrote it, its
        schema version, and how each table column maps onto its columns (the name-mapped view)."""
        return self.plan(ScanOptions(mode=mode, as_of=as_of)).file_schemas()

    def schema(self, as_of: str | None = None) -> pa.Schema:
        """Data columns (no meta columns) in table order, as of `as_of` (default: latest).

        Each field carries its column id in its metadata (`PARQUET:field_id`), nested fields too.
        """
        return self.plan(ScanOptions(as_of=as_of), files=False).data_schema

    @takes_scan_options(ScanOptions)
    def scan(self, options: ScanOptions) -> pa.RecordBatchReader:
        """Stream the table's rows; takes the options of `ScanOptions` (positionally in its
        order, or by name)."""
        return self.plan(options).reader(options.skipped, _time_limit(options.time_limit))

    def plan(self, options: ScanOptions = DEFAULT_SCAN, *, files: bool = True) -> Scan:
        """Check `options` against the table (as it is now) and plan the file slices to read.

        The plan is remembered while the table is unchanged. `files=False` plans the schemas only.
        Raises as `scan` does."""
        table = self.current()
        planned = options.plan_only()
        if not files:
            return build_scan(table, planned, plan_files=False)
        return table._plans.planned(planned.key(), planned.filter, lambda: build_scan(table, planned))

    def files_gone(self) -> None:
        """Note that a read found a file of this table gone: its listing is stale, and the next
        read (`current()`) lists the files anew."""
        self._files_gone = True

    @takes_scan_options(ScanOptions)
    def read(self, options: ScanOptions) -> pa.Table:
        """Like `scan`, collected into a `pyarrow.Table`.

        When a file the read planned is removed meanwhile (a concurrent clean or rollback), the
        timeline is reloaded and the read runs once more, on a plan without it. With
        `corrupt="skip"`, the result's schema metadata holds the report of the corrupt log
        regions skipped (`shim.read.damage.SKIPPED_BLOCKS_KEY`: JSON `{"count", "blocks"}`), and
        `skipped`, when given, receives them."""
        time_limit = _time_limit(options.time_limit)  # one limit for both attempts
        for attempt in (1, 2):
            skipped = SkippedBlocks()
            table = self if attempt == 1 else self.current(reopen=True)
            try:
                result = table.plan(options).reader(skipped, time_limit).read_all()
            except FileGoneError:
                if attempt == 2:
                    raise
                continue
            if options.skipped is not None:
                for block in skipped.blocks:
                    options.skipped.add(block)
            if options.corrupt == "skip":
                result = result.replace_schema_metadata({**(result.schema.metadata or {}), **skipped.metadata()})
            return result
        raise AssertionError("unreachable")

    def incremental(
        self,
        start: str,
        end: str | None = None,
        columns: Sequence[str] | None = None,
        include_meta: bool = False,
    ) -> pa.Table:
        """Latest values of the records written by commits in (`start`, `end`] (end: latest)."""
        return self.plan(ScanOptions(columns=columns, include_meta=include_meta, changes=(start, end))).reader().read_all()


def _time_limit(value: float | TimeLimit | None) -> TimeLimit:
    if value is None:
        return NO_LIMIT
    return value if isinstance(value, TimeLimit) else TimeLimit.starting_now(float(value))
