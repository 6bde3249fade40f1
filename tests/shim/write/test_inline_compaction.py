"""Inline compaction (`hoodie.compact.inline*`): when a merge-on-read commit is followed by a
compaction, what it leaves on the timeline, and that rows stay the same for the shim and hudi-rs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shim.errors import InvalidArgumentError, WriteError
from shim.properties import read_table_config
from shim.storage import as_storage
from shim.timeline.delta_commits import delta_commits_since_compaction
from shim.timeline.instant import parse_instant_file_name
from shim.timeline.timeline import Timeline
from shim.write.service_options import InlineCompaction, InlineMode, TriggerStrategy
from shim.write.services import compaction as compaction_module
from shim.write.services.compaction import compact, schedule_compaction
from shim.write.services.compaction_trigger import compaction_due
from tests.writekit import hudi_rs_rows, latest_rows, shim_rows, write

MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.datasource.write.partitionpath.field": "region"}
COLUMNS = ["id", "ts", "region", "fare"]


def trips(ids: range, ts: int) -> list[dict]:
    return [{"id": f"k{i}", "ts": ts, "region": "sf" if i % 2 else "ny", "fare": float(ts * 100 + i)} for i in ids]


def instants(path: Path, suffix: str) -> list[str]:
    return sorted(p.name.split(".")[0] for p in (path / ".hoodie").glob(f"*.{suffix}"))


def compacted_commits(path: Path) -> list[str]:
    return [ts for ts in instants(path, "commit")
            if json.loads((path / ".hoodie" / f"{ts}.commit").read_text()).get("compacted")]


def test_off_by_default_however_many_delta_commits(tmp_path):
    path = tmp_path / "t"
    for ts in range(1, 8):
        write(path, trips(range(ts, ts + 4), ts), **MOR)
    assert instants(path, "commit") == [] and instants(path, "compaction.requested") == []
    assert len(instants(path, "deltacommit")) == 7


def test_every_third_delta_commit_is_compacted_and_rows_stay_the_same(tmp_path):
    path, writes = tmp_path / "t", []
    opts = {**MOR, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"}
    for ts in range(1, 8):
        writes.append(trips(range(ts % 3, 12, 1 + ts % 2), ts))  # the keys of the first write, updated
        write(path, writes[-1], **opts)
        assert len(compacted_commits(path)) == ts // 3, f"after write {ts}"
        assert shim_rows(path) == latest_rows(writes)
    deltas, compactions = instants(path, "deltacommit"), compacted_commits(path)
    assert len(deltas) == 7
    assert deltas[2] < compactions[0] < deltas[3] and deltas[5] < compactions[1] < deltas[6]
    # After write 6 compacted, the read-optimized view holds everything up to write 6.
    assert shim_rows(path, mode="read_optimized") == latest_rows(writes[:6])
    assert shim_rows(path) == hudi_rs_rows(path, COLUMNS)


def test_default_trigger_is_five_delta_commits(tmp_path):
    path = tmp_path / "t"
    for ts in range(1, 6):
        write(path, trips(range(4), ts), **MOR, **{"hoodie.compact.inline": "true"})
        assert len(compacted_commits(path)) == (1 if ts == 5 else 0), f"after write {ts}"
    assert shim_rows(path, mode="read_optimized") == latest_rows([trips(range(4), 5)])


def test_schedule_inline_only_plans_and_compact_runs_the_plan(tmp_path):
    path, writes = tmp_path / "t", []
    opts = {**MOR, "hoodie.compact.schedule.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
    for ts in (1, 2):
        writes.append(trips(range(ts, ts + 5), ts))
        write(path, writes[-1], **opts)
    [planned] = instants(path, "compaction.requested")
    assert compacted_commits(path) == [] and instants(path, "compaction.inflight") == []
    for ts in (3, 4, 5):  # writes go on into new slices; no second plan while one is pending
        writes.append(trips(range(ts, ts + 5), ts))
        write(path, writes[-1], **opts)
    assert instants(path, "compaction.requested") == [planned]
    # hudi-rs 0.5 leaves out logs written on a pending plan's slice; it is compared once compacted.
    assert shim_rows(path) == latest_rows(writes)
    assert compact(str(path)) == planned
    assert compacted_commits(path) == [planned]
    assert shim_rows(path) == latest_rows(writes) == hudi_rs_rows(path, COLUMNS)
    assert shim_rows(path, mode="read_optimized") == latest_rows(writes[:2])


def test_schedule_compaction_plans_without_running(tmp_path):
    path = tmp_path / "t"
    write(path, trips(range(6), 1), **MOR)
    assert schedule_compaction(str(path)) is None  # no slice has log files yet
    write(path, trips(range(3), 2), **MOR)
    planned = schedule_compaction(str(path))
    assert planned is not None and instants(path, "compaction.requested") == [planned]
    assert schedule_compaction(str(path)) is None  # one is pending
    assert compacted_commits(path) == []
    assert compact(str(path)) == planned
    assert shim_rows(path, mode="read_optimized") == latest_rows([trips(range(6), 1), trips(range(3), 2)])


def test_copy_on_write_tables_ignore_inline_compaction(tmp_path):
    path = tmp_path / "t"
    opts = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "1"}
    for ts in (1, 2, 3):
        write(path, trips(range(4), ts), **opts)
    assert instants(path, "compaction.requested") == [] and len(instants(path, "commit")) == 3
    assert compacted_commits(path) == []


@pytest.mark.parametrize(("strategy", "commits", "seconds", "compacts_at_once"), [
    ("TIME_ELAPSED", "100", "0", True),
    ("TIME_ELAPSED", "1", "3600", False),
    ("NUM_OR_TIME", "1", "3600", True),
    ("NUM_AND_TIME", "1", "3600", False),
    ("NUM_AND_TIME", "1", "0", True),
    ("NUM_COMMITS_AFTER_LAST_REQUEST", "1", "3600", True),
])
def test_trigger_strategies_on_a_real_write(tmp_path, strategy, commits, seconds, compacts_at_once):
    path = tmp_path / "t"
    opts = {**MOR, "hoodie.compact.inline": "true", "hoodie.compact.inline.trigger.strategy": strategy,
            "hoodie.compact.inline.max.delta.commits": commits, "hoodie.compact.inline.max.delta.seconds": seconds}
    write(path, trips(range(4), 1), **MOR)
    write(path, trips(range(2), 2), **opts)
    assert len(compacted_commits(path)) == (1 if compacts_at_once else 0)
    assert shim_rows(path) == latest_rows([trips(range(4), 1), trips(range(2), 2)])


@pytest.mark.parametrize(("options", "message"), [
    ({"hoodie.compact.inline": "true", "hoodie.compact.schedule.inline": "true"}, "cannot both be true"),
    ({"hoodie.compact.inline.trigger.strategy": "SOMETIMES"}, "hoodie.compact.inline.trigger.strategy='SOMETIMES'"),
    ({"hoodie.compact.inline.max.delta.commits": "0"}, "hoodie.compact.inline.max.delta.commits=0"),
    ({"hoodie.compact.inline": "yes"}, "hoodie.compact.inline='yes'"),
])
def test_bad_settings_are_refused_before_anything_is_written(tmp_path, options, message):
    path = tmp_path / "t"
    write(path, trips(range(4), 1), **MOR)
    before = sorted(p.name for p in (path / ".hoodie").iterdir())
    with pytest.raises(InvalidArgumentError, match=message):
        write(path, trips(range(2), 2), **MOR, **options)
    assert sorted(p.name for p in (path / ".hoodie").iterdir()) == before


def test_a_failed_inline_compaction_names_the_commit_which_stays_and_is_resumed(tmp_path, monkeypatch):
    path = tmp_path / "t"
    opts = {**MOR, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
    write(path, trips(range(6), 1), **opts)

    def broken(*args: object, **kwargs: object) -> str:
        raise OSError("disk full")

    monkeypatch.setattr(compaction_module, "compact_file_group", broken)
    with pytest.raises(WriteError, match=r"commit \d+ completed, but the inline compaction after it failed: disk full"):
        write(path, trips(range(3), 2), **opts)
    monkeypatch.undo()
    [second] = instants(path, "deltacommit")[1:]
    expected = latest_rows([trips(range(6), 1), trips(range(3), 2)])
    assert shim_rows(path) == expected  # the commit is visible; the compaction is not
    [pending] = instants(path, "compaction.inflight")
    assert pending > second and compacted_commits(path) == []
    write(path, trips(range(1), 3), **opts)  # the next write's inline compaction resumes it
    assert compacted_commits(path) == [pending]
    assert shim_rows(path) == latest_rows([trips(range(6), 1), trips(range(3), 2), trips(range(1), 3)])


def _timeline(tmp_path: Path, names: list[str]) -> Timeline:
    path = tmp_path / "t"
    write(path, trips(range(2), 1), **MOR)
    config = read_table_config(as_storage(str(path)))
    assert config is not None
    parsed = [parse_instant_file_name(n) for n in names]
    return Timeline(str(path / ".hoodie"), [i for i in parsed if i is not None], config)


def test_delta_commits_are_counted_after_the_last_completed_compaction_or_overwrite(tmp_path):
    timeline = _timeline(tmp_path, [
        "20260101000000001.deltacommit", "20260101000000002.deltacommit",
        "20260101000000003.compaction.requested", "20260101000000003.commit",
        "20260101000000004.deltacommit", "20260101000000005.deltacommit.inflight",
        "20260101000000006.compaction.requested", "20260101000000007.deltacommit",
    ])
    since = delta_commits_since_compaction(timeline)
    assert since is not None and (since.count, since.reference) == (2, "20260101000000003")
    by_request = delta_commits_since_compaction(timeline, completed_only=False, since_request=True)
    assert by_request is not None and (by_request.count, by_request.reference) == (1, "20260101000000006")
    overwritten = _timeline(tmp_path / "o", [
        "20260101000000001.deltacommit", "20260101000000002.replacecommit", "20260101000000003.deltacommit"])
    since = delta_commits_since_compaction(overwritten)
    assert since is not None and (since.count, since.reference) == (1, "20260101000000002")
    fresh = _timeline(tmp_path / "f", ["20260101000000001.deltacommit", "20260101000000002.deltacommit"])
    since = delta_commits_since_compaction(fresh)
    assert since is not None and (since.count, since.reference) == (2, "20260101000000001")
    assert delta_commits_since_compaction(_timeline(tmp_path / "e", [])) is None


def test_elapsed_time_is_measured_from_the_last_compaction(tmp_path):
    timeline = _timeline(tmp_path, ["20260101000000000.commit", "20260101000500000.deltacommit"])
    timed = InlineCompaction(InlineMode.RUN, TriggerStrategy.TIME_ELAPSED, max_delta_commits=1, max_delta_seconds=600)
    assert not compaction_due(timeline, timed, "20260101000959999")
    assert compaction_due(timeline, timed, "20260101001000000")
    both = InlineCompaction(InlineMode.RUN, TriggerStrategy.NUM_AND_TIME, max_delta_commits=2, max_delta_seconds=600)
    assert not compaction_due(timeline, both, "20260101001000000")  # one delta commit only
    either = InlineCompaction(InlineMode.RUN, TriggerStrategy.NUM_OR_TIME, max_delta_commits=2, max_delta_seconds=600)
    assert compaction_due(timeline, either, "20260101001000000")
    assert not compaction_due(timeline, either, "20260101000100000")
