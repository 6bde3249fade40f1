"""Avro for Hudi log blocks: schema mapping to Arrow, columnar decoding, record encoding."""

from __future__ import annotations

from shim.avro.arrow_to_avro import arrow_to_avro_schema
from shim.avro.decode import decode_records
from shim.avro.encode import encode_records
from shim.avro.schema import (
    avro_to_arrow_schema,
    avro_to_arrow_type,
    parse_avro_schema,
)

__all__ = [
    "arrow_to_avro_schema",
    "avro_to_arrow_schema",
    "avro_to_arrow_type",
    "decode_records",
    "encode_records",
    "parse_avro_schema",
]
