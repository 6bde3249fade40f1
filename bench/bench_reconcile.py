"""Cost of schema reconciliation: the same rows read from a table that never evolved and from one
whose files predate a rename, a reorder, an added column and an int -> long change.

    python bench/bench_reconcile.py [--rows 2000000] [--repeat 5]

Both tables are schema-on-read tables holding the same files (10 file groups, 10% of rows updated
through Avro log blocks); the evolved one has four ALTER_SCHEMA commits on top, so every base file
and log block is read through an id-based plan that renames, reorders, casts and null-fills.
Merged slices are not remembered between runs (merge_cache_bytes=0), so each snapshot merges.
Target: (b) within 10% of (a).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np

import shim
from bench.gen_table import make_rows, updated_rows
from shim.properties import TableType
from shim.scan_options import ScanMode
from shim.schema import InternalSchema, internal_from_avro, schema_to_json
from shim.storage import as_storage
from shim.timeline.instant import Action
from shim.timeline.timeline import Timeline
from shim.write import schema_changes
from shim.write.clock import new_instant_time
from shim.write.commit import CommitRecord, InstantFiles
from shim.write.data_files import avro_record_schema, write_base_file, write_log_blocks
from shim.write.schema_history import persist_history, plan_schema_commit
from shim.write.table_init import TableSpec, create_table

CHANGES: list[tuple[str, Callable[[InternalSchema], InternalSchema]]] = [
    ("rename rider -> passenger", lambda s: schema_changes.rename_column(s, "rider", "passenger")),
    ("move driver after id", lambda s: schema_changes.move_column(s, "driver", after="id")),
    ("add tip double", lambda s: schema_changes.add_column(s, "tip", "double", after="fare")),
    ("passengers int -> long", lambda s: schema_changes.update_column_type(s, "passengers", "long")),
]


def _commit(path: str, config: object, instant: str, action: Action, writes: tuple, operation: str,
            avro: str, schema: InternalSchema, history: str) -> tuple[InternalSchema, str]:
    commit = plan_schema_commit(schema if history else None, history, schema, instant)
    persist_history(as_storage(path), Timeline.load(as_storage(path), config), instant, commit.history)  # type: ignore[arg-type]
    extra = {"schema": avro, "latestSchema": schema_to_json(commit.latest)}
    InstantFiles(as_storage(path), config, instant, action).complete(  # type: ignore[arg-type]
        CommitRecord(writes, operation, extra))
    return commit.latest, commit.history


def generate(root: str, rows: int, groups: int = 10, updates: float = 0.1) -> tuple[str, str]:
    """Write table (a), copy it to (b) and evolve (b); returns both paths."""
    plain, evolved = os.path.join(root, "plain"), os.path.join(root, "evolved")
    if os.path.exists(root):
        shutil.rmtree(root)
    rng = np.random.default_rng(3)
    spec = TableSpec(name="bench", record_key_fields=("id",), table_type=TableType.MERGE_ON_READ,
                     ordering_fields=("ts",))
    sample = make_rows(0, 1, 1, rng)
    avro = json.dumps(avro_record_schema("bench", sample.schema))
    config = create_table(plain, spec, avro)
    schema = internal_from_avro(avro, add_meta=True)
    instant = new_instant_time()
    per = rows // groups
    writes = tuple(
        write_base_file(as_storage(plain), config, partition_path="", file_id=f"{g:08d}-reco-0000-0000-0", instant=instant,
                        write_token=f"{g}-1-{g}", data=make_rows(g * per, per, 1, rng), partition_id=g)
        for g in range(groups))
    schema, history = _commit(plain, config, instant, Action.DELTA_COMMIT, writes, "BULK_INSERT", avro,
                              schema, "")
    log_instant, changed = new_instant_time(), int(per * updates)
    logs = tuple(
        write_log_blocks(as_storage(plain), config, partition_path="", file_id=f"{g:08d}-reco-0000-0000-0", base_instant=instant,
                         instant=log_instant, write_token=f"{g}-2-{g}", partition_id=g,
                         upserts=updated_rows(np.sort(rng.choice(per, changed, replace=False)) + g * per, rng),
                         base_file=writes[g].file_name)
        for g in range(groups))
    schema, history = _commit(plain, config, log_instant, Action.DELTA_COMMIT, logs, "UPSERT", avro, schema,
                              history)
    shutil.copytree(plain, evolved)
    config_b = shim.open_table(evolved).config
    for _, change in CHANGES:
        schema = change(schema)
        schema, history = _commit(evolved, config_b, new_instant_time(), Action.COMMIT, (), "ALTER_SCHEMA",
                                  avro, schema, history)
    return plain, evolved


def _read(path: str, mode: ScanMode) -> int:
    return shim.open_table(path, merge_cache_bytes=0).read(mode=mode).num_rows


def best_of_interleaved(repeat: int, paths: tuple[str, str], mode: ScanMode) -> list[tuple[float, int]]:
    """Best time and row count per path, the two paths read alternately so machine noise hits both."""
    best = [(float("inf"), 0), (float("inf"), 0)]
    for _ in range(repeat):
        for i, path in enumerate(paths):
            start = time.perf_counter()
            rows = _read(path, mode)
            best[i] = (min(best[i][0], time.perf_counter() - start), rows)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default="/tmp/hudi-shim-reconcile-bench")
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    plain, evolved = generate(args.root, args.rows)
    b = shim.open_table(evolved)
    assert b.schema().names == ["id", "driver", "ts", "city", "fare", "tip", "passenger", "distance_km",
                                "passengers"], b.schema().names
    results: dict[str, object] = {"rows": args.rows, "changes": [name for name, _ in CHANGES]}
    for mode in ("read_optimized", "snapshot"):
        (t_a, n_a), (t_b, n_b) = best_of_interleaved(args.repeat, (plain, evolved), mode)
        assert n_a == n_b == args.rows
        results[f"{mode}_plain_s"] = round(t_a, 3)
        results[f"{mode}_evolved_s"] = round(t_b, 3)
        results[f"{mode}_evolved_over_plain"] = round(t_b / t_a, 3)
    print(json.dumps(results, indent=2))
    for mode in ("read_optimized", "snapshot"):
        print(f"{mode}: evolved table takes {results[f'{mode}_evolved_over_plain']}x the time of the "
              "unevolved one (target <= 1.10x)")


if __name__ == "__main__":
    main()
