"""Trino and Presto read every real Hudi table in ../shared/hudi-tables (written by Apache Hudi:
table versions 6, 8 and 9, copy-on-write and merge-on-read, Avro and Parquet log blocks,
deletes, rollbacks, nested and every primitive type) through the catalog as the shim reads it,
and hudi-rs's tables with Lance base files (published written out as Parquet)."""

from __future__ import annotations

import pytest

import shim
from tests.conftest import shared_table_names
from tests.engines.trino.conftest import ORACLE_TABLES
from tests.engines.trino.test_evolved_tables import ENGINES, VIEWS, check_same
from tests.shim.read.test_lance_tables import NAMES as LANCE_NAMES

pytestmark = pytest.mark.shared


@pytest.mark.parametrize("flavor", ENGINES)
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("name", shared_table_names())
def test_real_table_reads_as_the_shim_reads_it(stack, flavor, view, name):
    expected = shim.open_table(str(stack.warehouse / "real" / name)).read(mode=view)
    assert expected.num_rows > 0
    check_same(stack, flavor, f'SELECT * FROM hudi."default"."real_{name}{VIEWS[view]}"', expected)


@pytest.mark.hudi_oracle
@pytest.mark.parametrize("flavor", ENGINES)
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("name", ORACLE_TABLES)
def test_tables_hudi_wrote_read_as_the_shim_reads_them(stack, flavor, view, name):
    """MERGE INTO ... UPDATE SET of some columns (partial-update log blocks, record positions);
    changelog operations, bucket indexes, concurrent writers (`ORACLE_TABLES`)."""
    expected = shim.open_table(str(stack.warehouse / "oracle" / name)).read(mode=view)
    assert expected.num_rows > 0
    check_same(stack, flavor, f'SELECT * FROM hudi."default"."oracle_{name}{VIEWS[view]}"', expected)


@pytest.mark.parametrize("flavor", ENGINES)
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("name", LANCE_NAMES)
def test_lance_table_reads_as_the_shim_reads_it(stack, flavor, view, name):
    path = stack.warehouse / "lance" / name
    if not path.exists():
        pytest.skip("hudi-rs's Lance tables are not there (pylance or the package index missing)")
    expected = shim.open_table(str(path)).read(mode=view)
    assert expected.num_rows > 0
    check_same(stack, flavor, f'SELECT * FROM hudi."default"."lance_{name}{VIEWS[view]}"', expected)
