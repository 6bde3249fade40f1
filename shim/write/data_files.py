"""Base files and log blocks with Hudi's meta columns filled in."""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from shim.avro import arrow_to_avro_schema
from shim.bloom import (
    BLOOM_FILTER_KEY,
    DYNAMIC_V0,
    TYPE_CODE_KEY,
    dynamic_bloom_filter,
    extended_bloom_filter,
)
from shim.files import base_file_name, log_file_name, parse_log_file
from shim.keys.keygen import key_columns, record_keys
from shim.keys.partition_scheme import scheme_of_table
from shim.layout.table_schema import META_COLUMNS
from shim.log.blocks import HeaderKey
from shim.log.positions import encode_positions
from shim.log.writer import (
    encode_avro_data_block,
    encode_delete_block,
    encode_parquet_data_block,
    write_log_file,
)
from shim.properties import TableConfig
from shim.schema.arrow import has_field_ids, without_field_ids
from shim.storage import Storage, join
from shim.write.parquet_settings import DEFAULT_PARQUET, ParquetSettings, valueless_columns

PARTITION_METAFILE = ".hoodie_partition_metadata"


@dataclass(frozen=True, slots=True)
class FileWrite:
    """One file written by a commit, as its write stat records it."""

    partition_path: str
    file_id: str
    file_name: str
    num_writes: int
    num_inserts: int = 0
    num_updates: int = 0
    num_deletes: int = 0
    file_size: int = 0
    prev_commit: str | None = None
    base_file: str | None = None
    log_version: int | None = None

    @property
    def path(self) -> str:
        return f"{self.partition_path}/{self.file_name}" if self.partition_path else self.file_name

    def to_json(self) -> dict[str, object]:
        """The write stat as Hudi serialises it in commit metadata."""
        stat: dict[str, object] = {
            "fileId": self.file_id,
            "path": self.path,
            "prevCommit": self.prev_commit or "null",
            "numWrites": self.num_writes,
            "numDeletes": self.num_deletes,
            "numUpdateWrites": self.num_updates,
            "numInserts": self.num_inserts,
            "totalWriteBytes": self.file_size,
            "totalWriteErrors": 0,
            "tempPath": None,
            "partitionPath": self.partition_path,
            "totalLogRecords": 0,
            "totalLogFilesCompacted": 0,
            "totalLogSizeCompacted": 0,
            "totalUpdatedRecordsCompacted": 0,
            "totalLogBlocks": 0,
            "totalCorruptLogBlock": 0,
            "totalRollbackBlocks": 0,
            "fileSizeInBytes": self.file_size,
            "minEventTime": None,
            "maxEventTime": None,
            "runtimeStats": None,
        }
        if self.log_version is not None:
            stat.update(
                logVersion=self.log_version,
                logOffset=0,
                baseFile=self.base_file or "",
                logFiles=[self.file_name],
                cdcStats=None,
            )
        return stat


def with_meta_columns(
    data: pa.Table,
    config: TableConfig,
    *,
    instant: str,
    file_name: str,
    partition_id: int = 0,
) -> pa.Table:
    """`data` (data columns) with the five meta columns filled in front, as Hudi writes them."""
    n = data.num_rows
    scheme = scheme_of_table(config)
    columns = key_columns(data, (*config.record_key_fields, *scheme.fields))
    keys = record_keys(columns, config.record_key_fields)
    partitions = scheme.paths(columns, n)
    meta = [
        pa.array([instant] * n, pa.string()),
        pa.array([f"{instant}_{partition_id}_{i}" for i in range(n)], pa.string()),
        keys,
        partitions,
        pa.array([file_name] * n, pa.string()),
    ]
    dropped = [c for c in META_COLUMNS if c in data.column_names]
    if config.drop_partition_columns:
        dropped += [c for c in config.partition_fields if c in data.column_names]
    body = data.drop_columns(dropped)
    return pa.Table.from_arrays(meta + list(body.columns), names=list(META_COLUMNS) + body.column_names)


def avro_record_schema(table_name: str, arrow_schema: pa.Schema) -> dict[str, object]:
    """Avro schema of a table's records, named as Hudi names it (`hoodie.<table>.<table>_record`)."""
    return arrow_to_avro_schema(arrow_schema, f"{table_name}_record", f"hoodie.{table_name}")


def write_base_file(
    storage: Storage,
    config: TableConfig,
    *,
    partition_path: str,
    file_id: str,
    instant: str,
    write_token: str,
    data: pa.Table,
    partition_id: int = 0,
    prev_commit: str | None = None,
    num_updates: int = 0,
    preserve_meta: bool = False,
    parquet: ParquetSettings = DEFAULT_PARQUET,
    bloom_filter: bool = True,
    bloom_from: tuple[str, pa.Array] | None = None,
) -> FileWrite:
    """Write one Parquet base file (meta columns added) and return its write stat.

    With `preserve_meta`, `data` already holds the five meta columns first (records carried over
    from an older file keep their commit time and sequence number, as Hudi's merge and compaction
    keep them); only `_hoodie_file_name` is set to the new file. `parquet`: codec, dictionaries
    and row group size.
    `bloom_filter` puts Hudi's record-key bloom filter into the footer, as Hudi does unless
    `hoodie.parquet.bloom.filter.enabled` is false. `bloom_from` = (the filter of the file
    this one rewrites, the keys added to it): when `data` holds that file's keys and these only,
    only they are hashed (unless the result could differ from a filter built afresh).
    """
    table_path = storage.root
    name = base_file_name(file_id, write_token, instant)
    if preserve_meta:
        full = data.set_column(
            META_COLUMNS.index("_hoodie_file_name"), "_hoodie_file_name", pa.repeat(pa.scalar(name), data.num_rows)
        )
    else:
        full = with_meta_columns(data, config, instant=instant, file_name=name, partition_id=partition_id)
    folder = join(table_path, partition_path)
    storage.make_dirs(folder)
    ensure_partition_metafile(storage, partition_path, instant)
    keys = full.column("_hoodie_record_key")
    metadata = {
        b"parquet.avro.schema": json.dumps(avro_record_schema(config.name, full.schema)).encode(),
        b"writer.model.name": b"avro",
    }
    if full.num_rows:
        import pyarrow.compute as pc

        bounds = pc.min_max(keys)
        metadata[b"hoodie_min_record_key"] = bounds["min"].as_py().encode()
        metadata[b"hoodie_max_record_key"] = bounds["max"].as_py().encode()
    path = os.path.join(folder, name)
    if has_field_ids(full.schema):  # rows read back from files carry the columns' ids
        full = full.cast(without_field_ids(full.schema))
    table = full.replace_schema_metadata(metadata)
    row_group = parquet.row_group_rows(table)
    options = parquet.writer_options(table.column_names, config.record_key_fields,
                                     empty_in_a_row_group=valueless_columns(table, row_group))
    # Hudi's bloom index and metadata table look keys up in a filter in every base file's footer.
    # It is hashed while the rows are encoded (both release the GIL); the footer is written last.
    with ThreadPoolExecutor(1, thread_name_prefix="hudi-shim-bloom") as pool:
        bloom = pool.submit(_bloom_filter, keys, bloom_from) if bloom_filter else None
        with storage.parquet_sink(path) as sink, pq.ParquetWriter(sink, table.schema, **options) as writer:
            writer.write_table(table, row_group_size=row_group)
            if bloom is not None:
                writer.add_key_value_metadata({BLOOM_FILTER_KEY: bloom.result(), TYPE_CODE_KEY: DYNAMIC_V0})
    return FileWrite(
        partition_path=partition_path,
        file_id=file_id,
        file_name=name,
        num_writes=full.num_rows,
        num_inserts=full.num_rows - num_updates,
        num_updates=num_updates,
        file_size=storage.file_size(path),
        prev_commit=prev_commit,
    )


def _bloom_filter(keys: pa.ChunkedArray, extending: tuple[str, pa.Array] | None) -> str:
    if extending is not None:
        extended = extended_bloom_filter(extending[0], extending[1], len(keys))
        if extended is not None:
            return extended
    return dynamic_bloom_filter(keys.combine_chunks())


def next_log_version(storage: Storage, folder: str, file_id: str, base_instant: str) -> int:
    """1 + the highest log version of (file group, base instant) in `folder`."""
    prefix = f".{file_id}_{base_instant}.log."  # names of other slices are not parsed
    versions = [
        log.version
        for name in storage.list_names(folder)
        if name.startswith(prefix) and (log := parse_log_file(name, ""))
        and log.file_id == file_id and log.instant_time == base_instant
    ]
    return max(versions, default=0) + 1


def write_log_blocks(
    storage: Storage,
    config: TableConfig,
    *,
    partition_path: str,
    file_id: str,
    base_instant: str,
    instant: str,
    write_token: str,
    upserts: pa.Table | None = None,
    delete_keys: Sequence[str] = (),
    delete_ordering: Sequence[pa.Array] = (),
    partition_id: int = 0,
    base_file: str | None = None,
    block_format: str = "avro",
    partial: bool = False,
    positions: np.ndarray | None = None,
) -> FileWrite:
    """Write a new log file holding a data block (Avro, or Parquet with `block_format`) and/or a
    delete block for `instant`; with `partial`, the data block holds partial updates (only the
    columns of `upserts`, flagged IS_PARTIAL as Hudi writes a MERGE INTO of some columns); with
    `positions` (the base file rows of `upserts`, in their order), the data block carries them as
    `RECORD_POSITIONS` for the base file of `base_instant`."""
    table_path = storage.root
    folder = join(table_path, partition_path)
    storage.make_dirs(folder)
    ensure_partition_metafile(storage, partition_path, instant)
    version = next_log_version(storage, folder, file_id, base_instant)
    name = log_file_name(file_id, base_instant, version, write_token)
    blocks = []
    written = 0
    if upserts is not None and upserts.num_rows:
        # Log records name their file group in `_hoodie_file_name`, as Hudi's append handle does.
        full = with_meta_columns(upserts, config, instant=instant, file_name=file_id, partition_id=partition_id)
        schema = avro_record_schema(config.name, full.schema)
        header = {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: json.dumps(schema)}
        if partial:
            header[HeaderKey.IS_PARTIAL] = "true"
        if positions is not None:
            header[HeaderKey.RECORD_POSITIONS] = encode_positions(positions)
            header[HeaderKey.BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS] = base_instant
        if block_format == "parquet":
            blocks.append(encode_parquet_data_block(full, header))
        else:
            blocks.append(encode_avro_data_block(full, schema, header))
        written += full.num_rows
    if delete_keys:
        n = len(delete_keys)
        header = {HeaderKey.INSTANT_TIME: instant}
        blocks.append(
            encode_delete_block(
                list(delete_keys),
                [partition_path] * n,
                list(delete_ordering),
                header,
            )
        )
    path = os.path.join(folder, name)
    write_log_file(storage, path, blocks)
    return FileWrite(
        partition_path=partition_path,
        file_id=file_id,
        file_name=name,
        num_writes=written,
        num_updates=written,
        num_deletes=len(delete_keys),
        file_size=storage.file_size(path),
        prev_commit=base_instant,
        base_file=base_file,
        log_version=version,
    )


def ensure_partition_metafile(storage: Storage, partition_path: str, instant: str) -> None:
    """Write `.hoodie_partition_metadata` in a partition that lacks one."""
    table_path = storage.root
    folder = join(table_path, partition_path)
    path = os.path.join(folder, PARTITION_METAFILE)
    if storage.exists(path):
        return
    depth = len(partition_path.split("/")) if partition_path else 0
    stamp = datetime.datetime.now(datetime.UTC).strftime("%a %b %d %H:%M:%S UTC %Y")
    text = f"#partition metadata\n#{stamp}\ncommitTime={instant}\npartitionDepth={depth}\n"
    storage.write_atomically(path, text.encode("utf-8"))
