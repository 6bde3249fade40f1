"""The HTTP API on a real uvicorn server: endpoints, error codes, token, names never reaching paths."""

from __future__ import annotations

import base64
import os

import httpx
import pyarrow as pa
import pytest

import shim
from catalog.settings import Settings
from tests.catalog.servekit import TRIPS_ROWS, build_warehouse, live_server
from tests.tablekit import EvolvingTable, TinyTable, forced_retype

ARROW = "application/vnd.apache.arrow.stream"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    root = tmp_path_factory.mktemp("api") / "wh"
    built = build_warehouse(root)
    broken = EvolvingTable(root / "broken", pa.schema([("id", pa.string()), ("ts", pa.int64()), ("f", pa.string())]))
    broken.base([{"id": "a", "ts": 1, "f": "x"}])
    broken.alter(forced_retype("f", "int"))  # string -> int: a change Hudi forbids
    boot = TinyTable(root / "boot", pa.schema([("id", pa.string()), ("ts", pa.int64())]))
    boot.base([{"id": "a", "ts": 1}])
    with open(root / "boot" / ".hoodie" / "hoodie.properties", "a") as props:
        props.write("hoodie.bootstrap.base.path=/somewhere\n")
    outside = TinyTable(root.parent / "outside", pa.schema([("id", pa.string()), ("ts", pa.int64())]))
    outside.base([{"id": "secret", "ts": 1}])
    return built


@pytest.fixture(scope="module")
def server(warehouse):
    with live_server(Settings(warehouse=str(warehouse.root), catalog_db=":memory:", max_scan_rows=1000)) as live:
        yield live


@pytest.fixture
def http(server):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def arrow_rows(response, key):
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == ARROW
    return sorted(pa.ipc.open_stream(response.content).read_all().to_pylist(), key=lambda r: r[key])


def test_list_tables_names_registered_tables_and_reports_unreadable_ones(http):
    tables = {t["name"]: t for t in http.get("/v1/tables").json()["tables"]}
    assert sorted(tables) == ["boot", "broken", "events", "trips"]
    assert tables["trips"]["table_type"] == "MERGE_ON_READ"
    assert tables["events"]["table_type"] == "COPY_ON_WRITE"
    assert tables["boot"]["error"]["type"] == "UnsupportedFeatureError"
    assert tables["boot"]["error"]["feature"] == "bootstrap"


def test_get_table_gives_schema_with_ids_properties_and_latest_instant(http, warehouse):
    body = http.get("/v1/tables/trips").json()
    assert [(f["name"], f["type"]) for f in body["schema"]] == [
        ("id", "string"), ("ts", "int64"), ("city", "string"), ("amount", "double"), ("tip", "double"),
        ("note", "string")]
    ids = {f["name"]: f["id"] for f in body["schema"]}
    expected = shim.open_table(warehouse.trips.path).schema()
    assert ids == {f.name: int(f.metadata[b"PARQUET:field_id"]) for f in expected}
    assert body["latest_instant"]["requested_time"] == warehouse.trips.instants[-1]
    assert body["latest_instant"]["state"] == "completed"
    assert body["properties"]["hoodie.table.type"] == "MERGE_ON_READ"
    assert body["partition_fields"] == ["city"]
    schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(body["arrow_schema"])))
    assert schema.equals(expected, check_metadata=True)


def test_get_table_as_of_gives_the_old_schema(http, warehouse):
    body = http.get("/v1/tables/trips", params={"as_of": warehouse.trips_first}).json()
    assert [f["name"] for f in body["schema"]] == ["id", "ts", "city", "fare", "note"]
    assert body["latest_instant"]["requested_time"] == warehouse.trips_first


def test_get_timeline_lists_instants_oldest_first(http, warehouse):
    instants = http.get("/v1/tables/trips/timeline").json()["instants"]
    assert [i["requested_time"] for i in instants] == warehouse.trips.instants
    assert {i["state"] for i in instants} == {"completed"}
    assert [i["action"] for i in instants][:2] == ["deltacommit", "deltacommit"]


def test_get_files_publishes_name_mapping_per_file(http):
    body = http.get("/v1/tables/trips/files", params={"view": "snapshot"}).json()
    assert body["view"] == "snapshot"
    assert [f["name"] for f in body["schema"]] == ["id", "ts", "city", "amount", "tip", "note"]
    sf_base = next(f for f in body["files"] if f["partition_path"] == "city=sf" and f["kind"] == "base_file")
    amount = next(c for c in sf_base["columns"] if c["table_column"] == "amount")
    assert (amount["file_column"], amount["action"]) == ("fare", "rename")
    note = next(c for c in sf_base["columns"] if c["table_column"] == "note")
    assert (note["file_column"], note["action"]) == (None, "null")
    assert not sf_base["path"].startswith("/")
    ro = http.get("/v1/tables/trips/files", params={"view": "read_optimized"}).json()
    assert {f["kind"] for f in ro["files"]} == {"base_file"}


def test_scan_streams_the_same_rows_as_an_in_process_scan(http, warehouse):
    response = http.post("/v1/tables/trips/scan", json={})
    assert arrow_rows(response, "id") == TRIPS_ROWS
    table = shim.open_table(warehouse.trips.path)
    for body in ({"mode": "read_optimized", "columns": ["id", "amount"]},
                 {"filter": "amount > 2 AND city IN ('sf', 'ny')", "columns": ["amount", "id"]},
                 {"filter": [["city", "=", "sf"], ["amount", ">=", 1]]},
                 {"as_of": warehouse.trips_first}):
        expected = table.read(mode=body.get("mode", "snapshot"), columns=body.get("columns"),
                              filter=body.get("filter"), as_of=body.get("as_of"))
        got = arrow_rows(http.post("/v1/tables/trips/scan", json=body), "id")
        assert got == sorted(expected.to_pylist(), key=lambda r: r["id"])


def test_scan_limit_returns_that_many_rows(http):
    response = http.post("/v1/tables/trips/scan", json={"limit": 2, "columns": ["id"]})
    assert len(arrow_rows(response, "id")) == 2


@pytest.mark.parametrize(
    ("name", "body", "status", "kind"),
    [
        ("nope", {}, 404, "TableNotFoundError"),
        ("trips", {"columns": ["fare"]}, 422, "ColumnNotFoundError"),  # renamed away
        ("trips", {"filter": "amount >"}, 422, "InvalidFilterError"),
        ("trips", {"filter": "nope = 1"}, 422, "ColumnNotFoundError"),
        ("trips", {"filter": [["amount", "~", 1]]}, 422, "InvalidFilterError"),
        ("trips", {"filter": "amount = 'abc'"}, 422, "InvalidFilterError"),
        ("trips", {"filter": "ts = " + "9" * 5000}, 422, "InvalidFilterError"),  # past Python's int digit limit
        ("trips", {"filter": "amount IN (1, -" + "9" * 5000 + ".5)"}, 422, "InvalidFilterError"),
        ("trips", {"filter": [["ts", ">", 10**401]]}, 422, "InvalidFilterError"),
        ("trips", {"filter_substrait": "not base64!"}, 422, "InvalidFilterError"),
        ("trips", {"filter_substrait": base64.b64encode(b"\x1a\x03abc").decode()}, 422, "InvalidFilterError"),
        ("trips", {"as_of": "19990101000000000"}, 422, "InstantNotFoundError"),
        ("trips", {"as_of": "yesterday"}, 422, "InstantNotFoundError"),
        ("trips", {"mode": "fast"}, 422, "RequestValidationError"),
        ("trips", {"colums": ["id"]}, 422, "RequestValidationError"),
        ("trips", {"limit": -1}, 422, "RequestValidationError"),
        ("trips", {"limit": 5000}, 422, "InvalidArgumentError"),  # over the server's max_scan_rows
        ("boot", {}, 409, "UnsupportedFeatureError"),
        ("broken", {}, 409, "SchemaEvolutionError"),
    ],
)
def test_scan_errors_are_json_with_fitting_status(http, name, body, status, kind):
    response = http.post(f"/v1/tables/{name}/scan", json=body)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["type"] == kind


def test_a_json_number_past_pythons_digit_limit_is_a_400_in_json(http):
    body = b'{"filter": [["ts", "=", ' + b"9" * 5000 + b"]]}"
    response = http.post("/v1/tables/trips/scan", content=body, headers={"content-type": "application/json"})
    assert (response.status_code, response.headers["content-type"]) == (400, "application/json")
    assert response.json()["error"]["message"] == "There was an error parsing the body"


def test_error_messages_do_not_show_server_paths(http, warehouse):
    message = http.post("/v1/tables/broken/scan", json={}).json()["error"]["message"]
    assert str(warehouse.root) not in message
    assert "f" in message and "int" in message


def test_openapi_documents_every_endpoint(http):
    spec = http.get("/openapi.json").json()
    assert set(spec["paths"]) >= {"/v1/tables", "/v1/tables/{name}", "/v1/tables/{name}/timeline",
                                  "/v1/tables/{name}/files", "/v1/tables/{name}/scan"}
    scan = spec["paths"]["/v1/tables/{name}/scan"]["post"]
    assert ARROW in scan["responses"]["200"]["content"]
    assert {"404", "409", "422"} <= set(scan["responses"])


@pytest.mark.parametrize(
    "path",
    ["/v1/tables/outside", "/v1/tables/..%2Foutside", "/v1/tables/%2e%2e%2foutside/scan",
     "/v1/tables/trips%2F..%2F..%2Foutside/scan", "/v1/tables/%2Fetc%2Fpasswd", "/v1/tables/..",
     "/v1/tables/.hudi-shim/files", "/v1/tables/trips/../../outside/files"],
)
def test_table_names_never_reach_files_outside_registered_tables(http, server, warehouse, monkeypatch, path):
    opened = []
    original = shim.open_table
    monkeypatch.setattr(shim, "open_table", lambda p: opened.append(os.fspath(p)) or original(p))
    response = http.post(path, json={}) if path.endswith("/scan") else http.get(path)
    assert response.status_code in (404, 405), response.text
    assert b"secret" not in response.content
    registered = {e.path for e in server.catalog.entries()}
    assert set(opened) <= registered


def test_token_is_enforced_on_every_v1_endpoint(warehouse):
    settings = Settings(warehouse=str(warehouse.root), catalog_db=":memory:", token="t0ken")
    with live_server(settings) as live, httpx.Client(base_url=live.url) as client:
        for method, path in [("GET", "/v1/tables"), ("GET", "/v1/tables/trips"), ("GET", "/v1/tables/trips/timeline"),
                             ("GET", "/v1/tables/trips/files"), ("POST", "/v1/tables/trips/scan")]:
            missing = client.request(method, path, json={} if method == "POST" else None)
            wrong = client.request(method, path, json={} if method == "POST" else None,
                                   headers={"Authorization": "Bearer nope"})
            right = client.request(method, path, json={} if method == "POST" else None,
                                   headers={"Authorization": "Bearer t0ken"})
            assert (missing.status_code, wrong.status_code, right.status_code) == (401, 401, 200), path
            assert missing.headers["www-authenticate"] == "Bearer"
            assert missing.json()["error"]["type"] == "UnauthorizedError"
        # unknown names are not revealed without the token either
        assert client.get("/v1/tables/nope").status_code == 401
        assert client.get("/health").status_code == 200


def test_new_commit_is_visible_without_restart(tmp_path):
    table = TinyTable(tmp_path / "wh" / "live", pa.schema([("id", pa.string()), ("ts", pa.int64())]), mor=False)
    table.base([{"id": "a", "ts": 1}])
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live, \
            httpx.Client(base_url=live.url) as client:
        assert arrow_rows(client.post("/v1/tables/live/scan", json={}), "id") == [{"id": "a", "ts": 1}]
        table.base([{"id": "b", "ts": 1}], file_id="fg2-0")
        rows = arrow_rows(client.post("/v1/tables/live/scan", json={}), "id")
        assert rows == [{"id": "a", "ts": 1}, {"id": "b", "ts": 1}]
        assert client.get("/v1/tables/live").json()["latest_instant"]["requested_time"] == table.instants[-1]


def test_default_registry_lives_in_the_warehouse(tmp_path):
    table = TinyTable(tmp_path / "wh" / "t", pa.schema([("id", pa.string()), ("ts", pa.int64())]))
    table.base([{"id": "a", "ts": 1}])
    with live_server(Settings(warehouse=str(tmp_path / "wh"))) as live:
        assert httpx.get(live.url + "/v1/tables").json()["tables"][0]["name"] == "t"
    assert (tmp_path / "wh" / ".hudi-shim" / "catalog.sqlite").is_file()


def test_oversized_request_bodies_are_refused(http):
    big = b'{"filter": "' + b"x" * (9 * 1024**2) + b'"}'
    announced = http.post("/v1/tables/trips/scan", content=big, headers={"content-type": "application/json"})
    assert announced.status_code == 413
    assert "larger than 8388608 bytes" in announced.json()["error"]["message"]
    streamed = http.post("/v1/tables/trips/scan", content=iter([big[:1024], big[1024:]]),
                         headers={"content-type": "application/json"})
    assert streamed.status_code == 413


def test_misspelt_query_parameter_is_refused(http, warehouse):
    response = http.get("/v1/tables/trips", params={"asof": warehouse.trips_first})
    assert response.status_code == 422
    assert response.json()["error"]["message"] == "unknown query parameter 'asof' (accepted: as_of)"
