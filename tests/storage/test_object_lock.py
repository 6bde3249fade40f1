"""The table lock kept as an object (`shim.storage.object_lock`), taken by real processes on a real
S3-compatible server that honours conditional writes (moto)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from shim.storage import RemoteStorage, storage_for
from shim.storage.object_lock import LockRecord, ObjectLock

REPO = Path(__file__).resolve().parents[2]


def worker(server, cache: Path, *args: str) -> subprocess.Popen[str]:
    """`tests.storage.lock_worker` in a process of its own, with its own local cache folder."""
    env = {**os.environ, **server.environment(), "HUDI_SHIM_CACHE": str(cache), "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "tests.storage.lock_worker", *args], env=env, cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def lock_location(server) -> tuple[RemoteStorage, str]:
    """The storage of a fresh table location on `server`, and where its lock goes."""
    store = storage_for(f"s3://lake/locks-{uuid.uuid4().hex[:8]}", server.storage_options())
    assert isinstance(store, RemoteStorage)
    return store, f"{store.root}/.hoodie/.aux/hudi-shim.lock"


def holder(store: RemoteStorage, lock: str) -> LockRecord:
    found = store.conditional.read(lock)
    assert found is not None
    record = LockRecord.decode(found[0])
    assert record is not None
    return record


def test_two_processes_asking_at_once_never_hold_the_lock_together(moto_s3, tmp_path):
    store, lock = lock_location(moto_s3)
    counter = lock.rsplit("/.hoodie", 1)[0] + "/counter"
    rounds, start = 20, time.time() + 3
    workers = [worker(moto_s3, tmp_path / f"cache{i}", "count", lock, counter, str(rounds), str(start),
                      str(tmp_path / f"{i}.json")) for i in range(2)]
    for process in workers:
        _, errors = process.communicate(timeout=300)
        assert process.returncode == 0, errors
    results = [json.loads((tmp_path / f"{i}.json").read_text()) for i in range(2)]
    spans = sorted(tuple(span) for result in results for span in result["spans"])
    found = store.conditional.read(counter)
    assert found is not None and int(found[0]) == len(spans), "an increment was lost: both held the lock"
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(spans)), "two holders at once"
    assert len(spans) >= rounds // 2 and all(result["spans"] for result in results)
    assert holder(store, lock).released


def test_a_silent_holder_loses_the_lock_to_a_waiter_and_finds_out(moto_s3, tmp_path):
    store, lock = lock_location(moto_s3)
    silent = worker(moto_s3, tmp_path / "cache", "hold", lock, "1.5")
    try:
        assert silent.stdout is not None and silent.stdout.readline().strip() == "held"
        first = holder(store, lock)
        os.kill(silent.pid, signal.SIGSTOP)  # no renewals from here on
        started = time.monotonic()
        with ObjectLock(store.conditional, lock, ttl_s=5) as taken:
            waited = time.monotonic() - started
            assert holder(store, lock).owner == taken.owner != first.owner
            os.kill(silent.pid, signal.SIGCONT)
            assert silent.stdin is not None
            silent.stdin.write("release\n")
            silent.stdin.flush()
            said, errors = silent.communicate(timeout=60)
            assert said.startswith("lost:") and "lost the table's lock" in said, (said, errors)
            assert holder(store, lock).owner == taken.owner, "the old holder's release left the new holder's lock alone"
            taken.check()
        assert 0.5 < waited < 10, waited
        assert holder(store, lock).released
    finally:
        if silent.poll() is None:
            os.kill(silent.pid, signal.SIGCONT)
            silent.kill()


def test_a_killed_holders_lock_is_taken_after_its_ttl_and_a_released_one_at_once(moto_s3, tmp_path):
    store, lock = lock_location(moto_s3)
    killed = worker(moto_s3, tmp_path / "cache", "hold", lock, "2")
    assert killed.stdout is not None and killed.stdout.readline().strip() == "held"
    killed.kill()
    killed.wait()
    started = time.monotonic()
    with ObjectLock(store.conditional, lock):
        waited = time.monotonic() - started
    assert 0.3 < waited < 10, waited
    started = time.monotonic()
    with ObjectLock(store.conditional, lock):
        assert time.monotonic() - started < 1.0
