"""Compare the shim's reads with Apache Hudi's reads of the same table, row by row.

Normalization, all of it:
- Rows are matched by (`_hoodie_partition_path`, `_hoodie_record_key`): Hudi's default index is
  not global, so a key written again into another partition is a second record. Order is not
  compared.
- `_hoodie_file_name` and `_hoodie_commit_seqno` are not compared: a merged record names the
  file (and sequence) of whichever version Hudi's reader picked up, which is not table data.
- `_hoodie_operation` is not compared: Hudi's readers add it to the meta columns of tables whose
  files hold it (`hoodie.allow.operation.metadata.field`, Flink's changelog mode), with the
  operation of the record version they picked; the shim's meta columns are the five others
  (it reads the operation to drop deletes, and the record versions are compared by their
  commit times and values).
- Struct columns are compared field by field (flattened to dotted paths).
- Same schema (snapshot, read-optimized, incremental): names, Arrow types (nullability aside)
  and values must be equal.
- Time travel and incremental windows ending before the latest commit: Hudi 1.2 reads `as.of.instant` with the table's *latest* schema, matching files by
  name; the shim reads with the schema of that time, by column id. Columns are paired by column
  id; where a column has the same name then and now, values must be equal (the shim's cast to
  Hudi's later type, e.g. int -> bigint). Where it was renamed since, Hudi returns nulls (it looks
  for the new name in files that hold the old one: wrong) and the shim returns the data. Hudi
  also reads nulls for a renamed column as of commits after the rename, from files written
  before it. So for a column renamed at any time, the values Hudi reads must equal the shim's,
  and where Hudi reads nulls the shim's values are checked against Hudi's snapshot instead, on
  the records unchanged since (same commit time): Hudi's snapshot reads renamed columns
  correctly. The columns are reported (`hudi_wrong`). A name dropped and added again with
  another column id: Hudi's time travel reads the dropped column's old values under it (by
  name); the shim reads null there, which the comparison accepts only for record versions
  written before the new column existed, and reports the column.
- Incremental windows: Hudi 1.2 sometimes leaves out records of a window whose commits were
  archived; the records a window must return are taken from Hudi's own time travel to the
  window's last commit (those whose commit time is in the window), and the shim must return
  exactly those.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

KEY = "_hoodie_record_key"
PARTITION = "_hoodie_partition_path"
COMMIT_TIME = "_hoodie_commit_time"
NOT_COMPARED = ("_hoodie_file_name", "_hoodie_commit_seqno", "_hoodie_operation")


@dataclass(frozen=True, slots=True)
class Comparison:
    """The outcome of comparing one read: problems (empty: equal) and the columns where Hudi
    is known wrong (time travel after renames), with what Hudi returned there."""

    name: str
    rows: int
    problems: tuple[str, ...] = ()
    hudi_wrong: tuple[str, ...] = field(default=())

    @property
    def equal(self) -> bool:
        return not self.problems


def leaves(table: pa.Table) -> dict[str, pa.ChunkedArray]:
    """Every leaf column as a dotted path (structs flattened; lists and maps stay whole)."""
    found: dict[str, pa.ChunkedArray] = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        _flatten(name, column, found)
    return found


def _flatten(path: str, column: pa.ChunkedArray, out: dict[str, pa.ChunkedArray]) -> None:
    if pa.types.is_struct(column.type):
        for index in range(column.type.num_fields):
            child = column.type.field(index)
            parts = [pc.struct_field(chunk, [index]) for chunk in column.chunks]
            # a null struct makes its fields null, as Spark shows them
            masked = [pc.if_else(pc.is_null(chunk), pa.nulls(len(chunk), child.type), part)
                      for chunk, part in zip(column.chunks, parts, strict=True)]
            _flatten(f"{path}.{child.name}", pa.chunked_array(masked, child.type), out)
    else:
        out[path] = column


def leaf_ids(schema: pa.Schema) -> dict[str, int]:
    """Dotted leaf path -> column id, from the shim's field metadata (`PARQUET:field_id`)."""
    found: dict[str, int] = {}

    def walk(prefix: str, fld: pa.Field) -> None:
        path = f"{prefix}{fld.name}"
        if pa.types.is_struct(fld.type):
            for index in range(fld.type.num_fields):
                walk(path + ".", fld.type.field(index))
        elif fld.metadata and b"PARQUET:field_id" in fld.metadata:
            found[path] = int(fld.metadata[b"PARQUET:field_id"])

    for fld in schema:
        walk("", fld)
    return found


def _by_key(table: pa.Table) -> pa.Table:
    return table.sort_by([(PARTITION, "ascending"), (KEY, "ascending")]) if table.num_rows else table


def _keys(table: pa.Table) -> list[tuple[str, str]]:
    return list(zip(table.column(PARTITION).to_pylist(), table.column(KEY).to_pylist(), strict=True))


def _bare(type_: pa.DataType) -> pa.DataType:
    """A type with every nested field made nullable (Spark and the shim differ there)."""
    if pa.types.is_struct(type_):
        return pa.struct([pa.field(f.name, _bare(f.type)) for f in type_])
    if pa.types.is_list(type_) or pa.types.is_large_list(type_):
        return pa.list_(_bare(type_.value_type))
    if pa.types.is_map(type_):
        return pa.map_(_bare(type_.key_type), _bare(type_.item_type))
    return type_


def compare_same_schema(name: str, hudi: pa.Table, shim: pa.Table) -> Comparison:
    """Snapshot, read-optimized and incremental reads: same columns, types and rows."""
    problems: list[str] = []
    hudi_names = [n for n in hudi.column_names if n not in NOT_COMPARED]
    shim_names = [n for n in shim.column_names if n not in NOT_COMPARED]
    if hudi_names != shim_names:
        problems.append(f"columns differ: hudi {hudi_names}, shim {shim_names}")
    for column in hudi_names:
        if column in shim_names:
            want, got = _bare(hudi.schema.field(column).type), _bare(shim.schema.field(column).type)
            if want != got:
                problems.append(f"type of {column}: hudi {want}, shim {got}")
    hudi_leaves = leaves(hudi.select(hudi_names))
    shim_leaves = leaves(shim.select([n for n in shim_names if n in hudi_names]))
    problems += _compare_rows(hudi, shim, {p: p for p in hudi_leaves if p in shim_leaves}, {})
    return Comparison(name, hudi.num_rows, tuple(problems))


def compare_time_travel(name: str, hudi: pa.Table, shim: pa.Table, latest: pa.Schema,
                        renamed_ids: frozenset[int] = frozenset(), snapshot: pa.Table | None = None,
                        readded: Mapping[int, str] | None = None) -> Comparison:
    """A time-travel read: the shim's columns of then paired by id with Hudi's of now; columns
    renamed at any time (`renamed_ids`) that Hudi reads as nulls are checked against Hudi's
    `snapshot` on the records unchanged since; `readded` maps the ids of columns that took a
    dropped column's name to the instant they were added (module doc)."""
    then_ids, now_ids = leaf_ids(shim.schema), leaf_ids(latest)
    now_by_id = {v: k for k, v in now_ids.items()}
    hudi_leaves = [p for p in leaves(hudi.select([c for c in hudi.column_names if c not in NOT_COMPARED]))]
    pairs: dict[str, str] = {}  # hudi path -> shim path with the same name then and now
    renamed: dict[str, str] = {}  # hudi path -> shim path of the same column under its old name
    reused: dict[str, tuple[str, str]] = {}  # hudi path -> (shim path, instant the column was added)
    for shim_path, column_id in then_ids.items():
        now = now_by_id.get(column_id)
        if now is None or now not in hudi_leaves:
            continue
        if now != shim_path or column_id in renamed_ids:
            renamed[now] = shim_path
        elif readded and column_id in readded:
            reused[now] = (shim_path, readded[column_id])
        else:
            pairs[now] = shim_path
    for meta in (COMMIT_TIME, KEY, PARTITION):
        if meta in hudi.column_names and meta in shim.column_names:
            pairs[meta] = meta
    problems = _compare_rows(hudi, shim, pairs, renamed)
    resurrected = []
    for now, (then, added) in reused.items():
        found = _readded(hudi, shim, now, then, added)
        problems += found[0]
        if found[1]:
            resurrected.append(f"{now} (re-added: Hudi reads the dropped column's values)")
    if renamed and snapshot is not None and not problems:
        problems += _against_snapshot(shim, snapshot, renamed)
    wrong = tuple(f"{now} (was {then})" for now, then in sorted(renamed.items())
                  if _nulls_where_values(hudi, shim, now, then))
    return Comparison(name, hudi.num_rows, tuple(problems), wrong + tuple(resurrected))


def _readded(hudi: pa.Table, shim: pa.Table, hudi_path: str, shim_path: str, added: str) -> tuple[list[str], bool]:
    """A column that took a dropped column's name: equal values, except where the shim reads null
    for a record version written before the column was added (Hudi reads the old column's
    value there). Returns the problems and whether Hudi did so."""
    hudi_sorted, shim_sorted = _by_key(hudi), _by_key(shim)
    want_col, got_col = leaves(hudi_sorted)[hudi_path], leaves(shim_sorted)[shim_path]
    if got_col.type != want_col.type:
        got_col = got_col.cast(want_col.type)
    times = shim_sorted.column(COMMIT_TIME).to_pylist()
    keys, resurrected, wrong = _keys(shim_sorted), False, []
    for key, when, want, got in zip(keys, times, want_col.to_pylist(), got_col.to_pylist(), strict=True):
        if want == got:
            continue
        if got is None and str(when) < added:
            resurrected = True
        else:
            wrong.append((key, want, got))
    problems = [f"{hudi_path}: {len(wrong)} values differ, e.g. (key, hudi, shim) {wrong[:3]}"] if wrong else []
    return problems, resurrected


def _compare_rows(hudi: pa.Table, shim: pa.Table, pairs: Mapping[str, str], renamed: Mapping[str, str]) -> list[str]:
    problems: list[str] = []
    hudi_sorted, shim_sorted = _by_key(hudi), _by_key(shim)
    hudi_keys, shim_keys = _keys(hudi_sorted), _keys(shim_sorted)
    if hudi_keys != shim_keys:
        missing, extra = sorted(set(hudi_keys) - set(shim_keys)), sorted(set(shim_keys) - set(hudi_keys))
        problems.append(f"record keys differ: only hudi {missing[:10]}, only shim {extra[:10]} "
                        f"({len(hudi_keys)} vs {len(shim_keys)} rows)")
        return problems
    hudi_cols, shim_cols = leaves(hudi_sorted), leaves(shim_sorted)
    for hudi_path, shim_path in pairs.items():
        if hudi_path not in hudi_cols or shim_path not in shim_cols:
            problems.append(f"column {hudi_path} missing (hudi {hudi_path in hudi_cols}, shim {shim_path in shim_cols})")
            continue
        want, got = hudi_cols[hudi_path], shim_cols[shim_path]
        if got.type != want.type:
            try:
                got = got.cast(want.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                problems.append(f"{hudi_path}: shim type {got.type} does not cast to hudi's {want.type}: {exc}")
                continue
        if not want.equals(got):
            diffs = [(k, w, g) for k, w, g in zip(hudi_keys, want.to_pylist(), got.to_pylist(), strict=True) if w != g]
            problems.append(f"{hudi_path}: {len(diffs)} values differ, e.g. (key, hudi, shim) {diffs[:3]}")
    for hudi_path, shim_path in renamed.items():
        want, got = hudi_cols[hudi_path], shim_cols[shim_path]
        if got.type != want.type:
            got = got.cast(want.type)
        wrong = [(k, w, g) for k, w, g in zip(hudi_keys, want.to_pylist(), got.to_pylist(), strict=True)
                 if w is not None and w != g]
        if wrong:
            problems.append(f"{hudi_path} (the shim's {shim_path}): where Hudi's time travel reads a value (not the "
                            f"null it reads from files holding the old name) it differs, e.g. {wrong[:3]}")
    return problems


def _nulls_where_values(hudi: pa.Table, shim: pa.Table, hudi_path: str, shim_path: str) -> bool:
    """Whether Hudi read a null where the shim read a value, for some record."""
    hudi_sorted, shim_sorted = _by_key(hudi), _by_key(shim)
    want, got = leaves(hudi_sorted)[hudi_path].to_pylist(), leaves(shim_sorted)[shim_path].to_pylist()
    return any(w is None and g is not None for w, g in zip(want, got, strict=True))


def _against_snapshot(shim: pa.Table, snapshot: pa.Table, columns: Mapping[str, str]) -> list[str]:
    """The shim's values of `columns` (now path -> shim path) equal Hudi's snapshot's on the
    records whose commit time is the same in both (the same version of the record)."""
    latest = {key: index for index, key in enumerate(_keys(snapshot))}
    times = snapshot.column(COMMIT_TIME).to_pylist()
    snap_cols, shim_cols = leaves(snapshot), leaves(shim)
    shim_keys, shim_times = _keys(shim), shim.column(COMMIT_TIME).to_pylist()
    same = [(i, latest[k]) for i, k in enumerate(shim_keys) if k in latest and times[latest[k]] == shim_times[i]]
    problems = []
    for now, then in columns.items():
        want_all, got_all = snap_cols[now], shim_cols[then]
        if got_all.type != want_all.type:
            got_all = got_all.cast(want_all.type)
        want, got = want_all.to_pylist(), got_all.to_pylist()
        diffs = [(shim_keys[i], want[j], got[i]) for i, j in same if want[j] != got[i]]
        if diffs:
            problems.append(f"{now} (the shim's {then}): {len(diffs)} values differ from Hudi's snapshot of the same "
                            f"record versions, e.g. (key, hudi, shim) {diffs[:3]}")
    return problems


def window_truth(as_of_end: pa.Table, commits: set[str]) -> list[tuple[str, str, str]]:
    """(partition, key, commit time) of the records an incremental window must return: those of
    Hudi's read as of the window's last commit whose commit time is one of the window's commits."""
    times = as_of_end.column(COMMIT_TIME).to_pylist()
    return sorted((p, k, t) for (p, k), t in zip(_keys(as_of_end), times, strict=True) if t in commits)


def window_rows(table: pa.Table) -> list[tuple[str, str, str]]:
    """(partition, key, commit time) of a read's rows."""
    return sorted((p, k, t) for (p, k), t in zip(_keys(table), table.column(COMMIT_TIME).to_pylist(), strict=True))


def compare_with_snapshot(name: str, shim: pa.Table, latest: pa.Schema, snapshot: pa.Table) -> Comparison:
    """Where Hudi cannot answer a time-travel read: the shim's rows of the record versions that
    Hudi's snapshot still holds (same commit time) equal the snapshot's, every column paired by id."""
    then_ids, now_by_id = leaf_ids(shim.schema), {v: k for k, v in leaf_ids(latest).items()}
    snapshot_leaves = leaves(snapshot)
    pairs = {now_by_id[i]: path for path, i in then_ids.items()
             if now_by_id.get(i) in snapshot_leaves and path not in NOT_COMPARED}
    return Comparison(name, shim.num_rows, tuple(_against_snapshot(shim, snapshot, pairs)))
