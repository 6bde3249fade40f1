"""The outcome of merging one file slice, independent of the query that reads it.

Which base rows survive and which log records stand in for the rest depends only on the slice's
files and the read instant, never on the columns or filter of a query. Computing it once (reading
the base file's key and ordering columns and decoding the logs) lets every later read of the slice
read only the columns it needs from the base file and apply a row mask. Tables keep these states
in a byte-bounded cache (files of a completed commit never change). A read that stops before
the slice's last base row (a limit) leaves no state; it remembers the decoded log side instead
(`SliceLog`), so the next read of the slice does not decode the logs again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from shim.layout.slices import FileSlice
from shim.read.damage import LogDamage, SkippedBlocks
from shim.read.keys import record_keys
from shim.read.log_blocks import visible_blocks
from shim.read.log_records import read_slice_log
from shim.read.merge import BaseMerger, LogWinners, resolve_winners
from shim.read.merge_keys import MergeMode

if TYPE_CHECKING:
    from shim.read.planned import PlannedScan


@dataclass(frozen=True, slots=True)
class SliceMergeState:
    """Merged slice, as row choices.

    Attributes:
        base_rows: number of rows in the base file (0 without one).
        base_keep: which base rows survive, in file order (None: all of them).
        log_rows: the log records that stand in the result, with every table column.
    """

    base_rows: int
    base_keep: pa.BooleanArray | None
    log_rows: pa.Table

    @property
    def nbytes(self) -> int:
        return self.log_rows.nbytes + (self.base_keep.nbytes if self.base_keep is not None else 0) + 256

    def holds(self, schema: pa.Schema) -> bool:
        """Whether the standing log records carry every column of `schema`."""
        return _holds(self.log_rows, schema)


@dataclass(frozen=True, slots=True)
class SliceLog:
    """A slice's decoded log side: its visible log records and each record key's winning event."""

    data: pa.Table
    winners: LogWinners

    @property
    def nbytes(self) -> int:
        winners = self.winners
        return (self.data.nbytes + winners.keys.nbytes + sum(c.nbytes for c in winners.ordering)
                + winners.kinds.nbytes + winners.data_index.nbytes + 256)


#: What a table's slice cache holds: merged slices, and log sides of slices not merged to the end.
RememberedSlice = SliceMergeState | SliceLog


def log_key(file_slice: FileSlice, read_instant: str) -> tuple[str, FileSlice, str]:
    """The slice cache's key of a slice's log side."""
    return ("log", file_slice, read_instant)


@dataclass(slots=True)
class SliceMerge:
    """A merge under way: the log side is resolved, base batches are decided as they stream past."""

    log: pa.Table
    merger: BaseMerger
    event_time: bool
    masks: list[np.ndarray]
    base_rows: int = 0
    dropped: bool = False
    remember: bool = True

    def keep(self, batch: pa.RecordBatch, scan: PlannedScan, path: str) -> np.ndarray | None:
        """Which rows of a base batch (holding the merge columns) survive; None: all of them."""
        spec = scan.merge
        assert spec is not None
        self.base_rows += batch.num_rows
        if len(self.merger.winners.keys) == 0:
            self.masks.append(np.ones(batch.num_rows, dtype=bool))
            return None
        keys = record_keys(batch, spec, path)
        ordering = [batch.column(f) for f in spec.ordering_fields] if self.event_time else []
        mask = self.merger.keep_mask(keys, ordering)
        keep = np.ones(batch.num_rows, dtype=bool) if mask is None else mask
        self.masks.append(keep)
        if keep.all():
            return None
        self.dropped = True
        return keep

    def state(self) -> SliceMergeState:
        """The outcome, once every base batch went past."""
        rows = self.merger.remaining_rows()
        log_rows = self.log.take(pa.array(rows, pa.int64())) if len(rows) else self.log.schema.empty_table()
        keep = pa.array(np.concatenate(self.masks)) if self.dropped else None
        return SliceMergeState(self.base_rows, keep, log_rows)


def log_schema(scan: PlannedScan) -> pa.Schema:
    """The columns a snapshot read takes from log records: those it reads and those the merge
    compares (decoding the others would be wasted)."""
    assert scan.merge is not None
    wanted = set(scan.read_schema.names) | set(scan.merge.columns)
    return pa.schema([f for f in scan.schemas.full_schema if f.name in wanted])


def _holds(table: pa.Table, schema: pa.Schema) -> bool:
    names = set(table.schema.names)
    return all(name in names for name in schema.names)


def start_slice_merge(scan: PlannedScan, file_slice: FileSlice, skipped: SkippedBlocks | None = None,
                      schema: pa.Schema | None = None) -> SliceMerge:
    """Decode the slice's visible log blocks (the columns of `schema`, by default every table
    column) and resolve them per key; a log side remembered by the table's cache is taken as it
    is when it holds those columns. Corrupt log regions are treated as `scan.corrupt` says (and
    recorded in `skipped`); a slice that has some is not remembered."""
    spec = scan.merge
    assert spec is not None and scan.read_instant is not None
    table = scan.table
    schema = scan.schemas.full_schema if schema is None else schema
    key = log_key(file_slice, scan.read_instant)
    side = table.slice_cache.get(key)
    remember = True
    if not isinstance(side, SliceLog) or not _holds(side.data, schema):
        damage = LogDamage(table.committed, file_slice.partition_path, scan.read_instant, scan.corrupt, skipped)
        blocks = visible_blocks(file_slice.log_paths(table.path), table.active_timeline, scan.read_instant, damage)
        log = read_slice_log(blocks, scan.schemas.resolver, schema, spec)
        side = SliceLog(log.data, resolve_winners(log.events, spec.mode))
        remember = not damage.found
        if remember:
            table.slice_cache.put(key, side, side.nbytes)
    merger = BaseMerger(side.winners, spec.mode)
    return SliceMerge(side.data, merger, spec.mode is MergeMode.EVENT_TIME_ORDERING, [], remember=remember)
