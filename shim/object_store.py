"""The `shim.storage` operations on object stores and HDFS, through pyarrow's file systems.

Locations are URIs (`s3://bucket/table/...`); `shim.filesystems` says which file system and
options serve each. What object stores cannot do as a local file system does, and what is done
instead:
- no rename: `write_atomically` is one PUT (an object appears whole or not at all); `replace` is
  a copy then a delete, so it is not atomic;
- no append: `write_after` and `truncate` rewrite the object with the kept prefix;
- no put-if-absent through pyarrow: `create_if_absent` checks, then writes: two writers racing
  for one name on two machines could both succeed. `shim.storage` uses the store's conditional
  writes instead where it honours them (`shim.conditional_writes`); this is the fallback;
- no file locks: `lock_path` gives a local lock file per location, coordinating the writers of
  one machine only (the fallback of `shim.storage.exclusive`, which otherwise locks with an
  object on the store: `shim.object_lock`).
Errors other than a missing object (denied, no bucket, throttled, unreachable) raise
`StorageError` naming the location and the store's reason; credentials never appear in them.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TypeVar

import pyarrow as pa
import pyarrow.fs as pafs

from shim.errors import HudiShimError
from shim.filesystems import filesystem_for, split
from shim.local_cache import cache_root

T = TypeVar("T")


class StorageError(HudiShimError):
    """An object store or HDFS refused or failed an operation on a location."""

    def __init__(self, message: str, *, location: str = "") -> None:
        super().__init__(message)
        self.location = location


def guarded(location: str, action: str, call: Callable[[], T]) -> T:
    """`call()`, its store failures (all but a missing object) as `StorageError` naming `location`."""
    try:
        return call()
    except FileNotFoundError:
        raise
    except OSError as error:
        if _means_missing(error):
            raise FileNotFoundError(str(error)) from None
        raise StorageError(f"cannot {action} {location}: {_reason(error)}", location=location) from None


def _means_missing(error: OSError) -> bool:
    text = str(error)
    return "Path does not exist" in text or "NoSuchKey" in text or "NOT_FOUND" in text or "(HTTP status 404)" in text


def _reason(error: OSError) -> str:
    text = " ".join(str(error).split())
    # pyarrow's messages start with what it did ("When reading information for key 'k' in bucket 'b': ...")
    reason = text.split(": ", 1)[1] if text.startswith("When ") and ": " in text else text
    if "HTTP status 503" in reason or "SLOW_DOWN" in reason.upper():
        reason += " (the store throttled the requests or is unavailable; they were retried, then given up)"
    return reason


def bucket_exists(location: str) -> bool:
    """Whether the bucket (or HDFS root) of a remote `location` exists."""
    system, _ = filesystem_for(location)
    root = split(location).bucket
    return guarded(location, "look up", lambda: system.get_file_info(root)).type != pafs.FileType.NotFound


class _SizeMemo:
    """Object sizes seen in listings, so that reading an object needs no HEAD request. Hudi's
    files are not rewritten in place (a log append here rewrites the object, and forgets its
    size); a stale size would read the object as it was listed, which is what a scan planned
    from that listing reads anyway."""

    LIMIT = 200_000

    def __init__(self) -> None:
        self._sizes: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()

    def remember(self, location: str, size: int, mtime_ns: int = 0) -> None:
        with self._lock:
            if len(self._sizes) >= self.LIMIT:
                self._sizes.clear()
            self._sizes[location] = (size, mtime_ns)

    def get(self, location: str) -> tuple[int, int] | None:
        """(size, modification time in ns) as last listed."""
        with self._lock:
            return self._sizes.get(location)

    def forget(self, location: str) -> None:
        with self._lock:
            self._sizes.pop(location, None)


SIZES = _SizeMemo()


def known_size(location: str) -> int | None:
    """The size of the object at `location` if a listing saw it."""
    seen = SIZES.get(location)
    return seen[0] if seen else None


def listed_version(location: str) -> tuple[int, int] | None:
    """(size, modification time in ns) of the object at `location` as a listing saw it."""
    return SIZES.get(location)


# -- reading


def read_bytes(location: str) -> bytes:
    """The whole object; raises FileNotFoundError when it is missing."""
    system, path = filesystem_for(location)
    return guarded(location, "read", lambda: _read_all(system, path))


def _read_all(system: pafs.FileSystem, path: str) -> bytes:
    # A HEAD for the size, then one GET of it all (a stream would GET it in many ranges).
    with system.open_input_file(path) as handle:
        return bytes(handle.read())


def read_range(location: str, offset: int, length: int) -> bytes:
    system, path = filesystem_for(location)

    def read() -> bytes:
        with system.open_input_file(path) as handle:
            size = handle.size()
            return bytes(handle.read_at(max(0, min(length, size - offset)), offset)) if offset < size else b""

    return guarded(location, "read", read)


def open_input(location: str) -> pa.NativeFile:
    """A random-access file (reads are ranged GETs); raises FileNotFoundError."""
    system, path = filesystem_for(location)
    return guarded(location, "open", lambda: system.open_input_file(path))


def open_output(location: str) -> pa.NativeFile:
    """A stream writing the object at `location`; it appears whole when the stream closes."""
    system, path = filesystem_for(location)
    SIZES.forget(location)
    return guarded(location, "write", lambda: system.open_output_stream(path))


# -- listing and metadata


def info(location: str) -> pafs.FileInfo:
    system, path = filesystem_for(location)
    return guarded(location, "look up", lambda: system.get_file_info(path))


def list_entries(folder: str) -> list[tuple[str, pafs.FileInfo]]:
    """(URI, info) of what is directly in `folder` ([] when nothing is there)."""
    system, path = filesystem_for(folder)
    selector = pafs.FileSelector(path, allow_not_found=True, recursive=False)
    found = guarded(folder, "list", lambda: system.get_file_info(selector))
    base = folder.rstrip("/")
    entries = [(f"{base}/{entry.base_name}", entry) for entry in found]
    for uri, entry in entries:
        if entry.type == pafs.FileType.File and entry.size is not None:
            SIZES.remember(uri, entry.size, entry.mtime_ns or 0)
    return entries


def walk(root: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk` over a prefix, one listing per folder (a caller may prune the folder names)."""
    entries = list_entries(root)
    folders = [entry.base_name for _, entry in entries if entry.type == pafs.FileType.Directory]
    files = [entry.base_name for _, entry in entries if entry.type == pafs.FileType.File]
    if not entries and info(root).type != pafs.FileType.Directory:
        return
    yield root.rstrip("/"), folders, files
    for name in folders:
        yield from walk(f"{root.rstrip('/')}/{name}")


# -- writing


def write(location: str, chunks: Iterable[bytes]) -> None:
    """Write the object at `location` in one upload."""
    system, path = filesystem_for(location)
    SIZES.forget(location)

    def upload() -> None:
        with system.open_output_stream(path) as out:
            for chunk in chunks:
                out.write(chunk)

    guarded(location, "write", upload)


def create_if_absent(location: str, chunks: Iterable[bytes]) -> bool:
    if info(location).type != pafs.FileType.NotFound:
        return False
    write(location, chunks)
    return True


def write_after(location: str, offset: int, chunks: Iterable[bytes]) -> int:
    """Rewrite the object with its first `offset` bytes and `chunks`; returns the size it had
    (less than `offset`: nothing written). Raises FileNotFoundError."""
    found = info(location)
    if found.type == pafs.FileType.NotFound:
        raise FileNotFoundError(location)
    size = found.size or 0
    if size < offset:
        return size
    kept = read_range(location, 0, offset) if offset else b""
    write(location, [kept, *chunks])
    return size


def truncate(location: str, size: int) -> None:
    write(location, [read_range(location, 0, size)])


def replace(source: str, target: str) -> None:
    """Copy then delete (object stores have no rename)."""
    system, source_path = filesystem_for(source)
    target_system, target_path = filesystem_for(target)
    if target_system is not system or split(source).bucket != split(target).bucket:
        write(target, [read_bytes(source)])
    else:
        guarded(target, "copy to", lambda: system.copy_file(source_path, target_path))
    remove(source, missing_ok=True)


def remove(location: str, *, missing_ok: bool = False) -> bool:
    system, path = filesystem_for(location)
    if info(location).type == pafs.FileType.NotFound:
        if missing_ok:
            return False
        raise FileNotFoundError(location)
    SIZES.forget(location)
    guarded(location, "delete", lambda: system.delete_file(path))
    return True


def remove_tree(folder: str) -> None:
    system, path = filesystem_for(folder)
    guarded(folder, "delete", lambda: system.delete_dir_contents(path, missing_dir_ok=True))
    try:
        system.delete_dir(path)
    except OSError:
        pass  # object stores have no folder object to remove


def lock_path(location: str) -> str:
    """A local lock file standing for `location` (see the module's docstring)."""
    digest = hashlib.sha256(location.encode()).hexdigest()[:32]
    return str(cache_root() / "locks" / f"{digest}.lock")


def open_lock(location: str) -> IO[bytes]:
    path = lock_path(location)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return open(path, "a+b")
