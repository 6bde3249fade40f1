"""Which file system holds a location, and with which options (against a real S3 server)."""

from __future__ import annotations

import pyarrow.fs as pafs
import pytest

from shim import filesystems
from shim.errors import InvalidArgumentError


def test_local_paths_and_file_uris_are_not_remote():
    assert not filesystems.is_remote("/tmp/t") and not filesystems.is_remote("file:///tmp/t")
    assert filesystems.is_remote("s3://b/t") and filesystems.is_remote("S3A://b/t") and filesystems.is_remote("gs://b/t")


def test_split_and_normalize():
    assert filesystems.split("s3://bucket/a/b/") == filesystems.RemoteLocation("s3", "bucket", "a/b")
    assert filesystems.normalize("s3://bucket//a///b/") == "s3://bucket/a/b"
    with pytest.raises(InvalidArgumentError, match="names no bucket"):
        filesystems.split("s3:///a")
    with pytest.raises(InvalidArgumentError, match="unsupported location 'ftp://h/a'"):
        filesystems.split("ftp://h/a")


def test_the_longest_registered_prefix_gives_the_options():
    filesystems.register("s3://prefix-test", {"aws_region": "eu-west-1"})
    filesystems.register("s3://prefix-test/deep/table", {"region": "us-west-2"})
    assert filesystems.storage_options_for("s3://prefix-test/deep/table/.hoodie/x") == {"region": "us-west-2"}
    assert filesystems.storage_options_for("s3://prefix-test/deep/tablex") == {"aws_region": "eu-west-1"}
    assert filesystems.storage_options_for("s3://other/deep") == {}


def test_object_store_spellings_of_options_reach_pyarrow(s3):
    location = "s3://lake/spellings"
    filesystems.register(location, {"aws_access_key_id": s3.access_key, "aws_secret_access_key": s3.secret_key,
                                    "aws_endpoint_url": s3.endpoint, "aws_region": "us-east-1"})
    system, path = filesystems.filesystem_for(location + "/x.bin")
    assert isinstance(system, pafs.S3FileSystem) and path == "lake/spellings/x.bin"
    with system.open_output_stream(path) as out:
        out.write(b"abc")
    assert system.get_file_info(path).size == 3


def test_options_from_the_aws_environment(s3, monkeypatch):
    for name, value in s3.environment().items():
        monkeypatch.setenv(name, value)
    system, path = filesystems.filesystem_for("s3://lake/from-env/y.bin")
    with system.open_output_stream(path) as out:
        out.write(b"abcd")
    assert system.get_file_info(path).size == 4


def test_unknown_or_half_credentials_are_refused_and_secrets_redacted():
    filesystems.register("s3://refused/a", {"acess_key": "x"})
    with pytest.raises(InvalidArgumentError, match="unknown S3 storage option 'acess_key'"):
        filesystems.filesystem_for("s3://refused/a/f")
    filesystems.register("s3://refused/b", {"access_key": "x"})
    with pytest.raises(InvalidArgumentError, match="both an access key and a secret key"):
        filesystems.filesystem_for("s3://refused/b/f")
    assert filesystems.redacted({"aws_secret_access_key": "s", "region": "r"}) == \
        {"aws_secret_access_key": "***", "region": "r"}
