"""How many scans run at once: a bounded number, each with a thread of its own for its blocking
work, so the event loop and the worker threads of the metadata endpoints stay free.

A scan waits a little for a slot (asynchronously: waiting costs no thread); when none frees up,
or too many already wait, it is refused with `ServerBusyError` (503, `Retry-After`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from shim.errors import HudiShimError

T = TypeVar("T")


class ServerBusyError(HudiShimError):
    """The server runs as many scans as it allows; ask again after `retry_after` seconds."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ScanSlots:
    """At most `running` scans at once; at most `waiting` more wait up to `wait_seconds` for one.

    Used from the event loop only (created lazily in it: asyncio primitives belong to one loop).
    """

    def __init__(self, running: int, waiting: int, wait_seconds: float) -> None:
        self.running = running
        self.waiting = waiting
        self.wait_seconds = wait_seconds
        self._free: asyncio.Semaphore | None = None
        self._waiters = 0
        self._threads = anyio.CapacityLimiter(running)

    @property
    def in_use(self) -> int:
        """Slots taken now."""
        return 0 if self._free is None else self.running - self._free._value

    @property
    def free(self) -> asyncio.Semaphore:
        if self._free is None:
            self._free = asyncio.Semaphore(self.running)
        return self._free

    async def acquire(self) -> Callable[[], None]:
        """Take a slot; returns the function that gives it back (idempotent).

        Raises:
            ServerBusyError: no slot came free in time, or too many scans wait already.
        """
        free = self.free
        if free.locked():
            if self._waiters >= self.waiting:
                raise self._busy()
            self._waiters += 1
            try:
                await asyncio.wait_for(free.acquire(), self.wait_seconds)
            except TimeoutError:
                raise self._busy() from None
            finally:
                self._waiters -= 1
        else:
            await free.acquire()
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                free.release()

        return release

    async def run(self, work: Callable[[], T]) -> T:
        """Run a scan's blocking `work` on a thread of the scans' own (not the shared pool)."""
        return await anyio.to_thread.run_sync(work, limiter=self._threads)

    def _busy(self) -> ServerBusyError:
        return ServerBusyError(
            f"the server is running its maximum of {self.running} scans and cannot queue more; "
            "ask again in a moment", retry_after=1)
