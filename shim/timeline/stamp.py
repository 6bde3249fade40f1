"""A cheap fingerprint of a table's timeline: it changes whenever an instant file is added,
renamed or removed (a few `stat` calls instead of a listing)."""

from __future__ import annotations

import time

from shim.storage import Storage, paths

# A file system with coarse timestamps can change a folder twice within one tick: while its time
# is this recent, the number of entries is compared too.
_RACY_NS = 2_000_000_000


def timeline_stamp(storage: Storage) -> tuple[int, ...]:
    """(modification time, size, entries while recent) of the table's `.hoodie`, `.hoodie/timeline`
    (table version 8+) and `hoodie.properties`; -1s for what does not exist."""
    stamp: list[int] = []
    now = time.time_ns()
    table = storage.root
    for path in (paths.hoodie(table), paths.hoodie(table, "timeline"), paths.properties(table)):
        try:
            info = storage.stat(path)
        except OSError:
            stamp += [-1, -1, -1]
            continue
        recent = now - info.mtime_ns < _RACY_NS and not info.is_file
        stamp += [info.mtime_ns, info.size, len(storage.list_names(path)) if recent else -1]
    return tuple(stamp)
