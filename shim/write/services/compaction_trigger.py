"""When a write to a merge-on-read table is followed by a compaction (`hoodie.compact.inline`).

As Hudi's `ScheduleCompactionActionExecutor.needCompact`: the delta commits that completed after the
last completed commit (a compaction or an overwrite; from the first delta commit on, if none;
`shim.timeline.delta_commits`) are counted, and the time
since that compaction (or first delta commit) is measured; the trigger strategy says which of the
two must reach its limit.
"""

from __future__ import annotations

from shim.timeline.delta_commits import delta_commits_since_compaction
from shim.timeline.timeline import Timeline
from shim.write.clock import instant_datetime
from shim.write.service_options import InlineCompaction, TriggerStrategy


def compaction_due(timeline: Timeline, settings: InlineCompaction, now_instant: str) -> bool:
    """Whether the trigger fires on this timeline for a compaction requested at `now_instant`."""
    by_request = settings.strategy is TriggerStrategy.NUM_COMMITS_AFTER_LAST_REQUEST
    since = delta_commits_since_compaction(timeline, completed_only=not by_request, since_request=by_request)
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
