"""Instant contents: commit metadata (JSON in table version 6, Avro in 8+) and plans."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import fastavro

from shim.errors import InvalidTableError

AVRO_MAGIC = b"Obj\x01"


def decode_instant_content(data: bytes, path: str) -> dict[str, Any]:
    """Decode an instant file: an Avro container (first record), JSON, or empty -> {}."""
    if not data.strip():
        return {}
    try:
        if data.startswith(AVRO_MAGIC):
            records = list(fastavro.reader(io.BytesIO(data)))
            first = records[0] if records else {}
            return dict(first) if isinstance(first, dict) else {}
        parsed = json.loads(data.decode("utf-8"))
    except Exception as exc:
        raise InvalidTableError(f"cannot decode timeline file {path}: {exc}", path=path) from exc
    if not isinstance(parsed, dict):
        raise InvalidTableError(f"timeline file {path} does not hold a JSON object", path=path)
    return parsed


LATEST_SCHEMA_KEY = "latest_schema"
"""The `extraMetadata` key of a commit's InternalSchema (Hudi's `SerDeHelper.LATEST_SCHEMA`)."""


@dataclass(frozen=True, slots=True)
class WriteStat:
    """What one commit wrote to one file group."""

    partition_path: str
    file_id: str
    path: str
    prev_commit: str | None = None
    num_writes: int = 0
    num_inserts: int = 0
    num_updates: int = 0
    num_deletes: int = 0
    file_size: int = 0
    base_file: str | None = None
    log_files: tuple[str, ...] = ()
    log_offset: int = 0

    @property
    def file_name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class CommitMetadata:
    """`HoodieCommitMetadata` / `HoodieReplaceCommitMetadata` of a completed write."""

    write_stats: tuple[WriteStat, ...] = ()
    replaced_file_ids: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    operation_type: str | None = None
    extra_metadata: Mapping[str, str] = field(default_factory=dict)
    compacted: bool = False

    @property
    def schema(self) -> str | None:
        """Avro writer schema of the commit (no meta fields)."""
        value = self.extra_metadata.get("schema")
        return value or None

    @property
    def latest_schema(self) -> str | None:
        """InternalSchema JSON, present on schema-on-read tables: Hudi's key `latest_schema`
        (`SerDeHelper.LATEST_SCHEMA`), or `latestSchema`, which this project's writer used before."""
        value = self.extra_metadata.get(LATEST_SCHEMA_KEY) or self.extra_metadata.get("latestSchema")
        return value or None

    @property
    def partitions(self) -> set[str]:
        return {stat.partition_path for stat in self.write_stats}

    def touched_file_groups(self) -> set[tuple[str, str]]:
        """(partition, file id) of every file group this commit wrote."""
        return {(stat.partition_path, stat.file_id) for stat in self.write_stats}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str = "") -> CommitMetadata:
        """Build from the decoded JSON/Avro record; unknown keys are ignored."""
        stats: list[WriteStat] = []
        for partition, entries in (raw.get("partitionToWriteStats") or {}).items():
            for entry in entries or ():
                if not isinstance(entry, Mapping):
                    raise InvalidTableError(f"malformed write stat in {path}", path=path)
                stats.append(_write_stat(partition, entry))
        replaced = {
            partition: tuple(ids or ())
            for partition, ids in (raw.get("partitionToReplaceFileIds") or {}).items()
        }
        extra = {str(k): str(v) for k, v in (raw.get("extraMetadata") or {}).items() if v is not None}
        operation = raw.get("operationType")
        return cls(
            write_stats=tuple(stats),
            replaced_file_ids=replaced,
            operation_type=str(operation) if operation else None,
            extra_metadata=extra,
            compacted=bool(raw.get("compacted") or False),
        )


def _write_stat(partition: str, entry: Mapping[str, Any]) -> WriteStat:
    def _int(key: str) -> int:
        value = entry.get(key)
        return int(value) if value is not None else 0

    prev = entry.get("prevCommit")
    return WriteStat(
        partition_path=str(entry.get("partitionPath") if entry.get("partitionPath") is not None else partition),
        file_id=str(entry.get("fileId") or ""),
        path=str(entry.get("path") or ""),
        prev_commit=None if prev in (None, "null") else str(prev),
        num_writes=_int("numWrites"),
        num_inserts=_int("numInserts"),
        num_updates=_int("numUpdateWrites"),
        num_deletes=_int("numDeletes"),
        file_size=_int("fileSizeInBytes"),
        base_file=entry.get("baseFile") or None,
        log_files=tuple(entry.get("logFiles") or ()),
        log_offset=_int("logOffset"),
    )
