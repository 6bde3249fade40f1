"""Large filters DuckDB pushes over HTTP: long IN lists reach the server, and terms beyond the
server's request limits are applied on the client rather than failing the query."""

from __future__ import annotations

import pyarrow as pa
import pytest

import engines.http
from catalog.settings import Settings
from catalog.stream import MAX_FILTER_CHARS
from engines.duckdb import connect
from tests.catalog.servekit import live_server
from tests.tablekit import TinyTable

KEYS = [f"key-{i:06d}" for i in range(4000)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("in_lists") / "wh"
    table = TinyTable(root / "t", pa.schema([("id", pa.string()), ("ts", pa.int64())]), mor=False)
    table.base([{"id": key, "ts": i} for i, key in enumerate(KEYS)])
    with live_server(Settings(warehouse=str(root), catalog_db=":memory:")) as live:
        yield live


@pytest.fixture
def sent_filters(monkeypatch):
    """The filter text of every scan the HTTP client sends."""
    sent: list[str | None] = []
    original = engines.http.ShimClient.scan_batches

    def spy(self, name, **kwargs):
        sent.append(kwargs.get("filter"))
        return original(self, name, **kwargs)

    monkeypatch.setattr(engines.http.ShimClient, "scan_batches", spy)
    return sent


def in_list(keys: list[str]) -> str:
    return ", ".join(f"'{key}'" for key in keys)


def test_an_in_list_of_150_keys_is_pushed_over_http_and_counts_as_in_process(server, sent_filters):
    keys = KEYS[::20][:150]
    sql = f"SELECT count(*) FROM t WHERE id IN ({in_list(keys)})"
    assert connect(server.url).sql(sql).fetchall() == [(150,)]
    assert connect(str(server.catalog.settings.warehouse)).sql(sql).fetchall() == [(150,)]
    [pushed] = [f for f in sent_filters if f]
    assert len(pushed) > 1000 and "IN (" in pushed  # over the old 1,000-character cap, sent whole


def test_a_filter_longer_than_the_server_accepts_is_applied_on_the_client(server, sent_filters):
    wanted = KEYS[:3]
    padding = [f"absent-{'x' * 40}-{i}" for i in range(MAX_FILTER_CHARS // 40)]  # ~1.2 MiB of text
    sql = f"SELECT id FROM t WHERE id IN ({in_list(wanted + padding)}) AND ts >= 0 ORDER BY id"
    assert connect(server.url).sql(sql).fetchall() == [(key,) for key in wanted]
    pushed = [f for f in sent_filters if f]
    assert pushed and all(len(f) <= MAX_FILTER_CHARS for f in pushed)
    assert all("absent-" not in f for f in pushed)  # the IN list stayed here; `ts >= 0` went
