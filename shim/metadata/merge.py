"""Merging the versions of one metadata key, as Hudi's `HoodieMetadataPayload.preCombine` does.

A delete replaces what came before, and a record after a delete stands alone. Otherwise, by type:
- files and the partition list: the file maps combine. A name only in the newer record is taken
  as it is (a deletion flag included, so a later merge still removes the file); a name in both is
  removed when the newer marks it deleted (kept, flagged, when both do), else it takes the larger
  size (`combineFileSystemMetadata`);
- column and partition stats: a deleted record on either side, or a tight-bound newer one,
  replaces; else min of the mins, max of the maxes, counts and sizes added
  (`mergeColumnStatsRecords`);
- bloom filters, the record index, secondary indexes: the newer replaces.

Hudi merges in two stages: the log records of a key in log order, then the base file's record
with the result (the base as the older side); `merge_versions` does the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shim.errors import InvalidTableError
from shim.metadata.records import MetadataRecord, RecordType, logical_value, unwrap

_FILE_MAPS = (RecordType.ALL_PARTITIONS, RecordType.FILES)
_STATS = (RecordType.COLUMN_STATS, RecordType.PARTITION_STATS)


def merge_versions(base: MetadataRecord | None, logs: Sequence[MetadataRecord]) -> MetadataRecord | None:
    """The key's record: its log versions combined in order, then the base version with them."""
    merged: MetadataRecord | None = None
    for record in logs:
        merged = record if merged is None else combine(merged, record)
    if base is None:
        return merged
    return base if merged is None else combine(base, merged)


def combine(older: MetadataRecord, newer: MetadataRecord) -> MetadataRecord:
    """`newer.preCombine(older)`."""
    if newer.payload is None or older.payload is None:
        return newer
    if older.type != newer.type:
        raise InvalidTableError(f"metadata key {newer.key!r}: a type {newer.type} record (instant {newer.instant}) "
                                f"cannot combine with the type {older.type} record before it", instant=newer.instant)
    if newer.type in _FILE_MAPS:
        files = _combine_files(older.payload.get("filesystemMetadata"), newer.payload.get("filesystemMetadata"))
        return MetadataRecord(newer.key, newer.type, {**newer.payload, "filesystemMetadata": files}, newer.instant)
    if newer.type in _STATS:
        stats = _combine_stats(older.payload.get("ColumnStatsMetadata"), newer.payload.get("ColumnStatsMetadata"),
                               newer)
        return MetadataRecord(newer.key, newer.type, {**newer.payload, "ColumnStatsMetadata": stats}, newer.instant)
    return newer


def _combine_files(older: Mapping[str, Any] | None, newer: Mapping[str, Any] | None) -> dict[str, Any]:
    combined: dict[str, Any] = dict(older or {})
    for name, info in (newer or {}).items():
        previous = combined.get(name)
        if previous is None:
            combined[name] = info
        elif info.get("isDeleted"):
            if previous.get("isDeleted"):
                combined[name] = info
            else:
                del combined[name]
        else:
            combined[name] = {"size": max(int(info.get("size") or 0), int(previous.get("size") or 0)),
                              "isDeleted": False}
    return combined


def _combine_stats(older: Mapping[str, Any] | None, newer: Mapping[str, Any] | None,
                   record: MetadataRecord) -> Mapping[str, Any] | None:
    if older is None or newer is None:
        raise InvalidTableError(f"metadata key {record.key!r}: a stats record without its stats", instant=record.instant)
    if newer.get("isDeleted") or older.get("isDeleted") or newer.get("isTightBound"):
        return newer
    info = newer.get("valueType")
    low = _pick(older.get("minValue"), newer.get("minValue"), info, smaller=True)
    high = _pick(older.get("maxValue"), newer.get("maxValue"), info, smaller=False)
    merged = dict(newer)
    merged.update(minValue=low, maxValue=high)
    for name in ("valueCount", "nullCount", "totalSize", "totalUncompressedSize"):
        merged[name] = int(older.get(name) or 0) + int(newer.get(name) or 0)
    return merged


def _pick(first: Any, second: Any, info: Any, smaller: bool) -> Any:
    """The smaller (or larger) of two wrapped values, compared as the column's values (an
    unscaled decimal's bytes do not compare as bytes), nulls ignored; the newer one on a tie or
    where they do not compare (wrappers of different types, which Hudi promotes first)."""
    a: Any = _logical(first, info)
    b: Any = _logical(second, info)
    if a is None:
        return second
    if b is None:
        return first
    try:
        return first if (a < b if smaller else a > b) else second
    except TypeError:
        return second


def _logical(wrapped: Any, info: Any) -> Any:
    wrapper, value = unwrap(wrapped)
    return logical_value(value, wrapper, info)
