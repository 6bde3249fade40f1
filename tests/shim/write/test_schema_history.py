"""latestSchema and `.schemacommit` files as Hudi's saveInternalSchema records them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from shim.schema import history_from_json
from shim.storage import as_storage
from shim.timeline.timeline import Timeline
from shim.write.schema_changes import add_column
from shim.write.schema_history import (
    clean_residual_files,
    latest_history_text,
    persist_history,
    plan_schema_commit,
    remove_schema_files,
)
from shim.write.write_schema import initial_schema
from tests.tablekit import TinyTable

SCHEMA = initial_schema("t", pa.schema([("id", pa.string()), ("ts", pa.int64())]))


def test_first_commit_versions_the_schema_at_its_instant():
    planned = plan_schema_commit(None, "", SCHEMA, "20240101000000000")
    assert planned.latest.version_id == 20240101000000000 and not planned.changed
    assert [s.version_id for s in history_from_json(planned.history)] == [20240101000000000]


def test_unchanged_schema_keeps_its_version_and_the_history_text():
    first = plan_schema_commit(None, "", SCHEMA, "20240101000000000")
    second = plan_schema_commit(first.latest, first.history, SCHEMA, "20240102000000000")
    assert second.latest.version_id == 20240101000000000
    assert second.history == first.history and not second.changed


def test_changed_schema_gets_the_new_instant_and_is_prepended():
    first = plan_schema_commit(None, "", SCHEMA, "20240101000000000")
    evolved = add_column(first.latest, "tip", "double")
    second = plan_schema_commit(first.latest, first.history, evolved, "20240102000000000")
    assert second.changed and second.latest.version_id == 20240102000000000
    assert [s.version_id for s in history_from_json(second.history)] == [20240102000000000, 20240101000000000]
    assert second.history.startswith('{"schemas":[{"max_column_id":7,"version_id":20240102000000000')


def test_persist_writes_three_files_and_latest_reads_only_committed(tmp_path: Path):
    table = TinyTable(tmp_path / "t", pa.schema([("id", pa.string()), ("ts", pa.int64())]), mor=False)
    done = table.base([{"id": "a", "ts": 1}])
    pending = table.base([{"id": "b", "ts": 1}], complete=False, file_id="fg2-0")
    timeline = Timeline.load(as_storage(str(table.path)), table.config)
    persist_history(as_storage(str(table.path)), timeline, done, '{"schemas":[]}')
    persist_history(as_storage(str(table.path)), timeline, pending, '{"schemas":[1]}')
    names = sorted(p.name for p in (table.path / ".hoodie" / ".schema").iterdir())
    assert names == [f"{done}.schemacommit", f"{done}.schemacommit.inflight", f"{done}.schemacommit.requested",
                     f"{pending}.schemacommit", f"{pending}.schemacommit.inflight",
                     f"{pending}.schemacommit.requested"]
    assert latest_history_text(as_storage(str(table.path)), timeline) == '{"schemas":[]}'
    assert clean_residual_files(as_storage(str(table.path)), timeline) == [
        f"{pending}.schemacommit", f"{pending}.schemacommit.inflight", f"{pending}.schemacommit.requested"]
    # Archived commits' files go too: the newest history file holds every version.
    archived = Timeline(timeline.folder, [i for i in timeline.instants if i.requested_time != done], table.config)
    persist_history(as_storage(str(table.path)), timeline, pending, '{"schemas":[1]}')
    assert clean_residual_files(as_storage(str(table.path)), archived, keep=pending) == [
        f"{done}.schemacommit", f"{done}.schemacommit.inflight", f"{done}.schemacommit.requested"]
    persist_history(as_storage(str(table.path)), timeline, done, '{"schemas":[]}')
    assert remove_schema_files(as_storage(str(table.path)), done) == [
        f"{done}.schemacommit", f"{done}.schemacommit.inflight", f"{done}.schemacommit.requested"]
