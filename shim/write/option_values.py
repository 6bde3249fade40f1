"""Typed values of string options (`hoodie.*` keys), each error naming its key."""

from __future__ import annotations

from collections.abc import Mapping

from shim.errors import InvalidArgumentError


def text(options: Mapping[str, str], key: str, default: str | None = None) -> str | None:
    """The stripped value of `key` (`default` when absent or blank)."""
    value = options.get(key)
    if value is None:
        return default
    value = str(value).strip()
    return value if value else default


def flag(options: Mapping[str, str], key: str, default: bool) -> bool:
    """A true/false option (InvalidArgumentError naming it otherwise)."""
    value = text(options, key)
    if value is None:
        return default
    lowered = value.lower()
    if lowered not in ("true", "false"):
        raise InvalidArgumentError(f"{key}={value!r} must be true or false")
    return lowered == "true"


def integer(options: Mapping[str, str], key: str, default: int, minimum: int = 1) -> int:
    """An integer option of at least `minimum`."""
    value = text(options, key)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise InvalidArgumentError(f"{key}={value!r} must be an integer") from None
    if number < minimum:
        raise InvalidArgumentError(f"{key}={number} must be at least {minimum}")
    return number


def fields(value: str | None) -> tuple[str, ...]:
    """A comma-separated list of names."""
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())
