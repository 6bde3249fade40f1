"""Spark reads through the `hudi_shim` data source follow a table that keeps changing: after every
random step (writes, schema changes, compactions, cleans) the snapshot, a time-travel read as of
the oldest retained commit and a partition-filtered read give the model's columns and rows."""

from __future__ import annotations

import random

import pytest

import shim
from tests.modelkit import (
    EvolvingHistory,
    random_evolving_step,
    random_evolving_write,
    time_travel_horizon,
    write_options,
)

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("seed", range(2))
def test_spark_reads_follow_random_histories(spark, tmp_path, seed):  # type: ignore[no-untyped-def]
    rng = random.Random(f"spark-{seed}")
    path = tmp_path / "t"
    options = write_options("MERGE_ON_READ", buckets=2, commits_retained=3)
    model = EvolvingHistory()
    random_evolving_write(path, rng, 1, model, options)
    for step in range(2, 12):
        random_evolving_step(path, rng, step, model, options, change_rate=0.4, compact_rate=0.2)
        frame = spark.read.format("hudi_shim").load(str(path))
        data = [c for c in frame.columns if not c.startswith("_hoodie")]
        assert data == model.schema().names, step
        rows = sorted((r.asDict() for r in frame.select(*data).collect()), key=lambda r: r["id"])
        assert rows == model.snapshots[-1][1], step
        horizon = time_travel_horizon(shim.open_table(str(path)))
        instant, old = next((i, r) for i, r in model.snapshots if i >= horizon)
        back = spark.read.format("hudi_shim").option("as.of.instant", instant).load(str(path))
        cols = [c for c in back.columns if not c.startswith("_hoodie")]
        assert cols == model.names[instant]
        assert sorted((r.asDict() for r in back.select(*cols).collect()), key=lambda r: r["id"]) == old, (step, instant)
        pushed = frame.where("region = 'r1'").select("id")
        assert sorted(r.id for r in pushed.collect()) == [r["id"] for r in model.snapshots[-1][1] if r["region"] == "r1"]
