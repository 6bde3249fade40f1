from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from filter_oracle import oracle

from shim.filters import Expr, InList, Literal, bind, parse_filter, to_arrow_expression

UTC = dt.UTC
ROWS: list[dict[str, Any]] = [
    {"city": "sf", "fare": 12.5, "n": 1, "price": Decimal("10.50"), "d": dt.date(2024, 1, 1),
     "ts": dt.datetime(2024, 1, 1, 10, tzinfo=UTC), "flag": True, "cat": "x", "address": {"zip": "94107", "lat": 37.7}},
    {"city": "la", "fare": 8.0, "n": 2, "price": Decimal("3.00"), "d": dt.date(2024, 1, 31),
     "ts": dt.datetime(2024, 1, 31, 23, 59, 59, 500000, tzinfo=UTC), "flag": False, "cat": "y",
     "address": {"zip": None, "lat": 34.0}},
    {"city": None, "fare": None, "n": None, "price": None, "d": None, "ts": None, "flag": None, "cat": None,
     "address": None},
    {"city": "ny", "fare": float("nan"), "n": 3, "price": Decimal("10.56"), "d": dt.date(2023, 12, 31),
     "ts": dt.datetime(2023, 12, 31, tzinfo=UTC), "flag": True, "cat": None, "address": {"zip": "10001", "lat": None}},
    {"city": "sf", "fare": 10.5, "n": None, "price": Decimal("0.01"), "d": dt.date(2024, 2, 1),
     "ts": dt.datetime(2024, 2, 1, tzinfo=UTC), "flag": None, "cat": "x", "address": {"zip": "94110", "lat": 37.8}},
    {"city": "it's", "fare": -1.0, "n": -5, "price": Decimal("-2.00"), "d": dt.date(2024, 1, 15),
     "ts": dt.datetime(2024, 1, 15, 12, tzinfo=UTC), "flag": False, "cat": "z", "address": {"zip": None, "lat": None}},
]  # fmt: skip
SCHEMA = pa.schema(
    [
        ("id", pa.int32()),
        ("city", pa.string()),
        ("fare", pa.float64()),
        ("n", pa.int64()),
        ("price", pa.decimal128(10, 2)),
        ("d", pa.date32()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("flag", pa.bool_()),
        ("cat", pa.dictionary(pa.int32(), pa.string())),
        ("address", pa.struct([("zip", pa.string()), ("lat", pa.float64())])),
    ]
)
TABLE = pa.Table.from_pylist([{"id": i, **row} for i, row in enumerate(ROWS)], schema=SCHEMA)


def arrow_truths(table: pa.Table, expr: Expr) -> list[bool | None]:
    projected = ds.dataset(table).to_table(columns={"r": to_arrow_expression(expr)})
    return projected.column("r").to_pylist()


FILTERS = [
    "city = 'sf'",
    "city != 'sf'",
    "NOT city = 'sf'",
    "NOT city != 'sf'",
    "city = 'it''s'",
    "fare > 10",
    "fare <= 10.5",
    "NOT fare > 10",
    "fare > 10 OR city = 'la'",
    "fare > 10 OR city IS NULL",
    "NOT (fare > 10 OR city = 'la')",
    "NOT (fare > 10 AND n > 0)",
    "fare != 8",
    "n IN (1, 3)",
    "n NOT IN (1, 3)",
    "NOT n IN (1, 3)",
    "NOT n NOT IN (1, 3)",
    "n IN (1) OR n IS NULL",
    "10 < fare",
    "price > 10.5",
    "price > 10.555",
    "price IN (10.5, 3)",
    "price NOT IN (10.555, 3)",
    "d >= '2024-01-01' AND d < DATE '2024-02-01'",
    "NOT (d >= '2024-01-01')",
    "ts > '2024-01-31 23:59:59'",
    "ts >= TIMESTAMP '2024-01-31 23:59:59.5'",
    "ts < '2024-01-01 05:00:00-05:00'",
    "flag = TRUE",
    "flag != FALSE OR city = 'ny'",
    "cat = 'x'",
    "cat IN ('x', 'z')",
    "cat NOT IN ('x')",
    "NOT cat IN ('x')",
    "address.zip = '94107'",
    "address.zip IS NULL",
    "address IS NULL",
    "address.lat > 35 OR address.zip IS NOT NULL",
    "NOT (address.lat > 35)",
    "city IS NOT NULL AND NOT n IS NULL",
]


@pytest.mark.parametrize("text", FILTERS)
def test_to_arrow_expression_matches_sql_oracle_row_by_row(text: str) -> None:
    expr = bind(parse_filter(text), SCHEMA)
    expected = [oracle(expr, row) for row in TABLE.to_pylist()]
    assert arrow_truths(TABLE, expr) == expected
    kept = TABLE.filter(to_arrow_expression(expr)).column("id").to_pylist()
    assert kept == [i for i, truth in enumerate(expected) if truth is True]


def test_to_arrow_expression_not_of_null_comparison_drops_row() -> None:
    expr = bind(parse_filter("NOT fare > 10"), SCHEMA)
    assert arrow_truths(TABLE, expr) == [False, True, None, True, False, True]
    assert TABLE.filter(to_arrow_expression(expr)).column("id").to_pylist() == [1, 3, 5]


def test_to_arrow_expression_not_in_with_null_input_is_null_not_true() -> None:
    expr = bind(parse_filter("NOT n IN (1, 3)"), SCHEMA)
    assert arrow_truths(TABLE, expr) == [False, True, None, False, None, True]
    negated = bind(parse_filter("n NOT IN (1, 3)"), SCHEMA)
    assert arrow_truths(TABLE, negated) == [False, True, None, False, None, True]


def test_to_arrow_expression_or_with_null_side_is_true_when_other_side_true() -> None:
    expr = bind(parse_filter("fare > 100 OR city = 'sf'"), SCHEMA)
    assert arrow_truths(TABLE, expr) == [True, False, None, False, True, False]


def test_to_arrow_expression_nan_follows_ieee_comparisons() -> None:
    # Arrow compares NaN like IEEE floats (never equal, never ordered); NOT keeps that row.
    assert arrow_truths(TABLE, bind(parse_filter("fare > 0"), SCHEMA))[3] is False
    assert arrow_truths(TABLE, bind(parse_filter("NOT fare > 0"), SCHEMA))[3] is True
    assert arrow_truths(TABLE, bind(parse_filter("fare != 1"), SCHEMA))[3] is True


def test_to_arrow_expression_mixed_in_list_types_use_equalities() -> None:
    expr = bind(parse_filter("price IN (10.555, 3)"), SCHEMA)
    assert isinstance(expr, InList)
    assert {v.arrow_type for v in expr.values} == {pa.decimal128(11, 3), pa.decimal128(10, 2)}
    assert arrow_truths(TABLE, expr) == [False, True, None, False, False, False]


def test_to_arrow_expression_unbound_literals_are_inferred() -> None:
    expr = parse_filter("city = 'sf' AND n IN (1, 2)")
    assert TABLE.filter(to_arrow_expression(expr)).column("id").to_pylist() == [0]


def test_to_arrow_expression_as_dataset_filter_prunes_row_groups(tmp_path: Path) -> None:
    table = pa.table({"x": pa.array(list(range(100)) + [None] * 10, pa.int64())})
    path = tmp_path / "rg.parquet"
    pq.write_table(table, path, row_group_size=10)
    fragment = next(ds.dataset(path).get_fragments())
    schema = table.schema
    for text, groups, rows in [
        ("x IN (15, 55)", 2, 2),
        ("x NOT IN (15, 55)", 10, 98),
        ("NOT x > 20", 3, 21),
        ("x > 95 OR x < 3", 2, 7),
        ("x IS NULL", 1, 10),
    ]:
        arrow = to_arrow_expression(bind(parse_filter(text), schema))
        assert len(fragment.subset(arrow).row_groups) == groups, text
        assert ds.dataset(path).to_table(filter=arrow).num_rows == rows, text
        assert table.filter(arrow).num_rows == rows, text


def test_to_arrow_expression_on_parquet_dataset_matches_table_filter(tmp_path: Path) -> None:
    pq.write_table(TABLE, tmp_path / "t.parquet", row_group_size=2)
    dataset = ds.dataset(tmp_path / "t.parquet")
    for text in FILTERS:
        arrow = to_arrow_expression(bind(parse_filter(text), dataset.schema))
        got = dataset.to_table(filter=arrow).column("id").to_pylist()
        assert got == TABLE.filter(arrow).column("id").to_pylist(), text


def test_to_arrow_expression_literal_types_are_the_bound_types() -> None:
    expr = bind(parse_filter("price > 10.5"), SCHEMA)
    assert str(to_arrow_expression(expr)) == "(price > 10.50)"
    assert Literal(Decimal("10.5"), pa.decimal128(10, 2)) == expr.literal  # type: ignore[union-attr]
