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
    """One registered table: the open `shim.Table` and what each completed instant touched."""

    def __init__(self, entry: RegisteredTable, storage: Storage, *, metadata: bool = True) -> None:
        self.entry = entry
        self.storage = storage
        self.metadata = metadata
        self._lock = threading.Lock()
        self._table: shim.Table | None = None
        self._touched: dict[str, frozenset[tuple[str, str]]] = {}

    @property
    def name(self) -> str:
        return self.entry.name

    def table(self, *, reopen: bool = False) -> shim.Table:
        """The table as of its latest timeline (reopened if an instant was added since the last call,
        or when `reopen`: its files listed again; scans running on the previous object keep their view)."""
        with self._lock:
            if self._table is None:
                self._table = shim.open_table(self.storage, metadata=self.metadata)
            self._table = self._table.current(reopen=reopen)
            return self._table

    def loaded(self) -> shim.Table | None:
        """The open table if it is up to date, without loading anything (None: `table()` must)."""
        with self._lock:
            table = self._table
            return None if table is None or table.needs_reload() else table.current()

    def touched_groups(self, table: shim.Table, instant: Instant) -> frozenset[tuple[str, str]]:
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
