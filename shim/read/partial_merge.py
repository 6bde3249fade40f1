"""Merging partial-update log records (`IS_PARTIAL` blocks) as Hudi 1.x does.

A MERGE INTO that sets some columns of a merge-on-read table writes log records holding only
those columns (and the meta columns). From the first such block on, Hudi's file group reader
merges a slice's records partially (`PartialUpdateBufferedRecordMerger`, with the Spark record
merger's `partialMerge`):
- a record merged onto another takes the columns of the one with the higher ordering value (the
  newer on a tie; under commit-time ordering, always the newer) and the other's values for the
  columns it lacks; the merged record carries the higher ordering value;
- a record merged onto a delete stands alone (the delete is forgotten);
- a delete merged onto a record wins as in a full merge (a commit-time delete, or an ordering
  value at least the record's);
- last comes the base record: with a strictly higher ordering value it stands as it is;
  otherwise the log record's columns overlay it.
Blocks before the first partial one merge fully (a record that loses is dropped whole).

Folding one key's records so, a column's value comes from the first record holding the column in
this precedence: the records that took over (held the highest ordering value when they came),
newest first, then the others, oldest first. The fold decides, per record, whether it took over;
the columns are then chosen for all keys at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shim.read.merge import EventKind, LogEvents, LogWinners
from shim.read.merge_keys import MergeMode

_DELETES = (EventKind.DELETE_RECORD, EventKind.DELETE_BLOCK, EventKind.COMMIT_TIME_DELETE)


def resolve_partial_winners(events: LogEvents, mode: MergeMode, columns: Sequence[str]) -> LogWinners:
    """One winner per record key, as `merge.resolve_winners`, for a log holding partial blocks;
    winners built from several records (or from one partial record) are `composite`, their
    columns' sources given per column of `columns`."""
    n = len(events)
    keys = events.keys.combine_chunks() if isinstance(events.keys, pa.ChunkedArray) else events.keys
    encoded = pc.dictionary_encode(keys)
    group = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    order = np.lexsort((np.arange(n), group))  # by key, then in write order
    ordering = _ordering_tuples(events.ordering, n) if mode is MergeMode.EVENT_TIME_ORDERING else None
    partial_from = _first_partial_event(events)
    groups = len(encoded.dictionary)
    winner = np.full(groups, -1, dtype=np.int64)
    entry_event: list[int] = []
    entry_group: list[int] = []
    entry_high: list[bool] = []
    kinds = events.kinds
    current = -1
    state: int | None = None  # the event holding the state's ordering value (None: no state)
    deleted = False
    segment_start = 0
    for event in order.tolist():
        g = int(group[event])
        if g != current:
            if state is not None:
                winner[current] = state  # the previous key's
            current, state, deleted, segment_start = g, None, False, len(entry_event)
        kind = kinds[event]
        if kind in _DELETES:
            if state is None or _delete_wins(event, state, deleted, kinds, ordering):
                state, deleted = event, True
                del entry_event[segment_start:], entry_group[segment_start:], entry_high[segment_start:]
            continue
        partial_rules = event >= partial_from
        if state is None or (deleted and (partial_rules or _takes_over(event, state, True, kinds, ordering))):
            del entry_event[segment_start:], entry_group[segment_start:], entry_high[segment_start:]
            state, deleted = event, False
            _enter(entry_event, entry_group, entry_high, event, g, True)
        elif deleted:
            continue
        elif _takes_over(event, state, False, kinds, ordering):
            if not partial_rules:  # a full merge: the newer record replaces the state whole
                del entry_event[segment_start:], entry_group[segment_start:], entry_high[segment_start:]
            state = event
            _enter(entry_event, entry_group, entry_high, event, g, True)
        elif partial_rules:
            _enter(entry_event, entry_group, entry_high, event, g, False)
    if state is not None:
        winner[current] = state
    take = pa.array(winner)
    winner_kinds = kinds[winner]
    entries = np.asarray(entry_event, dtype=np.int64)
    entry_groups = np.asarray(entry_group, dtype=np.int64)
    composite = _composite(entries, entry_groups, groups, events)
    composite &= winner_kinds == EventKind.UPSERT
    sources = _sources(entries, entry_groups, np.asarray(entry_high, dtype=bool), composite, events, columns)
    return LogWinners(
        keys=keys.take(take),
        ordering=tuple(column.take(take) for column in events.ordering),
        kinds=winner_kinds,
        data_index=events.data_index[winner],
        composite=composite,
        sources=sources,
    )


def _enter(events: list[int], groups: list[int], high: list[bool], event: int, group: int, takes_over: bool) -> None:
    events.append(event)
    groups.append(group)
    high.append(takes_over)


def _ordering_tuples(columns: tuple[pa.Array, ...], n: int) -> list[tuple[object, ...]] | None:
    """Each event's ordering value as a comparable tuple (nulls lowest); None without ordering fields."""
    if not columns:
        return None
    values = [column.to_pylist() for column in columns]
    return [tuple((v is not None, v) if v is not None else (False, 0) for v in row) for row in zip(*values)]


def _takes_over(event: int, state: int, after_delete: bool, kinds: np.ndarray,
                ordering: list[tuple[object, ...]] | None) -> bool:
    """Whether a data record becomes the state (holds the higher ordering value, or comes after a
    commit-time delete); always under commit-time ordering."""
    if ordering is None:
        return True
    if after_delete and kinds[state] == EventKind.COMMIT_TIME_DELETE:
        return True
    return ordering[event] >= ordering[state]


def _delete_wins(event: int, state: int, deleted: bool, kinds: np.ndarray,
                 ordering: list[tuple[object, ...]] | None) -> bool:
    if ordering is None or kinds[event] == EventKind.COMMIT_TIME_DELETE:
        return True
    if deleted and kinds[state] == EventKind.COMMIT_TIME_DELETE:
        return False  # deletes after a commit-time delete change nothing
    return ordering[event] >= ordering[state]


def _first_partial_event(events: LogEvents) -> int:
    """The first event of the first partial block (events before it merge fully)."""
    if events.block is None:
        return len(events)
    partial_blocks = [i for i, present in enumerate(events.partial_columns) if present is not None]
    if not partial_blocks:
        return len(events)
    hits = np.flatnonzero(np.isin(events.block, partial_blocks))
    return int(hits[0]) if hits.size else len(events)


def _composite(entries: np.ndarray, groups: np.ndarray, count: int, events: LogEvents) -> np.ndarray:
    """Keys whose record comes from several records, or from one partial record."""
    per_group = np.bincount(groups, minlength=count) if groups.size else np.zeros(count, dtype=np.int64)
    composite = per_group > 1
    if entries.size and events.block is not None:
        partial_block = np.array([p is not None for p in events.partial_columns], dtype=bool)
        lone_partial = partial_block[events.block[entries]]
        composite[groups[lone_partial]] = True
    return composite


def _sources(entries: np.ndarray, groups: np.ndarray, high: np.ndarray, composite: np.ndarray,
             events: LogEvents, columns: Sequence[str]) -> Mapping[str, np.ndarray] | None:
    """Per column, the log data row each composite winner takes the column from (-1: none of its
    records holds the column: the base record's value, or null)."""
    if not composite.any():
        return None
    keep = composite[groups]
    entries, groups, high = entries[keep], groups[keep], high[keep]
    rank = np.where(high, -entries - 1 - len(events), entries)  # takers-over newest first, then the rest
    order = np.lexsort((rank, groups))
    entries, groups = entries[order], groups[order]
    assert events.block is not None  # records merged partially come from partial blocks
    blocks = events.block[entries]
    rows = events.data_index[entries]
    winners = np.flatnonzero(composite)
    slot = np.full(len(composite), -1, dtype=np.int64)
    slot[winners] = np.arange(len(winners))
    found: dict[bytes, np.ndarray] = {}
    sources: dict[str, np.ndarray] = {}
    for column in columns:
        holds = np.array([present is None or column in present for present in events.partial_columns], dtype=bool)
        chosen = np.flatnonzero(holds[blocks])
        source = np.full(len(winners), -1, dtype=np.int64)
        if chosen.size:
            first_groups, first = np.unique(groups[chosen], return_index=True)
            source[slot[first_groups]] = rows[chosen[first]]
        sources[column] = found.setdefault(source.tobytes(), source)  # columns alike share one array
    return sources
