"""Instants: one action at one time on the timeline, parsed from its file name."""

from __future__ import annotations

import datetime
import enum
import functools
import re
from dataclasses import dataclass

from shim.errors import InstantNotFoundError, InvalidTableError


class Action(enum.Enum):
    """Timeline actions, spelled as in file names."""

    COMMIT = "commit"
    DELTA_COMMIT = "deltacommit"
    REPLACE_COMMIT = "replacecommit"
    COMPACTION = "compaction"
    LOG_COMPACTION = "logcompaction"
    CLUSTERING = "clustering"
    CLEAN = "clean"
    ROLLBACK = "rollback"
    SAVEPOINT = "savepoint"
    RESTORE = "restore"
    INDEXING = "indexing"

    @classmethod
    def parse(cls, value: str, source: str = "") -> Action:
        """Parse an action name; an unknown one is an error naming the value and file."""
        try:
            return cls(value)
        except ValueError:
            raise InvalidTableError(
                f"unknown timeline action {value!r} in {source or 'timeline'}", path=source or None
            ) from None

    @property
    def completed_as(self) -> Action:
        """The action a completed instant of this kind is recorded as."""
        return _COMPLETES_AS.get(self, self)

    @property
    def writes_data(self) -> bool:
        """Whether a completed instant of this action makes data files visible."""
        return self.completed_as in (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)


_COMPLETES_AS = {
    Action.COMPACTION: Action.COMMIT,
    Action.LOG_COMPACTION: Action.DELTA_COMMIT,
    Action.CLUSTERING: Action.REPLACE_COMMIT,
}


class State(enum.Enum):
    """Life cycle of an instant."""

    REQUESTED = "requested"
    INFLIGHT = "inflight"
    COMPLETED = "completed"


@dataclass(frozen=True, slots=True)
class Instant:
    """One instant file of the active timeline.

    Attributes:
        requested_time: the instant time (when the action was requested); the key of the instant.
        action: the action as named in the file (a pending compaction is `compaction`, its
            completed form is `commit`).
        state: requested, inflight or completed.
        completion_time: for completed instants of timeline layout 2 (table version 8+).
        file_name: the file under the timeline folder.
    """

    requested_time: str
    action: Action
    state: State
    completion_time: str | None
    file_name: str

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    def __str__(self) -> str:
        done = f" (completed {self.completion_time})" if self.completion_time else ""
        return f"{self.requested_time} {self.action.value} {self.state.value}{done}"


_INSTANT_FILE = re.compile(r"^(?P<ts>\d{8,})(?:_(?P<done>\d{8,}))?\.(?P<rest>[a-z.]+)$")


@functools.lru_cache(maxsize=1 << 16)
def parse_instant_file_name(name: str) -> Instant | None:
    """Parse a timeline file name; returns None for files that are not instants (properties, folders).

    Cached: a writer lists the same timeline many times per commit, and instants are immutable."""
    match = _INSTANT_FILE.match(name)
    if match is None:
        return None
    ts, done, rest = match.group("ts"), match.group("done"), match.group("rest")
    parts = rest.split(".")
    if parts[-1] in ("requested", "inflight"):
        state = State(parts[-1])
        action_name = ".".join(parts[:-1]) or Action.COMMIT.value  # `<ts>.inflight` is a commit
    else:
        state = State.COMPLETED
        action_name = rest
    if action_name in ("crc", "tmp") or rest.endswith(".crc"):
        return None
    if done is not None and state is not State.COMPLETED:
        raise InvalidTableError(f"timeline file {name!r} has a completion time but is {state.value}", path=name)
    action = Action.parse(action_name, name)
    return Instant(ts, action, state, done, name)


_QUERY_INSTANT = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,3}))?)?$"
)
_DIGITS = re.compile(r"[0-9]{17}|[0-9]{14}|[0-9]{8}")


def normalize_instant(value: str) -> str:
    """Turn a user-given instant into Hudi's 17-digit form.

    Accepts `yyyyMMddHHmmssSSS`, `yyyyMMddHHmmss` (second granularity: the end of that second, as
    Hudi treats it), `yyyy-MM-dd`, and `yyyy-MM-dd HH:mm:ss[.SSS]`, in ASCII digits naming a real
    date and time (anything else would compare wrongly against the timeline's instants).
    """
    text = str(value).strip()
    instant = None
    if _DIGITS.fullmatch(text):
        instant = text + {17: "", 14: "999", 8: "000000000"}[len(text)]
    elif match := _QUERY_INSTANT.match(text):
        y, mo, d, h, mi, s, ms = match.groups()
        instant = f"{y}{mo}{d}{h or '00'}{mi or '00'}{s or '00'}{(ms or '0').ljust(3, '0')}"
    if instant is None or not _is_calendar_time(instant):
        raise InstantNotFoundError(
            f"cannot read instant {value!r}: use yyyyMMddHHmmssSSS, yyyy-MM-dd or 'yyyy-MM-dd HH:mm:ss[.SSS]' "
            "(ASCII digits, a real date and time)",
            instant=text,
        )
    return instant


def _is_calendar_time(instant: str) -> bool:
    try:
        datetime.datetime(int(instant[:4]), int(instant[4:6]), int(instant[6:8]), int(instant[8:10]),
                          int(instant[10:12]), int(instant[12:14]))
    except ValueError:
        return False
    return True


def instant_key(ts: str) -> str:
    """Comparable form of an instant time from a file (second-granularity instants end at .999)."""
    return ts + "999" if len(ts) == 14 else ts
