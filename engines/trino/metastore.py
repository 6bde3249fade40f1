"""Register an existing Hudi table in a file-based Hive metastore folder, as Hudi's Hive sync
would after the table's last schema change, for the engines' own Hudi connectors
(`engines.trino.catalogs.hudi_connector`).

    register_table(Path("/tmp/metastore/trino"), "trino", "/data/trips", "trips")

What is registered: the schema (database) when missing; the table with Hudi's input format
(`HoodieParquetInputFormat`, or `HoodieParquetRealtimeInputFormat` for the snapshot of a
merge-on-read table, Hive sync's `_rt` table), the Parquet serde, Hudi's meta columns and the
table's *current* columns as Hive types, its partition columns; and one entry per partition
(both connectors list partitions from the metastore, not from storage).

The two engines keep different files (read from their `FileHiveMetastore`s):

- Trino 476: the schema in `<dir>/.<schema>.trinoSchema` (beside its folder `<dir>/<schema>/`),
  the table in `<dir>/<schema>/<table>/.trinoSchema`, a partition in
  `<dir>/<schema>/<table>/<partition name>/.trinoSchema`. Every file names the Trino version
  that wrote it (`writerVersion`); Trino refuses files of another version.
- Presto 0.287: `<dir>/<schema>/.prestoSchema`, `<dir>/<schema>/<table>/.prestoSchema`,
  `<dir>/<schema>/<table>/<partition name>/.prestoSchema`; the storage format is an object of
  serde (`serDe`), input and output format. Presto reads them through Hadoop's local file system,
  which checks a `.<file>.crc` beside a file when there is one: a stale one is removed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

import shim
from engines.trino.distribution import DISTRIBUTIONS
from shim.errors import UnsupportedFeatureError
from shim.layout.partitions import list_partitions, partition_values

INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
REALTIME_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
PARQUET_OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
#: Hudi's meta columns, which Hive sync puts first in every table it registers.
META_COLUMNS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
                "_hoodie_file_name")
#: Hive's name for a partition whose value is null.
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
OWNER = "hudi-shim"

View = Literal["snapshot", "read_optimized"]


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


def sync_columns(table: shim.Table, *, meta_columns: bool = True) -> tuple[list[HiveColumn], list[HiveColumn]]:
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


def register_table(metastore: Path, flavor: str, table_path: str | os.PathLike[str], name: str, *,
                   schema: str = "default", columns: Sequence[HiveColumn] | None = None,
                   view: View = "snapshot", meta_columns: bool = True) -> None:
    """Register the Hudi table at `table_path` as `<schema>.<name>` in the metastore folder of a
    `flavor` ("trino" or "presto") server, replacing an earlier registration of that name.

    Args:
        metastore: the folder the catalog's `hive.metastore.catalog.dir` names.
        flavor: whose file format to write.
        table_path: the table's local path.
        name: the table's name in the metastore.
        schema: the schema (database) to register it in; created when missing.
        columns: the data columns to register instead of the table's current ones (partition
            columns are always the table's).
        view: "snapshot" registers a merge-on-read table with Hudi's realtime input format (Hive
            sync's `<table>_rt`), "read_optimized" with the plain one (`<table>_ro`); a
            copy-on-write table always has the plain one.
        meta_columns: whether Hudi's meta columns come first, as Hive sync registers them.
    """
    layout = _layout(flavor)
    table = shim.open_table(table_path)
    data, partition_columns = sync_columns(table, meta_columns=meta_columns)
    if columns is not None:
        data = list(columns)
    location = Path(table.path).resolve()
    realtime = view == "snapshot" and table.config.is_mor
    layout.write_database(Path(metastore), schema.lower())
    table_dir = Path(metastore) / schema.lower() / name.lower()
    if table_dir.is_dir():  # partitions registered before
        for stale in table_dir.rglob(layout.suffix):
            stale.unlink()
    input_format = REALTIME_INPUT_FORMAT if realtime else INPUT_FORMAT
    layout.write(table_dir / layout.suffix, layout.table(data, partition_columns, layout.uri(location), input_format))
    if not partition_columns:
        return
    for relative in list_partitions(table.storage, table.config):
        values = partition_values(relative, table.config)
        if values is None:
            raise UnsupportedFeatureError(
                f"{table.path}: partition path {relative!r} does not spell the values of "
                f"{', '.join(table.config.partition_fields)}", feature="partition-path", path=table.path)
        spelled = [DEFAULT_PARTITION if values[field] is None else str(values[field])
                   for field in table.config.partition_fields]
        partition_name = "/".join(f"{column.name}={_escape(value)}"
                                  for column, value in zip(partition_columns, spelled, strict=True))
        layout.write(table_dir / partition_name / layout.suffix,
                     layout.partition(data, layout.uri(location / relative), input_format))


def _escape(value: str) -> str:
    """A partition value as Hive spells it in a partition name (`FileUtils.escapePathName`)."""
    special = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(1, 32)}
    return "".join(f"%{ord(c):02X}" if c in special else c for c in value)


class _Layout:
    """One engine's metastore files."""

    suffix: str
    scheme: str

    def uri(self, path: Path) -> str:
        """A local path as the engine's file system takes it."""
        return f"{self.scheme}://{path}"

    def write_database(self, metastore: Path, schema: str) -> None:
        raise NotImplementedError

    def table(self, data: Sequence[HiveColumn], partitions: Sequence[HiveColumn], location: str,
              input_format: str) -> dict[str, Any]:
        raise NotImplementedError

    def partition(self, data: Sequence[HiveColumn], location: str, input_format: str) -> dict[str, Any]:
        raise NotImplementedError

    def write(self, path: Path, document: dict[str, Any]) -> None:
        """Write `document` as JSON to `path` atomically, dropping a stale Hadoop checksum."""
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, scratch = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(document, out, indent=2)
        os.chmod(scratch, 0o644)
        os.replace(scratch, path)
        (path.parent / f".{path.name}.crc").unlink(missing_ok=True)


class _Trino(_Layout):
    suffix = ".trinoSchema"
    # Trino's native local file system (`fs.native-local.enabled`); Hudi's timeline listing
    # through it fails on `file:` locations ("Cannot get parent path of a root path")
    scheme = "local"

    def __init__(self, version: str) -> None:
        self.version = version

    def write_database(self, metastore: Path, schema: str) -> None:
        (metastore / schema).mkdir(parents=True, exist_ok=True)
        marker = metastore / f".{schema}{self.suffix}"
        if not marker.exists():
            self.write(marker, {"writerVersion": self.version, "ownerName": OWNER, "ownerType": "USER",
                                "parameters": {}})

    def table(self, data: Sequence[HiveColumn], partitions: Sequence[HiveColumn], location: str,
              input_format: str) -> dict[str, Any]:
        return {"writerVersion": self.version, "owner": OWNER, "tableType": "EXTERNAL_TABLE",
                "dataColumns": _columns(data, properties=True),
                "partitionColumns": _columns(partitions, properties=True),
                "parameters": {"EXTERNAL": "TRUE"},
                "originalStorageFormat": {"serde": PARQUET_SERDE, "inputFormat": input_format,
                                          "outputFormat": PARQUET_OUTPUT_FORMAT},
                "serdeParameters": {}, "externalLocation": location, "columnStatistics": {}}

    def partition(self, data: Sequence[HiveColumn], location: str, input_format: str) -> dict[str, Any]:
        # a partition's format is one of Trino's named formats only; the Hudi connector reads
        # the table's
        return {"columns": _columns(data, properties=True), "parameters": {}, "storageFormat": "PARQUET",
                "serdeParameters": {}, "externalLocation": location, "columnStatistics": {}}


class _Presto(_Layout):
    suffix = ".prestoSchema"
    scheme = "file"

    def write_database(self, metastore: Path, schema: str) -> None:
        marker = metastore / schema / self.suffix
        if not marker.exists():
            self.write(marker, {"ownerName": OWNER, "ownerType": "USER", "parameters": {}})

    def table(self, data: Sequence[HiveColumn], partitions: Sequence[HiveColumn], location: str,
              input_format: str) -> dict[str, Any]:
        return {"owner": OWNER, "tableType": "EXTERNAL_TABLE", "dataColumns": _columns(data),
                "partitionColumns": _columns(partitions), "parameters": {"EXTERNAL": "TRUE"},
                "storageFormat": self._format(input_format), "storageParameters": {}, "serdeParameters": {},
                "externalLocation": location, "columnStatistics": {}}

    def partition(self, data: Sequence[HiveColumn], location: str, input_format: str) -> dict[str, Any]:
        # the table's input format again: Presto's Hive connector picks Hudi's file listing by it
        return {"columns": _columns(data), "parameters": {}, "storageFormat": self._format(input_format),
                "storageParameters": {}, "serdeParameters": {}, "externalLocation": location,
                "columnStatistics": {}, "eligibleToIgnore": False, "sealedPartition": True}

    @staticmethod
    def _format(input_format: str) -> dict[str, str]:
        return {"serDe": PARQUET_SERDE, "inputFormat": input_format, "outputFormat": PARQUET_OUTPUT_FORMAT}


def _columns(columns: Sequence[HiveColumn], *, properties: bool = False) -> list[dict[str, Any]]:
    return [{"name": c.name, "type": c.type} | ({"properties": {}} if properties else {}) for c in columns]


def _layout(flavor: str) -> _Layout:
    if flavor == "trino":
        return _Trino(DISTRIBUTIONS["trino"].version)
    if flavor == "presto":
        return _Presto()
    raise UnsupportedFeatureError(f"no file metastore layout for {flavor!r}: 'trino' or 'presto'",
                                  feature="metastore-flavor")
