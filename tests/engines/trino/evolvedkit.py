"""Evolved tables written by the project's PySpark writer (the `hudi_shim` data source), for the
Trino and Presto checks: one copy-on-write and one merge-on-read table with the same history.

    insert a..e (sf, nyc)
    rename rider -> passenger
    drop tip, add tip string              (the old ints must not come back)
    fare int -> double, qty int -> long, price decimal(6,2) -> decimal(10,2)
    move passenger after id
    add info.c string                     (a field added inside a struct)
    upsert b, d (new values everywhere), insert f (la)      (MOR: log files)
    delete c
    upsert e                              (MOR: a second log on nyc's file group)
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

from engines.spark import alter_table

TABLES = {"rides_cow": "COPY_ON_WRITE", "rides": "MERGE_ON_READ"}

INFO_V1 = pa.struct([("a", pa.int32()), ("b", pa.string())])
INFO_V2 = pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.string())])
SCHEMA_V1 = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("rider", pa.string()),
                       ("fare", pa.int32()), ("tip", pa.int32()), ("qty", pa.int32()),
                       ("price", pa.decimal128(6, 2)), ("info", INFO_V1)])
SCHEMA_V2 = pa.schema([("id", pa.string()), ("passenger", pa.string()), ("ts", pa.int64()), ("city", pa.string()),
                       ("fare", pa.float64()), ("qty", pa.int64()), ("price", pa.decimal128(10, 2)),
                       ("info", INFO_V2), ("tip", pa.string())])


def _options(name: str, table_type: str, operation: str) -> dict[str, str]:
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation,
            "hoodie.bucket.index.num.buckets": "2"}


def _write(spark: Any, path: Path, rows: list[dict], schema: pa.Schema, name: str, table_type: str,
           operation: str = "upsert") -> None:
    # One Spark task per write: which rows a file group's base file holds does not depend on how
    # Spark schedules tasks (a later task's rows go to a log file on merge-on-read tables).
    frame = spark.createDataFrame(pa.Table.from_pylist(rows, schema=schema)).coalesce(1)
    writer = frame.write.format("hudi_shim").mode("append")
    for key, value in _options(name, table_type, operation).items():
        writer = writer.option(key, value)
    writer.save(str(path))


def build(spark: Any, root: Path) -> dict[str, Path]:
    """Write both tables under `root`; returns name -> path."""
    paths = {}
    for name, table_type in TABLES.items():
        path = root / name
        first = [
            {"id": "a", "ts": 1, "city": "sf", "rider": "ann", "fare": 10, "tip": 1, "qty": 1,
             "price": Decimal("1.50"), "info": {"a": 1, "b": "x"}},
            {"id": "b", "ts": 1, "city": "sf", "rider": "bob", "fare": 20, "tip": 2, "qty": 2,
             "price": Decimal("2.25"), "info": {"a": 2, "b": "y"}},
            {"id": "c", "ts": 1, "city": "sf", "rider": "cy", "fare": 30, "tip": 3, "qty": 3,
             "price": Decimal("3.00"), "info": None},
            {"id": "d", "ts": 1, "city": "nyc", "rider": "di", "fare": 40, "tip": 4, "qty": 4,
             "price": Decimal("4.75"), "info": {"a": 4, "b": None}},
            {"id": "e", "ts": 1, "city": "nyc", "rider": "ed", "fare": 50, "tip": 5, "qty": 5,
             "price": Decimal("5.10"), "info": {"a": 5, "b": "z"}},
        ]
        _write(spark, path, first, SCHEMA_V1, name, table_type, "insert")
        (alter_table(str(path)).rename_column("rider", "passenger").drop_column("tip").add_column("tip", "string")
         .alter_column_type("fare", "double").alter_column_type("qty", "long")
         .alter_column_type("price", "decimal(10, 2)").move_column("passenger", after="id")
         .add_column("info.c", "string"))
        _write(spark, path, [
            {"id": "b", "passenger": "bo", "ts": 2, "city": "sf", "fare": 24.5, "qty": 5_000_000_000,
             "price": Decimal("12345678.90"), "info": {"a": 20, "b": "yy", "c": "new"}, "tip": "cash"},
            {"id": "d", "passenger": "dee", "ts": 2, "city": "nyc", "fare": 41.25, "qty": 44,
             "price": Decimal("4.80"), "info": {"a": 40, "b": "w", "c": None}, "tip": "card"},
            {"id": "f", "passenger": "fay", "ts": 1, "city": "la", "fare": 7.5, "qty": 1,
             "price": Decimal("0.99"), "info": {"a": 6, "b": "v", "c": "la"}, "tip": None},
        ], SCHEMA_V2, name, table_type)
        _write(spark, path, [{"id": "c", "passenger": "cy", "ts": 3, "city": "sf", "fare": 0.0, "qty": 0,
                              "price": Decimal(0), "info": None, "tip": None}], SCHEMA_V2, name, table_type,
               "delete")
        _write(spark, path, [{"id": "e", "passenger": "eddie", "ts": 3, "city": "nyc", "fare": 55.0, "qty": 6,
                              "price": Decimal("5.20"), "info": {"a": 50, "b": "zz", "c": "e"}, "tip": "cash"}],
               SCHEMA_V2, name, table_type)
        paths[name] = path
    return paths
