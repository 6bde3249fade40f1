"""Reading Lance base files (Hudi 1.2's `hoodie.table.base.file.format=LANCE`) with pylance.

A Lance base file is one Lance file (format v2, not a dataset): Hudi's Lance writer stores the
records' Arrow columns, meta columns first, and puts in the Arrow schema's metadata what a
Parquet base file keeps in its footer's key-value metadata (the record-key bloom filter
`org.apache.hudi.bloomfilter`, `hoodie_min_record_key`, `hoodie_max_record_key`). There are no
row groups and no column statistics: nothing is pruned by them, every filter is applied to the
rows read (exactly, as for Parquet files), and key lookups still skip files by the bloom filter.

The entry points mirror `base_files`' Parquet ones (which dispatch here by the `.lance`
extension): `lance_schema`, `lance_footer`, `iter_lance_in_order`, `scan_lance`. pylance is an
optional dependency (`pip install 'hudi-shim[lance]'`), imported on the first Lance file read.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shim.errors import CorruptFileError, file_gone, is_missing_file
from shim.read.time_limit import NO_LIMIT, TimeLimit
from shim.storage import Storage

if TYPE_CHECKING:
    from shim.read.file_plan import FilePlan

LANCE_EXTENSION = ".lance"
# pylance's errors for files it cannot open or decode (its Rust errors arrive as these).
_LANCE_ERRORS: tuple[type[BaseException], ...] = (OSError, ValueError, RuntimeError, pa.ArrowException)
# A read keeping at most this share of a file's rows takes them by position instead of reading all.
_TAKE_SHARE = 0.25


def is_lance(path: str) -> bool:
    """Whether `path` names a Lance base file (by its extension, as Hudi names them)."""
    return path.endswith(LANCE_EXTENSION)


@dataclass(frozen=True, slots=True)
class LanceFooter:
    """What a Lance base file tells in place of a Parquet footer.

    Attributes:
        num_rows: rows in the file.
        metadata: the Arrow schema's key-value metadata (bytes to bytes, as a Parquet footer's):
            Hudi's bloom filter and min/max record keys.
        num_row_groups: always 0: a Lance file has no row groups, hence no statistics to prune by.
    """

    num_rows: int
    metadata: Mapping[bytes, bytes] = field(default_factory=dict)
    num_row_groups: int = 0


def lance_schema(storage: Storage, path: str) -> pa.Schema:
    """The Arrow schema a Lance file stores (with its key-value metadata)."""
    return _opened(storage, path)[0]


def lance_footer(storage: Storage, path: str) -> LanceFooter:
    """The file's row count and key-value metadata (cached per file version)."""
    schema, rows = _opened(storage, path)
    return LanceFooter(rows, dict(schema.metadata or {}))


def _opened(storage: Storage, path: str) -> tuple[pa.Schema, int]:
    try:
        return _parsed(storage, path, *storage.file_version(path))
    except _LANCE_ERRORS as exc:
        raise _read_error(storage, path, exc, "cannot read the Lance file") from exc


@functools.lru_cache(maxsize=256)
def _parsed(storage: Storage, path: str, size: int, mtime_ns: int) -> tuple[pa.Schema, int]:
    reader = _reader(storage, path, None)
    return reader.metadata().schema, reader.num_rows()


def iter_lance_in_order(
    storage: Storage, path: str, plan: FilePlan, *, keep: pa.BooleanArray | None = None, batch_size: int,
    before_plan: pc.Expression | None = None, time_limit: TimeLimit = NO_LIMIT,
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """The rows of one Lance file, in file order, mapped through `plan`: (rows read, batch).

    As `base_files.iter_parquet_in_order`: `keep` says which of the file's rows to keep (by
    position), `before_plan` filters on the file's own columns; both drop rows before the plan
    runs. The rows read add up to the file's row count. A `keep` selecting few rows takes them
    by position rather than reading the whole file.
    """
    schema, total = _opened(storage, path)
    columns = _columns_to_read(plan, schema)
    read = _with_filter_columns(columns, schema, before_plan)
    try:
        reader = _reader(storage, path, read)
        if keep is not None and len(keep) != total:
            raise CorruptFileError(
                f"{path} holds {total} rows but held {len(keep)} when it was merged; "
                "base files must not change after their commit", path=path)
        chosen = _positions(keep) if keep is not None else None
        if chosen is not None and chosen.size <= _TAKE_SHARE * total:
            batches = [] if not chosen.size else reader.take_rows(chosen.tolist(), batch_size=batch_size).to_batches()
            counted = False
            for batch in batches:
                time_limit.check()
                batch = _filtered(batch, before_plan, columns)
                yield (0 if counted else total), plan.apply(batch)
                counted = True
            if not counted:
                yield total, plan.apply(_empty(schema, columns))
            return
        offset = 0
        for batch in reader.read_all(batch_size=batch_size).to_batches():
            time_limit.check()
            rows = batch.num_rows
            if keep is not None:
                batch = batch.filter(keep.slice(offset, rows))
            offset += rows
            yield rows, plan.apply(_filtered(batch, before_plan, columns))
        if not total:
            yield 0, plan.apply(_empty(schema, columns))
    except _LANCE_ERRORS as exc:
        raise _read_error(storage, path, exc, "cannot read Lance data from") from exc


def scan_lance(
    storage: Storage, paths: Sequence[str], plan: FilePlan, pushdown: pc.Expression | None, *, batch_size: int,
    time_limit: TimeLimit = NO_LIMIT,
) -> Iterator[pa.RecordBatch]:
    """Batches of the Lance files `paths` (all written with one schema), mapped through `plan`,
    one file after another; `pushdown`, on the files' columns, drops rows before the plan runs."""
    for path in paths:
        for _, batch in iter_lance_in_order(storage, path, plan, batch_size=batch_size, before_plan=pushdown,
                                            time_limit=time_limit):
            if batch.num_rows:
                yield batch


def _filtered(batch: pa.RecordBatch, condition: pc.Expression | None, columns: Sequence[str]) -> pa.RecordBatch:
    """The rows of `batch` meeting `condition`, with `columns` (those read for the filter alone dropped)."""
    if condition is not None and batch.num_rows:
        batch = batch.filter(condition)
    return batch if batch.schema.names == list(columns) else batch.select(list(columns))


def _with_filter_columns(columns: list[str], schema: pa.Schema, condition: pc.Expression | None) -> list[str]:
    """`columns`, or every column of the file when `condition` reads others (a filter may name any
    column of the file, as a Parquet scan's does)."""
    if condition is None:
        return columns
    try:
        _empty(schema, columns).filter(condition)
    except (pa.ArrowException, TypeError):
        return schema.names
    return columns


def _positions(keep: pa.BooleanArray) -> np.ndarray:
    return np.flatnonzero(np.asarray(keep.to_numpy(zero_copy_only=False), dtype=bool))


def _empty(schema: pa.Schema, columns: Sequence[str]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], schema=pa.schema([schema.field(c) for c in columns]))


def _columns_to_read(plan: FilePlan, schema: pa.Schema) -> list[str]:
    """The plan's columns; when it needs none (all come from paths), one column to count rows by."""
    columns = list(plan.read_columns)
    if not columns and len(schema):
        columns = [schema.names[0]]
    return columns


def _reader(storage: Storage, path: str, columns: Sequence[str] | None) -> Any:
    file_module = _lance_file_module()
    location, options = storage.rust_location(path)
    return file_module.LanceFileReader(location, storage_options=options or None,
                                       columns=list(columns) if columns is not None else None)


@functools.cache
def _lance_file_module() -> Any:
    try:
        import lance.file
    except ImportError as exc:
        raise ImportError(
            "reading Lance base files needs pylance: pip install 'hudi-shim[lance]'") from exc
    return lance.file


def _read_error(storage: Storage, path: str, exc: BaseException, what: str) -> Exception:
    if is_missing_file(exc) or not storage.exists(path):
        return file_gone(path)
    return CorruptFileError(f"{what} {path}: {exc}", path=path)
