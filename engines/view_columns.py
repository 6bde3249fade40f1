"""DuckDB views whose table changed shape after they were registered: their columns found by id.

A view keeps the schema its table had when `engines.duckdb.connect` registered it (DuckDB binds
queries against it). When the table evolves afterwards, a view column is looked up by its column
id in the table's current schema: a renamed column keeps its data, a dropped one reads null, a
widened one is cast back to the view's type when every value fits. Registering the views again
(`connect(..., connection=con)`) shows the new shape.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from shim.errors import SchemaEvolutionError
from shim.schema import arrow_field_id

REFRESH_HINT = "register the views again: engines.duckdb.connect(..., connection=con)"


def same_columns(actual: pa.Schema, expected: pa.Schema) -> bool:
    """Whether `actual` holds `expected`'s columns: the same names with the same column ids."""
    return actual.names == expected.names and all(
        arrow_field_id(a) == arrow_field_id(e) for a, e in zip(actual, expected, strict=True))


def current_names(view: pa.Schema, current: pa.Schema, columns: Sequence[str]) -> dict[str, str | None]:
    """For each view column, the name its column id has now (None: dropped since).

    A view column without an id (a table without schema-on-read) is matched by name."""
    by_id = {arrow_field_id(f): f.name for f in current if arrow_field_id(f) is not None}
    names: dict[str, str | None] = {}
    for column in columns:
        column_id = arrow_field_id(view.field(column))
        if column_id is None:
            names[column] = column if column in current.names else None
        else:
            names[column] = by_id.get(column_id)
    return names


def as_view_columns(
    reader: pa.RecordBatchReader,
    view: pa.Schema,
    names: dict[str, str | None],
    table: str,
) -> Iterator[pa.RecordBatch]:
    """The batches of `reader` (read under the current names) as the view's columns (the keys of
    `names`, in order); `reader` is closed when they end or are dropped."""
    schema = pa.schema([view.field(column) for column in names])
    with reader:
        for batch in reader:
            arrays = [
                pa.nulls(batch.num_rows, field.type) if source is None
                else fit(batch.column(source), field, table)
                for field, source in zip(schema, names.values(), strict=True)
            ]
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)


def fit(values: pa.Array, field: pa.Field, table: str) -> pa.Array:
    """`values` as the view column's type, or a clear error when they do not fit it."""
    if values.type == field.type:
        return values
    try:
        return pc.cast(values, field.type, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaEvolutionError(
            f"column {field.name!r} of table {table!r} is {field.type} in the DuckDB view but {values.type} in "
            f"the table now, and its values do not fit the view's type ({exc}); {REFRESH_HINT}",
            column=field.name,
        ) from None
