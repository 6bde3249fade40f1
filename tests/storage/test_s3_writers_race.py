"""Two writer processes (each with its own local cache folder, as on two machines) race to write
one table on a real S3-compatible server that honours conditional writes (moto): no instant is
committed twice, no commit is lost, and the table reads right (the shim; Apache Hudi with the
`hudi_oracle` marker)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyarrow.fs as pafs
import pytest

import shim
from shim.timeline.instant import Action

REPO = Path(__file__).resolve().parents[2]
COMMITS = 8
"""Commits each writer lands."""


@pytest.fixture(scope="module")
def race(moto_s3, tmp_path_factory) -> dict:
    """The race, run once: the table's location and what each writer reported."""
    folder = tmp_path_factory.mktemp("race")
    location = f"s3://lake/race-{uuid.uuid4().hex[:8]}"
    start = time.time() + 4  # both start at once, after their imports
    began = time.monotonic()
    writers = []
    for writer in range(2):
        env = {**os.environ, **moto_s3.environment(), "HUDI_SHIM_CACHE": str(folder / f"cache{writer}"),
               "PYTHONPATH": str(REPO)}
        writers.append(subprocess.Popen(
            [sys.executable, "-m", "tests.storage.race_writer", location, str(writer), str(COMMITS), str(start),
             str(folder / f"{writer}.json")], env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True))
    for process in writers:
        _, errors = process.communicate(timeout=600)
        assert process.returncode == 0, errors[-3000:]
    reports = [json.loads((folder / f"{writer}.json").read_text()) for writer in range(2)]
    return {"location": location, "options": moto_s3.storage_options(), "reports": reports, "seconds": time.monotonic() - began - 4, "folder": folder}


def test_two_writer_processes_never_commit_one_instant_twice_nor_lose_a_commit(race):
    reports = race["reports"]
    table = shim.open_table(race["location"], storage_options=race["options"])
    completed = [i for i in table.timeline() if i.is_completed and i.action is Action.COMMIT]
    landed = [instant for report in reports for instant in report["landed"]]
    assert all(len(report["landed"]) == COMMITS for report in reports)
    assert len(set(landed)) == len(landed) == 2 * COMMITS, "an instant was committed by both writers"
    assert sorted(i.requested_time for i in completed) == sorted(landed), "a landed commit is missing"
    timeline = table.timeline()  # every state's file of every instant
    pending = {i.requested_time for i in timeline} - {i.requested_time for i in timeline if i.is_completed}
    assert not pending, "a write was left pending"
    assert not [e for report in reports for e in report["errors"]], "only refusals, no other errors"
    assert sum(report["refused"] for report in reports) > 0, "the writers never collided: no race was tested"

    rows = {r["id"]: r for r in table.read().to_pylist()}
    expected = {f"w{writer}-{step:02d}-{j}" for writer in range(2) for step in range(COMMITS) for j in range(3)}
    assert set(rows) == expected | {"shared"}
    for writer, report in enumerate(reports):
        for step, instant in enumerate(report["landed"]):
            assert rows[f"w{writer}-{step:02d}-0"]["ts"] == int(instant)
    assert rows["shared"]["ts"] == int(max(landed)), "the last commit's row wins"
    print(f"race: {2 * COMMITS} commits landed in {race['seconds']:.1f} s, "
          f"{sum(r['attempts'] for r in reports)} attempts, {sum(r['refused'] for r in reports)} refused")


@pytest.mark.hudi_oracle
@pytest.mark.spark
def test_apache_hudi_reads_the_raced_table_as_the_shim_does(race, moto_s3, tmp_path):
    from tests.oracle.compare import compare_same_schema
    from tests.oracle.env import ensure_env, run_driver

    local = tmp_path / "race"
    source = race["location"].removeprefix("s3://")
    pafs.copy_files(source, str(local), source_filesystem=pafs.S3FileSystem(**moto_s3.storage_options()))
    reads = [{"name": "snapshot", "options": {"hoodie.datasource.query.type": "snapshot"}}]
    [result] = run_driver(ensure_env(), [{"kind": "reads", "path": str(local), "out": str(tmp_path / "reads"),
                                          "reads": reads}])["jobs"]
    read = result["reads"]["snapshot"]
    assert "file" in read, f"Apache Hudi could not read it: {read.get('error')}"
    import pyarrow.parquet as pq

    ours = shim.open_table(race["location"], storage_options=race["options"]).read(include_meta=True)
    comparison = compare_same_schema("snapshot", pq.read_table(read["file"]), ours)
    assert comparison.equal, comparison.problems
    assert comparison.rows == 2 * COMMITS * 3 + 1
