from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from shim.errors import InvalidFilterError
from shim.filters import (
    And,
    Column,
    CompareOp,
    Comparison,
    InList,
    IsNull,
    Literal,
    Not,
    Or,
    parse_column,
    parse_filter,
)


def col(*path: str) -> Column:
    return Column(path)


def cmp(op: str, name: str, value: object) -> Comparison:
    return Comparison(CompareOp(op), col(*name.split(".")), Literal(value))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "op"),
    [("=", "="), ("!=", "!="), ("<>", "!="), ("==", "="), ("<", "<"), ("<=", "<="), (">", ">"), (">=", ">=")],
)
def test_parse_filter_each_operator_gives_comparison(text: str, op: str) -> None:
    assert parse_filter(f"fare {text} 3") == cmp(op, "fare", 3)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("'sf'", "sf"),
        ("'it''s'", "it's"),
        ("''", ""),
        ("'a\nb'", "a\nb"),
        ("42", 42),
        ("-2", -2),
        ("- 2", -2),
        ("007", 7),
        ("1.5", Decimal("1.5")),
        ("-0.25", Decimal("-0.25")),
        ("1e3", 1000.0),
        ("2.5E-2", 0.025),
        ("-1e+2", -100.0),
        ("TRUE", True),
        ("false", False),
        ("DATE '2024-01-31'", dt.date(2024, 1, 31)),
        ("date '2024-01-31'", dt.date(2024, 1, 31)),
        ("TIMESTAMP '2024-01-31 10:00:00'", dt.datetime(2024, 1, 31, 10)),
        ("TIMESTAMP '2024-01-31T10:00:00.123456'", dt.datetime(2024, 1, 31, 10, 0, 0, 123456)),
        ("TIMESTAMP '2024-01-31 10:00:00+00:00'", dt.datetime(2024, 1, 31, 10, tzinfo=dt.UTC)),
        (
            "TIMESTAMP '2024-01-31 10:00:00.5-05:30'",
            dt.datetime(
                2024, 1, 31, 10, 0, 0, 500000, tzinfo=dt.timezone(-dt.timedelta(hours=5, minutes=30))
            ),
        ),
        ("TIMESTAMP '2024-01-31'", dt.datetime(2024, 1, 31)),
    ],
)
def test_parse_filter_literal_forms_give_python_values(text: str, value: object) -> None:
    expr = parse_filter(f"x = {text}")
    assert isinstance(expr, Comparison)
    assert expr.literal == Literal(value)  # type: ignore[arg-type]
    assert type(expr.literal.value) is type(value)


def test_parse_filter_literal_on_left_is_normalised_to_column_on_left() -> None:
    assert parse_filter("10 < fare") == cmp(">", "fare", 10)
    assert parse_filter("10 <= fare") == cmp(">=", "fare", 10)
    assert parse_filter("'sf' = city") == cmp("=", "city", "sf")
    assert parse_filter("DATE '2024-01-01' >= d") == cmp("<=", "d", dt.date(2024, 1, 1))


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("city", ("city",)),
        ("_c0", ("_c0",)),
        ("Ünïcode", ("Ünïcode",)),
        ('"my col"', ("my col",)),
        ('"say ""hi"""', ('say "hi"',)),
        ("`a.b`", ("a.b",)),
        ("`tick``s`", ("tick`s",)),
        ("address.city", ("address", "city")),
        ('`my struct`."inner field".leaf', ("my struct", "inner field", "leaf")),
        ("date", ("date",)),
        ("TIMESTAMP", ("TIMESTAMP",)),
        ('"and"', ("and",)),
        ("s.in", ("s", "in")),
    ],
)
def test_parse_filter_column_forms_give_paths(text: str, path: tuple[str, ...]) -> None:
    assert parse_filter(f"{text} IS NULL") == IsNull(Column(path))
    assert parse_column(text) == Column(path)


def test_parse_filter_column_names_are_case_sensitive_keywords_are_not() -> None:
    assert parse_filter("City is not null") == IsNull(col("City"), negated=True)
    assert parse_filter("a = 1 and b = 2 Or not c = 3") == Or(
        And(cmp("=", "a", 1), cmp("=", "b", 2)), Not(cmp("=", "c", 3))
    )


def test_parse_filter_in_lists_give_inlist() -> None:
    assert parse_filter("city IN ('sf', 'la')") == InList(col("city"), (Literal("sf"), Literal("la")))
    assert parse_filter("n not in (1,-2 , 3.5)") == InList(
        col("n"), (Literal(1), Literal(-2), Literal(Decimal("3.5"))), negated=True
    )
    assert parse_filter("d IN (DATE '2024-01-01')") == InList(col("d"), (Literal(dt.date(2024, 1, 1)),))


def test_parse_filter_is_null_forms_give_isnull() -> None:
    assert parse_filter("a IS NULL") == IsNull(col("a"))
    assert parse_filter("a IS NOT NULL") == IsNull(col("a"), negated=True)
    assert parse_filter("NOT a IS NULL") == Not(IsNull(col("a")))


def test_parse_filter_precedence_or_below_and_below_not() -> None:
    a, b, c = cmp("=", "a", 1), cmp("=", "b", 2), cmp("=", "c", 3)
    assert parse_filter("a = 1 OR b = 2 AND c = 3") == Or(a, And(b, c))
    assert parse_filter("(a = 1 OR b = 2) AND c = 3") == And(Or(a, b), c)
    assert parse_filter("NOT a = 1 AND b = 2") == And(Not(a), b)
    assert parse_filter("NOT (a = 1 AND b = 2)") == Not(And(a, b))
    assert parse_filter("NOT NOT a = 1") == Not(Not(a))
    assert parse_filter("a = 1 AND b = 2 AND c = 3") == And(And(a, b), c)
    assert parse_filter("a = 1 AND (b = 2 AND c = 3)") == And(a, And(b, c))
    assert parse_filter("((a = 1))") == a


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "invalid filter at position 0 (near end of input): the filter is empty"),
        ("   ", "invalid filter at position 3 (near end of input): the filter is empty"),
        ("a =", "invalid filter at position 3 (near end of input): expected a column or a literal"),
        (
            "a = NULL",
            "invalid filter at position 4 (near 'NULL'): NULL can only be used as IS NULL or IS NOT NULL",
        ),
        ("a IN (1, NULL)", "position 9 (near 'NULL'): NULL can only be used as IS NULL or IS NOT NULL"),
        ("a IN ()", "invalid filter at position 6 (near ')'): an IN list needs at least one value"),
        ("a IN 1", "position 5 (near '1'): expected '(' after IN"),
        ("a IN (1 2)", "position 8 (near '2'): expected ',' or ')' in the IN list"),
        ("a IN (b)", "position 6 (near 'b'): expected a literal"),
        ("1 = 2", "position 0 (near '1'): a comparison needs a column on one side"),
        ("1 IN (1)", "position 2 (near 'IN'): expected a comparison operator after a literal"),
        ("a = b", "position 0 (near 'a'): comparing two columns is not supported"),
        ("a = 'abc", 'position 4 (near "\'abc"): unterminated string literal'),
        ('"abc = 1', "position 0 (near '\"abc = 1'): unterminated quoted column name"),
        ("a = 1e999", "position 4 (near '1e999'): the number is out of the range of a double"),
        ("a = 1abc", "position 4 (near '1abc'): malformed number"),
        ("a = 1.2.3", "position 4 (near '1.2.3'): malformed number"),
        ("a # 1", "position 2 (near '#'): unexpected character"),
        ("a = 1 b = 2", "position 6 (near 'b'): expected AND, OR or the end of the filter"),
        ("(a = 1", "position 6 (near end of input): expected ')' or AND/OR"),
        ("a = 1)", "position 5 (near ')'): expected AND, OR or the end of the filter"),
        ("and = 1", "position 0 (near 'and'): expected a column or a literal, found the keyword AND"),
        ("a IS 1", "position 5 (near '1'): expected NULL"),
        ("a IS NOT 1", "position 9 (near '1'): expected NULL"),
        ("a", "position 1 (near end of input): expected a comparison operator, IN, NOT IN or IS [NOT] NULL"),
        ("a NOT 1", "position 2 (near 'NOT'): expected a comparison operator, IN, NOT IN or IS [NOT] NULL"),
        ("a.", "position 2 (near end of input): expected a column name"),
        ("a.1 = 2", "position 2 (near '1'): expected a column name"),
        ('"" = 1', "position 0 (near '\"\"'): a quoted column name cannot be empty"),
        ("a = - 'x'", "position 6 (near \"'x'\"): expected a number after '-'"),
        (
            "a = DATE '2024-13-01'",
            "position 9 (near \"'2024-13-01'\"): invalid DATE literal: '2024-13-01' is not a date",
        ),
        ("a = TIMESTAMP 'noon'", "invalid TIMESTAMP literal: 'noon' is not a timestamp"),
        ("a = TIMESTAMP '2024-01-01 00:00:00.123456789'", "has more than microsecond precision"),
        ("a AND b = 1", "position 2 (near 'AND'): expected a comparison operator"),
        ("NOT", "position 3 (near end of input): expected a column or a literal"),
    ],
)
def test_parse_filter_invalid_text_raises_with_position_and_token(text: str, message: str) -> None:
    with pytest.raises(InvalidFilterError) as info:
        parse_filter(text)
    assert message in str(info.value)
    assert str(info.value).endswith(f"; filter was: {text}")


def test_parse_column_trailing_text_raises() -> None:
    with pytest.raises(
        InvalidFilterError, match=r"position 2 \(near '='\): expected the end of the column name"
    ):
        parse_column("a = 1")


BIG = "9" * 5000  # past Python's 4,300-digit limit on turning digits into an int


@pytest.mark.parametrize("text", [f"x = {BIG}", f"x > -{BIG}", f"x IN (1, {BIG})", f"x = {BIG}.5", f"x = 0.{BIG}",
                                  f"x = {BIG}e1", f"x = {'9' * 401}"],
                         ids=["int", "negative", "in", "decimal", "fraction", "exponent", "401"])
def test_parse_filter_number_longer_than_any_column_type_is_an_invalid_filter(text: str) -> None:
    with pytest.raises(InvalidFilterError, match="digits: no column type holds more than 400") as info:
        parse_filter(text)
    assert len(str(info.value)) < 600  # the number is not repeated whole


@pytest.mark.parametrize("value", [10**5000, -(10**401), Decimal(f"1e{10**6}"), Decimal(f"1e-{10**6}"),
                                   Decimal("9" * 401)], ids=["int", "negative", "exponent", "tiny", "decimal"])
def test_literal_of_more_digits_than_any_column_type_is_an_invalid_filter(value: object) -> None:
    """Triples from JSON or Python and Substrait literals build Literals directly."""
    with pytest.raises(InvalidFilterError, match="more than 400 digits"):
        Literal(value)  # type: ignore[arg-type]


def test_parse_filter_long_date_literal_names_it_briefly() -> None:
    with pytest.raises(InvalidFilterError, match="invalid DATE literal") as info:
        parse_filter(f"d = DATE '{BIG}-01-01'")
    assert len(str(info.value)) < 900


def test_parse_filter_largest_useful_numbers_still_parse() -> None:
    assert parse_filter(f"x = {'9' * 400}") == cmp("=", "x", int("9" * 400))
    assert parse_filter("x = 1.7976931348623157e308") == cmp("=", "x", 1.7976931348623157e308)
