"""A column the writing instant's InternalSchema has but the file itself lacks reads as null, as
Hudi rewrites each record into the query schema (Hudi 1.2's MERGE INTO adds a source column to
the table schema, then writes log blocks without it)."""

from __future__ import annotations

import pyarrow as pa

from shim.planning.resolvers import IdResolver
from shim.schema import internal_from_arrow

TABLE = pa.schema([("id", pa.int32()), ("name", pa.string()), ("op", pa.string())])


def test_a_column_of_the_instant_schema_missing_from_the_file_reads_null():
    schema = internal_from_arrow(TABLE, version_id=7)
    resolver = IdResolver(schema, lambda instant: schema)
    file_schema = pa.schema([("id", pa.int32()), ("name", pa.string())])
    plan = resolver.plan(instant="7", file_schema=file_schema, columns=["id", "name", "op"], path="f.log@0")
    assert plan.read_columns == ("id", "name")
    batch = plan.apply(pa.record_batch([pa.array([1, 2], pa.int32()), pa.array(["a", "b"])], schema=file_schema))
    assert batch.to_pylist() == [{"id": 1, "name": "a", "op": None}, {"id": 2, "name": "b", "op": None}]
    # A file that has the column reads it (the plans are cached apart).
    full = resolver.plan(instant="7", file_schema=TABLE, columns=["op"], path="g.log@0")
    assert full.read_columns == ("op",)
