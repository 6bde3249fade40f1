"""`Table`: the public entry point for reading a Hudi table."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence

import pyarrow as pa

from shim.errors import FileGoneError, TableNotFoundError
from shim.layout.listing import ListingSource
from shim.layout.slices import FileSlice
from shim.planning.file_schemas import FileSchema
from shim.planning.planner import Scan
from shim.planning.snapshot import TableSnapshot
from shim.properties import TableConfig, config_path, read_table_config
from shim.read.cache import ByteBoundedCache
from shim.read.damage import SkippedBlocks
from shim.read.slice_state import RememberedSlice
from shim.read.time_limit import NO_LIMIT, TimeLimit
from shim.scan_options import ScanMode, ScanOptions, metadata_option, takes_scan_options
from shim.storage import Storage, storage_for
from shim.timeline.archived import ArchivedInstant, read_archived_timeline
from shim.timeline.instant import Instant, normalize_instant

__all__ = ["Table", "open_table"]

DEFAULT_MERGE_CACHE_BYTES = 256 * 2**20
DEFAULT_SCAN = ScanOptions()


def open_table(location: str | os.PathLike[str] | Storage, *, merge_cache_bytes: int = DEFAULT_MERGE_CACHE_BYTES,
               storage_options: Mapping[str, object] | None = None, metadata: bool = True,
               options: Mapping[str, str] | None = None) -> Table:
    """Open the Hudi table at a local path, a `file://` URI or an object store's URI
    (`s3://bucket/path`, `gs://...`, `hdfs://...`), or at the root of a `Storage`.

    Args:
        merge_cache_bytes: memory for remembering merged file slices between scans (0: none).
        storage_options: for an object store: credentials, region, endpoint (see
            `shim.storage.options`), kept by the table's storage (`Table.storage`) and by nothing
            else; without them the `AWS_*` environment and pyarrow's defaults apply.
        metadata: list files from the table's metadata table and prune with its indexes where it
            can serve a read (False: always list storage, open footers).
        options: Hudi's read options by their names; `hoodie.metadata.enable` ("false": as
            `metadata=False`).

    Raises:
        TableNotFoundError: no `.hoodie/hoodie.properties` there.
        UnsupportedFeatureError: the table uses a version or feature hudi-shim cannot read.
    """
    metadata = metadata and metadata_option(options)
    storage = location if isinstance(location, Storage) else storage_for(location, storage_options)
    config = read_table_config(storage)
    path = storage.root
    if config is None:
        if not storage.container_exists():
            raise TableNotFoundError(f"no Hudi table at {path}: the bucket does not exist", path=path)
        raise TableNotFoundError(f"no Hudi table at {path}: {config_path(path)} does not exist", path=path)
    return Table(storage, config, merge_cache_bytes=merge_cache_bytes, metadata=metadata)


class Table:
    """A Hudi table. Its reads (`scan`, `read`, `incremental`, `schema`, `file_slices`, `timeline`...)
    see the table as it is at each call: they plan on its current snapshot (`snapshot()`), loaded
    anew when instants were added or removed since the last one was loaded."""

    def __init__(self, storage: Storage, config: TableConfig, *,
                 merge_cache_bytes: int = DEFAULT_MERGE_CACHE_BYTES, metadata: bool = True) -> None:
        self.storage = storage
        self.path = storage.root
        self.metadata = metadata
        self._slice_cache: ByteBoundedCache[RememberedSlice] = ByteBoundedCache(merge_cache_bytes)
        self._lock = threading.Lock()
        self._snapshot = TableSnapshot.load(storage, config, metadata=metadata, slice_cache=self._slice_cache)

    def __repr__(self) -> str:
        return f"Table({self.path!r}, {self.config.table_type.value}, version {self.config.version})"

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def config(self) -> TableConfig:
        """The table's `hoodie.properties`, as its latest snapshot loaded them."""
        return self._snapshot.config

    def snapshot(self, *, reopen: bool = False) -> TableSnapshot:
        """The table as it is now: the latest snapshot while the table's timeline is unchanged, else
        one loaded anew (`reopen`: loaded anew in any case). Snapshots never change: scans running
        on an older one keep their view.

        Raises:
            TableNotFoundError: the table is gone.
        """
        latest = self._snapshot
        if not reopen and not latest.is_stale():
            return latest
        config = read_table_config(self.storage)
        if config is None:
            raise TableNotFoundError(f"no Hudi table at {self.path}: {config_path(self.path)} does not exist",
                                     path=self.path)
        fresh = TableSnapshot.load(self.storage, config, metadata=self.metadata, slice_cache=self._slice_cache)
        with self._lock:
            self._snapshot = fresh
        return fresh

    def refresh(self) -> None:
        """Reload the timeline to see commits completed since the table was opened."""
        self.snapshot(reopen=True)

    def listing_source(self, as_of: str | None = None) -> ListingSource:
        """Where a read as of `as_of` (default: latest) lists its files: the metadata table, or
        storage and why (no metadata table, its files partition not built, behind the data
        table, a clean since `as_of`, turned off)."""
        snapshot, instant = self.snapshot(), None
        if as_of is not None:
            requested = normalize_instant(as_of)
            snapshot = snapshot.reaching(requested)
            instant = snapshot.active_timeline.resolve_as_of(requested)
        return snapshot.files.for_read(instant).source

    def timeline(self) -> list[Instant]:
        """Every instant of the active timeline (all actions and states), oldest first."""
        return list(self.snapshot().active_timeline.instants)

    def archived_timeline(self) -> list[ArchivedInstant]:
        """Every archived instant (archive logs of versions 6 and 7, every state; the LSM timeline
        of 8+, completed instants), oldest first; [] when none."""
        return read_archived_timeline(self.storage, self.config)

    def file_slices(self, as_of: str | None = None, *, mode: ScanMode = "snapshot") -> list[FileSlice]:
        """The file slices a scan as of `as_of` reads (read-optimized: base files only)."""
        return self.snapshot().file_slices(as_of, mode=mode)

    def file_schemas(self, as_of: str | None = None, mode: ScanMode = "snapshot") -> list[FileSchema]:
        """For every base file and log data block a scan reads: the instant that wrote it, its
        schema version, and how each table column maps onto its columns (the name-mapped view)."""
        return self.plan(ScanOptions(mode=mode, as_of=as_of)).file_schemas()

    def schema(self, as_of: str | None = None) -> pa.Schema:
        """Data columns (no meta columns) in table order, as of `as_of` (default: latest).

        Each field carries its column id in its metadata (`PARQUET:field_id`), nested fields too.
        """
        return self.snapshot().schema(as_of)

    @takes_scan_options(ScanOptions)
    def scan(self, options: ScanOptions) -> pa.RecordBatchReader:
        """Stream the table's rows; takes the options of `ScanOptions` (positionally in its
        order, or by name)."""
        return self.plan(options).reader(options.skipped, _time_limit(options.time_limit))

    def plan(self, options: ScanOptions = DEFAULT_SCAN, *, files: bool = True) -> Scan:
        """Check `options` against the table (as it is now) and plan the file slices to read.

        The plan is remembered while the table is unchanged. `files=False` plans the schemas only.
        Raises as `scan` does."""
        return self.snapshot().plan(options, files=files)

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
            try:
                scan = self.snapshot(reopen=attempt == 2).plan(options)
                result = scan.reader(skipped, time_limit).read_all()
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
