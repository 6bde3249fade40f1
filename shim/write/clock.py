"""Instant times for new commits (`yyyyMMddHHmmssSSS`, local time like Hudi's default)."""

from __future__ import annotations

import datetime
import threading
import time

from shim.timeline.instant import instant_key

_lock = threading.Lock()
_last = ""


def new_instant_time(after: str | None = None) -> str:
    """A fresh instant time, strictly later than any handed out before and than `after`."""
    global _last
    with _lock:
        while True:
            now = datetime.datetime.now()
            stamp = now.strftime("%Y%m%d%H%M%S") + f"{now.microsecond // 1000:03d}"
            floor = max(_last, instant_key(after) if after else "")
            if stamp > floor:
                _last = stamp
                return stamp
            time.sleep(0.001)
