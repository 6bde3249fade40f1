"""Which instants leave the active timeline when it is archived (Hudi 0.14/0.15's rules, table
version 6).

Once more than `max_commits` writes (commit, deltacommit, replacecommit) have completed, the oldest
are archived until `min_commits` remain, but never:
- one at or after the completed write just before the oldest pending write or compaction (no hole
  may open in front of a write still under way);
- one at or after the first savepoint;
- on merge-on-read tables whose compaction trigger counts delta commits, one the next trigger
  decision still counts (the last compaction, or the last `max_delta_commits` delta commits);
- one at or after the first replacecommit whose replaced files the last clean has not yet deleted
  (readers would see replaced and replacing file groups at once);
- one at or after the earliest commit the last clean retained.
Completed cleans and rollbacks are archived per action once there are more than `max_commits` of
them, down to `min_commits`. Every state file of a chosen instant goes (a compaction's plan with
its commit).
"""

from __future__ import annotations

from collections.abc import Iterable

from shim.timeline.delta_commits import delta_commits_since_compaction
from shim.timeline.instant import Action, Instant, instant_key
from shim.timeline.timeline import Timeline
from shim.write.service_options import ArchiveSettings

_WRITES = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)
_PENDING_WRITES = (*_WRITES, Action.COMPACTION, Action.LOG_COMPACTION, Action.CLUSTERING)


def instants_to_archive(timeline: Timeline, settings: ArchiveSettings) -> list[Instant]:
    """Every instant file to move to the archived timeline, oldest first."""
    chosen = [*_cleans_and_rollbacks(timeline, settings), *_writes(timeline, settings)]
    keys = {(inst.requested_time, inst.action.completed_as) for inst in chosen}
    return [inst for inst in timeline.instants if (inst.requested_time, inst.action.completed_as) in keys]


def _cleans_and_rollbacks(timeline: Timeline, settings: ArchiveSettings) -> list[Instant]:
    chosen: list[Instant] = []
    for action in (Action.CLEAN, Action.ROLLBACK):
        done = [i for i in _latest_states(timeline) if i.action is action and i.is_completed]
        if len(done) > settings.max_commits:
            chosen += done[: len(done) - settings.min_commits]
    return chosen


def _writes(timeline: Timeline, settings: ArchiveSettings) -> list[Instant]:
    latest = _latest_states(timeline)
    done = [i for i in latest if i.is_completed and i.action in _WRITES]
    if len(done) <= settings.max_commits:
        return []
    bound = _first_kept(timeline, latest, done, settings)
    archivable = [i for i in done if bound is None or instant_key(i.requested_time) < bound]
    return archivable[: len(done) - settings.min_commits]


def _first_kept(timeline: Timeline, latest: list[Instant], done: list[Instant],
                settings: ArchiveSettings) -> str | None:
    """The instant key from which on every write stays active (None: no bound)."""
    bounds: list[str] = []
    pending = [i for i in latest if not i.is_completed and i.action in _PENDING_WRITES]
    if pending:
        oldest = instant_key(pending[0].requested_time)
        before = [i for i in done if instant_key(i.requested_time) < oldest]
        bounds.append(instant_key(before[-1].requested_time) if before else oldest)
    savepoints = [i for i in timeline.instants if i.action is Action.SAVEPOINT and i.is_completed]
    if savepoints:
        bounds.append(instant_key(savepoints[0].requested_time))
    if settings.compaction_delta_commits is not None:
        kept = _kept_for_compaction(timeline, settings.compaction_delta_commits)
        if kept is not None:
            bounds.append(instant_key(kept))
    clean = timeline.latest_clean()
    replaces = [i for i in done if i.action is Action.REPLACE_COMMIT]
    if replaces:
        # Replaced files are deleted by cleans retaining commits after their replacecommit (or,
        # keeping file versions, by the clean after it).
        cleaned_before = instant_key((clean[1] or clean[0].requested_time) if clean else "")
        uncleaned = [i for i in replaces if instant_key(i.requested_time) >= cleaned_before]
        if uncleaned:
            bounds.append(instant_key(uncleaned[0].requested_time))
    if clean is not None and clean[1]:
        bounds.append(instant_key(clean[1]))
    return min(bounds) if bounds else None


def _kept_for_compaction(timeline: Timeline, max_delta_commits: int) -> str | None:
    """Hudi's oldest instant to retain for compaction: the last completed compaction (or first
    delta commit) while fewer than `max_delta_commits` delta commits follow it, else the oldest
    of the last `max_delta_commits` delta commits."""
    since = delta_commits_since_compaction(timeline, completed_only=False)
    if since is None:
        return None
    if since.count < max_delta_commits:
        return since.reference
    return since.deltas[since.count - max_delta_commits]


def _latest_states(timeline: Timeline) -> list[Instant]:
    """Each instant in its most advanced state, oldest first."""
    return _unique(timeline.latest_state(i.requested_time) for i in timeline.instants)


def _unique(instants: Iterable[Instant | None]) -> list[Instant]:
    seen: dict[str, Instant] = {}
    for inst in instants:
        if inst is not None:
            seen.setdefault(inst.requested_time, inst)
    return list(seen.values())
