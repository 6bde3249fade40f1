"""Real Hudi tables on a real S3-compatible server read exactly as the same tables do locally."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

import shim

pytestmark = pytest.mark.shared


def upload(s3, local_table, name: str) -> str:
    """Copy a local table folder to `s3://lake/<name>`; returns its URI."""
    pafs.copy_files(str(local_table), f"lake/{name}", destination_filesystem=pafs.S3FileSystem(**s3.storage_options()))
    return f"s3://lake/{name}"


def sorted_rows(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=repr)


@pytest.fixture(scope="module")
def s3_tables(s3, shared_tables) -> dict[str, tuple[str, str]]:
    """table name -> (local path, s3 URI) of every real table."""
    return {name: (str(path), upload(s3, path, name)) for name, path in shared_tables.items()}


def test_every_real_table_reads_the_same_from_s3(s3, s3_tables):
    assert s3_tables, "no real tables"
    for name, (local_path, uri) in s3_tables.items():
        local = shim.open_table(local_path)
        remote = shim.open_table(uri, storage_options=s3.storage_options())
        assert remote.path == uri
        for mode in ("snapshot", "read_optimized"):
            expected, got = local.read(mode=mode), remote.read(mode=mode)
            assert got.schema == expected.schema, (name, mode)
            assert sorted_rows(got) == sorted_rows(expected), (name, mode)
        first = next(i.requested_time for i in local.timeline() if i.is_completed and i.action != "clean")
        assert sorted_rows(remote.read(as_of=first)) == sorted_rows(local.read(as_of=first)), name
        assert [s.file_id for s in remote.file_slices()] == [s.file_id for s in local.file_slices()], name
