"""Turn a slice's visible log blocks into query-shaped records and merge events."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shim.errors import CorruptFileError
from shim.layout.table_schema import OPERATION_COLUMN
from shim.log.blocks import BlockType, HeaderKey, LogBlock
from shim.log.delete import decode_delete_block
from shim.log.positions import decode_positions
from shim.log.reader import data_block_schema, decode_data_block
from shim.read.damage import LogDamage
from shim.read.file_plan import SchemaResolver
from shim.read.keys import record_keys
from shim.read.log_blocks import DATA_BLOCKS, VisibleBlock
from shim.read.merge import EventKind, LogEvents
from shim.read.merge_keys import MergeMode, MergeSpec

_DELETE_OPERATIONS = ("D", "-U")


@dataclass(frozen=True, slots=True)
class SliceLog:
    """The log side of a file slice: data records (query columns) and the events on them."""

    data: pa.Table
    events: LogEvents


def read_slice_log(
    blocks: Sequence[VisibleBlock],
    resolver: SchemaResolver,
    read_schema: pa.Schema,
    spec: MergeSpec,
    damage: LogDamage | None = None,
    table_columns: Sequence[str] | None = None,
    base_instant: str | None = None,
) -> SliceLog:
    """Decode every visible block into `read_schema` columns and one event per record; a block
    that does not decode is `damage`'s to decide on (without: its error is raised). For a block
    of partial updates, the events record which of `table_columns` (default: the read columns)
    it holds. With `base_instant` (the slice's base file's), the events carry the base rows the
    blocks' `RECORD_POSITIONS` name, where every block names them for that base file."""
    columns = list(read_schema.names)
    if OPERATION_COLUMN not in columns:
        columns.append(OPERATION_COLUMN)
    batches: list[pa.RecordBatch] = []
    parts: list[tuple[pa.Array, tuple[pa.Array, ...], np.ndarray, np.ndarray]] = []
    offset = 0
    ordering_fields = spec.ordering_fields if spec.mode is MergeMode.EVENT_TIME_ORDERING else ()
    ordering_types = [read_schema.field(f).type for f in ordering_fields]
    partial_columns: list[frozenset[str] | None] = []
    block_numbers: list[np.ndarray] = []
    positions: list[np.ndarray] | None = [] if base_instant is not None else None
    for visible in blocks:
        try:
            part = _block_records(visible, resolver, columns, spec, ordering_fields, ordering_types)
            present = _partial_columns(visible, resolver, table_columns or read_schema.names)
        except CorruptFileError as exc:
            if damage is None:
                raise
            damage.undecodable(visible.contents, visible.block, exc)
            continue
        if part is None:
            continue
        keys, ordering, kinds, batch = part
        block_numbers.append(np.full(len(keys), len(partial_columns), dtype=np.int32))
        partial_columns.append(present)
        if positions is not None:
            found = block_positions(visible.block, base_instant, len(keys))
            if found is None:
                positions = None
            else:
                positions.append(found)
        if batch is None:
            parts.append((keys, ordering, kinds, np.full(len(keys), -1, dtype=np.int64)))
            continue
        n = batch.num_rows
        parts.append((keys, ordering, kinds, np.arange(offset, offset + n, dtype=np.int64)))
        batches.append(batch.select(read_schema.names))
        offset += n
    data = pa.Table.from_batches(batches, schema=read_schema) if batches else read_schema.empty_table()
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return SliceLog(data, LogEvents(pa.array([], pa.string()), tuple(
            pa.array([], t) for t in ordering_types), empty.astype(np.int8), empty))
    keys = pa.concat_arrays([p[0].cast(pa.string()) for p in parts])
    ordering_columns = tuple(
        pa.concat_arrays([p[1][i] for p in parts]) for i in range(len(ordering_fields))
    )
    kinds = np.concatenate([p[2] for p in parts]).astype(np.int8)
    data_index = np.concatenate([p[3] for p in parts])
    partial = tuple(partial_columns) if any(p is not None for p in partial_columns) else ()
    return SliceLog(data, LogEvents(keys, ordering_columns, kinds, data_index,
                                    np.concatenate(block_numbers) if partial else None, partial,
                                    np.concatenate(positions) if positions else None))


def block_positions(block: LogBlock, base_instant: str | None, records: int) -> np.ndarray | None:
    """The base file rows a block's records update, in record order, when its `RECORD_POSITIONS`
    name them for the base file of `base_instant` (one distinct row per record, as Hudi writes
    them: records sorted by position); None otherwise (the merge goes by record key, as Hudi's
    file group reader falls back to keys for a block without them)."""
    text = block.header.get(HeaderKey.RECORD_POSITIONS)
    if not text or base_instant is None or block.header.get(HeaderKey.BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS) \
            != base_instant:
        return None
    try:
        found = decode_positions(text, block.path, block.offset)
    except CorruptFileError:
        return None  # the records' keys still place them
    return found if len(found) == records else None


def _partial_columns(visible: VisibleBlock, resolver: SchemaResolver, columns: Sequence[str]) -> frozenset[str] | None:
    """The columns a block of partial updates holds (None: the block holds whole records)."""
    block = visible.block
    if (block.header.get(HeaderKey.IS_PARTIAL) or "").strip().lower() != "true" or block.block_type not in DATA_BLOCKS:
        return None
    file_schema = data_block_schema(visible.contents, block).remove_metadata()
    location = f"{visible.contents.path}@{block.offset}"
    return resolver.plan(instant=block.instant_time or "", file_schema=file_schema, columns=list(columns),
                         path=location).present


_BlockRecords = tuple[pa.Array, tuple[pa.Array, ...], np.ndarray, pa.RecordBatch | None]


def _block_records(visible: VisibleBlock, resolver: SchemaResolver, columns: list[str], spec: MergeSpec,
                   ordering_fields: Sequence[str],
                   ordering_types: Sequence[pa.DataType]) -> _BlockRecords | None:
    """One block's keys, ordering values and event kinds, with its records (None for deletes);
    None when it holds no record."""
    block = visible.block
    if block.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
        location = f"{visible.contents.path}@{block.offset}"
        file_schema = data_block_schema(visible.contents, block).remove_metadata()  # plans cached by schema
        plan = resolver.plan(
            instant=block.instant_time or "", file_schema=file_schema, columns=columns, path=location
        )
        table = decode_data_block(visible.contents, block, columns=list(plan.read_columns))
        batch = plan.apply(_one_batch(table, plan.read_columns))
        if batch.num_rows == 0:
            return None
        keys = record_keys(batch, spec, visible.contents.path, block.offset)
        ordering = tuple(batch.column(f) for f in ordering_fields)
        return keys, ordering, _data_kinds(batch, spec, ordering), batch
    if block.block_type is BlockType.DELETE:
        deletes = decode_delete_block(visible.contents, block)
        n = len(deletes.record_keys)
        if n == 0:
            return None
        ordering, kinds = _delete_ordering(deletes.ordering_values, ordering_types, n, spec)
        return deletes.record_keys, ordering, kinds, None
    return None


def _one_batch(table: pa.Table, names: Sequence[str]) -> pa.RecordBatch:
    combined = table.combine_chunks()
    batches = combined.to_batches()
    if batches:
        return batches[0]
    return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in table.schema], schema=table.schema)


def _data_kinds(batch: pa.RecordBatch, spec: MergeSpec, ordering: tuple[pa.Array, ...]) -> np.ndarray:
    deleted = np.zeros(batch.num_rows, dtype=bool)
    if spec.is_deleted_column:
        deleted |= _true_values(batch.column(spec.is_deleted_column))
    operation = batch.column(OPERATION_COLUMN) if OPERATION_COLUMN in batch.schema.names else None
    if operation is not None and operation.null_count < len(operation):
        deleted |= _true_values(pc.is_in(operation.cast(pa.string()), pa.array(_DELETE_OPERATIONS)))
    if spec.delete_marker is not None:
        field, marker = spec.delete_marker
        if field in batch.schema.names:
            deleted |= _true_values(pc.equal(batch.column(field).cast(pa.string()), marker))
    kinds = np.where(deleted, EventKind.DELETE_RECORD, EventKind.UPSERT).astype(np.int8)
    if deleted.any():
        default = _default_ordering(ordering, batch.num_rows)
        kinds[deleted & default] = EventKind.COMMIT_TIME_DELETE
    return kinds


def _delete_ordering(
    values: Sequence[pa.Array], types: Sequence[pa.DataType], n: int, spec: MergeSpec
) -> tuple[tuple[pa.Array, ...], np.ndarray]:
    """Delete-block ordering values in the ordering columns' types, and each entry's kind.

    A delete without an ordering value, with the default 0, or with a value of another type than
    the ordering column (Hudi's "same class" check fails) always wins: a commit-time delete.
    """
    if spec.mode is MergeMode.COMMIT_TIME_ORDERING or not types:
        return (), np.full(n, EventKind.COMMIT_TIME_DELETE, dtype=np.int8)
    columns: list[pa.Array] = []
    usable = np.ones(n, dtype=bool)
    for i, target in enumerate(types):
        raw = values[i] if i < len(values) else pa.nulls(n)
        try:
            cast = raw.cast(target) if raw.type != target else raw
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            cast = pa.nulls(n, target)
            usable[:] = False
        columns.append(cast)
    default = _default_ordering(tuple(columns), n) | ~usable
    kinds = np.where(default, EventKind.COMMIT_TIME_DELETE, EventKind.DELETE_BLOCK).astype(np.int8)
    return tuple(columns), kinds


def _default_ordering(ordering: tuple[pa.Array, ...], n: int) -> np.ndarray:
    """Rows whose ordering value is absent or Hudi's default (numeric 0)."""
    if not ordering:
        return np.ones(n, dtype=bool)
    first = ordering[0]
    default = ~_true_values(first.is_valid())
    if pa.types.is_integer(first.type) or pa.types.is_floating(first.type) or pa.types.is_decimal(first.type):
        default |= _true_values(pc.equal(first, pa.scalar(0).cast(first.type)))
    return default


def _true_values(mask: pa.Array) -> np.ndarray:
    return np.asarray(mask.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
