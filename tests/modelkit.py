"""A model of a Hudi table for random write histories: what every read should return after each
commit, and random steps that change the table and the model alike (writes, schema changes)."""

from __future__ import annotations

import random

import pyarrow as pa

import shim
from shim.write.ddl import alter_table
from shim.write.services.compaction import compact
from tests.writekit import write

COLUMNS = ["id", "ts", "region", "fare"]
KEYS = 40


def write_options(table_type: str, buckets: int, commits_retained: int) -> dict[str, str]:
    """Writer options of the model tests' tables (partitioned by `region`), archiving the
    timeline as soon as Hudi's rules allow (a short active timeline)."""
    return {
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.partitionpath.field": "region",
        "hoodie.bucket.index.num.buckets": str(buckets),
        "hoodie.cleaner.commits.retained": str(commits_retained),
        "hoodie.keep.min.commits": str(commits_retained + 1),
        "hoodie.keep.max.commits": str(commits_retained + 3),
    }


# Key generators a model table may be written with; all put a key in the partition of its region.
KEY_GENERATORS: list[dict[str, str]] = [
    {},
    {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
     "hoodie.datasource.write.partitionpath.field": "region:SIMPLE"},
    # Regions r0, r1, r2 read as the hours 0-2 of a date string, printed as folders p00, p01, p02.
    {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
     "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
     "hoodie.keygen.timebased.input.dateformat": "'r'H",
     "hoodie.keygen.timebased.output.dateformat": "'p'HH",
     "hoodie.keygen.timebased.timezone": "UTC"},
]


def some_write_settings(rng: random.Random, options: dict[str, str]) -> dict[str, str]:
    """`options` with Avro or Parquet log data blocks, at random (both may follow each other), and
    now and then an inline compaction (on merge-on-read tables) after 1 to 4 delta commits."""
    chosen = {**options, "hoodie.logfile.data.block.format": rng.choice(["avro", "parquet"])}
    if rng.random() < 0.25:
        chosen |= {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": str(rng.randint(1, 4))}
    return chosen


def time_travel_horizon(table: shim.Table | shim.TableSnapshot) -> str:
    """The oldest instant a read may be as of: the latest clean's earliest retained commit (the
    latest commit when the clean records none: file versions); "" when no clean bounds reads.
    Archived instants do not bound reads: the archive says which commits completed."""
    timeline = (table.snapshot() if isinstance(table, shim.Table) else table).active_timeline
    writes = timeline.completed_writes()
    bounds: list[str] = []
    found = timeline.latest_clean()
    if found is not None:
        bounds.append(found[1] or (writes[-1].requested_time if writes else ""))
    return max(bounds, default="")


def row(key: int, step: int) -> dict:
    return {"id": f"k{key:03d}", "ts": step, "region": f"r{key % 3}", "fare": float(step * 1000 + key)}


def by_key(rows: dict[str, dict]) -> list[dict]:
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
        self.snapshots.append((instant, by_key(self.rows)))

    def changed_after(self, start: str) -> list[dict]:
        return by_key({k: r for k, r in self.rows.items() if self.written_at[k] > start})


_KINDS = ["insert", "upsert", "upsert", "upsert", "delete", "insert_overwrite", "insert_overwrite_table", "fail",
          "delete_partition"]


def random_write(path, rng: random.Random, step: int, history: History, options: dict[str, str]) -> None:
    existing = sorted(history.rows)
    options = some_write_settings(rng, options)
    kind = rng.choice(_KINDS if existing else ["insert"])
    tasks = rng.choice([1, 2])
    together = tasks > 1 and rng.random() < 0.5
    if kind == "fail":  # a write whose job failed: invisible, rolled back by the next write
        batch = [row(k, step) for k in range(0, KEYS, 7)]
        write(path, batch, tasks=tasks, together=together, commit=False, **options)
        return
    if kind == "delete":
        keys = rng.sample(existing, k=min(len(existing), rng.randint(1, 6)))
        keys.append(f"k{KEYS + step:03d}")  # deleting a key that never existed changes nothing
        batch = [row(int(k[1:]), step) for k in keys]
        instant = write(path, batch, tasks=tasks, together=together, **options,
                        **{"hoodie.datasource.write.operation": "delete"})
        history.commit(instant, [], keys)
        return
    if kind == "delete_partition":  # one row names the partition; every row there goes
        region = history.rows[rng.choice(existing)]["region"]
        gone = [k for k, r in history.rows.items() if r["region"] == region]
        instant = write(path, [row(int(gone[0][1:]), step)], tasks=tasks, together=together, **options,
                        **{"hoodie.datasource.write.operation": kind})
        history.commit(instant, [], gone)
        return
    fresh = [k for k in range(KEYS) if f"k{k:03d}" not in history.rows]
    chosen = set(rng.sample(fresh, k=min(len(fresh), rng.randint(1, 8))))
    if kind == "upsert" and existing:
        chosen |= {int(k[1:]) for k in rng.sample(existing, k=min(len(existing), rng.randint(1, 10)))}
    batch = [row(k, step) for k in sorted(chosen)]
    if kind == "upsert":  # older versions of some keys in the same batch: pre-combining keeps the newest
        older = [dict(row, ts=row["ts"] - 1, fare=-row["fare"]) for row in batch if rng.random() < 0.3]
        batch += older
    rng.shuffle(batch)
    instant = write(path, batch, tasks=tasks, together=together, **options,
                    **{"hoodie.datasource.write.operation": kind})
    newest = [r for r in batch if r["fare"] >= 0]
    replace = {"insert_overwrite": "partitions", "insert_overwrite_table": "table"}.get(kind)
    history.commit(instant, newest, [], replace)


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
        self.ids: dict[str, int] = {name: number for number, name in enumerate(self.columns)}  # model-local ids
        self.next_id = len(self.ids)

    def schema(self) -> pa.Schema:
        return pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()),
                          *self.columns.items()])

    def record(self, instant: str) -> None:
        self.snapshots.append((instant, [dict(row) for row in by_key(self.rows)]))
        self.names[instant] = self.schema().names

    def seen_through(self, view: dict[str, int]) -> list[dict]:
        """The current rows as a view registered earlier shows them: its data columns (name ->
        model id) found by id, a dropped one null."""
        names = {number: name for name, number in self.ids.items()}
        return [{"id": row["id"], "ts": row["ts"], "region": row["region"],
                 **{column: row.get(names.get(number, ""), None) for column, number in view.items()}}
                for row in by_key(self.rows)]

    def value(self, name: str, key: int, step: int) -> object:
        kind = self.columns[name]
        number = step * 1000 + key
        if pa.types.is_string(kind):
            return f"{name}-{number}"
        return float(number) if pa.types.is_floating(kind) else number


def random_schema_change(path, rng: random.Random, step: int, model: EvolvingHistory) -> None:
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
        model.ids[name] = model.next_id
        model.next_id += 1
        for row in model.rows.values():
            row[name] = None
    elif change == "rename":
        old = rng.choice(names)
        new = f"{old}_r{step}"
        alter.rename_column(old, new)
        model.ever.add(new)
        model.columns = {new if k == old else k: v for k, v in model.columns.items()}
        model.ids[new] = model.ids.pop(old)
        for key, row in model.rows.items():
            model.rows[key] = {new if k == old else k: v for k, v in row.items()}
    elif change == "drop":
        name = rng.choice(names)
        alter.drop_column(name)
        del model.columns[name]
        del model.ids[name]
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
    model.record(shim.open_table(str(path)).snapshot().active_timeline.latest_write().requested_time)


def random_evolving_write(path, rng: random.Random, step: int, model: EvolvingHistory, options: dict[str, str]) -> None:
    existing = sorted(model.rows)
    options = some_write_settings(rng, options)
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


def random_evolving_step(path, rng: random.Random, step: int, model: EvolvingHistory, options: dict[str, str], *,
                         change_rate: float, compact_rate: float = 0.0) -> None:
    """A schema change (with probability `change_rate`) or a write; then, on a merge-on-read
    table, a compaction with probability `compact_rate` (a commit that changes no row)."""
    if rng.random() < change_rate:
        random_schema_change(path, rng, step, model)
    else:
        random_evolving_write(path, rng, step, model, options)
    merge_on_read = options.get("hoodie.datasource.write.table.type") == "MERGE_ON_READ"
    if merge_on_read and compact_rate and rng.random() < compact_rate and (instant := compact(str(path))):
        model.record(instant)
