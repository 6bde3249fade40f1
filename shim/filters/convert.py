"""Normalises the filter forms users pass (text, tuples, trees) into one `Expr`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

from shim.errors import InvalidFilterError
from shim.filters.expr import (
    EXPR_TYPES,
    CompareOp,
    Comparison,
    Expr,
    InList,
    IsNull,
    Literal,
    and_all,
)
from shim.filters.parse import MAX_CONDITIONS, parse_column, parse_filter

FilterTuple: TypeAlias = tuple[str, str, object]
FilterLike: TypeAlias = str | Expr | Sequence[FilterTuple | Sequence[object] | str | Expr] | None

_IN_OPS = {"IN": False, "NOT IN": True}
_NULL_OPS = {"IS NULL": False, "IS NOT NULL": True}


def to_expr(filter: FilterLike) -> Expr | None:
    """Turns any accepted filter form into an `Expr`, or None for "no filter".

    Accepted: None; filter text (blank text means no filter); an `Expr`; or a sequence whose
    items are joined with AND, each item being filter text, an `Expr` or a hudi-rs style
    `(field, op, value)` triple (lists are accepted too, as JSON gives them). In a triple the
    field is a column reference as written in filter text (`a.b` is a struct field), `op` is a
    comparison symbol, `IN`/`NOT IN` (value: a list, or hudi-rs's comma-separated text with `\\,`
    escaping a comma) or `IS NULL`/`IS NOT NULL` (value: None). Values stay Python values
    (`"10"` stays a string) until `bind` coerces them to the column's type.
    """
    if filter is None:
        return None
    if isinstance(filter, str):
        return parse_filter(filter) if filter.strip() else None
    if isinstance(filter, EXPR_TYPES):
        return filter
    if isinstance(filter, Sequence) and not isinstance(filter, bytes):
        if len(filter) > MAX_CONDITIONS:
            raise InvalidFilterError(f"a filter list holds at most {MAX_CONDITIONS} items, not {len(filter)}; "
                                     "put many values of one column in an IN list")
        return and_all(_item_to_expr(item, number) for number, item in enumerate(filter, start=1))
    raise InvalidFilterError(
        f"a filter must be text, an Expr or a list of (column, op, value) tuples, got {type(filter).__name__}"
    )


def _item_to_expr(item: object, number: int) -> Expr:
    if isinstance(item, str):
        return parse_filter(item)
    if isinstance(item, EXPR_TYPES):
        return item
    if not isinstance(item, Sequence) or isinstance(item, bytes) or len(item) != 3:
        raise InvalidFilterError(
            f"filter item #{number} must be filter text, an Expr or (column, op, value), got {item!r}"
        )
    field, op_text, value = item
    if not isinstance(field, str) or not isinstance(op_text, str):
        raise InvalidFilterError(f"filter item #{number} {item!r}: column and operator must be strings")
    column = parse_column(field)
    op = " ".join(op_text.upper().split())
    if op in _NULL_OPS:
        if value is not None:
            raise InvalidFilterError(f"filter item #{number} {item!r}: {op} takes None as its value")
        return IsNull(column, _NULL_OPS[op])
    if op in _IN_OPS:
        values = _split_in_values(value) if isinstance(value, str) else value
        if not isinstance(values, Sequence | set | frozenset) or isinstance(values, bytes):
            raise InvalidFilterError(f"filter item #{number} {item!r}: {op} needs a list of values")
        return InList(column, tuple(_literal(v, number) for v in values), _IN_OPS[op])
    try:
        compare_op = CompareOp.parse(op_text)
    except InvalidFilterError:
        raise InvalidFilterError(
            f"filter item #{number} {item!r}: unknown operator {op_text!r}; "
            "use = != <> < <= > >=, IN, NOT IN, IS NULL or IS NOT NULL"
        ) from None
    return Comparison(compare_op, column, _literal(value, number))


def _literal(value: object, number: int) -> Literal:
    if value is None:
        raise InvalidFilterError(f"filter item #{number}: None is not a value; use the IS NULL operator")
    if isinstance(value, Literal):
        return value
    return Literal(value)  # type: ignore[arg-type]  # Literal checks the type and says what it accepts


def _split_in_values(text: str) -> list[str]:
    """Splits hudi-rs's `IN` value text on commas; `\\,` is a comma and `\\\\` a backslash."""
    values: list[str] = []
    current: list[str] = []
    chars = iter(text)
    for char in chars:
        if char == "\\":
            escaped = next(chars, "")
            if escaped in (",", "\\"):
                current.append(escaped)
            else:
                current.append("\\" + escaped)
        elif char == ",":
            values.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    values.append("".join(current).strip())
    return [value for value in values if value]
