"""Human-readable description of a table: properties, timeline, file slices."""

from __future__ import annotations

from shim import Table


def describe_table(table: Table, as_of: str | None = None) -> str:
    """Properties, timeline and the file slices a snapshot as of `as_of` reads."""
    config = table.config
    lines = [f"table {config.name} at {table.path}", "", "properties:"]
    for key in sorted(config.raw):
        value = config.raw[key]
        if len(value) > 100:
            value = value[:97] + "..."
        lines.append(f"  {key} = {value}")
    lines += ["", "timeline:"]
    for instant in table.timeline():
        done = f" -> {instant.completion_time}" if instant.completion_time else ""
        lines.append(f"  {instant.requested_time}{done}  {instant.action.value:<14} {instant.state.value}")
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
