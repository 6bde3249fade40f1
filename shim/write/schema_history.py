"""Schema-on-read bookkeeping of a commit: `latest_schema` and `.hoodie/.schema/<instant>.schemacommit`.

Hudi (`BaseHoodieWriteClient.saveInternalSchema`, `FileBasedInternalSchemaStorageManager`) records
on every commit of a schema-on-read table:
- `extraMetadata.latest_schema`: the table's InternalSchema after the commit. When the commit did
  not change the schema it is the previous schema, keeping its version id; a changed schema gets
  the commit's instant as version id.
- a history file `<instant>.schemacommit` (after `.schemacommit.requested` and
  `.schemacommit.inflight`, as on the table timeline) holding every version, newest first; an
  unchanged schema re-records the previous history text as is.
Before writing, files of instants that are not completed writes on the active timeline (never
completed, or archived) are removed (`cleanResidualFiles`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from shim.schema import InternalSchema, history_to_json, inherit_schema_history
from shim.storage import Storage, paths
from shim.timeline.instant import instant_key
from shim.timeline.timeline import Timeline

SCHEMA_FOLDER = paths.SCHEMA_FOLDER
SCHEMA_COMMIT = "schemacommit"


@dataclass(frozen=True, slots=True)
class SchemaCommit:
    """What one commit records: its `latest_schema` and the history text of its `.schemacommit`."""

    latest: InternalSchema
    history: str
    changed: bool


def schema_folder(table_path: str) -> str:
    return paths.schema_folder(table_path)


def _instant_of(name: str) -> str | None:
    head = name.split(".", 1)[0]
    return head if head.isdigit() and f".{SCHEMA_COMMIT}" in name else None


def latest_history_text(storage: Storage, timeline: Timeline) -> str:
    """The newest `.schemacommit` of a completed commit ("" when the table has none)."""
    table_path = storage.root
    folder = schema_folder(table_path)
    completed = [
        name[: -len(SCHEMA_COMMIT) - 1]
        for name in storage.list_names(folder)
        if name.endswith(f".{SCHEMA_COMMIT}") and timeline.is_committed(name[: -len(SCHEMA_COMMIT) - 1])
    ]
    if not completed:
        return ""
    newest = max(completed, key=instant_key)
    return storage.read_text(os.path.join(folder, f"{newest}.{SCHEMA_COMMIT}"))


def same_schema(a: InternalSchema, b: InternalSchema) -> bool:
    """Whether two versions describe the same columns (ids, names, types, order), versions aside."""
    return a.record.fields == b.record.fields and a.max_column_id == b.max_column_id


def plan_schema_commit(
    previous: InternalSchema | None, history: str, evolved: InternalSchema, instant: str
) -> SchemaCommit:
    """What a commit at `instant` records, given the schema before it and the schema it wrote with."""
    if previous is not None and same_schema(previous, evolved):
        if history:
            return SchemaCommit(previous, history, False)
        # The table's first schema-on-read commit: Hudi versions the schema at this instant.
        latest = InternalSchema(previous.record, int(instant), previous.max_column_id)
        return SchemaCommit(latest, history_to_json([latest]), False)
    latest = InternalSchema(evolved.record, int(instant), evolved.max_column_id)
    if not history and previous is not None:
        history = history_to_json([previous])
    return SchemaCommit(latest, inherit_schema_history(latest, history), previous is not None)


def persist_history(storage: Storage, timeline: Timeline, instant: str, history: str) -> None:
    """Write `.schemacommit.requested`, `.inflight` and the completed `<instant>.schemacommit`.

    Residual files of instants that never completed on `timeline` are removed first.
    """
    table_path = storage.root
    folder = schema_folder(table_path)
    storage.make_dirs(folder)
    clean_residual_files(storage, timeline, keep=instant)
    storage.write_atomically(os.path.join(folder, f"{instant}.{SCHEMA_COMMIT}.requested"), b"")
    storage.write_atomically(os.path.join(folder, f"{instant}.{SCHEMA_COMMIT}.inflight"), b"")
    storage.write_atomically(os.path.join(folder, f"{instant}.{SCHEMA_COMMIT}"), history.encode("utf-8"))


def clean_residual_files(storage: Storage, timeline: Timeline, keep: str | None = None) -> list[str]:
    """Delete schema files of instants that are not completed writes on the active timeline (of
    failed writes, and of archived ones: every history file holds all versions); returns the names
    removed."""

    def residual(instant: str | None) -> bool:
        if instant is None or instant == keep:
            return False
        found = timeline.latest_state(instant)
        return found is None or not (found.is_completed and found.action.writes_data)

    return _remove_where(storage, residual)


def remove_schema_files(storage: Storage, instant: str) -> list[str]:
    """Delete every schema file of `instant` (a rolled-back write); returns the names removed."""
    return _remove_where(storage, lambda found: found == instant)


def _remove_where(storage: Storage, chosen: Callable[[str | None], bool]) -> list[str]:
    """Delete the schema files whose instant is `chosen`; returns the names removed, sorted."""
    table_path = storage.root
    folder = schema_folder(table_path)
    removed = []
    for name in storage.list_names(folder):
        if not chosen(_instant_of(name)):
            continue
        if storage.remove(os.path.join(folder, name), missing_ok=True):
            removed.append(name)
    return sorted(removed)
