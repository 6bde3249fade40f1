"""The catalog's tables in a Hive Metastore: Iceberg tables for engines' Iceberg connectors, and
Hudi's own tables as Hudi's Hive sync registers them.

- Database `database` (default `default`): per registered table, `<table>` (snapshot) and
  `<table>_ro` (read-optimized), Iceberg tables (`table_type=ICEBERG`, `metadata_location`) whose
  metadata the publisher writes for readers that match files by name (Presto's Iceberg connector;
  Trino's reads them too). Trino: `iceberg.catalog.type=hive_metastore`; Presto:
  `iceberg.catalog.type=hive`.
- Database `sync_database` (default `hudi`; None: none): the table as Hudi's Hive sync registers
  it (`hoodie.datasource.hive_sync.*`): `<table>` for copy-on-write, `<table>_ro` and `<table>_rt`
  for merge-on-read, Hudi's input formats, the current columns and every partition, for the
  engines' own Hudi connectors (which read evolved tables wrong: that is what a site compares).

Every table written carries `hudi-shim.table`; a table of the same name without it is left alone
(an error for that table). `sync_table` brings one table's entries up to date (on a commit),
`refresh` every table's, and removes the entries of tables no longer registered.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from catalog.errors import failure_text
from catalog.hive.columns import (
    ICEBERG_INPUT_FORMAT,
    ICEBERG_OUTPUT_FORMAT,
    ICEBERG_SERDE,
    INPUT_FORMAT,
    PARQUET_OUTPUT_FORMAT,
    PARQUET_SERDE,
    REALTIME_INPUT_FORMAT,
    HiveColumn,
    hive_partitions,
    iceberg_hive_columns,
    sync_columns,
)
from catalog.hive.metastore import (
    Database,
    FieldSchema,
    MetastoreClient,
    MetastoreError,
    NoSuchObjectError,
    Partition,
    SerDeInfo,
    StorageDescriptor,
    Table,
)
from catalog.iceberg.names import RO_SUFFIX
from catalog.iceberg.publish import IcebergPublisher, Readers
from shim.errors import HudiShimError
from shim.storage import as_uri

log = logging.getLogger(__name__)

OWNER = "hudi-shim"
#: The parameter that marks a metastore table as the shim's, naming the catalog table it stands for.
TABLE_KEY = "hudi-shim.table"
VIEW_KEY = "hudi-shim.view"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
#: Parameters the metastore or readers change by themselves: not compared.
_VOLATILE = ("transient_lastDdlTime", PREVIOUS_METADATA_LOCATION)


@dataclass
class Synced:
    """What one pass did: metastore tables (`db.table`) written or unchanged, removed, and the
    catalog tables that could not be registered (name -> why; their previous entries stay)."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    def add(self, other: Synced) -> None:
        self.written += other.written
        self.unchanged += other.unchanged
        self.removed += other.removed
        self.failed.update(other.failed)


class ForeignTableError(MetastoreError):
    """A metastore table of the name the shim would register exists and is not the shim's."""


class HiveMetastoreSync:
    """Keeps a Hive Metastore's entries of the publisher's tables up to date."""

    def __init__(self, publisher: IcebergPublisher, uri: str, *, database: str = "default",
                 sync_database: str | None = "hudi", readers: Readers = Readers.BY_NAME) -> None:
        self.publisher = publisher
        self.uri = uri
        self.database = database.lower()
        self.sync_database = sync_database.lower() if sync_database else None
        self.readers = readers
        self._lock = threading.Lock()
        self._client: MetastoreClient | None = None
        self._databases_made: set[str] = set()

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def sync_table(self, name: str) -> Synced:
        """Register (or bring up to date) the metastore entries of the catalog table `name`."""
        done = Synced()
        try:
            with self._session() as hms:
                self._databases(hms)
                for written, entry in self._table_entries(hms, name):
                    (done.written if written else done.unchanged).append(entry)
        except Exception as exc:  # one table that cannot be registered never costs the others
            if isinstance(exc, HudiShimError):
                log.warning("Hive Metastore: %s keeps its previous entries: %s", name, exc)
            else:
                log.error("Hive Metastore: %s keeps its previous entries", name, exc_info=exc)
            done.failed[name] = failure_text(exc)
        return done

    def refresh(self) -> Synced:
        """Every registered table's entries; entries of tables no longer registered removed."""
        names = self.publisher.catalog.names()
        done = Synced()
        for name in names:
            done.add(self.sync_table(name))
        with self._session() as hms:
            done.removed = self._remove_others(hms, set(names))
        return done

    @contextmanager
    def _session(self) -> Iterator[_Retrying]:
        with self._lock:
            yield _Retrying(self)

    def _connected(self) -> MetastoreClient:
        if self._client is None:
            self._client = MetastoreClient.open(self.uri)
        return self._client

    def _reconnect(self) -> MetastoreClient:
        if self._client is not None:
            self._client.close()
            self._client = None
        return self._connected()

    def _databases(self, hms: _Retrying) -> None:
        for database in filter(None, (self.database, self.sync_database)):
            if database in self._databases_made:
                continue
            try:
                hms.call("get_database", database)
            except NoSuchObjectError:
                hms.call("create_database",
                         Database(database, description="tables registered by hudi-shim", ownerName=OWNER))
            self._databases_made.add(database)

    def _table_entries(self, hms: _Retrying, name: str) -> Iterator[tuple[bool, str]]:
        for iceberg_name, view in ((name, "snapshot"), (name + RO_SUFFIX, "read_optimized")):
            yield self._put(hms, self._iceberg_table(iceberg_name, name, view)), f"{self.database}.{iceberg_name}"
        if self.sync_database is not None:
            yield from self._hudi_tables(hms, name)

    def _iceberg_table(self, iceberg_name: str, name: str, view: str) -> Table:
        published = self.publisher.publish(name, view, self.readers)
        columns = iceberg_hive_columns(published.metadata)
        sd = StorageDescriptor(cols=_fields(columns), location=published.metadata["location"],
                               inputFormat=ICEBERG_INPUT_FORMAT, outputFormat=ICEBERG_OUTPUT_FORMAT,
                               serdeInfo=SerDeInfo(None, ICEBERG_SERDE, {}))
        parameters = {"EXTERNAL": "TRUE", "table_type": "ICEBERG", METADATA_LOCATION: published.metadata_location,
                      TABLE_KEY: name, VIEW_KEY: view}
        return Table(iceberg_name.lower(), self.database, owner=OWNER, sd=sd, parameters=parameters)

    def _hudi_tables(self, hms: _Retrying, name: str) -> Iterator[tuple[bool, str]]:
        """The table as Hudi's Hive sync registers it, with its partitions."""
        assert self.sync_database is not None
        table = self.publisher.catalog.snapshot(name)
        data, partition_columns = sync_columns(table)
        location = as_uri(table.path)
        latest = table.active_timeline.latest_write()
        if table.config.is_mor:
            views = [(f"{name}_ro", INPUT_FORMAT, True), (f"{name}_rt", REALTIME_INPUT_FORMAT, False)]
        else:
            views = [(name, INPUT_FORMAT, True)]
        partitions = hive_partitions(table, partition_columns) if partition_columns else []
        for hive_name, input_format, read_optimized in views:
            serde = SerDeInfo(None, PARQUET_SERDE, {"path": location,
                                                    "hoodie.query.as.ro.table": str(read_optimized).lower()})
            sd = StorageDescriptor(cols=_fields(data), location=location, inputFormat=input_format,
                                   outputFormat=PARQUET_OUTPUT_FORMAT, serdeInfo=serde)
            parameters = {"EXTERNAL": "TRUE", TABLE_KEY: name,
                          "last_commit_time_sync": latest.requested_time if latest else ""}
            entry = Table(hive_name.lower(), self.sync_database, owner=OWNER, sd=sd,
                          partitionKeys=_fields(partition_columns), parameters=parameters)
            written = self._put(hms, entry)
            wanted = {p.name: p for p in partitions}
            have = set(hms.call("get_partition_names", entry.dbName, entry.tableName)) if partition_columns else set()
            new = [Partition(list(p.values), entry.dbName, entry.tableName,
                             sd=dataclasses.replace(sd, location=_child(location, p.relative)))
                   for partition_name, p in wanted.items() if partition_name not in have]
            if new:
                hms.call("add_partitions", new)
            for gone in sorted(have - set(wanted)):
                hms.call("drop_partition_by_name", entry.dbName, entry.tableName, gone)
            yield written or bool(new) or bool(have - set(wanted)), f"{self.sync_database}.{entry.tableName}"

    def _put(self, hms: _Retrying, wanted: Table) -> bool:
        """Create or update `wanted`; whether anything changed."""
        try:
            current: Table = hms.call("get_table", wanted.dbName, wanted.tableName)
        except NoSuchObjectError:
            hms.call("create_table", wanted)
            return True
        if TABLE_KEY not in current.parameters:
            raise ForeignTableError(f"{wanted.dbName}.{wanted.tableName} exists in the Hive Metastore and was not "
                                    "registered by hudi-shim: it is left alone (drop or rename it to let hudi-shim "
                                    "register the table)")
        if _same(current, wanted):
            return False
        previous = current.parameters.get(METADATA_LOCATION)
        if previous and previous != wanted.parameters.get(METADATA_LOCATION, previous):
            wanted.parameters[PREVIOUS_METADATA_LOCATION] = previous
        wanted.createTime = current.createTime
        try:
            hms.call("alter_table", wanted.dbName, wanted.tableName, wanted)
        except MetastoreError as exc:
            if exc.kind != "InvalidOperationException":
                raise
            # a column type change the metastore refuses (its incompatible-change check): as
            # Hudi's Hive sync advises, the table is registered anew
            log.info("Hive Metastore refused to alter %s.%s (%s): registering it anew", wanted.dbName,
                     wanted.tableName, exc)
            hms.call("drop_table", wanted.dbName, wanted.tableName)
            hms.call("create_table", wanted)
        return True

    def _remove_others(self, hms: _Retrying, names: set[str]) -> list[str]:
        removed = []
        for database in filter(None, (self.database, self.sync_database)):
            try:
                tables = hms.call("get_all_tables", database)
            except NoSuchObjectError:
                continue
            for table_name in tables:
                try:
                    entry = hms.call("get_table", database, table_name)
                except NoSuchObjectError:
                    continue
                owner = entry.parameters.get(TABLE_KEY)
                if owner is not None and owner not in names:
                    hms.call("drop_table", database, table_name)
                    removed.append(f"{database}.{table_name}")
        return removed


class _Retrying:
    """Calls on the sync's connection, made again once on a new connection when it was lost."""

    def __init__(self, sync: HiveMetastoreSync) -> None:
        self.sync = sync

    def call(self, method: str, *arguments: Any) -> Any:
        """`MetastoreClient.<method>(*arguments)`."""
        try:
            return getattr(self.sync._connected(), method)(*arguments)
        except MetastoreError as exc:
            if exc.kind is not None:  # the metastore answered: asking again gets the same answer
                raise
            return getattr(self.sync._reconnect(), method)(*arguments)


def _fields(columns: list[HiveColumn]) -> list[FieldSchema]:
    return [FieldSchema(c.name, c.type) for c in columns]


def _child(location: str, relative: str) -> str:
    return f"{location.rstrip('/')}/{relative}" if relative else location


def _same(current: Table, wanted: Table) -> bool:
    """Whether the metastore's entry already says what `wanted` says (locations compared as the
    metastore normalizes them: `file:/x` for `file:///x`)."""
    def columns(fields: list[FieldSchema]) -> list[tuple[str, str]]:
        return [(f.name.lower(), f.type.replace(" ", "").lower()) for f in fields]

    def location(uri: str | None) -> str:
        return (uri or "").replace("file:///", "file:/").rstrip("/")

    parameters = {k: v for k, v in current.parameters.items() if k not in _VOLATILE}
    return (columns(current.sd.cols) == columns(wanted.sd.cols)
            and columns(current.partitionKeys) == columns(wanted.partitionKeys)
            and location(current.sd.location) == location(wanted.sd.location)
            and current.sd.inputFormat == wanted.sd.inputFormat
            and current.sd.serdeInfo.parameters == wanted.sd.serdeInfo.parameters
            and all(parameters.get(k) == v for k, v in wanted.parameters.items()))
