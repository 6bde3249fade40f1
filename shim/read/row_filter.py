"""A scan's row filter, bound to the table: evaluated exactly after merging, used to prune
partitions and pushed into Parquet reads where that is exact.

Filters come as shim expressions (parsed text, `Expr`, tuples) or as `pyarrow.compute.Expression`
(what DuckDB pushes down). The latter are translated into shim expressions through Substrait when
every part has a counterpart, so they prune and push down term by term; otherwise they are kept
as they are and their columns found by binding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, reduce

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from shim.errors import HudiShimError, InvalidFilterError
from shim.filters import (
    Expr,
    and_all,
    bind,
    conjuncts,
    evaluate_on_partition,
    referenced_columns,
    to_arrow_expression,
)
from shim.filters.partition import ValueRange
from shim.filters.substrait import conjuncts_from_substrait

_PRUNING_FS = pafs.LocalFileSystem()


@dataclass(frozen=True, slots=True)
class RowFilter:
    """A filter bound to the table's full schema.

    Attributes:
        expression: what rows must satisfy (SQL semantics: null is not true).
        expr: the shim expression it came from, when it did.
        columns: top-level columns it references.
    """

    expression: pc.Expression
    expr: Expr | None
    columns: frozenset[str]

    @classmethod
    def bind(cls, value: Expr | pc.Expression, schema: pa.Schema) -> RowFilter:
        """Check the filter against `schema` (columns exist, literals fit their types)."""
        if isinstance(value, pc.Expression):
            translated = _as_shim_expression(value, schema)
            try:
                if translated is not None:
                    return cls.bind(translated, schema)
            except InvalidFilterError:
                pass  # a literal Arrow casts implicitly but the shim's stricter binding does not
            return cls(value, None, frozenset(_referenced_by_binding(value, schema)))
        bound = bind(value, schema)
        return cls(to_arrow_expression(bound), bound, frozenset(referenced_columns(bound)))

    def pushdown(self, passthrough: Mapping[str, str], schema: pa.Schema) -> pc.Expression | None:
        """The part of the filter that holds on a file's own values (columns read unchanged).

        Args:
            passthrough: query column -> file column, for columns the file plan copies unchanged.
            schema: the query types of those columns.
        """
        exact = {query for query, source in passthrough.items() if query == source}
        if self.expr is not None:
            pushed = [c for c in conjuncts(self.expr) if referenced_columns(c) <= exact]
            return reduce(lambda a, b: a & b, (to_arrow_expression(c) for c in pushed)) if pushed else None
        return self.expression if self.columns <= exact else None

    def without_terms_true_in(self, partitions: Sequence[Mapping[str, object] | None]) -> RowFilter | None:
        """This filter without the terms that hold on every row of the given partitions.

        Args:
            partitions: for each partition read, the column values its path guarantees (None:
                nothing known).
        """
        if self.expr is None or not partitions or any(p is None for p in partitions):
            return self
        known = [p for p in partitions if p is not None]
        kept = []
        for term in conjuncts(self.expr):
            names = referenced_columns(term)
            if all(names <= set(p) and evaluate_on_partition(term, p) for p in known):
                continue
            kept.append(term)
        if len(kept) == len(conjuncts(self.expr)):
            return self
        remaining = and_all(kept)
        if remaining is None:
            return None
        return RowFilter(to_arrow_expression(remaining), remaining, frozenset(referenced_columns(remaining)))

    def partitions_to_read(
        self, partitions: Sequence[str], values: Sequence[Mapping[str, object] | None], schema: pa.Schema
    ) -> list[str]:
        """The partitions that may hold matching rows, given each one's typed column values
        (None: values unknown, always read)."""
        if self.expr is not None:
            return [p for p, v in zip(partitions, values) if v is None or evaluate_on_partition(self.expr, v)]
        return _prune_with_arrow(self.expression, partitions, values, schema)


def _as_shim_expression(expression: pc.Expression, schema: pa.Schema) -> Expr | None:
    """The same filter as a shim expression, when each of its AND terms has one."""
    try:
        return _translated(bytes(expression.to_substrait(schema)))
    except (pa.ArrowException, HudiShimError, ValueError):
        return None


@lru_cache(maxsize=256)
def _translated(substrait: bytes) -> Expr | None:
    """Decoded once per distinct message: engines send the same filters again and again."""
    terms = conjuncts_from_substrait(substrait)
    if not terms or any(term is None for term in terms):
        return None
    return and_all([t for t in terms if t is not None])


def _referenced_by_binding(expression: pc.Expression, schema: pa.Schema) -> set[str]:
    """Top-level columns an Arrow expression needs: the smallest set it binds against."""
    empty = schema.empty_table()
    try:
        empty.filter(expression)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError) as exc:
        raise InvalidFilterError(f"filter {expression} does not fit the table: {exc}") from exc
    needed = set(schema.names)
    for name in schema.names:
        trial = [n for n in needed if n != name]
        try:
            empty.select(trial).filter(expression)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError):
            continue
        needed.discard(name)
    return needed


def _prune_with_arrow(
    expression: pc.Expression,
    partitions: Sequence[str],
    values: Sequence[Mapping[str, object] | None],
    schema: pa.Schema,
) -> list[str]:
    """Arrow's own partition-expression simplification decides (files are never opened)."""
    kept = [p for p, v in zip(partitions, values) if v is None]
    known = [(p, v) for p, v in zip(partitions, values) if v is not None]
    if not known:
        return kept
    guarantees = [_guarantee(v) for _, v in known]
    fake = ds.FileSystemDataset.from_paths(
        [f"/{i}" for i in range(len(known))], schema=schema, format=ds.ParquetFileFormat(),
        filesystem=_PRUNING_FS, partitions=guarantees,
    )
    try:
        chosen = {fragment.path for fragment in fake.get_fragments(filter=expression)}
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return list(partitions)
    kept += [p for i, (p, _) in enumerate(known) if f"/{i}" in chosen]
    order = {p: i for i, p in enumerate(partitions)}
    return sorted(kept, key=order.__getitem__)


def _guarantee(values: Mapping[str, object]) -> pc.Expression:
    terms = [_known(name, value) for name, value in values.items()]
    return reduce(lambda a, b: a & b, terms) if terms else pc.scalar(True)


def _known(name: str, value: object) -> pc.Expression:
    field = pc.field(name)
    if value is None:
        return field.is_null()
    if isinstance(value, ValueRange):
        within = (field >= pc.scalar(value.low)) & (field <= pc.scalar(value.high))
        return within | field.is_null() if value.nullable else within
    return field == pc.scalar(value)
