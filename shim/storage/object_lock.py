"""A lock kept as an object on the store, for writers of one table on several machines.

The object (the table's `.hoodie/.aux/hudi-shim.lock`) holds JSON: the holder's id, host and
process, when it expires (epoch milliseconds), its time to live, whether it was released, and a
token new at every write (two writes of equal bodies would keep one ETag, and a conditional
replace could not tell them apart). Every change is a conditional write (`shim.storage.conditional`):
- acquire: create the object (`If-None-Match: *`); when it exists, is released or stale, replace
  it on the version just read (`If-Match`). Of writers taking a free or stale lock at once, one
  wins; the others read it again and wait.
- renew: while held, a thread replaces it every `ttl / 3` on the version it wrote last. A refused
  renewal means another writer took it over (this holder was silent past the ttl): the lock is
  lost, and `check` and the release raise `LockLostError`.
- release: replace it, on the version it wrote last, with a released body.
A lock is stale when the reader's clock has passed its expiry, or when the reader saw the same
version of it for longer than its ttl on its own monotonic clock (a holder whose clock runs far
ahead). A live holder's expiry stays at least 2/3 of the ttl ahead of its own clock, so writers'
clocks may disagree by up to that (20 s for the default 30 s) without a live lock being taken.
"""

from __future__ import annotations

import json
import logging
import os
import random
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import Self

from shim.errors import ConcurrentWriteError, StorageError
from shim.storage.conditional import Conditional, Version

log = logging.getLogger(__name__)

TTL_S = 30.0
"""How long a lock lives without a renewal."""
WAIT_S = 600.0
"""How long `acquire` waits for a lock held by another live writer before giving up."""


class LockLostError(ConcurrentWriteError):
    """Another writer took the lock over while this one held it (its renewals failed for a ttl)."""


@dataclass(frozen=True, slots=True)
class LockRecord:
    """The lock object's body."""

    owner: str
    host: str
    pid: int
    expires_ms: int
    ttl_ms: int
    released: bool
    token: str

    def encode(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def decode(cls, data: bytes) -> LockRecord | None:
        """The record, or None for a body this writer cannot read (counted as stale)."""
        try:
            fields = json.loads(data)
            return cls(str(fields["owner"]), str(fields["host"]), int(fields["pid"]), int(fields["expires_ms"]),
                       int(fields["ttl_ms"]), bool(fields["released"]), str(fields["token"]))
        except (ValueError, KeyError, TypeError):
            return None


def _now_ms() -> int:
    return int(time.time() * 1000)


class ObjectLock:
    """The lock on the object at `location` (see the module's docstring); a context manager."""

    def __init__(self, writes: Conditional, location: str, *, ttl_s: float = TTL_S, wait_s: float = WAIT_S) -> None:
        self.writes = writes
        self.location = location
        self.ttl_s = ttl_s
        self.wait_s = wait_s
        self.owner = uuid.uuid4().hex
        self._version: Version | None = None
        self._renewed_at = 0.0
        self._lost: str | None = None
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _record(self, *, released: bool = False) -> LockRecord:
        return LockRecord(self.owner, socket.gethostname(), os.getpid(),
                          0 if released else _now_ms() + int(self.ttl_s * 1000), int(self.ttl_s * 1000),
                          released, uuid.uuid4().hex)

    def acquire(self) -> None:
        """Take the lock, waiting while another live writer holds it.

        Raises:
            ConcurrentWriteError: another writer held it for longer than `wait_s`.
        """
        deadline = time.monotonic() + self.wait_s
        seen: tuple[Version, float] | None = None
        delay = 0.02
        while True:
            found = self.writes.read(self.location)
            record = self._record()
            if found is None:
                version = self.writes.create(self.location, record.encode())
                if version is not None or self._wrote(record):
                    return self._held(version)
                continue
            data, version = found
            held = LockRecord.decode(data)
            now = time.monotonic()
            if seen is None or seen[0] != version:
                seen = (version, now)
            if held is None or held.released or _now_ms() > held.expires_ms or now - seen[1] > held.ttl_ms / 1000:
                new = self.writes.replace(self.location, record.encode(), version)
                if new is not None or self._wrote(record):
                    return self._held(new)
                continue
            if now > deadline:
                raise ConcurrentWriteError(
                    f"{self.location}: another writer holds the table's lock ({held.host}, process {held.pid}, "
                    f"for {held.ttl_ms / 1000:.0f} s at a time) and kept it for over {self.wait_s:.0f} s; "
                    "retry later", path=self.location)
            time.sleep(min(delay * random.uniform(0.5, 1.5), max(0.0, deadline - now) + 0.01))
            delay = min(delay * 2, 1.0)

    def _wrote(self, record: LockRecord) -> bool:
        """Whether the object holds `record` (a write that failed to say it succeeded, e.g. a retry
        of a create that had landed)."""
        found = self.writes.read(self.location)
        return found is not None and found[0] == record.encode()

    def _held(self, version: Version | None) -> None:
        if version is None:  # we wrote it, but the store's answer was lost: read the version back
            found = self.writes.read(self.location)
            if found is None:
                raise LockLostError(f"{self.location}: the lock vanished as it was taken", path=self.location)
            version = found[1]
        self._version = version
        self._renewed_at = time.monotonic()
        self._lost = None
        self._stop.clear()
        self._thread = threading.Thread(target=self._renew_loop, name="hudi-shim-lock", daemon=True)
        self._thread.start()

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            with self._mutex:
                if self._stop.is_set() or self._lost is not None or self._version is None:
                    return
                try:
                    new = self.writes.replace(self.location, self._record().encode(), self._version)
                except StorageError as error:
                    log.warning("%s: renewing the lock failed, trying again: %s", self.location, error)
                    continue
                if new is None:
                    self._lost = "another writer took it over: this holder had not renewed it for its ttl"
                    return
                self._version = new
                self._renewed_at = time.monotonic()

    def check(self) -> None:
        """Raise `LockLostError` unless this writer still holds the lock."""
        with self._mutex:
            lost = self._lost
            if lost is None and time.monotonic() - self._renewed_at > self.ttl_s:
                lost = f"it was last renewed over {self.ttl_s:.0f} s ago: another writer may have taken it"
        if lost is not None:
            raise LockLostError(f"{self.location}: this writer lost the table's lock ({lost})", path=self.location)

    def release(self) -> None:
        """Release the lock.

        Raises:
            LockLostError: another writer took it over while it was held.
        """
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._mutex:
            lost, version = self._lost, self._version
            self._version = None
        if lost is None and version is not None:
            try:
                if self.writes.replace(self.location, self._record(released=True).encode(), version) is None:
                    lost = "another writer took it over before its release"
            except StorageError as error:  # it expires by itself
                log.warning("%s: releasing the lock failed (it expires in %.0f s): %s", self.location,
                            self.ttl_s, error)
        if lost is not None:
            raise LockLostError(f"{self.location}: this writer lost the table's lock ({lost})", path=self.location)

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        try:
            self.release()
        except LockLostError:
            if error is None:
                raise
            log.warning("%s: the lock was lost while the write failed", self.location)
