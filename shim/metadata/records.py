"""Metadata table records (`HoodieMetadataRecord`, Avro) and the values read from them.

A record has a `key`, a `type` and one payload field per type: `filesystemMetadata` (types 1,
the partition list, and 2, a partition's files: name -> size and a deleted flag),
`ColumnStatsMetadata` (3, column stats; 6, partition stats), `BloomFilterMetadata` (4),
`recordIndexMetadata` (5), `SecondaryIndexMetadata` (7). Values are decoded with the schema their
file names (an HFile base file's `schema` file info entry, a log block's SCHEMA header), so older
and newer layouts of the record both read. HFiles store the key once, as the HFile key: the
record's own `key` field is then empty.

Column stats' min and max are "wrapped" (`IntWrapper`, `StringWrapper`, `DecimalWrapper`, ...)
to fit one Avro union; they are unwrapped here and the wrapper's name kept.
"""

from __future__ import annotations

import datetime
import enum
import io
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import fastavro

from shim.bloom import DynamicBloomFilter
from shim.errors import CorruptFileError

WrappedValue = int | float | str | bytes | bool | Decimal | datetime.time | list[Any] | None


class RecordType(enum.IntEnum):
    """The `type` of a metadata record (Hudi's `MetadataPartitionType.recordType`)."""

    ALL_PARTITIONS = 1
    FILES = 2
    COLUMN_STATS = 3
    BLOOM_FILTER = 4
    RECORD_INDEX = 5
    PARTITION_STATS = 6
    SECONDARY_INDEX = 7


@dataclass(frozen=True, slots=True)
class MetadataRecord:
    """One stored version of a key: the decoded Avro record, or a delete (`payload` None)."""

    key: str
    type: int
    payload: Mapping[str, Any] | None
    instant: str = ""  # the block or base file it came from (for messages)

    @property
    def is_delete(self) -> bool:
        """A delete block's entry: the key's earlier versions are gone."""
        return self.payload is None


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """A column's statistics in one file (`column_stats`) or one partition (`partition_stats`).

    `min_value`/`max_value` are unwrapped (`value_type` names Hudi's wrapper: `IntWrapper`,
    `LongWrapper`, `StringWrapper`, `DecimalWrapper`, `DateWrapper` (days), `TimestampMicrosWrapper`
    (a long), ...); None when the file holds only nulls. `value_type_info` is Hudi 1.1+'s
    `valueType` (type ordinal and extra information), when written."""

    file_name: str | None
    column_name: str
    min_value: WrappedValue
    max_value: WrappedValue
    value_type: str | None
    null_count: int | None
    value_count: int | None
    total_size: int | None
    total_uncompressed_size: int | None
    is_deleted: bool
    is_tight_bound: bool = False
    value_type_info: Mapping[str, Any] | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class RecordLocation:
    """Where the record index places a record key: partition, file group and the commit that
    wrote it there (`instant_millis`: epoch milliseconds, as Hudi stores it)."""

    partition: str
    file_id: str
    instant_millis: int | None
    position: int | None = None


@dataclass(frozen=True, slots=True)
class BloomFilterEntry:
    """A base file's record-key bloom filter as the `bloom_filters` partition keeps it."""

    type: str
    timestamp: str
    serialized: bytes
    is_deleted: bool

    def parse(self) -> DynamicBloomFilter:
        """The filter, to test keys against (ValueError for a type other than DYNAMIC_V0)."""
        return DynamicBloomFilter.parse(self.serialized)


class ValueDecoder:
    """Decodes Avro values written with one schema into `MetadataRecord`s."""

    def __init__(self, schema_text: str | bytes, path: str) -> None:
        self.path = path
        try:
            self._schema = fastavro.parse_schema(json.loads(schema_text))
        except (ValueError, TypeError, KeyError) as exc:
            raise CorruptFileError(f"{path}: the metadata record schema does not parse: {exc}", path=path) from exc

    def decode(self, key: bytes | None, value: bytes, instant: str, offset: int | None = None) -> MetadataRecord:
        """The record stored under HFile key `key` (None: the record names its own key)."""
        stream = io.BytesIO(value)
        try:
            record = fastavro.schemaless_reader(stream, self._schema, return_record_name=True,
                                                return_record_name_override=True)
        except Exception as exc:  # noqa: BLE001 - fastavro raises whatever the bytes provoke
            raise CorruptFileError(f"{self.path}: metadata record {_shown(key)} does not decode: {exc}",
                                   path=self.path, offset=offset) from None
        if stream.tell() != len(value) or not isinstance(record, dict):
            raise CorruptFileError(f"{self.path}: metadata record {_shown(key)} decodes to {stream.tell()} of its "
                                   f"{len(value)} bytes", path=self.path, offset=offset)
        stored = record.get("key") or ""
        text = key.decode("utf-8", "replace") if key is not None and not stored else str(stored)
        kind = record.get("type")
        if not isinstance(kind, int):
            raise CorruptFileError(f"{self.path}: metadata record {text!r} has no type", path=self.path, offset=offset)
        return MetadataRecord(text, kind, record, instant)


def file_entries(record: MetadataRecord) -> dict[str, tuple[int, bool]]:
    """A files record's map: file (or partition) name -> (size, deleted)."""
    if record.payload is None:
        return {}
    raw = record.payload.get("filesystemMetadata") or {}
    return {str(name): (int(info.get("size") or 0), bool(info.get("isDeleted"))) for name, info in raw.items()}


def column_stats(record: MetadataRecord) -> ColumnStats | None:
    """The column stats of a type 3 or 6 record."""
    raw = None if record.payload is None else record.payload.get("ColumnStatsMetadata")
    if raw is None:
        return None
    low_type, low = unwrap(raw.get("minValue"))
    high_type, high = unwrap(raw.get("maxValue"))
    return ColumnStats(
        file_name=raw.get("fileName"), column_name=str(raw.get("columnName") or ""),
        min_value=low, max_value=high, value_type=low_type or high_type,
        null_count=raw.get("nullCount"), value_count=raw.get("valueCount"), total_size=raw.get("totalSize"),
        total_uncompressed_size=raw.get("totalUncompressedSize"), is_deleted=bool(raw.get("isDeleted")),
        is_tight_bound=bool(raw.get("isTightBound")), value_type_info=raw.get("valueType"))


def record_location(record: MetadataRecord) -> RecordLocation | None:
    """The location of a record index record: the file id from its UUID halves and index
    (encoding 0) or as written (encoding 1)."""
    raw = None if record.payload is None else record.payload.get("recordIndexMetadata")
    if raw is None:
        return None
    partition = str(raw.get("partitionName") or raw.get("partition") or "")
    if int(raw.get("fileIdEncoding") or 0) == 1:
        file_id = str(raw.get("fileId") or "")
    else:
        high, low = int(raw.get("fileIdHighBits") or 0), int(raw.get("fileIdLowBits") or 0)
        file_id = str(uuid.UUID(int=((high & (2**64 - 1)) << 64) | (low & (2**64 - 1))))
        index = raw.get("fileIndex")
        if index is not None and int(index) != -1:
            file_id += f"-{int(index)}"
    instant = raw.get("instantTime")
    position = raw.get("position")
    return RecordLocation(partition, file_id, None if instant is None else int(instant),
                          None if position is None else int(position))


def bloom_filter_entry(record: MetadataRecord) -> BloomFilterEntry | None:
    """The bloom filter of a type 4 record."""
    raw = None if record.payload is None else record.payload.get("BloomFilterMetadata")
    if raw is None:
        return None
    return BloomFilterEntry(str(raw.get("type") or ""), str(raw.get("timestamp") or ""),
                            bytes(raw.get("bloomFilter") or b""), bool(raw.get("isDeleted")))


def is_tombstone(record: MetadataRecord) -> bool:
    """Whether a merged record stands for nothing: a delete, or a payload flagged deleted."""
    if record.payload is None:
        return True
    for name in ("ColumnStatsMetadata", "BloomFilterMetadata", "SecondaryIndexMetadata"):
        inner = record.payload.get(name)
        if isinstance(inner, Mapping) and inner.get("isDeleted"):
            return True
    return False


def unwrap(wrapped: Any) -> tuple[str | None, WrappedValue]:
    """(wrapper name, value) of a wrapped min or max value; (None, None) for null."""
    if wrapped is None:
        return None, None
    if isinstance(wrapped, tuple) and len(wrapped) == 2:
        name, inner = wrapped
        short = str(name).rsplit(".", 1)[-1]
        value = inner.get("value") if isinstance(inner, Mapping) else inner
        if short == "ArrayWrapper" and isinstance(inner, Mapping):
            value = [unwrap(item)[1] for item in inner.get("wrappedValues") or ()]
        return short, value
    if isinstance(wrapped, Mapping):  # a union of one record type
        return None, wrapped.get("value")
    return None, wrapped


def _shown(key: bytes | None) -> str:
    return "(no key)" if key is None else repr(key[:80].decode("utf-8", "replace"))
