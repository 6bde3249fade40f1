"""Which type changes Hudi allows, and how a file column of one type is read as another.

Allowed changes are Hudi's `SchemaChangeUtils.isTypeUpdateAllow`:
int -> long/float/double/string/decimal; long -> float/double/string/decimal;
float -> double/string/decimal; double -> string/decimal; decimal -> wider decimal/string;
string -> date/decimal; date -> string.

A file may be several ALTERs behind the query, so reading allows the transitive closure of
those steps. The only pairs the closure adds (numbers or decimals -> date, date -> decimal,
decimal -> narrower decimal) all pass through `string`, and are read exactly so: first to
text, then from text. The millisecond and microsecond variants of time, timestamp and local
timestamp are one type at two precisions (Hudi 0.x did not tell them apart), and a local
timestamp and the `long` Hudi 0.x read it as are one value.
"""

from __future__ import annotations

from enum import Enum

import pyarrow as pa
import pyarrow.compute as pc

from shim.schema import casts
from shim.schema.arrow import primitive_to_arrow
from shim.schema.types import (
    BINARY,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    LOCAL_TIMESTAMP_MICROS,
    LOCAL_TIMESTAMP_MILLIS,
    LONG,
    STRING,
    TIME,
    TIME_MILLIS,
    TIMESTAMP,
    TIMESTAMP_MILLIS,
    DecimalType,
    FixedType,
    PrimitiveType,
    VectorType,
)

_FAMILIES: tuple[frozenset[PrimitiveType], ...] = (
    frozenset({TIME, TIME_MILLIS}),
    frozenset({TIMESTAMP, TIMESTAMP_MILLIS}),
    frozenset({LOCAL_TIMESTAMP_MICROS, LOCAL_TIMESTAMP_MILLIS}),
)
_NUMBERS = (INT, LONG, FLOAT, DOUBLE)
# Hudi 0.x converted Avro local-timestamp-* to `long`; Hudi 1.x keeps them (and allows the
# "forward fix" from that long back to the local timestamp).
_LOCAL_OR_LONG = frozenset({LONG, LOCAL_TIMESTAMP_MICROS, LOCAL_TIMESTAMP_MILLIS})


class Conversion(Enum):
    """How a file value becomes a query value."""

    IDENTITY = "identity"
    """Same type: no change."""
    PRECISION = "precision"
    """Same type at another time precision (millis <-> micros)."""
    REINTERPRET = "reinterpret"
    """A local timestamp read as the `long` Hudi 0.x gave it, or back (same number, same unit)."""
    DIRECT = "direct"
    """A change Hudi allows in one ALTER."""
    VIA_STRING = "via_string"
    """A change Hudi allows only as a chain through string: to text, then from text."""
    VECTOR_BYTES = "vector_bytes"
    """A VECTOR's bytes, in a file whose schema says binary or fixed (Parquet base files of a
    table without schema on read, Avro written without the logical type): read as the vector."""


def _is_wider_decimal(src: DecimalType, dst: DecimalType) -> bool:
    # Hudi: DecimalType.isWiderThan, or same scale with at least the precision.
    wider = (dst.precision - dst.scale) >= (src.precision - src.scale) and dst.scale > src.scale
    return wider or (dst.precision >= src.precision and dst.scale == src.scale)


def is_direct_change(src: PrimitiveType, dst: PrimitiveType) -> bool:
    """Whether Hudi allows changing a column from `src` to `dst` in one ALTER."""
    if src == dst:
        return True
    if isinstance(dst, DecimalType):
        if isinstance(src, DecimalType):
            return _is_wider_decimal(src, dst)
        return src in _NUMBERS or src == STRING
    if src == INT:
        return dst in (LONG, FLOAT, DOUBLE, STRING)
    if src == LONG:
        return dst in (FLOAT, DOUBLE, STRING)
    if src == FLOAT:
        return dst in (DOUBLE, STRING)
    if src == DOUBLE:
        return dst == STRING
    if isinstance(src, DecimalType):
        return dst == STRING
    if src == STRING:
        return dst == DATE
    if src == DATE:
        return dst == STRING
    return False


def conversion(src: PrimitiveType, dst: PrimitiveType) -> Conversion | None:
    """How a `src` file column is read as `dst`, or None when Hudi never allows it."""
    if src == dst:
        return Conversion.IDENTITY
    if isinstance(dst, VectorType) and (src == BINARY or (isinstance(src, FixedType) and src.length == dst.byte_size)):
        return Conversion.VECTOR_BYTES
    if any(src in family and dst in family for family in _FAMILIES):
        return Conversion.PRECISION
    if {src, dst} <= _LOCAL_OR_LONG:
        return Conversion.REINTERPRET
    if is_direct_change(src, dst):
        return Conversion.DIRECT
    if is_direct_change(src, STRING) and is_direct_change(STRING, dst):
        return Conversion.VIA_STRING
    return None


def convert(arr: pa.Array, src: PrimitiveType, dst: PrimitiveType) -> pa.Array:
    """Read `arr` (Arrow type of `src`) as `dst` with Hudi's conversion semantics.

    Raises:
        ValueError: `conversion(src, dst)` is None (callers check before planning).
    """
    how = conversion(src, dst)
    if how is None:
        raise ValueError(f"Hudi does not allow reading {src} as {dst}")
    if how is Conversion.IDENTITY:
        return arr
    if how is Conversion.PRECISION:
        return pc.cast(arr, primitive_to_arrow(dst), safe=False)
    if how is Conversion.REINTERPRET:
        return arr.view(primitive_to_arrow(dst))
    if how is Conversion.VIA_STRING:
        return _from_string(casts.to_string(arr), dst)
    if how is Conversion.VECTOR_BYTES:
        assert isinstance(dst, VectorType)
        return casts.bytes_to_vector(arr, primitive_to_arrow(dst), dst.byte_size)
    return _direct(arr, src, dst)


def _from_string(arr: pa.Array, dst: PrimitiveType) -> pa.Array:
    if dst == DATE:
        return casts.string_to_date(arr)
    if isinstance(dst, DecimalType):
        return casts.string_to_decimal(arr, dst.precision, dst.scale)
    raise ValueError(f"no conversion from string to {dst}")


def _direct(arr: pa.Array, src: PrimitiveType, dst: PrimitiveType) -> pa.Array:
    if dst == STRING:
        return casts.to_string(arr)
    if src == STRING:
        return _from_string(arr, dst)
    if isinstance(dst, DecimalType):
        if isinstance(src, DecimalType):
            return casts.decimal_to_decimal(arr, dst.precision, dst.scale)
        if src in (INT, LONG):
            return casts.integer_to_decimal(arr, dst.precision, dst.scale)
        return casts.float_to_decimal(arr, dst.precision, dst.scale)
    if src == FLOAT and dst == DOUBLE:
        return casts.float_to_double(arr)
    # int/long -> long/float/double: Java's widening (float rounds to nearest).
    return pc.cast(arr, primitive_to_arrow(dst), safe=False)
