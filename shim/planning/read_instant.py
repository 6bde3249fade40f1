"""Which commits a time-travel or incremental read covers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow.compute as pc

from shim.errors import InvalidArgumentError, UnsupportedFeatureError
from shim.storage import paths
from shim.timeline.instant import Action, instant_key, normalize_instant
from shim.timeline.timeline import Timeline

if TYPE_CHECKING:
    from shim.read.snapshot_state import SnapshotState

COMMIT_TIME = "_hoodie_commit_time"
_WRITE_ACTIONS = (Action.COMMIT, Action.DELTA_COMMIT, Action.COMPACTION, Action.LOG_COMPACTION)


def check_time_travel(table: SnapshotState, as_of: str) -> None:
    """Refuse an `as_of` at or after a write that has not completed (its result could still change),
    before what the cleaner retained (its files are gone), or before the active timeline when
    older instants were archived (which commits completed then is no longer on it).

    Same rules as Hudi's `TimelineUtils.validateTimestampAsOf`, plus the archive's.
    """
    timeline = table.active_timeline
    for instant in timeline.pending(*_WRITE_ACTIONS):
        if instant_key(instant.requested_time) <= instant_key(as_of):
            raise InvalidArgumentError(
                f"cannot read as of {as_of}: the {instant.action.value} {instant.requested_time} "
                f"is still {instant.state.value}; time travel must be earlier than the first incomplete write",
                instant=as_of,
            )
    check_not_cleaned(timeline, as_of, "time travel")
    first = timeline.completed_writes()
    if (first and instant_key(as_of) < instant_key(first[0].requested_time) and not timeline.includes_archive
            and _has_archive(table)):
        raise InvalidArgumentError(
            f"cannot read as of {as_of}: the commits before {first[0].requested_time} were archived "
            f"(.hoodie/{table.config.archive_path}); time travel reaches back to {first[0].requested_time}",
            instant=as_of,
        )


def check_not_cleaned(timeline: Timeline, read_instant: str, what: str) -> None:
    """Refuse to read as of an instant whose file slices the cleaner may have deleted.

    A clean keeps every file slice a read as of its earliest retained commit or later needs;
    earlier reads could silently miss file groups. A clean that records no earliest retained
    commit (Hudi's KEEP_LATEST_FILE_VERSIONS) bounds nothing, so only reads of the latest
    commit are safe after it."""
    found = timeline.latest_clean()
    if found is None:
        return
    clean, retained = found
    if retained and instant_key(read_instant) >= instant_key(retained):
        return
    if not retained:
        latest = timeline.latest_write()
        if latest is not None and instant_key(read_instant) >= instant_key(latest.requested_time):
            return
        horizon = ("it records no earliest commit to retain (file-version cleaning), so only the latest commit "
                   "is safe. Clean with hoodie.cleaner.policy=KEEP_LATEST_COMMITS to keep older commits readable")
    else:
        horizon = f"it retains commits from {retained} on. Keep more commits with hoodie.cleaner.commits.retained"
    raise InvalidArgumentError(
        f"cannot read as of {read_instant} ({what}): the cleaner (clean {clean.requested_time}) deleted the "
        f"files of older commits; {horizon}",
        instant=read_instant,
    )


@dataclass(frozen=True, slots=True)
class IncrementalWindow:
    """Commits in (start, end]: the instant to read as of, the row filter, the file groups touched
    (None: every file group, when the window reaches commits that were archived)."""

    read_instant: str | None
    row_filter: pc.Expression
    file_groups: frozenset[tuple[str, str]] | None


def incremental_window(table: SnapshotState, commit_range: tuple[str, str | None]) -> IncrementalWindow:
    """Resolve (start, end] like Hudi: requested times on table version 6, completion times on 8+.

    A window starting before the active timeline may cover archived commits, whose file groups
    are not known: on table version 6 every file group is read and the commit-time filter picks
    the rows (Hudi's fallback to a full table scan); on 8+, whose windows need completion times,
    it is an error."""
    if not table.config.populate_meta_fields:
        raise UnsupportedFeatureError(
            f"{table.path}: incremental reads need meta columns; this table does not populate them",
            feature="incremental-without-meta-fields",
            path=table.path,
        )
    start, end = commit_range
    begin = window_start(start)
    finish = normalize_instant(end) if end is not None else None
    timeline = table.active_timeline
    by_completion = table.config.version >= 8
    chosen = []
    for instant in timeline.completed_writes():
        moment = (instant.completion_time or instant.requested_time) if by_completion else instant.requested_time
        if instant_key(moment) <= instant_key(begin):
            continue
        if finish is not None and instant_key(moment) > instant_key(finish):
            continue
        chosen.append(instant)
    times = [i.requested_time for i in chosen]
    read_instant = max(times, key=instant_key) if times else None
    if read_instant is not None and finish is not None:
        check_not_cleaned(timeline, read_instant, "end of the incremental window")
    archived = _reaches_archive(table, timeline, begin)
    if archived:
        _check_full_scan_possible(table, timeline, begin, finish, by_completion, read_instant)
    groups: set[tuple[str, str]] = set()
    if not archived:
        for instant in chosen:
            groups |= timeline.commit_metadata(instant).touched_file_groups()
    if by_completion:
        row_filter = pc.field(COMMIT_TIME).isin(times)
    else:
        row_filter = pc.field(COMMIT_TIME) > pc.scalar(begin)
        if finish is not None:
            row_filter = row_filter & (pc.field(COMMIT_TIME) <= pc.scalar(finish))
    return IncrementalWindow(read_instant, row_filter, None if archived else frozenset(groups))


def window_start(start: str) -> str:
    """The instant an incremental window starts after; "0", "000"... mean the beginning of the
    timeline, as Hudi takes them."""
    text = str(start).strip()
    return "0" * 17 if text.isdigit() and not text.strip("0") else normalize_instant(text)


def _reaches_archive(table: SnapshotState, timeline: Timeline, begin: str) -> bool:
    """Whether commits after `begin` may have been archived: it precedes the active timeline and
    the table keeps archived instants."""
    if timeline.start is None or instant_key(begin) >= instant_key(timeline.start) or timeline.includes_archive:
        return False
    return _has_archive(table)


def _has_archive(table: SnapshotState) -> bool:
    """Whether the table's archive folder holds any file (archived instants)."""
    folder = paths.archive_folder(table.path, table.config.archive_path)
    return any(entry.is_file for entry in table.storage.list_files(folder))


def _check_full_scan_possible(table: SnapshotState, timeline: Timeline, begin: str, finish: str | None,
                              by_completion: bool, read_instant: str | None) -> None:
    reason = None
    if by_completion:
        reason = f"the archived timeline of table version {table.config.version} is not read"
    elif read_instant is None:
        reason = "no commit of the window is on the active timeline to read as of"
    if reason is not None:
        raise UnsupportedFeatureError(
            f"{table.path}: the incremental window ({begin}, {finish or 'latest'}] starts before the active "
            f"timeline (its first instant is {timeline.start}) and may hold archived commits; {reason}",
            feature="archived-timeline",
            path=table.path,
            instant=begin,
        )
