"""The table registry: catalog names mapped to table folders, kept in an embedded SQLite database.

Requests name tables; only this registry turns a name into a path. Tables are registered by path
or discovered under a warehouse folder (folders holding `.hoodie/hoodie.properties`).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from catalog.settings import MEMORY
from shim.errors import HudiShimError, InvalidArgumentError, TableNotFoundError
from shim.properties import find_config_file
from shim.storage import Storage, canonical_location, storage_for

log = logging.getLogger(__name__)

NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
REGISTERED = "registered"
DISCOVERED = "discovered"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    name TEXT PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    origin TEXT NOT NULL CHECK (origin IN ('registered', 'discovered')),
    registered_at TEXT NOT NULL
)
"""


@dataclass(frozen=True, slots=True)
class RegisteredTable:
    """One registry entry: a catalog name, the table folder (absolute, symlinks resolved), how it got there."""

    name: str
    path: str
    origin: str


def is_table_folder(folder: Storage) -> bool:
    """Whether `folder` holds a Hudi table (its properties file, or Hudi's backup of it)."""
    return find_config_file(folder) is not None


def check_name(name: str) -> str:
    """A catalog name: a letter or `_`, then letters, digits or `_` (at most 128 characters)."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise InvalidArgumentError(
            f"invalid table name {name!r}: use a letter or '_' followed by letters, digits or '_' (max 128)"
        )
    return name


def name_for_folder(relative: str) -> str:
    """A valid catalog name derived from a folder path relative to the warehouse (`db/my-trips` -> `db_my_trips`)."""
    text = re.sub(r"[^A-Za-z0-9_]", "_", relative.strip("/\\").replace(os.sep, "_"))
    if not text or not (text[0].isalpha() or text[0] == "_"):
        text = "_" + text
    return text[:128]


class CatalogUnavailableError(HudiShimError):
    """The warehouse folder or the catalog database is gone (deleted, unmounted): the catalog
    cannot say which tables exist until it is back."""


class Registry:
    """Catalog name -> table folder, in SQLite (one connection shared by threads, guarded by a lock).

    A database file deleted (or replaced) under the running server is noticed at the next call
    (one `stat`): the registry opens the file anew, and a deleted one is made again with the
    entries the old connection still reads, in its own folder made again too, never its parent
    (a warehouse deleted whole is not brought back by its registry)."""

    def __init__(self, location: str, storage_options: Mapping[str, str] | None = None,
                 table_storage_options: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.location = location
        self._storage_options = dict(storage_options or {})
        self._table_storage_options = {name: dict(options) for name, options in (table_storage_options or {}).items()}
        if location != MEMORY:
            folder = os.path.dirname(os.path.abspath(location))
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError as exc:
                raise InvalidArgumentError(
                    f"cannot create the catalog database folder {folder}: {exc}; "
                    "choose another location (--catalog-db)"
                ) from exc
        try:
            self._db = self._connect()
        except sqlite3.Error as exc:
            raise InvalidArgumentError(
                f"cannot open the catalog database {location}: {exc}; choose another location (--catalog-db)"
            ) from exc
        self._identity = self._file_identity()
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.location, check_same_thread=False, isolation_level=None)
        db.execute(_SCHEMA)
        return db

    def _file_identity(self) -> tuple[int, int] | None:
        if self.location == MEMORY:
            return None
        try:
            info = os.stat(self.location)
        except FileNotFoundError:
            return None
        return info.st_dev, info.st_ino

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def storage(self, path: str, name: str | None = None) -> Storage:
        """The storage of a folder (the table `name`'s, or the warehouse), reached with that
        table's own storage options if it has some, else the catalog's."""
        options = self._table_storage_options.get(name, self._storage_options) if name else self._storage_options
        return storage_for(path, options)

    def check(self) -> None:
        """Raises CatalogUnavailableError when the database cannot be used (reopened first if it
        was deleted or replaced)."""
        self._rows("SELECT count(*) FROM tables")

    def _connection(self) -> sqlite3.Connection:
        """The open database (call with the lock held), opened anew if its file changed."""
        identity = self._file_identity()
        if self.location == MEMORY or identity == self._identity:
            return self._db
        replaced = identity is not None
        kept = [] if replaced else self._db.execute("SELECT * FROM tables").fetchall()
        try:
            if not replaced:
                os.mkdir(os.path.dirname(os.path.abspath(self.location)))
        except FileExistsError:
            pass
        except OSError as exc:
            raise CatalogUnavailableError(
                f"the catalog database {self.location} was deleted and cannot be made again: {exc.strerror}",
                path=self.location) from None
        try:
            db = self._connect()
            db.executemany("INSERT OR IGNORE INTO tables VALUES (?, ?, ?, ?)", kept)
        except sqlite3.Error as exc:
            raise CatalogUnavailableError(f"the catalog database {self.location} cannot be opened again: {exc}",
                                          path=self.location) from None
        self._db.close()
        self._db, self._identity = db, self._file_identity()
        log.warning("the catalog database %s was %s under the server: opened anew%s", self.location,
                    "replaced" if replaced else "deleted", "" if replaced else f", its {len(kept)} entries kept")
        return db

    def _rows(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[str, str, str]]:
        with self._lock:
            return list(self._connection().execute(sql, params).fetchall())

    def tables(self) -> list[RegisteredTable]:
        """Every registered table, by name."""
        return [RegisteredTable(*row) for row in self._rows("SELECT name, path, origin FROM tables ORDER BY name")]

    def known(self) -> list[RegisteredTable]:
        """Every entry the open database holds, even when its file is gone and cannot be made again
        (what error messages name paths by)."""
        with self._lock:
            rows = self._db.execute("SELECT name, path, origin FROM tables ORDER BY name").fetchall()
        return [RegisteredTable(*row) for row in rows]

    def __iter__(self) -> Iterator[RegisteredTable]:
        return iter(self.tables())

    def get(self, name: str) -> RegisteredTable:
        """The entry named `name`.

        Raises:
            TableNotFoundError: no table of that name is registered.
        """
        rows = self._rows("SELECT name, path, origin FROM tables WHERE name = ?", (name,)) if isinstance(
            name, str) else []
        if not rows:
            shown = name if isinstance(name, str) and len(name) <= 200 else f"{str(name)[:200]}..."
            raise TableNotFoundError(f"no table named {shown!r} is registered; GET /v1/tables lists them")
        return RegisteredTable(*rows[0])

    def register(self, path: str, name: str | None = None, *, origin: str = REGISTERED) -> RegisteredTable:
        """Register the table folder at `path` under `name` (default: derived from the folder name).

        Registering the same folder under the same name again is a no-op.

        Raises:
            TableNotFoundError: `path` holds no Hudi table.
            InvalidArgumentError: the name is invalid, or taken by another folder.
        """
        folder = table_location(path)
        chosen = check_name(name if name is not None else name_for_folder(os.path.basename(folder)))
        if not is_table_folder(self.storage(folder, chosen)):
            raise TableNotFoundError(f"no Hudi table at {folder}: .hoodie/hoodie.properties does not exist",
                                     path=folder)
        with self._lock:
            db = self._connection()
            by_name = db.execute("SELECT path FROM tables WHERE name = ?", (chosen,)).fetchone()
            by_path = db.execute("SELECT name FROM tables WHERE path = ?", (folder,)).fetchone()
            if by_name is not None and by_name[0] == folder:
                return RegisteredTable(chosen, folder, origin)
            if by_name is not None:
                raise InvalidArgumentError(f"table name {chosen!r} is already registered for {by_name[0]}")
            if by_path is not None:
                raise InvalidArgumentError(f"{folder} is already registered as {by_path[0]!r}")
            now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            db.execute("INSERT INTO tables VALUES (?, ?, ?, ?)", (chosen, folder, origin, now))
        return RegisteredTable(chosen, folder, origin)

    def unregister(self, name: str) -> None:
        """Forget a table (its files are untouched)."""
        self.get(name)
        with self._lock:
            self._connection().execute("DELETE FROM tables WHERE name = ?", (name,))

    def discover(self, warehouse: str, max_depth: int = 4) -> list[RegisteredTable]:
        """Register every table found under `warehouse`; forget discovered ones that are gone.

        Hidden folders and symbolic links are not followed; a table's own folders are not searched.
        Returns the tables found, in name order.
        """
        root = table_location(warehouse)
        where = self.storage(root)
        if not where.is_dir(root):
            raise TableNotFoundError(f"warehouse folder {root} does not exist", path=root)
        found: dict[str, str] = {}
        for folder in _table_folders(where, max_depth):
            name = name_for_folder(folder.removeprefix(root + "/")) if folder != root else name_for_folder(
                os.path.basename(root))
            if name in found:
                log.warning("table %s not registered: its name %r is taken by %s", folder, name, found[name])
                continue
            found[name] = folder
        registered: list[RegisteredTable] = []
        for entry in self.tables():
            inside = entry.path == root or entry.path.startswith(root + "/")
            if entry.origin == DISCOVERED and inside and found.get(entry.name) != entry.path:
                self.unregister(entry.name)
        for name, folder in sorted(found.items()):
            try:
                registered.append(self.register(folder, name, origin=DISCOVERED))
            except InvalidArgumentError as exc:
                log.warning("table %s not registered: %s", folder, exc)
        return registered


def _table_folders(warehouse: Storage, max_depth: int) -> Iterator[str]:
    root = warehouse.root
    if is_table_folder(warehouse):
        yield root
        return
    pending = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        try:
            entries = sorted(warehouse.list_files(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.is_file or warehouse.is_link(entry.path):
                continue
            if is_table_folder(warehouse.within(entry.path)):
                yield entry.path
            elif depth + 1 < max_depth:
                pending.append((entry.path, depth + 1))


def folders_named(warehouse: Storage, name: str, max_depth: int = 4) -> list[str]:
    """The table folders under the warehouse that `Registry.discover` would name `name`, found by
    listing only the folders whose own names begin it (for `db_my_trips`: the root, then `db`
    or `db_my`): a few listings, whatever else the warehouse holds."""
    root = warehouse.root
    if is_table_folder(warehouse):
        return []
    found: list[str] = []
    pending = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        for entry in sorted(warehouse.list_names(folder)):
            path = f"{folder}/{entry}"
            derived = name_for_folder(path.removeprefix(root + "/"))
            if entry.startswith(".") or (derived != name and not name.startswith(derived + "_")):
                continue
            if warehouse.is_link(path) or not warehouse.is_dir(path):
                continue
            if is_table_folder(warehouse.within(path)):
                if derived == name:
                    found.append(path)
            elif depth + 1 < max_depth:
                pending.append((path, depth + 1))
    return found


def table_location(path: str) -> str:
    """A table's or warehouse's location as the registry keeps it: the real absolute path of a
    local folder, the normalized URI of one on an object store."""
    return canonical_location(path)
