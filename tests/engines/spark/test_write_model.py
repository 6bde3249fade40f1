"""Random write histories against a model of the table: every read the shim and hudi-rs give after
every step (latest, time travel to every retained commit, incremental windows) equals the model.

Each history mixes inserts of new keys, upserts of old and new keys (with duplicates a batch
pre-combines by `ts`), deletes, partition and table overwrites, writes that fail (rolled back by
the next), writes split over tasks running at once, compactions (merge-on-read) and cleans
keeping two commits.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from writekit import hudi_rs_rows, write

import shim
from engines.spark import alter_table, compact
from shim.errors import InvalidArgumentError

COLUMNS = ["id", "ts", "region", "fare"]
KEYS = 40


def _row(key: int, step: int) -> dict:
    return {"id": f"k{key:03d}", "ts": step, "region": f"r{key % 3}", "fare": float(step * 1000 + key)}


def _sorted(rows: dict[str, dict]) -> list[dict]:
    return [rows[k] for k in sorted(rows)]


class History:
    """The model: the table's rows after each completed commit, and which commit last wrote each key."""

    def __init__(self) -> None:
        self.rows: dict[str, dict] = {}
        self.written_at: dict[str, str] = {}
        self.snapshots: list[tuple[str, list[dict]]] = []

    def commit(self, instant: str, upserts: list[dict], deletes: list[str], replace: str | None = None) -> None:
        """`replace`: "table" or "partitions" (insert_overwrite: the partitions the batch writes)."""
        if replace is not None:
            regions = {r["region"] for r in upserts}
            for key in [k for k, r in self.rows.items() if replace == "table" or r["region"] in regions]:
                del self.rows[key]
                del self.written_at[key]
        for row in upserts:
            self.rows[row["id"]] = row
            self.written_at[row["id"]] = instant
        for key in deletes:
            self.rows.pop(key, None)
            self.written_at.pop(key, None)
        self.snapshots.append((instant, _sorted(self.rows)))

    def changed_after(self, start: str) -> list[dict]:
        return _sorted({k: r for k, r in self.rows.items() if self.written_at[k] > start})


_KINDS = ["insert", "upsert", "upsert", "upsert", "delete", "insert_overwrite", "insert_overwrite_table", "fail"]


def _step(path, rng: random.Random, step: int, history: History, options: dict[str, str]) -> None:
    existing = sorted(history.rows)
    kind = rng.choice(_KINDS if existing else ["insert"])
    tasks = rng.choice([1, 2])
    together = tasks > 1 and rng.random() < 0.5
    if kind == "fail":  # a write whose job failed: invisible, rolled back by the next write
        batch = [_row(k, step) for k in range(0, KEYS, 7)]
        write(path, batch, tasks=tasks, together=together, commit=False, **options)
        return
    if kind == "delete":
        keys = rng.sample(existing, k=min(len(existing), rng.randint(1, 6)))
        keys.append(f"k{KEYS + step:03d}")  # deleting a key that never existed changes nothing
        batch = [_row(int(k[1:]), step) for k in keys]
        instant = write(path, batch, tasks=tasks, together=together, **options,
                        **{"hoodie.datasource.write.operation": "delete"})
        history.commit(instant, [], keys)
        return
    fresh = [k for k in range(KEYS) if f"k{k:03d}" not in history.rows]
    chosen = set(rng.sample(fresh, k=min(len(fresh), rng.randint(1, 8))))
    if kind == "upsert" and existing:
        chosen |= {int(k[1:]) for k in rng.sample(existing, k=min(len(existing), rng.randint(1, 10)))}
    batch = [_row(k, step) for k in sorted(chosen)]
    if kind == "upsert":  # older versions of some keys in the same batch: pre-combining keeps the newest
        older = [dict(row, ts=row["ts"] - 1, fare=-row["fare"]) for row in batch if rng.random() < 0.3]
        batch += older
    rng.shuffle(batch)
    instant = write(path, batch, tasks=tasks, together=together, **options,
                    **{"hoodie.datasource.write.operation": kind})
    newest = [r for r in batch if r["fare"] >= 0]
    replace = {"insert_overwrite": "partitions", "insert_overwrite_table": "table"}.get(kind)
    history.commit(instant, newest, [], replace)


def _check(path, history: History) -> None:
    table = shim.open_table(str(path))
    latest = history.snapshots[-1][1]
    assert sorted(table.read(columns=COLUMNS).to_pylist(), key=lambda r: r["id"]) == latest
    assert hudi_rs_rows(path, COLUMNS) == latest
    found = table.active_timeline.latest_clean()
    horizon = found[1] if found else ""
    for instant, rows in history.snapshots[:-1]:
        if instant >= horizon:
            got = table.read(as_of=instant, columns=COLUMNS).to_pylist()
            assert sorted(got, key=lambda r: r["id"]) == rows, f"as of {instant}"
        else:
            with pytest.raises(InvalidArgumentError, match="cleaner"):
                table.read(as_of=instant)
        got = table.incremental(instant, columns=COLUMNS).to_pylist()
        assert sorted(got, key=lambda r: r["id"]) == history.changed_after(instant), f"after {instant}"


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_random_write_histories_read_back_as_the_model_says(tmp_path, table_type, seed):
    rng = random.Random(f"{table_type}-{seed}")
    path = tmp_path / "t"
    options = {
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.partitionpath.field": "region",
        "hoodie.bucket.index.num.buckets": "3",
        "hoodie.cleaner.commits.retained": "2",
    }
    history = History()
    for step in range(1, 13):
        _step(path, rng, step, history, options)
        if table_type == "MERGE_ON_READ" and rng.random() < 0.25:
            instant = compact(str(path))
            if instant is not None:  # a compaction changes no row, and is a commit to read as of
                history.snapshots.append((instant, history.snapshots[-1][1]))
        _check(path, history)


class EvolvingHistory:
    """The model of a table whose columns change: current columns (name -> type) and rows, and
    every commit's rows as a reader sees them then (by the column names of that time)."""

    def __init__(self) -> None:
        self.columns: dict[str, pa.DataType] = {"fare": pa.float64(), "n": pa.int32()}
        self.rows: dict[str, dict] = {}
        self.snapshots: list[tuple[str, list[dict]]] = []
        self.names: dict[str, list[str]] = {}
        self.by_name_unreadable = False  # hudi-rs reads by name: a widened type or a reused name stops it
        self.ever: set[str] = set(self.columns)

    def schema(self) -> pa.Schema:
        return pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()),
                          *self.columns.items()])

    def record(self, instant: str) -> None:
        self.snapshots.append((instant, [dict(row) for row in _sorted(self.rows)]))
        self.names[instant] = self.schema().names

    def value(self, name: str, key: int, step: int) -> object:
        kind = self.columns[name]
        number = step * 1000 + key
        if pa.types.is_string(kind):
            return f"{name}-{number}"
        return float(number) if pa.types.is_floating(kind) else number


def _evolve(path, rng: random.Random, step: int, model: EvolvingHistory) -> None:
    """One schema change Hudi allows, committed, applied to the model."""
    alter = alter_table(str(path))
    names = list(model.columns)
    choices = ["add"] + (["rename", "drop", "widen", "move"] if names else [])
    change = rng.choice(choices)
    if change == "add":  # sometimes the name of a dropped column: its old values must not come back
        name = rng.choice([f"c{step}", "fare", "n", "tip"])
        if name in model.columns:
            name = f"c{step}"
        kind = rng.choice([("double", pa.float64()), ("string", pa.string()), ("int", pa.int32())])
        alter.add_column(name, kind[0])
        model.by_name_unreadable |= name in model.ever
        model.ever.add(name)
        model.columns[name] = kind[1]
        for row in model.rows.values():
            row[name] = None
    elif change == "rename":
        old = rng.choice(names)
        new = f"{old}_r{step}"
        alter.rename_column(old, new)
        model.ever.add(new)
        model.columns = {new if k == old else k: v for k, v in model.columns.items()}
        for key, row in model.rows.items():
            model.rows[key] = {new if k == old else k: v for k, v in row.items()}
    elif change == "drop":
        name = rng.choice(names)
        alter.drop_column(name)
        del model.columns[name]
        for row in model.rows.values():
            del row[name]
    elif change == "move":  # to the front of the data columns, or after another one
        name = rng.choice(names)
        others = [n for n in names if n != name]
        after = rng.choice([None, *others])
        if after is None:
            alter.move_column(name, after="region")
        else:
            alter.move_column(name, after=after)
        moved = [n for n in names if n != name]
        moved.insert(0 if after is None else moved.index(after) + 1, name)
        model.columns = {n: model.columns[n] for n in moved}
    else:
        wider = {pa.int32(): ("long", pa.int64()), pa.float32(): ("double", pa.float64())}
        candidates = [n for n, t in model.columns.items() if t in wider]
        if not candidates:
            return
        name = rng.choice(candidates)
        alter.alter_column_type(name, wider[model.columns[name]][0])
        model.columns[name] = wider[model.columns[name]][1]
        model.by_name_unreadable = True
    model.record(shim.open_table(str(path)).active_timeline.latest_write().requested_time)


def _write_evolving(path, rng: random.Random, step: int, model: EvolvingHistory, options: dict[str, str]) -> None:
    existing = sorted(model.rows)
    kind = rng.choice(["upsert", "upsert", "delete"] if existing else ["upsert"])
    if kind == "delete":
        keys = rng.sample(existing, k=min(len(existing), rng.randint(1, 5)))
        rows = [{"id": k, "ts": step, "region": model.rows[k]["region"],
                 **{c: None for c in model.columns}} for k in keys]
        instant = write(path, rows, schema=model.schema(), **options, **{"hoodie.datasource.write.operation": "delete"})
        for key in keys:
            del model.rows[key]
    else:
        chosen = sorted(set(rng.sample(range(KEYS), k=rng.randint(1, 12))))
        rows = [{"id": f"k{k:03d}", "ts": step, "region": f"r{k % 3}",
                 **{c: model.value(c, k, step) for c in model.columns}} for k in chosen]
        instant = write(path, rows, schema=model.schema(), tasks=rng.choice([1, 2]), **options)
        for row in rows:
            model.rows[row["id"]] = row
    model.record(instant)


def _check_evolving(path, model: EvolvingHistory) -> None:
    table = shim.open_table(str(path))
    found = table.active_timeline.latest_clean()
    horizon = found[1] if found else ""
    for instant, rows in model.snapshots:
        if instant < horizon:
            continue
        read = table.read(as_of=instant)
        assert read.schema.names == model.names[instant], f"columns as of {instant}"
        assert sorted(read.to_pylist(), key=lambda r: r["id"]) == rows, f"as of {instant}"
    # hudi-rs reads by name: compare only the columns no change touches. It refuses files written
    # before a column was widened or before a dropped name was added again ("partial-update column
    # 'n' has type Int32 but the table schema expects Int64").
    if not model.by_name_unreadable:
        assert hudi_rs_rows(path, ["id", "ts", "region"]) == [
            {"id": r["id"], "ts": r["ts"], "region": r["region"]} for r in model.snapshots[-1][1]]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_random_schema_changes_between_writes_read_back_by_column_id(tmp_path, table_type, seed):
    rng = random.Random(f"evolve-{table_type}-{seed}")
    path = tmp_path / "t"
    options = {
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.partitionpath.field": "region",
        "hoodie.bucket.index.num.buckets": "2",
        "hoodie.cleaner.commits.retained": "4",
    }
    model = EvolvingHistory()
    _write_evolving(path, rng, 1, model, options)
    for step in range(2, 14):
        if rng.random() < 0.4:
            _evolve(path, rng, step, model)
        else:
            _write_evolving(path, rng, step, model, options)
        if table_type == "MERGE_ON_READ" and rng.random() < 0.2:
            instant = compact(str(path))
            if instant is not None:
                model.record(instant)
        _check_evolving(path, model)
