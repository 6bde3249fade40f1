"""Snapshot read of one file slice: base file records merged with its log records.

The first read of a slice decodes its logs, streams the base file with the merge columns, decides
row by row and remembers the outcome (`SliceMergeState`) in the table's cache; later reads of the
slice stream only the columns they need and apply the remembered row mask. The standing log
records follow the base rows. Memory is bounded by the slice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from shim.errors import CorruptFileError
from shim.layout.slices import FileSlice
from shim.read.base_files import iter_parquet_in_order, read_file_schema, select_rows
from shim.read.damage import SkippedBlocks
from shim.read.key_lookup import files_with_any
from shim.read.partition_fill import PartitionFillingResolver
from shim.read.plan import FilePlan
from shim.read.slice_state import (
    RememberedSlice,
    SliceMerge,
    SliceMergeState,
    log_key,
    log_schema,
    start_slice_merge,
)
from shim.read.time_limit import NO_LIMIT, TimeLimit

if TYPE_CHECKING:
    from shim.read.planned import PlannedScan

SliceReader = Callable[[FileSlice], Iterator[pa.RecordBatch]]


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
    logged = log_schema(scan)

    def read(file_slice: FileSlice) -> Iterator[pa.RecordBatch]:
        key = (file_slice, scan.read_instant)
        state = _remembered(cache.get(key), logged)
        if _base_ruled_out(file_slice):
            # No row of the base file has a key asked for: only log records can match. Which of
            # them stand does not depend on the base file's other keys.
            yield from _log_rows(state or start_slice_merge(scan, file_slice, skipped, logged).state(), file_slice)
        elif state is None and few:
            yield from _first_read(file_slice)
        elif state is None:
            # The merge columns first, then the rest as a remembered merge reads them: base rows
            # are dropped before their strings are decoded, and the merge columns are not carried.
            merge = start_slice_merge(scan, file_slice, skipped, logged)
            _merge_base(scan, file_slice, merge, time_limit)
            yield from _cached_read(file_slice, _remember(scan, file_slice, merge))
        else:
            yield from _cached_read(file_slice, state)

    def _base_ruled_out(file_slice: FileSlice) -> bool:
        path = file_slice.base_path(scan.table.path)
        return lookup is not None and path is not None and not files_with_any([path], lookup)

    def _base_plan(file_slice: FileSlice, wanted: list[str]) -> tuple[str, FilePlan]:
        path = file_slice.base_path(scan.table.path)
        assert path is not None and file_slice.base_file is not None
        plan = scan.resolver.plan(instant=file_slice.base_file.instant_time,
                                  file_schema=_planned_schema(path), columns=wanted, path=path)
        return path, plan

    def _first_read(file_slice: FileSlice) -> Iterator[pa.RecordBatch]:
        """One pass over the base file, merge and query columns together (the first rows soonest)."""
        merge = start_slice_merge(scan, file_slice, skipped, logged)
        if file_slice.base_file is not None:
            path, plan = _base_plan(file_slice, columns + merge_columns)
            for _, batch in iter_parquet_in_order(path, plan, batch_size=scan.batch_size, first_soonest=few):
                time_limit.check()
                keep = merge.keep(batch, scan, path)
                batch = batch.select(columns)  # the merge columns are not filtered along
                if keep is not None:
                    batch = select_rows(batch, pa.array(keep))
                if batch.num_rows:
                    yield batch
        state = _remember(scan, file_slice, merge)
        yield from _log_rows(state, file_slice)

    def _cached_read(file_slice: FileSlice, state: SliceMergeState) -> Iterator[pa.RecordBatch]:
        if file_slice.base_file is not None:
            path, plan = _base_plan(file_slice, columns)
            # With the merge decided, the filter may drop base rows as they are read (the scan
            # checks every merged row again).
            pushdown = scan.row_filter.pushdown(plan.passthrough, scan.read_schema) if scan.row_filter else None
            offset = 0
            for rows, batch in iter_parquet_in_order(path, plan, keep=state.base_keep, batch_size=scan.batch_size,
                                                     before_plan=pushdown, first_soonest=few,
                                                     dictionaries=scan.dictionaries):
                time_limit.check()
                offset += rows
                if batch.num_rows:
                    yield batch
            if offset != state.base_rows:
                raise CorruptFileError(
                    f"{path} holds {offset} rows but held {state.base_rows} when it was merged; "
                    "base files must not change after their commit", path=path)
        yield from _log_rows(state, file_slice)

    def _log_rows(state: SliceMergeState, file_slice: FileSlice) -> Iterator[pa.RecordBatch]:
        if not state.log_rows.num_rows:
            return
        batches = state.log_rows.select(columns).to_batches()
        if isinstance(scan.resolver, PartitionFillingResolver) and scan.resolver.dictionary:
            # The rows' partition values are the slice's: take them as constants, not encoded per row.
            batches = [scan.resolver.fill(batch, file_slice.partition_path) for batch in batches]
        yield from batches

    return read


def slice_merge_state(scan: PlannedScan, file_slice: FileSlice) -> SliceMergeState:
    """How a snapshot read merges one slice: which base rows stand and the log records that
    follow them (remembered by the table's cache, or found reading only the merge columns)."""
    assert scan.read_instant is not None and scan.merge is not None
    cache = scan.table.slice_cache
    key = (file_slice, scan.read_instant)
    state = _remembered(cache.get(key), scan.schemas.full_schema)
    if state is not None:
        return state
    merge = start_slice_merge(scan, file_slice)
    _merge_base(scan, file_slice, merge)
    return _remember(scan, file_slice, merge)


def _merge_base(scan: PlannedScan, file_slice: FileSlice, merge: SliceMerge, time_limit: TimeLimit = NO_LIMIT) -> None:
    """Stream the merge columns of the slice's base file (if any) past `merge`."""
    assert scan.merge is not None
    path = file_slice.base_path(scan.table.path)
    if path is None or file_slice.base_file is None:
        return
    columns = list(dict.fromkeys(scan.merge.columns))
    plan = scan.resolver.plan(instant=file_slice.base_file.instant_time, file_schema=_planned_schema(path),
                              columns=columns, path=path)
    for _, batch in iter_parquet_in_order(path, plan, batch_size=scan.batch_size):
        time_limit.check()
        merge.keep(batch, scan, path)


def _planned_schema(path: str) -> pa.Schema:
    """The base file's schema without the footer's key-value metadata: it names each file's own
    key range, so keeping it would make the resolver plan every base file anew."""
    return read_file_schema(path).remove_metadata()


def _remember(scan: PlannedScan, file_slice: FileSlice, merge: SliceMerge) -> SliceMergeState:
    """The finished merge of a slice, put in the table's cache in place of its log side (the
    state holds what is needed of it)."""
    assert scan.read_instant is not None
    state = merge.state()
    if merge.remember:
        scan.table.slice_cache.put((file_slice, scan.read_instant), state, state.nbytes)
        scan.table.slice_cache.discard(log_key(file_slice, scan.read_instant))
    return state


def _remembered(value: RememberedSlice | None, schema: pa.Schema) -> SliceMergeState | None:
    """The cached merge of a slice, when its log records carry the columns of `schema`."""
    return value if isinstance(value, SliceMergeState) and value.holds(schema) else None
