"""A cheap fingerprint of a table's timeline: it changes whenever an instant file is added,
renamed or removed (a few `stat` calls instead of a listing)."""

from __future__ import annotations

import os
import time

from shim import storage

# A file system with coarse timestamps can change a folder twice within one tick: while its time
# is this recent, the number of entries is compared too.
_RACY_NS = 2_000_000_000


def timeline_stamp(table_path: str) -> tuple[int, ...]:
    """(modification time, size, entries while recent) of `.hoodie`, `.hoodie/timeline` (table
    version 8+) and `hoodie.properties`; -1s for what does not exist."""
    hoodie = os.path.join(table_path, ".hoodie")
    stamp: list[int] = []
    now = time.time_ns()
    for path in (hoodie, os.path.join(hoodie, "timeline"), os.path.join(hoodie, "hoodie.properties")):
        try:
            info = storage.stat(path)
        except OSError:
            stamp += [-1, -1, -1]
            continue
        recent = now - info.mtime_ns < _RACY_NS and not info.is_file
        stamp += [info.mtime_ns, info.size, len(storage.list_names(path)) if recent else -1]
    return tuple(stamp)
