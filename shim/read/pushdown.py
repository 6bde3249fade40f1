"""Which parts of a row filter can be pushed into a Parquet scan of one file."""

from __future__ import annotations

from collections.abc import Mapping
from functools import reduce

import pyarrow.compute as pc

from shim.filters import Expr, conjuncts, referenced_columns, to_arrow_expression


def pushdown_for_plan(row_filter: Expr | None, passthrough: Mapping[str, str]) -> pc.Expression | None:
    """The conjuncts of `row_filter` that hold on the file's own values.

    A conjunct is pushed when every column it names is read from the file unchanged and under
    the same name, so filtering the file's rows is exact. The whole
    filter is applied again after the plan, so what is not pushed is still enforced.
    """
    if row_filter is None:
        return None
    exact = {query for query, source in passthrough.items() if query == source}
    pushed = [c for c in conjuncts(row_filter) if referenced_columns(c) <= exact]
    if not pushed:
        return None
    return reduce(lambda a, b: a & b, (to_arrow_expression(c) for c in pushed))
