"""Tables as other writers than one Spark SQL session leave them (`tests.oracle.recipes`): Flink's
changelog mode, the simple and consistent hashing bucket indexes, non-blocking concurrency
control, two writers at once. `test_oracle_reads` compares every read of them with Apache Hudi's;
these tests check that Hudi wrote what each recipe is about, and the rows the reads must give
where the answer follows from the recipe alone."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import shim
from shim.log import BlockType, read_log_file
from shim.log.reader import decode_data_block
from tests.local import LOCAL
from tests.oracle.generate import GeneratedTable

pytestmark = [pytest.mark.hudi_oracle, pytest.mark.spark]


def _files(table: Path, pattern: str) -> list[Path]:
    return sorted(p for p in table.rglob(pattern) if ".hoodie" not in p.relative_to(table).parts
                  and not p.name.endswith(".crc"))


def _names(table: shim.Table, as_of: str | None = None) -> dict[int, str]:
    return {row["id"]: row["name"] for row in table.read(columns=["id", "name"], as_of=as_of).to_pylist()}


def test_changelog_records_keep_their_operations_and_deletes_drop_keys(hudi_tables: dict[str, GeneratedTable]):
    generated = hudi_tables["mor_changelog"]
    operations: set[str] = set()
    kinds: set[BlockType] = set()
    for path in _files(generated.path, ".*.log.*"):
        contents = read_log_file(LOCAL, str(path))
        for block in contents.blocks:
            kinds.add(block.block_type)
            if block.block_type is BlockType.AVRO_DATA:
                operations.update(decode_data_block(contents, block).column("_hoodie_operation").to_pylist())
    # Every change is a data record, deletes too (Hudi writes no delete block when it keeps operations).
    assert operations == {"I", "U", "-U", "D"}
    assert kinds == {BlockType.AVRO_DATA}
    compacted = {op for path in _files(generated.path, "*.parquet")
                 for op in pq.read_table(path, columns=["_hoodie_operation"]).column(0).to_pylist()}
    assert {"I", "U"} <= compacted  # compaction keeps the operation of the record it keeps
    table = shim.open_table(generated.path)
    # Event-time ordering: -U and D delete like any delete, unless older than the record they meet
    # (5: a -U older than it, 7: a U older than it); 6: a D with the default ordering value 0
    # deletes whatever the record's; 4: a lone -U deletes; 3, 10: deleted and inserted again.
    assert _names(table) == {2: "v2", 3: "back3", 5: "n5", 7: "n7", 8: "v8", 9: "u9", 10: "again10", 11: "u11"}


def test_nbcc_log_completed_after_a_compaction_plan_joins_the_compacted_slice(hudi_tables: dict[str, GeneratedTable]):
    generated = hudi_tables["mor_nbcc"]
    table = shim.open_table(generated.path)
    completion = {i["requested"]: i["completed"] for i in generated.completed_writes()}
    compactions = [i["requested"] for i in [*generated.timeline["archived"], *generated.timeline["active"]]
                   if i["action"] == "commit"]
    assert len(compactions) == 1
    [compaction] = compactions
    slices = table.file_slices()
    assert {s.file_id for s in slices} == {"00000000-0000-0000-0000-000000000000-0",
                                           "00000001-0000-0000-0000-000000000000-0"}  # NBCC's fixed bucket ids
    early = [(s.file_id, log.instant_time) for s in slices for log in s.log_files if log.instant_time < s.base_instant]
    # writer a began before the compaction was planned and completed after: its logs are the
    # compacted slice's, though named before it
    assert early and all(s.base_instant == compaction for s in slices)
    assert all(completion[instant] > compaction for _, instant in early)
    assert any(len({log.instant_time for log in s.log_files}) >= 4 for s in slices)  # both writers' logs
    # 1: a's update ties b's on ts 5; b's was compacted, a's log comes after the base: a wins.
    # 6: b deleted it; 7: b's tie on ts 8 wins (b began later, though it completed first);
    # 9: a's delete (ts 8) beats b's older update; 10: b's delete.
    assert _names(table) == {1: "a1", 2: "a2", 3: "b3", 4: "b4", 5: "b5", 7: "b7", 8: "b8", 11: "b11"}
    # As of writer a's start its write counts (it completed, after the compaction's plan); Hudi
    # 1.2 leaves it out there (`_late_writes` in test_oracle_reads).
    a_began = generated.completed_writes()[1]["requested"]
    assert early[0][1] == a_began
    assert _names(table, as_of=a_began) == {1: "a1", 2: "a2", 3: "a3", **{i: f"n{i}" for i in range(4, 11)}}


def test_consistent_hashing_file_groups_are_the_buckets_of_the_hashing_metadata(
        hudi_tables: dict[str, GeneratedTable]):
    generated = hudi_tables["mor_consistent_hashing"]
    table = shim.open_table(generated.path)
    metadata = generated.path / ".hoodie" / ".bucket_index" / "consistent_hashing_metadata"
    groups: dict[str, set[str]] = {}
    for file_slice in table.file_slices():
        groups.setdefault(file_slice.partition_path, set()).add(file_slice.file_id)
    assert sorted(groups) == ["eu", "us"]
    for partition, file_ids in groups.items():
        committed = sorted(p.name.split(".")[0] for p in (metadata / partition).glob("*.commit"))
        assert len(committed) == 3  # the initial buckets, the split, the merge
        latest = json.loads((metadata / partition / f"{committed[-1]}.hashing_meta").read_text())
        assert file_ids == {node["fileIdPrefix"] + "-0" for node in latest["nodes"]}
    # the upsert made while the split was pending went to the old file groups and to the new
    # ones, in log files named after the clustering
    clusterings = {i["requested"] for i in generated.completed_writes() if i["action"] == "replacecommit"}
    named = {p.name.split("_")[1].split(".")[0] for p in _files(generated.path, ".*.log.*")}
    assert clusterings & named
    assert len(table.read()) == 17  # keys 1-18 but 6, deleted


def test_two_writers_one_aborted_by_a_conflict_is_never_read(hudi_tables: dict[str, GeneratedTable]):
    generated = hudi_tables["mor_two_writers"]
    clients = [step["outcome"] for step in generated.steps if "client" in step["step"]]
    aborted = [action for outcome in clients for action in outcome if "aborted" in action]
    assert len(aborted) == 2 and all("HoodieWriteConflictException" in a["error"] for a in aborted)
    first, last = aborted[0]["aborted"], aborted[1]["aborted"]
    completed = {i["requested"] for i in generated.completed_writes()}
    assert not {first, last} & completed
    concurrent = [step["outcome"] for step in generated.steps if "concurrent" in step["step"]]
    assert len(concurrent) == 3 and all(any(o["ok"] for o in outcome) for outcome in concurrent)
    logs = {p.name.split("_")[1].split(".")[0] for p in generated.path.rglob(".*.log.*") if not p.name.endswith(".crc")}
    assert first not in logs  # rolled back by a later writer
    assert last in logs  # the last write aborted: its log files stay, inflight
    table = shim.open_table(generated.path)
    assert not {first, last} & set(table.read(include_meta=True).column("_hoodie_commit_time").to_pylist())
    assert _names(table).get(3) != "cb3"
    after = min(i for i in completed if i > first)
    assert _names(table, as_of=after).get(3) != "cb3"
