"""From a scan request (mode, columns, filter, instant) to a planned scan, checked up front."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from shim.errors import ColumnNotFoundError, HudiShimError, InvalidArgumentError
from shim.filters import FilterLike, to_expr
from shim.layout.partitions import partition_values
from shim.layout.slices import FileSlice, file_slices_as_of
from shim.layout.table_schema import META_COLUMNS
from shim.metadata.table import COLUMN_STATS, PARTITION_STATS
from shim.metadata.table_files import ReadFiles
from shim.planning.index_pruning import (
    locate,
    prune_partitions,
    prune_slices,
    secondary_keys,
    stats_columns,
)
from shim.planning.partition_fill import (
    PartitionFillingResolver,
    exact_from_path,
    typed_partition_values,
)
from shim.planning.read_instant import COMMIT_TIME, check_time_travel, incremental_window, window_start
from shim.planning.timestamp_ranges import partition_ranges
from shim.read.base_files import BATCH_SIZE, dictionary_columns
from shim.read.damage import SkippedBlocks, corrupt_mode
from shim.read.dictionary_filter import as_dictionary_field
from shim.read.key_lookup import pinned_keys
from shim.read.merge_keys import merge_spec_for
from shim.read.planned_scan import PlannedScan, PlanReport
from shim.read.row_filter import RowFilter
from shim.read.scan_stream import ScanContext, scan_slices
from shim.read.table_schemas import PartitionValues, TableSchemas
from shim.read.time_limit import NO_LIMIT, TimeLimit
from shim.storage import Storage, join
from shim.timeline.instant import normalize_instant

if TYPE_CHECKING:
    from shim.metadata.records import ColumnStats
    from shim.planning.file_schemas import FileSchema
    from shim.read.snapshot_state import SnapshotState
    from shim.scan_options import ScanOptions


_MODES = {"snapshot": "snapshot", "read_optimized": "read_optimized", "read-optimized": "read_optimized", "ro": "read_optimized"}
class Scan(PlannedScan):
    """A planned scan that reads: its file schemas and its rows (public as `shim.Scan`)."""

    __slots__ = ()

    def file_schemas(self) -> list[FileSchema]:
        """For every base file and log data block this scan reads: the instant that wrote it, its
        schema version, and how each table column maps onto its columns (the name-mapped view)."""
        from shim.planning.file_schemas import file_schemas

        return file_schemas(self)

    def base_file_stats(self, columns: Iterable[str]) -> dict[str, dict[str, ColumnStats]]:
        """Base file path -> column -> its stats in the metadata table's `column_stats`, for this
        scan's base files and those of `columns` the stats hold; {} when the metadata table does
        not serve this scan or keeps no column stats (read the footers then)."""
        if self.report is None or not self.report.listing.metadata or self.read_instant is None:
            return {}
        index = self.table.files.for_read(self.read_instant).index
        bases = [s for s in self.slices if s.base_file is not None]
        if index is None or COLUMN_STATS not in index.enabled_partitions or not bases:
            return {}
        files: dict[str, list[str]] = {}
        for file_slice in bases:
            assert file_slice.base_file is not None
            files.setdefault(file_slice.partition_path, []).append(file_slice.base_file.name)
        wanted = list(dict.fromkeys(columns))
        found = index.read(lambda mdt: mdt.column_stats(files, wanted))
        return {join(self.table.path, partition, name): stats for (partition, name), stats in found.items()}

    def reader(self, skipped: SkippedBlocks | None = None, time_limit: TimeLimit = NO_LIMIT) -> pa.RecordBatchReader:
        """Stream the rows; corrupt log regions skipped are recorded in `skipped`; past
        `time_limit`, reading stops with `ScanLimitError`."""
        from shim.read.merged_slice import merged_slice_reader

        lookup = pinned_keys(self.row_filter.expr if self.row_filter else None, self.table.config,
                             self.schemas.full_schema)
        slice_reader = None
        if self.mode == "snapshot" and any(s.has_logs for s in self.slices):
            slice_reader = merged_slice_reader(self, lookup, skipped, time_limit)
        context = ScanContext(
            table_path=self.table.path,
            storage=self.table.storage,
            read_schema=self.read_schema,
            output_schema=self.output_schema,
            resolver=self.resolver,
            row_filter=self.row_filter,
            slice_reader=slice_reader,
            extra_filter=self.commit_filter,
            lookup_keys=lookup,
            batch_size=self.batch_size,
            preview=self.limit is not None and self.limit <= BATCH_SIZE,
            dictionaries=self.dictionaries,
            time_limit=time_limit,
            on_file_gone=self.table.files_gone,
        )
        if self.limit == 0:
            return pa.RecordBatchReader.from_batches(self.output_schema, iter(()))
        reader = scan_slices(context, self.slices)
        return reader if self.limit is None else _first_rows(reader, self.limit)


def build_scan(table: SnapshotState, options: ScanOptions, *, plan_files: bool = True) -> Scan:
    """Check the request's `options` against the table and plan the file slices to read
    (`plan_files=False`: the schemas only).

    With `dictionary_partitions`, top-level partition columns are returned dictionary-encoded;
    with `dictionary_strings`, those and the string columns the newest base file stores as
    dictionaries (see `stored_dictionaries`); with `limit`, the scan stops after that many rows.
    `corrupt` says what a damaged log block a completed commit wrote does (`shim.read.damage`).
    Files are listed from the metadata table where it can serve the read and `metadata` (True:
    the table's setting) allows, and pruned with its indexes (`shim.planning.index_pruning`).
    """
    mode, columns, row_filter, as_of = options.mode, options.columns, options.filter, options.as_of
    include_meta, commit_range, limit = options.include_meta, options.changes, options.limit
    dictionary_partitions, dictionary_strings = options.dictionary_partitions, options.dictionary_strings
    corrupt, metadata = options.corrupt, options.metadata
    corrupt = corrupt_mode(corrupt)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise InvalidArgumentError(f"limit must be a whole number of rows, 0 or more; got {limit!r}")
    scan_mode = _MODES.get(str(mode).lower())
    if scan_mode is None:
        raise InvalidArgumentError(f"unknown scan mode {mode!r}; use 'snapshot' or 'read_optimized'")
    if commit_range is not None:
        table = table.reaching(window_start(commit_range[0]))
    elif as_of is not None:
        table = table.reaching(normalize_instant(as_of))
    timeline = table.active_timeline
    commit_filter = None
    touched: frozenset[tuple[str, str]] | None = None
    if commit_range is not None:
        window = incremental_window(table, commit_range)
        read_instant, commit_filter, touched = window.read_instant, window.row_filter, window.file_groups
    else:
        requested = normalize_instant(as_of) if as_of is not None else None
        if requested is not None:
            check_time_travel(table, requested)
        read_instant = timeline.resolve_as_of(requested)
    schemas = table.schemas_as_of(read_instant)
    full_schema = schemas.full_schema
    output_schema = _output_schema(full_schema, schemas.data_schema, columns, include_meta)
    resolver = schemas.resolver
    if dictionary_partitions or dictionary_strings:
        output_schema = with_dictionary_partitions(output_schema, table.config.spelled_partition_fields)
        if isinstance(resolver, PartitionFillingResolver):
            resolver = resolver.with_dictionaries()
    bound = _bind_filter(row_filter, full_schema)
    merging = scan_mode == "snapshot" and table.config.is_mor
    merge = merge_spec_for(table.config, full_schema, schemas.current_name) if merging else None
    slices: list[FileSlice] = []
    report = None
    if plan_files and read_instant is not None:
        files = table.files.for_read(read_instant, metadata=metadata)
        partitions, bound = _pruned_partitions(table, files, schemas, bound, read_instant)
        planned = len(partitions)
        latest = read_instant == timeline.resolve_as_of(None)
        partitions = _by_partition_stats(files, bound, schemas, partitions, latest and scan_mode == "snapshot")
        slices = file_slices_as_of(table.storage, partitions, timeline, read_instant,
                                   groups=files.file_groups(partitions))
        table.committed.check_slices(slices, partitions, read_instant, table.path, logs=scan_mode == "snapshot")
        if scan_mode == "read_optimized":
            slices = [s.without_logs() for s in slices if s.base_file is not None]
        if touched is not None:
            slices = [s for s in slices if (s.partition_path, s.file_id) in touched]
        slices, report = _by_index(table, files, bound, schemas, slices, latest and scan_mode == "snapshot", planned,
                                   planned - len(partitions))
    needed = set(output_schema.names) | (set(bound.columns) if bound is not None else set())
    if commit_filter is not None:
        needed.add(COMMIT_TIME)
    if dictionary_strings:
        compared = (set(bound.columns) if bound is not None else set()) | set(merge.columns if merge else ())
        output_schema = with_dictionaries(output_schema, stored_dictionaries(table.storage, slices, output_schema,
                                                                             compared | {COMMIT_TIME}))
    read_schema = pa.schema([f for f in full_schema if f.name in needed])
    return Scan(
        table=table,
        mode=scan_mode,  # type: ignore[arg-type]
        read_instant=read_instant,
        schemas=schemas,
        output_schema=output_schema,
        read_schema=read_schema,
        row_filter=bound,
        merge=merge,
        slices=slices,
        commit_filter=commit_filter,
        resolver=resolver,
        limit=limit,
        corrupt=corrupt,
        report=report,
    )


def with_dictionary_partitions(schema: pa.Schema, partition_fields: Sequence[str]) -> pa.Schema:
    """`schema` with its top-level partition columns dictionary-encoded."""
    return with_dictionaries(schema, partition_fields)


def with_dictionaries(schema: pa.Schema, names: Collection[str]) -> pa.Schema:
    """`schema` with the top-level columns `names` dictionary-encoded."""
    return pa.schema([as_dictionary_field(f) if f.name in names else f for f in schema], metadata=schema.metadata)


def stored_dictionaries(storage: Storage, slices: Sequence[FileSlice], schema: pa.Schema,
                        compared: Collection[str]) -> list[str]:
    """The string columns of `schema`, other than the `compared` ones (filter, merge and commit
    columns, compared as plain strings), that the newest base file of `slices` stores as
    dictionary indices under the same name.

    Files of a table are mostly alike: returning such columns as dictionaries spares decoding
    them (rows of other files are encoded to match). Keys and other columns of distinct values
    are rarely stored so.
    """
    bases = [s for s in slices if s.base_file is not None]
    if not bases:
        return []
    newest = max(bases, key=lambda s: s.base_file.instant_time if s.base_file is not None else "")
    path = newest.base_path(storage.root)
    candidates = [f.name for f in schema if f.type == pa.string() and f.name not in compared]
    if path is None or not candidates:
        return []
    try:
        return dictionary_columns(storage, path, candidates)
    except HudiShimError:  # gone or unreadable: the read itself meets it, where it is handled
        return []


def _output_schema(
    full_schema: pa.Schema, data_schema: pa.Schema, columns: Sequence[str] | None, include_meta: bool
) -> pa.Schema:
    if columns is None:
        meta = [f for f in full_schema if f.name in META_COLUMNS] if include_meta else []
        return pa.schema(meta + list(data_schema))
    if isinstance(columns, str):
        raise InvalidArgumentError("columns must be a list of names, not a string")
    missing = [c for c in columns if full_schema.get_field_index(c) < 0]
    if missing:
        raise ColumnNotFoundError(
            f"unknown column {missing[0]!r}; the table has: {', '.join(data_schema.names)}"
            f" (and meta columns {', '.join(META_COLUMNS)})",
            column=missing[0],
        )
    if len(set(columns)) != len(columns):
        raise InvalidArgumentError(f"columns lists a name twice: {list(columns)}")
    return pa.schema([full_schema.field(c) for c in columns])


def _bind_filter(row_filter: FilterLike | pc.Expression, schema: pa.Schema) -> RowFilter | None:
    if isinstance(row_filter, pc.Expression):
        return RowFilter.bind(row_filter, schema)
    expr = to_expr(row_filter)
    return RowFilter.bind(expr, schema) if expr is not None else None


def _pruned_partitions(
    table: SnapshotState, files: ReadFiles, schemas: TableSchemas, row_filter: RowFilter | None, read_instant: str
) -> tuple[list[str], RowFilter | None]:
    """Partitions that may hold matching rows, and the filter left to apply to their rows.

    Partitions are those listed and those commits wrote into (a partition folder removed since is
    then planned empty, and its committed files are found missing). A filter term on partition
    columns alone that holds for every partition read is dropped: the partition path already
    guarantees it (where the path spells the values exactly).
    """
    partitions = files.partitions()
    if table.config.is_partitioned:
        partitions = sorted(set(partitions) | table.committed.partitions(read_instant))
    if row_filter is None or not table.config.is_partitioned:
        return partitions, row_filter
    known = [_partition_values(table, schemas, p) for p in partitions]
    kept = set(row_filter.partitions_to_read(partitions, [k.typed for k in known], schemas.data_schema))
    chosen = [p for p in partitions if p in kept]
    certain = [k.exact for p, k in zip(partitions, known) if p in kept]
    return chosen, row_filter.without_terms_true_in(certain)


def _by_partition_stats(files: ReadFiles, row_filter: RowFilter | None, schemas: TableSchemas,
                        partitions: list[str], latest: bool) -> list[str]:
    """The partitions the metadata table's partition stats leave, for a read of the latest instant."""
    expr = row_filter.expr if row_filter is not None else None
    if files.index is None or expr is None or not latest:
        return partitions
    return prune_partitions(files.index, expr, partitions, stats_columns(expr, schemas))


def _by_index(table: SnapshotState, files: ReadFiles, row_filter: RowFilter | None, schemas: TableSchemas,
              slices: list[FileSlice], latest: bool, partitions: int,
              partitions_skipped: int) -> tuple[list[FileSlice], PlanReport]:
    """The slices the metadata table's column stats and key indexes leave, and the report of
    what planning listed and skipped. `latest`: a snapshot read of the latest instant, which
    the record and secondary indexes (the latest location of every key) describe."""
    expr = row_filter.expr if row_filter is not None else None
    index = files.index
    if index is None or expr is None:
        return slices, PlanReport(files.source, partitions, len(slices))
    used = [PARTITION_STATS] if partitions_skipped else []
    before = len(slices)
    slices = prune_slices(index, expr, slices, stats_columns(expr, schemas))
    skipped = before - len(slices)
    if skipped:
        used.append(COLUMN_STATS)
    keys = pinned_keys(expr, table.config, schemas.full_schema)
    secondary = secondary_keys(expr, index.read(lambda mdt: mdt.secondary_indexes()), schemas.full_schema) \
        if latest else {}
    located = len(slices)
    if keys is not None or secondary:
        slices, lookups = locate(index, slices, keys, secondary, record_index=latest)
        used.extend(lookups)
    return slices, PlanReport(files.source, partitions, len(slices), partitions_skipped, skipped,
                              located - len(slices), tuple(used))


def _partition_values(table: SnapshotState, schemas: TableSchemas, partition: str) -> PartitionValues:
    """The partition's typed path values, computed once per table schema."""
    cached = schemas.partition_values.get(partition)
    if cached is not None:
        return cached
    raw = partition_values(partition, table.config)
    typed = typed_partition_values(raw, schemas.data_schema) if raw is not None else None
    # Date partitions (timestamp-based key generators) bound their source column instead.
    ranges = partition_ranges(partition, table.config, schemas.data_schema) if raw is None else {}
    found = PartitionValues(
        {k: v.as_py() for k, v in typed.items() if v is not None} if typed is not None else (ranges or None),
        None if typed is None else {
            k: v.as_py() for k, v in typed.items() if v is not None and v.is_valid and exact_from_path(v.type)},
    )
    schemas.partition_values[partition] = found
    return found



def _first_rows(reader: pa.RecordBatchReader, limit: int) -> pa.RecordBatchReader:
    """`reader` cut after `limit` rows; the scan behind it stops there."""

    def rows() -> Iterator[pa.RecordBatch]:
        taken = 0
        with reader:
            for batch in reader:
                batch = batch.slice(0, limit - taken)
                taken += batch.num_rows
                yield batch
                if taken >= limit:
                    return

    return pa.RecordBatchReader.from_batches(reader.schema, rows())
