"""Hudi 1.2's VECTOR, VARIANT and BLOB columns, in files built as Hudi 1.2's code writes them
(Spark 3.5 cannot write VARIANT, and these files need no Spark to be exact):

- VECTOR: an Avro `fixed` of `dimension * element size` bytes, logical type `vector` with the
  properties `dimension`, `elementType` (FLOAT, DOUBLE, INT8) and `storageBacking` (FIXED_BYTES)
  (`HoodieSchema.Vector`); the elements little-endian (`VectorLogicalType.VECTOR_BYTE_ORDER`);
  Parquet base files hold the bytes as binary (`VectorConversionUtils.replaceVectorColumnsWithBinary`);
  InternalSchema JSON says `vector[4, FLOAT, FIXED_BYTES]` (`Types.VectorType.toString`).
- VARIANT: an Avro record with logical type `variant` and the required bytes fields `metadata`
  and `value` (`HoodieSchema.createVariant`); a Parquet group of the two binaries.
- BLOB: an Avro record with logical type `blob`: `type` (enum blob_storage_type INLINE,
  OUT_OF_LINE), `data` (nullable bytes), `reference` (nullable record of `external_path`,
  `offset`, `length`, `managed`) (`HoodieSchema.Blob`).

Read as Arrow: a vector as a fixed-size list of float32/float64/int8, a variant as the struct of
its metadata and value binaries, a blob as its struct.
"""

from __future__ import annotations

import io
import json
import struct

import fastavro
import pyarrow as pa
import pytest

import shim
from shim.avro.schema import parse_avro_schema
from shim.errors import InvalidTableError, SchemaEvolutionError
from shim.log.blocks import HeaderKey
from shim.log.writer import encode_avro_records_block, write_log_file
from shim.schema import add_meta_fields, internal_from_avro, internal_to_arrow
from shim.schema.serde import parse_type_token, schema_from_json, schema_to_json
from shim.schema.types import VectorType
from shim.write.data_files import FileWrite, with_meta_columns
from tests.local import LOCAL
from tests.tablekit import TinyTable

VARIANT = {"type": "record", "name": "variant", "logicalType": "variant", "fields": [
    {"name": "metadata", "type": "bytes", "doc": "Variant metadata component"},
    {"name": "value", "type": "bytes", "doc": "Variant value component"}]}
BLOB = {"type": "record", "name": "blob", "logicalType": "blob", "fields": [
    {"name": "type", "type": {"type": "enum", "name": "blob_storage_type", "symbols": ["INLINE", "OUT_OF_LINE"]}},
    {"name": "data", "type": ["null", "bytes"], "default": None},
    {"name": "reference", "type": ["null", {"type": "record", "name": "reference", "fields": [
        {"name": "external_path", "type": "string"},
        {"name": "offset", "type": ["null", "long"]},
        {"name": "length", "type": ["null", "long"]},
        {"name": "managed", "type": "boolean"}]}], "default": None}]}
# The table's Avro schema as Hudi 1.2 records it (commit metadata `schema`, create schema).
HUDI_SCHEMA = {"type": "record", "name": "tiny_record", "namespace": "hoodie.tiny", "fields": [
    {"name": "id", "type": "string"},
    {"name": "ts", "type": "long"},
    {"name": "embedding", "type": ["null", {"type": "fixed", "name": "vector", "size": 12, "logicalType": "vector",
                                           "dimension": 3, "elementType": "FLOAT",
                                           "storageBacking": "FIXED_BYTES"}], "default": None},
    {"name": "precise", "type": {"type": "fixed", "name": "vector_precise", "size": 16, "logicalType": "vector",
                                 "dimension": 2, "elementType": "DOUBLE", "storageBacking": "FIXED_BYTES"}},
    {"name": "doc", "type": ["null", VARIANT], "default": None},
    {"name": "payload", "type": ["null", BLOB], "default": None}]}

ARROW = pa.schema([
    pa.field("id", pa.string(), False), pa.field("ts", pa.int64(), False),
    pa.field("embedding", pa.list_(pa.field("element", pa.float32(), False), 3)),
    pa.field("precise", pa.list_(pa.field("element", pa.float64(), False), 2), False),
    pa.field("doc", pa.struct([pa.field("metadata", pa.binary(), False), pa.field("value", pa.binary(), False)])),
    pa.field("payload", pa.struct([
        pa.field("type", pa.string(), False), pa.field("data", pa.binary()),
        pa.field("reference", pa.struct([pa.field("external_path", pa.string(), False),
                                         pa.field("offset", pa.int64()), pa.field("length", pa.int64()),
                                         pa.field("managed", pa.bool_(), False)]))])),
])
# What Hudi's Parquet writer stores: vectors as their bytes.
STORED = pa.schema([ARROW.field("id"), ARROW.field("ts"), pa.field("embedding", pa.binary()),
                    pa.field("precise", pa.binary(), False), ARROW.field("doc"), ARROW.field("payload")])
# A variant holding the JSON object {"a": 1} (Parquet variant encoding: metadata with one key,
# an object of one field whose value is the int8 1).
VARIANT_METADATA = bytes([0x01, 0x01, 0x00, 0x01]) + b"a"
VARIANT_VALUE = bytes([0x02, 0x01, 0x00, 0x00, 0x02, 0x0C, 0x01])


def _le(fmt: str, *values: float) -> bytes:
    return struct.pack("<" + fmt * len(values), *values)


class HudiTypesTable(TinyTable):
    """A table whose schema in commit metadata is the Avro schema Hudi 1.2 writes."""

    def _avro(self, schema: pa.Schema) -> dict:
        return HUDI_SCHEMA

    def hudi_log(self, records: list[dict], *, base_instant: str) -> str:
        """A deltacommit with one Avro data block encoded with Hudi's schema (meta fields first)."""
        instant, _ = self._begin(self.write_action)
        schema = add_meta_fields(HUDI_SCHEMA)
        meta = with_meta_columns(pa.table({"id": [r["id"] for r in records]}), self.config, instant=instant,
                                 file_name="fg1-0")
        encoded = []
        for i, record in enumerate(records):
            out = io.BytesIO()
            row = {name: meta.column(name)[i].as_py() for name in meta.column_names if name.startswith("_hoodie")}
            fastavro.schemaless_writer(out, fastavro.parse_schema(json.loads(json.dumps(schema))), row | record)
            encoded.append(out.getvalue())
        name = f".fg1-0_{base_instant}.log.1_0-2-0"
        path = self.path / name
        write_log_file(LOCAL, str(path), [encode_avro_records_block(encoded, parse_avro_schema(schema),
                                                              {HeaderKey.INSTANT_TIME: instant})])
        write = FileWrite(partition_path="", file_id="fg1-0", file_name=name, num_writes=len(records),
                          num_updates=len(records), num_deletes=0, file_size=path.stat().st_size,
                          prev_commit=base_instant, base_file=None, log_version=1)
        return self._commit([write], instant, self.write_action, True, None)


def _base_rows() -> pa.Table:
    return pa.Table.from_pylist([
        {"id": "a", "ts": 1, "embedding": _le("f", 1.0, 2.0, 3.0), "precise": _le("d", 0.5, -1.0),
         "doc": {"metadata": VARIANT_METADATA, "value": VARIANT_VALUE},
         "payload": {"type": "INLINE", "data": b"\x00\x01blob", "reference": None}},
        {"id": "b", "ts": 1, "embedding": None, "precise": _le("d", 2.0, 3.0), "doc": None,
         "payload": {"type": "OUT_OF_LINE", "data": None,
                     "reference": {"external_path": "s3://bucket/b.bin", "offset": 10, "length": 20, "managed": True}}},
        {"id": "c", "ts": 1, "embedding": _le("f", -0.25, 0.0, 1e30), "precise": _le("d", 1e-300, 7.0),
         "doc": None, "payload": None},
    ], schema=STORED)


def test_hudi_avro_schema_reads_as_vector_variant_and_blob_arrow_types():
    internal = internal_from_avro(HUDI_SCHEMA)
    assert internal.find_field_by_name("embedding").type == VectorType(3, "FLOAT", "FIXED_BYTES")
    arrow = internal_to_arrow(internal)
    assert pa.schema([f.remove_metadata() for f in arrow]).equals(
        pa.schema([f.remove_metadata() for f in ARROW]))


def test_internal_schema_json_token_of_vectors_round_trips():
    assert parse_type_token("vector[4, FLOAT, FIXED_BYTES]") == VectorType(4, "FLOAT", "FIXED_BYTES")
    assert parse_type_token("vector[8, INT8, FIXED_BYTES]").byte_size == 8
    internal = internal_from_avro(HUDI_SCHEMA)
    text = schema_to_json(internal)
    assert '"type":"vector[3, FLOAT, FIXED_BYTES]"' in text
    assert schema_from_json(text) == internal
    with pytest.raises(InvalidTableError, match="vector\\[4, FLOAT16, FIXED_BYTES\\] is not a VECTOR Hudi writes"):
        parse_type_token("vector[4, FLOAT16, FIXED_BYTES]")


def test_vector_fixed_of_the_wrong_size_is_refused_naming_it():
    bad = json.loads(json.dumps(HUDI_SCHEMA))
    bad["fields"][3]["type"]["size"] = 12
    with pytest.raises(InvalidTableError, match="'vector_precise'.*size 12 is not 16 bytes"):
        internal_from_avro(bad)


@pytest.mark.parametrize("mor", [True, False])
def test_base_file_and_avro_log_block_read_as_vectors_variants_and_blobs(tmp_path, mor):
    table = HudiTypesTable(tmp_path / "t", STORED, mor=mor)
    base = table.base(_base_rows())
    expected = {
        "a": {"id": "a", "ts": 1, "embedding": [1.0, 2.0, 3.0], "precise": [0.5, -1.0],
              "doc": {"metadata": VARIANT_METADATA, "value": VARIANT_VALUE},
              "payload": {"type": "INLINE", "data": b"\x00\x01blob", "reference": None}},
        "b": {"id": "b", "ts": 1, "embedding": None, "precise": [2.0, 3.0], "doc": None,
              "payload": {"type": "OUT_OF_LINE", "data": None, "reference": {
                  "external_path": "s3://bucket/b.bin", "offset": 10, "length": 20, "managed": True}}},
        "c": {"id": "c", "ts": 1, "embedding": [-0.25, 0.0, pytest.approx(1e30, rel=1e-6)],
              "precise": [1e-300, 7.0], "doc": None, "payload": None},
    }
    read = shim.open_table(table.path).read()
    assert read.schema.remove_metadata().equals(ARROW.remove_metadata()) or \
        [f.type for f in read.schema] == [f.type for f in ARROW]
    assert sorted(read.to_pylist(), key=lambda r: r["id"]) == [expected[k] for k in "abc"]
    if not mor:
        return
    table.hudi_log([{"id": "b", "ts": 2, "embedding": _le("f", 9.0, 8.0, 7.0), "precise": _le("d", 4.0, 5.0),
                     "doc": {"metadata": VARIANT_METADATA, "value": VARIANT_VALUE},
                     "payload": {"type": "INLINE", "data": b"new", "reference": None}}], base_instant=base)
    expected["b"] = {"id": "b", "ts": 2, "embedding": [9.0, 8.0, 7.0], "precise": [4.0, 5.0],
                     "doc": {"metadata": VARIANT_METADATA, "value": VARIANT_VALUE},
                     "payload": {"type": "INLINE", "data": b"new", "reference": None}}
    merged = shim.open_table(table.path).read()
    assert [f.type for f in merged.schema] == [f.type for f in ARROW]
    assert sorted(merged.to_pylist(), key=lambda r: r["id"]) == [expected[k] for k in "abc"]
    projected = shim.open_table(table.path).read(columns=["id", "embedding"], filter="ts = 2")
    assert projected.to_pylist() == [{"id": "b", "embedding": [9.0, 8.0, 7.0]}]
    assert shim.open_table(table.path).read(mode="read_optimized", columns=["embedding"],
                                            filter="id = 'b'").to_pylist() == [{"embedding": None}]


def test_vector_bytes_of_the_wrong_length_are_an_error_naming_file_and_column(tmp_path):
    table = HudiTypesTable(tmp_path / "t", STORED, mor=False)
    rows = _base_rows().to_pylist()
    rows[1]["embedding"] = _le("f", 1.0, 2.0)  # 8 bytes, not 12
    table.base(pa.Table.from_pylist(rows, schema=STORED))
    with pytest.raises(SchemaEvolutionError, match="embedding") as info:
        shim.open_table(table.path).read()
    assert "value 1 holds 8 bytes, not the vector's 12" in str(info.value)
    assert info.value.path is not None and info.value.path.endswith(".parquet")
