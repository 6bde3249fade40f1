"""Which log blocks of a file slice a read sees, in the order their records apply.

Hudi's log scanner rules (`BaseHoodieLogRecordReader.scanInternal`):
- corrupt blocks are skipped (the reader already warned about them), unless a completed commit
  wrote them or Hudi itself could not read them (`shim.read.damage`), and so is a block that
  disagrees with the commit that appended it (another instant, type or schema: a damaged header);
- data and delete blocks whose instant is after the read instant, or not a completed write, are
  skipped (uncommitted data is never visible);
- a rollback command block removes every earlier block written by its target instant;
- a log-compaction block (`COMPACTED_BLOCK_TIMES`) replaces the blocks of the instants it
  compacted, taking the place of the newest of them;
- partial-update blocks (`IS_PARTIAL`) are merged as `shim.read.partial_merge` says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shim.errors import CorruptFileError
from shim.layout.committed import CommittedRange
from shim.layout.table_schema import OPERATION_COLUMN
from shim.log.blocks import BlockType, LogBlock
from shim.log.reader import LogFileContents, block_avro_schema, read_log_file
from shim.read.damage import LogDamage
from shim.schema import META_FIELD_NAMES
from shim.timeline.instant import instant_key
from shim.timeline.timeline import Timeline

DATA_BLOCKS = (BlockType.AVRO_DATA, BlockType.PARQUET_DATA)
_WRITER_FIELDS = frozenset(META_FIELD_NAMES) | {OPERATION_COLUMN}
"""Columns a block's schema holds beyond the commit's (which leaves the meta columns out)."""


@dataclass(frozen=True, slots=True)
class VisibleBlock:
    """A data or delete block to apply, with the file it was read from."""

    contents: LogFileContents
    block: LogBlock


def visible_blocks(log_paths: Sequence[str], timeline: Timeline, read_instant: str,
                   damage: LogDamage | None = None, *, hfile_blocks: bool = False) -> list[VisibleBlock]:
    """The data and delete blocks a read as of `read_instant` applies, in order; `damage` decides
    about corrupt regions and damaged blocks (without: regions Hudi skips are skipped, anything
    else raises `CorruptFileError`). HFile data blocks are kept with `hfile_blocks` (the metadata
    table's logs hold them), else they are damage (a data table's writers never append one)."""
    kept: list[VisibleBlock] = []
    cdc = timeline.config.cdc_enabled
    for path in log_paths:
        contents = read_log_file(timeline.storage, path)
        if damage is not None:
            damage.check(contents)
        else:
            contents.raise_unreadable()
        for block in contents.blocks:
            written = damage.written_by(contents, block) if damage is not None else None
            problem = _damaged(contents, block, written, damage, cdc, hfile_blocks)
            if problem is not None:
                if damage is None:
                    raise CorruptFileError(f"{path}: log block at byte offset {block.offset} is corrupt: {problem}",
                                           path=path, offset=block.offset)
                damage.reject(contents, block, problem, written)
                continue
            kind = block.block_type
            if kind is BlockType.CDC:
                continue
            if kind is BlockType.COMMAND:
                target = block.target_instant_time
                kept = [v for v in kept if v.block.instant_time != target]
                continue
            instant = block.instant_time
            assert instant is not None
            if instant_key(instant) > instant_key(read_instant) or not timeline.is_committed(instant, read_instant):
                continue
            kept.append(VisibleBlock(contents, block))
    return _apply_log_compaction(kept)


def _damaged(contents: LogFileContents, block: LogBlock, written: CommittedRange | None,
             damage: LogDamage | None, cdc: bool, hfile_blocks: bool = False) -> str | None:
    """Why a block that parsed cannot be what a data table's writers append (None: it can).

    Inside the bytes a visible commit appended (`written`), the block must be a data or delete
    block (or a change-data-capture block, on tables that keep them) of that very instant, and
    a data block's schema may name no top-level column the commit's schema lacks.
    """
    kind = block.block_type
    if kind is BlockType.HFILE and not hfile_blocks:
        return "an HFile block, which Hudi writes only to the metadata table"
    if kind is BlockType.COMMAND:
        if not block.is_rollback_command:
            return "a command block that is not a rollback (the only command Hudi writes)"
        return f"a rollback command block inside what write {written.instant} appended" if written else None
    if kind is BlockType.CDC:
        return "a change-data-capture block on a table that keeps none" if written and not cdc else None
    instant = block.instant_time
    if instant is None:
        return "a data or delete block without an INSTANT_TIME header"
    if written is not None and instant != written.instant:
        return f"its INSTANT_TIME {instant!r} is not {written.instant}, the commit that appended it"
    if kind not in DATA_BLOCKS:
        return None  # (a delete block, or an HFile block of the metadata table: its own reader checks it)
    try:
        schema = block_avro_schema(contents, block)
    except CorruptFileError as exc:
        return exc.message.removeprefix(f"{contents.path}: ")
    if written is None or damage is None:
        return None
    expected = damage.committed.schema_fields(written.instant)
    names = {str(field.get("name")) for field in schema.get("fields") or () if isinstance(field, dict)}
    unknown = sorted(names - (expected or names) - _WRITER_FIELDS)
    if unknown:
        return (f"its schema names columns the schema of commit {written.instant} lacks "
                f"({', '.join(repr(n) for n in unknown[:5])})")
    return None


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
