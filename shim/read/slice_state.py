"""The outcome of merging one file slice, independent of the query that reads it.

Which base rows survive and which log records stand in for the rest depends only on the slice's
files and the read instant, never on the columns or filter of a query. Computing it once (reading
the base file's key and ordering columns and decoding the logs) lets every later read of the slice
read only the columns it needs from the base file and apply a row mask. Tables keep these choices
in a byte-bounded cache (files of a completed commit never change): a row mask and the positions
of the standing log records, never decoded rows, so what a table remembers stays a few bits per
base row however many columns the table has; a later read decodes the log records it returns. A
read that stops before the slice's last base row (a limit) leaves no choices; it remembers the
decoded log side instead (`SliceLog`), so the next read of the slice does not decode the logs again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from shim.layout.slices import FileSlice
from shim.read.base_files import parquet_footer
from shim.read.damage import LogDamage, SkippedBlocks
from shim.read.keys import record_keys
from shim.read.log_blocks import visible_blocks
from shim.read.log_records import read_slice_log
from shim.read.merge import BaseMerger, ComposedRows, LogEvents, LogWinners, resolve_winners
from shim.read.merge_keys import MergeMode, MergeSpec
from shim.read.partial_merge import resolve_partial_winners
from shim.storage import Storage

if TYPE_CHECKING:
    from shim.read.planned_scan import PlannedScan


@dataclass(frozen=True, slots=True)
class SliceChoices:
    """Merged slice, as row choices: what a table remembers of a merge.

    Attributes:
        base_rows: number of rows in the base file (0 without one).
        base_keep: which base rows survive, in file order (None: all of them).
        log_positions: the standing log records, as rows of the slice's decoded log data (every
            visible data block's records in order; the same whatever columns are decoded).
        composed: records composed column by column of partial updates (and the base rows they
            overlay, which `base_keep` drops); None when there are none.
    """

    base_rows: int
    base_keep: pa.BooleanArray | None
    log_positions: np.ndarray
    composed: ComposedRows | None = None

    @property
    def nbytes(self) -> int:
        return (self.log_positions.nbytes + (self.base_keep.nbytes if self.base_keep is not None else 0)
                + (self.composed.nbytes if self.composed is not None else 0) + 256)


@dataclass(frozen=True, slots=True)
class Standing:
    """A merged slice's log side, decoded: the log records that stand whole (`rows`), and the
    decoded log data composed records take their columns from (`log`; None without any)."""

    rows: pa.Table
    log: pa.Table | None = None


@dataclass(frozen=True, slots=True)
class SliceMergeState:
    """Merged slice, as row choices with the standing log records decoded (what
    `shim.read.slice_merge_state` returns; never remembered).

    Attributes:
        base_rows: number of rows in the base file (0 without one).
        base_keep: which base rows survive, in file order (None: all of them).
        log_rows: the log records that stand in the result, with every table column.
    """

    base_rows: int
    base_keep: pa.BooleanArray | None
    log_rows: pa.Table


@dataclass(frozen=True, slots=True)
class SliceLog:
    """A slice's decoded log side: its visible log records and each record key's winning event
    (`by_position`: each base row's, the records placed by their blocks' record positions)."""

    data: pa.Table
    winners: LogWinners
    by_position: bool = False

    @property
    def nbytes(self) -> int:
        winners = self.winners
        return (self.data.nbytes + winners.keys.nbytes + sum(c.nbytes for c in winners.ordering)
                + winners.kinds.nbytes + winners.data_index.nbytes + 256)


#: What a table's slice cache holds: merged slices, and log sides of slices not merged to the end.
RememberedSlice = SliceChoices | SliceLog


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
    by_position: bool = False

    def base_columns(self, spec: MergeSpec) -> list[str]:
        """The base file's columns the merge compares: with record positions, only the ordering
        fields (none under commit-time ordering); else the record key's too."""
        if self.by_position:
            return list(spec.ordering_fields) if self.event_time else []
        return list(dict.fromkeys(spec.columns))

    def keep(self, batch: pa.RecordBatch, scan: PlannedScan, path: str) -> np.ndarray | None:
        """Which rows of a base batch (holding the merge columns) survive; None: all of them."""
        spec = scan.merge
        assert spec is not None
        ordering = [batch.column(f) for f in spec.ordering_fields] if self.event_time else []
        return self.keep_rows(batch.num_rows, lambda: record_keys(batch, spec, path), ordering)

    def keep_rows(self, count: int, keys: Callable[[], pa.Array], ordering: list[pa.Array]) -> np.ndarray | None:
        """Which of the next `count` base rows survive (`keys` gives their record keys, when
        the merge goes by key; `ordering`, their ordering values under event-time ordering)."""
        offset = self.base_rows
        self.base_rows += count
        if len(self.merger.winners.keys) == 0:
            self.masks.append(np.ones(count, dtype=bool))
            return None
        found = pa.array(np.arange(offset, offset + count, dtype=np.int64)) if self.by_position else keys()
        mask = self.merger.keep_mask(found, ordering, offset)
        keep = np.ones(count, dtype=bool) if mask is None else mask
        self.masks.append(keep)
        if keep.all():
            return None
        self.dropped = True
        return keep

    @property
    def composes(self) -> bool:
        """Whether the merge may compose records of partial updates (with their base rows)."""
        return self.merger.winners.composite is not None

    def choices(self) -> SliceChoices:
        """The outcome, once every base batch went past."""
        keep = pa.array(np.concatenate(self.masks)) if self.dropped else None
        return SliceChoices(self.base_rows, keep, self.merger.remaining_rows(), self.merger.composed())

    def standing(self, choices: SliceChoices) -> Standing:
        """The log side of `choices` from this merge's decoded log."""
        return Standing(standing_rows(self.log, choices), self.log if choices.composed is not None else None)


def standing_rows(log: pa.Table, choices: SliceChoices) -> pa.Table:
    """The standing log records of `choices`, from the slice's decoded log data `log`."""
    if not len(choices.log_positions):
        return log.schema.empty_table()
    return log.take(pa.array(choices.log_positions, pa.int64()))


def decode_standing_rows(scan: PlannedScan, file_slice: FileSlice, choices: SliceChoices,
                         schema: pa.Schema) -> Standing | None:
    """The log side of remembered `choices`, decoded anew with the columns of `schema`; None when
    the slice's logs now read damaged (the positions may no longer hold)."""
    spec = scan.merge
    assert spec is not None and scan.read_instant is not None
    if not len(choices.log_positions) and choices.composed is None:
        return Standing(schema.empty_table())
    table = scan.table
    damage = LogDamage(table.committed, file_slice.partition_path, scan.read_instant, "skip", None)
    blocks = visible_blocks(file_slice.log_paths(table.path), table.active_timeline, scan.read_instant, damage)
    log = read_slice_log(blocks, scan.schemas.resolver, schema, spec, damage, scan.schemas.full_schema.names)
    used = [choices.log_positions] + ([*choices.composed.sources.values()] if choices.composed is not None else [])
    if damage.found or len(log.data) <= max((int(rows.max()) for rows in used if len(rows)), default=-1):
        return None
    return Standing(standing_rows(log.data, choices), log.data if choices.composed is not None else None)


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
        log = read_slice_log(blocks, scan.schemas.resolver, schema, spec, damage, scan.schemas.full_schema.names,
                             file_slice.base_instant if file_slice.base_file is not None else None)
        events, by_position = _placed(log.events, file_slice, table.storage)
        winners = (resolve_partial_winners(events, spec.mode, scan.schemas.full_schema.names)
                   if events.has_partial else resolve_winners(events, spec.mode))
        side = SliceLog(log.data, winners, by_position)
        remember = not damage.found
        if remember:
            table.slice_cache.put(key, side, side.nbytes)
    merger = BaseMerger(side.winners, spec.mode)
    return SliceMerge(side.data, merger, spec.mode is MergeMode.EVENT_TIME_ORDERING, [], remember=remember,
                      by_position=side.by_position)


def _placed(events: LogEvents, file_slice: FileSlice, storage: Storage) -> tuple[LogEvents, bool]:
    """The events keyed by the base rows their record positions name (and True), where every
    block names them for the slice's base file and inside it, as Hudi's position-based merge
    takes them; else as they are, keyed by record key (and False)."""
    positions = events.positions
    path = file_slice.base_path(storage.root)
    if positions is None or path is None or not len(positions):
        return events, False
    if int(positions.max()) >= parquet_footer(storage, path).num_rows:
        return events, False
    return dataclasses.replace(events, keys=pa.array(positions, pa.int64())), True
