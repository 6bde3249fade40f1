"""Running a clean on a table-version-6 timeline, as Hudi's cleaner does after a commit.

A clean gets its own instant: `<ts>.clean.requested` holding the Avro `HoodieCleanerPlan`
(`clean_plan` decides which files go), `<ts>.clean.inflight` (the plan again), the files deleted,
and last `<ts>.clean` with the Avro `HoodieCleanMetadata`, whose `earliestCommitToRetain` tells
readers how far back time travel still works. Only file slices no read at or after that commit
needs are deleted (by file versions: none the latest commit reads), so a clean that dies halfway
changes no read that is allowed; the next clean finishes it first.
The caller keeps other writers from starting meanwhile (the table guard).
"""

from __future__ import annotations

import datetime
import os
import time
from dataclasses import dataclass

from shim.errors import CorruptFileError, WriteError
from shim.properties import TableConfig
from shim.storage import Storage, join, paths
from shim.timeline.instant import Action, instant_key
from shim.timeline.timeline import Timeline
from shim.write.avro_metadata import CLEAN_METADATA, CLEANER_PLAN, decode_avro_record, encode_avro_record
from shim.write.clock import new_instant_time
from shim.write.service_options import CleanSettings
from shim.write.services.clean_plan import CleanPlan, files_by_partition, plan_clean

CLEAN_METADATA_VERSION = 2


@dataclass(frozen=True, slots=True)
class CleanResult:
    """What one clean did (file names relative to their partition)."""

    clean_instant: str
    earliest_retained: str
    deleted: tuple[tuple[str, str], ...]
    failed: tuple[tuple[str, str], ...]


def clean_table(storage: Storage, config: TableConfig, settings: CleanSettings | None = None, *,
                now: datetime.datetime | None = None) -> list[CleanResult]:
    """Finish interrupted cleans, then plan and run a new clean when some files can go.

    Returns one result per clean run (none when there was nothing to delete)."""
    table_path = storage.root
    if config.timeline_layout_version != 1:
        raise WriteError(f"{table_path}: hudi-shim cleans table version 6 (timeline layout 1) only", path=table_path)
    settings = settings or CleanSettings()
    hoodie = paths.hoodie(table_path)
    timeline = Timeline.load(storage, config)
    results = []
    for pending in timeline.pending(Action.CLEAN):
        path = os.path.join(hoodie, f"{pending.requested_time}.clean.requested")
        if not storage.exists(path):
            path = os.path.join(hoodie, f"{pending.requested_time}.clean.inflight")
        try:
            record = decode_avro_record(storage.read_bytes(path))
        except (ValueError, EOFError) as exc:  # fastavro's errors for bytes that are not an Avro container
            raise CorruptFileError(f"{path}: the interrupted clean's plan does not decode: {exc}", path=path) from exc
        interrupted = CleanPlan.from_avro(record, path)
        results.append(_run(storage, pending.requested_time, interrupted))
    if results:
        timeline = Timeline.load(storage, config)
    plan = plan_clean(storage, timeline, settings, now)
    if plan is None:
        return results
    latest = max((i.requested_time for i in timeline.instants), key=instant_key, default=None)
    instant = new_instant_time(after=latest)
    storage.write_atomically(os.path.join(hoodie, f"{instant}.clean.requested"),
                     encode_avro_record(CLEANER_PLAN, plan.to_avro(table_path)))
    results.append(_run(storage, instant, plan))
    return results


def _run(storage: Storage, instant: str, plan: CleanPlan) -> CleanResult:
    """Move the clean to inflight, delete its files, complete it."""
    table_path = storage.root
    started = time.monotonic()
    hoodie = paths.hoodie(table_path)
    storage.write_atomically(os.path.join(hoodie, f"{instant}.clean.inflight"),
                     encode_avro_record(CLEANER_PLAN, plan.to_avro(table_path)))
    deleted: list[tuple[str, str]] = []
    failed: list[tuple[str, str]] = []
    for partition, name in files_by_partition(plan):
        try:
            storage.remove(join(table_path, partition, name))
            deleted.append((partition, name))
        except OSError:  # already gone (an interrupted clean) or not deletable: recorded as Hudi does
            failed.append((partition, name))
    retained = plan.earliest_retained.requested_time if plan.earliest_retained else ""
    metadata = {
        "startCleanTime": instant,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": len(deleted),
        "earliestCommitToRetain": retained,
        "lastCompletedCommitTimestamp": plan.last_completed,
        "partitionMetadata": {
            partition: {
                "partitionPath": partition,
                "policy": plan.policy,
                "deletePathPatterns": list(names),
                "successDeleteFiles": [n for p, n in deleted if p == partition],
                "failedDeleteFiles": [n for p, n in failed if p == partition],
                "isPartitionDeleted": False,
            }
            for partition, names in sorted(plan.files.items())
        },
        "version": CLEAN_METADATA_VERSION,
        "bootstrapPartitionMetadata": {},
        "extraMetadata": None,
    }
    storage.write_atomically(os.path.join(hoodie, f"{instant}.clean"), encode_avro_record(CLEAN_METADATA, metadata))
    return CleanResult(instant, retained, tuple(deleted), tuple(failed))
