"""One writer of the race test, in a process of its own (its store comes from the AWS_* environment,
its local cache folder from $HUDI_SHIM_CACHE):

    python -m tests.storage.race_writer LOCATION WRITER COMMITS START OUT

From the epoch time START it lands COMMITS upserts on the table at LOCATION (created by whichever
writer comes first): each inserts 3 keys of its own and sets the key "shared" to its instant.
A write refused because the other writer holds the table (`ConcurrentWriteError`) is tried
again after a pause; any other error is recorded and the write tried again too. OUT receives
the instants that landed, the refusals and the errors.
"""

from __future__ import annotations

import json
import random
import sys
import time

import pyarrow as pa

from shim.errors import ConcurrentWriteError, HudiShimError
from shim.write.job import abort_write, commit_write, plan_write
from shim.write.task import TaskInfo, write_task

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("fare", pa.float64())])
OPTIONS = {"hoodie.table.name": "race", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.bucket.index.num.buckets": "4",
           "hoodie.datasource.write.operation": "upsert"}


def rows(writer: int, step: int, instant: str) -> pa.Table:
    keys = [f"w{writer}-{step:02d}-{j}" for j in range(3)] + ["shared"]
    return pa.Table.from_pylist([{"id": key, "ts": int(instant), "region": "eu", "fare": float(writer * 1000 + step)}
                                 for key in keys], schema=SCHEMA)


def race(location: str, writer: int, commits: int, start: float) -> dict[str, object]:
    time.sleep(max(0.0, start - time.time()))
    began = time.monotonic()
    landed: list[str] = []
    refused, errors, attempts = 0, [], 0
    for step in range(commits):
        while True:
            attempts += 1
            try:
                plan = plan_write(location, OPTIONS, SCHEMA)
            except ConcurrentWriteError:
                refused += 1
                time.sleep(random.uniform(0.05, 0.25))
                continue
            try:
                write_task(plan, rows(writer, step, plan.instant).to_batches(), TaskInfo(0, attempts, writer))
                commit_write(plan)
            except HudiShimError as error:
                errors.append(f"{type(error).__name__}: {error}")
                if not plan.storage.exists(plan.txn.files(plan.config).path("completed")):  # else: a table service failed
                    abort_write(plan)
                    time.sleep(random.uniform(0.05, 0.25))
                    continue
            landed.append(plan.instant)
            break
    return {"landed": landed, "refused": refused, "errors": errors, "attempts": attempts,
            "seconds": time.monotonic() - began}


if __name__ == "__main__":
    location, writer, commits, start, out = sys.argv[1:]
    result = race(location, int(writer), int(commits), float(start))
    with open(out, "w") as handle:
        json.dump(result, handle)
