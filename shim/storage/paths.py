"""Every name under a table's `.hoodie` folder, built in one place.

Hudi's layout (table versions 6, 8, 9): `hoodie.properties`; the timeline in `.hoodie` (layout
1) or `.hoodie/timeline` (layout 2), its history (`archived/` archive logs, or the LSM timeline
under `timeline/history`); schema history in `.schema`; heartbeats in `.heartbeat`; markers of
writes under way in `.temp/<instant>`; this project's own coordination files in `.aux`; the
metadata table in `metadata`. Locations are joined with `/` whatever the platform, as URIs are.
"""

from __future__ import annotations

from shim.storage.base import join

HOODIE = ".hoodie"
PROPERTIES = "hoodie.properties"
SCHEMA_FOLDER = ".schema"
HEARTBEAT_FOLDER = ".heartbeat"
TEMP_FOLDER = ".temp"
AUX_FOLDER = ".aux"
ARCHIVE_FOLDER = "archived"
METADATA_FOLDER = "metadata"
GUARD_FILE = "hudi-shim.lock"


def hoodie(table_path: str, *parts: str) -> str:
    """`<table>/.hoodie/<parts...>`."""
    return join(table_path, HOODIE, *parts)


def properties(table_path: str) -> str:
    """The table's `hoodie.properties`."""
    return hoodie(table_path, PROPERTIES)


def timeline_folder(table_path: str, timeline_path: str) -> str:
    """The folder of the active timeline (`timeline_path`: "" for layout 1, "timeline" for 2)."""
    return hoodie(table_path, timeline_path)


def instant_file(table_path: str, timeline_path: str, name: str) -> str:
    """A file of the active timeline."""
    return hoodie(table_path, timeline_path, name)


def archive_folder(table_path: str, archive_path: str) -> str:
    """The archived timeline's folder (`archived`, or the LSM history under the timeline)."""
    return hoodie(table_path, archive_path)


def schema_folder(table_path: str) -> str:
    """`.hoodie/.schema`: the schema history of schema-on-read tables."""
    return hoodie(table_path, SCHEMA_FOLDER)


def heartbeat(table_path: str, instant: str) -> str:
    """The heartbeat file of a write under way."""
    return hoodie(table_path, HEARTBEAT_FOLDER, instant)


def markers(table_path: str, instant: str) -> str:
    """The marker folder of a write under way."""
    return hoodie(table_path, TEMP_FOLDER, instant)


def aux(table_path: str, *parts: str) -> str:
    """`.hoodie/.aux/<parts...>`."""
    return hoodie(table_path, AUX_FOLDER, *parts)


def guard(table_path: str) -> str:
    """The writers' table lock (`.hoodie/.aux/hudi-shim.lock`)."""
    return aux(table_path, GUARD_FILE)


def table_file(table_path: str, relative: str) -> str:
    """A file the table's properties name relative to its base path (Hudi's index definitions,
    `hoodie.table.index.defs.path`; older writers wrote it absolute)."""
    if "://" in relative or relative.startswith(table_path.rstrip("/") + "/"):
        return relative
    return join(table_path, relative.lstrip("/"))


def metadata_table(table_path: str) -> str:
    """The metadata table's base path (`.hoodie/metadata`)."""
    return hoodie(table_path, METADATA_FOLDER)
