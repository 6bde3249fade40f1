"""Corrupt regions of log files: skipped as Hudi skips them, unless completed commits wrote them.

Hudi's log reader skips a block that fails its checks (the torn tail of an append that died is
the expected case) and goes on. A block inside the bytes a completed commit appended (its write
stat: `logOffset` to `fileSizeInBytes`) was written whole and committed: when it cannot be read,
when it disagrees with that commit (another instant, a block type a write does not append, a
schema naming columns the commit's schema lacks), or when the file ends before those bytes, its
records are lost or wrong. Reads raise `CommittedDataError` for that by default, and
`CorruptFileError` for a block no known commit wrote that Hudi itself could not read;
`corrupt="skip"` skips both, as Hudi skips what it can, and reports every region skipped.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass
from typing import Literal

from shim.errors import CommittedDataError, CorruptFileError, InvalidArgumentError
from shim.layout.committed import CommittedFiles, CommittedRange
from shim.log.blocks import LogBlock
from shim.log.reader import LogFileContents

CorruptMode = Literal["error", "skip"]
"""What a read does with a damaged log block a completed commit wrote (see `corrupt_mode`)."""

CORRUPT_MODES: tuple[CorruptMode, ...] = ("error", "skip")
SKIPPED_BLOCKS_KEY = b"hudi-shim-skipped-blocks"
"""Schema metadata key (and stream batch metadata key) of the skipped-blocks report (JSON)."""


def corrupt_mode(value: object) -> CorruptMode:
    """`value` as a corrupt-block mode, or an error naming the accepted ones."""
    if value not in CORRUPT_MODES:
        raise InvalidArgumentError(f"corrupt must be 'error' or 'skip', not {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class SkippedBlock:
    """A region of a log file a read skipped.

    Attributes:
        path: the log file.
        offset, length: the region (bytes past the end of the file when it was cut short).
        reason: why it could not be read.
        instant: the completed commit whose appended bytes it lies in (None: no known commit
            wrote it, as for the torn tail of a failed append).
    """

    path: str
    offset: int
    length: int
    reason: str
    instant: str | None = None


class SkippedBlocks:
    """The corrupt log regions a scan skipped, collected as it meets them (from any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blocks: list[SkippedBlock] = []

    def add(self, block: SkippedBlock) -> None:
        with self._lock:
            self._blocks.append(block)

    @property
    def blocks(self) -> tuple[SkippedBlock, ...]:
        with self._lock:
            return tuple(self._blocks)

    def __len__(self) -> int:
        with self._lock:
            return len(self._blocks)

    def document(self, relative_to: str | None = None) -> dict[str, object]:
        """`{"count", "blocks": [{"path", "offset", "length", "reason", "instant"}]}`, paths relative
        to `relative_to` when given."""
        blocks = []
        for block in self.blocks:
            entry = asdict(block)
            if relative_to is not None:
                entry["path"] = os.path.relpath(block.path, relative_to)
            blocks.append(entry)
        return {"count": len(blocks), "blocks": blocks}

    def metadata(self, relative_to: str | None = None) -> dict[bytes, bytes]:
        """The report as schema metadata (`SKIPPED_BLOCKS_KEY`: the JSON document)."""
        return {SKIPPED_BLOCKS_KEY: json.dumps(self.document(relative_to)).encode("utf-8")}


@dataclass(slots=True)
class LogDamage:
    """How a read of one file slice treats corrupt regions and damaged blocks of its log files;
    `found` tells whether it met any (the slice's merge is then not remembered: each read meets
    them anew)."""

    committed: CommittedFiles
    partition: str
    read_instant: str
    mode: CorruptMode = "error"
    skipped: SkippedBlocks | None = None
    found: bool = False

    def check(self, contents: LogFileContents) -> None:
        """Raise for committed bytes of the file that cannot be read, and for blocks Hudi itself
        would fail on (unless skipping them); record the regions skipped.

        Raises:
            CommittedDataError: naming the file, the offset and the commit that wrote the bytes.
            CorruptFileError: a malformed block no known commit wrote, naming file and offset.
        """
        path, size = contents.path, len(contents.data)
        ranges = self._ranges(contents)
        if not contents.corrupt and all(r.end <= size for r in ranges):
            return
        self.found = True
        found: list[SkippedBlock] = []
        for region in contents.corrupt:
            hit = next((r for r in ranges if r.start < region.end and region.start < r.end), None)
            found.append(SkippedBlock(path, region.start, region.end - region.start, region.reason,
                                      hit.instant if hit else None))
        cut = max(ranges, key=lambda r: r.end, default=None)
        if cut is not None and cut.end > size and not any(s.offset + s.length == size and s.instant for s in found):
            found.append(SkippedBlock(path, size, cut.end - size,
                                      f"the file ends at byte {size}, before the end of what was appended", cut.instant))
        if self.mode == "error":
            lost = next((block for block in found if block.instant is not None), None)
            if lost is not None:
                raise _lost(lost)
            unreadable = next((r for r in contents.corrupt if not r.hudi_skips), None)
            if unreadable is not None:
                contents.raise_unreadable()
        if self.skipped is not None:
            for block in found:
                self.skipped.add(block)

    def written_by(self, contents: LogFileContents, block: LogBlock) -> CommittedRange | None:
        """The committed append the block lies in (None: no write visible to this read made it)."""
        return next((r for r in self._ranges(contents) if r.start <= block.offset < r.end), None)

    def reject(self, contents: LogFileContents, block: LogBlock, reason: str,
               written: CommittedRange | None) -> None:
        """A block that must not be applied as it reads: raise (naming file, offset and the
        commit that appended it, if known), or skip it and report it when skipping.

        Raises:
            CommittedDataError: a commit visible to this read appended the block.
            CorruptFileError: no known commit did.
        """
        self.found = True
        length = block.content_offset + block.content_length + 8 - block.offset
        skipped = SkippedBlock(contents.path, block.offset, length, reason, written.instant if written else None)
        if self.mode == "error":
            if written is not None:
                raise _lost(skipped)
            raise CorruptFileError(f"{contents.path}: log block at byte offset {block.offset} is corrupt: {reason}",
                                   path=contents.path, offset=block.offset)
        if self.skipped is not None:
            self.skipped.add(skipped)

    def undecodable(self, contents: LogFileContents, block: LogBlock, error: CorruptFileError) -> None:
        """A block whose content does not decode: raise the error (as `CommittedDataError` naming
        the commit, when a visible commit appended it), or skip the block when skipping."""
        written = self.written_by(contents, block)
        if self.mode == "error" and written is None:
            raise error
        self.reject(contents, block, error.message.removeprefix(f"{contents.path}: "), written)

    def _ranges(self, contents: LogFileContents) -> list[CommittedRange]:
        return self.committed.log_ranges(self.partition, os.path.basename(contents.path), self.read_instant)


def _lost(block: SkippedBlock) -> CommittedDataError:
    return CommittedDataError(
        f"{block.path}: log bytes at offset {block.offset} cannot be read ({block.reason}), but the completed "
        f"commit {block.instant} appended them: its records would be lost; "
        "read with corrupt='skip' to go on without them, as Hudi does",
        path=block.path, offset=block.offset, instant=block.instant)
