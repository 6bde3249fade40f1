"""The project's local cache folder: `$HUDI_SHIM_CACHE`, default `~/.cache/hudi-shim`.

It holds what is derived and can be rebuilt: unpacked engine distributions, the Hudi oracle's
venv and tables, local lock files standing for object-store tables, the registry of a warehouse
kept on an object store.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """The cache folder (not created)."""
    return Path(os.environ.get("HUDI_SHIM_CACHE") or Path.home() / ".cache" / "hudi-shim")


def cache_dir(*parts: str) -> Path:
    """A folder under the cache, made if missing."""
    folder = cache_root().joinpath(*parts)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
