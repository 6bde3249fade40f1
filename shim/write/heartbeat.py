"""Writer heartbeats: `.hoodie/.heartbeat/<instant>`, an empty file whose modification time is
the writer's last sign of life (Hudi's `HoodieHeartbeatClient`).

A pending instant whose heartbeat is older than `interval * tolerable misses` (or missing)
belongs to a failed writer; the next writer rolls it back.
"""

from __future__ import annotations

import time

from shim.storage import Storage, paths

HEARTBEAT_FOLDER = paths.HEARTBEAT_FOLDER


def heartbeat_path(table_path: str, instant: str) -> str:
    """The heartbeat file of an instant."""
    return paths.heartbeat(table_path, instant)


def beat(storage: Storage, instant: str) -> None:
    """Create or touch the heartbeat of `instant` (now)."""
    table_path = storage.root
    storage.touch(heartbeat_path(table_path, instant))


def refresh(storage: Storage, instant: str) -> bool:
    """Touch the heartbeat of `instant` if it is still there; False when it is gone: the write
    was abandoned (or completed) and must not be brought back to life by a task still running."""
    table_path = storage.root
    return storage.touch_existing(heartbeat_path(table_path, instant))


def last_beat(storage: Storage, instant: str) -> float | None:
    """Time (epoch seconds) of the last heartbeat, or None when there is no heartbeat file."""
    table_path = storage.root
    try:
        return storage.stat(heartbeat_path(table_path, instant)).mtime
    except FileNotFoundError:
        return None


def is_alive(storage: Storage, instant: str, timeout_s: float, now: float | None = None) -> bool:
    """Whether the writer of `instant` beat within the last `timeout_s` seconds."""
    last = last_beat(storage, instant)
    if last is None:
        return False
    return (time.time() if now is None else now) - last <= timeout_s


def stop(storage: Storage, instant: str) -> None:
    """Delete the heartbeat of a finished (or abandoned) write."""
    table_path = storage.root
    storage.remove(heartbeat_path(table_path, instant), missing_ok=True)
