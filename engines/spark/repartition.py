"""Hudi's bucket id as a column, and a repartition that gives every file group to one task.

The `hudi_shim` writer is correct for any partitioning of the DataFrame: when the rows of one
file group arrive in several tasks running at once, they hand their rows to the first that writes
the group (`handoff`); a task arriving after the group was written rewrites its base file.
`repartition_by_bucket` shuffles the rows by (partition path, bucket) first, as Hudi's own
bucket-index writer does, so each file group is written by exactly one task whatever the timing
(at the cost of a shuffle, and of computing the bucket in Python).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from shim.errors import InvalidArgumentError
from shim.keys.keygen import key_columns, record_keys
from shim.keys.partition_scheme import PartitionScheme
from shim.properties import read_table_config
from shim.storage import storage_and_options
from shim.write.bucket import bucket_ids
from shim.write.options import (
    BUCKET_HASH_FIELD,
    DEFAULT_NUM_BUCKETS,
    HIVE_STYLE,
    NUM_BUCKETS,
    RECORD_KEY,
    URL_ENCODE,
)
from shim.write.partitioning import new_table_partitioning, table_partitioning

BUCKET_COLUMN = "_hoodie_bucket_id"
PARTITION_COLUMN = "_hoodie_bucket_partition"


def _layout(options: Mapping[str, str], path: str | None) -> tuple[tuple[str, ...], PartitionScheme,
                                                                     tuple[str, ...], int]:
    config = read_table_config(storage_and_options(path, options)[0]) if path else None

    def fields(key: str, fallback: tuple[str, ...]) -> tuple[str, ...]:
        value = options.get(key)
        return tuple(p.strip() for p in value.split(",") if p.strip()) if value else fallback

    keys = fields(RECORD_KEY, config.record_key_fields if config else ())
    if not keys:
        raise InvalidArgumentError(f"give {RECORD_KEY} (or the path of an existing table)")
    if config is not None:
        scheme = table_partitioning(options, config)
    else:
        hive, url = (str(options.get(key, False)).lower() == "true" for key in (HIVE_STYLE, URL_ENCODE))
        scheme = new_table_partitioning(options, keys, hive_style=hive, url_encode=url).scheme
    recorded_hash = config.get(BUCKET_HASH_FIELD) if config else None
    hash_fields = fields(BUCKET_HASH_FIELD, tuple(p.strip() for p in (recorded_hash or "").split(",") if p.strip())
                         or keys)
    recorded = config.get(NUM_BUCKETS) if config else None
    buckets = int(options.get(NUM_BUCKETS) or recorded or DEFAULT_NUM_BUCKETS)
    return keys, scheme, hash_fields, buckets


def with_bucket_id(df: DataFrame, options: Mapping[str, str], path: str | None = None) -> DataFrame:
    """`df` with Hudi's bucket number (`_hoodie_bucket_id`) and partition path
    (`_hoodie_bucket_partition`) appended, computed as the writer computes them.

    Options are the write's (record key, partition fields, bucket count...); with `path`, an
    existing table's settings fill in what the options leave out.
    """
    keys, scheme, hash_fields, buckets = _layout(options, path)
    schema = StructType(df.schema.fields + [StructField(PARTITION_COLUMN, StringType(), False),
                                            StructField(BUCKET_COLUMN, IntegerType(), False)])

    def add(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            columns = key_columns(batch, (*keys, *scheme.fields))
            key_values = record_keys(columns, keys)
            paths = scheme.paths(columns, batch.num_rows)
            ids = pa.array(bucket_ids(key_values, hash_fields, buckets), pa.int32())
            yield pa.RecordBatch.from_arrays(list(batch.columns) + [paths, ids],
                                             names=batch.schema.names + [PARTITION_COLUMN, BUCKET_COLUMN])

    return df.mapInArrow(add, schema)


def bucket_column(options: Mapping[str, str], path: str | None = None) -> Any:
    """A Spark column holding Hudi's bucket number of each row (an Arrow UDF over the key columns)."""
    from pyspark.sql.functions import arrow_udf, col

    keys, _, hash_fields, buckets = _layout(options, path)

    def bucket_of(*values: pa.Array) -> pa.Array:
        key_values = record_keys(dict(zip(keys, values, strict=True)), keys)
        return pa.array(bucket_ids(key_values, hash_fields, buckets), pa.int32())

    udf = arrow_udf(bucket_of, IntegerType())  # type: ignore[call-overload]  # the type hints make it SCALAR
    return udf(*[col(k) for k in keys])


def repartition_by_bucket(
    df: DataFrame, options: Mapping[str, str], path: str | None = None, num_partitions: int | None = None
) -> DataFrame:
    """`df` shuffled so that all rows of one file group (partition values, bucket) are in one Spark
    partition. Only the key columns go through Python (to compute the bucket)."""
    _, scheme, _, _ = _layout(options, path)
    tagged = df.withColumn(BUCKET_COLUMN, bucket_column(options, path))
    # Rows of one date partition may hold different timestamps: shuffle by the other fields only.
    columns = [*(f for f in scheme.fields if f not in scheme.timestamp_fields), BUCKET_COLUMN]
    shuffled = tagged.repartition(num_partitions, *columns) if num_partitions else tagged.repartition(*columns)
    return shuffled.drop(BUCKET_COLUMN)
