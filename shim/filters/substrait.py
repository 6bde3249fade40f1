"""Filters sent as Substrait `ExtendedExpression` messages, decoded into shim filter expressions.

Engines push filters as `pyarrow.compute.Expression`; `expr.to_substrait(schema)` serializes one
portably, but `Expression.from_substrait` gives back references by position in that schema, which
is not the table's column order. This module reads the message itself and resolves positions to
column names through the message's own base schema. It reads what engines push: comparisons of a
column (or struct field) with a literal, `IN` lists, `IS [NOT] NULL`, `AND`, `OR`, `NOT`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from shim.errors import InvalidFilterError
from shim.filters import And, Column, CompareOp, Comparison, Expr, InList, IsNull, Literal, Not, Or
from shim.filters.expr import LiteralValue
from shim.filters.protobuf import Message, ProtobufError

_COMPARISONS = {
    "equal": CompareOp.EQ, "not_equal": CompareOp.NE, "lt": CompareOp.LT,
    "lte": CompareOp.LE, "gt": CompareOp.GT, "gte": CompareOp.GE,
}
_EPOCH = dt.datetime(1970, 1, 1)
_MAX_DEPTH = 64


class UnsupportedExpression(Exception):
    """A well-formed part of the expression that has no shim filter counterpart."""


@dataclass(frozen=True, slots=True)
class _Node:
    name: str
    children: tuple[_Node, ...] | None  # None: not a struct (no field of it can be referenced)


def filter_from_substrait(data: bytes) -> Expr:
    """The filter a Substrait `ExtendedExpression` (one boolean expression) holds.

    Raises:
        InvalidFilterError: malformed message, or a part with no shim filter counterpart.
    """
    decoder, root = _open(data)
    try:
        return decoder.predicate(root, 0)
    except UnsupportedExpression as exc:
        raise InvalidFilterError(f"unsupported substrait filter: {exc}") from None
    except (ProtobufError, IndexError, KeyError, ValueError, OverflowError, RecursionError) as exc:
        raise InvalidFilterError(f"malformed substrait filter: {exc}") from None


def conjuncts_from_substrait(data: bytes) -> list[Expr | None]:
    """The top-level AND terms of the expression; None for a term with no shim filter counterpart.

    Raises:
        InvalidFilterError: the message is malformed.
    """
    decoder, root = _open(data)
    out: list[Expr | None] = []
    try:
        for term in decoder.and_terms(root, 0):
            try:
                out.append(decoder.predicate(term, 1))
            except (UnsupportedExpression, InvalidFilterError):
                out.append(None)
    except (ProtobufError, IndexError, KeyError, ValueError, OverflowError, RecursionError) as exc:
        raise InvalidFilterError(f"malformed substrait filter: {exc}") from None
    return out


def _open(data: bytes) -> tuple[_Decoder, Message]:
    try:
        message = Message(bytes(data))
        functions: dict[int, str] = {}
        for declaration in message.messages(2):
            function = declaration.message(3)
            if function is not None:
                names = function.strings(3)
                functions[function.uint(2)] = (names[-1] if names else "").split(":", 1)[0]
        references = message.messages(3)
        if len(references) != 1:
            raise InvalidFilterError(f"a substrait filter holds one expression, this one {len(references)}")
        root = references[0].message(1)
        if root is None:
            raise InvalidFilterError("the substrait filter's expression reference holds no expression")
        schema = message.message(4)
        if schema is None:
            raise InvalidFilterError("the substrait filter has no base schema")
        struct = schema.message(2)
        fields = _base_fields(struct.messages(1) if struct else [], schema.strings(1))
    except (ProtobufError, StopIteration, RecursionError, ValueError) as exc:
        raise InvalidFilterError(f"malformed substrait filter: {exc or 'names missing'}") from None
    return _Decoder(functions, fields), root


def _base_fields(types: list[Message], names: list[str]) -> tuple[_Node, ...]:
    """Name the base schema's fields. Names are listed depth first; producers differ on whether
    structs inside lists and maps contribute names (pyarrow's do not), so both readings are tried."""
    for inside_containers in (False, True):
        if _name_count(types, inside_containers, 0) == len(names):
            return _struct_fields(types, iter(names), inside_containers, 0)
    raise ProtobufError(f"the base schema's {len(names)} names do not match its fields")


def _name_count(types: list[Message], inside_containers: bool, depth: int) -> int:
    if depth > _MAX_DEPTH:
        raise ProtobufError("schema nested too deeply")
    return sum(1 + _names_below(t, inside_containers, depth + 1) for t in types)


def _names_below(kind: Message, inside_containers: bool, depth: int) -> int:
    struct = kind.message(25)
    if struct is not None:
        return _name_count(struct.messages(1), inside_containers, depth)
    if not inside_containers:
        return 0
    return sum(_names_below(part, True, depth + 1) for part in _container_parts(kind))


def _container_parts(kind: Message) -> list[Message]:
    if (listed := kind.message(27)) is not None:
        return [m for m in (listed.message(1),) if m is not None]
    if (mapped := kind.message(28)) is not None:
        return [m for m in (mapped.message(1), mapped.message(2)) if m is not None]
    return []


def _struct_fields(types: list[Message], names: Iterator[str], inside_containers: bool,
                   depth: int) -> tuple[_Node, ...]:
    nodes = []
    for kind in types:
        name = next(names)
        struct = kind.message(25)
        if struct is not None:
            nodes.append(_Node(name, _struct_fields(struct.messages(1), names, inside_containers, depth + 1)))
            continue
        if inside_containers:
            for part in _container_parts(kind):
                _skip_names(part, names, depth + 1)
        nodes.append(_Node(name, None))
    return tuple(nodes)


def _skip_names(kind: Message, names: Iterator[str], depth: int) -> None:
    for _ in range(_names_below(kind, True, depth)):
        next(names)


class _Decoder:
    def __init__(self, functions: dict[int, str], fields: tuple[_Node, ...]) -> None:
        self.functions = functions
        self.fields = fields

    def _function(self, expression: Message) -> tuple[str, list[Message]] | None:
        call = expression.message(3)
        if call is None:
            return None
        anchor = call.uint(1)
        if anchor not in self.functions:
            raise ProtobufError(f"function reference {anchor} is not declared")
        arguments = []
        for argument in call.messages(4):
            value = argument.message(3)
            if value is None:
                raise UnsupportedExpression(f"{self.functions[anchor]} with a type or enum argument")
            arguments.append(value)
        return self.functions[anchor], arguments

    def and_terms(self, expression: Message, depth: int) -> list[Message]:
        if depth > _MAX_DEPTH:
            raise ProtobufError("expression nested too deeply")
        try:
            call = self._function(expression) if 3 in expression.numbers() else None
        except UnsupportedExpression:
            call = None
        if call is None or call[0] != "and" or not call[1]:
            return [expression]
        return [term for argument in call[1] for term in self.and_terms(argument, depth + 1)]

    def predicate(self, expression: Message, depth: int) -> Expr:
        if depth > _MAX_DEPTH:
            raise UnsupportedExpression("expression nested too deeply")
        kinds = expression.numbers() & {1, 2, 3, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17}
        if kinds == {8}:
            return self._in_list(expression.message(8), depth)  # type: ignore[arg-type]
        if kinds != {3}:
            raise UnsupportedExpression("only functions and IN lists can be filters")
        name, args = self._function(expression)  # type: ignore[misc]
        if name in ("and", "or") and args:
            terms = [self.predicate(a, depth + 1) for a in args]
            node = terms[0]
            for term in terms[1:]:
                node = And(node, term) if name == "and" else Or(node, term)
            return node
        if name == "not" and len(args) == 1:
            return Not(self.predicate(args[0], depth + 1))
        if name in ("is_null", "is_not_null") and len(args) == 1:
            return IsNull(self.column(args[0]), negated=name == "is_not_null")
        if name in _COMPARISONS and len(args) == 2:
            op = _COMPARISONS[name]
            left, right = args
            if 2 in left.numbers():
                return Comparison(op, self.column(left), Literal(self.literal(right)))
            return Comparison(op.flipped(), self.column(right), Literal(self.literal(left)))
        raise UnsupportedExpression(f"function {name!r} with {len(args)} arguments")

    def _in_list(self, options: Message, depth: int) -> Expr:
        value = options.message(1)
        if value is None:
            raise ProtobufError("IN list without a value")
        values = tuple(Literal(self.literal(o)) for o in options.messages(2))
        if not values:
            raise UnsupportedExpression("empty IN list")
        return InList(self.column(value), values)

    def column(self, expression: Message) -> Column:
        selection = expression.message(2)
        if selection is None:
            raise UnsupportedExpression("expected a column reference")
        if selection.numbers() & {2, 3, 5, 6}:
            raise UnsupportedExpression("only direct references to input columns are supported")
        segment = selection.message(1)
        nodes: tuple[_Node, ...] | None = self.fields
        path: list[str] = []
        while segment is not None:
            field = segment.message(2)
            if field is None:
                raise UnsupportedExpression("map key and list element references are not supported")
            if nodes is None:
                raise UnsupportedExpression(f"{'.'.join(path)} is not a struct")
            index = field.sint(1, 32)
            if not 0 <= index < len(nodes):
                raise ProtobufError(f"field reference {index} is outside the base schema")
            path.append(nodes[index].name)
            nodes = nodes[index].children
            segment = field.message(2)
        if not path:
            raise ProtobufError("empty field reference")
        return Column(tuple(path))

    def literal(self, expression: Message) -> LiteralValue:
        literal = expression.message(1)
        if literal is None:
            raise UnsupportedExpression("expected a literal")
        return _literal_value(literal)


def _literal_value(literal: Message) -> LiteralValue:
    kinds = literal.numbers() - {50, 51}
    if len(kinds) != 1:
        raise ProtobufError("a literal must hold exactly one value")
    [kind] = kinds
    if kind == 1:
        return bool(literal.uint(1))
    if kind in (2, 3, 5):
        return literal.sint(kind, 32)
    if kind == 7:
        return literal.sint(7, 64)
    if kind == 10:
        return literal.fixed32_float(10)
    if kind == 11:
        return literal.fixed64_float(11)
    if kind in (12, 21):
        return literal.strings(kind)[-1]
    if kind == 22:
        varchar = literal.message(22)
        return varchar.strings(1)[-1] if varchar and varchar.strings(1) else ""
    if kind in (13, 23):
        return literal.raw(kind) or b""
    if kind == 16:
        return dt.date(1970, 1, 1) + dt.timedelta(days=literal.sint(16, 32))
    if kind in (14, 27):  # deprecated microsecond timestamps (still written by older producers)
        return _timestamp(literal.sint(kind, 64), 6, utc=kind == 27)
    if kind in (34, 35):
        value = literal.message(kind)
        assert value is not None
        return _timestamp(value.sint(2, 64), value.sint(1, 32), utc=kind == 35)
    if kind == 24:
        return _decimal(literal.message(24))  # type: ignore[arg-type]
    if kind in (17, 37):
        if kind == 17:
            micros = literal.sint(17, 64)
        else:
            value = literal.message(37)
            assert value is not None
            micros = _to_micros(value.sint(2, 64), value.sint(1, 32))
        if not 0 <= micros < 86_400_000_000:
            raise ProtobufError(f"time literal of {micros} microseconds is outside one day")
        return (dt.datetime.min + dt.timedelta(microseconds=micros)).time()
    if kind == 29:
        raise UnsupportedExpression("comparison with a NULL literal")
    raise UnsupportedExpression(f"literal kind {kind}")


def _to_micros(value: int, precision: int) -> int:
    if precision not in (0, 3, 6, 9, 12):
        raise ProtobufError(f"unsupported timestamp precision {precision}")
    if precision <= 6:
        return value * 10 ** (6 - precision)
    scale = 10 ** (precision - 6)
    if value % scale:
        raise UnsupportedExpression("timestamp literal finer than microseconds")
    return value // scale


def _timestamp(value: int, precision: int, *, utc: bool) -> dt.datetime:
    moment = _EPOCH + dt.timedelta(microseconds=_to_micros(value, precision))
    return moment.replace(tzinfo=dt.UTC) if utc else moment


def _decimal(message: Message) -> Decimal:
    raw = message.raw(1) or b""
    if len(raw) != 16:
        raise ProtobufError(f"decimal literal of {len(raw)} bytes (16 expected)")
    scale = message.sint(3, 32)
    if not 0 <= scale <= 76:
        raise ProtobufError(f"decimal scale {scale}")
    return Decimal(f"{int.from_bytes(raw, 'little', signed=True)}E-{scale}")
