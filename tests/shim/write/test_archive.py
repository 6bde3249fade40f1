"""Archiving the timeline (`hoodie.archive.automatic`, `hoodie.keep.*`): what leaves the active
timeline and when, what the archive log holds, and that every read stays right afterwards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import shim
from engines.inspect import describe_table
from shim.errors import InvalidArgumentError, InvalidTableError, UnsupportedFeatureError
from shim.log.blocks import HeaderKey
from shim.log.writer import encode_command_block, write_log_file
from shim.write.avro_metadata import decode_avro_record
from shim.write.services.archiving import archive
from shim.write.services.cleaning import clean
from shim.write.services.compaction import compact, schedule_compaction
from tests.local import LOCAL
from tests.writekit import archived_entries, hudi_rs_rows, latest_rows, shim_rows, write

COLUMNS = ["id", "ts", "region", "fare"]
SMALL = {"hoodie.cleaner.commits.retained": "2", "hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "5"}
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.datasource.write.partitionpath.field": "region"}


def trips(ids: range, ts: int) -> list[dict]:
    return [{"id": f"k{i}", "ts": ts, "region": "sf" if i % 2 else "ny", "fare": float(ts * 100 + i)} for i in ids]


def timeline_files(path: Path) -> set[str]:
    return {p.name for p in (path / ".hoodie").iterdir() if p.name[0].isdigit()}


def completed(path: Path, *actions: str) -> list[str]:
    return sorted(name.split(".")[0] for name in timeline_files(path) if name.split(".", 1)[1] in actions)


def entry_keys(path: Path) -> set[tuple[str, str, str]]:
    return {(e["commitTime"], e["actionType"], e["actionState"]) for e in archived_entries(path)}


def file_key(name: str) -> tuple[str, str, str]:
    ts, rest = name.split(".", 1)
    parts = rest.split(".")
    if parts[-1] in ("requested", "inflight"):
        return ts, ".".join(parts[:-1]) or "commit", parts[-1].upper()
    return ts, rest, "COMPLETED"


def test_thirty_one_commits_archive_down_to_twenty_with_every_state_in_the_archive(tmp_path):
    path, writes, seen = tmp_path / "t", [], {}
    for ts in range(1, 32):
        writes.append(trips(range(ts % 5, ts % 5 + 8), ts))
        write(path, writes[-1], **{"hoodie.datasource.write.partitionpath.field": "region"})
        seen |= {name: (path / ".hoodie" / name).read_bytes() for name in timeline_files(path)}
        if ts == 30:
            assert len(completed(path, "commit")) == 30 and not list((path / ".hoodie" / "archived").glob(".commits_*"))
    assert len(completed(path, "commit")) == 20
    assert [p.name for p in (path / ".hoodie" / "archived").iterdir()] == [".commits_.archive.1_1-0-1"]
    gone = set(seen) - timeline_files(path)
    assert entry_keys(path) == {file_key(name) for name in gone}
    assert len({ts for ts, _, _ in entry_keys(path)}) == 11
    assert shim_rows(path) == latest_rows(writes) == hudi_rs_rows(path, COLUMNS)
    for entry in archived_entries(path):
        name = next(n for n in gone if file_key(n) == (entry["commitTime"], entry["actionType"], entry["actionState"]))
        if entry["actionType"] == "commit" and entry["actionState"] == "COMPLETED":
            source = json.loads(seen[name])
            stats = entry["hoodieCommitMetadata"]["partitionToWriteStats"]
            assert {p: [(s["fileId"], s["path"], s["numWrites"], s["prevCommit"]) for s in ss] for p, ss in stats.items()} \
                == {p: [(s["fileId"], s["path"], s["numWrites"], s["prevCommit"]) for s in ss]
                    for p, ss in source["partitionToWriteStats"].items()}
            assert entry["hoodieCommitMetadata"]["operationType"] == source["operationType"]
            assert entry["hoodieCommitMetadata"]["extraMetadata"]["latest_schema"] == \
                source["extraMetadata"]["latest_schema"]
        elif entry["actionType"] == "clean":
            key = "hoodieCleanMetadata" if entry["actionState"] == "COMPLETED" else "hoodieCleanerPlan"
            assert entry[key] == decode_avro_record(seen[name.split(".")[0] + (
                ".clean" if entry["actionState"] == "COMPLETED" else ".clean.requested")])


def test_cleans_and_rollbacks_are_archived_per_action_down_to_the_minimum(tmp_path):
    path, most = tmp_path / "t", {"clean": 0, "rollback": 0}
    for ts in range(1, 15):
        write(path, trips(range(6), ts), **SMALL)
        write(path, trips(range(3), ts), commit=False, **SMALL, **{"hoodie.client.heartbeat.interval_in_ms": "1"})
        most = {action: max(most[action], len(completed(path, action))) for action in most}
    write(path, trips(range(6), 15), **SMALL)  # rolls back the last failed write
    assert most == {"clean": 5, "rollback": 5}  # five stay; the sixth sends three to the archive
    archived = archived_entries(path)
    rollbacks = [e for e in archived if e["actionType"] == "rollback" and e["actionState"] == "COMPLETED"]
    cleans = [e for e in archived if e["actionType"] == "clean" and e["actionState"] == "COMPLETED"]
    assert rollbacks and cleans
    assert all(e["hoodieRollbackMetadata"]["commitsRollback"] for e in rollbacks)
    assert all(e["hoodieCleanMetadata"]["earliestCommitToRetain"] for e in cleans)
    assert len(completed(path, "commit")) <= 5
    assert shim_rows(path) == latest_rows([trips(range(6), 15)]) == hudi_rs_rows(path, COLUMNS)


def test_a_pending_compaction_holds_archival_back_until_it_completes(tmp_path):
    path, writes, instants = tmp_path / "t", [], []
    opts = {**MOR, **SMALL, "hoodie.compact.inline.trigger.strategy": "TIME_ELAPSED"}  # no delta commit kept for it
    for ts in (1, 2):
        writes.append(trips(range(8), ts))
        instants.append(write(path, writes[-1], **opts))
    planned = schedule_compaction(str(path))
    assert planned is not None
    for ts in range(3, 12):
        writes.append(trips(range(ts % 4, 8, 2), ts))
        instants.append(write(path, writes[-1], **opts))
    # Only what precedes the completed write just before the plan may go.
    assert completed(path, "deltacommit") == instants[1:]
    assert shim_rows(path) == latest_rows(writes)
    assert compact(str(path)) == planned
    writes.append(trips(range(2), 12))
    instants.append(write(path, writes[-1], **opts))
    assert completed(path, "deltacommit", "commit") == instants[-3:]
    archived = {(e["actionType"], e["actionState"]): e for e in archived_entries(path) if e["commitTime"] == planned}
    assert set(archived) == {("compaction", "REQUESTED"), ("compaction", "INFLIGHT"), ("commit", "COMPLETED")}
    assert archived["commit", "COMPLETED"]["hoodieCommitMetadata"]["compacted"] is True
    assert archived["commit", "COMPLETED"]["hoodieCommitMetadata"]["operationType"] == "COMPACT"
    assert archived["compaction", "INFLIGHT"]["hoodieCompactionPlan"] == \
        archived["compaction", "REQUESTED"]["hoodieCompactionPlan"]
    assert archived["compaction", "REQUESTED"]["hoodieCompactionPlan"]["operations"]
    assert shim_rows(path) == latest_rows(writes) == hudi_rs_rows(path, COLUMNS)
    assert shim_rows(path, mode="read_optimized") == latest_rows(writes[:2])  # the plan's slices


def test_merge_on_read_keeps_the_delta_commits_the_compaction_trigger_counts(tmp_path):
    counted, timed, instants = tmp_path / "counted", tmp_path / "timed", []
    counting = {**MOR, **SMALL, "hoodie.compact.inline.max.delta.commits": "4"}
    active: dict[str, list[int]] = {"counted": [], "timed": []}
    for ts in range(1, 11):
        instants.append(write(counted, trips(range(6), ts), **counting))
        write(timed, trips(range(6), ts), **MOR, **SMALL, **{"hoodie.compact.inline.trigger.strategy": "TIME_ELAPSED"})
        active["counted"].append(len(completed(counted, "deltacommit")))
        active["timed"].append(len(completed(timed, "deltacommit")))
    # Archival runs when 6 writes are active, down to 3, but never past the last four delta
    # commits while the trigger counts them (no compaction yet).
    assert active == {"counted": [1, 2, 3, 4, 5, 4, 5, 4, 5, 4], "timed": [1, 2, 3, 4, 5, 3, 4, 5, 3, 4]}
    assert completed(counted, "deltacommit") == instants[-4:]
    compaction = compact(str(counted))
    for ts in range(11, 13):
        instants.append(write(counted, trips(range(6), ts), **counting))
    # Fewer than four delta commits after the compaction: it stays, with what follows it.
    assert completed(counted, "deltacommit", "commit") == sorted([*instants[-3:], compaction])
    for ts in range(13, 16):
        instants.append(write(counted, trips(range(6), ts), **counting))
    # Four delta commits after the compaction (at write 14): it went with the one before it.
    assert completed(counted, "deltacommit", "commit") == instants[-5:]
    assert shim_rows(counted) == latest_rows([trips(range(6), 15)]) == hudi_rs_rows(counted, COLUMNS)
    assert shim_rows(timed) == latest_rows([trips(range(6), 10)]) == hudi_rs_rows(timed, COLUMNS)


def test_a_savepoint_or_an_older_clean_bounds_archival(tmp_path):
    saved, stale, instants = tmp_path / "saved", tmp_path / "stale", []
    off = {**SMALL, "hoodie.clean.automatic": "false"}
    for ts in range(1, 5):
        instants.append(write(saved, trips(range(4), ts), **off))
        write(stale, trips(range(4), ts), **off)
    (saved / ".hoodie" / f"{instants[1]}.savepoint.inflight").write_bytes(b"")
    (saved / ".hoodie" / f"{instants[1]}.savepoint").write_bytes(b"")  # no file listed: only the bound matters
    [result] = clean(str(stale), {"hoodie.cleaner.commits.retained": "2"})
    retained = result.earliest_retained
    for ts in range(5, 12):
        instants.append(write(saved, trips(range(4), ts), **off))
        write(stale, trips(range(4), ts), **off)
    assert completed(saved, "commit") == instants[1:]  # nothing at or after the savepoint goes
    assert completed(stale, "commit")[0] == retained  # nor the commits the last clean kept
    assert shim_rows(saved) == shim_rows(stale) == latest_rows([trips(range(4), 11)])


def test_a_replacecommit_stays_until_the_clean_deletes_what_it_replaced(tmp_path):
    path, writes = tmp_path / "t", []
    opts = {**SMALL, "hoodie.datasource.write.partitionpath.field": "region", "hoodie.clean.automatic": "false"}
    writes.append(trips(range(10), 1))
    write(path, writes[-1], **opts)
    overwrite = write(path, trips(range(0, 10, 2), 2), **opts, **{"hoodie.datasource.write.operation": "insert_overwrite"})
    replaced = json.loads((path / ".hoodie" / f"{overwrite}.replacecommit").read_text())["partitionToReplaceFileIds"]
    writes = [[r for r in writes[0] if r["region"] != "ny"], trips(range(0, 10, 2), 2)]
    for ts in range(3, 10):
        writes.append(trips(range(1, 4), ts))
        write(path, writes[-1], **opts)
    assert overwrite in completed(path, "replacecommit")  # nothing cleaned: it and all after it stay
    assert shim_rows(path) == latest_rows(writes) == hudi_rs_rows(path, COLUMNS)
    clean(str(path), {"hoodie.cleaner.commits.retained": "2"})
    writes.append(trips(range(1, 2), 10))
    write(path, writes[-1], **opts)
    assert overwrite not in completed(path, "replacecommit") and len(completed(path, "commit", "replacecommit")) == 3
    archived = {e["actionState"]: e for e in archived_entries(path) if e["commitTime"] == overwrite}
    assert archived["INFLIGHT"]["HoodieInflightReplaceMetadata"]["operationType"] == "INSERT_OVERWRITE"
    assert archived["COMPLETED"]["hoodieReplaceCommitMetadata"]["partitionToReplaceFileIds"] == replaced
    assert replaced and set(replaced) == {"ny"}
    assert shim_rows(path) == latest_rows(writes) == hudi_rs_rows(path, COLUMNS)


def test_reads_before_the_active_timeline(tmp_path):
    path, instants, writes = tmp_path / "t", [], []
    opts = {**SMALL, "hoodie.clean.automatic": "false"}
    for ts in range(1, 9):
        writes.append(trips(range(ts, ts + 3), ts))
        instants.append(write(path, writes[-1], **opts))
    first = completed(path, "commit")[0]
    assert first > instants[0]
    # The archive says which commits completed before the active timeline: time travel reaches them.
    assert shim_rows(path, as_of=instants[1]) == latest_rows(writes[:2])
    assert shim_rows(path, as_of=first) == latest_rows(writes[:instants.index(first) + 1])
    # An incremental window starting in the archive reads the archived commits' file groups.
    changed = shim.open_table(str(path)).incremental(instants[1]).to_pylist()
    after = latest_rows(writes[2:])
    assert sorted((r["id"], r["ts"]) for r in changed) == [(r["id"], r["ts"]) for r in after]


def test_settings_and_switching_archival_off(tmp_path):
    path = tmp_path / "t"
    write(path, trips(range(3), 1))
    for options, message in [
        ({"hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "5"}, "hoodie.keep.max.commits=5 must be greater"),
        ({"hoodie.keep.min.commits": "10"},
         "hoodie.keep.min.commits=10 must be greater than hoodie.cleaner.commits.retained=10"),
        ({"hoodie.archive.automatic": "maybe"}, "hoodie.archive.automatic='maybe'"),
    ]:
        with pytest.raises(InvalidArgumentError, match=message):
            write(path, trips(range(3), 2), **options)
    off = {**SMALL, "hoodie.archive.automatic": "false"}
    for ts in range(2, 10):
        write(path, trips(range(3), ts), **off)
    assert len(completed(path, "commit")) == 9
    result = archive(str(path), SMALL)
    assert result is not None and len(completed(path, "commit")) == 3
    assert {inst.requested_time for inst in result.instants} == {ts for ts, _, _ in entry_keys(path)}
    assert archive(str(path), SMALL) is None
    assert shim_rows(path) == latest_rows([trips(range(3), 9)])


def test_only_table_version_6_timelines_are_archived(tmp_path):
    path = tmp_path / "t"
    write(path, trips(range(3), 1))
    properties = path / ".hoodie" / "hoodie.properties"
    properties.write_text(properties.read_text().replace("hoodie.table.version=6", "hoodie.table.version=8"))
    with pytest.raises(UnsupportedFeatureError, match="this table is version 8"):
        archive(str(path))


def test_the_archived_timeline_reads_back_and_inspect_names_it(tmp_path):
    path = tmp_path / "t"
    for ts in range(1, 8):
        write(path, trips(range(3), ts), **SMALL)
    table = shim.open_table(str(path))
    archived = table.archived_timeline()
    times = sorted({a.requested_time for a in archived})
    assert times and max(times) < completed(path, "commit")[0]
    assert [a.state for a in archived if a.requested_time == times[0] and a.action == "commit"] == [
        "REQUESTED", "INFLIGHT", "COMPLETED"]
    text = describe_table(table)
    assert f"(before these: {len(times)} archived instants, {times[0]} .. {times[-1]}, in .hoodie/archived)" in text
    # A block that is not Avro data is an error naming the file.
    bogus = path / ".hoodie" / "archived" / ".commits_.archive.9_1-0-1"
    write_log_file(LOCAL, str(bogus), [encode_command_block({HeaderKey.INSTANT_TIME: "1", HeaderKey.TARGET_INSTANT_TIME: "1"})])
    with pytest.raises(InvalidTableError, match=r"\.commits_\.archive\.9_1-0-1 \(block at byte 0\): an archive block "
                                                r"must be Avro data"):
        table.archived_timeline()
