"""OAuth2 as Iceberg REST clients use it: client credentials for expiring tokens at
`/v1/oauth/tokens`, each client limited to its tables; the static token keeps every table.
PyIceberg and DuckDB obtain (and, once theirs expired, obtain again) tokens by themselves;
wrong secrets and tables out of scope are refused; no secret shows in logs or answers."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import httpx
import pytest

from catalog.auth.clients import add_client, load_clients
from catalog.auth.tokens import EVERYTHING, Principal, TokenAuthority, TokenInvalid
from catalog.server import running
from catalog.settings import Settings
from engines.cli import main
from tests.catalog.servekit import build_warehouse, logged, server_log

STATIC = "the-static-token"
KEY = "a signing key of the tests, 32 bytes"
SHORT = 3.0  # seconds a token lives on the short-lived server


@pytest.fixture(scope="module")
def clients(tmp_path_factory):
    root = tmp_path_factory.mktemp("oauth")
    build_warehouse(root / "wh")
    path = root / "clients.json"
    secrets = {"all": add_client(path, "all"), "trips_only": add_client(path, "trips_only", ["trips"])}
    return root, path, secrets


@pytest.fixture(scope="module")
def server(clients):
    root, path, secrets = clients
    settings = Settings(warehouse=str(root / "wh"), catalog_db=":memory:", token=STATIC, oauth_clients=str(path),
                        oauth_key=KEY)
    with running(settings) as live:
        yield live.url, secrets


def _token(url: str, client_id: str, secret: str, **extra: str) -> httpx.Response:
    return httpx.post(f"{url}/iceberg/v1/oauth/tokens",
                      data={"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret,
                            **extra})


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_client_gets_an_expiring_token_that_reads_its_tables_only(server):
    url, secrets = server
    answer = _token(url, "trips_only", secrets["trips_only"], scope="catalog")
    assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
    body = answer.json()
    assert (body["token_type"], body["expires_in"], body["scope"]) == ("bearer", 3600, "catalog")
    assert body["issued_token_type"] == "urn:ietf:params:oauth:token-type:access_token"
    headers = _bearer(body["access_token"])
    with httpx.Client(base_url=url, headers=headers) as client:
        assert [t["name"] for t in client.get("/v1/tables").json()["tables"]] == ["trips"]
        listed = client.get("/iceberg/v1/namespaces/default/tables").json()["identifiers"]
        assert [i["name"] for i in listed] == ["trips", "trips_ro"]
        assert client.get("/iceberg/v1/namespaces/default/tables/trips_ro").status_code == 200
        assert client.post("/v1/tables/trips/scan", json={}).status_code == 200
        for method, path in [("GET", "/v1/tables/events"), ("GET", "/v1/tables/events/files"),
                             ("GET", "/v1/tables/events/timeline"), ("POST", "/v1/tables/events/scan"),
                             ("GET", "/iceberg/v1/namespaces/default/tables/events"),
                             ("GET", "/iceberg/v1/namespaces/default/tables/events_ro"),
                             ("GET", "/v1/tables/no_such_table"), ("POST", "/v1/publish")]:
            refused = client.request(method, path, json={} if method == "POST" else None)
            assert refused.status_code == 403, path
            assert refused.json()["error"]["type"] == "ForbiddenError"
        assert client.head("/iceberg/v1/namespaces/default/tables/events").status_code == 403
    with httpx.Client(base_url=url, headers=_bearer(STATIC)) as client:  # the static token keeps every table
        assert [t["name"] for t in client.get("/v1/tables").json()["tables"]] == ["events", "trips"]
        assert client.get("/iceberg/v1/namespaces/default/tables/events").status_code == 200


def test_wrong_secrets_unknown_clients_and_bad_requests_are_refused_as_oauth_says(server):
    url, secrets = server
    for client_id, secret in [("all", "wrong"), ("nobody", secrets["all"]), ("trips_only", secrets["all"])]:
        refused = _token(url, client_id, secret)
        assert refused.status_code == 401 and refused.json() == {"error": "invalid_client",
                                                                  "error_description": "unknown client or wrong secret"}
    assert _token(url, "all", "").json()["error"] == "invalid_request"
    unsupported = httpx.post(f"{url}/v1/oauth/tokens", data={"grant_type": "password", "username": "all"})
    assert (unsupported.status_code, unsupported.json()["error"]) == (400, "unsupported_grant_type")
    scoped = _token(url, "trips_only", secrets["trips_only"], scope="table:events")
    assert (scoped.status_code, scoped.json()["error"]) == (400, "invalid_scope")
    for token in ("nope", "hst1.e30.AAAA", STATIC + "x"):
        assert httpx.get(f"{url}/v1/tables", headers=_bearer(token)).status_code == 401


def test_basic_auth_a_narrower_scope_and_token_exchange(server):
    url, secrets = server
    basic = httpx.post(f"{url}/v1/oauth/tokens", data={"grant_type": "client_credentials", "scope": "table:events"},
                       auth=("all", secrets["all"]))
    assert basic.status_code == 200 and basic.json()["scope"] == "table:events"
    narrowed = basic.json()["access_token"]
    assert [t["name"] for t in httpx.get(f"{url}/v1/tables", headers=_bearer(narrowed)).json()["tables"]] == ["events"]
    exchanged = httpx.post(f"{url}/iceberg/v1/oauth/tokens", headers=_bearer(narrowed), data={
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": narrowed,
        "subject_token_type": "urn:ietf:params:oauth:token-type:access_token"})
    assert exchanged.status_code == 200 and exchanged.json()["access_token"]
    fresh = exchanged.json()["access_token"]
    assert [t["name"] for t in httpx.get(f"{url}/v1/tables", headers=_bearer(fresh)).json()["tables"]] == ["events"]
    bad = httpx.post(f"{url}/v1/oauth/tokens", data={
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": "forged"})
    assert (bad.status_code, bad.json()["error"]) == (401, "invalid_grant")


def test_an_expired_token_is_refused_saying_so(server):
    url, _ = server
    expired = TokenAuthority(KEY.encode(), 60).issue(Principal("all"), now=time.time() - 120).access_token
    refused = httpx.get(f"{url}/v1/tables", headers=_bearer(expired))
    assert refused.status_code == 401 and "expired" in refused.json()["error"]["message"]
    with pytest.raises(TokenInvalid, match="expired"):
        TokenAuthority(KEY.encode(), 60).check(expired)
    other_key = TokenAuthority(b"another key of 32 bytes at least", 60).issue(EVERYTHING).access_token
    assert httpx.get(f"{url}/v1/tables", headers=_bearer(other_key)).status_code == 401


def test_no_secret_reaches_the_logs_or_an_answer(clients, server):
    url, secrets = server
    _, path, _ = clients
    hashes = [c.secret_hash for c in load_clients(str(path)).values()]
    with server_log() as records:
        answers = [_token(url, "all", "wrong-secret-value"), _token(url, "trips_only", secrets["trips_only"]),
                   _token(url, "trips_only", secrets["all"])]
        token = answers[1].json()["access_token"]
        answers.append(httpx.get(f"{url}/iceberg/v1/namespaces/default/tables/events", headers=_bearer(token)))
    text = logged(records) + "".join(a.text for a in answers)
    assert "wrong-secret-value" not in text and not any(s in text for s in secrets.values())
    assert not any(h.split("$")[-1] in text for h in hashes)
    assert "trips_only" in logged(records) or "all" in logged(records)  # the refusals are logged, by client id


def test_the_cli_adds_a_client_whose_secret_is_shown_once_and_kept_hashed(tmp_path, capsys):
    path = tmp_path / "clients.json"
    assert main(["oauth-client", "--file", str(path), "trino", "--tables", "trips, rides*"]) == 0
    credential = capsys.readouterr().out.strip().splitlines()[-1]
    client_id, secret = credential.split(":", 1)
    stored = load_clients(str(path))["trino"]
    assert client_id == "trino" and stored.tables == ("trips", "rides*") and stored.check(secret)
    assert secret not in path.read_text() and os.stat(path).st_mode & 0o077 == 0
    assert main(["oauth-client", "--file", str(path), "other"]) == 0
    assert set(load_clients(str(path))) == {"trino", "other"} and load_clients(str(path))["other"].tables is None
    assert load_clients(json.dumps(json.loads(Path(path).read_text())))["trino"].check(secret)  # inline JSON too


@pytest.fixture(scope="module")
def short_lived(clients):
    """A server whose tokens live `SHORT` seconds."""
    root, path, secrets = clients
    settings = Settings(warehouse=str(root / "wh"), catalog_db=":memory:", oauth_clients=str(path),
                        oauth_token_seconds=SHORT)
    with running(settings) as live:
        yield live.url, secrets


def test_pyiceberg_obtains_and_renews_its_token_with_only_the_url_and_a_credential(short_lived):
    from pyiceberg.catalog import load_catalog
    from pyiceberg.exceptions import ForbiddenError

    url, secrets = short_lived
    catalog = load_catalog("shim", type="rest", uri=f"{url}/iceberg", credential=f"trips_only:{secrets['trips_only']}")
    assert sorted(name for _, name in catalog.list_tables("default")) == ["trips", "trips_ro"]
    assert catalog.load_table("default.trips").scan().to_arrow().num_rows == 4
    with pytest.raises(ForbiddenError, match="client 'trips_only' may not read table 'events'"):
        catalog.load_table("default.events")
    time.sleep(SHORT + 1)  # the first token has expired: reading on needs a new one
    assert catalog.load_table("default.trips_ro").scan().to_arrow().num_rows == 4


def test_duckdb_obtains_and_renews_its_token_with_only_the_url_and_a_credential(short_lived):
    import engines.iceberg

    url, secrets = short_lived
    con = engines.iceberg.attach(url, credential=f"trips_only:{secrets['trips_only']}")
    assert con.execute("SELECT count(*) FROM shim.default.trips").fetchall() == [(4,)]
    with pytest.raises(Exception, match="client 'trips_only' may not read table 'events'"):
        con.execute("SELECT count(*) FROM shim.default.events").fetchall()
    time.sleep(SHORT + 1)
    assert con.execute("SELECT count(*) FROM shim.default.trips_ro").fetchall() == [(4,)]
