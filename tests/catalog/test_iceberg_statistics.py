"""Distinct-value statistics of published views: Puffin files of theta sketches (as Trino's
ANALYZE writes them) named by the table metadata, kept per file slice so a commit sketches only
the slices it changed, and a switch that leaves them out."""

from __future__ import annotations

from pathlib import Path

import datasketches
import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable
from pyiceberg.table.puffin import PuffinFile

from catalog.iceberg.publish import IcebergPublisher
from catalog.iceberg.puffin import Blob, blob_bytes, read_footer, write_puffin
from catalog.iceberg.statistics import SKETCH_SUFFIX, THETA_BLOB
from catalog.service import Catalog
from catalog.settings import Settings
from tests.local import LOCAL
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("n", pa.int32()),
                    ("x", pa.float64()), ("d", pa.date32()), ("ok", pa.bool_())])


def _rows(keys, city: str, ts: int = 1) -> list[dict]:
    return [{"id": f"{city}-{k}", "ts": ts, "city": city, "n": k % 7, "x": k / 4, "d": 19000 + k % 300,
             "ok": k % 2 == 0} for k in keys]


@pytest.fixture
def table(tmp_path):
    table = TinyTable(tmp_path / "wh" / "t", SCHEMA)
    base = table.base(_rows(range(1000), "sf"), file_id="fg1-0")
    table.base(_rows(range(500), "ny"), file_id="fg2-0")
    updates = [row | {"n": 100 + i, "x": -1.0} for i, row in enumerate(_rows(range(0, 1000, 10), "sf", ts=2))]
    table.log(updates, file_id="fg1-0", base_instant=base)  # 100 rows, 100 new n
    return table


def _publish(tmp_path, view: str = "snapshot", **options) -> tuple[StaticTable, IcebergPublisher]:
    catalog = Catalog(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:"))
    publisher = IcebergPublisher(catalog, str(tmp_path / "ice"), **options)
    published = publisher.publish("t", view)
    return StaticTable.from_metadata(published.metadata_location), publisher


def _ndvs(table: StaticTable) -> dict[str, int]:
    [statistics] = table.metadata.statistics
    assert statistics.snapshot_id == table.metadata.current_snapshot_id
    schema = table.schema()
    return {schema.find_column_name(blob.fields[0]): int(blob.properties["ndv"]) for blob in statistics.blob_metadata
            if blob.type == THETA_BLOB}


@pytest.mark.parametrize("view", ["snapshot", "read_optimized"])
def test_ndv_of_every_column_is_that_of_the_rows_readers_see(table, tmp_path, view):
    loaded, _ = _publish(tmp_path, view)
    rows = loaded.scan().to_arrow()
    exact = {name: len(rows.column(name).drop_null().unique()) for name in rows.column_names}
    assert _ndvs(loaded) == exact  # under 4096 distinct values a theta sketch counts exactly
    assert exact["n"] == (7 + 100 if view == "snapshot" else 7)


def test_statistics_file_is_a_puffin_file_pyiceberg_reads_with_a_blob_per_column(table, tmp_path):
    loaded, _ = _publish(tmp_path)
    [statistics] = loaded.metadata.statistics
    data = Path(statistics.statistics_path.removeprefix("file://")).read_bytes()
    assert len(data) == statistics.file_size_in_bytes
    theirs = PuffinFile(data)  # PyIceberg's reader: zstd frames with their content size
    assert [(b.type, b.fields, b.snapshot_id, b.sequence_number, b.compression_codec) for b in theirs.footer.blobs] \
        == [(THETA_BLOB, [f.field_id], loaded.metadata.current_snapshot_id, 3, "zstd") for f in loaded.schema().fields]
    assert read_footer(data, "stats").footer_size == statistics.file_footer_size_in_bytes
    for blob in theirs.footer.blobs:
        sketch = datasketches.compact_theta_sketch.deserialize(theirs.get_blob_payload(blob))
        assert str(int(sketch.get_estimate())) == blob.properties["ndv"] and sketch.is_ordered()


def test_a_commit_sketches_only_the_slices_it_changed(table, tmp_path):
    _, publisher = _publish(tmp_path)
    sketches = sorted((tmp_path / "ice" / "t" / "data").glob("*" + SKETCH_SUFFIX))
    assert len(sketches) == 2  # one per slice
    before = {p.name: p.stat().st_mtime_ns for p in sketches}
    table.log([r | {"n": 500} for r in _rows(range(3), "ny", ts=3)], file_id="fg2-0", base_instant=None)
    loaded = StaticTable.from_metadata(publisher.publish("t", "snapshot").metadata_location)
    after = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "ice" / "t" / "data").glob("*" + SKETCH_SUFFIX)}
    assert len(set(after) - set(before)) == 1 and all(after[name] == before[name] for name in before)
    assert _ndvs(loaded)["n"] == 7 + 100 + 1


def test_statistics_are_left_out_for_tables_wider_than_the_switch_allows(table, tmp_path):
    loaded, _ = _publish(tmp_path, statistics_max_columns=6)  # 7 columns
    assert loaded.metadata.statistics == []
    assert not list((tmp_path / "ice" / "t" / "data").glob("*" + SKETCH_SUFFIX))
    assert _ndvs(_publish(tmp_path, statistics_max_columns=7)[0])["id"] == 1500


def test_puffin_blobs_round_trip_compressed_or_not():
    puffin = write_puffin([Blob("a", (1, 2), 7, 3, b"x" * 1000), Blob("b", (3,), 7, 3, b"raw", None, {"k": "v"})],
                          {"created-by": "test"})
    read = read_footer(puffin.data, "f")
    assert [blob_bytes(read, b, "f") for b in read.blobs] == [b"x" * 1000, b"raw"]
    assert read.properties == {"created-by": "test"} and read.footer_size == puffin.footer_size
    assert read.blobs[0]["length"] < 100 and "compression-codec" not in read.blobs[1]


def test_retention_keeps_the_statistics_and_sketches_kept_versions_name_and_removes_the_rest(table, tmp_path):
    from catalog.iceberg.retention import expire

    _, publisher = _publish(tmp_path)
    data = tmp_path / "ice" / "t" / "data"
    first = {p.name for p in data.glob("*" + SKETCH_SUFFIX)}
    table.log([r | {"n": 500} for r in _rows(range(3), "ny", ts=3)], file_id="fg2-0", base_instant=None)
    loaded = StaticTable.from_metadata(publisher.publish("t", "snapshot").metadata_location)
    [statistics] = loaded.metadata.statistics
    removed = {Path(p).name for p in expire(LOCAL, str(tmp_path / "ice" / "t"), keep_seconds=0, now=float("inf"))}
    kept = {p.name for p in data.glob("*" + SKETCH_SUFFIX)}
    assert len(kept) == 2 and len(first - kept) == 1 and first - kept <= removed  # ny's old sketch goes
    assert Path(statistics.statistics_path.removeprefix("file://")).exists()
    assert any(name.endswith(".stats.puffin") for name in removed)  # the first version's statistics
