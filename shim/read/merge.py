"""Merging a file slice's records: log records with each other, then with the base file.

All of it is vectorised over Arrow arrays. The log side is reduced to one winning event per
record key (`LogWinners`); base batches then stream past it, each row kept, replaced or deleted.

Rules (Hudi's record mergers):
- commit-time ordering: the latest write wins (log order: file order, then block order, then row
  order); a log record always replaces the base record.
- event-time ordering: the greatest ordering value wins; on a tie the later write wins. A base
  record survives only when its ordering value is strictly greater than the log winner's.
- deletes (delete blocks, `_hoodie_is_deleted = true`) are events like any other: they win or
  lose by the same rules. A delete without an ordering value (Hudi's "natural order" delete)
  removes every earlier version of the key regardless of ordering values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shim.read.merge_keys import MergeMode


@dataclass(frozen=True, slots=True)
class LogEvents:
    """Every log event of a slice, in write order.

    Attributes:
        keys: record key of each event.
        ordering: ordering value of each event (null when absent), in the ordering column's type.
        is_delete: whether the event deletes the key.
        natural_delete: deletes that carry no ordering value (they reset the key).
        data_index: row of the event in `data` (-1 for delete-block events).
        data: the log data records (read columns), or None when there are none.
    """

    keys: pa.Array
    ordering: pa.Array | None
    is_delete: np.ndarray
    natural_delete: np.ndarray
    data_index: np.ndarray
    data: pa.Table | None

    def __len__(self) -> int:
        return len(self.keys)


@dataclass(frozen=True, slots=True)
class LogWinners:
    """One winning log event per record key."""

    keys: pa.Array
    ordering: pa.Array | None
    is_delete: np.ndarray
    natural_delete: np.ndarray
    data_index: np.ndarray


def resolve_winners(events: LogEvents, mode: MergeMode) -> LogWinners:
    """Reduce log events to the winning event of each record key."""
    n = len(events)
    if n == 0:
        empty = np.zeros(0, dtype=bool)
        return LogWinners(events.keys, events.ordering, empty, empty, np.zeros(0, dtype=np.int64))
    seq = np.arange(n, dtype=np.int64)
    if mode is MergeMode.COMMIT_TIME_ORDERING or events.ordering is None:
        sort_columns: dict[str, pa.Array] = {"key": events.keys, "seq": pa.array(seq)}
        order = [("key", "ascending"), ("seq", "ascending")]
    else:
        # After a natural-order delete, only later events count; each of them beats the delete.
        live = _after_last_reset(events.keys, events.natural_delete, seq)
        rank = (~events.natural_delete).astype(np.int8)
        sort_columns = {
            "key": events.keys,
            "live": pa.array(live),
            "rank": pa.array(rank),
            "ord": events.ordering,
            "seq": pa.array(seq),
        }
        order = [
            ("key", "ascending"),
            ("live", "ascending"),
            ("rank", "ascending"),
            ("ord", "ascending"),
            ("seq", "ascending"),
        ]
    table = pa.table(sort_columns)
    indices = pc.sort_indices(table, sort_keys=order, null_placement="at_start").to_numpy()
    sorted_keys = events.keys.take(pa.array(indices))
    last = _last_of_each_group(sorted_keys)
    winners = indices[last]
    take = pa.array(winners)
    return LogWinners(
        keys=events.keys.take(take),
        ordering=events.ordering.take(take) if events.ordering is not None else None,
        is_delete=events.is_delete[winners],
        natural_delete=events.natural_delete[winners],
        data_index=events.data_index[winners],
    )


def _after_last_reset(keys: pa.Array, reset: np.ndarray, seq: np.ndarray) -> np.ndarray:
    """For each event, whether no natural-order delete of its key comes after it."""
    if not reset.any():
        return np.ones(len(seq), dtype=bool)
    reset_keys = keys.filter(pa.array(reset))
    reset_seq = seq[reset]
    grouped = pa.table({"k": reset_keys, "s": reset_seq}).group_by("k").aggregate([("s", "max")])
    position = pc.index_in(keys, value_set=grouped.column("k")).to_numpy(zero_copy_only=False)
    last_reset = np.full(len(seq), -1, dtype=np.int64)
    found = ~np.isnan(position) if position.dtype.kind == "f" else np.ones(len(seq), dtype=bool)
    max_seq = grouped.column("s_max").to_numpy()
    last_reset[found] = max_seq[position[found].astype(np.int64)]
    return seq >= last_reset


def _last_of_each_group(sorted_keys: pa.Array) -> np.ndarray:
    """Positions of the last element of each run of equal keys in a sorted array."""
    n = len(sorted_keys)
    if n == 1:
        return np.array([0], dtype=np.int64)
    differs = pc.not_equal(sorted_keys.slice(0, n - 1), sorted_keys.slice(1)).to_numpy(zero_copy_only=False)
    return np.append(np.flatnonzero(differs), n - 1).astype(np.int64)


class BaseMerger:
    """Streams base batches past the log winners, then emits the log records still standing."""

    def __init__(self, winners: LogWinners, mode: MergeMode) -> None:
        self.winners = winners
        self.mode = mode
        self.base_won = np.zeros(len(winners.keys), dtype=bool)

    def merge_base(self, keys: pa.Array, ordering: pa.Array | None) -> pa.Array | None:
        """Mask of the base rows to keep (None: keep all) given their keys and ordering values."""
        if len(self.winners.keys) == 0:
            return None
        position = pc.index_in(keys, value_set=self.winners.keys)
        matched = position.is_valid()
        if not pc.any(matched).as_py():
            return None
        if self.mode is MergeMode.COMMIT_TIME_ORDERING or ordering is None or self.winners.ordering is None:
            return pc.invert(matched)
        idx = position.fill_null(0)
        log_ord = self.winners.ordering.take(idx)
        natural = pa.array(self.winners.natural_delete).take(idx)
        base_greater = pc.fill_null(pc.greater(ordering, log_ord), False)
        base_wins = pc.and_(pc.and_(matched, base_greater), pc.invert(natural))
        won = pc.filter(position, base_wins).to_numpy(zero_copy_only=False)
        if len(won):
            self.base_won[won.astype(np.int64)] = True
        return pc.or_(pc.invert(matched), base_wins)

    def remaining_rows(self) -> np.ndarray:
        """Rows of the log data to emit: winners that are not deletes and not beaten by base."""
        keep = ~self.winners.is_delete & ~self.base_won & (self.winners.data_index >= 0)
        return self.winners.data_index[keep]
