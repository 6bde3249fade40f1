"""A small thread-safe LRU cache bounded by the bytes of what it holds."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class ByteBoundedCache(Generic[V]):
    """Keeps the most recently used values whose sizes add up to at most `capacity` bytes."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Bytes held now."""
        return self._size

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: Hashable, value: V, size: int) -> None:
        """Store `value` unless it alone exceeds the capacity; evict the least recently used."""
        if size > self.capacity:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._size -= old[1]
            self._items[key] = (value, size)
            self._size += size
            while self._size > self.capacity:
                _, (_, evicted) = self._items.popitem(last=False)
                self._size -= evicted

    def discard(self, key: Hashable) -> None:
        """Forget `key` (nothing happens when it is not held)."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._size -= old[1]

    def get_or_compute(self, key: Hashable, compute: Callable[[], tuple[V, int]]) -> V:
        """The cached value, or compute (value, size), store and return it."""
        value = self.get(key)
        if value is None:
            value, size = compute()
            self.put(key, value, size)
        return value
