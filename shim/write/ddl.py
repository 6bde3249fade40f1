"""ALTER TABLE for schema-on-read tables: each change commits an ALTER_SCHEMA instant.

    engines.spark.alter_table(path).add_column("tip", "double", after="fare").rename_column("fare", "amount")

Like Hudi's `AlterTableCommand.commitWithSchema`: the instant is a `commit` (copy-on-write) or
`deltacommit` (merge-on-read) with operation ALTER_SCHEMA and no files; its `latest_schema` is the
new schema with the instant as version id, and `.hoodie/.schema/<instant>.schemacommit` holds the
history with the new version first. Changes Hudi forbids raise `SchemaEvolutionError` before
anything is written (see `shim.write.schema_changes`). No file is rewritten: readers reconcile
old files by column id.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping

from shim.errors import TableNotFoundError, UnsupportedFeatureError
from shim.planning.snapshot import TableSnapshot
from shim.properties import TableConfig, TableType, read_table_config
from shim.schema import InternalSchema, history_to_json, inherit_schema_history, schema_to_json
from shim.schema.types import Type
from shim.storage import Storage, storage_and_options
from shim.timeline.instant import Action
from shim.timeline.metadata import LATEST_SCHEMA_KEY
from shim.timeline.timeline import Timeline
from shim.write import schema_changes
from shim.write.commit import CommitRecord, inflight_metadata
from shim.write.current_schema import current_schema
from shim.write.data_files import avro_record_schema
from shim.write.options import (
    DEFAULT_HEARTBEAT_MISSES,
    DEFAULT_HEARTBEAT_MS,
    HEARTBEAT_INTERVAL,
    HEARTBEAT_MISSES,
)
from shim.write.schema_history import latest_history_text, persist_history
from shim.write.txn import abandon, begin, complete
from shim.write.write_schema import data_arrow_schema

Change = Callable[[InternalSchema, Collection[str]], InternalSchema]


def alter_table(location: str | Storage, options: Mapping[str, str] | None = None) -> AlterTable:
    """Schema changes of the table at `location` (a path or URI; `storage.*` options reach an
    object store).

    Raises:
        TableNotFoundError: no Hudi table there.
    """
    return AlterTable(*storage_and_options(location, options))


class AlterTable:
    """Each method commits one ALTER_SCHEMA instant and returns `self` (so changes chain).

    Types are InternalSchema type strings (`int`, `long`, `double`, `string`, `date`,
    `timestamp`, `decimal(10, 2)`...) or `shim.schema` types for nested columns.
    """

    def __init__(self, storage: Storage, options: dict[str, str]) -> None:
        self.storage = storage
        self.table_path = storage.root
        self.options = options
        self.instants: list[str] = []

    def add_column(self, name: str, type: str | Type, after: str | None = None, first: bool = False,
                   doc: str | None = None) -> AlterTable:
        """Add an optional column (last unless `after`/`first`); `a.b` adds to struct `a`."""
        return self._commit(lambda s, _: schema_changes.add_column(s, name, type, after=after, first=first, doc=doc))

    def drop_column(self, name: str) -> AlterTable:
        """Drop a column (not a record key, ordering or partition field)."""
        return self._commit(lambda s, p: schema_changes.drop_column(s, name, protected=p))

    def rename_column(self, old: str, new: str) -> AlterTable:
        """Rename a column (`a.b` -> `a.c` with `rename_column("a.b", "c")`)."""
        return self._commit(lambda s, p: schema_changes.rename_column(s, old, new, protected=p))

    def alter_column_type(self, name: str, type: str | Type) -> AlterTable:
        """Change a primitive column's type where Hudi allows it (int -> long, float -> double...).

        Record key and partition columns keep their types (their values name keys and folders).
        """
        return self._commit(lambda s, p: schema_changes.update_column_type(s, name, type, protected=p),
                            protect_ordering=False)

    def move_column(self, name: str, after: str | None = None, first: bool = False) -> AlterTable:
        """Move a column after a sibling, or first."""
        return self._commit(lambda s, _: schema_changes.move_column(s, name, after=after, first=first))

    # -- committing ---------------------------------------------------------------------------

    def _config(self) -> TableConfig:
        config = read_table_config(self.storage)
        if config is None:
            raise TableNotFoundError(f"no Hudi table at {self.table_path}", path=self.table_path)
        if config.version != 6:
            raise UnsupportedFeatureError(
                f"{self.table_path}: ALTER TABLE writes table version 6; this table is version {config.version}",
                feature=f"write-table-version-{config.version}",
            )
        return config

    def _schema(self, config: TableConfig) -> InternalSchema:
        table = TableSnapshot.load(self.storage, config)
        current = current_schema(table, table.active_timeline.resolve_as_of(None))
        if current is None:
            raise UnsupportedFeatureError(
                f"{self.table_path}: the table has no schema yet; write data before altering it",
                feature="alter-empty-table",
            )
        return current

    def _commit(self, change: Change, protect_ordering: bool = True) -> AlterTable:
        config = self._config()
        protected = set(config.record_key_fields) | set(config.partition_fields)
        if protect_ordering:
            protected |= set(config.ordering_fields)
        change(self._schema(config), protected)  # reject a forbidden change before starting an instant
        interval = int(self.options.get(HEARTBEAT_INTERVAL, DEFAULT_HEARTBEAT_MS))
        misses = int(self.options.get(HEARTBEAT_MISSES, DEFAULT_HEARTBEAT_MISSES))
        action = Action.DELTA_COMMIT if config.table_type is TableType.MERGE_ON_READ else Action.COMMIT
        txn, _ = begin(self.storage, config, action, timeout_s=interval * misses / 1000.0,
                       inflight=inflight_metadata(operation="ALTER_SCHEMA"))
        try:
            current = self._schema(config)
            changed = change(current, protected)
            timeline = Timeline.load(self.storage, config)
            history = latest_history_text(self.storage, timeline) or history_to_json([current])
            latest = InternalSchema(changed.record, int(txn.instant), changed.max_column_id)
            persist_history(self.storage, timeline, txn.instant, inherit_schema_history(latest, history))
            extra = {
                "schema": json.dumps(avro_record_schema(config.name, data_arrow_schema(latest))),
                LATEST_SCHEMA_KEY: schema_to_json(latest),
            }
            complete(txn, config, CommitRecord((), "ALTER_SCHEMA", extra))
        except BaseException:
            abandon(txn)
            raise
        self.instants.append(txn.instant)
        return self
