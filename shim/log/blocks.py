"""Hudi log blocks: block types, header keys, and the parsed (not yet decoded) block value."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shim.avro.schema import parse_avro_schema

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1
"""The only log format version Hudi has written since 0.x: blocks with type, header, footer, length."""
BLOCK_CONTENT_VERSION = 3
"""Version Hudi writes at the start of Avro data and delete block contents (HoodieLogBlock.version)."""
ROLLBACK_COMMAND = "0"
"""COMMAND_BLOCK_TYPE value of a rollback command block (HoodieCommandBlockTypeEnum ordinal)."""


class BlockType(enum.IntEnum):
    """Block type ordinal as written after the format version (HoodieLogBlockType)."""

    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE = 4
    PARQUET_DATA = 5
    CDC = 6


class HeaderKey(enum.IntEnum):
    """Header and footer entry keys (HoodieLogBlock.HeaderMetadataType ordinals)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


def header_key(key: int) -> HeaderKey | int:
    """The HeaderKey of an ordinal; unknown ordinals (newer Hudi) stay plain ints."""
    try:
        return HeaderKey(key)
    except ValueError:
        return key


@dataclass(frozen=True, slots=True)
class LogBlock:
    """One block of a log file, located but not decoded.

    Attributes:
        path: the log file.
        offset: byte offset of the block's magic.
        block_type: what the content holds.
        header: header entries; keys Hudi added after this code are kept as ints.
        footer: footer entries (Hudi writes none).
        content_offset: byte offset of the content in the file.
        content_length: length of the content in bytes.
    """

    path: str
    offset: int
    block_type: BlockType
    header: Mapping[HeaderKey | int, str]
    footer: Mapping[HeaderKey | int, str]
    content_offset: int
    content_length: int

    @property
    def instant_time(self) -> str | None:
        """The instant that wrote the block (INSTANT_TIME)."""
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        """The instant a command block acts on (TARGET_INSTANT_TIME)."""
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema(self) -> dict[str, Any] | None:
        """The writer's Avro schema from the SCHEMA header, parsed; None when absent."""
        text = self.header.get(HeaderKey.SCHEMA)
        return None if text is None else parse_avro_schema(text)

    @property
    def is_rollback_command(self) -> bool:
        """A command block rolling back the blocks of TARGET_INSTANT_TIME."""
        return (
            self.block_type is BlockType.COMMAND
            and self.header.get(HeaderKey.COMMAND_BLOCK_TYPE, "").strip() == ROLLBACK_COMMAND
        )

    @property
    def compacted_block_times(self) -> tuple[str, ...]:
        """Instants of the blocks a log-compacted block replaces (COMPACTED_BLOCK_TIMES, comma-separated)."""
        text = self.header.get(HeaderKey.COMPACTED_BLOCK_TIMES)
        if not text:
            return ()
        return tuple(part.strip() for part in text.split(",") if part.strip())
