"""Archiving old instants, automatically after each commit or on demand.

    engines.spark.archive(path)                                        # Hudi's defaults: 20..30
    engines.spark.archive(path, {"hoodie.keep.min.commits": "12", "hoodie.keep.max.commits": "15"})

As Hudi does with `hoodie.archive.automatic` (on by default), every completed write is followed,
after its clean, by an archival (`shim.write.services.archive`) under the table guard: once more than
`hoodie.keep.max.commits` writes are on the active timeline, the oldest move to
`.hoodie/archived/` until `hoodie.keep.min.commits` remain. Reads as of archived commits still
work while their files are there; incremental windows starting before the active timeline fall
back to reading every file group.
"""

from __future__ import annotations

from collections.abc import Mapping

from shim.errors import TableNotFoundError
from shim.properties import TableConfig, read_table_config
from shim.storage import Storage, storage_and_options
from shim.write.service_options import ArchiveSettings, archive_settings
from shim.write.services.archive import ArchiveResult, archive_timeline
from shim.write.txn import after_commit, table_guard


def archive(path: str | Storage, options: Mapping[str, str] | None = None) -> ArchiveResult | None:
    """Archive the table at `path` now (`hoodie.keep.*` options; Hudi's defaults otherwise).

    Raises:
        TableNotFoundError: no Hudi table there.
        InvalidArgumentError: bad `hoodie.keep.*` values.
        UnsupportedFeatureError: a table version other than 6.
    """
    storage, options = storage_and_options(path, options)
    table_path = storage.root
    config = read_table_config(storage)
    if config is None:
        raise TableNotFoundError(f"no Hudi table at {table_path}", path=table_path)
    return run_archive(storage, config, archive_settings(options or {}, is_mor=config.is_mor))


def run_archive(storage: Storage, config: TableConfig, settings: ArchiveSettings) -> ArchiveResult | None:
    """Archive under the table guard."""
    with table_guard(storage):
        return archive_timeline(storage, config, settings)


def archive_after_commit(storage: Storage, config: TableConfig, settings: ArchiveSettings, instant: str) -> None:
    """The automatic archival after the commit `instant` completed (a failure names that commit)."""
    after_commit(storage, instant, "archiving the timeline", "the next write archives again",
                 lambda: run_archive(storage, config, settings))
