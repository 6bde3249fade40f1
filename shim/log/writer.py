"""Writing Hudi log blocks byte for byte as HoodieLogFormatWriter does.

Each `encode_*` function returns one complete block (magic to trailing length); `write_log_file`
and `append_log_blocks` put blocks into a file. Header maps are `Mapping[HeaderKey, str]`, written
in the mapping's order (Hudi writes its HashMap's order; readers do not care, and passing a read
block's header back reproduces the block byte for byte).
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from shim.avro.encode import encode_records
from shim.avro.schema import named_once, parse_avro_schema
from shim.errors import InvalidArgumentError, WriteError
from shim.log.blocks import (
    BLOCK_CONTENT_VERSION,
    LOG_FORMAT_VERSION,
    MAGIC,
    ROLLBACK_COMMAND,
    BlockType,
    HeaderKey,
    header_key,
)
from shim.log.delete import encode_delete_payload
from shim.schema.arrow import has_field_ids, without_field_ids
from shim.storage import Storage

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")

Header = Mapping[HeaderKey, str] | Mapping[HeaderKey | int, str]
"""Header or footer entries; a read block's `header` (which may hold unknown int keys) fits too."""


def encode_block(
    block_type: BlockType, header: Header, content: bytes, footer: Header | None = None
) -> bytes:
    """One log block around `content`."""
    header_bytes = _metadata_bytes(header)
    footer_bytes = _metadata_bytes(footer or {})
    # Length after the length field: version, type, header, content length, content, footer, trailer.
    length = 4 + 4 + len(header_bytes) + 8 + len(content) + len(footer_bytes) + 8
    if length + len(MAGIC) + 8 >= 2**31 - 1:
        raise WriteError(
            f"a log block of {length} bytes overflows Hudi's int block sizes; write smaller blocks"
        )
    return b"".join(
        [
            MAGIC,
            _I64.pack(length),
            _I32.pack(LOG_FORMAT_VERSION),
            _I32.pack(int(block_type)),
            header_bytes,
            _I64.pack(len(content)),
            content,
            footer_bytes,
            _I64.pack(length + len(MAGIC)),  # everything from the magic to the footer
        ]
    )


def _metadata_bytes(entries: Header) -> bytes:
    out = [_I32.pack(len(entries))]
    for key, text in _items(entries):
        value = text.encode("utf-8")
        out += [_I32.pack(key), _I32.pack(len(value)), value]
    return b"".join(out)


def _items(entries: Header) -> list[tuple[int, str]]:
    return [(int(key), value) for key, value in entries.items()]


def _require(header: Header, *keys: HeaderKey) -> None:
    missing = [k.name for k in keys if k not in header]
    if missing:
        raise InvalidArgumentError(f"log block header needs {', '.join(missing)}")


def encode_avro_data_block(table: pa.Table, avro_schema: Mapping[str, Any], header: Header) -> bytes:
    """An AVRO_DATA block of the rows of `table` written with `avro_schema`.

    The SCHEMA header is set to `avro_schema` (Hudi's writer schema, meta fields included).
    """
    _require(header, HeaderKey.INSTANT_TIME)
    schema = parse_avro_schema(avro_schema)
    return encode_avro_records_block(encode_records(table, schema), schema, header)


def encode_avro_records_block(records: Sequence[bytes], schema: Mapping[str, Any], header: Header) -> bytes:
    """An AVRO_DATA block of records already in Avro's binary encoding of `schema` (a parsed
    schema, see `parse_avro_schema`), which goes into the SCHEMA header."""
    parts = [_I32.pack(BLOCK_CONTENT_VERSION), _I32.pack(len(records))]
    for record in records:
        parts += [_I32.pack(len(record)), record]
    schema_json = json.dumps(named_once(schema), separators=(",", ":"), ensure_ascii=False)
    full_header: dict[HeaderKey | int, str] = {header_key(k): v for k, v in _items(header)}
    full_header[HeaderKey.SCHEMA] = schema_json  # replaces an existing entry in place
    return encode_block(BlockType.AVRO_DATA, full_header, b"".join(parts))


def encode_parquet_data_block(table: pa.Table, header: Header, **parquet_options: Any) -> bytes:
    """A PARQUET_DATA block: the whole Parquet file of `table`, written with `parquet_options`
    (`pyarrow.parquet.write_table` arguments; snappy and page checksums unless they say otherwise).

    The header must carry INSTANT_TIME and SCHEMA (the writer's Avro schema).
    """
    _require(header, HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA)
    sink = io.BytesIO()
    if has_field_ids(table.schema):  # Hudi's blocks carry no field ids
        table = table.cast(without_field_ids(table.schema))
    pq.write_table(table, sink, **{"compression": "snappy", "write_page_checksum": True, **parquet_options})
    return encode_block(BlockType.PARQUET_DATA, header, sink.getvalue())


def encode_delete_block(
    record_keys: Sequence[str | None],
    partition_paths: Sequence[str | None],
    ordering_values: Sequence[pa.Array],
    header: Header,
    form: str = "union",
) -> bytes:
    """A DELETE block (content version 3) of the given keys.

    Args:
        ordering_values: one array per ordering field; empty writes Hudi's default IntWrapper(0),
            which readers treat as commit-time ordering.
        form: "union" (the single ordering value's wrapper, as every Hudi release writes) or
            "array" (an ArrayWrapper of the values of several ordering fields, Hudi 1.1+).
    """
    _require(header, HeaderKey.INSTANT_TIME)
    payload = encode_delete_payload(list(record_keys), list(partition_paths), list(ordering_values), form)
    content = _I32.pack(BLOCK_CONTENT_VERSION) + _I32.pack(len(payload)) + payload
    return encode_block(BlockType.DELETE, header, content)


def encode_command_block(header: Header) -> bytes:
    """A rollback COMMAND block: INSTANT_TIME rolls back the blocks of TARGET_INSTANT_TIME."""
    _require(header, HeaderKey.INSTANT_TIME, HeaderKey.TARGET_INSTANT_TIME)
    full_header: dict[HeaderKey | int, str] = {header_key(k): v for k, v in _items(header)}
    full_header.setdefault(HeaderKey.COMMAND_BLOCK_TYPE, ROLLBACK_COMMAND)
    return encode_block(BlockType.COMMAND, full_header, b"")


def write_log_file(storage: Storage, path: str, blocks: Iterable[bytes]) -> None:
    """Create the log file `path` holding `blocks`, durably (fsync).

    Raises:
        WriteError: the file exists (Hudi rolls over to the next log version instead).
    """
    if not storage.create_if_absent(path, blocks, durable=True):
        raise WriteError(f"log file {path} exists; write the next log version instead", path=path)


def append_log_blocks(storage: Storage, path: str, blocks: Iterable[bytes]) -> None:
    """Append `blocks` to the existing log file `path`, after all its bytes, durably (fsync)."""
    try:
        size = storage.file_size(path)
    except FileNotFoundError:
        size = 0  # extend_log_file names the missing file
    extend_log_file(storage, path, size, blocks)


def extend_log_file(storage: Storage, path: str, valid_size: int, blocks: Iterable[bytes]) -> None:
    """Append `blocks` to the log file `path` after its first `valid_size` bytes, durably (fsync):
    whatever follows them (a torn block of a writer that died appending) is cut off first.

    Raises:
        WriteError: `path` does not exist or is shorter than `valid_size`.
    """
    try:
        size = storage.write_after(path, valid_size, blocks)
    except FileNotFoundError as exc:
        raise WriteError(f"log file {path} does not exist; create it with write_log_file", path=path) from exc
    if size < valid_size:
        raise WriteError(f"log file {path} holds {size} bytes, fewer than the {valid_size} written to it", path=path)

