"""Reconcile a file's schema to the query schema by column id: `resolve` builds a ReadPlan.

Follows Hudi's `InternalSchemaMerger`, walking the query schema beside the file schema:

- same id, same name: read it, converted to the query type when that changed;
- same id, other name: renamed; read the file's name;
- id absent but the name present (under another id): dropped then re-added; reads null;
- neither: an added column; reads null.

Nested struct fields, list elements and map keys/values are matched the same way. A type
change Hudi does not allow (see `promote`) is a SchemaEvolutionError naming the column, both
types and the file. Tables that never enabled schema-on-read match by name instead:
`resolve_by_name` gives file columns the query's ids where names agree, then resolves by id.

The plan is a pure value; `shim.schema.apply.apply` executes it on Arrow data.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import pyarrow as pa

from shim.errors import SchemaEvolutionError
from shim.schema.arrow import field_to_arrow, internal_from_arrow, internal_to_arrow, type_to_arrow
from shim.schema.internal_schema import InternalSchema
from shim.schema.promote import Conversion, conversion
from shim.schema.types import ArrayType, Field, MapType, PrimitiveType, RecordType, Type
from shim.schema.visitor import PartnerAccessor, SchemaWithPartnerVisitor, visit_with_partner


class FieldStatus(Enum):
    """How a query field relates to the file."""

    SAME = "same"
    """Same id and name."""
    RENAMED = "renamed"
    """Same id, another name in the file."""
    READDED = "readded"
    """The name is in the file under another (dropped) id: reads null."""
    ADDED = "added"
    """Not in the file: reads null."""


@dataclass(frozen=True, slots=True)
class PrimitivePlan:
    """Read a primitive file column, converting `file_type` to `query_type`."""

    file_type: PrimitiveType
    query_type: PrimitiveType
    conversion: Conversion
    arrow_type: pa.DataType

    @property
    def identity(self) -> bool:
        """Whether values pass through unchanged."""
        return self.conversion is Conversion.IDENTITY


@dataclass(frozen=True, slots=True)
class StructPlan:
    """Rebuild a struct: one FieldPlan per query field, in query order."""

    fields: tuple[FieldPlan, ...]
    arrow_type: pa.DataType
    identity: bool


@dataclass(frozen=True, slots=True)
class ListPlan:
    """Convert a list's elements."""

    element: Node
    arrow_type: pa.DataType
    identity: bool


@dataclass(frozen=True, slots=True)
class MapPlan:
    """Convert a map's keys and values."""

    key: Node
    value: Node
    arrow_type: pa.DataType
    identity: bool


Node = PrimitivePlan | StructPlan | ListPlan | MapPlan


@dataclass(frozen=True, slots=True)
class FieldPlan:
    """One output field: where it comes from in the file (or null) and how it is converted."""

    field_id: int
    name: str
    status: FieldStatus
    source: str | None
    node: Node | None
    arrow_field: pa.Field

    @property
    def identity(self) -> bool:
        """Whether the field is the file's field unchanged (same name, same values)."""
        return self.status is FieldStatus.SAME and self.node is not None and self.node.identity


@dataclass(frozen=True, slots=True)
class ReadPlan:
    """How to turn a file's columns into the query schema's columns."""

    columns: tuple[FieldPlan, ...]
    schema: pa.Schema
    file_path: str | None = None

    @property
    def read_columns(self) -> tuple[str, ...]:
        """Top-level file columns to read, in output order."""
        return tuple(c.source for c in self.columns if c.source is not None)

    @property
    def identity(self) -> bool:
        """Whether every output column is a file column unchanged."""
        return all(c.identity for c in self.columns)


def resolve(query: InternalSchema, file: InternalSchema, *, file_path: str | None = None) -> ReadPlan:
    """Plan reading a file written with `file` as the (possibly projected) `query` schema.

    Raises:
        SchemaEvolutionError: a column's type changed in a way Hudi does not allow, or
            changed between nested and primitive.
    """
    root = Field(-1, "", file.record)
    visitor = _ResolveVisitor(file_path)
    plan = visit_with_partner(query.record, root, visitor, _ById())
    assert isinstance(plan, StructPlan)
    return ReadPlan(plan.fields, internal_to_arrow(query), file_path)


def resolve_by_name(
    query: InternalSchema | pa.Schema,
    file: InternalSchema | pa.Schema,
    *,
    file_path: str | None = None,
) -> ReadPlan:
    """Plan a read matching columns by name (tables without schema-on-read).

    Same name -> same column (type promoted per Hudi's rules), missing -> null. Schemas given
    as Arrow get fresh ids first.
    """
    query_schema = query if isinstance(query, InternalSchema) else internal_from_arrow(query)
    file_schema = file if isinstance(file, InternalSchema) else internal_from_arrow(file)
    return resolve(query_schema, assign_ids_by_name(file_schema, query_schema), file_path=file_path)


def assign_ids_by_name(file: InternalSchema, query: InternalSchema) -> InternalSchema:
    """`file` with the ids of same-named query fields (matched per struct, exact names).

    Unmatched file fields get fresh ids above the query's, so they match nothing.
    """
    visitor = _AssignVisitor(max(query.max_column_id, 0) + 1)
    record = visit_with_partner(file.record, Field(-1, "", query.record), visitor, _ByName())
    assert isinstance(record, RecordType)
    return InternalSchema(record, file.version_id)


class _ById(PartnerAccessor[Field]):
    def field_partner(self, partner: Field | None, field: Field) -> Field | None:
        if partner is not None and isinstance(partner.type, RecordType):
            return partner.type.field_by_id(field.id)
        return None

    def element_partner(self, partner: Field | None) -> Field | None:
        if partner is not None and isinstance(partner.type, ArrayType):
            return partner.type.element_field
        return None

    def key_partner(self, partner: Field | None) -> Field | None:
        if partner is not None and isinstance(partner.type, MapType):
            return partner.type.key_field
        return None

    def value_partner(self, partner: Field | None) -> Field | None:
        if partner is not None and isinstance(partner.type, MapType):
            return partner.type.value_field
        return None


class _ByName(_ById):
    def field_partner(self, partner: Field | None, field: Field) -> Field | None:
        if partner is not None and isinstance(partner.type, RecordType):
            return partner.type.field_by_name(field.name)
        return None


def _kind(t: Type) -> str:
    if isinstance(t, RecordType):
        return "struct"
    if isinstance(t, ArrayType):
        return "array"
    if isinstance(t, MapType):
        return "map"
    return str(t)


class _ResolveVisitor(SchemaWithPartnerVisitor[Field, "Node | FieldPlan | None"]):
    def __init__(self, file_path: str | None) -> None:
        self.file_path = file_path
        self.path: list[str] = []

    def _enter(self, field: Field, partner: Field | None) -> None:
        self.path.append(field.name)

    def _leave(self, field: Field, partner: Field | None) -> None:
        self.path.pop()

    before_field = before_element = before_key = before_value = _enter
    after_field = after_element = after_key = after_value = _leave

    def _error(self, file_type: Type, query_type: Type) -> SchemaEvolutionError:
        column = ".".join(self.path)
        where = f"file {self.file_path}" if self.file_path else "the file"
        return SchemaEvolutionError(
            f"Column '{column}' is {_kind(file_type)} in {where} but {_kind(query_type)} in the query "
            f"schema, a type change Hudi does not allow; read the column as {_kind(file_type)} "
            "(or a type Hudi promotes it to) or rewrite the file",
            path=self.file_path,
            column=column,
        )

    def _check_kind(self, query_type: Type, partner: Field) -> None:
        if type(query_type) is not type(partner.type):
            raise self._error(partner.type, query_type)

    def primitive(self, primitive: PrimitiveType, partner: Field | None) -> Node | None:
        if partner is None:
            return None
        if not isinstance(partner.type, PrimitiveType):
            raise self._error(partner.type, primitive)
        how = conversion(partner.type, primitive)
        if how is None:
            raise self._error(partner.type, primitive)
        return PrimitivePlan(partner.type, primitive, how, type_to_arrow(primitive))

    def field(self, field: Field, partner: Field | None, field_result: Node | FieldPlan | None) -> FieldPlan:
        arrow_field = field_to_arrow(field)
        if partner is None:
            return FieldPlan(field.id, field.name, FieldStatus.ADDED, None, None, arrow_field)
        assert field_result is None or not isinstance(field_result, FieldPlan)
        status = FieldStatus.SAME if partner.name == field.name else FieldStatus.RENAMED
        return FieldPlan(field.id, field.name, status, partner.name, field_result, arrow_field)

    def record(
        self, record: RecordType, partner: Field | None, field_results: list[Node | FieldPlan | None]
    ) -> Node | None:
        if partner is None:
            return None
        self._check_kind(record, partner)
        file_record = partner.type
        assert isinstance(file_record, RecordType)
        plans: list[FieldPlan] = []
        for plan in field_results:
            assert isinstance(plan, FieldPlan)
            if plan.status is FieldStatus.ADDED and file_record.field_by_name(plan.name) is not None:
                plan = FieldPlan(plan.field_id, plan.name, FieldStatus.READDED, None, None, plan.arrow_field)
            plans.append(plan)
        identity = len(plans) == len(file_record.fields) and all(
            p.identity and p.source == f.name for p, f in zip(plans, file_record.fields, strict=True)
        )
        return StructPlan(tuple(plans), type_to_arrow(record), identity)

    def array(
        self, array: ArrayType, partner: Field | None, element_result: Node | FieldPlan | None
    ) -> Node | None:
        if partner is None:
            return None
        self._check_kind(array, partner)
        assert element_result is not None and not isinstance(element_result, FieldPlan)
        return ListPlan(element_result, type_to_arrow(array), element_result.identity)

    def map(
        self,
        map_type: MapType,
        partner: Field | None,
        key_result: Node | FieldPlan | None,
        value_result: Node | FieldPlan | None,
    ) -> Node | None:
        if partner is None:
            return None
        self._check_kind(map_type, partner)
        assert key_result is not None and not isinstance(key_result, FieldPlan)
        assert value_result is not None and not isinstance(value_result, FieldPlan)
        return MapPlan(
            key_result, value_result, type_to_arrow(map_type), key_result.identity and value_result.identity
        )


class _AssignVisitor(SchemaWithPartnerVisitor[Field, "Type | Field"]):
    def __init__(self, next_id: int) -> None:
        self.next_id = next_id

    def _fresh(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def primitive(self, primitive: PrimitiveType, partner: Field | None) -> Type:
        return primitive

    def field(self, field: Field, partner: Field | None, field_result: Type | Field) -> Field:
        assert isinstance(field_result, Type)
        field_id = partner.id if partner is not None else self._fresh()
        return Field(field_id, field.name, field_result, field.optional, field.doc)

    def record(self, record: RecordType, partner: Field | None, field_results: list[Type | Field]) -> Type:
        fields = tuple(f for f in field_results if isinstance(f, Field))
        return RecordType(fields, record.name)

    def array(self, array: ArrayType, partner: Field | None, element_result: Type | Field) -> Type:
        assert isinstance(element_result, Type)
        other = partner.type if partner is not None else None
        element_id = other.element_id if isinstance(other, ArrayType) else self._fresh()
        return ArrayType(element_id, element_result, array.element_optional)

    def map(
        self, map_type: MapType, partner: Field | None, key_result: Type | Field, value_result: Type | Field
    ) -> Type:
        assert isinstance(key_result, Type) and isinstance(value_result, Type)
        other = partner.type if partner is not None else None
        if isinstance(other, MapType):
            key_id, value_id = other.key_id, other.value_id
        else:
            key_id, value_id = self._fresh(), self._fresh()
        return MapType(key_id, key_result, value_id, value_result, map_type.value_optional)
