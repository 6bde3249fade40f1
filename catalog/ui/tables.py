"""The registered tables as the UI lists them: name, type, version, location, last commit, an
estimate of their rows and the views the catalog publishes for them."""

from __future__ import annotations

from dataclasses import dataclass

import shim
from catalog.errors import redact_paths
from catalog.iceberg.names import NAMESPACE, RO_SUFFIX
from catalog.service import Catalog
from catalog.stream import error_document
from shim.errors import HudiShimError
from shim.read import parquet_footer


@dataclass(frozen=True, slots=True)
class LastCommit:
    time: str
    action: str
    completion_time: str | None
    operation: str | None


@dataclass(frozen=True, slots=True)
class TableRow:
    """One registered table; `error` (the API's error document) when it cannot be opened.

    Attributes:
        rows: the estimate of the rows a snapshot read returns: the rows its base files were
            written with (their write stats, or their footers) plus the records log writes
            inserted, less those they deleted.
        views: published views: DuckDB view names and Iceberg identifiers.
    """

    name: str
    location: str
    hudi_name: str | None = None
    table_type: str | None = None
    version: int | None = None
    last_commit: LastCommit | None = None
    rows: int | None = None
    file_slices: int | None = None
    views: tuple[str, ...] = ()
    error: dict[str, object] | None = None


def table_rows(catalog: Catalog) -> list[TableRow]:
    """Every registered table, in name order."""
    return [table_row(catalog, entry.name, entry.path) for entry in sorted(catalog.entries(), key=lambda e: e.name)]


def table_row(catalog: Catalog, name: str, location: str) -> TableRow:
    views = (name, name + RO_SUFFIX, f"{NAMESPACE}.{name}", f"{NAMESPACE}.{name}{RO_SUFFIX}")
    try:
        table = catalog.snapshot(name)
        latest = table.active_timeline.latest_write()
        last = None
        if latest is not None:
            operation = table.active_timeline.commit_metadata(latest).operation_type
            last = LastCommit(latest.requested_time, latest.action.value, latest.completion_time, operation)
        slices = table.file_slices()
        return TableRow(name, location, table.config.name, table.config.table_type.value, table.config.version,
                        last, estimate_rows(table, slices), len(slices), views)
    except HudiShimError as exc:
        document = error_document(exc)
        document["message"] = redact_paths(catalog, str(document["message"]))
        return TableRow(name, location, views=views, error=document)


def estimate_rows(table: shim.TableSnapshot, slices: list[shim.FileSlice]) -> int:
    """Rows a snapshot read returns, about: base file rows plus log inserts less log deletes."""
    timeline = table.active_timeline
    base_rows: dict[str, int] = {}
    log_changes: dict[str, int] = {}
    for instant in timeline.completed_writes():
        for stat in timeline.commit_metadata(instant).write_stats:
            if stat.file_name.startswith("."):
                log_changes[stat.file_name] = log_changes.get(stat.file_name, 0) + stat.num_inserts - stat.num_deletes
            else:
                base_rows[stat.file_name] = stat.num_writes
    total = 0
    for file_slice in slices:
        base = file_slice.base_file
        if base is not None:
            rows = base_rows.get(base.name)
            if rows is None:  # written by an archived commit: its footer says
                path = file_slice.base_path(table.path)
                rows = int(parquet_footer(table.storage, path).num_rows) if path is not None else 0
            total += rows
        total += sum(log_changes.get(log.name, 0) for log in file_slice.log_files)
    return max(total, 0)
