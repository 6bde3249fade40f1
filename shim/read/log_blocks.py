"""Which log blocks of a file slice a read sees, in the order their records apply.

Hudi's log scanner rules (`BaseHoodieLogRecordReader.scanInternal`):
- corrupt blocks are skipped (the reader already warned about them), unless a completed commit
  wrote them (`shim.read.damage`);
- data and delete blocks whose instant is after the read instant, or not a completed write, are
  skipped (uncommitted data is never visible);
- a rollback command block removes every earlier block written by its target instant;
- a log-compaction block (`COMPACTED_BLOCK_TIMES`) replaces the blocks of the instants it
  compacted, taking the place of the newest of them;
- partial-update blocks (`IS_PARTIAL`) and non-rollback command blocks are not supported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shim.errors import UnsupportedFeatureError
from shim.log.blocks import BlockType, HeaderKey, LogBlock
from shim.log.reader import LogFileContents, read_log_file
from shim.read.damage import LogDamage
from shim.timeline.instant import instant_key
from shim.timeline.timeline import Timeline

DATA_BLOCKS = (BlockType.AVRO_DATA, BlockType.PARQUET_DATA)


@dataclass(frozen=True, slots=True)
class VisibleBlock:
    """A data or delete block to apply, with the file it was read from."""

    contents: LogFileContents
    block: LogBlock


def visible_blocks(log_paths: Sequence[str], timeline: Timeline, read_instant: str,
                   damage: LogDamage | None = None) -> list[VisibleBlock]:
    """The data and delete blocks a read as of `read_instant` applies, in order; `damage` decides
    about corrupt regions (without: skipped, as Hudi does)."""
    kept: list[VisibleBlock] = []
    for path in log_paths:
        contents = read_log_file(path)
        if damage is not None:
            damage.check(contents)
        for block in contents.blocks:
            kind = block.block_type
            if kind is BlockType.CORRUPT or kind is BlockType.CDC:
                continue
            if kind is BlockType.COMMAND:
                if not block.is_rollback_command:
                    raise UnsupportedFeatureError(
                        f"{path}: command block at offset {block.offset} is not a rollback",
                        feature="log-command-block",
                        path=path,
                    )
                target = block.target_instant_time
                kept = [v for v in kept if v.block.instant_time != target]
                continue
            if kind is BlockType.HFILE:
                raise UnsupportedFeatureError(
                    f"{path}: HFile data blocks (offset {block.offset}) are only written to the metadata "
                    "table; hudi-shim does not read them",
                    feature="hfile-log-block",
                    path=path,
                )
            if kind not in DATA_BLOCKS and kind is not BlockType.DELETE:
                continue
            instant = block.instant_time
            if instant is None or instant_key(instant) > instant_key(read_instant):
                continue
            if not timeline.is_committed(instant, read_instant):
                continue
            if (block.header.get(HeaderKey.IS_PARTIAL) or "").lower() == "true":
                raise UnsupportedFeatureError(
                    f"{path}: block at offset {block.offset} holds partial updates (IS_PARTIAL), "
                    "which hudi-shim does not merge",
                    feature="partial-update-block",
                    path=path,
                    instant=instant,
                )
            kept.append(VisibleBlock(contents, block))
    return _apply_log_compaction(kept)


def _apply_log_compaction(blocks: list[VisibleBlock]) -> list[VisibleBlock]:
    replaced_by: dict[str, str] = {}
    for visible in blocks:
        for original in visible.block.compacted_block_times:
            replaced_by[original] = visible.block.instant_time or ""
    if not replaced_by:
        return blocks

    def final(instant: str) -> str:
        seen = set()
        while instant in replaced_by and instant not in seen:
            seen.add(instant)
            instant = replaced_by[instant]
        return instant

    # Position of each compaction block = position of the newest original it covers.
    slot: dict[str, int] = {}
    for index, visible in enumerate(blocks):
        instant = visible.block.instant_time or ""
        if instant in replaced_by:
            slot[final(instant)] = index
    ordered: list[tuple[int, int, VisibleBlock]] = []
    for index, visible in enumerate(blocks):
        instant = visible.block.instant_time or ""
        if instant in replaced_by:
            continue
        ordered.append((slot.get(instant, index), index, visible))
    return [visible for _, _, visible in sorted(ordered, key=lambda item: (item[0], item[1]))]
