"""Spark reads through the shim: one input partition per file slice, filters pushed down.

Planning (`partitions`) fixes the read instant and the file slices; every task reads its slice
with the shim's merge (snapshot), base files only (read_optimized) or the commits in a window
(incremental), with schemas reconciled by column id. Filters Spark pushes (comparisons, IN,
IS [NOT] NULL, NOT of those) are evaluated by the shim exactly, after merging, so Spark does not
evaluate them again; string-pattern and null-safe filters are left to Spark.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSourceReader,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
)
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType

import shim
from shim import FileSlice
from shim.errors import InvalidArgumentError
from shim.filters.expr import Column, CompareOp, Comparison, Expr, InList, Literal, and_all
from shim.filters.expr import IsNull as ExprIsNull
from shim.filters.expr import Not as ExprNot
from shim.scan_options import METADATA_ENABLE, metadata_option
from shim.table import Table, open_table
from shim.write.option_values import text

QUERY_TYPE = "hoodie.datasource.query.type"
BEGIN_INSTANT = "hoodie.datasource.read.begin.instanttime"
END_INSTANT = "hoodie.datasource.read.end.instanttime"
AS_OF_INSTANT = "as.of.instant"


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """A Spark read: the query type, its instants, and whether the metadata table lists and
    prunes (`hoodie.metadata.enable`)."""

    query_type: str
    begin: str | None = None
    end: str | None = None
    as_of: str | None = None
    metadata: bool = True

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> ReadOptions:
        query = (text(options, QUERY_TYPE, "snapshot") or "snapshot").lower()
        if query not in ("snapshot", "read_optimized", "incremental"):
            raise InvalidArgumentError(f"{QUERY_TYPE}={query!r}: use snapshot, read_optimized or incremental")
        begin = text(options, BEGIN_INSTANT)
        if query == "incremental" and begin is None:
            raise InvalidArgumentError(f"an incremental query needs {BEGIN_INSTANT}")
        enable = text(options, METADATA_ENABLE)
        metadata = metadata_option({METADATA_ENABLE: enable} if enable is not None else None)
        return cls(query, begin, text(options, END_INSTANT), text(options, AS_OF_INSTANT), metadata)


_COMPARISONS = {
    EqualTo: CompareOp.EQ,
    GreaterThan: CompareOp.GT,
    GreaterThanOrEqual: CompareOp.GE,
    LessThan: CompareOp.LT,
    LessThanOrEqual: CompareOp.LE,
}
_LITERALS = (str, bool, int, float, Decimal, dt.date)


def _plain(field: pa.Field) -> pa.Field:
    return pa.field(field.name, field.type, field.nullable)


def table_arrow_schema(path: str, options: Mapping[str, str]) -> pa.Schema:
    """The table's columns as a read returns them: meta columns, then data columns in table order."""
    scan = _build(open_table(path), ReadOptions.parse(options), plan_files=False)
    return pa.schema([_plain(f) for f in scan.output_schema])


def spark_schema(path: str, options: Mapping[str, str]) -> StructType:
    """The Spark schema of a read (timestamps with a zone are TimestampType)."""
    return from_arrow_schema(table_arrow_schema(path, options), prefer_timestamp_ntz=True)


def _build(table: Table, read: ReadOptions, *, plan_files: bool, row_filter: Expr | None = None,
           as_of: str | None = None) -> shim.Scan:
    if read.query_type == "incremental":
        assert read.begin is not None
        return table.plan(shim.ScanOptions(include_meta=True, filter=row_filter, changes=(read.begin, read.end),
                                           metadata=read.metadata), files=plan_files)
    mode = "read_optimized" if read.query_type == "read_optimized" else "snapshot"
    return table.plan(shim.ScanOptions(mode=mode, include_meta=True, filter=row_filter, as_of=as_of or read.as_of,
                                       metadata=read.metadata), files=plan_files)


class SlicePartition(InputPartition):
    """One file slice to read, with the read instant fixed at planning."""

    def __init__(self, file_slice: FileSlice | None, read_instant: str | None) -> None:
        super().__init__(file_slice)
        self.file_slice = file_slice
        self.read_instant = read_instant


def to_expr(spark_filter: Filter) -> Expr | None:
    """The shim filter equal to a Spark filter, or None when it is not pushed."""
    if isinstance(spark_filter, Not):
        child = to_expr(spark_filter.child)
        return None if child is None else ExprNot(child)
    attribute = getattr(spark_filter, "attribute", None)
    if not attribute or not all(isinstance(p, str) for p in attribute):
        return None
    column = Column(tuple(attribute))
    op = _COMPARISONS.get(type(spark_filter))
    if op is not None:
        value = spark_filter.value  # type: ignore[attr-defined]
        if not isinstance(value, _LITERALS) or isinstance(value, dt.datetime):
            return None
        return Comparison(op, column, Literal(value))
    if isinstance(spark_filter, In):
        values = spark_filter.value
        if not values or not all(isinstance(v, _LITERALS) and not isinstance(v, dt.datetime) for v in values):
            return None
        return InList(column, tuple(Literal(v) for v in values))
    if isinstance(spark_filter, IsNull):
        return ExprIsNull(column)
    if isinstance(spark_filter, IsNotNull):
        return ExprIsNull(column, negated=True)
    return None


class HudiShimReader(DataSourceReader):
    """Plans file slices and reads one per task."""

    def __init__(self, path: str, options: Mapping[str, str], schema: StructType) -> None:
        self.path = path
        self.options = dict(options)
        self.schema = schema
        self.filters: list[Expr] = []

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        for spark_filter in filters:
            expr = to_expr(spark_filter)
            if expr is None:
                yield spark_filter
            else:
                self.filters.append(expr)

    def _row_filter(self) -> Expr | None:
        return and_all(self.filters)

    def partitions(self) -> Sequence[InputPartition]:
        scan = _build(open_table(self.path), ReadOptions.parse(self.options), plan_files=True,
                      row_filter=self._row_filter())
        if not scan.slices:
            return [SlicePartition(None, scan.read_instant)]
        return [SlicePartition(s, scan.read_instant) for s in scan.slices]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, SlicePartition)
        if partition.file_slice is None:
            return
        read = ReadOptions.parse(self.options)
        as_of = partition.read_instant if read.query_type != "incremental" else None
        scan = _build(open_table(self.path), read, plan_files=False, row_filter=self._row_filter(), as_of=as_of)
        target = to_arrow_schema(self.schema, timezone="UTC")
        names = target.names
        sliced = dataclasses.replace(scan, slices=[partition.file_slice])
        for batch in sliced.reader():
            columns = [batch.column(name).cast(target.field(name).type) for name in names]
            yield pa.RecordBatch.from_arrays(columns, schema=target)
