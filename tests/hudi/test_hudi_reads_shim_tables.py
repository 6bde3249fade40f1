"""The other direction: Apache Hudi 1.2 reads what the `hudi_shim` writer writes (snapshot and
read-optimized, after each kind of schema change, after compaction and clean) with the rows the
shim reads; Hudi appends to a table we wrote, we append to a table Hudi wrote, and both readers
agree afterwards. The writer's jobs run in this process (`writekit.write`, as Spark tasks run
them); Hudi runs in its own environment (`tests.oracle.env`)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import shim
from shim.log import HeaderKey, read_log_file
from shim.write.ddl import alter_table
from shim.write.services.cleaning import clean
from shim.write.services.compaction import compact
from tests.local import LOCAL
from tests.oracle.compare import compare_same_schema
from tests.oracle.env import ensure_env, run_driver
from tests.writekit import write

pytestmark = [pytest.mark.hudi_oracle, pytest.mark.spark]

OPTIONS = {"hoodie.datasource.write.table.type": "MERGE_ON_READ",
           "hoodie.datasource.write.partitionpath.field": "region", "hoodie.clean.automatic": "false"}
# What Hudi's own writer needs to write into such a table: the same layout (version 6, bucket index
# of 4 buckets, schema-on-read), and no metadata table (this writer keeps none, so Hudi's reads
# would not see our later files through it).
HUDI_WRITE = {"hoodie.table.name": "trips", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
              "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
              "hoodie.datasource.write.partitionpath.field": "region", "hoodie.write.table.version": "6",
              "hoodie.write.auto.upgrade": "false", "hoodie.index.type": "BUCKET",
              "hoodie.index.bucket.engine": "SIMPLE", "hoodie.bucket.index.num.buckets": "4",
              "hoodie.metadata.enable": "false", "hoodie.schema.on.read.enable": "true",
              "hoodie.datasource.write.operation": "upsert"}
READS = [{"name": "snapshot", "options": {"hoodie.datasource.query.type": "snapshot"}},
         {"name": "read_optimized", "options": {"hoodie.datasource.query.type": "read_optimized"}}]


def rows(ids: range, ts: int, **columns: Any) -> pa.Table:
    data: dict[str, list[Any]] = {"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids),
                                  "region": ["eu" if i % 2 else "us" for i in ids]}
    for name, value in columns.items():
        data[name] = [value(i) if callable(value) else value for i in ids]
    return pa.table(data)


def snapshot_of(path: Path, states: Path, name: str) -> Path:
    target = states / name
    shutil.copytree(path, target)
    return target


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A merge-on-read table this writer evolves, copied after each kind of change."""
    root = tmp_path_factory.mktemp("shim-written")
    path, states = root / "t", root / "states"
    found = {}
    write(path, rows(range(8), 1, fare=lambda i: i * 1.5, qty=lambda i: i), **OPTIONS)
    write(path, rows(range(0, 8, 3), 2, fare=2.5, qty=7), **OPTIONS)  # updates in log files
    found["inserted"] = snapshot_of(path, states, "inserted")
    alter_table(str(path)).rename_column("fare", "amount")
    write(path, rows(range(1, 9, 2), 3, amount=3.5, qty=8), **OPTIONS)
    found["renamed"] = snapshot_of(path, states, "renamed")
    alter_table(str(path)).add_column("tip", "string", after="ts")
    write(path, rows(range(2, 5), 4, tip="t4", amount=4.5, qty=9), **OPTIONS)
    found["added"] = snapshot_of(path, states, "added")
    alter_table(str(path)).drop_column("tip")
    alter_table(str(path)).add_column("tip", "long")
    alter_table(str(path)).alter_column_type("qty", "long")
    write(path, rows(range(3, 6), 5, amount=5.5, qty=2**40, tip=lambda i: i), **OPTIONS)
    found["readded_widened"] = snapshot_of(path, states, "readded_widened")
    assert compact(str(path)) is not None
    found["compacted"] = snapshot_of(path, states, "compacted")
    write(path, rows(range(6, 10), 6, amount=6.5, qty=6, tip=6), **OPTIONS)
    assert clean(str(path), {"hoodie.cleaner.commits.retained": "1"})
    found["cleaned"] = snapshot_of(path, states, "cleaned")
    return found


def _hudi_rows(result: dict[str, Any], name: str) -> pa.Table:
    read = result["reads"][name]
    assert "file" in read, f"Apache Hudi could not read it: {read.get('error')}"
    return pq.read_table(read["file"])


def _agree(hudi_result: dict[str, Any], path: Path, modes: tuple[str, ...] = ("snapshot", "read_optimized")) -> None:
    table = shim.open_table(path)
    for mode in modes:
        result = compare_same_schema(mode, _hudi_rows(hudi_result, mode), table.read(mode, include_meta=True))
        assert result.equal, f"{path.name} {mode}: {result.problems}"
        assert result.rows > 0


def test_hudi_reads_our_tables_and_both_append(written: dict[str, Path], tmp_path: Path):
    env = ensure_env()
    ours = written["cleaned"].parent / "hudi_appends"  # a table we wrote, which Hudi then appends to
    shutil.copytree(written["cleaned"], ours)
    theirs = tmp_path / "hudi_wrote"  # a table Hudi wrote, which we then append to
    append = ("SELECT concat('k', id) AS id, 7L AS ts, IF(id % 2 = 1, 'eu', 'us') AS region, 7.5D AS amount, "
              "CAST(id AS BIGINT) AS qty, 70L AS tip FROM range(8, 12)")
    create = ("SELECT concat('k', id) AS id, 1L AS ts, IF(id % 2 = 1, 'eu', 'us') AS region, id * 1.5D AS amount "
              "FROM range(0, 6)")
    jobs: list[dict[str, Any]] = [
        {"kind": "reads", "path": str(p), "out": str(tmp_path / "reads" / name), "reads": READS}
        for name, p in written.items()
    ]
    jobs += [
        {"kind": "steps", "path": str(ours), "steps": [{"write": {"select": append, "options": HUDI_WRITE}}]},
        {"kind": "reads", "path": str(ours), "out": str(tmp_path / "reads" / "hudi_appends"), "reads": READS},
        {"kind": "steps", "path": str(theirs), "steps": [
            {"write": {"select": create, "options": {**HUDI_WRITE, "hoodie.datasource.write.operation": "insert"}}},
            {"write": {"select": create.replace("1L AS ts", "2L AS ts").replace("range(0, 6)", "range(0, 3)"),
                       "options": HUDI_WRITE}}]},
        {"kind": "reads", "path": str(theirs), "out": str(tmp_path / "reads" / "hudi_wrote"), "reads": READS},
    ]
    response = run_driver(env, jobs)
    results = response["jobs"]
    for (name, path), result in zip(written.items(), results, strict=False):
        _agree(result, path)  # Hudi reads every state of our table as we do
    _agree(results[-3], ours)  # after Hudi appended to our table
    _agree(results[-1], theirs)  # Hudi's own table, read by us
    appended = shim.open_table(ours).read(columns=["id", "tip"], filter="ts = 7")
    assert sorted(appended.column("tip").to_pylist()) == [70] * 4

    # Now we append to both: to the table Hudi last wrote, and to the table Hudi created.
    write(ours, rows(range(10, 14), 8, amount=8.5, qty=8, tip=8), **OPTIONS)
    write(theirs, rows(range(2, 8), 9, amount=9.5), **{**OPTIONS, "hoodie.table.name": "trips"})
    again = run_driver(env, [
        {"kind": "reads", "path": str(ours), "out": str(tmp_path / "again" / "ours"), "reads": READS},
        {"kind": "reads", "path": str(theirs), "out": str(tmp_path / "again" / "theirs"), "reads": READS},
    ])["jobs"]
    _agree(again[0], ours)
    _agree(again[1], theirs)
    merged = {r["id"]: r for r in shim.open_table(theirs).read().to_pylist()}
    assert {k: (r["ts"], r["amount"]) for k, r in merged.items()} == {
        **{f"k{i}": (2, i * 1.5) for i in range(2)}, **{f"k{i}": (9, 9.5) for i in range(2, 8)}}


@pytest.mark.parametrize("payload", ["OverwriteWithLatestAvroPayload", "DefaultHoodieRecordPayload"])
def test_hudi_reads_our_partial_updates_as_we_do(tmp_path: Path, payload: str):
    """Upserts of some columns (`hoodie.spark.sql.merge.into.partial.updates`): IS_PARTIAL log
    blocks with record positions, as Hudi's MERGE INTO writes them, which Hudi merges as we do,
    under commit-time and event-time ordering."""
    path = tmp_path / "partial"
    options = {**OPTIONS, "hoodie.schema.on.read.enable": "false",  # Hudi takes partial updates only then
               "hoodie.datasource.write.payload.class": f"org.apache.hudi.common.model.{payload}"}
    partial = {**options, "hoodie.spark.sql.merge.into.partial.updates": "true", "hoodie.write.record.positions": "true"}
    write(path, rows(range(8), 1, fare=lambda i: i * 1.5, qty=lambda i: i), **options)
    write(path, rows(range(0, 8, 2), 5, qty=lambda i: 100 + i), **partial)  # qty only
    write(path, rows(range(4), 3, fare=-1.0), **partial)  # fare only, at ts 3 after ts 5 for k0, k2
    write(path, rows(range(6, 8), 9, fare=9.5), **partial)
    blocks = [block for log in path.rglob(".*.log.*") for block in read_log_file(LOCAL, str(log)).blocks]
    assert blocks and all(block.header.get(HeaderKey.IS_PARTIAL) == "true" for block in blocks)
    assert all(HeaderKey.RECORD_POSITIONS in block.header for block in blocks)
    result = run_driver(ensure_env(), [{"kind": "reads", "path": str(path), "out": str(tmp_path / "reads"),
                                        "reads": READS}])["jobs"][0]
    _agree(result, path)
    merged = {r["id"]: (r["ts"], r["fare"], r["qty"]) for r in shim.open_table(path).read().to_pylist()}
    # Event time: the records at ts 5 stay on top, but they lack fare, which the one at ts 3 fills
    # (Hudi merges the log records with each other before the base record); commit time: the later wins.
    late = (5, -1.0, 100), (5, -1.0, 102)
    if payload.startswith("Overwrite"):
        late = (3, -1.0, 100), (3, -1.0, 102)
    assert merged == {"k0": late[0], "k1": (3, -1.0, 1), "k2": late[1], "k3": (3, -1.0, 3),
                      "k4": (5, 6.0, 104), "k5": (1, 7.5, 5), "k6": (9, 9.5, 106), "k7": (9, 9.5, 7)}
