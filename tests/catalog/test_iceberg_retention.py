"""Published Iceberg versions are removed once replaced and older than the keep period: only the
files no kept version names, only under the publisher's folder, and the current versions of both
views stay readable."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

from catalog.iceberg.publish import IcebergPublisher
from catalog.iceberg.retention import expire
from catalog.service import Catalog
from catalog.settings import Settings
from tests.local import LOCAL
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])


def _files(folder: Path) -> set[str]:
    return {str(p) for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TinyTable, str, Catalog]]:
    """A merge-on-read table `m` (one log), its base instant, and a catalog over its warehouse."""
    table = TinyTable(tmp_path / "wh" / "m", SCHEMA)
    base = table.base([{"id": k, "ts": 5, "v": f"base-{k}"} for k in "abcdef"])
    table.log([{"id": "b", "ts": 9, "v": "new-b"}], base_instant=base)
    catalog = Catalog(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:"))
    yield table, base, catalog
    catalog.close()


def _rows(metadata_location: str) -> list[tuple]:
    loaded = StaticTable.from_metadata(metadata_location).scan().to_arrow()
    return sorted(tuple(row.values()) for row in loaded.to_pylist())


def test_a_replaced_version_is_removed_and_the_current_ones_stay_readable(served, tmp_path):
    table, base, catalog = served
    # (history=0: the new version keeps no snapshot of the first, whose files only it names)
    publisher = IcebergPublisher(catalog, str(tmp_path / "ice"), keep_seconds=0, slice_merging="deletes", history=0)
    read_optimized = publisher.publish("m", "read_optimized")
    first = publisher.publish("m", "snapshot")
    first_files = _files(tmp_path / "ice")
    table.log([{"id": "c", "ts": 9, "v": "new-c"}], base_instant=base)
    second = publisher.publish("m", "snapshot")
    after = _files(tmp_path / "ice")
    assert first.metadata_location != second.metadata_location
    gone = first_files - after
    assert first.metadata_location.removeprefix("file://") in gone
    assert any(p.endswith("-log.parquet") for p in gone) and any(p.endswith("-deletes.parquet") for p in gone)
    assert os.path.exists(read_optimized.metadata_location.removeprefix("file://"))  # the other view's version
    assert os.path.exists(table.path / ".hoodie") and list(table.path.glob("*.parquet"))  # the table's own files
    assert _rows(second.metadata_location) == [
        ("a", 5, "base-a"), ("b", 9, "new-b"), ("c", 9, "new-c"), ("d", 5, "base-d"), ("e", 5, "base-e"),
        ("f", 5, "base-f")]
    assert _rows(read_optimized.metadata_location) == sorted((k, 5, f"base-{k}") for k in "abcdef")


def test_the_files_of_snapshots_kept_for_time_travel_stay(served, tmp_path):
    table, base, catalog = served
    publisher = IcebergPublisher(catalog, str(tmp_path / "ice"), keep_seconds=0, slice_merging="deletes")
    publisher.publish("m", "snapshot")
    written = {p for p in _files(tmp_path / "ice") if p.endswith(("-log.parquet", "-deletes.parquet"))}
    table.log([{"id": "c", "ts": 9, "v": "new-c"}], base_instant=base)
    second = publisher.publish("m", "snapshot")
    assert written and written <= _files(tmp_path / "ice")  # the first commit's, still its snapshot's
    assert len(second.metadata["snapshots"]) >= 2 and ("c", 9, "new-c") in _rows(second.metadata_location)


def test_replaced_versions_stay_for_the_keep_period(served, tmp_path):
    table, base, catalog = served
    publisher = IcebergPublisher(catalog, str(tmp_path / "ice"), keep_seconds=3600)
    first = publisher.publish("m", "snapshot")
    before = _files(tmp_path / "ice")
    table.log([{"id": "c", "ts": 9, "v": "new-c"}], base_instant=base)
    publisher.publish("m", "snapshot")
    assert before <= _files(tmp_path / "ice")
    assert ("b", 9, "new-b") in _rows(first.metadata_location)


def _age(path: str, seconds: float) -> None:
    moment = time.time() - seconds
    os.utime(path, (moment, moment))


def test_expire_keeps_the_version_published_last_and_files_being_written(served, tmp_path):
    table, base, catalog = served
    publisher = IcebergPublisher(catalog, str(tmp_path / "ice"), keep_seconds=3600)
    first = publisher.publish("m", "snapshot")
    table.log([{"id": "c", "ts": 9, "v": "new-c"}], base_instant=base)
    second = publisher.publish("m", "snapshot")
    folder = tmp_path / "ice" / "m"
    for path in _files(folder):
        _age(path, 7200)
    # Publishing a version found on disk again (a new server, or a rollback back to it) marks it as
    # the one in use.
    again = IcebergPublisher(catalog, str(tmp_path / "ice"), keep_seconds=3600).publish("m", "snapshot")
    current = again.metadata_location.removeprefix("file://")
    assert again.metadata_location == second.metadata_location and os.stat(current).st_mtime > time.time() - 60
    _age(current, 9000)
    _age(first.metadata_location.removeprefix("file://"), 8000)  # the first was published last
    fresh = folder / "data" / "being-written.parquet"
    fresh.write_bytes(b"PAR1")
    removed = expire(LOCAL, str(folder), keep_seconds=3600)
    assert current in removed and first.metadata_location.removeprefix("file://") not in removed
    assert fresh.exists() and str(fresh) not in removed
    assert _rows(first.metadata_location) == sorted([("b", 9, "new-b")] + [(k, 5, f"base-{k}") for k in "acdef"])


def test_a_version_that_cannot_be_read_keeps_every_file(tmp_path):
    folder = tmp_path / "ice" / "m"
    (folder / "snapshot" / "metadata").mkdir(parents=True)
    (folder / "data").mkdir()
    broken = folder / "snapshot" / "metadata" / "x.metadata.json"
    broken.write_text(json.dumps({"snapshots": [{"manifest-list": "file:///nowhere/list.avro"}]}))
    stray = folder / "data" / "old.parquet"
    stray.write_bytes(b"PAR1")
    _age(str(stray), 7200)
    assert expire(LOCAL, str(folder), keep_seconds=60) == [] and stray.exists()


def test_only_files_the_publisher_writes_are_removed_and_never_in_a_hudi_table(served, tmp_path):
    table, _, _ = served
    folder = tmp_path / "ice" / "m"
    (folder / "data").mkdir(parents=True)
    (folder / "elsewhere").mkdir()
    keep = [folder / "data" / "notes.txt", folder / "elsewhere" / "x.parquet"]
    stale = folder / "data" / "0123-log.parquet"
    for path in [*keep, stale]:
        path.write_bytes(b"PAR1")
        _age(str(path), 7200)
    assert expire(LOCAL, str(folder), keep_seconds=60) == [str(stale)]
    assert all(path.exists() for path in keep)
    (table.path / "data").mkdir()
    (table.path / "data" / "0123-log.parquet").write_bytes(b"PAR1")  # a folder only a Hudi table should own
    hudi_files = _files(table.path)
    for path in hudi_files:
        _age(path, 7200)
    assert expire(LOCAL, str(table.path), keep_seconds=0) == [] and _files(table.path) == hudi_files


def test_an_iceberg_folder_inside_the_tables_is_refused_and_nothing_is_written_there(served, tmp_path):
    from catalog.iceberg.publish import PublishFolderError

    table, _, catalog = served
    before = {str(p) for p in table.path.rglob("*")}
    with pytest.raises(PublishFolderError, match=r"table m's published files inside the table .*--iceberg-dir"):
        IcebergPublisher(catalog, str(tmp_path / "wh")).publish("m", "snapshot")
    assert {str(p) for p in table.path.rglob("*")} == before


def test_replaced_versions_are_looked_for_at_most_once_a_minute_per_table(served, tmp_path, monkeypatch):
    from catalog.iceberg import publish

    table, base, catalog = served
    publisher = IcebergPublisher(catalog, str(tmp_path / "ice"), keep_seconds=1e-6)
    first = publisher.publish("m", "snapshot")
    time.sleep(0.01)
    table.log([{"id": "c", "ts": 9, "v": "new-c"}], base_instant=base)
    publisher.publish("m", "snapshot")
    assert os.path.exists(first.metadata_location.removeprefix("file://"))  # not looked for again yet
    monkeypatch.setattr(publish, "EXPIRE_EVERY_SECONDS", 0.0)
    table.log([{"id": "d", "ts": 9, "v": "new-d"}], base_instant=base)
    publisher.publish("m", "snapshot")
    assert not os.path.exists(first.metadata_location.removeprefix("file://"))
