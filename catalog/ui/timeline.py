"""A table's timeline as the UI shows it: every instant, archived ones too, with what it did.

One entry per instant time, in its most advanced state, listing the states found (requested,
inflight, completed). Completed writes list the files they wrote (their write stats), replace
commits the file groups they replaced, cleans and rollbacks the files they removed (and the
instants rolled back), compaction and clustering plans the file groups they take.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import shim
from shim.errors import HudiShimError
from shim.schema import search_schema
from shim.timeline.archived import read_archived_timeline
from shim.timeline.instant import Action, Instant, State, instant_key
from shim.timeline.metadata import CommitMetadata
from shim.timeline.timeline import Timeline


@dataclass(frozen=True, slots=True)
class Written:
    """One file a commit wrote (a write stat)."""

    partition: str
    file_id: str
    file: str
    kind: str  # "base" or "log"
    inserts: int
    updates: int
    deletes: int
    writes: int
    bytes: int


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One instant.

    Attributes:
        time: the requested time (the instant's key).
        action: as the newest file names it (a completed compaction is a `commit`).
        state: the most advanced state; `states`: every state a file was found for.
        archived: read from the archived timeline.
        operation: the write's operation type (UPSERT, ALTER_SCHEMA, ...).
        schema_version: the InternalSchema version the write recorded (schema-on-read tables).
        wrote: files written; replaced: file groups replaced ("partition/file id");
        removed: files a clean or rollback deleted; rolled_back: instants a rollback undid;
        planned: file groups a compaction or clustering plan takes.
        error: why the instant's content could not be read.
    """

    time: str
    action: str
    state: str
    states: tuple[str, ...]
    completion_time: str | None
    archived: bool
    operation: str | None = None
    schema_version: str | None = None
    summary: str = ""
    wrote: tuple[Written, ...] = ()
    replaced: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    rolled_back: tuple[str, ...] = ()
    planned: tuple[str, ...] = ()
    error: str | None = None


def table_timeline(table: shim.TableSnapshot) -> list[TimelineEntry]:
    """Every instant of the archived and the active timeline, oldest first."""
    timeline = table.active_timeline
    entries = {e.time: e for e in _archived_entries(table)}
    for time, files in _by_time(timeline.instants).items():
        entries[time] = _active_entry(table, timeline, files)
    return [entries[t] for t in sorted(entries, key=instant_key)]


def _by_time(instants: Iterable[Instant]) -> dict[str, list[Instant]]:
    found: dict[str, list[Instant]] = {}
    for instant in instants:
        found.setdefault(instant.requested_time, []).append(instant)
    return found


def _active_entry(table: shim.TableSnapshot, timeline: Timeline, files: list[Instant]) -> TimelineEntry:
    latest = files[-1]  # the timeline orders the states of one time
    entry = TimelineEntry(latest.requested_time, latest.action.value, latest.state.value,
                          tuple(i.state.value for i in files), latest.completion_time, archived=False)
    try:
        details = _active_details(table, timeline, latest, files)
    except (HudiShimError, OSError, ValueError, KeyError, TypeError) as exc:
        return replace(entry, error=f"cannot read {latest.file_name}: {exc}")
    return replace(entry, **details)


def _active_details(table: shim.TableSnapshot, timeline: Timeline, latest: Instant, files: list[Instant]) -> dict[str, Any]:
    if latest.is_completed and latest.action.writes_data:
        metadata = timeline.commit_metadata(latest)
        details = _write_details(metadata)
        if metadata.latest_schema:
            details["schema_version"] = _schema_version(table, latest.requested_time)
        return details
    if latest.is_completed and latest.action in (Action.CLEAN, Action.ROLLBACK, Action.RESTORE):
        return _removal_details(latest.action.value, timeline.read_raw(latest))
    if latest.action in (Action.COMPACTION, Action.LOG_COMPACTION, Action.CLUSTERING) or \
            (latest.action is Action.REPLACE_COMMIT and not latest.is_completed):
        requested = next((i for i in files if i.state is State.REQUESTED), None)
        if requested is not None:
            return _plan_details(timeline.read_raw(requested))
    return {"summary": "" if latest.is_completed else f"{latest.state.value}: not completed, nothing of it is read"}


def _schema_version(table: shim.TableSnapshot, instant: str) -> str | None:
    """The schema version a write recorded: from the history file when there is one (parsing every
    commit's schema JSON costs a millisecond each), else from the commit."""
    history = table.schema_history.history()
    schema = search_schema(history, int(instant)) if history and instant.isdigit() else None
    if schema is None:
        schema = table.schema_history.schema_of_instant(instant)
    return str(schema.version_id) if schema is not None else None


def _write_details(metadata: CommitMetadata) -> dict[str, Any]:
    wrote = tuple(
        Written(s.partition_path, s.file_id, s.file_name, "log" if s.file_name.startswith(".") else "base",
                s.num_inserts, s.num_updates, s.num_deletes, s.num_writes, s.file_size)
        for s in metadata.write_stats)
    replaced = tuple(f"{p}/{f}" if p else f for p, ids in sorted(metadata.replaced_file_ids.items()) for f in ids)
    partitions = {w.partition for w in wrote}
    summary = (f"{len(wrote)} file{'s' if len(wrote) != 1 else ''} in {len(partitions)} "
               f"partition{'s' if len(partitions) != 1 else ''}: {sum(w.inserts for w in wrote)} inserted, "
               f"{sum(w.updates for w in wrote)} updated, {sum(w.deletes for w in wrote)} deleted")
    if not wrote:
        summary = "no files written"
    if replaced:
        summary += f"; replaced {len(replaced)} file group{'s' if len(replaced) != 1 else ''}"
    return {"operation": metadata.operation_type, "wrote": wrote, "replaced": replaced, "summary": summary}


def _removal_details(action: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    removed: list[str] = []
    for partition, meta in sorted((raw.get("partitionMetadata") or {}).items()):
        meta = meta or {}
        names = list(meta.get("successDeleteFiles") or ())
        names += list((meta.get("rollbackLogFiles") or {}).keys())
        removed += [f"{partition}/{_base_name(n)}" if partition else _base_name(n) for n in names]
    rolled_back = tuple(str(c) for c in raw.get("commitsRollback") or ())
    if action == "restore":
        rolled_back = tuple(str(c) for c in raw.get("instantsToRollback") or ())
    summary = f"removed {len(removed)} file{'s' if len(removed) != 1 else ''}"
    if rolled_back:
        summary += f"; rolled back {', '.join(rolled_back)}"
    retained = raw.get("earliestCommitToRetain")
    if retained:
        summary += f"; kept what reads as of {retained} or later need"
    return {"removed": tuple(removed), "rolled_back": rolled_back, "summary": summary}


def _plan_details(raw: Mapping[str, Any]) -> dict[str, Any]:
    planned: list[str] = []
    for operation in raw.get("operations") or ():  # HoodieCompactionPlan
        partition, file_id = operation.get("partitionPath") or "", operation.get("fileId") or ""
        planned.append(f"{partition}/{file_id}" if partition else str(file_id))
    for group in raw.get("inputGroups") or ():  # HoodieClusteringPlan (in a HoodieRequestedReplaceMetadata)
        for data_slice in group.get("slices") or ():
            partition, file_id = data_slice.get("partitionPath") or "", data_slice.get("fileId") or ""
            planned.append(f"{partition}/{file_id}" if partition else str(file_id))
    clustering = raw.get("clusteringPlan") or {}
    for group in clustering.get("inputGroups") or ():
        for data_slice in group.get("slices") or ():
            partition, file_id = data_slice.get("partitionPath") or "", data_slice.get("fileId") or ""
            planned.append(f"{partition}/{file_id}" if partition else str(file_id))
    summary = f"plan of {len(planned)} file group{'s' if len(planned) != 1 else ''}" if planned else ""
    return {"planned": tuple(planned), "summary": summary}


def _base_name(path: str) -> str:
    return str(path).rsplit("/", 1)[-1]


_ARCHIVED_CONTENT = {"commit": "hoodieCommitMetadata", "deltacommit": "hoodieCommitMetadata",
                     "replacecommit": "hoodieReplaceCommitMetadata", "clean": "hoodieCleanMetadata",
                     "rollback": "hoodieRollbackMetadata", "compaction": "hoodieCompactionPlan"}


def _archived_entries(table: shim.TableSnapshot) -> list[TimelineEntry]:
    try:
        archived = read_archived_timeline(table.storage, table.config)
    except (HudiShimError, OSError) as exc:
        return [TimelineEntry("", "archive", "", (), None, archived=True, error=f"cannot read the archive: {exc}")]
    grouped: dict[str, list[Any]] = {}
    for item in archived:
        grouped.setdefault(item.requested_time, []).append(item)
    entries = []
    for time, items in grouped.items():
        states = tuple(str(i.state).lower() for i in items)
        latest = next((i for i in items if str(i.state).upper() == "COMPLETED"), items[-1])
        action = str(latest.action)
        entry = TimelineEntry(time, action, str(latest.state).lower(), states,
                              latest.entry.get("completionTime"), archived=True)
        raw = latest.entry.get("metadata") if "metadata" in latest.entry else latest.entry.get(
            _ARCHIVED_CONTENT.get(action, ""))
        try:
            if isinstance(raw, Mapping) and action in ("commit", "deltacommit", "replacecommit"):
                entry = replace(entry, **_write_details(CommitMetadata.from_dict(raw)))
            elif isinstance(raw, Mapping) and action in ("clean", "rollback"):
                entry = replace(entry, **_removal_details(action, raw))
        except (HudiShimError, ValueError, KeyError, TypeError) as exc:
            entry = replace(entry, error=f"cannot read archived {action} {time}: {exc}")
        entries.append(entry)
    return entries


def made_by(table: shim.TableSnapshot, instants: Iterable[str]) -> dict[str, dict[str, object]]:
    """For each instant (a schema version), its action and operation, and whether it was archived
    (absent: on neither timeline)."""
    timeline = table.active_timeline
    found: dict[str, dict[str, object]] = {}
    missing = []
    for time in instants:
        instant = timeline.latest_state(time)
        if instant is None:
            missing.append(time)
            continue
        operation = timeline.commit_metadata(instant).operation_type \
            if instant.is_completed and instant.action.writes_data else None
        found[time] = {"action": instant.action.value, "operation": operation, "archived": False}
    if missing:
        archived = {e.time: e for e in _archived_entries(table)}
        for time in missing:
            if time in archived:
                entry = archived[time]
                found[time] = {"action": entry.action, "operation": entry.operation, "archived": True}
    return found
