"""Table services: clean, archive, compaction and the rollback of failed writes, with their plans,
triggers and options, and the one entry point run after every commit.

    import shim.services
    shim.services.clean(path)                 # hoodie.cleaner.* options, Hudi's defaults otherwise
    shim.services.archive(path)               # hoodie.keep.min/max.commits
    shim.services.compact(path)               # merge-on-read: logs merged into new base files
    shim.services.schedule_compaction(path)   # the plan only

Modules: `clean_plan` / `clean` (what to delete, deleting it), `archive_plan` / `archive` (which
instants leave the active timeline, moving them), `compaction_trigger` / `compaction`, `rollback`
(of failed writes), `options` (the services' `hoodie.*` options), `cleaning` / `archiving` (on
demand and after a commit, under the table guard), `after_commit` (`run_table_services`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shim.services.after_commit import run_table_services
    from shim.services.archiving import archive
    from shim.services.cleaning import clean
    from shim.services.compaction import compact, schedule_compaction
    from shim.services.rollback import rollback_failed_write

_LAZY = {
    "archive": "shim.services.archiving",
    "clean": "shim.services.cleaning",
    "compact": "shim.services.compaction",
    "schedule_compaction": "shim.services.compaction",
    "rollback_failed_write": "shim.services.rollback",
    "run_table_services": "shim.services.after_commit",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'shim.services' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["archive", "clean", "compact", "rollback_failed_write", "run_table_services", "schedule_compaction"]
