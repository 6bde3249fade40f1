"""A write job without Spark: plan on the driver, write in tasks, commit on the driver.

`plan_write` opens (or creates) the table, starts the instant (`txn.begin`) and fixes everything
the tasks need in a picklable `WritePlan`; `shim.write.task.write_task` writes file groups;
`commit_write` turns the tasks' file group states into the completed instant. The Spark data
source is a thin shell around these three, and tests drive them directly.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from shim.errors import InvalidArgumentError, WriteError
from shim.planning.snapshot import TableSnapshot
from shim.properties import TableConfig, TableType, read_table_config
from shim.schema import InternalSchema, schema_from_json, schema_to_json
from shim.storage import Storage, as_uri, split_storage_options, storage_for
from shim.timeline.instant import Action
from shim.timeline.metadata import LATEST_SCHEMA_KEY
from shim.timeline.timeline import Timeline
from shim.write.commit import CommitRecord, inflight_metadata
from shim.write.current_schema import current_schema
from shim.write.data_files import avro_record_schema
from shim.write.group_state import (
    GroupState,
    all_replaced,
    all_states,
    cut_unrecorded_log_tails,
    remove_unlisted_files,
)
from shim.write.options import NUM_BUCKETS, PARTITIONS_TO_DELETE, Operation, WriteOptions
from shim.write.schema_history import latest_history_text, persist_history, plan_schema_commit
from shim.write.services.after_commit import run_table_services
from shim.write.table_init import TableSpec, create_table
from shim.write.txn import Transaction, abandon, begin, complete, ensure_pending
from shim.write.write_schema import data_arrow_schema, evolve_for_write, initial_schema

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WritePlan:
    """Everything a write task needs, fixed when the write starts (picklable)."""

    storage: Storage
    config: TableConfig
    options: WriteOptions
    txn: Transaction
    read_instant: str | None
    write_schema_json: str
    previous_schema_json: str | None
    schema_on_read: bool
    pending_compactions: Mapping[tuple[str, str], str] = field(default_factory=dict)
    replace_all: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    @property
    def table_path(self) -> str:
        """The table's location (its storage's root; the storage, with the write's storage
        options, travels with the plan to tasks on other machines, rebuilt there)."""
        return self.storage.root

    @property
    def instant(self) -> str:
        return self.txn.instant

    @property
    def operation(self) -> Operation:
        return self.options.operation

    @property
    def is_mor(self) -> bool:
        return self.config.table_type is TableType.MERGE_ON_READ

    def write_schema(self) -> InternalSchema:
        return schema_from_json(self.write_schema_json)

    def previous_schema(self) -> InternalSchema | None:
        return schema_from_json(self.previous_schema_json) if self.previous_schema_json else None


def plan_write(
    location: str, options: Mapping[str, str], incoming: pa.Schema, *, overwrite: bool = False
) -> WritePlan:
    """Start a write of rows with schema `incoming` to the table at `location` (created if absent).

    `overwrite` (Spark's SaveMode.Overwrite) replaces the whole table's contents, as an
    insert_overwrite_table commit (the timeline is kept).

    Raises:
        ConcurrentWriteError: another live writer holds the table.
        InvalidArgumentError, UnsupportedFeatureError: the options do not fit the table.
        SchemaEvolutionError: the data's columns cannot be reconciled with the table's.
    """
    options, storage_options = split_storage_options(options)
    storage = storage_for(location, storage_options)
    config = read_table_config(storage)
    if config is not None:
        config.require_parquet_base_files("write to it")
    opts = WriteOptions.parse(options, tuple(incoming.names), config)
    if opts.drop_partition_columns:  # the table's schema leaves them out, as its files do
        incoming = pa.schema([f for f in incoming if f.name not in opts.partition_fields])
    if overwrite and config is not None and not opts.operation.replaces:
        opts = dataclasses.replace(opts, operation=Operation.INSERT_OVERWRITE_TABLE)
    if config is None:
        config = _create(storage, opts, incoming)
    elif opts.partitions_to_delete:  # checked before an instant is requested
        _check_partitions_matched(opts.partitions_to_delete, TableSnapshot.load(storage, config), config)
    action = _action(opts, config)
    txn, _ = begin(
        storage, config, action, timeout_s=opts.heartbeat_timeout_s,
        inflight=inflight_metadata(operation=opts.operation.metadata_name),
    )
    try:
        return _plan(storage, config, opts, txn, incoming)
    except BaseException:
        abandon(txn)
        raise


def _check_partitions_matched(patterns: tuple[str, ...], table: TableSnapshot, config: TableConfig) -> None:
    """Refuse a delete_partition whose patterns match no live partition (Hudi would commit an
    empty replacecommit); warn of each pattern that matches none while others do."""
    read_instant = table.active_timeline.resolve_as_of(None)
    partitions = sorted({s.partition_path for s in table.file_slices(read_instant)}) if read_instant else []
    unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(partition, p) for partition in partitions)]
    if not unmatched:
        return
    spelled = "hive-style paths (column=value)" if config.hive_style_partitioning else \
        "paths of values only, without column names (the table is not hive-style)"
    shown = ", ".join(partitions[:5]) + (", ..." if len(partitions) > 5 else "")
    if len(unmatched) == len(patterns):
        raise InvalidArgumentError(
            f"{PARTITIONS_TO_DELETE}={','.join(patterns)} matches none of the table's {len(partitions)} partitions "
            f"({shown or 'none'}): patterns match partition paths as written, here {spelled}")
    log.warning("%s: %s matches none of the table's partitions (%s); the others are deleted",
                PARTITIONS_TO_DELETE, ", ".join(unmatched), shown)


def _action(opts: WriteOptions, config: TableConfig) -> Action:
    if opts.operation.replaces:
        return Action.REPLACE_COMMIT
    return Action.DELTA_COMMIT if config.table_type is TableType.MERGE_ON_READ else Action.COMMIT


def _create(storage: Storage, opts: WriteOptions, incoming: pa.Schema) -> TableConfig:
    schema = initial_schema(opts.table_name, incoming)
    extra = {"hoodie.index.type": "BUCKET", NUM_BUCKETS: str(opts.num_buckets)}
    if opts.hash_fields != opts.record_key_fields:
        extra["hoodie.bucket.index.hash.field"] = ",".join(opts.hash_fields)
    if opts.new_table is not None:
        extra.update(opts.new_table.properties)
    spec = TableSpec(
        name=opts.table_name,
        record_key_fields=opts.record_key_fields,
        table_type=opts.table_type,
        partition_fields=opts.partition_fields,
        ordering_fields=opts.ordering_fields,
        hive_style_partitioning=opts.hive_style,
        url_encode_partitioning=opts.url_encode,
        payload_class=opts.payload_class,
        database=opts.database,
        extra=extra,
        key_generator=opts.new_table.key_generator_class if opts.new_table is not None else None,
        drop_partition_columns=opts.drop_partition_columns,
    )
    create_schema = json.dumps(avro_record_schema(opts.table_name, data_arrow_schema(schema)))
    try:
        return create_table(storage, spec, create_schema)
    except WriteError:
        config = read_table_config(storage)  # another writer created it a moment ago
        if config is None:
            raise
        return config


def _plan(
    storage: Storage, config: TableConfig, opts: WriteOptions, txn: Transaction, incoming: pa.Schema
) -> WritePlan:
    table = TableSnapshot.load(storage, config)
    read_instant = table.active_timeline.resolve_as_of(None)
    previous = current_schema(table, read_instant)
    on_read = opts.schema_on_read or _has_latest_schema(table, read_instant)
    if previous is None:
        evolved = initial_schema(opts.table_name, incoming)
    elif opts.operation is Operation.DELETE_PARTITION:
        evolved = previous  # no rows are written: the rows given only name partitions
    else:
        evolved = evolve_for_write(previous, incoming)
    if opts.partial_columns:
        table_columns = [f.name for f in data_arrow_schema(evolved)]
        if set(opts.partial_columns) >= set(table_columns):  # every column set: whole records
            opts = dataclasses.replace(opts, partial_columns=())
        else:
            opts = dataclasses.replace(opts, partial_columns=tuple(c for c in table_columns if c in opts.partial_columns))
    replace_all: dict[str, tuple[str, ...]] = {}
    if read_instant is not None and (opts.operation is Operation.INSERT_OVERWRITE_TABLE or opts.partitions_to_delete):
        for file_slice in table.file_slices(read_instant):
            partition = file_slice.partition_path
            if opts.operation is Operation.INSERT_OVERWRITE_TABLE or any(
                    fnmatch.fnmatchcase(partition, pattern) for pattern in opts.partitions_to_delete):
                replace_all[partition] = (*replace_all.get(partition, ()), file_slice.file_id)
    return WritePlan(
        storage=storage,
        config=config,
        options=opts,
        txn=txn,
        read_instant=read_instant,
        write_schema_json=schema_to_json(evolved),
        previous_schema_json=schema_to_json(previous) if previous is not None else None,
        schema_on_read=on_read,
        pending_compactions=pending_compactions(table),
        replace_all=replace_all,
    )


def _has_latest_schema(table: TableSnapshot, read_instant: str | None) -> bool:
    latest = table.active_timeline.latest_commit_metadata(read_instant)
    return latest is not None and latest[1].latest_schema is not None


def pending_compactions(table: TableSnapshot) -> dict[tuple[str, str], str]:
    """(partition, file id) -> instant of every file group in a pending compaction plan."""
    return {(str(op.get("partitionPath") or ""), str(op.get("fileId") or "")): instant
            for instant, op in table.active_timeline.pending_compaction_operations()}


def commit_write(plan: WritePlan) -> CommitRecord:
    """Complete the instant with what the tasks wrote (driver side; metadata only)."""
    ensure_pending(plan.txn, plan.config)
    states = all_states(plan.storage, plan.instant)
    remove_unlisted_files(plan.storage, plan.instant, states)
    cut_unrecorded_log_tails(plan.storage, states)
    _warn_of_rewrites(plan, states)
    writes = tuple(w for state in states for w in state.writes)
    new_ids = {(s.partition_path, s.file_id) for s in states}
    replaced: dict[str, tuple[str, ...]] = {}
    if plan.operation in (Operation.INSERT_OVERWRITE, Operation.DELETE_PARTITION):
        replaced = dict(all_replaced(plan.storage, plan.instant))  # partitions the tasks met
    if plan.operation in (Operation.INSERT_OVERWRITE_TABLE, Operation.DELETE_PARTITION):
        replaced |= dict(plan.replace_all)
    replaced = {
        p: tuple(f for f in ids if (p, f) not in new_ids) for p, ids in replaced.items()
    }
    replaced = {p: ids for p, ids in replaced.items() if ids}
    record = CommitRecord(writes, plan.operation.metadata_name, commit_extra_metadata(plan), replaced)
    complete(plan.txn, plan.config, record)
    run_table_services(plan.storage, plan.config, plan.options, plan.instant)
    if plan.options.callback is not None:
        plan.options.callback.send(plan.instant, plan.options.table_name, as_uri(plan.storage.root))
    return record


def _warn_of_rewrites(plan: WritePlan, states: list[GroupState]) -> None:
    """Say so when tasks rewrote base files that earlier tasks of this write had written: the rows
    of a file group came in Spark tasks that did not run at once (more partitions than Spark runs
    together), and each later one rewrote the file to take in its rows."""
    rewrites = sum(state.rewrites for state in states)
    if rewrites:
        log.warning(
            "hudi_shim write %s: %d base file(s) written by this write were rewritten %d time(s) to take in "
            "rows of Spark tasks that ran later; with more DataFrame partitions than Spark runs at once, "
            "repartition by bucket first (engines.spark.repartition_by_bucket(df, options)) so that each "
            "file group is written once", plan.instant, sum(1 for state in states if state.rewrites), rewrites)


def commit_extra_metadata(plan: WritePlan) -> dict[str, str]:
    """`extraMetadata` of the commit: the Avro writer schema and, schema-on-read, `latest_schema`
    (the `.schemacommit` history file is written here too)."""
    evolved = plan.write_schema()
    extra = {"schema": json.dumps(avro_record_schema(plan.options.table_name, data_arrow_schema(evolved)))}
    if plan.schema_on_read:
        timeline = Timeline.load(plan.storage, plan.config)
        history = latest_history_text(plan.storage, timeline)
        planned = plan_schema_commit(plan.previous_schema(), history, evolved, plan.instant)
        persist_history(plan.storage, timeline, plan.instant, planned.history)
        extra[LATEST_SCHEMA_KEY] = schema_to_json(planned.latest)
    return extra


def abort_write(plan: WritePlan) -> None:
    """The job failed: stop the heartbeat; the next writer rolls the instant back."""
    abandon(plan.txn)
