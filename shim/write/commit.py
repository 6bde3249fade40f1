"""The commit protocol: requested -> inflight -> completed, the completed file written last.

A reader only sees a write once its completed instant file exists, and that file appears in one
atomic rename, so a failed or killed write leaves at most an inflight instant that readers ignore.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from shim.errors import WriteError
from shim.properties import TableConfig
from shim.storage import Storage, paths
from shim.timeline.instant import Action
from shim.write.data_files import FileWrite


@dataclass(frozen=True, slots=True)
class CommitRecord:
    """What a completed commit records in its metadata."""

    writes: tuple[FileWrite, ...] = ()
    operation: str = "UPSERT"
    extra_metadata: Mapping[str, str] = field(default_factory=dict)
    replaced_file_ids: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    compacted: bool = False

    def to_json(self) -> dict[str, object]:
        """`HoodieCommitMetadata` (or `HoodieReplaceCommitMetadata`) as Hudi writes it in JSON."""
        by_partition: dict[str, list[dict[str, object]]] = {}
        for write in self.writes:
            by_partition.setdefault(write.partition_path, []).append(write.to_json())
        body: dict[str, object] = {
            "partitionToWriteStats": by_partition,
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "operationType": self.operation,
        }
        if self.replaced_file_ids:
            body["partitionToReplaceFileIds"] = {p: list(ids) for p, ids in self.replaced_file_ids.items()}
        return body


class InstantFiles:
    """Writes the timeline files of one instant on a table-version-6 timeline (layout 1)."""

    def __init__(self, storage: Storage, config: TableConfig, instant: str, action: Action) -> None:
        if config.timeline_layout_version != 1:
            raise WriteError(
                f"{storage.root}: hudi-shim writes table version 6 (timeline layout 1) only",
                path=storage.root,
            )
        self.storage = storage
        self.folder = paths.hoodie(storage.root)
        self.instant = instant
        self.action = action

    def _name(self, state: str) -> str:
        if state == "completed":
            return f"{self.instant}.{self.action.completed_as.value}"
        if state == "inflight" and self.action is Action.COMMIT:
            return f"{self.instant}.inflight"
        return f"{self.instant}.{self.action.value}.{state}"

    def path(self, state: str) -> str:
        return os.path.join(self.folder, self._name(state))

    def request(self, content: bytes = b"") -> None:
        """Write `<instant>.<action>.requested` (a plan for compaction and clustering): a create that
        fails where another writer made the name first (`storage.write_new`)."""
        if self.storage.exists(self.path("completed")) or not self.storage.write_new(self.path("requested"), content):
            raise WriteError(f"instant {self.instant} already exists on the timeline", instant=self.instant)

    def start(self, content: bytes = b"") -> None:
        """Write the inflight file: the write is under way."""
        self.storage.write_atomically(self.path("inflight"), content)

    def complete(self, record: CommitRecord) -> None:
        """Write the completed instant, last and atomically (it must not exist yet)."""
        body = json.dumps(record.to_json(), indent=2).encode()
        if not self.storage.write_new(self.path("completed"), body):
            raise WriteError(f"instant {self.instant} is already completed on the timeline", instant=self.instant)

    def remove_pending(self) -> None:
        """Delete the requested and inflight files (after a rollback)."""
        for state in ("inflight", "requested"):
            self.storage.remove(self.path(state), missing_ok=True)


def inflight_metadata(writes: Iterable[FileWrite] = (), operation: str = "UPSERT") -> bytes:
    """Content of an inflight commit file (Hudi writes commit metadata without results)."""
    return json.dumps(CommitRecord(tuple(writes), operation).to_json(), indent=2).encode()
