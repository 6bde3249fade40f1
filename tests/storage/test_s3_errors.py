"""On a real S3-compatible server, what goes wrong is an error naming the location: bad
credentials, a missing bucket, an object deleted during a scan, throttling beyond the retries."""

from __future__ import annotations

import pyarrow.fs as pafs
import pytest

import shim
from shim.errors import FileGoneError, StorageError, TableNotFoundError
from tests.s3tap import S3Tap

pytestmark = pytest.mark.shared

TABLE = "sample__cow__v6_simplekeygen_nonhivestyle"


@pytest.fixture()
def table_uri(s3, shared_tables, request) -> str:
    name = f"errors-{request.node.name.replace('[', '-').replace(']', '')}"
    pafs.copy_files(str(shared_tables[TABLE]), f"lake/{name}", destination_filesystem=pafs.S3FileSystem(**s3.storage_options()))
    return f"s3://lake/{name}"


def test_bad_credentials_name_the_location_and_never_the_secret(s3, table_uri):
    wrong = {**s3.storage_options(), "secret_key": "not-the-secret-0123456789"}
    with pytest.raises(StorageError) as caught:
        shim.open_table(table_uri, storage_options=wrong)
    message = str(caught.value)
    assert f"{table_uri}/.hoodie/hoodie.properties" in message and "ACCESS_DENIED" in message.upper()
    assert "not-the-secret" not in message and s3.secret_key not in message


def test_a_missing_bucket_is_named(s3):
    with pytest.raises(TableNotFoundError, match=r"no Hudi table at s3://no-such-bucket/t: the bucket does not exist"):
        shim.open_table("s3://no-such-bucket/t", storage_options=s3.storage_options())


def test_no_table_under_an_existing_prefix(s3):
    with pytest.raises(TableNotFoundError, match="no Hudi table at s3://lake/nothing-here"):
        shim.open_table("s3://lake/nothing-here", storage_options=s3.storage_options())


def test_an_object_deleted_during_a_scan_is_a_file_gone_error_naming_it(s3, table_uri):
    table = shim.open_table(table_uri, storage_options=s3.storage_options())
    slices = table.file_slices()
    victim = slices[-1].base_file
    key = "/".join(p for p in (table_uri.removeprefix("s3://"), slices[-1].partition_path, victim.name) if p)
    scan = table.scan()  # planned: the files to read are chosen
    pafs.S3FileSystem(**s3.storage_options()).delete_file(key)
    with pytest.raises(FileGoneError, match=victim.name):
        scan.read_all()


def test_throttling_is_retried_and_beyond_the_retries_named(s3, table_uri):
    tap = S3Tap(s3.endpoint).start()
    try:
        options = {**s3.storage_options(), "endpoint_override": tap.endpoint}
        expected = shim.open_table(table_uri, storage_options=s3.storage_options()).read().num_rows
        tap.fail_next(2, status=503, code="SlowDown")
        assert shim.open_table(table_uri, storage_options=options).read().num_rows == expected
        assert tap.counts.snapshot().get("FAULT") == 2
        tap.fail_next(1000, status=503, code="SlowDown")
        with pytest.raises(StorageError, match=rf"{table_uri}/\.hoodie/hoodie\.properties.*HTTP status 503.*throttled"):
            shim.open_table(table_uri, storage_options=options)
    finally:
        tap.clear_faults()
        tap.stop()
