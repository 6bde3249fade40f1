"""When a write to a merge-on-read table is followed by a compaction (`hoodie.compact.inline`).

As Hudi's `ScheduleCompactionActionExecutor.needCompact`: the delta commits that completed after the
last completed commit (a compaction or an overwrite; from the first delta commit on, if none) are counted, and the time
since that compaction (or first delta commit) is measured; the trigger strategy says which of the
two must reach its limit.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from shim.timeline.instant import Action, instant_key
from shim.timeline.timeline import Timeline
from shim.write.clock import instant_datetime


class TriggerStrategy(enum.Enum):
    """`hoodie.compact.inline.trigger.strategy`."""

    NUM_COMMITS = "NUM_COMMITS"
    NUM_COMMITS_AFTER_LAST_REQUEST = "NUM_COMMITS_AFTER_LAST_REQUEST"
    TIME_ELAPSED = "TIME_ELAPSED"
    NUM_AND_TIME = "NUM_AND_TIME"
    NUM_OR_TIME = "NUM_OR_TIME"


class InlineMode(enum.Enum):
    """What follows a commit: nothing, a scheduled compaction plan, or a compaction run."""

    OFF = "off"
    SCHEDULE = "schedule"
    RUN = "run"


@dataclass(frozen=True, slots=True)
class InlineCompaction:
    """The `hoodie.compact.inline*` settings of a write (Hudi's defaults: off, 5 delta commits, 1 h)."""

    mode: InlineMode = InlineMode.OFF
    strategy: TriggerStrategy = TriggerStrategy.NUM_COMMITS
    max_delta_commits: int = 5
    max_delta_seconds: int = 3600


@dataclass(frozen=True, slots=True)
class DeltaCommitsSince:
    """Delta commits counted since the reference instant the elapsed time is measured from."""

    count: int
    reference: str


_COMMITS = (Action.COMMIT, Action.REPLACE_COMMIT)
"""Hudi's commit timeline: on a merge-on-read table, completed compactions and overwrites."""


def delta_commits_since_compaction(timeline: Timeline, *, since_request: bool = False) -> DeltaCommitsSince | None:
    """Completed delta commits after the last completed compaction (with `since_request`: all delta
    commits after the last compaction requested, completed or not); None when there are none at all."""
    if since_request:
        compactions = [i for i in timeline.instants if i.action is Action.COMPACTION or
                       (i.action in _COMMITS and i.is_completed)]
        deltas = [i for i in timeline.instants if i.action is Action.DELTA_COMMIT]
    else:
        compactions = [i for i in timeline.instants if i.is_completed and i.action in _COMMITS]
        deltas = [i for i in timeline.instants if i.is_completed and i.action is Action.DELTA_COMMIT]
    delta_times = sorted({i.requested_time for i in deltas}, key=instant_key)
    if compactions:
        last = max((i.requested_time for i in compactions), key=instant_key)
        return DeltaCommitsSince(sum(1 for t in delta_times if instant_key(t) > instant_key(last)), last)
    if not delta_times:
        return None
    return DeltaCommitsSince(len(delta_times), delta_times[0])


def compaction_due(timeline: Timeline, settings: InlineCompaction, now_instant: str) -> bool:
    """Whether the trigger fires on this timeline for a compaction requested at `now_instant`."""
    since = delta_commits_since_compaction(
        timeline, since_request=settings.strategy is TriggerStrategy.NUM_COMMITS_AFTER_LAST_REQUEST)
    if since is None:
        return False
    enough_commits = since.count >= settings.max_delta_commits
    start, now = instant_datetime(since.reference), instant_datetime(now_instant)
    enough_time = start is not None and now is not None and \
        int(now.timestamp()) - int(start.timestamp()) >= settings.max_delta_seconds
    if settings.strategy in (TriggerStrategy.NUM_COMMITS, TriggerStrategy.NUM_COMMITS_AFTER_LAST_REQUEST):
        return enough_commits
    if settings.strategy is TriggerStrategy.TIME_ELAPSED:
        return enough_time
    if settings.strategy is TriggerStrategy.NUM_AND_TIME:
        return enough_commits and enough_time
    return enough_commits or enough_time
