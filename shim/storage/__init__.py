"""Storage: a table's files, local or on an object store, as one object the table holds.

`storage_for(location, options)` builds it once for a table's location (`shim.open_table` does);
its methods are the whole surface for reading, listing, writing atomically, creating only where
none is, removing and locking files (see `Storage`). `RemoteStorage` keeps its own options
(credentials, endpoint): two tables under one bucket prefix with different credentials each read
with their own. `shim.storage.paths` names every file under `.hoodie`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from shim.storage.base import FileInfo, Hold, Storage, decode_text, join
from shim.storage.local import LocalStorage
from shim.storage.locations import (
    as_uri,
    canonical_location,
    from_uri,
    is_inside,
    local_folder,
    resolve_table_path,
    spellings,
)
from shim.storage.options import (
    STORAGE_OPTION_PREFIX,
    is_remote,
    normalized_options,
    redacted,
    split_storage_options,
)
from shim.storage.remote import RemoteStorage


def storage_for(location: str | os.PathLike[str], options: Mapping[str, object] | None = None) -> Storage:
    """The storage of a location (resolved as `resolve_table_path` does), with `options` for an
    object store (credentials, region, endpoint; see `shim.storage.options`)."""
    path = resolve_table_path(location)
    if is_remote(path):
        return RemoteStorage(path, normalized_options(options))
    return LocalStorage(path)


def as_storage(where: Storage | str | os.PathLike[str]) -> Storage:
    """`where` if it is a storage, else the storage of that location, reached without options
    (locally, or with the environment's credentials)."""
    return where if isinstance(where, Storage) else storage_for(where)


def storage_and_options(location: Storage | str | os.PathLike[str],
                        options: Mapping[str, str] | None) -> tuple[Storage, dict[str, str]]:
    """The storage of `location` built with the `storage.*` entries of `options` (unless it is a
    storage already), and the other options: what the writer's and services' entry points take."""
    rest, given = split_storage_options(dict(options or {}))
    return (location if isinstance(location, Storage) else storage_for(location, given)), rest


__all__ = [
    "STORAGE_OPTION_PREFIX",
    "FileInfo",
    "Hold",
    "LocalStorage",
    "RemoteStorage",
    "Storage",
    "as_storage",
    "as_uri",
    "canonical_location",
    "decode_text",
    "from_uri",
    "is_inside",
    "join",
    "local_folder",
    "redacted",
    "resolve_table_path",
    "spellings",
    "split_storage_options",
    "storage_and_options",
    "storage_for",
]
