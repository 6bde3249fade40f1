"""Rolling back a failed write on a table-version-6 timeline.

Like Hudi's marker-based rollback: the rollback gets its own instant
(`<ts>.rollback.requested` with an Avro `HoodieRollbackPlan`, `<ts>.rollback.inflight`), the
files the failed write created (found from its markers) are deleted, then the failed instant's
pending timeline files, and last the completed `<ts>.rollback` with `HoodieRollbackMetadata`.
Every log file this writer creates holds the blocks of one instant only, so a failed
deltacommit's log files are deleted too instead of being masked by rollback command blocks.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass

from shim.files import parse_base_file, parse_log_file
from shim.storage import Storage, join, paths
from shim.timeline.instant import Action, Instant
from shim.write.avro_metadata import ROLLBACK_METADATA, ROLLBACK_PLAN, encode_avro_record
from shim.write.heartbeat import stop as stop_heartbeat
from shim.write.markers import IOType, Marker, delete_marker_folder, list_markers
from shim.write.schema_history import remove_schema_files


@dataclass(frozen=True, slots=True)
class RollbackResult:
    """What a rollback did."""

    rollback_instant: str
    rolled_back: str
    deleted: tuple[str, ...]
    failed: tuple[str, ...]


def _timeline_name(instant: str, action: Action, state: str) -> str:
    if state == "inflight" and action is Action.COMMIT:
        return f"{instant}.inflight"
    return f"{instant}.{action.value}.{state}"


def rollback_failed_write(
    storage: Storage,
    failed: Instant,
    rollback_instant: str,
    *,
    keep_requested: bool = False,
    extra_files: Iterable[Marker] = (),
) -> RollbackResult:
    """Roll back the pending instant `failed`, whose files are named by its markers.

    Args:
        keep_requested: leave `<instant>.<action>.requested` (a compaction plan to run again).
        extra_files: files to delete besides those the markers name.
    """
    table_path = storage.root
    started = time.monotonic()
    markers = {(m.partition_path, m.file_name): m for m in [*list_markers(storage, failed.requested_time),
                                                            *extra_files]}
    by_partition: dict[str, list[Marker]] = {}
    for marker in markers.values():
        by_partition.setdefault(marker.partition_path, []).append(marker)
    hoodie = paths.hoodie(table_path)
    storage.write_atomically(
        os.path.join(hoodie, f"{rollback_instant}.rollback.requested"),
        encode_avro_record(ROLLBACK_PLAN, _plan(table_path, failed, by_partition)),
    )
    storage.write_atomically(os.path.join(hoodie, f"{rollback_instant}.rollback.inflight"), b"")
    deleted: dict[str, list[str]] = {}
    failed_paths: dict[str, list[str]] = {}
    logs: dict[str, dict[str, int]] = {}
    for partition, entries in sorted(by_partition.items()):
        for marker in entries:
            path = marker.data_path(table_path)
            try:
                size = storage.file_size(path)
                storage.remove(path)
            except FileNotFoundError:
                continue  # the writer died before creating it
            except OSError:
                failed_paths.setdefault(partition, []).append(path)
                continue
            deleted.setdefault(partition, []).append(path)
            if parse_log_file(marker.file_name, partition) is not None:
                logs.setdefault(partition, {})[path] = size
    action = failed.action
    for state in ("inflight",) if keep_requested else ("inflight", "requested"):
        storage.remove(os.path.join(hoodie, _timeline_name(failed.requested_time, action, state)), missing_ok=True)
    remove_schema_files(storage, failed.requested_time)
    delete_marker_folder(storage, failed.requested_time)
    stop_heartbeat(storage, failed.requested_time)
    partitions = sorted(set(deleted) | set(failed_paths))
    metadata = {
        "startRollbackTime": rollback_instant,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": sum(len(v) for v in deleted.values()),
        "commitsRollback": [failed.requested_time],
        "partitionMetadata": {
            p: {
                "partitionPath": p,
                "successDeleteFiles": deleted.get(p, []),
                "failedDeleteFiles": failed_paths.get(p, []),
                "rollbackLogFiles": {},
                "logFilesFromFailedCommit": logs.get(p, {}),
            }
            for p in partitions
        },
        "version": 1,
        "instantsRollback": [{"commitTime": failed.requested_time, "action": action.value}],
    }
    storage.write_atomically(os.path.join(hoodie, f"{rollback_instant}.rollback"), encode_avro_record(ROLLBACK_METADATA, metadata))
    return RollbackResult(
        rollback_instant,
        failed.requested_time,
        tuple(p for paths in deleted.values() for p in paths),
        tuple(p for paths in failed_paths.values() for p in paths),
    )


def _plan(table_path: str, failed: Instant, by_partition: dict[str, list[Marker]]) -> dict[str, object]:
    requests = []
    for partition, entries in sorted(by_partition.items()):
        bases = [m for m in entries if parse_log_file(m.file_name, partition) is None]
        if bases:
            requests.append({
                "partitionPath": partition,
                "fileId": "",
                "latestBaseInstant": "",
                "filesToBeDeleted": [join(table_path, partition, m.file_name) for m in bases],
                "logBlocksToBeDeleted": {},
            })
        for marker in entries:
            log = parse_log_file(marker.file_name, partition)
            if log is None:
                continue
            requests.append({
                "partitionPath": partition,
                "fileId": log.file_id,
                "latestBaseInstant": log.instant_time,
                "filesToBeDeleted": [join(table_path, partition, marker.file_name)],
                "logBlocksToBeDeleted": {},
            })
    return {
        "instantToRollback": {"commitTime": failed.requested_time, "action": failed.action.value},
        "RollbackRequests": requests,
        "version": 1,
    }


def base_files_of_instant(storage: Storage, partitions: Iterable[str], instant: str) -> list[Marker]:
    """Base files named with `instant` (used when a failed write left no markers)."""
    table_path = storage.root
    found = []
    for partition in partitions:
        folder = join(table_path, partition)
        for name in storage.list_names(folder):
            base = parse_base_file(name, partition)
            if base is not None and base.instant_time == instant:
                found.append(Marker(partition, name, IOType.CREATE))
    return found
