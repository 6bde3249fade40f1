"""Snapshot read of one file slice: base file records merged with its log records.

The first read of a slice decodes its logs, streams the base file with the merge columns, decides
row by row and remembers the outcome (`SliceChoices`: a row mask and log positions) in the table's
cache; later reads of the slice stream only the columns they need, apply the remembered row mask
and decode the standing log records again. The standing log records come first and are let go
before the base rows stream (after them when records composed with base rows need those rows).
Memory is bounded by the slice's log side or a base batch; the cache keeps a few bits per row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from shim.errors import CorruptFileError
from shim.layout.slices import FileSlice
from shim.read.base_files import iter_parquet_in_order, parquet_footer, read_file_schema, select_rows
from shim.read.composed import compose_rows, overlaid_positions
from shim.read.damage import SkippedBlocks
from shim.read.executor import default_workers
from shim.read.file_plan import FilePlan, PartitionConstants
from shim.read.key_lookup import files_with_any
from shim.read.slice_state import (
    RememberedSlice,
    SliceChoices,
    SliceMerge,
    SliceMergeState,
    Standing,
    decode_standing_rows,
    log_key,
    log_schema,
    start_slice_merge,
)
from shim.read.time_limit import NO_LIMIT, TimeLimit
from shim.storage import Storage

if TYPE_CHECKING:
    from shim.read.planned_scan import PlannedScan

SliceReader = Callable[[FileSlice], Iterator[pa.RecordBatch]]

# Rows per base batch of a bounded merge (slices merged side by side): about 5 MB of a table of a
# dozen columns, whatever the row group's size. The merge columns alone (a key and an ordering
# value) are read in larger batches: each batch looks its keys up in a hash table of the log's
# keys built anew per batch.
BOUNDED_BATCH_SIZE = 65_536
MERGE_COLUMNS_BATCH_SIZE = 262_144


def merged_slice_reader(scan: PlannedScan, lookup: frozenset[str] | None = None,
                        skipped: SkippedBlocks | None = None, time_limit: TimeLimit = NO_LIMIT) -> SliceReader:
    """A function reading one file slice (base + logs) as of the scan's read instant; with
    `lookup` (the record keys the filter pins), a base file ruled out by its bloom filter is not
    read; corrupt log regions skipped are recorded in `skipped`; `time_limit` is checked after
    every base batch."""
    assert scan.read_instant is not None and scan.merge is not None
    cache = scan.table.slice_cache
    columns = scan.read_schema.names
    merge_columns = [c for c in scan.merge.columns if c not in columns]
    few = scan.limit is not None  # a few rows wanted: the first ones soonest
    # Slices merged side by side, one per core, read their base files in bounded batches on their
    # own threads; a lone merge lets Arrow decode columns in parallel.
    bounded = not few and sum(1 for s in scan.slices if s.has_logs) >= default_workers()
    batch_size = min(scan.batch_size, BOUNDED_BATCH_SIZE) if bounded else scan.batch_size
    logged = log_schema(scan)

    def read(file_slice: FileSlice) -> Iterator[pa.RecordBatch]:
        key = (file_slice, scan.read_instant)
        choices = _remembered(cache.get(key))
        standing = None
        if choices is not None:
            standing = decode_standing_rows(scan, file_slice, choices, logged)
            if standing is None:  # the logs read differently now: merge them afresh
                cache.discard(key)
                choices = None
        if _base_ruled_out(file_slice):
            # No row of the base file has a key asked for: only log records can match. Which of
            # them stand does not depend on the base file's other keys (nor, for the records asked
            # for, on the base rows composed records would overlay: none holds their keys).
            if choices is None:
                merge = start_slice_merge(scan, file_slice, skipped, logged)
                choices = merge.choices()
                standing = merge.standing(choices)
            assert standing is not None
            yield from _log_rows(standing, choices, None, file_slice)
        elif choices is None and few:
            yield from _first_read(file_slice)
        elif choices is None:
            # The merge columns first, then the rest as a remembered merge reads them: base rows
            # are dropped before their strings are decoded, and the merge columns are not carried.
            # Only the standing log records are kept past the merge (not the decoded log side).
            merge = start_slice_merge(scan, file_slice, skipped, logged)
            _merge_base(scan, file_slice, merge, time_limit, bounded)
            choices = _remember(scan, file_slice, merge)
            held = [merge.standing(choices)]
            del merge
            yield from _cached_read(file_slice, choices, held)
        else:
            assert standing is not None
            held = [standing]
            del standing  # _cached_read lets the log side go once it is returned
            yield from _cached_read(file_slice, choices, held)

    def _base_ruled_out(file_slice: FileSlice) -> bool:
        path = file_slice.base_path(scan.table.path)
        return lookup is not None and path is not None and not files_with_any(scan.table.storage, [path], lookup)

    def _base_plan(file_slice: FileSlice, wanted: list[str]) -> tuple[str, FilePlan]:
        path = file_slice.base_path(scan.table.path)
        assert path is not None and file_slice.base_file is not None
        plan = scan.resolver.plan(instant=file_slice.base_file.instant_time,
                                  file_schema=_planned_schema(scan.table.storage, path), columns=wanted, path=path)
        return path, plan

    def _first_read(file_slice: FileSlice) -> Iterator[pa.RecordBatch]:
        """One pass over the base file, merge and query columns together (the first rows soonest)."""
        merge = start_slice_merge(scan, file_slice, skipped, logged)
        if merge.composes:  # records composed with their base rows: merge first, then read
            _merge_base(scan, file_slice, merge, time_limit)
            choices = _remember(scan, file_slice, merge)
            yield from _cached_read(file_slice, choices, [merge.standing(choices)])
            return
        if file_slice.base_file is not None:
            path, plan = _base_plan(file_slice, columns + merge_columns)
            for _, batch in iter_parquet_in_order(scan.table.storage, path, plan, batch_size=scan.batch_size, first_soonest=few):
                time_limit.check()
                keep = merge.keep(batch, scan, path)
                batch = batch.select(columns)  # the merge columns are not filtered along
                if keep is not None:
                    batch = select_rows(batch, pa.array(keep))
                if batch.num_rows:
                    yield batch
        choices = _remember(scan, file_slice, merge)
        yield from _log_rows(merge.standing(choices), choices, None, file_slice)

    def _cached_read(file_slice: FileSlice, choices: SliceChoices, held: list[Standing]) -> Iterator[pa.RecordBatch]:
        """The slice's rows: base rows kept, then standing log records (`held`, taken from the
        list: without records composed with base rows, they go first and are let go before the
        base file is read, so memory holds one side or the other, not both)."""
        overlaid = overlaid_positions(choices.composed)
        standing = held.pop()
        if choices.composed is None or not len(choices.composed):
            yield from _log_rows(standing, choices, None, file_slice)
            standing = Standing(standing.rows.schema.empty_table())
        under: list[pa.RecordBatch] = []
        if file_slice.base_file is not None:
            path, plan = _base_plan(file_slice, columns)
            # With the merge decided, the filter may drop base rows as they are read (the scan
            # checks every merged row again); not when rows composed with log records are among
            # them, which the merge picks by position.
            pushdown = scan.row_filter.pushdown(plan.passthrough, scan.read_schema) \
                if scan.row_filter and not overlaid.size else None
            keep = _with_rows(choices.base_keep, overlaid, choices.base_rows)
            picked = _OverlaidRows(keep, overlaid)
            offset = 0
            for rows, batch in iter_parquet_in_order(scan.table.storage, path, plan, keep=keep, batch_size=batch_size,
                                                     before_plan=pushdown, first_soonest=few,
                                                     dictionaries=scan.dictionaries, bounded=bounded):
                time_limit.check()
                offset += rows
                batch = picked.split(batch, under)
                if batch.num_rows:
                    yield batch
            if offset != choices.base_rows:
                raise CorruptFileError(
                    f"{path} holds {offset} rows but held {choices.base_rows} when it was merged; "
                    "base files must not change after their commit", path=path)
        if standing.rows.num_rows or standing.log is not None:
            base = pa.Table.from_batches(under, schema=under[0].schema) if under else None
            yield from _log_rows(standing, choices, base, file_slice)

    def _log_rows(standing: Standing, choices: SliceChoices, base: pa.Table | None,
                  file_slice: FileSlice) -> Iterator[pa.RecordBatch]:
        batches = standing.rows.select(columns).to_batches() if standing.rows.num_rows else []
        if choices.composed is not None and len(choices.composed):
            assert standing.log is not None
            composed = compose_rows(standing.log, choices.composed, base, scan.read_schema)
            batches += composed.to_batches()
        if isinstance(scan.resolver, PartitionConstants) and scan.resolver.dictionary:
            # The rows' partition values are the slice's: take them as constants, not encoded per row.
            batches = [scan.resolver.fill(batch, file_slice.partition_path) for batch in batches]
        yield from (batch for batch in batches if batch.num_rows)

    return read


def _with_rows(keep: pa.BooleanArray | None, rows: np.ndarray, count: int) -> pa.BooleanArray | None:
    """`keep` with `rows` (positions) kept too."""
    if not rows.size:
        return keep
    mask = np.ones(count, dtype=bool) if keep is None else np.asarray(keep.to_numpy(zero_copy_only=False), dtype=bool)
    mask = mask.copy()
    mask[rows] = True
    return pa.array(mask)


class _OverlaidRows:
    """Splits the base rows a read keeps into those it returns and those composed records
    overlay (collected), following their positions in the file."""

    def __init__(self, keep: pa.BooleanArray | None, overlaid: np.ndarray) -> None:
        self.overlaid = overlaid
        self.kept = (np.flatnonzero(np.asarray(keep.to_numpy(zero_copy_only=False), dtype=bool))
                     if keep is not None and overlaid.size else None)
        self.seen = 0

    def split(self, batch: pa.RecordBatch, under: list[pa.RecordBatch]) -> pa.RecordBatch:
        if self.kept is None:
            return batch
        positions = self.kept[self.seen:self.seen + batch.num_rows]
        self.seen += batch.num_rows
        overlay = np.isin(positions, self.overlaid)
        if not overlay.any():
            return batch
        under.append(batch.filter(pa.array(overlay)))
        return batch.filter(pa.array(~overlay))


def slice_merge_state(scan: PlannedScan, file_slice: FileSlice) -> SliceMergeState:
    """How a snapshot read merges one slice: which base rows stand and the log records that
    follow them, with every table column (the choices remembered by the table's cache, or found
    reading only the merge columns)."""
    assert scan.read_instant is not None and scan.merge is not None
    full = scan.schemas.full_schema
    choices = _remembered(scan.table.slice_cache.get((file_slice, scan.read_instant)))
    standing = None
    if choices is not None:
        standing = decode_standing_rows(scan, file_slice, choices, full)
    if choices is None or standing is None:
        merge = start_slice_merge(scan, file_slice)
        _merge_base(scan, file_slice, merge)
        choices = _remember(scan, file_slice, merge)
        standing = merge.standing(choices)
    rows = standing.rows
    if choices.composed is not None and len(choices.composed):
        assert standing.log is not None
        base = _base_rows_at(scan, file_slice, overlaid_positions(choices.composed), full.names)
        rows = pa.concat_tables([rows, compose_rows(standing.log, choices.composed, base, full).cast(rows.schema)])
    return SliceMergeState(choices.base_rows, choices.base_keep, rows)


def _base_rows_at(scan: PlannedScan, file_slice: FileSlice, positions: np.ndarray,
                  columns: list[str]) -> pa.Table | None:
    """The base file's rows at `positions` (ascending), with `columns`."""
    path = file_slice.base_path(scan.table.path)
    if not positions.size or path is None or file_slice.base_file is None:
        return None
    plan = scan.resolver.plan(instant=file_slice.base_file.instant_time, file_schema=_planned_schema(scan.table.storage, path),
                              columns=columns, path=path)
    mask = np.zeros(parquet_footer(scan.table.storage, path).num_rows, dtype=bool)
    mask[positions] = True
    batches = [batch for _, batch in iter_parquet_in_order(scan.table.storage, path, plan, keep=pa.array(mask)) if batch.num_rows]
    return pa.Table.from_batches(batches) if batches else None


def _merge_base(scan: PlannedScan, file_slice: FileSlice, merge: SliceMerge, time_limit: TimeLimit = NO_LIMIT,
                bounded: bool = False) -> None:
    """Stream the merge columns of the slice's base file (if any) past `merge`."""
    assert scan.merge is not None
    path = file_slice.base_path(scan.table.path)
    if path is None or file_slice.base_file is None:
        return
    columns = merge.base_columns(scan.merge)
    if not columns:  # placed by record positions, decided without ordering values: no base data to read
        merge.keep_rows(parquet_footer(scan.table.storage, path).num_rows, lambda: pa.array([]), [])
        return
    plan = scan.resolver.plan(instant=file_slice.base_file.instant_time, file_schema=_planned_schema(scan.table.storage, path),
                              columns=columns, path=path)
    batch_size = MERGE_COLUMNS_BATCH_SIZE if bounded else scan.batch_size
    for _, batch in iter_parquet_in_order(scan.table.storage, path, plan, batch_size=batch_size, bounded=bounded):
        time_limit.check()
        merge.keep(batch, scan, path)


def _planned_schema(storage: Storage, path: str) -> pa.Schema:
    """The base file's schema without the footer's key-value metadata: it names each file's own
    key range, so keeping it would make the resolver plan every base file anew."""
    return read_file_schema(storage, path).remove_metadata()


def _remember(scan: PlannedScan, file_slice: FileSlice, merge: SliceMerge) -> SliceChoices:
    """The finished merge of a slice, put in the table's cache in place of its log side."""
    assert scan.read_instant is not None
    choices = merge.choices()
    if merge.remember:
        scan.table.slice_cache.put((file_slice, scan.read_instant), choices, choices.nbytes)
        scan.table.slice_cache.discard(log_key(file_slice, scan.read_instant))
    return choices


def _remembered(value: RememberedSlice | None) -> SliceChoices | None:
    """The cached merge of a slice."""
    return value if isinstance(value, SliceChoices) else None
