"""A hand-written SQL three-valued-logic evaluator over Python rows, the oracle for filter tests."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from shim.filters import And, Column, CompareOp, Comparison, Expr, InList, IsNull, Not, Or

_OPS: dict[CompareOp, Callable[[Any, Any], bool]] = {
    CompareOp.EQ: operator.eq,
    CompareOp.NE: operator.ne,
    CompareOp.LT: operator.lt,
    CompareOp.LE: operator.le,
    CompareOp.GT: operator.gt,
    CompareOp.GE: operator.ge,
}


def lookup(row: Mapping[str, Any], column: Column) -> Any:
    value: Any = row
    for part in column.path:
        if value is None:
            return None
        value = value[part]
    return value


def oracle(expr: Expr, row: Mapping[str, Any]) -> bool | None:
    """SQL three-valued logic written out by hand, one row at a time."""
    match expr:
        case Comparison(op, column, literal):
            value = lookup(row, column)
            return None if value is None else _OPS[op](value, literal.value)
        case InList(column, values, negated):
            value = lookup(row, column)
            if value is None:
                return None
            found = any(value == literal.value for literal in values)
            return found != negated
        case IsNull(column, negated):
            return (lookup(row, column) is None) != negated
        case And(left, right):
            a, b = oracle(left, row), oracle(right, row)
            if a is False or b is False:
                return False
            return None if a is None or b is None else True
        case Or(left, right):
            a, b = oracle(left, row), oracle(right, row)
            if a is True or b is True:
                return True
            return None if a is None or b is None else False
        case Not(child):
            result = oracle(child, row)
            return None if result is None else not result
    raise AssertionError(expr)
