"""Substrait filters (as pyarrow writes them) decoded into shim filter expressions by column name."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from shim.errors import InvalidFilterError
from shim.filters.substrait import conjuncts_from_substrait, filter_from_substrait

SCHEMA = pa.schema([
    ("id", pa.string()),
    ("x", pa.int64()),
    ("d", pa.date32()),
    ("st", pa.struct([("a", pa.int32()), ("l", pa.list_(pa.struct([("q", pa.int8())]))), ("b", pa.string())])),
    ("ts", pa.timestamp("us")),
    ("tz", pa.timestamp("us", "UTC")),
    ("dec", pa.decimal128(38, 4)),
    ("f", pa.float32()),
    ("flag", pa.bool_()),
    ("bin", pa.binary()),
    ("i8", pa.int8()),
    ("t", pa.time64("us")),
    ("z", pa.int32()),
])


def decode(expression: pc.Expression) -> str:
    return str(filter_from_substrait(bytes(expression.to_substrait(SCHEMA))))


@pytest.mark.parametrize(
    ("expression", "text"),
    [
        ((pc.field("x") > -3) & pc.field("id").isin(["a", "b'c"]), "x > -3 AND id IN ('a', 'b''c')"),
        ((pc.field("st", "a") == pa.scalar(1, pa.int32())) | ~pc.field("d").is_null(), "st.a = 1 OR NOT d IS NULL"),
        (pc.field("st", "b") != "q", "st.b != 'q'"),
        (pc.field("d") == pa.scalar(dt.date(2024, 2, 29)), "d = DATE '2024-02-29'"),
        (pc.field("ts") >= pa.scalar(dt.datetime(2024, 1, 1, 1, 2, 3, 4), pa.timestamp("us")),
         "ts >= TIMESTAMP '2024-01-01 01:02:03.000004'"),
        (pc.field("tz") < pa.scalar(dt.datetime(2024, 1, 1, tzinfo=dt.UTC), pa.timestamp("us", "UTC")),
         "tz < TIMESTAMP '2024-01-01 00:00:00+00:00'"),
        (pc.field("dec") == pa.scalar(Decimal("-12345678901234567890123456789012.3456"), pa.decimal128(38, 4)),
         "dec = -12345678901234567890123456789012.3456"),
        (pc.field("f") <= pa.scalar(1.5, pa.float32()), "f <= 1.5e0"),
        (pc.field("flag") == True, "flag = TRUE"),
        (pc.field("i8") != pa.scalar(-2, pa.int8()), "i8 != -2"),
        (pc.field("t") > pa.scalar(dt.time(1, 2, 3), pa.time64("us")), "t > '01:02:03'"),
        (pc.field("x").is_valid(), "x IS NOT NULL"),
        (pa.scalar(3) < pc.field("x"), "x > 3"),
        (pc.field("z") < 0, "z < 0"),
    ],
)
def test_filter_from_substrait_reads_pushed_filters_by_name(expression, text):
    assert decode(expression) == text


def test_filter_from_substrait_binary_literal_keeps_bytes():
    expr = filter_from_substrait(bytes((pc.field("bin") == pa.scalar(b"\x00\xff", pa.binary())).to_substrait(SCHEMA)))
    assert expr.literal.value == b"\x00\xff"


def test_filter_from_substrait_references_by_name_not_position():
    # The same column in another position of the base schema decodes to the same name.
    other = pa.schema([("z", pa.int32()), ("x", pa.int64())])
    assert str(filter_from_substrait(bytes((pc.field("x") > 1).to_substrait(other)))) == "x > 1"


def test_filter_from_substrait_unsupported_function_names_it():
    with pytest.raises(InvalidFilterError, match="unsupported substrait filter"):
        decode(pc.field("x") + 1 > 3)


def test_conjuncts_from_substrait_marks_unsupported_terms():
    expression = (pc.field("x") > 1) & ((pc.field("x") + 1) > 3) & pc.field("id").isin(["a"])
    terms = conjuncts_from_substrait(bytes(expression.to_substrait(SCHEMA)))
    assert [str(t) if t is not None else None for t in terms] == ["x > 1", None, "id IN ('a')"]


@pytest.mark.parametrize("data", [b"", b"\x00", b"\xff\xff\xff", b"\x1a\x05abc", b"garbage that is not protobuf"])
def test_filter_from_substrait_malformed_raises_invalid_filter(data):
    with pytest.raises(InvalidFilterError):
        filter_from_substrait(data)


def test_decoders_on_corrupted_messages_only_raise_invalid_filter():
    rng = random.Random(5)
    valid = bytes(((pc.field("x") > 1) & (pc.field("st", "a") == pa.scalar(1, pa.int32()))).to_substrait(SCHEMA))
    for _ in range(500):
        data = bytearray(valid)
        for _ in range(rng.randint(1, 6)):
            where = rng.randrange(len(data))
            choice = rng.random()
            if choice < 0.6:
                data[where] = rng.randrange(256)
            elif choice < 0.8:
                del data[where]
            else:
                data.insert(where, rng.randrange(256))
        for decoder in (filter_from_substrait, conjuncts_from_substrait):
            try:
                decoder(bytes(data))
            except InvalidFilterError:
                pass
