"""Where the catalog publishes its tables besides answering the REST catalog: the Hadoop catalog
folder (Presto without a metastore) and a Hive Metastore. Both are brought up to date on
`POST /v1/publish`, every few seconds, and for one table when its writer announces a commit
(`POST /v1/commits`, Hudi's HTTP commit callback), so a reader sees the commit at its next query.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog.errors import failure_text
from catalog.hive.sync import HiveMetastoreSync, Synced
from catalog.iceberg.hadoop import HadoopCatalogFolder
from catalog.iceberg.names import iceberg_names, resolve
from catalog.iceberg.publish import IcebergPublisher
from catalog.registry import RegisteredTable
from catalog.service import Catalog
from shim.errors import TableNotFoundError
from shim.storage import canonical_location, is_remote


@dataclass
class Published:
    """What one publication did.

    Attributes:
        published: Iceberg tables published (REST catalog names).
        updated, removed: tables given a new version in (removed from) the Hadoop catalog folder.
        metastore: what the Hive Metastore pass did, when there is one.
        failed: tables that could not be published, and why.
    """

    published: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    metastore: Synced | None = None
    failed: dict[str, str] = field(default_factory=dict)


class Publication:
    """The REST catalog's publisher and the places it publishes to."""

    def __init__(self, publisher: IcebergPublisher, hadoop: HadoopCatalogFolder | None = None,
                 hive: HiveMetastoreSync | None = None) -> None:
        self.publisher = publisher
        self.hadoop = hadoop
        self.hive = hive

    @property
    def catalog(self) -> Catalog:
        return self.publisher.catalog

    def all(self) -> Published:
        """Publish every table now, everywhere (tables added under the warehouse included)."""
        self.catalog.discover()
        done = Published()
        if self.hadoop is not None:
            refreshed = self.hadoop.refresh()
            done.published = refreshed.updated + refreshed.unchanged
            done.updated, done.removed, done.failed = refreshed.updated, refreshed.removed, dict(refreshed.failed)
        else:
            for name in iceberg_names(self.catalog):
                try:
                    self.publisher.publish(*resolve(self.catalog, name))
                    done.published.append(name)
                except Exception as exc:  # noqa: BLE001 - reported per table; the others go on
                    done.failed[name] = failure_text(exc)
        if self.hive is not None:
            done.metastore = self.hive.refresh()
            done.failed.update(done.metastore.failed)
        return done

    def table(self, name: str) -> Published:
        """Publish the registered table `name` everywhere (after a commit of it)."""
        self.catalog.handle(name)  # unknown: TableNotFoundError
        done = Published()
        if self.hadoop is not None:
            refreshed = self.hadoop.refresh_table(name)
            done.published = refreshed.updated + refreshed.unchanged
            done.updated, done.failed = refreshed.updated, dict(refreshed.failed)
        if self.hive is not None:
            done.metastore = self.hive.sync_table(name)
            done.failed.update(done.metastore.failed)
        return done

    def table_at(self, base_path: str, hudi_name: str | None = None) -> RegisteredTable:
        """The registered table whose folder is `base_path` (as a writer names it: a path, a
        `file:` URI, `s3a://`...), looking under the warehouse again when none is; else the one
        registered under `hudi_name`.

        Raises:
            TableNotFoundError: no registered table is at that path (nor of that name).
        """
        wanted = _folded(base_path)
        for attempt in (1, 2):
            for entry in self.catalog.registry.tables():
                if _folded(entry.path) == wanted:
                    return entry
            if attempt == 1:
                self.catalog.discover()
        if hudi_name:
            try:
                return self.catalog.handle(hudi_name).entry
            except TableNotFoundError:
                pass
        raise TableNotFoundError(f"no registered table is at {base_path!r}"
                                 + (f" or named {hudi_name!r}" if hudi_name else ""))


def _folded(location: str) -> str:
    """A location as one spelling: `s3a://` and `s3n://` as `s3://`."""
    try:
        canonical = canonical_location(location)
    except Exception:  # noqa: BLE001 - a location the shim cannot spell matches no table
        return location
    if is_remote(canonical):
        scheme, rest = canonical.split("://", 1)
        if scheme in ("s3a", "s3n"):
            return f"s3://{rest}"
    return canonical
