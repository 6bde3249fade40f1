"""Which metadata table commits a reader may use, judged against the data table's timeline.

Hudi writes the metadata table (MDT) before it completes the data table's commit, with the same
instant time, so an MDT deltacommit is only valid while its data instant is not pending: a data
write that failed after its MDT commit leaves an MDT commit that readers must ignore. Hudi's
`HoodieTableMetadataUtil.getValidInstantTimestamps` takes as valid: every completed data instant;
every completed MDT deltacommit whose instant is not pending on the data table (this covers data
instants archived since); the commits completed data rollbacks and restores rolled back; the
MDT's own completed rollbacks and restores; and the MDT's initialization deltacommits
(`00000000000000...`). This module applies that rule, and also finds what makes the MDT unusable:
- behind: a completed data write or clean (after the MDT's first own commit) that the MDT has no
  completed deltacommit for;
- inconsistent: an MDT deltacommit for a data instant that is neither on the data timeline nor
  older than it, nor rolled back by it; or one that is invalid but was compacted into an MDT base
  file (Hudi compacts the MDT only when no data instant is pending).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from shim.timeline.instant import Action, Instant, State, instant_key
from shim.timeline.timeline import Timeline

SOLO_COMMIT_TIMESTAMP = "00000000000000"
"""Prefix of the MDT's initialization instants (one per partition initialized)."""
_SYNCED = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.CLEAN)
"""Completed data actions Hudi applies to the MDT as a deltacommit of the same instant time."""


def is_initialization(instant: str) -> bool:
    """An MDT instant that initialized a partition (`00000000000000` and a suffix)."""
    return instant.startswith(SOLO_COMMIT_TIMESTAMP)


@dataclass(frozen=True, slots=True)
class Validity:
    """The valid instants of an MDT for one data timeline, and the problems found."""

    valid: frozenset[str]
    pending_data: frozenset[str]
    problems: tuple[str, ...]
    mdt_deltacommits: frozenset[str]
    sync_start: str | None

    def is_valid(self, instant: str) -> bool:
        """Whether a log block of `instant` may be read."""
        return instant in self.valid

    def behind(self, data: Timeline, up_to: str | None) -> str | None:
        """Why the MDT lacks a data write or clean completed at or before `up_to` (None: it has
        them all)."""
        if self.sync_start is None:
            return "the metadata table has no commit of its own after its initialization"
        for instant in _completed(data.instants):
            if instant.action not in _SYNCED and instant.action.completed_as not in _SYNCED:
                continue
            time = instant.requested_time
            if up_to is not None and instant_key(time) > instant_key(up_to):
                continue
            if instant_key(time) < instant_key(self.sync_start) or time in self.mdt_deltacommits:
                continue
            return (f"the metadata table is behind the data table: {instant.action.value} {time} completed "
                    "but the metadata table has no deltacommit for it")
        return None


def validity(data: Timeline, mdt: Timeline, rolled_back: Iterable[str] = ()) -> Validity:
    """Hudi's valid instants for the MDT timeline `mdt` of a table whose timeline is `data`
    (`rolled_back`: the commits the data table's completed rollbacks and restores rolled back)."""
    completed_data = {i.requested_time for i in _completed(data.instants)}
    pending = frozenset(i.requested_time for i in data.instants if not i.is_completed) - completed_data
    mdt_completed = list(_completed(mdt.instants))
    deltacommits = {i.requested_time for i in mdt_completed if i.action is Action.DELTA_COMMIT}
    valid = set(completed_data)
    valid.update(t for t in deltacommits if t not in pending)
    valid.update(rolled_back)
    valid.update(i.requested_time for i in mdt_completed if i.action in (Action.ROLLBACK, Action.RESTORE))
    problems = []
    earliest = min((instant_key(i.requested_time) for i in data.instants), default=None)
    known = completed_data | pending | set(rolled_back)
    for time in sorted(deltacommits):
        if is_initialization(time) or len(time) > 17 or time in known:
            continue  # (longer instants are the MDT's own: a data instant with a suffix)
        if earliest is not None and instant_key(time) >= earliest:
            problems.append(f"metadata table deltacommit {time} names a data instant the data table does not have "
                            "(not completed, pending, archived or rolled back)")
    compactions = [i.requested_time for i in mdt_completed if i.action is Action.COMMIT]
    newest_base = max(compactions, key=instant_key, default=None)
    finished = {i.requested_time: i.completion_time for i in mdt_completed}
    for time in sorted(deltacommits & pending):
        # A compaction holds the deltacommits completed before it was requested (those requested
        # before it, on timeline layout 1, which records no completion times).
        done = finished.get(time) or time
        if newest_base is not None and instant_key(done) < instant_key(newest_base):
            problems.append(f"metadata table compaction {newest_base} includes deltacommit {time}, whose data instant "
                            "is not completed")
    own = [i.requested_time for i in mdt.instants if not is_initialization(i.requested_time)]
    sync_start = min(own, key=instant_key, default=None)
    return Validity(frozenset(valid), pending, tuple(problems), frozenset(deltacommits), sync_start)


def rolled_back_commits(data: Timeline) -> set[str]:
    """The commits the data table's completed rollbacks and restores rolled back (Hudi counts
    their MDT log blocks valid: older MDT writers undo them with the rollback's own deltacommit)."""
    found: set[str] = set()
    for instant in _completed(data.instants):
        if instant.action not in (Action.ROLLBACK, Action.RESTORE):
            continue
        try:
            raw = data.read_raw(instant)
        except (OSError, ValueError):
            continue
        if instant.action is Action.ROLLBACK:
            found.update(_commits_rolled_back(raw))
            continue
        restored = raw.get("hoodieRestoreMetadata")
        for rollbacks in restored.values() if isinstance(restored, dict) else ():
            for rollback in rollbacks if isinstance(rollbacks, list) else ():
                found.update(_commits_rolled_back(rollback))
    return found


def _commits_rolled_back(raw: object) -> list[str]:
    commits = raw.get("commitsRollback") if isinstance(raw, dict) else None
    return [str(c) for c in commits] if isinstance(commits, list) else []


def _completed(instants: Iterable[Instant]) -> Iterable[Instant]:
    return (i for i in instants if i.state is State.COMPLETED)
