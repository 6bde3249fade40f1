"""How to read one file: the per-file plan that maps a file's columns onto the query's columns.

A `SchemaResolver` gives, for a base file or a log block (identified by the instant that wrote
it), a `FilePlan`: which file columns to read and how to turn them into the requested query
columns. Tables without schema-on-read match columns by name; schema-on-read tables match them
by column id (see `shim.schema`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

import pyarrow as pa


class FilePlan(Protocol):
    """Reads a file's columns into query columns."""

    @property
    def read_columns(self) -> tuple[str, ...]:
        """Top-level file columns to read (by the file's own names)."""
        ...

    @property
    def passthrough(self) -> Mapping[str, str]:
        """Query column -> file column, for columns read unchanged (same values, same type)."""
        ...

    @property
    def present(self) -> frozenset[str]:
        """Query columns the file holds (or its location gives), as opposed to filled with nulls."""
        ...

    def apply(self, data: pa.RecordBatch) -> pa.RecordBatch:
        """Turn a batch of the file's columns into the requested query columns, in order."""
        ...


class SchemaResolver(Protocol):
    """Builds the plan for one file written at `instant`."""

    def plan(self, *, instant: str, file_schema: pa.Schema, columns: Sequence[str], path: str) -> FilePlan:
        """Plan for reading `columns` (query names) from a file whose Arrow schema is `file_schema`."""
        ...


@runtime_checkable
class PartitionConstants(Protocol):
    """A resolver that fills the partition columns with the values a slice's partition path gives
    (`shim.planning.partition_fill`), as dictionary arrays when `dictionary`."""

    dictionary: bool

    def fill(self, batch: pa.RecordBatch, partition: str) -> pa.RecordBatch:
        """`batch` with its partition columns set to the partition's values."""
        ...


def null_batch_columns(schema: pa.Schema, num_rows: int) -> list[pa.Array]:
    """Null arrays for every field of `schema`."""
    return [pa.nulls(num_rows, type=field.type) for field in schema]
