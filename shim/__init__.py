"""hudi-shim: read evolving Apache Hudi tables correctly, as Arrow.

    import shim
    t = shim.open_table("/data/trips")
    t.read(columns=["city", "fare"], filter="fare > 10").to_pandas()
    scan = t.plan(shim.ScanOptions(columns=["city"], as_of="2024-01-01"))  # a shim.Scan
    scan.slices, scan.output_schema, scan.file_schemas(), scan.reader()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shim.errors import (
    ColumnNotFoundError,
    CommittedDataError,
    ConcurrentWriteError,
    CorruptFileError,
    FileGoneError,
    HudiShimError,
    InstantNotFoundError,
    InvalidArgumentError,
    InvalidFilterError,
    InvalidTableError,
    SchemaEvolutionError,
    TableNotFoundError,
    UnsupportedFeatureError,
    WriteError,
)
from shim.scan_options import ScanOptions

if TYPE_CHECKING:
    from shim.layout.slices import FileSlice
    from shim.planning.file_schemas import ColumnMapping, FileSchema
    from shim.planning.planner import Scan
    from shim.planning.snapshot import TableSnapshot
    from shim.table import Table, open_table

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # The reader is imported on first use so `import shim.errors` (and friends) stays light.
    if name in ("Table", "open_table"):
        from shim import table

        return getattr(table, name)
    if name == "FileSlice":
        from shim.layout.slices import FileSlice

        return FileSlice
    if name == "Scan":
        from shim.planning.planner import Scan

        return Scan
    if name == "TableSnapshot":
        from shim.planning.snapshot import TableSnapshot

        return TableSnapshot
    if name in ("FileSchema", "ColumnMapping"):
        from shim.planning import file_schemas

        return getattr(file_schemas, name)
    raise AttributeError(f"module 'shim' has no attribute {name!r}")


__all__ = [
    "ColumnMapping",
    "ColumnNotFoundError",
    "CommittedDataError",
    "ConcurrentWriteError",
    "CorruptFileError",
    "FileGoneError",
    "FileSchema",
    "FileSlice",
    "HudiShimError",
    "InstantNotFoundError",
    "InvalidArgumentError",
    "InvalidFilterError",
    "InvalidTableError",
    "Scan",
    "ScanOptions",
    "SchemaEvolutionError",
    "Table",
    "TableNotFoundError",
    "TableSnapshot",
    "UnsupportedFeatureError",
    "WriteError",
    "open_table",
]
