"""`LOCAL`: the local file system as a `Storage`, for tests that read or write files by absolute path."""

from __future__ import annotations

from shim.storage import LocalStorage

LOCAL = LocalStorage("/")
