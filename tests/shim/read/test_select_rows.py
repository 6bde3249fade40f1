"""Row selection by a boolean mask, column by column (the snapshot merge's remembered row mask)."""

from __future__ import annotations

import decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shim.read.base_files import select_rows

MASK = pa.array([True, False, True, True, False, True])


def _batch() -> pa.RecordBatch:
    return pa.record_batch({
        "d": pa.array([1.5, 2.5, 3.5, 4.5, 5.5, 6.5]),
        "s": pa.array(["a", "b", None, "d", "e", "f"]),
        "b": pa.array([True, False, True, False, True, False]),
        "dec": pa.array([decimal.Decimal(i) for i in range(6)], pa.decimal128(10, 2)),
        "st": pa.array([{"x": i} for i in range(6)]),
        "l": pa.array([[i] for i in range(6)]),
        "dict": pa.array(["p", "q", "p", "q", "p", "q"]).dictionary_encode(),
    })


def test_selected_rows_equal_arrow_filter() -> None:
    batch = _batch()
    assert select_rows(batch, MASK).equals(batch.filter(MASK))
    assert select_rows(batch, MASK).column("s").to_pylist() == ["a", None, "d", "f"]


def test_columns_read_from_parquet_keep_their_values_and_nulls(tmp_path: pytest.TempPathFactory) -> None:
    path = f"{tmp_path}/f.parquet"
    pq.write_table(pa.Table.from_batches([_batch()]), path)
    read = pq.read_table(path).to_batches()[0]
    assert read.column("d").buffers()[0] is not None  # Parquet attaches a validity bitmap: the case at hand
    selected = select_rows(read, MASK)
    assert selected.equals(read.filter(MASK))
    assert selected.column("d").null_count == 0 and selected.column("s").null_count == 1


def test_sliced_columns_and_masks() -> None:
    batch = _batch()
    long_mask = pa.array([False, True] * 6)
    sliced = batch.slice(2, 4)
    assert select_rows(sliced, long_mask.slice(3, 4)).equals(sliced.filter(long_mask.slice(3, 4)))
    assert select_rows(sliced, long_mask.slice(3, 4)).column("d").to_pylist() == [3.5, 5.5]


def test_extension_columns_keep_their_type():
    uuids = pa.record_batch({"u": pa.array([bytes([i]) * 16 for i in range(6)], pa.uuid())})
    assert select_rows(uuids, MASK).equals(uuids.filter(MASK))
    assert select_rows(uuids, MASK).column("u").type == pa.uuid()
