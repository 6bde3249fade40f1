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
from pathlib import Path
from typing import Any, Literal

import shim
from catalog.hive.columns import (
    INPUT_FORMAT,
    PARQUET_OUTPUT_FORMAT,
    PARQUET_SERDE,
    REALTIME_INPUT_FORMAT,
    HiveColumn,
    hive_partitions,
    sync_columns,
)
from engines.trino.distribution import DISTRIBUTIONS
from shim.errors import UnsupportedFeatureError

OWNER = "hudi-shim"

View = Literal["snapshot", "read_optimized"]


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
    table = shim.open_table(table_path).snapshot()
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
    for partition in hive_partitions(table, partition_columns):
        layout.write(table_dir / partition.name / layout.suffix,
                     layout.partition(data, layout.uri(location / partition.relative), input_format))


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
