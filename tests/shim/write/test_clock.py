"""Instant times for new commits: later than everything on the timeline, within reason."""

from __future__ import annotations

import datetime

import pytest

from shim.errors import WriteError
from shim.write.clock import new_instant_time


def stamp(moment: datetime.datetime) -> str:
    return moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"


def test_instants_increase_and_follow_the_timeline():
    first = new_instant_time()
    second = new_instant_time(after=first)
    assert len(first) == 17 and second > first
    soon = stamp(datetime.datetime.now() + datetime.timedelta(milliseconds=300))
    assert new_instant_time(after=soon) > soon  # a little ahead (clocks a bit apart): waited for


def test_a_timeline_far_ahead_of_the_clock_is_an_error_not_a_wait():
    later = stamp(datetime.datetime.now() + datetime.timedelta(hours=2))
    with pytest.raises(WriteError, match=rf"instant {later}, \d+s ahead of this machine's clock"):
        new_instant_time(after=later)
