"""Column-wise Avro data blocks: byte-identical to the row-wise encoder, readable by the shim."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from shim.log import HeaderKey, decode_data_block, parse_log_bytes
from shim.log.writer import encode_avro_data_block
from shim.write.avro_block import encode_data_block
from shim.write.data_files import avro_record_schema

HEADER = {HeaderKey.INSTANT_TIME: "20240101000000000"}


def flat_table(n: int) -> pa.Table:
    rng = np.random.default_rng(7)
    pattern = (n + 3) // 4
    table = pa.table({
        "id": pa.array([f"k{i}" for i in range(n)]),
        "big": pa.array(rng.integers(-(2**62), 2**62, n), pa.int64()),
        "small": pa.array(rng.integers(-(2**31), 2**31 - 1, n), pa.int32()),
        "text": pa.array((["x", None, "日本", ""] * pattern)[:n]),
        "flag": pa.array(([True, False, None, True] * pattern)[:n]),
        "f32": pa.array(rng.random(n), pa.float32()),
        "f64": pa.array(rng.random(n)),
        "price": pa.array(([Decimal("123.45"), None, Decimal("-0.01"), Decimal("-99999999.99")] * pattern)[:n],
                          pa.decimal128(10, 2)),
        "day": pa.array([dt.date(2024, 2, 29)] * n),
        "at": pa.array(([dt.datetime(2024, 1, 1, tzinfo=dt.UTC), None] * n)[:n], pa.timestamp("us", tz="UTC")),
        "raw": pa.array(([b"\x00\x01", None, b""] * n)[:n]),
        "must": pa.array(np.arange(n)),
    })
    schema = table.schema.set(table.schema.get_field_index("must"), pa.field("must", pa.int64(), nullable=False))
    return table.cast(schema)


@pytest.mark.parametrize("n", [0, 1, 5, 1000])
def test_encode_data_block_matches_row_wise_encoder_bytes(n):
    table = flat_table(n)
    schema = avro_record_schema("t", table.schema)
    assert encode_data_block(table, schema, HEADER) == encode_avro_data_block(table, schema, HEADER)


def test_encode_data_block_of_a_slice_round_trips_through_the_reader():
    table = flat_table(50).slice(7, 20)
    schema = avro_record_schema("t", table.schema)
    contents = parse_log_bytes(encode_data_block(table, schema, HEADER), "mem")
    decoded = decode_data_block(contents, contents.blocks[0])
    assert decoded.to_pylist() == table.to_pylist()


def test_nested_schema_falls_back_to_row_wise_encoding():
    table = pa.table({"tags": pa.array([["a"], None], pa.list_(pa.string()))})
    schema = avro_record_schema("t", table.schema)
    assert encode_data_block(table, schema, HEADER) == encode_avro_data_block(table, schema, HEADER)
