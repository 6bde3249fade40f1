"""Planning with the metadata table's indexes: partitions and file slices a filter rules out are
skipped without opening a file.

- `partition_stats` (reads of the latest instant: the stats cover the partition's latest files):
  a partition whose columns' min/max/null counts make the filter false is not listed.
- `column_stats` (any read the metadata table serves: a file's stats never change): a slice is
  skipped when the filter is false on the union of its base and log files' ranges (a merged row
  takes each column from one of them, partial updates included).
- Key lookups (reads of the latest instant): a filter pinning the record key (`=`/`IN`) keeps the
  file groups `record_index` locates the keys in; a filter pinning a column with a secondary
  index keeps those of the record keys the index maps its values to; without a record index,
  slices without logs whose base file's bloom filter (`bloom_filters`) holds none of the keys.

Stats are used for a column only where its name has always meant the same column (under
schema-on-read: the same id in every schema version) and its values compare as the column's
type does (`shim.metadata.ranges`). Filters kept as Arrow expressions (without a shim expression)
are not evaluated on stats.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

import pyarrow as pa

from shim.bloom import DYNAMIC_V0
from shim.filters import Expr, conjuncts, referenced_columns
from shim.filters.expr import CompareOp, Comparison, InList
from shim.filters.partition import possible_truths
from shim.layout.slices import FileSlice
from shim.metadata.ranges import known_values, stats_range, union_range
from shim.metadata.records import BloomFilterEntry
from shim.metadata.table import BLOOM_FILTERS, COLUMN_STATS, PARTITION_STATS, RECORD_INDEX, MetadataTable
from shim.metadata.table_files import GuardedIndex
from shim.read.key_lookup import MAX_KEYS
from shim.read.table_schemas import TableSchemas


def stats_columns(expr: Expr | None, schemas: TableSchemas) -> dict[str, pa.DataType]:
    """The filter's top-level columns whose stats may be used, with their query types."""
    if expr is None:
        return {}
    found = {}
    for name in sorted(referenced_columns(expr)):
        index = schemas.full_schema.get_field_index(name)
        if index < 0 or pa.types.is_nested(schemas.full_schema.field(index).type):
            continue
        if schemas.schema_on_read and not _stable_name(name, schemas):
            continue
        found[name] = schemas.full_schema.field(index).type
    return found


def _stable_name(name: str, schemas: TableSchemas) -> bool:
    """Whether `name` meant the same column id in every schema version (no rename, no drop and
    re-add): files' stats under that name are then the column's."""
    field = schemas.internal.find_field_by_name(name)
    if field is None:
        return False
    for version in schemas.history:
        same_id = version.find_field(field.id)
        same_name = version.find_field_by_name(name)
        if (same_id is None) != (same_name is None) or (same_id is not None and same_id.name != name):
            return False
        if same_name is not None and same_name.id != field.id:
            return False
    return True


def prune_partitions(index: GuardedIndex, expr: Expr, partitions: Sequence[str],
                     columns: Mapping[str, pa.DataType]) -> list[str]:
    """The partitions whose `partition_stats` leave the filter possibly true."""
    if not columns or PARTITION_STATS not in index.enabled_partitions or not partitions:
        return list(partitions)
    stats = index.read(lambda mdt: mdt.partition_stats(columns, partitions))
    kept = []
    for partition in partitions:
        found = stats.get(partition, {})
        values = known_values((c, stats_range(found.get(c), t)) for c, t in columns.items())
        if True in possible_truths(expr, values):
            kept.append(partition)
    return kept


def prune_slices(index: GuardedIndex, expr: Expr, slices: Sequence[FileSlice],
                 columns: Mapping[str, pa.DataType]) -> list[FileSlice]:
    """The slices whose files' `column_stats` leave the filter possibly true."""
    if not columns or COLUMN_STATS not in index.enabled_partitions or not slices:
        return list(slices)
    files: dict[str, list[str]] = {}
    for file_slice in slices:
        files.setdefault(file_slice.partition_path, []).extend(_names(file_slice))
    stats = index.read(lambda mdt: mdt.column_stats(files, columns))
    kept = []
    for file_slice in slices:
        per_file = [stats.get((file_slice.partition_path, name), {}) for name in _names(file_slice)]
        values = known_values((c, union_range([stats_range(f.get(c), t) for f in per_file]))
                              for c, t in columns.items())
        if True in possible_truths(expr, values):
            kept.append(file_slice)
    return kept


def _names(file_slice: FileSlice) -> list[str]:
    base = [file_slice.base_file.name] if file_slice.base_file is not None else []
    return base + [log.name for log in file_slice.log_files]


def secondary_keys(expr: Expr | None, indexed: Mapping[str, str], schema: pa.Schema) -> dict[str, frozenset[str]]:
    """Index partition -> the values a filter pins a string column with a secondary index to
    (`=` or `IN` terms of the conjunction)."""
    if expr is None or not indexed:
        return {}
    pinned: dict[str, frozenset[str]] = {}
    for term in conjuncts(expr):
        if isinstance(term, Comparison) and term.op is CompareOp.EQ:
            column, values = term.column, [term.literal.value]
        elif isinstance(term, InList) and not term.negated:
            column, values = term.column, [v.value for v in term.values]
        else:
            continue
        name = column.path[0] if len(column.path) == 1 else ""
        if name not in indexed or name not in schema.names or not pa.types.is_string(schema.field(name).type):
            continue
        if not all(isinstance(v, str) for v in values) or len(values) > MAX_KEYS:
            continue
        partition = indexed[name]
        found = frozenset(str(v) for v in values)
        pinned[partition] = pinned[partition] & found if partition in pinned else found
    return pinned


def locate(index: GuardedIndex, slices: Sequence[FileSlice], record_keys: frozenset[str] | None,
           secondary: Mapping[str, frozenset[str]], *, record_index: bool = True
           ) -> tuple[list[FileSlice], tuple[str, ...]]:
    """The slices that may hold the records a key lookup pins, and the index partitions read
    (`record_index` False: a read of an earlier instant, which only bloom filters serve)."""
    built = index.enabled_partitions
    if record_index and RECORD_INDEX in built and (record_keys is not None or secondary):
        def lookup(mdt: MetadataTable) -> set[tuple[str, str]]:
            keys = record_keys
            for partition, values in secondary.items():
                found = frozenset(k for ks in mdt.secondary_index(partition, values).values() for k in ks)
                keys = found if keys is None else keys & found
            assert keys is not None
            return {(loc.partition, loc.file_id) for loc in mdt.record_locations(keys).values()}

        groups = index.read(lookup)
        used = (*secondary, RECORD_INDEX)
        return [s for s in slices if (s.partition_path, s.file_id) in groups], used
    if record_keys is not None and BLOOM_FILTERS in built:
        return _by_bloom_filters(index, slices, record_keys), (BLOOM_FILTERS,)
    return list(slices), ()


def _by_bloom_filters(index: GuardedIndex, slices: Sequence[FileSlice], keys: frozenset[str]) -> list[FileSlice]:
    """Slices with logs, and those whose base file's bloom filter may hold one of `keys`."""
    plain = [s for s in slices if not s.has_logs and s.base_file is not None]
    files: dict[str, list[str]] = {}
    for file_slice in plain:
        assert file_slice.base_file is not None
        files.setdefault(file_slice.partition_path, []).append(file_slice.base_file.name)
    blooms = index.read(lambda mdt: mdt.bloom_filters(files))
    wanted = sorted(keys)
    ruled_out = set()
    for file_slice in plain:
        assert file_slice.base_file is not None
        entry = blooms.get((file_slice.partition_path, file_slice.base_file.name))
        if entry is not None and _rules_out(entry, wanted):
            ruled_out.add((file_slice.partition_path, file_slice.file_id))
    return [s for s in slices if (s.partition_path, s.file_id) not in ruled_out]


def _rules_out(entry: BloomFilterEntry, keys: list[str]) -> bool:
    if entry.type != DYNAMIC_V0:
        return False  # the older SIMPLE kind is not read: the file is read
    try:
        bloom = entry.parse()
    except (ValueError, struct.error):
        return False
    return not bloom.might_contain_any(keys)
