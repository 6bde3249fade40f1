"""One Lance file read through `base_files`' entry points: rows kept by position (read whole, or
taken when few are kept), a filter on the file's columns, projections mapped by the plan, and
the row count that the merge checks a remembered slice against."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from shim.errors import CorruptFileError
from shim.planning.resolvers import NameMatchingResolver
from shim.read.base_files import base_file_rows, iter_parquet_in_order, read_file_schema, scan_parquet
from shim.schema import internal_from_arrow
from tests.local import LOCAL

lance_file = pytest.importorskip("lance.file", reason="pylance (pip install 'hudi-shim[lance]')")

ROWS = 10_000
SCHEMA = pa.schema([("key", pa.string()), ("n", pa.int64()), ("score", pa.float64())],
                   metadata={b"hoodie_min_record_key": b"k00000"})


@pytest.fixture
def path(tmp_path) -> str:
    target = str(tmp_path / "f1-0_0-1-1_20260101000000000.lance")
    data = pa.table({"key": [f"k{i:05d}" for i in range(ROWS)], "n": pa.array(range(ROWS), pa.int64()),
                     "score": [i / 7 for i in range(ROWS)]}, schema=SCHEMA)
    with lance_file.LanceFileWriter(target, SCHEMA) as writer:
        writer.write_batch(data)
    return target


def _plan(path: str, columns: list[str]):
    resolver = NameMatchingResolver(internal_from_arrow(SCHEMA.remove_metadata()))
    return resolver.plan(instant="20260101000000000", file_schema=read_file_schema(LOCAL, path).remove_metadata(),
                         columns=columns, path=path)


def _read(path: str, columns: list[str], **options) -> tuple[int, list[dict]]:
    counted, rows = 0, []
    for read, batch in iter_parquet_in_order(LOCAL, path, _plan(path, columns), batch_size=1024, **options):
        counted += read
        rows += batch.to_pylist()
    return counted, rows


@pytest.mark.parametrize("kept", [0, 3, 1_000, 5_000, ROWS])
def test_rows_kept_by_position_are_read_in_order_and_all_rows_count(path, kept):
    positions = np.sort(np.random.default_rng(kept).choice(ROWS, size=kept, replace=False))
    mask = np.zeros(ROWS, dtype=bool)
    mask[positions] = True
    counted, rows = _read(path, ["n", "key"], keep=pa.array(mask))
    assert counted == ROWS  # what the merge checks a remembered slice against
    assert rows == [{"n": int(i), "key": f"k{i:05d}"} for i in positions]


def test_filter_on_file_columns_applies_with_kept_rows(path):
    mask = np.arange(ROWS) % 2 == 0
    counted, rows = _read(path, ["key"], keep=pa.array(mask), before_plan=pc.field("n") < 10)
    assert counted == ROWS
    assert rows == [{"key": f"k{i:05d}"} for i in (0, 2, 4, 6, 8)]


def test_scan_projects_filters_and_reads_several_files(path):
    plan = _plan(path, ["score"])
    batches = list(scan_parquet(LOCAL, [path, path], read_file_schema(LOCAL, path), plan, pc.field("n") >= ROWS - 2))
    assert pa.Table.from_batches(batches).column("score").to_pylist() == [(ROWS - 2) / 7, (ROWS - 1) / 7] * 2


def test_schema_keeps_its_metadata_and_rows_are_counted(path):
    assert read_file_schema(LOCAL, path).metadata == {b"hoodie_min_record_key": b"k00000"}
    assert base_file_rows(LOCAL, path) == ROWS


def test_a_mask_of_another_length_is_refused_naming_the_file(path):
    with pytest.raises(CorruptFileError, match="holds 10000 rows but held 3 when it was merged") as info:
        _read(path, ["n"], keep=pa.array([True, False, True]))
    assert info.value.path == path
