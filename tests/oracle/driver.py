"""Apache Hudi's side of the oracle: run in the oracle environment's Python (PySpark 3.5 with
Hudi's Spark bundle), never imported by the project. Standard library and PySpark only.

    python driver.py REQUEST.json RESPONSE.json

The request names the bundle jar and a list of jobs, run in order in one Spark session:

- `{"kind": "steps", "path", "table", "session": {...}, "steps": [...]}`: write a table (with the
  session's `SET`s in force meanwhile). A step is
  `{"sql": "..."}` (Spark SQL; `{path}` and `{table}` are replaced) or
  `{"write": {"select": "SQL", "options": {...}, "mode": "append"}}` (the DataFrame API: the
  SELECT's rows saved with `format("hudi")`; with `"cache": true` they are held in memory first,
  and only the write is timed).
  Two more step kinds (`writers.py`): `{"client": {...}}` drives Hudi's write client action by
  action (records carrying their change, `_hoodie_operation`; several writers' instants begun and
  completed in any order; compactions planned and run between them), and
  `{"concurrent": [step, ...]}` runs steps in threads at once (a write conflict may abort some).
- `{"kind": "oracle", "path", "out", "table_type", "incremental"}`: Hudi's timeline of the table, then
  the reads planned from it (`plan_reads`): snapshot, read-optimized, as of every completed write,
  incremental windows.
- `{"kind": "time_reads", "path", "reads": [...], "repeat": N}`: time each read (every row and
  column produced, into Spark's `noop` sink), best of N runs.
- `{"kind": "reads", "path", "out", "reads": [{"name", "options"}], "timeline": true}`: read a table
  with `spark.read.format("hudi")` and the options of each read, saving the rows as one Parquet
  file `out/<name>.parquet` (or the error Hudi raised); with "timeline", the completed instants
  Hudi's own timeline loaders list (active and archived).

The response holds, per job, the seconds it took, the reads' files or errors, and the timelines.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import sys
import time
import traceback

import writers

SESSION_CONF = {
    "spark.ui.enabled": "false",
    "spark.driver.memory": "2g",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.session.timeZone": "UTC",
    # Hudi reads nested columns whose types changed only with Spark's row-based Parquet reader.
    "spark.sql.parquet.enableVectorizedReader": "false",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
}


def session(jar: str, warehouse: str, conf: dict[str, str]):
    """A local Spark session with Hudi's extensions (schema-on-read on)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName("hudi-oracle")
    for key, value in {**SESSION_CONF, "spark.jars": jar, "spark.sql.warehouse.dir": warehouse, **conf}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("SET hoodie.schema.on.read.enable=true")
    spark.sql("SET hoodie.datasource.write.schema.allow.auto.evolution.column.drop=true")  # hudi#19766
    return spark


def run_steps(spark, job: dict) -> list[dict]:
    """Run a table's steps; returns the seconds each took (and what client and concurrent steps did)."""
    path, table = job["path"], job.get("table", "t")
    done = []
    settings = job.get("session", {})
    # A step's own SET lasts for the rest of its table's steps, not into the next table's.
    set_by_steps = [m.group(1) for step in job["steps"] if "sql" in step
                    for m in [re.match(r"\s*SET\s+([^=\s]+)\s*=", step["sql"], re.IGNORECASE)] if m]
    before = {key: spark.conf.get(key, None) for key in [*settings, *set_by_steps]}
    for key, value in settings.items():  # for every statement of this table (SQL DML and DDL)
        spark.conf.set(key, value)
    try:
        for number, step in enumerate(job["steps"]):
            try:
                seconds, outcome = _run_step(spark, step, path, table)
            except Exception as exc:
                raise RuntimeError(f"step {number} {json.dumps(step)[:300]} failed: {_error_text(exc)}") from exc
            done.append({"step": step, "seconds": round(seconds, 3),
                         **({"outcome": outcome} if outcome is not None else {})})
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
    return done


def _run_step(spark, step: dict, path: str, table: str) -> tuple[float, list | None]:
    """Run one step; returns the seconds it took (a write's DataFrame, with "cache", is
    materialized in memory first, untimed) and, for client and concurrent steps, what they did."""
    started = time.monotonic()
    outcome = None
    if "client" in step:
        outcome = writers.run_client(spark, step["client"], path)
    elif "concurrent" in step:
        outcome = writers.run_concurrently(step["concurrent"], lambda one: _run_step(spark, one, path, table))
    elif "sql" in step:
        spark.sql(step["sql"].replace("{path}", path).replace("{table}", table))
    elif "write" in step:
        write = step["write"]
        frame = spark.sql(write["select"])
        if write.get("cache"):
            frame = frame.cache()
            frame.count()
            started = time.monotonic()
        writer = frame.write.format("hudi").options(**write.get("options", {}))
        writer.mode(write.get("mode", "append")).save(path)
    else:
        raise ValueError(f"unknown step {step!r}")
    return time.monotonic() - started, outcome


def run_reads(spark, job: dict) -> dict:
    """Read a table once per requested read, into `out/<name>.parquet`."""
    out = job["out"]
    os.makedirs(out, exist_ok=True)
    results: dict[str, dict] = {}
    for read in job["reads"]:
        started = time.monotonic()
        target = os.path.join(out, read["name"] + ".parquet")
        options = {"hoodie.schema.on.read.enable": "true", **read.get("options", {})}
        try:
            frame = spark.read.format("hudi").options(**options).load(job["path"])
            _save_one_file(frame, target)
            results[read["name"]] = {"file": target, "options": options, "seconds": round(time.monotonic() - started, 3)}
        except Exception as exc:  # noqa: BLE001 - Hudi's refusal is a result to compare
            results[read["name"]] = {"error": _error_text(exc), "options": options, "seconds": round(time.monotonic() - started, 3)}
    return results


def time_reads(spark, job: dict) -> dict[str, float]:
    """Best seconds of each read, every row and column produced (Spark's `noop` sink)."""
    found = {}
    for read in job["reads"]:
        times = []
        for _ in range(int(job.get("repeat", 3))):
            started = time.monotonic()
            frame = spark.read.format("hudi").options(**read.get("options", {})).load(job["path"])
            frame.write.format("noop").mode("overwrite").save()
            times.append(time.monotonic() - started)
        found[read["name"]] = round(min(times), 3)
    return found


def _save_one_file(frame, target: str) -> None:
    scratch = target + ".tmp"
    shutil.rmtree(scratch, ignore_errors=True)
    frame.coalesce(1).write.mode("overwrite").parquet(scratch)
    [part] = glob.glob(os.path.join(scratch, "part-*.parquet"))  # coalesced: one file, also for no rows
    os.replace(part, target)
    shutil.rmtree(scratch, ignore_errors=True)


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    causes = [line.strip() for line in text if line.strip().startswith("Caused by:")]
    head = " | ".join(line.strip() for line in text[:4])[:1500]
    return head + (f" | root cause: {causes[-1][:800]}" if causes else "")


def timeline(spark, path: str) -> dict:
    """Completed instants as Hudi's loaders list them: the active and the archived timeline."""
    jvm = spark.sparkContext._jvm
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    storage_conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(hadoop)
    client = jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder() \
        .setConf(storage_conf).setBasePath(path).build()

    def listed(hudi_timeline) -> list[dict]:
        found = []
        for instant in hudi_timeline.filterCompletedInstants().getInstants():
            found.append({"requested": instant.requestedTime(), "completed": instant.getCompletionTime(),
                          "action": instant.getAction()})
        return found

    active = listed(client.getActiveTimeline())
    archived_timeline = client.getArchivedTimeline()
    archived_timeline.loadCompletedInstantDetailsInMemory()
    archived = listed(archived_timeline)
    return {"active": active, "archived": archived, "table_version": client.getTableConfig().getTableVersion().versionCode()}


WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


def plan_reads(found: dict, table_type: str, incremental: bool) -> list[dict]:
    """Snapshot, read-optimized (merge-on-read), as of every completed write (archived ones too),
    and incremental windows: from the start, from a third and from the next-to-last write to the
    latest, and from a third to two thirds. Windows are in completion times on version 8+."""
    reads = [{"name": "snapshot", "options": {"hoodie.datasource.query.type": "snapshot"}}]
    if table_type == "mor":
        reads.append({"name": "read_optimized", "options": {"hoodie.datasource.query.type": "read_optimized"}})
    writes = [i for i in found["archived"] + found["active"] if i["action"] in WRITE_ACTIONS]
    writes.sort(key=lambda i: i["requested"])
    for instant in writes:
        reads.append({"name": f"as_of_{instant['requested']}", "options": {"as.of.instant": instant["requested"]}})
    if incremental and writes:
        key = "completed" if found["table_version"] >= 8 else "requested"
        times = sorted(i[key] for i in writes)
        third, two_thirds = times[len(times) // 3], times[(2 * len(times)) // 3]
        windows = {("000", None), (third, None), (third, two_thirds), (times[-2] if len(times) > 1 else "000", None)}
        for begin, end in sorted(windows, key=str):
            options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin}
            if end is not None:
                options["hoodie.datasource.read.end.instanttime"] = end
            reads.append({"name": f"incremental_{begin}_{end or 'latest'}", "options": options})
    return reads


def main(argv: list[str]) -> int:
    request_path, response_path = argv[1], argv[2]
    with open(request_path, encoding="utf-8") as handle:
        request = json.load(handle)
    started = time.monotonic()
    spark = session(request["jar"], request["warehouse"], request.get("conf", {}))
    response: dict = {"session_seconds": round(time.monotonic() - started, 3), "jobs": []}
    try:
        for job in request["jobs"]:
            began = time.monotonic()
            result: dict = {"kind": job["kind"], "path": job["path"]}
            try:
                if job["kind"] == "steps":
                    result["steps"] = run_steps(spark, job)
                elif job["kind"] == "reads":
                    result["reads"] = run_reads(spark, job)
                elif job["kind"] == "time_reads":
                    result["seconds_by_read"] = time_reads(spark, job)
                elif job["kind"] == "oracle":
                    result["timeline"] = timeline(spark, job["path"])
                    reads = plan_reads(result["timeline"], job["table_type"], job.get("incremental", True))
                    result["reads"] = run_reads(spark, {**job, "reads": reads})
                else:
                    raise ValueError(f"unknown job kind {job['kind']!r}")
                if job.get("timeline"):
                    result["timeline"] = timeline(spark, job["path"])
            except Exception as exc:  # noqa: BLE001 - reported to the caller, which raises
                result["error"] = _error_text(exc)
                result["traceback"] = traceback.format_exc()[-4000:]
            result["seconds"] = round(time.monotonic() - began, 3)
            response["jobs"].append(result)
            if "error" in result and job.get("stop_on_error", True):
                break
    finally:
        with open(response_path + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(response, handle, indent=1)
        os.replace(response_path + ".tmp", response_path)
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
