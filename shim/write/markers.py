"""Direct write markers: `.hoodie/.temp/<instant>/<partition>/<file>.marker.<IOTYPE>`.

A writer creates the marker before the data file, so a rollback of a failed write finds every
file it may have created (Hudi's `DirectWriteMarkers`; the marker type is CREATE for a new base
file, MERGE for a rewritten one, APPEND for a log file).
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass

from shim.storage import Storage, join, paths

TEMP_FOLDER = paths.TEMP_FOLDER
MARKER_EXTENSION = ".marker."


class IOType(enum.Enum):
    """What a write did to the file a marker names."""

    CREATE = "CREATE"
    MERGE = "MERGE"
    APPEND = "APPEND"


@dataclass(frozen=True, slots=True)
class Marker:
    """One data file a write created (or was about to create)."""

    partition_path: str
    file_name: str
    io_type: IOType

    def data_path(self, table_path: str) -> str:
        return join(table_path, self.partition_path, self.file_name)


def marker_folder(table_path: str, instant: str) -> str:
    """The marker folder of an instant."""
    return paths.markers(table_path, instant)


def create_marker(storage: Storage, instant: str, partition_path: str, file_name: str, io_type: IOType) -> str:
    """Create the marker of a data file about to be written; returns its path."""
    table_path = storage.root
    folder = join(marker_folder(table_path, instant), partition_path)
    storage.make_dirs(folder)
    path = os.path.join(folder, f"{file_name}{MARKER_EXTENSION}{io_type.value}")
    storage.create_if_absent(path)
    return path


def list_markers(storage: Storage, instant: str) -> list[Marker]:
    """Every marker of an instant (files of other kinds in the folder are ignored)."""
    table_path = storage.root
    root = marker_folder(table_path, instant)
    markers: list[Marker] = []
    for folder, _, names in storage.walk(root):
        partition = os.path.relpath(folder, root)
        partition = "" if partition == "." else partition.replace(os.sep, "/")
        for name in names:
            index = name.rfind(MARKER_EXTENSION)
            if index <= 0:
                continue
            kind = name[index + len(MARKER_EXTENSION):]
            try:
                io_type = IOType(kind)
            except ValueError:
                continue
            markers.append(Marker(partition, name[:index], io_type))
    return sorted(markers, key=lambda m: (m.partition_path, m.file_name))


def delete_marker_folder(storage: Storage, instant: str) -> None:
    """Remove an instant's marker folder (after it committed or was rolled back)."""
    table_path = storage.root
    storage.remove_tree(marker_folder(table_path, instant))
