"""The catalog: registered tables by name, their metadata, published views and scans.

Everything the HTTP layer serves goes through here, so the service is usable (and tested)
without a web server. A table is only ever reached through its registered name.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa

import shim
from catalog.handles import TableHandle
from catalog.registry import (
    DISCOVERED,
    NAME_PATTERN,
    CatalogUnavailableError,
    RegisteredTable,
    Registry,
    folders_named,
    is_table_folder,
    table_location,
)
from catalog.settings import MEMORY, Settings
from catalog.stream import StreamLimits
from catalog.views import VIEWS, View, ViewCache
from shim.errors import InvalidArgumentError, TableNotFoundError
from shim.read import SkippedBlocks, TimeLimit
from shim.scan_options import ScanOptions
from shim.storage import Storage, spellings
from shim.timeline.instant import Instant, normalize_instant

#: A table asked for by a name several folders under the warehouse give makes it be searched
#: again, at most this often (seconds).
LOOKUP_DISCOVERY_SECONDS = 1.0
#: How client-facing messages name the server's own folders (`Catalog.server_folders`).
WAREHOUSE, ICEBERG_DIR, HADOOP_CATALOG_DIR, CATALOG_DB = (
    "<warehouse>", "<iceberg-dir>", "<hadoop-catalog-dir>", "<catalog-db>")


@dataclass(frozen=True, slots=True)
class TableInfo:
    """What the catalog publishes about a table.

    Attributes:
        name: the catalog name.
        hudi_name: `hoodie.table.name`.
        table_type: COPY_ON_WRITE or MERGE_ON_READ.
        version: the table version.
        schema: data columns with their ids, as of `instant`.
        instant: the latest completed write (or the one read as of), None for an empty table.
        properties: `hoodie.properties` as written.
    """

    name: str
    hudi_name: str
    table_type: str
    version: int
    schema: pa.Schema
    instant: Instant | None
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    properties: Mapping[str, str]


ScanRequest = ScanOptions
"""One scan request: `shim.ScanOptions` (the row limit is checked against the server's)."""


class Catalog:
    """Registered tables (SQLite registry), open handles and the view cache."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.registry = Registry(settings.registry_location(), settings.storage_options,
                                 settings.table_storage_options)
        self.views = ViewCache(settings.cache_slices)
        self.limits = StreamLimits(settings.max_scan_rows, settings.max_scan_bytes, settings.max_scan_seconds,
                                   settings.batch_rows, settings.batch_bytes)
        self._handles: dict[str, TableHandle] = {}
        self._lock = threading.Lock()
        self._discovery_lock = threading.Lock()
        self._discovered_at = self._lookup_discovered_at = float("-inf")
        #: Folders of the server's besides those its settings name (a temporary Iceberg folder).
        self.private_folders: list[tuple[str, str]] = []
        try:
            for spec in settings.tables:
                name, sep, path = spec.partition("=")
                self.registry.register(path, name) if sep else self.registry.register(spec)
            if settings.warehouse:
                self.discover()
        except BaseException:
            self.registry.close()
            raise

    def close(self) -> None:
        self.registry.close()

    def storage(self, location: str) -> Storage:
        """The storage of a folder of the catalog's own (the warehouse, the Iceberg folder),
        reached with the catalog's storage options."""
        return self.registry.storage(location)

    def table_storage(self, entry: RegisteredTable) -> Storage:
        """The storage of a registered table: with its own storage options if it has some."""
        return self.registry.storage(entry.path, entry.name)

    def server_folders(self) -> list[tuple[str, str]]:
        """The server's own folders (and its registry's file) as (path, how messages name it),
        longest first, each in every spelling a message may hold (as given, absolute, with
        symbolic links resolved)."""
        settings = self.settings
        folders = [(settings.warehouse, WAREHOUSE), (settings.iceberg_location(), ICEBERG_DIR),
                   (settings.hadoop_catalog_location(), HADOOP_CATALOG_DIR),
                   (settings.registry_location(), CATALOG_DB)] + self.private_folders
        spelled = {(spelling, label) for folder, label in folders if folder for spelling in _spellings(folder)}
        return sorted(spelled, key=lambda item: len(item[0]), reverse=True)

    def discover(self) -> list[RegisteredTable]:
        """Search the warehouse again (new tables registered, vanished ones forgotten).

        Raises:
            CatalogUnavailableError: the warehouse folder or the registry's database is gone.
        """
        if not self.settings.warehouse:
            return []
        self.check_warehouse()
        found = self.registry.discover(self.settings.warehouse, self.settings.discovery_depth)
        self._discovered_at = time.monotonic()
        return found

    def _rediscover(self, older_than: float, *, lookup: bool = False) -> None:
        """Search the warehouse again if the last search is older than `older_than` seconds (with
        `lookup`: the last one a lookup of an unknown name made)."""
        if not self.settings.warehouse:
            return
        with self._discovery_lock:
            last = self._lookup_discovered_at if lookup else self._discovered_at
            if time.monotonic() - last >= older_than:
                self.discover()
                if lookup:
                    self._lookup_discovered_at = self._discovered_at

    def check_warehouse(self) -> None:
        """Raises CatalogUnavailableError when the warehouse folder is gone (deleted, unmounted)."""
        if not self.settings.warehouse:
            return
        warehouse = table_location(self.settings.warehouse)
        if not self.storage(warehouse).is_dir(warehouse):
            self._discovered_at = float("-inf")  # searched again as soon as it is back
            raise CatalogUnavailableError(
                f"the warehouse folder {warehouse} does not exist (deleted or "
                "unmounted?): its tables are served again when it is back")

    def health(self) -> str | None:
        """Why the catalog cannot serve its warehouse now (None: it can)."""
        try:
            self.check_warehouse()
            self.registry.check()
        except CatalogUnavailableError as exc:
            return exc.message
        return None

    def register(self, path: str, name: str | None = None) -> RegisteredTable:
        """Register a table folder by path (default name: its folder name)."""
        return self.registry.register(path, name)

    def entries(self) -> list[RegisteredTable]:
        """The registered tables whose folder still holds a table (a deleted one is not listed);
        tables added under the warehouse show within `discovery_seconds`."""
        self.check_warehouse()
        self._rediscover(self.settings.discovery_seconds)
        return [entry for entry in self.registry.tables() if is_table_folder(self.table_storage(entry))]

    def names(self) -> list[str]:
        return [entry.name for entry in self.entries()]

    def handle(self, name: str) -> TableHandle:
        """The open handle of a registered table.

        Raises:
            TableNotFoundError: no table of that name is registered, or its folder was deleted.
        """
        try:
            entry = self.registry.get(name)
        except TableNotFoundError:  # perhaps added under the warehouse since the last search
            entry = self._look_up(name)
        if not is_table_folder(self.table_storage(entry)):
            with self._lock:
                self._handles.pop(name, None)
            raise TableNotFoundError(f"table {name!r} is gone: its folder no longer holds a Hudi table")
        with self._lock:
            handle = self._handles.get(name)
            if handle is None or handle.entry.path != entry.path:
                handle = self._handles[name] = TableHandle(entry, self.table_storage(entry), metadata=self.settings.metadata)
            return handle

    def _look_up(self, name: str) -> RegisteredTable:
        """The table `name` not registered yet: one made under the warehouse since it was last
        searched is found at once, by listing only the folders its name can lie in (a miss costs a
        few listings, never a search of the whole warehouse); when several folders give that
        name, the warehouse is searched (at most every `LOOKUP_DISCOVERY_SECONDS`), as
        discovery decides which one gets it."""
        if self.settings.warehouse and isinstance(name, str) and NAME_PATTERN.fullmatch(name):
            self.check_warehouse()
            warehouse = self.storage(table_location(self.settings.warehouse))
            folders = folders_named(warehouse, name, self.settings.discovery_depth)
            if len(folders) == 1:
                try:
                    return self.registry.register(folders[0], name, origin=DISCOVERED)
                except InvalidArgumentError:  # the folder is registered under another name
                    pass
            elif len(folders) > 1:
                self._rediscover(LOOKUP_DISCOVERY_SECONDS, lookup=True)
        return self.registry.get(name)

    def loaded_snapshot(self, name: str) -> shim.TableSnapshot | None:
        """The registered table's latest snapshot when it is open and up to date (found with a few
        `stat` calls), else None (it must be loaded: call `snapshot`, which says why it cannot be)."""
        with self._lock:
            handle = self._handles.get(name)
        try:
            return handle.loaded() if handle is not None else None
        except Exception:  # noqa: BLE001 - `snapshot` loads it again and reports why it cannot
            return None

    def snapshot(self, name: str, *, reopen: bool = False) -> shim.TableSnapshot:
        """The registered table as of its latest timeline (`reopen`: its files listed again)."""
        return self.handle(name).snapshot(reopen=reopen)

    def table(self, name: str) -> shim.Table:
        """The registered table (the user's API: each read sees the table as it is then)."""
        return self.handle(name).table()

    def describe(self, name: str, as_of: str | None = None) -> TableInfo:
        table = self.snapshot(name)
        schema = table.schema(as_of)
        timeline = table.active_timeline
        if as_of is None:
            instant = timeline.latest_write()
        else:
            read = timeline.resolve_as_of(normalize_instant(as_of))
            instant = timeline.latest_state(read) if read is not None else None
        config = table.config
        return TableInfo(
            name=name,
            hudi_name=config.name,
            table_type=config.table_type.value,
            version=config.version,
            schema=schema,
            instant=instant,
            record_key_fields=config.record_key_fields,
            partition_fields=config.partition_fields,
            properties=dict(config.raw),
        )

    def timeline(self, name: str) -> list[Instant]:
        """The active timeline, one entry per instant in its most advanced state, oldest first."""
        table = self.snapshot(name)
        latest: dict[str, Instant] = {}
        for instant in table.active_timeline.instants:
            latest[instant.requested_time] = instant
        return list(latest.values())

    def view(self, name: str, view: str = "snapshot", as_of: str | None = None) -> View:
        """The published `snapshot` or `read_optimized` view as of an instant."""
        if view not in VIEWS:
            raise InvalidArgumentError(f"unknown view {view!r}; use one of {', '.join(VIEWS)}")
        return self.views.view(self.handle(name), view, as_of)

    def view_of(self, name: str, table: shim.TableSnapshot, scan: shim.Scan) -> View:
        """The view a scan of the registered table `name` planned (`table`: the table it planned on)."""
        return self.views.view_of(self.handle(name), table, scan)

    def scan(self, name: str, request: ScanRequest, *, reopen: bool = False,
             skipped: SkippedBlocks | None = None, time_limit: TimeLimit | None = None) -> pa.RecordBatchReader:
        """Start a scan (checked up front: columns, filter, instant, table features); `reopen`
        lists the table's files again first (a file planned before was gone); corrupt log
        regions skipped are recorded in `skipped`; reading stops past `time_limit` (default: the
        server's limit from now)."""
        if request.limit is not None and request.limit > self.limits.max_rows:
            raise InvalidArgumentError(
                f"limit {request.limit} exceeds the server's limit of {self.limits.max_rows} rows per scan"
            )
        table = self.snapshot(name, reopen=reopen)
        return table.plan(request).reader(skipped, time_limit or TimeLimit.starting_now(self.limits.max_seconds))


def _spellings(folder: str) -> set[str]:
    return set() if folder == MEMORY else spellings(folder)
