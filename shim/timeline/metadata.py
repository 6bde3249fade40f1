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
        """Build from the decoded JSON/Avro record; unknown keys are ignored.

        Raises:
            InvalidTableError: a known key holds a value of the wrong kind (named, with `path`).
        """
        stats: list[WriteStat] = []
        for partition, entries in _mapping(raw, "partitionToWriteStats", path).items():
            for entry in _sequence(entries, f"partitionToWriteStats[{partition!r}]", path):
                if not isinstance(entry, Mapping):
                    raise InvalidTableError(f"malformed write stat in {path}", path=path)
                stats.append(_write_stat(str(partition), entry, path))
        replaced = {
            str(partition): tuple(str(i) for i in _sequence(ids, f"partitionToReplaceFileIds[{partition!r}]", path))
            for partition, ids in _mapping(raw, "partitionToReplaceFileIds", path).items()
        }
        extra = {str(k): str(v) for k, v in _mapping(raw, "extraMetadata", path).items() if v is not None}
        operation = raw.get("operationType")
        return cls(
            write_stats=tuple(stats),
            replaced_file_ids=replaced,
            operation_type=str(operation) if operation else None,
            extra_metadata=extra,
            compacted=bool(raw.get("compacted") or False),
        )


def _mapping(raw: Mapping[str, Any], key: str, path: str) -> Mapping[Any, Any]:
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidTableError(f"{path}: {key} is {type(value).__name__}, not an object", path=path)
    return value


def _sequence(value: Any, what: str, path: str) -> list[Any] | tuple[Any, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise InvalidTableError(f"{path}: {what} is {type(value).__name__}, not a list", path=path)
    return value


def _write_stat(partition: str, entry: Mapping[str, Any], path: str) -> WriteStat:
    file_id = str(entry.get("fileId") or "")

    def _int(key: str) -> int:
        value = entry.get(key)
        if value is None:
            return 0
        try:
            return int(value)  # (some writers quote longs)
        except (TypeError, ValueError):
            shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:40]}..."
            raise InvalidTableError(f"{path}: {key} of file group {file_id!r} is {shown}, not a number",
                                    path=path) from None

    prev = entry.get("prevCommit")
    log_files = _sequence(entry.get("logFiles"), f"logFiles of file group {file_id!r}", path)
    return WriteStat(
        partition_path=str(entry.get("partitionPath") if entry.get("partitionPath") is not None else partition),
        file_id=file_id,
        path=str(entry.get("path") or ""),
        prev_commit=None if prev in (None, "null") else str(prev),
        num_writes=_int("numWrites"),
        num_inserts=_int("numInserts"),
        num_updates=_int("numUpdateWrites"),
        num_deletes=_int("numDeletes"),
        file_size=_int("fileSizeInBytes"),
        base_file=str(entry.get("baseFile")) if entry.get("baseFile") else None,
        log_files=tuple(str(name) for name in log_files),
        log_offset=_int("logOffset"),
    )
