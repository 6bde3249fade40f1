"""Merging a file slice's records: log records with each other, then with the base file.

Everything is vectorised over Arrow/numpy arrays. The log side is reduced to one winning event per
record key (`LogWinners`); base batches then stream past it, each base row kept, replaced or
deleted. The rules are Hudi 1.x's record mergers (`CommitTimeRecordMerger`,
`EventTimeRecordMerger`):

Commit-time ordering: the latest event wins (log order: file, block, row); a log record always
replaces the base record; a delete of any kind deletes.

Event-time ordering, comparing ordering values (tuples when there are several ordering fields,
nulls lowest):
- a *commit-time delete* (a delete whose ordering value is absent or the default 0) always wins
  when it arrives; the next data record after it wins whatever its ordering value; other deletes
  arriving after it change nothing;
- otherwise the newer event wins when its ordering value is >= the current one (ties go to the
  newer write), which makes the winner the greatest (ordering, position) among the events after
  the last commit-time delete's first successor;
- against the base record: a commit-time delete deletes it; otherwise the base record survives
  only when its ordering value is strictly greater than the log winner's (even when the winner
  is a delete).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shim.read.merge_keys import MergeMode


class EventKind(enum.IntEnum):
    """What a log event does to its key."""

    UPSERT = 0
    DELETE_RECORD = 1  # a data record marked deleted, with an ordering value
    DELETE_BLOCK = 2  # a delete-block entry with an ordering value
    COMMIT_TIME_DELETE = 3  # a delete without (or with the default) ordering value


@dataclass(frozen=True, slots=True)
class LogEvents:
    """Every log event of a slice, in write order.

    Attributes:
        keys: record key of each event (string).
        ordering: one array per ordering field, in the fields' query types (empty for
            commit-time ordering).
        kinds: `EventKind` of each event.
        data_index: row of the event in the slice's log data table (-1 for delete-block entries).
        block: the visible block each event comes from (numbered in write order; None: not
            tracked, no block is partial).
        partial_columns: per block, the table columns a partial-update block holds (None for
            blocks of whole records).
        positions: the base file row each event updates, from the blocks' `RECORD_POSITIONS`
            (None: some block carries none for the slice's base file).
    """

    keys: pa.Array
    ordering: tuple[pa.Array, ...]
    kinds: np.ndarray
    data_index: np.ndarray
    block: np.ndarray | None = None
    partial_columns: tuple[frozenset[str] | None, ...] = ()
    positions: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def has_partial(self) -> bool:
        """Whether some block holds partial updates (`shim.read.partial_merge` merges them)."""
        return any(present is not None for present in self.partial_columns)


@dataclass(frozen=True, slots=True)
class LogWinners:
    """One winning log event per record key.

    Attributes:
        composite: per winner, whether its record is composed of several log records' columns
            (or of a partial record's, the rest from the base record); None: none is.
        sources: per table column, the log data row each composite winner (in winner order among
            the composite ones) takes it from; -1: from the base record, or null without one.
    """

    keys: pa.Array
    ordering: tuple[pa.Array, ...]
    kinds: np.ndarray
    data_index: np.ndarray
    composite: np.ndarray | None = None
    sources: Mapping[str, np.ndarray] | None = None


def resolve_winners(events: LogEvents, mode: MergeMode) -> LogWinners:
    """Reduce log events to the winning event of each record key."""
    n = len(events)
    if n == 0:
        return LogWinners(events.keys, events.ordering, events.kinds, events.data_index)
    keys = events.keys.combine_chunks() if isinstance(events.keys, pa.ChunkedArray) else events.keys
    encoded = pc.dictionary_encode(keys)
    groups = len(encoded.dictionary)
    if groups == n:
        # Every key has one event, which wins (also a lone commit-time delete): nothing to reduce.
        return LogWinners(keys, events.ordering, events.kinds, events.data_index)
    seq = np.arange(n, dtype=np.int64)
    group = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    if mode is MergeMode.COMMIT_TIME_ORDERING or not events.ordering:
        winners = np.full(groups, -1, dtype=np.int64)
        np.maximum.at(winners, group, seq)
    else:
        winners = _event_time_winners(events, group, groups, seq)
    take = pa.array(winners)
    return LogWinners(
        keys=keys.take(take),
        ordering=tuple(column.take(take) for column in events.ordering),
        kinds=events.kinds[winners],
        data_index=events.data_index[winners],
    )


def _event_time_winners(events: LogEvents, group: np.ndarray, groups: int, seq: np.ndarray) -> np.ndarray:
    kinds = events.kinds
    is_ctd = kinds == EventKind.COMMIT_TIME_DELETE
    last_ctd = np.full(groups, -1, dtype=np.int64)
    if is_ctd.any():
        np.maximum.at(last_ctd, group[is_ctd], seq[is_ctd])
    # The first data record after the last commit-time delete takes over whatever its ordering.
    is_data = (kinds == EventKind.UPSERT) | (kinds == EventKind.DELETE_RECORD)
    after = is_data & (seq > last_ctd[group]) & (last_ctd[group] >= 0)
    first_after = np.full(groups, np.iinfo(np.int64).max, dtype=np.int64)
    if after.any():
        np.minimum.at(first_after, group[after], seq[after])
    no_ctd = last_ctd[group] < 0
    candidate = no_ctd | (seq >= first_after[group])
    chosen = np.full(groups, -1, dtype=np.int64)
    # Keys whose last commit-time delete has no data record after it stay deleted.
    only_ctd = (last_ctd >= 0) & (first_after == np.iinfo(np.int64).max)
    chosen[only_ctd] = last_ctd[only_ctd]
    cand_idx = np.flatnonzero(candidate)
    if len(cand_idx):
        take = pa.array(cand_idx)
        columns: dict[str, pa.Array] = {"g": pa.array(group[cand_idx])}
        sort_keys = [("g", "ascending", "at_start")]
        for i, column in enumerate(events.ordering):
            columns[f"o{i}"] = column.take(take)
            sort_keys.append((f"o{i}", "ascending", "at_start"))
        columns["s"] = pa.array(cand_idx)
        sort_keys.append(("s", "ascending", "at_start"))
        order = pc.sort_indices(pa.table(columns), sort_keys=sort_keys).to_numpy()
        sorted_groups = group[cand_idx][order]
        last = np.append(np.flatnonzero(sorted_groups[:-1] != sorted_groups[1:]), len(order) - 1)
        chosen[sorted_groups[last]] = cand_idx[order[last]]
    return chosen


def strictly_greater(left: Sequence[pa.Array], right: Sequence[pa.Array]) -> pa.Array:
    """Row-wise lexicographic `left > right` over tuples of arrays, nulls lowest."""
    result: pa.Array | None = None
    equal_so_far: pa.Array | None = None
    for a, b in zip(left, right):
        greater = pc.or_kleene(
            pc.and_kleene(pc.is_valid(a), pc.is_null(b)),
            pc.fill_null(pc.greater(a, b), False),
        )
        same = pc.or_kleene(
            pc.and_kleene(pc.is_null(a), pc.is_null(b)),
            pc.fill_null(pc.equal(a, b), False),
        )
        step = greater if equal_so_far is None else pc.and_(equal_so_far, greater)
        result = step if result is None else pc.or_(result, step)
        equal_so_far = same if equal_so_far is None else pc.and_(equal_so_far, same)
    assert result is not None
    return result


@dataclass(frozen=True, slots=True)
class ComposedRows:
    """Records a merge composes column by column: of partial updates, with each other and with
    their base record.

    Attributes:
        base_positions: per row, the base record's row in the base file (-1: none).
        sources: per table column, the log data row the column comes from (-1: the base record's
            value, or null without a base record).
    """

    base_positions: np.ndarray
    sources: Mapping[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.base_positions)

    @property
    def nbytes(self) -> int:
        distinct = {id(a): a for a in self.sources.values()}
        return self.base_positions.nbytes + sum(a.nbytes for a in distinct.values())


class BaseMerger:
    """Streams base batches past the log winners, then names the log records still standing."""

    def __init__(self, winners: LogWinners, mode: MergeMode) -> None:
        self.winners = winners
        self.event_time = mode is MergeMode.EVENT_TIME_ORDERING and bool(winners.ordering)
        self.base_won = np.zeros(len(winners.keys), dtype=bool)
        self.overlaid = np.full(len(winners.keys), -1, dtype=np.int64)  # base row under a composite

    def keep_mask(self, keys: pa.Array, ordering: Sequence[pa.Array], offset: int = 0) -> np.ndarray | None:
        """Mask of base rows to keep (None: keep all), given their keys and ordering values;
        `offset` is the position of the batch's first row in the base file."""
        if len(self.winners.keys) == 0:
            return None
        position = pc.index_in(keys, value_set=self.winners.keys)
        if position.null_count == len(position):
            return None
        matched = np.asarray(position.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        rows = np.flatnonzero(matched)
        winner = position.filter(pa.array(matched)).to_numpy(zero_copy_only=False).astype(np.int64)
        keep = ~matched
        if self.event_time:
            # Ordering values are compared only where a base row meets its key's log winner.
            take = pa.array(winner)
            log_ordering = [column.take(take) for column in self.winners.ordering]
            base_ordering = [column.take(pa.array(rows)) for column in ordering]
            greater = np.asarray(strictly_greater(base_ordering, log_ordering).to_numpy(zero_copy_only=False),
                                 dtype=bool)
            base_wins = greater & (self.winners.kinds[winner] != EventKind.COMMIT_TIME_DELETE)
            self.base_won[winner[base_wins]] = True
            keep[rows[base_wins]] = True
            rows, winner = rows[~base_wins], winner[~base_wins]
        if self.winners.composite is not None:
            under = self.winners.composite[winner]
            self.overlaid[winner[under]] = offset + rows[under]
        return keep

    def remaining_rows(self) -> np.ndarray:
        """Rows of the log data table to emit whole: upsert winners not beaten by their base
        record, but for composite ones (`composed`)."""
        keep = (self.winners.kinds == EventKind.UPSERT) & ~self.base_won
        if self.winners.composite is not None:
            keep &= ~self.winners.composite
        return self.winners.data_index[keep]

    def composed(self) -> ComposedRows | None:
        """The composite winners not beaten by their base record, with the base row each overlays."""
        composite, sources = self.winners.composite, self.winners.sources
        if composite is None or sources is None or not composite.any():
            return None
        among = np.flatnonzero(composite)  # sources are indexed among the composite winners
        standing = ~self.base_won[among]
        cut: dict[int, np.ndarray] = {}
        for rows in sources.values():
            if id(rows) not in cut:
                cut[id(rows)] = rows[standing]
        return ComposedRows(self.overlaid[among][standing], {name: cut[id(rows)] for name, rows in sources.items()})
