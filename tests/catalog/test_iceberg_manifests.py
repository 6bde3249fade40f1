"""What published manifests say of each file, as a native Iceberg writer says it: column sizes,
split offsets (row group starts), NaN counts, sort order, entry statuses against the parent
snapshot, and snapshot summaries; every PyIceberg `inspect` table reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.io.pyarrow import (
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
)
from pyiceberg.table import StaticTable

import shim
from catalog.iceberg.metrics import NAN_COUNTS_KEY, file_metrics, single_value
from catalog.iceberg.publish import IcebergPublisher
from catalog.service import Catalog
from catalog.settings import Settings
from tests.catalog.servekit import build_warehouse
from tests.conftest import shared_table_names
from tests.tablekit import TinyTable

INSPECTIONS = ("entries", "files", "data_files", "delete_files", "all_files", "all_data_files", "all_delete_files",
               "manifests", "all_manifests", "snapshots", "history", "partitions", "refs", "metadata_log_entries")


@pytest.fixture
def trips(tmp_path):
    build_warehouse(tmp_path / "wh")
    catalog = Catalog(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:"))
    yield IcebergPublisher(catalog, str(tmp_path / "ice"))
    catalog.close()


@pytest.mark.parametrize("view", ["snapshot", "read_optimized"])
def test_every_pyiceberg_inspection_reads_both_views(trips, view):
    table = StaticTable.from_metadata(trips.publish("trips", view).metadata_location)
    counts = {name: getattr(table.inspect, name)().num_rows for name in INSPECTIONS}
    files = table.inspect.files().to_pylist()
    assert counts["files"] == counts["data_files"] + counts["delete_files"] == len(files) == 3
    assert counts["snapshots"] == counts["history"] == len(table.metadata.snapshots) == 9
    assert counts["refs"] == 1 and counts["partitions"] == 3  # la, ny, sf
    amount = table.schema().find_field("amount").field_id
    for row in files:
        assert row["column_sizes"] and row["split_offsets"] and row["split_offsets"][0] == 4  # after "PAR1"
        assert row["sort_order_id"] == (0 if row["content"] == 0 else None)
        written = "/ice/trips/data/" in row["file_path"]  # the publisher counted NaNs while writing it
        assert (dict(row["nan_value_counts"] or []).get(amount) == 0) is (written and row["content"] == 0), row["file_path"]
        assert (amount in dict(row["lower_bounds"] or [])) is (written and row["content"] == 0)
    for snapshot in table.inspect.snapshots().to_pylist():  # totals are those of the files each snapshot reads
        summary = dict(snapshot["summary"])
        scanned = list(table.scan(snapshot_id=snapshot["snapshot_id"]).plan_files())
        assert int(summary["total-data-files"]) == len(scanned)
        assert int(summary["total-records"]) == sum(task.file.record_count for task in scanned)
        assert int(summary["total-delete-files"]) == len({d.file_path for t in scanned for d in t.delete_files})


def test_sizes_counts_and_offsets_equal_pyiceberg_s_own_for_the_same_files(trips):
    """PyIceberg's writer computes a Parquet file's manifest metrics from its footer too: for the
    files whose columns carry the table's names, ours are the same."""
    published = trips.publish("trips", "snapshot")
    table = StaticTable.from_metadata(published.metadata_location)
    schema = table.schema()
    compared = 0
    for entry in table.inspect.entries().to_pylist():
        data_file = entry["data_file"]
        footer = pq.ParquetFile(data_file["file_path"].removeprefix("file://")).metadata
        names = set(footer.schema.to_arrow_schema().names)
        if data_file["content"] or not names <= set(schema.column_names):
            continue
        theirs = data_file_statistics_from_parquet_metadata(footer, compute_statistics_plan(schema, {}),
                                                            parquet_path_to_id_mapping(schema))
        assert dict(data_file["column_sizes"]) == theirs.column_sizes
        assert dict(data_file["value_counts"]) == theirs.value_counts
        assert dict(data_file["null_value_counts"]) == theirs.null_value_counts
        assert data_file["split_offsets"] == theirs.split_offsets
        compared += 1
    assert compared >= 2


def test_entries_keep_the_snapshot_that_added_a_file_and_summaries_count_changes(tmp_path):
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])
    table = TinyTable(tmp_path / "wh" / "m", schema)
    base = table.base([{"id": k, "ts": 5, "v": f"base-{k}"} for k in "abcd"])
    table.log([{"id": "b", "ts": 9, "v": "new-b"}], base_instant=base)
    catalog = Catalog(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:"))
    try:
        published = IcebergPublisher(catalog, str(tmp_path / "ice"), slice_merging="deletes").publish("m", "snapshot")
    finally:
        catalog.close()
    loaded = StaticTable.from_metadata(published.metadata_location)
    first, second = loaded.metadata.snapshots
    entries = loaded.inspect.entries().to_pylist()
    by_status = {(e["status"], e["data_file"]["content"]): e for e in entries}
    assert sorted(by_status) == [(0, 0), (1, 0), (1, 1)]  # base existing; log records and deletes added
    assert by_status[(0, 0)]["snapshot_id"] == first.snapshot_id and by_status[(0, 0)]["sequence_number"] == 1
    assert by_status[(1, 1)]["snapshot_id"] == second.snapshot_id and by_status[(1, 1)]["sequence_number"] == 2
    summaries = [json.loads(Path(published.metadata_location.removeprefix("file://")).read_text())["snapshots"][i][
        "summary"] for i in (0, 1)]
    assert summaries[0]["operation"] == "append" and summaries[0]["added-data-files"] == "1"
    assert summaries[1]["operation"] == "overwrite" and "deleted-data-files" not in summaries[1]
    assert (summaries[1]["added-data-files"], summaries[1]["added-position-deletes"],
            summaries[1]["total-data-files"], summaries[1]["total-records"]) == ("1", "1", "2", "5")
    [manifest_list] = [m for m in loaded.inspect.manifests().to_pylist() if m["content"] == 0]
    assert (manifest_list["added_data_files_count"], manifest_list["existing_data_files_count"]) == (1, 1)


def test_nan_counts_recorded_in_a_footer_give_floating_point_bounds(tmp_path):
    rows = pa.table({"f": [1.5, -2.0, None], "g": [float("nan"), 1.0, 2.0], "h": pa.array([None, None, None],
                                                                                          pa.float32())})
    path = tmp_path / "f.parquet"
    writer = pq.ParquetWriter(path, rows.schema)
    writer.write_table(rows)
    writer.add_key_value_metadata({NAN_COUNTS_KEY: json.dumps({"f": 0, "g": 1})})
    writer.close()
    parquet = pq.ParquetFile(path)
    columns = {name: (number, rows.schema.field(name).type) for number, name in enumerate(rows.column_names, 1)}
    metrics = file_metrics(parquet.metadata, parquet.schema_arrow, columns)
    assert metrics.nan_counts == {1: 0, 2: 1, 3: 0}  # h: nothing but nulls
    assert metrics.lower == {1: single_value(-2.0, "double")} and metrics.upper == {1: single_value(1.5, "double")}
    unrecorded = pq.ParquetFile(tmp_path / "g.parquet") if pq.write_table(rows, tmp_path / "g.parquet") is None \
        else None
    assert file_metrics(unrecorded.metadata, unrecorded.schema_arrow, columns).nan_counts == {3: 0}


@pytest.mark.shared
@pytest.mark.parametrize("zip_name", shared_table_names())
def test_every_pyiceberg_inspection_reads_the_real_tables(shared_tables, zip_name, tmp_path):
    """Tables Apache Hudi wrote (COW and MOR, nested columns, deletes, rollbacks): every
    inspection reads both views, every file has its column sizes (and its split offsets, but for
    base files published from the metadata table's column stats), and the distinct-value counts
    are those of the rows readers see (top-level primitive columns)."""
    catalog = Catalog(Settings(tables=(f"t={shared_tables[zip_name]}",), catalog_db=":memory:"))
    from_stats = "column_stats" in shim.open_table(shared_tables[zip_name]).config.get(
        "hoodie.table.metadata.partitions", "")
    published = (tmp_path / "ice").as_uri()
    try:
        publisher = IcebergPublisher(catalog, str(tmp_path / "ice"))
        for view in ("snapshot", "read_optimized"):
            table = StaticTable.from_metadata(publisher.publish("t", view).metadata_location)
            for name in INSPECTIONS:
                getattr(table.inspect, name)()
            files = table.inspect.files().to_pylist()
            assert files and all(row["column_sizes"] for row in files), view
            # Base files read in place have their metrics from the metadata table's column stats
            # where it has them: no footer is read, so no split offsets (readers split by size)
            assert all(row["split_offsets"] or (from_stats and not row["file_path"].startswith(published))
                       for row in files), view
            rows = table.scan().to_arrow()
            [statistics] = table.metadata.statistics
            for blob in statistics.blob_metadata:
                column = table.schema().find_column_name(blob.fields[0])
                exact = len(rows.column(column).drop_null().unique())
                assert abs(int(blob.properties["ndv"]) - exact) <= 0.05 * exact, (view, column)
    finally:
        catalog.close()
