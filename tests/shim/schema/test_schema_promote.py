"""Allowed type changes and the exact values Hudi reads after each of them."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pyarrow as pa
import pytest

from shim.schema import Conversion, conversion, is_direct_change
from shim.schema import types as t
from shim.schema.arrow import type_to_arrow
from shim.schema.casts import float_to_java_string, string_to_date
from shim.schema.promote import convert

D = Decimal


def _read(values, src, dst):
    arr = pa.array(values, type_to_arrow(src))
    out = convert(arr, src, dst)
    assert out.type == type_to_arrow(dst)
    return out.to_pylist()


# (file type, query type, file values, values read) for every change Hudi allows in one ALTER.
DIRECT_CASES = [
    (t.INT, t.LONG, [1, -(2**31), None], [1, -(2**31), None]),
    (t.INT, t.FLOAT, [16777217, -3], [16777216.0, -3.0]),
    (t.INT, t.DOUBLE, [2**31 - 1], [2147483647.0]),
    (t.INT, t.STRING, [123, -5, 0, None], ["123", "-5", "0", None]),
    (t.INT, t.DecimalType(5, 2), [123, -999, 1000], [D("123.00"), D("-999.00"), None]),
    (t.LONG, t.FLOAT, [2**53 + 1], [9007199254740992.0]),
    (t.LONG, t.DOUBLE, [2**53 + 1, -7], [9007199254740992.0, -7.0]),
    (t.LONG, t.STRING, [2**63 - 1], ["9223372036854775807"]),
    (t.LONG, t.DecimalType(20, 0), [2**63 - 1], [D("9223372036854775807")]),
    (t.LONG, t.DecimalType(4, 1), [999, 1000, -999], [D("999.0"), None, D("-999.0")]),
    (t.FLOAT, t.DOUBLE, [1.1, 0.1, 16777216.0, None], [1.1, 0.1, 16777216.0, None]),
    (t.FLOAT, t.STRING, [1.1, 100.0, 1e10, 1e-4, -0.5], ["1.1", "100.0", "1.0E10", "1.0E-4", "-0.5"]),
    (t.FLOAT, t.DecimalType(10, 2), [1.125, -1.125, 0.1], [D("1.13"), D("-1.13"), D("0.10")]),
    (
        t.DOUBLE,
        t.STRING,
        [0.1 + 0.2, 1e21, -0.0, 1234567.0],
        ["0.30000000000000004", "1.0E21", "-0.0", "1234567.0"],
    ),
    # 1.005 is 1.00499999999999989... in binary; Hudi rounds its text "1.005" HALF_UP.
    (t.DOUBLE, t.DecimalType(10, 2), [1.005, 2.5e-3, 1e300, -7.0], [D("1.01"), D("0.00"), None, D("-7.00")]),
    (t.DATE, t.STRING, [dt.date(2021, 3, 4), dt.date(1969, 12, 31)], ["2021-03-04", "1969-12-31"]),
    (
        t.DecimalType(10, 2),
        t.DecimalType(12, 4),
        [D("12.34"), D("-99999999.99")],
        [D("12.3400"), D("-99999999.9900")],
    ),
    (t.DecimalType(10, 2), t.DecimalType(12, 2), [D("12.34")], [D("12.34")]),
    (t.DecimalType(10, 2), t.STRING, [D("12.30"), D("-0.05")], ["12.30", "-0.05"]),
    (t.DecimalType(20, 10), t.STRING, [D("0E-10"), D("0.0000000100")], ["0E-10", "1.00E-8"]),
    (
        t.STRING,
        t.DATE,
        ["2021-03-04", " 2021-3-4T10:00 ", "2021-02-30", "bad", None],
        [dt.date(2021, 3, 4), dt.date(2021, 3, 4), None, None, None],
    ),
    (
        t.STRING,
        t.DecimalType(6, 2),
        [" 12.345 ", "-12.345", "abc", "1e3", "10000"],
        [D("12.35"), D("-12.35"), None, D("1000.00"), None],
    ),
]


@pytest.mark.parametrize(("src", "dst", "values", "expected"), DIRECT_CASES)
def test_convert_direct_change_reads_hudi_values(src, dst, values, expected):
    assert conversion(src, dst) is Conversion.DIRECT
    assert _read(values, src, dst) == expected


VIA_STRING_CASES = [
    # decimal(10,2) -> string -> decimal(5,1): HALF_UP, null when it no longer fits.
    (
        t.DecimalType(10, 2),
        t.DecimalType(5, 1),
        [D("1234.56"), D("-0.05"), D("9999.99")],
        [D("1234.6"), D("-0.1"), None],
    ),
    # int -> string -> date: the text "2021" is a year to Spark's date parser.
    (t.INT, t.DATE, [2021, 5], [dt.date(2021, 1, 1), None]),
    (t.DATE, t.DecimalType(10, 2), [dt.date(2021, 3, 4)], [None]),
    (t.DecimalType(6, 0), t.DATE, [D("2021")], [dt.date(2021, 1, 1)]),
]


@pytest.mark.parametrize(("src", "dst", "values", "expected"), VIA_STRING_CASES)
def test_convert_chain_through_string_reads_as_the_chain_would(src, dst, values, expected):
    assert conversion(src, dst) is Conversion.VIA_STRING
    assert not is_direct_change(src, dst)
    assert _read(values, src, dst) == expected


def test_convert_precision_family_rescales_time_units():
    assert conversion(t.TIMESTAMP_MILLIS, t.TIMESTAMP) is Conversion.PRECISION
    out = convert(pa.array([1500], pa.timestamp("ms", tz="UTC")), t.TIMESTAMP_MILLIS, t.TIMESTAMP)
    assert out.type == pa.timestamp("us", tz="UTC")
    assert out.cast(pa.int64()).to_pylist() == [1_500_000]
    assert conversion(t.TIME, t.TIME_MILLIS) is Conversion.PRECISION


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        (t.STRING, t.INT),
        (t.LONG, t.INT),
        (t.DOUBLE, t.FLOAT),
        (t.DOUBLE, t.LONG),
        (t.BOOLEAN, t.STRING),
        (t.STRING, t.BOOLEAN),
        (t.TIMESTAMP, t.STRING),
        (t.TIMESTAMP, t.DATE),
        (t.DATE, t.TIMESTAMP),
        (t.BINARY, t.STRING),
        (t.STRING, t.BINARY),
        (t.DecimalType(10, 2), t.DOUBLE),
        (t.UUID, t.STRING),
        (t.FixedType(4), t.BINARY),
        (t.FixedType(4), t.FixedType(8)),
        (t.TIMESTAMP, t.LOCAL_TIMESTAMP_MICROS),
    ],
)
def test_conversion_change_hudi_forbids_is_none(src, dst):
    assert conversion(src, dst) is None


@pytest.mark.parametrize(
    ("src", "dst", "allowed"),
    [
        (t.DecimalType(10, 2), t.DecimalType(12, 4), True),  # wider: more integer digits and scale
        (t.DecimalType(10, 2), t.DecimalType(11, 2), True),  # same scale, more precision
        (t.DecimalType(10, 2), t.DecimalType(10, 3), False),  # fewer integer digits
        (t.DecimalType(10, 2), t.DecimalType(9, 2), False),
        (t.INT, t.DecimalType(3, 2), True),  # Hudi allows any decimal from a number
        (t.STRING, t.DecimalType(3, 2), True),
    ],
)
def test_is_direct_change_decimal_rules_match_hudi(src, dst, allowed):
    assert is_direct_change(src, dst) is allowed


def test_float_to_java_string_specials_and_thresholds():
    values = [
        float("nan"),
        float("inf"),
        float("-inf"),
        0.0,
        1e-3,
        9.999e-4,
        9999999.0,
        1e7,
        123456789.0,
        None,
    ]
    assert float_to_java_string(pa.array(values, pa.float64())).to_pylist() == [
        "NaN",
        "Infinity",
        "-Infinity",
        "0.0",
        "0.001",
        "9.999E-4",
        "9999999.0",
        "1.0E7",
        "1.23456789E8",
        None,
    ]


def test_float_to_java_string_float32_uses_shortest_float_digits():
    assert float_to_java_string(pa.array([3.4028235e38, 0.3], pa.float32())).to_pylist() == [
        "3.4028235E38",
        "0.3",
    ]


def test_string_to_date_spark_forms():
    assert string_to_date(
        pa.array(["2020-02-29", "2021", "2021-07", "2021-07-04 12:00:00", "21-07-04", "2021-7-4x"])
    ).to_pylist() == [
        dt.date(2020, 2, 29),
        dt.date(2021, 1, 1),
        dt.date(2021, 7, 1),
        dt.date(2021, 7, 4),
        None,
        None,
    ]


def test_float_to_double_keeps_nan():
    out = _read([float("nan")], t.FLOAT, t.DOUBLE)
    assert math.isnan(out[0])


def _java_to_string(shortest: str) -> str:
    """Reference layout of Java's Double/Float.toString from a shortest repr (Python/numpy)."""
    value = Decimal(shortest)
    if value.is_nan():
        return "NaN"
    if value.is_infinite():
        return "-Infinity" if value < 0 else "Infinity"
    sign = "-" if value.is_signed() else ""
    if value == 0:
        return sign + "0.0"
    parts = value.as_tuple()
    assert isinstance(parts.exponent, int)
    all_digits = "".join(map(str, parts.digits))
    digits = all_digits.rstrip("0") or "0"
    sci = len(all_digits) + parts.exponent - 1
    if -3 <= sci < 7:
        if sci >= 0:
            padded = digits.ljust(sci + 1, "0")
            return f"{sign}{padded[: sci + 1]}.{padded[sci + 1 :] or '0'}"
        return f"{sign}0.{'0' * (-sci - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{sci}"


def test_float_to_java_string_matches_reference_across_magnitudes():
    import numpy as np

    rng = np.random.default_rng(7)
    values = rng.random(20_000) * 10.0 ** rng.integers(-12, 25, 20_000) * rng.choice([-1, 1], 20_000)
    values = np.concatenate(
        [values, np.round(values[:2000]), [0.0, -0.0, 1e-3, 1e7, 5e-324, 1.7976931348623157e308]]
    )
    got = float_to_java_string(pa.array(values, pa.float64())).to_pylist()
    assert got == [_java_to_string(repr(float(v))) for v in values]
    with np.errstate(over="ignore"):  # values beyond float range become infinities
        singles = values.astype(np.float32)
    got32 = float_to_java_string(pa.array(singles, pa.float32())).to_pylist()
    assert got32 == [_java_to_string(str(v)) for v in singles]


def test_convert_local_timestamp_and_hudi_0x_long_are_the_same_value():
    assert conversion(t.LOCAL_TIMESTAMP_MICROS, t.LONG) is Conversion.REINTERPRET
    assert conversion(t.LONG, t.LOCAL_TIMESTAMP_MILLIS) is Conversion.REINTERPRET
    out = convert(pa.array([1_000_000], pa.timestamp("us")), t.LOCAL_TIMESTAMP_MICROS, t.LONG)
    assert (out.type, out.to_pylist()) == (pa.int64(), [1_000_000])
    back = convert(pa.array([1_500], pa.int64()), t.LONG, t.LOCAL_TIMESTAMP_MILLIS)
    assert back.to_pylist() == [dt.datetime(1970, 1, 1, 0, 0, 1, 500_000)]
