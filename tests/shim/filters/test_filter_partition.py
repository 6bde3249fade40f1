from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from shim.filters import bind, evaluate_on_partition, parse_filter
from shim.filters.partition import possible_truths

# Leaf states of `p = 1` / `q = 1`: true, false, null (null partition value), unknown (not a partition column).
STATE_VALUE = {"T": 1, "F": 2, "N": None}


def partition(p: str, q: str) -> dict[str, object]:
    values: dict[str, object] = {}
    if p != "U":
        values["p"] = STATE_VALUE[p]
    if q != "U":
        values["q"] = STATE_VALUE[q]
    return values


@pytest.mark.parametrize(
    ("p", "q", "and_", "or_", "not_and", "not_or"),
    [
        ("T", "T", True, True, False, False),
        ("T", "F", False, True, True, False),
        ("T", "N", False, True, False, False),
        ("T", "U", True, True, True, False),
        ("F", "F", False, False, True, True),
        ("F", "N", False, False, True, False),
        ("F", "U", False, True, True, True),
        ("N", "N", False, False, False, False),
        ("N", "U", False, True, True, False),
        ("U", "U", True, True, True, True),
    ],
)
def test_evaluate_on_partition_truth_table(
    p: str, q: str, and_: bool, or_: bool, not_and: bool, not_or: bool
) -> None:
    for left, right in ((p, q), (q, p)):  # every row holds both ways round
        values = partition(left, right)
        assert evaluate_on_partition(parse_filter("p = 1 AND q = 1"), values) is and_
        assert evaluate_on_partition(parse_filter("p = 1 OR q = 1"), values) is or_
        assert evaluate_on_partition(parse_filter("NOT (p = 1 AND q = 1)"), values) is not_and
        assert evaluate_on_partition(parse_filter("NOT (p = 1 OR q = 1)"), values) is not_or


@pytest.mark.parametrize(
    ("state", "leaf", "negated"),
    [("T", True, False), ("F", False, True), ("N", False, False), ("U", True, True)],
)
def test_evaluate_on_partition_single_leaf_and_not(state: str, leaf: bool, negated: bool) -> None:
    values = partition(state, "U")
    assert evaluate_on_partition(parse_filter("p = 1"), values) is leaf
    assert evaluate_on_partition(parse_filter("NOT p = 1"), values) is negated


def test_possible_truths_tracks_null_separately_from_unknown() -> None:
    assert possible_truths(parse_filter("p = 1"), {"p": None}) == {None}
    assert possible_truths(parse_filter("p = 1"), {}) == {True, False, None}
    assert possible_truths(parse_filter("p = 1 AND q = 1"), {"p": None}) == {False, None}
    assert possible_truths(parse_filter("NOT (p = 1 AND q = 1)"), {"p": None}) == {True, None}


@pytest.mark.parametrize(
    ("filter", "values", "expected"),
    [
        ("dt = '2024-01-31'", {"dt": "2024-01-31"}, True),
        ("dt = '2024-01-31'", {"dt": "2024-02-01"}, False),
        ("dt >= '2024-01-01' AND dt < '2024-02-01'", {"dt": "2024-01-15"}, True),
        ("dt >= '2024-01-01' AND dt < '2024-02-01'", {"dt": "2024-02-15"}, False),
        ("dt IN ('a', 'b')", {"dt": "b"}, True),
        ("dt IN ('a', 'b')", {"dt": "c"}, False),
        ("dt NOT IN ('a', 'b')", {"dt": "c"}, True),
        ("dt NOT IN ('a', 'b')", {"dt": "a"}, False),
        ("dt IN ('a')", {"dt": None}, False),
        ("dt NOT IN ('a')", {"dt": None}, False),
        ("NOT dt IN ('a')", {"dt": None}, False),
        ("dt IS NULL", {"dt": None}, True),
        ("dt IS NULL", {"dt": "a"}, False),
        ("dt IS NOT NULL", {"dt": None}, False),
        ("NOT dt IS NULL", {"dt": "a"}, True),
        ("dt IS NULL", {}, True),
        ("year = 2024", {"year": 2024}, True),
        ("year > 2024.5", {"year": 2024}, False),
        ("year = 2024", {"year": Decimal("2024.0")}, True),
        ("year = 2024 AND fare > 10", {"year": 2023}, False),
        ("year = 2024 AND fare > 10", {"year": 2024}, True),
        ("year = 2024 OR fare > 10", {"year": 2023}, True),
        ("d = DATE '2024-01-31'", {"d": dt.date(2024, 1, 31)}, True),
        ("d < DATE '2024-01-31'", {"d": dt.date(2024, 1, 31)}, False),
        ("ok = TRUE", {"ok": False}, False),
        ("raw = 'ab'", {"raw": b"ab"}, True),
        ("raw = 'ab'", {"raw": b"cd"}, False),
        ("a.b = 1", {"a.b": 2}, False),
        ("a.b = 1", {"a": 2}, True),
        ("`a.b` = 1", {"a.b": 2}, False),
    ],
)
def test_evaluate_on_partition_cases(filter: str, values: dict[str, object], expected: bool) -> None:
    assert evaluate_on_partition(parse_filter(filter), values) is expected


@pytest.mark.parametrize(
    ("filter", "values"),
    [
        ("year = 2024", {"year": "2024"}),
        ("year = '2024'", {"year": 2024}),
        ("ok = TRUE", {"ok": 1}),
        ("d = DATE '2024-01-31'", {"d": "2024-01-31"}),
        ("d = DATE '2024-01-31'", {"d": dt.datetime(2024, 1, 31)}),
        ("ts = TIMESTAMP '2024-01-31 00:00:00+00:00'", {"ts": dt.datetime(2024, 1, 31, 1)}),
        ("x = 1", {"x": object()}),
        ("x IN (1, 2)", {"x": "1"}),
    ],
)
def test_evaluate_on_partition_unlike_types_never_prune(filter: str, values: dict[str, object]) -> None:
    assert evaluate_on_partition(parse_filter(filter), values) is True
    assert evaluate_on_partition(parse_filter(f"NOT ({filter})"), values) is True


def test_evaluate_on_partition_accepts_arrow_scalars() -> None:
    values = {"dt": pa.scalar("2024-01-31")}
    assert evaluate_on_partition(parse_filter("dt = '2024-01-31'"), values) is True
    assert evaluate_on_partition(parse_filter("dt = '2024-02-01'"), values) is False


def test_evaluate_on_partition_bound_filter_compares_typed_values() -> None:
    schema = pa.schema([("d", pa.date32()), ("n", pa.int32()), ("ts", pa.timestamp("us", tz="UTC"))])
    expr = bind(parse_filter("d >= '2024-01-01' AND n IN ('1', '2') AND ts < '2024-06-01 00:00:00'"), schema)
    utc = dt.UTC
    assert evaluate_on_partition(expr, {"d": dt.date(2024, 3, 1), "n": 2}) is True
    assert evaluate_on_partition(expr, {"d": dt.date(2023, 3, 1), "n": 2}) is False
    assert evaluate_on_partition(expr, {"d": dt.date(2024, 3, 1), "n": 3}) is False
    assert evaluate_on_partition(expr, {"ts": dt.datetime(2024, 7, 1, tzinfo=utc)}) is False
    assert evaluate_on_partition(expr, {"ts": dt.datetime(2024, 5, 1, tzinfo=utc)}) is True
