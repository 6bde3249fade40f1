"""InternalSchema JSON, byte-compatible with Hudi's `SerDeHelper`.

Hudi writes with a plain Jackson generator: no whitespace, keys in a fixed order
(`max_column_id`, `version_id`, `type`, `fields`; per field `id`, `name`, `optional`, `type`,
`doc`; `element_id`, `key_id`, `value_id` in arrays and maps), primitives as tokens (`decimal(10, 2)`, `fixed[16]`). The history file
`.hoodie/.schema/<instant>.schemacommit` is `{"schemas":[newest, ...]}`.

Reading is lenient: the `version-id`/`element-id`/`key-id`/`value-id` spellings this project
wrote before (Hudi reads only its own, with underscores), `decimal(p,s)` without the space, and Hudi 1.x's `decimal_bytes(p,s)` /
`decimal_fixed(p,s)[n]` tokens (read as `decimal(p, s)`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from shim.errors import InvalidTableError
from shim.schema.internal_schema import InternalSchema
from shim.schema.types import (
    PRIMITIVES_BY_TOKEN,
    ArrayType,
    DecimalType,
    Field,
    FixedType,
    MapType,
    PrimitiveType,
    RecordType,
    Type,
    vector_type,
)

_FIXED = re.compile(r"fixed\[(\d+)\]")
_VECTOR = re.compile(r"vector\[(\d+),\s*(\w+),\s*(\w+)\]")
_DECIMAL = re.compile(r"decimal(?:_bytes)?\((\d+),\s*(\d+)\)")
_DECIMAL_FIXED = re.compile(r"decimal_fixed\((\d+),\s*(\d+)\)\[(\d+)\]")

_HISTORY_PREFIX = '{"schemas":['

# Keys whose spelling differs between Hudi versions: (canonical, alternative).
_VERSION_KEYS = ("version-id", "version_id")
_ELEMENT_ID_KEYS = ("element-id", "element_id")
_KEY_ID_KEYS = ("key-id", "key_id")
_VALUE_ID_KEYS = ("value-id", "value_id")


def schema_to_json(schema: InternalSchema) -> str:
    """The JSON Hudi's `SerDeHelper.toJson(InternalSchema)` writes for `schema`."""
    return _record_json(schema.record, schema.max_column_id, schema.version_id)


def history_to_json(schemas: Sequence[InternalSchema]) -> str:
    """The history-file JSON (`{"schemas":[...]}`) for schemas in the given order (newest first)."""
    return _HISTORY_PREFIX + ",".join(schema_to_json(s) for s in schemas) + "]}"


def inherit_schema_history(new_schema: InternalSchema, old_history: str | None) -> str:
    """Prepend `new_schema` to a serialized history, as Hudi's `SerDeHelper.inheritSchemas`.

    Like Hudi, this is string surgery on the `{"schemas":[` prefix; a history without that
    prefix yields "" (Hudi's behaviour, which callers treat as "no history").
    """
    if not old_history:
        return history_to_json([new_schema])
    if not old_history.startswith('{"schemas":'):
        return ""
    return _HISTORY_PREFIX + schema_to_json(new_schema) + "," + old_history[len(_HISTORY_PREFIX) :]


def schema_from_json(text: str) -> InternalSchema:
    """Parse one InternalSchema (a commit's `latest_schema`).

    Raises:
        InvalidTableError: the text is empty, not JSON, or not an InternalSchema.
    """
    if not text:
        raise InvalidTableError("InternalSchema JSON is empty; the commit carries no schema-on-read schema")
    return _schema_from_node(_load(text))


def history_from_json(text: str) -> list[InternalSchema]:
    """Parse a `.schemacommit` history file into schemas, newest version first.

    Like Hudi (a TreeMap keyed by version id), a later entry with the same version id wins.

    Raises:
        InvalidTableError: the text is not a schema history.
    """
    node = _load(text)
    if not isinstance(node, dict) or not isinstance(node.get("schemas"), list):
        raise InvalidTableError("schema history JSON has no 'schemas' array")
    by_version: dict[int, InternalSchema] = {}
    for entry in node["schemas"]:
        schema = _schema_from_node(entry)
        by_version[schema.version_id] = schema
    return [by_version[v] for v in sorted(by_version, reverse=True)]


def search_schema(history: Sequence[InternalSchema], version_id: int) -> InternalSchema | None:
    """The schema in force at `version_id`: exact version, else the newest older one, else None."""
    best: InternalSchema | None = None
    for schema in history:
        if schema.version_id <= version_id and (best is None or schema.version_id > best.version_id):
            best = schema
    return best


# -- writing -------------------------------------------------------------------------------


def _quote(text: str) -> str:
    # Jackson's default escaping: quote, backslash and control characters only; short forms
    # for \b \t \n \f \r, otherwise \u00XX with upper-case hex. Non-ASCII stays as is.
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif code < 0x20:
            short = {8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(code)
            out.append(short if short is not None else f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _record_json(record: RecordType, max_column_id: int | None, version_id: int | None) -> str:
    parts: list[str] = []
    if max_column_id is not None:
        parts.append(f'"max_column_id":{max_column_id}')
    if version_id is not None:
        parts.append(f'"version_id":{version_id}')
    parts.append('"type":"record"')
    fields = []
    for f in record.fields:
        text = f'{{"id":{f.id},"name":{_quote(f.name)},"optional":{_bool(f.optional)},"type":{_type_json(f.type)}'
        if f.doc is not None:
            text += f',"doc":{_quote(f.doc)}'
        fields.append(text + "}")
    parts.append('"fields":[' + ",".join(fields) + "]")
    return "{" + ",".join(parts) + "}"


def _type_json(type_: Type) -> str:
    if isinstance(type_, RecordType):
        return _record_json(type_, None, None)
    if isinstance(type_, ArrayType):
        return (
            f'{{"type":"array","element_id":{type_.element_id},"element":{_type_json(type_.element)},'
            f'"element_optional":{_bool(type_.element_optional)}}}'
        )
    if isinstance(type_, MapType):
        return (
            f'{{"type":"map","key_id":{type_.key_id},"key":{_type_json(type_.key)},'
            f'"value_id":{type_.value_id},"value":{_type_json(type_.value)},'
            f'"value_optional":{_bool(type_.value_optional)}}}'
        )
    return _quote(str(type_))


# -- reading -------------------------------------------------------------------------------


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidTableError(f"InternalSchema JSON cannot be parsed: {exc}") from exc


def _get(node: dict[str, Any], keys: tuple[str, ...], what: str) -> Any:
    for key in keys:
        if key in node:
            return node[key]
    raise InvalidTableError(f"InternalSchema JSON {what} lacks '{keys[0]}': {json.dumps(node)[:200]}")


def _schema_from_node(node: Any) -> InternalSchema:
    try:
        return _schema_from_tree(node)
    except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as exc:
        # a value of the wrong kind somewhere in the tree (a field id "x", fields null, ...)
        raise InvalidTableError(f"InternalSchema JSON is malformed: {type(exc).__name__}: {exc}") from None


def _schema_from_tree(node: Any) -> InternalSchema:
    if not isinstance(node, dict):
        raise InvalidTableError(f"InternalSchema JSON is not an object: {str(node)[:200]}")
    record = _type_from_node(node)
    if not isinstance(record, RecordType):
        raise InvalidTableError("InternalSchema JSON root is not a record")
    version = next((node[k] for k in _VERSION_KEYS if k in node), None)
    max_column_id = node.get("max_column_id")
    if version is None:
        # Hudi: no version -> version 0 and the max id computed from the fields.
        return InternalSchema(record, 0)
    return InternalSchema(record, int(version), -1 if max_column_id is None else int(max_column_id))


def parse_type_token(token: str) -> PrimitiveType:
    """A primitive type from its Hudi JSON token (`int`, `decimal(10, 2)`, `fixed[16]`...).

    Raises:
        InvalidTableError: the token names no type Hudi writes.
    """
    lowered = token.lower()
    if m := _DECIMAL_FIXED.fullmatch(lowered):
        return DecimalType(int(m.group(1)), int(m.group(2)))
    if m := _FIXED.fullmatch(lowered):
        return FixedType(int(m.group(1)))
    if m := _VECTOR.fullmatch(lowered):
        return vector_type(int(m.group(1)), m.group(2), m.group(3), where="InternalSchema JSON")
    if m := _DECIMAL.fullmatch(lowered):
        return DecimalType(int(m.group(1)), int(m.group(2)))
    primitive = PRIMITIVES_BY_TOKEN.get(lowered)
    if primitive is None:
        raise InvalidTableError(f"InternalSchema JSON has an unknown type '{token}'")
    return primitive


def _type_from_node(node: Any) -> Type:
    if isinstance(node, str):
        return parse_type_token(node)
    if not isinstance(node, dict):
        raise InvalidTableError(f"InternalSchema JSON has an unreadable type: {json.dumps(node)[:200]}")
    kind = node.get("type")
    if kind == "record":
        fields = []
        for f in _get(node, ("fields",), "record"):
            doc = f.get("doc")
            fields.append(
                Field(
                    int(_get(f, ("id",), "field")),
                    str(_get(f, ("name",), "field")),
                    _type_from_node(_get(f, ("type",), "field")),
                    bool(_get(f, ("optional",), "field")),
                    None if doc is None else str(doc),
                )
            )
        return RecordType(tuple(fields))
    if kind == "array":
        return ArrayType(
            int(_get(node, _ELEMENT_ID_KEYS, "array")),
            _type_from_node(_get(node, ("element",), "array")),
            bool(_get(node, ("element_optional",), "array")),
        )
    if kind == "map":
        return MapType(
            int(_get(node, _KEY_ID_KEYS, "map")),
            _type_from_node(_get(node, ("key",), "map")),
            int(_get(node, _VALUE_ID_KEYS, "map")),
            _type_from_node(_get(node, ("value",), "map")),
            bool(_get(node, ("value_optional",), "map")),
        )
    raise InvalidTableError(f"InternalSchema JSON has an unknown nested type '{kind}'")
