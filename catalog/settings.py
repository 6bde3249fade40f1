"""Catalog and server settings: one frozen value, built by the caller (CLI, tests), never at import."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from os.path import join
from typing import Literal, get_args

from catalog.hive.metastore import parse_uri
from shim.errors import InvalidArgumentError
from shim.local_cache import cache_root
from shim.storage import canonical_location, local_folder
from shim.storage import resolve_table_path as location_of

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
MEMORY = ":memory:"
#: Where the registry lives inside a warehouse when no location is given.
WAREHOUSE_DB = os.path.join(".hudi-shim", "catalog.sqlite")
#: Where Iceberg metadata (and slices written for Iceberg readers) go inside a warehouse.
WAREHOUSE_ICEBERG = os.path.join(".hudi-shim", "iceberg")

SliceMerging = Literal["auto", "deletes", "merged"]
"""How a snapshot view publishes slices with log files: by cost, always as base file plus
deletes, or always merged (`catalog.iceberg.layout.merge_reason`)."""
SLICE_MERGING: tuple[str, ...] = get_args(SliceMerging)
DeleteForm = Literal["positions", "vectors"]
"""How published snapshots delete base rows: Parquet position delete files (format version 2,
every reader), or deletion vectors (format version 3: DuckDB and PyIceberg only)."""
DELETE_FORMS: tuple[str, ...] = get_args(DeleteForm)


@dataclass(frozen=True, slots=True)
class Settings:
    """What the catalog serves and how.

    Attributes:
        warehouse: folder searched for tables (folders holding `.hoodie/hoodie.properties`): a
            local path or an object store's URI (`s3://bucket/prefix`).
        storage_options: credentials, region, endpoint of the warehouse's object store (see
            `shim.storage.options`; default: the `AWS_*` environment). Never logged.
        table_storage_options: per table (by catalog name), storage options used for it instead
            of `storage_options`: tables side by side under one prefix, each with its own
            credentials. Never logged.
        tables: table folders registered explicitly, as `PATH` or `NAME=PATH`.
        catalog_db: SQLite file of the table registry; default `<warehouse>/.hudi-shim/catalog.sqlite`,
            or in memory when there is no warehouse. `":memory:"` keeps it in memory.
        token: bearer token every `/v1` request must carry (None: no authentication), with access
            to every table.
        oauth_clients: OAuth2 clients that may ask `POST /v1/oauth/tokens` for expiring tokens (a
            clients file's path, or its JSON text; see `catalog.auth.clients`), each limited to its tables.
        oauth_key: the key tokens are signed with (default `$HUDI_SHIM_OAUTH_KEY`, else a new one
            at each start: tokens then die with the server). Never logged.
        oauth_token_seconds: how long an issued token is valid.
        host, port: where `hudi-shim serve` listens (loopback unless told otherwise).
        max_scan_rows, max_scan_bytes, max_scan_seconds: per-scan limits; a scan that exceeds
            one is aborted with an error (time is checked between the batches it reads, also
            those its filter empties, and covers sending: a client that stops reading is cut off).
        max_scans: scans running at once; `max_waiting_scans` more wait up to `scan_wait_seconds`
            for one to end, others are refused (503 with `Retry-After`).
        write_timeout_seconds: how long a response waits for a client that takes none of its
            bytes before the connection is closed (a client still taking bytes is waited for).
        request_timeout_seconds: how long a request's headers and body may take to arrive, from
            its first byte (from the connection opening, for its first request); then the
            connection is closed (408 if no response started).
        batch_rows, batch_bytes: the largest record batch sent over HTTP, in rows and (about) bytes;
            bigger ones are split.
        max_request_bytes: the largest request body accepted.
        cache_slices: how many file slices' schema mappings the view cache keeps.
        discovery_depth: how many folder levels under the warehouse are searched for tables.
        discovery_seconds: how old the list of the warehouse's tables may get: tables added (or
            removed) under it show (or go) within this many seconds; one asked for by name at once.
        iceberg_dir: where the Iceberg REST catalog writes table metadata, manifests and the file
            slices it writes out for Iceberg readers; default `<warehouse>/.hudi-shim/iceberg`, or a
            temporary folder (removed when the server stops) when there is no warehouse. Iceberg
            readers (Trino, DuckDB, PyIceberg) must be able to read it at the same path.
        iceberg_keep_seconds: how long a published Iceberg version stays readable after a newer
            one replaced it (readers may have loaded it just before); then the files only it
            names are removed.
        iceberg_history: how many commits before the latest each published Iceberg table keeps
            as snapshots (time travel; those a read may still be as of); 0 keeps the latest only.
        iceberg_slices: how the snapshot view publishes slices with log files: "auto" (the
            default: merged when their logs are a large share of them or they are small, else as
            "deletes", and as "deletes" larger slices that change often;
            `catalog.iceberg.layout.merge_reason`), "deletes" (base file in place,
            standing log records and position deletes) or "merged" (written out merged, read
            without deletes).
        iceberg_deletes: how published snapshots delete the base rows log records supersede or
            delete: "positions" (the default: format version 2, Parquet position delete files,
            which Trino, Presto, DuckDB and PyIceberg read) or "vectors" (format version 3, one
            deletion vector per base file in a Puffin file: for deployments whose readers are
            DuckDB and PyIceberg; Trino 476 and Presto 0.287 cannot read them).
        iceberg_statistics_max_columns: published Iceberg tables of at most this many columns get
            distinct-value statistics (Puffin theta sketches, which Trino's optimizer reads); each
            new file slice is read once to compute them, which very wide tables may not be worth.
            0 publishes none.
        hadoop_catalog_dir: a folder kept as an Iceberg Hadoop catalog of every table, for readers
            without a REST client (Presto: `iceberg.catalog.type=hadoop`); None: none kept.
        hadoop_catalog_seconds: how often that folder is brought up to date (also on `POST /v1/publish`).
        metadata: list tables' files from their metadata tables and prune with its indexes, in
            scans and publications (False: list storage, open footers; a scan request may turn it
            off for itself).
        vend_credentials: answer `loadTable` requests that ask for vended credentials
            (`X-Iceberg-Access-Delegation: vended-credentials`) with the keys a reader needs for a
            table on S3 (`catalog.iceberg.credentials`): from STS `AssumeRole` of `vend_role_arn`
            (for `vend_seconds`, at `sts_endpoint`, default the table's S3 endpoint), else the
            table's own storage credentials.
        hive_metastore: a Hive Metastore (`thrift://host:port`) kept up to date with every table: Iceberg
            tables in `hive_database`, Hudi's own (as Hive sync registers them) in `hive_sync_database`
            (None: not registered); on start, on `POST /v1/publish`, on a commit a writer announces
            (`POST /v1/commits`) and every `hive_metastore_seconds`.
    """

    warehouse: str | None = None
    tables: tuple[str, ...] = ()
    storage_options: Mapping[str, str] = field(default_factory=dict, repr=False)
    table_storage_options: Mapping[str, Mapping[str, str]] = field(default_factory=dict, repr=False)
    catalog_db: str | None = None
    token: str | None = None
    oauth_clients: str | None = field(default=None, repr=False)
    oauth_key: str | None = field(default=None, repr=False)
    oauth_token_seconds: float = 3600.0
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    max_scan_rows: int = 100_000_000
    max_scan_bytes: int = 16 * 1024**3
    max_scan_seconds: float = 900.0
    max_scans: int = 4
    max_waiting_scans: int = 16
    scan_wait_seconds: float = 5.0
    write_timeout_seconds: float = 60.0
    request_timeout_seconds: float = 30.0
    batch_rows: int = 65_536
    batch_bytes: int = 1024**2
    max_request_bytes: int = 8 * 1024**2
    cache_slices: int = 20_000
    discovery_depth: int = 4
    discovery_seconds: float = 10.0
    iceberg_dir: str | None = None
    iceberg_keep_seconds: float = 900.0
    iceberg_history: int = 10
    iceberg_statistics_max_columns: int = 200
    iceberg_slices: str = "auto"
    iceberg_deletes: str = "positions"
    hadoop_catalog_dir: str | None = None
    hadoop_catalog_seconds: float = 10.0
    metadata: bool = True
    vend_credentials: bool = False
    vend_role_arn: str | None = None
    vend_seconds: int = 3600
    sts_endpoint: str | None = None
    hive_metastore: str | None = None
    hive_database: str = "default"
    hive_sync_database: str | None = "hudi"
    hive_metastore_seconds: float = 60.0

    def __post_init__(self) -> None:
        for name in ("max_scan_rows", "max_scan_bytes", "batch_rows", "batch_bytes", "max_request_bytes",
                     "cache_slices", "discovery_depth", "max_scans"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise InvalidArgumentError(f"setting {name} must be a positive integer, got {value!r}")
        if not isinstance(self.iceberg_history, int) or isinstance(self.iceberg_history, bool) \
                or self.iceberg_history < 0:
            raise InvalidArgumentError(f"setting iceberg_history must be 0 or more, got {self.iceberg_history!r}")
        if self.iceberg_slices not in SLICE_MERGING:
            raise InvalidArgumentError(f"setting iceberg_slices must be one of {', '.join(SLICE_MERGING)}, "
                                       f"got {self.iceberg_slices!r}")
        if self.iceberg_deletes not in DELETE_FORMS:
            raise InvalidArgumentError(f"setting iceberg_deletes must be one of {', '.join(DELETE_FORMS)}, "
                                       f"got {self.iceberg_deletes!r}")
        if not isinstance(self.iceberg_statistics_max_columns, int) \
                or isinstance(self.iceberg_statistics_max_columns, bool) or self.iceberg_statistics_max_columns < 0:
            raise InvalidArgumentError("setting iceberg_statistics_max_columns must be 0 or more, got "
                                       f"{self.iceberg_statistics_max_columns!r}")
        if not self.iceberg_keep_seconds >= 0:
            raise InvalidArgumentError(
                f"setting iceberg_keep_seconds must be zero or more, got {self.iceberg_keep_seconds!r}")
        if not self.discovery_seconds >= 0:
            raise InvalidArgumentError(f"setting discovery_seconds must be zero or more, got {self.discovery_seconds!r}")
        if not self.hadoop_catalog_seconds > 0:
            raise InvalidArgumentError(
                f"setting hadoop_catalog_seconds must be positive, got {self.hadoop_catalog_seconds!r}")
        for name in ("max_scan_seconds", "write_timeout_seconds", "request_timeout_seconds"):
            if not getattr(self, name) > 0:
                raise InvalidArgumentError(f"setting {name} must be positive, got {getattr(self, name)!r}")
        if not isinstance(self.max_waiting_scans, int) or self.max_waiting_scans < 0 or not self.scan_wait_seconds >= 0:
            raise InvalidArgumentError("settings max_waiting_scans and scan_wait_seconds must be 0 or more, got "
                                       f"{self.max_waiting_scans!r} and {self.scan_wait_seconds!r}")
        if not isinstance(self.vend_seconds, int) or not 900 <= self.vend_seconds <= 43200:
            raise InvalidArgumentError(f"setting vend_seconds must be 900..43200 (what STS grants), got {self.vend_seconds!r}")
        if self.vend_role_arn is not None and not self.vend_role_arn.startswith("arn:"):
            raise InvalidArgumentError(f"setting vend_role_arn must be a role's ARN (arn:aws:iam::...), got {self.vend_role_arn!r}")
        if not self.oauth_token_seconds > 0:
            raise InvalidArgumentError(f"setting oauth_token_seconds must be positive, got {self.oauth_token_seconds!r}")
        if self.oauth_key is not None and len(self.oauth_key) < 16:
            raise InvalidArgumentError("setting oauth_key must be at least 16 characters")
        if not self.hive_metastore_seconds > 0:
            raise InvalidArgumentError(
                f"setting hive_metastore_seconds must be positive, got {self.hive_metastore_seconds!r}")
        if self.hive_metastore is not None:
            parse_uri(self.hive_metastore)
        if self.hive_sync_database is not None and self.hive_sync_database.lower() == self.hive_database.lower():
            raise InvalidArgumentError(
                f"settings hive_database and hive_sync_database are both {self.hive_database!r}: Hudi's own tables "
                "(<table>_ro, <table>_rt) and the Iceberg tables (<table>, <table>_ro) need databases of their own")
        if not 0 <= self.port <= 65535:
            raise InvalidArgumentError(f"setting port must be in 0..65535, got {self.port}")
        if self.token is not None and not self.token.strip():
            raise InvalidArgumentError("setting token must not be blank (leave it unset for no authentication)")
        if isinstance(self.tables, str):
            raise InvalidArgumentError("setting tables must be a sequence of paths, not one string")
        object.__setattr__(self, "tables", tuple(self.tables))

    def registry_location(self) -> str:
        """The SQLite file the registry uses (or `":memory:"`); for a warehouse on an object store a
        local file named after it under `~/.cache/hudi-shim/catalogs` (SQLite needs a local file)."""
        if self.catalog_db:
            return self.catalog_db
        if not self.warehouse:
            return MEMORY
        folder = local_folder(self.warehouse)
        if folder is None:
            digest = hashlib.sha256(canonical_location(self.warehouse).encode()).hexdigest()[:16]
            return str(cache_root() / "catalogs" / digest / os.path.basename(WAREHOUSE_DB))
        return os.path.join(folder, WAREHOUSE_DB)

    def iceberg_location(self) -> str | None:
        """The folder of published Iceberg metadata (None: a temporary one, chosen when serving)."""
        if self.iceberg_dir:
            return location_of(self.iceberg_dir)
        if self.warehouse:
            return join(location_of(self.warehouse), WAREHOUSE_ICEBERG)
        return None

    def hadoop_catalog_location(self) -> str | None:
        """The Hadoop catalog folder kept, if any."""
        return location_of(self.hadoop_catalog_dir) if self.hadoop_catalog_dir else None
