"""Vectorized value conversions with the exact semantics Hudi applies on read.

Hudi converts a file column to the query type in two places that agree with each other:
Spark's `HoodieParquetFileFormatHelper` (base files) and `HoodieAvroUtils.rewritePrimaryType`
(log files). Their rules, reproduced here with Arrow compute (no per-row Python):

- float -> double goes through the float's decimal string: 1.1f reads as 1.1, not
  1.100000023841858.
- int/long/float/double -> decimal go through the decimal string, rounded HALF_UP (ties away
  from zero) to the scale; a value that does not fit the precision reads as null (Spark).
- float/double -> string is Java's `Float/Double.toString` ("100.0", "1.0E7", "1.0E-4", "NaN").
- string -> decimal parses Java `BigDecimal` syntax after trimming; invalid text is null.
- string -> date accepts Spark's forms (`yyyy`, `yyyy-[m]m`, `yyyy-[m]m-[d]d` optionally
  followed by ` ...` or `T...`); anything else, or an impossible date, is null.
- decimal -> string is Java's `BigDecimal.toString` (`0E-10` for a zero at scale 10).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shim.keys.calendar import days_from_civil, days_in_month

_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_DATE = r"^(?P<sign>[+-]?)(?P<y>[0-9]{4,7})(?:-(?P<m>[0-9]{1,2})(?:-(?P<d>[0-9]{1,2})(?:[ T].*)?)?)?$"
_FLOAT_TEXT = r"^(?P<sign>-?)(?P<int>[0-9]+)(?:\.(?P<frac>[0-9]+))?(?:e\+?(?P<exp>-?[0-9]+))?$"


def _decimal_type(precision: int, scale: int) -> pa.DataType:
    if precision > 38:
        return pa.decimal256(precision, scale)
    return pa.decimal128(precision, scale)


def _null_where(arr: pa.Array, mask: pa.Array) -> pa.Array:
    """`arr` with nulls where `mask` is true (null mask entries keep the value)."""
    return pc.if_else(pc.fill_null(mask, False), pa.nulls(len(arr), arr.type), arr)


# -- to string ---------------------------------------------------------------------------


def float_to_java_string(arr: pa.Array) -> pa.Array:
    """float32/float64 values as Java's `Float.toString`/`Double.toString` writes them.

    Digits are the shortest that round-trip (Java >= 19; older JDKs occasionally print one
    more digit), placed as Java places them: plain notation with at least one fractional
    digit for 1e-3 <= |x| < 1e7, otherwise `d.dddE<exp>`.
    """
    if len(arr) == 0:
        return pa.array([], pa.string())
    text = pc.cast(arr, pa.string())
    finite = pc.fill_null(pc.is_finite(arr), False)
    magnitude = pc.abs(arr)
    outside = pc.or_(
        pc.greater_equal(magnitude, 1e7),
        pc.and_(pc.less(magnitude, 1e-3), pc.not_equal(magnitude, 0)),
    )
    # Arrow already writes the plain range in plain notation; only Java's scientific range
    # (and anything Arrow wrote with an exponent) needs the digits moved.
    scientific = pc.and_(finite, pc.or_(outside, pc.match_substring(text, "e")))
    whole = pc.and_(pc.and_(finite, pc.invert(scientific)), pc.invert(pc.match_substring(text, ".")))
    out = _replace_where(text, whole, lambda sub: pc.binary_join_element_wise(sub, ".0", ""))
    out = _replace_where(out, scientific, _java_layout)
    special = pc.and_(pc.invert(finite), pc.is_valid(arr))
    return _replace_where(
        out,
        special,
        lambda sub: pc.replace_substring(pc.replace_substring(sub, "nan", "NaN"), "inf", "Infinity"),
    )


def _replace_where(values: pa.Array, mask: pa.Array, compute: Callable[[pa.Array], pa.Array]) -> pa.Array:
    """`values` with the rows under `mask` replaced by `compute` of just those rows."""
    if not pc.any(mask).as_py():
        return values
    return pc.replace_with_mask(values, mask, compute(pc.filter(values, mask)))


def _java_layout(text: pa.Array) -> pa.Array:
    """Finite numbers in Arrow's shortest text, laid out as Java's `toString` lays them out."""
    parts = pc.extract_regex(text, _FLOAT_TEXT)
    sign = parts.field("sign")
    raw = pc.binary_join_element_wise(parts.field("int"), parts.field("frac"), "")
    exp_text = parts.field("exp")
    exp = pc.cast(pc.if_else(pc.equal(exp_text, ""), "0", exp_text), pa.int64())
    trimmed = pc.utf8_ltrim(raw, "0")
    leading = pc.subtract(pc.utf8_length(raw), pc.utf8_length(trimmed))
    digits = pc.utf8_rtrim(trimmed, "0")
    # value = 0.d1d2... * 10**point; Java's scientific exponent is point - 1.
    point = pc.subtract(pc.add(pc.utf8_length(parts.field("int")), exp), leading)
    sci_exp = pc.subtract(pc.cast(point, pa.int64()), 1)

    first = pc.utf8_slice_codeunits(digits, 0, 1)
    rest = pc.utf8_slice_codeunits(digits, 1)
    rest = pc.if_else(pc.equal(rest, ""), "0", rest)
    scientific = pc.binary_join_element_wise(first, ".", rest, "E", pc.cast(sci_exp, pa.string()), "")

    conditions = []
    choices = []
    for e in range(-3, 7):
        conditions.append(pc.equal(sci_exp, e))
        if e >= 0:
            padded = pc.utf8_rpad(digits, e + 1, "0")
            head = pc.utf8_slice_codeunits(padded, 0, e + 1)
            tail = pc.utf8_slice_codeunits(padded, e + 1)
            tail = pc.if_else(pc.equal(tail, ""), "0", tail)
            choices.append(pc.binary_join_element_wise(head, ".", tail, ""))
        else:
            choices.append(pc.binary_join_element_wise("0." + "0" * (-e - 1), digits, ""))
    conditions.append(pc.is_valid(sci_exp))
    choices.append(scientific)
    body = pc.case_when(pc.make_struct(*conditions), *choices)
    return pc.binary_join_element_wise(sign, body, "")


def to_string(arr: pa.Array) -> pa.Array:
    """Any convertible primitive column as the text Hudi reads it as after a change to string."""
    if pa.types.is_floating(arr.type):
        return float_to_java_string(arr)
    return pc.cast(arr, pa.string())


# -- to double ---------------------------------------------------------------------------


def float_to_double(arr: pa.Array) -> pa.Array:
    """float32 -> float64 through the shortest decimal text (1.1f -> 1.1)."""
    return pc.cast(pc.cast(arr, pa.string()), pa.float64())


# -- to decimal --------------------------------------------------------------------------


def string_to_decimal(arr: pa.Array, precision: int, scale: int) -> pa.Array:
    """Text -> decimal(precision, scale), HALF_UP; invalid or too large -> null."""
    target = _decimal_type(precision, scale)
    if len(arr) == 0:
        return pa.array([], target)
    text = pc.utf8_trim_whitespace(arr)
    text = _null_where(text, pc.invert(pc.match_substring_regex(text, _NUMBER)))
    # Keep one digit beyond the scale (Arrow truncates the rest); HALF_UP depends only on it.
    wide_precision = 38 if precision <= 35 else 76
    magnitude = pc.abs(pc.cast(text, pa.float64()))
    text = _null_where(text, pc.greater_equal(magnitude, 10.0 ** (wide_precision - 2 - scale)))
    wide = pc.cast(text, _decimal_type(wide_precision, scale + 1), safe=False)
    return _round_to(wide, precision, scale)


def decimal_to_decimal(arr: pa.Array, precision: int, scale: int) -> pa.Array:
    """Rescale decimals: exact when widening, else HALF_UP with null on overflow."""
    source = arr.type
    target = _decimal_type(precision, scale)
    if scale >= source.scale and precision - scale >= source.precision - source.scale:
        return pc.cast(arr, target)
    int_digits = max(source.precision - source.scale, precision - scale)
    wide = pc.cast(arr, _decimal_type(int_digits + scale + 2, scale + 1), safe=False)
    return _round_to(wide, precision, scale)


def _round_to(wide: pa.Array, precision: int, scale: int) -> pa.Array:
    """Round decimals of scale+1 HALF_UP to `scale`; null what exceeds `precision`.

    `wide` must have a spare integer digit so that rounding up cannot overflow its type.
    """
    rounded = pc.round(wide, ndigits=scale, round_mode="half_towards_infinity")
    bound = pa.scalar(Decimal(10) ** (precision - scale), wide.type)
    rounded = _null_where(rounded, pc.greater_equal(pc.abs(rounded), bound))
    return pc.cast(rounded, _decimal_type(precision, scale))


def integer_to_decimal(arr: pa.Array, precision: int, scale: int) -> pa.Array:
    """int/long -> decimal(precision, scale) exactly; null where it does not fit."""
    target = _decimal_type(precision, scale)
    digits = precision - scale
    values = pc.cast(arr, pa.int64())
    if digits <= 18:
        cap = 10**digits
        values = _null_where(values, pc.or_(pc.greater_equal(values, cap), pc.less_equal(values, -cap)))
    return pc.cast(pc.cast(values, _decimal_type(19 + scale, scale)), target)


def float_to_decimal(arr: pa.Array, precision: int, scale: int) -> pa.Array:
    """float/double -> decimal through the shortest decimal text, HALF_UP; NaN/inf -> null."""
    return string_to_decimal(pc.cast(arr, pa.string()), precision, scale)


# -- to date -----------------------------------------------------------------------------


def string_to_date(arr: pa.Array) -> pa.Array:
    """Text -> date32 with Spark's accepted forms; anything else -> null."""
    if len(arr) == 0:
        return pa.array([], pa.date32())
    text = pc.utf8_trim_whitespace(arr)
    parts = pc.extract_regex(text, _DATE)
    valid = pc.fill_null(pc.is_valid(parts), False).to_numpy(zero_copy_only=False)

    def number(name: str, default: int) -> np.ndarray:
        values = parts.field(name)
        values = pc.if_else(pc.equal(values, ""), str(default), values)
        return np.asarray(pc.fill_null(pc.cast(values, pa.int64()), default).to_numpy(zero_copy_only=False))

    year = number("y", 1970)
    negative = pc.fill_null(pc.equal(parts.field("sign"), "-"), False).to_numpy(zero_copy_only=False)
    year = np.where(negative, -year, year)
    month = number("m", 1)
    day = number("d", 1)
    month_ok = (month >= 1) & (month <= 12)
    safe_month = np.where(month_ok, month, 1)
    ok = valid & month_ok & (day >= 1) & (day <= days_in_month(year, safe_month))
    days = days_from_civil(year, safe_month, np.where(ok, day, 1))
    return pa.array(days.astype(np.int32), pa.date32(), mask=~ok)




def bytes_to_vector(arr: pa.Array, target: pa.DataType, byte_size: int) -> pa.Array:
    """Hudi's VECTOR bytes (`byte_size` per value: the elements little-endian, back to back), as
    the fixed-size list `target`; a null stays null.

    Raises:
        ValueError: a value is not `byte_size` bytes long.
    """
    element = target.value_type
    if pa.types.is_fixed_size_binary(arr.type):
        if arr.type.byte_width != byte_size:
            raise ValueError(f"values of {arr.type.byte_width} bytes are no vectors of {byte_size} bytes")
        data = arr.buffers()[1]
        start = arr.offset * byte_size
        raw = np.frombuffer(data, dtype=np.uint8)[start:start + len(arr) * byte_size] if data is not None \
            else np.zeros(0, dtype=np.uint8)
    else:
        arr = arr.cast(pa.large_binary())
        lengths = pc.binary_length(arr).fill_null(byte_size).to_numpy(zero_copy_only=False)
        if (lengths != byte_size).any():
            bad = int(np.flatnonzero(lengths != byte_size)[0])
            raise ValueError(f"value {bad} holds {int(lengths[bad])} bytes, not the vector's {byte_size}")
        filled = arr.fill_null(b"\0" * byte_size) if arr.null_count else arr
        offsets = np.frombuffer(filled.buffers()[1], dtype=np.int64)[filled.offset:filled.offset + len(filled) + 1]
        body = np.frombuffer(filled.buffers()[2], dtype=np.uint8) if len(filled) else np.zeros(0, dtype=np.uint8)
        raw = body[offsets[0]:offsets[-1]]
    dtype = np.dtype(element.to_pandas_dtype()).newbyteorder("<")
    values = pa.array(raw.view(dtype).astype(dtype.newbyteorder("="), copy=False), type=element)
    mask = arr.is_null() if arr.null_count else None
    return pa.FixedSizeListArray.from_arrays(values, type=target, mask=mask)
