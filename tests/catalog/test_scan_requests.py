"""Scan requests at the edges of what the API accepts, on a real server: long filters within the
documented limits work, deeper or longer ones are refused with 422 (never a server error), and
`as_of` is read strictly: ASCII digits naming a real date and time, or 422 (an impossible or
foreign instant must never read some other version)."""

from __future__ import annotations

import httpx
import pyarrow as pa
import pytest

from catalog.settings import Settings
from catalog.stream import MAX_FILTER_CHARS
from shim.filters.parse import MAX_CONDITIONS, MAX_NESTING
from tests.catalog.servekit import build_warehouse, live_server

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    return build_warehouse(tmp_path_factory.mktemp("requests") / "wh")


@pytest.fixture(scope="module")
def http(warehouse):
    with live_server(Settings(warehouse=str(warehouse.root), catalog_db=":memory:")) as live, \
            httpx.Client(base_url=live.url, timeout=60) as client:
        yield client


def ids(response) -> list[str]:
    assert response.status_code == 200, response.text
    return sorted(pa.ipc.open_stream(response.content).read_all().column("id").to_pylist())


def test_filter_text_longer_than_1000_characters_is_accepted(http):
    keys = ", ".join(f"'{i:08d}'" for i in range(150)) + ", 'a', 'd'"
    body = {"filter": f"id IN ({keys})", "columns": ["id"]}
    assert len(body["filter"]) > 1000
    assert ids(http.post("/v1/tables/trips/scan", json=body)) == ["a", "d"]


def test_filter_text_up_to_the_documented_limit_is_accepted(http):
    keys = ", ".join(f"'{i:010d}'" for i in range(MAX_FILTER_CHARS // 14 - 10))
    body = {"filter": f"id IN ({keys}, 'b')", "columns": ["id"]}
    assert MAX_FILTER_CHARS - 1000 < len(body["filter"]) <= MAX_FILTER_CHARS
    assert ids(http.post("/v1/tables/trips/scan", json=body)) == ["b"]


@pytest.mark.parametrize(
    ("filter_", "message"),
    [
        ("id = 'a' OR " * 10 + "id" + " " * MAX_FILTER_CHARS, "at most 1048576 characters"),
        ("NOT " * (MAX_NESTING + 1) + "id = 'a'", "nest deeper than 64"),
        ("(" * (MAX_NESTING + 1) + "id = 'a'" + ")" * (MAX_NESTING + 1), "nest deeper than 64"),
        (" AND ".join(["ts >= 0"] * (MAX_CONDITIONS + 1)), "more than 256 conditions"),
        (" OR ".join(["ts >= 0"] * 3000), "more than 256 conditions"),
        ([["ts", ">=", 0]] * (MAX_CONDITIONS + 1), "at most 256 items"),
    ],
)
def test_filters_past_the_limits_are_refused_with_422(http, filter_, message):
    response = http.post("/v1/tables/trips/scan", json={"filter": filter_})
    assert response.status_code == 422, response.text[:300]
    assert message in response.json()["error"]["message"]
    assert len(response.content) < 5000  # the filter is not echoed back whole


@pytest.mark.parametrize(
    "as_of",
    ["2099-99-99 99:99:99", "2099-01-01 13:54:99", "2099-02-30", "2099-13-01", "20991301000000000",
     "20990101250000000", "2099-01-01 24:00:00", "١٩٩٩-٠١-٠١"],
)
def test_impossible_instants_are_refused_with_422(http, as_of):
    for response in (http.post("/v1/tables/trips/scan", json={"as_of": as_of}),
                     http.get("/v1/tables/trips", params={"as_of": as_of}),
                     http.get("/v1/tables/trips/files", params={"as_of": as_of})):
        assert response.status_code == 422, (as_of, response.text)
        assert response.json()["error"]["type"] == "InstantNotFoundError"


def test_an_instant_in_other_digits_is_refused_not_read_as_the_latest(http, warehouse):
    first = warehouse.trips_first
    foreign = first.translate(ARABIC_INDIC)
    assert foreign.isdigit() and foreign != first
    response = http.post("/v1/tables/trips/scan", json={"as_of": foreign})
    assert response.status_code == 422, response.text
    assert ids(http.post("/v1/tables/trips/scan", json={"as_of": first, "columns": ["id"]})) == ["a", "c"]
