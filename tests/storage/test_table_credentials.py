"""Each table reaches its files with its own storage options: two tables side by side under one
bucket prefix, opened in one process with different credentials or endpoints, never borrow each
other's (a real S3-compatible server, s3proxy, and a real tap in front of it)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

import shim
from catalog.settings import Settings
from engines.http import ShimClient
from shim.errors import StorageError
from tests.catalog.servekit import live_server
from tests.s3tap import S3Tap

pytestmark = pytest.mark.shared

TABLE = "sample__cow__v6_simplekeygen_nonhivestyle"


@pytest.fixture()
def two_tables(s3, shared_tables, request) -> tuple[str, str]:
    """The same table copied twice under one prefix: `.../a` and `.../b`."""
    prefix = f"lake/credentials-{request.node.name}"
    system = pafs.S3FileSystem(**s3.storage_options())
    for name in ("a", "b"):
        pafs.copy_files(str(shared_tables[TABLE]), f"{prefix}/{name}", destination_filesystem=system)
    return f"s3://{prefix}/a", f"s3://{prefix}/b"


def rows(table: shim.Table) -> list[dict]:
    return rows_of(table.read(include_meta=True))


def rows_of(data: pa.Table) -> list[dict]:
    return sorted(data.to_pylist(), key=repr)


def test_a_table_with_wrong_credentials_beside_one_with_right_ones(s3, two_tables):
    good, bad = two_tables
    right, wrong = s3.storage_options(), {**s3.storage_options(), "secret_key": "not-the-secret-0123456789"}
    first = shim.open_table(good, storage_options=right)
    expected = rows(first)
    assert expected
    with pytest.raises(StorageError, match=f"{bad}/.hoodie/hoodie.properties"):
        shim.open_table(bad, storage_options=wrong)
    assert rows(first) == expected, "the open table kept its own credentials"
    assert rows(shim.open_table(good, storage_options=right)) == expected
    # the other way round: the wrong credentials given to the first table, the right to the second
    assert rows(shim.open_table(bad, storage_options=right)) == expected
    with pytest.raises(StorageError, match=f"{good}/.hoodie/hoodie.properties"):
        shim.open_table(good, storage_options=wrong)


def test_each_table_sends_its_requests_to_its_own_endpoint(s3, two_tables):
    tapped, direct = two_tables
    tap = S3Tap(s3.endpoint).start()
    try:
        through_tap = shim.open_table(tapped, storage_options={**s3.storage_options(), "endpoint_override": tap.endpoint})
        assert tap.counts.snapshot()["requests"] > 0
        tap.counts.reset()
        straight = shim.open_table(direct, storage_options=s3.storage_options())
        assert rows(straight) == rows(through_tap)
        seen = tap.counts.snapshot()
        assert seen["GET"] + seen.get("GET_RANGE", 0) > 0, "the tapped table read its files through the tap"
        tap.counts.reset()
        rows(straight)
        shim.open_table(direct, storage_options=s3.storage_options()).read()
        assert tap.counts.snapshot()["requests"] == 0, "the other table never went through the tap"
    finally:
        tap.stop()


def test_one_server_serves_each_table_with_its_own_storage_options(s3, two_tables):
    """The catalog's options are wrong for both tables; each table's own options reach it (one
    through a tap, one straight): a scan of one never sends a request the other's way."""
    tapped, direct = two_tables
    tap = S3Tap(s3.endpoint).start()
    wrong = {**s3.storage_options(), "secret_key": "not-the-secret-0123456789"}
    settings = Settings(tables=(f"tapped={tapped}", f"direct={direct}"), catalog_db=":memory:",
                        storage_options=wrong,
                        table_storage_options={"tapped": {**s3.storage_options(), "endpoint_override": tap.endpoint},
                                               "direct": s3.storage_options()})
    try:
        with live_server(settings) as live:
            client = ShimClient(live.url)
            assert client.tables() == ["direct", "tapped"]
            tap.counts.reset()
            straight = client.scan("direct")
            assert straight.num_rows > 0 and tap.counts.snapshot()["requests"] == 0
            assert rows_of(client.scan("tapped")) == rows_of(straight)
            assert tap.counts.snapshot()["GET"] > 0
    finally:
        tap.stop()
