"""A process of its own for the lock tests (its store comes from the AWS_* environment):

    python -m tests.storage.lock_worker count LOCK COUNTER ROUNDS START OUT  # increments under the lock
    python -m tests.storage.lock_worker hold LOCK TTL                   # take it, say "held", wait for a line
"""

from __future__ import annotations

import json
import random
import sys
import time

from shim.errors import ConcurrentWriteError
from shim.storage import RemoteStorage, storage_for
from shim.storage.object_lock import LockLostError, ObjectLock


def _store(lock: str) -> RemoteStorage:
    """The storage of the table the lock is of, reached with the environment's credentials."""
    store = storage_for(lock.rsplit("/.hoodie", 1)[0])
    assert isinstance(store, RemoteStorage)
    return store


def count(lock: str, counter: str, rounds: int, start: float, out: str) -> None:
    """In each of `rounds` rounds (one every 0.3 s from the epoch time `start`, so that the processes
    ask at the same moment), take the lock if it comes within 0.1 s and increment the number in
    `counter` under it: a read, a pause and a write. Write the wall-clock spans it held the lock and
    the rounds it gave up to `out`."""
    spans, missed = [], 0
    store = _store(lock)
    for round_ in range(rounds):
        time.sleep(max(0.0, start + 0.3 * round_ - time.time()))
        try:
            with ObjectLock(store.conditional, lock, wait_s=0.1):
                began = time.time()
                try:
                    value = int(store.read_text(counter))
                except FileNotFoundError:
                    value = 0
                time.sleep(random.uniform(0.01, 0.03))  # a writer not excluded would lose the other's update
                store.write_atomically(counter, str(value + 1).encode())
                spans.append((began, time.time()))
        except ConcurrentWriteError:
            missed += 1
    with open(out, "w") as handle:
        json.dump({"spans": spans, "missed": missed}, handle)


def hold(lock: str, ttl: float) -> None:
    """Take the lock, say so, then release it when a line comes on stdin; say how that went."""
    held = ObjectLock(_store(lock).conditional, lock, ttl_s=ttl)
    held.acquire()
    print("held", flush=True)
    sys.stdin.readline()
    try:
        held.release()
    except LockLostError as error:
        print(f"lost: {error}", flush=True)
        return
    print("released", flush=True)


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "count":
        count(args[0], args[1], int(args[2]), float(args[3]), args[4])
    else:
        hold(args[0], float(args[1]))
