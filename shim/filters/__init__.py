"""Row filters: parse them, bind them to a schema, push them to Arrow and prune partitions with them.

Typical use::

    expr = to_expr("city = 'sf' AND fare > 10.5")      # or a list of (column, op, value) tuples
    bound = bind(expr, table_schema)                    # checks columns, types the literals
    dataset.to_table(filter=to_arrow_expression(bound))
"""

from __future__ import annotations

from shim.filters.arrow import to_arrow_expression
from shim.filters.bind import bind, resolve_type
from shim.filters.convert import FilterLike, to_expr
from shim.filters.expr import (
    And,
    Column,
    CompareOp,
    Comparison,
    Expr,
    InList,
    IsNull,
    Literal,
    Not,
    Or,
    and_all,
    conjuncts,
    referenced_columns,
)
from shim.filters.parse import parse_column, parse_filter
from shim.filters.partition import evaluate_on_partition

__all__ = [
    "And",
    "Column",
    "CompareOp",
    "Comparison",
    "Expr",
    "FilterLike",
    "InList",
    "IsNull",
    "Literal",
    "Not",
    "Or",
    "and_all",
    "bind",
    "conjuncts",
    "evaluate_on_partition",
    "parse_column",
    "parse_filter",
    "referenced_columns",
    "resolve_type",
    "to_arrow_expression",
    "to_expr",
]
