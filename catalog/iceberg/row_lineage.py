"""Row lineage of format version 3 tables: which row ids each published snapshot's data files
hold (`format/spec.md`, "Row Lineage").

A snapshot takes row ids from the table's `next-row-id` on: its data manifest (written anew for
every snapshot) is assigned a range as long as its added and existing rows, as a manifest list
writer assigns them, and that length is the snapshot's `added-rows`. A file added by the
snapshot gets the next ids of that range; a file it keeps from its parent keeps the ids it was
given then. Every data file's `first_row_id` is written out, so no reader has to infer it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from catalog.iceberg.manifests import ADDED, DATA, DELETED, ManifestEntry


@dataclass(frozen=True, slots=True)
class RowIds:
    """A snapshot's row ids: the first one, and how many it assigns (`added-rows`)."""

    first_row_id: int
    added_rows: int


def assign_row_ids(snapshots: Sequence[Sequence[ManifestEntry]]) -> tuple[list[list[ManifestEntry]], list[RowIds], int]:
    """Each snapshot's entries (oldest first) with their data files' first row ids, each
    snapshot's row ids, and the table's `next-row-id` after the last."""
    next_row_id = 0
    given: dict[str, int] = {}
    entries_out: list[list[ManifestEntry]] = []
    ranges: list[RowIds] = []
    for entries in snapshots:
        first = cursor = next_row_id
        assigned = []
        for entry in entries:
            if entry.file.content != DATA:
                assigned.append(entry)
                continue
            if entry.status == ADDED or entry.file.path not in given:
                given[entry.file.path] = cursor
                cursor += entry.file.record_count
            assigned.append(replace(entry, first_row_id=given[entry.file.path]))
        # The data manifest's range covers its live (added and existing) rows, the ids just given included.
        live = sum(e.file.record_count for e in entries if e.file.content == DATA and e.status != DELETED)
        entries_out.append(assigned)
        ranges.append(RowIds(first, live))
        next_row_id = first + live
    return entries_out, ranges, next_row_id
