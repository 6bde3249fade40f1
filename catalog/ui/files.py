"""A table's files as the UI shows them: partitions, file groups, their slices, base files and log
blocks, each with the instant that wrote it, its schema version, its column mapping (for the
files a read as of the chosen instant uses) and what by-name and by-position readers get wrong.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import shim
from catalog.ui.evolution import type_text
from catalog.ui.misreads import FileColumn, Misread, misreads
from catalog.views import View
from shim import ColumnMapping, FileSchema
from shim.errors import HudiShimError
from shim.layout.slices import FileGroupFiles
from shim.read import read_file_schema
from shim.scan_options import ScanMode
from shim.schema import META_FIELD_NAMES, arrow_field_id
from shim.storage import join
from shim.timeline.instant import instant_key


@dataclass(frozen=True, slots=True)
class Mapped:
    """A file (or log block) the read uses: its column mapping and the readers that misread it."""

    columns: tuple[ColumnMapping, ...]
    misreads: tuple[Misread, ...]


@dataclass(frozen=True, slots=True)
class BlockView:
    """A log data block: byte offset, writing instant, schema version, mapping."""

    offset: int
    instant: str
    schema_version: str | None
    mapped: Mapped


@dataclass(frozen=True, slots=True)
class LogView:
    """A log file; `blocks` lists its data blocks the read merges (none for logs it does not read)."""

    file: str
    size: int
    instant: str
    blocks: tuple[BlockView, ...]


@dataclass(frozen=True, slots=True)
class BaseView:
    """A base file: its writing instant, whether that write completed, its schema version."""

    file: str
    size: int
    instant: str
    committed: bool
    schema_version: str | None
    mapped: Mapped | None


@dataclass(frozen=True, slots=True)
class SliceView:
    """A file slice; `state`: "read" (the read as of the chosen instant uses it), "older" (kept
    for time travel until a clean removes it), "replaced", or "uncommitted"."""

    base_instant: str
    state: str
    base: BaseView | None
    logs: tuple[LogView, ...]


@dataclass(frozen=True, slots=True)
class GroupView:
    file_id: str
    slices: tuple[SliceView, ...]


@dataclass(frozen=True, slots=True)
class PartitionView:
    path: str
    groups: tuple[GroupView, ...]


@dataclass(frozen=True, slots=True)
class FilesPage:
    """Every file of the table, the read as of `instant` (`view`: snapshot or read_optimized)
    marked, and how many files and blocks it reads that by-name or by-position readers misread."""

    view: str
    instant: str | None
    slices_read: int
    misread_files: int
    partitions: tuple[PartitionView, ...]


def files_page(table: shim.TableSnapshot, view: View) -> FilesPage:
    """The files of `table`, those `view` reads mapped onto its schema."""
    timeline = table.active_timeline
    table_names = {i: f.name for f in view.schema if (i := arrow_field_id(f)) is not None}
    history = table.schema_history
    mode: ScanMode = "read_optimized" if view.view == "read_optimized" else "snapshot"
    read = {(f.partition_path, f.file_id): f for f in table.file_slices(view.instant, mode=mode)} \
        if view.instant is not None else {}
    base_files = {f.path: f for f in view.files if f.kind == "base_file"}
    blocks: dict[str, list[FileSchema]] = {}
    for f in view.files:
        if f.kind == "log_block":
            blocks.setdefault(f.path, []).append(f)
    replaced = timeline.replaced_file_groups(view.instant) if view.instant is not None else set()

    def version(instant: str) -> str | None:
        schema = history.schema_of_instant(instant)
        return str(schema.version_id) if schema is not None else None

    def mapped(file_schema: FileSchema, columns: Sequence[FileColumn] | None) -> Mapped:
        return Mapped(file_schema.columns, tuple(misreads(file_schema.columns, columns, table_names)))

    def written_columns(file_schema: FileSchema) -> list[FileColumn] | None:
        """The columns of the schema version a file was written with (Hudi writes files in it)."""
        written = history.schema_of_instant(file_schema.instant)
        if written is None:
            return None
        return [FileColumn(f.name, f.id, type_text(f.type)) for f in written.fields if f.name not in META_FIELD_NAMES]

    def base_columns(file_schema: FileSchema) -> list[FileColumn] | None:
        found = written_columns(file_schema)
        if found is not None:
            return found
        try:  # no schema version (matched by name): the file's own columns
            arrow = read_file_schema(table.storage, join(table.path, file_schema.path))
        except (HudiShimError, OSError):
            return None
        return [FileColumn(f.name, None, str(f.type)) for f in arrow if f.name not in META_FIELD_NAMES]

    def block_columns(file_schema: FileSchema) -> list[FileColumn] | None:
        return written_columns(file_schema)  # None: the block's column order is not known here

    misread_files = 0
    partitions: dict[str, list[GroupView]] = {}
    groups = table.listing.file_groups(table.listing.partitions())
    for group in groups:
        read_slice = read.get((group.partition_path, group.file_id))
        slices = []
        for base_instant, base, logs in _slices(group, timeline.completion_time, timeline.config.version >= 8):
            is_read = read_slice is not None and read_slice.base_instant == base_instant
            if is_read:
                assert read_slice is not None
                logs = list(read_slice.log_files)
                state = "read"
            elif (group.partition_path, group.file_id) in replaced:
                state = "replaced"
            elif not timeline.is_committed(base_instant) and (base is not None or not logs):
                state = "uncommitted"
            else:
                state = "older"
            base_view = None
            if base is not None:
                relative = _relative(group.partition_path, base.name)
                schema = base_files.get(relative) if is_read else None
                the_map = mapped(schema, base_columns(schema)) if schema is not None else None
                misread_files += bool(the_map and the_map.misreads)
                base_view = BaseView(base.name, base.size, base.instant_time, timeline.is_committed(base.instant_time),
                                     version(base.instant_time), the_map)
            log_views = []
            for log in logs:
                found = blocks.get(_relative(group.partition_path, log.name), []) if is_read else []
                block_views = []
                for block in found:
                    the_map = mapped(block, block_columns(block))
                    misread_files += bool(the_map.misreads)
                    schema_version = str(block.schema_version) if block.schema_version is not None else None
                    block_views.append(BlockView(block.block_offset or 0, block.instant, schema_version, the_map))
                log_views.append(LogView(log.name, log.size, log.instant_time, tuple(block_views)))
            slices.append(SliceView(base_instant, state, base_view, tuple(log_views)))
        partitions.setdefault(group.partition_path, []).append(GroupView(group.file_id, tuple(reversed(slices))))
    return FilesPage(view.view, view.instant, len(read), misread_files,
                     tuple(PartitionView(p, tuple(g)) for p, g in sorted(partitions.items())))


def _relative(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def _slices(group: FileGroupFiles, completion_time: Callable[[str], str | None],
            by_completion: bool) -> list[tuple[str, Any, list[Any]]]:
    """The group's slices, oldest first: (base instant, base file or None, log files). A log file
    joins the slice of the instant in its name (table version 6) or of the newest base file
    written before its write completed (8+), as Hudi's file system view groups them."""
    bases = {b.instant_time: b for b in group.base_files}
    keys = sorted(bases, key=instant_key)
    logs: dict[str, list[Any]] = {}
    for log in sorted(group.log_files, key=lambda f: f.sort_key()):
        key = log.instant_time
        if by_completion:
            done = completion_time(log.instant_time)
            position = bisect_right([instant_key(k) for k in keys], instant_key(done)) if done else 0
            key = keys[position - 1] if position else log.instant_time
        logs.setdefault(key, []).append(log)
    return [(key, bases.get(key), logs.get(key, [])) for key in sorted(set(keys) | set(logs), key=instant_key)]
