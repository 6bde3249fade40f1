"""Joda date patterns over Arrow arrays, checked against Python's own calendar and zone rules."""

from __future__ import annotations

import datetime
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pytest

from shim.keys.datetime_format import DatePattern, DatePatternError, java_zone, tokenize

ZONES = ["UTC", "Europe/Paris", "Asia/Kolkata", "America/Los_Angeles", "+05:45"]
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _instants(seed: int, n: int = 400) -> list[int]:
    rng = np.random.default_rng(seed)
    spread = rng.integers(-2_000_000_000_000, 4_000_000_000_000, n).tolist()
    # Around the 2024 DST changes in Paris and Los Angeles, and the epoch.
    edges = [1711846800000 + d for d in (-1, 0, 1, 3_599_999, 3_600_000)] + [1730595600000 + d for d in (-1, 0, 1)]
    return spread + edges + [0, -1, 1]


def _zone(name: str) -> datetime.tzinfo:
    if name[0] in "+-":
        sign = -1 if name[0] == "-" else 1
        return datetime.timezone(sign * datetime.timedelta(hours=int(name[1:3]), minutes=int(name[4:6])))
    return ZoneInfo(name)


def _python(millis: int, zone: str, pattern: str) -> str:
    """What the pattern prints, built from Python's datetime fields (the independent oracle)."""
    moment = (EPOCH + datetime.timedelta(milliseconds=millis)).astimezone(_zone(zone))
    offset = moment.utcoffset()
    assert offset is not None
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    fields = {
        "yyyy": f"{moment.year:04d}", "yy": f"{moment.year % 100:02d}", "MMM": MONTHS[moment.month - 1],
        "MM": f"{moment.month:02d}", "M": str(moment.month), "dd": f"{moment.day:02d}", "HH": f"{moment.hour:02d}",
        "hh": f"{(moment.hour % 12) or 12:02d}", "mm": f"{moment.minute:02d}", "ss": f"{moment.second:02d}",
        "SSS": f"{moment.microsecond // 1000:03d}", "a": "AM" if moment.hour < 12 else "PM",
        "EEE": moment.strftime("%a"), "D": str(moment.timetuple().tm_yday),
        "ZZ": f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}",
        "Z": f"{sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}",
    }
    out = []
    for token in pattern.split("|"):
        out.append(fields.get(token, token.strip("'")))
    return "".join(out)


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("pattern", [
    "yyyy|/|MM|/|dd|/|HH",
    "yyyy|-|MM|-|dd|'T'|HH|:|mm|:|ss|.|SSS|Z",
    "EEE|, |M|/|D| |yy| |hh|:|mm| |a| |ZZ",
    "dd|-|MMM|-|yyyy",
])
def test_format_matches_pythons_calendar_in_every_zone(zone: str, pattern: str) -> None:
    values = _instants(len(zone) + len(pattern))
    joda = pattern.replace("|", "")
    got = DatePattern(joda).format(pa.array(values, pa.int64()), java_zone(zone)).to_pylist()
    expected = [_python(v, zone, pattern) for v in values]
    assert got == expected


def test_values_hudi_itself_wrote() -> None:
    # Partition paths of tables written by Apache Hudi (hudi-rs's test tables), from the rows in them.
    assert DatePattern("yyyy/MM/dd/HH").format(pa.array([1705311000000, 1705489200000]), "UTC").to_pylist() == \
        ["2024/01/15/09", "2024/01/17/11"]
    millis, offsets = DatePattern("yyyy-MM-dd'T'HH:mm:ss.SSSZ").parse(pa.array(["2023-04-04T13:01:00.123Z"]), None)
    assert offsets.to_pylist() == [0]
    assert DatePattern("yyyy/MM/dd/HH").format(millis, "UTC").to_pylist() == ["2023/04/04/13"]


def test_literals_quotes_and_padding() -> None:
    stamp = pa.array([datetime.datetime(2024, 3, 1, 7, 5, 9, 45000, tzinfo=datetime.UTC).timestamp() * 1000],
                     pa.float64()).cast(pa.int64())
    assert DatePattern("'year' yyyy, 'it''s' d.M H:m:s S SS SSSS").format(stamp, "UTC").to_pylist() == \
        ["year 2024, it's 1.3 7:5:9 0 04 0450"]
    assert DatePattern("''yyyy''").format(stamp, "UTC").to_pylist() == ["'2024'"]
    assert DatePattern("yyyyMMdd").format(stamp, "UTC").to_pylist() == ["20240301"]
    assert DatePattern("ZZZ").format(stamp, "Asia/Kolkata").to_pylist() == ["Asia/Kolkata"]


@pytest.mark.parametrize("pattern, letter", [("yyyy-MM-dd z", "z"), ("qq", "q"), ("yyyy-ww-L", "L")])
def test_unknown_letters_are_refused_by_name(pattern: str, letter: str) -> None:
    with pytest.raises(DatePatternError, match=f"letter '{letter}'"):
        tokenize(pattern)


@pytest.mark.parametrize("zone", ZONES)
def test_parse_reads_back_what_format_wrote(zone: str) -> None:
    values = [v for v in _instants(7) if v >= -1_000_000_000_000]  # after local mean times (offsets in seconds)
    pattern = DatePattern("yyyy-MM-dd HH:mm:ss.SSSZZ")
    text = pattern.format(pa.array(values, pa.int64()), java_zone(zone))
    millis, offsets = pattern.parse(text, None)
    assert millis.to_pylist() == values
    expected = []
    for v in values:
        offset = (EPOCH + datetime.timedelta(milliseconds=v)).astimezone(_zone(zone)).utcoffset()
        assert offset is not None
        expected.append(int(offset.total_seconds() * 1000))
    assert offsets.to_pylist() == expected


def test_parse_without_offset_reads_local_time_in_the_zone() -> None:
    got, offsets = DatePattern("yyyyMMddHH").parse(pa.array(["2024030112", "2024070112"]), "Europe/Paris")
    assert got.to_pylist() == [int(datetime.datetime(2024, 3, 1, 11, tzinfo=datetime.UTC).timestamp() * 1000),
                               int(datetime.datetime(2024, 7, 1, 10, tzinfo=datetime.UTC).timestamp() * 1000)]
    assert offsets.null_count == 2


def test_parse_rejects_what_does_not_fit() -> None:
    got, _ = DatePattern("yyyy-MM-dd").parse(pa.array(["2024-02-30", "2024-13-01", "2024-3-1", "x", "2024-02-29 "]),
                                             "UTC")
    expected_leap_day = int(datetime.datetime(2024, 3, 1, tzinfo=datetime.UTC).timestamp() * 1000)
    assert got.to_pylist() == [None, None, expected_leap_day, None, None]


def test_parse_month_names_halfdays_and_fractions() -> None:
    got, _ = DatePattern("dd MMM yyyy hh:mm a SSS").parse(pa.array(["01 Mar 2024 12:30 AM 5", "01 march 2024 01:00 PM 12"]),
                                                          "UTC")
    base = int(datetime.datetime(2024, 3, 1, tzinfo=datetime.UTC).timestamp() * 1000)
    assert got.to_pylist() == [base + 30 * 60_000 + 500, base + 13 * 3_600_000 + 120]


def test_two_digit_years_pivot_around_this_year() -> None:
    this = datetime.date.today().year
    got, _ = DatePattern("yy").parse(pa.array([f"{(this + 49) % 100:02d}", f"{(this - 50) % 100:02d}"]), "UTC")
    years = [datetime.datetime.fromtimestamp(v / 1000, datetime.UTC).year for v in got.to_pylist()]
    assert years == [this + 49, this - 50]


def test_zone_ids() -> None:
    assert java_zone("GMT") == "UTC"
    assert java_zone("GMT+8") == "+08:00"
    assert java_zone("GMT-03:30") == "-03:30"
    assert java_zone("Asia/Kolkata") == "Asia/Kolkata"
    with pytest.raises(DatePatternError, match="Mars/Olympus"):
        java_zone("Mars/Olympus")


@pytest.mark.parametrize("zone", ["Europe/Paris", "UTC", "+05:45"])
@pytest.mark.parametrize("pattern", ["yyyy|/|MM|/|dd", "yyyy|-|MM|-|dd|/|HH", "EEE| |hh|:|mm| |a", "dd|-|MMM|-|yyyy"])
def test_many_rows_print_each_period_once_with_the_same_result(zone: str, pattern: str) -> None:
    rng = np.random.default_rng(len(pattern))
    around_dst = 1729990800000  # 2024-10-27T01:00Z, when Paris repeats an hour
    values = (around_dst + rng.integers(-2 * 86_400_000, 2 * 86_400_000, 20_000)).tolist()
    got = DatePattern(pattern.replace("|", "")).format(pa.array(values, pa.int64()), java_zone(zone)).to_pylist()
    assert got == [_python(v, zone, pattern) for v in values]


def test_fixed_width_strings_are_read_in_place_as_the_regular_expression_reads_them() -> None:
    rng = np.random.default_rng(9)
    instants = (1_700_000_000_000 + rng.integers(-10**12, 10**12, 3000)).tolist()
    offsets = [int(m) for m in rng.choice([0, 330, -480, 45], 3000)]
    texts = []
    for millis, minutes in zip(instants, offsets, strict=True):
        local = EPOCH + datetime.timedelta(milliseconds=millis + minutes * 60_000)
        sign, whole = ("-" if minutes < 0 else "+"), abs(minutes)
        written = rng.choice(["Z", "z", "colon", "compact"]) if minutes == 0 else rng.choice(["colon", "compact"])
        suffix = written if written in ("Z", "z") else \
            f"{sign}{whole // 60:02d}{':' if written == 'colon' else ''}{whole % 60:02d}"
        texts.append(local.strftime("%Y-%m-%dT%H:%M:%S.") + f"{local.microsecond // 1000:03d}" + suffix)
    pattern = DatePattern("yyyy-MM-dd'T'HH:mm:ss.SSSZ")
    fast, _ = pattern.parse(pa.array(texts), None)
    assert fast.to_pylist() == instants
    # One string the fixed layout cannot read (an unpadded month) sends all through the expression.
    mixed = texts + ["2024-3-01T00:00:00.000Z", "2024-03-0xT00:00:00.000Z", "2024-03-01t00:00:00.000z"]
    slow, _ = pattern.parse(pa.array(mixed), None)
    march_first = int(datetime.datetime(2024, 3, 1, tzinfo=datetime.UTC).timestamp() * 1000)
    assert slow.to_pylist() == instants + [march_first, None, march_first]
    same_lengths = [t for t in texts if t.endswith("Z")]
    assert pattern.parse(pa.array(same_lengths + ["2024-03-01T00:00:00.000+"]), None)[0].to_pylist()[-1] is None
