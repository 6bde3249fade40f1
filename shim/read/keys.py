"""Record keys of rows: `_hoodie_record_key`, or built from the key fields like Hudi's key generators."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from shim.errors import CorruptFileError
from shim.read.merge_keys import RECORD_KEY, MergeSpec

NULL_KEY_PART = "__null__"
EMPTY_KEY_PART = "__empty__"


def record_keys(batch: pa.RecordBatch, spec: MergeSpec, location: str) -> pa.Array:
    """String record key of every row of `batch` (which holds the spec's merge columns).

    With meta columns populated this is `_hoodie_record_key`. Otherwise one key field gives its
    value as text and several give `f1:v1,f2:v2` (null parts `__null__`, empty `__empty__`), as
    Hudi's virtual-key extractor builds them.
    """
    if not spec.key_fields:
        keys = batch.column(RECORD_KEY)
        if keys.null_count:
            raise CorruptFileError(f"{location}: {keys.null_count} record(s) without {RECORD_KEY}", path=location)
        return keys
    if len(spec.key_fields) == 1:
        keys = _as_text(batch.column(spec.key_fields[0]))
        if keys.null_count:
            raise CorruptFileError(
                f"{location}: {keys.null_count} record(s) with a null record key field {spec.key_fields[0]!r}",
                path=location,
                column=spec.key_fields[0],
            )
        return keys
    parts = []
    for name in spec.key_fields:
        text = _as_text(batch.column(name))
        text = pc.if_else(pc.equal(text, ""), EMPTY_KEY_PART, text)
        parts.append(pc.binary_join_element_wise(name, pc.fill_null(text, NULL_KEY_PART), ":"))
    return pc.binary_join_element_wise(*parts, ",")


def _as_text(column: pa.Array) -> pa.Array:
    return column.cast(pa.string())
