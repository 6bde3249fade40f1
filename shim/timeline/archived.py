"""The archived timeline of table versions 6 and 7: `HoodieArchivedMetaEntry` records in Avro data
blocks of the log files `.hoodie/archived/.commits_.archive.<N>_<token>` (written by Hudi's
`HoodieTimelineArchiver` and by `shim.write.services.archive`). Each block is decoded with the writer
schema its header carries; corrupt blocks are skipped with a warning, as in data log files.
Version 8+ tables archive to an LSM timeline of Parquet files (`shim.timeline.lsm`).
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
from dataclasses import dataclass
from typing import Any

import fastavro

from shim.errors import InvalidTableError
from shim.log.blocks import BlockType, HeaderKey
from shim.log.reader import read_log_file
from shim.properties import TableConfig
from shim.storage import Storage, paths
from shim.timeline.instant import Action, Instant, State, instant_key
from shim.timeline.lsm import read_lsm_instants

_ARCHIVE_FILE = re.compile(r"^\.commits_\.archive\.(\d+)_")
_COUNTS = struct.Struct(">ii")
_LENGTH = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class ArchivedInstant:
    """One archived instant file: its time, action and state (REQUESTED, INFLIGHT, COMPLETED),
    and the whole `HoodieArchivedMetaEntry` record (commit metadata, plans...)."""

    requested_time: str
    action: str
    state: str
    entry: dict[str, Any]


def archive_files(storage: Storage, config: TableConfig) -> list[str]:
    """Paths of the archive log files, oldest first."""
    folder = paths.archive_folder(storage.root, config.archive_path)
    found = [(int(m.group(1)), name) for name in storage.list_names(folder) if (m := _ARCHIVE_FILE.match(name))]
    return [os.path.join(folder, name) for _, name in sorted(found)]


def next_archive_version(storage: Storage, config: TableConfig) -> int:
    """The version number the next archive log file takes."""
    files = archive_files(storage, config)
    last = _ARCHIVE_FILE.match(os.path.basename(files[-1])) if files else None
    return int(last.group(1)) + 1 if last else 1


def read_archived_timeline(storage: Storage, config: TableConfig) -> list[ArchivedInstant]:
    """Every archived instant file, ordered by time (state order kept within a time). On the LSM
    timeline (layout 2) only completed instants are archived: each comes with `completionTime`,
    `metadata` and `plan` in its entry.

    Raises:
        InvalidTableError: a block that is not Avro data or does not decode, or an LSM file or
            manifest that does not read, naming the file.
    """
    if config.timeline_layout_version >= 2:
        folder = paths.archive_folder(storage.root, config.archive_path)
        return [ArchivedInstant(e["requested_time"], e["action"], "COMPLETED",
                                {"completionTime": e["completion_time"], "metadata": e["metadata"], "plan": e["plan"]})
                for e in read_lsm_instants(storage, folder)]
    found: list[ArchivedInstant] = []
    for path in archive_files(storage, config):
        found.extend(_entries(storage, path))
    return sorted(found, key=lambda a: instant_key(a.requested_time))


def _entries(storage: Storage, path: str) -> list[ArchivedInstant]:
    contents = read_log_file(storage, path)
    out = []
    for block in contents.blocks:
        where = f"{path} (block at byte {block.offset})"
        if block.block_type is not BlockType.AVRO_DATA or HeaderKey.SCHEMA not in block.header:
            raise InvalidTableError(f"{where}: an archive block must be Avro data with a schema", path=path)
        try:
            schema = fastavro.parse_schema(json.loads(block.header[HeaderKey.SCHEMA]))
            body = io.BytesIO(contents.data[block.content_offset:block.content_offset + block.content_length])
            _, count = _COUNTS.unpack(body.read(_COUNTS.size))
            for _ in range(count):
                (size,) = _LENGTH.unpack(body.read(_LENGTH.size))
                record: Any = fastavro.schemaless_reader(io.BytesIO(body.read(size)), schema)
                out.append(ArchivedInstant(str(record.get("commitTime") or ""), str(record.get("actionType") or ""),
                                           str(record.get("actionState") or "COMPLETED"), dict(record)))
        except (ValueError, struct.error, EOFError, KeyError, TypeError) as exc:
            raise InvalidTableError(f"{where}: cannot decode archived instants: {exc}", path=path) from exc
    return out


_ENTRY_METADATA = {"commit": "hoodieCommitMetadata", "deltacommit": "hoodieCommitMetadata",
                   "replacecommit": "hoodieReplaceCommitMetadata", "clean": "hoodieCleanMetadata",
                   "rollback": "hoodieRollbackMetadata", "savepoint": "hoodieSavePointMetadata"}


def archived_completed_instants(storage: Storage, config: TableConfig) -> list[tuple[Instant, dict[str, Any]]]:
    """The archive's completed instants of known actions, with their completed content (commit
    metadata of writes), oldest first: what `Timeline.including_archive` takes."""
    found: list[tuple[Instant, dict[str, Any]]] = []
    for archived in read_archived_timeline(storage, config):
        if archived.state.upper() != "COMPLETED" or archived.action not in _ENTRY_METADATA:
            continue
        if "metadata" in archived.entry and "completionTime" in archived.entry:  # LSM
            raw, completion = archived.entry["metadata"], archived.entry["completionTime"]
        else:
            raw, completion = archived.entry.get(_ENTRY_METADATA[archived.action]), None
        action = Action.parse(archived.action, storage.root)
        name = f"archived:{archived.requested_time}.{archived.action}"
        found.append((Instant(archived.requested_time, action, State.COMPLETED, completion, name), dict(raw or {})))
    return found
