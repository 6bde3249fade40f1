"""Random write histories against a model of the table: every read the shim and hudi-rs give after
every step (latest, time travel to every retained commit, incremental windows) equals the model.

Each history mixes inserts of new keys, upserts of old and new keys (with duplicates a batch
pre-combines by `ts`), deletes, partition and table overwrites, writes that fail (rolled back by
the next), writes split over tasks running at once, compactions (merge-on-read) and cleans
keeping two commits (or two versions of each file group).
"""

from __future__ import annotations

import random

import pytest

import shim
from shim.errors import InvalidArgumentError
from shim.write.services.compaction import compact
from tests.modelkit import (
    COLUMNS,
    KEY_GENERATORS,
    EvolvingHistory,
    History,
    random_evolving_step,
    random_evolving_write,
    random_write,
    time_travel_horizon,
    write_options,
)
from tests.writekit import hudi_rs_rows


def _check(path, history: History) -> None:
    table = shim.open_table(str(path))
    latest = history.snapshots[-1][1]
    assert sorted(table.read(columns=COLUMNS).to_pylist(), key=lambda r: r["id"]) == latest
    assert hudi_rs_rows(path, COLUMNS) == latest
    horizon = time_travel_horizon(table)
    for instant, rows in history.snapshots[:-1]:
        if instant >= horizon:
            got = table.read(as_of=instant, columns=COLUMNS).to_pylist()
            assert sorted(got, key=lambda r: r["id"]) == rows, f"as of {instant}"
        else:
            with pytest.raises(InvalidArgumentError, match="cleaner"):
                table.read(as_of=instant)
        got = table.incremental(instant, columns=COLUMNS).to_pylist()
        assert sorted(got, key=lambda r: r["id"]) == history.changed_after(instant), f"after {instant}"


_HISTORIES = [(kind, "KEEP_LATEST_COMMITS", seed) for kind in ("COPY_ON_WRITE", "MERGE_ON_READ") for seed in range(4)]
_HISTORIES += [(kind, "KEEP_LATEST_FILE_VERSIONS", seed) for kind in ("COPY_ON_WRITE", "MERGE_ON_READ") for seed in range(2)]


@pytest.mark.parametrize(("table_type", "policy", "seed"), _HISTORIES)
def test_random_write_histories_read_back_as_the_model_says(tmp_path, table_type, policy, seed):
    rng = random.Random(f"{table_type}-{seed}" + ("" if policy == "KEEP_LATEST_COMMITS" else policy))
    path = tmp_path / "t"
    options = write_options(table_type, buckets=3, commits_retained=2)
    options |= {"hoodie.cleaner.policy": policy, "hoodie.cleaner.fileversions.retained": "2"}
    options |= random.Random(f"keygen-{table_type}-{policy}-{seed}").choice(KEY_GENERATORS)
    history = History()
    for step in range(1, 13):
        random_write(path, rng, step, history, options)
        if table_type == "MERGE_ON_READ" and rng.random() < 0.25:
            instant = compact(str(path))
            if instant is not None:  # a compaction changes no row, and is a commit to read as of
                history.snapshots.append((instant, history.snapshots[-1][1]))
        _check(path, history)


def _check_evolving(path, model: EvolvingHistory) -> None:
    table = shim.open_table(str(path))
    horizon = time_travel_horizon(table)
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
    options = write_options(table_type, buckets=2, commits_retained=4)
    model = EvolvingHistory()
    random_evolving_write(path, rng, 1, model, options)
    for step in range(2, 14):
        random_evolving_step(path, rng, step, model, options, change_rate=0.4, compact_rate=0.2)
        _check_evolving(path, model)
