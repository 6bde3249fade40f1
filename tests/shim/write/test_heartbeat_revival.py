"""A task still running after its job abandoned the write does not bring the heartbeat back."""

from __future__ import annotations

import time

from shim.storage import as_storage
from shim.write import heartbeat
from shim.write.task_info import KeepAlive


def test_keep_alive_stops_when_the_heartbeat_is_gone(tmp_path):
    table = as_storage(str(tmp_path))
    heartbeat.beat(table, "001")
    with KeepAlive(table, "001", 0.05) as alive:
        heartbeat.stop(table, "001")  # the job's abort
        alive.thread.join(timeout=5)
        assert not alive.thread.is_alive()
    time.sleep(0.15)
    assert heartbeat.last_beat(table, "001") is None


def test_keep_alive_refreshes_a_live_heartbeat_and_never_creates_one(tmp_path):
    table = as_storage(str(tmp_path))
    with KeepAlive(table, "002", 0.05):
        pass
    assert heartbeat.last_beat(table, "002") is None
    heartbeat.beat(table, "003")
    first = heartbeat.last_beat(table, "003")
    time.sleep(0.02)
    with KeepAlive(table, "003", 0.05):
        time.sleep(0.2)
    assert heartbeat.last_beat(table, "003") > first
