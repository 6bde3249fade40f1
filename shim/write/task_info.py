"""Which task writes (its write token) and the heartbeat it keeps fresh while it runs."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Self

from shim.storage import Storage
from shim.write import heartbeat


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """Which Spark task this is (names files: write token `<partition>-<stage>-<attempt id>`)."""

    partition_id: int = 0
    stage_id: int = 0
    attempt_id: int = 0

    @property
    def write_token(self) -> str:
        return f"{self.partition_id}-{self.stage_id}-{self.attempt_id}"


class KeepAlive:
    """Keeps the write's heartbeat fresh while a task runs."""

    def __init__(self, storage: Storage, instant: str, interval_s: float) -> None:
        self.args = (storage, instant)
        self.interval_s = max(0.05, interval_s)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="hudi-shim-heartbeat", daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(self.interval_s):
            if not heartbeat.refresh(*self.args):
                return  # the job abandoned the write: a task still running must not revive it

    def __enter__(self) -> Self:
        if heartbeat.refresh(*self.args):
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread.ident is not None:
            self.thread.join(timeout=5)
