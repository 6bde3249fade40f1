"""Conditional writes on real S3-compatible servers: moto honours them, s3proxy 2.6.0 ignores them,
and the probe tells the two apart (once per store)."""

from __future__ import annotations

import logging
import uuid

import pytest

from shim.errors import InvalidArgumentError
from shim.storage import LocalStorage, RemoteStorage, storage_for
from shim.storage.conditional import ConditionalWritesError, Version
from tests.s3tap import S3Tap
from tests.writekit import write


def location(server, name: str, **extra: str) -> RemoteStorage:
    """The storage of a fresh location on `server`, with its options and `extra`."""
    store = storage_for(f"s3://lake/{name}-{uuid.uuid4().hex[:8]}", {**server.storage_options(), **extra})
    assert isinstance(store, RemoteStorage)
    return store


def test_support_on_a_store_honouring_conditional_writes_is_found_and_used(moto_s3):
    store = location(moto_s3, "honoured")
    uri, writes = store.root, store.conditional
    assert writes.support(uri).honoured
    assert writes.enabled(uri)
    name = f"{uri}/.hoodie/001.commit.requested"
    first = writes.create(name, b"first")
    assert first is not None
    assert writes.create(name, b"second") is None
    assert writes.read(name) == (b"first", first)
    assert writes.replace(name, b"other", Version('"0123456789abcdef0123456789abcdef"', None)) is None
    second = writes.replace(name, b"replaced", first)
    assert second is not None and second != first
    assert writes.replace(name, b"stale", first) is None, "a replace on a version replaced since"
    assert writes.read(name) == (b"replaced", second)
    assert store.write_new(f"{uri}/.hoodie/002.commit", b"{}")
    assert not store.write_new(f"{uri}/.hoodie/002.commit", b"{}")
    assert store.create_if_absent(f"{uri}/a.log", [b"ab", b"c"])
    assert not store.create_if_absent(f"{uri}/a.log", [b"d"])
    assert store.read_bytes(f"{uri}/a.log") == b"abc"


def test_a_store_that_ignores_if_none_match_is_detected(s3, caplog):
    store = location(s3, "ignored")
    uri = store.root
    verdict = store.conditional.support(uri)
    assert not verdict.honoured
    assert "If-None-Match" in verdict.reason
    with caplog.at_level(logging.WARNING, logger="shim.storage.conditional"):
        assert not store.conditional.enabled(uri)  # auto: one writer at a time, said once per store
        assert not location(s3, "ignored-again").conditional.enabled(f"{uri}/.hoodie/x")
    warnings = [r.getMessage() for r in caplog.records if "cannot make writes conditional" in r.getMessage()]
    assert len(warnings) == 1 and "one machine" in warnings[0]
    assert store.write_new(f"{uri}/x", b"1") and not store.write_new(f"{uri}/x", b"2")  # the fallback

    required = f"s3://lake/required-{uuid.uuid4().hex[:8]}"
    options = {f"storage.{k}": str(v) for k, v in {**s3.storage_options(), "conditional_writes": "required"}.items()}
    with pytest.raises(ConditionalWritesError, match="cannot make writes conditional.*If-None-Match"):
        write(required, [{"id": "k1", "ts": 1, "region": "eu", "fare": 1.0}], **options)
    written = storage_for(required, s3.storage_options())
    assert [files for _, _, files in written.walk(required) if files] == [], \
        "refused before anything was written (the probe's object removed: a folder marker may stay)"
    off = location(s3, "off", conditional_writes="OFF")
    assert not off.conditional.enabled(off.root)


def test_the_store_is_probed_once(moto_s3):
    tap = S3Tap(moto_s3.endpoint).start()
    try:
        store = location(moto_s3, "probed", endpoint_override=tap.endpoint)
        uri = store.root
        assert store.conditional.support(uri).honoured
        probe = tap.counts.snapshot()
        assert probe["PUT"] == 3 and probe.get("DELETE", 0) + probe.get("POST", 0) == 1, probe  # and the cleanup
        tap.counts.reset()
        assert store.conditional.enabled(f"{uri}/elsewhere/x") and store.conditional.support(uri).honoured
        other = storage_for("s3://lake/another-table", store.options)  # the same store, reached alike
        assert isinstance(other, RemoteStorage) and other.conditional.enabled("s3://lake/another-table/x")
        assert tap.counts.snapshot()["requests"] == 0
    finally:
        tap.stop()


def test_an_unknown_mode_is_refused(moto_s3):
    with pytest.raises(InvalidArgumentError, match="conditional_writes='maybe'.*auto, required, off"):
        location(moto_s3, "bad", conditional_writes="maybe")


def test_write_new_in_a_local_folder_creates_once_and_leaves_no_temporary_file(tmp_path):
    target, store = str(tmp_path / "001.commit"), LocalStorage(str(tmp_path))
    assert store.write_new(target, b"first")
    assert not store.write_new(target, b"second")
    assert (tmp_path / "001.commit").read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == ["001.commit"]
