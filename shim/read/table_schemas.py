"""The schemas of one read (`TableSchemas`) and a partition's values as its path spells them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from shim.read.file_plan import SchemaResolver
from shim.schema import InternalSchema


@dataclass(frozen=True, slots=True)
class PartitionValues:
    """A partition's column values as its path spells them: all that could be typed, and those
    the path spells exactly (what every row of the partition holds)."""

    typed: Mapping[str, object] | None
    exact: Mapping[str, object] | None


@dataclass(frozen=True, slots=True)
class TableSchemas:
    """Schemas of one read.

    Attributes:
        internal: the table's InternalSchema at the read instant, meta columns included.
        full_schema: `internal` as Arrow (meta columns first; column ids in field metadata).
        data_schema: `full_schema` without meta columns.
        resolver: per-file plans onto `internal`.
        schema_on_read: whether files are matched by column id.
        partition_values: per partition path, its typed column values (filled by scans as they
            prune partitions; None: the path does not spell them).
        stored: the InternalSchema as the table records it (`internal` without the partition
            columns readers add back to tables that drop them from files); None: the same.
    """

    internal: InternalSchema
    full_schema: pa.Schema
    data_schema: pa.Schema
    resolver: SchemaResolver
    schema_on_read: bool
    history: tuple[InternalSchema, ...] = ()
    partition_values: dict[str, PartitionValues] = field(default_factory=dict, compare=False)
    stored: InternalSchema | None = None

    def current_name(self, name: str) -> str | None:
        """The column's name now, found by id when it was renamed (key and ordering fields are
        recorded by name in the table config)."""
        if self.internal.find_field_by_name(name) is not None:
            return name
        for old in self.history:
            field = old.find_field_by_name(name)
            if field is not None:
                return self.internal.find_full_name(field.id)
        return None
