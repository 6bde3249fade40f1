"""The write task: one Spark task's rows written into their file groups.

Each file group (partition path, bucket) is written under its commit-scoped lock
(`group_state`): copy-on-write groups and new groups get a base file (the previous records
merged with the batch), existing merge-on-read groups get blocks (an Avro or Parquet data block
and/or a version-3 delete block) in the write's log file of the group, one per group and write.
Rows bound for base files are first handed over (`handoff`), so that the task reaching a group
first writes the rows of every task at once. Each task logs its own rows of a merge-on-read
group, less those that lose to a version of their key another task of the write logged before
(keys and ordering values are set aside with every log for this). Rows of a new merge-on-read
group reaching it after this write gave it a base file (tasks of a later wave) are logged on
that base file, not rewritten into it. Every file's marker is created before the file.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from shim.bloom import BLOOM_FILTER_KEY
from shim.errors import WriteError
from shim.files import base_file_name, log_file_name
from shim.layout.slices import FileSlice, file_slices_as_of
from shim.layout.table_schema import META_COLUMNS
from shim.log.blocks import HeaderKey
from shim.log.positions import encode_positions
from shim.log.writer import encode_delete_block, encode_parquet_data_block, extend_log_file, write_log_file
from shim.planning.planner import Scan, build_scan
from shim.read.base_files import parquet_footer
from shim.read.merge_keys import MergeMode, merge_spec_for
from shim.scan_options import ScanOptions
from shim.schema import InternalSchema, internal_to_arrow
from shim.storage import Storage, join
from shim.table import open_table
from shim.timeline.timeline import Timeline
from shim.write.avro_block import encode_data_block
from shim.write.bucket import bucket_file_id, bucket_of_file_id
from shim.write.data_files import (
    FileWrite,
    avro_record_schema,
    ensure_partition_metafile,
    next_log_version,
    write_base_file,
)
from shim.write.group_state import (
    GroupState,
    locked_group,
    record_replaced,
    state_folder,
    try_locked_group,
)
from shim.write.handoff import HandOverTurn, read_spill, spill_name, write_spill
from shim.write.job import WritePlan
from shim.write.markers import IOType, create_marker
from shim.write.merge import RECORD_KEY, merge_records, outranked
from shim.write.options import Operation
from shim.write.records import GroupRows, prepare_rows
from shim.write.task_info import KeepAlive, TaskInfo
from shim.write.txn import ensure_pending
from shim.write.write_schema import align_to_schema


@dataclass(frozen=True, slots=True)
class TaskReport:
    """What a task wrote (for logs and tests; the commit reads the file group states)."""

    partition_id: int
    rows: int
    deletes: int
    files: tuple[str, ...]


def write_task(plan: WritePlan, batches: Iterable[pa.RecordBatch], task: TaskInfo | None = None) -> TaskReport:
    """Write one task's rows. Raises WriteError when the instant was rolled back meanwhile."""
    task = task or TaskInfo()
    with HandOverTurn(plan.storage, state_folder(plan.table_path, plan.instant), task.partition_id) as turn:
        collected = [b for b in batches if b.num_rows]
        if not collected:
            return TaskReport(task.partition_id, 0, 0, ())
        ensure_pending(plan.txn, plan.config)
        with KeepAlive(plan.storage, plan.instant, plan.options.heartbeat_interval_ms / 2000.0):
            work = TaskWrite(plan, collected, task)
            work.hand_over()
            turn.handed_over()
            turn.wait_for_others()
            report = work.write()
            ensure_pending(plan.txn, plan.config)
    return report


class TaskWrite:
    """One task's rows split by file group, written in two steps: `hand_over`, then `write`."""

    def __init__(self, plan: WritePlan, batches: list[pa.RecordBatch], task: TaskInfo) -> None:
        self.task = task
        self.writer = _GroupWriter(plan, task)
        self.deleting = plan.operation is Operation.DELETE_PARTITION
        if self.deleting:  # the rows only name partitions: nothing of them is written
            self.rows = pa.Table.from_batches(batches)
            return
        self.prepared = prepare_rows(pa.Table.from_batches(batches), plan.write_schema(), plan.options)
        self.groups = list(self.prepared.groups())

    def hand_over(self) -> None:
        """Leave the rows bound for base files for whichever task writes each group first."""
        if self.deleting:
            return
        for group in self.groups:
            self.writer.hand_over(group)

    def write(self) -> TaskReport:
        """Write every group whose rows no other task has written meanwhile."""
        if self.deleting:
            return self._note_partitions_to_delete()
        files: list[str] = []
        # Take free file groups first and come back for the ones another task is writing, so that
        # tasks sharing file groups rarely wait for each other.
        deferred = []
        for group in _rotated(self.groups, self.task.partition_id):
            done, name = self.writer.write(group, wait=False)
            if not done:
                deferred.append(group)
            elif name:
                files.append(name)
        for group in deferred:
            _, name = self.writer.write(group)
            if name:
                files.append(name)
        return TaskReport(self.task.partition_id, len(self.prepared.keys), len(self.prepared.delete_keys),
                          tuple(files))


    def _note_partitions_to_delete(self) -> TaskReport:
        """delete_partition without `partitions.to.delete`: each partition the rows fall in has its
        live file groups noted as replaced (with the option, the driver lists them)."""
        plan, rows = self.writer.plan, self.rows
        if not plan.options.partitions_to_delete:
            paths = plan.options.partitioning.paths({n: rows.column(n) for n in rows.column_names}, rows.num_rows)
            for partition in pc.unique(paths).to_pylist():
                self.writer.committed(partition, 0)
        return TaskReport(self.task.partition_id, 0, 0, ())


def _rotated(groups: list[GroupRows], partition_id: int) -> list[GroupRows]:
    """`groups` starting at a place that depends on the task, so that tasks start apart."""
    if not groups:
        return groups
    start = int((partition_id * 0.6180339887498949) % 1.0 * len(groups))
    return groups[start:] + groups[:start]


_HAND_OVER_TRIES = 4
class _GroupWriter:
    def __init__(self, plan: WritePlan, task: TaskInfo) -> None:
        self.plan = plan
        self.task = task
        self.schema = plan.write_schema()
        self.timeline = Timeline.load(plan.storage, plan.config)
        self.views: dict[str, dict[int, FileSlice]] = {}
        self.replaced: set[str] = set()
        self.handed: dict[tuple[str, int], tuple[str, pa.Table]] = {}  # group -> (spill name, rows)
        self.spill_folder = state_folder(plan.table_path, plan.instant)
        self._scan: object | None = None
        self._seqnos: pa.Array = pa.array([], pa.string())
        self._commit_times: pa.Array = pa.array([], pa.string())
        spec = merge_spec_for(plan.config, _merge_schema(self.schema), lambda name: name)
        self.ordering = spec.ordering_fields if spec.mode is MergeMode.EVENT_TIME_ORDERING else ()

    # -- existing file groups -----------------------------------------------------------------

    def _slices(self, partition: str) -> list[FileSlice]:
        if self.plan.read_instant is None:
            return []
        return file_slices_as_of(self.plan.storage, [partition], self.timeline, self.plan.read_instant)

    def view(self, partition: str) -> dict[int, FileSlice]:
        """Bucket -> latest committed file slice in `partition`."""
        if partition not in self.views:
            by_bucket: dict[int, FileSlice] = {}
            for file_slice in self._slices(partition):
                bucket = bucket_of_file_id(file_slice.file_id)
                if bucket is None or bucket in by_bucket:
                    raise WriteError(
                        f"{self.plan.table_path}: partition {partition!r} holds file group {file_slice.file_id}, "
                        "which does not fit the bucket index layout (one file group per 8-digit bucket id); "
                        "this table was not written with the bucket index",
                        path=self.plan.table_path,
                    )
                by_bucket[bucket] = file_slice
            self.views[partition] = by_bucket
        return self.views[partition]

    def committed(self, partition: str, bucket: int) -> FileSlice | None:
        """The bucket's committed file slice, or None (always None when the write replaces)."""
        operation = self.plan.operation
        if operation in (Operation.INSERT_OVERWRITE, Operation.DELETE_PARTITION) and partition not in self.replaced:
            self.replaced.add(partition)
            record_replaced(self.plan.storage, self.plan.instant, partition,
                            [s.file_id for s in self._slices(partition)])
        return None if operation.replaces else self.view(partition).get(bucket)

    # -- writing ------------------------------------------------------------------------------

    def _new_state(self, group: GroupRows, committed: FileSlice | None) -> GroupState:
        file_id = committed.file_id if committed is not None else bucket_file_id(
            group.bucket, f"{self.plan.instant}/{group.partition_path}/{group.bucket}")
        return GroupState(group.partition_path, group.bucket, file_id)

    def hand_over(self, group: GroupRows) -> None:
        """Leave the group's rows for whichever task writes its base file first (see `handoff`).

        Only rows bound for a base file, without deletes. The rows are written aside first, so the
        group's lock is held only to list them. A group whose lock stays taken is being written:
        its rows go in later, when this task writes the group itself. Rows handed over to a group
        whose base file is written already go in by one more rewrite (of all such at once)."""
        plan = self.plan
        committed = self.committed(group.partition_path, group.bucket)
        if not group.data.num_rows or len(group.delete_keys) or (plan.is_mor and committed is not None):
            return
        name = spill_name(group.partition_path, group.bucket, self.task.partition_id)
        rows = self._meta(group.data, group.keys, group.partition_path, "")
        write_spill(self.plan.storage, self.spill_folder, name, rows)
        for attempt in range(_HAND_OVER_TRIES):
            with try_locked_group(plan.storage, plan.instant, group.partition_path, group.bucket) as handle:
                if handle is not None:
                    state = handle.read() or self._new_state(group, committed)
                    handle.write(dataclasses.replace(state, spills=tuple(sorted({*state.spills, name}))))
                    self.handed[(group.partition_path, group.bucket)] = (name, rows)
                    return
            time.sleep(0.001 * (attempt + 1))  # another task listing its rows holds the lock only briefly

    def write(self, group: GroupRows, wait: bool = True) -> tuple[bool, str | None]:
        """Write one file group's rows: (done, file written). Not done when `wait` is False and
        another task holds the file group."""
        plan = self.plan
        committed = self.committed(group.partition_path, group.bucket)
        handed = self.handed.get((group.partition_path, group.bucket))
        lock = locked_group if wait else try_locked_group
        with lock(plan.storage, plan.instant, group.partition_path, group.bucket) as handle:
            if handle is None:
                return False, None
            state = handle.read() or self._new_state(group, committed)
            if handed is not None and handed[0] not in state.spills:
                return True, None  # another task wrote these rows into the base file
            if plan.options.partial_columns and not (plan.is_mor and committed is not None and state.base is None):
                raise WriteError(
                    f"a partial update of {group.data.num_rows} record(s) in partition {group.partition_path!r} "
                    f"(bucket {group.bucket}) has no file group to go into: partial updates update records the "
                    "table holds; write whole records for new keys")
            if plan.is_mor and committed is not None and state.base is None:
                state, name = self._append_log(state, committed, group)
            elif plan.is_mor and state.base is not None:
                state, name = self._log_on_new_base(state, group, handed)
            elif group.data.num_rows or state.base is not None or committed is not None:
                state, name = self._rewrite_base(state, committed, group, handed)
            else:
                return True, None  # deletes of keys in a file group that does not exist
            handle.write(state)
            return True, name

    def _meta(self, data: pa.Table, keys: pa.Array, partition: str, file_name: str) -> pa.Table:
        n = data.num_rows
        commit_times, seqnos = self._sequence(n)
        meta = [
            commit_times,
            seqnos,
            keys.cast(pa.string()),
            pa.repeat(pa.scalar(partition), n),
            pa.repeat(pa.scalar(file_name), n),
        ]
        return pa.Table.from_arrays(meta + list(data.columns), names=list(META_COLUMNS) + data.column_names)

    def _sequence(self, n: int) -> tuple[pa.Array, pa.Array]:
        """The commit time and sequence numbers (`<instant>_<task>_<row>`, rows counted from 0 in
        every file group) of `n` records: slices of arrays built once per task."""
        if n > len(self._seqnos):
            size = max(n, 2 * len(self._seqnos))
            prefix = f"{self.plan.instant}_{self.task.partition_id}_"
            index = pa.array(np.arange(size, dtype=np.int64)).cast(pa.string())
            self._seqnos = pc.binary_join_element_wise(pa.repeat(pa.scalar(prefix), size), index, "")
            self._commit_times = pa.repeat(pa.scalar(self.plan.instant), size)
        return self._commit_times.slice(0, n), self._seqnos.slice(0, n)

    def _rewrite_base(self, state: GroupState, committed: FileSlice | None, group: GroupRows,
                      handed: tuple[str, pa.Table] | None) -> tuple[GroupState, str]:
        """Write the group's base file: the previous records, then every pending hand-over, then
        this task's rows and deletes (unless handed over), merged in that order."""
        plan = self.plan
        previous: pa.Table | None = None
        prev_commit: str | None = None
        prev_path: str | None = None
        if state.base is not None:
            prev_path = join(plan.table_path, state.partition_path, state.base.file_name)
            previous = pq.read_table(plan.storage.parquet_source(prev_path))
            prev_commit = state.base.prev_commit
        elif committed is not None and committed.base_file is not None:
            prev_path = committed.base_path(plan.table_path)
            previous = self._read_committed(committed)
            prev_commit = committed.base_instant
        name = base_file_name(state.file_id, self.task.write_token, plan.instant)
        no_keys = group.delete_keys.slice(0, 0)
        # Handed-over rows carry no file name yet: write_base_file sets it on every row.
        steps = [(handed[1] if handed and spill == handed[0] else read_spill(self.plan.storage, self.spill_folder, spill), no_keys)
                 for spill in state.spills]
        if handed is None:
            steps.append((self._meta(group.data, group.keys, state.partition_path, name), group.delete_keys))
        combine = (plan.instant, plan.options.ordering_fields) if plan.options.combine else None
        merged, inserts, updates, deletes = previous, 0, 0, 0
        for incoming, delete_keys in steps:
            result = merge_records(merged, incoming, delete_keys, self.ordering, batch=combine)
            merged = result.table
            inserts, updates, deletes = inserts + result.inserts, updates + result.updates, deletes + result.deletes
        assert merged is not None
        create_marker(plan.storage, plan.instant, state.partition_path, name,
                      IOType.MERGE if previous is not None else IOType.CREATE)
        ensure_pending(plan.txn, plan.config)
        written = write_base_file(
            plan.storage, plan.config, partition_path=state.partition_path, file_id=state.file_id,
            instant=plan.instant, write_token=self.task.write_token, data=merged,
            partition_id=self.task.partition_id, prev_commit=prev_commit, preserve_meta=True,
            parquet=plan.options.parquet,
            bloom_filter=plan.options.bloom_filter,
            bloom_from=_bloom_to_extend(plan.storage, prev_path, steps) if plan.options.bloom_filter and not deletes else None,
        )
        before = state.base
        if before is not None and before.file_name != name:
            plan.storage.remove(join(plan.table_path, state.partition_path, before.file_name), missing_ok=True)
        stat = dataclasses.replace(
            written,
            num_inserts=(before.num_inserts if before else 0) + inserts,
            num_updates=(before.num_updates if before else 0) + updates,
            num_deletes=(before.num_deletes if before else 0) + deletes,
        )
        rewrites = state.rewrites + (before is not None)
        return dataclasses.replace(state, base=stat, spills=(), rewrites=rewrites), name

    def _read_committed(self, committed: FileSlice) -> pa.Table:
        if self._scan is None:
            self._scan = build_scan(open_table(self.plan.storage).snapshot(), ScanOptions(mode="read_optimized", include_meta=True),
                                    plan_files=False)
        scan = self._scan
        assert isinstance(scan, Scan)
        rows = dataclasses.replace(scan, slices=[committed.without_logs()]).reader().read_all()
        data = align_to_schema(rows.drop_columns(list(META_COLUMNS)), self.schema)
        return pa.Table.from_arrays(
            [rows.column(c) for c in META_COLUMNS] + list(data.columns), names=list(META_COLUMNS) + data.column_names
        )

    def _append_log(self, state: GroupState, committed: FileSlice, group: GroupRows) -> tuple[GroupState, str | None]:
        """This task's rows of a merge-on-read file group committed before: a log file on its slice."""
        base_instant = self.plan.pending_compactions.get((state.partition_path, state.file_id), committed.base_instant)
        data, keys = self._precombined_with_earlier_logs(state, group)
        records = self._meta(data, keys, state.partition_path, state.file_id)
        base_file = committed.base_file.name if committed.base_file is not None else None
        placed = self._positions(state, committed, base_instant, keys, group.delete_keys)
        return self._write_log(state, base_instant, base_file, records, group, placed)

    def _positions(self, state: GroupState, committed: FileSlice, base_instant: str, keys: pa.Array,
                   deleted: pa.Array) -> _Placed | None:
        """The base file rows the records and the deletes update (`hoodie.write.record.positions`),
        when the slice's base file holds every one of their keys, once (as Hudi writes them only
        then); None otherwise."""
        base = committed.base_file
        if not self.plan.options.record_positions or base is None or base_instant != committed.base_instant:
            return None
        path = join(self.plan.table_path, state.partition_path, base.name)
        stored = pq.read_table(self.plan.storage.parquet_source(path), columns=[RECORD_KEY]).column(0).combine_chunks()
        found = []
        for wanted in (keys, deleted):
            rows = pc.index_in(wanted.cast(pa.string()), value_set=stored)
            if rows.null_count:
                return None
            found.append(np.asarray(rows.to_numpy(zero_copy_only=False), dtype=np.int64))
        for rows in found:
            if len(np.unique(rows)) != len(rows):
                return None
        return _Placed(found[0], found[1])

    def _log_on_new_base(self, state: GroupState, group: GroupRows,
                         handed: tuple[str, pa.Table] | None) -> tuple[GroupState, str | None]:
        """Rows reaching a merge-on-read file group after this write gave it a base file (from tasks
        that ran later): every pending hand-over and this task's rows go into a log file on that
        base file, as Hudi's append handle writes them, instead of a rewrite of the base file.
        Under pre-combine, rows losing to the version of their key in the base file or in an
        earlier log of this write are left out."""
        base = state.base
        assert base is not None
        plan = self.plan
        pending = [handed[1] if handed and spill == handed[0] else read_spill(self.plan.storage, self.spill_folder, spill)
                   for spill in state.spills]
        if handed is None:  # this task did not hand its rows over: they are not among the above
            pending.append(self._meta(group.data, group.keys, state.partition_path, ""))
        combine = (plan.instant, plan.options.ordering_fields) if plan.options.combine else None
        no_keys = group.delete_keys.slice(0, 0)
        records: pa.Table | None = None
        for incoming in pending:
            records = merge_records(records, incoming, no_keys, self.ordering, batch=combine).table
        assert records is not None
        fields = self._precombine_fields()
        if records.num_rows and fields:
            base_path = join(plan.table_path, state.partition_path, base.file_name)
            lost = self._lost_to_earlier(state, records, pq.read_table(plan.storage.parquet_source(base_path), columns=[RECORD_KEY, *fields]))
            if lost is not None:
                records = records.filter(pa.array(~lost))
        names = pa.repeat(pa.scalar(state.file_id), records.num_rows)  # log records name their file group
        records = records.set_column(records.schema.get_field_index("_hoodie_file_name"), "_hoodie_file_name", names)
        state = dataclasses.replace(state, spills=())
        return self._write_log(state, plan.instant, base.file_name, records, group)

    def _write_log(self, state: GroupState, base_instant: str, base_file: str | None, records: pa.Table,
                   group: GroupRows, placed: _Placed | None = None) -> tuple[GroupState, str | None]:
        """A data block of `records` (meta columns filled) and a delete block of the group's deletes
        in this write's log file of the file slice with base instant `base_instant`: a new log
        file for the first task to log there, the same file extended for the next (one log file
        per file group and write, however many tasks hold its rows). The file group's state
        records the file's size after each task's blocks: bytes past it (a task that died while
        appending) are cut off by the next task and by the commit."""
        plan = self.plan
        partition = state.partition_path
        folder = join(plan.table_path, partition)
        if not records.num_rows and not len(group.delete_keys):
            return state, None  # every row lost to a newer version another task of this write wrote
        blocks = []
        if records.num_rows:
            header: dict[HeaderKey | int, str] = {}
            if plan.options.partial_columns:  # only the columns set, as Hudi writes a MERGE INTO of some
                records = records.select([*META_COLUMNS, *plan.options.partial_columns])
                header[HeaderKey.IS_PARTIAL] = "true"
            if placed is not None:  # records in the order of their rows in the base file, as Hudi writes them
                order = np.argsort(placed.records, kind="stable")
                records = records.take(pa.array(order))
                header.update(_positions_header(placed.records[order], base_instant))
            blocks.append(self._data_block(records, header))
        if len(group.delete_keys):
            keys, ordering = group.delete_keys, list(group.delete_ordering)
            header = {HeaderKey.INSTANT_TIME: plan.instant}
            if placed is not None:
                order = np.argsort(placed.deletes, kind="stable")
                keys, ordering = keys.take(pa.array(order)), [column.take(pa.array(order)) for column in ordering]
                header.update(_positions_header(placed.deletes[order], base_instant))
            names = keys.to_pylist()
            blocks.append(encode_delete_block(names, [partition] * len(names), ordering, header))
        earlier = next((log for log in state.logs if log.prev_commit == base_instant), None)
        if earlier is None:
            ensure_partition_metafile(plan.storage, partition, plan.instant)
            version = next_log_version(plan.storage, folder, state.file_id, base_instant)
            name = log_file_name(state.file_id, base_instant, version, self.task.write_token)
            create_marker(plan.storage, plan.instant, partition, name, IOType.APPEND)
            ensure_pending(plan.txn, plan.config)
            write_log_file(plan.storage, os.path.join(folder, name), blocks)
        else:
            version, name = earlier.log_version or 1, earlier.file_name
            ensure_pending(plan.txn, plan.config)
            extend_log_file(plan.storage, os.path.join(folder, name), earlier.file_size, blocks)
        size = plan.storage.file_size(os.path.join(folder, name))
        fields = self._precombine_fields()
        logged = state.logged
        if records.num_rows and fields:  # for tasks logging rows of this group later (see below)
            # Named after this block's end: a task dying before its state is written leaves a
            # file that no state names, so nobody pre-combines against rows that were cut off.
            keys_name = f"{name}.{size}.keys.arrow"
            write_spill(self.plan.storage, self.spill_folder, keys_name, records.select([RECORD_KEY, *fields]))
            logged += (keys_name,)
        before = earlier or FileWrite(partition, state.file_id, name, 0)
        stat = dataclasses.replace(
            before,
            num_writes=before.num_writes + records.num_rows,
            num_updates=before.num_updates + records.num_rows,
            num_deletes=before.num_deletes + len(group.delete_keys),
            file_size=size,
            prev_commit=base_instant,
            base_file=base_file,
            log_version=version,
        )
        logs = tuple(log for log in state.logs if log is not earlier) + (stat,)
        return dataclasses.replace(state, logs=logs, logged=logged), name

    def _data_block(self, records: pa.Table, extra: dict[HeaderKey | int, str]) -> bytes:
        """An Avro or Parquet data block of `records` (`hoodie.logfile.data.block.format`), with
        the `extra` header entries."""
        plan = self.plan
        schema = avro_record_schema(plan.config.name, records.schema)
        if plan.options.log_block_format == "parquet":
            header = {HeaderKey.INSTANT_TIME: plan.instant, HeaderKey.SCHEMA: json.dumps(schema), **extra}
            settings = plan.options.parquet
            return encode_parquet_data_block(records, header, row_group_size=settings.row_group_rows(records),
                                             **settings.writer_options(records.column_names, plan.options.record_key_fields))
        return encode_data_block(records, schema, {HeaderKey.INSTANT_TIME: plan.instant, **extra})

    def _precombine_fields(self) -> tuple[str, ...]:
        return self.plan.options.ordering_fields if self.plan.options.combine else ()

    def _precombined_with_earlier_logs(self, state: GroupState, group: GroupRows) -> tuple[pa.Table, pa.Array]:
        """The group's rows without those that lose to a version of their key another task of this
        write logged already (Hudi pre-combines a whole batch by its ordering fields)."""
        fields = self._precombine_fields()
        if not group.data.num_rows or not fields:
            return group.data, group.keys
        incoming = pa.table([group.keys.cast(pa.string()), *(group.data.column(f) for f in fields)],
                            names=[RECORD_KEY, *fields])
        lost = self._lost_to_earlier(state, incoming)
        if lost is None:
            return group.data, group.keys
        keep = pa.array(~lost)
        return group.data.filter(keep), group.keys.filter(keep)

    def _lost_to_earlier(self, state: GroupState, incoming: pa.Table, *also: pa.Table) -> np.ndarray | None:
        """Which rows of `incoming` lose to a version of their key this write logged to the group
        already (or one in `also`), by the pre-combine fields; None when there is none to meet."""
        earlier = [*also, *self._logged_versions(state)]
        if not earlier:
            return None
        return outranked(pa.concat_tables(earlier, promote_options="permissive"), incoming,
                         self._precombine_fields())

    def _logged_versions(self, state: GroupState) -> list[pa.Table]:
        """The keys and ordering values of every block this write logged to the group (set aside
        with each block and named in the group's state)."""
        return [read_spill(self.plan.storage, self.spill_folder, name) for name in state.logged]


@dataclass(frozen=True, slots=True)
class _Placed:
    """The base file rows a log write's records and deletes update, in their order."""

    records: np.ndarray
    deletes: np.ndarray


def _positions_header(rows: np.ndarray, base_instant: str) -> dict[HeaderKey | int, str]:
    return {HeaderKey.RECORD_POSITIONS: encode_positions(rows),
            HeaderKey.BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS: base_instant}


def _bloom_to_extend(storage: Storage, previous: str | None,
                     steps: list[tuple[pa.Table, pa.Array]]) -> tuple[str, pa.Array] | None:
    """(the rewritten file's bloom filter, the keys merged into it), when the rewrite deleted no
    key: its keys are then the previous file's plus these."""
    if previous is None:
        return None
    written = parquet_footer(storage, previous).metadata.get(BLOOM_FILTER_KEY)
    if written is None:
        return None
    keys = [incoming.column(RECORD_KEY).combine_chunks() for incoming, _ in steps]
    return written.decode("ascii"), pa.concat_arrays(keys) if keys else pa.array([], pa.string())


def _merge_schema(schema: InternalSchema) -> pa.Schema:
    return internal_to_arrow(schema)
