"""A table's schema history as a grid: one row per column (by column id), one cell per version.

A rename keeps its row (the cells show the old and the new name); a drop ends a row, and a
column re-added under a name used before is a row of its own (a new id), marked `readded`; a type
change (Hudi allows only widening) shows in the cell where it happened. Tables that never enabled
schema-on-read have no column ids: their versions are the distinct Avro writer schemas of their
commits, and rows are keyed by name (as readers then match files).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import shim
from shim.errors import HudiShimError
from shim.schema import ArrayType, InternalSchema, MapType, RecordType, Type, internal_from_avro
from shim.schema.internal_schema import META_FIELD_NAMES
from shim.timeline.instant import instant_key


@dataclass(frozen=True, slots=True)
class Column:
    """One column (a top-level column or a struct member) of one schema version."""

    id: int | None
    path: str
    type: str
    depth: int


@dataclass(frozen=True, slots=True)
class Version:
    """One schema version: the instant that made it and its columns in order."""

    version: str
    columns: tuple[Column, ...]


@dataclass(frozen=True, slots=True)
class Cell:
    """A column in one version.

    Attributes:
        change: "initial", "added", "readded" (a name used before, by another column), "same",
            "renamed", "widened", "renamed widened", "dropped" (gone in this version) or "absent".
        was_name, was_type: the name or type it had in the previous version, where it changed.
    """

    name: str | None
    type: str | None
    change: str
    was_name: str | None = None
    was_type: str | None = None


@dataclass(frozen=True, slots=True)
class Row:
    """One column across the versions: its id, every name it had (oldest first), nesting depth."""

    id: int | None
    names: tuple[str, ...]
    depth: int
    cells: tuple[Cell, ...]


@dataclass(frozen=True, slots=True)
class SchemaGrid:
    """Columns across schema versions.

    Attributes:
        keyed_by: "id" (schema-on-read: InternalSchema versions) or "name" (Avro writer schemas).
        versions: version ids (the instants that made them), oldest first.
        rows: one per column id (or name).
    """

    keyed_by: str
    versions: tuple[str, ...]
    rows: tuple[Row, ...]


def schema_versions(table: shim.TableSnapshot) -> tuple[str, list[Version]]:
    """The table's schema versions, oldest first, and what keys their columns ("id" or "name")."""
    history = sorted(table.schema_history.history(), key=lambda s: s.version_id)
    if not history:
        history = _versions_from_commits(table)
    if history:
        return "id", [Version(str(s.version_id), tuple(_columns(s))) for s in history]
    return "name", _avro_versions(table)


def _versions_from_commits(table: shim.TableSnapshot) -> list[InternalSchema]:
    """InternalSchemas the commits record (`latest_schema`) when no `.schema` history file exists."""
    timeline = table.active_timeline
    found: dict[int, InternalSchema] = {}
    for instant in timeline.completed_writes():
        if not timeline.commit_metadata(instant).latest_schema:
            continue
        schema = table.schema_history.schema_of_instant(instant.requested_time)
        if schema is not None:
            found.setdefault(schema.version_id, schema)
    return [found[v] for v in sorted(found)]


def _avro_versions(table: shim.TableSnapshot) -> list[Version]:
    """Distinct Avro writer schemas of the completed writes, each from the first commit using it."""
    timeline = table.active_timeline
    versions: list[Version] = []
    previous: str | None = None
    for instant in timeline.completed_writes():
        text = timeline.commit_metadata(instant).schema
        if not text or text == previous:
            continue
        try:
            avro = json.loads(text)
            internal = internal_from_avro(avro)
        except (ValueError, HudiShimError):
            continue  # a schema this reader cannot parse says nothing about columns
        previous = text
        columns = tuple(Column(None, c.path, c.type, c.depth) for c in _columns(internal))
        if versions and versions[-1].columns == columns:
            continue
        versions.append(Version(instant.requested_time, columns))
    return versions


def _columns(schema: InternalSchema) -> Iterator[Column]:
    for field in schema.fields:
        if field.name in META_FIELD_NAMES:
            continue
        yield from _walk(field.id, field.name, field.type, 0)


def _walk(field_id: int, path: str, kind: Type, depth: int) -> Iterator[Column]:
    yield Column(field_id, path, type_text(kind), depth)
    if isinstance(kind, RecordType):
        for member in kind.fields:
            yield from _walk(member.id, f"{path}.{member.name}", member.type, depth + 1)


def type_text(kind: Type) -> str:
    """A type as the grid shows it: primitives as Hudi names them, nested types by their shape."""
    if isinstance(kind, RecordType):
        return "struct"
    if isinstance(kind, ArrayType):
        return f"list<{type_text(kind.element)}>"
    if isinstance(kind, MapType):
        return f"map<{type_text(kind.key)}, {type_text(kind.value)}>"
    return str(kind)


def schema_grid(keyed_by: str, versions: Sequence[Version]) -> SchemaGrid:
    """Lay `versions` (oldest first) out as rows of columns and cells of versions."""
    order: list[object] = []
    by_version: list[dict[object, Column]] = []
    for version in versions:
        keys = [_key(c, keyed_by) for c in version.columns]
        by_version.append(dict(zip(keys, version.columns)))
        for index, key in enumerate(keys):
            if key in order:
                continue
            # A new column goes after its neighbour in the version that added it.
            # (past the columns dropped before it, which keep their place).
            before = next((keys[i] for i in range(index - 1, -1, -1) if keys[i] in order), None)
            at = order.index(before) + 1 if before is not None else 0
            while at < len(order) and order[at] not in keys:
                at += 1
            order.insert(at, key)
    rows = []
    for key in order:
        cells: list[Cell] = []
        names: list[str] = []
        seen = False
        previous: Column | None = None
        for index, columns in enumerate(by_version):
            column = columns.get(key)
            if column is None:
                cells.append(Cell(None, None, "dropped" if previous is not None else "absent"))
                previous = None
                continue
            leaf = column.path.rsplit(".", 1)[-1]
            if leaf not in names:
                names.append(leaf)
            if previous is None:
                change = "initial" if index == 0 else "added"
                if change == "added" and not seen and _name_used_before(column, key, by_version[:index], keyed_by):
                    change = "readded"
                cells.append(Cell(column.path, column.type, change))
            else:
                renamed = column.path != previous.path
                widened = column.type != previous.type
                change = " ".join(w for w, on in (("renamed", renamed), ("widened", widened)) if on) or "same"
                cells.append(Cell(column.path, column.type, change, previous.path if renamed else None,
                                  previous.type if widened else None))
            seen = True
            previous = column
        first = next(c for versions_columns in by_version if (c := versions_columns.get(key)) is not None)
        rows.append(Row(first.id, tuple(names), first.depth, tuple(cells)))
    return SchemaGrid(keyed_by, tuple(v.version for v in versions), tuple(rows))


def _key(column: Column, keyed_by: str) -> object:
    return column.id if keyed_by == "id" else column.path


def _name_used_before(column: Column, key: object, earlier: Sequence[dict[object, Column]], keyed_by: str) -> bool:
    """Whether another column had this name in an earlier version (a drop, then an add of the name)."""
    return keyed_by == "id" and any(c.path == column.path and k != key for cols in earlier for k, c in cols.items())


def table_schema_grid(table: shim.TableSnapshot) -> SchemaGrid:
    """The schema history of `table` as a grid."""
    keyed_by, versions = schema_versions(table)
    return schema_grid(keyed_by, sorted(versions, key=lambda v: instant_key(v.version)))
