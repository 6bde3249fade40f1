"""Filter expression tree: immutable nodes, SQL rendering and small structural helpers.

An `Expr` is a boolean predicate over a row. Operands are a `Column` (a path into the schema)
and `Literal` values; `bind` later gives each literal the Arrow type of its column.
`str(expr)` renders SQL that `parse_filter` reads back to an equal tree.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import TypeAlias

import pyarrow as pa

from shim.errors import InvalidFilterError

LiteralValue: TypeAlias = str | bool | int | float | Decimal | dt.date | dt.datetime | dt.time | bytes

#: Words that can never be a bare column name (DATE and TIMESTAMP are only keywords before a string).
RESERVED_WORDS = frozenset({"AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE", "FALSE"})
_QUOTE_ALSO = frozenset({"DATE", "TIMESTAMP"})
_BARE_NAME = re.compile(r"[^\W\d]\w*")
_LITERAL_TYPES = (str, bool, int, float, Decimal, dt.date, dt.datetime, dt.time, bytes)
_FRACTION = re.compile(r"[T ]\d{2}:\d{2}:\d{2}\.(\d+)")
MAX_LITERAL_DIGITS = 400
"""Digits a number literal may have, and how far its decimal point may lie from them: more than
any column type holds (a double's 309 before its point, a decimal's 76), far fewer than the 4,300
past which Python refuses to turn digits into an integer or an integer into digits."""
_TOO_LARGE = 10**MAX_LITERAL_DIGITS


class CompareOp(StrEnum):
    """A binary comparison operator, rendered as its SQL symbol."""

    EQ = "="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="

    @classmethod
    def parse(cls, text: str) -> CompareOp:
        """Reads an operator symbol; `<>` and `==` are accepted as aliases."""
        symbol = {"<>": "!=", "==": "="}.get(text.strip(), text.strip())
        try:
            return cls(symbol)
        except ValueError:
            raise InvalidFilterError(
                f"unknown comparison operator {text!r}; use one of = != <> < <= > >="
            ) from None

    def flipped(self) -> CompareOp:
        """The operator that gives the same result with its operands swapped (`10 < x` is `x > 10`)."""
        return _FLIPPED[self]


_FLIPPED = {
    CompareOp.EQ: CompareOp.EQ,
    CompareOp.NE: CompareOp.NE,
    CompareOp.LT: CompareOp.GT,
    CompareOp.LE: CompareOp.GE,
    CompareOp.GT: CompareOp.LT,
    CompareOp.GE: CompareOp.LE,
}


@dataclass(frozen=True, slots=True)
class Column:
    """A column reference: the top-level name followed by struct field names."""

    path: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.path or not all(isinstance(part, str) and part for part in self.path):
            raise InvalidFilterError(f"a column path needs one or more non-empty names, got {self.path!r}")

    @property
    def name(self) -> str:
        """The dotted name used in messages (`address.city`)."""
        return ".".join(self.path)

    def __str__(self) -> str:
        return ".".join(_render_name(part) for part in self.path)


@dataclass(frozen=True, slots=True, eq=False)
class Literal:
    """A constant; `arrow_type` is set by `bind` to the type the comparison is evaluated in.

    Equality also compares the Python type, so `Literal(1)` differs from `Literal(True)` and
    `Literal(1.0)`, which matters for rendering and for binding.
    """

    value: LiteralValue
    arrow_type: pa.DataType | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.value, _LITERAL_TYPES):
            raise InvalidFilterError(
                f"unsupported literal {self.value!r} of type {type(self.value).__name__}; "
                "use str, int, float, Decimal, bool, date, datetime, time or bytes (NULL only in IS NULL)"
            )
        value = self.value
        if (isinstance(value, Decimal) and not value.is_finite()) or (
            isinstance(value, float) and not math.isfinite(value)
        ):
            raise InvalidFilterError(
                f"literal {self.value!r} is not supported: NaN and infinity cannot be compared"
            )
        if (isinstance(value, int) and not -_TOO_LARGE < value < _TOO_LARGE) or (
            isinstance(value, Decimal)
            and (len(value.as_tuple().digits) > MAX_LITERAL_DIGITS or abs(value.adjusted()) > MAX_LITERAL_DIGITS)
        ):
            raise InvalidFilterError(
                f"a number literal of more than {MAX_LITERAL_DIGITS} digits (or that many zeros) is not supported: "
                "no column type holds it"
            )

    def _key(self) -> tuple[object, ...]:
        return (type(self.value), self.value, self.arrow_type)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Literal) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return render_value(self.value)


@dataclass(frozen=True, slots=True)
class Comparison:
    """`column op literal`; a literal written on the left is normalised to the right."""

    op: CompareOp
    column: Column
    literal: Literal

    def __post_init__(self) -> None:
        if not isinstance(self.op, CompareOp):
            object.__setattr__(self, "op", CompareOp.parse(self.op))

    def __str__(self) -> str:
        return f"{self.column} {self.op.value} {self.literal}"


@dataclass(frozen=True, slots=True)
class InList:
    """`column [NOT] IN (v1, v2, ...)` with at least one value."""

    column: Column
    values: tuple[Literal, ...]
    negated: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.values, tuple):
            object.__setattr__(self, "values", tuple(self.values))
        if not self.values:
            raise InvalidFilterError(f"IN list on column {self.column.name} needs at least one value")

    def __str__(self) -> str:
        keyword = "NOT IN" if self.negated else "IN"
        return f"{self.column} {keyword} ({', '.join(str(v) for v in self.values)})"


@dataclass(frozen=True, slots=True)
class IsNull:
    """`column IS [NOT] NULL`."""

    column: Column
    negated: bool = False

    def __str__(self) -> str:
        return f"{self.column} IS {'NOT ' if self.negated else ''}NULL"


@dataclass(frozen=True, slots=True)
class And:
    """Conjunction under SQL three-valued logic."""

    left: Expr
    right: Expr

    def __str__(self) -> str:
        return f"{_operand(self.left, (Or,))} AND {_operand(self.right, (Or, And))}"


@dataclass(frozen=True, slots=True)
class Or:
    """Disjunction under SQL three-valued logic."""

    left: Expr
    right: Expr

    def __str__(self) -> str:
        return f"{self.left} OR {_operand(self.right, (Or,))}"


@dataclass(frozen=True, slots=True)
class Not:
    """Negation under SQL three-valued logic (NOT NULL is NULL)."""

    child: Expr

    def __str__(self) -> str:
        return f"NOT {_operand(self.child, (And, Or))}"


Expr: TypeAlias = Comparison | InList | IsNull | And | Or | Not
EXPR_TYPES = (Comparison, InList, IsNull, And, Or, Not)


def _operand(expr: Expr, needs_parens: tuple[type, ...]) -> str:
    # Parentheses only where precedence or left-associativity would otherwise change the tree.
    return f"({expr})" if isinstance(expr, needs_parens) else str(expr)


def _render_name(name: str) -> str:
    if _BARE_NAME.fullmatch(name) and name.upper() not in RESERVED_WORDS | _QUOTE_ALSO:
        return name
    return "`" + name.replace("`", "``") + "`"


def render_value(value: LiteralValue) -> str:
    """Renders a literal value as SQL text that the parser reads back to the same value and type."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        # An exponent marks a float; without one the parser would read a Decimal.
        return text if "e" in text else text + "e0"
    if isinstance(value, Decimal):
        text = format(value, "f")
        return text if "." in text else text + ".0"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, dt.time):
        return _quote_string(value.isoformat())
    if isinstance(value, bytes):
        return _quote_string(value.decode("utf-8", errors="backslashreplace"))
    return _quote_string(value)


def _quote_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def parse_date_text(text: str) -> dt.date:
    """Reads `YYYY-MM-DD`; raises ValueError with a readable reason."""
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text!r} is not a date; write YYYY-MM-DD") from None


def parse_timestamp_text(text: str) -> dt.datetime:
    """Reads `YYYY-MM-DD[ HH:MM:SS[.ffffff]][+HH:MM|Z]`; raises ValueError with a readable reason."""
    stripped = text.strip()
    fraction = _FRACTION.search(stripped)
    if fraction and len(fraction.group(1)) > 6:
        raise ValueError(f"{text!r} has more than microsecond precision, which is not supported")
    try:
        return dt.datetime.fromisoformat(stripped)
    except ValueError:
        raise ValueError(f"{text!r} is not a timestamp; write YYYY-MM-DD HH:MM:SS[.ffffff][+HH:MM]") from None


def conjuncts(expr: Expr) -> list[Expr]:
    """Splits top-level ANDs: `a AND (b AND c)` gives `[a, b, c]`; anything else gives `[expr]`."""
    if isinstance(expr, And):
        return conjuncts(expr.left) + conjuncts(expr.right)
    return [expr]


def and_all(exprs: Iterable[Expr]) -> Expr | None:
    """Joins predicates with AND from left to right; None when there are none."""
    result: Expr | None = None
    for expr in exprs:
        result = expr if result is None else And(result, expr)
    return result


def columns_of(expr: Expr) -> list[Column]:
    """Every column reference in the expression, in reading order (with repeats)."""
    match expr:
        case Comparison(column=column) | InList(column=column) | IsNull(column=column):
            return [column]
        case And(left, right) | Or(left, right):
            return columns_of(left) + columns_of(right)
        case Not(child):
            return columns_of(child)
    raise TypeError(f"not a filter expression: {expr!r}")


def referenced_columns(expr: Expr) -> set[str]:
    """Top-level column names the expression reads (`a.b = 1` reads `a`)."""
    return {column.path[0] for column in columns_of(expr)}
