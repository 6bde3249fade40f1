"""`RemoteStorage`: a table's files on an object store or HDFS, through pyarrow's file systems,
with the options (credentials, endpoint, region) of that table.

What object stores cannot do as a local file system does, and what is done instead:
- no rename: `write_atomically` is one PUT (an object appears whole or not at all); `replace` is
  a copy then a delete, so it is not atomic;
- no append: `write_after` and `truncate` rewrite the object with the kept prefix;
- put-if-absent and the writers' lock use the store's conditional writes where it honours them
  (`shim.storage.conditional`, `shim.storage.object_lock`); elsewhere `create_if_absent` checks,
  then writes, and the lock is a local file (one machine's writers only).
Errors other than a missing object (denied, no bucket, throttled, unreachable) raise
`StorageError` naming the location and the store's reason; credentials never appear in them.
Object sizes seen in listings are remembered per storage, so reading an object needs no HEAD.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import IO, Any, TypeVar

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from shim.errors import StorageError, UnsupportedFeatureError
from shim.local_cache import cache_root
from shim.storage.base import FileInfo, Hold, Storage
from shim.storage.conditional import Conditional
from shim.storage.local import LocalStorage
from shim.storage.object_lock import ObjectLock
from shim.storage.options import (
    GCS_SCHEMES,
    S3_SCHEMES,
    build_filesystem,
    filesystem_path,
    normalize,
    redacted,
    s3_arguments,
    split,
)

T = TypeVar("T")


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


class _SizeMemo:
    """Object sizes seen in listings. Hudi's files are not rewritten in place (a log append here
    rewrites the object, and forgets its size); a stale size would read the object as it was
    listed, which is what a scan planned from that listing reads anyway."""

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
        with self._lock:
            return self._sizes.get(location)

    def forget(self, location: str) -> None:
        with self._lock:
            self._sizes.pop(location, None)


class RemoteStorage(Storage):
    """Files on one object store bucket (or HDFS), reached with this storage's own options."""

    def __init__(self, root: str, options: Mapping[str, str] | None = None) -> None:
        self.root = normalize(root)
        self._options = {str(k).lower(): str(v) for k, v in (options or {}).items()}
        parts = split(self.root)
        self._parts = parts
        self._lock = threading.Lock()
        self._system: pafs.FileSystem | None = None
        self.sizes = _SizeMemo()
        self.conditional = Conditional(parts.scheme, parts.bucket, self._options,
                                       remove=lambda location: self.remove(location, missing_ok=True))

    def __repr__(self) -> str:
        return f"RemoteStorage({self.root!r}, {redacted(self._options)!r})"

    def __reduce__(self) -> tuple[type, tuple[str, dict[str, str]]]:
        return RemoteStorage, (self.root, self._options)  # for a Spark task elsewhere: built anew there

    def __eq__(self, other: object) -> bool:  # the same store reached the same way reads the same bytes
        return (isinstance(other, RemoteStorage) and other._parts.root == self._parts.root
                and other._options == self._options)

    def __hash__(self) -> int:
        return hash((self._parts.root, frozenset(self._options.items())))

    @property
    def is_remote(self) -> bool:
        return True

    @property
    def options(self) -> dict[str, str]:
        return dict(self._options)

    def within(self, location: str) -> Storage:
        if split(location).root != self._parts.root:
            return RemoteStorage(location, self._options)
        copy = RemoteStorage.__new__(RemoteStorage)
        copy.__dict__.update(self.__dict__)
        copy.root = normalize(location)
        return copy

    def filesystem(self, location: str) -> tuple[pafs.FileSystem, str]:
        """The pyarrow file system of this store (built once) and the path of `location` in it."""
        parts = split(location)
        if parts.root != self._parts.root:
            raise StorageError(f"{location} is not on the store of {self.root}", location=location)
        with self._lock:
            if self._system is None:
                self._system = build_filesystem(self._parts, self._options)
            system = self._system
        return system, filesystem_path(parts)

    def container_exists(self) -> bool:
        """Whether the bucket (or HDFS root) exists."""
        system, _ = self.filesystem(self.root)
        bucket = self._parts.bucket
        return guarded(self.root, "look up", lambda: system.get_file_info(bucket)).type != pafs.FileType.NotFound

    def _info(self, location: str) -> pafs.FileInfo:
        system, path = self.filesystem(location)
        return guarded(location, "look up", lambda: system.get_file_info(path))

    def _upload(self, location: str, chunks: Iterable[bytes]) -> None:
        system, path = self.filesystem(location)
        self.sizes.forget(location)

        def upload() -> None:
            with system.open_output_stream(path) as out:
                for chunk in chunks:
                    out.write(chunk)

        guarded(location, "write", upload)

    # -- reading

    def _read_raw(self, path: str) -> bytes:
        system, where = self.filesystem(path)

        def read() -> bytes:  # a HEAD for the size, then one GET of it all
            with system.open_input_file(where) as handle:
                return bytes(handle.read())

        return guarded(path, "read", read)

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        system, where = self.filesystem(path)

        def read() -> bytes:
            with system.open_input_file(where) as handle:
                size = handle.size()
                return bytes(handle.read_at(max(0, min(length, size - offset)), offset)) if offset < size else b""

        return guarded(path, "read", read)

    def open_input(self, path: str) -> IO[bytes]:
        system, where = self.filesystem(path)
        opened: Any = guarded(path, "open", lambda: system.open_input_file(where))
        return opened  # a file-like NativeFile

    def parquet_source(self, path: str) -> str | pa.NativeFile:
        """A random-access file on the store: footer and column chunks are ranged reads."""
        system, where = self.filesystem(path)
        return guarded(path, "open", lambda: system.open_input_file(where))

    def parquet_metadata(self, path: str) -> pq.FileMetaData:
        """Read with the size its listing gave (ranged GETs of the footer, no HEAD)."""
        size = self.known_size(path)
        if size is None:
            return guarded(path, "read", lambda: pq.read_metadata(self.parquet_source(path)))
        system, where = self.filesystem(path)
        fragment = ds.ParquetFileFormat().make_fragment(where, system, file_size=size)

        def load() -> pq.FileMetaData:
            fragment.ensure_complete_metadata()
            return fragment.metadata

        return guarded(path, "read", load)

    def parquet_dataset(self, paths: Sequence[str], schema: pa.Schema, file_format: ds.ParquetFileFormat) -> ds.Dataset:
        """The sizes its listings gave spare a HEAD request per file."""
        system, located = self.arrow_filesystem(paths)
        fragments = [file_format.make_fragment(where, system, file_size=self.known_size(path))
                     for path, where in zip(paths, located, strict=True)]
        return ds.FileSystemDataset(fragments, schema, file_format, system)

    def arrow_filesystem(self, paths: Sequence[str]) -> tuple[pafs.FileSystem, list[str]]:
        system, _ = self.filesystem(self.root)
        return system, [self.filesystem(path)[1] for path in paths]

    @contextmanager
    def atomic_output(self, path: str) -> Iterator[pa.NativeFile]:
        """One upload (an object store has no rename)."""
        with self.parquet_sink(path) as sink:
            assert not isinstance(sink, str)
            yield sink

    def random_access(self, path: str) -> pa.NativeFile:
        return pa.BufferReader(self._read_raw(path))

    @contextmanager
    def parquet_sink(self, path: str) -> Iterator[str | pa.NativeFile]:
        system, where = self.filesystem(path)
        self.sizes.forget(path)
        stream = guarded(path, "write", lambda: system.open_output_stream(where))
        try:
            yield stream
        except BaseException:
            stream.close()  # pyarrow cannot abort an upload: the torn object is removed (and was never committed)
            self.remove(path, missing_ok=True)
            raise
        guarded(path, "write", stream.close)

    def rust_location(self, path: str) -> tuple[str, dict[str, str]]:
        """An S3 object with this storage's S3 settings (or the AWS_* environment's) in
        object_store's names; a GCS one with the environment's credentials; HDFS is refused."""
        parts = split(path)
        if parts.scheme in GCS_SCHEMES:
            return f"gs://{parts.bucket}/{parts.key}", {}
        if parts.scheme not in S3_SCHEMES:
            raise UnsupportedFeatureError(
                f"{path}: files on {parts.scheme}:// are not read by object_store based readers (local, S3 and GCS)",
                feature="object-store-" + parts.scheme, path=path)
        names = {"access_key": "aws_access_key_id", "secret_key": "aws_secret_access_key",
                 "session_token": "aws_session_token", "region": "aws_region"}
        arguments = s3_arguments(self._options)
        options = {names[k]: v for k, v in arguments.items() if k in names}
        endpoint = arguments.get("endpoint_override")
        if endpoint:
            http = arguments.get("scheme", "https") == "http"
            options["aws_endpoint"] = ("http://" if http else "https://") + endpoint
            if http:
                options["allow_http"] = "true"
        if arguments.get("force_virtual_addressing", "").lower() in ("1", "true", "yes"):
            options["aws_virtual_hosted_style_request"] = "true"
        return f"s3://{parts.bucket}/{parts.key}", options

    # -- listing and metadata

    def exists(self, path: str) -> bool:
        return self._info(path).type != pafs.FileType.NotFound

    def is_file(self, path: str) -> bool:
        return self._info(path).type == pafs.FileType.File

    def is_dir(self, path: str) -> bool:
        return self._info(path).type == pafs.FileType.Directory

    def stat(self, path: str) -> FileInfo:
        found = self._info(path)
        if found.type == pafs.FileType.NotFound:
            raise FileNotFoundError(path)
        return _info(path, found)

    def change_stamp(self, path: str, *, folder: bool) -> tuple[int, int, int]:
        """A prefix carries no time or size on an object store (its `stat` answers 0s, after a
        HEAD and a LIST): nothing to compare, and no request; a file's as `stat` gives it."""
        if folder:
            return 0, 0, -1
        return super().change_stamp(path, folder=False)

    def file_version(self, path: str) -> tuple[int, int]:
        """As its listing saw it (no request), else `stat`."""
        seen = self.sizes.get(path)
        if seen is not None:
            return seen
        return super().file_version(path)

    def known_size(self, path: str) -> int | None:
        seen = self.sizes.get(path)
        return seen[0] if seen else None

    def remember_sizes(self, sizes: Iterable[tuple[str, int]]) -> None:
        for path, size in sizes:
            if size > 0 and self.sizes.get(path) is None:
                self.sizes.remember(path, size)

    def _entries(self, folder: str) -> list[tuple[str, pafs.FileInfo]]:
        """(URI, info) of what is directly in `folder` ([] when nothing is there)."""
        system, path = self.filesystem(folder)
        selector = pafs.FileSelector(path, allow_not_found=True, recursive=False)
        found = guarded(folder, "list", lambda: system.get_file_info(selector))
        base = folder.rstrip("/")
        entries = [(f"{base}/{entry.base_name}", entry) for entry in found]
        for uri, entry in entries:
            if entry.type == pafs.FileType.File and entry.size is not None:
                self.sizes.remember(uri, entry.size, entry.mtime_ns or 0)
        return entries

    def list_names(self, folder: str) -> list[str]:
        return [entry.base_name for _, entry in self._entries(folder)]

    def list_files(self, folder: str) -> list[FileInfo]:
        return [_info(uri, entry) for uri, entry in self._entries(folder)]

    def walk(self, root: str) -> Iterator[tuple[str, list[str], list[str]]]:
        """`os.walk` over a prefix, one listing per folder."""
        entries = self._entries(root)
        folders = [entry.base_name for _, entry in entries if entry.type == pafs.FileType.Directory]
        files = [entry.base_name for _, entry in entries if entry.type == pafs.FileType.File]
        if not entries and self._info(root).type != pafs.FileType.Directory:
            return
        yield root.rstrip("/"), folders, files
        for name in folders:
            yield from self.walk(f"{root.rstrip('/')}/{name}")

    # -- writing

    def make_dirs(self, folder: str) -> None:
        return  # object stores have no folders

    def write_atomically(self, path: str, data: bytes, *, durable: bool = True) -> None:
        """One upload, which appears whole or not at all."""
        self._upload(path, [data])

    def create_if_absent(self, path: str, chunks: Iterable[bytes] = (), *, durable: bool = False) -> bool:
        """A conditional write where the store honours them, else a check, then a write."""
        if self.conditional.enabled(path):
            return self.conditional.create(path, b"".join(chunks)) is not None
        if self._info(path).type != pafs.FileType.NotFound:
            return False
        self._upload(path, chunks)
        return True

    def write_new(self, path: str, data: bytes) -> bool:
        return self.create_if_absent(path, [data])

    def touch_existing(self, path: str) -> bool:
        """Upload it again."""
        try:
            kept = self._read_raw(path)
        except FileNotFoundError:
            return False
        self._upload(path, [kept])
        return True

    def touch(self, path: str) -> None:
        if not self.touch_existing(path):
            self._upload(path, [b""])

    def write_after(self, path: str, offset: int, chunks: Iterable[bytes]) -> int:
        """The object is written again, prefix and all."""
        found = self._info(path)
        if found.type == pafs.FileType.NotFound:
            raise FileNotFoundError(path)
        size = found.size or 0
        if size < offset:
            return size
        kept = self.read_range(path, 0, offset) if offset else b""
        self._upload(path, [kept, *chunks])
        return size

    def truncate(self, path: str, size: int) -> None:
        self._upload(path, [self.read_range(path, 0, size)])

    def replace(self, source: str, target: str) -> None:
        """Copy then delete (object stores have no rename): not atomic."""
        system, source_path = self.filesystem(source)
        _, target_path = self.filesystem(target)
        guarded(target, "copy to", lambda: system.copy_file(source_path, target_path))
        self.sizes.forget(target)
        self.remove(source, missing_ok=True)

    def remove(self, path: str, *, missing_ok: bool = False) -> bool:
        system, where = self.filesystem(path)
        if self._info(path).type == pafs.FileType.NotFound:
            if missing_ok:
                return False
            raise FileNotFoundError(path)
        self.sizes.forget(path)
        guarded(path, "delete", lambda: system.delete_file(where))
        return True

    def remove_tree(self, folder: str) -> None:
        system, where = self.filesystem(folder)
        guarded(folder, "delete", lambda: system.delete_dir_contents(where, missing_dir_ok=True))
        try:
            system.delete_dir(where)
        except OSError:
            pass  # object stores have no folder object to remove

    @contextmanager
    def exclusive(self, path: str) -> Iterator[Hold]:
        """An object on the store where it honours conditional writes (the writers of every
        machine: `shim.storage.object_lock`); elsewhere a local file standing for it."""
        if self.conditional.enabled(path):
            with ObjectLock(self.conditional, path) as lock:
                yield lock
            return
        with LocalStorage(os.path.dirname(self._lock_path(path))).exclusive(self._lock_path(path)) as hold:
            yield hold

    def open_lock(self, path: str) -> IO[bytes]:
        """A local lock file standing for `path` (the writers of this machine only)."""
        local = self._lock_path(path)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        return open(local, "a+b")

    @staticmethod
    def _lock_path(location: str) -> str:
        digest = hashlib.sha256(location.encode()).hexdigest()[:32]
        return str(cache_root() / "locks" / f"{digest}.lock")


def _info(uri: str, entry: pafs.FileInfo) -> FileInfo:
    is_file = entry.type == pafs.FileType.File
    return FileInfo(uri, entry.base_name, (entry.size or 0) if is_file else 0, (entry.mtime_ns or 0) if is_file else 0,
                    is_file)
