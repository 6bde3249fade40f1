"""Writer options: Hudi's names and defaults, merged with an existing table's config."""

from __future__ import annotations

import pytest

from shim.errors import InvalidArgumentError, UnsupportedFeatureError
from shim.properties import TableConfig, TableType, format_properties
from shim.write.options import Operation, WriteOptions
from shim.write.table_init import TableSpec

COLUMNS = ("id", "ts", "region", "fare")
MINIMAL = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id"}


def test_defaults_are_hudis_except_index_and_schema_on_read():
    opts = WriteOptions.parse(MINIMAL, COLUMNS)
    assert opts.operation is Operation.UPSERT
    assert opts.table_type is TableType.COPY_ON_WRITE
    assert opts.partition_fields == () and not opts.hive_style and not opts.url_encode
    assert opts.ordering_fields == ("ts",)  # the default `ts`, present in the data
    assert opts.payload_class == "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
    assert opts.num_buckets == 256 and opts.hash_fields == ("id",)
    assert opts.schema_on_read and opts.combine
    assert opts.heartbeat_timeout_s == 120.0


def test_no_ts_column_means_no_ordering_field_for_inserts():
    opts = WriteOptions.parse({**MINIMAL, "hoodie.datasource.write.operation": "insert"}, ("id", "v"))
    assert opts.ordering_fields == () and not opts.combine  # hoodie.combine.before.insert=false


def test_explicit_options_are_parsed():
    opts = WriteOptions.parse({
        **MINIMAL,
        "hoodie.datasource.write.table.type": "merge_on_read",
        "hoodie.datasource.write.operation": "INSERT_OVERWRITE",
        "hoodie.datasource.write.partitionpath.field": "region",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.bucket.index.num.buckets": "8",
        "hoodie.datasource.write.payload.class": "DefaultHoodieRecordPayload",
    }, COLUMNS)
    assert opts.table_type is TableType.MERGE_ON_READ and opts.operation is Operation.INSERT_OVERWRITE
    assert opts.partition_fields == ("region",) and opts.hive_style and opts.num_buckets == 8
    assert opts.payload_class == "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"hoodie.table.name": "t"}, InvalidArgumentError, "recordkey.field is required"),
        ({**MINIMAL, "hoodie.datasource.write.operation": "merge"}, InvalidArgumentError, "is not supported"),
        ({**MINIMAL, "hoodie.index.type": "BLOOM"}, UnsupportedFeatureError, "BLOOM is not supported"),
        ({**MINIMAL, "hoodie.datasource.write.partitionpath.field": "city"}, InvalidArgumentError,
         "no column 'city'"),
        ({**MINIMAL, "hoodie.bucket.index.num.buckets": "0"}, InvalidArgumentError, "at least 1"),
        ({**MINIMAL, "hoodie.datasource.write.payload.class": "com.x.MyPayload"}, UnsupportedFeatureError,
         "payload class com.x.MyPayload"),
        ({**MINIMAL, "hoodie.populate.meta.fields": "false"}, UnsupportedFeatureError, "meta.fields=false"),
        ({**MINIMAL, "hoodie.datasource.write.keygenerator.class": "com.acme.keygen.MyKeyGenerator"},
         UnsupportedFeatureError, "MyKeyGenerator"),
        ({**MINIMAL, "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
          "hoodie.datasource.write.partitionpath.field": "region"}, InvalidArgumentError, "name:SIMPLE or name:TIMESTAMP"),
    ],
)
def test_bad_options_are_rejected_with_the_key_named(options, error, message):
    with pytest.raises(error, match=message):
        WriteOptions.parse(options, COLUMNS)


def _config(**extra: str) -> TableConfig:
    spec = TableSpec("trips", ("id",), TableType.MERGE_ON_READ, ("region",), ("ts",), extra=extra)
    return TableConfig.from_text(format_properties(spec.properties(None)), "hoodie.properties")


def test_existing_table_supplies_keys_layout_and_bucket_count():
    opts = WriteOptions.parse({}, COLUMNS, _config(**{"hoodie.bucket.index.num.buckets": "4"}))
    assert opts.table_name == "trips" and opts.record_key_fields == ("id",)
    assert opts.table_type is TableType.MERGE_ON_READ and opts.partition_fields == ("region",)
    assert opts.num_buckets == 4 and opts.ordering_fields == ("ts",)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"hoodie.datasource.write.recordkey.field": "fare"}, "differs from the table's record key id"),
        ({"hoodie.datasource.write.table.type": "COPY_ON_WRITE"}, "differs from the table's type MERGE_ON_READ"),
        ({"hoodie.datasource.write.partitionpath.field": "fare"}, "differs from the table's partition fields"),
        ({"hoodie.bucket.index.num.buckets": "8"}, "bucket count of a table cannot change"),
    ],
)
def test_options_contradicting_the_table_are_rejected(options, message):
    with pytest.raises(InvalidArgumentError, match=message):
        WriteOptions.parse(options, COLUMNS, _config(**{"hoodie.bucket.index.num.buckets": "4"}))

