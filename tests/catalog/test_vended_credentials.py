"""Storage credentials vended in `loadTable` answers (`serve --vend-credentials`): the catalog on
moto's S3 assumes a role through moto's STS per table and hands the short-lived keys to OAuth2
clients whose scope covers the table; PyIceberg and DuckDB read the tables on S3 with nothing
but the catalog's URL and a client credential. Keys never reach logs, errors or other answers."""

from __future__ import annotations

import logging

import httpx
import pytest

import shim
from catalog.iceberg.credentials import CredentialVendingError, CredentialVendor, read_policy
from shim.storage import storage_for
from tests.conftest import VENDED_ROLE, VENDED_TABLES

pytestmark = pytest.mark.shared

ASK = {"X-Iceberg-Access-Delegation": "vended-credentials"}


def _token(url: str, credential: str) -> str:
    client_id, _, secret = credential.partition(":")
    answer = httpx.post(f"{url}/iceberg/v1/oauth/tokens", timeout=30,
                        data={"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret})
    answer.raise_for_status()
    return str(answer.json()["access_token"])


def _load(url: str, token: str, table: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.get(f"{url}/iceberg/v1/namespaces/default/tables/{table}", timeout=300,
                     headers={"Authorization": f"Bearer {token}", **(headers or {})})


def test_load_table_vends_short_lived_keys_for_the_table_to_a_client_that_asks(vended_catalog):
    store = vended_catalog.store
    token = _token(vended_catalog.url, vended_catalog.credentials["reader"])
    answer = _load(vended_catalog.url, token, VENDED_TABLES[0], ASK)
    assert answer.status_code == 200, answer.text
    config = answer.json()["config"]
    assert config["s3.access-key-id"] and config["s3.access-key-id"] != store.access_key
    assert config["s3.secret-access-key"] and config["s3.session-token"]
    assert config["s3.endpoint"] == store.endpoint and config["s3.path-style-access"] == "true"
    assert config["client.region"] == store.storage_options()["region"]
    assert store.secret_key not in answer.text  # the server's own key never leaves it
    prefixes = [c["prefix"] for c in answer.json()["storage-credentials"]]
    assert f"s3://lake/vended-wh/{VENDED_TABLES[0]}" in prefixes and any(".hudi-shim" in p for p in prefixes)
    again = _load(vended_catalog.url, token, VENDED_TABLES[0], ASK).json()["config"]
    assert again["s3.session-token"] == config["s3.session-token"]  # kept until close to expiry
    plain = _load(vended_catalog.url, token, VENDED_TABLES[0])
    assert plain.json()["config"] == {} and "storage-credentials" not in plain.json()


def test_a_wrong_secret_and_a_table_out_of_the_clients_scope_get_no_keys(vended_catalog):
    url = vended_catalog.url
    client_id = vended_catalog.credentials["scoped"].partition(":")[0]
    wrong = httpx.post(f"{url}/iceberg/v1/oauth/tokens", timeout=30,
                       data={"grant_type": "client_credentials", "client_id": client_id, "client_secret": "wrong"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    token = _token(url, vended_catalog.credentials["scoped"])
    refused = _load(url, token, VENDED_TABLES[1], ASK)
    assert refused.status_code == 403 and "s3." not in refused.text
    assert _load(url, token, VENDED_TABLES[0], ASK).json()["config"]["s3.session-token"]
    listed = httpx.get(f"{url}/iceberg/v1/namespaces/default/tables", headers={"Authorization": f"Bearer {token}"})
    assert {t["name"] for t in listed.json()["identifiers"]} == {VENDED_TABLES[0], VENDED_TABLES[0] + "_ro"}


def test_pyiceberg_and_duckdb_read_tables_on_s3_with_only_the_url_and_a_credential(vended_catalog, monkeypatch):
    from pyiceberg.catalog import load_catalog

    import engines.iceberg

    for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(variable, raising=False)
    credential = vended_catalog.credentials["reader"]
    catalog = load_catalog("vended", type="rest", uri=f"{vended_catalog.url}/iceberg", credential=credential)
    con = engines.iceberg.attach(vended_catalog.url, credential=credential)
    for name in VENDED_TABLES:
        for suffix, mode in (("", "snapshot"), ("_ro", "read_optimized")):
            expected = shim.open_table(str(vended_catalog.tables[name])).read(mode=mode)
            column = expected.schema.names[0]
            values = sorted(map(str, expected.column(column).to_pylist()))
            got = catalog.load_table(f"default.{name}{suffix}").scan().to_arrow()
            assert got.num_rows == expected.num_rows and sorted(map(str, got.column(column).to_pylist())) == values
            rows = con.execute(f'SELECT "{column}" FROM shim."default"."{name}{suffix}"').fetchall()
            assert sorted(str(r[0]) for r in rows) == values


def test_keys_reach_no_log_and_no_error(vended_catalog, caplog):
    store = vended_catalog.store
    caplog.set_level(logging.DEBUG)
    token = _token(vended_catalog.url, vended_catalog.credentials["reader"])
    vended = _load(vended_catalog.url, token, VENDED_TABLES[1], ASK).json()["config"]
    answers = [httpx.get(f"{vended_catalog.url}{path}", headers={"Authorization": f"Bearer {token}"}, timeout=60)
               for path in ("/v1/tables", f"/v1/tables/{VENDED_TABLES[1]}", f"/v1/tables/{VENDED_TABLES[1]}/files")]
    assert [a.status_code for a in answers] == [200, 200, 200]
    storage = storage_for(f"s3://lake/vended-wh/{VENDED_TABLES[1]}", store.storage_options())
    unreachable = CredentialVendor(VENDED_ROLE, sts_endpoint="http://127.0.0.1:9")
    with pytest.raises(CredentialVendingError) as refused:
        unreachable.config("t", storage, [storage.root])
    for secret in (store.secret_key, vended["s3.secret-access-key"], vended["s3.session-token"], token):
        leaks = [(r.name, r.getMessage()[:300]) for r in caplog.records if secret in r.getMessage()]
        assert not leaks, leaks
        assert secret not in str(refused.value) and not any(secret in a.text for a in answers)
    assert VENDED_ROLE in str(refused.value)


def test_without_a_role_a_table_gets_its_own_keys_and_a_local_table_none(tmp_path):
    own = storage_for("s3://lake/t", {"access_key": "AKIAOWN", "secret_key": "own-secret", "region": "eu-west-1",
                                      "endpoint_override": "127.0.0.1:9000", "scheme": "http"})
    config = CredentialVendor().config("t", own, [own.root])
    assert config == {"s3.access-key-id": "AKIAOWN", "s3.secret-access-key": "own-secret",
                      "s3.endpoint": "http://127.0.0.1:9000", "s3.path-style-access": "true",
                      "client.region": "eu-west-1", "s3.region": "eu-west-1"}
    assert CredentialVendor().config("t", storage_for(str(tmp_path)), [str(tmp_path)]) == {}
    policy = read_policy(["s3://lake/t", "s3://lake/.hudi-shim/iceberg/t"])
    assert policy["Statement"][0]["Resource"] == ["arn:aws:s3:::lake/t/*", "arn:aws:s3:::lake/.hudi-shim/iceberg/t/*"]


def test_serve_vends_with_a_role_or_when_asked(monkeypatch, tmp_path):
    import catalog.server
    from engines.cli import main

    seen = []
    monkeypatch.setattr(catalog.server, "run", lambda settings: seen.append(settings) or 0)
    assert main(["serve", "--warehouse", str(tmp_path), "--vend-role-arn", VENDED_ROLE, "--vend-seconds", "900",
                 "--sts-endpoint", "http://127.0.0.1:9"]) == 0
    assert main(["serve", "--warehouse", str(tmp_path), "--vend-credentials"]) == 0
    assert main(["serve", "--warehouse", str(tmp_path)]) == 0
    assert [(s.vend_credentials, s.vend_role_arn, s.vend_seconds, s.sts_endpoint) for s in seen] == [
        (True, VENDED_ROLE, 900, "http://127.0.0.1:9"), (True, None, 3600, None), (False, None, 3600, None)]


def test_the_startup_summary_says_where_clients_get_tokens_and_what_is_vended(tmp_path):
    from catalog.server import startup_summary
    from catalog.settings import Settings

    said = startup_summary(Settings(warehouse=str(tmp_path), oauth_clients="clients.json", vend_credentials=True,
                                    vend_role_arn=VENDED_ROLE, hive_metastore="thrift://127.0.0.1:9083"), ["t"])
    assert "OAuth2 clients get tokens at http://127.0.0.1:8080/iceberg/v1/oauth/tokens" in said
    assert f"STS AssumeRole of {VENDED_ROLE}" in said and "Hive Metastore thrift://127.0.0.1:9083" in said
    plain = startup_summary(Settings(warehouse=str(tmp_path)), [])
    assert "OAuth2" not in plain and "vends" not in plain and "Metastore" not in plain
