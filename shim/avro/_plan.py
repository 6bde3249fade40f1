"""A decoding plan: the parsed Avro schema turned into a tree of nodes the decoder walks."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from shim.avro.schema import arrow_field, arrow_type_at, logical_arrow_type, union_branches
from shim.errors import InvalidTableError


class Kind(enum.Enum):
    """How a node is encoded."""

    NULL = enum.auto()
    BOOLEAN = enum.auto()
    INT = enum.auto()
    LONG = enum.auto()
    FLOAT = enum.auto()
    DOUBLE = enum.auto()
    BYTES = enum.auto()
    STRING = enum.auto()
    FIXED = enum.auto()
    ENUM = enum.auto()
    DECIMAL_BYTES = enum.auto()
    DECIMAL_FIXED = enum.auto()
    RECORD = enum.auto()
    ARRAY = enum.auto()
    MAP = enum.auto()
    NULLABLE = enum.auto()


_PRIMITIVE_KINDS = {
    "null": Kind.NULL,
    "boolean": Kind.BOOLEAN,
    "int": Kind.INT,
    "long": Kind.LONG,
    "float": Kind.FLOAT,
    "double": Kind.DOUBLE,
    "bytes": Kind.BYTES,
    "string": Kind.STRING,
}
_CONSTANT_SIZE = {Kind.NULL: 0, Kind.BOOLEAN: 1, Kind.FLOAT: 4, Kind.DOUBLE: 8}
_MIN_SIZE = {Kind.NULL: 0, Kind.BOOLEAN: 1, Kind.FLOAT: 4, Kind.DOUBLE: 8}


@dataclass(slots=True)
class FieldPlan:
    """A record field: its name, Arrow field and node."""

    name: str
    arrow_field: pa.Field
    node: Node


@dataclass(slots=True)
class Node:
    """One Avro type to decode.

    Attributes:
        size: encoded size in bytes when constant (null, boolean, float, double, fixed, records
            of those), else -1.
        min_size: fewest bytes a value can take (guards item counts against corrupt data).
        branches, value_branch: for NULLABLE, how many branches the union has and which one holds
            the value (-1 for a union of "null" alone).
        min_item_size: for ARRAY and MAP, the fewest bytes an item takes.
    """

    kind: Kind
    arrow_type: pa.DataType
    size: int = -1
    min_size: int = 1
    children: list[Node] = field(default_factory=list)
    fields: list[FieldPlan] = field(default_factory=list)
    symbols: pa.Array | None = None
    branches: int = 0
    value_branch: int = -1
    min_item_size: int = 0
    key: Node | None = None


_STRING_KEY = Node(Kind.STRING, pa.string())


def compile_record(schema: Mapping[str, Any]) -> Node:
    """Plan for a parsed Avro record schema."""
    if not isinstance(schema, Mapping) or schema.get("type") not in ("record", "error"):
        raise InvalidTableError("Avro schema to decode must be a record")
    return _compile(schema, str(schema.get("name", "<record>")), top=True)


def _compile(t: Any, path: str, top: bool = False) -> Node:
    if isinstance(t, dict) and t.get("type") in ("record", "error"):
        fields = []
        for f in t["fields"]:
            name = str(f["name"])
            field_path = name if top else f"{path}.{name}"
            fields.append(FieldPlan(name, arrow_field(f, field_path), _compile(f["type"], field_path)))
        sizes = [f.node.size for f in fields]
        size = sum(sizes) if all(s >= 0 for s in sizes) else -1
        arrow_struct = pa.struct([f.arrow_field for f in fields])
        min_size = sum(f.node.min_size for f in fields)
        return Node(Kind.RECORD, arrow_struct, size=size, min_size=min_size, fields=fields)
    arrow_type, _ = arrow_type_at(t, path)
    if isinstance(t, list):
        branch, _null_index = union_branches(t, path)
        inner = _compile(branch, path)
        value_branch = -1 if branch == "null" else next(i for i, b in enumerate(t) if b != "null")
        return Node(Kind.NULLABLE, arrow_type, children=[inner], branches=len(t), value_branch=value_branch)
    if isinstance(t, str):
        kind = _PRIMITIVE_KINDS[t]
        return Node(kind, arrow_type, size=_CONSTANT_SIZE.get(kind, -1), min_size=_MIN_SIZE.get(kind, 1))
    kind_name = t["type"]
    logical = logical_arrow_type(t)
    if logical is not None and pa.types.is_decimal(logical):
        if kind_name == "fixed":
            size = int(t["size"])
            return Node(Kind.DECIMAL_FIXED, logical, size=size, min_size=size)
        return Node(Kind.DECIMAL_BYTES, logical)
    if kind_name in _PRIMITIVE_KINDS:
        kind = _PRIMITIVE_KINDS[kind_name]
        return Node(kind, arrow_type, size=_CONSTANT_SIZE.get(kind, -1), min_size=_MIN_SIZE.get(kind, 1))
    if kind_name == "enum":
        symbols = pa.array([str(s) for s in t["symbols"]], type=pa.string())
        return Node(Kind.ENUM, arrow_type, symbols=symbols)
    if kind_name == "fixed":
        size = int(t["size"])
        return Node(Kind.FIXED, arrow_type, size=size, min_size=size)
    if kind_name == "array":
        items = _compile(t["items"], f"{path}.element")
        return Node(Kind.ARRAY, arrow_type, children=[items], min_item_size=items.min_size)
    if kind_name == "map":
        values = _compile(t["values"], f"{path}.value")
        return Node(
            Kind.MAP, arrow_type, children=[values], min_item_size=1 + values.min_size, key=_STRING_KEY
        )
    raise InvalidTableError(f"Avro schema: unknown type {kind_name!r} at {path!r}")
