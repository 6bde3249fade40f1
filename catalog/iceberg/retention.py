"""Removing published files that no Iceberg reader needs any more.

Every commit to a table publishes new versions of its views: new metadata, and new files for the
slices the commit touched (a merge-on-read slice's standing log records are written again, with
the new ones). Older versions stay readable for a while after they were published, since a
reader may have loaded one just before; then their metadata, manifests and the written files no
kept version names are removed. Only files the publisher writes are ever removed (Parquet, Avro
and metadata files, in a table's `data` folder and its views' `metadata` folders), and never in a
folder that holds a Hudi table (`--iceberg-dir` pointed at the tables themselves).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator

import fastavro

from catalog.iceberg.statistics import files_named_by
from shim.errors import HudiShimError
from shim.storage import Storage, from_uri, paths

log = logging.getLogger(__name__)

METADATA_SUFFIX = ".metadata.json"
#: The views' metadata folders: for readers of the name mapping, and for readers by name.
VIEWS = ("snapshot", "read_optimized", "snapshot-by-name", "read_optimized-by-name")
_WRITTEN_SUFFIXES = (".parquet", ".avro", METADATA_SUFFIX, ".puffin", ".tmp")


def expire(out: Storage, table_folder: str, keep_seconds: float, now: float | None = None) -> list[str]:
    """Remove the files of `table_folder` on `out` (one table's published views) that no kept version
    names; returns the paths removed.

    Kept: in each view's metadata folder, the newest metadata file and every one written (or
    published again) less than `keep_seconds` ago, with the manifest lists, manifests and data
    files they name. A file written less than `keep_seconds` ago is never removed: a publish may
    be writing the version that will name it.
    """
    if out.exists(paths.hoodie(table_folder)):
        log.warning("not expiring published files in %s: it holds a Hudi table", table_folder)
        return []
    now = time.time() if now is None else now
    horizon = now - keep_seconds
    kept: set[str] = set()
    for metadata in _kept_metadata(out, table_folder, horizon):
        try:
            kept.add(metadata)
            kept.update(_named_by(out, metadata))
        except (OSError, ValueError, KeyError, HudiShimError) as exc:
            # A version that cannot be read whole keeps everything: better too many files than
            # a reader missing one.
            log.warning("not expiring published files of %s: cannot read %s: %s", table_folder, metadata, exc)
            return []
    removed = []
    for path in _files(out, table_folder):
        if path in kept:
            continue
        try:
            if out.stat(path).mtime >= horizon:
                continue
            out.remove(path)
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed


def _kept_metadata(out: Storage, table_folder: str, horizon: float) -> Iterator[str]:
    """Per view folder, the newest metadata file and those touched after `horizon`."""
    for view in VIEWS:
        folder = os.path.join(table_folder, view, "metadata")
        if not out.is_dir(folder):
            continue
        versions = []
        for name in out.list_names(folder):
            if name.endswith(METADATA_SUFFIX) and not name.startswith("."):
                path = os.path.join(folder, name)
                try:
                    versions.append((out.stat(path).mtime, path))
                except FileNotFoundError:
                    continue
        if not versions:
            continue
        newest = max(versions)[1]
        yield newest
        yield from (path for mtime, path in versions if mtime >= horizon and path != newest)


def _named_by(out: Storage, metadata_path: str) -> set[str]:
    """The manifest lists, manifests, data files and statistics files (with the slice sketches
    they were made of) a metadata file names (local paths)."""
    metadata = json.loads(out.read_text(metadata_path))
    named: set[str] = set()
    for statistics in metadata.get("statistics", []):
        path = _local(statistics["statistics-path"])
        named.add(path)
        named.update(_local(uri) for uri in files_named_by(out, path))
    for snapshot in metadata.get("snapshots", []):
        manifest_list = _local(snapshot["manifest-list"])
        named.add(manifest_list)
        for entry in _avro_records(out, manifest_list):
            manifest = _local(entry["manifest_path"])
            named.add(manifest)
            named.update(_local(record["data_file"]["file_path"]) for record in _avro_records(out, manifest))
    return named


def _avro_records(out: Storage, path: str) -> list[dict]:
    with out.open_input(path) as handle:
        return [record for record in fastavro.reader(handle) if isinstance(record, dict)]


def _files(out: Storage, table_folder: str) -> Iterator[str]:
    """The files the publisher writes for a table: written slices and its views' metadata."""
    for folder in [os.path.join(table_folder, "data")] + [os.path.join(table_folder, v, "metadata") for v in VIEWS]:
        if not out.is_dir(folder):
            continue
        for entry in out.list_files(folder):
            if entry.is_file and entry.name.endswith(_WRITTEN_SUFFIXES):
                yield entry.path


def _local(uri: str) -> str:
    return from_uri(uri)
