"""Storage: the one entry point to a table's files (local file system today).

Every read, listing, atomic write, removal and rename of a table's files goes through these
functions, so another file system (e.g. a `pyarrow.fs.FileSystem`) can be put behind them in one
place. Paths are absolute local paths (see `resolve_table_path`). Parquet files are opened by
pyarrow from their path (`parquet_source` names what to give it).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from stat import S_ISDIR
from typing import IO
from urllib.parse import unquote, urlparse

from shim.errors import TableNotFoundError, file_gone


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


def resolve_table_path(location: str | os.PathLike[str]) -> str:
    """Absolute local path of a table given as a path or a `file://` URI."""
    text = os.fspath(location)
    if "://" in text or text.startswith("file:"):
        parsed = urlparse(text)
        if parsed.scheme != "file":
            raise TableNotFoundError(
                f"unsupported location {text!r}: hudi-shim reads local paths and file:// URIs",
                path=text,
            )
        text = unquote(parsed.path)
    return os.path.abspath(os.path.expanduser(text))


def join(*parts: str) -> str:
    """Join path parts, ignoring empty ones (the non-partitioned partition is "")."""
    return os.path.join(*[p for p in parts if p])


# -- reading


def read_bytes(path: str) -> bytes:
    """Whole content of a file; a missing file is a HudiShimError naming it."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise file_gone(path) from None


def read_text(path: str) -> str:
    """Whole content of a UTF-8 text file; raises FileNotFoundError when it is missing."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def read_range(path: str, offset: int, length: int) -> bytes:
    """`length` bytes of a file from `offset` (fewer at its end); raises FileNotFoundError."""
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read(length)


def open_input(path: str) -> IO[bytes]:
    """A file opened for streaming reads (the caller closes it); raises FileNotFoundError."""
    return open(path, "rb")


def parquet_source(path: str) -> str:
    """What to hand pyarrow's Parquet readers and writers for `path` (its local path today)."""
    return path


# -- listing and metadata


def exists(path: str) -> bool:
    """Whether a file or folder exists at `path`."""
    return os.path.exists(path)


def is_file(path: str) -> bool:
    """Whether `path` is a file."""
    return os.path.isfile(path)


def is_dir(path: str) -> bool:
    """Whether `path` is a folder."""
    return os.path.isdir(path)


def stat(path: str) -> FileInfo:
    """Size and modification time of `path`; raises FileNotFoundError."""
    info = os.stat(path)
    return FileInfo(path, os.path.basename(path), info.st_size, info.st_mtime_ns, not S_ISDIR(info.st_mode))


def file_size(path: str) -> int:
    """Size of a file in bytes; raises FileNotFoundError."""
    return os.path.getsize(path)


def list_names(folder: str) -> list[str]:
    """Names in a folder, or [] when it does not exist."""
    try:
        return os.listdir(folder)
    except FileNotFoundError:
        return []


def list_files(folder: str) -> list[FileInfo]:
    """Files and folders directly in `folder` with their sizes, or [] when it does not exist."""
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    infos = []
    for entry in entries:
        try:
            is_file = entry.is_file()
            info = entry.stat() if is_file else None
        except FileNotFoundError:
            continue  # removed while listed
        infos.append(FileInfo(entry.path, entry.name, info.st_size if info else 0, info.st_mtime_ns if info else 0,
                              is_file))
    return infos


def walk(root: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """`(folder, subfolder names, file names)` of every folder under `root` (top-down; a caller
    may prune the subfolder list in place)."""
    return os.walk(root)


# -- writing


def make_dirs(folder: str) -> None:
    """Create `folder` and its parents when missing."""
    os.makedirs(folder, exist_ok=True)


def write_atomically(path: str, data: bytes, *, durable: bool = True) -> None:
    """Write `data` to a temporary file and rename it into place (readers see all or nothing).
    The temporary name is the writing thread's own, so writers racing for `path` never collide.
    `durable`: fsync before the rename (off for scratch state that only matters while a write runs)."""
    tmp = temporary_path(path)
    with open(tmp, "wb") as handle:
        handle.write(data)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    os.replace(tmp, path)


def temporary_path(path: str) -> str:
    """A hidden name next to `path` for writing it aside first (this thread's own); `replace`
    moves it into place."""
    return f"{os.path.dirname(path)}/.{os.path.basename(path)}.{os.getpid()}-{threading.get_ident()}.tmp"


def create_if_absent(path: str, chunks: Iterable[bytes] = (), *, durable: bool = False) -> bool:
    """Create `path` holding `chunks` unless it exists; returns whether it was created."""
    try:
        with open(path, "xb") as handle:
            _write(handle, chunks, durable)
    except FileExistsError:
        return False
    return True


def touch(path: str) -> None:
    """Create `path` (and its folder) when missing and set its modification time to now."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "ab"):
        pass
    os.utime(path, None)


def write_after(path: str, offset: int, chunks: Iterable[bytes]) -> int:
    """Cut the existing file `path` to its first `offset` bytes and append `chunks` durably.
    Returns the size it had; when that is less than `offset` nothing is written.
    Raises FileNotFoundError."""
    with open(path, "r+b") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < offset:
            return size
        handle.truncate(offset)
        handle.seek(offset)
        _write(handle, chunks, True)
    return size


def truncate(path: str, size: int) -> None:
    """Cut a file to its first `size` bytes."""
    os.truncate(path, size)


def replace(source: str, target: str) -> None:
    """Rename `source` to `target`, replacing it atomically when it exists."""
    os.replace(source, target)


def remove(path: str, *, missing_ok: bool = False) -> bool:
    """Delete a file; returns whether it existed (a missing one raises FileNotFoundError unless
    `missing_ok`)."""
    try:
        os.remove(path)
    except FileNotFoundError:
        if not missing_ok:
            raise
        return False
    return True


def remove_tree(folder: str) -> None:
    """Delete a folder and everything under it (nothing when it is missing)."""
    shutil.rmtree(folder, ignore_errors=True)


def open_lock(path: str) -> IO[bytes]:
    """A lock file opened for `fcntl.flock` (created with its folder when missing): locks are
    coordination between the processes of one machine, not table data."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return open(path, "a+b")


def _write(handle: IO[bytes], chunks: Iterable[bytes], durable: bool) -> None:
    for chunk in chunks:
        handle.write(chunk)
    if durable:
        handle.flush()
        os.fsync(handle.fileno())
