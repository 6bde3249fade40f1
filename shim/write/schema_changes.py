"""Schema changes of ALTER TABLE, applied to an InternalSchema as Hudi applies them.

Rules are those of Hudi's `TableChanges` / `SchemaChangeUtils` and Spark's `AlterTableCommand`:
- Columns are named by full dotted name (`a.b`, `arr.element.x`, `m.value.y`).
- Meta columns (`_hoodie_*`) cannot be added, dropped, renamed, retyped or moved.
- Added columns are optional and take fresh ids from `max_column_id + 1` (nested ones too).
- Drops keep `max_column_id`, so a column added later never reuses a dropped column's id.
  (Hudi recomputes the maximum after renames and type changes, which can hand a dropped id out
  again; here `max_column_id` never decreases.)
- Types change only as `SchemaChangeUtils.isTypeUpdateAllow` allows, and only primitives.
- Protected columns (the record key, ordering and partition fields) cannot be dropped or renamed
  (Spark's `checkSchemaChange`), and here not retyped either: their values name files and keys.
- A root-level column moved or added `first` goes before the first data column (meta columns
  stay first in every file).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from shim.errors import SchemaEvolutionError
from shim.schema import META_FIELD_NAMES, InternalSchema
from shim.schema.promote import is_direct_change
from shim.schema.serde import parse_type_token
from shim.schema.types import ArrayType, Field, MapType, PrimitiveType, RecordType, Type

ROOT = -1

FieldsChange = Callable[[list[Field]], list[Field]]


def _error(message: str, column: str) -> SchemaEvolutionError:
    return SchemaEvolutionError(message, column=column)


def parse_type(type_: str | Type) -> Type:
    """A type from an InternalSchema type string (`int`, `decimal(10, 2)`) or a Type."""
    if isinstance(type_, Type):
        return type_
    try:
        return parse_type_token(type_.strip())
    except Exception as exc:  # InvalidTableError from the parser, re-raised as a schema error
        raise SchemaEvolutionError(f"unknown column type {type_!r}: {exc}") from exc


def _check_legal(name: str) -> None:
    if name.split(".")[0] in META_FIELD_NAMES:
        raise _error(f"cannot modify hudi meta column {name!r}", name)


def _split(name: str) -> tuple[str, str]:
    parent, _, leaf = name.rpartition(".")
    return parent, leaf


def _owner_id(schema: InternalSchema, parent: str, column: str) -> int:
    """Id of the record holding the children of `parent` (ROOT for "")."""
    if not parent:
        return ROOT
    owner = schema.find_field_by_name(parent)
    if owner is None:
        raise _error(f"cannot change column {column!r}: its parent {parent!r} does not exist", column)
    if not isinstance(owner.type, RecordType):
        raise _error(
            f"cannot change column {column!r}: its parent {parent!r} is a {owner.type}, not a struct", column
        )
    return owner.id


def _change_fields(type_: Type, owner: int, target: int, change: FieldsChange) -> Type:
    """`type_` with `change` applied to the fields of the record owned by id `target`."""
    if isinstance(type_, RecordType):
        fields = [
            Field(f.id, f.name, _change_fields(f.type, f.id, target, change), f.optional, f.doc) for f in type_.fields
        ]
        if owner == target:
            fields = change(fields)
        return RecordType(tuple(fields), type_.name)
    if isinstance(type_, ArrayType):
        return ArrayType(type_.element_id, _change_fields(type_.element, type_.element_id, target, change),
                         type_.element_optional)
    if isinstance(type_, MapType):
        return MapType(type_.key_id, type_.key, type_.value_id,
                       _change_fields(type_.value, type_.value_id, target, change), type_.value_optional)
    return type_


def _apply(schema: InternalSchema, target: int, change: FieldsChange, max_column_id: int | None = None) -> InternalSchema:
    record = _change_fields(schema.record, ROOT, target, change)
    assert isinstance(record, RecordType)
    return InternalSchema(record, schema.version_id, max(schema.max_column_id, max_column_id or -1))


def _position(fields: list[Field], moving: Field, after: str | None, first: bool, owner: int, column: str) -> list[Field]:
    rest = [f for f in fields if f.id != moving.id]
    if first:
        index = 0
        if owner == ROOT:
            while index < len(rest) and rest[index].name in META_FIELD_NAMES:
                index += 1
    elif after is not None:
        names = [f.name for f in rest]
        if after not in names:
            raise _error(f"cannot place column {column!r} after {after!r}: no such column next to it", column)
        index = names.index(after) + 1
    else:
        index = len(rest)
    rest.insert(index, moving)
    return rest


def _fresh_ids(type_: Type, next_id: list[int]) -> Type:
    """`type_` with new ids for every nested field, element, key and value (Hudi's refreshNewId)."""
    if isinstance(type_, RecordType):
        ids = list(range(next_id[0], next_id[0] + len(type_.fields)))
        next_id[0] += len(type_.fields)
        return RecordType(
            tuple(Field(i, f.name, _fresh_ids(f.type, next_id), f.optional, f.doc) for i, f in zip(ids, type_.fields,
                                                                                                  strict=True)),
            type_.name,
        )
    if isinstance(type_, ArrayType):
        element_id = next_id[0]
        next_id[0] += 1
        return ArrayType(element_id, _fresh_ids(type_.element, next_id), type_.element_optional)
    if isinstance(type_, MapType):
        key_id, value_id = next_id[0], next_id[0] + 1
        next_id[0] += 2
        return MapType(key_id, type_.key, value_id, _fresh_ids(type_.value, next_id), type_.value_optional)
    return type_


def add_column(
    schema: InternalSchema,
    name: str,
    type_: str | Type,
    *,
    after: str | None = None,
    first: bool = False,
    doc: str | None = None,
) -> InternalSchema:
    """Add an optional column (`a.b` adds `b` to struct `a`); by default it goes last."""
    _check_legal(name)
    parent, leaf = _split(name)
    if not leaf:
        raise _error("cannot add a column with an empty name", name)
    if schema.find_field_by_name(name) is not None:
        raise _error(f"cannot add column {name!r}: it already exists", name)
    owner = _owner_id(schema, parent, name)
    next_id = [schema.max_column_id + 1]
    column_id = next_id[0]
    next_id[0] += 1
    new_type = _fresh_ids(parse_type(type_), next_id)
    added = Field(column_id, leaf, new_type, True, doc)
    return _apply(
        schema, owner, lambda fields: _position([*fields, added], added, after, first, owner, name), next_id[0] - 1
    )


def _existing(schema: InternalSchema, name: str, action: str, protected: Collection[str]) -> Field:
    _check_legal(name)
    field = schema.find_field_by_name(name)
    if field is None:
        raise _error(f"cannot {action} column {name!r}: it does not exist (columns: "
                     f"{', '.join(schema.field_names())})", name)
    if name in protected:
        raise _error(f"cannot {action} column {name!r}: it is one of the table's protected fields "
                     f"({', '.join(sorted(protected))}: record key, ordering or partition fields)", name)
    return field


def drop_column(schema: InternalSchema, name: str, *, protected: Collection[str] = ()) -> InternalSchema:
    """Drop a column; its id is never used again."""
    field = _existing(schema, name, "drop", protected)
    parent, _ = _split(name)
    owner = _owner_id(schema, parent, name)

    def change(fields: list[Field]) -> list[Field]:
        kept = [f for f in fields if f.id != field.id]
        if not [f for f in kept if f.name not in META_FIELD_NAMES]:
            raise _error(f"cannot drop column {name!r}: it is the last column of its struct", name)
        return kept

    return _apply(schema, owner, change)


def rename_column(schema: InternalSchema, name: str, new_name: str, *, protected: Collection[str] = ()) -> InternalSchema:
    """Rename a column (its id, and so its data, stays)."""
    field = _existing(schema, name, "rename", protected)
    if not new_name or "." in new_name:
        raise _error(f"cannot rename column {name!r} to {new_name!r}: give a plain, non-empty name", name)
    if new_name in META_FIELD_NAMES:
        raise _error(f"cannot rename column {name!r} to the meta column name {new_name!r}", name)
    parent, _ = _split(name)
    owner = _owner_id(schema, parent, name)
    sibling = f"{parent}.{new_name}" if parent else new_name
    if schema.find_field_by_name(sibling) is not None:
        raise _error(f"cannot rename column {name!r} to {new_name!r}: that column already exists", name)
    return _apply(schema, owner, lambda fields: [
        Field(f.id, new_name, f.type, f.optional, f.doc) if f.id == field.id else f for f in fields
    ])


def update_column_type(
    schema: InternalSchema, name: str, new_type: str | Type, *, protected: Collection[str] = ()
) -> InternalSchema:
    """Change a primitive column's type as Hudi allows (widening, or to/from string)."""
    field = _existing(schema, name, "change the type of", protected)
    target = parse_type(new_type)
    if not isinstance(target, PrimitiveType) or not isinstance(field.type, PrimitiveType):
        raise _error(f"cannot change column {name!r} from {field.type} to {target}: only primitive types change", name)
    if not is_direct_change(field.type, target):
        raise _error(f"cannot change column {name!r} from type {field.type} to incompatible type {target}", name)
    parent, _ = _split(name)
    owner = _owner_id(schema, parent, name)
    return _apply(schema, owner, lambda fields: [
        Field(f.id, f.name, target, f.optional, f.doc) if f.id == field.id else f for f in fields
    ])


def move_column(schema: InternalSchema, name: str, *, after: str | None = None, first: bool = False) -> InternalSchema:
    """Move a column first or after a sibling (`after` names the sibling without its parent)."""
    field = _existing(schema, name, "move", ())
    if after is None and not first:
        raise _error(f"cannot move column {name!r}: say where (after=... or first=True)", name)
    if after is not None and after.rpartition(".")[2] == field.name:
        raise _error(f"cannot move column {name!r} after itself", name)
    parent, _ = _split(name)
    owner = _owner_id(schema, parent, name)
    sibling = after.rpartition(".")[2] if after is not None else None
    return _apply(schema, owner, lambda fields: _position(fields, field, sibling, first, owner, name))
