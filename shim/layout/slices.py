"""File groups and file slices as of an instant (the file system view).

Planning returns plain values: a `FileSlice` names a base file and the ordered log files to merge
on it; reading consumes them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from shim.files import BaseFile, LogFile, parse_base_file, parse_log_file
from shim.storage import Storage, join
from shim.timeline.instant import instant_key
from shim.timeline.timeline import Timeline


@dataclass(frozen=True, slots=True)
class FileSlice:
    """A base file (or none, for log-only groups) with the log files written on top of it."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None
    log_files: tuple[LogFile, ...]

    @property
    def has_logs(self) -> bool:
        return bool(self.log_files)

    def base_path(self, table_path: str) -> str | None:
        if self.base_file is None:
            return None
        return join(table_path, self.partition_path, self.base_file.name)

    def log_paths(self, table_path: str) -> list[str]:
        return [join(table_path, self.partition_path, log.name) for log in self.log_files]

    def without_logs(self) -> FileSlice:
        return FileSlice(self.partition_path, self.file_id, self.base_instant, self.base_file, ())


@dataclass(slots=True)
class FileGroupFiles:
    partition_path: str
    file_id: str
    base_files: list[BaseFile]
    log_files: list[LogFile]


def list_file_groups(storage: Storage, partitions: Iterable[str]) -> list[FileGroupFiles]:
    """Every file group found in the given partitions of the table at the storage's root, with
    all its base and log files."""
    groups: dict[tuple[str, str], FileGroupFiles] = {}
    for partition in partitions:
        folder = join(storage.root, partition)
        for entry in storage.list_files(folder):
            if not entry.is_file:
                continue
            name = entry.name
            base = parse_base_file(name, partition)
            log = None if base else parse_log_file(name, partition)
            item = base or log
            if item is None:
                continue
            size = entry.size
            key = (partition, item.file_id)
            group = groups.get(key)
            if group is None:
                group = groups[key] = FileGroupFiles(partition, item.file_id, [], [])
            if base is not None:
                group.base_files.append(replace(base, size=size))
            elif log is not None:
                group.log_files.append(replace(log, size=size))
    return [groups[key] for key in sorted(groups)]


def file_slices_as_of(
    storage: Storage,
    partitions: Iterable[str],
    timeline: Timeline,
    as_of: str | None,
    groups: Iterable[FileGroupFiles] | None = None,
) -> list[FileSlice]:
    """The latest committed file slice of every live file group, as of the read instant `as_of`.

    Rules (Hudi's file system view):
    - a base file counts when its instant is a completed write at or before `as_of`;
    - file groups replaced by a completed replacecommit at or before `as_of` are dropped;
    - a log file joins the slice of its base instant (table version 6: the instant in its name;
      version 8+: the newest base instant at or before the log's completion time, archived
      writes' too: a writer's log that completed after a compaction was planned joins the
      compacted slice, however long ago it began);
    - logs that land on a slice without a visible base file (pending or later compaction) are
      merged into the previous slice; a group with no visible base file reads from logs only.
    """
    replaced = timeline.replaced_file_groups(as_of)
    by_completion = timeline.config.version >= 8
    slices: list[FileSlice] = []
    for group in groups if groups is not None else list_file_groups(storage, partitions):
        if (group.partition_path, group.file_id) in replaced:
            continue
        file_slice = _latest_slice(group, timeline, as_of, by_completion)
        if file_slice is not None:
            slices.append(file_slice)
    return slices


def latest_file_slice(group: FileGroupFiles, timeline: Timeline, as_of: str | None) -> FileSlice | None:
    """The latest committed slice of one file group as of `as_of` (None: nothing of it is visible)."""
    return _latest_slice(group, timeline, as_of, timeline.config.version >= 8)


def _latest_slice(group: FileGroupFiles, timeline: Timeline, as_of: str | None, by_completion: bool) -> FileSlice | None:
    # Base files of instants after the read instant are not in the file group yet: a log file
    # completed after such a compaction was planned still joins the slice the read sees.
    bases = {base.instant_time: base for base in group.base_files if as_of is None
             or instant_key(base.instant_time) <= instant_key(as_of)}
    keys = sorted(bases, key=instant_key)
    logs_by_key: dict[str, list[LogFile]] = defaultdict(list)
    for log in group.log_files:
        key = _slice_key_of_log(log, keys, timeline, by_completion)
        if key is not None:
            logs_by_key[key].append(log)
    current: tuple[str, BaseFile | None] | None = None
    current_logs: list[LogFile] = []
    for key in sorted(set(keys) | set(logs_by_key), key=instant_key):
        if as_of is not None and instant_key(key) > instant_key(as_of):
            break
        base = bases.get(key)
        if base is not None and timeline.is_committed(key, as_of):
            current = (key, base)
            current_logs = list(logs_by_key.get(key, ()))
        elif current is not None:
            current_logs.extend(logs_by_key.get(key, ()))
        elif key in logs_by_key:
            current = (key, None)
            current_logs = list(logs_by_key[key])
    if current is None:
        return None
    base_instant, base_file = current
    if base_file is None and not current_logs:
        return None
    ordered = tuple(sorted(current_logs, key=LogFile.sort_key))
    return FileSlice(group.partition_path, group.file_id, base_instant, base_file, ordered)


def _slice_key_of_log(log: LogFile, base_keys: list[str], timeline: Timeline, by_completion: bool) -> str | None:
    """The base instant of the slice a log file joins: the newest at or before its completion
    time (Hudi's `HoodieFileGroup.getBaseInstantTime`), its own instant when none is. A log of an
    archived write joins the newest base whenever that base was requested before the log's
    write; otherwise its completion time is the archive's (read only then)."""
    if not by_completion:
        return log.instant_time
    if timeline.is_archived(log.instant_time) and (
            not base_keys or instant_key(base_keys[-1]) < instant_key(log.instant_time)):
        return base_keys[-1] if base_keys else log.instant_time
    completed = timeline.completion_time(log.instant_time)
    if completed is None:
        return None  # an uncommitted or rolled-back write: none of its blocks is visible
    position = bisect_right([instant_key(k) for k in base_keys], instant_key(completed))
    return base_keys[position - 1] if position else log.instant_time
