"""`LocalStorage`: a table's files on the local file system."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from stat import S_ISDIR
from typing import IO

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from shim.storage.base import FileInfo, Hold, Storage

_LOCAL = pafs.LocalFileSystem()


class _FileHold:
    def check(self) -> None:
        """A lock file is held until it is released (or its process dies)."""


class LocalStorage(Storage):
    """Files of a local folder; atomic writes by rename, locks by `flock`."""

    def __init__(self, root: str) -> None:
        self.root = root

    def __repr__(self) -> str:
        return f"LocalStorage({self.root!r})"

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return LocalStorage, (self.root,)

    def __eq__(self, other: object) -> bool:  # what a path reads is the same under any root
        return isinstance(other, LocalStorage)

    def __hash__(self) -> int:
        return hash(LocalStorage)

    @property
    def is_remote(self) -> bool:
        return False

    def within(self, location: str) -> Storage:
        return LocalStorage(location)

    # -- reading

    def _read_raw(self, path: str) -> bytes:
        with open(path, "rb") as handle:
            return handle.read()

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        with open(path, "rb") as handle:
            handle.seek(offset)
            return handle.read(length)

    def open_input(self, path: str) -> IO[bytes]:
        return open(path, "rb")

    def parquet_source(self, path: str) -> str | pa.NativeFile:
        return path

    def parquet_metadata(self, path: str) -> pq.FileMetaData:
        return pq.read_metadata(path)

    def parquet_dataset(self, paths: Sequence[str], schema: pa.Schema, file_format: ds.ParquetFileFormat) -> ds.Dataset:
        return ds.FileSystemDataset.from_paths(list(paths), schema=schema, format=file_format, filesystem=_LOCAL)

    def arrow_filesystem(self, paths: Sequence[str]) -> tuple[pafs.FileSystem, list[str]]:
        return _LOCAL, list(paths)

    @contextmanager
    def atomic_output(self, path: str) -> Iterator[pa.NativeFile]:
        """Written aside, then renamed into place."""
        tmp = self.temporary_path(path)
        try:
            with pa.OSFile(tmp, "wb") as sink:
                yield sink
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)

    def random_access(self, path: str) -> pa.NativeFile:
        return pa.memory_map(path)

    @contextmanager
    def parquet_sink(self, path: str) -> Iterator[str | pa.NativeFile]:
        yield path

    # -- listing and metadata

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def is_file(self, path: str) -> bool:
        return os.path.isfile(path)

    def is_link(self, path: str) -> bool:
        return os.path.islink(path)

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def stat(self, path: str) -> FileInfo:
        info = os.stat(path)
        return FileInfo(path, os.path.basename(path), info.st_size, info.st_mtime_ns, not S_ISDIR(info.st_mode))

    def file_size(self, path: str) -> int:
        return os.path.getsize(path)

    def list_names(self, folder: str) -> list[str]:
        try:
            return os.listdir(folder)
        except FileNotFoundError:
            return []

    def list_files(self, folder: str) -> list[FileInfo]:
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
            infos.append(FileInfo(entry.path, entry.name, info.st_size if info else 0,
                                  info.st_mtime_ns if info else 0, is_file))
        return infos

    def walk(self, root: str) -> Iterator[tuple[str, list[str], list[str]]]:
        return os.walk(root)

    # -- writing

    def make_dirs(self, folder: str) -> None:
        os.makedirs(folder, exist_ok=True)

    def write_atomically(self, path: str, data: bytes, *, durable: bool = True) -> None:
        """Write `data` to a temporary file and rename it into place; the temporary name is the
        writing thread's own, so writers racing for `path` never collide."""
        tmp = self.temporary_path(path)
        with open(tmp, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)

    def create_if_absent(self, path: str, chunks: Iterable[bytes] = (), *, durable: bool = False) -> bool:
        try:
            with open(path, "xb") as handle:
                _write(handle, chunks, durable)
        except FileExistsError:
            return False
        return True

    def write_new(self, path: str, data: bytes) -> bool:
        """A temporary file hard-linked into place: the link fails where a file is."""
        tmp = self.temporary_path(path)
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

    def touch_existing(self, path: str) -> bool:
        try:
            os.utime(path, None)
        except FileNotFoundError:
            return False
        return True

    def touch(self, path: str) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "ab"):
            pass
        os.utime(path, None)

    def write_after(self, path: str, offset: int, chunks: Iterable[bytes]) -> int:
        with open(path, "r+b") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < offset:
                return size
            handle.truncate(offset)
            handle.seek(offset)
            _write(handle, chunks, True)
        return size

    def truncate(self, path: str, size: int) -> None:
        os.truncate(path, size)

    def replace(self, source: str, target: str) -> None:
        os.replace(source, target)

    def remove(self, path: str, *, missing_ok: bool = False) -> bool:
        try:
            os.remove(path)
        except FileNotFoundError:
            if not missing_ok:
                raise
            return False
        return True

    def remove_tree(self, folder: str) -> None:
        shutil.rmtree(folder, ignore_errors=True)

    @contextmanager
    def exclusive(self, path: str) -> Iterator[Hold]:
        """An exclusive `flock` on the file `path` (the processes of one machine)."""
        with self.open_lock(path) as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield _FileHold()
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def open_lock(self, path: str) -> IO[bytes]:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return open(path, "a+b")


def _write(handle: IO[bytes], chunks: Iterable[bytes], durable: bool) -> None:
    for chunk in chunks:
        handle.write(chunk)
    if durable:
        handle.flush()
        os.fsync(handle.fileno())
