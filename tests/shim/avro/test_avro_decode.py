"""decode_records against fastavro on random and hand-made records, projection and corruption."""

from __future__ import annotations

import copy
import io
import random
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pytest
from avro_cases import LEAVES, SchemaMaker, decode_with_fastavro, encode_all, value

from shim.avro import avro_to_arrow_schema, decode_records, parse_avro_schema
from shim.errors import ColumnNotFoundError, CorruptFileError, UnsupportedFeatureError


def _decode(schema: dict[str, Any], buf: bytes, starts: np.ndarray, ends: np.ndarray, **kw: Any) -> pa.Table:
    return decode_records(buf, starts, parse_avro_schema(schema), ends=ends, **kw)


@pytest.mark.parametrize("seed", range(40))
def test_decode_records_random_schema_matches_fastavro(seed: int) -> None:
    rng = random.Random(seed)
    schema = SchemaMaker(rng).record(fields=rng.randint(3, 9))
    records = [value(rng, schema) for _ in range(rng.choice([1, 7, 60]))]
    buf, starts, ends = encode_all(schema, records, rng)

    table = _decode(schema, buf, starts, ends)

    assert table.schema == avro_to_arrow_schema(schema)
    assert table.to_pylist() == decode_with_fastavro(schema, buf, starts, ends)


@pytest.mark.parametrize("seed", range(10))
def test_decode_records_random_projection_matches_full_decode(seed: int) -> None:
    rng = random.Random(1000 + seed)
    schema = SchemaMaker(rng).record(fields=6)
    records = [value(rng, schema) for _ in range(30)]
    buf, starts, ends = encode_all(schema, records, rng)
    names = [f["name"] for f in schema["fields"]]
    wanted = rng.sample(names, 3)

    full = _decode(schema, buf, starts, ends)
    projected = _decode(schema, buf, starts, ends, columns=list(reversed(wanted)))

    assert projected.column_names == [n for n in names if n in wanted]
    assert projected.equals(full.select(projected.column_names))


def test_decode_records_every_leaf_type_nullable_matches_fastavro() -> None:
    rng = random.Random(5)
    fields = [{"name": f"c{i}", "type": ["null", t]} for i, t in enumerate(LEAVES)]
    fields += [
        {
            "name": f"d{p}",
            "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": p, "scale": 2}],
        }
        for p in (4, 18, 38, 60)
    ]
    schema = {"type": "record", "name": "AllLeaves", "fields": fields}
    records = [value(rng, schema) for _ in range(300)]
    records.append({f["name"]: None for f in fields})
    buf, starts, ends = encode_all(schema, records, rng)

    table = _decode(schema, buf, starts, ends)

    assert table.to_pylist() == decode_with_fastavro(schema, buf, starts, ends)
    assert table.schema.field("c10").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("d60").type == pa.decimal256(60, 2)


def test_decode_records_hudi_style_fixed_decimals_match_fastavro() -> None:
    rng = random.Random(11)
    fields = []
    for precision in (1, 5, 10, 15, 18, 20, 28, 38):
        size = len((10**precision).to_bytes(17, "big", signed=True).lstrip(b"\x00")) + 1
        fixed = {
            "type": "fixed",
            "name": "fixed",
            "namespace": f"hoodie.t.t_record.p{precision}",
            "size": size,
        }
        fixed.update(logicalType="decimal", precision=precision, scale=min(precision, 5))
        fields.append({"name": f"p{precision}", "type": ["null", fixed], "default": None})
    schema = {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": fields}
    records = [value(rng, schema) for _ in range(200)]
    buf, starts, ends = encode_all(schema, records, rng)

    assert _decode(schema, buf, starts, ends).to_pylist() == decode_with_fastavro(schema, buf, starts, ends)


def test_decode_records_starts_out_of_buffer_order_matches_fastavro() -> None:
    rng = random.Random(3)
    schema = SchemaMaker(rng).record(fields=8)
    records = [value(rng, schema) for _ in range(40)]
    buf, starts, ends = encode_all(schema, records, rng)
    order = np.array(rng.sample(range(40), 40))

    table = _decode(schema, buf, starts[order], ends[order])

    assert table.to_pylist() == decode_with_fastavro(schema, buf, starts[order], ends[order])


def test_decode_records_all_null_and_never_null_columns_keep_types() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "always_null", "type": ["null", "string"]},
            {"name": "never_null", "type": ["null", "long"]},
            {
                "name": "null_struct",
                "type": ["null", {"type": "record", "name": "s", "fields": [{"name": "x", "type": "int"}]}],
            },
        ],
    }
    records = [{"always_null": None, "never_null": i - 2, "null_struct": None} for i in range(5)]
    buf, starts, ends = encode_all(schema, records, random.Random(0), gaps=False)

    table = _decode(schema, buf, starts, ends)

    assert table.column("always_null").type == pa.string()
    assert table.column("always_null").null_count == 5
    assert table.column("never_null").to_pylist() == [-2, -1, 0, 1, 2]
    assert table.column("null_struct").to_pylist() == [None] * 5


def test_decode_records_array_with_negative_block_count_reads_items() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "xs", "type": {"type": "array", "items": "long"}}],
    }
    # One block of -2 items (count negated, then the block's byte size), one block of 1, end.
    buf = bytes([0x03, 0x04, 0x02, 0x04, 0x02, 0x06, 0x00])

    table = decode_records(buf, np.array([0]), parse_avro_schema(schema), ends=np.array([len(buf)]))

    assert table.column("xs").to_pylist() == [[1, 2, 3]]


def test_decode_records_timestamp_nanos_keeps_integer_value() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "ns", "type": {"type": "long", "logicalType": "timestamp-nanos"}},
            {"name": "local_ns", "type": {"type": "long", "logicalType": "local-timestamp-nanos"}},
        ],
    }
    buf, starts, ends = encode_all(
        schema, [{"ns": 1_700_000_000_123_456_789, "local_ns": -5}], random.Random(0)
    )

    table = _decode(schema, buf, starts, ends)

    assert table.schema.field("ns").type == pa.timestamp("ns", tz="UTC")
    assert table.column("ns").cast(pa.int64()).to_pylist() == [1_700_000_000_123_456_789]
    assert table.column("local_ns").type == pa.timestamp("ns")
    assert table.column("local_ns").cast(pa.int64()).to_pylist() == [-5]


def test_decode_records_no_records_gives_empty_typed_table() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": ["null", "string"]}]}

    table = decode_records(b"", np.array([], dtype=np.int64), parse_avro_schema(schema))

    assert table.num_rows == 0
    assert table.schema == pa.schema([pa.field("a", pa.string())])


def test_decode_records_empty_projection_keeps_row_count() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}]}
    buf, starts, ends = encode_all(schema, [{"a": 1}, {"a": 2}], random.Random(0))

    table = _decode(schema, buf, starts, ends, columns=[])

    assert (table.num_rows, table.num_columns) == (2, 0)


def test_decode_records_unknown_column_raises_column_not_found() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}]}
    buf, starts, ends = encode_all(schema, [{"a": 1}], random.Random(0))

    with pytest.raises(ColumnNotFoundError, match="'nope' is not in the Avro schema") as info:
        _decode(schema, buf, starts, ends, columns=["a", "nope"])
    assert info.value.column == "nope"


def test_decode_records_multi_branch_union_raises_unsupported_naming_field() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {
                "name": "nested",
                "type": {
                    "type": "record",
                    "name": "n",
                    "fields": [{"name": "either", "type": ["null", "long", "string"]}],
                },
            }
        ],
    }

    with pytest.raises(UnsupportedFeatureError, match="'nested.either'") as info:
        decode_records(b"", np.array([], dtype=np.int64), parse_avro_schema(schema))
    assert info.value.feature == "avro-union"


def test_decode_records_length_mismatch_raises_corrupt_with_record_offset() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": "string"}],
    }
    buf, starts, ends = encode_all(
        schema, [{"a": 1, "b": "x"}, {"a": 2, "b": "yy"}], random.Random(0), gaps=False
    )
    ends = ends.copy()
    ends[1] += 1  # the record claims one byte more than it decodes to
    buf += b"\x00"

    with pytest.raises(
        CorruptFileError, match="record 1 at byte offset 3 is corrupt: it decodes to 4 bytes"
    ) as info:
        decode_records(buf, starts, parse_avro_schema(schema), ends=ends, path="/t/.f.log.1_0-1-1")
    assert (info.value.path, info.value.offset) == ("/t/.f.log.1_0-1-1", 3)


def test_decode_records_string_past_record_end_raises_corrupt() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
    buf = bytes([0x7E]) + b"abc"  # claims 63 bytes

    with pytest.raises(CorruptFileError, match="a length of 63 bytes runs past the record"):
        decode_records(buf, np.array([0]), parse_avro_schema(schema), ends=np.array([4]))


def test_decode_records_invalid_utf8_raises_corrupt() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": ["null", "string"]}]}
    buf = bytes([0x02, 0x02, ord("a"), 0x02, 0x04, 0xC3, 0x28])

    with pytest.raises(
        CorruptFileError, match="record 1 at byte offset 3 is corrupt: a string is not valid UTF-8"
    ):
        decode_records(buf, np.array([0, 3]), parse_avro_schema(schema), ends=np.array([3, 7]))


def test_decode_records_union_branch_out_of_range_raises_corrupt() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": ["null", "long"]}]}

    with pytest.raises(CorruptFileError, match="union branch 2 does not exist"):
        decode_records(bytes([0x04, 0x02]), np.array([0]), parse_avro_schema(schema), ends=np.array([2]))


def test_decode_records_decimal_wider_than_precision_storage_raises_corrupt() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 0}}
        ],
    }
    payload = b"\x01" + b"\x00" * 16  # 2**128: does not fit 16 bytes
    buf = bytes([len(payload) * 2]) + payload

    with pytest.raises(CorruptFileError, match="a decimal exceeds decimal128"):
        decode_records(buf, np.array([0]), parse_avro_schema(schema), ends=np.array([len(buf)]))


def test_decode_records_decimal_with_sign_extension_bytes_reads_value() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 1}}
        ],
    }
    payload = b"\xff" * 18 + b"\x85"  # -123 sign-extended to 19 bytes
    buf = bytes([len(payload) * 2]) + payload

    table = decode_records(buf, np.array([0]), parse_avro_schema(schema), ends=np.array([len(buf)]))

    assert str(table.column("d")[0].as_py()) == "-12.3"


def test_decode_records_unprojected_nested_fields_are_skipped_exactly() -> None:
    rng = random.Random(21)
    maker = SchemaMaker(rng)
    schema = {
        "type": "record",
        "name": "outer",
        "fields": [
            {"name": "skip_me", "type": {"type": "array", "items": maker.record(1, fields=3)}},
            {"name": "skip_map", "type": {"type": "map", "values": ["null", "string"]}},
            {"name": "keep", "type": "long"},
            {"name": "tail", "type": ["null", {"type": "array", "items": "double"}]},
        ],
    }
    records = [value(rng, schema) for _ in range(50)]
    buf, starts, ends = encode_all(schema, records, rng)

    table = _decode(schema, buf, starts, ends, columns=["keep"])

    assert table.column("keep").to_pylist() == [r["keep"] for r in records]


def test_decode_records_recursive_schema_from_fastavro_roundtrip_is_unsupported() -> None:
    schema = {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]}

    with pytest.raises(UnsupportedFeatureError) as info:
        parse_avro_schema(copy.deepcopy(schema))
    assert info.value.feature == "avro-recursive-type"


def test_decode_records_hudi_meta_schema_reads_fastavro_block() -> None:
    schema = {
        "type": "record",
        "name": "trips_record",
        "namespace": "hoodie.trips",
        "fields": [
            {"name": n, "type": ["null", "string"], "default": None}
            for n in ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key"]
        ]
        + [{"name": "fare", "type": ["null", "double"], "default": None}],
    }
    parsed = fastavro.parse_schema(schema)
    out = io.BytesIO()
    fastavro.schemaless_writer(
        out,
        parsed,
        {"_hoodie_commit_time": "1", "_hoodie_commit_seqno": None, "_hoodie_record_key": "k", "fare": 2.5},
    )
    buf = out.getvalue()

    table = decode_records(buf, np.array([0]), parse_avro_schema(schema), ends=np.array([len(buf)]))

    assert table.to_pylist() == [
        {"_hoodie_commit_time": "1", "_hoodie_commit_seqno": None, "_hoodie_record_key": "k", "fare": 2.5}
    ]
