from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from shim.errors import InvalidFilterError
from shim.filters import (
    And,
    Column,
    CompareOp,
    Comparison,
    InList,
    Literal,
    Not,
    Or,
    and_all,
    conjuncts,
    parse_filter,
    referenced_columns,
)


def eq(name: str, value: object) -> Comparison:
    return Comparison(CompareOp.EQ, Column((name,)), Literal(value))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "sql"),
    [
        ("sf", "'sf'"),
        ("it's", "'it''s'"),
        (10, "10"),
        (-3, "-3"),
        (True, "TRUE"),
        (False, "FALSE"),
        (Decimal("10.50"), "10.50"),
        (Decimal("1E+3"), "1000.0"),
        (Decimal("-0.001"), "-0.001"),
        (1.5, "1.5e0"),
        (1e16, "1e+16"),
        (-2.5e-7, "-2.5e-07"),
        (dt.date(2024, 1, 31), "DATE '2024-01-31'"),
        (dt.datetime(2024, 1, 31, 10, 0, 0, 5), "TIMESTAMP '2024-01-31 10:00:00.000005'"),
        (dt.datetime(2024, 1, 31, 10, tzinfo=dt.UTC), "TIMESTAMP '2024-01-31 10:00:00+00:00'"),
        (dt.time(10, 30), "'10:30:00'"),
        (b"raw", "'raw'"),
    ],
)
def test_literal_str_renders_sql(value: object, sql: str) -> None:
    assert str(Literal(value)) == sql  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "city = 'sf' AND fare > 10.5",
        "a = 1 OR b = 2 AND c = 3",
        "(a = 1 OR b = 2) AND c = 3",
        "a = 1 AND (b = 2 AND c = 3)",
        "a = 1 OR (b = 2 OR c = 3)",
        "NOT (a = 1 OR b IS NULL)",
        "NOT NOT a != 1",
        "NOT a IN (1, 2) AND b NOT IN ('x', 'y''z')",
        "`my col`.`in` <= DATE '2024-01-31' OR `date` > TIMESTAMP '2024-01-31 10:00:00.25+01:00'",
        "x >= -1.5e3 AND y < -0.5",
        "flag = TRUE OR flag IS NOT NULL",
    ],
)
def test_str_parse_round_trip_gives_equal_expr(text: str) -> None:
    expr = parse_filter(text)
    assert parse_filter(str(expr)) == expr


def test_str_renders_minimal_parentheses() -> None:
    a, b, c = eq("a", 1), eq("b", 2), eq("c", 3)
    assert str(And(Or(a, b), c)) == "(a = 1 OR b = 2) AND c = 3"
    assert str(Or(a, And(b, c))) == "a = 1 OR b = 2 AND c = 3"
    assert str(Or(Or(a, b), c)) == "a = 1 OR b = 2 OR c = 3"
    assert str(Or(a, Or(b, c))) == "a = 1 OR (b = 2 OR c = 3)"
    assert str(Not(And(a, b))) == "NOT (a = 1 AND b = 2)"
    assert str(Not(a)) == "NOT a = 1"


def test_column_str_quotes_names_that_are_not_bare_words() -> None:
    assert str(Column(("a", "b"))) == "a.b"
    assert str(Column(("a.b",))) == "`a.b`"
    assert str(Column(("and",))) == "`and`"
    assert str(Column(("Date",))) == "`Date`"
    assert str(Column(("1st",))) == "`1st`"
    assert str(Column(("tick`s",))) == "`tick``s`"


def test_column_empty_path_raises() -> None:
    with pytest.raises(InvalidFilterError, match="one or more non-empty names"):
        Column(())
    with pytest.raises(InvalidFilterError, match="one or more non-empty names"):
        Column(("a", ""))


def test_literal_equality_distinguishes_python_and_arrow_types() -> None:
    assert Literal(1) != Literal(True)
    assert Literal(1) != Literal(1.0)
    assert Literal(Decimal("1.5")) != Literal(1.5)
    assert Literal(dt.date(2024, 1, 1)) != Literal(dt.datetime(2024, 1, 1))
    assert Literal(1) != Literal(1, pa.int32())
    assert Literal(1, pa.int32()) == Literal(1, pa.int32())
    assert len({Literal(1), Literal(1), Literal(True)}) == 2


@pytest.mark.parametrize(
    "value", [None, float("nan"), float("inf"), Decimal("NaN"), Decimal("sNaN"), Decimal("-Infinity"), [1]]
)
def test_literal_unsupported_value_raises(value: object) -> None:
    with pytest.raises(InvalidFilterError, match="not supported|unsupported literal"):
        Literal(value)  # type: ignore[arg-type]


def test_comparison_accepts_operator_text_and_parses_it_once() -> None:
    expr = Comparison("<>", Column(("a",)), Literal(1))  # type: ignore[arg-type]
    assert expr.op is CompareOp.NE
    with pytest.raises(InvalidFilterError, match="unknown comparison operator '~'"):
        Comparison("~", Column(("a",)), Literal(1))  # type: ignore[arg-type]


def test_inlist_empty_values_raises() -> None:
    with pytest.raises(InvalidFilterError, match="IN list on column a needs at least one value"):
        InList(Column(("a",)), ())


def test_conjuncts_splits_only_top_level_ands() -> None:
    a, b, c, d = eq("a", 1), eq("b", 2), eq("c", 3), eq("d", 4)
    assert conjuncts(And(And(a, b), And(c, d))) == [a, b, c, d]
    assert conjuncts(Or(a, And(b, c))) == [Or(a, And(b, c))]
    assert conjuncts(Not(And(a, b))) == [Not(And(a, b))]
    assert conjuncts(a) == [a]


def test_and_all_joins_left_to_right_and_empty_gives_none() -> None:
    a, b, c = eq("a", 1), eq("b", 2), eq("c", 3)
    assert and_all([a, b, c]) == And(And(a, b), c)
    assert and_all([a]) == a
    assert and_all([]) is None


def test_referenced_columns_gives_top_level_names() -> None:
    expr = parse_filter("s.x = 1 OR NOT (t IN (1) AND u IS NULL) AND `a.b` = 2 AND s.y > 0")
    assert referenced_columns(expr) == {"s", "t", "u", "a.b"}
