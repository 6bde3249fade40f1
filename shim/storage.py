"""Storage: the one entry point to a table's files, local or on an object store.

Every read, listing, atomic write, removal and rename of a table's files goes through these
functions. Paths are absolute local paths or URIs of object stores and HDFS (`s3://bucket/t/...`,
see `resolve_table_path`); the latter are served by `shim.object_store` through pyarrow's file
systems, with the options `shim.filesystems` keeps for them. Parquet files are handed to pyarrow
as `parquet_source` (reading) and `parquet_sink` (writing) say. Creating a file only where none
is (`create_if_absent`, `write_new`) and the writers' table lock (`exclusive`) use the store's
conditional writes where it honours them (`shim.conditional_writes`, `shim.object_lock`).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from stat import S_ISDIR
from typing import IO, Protocol
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from shim import conditional_writes, object_store
from shim.errors import InvalidTableError, TableNotFoundError, file_gone
from shim.filesystems import filesystem_for, is_remote, normalize
from shim.object_lock import ObjectLock

_LOCAL = pafs.LocalFileSystem()

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
    """Absolute local path of a table given as a path or a `file://` URI; the normalized URI of
    one on an object store or HDFS (`s3://bucket/path`)."""
    text = os.fspath(location)
    if is_remote(text):
        return normalize(text)
    if "://" in text or text.startswith("file:"):
        parsed = urlparse(text)
        if parsed.scheme != "file":
            raise TableNotFoundError(
                f"unsupported location {text!r}: hudi-shim reads local paths, file://, s3://, s3a://, gs:// "
                "and hdfs:// URIs",
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
        if is_remote(path):
            return object_store.read_bytes(path)
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise file_gone(path) from None


def read_text(path: str) -> str:
    """Whole content of a UTF-8 text file; raises FileNotFoundError when it is missing, and
    InvalidTableError naming the file when it is not UTF-8."""
    if is_remote(path):
        return decode_text(object_store.read_bytes(path), path)
    with open(path, "rb") as handle:
        return decode_text(handle.read(), path)


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


def read_range(path: str, offset: int, length: int) -> bytes:
    """`length` bytes of a file from `offset` (fewer at its end); raises FileNotFoundError."""
    if is_remote(path):
        return object_store.read_range(path, offset, length)
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read(length)


def open_input(path: str) -> IO[bytes]:
    """A file opened for streaming reads (the caller closes it); raises FileNotFoundError."""
    if is_remote(path):
        return object_store.open_input(path)  # a file-like NativeFile
    return open(path, "rb")


def parquet_source(path: str) -> str | pa.NativeFile:
    """What to hand pyarrow's Parquet readers for `path`: the local path, or a random-access file
    on the object store (footer and column chunks are ranged reads)."""
    if is_remote(path):
        return object_store.open_input(path)
    return path


def parquet_metadata(path: str) -> pq.FileMetaData:
    """The footer of the Parquet file at `path`; on an object store read with the size its
    listing gave (ranged GETs of the footer, no HEAD)."""
    size = object_store.known_size(path) if is_remote(path) else None
    if size is None:
        return pq.read_metadata(parquet_source(path))
    system, where = filesystem_for(path)
    fragment = ds.ParquetFileFormat().make_fragment(where, system, file_size=size)

    def load() -> pq.FileMetaData:
        fragment.ensure_complete_metadata()
        return fragment.metadata

    return object_store.guarded(path, "read", load)


def parquet_dataset(paths: Sequence[str], schema: pa.Schema, file_format: ds.ParquetFileFormat) -> ds.Dataset:
    """A pyarrow dataset of the Parquet files at `paths` (all on one file system); on an object
    store, the sizes its listings gave spare a HEAD request per file."""
    system, located = arrow_filesystem(paths)
    if not paths or not is_remote(paths[0]):
        return ds.FileSystemDataset.from_paths(located, schema=schema, format=file_format, filesystem=system)
    fragments = [file_format.make_fragment(where, system, file_size=object_store.known_size(path))
                 for path, where in zip(paths, located)]
    return ds.FileSystemDataset(fragments, schema, file_format, system)


def arrow_filesystem(paths: Sequence[str]) -> tuple[pafs.FileSystem, list[str]]:
    """The pyarrow file system holding `paths` (all on one) and the paths as it names them, for
    pyarrow's datasets."""
    if paths and is_remote(paths[0]):
        system, _ = filesystem_for(paths[0])
        return system, [filesystem_for(path)[1] for path in paths]
    return _LOCAL, list(paths)


@contextmanager
def parquet_sink(path: str) -> Iterator[str | pa.NativeFile]:
    """What to hand pyarrow's Parquet writers for `path`, for the writer's life: the local path,
    or an output stream whose object appears whole when this block ends without an error."""
    if not is_remote(path):
        yield path
        return
    stream = object_store.open_output(path)
    try:
        yield stream
    except BaseException:
        stream.close()  # pyarrow cannot abort an upload: the torn object is removed (and was never committed)
        remove(path, missing_ok=True)
        raise
    object_store.guarded(path, "write", stream.close)


# -- listing and metadata


def exists(path: str) -> bool:
    """Whether a file or folder exists at `path`."""
    if is_remote(path):
        return object_store.info(path).type != pafs.FileType.NotFound
    return os.path.exists(path)


def is_file(path: str) -> bool:
    """Whether `path` is a file."""
    if is_remote(path):
        return object_store.info(path).type == pafs.FileType.File
    return os.path.isfile(path)


def is_link(path: str) -> bool:
    """Whether `path` is a symbolic link (never, on an object store)."""
    return not is_remote(path) and os.path.islink(path)


def is_dir(path: str) -> bool:
    """Whether `path` is a folder (on an object store: a prefix holding objects)."""
    if is_remote(path):
        return object_store.info(path).type == pafs.FileType.Directory
    return os.path.isdir(path)


def stat(path: str) -> FileInfo:
    """Size and modification time of `path`; raises FileNotFoundError."""
    if is_remote(path):
        found = object_store.info(path)
        if found.type == pafs.FileType.NotFound:
            raise FileNotFoundError(path)
        return _remote_info(path, found)
    info = os.stat(path)
    return FileInfo(path, os.path.basename(path), info.st_size, info.st_mtime_ns, not S_ISDIR(info.st_mode))


def file_version(path: str) -> tuple[int, int]:
    """(size, modification time in ns) of a file that is not rewritten in place, for caches keyed
    by its version: on an object store as its listing saw it (no request), else `stat`.
    Raises FileNotFoundError."""
    if is_remote(path):
        seen = object_store.listed_version(path)
        if seen is not None:
            return seen
    info = stat(path)
    return info.size, info.mtime_ns


def file_size(path: str) -> int:
    """Size of a file in bytes; raises FileNotFoundError."""
    if is_remote(path):
        return stat(path).size
    return os.path.getsize(path)


def list_names(folder: str) -> list[str]:
    """Names in a folder, or [] when it does not exist."""
    if is_remote(folder):
        return [entry.base_name for _, entry in object_store.list_entries(folder)]
    try:
        return os.listdir(folder)
    except FileNotFoundError:
        return []


def list_files(folder: str) -> list[FileInfo]:
    """Files and folders directly in `folder` with their sizes, or [] when it does not exist."""
    if is_remote(folder):
        return [_remote_info(uri, entry) for uri, entry in object_store.list_entries(folder)]
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
    if is_remote(root):
        return object_store.walk(root)
    return os.walk(root)


# -- writing


def make_dirs(folder: str) -> None:
    """Create `folder` and its parents when missing (object stores have no folders: nothing)."""
    if is_remote(folder):
        return
    os.makedirs(folder, exist_ok=True)


def write_atomically(path: str, data: bytes, *, durable: bool = True) -> None:
    """Write `data` to a temporary file and rename it into place (readers see all or nothing).
    The temporary name is the writing thread's own, so writers racing for `path` never collide.
    `durable`: fsync before the rename (off for scratch state that only matters while a write runs).
    On an object store: one upload, which appears whole or not at all."""
    if is_remote(path):
        object_store.write(path, [data])
        return
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
    """Create `path` holding `chunks` unless it exists; returns whether it was created. (On an
    object store a conditional write where the store honours them, else a check, then a write:
    see `shim.conditional_writes`.)"""
    if is_remote(path):
        if conditional_writes.enabled(path):
            return conditional_writes.create(path, b"".join(chunks)) is not None
        return object_store.create_if_absent(path, chunks)
    try:
        with open(path, "xb") as handle:
            _write(handle, chunks, durable)
    except FileExistsError:
        return False
    return True


def write_new(path: str, data: bytes) -> bool:
    """Write `data` to `path` if no file is there, atomically (readers see all or nothing); returns
    whether it was written. Of writers racing for one name, exactly one succeeds (locally: a hard
    link of a temporary file; on an object store, a conditional write where the store honours them,
    else a check, then a write)."""
    if is_remote(path):
        if conditional_writes.enabled(path):
            return conditional_writes.create(path, data) is not None
        return object_store.create_if_absent(path, [data])
    tmp = temporary_path(path)
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links
        if os.path.exists(path):
            return False
        os.replace(tmp, path)
        return True
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return True


def touch_existing(path: str) -> bool:
    """Set the modification time of `path` to now if it exists (on an object store: upload it
    again); False, creating nothing, when it does not."""
    if is_remote(path):
        try:
            kept = object_store.read_bytes(path)
        except FileNotFoundError:
            return False
        object_store.write(path, [kept])
        return True
    try:
        os.utime(path, None)
    except FileNotFoundError:
        return False
    return True


def touch(path: str) -> None:
    """Create `path` (and its folder) when missing and set its modification time to now (on an
    object store: upload it again)."""
    if is_remote(path):
        if not touch_existing(path):
            object_store.write(path, [b""])
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "ab"):
        pass
    os.utime(path, None)


def write_after(path: str, offset: int, chunks: Iterable[bytes]) -> int:
    """Cut the existing file `path` to its first `offset` bytes and append `chunks` durably.
    Returns the size it had; when that is less than `offset` nothing is written.
    Raises FileNotFoundError. (On an object store: the object is written again, prefix and all.)"""
    if is_remote(path):
        return object_store.write_after(path, offset, chunks)
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
    if is_remote(path):
        object_store.truncate(path, size)
        return
    os.truncate(path, size)


def replace(source: str, target: str) -> None:
    """Rename `source` to `target`, replacing it atomically when it exists (on an object store:
    a copy and a delete, not atomic)."""
    if is_remote(source) or is_remote(target):
        object_store.replace(source, target)
        return
    os.replace(source, target)


def remove(path: str, *, missing_ok: bool = False) -> bool:
    """Delete a file; returns whether it existed (a missing one raises FileNotFoundError unless
    `missing_ok`)."""
    if is_remote(path):
        return object_store.remove(path, missing_ok=missing_ok)
    try:
        os.remove(path)
    except FileNotFoundError:
        if not missing_ok:
            raise
        return False
    return True


def remove_tree(folder: str) -> None:
    """Delete a folder and everything under it (nothing when it is missing)."""
    if is_remote(folder):
        object_store.remove_tree(folder)
        return
    shutil.rmtree(folder, ignore_errors=True)


class Hold(Protocol):
    """A held `exclusive` lock."""

    def check(self) -> None:
        """Raise `shim.object_lock.LockLostError` if another writer took the lock over."""


class _FileHold:
    def check(self) -> None:
        """A lock file is held until it is released (or its process dies)."""


@contextmanager
def exclusive(path: str) -> Iterator[Hold]:
    """Hold the lock named `path` while the block runs, waiting for other holders: locally an
    exclusive `flock` (one machine's processes); on an object store that honours conditional
    writes an object there (`shim.object_lock`: the writers of every machine); elsewhere a local
    file standing for it (one machine's processes only)."""
    if is_remote(path) and conditional_writes.enabled(path):
        with ObjectLock(path) as lock:
            yield lock
        return
    with open_lock(path) as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield _FileHold()
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def open_lock(path: str) -> IO[bytes]:
    """A lock file opened for `fcntl.flock` (created with its folder when missing): locks are
    coordination between the processes of one machine, not table data (for a location on an
    object store: a local file standing for it)."""
    if is_remote(path):
        return object_store.open_lock(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return open(path, "a+b")


def _write(handle: IO[bytes], chunks: Iterable[bytes], durable: bool) -> None:
    for chunk in chunks:
        handle.write(chunk)
    if durable:
        handle.flush()
        os.fsync(handle.fileno())


def _remote_info(uri: str, entry: pafs.FileInfo) -> FileInfo:
    is_file = entry.type == pafs.FileType.File
    return FileInfo(uri, entry.base_name, (entry.size or 0) if is_file else 0, (entry.mtime_ns or 0) if is_file else 0,
                    is_file)
