"""Snapshot read of one file slice: base file records merged with its log records.

Memory is bounded by the slice: the log side (records and events) is held whole, the base file
streams batch by batch past it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from shim.plan.slices import FileSlice
from shim.read.base_files import read_file_schema, scan_parquet
from shim.read.keys import record_keys
from shim.read.log_blocks import visible_blocks
from shim.read.log_records import read_slice_log
from shim.read.merge import BaseMerger, resolve_winners
from shim.read.merge_keys import RECORD_KEY, MergeMode, MergeSpec

if TYPE_CHECKING:
    from shim.read.request import PlannedScan

SliceReader = Callable[[FileSlice], Iterator[pa.RecordBatch]]


def merged_slice_reader(scan: PlannedScan) -> SliceReader:
    """A function reading one file slice (base + logs) as of the scan's read instant."""
    spec = scan.merge
    assert spec is not None and scan.read_instant is not None
    table_path = scan.table.path
    timeline = scan.table.active_timeline
    resolver = scan.schemas.resolver
    read_schema = scan.read_schema
    read_instant = scan.read_instant

    def read(file_slice: FileSlice) -> Iterator[pa.RecordBatch]:
        blocks = visible_blocks(file_slice.log_paths(table_path), timeline, read_instant)
        log = read_slice_log(blocks, resolver, read_schema, spec)
        merger = BaseMerger(resolve_winners(log.events, spec.mode), spec.mode)
        base_path = file_slice.base_path(table_path)
        if base_path is not None and file_slice.base_file is not None:
            file_schema = read_file_schema(base_path)
            plan = resolver.plan(
                instant=file_slice.base_file.instant_time,
                file_schema=file_schema,
                columns=read_schema.names,
                path=base_path,
            )
            pushdown = _base_pushdown(scan, plan.passthrough, merger, spec)
            for batch in scan_parquet([base_path], file_schema, plan, pushdown):
                yield _merge_batch(batch, merger, spec, base_path)
        rows = merger.remaining_rows()
        if len(rows):
            yield from log.data.take(pa.array(rows)).to_batches()

    return read


def _merge_batch(batch: pa.RecordBatch, merger: BaseMerger, spec: MergeSpec, path: str) -> pa.RecordBatch:
    keys = record_keys(batch, spec, path)
    ordering = [batch.column(f) for f in spec.ordering_fields] if spec.mode is MergeMode.EVENT_TIME_ORDERING else []
    mask = merger.keep_mask(keys, ordering)
    return batch if mask is None else batch.filter(mask)


def _base_pushdown(
    scan: PlannedScan, passthrough: Mapping[str, str], merger: BaseMerger, spec: MergeSpec
) -> pc.Expression | None:
    """Row filter for the base file: the pushable filter, or the key being in the log.

    Base rows whose key the log touches must reach the merge even when they fail the filter (the
    merged record may pass it); everything else can be pruned by the filter alone.
    """
    if scan.row_filter is None or spec.key_fields or passthrough.get(RECORD_KEY) != RECORD_KEY:
        return None
    filtered = scan.row_filter.pushdown(passthrough, scan.read_schema)
    if filtered is None:
        return None
    log_keys = merger.winners.keys
    if len(log_keys) == 0:
        return filtered
    return filtered | pc.field(RECORD_KEY).isin(log_keys)
