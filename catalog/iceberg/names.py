"""The Iceberg tables the catalog publishes and the registered tables and views they stand for.

One namespace, `default`, holds every registered table twice: `<table>` (the snapshot view) and
`<table>_ro` (read-optimized), the names DuckDB views use. A registered table whose own name
ends in `_ro` keeps it.
"""

from __future__ import annotations

from catalog.service import Catalog
from shim.errors import TableNotFoundError

NAMESPACE = "default"
RO_SUFFIX = "_ro"


def iceberg_names(catalog: Catalog) -> list[str]:
    """The Iceberg tables: every registered table and its read-optimized twin."""
    registered = catalog.names()
    names = set(registered)
    names.update(name + RO_SUFFIX for name in registered)
    return sorted(names)


def resolve(catalog: Catalog, table: str) -> tuple[str, str]:
    """The registered table and view an Iceberg table name stands for (a table added under the
    warehouse since it was last searched is found)."""
    candidates = [(table, "snapshot")]
    if table.endswith(RO_SUFFIX):
        candidates.append((table[: -len(RO_SUFFIX)], "read_optimized"))
    for name, view in candidates:
        try:
            catalog.handle(name)
        except TableNotFoundError:
            continue
        return name, view
    raise TableNotFoundError(f"no table {table!r} in namespace {NAMESPACE!r}")
