"""Write a file slice out for Iceberg readers: its rows read by the shim (log records merged,
columns reconciled by id) into one Parquet file whose columns carry Iceberg field ids.

Files are named after what they hold (the table, the view's schema and the slice's files with
their sizes), so a slice no later commit touched is written once and found again.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.parquet as pq

from catalog.iceberg.types import file_schema_for_iceberg
from shim.plan.slices import FileSlice
from shim.read.request import PlannedScan


@dataclass(frozen=True, slots=True)
class WrittenFile:
    """A Parquet file written for Iceberg readers (None path: the slice holds no rows)."""

    path: str | None
    record_count: int
    size: int


def slice_digest(scan: PlannedScan, file_slice: FileSlice) -> str:
    """A name for what a slice reads as in this view: table, view, schema and the slice's files."""
    digest = hashlib.blake2b(digest_size=16)
    for part in (scan.table.path, scan.mode, repr(file_slice)):
        digest.update(part.encode("utf-8") + b"\0")
    digest.update(scan.data_schema.serialize().to_pybytes())
    return digest.hexdigest()


def write_slice(scan: PlannedScan, file_slice: FileSlice, folder: str) -> WrittenFile:
    """The slice's rows as `folder/<digest>.parquet` (reused when already there)."""
    path = os.path.join(folder, f"{slice_digest(scan, file_slice)}.parquet")
    if os.path.exists(path):
        return WrittenFile(path, pq.ParquetFile(path).metadata.num_rows, os.path.getsize(path))
    os.makedirs(folder, exist_ok=True)
    target = file_schema_for_iceberg(scan.data_schema)
    tmp = f"{os.path.dirname(path)}/.{os.path.basename(path)}.{os.getpid()}-{threading.get_ident()}.tmp"
    rows = 0
    try:
        with pq.ParquetWriter(tmp, target, compression="zstd") as writer:
            reader = replace(scan, slices=[file_slice]).reader()
            try:
                for batch in reader:
                    if batch.num_rows:
                        writer.write_batch(_as_target(batch, target))
                        rows += batch.num_rows
            finally:
                reader.close()
        if rows == 0:
            os.unlink(tmp)
            return WrittenFile(None, 0, 0)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return WrittenFile(path, rows, os.path.getsize(path))


def _as_target(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    columns = [column if column.type == field.type else column.cast(field.type)
               for column, field in zip(batch.columns, target)]
    return pa.RecordBatch.from_arrays(columns, schema=target)
