"""Hive's view of a table: its columns as Hive types, and the formats Hudi's Hive sync registers.

`sync_columns` gives a Hudi table's columns as Hive sync registers them (meta columns first,
partition columns apart, names lower-cased); `iceberg_hive_columns` the columns Iceberg puts in
the metastore for an Iceberg table (readers take the schema from its metadata file, Hive shows these).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

import shim
from shim.errors import UnsupportedFeatureError
from shim.layout.partitions import list_partitions, partition_values

INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
REALTIME_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
PARQUET_OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
#: What Iceberg registers for an Iceberg table in a metastore (no Hive storage handler).
ICEBERG_INPUT_FORMAT = "org.apache.hadoop.mapred.FileInputFormat"
ICEBERG_OUTPUT_FORMAT = "org.apache.hadoop.mapred.FileOutputFormat"
ICEBERG_SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
#: Hudi's meta columns, which Hive sync puts first in every table it registers.
META_COLUMNS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
                "_hoodie_file_name")
#: Hive's name for a partition whose value is null.
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


@dataclass(frozen=True, slots=True)
class HiveColumn:
    """A column as the metastore keeps it: its name and Hive type (`struct<a:int,b:string>`)."""

    name: str
    type: str


def hive_type(data_type: pa.DataType) -> str:
    """The Hive type Hive sync registers for an Arrow type."""
    simple = {pa.string(): "string", pa.large_string(): "string", pa.int8(): "tinyint", pa.int16(): "smallint",
              pa.int32(): "int", pa.int64(): "bigint", pa.float32(): "float", pa.float64(): "double",
              pa.bool_(): "boolean", pa.binary(): "binary", pa.large_binary(): "binary", pa.date32(): "date"}
    if data_type in simple:
        return simple[data_type]
    if pa.types.is_decimal(data_type):
        return f"decimal({data_type.precision},{data_type.scale})"
    if pa.types.is_timestamp(data_type):
        return "timestamp"
    if pa.types.is_fixed_size_binary(data_type):
        return "binary"
    if pa.types.is_struct(data_type):
        members = ",".join(f"{f.name.lower()}:{hive_type(f.type)}" for f in data_type)
        return f"struct<{members}>"
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return f"array<{hive_type(data_type.value_type)}>"
    if pa.types.is_map(data_type):
        return f"map<{hive_type(data_type.key_type)},{hive_type(data_type.item_type)}>"
    raise UnsupportedFeatureError(f"no Hive type for {data_type}", feature="hive-type")


def sync_columns(table: shim.TableSnapshot, *, meta_columns: bool = True) -> tuple[list[HiveColumn], list[HiveColumn]]:
    """(data columns, partition columns) of `table` as Hive sync registers them from its current
    schema: names lower-cased, the partition columns out of the data columns, Hudi's meta columns
    first (when the table writes them and `meta_columns` is on)."""
    schema = table.schema()
    partition_names = table.config.partition_fields
    by_name = {field.name: field for field in schema}
    missing = [name for name in partition_names if name not in by_name]
    if missing:
        raise UnsupportedFeatureError(f"{table.path}: partition field {missing[0]!r} is not a column of the table",
                                      feature="derived-partition-field", path=table.path)
    data = [HiveColumn(name, "string") for name in META_COLUMNS] if meta_columns and table.config.populate_meta_fields \
        else []
    data += [HiveColumn(f.name.lower(), hive_type(f.type)) for f in schema if f.name not in partition_names]
    partitions = [HiveColumn(name.lower(), hive_type(by_name[name].type)) for name in partition_names]
    return data, partitions


@dataclass(frozen=True, slots=True)
class HivePartition:
    """A partition as Hive sync registers it: its name (`city=sf`), values and folder under the table."""

    name: str
    values: tuple[str, ...]
    relative: str


def hive_partitions(table: shim.TableSnapshot, columns: list[HiveColumn]) -> list[HivePartition]:
    """The table's partitions as Hive sync registers them (`columns`: its partition columns)."""
    found = []
    for relative in list_partitions(table.storage, table.config):
        values = partition_values(relative, table.config)
        if values is None:
            raise UnsupportedFeatureError(
                f"{table.path}: partition path {relative!r} does not spell the values of "
                f"{', '.join(table.config.partition_fields)}", feature="partition-path", path=table.path)
        spelled = tuple(DEFAULT_PARTITION if values[field] is None else str(values[field])
                        for field in table.config.partition_fields)
        name = "/".join(f"{column.name}={escape_partition_value(value)}"
                        for column, value in zip(columns, spelled, strict=True))
        found.append(HivePartition(name, spelled, relative))
    return found


def escape_partition_value(value: str) -> str:
    """A partition value as Hive spells it in a partition name (`FileUtils.escapePathName`)."""
    special = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(1, 32)}
    return "".join(f"%{ord(c):02X}" if c in special else c for c in value)


_ICEBERG_PRIMITIVES = {"boolean": "boolean", "int": "int", "long": "bigint", "float": "float", "double": "double",
                       "date": "date", "time": "string", "timestamp": "timestamp", "timestamptz": "timestamp",
                       "timestamp_ns": "timestamp", "timestamptz_ns": "timestamp", "string": "string",
                       "uuid": "string", "binary": "binary"}


def iceberg_hive_type(kind: Any) -> str:
    """The Hive type Iceberg registers in a metastore for an Iceberg type (JSON form)."""
    if isinstance(kind, str):
        if kind in _ICEBERG_PRIMITIVES:
            return _ICEBERG_PRIMITIVES[kind]
        if kind.startswith("decimal"):
            return kind.replace(" ", "")
        if kind.startswith("fixed"):
            return "binary"
        return "string"  # types Hive has no name for (variant, geometry): shown as text
    if kind["type"] == "struct":
        return "struct<" + ",".join(f"{f['name']}:{iceberg_hive_type(f['type'])}" for f in kind["fields"]) + ">"
    if kind["type"] == "list":
        return f"array<{iceberg_hive_type(kind['element'])}>"
    if kind["type"] == "map":
        return f"map<{iceberg_hive_type(kind['key'])},{iceberg_hive_type(kind['value'])}>"
    raise UnsupportedFeatureError(f"no Hive type for the Iceberg type {kind!r}", feature="hive-type")


def iceberg_hive_columns(metadata: dict[str, Any]) -> list[HiveColumn]:
    """The columns of an Iceberg table's current schema (`metadata`: its table metadata) as Hive types."""
    current = metadata["current-schema-id"]
    [schema] = [s for s in metadata["schemas"] if s["schema-id"] == current]
    return [HiveColumn(f["name"], iceberg_hive_type(f["type"])) for f in schema["fields"]]
