"""Partition values of Hudi's timestamp-based key generator (`TimestampBasedKeyGenerator`, and the
TIMESTAMP fields of `CustomKeyGenerator`): a column read as a point in time, printed with the
output date format.

Rules as Hudi 0.14/0.15's `TimestampBasedAvroKeyGenerator`:
- numbers (and a timestamp or date column's stored long/int) are counted in the unit of
  `hoodie.keygen.timebased.timestamp.type` (UNIX_TIMESTAMP seconds, EPOCHMILLISECONDS,
  EPOCHMICROSECONDS, SCALAR in `...timestamp.scalar.time.unit`), fractions truncated;
- strings (DATE_STRING, MIXED) are parsed with the input formats, in the input zone or with
  their own offset; with no output zone they are printed in the zone they were parsed in;
- a null value stands for the instant 1 (in the type's unit), or for that instant printed in
  the first input format;
- the output zone is `hoodie.keygen.timebased.timezone` (both sides) or
  `...output.timezone`, else the machine's default zone, as a JVM's.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shim.errors import InvalidArgumentError
from shim.keys.datetime_format import DatePattern, DatePatternError, default_zone, java_zone

PREFIX = "hoodie.keygen.timebased."
LEGACY_PREFIX = "hoodie.deltastreamer.keygen.timebased."
TIMESTAMP_TYPE = PREFIX + "timestamp.type"
SCALAR_UNIT = PREFIX + "timestamp.scalar.time.unit"
INPUT_FORMAT = PREFIX + "input.dateformat"
INPUT_FORMAT_DELIMITER = PREFIX + "input.dateformat.list.delimiter.regex"
INPUT_TIMEZONE = PREFIX + "input.timezone"
OUTPUT_FORMAT = PREFIX + "output.dateformat"
OUTPUT_TIMEZONE = PREFIX + "output.timezone"
TIMEZONE = PREFIX + "timezone"
DATE_TIME_PARSER = "hoodie.keygen.datetime.parser.class"
LEGACY_DATE_TIME_PARSER = "hoodie.deltastreamer.keygen.datetime.parser.class"
CONSISTENT_LOGICAL_TIMESTAMP = "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled"
DEFAULT_PARSER = "org.apache.hudi.keygen.parser.HoodieDateTimeParser"

# What hoodie.properties keeps of them (HoodieTableConfig's persisted key generator configs; the
# timestamp type as Hudi 1.x keeps it, where 0.14/0.15 left it for every write to give again).
PERSISTED = (TIMESTAMP_TYPE, DATE_TIME_PARSER, SCALAR_UNIT, INPUT_FORMAT_DELIMITER, INPUT_FORMAT, INPUT_TIMEZONE, OUTPUT_FORMAT,
             OUTPUT_TIMEZONE, TIMEZONE)

UNIT_MS = {  # milliseconds per unit, as (multiplier, divisor)
    "NANOSECONDS": (1, 1_000_000),
    "MICROSECONDS": (1, 1_000),
    "MILLISECONDS": (1, 1),
    "SECONDS": (1_000, 1),
    "MINUTES": (60_000, 1),
    "HOURS": (3_600_000, 1),
    "DAYS": (86_400_000, 1),
}


class TimestampType(enum.Enum):
    """`hoodie.keygen.timebased.timestamp.type`."""

    UNIX_TIMESTAMP = "UNIX_TIMESTAMP"
    DATE_STRING = "DATE_STRING"
    MIXED = "MIXED"
    EPOCHMILLISECONDS = "EPOCHMILLISECONDS"
    EPOCHMICROSECONDS = "EPOCHMICROSECONDS"
    SCALAR = "SCALAR"


def option(options: Mapping[str, str], key: str) -> str | None:
    """A key generator option by its name or its legacy `hoodie.deltastreamer.` name."""
    for name in (key, key.replace(PREFIX, LEGACY_PREFIX) if key.startswith(PREFIX) else
                 LEGACY_DATE_TIME_PARSER if key == DATE_TIME_PARSER else key):
        value = options.get(name)
        if value is not None:
            return str(value)
    return None


@dataclass(frozen=True, slots=True)
class TimestampPartitioning:
    """How a timestamp-based key generator turns a column into partition values."""

    timestamp_type: TimestampType
    output_format: str
    unit: str | None = None
    """TimeUnit name numbers are counted in (None for DATE_STRING and MIXED)."""
    input_formats: tuple[str, ...] = ()
    input_zone: str | None = None
    output_zone: str | None = None
    consistent_logical_timestamps: bool = False

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> TimestampPartitioning:
        """The settings of `options` (a write's options merged over the table's properties).

        Raises:
            InvalidArgumentError: a required option is missing or a value is not understood.
        """
        raw_type = (option(options, TIMESTAMP_TYPE) or "").strip().upper()
        if not raw_type:
            raise InvalidArgumentError(
                f"option {TIMESTAMP_TYPE} is required by the timestamp-based key generator (one of "
                f"{', '.join(t.value for t in TimestampType)}); tables written by Hudi 0.14/0.15 do not record it "
                "in hoodie.properties, so every write to them gives it"
            )
        try:
            kind = TimestampType(raw_type)
        except ValueError:
            raise InvalidArgumentError(
                f"{TIMESTAMP_TYPE}={raw_type} is not one of {', '.join(t.value for t in TimestampType)}"
            ) from None
        parser = (option(options, DATE_TIME_PARSER) or DEFAULT_PARSER).strip()
        if parser != DEFAULT_PARSER:
            raise InvalidArgumentError(f"{DATE_TIME_PARSER}={parser} is not supported; only {DEFAULT_PARSER} is")
        output = option(options, OUTPUT_FORMAT) or ""
        if not output.strip():
            raise InvalidArgumentError(f"option {OUTPUT_FORMAT} is required by the timestamp-based key generator")
        _checked_pattern(output, OUTPUT_FORMAT)
        unit = _unit(kind, options)
        formats: tuple[str, ...] = ()
        if kind in (TimestampType.DATE_STRING, TimestampType.MIXED):
            listed = option(options, INPUT_FORMAT) or ""
            delimiter = option(options, INPUT_FORMAT_DELIMITER) or ","
            formats = tuple(f.strip() for f in re.split(delimiter, listed) if f.strip()) if listed.strip() else ()
            if not formats:
                raise InvalidArgumentError(f"option {INPUT_FORMAT} is required when {TIMESTAMP_TYPE}={kind.value}")
            for pattern in formats:
                _checked_pattern(pattern, INPUT_FORMAT, parsed=True)
        both = option(options, TIMEZONE)
        input_zone = _zone(both if both is not None else option(options, INPUT_TIMEZONE),
                           TIMEZONE if both is not None else INPUT_TIMEZONE)
        output_zone = _zone(both if both is not None else option(options, OUTPUT_TIMEZONE),
                            TIMEZONE if both is not None else OUTPUT_TIMEZONE)
        consistent = (options.get(CONSISTENT_LOGICAL_TIMESTAMP) or "false").strip().lower()
        if consistent not in ("true", "false"):
            raise InvalidArgumentError(f"{CONSISTENT_LOGICAL_TIMESTAMP}={consistent!r} must be true or false")
        return cls(kind, output, unit, formats, input_zone, output_zone, consistent == "true")

    def values(self, column: pa.Array | pa.ChunkedArray, field: str) -> pa.Array:
        """Formatted partition values of `column` (the field `field`), one per row, never null."""
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        kind = column.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            return self._from_strings(column.cast(pa.string()), field)
        millis = self._numbers_to_millis(column, field)
        return DatePattern(self.output_format).format(millis, self.output_zone or default_zone())

    # -- numbers ------------------------------------------------------------------------------

    def _numbers_to_millis(self, column: pa.Array, field: str) -> pa.Array:
        kind = column.type
        if self.unit is None:
            raise InvalidArgumentError(
                f"partition field {field!r} holds {kind} values, but {TIMESTAMP_TYPE}="
                f"{self.timestamp_type.value} reads date strings",
                column=field,
            )
        if pa.types.is_timestamp(kind):
            if self.consistent_logical_timestamps:
                stamps = column.cast(pa.timestamp("ms", tz=kind.tz), safe=False).cast(pa.int64())
                return pc.fill_null(stamps, self._to_millis(np.array([1], np.int64))[0])
            raw = column.cast(pa.int64())
        elif pa.types.is_date32(kind):
            raw = column.cast(pa.int32()).cast(pa.int64())
        elif pa.types.is_integer(kind):
            raw = column.cast(pa.int64())
        elif pa.types.is_floating(kind):
            values = np.nan_to_num(np.asarray(column.to_numpy(zero_copy_only=False), np.float64))
            missing = np.asarray(column.is_null().to_numpy(zero_copy_only=False), bool)
            raw = pa.array(np.trunc(np.clip(values, -9.2e18, 9.2e18)).astype(np.int64), mask=missing)
        elif pa.types.is_decimal(kind):
            raw = pc.cast(column, pa.int64(), safe=False)
        else:
            raise InvalidArgumentError(
                f"partition field {field!r} holds {kind} values, which the timestamp-based key generator "
                "cannot read as a time",
                column=field,
            )
        numbers = np.asarray(pc.fill_null(raw, 1).to_numpy(zero_copy_only=False), np.int64)
        return pa.array(self._to_millis(numbers), pa.int64())

    def _to_millis(self, numbers: np.ndarray) -> np.ndarray:
        assert self.unit is not None
        multiplier, divisor = UNIT_MS[self.unit]
        if divisor > 1:  # Java's TimeUnit.convert truncates toward zero
            return np.where(numbers >= 0, numbers // divisor, -((-numbers) // divisor))
        return numbers * multiplier

    # -- strings ------------------------------------------------------------------------------

    def _from_strings(self, column: pa.Array, field: str) -> pa.Array:
        if not self.input_formats:
            raise InvalidArgumentError(
                f"partition field {field!r} holds strings: set {INPUT_FORMAT} and {TIMESTAMP_TYPE}=DATE_STRING "
                "to read them as dates",
                column=field,
            )
        if column.null_count:
            column = pc.fill_null(column, self._null_stand_in())
        sample = column.slice(0, 10_000)
        if len(pc.unique(sample)) > len(sample) // 2:  # mostly distinct values: no use finding repeats
            return self._format_strings(column, field)
        uniques = pc.unique(column)
        return pc.take(self._format_strings(uniques, field), pc.index_in(column, uniques))

    def _format_strings(self, strings: pa.Array, field: str) -> pa.Array:
        millis, own_offsets = self._parse(strings, field)
        pattern = DatePattern(self.output_format)
        zone = self.output_zone or self.input_zone
        if zone is not None:
            formatted = pattern.format(pa.array(millis, pa.int64()), zone)
        else:  # each value prints in the zone it was read in: its own offset, else the default zone
            keys = np.unique(own_offsets)
            if len(keys) == 1:
                formatted = pattern.format(pa.array(millis, pa.int64()), _zone_of_offset(int(keys[0])))
            else:
                out = np.empty(len(strings), dtype=object)
                for key in keys:
                    rows = np.flatnonzero(own_offsets == key)
                    out[rows] = pattern.format(pa.array(millis[rows], pa.int64()),
                                               _zone_of_offset(int(key))).to_numpy(zero_copy_only=False)
                formatted = pa.array(out, pa.string())
        return formatted

    def _null_stand_in(self) -> str:
        """What Hudi reads for a null date string: the instant 1 ms printed in the first input format."""
        zone = self.input_zone or self.output_zone or "UTC"
        return DatePattern(self.input_formats[0]).format(pa.array([1], pa.int64()), zone)[0].as_py()

    def _parse(self, strings: pa.Array, field: str) -> tuple[np.ndarray, np.ndarray]:
        """(epoch ms, offset the value spelled or NO_OFFSET) of each string, by the first input
        format that reads it."""
        n = len(strings)
        millis = np.zeros(n, np.int64)
        own = np.full(n, NO_OFFSET, np.int64)
        todo = np.ones(n, bool)
        for text in self.input_formats:
            if not todo.any():
                break
            pattern = DatePattern(text)
            rows = np.flatnonzero(todo)
            subset = strings if len(rows) == n else strings.take(pa.array(rows))
            parsed, offsets = pattern.parse(subset, self.input_zone)
            hit = np.asarray(parsed.is_valid().to_numpy(zero_copy_only=False), bool)
            found = rows[hit]
            millis[found] = np.asarray(pc.fill_null(parsed, 0).to_numpy(zero_copy_only=False), np.int64)[hit]
            if pattern.has_offset:
                own[found] = np.asarray(pc.fill_null(offsets, 0).to_numpy(zero_copy_only=False), np.int64)[hit]
            todo[found] = False
        if todo.any():
            bad = strings[int(np.flatnonzero(todo)[0])].as_py()
            raise InvalidArgumentError(
                f"partition field {field!r}: the value {bad!r} matches none of the input date formats "
                f"{', '.join(self.input_formats)} ({INPUT_FORMAT}), or names a local time that does not exist "
                "in the input zone",
                column=field,
            )
        return millis, own


NO_OFFSET = np.iinfo(np.int64).min  # a parsed value that spelled no offset


def _zone_of_offset(offset_ms: int) -> str:
    """The zone a parsed value prints in (no output zone set): its own offset, else the default zone."""
    if offset_ms == NO_OFFSET:
        return default_zone()
    if offset_ms == 0:
        return "UTC"
    sign, minutes = ("-" if offset_ms < 0 else "+"), abs(offset_ms) // 60000
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def persisted_properties(options: Mapping[str, str]) -> dict[str, str]:
    """The timestamp key generator settings of `options` Hudi writes into hoodie.properties."""
    found = {key: option(options, key) for key in PERSISTED}
    return {key: value for key, value in found.items() if value is not None}


def _checked_pattern(pattern: str, key: str, *, parsed: bool = False) -> DatePattern:
    try:
        checked = DatePattern(pattern)
        if parsed:
            checked.check_parseable()
        return checked
    except DatePatternError as exc:
        raise InvalidArgumentError(f"{key}: {exc}") from None


def _zone(value: str | None, key: str) -> str | None:
    if value is None or not value.strip():
        return None
    try:
        return java_zone(value)
    except DatePatternError as exc:
        raise InvalidArgumentError(f"{key}: {exc}") from None


def _unit(kind: TimestampType, options: Mapping[str, str]) -> str | None:
    if kind is TimestampType.EPOCHMILLISECONDS:
        return "MILLISECONDS"
    if kind is TimestampType.EPOCHMICROSECONDS:
        return "MICROSECONDS"
    if kind is TimestampType.UNIX_TIMESTAMP:
        return "SECONDS"
    if kind is TimestampType.SCALAR:
        unit = (option(options, SCALAR_UNIT) or "SECONDS").strip().upper()
        if unit not in UNIT_MS:
            raise InvalidArgumentError(f"{SCALAR_UNIT}={unit} is not one of {', '.join(UNIT_MS)}")
        return unit
    return None
