"""Writes with their table services (inline compaction, cleaning, archiving) on a real S3 server
leave the table the same writes leave in a local folder."""

from __future__ import annotations

import pytest

import shim
from shim.storage import RemoteStorage, storage_for
from tests.writekit import write

SERVICES = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline": "true",
            "hoodie.compact.inline.max.delta.commits": "2", "hoodie.cleaner.commits.retained": "1",
            "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
            "hoodie.datasource.write.partitionpath.field": "region"}


def batch(ts: int, ids: range) -> list[dict]:
    return [{"id": f"k{i:03d}", "ts": ts, "region": ("eu", "us")[i % 2], "fare": float(ts * 1000 + i)} for i in ids]


def writes(location: str) -> None:
    write(location, batch(1, range(40)), **SERVICES)
    for step in range(2, 8):
        write(location, batch(step, range(step, 40, 3)), **SERVICES)
    write(location, batch(9, range(10)), **SERVICES, **{"hoodie.datasource.write.operation": "delete"})


def rows(table: shim.Table, **kwargs: object) -> list[dict]:
    return sorted(table.read(**kwargs).to_pylist(), key=lambda r: r["id"])  # type: ignore[arg-type]


@pytest.fixture(params=["s3", "moto_s3"])
def s3_env(request, monkeypatch):
    """s3proxy (which ignores conditional writes: one writer at a time, local locks) and moto
    (which honours them: instants created with If-None-Match, the lock an object on the store)."""
    server = request.getfixturevalue(request.param)
    for name, value in server.environment().items():
        monkeypatch.setenv(name, value)
    return server


def test_compaction_cleaning_and_archiving_on_s3_leave_what_they_leave_locally(s3_env, tmp_path):
    uri = "s3://lake/services"
    writes(uri)
    # the writers' lock: an object on a store honouring conditional writes, else a local file
    store = storage_for(uri)
    assert isinstance(store, RemoteStorage)
    assert store.exists(f"{uri}/.hoodie/.aux/hudi-shim.lock") == store.conditional.support(uri).honoured
    writes(str(tmp_path / "local"))
    remote, local = shim.open_table(uri), shim.open_table(str(tmp_path / "local"))
    actions = [(i.action, i.state) for i in local.timeline()]
    assert {"COMMIT", "CLEAN"} <= {a.name for a, s in actions if s.name == "COMPLETED"}, "compaction and clean ran"
    assert [(i.action, i.state) for i in remote.timeline()] == actions
    assert [(i.action, i.state) for i in remote.archived_timeline()] == \
        [(i.action, i.state) for i in local.archived_timeline()]
    assert local.archived_timeline(), "archiving ran"
    assert rows(remote) == rows(local)
    assert rows(remote, mode="read_optimized") == rows(local, mode="read_optimized")
    assert len(rows(local)) == 30
    shape = [(s.partition_path, s.base_file is not None, len(s.log_files)) for s in local.file_slices()]
    assert sorted((s.partition_path, s.base_file is not None, len(s.log_files)) for s in remote.file_slices()) \
        == sorted(shape)
