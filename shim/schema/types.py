"""The InternalSchema type model: Hudi's schema-on-read types with stable column ids.

Mirrors `org.apache.hudi.internal.schema.Types`. Every field, list element and map key/value
carries an id; ids survive renames and reorders, which is what lets a reader match a file's
columns to the query's columns after schema evolution.

`str(type)` is the token Hudi's `SerDeHelper` writes (`"decimal(10, 2)"`, `"fixed[16]"`).
Hudi 1.x added `time-millis`, `timestamp-millis`, `local-timestamp-millis` and
`local-timestamp-micros`; they are modelled here because newer tables carry them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shim.errors import InvalidTableError


class Type:
    """Base of all InternalSchema types."""

    __slots__ = ()

    @property
    def is_primitive(self) -> bool:
        """Whether this type has no children."""
        return isinstance(self, PrimitiveType)

    @property
    def is_nested(self) -> bool:
        """Whether this type is a record, array or map."""
        return not isinstance(self, PrimitiveType)


class PrimitiveType(Type):
    """A type without children; `str()` gives Hudi's JSON token."""

    __slots__ = ()

    #: The Hudi JSON token; fixed and decimal override `__str__` with their parameters.
    token: str = ""

    def __str__(self) -> str:
        return self.token


@dataclass(frozen=True, slots=True)
class BooleanType(PrimitiveType):
    """`boolean`."""

    token = "boolean"


@dataclass(frozen=True, slots=True)
class IntType(PrimitiveType):
    """`int`: 32-bit signed integer."""

    token = "int"


@dataclass(frozen=True, slots=True)
class LongType(PrimitiveType):
    """`long`: 64-bit signed integer."""

    token = "long"


@dataclass(frozen=True, slots=True)
class FloatType(PrimitiveType):
    """`float`: 32-bit IEEE 754."""

    token = "float"


@dataclass(frozen=True, slots=True)
class DoubleType(PrimitiveType):
    """`double`: 64-bit IEEE 754."""

    token = "double"


@dataclass(frozen=True, slots=True)
class DateType(PrimitiveType):
    """`date`: days since 1970-01-01."""

    token = "date"


@dataclass(frozen=True, slots=True)
class TimeType(PrimitiveType):
    """`time`: time of day in microseconds."""

    token = "time"


@dataclass(frozen=True, slots=True)
class TimeMillisType(PrimitiveType):
    """`time-millis` (Hudi 1.x): time of day in milliseconds."""

    token = "time-millis"


@dataclass(frozen=True, slots=True)
class TimestampType(PrimitiveType):
    """`timestamp`: UTC instant in microseconds (Avro `timestamp-micros`)."""

    token = "timestamp"


@dataclass(frozen=True, slots=True)
class TimestampMillisType(PrimitiveType):
    """`timestamp-millis` (Hudi 1.x): UTC instant in milliseconds."""

    token = "timestamp-millis"


@dataclass(frozen=True, slots=True)
class LocalTimestampMicrosType(PrimitiveType):
    """`local-timestamp-micros` (Hudi 1.x): wall-clock timestamp without zone, microseconds."""

    token = "local-timestamp-micros"


@dataclass(frozen=True, slots=True)
class LocalTimestampMillisType(PrimitiveType):
    """`local-timestamp-millis` (Hudi 1.x): wall-clock timestamp without zone, milliseconds."""

    token = "local-timestamp-millis"


@dataclass(frozen=True, slots=True)
class StringType(PrimitiveType):
    """`string`: UTF-8 text."""

    token = "string"


@dataclass(frozen=True, slots=True)
class UUIDType(PrimitiveType):
    """`uuid`."""

    token = "uuid"


@dataclass(frozen=True, slots=True)
class BinaryType(PrimitiveType):
    """`binary`: variable-length bytes."""

    token = "binary"


@dataclass(frozen=True, slots=True)
class FixedType(PrimitiveType):
    """`fixed[n]`: exactly `length` bytes."""

    length: int

    def __str__(self) -> str:
        return f"fixed[{self.length}]"


@dataclass(frozen=True, slots=True)
class DecimalType(PrimitiveType):
    """`decimal(p, s)`: exact decimal with `precision` digits, `scale` after the point."""

    precision: int
    scale: int

    def __str__(self) -> str:
        return f"decimal({self.precision}, {self.scale})"


VECTOR_ELEMENT_SIZES = {"FLOAT": 4, "DOUBLE": 8, "INT8": 1}
"""Hudi 1.2's vector element types and their sizes in bytes (`HoodieSchema.Vector.VectorElementType`)."""


@dataclass(frozen=True, slots=True)
class VectorType(PrimitiveType):
    """`vector[dimension, element type, storage backing]` (Hudi 1.2's VECTOR).

    Hudi stores a vector as `dimension` little-endian elements in one value of
    `dimension * element size` bytes: an Avro `fixed` with logical type `vector`, Parquet
    binary. Read as a fixed-size list of the elements (float32, float64 or int8).
    """

    dimension: int
    element_type: str = "FLOAT"
    storage_backing: str = "FIXED_BYTES"

    def __str__(self) -> str:
        return f"vector[{self.dimension}, {self.element_type}, {self.storage_backing}]"

    @property
    def byte_size(self) -> int:
        """Bytes of one vector."""
        return self.dimension * VECTOR_ELEMENT_SIZES[self.element_type]


def vector_type(dimension: int, element_type: str | None, storage_backing: str | None, *, where: str) -> VectorType:
    """A VECTOR type from Hudi's properties (element type FLOAT and backing FIXED_BYTES when
    absent, as Hudi defaults them); `where` names the schema in errors."""
    element = (element_type or "FLOAT").upper()
    backing = (storage_backing or "FIXED_BYTES").upper()
    if dimension <= 0 or element not in VECTOR_ELEMENT_SIZES or backing != "FIXED_BYTES":
        raise InvalidTableError(
            f"{where}: vector[{dimension}, {element}, {backing}] is not a VECTOR Hudi writes (a positive "
            f"dimension, elements {', '.join(VECTOR_ELEMENT_SIZES)}, storage FIXED_BYTES)")
    return VectorType(dimension, element, backing)


BOOLEAN = BooleanType()
INT = IntType()
LONG = LongType()
FLOAT = FloatType()
DOUBLE = DoubleType()
DATE = DateType()
TIME = TimeType()
TIME_MILLIS = TimeMillisType()
TIMESTAMP = TimestampType()
TIMESTAMP_MILLIS = TimestampMillisType()
LOCAL_TIMESTAMP_MICROS = LocalTimestampMicrosType()
LOCAL_TIMESTAMP_MILLIS = LocalTimestampMillisType()
STRING = StringType()
UUID = UUIDType()
BINARY = BinaryType()

#: Parameterless primitives by their Hudi JSON token.
PRIMITIVES_BY_TOKEN: dict[str, PrimitiveType] = {
    t.token: t
    for t in (
        BOOLEAN,
        INT,
        LONG,
        FLOAT,
        DOUBLE,
        DATE,
        TIME,
        TIME_MILLIS,
        TIMESTAMP,
        TIMESTAMP_MILLIS,
        LOCAL_TIMESTAMP_MICROS,
        LOCAL_TIMESTAMP_MILLIS,
        STRING,
        UUID,
        BINARY,
    )
}


@dataclass(frozen=True, slots=True)
class Field:
    """A named member of a record, with its column id."""

    id: int
    name: str
    type: Type
    optional: bool = True
    doc: str | None = None

    def __str__(self) -> str:
        flag = "optional" if self.optional else "required"
        return f"{self.id}: {self.name}: {flag} {self.type}"


@dataclass(frozen=True, slots=True)
class RecordType(Type):
    """A struct: ordered fields.

    `name` is the Avro full name the record came from (kept so that converting back to Avro
    names records as Hudi does); it takes no part in equality, as in Hudi.
    """

    fields: tuple[Field, ...]
    name: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.fields, tuple):
            object.__setattr__(self, "fields", tuple(self.fields))

    def field_by_id(self, field_id: int) -> Field | None:
        """The direct child with this id, or None."""
        for f in self.fields:
            if f.id == field_id:
                return f
        return None

    def field_by_name(self, name: str, *, case_sensitive: bool = True) -> Field | None:
        """The direct child with this name, or None."""
        for f in self.fields:
            if f.name == name:
                return f
        if not case_sensitive:
            lowered = name.lower()
            matches = [f for f in self.fields if f.name.lower() == lowered]
            if len(matches) == 1:
                return matches[0]
        return None

    def __str__(self) -> str:
        return "struct<" + ", ".join(str(f) for f in self.fields) + ">"


@dataclass(frozen=True, slots=True)
class ArrayType(Type):
    """A list; its element has its own id."""

    element_id: int
    element: Type
    element_optional: bool = True

    @property
    def element_field(self) -> Field:
        """The element as a Field named `element` (Hudi's view of it)."""
        return Field(self.element_id, "element", self.element, self.element_optional)

    def __str__(self) -> str:
        return f"list<{self.element}>"


@dataclass(frozen=True, slots=True)
class MapType(Type):
    """A map with (string) keys; key and value have their own ids."""

    key_id: int
    key: Type
    value_id: int
    value: Type
    value_optional: bool = True

    @property
    def key_field(self) -> Field:
        """The key as a required Field named `key`."""
        return Field(self.key_id, "key", self.key, False)

    @property
    def value_field(self) -> Field:
        """The value as a Field named `value`."""
        return Field(self.value_id, "value", self.value, self.value_optional)

    def __str__(self) -> str:
        return f"map<{self.key}, {self.value}>"


NestedType = RecordType | ArrayType | MapType
