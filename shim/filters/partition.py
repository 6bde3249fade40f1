"""Partition pruning: can any row of a partition satisfy the filter?

Each sub-expression evaluates to the set of SQL truth values it may take in the partition:
`{True}`, `{False}` or `{None}` when its columns are all partition columns with known values,
all three when it reads a column outside the partition values (or values of types that cannot
be compared safely). A partition is skipped only when True is impossible, so pruning never drops
a row the filter would keep.
"""

from __future__ import annotations

import datetime as dt
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeAlias, cast

import pyarrow as pa

from shim.filters.expr import And, Column, CompareOp, Comparison, Expr, InList, IsNull, Not, Or

Truth: TypeAlias = bool | None
Possible: TypeAlias = frozenset[Truth]

_ANY: Possible = frozenset({True, False, None})
_TRUE: Possible = frozenset({True})
_FALSE: Possible = frozenset({False})
_NULL: Possible = frozenset({None})
_MISSING = object()


@dataclass(frozen=True, slots=True)
class ValueRange:
    """What is known of a column's values in a partition or file: from `low` to `high`
    (inclusive; numbers, text, dates or timestamps, both of one kind), or, when `nullable`, null;
    with `unordered`, also values outside any order (floating-point NaN, which no comparison but
    `!=` holds for). Comparisons with it answer every truth they could."""

    low: Any
    high: Any
    nullable: bool = True
    unordered: bool = False

    def truths(self, op: CompareOp, literal: object) -> Possible:
        kind = _kind(literal)
        if kind is None or kind != _kind(self.low) or kind != _kind(self.high) \
                or isinstance(literal, bytes) or isinstance(self.low, bytes):
            return _ANY
        low, high, x = self.low, self.high, cast(Any, literal)
        try:
            true_possible = {
                CompareOp.EQ: low <= x <= high, CompareOp.NE: True,
                CompareOp.LT: low < x, CompareOp.LE: low <= x,
                CompareOp.GT: high > x, CompareOp.GE: high >= x,
            }[op]
            false_possible = {
                CompareOp.EQ: True, CompareOp.NE: low <= x <= high,
                CompareOp.LT: high >= x, CompareOp.LE: high > x,
                CompareOp.GT: low <= x, CompareOp.GE: low < x,
            }[op]
        except TypeError:
            return _ANY
        if self.unordered:  # NaN: every comparison false but !=, which is true
            true_possible = true_possible or op is CompareOp.NE
            false_possible = false_possible or op is not CompareOp.NE
        return frozenset(({None} if self.nullable else set()) | ({True} if true_possible else set())
                         | ({False} if false_possible else set()))


_COMPARE: dict[CompareOp, Callable[[Any, Any], bool]] = {
    CompareOp.EQ: lambda a, b: bool(a == b),
    CompareOp.NE: lambda a, b: bool(a != b),
    CompareOp.LT: lambda a, b: bool(a < b),
    CompareOp.LE: lambda a, b: bool(a <= b),
    CompareOp.GT: lambda a, b: bool(a > b),
    CompareOp.GE: lambda a, b: bool(a >= b),
}


def evaluate_on_partition(expr: Expr, values: Mapping[str, object]) -> bool:
    """False only when no row of the partition with these column values can match.

    Args:
        expr: A filter, ideally bound so literals have the partition columns' Python types.
        values: Typed partition values by column name (None for the null/default partition).
            Columns absent from `values` are unknown.
    """
    return True in possible_truths(expr, values)


def possible_truths(expr: Expr, values: Mapping[str, object]) -> Possible:
    """The SQL truth values `expr` may take on rows of a partition with `values`."""
    match expr:
        case Comparison(op, column, literal):
            value = _value(column, values)
            if value is _MISSING:
                return _ANY
            if value is None:
                return _NULL
            if isinstance(value, ValueRange):
                return value.truths(op, literal.value)
            return _compare(op, value, literal.value)
        case InList(column, literals, negated):
            value = _value(column, values)
            if value is _MISSING:
                return _ANY
            if value is None:
                return _NULL
            found = _FALSE
            for literal in literals:
                found = _or(found, value.truths(CompareOp.EQ, literal.value) if isinstance(value, ValueRange)
                            else _compare(CompareOp.EQ, value, literal.value))
            return _not(found) if negated else found
        case IsNull(column, negated):
            value = _value(column, values)
            if value is _MISSING:
                return _ANY
            if isinstance(value, ValueRange):
                return frozenset({negated} | ({not negated} if value.nullable else set()))
            return frozenset({(value is None) != negated})
        case And(left, right):
            return _and(possible_truths(left, values), possible_truths(right, values))
        case Or(left, right):
            return _or(possible_truths(left, values), possible_truths(right, values))
        case Not(child):
            return _not(possible_truths(child, values))
    raise TypeError(f"not a filter expression: {expr!r}")


def _value(column: Column, values: Mapping[str, object]) -> object:
    # A nested partition field is keyed by its dotted name (Hudi's `a.b` partition field).
    key = column.path[0] if len(column.path) == 1 else column.name
    value = values.get(key, _MISSING)
    return value.as_py() if isinstance(value, pa.Scalar) else value


def _compare(op: CompareOp, value: object, literal: object) -> Possible:
    kind = _kind(value)
    # Python's == between unlike types (2024 vs '2024', naive vs aware datetimes) is a silent
    # False that would prune wrongly, so unlike kinds are unknown rather than unequal.
    if kind is None or kind != _kind(literal):
        return _ANY
    if isinstance(value, bytes) != isinstance(literal, bytes):
        value, literal = _as_bytes(value), _as_bytes(literal)
    try:
        return _TRUE if _COMPARE[op](value, literal) else _FALSE
    except TypeError:
        return _ANY


def _as_bytes(value: object) -> object:
    return value.encode("utf-8") if isinstance(value, str) else value


def _kind(value: object) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, numbers.Real | Decimal):
        return "number"
    if isinstance(value, str | bytes):
        return "text"
    if isinstance(value, dt.datetime):
        return "aware timestamp" if value.tzinfo is not None else "timestamp"
    if isinstance(value, dt.date):
        return "date"
    if isinstance(value, dt.time):
        return "time"
    return None


def _and3(a: Truth, b: Truth) -> Truth:
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _or3(a: Truth, b: Truth) -> Truth:
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def _and(left: Possible, right: Possible) -> Possible:
    return frozenset(_and3(a, b) for a in left for b in right)


def _or(left: Possible, right: Possible) -> Possible:
    return frozenset(_or3(a, b) for a in left for b in right)


def _not(child: Possible) -> Possible:
    return frozenset(None if t is None else not t for t in child)
