"""The `hudi-shim` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import pyarrow as pa

import shim
from engines.output import FORMATS, write_result
from shim.errors import HudiShimError


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `hudi-shim`; returns the process exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except HudiShimError as exc:
        print(f"hudi-shim: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hudi-shim",
        description="Read evolving Apache Hudi tables correctly (schema reconciled by column id).",
    )
    commands = parser.add_subparsers(dest="command")

    scan = commands.add_parser("scan", help="read rows of a table")
    scan.add_argument("path", help="table folder or file:// URI")
    scan.add_argument("--mode", default="snapshot", choices=["snapshot", "read_optimized"])
    scan.add_argument("--columns", help="comma-separated column names (default: all data columns)")
    scan.add_argument("--filter", help="SQL-like filter, e.g. \"city = 'sf' AND fare > 10\"")
    scan.add_argument("--as-of", help="instant to read as of (yyyyMMddHHmmssSSS or 'yyyy-MM-dd HH:mm:ss')")
    scan.add_argument("--include-meta", action="store_true", help="include Hudi meta columns")
    scan.add_argument("--limit", type=int, help="print at most this many rows")
    scan.add_argument("--format", default="table", choices=FORMATS)
    scan.add_argument("--output", help="write to this file instead of stdout")
    scan.set_defaults(run=_scan)

    inspect = commands.add_parser("inspect", help="show properties, timeline and file slices")
    inspect.add_argument("path")
    inspect.add_argument("--as-of")
    inspect.add_argument("--schemas", action="store_true",
                         help="also print the schema history and how each file maps onto the table schema")
    inspect.set_defaults(run=_inspect)

    demo = commands.add_parser("demo", help="build a demo table and read it (the quick-start job)")
    demo.add_argument("--dir", default="demo-warehouse", help="folder for the demo table")
    demo.set_defaults(run=_demo)
    return parser


def _scan(args: argparse.Namespace) -> int:
    table = shim.open_table(args.path)
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    reader = table.scan(
        mode=args.mode, columns=columns, filter=args.filter, as_of=args.as_of, include_meta=args.include_meta
    )
    result = reader.read_all() if args.limit is None else _head(reader, args.limit)
    if args.output:
        with open(args.output, "wb") as handle:
            write_result(result, args.format, handle)
    else:
        write_result(result, args.format)
    return 0


def _head(reader: pa.RecordBatchReader, limit: int) -> pa.Table:
    batches, rows = [], 0
    for batch in reader:
        batches.append(batch.slice(0, limit - rows))
        rows += batches[-1].num_rows
        if rows >= limit:
            break
    reader.close()
    return pa.Table.from_batches(batches, schema=reader.schema)


def _inspect(args: argparse.Namespace) -> int:
    from engines.inspect import describe_schemas, describe_table

    table = shim.open_table(args.path)
    print(describe_table(table, as_of=args.as_of), end="")
    if args.schemas:
        print(describe_schemas(table, as_of=args.as_of), end="")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from engines.demo import run_demo

    return run_demo(args.dir)


if __name__ == "__main__":
    raise SystemExit(main())
