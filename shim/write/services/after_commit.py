"""The table services that follow a commit, in Hudi's order: compaction (merge-on-read), clean,
archival. `commit_write` calls `run_table_services` once its instant is completed."""

from __future__ import annotations

from shim.properties import TableConfig
from shim.storage import Storage
from shim.write.options import WriteOptions
from shim.write.services.archiving import archive_after_commit
from shim.write.services.cleaning import clean_after_commit
from shim.write.services.compaction import compact_after_commit


def run_table_services(storage: Storage, config: TableConfig, options: WriteOptions, instant: str) -> None:
    """Run what `options` asks for after the commit `instant` completed (a failure is a WriteError
    naming the commit, which stays completed)."""
    if config.is_mor:  # Hudi's order: table services (compaction) run before the clean
        compact_after_commit(storage, config, options, instant)
    if options.auto_clean:
        clean_after_commit(storage, config, options.clean, instant)
    if options.auto_archive:
        archive_after_commit(storage, config, options.archive, instant)
