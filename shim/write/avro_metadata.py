"""Avro timeline records of table version 6: rollback plans and metadata, compaction plans,
cleaner plans and clean metadata.

The schemas are those of Hudi 0.14/0.15 (`HoodieRollbackPlan`, `HoodieRollbackMetadata`,
`HoodieCompactionPlan`, `HoodieCleanerPlan`, `HoodieCleanMetadata`, namespace `org.apache.hudi.avro.model`); files are single-record Avro
containers without compression, as `TimelineMetadataUtils.serializeAvroMetadata` writes them.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import fastavro

_NS = "org.apache.hudi.avro.model"
_STRING_ARRAY = {"type": "array", "items": "string"}
_LONG_MAP = {"type": "map", "values": "long"}

INSTANT_INFO: dict[str, Any] = {
    "type": "record",
    "name": "HoodieInstantInfo",
    "namespace": _NS,
    "fields": [{"name": "commitTime", "type": "string"}, {"name": "action", "type": "string"}],
}

ROLLBACK_PLAN: dict[str, Any] = {
    "type": "record",
    "name": "HoodieRollbackPlan",
    "namespace": _NS,
    "fields": [
        {"name": "instantToRollback", "type": ["null", INSTANT_INFO], "default": None},
        {
            "name": "RollbackRequests",
            "type": [
                "null",
                {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "HoodieRollbackRequest",
                        "fields": [
                            {"name": "partitionPath", "type": "string"},
                            {"name": "fileId", "type": ["null", "string"], "default": None},
                            {"name": "latestBaseInstant", "type": ["null", "string"], "default": None},
                            {"name": "filesToBeDeleted", "type": _STRING_ARRAY, "default": []},
                            {"name": "logBlocksToBeDeleted", "type": ["null", _LONG_MAP], "default": None},
                        ],
                    },
                },
            ],
            "default": None,
        },
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

ROLLBACK_METADATA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieRollbackMetadata",
    "namespace": _NS,
    "fields": [
        {"name": "startRollbackTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "commitsRollback", "type": _STRING_ARRAY},
        {
            "name": "partitionMetadata",
            "type": {
                "type": "map",
                "values": {
                    "type": "record",
                    "name": "HoodieRollbackPartitionMetadata",
                    "fields": [
                        {"name": "partitionPath", "type": "string"},
                        {"name": "successDeleteFiles", "type": _STRING_ARRAY},
                        {"name": "failedDeleteFiles", "type": _STRING_ARRAY},
                        {"name": "rollbackLogFiles", "type": ["null", _LONG_MAP], "default": None},
                        {"name": "logFilesFromFailedCommit", "type": ["null", _LONG_MAP], "default": None},
                    ],
                },
            },
        },
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "instantsRollback", "type": {"type": "array", "items": INSTANT_INFO}, "default": []},
    ],
}

COMPACTION_PLAN: dict[str, Any] = {
    "type": "record",
    "name": "HoodieCompactionPlan",
    "namespace": _NS,
    "fields": [
        {
            "name": "operations",
            "type": [
                "null",
                {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "HoodieCompactionOperation",
                        "fields": [
                            {"name": "baseInstantTime", "type": ["null", "string"]},
                            {"name": "deltaFilePaths", "type": ["null", _STRING_ARRAY], "default": None},
                            {"name": "dataFilePath", "type": ["null", "string"], "default": None},
                            {"name": "fileId", "type": ["null", "string"]},
                            {"name": "partitionPath", "type": ["null", "string"], "default": None},
                            {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
                            {"name": "bootstrapFilePath", "type": ["null", "string"], "default": None},
                        ],
                    },
                },
            ],
            "default": None,
        },
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {
            "name": "strategy",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "HoodieCompactionStrategy",
                    "fields": [
                        {"name": "compactorClassName", "type": ["null", "string"], "default": None},
                        {"name": "strategyParams", "type": ["null", {"type": "map", "values": "string"}],
                         "default": None},
                        {"name": "version", "type": ["int", "null"], "default": 1},
                    ],
                },
            ],
            "default": None,
        },
        {"name": "preserveHoodieMetadata", "type": ["boolean", "null"], "default": False},
    ],
}

_STRING_MAP = {"type": "map", "values": "string"}

CLEANER_PLAN: dict[str, Any] = {
    "type": "record",
    "name": "HoodieCleanerPlan",
    "namespace": _NS,
    "fields": [
        {
            "name": "earliestInstantToRetain",
            "type": ["null", {
                "type": "record",
                "name": "HoodieActionInstant",
                "fields": [
                    {"name": "timestamp", "type": "string"},
                    {"name": "action", "type": "string"},
                    {"name": "state", "type": "string"},
                ],
            }],
            "default": None,
        },
        {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
        {"name": "policy", "type": "string"},
        {"name": "filesToBeDeletedPerPartition", "type": ["null", {"type": "map", "values": _STRING_ARRAY}],
         "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {
            "name": "filePathsToBeDeletedPerPartition",
            "type": ["null", {
                "type": "map",
                "values": {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "HoodieCleanFileInfo",
                        "fields": [
                            {"name": "filePath", "type": ["null", "string"], "default": None},
                            {"name": "isBootstrapBaseFile", "type": ["null", "boolean"], "default": None},
                        ],
                    },
                },
            }],
            "default": None,
        },
        {"name": "partitionsToBeDeleted", "type": ["null", _STRING_ARRAY], "default": None},
        {"name": "extraMetadata", "type": ["null", _STRING_MAP], "default": None},
    ],
}

_CLEAN_PARTITION_METADATA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieCleanPartitionMetadata",
    "namespace": _NS,
    "fields": [
        {"name": "partitionPath", "type": "string"},
        {"name": "policy", "type": "string"},
        {"name": "deletePathPatterns", "type": _STRING_ARRAY},
        {"name": "successDeleteFiles", "type": _STRING_ARRAY},
        {"name": "failedDeleteFiles", "type": _STRING_ARRAY},
        {"name": "isPartitionDeleted", "type": ["null", "boolean"], "default": None},
    ],
}

CLEAN_METADATA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieCleanMetadata",
    "namespace": _NS,
    "fields": [
        {"name": "startCleanTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "earliestCommitToRetain", "type": "string"},
        {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
        {"name": "partitionMetadata", "type": {"type": "map", "values": _CLEAN_PARTITION_METADATA}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "bootstrapPartitionMetadata",
         "type": ["null", {"type": "map", "values": "HoodieCleanPartitionMetadata"}], "default": None},
        {"name": "extraMetadata", "type": ["null", _STRING_MAP], "default": None},
    ],
}


def encode_avro_record(schema: Mapping[str, Any], record: Mapping[str, Any]) -> bytes:
    """A one-record Avro container file (no codec), as Hudi writes timeline metadata."""
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(dict(schema)), [dict(record)], codec="null")
    return out.getvalue()


def decode_avro_record(data: bytes) -> dict[str, Any]:
    """The first record of an Avro container file ({} for an empty file)."""
    if not data:
        return {}
    for record in fastavro.reader(io.BytesIO(data)):
        return dict(record)  # type: ignore[arg-type]
    return {}


_WRITE_STAT_LONGS = ("numWrites", "numDeletes", "numUpdateWrites", "totalWriteBytes", "totalWriteErrors")
_WRITE_STAT_LOG_LONGS = ("totalLogRecords", "totalLogFiles", "totalUpdatedRecordsCompacted", "numInserts",
                         "totalLogBlocks", "totalCorruptLogBlock", "totalRollbackBlocks", "fileSizeInBytes")


def _optional(name: str, kind: str) -> dict[str, Any]:
    return {"name": name, "type": ["null", kind], "default": None}


WRITE_STAT: dict[str, Any] = {
    "type": "record",
    "name": "HoodieWriteStat",
    "namespace": _NS,
    "fields": [
        *(_optional(name, "string") for name in ("fileId", "path", "prevCommit", "prevFilePathOverwritten")),
        *(_optional(name, "long") for name in _WRITE_STAT_LONGS),
        _optional("partitionPath", "string"),
        *(_optional(name, "long") for name in _WRITE_STAT_LOG_LONGS),
    ],
}
"""One file's write statistics, as the archived timeline stores commit metadata."""

_WRITE_STATS_BY_PARTITION = {
    "name": "partitionToWriteStats",
    "type": ["null", {"type": "map", "values": {"type": "array", "items": WRITE_STAT}}],
    "default": None,
}
_EXTRA_METADATA = {"name": "extraMetadata", "type": ["null", _STRING_MAP], "default": None}
_VERSION = {"name": "version", "type": ["int", "null"], "default": 1}

COMMIT_METADATA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieCommitMetadata",
    "namespace": _NS,
    "fields": [_WRITE_STATS_BY_PARTITION, _EXTRA_METADATA, _VERSION, _optional("operationType", "string"),
               _optional("compacted", "boolean")],
}

REPLACE_COMMIT_METADATA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieReplaceCommitMetadata",
    "namespace": _NS,
    "fields": [
        _WRITE_STATS_BY_PARTITION, _EXTRA_METADATA, _VERSION, _optional("operationType", "string"),
        {"name": "partitionToReplaceFileIds", "type": ["null", {"type": "map", "values": _STRING_ARRAY}],
         "default": None},
    ],
}

ARCHIVED_META_ENTRY: dict[str, Any] = {
    "type": "record",
    "name": "HoodieArchivedMetaEntry",
    "namespace": _NS,
    "fields": [
        {"name": "hoodieCommitMetadata", "type": ["null", COMMIT_METADATA], "default": None},
        {"name": "hoodieCleanMetadata", "type": ["null", CLEAN_METADATA], "default": None},
        {"name": "hoodieRollbackMetadata", "type": ["null", ROLLBACK_METADATA], "default": None},
        _optional("commitTime", "string"),
        _optional("actionType", "string"),
        _VERSION,
        {"name": "hoodieCompactionPlan", "type": ["null", COMPACTION_PLAN], "default": None},
        {"name": "hoodieCleanerPlan", "type": ["null", CLEANER_PLAN], "default": None},
        _optional("actionState", "string"),
        {"name": "hoodieReplaceCommitMetadata", "type": ["null", REPLACE_COMMIT_METADATA], "default": None},
        {"name": "HoodieInflightReplaceMetadata", "type": ["null", "HoodieCommitMetadata"], "default": None},
    ],
}
"""One instant file of the archived timeline (`.hoodie/archived/.commits_.archive.N_1-0-1`): the
fields Hudi's archiver sets for the actions this writer produces, in Hudi's order; the fields left
out (savepoints, deprecated compaction metadata, requested replace plans, index metadata) are
null-defaulted unions, which Avro schema resolution fills in for a reader holding Hudi's full
schema (checked against Hudi's .avsc files with fastavro and Avro Java)."""
