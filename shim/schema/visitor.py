"""One visitor framework for InternalSchema trees, and the indexes built on it.

`visit(schema_or_type, visitor)` walks post-order and hands each node the results of its
children (PyIceberg's `schema.py` pattern). `visit_with_partner` walks a tree beside a
second one (the "partner"), looked up through a `PartnerAccessor`; reconciliation walks
the query schema with the file schema as partner.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import singledispatch
from typing import Any, Generic, Protocol, TypeVar

from shim.schema.types import ArrayType, Field, MapType, PrimitiveType, RecordType, Type


class SchemaTree(Protocol):
    """What the visitor needs of an `InternalSchema` (its root record), so this module does not
    import the schema class that builds its indexes with it."""

    @property
    def record(self) -> RecordType: ...

T = TypeVar("T")
P = TypeVar("P")


class SchemaVisitor(ABC, Generic[T]):
    """Post-order visitor; override the `before_*`/`after_*` hooks to track the path."""

    def before_field(self, field: Field) -> None:
        """Called before a record field's type is visited."""

    def after_field(self, field: Field) -> None:
        """Called after a record field's type is visited."""

    def before_element(self, element: Field) -> None:
        """Called before a list element is visited."""

    def after_element(self, element: Field) -> None:
        """Called after a list element is visited."""

    def before_key(self, key: Field) -> None:
        """Called before a map key is visited."""

    def after_key(self, key: Field) -> None:
        """Called after a map key is visited."""

    def before_value(self, value: Field) -> None:
        """Called before a map value is visited."""

    def after_value(self, value: Field) -> None:
        """Called after a map value is visited."""

    def schema(self, schema: SchemaTree, record_result: T) -> T:
        """Result for the whole schema; defaults to the root record's result."""
        return record_result

    @abstractmethod
    def record(self, record: RecordType, field_results: list[T]) -> T:
        """Result for a record from its fields' results."""

    @abstractmethod
    def field(self, field: Field, field_result: T) -> T:
        """Result for a record field from its type's result."""

    @abstractmethod
    def array(self, array: ArrayType, element_result: T) -> T:
        """Result for an array from its element's result."""

    @abstractmethod
    def map(self, map_type: MapType, key_result: T, value_result: T) -> T:
        """Result for a map from its key's and value's results."""

    @abstractmethod
    def primitive(self, primitive: PrimitiveType) -> T:
        """Result for a primitive."""


@singledispatch
def visit(obj: Any, visitor: SchemaVisitor[T]) -> T:
    """Walk an InternalSchema or a type with `visitor`, post-order."""
    if isinstance(getattr(obj, "record", None), RecordType):  # an InternalSchema
        return visitor.schema(obj, visit(obj.record, visitor))
    if isinstance(obj, PrimitiveType):
        return visitor.primitive(obj)
    raise TypeError(f"cannot visit {obj!r}: not an InternalSchema or schema type")


@visit.register(RecordType)
def _(obj: RecordType, visitor: SchemaVisitor[T]) -> T:
    results: list[T] = []
    for f in obj.fields:
        visitor.before_field(f)
        try:
            results.append(visitor.field(f, visit(f.type, visitor)))
        finally:
            visitor.after_field(f)
    return visitor.record(obj, results)


@visit.register(ArrayType)
def _(obj: ArrayType, visitor: SchemaVisitor[T]) -> T:
    element = obj.element_field
    visitor.before_element(element)
    try:
        result = visit(obj.element, visitor)
    finally:
        visitor.after_element(element)
    return visitor.array(obj, result)


@visit.register(MapType)
def _(obj: MapType, visitor: SchemaVisitor[T]) -> T:
    key, value = obj.key_field, obj.value_field
    visitor.before_key(key)
    try:
        key_result = visit(obj.key, visitor)
    finally:
        visitor.after_key(key)
    visitor.before_value(value)
    try:
        value_result = visit(obj.value, visitor)
    finally:
        visitor.after_value(value)
    return visitor.map(obj, key_result, value_result)


class PartnerAccessor(ABC, Generic[P]):
    """Finds the partner of each child while walking a tree beside a partner tree."""

    @abstractmethod
    def field_partner(self, partner: P | None, field: Field) -> P | None:
        """Partner of `field`, a child of the record whose partner is `partner`."""

    @abstractmethod
    def element_partner(self, partner: P | None) -> P | None:
        """Partner of the element of the array whose partner is `partner`."""

    @abstractmethod
    def key_partner(self, partner: P | None) -> P | None:
        """Partner of the key of the map whose partner is `partner`."""

    @abstractmethod
    def value_partner(self, partner: P | None) -> P | None:
        """Partner of the value of the map whose partner is `partner`."""


class SchemaWithPartnerVisitor(ABC, Generic[P, T]):
    """Post-order visitor over a tree walked beside a partner tree."""

    def before_field(self, field: Field, partner: P | None) -> None:
        """Called before a record field's type is visited."""

    def after_field(self, field: Field, partner: P | None) -> None:
        """Called after a record field's type is visited."""

    def before_element(self, field: Field, partner: P | None) -> None:
        """Called before a list element is visited."""

    def after_element(self, field: Field, partner: P | None) -> None:
        """Called after a list element is visited."""

    def before_key(self, field: Field, partner: P | None) -> None:
        """Called before a map key is visited."""

    def after_key(self, field: Field, partner: P | None) -> None:
        """Called after a map key is visited."""

    def before_value(self, field: Field, partner: P | None) -> None:
        """Called before a map value is visited."""

    def after_value(self, field: Field, partner: P | None) -> None:
        """Called after a map value is visited."""

    @abstractmethod
    def record(self, record: RecordType, partner: P | None, field_results: list[T]) -> T:
        """Result for a record."""

    @abstractmethod
    def field(self, field: Field, partner: P | None, field_result: T) -> T:
        """Result for a record field."""

    @abstractmethod
    def array(self, array: ArrayType, partner: P | None, element_result: T) -> T:
        """Result for an array."""

    @abstractmethod
    def map(self, map_type: MapType, partner: P | None, key_result: T, value_result: T) -> T:
        """Result for a map."""

    @abstractmethod
    def primitive(self, primitive: PrimitiveType, partner: P | None) -> T:
        """Result for a primitive."""


def visit_with_partner(
    obj: Type,
    partner: P | None,
    visitor: SchemaWithPartnerVisitor[P, T],
    accessor: PartnerAccessor[P],
) -> T:
    """Walk `obj` post-order beside `partner`, finding child partners through `accessor`."""
    if isinstance(obj, RecordType):
        results: list[T] = []
        for f in obj.fields:
            child = accessor.field_partner(partner, f)
            visitor.before_field(f, child)
            try:
                results.append(visitor.field(f, child, visit_with_partner(f.type, child, visitor, accessor)))
            finally:
                visitor.after_field(f, child)
        return visitor.record(obj, partner, results)
    if isinstance(obj, ArrayType):
        element = obj.element_field
        child = accessor.element_partner(partner)
        visitor.before_element(element, child)
        try:
            result = visit_with_partner(obj.element, child, visitor, accessor)
        finally:
            visitor.after_element(element, child)
        return visitor.array(obj, partner, result)
    if isinstance(obj, MapType):
        key_partner = accessor.key_partner(partner)
        value_partner = accessor.value_partner(partner)
        visitor.before_key(obj.key_field, key_partner)
        try:
            key_result = visit_with_partner(obj.key, key_partner, visitor, accessor)
        finally:
            visitor.after_key(obj.key_field, key_partner)
        visitor.before_value(obj.value_field, value_partner)
        try:
            value_result = visit_with_partner(obj.value, value_partner, visitor, accessor)
        finally:
            visitor.after_value(obj.value_field, value_partner)
        return visitor.map(obj, partner, key_result, value_result)
    if isinstance(obj, PrimitiveType):
        return visitor.primitive(obj, partner)
    raise TypeError(f"cannot visit {obj!r}: not a schema type")


class _PathVisitor(SchemaVisitor[None]):
    """Base for index builders: tracks the dotted path of names to the current node."""

    def __init__(self) -> None:
        self._path: list[str] = []

    def _full_name(self, name: str) -> str:
        return ".".join([*self._path, name])

    def before_field(self, field: Field) -> None:
        self._path.append(field.name)

    def after_field(self, field: Field) -> None:
        self._path.pop()

    def before_element(self, element: Field) -> None:
        self._path.append(element.name)

    def after_element(self, element: Field) -> None:
        self._path.pop()

    def before_key(self, key: Field) -> None:
        self._path.append(key.name)

    def after_key(self, key: Field) -> None:
        self._path.pop()

    def before_value(self, value: Field) -> None:
        self._path.append(value.name)

    def after_value(self, value: Field) -> None:
        self._path.pop()

    def record(self, record: RecordType, field_results: list[None]) -> None:
        return None

    def primitive(self, primitive: PrimitiveType) -> None:
        return None


class _IndexVisitor(_PathVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.by_id: dict[int, Field] = {}
        self.name_by_id: dict[int, str] = {}

    def _add(self, field: Field) -> None:
        self.by_id[field.id] = field
        self.name_by_id[field.id] = self._full_name(field.name)

    def field(self, field: Field, field_result: None) -> None:
        # Called while the field's own name is still on the path.
        self.by_id[field.id] = field
        self.name_by_id[field.id] = ".".join(self._path)

    def array(self, array: ArrayType, element_result: None) -> None:
        self._add(array.element_field)

    def map(self, map_type: MapType, key_result: None, value_result: None) -> None:
        self._add(map_type.key_field)
        self._add(map_type.value_field)


def _index(obj: SchemaTree | Type) -> _IndexVisitor:
    visitor = _IndexVisitor()
    visit(obj, visitor)
    return visitor


def index_by_id(obj: SchemaTree | Type) -> dict[int, Field]:
    """Every field below `obj` by id; list elements and map keys/values are Fields too."""
    return _index(obj).by_id


def index_name_by_id(obj: SchemaTree | Type) -> dict[int, str]:
    """Dotted full name of every id: `a.b`, `arr.element.x`, `m.key`, `m.value`."""
    return _index(obj).name_by_id


def index_by_name(obj: SchemaTree | Type) -> dict[str, int]:
    """Id of every dotted full name (the inverse of `index_name_by_id`)."""
    return {name: field_id for field_id, name in _index(obj).name_by_id.items()}


class _MaxIdVisitor(SchemaVisitor[int]):
    def record(self, record: RecordType, field_results: list[int]) -> int:
        return max(field_results, default=-1)

    def field(self, field: Field, field_result: int) -> int:
        return max(field.id, field_result)

    def array(self, array: ArrayType, element_result: int) -> int:
        return max(array.element_id, element_result)

    def map(self, map_type: MapType, key_result: int, value_result: int) -> int:
        return max(map_type.key_id, map_type.value_id, key_result, value_result)

    def primitive(self, primitive: PrimitiveType) -> int:
        return -1


def max_id(obj: SchemaTree | Type) -> int:
    """The largest id anywhere below `obj`, or -1 when it has none."""
    return visit(obj, _MaxIdVisitor())
