"""What completed commits say they wrote, checked against the files a read finds.

Hudi plans a read from the files it lists and skips a log block that fails its checks: a file a
clean removed and the torn tail of a failed append are normal. But every completed write records
the files it wrote in its write stats, and for a log file the bytes its appends cover (from
`logOffset` to `fileSizeInBytes`, the file's size when the write closed it). A file a completed
commit wrote that no clean or rollback removed, missing from the listing, or a block inside a
committed byte range that cannot be read, is data loss: reads must say so rather than return
older or fewer rows. Files written by commits that were archived before the table was opened
are not known here and are not checked.
"""

from __future__ import annotations

import json
import os
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from shim.errors import CommittedDataError
from shim.files import BaseFile, LogFile, parse_base_file, parse_log_file
from shim.layout.slices import FileGroupFiles, FileSlice, latest_file_slice
from shim.timeline.instant import Action, Instant, instant_key
from shim.timeline.timeline import Timeline

_REMOVING = (Action.CLEAN, Action.ROLLBACK)


@dataclass(frozen=True, slots=True)
class CommittedRange:
    """Bytes `start` to `end` of a log file, appended by the completed write `instant`."""

    instant: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Written:
    instant: str
    file: BaseFile | LogFile


class CommittedFiles:
    """The files the completed writes of a timeline wrote (read from their metadata once)."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self._lock = threading.Lock()
        self._groups: dict[tuple[str, str], list[_Written]] | None = None
        self._ranges: dict[tuple[str, str], list[CommittedRange]] = {}
        self._removed: frozenset[str] = frozenset()
        self._writes: dict[str, Instant] = {}
        self._fields: dict[str, frozenset[str] | None] = {}

    def _load(self) -> dict[tuple[str, str], list[_Written]]:
        with self._lock:
            if self._groups is not None:
                return self._groups
            groups: dict[tuple[str, str], list[_Written]] = defaultdict(list)
            ranges: dict[tuple[str, str], list[CommittedRange]] = defaultdict(list)
            for instant in self.timeline.completed_writes():
                commit = instant.requested_time
                self._writes[commit] = instant
                for stat in self.timeline.commit_metadata(instant).write_stats:
                    name, partition = stat.file_name, stat.partition_path
                    written = parse_base_file(name, partition) or parse_log_file(name, partition)
                    if written is None:
                        continue
                    groups[(partition, written.file_id)].append(_Written(commit, written))
                    if isinstance(written, LogFile) and stat.file_size > 0:
                        ranges[(partition, name)].append(CommittedRange(commit, stat.log_offset, stat.file_size))
            self._ranges = dict(ranges)
            self._removed = frozenset(self._removed_names())
            self._groups = dict(groups)
            return self._groups

    def _removed_names(self) -> Iterable[str]:
        """Names of the files completed cleans and rollbacks deleted."""
        for instant in self.timeline.instants:
            if instant.action not in _REMOVING or not instant.is_completed:
                continue
            partitions = self.timeline.read_raw(instant).get("partitionMetadata") or {}
            for entry in partitions.values() if isinstance(partitions, dict) else ():
                for path in (entry or {}).get("successDeleteFiles") or () if isinstance(entry, dict) else ():
                    yield os.path.basename(str(path))

    def partitions(self, read_instant: str) -> set[str]:
        """Partitions completed writes visible as of `read_instant` wrote files into."""
        return {partition for (partition, _), written in self._load().items()
                if any(self.timeline.is_committed(w.instant, read_instant) for w in written)}

    def log_ranges(self, partition: str, name: str, read_instant: str) -> list[CommittedRange]:
        """The byte ranges of a log file that writes visible as of `read_instant` appended."""
        self._load()
        return [r for r in self._ranges.get((partition, name), ())
                if self.timeline.is_committed(r.instant, read_instant)]

    def knows_log(self, partition: str, name: str) -> bool:
        """Whether a completed write on the timeline appended to the log file."""
        self._load()
        return (partition, name) in self._ranges

    def slice_appends(self, file_slice: FileSlice, read_instant: str) -> list[CommittedRange] | None:
        """The appends to the slice's log files by writes visible as of `read_instant`; None when
        some log file has none known (written by a commit archived before the table was opened)."""
        appends = []
        for log in file_slice.log_files:
            if not self.knows_log(log.partition_path, log.name):
                return None
            appends.extend(self.log_ranges(log.partition_path, log.name, read_instant))
        return appends

    def schema_fields(self, instant: str) -> frozenset[str] | None:
        """Top-level field names of the Avro schema the completed write `instant` wrote with
        (its commit metadata's `schema`); None when it records none or is not a known write."""
        self._load()
        with self._lock:
            if instant not in self._fields:
                written = self._writes.get(instant)
                text = None if written is None else self.timeline.commit_metadata(written).schema
                self._fields[instant] = None if text is None else _field_names(text)
            return self._fields[instant]

    def check_slices(self, slices: Sequence[FileSlice], partitions: Iterable[str], read_instant: str,
                     table_path: str, *, logs: bool = True) -> None:
        """Raise when a slice lacks a file the commits say it holds, in the given partitions
        (`logs`: log files too, else base files only).

        Raises:
            CommittedDataError: naming the missing file and the instant that wrote it.
        """
        groups = self._load()
        wanted = set(partitions)
        planned = {(s.partition_path, s.file_id): s for s in slices}
        replaced = self.timeline.replaced_file_groups(read_instant)
        for key, written in groups.items():
            if key[0] not in wanted or key in replaced:
                continue
            visible = [w for w in written if self.timeline.is_committed(w.instant, read_instant)
                       and w.file.name not in self._removed]
            if not visible:
                continue
            expected = latest_file_slice(_group_of(key, visible), self.timeline, read_instant)
            if expected is None:
                continue
            missing = _missing(expected if logs else expected.without_logs(), planned.get(key))
            if missing is not None:
                commit = next(w.instant for w in visible if w.file.name == missing.name)
                path = os.path.join(table_path, missing.partition_path, missing.name)
                raise CommittedDataError(
                    f"{path} is missing: the completed commit {commit} wrote it, and no clean or rollback "
                    "removed it; reading on would return older or fewer rows",
                    path=path, instant=commit)


def _field_names(schema: str) -> frozenset[str] | None:
    try:
        parsed = json.loads(schema)
    except ValueError:
        return None
    fields = parsed.get("fields") if isinstance(parsed, dict) else None
    if not isinstance(fields, list):
        return None
    return frozenset(str(f.get("name")) for f in fields if isinstance(f, dict))


def _group_of(key: tuple[str, str], written: list[_Written]) -> FileGroupFiles:
    bases = {w.file.name: w.file for w in written if isinstance(w.file, BaseFile)}
    logs = {w.file.name: w.file for w in written if isinstance(w.file, LogFile)}
    return FileGroupFiles(key[0], key[1], list(bases.values()), list(logs.values()))


def _missing(expected: FileSlice, planned: FileSlice | None) -> BaseFile | LogFile | None:
    """The first file of the expected slice the planned one lacks (None: it lacks none)."""
    if planned is None:
        return expected.base_file or next(iter(expected.log_files), None)
    if instant_key(planned.base_instant) > instant_key(expected.base_instant):
        return None  # a base file of a write archived before this table was opened
    if expected.base_file is not None and (
            planned.base_file is None or instant_key(planned.base_instant) < instant_key(expected.base_instant)):
        return expected.base_file
    if planned.base_instant != expected.base_instant:
        return None
    present = {log.name for log in planned.log_files}
    return next((log for log in expected.log_files if log.name not in present), None)

