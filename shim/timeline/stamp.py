"""A cheap fingerprint of a table's timeline: it changes whenever an instant file is added,
renamed or removed (a few `stat` calls instead of a listing)."""

from __future__ import annotations

from shim.storage import Storage, paths


def timeline_stamp(storage: Storage) -> tuple[int, ...]:
    """(modification time, size, entries while recent) of the table's `.hoodie`, `.hoodie/timeline`
    (table version 8+) and `hoodie.properties`; -1s for what does not exist (see
    `Storage.change_stamp`)."""
    table = storage.root
    stamp: list[int] = []
    for path, folder in ((paths.hoodie(table), True), (paths.hoodie(table, "timeline"), True),
                         (paths.properties(table), False)):
        stamp += storage.change_stamp(path, folder=folder)
    return tuple(stamp)
