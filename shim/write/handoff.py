"""Rows one write task hands to another, so that a file group's base file is written once.

Without a shuffle by bucket, several Spark tasks hold rows of the same file group, and each task
that reaches the group after another has written it must rewrite the whole base file. So a task
first hands over the rows of each group that gets a base file: an Arrow IPC file (meta columns
filled, file name left blank) in the commit's state folder, listed in the group's state
(`GroupState.spills`). Then, taking the groups in an order of its own, it writes each group whose
hand-over is still pending, taking in every pending hand-over at once; a group whose hand-over
another task took in is done. Rows handed over after a group's base file was written are merged
by one more rewrite (copy-on-write) or logged onto it (merge-on-read). The files live in the
marker folder, which the commit (or the rollback of a failed write) removes.

Tasks running at once meet before writing (`HandOverTurn`): each holds a lock of its own from the
moment it starts receiving rows until its hand-over is done, and writes only once it can take
every other such lock in turn, or has waited as long as its own hand-over took (at least a
second). So a task that got its rows first does not write file groups that a task still
preparing would then have to rewrite (or, merge-on-read, log onto). Waiting never changes what is
written, only who writes it; a task that dies releases its lock with its process; tasks starting
later (a second wave of Spark tasks) meet groups already written.
"""

from __future__ import annotations

import fcntl
import glob
import os
import time
from typing import IO, Self

import pyarrow as pa

from shim.storage import Storage
from shim.write.group_state import group_key


def spill_name(partition_path: str, bucket: int, partition_id: int) -> str:
    """The hand-over file of one Spark partition for one file group (a retried task attempt
    replaces its predecessor's)."""
    return f"{group_key(partition_path, bucket)}.p{partition_id}.arrow"


def write_spill(storage: Storage, folder: str, name: str, rows: pa.Table) -> None:
    """Write `rows` as `folder/name` (Arrow IPC file, appearing whole)."""
    storage.make_dirs(folder)
    with storage.atomic_output(os.path.join(folder, name)) as sink, pa.ipc.new_file(sink, rows.schema) as writer:
        writer.write_table(rows)


def read_spill(storage: Storage, folder: str, name: str) -> pa.Table:
    """The rows of a hand-over file (memory-mapped, no copy, where local)."""
    with storage.random_access(os.path.join(folder, name)) as source:
        return pa.ipc.open_file(source).read_all()


class HandOverTurn:
    """This task's place in the meeting of tasks that hand over rows to each other (see above)."""

    def __init__(self, storage: Storage, folder: str, partition_id: int) -> None:
        self.storage = storage
        self.folder = os.path.join(folder, "tasks")
        self.own = os.path.join(self.folder, f"p{partition_id}.lock")
        self._handle: IO[bytes] | None = None
        self._started = time.monotonic()

    def __enter__(self) -> Self:
        """Announce that this task is preparing rows to hand over."""
        self._handle = self.storage.open_lock(self.own)
        fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX)
        self._started = time.monotonic()
        return self

    def handed_over(self) -> None:
        """This task's rows are handed over (or it has none to hand): release its lock."""
        if self._handle is not None:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None

    def wait_for_others(self, at_least_s: float = 1.0) -> None:
        """Wait until every other task that announced itself has handed over its rows, but no
        longer than this task took to hand over its own (or `at_least_s`): a task whose rows come
        much later (skew, a slow upstream) is not waited for, its slot not held idle."""
        deadline = time.monotonic() + max(at_least_s, time.monotonic() - self._started)
        for path in sorted(glob.glob(os.path.join(self.folder, "p*.lock"))):
            if path != self.own and not _released_before(self.storage, path, deadline):
                return

    def __exit__(self, *exc: object) -> None:
        self.handed_over()


def _released_before(storage: Storage, lock_path: str, deadline: float) -> bool:
    """Whether the lock on `lock_path` is (or comes) free before `deadline` (monotonic time)."""
    with storage.open_lock(lock_path) as handle:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.002)
            else:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
                return True
