"""`ScanOptions`: every option of a scan, in one place (Table.plan/scan/read, the catalog's scan
requests, the HTTP client and the CLI take theirs from here)."""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pyarrow.compute as pc

    from shim.filters import FilterLike

ScanMode = Literal["snapshot", "read_optimized"]
CorruptMode = Literal["error", "skip"]


@dataclass(frozen=True, slots=True)
class ScanOptions:
    """What a scan reads and how it returns it.

    Attributes:
        mode: "snapshot" merges log files onto base files; "read_optimized" reads base files only.
        columns: columns to return, in this order (None: all data columns in table order).
        filter: a SQL-like string (`"city = 'sf' AND fare > 10"`), an `Expr`,
            `[(column, op, value), ...]` meaning their conjunction, or a
            `pyarrow.compute.Expression` (as engines push them down).
        as_of: read the table as of this instant (`yyyyMMddHHmmssSSS`, `yyyy-MM-dd[ HH:mm:ss]`).
        include_meta: prepend Hudi's meta columns when `columns` is not given.
        dictionary_partitions: return partition columns dictionary-encoded (their values repeat
            per partition: cheaper to build, send and ingest; DuckDB sees VARCHAR).
        limit: at most this many rows (a few rows are read in small batches, one file after
            another, so a preview reads little).
        dictionary_strings: return dictionary-encoded the partition columns and the string
            columns that data files store as dictionaries (repeated values such as names and
            codes), sparing their decoding; columns the filter or the merge compares stay plain.
        corrupt: "error": a log block inside bytes a completed commit appended that cannot be
            read raises `CommittedDataError` (file, offset, instant); "skip" goes on without it,
            as Hudi does. Corrupt regions no commit wrote (the torn tail of a failed append) are
            skipped either way.
        changes: (start, end) for an incremental read: the latest values of the records written
            by commits in (start, end] (end None: latest).
        metadata: False lists storage and opens footers even where the table's metadata table
            could serve the read (None or True: as the table was opened, `open_table(metadata=...)`).
    """

    mode: str = "snapshot"
    columns: Sequence[str] | None = None
    filter: FilterLike | pc.Expression = None
    as_of: str | None = None
    include_meta: bool = False
    dictionary_partitions: bool = False
    limit: int | None = None
    dictionary_strings: bool = False
    corrupt: CorruptMode = "error"
    changes: tuple[str, str | None] | None = None
    metadata: bool | None = None

    def __post_init__(self) -> None:
        if self.columns is not None and not isinstance(self.columns, str | tuple):
            object.__setattr__(self, "columns", tuple(self.columns))

    def replace(self, **changes: Any) -> ScanOptions:
        """A copy with the given options changed."""
        return dataclasses.replace(self, **changes)

    def key(self) -> tuple[Hashable, ...] | None:
        """The options but the filter, as a cache key (None when one of them is not hashable)."""
        parts = tuple(getattr(self, name) for name in NAMES if name != "filter")
        try:
            hash(parts)
        except TypeError:
            return None
        return parts

    def scan_arguments(self) -> dict[str, Any]:
        """Keyword arguments of `shim.read.request.build_scan`."""
        return {"mode": self.mode, "columns": self.columns, "row_filter": self.filter, "as_of": self.as_of,
                "include_meta": self.include_meta, "dictionary_partitions": self.dictionary_partitions,
                "limit": self.limit, "dictionary_strings": self.dictionary_strings, "corrupt": self.corrupt,
                "commit_range": self.changes, "metadata": self.metadata}

    def non_defaults(self) -> dict[str, Any]:
        """The options set to other values than their defaults, by name."""
        return {name: value for name in NAMES if not _is_default(value := getattr(self, name), _DEFAULTS[name])}


METADATA_ENABLE = "hoodie.metadata.enable"
"""Hudi's read option that turns the metadata table off ("false") or on ("true")."""


def metadata_option(options: Mapping[str, str] | None, default: bool = True) -> bool:
    """Whether to use the metadata table, from Hudi's option `hoodie.metadata.enable` in
    `options` (`default` when absent).

    Raises:
        InvalidArgumentError: a value other than true or false, or an option hudi-shim does not take.
    """
    from shim.errors import InvalidArgumentError

    options = dict(options or {})
    value = options.pop(METADATA_ENABLE, None)
    if options:
        raise InvalidArgumentError(f"unknown read option {min(options)!r}; hudi-shim takes {METADATA_ENABLE}")
    if value is None:
        return default
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise InvalidArgumentError(f"{METADATA_ENABLE}={value!r}: use true or false")
    return text == "true"


NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(ScanOptions))
"""The option names, in declaration order."""
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(ScanOptions)}


def _is_default(value: object, default: object) -> bool:
    # Compared only with a value of the default's type: `expression != None` is an Expression.
    return value is default or (type(value) is type(default) and value == default)
