"""Planned scans remembered per table version: engines such as DuckDB send the same few scans
again and again, and planning one (binding the filter, pruning partitions, listing file slices)
costs more than reading a small partition."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

import pyarrow.compute as pc

if TYPE_CHECKING:
    from shim.planning.planner import Scan

MAX_PLANS = 32
"""Plans kept per table version (the least recently used is dropped)."""
MAX_SLICES = 256
"""Plans of more file slices are not kept: they read enough for planning not to matter."""


class PlanCache:
    """Planned scans of one table version, by request. Only requests whose filter is None, filter
    text or a `pyarrow.compute.Expression` are kept (an expression is matched with `equals`,
    its text being only the key)."""

    def __init__(self) -> None:
        self._plans: OrderedDict[Hashable, tuple[object, Scan]] = OrderedDict()
        self._lock = threading.Lock()

    def planned(self, request: tuple[Hashable, ...] | None, row_filter: object,
                plan: Callable[[], Scan]) -> Scan:
        """The plan of `request` (everything but the filter; None: not to be kept) and
        `row_filter`, made by `plan` if not remembered."""
        key = _key(request, row_filter) if request is not None else None
        if key is None:
            return plan()
        with self._lock:
            found = self._plans.get(key)
            if found is not None and _same_filter(found[0], row_filter):
                self._plans.move_to_end(key)
                return found[1]
        planned = plan()
        if len(planned.slices) <= MAX_SLICES:
            with self._lock:
                self._plans[key] = (row_filter, planned)
                self._plans.move_to_end(key)
                while len(self._plans) > MAX_PLANS:
                    self._plans.popitem(last=False)
        return planned


def _key(request: tuple[Hashable, ...], row_filter: object) -> Hashable | None:
    if row_filter is None or isinstance(row_filter, str):
        return (request, "text", row_filter)
    if isinstance(row_filter, pc.Expression):
        return (request, "arrow", str(row_filter))
    return None


def _same_filter(kept: object, row_filter: object) -> bool:
    if isinstance(kept, pc.Expression) and isinstance(row_filter, pc.Expression):
        return kept.equals(row_filter)
    return kept == row_filter
