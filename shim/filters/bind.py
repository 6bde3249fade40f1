"""Binds a filter to a schema: checks its columns and coerces each literal to its column's type.

After binding, every `Literal` carries the Arrow type the comparison runs in: the column's own
type whenever the value is exactly representable in it (so Parquet statistics can prune), a
finer type of the same family otherwise (`price > 10.555` on a decimal(10, 2) column compares
exactly instead of rounding the literal).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import zoneinfo
from decimal import Decimal, InvalidOperation

import pyarrow as pa

from shim.errors import ColumnNotFoundError, InvalidFilterError
from shim.filters.expr import (
    And,
    Column,
    Comparison,
    Expr,
    InList,
    IsNull,
    Literal,
    LiteralValue,
    Not,
    Or,
    parse_date_text,
    parse_timestamp_text,
)

_MAX_LISTED = 40
_INTEGER_TEXT = re.compile(r"\s*[+-]?\d+\s*")
_OFFSET = re.compile(r"([+-])(\d{2}):?(\d{2})")
_UNIT_DIVISOR = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 1}


class _Mismatch(Exception):
    """The literal does not fit the column's type; the message says why."""


def bind(expr: Expr, schema: pa.Schema) -> Expr:
    """Resolves every column against `schema` and types every literal for its column.

    Raises:
        ColumnNotFoundError: a column (or struct field) is missing; the message lists what exists.
        InvalidFilterError: a literal cannot be read as its column's type, or a comparison
            targets a list, map or struct column.
    """
    match expr:
        case Comparison(op, column, literal):
            arrow_type = _comparable_type(column, schema, literal)
            return Comparison(op, column, _coerce(literal, arrow_type, column))
        case InList(column, values, negated):
            arrow_type = _comparable_type(column, schema, values[0])
            return InList(column, tuple(_coerce(v, arrow_type, column) for v in values), negated)
        case IsNull(column, negated):
            resolve_type(column, schema)
            return expr
        case And(left, right):
            return And(bind(left, schema), bind(right, schema))
        case Or(left, right):
            return Or(bind(left, schema), bind(right, schema))
        case Not(child):
            return Not(bind(child, schema))
    raise TypeError(f"not a filter expression: {expr!r}")


def resolve_type(column: Column, schema: pa.Schema) -> pa.DataType:
    """The Arrow type at `column`'s path (names are case-sensitive)."""
    fields = list(schema)
    arrow_type: pa.DataType | None = None
    for depth, part in enumerate(column.path):
        matches = [field for field in fields if field.name == part]
        if len(matches) > 1:
            raise InvalidFilterError(
                f"filter column {column.name!r} is ambiguous: {part!r} appears {len(matches)} times",
                column=column.name,
            )
        if not matches:
            raise ColumnNotFoundError(_missing_message(column, depth, fields), column=column.name)
        arrow_type = matches[0].type
        if depth + 1 < len(column.path):
            if not pa.types.is_struct(arrow_type):
                prefix = ".".join(column.path[: depth + 1])
                raise ColumnNotFoundError(
                    f"filter column {column.name!r} not found: {prefix} is {arrow_type}, not a struct",
                    column=column.name,
                )
            fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
    assert arrow_type is not None
    return arrow_type


def _missing_message(column: Column, depth: int, fields: list[pa.Field]) -> str:
    names = [field.name for field in fields]
    where = "available columns" if depth == 0 else f"fields of {'.'.join(column.path[:depth])}"
    listed = ", ".join(names[:_MAX_LISTED]) + (
        f", ... ({len(names)} in all)" if len(names) > _MAX_LISTED else ""
    )
    message = f"filter column {column.name!r} not found; {where}: {listed or '(none)'}"
    wanted = column.path[depth]
    similar = [name for name in names if name.lower() == wanted.lower()]
    if similar:
        message += f". Names are case-sensitive: did you mean {similar[0]!r}?"
    if depth == 0 and len(column.path) > 1 and column.name in names:
        message += f". To name the column {column.name!r} itself, quote it: `{column.name}`"
    return message


def _comparable_type(column: Column, schema: pa.Schema, literal: Literal) -> pa.DataType:
    arrow_type = resolve_type(column, schema)
    if pa.types.is_nested(arrow_type):
        raise InvalidFilterError(
            f"cannot compare column {column.name} ({arrow_type}) with {_shown(literal)}: list, map and struct "
            "columns only support IS [NOT] NULL; compare one of their fields instead (a.b = ...)",
            column=column.name,
        )
    return arrow_type


def _coerce(literal: Literal, column_type: pa.DataType, column: Column) -> Literal:
    value_type = column_type.value_type if pa.types.is_dictionary(column_type) else column_type
    try:
        value, arrow_type = _coerce_value(literal.value, value_type)
        pa.scalar(value, type=arrow_type)
    except _Mismatch as exc:
        reason = f": {exc}" if str(exc) else ""
        raise InvalidFilterError(
            f"cannot compare column {column.name} ({column_type}) with {_shown(literal)}{reason}", column=column.name
        ) from None
    except (pa.ArrowException, OverflowError, ValueError, TypeError) as exc:
        raise InvalidFilterError(
            f"cannot compare column {column.name} ({column_type}) with {_shown(literal)}: {exc}", column=column.name
        ) from None
    return Literal(value, arrow_type)


def _shown(literal: Literal) -> str:
    """The literal as error messages show it: a long one cut short."""
    text = str(literal)
    return text if len(text) <= 80 else f"{text[:80]}... ({len(text)} characters)"


def _coerce_value(value: LiteralValue, t: pa.DataType) -> tuple[LiteralValue, pa.DataType]:
    types = pa.types
    if types.is_string(t) or types.is_large_string(t) or types.is_string_view(t):
        if isinstance(value, str):
            return value, t
        raise _Mismatch("quote the value to compare text")
    if types.is_boolean(t):
        return _to_bool(value), t
    if types.is_integer(t):
        return _to_int(value), t
    if types.is_floating(t):
        if types.is_float16(t):
            raise _Mismatch("Arrow cannot compare halffloat columns")
        return _to_float(value), t
    if types.is_decimal(t):
        return _to_decimal(value, t)
    if types.is_date(t):
        return _to_date(value), t
    if types.is_timestamp(t):
        return _to_timestamp(value, t)
    if types.is_time(t):
        return _to_time(value, t)
    if (
        types.is_binary(t)
        or types.is_large_binary(t)
        or types.is_fixed_size_binary(t)
        or types.is_binary_view(t)
    ):
        if isinstance(value, bytes):
            return value, t
        if isinstance(value, str):
            return value.encode("utf-8"), t
        raise _Mismatch("quote the value to compare bytes")
    raise _Mismatch(f"filters do not support {t} columns")


def _to_bool(value: LiteralValue) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise _Mismatch("use TRUE or FALSE")


def _to_int(value: LiteralValue) -> int:
    if isinstance(value, bool):
        raise _Mismatch("a boolean is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float | Decimal):
        if value == int(value):
            return int(value)
        raise _Mismatch("not an integer")
    if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value):
        return int(value)
    raise _Mismatch("not an integer")


def _to_float(value: LiteralValue) -> float:
    if isinstance(value, bool):
        raise _Mismatch("a boolean is not a number")
    if isinstance(value, int | float | Decimal):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            raise _Mismatch("not a number") from None
    else:
        raise _Mismatch("not a number")
    if not math.isfinite(number):
        raise _Mismatch("not a finite double")
    return number


def _to_decimal(value: LiteralValue, t: pa.DataType) -> tuple[Decimal, pa.DataType]:
    if isinstance(value, bool):
        raise _Mismatch("a boolean is not a number")
    if isinstance(value, int | Decimal):
        number = Decimal(value)
    elif isinstance(value, float):
        number = Decimal(repr(value))
    elif isinstance(value, str):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            raise _Mismatch("not a number") from None
    else:
        raise _Mismatch("not a number")
    if not number.is_finite():
        raise _Mismatch("not a finite number")
    _, digits, exponent = number.normalize().as_tuple()
    assert isinstance(exponent, int)
    scale = max(0, -exponent)
    precision = max(len(digits) + max(0, exponent), scale, 1)
    integer_digits = precision - scale
    if scale <= t.scale and integer_digits <= t.precision - t.scale:
        return number, t
    # The value is not representable in the column's type; compare it in a wider decimal.
    wide_scale = max(scale, t.scale)
    wide_precision = max(integer_digits, t.precision - t.scale) + wide_scale
    if wide_precision <= 38:
        return number, pa.decimal128(wide_precision, wide_scale)
    if wide_precision <= 76:
        return number, pa.decimal256(wide_precision, wide_scale)
    raise _Mismatch("too many digits for a decimal")


def _to_date(value: LiteralValue) -> dt.date:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None and value.time() == dt.time():
            return value.date()
        raise _Mismatch("a timestamp with a time of day or a zone is not a date")
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return parse_date_text(value)
        except ValueError as exc:
            raise _Mismatch(str(exc)) from None
    raise _Mismatch("write a date as DATE 'YYYY-MM-DD'")


def _to_timestamp(value: LiteralValue, t: pa.TimestampType) -> tuple[dt.datetime, pa.DataType]:
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime.combine(value, dt.time())
    elif isinstance(value, str):
        try:
            moment = parse_timestamp_text(value)
        except ValueError as exc:
            raise _Mismatch(str(exc)) from None
    else:
        raise _Mismatch("write a timestamp as TIMESTAMP 'YYYY-MM-DD HH:MM:SS'")
    if t.tz is not None:
        # A literal without an offset means wall-clock time in the column's zone.
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=_zone(t.tz))
    elif moment.tzinfo is not None:
        # Zone-less columns hold UTC-based instants in Hudi's Parquet files.
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    if moment.microsecond % _UNIT_DIVISOR[t.unit]:
        return moment, pa.timestamp("us", tz=t.tz)
    return moment, t


def _to_time(value: LiteralValue, t: pa.DataType) -> tuple[dt.time, pa.DataType]:
    if isinstance(value, dt.time):
        moment = value
    elif isinstance(value, str):
        try:
            moment = dt.time.fromisoformat(value.strip())
        except ValueError:
            raise _Mismatch("write a time as 'HH:MM:SS[.ffffff]'") from None
    else:
        raise _Mismatch("write a time as 'HH:MM:SS[.ffffff]'")
    if moment.tzinfo is not None:
        raise _Mismatch("times of day with a zone are not supported")
    if moment.microsecond % _UNIT_DIVISOR[t.unit]:
        return moment, pa.time64("us")
    return moment, t


def _zone(name: str) -> dt.tzinfo:
    if name.upper() in ("UTC", "Z", "ETC/UTC"):
        return dt.UTC
    offset = _OFFSET.fullmatch(name)
    if offset:
        sign = -1 if offset.group(1) == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3))))
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise _Mismatch(
            f"unknown time zone {name!r}; give the timestamp an explicit offset (+00:00)"
        ) from None
