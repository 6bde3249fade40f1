from __future__ import annotations

import datetime as dt
import zoneinfo
from decimal import Decimal

import pyarrow as pa
import pytest

from shim.errors import ColumnNotFoundError, InvalidFilterError
from shim.filters import (
    And,
    Column,
    Comparison,
    InList,
    IsNull,
    Literal,
    Not,
    Or,
    bind,
    parse_filter,
    resolve_type,
    to_expr,
)

SCHEMA = pa.schema(
    [
        ("city", pa.string()),
        ("big_text", pa.large_string()),
        ("fare", pa.float64()),
        ("ratio", pa.float32()),
        ("n", pa.int64()),
        ("tiny", pa.int8()),
        ("price", pa.decimal128(10, 2)),
        ("huge", pa.decimal256(50, 4)),
        ("flag", pa.bool_()),
        ("d", pa.date32()),
        ("d64", pa.date64()),
        ("ts", pa.timestamp("us")),
        ("ts_s", pa.timestamp("s")),
        ("ts_utc", pa.timestamp("us", tz="UTC")),
        ("ts_ny", pa.timestamp("us", tz="America/New_York")),
        ("ts_plus1", pa.timestamp("ms", tz="+01:00")),
        ("t", pa.time32("s")),
        ("raw", pa.binary()),
        ("fixed", pa.binary(2)),
        ("cat", pa.dictionary(pa.int32(), pa.string())),
        ("tags", pa.list_(pa.string())),
        ("props", pa.map_(pa.string(), pa.string())),
        ("address", pa.struct([("city", pa.string()), ("geo", pa.struct([("lat", pa.float64())]))])),
        ("half", pa.float16()),
        ("elapsed", pa.duration("s")),
        ("City", pa.string()),
        ("a.b", pa.int32()),
    ]
)


def bound_literal(column: str, value: object) -> Literal:
    expr = bind(to_expr([(column, "=", value)]), SCHEMA)  # type: ignore[arg-type]
    assert isinstance(expr, Comparison)
    return expr.literal


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("city", "sf", Literal("sf", pa.string())),
        ("big_text", "sf", Literal("sf", pa.large_string())),
        ("n", 10, Literal(10, pa.int64())),
        ("n", "10", Literal(10, pa.int64())),
        ("n", " -7 ", Literal(-7, pa.int64())),
        ("n", Decimal("10.0"), Literal(10, pa.int64())),
        ("n", 3.0, Literal(3, pa.int64())),
        ("tiny", 127, Literal(127, pa.int8())),
        ("fare", 10, Literal(10.0, pa.float64())),
        ("fare", "10.5", Literal(10.5, pa.float64())),
        ("fare", Decimal("10.5"), Literal(10.5, pa.float64())),
        ("fare", 1e3, Literal(1000.0, pa.float64())),
        ("ratio", Decimal("0.1"), Literal(0.1, pa.float32())),
        ("price", Decimal("10.55"), Literal(Decimal("10.55"), pa.decimal128(10, 2))),
        ("price", Decimal("10.50"), Literal(Decimal("10.50"), pa.decimal128(10, 2))),
        ("price", 10, Literal(Decimal(10), pa.decimal128(10, 2))),
        ("price", "10.5", Literal(Decimal("10.5"), pa.decimal128(10, 2))),
        ("price", 0.1, Literal(Decimal("0.1"), pa.decimal128(10, 2))),
        ("price", Decimal("10.555"), Literal(Decimal("10.555"), pa.decimal128(11, 3))),
        ("price", Decimal(123456789012), Literal(Decimal(123456789012), pa.decimal128(14, 2))),
        ("huge", Decimal("1.5"), Literal(Decimal("1.5"), pa.decimal256(50, 4))),
        ("flag", True, Literal(True, pa.bool_())),
        ("flag", "FALSE", Literal(False, pa.bool_())),
        ("d", "2024-01-31", Literal(dt.date(2024, 1, 31), pa.date32())),
        ("d", dt.date(2024, 1, 31), Literal(dt.date(2024, 1, 31), pa.date32())),
        ("d", dt.datetime(2024, 1, 31), Literal(dt.date(2024, 1, 31), pa.date32())),
        ("d64", "2024-01-31", Literal(dt.date(2024, 1, 31), pa.date64())),
        ("ts", "2024-01-31 10:00:00", Literal(dt.datetime(2024, 1, 31, 10), pa.timestamp("us"))),
        ("ts", dt.date(2024, 1, 31), Literal(dt.datetime(2024, 1, 31), pa.timestamp("us"))),
        (
            "ts",
            dt.datetime(2024, 1, 31, 10, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            Literal(dt.datetime(2024, 1, 31, 8), pa.timestamp("us")),
        ),
        ("ts_s", "2024-01-31 10:00:01", Literal(dt.datetime(2024, 1, 31, 10, 0, 1), pa.timestamp("s"))),
        (
            "ts_s",
            "2024-01-31 10:00:01.5",
            Literal(dt.datetime(2024, 1, 31, 10, 0, 1, 500000), pa.timestamp("us")),
        ),
        (
            "ts_utc",
            "2024-01-31 10:00:00",
            Literal(dt.datetime(2024, 1, 31, 10, tzinfo=dt.UTC), pa.timestamp("us", tz="UTC")),
        ),
        (
            "ts_utc",
            "2024-01-31 10:00:00-05:00",
            Literal(
                dt.datetime(2024, 1, 31, 10, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
                pa.timestamp("us", tz="UTC"),
            ),
        ),
        (
            "ts_ny",
            "2024-07-01 10:00:00",
            Literal(
                dt.datetime(2024, 7, 1, 10, tzinfo=zoneinfo.ZoneInfo("America/New_York")),
                pa.timestamp("us", tz="America/New_York"),
            ),
        ),
        (
            "ts_plus1",
            "2024-01-31 10:00:00",
            Literal(
                dt.datetime(2024, 1, 31, 10, tzinfo=dt.timezone(dt.timedelta(hours=1))),
                pa.timestamp("ms", tz="+01:00"),
            ),
        ),
        ("t", "10:00:01", Literal(dt.time(10, 0, 1), pa.time32("s"))),
        ("t", "10:00:01.25", Literal(dt.time(10, 0, 1, 250000), pa.time64("us"))),
        ("raw", "abc", Literal(b"abc", pa.binary())),
        ("raw", b"\x00\xff", Literal(b"\x00\xff", pa.binary())),
        ("fixed", "ab", Literal(b"ab", pa.binary(2))),
        ("cat", "x", Literal("x", pa.string())),
        ("address.city", "sf", Literal("sf", pa.string())),
        ("address.geo.lat", 1, Literal(1.0, pa.float64())),
        ("`a.b`", "5", Literal(5, pa.int32())),
    ],
)
def test_bind_literal_coerced_to_column_type(column: str, value: object, expected: Literal) -> None:
    assert bound_literal(column, value) == expected


def test_bind_naive_timestamp_on_zoned_column_means_wall_clock_in_that_zone() -> None:
    literal = bound_literal("ts_ny", "2024-07-01 10:00:00")
    utc = pa.scalar(literal.value, type=literal.arrow_type).cast(pa.timestamp("us", tz="UTC")).as_py()
    assert utc == dt.datetime(2024, 7, 1, 14, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("filter", "message"),
    [
        ("fare = 'abc'", "cannot compare column fare (double) with 'abc': not a number"),
        ("fare = 'nan'", "cannot compare column fare (double) with 'nan': not a finite double"),
        ("fare = TRUE", "cannot compare column fare (double) with TRUE: a boolean is not a number"),
        ("city = 10", "cannot compare column city (string) with 10: quote the value to compare text"),
        ("city = DATE '2024-01-01'", "cannot compare column city (string) with DATE '2024-01-01'"),
        ("n = 10.5", "cannot compare column n (int64) with 10.5: not an integer"),
        ("n = 'ten'", "cannot compare column n (int64) with 'ten': not an integer"),
        ("n = '1.0'", "cannot compare column n (int64) with '1.0': not an integer"),
        ("n = FALSE", "cannot compare column n (int64) with FALSE: a boolean is not a number"),
        ("tiny > 300", "cannot compare column tiny (int8) with 300: "),
        ("price = 'x'", "cannot compare column price (decimal128(10, 2)) with 'x': not a number"),
        ("flag = 1", "cannot compare column flag (bool) with 1: use TRUE or FALSE"),
        ("flag = 'yes'", "cannot compare column flag (bool) with 'yes': use TRUE or FALSE"),
        (
            "d = '31/01/2024'",
            "cannot compare column d (date32[day]) with '31/01/2024': '31/01/2024' is not a date",
        ),
        ("d = TIMESTAMP '2024-01-01 10:00:00'", "a timestamp with a time of day or a zone is not a date"),
        (
            "d = 20240101",
            "cannot compare column d (date32[day]) with 20240101: write a date as DATE 'YYYY-MM-DD'",
        ),
        ("ts = 'soon'", "cannot compare column ts (timestamp[us]) with 'soon': 'soon' is not a timestamp"),
        ("ts = 5", "write a timestamp as TIMESTAMP 'YYYY-MM-DD HH:MM:SS'"),
        (
            "t = 'noon'",
            "cannot compare column t (time32[s]) with 'noon': write a time as 'HH:MM:SS[.ffffff]'",
        ),
        ("raw = 1", "cannot compare column raw (binary) with 1: quote the value to compare bytes"),
        ("fixed = 'abc'", "cannot compare column fixed (fixed_size_binary[2]) with 'abc': "),
        ("tags = 'x'", "cannot compare column tags (list<item: string>) with 'x': list, map and struct"),
        (
            "props IN ('x')",
            "cannot compare column props (map<string, string>) with 'x': list, map and struct",
        ),
        ("address = 'x'", "only support IS [NOT] NULL; compare one of their fields instead"),
        ("half > 1", "cannot compare column half (halffloat) with 1: Arrow cannot compare halffloat columns"),
        (
            "elapsed > 1",
            "cannot compare column elapsed (duration[s]) with 1: filters do not support duration[s]",
        ),
        ("n IN (1, 'x')", "cannot compare column n (int64) with 'x': not an integer"),
        ("n = 1 AND NOT (city = 'a' OR fare = 'z')", "cannot compare column fare (double) with 'z'"),
    ],
)
def test_bind_incompatible_literal_raises_naming_column_and_type(filter: str, message: str) -> None:
    with pytest.raises(InvalidFilterError) as info:
        bind(parse_filter(filter), SCHEMA)
    assert message in str(info.value)
    assert info.value.column is not None and info.value.column in filter


def test_bind_missing_column_raises_listing_available_columns() -> None:
    with pytest.raises(ColumnNotFoundError) as info:
        bind(parse_filter("nope = 1"), pa.schema([("a", pa.int32()), ("b", pa.string())]))
    assert str(info.value) == "filter column 'nope' not found; available columns: a, b"
    assert info.value.column == "nope"


def test_bind_missing_column_with_other_case_suggests_it() -> None:
    with pytest.raises(ColumnNotFoundError, match="Names are case-sensitive: did you mean 'Fare'"):
        bind(parse_filter("fare = 1"), pa.schema([("Fare", pa.float64())]))


def test_bind_dotted_name_of_top_level_column_suggests_quoting() -> None:
    schema = pa.schema([("a.b", pa.int32())])
    with pytest.raises(ColumnNotFoundError, match=r"quote it: `a.b`"):
        bind(parse_filter("a.b = 1"), schema)


def test_bind_missing_struct_field_lists_fields() -> None:
    with pytest.raises(ColumnNotFoundError) as info:
        bind(parse_filter("address.zip = '1'"), SCHEMA)
    assert str(info.value) == "filter column 'address.zip' not found; fields of address: city, geo"


def test_bind_path_through_non_struct_raises() -> None:
    with pytest.raises(
        ColumnNotFoundError, match="filter column 'city.x' not found: city is string, not a struct"
    ):
        bind(parse_filter("city.x = 1"), SCHEMA)


def test_bind_long_schema_lists_first_columns_and_count() -> None:
    schema = pa.schema([(f"c{i}", pa.int32()) for i in range(50)])
    with pytest.raises(ColumnNotFoundError, match=r"c38, c39, \.\.\. \(50 in all\)$"):
        bind(parse_filter("x = 1"), schema)


def test_bind_duplicate_column_name_raises_ambiguous() -> None:
    schema = pa.schema([("a", pa.int32()), ("a", pa.string())])
    with pytest.raises(InvalidFilterError, match="filter column 'a' is ambiguous: 'a' appears 2 times"):
        bind(parse_filter("a = 1"), schema)


def test_bind_is_null_on_nested_columns_is_allowed_and_checked() -> None:
    expr = parse_filter("tags IS NULL AND address IS NOT NULL AND props IS NULL")
    assert bind(expr, SCHEMA) == expr
    with pytest.raises(ColumnNotFoundError):
        bind(parse_filter("missing IS NULL"), SCHEMA)


def test_bind_keeps_tree_shape_and_types_every_literal() -> None:
    expr = parse_filter("NOT (n IN (1, '2') OR city = 'sf') AND price NOT IN (1.5)")
    assert bind(expr, SCHEMA) == And(
        Not(
            Or(
                InList(Column(("n",)), (Literal(1, pa.int64()), Literal(2, pa.int64()))),
                Comparison("=", Column(("city",)), Literal("sf", pa.string())),  # type: ignore[arg-type]
            )
        ),
        InList(Column(("price",)), (Literal(Decimal("1.5"), pa.decimal128(10, 2)),), negated=True),
    )


def test_bind_twice_gives_same_result() -> None:
    once = bind(parse_filter("ts_s >= '2024-01-01 00:00:00.5' AND price < 10.555"), SCHEMA)
    assert bind(once, SCHEMA) == once


def test_bind_str_of_bound_expr_rebinds_to_equal_expr() -> None:
    bound = bind(
        parse_filter("raw = 'x' AND t < '10:00:00' AND ts_utc > '2024-01-01' AND d = '2024-01-01'"), SCHEMA
    )
    assert bind(parse_filter(str(bound)), SCHEMA) == bound


def test_resolve_type_gives_nested_field_type() -> None:
    assert resolve_type(Column(("address", "geo", "lat")), SCHEMA) == pa.float64()
    assert resolve_type(Column(("cat",)), SCHEMA) == pa.dictionary(pa.int32(), pa.string())
    assert isinstance(bind(parse_filter("cat IS NULL"), SCHEMA), IsNull)
