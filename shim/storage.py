"""Local file system access: table locations, listing and reading files."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlparse

from shim.errors import TableNotFoundError, file_gone


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


def read_bytes(path: str) -> bytes:
    """Whole content of a file; a missing file is a HudiShimError naming it."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise file_gone(path) from None


def list_names(folder: str) -> list[str]:
    """Names in a folder, or [] when it does not exist."""
    try:
        return os.listdir(folder)
    except FileNotFoundError:
        return []


def join(*parts: str) -> str:
    """Join path parts, ignoring empty ones (the non-partitioned partition is "")."""
    return os.path.join(*[p for p in parts if p])
