"""Our Avro timeline schemas against files Apache Hudi wrote (rollback, compaction plan)."""

from __future__ import annotations

import io

import fastavro
import pytest

from shim.write.avro_metadata import (
    COMPACTION_PLAN,
    ROLLBACK_METADATA,
    ROLLBACK_PLAN,
    decode_avro_record,
    encode_avro_record,
)

pytestmark = pytest.mark.shared


def read_with(schema: dict, data: bytes) -> dict:
    """Decode a Hudi-written container with our schema as the reader schema (Avro resolution)."""
    return next(iter(fastavro.reader(io.BytesIO(data), reader_schema=fastavro.parse_schema(dict(schema)))))


def test_hudi_rollback_files_resolve_against_our_schemas(shared_tables):
    hoodie = shared_tables["sample__mor__parquet__v6_nonpartitioned_rollback"] / ".hoodie"
    metadata = read_with(ROLLBACK_METADATA, (hoodie / "20250126040936578.rollback").read_bytes())
    assert metadata["commitsRollback"] == ["20250126040826878"]
    assert metadata["instantsRollback"] == [{"commitTime": "20250126040826878", "action": "deltacommit"}]
    assert set(metadata["partitionMetadata"][""]) == {"partitionPath", "successDeleteFiles", "failedDeleteFiles",
                                                      "rollbackLogFiles", "logFilesFromFailedCommit"}
    plan = read_with(ROLLBACK_PLAN, (hoodie / "20250126040936578.rollback.requested").read_bytes())
    assert plan["instantToRollback"] == {"commitTime": "20250126040826878", "action": "deltacommit"}
    assert decode_avro_record(encode_avro_record(ROLLBACK_METADATA, metadata)) == metadata


def test_hudi_compaction_plan_resolves_against_our_schema(shared_tables):
    timeline = shared_tables["trips__mor__avro__v8_trips_8i3u1d"] / ".hoodie" / "timeline"
    plan = read_with(COMPACTION_PLAN, (timeline / "20251220210129235.compaction.requested").read_bytes())
    assert plan["version"] == 2 and len(plan["operations"]) == 3
    first = plan["operations"][0]
    assert first["partitionPath"] == "city=chennai" and first["deltaFilePaths"][0].startswith(".6e1d5cc4")
    assert decode_avro_record(encode_avro_record(COMPACTION_PLAN, plan)) == plan
