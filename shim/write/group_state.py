"""Per-commit state of each file group: a lock and the files written so far.

Spark hands the write tasks whatever partitioning the DataFrame has, so the records of one file
group can reach several tasks. Those tasks take turns under an exclusive `flock` on
`.hoodie/.temp/<instant>/.shim/<group>.lock`; each reads the group's state file (`<group>.json`:
the in-progress base file, the log files appended, the rows other tasks handed over), builds on
it, and writes it back. A base file rewritten by a later task replaces the earlier one, which is
deleted. The driver commits exactly what the state files list. The folder sits under the marker folder, which commit and rollback
remove; its names carry no `.marker.` so Hudi's marker readers skip them.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from shim.storage import Storage, join
from shim.write.data_files import FileWrite
from shim.write.markers import list_markers, marker_folder

STATE_FOLDER = ".shim"


@dataclass(frozen=True, slots=True)
class GroupState:
    """What one commit has written to one file group so far."""

    partition_path: str
    bucket: int
    file_id: str
    base: FileWrite | None = None
    logs: tuple[FileWrite, ...] = field(default=())
    spills: tuple[str, ...] = field(default=())  # handed-over rows not yet in a base file (`handoff`)
    rewrites: int = 0  # times a base file this commit wrote was rewritten to take in more rows
    logged: tuple[str, ...] = field(default=())  # keys and ordering values of each block logged (`task`)

    @property
    def writes(self) -> tuple[FileWrite, ...]:
        return ((self.base,) if self.base is not None else ()) + self.logs

    def to_json(self) -> str:
        return json.dumps({
            "partition_path": self.partition_path,
            "bucket": self.bucket,
            "file_id": self.file_id,
            "base": _fields(self.base) if self.base is not None else None,
            "logs": [_fields(log) for log in self.logs],
            "spills": list(self.spills),
            "rewrites": self.rewrites,
            "logged": list(self.logged),
        })

    @classmethod
    def from_json(cls, text: str) -> GroupState:
        raw = json.loads(text)
        return cls(
            raw["partition_path"],
            int(raw["bucket"]),
            raw["file_id"],
            FileWrite(**raw["base"]) if raw.get("base") else None,
            tuple(FileWrite(**log) for log in raw.get("logs") or ()),
            tuple(raw.get("spills") or ()),
            int(raw.get("rewrites") or 0),
            tuple(raw.get("logged") or ()),
        )


def _fields(write: FileWrite) -> dict[str, object]:
    """The fields of a (flat) FileWrite, without `dataclasses.asdict`'s deep copies."""
    return {name: getattr(write, name) for name in _FILE_WRITE_FIELDS}


_FILE_WRITE_FIELDS = tuple(f.name for f in dataclasses.fields(FileWrite))


def state_folder(table_path: str, instant: str) -> str:
    return os.path.join(marker_folder(table_path, instant), STATE_FOLDER)


def group_key(partition_path: str, bucket: int) -> str:
    digest = hashlib.sha1(partition_path.encode("utf-8")).hexdigest()[:16]
    return f"{digest}-{bucket:08d}"


@contextmanager
def locked_group(storage: Storage, instant: str, partition_path: str, bucket: int) -> Iterator[GroupHandle]:
    """Hold the file group's lock for this commit (waiting for it); yields its state handle."""
    with _locked(storage, instant, partition_path, bucket, wait=True) as handle:
        assert handle is not None
        yield handle


@contextmanager
def try_locked_group(storage: Storage, instant: str, partition_path: str, bucket: int) -> Iterator[GroupHandle | None]:
    """Like `locked_group`, but yields None at once when another task holds the lock."""
    with _locked(storage, instant, partition_path, bucket, wait=False) as handle:
        yield handle


@contextmanager
def _locked(storage: Storage, instant: str, partition_path: str, bucket: int, *, wait: bool) -> Iterator[
        GroupHandle | None]:
    table_path = storage.root
    folder = state_folder(table_path, instant)
    key = group_key(partition_path, bucket)
    with storage.open_lock(os.path.join(folder, f"{key}.lock")) as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield None
            return
        try:
            yield GroupHandle(storage, os.path.join(folder, f"{key}.json"))
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@dataclass(frozen=True, slots=True)
class GroupHandle:
    """The state file of a locked file group."""

    storage: Storage
    path: str

    def read(self) -> GroupState | None:
        try:
            return GroupState.from_json(self.storage.read_text(self.path))
        except FileNotFoundError:
            return None

    def write(self, state: GroupState) -> None:
        # Atomic (rename) but not fsynced: the state only matters while the write runs.
        self.storage.write_atomically(self.path, state.to_json().encode("utf-8"), durable=False)


def all_states(storage: Storage, instant: str) -> list[GroupState]:
    """Every file group state of a commit (read by the driver when committing)."""
    table_path = storage.root
    folder = state_folder(table_path, instant)
    states = []
    for name in sorted(storage.list_names(folder)):
        if name.endswith(".json"):
            states.append(GroupState.from_json(storage.read_text(os.path.join(folder, name))))
    return states


def record_replaced(storage: Storage, instant: str, partition_path: str, file_ids: list[str]) -> None:
    """Note the live file groups of a partition an insert_overwrite replaces (same from any task)."""
    table_path = storage.root
    folder = state_folder(table_path, instant)
    storage.make_dirs(folder)
    digest = hashlib.sha1(partition_path.encode("utf-8")).hexdigest()[:16]
    body = json.dumps({"partition_path": partition_path, "file_ids": sorted(file_ids)})
    storage.write_atomically(os.path.join(folder, f"replaced-{digest}.replace"), body.encode("utf-8"))


def all_replaced(storage: Storage, instant: str) -> dict[str, tuple[str, ...]]:
    """Partition -> file ids replaced, as recorded by the tasks."""
    table_path = storage.root
    folder = state_folder(table_path, instant)
    replaced: dict[str, tuple[str, ...]] = {}
    for name in storage.list_names(folder):
        if name.endswith(".replace"):
            raw = json.loads(storage.read_text(os.path.join(folder, name)))
            replaced[raw["partition_path"]] = tuple(raw["file_ids"])
    return replaced


def remove_unlisted_files(storage: Storage, instant: str, states: list[GroupState]) -> list[str]:
    """Delete files this commit's markers name but no file group state lists (left by failed or
    speculative task attempts), as Hudi's `finalizeWrite` reconciles data files against markers.

    Returns the paths deleted."""
    table_path = storage.root
    listed = {(s.partition_path, w.file_name) for s in states for w in s.writes}
    removed = []
    for marker in list_markers(storage, instant):
        if (marker.partition_path, marker.file_name) in listed:
            continue
        path = join(table_path, marker.partition_path, marker.file_name)
        if storage.remove(path, missing_ok=True):
            removed.append(path)
    return removed



def cut_unrecorded_log_tails(storage: Storage, states: list[GroupState]) -> list[str]:
    """Cut every log file this commit wrote back to the size its file group state records: bytes
    past it were appended by a task attempt that died before recording them (see
    `task._GroupWriter._write_log`). Returns the paths cut."""
    table_path = storage.root
    cut = []
    for state in states:
        for log in state.logs:
            path = join(table_path, state.partition_path, log.file_name)
            if storage.file_size(path) > log.file_size:
                storage.truncate(path, log.file_size)
                cut.append(path)
    return cut
