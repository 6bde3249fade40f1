"""Cleaning old file versions, automatically after each commit or on demand.

    engines.spark.clean(path)                                   # Hudi's defaults
    engines.spark.clean(path, {"hoodie.cleaner.commits.retained": "3"})

As Hudi does with `hoodie.clean.automatic` (on by default), every completed write is followed by a
clean (`shim.write.services.clean`) under the table guard, so no other writer starts meanwhile. Time travel
reaches back to the clean's earliest retained commit.
"""

from __future__ import annotations

from collections.abc import Mapping

from shim.errors import TableNotFoundError
from shim.properties import TableConfig, read_table_config
from shim.storage import Storage, storage_and_options
from shim.write.service_options import CleanSettings, clean_settings
from shim.write.services.clean import CleanResult, clean_table
from shim.write.txn import after_commit, table_guard


def clean(path: str | Storage, options: Mapping[str, str] | None = None) -> list[CleanResult]:
    """Clean the table at `path` now (`hoodie.cleaner.*` options; Hudi's defaults otherwise).

    Raises:
        TableNotFoundError: no Hudi table there.
        UnsupportedFeatureError: a cleaner policy this cleaner does not implement.
    """
    storage, options = storage_and_options(path, options)
    table_path = storage.root
    config = read_table_config(storage)
    if config is None:
        raise TableNotFoundError(f"no Hudi table at {table_path}", path=table_path)
    return run_clean(storage, config, clean_settings(options or {}))


def run_clean(storage: Storage, config: TableConfig, settings: CleanSettings) -> list[CleanResult]:
    """Clean under the table guard."""
    with table_guard(storage):
        return clean_table(storage, config, settings)


def clean_after_commit(storage: Storage, config: TableConfig, settings: CleanSettings, instant: str) -> None:
    """The automatic clean after the commit `instant` completed (a failure names that commit)."""
    after_commit(storage, instant, "the clean", "the next write cleans again",
                 lambda: run_clean(storage, config, settings))
