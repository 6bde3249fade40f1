"""Schema-on-read history: which InternalSchema each instant wrote with, and the table's at a time.

Lookup order for the schema of an instant (Hudi's `InternalSchemaCache.getInternalSchemaByVersionId`):
1. the `latest_schema` in that instant's commit metadata;
2. else the newest entry at or before it in the schema history (`.hoodie/.schema/*.schemacommit`,
   the newest file whose instant completed);
3. else none: the table did not use schema-on-read then (files are matched by name).
"""

from __future__ import annotations

import os
import threading

from shim.errors import InvalidTableError
from shim.schema import InternalSchema, history_from_json, schema_from_json, search_schema
from shim.storage import Storage, decode_text, paths
from shim.timeline.instant import instant_key
from shim.timeline.timeline import Timeline

SCHEMA_FOLDER = paths.SCHEMA_FOLDER
SCHEMA_COMMIT_SUFFIX = ".schemacommit"


class SchemaHistory:
    """InternalSchema versions of one table, looked up by instant and cached."""

    def __init__(self, table_path: str, timeline: Timeline) -> None:
        self.table_path = table_path
        self.storage: Storage = timeline.storage
        self.timeline = timeline
        self._lock = threading.Lock()
        self._by_instant: dict[str, InternalSchema | None] = {}
        self._history: list[InternalSchema] | None = None

    @property
    def folder(self) -> str:
        return paths.schema_folder(self.table_path)

    def history(self) -> list[InternalSchema]:
        """Versions from the newest completed `.schemacommit` file, newest first ([] if none)."""
        with self._lock:
            if self._history is None:
                self._history = self._load_history()
            return self._history

    def _load_history(self) -> list[InternalSchema]:
        candidates: dict[str, str] = {}
        for name in self.storage.list_names(self.folder):
            if not name.endswith(SCHEMA_COMMIT_SUFFIX):
                continue
            # `<instant>.schemacommit`; on timeline layout 2 `<instant>_<completion>.schemacommit`
            instant = name[: -len(SCHEMA_COMMIT_SUFFIX)].split("_", 1)[0]
            if instant.isdigit() and self.timeline.is_committed(instant):
                candidates[instant] = name
        if not candidates:
            return []
        newest = max(candidates, key=instant_key)
        path = os.path.join(self.folder, candidates[newest])
        try:
            return history_from_json(decode_text(self.storage.read_bytes(path), path))
        except InvalidTableError as exc:
            raise InvalidTableError(f"cannot read schema history {path}: {exc.message}", path=path) from exc

    def schema_of_instant(self, instant: str) -> InternalSchema | None:
        """The InternalSchema that data written at `instant` was written with, or None."""
        with self._lock:
            if instant in self._by_instant:
                return self._by_instant[instant]
        schema = self._commit_schema(instant)
        if schema is None:
            schema = search_schema(self.history(), _version(instant))
        with self._lock:
            self._by_instant[instant] = schema
        return schema

    def table_schema(self, read_instant: str | None) -> InternalSchema | None:
        """The table's InternalSchema as of `read_instant` (None: not a schema-on-read table then)."""
        latest = self.timeline.latest_commit_metadata(read_instant)
        if latest is not None and latest[1].latest_schema:
            return self.schema_of_instant(latest[0].requested_time)
        history = self.history()
        if not history:
            return None
        return history[0] if read_instant is None else search_schema(history, _version(read_instant))

    def _commit_schema(self, instant: str) -> InternalSchema | None:
        state = self.timeline.latest_state(instant)
        if state is None or not state.is_completed or not state.action.writes_data:
            return None
        text = self.timeline.commit_metadata(state).latest_schema
        if not text:
            return None
        try:
            return schema_from_json(text)
        except InvalidTableError as exc:
            path = os.path.join(self.timeline.folder, state.file_name)
            raise InvalidTableError(
                f"cannot read latest_schema of {path}: {exc.message}", path=path, instant=instant
            ) from exc


def _version(instant: str) -> int:
    """Hudi's schema version id of an instant: the instant time as a number."""
    return int(instant) if instant.isdigit() else 0
