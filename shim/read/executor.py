"""Run independent batch producers in parallel and stream their batches through a bounded queue.

Memory stays bounded: at most `workers` producers run at once and at most `queue_size` batches
wait for the consumer. Closing the consumer's iterator stops the producers; an error in a producer
is raised to the consumer.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

Producer = Callable[[], Iterator[T]]

_DONE = object()


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def default_workers() -> int:
    """Worker threads for scans: one per core, at least two."""
    return max(2, os.cpu_count() or 2)


def run_parallel(producers: Sequence[Producer[T]], workers: int | None = None, queue_size: int = 8) -> Iterator[T]:
    """Yield the items of all producers, running up to `workers` of them concurrently.

    Items of one producer keep their order; items of different producers interleave.
    """
    if not producers:
        return
    workers = max(1, min(workers or default_workers(), len(producers)))
    if workers == 1:
        for producer in producers:
            yield from producer()
        return
    out: queue.Queue[object] = queue.Queue(maxsize=queue_size)
    stop = threading.Event()
    pending = list(reversed(producers))
    lock = threading.Lock()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def worker() -> None:
        try:
            while not stop.is_set():
                with lock:
                    if not pending:
                        break
                    producer = pending.pop()
                for item in producer():
                    if not put(item):
                        return
        except BaseException as error:  # noqa: BLE001 - handed to the consumer
            put(_Failure(error))
        finally:
            put(_DONE)

    threads = [threading.Thread(target=worker, name=f"hudi-shim-scan-{i}", daemon=True) for i in range(workers)]
    for thread in threads:
        thread.start()
    finished = 0
    try:
        while finished < workers:
            item = out.get()
            if item is _DONE:
                finished += 1
            elif isinstance(item, _Failure):
                raise item.error
            else:
                yield item  # type: ignore[misc]
    finally:
        stop.set()
        # Closed by the garbage collector, this may run on one of its own workers.
        current = threading.current_thread()
        for thread in threads:
            if thread is not current:
                thread.join(timeout=5)
