"""How records of a table merge: record key, ordering fields, merge mode, delete markers.

The merge mode is inferred as Hudi 1.x does (`HoodieTableConfig.inferCorrectMergingBehavior`):
tables of version 8+ declare it; for version 6 the payload class decides, else the merge strategy
id, else the presence of an ordering field.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa

from shim.errors import InvalidTableError, UnsupportedFeatureError
from shim.layout.table_schema import IS_DELETED_COLUMN, OPERATION_COLUMN
from shim.properties import PARTIAL_UPDATE_MODE, TableConfig

RECORD_KEY = "_hoodie_record_key"

EVENT_TIME_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMIT_TIME_STRATEGY = "ce9acb64-bde0-424c-9b91-f6ebba25356d"

MERGE_PROPERTY_PREFIX = "hoodie.record.merge.property."
LEGACY_MERGE_PROPERTIES = "hoodie.table.merge.properties"
DELETE_FIELD = "hoodie.payload.delete.field"
DELETE_MARKER = "hoodie.payload.delete.marker"


class MergeMode(enum.Enum):
    """Which version of a record wins when several exist."""

    COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
    EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
    CUSTOM = "CUSTOM"


_PAYLOAD_MODES = {
    "OverwriteWithLatestAvroPayload": MergeMode.COMMIT_TIME_ORDERING,
    "DefaultHoodieRecordPayload": MergeMode.EVENT_TIME_ORDERING,
    "EventTimeAvroPayload": MergeMode.EVENT_TIME_ORDERING,
}
_STRATEGY_MODES = {
    EVENT_TIME_STRATEGY: MergeMode.EVENT_TIME_ORDERING,
    COMMIT_TIME_STRATEGY: MergeMode.COMMIT_TIME_ORDERING,
}


@dataclass(frozen=True, slots=True)
class MergeSpec:
    """Merge rules of one table.

    Attributes:
        key_fields: data columns forming the record key when meta columns are not populated
            (empty when `_hoodie_record_key` is read).
        ordering_fields: fields compared, in order, under event-time ordering.
        mode: commit-time or event-time ordering.
        is_deleted_column: `_hoodie_is_deleted` when the table has it.
        delete_marker: (field, value) marking deletes, from the table's merge properties.
    """

    key_fields: tuple[str, ...]
    ordering_fields: tuple[str, ...]
    mode: MergeMode
    is_deleted_column: str | None
    delete_marker: tuple[str, str] | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        """Columns every merged read needs, besides `_hoodie_operation`."""
        cols = list(self.key_fields) if self.key_fields else [RECORD_KEY]
        if self.mode is MergeMode.EVENT_TIME_ORDERING:
            cols += [f for f in self.ordering_fields if f not in cols]
        for extra in (self.is_deleted_column, self.delete_marker[0] if self.delete_marker else None):
            if extra and extra not in cols:
                cols.append(extra)
        return tuple(cols)

    @property
    def operation_column(self) -> str:
        return OPERATION_COLUMN


def infer_merge_mode(config: TableConfig) -> MergeMode:
    """The merge mode Hudi uses for the table."""
    declared = config.merge_mode
    if declared is not None and declared not in MergeMode.__members__:
        raise InvalidTableError(f"{config.path}: unknown hoodie.record.merge.mode={declared}", path=config.path)
    declared_mode = MergeMode[declared] if declared else None
    if config.version >= 8 and declared_mode is not None:
        mode = declared_mode
    else:
        payload = (config.payload_class or "").strip().rsplit(".", 1)[-1]
        strategy = (config.merge_strategy_id or "").strip()
        if not payload and not strategy:
            mode = declared_mode or (
                MergeMode.EVENT_TIME_ORDERING if config.ordering_fields else MergeMode.COMMIT_TIME_ORDERING
            )
        else:
            by_payload = _PAYLOAD_MODES.get(payload, MergeMode.CUSTOM) if payload else None
            by_strategy = _STRATEGY_MODES.get(strategy, MergeMode.CUSTOM) if strategy else None
            if config.version < 8:
                mode = by_payload or by_strategy  # type: ignore[assignment]
            else:
                mode = by_strategy or by_payload  # type: ignore[assignment]
            if declared_mode is not None and declared_mode is not mode:
                raise InvalidTableError(
                    f"{config.path}: hoodie.record.merge.mode={declared} contradicts the payload class "
                    f"{config.payload_class} / merge strategy {strategy}",
                    path=config.path,
                )
    if mode is MergeMode.EVENT_TIME_ORDERING and not config.ordering_fields:
        # Every ordering value is the default, so the latest write wins.
        mode = MergeMode.COMMIT_TIME_ORDERING
    return mode


def check_mergeable(config: TableConfig) -> MergeMode:
    """The merge mode, or an UnsupportedFeatureError when Hudi would run custom merge code."""
    mode = infer_merge_mode(config)
    if mode is MergeMode.CUSTOM:
        what = config.payload_class or config.merge_strategy_id or "a custom merger"
        raise UnsupportedFeatureError(
            f"{config.path}: the table merges records with {what}; hudi-shim merges with commit-time "
            "or event-time ordering only (read it read_optimized, or compact it first)",
            feature="custom-merge",
            path=config.path,
        )
    partial = (config.get(PARTIAL_UPDATE_MODE) or "NONE").strip().upper()
    if partial != "NONE":
        raise UnsupportedFeatureError(
            f"{config.path}: partial update mode {partial} is not supported",
            feature="partial-update",
            path=config.path,
        )
    return mode


def merge_properties(config: TableConfig) -> dict[str, str]:
    """Reader-side merge properties recorded by version 9 tables."""
    props = {key[len(MERGE_PROPERTY_PREFIX):]: value for key, value in config.raw.items()
             if key.startswith(MERGE_PROPERTY_PREFIX)}
    legacy = config.get(LEGACY_MERGE_PROPERTIES)
    if legacy:
        for item in legacy.split(","):
            key, sep, value = item.partition("=")
            if sep:
                props.setdefault(key.strip(), value.strip())
    return props


def merge_spec_for(
    config: TableConfig, full_schema: pa.Schema, current_name: Callable[[str], str | None] = lambda n: n
) -> MergeSpec:
    """Merge rules for a table whose columns (meta + data) are `full_schema`.

    `current_name` maps a field named in the table config to its name now (fields are found by id
    after a rename).
    """
    mode = check_mergeable(config)
    key_fields: tuple[str, ...] = ()
    if not config.populate_meta_fields:
        names = [current_name(f) for f in config.record_key_fields]
        missing = [f for f, n in zip(config.record_key_fields, names) if n is None or full_schema.get_field_index(n) < 0]
        if missing:
            raise InvalidTableError(f"{config.path}: record key field {missing[0]!r} is not a table column",
                                    path=config.path, column=missing[0])
        key_fields = tuple(n for n in names if n is not None)
    is_deleted = IS_DELETED_COLUMN if full_schema.get_field_index(IS_DELETED_COLUMN) >= 0 else None
    ordering = tuple(
        n for f in config.ordering_fields if (n := current_name(f)) is not None and full_schema.get_field_index(n) >= 0
    )
    if mode is MergeMode.EVENT_TIME_ORDERING and not ordering:
        mode = MergeMode.COMMIT_TIME_ORDERING
    props = merge_properties(config)
    marker = None
    if props.get(DELETE_FIELD) and props.get(DELETE_MARKER) is not None:
        marker = (props[DELETE_FIELD], props[DELETE_MARKER])
    return MergeSpec(key_fields, ordering, mode, is_deleted, marker)
