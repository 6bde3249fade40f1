"""Translates a filter into a `pyarrow.compute.Expression`.

The expression evaluates to SQL's three-valued result for every row: comparisons with a null
are null, and AND/OR/NOT are Arrow's Kleene kernels, so `NOT (x > 1)` stays null (and the row
stays out) when x is null. `Table.filter` and `pyarrow.dataset` keep only rows that are true.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from shim.filters.expr import And, Column, CompareOp, Comparison, Expr, InList, IsNull, Literal, Not, Or

_COMPARE: dict[CompareOp, Callable[[pc.Expression, pa.Scalar], pc.Expression]] = {
    CompareOp.EQ: pc.equal,
    CompareOp.NE: pc.not_equal,
    CompareOp.LT: pc.less,
    CompareOp.LE: pc.less_equal,
    CompareOp.GT: pc.greater,
    CompareOp.GE: pc.greater_equal,
}
_NULL_BOOL = pa.scalar(None, type=pa.bool_())


def to_arrow_expression(expr: Expr) -> pc.Expression:
    """The Arrow form of a (preferably bound) filter, for `dataset.to_table(filter=...)` or `Table.filter`.

    Bind first: an unbound literal gets the Arrow type inferred from its Python value, which
    may not compare with the column (a `'10'` text literal against an int column).
    """
    match expr:
        case Comparison(op, column, literal):
            return _COMPARE[op](_field(column), _scalar(literal))
        case InList(column, values, negated):
            matched = _in_list(_field(column), values)
            return pc.invert(matched) if negated else matched
        case IsNull(column, negated):
            field = _field(column)
            return pc.is_valid(field) if negated else pc.is_null(field)
        case And(left, right):
            return pc.and_kleene(to_arrow_expression(left), to_arrow_expression(right))
        case Or(left, right):
            return pc.or_kleene(to_arrow_expression(left), to_arrow_expression(right))
        case Not(child):
            return pc.invert(to_arrow_expression(child))
    raise TypeError(f"not a filter expression: {expr!r}")


def _field(column: Column) -> pc.Expression:
    return pc.field(*column.path)


def _scalar(literal: Literal) -> pa.Scalar:
    return pa.scalar(literal.value, type=literal.arrow_type)


def _in_list(field: pc.Expression, values: tuple[Literal, ...]) -> pc.Expression:
    types = {literal.arrow_type for literal in values}
    if len(types) == 1 and None not in types:
        value_set = pa.array([literal.value for literal in values], type=types.pop())
        # is_in says false for a null input; SQL says null, which matters under NOT.
        return pc.if_else(pc.is_valid(field), pc.is_in(field, value_set=value_set), _NULL_BOOL)
    # Mixed literal types (a wider decimal or finer timestamp for some values): OR of equalities.
    result = pc.equal(field, _scalar(values[0]))
    for literal in values[1:]:
        result = pc.or_kleene(result, pc.equal(field, _scalar(literal)))
    return result
