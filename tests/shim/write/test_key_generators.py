"""Tables partitioned by Hudi's timestamp-based and custom key generators: rows land in date
partitions as Hudi puts them, hoodie.properties records what Hudi records, and the shim, hudi-rs
and DuckDB read the column values (never the formatted partition values) back."""

from __future__ import annotations

import datetime
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import shim
from engines.duckdb import connect
from engines.inspect import describe_table
from shim.errors import InvalidArgumentError, UnsupportedFeatureError
from tests.writekit import data_files, hudi_rs_rows, shim_rows, write

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("event", pa.string()),
                    ("millis", pa.int64())])
COLUMNS = SCHEMA.names
KEYGEN = "hoodie.datasource.write.keygenerator.class"
PARTITION = "hoodie.datasource.write.partitionpath.field"
P = "hoodie.keygen.timebased."
BY_DAY = {
    KEYGEN: "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
    PARTITION: "millis",
    P + "timestamp.type": "EPOCHMILLISECONDS",
    P + "output.dateformat": "yyyy/MM/dd",
    P + "timezone": "UTC",
}
CUSTOM = {
    KEYGEN: "org.apache.hudi.keygen.CustomKeyGenerator",
    PARTITION: "region:SIMPLE,event:TIMESTAMP",
    "hoodie.datasource.write.hive_style_partitioning": "true",
    P + "timestamp.type": "DATE_STRING",
    P + "input.dateformat": "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
    P + "output.dateformat": "yyyy-MM-dd",
    P + "output.timezone": "UTC",
}
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def row(i: int, ts: int, day: int, hour: int = 8) -> dict:
    moment = datetime.datetime(2024, 3, day, hour, 30, 15, 250000, tzinfo=datetime.UTC)
    return {"id": f"k{i:02d}", "ts": ts, "region": ("eu", "us")[i % 2],
            "event": moment.strftime("%Y-%m-%dT%H:%M:%S.") + "250+0000",
            "millis": int(moment.timestamp() * 1000)}


def expected(*batches: list[dict], deleted: tuple[str, ...] = ()) -> list[dict]:
    latest: dict[str, dict] = {}
    for batch in batches:
        latest.update({r["id"]: r for r in batch})
    return [latest[k] for k in sorted(latest) if k not in deleted]


def properties(path: Path) -> dict[str, str]:
    return dict(shim.open_table(str(path)).config.raw)


def partition_of_rows(path: Path) -> dict[str, set[str]]:
    """Per data file's folder, the `_hoodie_partition_path` values of its base file rows."""
    found: dict[str, set[str]] = {}
    for name in data_files(path):
        if name.endswith(".parquet"):
            paths = pq.read_table(path / name, columns=["_hoodie_partition_path"]).column(0).to_pylist()
            found.setdefault(str(Path(name).parent), set()).update(paths)
    return found


@pytest.mark.parametrize("table_type", [{}, MOR], ids=["cow", "mor"])
def test_rows_land_in_the_day_of_their_epoch_millis(tmp_path: Path, table_type: dict[str, str]) -> None:
    first = [row(i, 1, day=1 + i % 3, hour=23 if i % 2 else 0) for i in range(12)]
    write(tmp_path, first, schema=SCHEMA, **BY_DAY, **table_type)
    assert partition_of_rows(tmp_path) == {f"2024/03/0{d}": {f"2024/03/0{d}"} for d in (1, 2, 3)}
    recorded = properties(tmp_path)
    assert recorded["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
    assert recorded["hoodie.table.partition.fields"] == "millis"
    assert {k: v for k, v in recorded.items() if k.startswith(P)} == {
        P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": "yyyy/MM/dd", P + "timezone": "UTC"}

    # Later writes take the recorded settings: an update within the same day, and a delete.
    update = [row(i, 2, day=1 + i % 3, hour=12) for i in range(0, 12, 3)]
    write(tmp_path, update, schema=SCHEMA, **table_type)
    write(tmp_path, [first[4]], schema=SCHEMA, **{"hoodie.datasource.write.operation": "delete"})
    want = expected(first, update, deleted=("k04",))
    assert [{k: r[k] for k in COLUMNS} for r in shim_rows(tmp_path)] == want
    assert hudi_rs_rows(tmp_path, COLUMNS) == want
    if table_type:
        logs = [name for name in data_files(tmp_path) if ".log." in name]
        assert logs and {str(Path(name).parent) for name in logs} <= {"2024/03/01", "2024/03/02", "2024/03/03"}


def test_custom_key_generator_mixes_values_and_dates(tmp_path: Path) -> None:
    table_path = tmp_path / "trips"  # in a warehouse folder, so DuckDB names its view `trips`
    first = [row(i, 1, day=1 + (i // 2) % 2, hour=20) for i in range(8)]
    write(table_path, first, schema=SCHEMA, **CUSTOM, **MOR)
    assert set(partition_of_rows(table_path)) == {f"region={r}/event=2024-03-0{d}" for r in ("eu", "us") for d in (1, 2)}
    recorded = properties(table_path)
    assert recorded["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.CustomKeyGenerator"
    # Version 6 records the fields without their types, as Hudi 0.15 does; the types go beside.
    assert recorded["hoodie.table.partition.fields"] == "region,event"
    assert recorded[PARTITION] == "region:SIMPLE,event:TIMESTAMP"

    update = [row(i, 2, day=1 + (i // 2) % 2, hour=21) for i in (0, 3)]
    write(table_path, update, schema=SCHEMA)

    want = expected(first, update)
    got = [{k: r[k] for k in COLUMNS} for r in shim_rows(table_path)]
    assert got == want  # `event` holds the written strings, not the day its folder names
    assert hudi_rs_rows(table_path, COLUMNS) == want
    table = shim.open_table(str(table_path))
    eu_on_the_first = [r for r in want if r["region"] == "eu" and r["event"].startswith("2024-03-01")]
    assert sorted(table.read(filter="region = 'eu' AND event >= '2024-03-01' AND event < '2024-03-02'")
                  .column("id").to_pylist()) == [r["id"] for r in eu_on_the_first]
    assert "partitioning: region values, event as dates (DATE_STRING -> 'yyyy-MM-dd' in UTC); hive-style " \
        "folders" in describe_table(table)
    views = connect(str(tmp_path))
    counted = views.sql("SELECT region, count(*), min(event) FROM trips GROUP BY region "
                        "ORDER BY region").fetchall()
    assert counted == [(region, sum(r["region"] == region for r in want),
                        min(r["event"] for r in want if r["region"] == region)) for region in ("eu", "us")]


def test_custom_tables_hudi_015_wrote_need_the_field_types_again(tmp_path: Path) -> None:
    write(tmp_path, [row(1, 1, day=1)], schema=SCHEMA, **CUSTOM)
    props = tmp_path / ".hoodie" / "hoodie.properties"
    props.write_text("".join(line for line in props.read_text().splitlines(keepends=True)
                             if not line.startswith(PARTITION)))  # as Hudi 0.15 leaves it
    with pytest.raises(UnsupportedFeatureError, match="region:SIMPLE"):
        write(tmp_path, [row(2, 1, day=2)], schema=SCHEMA)
    # Not knowing which field is a date, readers take both columns from the files.
    assert shim.open_table(str(tmp_path)).read(filter="event = '2024-03-01'").num_rows == 0
    write(tmp_path, [row(2, 1, day=2)], schema=SCHEMA, **{PARTITION: CUSTOM[PARTITION]})
    assert [r["event"][:10] for r in shim_rows(tmp_path)] == ["2024-03-01", "2024-03-02"]
    with pytest.raises(InvalidArgumentError, match="differs from the table's"):
        write(tmp_path / "other", [row(1, 1, day=1)], schema=SCHEMA, **CUSTOM)
        write(tmp_path / "other", [row(1, 1, day=1)], schema=SCHEMA, **{PARTITION: "region:SIMPLE,event:SIMPLE"})


def test_settings_that_would_move_rows_are_refused(tmp_path: Path) -> None:
    write(tmp_path, [row(1, 1, day=1)], schema=SCHEMA, **BY_DAY)
    with pytest.raises(InvalidArgumentError, match="output.dateformat=yyyy-MM differs from the table's yyyy/MM/dd"):
        write(tmp_path, [row(2, 1, day=1)], schema=SCHEMA, **{P + "output.dateformat": "yyyy-MM"})
    with pytest.raises(InvalidArgumentError, match="differs from the table's key generator"):
        write(tmp_path, [row(2, 1, day=1)], schema=SCHEMA, **{KEYGEN: "org.apache.hudi.keygen.SimpleKeyGenerator"})
    assert [r["id"] for r in shim_rows(tmp_path)] == ["k01"]


def test_bad_dates_fail_the_write_and_leave_the_table_as_it_was(tmp_path: Path) -> None:
    good = [row(1, 1, day=1)]
    write(tmp_path, good, schema=SCHEMA, **CUSTOM)
    bad = [{**row(2, 2, day=2), "event": "2 March 2024"}]
    with pytest.raises(InvalidArgumentError, match="'event'.*'2 March 2024'.*yyyy-MM-dd'T'HH:mm:ss.SSSZ"):
        write(tmp_path, bad, schema=SCHEMA, **{PARTITION: CUSTOM[PARTITION]})
    assert [{k: r[k] for k in COLUMNS} for r in shim_rows(tmp_path)] == good
    assert hudi_rs_rows(tmp_path, COLUMNS) == good


def test_options_hudi_would_not_accept(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="one record key field"):
        write(tmp_path, [row(1, 1, day=1)], schema=SCHEMA, **BY_DAY,
              **{"hoodie.datasource.write.recordkey.field": "id,region"})
    with pytest.raises(InvalidArgumentError, match="exactly one field"):
        write(tmp_path, [row(1, 1, day=1)], schema=SCHEMA, **{**BY_DAY, PARTITION: "millis,region"})
    with pytest.raises(InvalidArgumentError, match="timestamp.type is required"):
        write(tmp_path, [row(1, 1, day=1)], schema=SCHEMA,
              **{k: v for k, v in BY_DAY.items() if k != P + "timestamp.type"})
    assert not (tmp_path / ".hoodie").exists() or not any((tmp_path / ".hoodie").glob("*.commit"))


def test_duckdb_over_http_and_in_process_agree_on_date_partitions(tmp_path: Path) -> None:
    from catalog.server import running
    from catalog.settings import MEMORY, Settings

    rows = [row(i, 1, day=1 + (i // 2) % 3, hour=7) for i in range(12)]
    write(tmp_path / "trips", rows, schema=SCHEMA, **CUSTOM)
    table = shim.open_table(str(tmp_path / "trips"))
    # Only values the folder names spell come dictionary-encoded; the dates' columns stay as written.
    encoded = table.read(dictionary_partitions=True).schema
    assert pa.types.is_dictionary(encoded.field("region").type)
    assert encoded.field("event").type == pa.string()
    query = ("SELECT region, count(*), max(event) FROM trips WHERE event >= '2024-03-02' AND millis > 0 "
             "GROUP BY region ORDER BY region")
    want = [(region, sum(1 for r in rows if r["region"] == region and r["event"] >= "2024-03-02"),
             max(r["event"] for r in rows if r["region"] == region)) for region in ("eu", "us")]
    assert connect(str(tmp_path)).sql(query).fetchall() == want
    with running(Settings(warehouse=str(tmp_path), catalog_db=MEMORY)) as live:
        assert connect(live.url).sql(query).fetchall() == want


def test_a_duckdb_query_for_one_day_opens_that_days_files_only(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import shim.read.scan_stream as scan_module
    from tests.spies import spy_on

    rows = [row(i, 1, day=1 + i % 3, hour=i % 24) for i in range(30)]
    write(tmp_path / "trips", rows, schema=SCHEMA, **BY_DAY)
    low = int(datetime.datetime(2024, 3, 2, tzinfo=datetime.UTC).timestamp() * 1000)
    opened = spy_on(monkeypatch, scan_module, "scan_parquet")
    got = connect(str(tmp_path)).sql(
        f"SELECT id FROM trips_ro WHERE millis >= {low} AND millis < {low + 86_400_000} ORDER BY id").fetchall()
    assert [r[0] for r in got] == sorted(r["id"] for r in rows if low <= r["millis"] < low + 86_400_000)
    assert opened and {Path(p).parent.relative_to(tmp_path / "trips").as_posix() for p in opened} == {"2024/03/02"}


NESTED = pa.schema([("meta", pa.struct([("id", pa.string()), ("region", pa.string())])), ("ts", pa.int64()),
                    ("fare", pa.float64())])


FLAT_PARTITION = NESTED.append(pa.field("region", pa.string()))


def nested_row(i: int, ts: int) -> dict:
    return {"meta": {"id": f"k{i:02d}", "region": ("eu", "us")[i % 2]}, "ts": ts, "fare": float(ts * 100 + i)}


@pytest.mark.parametrize("table_type", [{}, MOR], ids=["cow", "mor"])
def test_nested_record_key_and_partition_fields(tmp_path: Path, table_type: dict[str, str]) -> None:
    path = tmp_path / "nested"
    options = {"hoodie.datasource.write.recordkey.field": "meta.id",
               PARTITION: "meta.region", "hoodie.datasource.write.hive_style_partitioning": "true", **table_type}
    first = [nested_row(i, 1) for i in range(10)]
    write(path, first, schema=NESTED, **options)
    assert set(partition_of_rows(path)) == {"meta.region=eu", "meta.region=us"}
    keys = [r["_hoodie_record_key"] for r in shim.open_table(str(path)).read(include_meta=True).to_pylist()]
    assert sorted(keys) == [f"k{i:02d}" for i in range(10)]
    update = [nested_row(i, 2) for i in (1, 4)]
    write(path, update, schema=NESTED, **options)
    write(path, [nested_row(7, 3)], schema=NESTED, **options, **{"hoodie.datasource.write.operation": "delete"})
    latest = {r["meta"]["id"]: r for r in first} | {r["meta"]["id"]: r for r in update}
    want = [latest[k] for k in sorted(latest) if k != "k07"]
    got = sorted(shim.open_table(str(path)).read().to_pylist(), key=lambda r: r["meta"]["id"])
    assert got == want
    # hudi-rs 0.5 refuses nested partition fields ("not present in the table schema"): with a
    # top-level one it reads the same rows.
    flat = tmp_path / "flat"
    write(flat, [{**r, "region": r["meta"]["region"]} for r in first], schema=FLAT_PARTITION,
          **{**options, PARTITION: "region"})
    rs = pa.Table.from_batches(hudi.HudiTable(str(flat)).read()).select(["meta", "ts", "fare"]).to_pylist()
    assert sorted(rs, key=lambda r: r["meta"]["id"]) == [{k: r[k] for k in ("meta", "ts", "fare")} for r in first]
    with pytest.raises(InvalidArgumentError, match="no field 'meta.city'"):
        write(tmp_path / "other", first, schema=NESTED, **{**options, PARTITION: "meta.city"})


@pytest.mark.parametrize("table_type", [{}, MOR], ids=["cow", "mor"])
def test_partition_columns_dropped_from_files_come_back_from_folders(tmp_path: Path,
                                                                    table_type: dict[str, str]) -> None:
    from shim.write.services.compaction import compact

    drop = {"hoodie.datasource.write.drop.partition.columns": "true", PARTITION: "region",
            "hoodie.datasource.write.hive_style_partitioning": "true", **table_type}
    first = [row(i, 1, day=1 + i % 3) for i in range(12)]
    write(tmp_path, first, schema=SCHEMA, **drop)
    update = [row(i, 2, day=2) for i in (0, 5)]
    write(tmp_path, update, schema=SCHEMA)
    write(tmp_path, [first[7]], schema=SCHEMA, **{"hoodie.datasource.write.operation": "delete"})
    if table_type:
        assert compact(str(tmp_path)) is not None
    for name in data_files(tmp_path):
        if name.endswith(".parquet"):
            assert "region" not in pq.read_schema(tmp_path / name).names, name
    assert properties(tmp_path)["hoodie.datasource.write.drop.partition.columns"] == "true"
    want = expected(first, update, deleted=("k07",))
    got = [{k: r[k] for k in COLUMNS} for r in shim_rows(tmp_path)]
    assert got == want
    assert shim.open_table(str(tmp_path)).schema().names[-1] == "region"  # appended, as Hudi's readers do
    with pytest.raises(InvalidArgumentError, match="drop.partition.columns=false differs"):
        write(tmp_path, first[:1], schema=SCHEMA, **{"hoodie.datasource.write.drop.partition.columns": "false"})
    with pytest.raises(InvalidArgumentError, match="could not be read back"):
        write(tmp_path / "dates", first, schema=SCHEMA, **BY_DAY,
              **{"hoodie.datasource.write.drop.partition.columns": "true"})


def test_the_key_generator_may_be_named_by_its_type(tmp_path: Path) -> None:
    by_type = {k: v for k, v in BY_DAY.items() if k != KEYGEN} | {"hoodie.datasource.write.keygenerator.type": "timestamp"}
    write(tmp_path, [row(1, 1, day=2)], schema=SCHEMA, **by_type)
    assert properties(tmp_path)["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
    assert set(partition_of_rows(tmp_path)) == {"2024/03/02"}
    with pytest.raises(InvalidArgumentError, match="keygenerator.type=SIMPLE differs"):
        write(tmp_path, [row(2, 1, day=2)], schema=SCHEMA, **{"hoodie.datasource.write.keygenerator.type": "SIMPLE"})
    with pytest.raises(UnsupportedFeatureError, match="keygenerator.type=GLOBAL_DELETE is not supported"):
        write(tmp_path / "other", [row(2, 1, day=2)], schema=SCHEMA,
              **{"hoodie.datasource.write.keygenerator.type": "GLOBAL_DELETE"})
