"""The active timeline of a table: which writes are complete, and as of when."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from typing import Any

from shim.errors import InstantNotFoundError
from shim.properties import TableConfig
from shim.storage import LocalStorage, Storage, as_storage, paths
from shim.timeline.instant import Action, Instant, State, instant_key, parse_instant_file_name
from shim.timeline.lsm import lsm_completion_times
from shim.timeline.metadata import CommitMetadata, decode_instant_content

_WRITE_TIMELINE = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.COMPACTION,
                   Action.LOG_COMPACTION, Action.CLUSTERING)
_STATE_ORDER = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}


class Timeline:
    """Instants of the active timeline (layout 1: `.hoodie/`, layout 2: `.hoodie/timeline/`).

    Instant times compare as Hudi compares them (second-granularity times end at .999). Reads see
    completed writes (commit, deltacommit, replacecommit; compaction and clustering once completed)
    whose instant time is at or before the read instant. Files and log blocks of instants older than
    the first active instant were archived after completing, so they count as committed.
    """

    def __init__(self, folder: str, instants: Iterable[Instant], config: TableConfig,
                 archived: dict[str, dict[str, object]] | None = None, *, storage: Storage | None = None) -> None:
        self.folder = folder
        self.config = config
        #: The table's storage (its root the table's); without one, the timeline folder's, and
        #: archived completion times are not looked up.
        self.storage = storage if storage is not None else LocalStorage(folder)
        self._knows_table = storage is not None
        self._archived_completions: dict[str, str] | None = None
        self._archived: dict[str, dict[str, object]] = archived or {}
        self.instants: tuple[Instant, ...] = tuple(
            sorted(instants, key=lambda i: (instant_key(i.requested_time), _STATE_ORDER[i.state]))
        )
        latest: dict[str, Instant] = {}
        for instant in self.instants:
            if instant.action is Action.SAVEPOINT:
                continue  # a savepoint takes the time of the commit it saves: it must not hide it
            latest[instant.requested_time] = instant  # the most advanced state wins
        self._by_time = latest
        self._writes = tuple(inst for inst in latest.values() if inst.is_completed and inst.action.writes_data)
        self._start = next((i.requested_time for i in self.instants if i.action in _WRITE_TIMELINE), None)
        self._metadata: dict[str, CommitMetadata] = {}
        self._lock = threading.Lock()

    @classmethod
    def load(cls, table: Storage | str, config: TableConfig) -> Timeline:
        """List the timeline folder of the table at the storage's root (or at a local path)."""
        storage = as_storage(table)
        folder = paths.timeline_folder(storage.root, config.timeline_path)
        instants = [inst for name in storage.list_names(folder) if (inst := parse_instant_file_name(name))]
        return cls(folder, instants, config, storage=storage)

    def including_archive(self, archived: Iterable[tuple[Instant, dict[str, object]]]) -> Timeline:
        """This timeline with archived completed instants (and their decoded contents) added before
        it: reads as of archived instants, and incremental windows over them, then know which
        commits completed when, and what they wrote."""
        known = {inst.requested_time for inst in self.instants}
        extra = [(inst, raw) for inst, raw in archived if inst.requested_time not in known]
        contents = {**self._archived, **{inst.file_name: raw for inst, raw in extra}}
        return Timeline(self.folder, [*self.instants, *(inst for inst, _ in extra)], self.config, contents,
                        storage=self.storage if self._knows_table else None)

    @property
    def includes_archive(self) -> bool:
        """Whether archived instants were added (`including_archive`)."""
        return bool(self._archived)

    # -- instants ---------------------------------------------------------------------------------

    def latest_state(self, requested_time: str) -> Instant | None:
        """The most advanced instant recorded for a requested time."""
        return self._by_time.get(requested_time)

    @property
    def start(self) -> str | None:
        """Requested time of the first write or compaction on the active timeline (in any state):
        data of older instants was archived after completing. Cleans and rollbacks do not count;
        they are archived apart from writes and may be older (Hudi's `isBeforeTimelineStarts`)."""
        return self._start

    def completed_writes(self, as_of: str | None = None) -> list[Instant]:
        """Completed data-writing instants at or before `as_of`, oldest first."""
        if as_of is None:
            return list(self._writes)
        return [inst for inst in self._writes if self._at_or_before(inst.requested_time, as_of)]

    def latest_write(self, as_of: str | None = None) -> Instant | None:
        """The newest completed write at or before `as_of`."""
        writes = self.completed_writes(as_of)
        return writes[-1] if writes else None

    def pending(self, *actions: Action) -> list[Instant]:
        """Requested or inflight instants of the given actions."""
        return [
            inst for inst in self._by_time.values() if not inst.is_completed and inst.action in actions
        ]

    def is_committed(self, instant_time: str, as_of: str | None = None) -> bool:
        """Whether data written by `instant_time` is visible to a read as of `as_of`.

        True for completed writes at or before `as_of`, and for instants older than the active
        timeline (archived instants are complete by construction).
        """
        if not self._at_or_before(instant_time, as_of):
            return False
        inst = self._by_time.get(instant_time)
        if inst is not None:
            return inst.is_completed and inst.action.writes_data
        start = self.start
        return start is not None and instant_key(instant_time) < instant_key(start)

    def is_archived(self, instant_time: str) -> bool:
        """Whether `instant_time` precedes the active timeline without being on it: it was
        archived after completing (Hudi's `CompletionTimeQueryView.isArchived`)."""
        start = self.start
        return (self._by_time.get(instant_time) is None and start is not None
                and instant_key(instant_time) < instant_key(start))

    def completion_time(self, instant_time: str) -> str | None:
        """Completion time of a completed instant (layout 2), its requested time on layout 1; None
        while it is pending. An archived instant's comes from the archive (the LSM timeline of
        layout 2 keeps it; read once, when first asked), else is its requested time."""
        inst = self._by_time.get(instant_time)
        if inst is None or not inst.is_completed:
            if self.is_archived(instant_time):
                return self._archived_completion_time(instant_time)
            return None
        return inst.completion_time or inst.requested_time

    def _archived_completion_time(self, instant_time: str) -> str:
        if not self._knows_table or self.config.timeline_layout_version < 2:
            return instant_time
        with self._lock:
            if self._archived_completions is None:
                history = paths.archive_folder(self.storage.root, self.config.archive_path)
                self._archived_completions = lsm_completion_times(self.storage, history)
        return self._archived_completions.get(instant_time, instant_time)

    def resolve_as_of(self, as_of: str | None) -> str | None:
        """The read instant: the newest completed write at or before `as_of` (None: empty table)."""
        latest = self.latest_write(as_of)
        if latest is None:
            if as_of is not None and self.completed_writes():
                raise InstantNotFoundError(
                    f"no completed commit at or before {as_of}; the first is "
                    f"{self.completed_writes()[0].requested_time}",
                    instant=as_of,
                )
            return None
        return latest.requested_time

    @staticmethod
    def _at_or_before(instant_time: str, as_of: str | None) -> bool:
        return as_of is None or instant_key(instant_time) <= instant_key(as_of)

    # -- instant contents -------------------------------------------------------------------------

    def read_raw(self, instant: Instant) -> dict[str, object]:
        """Decoded content of an instant file (JSON or Avro), or of an archived instant."""
        archived = self._archived.get(instant.file_name)
        if archived is not None:
            return archived
        path = os.path.join(self.folder, instant.file_name)
        return decode_instant_content(self.storage.read_bytes(path), path)

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """Commit metadata of a completed write (cached)."""
        key = instant.file_name
        with self._lock:
            cached = self._metadata.get(key)
        if cached is not None:
            return cached
        path = os.path.join(self.folder, instant.file_name)
        metadata = CommitMetadata.from_dict(self.read_raw(instant), path)
        with self._lock:
            self._metadata[key] = metadata
        return metadata

    def replaced_file_groups(self, as_of: str | None = None) -> set[tuple[str, str]]:
        """(partition, file id) of file groups replaced by completed replacecommits up to `as_of`."""
        replaced: set[tuple[str, str]] = set()
        for inst in self.completed_writes(as_of):
            if inst.action is not Action.REPLACE_COMMIT:
                continue
            for partition, file_ids in self.commit_metadata(inst).replaced_file_ids.items():
                replaced.update((partition, file_id) for file_id in file_ids)
        return replaced

    def pending_compaction_operations(self) -> list[tuple[str, dict[str, object]]]:
        """(instant, operation) for the operations (`HoodieCompactionOperation`) of every pending
        compaction's plan; a plan file that is gone counts as empty."""
        found: list[tuple[str, dict[str, object]]] = []
        for instant in self.pending(Action.COMPACTION):
            path = os.path.join(self.folder, f"{instant.requested_time}.compaction.requested")
            try:
                plan = decode_instant_content(self.storage.read_bytes(path), path)
            except FileNotFoundError:
                continue
            operations: Any = plan.get("operations") or ()
            found.extend((instant.requested_time, dict(op)) for op in operations)
        return found

    def latest_clean(self) -> tuple[Instant, str] | None:
        """The newest completed clean and the earliest commit it retained ("" when its policy
        records none, as Hudi's KEEP_LATEST_FILE_VERSIONS); None when the timeline holds no clean."""
        cleans = [i for i in self._by_time.values() if i.action is Action.CLEAN and i.is_completed]
        if not cleans:
            return None
        latest = cleans[-1]
        retained = self.read_raw(latest).get("earliestCommitToRetain")
        return latest, str(retained or "")

    def latest_commit_metadata(self, as_of: str | None = None) -> tuple[Instant, CommitMetadata] | None:
        """Metadata of the newest completed write at or before `as_of` that records a schema."""
        for inst in reversed(self.completed_writes(as_of)):
            metadata = self.commit_metadata(inst)
            if metadata.schema or metadata.latest_schema:
                return inst, metadata
        return None
