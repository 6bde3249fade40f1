"""Other writers than one Spark SQL session, for the oracle's driver: Hudi's write client driven
action by action, and Spark jobs writing one table at once. Runs in the oracle environment's
Python (imported by `driver.py`), never by the project. Standard library and PySpark only.

Hudi's Flink bundles are not on Maven Central here, so what Flink's pipeline writes is emulated
with the client Flink's writer is built on, here its Spark flavour (`SparkRDDWriteClient`):
records carrying the change they are (`HoodieOperation`: I, U, -U, D, as a Flink changelog hands
them over), instants begun and completed in any order by several writers (non-blocking
concurrency control), compactions planned and run between them.

A client step:

    {"client": {"options": {...}, "schema": {Avro record}, "writers": {"c": {...}}, "actions": [...]}}

`options` is the write config of every writer (`hoodie.avro.schema` is `schema`), `writers` adds
options of some writers; a writer is made on its first action. Actions, in order:

- `{"writer": "a", "begin": "upsert" | "insert", "rows": [...]}`: start a commit and write the
  rows (the files are written, the instant stays inflight);
- `{"writer": "a", "commit": true}`: complete the commit the writer began (with
  `"expect": "conflict"`, Hudi must refuse it for a write conflict: the instant stays inflight,
  its files written, until a later writer rolls it back);
- `{"writer": "a", "write": "upsert" | "insert", "rows": [...]}`: both at once;
- `{"writer": "c", "schedule": "compaction"}`: plan a compaction (pending);
- `{"writer": "c", "run": "compaction"}`: run the writer's planned compaction and complete it.

A row is the record as JSON (values of nullable fields bare) and `"_op"`, its operation. The
ordering field's values must be ints (they become the payload's `Integer` ordering value).

A concurrent step, `{"concurrent": [step, step, ...]}`, runs its steps (`sql` or `write`) in
threads started at once; some may fail (a write conflict aborts a writer): each one's outcome is
returned, and the step fails only when all of them do.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

OPERATIONS = {"I": "INSERT", "U": "UPDATE_AFTER", "-U": "UPDATE_BEFORE", "D": "DELETE"}
SERVICES = ("compaction",)


def run_client(spark, spec: dict, path: str) -> list[dict]:
    """Run a client step's actions on the table at `path`; returns what each did (instants)."""
    jvm = spark.sparkContext._jvm
    schema_text = json.dumps(spec["schema"])
    options = {**spec.get("options", {}), "hoodie.avro.schema": schema_text}
    writers: dict[str, Any] = {}
    begun: dict[str, tuple[str, Any]] = {}
    planned: dict[str, tuple[str, str]] = {}
    done: list[dict] = []
    try:
        for action in spec["actions"]:
            name = action["writer"]
            if name not in writers:
                writers[name] = _client(spark, path, {**options, **spec.get("writers", {}).get(name, {})})
            client = writers[name]
            if "begin" in action or "write" in action:
                kind = action.get("begin") or action["write"]
                if kind not in ("upsert", "insert"):
                    raise ValueError(f"unknown write {kind!r}")
                instant = client.startCommit()
                statuses = getattr(client, kind)(_records(spark, spec["schema"], options, action["rows"]), instant)
                statuses.count()  # the files are written (Hudi keeps the statuses persisted for the commit)
                begun[name] = (instant, statuses)
                done.append({"writer": name, "began": instant, "rows": len(action["rows"])})
            if "commit" in action or "write" in action:
                instant, statuses = begun.pop(name)
                if action.get("expect") == "conflict":
                    done.append({"writer": name, "aborted": instant, "error": _conflict(client, instant, statuses)})
                    continue
                if not client.commit(instant, statuses):
                    raise RuntimeError(f"writer {name} could not commit {instant}")
                done.append({"writer": name, "committed": instant})
            if "schedule" in action:
                service = _service(action["schedule"])
                found = client.scheduleCompaction(jvm.org.apache.hudi.common.util.Option.empty())
                if not found.isPresent():
                    raise RuntimeError(f"writer {name} planned no {service}")
                planned[name] = (service, found.get())
                done.append({"writer": name, "planned": service, "instant": found.get()})
            if "run" in action:
                service, instant = planned.pop(name)
                if service != _service(action["run"]):
                    raise ValueError(f"writer {name} planned a {service}, not a {action['run']}")
                written = client.compact(instant)
                client.commitCompaction(instant, written, jvm.org.apache.hudi.common.util.Option.empty())
                done.append({"writer": name, "ran": service, "instant": instant})
        if begun or planned:
            raise ValueError(f"actions left unfinished: commits {sorted(begun)}, services {sorted(planned)}")
    finally:
        for client in writers.values():
            client.close()
    return done


def _conflict(client, instant: str, statuses) -> str:
    """Commit, expecting Hudi to refuse it for a write conflict; returns Hudi's message."""
    try:
        client.commit(instant, statuses)
    except Exception as exc:  # py4j wraps Hudi's exception
        text = str(exc)
        if "HoodieWriteConflictException" not in text:
            raise
        return next((line.strip() for line in text.splitlines() if "HoodieWriteConflictException" in line), text)[:500]
    raise RuntimeError(f"the commit of {instant} was expected to conflict, and completed")


def run_concurrently(steps: list[dict], run_one: Callable[[dict], object]) -> list[dict]:
    """Run steps in threads started at once; returns each one's outcome (ok, or its error)."""
    start = threading.Barrier(len(steps))
    outcomes: list[dict] = [{} for _ in steps]

    def work(number: int, step: dict) -> None:
        start.wait()
        try:
            run_one(step)
            outcomes[number] = {"ok": True}
        except Exception as exc:  # noqa: BLE001 - a writer aborted by a conflict is an outcome
            outcomes[number] = {"ok": False, "error": " | ".join(str(exc).strip().splitlines()[:3])[:1500]}

    threads = [threading.Thread(target=work, args=(n, s)) for n, s in enumerate(steps)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if not any(o["ok"] for o in outcomes):
        raise RuntimeError("every concurrent writer failed: " + "; ".join(o["error"] for o in outcomes))
    return outcomes


def _service(name: str) -> str:
    if name not in SERVICES:
        raise ValueError(f"unknown table service {name!r}; use one of {SERVICES}")
    return name


def _client(spark, path: str, options: dict[str, str]):
    jvm = spark.sparkContext._jvm
    props = jvm.java.util.Properties()
    for key, value in options.items():
        props.setProperty(key, str(value))
    config = jvm.org.apache.hudi.config.HoodieWriteConfig.newBuilder().withPath(path).withProps(props).build()
    context = jvm.org.apache.hudi.client.common.HoodieSparkEngineContext(spark.sparkContext._jsc)
    return jvm.org.apache.hudi.client.SparkRDDWriteClient(context, config)


def _records(spark, schema: dict, options: dict[str, str], rows: list[dict]):
    """The rows as Hudi records (Avro payloads with their operation), one Spark partition."""
    jvm = spark.sparkContext._jvm
    model = jvm.org.apache.hudi.common.model
    avro = jvm.org.apache.avro
    parsed = avro.Schema.Parser().parse(json.dumps(schema))
    reader = avro.generic.GenericDatumReader(parsed)
    key_field = options["hoodie.datasource.write.recordkey.field"]
    partition_field = options.get("hoodie.datasource.write.partitionpath.field", "")
    ordering_field = options["hoodie.datasource.write.precombine.field"]
    hive_style = options.get("hoodie.datasource.write.hive_style_partitioning", "false") == "true"
    records = jvm.java.util.ArrayList()
    for row in rows:
        values = {k: v for k, v in row.items() if k != "_op"}
        decoder = avro.io.DecoderFactory.get().jsonDecoder(parsed, json.dumps(_avro_json(schema, values)))
        record = reader.read(None, decoder)
        payload = model.DefaultHoodieRecordPayload(record, values[ordering_field])
        partition = str(values[partition_field]) if partition_field else ""
        if partition_field and hive_style:
            partition = f"{partition_field}={partition}"
        operation = getattr(model.HoodieOperation, OPERATIONS[row["_op"]])
        records.add(model.HoodieAvroRecord(model.HoodieKey(str(values[key_field]), partition), payload, operation))
    return spark.sparkContext._jsc.parallelize(records, 1)


def _avro_json(schema: dict, values: dict) -> dict:
    """Values in Avro's JSON encoding: a non-null value of a union names its branch."""
    encoded = {}
    for field in schema["fields"]:
        value, kind = values.get(field["name"]), field["type"]
        if isinstance(kind, list) and value is not None:
            [branch] = [k for k in kind if k != "null"]
            value = {branch if isinstance(branch, str) else branch["name"]: value}
        encoded[field["name"]] = value
    return encoded
