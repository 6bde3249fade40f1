"""The Avro schema Hudi writes for an Arrow schema (Spark's SchemaConverters naming)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from shim.avro.schema import full_name, min_bytes_for_precision
from shim.errors import UnsupportedFeatureError


def arrow_to_avro_schema(schema: pa.Schema, name: str, namespace: str | None) -> dict[str, Any]:
    """Avro record schema for writing an Arrow schema, the way Hudi (Spark's SchemaConverters) does.

    Nullable fields become `["null", T]` with `"default": null`. A nested record is named after its
    field and lives in the namespace `<parent namespace>.<parent name>`; a decimal becomes a
    `fixed` named `fixed` in `<namespace>.<field>` sized for its precision.

    Raises:
        UnsupportedFeatureError: a type Avro cannot hold (feature "arrow-type"), naming the column.
    """
    return _ArrowToAvro().record(list(schema), name, namespace or None)


class _ArrowToAvro:
    def __init__(self) -> None:
        self.defined: dict[str, dict[str, Any]] = {}

    def record(self, fields: list[pa.Field], name: str, namespace: str | None) -> Any:
        child_namespace = f"{namespace}.{name}" if namespace else name
        avro_fields = [self.field(f, child_namespace) for f in fields]
        out: dict[str, Any] = {"type": "record", "name": name}
        if namespace:
            out["namespace"] = namespace
        out["fields"] = avro_fields
        return self._define(out)

    def field(self, field: pa.Field, namespace: str) -> dict[str, Any]:
        avro_type = self.type(field.type, field.name, namespace)
        if field.nullable and avro_type != "null":
            return {"name": field.name, "type": ["null", avro_type], "default": None}
        return {"name": field.name, "type": avro_type}

    def type(self, t: pa.DataType, name: str, namespace: str) -> Any:
        if pa.types.is_struct(t):
            return self.record([t.field(i) for i in range(t.num_fields)], name, namespace)
        if pa.types.is_map(t):
            if not (pa.types.is_string(t.key_type) or pa.types.is_large_string(t.key_type)):
                raise _unsupported(t, name)
            return {"type": "map", "values": self._maybe_null(t.item_field, name, namespace)}
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            return {"type": "array", "items": self._maybe_null(t.value_field, name, namespace)}
        if pa.types.is_dictionary(t):
            return self.type(t.value_type, name, namespace)
        if pa.types.is_decimal(t):
            fixed: dict[str, Any] = {"type": "fixed", "name": "fixed", "namespace": f"{namespace}.{name}"}
            fixed.update(size=min_bytes_for_precision(t.precision), logicalType="decimal")
            fixed.update(precision=t.precision, scale=t.scale)
            return self._define(fixed)
        if pa.types.is_fixed_size_binary(t):
            fixed = {
                "type": "fixed",
                "name": "fixed",
                "namespace": f"{namespace}.{name}",
                "size": t.byte_width,
            }
            return self._define(fixed)
        if pa.types.is_timestamp(t):
            unit = {"s": "millis", "ms": "millis", "us": "micros", "ns": "nanos"}[t.unit]
            prefix = "timestamp" if t.tz is not None else "local-timestamp"
            return {"type": "long", "logicalType": f"{prefix}-{unit}"}
        if t == pa.date32() or t == pa.date64():
            return {"type": "int", "logicalType": "date"}
        if pa.types.is_time32(t):
            return {"type": "int", "logicalType": "time-millis"}
        if t == pa.time64("us"):
            return {"type": "long", "logicalType": "time-micros"}
        simple = _SIMPLE_AVRO.get(t)
        if simple is None:
            raise _unsupported(t, name)
        return simple

    def _maybe_null(self, field: pa.Field, name: str, namespace: str) -> Any:
        avro_type = self.type(field.type, name, namespace)
        return ["null", avro_type] if field.nullable and avro_type != "null" else avro_type

    def _define(self, named: dict[str, Any]) -> Any:
        full = full_name(named)
        if full in self.defined:
            if self.defined[full] == named:
                return full
            raise UnsupportedFeatureError(
                f"two different Avro types would both be named {full!r}", feature="arrow-type", column=full
            )
        self.defined[full] = named
        return named


_SIMPLE_AVRO: dict[pa.DataType, str] = {
    pa.null(): "null",
    pa.bool_(): "boolean",
    pa.int8(): "int",
    pa.int16(): "int",
    pa.int32(): "int",
    pa.uint8(): "int",
    pa.uint16(): "int",
    pa.int64(): "long",
    pa.uint32(): "long",
    pa.float16(): "float",
    pa.float32(): "float",
    pa.float64(): "double",
    pa.binary(): "bytes",
    pa.large_binary(): "bytes",
    pa.binary_view(): "bytes",
    pa.string(): "string",
    pa.large_string(): "string",
    pa.string_view(): "string",
}


def _unsupported(t: pa.DataType, name: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(
        f"column {name!r} has Arrow type {t}, which has no Avro equivalent; cast it first",
        feature="arrow-type",
        column=name,
    )
