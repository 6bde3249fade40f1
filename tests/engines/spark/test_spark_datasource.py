"""The `hudi_shim` Spark data source end to end: writes, DDL, compaction, failures, Spark reads."""

from __future__ import annotations

import json

import pytest

import shim
from engines.spark import alter_table, compact, repartition_by_bucket, with_bucket_id
from shim.write.bucket import bucket_ids
from tests.writekit import data_files, hudi_rs_rows, shim_rows

pytestmark = pytest.mark.spark

COLUMNS = ["id", "ts", "region", "fare"]


def options(table_type: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.partitionpath.field": "region",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.bucket.index.num.buckets": "4",
    }


def trips(spark, start: int, stop: int, ts: str = "id", fare: str = "cast(id as double)", parts: int = 2,  # type: ignore[no-untyped-def]
          step: int = 1):
    return spark.range(start, stop, step, parts).selectExpr(
        "concat('k', cast(id as string)) as id", f"cast({ts} as bigint) as ts",
        "if(id % 3 = 0, 'sf', 'ny') as region", f"{fare} as fare")


def spark_rows(frame) -> list[dict]:  # type: ignore[no-untyped-def]
    return sorted((row.asDict() for row in frame.collect()), key=lambda r: r["id"])


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_write_upsert_delete_and_read_back_in_shim_hudi_rs_and_spark(spark, tmp_path, table_type):
    path = str(tmp_path / "t")
    trips(spark, 0, 60).write.format("hudi_shim").mode("append").options(**options(table_type)).save(path)
    first = shim.open_table(path).timeline()[-1].requested_time
    trips(spark, 50, 70, ts="id + 100", fare="-1.0d", parts=3).write.format("hudi_shim").mode("append").option(
        "hoodie.datasource.write.operation", "upsert").save(path)
    trips(spark, 0, 10, step=2).write.format("hudi_shim").mode("append").option(
        "hoodie.datasource.write.operation", "delete").save(path)

    expected = {f"k{i}": (-1.0 if i >= 50 else float(i)) for i in range(70) if not (i < 10 and i % 2 == 0)}
    ours = shim_rows(path)
    assert {r["id"]: r["fare"] for r in ours} == expected
    assert ours == hudi_rs_rows(path, COLUMNS)

    frame = spark.read.format("hudi_shim").load(path)
    assert frame.columns[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                                 "_hoodie_partition_path", "_hoodie_file_name"]
    assert spark_rows(frame.select(*COLUMNS)) == ours
    assert frame.rdd.getNumPartitions() == len(shim.open_table(path).file_slices())
    pushed = frame.where("fare < 0 and region = 'sf'").select("id")
    assert sorted(r.id for r in pushed.collect()) == sorted(
        k for k, v in expected.items() if v < 0 and int(k[1:]) % 3 == 0)
    optimized = spark.read.format("hudi_shim").option("hoodie.datasource.query.type", "read_optimized").load(path)
    # merge-on-read: updates and new keys of existing buckets are in log files
    assert optimized.where("fare < 0").count() == (20 if table_type == "COPY_ON_WRITE" else 0)
    incremental = (spark.read.format("hudi_shim").option("hoodie.datasource.query.type", "incremental")
                   .option("hoodie.datasource.read.begin.instanttime", first).load(path))
    assert sorted(r.id for r in incremental.select("id").collect()) == sorted(f"k{i}" for i in range(50, 70))
    old = spark.read.format("hudi_shim").option("as.of.instant", first).load(path)
    assert old.count() == 60


def test_inline_compaction_runs_in_the_spark_job_commit(spark, tmp_path):
    path = str(tmp_path / "t")
    inline = {**options("MERGE_ON_READ"), "hoodie.compact.inline": "true",
              "hoodie.compact.inline.max.delta.commits": "2"}
    trips(spark, 0, 40).write.format("hudi_shim").mode("append").options(**inline).save(path)
    trips(spark, 0, 40, step=4, fare="-1.0d").write.format("hudi_shim").mode("append").options(**inline).save(path)
    [last] = [i for i in shim.open_table(path).timeline() if i.action.value == "commit"]
    metadata = json.loads((tmp_path / "t" / ".hoodie" / f"{last.requested_time}.commit").read_text())
    assert metadata["compacted"] is True
    expected = {f"k{i}": (-1.0 if i % 4 == 0 else float(i)) for i in range(40)}
    optimized = spark.read.format("hudi_shim").option("hoodie.datasource.query.type", "read_optimized").load(path)
    assert {r.id: r.fare for r in optimized.collect()} == expected  # the updates are in base files now
    assert shim_rows(path) == hudi_rs_rows(path, COLUMNS)


def test_ddl_evolving_writes_compaction_and_spark_reads_by_column_id(spark, tmp_path):
    path = str(tmp_path / "t")
    trips(spark, 0, 30).write.format("hudi_shim").mode("append").options(**options("MERGE_ON_READ")).save(path)
    alter_table(path).rename_column("fare", "amount").add_column("tip", "double", after="amount")
    update = trips(spark, 25, 35, ts="id + 100").selectExpr("id", "ts", "region", "-1.0d as amount",
                                                            "0.5d as tip", "'x' as note")
    update.write.format("hudi_shim").mode("append").save(path)
    table = shim.open_table(path)
    assert table.schema().names == ["id", "ts", "region", "amount", "tip", "note"]
    expected = {f"k{i}": ((-1.0, 0.5, "x") if i >= 25 else (float(i), None, None)) for i in range(35)}
    # hudi-rs matches columns by name and cannot follow the rename: the shim's rows are checked
    assert {r["id"]: (r["amount"], r["tip"], r["note"]) for r in shim_rows(path)} == expected

    instant = compact(path, spark)
    assert instant is not None
    metadata = json.loads((tmp_path / "t" / ".hoodie" / f"{instant}.commit").read_text())
    assert metadata["compacted"] is True
    frame = spark.read.format("hudi_shim").option("hoodie.datasource.query.type", "read_optimized").load(path)
    assert {r["id"]: (r["amount"], r["tip"], r["note"]) for r in spark_rows(frame)} == expected
    assert frame.where("amount < 0").count() == 10


def test_failed_spark_job_is_invisible_and_rolled_back_by_the_next_write(spark, tmp_path):
    from pyspark.sql.functions import udf
    from pyspark.sql.types import DoubleType

    path = str(tmp_path / "t")
    trips(spark, 0, 20).write.format("hudi_shim").mode("append").options(**options("MERGE_ON_READ")).save(path)
    before = set(data_files(path))

    known = len(before)

    @udf(DoubleType())
    def fail_late(fare, id_):  # type: ignore[no-untyped-def]  # no hints: Spark reads them as a UDF type
        import time
        from pathlib import Path

        if id_ == "k20":  # partition 1 fails once partition 0 has written its files (a minute at most)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                written = [p for p in Path(path).rglob("*") if p.is_file() and ".hoodie" not in p.parts
                           and (p.suffix == ".parquet" or ".log." in p.name)]
                if len(written) > known:
                    break
                time.sleep(0.1)
            time.sleep(0.5)  # the file it saw appear is complete
            raise RuntimeError("injected failure")
        return -fare

    failing = trips(spark, 0, 40).selectExpr("id", "ts + 100 as ts", "region", "fare")
    failing = failing.withColumn("fare", fail_late("fare", "id"))
    with pytest.raises(Exception, match="injected failure"):
        failing.write.format("hudi_shim").mode("append").save(path)
    leftover = set(data_files(path)) - before
    assert leftover, "the task that succeeded wrote files"
    assert {r["fare"] for r in shim_rows(path)} == {float(i) for i in range(20)}
    assert [i for i in shim.open_table(path).timeline() if not i.is_completed]

    trips(spark, 100, 101).write.format("hudi_shim").mode("append").save(path)
    assert not leftover & set(data_files(path))
    assert len(list((tmp_path / "t" / ".hoodie").glob("*.rollback"))) == 1
    assert len(shim_rows(path)) == 21


def test_repartition_by_bucket_puts_each_file_group_in_one_task(spark, tmp_path):
    opts = options("COPY_ON_WRITE")
    tagged = with_bucket_id(trips(spark, 0, 200, parts=3), opts)
    rows = tagged.select("id", "_hoodie_bucket_id").collect()
    import pyarrow as pa

    assert [r._hoodie_bucket_id for r in rows] == bucket_ids(pa.array([r.id for r in rows]), ["id"], 4).tolist()
    shuffled = with_bucket_id(repartition_by_bucket(trips(spark, 0, 200, parts=3), opts, num_partitions=3), opts)
    owners = shuffled.rdd.mapPartitionsWithIndex(
        lambda index, part: [((r._hoodie_bucket_partition, r._hoodie_bucket_id), index) for r in part]).distinct()
    groups = owners.collect()
    assert len({group for group, _ in groups}) == len(groups)  # no file group in two partitions
    path = str(tmp_path / "t")
    repartition_by_bucket(trips(spark, 0, 200, parts=3), opts).write.format("hudi_shim").mode("append").options(
        **opts).save(path)
    assert len(shim_rows(path)) == 200


def test_overwrite_mode_replaces_the_table_contents(spark, tmp_path):
    path = str(tmp_path / "t")
    trips(spark, 0, 10).write.format("hudi_shim").mode("append").options(**options("COPY_ON_WRITE")).save(path)
    trips(spark, 100, 103).write.format("hudi_shim").mode("overwrite").save(path)
    assert [r["id"] for r in shim_rows(path)] == ["k100", "k101", "k102"]
    assert shim.open_table(path).timeline()[-1].action.value == "replacecommit"


def test_spark_writes_clean_old_file_versions_with_hudi_cleaner_options(spark, tmp_path):
    path = str(tmp_path / "t")
    keep_1 = {**options("COPY_ON_WRITE"), "hoodie.cleaner.commits.retained": "1"}
    for version in range(3):
        trips(spark, 0, 12, fare=f"{version}.0d").write.format("hudi_shim").mode("append").options(**keep_1).save(path)
    instants = [i.requested_time for i in shim.open_table(path).timeline() if i.action.value == "commit" and i.is_completed]
    assert len(instants) == 3
    # per file group: the latest version and the one a read as of the retained commit needs
    assert {f.rsplit("_", 1)[-1][:-len(".parquet")] for f in data_files(path)} == set(instants[1:])
    assert [r["fare"] for r in shim_rows(path)] == [2.0] * 12
    assert shim_rows(path) == hudi_rs_rows(path, COLUMNS)
    with pytest.raises(Exception, match="cleaner .* deleted the files of older commits"):
        spark.read.format("hudi_shim").option("as.of.instant", instants[0]).load(path).collect()


def test_spark_timestamps_partition_by_day_with_the_custom_key_generator(spark, tmp_path):
    opts = {**options("MERGE_ON_READ"),
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
            "hoodie.datasource.write.partitionpath.field": "region:SIMPLE,at:TIMESTAMP",
            # A Spark timestamp reaches key generators as its Avro long: microseconds.
            "hoodie.keygen.timebased.timestamp.type": "SCALAR",
            "hoodie.keygen.timebased.timestamp.scalar.time.unit": "MICROSECONDS",
            "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd",
            "hoodie.keygen.timebased.timezone": "UTC"}

    from pyspark.sql.functions import expr

    def frame(start: int, stop: int, ts: int):  # type: ignore[no-untyped-def]
        # Row i happens 2i hours after 2024-03-01T00:00Z.
        return trips(spark, start, stop, ts=str(ts), parts=3).withColumn(
            "at", expr("timestamp_seconds(1709251200 + cast(substr(id, 2) as int) * 7200)"))

    partitions = {f"{'sf' if i % 3 == 0 else 'ny'}/2024-03-0{1 + i // 12}" for i in range(60)}

    shuffled = with_bucket_id(repartition_by_bucket(frame(0, 60, 1), opts, num_partitions=3), opts)
    owners = shuffled.rdd.mapPartitionsWithIndex(
        lambda index, part: [((r._hoodie_bucket_partition, r._hoodie_bucket_id), index) for r in part]).distinct()
    groups = owners.collect()
    assert len({group for group, _ in groups}) == len(groups)  # no file group in two Spark partitions
    assert {g[0] for g, _ in groups} == partitions

    path = str(tmp_path / "t")
    frame(0, 60, 1).write.format("hudi_shim").mode("append").options(**opts).save(path)
    frame(0, 60, 3).write.format("hudi_shim").mode("append").options(**opts).save(path)
    folders = {name.rsplit("/", 1)[0] for name in data_files(path)}
    assert folders == partitions
    rows = shim_rows(path)
    assert len(rows) == 60 and {r["ts"] for r in rows} == {3}
    assert [r["at"].isoformat() for r in rows[:2]] == ["2024-03-01T00:00:00+00:00", "2024-03-01T02:00:00+00:00"]
    read = spark_rows(spark.read.format("hudi_shim").load(path).select("id", "ts", "at"))
    assert [(r["id"], r["ts"], r["at"].timestamp()) for r in read] == \
        [(r["id"], r["ts"], r["at"].timestamp()) for r in rows]


def test_delete_partition_through_the_data_source(spark, tmp_path):
    path = str(tmp_path / "t")
    trips(spark, 0, 30).write.format("hudi_shim").mode("append").options(**options("MERGE_ON_READ")).save(path)
    empty = trips(spark, 0, 0)
    (empty.write.format("hudi_shim").mode("append").option("hoodie.datasource.write.operation", "delete_partition")
     .option("hoodie.datasource.write.partitions.to.delete", "sf").save(path))
    assert {r["region"] for r in shim_rows(path)} == {"ny"} and len(shim_rows(path)) == 20
    assert {r["region"] for r in spark_rows(spark.read.format("hudi_shim").load(path))} == {"ny"}
    assert shim.open_table(path).timeline()[-1].action.value == "replacecommit"


def test_register_lifts_sparks_arrow_byte_limit_unless_the_session_set_one(spark, tmp_path):
    from engines.spark import register
    from engines.spark.session import ARROW_TRANSFER_CONF

    (key, lifted), = ARROW_TRANSFER_CONF.items()
    try:
        spark.conf.unset(key)
        register(spark)
        assert spark.conf.get(key) == lifted == str(2**31 - 1)
        spark.conf.set(key, "1024")  # the session's own choice stays: tiny batches, still right rows
        register(spark)
        assert spark.conf.get(key) == "1024"
        path = str(tmp_path / "t")
        trips(spark, 0, 500).write.format("hudi_shim").mode("append").options(**options("MERGE_ON_READ")).save(path)
        trips(spark, 400, 600, fare="-1.0d").write.format("hudi_shim").mode("append").option(
            "hoodie.datasource.write.operation", "upsert").save(path)
        assert {r["id"]: r["fare"] for r in shim_rows(path)} == {
            f"k{i}": (-1.0 if i >= 400 else float(i)) for i in range(600)}
    finally:
        spark.conf.set(key, lifted)


def test_local_session_reaches_python_workers_over_unix_domain_sockets(spark):
    from engines.spark.session import UNIX_SOCKETS

    assert spark.conf.get(UNIX_SOCKETS[0]) == "true"


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_more_partitions_than_spark_runs_at_once_write_the_right_rows(spark, tmp_path, table_type):
    path = str(tmp_path / "t")
    opts = options(table_type)
    trips(spark, 0, 600).repartition(6).write.format("hudi_shim").mode("append").options(**opts).save(path)
    trips(spark, 500, 700, ts="id + 100", fare="-1.0d").repartition(5).write.format("hudi_shim").mode(
        "append").options(**opts).option("hoodie.datasource.write.operation", "upsert").save(path)
    expected = {f"k{i}": (-1.0 if i >= 500 else float(i)) for i in range(700)}
    ours = shim_rows(path)
    assert {r["id"]: r["fare"] for r in ours} == expected
    assert ours == hudi_rs_rows(path, COLUMNS)
    files = data_files(path)
    groups = {(f.split("/")[0], f.split("/")[-1].lstrip(".")[:8]) for f in files}
    bases = [f for f in files if f.endswith(".parquet")]
    logs = [f for f in files if ".log." in f]
    if table_type == "MERGE_ON_READ":  # later task waves logged: one base file and at most two logs per group
        assert len(bases) == len(groups) and len(logs) <= 2 * len(groups)
