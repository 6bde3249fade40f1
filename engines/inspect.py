"""Human-readable description of a table: properties, timeline, file slices."""

from __future__ import annotations

from shim import Table
from shim.errors import HudiShimError
from shim.keys.partition_scheme import scheme_of_table
from shim.properties import TableConfig

METADATA_PARTITIONS = "hoodie.table.metadata.partitions"
from shim.timeline.instant import instant_key


def describe_table(table: Table, as_of: str | None = None) -> str:
    """Properties, timeline and the file slices a snapshot as of `as_of` reads."""
    config = table.config
    lines = [f"table {config.name} at {table.path}", "", "properties:"]
    for key in sorted(config.raw):
        value = config.raw[key]
        if len(value) > 100:
            value = value[:97] + "..."
        lines.append(f"  {key} = {value}")
    lines += ["", f"partitioning: {describe_partitioning(config)}", "", "timeline:"]
    latest = {i.requested_time: i for i in table.timeline()}  # the most advanced state of each
    for instant in latest.values():
        done = f" -> {instant.completion_time}" if instant.completion_time else ""
        lines.append(f"  {instant.requested_time}{done}  {instant.action.value:<14} {instant.state.value}")
    archived = {a.requested_time: a for a in table.archived_timeline()}  # archive logs, or the LSM timeline
    if archived:
        first, last = min(archived, key=instant_key), max(archived, key=instant_key)
        lines.append(f"  (before these: {len(archived)} archived instants, {first} .. {last}, "
                     f"in .hoodie/{table.config.archive_path})")
    lines += ["", "metadata table:", *describe_metadata(table, as_of)]
    slices = table.file_slices(as_of=as_of)
    lines += ["", f"file slices ({len(slices)}{' as of ' + as_of if as_of else ''}):"]
    for file_slice in slices:
        where = file_slice.partition_path or "(non-partitioned)"
        lines.append(f"  {where}  {file_slice.file_id}  base instant {file_slice.base_instant}")
        base = file_slice.base_file
        lines.append(f"    base: {base.name} ({base.size} bytes)" if base else "    base: (none, log-only)")
        for log in file_slice.log_files:
            lines.append(f"    log:  {log.name} ({log.size} bytes)")
    return "\n".join(lines) + "\n"


def describe_metadata(table: Table, as_of: str | None = None) -> list[str]:
    """What the metadata table holds, and whether reads list and prune with it or list storage."""
    built = [p.strip() for p in (table.config.get(METADATA_PARTITIONS) or "").split(",") if p.strip()]
    source = table.listing_source(as_of)
    lines = [f"  partitions built: {', '.join(built) or 'none'}"]
    if not source.metadata:
        return [*lines, f"  listing: storage, not the metadata table: {source.reason}"]
    uses = {"partition_stats": "partitions ruled out by a filter (latest snapshot)",
            "column_stats": "file slices ruled out by a filter",
            "record_index": "key lookups (=, IN on the record key)",
            "bloom_filters": "key lookups without a record index"}
    pruned = [f"{name}: {use}" for name, use in uses.items() if name in built]
    pruned += [f"{name}: key lookups by its column (=, IN)" for name in built if name.startswith("secondary_index_")]
    return [*lines, "  listing: from the metadata table's files partition",
            *(f"  pruning with {line}" for line in pruned)]


def describe_partitioning(config: TableConfig) -> str:
    """How rows map to folders: each partition field's values, or the dates formatted from it."""
    if not config.is_partitioned:
        return "none"
    try:
        scheme = scheme_of_table(config)
    except HudiShimError:  # Hudi 0.14/0.15 leave settings out of hoodie.properties
        return (f"{', '.join(config.partition_fields)} (by the {config.key_generator} key generator, whose "
                "settings hoodie.properties does not all record)")
    parts = []
    for name in scheme.fields:
        if name in scheme.timestamp_fields and scheme.timestamp is not None:
            dates = scheme.timestamp
            zone = dates.output_zone or "the default zone"
            parts.append(f"{name} as dates ({dates.timestamp_type.value} -> '{dates.output_format}' in {zone})")
        else:
            parts.append(f"{name} values")
    style = "hive-style" if scheme.hive_style else "plain"
    return f"{', '.join(parts)}; {style} folders{', url-encoded' if scheme.url_encode else ''}"


def describe_schemas(table: Table, as_of: str | None = None) -> str:
    """Schema history (schema-on-read versions) and how every file maps onto the table schema."""
    lines = ["", "table schema" + (f" as of {as_of}" if as_of else "") + ":"]
    for field in table.schema(as_of=as_of):
        lines.append(f"  {_field_id(field):>4}  {field.name}: {field.type}")
    history = table.snapshot().schema_history.history()
    lines += ["", f"schema history ({len(history)} version{'s' if len(history) != 1 else ''}):"]
    if not history:
        lines.append("  (none: files are matched to the table schema by name)")
    for schema in history:
        columns = ", ".join(f"{f.id}:{f.name} {f.type}" for f in schema.record.fields if f.id > 4)
        lines.append(f"  version {schema.version_id}: {columns}")
    views = table.file_schemas(as_of=as_of)
    lines += ["", f"file schemas ({len(views)}):"]
    for view in views:
        where = f"{view.path}@{view.block_offset}" if view.block_offset is not None else view.path
        version = f"schema version {view.schema_version}" if view.schema_version is not None else "by name"
        lines.append(f"  {view.kind} {where}  instant {view.instant}  {version}")
        for m in view.columns:
            if m.action == "read":
                continue
            source = f"{m.file_column} ({m.file_type})" if m.file_column else "-"
            lines.append(f"    {m.table_column} <- {source}: {m.action}")
    return "\n".join(lines) + "\n"


def _field_id(field: object) -> str:
    metadata = getattr(field, "metadata", None) or {}
    return metadata.get(b"PARQUET:field_id", b"?").decode()
