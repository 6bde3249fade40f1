"""Filters bound to the schema of Parquet files written by Apache Hudi, checked against the oracle."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from filter_oracle import oracle

from shim.errors import InvalidFilterError
from shim.filters import bind, to_arrow_expression, to_expr
from tests.conftest import shared_tables_dir

SHARED = shared_tables_dir() or Path("/nonexistent/shared/hudi-tables")
pytestmark = [
    pytest.mark.shared,
    pytest.mark.skipif(not SHARED.exists(), reason="needs ../shared/hudi-tables (real Hudi tables)"),
]

FILTERS = [  # (filter, rows kept among the 6 rows of all base files)
    ("decimalField >= 12345.6789 AND decimalField <= 65432.12345", 3),
    ("timestampField >= '2023-04-03 00:00:00' OR dateField = '2023-04-01'", 5),
    ("timestampField < TIMESTAMP '2023-04-03 15:00:00-04:00'", 3),
    ("NOT (byteField IN (10, 30) OR isActive = TRUE)", 1),
    ("structField.child_struct.child_field1 > 456.789 OR structField.field1 IS NULL", 2),
    ("binaryField = 'binary data'", 2),
    ("floatField > 1.5 AND longField != 987654321", 3),
    ("mapField IS NOT NULL AND name NOT IN ('Bob')", 5),
]


@pytest.fixture(scope="module")
def base_files(tmp_path_factory: pytest.TempPathFactory) -> ds.Dataset:
    root = tmp_path_factory.mktemp("cow")
    with zipfile.ZipFile(SHARED / "sample__cow__v6_simplekeygen_nonhivestyle.zip") as archive:
        archive.extractall(root)
    files = sorted(str(p) for p in root.rglob("*.parquet") if "MACOSX" not in str(p))
    assert files
    return ds.dataset(files)


@pytest.mark.parametrize(("text", "count"), FILTERS)
def test_to_arrow_expression_on_hudi_base_files_matches_oracle(
    base_files: ds.Dataset, text: str, count: int
) -> None:
    expr = bind(to_expr(text), base_files.schema)  # type: ignore[arg-type]
    rows = base_files.to_table().to_pylist()
    expected = sorted(row["_hoodie_commit_seqno"] for row in rows if oracle(expr, row) is True)
    got = base_files.to_table(filter=to_arrow_expression(expr)).column("_hoodie_commit_seqno").to_pylist()
    assert sorted(got) == expected
    assert len(got) == count


def test_bind_on_hudi_array_column_comparison_raises(base_files: ds.Dataset) -> None:
    with pytest.raises(InvalidFilterError, match="cannot compare column arrayField \\(list<array: struct<"):
        bind(to_expr("arrayField = 'x'"), base_files.schema)  # type: ignore[arg-type]
