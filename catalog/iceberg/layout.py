"""Which files an Iceberg reader may read where they are, and which must be written for it.

Hudi files carry no field ids, so an Iceberg reader matches their columns to the table's through
the table's name mapping (`schema.name-mapping.default`): one list of names per column id, for
every file alike. A base file is read in place when that mapping gives each of its columns the
id the file was written with (a rename adds the old name to the column's names) and each type
reads as the table's, natively or by a promotion Iceberg readers apply themselves. Otherwise the
slice is written out reconciled, with field ids:

- a file holding a column under a name the mapping gives to another column (a column dropped
  and re-added under its old name, a name reused by a rename);
- a type change Iceberg readers do not apply (long to string, ...), a change inside a nested
  column, and time or timestamps in milliseconds;
- a partition column the file does not hold (Hudi fills it from the partition path);
- a base file in Lance (Hudi 1.2's `hoodie.table.base.file.format=LANCE`), a format Iceberg has
  not: every slice of such a table is written out as Parquet, its logs merged in.

In the snapshot view, a slice with log files whose base file could be read in place is published
one of two ways (`catalog.settings.SliceMerging`): its base file in place plus what its logs change (the log
records that stand, and position deletes for the base rows they supersede:
`catalog.iceberg.materialize.write_log_side`), or merged, written out once per slice version
(content-addressed like every file written out) and read without deletes. "auto" merges a slice
whose logs hold at least `MERGE_LOG_SHARE` of its base file's bytes, or whose base file is at
most `SMALL_SLICE_BYTES`: readers then apply no deletes (DuckDB 1.5.5 reads every position delete
file of a snapshot whatever it reads; Trino opens a delete file per split), at the price of
rewriting the slice when it changes: a larger slice that changes often (its logs appended by
`HOT_WRITES` of the table's last `RECENT_WRITES` writes, `recent_writes`) stays in place until its
logs reach `HOT_MERGE_SHARE`, rather than have its whole base file written again at each commit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from catalog.iceberg.types import children, iceberg_id, last_column_id, promotes, same_type
from catalog.views import View
from shim import FileSchema
from shim.layout.committed import CommittedFiles
from shim.layout.slices import FileSlice
from shim.read import is_lance, read_file_schema
from shim.schema import META_FIELD_NAMES, has_field_ids
from shim.storage import Storage

MERGE_LOG_SHARE = 0.01
"""Log bytes, as a share of the base file's, from which "auto" merges a slice: merged slices read
faster in Trino and Presto at every share measured, from 1% (`bench/bench_trino.py --updates`). Below
it (not measured), a merged slice would rewrite a whole base file for a few log records."""
SMALL_SLICE_BYTES = 8 << 20
"""Base files of at most this many bytes are merged by "auto" (rewriting them costs little)."""
RECENT_WRITES = 10
HOT_WRITES = 3
"""A slice whose logs `HOT_WRITES` of the table's last `RECENT_WRITES` completed writes appended
to changes often: merged, its whole base file would be written again at each of them."""
HOT_MERGE_SHARE = 0.3
"""Log bytes, as a share of the base file's, from which "auto" merges a slice however often it
changes (readers' cost then outweighs the rewrites; the table is due a compaction)."""


def last_writes(committed: CommittedFiles, read_instant: str) -> frozenset[str]:
    """The requested times of the table's last `RECENT_WRITES` completed writes as of `read_instant`."""
    return frozenset(write.requested_time for write in committed.timeline.completed_writes(read_instant)[-RECENT_WRITES:])


def recent_writes(committed: CommittedFiles, file_slice: FileSlice, read_instant: str,
                  recent: frozenset[str] | None = None) -> int | None:
    """How many of the table's last `RECENT_WRITES` completed writes (as of `read_instant`;
    `recent`, their `last_writes` when already known) appended to the slice's log files; None
    without logs, or when a log file's writes are not known (archived before the table was opened)."""
    if not file_slice.log_files:
        return None
    appends = committed.slice_appends(file_slice, read_instant)
    if appends is None:
        return None
    if recent is None:
        recent = last_writes(committed, read_instant)
    return len({append.instant for append in appends} & recent)


def merge_reason(file_slice: FileSlice, merging: str, recent: int | None = None) -> str | None:
    """Why a snapshot slice with logs, whose base file could be read in place, is published
    merged (None: base file in place plus deletes); `recent`, how many of the table's last writes
    changed it (`recent_writes`; None: not known, decided by sizes alone)."""
    if merging == "deletes" or file_slice.base_file is None:
        return None
    if merging == "merged":
        return "slices with log files are published merged"
    base = file_slice.base_file.size
    logs = sum(log.size for log in file_slice.log_files)
    if base <= 0:
        return None
    if base <= SMALL_SLICE_BYTES:
        return "its base file is small: merged, read without deletes"
    hot = recent is not None and recent >= HOT_WRITES
    if logs >= HOT_MERGE_SHARE * base or (logs >= MERGE_LOG_SHARE * base and not hot):
        return f"its log files hold {logs / base:.0%} of its base file's bytes: merged, read without deletes"
    return None


@dataclass(frozen=True, slots=True)
class Placement:
    """How one file slice reaches Iceberg readers.

    Attributes:
        file_slice: the slice.
        base_path: its base file, read in place (None: the slice is written out).
        reason: why the slice is written out (None when read in place).
        merge_logs: the view merges the slice's log files: with the base file in place, what
            they change is written out (standing log records, position deletes).
    """

    file_slice: FileSlice
    base_path: str | None
    reason: str | None
    merge_logs: bool = False


@dataclass(frozen=True, slots=True)
class Layout:
    """Every slice's placement, and the names of in-place files' columns that the mapping's names
    give no column of the table (see `name_mapping`)."""

    placements: tuple[Placement, ...]
    unmapped: tuple[str, ...] = ()


def plan_layout(view: View, slices: Sequence[FileSlice], table: Storage,
                partition_fields: Sequence[str], names: dict[str, int] | None = None,
                merging: str = "auto", committed: CommittedFiles | None = None) -> Layout:
    """Place every slice of `view` (the slices its scan plans, in order) for readers of the name
    mapping with `names` (name -> id; default: the view's own, see `history_names`); slices with
    log files of a snapshot view as `merging` says (`catalog.settings.SliceMerging`), "auto"
    also by how often the `committed` writes changed them (`recent_writes`)."""
    schema = view.schema
    by_group: dict[tuple[str, str], list[FileSchema]] = defaultdict(list)
    for file_schema in view.files:
        by_group[(file_schema.partition_path, file_schema.file_id)].append(file_schema)
    if names is None:
        names = _column_names(schema, view.files)
    placements = []
    unmapped: set[str] = set()
    # "auto" also weighs how often slices change: by the writes the committed files say of them
    changes = (committed, view.instant) if committed is not None and view.instant is not None and merging == "auto" \
        else None
    recent = last_writes(*changes) if changes is not None else frozenset()
    for file_slice in slices:
        base_path = file_slice.base_path(table.root)
        bases = [f for f in by_group[(file_slice.partition_path, file_slice.file_id)] if f.kind == "base_file"]
        reason: str | None
        if base_path is None or not bases:
            reason = "it has no base file"
        elif is_lance(base_path):
            reason = "its base file is a Lance file, which Iceberg readers do not read"
        else:
            physical = bases[0].stored_schema or read_file_schema(table, base_path)
            reason = _why_not_in_place(bases[0], physical, schema, names, partition_fields)
            if reason is None:
                unmapped.update(name for name in physical.names if name not in names)
        merge_logs = view.view == "snapshot" and file_slice.has_logs
        if reason is None and merge_logs:
            changed = recent_writes(changes[0], file_slice, changes[1], recent) if changes is not None else None
            reason = merge_reason(file_slice, merging, changed)
        placements.append(Placement(file_slice, base_path if reason is None else None, reason, merge_logs))
    return Layout(tuple(placements), tuple(sorted(unmapped)))


def history_names(views: Sequence[View]) -> dict[str, int]:
    """Name -> id for one mapping serving several versions of a view, newest first (one version:
    its own names): each name goes to the column the newest version that has it gives it (files
    of older versions holding it for another column are written out with field ids)."""
    names: dict[str, int] = {}
    for view in views:
        for name, field_id in _column_names(view.schema, view.files).items():
            names.setdefault(name, field_id)
    return names


def by_name_names(newest: View, view: View) -> dict[str, int]:
    """Name -> id for readers that match a file without field ids by the current column name and
    ignore the name mapping (Presto): only the names `newest` and `view` both give the same
    column, so a file read in place holds every column under the name either schema reads."""
    own = {field.name: iceberg_id(field, field.name) for field in view.schema}
    return {field.name: iceberg_id(field, field.name) for field in newest.schema
            if own.get(field.name) == iceberg_id(field, field.name)}


def _column_names(schema: pa.Schema, files: Sequence[FileSchema]) -> dict[str, int]:
    """Name -> Iceberg id of the mapping: each column's name, plus the names files hold it under
    unless another column claims the name too."""
    ids = {field.name: iceberg_id(field, field.name) for field in schema}
    claims: dict[str, set[int]] = defaultdict(set)
    for file_schema in files:
        for column in file_schema.columns:
            if column.file_column and column.file_column != column.table_column and column.table_column in ids:
                claims[column.file_column].add(ids[column.table_column])
    names = dict(ids)
    for name, owners in claims.items():
        if name not in names and len(owners) == 1:
            names[name] = next(iter(owners))
    return names


def _why_not_in_place(file_schema: FileSchema, physical: pa.Schema, schema: pa.Schema, names: dict[str, int],
                      partition_fields: Sequence[str]) -> str | None:
    if has_field_ids(physical):
        return "the file carries field ids of its own"
    expected: dict[str, int] = {}
    for column in file_schema.columns:
        table_field = schema.field(column.table_column)
        if column.file_column is None:
            if column.action == "partition" or column.table_column in partition_fields:
                return f"partition column {column.table_column!r} is not in the file"
            continue
        index = physical.get_field_index(column.file_column)
        if index < 0:
            return f"column {column.file_column!r} is not found in the file"
        file_type = physical.field(index).type
        if not (same_type(file_type, table_field.type) or promotes(file_type, table_field.type)):
            return f"column {column.table_column!r} is {file_type} in the file, {table_field.type} in the table"
        expected[column.file_column] = iceberg_id(table_field, table_field.name)
    own_ids = {iceberg_id(field, field.name) for field in schema}
    for field in physical:
        if field.name in META_FIELD_NAMES:
            continue
        mapped, wanted = names.get(field.name), expected.get(field.name)
        # (A column the view does not read may map to a column of another version: readers of
        # this one skip it.)
        if mapped != wanted and (wanted is not None or mapped in own_ids):
            return f"the file's column {field.name!r} is not the table's column of that name"
    return None


def name_mapping(schemas: Sequence[pa.Schema], names: dict[str, int], unmapped: Collection[str]) -> list[dict[str, Any]]:
    """Iceberg's name mapping (JSON list): every column's names, nested members by their names;
    the columns of every schema (the newest first), each once, those left without a name out.

    Columns of in-place files the table does not have (Hudi's meta columns, dropped columns) get
    ids above the schemas', which select nothing: some readers refuse a file column the mapping
    does not name."""
    aliases: dict[int, list[str]] = defaultdict(list)
    for name, field_id in names.items():
        aliases[field_id].append(name)
    entries, seen = [], set()
    for schema in schemas:
        for field in schema:
            field_id = iceberg_id(field, field.name)
            if field_id not in seen and aliases[field_id]:
                entries.append(_entry(field, aliases[field_id], field.name))
            seen.add(field_id)
    first_unused = max(last_column_id(schema) for schema in schemas) + 1
    entries.extend({"field-id": first_unused + i, "names": [name]} for i, name in enumerate(sorted(set(unmapped))))
    return entries


def mapped_ids(mapping: Sequence[dict[str, Any]]) -> int:
    """The highest id a name mapping uses."""
    return max((max(entry["field-id"], mapped_ids(entry.get("fields", ()))) for entry in mapping), default=0)


def _entry(field: pa.Field, names: list[str], where: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"field-id": iceberg_id(field, where), "names": names}
    data_type = field.type
    members = children(data_type)
    if members:
        entry["fields"] = [_entry(child, _member_names(data_type, child, field.name), f"{where}.{child.name}")
                           for child in members]
    return entry


def _member_names(parent: pa.DataType, child: pa.Field, parent_name: str) -> list[str]:
    """A nested member's names; a list's element goes by the names Parquet writers give it (the
    standard `element`, parquet-avro's `array` and `<list>_tuple`, Arrow's `item`)."""
    if pa.types.is_list(parent) or pa.types.is_large_list(parent):
        return list(dict.fromkeys([child.name, "element", "array", "item", f"{parent_name}_tuple"]))
    return [child.name]
