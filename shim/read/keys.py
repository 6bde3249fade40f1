"""Record keys of rows read for merging: `_hoodie_record_key`, or virtual keys from the key fields."""

from __future__ import annotations

import pyarrow as pa

from shim.errors import CorruptFileError
from shim.keys.keygen import record_keys as build_keys
from shim.read.merge_keys import RECORD_KEY, MergeSpec


def record_keys(batch: pa.RecordBatch, spec: MergeSpec, path: str, offset: int | None = None) -> pa.Array:
    """String record key of every row of `batch` (which holds the spec's merge columns), read from
    the file `path` (the log block at `offset`, for log records).

    With meta columns populated this is `_hoodie_record_key`; otherwise the key is built from the
    key fields as Hudi's key generators build it.

    Raises:
        CorruptFileError: a row has no key, naming the file (and block).
    """
    if not spec.key_fields:
        keys = batch.column(RECORD_KEY)
        missing = RECORD_KEY
    else:
        keys = build_keys({name: batch.column(name) for name in spec.key_fields}, spec.key_fields)
        missing = spec.key_fields[0]
    if keys.null_count:
        where = path if offset is None else f"{path}: log block at byte offset {offset}"
        raise CorruptFileError(
            f"{where}: {keys.null_count} record(s) without a record key ({missing} is null)",
            path=path,
            offset=offset,
            column=missing,
        )
    return keys
