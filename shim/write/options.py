"""Writer options, under Hudi's own option names, parsed once at the edge.

Defaults are Hudi 0.14/0.15's (the releases that write table version 6), except where noted:
- `hoodie.index.type` defaults to BUCKET (Hudi: SIMPLE): the bucket index is the only index this
  writer implements, because it maps keys to file groups without reading the table.
- `hoodie.schema.on.read.enable` defaults to true (Hudi: false), so every commit records column ids.
- `hoodie.datasource.write.precombine.field` defaults to `ts` only when the data has a `ts` column
  (Hudi requires the default `ts` to exist for upserts).
- `hoodie.datasource.write.recordkey.field` has no default: Hudi 0.14's auto-generated keys are
  not supported.
- `hoodie.parquet.compression.codec` defaults to snappy, as in Hudi 1.x (Hudi 0.14/0.15: gzip,
  several times slower to write).
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from shim.errors import InvalidArgumentError, UnsupportedFeatureError
from shim.keys.partition_scheme import PartitionScheme
from shim.properties import TableConfig, TableType
from shim.schema import META_FIELD_NAMES
from shim.write.callback import CommitCallback
from shim.write.option_values import fields, flag, integer, text
from shim.write.parquet_settings import CODECS, DEFAULT_BLOCK_SIZE, DEFAULT_PARQUET, ParquetSettings
from shim.write.partitioning import (
    NewTablePartitioning,
    check_key_generator,
    new_table_partitioning,
    table_partitioning,
)
from shim.write.service_options import (
    AUTO_ARCHIVE,
    AUTO_CLEAN,
    ArchiveSettings,
    CleanSettings,
    InlineCompaction,
    archive_settings,
    clean_settings,
    inline_compaction,
)

TABLE_NAME = "hoodie.table.name"
DATABASE_NAME = "hoodie.database.name"
OPERATION = "hoodie.datasource.write.operation"
TABLE_TYPE = "hoodie.datasource.write.table.type"
RECORD_KEY = "hoodie.datasource.write.recordkey.field"
PRECOMBINE = "hoodie.datasource.write.precombine.field"
PARTITION_PATH = "hoodie.datasource.write.partitionpath.field"
HIVE_STYLE = "hoodie.datasource.write.hive_style_partitioning"
URL_ENCODE = "hoodie.datasource.write.partitionpath.urlencode"
KEYGEN_CLASS = "hoodie.datasource.write.keygenerator.class"
PAYLOAD_CLASS = "hoodie.datasource.write.payload.class"
PARTITIONS_TO_DELETE = "hoodie.datasource.write.partitions.to.delete"
DROP_PARTITION_COLUMNS = "hoodie.datasource.write.drop.partition.columns"
POPULATE_META_FIELDS = "hoodie.populate.meta.fields"
INDEX_TYPE = "hoodie.index.type"
BUCKET_ENGINE = "hoodie.index.bucket.engine"
NUM_BUCKETS = "hoodie.bucket.index.num.buckets"
BUCKET_HASH_FIELD = "hoodie.bucket.index.hash.field"
SCHEMA_ON_READ = "hoodie.schema.on.read.enable"
COMBINE_BEFORE_INSERT = "hoodie.combine.before.insert"
COMBINE_BEFORE_UPSERT = "hoodie.combine.before.upsert"
COMBINE_BEFORE_DELETE = "hoodie.combine.before.delete"
BLOOM_FILTER = "hoodie.parquet.bloom.filter.enabled"
PARQUET_CODEC = "hoodie.parquet.compression.codec"
PARQUET_DICTIONARY = "hoodie.parquet.dictionary.enabled"
PARQUET_BLOCK_SIZE = "hoodie.parquet.block.size"
LOG_BLOCK_FORMAT = "hoodie.logfile.data.block.format"
RECORD_POSITIONS = "hoodie.write.record.positions"
PARTIAL_UPDATE_SCHEMA = "hoodie.write.partial.update.schema"
MERGE_INTO_PARTIAL_UPDATES = "hoodie.spark.sql.merge.into.partial.updates"
HEARTBEAT_INTERVAL = "hoodie.client.heartbeat.interval_in_ms"
HEARTBEAT_MISSES = "hoodie.client.heartbeat.tolerable.misses"


OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT_NUM_BUCKETS = 256
DEFAULT_HEARTBEAT_MS = 60_000
DEFAULT_HEARTBEAT_MISSES = 2

_SUPPORTED_PAYLOADS = {
    "OverwriteWithLatestAvroPayload",
    "DefaultHoodieRecordPayload",
    "EventTimeAvroPayload",
}

class Operation(enum.Enum):
    """`hoodie.datasource.write.operation` values this writer performs."""

    INSERT = "insert"
    UPSERT = "upsert"
    DELETE = "delete"
    BULK_INSERT = "bulk_insert"
    INSERT_OVERWRITE = "insert_overwrite"
    INSERT_OVERWRITE_TABLE = "insert_overwrite_table"
    DELETE_PARTITION = "delete_partition"

    @classmethod
    def parse(cls, value: str) -> Operation:
        try:
            return cls(value.strip().lower())
        except ValueError:
            names = ", ".join(op.value for op in cls)
            raise InvalidArgumentError(f"{OPERATION}={value!r} is not supported; use one of {names}") from None

    @property
    def metadata_name(self) -> str:
        """The `operationType` Hudi records in commit metadata."""
        return self.value.upper()

    @property
    def replaces(self) -> bool:
        return self in (Operation.INSERT_OVERWRITE, Operation.INSERT_OVERWRITE_TABLE, Operation.DELETE_PARTITION)


@dataclass(frozen=True, slots=True)
class WriteOptions:
    """A write's settings, merged from the options given and the table's `hoodie.properties`."""

    table_name: str
    operation: Operation
    table_type: TableType
    record_key_fields: tuple[str, ...]
    ordering_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    hive_style: bool
    url_encode: bool
    payload_class: str
    num_buckets: int
    hash_fields: tuple[str, ...]
    schema_on_read: bool
    combine: bool
    heartbeat_interval_ms: int
    heartbeat_misses: int
    database: str = "default"
    bloom_filter: bool = True
    """Write Hudi's record-key bloom filter into base file footers (Hudi's bloom index needs it)."""
    auto_clean: bool = True
    """Clean after every commit (`hoodie.clean.automatic`), with `clean`'s retention."""
    clean: CleanSettings = field(default_factory=CleanSettings)
    parquet: ParquetSettings = DEFAULT_PARQUET
    """How base files and Parquet log blocks are encoded (`hoodie.parquet.*`)."""
    log_block_format: str = "avro"
    """`avro` or `parquet` data blocks in log files (`hoodie.logfile.data.block.format`)."""
    record_positions: bool = False
    """Write the base file rows a log block updates into its header (`hoodie.write.record.positions`):
    readers merge by position instead of reading and hashing keys. Hudi 1.x writes them by
    default into tables of version 8 and up only: the header keys are unknown to the Hudi 0.x
    readers of version-6 tables (Presto's Hudi connector fails on them), so this writer (version
    6) writes them when asked."""
    partial_columns: tuple[str, ...] = ()
    """Upserts of these columns only (`hoodie.write.partial.update.schema`, the Avro schema of
    the columns set; or `hoodie.spark.sql.merge.into.partial.updates=true` with data missing some
    table columns): merge-on-read log blocks flagged IS_PARTIAL, as Hudi writes a MERGE INTO
    ... UPDATE SET of some columns (which Hudi 0.x readers of version-6 tables cannot read).
    Empty: whole records."""
    inline_compaction: InlineCompaction = field(default_factory=InlineCompaction)
    """Compact (or schedule a compaction) after a merge-on-read commit (`hoodie.compact.inline*`)."""
    auto_archive: bool = True
    """Archive old instants after every commit (`hoodie.archive.automatic`), keeping `archive`'s."""
    archive: ArchiveSettings = field(default_factory=ArchiveSettings)
    partitioning: PartitionScheme = field(default_factory=PartitionScheme)
    """How rows map to partition paths (the key generator's fields, styles and date formats)."""
    new_table: NewTablePartitioning | None = None
    """For a write that creates the table: the key generator class and settings to record."""
    drop_partition_columns: bool = False
    """Keep partition columns out of data files and the schema (`hoodie.datasource.write.drop.partition.columns`):
    readers take them from the folder names, as strings."""
    callback: CommitCallback | None = None
    """Announce each completed commit with Hudi's HTTP commit callback (`hoodie.write.commit.callback.*`)."""
    partitions_to_delete: tuple[str, ...] = ()
    """delete_partition: the partition paths (`*` matches any characters) whose file groups it
    replaces; none given: the partitions of the rows written."""

    @property
    def heartbeat_timeout_s(self) -> float:
        """How old a heartbeat may be before its writer counts as failed."""
        return self.heartbeat_interval_ms * self.heartbeat_misses / 1000.0

    @classmethod
    def parse(
        cls, options: Mapping[str, str], columns: tuple[str, ...], existing: TableConfig | None = None
    ) -> WriteOptions:
        """Check the options against the incoming columns and, when the table exists, its config.

        Raises:
            InvalidArgumentError: a required option is missing, or a value is malformed or
                contradicts the existing table.
            UnsupportedFeatureError: the options ask for something this writer does not do.
        """
        _reject_unsupported(options)
        operation = Operation.parse(text(options, OPERATION, "upsert") or "upsert")
        is_mor = existing.is_mor if existing is not None else \
            _table_type(text(options, TABLE_TYPE, "COPY_ON_WRITE") or "COPY_ON_WRITE") is TableType.MERGE_ON_READ
        per_write: dict[str, Any] = {
            "auto_archive": flag(options, AUTO_ARCHIVE, True),
            "archive": archive_settings(options, is_mor=is_mor),
            "auto_clean": flag(options, AUTO_CLEAN, True),
            "clean": clean_settings(options),
            "parquet": parquet_settings(options),
            "log_block_format": _log_block_format(options),
            "record_positions": flag(options, RECORD_POSITIONS, False),
            "inline_compaction": inline_compaction(options),
            "callback": CommitCallback.parse(options),
        }
        if existing is not None:
            merged = dataclasses.replace(_merge_with_table(options, operation, columns, existing), **per_write)
            partial = _partial_columns(options, merged, columns, existing)
            return dataclasses.replace(merged, partial_columns=partial, combine=merged.combine and not partial)
        if _partial_asked(options):
            raise InvalidArgumentError(f"{PARTIAL_UPDATE_SCHEMA} / {MERGE_INTO_PARTIAL_UPDATES}: partial updates need "
                                       "an existing table to update; there is none at this path yet")
        if operation is Operation.DELETE_PARTITION:
            raise InvalidArgumentError("delete_partition needs an existing table: there is none at this path yet")
        name = text(options, TABLE_NAME) or text(options, "hoodie.datasource.write.table.name")
        if not name:
            raise InvalidArgumentError(f"option {TABLE_NAME} is required to create a table")
        keys = fields(text(options, RECORD_KEY))
        if not keys:
            raise InvalidArgumentError(
                f"option {RECORD_KEY} is required to create a table (auto-generated keys are not supported)"
            )
        table_type = _table_type(text(options, TABLE_TYPE, "COPY_ON_WRITE") or "COPY_ON_WRITE")
        ordering = fields(text(options, PRECOMBINE))
        if not ordering and "ts" in columns:
            ordering = ("ts",)
        hive_style, url_encode = flag(options, HIVE_STYLE, False), flag(options, URL_ENCODE, False)
        layout = new_table_partitioning(options, keys, hive_style=hive_style, url_encode=url_encode)
        partitions = layout.scheme.fields
        drop = flag(options, DROP_PARTITION_COLUMNS, False)
        if drop and (layout.scheme.timestamp_fields or any("." in f for f in partitions)):
            raise InvalidArgumentError(
                f"{DROP_PARTITION_COLUMNS}=true needs partition fields whose folder names spell their values: "
                "dates formatted from a column, or nested fields, could not be read back")
        _check_columns(keys + partitions, columns, operation)
        if text(options, PRECOMBINE) or operation is Operation.UPSERT:
            _check_columns(ordering, columns, operation)
        return cls(
            table_name=name,
            operation=operation,
            table_type=table_type,
            record_key_fields=keys,
            ordering_fields=ordering,
            partition_fields=partitions,
            hive_style=hive_style,
            url_encode=url_encode,
            payload_class=_payload(text(options, PAYLOAD_CLASS, OVERWRITE_PAYLOAD) or OVERWRITE_PAYLOAD),
            num_buckets=integer(options, NUM_BUCKETS, DEFAULT_NUM_BUCKETS),
            hash_fields=fields(text(options, BUCKET_HASH_FIELD)) or keys,
            schema_on_read=flag(options, SCHEMA_ON_READ, True),
            combine=_combine(options, operation),
            bloom_filter=flag(options, BLOOM_FILTER, True),
            heartbeat_interval_ms=integer(options, HEARTBEAT_INTERVAL, DEFAULT_HEARTBEAT_MS),
            heartbeat_misses=integer(options, HEARTBEAT_MISSES, DEFAULT_HEARTBEAT_MISSES),
            database=text(options, DATABASE_NAME, "default") or "default",
            partitioning=layout.scheme,
            new_table=layout,
            drop_partition_columns=drop,
            **per_write,
        )


def _merge_with_table(
    options: Mapping[str, str], operation: Operation, columns: tuple[str, ...], config: TableConfig
) -> WriteOptions:
    keys = config.record_key_fields
    given = fields(text(options, RECORD_KEY))
    if given and given != keys:
        raise InvalidArgumentError(
            f"{RECORD_KEY}={','.join(given)} differs from the table's record key {','.join(keys)}"
        )
    given_type = text(options, TABLE_TYPE)
    if given_type is not None and _table_type(given_type) is not config.table_type:
        raise InvalidArgumentError(
            f"{TABLE_TYPE}={given_type} differs from the table's type {config.table_type.value}"
        )
    partitions = config.partition_fields if config.is_partitioned else ()
    given_parts = tuple(p.split(":", 1)[0].strip() for p in fields(text(options, PARTITION_PATH)))
    if given_parts and given_parts != partitions:
        raise InvalidArgumentError(
            f"{PARTITION_PATH}={','.join(given_parts)} differs from the table's partition fields "
            f"{','.join(partitions) or '(none)'}"
        )
    if config.version != 6:
        raise UnsupportedFeatureError(
            f"{config.path}: the writer writes table version 6; this table is version {config.version}",
            feature=f"write-table-version-{config.version}",
        )
    if not config.populate_meta_fields:
        raise UnsupportedFeatureError(
            f"{config.path}: writing tables without meta fields is not supported", feature="write-table-layout")
    given_drop = text(options, DROP_PARTITION_COLUMNS)
    if given_drop is not None and flag(options, DROP_PARTITION_COLUMNS, False) != config.drop_partition_columns:
        raise InvalidArgumentError(
            f"{DROP_PARTITION_COLUMNS}={given_drop} differs from the table's "
            f"{str(config.drop_partition_columns).lower()}")
    ordering = config.ordering_fields
    to_delete = fields(text(options, PARTITIONS_TO_DELETE)) if operation is Operation.DELETE_PARTITION else ()
    if operation is Operation.DELETE_PARTITION and not config.is_partitioned:
        raise InvalidArgumentError(f"delete_partition needs a partitioned table; {config.path} is not partitioned")
    if not to_delete:  # the rows' own keys and partitions are needed
        _check_columns((partitions if operation is Operation.DELETE_PARTITION else keys + partitions), columns,
                       operation)
    if operation is Operation.UPSERT:
        _check_columns(ordering, columns, operation)
    num_buckets = integer(options, NUM_BUCKETS, int(config.get(NUM_BUCKETS) or DEFAULT_NUM_BUCKETS))
    recorded = config.get(NUM_BUCKETS)
    if recorded is not None and int(recorded) != num_buckets:
        raise InvalidArgumentError(
            f"{NUM_BUCKETS}={num_buckets} differs from the table's bucket count {recorded}; the bucket "
            "count of a table cannot change"
        )
    return WriteOptions(
        table_name=config.name,
        operation=operation,
        table_type=config.table_type,
        record_key_fields=keys,
        ordering_fields=ordering,
        partition_fields=partitions,
        hive_style=config.hive_style_partitioning,
        url_encode=config.url_encode_partitioning,
        payload_class=_payload(config.payload_class or OVERWRITE_PAYLOAD),
        num_buckets=num_buckets,
        hash_fields=fields(text(options, BUCKET_HASH_FIELD) or config.get(BUCKET_HASH_FIELD)) or keys,
        schema_on_read=flag(options, SCHEMA_ON_READ, True),
        combine=_combine(options, operation),
        bloom_filter=flag(options, BLOOM_FILTER, True),
        heartbeat_interval_ms=integer(options, HEARTBEAT_INTERVAL, DEFAULT_HEARTBEAT_MS),
        heartbeat_misses=integer(options, HEARTBEAT_MISSES, DEFAULT_HEARTBEAT_MISSES),
        database=config.get("hoodie.database.name", "default") or "default",
        partitioning=table_partitioning(options, config),
        partitions_to_delete=to_delete,
        drop_partition_columns=config.drop_partition_columns,
    )


def parquet_settings(options: Mapping[str, str]) -> ParquetSettings:
    """Codec, dictionary encoding and row group size of the Parquet files a write produces."""
    codec = (text(options, PARQUET_CODEC, "snappy") or "snappy").lower()
    if codec not in CODECS:
        raise InvalidArgumentError(f"{PARQUET_CODEC}={codec!r} is not supported; use one of {', '.join(CODECS)}")
    return ParquetSettings(
        codec=codec,
        dictionary=flag(options, PARQUET_DICTIONARY, True),
        block_size=integer(options, PARQUET_BLOCK_SIZE, DEFAULT_BLOCK_SIZE),
    )


def _log_block_format(options: Mapping[str, str]) -> str:
    value = (text(options, LOG_BLOCK_FORMAT, "avro") or "avro").lower()
    if value == "hfile":
        raise UnsupportedFeatureError(
            f"{LOG_BLOCK_FORMAT}=hfile is not supported (HFile blocks are for Hudi's metadata table); "
            "use avro or parquet", feature="hfile-log-blocks")
    if value not in ("avro", "parquet"):
        raise InvalidArgumentError(f"{LOG_BLOCK_FORMAT}={value!r} must be avro or parquet")
    return value


def _partial_asked(options: Mapping[str, str]) -> bool:
    return bool(text(options, PARTIAL_UPDATE_SCHEMA)) or flag(options, MERGE_INTO_PARTIAL_UPDATES, False)


def _partial_columns(options: Mapping[str, str], merged: WriteOptions, columns: tuple[str, ...],
                     config: TableConfig) -> tuple[str, ...]:
    """The columns a partial update sets (empty: whole records); see `WriteOptions.partial_columns`."""
    if not _partial_asked(options):
        return ()
    schema = text(options, PARTIAL_UPDATE_SCHEMA)
    if schema:
        try:
            named = tuple(str(f["name"]) for f in json.loads(schema)["fields"])
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidArgumentError(f"{PARTIAL_UPDATE_SCHEMA} is not an Avro record schema: {exc}") from None
        missing = [n for n in named if n not in columns]
        if missing:
            raise InvalidArgumentError(f"{PARTIAL_UPDATE_SCHEMA} names {missing[0]!r}, which the data does not hold")
    else:
        named = tuple(c for c in columns if c not in META_FIELD_NAMES)
    if not config.is_mor or merged.operation is not Operation.UPSERT:
        raise UnsupportedFeatureError(
            f"partial updates ({PARTIAL_UPDATE_SCHEMA}, {MERGE_INTO_PARTIAL_UPDATES}) are upserts into merge-on-read "
            f"tables; this is a {merged.operation.value} into a {config.table_type.value} table", feature="partial-update")
    needed = [c for c in (*merged.record_key_fields, *merged.partition_fields, *merged.ordering_fields) if c not in named]
    if needed:
        raise InvalidArgumentError(f"a partial update must set the record key, partition and ordering fields; "
                                   f"{needed[0]!r} is missing")
    return named


def _combine(options: Mapping[str, str], operation: Operation) -> bool:
    if operation is Operation.DELETE:
        return flag(options, COMBINE_BEFORE_DELETE, True)
    if operation is Operation.UPSERT:
        return flag(options, COMBINE_BEFORE_UPSERT, True)
    return flag(options, COMBINE_BEFORE_INSERT, False)


def _table_type(value: str) -> TableType:
    try:
        return TableType(value.strip().upper())
    except ValueError:
        raise InvalidArgumentError(f"{TABLE_TYPE}={value!r} must be COPY_ON_WRITE or MERGE_ON_READ") from None


def _payload(value: str) -> str:
    short = value.rsplit(".", 1)[-1]
    if short not in _SUPPORTED_PAYLOADS:
        raise UnsupportedFeatureError(
            f"payload class {value} is not supported; use OverwriteWithLatestAvroPayload, "
            "DefaultHoodieRecordPayload or EventTimeAvroPayload",
            feature="payload-class",
        )
    return value if "." in value else f"org.apache.hudi.common.model.{value}"


def _check_columns(names: tuple[str, ...], columns: tuple[str, ...], operation: Operation) -> None:
    """Each name a column, or a dotted path (`a.b`) into one (its struct fields are checked per row batch)."""
    missing = [n for n in dict.fromkeys(names) if n not in columns and n.split(".", 1)[0] not in columns]
    if missing:
        raise InvalidArgumentError(
            f"the data has no column {missing[0]!r} needed by the {operation.value} (columns: {', '.join(columns)})"
        )


def _reject_unsupported(options: Mapping[str, str]) -> None:
    index = (text(options, INDEX_TYPE, "BUCKET") or "BUCKET").upper()
    if index != "BUCKET":
        raise UnsupportedFeatureError(
            f"{INDEX_TYPE}={index} is not supported; the writer uses the bucket index (BUCKET)",
            feature="index-type",
        )
    engine = (text(options, BUCKET_ENGINE, "SIMPLE") or "SIMPLE").upper()
    if engine != "SIMPLE":
        raise UnsupportedFeatureError(
            f"{BUCKET_ENGINE}={engine} is not supported; only the SIMPLE bucket engine is", feature="bucket-engine"
        )
    check_key_generator(options)
    if not flag(options, POPULATE_META_FIELDS, True):
        raise UnsupportedFeatureError(f"{POPULATE_META_FIELDS}=false is not supported", feature="virtual-keys")
