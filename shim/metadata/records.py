"""Metadata table records (`HoodieMetadataRecord`, Avro) and the values read from them.

A record has a `key`, a `type` and one payload field per type: `filesystemMetadata` (types 1,
the partition list, and 2, a partition's files: name -> size and a deleted flag),
`ColumnStatsMetadata` (3, column stats; 6, partition stats), `BloomFilterMetadata` (4),
`recordIndexMetadata` (5), `SecondaryIndexMetadata` (7). Values are decoded with the schema their
file names (an HFile base file's `schema` file info entry, a log block's SCHEMA header), so older
and newer layouts of the record both read. HFiles store the key once, as the HFile key: the
record's own `key` field is then empty.

Column stats' min and max are "wrapped" (`IntWrapper`, `StringWrapper`, `DecimalWrapper`, ...)
to fit one Avro union. Hudi 1.1+ also writes `valueType` (Hudi's `ValueType` ordinal, and the
precision and scale of decimals) and wraps values in their primitive form (decimals as unscaled
big-endian bytes, dates as days, timestamps as longs); `logical_value` turns either form into the
Python value the column holds (`Decimal`, `date`, `datetime`, `time`, `UUID`).
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

WrappedValue = (int | float | str | bytes | bool | Decimal | datetime.date | datetime.datetime | datetime.time | uuid.UUID
                | list[Any] | None)


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

    `min_value`/`max_value` are the column's values (`logical_value`); None when the file holds
    only nulls (Hudi 1.2 then stores the type's zero, which no footer says). `value_type` names Hudi's wrapper (`IntWrapper`, `BytesWrapper`, ...);
    `value_type_info` is Hudi 1.1+'s `valueType` (type ordinal and extra information)."""

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
    info = raw.get("valueType")
    low_type, low = unwrap(raw.get("minValue"))
    high_type, high = unwrap(raw.get("maxValue"))
    low, high = logical_value(low, low_type, info), logical_value(high, high_type, info)
    if raw.get("valueCount") is not None and raw.get("nullCount") == raw.get("valueCount"):
        low = high = None  # only nulls: Hudi 1.2 writes the type's zero (0, false, the epoch) as min and max
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


class ValueType(enum.IntEnum):
    """Hudi 1.1+'s `ValueType` ordinals (`valueType.typeOrdinal` of column stats)."""

    V1 = 0
    NULL = 1
    BOOLEAN = 2
    INT = 3
    LONG = 4
    FLOAT = 5
    DOUBLE = 6
    STRING = 7
    BYTES = 8
    FIXED = 9
    DECIMAL = 10
    UUID = 11
    DATE = 12
    TIME_MILLIS = 13
    TIME_MICROS = 14
    TIMESTAMP_MILLIS = 15
    TIMESTAMP_MICROS = 16
    TIMESTAMP_NANOS = 17
    LOCAL_TIMESTAMP_MILLIS = 18
    LOCAL_TIMESTAMP_MICROS = 19
    LOCAL_TIMESTAMP_NANOS = 20


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_BY_WRAPPER = {"DateWrapper": ValueType.DATE, "LocalDateWrapper": ValueType.DATE,
               "TimestampMicrosWrapper": ValueType.TIMESTAMP_MICROS, "TimeMicrosWrapper": ValueType.TIME_MICROS}
_UNITS = {ValueType.TIME_MILLIS: 1000, ValueType.TIME_MICROS: 1, ValueType.TIMESTAMP_MILLIS: 1000,
          ValueType.TIMESTAMP_MICROS: 1, ValueType.LOCAL_TIMESTAMP_MILLIS: 1000,
          ValueType.LOCAL_TIMESTAMP_MICROS: 1}


def logical_value(value: WrappedValue, wrapper: str | None, info: Mapping[str, Any] | None) -> WrappedValue:
    """A wrapped min or max as the column's value: by `valueType` when written (Hudi 1.1+),
    else by the wrapper (`DateWrapper` days, `TimestampMicrosWrapper` microseconds)."""
    if value is None:
        return None
    ordinal = int(info.get("typeOrdinal") or 0) if isinstance(info, Mapping) else 0
    kind = ValueType(ordinal) if ordinal in ValueType._value2member_map_ else ValueType.V1
    if kind is ValueType.V1:
        kind = _BY_WRAPPER.get(wrapper or "", ValueType.V1)
    if kind is ValueType.DECIMAL and isinstance(value, bytes | bytearray):
        scale = int(str((info or {}).get("additionalInfo") or "0,0").split(",")[-1])
        return Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-scale)
    if kind is ValueType.DATE and isinstance(value, int):
        return _EPOCH.date() + datetime.timedelta(days=value)
    if kind is ValueType.UUID and isinstance(value, bytes | bytearray) and len(value) == 16:
        return uuid.UUID(bytes=bytes(value))
    if not isinstance(value, int) or isinstance(value, bool):
        return value
    if kind in (ValueType.TIMESTAMP_NANOS, ValueType.LOCAL_TIMESTAMP_NANOS):
        micros = value // 1000
    elif kind in _UNITS:
        micros = value * _UNITS[kind]
    else:
        return value
    if kind in (ValueType.TIME_MILLIS, ValueType.TIME_MICROS):
        return (datetime.datetime.min + datetime.timedelta(microseconds=micros)).time()
    moment = _EPOCH + datetime.timedelta(microseconds=micros)
    return moment.replace(tzinfo=None) if kind.name.startswith("LOCAL_") else moment


def _shown(key: bytes | None) -> str:
    return "(no key)" if key is None else repr(key[:80].decode("utf-8", "replace"))
