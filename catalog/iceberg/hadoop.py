"""The published tables as a Hadoop catalog folder, for Iceberg readers without a REST client.

Presto 0.287's Iceberg connector (the newest Presto on Maven Central) reads Iceberg tables from
a catalog folder (`iceberg.catalog.type=hadoop`): `<folder>/default/<table>/metadata/` holding
`v<N>.metadata.json` files and `version-hint.text` naming the current N. `HadoopCatalogFolder`
writes each table's latest published metadata there as a new version when it changed (the
metadata names the manifests and data files where the publisher wrote them), and removes the
tables no longer registered. It publishes for readers that match files by column name
(`Readers.BY_NAME`), as Presto does. A reader sees each table as of the last `refresh()`:
`hudi-shim serve --hadoop-catalog-dir` refreshes every few seconds, and on `POST /v1/publish`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass, field

from catalog.errors import failure_text
from catalog.iceberg.names import NAMESPACE, RO_SUFFIX, iceberg_names, resolve
from catalog.iceberg.publish import IcebergPublisher, Readers
from shim.errors import HudiShimError
from shim.storage import Storage, resolve_table_path

log = logging.getLogger(__name__)

VERSION_HINT = "version-hint.text"
#: Metadata versions kept per table besides the current one (a reader may be planning on one).
KEEP_VERSIONS = 4
_MARKER = ".hudi-shim"


@dataclass
class Refreshed:
    """What one refresh did: tables given a new version, tables unchanged, tables removed, and
    the tables that could not be published (name -> error; their previous version stays)."""

    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


class HadoopCatalogFolder:
    """Keeps `folder` a Hadoop catalog of the publisher's tables (namespace `default`)."""

    def __init__(self, publisher: IcebergPublisher, folder: str, readers: Readers = Readers.BY_NAME) -> None:
        self.publisher = publisher
        self.folder = resolve_table_path(folder)
        self.storage = publisher.catalog.storage(self.folder)
        self.readers = readers
        self._lock = threading.Lock()

    def namespace_folder(self) -> str:
        return os.path.join(self.folder, NAMESPACE)

    def refresh(self) -> Refreshed:
        """Publish every table and write the new versions; remove tables no longer registered."""
        with self._lock:
            done = Refreshed()
            names = iceberg_names(self.publisher.catalog)
            for name in names:
                self._refresh_one(name, done)
            done.removed = self._remove_others(set(names))
            return done

    def refresh_table(self, name: str) -> Refreshed:
        """Write new versions of the registered table `name`'s Iceberg tables (after its commit)."""
        with self._lock:
            done = Refreshed()
            for iceberg_name in (name, name + RO_SUFFIX):
                self._refresh_one(iceberg_name, done)
            return done

    def _refresh_one(self, name: str, done: Refreshed) -> None:
        try:
            table, view = resolve(self.publisher.catalog, name)
            published = self.publisher.publish(table, view, self.readers)
            changed = self._write_version(name, published.metadata)
        except Exception as exc:  # one table that cannot be published never costs the others
            if isinstance(exc, HudiShimError):
                log.warning("Hadoop catalog: %s keeps its previous version: %s", name, exc)
            else:
                log.error("Hadoop catalog: %s keeps its previous version", name, exc_info=exc)
            done.failed[name] = failure_text(exc)
            return
        (done.updated if changed else done.unchanged).append(name)

    def _write_version(self, name: str, metadata: dict) -> bool:
        folder = os.path.join(self.namespace_folder(), name, "metadata")
        self.storage.make_dirs(folder)
        marker = os.path.join(self.namespace_folder(), name, _MARKER)
        if not self.storage.exists(marker):
            self.storage.write_atomically(marker, b"written by hudi-shim's Hadoop catalog folder\n")
        current = current_version(self.storage, folder)
        if current is not None:
            try:
                if json.loads(self.storage.read_text(os.path.join(folder, f"v{current}.metadata.json"))) == metadata:
                    return False
            except (OSError, ValueError, HudiShimError):
                pass  # unreadable: write a new version
        number = (current or 0) + 1
        self.storage.write_atomically(os.path.join(folder, f"v{number}.metadata.json"), json.dumps(metadata).encode("utf-8"))
        self.storage.write_atomically(os.path.join(folder, VERSION_HINT), str(number).encode("ascii"))
        for old in range(number - KEEP_VERSIONS - 1, 0, -1):
            path = os.path.join(folder, f"v{old}.metadata.json")
            if not self.storage.exists(path):
                break
            self.storage.remove(path)
        return True

    def _remove_others(self, names: set[str]) -> list[str]:
        """Remove the tables this folder holds that are no longer published (only folders it made)."""
        removed: list[str] = []
        namespace = self.namespace_folder()
        if not self.storage.is_dir(namespace):
            return removed
        for entry in sorted(self.storage.list_names(namespace)):
            if entry not in names and self.storage.exists(os.path.join(namespace, entry, _MARKER)):
                self.storage.remove_tree(os.path.join(namespace, entry))
                removed.append(entry)
        return removed


def current_version(out: Storage, metadata_folder: str) -> int | None:
    """The version `version-hint.text` names (None: no version yet)."""
    try:
        return int(out.read_text(os.path.join(metadata_folder, VERSION_HINT)).strip())
    except (OSError, ValueError, HudiShimError):
        return None
