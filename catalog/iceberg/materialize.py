"""Write file slices out for Iceberg readers, as Parquet files whose columns carry Iceberg ids.

Either the whole slice, as the shim reads it (log records merged, columns reconciled by id), or
only what its log files change (`write_log_side`): the log records that stand, and Iceberg
position deletes for the base file rows they supersede or delete (a Parquet position delete
file, or a deletion vector in a Puffin file: `catalog.iceberg.deletion_vectors`), the base file
staying read in place.

Files are named after what they hold (the table, the view's schema and the slice's files with
their sizes), so a slice no later commit touched is written once and found again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import shim
from catalog.cache import LruCache, SingleFlight
from catalog.iceberg.deletion_vectors import write_vector_file
from catalog.iceberg.metrics import NAN_COUNTS_KEY, nan_counts
from catalog.iceberg.types import DELETE_FILE_PATH_ID, DELETE_POS_ID, file_schema_for_iceberg
from shim import FileSlice
from shim.read import slice_merge_state
from shim.schema import FIELD_ID_KEY
from shim.storage import Storage
from shim.write.parquet_settings import empty_dictionary_chunks

#: Row groups of the files written: at most this many rows, about this many bytes of Arrow data.
#: Several row groups per file let DuckDB scan a file on several threads (one 500k-row group read
#: 1.4x slower than four) and engines skip groups by their statistics.
ROW_GROUP_ROWS = 131_072
ROW_GROUP_BYTES = 64 * 1024 * 1024
#: The files' codec: Snappy, Hudi 1.x's default for base files, which engines decode 2-3x faster
#: than Zstandard (DuckDB summed a double column of 500k rows in 2.1 ms vs 4.5-6 ms): published
#: files are a cache, read far more often than written.
CODEC = "snappy"


@dataclass(frozen=True, slots=True)
class WrittenFile:
    """A file written for Iceberg readers (None path: the slice holds no rows): Parquet, or a
    Puffin file holding one deletion vector, whose blob's offset and length `vector` gives."""

    path: str | None
    record_count: int
    size: int
    vector: tuple[int, int] | None = None


def slice_digest(scan: shim.Scan, file_slice: FileSlice, touched: bytes) -> str:
    """A name for what a slice reads as in this view: table, view, schema, the slice's files and
    `touched`, the completed instants that wrote its file group (a log block already in a file
    becomes visible when its instant completes)."""
    digest = hashlib.blake2b(touched, digest_size=16)
    for part in (scan.table.path, scan.mode, repr(_as_read(scan, file_slice))):
        digest.update(part.encode("utf-8") + b"\0")
    digest.update(scan.data_schema.serialize().to_pybytes())
    return digest.hexdigest()


def _as_read(scan: shim.Scan, file_slice: FileSlice) -> FileSlice:
    """The slice as its scan reads it: each log file with the bytes the writes visible to the scan
    appended, without the log files only later writes wrote. A later commit's log file (planned
    into the slice, its blocks skipped) or its append to a log file changes nothing the slice
    reads as of an earlier instant, and must not rename (and rewrite) what was written for it. A
    log file no known write appended (its commit archived before the table was opened) stays as
    listed."""
    read_instant, committed = scan.read_instant, scan.table.committed
    if read_instant is None or not file_slice.log_files:
        return file_slice
    logs = []
    for log in file_slice.log_files:
        ranges = committed.log_ranges(log.partition_path, log.name, read_instant)
        if ranges:
            logs.append(replace(log, size=max(r.end for r in ranges)))
        elif not committed.knows_log(log.partition_path, log.name):
            logs.append(log)
    return replace(file_slice, log_files=tuple(logs))


POSITION_DELETE_SCHEMA = pa.schema([
    pa.field("file_path", pa.string(), False, {FIELD_ID_KEY: str(DELETE_FILE_PATH_ID).encode()}),
    pa.field("pos", pa.int64(), False, {FIELD_ID_KEY: str(DELETE_POS_ID).encode()}),
])


class SliceWriter:
    """Writes slices out once, however many publications need them at the same time (a REST
    load and a Hadoop catalog refresh, the views of two kinds of readers): the others wait for
    the one writing, and a slice written before is found by its name without being read again
    (what a file holds is all in its name: `slice_digest`)."""

    def __init__(self, out: Storage, capacity: int = 100_000) -> None:
        self.out = out
        self._known: LruCache[tuple[WrittenFile, ...]] = LruCache(capacity)
        self._writing: SingleFlight[tuple[WrittenFile, ...]] = SingleFlight()

    def whole(self, scan: shim.Scan, file_slice: FileSlice, touched: bytes, folder: str) -> WrittenFile:
        """`write_slice`, once."""
        key = os.path.join(folder, slice_digest(scan, file_slice, touched))
        return self._once(key, lambda: (write_slice(self.out, scan, file_slice, touched, folder),))[0]

    def log_side(self, scan: shim.Scan, file_slice: FileSlice, touched: bytes, base_uri: str,
                 folder: str, *, vectors: bool = False) -> tuple[WrittenFile, WrittenFile]:
        """`write_log_side`, once."""
        key = os.path.join(folder, slice_digest(scan, file_slice, touched) + f"-log-side-{vectors}\0" + base_uri)
        rows, deletes = self._once(key, lambda: write_log_side(self.out, scan, file_slice, touched, base_uri,
                                                                        folder, vectors=vectors))
        return rows, deletes

    def _once(self, key: str, write: Callable[[], tuple[WrittenFile, ...]]) -> tuple[WrittenFile, ...]:
        def known_or_written() -> tuple[WrittenFile, ...]:
            known = self._known.get(key)
            if known is not None and all(f.path is None or self.out.exists(f.path) for f in known):
                return known  # (retention removes the files no kept version names)
            written = write()
            self._known.put(key, written)
            return written

        return self._writing.run(key, known_or_written)


def write_slice(out: Storage, scan: shim.Scan, file_slice: FileSlice, touched: bytes, folder: str) -> WrittenFile:
    """The slice's rows as `folder/<digest>.parquet` on `out` (reused when already there)."""
    path = os.path.join(folder, f"{slice_digest(scan, file_slice, touched)}.parquet")
    target = file_schema_for_iceberg(scan.data_schema)

    def batches() -> Iterator[pa.RecordBatch]:
        reader = replace(scan, slices=[file_slice]).reader()
        try:
            for batch in reader:
                yield _as_target(batch, target)
        finally:
            reader.close()

    return _write(out, path, target, batches)


def write_log_side(out: Storage, scan: shim.Scan, file_slice: FileSlice, touched: bytes, base_uri: str,
                   folder: str, *, vectors: bool = False) -> tuple[WrittenFile, WrittenFile]:
    """What the slice's logs change, for a base file read in place as `base_uri`: the standing
    log records (`<digest>-log.parquet`) and the position deletes of base rows that do not stand
    (`<digest>-deletes.parquet`; with `vectors`, the deletion vector `<digest>-dv.puffin`)."""
    state = slice_merge_state(scan, file_slice)
    digest = slice_digest(scan, file_slice, touched)
    target = file_schema_for_iceberg(scan.data_schema)
    log_rows = state.log_rows.select(scan.data_schema.names)
    rows = _write(out, os.path.join(folder, f"{digest}-log.parquet"), target,
                  lambda: (_as_target(b, target) for b in log_rows.to_batches()))
    dropped = np.flatnonzero(~np.asarray(state.base_keep.to_numpy(zero_copy_only=False), dtype=bool)) \
        if state.base_keep is not None else np.empty(0, np.int64)
    if vectors:
        if not len(dropped):
            return rows, WrittenFile(None, 0, 0)
        vector = write_vector_file(out, os.path.join(folder, f"{digest}-dv.puffin"), dropped, base_uri)
        return rows, WrittenFile(vector.path, vector.cardinality, vector.size, (vector.offset, vector.length))
    deletes = pa.record_batch([pa.array([base_uri] * len(dropped), pa.string()), pa.array(dropped, pa.int64())],
                              schema=POSITION_DELETE_SCHEMA)
    deleted = _write(out, os.path.join(folder, f"{digest}-deletes.parquet"), POSITION_DELETE_SCHEMA,
                     lambda: iter([deletes]))
    return rows, deleted


def _write(out: Storage, path: str, schema: pa.Schema, batches: Callable[[], Iterable[pa.RecordBatch]]) -> WrittenFile:
    """`batches` as the Parquet file `path` (reused when already there; None path: no rows)."""
    if out.exists(path):
        return WrittenFile(path, pq.ParquetFile(out.parquet_source(path)).metadata.num_rows, out.file_size(path))
    out.make_dirs(os.path.dirname(path))
    tmp = out.temporary_path(path)
    rows = 0
    nans = {field.name: 0 for field in schema if pa.types.is_floating(field.type)}
    try:
        with out.parquet_sink(tmp) as sink, pq.ParquetWriter(sink, schema, compression=CODEC) as writer:
            for group in _row_groups(batches()):
                writer.write_table(group, row_group_size=group.num_rows)
                rows += group.num_rows
                for name, count in nan_counts(group.to_batches(), schema).items():
                    nans[name] += count
            if nans:  # Parquet statistics leave NaNs out uncounted: manifests take the counts from here
                writer.add_key_value_metadata({NAN_COUNTS_KEY: json.dumps(nans, sort_keys=True)})
        if rows == 0:
            out.remove(tmp)
            return WrittenFile(None, 0, 0)
        _without_empty_dictionaries(out, tmp, schema)
        out.replace(tmp, path)
    except BaseException:
        out.remove(tmp, missing_ok=True)
        raise
    return WrittenFile(path, rows, out.file_size(path))


def _row_groups(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.Table]:
    """The batches gathered into row groups of `ROW_GROUP_ROWS` rows (the last fewer), or fewer
    when they reach `ROW_GROUP_BYTES` bytes first: one row group per batch (the scan's batches
    hold some ten thousand rows) repeated every dictionary and compressed worse, three times the
    bytes of Hudi's files."""
    held: list[pa.RecordBatch] = []
    rows = size = 0
    for batch in batches:
        while batch.num_rows:
            part = batch.slice(0, ROW_GROUP_ROWS - rows)
            batch = batch.slice(part.num_rows)
            held.append(part)
            rows += part.num_rows
            size += part.nbytes
            if rows >= ROW_GROUP_ROWS or size >= ROW_GROUP_BYTES:
                yield pa.Table.from_batches(held)
                held, rows, size = [], 0, 0
    if held:
        yield pa.Table.from_batches(held)


def _without_empty_dictionaries(out: Storage, path: str, schema: pa.Schema) -> None:
    """Rewrite the Parquet file at `path`, row group by row group, with no dictionary for the
    columns that hold no value in some row group: such a chunk's dictionary page is empty, and
    Presto's dictionary filter fails on it ('cannot use empty ranges') when a query filters on
    the column. Most files have none and are left as they are."""
    source = pq.ParquetFile(out.parquet_source(path))
    metadata = source.metadata
    empty = {column for _, column in empty_dictionary_chunks(metadata)}
    if not empty:
        return
    leaves = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
    rewritten = f"{path}-rewrite.tmp"  # (.tmp: removed by retention if left behind)
    recorded = (metadata.metadata or {}).get(NAN_COUNTS_KEY.encode())
    try:
        with out.parquet_sink(rewritten) as sink, pq.ParquetWriter(
                sink, schema, compression=CODEC, use_dictionary=[leaf for leaf in leaves if leaf not in empty]) as writer:
            for group in range(metadata.num_row_groups):
                writer.write_table(source.read_row_group(group), row_group_size=metadata.row_group(group).num_rows)
            if recorded is not None:
                writer.add_key_value_metadata({NAN_COUNTS_KEY: recorded.decode()})
        out.replace(rewritten, path)
    finally:
        out.remove(rewritten, missing_ok=True)


def _as_target(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    columns = [_required_members_filled(column if column.type == field.type else column.cast(field.type))
               for column, field in zip(batch.columns, target)]
    return pa.RecordBatch.from_arrays(columns, schema=target)


def _required_members_filled(column: pa.Array) -> pa.Array:
    """`column` with the required members of its null structs holding a value: a struct built from
    records (log records decoded from Avro) leaves them null under a null parent, which Parquet
    writers refuse for a required member although no reader sees it."""
    if not pa.types.is_struct(column.type):
        return column
    children = []
    for i in range(column.type.num_fields):
        member = column.type.field(i)
        child = _required_members_filled(column.field(i))
        if not member.nullable and child.null_count:
            child = child.fill_null(pa.scalar(_placeholder(member.type), member.type)) \
                if _placeholder(member.type) is not None else child
        children.append(child)
    return pa.StructArray.from_arrays(children, fields=list(column.type), mask=column.is_null())


def _placeholder(data_type: pa.DataType) -> object:
    """A value of `data_type` for slots no reader sees (None where none is simple to make)."""
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return ""
    if pa.types.is_binary(data_type) or pa.types.is_large_binary(data_type):
        return b""
    if pa.types.is_boolean(data_type):
        return False
    if pa.types.is_integer(data_type) or pa.types.is_floating(data_type) or pa.types.is_decimal(data_type):
        return 0
    if pa.types.is_date(data_type) or pa.types.is_timestamp(data_type) or pa.types.is_time(data_type):
        return 0
    return None
