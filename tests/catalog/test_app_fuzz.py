"""Fuzzing the OpenAPI schema with schemathesis: no request, however malformed, gets a 5xx, and every
response matches the documented status codes, content types and shapes."""

from __future__ import annotations

import pyarrow as pa
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from catalog.app import create_app
from catalog.settings import Settings
from tests.catalog.servekit import build_warehouse, live_server
from tests.tablekit import TinyTable

TOKEN = "fuzz-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz") / "wh"
    build_warehouse(root)
    outside = TinyTable(root.parent / "outside", pa.schema([("id", pa.string()), ("ts", pa.int64())]))
    outside.base([{"id": "secret", "ts": 1}])
    with live_server(Settings(warehouse=str(root), catalog_db=":memory:", token=TOKEN, max_scan_rows=100)) as live:
        yield live


#: Real names for path parameters: generated ones rarely hit a table, so each request also goes to a
#: real (evolved) one, and on the Iceberg endpoints to both its views in the real namespace.
REAL = {"name": ("trips",), "table": ("trips", "trips_ro"), "namespace": ("default",)}


def with_real_names(generated: dict[str, object]) -> list[dict[str, object]]:
    """The generated path parameters, then the same with each real name in turn."""
    keys = [key for key in REAL if key in generated]
    if not keys:
        return [generated]
    width = max(len(REAL[key]) for key in keys)
    return [generated] + [{**generated, **{key: REAL[key][i % len(REAL[key])] for key in keys}}
                          for i in range(width)]


# The schema the server publishes; building the app opens nothing (that happens when it starts).
schema = schemathesis.openapi.from_dict(create_app(Settings()).openapi())


@schema.parametrize()
@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])
def test_api_fuzzed_requests_never_fail_on_the_server(case, server):
    for parameters in with_real_names(case.path_parameters or {}):
        case.path_parameters = parameters
        # A schema-valid body can still name an unknown column or hold a malformed filter: that is
        # the documented 422, so the "schema-valid request accepted" check does not apply.
        response = case.call_and_validate(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"},
                                          excluded_checks=[positive_data_acceptance])
        assert response.status_code < 500
        assert b"secret" not in response.content
