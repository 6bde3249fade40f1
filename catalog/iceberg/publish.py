"""A registered table's view published as Iceberg table metadata (format version 2).

The Iceberg table has the view's schema (column ids as field ids), the name mapping that reads
Hudi's base files in place, and one snapshot adding every data file of the view at its latest
instant: base files where they are, and the slices they cannot describe written out reconciled
(see `catalog.iceberg.layout`), plus, for merge-on-read snapshots, what log files change
(standing log records, and position deletes of the base rows they supersede). The table is
partitioned by identity on Hudi's partition columns where the partition paths spell their values
(`catalog.iceberg.partitioning`). Metadata, manifests and written slices go to the publisher's
folder, named after their content, so publishing a view again after no commit writes nothing;
after a new version, the files no version published in the last `keep_seconds` names are
removed (`catalog.iceberg.retention`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

import shim
from catalog.iceberg.layout import Layout, mapped_ids, plan_layout
from catalog.iceberg.manifests import (
    DATA,
    DELETES,
    POSITION_DELETES,
    DataFile,
    Manifest,
    manifest_bytes,
    manifest_list_bytes,
)
from catalog.iceberg.materialize import WrittenFile, write_log_side, write_slice
from catalog.iceberg.metrics import file_metrics
from catalog.iceberg.partitioning import PartitionSpec, partition_spec
from catalog.iceberg.retention import expire
from catalog.iceberg.types import iceberg_id, iceberg_schema, last_column_id
from catalog.service import Catalog
from catalog.views import touch_keys
from shim.errors import HudiShimError
from shim.read.base_files import parquet_footer, read_file_schema
from shim.read.request import PlannedScan, build_scan
from shim.timeline.instant import instant_key
from shim.write.table_init import write_atomically

FORMAT_VERSION = 2
#: Changes when what manifests say of the same files changes (a new version is published then).
MANIFEST_VERSION = "metrics-2"
EXPIRE_EVERY_SECONDS = 60.0
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PublishedTable:
    """What an Iceberg REST catalog answers for a table: where its metadata is, and the metadata."""

    metadata_location: str
    metadata: dict[str, Any]
    written_slices: int


def file_uri(path: str) -> str:
    """An absolute local path as the `file:` URI Iceberg readers take."""
    return "file://" + os.path.abspath(path)


class IcebergPublisher:
    """Publishes the catalog's views as Iceberg tables under `folder`."""

    def __init__(self, catalog: Catalog, folder: str, *, keep_seconds: float = 900.0) -> None:
        self.catalog = catalog
        self.folder = os.path.abspath(folder)
        self.keep_seconds = keep_seconds
        self._lock = threading.Lock()
        self._publishing: dict[tuple[str, str], threading.Lock] = {}
        #: Per view, the last answer: the table object it was planned on and what it depends on.
        self._last: dict[tuple[str, str], tuple[shim.Table, str, PublishedTable]] = {}
        self._expired_at: dict[str, float] = {}

    def publish(self, name: str, view: str) -> PublishedTable:
        """The Iceberg table of `name`'s `view` ("snapshot" or "read_optimized") at its latest instant.

        Requests for the same view wait for one another, so a slice is written out once."""
        with self._lock:
            lock = self._publishing.setdefault((name, view), threading.Lock())
        with lock:
            return self._publish(name, view)

    def _publish(self, name: str, view: str) -> PublishedTable:
        handle = self.catalog.handle(name)
        table = handle.table()  # the same object while the table's timeline is unchanged
        _check_outside(os.path.join(self.folder, name), table.path, name)
        last = self._last.get((name, view))
        if last is not None and last[0] is table and os.path.exists(_path_of(last[2].metadata_location)):
            return last[2]
        scan = build_scan(table, mode=view)
        # What the answer depends on: the table, the commit read (a commit may change only the
        # schema, or make a log block already in a file visible), the schema and the slices.
        key = "\n".join([table.path, scan.read_instant or "", scan.data_schema.to_string(show_schema_metadata=False),
                         repr([(s.partition_path, s.file_id, s.base_file, s.log_files) for s in scan.slices])])
        if last is not None and last[1] == key and os.path.exists(_path_of(last[2].metadata_location)):
            result = last[2]
        else:
            published = self.catalog.view(name, view, scan.read_instant)
            layout = plan_layout(published, scan.slices, table.path, table.config.partition_fields)
            data_folder = os.path.join(self.folder, name, "data")
            files, written = _data_files(scan, layout, touch_keys(handle, table, scan.read_instant), data_folder)
            files = _with_metrics(files, scan.data_schema, layout.name_mapping)
            spec = partition_spec(table.config, scan.data_schema, [f.partition_path for f in files])
            result = self._write_metadata(name, view, table.path, scan, layout, spec, files, written)
        self._last[(name, view)] = (table, key, result)
        return result

    def _write_metadata(self, name: str, view: str, table_path: str, scan: PlannedScan, layout: Layout,
                        spec: PartitionSpec, files: list[DataFile], written: int) -> PublishedTable:
        schema = iceberg_schema(scan.data_schema)
        content = json.dumps([MANIFEST_VERSION, schema, layout.name_mapping, spec.to_json(),
                              [(f.path, f.size, f.content, f.partition_path) for f in files], scan.read_instant],
                             sort_keys=True)
        digest = hashlib.blake2b(content.encode("utf-8"), digest_size=16).hexdigest()
        folder = os.path.join(self.folder, name, view, "metadata")
        metadata_path = os.path.join(folder, f"{digest}.metadata.json")
        if os.path.exists(metadata_path):
            os.utime(metadata_path)  # published again: a version in use is never expired
            with open(metadata_path, encoding="utf-8") as handle:
                return PublishedTable(file_uri(metadata_path), json.load(handle), written)
        os.makedirs(folder, exist_ok=True)
        snapshot_id = int(digest[:15], 16)  # positive, below 2**63
        timestamp_ms = _instant_ms(scan.read_instant)
        manifests = []
        for kind in (DATA, DELETES):
            held = tuple(f for f in files if f.content == kind)
            if held or kind == DATA:
                manifest_path = os.path.join(folder, f"{digest}-m{kind}.avro")
                manifest = manifest_bytes(held, snapshot_id, 1, schema, spec, kind)
                write_atomically(manifest_path, manifest)
                manifests.append(Manifest(file_uri(manifest_path), len(manifest), kind, held))
        list_path = os.path.join(folder, f"snap-{snapshot_id}-{digest}.avro")
        write_atomically(list_path, manifest_list_bytes(manifests, snapshot_id, 1, spec))
        data = [f for f in files if f.content == DATA]
        deletes = [f for f in files if f.content != DATA]
        properties = {
            "schema.name-mapping.default": json.dumps(layout.name_mapping),
            "hudi-shim.table": name,
            "hudi-shim.view": view,
            "hudi-shim.instant": scan.read_instant or "",
            "hudi-shim.files-in-place": str(sum(p.base_path is not None for p in layout.placements)),
            "hudi-shim.slices-written": str(sum(p.base_path is None for p in layout.placements)),
        }
        metadata = {
            "format-version": FORMAT_VERSION,
            "table-uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{file_uri(table_path)}#{view}")),
            "location": file_uri(table_path),
            "last-sequence-number": 1,
            "last-updated-ms": timestamp_ms,
            "last-column-id": max(last_column_id(scan.data_schema), mapped_ids(layout.name_mapping)),
            "current-schema-id": 0,
            "schemas": [schema],
            "default-spec-id": 0,
            "partition-specs": [spec.to_json()],
            "last-partition-id": spec.last_partition_id,
            "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "properties": properties,
            "current-snapshot-id": snapshot_id,
            "refs": {"main": {"snapshot-id": snapshot_id, "type": "branch"}},
            "snapshots": [{
                "snapshot-id": snapshot_id,
                "sequence-number": 1,
                "timestamp-ms": timestamp_ms,
                "manifest-list": file_uri(list_path),
                "summary": {"operation": "append", "added-data-files": str(len(data)),
                            "added-records": str(sum(f.record_count for f in data)),
                            "added-delete-files": str(len(deletes)),
                            "added-position-deletes": str(sum(f.record_count for f in deletes)),
                            "total-data-files": str(len(data)),
                            "total-records": str(sum(f.record_count for f in data))},
                "schema-id": 0,
            }],
            "snapshot-log": [{"timestamp-ms": timestamp_ms, "snapshot-id": snapshot_id}],
            "metadata-log": [],
        }
        write_atomically(metadata_path, json.dumps(metadata, indent=1).encode("utf-8"))
        self._expire(name)
        return PublishedTable(file_uri(metadata_path), metadata, written)

    def _expire(self, name: str) -> None:
        """Remove the table's replaced versions, at most once per `EXPIRE_EVERY_SECONDS` (each pass
        reads the manifests of every version kept)."""
        now = time.monotonic()
        with self._lock:
            last = self._expired_at.get(name)
            if self.keep_seconds > 0 and last is not None and now - last < EXPIRE_EVERY_SECONDS:
                return
            self._expired_at[name] = now
        removed = expire(os.path.join(self.folder, name), self.keep_seconds)
        if removed:
            log.info("removed %d published files of %s no kept version names", len(removed), name)


def _with_metrics(files: list[DataFile], schema: pa.Schema, name_mapping: list[dict[str, Any]]) -> list[DataFile]:
    """The data files with their column metrics, found by the name mapping readers apply."""
    types = {iceberg_id(field, field.name): field.type for field in schema}
    columns = {name: (entry["field-id"], types[entry["field-id"]])
               for entry in name_mapping if entry["field-id"] in types for name in entry["names"]}
    with_metrics = []
    for data_file in files:
        if data_file.content == DATA:
            path = _path_of(data_file.path)
            metrics = file_metrics(parquet_footer(path), read_file_schema(path), columns)
            data_file = replace(data_file, metrics=metrics)
        with_metrics.append(data_file)
    return with_metrics


class PublishFolderError(HudiShimError):
    """The Iceberg folder would put published files inside a table's own folder."""


def _check_outside(folder: str, table_path: str, name: str) -> None:
    """Refuse to write a table's published files into its own folder (a reader of the Hudi table
    would take them for a partition's files)."""
    table_path = os.path.abspath(table_path)
    if os.path.commonpath([os.path.abspath(folder), table_path]) == table_path:
        raise PublishFolderError(
            f"the Iceberg folder {os.path.dirname(folder)} puts table {name}'s published files inside the table "
            f"({table_path}); choose an --iceberg-dir outside the tables")


def _data_files(scan: PlannedScan, layout: Layout, touches: dict[tuple[str, str] | None, bytes],
                data_folder: str) -> tuple[list[DataFile], int]:
    """Every data and position delete file of the snapshot, and how many slices were written out."""
    files: list[DataFile] = []
    written = 0

    def add(out: WrittenFile, partition: str, content: int = DATA, references: str | None = None) -> None:
        if out.path is not None:
            files.append(DataFile(file_uri(out.path), out.record_count, out.size, content, partition, references))

    for placement in layout.placements:
        file_slice = placement.file_slice
        partition = file_slice.partition_path
        touched = touches.get((file_slice.partition_path, file_slice.file_id), touches[None])
        if placement.base_path is None:
            add(write_slice(scan, file_slice, touched, data_folder), partition)
            written += 1
            continue
        base_uri = file_uri(placement.base_path)
        files.append(DataFile(base_uri, parquet_footer(placement.base_path).num_rows,
                              os.path.getsize(placement.base_path), DATA, partition))
        if placement.merge_logs:
            log_rows, deletes = write_log_side(scan, file_slice, touched, base_uri, data_folder)
            add(log_rows, partition)
            add(deletes, partition, POSITION_DELETES, references=base_uri)
    return files, written


def _instant_ms(instant: str | None) -> int:
    if instant is None:
        return 0
    digits = instant_key(instant)[:17].ljust(17, "0")
    moment = dt.datetime.strptime(digits[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    return int(moment.timestamp() * 1000) + int(digits[14:17])


def _path_of(uri: str) -> str:
    return uri.removeprefix("file://")

