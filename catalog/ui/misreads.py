"""What a reader that matches a file's columns by name, or by position, would read wrong.

hudi-shim maps each file's columns onto the table's by column id (`shim.FileSchema`). Engines
that match by name (Trino's and Presto's Hudi connectors, hudi-rs) or by position (Hive-style
readers with `use-column-names=false`) read some of those files differently: a renamed column
reads NULL, a dropped column's values come back under a name re-added since, and after a drop or
an add in the middle every later column shifts. `misreads` compares their choice with the
mapping, one table column at a time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from shim import ColumnMapping


@dataclass(frozen=True, slots=True)
class FileColumn:
    """A data column as the file stores it: its name, the column id it had when written (None when
    the table records no ids), and its type."""

    name: str
    id: int | None = None
    type: str | None = None


@dataclass(frozen=True, slots=True)
class Misread:
    """One table column that a reader would read wrong from one file.

    Attributes:
        reader: "by name" or "by position".
        column: the table column.
        kind: "null" (reads NULL where the file holds the values), "other" (reads another
            column's values), or "type" (the file's type differs: a reader that does not widen
            fails or misreads).
        reads: what that reader returns, in words.
    """

    reader: str
    column: str
    kind: str
    reads: str


def misreads(mapping: Sequence[ColumnMapping], file_columns: Sequence[FileColumn] | None,
             table_names: Mapping[int, str]) -> list[Misread]:
    """The table columns a by-name or by-position reader gets wrong from one file.

    Args:
        mapping: the file's column mapping (`FileSchema.columns`), in table column order.
        file_columns: the file's data columns in file order (no meta columns), or None when not
            known (then only the by-name reader is judged, from the mapping's names).
        table_names: today's column name of every column id, to say whose values a wrong
            column holds.
    """
    found = _by_name(mapping, file_columns, table_names)
    if file_columns is not None:
        found += _by_position(mapping, file_columns, table_names)
    return found


def _by_name(mapping: Sequence[ColumnMapping], file_columns: Sequence[FileColumn] | None,
             table_names: Mapping[int, str]) -> list[Misread]:
    if file_columns is not None:
        by_name = {c.name: c for c in file_columns}
    else:
        by_name = {m.file_column: FileColumn(m.file_column, m.column_id, m.file_type)
                   for m in mapping if m.file_column is not None}
    found = []
    for m in mapping:
        if m.action == "partition":
            continue
        same = by_name.get(m.table_column)
        if m.file_column == m.table_column:
            if m.file_type is not None and m.file_type != m.table_type:
                found.append(Misread("by name", m.table_column, "type",
                                     f"{m.file_type} values where the table has {m.table_type}: a reader that "
                                     "does not widen them fails or misreads them"))
        elif m.file_column is not None:
            if same is None:
                found.append(Misread("by name", m.table_column, "null",
                                     f"NULL: the file holds this column as '{m.file_column}'"))
            else:
                found.append(Misread("by name", m.table_column, "other",
                                     f"the values of {_describe(same, table_names)} instead of '{m.file_column}'"))
        elif same is not None:
            found.append(Misread("by name", m.table_column, "other",
                                 f"the values of {_describe(same, table_names)}, where it should read NULL"))
    return found


def _by_position(mapping: Sequence[ColumnMapping], file_columns: Sequence[FileColumn],
                 table_names: Mapping[int, str]) -> list[Misread]:
    found = []
    columns = [m for m in mapping if m.action != "partition"]
    for index, m in enumerate(columns):
        at = file_columns[index] if index < len(file_columns) else None
        if at is None:
            if m.file_column is not None:
                found.append(Misread("by position", m.table_column, "null",
                                     f"NULL: the file has {len(file_columns)} columns (it holds this one as "
                                     f"'{m.file_column}')"))
        elif at.name != m.file_column:
            should = "" if m.file_column is not None else ", where it should read NULL"
            found.append(Misread("by position", m.table_column, "other",
                                 f"the values of the file's column {index + 1}, {_describe(at, table_names)}{should}"))
    return found


def _describe(column: FileColumn, table_names: Mapping[int, str]) -> str:
    if column.id is None:
        return f"'{column.name}'"
    today = table_names.get(column.id)
    if today is None:
        return f"'{column.name}' (id {column.id}, a dropped column)"
    if today != column.name:
        return f"'{column.name}' (id {column.id}, today's '{today}')"
    return f"'{column.name}' (id {column.id})"
