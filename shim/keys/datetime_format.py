"""Joda-Time date patterns (what Hudi's timestamp-based key generator formats and parses with),
applied to whole Arrow arrays.

`DatePattern(text)` reads a pattern such as `yyyy/MM/dd` or `yyyy-MM-dd'T'HH:mm:ss.SSSZ`:
`format(millis, zone)` turns epoch milliseconds into strings as Joda's `DateTime.toString`
does (English names), and `parse(strings, zone)` reads strings back into epoch milliseconds
as a Joda parser does. Letters this module does not know are refused, never guessed.
Zones are IANA names, `UTC`/`GMT`, `GMT+hh:mm`, or fixed offsets `+hh:mm`.
"""

from __future__ import annotations

import datetime
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shim.errors import InvalidArgumentError
from shim.keys.calendar import days_from_civil, days_in_month

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
# Letters whose value is a number (padded to the letter count when printed).
_NUMERIC = set("yYuCxwDdHkKhmseS")
_TEXT_OR_NUMBER = {"M"}  # numeric below three letters, a name from three on
_KNOWN = _NUMERIC | _TEXT_OR_NUMBER | set("GaEZ")
_PARSEABLE = set("yYuMdHkKhmsSaEZG")
_FIELD_OF = {"M": "month", "d": "day", "H": "hour", "k": "hour", "K": "hour", "h": "hour", "m": "minute",
             "s": "second"}  # letters a parsed pattern may hold (names and eras are matched, not used)
_GMT_OFFSET = re.compile(r"^(?:GMT|UTC)([+-])(\d{1,2})(?::?(\d{2}))?$")


class DatePatternError(InvalidArgumentError):
    """A date pattern, a zone or a value that does not fit its pattern."""


@dataclass(frozen=True, slots=True)
class _Token:
    letter: str  # "" for literal text
    count: int
    text: str = ""


def tokenize(pattern: str) -> tuple[_Token, ...]:
    """Joda's reading of a pattern: runs of one letter, and literal text ('quoted' or not)."""
    tokens: list[_Token] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "'":
            end = i + 1
            text = []
            while end < len(pattern):
                if pattern[end] == "'":
                    if end + 1 < len(pattern) and pattern[end + 1] == "'":
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            else:
                if end != i + 1:
                    raise DatePatternError(f"date pattern {pattern!r}: unterminated quote")
            tokens.append(_Token("", 0, "".join(text) if end > i + 1 else "'"))
            i = end + 1
        elif ch.isascii() and ch.isalpha():
            end = i
            while end < len(pattern) and pattern[end] == ch:
                end += 1
            if ch not in _KNOWN:
                raise DatePatternError(f"date pattern {pattern!r}: the letter {ch!r} is not supported")
            tokens.append(_Token(ch, end - i))
            i = end
        else:
            tokens.append(_Token("", 0, ch))
            i += 1
    return tuple(tokens)


@lru_cache(maxsize=64)
def java_zone(zone_id: str) -> str:
    """The Arrow time zone of a Java zone id (`UTC`, `GMT`, `GMT+8`, `Asia/Kolkata`, `+05:30`)."""
    text = zone_id.strip()
    if text.upper() in ("UTC", "GMT", "Z", "UT"):
        return "UTC"
    match = _GMT_OFFSET.match(text) or re.match(r"^([+-])(\d{2}):?(\d{2})$", text)
    if match:
        sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if hours > 18 or minutes > 59:
            raise DatePatternError(f"time zone {zone_id!r} is out of range")
        return f"{sign}{hours:02d}:{minutes:02d}"
    if text in available_timezones():
        return text
    raise DatePatternError(f"unknown time zone {zone_id!r}; give an IANA name (Europe/Paris), UTC or GMT+hh:mm")


@lru_cache(maxsize=1)
def default_zone() -> str:
    """The zone a JVM on this machine would take as its default (TZ, else /etc/localtime), else UTC."""
    candidate = os.environ.get("TZ", "").lstrip(":")
    if not candidate:
        target = os.path.realpath("/etc/localtime")
        marker = "/zoneinfo/"
        candidate = target.split(marker, 1)[1] if marker in target else ""
    try:
        return java_zone(candidate) if candidate else "UTC"
    except DatePatternError:
        return "UTC"


class DatePattern:
    """One Joda pattern, to format epoch milliseconds and to parse strings."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.has_offset = any(t.letter == "Z" for t in self.tokens)
        self._regex: str | None = None

    def __repr__(self) -> str:
        return f"DatePattern({self.text!r})"

    # -- formatting ---------------------------------------------------------------------------

    def format(self, millis: pa.Array, zone: str) -> pa.Array:
        """Strings of `millis` (int64 epoch milliseconds, no nulls) in `zone`."""
        utc = np.asarray(millis.cast(pa.int64()).to_numpy(zero_copy_only=False), np.int64)
        offsets = utc_offsets(utc, zone)
        local = utc + offsets  # wall-clock time in `zone`
        unit = self._printed_unit()
        if unit is not None and len(local) > 1024:
            # Rows print the same within a day (an hour, a minute...): print each such time once.
            periods = pa.array(np.floor_divide(local, unit), pa.int64())
            distinct = pc.unique(periods)
            if len(distinct) * 4 < len(local):
                starts = np.asarray(distinct.to_numpy(zero_copy_only=False), np.int64) * unit
                printed = self._format_local(starts, np.zeros(len(starts), np.int64), zone)
                return pc.take(printed, pc.index_in(periods, distinct))
        return self._format_local(local, offsets, zone)

    def _printed_unit(self) -> int | None:
        """The span (ms) of wall-clock time within which every time prints alike; None when the
        pattern prints offsets or fractions (or the span is a millisecond)."""
        letters = {t.letter for t in self.tokens if t.letter}
        if letters & {"Z", "S"}:
            return None
        for group, span in (("s", 1_000), ("m", 60_000), ("HkKha", 3_600_000)):
            if letters & set(group):
                return span
        return 86_400_000

    def _format_local(self, local: np.ndarray, offsets: np.ndarray, zone: str) -> pa.Array:
        stamps = pa.array(local, pa.int64()).cast(pa.timestamp("ms"))
        n = len(local)
        parts: list[pa.Array | str] = []
        for token in self.tokens:
            if not token.letter:
                parts.append(token.text)
            else:
                parts.append(self._field(token, stamps, offsets, zone))
        if not parts:
            return pa.array([""] * n, pa.string())
        if all(isinstance(p, str) for p in parts):
            return pa.array(["".join(str(p) for p in parts)] * n, pa.string())
        return pc.binary_join_element_wise(*parts, "")

    def _field(self, token: _Token, stamps: pa.Array, offsets: np.ndarray, zone: str) -> pa.Array | str:
        letter, count = token.letter, token.count
        if letter in "yYu":
            year = pc.year(stamps)
            return _padded(pc.subtract(year, pc.multiply(pc.divide(year, 100), 100)), 2) if count == 2 \
                else _padded(year, count)
        if letter == "C":
            return _padded(pc.divide(pc.year(stamps), 100), count)
        if letter == "x":
            year = pc.iso_year(stamps)
            return _padded(pc.subtract(year, pc.multiply(pc.divide(year, 100), 100)), 2) if count == 2 \
                else _padded(year, count)
        if letter == "w":
            return _padded(pc.iso_week(stamps), count)
        if letter == "M":
            month = pc.month(stamps)
            if count >= 3:
                names = [m[:3] if count == 3 else m for m in MONTHS]
                return pc.take(pa.array(names), pc.subtract(month, 1))
            return _padded(month, count)
        if letter == "d":
            return _padded(pc.day(stamps), count)
        if letter == "D":
            return _padded(pc.day_of_year(stamps), count)
        if letter in "HkKh":
            hour = pc.hour(stamps)
            if letter == "k":
                hour = pc.if_else(pc.equal(hour, 0), 24, hour)
            elif letter == "K":
                hour = pc.subtract(hour, pc.multiply(pc.divide(hour, 12), 12))
            elif letter == "h":
                hour12 = pc.subtract(hour, pc.multiply(pc.divide(hour, 12), 12))
                hour = pc.if_else(pc.equal(hour12, 0), 12, hour12)
            return _padded(hour, count)
        if letter == "m":
            return _padded(pc.minute(stamps), count)
        if letter == "s":
            return _padded(pc.second(stamps), count)
        if letter == "S":
            milli = pc.millisecond(stamps)
            if count <= 3:
                return _padded(pc.divide(milli, 10 ** (3 - count)), count)
            return pc.binary_join_element_wise(_padded(milli, 3), "0" * (count - 3), "")
        if letter == "e":
            return _padded(pc.day_of_week(stamps, count_from_zero=False, week_start=1), count)
        if letter == "E":
            day = pc.day_of_week(stamps, count_from_zero=True, week_start=1)
            return pc.take(pa.array([d[:3] if count < 4 else d for d in WEEKDAYS]), day)
        if letter == "a":
            return pc.if_else(pc.less(pc.hour(stamps), 12), "AM", "PM")
        if letter == "G":
            return pc.if_else(pc.greater(pc.year(stamps), 0), "AD", "BC")
        if letter == "Z":
            if count >= 3:
                return zone
            return _offsets(offsets, colon=count == 2)
        raise DatePatternError(f"date pattern {self.text!r}: the letter {letter!r} is not supported")

    # -- parsing ------------------------------------------------------------------------------

    def check_parseable(self) -> None:
        """Raise DatePatternError when `parse` cannot read strings of this pattern."""
        unparseable = sorted({t.letter for t in self.tokens if t.letter and t.letter not in _PARSEABLE})
        if unparseable:
            raise DatePatternError(f"date pattern {self.text!r}: cannot parse with the letter {unparseable[0]!r}")

    def _parse_regex(self) -> str:
        """A whole-string, case-insensitive (as Joda matches) expression, one group per field."""
        if self._regex is None:
            pieces = []
            for i, token in enumerate(self.tokens):
                if not token.letter:
                    pieces.append(re.escape(token.text))
                    continue
                following = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
                adjacent = following is not None and following.letter in _NUMERIC | (
                    _TEXT_OR_NUMBER if following.count < 3 else set())
                pieces.append(f"(?P<f{i}>{_field_regex(token, adjacent)})")
            self._regex = f"(?i)^(?:{''.join(pieces)})$"
        return self._regex

    def parse(self, strings: pa.Array, zone: str | None) -> tuple[pa.Array, pa.Array]:
        """(epoch milliseconds, offset in ms or null) of each string; null where it does not match.

        A string's own offset (letter Z) decides its instant; otherwise it is local time in `zone`
        (the JVM's default zone when None)."""
        self.check_parseable()
        n = len(strings)
        fields = {"year": 1970, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "milli": 0}
        values: dict[str, np.ndarray] = {k: np.full(n, v, np.int64) for k, v in fields.items()}
        pm: np.ndarray | None = None
        offset: np.ndarray | None = None
        fixed = self._read_fixed(strings, values)
        if fixed is not None:
            ok, offset = fixed
        else:
            texts, ok = self._field_texts(strings)
            for i, text in texts.items():
                token = self.tokens[i]
                self._read_field(token, text, values, n)
                if token.letter == "a":
                    pm = np.asarray(pc.equal(pc.utf8_upper(text), "PM").to_numpy(zero_copy_only=False))
                elif token.letter == "Z":
                    offset = _parse_offsets(text)
        if pm is not None:
            hour = values["hour"] % 12
            values["hour"] = np.where(pm, hour + 12, hour)
        days = days_from_civil(values["year"], values["month"], values["day"])
        local = (((days * 24 + values["hour"]) * 60 + values["minute"]) * 60 + values["second"]) * 1000 \
            + values["milli"]
        valid = ok & (values["month"] >= 1) & (values["month"] <= 12) & (values["day"] >= 1) \
            & (values["day"] <= days_in_month(values["year"], values["month"])) & (values["hour"] < 24) \
            & (values["minute"] < 60) & (values["second"] < 60)
        if offset is not None:
            instants = local - offset
            offsets = pa.array(offset, pa.int64(), mask=~valid)
        else:
            instants, exists = local_to_utc(np.where(valid, local, 0), zone or default_zone())
            valid &= exists
            offsets = pa.nulls(n, pa.int64())
        return pa.array(instants, pa.int64(), mask=~valid), offsets

    def _field_texts(self, strings: pa.Array) -> tuple[dict[int, pa.Array], np.ndarray]:
        """Each field's text per string ("" where it does not match), and which strings match."""
        if not any(t.letter for t in self.tokens):
            literal = "".join(t.text for t in self.tokens)
            return {}, np.asarray(pc.equal(strings, literal).to_numpy(zero_copy_only=False), bool)
        found = _extract(strings, self._parse_regex())
        texts = {i: pc.fill_null(found.field(f"f{i}"), "") for i, t in enumerate(self.tokens) if t.letter}
        return texts, np.asarray(found.is_valid().to_numpy(zero_copy_only=False), bool)

    def _fixed_layout(self) -> list[tuple[int, int, int]] | None:
        """(token, start, end) of every token when each has one width (`yyyy`, `MM`, `SSS`... and
        a last offset `Z`, whose end is the string's); None otherwise."""
        layout, at = [], 0
        for i, token in enumerate(self.tokens):
            if not token.letter:
                width = len(token.text)
            elif token.letter == "Z" and token.count <= 2 and i == len(self.tokens) - 1:
                layout.append((i, at, -1))
                return layout
            elif token.letter in "yYu" and token.count == 4 or token.letter == "S" or \
                    token.letter in "MdHkKhms" and token.count == 2:
                width = token.count
            else:
                return None
            layout.append((i, at, at + width))
            at += width
        return layout

    def _read_fixed(self, strings: pa.Array, values: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray | None] | None:
        """Fill `values` from strings that all fit the fixed layout, reading their bytes in place
        (far cheaper than a regular expression): (all true, offsets or None). None, touching
        nothing, when the pattern has no fixed layout or some string does not fit it."""
        layout = self._fixed_layout()
        n = len(strings)
        if layout is None or not n or strings.null_count or not pa.types.is_string(strings.type):
            return None
        bounds = np.frombuffer(strings.buffers()[1], np.int32)[strings.offset:strings.offset + n + 1]
        data = np.concatenate([np.frombuffer(strings.buffers()[2], np.uint8), np.zeros(8, np.uint8)])
        starts, lengths = bounds[:-1].astype(np.int64), np.diff(bounds).astype(np.int64)
        zoned = layout[-1][2] == -1
        width = layout[-1][1] if zoned else layout[-1][2]
        fits = lengths >= width if zoned else lengths == width
        if not fits.all():
            return None
        needed = width + 6 if zoned else width  # an offset takes up to 6 bytes
        length = int(lengths[0])
        if (lengths == length).all() and (np.diff(starts) == length).all():
            # One length, one after the other: the bytes form a grid as they lie.
            grid = data[int(starts[0]):int(starts[0]) + n * length].reshape(n, length)
            if length < needed:
                grid = np.pad(grid, ((0, 0), (0, needed - length)))
        else:
            grid = np.stack([data[starts + k] for k in range(needed)], axis=1)
        read: dict[str, np.ndarray] = {}
        offset = None
        for i, start, end in layout:
            token = self.tokens[i]
            if not token.letter:
                expected = token.text.encode("ascii", "replace")
                for k, byte in enumerate(expected):
                    column = grid[:, start + k]
                    fits &= (column == byte) | (column == ord(chr(byte).swapcase()))
                continue
            if end == -1:
                offset, good = _offsets_at(grid[:, start:start + 6], lengths - start)
                fits &= good
                continue
            number = np.zeros(n, np.int64)
            for k in range(start, end):
                digit = grid[:, k] - np.uint8(48)  # bytes below '0' wrap around past 9
                fits &= digit <= 9
                number = number * 10 + digit
            if token.letter == "S":
                read["milli"] = _fraction_to_millis(number, np.full(n, end - start, np.int64))
            else:
                read["year" if token.letter in "yYu" else _FIELD_OF[token.letter]] = \
                    number % 24 if token.letter == "k" else number
        if not fits.all():
            return None
        values.update(read)
        return fits, offset

    def _read_field(self, token: _Token, text: pa.Array, values: dict[str, np.ndarray], n: int) -> None:
        letter, count = token.letter, token.count
        if letter in ("a", "Z", "E", "G"):
            return
        if letter == "M" and count >= 3:
            lowered = pc.utf8_lower(text)
            month = np.zeros(n, np.int64)
            for number, name in enumerate(MONTHS, start=1):
                hit = np.asarray(pc.or_(pc.equal(lowered, name.lower()),
                                        pc.equal(lowered, name[:3].lower())).to_numpy(zero_copy_only=False))
                month[hit] = number
            values["month"] = month
            return
        digits = _to_int(text)
        if letter == "S":
            width = pc.utf8_length(text).to_numpy(zero_copy_only=False)
            values["milli"] = _fraction_to_millis(digits, np.asarray(width, np.int64))
        elif letter in "yYu":
            width = np.asarray(pc.utf8_length(text).to_numpy(zero_copy_only=False), np.int64)
            values["year"] = np.where(width == 2, _two_digit_year(digits), digits) if count == 2 else digits
        else:
            values[_FIELD_OF[letter]] = digits % 24 if letter == "k" else digits


# Arrow's zone rules stop at the last transition the zone files list (2037); later instants
# follow the zone's recurring rule through Python's zoneinfo, as Java's do.
_ARROW_RULES_UNTIL = 2114380800000  # 2037-01-01T00:00Z
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def fixed_offset_ms(zone: str) -> int | None:
    """The offset (ms) of a zone that never changes it (UTC, +hh:mm); None for a zone with rules."""
    if zone == "UTC":
        return 0
    if zone[0] in "+-":
        return (-1 if zone[0] == "-" else 1) * (int(zone[1:3]) * 60 + int(zone[4:6])) * 60000
    return None


def utc_offsets(utc_ms: np.ndarray, zone: str) -> np.ndarray:
    """The offset from UTC (ms) of `zone` at each instant."""
    fixed = fixed_offset_ms(zone)
    if fixed is not None:
        return np.full(len(utc_ms), fixed, np.int64)
    zoned = pa.array(utc_ms, pa.int64()).cast(pa.timestamp("ms")).cast(pa.timestamp("ms", tz=zone))
    local = np.asarray(pc.local_timestamp(zoned).cast(pa.int64()).to_numpy(zero_copy_only=False), np.int64)
    offsets = local - utc_ms
    late = np.flatnonzero(utc_ms >= _ARROW_RULES_UNTIL)
    if len(late):
        rules = ZoneInfo(zone)
        for i in late:
            moment = _EPOCH_UTC + datetime.timedelta(milliseconds=int(utc_ms[i]))
            offset = moment.astimezone(rules).utcoffset() or datetime.timedelta(0)
            offsets[i] = int(offset.total_seconds() * 1000)
    return offsets


def local_to_utc(local_ms: np.ndarray, zone: str) -> tuple[np.ndarray, np.ndarray]:
    """(instants, whether each local time exists) of wall-clock times in `zone`; of two instants
    with one local time the earlier, as Joda picks; times skipped by a transition do not exist."""
    fixed = fixed_offset_ms(zone)
    if fixed is not None:
        return local_ms - fixed, np.ones(len(local_ms), bool)
    naive = pa.array(local_ms, pa.int64()).cast(pa.timestamp("ms"))
    early = pc.assume_timezone(naive, timezone=zone, ambiguous="earliest", nonexistent="earliest")
    late = pc.assume_timezone(naive, timezone=zone, ambiguous="earliest", nonexistent="latest")
    instants = np.asarray(early.cast(pa.int64()).to_numpy(zero_copy_only=False), np.int64)
    exists = np.asarray(pc.equal(early, late).to_numpy(zero_copy_only=False), bool)
    far = np.flatnonzero(local_ms >= _ARROW_RULES_UNTIL)
    if len(far):
        rules = ZoneInfo(zone)
        for i in far:
            wall = _EPOCH + datetime.timedelta(milliseconds=int(local_ms[i]))
            first = wall.replace(tzinfo=rules, fold=0)
            back = first.astimezone(datetime.UTC).astimezone(rules).replace(tzinfo=None)
            exists[i] = back == wall
            offset = first.utcoffset()
            instants[i] = int(local_ms[i]) - (int(offset.total_seconds() * 1000) if offset is not None else 0)
    return instants, exists


def _extract(strings: pa.Array, pattern: str) -> pa.StructArray:
    found = pc.extract_regex(strings, pattern=pattern)
    return found.combine_chunks() if isinstance(found, pa.ChunkedArray) else found


def _field_regex(token: _Token, adjacent: bool) -> str:
    letter, count = token.letter, token.count
    if letter == "M" and count >= 3:
        return "|".join(sorted({m for name in MONTHS for m in (name, name[:3])}, key=len, reverse=True))
    if letter == "E":
        return "|".join(sorted({d for name in WEEKDAYS for d in (name, name[:3])}, key=len, reverse=True))
    if letter == "a":
        return "AM|PM"
    if letter == "G":
        return "AD|BC"
    if letter == "Z":
        return r"Z|[+-]\d{2}:?\d{2}" if count < 3 else r"[A-Za-z_/+\-0-9:]+"
    if letter in "yYux":
        if count == 2:  # two digits (a pivot year), or any year when no number follows
            return r"\d{2}" if adjacent else r"\d{1,9}"
        return rf"\d{{1,{count}}}" if adjacent else r"\d{1,9}"
    most = {"S": 9, "D": 3}.get(letter, 2)
    return rf"\d{{1,{most}}}"


def _two_digit_year(digits: np.ndarray) -> np.ndarray:
    """Joda's two-digit years: within 50 years before to 49 after the current year."""
    base = datetime.date.today().year - 50
    return base + np.mod(digits - base, 100)


def _padded(numbers: pa.Array, width: int) -> pa.Array:
    text = numbers.cast(pa.int64()).cast(pa.string())
    return pc.utf8_lpad(text, width=width, padding="0") if width > 1 else text


def _offsets(offset_ms: np.ndarray, *, colon: bool) -> pa.Array:
    minutes = offset_ms // 60000
    sign = np.where(minutes < 0, "-", "+")
    absolute = np.abs(minutes)
    sep = ":" if colon else ""
    return pa.array([f"{s}{m // 60:02d}{sep}{m % 60:02d}" for s, m in zip(sign, absolute, strict=True)],
                    pa.string())


def _parse_offsets(text: pa.Array) -> np.ndarray:
    """Milliseconds east of UTC of offsets written `Z`, `+hhmm` or `+hh:mm`."""
    bare = pc.replace_substring(text, ":", "")
    utc = pc.or_(pc.equal(pc.utf8_upper(bare), "Z"), pc.equal(bare, ""))
    signed = pc.if_else(utc, "+0000", bare)
    sign = np.where(np.asarray(pc.starts_with(signed, "-").to_numpy(zero_copy_only=False), bool), -1, 1)
    hours = _to_int(pc.utf8_slice_codeunits(signed, 1, 3))
    minutes = _to_int(pc.utf8_slice_codeunits(signed, 3, 5))
    return sign * (hours * 60 + minutes) * 60000


def _offsets_at(grid: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (ms) written `Z`, `+hhmm` or `+hh:mm` at the start of each row of bytes (`lengths`:
    the offset text's length), and which rows hold one."""
    digit = [grid[:, k] - np.uint8(48) for k in range(6)]  # bytes below '0' wrap around past 9
    is_digit = [d <= 9 for d in digit]
    hours = digit[1].astype(np.int64) * 10 + digit[2]
    compact = (lengths == 5) & is_digit[1] & is_digit[2] & is_digit[3] & is_digit[4]
    colon = (lengths == 6) & is_digit[1] & is_digit[2] & (grid[:, 3] == ord(":")) & is_digit[4] & is_digit[5]
    minutes = np.where(colon, digit[4].astype(np.int64) * 10 + digit[5], digit[3].astype(np.int64) * 10 + digit[4])
    signed = (grid[:, 0] == ord("+")) | (grid[:, 0] == ord("-"))
    utc = (lengths == 1) & ((grid[:, 0] == ord("Z")) | (grid[:, 0] == ord("z")))
    sign = np.where(grid[:, 0] == ord("-"), -1, 1)
    return np.where(utc, 0, sign * (hours * 60 + minutes) * 60000), utc | (signed & (compact | colon))


def _to_int(text: pa.Array) -> np.ndarray:
    cleaned = pc.if_else(pc.equal(text, ""), "0", text)
    return np.asarray(cleaned.cast(pa.int64()).to_numpy(zero_copy_only=False), np.int64)


def _fraction_to_millis(digits: np.ndarray, width: np.ndarray) -> np.ndarray:
    scale = np.power(10, np.clip(3 - width, -18, 3)).astype(np.float64)
    return np.floor(digits * scale).astype(np.int64)
