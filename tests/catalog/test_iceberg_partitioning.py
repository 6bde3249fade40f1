"""The Iceberg partition spec of a published view: identity partitions on Hudi's partition columns
only where every partition path spells their values exactly; otherwise unpartitioned."""

from __future__ import annotations

import struct

import fastavro
import pyarrow as pa
import pytest

from catalog.iceberg.manifests import (
    ADDED,
    DataFile,
    Manifest,
    ManifestEntry,
    manifest_bytes,
    manifest_list_bytes,
)
from catalog.iceberg.metrics import single_value
from catalog.iceberg.partitioning import PartitionSpec, partition_spec
from shim.properties import TableConfig
from shim.schema import FIELD_ID_KEY


def _schema(**types: pa.DataType) -> pa.Schema:
    return pa.schema([pa.field(name, kind, metadata={FIELD_ID_KEY: str(i)}) for i, (name, kind) in
                      enumerate(types.items())])


def _config(fields: str, *, hive: bool = True, **extra: str) -> TableConfig:
    return TableConfig({"hoodie.table.partition.fields": fields,
                        "hoodie.datasource.write.hive_style_partitioning": str(hive).lower(), **extra})


SCHEMA = _schema(id=pa.string(), region=pa.string(), year=pa.int32(), day=pa.int64(), live=pa.bool_(),
                 fare=pa.float64(), when=pa.date32())


def test_hive_style_paths_give_identity_partitions_with_typed_values():
    spec = partition_spec(_config("region,year"), SCHEMA, ["region=eu/year=2024", "region=us/year=2023",
                                                          "region=eu/year=2024"])
    assert spec.to_json() == {"spec-id": 0, "fields": [
        {"name": "region", "transform": "identity", "source-id": 2, "field-id": 1000},
        {"name": "year", "transform": "identity", "source-id": 3, "field-id": 1001}]}
    assert spec.last_partition_id == 1001
    assert spec.record("region=us/year=2023") == {"region": "us", "year": 2023}
    assert [f["type"] for f in spec.avro_record()["fields"]] == [["null", "string"], ["null", "int"]]


def test_plain_and_url_encoded_paths_are_read_like_the_shim_reads_them():
    spec = partition_spec(_config("region,live", hive=False, **{"hoodie.datasource.write.partitionpath.urlencode":
                                                               "true"}),
                          SCHEMA, ["north%2Fwest/true", "south/false"])
    assert spec.record("north%2Fwest/true") == {"region": "north/west", "live": True}
    assert spec.record("south/false") == {"region": "south", "live": False}


@pytest.mark.parametrize(("config", "paths", "why"), [
    (_config(""), [""], "not partitioned"),
    (_config("region"), ["region=eu", "region=__HIVE_DEFAULT_PARTITION__"], "a null partition"),
    (_config("fare"), ["fare=1.5"], "a double is not spelled exactly"),
    (_config("when"), ["when=2024-01-01"], "a date"),
    (_config("gone"), ["gone=x"], "a partition column the view no longer has (renamed)"),
    (_config("region"), ["eu"], "a path that does not say region="),
    (_config("region", **{"hoodie.table.keygenerator.type": "TIMESTAMP"}), ["region=2024"], "formatted dates"),
    (_config("region", **{"hoodie.table.keygenerator.type": "NON_PARTITION"}), [""], "non-partitioned keys"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_tables_whose_paths_do_not_spell_exact_values_are_unpartitioned(config, paths, why):
    spec = partition_spec(config, SCHEMA, paths)
    assert spec.fields == () and spec.to_json() == {"spec-id": 0, "fields": []}, why
    assert spec.last_partition_id == 999 and spec.record("") == {}


def test_bounds_are_serialized_as_iceberg_single_values():
    assert single_value("zürich", "string") == "zürich".encode()
    assert single_value(-2, "int") == struct.pack("<i", -2)
    assert single_value(5_000_000_000, "long") == struct.pack("<q", 5_000_000_000)
    assert single_value(True, "boolean") == b"\x01" and single_value(False, "boolean") == b"\x00"


def _read(data: bytes) -> list[dict]:
    import io

    return list(fastavro.reader(io.BytesIO(data)))


def test_manifests_carry_partition_values_bounds_and_the_data_file_a_delete_file_references():
    spec = partition_spec(_config("region"), SCHEMA, ["region=us", "region=eu"])
    base = "file:///t/region=eu/base.parquet"
    files = [DataFile(base, 10, 100, 0, "region=eu"), DataFile("file:///t/region=us/b.parquet", 5, 50, 0, "region=us"),
             DataFile("file:///p/d.parquet", 2, 20, 1, "region=eu", references=base)]
    entries = [ManifestEntry(ADDED, 7, 1, f) for f in files]
    data = _read(manifest_bytes(entries[:2], {"type": "struct", "fields": []}, spec))
    assert [e["data_file"]["partition"] for e in data] == [{"region": "eu"}, {"region": "us"}]
    assert all(e["data_file"]["referenced_data_file"] is None for e in data)
    deletes = _read(manifest_bytes(entries[2:], {"type": "struct", "fields": []}, spec, 1))
    entry = deletes[0]["data_file"]
    assert entry["referenced_data_file"] == base and entry["partition"] == {"region": "eu"}
    assert entry["lower_bounds"] == entry["upper_bounds"] == [{"key": 2147483546, "value": base.encode()}]
    listed = _read(manifest_list_bytes([Manifest("file:///m0.avro", 1, 0, tuple(entries[:2]))], 7, 1, spec))
    assert listed[0]["partitions"] == [{"contains_null": False, "contains_nan": False, "lower_bound": b"eu",
                                        "upper_bound": b"us"}]
    unpartitioned = _read(manifest_list_bytes([Manifest("file:///m0.avro", 1, 0, ())], 7, 1, PartitionSpec((), {})))
    assert unpartitioned[0]["partitions"] == []
