"""Iceberg manifest files and manifest lists (format version 2, or 3), written as Avro with fastavro.

A published view's snapshot has a manifest of data files, a manifest of position delete files
when some base rows are superseded by log records, and a manifest list naming them. As a native
writer records them, a file the parent snapshot had too is an existing entry (with the snapshot
and sequence number that added it), a new one is added, and one the parent had and this
snapshot has not is a deleted entry; the manifest list counts each kind. The Avro schemas carry Iceberg's field ids (`field-id`), which readers use to find
fields. Files carry their partition's values (`catalog.iceberg.partitioning`), and a position
delete file names the one data file it deletes rows of (`referenced_data_file`, and bounds on
its `file_path` column, for readers that only look at those), so readers open only the delete
files of the data files they read. In format version 3 a delete file is a deletion vector, a
blob in a Puffin file (`content_offset`, `content_size_in_bytes`), and data files and data
manifests carry the first row id of their rows (`first_row_id`, `catalog.iceberg.row_lineage`).
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import fastavro

from catalog.iceberg.metrics import FileMetrics
from catalog.iceberg.partitioning import PartitionSpec
from catalog.iceberg.types import DELETE_FILE_PATH_ID

EXISTING, ADDED, DELETED = 0, 1, 2  # manifest entry status
DATA = 0  # content: data files (manifest entries) / data manifests (manifest list)
POSITION_DELETES = 1  # content: position delete files / delete manifests
DELETES = 1
#: The table's sort order (Hudi's files are not known to be sorted): Iceberg's unsorted order.
UNSORTED_ORDER_ID = 0


PARQUET, PUFFIN = "PARQUET", "PUFFIN"  # file formats: data and position delete files, deletion vectors


@dataclass(frozen=True, slots=True)
class DataFile:
    """One file of a snapshot: data (content 0) or position deletes (content 1: a Parquet file,
    or a deletion vector's blob in a Puffin file)."""

    path: str
    record_count: int
    size: int
    content: int = DATA
    partition_path: str = ""
    #: Position deletes: the data file whose rows they delete.
    references: str | None = None
    #: Column sizes, counts and bounds, and split offsets, from the file's footer.
    metrics: FileMetrics | None = None
    file_format: str = PARQUET
    #: A deletion vector: its blob's offset and length in the Puffin file.
    content_offset: int | None = None
    content_size: int | None = None


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """A file's entry in a snapshot's manifest: its status, the snapshot that added (or, for a
    deleted entry, deleted) it, the data sequence number it was added with, and (format version
    3, data files) the row id of its first row."""

    status: int
    snapshot_id: int
    sequence_number: int
    file: DataFile
    first_row_id: int | None = None


def _optional(name: str, field_id: int, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None, "field-id": field_id}


def _required(name: str, field_id: int, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": avro_type, "field-id": field_id}


def _by_field_id(name: str, field_id: int, key_id: int, value_type: str) -> dict[str, Any]:
    """A map from field id to a count or a bound, as Iceberg writes maps with int keys in Avro."""
    pairs = {"type": "record", "name": f"k{key_id}_v{key_id + 1}",
             "fields": [_required("key", key_id, "int"), _required("value", key_id + 1, value_type)]}
    return _optional(name, field_id, {"type": "array", "items": pairs, "logicalType": "map"})


#: What format version 3 adds to a manifest's `data_file` and to a manifest list's entries.
V3_DATA_FILE_FIELDS = (
    _optional("first_row_id", 142, "long"),
    _optional("content_offset", 144, "long"),
    _optional("content_size_in_bytes", 145, "long"),
)
V3_MANIFEST_FILE_FIELDS = (_optional("first_row_id", 520, "long"),)


def manifest_entry_schema(spec: PartitionSpec, format_version: int = 2) -> dict[str, Any]:
    """The Avro schema of manifest entries under `spec`."""
    data_file = {
        "type": "record",
        "name": "r2",
        "fields": [
            _required("content", 134, "int"),
            _required("file_path", 100, "string"),
            _required("file_format", 101, "string"),
            _required("partition", 102, spec.avro_record()),
            _required("record_count", 103, "long"),
            _required("file_size_in_bytes", 104, "long"),
            _by_field_id("column_sizes", 108, 117, "long"),
            _by_field_id("value_counts", 109, 119, "long"),
            _by_field_id("null_value_counts", 110, 121, "long"),
            _by_field_id("nan_value_counts", 137, 138, "long"),
            _by_field_id("lower_bounds", 125, 126, "bytes"),
            _by_field_id("upper_bounds", 128, 129, "bytes"),
            _optional("key_metadata", 131, "bytes"),
            _optional("split_offsets", 132, {"type": "array", "items": "long", "element-id": 133}),
            _optional("equality_ids", 135, {"type": "array", "items": "int", "element-id": 136}),
            _optional("sort_order_id", 140, "int"),
            _optional("referenced_data_file", 143, "string"),
            *(V3_DATA_FILE_FIELDS if format_version >= 3 else ()),
        ],
    }
    return {
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            _required("status", 0, "int"),
            _optional("snapshot_id", 1, "long"),
            _optional("sequence_number", 3, "long"),
            _optional("file_sequence_number", 4, "long"),
            _required("data_file", 2, data_file),
        ],
    }


_FIELD_SUMMARY = {
    "type": "record",
    "name": "r508",
    "fields": [
        _required("contains_null", 509, "boolean"),
        _optional("contains_nan", 518, "boolean"),
        _optional("lower_bound", 510, "bytes"),
        _optional("upper_bound", 511, "bytes"),
    ],
}

MANIFEST_FILE = {
    "type": "record",
    "name": "manifest_file",
    "fields": [
        _required("manifest_path", 500, "string"),
        _required("manifest_length", 501, "long"),
        _required("partition_spec_id", 502, "int"),
        _required("content", 517, "int"),
        _required("sequence_number", 515, "long"),
        _required("min_sequence_number", 516, "long"),
        _required("added_snapshot_id", 503, "long"),
        _required("added_files_count", 504, "int"),
        _required("existing_files_count", 505, "int"),
        _required("deleted_files_count", 506, "int"),
        _required("added_rows_count", 512, "long"),
        _required("existing_rows_count", 513, "long"),
        _required("deleted_rows_count", 514, "long"),
        _optional("partitions", 507, {"type": "array", "items": _FIELD_SUMMARY, "element-id": 508}),
    ],
}


def manifest_bytes(entries: Sequence[ManifestEntry], table_schema: dict[str, Any], spec: PartitionSpec,
                   content: int = DATA, format_version: int = 2) -> bytes:
    """A manifest of `entries` (all data files, or all position deletes: `content`), under
    partition spec `spec` (id 0)."""
    records = [{
        "status": e.status,
        "snapshot_id": e.snapshot_id,
        "sequence_number": e.sequence_number,
        "file_sequence_number": e.sequence_number,
        "data_file": _data_file(e.file, spec) | (
            {"first_row_id": e.first_row_id, "content_offset": e.file.content_offset,
             "content_size_in_bytes": e.file.content_size} if format_version >= 3 else {}),
    } for e in entries]
    metadata = {
        "schema": json.dumps(table_schema),
        "schema-id": str(table_schema.get("schema-id", 0)),
        "partition-spec": json.dumps(spec.to_json()["fields"]),
        "partition-spec-id": "0",
        "format-version": str(format_version),
        "content": "deletes" if content == DELETES else "data",
    }
    return _avro(manifest_entry_schema(spec, format_version), records, metadata)


def _data_file(file: DataFile, spec: PartitionSpec) -> dict[str, Any]:
    record: dict[str, Any] = {"content": file.content, "file_path": file.path, "file_format": file.file_format,
                              "partition": spec.record(file.partition_path), "record_count": file.record_count,
                              "file_size_in_bytes": file.size}
    metrics = file.metrics
    if metrics is not None:
        record.update(column_sizes=_pairs(metrics.column_sizes), value_counts=_pairs(metrics.value_counts),
                      null_value_counts=_pairs(metrics.null_counts), nan_value_counts=_pairs(metrics.nan_counts),
                      lower_bounds=_pairs(metrics.lower), upper_bounds=_pairs(metrics.upper),
                      split_offsets=list(metrics.split_offsets) or None)
    if file.content == DATA:
        record["sort_order_id"] = UNSORTED_ORDER_ID
    if file.references is not None:
        record["referenced_data_file"] = file.references
        if file.file_format == PARQUET:  # (a deletion vector has no columns to bound)
            bound = [{"key": DELETE_FILE_PATH_ID, "value": file.references.encode("utf-8")}]
            record.update(lower_bounds=bound, upper_bounds=bound)
    return record


def _pairs(values: dict[int, Any]) -> list[dict[str, Any]] | None:
    return [{"key": key, "value": value} for key, value in sorted(values.items())] or None


@dataclass(frozen=True, slots=True)
class Manifest:
    """A written manifest: where, how long, what it holds."""

    path: str
    length: int
    content: int
    entries: tuple[ManifestEntry, ...]

    def count(self, status: int) -> tuple[int, int]:
        """Files and rows of the entries of `status`."""
        held = [e.file.record_count for e in self.entries if e.status == status]
        return len(held), sum(held)


def manifest_list_bytes(manifests: Sequence[Manifest], snapshot_id: int, sequence_number: int,
                        spec: PartitionSpec, parent: int | None = None, *,
                        first_row_id: int | None = None) -> bytes:
    """The manifest list of snapshot `snapshot_id`, naming its manifests (with their entries'
    counts and the bounds of their partition values). With `first_row_id`, a format version 3
    list: each data manifest's rows take row ids from there on (added and existing rows, in
    turn), delete manifests none."""
    records = []
    next_row_id = first_row_id
    for m in manifests:
        (added, added_rows), (existing, existing_rows), (deleted, deleted_rows) = (
            m.count(ADDED), m.count(EXISTING), m.count(DELETED))
        live = [e.sequence_number for e in m.entries if e.status != DELETED]
        records.append({
            "manifest_path": m.path,
            "manifest_length": m.length,
            "partition_spec_id": 0,
            "content": m.content,
            "sequence_number": sequence_number,
            "min_sequence_number": min(live, default=sequence_number),
            "added_snapshot_id": snapshot_id,
            "added_files_count": added,
            "existing_files_count": existing,
            "deleted_files_count": deleted,
            "added_rows_count": added_rows,
            "existing_rows_count": existing_rows,
            "deleted_rows_count": deleted_rows,
            "partitions": spec.summaries([e.file.partition_path for e in m.entries]),
        })
        if next_row_id is not None:
            records[-1]["first_row_id"] = next_row_id if m.content == DATA else None
            next_row_id += added_rows + existing_rows if m.content == DATA else 0
    metadata = {"snapshot-id": str(snapshot_id), "parent-snapshot-id": "null" if parent is None else str(parent),
                "sequence-number": str(sequence_number), "format-version": "2" if first_row_id is None else "3"}
    schema = MANIFEST_FILE
    if first_row_id is not None:
        metadata["first-row-id"] = str(first_row_id)
        schema = MANIFEST_FILE | {"fields": [*MANIFEST_FILE["fields"], *V3_MANIFEST_FILE_FIELDS]}
    return _avro(schema, records, metadata)


def _avro(schema: dict[str, Any], records: list[dict[str, Any]], metadata: dict[str, str]) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, metadata=metadata, codec="null")
    return out.getvalue()
