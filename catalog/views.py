"""Published views of a table: its schema with column ids and, per file, how the file maps onto it.

A view (`snapshot` or `read_optimized`) as of an instant is the merged table schema plus one
`shim.FileSchema` per base file and log data block the read touches. Resolving a file's schema
means opening it (a Parquet footer, log block headers), so results are cached per file slice.
A slice's entry is keyed by the slice itself (file names and sizes), the table schema it maps
onto, and the completed instants that touched its file group: a new completed instant therefore
invalidates only the slices of the file groups it wrote (every slice if it changed the schema,
or if it is a rollback or restore, whose effect is not recorded file by file).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass, replace

import pyarrow as pa

import shim
from catalog.cache import LruCache
from catalog.handles import EVERY_GROUP, TableHandle
from shim import FileSchema, FileSlice
from shim.timeline.instant import instant_key

VIEWS = ("snapshot", "read_optimized")


@dataclass(frozen=True, slots=True)
class View:
    """A published view of a table.

    Attributes:
        table: the catalog name.
        view: "snapshot" or "read_optimized".
        instant: the completed instant read (None: the table has no commit yet).
        schema: data columns with their ids (`PARQUET:field_id` field metadata).
        files: every base file and log data block read, with its column mapping.
    """

    table: str
    view: str
    instant: str | None
    schema: pa.Schema
    files: tuple[FileSchema, ...]


class ViewCache:
    """Per-slice cache of file schema mappings, shared by all tables of a catalog."""

    def __init__(self, capacity: int) -> None:
        self.entries: LruCache[tuple[FileSchema, ...]] = LruCache(capacity)

    def view(self, handle: TableHandle, view: str, as_of: str | None = None) -> View:
        """The view as of `as_of` (default: the latest completed instant)."""
        table = handle.snapshot()
        return self.view_of(handle, table, table.plan(shim.ScanOptions(mode=view, as_of=as_of)))

    def view_of(self, handle: TableHandle, table: shim.TableSnapshot, scan: shim.Scan) -> View:
        """The view a scan of `table` planned (its slices, schema and read instant)."""
        schema_key = _schema_key(scan)
        touches = touch_keys(handle, table, scan.read_instant)
        keyed: list[tuple[FileSlice, Hashable]] = []
        missing: list[FileSlice] = []
        found: dict[FileSlice, tuple[FileSchema, ...]] = {}
        for file_slice in scan.slices:
            group = (file_slice.partition_path, file_slice.file_id)
            key: Hashable = (handle.entry.path, scan.mode, schema_key, file_slice, touches.get(group, touches[None]))
            keyed.append((file_slice, key))
            cached = self.entries.get(key)
            if cached is None:
                missing.append(file_slice)
            else:
                found[file_slice] = cached
        if missing:
            found.update(_resolve(scan, missing))
        files: list[FileSchema] = []
        for file_slice, key in keyed:
            if file_slice in missing:
                self.entries.put(key, found[file_slice])
            files.extend(found[file_slice])
        return View(handle.name, scan.mode, scan.read_instant, scan.data_schema, tuple(files))


def _resolve(scan: shim.Scan, slices: list[FileSlice]) -> dict[FileSlice, tuple[FileSchema, ...]]:
    by_group: dict[tuple[str, str], list[FileSchema]] = defaultdict(list)
    for file_schema in replace(scan, slices=slices).file_schemas():
        by_group[(file_schema.partition_path, file_schema.file_id)].append(file_schema)
    return {s: tuple(by_group.get((s.partition_path, s.file_id), ())) for s in slices}


def _schema_key(scan: shim.Scan) -> bytes:
    schemas = scan.schemas
    digest = hashlib.blake2b(schemas.full_schema.serialize().to_pybytes(), digest_size=16)
    digest.update(b"id" if schemas.schema_on_read else b"name")
    return digest.digest()


def touch_keys(
    handle: TableHandle, table: shim.TableSnapshot, read_instant: str | None
) -> dict[tuple[str, str] | None, bytes]:
    """Per file group, a digest of the completed instants up to `read_instant` that touched it
    (key None: groups no listed instant touched). Rollbacks and restores count for every group."""
    per_group: dict[tuple[str, str], list[str]] = defaultdict(list)
    everywhere: list[str] = []
    limit = instant_key(read_instant) if read_instant is not None else None
    for instant in table.active_timeline.instants:
        if not instant.is_completed:
            continue
        touched = handle.touched_groups(table, instant)
        if touched == EVERY_GROUP:
            everywhere.append(instant.file_name)  # whatever its time: it may rewrite older logs
            continue
        if limit is not None and instant_key(instant.requested_time) > limit:
            continue
        for group in touched:
            per_group[group].append(instant.file_name)
    common = "\n".join(everywhere)
    keys: dict[tuple[str, str] | None, bytes] = {None: _digest(common)}
    for group, names in per_group.items():
        keys[group] = _digest(common + "\n|" + "\n".join(names))
    return keys


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
