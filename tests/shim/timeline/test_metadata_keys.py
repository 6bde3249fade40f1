"""Commit metadata keys as Hudi spells them: the InternalSchema of a schema-on-read commit is
`extraMetadata.latest_schema` (Hudi's `SerDeHelper.LATEST_SCHEMA`); `latestSchema`, which this
project's writer used before, is still read."""

from __future__ import annotations

from shim.timeline.metadata import LATEST_SCHEMA_KEY, CommitMetadata

SCHEMA = '{"max_column_id":5,"version_id":1,"type":"record","fields":[{"id":5,"name":"a","optional":true,"type":"int"}]}'


def test_latest_schema_is_read_under_hudis_key():
    assert LATEST_SCHEMA_KEY == "latest_schema"
    metadata = CommitMetadata.from_dict({"extraMetadata": {"latest_schema": SCHEMA, "schema": "{}"}})
    assert metadata.latest_schema == SCHEMA


def test_latest_schema_under_the_old_key_is_still_read_and_hudis_wins():
    assert CommitMetadata.from_dict({"extraMetadata": {"latestSchema": SCHEMA}}).latest_schema == SCHEMA
    both = CommitMetadata.from_dict({"extraMetadata": {"latestSchema": "old", "latest_schema": SCHEMA}})
    assert both.latest_schema == SCHEMA
    assert CommitMetadata.from_dict({"extraMetadata": {"schema": "{}"}}).latest_schema is None
