"""What a table's files live on: the `Storage` interface a table holds, and the values it gives.

A table opened with `shim.open_table` holds one `Storage` (`Table.storage`), built once for its
location with the options (credentials, endpoint) given for it; everything that reads or writes
the table's files asks that object. Two implementations: `LocalStorage` (a local file system)
and `RemoteStorage` (an object store or HDFS through pyarrow's file systems, with the table's own
credentials). Nothing outside this package asks whether a path is local or remote.
"""

from __future__ import annotations

import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import IO, Protocol

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from shim.errors import InvalidTableError, file_gone

_RACY_NS = 2_000_000_000


@dataclass(frozen=True, slots=True)
class FileInfo:
    """What a listing or `stat` knows of a file."""

    path: str
    name: str
    size: int
    mtime_ns: int
    is_file: bool

    @property
    def mtime(self) -> float:
        """Modification time in epoch seconds."""
        return self.mtime_ns / 1e9


class Hold(Protocol):
    """A held `Storage.exclusive` lock."""

    def check(self) -> None:
        """Raise `LockLostError` if another writer took the lock over."""


def decode_text(data: bytes, path: str) -> str:
    """`data`, the content of the file `path`, as UTF-8 text.

    Raises:
        InvalidTableError: naming the file and the first byte that is not UTF-8.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidTableError(f"{path} is not UTF-8 text: byte {data[exc.start]:#04x} at offset {exc.start}",
                                path=path) from None


def join(*parts: str) -> str:
    """Join path parts, ignoring empty ones (the non-partitioned partition is "")."""
    return os.path.join(*[p for p in parts if p])


class Storage(ABC):
    """The files under one location (a table's base path), and how to reach them.

    Paths given to its methods are absolute: local paths, or URIs on the same store as `root`.
    Missing files raise `FileNotFoundError` unless a method says otherwise. Two storages are
    equal when a path reads the same through both (the same store, reached the same way): caches
    of file contents key on them.
    """

    root: str

    @property
    @abstractmethod
    def is_remote(self) -> bool:
        """Whether the files are on an object store or HDFS (requests cost: plan for fewer)."""

    @property
    def options(self) -> dict[str, str]:
        """The storage options this storage was built with (credentials included: never log them)."""
        return {}

    def container_exists(self) -> bool:
        """Whether what holds the root exists (an object store's bucket; always, locally)."""
        return True

    def within(self, location: str) -> Storage:
        """This storage, for another location on the same store and with the same options."""
        return self

    # -- reading

    def read_bytes(self, path: str) -> bytes:
        """Whole content of a file (a missing one: `FileGoneError`, naming it)."""
        try:
            return self._read_raw(path)
        except FileNotFoundError:
            raise file_gone(path) from None

    def read_text(self, path: str) -> str:
        """Whole content of a UTF-8 text file; raises FileNotFoundError when it is missing, and
        InvalidTableError naming the file when it is not UTF-8."""
        return decode_text(self._read_raw(path), path)

    @abstractmethod
    def _read_raw(self, path: str) -> bytes:
        """Whole content of a file; raises FileNotFoundError."""

    @abstractmethod
    def read_range(self, path: str, offset: int, length: int) -> bytes:
        """`length` bytes of a file from `offset` (fewer at its end); raises FileNotFoundError."""

    @abstractmethod
    def open_input(self, path: str) -> IO[bytes]:
        """A file opened for streaming reads (the caller closes it); raises FileNotFoundError."""

    @abstractmethod
    def parquet_source(self, path: str) -> str | pa.NativeFile:
        """What to hand pyarrow's Parquet readers for `path`."""

    @abstractmethod
    def parquet_metadata(self, path: str) -> pq.FileMetaData:
        """The footer of the Parquet file at `path`."""

    @abstractmethod
    def parquet_dataset(self, paths: Sequence[str], schema: pa.Schema, file_format: ds.ParquetFileFormat) -> ds.Dataset:
        """A pyarrow dataset of the Parquet files at `paths`."""

    @abstractmethod
    def arrow_filesystem(self, paths: Sequence[str]) -> tuple[pafs.FileSystem, list[str]]:
        """The pyarrow file system holding `paths` and the paths as it names them."""

    @abstractmethod
    def atomic_output(self, path: str) -> AbstractContextManager[pa.NativeFile]:
        """A stream writing `path`, which appears whole when the block ends without an error."""

    @abstractmethod
    def random_access(self, path: str) -> pa.NativeFile:
        """A random-access file of `path` (locally memory-mapped: no copy); raises FileNotFoundError."""

    @abstractmethod
    def parquet_sink(self, path: str) -> AbstractContextManager[str | pa.NativeFile]:
        """What to hand pyarrow's Parquet writers for `path`, for the writer's life; the file
        appears whole when the block ends without an error."""

    def rust_location(self, path: str) -> tuple[str, dict[str, str]]:
        """The location and the storage options a reader built on Rust's `object_store` crate
        (pylance, hudi-rs) reads `path` with."""
        return path, {}

    # -- listing and metadata

    @abstractmethod
    def exists(self, path: str) -> bool:
        """Whether a file or folder exists at `path`."""

    @abstractmethod
    def is_file(self, path: str) -> bool:
        """Whether `path` is a file."""

    def is_link(self, path: str) -> bool:
        """Whether `path` is a symbolic link (never, on an object store)."""
        return False

    @abstractmethod
    def is_dir(self, path: str) -> bool:
        """Whether `path` is a folder (on an object store: a prefix holding objects)."""

    @abstractmethod
    def stat(self, path: str) -> FileInfo:
        """Size and modification time of `path`; raises FileNotFoundError."""

    def file_version(self, path: str) -> tuple[int, int]:
        """(size, modification time in ns) of a file that is not rewritten in place, for caches
        keyed by its version. Raises FileNotFoundError."""
        info = self.stat(path)
        return info.size, info.mtime_ns

    def change_stamp(self, path: str, *, folder: bool) -> tuple[int, int, int]:
        """(modification time, size, entries while the time is recent) of a file or `folder`, to
        notice changes with a `stat` instead of a listing; -1s when it does not exist. A file
        system with coarse timestamps can change a folder twice within one tick: while its time
        is that recent, the number of entries is compared too."""
        try:
            info = self.stat(path)
        except OSError:
            return -1, -1, -1
        recent = time.time_ns() - info.mtime_ns < _RACY_NS and not info.is_file
        return info.mtime_ns, info.size, len(self.list_names(path)) if recent else -1

    def file_size(self, path: str) -> int:
        """Size of a file in bytes; raises FileNotFoundError."""
        return self.stat(path).size

    def known_size(self, path: str) -> int | None:
        """The size of the file if a listing saw it (no request); None otherwise."""
        return None

    def remember_sizes(self, sizes: Iterable[tuple[str, int]]) -> None:
        """Note (path, size) of files another listing gave (the metadata table's), so reading
        them needs no request for their size (where one would cost: an object store)."""

    @abstractmethod
    def list_names(self, folder: str) -> list[str]:
        """Names in a folder, or [] when it does not exist."""

    @abstractmethod
    def list_files(self, folder: str) -> list[FileInfo]:
        """Files and folders directly in `folder` with their sizes, or [] when it does not exist."""

    @abstractmethod
    def walk(self, root: str) -> Iterator[tuple[str, list[str], list[str]]]:
        """`(folder, subfolder names, file names)` of every folder under `root` (top-down; a
        caller may prune the subfolder list in place)."""

    # -- writing

    @abstractmethod
    def make_dirs(self, folder: str) -> None:
        """Create `folder` and its parents when missing (object stores have no folders: nothing)."""

    @abstractmethod
    def write_atomically(self, path: str, data: bytes, *, durable: bool = True) -> None:
        """Write `data` so that readers see all of it or none (`durable`: synced before it
        appears, where the file system can)."""

    def temporary_path(self, path: str) -> str:
        """A hidden name next to `path` for writing it aside first (this thread's own);
        `replace` moves it into place."""
        return f"{os.path.dirname(path)}/.{os.path.basename(path)}.{os.getpid()}-{threading.get_ident()}.tmp"

    @abstractmethod
    def create_if_absent(self, path: str, chunks: Iterable[bytes] = (), *, durable: bool = False) -> bool:
        """Create `path` holding `chunks` unless it exists; returns whether it was created."""

    @abstractmethod
    def write_new(self, path: str, data: bytes) -> bool:
        """Write `data` to `path` if no file is there, atomically; returns whether it was written.
        Of writers racing for one name, one succeeds (where the store can say so: see
        `RemoteStorage`)."""

    @abstractmethod
    def touch_existing(self, path: str) -> bool:
        """Set the modification time of `path` to now if it exists; False, creating nothing,
        when it does not."""

    @abstractmethod
    def touch(self, path: str) -> None:
        """Create `path` (and its folder) when missing and set its modification time to now."""

    @abstractmethod
    def write_after(self, path: str, offset: int, chunks: Iterable[bytes]) -> int:
        """Cut the existing file `path` to its first `offset` bytes and append `chunks` durably.
        Returns the size it had; when that is less than `offset` nothing is written.
        Raises FileNotFoundError."""

    @abstractmethod
    def truncate(self, path: str, size: int) -> None:
        """Cut a file to its first `size` bytes."""

    @abstractmethod
    def replace(self, source: str, target: str) -> None:
        """Rename `source` to `target`, replacing it when it exists."""

    @abstractmethod
    def remove(self, path: str, *, missing_ok: bool = False) -> bool:
        """Delete a file; returns whether it existed (a missing one raises FileNotFoundError
        unless `missing_ok`)."""

    @abstractmethod
    def remove_tree(self, folder: str) -> None:
        """Delete a folder and everything under it (nothing when it is missing)."""

    @abstractmethod
    def exclusive(self, path: str) -> AbstractContextManager[Hold]:
        """Hold the lock named `path` while the block runs, waiting for other holders."""

    @abstractmethod
    def open_lock(self, path: str) -> IO[bytes]:
        """A local lock file opened for `fcntl.flock`, standing for `path` (coordination between
        the processes of one machine)."""
