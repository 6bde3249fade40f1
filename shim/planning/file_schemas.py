"""The name-mapped view of a table: for every file a read touches, how its columns map onto the table's.

This is what a catalog publishes next to the table schema: per base file and per log data block,
the instant that wrote it, the schema version it was written with, and for each table column the
file column it is read from (renamed, cast) or that it reads as null (added, or dropped and re-added).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import pyarrow as pa

from shim.layout.slices import FileSlice
from shim.log.blocks import BlockType
from shim.log.reader import data_block_schema
from shim.planning.partition_fill import PartitionFillingResolver
from shim.planning.resolvers import ReconciledPlan
from shim.read.base_files import read_file_schema
from shim.read.cache import ByteBoundedCache
from shim.read.log_blocks import visible_blocks
from shim.schema import FieldStatus, arrow_field_id
from shim.storage import Storage

if TYPE_CHECKING:
    from shim.read.planned_scan import PlannedScan


@dataclass(frozen=True, slots=True)
class ColumnMapping:
    """How one table column is read from one file.

    Attributes:
        table_column: the column's name in the table schema.
        column_id: its column id.
        table_type: its type in the table schema (Arrow type text).
        file_column: the file's name for it, or None when the file does not hold it.
        file_type: the file's type for it (Arrow type text), or None.
        action: "read", "rename", "cast", "rename+cast", "null" (added, or dropped and re-added),
            or "partition" (a partition column the data files leave out: its value is the path's).
    """

    table_column: str
    column_id: int | None
    table_type: str
    file_column: str | None
    file_type: str | None
    action: str


@dataclass(frozen=True, slots=True)
class FileSchema:
    """The schema a file (or log block) was written with, mapped onto the table schema.

    Attributes:
        path: the file, relative to the table root.
        kind: "base_file" or "log_block".
        instant: the instant that wrote it (base file name; log block INSTANT_TIME header).
        block_offset: byte offset of the block in its log file (None for base files).
        schema_version: InternalSchema version it was written with (None: matched by name).
        stored_schema: the Arrow schema of a base file as its footer stores it (None for log
            blocks).
    """

    path: str
    kind: str
    partition_path: str
    file_id: str
    instant: str
    block_offset: int | None
    schema_version: int | None
    columns: tuple[ColumnMapping, ...]
    stored_schema: pa.Schema | None = field(default=None, compare=False, repr=False)


def file_schemas(scan: PlannedScan) -> list[FileSchema]:
    """Mappings of every base file and log data block the planned scan reads.

    The base files one commit wrote share one writer and one schema (Hudi writes a commit's
    files with its writer schema, whatever their partition): one footer per commit is read
    (`commit_file_schema`)."""
    out: list[FileSchema] = []
    columns = list(scan.data_schema.names)
    history = scan.table.schema_history
    on_read = scan.schemas.schema_on_read
    for file_slice in scan.slices:
        base_path = file_slice.base_path(scan.table.path)
        if base_path is not None and file_slice.base_file is not None:
            instant = file_slice.base_file.instant_time
            file_schema = commit_file_schema(scan.table.storage, scan.table.path, instant, base_path)
            described = _describe(scan, file_slice, base_path, "base_file", instant, None, file_schema, columns,
                                  _version(history.schema_of_instant(instant)) if on_read else None)
            out.append(replace(described, stored_schema=file_schema))
        if scan.mode != "snapshot" or not file_slice.has_logs or scan.read_instant is None:
            continue
        blocks = visible_blocks(file_slice.log_paths(scan.table.path), scan.table.active_timeline, scan.read_instant)
        for visible in blocks:
            block = visible.block
            if block.block_type not in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
                continue
            instant = block.instant_time or ""
            schema = data_block_schema(visible.contents, block)
            version = _version(history.schema_of_instant(instant)) if on_read else None
            out.append(_describe(scan, file_slice, visible.contents.path, "log_block", instant, block.offset,
                                 schema, columns, version))
    return out


_COMMIT_SCHEMAS: ByteBoundedCache[pa.Schema] = ByteBoundedCache(32 * 2**20)


def commit_file_schema(storage: Storage, table_path: str, instant: str, path: str) -> pa.Schema:
    """The stored schema of the base files commit `instant` wrote, from the footer of one of them
    (`path`, the first asked about; remembered: a commit's files never change)."""
    key = (storage, table_path, instant)
    found = _COMMIT_SCHEMAS.get(key)
    if found is None:
        found = read_file_schema(storage, path)
        _COMMIT_SCHEMAS.put(key, found, 256 + 128 * len(found))
    return found


def _version(schema: object) -> int | None:
    return getattr(schema, "version_id", None)


def _describe(
    scan: PlannedScan,
    file_slice: FileSlice,
    path: str,
    kind: str,
    instant: str,
    offset: int | None,
    file_schema: pa.Schema,
    columns: list[str],
    version: int | None,
) -> FileSchema:
    resolver = scan.schemas.resolver
    from_path: list[str] = []
    if isinstance(resolver, PartitionFillingResolver):
        if resolver.config.drop_partition_columns:  # the files do not hold them: the path does
            from_path = [c for c in columns
                         if c in resolver.config.partition_fields and file_schema.get_field_index(c) < 0]
        resolver = resolver.inner  # describe the file itself, not values taken from its path
    read = [c for c in columns if c not in from_path]
    plan = resolver.plan(instant=instant, file_schema=file_schema, columns=read, path=path)
    assert isinstance(plan, ReconciledPlan)
    by_name: dict[str, ColumnMapping] = {}
    for name in from_path:
        field = scan.data_schema.field(name)
        by_name[name] = ColumnMapping(name, arrow_field_id(field), str(field.type), None, None, "partition")
    for field_plan in plan.plan.columns:
        source = field_plan.source
        identity = field_plan.node is not None and field_plan.node.identity
        if source is None or field_plan.status in (FieldStatus.ADDED, FieldStatus.READDED):
            action = "null"
        elif field_plan.status is FieldStatus.RENAMED:
            action = "rename" if identity else "rename+cast"
        else:
            action = "read" if identity else "cast"
        index = file_schema.get_field_index(source) if source else -1
        by_name[field_plan.name] = ColumnMapping(
            table_column=field_plan.name,
            column_id=field_plan.field_id,
            table_type=str(field_plan.arrow_field.type),
            file_column=source,
            file_type=str(file_schema.field(index).type) if index >= 0 else None,
            action=action,
        )
    mappings = [by_name[c] for c in columns]
    relative = os.path.relpath(path, scan.table.path).replace(os.sep, "/")
    return FileSchema(relative, kind, file_slice.partition_path, file_slice.file_id, instant, offset, version,
                      tuple(mappings))
