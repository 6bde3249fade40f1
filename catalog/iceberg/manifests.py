"""Iceberg (format version 2) manifest files and manifest lists, written as Avro with fastavro.

A published view is one snapshot that adds all its files: a manifest of data files, a manifest
of position delete files when some base rows are superseded by log records, and a manifest list
naming them. The Avro schemas carry Iceberg's field ids (`field-id`), which
readers use to find fields.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import fastavro

ADDED = 1  # manifest entry status
DATA = 0  # content: data files (manifest entries) / data manifests (manifest list)
POSITION_DELETES = 1  # content: position delete files / delete manifests
DELETES = 1


@dataclass(frozen=True, slots=True)
class DataFile:
    """One Parquet file of a snapshot: data (content 0) or position deletes (content 1)."""

    path: str
    record_count: int
    size: int
    content: int = DATA


def _optional(name: str, field_id: int, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None, "field-id": field_id}


def _required(name: str, field_id: int, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": avro_type, "field-id": field_id}


_DATA_FILE = {
    "type": "record",
    "name": "r2",
    "fields": [
        _required("content", 134, "int"),
        _required("file_path", 100, "string"),
        _required("file_format", 101, "string"),
        _required("partition", 102, {"type": "record", "name": "r102", "fields": []}),
        _required("record_count", 103, "long"),
        _required("file_size_in_bytes", 104, "long"),
    ],
}

MANIFEST_ENTRY = {
    "type": "record",
    "name": "manifest_entry",
    "fields": [
        _required("status", 0, "int"),
        _optional("snapshot_id", 1, "long"),
        _optional("sequence_number", 3, "long"),
        _optional("file_sequence_number", 4, "long"),
        _required("data_file", 2, _DATA_FILE),
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
    ],
}


def manifest_bytes(files: Sequence[DataFile], snapshot_id: int, sequence_number: int,
                   table_schema: dict[str, Any], content: int = DATA) -> bytes:
    """A manifest adding `files` (all data, or all position deletes: `content`) in snapshot
    `snapshot_id` (unpartitioned spec 0)."""
    records = [{
        "status": ADDED,
        "snapshot_id": snapshot_id,
        "sequence_number": sequence_number,
        "file_sequence_number": sequence_number,
        "data_file": {"content": f.content, "file_path": f.path, "file_format": "PARQUET", "partition": {},
                      "record_count": f.record_count, "file_size_in_bytes": f.size},
    } for f in files]
    metadata = {
        "schema": json.dumps(table_schema),
        "schema-id": str(table_schema.get("schema-id", 0)),
        "partition-spec": "[]",
        "partition-spec-id": "0",
        "format-version": "2",
        "content": "deletes" if content == DELETES else "data",
    }
    return _avro(MANIFEST_ENTRY, records, metadata)


@dataclass(frozen=True, slots=True)
class Manifest:
    """A written manifest: where, how long, what it holds."""

    path: str
    length: int
    content: int
    files: tuple[DataFile, ...]


def manifest_list_bytes(manifests: Sequence[Manifest], snapshot_id: int, sequence_number: int) -> bytes:
    """The manifest list of snapshot `snapshot_id`, naming its manifests."""
    records = [{
        "manifest_path": m.path,
        "manifest_length": m.length,
        "partition_spec_id": 0,
        "content": m.content,
        "sequence_number": sequence_number,
        "min_sequence_number": sequence_number,
        "added_snapshot_id": snapshot_id,
        "added_files_count": len(m.files),
        "existing_files_count": 0,
        "deleted_files_count": 0,
        "added_rows_count": sum(f.record_count for f in m.files),
        "existing_rows_count": 0,
        "deleted_rows_count": 0,
    } for m in manifests]
    metadata = {"snapshot-id": str(snapshot_id), "parent-snapshot-id": "null",
                "sequence-number": str(sequence_number), "format-version": "2"}
    return _avro(MANIFEST_FILE, records, metadata)


def _avro(schema: dict[str, Any], records: list[dict[str, Any]], metadata: dict[str, str]) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, metadata=metadata, codec="null")
    return out.getvalue()
