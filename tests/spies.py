"""Spies on the functions that read base files, to see which files a scan opened."""

from __future__ import annotations


def spy_on(monkeypatch, module, name: str) -> list[str]:
    """The paths passed to `module.name` (a reader of base files: storage, then paths) from now on."""
    seen: list[str] = []
    original = getattr(module, name)

    def spy(storage, paths, *args, **kwargs):
        seen.extend([paths] if isinstance(paths, str) else paths)
        return original(storage, paths, *args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen
