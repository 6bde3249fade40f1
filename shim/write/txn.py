"""One writer at a time: starting, completing and abandoning an instant on the timeline.

The protocol (table version 6, Hudi's heartbeat-based failure detection):
- Under a short table guard (`.hoodie/.aux/hudi-shim.lock`: an exclusive `flock` locally, released
  when the process dies; on an object store honouring conditional writes a lock object there,
  `shim.storage.object_lock`, which the writers of every machine take), the writer looks at the pending
  instants. A pending write whose heartbeat
  (`.hoodie/.heartbeat/<instant>`) is fresh belongs to a live writer: the new write fails with
  `ConcurrentWriteError`. A pending write with a stale or missing heartbeat failed: it is rolled
  back (files deleted, `.rollback` instant written). Then the new instant is requested (a create
  that fails where the name exists: `storage.write_new`) and its heartbeat started.
- While the write runs, its tasks keep the heartbeat fresh.
- The completed instant file is written last, atomically, under the table guard (so that no
  rollback of the instant runs between the check that it is pending and that write); then markers
  and heartbeat go.
- A failed job stops its heartbeat and leaves its inflight instant for the next writer to roll
  back; a killed job's heartbeat goes stale.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from shim.errors import ConcurrentWriteError, FileGoneError, HudiShimError, WriteError
from shim.properties import TableConfig
from shim.storage import Hold, Storage, paths
from shim.timeline.instant import Action, Instant, State, instant_key
from shim.timeline.timeline import Timeline
from shim.write import heartbeat
from shim.write.avro_metadata import decode_avro_record
from shim.write.clock import new_instant_time
from shim.write.commit import CommitRecord, InstantFiles
from shim.write.markers import delete_marker_folder
from shim.write.rollback import RollbackResult, rollback_failed_write

_WRITES = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)


@dataclass(frozen=True, slots=True)
class Transaction:
    """A started write: its instant and how long its heartbeat may stay silent."""

    storage: Storage
    instant: str
    action: Action
    timeout_s: float

    @property
    def table_path(self) -> str:
        return self.storage.root

    def files(self, config: TableConfig) -> InstantFiles:
        return InstantFiles(self.storage, config, self.instant, self.action)


@contextmanager
def table_guard(storage: Storage) -> Iterator[Hold]:
    """Hold the table's guard lock (blocks while another writer checks the timeline)."""
    with storage.exclusive(paths.guard(storage.root)) as hold:
        yield hold


def begin(
    storage: Storage,
    config: TableConfig,
    action: Action,
    *,
    timeout_s: float,
    requested: bytes = b"",
    inflight: bytes = b"{}",
) -> tuple[Transaction, list[RollbackResult]]:
    """Start a write: check for live writers, roll back failed ones, request and start an instant.

    Raises:
        ConcurrentWriteError: another writer's instant is pending with a fresh heartbeat.
    """
    with table_guard(storage) as hold:
        timeline = Timeline.load(storage, config)
        rolled_back = recover(storage, config, timeline, timeout_s)
        timeline = Timeline.load(storage, config)
        latest = timeline.instants[-1].requested_time if timeline.instants else None
        instant = new_instant_time(after=latest)
        heartbeat.beat(storage, instant)
        txn = Transaction(storage, instant, action, timeout_s)
        files = txn.files(config)
        hold.check()
        files.request(requested)
    files.start(inflight)
    return txn, rolled_back


def recover(storage: Storage, config: TableConfig, timeline: Timeline, timeout_s: float) -> list[RollbackResult]:
    """Fail if a live writer holds the table; roll back failed writes and finish broken rollbacks.

    Pending compactions of dead writers stay (their plan is run again by `compact`).
    """
    table_path = storage.root
    now = time.time()
    failed: list[Instant] = []
    for inst in timeline.pending(*_WRITES, Action.COMPACTION):
        if heartbeat.is_alive(storage, inst.requested_time, timeout_s, now):
            raise ConcurrentWriteError(
                f"{table_path}: another writer holds the table: {inst.action.value} {inst.requested_time} is "
                f"{inst.state.value} and its heartbeat is fresh (.hoodie/.heartbeat/{inst.requested_time}). "
                f"Retry after it completes; if that writer died, retry after {timeout_s:.0f}s "
                "(hoodie.client.heartbeat.interval_in_ms x hoodie.client.heartbeat.tolerable.misses)",
                path=table_path,
                instant=inst.requested_time,
            )
        if inst.action is not Action.COMPACTION:
            failed.append(inst)
    results = _finish_pending_rollbacks(storage, timeline)
    for inst in failed:
        after = max((i.requested_time for i in timeline.instants), key=instant_key, default=None)
        results.append(rollback_failed_write(storage, inst, new_instant_time(after=after)))
        timeline = Timeline.load(storage, config)
    return results


def _finish_pending_rollbacks(storage: Storage, timeline: Timeline) -> list[RollbackResult]:
    table_path = storage.root
    results = []
    for inst in timeline.pending(Action.ROLLBACK):
        path = paths.hoodie(table_path, f"{inst.requested_time}.rollback.requested")
        try:
            plan = decode_avro_record(storage.read_bytes(path))
        except (FileGoneError, ValueError):
            plan = {}
        target = plan.get("instantToRollback") or {}
        if not target.get("commitTime"):
            continue
        failed = Instant(
            target["commitTime"], Action.parse(target["action"]), State.INFLIGHT, None,
            f"{target['commitTime']}.{target['action']}.inflight",
        )
        results.append(rollback_failed_write(storage, failed, inst.requested_time))
    return results


def ensure_pending(txn: Transaction, config: TableConfig) -> None:
    """Fail when the instant is no longer pending (another writer rolled it back)."""
    files = txn.files(config)
    if not (txn.storage.exists(files.path("inflight")) or txn.storage.exists(files.path("requested"))):
        raise WriteError(
            f"{txn.table_path}: instant {txn.instant} is no longer pending; another writer rolled it back "
            "(its heartbeat was older than the timeout). Run the write again.",
            path=txn.table_path,
            instant=txn.instant,
        )


def complete(txn: Transaction, config: TableConfig, record: CommitRecord) -> None:
    """Write the completed instant (last, atomically), then drop markers and heartbeat."""
    with table_guard(txn.storage) as hold:
        ensure_pending(txn, config)
        hold.check()
        txn.files(config).complete(record)
    delete_marker_folder(txn.storage, txn.instant)
    heartbeat.stop(txn.storage, txn.instant)


def abandon(txn: Transaction) -> None:
    """Give up a failed write: stop its heartbeat so the next writer rolls it back at once."""
    heartbeat.stop(txn.storage, txn.instant)


_T = TypeVar("_T")


def after_commit(storage: Storage, instant: str, service: str, remedy: str, run: Callable[[], _T]) -> _T:
    """Run a table service (`service`: "the clean"...) after the commit `instant` completed; its
    failure is a WriteError naming the commit, which stays completed, and saying `remedy`."""
    table_path = storage.root
    try:
        return run()
    except (HudiShimError, OSError) as exc:
        raise WriteError(
            f"{table_path}: commit {instant} completed, but {service} after it failed: {exc}. "
            f"The data is committed; {remedy}",
            path=table_path,
            instant=instant,
        ) from exc
