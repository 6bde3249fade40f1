"""The catalog keeps a real Hive Metastore (4.0.1 from Maven Central) up to date: Iceberg views
with `table_type=ICEBERG` and `metadata_location`, Hudi's own tables as Hive sync registers them
(with their partitions), on `POST /v1/publish` and on the commit a writer announces through
Hudi's HTTP commit callback, before the write returns."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pyarrow as pa
import pytest

from catalog.hive.metastore import (
    FieldSchema,
    MetastoreClient,
    MetastoreError,
    NoSuchObjectError,
    Partition,
    SerDeInfo,
    StorageDescriptor,
    Table,
)
from catalog.server import running
from catalog.settings import Settings
from shim.storage import from_uri, resolve_table_path
from tests.writekit import write

TOKEN = "hms-test-token"
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.datasource.write.partitionpath.field": "region",
       "hoodie.datasource.write.hive_style_partitioning": "true"}


def _post(url: str, path: str, body: dict | None = None, token: str = TOKEN) -> dict:
    request = urllib.request.Request(f"{url}{path}", method="POST", data=json.dumps(body or {}).encode(),
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:
        answer: dict = json.load(response)
    return answer


def _callback(url: str) -> dict[str, str]:
    return {"hoodie.write.commit.callback.on": "true", "hoodie.write.commit.callback.http.url": f"{url}/v1/commits",
            "hoodie.write.commit.callback.http.custom.headers": f"Authorization:Bearer {TOKEN}"}


def _instant_of(entry: Table) -> str:
    metadata = json.loads(Path(from_uri(entry.parameters["metadata_location"])).read_text())
    return str(metadata["properties"]["hudi-shim.instant"])


@pytest.fixture
def served(tmp_path, hive_metastore):
    """A warehouse with a merge-on-read table partitioned by region, served with the metastore;
    the metastore's entries are dropped afterwards (the metastore is shared by the session)."""
    warehouse = tmp_path / "warehouse"
    first = write(warehouse / "rides", [{"id": "a", "ts": 1, "region": "eu", "fare": 1.0},
                                        {"id": "b", "ts": 1, "region": "us", "fare": 2.0}], **MOR)
    settings = Settings(warehouse=str(warehouse), catalog_db=":memory:", token=TOKEN,
                        iceberg_dir=str(tmp_path / "iceberg"), hive_metastore=hive_metastore.uri,
                        hive_database="hms_views", hive_sync_database="hms_hudi", hive_metastore_seconds=3600.0)
    with running(settings) as live:
        yield live.url, warehouse, first
        shutil.rmtree(warehouse / "rides")
        _post(live.url, "/v1/publish")  # the table gone: its entries are dropped


def test_metastore_client_round_trips_a_table_its_partitions_and_errors(hive_metastore):
    with MetastoreClient.connect(hive_metastore.uri) as hms:
        with pytest.raises(NoSuchObjectError, match="NoSuchObjectException"):
            hms.get_table("default", "no_such_table")
        sd = StorageDescriptor(cols=[FieldSchema("id", "string"), FieldSchema("n", "int")],
                               location="file:///tmp/hudi-shim-client-test", inputFormat="x.In", outputFormat="x.Out",
                               serdeInfo=SerDeInfo(None, "x.Serde", {"k": "v"}))
        hms.create_table(Table("client_test", "default", owner="me", sd=sd, parameters={"EXTERNAL": "TRUE"},
                               partitionKeys=[FieldSchema("p", "string")]))
        try:
            got = hms.get_table("default", "client_test")
            assert [(c.name, c.type) for c in got.sd.cols] == [("id", "string"), ("n", "int")]
            assert got.sd.serdeInfo.parameters == {"k": "v"} and got.parameters["EXTERNAL"] == "TRUE"
            with pytest.raises(MetastoreError, match="AlreadyExistsException"):
                hms.create_table(got)
            got.sd.cols.append(FieldSchema("added", "bigint"))
            hms.alter_table("default", "client_test", got)
            assert hms.get_table("default", "client_test").sd.cols[-1].name == "added"
            hms.add_partitions([Partition(["a/b"], "default", "client_test", sd=sd)])
            assert hms.get_partition_names("default", "client_test") == ["p=a%2Fb"]
            assert hms.drop_partition_by_name("default", "client_test", "p=a%2Fb")
        finally:
            hms.drop_table("default", "client_test")
    with pytest.raises(MetastoreError, match="cannot reach the Hive Metastore at thrift://127.0.0.1:1"):
        MetastoreClient.open("thrift://127.0.0.1:1")


def test_publish_registers_iceberg_views_and_hudi_tables_as_hive_sync_does(served, hive_metastore):
    url, warehouse, first = served
    report = _post(url, "/v1/publish")
    assert not report["failed"], report
    hive = report["hive_metastore"]  # written now, or by the server's first pass at its start
    assert set(hive["written"] + hive["unchanged"]) == {"hms_views.rides", "hms_views.rides_ro", "hms_hudi.rides_ro",
                                                        "hms_hudi.rides_rt"}
    with MetastoreClient.connect(hive_metastore.uri) as hms:
        for name in ("rides", "rides_ro"):
            entry = hms.get_table("hms_views", name)
            assert entry.parameters["table_type"] == "ICEBERG" and entry.parameters["hudi-shim.table"] == "rides"
            assert _instant_of(entry) == first
            metadata = json.loads(Path(from_uri(entry.parameters["metadata_location"])).read_text())
            assert metadata["properties"]["gc.enabled"] == "false"  # a reader's DROP TABLE keeps Hudi's files
            assert from_uri(metadata["location"]).startswith(str(warehouse.parent / "iceberg"))
            assert [(c.name, c.type) for c in entry.sd.cols] == [("id", "string"), ("ts", "bigint"),
                                                                 ("region", "string"), ("fare", "double")]
        for name, input_format in (("rides_ro", "HoodieParquetInputFormat"),
                                   ("rides_rt", "realtime.HoodieParquetRealtimeInputFormat")):
            entry = hms.get_table("hms_hudi", name)
            assert entry.sd.inputFormat == f"org.apache.hudi.hadoop.{input_format}"
            assert [c.name for c in entry.sd.cols] == ["_hoodie_commit_time", "_hoodie_commit_seqno",
                                                        "_hoodie_record_key", "_hoodie_partition_path",
                                                        "_hoodie_file_name", "id", "ts", "fare"]
            assert [(c.name, c.type) for c in entry.partitionKeys] == [("region", "string")]
            assert resolve_table_path(entry.sd.location) == str(warehouse / "rides")
            assert sorted(hms.get_partition_names("hms_hudi", name)) == ["region=eu", "region=us"]
            assert {resolve_table_path(p.sd.location) for p in hms.get_partitions("hms_hudi", name)} == {
                str(warehouse / "rides" / "region=eu"), str(warehouse / "rides" / "region=us")}
    again = _post(url, "/v1/publish")
    assert again["hive_metastore"]["written"] == [] and len(again["hive_metastore"]["unchanged"]) == 4


def test_a_commit_announced_by_hudis_callback_is_in_the_metastore_when_the_write_returns(served, hive_metastore):
    url, warehouse, first = served
    _post(url, "/v1/publish")
    with MetastoreClient.connect(hive_metastore.uri) as hms:
        before = hms.get_table("hms_views", "rides").parameters["metadata_location"]
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("fare", pa.float64()),
                        ("tip", pa.float64())])
    second = write(warehouse / "rides", [{"id": "c", "ts": 2, "region": "apac", "fare": 3.0, "tip": 0.5}],
                   schema=schema, **MOR, **_callback(url))
    with MetastoreClient.connect(hive_metastore.uri) as hms:  # no publish, no timer: the callback did it
        view = hms.get_table("hms_views", "rides")
        assert _instant_of(view) == second != first
        assert view.parameters["previous_metadata_location"] == before
        assert view.sd.cols[-1] == FieldSchema("tip", "double")
        realtime = hms.get_table("hms_hudi", "rides_rt")
        assert realtime.parameters["last_commit_time_sync"] == second and realtime.sd.cols[-1].name == "tip"
        assert sorted(hms.get_partition_names("hms_hudi", "rides_rt")) == ["region=apac", "region=eu", "region=us"]


def test_the_commit_callback_needs_the_token_and_a_registered_table(served):
    url, warehouse, first = served
    message = {"commitTime": first, "tableName": "tiny", "basePath": f"file:{warehouse / 'rides'}"}
    hive = _post(url, "/v1/commits", message)["hive_metastore"]
    assert len(hive["written"] + hive["unchanged"]) == 4
    with pytest.raises(urllib.error.HTTPError) as refused:
        _post(url, "/v1/commits", message, token="wrong")
    assert refused.value.code == 401
    with pytest.raises(urllib.error.HTTPError) as unknown:
        _post(url, "/v1/commits", {**message, "basePath": "/nowhere/rides", "tableName": "nowhere"})
    assert unknown.value.code == 404 and "no registered table is at '/nowhere/rides'" in unknown.value.read().decode()


def test_a_metastore_table_the_shim_did_not_make_is_left_alone(served, hive_metastore):
    url, _warehouse, _first = served
    with MetastoreClient.connect(hive_metastore.uri) as hms:
        _post(url, "/v1/publish")
        hms.drop_table("hms_views", "rides_ro")
        theirs = Table("rides_ro", "hms_views", owner="someone",
                       sd=StorageDescriptor(cols=[FieldSchema("x", "int")], location="file:///tmp/theirs",
                                            inputFormat="x.In", outputFormat="x.Out", serdeInfo=SerDeInfo(None, "x.S", {})))
        hms.create_table(theirs)
        try:
            report = _post(url, "/v1/publish")
            assert "hms_views.rides_ro exists in the Hive Metastore and was not registered by hudi-shim" \
                   in report["failed"]["rides"]
            assert hms.get_table("hms_views", "rides_ro").owner == "someone"
            assert "hms_views.rides" in report["hive_metastore"]["unchanged"]
        finally:
            hms.drop_table("hms_views", "rides_ro")


def test_a_table_no_longer_registered_leaves_the_metastore(served, hive_metastore):
    url, warehouse, _first = served
    _post(url, "/v1/publish")
    shutil.copytree(warehouse / "rides", warehouse / "gone")
    assert "hms_hudi.gone_rt" in _post(url, "/v1/publish")["hive_metastore"]["written"]
    shutil.rmtree(warehouse / "gone")
    report = _post(url, "/v1/publish")
    assert sorted(report["hive_metastore"]["removed"]) == ["hms_hudi.gone_ro", "hms_hudi.gone_rt", "hms_views.gone",
                                                           "hms_views.gone_ro"]
    with MetastoreClient.connect(hive_metastore.uri) as hms:
        assert "gone_rt" not in hms.get_all_tables("hms_hudi")
