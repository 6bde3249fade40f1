"""Compaction of merge-on-read tables: every file slice's log blocks merged into a new base file.

    shim.write.services.compact(path)          # in this process
    engines.spark.compact(path, spark)   # one Spark task per file group

As Hudi does on table version 6: the compaction is scheduled as `<ts>.compaction.requested`
holding an Avro `HoodieCompactionPlan` (version 2: file names relative to the partition), one
operation per file slice that has log files; it runs as `<ts>.compaction.inflight`, one Spark task
per file group, each reading its slice with the shim's snapshot merge and writing
`<fileId>_<token>_<ts>.parquet` (records keep their commit time and sequence number); it
completes as `<ts>.commit` with `compacted: true` and operation COMPACT. A compaction whose
writer died is resumed: its partial files are rolled back and its plan runs again.

`schedule_compaction` only writes the plan. After a merge-on-read commit, `compact_after_commit`
schedules and runs one in the committing process when `hoodie.compact.inline` asks and the
trigger (`compaction_trigger`) fires, or only schedules it (`hoodie.compact.schedule.inline`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from shim.errors import TableNotFoundError, UnsupportedFeatureError, WriteError
from shim.files import base_file_name
from shim.layout.slices import FileSlice
from shim.layout.table_schema import META_COLUMNS
from shim.planning.planner import build_scan
from shim.planning.snapshot import TableSnapshot
from shim.properties import TableConfig, read_table_config
from shim.scan_options import ScanOptions
from shim.schema import InternalSchema, schema_from_json, schema_to_json
from shim.storage import Storage, join, paths, storage_and_options
from shim.table import open_table
from shim.timeline.instant import Action, instant_key
from shim.timeline.metadata import LATEST_SCHEMA_KEY
from shim.timeline.timeline import Timeline
from shim.write import heartbeat
from shim.write.avro_metadata import COMPACTION_PLAN, decode_avro_record, encode_avro_record
from shim.write.clock import new_instant_time
from shim.write.commit import CommitRecord, InstantFiles
from shim.write.current_schema import current_schema
from shim.write.data_files import avro_record_schema, write_base_file
from shim.write.group_state import GroupState, all_states, locked_group, remove_unlisted_files
from shim.write.markers import IOType, create_marker
from shim.write.options import (
    BLOOM_FILTER,
    DEFAULT_HEARTBEAT_MISSES,
    DEFAULT_HEARTBEAT_MS,
    HEARTBEAT_INTERVAL,
    HEARTBEAT_MISSES,
    WriteOptions,
    flag,
    parquet_settings,
)
from shim.write.parquet_settings import DEFAULT_PARQUET, ParquetSettings
from shim.write.rollback import rollback_failed_write
from shim.write.service_options import InlineMode
from shim.write.services.compaction_trigger import compaction_due
from shim.write.task_info import KeepAlive, TaskInfo
from shim.write.txn import Transaction, abandon, after_commit, complete, recover, table_guard
from shim.write.write_schema import data_arrow_schema

COMPACTION_PLAN_VERSION = 2


@dataclass(frozen=True, slots=True)
class CompactionJob:
    """A started compaction (picklable): its instant, the write it reads as of, its operations."""

    storage: Storage
    config: TableConfig
    txn: Transaction
    read_instant: str
    schema_json: str
    operations: tuple[dict[str, Any], ...]
    bloom_filter: bool = True
    parquet: ParquetSettings = DEFAULT_PARQUET

    @property
    def instant(self) -> str:
        return self.txn.instant


OperationRunner = Callable[["CompactionJob", list[dict[str, Any]]], object]
"""Runs a compaction's operations elsewhere (each with `compact_file_group`), e.g. one Spark task each."""


def compact(location: str, options: Mapping[str, str] | None = None, *,
            runner: OperationRunner | None = None) -> str | None:
    """Schedule (or resume) and run a compaction; returns its instant, or None if no slice has logs.

    Every file group is compacted by `runner` (`engines.spark.compact` runs each in a Spark task),
    or, without one, in this process.

    Raises:
        ConcurrentWriteError: another live writer holds the table.
        UnsupportedFeatureError: the table is copy-on-write.
    """
    storage, opts = storage_and_options(location, options)
    config = _mor_table(storage)
    bloom_filter, parquet = flag(opts, BLOOM_FILTER, True), parquet_settings(opts)  # checked before any write
    return run_compaction(storage, config, bloom_filter=bloom_filter, parquet=parquet,
                          timeout_s=_timeout_s(opts), runner=runner)


def compact_after_commit(storage: Storage, config: TableConfig, options: WriteOptions, instant: str) -> str | None:
    """Hudi's inline compaction after the delta commit `instant` completed: a pending compaction
    runs, or, when the trigger fires, one is scheduled (and, unless only scheduling, run) in this
    process. A failure names the commit, which stays completed."""
    settings = options.inline_compaction
    if not config.is_mor or settings.mode is InlineMode.OFF:
        return None

    def due(timeline: Timeline, now: str) -> bool:
        return compaction_due(timeline, settings, now)

    def run() -> str | None:
        if settings.mode is InlineMode.SCHEDULE:
            return _schedule_only(storage, config, options.heartbeat_timeout_s, due)
        return run_compaction(storage, config, bloom_filter=options.bloom_filter, parquet=options.parquet,
                              timeout_s=options.heartbeat_timeout_s, due=due)

    return after_commit(storage, instant, "the inline compaction",
                        "engines.spark.compact(path) resumes the compaction", run)


def run_compaction(storage: Storage, config: TableConfig, *, bloom_filter: bool, parquet: ParquetSettings,
                   timeout_s: float, runner: OperationRunner | None = None,
                   due: Callable[[Timeline, str], bool] | None = None) -> str | None:
    """Resume a pending compaction or schedule one (when `due`), run it and complete it."""
    job = start_compaction(storage, config, timeout_s, due)
    if job is None:
        return None
    job = dataclasses.replace(job, bloom_filter=bloom_filter, parquet=parquet)
    try:
        if runner is not None and job.operations:
            runner(job, list(job.operations))
        else:
            for op in job.operations:
                compact_file_group(job, op)
        finish_compaction(job)
    except BaseException:
        abandon(job.txn)
        raise
    return job.instant


def _mor_table(storage: Storage) -> TableConfig:
    config = read_table_config(storage)
    if config is None:
        raise TableNotFoundError(f"no Hudi table at {storage.root}", path=storage.root)
    if not config.is_mor:
        raise UnsupportedFeatureError(f"{storage.root}: only merge-on-read tables are compacted",
                                      feature="compact-cow")
    config.require_parquet_base_files("compact it")
    return config


def _timeout_s(options: Mapping[str, str]) -> float:
    """How old a heartbeat may get before its writer counts as dead (`hoodie.client.heartbeat.*`)."""
    return int(options.get(HEARTBEAT_INTERVAL, DEFAULT_HEARTBEAT_MS)) * int(
        options.get(HEARTBEAT_MISSES, DEFAULT_HEARTBEAT_MISSES)) / 1000.0


def start_compaction(storage: Storage, config: TableConfig, timeout_s: float,
                     due: Callable[[Timeline, str], bool] | None = None) -> CompactionJob | None:
    """Under the table guard: resume a dead writer's compaction, or schedule a new one (if `due`
    says so of the timeline and the new instant)."""
    table_path = storage.root
    with table_guard(storage):
        timeline = _recovered_timeline(storage, config, timeout_s)
        pending = timeline.pending(Action.COMPACTION)
        if pending:
            inst = pending[0]
            if inst.state.value == "inflight":
                after = max((i.requested_time for i in timeline.instants), key=instant_key)
                rollback_failed_write(storage, inst, new_instant_time(after=after), keep_requested=True)
            instant = inst.requested_time
            plan = decode_avro_record(storage.read_bytes(paths.hoodie(table_path, f"{instant}.compaction.requested")))
            operations = tuple(plan.get("operations") or ())
            heartbeat.beat(storage, instant)
        else:
            scheduled = _schedule(storage, config, timeline, due)
            if scheduled is None:
                return None
            instant, operations = scheduled
            heartbeat.beat(storage, instant)
    txn = Transaction(storage, instant, Action.COMPACTION, timeout_s)
    try:
        txn.files(config).start(b"")
        table = TableSnapshot.load(storage, config)
        writes_before = [i.requested_time for i in table.active_timeline.completed_writes()
                         if instant_key(i.requested_time) < instant_key(instant)]
        if not writes_before:
            raise WriteError(f"{table_path}: compaction {instant} has no completed write before it", instant=instant)
        read_instant = writes_before[-1]
        schema = current_schema(table, read_instant)
        assert schema is not None
    except BaseException:
        abandon(txn)
        raise
    return CompactionJob(storage, config, txn, read_instant, schema_to_json(schema), operations)


def schedule_compaction(location: str, options: Mapping[str, str] | None = None) -> str | None:
    """Write a compaction plan (`<ts>.compaction.requested`) for every file slice with log files,
    without running it; returns its instant, or None when a compaction is already pending or no
    slice has logs. `compact` runs it; until then writes to its file groups start new slices."""
    storage, opts = storage_and_options(location, options)
    return _schedule_only(storage, _mor_table(storage), _timeout_s(opts), None)


def _schedule_only(storage: Storage, config: TableConfig, timeout_s: float,
                   due: Callable[[Timeline, str], bool] | None) -> str | None:
    with table_guard(storage):
        timeline = _recovered_timeline(storage, config, timeout_s)
        if timeline.pending(Action.COMPACTION):
            return None
        scheduled = _schedule(storage, config, timeline, due)
    return scheduled[0] if scheduled else None


def _recovered_timeline(storage: Storage, config: TableConfig, timeout_s: float) -> Timeline:
    """The timeline once dead writers' instants are rolled back (caller holds the table guard)."""
    recover(storage, config, Timeline.load(storage, config), timeout_s)
    return Timeline.load(storage, config)


def _schedule(storage: Storage, config: TableConfig, timeline: Timeline,
              due: Callable[[Timeline, str], bool] | None) -> tuple[str, tuple[dict[str, Any], ...]] | None:
    """Plan a compaction of every file slice with log files (caller holds the table guard)."""
    table = TableSnapshot.load(storage, config)
    read_instant = table.active_timeline.resolve_as_of(None)
    if read_instant is None:
        return None
    after = max((i.requested_time for i in timeline.instants), key=instant_key)
    instant = new_instant_time(after=after)
    if due is not None and not due(timeline, instant):
        return None
    slices = [s for s in table.file_slices(read_instant) if s.has_logs]
    if not slices:
        return None
    operations = tuple(_operation(s) for s in slices)
    plan = {"operations": list(operations), "extraMetadata": {}, "version": COMPACTION_PLAN_VERSION,
            "strategy": None, "preserveHoodieMetadata": True}
    InstantFiles(storage, config, instant, Action.COMPACTION).request(encode_avro_record(COMPACTION_PLAN, plan))
    return instant, operations


def _operation(file_slice: FileSlice) -> dict[str, Any]:
    sizes = float(sum(log.size for log in file_slice.log_files))
    return {
        "baseInstantTime": file_slice.base_instant,
        "deltaFilePaths": [log.name for log in file_slice.log_files],
        "dataFilePath": file_slice.base_file.name if file_slice.base_file is not None else None,
        "fileId": file_slice.file_id,
        "partitionPath": file_slice.partition_path,
        "metrics": {
            "TOTAL_LOG_FILES": float(len(file_slice.log_files)),
            "TOTAL_IO_READ_MB": 0.0,
            "TOTAL_LOG_FILES_SIZE": sizes,
            "TOTAL_IO_WRITE_MB": 0.0,
            "TOTAL_IO_MB": 0.0,
        },
        "bootstrapFilePath": None,
    }


def compact_file_group(job: CompactionJob, op: dict[str, Any], task: TaskInfo | None = None) -> str:
    """Merge one file slice into a new base file of the compaction instant; returns its name."""
    task = task or TaskInfo()
    with KeepAlive(job.storage, job.instant, job.txn.timeout_s / 4):
        return _compact(job, op, task)


def _compact(job: CompactionJob, op: dict[str, Any], task: TaskInfo) -> str:
    partition = op.get("partitionPath") or ""
    file_id = op["fileId"]
    scan = build_scan(open_table(job.storage).snapshot(), ScanOptions(mode="snapshot", include_meta=True, as_of=job.read_instant))
    slices = [s for s in scan.slices if s.partition_path == partition and s.file_id == file_id]
    rows = dataclasses.replace(scan, slices=slices).reader().read_all() if slices else None
    schema = schema_from_json(job.schema_json)
    target = _full_schema(schema)
    data = rows.select(target.names).cast(target) if rows is not None else target.empty_table()
    name = base_file_name(file_id, task.write_token, job.instant)
    bucket = int(file_id[:8]) if file_id[:8].isdigit() else 0
    with locked_group(job.storage, job.instant, partition, bucket) as handle:
        state = handle.read() or GroupState(partition, bucket, file_id)
        create_marker(job.storage, job.instant, partition, name, IOType.CREATE)
        written = write_base_file(
            job.storage, job.config, partition_path=partition, file_id=file_id, instant=job.instant,
            write_token=task.write_token, data=data, partition_id=task.partition_id,
            prev_commit=op.get("baseInstantTime"), preserve_meta=True, bloom_filter=job.bloom_filter,
            parquet=job.parquet,
        )
        if state.base is not None and state.base.file_name != name:
            job.storage.remove(join(job.storage.root, partition, state.base.file_name), missing_ok=True)
        handle.write(dataclasses.replace(state, base=dataclasses.replace(written, num_updates=written.num_writes,
                                                                         num_inserts=0)))
    return name


def _full_schema(schema: InternalSchema) -> pa.Schema:
    meta = [pa.field(name, pa.string()) for name in META_COLUMNS]
    return pa.schema(meta + list(data_arrow_schema(schema)))


def finish_compaction(job: CompactionJob) -> None:
    """Complete the compaction as a `commit` with `compacted: true`."""
    schema = schema_from_json(job.schema_json)
    states = all_states(job.storage, job.instant)
    remove_unlisted_files(job.storage, job.instant, states)
    writes = tuple(w for state in states for w in state.writes)
    extra = {"schema": json.dumps(avro_record_schema(job.config.name, data_arrow_schema(schema)))}
    table_has_history = job.storage.is_dir(paths.schema_folder(job.storage.root))
    if table_has_history:
        extra[LATEST_SCHEMA_KEY] = schema_to_json(schema)
    complete(job.txn, job.config, CommitRecord(writes, "COMPACT", extra, compacted=True))
