"""Rows one write task hands to another, so that a file group's base file is written once.

Without a shuffle by bucket, several Spark tasks hold rows of the same file group, and each task
that reaches the group after another has written it must rewrite the whole base file. So a task
first hands over the rows of each group that gets a base file: an Arrow IPC file (meta columns
filled, file name left blank) in the commit's state folder, listed in the group's state
(`GroupState.spills`). Then, taking the groups in an order of its own, it writes each group whose
hand-over is still pending, taking in every pending hand-over at once; a group whose hand-over
another task took in is done. Rows handed over after a group's base file was written are merged
by one more rewrite, as without hand-over. The files live in the marker folder, which the commit
(or the rollback of a failed write) removes.
"""

from __future__ import annotations

import os

import pyarrow as pa

from engines.spark.group_state import group_key


def spill_name(partition_path: str, bucket: int, partition_id: int) -> str:
    """The hand-over file of one Spark partition for one file group (a retried task attempt
    replaces its predecessor's)."""
    return f"{group_key(partition_path, bucket)}.p{partition_id}.arrow"


def write_spill(folder: str, name: str, rows: pa.Table) -> None:
    """Write `rows` as `folder/name` (Arrow IPC file, written aside then renamed into place)."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    tmp = f"{path}.{os.getpid()}.tmp"
    with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, rows.schema) as writer:
        writer.write_table(rows)
    os.replace(tmp, path)


def read_spill(folder: str, name: str) -> pa.Table:
    """The rows of a hand-over file (memory-mapped, no copy)."""
    with pa.memory_map(os.path.join(folder, name)) as source:
        return pa.ipc.open_file(source).read_all()
