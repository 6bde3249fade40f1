"""Filters on a column read as dictionary indices, decided once per dictionary entry.

String columns Parquet stores as dictionary indices are read as dictionary arrays
(`base_files.dictionary_columns`). A filter that reads only such a column gives the same answer
for every row holding the same entry: deciding it once per entry (often hundreds) and spreading
the answers over the rows by their indices costs a fraction of decoding every row and comparing
strings, and the rows can be selected before the column is decoded. The answers come from the
same Arrow filter as row by row, so the semantics are the same (null is not true), nulls
included.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def dictionary_mask(array: pa.DictionaryArray, name: str, expression: pc.Expression) -> pa.BooleanArray:
    """Which rows of `array` (column `name`) satisfy `expression`, an expression reading that
    column only (see `only_column`), decided on the dictionary."""
    values = array.dictionary
    position = "__position" if name != "__position" else "__position_"
    entries = pa.table({name: values, position: np.arange(len(values), dtype=np.int32)})
    hits = np.zeros(len(values), dtype=bool)
    hits[entries.filter(expression).column(position).to_numpy()] = True
    mask = pa.array(hits).take(array.indices)
    if array.null_count:
        null_passes = pa.table({name: pa.nulls(1, values.type)}).filter(expression).num_rows == 1
        mask = pc.fill_null(mask, null_passes)
    return mask


def only_column(expression: pc.Expression, schema: pa.Schema) -> str | None:
    """The one column of `schema` the expression reads (binding against it alone), or None.

    Remembered per expression text and column names and types: engines send the same filters
    again and again, and a binding attempt costs a tenth of a millisecond."""
    key = (str(expression), tuple((f.name, str(f.type)) for f in schema))
    if key in _ONLY:
        return _ONLY[key]
    found = None
    for field in schema:
        try:
            pa.schema([field]).empty_table().filter(expression)
        except (pa.ArrowException, TypeError):
            continue
        found = field.name
        break
    if len(_ONLY) >= 1024:
        _ONLY.clear()
    _ONLY[key] = found
    return found


_ONLY: dict[tuple[str, tuple[tuple[str, str], ...]], str | None] = {}


def value_types(schema: pa.Schema) -> pa.Schema:
    """`schema` with dictionary-encoded columns as their value types (what filters are written against)."""
    return pa.schema([f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f for f in schema],
                     metadata=schema.metadata)


DICTIONARY_INDEX = pa.int32()
"""Index type of dictionary-encoded partition columns."""


def as_dictionary_field(field: pa.Field) -> pa.Field:
    """`field` with its type dictionary-encoded (metadata kept)."""
    if pa.types.is_dictionary(field.type):
        return field
    return field.with_type(pa.dictionary(DICTIONARY_INDEX, field.type))
