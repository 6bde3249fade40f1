"""How records of a table merge: record key, ordering fields, merge mode, delete markers."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import pyarrow as pa

from shim.errors import UnsupportedFeatureError
from shim.plan.table_schema import IS_DELETED_COLUMN
from shim.properties import TableConfig

RECORD_KEY = "_hoodie_record_key"


class MergeMode(enum.Enum):
    """Which version of a record wins when several exist."""

    COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
    EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"


_COMMIT_TIME_PAYLOADS = {
    "OverwriteWithLatestAvroPayload",
    "OverwriteNonDefaultsWithLatestAvroPayload",
}
_EVENT_TIME_PAYLOADS = {"DefaultHoodieRecordPayload", "EventTimeAvroPayload"}


@dataclass(frozen=True, slots=True)
class MergeSpec:
    """Merge rules of one table.

    Attributes:
        key_fields: data columns forming the record key when meta columns are not populated
            (empty when `_hoodie_record_key` is read).
        ordering_fields: fields compared under event-time ordering.
        mode: commit-time or event-time ordering.
        is_deleted_column: `_hoodie_is_deleted` when the table has it.
    """

    key_fields: tuple[str, ...]
    ordering_fields: tuple[str, ...]
    mode: MergeMode
    is_deleted_column: str | None

    @property
    def columns(self) -> tuple[str, ...]:
        """Columns every merged read needs."""
        cols = list(self.key_fields) if self.key_fields else [RECORD_KEY]
        if self.mode is MergeMode.EVENT_TIME_ORDERING:
            cols += [f for f in self.ordering_fields if f not in cols]
        if self.is_deleted_column:
            cols.append(self.is_deleted_column)
        return tuple(cols)


def merge_mode_for(config: TableConfig) -> MergeMode:
    """The merge mode Hudi uses for the table (inferred from the payload class before version 9)."""
    declared = config.merge_mode
    if declared:
        if declared in MergeMode.__members__:
            mode = MergeMode[declared]
            return mode if mode is MergeMode.COMMIT_TIME_ORDERING or config.ordering_fields else MergeMode.COMMIT_TIME_ORDERING
        raise UnsupportedFeatureError(
            f"{config.path}: record merge mode {declared} (custom mergers) is not supported",
            feature="custom-merge-mode",
            path=config.path,
        )
    payload = (config.payload_class or "").rsplit(".", 1)[-1]
    if not payload:
        return MergeMode.EVENT_TIME_ORDERING if config.ordering_fields else MergeMode.COMMIT_TIME_ORDERING
    if payload in _COMMIT_TIME_PAYLOADS:
        return MergeMode.COMMIT_TIME_ORDERING
    if payload in _EVENT_TIME_PAYLOADS:
        return MergeMode.EVENT_TIME_ORDERING if config.ordering_fields else MergeMode.COMMIT_TIME_ORDERING
    raise UnsupportedFeatureError(
        f"{config.path}: payload class {config.payload_class} is not supported; hudi-shim merges with "
        "commit-time or event-time ordering only",
        feature="custom-payload",
        path=config.path,
    )


def merge_spec_for(config: TableConfig, full_schema: pa.Schema) -> MergeSpec:
    """Merge rules for a table whose columns (meta + data) are `full_schema`."""
    key_fields = () if config.populate_meta_fields else config.record_key_fields
    is_deleted = IS_DELETED_COLUMN if full_schema.get_field_index(IS_DELETED_COLUMN) >= 0 else None
    ordering = tuple(f for f in config.ordering_fields if full_schema.get_field_index(f) >= 0)
    return MergeSpec(key_fields, ordering, merge_mode_for(config), is_deleted)
