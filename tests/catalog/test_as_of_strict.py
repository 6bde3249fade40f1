"""`as_of` on a real server is read strictly: ASCII digits naming a real date and time, or 422
(an impossible or foreign instant must never read some other version)."""

from __future__ import annotations

import httpx
import pyarrow as pa
import pytest

from catalog.settings import Settings
from tests.catalog.servekit import build_warehouse, live_server

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    return build_warehouse(tmp_path_factory.mktemp("as_of") / "wh")


@pytest.fixture(scope="module")
def http(warehouse):
    with live_server(Settings(warehouse=str(warehouse.root), catalog_db=":memory:")) as live, \
            httpx.Client(base_url=live.url, timeout=60) as client:
        yield client


def ids(response) -> list[str]:
    assert response.status_code == 200, response.text
    return sorted(pa.ipc.open_stream(response.content).read_all().column("id").to_pylist())


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
