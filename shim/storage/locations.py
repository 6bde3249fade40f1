"""Locations, local or on an object store, as text: resolved, compared and spelled as URIs.

The one place that tells a local path from an object store's URI besides the storages
themselves: everything else asks these functions.
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlparse

from shim.errors import TableNotFoundError
from shim.storage.options import is_remote, normalize


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


def canonical_location(location: str) -> str:
    """`location` as one spelling per folder: a local folder's real absolute path (symbolic links
    resolved), an object store's normalized URI."""
    resolved = resolve_table_path(location)
    return resolved if is_remote(resolved) else os.path.realpath(resolved)


def spellings(location: str) -> set[str]:
    """The ways a message may spell `location`: as given (without a trailing slash) and resolved;
    a local folder also with symbolic links resolved (never "/")."""
    if is_remote(location) or "://" in location:
        return {location.rstrip("/"), resolve_table_path(location).rstrip("/")}
    absolute = os.path.abspath(os.path.expanduser(location))
    return {absolute, os.path.realpath(absolute)} - {"/", ""}


def local_folder(location: str) -> str | None:
    """The absolute local path of `location`; None when it is on an object store or HDFS."""
    return None if is_remote(location) else resolve_table_path(location)


def as_uri(path: str) -> str:
    """An absolute path as the URI other readers take: `file://` for a local one (an object
    store's location is a URI already)."""
    return path if is_remote(path) else "file://" + os.path.abspath(path)


def from_uri(uri: str) -> str:
    """The path `as_uri` made `uri` from."""
    return uri if is_remote(uri) else os.path.abspath(uri.removeprefix("file://"))


def is_inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies under it."""
    if is_remote(path) or is_remote(folder):
        return (path.rstrip("/") + "/").startswith(folder.rstrip("/") + "/")
    folder = os.path.abspath(folder)
    return os.path.commonpath([os.path.abspath(path), folder]) == folder
