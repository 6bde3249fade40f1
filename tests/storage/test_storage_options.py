"""Which store holds a location, and the options a storage reaches it with (against a real S3
server: s3proxy)."""

from __future__ import annotations

import pyarrow.fs as pafs
import pytest

from shim.errors import InvalidArgumentError
from shim.storage import LocalStorage, RemoteStorage, redacted, storage_for
from shim.storage.options import RemoteLocation, is_remote, normalize, split


def test_local_paths_and_file_uris_are_not_remote():
    assert not is_remote("/tmp/t") and not is_remote("file:///tmp/t")
    assert is_remote("s3://b/t") and is_remote("S3A://b/t") and is_remote("gs://b/t")
    assert isinstance(storage_for("file:///tmp/t"), LocalStorage) and storage_for("file:///tmp/t").root == "/tmp/t"
    assert isinstance(storage_for("s3://b/t/"), RemoteStorage) and storage_for("s3://b/t/").root == "s3://b/t"


def test_split_and_normalize():
    assert split("s3://bucket/a/b/") == RemoteLocation("s3", "bucket", "a/b")
    assert normalize("s3://bucket//a///b/") == "s3://bucket/a/b"
    with pytest.raises(InvalidArgumentError, match="names no bucket"):
        split("s3:///a")
    with pytest.raises(InvalidArgumentError, match="unsupported location 'ftp://h/a'"):
        split("ftp://h/a")


def test_a_storage_keeps_its_own_options_and_equals_only_one_reaching_the_store_alike():
    first = storage_for("s3://prefix-test/deep/table", {"region": "us-west-2"})
    second = storage_for("s3://prefix-test/deep/tablex", {"aws_region": "eu-west-1"})
    assert first.options == {"region": "us-west-2"} and second.options == {"aws_region": "eu-west-1"}
    assert first != second and first == storage_for("s3://prefix-test/other", {"REGION": "us-west-2"})
    assert first.within("s3://prefix-test/deep/table/.hoodie").options == first.options
    assert storage_for("s3://other/deep").options == {}


def test_object_store_spellings_of_options_reach_pyarrow(s3):
    location = "s3://lake/spellings"
    store = storage_for(location, {"aws_access_key_id": s3.access_key, "aws_secret_access_key": s3.secret_key,
                                   "aws_endpoint_url": s3.endpoint, "aws_region": "us-east-1"})
    assert isinstance(store, RemoteStorage)
    system, path = store.filesystem(location + "/x.bin")
    assert isinstance(system, pafs.S3FileSystem) and path == "lake/spellings/x.bin"
    store.write_atomically(location + "/x.bin", b"abc")
    assert system.get_file_info(path).size == 3 and store.file_size(location + "/x.bin") == 3


def test_options_from_the_aws_environment(s3, monkeypatch):
    for name, value in s3.environment().items():
        monkeypatch.setenv(name, value)
    store = storage_for("s3://lake/from-env")
    store.write_atomically("s3://lake/from-env/y.bin", b"abcd")
    assert store.read_bytes("s3://lake/from-env/y.bin") == b"abcd"


def test_unknown_or_half_credentials_are_refused_and_secrets_redacted():
    with pytest.raises(InvalidArgumentError, match="unknown S3 storage option 'acess_key'"):
        storage_for("s3://refused/a", {"acess_key": "x"}).exists("s3://refused/a/f")
    with pytest.raises(InvalidArgumentError, match="both an access key and a secret key"):
        storage_for("s3://refused/b", {"access_key": "x"}).exists("s3://refused/b/f")
    assert redacted({"aws_secret_access_key": "s", "region": "r"}) == {"aws_secret_access_key": "***", "region": "r"}
    assert "x" not in repr(storage_for("s3://refused/c", {"access_key": "x", "secret_key": "xx"}))
