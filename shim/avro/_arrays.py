"""Building Arrow arrays from the numpy buffers the decoder produces."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from shim.avro import _vector as vec


def empty_table(num_rows: int) -> pa.Table:
    """A table of `num_rows` rows and no columns."""
    return pa.table({"_": pa.nulls(num_rows)}).drop_columns(["_"])


def concat(parts: list[vec.I64]) -> vec.I64:
    """Concatenated int64 arrays (none: empty)."""
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def validity(valid: vec.Mask | None) -> tuple[pa.Buffer | None, int]:
    """Validity bitmap and null count of a mask (None: no nulls)."""
    if valid is None:
        return None, 0
    return pa.py_buffer(vec.validity_bitmap(valid)), int(valid.shape[0] - np.count_nonzero(valid))


def fixed_width(arrow_type: pa.DataType, values: np.ndarray, valid: vec.Mask | None) -> pa.Array:
    """Fixed-width array of `values`; with `valid`, spread over its True slots, nulls elsewhere."""
    if valid is not None:
        spread = np.zeros((valid.shape[0],) + values.shape[1:], dtype=values.dtype)
        spread[valid] = values
        values = spread
    bitmap, nulls = validity(valid)
    return pa.Array.from_buffers(arrow_type, values.shape[0], [bitmap, pa.py_buffer(values)], nulls)


def booleans(values: vec.Mask, valid: vec.Mask | None) -> pa.Array:
    """Boolean array of `values`, spread like `fixed_width`."""
    if valid is not None:
        spread = np.zeros(valid.shape[0], dtype=np.bool_)
        spread[valid] = values
        values = spread
    bitmap, nulls = validity(valid)
    data = pa.py_buffer(np.packbits(values, bitorder="little"))
    return pa.Array.from_buffers(pa.bool_(), values.shape[0], [bitmap, data], nulls)


def spread_indices(index: np.ndarray, valid: vec.Mask | None) -> pa.Array:
    """`index` as take() indices, spread over the True slots of `valid` with null indices elsewhere."""
    if valid is None:
        return pa.array(index)
    spread = np.zeros(valid.shape[0], dtype=np.int64)
    spread[valid] = index
    return pa.array(spread, mask=~valid)


def is_ascii(data: pa.Buffer | None) -> bool:
    """Whether a buffer holds only ASCII bytes."""
    # ASCII bytes are valid UTF-8 however they are split into strings.
    return data is None or memoryview(data).tobytes().isascii()


def first_invalid_utf8(array: pa.Array) -> int:
    """Index of the first element of a string array that is not UTF-8."""
    for i, value in enumerate(array.cast(pa.binary()).to_pylist()):
        if value is not None:
            try:
                value.decode("utf-8")
            except UnicodeDecodeError:
                return i
    return 0
