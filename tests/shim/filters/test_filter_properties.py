"""Property tests: printing round-trips, Arrow agrees with the oracle, pruning never drops a match."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed")
from filter_oracle import oracle
from hypothesis import given, settings
from hypothesis import strategies as st

from shim.filters import (
    And,
    Column,
    CompareOp,
    Comparison,
    Expr,
    InList,
    IsNull,
    Literal,
    Not,
    Or,
    bind,
    evaluate_on_partition,
    parse_filter,
    to_arrow_expression,
)

OPS = list(CompareOp)


def trees(leaves: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.builds(And, children, children),
            st.builds(Or, children, children),
            st.builds(Not, children),
        ),
        max_leaves=8,
    )


# Round trip: any names and any literal the grammar can express.

offsets = st.integers(-14 * 60, 14 * 60).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))
any_literal = st.one_of(
    st.text(),
    st.integers(),
    st.booleans(),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.floats(allow_nan=False, allow_infinity=False),
    st.dates(),
    st.datetimes(),
    st.datetimes(timezones=offsets),
).map(Literal)
any_column = st.lists(st.text(min_size=1), min_size=1, max_size=3).map(lambda parts: Column(tuple(parts)))
any_leaf: st.SearchStrategy[Expr] = st.one_of(
    st.builds(Comparison, st.sampled_from(OPS), any_column, any_literal),
    st.builds(InList, any_column, st.lists(any_literal, min_size=1, max_size=4).map(tuple), st.booleans()),
    st.builds(IsNull, any_column, st.booleans()),
)


@given(trees(any_leaf))
@settings(max_examples=400, deadline=None, database=None)
def test_str_then_parse_filter_gives_equal_expr(expr: Expr) -> None:
    assert parse_filter(str(expr)) == expr


# Arrow against the oracle on small random tables.

SCHEMA = pa.schema(
    [
        ("n", pa.int64()),
        ("s", pa.string()),
        ("f", pa.float64()),
        ("st", pa.struct([("x", pa.int32())])),
    ]
)
small_ints = st.integers(-2, 2)
small_texts = st.sampled_from(["a", "b", "it's"])
small_floats = st.sampled_from([-1.5, 0.0, 2.0, float("nan")])
rows = st.fixed_dictionaries(
    {
        "n": st.none() | small_ints,
        "s": st.none() | small_texts,
        "f": st.none() | small_floats,
        "st": st.none() | st.fixed_dictionaries({"x": st.none() | small_ints}),
    }
)
typed_leaf: st.SearchStrategy[Expr] = st.one_of(
    st.builds(Comparison, st.sampled_from(OPS), st.just(Column(("n",))), small_ints.map(Literal)),
    st.builds(Comparison, st.sampled_from(OPS), st.just(Column(("s",))), small_texts.map(Literal)),
    st.builds(
        Comparison,
        st.sampled_from(OPS),
        st.just(Column(("f",))),
        st.sampled_from([-1.5, 0.0, 2.0]).map(Literal),
    ),
    st.builds(Comparison, st.sampled_from(OPS), st.just(Column(("st", "x"))), small_ints.map(Literal)),
    st.builds(
        InList,
        st.just(Column(("n",))),
        st.lists(small_ints.map(Literal), min_size=1, max_size=3).map(tuple),
        st.booleans(),
    ),
    st.builds(
        InList,
        st.just(Column(("s",))),
        st.lists(small_texts.map(Literal), min_size=1, max_size=3).map(tuple),
        st.booleans(),
    ),
    st.builds(
        IsNull,
        st.sampled_from([Column(("n",)), Column(("s",)), Column(("st",)), Column(("st", "x"))]),
        st.booleans(),
    ),
)


@given(trees(typed_leaf), st.lists(rows, min_size=1, max_size=8))
@settings(max_examples=300, deadline=None, database=None)
def test_to_arrow_expression_agrees_with_oracle_on_every_row(
    expr: Expr, table_rows: list[dict[str, Any]]
) -> None:
    bound = bind(expr, SCHEMA)
    table = pa.Table.from_pylist(table_rows, schema=SCHEMA)
    got = ds.dataset(table).to_table(columns={"r": to_arrow_expression(bound)}).column("r").to_pylist()
    assert got == [oracle(bound, row) for row in table.to_pylist()]


# Partition pruning is sound: a partition it rejects holds no matching row.

partition_leaf: st.SearchStrategy[Expr] = st.one_of(
    st.builds(
        Comparison,
        st.sampled_from(OPS),
        st.sampled_from([Column((c,)) for c in "pqx"]),
        small_ints.map(Literal),
    ),
    st.builds(
        InList,
        st.sampled_from([Column((c,)) for c in "pqx"]),
        st.lists(small_ints.map(Literal), min_size=1, max_size=3).map(tuple),
        st.booleans(),
    ),
    st.builds(IsNull, st.sampled_from([Column((c,)) for c in "pqx"]), st.booleans()),
)
values_or_null = st.none() | small_ints


@given(
    trees(partition_leaf),
    st.fixed_dictionaries({"p": values_or_null, "q": values_or_null, "x": values_or_null}),
    st.sets(st.sampled_from("pqx")),
)
@settings(max_examples=500, deadline=None, database=None)
def test_evaluate_on_partition_never_prunes_a_matching_row(
    expr: Expr, row: dict[str, Any], known: set[str]
) -> None:
    values = {name: row[name] for name in known}
    if oracle(expr, row) is True:
        assert evaluate_on_partition(expr, values)
    if known == {"p", "q", "x"}:
        assert evaluate_on_partition(expr, values) == (oracle(expr, row) is True)


def test_str_then_parse_filter_negative_offset_and_negative_zero_decimal_round_trip() -> None:
    expr = Comparison(
        CompareOp.EQ,
        Column(("a",)),
        Literal(dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(minutes=-90)))),
    )
    assert parse_filter(str(expr)) == expr
    assert parse_filter(
        str(Comparison(CompareOp.EQ, Column(("a",)), Literal(Decimal("-0E-5"))))
    ) == Comparison(CompareOp.EQ, Column(("a",)), Literal(Decimal("-0E-5")))
