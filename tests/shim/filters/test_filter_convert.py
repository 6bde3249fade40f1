from __future__ import annotations

import datetime as dt

import pytest

from shim.errors import InvalidFilterError
from shim.filters import And, Column, CompareOp, Comparison, InList, IsNull, Literal, parse_filter, to_expr


def test_to_expr_none_and_blank_text_give_none() -> None:
    assert to_expr(None) is None
    assert to_expr("") is None
    assert to_expr("  \n") is None
    assert to_expr([]) is None


def test_to_expr_text_parses() -> None:
    assert to_expr("city = 'sf' AND fare > 10.5") == parse_filter("city = 'sf' AND fare > 10.5")


def test_to_expr_expr_is_returned_unchanged() -> None:
    expr = IsNull(Column(("a",)))
    assert to_expr(expr) is expr


def test_to_expr_tuples_give_conjunction_with_values_kept_as_given() -> None:
    expr = to_expr([("city", "=", "sf"), ("fare", ">", "10"), ("d", "<=", dt.date(2024, 1, 1))])
    assert expr == And(
        And(
            Comparison(CompareOp.EQ, Column(("city",)), Literal("sf")),
            Comparison(CompareOp.GT, Column(("fare",)), Literal("10")),
        ),
        Comparison(CompareOp.LE, Column(("d",)), Literal(dt.date(2024, 1, 1))),
    )


def test_to_expr_json_lists_and_mixed_items_are_accepted() -> None:
    expr = to_expr([["n", "<>", 3], "city = 'sf'", IsNull(Column(("x",)))])
    assert expr == And(
        And(Comparison(CompareOp.NE, Column(("n",)), Literal(3)), parse_filter("city = 'sf'")),
        IsNull(Column(("x",))),
    )


def test_to_expr_tuple_field_is_a_column_reference() -> None:
    assert to_expr([("address.city", "=", "sf")]) == parse_filter("address.city = 'sf'")
    assert to_expr([("`a.b`", "=", "sf")]) == parse_filter("`a.b` = 'sf'")


def test_to_expr_tuple_in_accepts_lists_and_hudi_rs_comma_text() -> None:
    listed = InList(Column(("c",)), (Literal("a"), Literal("b")))
    assert to_expr([("c", "IN", ["a", "b"])]) == listed
    assert to_expr([("c", "in", "a, b")]) == listed
    assert to_expr([("c", "NOT  IN", ("a", "b"))]) == InList(Column(("c",)), listed.values, negated=True)
    assert to_expr([("c", "IN", r"x\,y, back\\slash,,z")]) == InList(
        Column(("c",)), (Literal("x,y"), Literal("back\\slash"), Literal("z"))
    )


def test_to_expr_tuple_null_operators_give_isnull() -> None:
    assert to_expr([("c", "IS NULL", None)]) == IsNull(Column(("c",)))
    assert to_expr([("c", "is not null", None)]) == IsNull(Column(("c",)), negated=True)


@pytest.mark.parametrize(
    ("filter", "message"),
    [
        ([("c", "=")], r"filter item #1 must be filter text, an Expr or \(column, op, value\)"),
        ([("c", "=", 1), 5], r"filter item #2 must be filter text"),
        ([(1, "=", 1)], r"filter item #1 \(1, '=', 1\): column and operator must be strings"),
        ([("c", "~", 1)], r"filter item #1 .*unknown operator '~'; use = != <> < <= > >=, IN, NOT IN"),
        ([("c", "=", None)], r"filter item #1: None is not a value; use the IS NULL operator"),
        ([("c", "IS NULL", 1)], r"IS NULL takes None as its value"),
        ([("c", "IN", 5)], r"IN needs a list of values"),
        ([("c", "IN", "")], r"IN list on column c needs at least one value"),
        ([("c", "=", object())], r"unsupported literal"),
        ([("c d", "=", 1)], r"position 2 \(near 'd'\): expected the end of the column name"),
        (42, r"a filter must be text, an Expr or a list of \(column, op, value\) tuples, got int"),
    ],
)
def test_to_expr_invalid_input_raises(filter: object, message: str) -> None:
    with pytest.raises(InvalidFilterError, match=message):
        to_expr(filter)  # type: ignore[arg-type]
