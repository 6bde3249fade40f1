"""Corrupt regions of log files: skipped as Hudi skips them, unless completed commits wrote them.

Hudi's log reader skips a block that fails its checks (the torn tail of an append that died is
the expected case) and goes on. A block inside the bytes a completed commit appended (its write
stat: `logOffset` to `fileSizeInBytes`) was written whole and committed: when it cannot be read,
or the file ends before those bytes, its records are lost. Reads raise `CommittedDataError` for
that by default; `corrupt="skip"` keeps Hudi's skipping and reports every region skipped.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass

from shim.errors import CommittedDataError, InvalidArgumentError
from shim.log.reader import LogFileContents
from shim.read.committed import CommittedFiles
from shim.scan_options import CorruptMode

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
    """How a read of one file slice treats corrupt regions of its log files; `found` tells
    whether it met any (the slice's merge is then not remembered: each read meets them anew)."""

    committed: CommittedFiles
    partition: str
    read_instant: str
    mode: CorruptMode = "error"
    skipped: SkippedBlocks | None = None
    found: bool = False

    def check(self, contents: LogFileContents) -> None:
        """Raise for committed bytes of the file that cannot be read (unless skipping them);
        record the regions skipped.

        Raises:
            CommittedDataError: naming the file, the offset and the commit that wrote the bytes.
        """
        path, size = contents.path, len(contents.data)
        ranges = self.committed.log_ranges(self.partition, os.path.basename(path), self.read_instant)
        if not contents.corrupt_regions and all(r.end <= size for r in ranges):
            return
        self.found = True
        found: list[SkippedBlock] = []
        for (start, end), reason in zip(contents.corrupt_regions, contents.corrupt_reasons, strict=True):
            hit = next((r for r in ranges if r.start < end and start < r.end), None)
            found.append(SkippedBlock(path, start, end - start, reason, hit.instant if hit else None))
        cut = max(ranges, key=lambda r: r.end, default=None)
        if cut is not None and cut.end > size and not any(s.offset + s.length == size and s.instant for s in found):
            found.append(SkippedBlock(path, size, cut.end - size,
                                      f"the file ends at byte {size}, before the end of what was appended", cut.instant))
        lost = [block for block in found if block.instant is not None]
        if lost and self.mode == "error":
            first = lost[0]
            raise CommittedDataError(
                f"{path}: log bytes at offset {first.offset} cannot be read ({first.reason}), but the completed "
                f"commit {first.instant} appended them: its records would be lost; "
                "read with corrupt='skip' to go on without them, as Hudi does",
                path=path, offset=first.offset, instant=first.instant)
        if self.skipped is not None:
            for block in found:
                self.skipped.add(block)

