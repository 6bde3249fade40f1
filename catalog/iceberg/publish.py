"""A registered table's view published as Iceberg table metadata (format version 2; 3 with
deletion vectors).

The Iceberg table has the view's schema (column ids as field ids), the name mapping that reads
Hudi's base files in place, and one snapshot adding every data file of the view at its latest
instant: base files where they are, and the slices they cannot describe written out reconciled
(see `catalog.iceberg.layout`), plus, for merge-on-read snapshots, what log files change
(standing log records, and position deletes of the base rows they supersede: Parquet position
delete files, or with `deletes="vectors"` format version 3 deletion vectors, one Puffin file per
base file, with v3's row lineage, `catalog.iceberg.row_lineage`). The table is
partitioned by identity on Hudi's partition columns where the partition paths spell their values
(`catalog.iceberg.partitioning`). Metadata, manifests and written slices go to the publisher's
folder, named after their content, so publishing a view again after no commit writes nothing;
after a new version, the files no version published in the last `keep_seconds` names are
removed (`catalog.iceberg.retention`). Manifests carry each file's metrics from a `StatsSource`
(`catalog.iceberg.metrics`), snapshots list files as a native writer does (existing, added,
deleted), and the current snapshot gets distinct-value statistics (`catalog.iceberg.statistics`).
"""

from __future__ import annotations

import datetime as dt
import enum
import errno
import hashlib
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

import shim
from catalog.cache import SingleFlight
from catalog.handles import TableHandle
from catalog.iceberg.history import DEFAULT_DEPTH, history_instants
from catalog.iceberg.history import snapshot_id as history_snapshot_id
from catalog.iceberg.layout import Layout, by_name_names, history_names, mapped_ids, name_mapping, plan_layout
from catalog.iceberg.manifests import (
    ADDED,
    DATA,
    DELETED,
    DELETES,
    EXISTING,
    POSITION_DELETES,
    PUFFIN,
    DataFile,
    Manifest,
    ManifestEntry,
    manifest_bytes,
    manifest_list_bytes,
)
from catalog.iceberg.materialize import SliceWriter, WrittenFile, slice_digest
from catalog.iceberg.metrics import FooterStats, StatsSource, metrics_of
from catalog.iceberg.partitioning import PartitionSpec, partition_spec
from catalog.iceberg.retention import expire
from catalog.iceberg.row_lineage import RowIds, assign_row_ids
from catalog.iceberg.statistics import SliceSketch, sketched_columns, slice_sketch, statistics_file, union
from catalog.iceberg.statistics import available as statistics_available
from catalog.iceberg.stats_metrics import MetadataStats, stats_rows
from catalog.iceberg.types import iceberg_id, iceberg_schema, last_column_id, zone_free
from catalog.service import Catalog
from catalog.settings import DELETE_FORMS
from catalog.views import touch_keys
from shim.errors import HudiShimError
from shim.read import ColumnStats, parquet_footer
from shim.storage import Storage, as_uri, from_uri, is_inside, resolve_table_path
from shim.timeline.instant import instant_key

FORMAT_VERSION = 2
#: With deletion vectors (`deletes="vectors"`).
VECTORS_FORMAT_VERSION = 3
#: Changes when what manifests say of the same files changes (a new version is published then).
MANIFEST_VERSION = "metrics-3"
#: Changes when what the metadata says beside the files changes (its location, its properties).
METADATA_VERSION = "location-gc-1"
#: Tables with more top-level columns than this get no distinct-value statistics by default.
DEFAULT_STATISTICS_MAX_COLUMNS = 200
EXPIRE_EVERY_SECONDS = 60.0
log = logging.getLogger(__name__)


class Readers(enum.Enum):
    """How the readers of a published table match Hudi's files, which carry no field ids.

    NAME_MAPPING: through the table's name mapping (Trino, DuckDB, PyIceberg, iceberg-rust).
    BY_NAME: by the current column name, without the mapping (Presto's Iceberg connector): a
    file is read in place only where its column names are the table's; the rest is written out
    with field ids, which such readers match by id. Such readers also have no `timestamptz`:
    timestamps with a zone are published as timestamps (their UTC date and time).
    """

    NAME_MAPPING = "name-mapping"
    BY_NAME = "by-name"

    def folder(self, view: str) -> str:
        """The folder of a view's metadata for these readers, under the table's folder."""
        return view if self is Readers.NAME_MAPPING else f"{view}-{self.value}"


@dataclass(frozen=True, slots=True)
class PublishedTable:
    """What an Iceberg REST catalog answers for a table: where its metadata is, and the metadata."""

    metadata_location: str
    metadata: dict[str, Any]
    written_slices: int


@dataclass(frozen=True, slots=True)
class SnapshotFiles:
    """One commit of a view as an Iceberg snapshot: its scan, placements and files."""

    scan: shim.Scan
    layout: Layout
    files: list[DataFile]
    written: int


@dataclass(frozen=True, slots=True)
class Versions:
    """The commits a published table holds (oldest first), their name mapping and partition spec."""

    snapshots: tuple[SnapshotFiles, ...]
    mapping: list[dict[str, Any]]
    spec: PartitionSpec
    #: The latest commit's slices' sketches (None: no statistics), and the field ids they count.
    sketches: tuple[SliceSketch, ...] | None = None
    sketched: tuple[int, ...] = ()


def file_uri(path: str) -> str:
    """An absolute local path as the `file:` URI Iceberg readers take (an object store's
    location is a URI already)."""
    return as_uri(path)


class IcebergPublisher:
    """Publishes the catalog's views as Iceberg tables under `folder`."""

    def __init__(self, catalog: Catalog, folder: str, *, keep_seconds: float = 900.0,
                 history: int = DEFAULT_DEPTH, stats_source: StatsSource | None = None,
                 statistics_max_columns: int = DEFAULT_STATISTICS_MAX_COLUMNS, slice_merging: str = "auto",
                 deletes: str = "positions") -> None:
        if deletes not in DELETE_FORMS:
            raise ValueError(f"deletes must be one of {', '.join(DELETE_FORMS)}, not {deletes!r}")
        self.catalog = catalog
        #: How deletes are published: "positions" (format version 2, Parquet position delete
        #: files, which every reader takes) or "vectors" (format version 3, deletion vectors in
        #: Puffin files: DuckDB and PyIceberg read them, Trino 476 and Presto 0.287 do not).
        self.deletes = deletes
        #: How the snapshot view publishes slices with log files (`catalog.iceberg.layout.SliceMerging`).
        self.slice_merging = slice_merging
        #: Distinct-value statistics (Puffin) for tables of at most this many top-level columns
        #: (0: none): each new slice is read once to sketch its columns.
        self.statistics_max_columns = statistics_max_columns
        #: Where data files' column statistics come from (default: their Parquet footers).
        self.stats_source: StatsSource = stats_source if stats_source is not None else FooterStats()
        self.folder = resolve_table_path(folder)
        #: Where the published files go, reached with the catalog's storage options.
        self.storage = catalog.storage(self.folder)
        self.keep_seconds = keep_seconds
        self.history = history
        self._lock = threading.Lock()
        self._publishing: dict[tuple[str, str, Readers], threading.Lock] = {}
        #: Publications running, by table, view, readers and table version: asked for again
        #: meanwhile, one is waited for, not repeated.
        self._flights: SingleFlight[PublishedTable] = SingleFlight()
        #: Slices written out, shared by every view and kind of readers.
        self._slices = SliceWriter(self.storage)
        #: Per view, the last answer: the table object it was planned on and what it depends on.
        self._last: dict[tuple[str, str, Readers], tuple[shim.TableSnapshot, str, PublishedTable]] = {}
        self._expired_at: dict[str, float] = {}

    def publish(self, name: str, view: str, readers: Readers = Readers.NAME_MAPPING) -> PublishedTable:
        """The Iceberg table of `name`'s `view` ("snapshot" or "read_optimized") at its latest
        instant, for `readers`.

        Requests for the same version of a view share one publication (the later ones wait for
        it); those of other versions of it wait for one another; publications of other views or
        for other readers that need the same slice written out wait for the one writing it."""
        handle = self.catalog.handle(name)
        table = handle.snapshot()  # the same object while the table's timeline is unchanged
        return self._flights.run((name, view, readers, table), lambda: self._publish_one(handle, table, view, readers))

    def _publish_one(self, handle: TableHandle, table: shim.TableSnapshot, view: str, readers: Readers) -> PublishedTable:
        with self._lock:
            lock = self._publishing.setdefault((handle.name, view, readers), threading.Lock())
        with lock:
            return self._publish(handle, table, view, readers)

    def _publish(self, handle: TableHandle, table: shim.TableSnapshot, view: str, readers: Readers) -> PublishedTable:
        name = handle.name
        _check_outside(os.path.join(self.folder, name), table.path, name)
        last = self._last.get((name, view, readers))
        if last is not None and last[0] is table and self.storage.exists(_path_of(last[2].metadata_location)):
            return last[2]
        latest = table.plan(shim.ScanOptions(mode=view))
        scans = [table.plan(shim.ScanOptions(mode=view, as_of=instant))
                 for instant in history_instants(table, latest.read_instant, self.history)] + [latest]
        # What the answer depends on: the table, the commits read (a commit may change only the
        # schema, or make a log block already in a file visible), the schemas and the slices.
        key = "\n".join([table.path] + [
            "\n".join([scan.read_instant or "", scan.data_schema.to_string(show_schema_metadata=False),
                       repr([(s.partition_path, s.file_id, s.base_file, s.log_files) for s in scan.slices])])
            for scan in scans])
        if last is not None and last[1] == key and self.storage.exists(_path_of(last[2].metadata_location)):
            result = last[2]
        else:
            try:
                versions = self._versions(handle, table, view, scans, readers)
                result = self._write_metadata(name, view, readers, table.path, versions)
            except OSError as exc:
                if exc.errno not in _UNWRITABLE:
                    raise
                raise PublishFolderError(
                    f"cannot write the Iceberg folder {self.folder} ({exc.strerror}): Iceberg readers need a "
                    "writable --iceberg-dir, at a path they see too (a warehouse mounted read-only needs one "
                    "elsewhere)") from None
        self._last[(name, view, readers)] = (table, key, result)
        return result

    def _versions(self, handle: TableHandle, table: shim.TableSnapshot, view: str, scans: list[shim.Scan],
                  readers: Readers) -> Versions:
        """The files of every commit published (oldest first), placed under one name mapping."""
        # The views of exactly these scans: the latest is no time travel (an earlier write still
        # inflight does not stop it, as it stops reading as of an instant after it).
        published = [self.catalog.view_of(handle.name, table, scan) for scan in scans]
        names = history_names(published[::-1])
        if readers is Readers.BY_NAME:
            names = by_name_names(published[-1], published[-1])
            layouts = [plan_layout(p, scan.slices, table.storage, table.config.partition_fields,
                                   by_name_names(published[-1], p), self.slice_merging, table.committed)
                       for p, scan in zip(published, scans, strict=True)]
        else:
            layouts = [plan_layout(p, scan.slices, table.storage, table.config.partition_fields, names,
                                   self.slice_merging, table.committed)
                       for p, scan in zip(published, scans, strict=True)]
        mapping = name_mapping([p.schema for p in published[::-1]], names,
                               [name for layout in layouts for name in layout.unmapped])
        data_folder = os.path.join(self.folder, handle.name, "data")
        snapshots = []
        touches: dict[tuple[str, str] | None, bytes] = {}
        for scan, layout in zip(scans, layouts, strict=True):
            touches = touch_keys(handle, table, scan.read_instant)
            stats = scan.base_file_stats(_mapped_names(mapping))
            files, written = _data_files(scan, layout, touches, data_folder, self._slices, stats,
                                         vectors=self.vectors)
            source = MetadataStats.of(scan, stats, self.stats_source) if stats else self.stats_source
            metrics = _with_metrics(files, scan.data_schema, mapping, source, table.storage, self.storage)
            snapshots.append(SnapshotFiles(scan, layout, metrics, written))
        latest = scans[-1]
        spec = partition_spec(table.config, latest.data_schema,
                              [f.partition_path for snapshot in snapshots for f in snapshot.files])
        columns = sketched_columns(latest.data_schema)
        if not columns or len(latest.data_schema) > self.statistics_max_columns or not self._can_sketch():
            return Versions(tuple(snapshots), mapping, spec)
        sketches = []
        for placement in layouts[-1].placements:
            file_slice = placement.file_slice
            touched = touches.get((file_slice.partition_path, file_slice.file_id), touches[None])
            sketches.append(slice_sketch(self.storage, latest, file_slice, slice_digest(latest, file_slice, touched), data_folder,
                                         columns))
        return Versions(tuple(snapshots), mapping, spec, tuple(sketches), tuple(sorted(columns.values())))

    @property
    def vectors(self) -> bool:
        """Whether deletes are published as deletion vectors (format version 3)."""
        return self.deletes == "vectors"

    @property
    def format_version(self) -> int:
        """The Iceberg format version of the tables published."""
        return VECTORS_FORMAT_VERSION if self.vectors else FORMAT_VERSION

    def _write_metadata(self, name: str, view: str, readers: Readers, table_path: str,
                        versions: Versions) -> PublishedTable:
        latest = versions.snapshots[-1]
        schemas: list[dict[str, Any]] = []
        schema_ids = []
        for snapshot in versions.snapshots:
            data_schema = snapshot.scan.data_schema
            schema = iceberg_schema(zone_free(data_schema) if readers is Readers.BY_NAME else data_schema)
            if schema not in schemas:
                schemas.append(schema)
            schema_ids.append(schemas.index(schema))
        content = json.dumps([MANIFEST_VERSION, METADATA_VERSION, schemas, versions.mapping, versions.spec.to_json(),
                              [[(f.path, f.size, f.content, f.partition_path) for f in snapshot.files]
                               for snapshot in versions.snapshots],
                              [snapshot.scan.read_instant for snapshot in versions.snapshots],
                              None if versions.sketches is None else sorted(s.path for s in versions.sketches)]
                             + ([self.format_version] if self.vectors else []), sort_keys=True)
        digest = hashlib.blake2b(content.encode("utf-8"), digest_size=16).hexdigest()
        folder = os.path.join(self.folder, name, readers.folder(view), "metadata")
        # `<version>-<id>.metadata.json`, as Iceberg names them: Trino's metastore catalogs parse
        # the version from the name and refuse any other (the content digest keeps it unique)
        metadata_path = os.path.join(folder, f"00000-{digest}.metadata.json")
        out = self.storage
        if out.exists(metadata_path):
            out.touch(metadata_path)  # published again: a version in use is never expired
            return PublishedTable(file_uri(metadata_path), json.loads(out.read_text(metadata_path)), latest.written)
        out.make_dirs(folder)
        ids = [_snapshot_id(snapshot, digest) for snapshot in versions.snapshots]
        per_snapshot = _manifest_entries(versions.snapshots, ids)
        row_ids: list[RowIds | None] = [None] * len(per_snapshot)
        next_row_id = None
        if self.vectors:
            per_snapshot, assigned, next_row_id = assign_row_ids(per_snapshot)
            row_ids = list(assigned)
        entries: list[dict[str, Any]] = []
        for number, (snapshot, schema_id, manifest_entries, lineage) in enumerate(
                zip(versions.snapshots, schema_ids, per_snapshot, row_ids, strict=True), start=1):
            entries.append(self._snapshot(out, folder, digest, snapshot, ids[number - 1], number, manifest_entries,
                                          schemas[schema_id] | {"schema-id": schema_id}, versions.spec,
                                          entries[-1]["snapshot-id"] if entries else None, lineage))
        current = entries[-1]
        statistics = []
        if versions.sketches is not None:
            stats_path = os.path.join(folder, f"{digest}.stats.puffin")
            statistics.append(statistics_file(self.storage, stats_path, file_uri(stats_path), union(versions.sketches,
                                                                                      versions.sketched),
                                              current["snapshot-id"], current["sequence-number"],
                                              [file_uri(s.path) for s in versions.sketches]))
        properties = {
            "schema.name-mapping.default": json.dumps(versions.mapping),
            "hudi-shim.table": name,
            "hudi-shim.view": view,
            "hudi-shim.readers": readers.value,
            "hudi-shim.instant": latest.scan.read_instant or "",
            "hudi-shim.files-in-place": str(sum(p.base_path is not None for p in latest.layout.placements)),
            "hudi-shim.slices-written": str(sum(p.base_path is None for p in latest.layout.placements)),
            # The data files are Hudi's: a reader's DROP TABLE or snapshot expiry must never delete them
            "gc.enabled": "false",
        }
        metadata = {
            "format-version": self.format_version,
            "table-uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{file_uri(table_path)}#{readers.folder(view)}")),
            # where this view's metadata lives, not the Hudi table: an engine that drops the table
            # through a metastore (Trino removes the table's location) or writes to it stays out of Hudi's folder
            "location": file_uri(os.path.dirname(folder)),
            "last-sequence-number": len(entries),
            "last-updated-ms": current["timestamp-ms"],
            "last-column-id": max([mapped_ids(versions.mapping)]
                                  + [last_column_id(s.scan.data_schema) for s in versions.snapshots]),
            "current-schema-id": schema_ids[-1],
            "schemas": [schema | {"schema-id": number} for number, schema in enumerate(schemas)],
            "default-spec-id": 0,
            "partition-specs": [versions.spec.to_json()],
            "last-partition-id": versions.spec.last_partition_id,
            "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "properties": properties,
            "current-snapshot-id": current["snapshot-id"],
            "refs": {"main": {"snapshot-id": current["snapshot-id"], "type": "branch"}},
            "snapshots": entries,
            "snapshot-log": [{"timestamp-ms": e["timestamp-ms"], "snapshot-id": e["snapshot-id"]} for e in entries],
            "metadata-log": [],
            "statistics": statistics,
        }
        if next_row_id is not None:
            metadata["next-row-id"] = next_row_id
        out.write_atomically(metadata_path, json.dumps(metadata, indent=1).encode("utf-8"))
        self._expire(name)
        return PublishedTable(file_uri(metadata_path), metadata, latest.written)

    @staticmethod
    def _snapshot(out: Storage, folder: str, digest: str, snapshot: SnapshotFiles, snapshot_id: int,
                  sequence_number: int, manifest_entries: list[ManifestEntry], schema: dict[str, Any],
                  spec: PartitionSpec, parent: int | None, row_ids: RowIds | None = None) -> dict[str, Any]:
        """Write one snapshot's manifests and manifest list on `out`; its entry in the metadata.
        The manifests hold every file of the commit (a complete view: files the parent had too are
        existing entries), and those of the parent it no longer has as deleted entries. With
        `row_ids`, format version 3 files (row lineage)."""
        manifests = []
        version = FORMAT_VERSION if row_ids is None else VECTORS_FORMAT_VERSION
        for kind in (DATA, DELETES):
            held = tuple(e for e in manifest_entries if e.file.content == kind)
            if held or kind == DATA:
                manifest_path = os.path.join(folder, f"{digest}-{sequence_number}-m{kind}.avro")
                manifest = manifest_bytes(held, schema, spec, kind, version)
                out.write_atomically(manifest_path, manifest)
                manifests.append(Manifest(file_uri(manifest_path), len(manifest), kind, held))
        list_path = os.path.join(folder, f"snap-{snapshot_id}-{digest}.avro")
        out.write_atomically(list_path, manifest_list_bytes(
            manifests, snapshot_id, sequence_number, spec, parent,
            first_row_id=None if row_ids is None else row_ids.first_row_id))
        summary = snapshot_summary(manifest_entries, first=parent is None)
        summary["hudi-shim.instant"] = snapshot.scan.read_instant or ""
        entry: dict[str, Any] = {
            "snapshot-id": snapshot_id,
            "sequence-number": sequence_number,
            "timestamp-ms": _instant_ms(snapshot.scan.read_instant),
            "manifest-list": file_uri(list_path),
            "summary": summary,
            "schema-id": schema["schema-id"],
        }
        if parent is not None:
            entry["parent-snapshot-id"] = parent
        if row_ids is not None:
            entry |= {"first-row-id": row_ids.first_row_id, "added-rows": row_ids.added_rows}
        return entry

    def _can_sketch(self) -> bool:
        if not statistics_available():
            if self.statistics_max_columns:
                log.warning("publishing without distinct-value statistics: the datasketches package is missing "
                            "(pip install 'hudi-shim[statistics]')")
                self.statistics_max_columns = 0
            return False
        return True

    def _expire(self, name: str) -> None:
        """Remove the table's replaced versions, at most once per `EXPIRE_EVERY_SECONDS` (each pass
        reads the manifests of every version kept)."""
        now = time.monotonic()
        with self._lock:
            last = self._expired_at.get(name)
            if self.keep_seconds > 0 and last is not None and now - last < EXPIRE_EVERY_SECONDS:
                return
            self._expired_at[name] = now
        removed = expire(self.storage, os.path.join(self.folder, name), self.keep_seconds)
        if removed:
            log.info("removed %d published files of %s no kept version names", len(removed), name)


def _with_metrics(files: list[DataFile], schema: pa.Schema, name_mapping: list[dict[str, Any]],
                  source: StatsSource, table: Storage, published: Storage) -> list[DataFile]:
    """The files with their column metrics, found by the name mapping readers apply (or, in files
    written with field ids, by those); a file is the table's, read in place, or one written out to
    `published`."""
    types = {iceberg_id(field, field.name): field.type for field in schema}
    columns = {name: (entry["field-id"], types[entry["field-id"]])
               for entry in name_mapping if entry["field-id"] in types for name in entry["names"]}

    def stats(path: str) -> Any:
        return source.file_stats(table if is_inside(path, table.root) else published, path)

    return [data_file if data_file.file_format == PUFFIN  # (a deletion vector has no columns)
            else replace(data_file, metrics=metrics_of(stats(_path_of(data_file.path)), columns, name_mapping))
            for data_file in files]


def _snapshot_id(snapshot: SnapshotFiles, digest: str) -> int:
    instant = snapshot.scan.read_instant
    return history_snapshot_id(instant) if instant is not None else int(digest[:15], 16)


def _manifest_entries(snapshots: Sequence[SnapshotFiles], ids: Sequence[int]) -> list[list[ManifestEntry]]:
    """Each snapshot's manifest entries, as a native writer records them: a file its parent had
    too is existing (keeping the snapshot and sequence number that added it), a new one added,
    and a file of the parent's it no longer has deleted."""
    found = []
    previous: dict[str, ManifestEntry] = {}
    for number, (snapshot, snapshot_id) in enumerate(zip(snapshots, ids, strict=True), start=1):
        current: dict[str, ManifestEntry] = {}
        for data_file in snapshot.files:
            before = previous.get(data_file.path)
            current[data_file.path] = ManifestEntry(EXISTING, before.snapshot_id, before.sequence_number, data_file) \
                if before is not None else ManifestEntry(ADDED, snapshot_id, number, data_file)
        gone = [ManifestEntry(DELETED, snapshot_id, e.sequence_number, e.file)
                for path, e in previous.items() if path not in current]
        found.append(list(current.values()) + gone)
        previous = current
    return found


def snapshot_summary(entries: Sequence[ManifestEntry], *, first: bool) -> dict[str, str]:
    """A snapshot's summary as Iceberg's Java writer fills it: the operation, what was added and
    removed (only the counts that are not zero), and the totals of the files it holds."""
    def of(status: tuple[int, ...], content: int) -> list[DataFile]:
        return [e.file for e in entries if e.status in status and e.file.content == content]

    added, removed = of((ADDED,), DATA), of((DELETED,), DATA)
    added_deletes, removed_deletes = of((ADDED,), POSITION_DELETES), of((DELETED,), POSITION_DELETES)
    live, live_deletes = of((ADDED, EXISTING), DATA), of((ADDED, EXISTING), POSITION_DELETES)

    def vectors(files: list[DataFile]) -> int:
        return sum(f.file_format == PUFFIN for f in files)

    if first or (not removed and not added_deletes and not removed_deletes):
        operation = "append"
    elif not added and not added_deletes:
        operation = "delete"
    else:
        operation = "overwrite"
    summary = {"operation": operation}
    changed = {f.partition_path for f in added + removed + added_deletes + removed_deletes}
    for key, value in (
        ("added-data-files", len(added)), ("deleted-data-files", len(removed)),
        ("added-delete-files", len(added_deletes)), ("removed-delete-files", len(removed_deletes)),
        ("added-position-delete-files", len(added_deletes) - vectors(added_deletes)),
        ("removed-position-delete-files", len(removed_deletes) - vectors(removed_deletes)),
        ("added-dvs", vectors(added_deletes)), ("removed-dvs", vectors(removed_deletes)),
        ("added-records", sum(f.record_count for f in added)), ("deleted-records", sum(f.record_count for f in removed)),
        ("added-files-size", sum(f.size for f in added + added_deletes)),
        ("removed-files-size", sum(f.size for f in removed + removed_deletes)),
        ("added-position-deletes", sum(f.record_count for f in added_deletes)),
        ("removed-position-deletes", sum(f.record_count for f in removed_deletes)),
    ):
        if value:
            summary[key] = str(value)
    summary.update({
        "changed-partition-count": str(len(changed)),
        "total-records": str(sum(f.record_count for f in live)),
        "total-files-size": str(sum(f.size for f in live + live_deletes)),
        "total-data-files": str(len(live)),
        "total-delete-files": str(len(live_deletes)),
        "total-position-deletes": str(sum(f.record_count for f in live_deletes)),
        "total-equality-deletes": "0",
    })
    return summary


class PublishFolderError(HudiShimError):
    """The Iceberg folder cannot take the published files: it lies inside a table's own folder,
    or cannot be written (read-only, no permission, full)."""


#: What a folder that cannot be written answers.
_UNWRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC)


def _check_outside(folder: str, table_path: str, name: str) -> None:
    """Refuse to write a table's published files into its own folder (a reader of the Hudi table
    would take them for a partition's files)."""
    if is_inside(folder, table_path):
        raise PublishFolderError(
            f"the Iceberg folder {os.path.dirname(folder)} puts table {name}'s published files inside the table "
            f"({table_path}); choose an --iceberg-dir outside the tables")


def _data_files(scan: shim.Scan, layout: Layout, touches: dict[tuple[str, str] | None, bytes],
                data_folder: str, slices: SliceWriter, stats: Mapping[str, Mapping[str, ColumnStats]], *,
                vectors: bool = False) -> tuple[list[DataFile], int]:
    """Every data and position delete file of the snapshot (deletes as deletion vectors with
    `vectors`), and how many slices were written out (a base file's rows from its column stats
    when the metadata table has them, its size from the listing)."""
    files: list[DataFile] = []
    written = 0

    def add(out: WrittenFile, partition: str, content: int = DATA, references: str | None = None) -> None:
        if out.path is None:
            return
        data_file = DataFile(file_uri(out.path), out.record_count, out.size, content, partition, references)
        if out.vector is not None:
            offset, length = out.vector
            data_file = replace(data_file, file_format=PUFFIN, content_offset=offset, content_size=length)
        files.append(data_file)

    for placement in layout.placements:
        file_slice = placement.file_slice
        partition = file_slice.partition_path
        touched = touches.get((file_slice.partition_path, file_slice.file_id), touches[None])
        if placement.base_path is None:
            add(slices.whole(scan, file_slice, touched, data_folder), partition)
            written += 1
            continue
        base_uri = file_uri(placement.base_path)
        table = scan.table.storage
        rows = stats_rows(stats.get(placement.base_path))
        listed = file_slice.base_file.size if file_slice.base_file is not None else 0
        files.append(DataFile(base_uri, rows if rows is not None else parquet_footer(table, placement.base_path).num_rows,
                              listed if listed > 0 else table.file_size(placement.base_path), DATA, partition))
        if placement.merge_logs:
            log_rows, deletes = slices.log_side(scan, file_slice, touched, base_uri, data_folder, vectors=vectors)
            add(log_rows, partition)
            add(deletes, partition, POSITION_DELETES, references=base_uri)
    return files, written


def _mapped_names(mapping: list[dict[str, Any]]) -> list[str]:
    """The top-level names of a name mapping (what files' columns are called)."""
    return [name for entry in mapping for name in entry["names"]]


def _instant_ms(instant: str | None) -> int:
    if instant is None:
        return 0
    digits = instant_key(instant)[:17].ljust(17, "0")
    moment = dt.datetime.strptime(digits[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    return int(moment.timestamp() * 1000) + int(digits[14:17])


def _path_of(uri: str) -> str:
    return from_uri(uri)

