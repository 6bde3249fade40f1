"""Reading base files: projection, filter pushdown (row-group pruning) and the file plan.

Base files are Parquet, or Lance on tables that say `hoodie.table.base.file.format=LANCE`: every
entry point here takes either and hands a `.lance` file to `shim.read.lance_files` (no row groups,
statistics or dictionary pages there; its bloom filter sits in the same key-value metadata).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from shim.errors import UNDECODABLE, CorruptFileError, file_gone, is_missing_file
from shim.read import lance_files
from shim.read.dictionary_filter import as_dictionary_field, dictionary_mask, only_column
from shim.read.file_plan import FilePlan
from shim.read.lance_files import LanceFooter, is_lance
from shim.read.time_limit import NO_LIMIT, TimeLimit
from shim.storage import Storage

BATCH_SIZE = 131_072
# A dictionary-encoded column chunk storing at most this many bytes per value holds mostly
# indices (plain strings take at least 4 bytes each, their length).
_DICTIONARY_BYTES_PER_VALUE = 3.0
# Column bytes (uncompressed) of a one-row-group file read in one call instead of streamed.
_AT_ONCE_BYTES = 16 << 20


def read_file_schema(storage: Storage, path: str) -> pa.Schema:
    """Arrow schema stored in a base file (a Parquet file's footer, a Lance file's schema)."""
    if is_lance(path):
        return lance_files.lance_schema(storage, path)
    return _footer(storage, path)[1]


def parquet_footer(storage: Storage, path: str) -> pq.FileMetaData | LanceFooter:
    """The file's parsed footer (cached per file version); of a Lance file, what it has of one:
    its row count and key-value metadata (`LanceFooter`, no row groups)."""
    if is_lance(path):
        return lance_files.lance_footer(storage, path)
    return _footer(storage, path)[0]


def base_file_rows(storage: Storage, path: str) -> int:
    """Rows in a base file, from its footer."""
    return int(parquet_footer(storage, path).num_rows)


def dictionary_columns(storage: Storage, path: str, columns: Sequence[str]) -> list[str]:
    """The string and binary columns among `columns` that `path` stores as dictionary indices in
    every row group.

    Read as dictionaries and decoded in one pass (a take from the dictionary) they cost a
    fraction of Parquet's value-by-value decoding; the values are the same. None in a Lance file
    (pylance decodes its columns to their plain types).
    """
    if is_lance(path):
        return []
    stored = _footer(storage, path)[2]
    return [name for name in columns if name in stored]


def _footer(storage: Storage, path: str) -> tuple[pq.FileMetaData, pa.Schema, frozenset[str]]:
    """The file's footer, Arrow schema and dictionary-stored string columns, parsed once per file
    version (size and mtime)."""
    try:
        return _parsed_footer(storage, path, *storage.file_version(path))
    except UNDECODABLE as exc:
        if is_missing_file(exc):
            raise file_gone(path) from exc
        raise CorruptFileError(f"cannot read Parquet footer of {path}: {exc}", path=path) from exc


@functools.lru_cache(maxsize=256)
def _parsed_footer(storage: Storage, path: str, size: int, mtime_ns: int) -> tuple[pq.FileMetaData, pa.Schema, frozenset[str]]:
    metadata = storage.parquet_metadata(path)
    schema = metadata.schema.to_arrow_schema()
    return metadata, schema, _dictionary_stored(metadata, schema)


def _dictionary_stored(metadata: pq.FileMetaData, schema: pa.Schema) -> frozenset[str]:
    candidates = {f.name for f in schema
                  if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
                  or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)}
    if not candidates or metadata.num_row_groups == 0:
        return frozenset()
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        chunks = (group.column(i) for i in range(group.num_columns))
        candidates &= {chunk.path_in_schema for chunk in chunks
                       if chunk.has_dictionary_page
                       and chunk.total_uncompressed_size <= _DICTIONARY_BYTES_PER_VALUE * max(chunk.num_values, 1)}
    return frozenset(candidates)


_VERIFY_PAGES = ds.ParquetFragmentScanOptions(page_checksum_verification=True)
"""Pages whose header carries a CRC (parquet-java writes them by default, and so do we) are
checked against it: a flipped byte in a page is an error, not a changed value."""


@functools.lru_cache(maxsize=64)
def _parquet_format(dictionary: tuple[str, ...]) -> ds.ParquetFileFormat:
    return ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(dictionary_columns=set(dictionary)),
                                default_fragment_scan_options=_VERIFY_PAGES)


def scan_parquet(
    storage: Storage,
    paths: Sequence[str],
    file_schema: pa.Schema,
    plan: FilePlan,
    pushdown: pc.Expression | None,
    *,
    batch_size: int = BATCH_SIZE,
    ahead: bool = True,
    dictionaries: frozenset[str] = frozenset(),
    time_limit: TimeLimit = NO_LIMIT,
) -> Iterator[pa.RecordBatch]:
    """Batches of `paths` (all written with `file_schema`), mapped through `plan`.

    `pushdown` must reference file columns; it filters rows (and with `ahead`, prunes row groups
    by statistics), so it may only hold conditions the caller re-checks or that are exact on the
    file's values. With `ahead` (for whole scans), files and batches are read ahead on Arrow's
    threads; without (for a few rows), one batch at a time, the first one soonest.
    `dictionaries` names query columns to return dictionary-encoded where the file's string
    column is read unchanged (see `kept_dictionaries`). `time_limit` is checked after every batch
    read, also those the filter empties. Lance files are read one after another, the filter
    applied to the rows read.
    """
    if paths and is_lance(paths[0]):
        yield from lance_files.scan_lance(storage, paths, plan, pushdown, batch_size=batch_size, time_limit=time_limit)
        return
    if not ahead:
        yield from _scan_one_batch_at_a_time(storage, paths, plan, pushdown, batch_size, dictionaries, time_limit)
        return
    columns = _columns_to_read(plan, file_schema)
    if len(paths) == 1 and _read_at_once(parquet_footer(storage, paths[0]), columns) and (
            pushdown is None or only_column(pushdown, file_schema) in dictionary_columns(storage, paths[0], columns)):
        # (A filter on other columns goes through the scanner, which may skip the file on its
        # statistics; string columns stored as dictionaries rarely let it.)
        for _, batch in iter_parquet_in_order(storage, paths[0], plan, batch_size=batch_size, before_plan=pushdown,
                                              dictionaries=dictionaries):
            time_limit.check()
            if batch.num_rows:
                yield batch
        return
    # Files of one commit and partition are alike: the first one tells which columns to read as
    # dictionaries (the scanner decodes them back to the dataset's plain types on its threads,
    # except those kept as dictionaries).
    kept = kept_dictionaries(plan, file_schema, dictionaries)
    dictionary = tuple(dict.fromkeys([*dictionary_columns(storage, paths[0], columns), *kept]))
    dataset_schema = file_schema
    for name in kept:
        index = dataset_schema.get_field_index(name)
        dataset_schema = dataset_schema.set(index, as_dictionary_field(dataset_schema.field(index)))
    dataset = storage.parquet_dataset(paths, dataset_schema, _parquet_format(dictionary))
    scanner = dataset.scanner(
        columns=columns,
        filter=pushdown,
        batch_size=batch_size,
        use_threads=True,
        # One file ahead, its row groups decoded column by column on Arrow's threads, keeps both
        # cores busy; two files ahead hold twice the row groups in memory (a 10M-row table of
        # 1M-row files: 230 MB of Arrow memory instead of 83) for no measurable speed.
        fragment_readahead=1,
        batch_readahead=4,
    )
    try:
        for batch in scanner.to_batches():
            time_limit.check()
            if batch.num_rows:
                yield _apply_keeping(plan, batch, kept)
    except UNDECODABLE as exc:
        gone = [p for p in paths if not storage.exists(p)]
        if gone:
            raise file_gone(gone[0]) from exc
        bad = _unreadable(storage, paths, columns, exc)
        raise CorruptFileError(f"cannot read Parquet data from {bad}: {exc}", path=bad) from exc


def _unreadable(storage: Storage, paths: Sequence[str], columns: Sequence[str], error: BaseException) -> str:
    """Which of the files a scan failed on cannot be read: the one the error names, else the first
    whose footer or columns fail to decode (read again one by one; the error path only)."""
    named = [p for p in paths if p in str(error)]
    if named:
        return named[0]
    for path in paths:
        try:
            source = pq.ParquetFile(storage.parquet_source(path), page_checksum_verification=True)
            for _ in source.iter_batches(columns=list(columns), use_threads=False):
                pass
        except UNDECODABLE:
            return path
    return paths[0]


def _scan_one_batch_at_a_time(storage: Storage, paths: Sequence[str], plan: FilePlan, pushdown: pc.Expression | None,
                              batch_size: int, dictionaries: frozenset[str],
                              time_limit: TimeLimit) -> Iterator[pa.RecordBatch]:
    for path in paths:
        for _, batch in iter_parquet_in_order(storage, path, plan, batch_size=batch_size, before_plan=pushdown,
                                              first_soonest=True, dictionaries=dictionaries):
            time_limit.check()
            if batch.num_rows:
                yield batch


def iter_parquet_in_order(
    storage: Storage, path: str, plan: FilePlan, *, keep: pa.BooleanArray | None = None, batch_size: int = BATCH_SIZE,
    before_plan: pc.Expression | None = None, first_soonest: bool = False,
    dictionaries: frozenset[str] = frozenset(), bounded: bool = False,
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """The rows of one Parquet file, in file order, mapped through `plan`: (rows read, batch).

    `keep`, when given, says which of the file's rows to keep (by position); `before_plan`, a
    filter on the file's own columns. Rows are dropped before the plan runs, so conversions only
    touch the rows kept. With `first_soonest` (a few rows wanted), the file is always read batch
    by batch, never at once. Query columns in `dictionaries` stay dictionary-encoded where the
    file's column is read unchanged (see `kept_dictionaries`). `bounded` (for callers that
    already read several files side by side, one per core) streams the file batch by batch on
    the calling thread, however small the file: memory follows `batch_size`, not the row group,
    and no Arrow thread (each holding memory of its own) is set to work. A Lance file is read by
    `lance_files.iter_lance_in_order` (its strings plain, never kept as dictionaries).
    """
    if is_lance(path):
        yield from lance_files.iter_lance_in_order(storage, path, plan, keep=keep, batch_size=batch_size, before_plan=before_plan)
        return
    try:
        metadata, file_schema, _ = _footer(storage, path)
        columns = _columns_to_read(plan, file_schema)
        kept = kept_dictionaries(plan, file_schema, dictionaries)
        dictionary = list(dict.fromkeys([*dictionary_columns(storage, path, columns), *kept]))
        parquet = pq.ParquetFile(storage.parquet_source(path), metadata=metadata, read_dictionary=dictionary or None,
                                 page_checksum_verification=True)
        offset = 0
        # Arrow's threads decode columns side by side: for one column they only cost a hand-off.
        threads = len(columns) > 1 and not bounded
        at_once = not first_soonest and not bounded and _read_at_once(metadata, columns)
        if at_once:  # the row group whole: rows are selected and decoded in one pass, then cut
            batches = parquet.read_row_group(0, columns=columns, use_threads=threads).combine_chunks().to_batches()
        else:
            batches = parquet.iter_batches(batch_size=batch_size, columns=columns, use_threads=threads)
        # A filter on one column read as a dictionary is decided per entry, before decoding.
        on_dictionary = only_column(before_plan, file_schema) if before_plan is not None and dictionary else None
        if on_dictionary not in dictionary:
            on_dictionary = None
        for batch in batches:
            rows = batch.num_rows
            if keep is not None:
                batch = select_rows(batch, keep.slice(offset, rows))
            pending = before_plan
            if on_dictionary is not None and before_plan is not None:
                batch = select_rows(batch, dictionary_mask(batch.column(on_dictionary), on_dictionary, before_plan))
                pending = None
            if dictionary:
                batch = _decoded(batch, file_schema, kept)  # after the selection: only kept values are decoded
            if pending is not None:
                batch = batch.filter(pending)
            offset += rows
            batch = _apply_keeping(plan, batch, kept)
            if not at_once or batch.num_rows <= batch_size:
                yield rows, batch
                continue
            for start in range(0, batch.num_rows, batch_size):  # the rows read count once
                yield (rows if start == 0 else 0), batch.slice(start, batch_size)
    except UNDECODABLE as exc:
        if is_missing_file(exc) or not storage.exists(path):
            raise file_gone(path) from exc
        raise CorruptFileError(f"cannot read Parquet data from {path}: {exc}", path=path) from exc


def select_rows(batch: pa.RecordBatch, mask: pa.BooleanArray) -> pa.RecordBatch:
    """The rows of `batch` where `mask` is true.

    Column by column, each without an all-valid validity bitmap (Parquet readers attach one even
    when no value is null, and Arrow's filter runs about twice as fast without it).
    """
    return pa.RecordBatch.from_arrays([_without_validity(c).filter(mask) for c in batch.columns], schema=batch.schema)


def kept_dictionaries(plan: FilePlan, file_schema: pa.Schema, dictionaries: frozenset[str]) -> dict[str, str]:
    """File column -> query column, for the query columns in `dictionaries` that the plan reads
    unchanged from a string column of the file: these are read, and returned, as dictionaries."""
    kept: dict[str, str] = {}
    for query_name in dictionaries:
        source = plan.passthrough.get(query_name)
        index = file_schema.get_field_index(source) if source is not None else -1
        if source is not None and index >= 0 and file_schema.field(index).type == pa.string():
            kept[source] = query_name
    return kept


def _apply_keeping(plan: FilePlan, batch: pa.RecordBatch, kept: Mapping[str, str]) -> pa.RecordBatch:
    """`plan.apply(batch)`, with the `kept` dictionary columns (read unchanged) carried around
    the plan rather than through it: the plan sees placeholder nulls of the plain type."""
    held = {name: batch.column(name) for name in kept if pa.types.is_dictionary(batch.schema.field(name).type)}
    if not held:
        return plan.apply(batch)
    schema, columns = batch.schema, list(batch.columns)
    for name, column in held.items():
        index = schema.get_field_index(name)
        columns[index] = pa.nulls(batch.num_rows, column.type.value_type)
        schema = schema.set(index, schema.field(index).with_type(column.type.value_type))
    applied = plan.apply(pa.RecordBatch.from_arrays(columns, schema=schema))
    schema, columns = applied.schema, list(applied.columns)
    for name, column in held.items():
        index = schema.get_field_index(kept[name])
        columns[index] = column
        schema = schema.set(index, schema.field(index).with_type(column.type))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _decoded(batch: pa.RecordBatch, file_schema: pa.Schema, kept: Mapping[str, str]) -> pa.RecordBatch:
    """`batch` with columns read as dictionaries cast back to the file's own types, except `kept`."""
    schema, columns = batch.schema, list(batch.columns)
    for i, column in enumerate(columns):
        if pa.types.is_dictionary(column.type) and schema.field(i).name not in kept:
            kind = file_schema.field(schema.field(i).name).type
            columns[i] = column.cast(kind)
            schema = schema.set(i, schema.field(i).with_type(kind))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _without_validity(column: pa.Array) -> pa.Array:
    """`column` without its validity bitmap when it holds no nulls (flat types only)."""
    buffers = column.buffers()
    kind = column.type
    flat = not (kind.num_fields or pa.types.is_dictionary(kind) or isinstance(kind, pa.ExtensionType)
                or pa.types.is_string_view(kind) or pa.types.is_binary_view(kind))
    if column.null_count or not flat or not buffers or buffers[0] is None:
        return column
    return pa.Array.from_buffers(column.type, len(column), [None, *buffers[1:]], offset=column.offset)


def _read_at_once(metadata: pq.FileMetaData, columns: Sequence[str]) -> bool:
    """Whether to read these columns of a file in one call rather than batch by batch: a file of
    one row group whose columns hold at most `_AT_ONCE_BYTES` (selective queries read such files;
    streaming them, or setting up a dataset scanner, costs more than the reading, and nothing
    could be read ahead in one row group anyway)."""
    if metadata.num_row_groups != 1:
        return False
    group = metadata.row_group(0)
    wanted = set(columns)
    size = 0
    for index in range(group.num_columns):
        chunk = group.column(index)
        if chunk.path_in_schema.split(".", 1)[0] in wanted:
            size += chunk.total_uncompressed_size
    return size <= _AT_ONCE_BYTES


def _columns_to_read(plan: FilePlan, file_schema: pa.Schema) -> list[str]:
    """The plan's columns; when it needs none (all come from paths), one column to count rows by."""
    columns = list(plan.read_columns)
    if not columns and len(file_schema):
        columns = [file_schema.names[0]]
    return columns
