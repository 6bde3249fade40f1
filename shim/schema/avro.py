"""InternalSchema <-> Avro schema, as Hudi's `AvroInternalSchemaConverter` converts them.

Id assignment must equal Hudi's so that a file whose schema is rebuilt from its commit's Avro
schema gets the ids Spark gave the same columns: the root record's fields take ids 0..n-1;
then, field by field, a nested record takes a block of ids for its fields before its children
are visited, an array takes one id for its element, a map two (key, value). Every branch of a
union is visited (and takes ids); the first non-null branch is the type. A field is optional
only for a two-branch union with `null`.

Logical types follow Hudi 1.x: `timestamp-millis`, `time-millis` and `local-timestamp-*` map
to their own types (Hudi 0.x folded the first two into `timestamp`/`time` and read local
timestamps as `long`; `promote` treats the millis and micros variants as one family).
"""

from __future__ import annotations

import json
import math
from typing import Any

from shim.errors import InvalidTableError, UnsupportedFeatureError
from shim.schema.internal_schema import META_FIELD_NAMES, InternalSchema
from shim.schema.types import (
    BINARY,
    BOOLEAN,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    LOCAL_TIMESTAMP_MICROS,
    LOCAL_TIMESTAMP_MILLIS,
    LONG,
    STRING,
    TIME,
    TIME_MILLIS,
    TIMESTAMP,
    TIMESTAMP_MILLIS,
    UUID,
    ArrayType,
    DecimalType,
    Field,
    FixedType,
    MapType,
    PrimitiveType,
    RecordType,
    Type,
    VectorType,
    vector_type,
)

_AVRO_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


def add_meta_fields(avro: dict[str, Any] | str) -> dict[str, Any]:
    """The record schema with Hudi's five meta columns first (`HoodieAvroUtils.addMetadataFields`).

    Existing meta columns are dropped and re-added in front as `["null","string"]` with doc ""
    and default null, so a writer schema with or without them gives the same result.
    """
    schema = _parse(avro)
    meta = [{"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in META_FIELD_NAMES]
    rest = [f for f in schema.get("fields", []) if f.get("name") not in META_FIELD_NAMES]
    return {**schema, "fields": meta + rest}


def internal_from_avro(
    avro: dict[str, Any] | str, *, version_id: int = 0, add_meta: bool = False
) -> InternalSchema:
    """Convert an Avro record schema to an InternalSchema with fresh ids, exactly as Hudi does.

    Args:
        avro: the Avro schema, parsed or as JSON text.
        version_id: the version (commit instant) to stamp on the result.
        add_meta: first prepend the meta columns, as Hudi does when it derives a file's
            InternalSchema from a commit's writer schema (then meta columns get ids 0-4).

    Raises:
        InvalidTableError: the schema is not an Avro record, or is recursive.
        UnsupportedFeatureError: it uses an Avro type Hudi cannot convert.
    """
    schema = add_meta_fields(avro) if add_meta else _parse(avro)
    if schema.get("type") != "record":
        raise InvalidTableError(f"Avro schema is not a record: {json.dumps(schema)[:200]}")
    try:
        record = _FromAvro().convert(schema, None, root=True)
    except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as exc:
        # a value of the wrong kind somewhere in the tree (a field without a name, ...)
        raise InvalidTableError(f"Avro schema is malformed: {type(exc).__name__}: {exc}") from None
    assert isinstance(record, RecordType)
    return InternalSchema(record, version_id)


def _parse(avro: dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(avro, dict):
        return avro
    try:
        parsed = json.loads(avro)
    except ValueError as exc:
        raise InvalidTableError(f"Avro schema cannot be parsed: {exc}") from exc
    if not isinstance(parsed, dict):
        raise InvalidTableError(f"Avro schema is not a record: {avro[:200]}")
    return parsed


class _FromAvro:
    """One conversion: the id counter, named types seen, and records on the current path."""

    def __init__(self) -> None:
        self.next_id = 0
        self.named: dict[str, Any] = {}
        self.visiting: list[str] = []

    def _take(self, count: int) -> int:
        first = self.next_id
        self.next_id += count
        return first

    def convert(self, schema: Any, namespace: str | None, *, root: bool = False) -> Type | None:
        if isinstance(schema, str):
            return self._named_or_primitive(schema, namespace)
        if isinstance(schema, list):
            return self._union(schema, namespace)
        if not isinstance(schema, dict):
            raise InvalidTableError(f"Avro schema element is not readable: {schema!r}")
        kind = schema.get("type")
        if kind in ("record", "error"):
            return self._record(schema, namespace)
        if kind == "array":
            element_id = self._take(1)
            items = schema.get("items")
            element = self._require(self.convert(items, namespace), "array items")
            return ArrayType(element_id, element, _is_optional(items))
        if kind == "map":
            key_id = self._take(2)
            values = schema.get("values")
            value = self._require(self.convert(values, namespace), "map values")
            return MapType(key_id, STRING, key_id + 1, value, _is_optional(values))
        if kind in ("enum", "fixed"):
            self._register(schema, namespace)
        if isinstance(kind, (dict, list)):
            return self.convert(kind, namespace)
        return _primitive(schema)

    def _record(self, schema: dict[str, Any], namespace: str | None) -> RecordType:
        full_name = self._register(schema, namespace)
        if full_name in self.visiting:
            raise InvalidTableError(f"cannot convert recursive Avro record {full_name}")
        self.visiting.append(full_name)
        own_namespace = full_name.rpartition(".")[0] or None
        fields = schema.get("fields", [])
        first_id = self._take(len(fields))
        types = [self.convert(f.get("type"), own_namespace) for f in fields]
        self.visiting.pop()
        out = []
        for i, (f, t) in enumerate(zip(fields, types, strict=True)):
            if t is None:
                raise UnsupportedFeatureError(
                    f"Avro field '{f.get('name')}' of {full_name} has type null, which Hudi cannot convert",
                    feature="avro-null-field",
                )
            out.append(Field(first_id + i, str(f["name"]), t, _is_optional(f.get("type")), f.get("doc")))
        return RecordType(tuple(out), full_name)

    def _union(self, branches: list[Any], namespace: str | None) -> Type | None:
        types = [self.convert(b, namespace) for b in branches]
        if not types:
            raise InvalidTableError("Avro union has no branches")
        if types[0] is not None:
            return types[0]
        return types[1] if len(types) > 1 else None

    def _register(self, schema: dict[str, Any], namespace: str | None) -> str:
        full_name = _full_name(schema.get("name", ""), schema.get("namespace", namespace))
        self.named[full_name] = schema
        return full_name

    def _named_or_primitive(self, name: str, namespace: str | None) -> Type | None:
        if name in _AVRO_PRIMITIVES:
            return _primitive({"type": name})
        full = name if "." in name or namespace is None else f"{namespace}.{name}"
        target = self.named.get(full, self.named.get(name))
        if target is None:
            raise InvalidTableError(f"Avro schema refers to undefined type '{name}'")
        if target.get("type") in ("record", "error"):
            # A second use of a record type converts it again, with fresh ids, as Hudi does.
            if full in self.visiting:
                raise InvalidTableError(f"cannot convert recursive Avro record {full}")
            return self._record(target, namespace)
        return _primitive(target)

    @staticmethod
    def _require(t: Type | None, what: str) -> Type:
        if t is None:
            raise UnsupportedFeatureError(
                f"Avro {what} of type null cannot be converted", feature="avro-null-field"
            )
        return t


def _full_name(name: str, namespace: str | None) -> str:
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"


def _is_optional(schema: Any) -> bool:
    return isinstance(schema, list) and len(schema) == 2 and ("null" in schema or {"type": "null"} in schema)


def _vector(schema: dict[str, Any]) -> VectorType:
    """Hudi 1.2's VECTOR: a `fixed` of `dimension * element size` bytes with logical type `vector`
    and the properties `dimension`, `elementType` and `storageBacking`."""
    where = f"Avro fixed {schema.get('name')!r} (logical type vector)"
    try:
        dimension = int(schema.get("dimension", 0))
    except (TypeError, ValueError):
        dimension = 0
    vector = vector_type(dimension, schema.get("elementType"), schema.get("storageBacking"), where=where)
    if int(schema["size"]) != vector.byte_size:
        raise InvalidTableError(f"{where}: size {schema['size']} is not {vector.byte_size} bytes ({vector})")
    return vector


def _primitive(schema: dict[str, Any]) -> PrimitiveType | None:
    kind = schema.get("type")
    logical = schema.get("logicalType")
    if logical == "decimal" and kind in ("bytes", "fixed"):
        return DecimalType(int(schema["precision"]), int(schema.get("scale", 0)))
    if logical == "date" and kind == "int":
        return DATE
    if logical == "time-millis" and kind == "int":
        return TIME_MILLIS
    if logical == "time-micros" and kind == "long":
        return TIME
    if logical == "timestamp-millis" and kind == "long":
        return TIMESTAMP_MILLIS
    if logical == "timestamp-micros" and kind == "long":
        return TIMESTAMP
    if logical == "local-timestamp-millis" and kind == "long":
        return LOCAL_TIMESTAMP_MILLIS
    if logical == "local-timestamp-micros" and kind == "long":
        return LOCAL_TIMESTAMP_MICROS
    if logical == "uuid" and kind in ("string", "fixed"):
        return UUID
    if logical == "vector" and kind == "fixed":
        return _vector(schema)
    simple = {
        "boolean": BOOLEAN,
        "int": INT,
        "long": LONG,
        "float": FLOAT,
        "double": DOUBLE,
        "string": STRING,
        "enum": STRING,
        "bytes": BINARY,
    }
    if kind in simple:
        return simple[kind]
    if kind == "fixed":
        return FixedType(int(schema["size"]))
    if kind == "null":
        return None
    raise UnsupportedFeatureError(
        f"Avro type {json.dumps(schema)[:200]} is not supported", feature="avro-type"
    )


# -- InternalSchema -> Avro ----------------------------------------------------------------


def internal_to_avro(schema: InternalSchema | RecordType, record_name: str) -> dict[str, Any]:
    """Convert to an Avro record schema named as Hudi names it.

    A record keeps the Avro name it was read with; otherwise it is named
    `<parent name>.<field name>` (so `trip.fare` gets namespace `trip`, name `fare`). Arrays
    and maps pass their field's name to their element/value. Fixed, decimal and uuid become
    `fixed` types named `<field name path>.fixed`. Optional types become `["null", T]` with
    default null. A record equal to one already written is referred to by name.
    """
    record = schema.record if isinstance(schema, InternalSchema) else schema
    writer = _ToAvro()
    out = writer.convert(record, record_name, None)
    assert isinstance(out, dict)
    return out


class _ToAvro:
    def __init__(self) -> None:
        self.records: dict[RecordType, str] = {}

    def convert(self, type_: Type, name: str, namespace: str | None) -> Any:
        if isinstance(type_, RecordType):
            return self._record(type_, name, namespace)
        if isinstance(type_, ArrayType):
            items = self.convert(type_.element, name, namespace)
            return {"type": "array", "items": _nullable(items) if type_.element_optional else items}
        if isinstance(type_, MapType):
            if type_.key != STRING:
                raise UnsupportedFeatureError(
                    f"map key type {type_.key} has no Avro form (keys must be strings)",
                    feature="avro-map-key",
                )
            values = self.convert(type_.value, name, namespace)
            return {"type": "map", "values": _nullable(values) if type_.value_optional else values}
        assert isinstance(type_, PrimitiveType)
        return _primitive_to_avro(type_, name, namespace)

    def _record(self, record: RecordType, fallback: str, namespace: str | None) -> Any:
        full_name = record.name or fallback
        rec_namespace, _, short = full_name.rpartition(".")
        field_schemas = []
        for f in record.fields:
            t = self.convert(f.type, f"{fallback}.{f.name}", rec_namespace or None)
            field_schemas.append(_nullable(t) if f.optional else t)
        seen = self.records.get(record)
        if seen is not None:
            return seen
        self.records[record] = full_name
        fields = []
        for f, t in zip(record.fields, field_schemas, strict=True):
            entry: dict[str, Any] = {"name": f.name, "type": t}
            if f.doc is not None:
                entry["doc"] = f.doc
            if f.optional:
                entry["default"] = None
            fields.append(entry)
        out: dict[str, Any] = {"type": "record", "name": short}
        if rec_namespace and rec_namespace != namespace:
            out["namespace"] = rec_namespace
        out["fields"] = fields
        return out


def _nullable(schema: Any) -> Any:
    if isinstance(schema, list):
        return schema
    return ["null", schema]


def _fixed(own_namespace: str, enclosing: str | None, size: int, **extra: Any) -> dict[str, Any]:
    # Hudi names every fixed `<field path>.fixed`: namespace = the field path, name = "fixed".
    out: dict[str, Any] = {"type": "fixed", "name": "fixed"}
    if own_namespace != enclosing:
        out["namespace"] = own_namespace
    out["size"] = size
    out.update(extra)
    return out


def min_bytes_for_precision(precision: int) -> int:
    """Smallest fixed size holding a decimal of `precision` digits (Spark's rule, as Hudi uses)."""
    size = 1
    while math.pow(2.0, 8 * size - 1) < math.pow(10.0, precision):
        size += 1
    return size


def _primitive_to_avro(type_: PrimitiveType, name: str, namespace: str | None) -> Any:
    if isinstance(type_, DecimalType):
        return _fixed(
            name,
            namespace,
            min_bytes_for_precision(type_.precision),
            logicalType="decimal",
            precision=type_.precision,
            scale=type_.scale,
        )
    if isinstance(type_, FixedType):
        return _fixed(name, namespace, type_.length)
    if type_ == UUID:
        return _fixed(name, namespace, 16, logicalType="uuid")
    if isinstance(type_, VectorType):
        return _fixed(name, namespace, type_.byte_size, logicalType="vector", dimension=type_.dimension,
                      elementType=type_.element_type, storageBacking=type_.storage_backing)
    simple: dict[PrimitiveType, Any] = {
        BOOLEAN: "boolean",
        INT: "int",
        LONG: "long",
        FLOAT: "float",
        DOUBLE: "double",
        STRING: "string",
        BINARY: "bytes",
        DATE: {"type": "int", "logicalType": "date"},
        TIME: {"type": "long", "logicalType": "time-micros"},
        TIME_MILLIS: {"type": "int", "logicalType": "time-millis"},
        TIMESTAMP: {"type": "long", "logicalType": "timestamp-micros"},
        TIMESTAMP_MILLIS: {"type": "long", "logicalType": "timestamp-millis"},
        LOCAL_TIMESTAMP_MICROS: {"type": "long", "logicalType": "local-timestamp-micros"},
        LOCAL_TIMESTAMP_MILLIS: {"type": "long", "logicalType": "local-timestamp-millis"},
    }
    return simple[type_]
