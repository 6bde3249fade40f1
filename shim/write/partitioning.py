"""A write's key generator options (`hoodie.datasource.write.keygenerator.class`, the partition
fields, `hoodie.keygen.timebased.*`), checked against the table and turned into its partition scheme."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from shim.errors import InvalidArgumentError, UnsupportedFeatureError
from shim.keys.partition_scheme import (
    KEYGEN_PACKAGE,
    PARTITION_PATH_OPTION,
    SPELLING_KINDS,
    WRITABLE_KINDS,
    PartitionScheme,
    build_scheme,
    key_generator_kind,
    parse_partition_fields,
    scheme_of_table,
)
from shim.keys.timestamp_keygen import PERSISTED, option, persisted_properties
from shim.properties import TableConfig

KEYGEN_CLASS = "hoodie.datasource.write.keygenerator.class"
KEYGEN_TYPE = "hoodie.datasource.write.keygenerator.type"  # the class's short name, as Hudi also takes it
_CLASS_OF_KIND = {"TIMESTAMP": "TimestampBasedKeyGenerator", "CUSTOM": "CustomKeyGenerator"}


@dataclass(frozen=True, slots=True)
class NewTablePartitioning:
    """A new table's partitioning: its scheme, and what `hoodie.properties` records of it."""

    scheme: PartitionScheme
    key_generator_class: str | None
    """The class to record (None: the writer picks Simple, Complex or Nonpartitioned)."""
    properties: Mapping[str, str]


def _given_kind(options: Mapping[str, str]) -> str | None:
    given = (options.get(KEYGEN_CLASS) or "").strip()
    if not given:
        named = (options.get(KEYGEN_TYPE) or "").strip().upper()
        if not named:
            return None
        if named not in WRITABLE_KINDS:
            raise UnsupportedFeatureError(
                f"{KEYGEN_TYPE}={named} is not supported; use one of {', '.join(WRITABLE_KINDS)}",
                feature="key-generator",
            )
        return named
    kind = key_generator_kind(given)
    if kind is None:
        raise UnsupportedFeatureError(
            f"{KEYGEN_CLASS}={given} is not supported; simple, complex, non-partitioned, timestamp-based and "
            "custom key generators are",
            feature="key-generator",
        )
    return kind


def check_key_generator(options: Mapping[str, str]) -> None:
    """Refuse a key generator class this writer does not implement."""
    _given_kind(options)


def new_table_partitioning(
    options: Mapping[str, str], record_keys: tuple[str, ...], *, hive_style: bool, url_encode: bool
) -> NewTablePartitioning:
    """The partitioning a write's options give a table it creates."""
    kind = _given_kind(options)
    spec = options.get(PARTITION_PATH_OPTION)
    if kind not in ("TIMESTAMP", "CUSTOM"):
        fields, _ = parse_partition_fields(spec, "SIMPLE")
        return NewTablePartitioning(PartitionScheme(fields, (), hive_style, url_encode), None, {})
    if kind == "TIMESTAMP" and len(record_keys) > 1:
        raise InvalidArgumentError(
            f"TimestampBasedKeyGenerator takes one record key field, not {','.join(record_keys)}; use "
            "CustomKeyGenerator for a composite key"
        )
    fields, stamps = parse_partition_fields(spec, kind)
    scheme = build_scheme(fields, stamps, hive_style=hive_style, url_encode=url_encode, settings=options)
    properties = persisted_properties(options) if stamps else {}
    if kind == "CUSTOM":  # version 6 keeps the fields without their types: keep them beside
        properties[PARTITION_PATH_OPTION] = ",".join(
            f"{name}:{'TIMESTAMP' if name in stamps else 'SIMPLE'}" for name in fields)
    return NewTablePartitioning(scheme, KEYGEN_PACKAGE + _CLASS_OF_KIND[kind], properties)


def table_partitioning(options: Mapping[str, str], config: TableConfig) -> PartitionScheme:
    """The partitioning of a write to an existing table: the table's, completed by the options
    where Hudi does not record it; options that contradict the table are refused."""
    kind, given = config.key_generator, _given_kind(options)
    if given is not None and given != kind and not (given in SPELLING_KINDS and kind in SPELLING_KINDS):
        named_by = KEYGEN_CLASS if options.get(KEYGEN_CLASS) else KEYGEN_TYPE
        raise InvalidArgumentError(
            f"{named_by}={options.get(named_by)} differs from the table's key generator "
            f"{config.get('hoodie.table.keygenerator.class') or kind}"
        )
    if kind not in ("TIMESTAMP", "CUSTOM"):
        fields = config.partition_fields if config.is_partitioned else ()
        return PartitionScheme(fields, (), config.hive_style_partitioning, config.url_encode_partitioning)
    for key in PERSISTED:
        mine, recorded = option(options, key), config.get(key)
        if mine is not None and recorded is not None and mine.strip() != recorded.strip():
            raise InvalidArgumentError(
                f"{key}={mine} differs from the table's {recorded}; rows would land in other partitions than "
                "those already written"
            )
    return scheme_of_table(config, options)
