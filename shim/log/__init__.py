"""Hudi log files: block layout, reading (with Hudi's corrupt-block recovery), decoding, writing."""

from __future__ import annotations

from shim.log.blocks import BlockType, HeaderKey, LogBlock
from shim.log.delete import DeleteRecords, decode_delete_block
from shim.log.reader import (
    CorruptBlockWarning,
    CorruptRegion,
    LogFileContents,
    block_avro_schema,
    data_block_schema,
    decode_data_block,
    parse_log_bytes,
    read_log_file,
)
from shim.log.writer import (
    append_log_blocks,
    encode_avro_data_block,
    encode_command_block,
    encode_delete_block,
    encode_parquet_data_block,
    extend_log_file,
    write_log_file,
)

__all__ = [
    "BlockType",
    "CorruptBlockWarning",
    "CorruptRegion",
    "DeleteRecords",
    "HeaderKey",
    "LogBlock",
    "LogFileContents",
    "append_log_blocks",
    "block_avro_schema",
    "data_block_schema",
    "decode_data_block",
    "decode_delete_block",
    "encode_avro_data_block",
    "encode_command_block",
    "encode_delete_block",
    "encode_parquet_data_block",
    "extend_log_file",
    "parse_log_bytes",
    "read_log_file",
    "write_log_file",
]
