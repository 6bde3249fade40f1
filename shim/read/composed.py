"""Records a merge composes column by column (partial updates): built from decoded log records
and the base rows they overlay."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from shim.read.merge import ComposedRows


def overlaid_positions(composed: ComposedRows | None) -> np.ndarray:
    """The base rows composed records overlay, ascending (each once)."""
    if composed is None:
        return np.zeros(0, dtype=np.int64)
    return np.unique(composed.base_positions[composed.base_positions >= 0])


def compose_rows(log: pa.Table, composed: ComposedRows, base: pa.Table | None, schema: pa.Schema) -> pa.Table:
    """The composed records with the columns of `schema`: each column from the log record its
    source names, else from the base row it overlays (`base`: the rows at `overlaid_positions`,
    in that order), else null.

    Columns of `schema` missing from `log` or `base` read as null where they would come from them.
    """
    count = len(composed)
    base_row = np.full(count, -1, dtype=np.int64)
    if base is not None and len(base):
        base_row = np.searchsorted(overlaid_positions(composed), composed.base_positions)
        base_row[composed.base_positions < 0] = -1
    arrays = []
    for field in schema:
        source = composed.sources.get(field.name, np.full(count, -1, dtype=np.int64))
        from_log = log.column(field.name).combine_chunks() if field.name in log.column_names else None
        from_base = base.column(field.name).combine_chunks() if base is not None and field.name in base.column_names \
            else None
        parts, offset = [], 0
        index = np.full(count, -1, dtype=np.int64)
        if from_log is not None:
            parts.append(from_log.cast(field.type))
            index = np.where(source >= 0, source, -1)
            offset = len(from_log)
        if from_base is not None:
            parts.append(from_base.cast(field.type))
            index = np.where((source < 0) & (base_row >= 0), offset + base_row, index)
        if not parts:
            arrays.append(pa.nulls(count, field.type))
            continue
        values = pa.concat_arrays(parts) if len(parts) > 1 else parts[0]
        arrays.append(values.take(pa.array(index, mask=index < 0)))
    return pa.Table.from_arrays(arrays, schema=schema)
