"""InternalSchema: a versioned record of fields with column ids (Hudi's `InternalSchema`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from shim.errors import ColumnNotFoundError
from shim.schema.types import STRING, ArrayType, Field, MapType, RecordType, Type
from shim.schema.visitor import index_by_id, index_name_by_id, max_id

#: Hudi's meta columns, in the order `HoodieAvroUtils.addMetadataFields` puts them first.
META_FIELD_NAMES: tuple[str, ...] = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
OPERATION_FIELD_NAME = "_hoodie_operation"

#: The meta columns as Hudi's InternalSchema holds them: ids 0-4, optional strings, doc "".
META_FIELDS: tuple[Field, ...] = tuple(
    Field(i, name, STRING, True, "") for i, name in enumerate(META_FIELD_NAMES)
)


@dataclass(frozen=True, slots=True)
class InternalSchema:
    """A table schema version: a root record, its version id (commit instant) and max column id.

    `max_column_id` defaults to the largest id in the record, as Hudi computes it when the
    JSON lacks it; after drops it can be larger than any id present.
    """

    record: RecordType
    version_id: int = 0
    max_column_id: int = -1
    _by_id: dict[int, Field] = field(init=False, repr=False, compare=False, hash=False)
    _name_by_id: dict[int, str] = field(init=False, repr=False, compare=False, hash=False)
    _id_by_name: dict[str, int] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        by_id = index_by_id(self.record)
        names = index_name_by_id(self.record)
        object.__setattr__(self, "_by_id", by_id)
        object.__setattr__(self, "_name_by_id", names)
        object.__setattr__(self, "_id_by_name", {n: i for i, n in names.items()})
        if self.max_column_id < 0:
            object.__setattr__(self, "max_column_id", max_id(self.record))

    @classmethod
    def of(cls, fields: Iterable[Field], version_id: int = 0, max_column_id: int = -1) -> InternalSchema:
        """Build a schema from top-level fields."""
        return cls(RecordType(tuple(fields)), version_id, max_column_id)

    @property
    def fields(self) -> tuple[Field, ...]:
        """Top-level fields in order."""
        return self.record.fields

    def field_names(self) -> list[str]:
        """Top-level column names in order."""
        return [f.name for f in self.record.fields]

    def full_names(self) -> list[str]:
        """Dotted full name of every field, element, key and value."""
        return list(self._name_by_id.values())

    def ids(self) -> set[int]:
        """Every id in the schema."""
        return set(self._by_id)

    def find_field(self, field_id: int) -> Field | None:
        """The field (top-level or nested, element/key/value included) with this id."""
        return self._by_id.get(field_id)

    def find_field_by_name(self, name: str) -> Field | None:
        """The field with this dotted full name (`a.b`, `arr.element`, `m.value.x`)."""
        field_id = self._id_by_name.get(name)
        return None if field_id is None else self._by_id[field_id]

    def find_id(self, name: str) -> int | None:
        """The id of a dotted full name, or None."""
        return self._id_by_name.get(name)

    def find_full_name(self, field_id: int) -> str | None:
        """The dotted full name of an id, or None."""
        return self._name_by_id.get(field_id)

    def find_type(self, name_or_id: str | int) -> Type | None:
        """The type of the field with this full name or id."""
        f = (
            self.find_field(name_or_id)
            if isinstance(name_or_id, int)
            else self.find_field_by_name(name_or_id)
        )
        return None if f is None else f.type

    def select(self, names: Sequence[str]) -> InternalSchema:
        """Project to the given dotted names, keeping ids (Hudi's `pruneInternalSchema`).

        Naming a nested field keeps its ancestors with only the selected children; naming a
        struct keeps all of it. Top-level columns come in the order of first mention.

        Raises:
            ColumnNotFoundError: a name is not in the schema.
        """
        wanted: set[int] = set()
        top_order: list[int] = []
        for name in names:
            field_id = self._id_by_name.get(name)
            if field_id is None:
                raise ColumnNotFoundError(
                    f"Column '{name}' is not in the schema (version {self.version_id}); "
                    f"columns are: {', '.join(self.field_names())}",
                    column=name,
                )
            wanted.add(field_id)
            top_id = self._id_by_name.get(name.split(".")[0], field_id)
            if top_id not in top_order:
                top_order.append(top_id)
        if not wanted:
            return InternalSchema(RecordType((), self.record.name), self.version_id, self.max_column_id)
        pruned = _prune(self.record, wanted)
        assert isinstance(pruned, RecordType)
        by_id = {f.id: f for f in pruned.fields}
        ordered = tuple(by_id[i] for i in top_order if i in by_id)
        return InternalSchema(RecordType(ordered, self.record.name), self.version_id, self.max_column_id)

    def __str__(self) -> str:
        body = "\n".join(f" {f}" for f in self.record.fields)
        return f"table {{\n{body}\n}}"


def _prune(type_: Type, wanted: set[int]) -> Type | None:
    """`type_` reduced to the subtrees holding wanted ids; None when none is below it."""
    if isinstance(type_, RecordType):
        kept: list[Field] = []
        for f in type_.fields:
            if f.id in wanted:
                kept.append(f)
                continue
            sub = _prune(f.type, wanted)
            if sub is not None:
                kept.append(Field(f.id, f.name, sub, f.optional, f.doc))
        return RecordType(tuple(kept), type_.name) if kept else None
    if isinstance(type_, ArrayType):
        if type_.element_id in wanted:
            return type_
        element = _prune(type_.element, wanted)
        return None if element is None else ArrayType(type_.element_id, element, type_.element_optional)
    if isinstance(type_, MapType):
        if type_.value_id in wanted or type_.key_id in wanted:
            return type_
        value = _prune(type_.value, wanted)
        if value is None:
            return None
        return MapType(type_.key_id, type_.key, type_.value_id, value, type_.value_optional)
    return None
