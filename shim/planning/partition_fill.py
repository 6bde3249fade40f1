"""Partition columns taken from the partition path instead of the data files.

Two cases:
- tables written with `hoodie.datasource.write.drop.partition.columns=true` leave the partition
  columns out of the data files; readers must recover them from the path;
- in every other table a partition column holds, in each file, exactly the value its path spells
  when the path maps one-to-one onto the partition fields and the type is text, integer or
  boolean (the path is the value's text): then reading a constant from the path is exact and
  spares decoding the column. The default partition (null or empty) is still read from files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from shim.errors import UnsupportedFeatureError
from shim.layout.partitions import partition_values
from shim.properties import TableConfig
from shim.read.cache import ByteBoundedCache
from shim.read.dictionary_filter import DICTIONARY_INDEX, as_dictionary_field
from shim.read.file_plan import FilePlan, SchemaResolver

CONSTANT_CACHE_BYTES = 64 * 1024**2
"""Memory for partition-value columns kept between scans (built once per value, then sliced)."""


class ConstantColumns:
    """Columns repeating one value, each built once for the largest batch seen and sliced after.

    As dictionary arrays they are one value and zero indices (shared by every value), which
    engines such as DuckDB ingest without decoding the value once per row.
    """

    def __init__(self, capacity: int = CONSTANT_CACHE_BYTES) -> None:
        self._cache: ByteBoundedCache[pa.Array] = ByteBoundedCache(capacity)

    def column(self, value: pa.Scalar, rows: int, *, dictionary: bool = False) -> pa.Array:
        if not dictionary:
            return self._built((str(value.type), value.as_py()), lambda n: pa.repeat(value, n), rows)

        def encoded(n: int) -> pa.Array:
            indices = self._built(("dictionary-indices",), lambda m: pa.repeat(pa.scalar(0, DICTIONARY_INDEX), m), n)
            return pa.DictionaryArray.from_arrays(indices, pa.array([value.as_py()], value.type))

        # Each value's array shares the one indices buffer: count only its dictionary.
        return self._built(("dictionary", str(value.type), value.as_py()), encoded, rows,
                           size=lambda array: array.dictionary.nbytes + 64)

    def _built(self, key: tuple[object, ...], build: Callable[[int], pa.Array], rows: int,
               size: Callable[[pa.Array], int] = lambda array: array.nbytes) -> pa.Array:
        """The cached array under `key` (built for at least `rows` rows), cut to `rows`."""
        built = self._cache.get(key)
        if built is None or len(built) < rows:
            built = build(rows)
            self._cache.put(key, built, size(built))
        return built.slice(0, rows)




def _spelled_exactly(value: pa.Scalar | None) -> bool:
    """Whether a typed path value is what every row of the partition holds."""
    return value is not None and value.is_valid and exact_from_path(value.type)


def exact_from_path(data_type: pa.DataType) -> bool:
    """Whether a partition path spells values of this type exactly."""
    return (
        pa.types.is_string(data_type)
        or pa.types.is_large_string(data_type)
        or pa.types.is_integer(data_type)
        or pa.types.is_boolean(data_type)
    )


def typed_partition_values(
    raw: Mapping[str, str | None], schema: pa.Schema
) -> dict[str, pa.Scalar | None]:
    """Path values cast to their column types (None: the value cannot be typed from the path)."""
    typed: dict[str, pa.Scalar | None] = {}
    for name, text in raw.items():
        index = schema.get_field_index(name)
        if index < 0:
            continue
        target = schema.field(index).type
        if text is None:
            typed[name] = pa.scalar(None, target)
            continue
        try:
            typed[name] = pa.scalar(text, pa.string()).cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            typed[name] = None
    return typed


@dataclass(frozen=True, slots=True)
class _FilledPlan:
    inner: FilePlan
    columns: tuple[str, ...]
    constants: Mapping[str, pa.Field]
    values: Mapping[str, pa.Scalar]
    repeated: ConstantColumns
    dictionary: bool

    @property
    def read_columns(self) -> tuple[str, ...]:
        return self.inner.read_columns

    @property
    def passthrough(self) -> Mapping[str, str]:
        return self.inner.passthrough

    @property
    def present(self) -> frozenset[str]:
        return self.inner.present | frozenset(self.constants)

    def apply(self, data: pa.RecordBatch) -> pa.RecordBatch:
        batch = self.inner.apply(data)
        arrays, fields = [], []
        for name in self.columns:
            if name in self.constants:
                fields.append(self.constants[name])
                arrays.append(self.repeated.column(self.values[name], data.num_rows, dictionary=self.dictionary))
            else:
                fields.append(batch.schema.field(name))
                arrays.append(batch.column(name))
        return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


class PartitionFillingResolver:
    """Wraps a resolver: partition columns come from the file's partition path where that is exact
    (or where the files do not hold them at all). With `dictionary`, those columns are
    dictionary arrays (one value, zero indices)."""

    def __init__(self, inner: SchemaResolver, table_path: str, config: TableConfig, schema: pa.Schema,
                 *, dictionary: bool = False) -> None:
        self.inner = inner
        self.table_path = table_path
        self.config = config
        self.schema = schema
        self.dictionary = dictionary
        self._cache: dict[str, dict[str, pa.Scalar | None] | None] = {}
        self._constants = ConstantColumns()

    def with_dictionaries(self) -> PartitionFillingResolver:
        """This resolver building its constants as dictionary arrays (sharing its caches)."""
        sibling = PartitionFillingResolver(self.inner, self.table_path, self.config, self.schema, dictionary=True)
        sibling._cache, sibling._constants = self._cache, self._constants
        return sibling

    def plan(self, *, instant: str, file_schema: pa.Schema, columns: Sequence[str], path: str) -> FilePlan:
        candidates = [c for c in self.config.partition_fields if c in columns]
        if not candidates:
            return self.inner.plan(instant=instant, file_schema=file_schema, columns=columns, path=path)
        values = self._values(path)
        constants: dict[str, pa.Scalar] = {}
        for name in candidates:
            absent = file_schema.get_field_index(name) < 0
            value = values.get(name) if values is not None else None
            if absent and self.config.drop_partition_columns:
                if value is None:
                    raise UnsupportedFeatureError(
                        f"{path}: partition column {name!r} was dropped from the data files and the partition "
                        f"path does not hold its value (key generator {self.config.key_generator})",
                        feature="drop-partition-columns",
                        path=path,
                        column=name,
                    )
                constants[name] = value
            elif _spelled_exactly(value):
                constants[name] = value
        if not constants:
            return self.inner.plan(instant=instant, file_schema=file_schema, columns=columns, path=path)
        rest = [c for c in columns if c not in constants]
        inner = self.inner.plan(instant=instant, file_schema=file_schema, columns=rest, path=path)
        fields = {name: self.schema.field(name) for name in constants}
        if self.dictionary:
            fields = {name: as_dictionary_field(f) for name, f in fields.items()}
        return _FilledPlan(inner, tuple(columns), fields, constants, self._constants, self.dictionary)

    def fill(self, batch: pa.RecordBatch, partition: str) -> pa.RecordBatch:
        """`batch` (query columns of rows stored in `partition`) with the partition columns the path
        spells exactly replaced by its constants (as dictionaries when this resolver builds them)."""
        values = self._partition_values(partition)
        if values is None:
            return batch
        for name in self.config.partition_fields:
            index = batch.schema.get_field_index(name)
            value = values.get(name)
            if index < 0 or not _spelled_exactly(value):
                continue
            assert value is not None
            field = batch.schema.field(index)
            if self.dictionary:
                field = as_dictionary_field(field)
            batch = batch.set_column(index, field, self._constants.column(value, batch.num_rows,
                                                                          dictionary=self.dictionary))
        return batch

    def _values(self, path: str) -> dict[str, pa.Scalar | None] | None:
        file_path = path.split("@", 1)[0]
        partition = os.path.relpath(os.path.dirname(file_path), self.table_path).replace(os.sep, "/")
        return self._partition_values("" if partition == "." else partition)

    def _partition_values(self, partition: str) -> dict[str, pa.Scalar | None] | None:
        if partition not in self._cache:
            raw = partition_values(partition, self.config)
            self._cache[partition] = None if raw is None else typed_partition_values(raw, self.schema)
        return self._cache[partition]
