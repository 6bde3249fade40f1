"""`engines.http.ShimClient` against a real server: scans equal in-process scans on evolved tables."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import shim
from catalog.settings import Settings
from engines.http import RemoteError, ShimClient
from shim.errors import InvalidArgumentError
from shim.filters import parse_filter
from tests.catalog.servekit import EVENTS_ROWS, TRIPS_RO_ROWS, TRIPS_ROWS, build_warehouse, live_server
from tests.tablekit import TinyTable

TOKEN = "client-token"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    return build_warehouse(tmp_path_factory.mktemp("client") / "wh")


@pytest.fixture(scope="module")
def server(warehouse):
    settings = Settings(warehouse=str(warehouse.root), catalog_db=":memory:", token=TOKEN, batch_rows=2)
    with live_server(settings) as live:
        yield live


@pytest.fixture
def client(server):
    with ShimClient(server.url, token=TOKEN) as c:
        yield c


def by(rows, key):
    return sorted(rows, key=lambda r: r[key])


def test_tables_and_schema_carry_ids(client, warehouse):
    assert client.tables() == ["events", "trips"]
    schema = client.schema("trips")
    assert schema.equals(shim.open_table(warehouse.trips.path).schema(), check_metadata=True)
    assert client.schema("trips", as_of=warehouse.trips_first).names == ["id", "ts", "city", "fare", "note"]


SCANS = [
    {},
    {"mode": "read_optimized"},
    {"columns": ["note", "id"]},
    {"filter": "amount > 2"},
    {"filter": [("city", "IN", ["sf", "la"]), ("tip", "IS NULL", None)]},
    {"filter": pc.field("amount") >= 3.0},
    {"filter": (pc.field("city") == "ny") | pc.field("note").is_null(), "columns": ["id", "city"]},
    {"mode": "read_optimized", "filter": "note IS NULL"},
]


@pytest.mark.parametrize("request_", SCANS, ids=[str(i) for i in range(len(SCANS))])
def test_scan_equals_in_process_scan(client, warehouse, request_):
    expected = shim.open_table(warehouse.trips.path).read(**request_)
    got = client.scan("trips", **request_)
    assert got.schema.equals(expected.schema, check_metadata=False)
    assert by(got.to_pylist(), "id") == by(expected.to_pylist(), "id")


@pytest.mark.parametrize("mode", ["snapshot", "read_optimized"])
def test_scan_with_dictionary_partitions(client, warehouse, mode):
    got = client.scan("trips", mode=mode, dictionary_partitions=True)
    assert got.schema.field("city").type == pa.dictionary(pa.int32(), pa.string())
    assert got.schema.field("amount").type == pa.float64()
    expected = shim.open_table(warehouse.trips.path).read(mode=mode)
    assert by(got.cast(expected.schema).to_pylist(), "id") == by(expected.to_pylist(), "id")


@pytest.mark.parametrize("compression", ["lz4", "zstd"])
def test_compressed_scans_equal_in_process_scans(server, warehouse, compression):
    with ShimClient(server.url, token=TOKEN, compression=compression) as compressed:
        for request_ in SCANS:
            expected = shim.open_table(warehouse.trips.path).read(**request_)
            got = compressed.scan("trips", **request_)
            assert got.schema.equals(expected.schema, check_metadata=False)
            assert by(got.to_pylist(), "id") == by(expected.to_pylist(), "id"), request_
        got = compressed.scan("trips", dictionary_partitions=True, columns=["id", "city"])
        assert got.schema.field("city").type == pa.dictionary(pa.int32(), pa.string())
        assert by(got.cast(pa.schema([("id", pa.string()), ("city", pa.string())])).to_pylist(), "id") == [
            {"id": r["id"], "city": r["city"]} for r in TRIPS_ROWS]


def test_compression_cuts_the_bytes_on_the_wire(tmp_path):
    table = TinyTable(tmp_path / "wh" / "t", pa.schema([("id", pa.string()), ("ts", pa.int64()),
                                                        ("note", pa.string())]), mor=False)
    table.base([{"id": f"k{i:05d}", "ts": 1, "note": "the same words again " * 4} for i in range(5000)])
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live, \
            httpx.Client(base_url=live.url, timeout=30) as http:
        plain = http.post("/v1/tables/t/scan", json={})
        packed = {c: http.post("/v1/tables/t/scan", json={"compression": c}) for c in ("lz4", "zstd")}
        refused = http.post("/v1/tables/t/scan", json={"compression": "gzip"})
    expected = pa.ipc.open_stream(plain.content).read_all()
    assert expected.num_rows == 5000
    for codec, response in packed.items():
        assert len(response.content) * 4 < len(plain.content), codec
        assert pa.ipc.open_stream(response.content).read_all().equals(expected), codec
    assert refused.status_code == 422 and "compression" in refused.text
    with pytest.raises(InvalidArgumentError, match="compression must be lz4, zstd or None"):
        ShimClient(live.url, compression="gzip")


def test_repeated_strings_travel_as_dictionaries_and_arrive_with_their_own_types(tmp_path):
    table = TinyTable(tmp_path / "wh" / "t", pa.schema([("id", pa.string()), ("ts", pa.int64()),
                                                        ("city", pa.string())]), mor=False)
    table.base([{"id": f"k{i:05d}", "ts": 1, "city": f"a-city-with-a-long-name-{i % 5}"} for i in range(5000)])
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live, \
            httpx.Client(base_url=live.url, timeout=30) as http:
        plain = http.post("/v1/tables/t/scan", json={})
        encoded = http.post("/v1/tables/t/scan", json={"dictionary_strings": True})
        with ShimClient(live.url) as client, ShimClient(live.url, wire_dictionaries=False) as direct:
            decoded, as_sent = client.scan("t"), direct.scan("t")
            kept = client.scan("t", dictionary_strings=True)
    expected = pa.ipc.open_stream(plain.content).read_all()
    got = pa.ipc.open_stream(encoded.content).read_all()
    assert expected.schema.field("city").type == pa.string()
    assert got.schema.field("city").type == pa.dictionary(pa.int32(), pa.string())
    assert got.schema.field("id").type == pa.string()
    assert got.cast(expected.schema).equals(expected)
    assert len(encoded.content) * 10 < len(plain.content) * 7
    assert decoded.equals(as_sent) and decoded.schema.equals(expected.schema) and decoded.equals(expected)
    assert kept.schema.equals(got.schema) and kept.equals(got)


def test_scan_with_dictionary_partitions_past_the_row_limit_still_raises(warehouse):
    settings = Settings(warehouse=str(warehouse.root), catalog_db=":memory:", batch_rows=1, max_scan_rows=2)
    with live_server(settings) as live, ShimClient(live.url) as client:
        reader = client.scan_batches("trips", columns=["id", "city"], dictionary_partitions=True)
        assert reader.read_next_batch().column(1).type == pa.dictionary(pa.int32(), pa.string())
        with pytest.raises(RemoteError, match="more than the server's limit of 2 rows"):
            reader.read_all()


def test_scan_evolved_rows_are_correct(client):
    assert by(client.scan("trips").to_pylist(), "id") == TRIPS_ROWS
    assert by(client.scan("trips", mode="read_optimized").to_pylist(), "id") == TRIPS_RO_ROWS
    assert by(client.scan("events").to_pylist(), "key") == EVENTS_ROWS


def test_scan_as_of_reads_the_old_schema_and_rows(client, warehouse):
    rows = client.scan("trips", as_of=warehouse.trips_first).to_pylist()
    assert by(rows, "id") == [{"id": "a", "ts": 1, "city": "sf", "fare": 5.0, "note": "x"},
                              {"id": "c", "ts": 1, "city": "sf", "fare": 1.0, "note": "y"}]


def test_scan_batches_streams_batch_by_batch(client):
    reader = client.scan_batches("trips", columns=["id"], filter="city != 'la'")
    assert isinstance(reader, pa.RecordBatchReader)
    sizes = [batch.num_rows for batch in reader]
    assert sum(sizes) == 3 and max(sizes) <= 2  # the server's batch_rows is 2


def test_scan_over_the_row_limit_raises_mid_stream(warehouse):
    settings = Settings(warehouse=str(warehouse.root), catalog_db=":memory:", batch_rows=2, max_scan_rows=3)
    with live_server(settings) as live, ShimClient(live.url) as client:
        reader = client.scan_batches("trips")  # 4 rows, the server allows 3
        assert reader.read_next_batch().num_rows >= 1  # rows before the limit arrive
        with pytest.raises(RemoteError, match="more than the server's limit of 3 rows"):
            reader.read_all()
        assert client.scan("trips", limit=3).num_rows == 3


def test_scan_limit_is_honoured(client):
    assert client.scan("trips", limit=1).num_rows == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"name": "nope"}, shim.TableNotFoundError, "no table named 'nope'"),
        ({"columns": ["fare"]}, shim.ColumnNotFoundError, "unknown column 'fare'"),
        ({"filter": "amount >"}, shim.InvalidFilterError, "invalid filter"),
        ({"as_of": "19990101000000000"}, shim.InstantNotFoundError, "19990101000000000"),
        ({"mode": "fast"}, RemoteError, "mode"),
    ],
)
def test_errors_come_back_as_shim_exceptions(client, kwargs, error, match):
    name = kwargs.pop("name", "trips")
    with pytest.raises(error, match=match):
        client.scan(name, **kwargs)


def test_wrong_token_is_refused(server):
    with ShimClient(server.url, token="wrong") as bad, pytest.raises(RemoteError) as info:
        bad.tables()
    assert info.value.status == 401


def test_files_and_timeline(client, warehouse):
    files = client.files("trips", view="read_optimized")
    assert sorted(f["partition_path"] for f in files["files"]) == ["city=la", "city=ny", "city=sf"]
    assert [i["requested_time"] for i in client.timeline("trips")] == warehouse.trips.instants


def test_filter_values_that_are_not_json_are_sent_as_text(client):
    rows = client.scan("trips", columns=["id"], filter=[("amount", ">", Decimal("7.5")), parse_filter("id != 'x'")])
    assert by(rows.to_pylist(), "id") == [{"id": "a"}, {"id": "b"}]
