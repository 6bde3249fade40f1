"""Scans: turn planned file slices into one stream of Arrow record batches."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from shim.errors import FileGoneError
from shim.layout.slices import FileSlice
from shim.read.base_files import BATCH_SIZE, read_file_schema, scan_parquet
from shim.read.executor import Producer, run_parallel
from shim.read.file_plan import SchemaResolver
from shim.read.key_lookup import files_with_any
from shim.read.row_filter import RowFilter
from shim.read.time_limit import NO_LIMIT, TimeLimit
from shim.storage import Storage


@dataclass(frozen=True, slots=True)
class ScanContext:
    """Everything a scan needs, resolved once before any file is read.

    Attributes:
        table_path: table root folder.
        storage: the table's storage.
        read_schema: columns read from files (query names and types): output, filter and merge columns.
        output_schema: columns the caller receives, in order.
        resolver: per-file plans (by name or by column id).
        row_filter: the bound filter, re-applied to every merged batch.
        slice_reader: reads one file slice that has log files (snapshot merge); None for
            read-optimized scans.
        extra_filter: a further condition on rows (an incremental read's commit times).
        lookup_keys: the record keys the filter pins rows to (base files whose bloom filter holds
            none of them are not read), or None.
        batch_size: rows per batch read from a base file.
        preview: only a few rows are wanted: file slices are read one after another, one batch at
            a time (no read-ahead), so the first rows come soonest and little is read past them.
        dictionaries: output columns returned dictionary-encoded, kept as files store them where
            they are read unchanged.
        time_limit: checked between batches, in the producers too (a filter that keeps no row
            still stops the scan in time).
        on_file_gone: called when a file of the plan is found gone (`FileGoneError`).
    """

    table_path: str
    storage: Storage
    read_schema: pa.Schema
    output_schema: pa.Schema
    resolver: SchemaResolver
    row_filter: RowFilter | None = None
    slice_reader: Callable[[FileSlice], Iterator[pa.RecordBatch]] | None = None
    extra_filter: pc.Expression | None = field(default=None)
    lookup_keys: frozenset[str] | None = None
    batch_size: int = BATCH_SIZE
    preview: bool = False
    dictionaries: frozenset[str] = frozenset()
    time_limit: TimeLimit = NO_LIMIT
    on_file_gone: Callable[[], None] | None = None


def scan_slices(context: ScanContext, slices: Sequence[FileSlice]) -> pa.RecordBatchReader:
    """Stream the rows of `slices` as one RecordBatchReader with `context.output_schema`."""
    producers: list[Producer[pa.RecordBatch]] = []
    plain: dict[tuple[str, str], list[FileSlice]] = defaultdict(list)
    for file_slice in slices:
        if file_slice.has_logs and context.slice_reader is not None:
            producers.append(_merge_producer(context, file_slice))
        elif file_slice.base_file is not None:
            # One plan per group: files of one commit in one partition share schema and path values.
            plain[(file_slice.base_file.instant_time, file_slice.partition_path)].append(file_slice)
    plain_producers = [_plain_producer(context, group) for _, group in sorted(plain.items())]
    if context.preview:
        # A few rows: files that need no merging first, one producer at a time.
        batches = run_parallel(plain_producers + producers, workers=1)
    else:
        # Merges are CPU-heavy Python work and plain scans are multi-threaded inside Arrow: start
        # merges first so both kinds overlap.
        batches = run_parallel(producers + plain_producers)
    return pa.RecordBatchReader.from_batches(context.output_schema, _finish(context, batches))


def _plain_producer(context: ScanContext, group: list[FileSlice]) -> Producer[pa.RecordBatch]:
    def produce() -> Iterator[pa.RecordBatch]:
        paths = [path for path in (s.base_path(context.table_path) for s in group) if path is not None]
        if context.lookup_keys is not None:
            paths = files_with_any(context.storage, paths, context.lookup_keys)
        if not paths:
            return
        first = paths[0]
        assert group[0].base_file is not None
        file_schema = read_file_schema(context.storage, first)
        plan = context.resolver.plan(
            instant=group[0].base_file.instant_time,
            file_schema=file_schema,
            columns=context.read_schema.names,
            path=first,
        )
        pushdown = context.row_filter.pushdown(plan.passthrough, context.read_schema) if context.row_filter else None
        yield from scan_parquet(context.storage, paths, file_schema, plan, pushdown, batch_size=context.batch_size,
                                ahead=not context.preview, dictionaries=context.dictionaries,
                                time_limit=context.time_limit)

    return produce


def _merge_producer(context: ScanContext, file_slice: FileSlice) -> Producer[pa.RecordBatch]:
    def produce() -> Iterator[pa.RecordBatch]:
        assert context.slice_reader is not None
        yield from context.slice_reader(file_slice)

    return produce


def _finish(context: ScanContext, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    expression = context.row_filter.expression if context.row_filter is not None else None
    if context.extra_filter is not None:
        expression = context.extra_filter if expression is None else expression & context.extra_filter
    names = context.output_schema.names
    try:
        for batch in batches:
            context.time_limit.check()
            if expression is not None:
                batch = batch.filter(expression)
            if batch.num_rows == 0:
                continue
            if not names:
                yield batch.select([])  # no columns asked for (count queries): rows still count
                continue
            yield pa.RecordBatch.from_arrays(
                [_as_type(batch.column(n), f.type) for n, f in zip(names, context.output_schema)],
                schema=context.output_schema)
    except FileGoneError:
        if context.on_file_gone is not None:
            context.on_file_gone()
        raise


def _as_type(column: pa.Array, data_type: pa.DataType) -> pa.Array:
    """`column` as the output type; only dictionary encoding can differ (values read from files
    rather than filled from partition paths)."""
    if column.type == data_type:
        return column
    if pa.types.is_dictionary(data_type) and not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    return column.cast(data_type)
