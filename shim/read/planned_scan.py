"""A planned scan: the table snapshot, schemas, filter, merge and file slices a scan reads, and
where planning listed its files (`PlanReport`).

What reads a slice (`merged_slice`, `slice_state`) takes a `PlannedScan`;
`shim.planning.planner.build_scan` makes them, as the `Scan` (`shim.Scan`) that also reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from shim.layout.listing import ListingSource
from shim.layout.slices import FileSlice
from shim.read.base_files import BATCH_SIZE
from shim.read.file_plan import SchemaResolver
from shim.read.merge_keys import MergeSpec
from shim.read.row_filter import RowFilter
from shim.read.table_schemas import TableSchemas
from shim.scan_options import CorruptMode, ScanMode

if TYPE_CHECKING:
    from shim.read.snapshot_state import SnapshotState

MIN_LIMITED_BATCH = 1024
"""Smallest batch a limited scan reads (per-batch costs outweigh tiny batches)."""
BATCH_BYTES = 8 * 2**20
"""About how much memory one batch of fixed-width columns read from a file takes."""
MAX_BATCH_ROWS = 1 << 20


@dataclass(frozen=True, slots=True)
class PlannedScan:
    """A checked scan: the schemas, the filter and the file slices it reads (`request.Scan` reads it)."""

    table: SnapshotState
    mode: ScanMode
    read_instant: str | None
    schemas: TableSchemas
    output_schema: pa.Schema
    read_schema: pa.Schema
    row_filter: RowFilter | None
    merge: MergeSpec | None
    slices: list[FileSlice]
    commit_filter: pc.Expression | None
    resolver: SchemaResolver
    limit: int | None = None
    corrupt: CorruptMode = "error"
    report: PlanReport | None = None
    """Where the files were listed from and what the metadata table's indexes skipped (None:
    no files planned)."""

    @property
    def batch_size(self) -> int:
        """Rows per batch read from a file: `BATCH_SIZE`; more when every column read has a fixed
        width (about `BATCH_BYTES` of them), fewer when only a few rows are wanted."""
        if self.limit is not None:
            return max(MIN_LIMITED_BATCH, min(BATCH_SIZE, self.limit))
        partition_fields = set(self.table.config.partition_fields)  # mostly filled from paths: small
        widths = [4 if field.name in partition_fields else _fixed_width(field.type) for field in self.read_schema]
        if None in widths:
            return BATCH_SIZE  # text or nested values: their size is not known before reading
        return max(BATCH_SIZE, min(MAX_BATCH_ROWS, BATCH_BYTES // max(1, sum(w for w in widths if w))))

    @property
    def data_schema(self) -> pa.Schema:
        return self.schemas.data_schema

    @property
    def dictionaries(self) -> frozenset[str]:
        """Output columns returned dictionary-encoded."""
        return frozenset(f.name for f in self.output_schema if pa.types.is_dictionary(f.type))


def _fixed_width(data_type: pa.DataType) -> int | None:
    """Bytes a value of this type takes in memory (dictionary columns: their index), or None
    when values vary in size."""
    if pa.types.is_dictionary(data_type):
        return 4
    try:
        return max(1, data_type.bit_width // 8)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class PlanReport:
    """Where a plan listed its files and what the metadata table's indexes skipped.

    Attributes:
        listing: the metadata table or storage (and why).
        partitions: partitions planned after the partition path pruned them.
        slices: file slices planned, after the indexes pruned them.
        partitions_skipped: of the partitions, those ruled out by `partition_stats`.
        slices_skipped: file slices ruled out by `column_stats`.
        slices_located: file slices left out by a key lookup (record index, secondary index,
            bloom filters).
        indexes: the metadata table partitions planning read.
    """

    listing: ListingSource
    partitions: int = 0
    slices: int = 0
    partitions_skipped: int = 0
    slices_skipped: int = 0
    slices_located: int = 0
    indexes: tuple[str, ...] = ()
