"""Avro schema JSON: parsing with named-type resolution, and the mapping to Arrow types.

The Arrow types are the ones hudi-rs returns for the same Avro schemas (lists name their child
`element`, maps use pyarrow's default `entries/key/value`, timestamps are UTC unless local).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from shim.errors import InvalidTableError, UnsupportedFeatureError

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_NAMED = frozenset({"record", "error", "enum", "fixed"})

_INT_LOGICAL: dict[str, pa.DataType] = {
    "date": pa.date32(),
    "time-millis": pa.time32("ms"),
}
_LONG_LOGICAL: dict[str, pa.DataType] = {
    "time-micros": pa.time64("us"),
    "timestamp-millis": pa.timestamp("ms", tz="UTC"),
    "timestamp-micros": pa.timestamp("us", tz="UTC"),
    "timestamp-nanos": pa.timestamp("ns", tz="UTC"),
    "local-timestamp-millis": pa.timestamp("ms"),
    "local-timestamp-micros": pa.timestamp("us"),
    "local-timestamp-nanos": pa.timestamp("ns"),
}
_PRIMITIVE_ARROW: dict[str, pa.DataType] = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}


def parse_avro_schema(schema: str | Mapping[str, Any]) -> dict[str, Any]:
    """Parse an Avro schema and inline every named-type reference.

    Args:
        schema: Avro schema JSON text or already-parsed JSON (a record, enum, array... object).

    Returns:
        A new dict in which each reference to a named type is replaced by its full definition
        (the same dict object where a type is used twice), named types carry their namespace
        explicitly, and primitive types are plain strings unless they carry a logical type.

    Raises:
        InvalidTableError: the text is not JSON, or the schema is malformed (names what failed).
        UnsupportedFeatureError: a recursive named type (feature "avro-recursive-type").
    """
    if isinstance(schema, str):
        try:
            parsed: Any = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise InvalidTableError(
                f"Avro schema is not valid JSON ({exc.msg} at character {exc.pos}): {schema[:200]!r}"
            ) from exc
    else:
        parsed = copy.deepcopy(dict(schema))
    if not isinstance(parsed, dict):
        raise InvalidTableError(f"Avro schema must be a JSON object, got {type(parsed).__name__}")
    resolved = _Resolver().resolve(parsed, None, "<schema>")
    if not isinstance(resolved, dict):
        raise InvalidTableError(f"Avro schema must be a complex type, got {resolved!r}")
    return resolved


class _Resolver:
    def __init__(self) -> None:
        self.names: dict[str, dict[str, Any]] = {}
        self.in_progress: set[str] = set()

    def resolve(self, node: Any, namespace: str | None, where: str) -> Any:
        if isinstance(node, str):
            return self._reference(node, namespace, where)
        if isinstance(node, list):
            return [self.resolve(branch, namespace, where) for branch in node]
        if not isinstance(node, dict):
            raise InvalidTableError(f"Avro schema: {where} has an invalid type {node!r}")
        kind = node.get("type")
        if kind is None:
            raise InvalidTableError(f"Avro schema: {where} has no 'type'")
        if not isinstance(kind, str):
            return self.resolve(kind, namespace, where)
        if kind in PRIMITIVES:
            return dict(node) if "logicalType" in node else kind
        if kind in _NAMED:
            return self._named(node, kind, namespace, where)
        if kind == "array":
            if "items" not in node:
                raise InvalidTableError(f"Avro schema: array at {where} has no 'items'")
            return {**node, "items": self.resolve(node["items"], namespace, f"{where}[]")}
        if kind == "map":
            if "values" not in node:
                raise InvalidTableError(f"Avro schema: map at {where} has no 'values'")
            return {**node, "values": self.resolve(node["values"], namespace, f"{where}{{}}")}
        return self._reference(kind, namespace, where)

    def _named(self, node: dict[str, Any], kind: str, namespace: str | None, where: str) -> dict[str, Any]:
        name = node.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidTableError(f"Avro schema: {kind} at {where} has no 'name'")
        full = _full_name(name, node.get("namespace", namespace))
        if full in self.names:
            # An already-inlined schema repeats the same definition; anything else is a clash.
            if node is self.names[full] or node == self.names[full]:
                return self.names[full]
            raise InvalidTableError(f"Avro schema: named type {full!r} is defined twice differently")
        own_namespace = full.rpartition(".")[0] or None
        out = dict(node)
        if own_namespace and "." not in name and "namespace" not in node:
            # Inherited namespaces become explicit so an inlined copy elsewhere keeps its full name.
            out = {}
            for key, item in node.items():
                out[key] = item
                if key == "name":
                    out["namespace"] = own_namespace
        self.names[full] = out
        if kind in ("record", "error"):
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise InvalidTableError(f"Avro schema: record {full!r} has no 'fields' list")
            self.in_progress.add(full)
            resolved_fields = []
            for field in fields:
                if not isinstance(field, dict) or "name" not in field or "type" not in field:
                    raise InvalidTableError(f"Avro schema: record {full!r} has a malformed field {field!r}")
                field_where = f"{full}.{field['name']}"
                resolved_fields.append(
                    {**field, "type": self.resolve(field["type"], own_namespace, field_where)}
                )
            self.in_progress.discard(full)
            out["fields"] = resolved_fields
        elif kind == "enum" and not isinstance(node.get("symbols"), list):
            raise InvalidTableError(f"Avro schema: enum {full!r} has no 'symbols' list")
        elif kind == "fixed" and not isinstance(node.get("size"), int):
            raise InvalidTableError(f"Avro schema: fixed {full!r} has no integer 'size'")
        return out

    def _reference(self, name: str, namespace: str | None, where: str) -> Any:
        if name in PRIMITIVES:
            return name
        candidates = [name] if "." in name else [_full_name(name, namespace), name]
        for candidate in candidates:
            if candidate in self.in_progress:
                raise UnsupportedFeatureError(
                    f"Avro schema: recursive type {candidate!r} at {where} cannot be read as Arrow",
                    feature="avro-recursive-type",
                )
            if candidate in self.names:
                return self.names[candidate]
        raise InvalidTableError(f"Avro schema: unknown type {name!r} at {where}")


def _full_name(name: str, namespace: str | None) -> str:
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"


def full_name(node: Mapping[str, Any]) -> str:
    """The full name of a named Avro type (record, enum, fixed)."""
    return _full_name(str(node["name"]), node.get("namespace"))


def avro_to_arrow_schema(schema: str | Mapping[str, Any]) -> pa.Schema:
    """Arrow schema of an Avro record schema (JSON text or parsed)."""
    parsed = parse_avro_schema(schema)
    if parsed.get("type") not in ("record", "error"):
        raise InvalidTableError(
            f"Avro schema must be a record to become an Arrow schema, got {parsed['type']!r}"
        )
    return pa.schema([arrow_field(f, str(f["name"])) for f in parsed["fields"]])


def avro_to_arrow_type(t: Any) -> tuple[pa.DataType, bool]:
    """Arrow type of a parsed Avro type and whether it is nullable (a union with "null")."""
    return arrow_type_at(t, "<type>")


def arrow_field(field: Mapping[str, Any], path: str) -> pa.Field:
    """Arrow field of an Avro record field; `path` names it in error messages."""
    data_type, nullable = arrow_type_at(field["type"], path)
    return pa.field(str(field["name"]), data_type, nullable=nullable)


def union_branches(t: list[Any], path: str) -> tuple[Any, int | None]:
    """The non-null branch of a nullable union and the index of "null" in it (None if absent).

    Raises:
        UnsupportedFeatureError: more than one non-null branch (feature "avro-union").
    """
    non_null = [b for b in t if b != "null"]
    if len(non_null) > 1:
        raise UnsupportedFeatureError(
            f'Avro field {path!r} is a union of {len(non_null)} non-null types; only ["null", T] '
            "unions can be read",
            feature="avro-union",
            column=path,
        )
    null_index = t.index("null") if "null" in t else None
    return (non_null[0] if non_null else "null"), null_index


def arrow_type_at(t: Any, path: str) -> tuple[pa.DataType, bool]:
    """`avro_to_arrow_type` naming the field at `path` in its errors."""
    if isinstance(t, list):
        branch, null_index = union_branches(t, path)
        data_type, nullable = arrow_type_at(branch, path)
        return data_type, nullable or null_index is not None
    if isinstance(t, str):
        if t in _PRIMITIVE_ARROW:
            return _PRIMITIVE_ARROW[t], t == "null"
        raise InvalidTableError(f"Avro schema: unresolved type {t!r} at {path!r}; parse it first")
    kind = t["type"]
    logical = logical_arrow_type(t)
    if logical is not None:
        return logical, False
    if kind in _PRIMITIVE_ARROW:
        return _PRIMITIVE_ARROW[kind], kind == "null"
    if kind in ("record", "error"):
        fields = [arrow_field(f, f"{path}.{f['name']}") for f in t["fields"]]
        return pa.struct(fields), False
    if kind == "enum":
        return pa.string(), False
    if kind == "fixed":
        return pa.binary(int(t["size"])), False
    if kind == "array":
        item_type, item_nullable = arrow_type_at(t["items"], f"{path}.element")
        return pa.list_(pa.field("element", item_type, nullable=item_nullable)), False
    if kind == "map":
        value_type, value_nullable = arrow_type_at(t["values"], f"{path}.value")
        return pa.map_(pa.string(), pa.field("value", value_type, nullable=value_nullable)), False
    raise InvalidTableError(f"Avro schema: unknown type {kind!r} at {path!r}")


def logical_arrow_type(t: Mapping[str, Any]) -> pa.DataType | None:
    """Arrow type of a valid Avro logical type; None when absent or invalid (Avro ignores those)."""
    logical = t.get("logicalType")
    kind = t.get("type")
    if logical is None:
        return None
    if kind == "int":
        return _INT_LOGICAL.get(logical)
    if kind == "long":
        return _LONG_LOGICAL.get(logical)
    if logical == "decimal" and kind in ("bytes", "fixed"):
        return _decimal_type(t)
    return None


def _decimal_type(t: Mapping[str, Any]) -> pa.DataType | None:
    precision = t.get("precision")
    scale = t.get("scale", 0)
    if not isinstance(precision, int) or not isinstance(scale, int):
        return None
    if precision < 1 or scale < 0 or scale > precision:
        return None
    if t["type"] == "fixed" and precision > max_decimal_precision(int(t["size"])):
        return None
    if precision > 76:
        raise UnsupportedFeatureError(
            f"Avro decimal precision {precision} exceeds Arrow's 76 digits", feature="avro-decimal-precision"
        )
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


def max_decimal_precision(size: int) -> int:
    """Largest decimal precision a `size`-byte two's complement integer holds."""
    return len(str(2 ** (8 * size - 1) - 1)) - 1 if size > 0 else 0


def min_bytes_for_precision(precision: int) -> int:
    """Fewest bytes of a two's complement integer holding `precision` decimal digits (Spark's rule)."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


def named_once(schema: Any) -> Any:
    """The schema with each named type defined at its first use and referenced by name after.

    Parsed schemas inline named types everywhere they are used; Avro libraries (fastavro, Java)
    refuse a second definition, so hand them this form. References are written as Java's
    Schema.toString writes them: the short name inside the type's own namespace, else the full name.
    """
    return _name_once(schema, None, set())


def _name_once(node: Any, namespace: str | None, seen: set[str]) -> Any:
    if isinstance(node, list):
        return [_name_once(branch, namespace, seen) for branch in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind in _NAMED:
        full = _full_name(str(node["name"]), node.get("namespace", namespace))
        own_namespace, _, short = full.rpartition(".")
        if full in seen:
            return short if (own_namespace or None) == namespace else full
        seen.add(full)
        if kind in ("record", "error"):
            inner = own_namespace or None
            fields = [{**f, "type": _name_once(f["type"], inner, seen)} for f in node["fields"]]
            return {**node, "fields": fields}
        return dict(node)
    if kind == "array":
        return {**node, "items": _name_once(node["items"], namespace, seen)}
    if kind == "map":
        return {**node, "values": _name_once(node["values"], namespace, seen)}
    return dict(node)
