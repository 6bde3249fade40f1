"""`ScanOptions`: every option of a scan, declared once (Table.plan/scan/read, the catalog's scan
requests, the HTTP client and the CLI take theirs from here).

Adding an option is a field here and its use in planning (`shim.planning.planner.build_scan`) or
reading (`shim.planning.planner.Scan.reader`); `Table.scan` and `Table.read` take it at once
(`takes_scan_options`), and a `remote` one needs its wire type in `catalog.models.ScanBody`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Concatenate, Literal, ParamSpec, TypeVar

from shim.errors import InvalidArgumentError
from shim.read.damage import CorruptMode, SkippedBlocks

if TYPE_CHECKING:
    import pyarrow.compute as pc

    from shim.filters import FilterLike
    from shim.read.time_limit import TimeLimit

ScanMode = Literal["snapshot", "read_optimized"]


# What each option of `ScanOptions` is: part of the plan (so of the plan cache's key) and taken by
# a server in a scan request; part of the plan only; or of one reading only.
_REQUEST = {"plans": True, "remote": True}
_PLAN = {"plans": True, "remote": False}
_READING = {"plans": False, "remote": False}


@dataclass(frozen=True, slots=True)
class ScanOptions:
    """What a scan reads and how it returns it: the one list of a scan's options. `Table.scan`,
    `Table.read` and `Table.plan` take them (positionally in this order, or by name), so do the
    catalog's scan requests (`remote` options), the HTTP client and the CLI.

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
        skipped: collects the corrupt log regions the scan skipped, as it meets them (not part
            of the plan).
        time_limit: seconds (from the start of reading) or a `TimeLimit` after which reading
            stops with `ScanLimitError`; checked between batches, also those a filter empties
            (not part of the plan).
        metadata: False lists storage and opens footers even where the table's metadata table
            could serve the read (True: as the table was opened, `open_table(metadata=...)`).
    """

    mode: str = field(default="snapshot", metadata=_REQUEST)
    columns: Sequence[str] | None = field(default=None, metadata=_REQUEST)
    filter: FilterLike | pc.Expression = field(default=None, metadata=_REQUEST)
    as_of: str | None = field(default=None, metadata=_REQUEST)
    include_meta: bool = field(default=False, metadata=_PLAN)
    dictionary_partitions: bool = field(default=False, metadata=_REQUEST)
    limit: int | None = field(default=None, metadata=_REQUEST)
    dictionary_strings: bool = field(default=False, metadata=_REQUEST)
    corrupt: CorruptMode = field(default="error", metadata=_REQUEST)
    changes: tuple[str, str | None] | None = field(default=None, metadata=_PLAN)
    skipped: SkippedBlocks | None = field(default=None, metadata=_READING)
    time_limit: float | TimeLimit | None = field(default=None, metadata=_READING)
    metadata: bool = field(default=True, metadata=_REQUEST)

    def __post_init__(self) -> None:
        if self.columns is not None and not isinstance(self.columns, str | tuple):
            object.__setattr__(self, "columns", tuple(self.columns))

    def replace(self, **changes: Any) -> ScanOptions:
        """A copy with the given options changed."""
        return dataclasses.replace(self, **changes)

    def key(self) -> tuple[Hashable, ...] | None:
        """The options of the plan but the filter, as a cache key (None when one of them is not
        hashable)."""
        parts = tuple(getattr(self, name) for name in PLAN_NAMES if name != "filter")
        try:
            hash(parts)
        except TypeError:
            return None
        return parts

    def plan_only(self) -> ScanOptions:
        """These options without those that are not part of the plan (`skipped`, `time_limit`)."""
        return self.replace(**{name: _DEFAULTS[name] for name in NAMES if name not in PLAN_NAMES})

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
PLAN_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(ScanOptions) if f.metadata["plans"])
"""The options a plan depends on."""
REMOTE_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(ScanOptions) if f.metadata["remote"])
"""The options a server takes in a scan request (`catalog.models.ScanBody` has a field for each)."""
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(ScanOptions)}


def _is_default(value: object, default: object) -> bool:
    # Compared only with a value of the default's type: `expression != None` is an Expression.
    return value is default or (type(value) is type(default) and value == default)


P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


def takes_scan_options(options: Callable[P, ScanOptions]) -> Callable[[Callable[[S, ScanOptions], R]],
                                                                       Callable[Concatenate[S, P], R]]:
    """Give a method taking a `ScanOptions` the options' own parameters (`Table.scan`, `Table.read`):
    `table.read("read_optimized", ["id"], limit=5)` calls it with `ScanOptions("read_optimized",
    ["id"], limit=5)`. Its signature (and `help()`) shows the options'."""
    def decorate(method: Callable[[S, ScanOptions], R]) -> Callable[Concatenate[S, P], R]:
        @functools.wraps(method)
        def call(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            return method(self, options(*args, **kwargs))

        parameters = list(inspect.signature(options).parameters.values())
        own = inspect.signature(method)
        self_parameter = next(iter(own.parameters.values()))
        call.__signature__ = own.replace(parameters=[self_parameter, *parameters])  # type: ignore[attr-defined]
        return call

    return decorate
