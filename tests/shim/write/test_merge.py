"""Base file rewrites: updates replace, deletes remove, carried-over records keep their meta."""

from __future__ import annotations

import pyarrow as pa

from shim.write.merge import merge_records, outranked


def records(rows: list[tuple[str, int, str, str]]) -> pa.Table:
    return pa.table({
        "_hoodie_commit_time": [r[3] for r in rows],
        "_hoodie_record_key": [r[0] for r in rows],
        "ts": pa.array([r[1] for r in rows], pa.int64()),
        "v": [r[2] for r in rows],
    })


PREVIOUS = records([("a", 5, "old-a", "1"), ("b", 5, "old-b", "1"), ("c", 5, "old-c", "1")])


def by_key(table: pa.Table) -> dict[str, tuple[str, str]]:
    return {r["_hoodie_record_key"]: (r["v"], r["_hoodie_commit_time"]) for r in table.to_pylist()}


def test_commit_time_ordering_incoming_always_wins():
    incoming = records([("a", 1, "new-a", "2"), ("d", 1, "new-d", "2")])
    result = merge_records(PREVIOUS, incoming, pa.array(["c"]))
    assert by_key(result.table) == {"a": ("new-a", "2"), "b": ("old-b", "1"), "d": ("new-d", "2")}
    assert (result.inserts, result.updates, result.deletes) == (1, 1, 1)


def test_event_time_ordering_keeps_strictly_greater_previous_record():
    incoming = records([("a", 1, "lower", "2"), ("b", 5, "tie", "2"), ("c", 9, "higher", "2")])
    result = merge_records(PREVIOUS, incoming, pa.array([], pa.string()), ("ts",))
    assert by_key(result.table) == {"a": ("old-a", "1"), "b": ("tie", "2"), "c": ("higher", "2")}
    assert (result.inserts, result.updates, result.deletes) == (0, 2, 0)


def test_null_ordering_value_counts_lowest():
    incoming = records([("a", 1, "x", "2")]).set_column(2, "ts", pa.array([None], pa.int64()))
    result = merge_records(PREVIOUS, incoming, pa.array([], pa.string()), ("ts",))
    assert by_key(result.table)["a"] == ("old-a", "1")


def test_no_previous_file_writes_the_batch():
    incoming = records([("a", 1, "x", "2")])
    result = merge_records(None, incoming, pa.array(["zz"]))
    assert result.table == incoming and result.inserts == 1


def test_records_of_the_same_commit_from_another_task_are_precombined_by_ordering():
    previous = records([("a", 9, "same-commit", "7"), ("b", 9, "older-commit", "1")])
    incoming = records([("a", 2, "late-task", "7"), ("b", 2, "update", "7")])
    result = merge_records(previous, incoming, pa.array([], pa.string()), batch=("7", ("ts",)))
    assert by_key(result.table) == {"a": ("same-commit", "7"), "b": ("update", "7")}


def test_outranked_rows_lose_to_a_strictly_greater_earlier_version_the_last_one_counting():
    earlier = pa.table({"_hoodie_record_key": ["a", "b", "a", "c"], "ts": pa.array([9, 4, 2, None], pa.int64()),
                        "seq": [0, 0, 7, 0]})
    incoming = pa.table({"_hoodie_record_key": ["a", "b", "c", "d", "b"], "ts": pa.array([3, 4, 1, 0, 3], pa.int64()),
                         "seq": [0, 1, 0, 0, 0]})
    # a: the last earlier version (ts 2) is older; b: equal ts, then seq decides; c: null is lowest
    assert outranked(earlier, incoming, ("ts",)).tolist() == [False, False, False, False, True]
    assert outranked(earlier, incoming, ("ts", "seq")).tolist() == [False, False, False, False, True]
    assert outranked(earlier.filter(pa.array([False, True, False, False])), incoming.slice(1, 1),
                     ("ts", "seq")).tolist() == [False]
    assert outranked(earlier, incoming.slice(1, 1), ("ts",)).tolist() == [False]  # a tie: the later one wins
    assert outranked(earlier, incoming, ()).tolist() == [False] * 5
