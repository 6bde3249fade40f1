"""Partition values of the timestamp-based key generator, type by type, as Hudi computes them."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest

from shim.errors import InvalidArgumentError
from shim.keys.partition_scheme import PartitionScheme, parse_partition_fields
from shim.keys.timestamp_keygen import TimestampPartitioning, persisted_properties

P = "hoodie.keygen.timebased."
MARCH_1_0830 = int(datetime.datetime(2024, 3, 1, 8, 30, tzinfo=datetime.UTC).timestamp())


def settings(kind: str, output: str = "yyyy/MM/dd", **extra: str) -> TimestampPartitioning:
    return TimestampPartitioning.from_options({P + "timestamp.type": kind, P + "output.dateformat": output,
                                               P + "timezone": "UTC", **{P + k: v for k, v in extra.items()}})


@pytest.mark.parametrize("kind, values, kwargs", [
    ("UNIX_TIMESTAMP", pa.array([MARCH_1_0830], pa.int64()), {}),
    ("UNIX_TIMESTAMP", pa.array([MARCH_1_0830], pa.int32()), {}),
    ("UNIX_TIMESTAMP", pa.array([MARCH_1_0830 + 0.9], pa.float64()), {}),
    ("UNIX_TIMESTAMP", pa.array([decimal.Decimal(MARCH_1_0830) + decimal.Decimal("0.5")], pa.decimal128(14, 2)), {}),
    ("EPOCHMILLISECONDS", pa.array([MARCH_1_0830 * 1000 + 999], pa.int64()), {}),
    ("EPOCHMICROSECONDS", pa.array([MARCH_1_0830 * 1_000_000], pa.int64()), {}),
    # A timestamp column counts as its stored long (microseconds), as Hudi reads Avro.
    ("EPOCHMICROSECONDS", pa.array([MARCH_1_0830 * 1_000_000], pa.timestamp("us", tz="UTC")), {}),
    ("SCALAR", pa.array([MARCH_1_0830 // 3600], pa.int64()), {"timestamp.scalar.time.unit": "hours"}),
    ("SCALAR", pa.array([datetime.date(2024, 3, 1)], pa.date32()), {"timestamp.scalar.time.unit": "DAYS"}),
    ("SCALAR", pa.array([MARCH_1_0830 * 10**9], pa.int64()), {"timestamp.scalar.time.unit": "NANOSECONDS"}),
])
def test_numbers_count_in_the_types_unit(kind: str, values: pa.Array, kwargs: dict[str, str]) -> None:
    assert settings(kind, "yyyy-MM-dd", **kwargs).values(values, "ts").to_pylist() == ["2024-03-01"]


def test_a_date_column_counts_days_in_the_types_unit_as_hudi_does() -> None:
    # Hudi converts a date's epoch day with the configured unit: days read as milliseconds land in 1970.
    days = pa.array([datetime.date(2024, 3, 1)], pa.date32())
    assert settings("EPOCHMILLISECONDS", "yyyy-MM-dd HH:mm:ss.SSS").values(days, "d").to_pylist() == \
        ["1970-01-01 00:00:19.783"]


def test_consistent_logical_timestamps_read_timestamps_as_times() -> None:
    stamps = pa.array([MARCH_1_0830 * 1_000_000, None], pa.timestamp("us", tz="UTC"))
    plain = TimestampPartitioning.from_options({P + "timestamp.type": "EPOCHMILLISECONDS",
                                                P + "output.dateformat": "yyyy-MM-dd", P + "timezone": "UTC",
                                                "hoodie.datasource.write.keygenerator.consistent.logical.timestamp"
                                                ".enabled": "true"})
    assert plain.values(stamps, "ts").to_pylist() == ["2024-03-01", "1970-01-01"]


def test_fractions_truncate_toward_zero() -> None:
    values = pa.array([-0.9, -1.5, 1.999], pa.float64())
    assert settings("UNIX_TIMESTAMP", "yyyy-MM-dd HH:mm:ss").values(values, "t").to_pylist() == \
        ["1970-01-01 00:00:00", "1969-12-31 23:59:59", "1970-01-01 00:00:01"]
    micros = pa.array([-1, -1000, 1999], pa.int64())
    assert settings("EPOCHMICROSECONDS", "ss.SSS").values(micros, "t").to_pylist() == ["00.000", "59.999", "00.001"]


def test_nulls_stand_for_the_instant_one() -> None:
    assert settings("UNIX_TIMESTAMP", "yyyy-MM-dd HH:mm:ss").values(pa.array([None], pa.int64()), "t").to_pylist() \
        == ["1970-01-01 00:00:01"]
    strings = settings("DATE_STRING", "yyyy-MM-dd HH:mm:ss.SSS", **{"input.dateformat": "yyyy-MM-dd HH:mm:ss.SSS"})
    assert strings.values(pa.array([None], pa.string()), "t").to_pylist() == ["1970-01-01 00:00:00.001"]


def test_date_strings_with_several_formats_and_a_delimiter() -> None:
    parsing = settings("DATE_STRING", "yyyyMMddHH", **{"input.dateformat": "yyyy-MM-dd'T'HH:mm:ssZ;yyyy/MM/dd",
                                                       "input.dateformat.list.delimiter.regex": ";"})
    values = pa.array(["2024-03-01T23:30:00+0200", "2024/03/02", "2024-03-01T23:30:00Z"])
    assert parsing.values(values, "t").to_pylist() == ["2024030121", "2024030200", "2024030123"]


def test_without_an_output_zone_strings_print_in_the_zone_they_were_read_in() -> None:
    parsing = TimestampPartitioning.from_options({P + "timestamp.type": "DATE_STRING", P + "output.dateformat": "HH",
                                                  P + "input.dateformat": "yyyy-MM-dd HH:mmZZ"})
    values = pa.array(["2024-03-01 23:30+05:30", "2024-03-01 23:30Z", "2024-03-01 01:00-08:00"])
    assert parsing.values(values, "t").to_pylist() == ["23", "23", "01"]
    zoned = TimestampPartitioning.from_options({P + "timestamp.type": "DATE_STRING", P + "output.dateformat": "HH",
                                                P + "input.dateformat": "yyyy-MM-dd HH:mmZZ",
                                                P + "output.timezone": "UTC"})
    assert zoned.values(values, "t").to_pylist() == ["18", "23", "09"]
    local = TimestampPartitioning.from_options({P + "timestamp.type": "DATE_STRING", P + "output.dateformat": "HH",
                                                P + "input.dateformat": "yyyy-MM-dd HH:mm",
                                                P + "input.timezone": "Asia/Kolkata",
                                                P + "output.timezone": "UTC"})
    assert local.values(pa.array(["2024-03-01 05:30"]), "t").to_pylist() == ["00"]


def test_bad_values_and_settings_are_named() -> None:
    parsing = settings("DATE_STRING", **{"input.dateformat": "yyyy-MM-dd"})
    with pytest.raises(InvalidArgumentError, match=r"'ts'.*'03/01/2024'.*yyyy-MM-dd"):
        parsing.values(pa.array(["2024-03-01", "03/01/2024"]), "ts")
    with pytest.raises(InvalidArgumentError, match="'ts' holds int64 values.*DATE_STRING"):
        parsing.values(pa.array([1], pa.int64()), "ts")
    with pytest.raises(InvalidArgumentError, match="'ts' holds strings.*input.dateformat"):
        settings("EPOCHMILLISECONDS").values(pa.array(["1"]), "ts")
    with pytest.raises(InvalidArgumentError, match="'flag' holds bool"):
        settings("EPOCHMILLISECONDS").values(pa.array([True]), "flag")
    with pytest.raises(InvalidArgumentError, match="timestamp.type is required"):
        TimestampPartitioning.from_options({P + "output.dateformat": "yyyy"})
    with pytest.raises(InvalidArgumentError, match="EPOCH_SECONDS is not one of"):
        settings("EPOCH_SECONDS")
    with pytest.raises(InvalidArgumentError, match="output.dateformat is required"):
        TimestampPartitioning.from_options({P + "timestamp.type": "SCALAR"})
    with pytest.raises(InvalidArgumentError, match="input.dateformat is required"):
        settings("DATE_STRING")
    with pytest.raises(InvalidArgumentError, match="timezone.*Moon/Base"):
        settings("SCALAR", timezone="Moon/Base")
    with pytest.raises(InvalidArgumentError, match="output.dateformat.*letter 'z'"):
        settings("SCALAR", "yyyy z")
    with pytest.raises(InvalidArgumentError, match="input.dateformat.*cannot parse with the letter 'D'"):
        settings("DATE_STRING", **{"input.dateformat": "yyyy-DDD"})
    with pytest.raises(InvalidArgumentError, match="FORTNIGHTS"):
        settings("SCALAR", **{"timestamp.scalar.time.unit": "fortnights"})


def test_legacy_deltastreamer_names_and_what_is_recorded() -> None:
    options = {"hoodie.deltastreamer.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP",
               "hoodie.deltastreamer.keygen.timebased.output.dateformat": "yyyy",
               "hoodie.keygen.timebased.timezone": "GMT+2", "hoodie.table.name": "t"}
    parsed = TimestampPartitioning.from_options(options)
    assert parsed.output_zone == parsed.input_zone == "+02:00"
    assert parsed.values(pa.array([0], pa.int64()), "t").to_pylist() == ["1970"]
    assert persisted_properties(options) == {P + "timestamp.type": "UNIX_TIMESTAMP", P + "output.dateformat": "yyyy",
                                             P + "timezone": "GMT+2"}


def test_custom_fields_and_paths() -> None:
    assert parse_partition_fields("region:SIMPLE, ts:timestamp", "CUSTOM") == (("region", "ts"), ("ts",))
    for bad in ("region", "region:HASH", ":SIMPLE"):
        with pytest.raises(InvalidArgumentError, match="name:SIMPLE or name:TIMESTAMP"):
            parse_partition_fields(bad, "CUSTOM")
    with pytest.raises(InvalidArgumentError, match="exactly one field"):
        parse_partition_fields("a,b", "TIMESTAMP")
    scheme = PartitionScheme(("region", "ts"), ("ts",), hive_style=True, url_encode=True,
                             timestamp=settings("EPOCHMILLISECONDS", "yyyy/MM/dd"))
    columns = {"region": pa.array(["eu", None, "a b/c"]), "ts": pa.array([0, None, 86_400_000], pa.int64())}
    # The formatted date is escaped like any value (its slashes too), as Hudi's url encoding does.
    assert scheme.paths(columns, 3).to_pylist() == [
        "region=eu/ts=1970%2F01%2F01", "region=__HIVE_DEFAULT_PARTITION__/ts=1970%2F01%2F01",
        "region=a b%2Fc/ts=1970%2F01%2F02"]


def test_repeated_strings_are_parsed_once_with_the_same_result() -> None:
    parsing = settings("DATE_STRING", "yyyyMMddHH", **{"input.dateformat": "yyyy-MM-dd'T'HH:mm:ssZ,yyyy/MM/dd"})
    distinct = ["2024-03-01T23:30:00+0200", "2024/03/02", "2024-03-01T23:30:00Z"]
    one_each = parsing.values(pa.array(distinct), "t").to_pylist()
    assert parsing.values(pa.array(distinct * 400), "t").to_pylist() == one_each * 400
