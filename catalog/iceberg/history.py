"""Which commits a published Iceberg table keeps as snapshots, for readers' time travel
(`FOR VERSION AS OF` / `FOR TIMESTAMP AS OF` in Trino, `snapshot_id` in PyIceberg).

Every completed write a read may still be as of (the cleaner kept its files, no earlier write is
pending, it was not archived) can be a snapshot; the newest `depth` of them are, besides the
latest commit. A snapshot's id is its instant's digits (`20240601120000123`), its timestamp the
instant's time, so the same commit has the same snapshot in every version published.
"""

from __future__ import annotations

import shim
from shim.errors import HudiShimError
from shim.planning import check_time_travel
from shim.timeline.instant import instant_key

DEFAULT_DEPTH = 10
"""Commits before the latest kept as snapshots by default."""


def history_instants(table: shim.TableSnapshot, latest: str | None, depth: int) -> list[str]:
    """Up to `depth` completed writes before `latest` that a read may still be as of, oldest first."""
    if latest is None or depth <= 0:
        return []
    found: list[str] = []
    for instant in reversed(table.active_timeline.completed_writes()):
        if len(found) == depth:
            break
        when = instant.requested_time
        if instant_key(when) >= instant_key(latest):
            continue
        try:
            check_time_travel(table, when)
        except HudiShimError:
            continue  # cleaned, archived, or after a write still pending
        found.append(when)
    return found[::-1]


def snapshot_id(instant: str) -> int:
    """The Iceberg snapshot id of the commit at `instant`: its digits, milliseconds included (a
    seconds-only instant as Hudi orders it, after every millisecond of its second)."""
    return int(instant_key(instant)[:17].ljust(17, "0"))
