"""Which key generator partitions a table, and how: the fields, which of them are timestamps,
the path style, and the timestamp settings.

Hudi's Spark key generators (and their Avro twins): Simple, Complex and Nonpartitioned spell
column values in the path; `TimestampBasedKeyGenerator` formats its one field as a date;
`CustomKeyGenerator` takes `field:SIMPLE` and `field:TIMESTAMP` parts
(`hoodie.datasource.write.partitionpath.field=region:SIMPLE,ts:TIMESTAMP`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from shim.errors import InvalidArgumentError, UnsupportedFeatureError
from shim.keys.keygen import partition_paths
from shim.keys.timestamp_keygen import TimestampPartitioning
from shim.properties import WRITE_PARTITION_FIELDS, TableConfig, key_generator_type

KEYGEN_PACKAGE = "org.apache.hudi.keygen."
SIMPLE, TIMESTAMP = "SIMPLE", "TIMESTAMP"
SPELLING_KINDS = ("SIMPLE", "COMPLEX", "NON_PARTITION")  # paths spell column values
WRITABLE_KINDS = (*SPELLING_KINDS, "TIMESTAMP", "CUSTOM")
PARTITION_PATH_OPTION = WRITE_PARTITION_FIELDS


def key_generator_kind(class_name: str) -> str | None:
    """SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP or CUSTOM for a key generator class the writer
    implements (None otherwise)."""
    kind = key_generator_type(class_name)
    return kind if kind in WRITABLE_KINDS else None


@dataclass(frozen=True, slots=True)
class PartitionScheme:
    """How rows map to partition paths."""

    fields: tuple[str, ...] = ()
    timestamp_fields: tuple[str, ...] = ()
    """The fields formatted as dates (a subset of `fields`)."""
    hive_style: bool = False
    url_encode: bool = False
    timestamp: TimestampPartitioning | None = None

    def paths(self, columns: Mapping[str, pa.Array], num_rows: int) -> pa.Array:
        """The partition path of every row."""
        formatted = None
        if self.timestamp_fields:
            assert self.timestamp is not None
            formatted = {name: self.timestamp.values(columns[name], name) for name in self.timestamp_fields}
        return partition_paths(columns, self.fields, hive_style=self.hive_style, url_encode=self.url_encode,
                               num_rows=num_rows, formatted=formatted)


def parse_partition_fields(spec: str | None, kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(fields, timestamp fields) of a `hoodie.datasource.write.partitionpath.field` value."""
    parts = tuple(p.strip() for p in (spec or "").split(",") if p.strip())
    if kind == "NON_PARTITION":
        return (), ()
    if kind != "CUSTOM":
        if any(":" in p for p in parts):
            raise InvalidArgumentError(
                f"{PARTITION_PATH_OPTION}={spec}: field types (name:TYPE) are for CustomKeyGenerator only"
            )
        if kind == "TIMESTAMP":
            if len(parts) != 1:
                raise InvalidArgumentError(
                    f"{PARTITION_PATH_OPTION}={spec or '(none)'}: TimestampBasedKeyGenerator partitions by exactly "
                    "one field; use CustomKeyGenerator (name:TIMESTAMP,other:SIMPLE) for more"
                )
            return parts, parts
        return parts, ()
    fields, stamps = [], []
    for part in parts:
        name, sep, type_name = part.partition(":")
        type_name = type_name.strip().upper()
        if not sep or not name.strip() or type_name not in (SIMPLE, TIMESTAMP):
            raise InvalidArgumentError(
                f"{PARTITION_PATH_OPTION}={spec}: CustomKeyGenerator needs each field as name:SIMPLE or "
                f"name:TIMESTAMP, not {part!r}"
            )
        fields.append(name.strip())
        if type_name == TIMESTAMP:
            stamps.append(name.strip())
    return tuple(fields), tuple(stamps)


def build_scheme(
    fields: Sequence[str],
    timestamp_fields: Sequence[str],
    *,
    hive_style: bool,
    url_encode: bool,
    settings: Mapping[str, str],
) -> PartitionScheme:
    """A scheme; `settings` (the write's options over the table's properties) hold the timestamp
    key generator's options when some field is a timestamp."""
    timestamp = TimestampPartitioning.from_options(settings) if timestamp_fields else None
    return PartitionScheme(tuple(fields), tuple(timestamp_fields), hive_style, url_encode, timestamp)


def scheme_of_table(config: TableConfig, options: Mapping[str, str] | None = None) -> PartitionScheme:
    """The scheme a table was written with; `options` add what Hudi does not record (the
    timestamp type, and the field types of a version-6 CustomKeyGenerator table)."""
    options = options or {}
    kind = config.key_generator
    hive, url = config.hive_style_partitioning, config.url_encode_partitioning
    if not config.is_partitioned:
        return PartitionScheme(hive_style=hive, url_encode=url)
    if kind not in ("TIMESTAMP", "CUSTOM"):
        return PartitionScheme(config.partition_fields, (), hive, url)
    if kind == "TIMESTAMP":
        fields, stamps = config.partition_fields, config.partition_fields
    else:
        fields, stamps = _custom_fields(config, options)
    settings = {**config.raw, **{k: str(v) for k, v in options.items()}}
    return build_scheme(fields, stamps, hive_style=hive, url_encode=url, settings=settings)


def _custom_fields(config: TableConfig, options: Mapping[str, str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    types = config.partition_field_types
    given = options.get(PARTITION_PATH_OPTION)
    if types and all(t is not None for t in types):
        recorded = (config.partition_fields, tuple(f for f, t in zip(config.partition_fields, types, strict=True)
                                                   if t == TIMESTAMP))
        if given and ":" in given and parse_partition_fields(given, "CUSTOM") != recorded:
            raise InvalidArgumentError(
                f"{PARTITION_PATH_OPTION}={given} differs from the table's "
                f"{','.join(f + ':' + str(t) for f, t in zip(config.partition_fields, types, strict=True))}"
            )
        return recorded
    if not given or ":" not in given:
        raise UnsupportedFeatureError(
            f"{config.path}: the table uses CustomKeyGenerator and its hoodie.properties (written by Hudi 0.14/0.15) "
            "does not record which "
            f"partition fields are timestamps; give {PARTITION_PATH_OPTION} with each field's type "
            f"({','.join(f + ':SIMPLE' for f in config.partition_fields)}, TIMESTAMP where it applies)",
            feature="custom-key-generator",
        )
    fields, stamps = parse_partition_fields(given, "CUSTOM")
    if fields != config.partition_fields:
        raise InvalidArgumentError(
            f"{PARTITION_PATH_OPTION}={given} names other fields than the table's partition fields "
            f"{','.join(config.partition_fields)}"
        )
    return fields, stamps
