"""Writing Arrow results for people and pipes: text tables, CSV, JSON lines, Parquet."""

from __future__ import annotations

import datetime
import decimal
import json
import sys
from typing import IO, Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

FORMATS = ("table", "csv", "json", "parquet")


def write_result(table: pa.Table, fmt: str, out: IO[bytes] | None = None, max_rows: int | None = None) -> None:
    """Write `table` to `out` (default stdout) in one of FORMATS."""
    stream = out if out is not None else sys.stdout.buffer
    if fmt == "table":
        stream.write(render_table(table, max_rows=max_rows).encode("utf-8"))
    elif fmt == "csv":
        pacsv.write_csv(_csv_safe(table), stream)
    elif fmt == "json":
        for row in table.to_pylist():
            stream.write(json.dumps(row, default=_json_default, ensure_ascii=False).encode("utf-8") + b"\n")
    elif fmt == "parquet":
        pq.write_table(table, stream)
    else:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    stream.flush()


def render_table(table: pa.Table, max_rows: int | None = None) -> str:
    """A plain-text grid of the rows (all of them unless `max_rows`)."""
    names = table.column_names
    rows = table.slice(0, max_rows).to_pylist() if max_rows is not None else table.to_pylist()
    cells = [[_cell(row[name]) for name in names] for row in rows]
    widths = [max([len(n)] + [len(r[i]) for r in cells]) for i, n in enumerate(names)]
    line = "-+-".join("-" * w for w in widths)
    out = [" | ".join(n.ljust(w) for n, w in zip(names, widths)), line]
    out += [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    shown = len(cells)
    footer = f"({table.num_rows} row{'s' if table.num_rows != 1 else ''}"
    footer += f", {shown} shown)" if shown < table.num_rows else ")"
    out.append(footer)
    return "\n".join(out) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, default=_json_default, ensure_ascii=False)
    return str(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def _csv_safe(table: pa.Table) -> pa.Table:
    """CSV cannot hold nested values: render them as JSON text."""
    columns = []
    for column in table.columns:
        if pa.types.is_nested(column.type):
            columns.append(pa.array([_cell(v) if v is not None else None for v in column.to_pylist()], pa.string()))
        else:
            columns.append(column)
    return pa.table(columns, names=table.column_names)
