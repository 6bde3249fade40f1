"""run_parallel: items of every producer, bounded, stopped when its consumer goes away, from
whichever thread that happens on."""

from __future__ import annotations

import gc
import sys
import threading

from shim.read.executor import run_parallel


def test_items_of_every_producer_arrive_in_producer_order():
    got = list(run_parallel([lambda: iter(range(3)), lambda: iter(range(10, 13))], workers=2))
    assert sorted(got) == [0, 1, 2, 10, 11, 12]
    assert [g for g in got if g < 10] == [0, 1, 2]


def test_a_scan_dropped_and_collected_on_one_of_its_own_workers_stops_cleanly(monkeypatch):
    """Abandoned in a reference cycle (as aborted scans leave it, with their exceptions), the
    generator is finalised by the garbage collector on whichever thread runs it, here one of its
    own workers: its clean-up must not try to join that thread."""
    unraisable: list[BaseException] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: unraisable.append(info.exc_value))
    abandoned = threading.Event()
    collected = threading.Event()

    def collecting():
        yield "first"
        assert abandoned.wait(10)
        gc.collect()
        collected.set()
        yield "never read"

    def idle():
        assert abandoned.wait(10)
        return iter(())

    generator = run_parallel([collecting, idle], workers=2)
    assert next(generator) == "first"
    cycle: list[object] = [generator]
    cycle.append(cycle)
    del generator, cycle
    gc.disable()  # only the worker collects
    try:
        abandoned.set()
        assert collected.wait(10)
    finally:
        gc.enable()
    assert [e for e in unraisable if isinstance(e, RuntimeError)] == []
