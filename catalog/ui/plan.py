"""Why a scan reads what it reads: the partitions and files a filter prunes, and the log blocks
that merge, for one filter and one `as_of`.

The scan is planned by the shim (`Table.plan`), which prunes partitions; this module compares it
with the same scan planned without the filter and says, for each partition left out, which
filter term its path values make false. For each base file it says what the read skips, as the
shim's reader does: the whole file when the record keys a filter pins are all ruled out by the
bloom filter in its footer (`shim.read.files_with_any`), and row groups whose Parquet statistics
make a pushed-down term false. Terms are pushed into a file only on columns it stores under
their table name and type (as `RowFilter.pushdown` does); the others are named, with why, and
are applied to the rows after reading.
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import shim
from shim import FileSchema
from shim.errors import HudiShimError
from shim.filters import (
    And,
    CompareOp,
    Comparison,
    Expr,
    InList,
    IsNull,
    Or,
    bind,
    conjuncts,
    evaluate_on_partition,
    referenced_columns,
    to_expr,
)
from shim.filters.partition import possible_truths
from shim.layout.partitions import partition_values
from shim.planning import exact_from_path, typed_partition_values
from shim.read import files_with_any, parquet_footer, pinned_keys
from shim.scan_options import ScanMode, ScanOptions
from shim.storage import Storage


@dataclass(frozen=True, slots=True)
class PartitionChoice:
    """A partition: read or pruned, and why it was pruned."""

    path: str
    kept: bool
    reason: str


@dataclass(frozen=True, slots=True)
class RowGroupSkip:
    index: int
    reason: str


@dataclass(frozen=True, slots=True)
class MergedBlock:
    """A log data block merged onto its slice's base file, in merge order."""

    log_file: str
    offset: int
    instant: str
    schema_version: str | None


@dataclass(frozen=True, slots=True)
class FileChoice:
    """One file slice the scan plans, and what of it is read.

    Attributes:
        base: "read", "skipped by bloom filter", "skipped by statistics", or "none" (log-only slice).
        reason: why the base file is skipped.
        row_groups, row_groups_skipped: the base file's row groups, those its statistics rule out.
        not_pushed: filter terms not pushed into this file, and why (applied after reading).
        merged: the log data blocks merged onto it (snapshot reads of merge-on-read tables).
    """

    partition: str
    file_id: str
    base_file: str | None
    base: str
    reason: str
    row_groups: int
    row_groups_skipped: tuple[RowGroupSkip, ...]
    not_pushed: tuple[str, ...]
    merged: tuple[MergedBlock, ...]


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """A scan's plan explained.

    Attributes:
        filter: the filter as bound to the table (None: no filter).
        read_instant: the completed instant read.
        keys: the record keys the filter pins (bloom filters are asked for them), if any.
    """

    mode: str
    as_of: str | None
    read_instant: str | None
    filter: str | None
    keys: tuple[str, ...] | None
    partitions: tuple[PartitionChoice, ...]
    files: tuple[FileChoice, ...]


def explain(table: shim.TableSnapshot, mapped: Sequence[FileSchema] | None = None, *, mode: ScanMode = "snapshot",
            filter: str | None = None, as_of: str | None = None) -> QueryPlan:
    """Plan a scan of `table` and say what it prunes and merges.

    Args:
        mapped: the file schemas of the same read without a filter (the catalog's published view
            holds them, remembered); None: those of the scan, worked out now.

    Raises:
        InvalidFilterError, ColumnNotFoundError, InstantNotFoundError: as a scan would.
    """
    scan = table.plan(ScanOptions(mode=mode, filter=filter or None, as_of=as_of or None))
    everything = table.plan(ScanOptions(mode=mode, as_of=as_of or None)) if filter else scan
    expr = to_expr(filter) if filter else None
    bound = bind(expr, scan.schemas.full_schema) if expr is not None else None
    kept = {s.partition_path for s in scan.slices}
    partitions = sorted({s.partition_path for s in everything.slices} | kept)
    choices = tuple(PartitionChoice(p, p in kept, "" if p in kept else _why_pruned(table, bound, p, scan))
                    for p in partitions)
    keys = pinned_keys(bound, table.config, scan.schemas.full_schema) if bound is not None else None
    schemas = scan.file_schemas() if mapped is None else mapped
    bases = {f.path: f for f in schemas if f.kind == "base_file"}
    blocks: dict[tuple[str, str], list[FileSchema]] = {}
    for f in schemas:
        if f.kind == "log_block":
            blocks.setdefault((f.partition_path, f.file_id), []).append(f)
    known: dict[str, dict[str, object]] = {}

    def certain(partition: str) -> dict[str, object]:
        if partition not in known:
            known[partition] = _exact_values(table, partition, scan)
        return known[partition]

    files = []
    for file_slice in scan.slices:
        merged = tuple(MergedBlock(b.path.rsplit("/", 1)[-1], b.block_offset or 0, b.instant,
                                   None if b.schema_version is None else str(b.schema_version))
                       for b in blocks.get((file_slice.partition_path, file_slice.file_id), []))
        path = file_slice.base_path(table.path)
        if path is None or file_slice.base_file is None:
            files.append(FileChoice(file_slice.partition_path, file_slice.file_id, None, "none",
                                    "no base file: the slice is read from its logs", 0, (), (), merged))
            continue
        relative = f"{file_slice.partition_path}/{file_slice.base_file.name}" if file_slice.partition_path \
            else file_slice.base_file.name
        terms = conjuncts(bound) if bound is not None else []
        values = certain(file_slice.partition_path)
        choice = _base_choice(table.storage, file_slice.partition_path, file_slice.file_id, file_slice.base_file.name, path,
                              bases.get(relative), [t for t in terms if not _holds_in(t, values)], keys, merged)
        held = tuple(f"{t}: true on every row of this partition (its path says so), not applied"
                     for t in terms if _holds_in(t, values))
        files.append(replace(choice, not_pushed=held + choice.not_pushed) if held else choice)
    return QueryPlan(scan.mode, as_of or None, scan.read_instant, str(bound) if bound is not None else None,
                     tuple(sorted(keys)) if keys is not None else None, choices, tuple(files))


def _why_pruned(table: shim.TableSnapshot, bound: Expr | None, partition: str, scan: shim.Scan) -> str:
    raw = partition_values(partition, table.config)
    if raw is None:
        return "the range of values its path stands for (a date partition) makes the filter false"
    typed = typed_partition_values(raw, scan.data_schema)
    values = {k: v for k, v in typed.items() if v is not None}
    shown = ", ".join(f"{k} = {v.as_py()!r}" for k, v in values.items())
    if bound is not None:
        for term in conjuncts(bound):
            if referenced_columns(term) <= set(values) and not evaluate_on_partition(term, values):
                return f"{term} is false where {shown}"
    return f"the filter is false where {shown}"


def _exact_values(table: shim.TableSnapshot, partition: str, scan: shim.Scan) -> dict[str, object]:
    """The column values a partition's path spells exactly (every row of it holds them)."""
    raw = partition_values(partition, table.config)
    if not raw:
        return {}
    typed = typed_partition_values(raw, scan.data_schema)
    return {k: v.as_py() for k, v in typed.items() if v is not None and v.is_valid and exact_from_path(v.type)}


def _holds_in(term: Expr, values: Mapping[str, object]) -> bool:
    """Whether the partition's path values make `term` true on every row (the read drops it)."""
    return bool(values) and referenced_columns(term) <= set(values) and possible_truths(term, values) == {True}


def _base_choice(storage: Storage, partition: str, file_id: str, name: str, path: str, mapping: FileSchema | None,
                 terms: list[Expr], keys: frozenset[str] | None, merged: tuple[MergedBlock, ...]) -> FileChoice:
    if not terms and keys is None:  # nothing to prune by: the footer is not needed
        return FileChoice(partition, file_id, name, "read", "", 0, (), (), merged)
    try:
        footer = parquet_footer(storage, path)
    except (HudiShimError, OSError) as exc:
        return FileChoice(partition, file_id, name, "read", f"its footer cannot be read: {exc}", 0, (), (), merged)
    groups = int(footer.num_row_groups)
    if keys is not None and not files_with_any(storage, [path], keys):
        shown = ", ".join(sorted(keys)[:5]) + (", ..." if len(keys) > 5 else "")
        return FileChoice(partition, file_id, name, "skipped by bloom filter",
                          f"the bloom filter in its footer holds none of the keys {shown}"
                          + ("; only its log records are read" if merged else ""), groups, (), (), merged)
    if not terms:
        return FileChoice(partition, file_id, name, "read", "", groups, (), (), merged)
    actions = {m.table_column: m for m in mapping.columns} if mapping is not None else {}
    pushed, not_pushed = [], []
    for term in terms:
        why = _not_pushed_because(term, actions)
        if why:
            not_pushed.append(f"{term}: {why}; applied to the rows after reading")
        else:
            pushed.append(term)
    skipped = []
    if pushed and groups and not merged:
        # A slice with log records merges first: its base rows are filtered after the merge.
        for index in range(groups):
            row_group = footer.row_group(index)  # type: ignore[union-attr]  # Lance files have no row groups
            ranges = _ranges(row_group, {n for t in pushed for n in referenced_columns(t)})
            for term in pushed:
                if not _may_hold(term, ranges):
                    skipped.append(RowGroupSkip(index, f"{term} is false for {_shown_ranges(term, ranges)}"))
                    break
    elif pushed and merged:
        not_pushed += [f"{t}: the slice merges log records, and the filter applies after the merge (row groups "
                       "are skipped by statistics only once the merge is remembered)" for t in pushed]
    base = "skipped by statistics" if groups and len(skipped) == groups else "read"
    reason = "every row group's statistics rule the filter out" if base != "read" else ""
    return FileChoice(partition, file_id, name, base, reason, groups, tuple(skipped), tuple(not_pushed), merged)


def _not_pushed_because(term: Expr, actions: Mapping[str, Any]) -> str:
    for name in sorted(referenced_columns(term)):
        mapping = actions.get(name)
        if mapping is None:
            return f"'{name}' is a meta column or not mapped"
        if mapping.action == "read":
            continue
        if mapping.action in ("rename", "rename+cast"):
            return f"'{name}' is '{mapping.file_column}' in this file"
        if mapping.action == "cast":
            return f"'{name}' is {mapping.file_type} in this file, {mapping.table_type} in the table"
        if mapping.action == "null":
            return f"this file does not hold '{name}' (it reads as NULL)"
        if mapping.action == "partition":
            return f"'{name}' comes from the partition path"
    return ""


@dataclass(frozen=True, slots=True)
class _Range:
    low: object
    high: object
    nulls: int | None
    values: int


def _ranges(row_group: Any, names: set[str]) -> dict[str, _Range]:
    found = {}
    for index in range(row_group.num_columns):
        column = row_group.column(index)
        name = column.path_in_schema
        if name not in names:
            continue
        stats = column.statistics
        if stats is None:
            continue
        nulls = stats.null_count if stats.has_null_count else None
        low, high = (stats.min, stats.max) if stats.has_min_max else (None, None)
        found[name] = _Range(low, high, nulls, row_group.num_rows)
    return found


def _may_hold(term: Expr, ranges: Mapping[str, _Range]) -> bool:
    """False only when the statistics prove no row of the row group satisfies `term`."""
    match term:
        case Comparison(op, column, literal):
            found = ranges.get(column.name)
            if found is None:
                return True
            if found.nulls is not None and found.nulls == found.values:
                return False  # every value is null: no comparison is true
            low, high, value = found.low, found.high, literal.value
            if not (_comparable(low, value) and _comparable(high, value)):
                return True
            return _compare(op, low, high, value)
        case InList(column, values, negated):
            found = ranges.get(column.name)
            if found is None or negated:
                return True
            if found.nulls is not None and found.nulls == found.values:
                return False
            return any(not (_comparable(found.low, v.value) and _comparable(found.high, v.value))
                       or _compare(CompareOp.EQ, found.low, found.high, v.value) for v in values)
        case IsNull(column, negated):
            found = ranges.get(column.name)
            if found is None or found.nulls is None:
                return True
            return found.nulls < found.values if negated else found.nulls > 0
        case And(left, right):
            return _may_hold(left, ranges) and _may_hold(right, ranges)
        case Or(left, right):
            return _may_hold(left, ranges) or _may_hold(right, ranges)
    return True


def _compare(op: CompareOp, low: Any, high: Any, value: Any) -> bool:
    if op is CompareOp.EQ:
        return bool(low <= value <= high)
    if op is CompareOp.NE:
        return not (low == high == value)
    if op is CompareOp.LT:
        return bool(low < value)
    if op is CompareOp.LE:
        return bool(low <= value)
    if op is CompareOp.GT:
        return bool(high > value)
    return bool(high >= value)


def _comparable(a: object, b: object) -> bool:
    """Whether Python orders `a` and `b` as the column's values compare (else: not used to skip)."""
    def kind(value: object) -> str | None:
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, numbers.Real | Decimal):
            return "number"
        if isinstance(value, dt.datetime):
            return "aware" if value.tzinfo is not None else "naive"
        if isinstance(value, dt.date):
            return "date"
        if isinstance(value, str | bytes):
            return type(value).__name__
        return None

    found = kind(a)
    return found is not None and found == kind(b)


def _shown_ranges(term: Expr, ranges: Mapping[str, _Range]) -> str:
    parts = []
    for name in sorted(referenced_columns(term)):
        found = ranges.get(name)
        if found is None:
            continue
        if found.nulls is not None and found.nulls == found.values:
            parts.append(f"{name}: all {found.values} values null")
        else:
            parts.append(f"{name} from {found.low!r} to {found.high!r}")
    return "; ".join(parts) or "its statistics"


def rows_json(rows: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    """Rows as JSON values: bytes in hex, decimals, dates and times as text, non-finite floats as text."""
    return [{k: _json_value(v) for k, v in row.items()} for row in rows]


def _json_value(value: object) -> object:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes):
        return "0x" + value[:64].hex() + ("..." if len(value) > 64 else "")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    return str(value)

