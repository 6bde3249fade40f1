"""The archived timeline of table versions 6 and 7: `HoodieArchivedMetaEntry` records in Avro data
blocks of the log files `.hoodie/archived/.commits_.archive.<N>_<token>` (written by Hudi's
`HoodieTimelineArchiver` and by `shim.write.archive`). Each block is decoded with the writer
schema its header carries; corrupt blocks are skipped with a warning, as in data log files.
Version 8+ tables archive to an LSM timeline of Parquet files, which is not read here.
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

from shim import storage
from shim.errors import InvalidTableError, UnsupportedFeatureError
from shim.log.blocks import BlockType, HeaderKey
from shim.log.reader import read_log_file
from shim.properties import TableConfig
from shim.timeline.instant import instant_key

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


def archive_files(table_path: str, config: TableConfig) -> list[str]:
    """Paths of the archive log files, oldest first."""
    folder = storage.join(table_path, ".hoodie", config.archive_path)
    found = [(int(m.group(1)), name) for name in storage.list_names(folder) if (m := _ARCHIVE_FILE.match(name))]
    return [os.path.join(folder, name) for _, name in sorted(found)]


def next_archive_version(table_path: str, config: TableConfig) -> int:
    """The version number the next archive log file takes."""
    files = archive_files(table_path, config)
    last = _ARCHIVE_FILE.match(os.path.basename(files[-1])) if files else None
    return int(last.group(1)) + 1 if last else 1


def read_archived_timeline(table_path: str, config: TableConfig) -> list[ArchivedInstant]:
    """Every archived instant file, ordered by time (state order kept within a time).

    Raises:
        UnsupportedFeatureError: a table version 8+ (LSM timeline).
        InvalidTableError: a block that is not Avro data or does not decode, naming the file.
    """
    if config.version >= 8:
        raise UnsupportedFeatureError(
            f"{table_path}: the archived timeline of table version {config.version} (LSM) is not read",
            feature="lsm-archived-timeline", path=table_path)
    found: list[ArchivedInstant] = []
    for path in archive_files(table_path, config):
        found.extend(_entries(path))
    return sorted(found, key=lambda a: instant_key(a.requested_time))


def _entries(path: str) -> list[ArchivedInstant]:
    contents = read_log_file(path)
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
