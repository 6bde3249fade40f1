"""Rewriting a base file: the previous records merged with a batch, as Hudi's merge handle does.

Records are keyed by `_hoodie_record_key`. A previous record whose key the batch deletes is
dropped. A previous record whose key the batch writes is replaced (commit-time ordering,
OverwriteWithLatestAvroPayload), or, under event-time ordering (DefaultHoodieRecordPayload),
replaced unless its ordering value is strictly greater. Records carried over keep their meta
columns (commit time, sequence number) as Hudi keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

RECORD_KEY = "_hoodie_record_key"


@dataclass(frozen=True, slots=True)
class MergeResult:
    """The merged records and what the merge did."""

    table: pa.Table
    inserts: int
    updates: int
    deletes: int


def merge_records(
    previous: pa.Table | None,
    incoming: pa.Table,
    delete_keys: pa.Array,
    ordering_fields: tuple[str, ...] = (),
    *,
    batch: tuple[str, tuple[str, ...]] | None = None,
) -> MergeResult:
    """Merge `incoming` (meta columns filled) onto `previous` (same schema), removing `delete_keys`.

    Args:
        ordering_fields: compare these under event-time ordering; empty means commit-time
            ordering (the incoming record always wins).
        batch: (instant, pre-combine fields): previous records written by this same commit (by
            another task) are pre-combined with the incoming ones, as Hudi de-duplicates a batch:
            by these fields, whatever the payload's ordering.
    """
    if previous is None or previous.num_rows == 0:
        return MergeResult(incoming, incoming.num_rows, 0, 0)
    prev_keys = previous.column(RECORD_KEY).combine_chunks()
    keep_prev = np.ones(previous.num_rows, dtype=bool)
    deletes = 0
    if len(delete_keys):
        deleted = _member(prev_keys, delete_keys)
        deletes = int(deleted.sum())
        keep_prev &= ~deleted
    keep_in = np.ones(incoming.num_rows, dtype=bool)
    updates = 0
    if incoming.num_rows:
        in_keys = incoming.column(RECORD_KEY).combine_chunks()
        matched = _member(prev_keys, in_keys) & keep_prev
        compared = matched.copy() if ordering_fields else np.zeros(len(matched), dtype=bool)
        fields = ordering_fields
        if batch is not None and batch[1]:
            same = np.asarray(pc.equal(previous.column("_hoodie_commit_time"), batch[0]).to_numpy(
                zero_copy_only=False), dtype=bool) & matched
            if same.any():
                compared = same if not ordering_fields else matched
                fields = batch[1] if not ordering_fields else ordering_fields
        if compared.any():
            positions = pc.index_in(prev_keys, value_set=in_keys).to_numpy(zero_copy_only=False)
            rows = np.flatnonzero(compared)
            take = pa.array(positions[rows].astype(np.int64))
            prev_wins = np.zeros(len(rows), dtype=bool)
            decided = np.zeros(len(rows), dtype=bool)
            for field in fields:  # lexicographic: the first field that differs decides
                old = previous.column(field).combine_chunks().take(pa.array(rows))
                new = incoming.column(field).combine_chunks().take(take)
                greater, equal = _compare(old, new)
                prev_wins |= greater & ~decided
                decided |= ~equal
            kept_rows = rows[prev_wins]
            if len(kept_rows):
                kept_keys = prev_keys.take(pa.array(kept_rows))
                keep_in &= ~_member(in_keys, kept_keys)
                matched[kept_rows] = False
        updates = int(_member(in_keys, prev_keys.filter(pa.array(matched))).sum()) if matched.any() else 0
        keep_prev &= ~matched
    merged = pa.concat_tables([_kept(previous, keep_prev), _kept(incoming, keep_in)])
    inserts = int(keep_in.sum()) - updates
    return MergeResult(merged, inserts, updates, deletes)


def outranked(earlier: pa.Table, incoming: pa.Table, fields: tuple[str, ...]) -> np.ndarray:
    """Which `incoming` rows lose to an `earlier` version of their key written by the same commit:
    one whose `fields` (compared in order) are strictly greater, as Hudi's pre-combine decides.
    When `earlier` holds a key more than once, its last row is the version that counts."""
    lost = np.zeros(incoming.num_rows, dtype=bool)
    if not earlier.num_rows or not incoming.num_rows or not fields:
        return lost
    last_first = earlier.take(pa.array(np.arange(earlier.num_rows - 1, -1, -1, dtype=np.int64)))
    positions = pc.index_in(incoming.column(RECORD_KEY), value_set=last_first.column(RECORD_KEY).combine_chunks())
    rows = np.flatnonzero(np.asarray(positions.is_valid().to_numpy(zero_copy_only=False), dtype=bool))
    if not len(rows):
        return lost
    take = pa.array(positions.to_numpy(zero_copy_only=False)[rows].astype(np.int64))
    decided = np.zeros(len(rows), dtype=bool)
    for field in fields:
        old = last_first.column(field).combine_chunks().take(take)
        new = incoming.column(field).combine_chunks().take(pa.array(rows))
        greater, equal = _compare(old, new)
        lost[rows] |= greater & ~decided
        decided |= ~equal
    return lost


def _kept(table: pa.Table, keep: np.ndarray) -> pa.Table:
    """The rows of `table` where `keep` is set (the table itself, not a copy, when all are)."""
    return table if keep.all() else table.filter(pa.array(keep))


def _member(values: pa.Array, value_set: pa.Array) -> np.ndarray:
    if len(values) == 0 or len(value_set) == 0:
        return np.zeros(len(values), dtype=bool)
    return np.asarray(pc.is_in(values, value_set=value_set).to_numpy(zero_copy_only=False), dtype=bool)


def _compare(old: pa.Array, new: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(old > new, old == new) with null as the lowest value."""
    old_valid = np.asarray(old.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    new_valid = np.asarray(new.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if not old.type.equals(new.type):
        new = new.cast(old.type)
    greater = np.asarray(pc.fill_null(pc.greater(old, new), False).to_numpy(zero_copy_only=False), dtype=bool)
    equal = np.asarray(pc.fill_null(pc.equal(old, new), False).to_numpy(zero_copy_only=False), dtype=bool)
    greater |= old_valid & ~new_valid
    equal |= ~old_valid & ~new_valid
    return greater, equal
