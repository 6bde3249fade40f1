"""Which files a clean deletes: Hudi's cleaner policies on committed file slices.

KEEP_LATEST_COMMITS (Hudi's default, `hoodie.cleaner.commits.retained`, 10): the earliest commit
to retain is the N-th newest completed write, never later than the first pending write.
KEEP_LATEST_BY_HOURS (`hoodie.cleaner.hours.retained`, 24): it is the first completed write of
the last N hours. Either way every file group keeps its newest slice, every slice based at or
after the earliest retained commit, and the newest slice before it (what a read as of that commit
needs); older slices go, base file and log files. File groups replaced before the earliest
retained commit go entirely. Like Hudi's incremental cleaning, only partitions written since the
previous clean's earliest retained commit are looked at (every partition when there was none).

KEEP_LATEST_FILE_VERSIONS (`hoodie.cleaner.fileversions.retained`, 3): every file group keeps its
newest N slices, replaced file groups go entirely, every partition is looked at. Such a clean
retains no commit as a whole (Hudi records no earliest commit to retain), so after it only the
latest commit can be read.

Never deleted: files of writes that have not completed, slices a pending compaction reads,
savepointed files.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from shim.errors import InvalidArgumentError
from shim.layout.partitions import list_partitions
from shim.layout.slices import FileGroupFiles, list_file_groups
from shim.storage import Storage, join
from shim.timeline.instant import Action, Instant, State, instant_key
from shim.timeline.timeline import Timeline
from shim.write.service_options import CleanPolicy, CleanSettings

_WRITES = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)


@dataclass(frozen=True, slots=True)
class CleanPlan:
    """A clean to run: the files to delete, by partition (names relative to the partition)."""

    policy: str
    earliest_retained: Instant | None
    last_completed: str
    files: Mapping[str, tuple[str, ...]]

    def to_avro(self, table_path: str) -> dict[str, object]:
        """`HoodieCleanerPlan` version 2 (full file paths by partition)."""
        retained = self.earliest_retained
        return {
            "earliestInstantToRetain": None if retained is None else {
                "timestamp": retained.requested_time,
                "action": retained.action.completed_as.value,
                "state": "COMPLETED",
            },
            "lastCompletedCommitTimestamp": self.last_completed,
            "policy": self.policy,
            "filesToBeDeletedPerPartition": {},
            "version": 2,
            "filePathsToBeDeletedPerPartition": {
                partition: [{"filePath": join(table_path, partition, name), "isBootstrapBaseFile": False}
                            for name in names]
                for partition, names in sorted(self.files.items())
            },
            "partitionsToBeDeleted": [],
            "extraMetadata": None,
        }

    @classmethod
    def from_avro(cls, record: Mapping[str, object], source: str) -> CleanPlan:
        """Read back a plan (to finish a clean that was interrupted). Version 1 plans name files
        relative to their partition, version 2 plans give full paths."""
        retained = record.get("earliestInstantToRetain")
        instant = None
        if isinstance(retained, Mapping) and retained.get("timestamp"):
            stamp = str(retained["timestamp"])
            action = Action.parse(str(retained.get("action") or "commit"), source)
            instant = Instant(stamp, action, State.COMPLETED, None, f"{stamp}.{action.value}")
        files: dict[str, tuple[str, ...]] = {}
        by_path = record.get("filePathsToBeDeletedPerPartition")
        if isinstance(by_path, Mapping) and by_path:
            for partition, infos in by_path.items():
                files[str(partition)] = tuple(os.path.basename(str(info["filePath"])) for info in infos or ()
                                              if isinstance(info, Mapping) and info.get("filePath"))
        else:
            old = record.get("filesToBeDeletedPerPartition")
            if not isinstance(old, Mapping):
                raise InvalidArgumentError(f"{source}: cleaner plan names no files to delete")
            for partition, names in old.items():
                files[str(partition)] = tuple(os.path.basename(str(n)) for n in names or ())
        return cls(str(record.get("policy") or ""), instant, str(record.get("lastCompletedCommitTimestamp") or ""),
                   files)


def earliest_commit_to_retain(timeline: Timeline, settings: CleanSettings,
                              now: datetime.datetime | None = None) -> Instant | None:
    """The oldest completed write a clean keeps every read of (None: nothing to clean yet, or a
    policy that retains file versions, not commits)."""
    completed = timeline.completed_writes()
    if settings.policy is CleanPolicy.KEEP_LATEST_FILE_VERSIONS:
        return None
    if settings.policy is CleanPolicy.KEEP_LATEST_COMMITS:
        if len(completed) <= settings.commits_retained:
            return None
        candidate: Instant | None = completed[len(completed) - settings.commits_retained]
    else:
        moment = (now or datetime.datetime.now()) - datetime.timedelta(hours=settings.hours_retained)
        cutoff = moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"
        candidate = next((i for i in completed if instant_key(i.requested_time) >= cutoff), None)
    pending = sorted((i.requested_time for i in timeline.pending(*_WRITES)), key=instant_key)
    if candidate is not None and pending and instant_key(candidate.requested_time) > instant_key(pending[0]):
        # a pending write reads the table as of an older commit: keep what it reads
        older = [i for i in completed if instant_key(i.requested_time) < instant_key(pending[0])]
        candidate = older[-1] if older else None
    return candidate


def plan_clean(storage: Storage, timeline: Timeline, settings: CleanSettings,
               now: datetime.datetime | None = None) -> CleanPlan | None:
    """The clean to run now, or None when no file can go."""
    retained = earliest_commit_to_retain(timeline, settings, now)
    if settings.policy is CleanPolicy.KEEP_LATEST_FILE_VERSIONS:
        partitions = list_partitions(storage, timeline.config)
        replaced = set(_replaced_groups(timeline))
        versions = settings.file_versions_retained

        def outdated(group: FileGroupFiles) -> list[str]:
            return [name for key in _committed_slices(group, timeline)[versions:] for name in key[1]]
    elif retained is None:
        return None
    else:
        horizon = retained.requested_time
        partitions = _partitions_to_look_at(storage, timeline, horizon)
        replaced = {group for group, when in _replaced_groups(timeline).items()
                    if instant_key(when) < instant_key(horizon)}

        def outdated(group: FileGroupFiles) -> list[str]:
            return _outdated_files(group, timeline, horizon)
    keep = _protected_files(timeline)
    files: dict[str, list[str]] = {}
    for group in list_file_groups(storage, partitions):
        key = (group.partition_path, group.file_id)
        names = _all_files(group) if key in replaced else outdated(group)
        names = [n for n in names if (group.partition_path, n) not in keep]
        if names:
            files.setdefault(group.partition_path, []).extend(names)
    if not files:
        return None
    latest = timeline.latest_write()
    return CleanPlan(
        settings.policy.value, retained, latest.requested_time if latest else "",
        {p: tuple(sorted(names)) for p, names in files.items()},
    )


def _partitions_to_look_at(storage: Storage, timeline: Timeline, horizon: str) -> list[str]:
    found = timeline.latest_clean()
    previous = found[1] if found else ""
    if not previous:
        return list_partitions(storage, timeline.config)
    partitions: set[str] = set()
    for instant in timeline.completed_writes():
        if instant_key(previous) <= instant_key(instant.requested_time) < instant_key(horizon):
            metadata = timeline.commit_metadata(instant)
            partitions.update(p for p, _ in metadata.touched_file_groups())
            partitions.update(metadata.replaced_file_ids)
    return sorted(partitions)


def _replaced_groups(timeline: Timeline) -> dict[tuple[str, str], str]:
    """(partition, file id) -> the replacecommit that replaced it."""
    replaced: dict[tuple[str, str], str] = {}
    for instant in timeline.completed_writes():
        if instant.action is Action.REPLACE_COMMIT:
            for partition, file_ids in timeline.commit_metadata(instant).replaced_file_ids.items():
                for file_id in file_ids:
                    replaced[(partition, file_id)] = instant.requested_time
    return replaced


def _protected_files(timeline: Timeline) -> set[tuple[str, str]]:
    """(partition, file name) of savepointed files and of file slices pending compactions read."""
    keep: set[tuple[str, str]] = set()
    for instant in timeline.instants:
        if instant.action is Action.SAVEPOINT and instant.is_completed:
            by_partition: Any = timeline.read_raw(instant).get("partitionMetadata") or {}
            for partition, entry in by_partition.items():
                keep.update((str(partition), os.path.basename(str(name)))
                            for name in (entry or {}).get("savepointDataFile") or ())
    for _, op in timeline.pending_compaction_operations():
        partition = str(op.get("partitionPath") or "")
        deltas: Any = op.get("deltaFilePaths") or ()
        names = [*deltas, op.get("dataFilePath")]
        keep.update((partition, os.path.basename(str(n))) for n in names if n)
    return keep


def _all_files(group: FileGroupFiles) -> list[str]:
    return [f.name for f in group.base_files] + [f.name for f in group.log_files]


def _committed_slices(group: FileGroupFiles, timeline: Timeline) -> list[tuple[str, list[str]]]:
    """(base instant, file names) of the group's committed slices, newest first."""
    slices: dict[str, list[str]] = {}
    for base in group.base_files:
        if timeline.is_committed(base.instant_time):
            slices.setdefault(base.instant_time, []).append(base.name)
    for log in group.log_files:
        if log.instant_time in slices or timeline.is_committed(log.instant_time):
            slices.setdefault(log.instant_time, []).append(log.name)
    return [(key, slices[key]) for key in sorted(slices, key=instant_key, reverse=True)]


def _outdated_files(group: FileGroupFiles, timeline: Timeline, horizon: str) -> list[str]:
    """Files of the group's committed slices that no read as of `horizon` or later needs."""
    ordered = _committed_slices(group, timeline)
    before = next((k for k, _ in ordered if instant_key(k) < instant_key(horizon)), None)
    doomed: list[str] = []
    for key, names in ordered[1:]:
        if key == before or instant_key(key) >= instant_key(horizon):
            continue
        doomed.extend(names)
    return doomed


def files_by_partition(plan: CleanPlan) -> Iterable[tuple[str, str]]:
    """(partition, file name) of every file the plan deletes."""
    for partition, names in sorted(plan.files.items()):
        for name in names:
            yield partition, name
