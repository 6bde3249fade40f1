"""Delta commits since the last compaction, as Hudi's `CompactionUtils` counts them: after the last
completed commit of the commit timeline (on a merge-on-read table a compaction or an overwrite), or
from the first delta commit when there is none. Inline compaction triggers on them; archival keeps
the ones a trigger still counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from shim.timeline.instant import Action, instant_key
from shim.timeline.timeline import Timeline

_COMMITS = (Action.COMMIT, Action.REPLACE_COMMIT)


@dataclass(frozen=True, slots=True)
class DeltaCommitsSince:
    """The delta commits counted (times, oldest first) and the instant they are counted from."""

    reference: str
    deltas: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.deltas)


def delta_commits_since_compaction(timeline: Timeline, *, completed_only: bool = True,
                                   since_request: bool = False) -> DeltaCommitsSince | None:
    """Delta commits after the last completed compaction (`completed_only`: completed ones only;
    `since_request`: after the last compaction requested too, completed or not); None when the
    timeline holds no delta commit and no compaction."""
    compactions = [i for i in timeline.instants if (i.action in _COMMITS and i.is_completed)
                   or (since_request and i.action is Action.COMPACTION)]
    deltas = sorted({i.requested_time for i in timeline.instants if i.action is Action.DELTA_COMMIT
                     and (i.is_completed or not completed_only)}, key=instant_key)
    if compactions:
        last = max((i.requested_time for i in compactions), key=instant_key)
        return DeltaCommitsSince(last, tuple(t for t in deltas if instant_key(t) > instant_key(last)))
    if not deltas:
        return None
    return DeltaCommitsSince(deltas[0], tuple(deltas))
