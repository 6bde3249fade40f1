"""Instant times for new commits (`yyyyMMddHHmmssSSS`, local time like Hudi's default)."""

from __future__ import annotations

import datetime
import threading
import time

from shim.errors import WriteError
from shim.timeline.instant import instant_key

_lock = threading.Lock()
_last = ""


MAX_WAIT_S = 60.0
"""How far ahead of this machine's clock the timeline may be: new instants wait until then."""


def new_instant_time(after: str | None = None) -> str:
    """A fresh instant time, strictly later than any handed out before and than `after`.

    Raises:
        WriteError: `after` is more than `MAX_WAIT_S` ahead of this machine's clock (the clocks
            of the machines writing the table disagree).
    """
    global _last
    with _lock:
        floor = max(_last, instant_key(after) if after else "")
        ahead = _seconds_ahead(floor)
        if ahead > MAX_WAIT_S:
            raise WriteError(
                f"the timeline holds instant {after}, {ahead:.0f}s ahead of this machine's clock; a new "
                f"instant must come after it. Check the clocks of the machines writing the table",
                instant=after,
            )
        while True:
            now = datetime.datetime.now()
            stamp = now.strftime("%Y%m%d%H%M%S") + f"{now.microsecond // 1000:03d}"
            if stamp > floor:
                _last = stamp
                return stamp
            time.sleep(0.001)


def _seconds_ahead(instant: str) -> float:
    """How many seconds `instant` (yyyyMMddHHmmss[SSS]) lies after now (negative: before)."""
    moment = instant_datetime(instant)
    return 0.0 if moment is None else (moment - datetime.datetime.now()).total_seconds()


def instant_datetime(instant: str) -> datetime.datetime | None:
    """The local time an instant (yyyyMMddHHmmss[SSS]) names; None if it names none."""
    try:
        moment = datetime.datetime.strptime(instant[:14], "%Y%m%d%H%M%S")
    except ValueError:
        return None
    millis = instant[14:17]
    if millis.isdigit():
        moment += datetime.timedelta(milliseconds=int(millis))
    return moment
