"""Fixtures shared by all tests."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from engines.hms import MetastoreServer
from engines.s3server import CLIENT_ENVIRONMENT, S3Server, start_s3proxy
from tests.moto_s3 import start_moto

REPO = Path(__file__).resolve().parent.parent
# The AWS SDK clients of the tests (pyarrow's, in this process and in Spark's Python workers,
# which inherit this environment) talk only to s3proxy, which takes no streamed checksums.
os.environ.update(CLIENT_ENVIRONMENT)


def shared_tables_dir() -> Path | None:
    """The folder of real Hudi tables (zips): $HUDI_SHIM_SHARED_TABLES, ../shared or /work/shared."""
    candidates = [os.environ.get("HUDI_SHIM_SHARED_TABLES"), REPO.parent / "shared" / "hudi-tables",
                  "/work/shared/hudi-tables"]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir() and any(Path(candidate).glob("*.zip")):
            return Path(candidate)
    return None


def shared_table_names() -> list[str]:
    folder = shared_tables_dir()
    return sorted(p.stem for p in folder.glob("*.zip")) if folder else []


@pytest.fixture(scope="session")
def shared_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real Hudi tables unzipped once per session: zip name -> table folder."""
    folder = shared_tables_dir()
    if folder is None:
        pytest.skip("real Hudi tables not found (../shared/hudi-tables or $HUDI_SHIM_SHARED_TABLES)")
    root = tmp_path_factory.mktemp("hudi-tables")
    tables = {}
    for archive in sorted(folder.glob("*.zip")):
        target = root / archive.stem
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(target)
        [table] = [p.parent.parent for p in target.glob("*/.hoodie/hoodie.properties") if "__MACOSX" not in str(p)]
        tables[archive.stem] = table
    return tables


@pytest.fixture(scope="session")
def lance_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """hudi-rs's tables with Lance base files (Apache Hudi 1.2), from the `hudi` sdist on PyPI
    (`tests.hudi_rs_data`), unzipped once per session: name -> table folder."""
    pytest.importorskip("lance", reason="pylance (pip install 'hudi-shim[lance]') reads Lance base files")
    from tests.hudi_rs_data import HudiRsDataUnavailable, lance_table_zips

    try:
        zips = lance_table_zips()
    except HudiRsDataUnavailable as exc:
        pytest.skip(f"hudi-rs's Lance tables: {exc}")
    root = tmp_path_factory.mktemp("lance-tables")
    tables = {}
    for name, archive in zips.items():
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(root / name)
        [table] = [p.parent.parent for p in (root / name).glob("*/.hoodie/hoodie.properties")]
        tables[name] = table
    return tables


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A real S3-compatible server: s3proxy on a free port of 127.0.0.1, with a bucket `lake`."""
    server = start_s3proxy(tmp_path_factory.mktemp("s3proxy"))
    try:
        server.create_bucket("lake")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def moto_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A real S3-compatible server that honours conditional writes (If-None-Match, If-Match):
    moto's, on a free port of 127.0.0.1, with a bucket `lake`."""
    server = start_moto(tmp_path_factory.mktemp("moto"))
    try:
        server.create_bucket("lake")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def hive_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetastoreServer]:
    """A real Hive Metastore (Apache Hive's standalone metastore from Maven Central): a container
    where Docker runs, else a process. 3.1.3, which Presto 0.287 and Trino 476 both read (Presto
    calls `get_table`, which 4.0 removed)."""
    from tests.engines.trino.enginekit import runner
    from tests.hmskit import metastore_server

    with metastore_server(tmp_path_factory.mktemp("hive-metastore"), how=runner(), version="3.1.3") as server:
        yield server


#: Real Hudi tables the vending catalog keeps on moto's S3.
VENDED_TABLES = ("trips__mor__avro__v8_trips_8i3u1d", "sample__cow__v8_simplekeygen_nonhivestyle")
VENDED_ROLE = "arn:aws:iam::123456789012:role/hudi-shim-reader"
#: How long the vending catalog's OAuth2 tokens live: short, so that clients must renew their own.
VENDED_TOKEN_SECONDS = 30.0


@dataclass
class VendedCatalog:
    """A catalog on moto's S3 (which has STS) that vends STS credentials per table to OAuth2 clients.

    Attributes:
        url: the server.
        credentials: client id -> `id:secret` (`reader`: every table; `scoped`: the first of
            `VENDED_TABLES` only).
        store: the S3 server.
        tables: the same tables kept locally, for the shim's own reads.
    """

    url: str
    credentials: dict[str, str]
    store: S3Server
    tables: dict[str, Path]


@pytest.fixture(scope="session")
def vended_catalog(moto_s3: S3Server, shared_tables: dict[str, Path],
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[VendedCatalog]:
    import pyarrow.fs as pafs

    from catalog.auth.clients import add_client
    from catalog.server import running
    from catalog.settings import Settings

    system = pafs.S3FileSystem(**moto_s3.storage_options())
    for name in VENDED_TABLES:
        pafs.copy_files(str(shared_tables[name]), f"lake/vended-wh/{name}", destination_filesystem=system)
    clients = tmp_path_factory.mktemp("vended") / "clients.json"
    credentials = {"reader": f"reader:{add_client(clients, 'reader')}",
                   "scoped": f"scoped:{add_client(clients, 'scoped', [VENDED_TABLES[0]])}"}
    settings = Settings(warehouse="s3://lake/vended-wh", storage_options=moto_s3.storage_options(),
                        catalog_db=":memory:", oauth_clients=str(clients), oauth_token_seconds=VENDED_TOKEN_SECONDS,
                        vend_credentials=True, vend_role_arn=VENDED_ROLE, vend_seconds=900)
    with running(settings) as live:
        yield VendedCatalog(live.url, credentials, moto_s3, {n: shared_tables[n] for n in VENDED_TABLES})
