"""Open tables kept between requests, reopened when their timeline changes.

A completed instant adds a file to the timeline folder, which changes the folder's modification
time; checking it costs one `stat` per request instead of listing the timeline.
"""

from __future__ import annotations

import threading

import shim
from catalog.registry import RegisteredTable
from shim.storage import Storage
from shim.timeline.instant import Action, Instant

#: Marks an instant whose effect on file groups is not known file by file (rollback, restore).
EVERY_GROUP: frozenset[tuple[str, str]] = frozenset({("*", "*")})
_NO_EFFECT = (Action.CLEAN, Action.SAVEPOINT, Action.INDEXING)


class TableHandle:
    """One registered table: the open `shim.Table`, its latest snapshot, and what each completed
    instant touched."""

    def __init__(self, entry: RegisteredTable, storage: Storage, *, metadata: bool = True) -> None:
        self.entry = entry
        self.storage = storage
        self.metadata = metadata
        self._lock = threading.Lock()
        self._table: shim.Table | None = None
        self._snapshot: shim.TableSnapshot | None = None
        self._touched: dict[str, frozenset[tuple[str, str]]] = {}

    @property
    def name(self) -> str:
        return self.entry.name

    def table(self) -> shim.Table:
        """The open table (the user's API: each read sees the table as it is then)."""
        with self._lock:
            if self._table is None:
                self._table = shim.open_table(self.storage, metadata=self.metadata)
            return self._table

    def snapshot(self, *, reopen: bool = False) -> shim.TableSnapshot:
        """The table as of its latest timeline: the same snapshot while no instant was added, else one
        loaded anew (`reopen`: loaded anew in any case, its files listed again). Scans running on an
        older snapshot keep their view."""
        snapshot = self.table().snapshot(reopen=reopen)
        self._snapshot = snapshot
        return snapshot

    def loaded(self) -> shim.TableSnapshot | None:
        """The latest snapshot if it is up to date, without loading anything (None: `snapshot()` must)."""
        snapshot = self._snapshot
        return None if snapshot is None or snapshot.is_stale() else snapshot

    def touched_groups(self, table: shim.TableSnapshot, instant: Instant) -> frozenset[tuple[str, str]]:
        """(partition, file id) of the file groups a completed instant changed; EVERY_GROUP when unknown.

        Instants never change, so the answer is kept for the life of the handle.
        """
        key = instant.file_name
        cached = self._touched.get(key)
        if cached is not None:
            return cached
        action = instant.action.completed_as
        if action.writes_data:
            metadata = table.active_timeline.commit_metadata(instant)
            groups = set(metadata.touched_file_groups())
            for partition, file_ids in metadata.replaced_file_ids.items():
                groups.update((partition, file_id) for file_id in file_ids)
            touched = frozenset(groups)
        elif action in _NO_EFFECT:
            touched = frozenset()
        else:
            touched = EVERY_GROUP
        self._touched[key] = touched
        return touched
