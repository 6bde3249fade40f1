"""`SnapshotState`: what planning and reading need of a table snapshot (its path and storage,
config, timeline, files, schema history and caches). `shim.planning.snapshot.TableSnapshot` implements
it; planning's and reading's modules see only this, so they do not import the snapshot back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from shim.layout.committed import CommittedFiles
    from shim.metadata.table_files import TableFiles
    from shim.properties import TableConfig
    from shim.read.cache import ByteBoundedCache
    from shim.read.table_schemas import TableSchemas
    from shim.storage import Storage
    from shim.timeline.schemas import SchemaHistory
    from shim.timeline.timeline import Timeline


class SnapshotState(Protocol):
    """A table as loaded at one moment (see `TableSnapshot`)."""

    path: str
    storage: Storage
    config: TableConfig
    files: TableFiles
    committed: CommittedFiles
    slice_cache: ByteBoundedCache[Any]

    @property
    def active_timeline(self) -> Timeline:
        """The timeline loaded with this snapshot."""
        ...

    @property
    def schema_history(self) -> SchemaHistory:
        """The table's schema versions (schema-on-read)."""
        ...

    def schemas_as_of(self, read_instant: str | None) -> TableSchemas:
        """The schemas of a read as of `read_instant` (remembered per instant)."""
        ...

    def reaching(self, instant: str | None) -> SnapshotState:
        """This snapshot, or one that also holds the archived timeline when `instant` is archived."""
        ...

    def files_gone(self) -> None:
        """Note that a read found a planned file gone (the next read lists files again)."""
        ...
