"""The Iceberg partition spec of a published view: Hudi's partition columns as identity partitions.

A Hudi partition path spells its partition columns' values (`city=berlin`, or `berlin` with the
partition fields in the table's config). Where every slice's path spells each of them exactly (a
string, integer or boolean column of the view, never null), the Iceberg table is partitioned by
identity on those columns, and every data and delete file carries its slice's values. Iceberg
readers then skip the files of other partitions, data and deletes alike, from the manifests
alone (`WHERE city = 'berlin'` opens one partition's files). Otherwise (a date path from a
timestamp-based key generator, a renamed partition column, a null partition) the table is
unpartitioned: nothing wrong is promised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from catalog.iceberg.metrics import single_value
from catalog.iceberg.types import iceberg_id, primitive_name
from shim.layout.partitions import partition_values
from shim.planning import exact_from_path, typed_partition_values
from shim.properties import TableConfig

FIRST_PARTITION_FIELD_ID = 1000  # Iceberg numbers partition fields from 1000
UNPARTITIONED_LAST_ID = FIRST_PARTITION_FIELD_ID - 1
_AVRO_TYPES = {"string": "string", "int": "int", "long": "long", "boolean": "boolean"}
PartitionValue = str | int  # identity partition values: strings, integers and booleans


@dataclass(frozen=True, slots=True)
class PartitionField:
    """An identity partition field on a view column."""

    name: str
    source_id: int
    field_id: int
    iceberg_type: str


@dataclass(frozen=True, slots=True)
class PartitionSpec:
    """The view's partition fields (none: unpartitioned) and each partition path's values."""

    fields: tuple[PartitionField, ...]
    values: Mapping[str, tuple[PartitionValue, ...]]

    def to_json(self) -> dict[str, Any]:
        """The spec as Iceberg table metadata lists it (spec id 0)."""
        return {"spec-id": 0, "fields": [
            {"name": f.name, "transform": "identity", "source-id": f.source_id, "field-id": f.field_id}
            for f in self.fields]}

    @property
    def last_partition_id(self) -> int:
        return max((f.field_id for f in self.fields), default=UNPARTITIONED_LAST_ID)

    def avro_record(self) -> dict[str, Any]:
        """The Avro type of a manifest entry's `partition` struct (field 102)."""
        return {"type": "record", "name": "r102", "fields": [
            {"name": f.name, "type": ["null", _AVRO_TYPES[f.iceberg_type]], "default": None, "field-id": f.field_id}
            for f in self.fields]}

    def record(self, partition_path: str) -> dict[str, PartitionValue]:
        """The `partition` struct of a file of this partition path."""
        if not self.fields:
            return {}
        return {f.name: value for f, value in zip(self.fields, self.values[partition_path], strict=True)}

    def summaries(self, partition_paths: Sequence[str]) -> list[dict[str, Any]]:
        """Per partition field, the bounds of the values the given paths hold (a manifest list's
        `partitions`, letting readers skip whole manifests)."""
        out = []
        for index, field in enumerate(self.fields):
            held = [self.values[p][index] for p in partition_paths]
            out.append({"contains_null": False, "contains_nan": False,
                        "lower_bound": single_value(min(held), field.iceberg_type) if held else None,
                        "upper_bound": single_value(max(held), field.iceberg_type) if held else None})
        return out


def partition_spec(config: TableConfig, schema: pa.Schema, partition_paths: Sequence[str]) -> PartitionSpec:
    """Identity partitions on the table's partition columns, when every path spells them exactly."""
    unpartitioned = PartitionSpec((), {})
    names = list(config.partition_fields)
    if not config.is_partitioned or not names or any(schema.get_field_index(n) < 0 for n in names):
        return unpartitioned
    fields = []
    for offset, name in enumerate(names):
        column = schema.field(name)
        if not exact_from_path(column.type):
            return unpartitioned
        kind = primitive_name(column.type, name)
        if kind not in _AVRO_TYPES:
            return unpartitioned
        fields.append(PartitionField(name, iceberg_id(column, name), FIRST_PARTITION_FIELD_ID + offset, kind))
    values: dict[str, tuple[PartitionValue, ...]] = {}
    for path in dict.fromkeys(partition_paths):
        raw = partition_values(path, config)
        if raw is None:
            return unpartitioned
        typed = typed_partition_values(raw, schema)
        row: list[PartitionValue] = []
        for name in names:
            value = typed.get(name)
            if value is None or not value.is_valid:
                return unpartitioned
            row.append(value.as_py())
        values[path] = tuple(row)
    return PartitionSpec(tuple(fields), values)
