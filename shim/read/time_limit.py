"""A time limit on a scan, checked between batches inside it (also those a filter empties)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from shim.errors import ScanLimitError


@dataclass(frozen=True, slots=True)
class TimeLimit:
    """A scan stops with `ScanLimitError` once `time.monotonic()` passes `deadline` (`seconds`
    after it started)."""

    deadline: float
    seconds: float

    @classmethod
    def starting_now(cls, seconds: float, started: float | None = None) -> TimeLimit:
        """The limit of a scan that started at `started` (default: now), `seconds` long."""
        return cls((time.monotonic() if started is None else started) + seconds, seconds)

    @property
    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self.deadline - time.monotonic()

    def check(self) -> None:
        """Raise once the deadline passed.

        Raises:
            ScanLimitError: naming the limit.
        """
        if time.monotonic() > self.deadline:
            raise ScanLimitError(f"the scan ran longer than its limit of {self.seconds:g} seconds; "
                                 "add a filter or a limit")


NO_LIMIT = TimeLimit(math.inf, math.inf)
"""No time limit."""
