"""Helpers for writer tests: run a write job without Spark, read rows back two ways."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

import shim
from shim.write.job import abort_write, commit_write, plan_write
from shim.write.task import TaskInfo, TaskReport, TaskWrite, write_task

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("fare", pa.float64())])
_STAGES = itertools.count(1)  # like Spark: every job's tasks get new stage and attempt ids
BASE_OPTIONS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.bucket.index.num.buckets": "4",
}


def rows_table(rows: Sequence[dict] | pa.Table, schema: pa.Schema | None = None) -> pa.Table:
    return rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(list(rows), schema=schema or SCHEMA)


def write(path: Path | str, rows: Sequence[dict] | pa.Table, *, tasks: int = 1, schema: pa.Schema | None = None,
          commit: bool = True, together: bool = False, reports: list[TaskReport] | None = None,
          **options: str) -> str:
    """One write job: the rows split over `tasks` tasks (round robin), then committed.

    Tasks run one after the other, or with `together` as tasks running at the same time do:
    every task hands its rows over before any writes. Each task's report is added to `reports`.
    """
    table = rows_table(rows, schema)
    plan = plan_write(str(path), {**BASE_OPTIONS, **options}, table.schema)
    stage = next(_STAGES)
    parts = [(TaskInfo(task, stage, stage * 100 + task), table.take(pa.array(range(task, table.num_rows, tasks),
                                                                             pa.int64()))) for task in range(tasks)]
    done = reports if reports is not None else []
    if together:
        works = [TaskWrite(plan, part.to_batches(), info) for info, part in parts if part.num_rows]
        for work in works:
            work.hand_over()
        done.extend(work.write() for work in works)
    else:
        done.extend(write_task(plan, part.to_batches(), info) for info, part in parts)
    if commit:
        commit_write(plan)
    else:
        abort_write(plan)
    return plan.instant


def shim_rows(path: Path | str, **kwargs: object) -> list[dict]:
    return sorted(shim.open_table(str(path)).read(**kwargs).to_pylist(), key=lambda r: r["id"])  # type: ignore[arg-type]


def hudi_rs_rows(path: Path | str, columns: Sequence[str]) -> list[dict]:
    import hudi

    batches = hudi.HudiTable(str(path)).read()
    if not batches:  # hudi-rs gives no batch at all when no row is left
        return []
    return sorted(pa.Table.from_batches(batches).select(list(columns)).to_pylist(), key=lambda r: r["id"])


def latest_rows(writes: Sequence[Sequence[dict]]) -> list[dict]:
    """The rows upserting the batches one after the other leaves, by key (field "id")."""
    latest: dict[str, dict] = {}
    for batch in writes:
        latest.update({r["id"]: r for r in batch})
    return sorted(latest.values(), key=lambda r: r["id"])


def data_files(path: Path | str) -> list[str]:
    """Relative paths of every base and log file."""
    root = Path(path)
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*")
        if p.is_file() and ".hoodie" not in p.parts and (p.suffix == ".parquet" or ".log." in p.name)
    )


def archived_entries(path: Path | str) -> list[dict]:
    """Every HoodieArchivedMetaEntry record in the table's archive log files, oldest first."""
    table = shim.open_table(str(path))
    return [archived.entry for archived in table.archived_timeline()]
