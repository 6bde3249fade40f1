"""Every client finds the server's token as the CLI does: `HUDI_SHIM_TOKEN`, else the file
`HUDI_SHIM_TOKEN_FILE` names (a real server on loopback, real DuckDB)."""

from __future__ import annotations

import json

import pytest

from catalog.settings import Settings
from engines.cli import main
from engines.duckdb import connect
from engines.http import RemoteError, ShimClient
from engines.iceberg import attach
from engines.tokens import resolve_token
from shim.errors import InvalidArgumentError
from tests.catalog.servekit import TRIPS_ROWS, build_warehouse, live_server

TOKEN = "token-from-the-environment"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    warehouse = build_warehouse(tmp_path_factory.mktemp("tokens") / "wh")
    with live_server(Settings(warehouse=str(warehouse.root), catalog_db=":memory:", token=TOKEN)) as live:
        yield live


@pytest.fixture
def no_token(monkeypatch):
    monkeypatch.delenv("HUDI_SHIM_TOKEN", raising=False)
    monkeypatch.delenv("HUDI_SHIM_TOKEN_FILE", raising=False)
    return monkeypatch


def test_without_a_token_the_server_refuses(server, no_token):
    with ShimClient(server.url) as client, pytest.raises(RemoteError, match="bearer token"):
        client.tables()


def test_the_http_client_duckdb_and_iceberg_take_the_environments_token(server, no_token):
    no_token.setenv("HUDI_SHIM_TOKEN", TOKEN)
    with ShimClient(server.url) as client:
        assert "trips" in client.tables()
    # Results read whole and connections closed here: a DuckDB connection dropped by the garbage
    # collector with a streamed result still open over a Python (Arrow) scan waits, holding the GIL,
    # for the scan's tasks, which need it (seen once: a hang at 100% CPU).
    with connect(server.url) as con:
        assert con.execute("SELECT count(*) FROM trips").fetchall() == [(len(TRIPS_ROWS),)]
    with attach(server.url) as con:
        assert con.execute("SELECT count(*) FROM shim.default.trips").fetchall() == [(len(TRIPS_ROWS),)]


def test_a_token_file_is_read_and_an_unreadable_one_named(server, no_token, tmp_path, capsys):
    secret = tmp_path / "token"
    secret.write_text(TOKEN + "\n")
    no_token.setenv("HUDI_SHIM_TOKEN_FILE", str(secret))
    with ShimClient(server.url) as client:
        assert "trips" in client.tables()
    no_token.delenv("HUDI_SHIM_TOKEN_FILE")
    assert main(["sql", "--url", server.url, "--token-file", str(secret), "SELECT count(*) AS n FROM trips",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"n": len(TRIPS_ROWS)}
    with pytest.raises(InvalidArgumentError, match=f"cannot read the token file {tmp_path}/missing"):
        resolve_token(None, str(tmp_path / "missing"))
    (tmp_path / "empty").write_text("  \n")
    with pytest.raises(InvalidArgumentError, match="is empty"):
        resolve_token(None, str(tmp_path / "empty"))
    assert resolve_token("given", str(tmp_path / "missing")) == "given", "an explicit token comes first"
