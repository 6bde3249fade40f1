"""What a date partition says about its rows: the range of source values whose formatted time
gives that partition (timestamp-based and custom key generators over numeric columns).

A partition `2024/03/01` of `yyyy/MM/dd` holds rows whose time fell on that day in the key
generator's zone; read back in the column's unit (epoch seconds, milliseconds, a scalar unit),
that is a range a filter such as `millis >= ... AND millis < ...` can rule out. Ranges are widened
(after, by any fall of the zone's offset within the period; by a unit for truncation), so they
never exclude a row that is there.
Only patterns that truncate a time (years, months, days, hours, minutes, seconds, fractions,
each coarser unit present) give ranges; strings and other types give none (the partition is read).
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import unquote

import numpy as np
import pyarrow as pa

from shim.errors import HudiShimError
from shim.filters.partition import ValueRange
from shim.keys.datetime_format import DatePattern, default_zone, fixed_offset_ms, utc_offsets
from shim.keys.partition_scheme import PartitionScheme, scheme_of_table
from shim.keys.timestamp_keygen import UNIT_MS
from shim.properties import TableConfig

_DAY_MS = 86_400_000
_HOUR_MS = 3_600_000
_SLACK_MS = 26 * _HOUR_MS
_PERIOD_MS = {"y": 366 * _DAY_MS, "M": 31 * _DAY_MS, "d": _DAY_MS, "H": 3_600_000, "m": 60_000, "s": 1_000}
_HIERARCHY = "yMdHmsS"


def partition_ranges(partition_path: str, config: TableConfig, schema: pa.Schema) -> dict[str, ValueRange]:
    """Per timestamp partition field with a numeric source (integer or floating, in `schema`),
    the values its rows may hold."""
    scheme = _scheme(config)
    if scheme is None or not scheme.timestamp_fields:
        return {}
    settings = scheme.timestamp
    assert settings is not None
    if settings.unit is None:  # date strings compare as text, not as times
        return {}
    pattern = _truncating_pattern(settings.output_format)
    if pattern is None:
        return {}
    values = split_partition_path(partition_path, scheme)
    if values is None:
        return {}
    multiplier, divisor = UNIT_MS[settings.unit]
    zone = settings.output_zone or default_zone()
    ranges: dict[str, ValueRange] = {}
    for name in scheme.timestamp_fields:
        start, _ = pattern.parse(pa.array([values[name]]), zone)
        if not start[0].is_valid:
            continue
        index = schema.get_field_index(name)
        kind = schema.field(index).type if index >= 0 else pa.null()
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            continue
        low, high = _bounds(start[0].as_py(), _period_ms(pattern), zone)
        if divisor > 1:  # milliseconds = value / divisor, truncated toward zero
            span = ((low - 1) * divisor + 1, (high + 1) * divisor - 1)
        else:  # milliseconds = value * multiplier
            span = (-(-low // multiplier), high // multiplier)
        if pa.types.is_floating(kind):  # fractions are cut off first
            span = (span[0] - 1, span[1] + 1)
        # A null value stands for the instant 1 (in the column's unit): only its partition holds nulls.
        ranges[name] = ValueRange(span[0], span[1], nullable=span[0] <= 1 <= span[1])
    return ranges


def _bounds(start_ms: int, period_ms: int, zone: str) -> tuple[int, int]:
    """First and last instants (ms) the rows of a period may have, given the instant its first
    local time maps to (the earlier one, where a zone repeats it). Local times map to instants in
    order, so rows start there; they end a period later, later still by as much as the zone's
    offset falls below its value at the start (the repeated hour when daylight saving ends)."""
    if fixed_offset_ms(zone) is not None:
        return start_ms, start_ms + period_ms - 1
    hourly = np.arange(start_ms, start_ms + period_ms + _SLACK_MS, _HOUR_MS, dtype=np.int64)
    offsets = utc_offsets(hourly, zone)
    fall = max(0, int(offsets[0] - offsets.min()))
    return start_ms, start_ms + period_ms + fall - 1


def split_partition_path(partition_path: str, scheme: PartitionScheme) -> dict[str, str] | None:
    """Field -> the value its part of the path spells (a date may span several folders)."""
    segments = partition_path.split("/")
    found: dict[str, str] = {}
    at = 0
    for name in scheme.fields:
        width = 1
        if name in scheme.timestamp_fields and not scheme.url_encode and scheme.timestamp is not None:
            width += sum(t.text.count("/") for t in DatePattern(scheme.timestamp.output_format).tokens if not t.letter)
        part = segments[at:at + width]
        at += width
        if len(part) < width:
            return None
        if scheme.hive_style:
            if not part[0].startswith(name + "="):
                return None
            part[0] = part[0][len(name) + 1:]
        value = "/".join(part)
        found[name] = unquote(value) if scheme.url_encode else value
    return found if at == len(segments) else None


@lru_cache(maxsize=64)
def _scheme_of(items: frozenset[tuple[str, str]], path: str) -> PartitionScheme | None:
    try:
        return scheme_of_table(TableConfig(dict(items), path))
    except HudiShimError:  # settings the table does not record (Hudi 0.15's timestamp type...)
        return None


def _scheme(config: TableConfig) -> PartitionScheme | None:
    if config.key_generator not in ("TIMESTAMP", "CUSTOM"):
        return None
    return _scheme_of(frozenset(config.raw.items()), config.path)


@lru_cache(maxsize=64)
def _truncating_pattern(text: str) -> DatePattern | None:
    """The pattern, when it prints a time truncated to its finest unit (and can read it back)."""
    pattern = DatePattern(text)
    letters = [t.letter for t in pattern.tokens if t.letter]
    if not letters or any(letter not in _HIERARCHY for letter in letters):
        return None
    if any(t.letter == "y" and t.count == 2 for t in pattern.tokens):
        return None
    used = set(letters)
    depth = max(_HIERARCHY.index(letter) for letter in used)
    if any(_HIERARCHY[i] not in used for i in range(depth + 1)):
        return None
    return pattern


def _period_ms(pattern: DatePattern) -> int:
    finest = max((t for t in pattern.tokens if t.letter), key=lambda t: _HIERARCHY.index(t.letter))
    if finest.letter == "S":
        return 10 ** max(0, 3 - finest.count)
    return _PERIOD_MS[finest.letter]
