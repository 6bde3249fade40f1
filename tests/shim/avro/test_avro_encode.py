"""encode_records: Avro binary of Arrow rows, checked against fastavro and decode_records."""

from __future__ import annotations

import datetime as dt
import io
import random
from decimal import Decimal

import fastavro
import numpy as np
import pyarrow as pa
import pytest
from avro_cases import SchemaMaker, encode_all, value

from shim.avro import decode_records, encode_records, parse_avro_schema
from shim.errors import ColumnNotFoundError, WriteError


def _bounds(records: list[bytes]) -> tuple[bytes, np.ndarray, np.ndarray]:
    lengths = np.array([len(r) for r in records], dtype=np.int64)
    ends = np.cumsum(lengths)
    return b"".join(records), ends - lengths, ends


@pytest.mark.parametrize("seed", range(25))
def test_encode_records_round_trips_through_decode_records(seed: int) -> None:
    rng = random.Random(500 + seed)
    schema = SchemaMaker(rng).record(fields=7)
    buf, starts, ends = encode_all(schema, [value(rng, schema) for _ in range(40)], rng)
    table = decode_records(buf, starts, parse_avro_schema(schema), ends=ends)

    again = decode_records(*_bounds(encode_records(table, schema))[:2], parse_avro_schema(schema))

    assert again.equals(table)


def test_encode_records_hudi_flat_schema_matches_fastavro_bytes() -> None:
    schema = {
        "type": "record",
        "name": "trips_record",
        "namespace": "hoodie.trips",
        "fields": [
            {"name": "_hoodie_commit_time", "type": ["null", "string"], "default": None},
            {"name": "ts", "type": ["null", "long"], "default": None},
            {"name": "fare", "type": ["null", "double"], "default": None},
            {"name": "flag", "type": ["null", "boolean"], "default": None},
        ],
    }
    rows = [
        {"_hoodie_commit_time": "20250331030645735", "ts": 1695046462179, "fare": 25.0, "flag": True},
        {"_hoodie_commit_time": None, "ts": -1, "fare": None, "flag": None},
    ]
    parsed = fastavro.parse_schema(schema)
    expected = []
    for row in rows:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, row)
        expected.append(out.getvalue())

    assert encode_records(pa.Table.from_pylist(rows), schema) == expected


def test_encode_records_logical_types_round_trip_exactly() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]},
            {"name": "ts_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
            {"name": "day", "type": {"type": "int", "logicalType": "date"}},
            {"name": "t", "type": {"type": "long", "logicalType": "time-micros"}},
            {
                "name": "small",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
            },
            {
                "name": "wide",
                "type": {
                    "type": "fixed",
                    "name": "W",
                    "size": 16,
                    "logicalType": "decimal",
                    "precision": 38,
                    "scale": 10,
                },
            },
            {
                "name": "huge",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 60, "scale": 0},
            },
        ],
    }
    utc = dt.UTC
    table = pa.table(
        {
            "ts": pa.array(
                [dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=utc), None],
                pa.timestamp("us", tz="UTC"),
            ),
            "ts_ms": pa.array([0, -1], pa.timestamp("ms", tz="UTC")),
            "local": pa.array([dt.datetime(2024, 2, 29, 12, 0, 0, 1)] * 2, pa.timestamp("us")),
            "day": pa.array([dt.date(1, 1, 1), dt.date(9999, 12, 31)], pa.date32()),
            "t": pa.array([dt.time(23, 59, 59, 999999), dt.time(0)], pa.time64("us")),
            "small": pa.array([Decimal("-999.99"), Decimal("0.01")], pa.decimal128(5, 2)),
            "wide": pa.array(
                [Decimal("-" + "9" * 28 + "." + "9" * 10), Decimal("1E-10")], pa.decimal128(38, 10)
            ),
            "huge": pa.array([Decimal("9" * 60), Decimal("-" + "9" * 60)], pa.decimal256(60, 0)),
        }
    )

    decoded = decode_records(*_bounds(encode_records(table, schema))[:2], parse_avro_schema(schema))

    for name in table.column_names:
        assert decoded.column(name).equals(table.column(name)), name


def test_encode_records_decimal_bytes_are_minimal_twos_complement() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 0}}
        ],
    }
    table = pa.table(
        {"d": pa.array([Decimal(0), Decimal(-128), Decimal(128), Decimal(-1)], pa.decimal128(10, 0))}
    )

    assert encode_records(table, schema) == [b"\x02\x00", b"\x02\x80", b"\x04\x00\x80", b"\x02\xff"]


def test_encode_records_missing_nullable_column_writes_null() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": ["null", "string"], "default": None}],
    }

    assert encode_records(pa.table({"a": [3]}), schema) == [b"\x06\x00"]


def test_encode_records_missing_required_column_raises_column_not_found() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}]}

    with pytest.raises(ColumnNotFoundError, match="column 'a' is required"):
        encode_records(pa.table({"b": [1]}), schema)


def test_encode_records_uncastable_column_raises_write_error() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]}

    with pytest.raises(WriteError, match="column 'a' cannot be written as int32"):
        encode_records(pa.table({"a": pa.array([2**40])}), schema)
