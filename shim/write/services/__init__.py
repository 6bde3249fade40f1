"""Table services: clean, archive and compaction, with their plans and triggers, and the one
entry point run after every commit. They build on the writer's core (`shim.write`: transactions,
data files, the rollback of failed writes, the services' settings in `service_options`) and are
used by its entry modules (`job` runs `run_table_services` after a commit), never the reverse.

    import shim.write.services
    shim.write.services.clean(path)                 # hoodie.cleaner.* options, Hudi's defaults otherwise
    shim.write.services.archive(path)               # hoodie.keep.min/max.commits
    shim.write.services.compact(path)               # merge-on-read: logs merged into new base files
    shim.write.services.schedule_compaction(path)   # the plan only

Modules: `clean_plan` / `clean` (what to delete, deleting it), `archive_plan` / `archive` (which
instants leave the active timeline, moving them), `compaction_trigger` / `compaction`, `cleaning` /
`archiving` (on demand and after a commit, under the table guard), `after_commit`
(`run_table_services`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shim.write.services.after_commit import run_table_services
    from shim.write.services.archiving import archive
    from shim.write.services.cleaning import clean
    from shim.write.services.compaction import compact, schedule_compaction

_LAZY = {
    "archive": "shim.write.services.archiving",
    "clean": "shim.write.services.cleaning",
    "compact": "shim.write.services.compaction",
    "schedule_compaction": "shim.write.services.compaction",
    "run_table_services": "shim.write.services.after_commit",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'shim.write.services' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["archive", "clean", "compact", "run_table_services", "schedule_compaction"]
