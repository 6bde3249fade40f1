"""Archiving the oldest instants of a table version 6 timeline, as Hudi's `HoodieTimelineArchiver`.

Every state file of the instants `archive_plan` chooses becomes one `HoodieArchivedMetaEntry`
record (commit metadata converted from JSON to Avro, clean and rollback metadata, compaction and
cleaner plans); the records go, `batch` to an Avro data block, into a new archive log file
`.hoodie/archived/.commits_.archive.<N>_1-0-1`. Then the instant files are deleted: pending
states first, then the completed ones oldest first, so the active timeline never has a hole.
Readers count files of instants before the active timeline's start as committed.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import fastavro

from shim.avro.schema import named_once, parse_avro_schema
from shim.errors import UnsupportedFeatureError
from shim.log.writer import encode_avro_records_block, write_log_file
from shim.properties import TableConfig
from shim.storage import Storage, paths
from shim.timeline.archived import next_archive_version
from shim.timeline.instant import Action, Instant, State
from shim.timeline.timeline import Timeline
from shim.write.avro_metadata import ARCHIVED_META_ENTRY, WRITE_STAT
from shim.write.service_options import ArchiveSettings
from shim.write.services.archive_plan import instants_to_archive

_WRITE_TOKEN = "1-0-1"
_STAT_FIELDS = tuple(field["name"] for field in WRITE_STAT["fields"])
_STRING_STATS = {"fileId", "path", "prevCommit", "prevFilePathOverwritten", "partitionPath"}
_ENTRY_SCHEMA = parse_avro_schema(ARCHIVED_META_ENTRY)
_ENTRY_WRITER = fastavro.parse_schema(named_once(_ENTRY_SCHEMA))


@dataclass(frozen=True, slots=True)
class ArchiveResult:
    """What an archival moved: the instant files, and the archive log file holding them."""

    instants: tuple[Instant, ...]
    archive_file: str


def archive_timeline(storage: Storage, config: TableConfig, settings: ArchiveSettings | None = None) -> ArchiveResult | None:
    """Archive what the rules allow (caller holds the table guard); None when nothing goes.

    Raises:
        UnsupportedFeatureError: a table version other than 6 (the version this writer writes; 8+
            archive to an LSM timeline).
    """
    table_path = storage.root
    if config.version != 6:
        raise UnsupportedFeatureError(
            f"{table_path}: archiving writes table version 6 archive logs; this table is version {config.version}",
            feature=f"archive-table-version-{config.version}")
    settings = settings or ArchiveSettings()
    timeline = Timeline.load(storage, config)
    chosen = instants_to_archive(timeline, settings)
    if not chosen:
        return None
    records = [_encode(archived_entry(timeline, inst)) for inst in chosen]
    batch = max(1, settings.batch)
    blocks = [encode_avro_records_block(records[i:i + batch], _ENTRY_SCHEMA, {})
              for i in range(0, len(records), batch)]
    folder = paths.archive_folder(table_path, config.archive_path)
    storage.make_dirs(folder)
    path = os.path.join(folder, f".commits_.archive.{next_archive_version(storage, config)}_{_WRITE_TOKEN}")
    write_log_file(storage, path, blocks)
    for inst in [i for i in chosen if not i.is_completed] + [i for i in chosen if i.is_completed]:
        storage.remove(os.path.join(timeline.folder, inst.file_name), missing_ok=True)
    return ArchiveResult(tuple(chosen), path)


def archived_entry(timeline: Timeline, instant: Instant) -> dict[str, Any]:
    """The `HoodieArchivedMetaEntry` of one instant file."""
    entry: dict[str, Any] = {
        "commitTime": instant.requested_time,
        "actionType": instant.action.value,
        "actionState": instant.state.name,
        "version": 1,
    }
    action, completed = instant.action, instant.is_completed
    if action is Action.CLEAN:
        if completed:
            entry["hoodieCleanMetadata"] = timeline.read_raw(instant)
        else:
            entry["hoodieCleanerPlan"] = _requested_content(timeline, instant) or None
    elif action is Action.ROLLBACK and completed:
        entry["hoodieRollbackMetadata"] = timeline.read_raw(instant)
    elif action is Action.COMPACTION:
        entry["hoodieCompactionPlan"] = _requested_content(timeline, instant) or None
    elif action is Action.REPLACE_COMMIT and completed:
        entry["hoodieReplaceCommitMetadata"] = avro_commit_metadata(timeline.read_raw(instant), replace=True)
    elif action is Action.REPLACE_COMMIT and instant.state is State.INFLIGHT:
        raw = timeline.read_raw(instant)
        if raw:
            entry["HoodieInflightReplaceMetadata"] = avro_commit_metadata(raw)
    elif action in (Action.COMMIT, Action.DELTA_COMMIT):
        raw = timeline.read_raw(instant)
        if raw or completed:
            entry["hoodieCommitMetadata"] = avro_commit_metadata(raw)
    return entry


def avro_commit_metadata(raw: Mapping[str, Any], *, replace: bool = False) -> dict[str, Any]:
    """Commit metadata (JSON, as in the instant file) in its Avro form, as Hudi converts it."""
    by_partition = raw.get("partitionToWriteStats") or {}
    stats = {str(partition): [_write_stat(stat) for stat in (entries or [])]
             for partition, entries in by_partition.items() if partition is not None}
    extra = {str(k): "" if v is None else str(v) for k, v in (raw.get("extraMetadata") or {}).items()}
    operation = "COMPACT" if raw.get("compacted") else raw.get("operationType")
    out: dict[str, Any] = {"partitionToWriteStats": stats, "extraMetadata": extra, "version": 1,
                           "operationType": None if operation is None else str(operation),
                           "compacted": bool(raw["compacted"]) if raw.get("compacted") is not None else None}
    if replace:
        out["partitionToReplaceFileIds"] = {str(p): [str(f) for f in ids or []]
                                            for p, ids in (raw.get("partitionToReplaceFileIds") or {}).items()}
    return out


def _write_stat(stat: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in _STAT_FIELDS:
        value = stat.get(name)
        out[name] = None if value is None else str(value) if name in _STRING_STATS else int(value)
    return out


def _requested_content(timeline: Timeline, instant: Instant) -> dict[str, Any]:
    """The plan in the requested file of a clean or compaction (its inflight file may be empty)."""
    requested = Instant(instant.requested_time, instant.action, State.REQUESTED, None,
                        f"{instant.requested_time}.{instant.action.value}.requested")
    present = timeline.storage.exists(os.path.join(timeline.folder, requested.file_name))
    return timeline.read_raw(requested if present else instant)


def _encode(entry: Mapping[str, Any]) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, _ENTRY_WRITER, dict(entry))
    return out.getvalue()
